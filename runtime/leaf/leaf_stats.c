/* leaf_stats.c: the leaf's stats JSON and the JSON's atomic write. */
#include "leaf_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "corpus.h"
#include "fanout.h"
#include "leaf_io.h"
#include "memacct.h"
#include "meter.h"
#include "osfile.h"
#include "overheads.h"
#include "ranker.h"
#include "sampler.h"
#include "session.h"
#include "stages.h"
#include "tls.h"

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
	json_object_set_new(o, "bytes", ju(st.bytes));
	json_object_set_new(o, "bytes_per_session", ju(st.bytes_per_session));
	json_object_set_new(o, "max_bytes", ju(st.max_bytes));
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

/* The stage clock the RANKER threads use (the only threads that time stages). */
static json_t *stats_cpu_clock(const struct fl_meter_config *cfg, const struct fl_meter_sum *rk)
{
	json_t *o = json_object();
	unsigned n = rk->clock_perf_mmap + rk->clock_gettime;
	const char *method = n == 0 ? "none" : rk->clock_perf_mmap == n ? "perf-mmap" :
		rk->clock_gettime == n ? "clock_gettime" : "mixed";

	json_object_set_new(o, "requested", json_string(cfg ?
		fl_cputime_method_name(cfg->clock) : "none"));
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "fast_path_unavailable", rk->clock_perf_mmap == n && n > 0 ?
		json_null() : json_string(rk->clock_why[0] ? rk->clock_why : "no timed threads"));
	json_t *th = json_object();
	json_object_set_new(th, "perf-mmap", ju(rk->clock_perf_mmap));
	json_object_set_new(th, "clock_gettime", ju(rk->clock_gettime));
	json_object_set_new(o, "threads", th);
	return o;
}

/* JSON keys of the PMU events, in enum fl_pmu_event order. */
static const char *const pmu_keys[FL_PMU_NEVENTS] = {
	"instructions", "cycles", "l1i_misses", "itlb_misses", "branches", "branch_misses",
	"stalled_cycles_frontend", "topdown_slots", "topdown_fe",
};

/* "unsupported: why" as a JSON string. */
static json_t *unsupported(const char *why)
{
	char buf[FL_PMU_WHY_LEN + 32];

	snprintf(buf, sizeof(buf), "unsupported: %s", why[0] ? why : "no reason given");
	return json_string(buf);
}

/* A derived metric: its value, or why not. An unsupported input is named by its JSON key
 * with its own reason (pmu.c's text for it may be cut short). */
static json_t *metric(const struct fl_pmu_counts *c, const struct fl_pmu_metric *m,
	enum fl_pmu_event num, enum fl_pmu_event den)
{
	char buf[2 * FL_PMU_WHY_LEN];

	if (m->supported)
		return json_real(m->value);
	if (c->ev[num].supported && c->ev[den].supported)
		return unsupported(m->why);
	enum fl_pmu_event miss = c->ev[num].supported ? den : num;
	snprintf(buf, sizeof(buf), "unsupported: %s unsupported: %s", pmu_keys[miss],
		c->ev[miss].why);
	return json_string(buf);
}

/* One pool's (or the total's) counts and metrics: numbers only where counted. */
static json_t *stats_pmu_pool(const struct fl_meter_sum *ms)
{
	const struct fl_pmu_counts *c = &ms->counts;
	struct fl_pmu_metrics m;
	json_t *o = json_object(), *en = json_object(), *run = json_object();
	int any = 0;

	json_object_set_new(o, "threads", ju(ms->threads));
	json_object_set_new(o, "threads_counted", ju(ms->pmu_threads));
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		const struct fl_pmu_count *ev = &c->ev[e];
		json_object_set_new(o, pmu_keys[e], ev->supported ? ju(ev->value) :
			unsupported(ev->why));
		if (!ev->supported)
			continue;
		any = 1;
		json_object_set_new(en, pmu_keys[e], ju(ev->enabled_ns));
		json_object_set_new(run, pmu_keys[e], ju(ev->running_ns));
	}
	fl_pmu_derive(c, &m);
	json_object_set_new(o, "ipc", metric(c, &m.ipc, FL_PMU_INSTRUCTIONS, FL_PMU_CYCLES));
	json_object_set_new(o, "l1i_mpki", metric(c, &m.l1i_mpki, FL_PMU_L1I_MISSES,
		FL_PMU_INSTRUCTIONS));
	json_object_set_new(o, "itlb_mpki", metric(c, &m.itlb_mpki, FL_PMU_ITLB_MISSES,
		FL_PMU_INSTRUCTIONS));
	json_object_set_new(o, "branch_mpki", metric(c, &m.branch_mpki, FL_PMU_BRANCH_MISSES,
		FL_PMU_INSTRUCTIONS));
	json_object_set_new(o, "branch_miss_pct", metric(c, &m.branch_miss_pct,
		FL_PMU_BRANCH_MISSES, FL_PMU_BRANCHES));
	json_object_set_new(o, "frontend_stall_cycle_ratio", metric(c, &m.fe_stall_share,
		FL_PMU_STALLED_FRONTEND, FL_PMU_CYCLES));
	json_object_set_new(o, "mux_scale", any ? json_real(m.max_scale) :
		unsupported(c->ev[FL_PMU_INSTRUCTIONS].why));
	json_object_set_new(o, "enabled_ns", en);
	json_object_set_new(o, "running_ns", run);
	return o;
}

/* Counter groups by pool and in total. supported: every thread counts instructions. */
static json_t *stats_pmu(const struct fl_meter_config *cfg, const struct fl_meter_sum *rk,
	const struct fl_meter_sum *io, const struct fl_meter_sum *fo)
{
	struct fl_meter_sum total;
	json_t *o = json_object();

	fl_meter_sum_init(&total);
	fl_meter_sum_merge(&total, rk);
	fl_meter_sum_merge(&total, io);
	fl_meter_sum_merge(&total, fo);
	const struct fl_pmu_count *ins = &total.counts.ev[FL_PMU_INSTRUCTIONS];
	bool supported = ins->supported && total.threads > 0;
	json_object_set_new(o, "enabled", json_boolean(cfg && cfg->pmu));
	json_object_set_new(o, "supported", json_boolean(supported));
	json_object_set_new(o, "why", json_string(supported ? "" :
		total.pmu_why[0] ? total.pmu_why : ins->why));
	json_object_set_new(o, "user_only", json_boolean(total.user_only));
	json_object_set_new(o, "ranker", stats_pmu_pool(rk));
	json_object_set_new(o, "io", stats_pmu_pool(io));
	json_object_set_new(o, "fanout", stats_pmu_pool(fo));
	json_object_set_new(o, "total", stats_pmu_pool(&total));
	return o;
}

/* What the deadline checks skipped, by where (the admit check is the IO threads'). */
static json_t *stats_deadline(const struct fl_io_stats *io, const struct fl_ranker_stats *rk,
	const json_t *config)
{
	json_t *o = json_object(), *sk = json_object(), *est = json_object();
	uint64_t total = io->expired_at_admit;

	for (int w = 0; w < FL_DL_NSTAGES; w++) {
		uint64_t exp = w == FL_DL_ADMIT ? io->expired_at_admit : rk->expired[w];
		json_t *e = json_object();
		json_object_set_new(e, "expired", ju(exp));
		json_object_set_new(e, "would_miss", ju(rk->would_miss[w]));
		json_object_set_new(sk, fl_dl_stage_name((enum fl_dl_stage)w), e);
		if (w != FL_DL_ADMIT)
			total += rk->expired[w];
		total += rk->would_miss[w];
	}
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		json_object_set_new(est, fl_stage_name((enum fl_stage)s), rk->est_valid ?
			json_real((double)rk->est.wall_ns[s] / 1e6) : json_null());
	json_object_set_new(o, "with_deadline", ju(rk->with_deadline));
	json_object_set_new(o, "skipped", sk);
	json_object_set_new(o, "skipped_total", ju(total));
	json_object_set_new(o, "queue_wait_shed", ju(rk->queue_wait_shed));
	json_object_set_new(o, "probes", ju(rk->probes));
	const json_t *mq = config ? json_object_get(config, "max_queue_ms") : NULL;
	json_object_set_new(o, "max_queue_ms", mq ? json_deep_copy(mq) : json_null());
	json_object_set_new(o, "estimate_ms", est);
	return o;
}

/* A pool's threads and CPU: cpu_ns is null when a thread's clock could not be read (a
 * partial sum is not the pool's CPU), cpu_unread says how many. */
static json_t *pool(unsigned threads, uint64_t cpu_ns, unsigned unread)
{
	json_t *o = json_object();
	json_object_set_new(o, "threads", ju(threads));
	json_object_set_new(o, "cpu_ns", unread ? json_null() : ju(cpu_ns));
	json_object_set_new(o, "cpu_unread", ju(unread));
	return o;
}

/* The memory block: RSS, the owners' bytes and the allocator (memacct.h). */
static json_t *stats_memory(const struct fl_leaf_stats_src *src, const struct fl_io_stats *io)
{
	struct fl_session_stats ss;
	int64_t sess = -1;

	if (src->sessions) {
		fl_session_stats(src->sessions, &ss);
		sess = (int64_t)ss.bytes;
	}
	const struct fl_mem_owner own[] = {
		{ "corpus_bytes", src->corpus ? (int64_t)src->corpus->map_len : -1 },
		{ "dlrm_bytes", src->model_bytes ? (int64_t)src->model_bytes : -1 },
		{ "sessions_bytes", sess },
		{ "ranker_scratch_bytes", src->ranker ?
			(int64_t)fl_ranker_scratch_bytes(src->ranker) : -1 },
		{ "fanout_scratch_bytes", src->fanout ?
			(int64_t)fl_fanout_scratch_bytes(src->fanout) : -1 },
		{ "conn_buffers_bytes", src->io ? (int64_t)io->buffered_bytes : -1 },
		{ "tls_heap_bytes", fl_tls_heap_bytes() },
	};
	return fl_mem_json(own, sizeof(own) / sizeof(own[0]));
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
	/* For a remote reader's clock check (wire.h, FL_MSG_STATS). */
	json_object_set_new(root, "snapshot_wall_ns", ju(fl_wall_ns()));
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
		/* No CPU measured yet: no share to give (null, not 0). */
		json_object_set_new(share, fl_stage_name((enum fl_stage)s),
			cpu_sum ? json_real((double)t.cpu_ns[s] / (double)cpu_sum) : json_null());
	}
	json_object_set_new(root, "stages", stages);
	json_object_set_new(root, "cpu_share", share);

	struct fl_meter_sum m_rk, m_io, m_fo;
	fl_meter_sum_init(&m_rk);
	fl_meter_sum_init(&m_io);
	fl_meter_sum_init(&m_fo);
	if (src->ranker)
		fl_ranker_meters(src->ranker, &m_rk);
	if (src->io)
		fl_io_meters(src->io, &m_io);
	if (src->fanout)
		fl_fanout_meters(src->fanout, &m_fo);
	else if (src->fanout_meter_final)
		m_fo = *src->fanout_meter_final;
	json_object_set_new(root, "ready_ms", src->ready_ms >= 0 ? json_real(src->ready_ms) :
		json_null());
	json_object_set_new(root, "cpu_clock", stats_cpu_clock(src->meter, &m_rk));
	json_object_set_new(root, "pmu", stats_pmu(src->meter, &m_rk, &m_io, &m_fo));

	json_t *pools = json_object();
	json_object_set_new(pools, "io", pool(io.threads, io.cpu_ns, io.cpu_unread));
	json_object_set_new(pools, "ranker", pool(rk.threads, rk.cpu_ns, rk.cpu_unread));
	json_t *fp = pool(src->fanout_threads, rk.fanout_cpu_ns, rk.fanout_cpu_unread);
	json_object_set_new(fp, "threads_measured", ju(rk.fanout_threads_seen));
	json_object_set_new(pools, "fanout", fp);
	json_object_set_new(root, "pools", pools);

	json_object_set_new(root, "fanout", stats_fanout(src));
	json_object_set_new(root, "sessions", stats_sessions(src->sessions));
	json_object_set_new(root, "overheads", stats_overheads(src->ovh));
	json_object_set_new(root, "deadline", stats_deadline(&io, &rk, src->config));
	json_object_set_new(root, "memory", stats_memory(src, &io));
	return root;
}

int fl_leaf_stats_write(const struct fl_leaf_stats_src *src, const char *path, char *err,
	size_t errlen)
{
	json_t *root = fl_leaf_stats_json(src);
	if (!root) {
		snprintf(err, errlen, "stats: out of memory");
		return -1;
	}
	int rc = fl_leaf_stats_write_json(root, path, err, errlen);
	json_decref(root);
	return rc;
}

int fl_leaf_stats_write_json(const struct json_t *root, const char *path, char *err,
	size_t errlen)
{
	struct fl_atomic_file a;
	char why[2 * FL_OSFILE_PATH_MAX + 64] = "";
	int rc = fl_atomic_open(&a, path, 0644, 0, why, sizeof(why));
	if (rc == 0) {
		int ok = json_dumpf(root, a.f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0;
		if (!ok)
			snprintf(why, sizeof(why), "cannot write %s: %s", a.tmp, strerror(errno));
		rc = fl_atomic_commit(&a, ok, why, sizeof(why));
	}
	if (rc != 0)
		snprintf(err, errlen, "stats: %s", why);
	return rc;
}
