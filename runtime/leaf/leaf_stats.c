/* leaf_stats.c: the leaf's stats JSON and its atomic file write. */
#include "leaf_stats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "fanout.h"
#include "leaf_io.h"
#include "overheads.h"
#include "ranker.h"
#include "sampler.h"
#include "session.h"
#include "stages.h"

/* InboundMethod order (frontload.proto), named as in rpc_dist.json. */
static const char *const inbound_names[5] = {
	"createAndPrimeSession", "getStoriesUncompressed", "streamData",
	"streamIfrPriorityRanking", "getAllStories",
};

static json_t *ju(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *stats_fanout(const struct fl_leaf_stats_src *src)
{
	struct fl_fanout_stats fs;
	int enabled = src->fanout != NULL || src->fanout_final != NULL;

	memset(&fs, 0, sizeof(fs));
	if (src->fanout)
		fl_fanout_stats(src->fanout, &fs);
	else if (src->fanout_final)
		fs = *src->fanout_final;
	json_t *o = json_object();
	json_object_set_new(o, "enabled", json_boolean(enabled));
#define FANOUT_U(f) json_object_set_new(o, #f, ju(fs.f))
	FANOUT_U(calls); FANOUT_U(ok); FANOUT_U(errors); FANOUT_U(timeouts);
	FANOUT_U(req_bytes); FANOUT_U(resp_bytes);
	FANOUT_U(wire_bytes_out); FANOUT_U(wire_bytes_in);
	FANOUT_U(connects); FANOUT_U(reconnects); FANOUT_U(pings); FANOUT_U(pongs);
	FANOUT_U(channels); FANOUT_U(channels_up); FANOUT_U(channels_zstd);
#undef FANOUT_U
	fs.cipher[sizeof(fs.cipher) - 1] = '\0';
	json_object_set_new(o, "cipher", json_string(fs.cipher));

	json_t *per = json_object();
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		char idx[16];
		const char *name = src->dist ? src->dist->out[i].name : NULL;
		if (!name || !name[0]) {
			snprintf(idx, sizeof(idx), "method_%zu", i);
			name = idx;
		}
		json_object_set_new(per, name, ju(fs.calls_per_method[i]));
	}
	json_object_set_new(o, "calls_per_method", per);

	json_t *exp = json_object();
	struct fl_fanout_expect e;
	memset(&e, 0, sizeof(e));
	if (src->dist)
		fl_rpc_expect(src->dist, src->fanout_scale, &e);
	json_object_set_new(exp, "calls", ju(enabled ? e.calls : 0));
	json_object_set_new(exp, "req_bytes", json_real(enabled ? e.req_bytes : 0));
	json_object_set_new(exp, "resp_bytes", json_real(enabled ? e.resp_bytes : 0));
	json_object_set_new(o, "expected_per_request", exp);
	return o;
}

static json_t *stats_sessions(struct fl_session_store *ss)
{
	json_t *o = json_object();
	json_object_set_new(o, "enabled", json_boolean(ss != NULL));
	if (!ss)
		return o;
	struct fl_session_stats st;
	fl_session_stats(ss, &st);
	json_object_set_new(o, "hits", ju(st.hits));
	json_object_set_new(o, "misses", ju(st.misses));
	json_object_set_new(o, "created", ju(st.created));
	json_object_set_new(o, "evicted_lru", ju(st.evicted_lru));
	json_object_set_new(o, "expired_ttl", ju(st.expired_ttl));
	json_object_set_new(o, "live", ju(st.live));
	json_object_set_new(o, "capacity", ju(st.capacity));
	return o;
}

static json_t *stats_overheads(struct fl_overheads *ovh)
{
	json_t *o = json_object();
	if (!ovh)
		return o;
	struct fl_overheads_stats st;
	fl_overheads_stats(ovh, &st);
	json_object_set_new(o, "admitted", ju(st.admitted));
	json_object_set_new(o, "overloaded", ju(st.overloaded));
	json_object_set_new(o, "denied", ju(st.denied));
	json_object_set_new(o, "stale", ju(st.stale));
	json_t *per = json_object();
	for (size_t i = 0; i < 5; i++)
		json_object_set_new(per, inbound_names[i], ju(st.per_method[i]));
	json_object_set_new(o, "per_method", per);
	json_object_set_new(o, "inflight", ju(st.inflight));
	json_object_set_new(o, "inflight_peak", ju(st.inflight_peak));
	return o;
}

static json_t *pool(unsigned threads, uint64_t cpu_ns)
{
	json_t *o = json_object();
	json_object_set_new(o, "threads", ju(threads));
	json_object_set_new(o, "cpu_ns", ju(cpu_ns));
	return o;
}

json_t *fl_leaf_stats_json(const struct fl_leaf_stats_src *src)
{
	struct fl_io_stats io;
	struct fl_ranker_stats rk;

	memset(&io, 0, sizeof(io));
	memset(&rk, 0, sizeof(rk));
	if (src->io)
		fl_io_stats(src->io, &io);
	if (src->ranker)
		fl_ranker_stats(src->ranker, &rk);

	json_t *root = json_object();
	if (!root)
		return NULL;
	json_object_set_new(root, "uptime_s",
		json_real((double)(fl_mono_ns() - src->start_ns) / 1e9));
	json_object_set_new(root, "config",
		src->config ? json_deep_copy(src->config) : json_object());

	/* The IO counters, placed by the group their X-macro names. */
	json_t *g_requests = json_object(), *g_frames = json_object();
	json_t *g_connections = json_object(), *g_top = root;
	json_object_set_new(root, "requests", g_requests);
	json_object_set_new(root, "frames", g_frames);
	json_object_set_new(root, "connections", g_connections);
#define IO_JSON(group, name) json_object_set_new(g_##group, #name, ju(io.name));
	FL_IO_STATS(IO_JSON)
#undef IO_JSON
	json_object_set_new(g_connections, "listener_cipher", json_string(io.listener_cipher));
	json_object_set_new(root, "extract_calls", ju(rk.extract_calls));

	/* Stage 6 CPU happens on the FANOUT threads. */
	struct fl_stage_ns t = rk.t;
	t.cpu_ns[FL_STAGE_FANOUT] += rk.fanout_cpu_ns;
	uint64_t cpu_sum = 0;
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		cpu_sum += t.cpu_ns[s];
	json_t *stages = json_object(), *share = json_object();
	for (int s = 0; s < FL_STAGE_COUNT; s++) {
		json_t *st = json_object();
		json_object_set_new(st, "cpu_ns", ju(t.cpu_ns[s]));
		json_object_set_new(st, "wall_ns", ju(t.wall_ns[s]));
		json_object_set_new(stages, fl_stage_name((enum fl_stage)s), st);
		json_object_set_new(share, fl_stage_name((enum fl_stage)s),
			json_real(cpu_sum ? (double)t.cpu_ns[s] / (double)cpu_sum : 0.0));
	}
	json_object_set_new(root, "stages", stages);
	json_object_set_new(root, "cpu_share", share);

	json_t *pools = json_object();
	json_object_set_new(pools, "io", pool(io.threads, io.cpu_ns));
	json_object_set_new(pools, "ranker", pool(rk.threads, rk.cpu_ns));
	json_t *fp = pool(src->fanout_threads, rk.fanout_cpu_ns);
	json_object_set_new(fp, "threads_measured", ju(rk.fanout_threads_seen));
	json_object_set_new(pools, "fanout", fp);
	json_object_set_new(root, "pools", pools);

	json_object_set_new(root, "fanout", stats_fanout(src));
	json_object_set_new(root, "sessions", stats_sessions(src->sessions));
	json_object_set_new(root, "overheads", stats_overheads(src->ovh));
	return root;
}

int fl_leaf_stats_write(const struct fl_leaf_stats_src *src, const char *path, char *err,
	size_t errlen)
{
	char tmp[4096];
	json_t *root = fl_leaf_stats_json(src);
	if (!root) {
		snprintf(err, errlen, "stats: out of memory");
		return -1;
	}
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		json_decref(root);
		snprintf(err, errlen, "stats: path too long: %s", path);
		return -1;
	}
	int rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc != 0) {
		snprintf(err, errlen, "stats: cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "stats: cannot rename %s to %s: %s", tmp, path,
			strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
