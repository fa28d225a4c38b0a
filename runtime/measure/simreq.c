/* simreq.c: frontload-simreq: the leaf's request path in one process, for front-end measurement. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <valgrind/callgrind.h>

#include "cli.h"
#include "clock.h"
#include "codesize.h"
#include "corpus.h"
#include "dispatch.h"
#include "frontload.pb-c.h"
#include "libload.h"
#include "osfile.h"
#include "overheads.h"
#include "paths.h"
#include "pipeline.h"
#include "pmu.h"
#include "reqgen.h"
#include "request_setup.h"
#include "sampler.h"
#include "session.h"
#include "simreq_knobs.h"
#include "wire.h"
#include "zcodec.h"

#define PROG "frontload-simreq"
#define ACL_ENTRIES 4096u  /* as frontload-leaf's stage 2 */

/* Every knob, as parsed; names follow the flags (the leaf's where they are the leaf's). */
struct simreq_config {
	FL_SIMREQ_KNOB_FIELDS
	int plan_only;
	uint64_t warmup, requests;
	const char *stage;
	int pmu, progress, quiet;
	const char *json;
};

/* Every flag: parsing, --help and the JSON "config" echo (keys: name with - as _) all
 * walk this table. The knobs are simreq_knobs.h's, which frontload-measure forwards. */
#define FL_CLI_OBJ struct simreq_config
static const struct fl_cli_opt simreq_opts[] = {
	FL_SIMREQ_KNOB_OPTS,
	FL_OPT_FLAG("plan-only", plan_only, "build the plan, write the plan part of the JSON "
		"(library_functions, plan_functions, copies, active_copies, plan) and exit: no "
		"corpus, no requests"),
	FL_OPT_UINT("warmup", warmup, 0, 1000000, "N", "2", "requests run before the measured "
		"window"),
	FL_OPT_UINT("requests", requests, 1, 1000000, "N", "10", "measured requests"),
	FL_OPT_STR("stage", stage, "all|extract", "all", "what the window covers: all = every "
		"request's decode, overheads, compute and reply; extract = the extractor calls "
		"only (fl_plan_run; see below)"),
	FL_OPT_FLAG("pmu", pmu, "count hardware events (perf_event_open) over the window; "
		"prints \"unsupported: reason\" when the host has none"),
	FL_OPT_STR("json", json, "PATH", NULL, "write the JSON summary here instead of "
		"stdout"),
	FL_OPT_FLAG("progress", progress, "print a line per request on stderr"),
	FL_OPT_FLAG("quiet", quiet, "print nothing but the JSON and errors"),
};
#undef FL_CLI_OBJ
#define NOPTS (sizeof(simreq_opts) / sizeof(simreq_opts[0]))
static const struct fl_cli simreq_cli = { .opts = simreq_opts, .nopts = NOPTS };

static const char usage_head[] =
"usage: " PROG " [options]\n"
"\n"
"Runs frontload-leaf's request path in this process, without network or fanout: load the\n"
"extractor library, build the plan (--active-copies, --seed) and the pipeline with the\n"
"leaf's knobs, then for each request from the request builder (runtime/common/reqgen.h,\n"
"as frontload-driver sends): 1 decode, 2 overheads, 3 extract, 4 stories, 5 rank,\n"
"7 compress and reply. --warmup requests run first, then --requests measured ones.\n"
"\n"
"Measurement window: the measured requests are built first (building is the driver's\n"
"work, never measured), then processed back to back inside one window delimited by two\n"
"callgrind dumps (CALLGRIND_DUMP_STATS_AT; client requests are no-ops when not under\n"
"valgrind). Run it under\n"
"  valgrind --tool=callgrind --collect-atstart=yes --callgrind-out-file=F ...\n"
"and F.2 holds exactly the window (F.1: startup and warmup; F: what follows). A dump,\n"
"not CALLGRIND_ZERO_STATS or collection toggles, is needed because callgrind's jump\n"
"counters keep counting while collection is off and are reset only by a dump of code\n"
"that was collected. With --stage extract use --collect-atstart=no\n"
"--toggle-collect=fl_plan_run instead: F.2 then holds only the extractor calls of the\n"
"window. With --pmu a perf counter group counts the same window (hardware path); with\n"
"--stage extract it is enabled only over each measured request's stage 3 (the time the\n"
"pipeline charges to extract: fl_plan_run plus per-story context setup; each story's\n"
"feature derivation is charged to rank), which counted_window_cpu_ns reports (equal to\n"
"stages.extract.cpu_ns).\n"
"\n"
"options (defaults in brackets; the leaf's defaults where the knob is the leaf's):\n";

static const char usage_tail[] =
"\n"
"output: a JSON object on stdout (or --json PATH): the configuration, plan footprint and\n"
"plan (dispatch, zipf_alpha, active_functions, lap_calls: calls of one lap of the plan,\n"
"code_bytes = code_bytes_hot + code_bytes_cold: the active functions' bytes from the\n"
"library's symbols, cold = their .cold fragments; reuse: per call of a lap, distinct\n"
"functions and hot bytes called since the last call of the same function, at percentiles\n"
"50, 90, 99; null under valgrind, where it would be slow: --plan-only natively has it),\n"
"requests, extractor calls, CPU and wall ns of the window and per stage (thread CPU\n"
"clock; under valgrind these are inflated by instrumentation; a share is null when no\n"
"CPU time was measured), counted_window (what --pmu counts) and its CPU time, and with\n"
"--pmu the counters or {\"supported\": false, \"why\": ...}. Metrics:\n"
"frontend_stall_cycle_ratio = stalled-cycles-frontend / cycles (a cycle ratio),\n"
"frontend_bound_slots = top-down front-end bound, a share of pipeline slots, with its\n"
"formula (Intel perf-metrics or TMA level 1, AMD Zen 4+), unsupported elsewhere.\n"
"instructions is null unless counted.\n"
"exit status: 0 done, 2 bad flag, 1 startup or request failure.\n";

#define die(code, ...) fl_die(PROG, FL_DIE_EXIT, code, __VA_ARGS__)

static void usage(FILE *fp)
{
	fputs(usage_head, fp);
	fl_cli_help(fp, &simreq_cli);
	fputs(usage_tail, fp);
}

/* Defaults, then argv into c. --help prints the usage and exits 0, a bad flag exits 2. */
static void config_parse(struct simreq_config *c, int argc, char **argv)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	int rc = fl_cli_parse(&simreq_cli, argc, argv, c, err, sizeof(err));
	if (rc == FL_CLI_HELP) {
		usage(stdout);
		exit(0);
	}
	if (rc != 0)
		die(2, "%s (see --help)", err);
	if (strcmp(c->stage, "all") != 0 && strcmp(c->stage, "extract") != 0)
		die(2, "--stage: expected all or extract, got \"%s\"", c->stage);
	if (c->calls_per_request) {
		uint64_t used = c->stories < c->pk.max_stories ? c->stories : c->pk.max_stories;

		c->pk.extractors_per_story = (c->calls_per_request + used / 2) / used;
		if (c->pk.extractors_per_story == 0)
			c->pk.extractors_per_story = 1;
	}
}

/* Everything main builds. */
struct simreq {
	struct simreq_config cfg;
	struct fl_request_base base;     /* reply sizes, library, plan (request_setup.h) */
	struct fl_corpus corpus;
	struct fl_reqgen gen;
	struct fl_session_store *sessions;
	struct fl_overheads *ovh;
	struct fl_pipeline *pipeline;
	struct fl_worker *wk;
	struct fl_zcodec *z;
	int stage_extract;
	/* results */
	struct fl_stage_ns t;          /* summed over measured requests */
	uint64_t extract_calls;        /* measured requests */
	uint64_t window_cpu_ns, window_wall_ns;
	uint64_t request_bytes;        /* packed payload bytes of measured requests */
	int pmu_open;
	struct fl_pmu pmu;
	char pmu_why[FL_PMU_WHY_LEN];
	struct fl_pmu_counts counts;
	/* --stage extract --pmu: the stage clock hook's state (simreq_extract_clock) */
	int in_compute;                /* 1 while fl_pipeline_compute runs */
	unsigned clock_reads;          /* stage clock reads since compute began */
	unsigned extract_reads;        /* the first reads that open and close stage 3's pieces */
	uint64_t piece_t0;             /* the read that opened the current piece */
	uint64_t extract_span;         /* this request's CPU time inside stage 3's pieces */
	uint64_t counted_cpu_ns;       /* --stage extract: CPU time between those reads */
};

/* --stage extract: the counters (--pmu) run only over stage 3. fl_pipeline_compute reads the
 * stage clock when stage 3 opens, then twice per story (pipeline.c): once as the story's
 * extractors end (charged to stage 3) and once as its features end (charged to the rank
 * stage, and opening the next story's piece). So of a request's first 2n reads (n stories)
 * the odd ones open a piece of stage 3 and the even ones close it: the hook enables the
 * group after an opening read and disables it before a closing one. The order is checked
 * after every request: the pieces must add up to exactly the time the pipeline charged to
 * stage 3, else the run stops instead of mislabelling what was counted. */
static uint64_t simreq_extract_clock(void *arg)
{
	struct simreq *s = arg;
	char why[FL_PMU_WHY_LEN];
	uint64_t t;

	if (!s->in_compute)
		return fl_thread_cpu_ns();
	unsigned k = ++s->clock_reads;
	int piece = k <= s->extract_reads;
	if (piece && k % 2 == 0 && s->pmu_open && fl_pmu_disable(&s->pmu, why, sizeof(why)) != 0)
		die(1, "--pmu: %s", why);
	t = fl_thread_cpu_ns();
	if (piece && k % 2 == 1) {
		s->piece_t0 = t;
		if (s->pmu_open && fl_pmu_enable(&s->pmu, why, sizeof(why)) != 0)
			die(1, "--pmu: %s", why);
	} else if (piece) {
		s->extract_span += t - s->piece_t0;
	}
	return t;
}

/* After a request's compute: stage 3's charge must be the hooked reads' span. */
static void simreq_extract_check(struct simreq *s, const struct fl_work *w, uint64_t i)
{
	if (s->clock_reads < s->extract_reads ||
	    w->t.cpu_ns[FL_STAGE_EXTRACT] != s->extract_span)
		die(1, "request %llu: --stage extract: the pipeline's stage clock reads no "
			"longer open and close stage 3's %u pieces first (%u reads); cannot count "
			"extraction alone", (unsigned long long)i, s->extract_reads / 2,
			s->clock_reads);
	s->counted_cpu_ns += s->extract_span;
}

static void simreq_start(struct simreq *s)
{
	struct simreq_config *c = &s->cfg;
	struct fl_reqgen_config rc;
	char err[1024];

	/* The reuse profile is a pure function of the plan: not worth a slow pass under
	 * valgrind (--plan-only natively gives it). */
	if (fl_request_base_open(&s->base, c->lib, &(struct fl_plan_knobs){ c->seed,
	    c->active_copies, c->active_functions, c->footprint_bytes, c->dispatch,
	    c->zipf_alpha }, !RUNNING_ON_VALGRIND, err, sizeof(err)) != 0)
		die(1, "%s", err);
	if (c->plan_only)
		return;
	if (fl_corpus_generate(&s->corpus, c->corpus_seed, (size_t)c->corpus_mb << 20, err,
	    sizeof(err)) != 0)
		die(1, "corpus: %s", err);

	fl_reqgen_config_default(&rc);
	rc.seed = c->seed;
	rc.stories = (unsigned)c->stories;
	rc.story_bytes = (size_t)c->story_bytes;
	rc.fixed_bytes = (size_t)c->request_bytes;
	rc.max_request_bytes = (size_t)c->max_request_bytes;
	rc.sessions = c->sessions;
	rc.want_zstd = c->zstd;
	if (fl_reqgen_method_parse(c->method, &rc.method) != 0)
		die(2, "--method: unknown method \"%s\"", c->method);
	if (fl_reqgen_init(&s->gen, &rc, &s->corpus, err, sizeof(err)) != 0)
		die(1, "requests: %s", err);

	if (c->sessions_max && !(s->sessions = fl_session_store_new(c->sessions_max, 600000)))
		die(1, "sessions: cannot make a store of %llu",
			(unsigned long long)c->sessions_max);
	struct fl_overheads_config oc = {
		.inflight_limit = 256,
		.stale_ns = 10000000000ull,
		.acl_entries = ACL_ENTRIES,
		.seed = c->seed,
	};
	if (!(s->ovh = fl_overheads_new(&oc, err, sizeof(err))))
		die(1, "overheads: %s", err);
	struct fl_pipeline_config pc;
	fl_pipeline_config_init(&pc, &s->base, &c->pk, c->seed);
	pc.corpus = &s->corpus;
	pc.sessions = s->sessions;
	pc.max_request_bytes = (uint32_t)c->max_request_bytes;
	if (!(s->pipeline = fl_pipeline_new(&pc, err, sizeof(err))))
		die(1, "pipeline: %s", err);
	if (!(s->wk = fl_worker_new(s->pipeline, 0, err, sizeof(err))))
		die(1, "worker: %s", err);
	if (c->zstd_frames && !(s->z = fl_zcodec_new(3)))
		die(1, "zstd: cannot make a codec");
	s->stage_extract = strcmp(c->stage, "extract") == 0;
	if (c->pmu) {
		if (fl_pmu_open(&s->pmu, 0, s->pmu_why, sizeof(s->pmu_why)) == 0)
			s->pmu_open = 1;
		else if (!c->quiet)
			fprintf(stderr, PROG ": --pmu: unsupported: %s\n", s->pmu_why);
	}
	if (s->stage_extract)
		fl_worker_set_cpu_clock(s->wk, simreq_extract_clock, s);
}

/* Open (on = 1) or close the measured window. Callgrind's jump counters run even while
 * collection is off and survive CALLGRIND_ZERO_STATS (valgrind 3.19 bbcc.c, dump.c); only
 * a dump resets them, and only for code whose costs it writes. So the window is delimited
 * by two dumps: under --collect-atstart=yes the second one holds exactly the window. */
static void simreq_window(struct simreq *s, int on)
{
	char why[FL_PMU_WHY_LEN];

	if (on) {
		CALLGRIND_DUMP_STATS_AT("frontload-simreq: before the measured window");
		/* --stage extract: the stage clock hook enables the group over each stage 3 */
		if (s->pmu_open && (fl_pmu_reset(&s->pmu, why, sizeof(why)) != 0 ||
		    (!s->stage_extract && fl_pmu_enable(&s->pmu, why, sizeof(why)) != 0)))
			die(1, "--pmu: %s", why);
	} else {
		if (s->pmu_open && !s->stage_extract &&
		    fl_pmu_disable(&s->pmu, why, sizeof(why)) != 0)
			die(1, "--pmu: %s", why);
		CALLGRIND_DUMP_STATS_AT("frontload-simreq: measured window");
	}
}

/* Process one request (payload built) through every stage; measured ones add to totals. */
static void simreq_one(struct simreq *s, uint64_t i, const struct fl_bytes *payload,
	int measured)
{
	struct fl_work w;
	char err[512];
	uint64_t c0, m0;

	memset(&w, 0, sizeof(w));
	w.request_id = i + 1;
	w.payload = payload->data;
	w.payload_len = payload->len;
	w.frame_flags = s->z ? FL_FRAME_ZSTD : 0;
	c0 = fl_thread_cpu_ns();
	m0 = fl_mono_ns();
	if (fl_overheads_enter(s->ovh) != FL_OVH_ADMIT)
		die(1, "request %llu: overheads refused admission", (unsigned long long)i);
	if (fl_pipeline_decode(s->wk, &w, err, sizeof(err)) != 0)
		die(1, "request %llu: %s", (unsigned long long)i, err);
	enum fl_ovh_verdict v = fl_pipeline_overheads(s->wk, s->ovh, &w, fl_wall_ns());
	/* A denied request (the ACL's share) ends here, as in the leaf. */
	if (v == FL_OVH_ADMIT) {
		/* counted over stage 3 only in measured requests (see simreq_extract_clock) */
		s->in_compute = measured && s->stage_extract;
		s->clock_reads = 0;
		s->extract_span = 0;
		size_t n = w.req->n_stories < s->cfg.pk.max_stories ? w.req->n_stories :
			s->cfg.pk.max_stories;
		s->extract_reads = 2u * (unsigned)n;
		int crc = fl_pipeline_compute(s->wk, &w);
		if (s->in_compute && crc == 0)
			simreq_extract_check(s, &w, i);
		s->in_compute = 0;
		if (crc != 0 || fl_pipeline_reply(s->wk, &w) != 0)
			die(1, "request %llu: out of memory", (unsigned long long)i);
	}
	fl_overheads_leave(s->ovh);
	uint64_t c1 = fl_thread_cpu_ns(), m1 = fl_mono_ns();
	if (measured) {
		s->window_cpu_ns += c1 - c0;
		s->window_wall_ns += m1 - m0;
		s->extract_calls += w.extract_calls;
		for (int k = 0; k < FL_STAGE_COUNT; k++) {
			s->t.cpu_ns[k] += w.t.cpu_ns[k];
			s->t.wall_ns[k] += w.t.wall_ns[k];
		}
	}
	fl_work_clear(&w);
}

/* Request i's payload (as sent: zstd-framed with --zstd-frames) into out. */
static void simreq_build(struct simreq *s, uint64_t i, struct fl_bytes *out)
{
	struct fl_bytes raw = { 0 };

	if (fl_reqgen_build(&s->gen, i, s->z ? &raw : out) != 0)
		die(1, "request %llu: out of memory", (unsigned long long)i);
	if (s->z) {
		if (fl_zcodec_compress(s->z, raw.data, raw.len, out) != 0)
			die(1, "request %llu: zstd failed", (unsigned long long)i);
		fl_bytes_free(&raw);
	}
}

static void simreq_progress(struct simreq *s, const char *what, uint64_t k, uint64_t n,
	uint64_t t0)
{
	if (s->cfg.progress)
		fprintf(stderr, PROG ": %s request %llu/%llu done, %.1f s elapsed\n", what,
			(unsigned long long)k, (unsigned long long)n,
			(double)(fl_mono_ns() - t0) / 1e9);
}

/* Warmup requests one by one, then every measured request built first (building is not
 * part of the leaf's work) and processed inside one window. */
static void simreq_run(struct simreq *s)
{
	struct simreq_config *c = &s->cfg;
	uint64_t t0 = fl_mono_ns();
	struct fl_bytes payload = { 0 }, *meas;
	char why[FL_PMU_WHY_LEN];

	for (uint64_t i = 0; i < c->warmup; i++) {
		simreq_build(s, i, &payload);
		simreq_one(s, i, &payload, 0);
		simreq_progress(s, "warmup", i + 1, c->warmup, t0);
	}
	fl_bytes_free(&payload);
	meas = calloc(c->requests, sizeof(*meas));
	if (meas == NULL)
		die(1, "out of memory for %llu requests", (unsigned long long)c->requests);
	for (uint64_t k = 0; k < c->requests; k++) {
		simreq_build(s, c->warmup + k, &meas[k]);
		s->request_bytes += meas[k].len;
	}
	simreq_window(s, 1);
	for (uint64_t k = 0; k < c->requests; k++) {
		simreq_one(s, c->warmup + k, &meas[k], 1);
		simreq_progress(s, "measured", k + 1, c->requests, t0);
	}
	simreq_window(s, 0);
	for (uint64_t k = 0; k < c->requests; k++)
		fl_bytes_free(&meas[k]);
	free(meas);
	if (s->pmu_open && fl_pmu_read(&s->pmu, &s->counts, why, sizeof(why)) != 0) {
		snprintf(s->pmu_why, sizeof(s->pmu_why), "%s", why);
		s->pmu_open = 0;
	}
}

static json_t *metric_json(const struct fl_pmu_metric *m)
{
	if (m->supported)
		return json_pack("{s:b,s:f}", "supported", 1, "value", m->value);
	return json_pack("{s:b,s:s}", "supported", 0, "why", m->why);
}

/* Top-down front-end bound: the value with the formula it came from. */
static json_t *fe_bound_json(const struct fl_pmu_metrics *m)
{
	json_t *o = metric_json(&m->fe_bound);

	if (m->fe_bound_formula)
		json_object_set_new(o, "formula", json_string(m->fe_bound_formula));
	return o;
}

static json_t *simreq_pmu_json(struct simreq *s)
{
	if (!s->cfg.pmu)
		return json_null();
	if (!s->pmu_open)
		return json_pack("{s:b,s:s}", "supported", 0, "why", s->pmu_why);
	json_t *ev = json_object();
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		const struct fl_pmu_count *c = &s->counts.ev[e];

		json_object_set_new(ev, fl_pmu_event_name((enum fl_pmu_event)e), c->supported ?
			json_pack("{s:b,s:I,s:f}", "supported", 1, "value", (json_int_t)c->value,
				"scale", fl_pmu_scale_factor(c)) :
			json_pack("{s:b,s:s}", "supported", 0, "why", c->why));
	}
	struct fl_pmu_metrics m;
	fl_pmu_derive(&s->counts, &m);
	json_t *mj = json_object();
	json_object_set_new(mj, "ipc", metric_json(&m.ipc));
	json_object_set_new(mj, "l1i_mpki", metric_json(&m.l1i_mpki));
	json_object_set_new(mj, "itlb_mpki", metric_json(&m.itlb_mpki));
	json_object_set_new(mj, "branch_mpki", metric_json(&m.branch_mpki));
	json_object_set_new(mj, "branch_miss_pct", metric_json(&m.branch_miss_pct));
	json_object_set_new(mj, "frontend_stall_cycle_ratio", metric_json(&m.fe_stall_share));
	json_object_set_new(mj, "frontend_bound_slots", fe_bound_json(&m));
	json_object_set_new(mj, "mux_scale", json_real(m.max_scale));
	return json_pack("{s:b,s:b,s:o,s:o}", "supported", 1, "user_only", s->pmu.user_only,
		"events", ev, "metrics", mj);
}

/* The plan part of the JSON: what --plan-only prints, and the head of the full summary. */
static json_t *simreq_plan_json(const struct simreq *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "program", json_string(PROG));
	json_object_set_new(o, "lib", json_string(s->base.lib.path));
	json_object_set_new(o, "library_functions", json_integer((json_int_t)s->base.lib.n));
	json_object_set_new(o, "plan_functions",
		json_integer((json_int_t)fl_plan_footprint(&s->base.plan)));
	json_object_set_new(o, "copies", json_integer(s->base.plan.copies));
	json_object_set_new(o, "active_copies", json_integer(s->base.plan.active_copies));
	json_object_set_new(o, "plan", json_loads(s->base.plan_json, 0, NULL));
	return o;
}

static json_t *simreq_json(struct simreq *s)
{
	struct simreq_config *c = &s->cfg;
	json_t *cfg = json_object(), *st = json_object(), *o;
	uint64_t cpu_sum = 0;

	for (size_t i = 0; i < NOPTS; i++) {
		const struct fl_cli_opt *op = &simreq_opts[i];
		char key[64];
		json_t *v = NULL;

		if (strcmp(op->name, "json") == 0 || strcmp(op->name, "progress") == 0 ||
		    strcmp(op->name, "quiet") == 0)
			continue;
		snprintf(key, sizeof(key), "%s", op->name);
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		switch (op->type) {
		case FL_CLI_STR:
			v = fl_cli_str(op, c) ? json_string(fl_cli_str(op, c)) : json_null();
			break;
		case FL_CLI_UINT:
		case FL_CLI_BYTES: v = json_integer((json_int_t)fl_cli_uint(op, c)); break;
		case FL_CLI_REAL: v = json_real(fl_cli_real(op, c)); break;
		case FL_CLI_FLAG: v = json_boolean(fl_cli_uint(op, c)); break;
		}
		json_object_set_new(cfg, key, v);
	}
	for (int k = 0; k < FL_STAGE_COUNT; k++)
		if (k != FL_STAGE_FANOUT)
			cpu_sum += s->t.cpu_ns[k];
	for (int k = 0; k < FL_STAGE_COUNT; k++) {
		if (k == FL_STAGE_FANOUT)
			continue;  /* no network here */
		/* no CPU measured: the share is unknown (null), not 0 */
		json_object_set_new(st, fl_stage_name((enum fl_stage)k), json_pack("{s:I,s:I,s:o}",
			"cpu_ns", (json_int_t)s->t.cpu_ns[k], "wall_ns", (json_int_t)s->t.wall_ns[k],
			"cpu_share", cpu_sum ? json_real((double)s->t.cpu_ns[k] / (double)cpu_sum) :
			json_null()));
	}
	o = simreq_plan_json(s);
	json_object_set_new(o, "config", cfg);
	json_object_set_new(o, "stage", json_string(c->stage));
	json_object_set_new(o, "under_valgrind", json_boolean(RUNNING_ON_VALGRIND != 0));
	json_object_set_new(o, "warmup", json_integer((json_int_t)c->warmup));
	json_object_set_new(o, "requests", json_integer((json_int_t)c->requests));
	json_object_set_new(o, "stories_used", json_integer((json_int_t)(c->stories <
		c->pk.max_stories ? c->stories : c->pk.max_stories)));
	json_object_set_new(o, "extract_calls", json_integer((json_int_t)s->extract_calls));
	json_object_set_new(o, "extract_calls_per_request",
		json_real((double)s->extract_calls / (double)c->requests));
	json_object_set_new(o, "request_bytes_mean",
		json_real((double)s->request_bytes / (double)c->requests));
	json_object_set_new(o, "window_cpu_ns", json_integer((json_int_t)s->window_cpu_ns));
	json_object_set_new(o, "window_wall_ns", json_integer((json_int_t)s->window_wall_ns));
	json_object_set_new(o, "cpu_ns_per_request",
		json_real((double)s->window_cpu_ns / (double)c->requests));
	json_object_set_new(o, "stages", st);
	json_object_set_new(o, "extract_cpu_share", cpu_sum ?
		json_real((double)s->t.cpu_ns[FL_STAGE_EXTRACT] / (double)cpu_sum) : json_null());
	json_object_set_new(o, "counted_window", json_string(s->stage_extract ?
		"stage 3 (extract) of each measured request" :
		"every stage of the measured requests"));
	json_object_set_new(o, "counted_window_cpu_ns", json_integer((json_int_t)(
		s->stage_extract ? s->counted_cpu_ns : s->window_cpu_ns)));
	const struct fl_pmu_count *ins = &s->counts.ev[FL_PMU_INSTRUCTIONS];
	if (s->pmu_open && ins->supported) {
		json_object_set_new(o, "instructions", json_integer((json_int_t)ins->value));
	} else {
		json_object_set_new(o, "instructions", json_null());
		json_object_set_new(o, "instructions_why", json_string(!c->pmu ?
			"not counted (no --pmu; under callgrind, Ir in its output)" :
			s->pmu_open ? ins->why : s->pmu_why));
	}
	json_object_set_new(o, "pmu", simreq_pmu_json(s));
	return o;
}

static void simreq_free(struct simreq *s)
{
	if (s->pmu_open)
		fl_pmu_close(&s->pmu);
	fl_zcodec_free(s->z);
	fl_worker_free(s->wk);
	fl_pipeline_free(s->pipeline);
	fl_overheads_free(s->ovh);
	if (s->sessions)
		fl_session_store_free(s->sessions);
	fl_corpus_free(&s->corpus);
	fl_request_base_close(&s->base);
}

/* Write the summary to --json or stdout and drop it. */
static void simreq_write(const struct simreq *s, json_t *out)
{
	if (s->cfg.json) {
		if (json_dump_file(out, s->cfg.json, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
			die(1, "cannot write --json %s: %s", s->cfg.json, strerror(errno));
	} else {
		json_dumpf(out, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
	}
	json_decref(out);
}

int main(int argc, char **argv)
{
	static struct simreq sim;  /* the one run; static: it is large */
	struct simreq *s = &sim;

	config_parse(&s->cfg, argc, argv);
	simreq_start(s);
	if (s->cfg.plan_only) {
		simreq_write(s, simreq_plan_json(s));
		fl_request_base_close(&s->base);
		return 0;
	}
	if (!s->cfg.quiet)
		fprintf(stderr, PROG ": %zu functions in the plan (%u of %u copies), %llu extractor "
			"calls per story, %llu stories per request (%llu used), %llu warmup + %llu "
			"measured requests, stage %s%s\n", fl_plan_footprint(&s->base.plan),
			s->base.plan.active_copies, s->base.plan.copies,
			(unsigned long long)s->cfg.pk.extractors_per_story,
			(unsigned long long)s->cfg.stories,
			(unsigned long long)(s->cfg.stories < s->cfg.pk.max_stories ? s->cfg.stories :
				s->cfg.pk.max_stories), (unsigned long long)s->cfg.warmup,
			(unsigned long long)s->cfg.requests, s->cfg.stage,
			RUNNING_ON_VALGRIND ? ", under valgrind" : "");
	simreq_run(s);
	simreq_write(s, simreq_json(s));
	simreq_free(s);
	return 0;
}
