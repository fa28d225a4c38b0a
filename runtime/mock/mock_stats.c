/* mock_stats.c: the mock's stats: the IO threads' counters summed, with the memory block,
 * as the JSON of the stats file and of STATS replies. */
#include "mock_server_int.h"

#include "clock.h"
#include "memacct.h"
#include "osfile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The bad frame kinds' names, in MOCK_BAD_KINDS order (mock_server_int.h). */
static const char *const mock_bad_kind_names[MOCK_BAD_KINDS] = {
	"bad_magic", "bad_version", "bad_type", "bad_flags", "too_long", "no_memory",
	"unexpected_type",
};

static uint64_t stat_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Sum the threads' counters into t. */
static void srv_stats_sum(struct mock_server *s, struct mock_stats *t)
{
	memset(t, 0, sizeof *t);
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		const struct mock_stats *st = &s->io[i].st;
#define X(f) t->f += stat_load(&st->f);
		MOCK_STATS(X)
#undef X
		for (unsigned m = 0; m < MOCK_METHOD_COUNT; m++)
			t->by_method[m] += stat_load(&st->by_method[m]);
		for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
			t->bad_frames[k] += stat_load(&st->bad_frames[k]);
	}
}

/* The memory block (memacct.h) as compact JSON; free() it. NULL when out of memory. */
static char *srv_memory_json(struct mock_server *s)
{
	uint64_t scratch = 0, pending = 0;

	for (unsigned i = 0; i < s->cfg.threads; i++) {
		scratch += __atomic_load_n(&s->io[i].scratch_bytes, __ATOMIC_RELAXED);
		pending += __atomic_load_n(&s->io[i].pending_bytes, __ATOMIC_RELAXED);
	}
	const struct fl_mem_owner own[] = {
		{ "corpus_bytes", s->corpus_bytes ? (int64_t)s->corpus_bytes : -1 },
		{ "io_scratch_bytes", (int64_t)scratch },
		{ "delayed_replies_bytes", (int64_t)pending },
		{ "tls_heap_bytes", fl_tls_heap_bytes() },
	};
	json_t *o = fl_mem_json(own, sizeof(own) / sizeof(own[0]));
	char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return txt;
}

void mock_stats_json(struct mock_server *s, FILE *f)
{
	struct mock_stats t;
	srv_stats_sum(s, &t);
	char tls[sizeof s->tls_last];
	pthread_mutex_lock(&s->tls_lock);
	memcpy(tls, s->tls_last, sizeof tls);
	pthread_mutex_unlock(&s->tls_lock);

	fprintf(f, "{\n  \"uptime_s\": %.3f,\n  \"snapshot_wall_ns\": %" PRIu64 ",\n"
		"  \"port\": %u,\n  \"threads\": %u,\n", (double)(fl_mono_ns() - s->start_ns) / 1e9,
		fl_wall_ns(), (unsigned)s->port, s->cfg.threads);
	fprintf(f, "  \"tls_last\": \"");
	for (const char *p = tls; *p; p++)  /* OpenSSL names are plain, but stay valid JSON */
		fputc(*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? '?' : *p, f);
	fprintf(f, "\",\n  \"connections_open\": %" PRIu64 ",\n",
		t.connections - t.connections_closed);
#define X(field) fprintf(f, "  \"" #field "\": %" PRIu64 ",\n", t.field);
	MOCK_STATS(X)
#undef X
	uint64_t bad = 0;
	for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
		bad += t.bad_frames[k];
	fprintf(f, "  \"bad_frames\": %" PRIu64 ",\n  \"bad_frames_by_kind\": {", bad);
	for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", mock_bad_kind_names[k],
			t.bad_frames[k]);
	fprintf(f, "},\n  \"requests_by_method\": {");
	for (unsigned m = 0; m < MOCK_METHOD_COUNT; m++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, m ? "," : "", mock_method_name(m),
			t.by_method[m]);
	char *mem = srv_memory_json(s);
	fprintf(f, "\n  },\n  \"memory\": %s\n}\n", mem ? mem : "null");
	free(mem);
}

int mock_server_write_stats(struct mock_server *s, const char *path)
{
	if (!path)
		return 0;
	struct fl_atomic_file a;
	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0)
		return -1;
	mock_stats_json(s, a.f);
	return fl_atomic_commit(&a, 1, NULL, 0);
}
