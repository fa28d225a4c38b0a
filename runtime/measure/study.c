/* study.c: frontload-measure study: MPKI over executed code bytes x call order x calls per
 * request, and L1i miss-ratio curves per call order. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cpumodel.h"
#include "discache.h"
#include "margs.h"
#include "measure.h"
#include "mutil.h"
#include "simrun.h"
#include "osfile.h"
#include "process.h"

#define ST_MAX_LIST 32
#define ST_MAX_POINTS 512
#define ST_FLAT (-1.0)                 /* an order of the --alphas list: the flat walk */
#define ST_MAX_FOOTPRINT (1ull << 40)  /* --footprint: 1 TiB is beyond any library */

enum { ST_SWEEP, ST_MRC };

/* One simulated point. */
struct st_point {
	int kind;                /* ST_SWEEP or ST_MRC */
	uint64_t want_bytes;     /* footprint asked: executed code bytes */
	uint64_t nfuncs;         /* --active-functions it maps to */
	double alpha;            /* Zipf exponent, or ST_FLAT */
	uint64_t calls;          /* --calls-per-request */
	unsigned i1_bytes;       /* I1 size of this run */
	double code, hot, cold;  /* the plan's code bytes (--plan-only); NAN: not known */
	double reuse_fn[3];      /* reuse distance p50, p90, p99: distinct functions; NAN */
	double reuse_b[3];       /* the same in distinct hot bytes; NAN */
	double eta_s;
	int skipped;             /* 1: over budget; 2: duplicate of another point */
	int done, failed;
	char why[2048];
	struct fm_run run;
	char tag[64], nfs[32], cps[32], als[32];
	struct fm_sim_job job;
	struct fm_sim sim;
};

/* What study parsed. */
struct st_args {
	uint64_t bytes[ST_MAX_LIST], calls[ST_MAX_LIST], sizes_kib[ST_MAX_LIST];
	double alphas[ST_MAX_LIST];
	size_t nbytes, ncalls, nsizes, nalphas;
	uint64_t mrc_bytes, mrc_calls, jobs, requests, warmup;
	double budget_min;
	int no_mrc, quiet, bytes_given;
	const char *cpu, *i1, *d1, *ll, *out;
	const char *bytes_text, *alphas_text, *calls_text, *sizes_text, *mrc_text;
	struct fm_run *run;      /* takes the forwarded simreq knobs */
};

/* Lists and byte counts with a T suffix are strings here, parsed after (st_parse). */
#define FL_CLI_OBJ struct st_args
static const struct fl_cli_opt st_opts[] = {
	FL_OPT_STR("footprint", bytes_text, "LIST", NULL, "executed code bytes to sweep, "
		"suffixes K, M, G (x 1024), 1..1T (default: 8K,32K,128K,512K,2M,8M,32M,128M,256M, "
		"each capped at the library's size, and the whole library when it is smaller than "
		"256 MiB)", .section = "points"),
	FL_OPT_STR("alphas", alphas_text, "LIST", "flat,1", "call orders: flat (each active "
		"function once a lap, in a seeded order) or a Zipf exponent alpha, 0..4 (calls of "
		"the rank-r function ~ 1/r^alpha, ranks seeded, not by address)"),
	FL_OPT_STR("calls", calls_text, "LIST", "100000", "calls per request, 1..1e9"),
	FL_OPT_UINT("requests", requests, 1, 100000, "N", "2", "measured requests per point"),
	FL_OPT_UINT("warmup", warmup, 0, 100000, "N", "1", "warmup requests per point"),
	FL_OPT_STR("mrc-footprint", mrc_text, "BYTES", "1M", "executed code bytes of the "
		"miss-ratio curves, 1..1T (suffix K, M, G, T: x 1024)", .section = "miss-ratio "
		"curves"),
	FL_OPT_UINT("mrc-calls", mrc_calls, 1, 100000000, "N", "10000", "calls per request "
		"of the curves"),
	FL_OPT_STR("mrc-sizes", sizes_text, "LIST", "8,16,32,64,128,256,512,1024,2048,4096",
		"I1 sizes in KiB, 1..1e9, fitted to what valgrind can simulate"),
	FL_OPT_FLAG("no-mrc", no_mrc, "skip the curves"),
	FL_OPT_UINT("jobs", jobs, 1, 64, "N", NULL, "simulations at once (default: the CPUs)",
		.section = "run"),
	FL_OPT_REAL("budget-min", budget_min, 0.1, 100000, "M", "25", "estimated wall-time "
		"budget in minutes: points are dropped, most expensive first, until the estimate "
		"fits; dropped points are listed as skipped with their estimate"),
	FM_GEO_CLI_OPTS("simulated geometry"),
	FL_OPT_STR("out", out, "DIR", NULL, "output directory (default: "
		"results/study-<YYYYmmdd-HHMMSS>, relative to the current directory)",
		.section = "output"),
	FL_OPT_FLAG("quiet", quiet, "no progress lines"),
};
#undef FL_CLI_OBJ

/* The knobs the study sets itself (a point's plan and calls). */
static int st_own_knob(const char *knob)
{
	static const char *const own[] = { "active-functions", "footprint-bytes", "dispatch",
		"zipf-alpha", "calls-per-request", "extractors-per-story", NULL };

	for (int i = 0; own[i]; i++)
		if (strcmp(knob, own[i]) == 0)
			return 1;
	return 0;
}

/* A forwarded simreq knob: appended to the run's, unless the study sets it per point. */
static int st_take_knob(void *obj, const struct fl_cli_opt *o, const char *val, char *err,
	size_t errlen)
{
	struct st_args *a = obj;

	if (st_own_knob(o->name)) {
		snprintf(err, errlen, "study sets --%s itself (use --footprint, --alphas, --calls)",
			o->name);
		return -1;
	}
	if (fm_run_knob(a->run, o->name, val) != 0) {
		snprintf(err, errlen, "--%s: too many knobs", o->name);
		return -1;
	}
	return 0;
}

static const struct fl_cli st_cli = {
	.opts = st_opts, .nopts = sizeof(st_opts) / sizeof(st_opts[0]), .fwd = &fm_knob_cli,
	.fwd_title = FM_KNOBS_TITLE, .fwd_take = st_take_knob,
};

static void study_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " study [options] [simreq knobs]\n"
"\n"
"Sweeps the executed code footprint (bytes of the plan's functions, from the library's\n"
"symbols), the call order (flat walk or Zipf-skewed frequencies) and the extractor calls\n"
"per request, and at each point measures L1i MPKI, LL code MPKI, branch MPKI and the\n"
"instruction mix with the simulated path (valgrind callgrind, as in validate\n"
"--simulate). Then an L1i miss-ratio curve per call order: L1i MPKI over I1 sizes at one\n"
"footprint (one callgrind run per size, cache totals only; ways and line as the CPU\n"
"model's L1i). A footprint is mapped to the fewest active functions whose code (hot +\n"
"cold) reaches it, drawn across patterns in proportion to their variants\n"
"(frontload-simreq --plan-only --footprint-bytes, native), and each point reports the\n"
"plan's code bytes and its reuse profile. Footprints that map to the same plan are\n"
"dropped and listed.\n"
"\n"
"Writes DIR/study.csv (one row per point), DIR/study.json, DIR/summary.md (the exact\n"
"command, host, build configuration, geometry, tables, skipped points, limits) and\n"
"gnuplot plots as PNG (pngcairo) and SVG: mpki_vs_footprint (L1i and LL code MPKI, the\n"
"I1 and LL sizes marked), mpki_vs_calls, mrc, plus the script study.gp.\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &st_cli);
	fputs(
"cost: per point (min(functions, (warmup + requests) x calls) + 3000) functions x 1.2 ms\n"
"of translation + native time x 50, the native time from two short native runs; the\n"
"estimate is printed before starting, with a progress line per finished point.\n"
"--active-copies is forwarded (the coarse knob: the footprint is drawn from those copies);\n"
"the study sets --active-functions, --footprint-bytes, --dispatch and --zipf-alpha.\n"
"\n", fp);
	fputs("limits: those of the simulated path (validate --help): no prefetcher, op cache or\n"
"iTLB, LRU, inclusive LL, a simple branch model, no timing.\n"
"\nexit status: 0 written (some points may have failed: see summary.md), 1 no point\n"
"could run or the output cannot be written, 2 usage error.\n", fp);
}

/* "512", "8K", "2M", "1G" (x 1024) into *v. Returns 0, or -1 on another text. */
static int st_bytes(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;
	uint64_t mul = 1;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30;
	else if (*end == 'T' || *end == 't')
		mul = 1ull << 40;
	if (mul > 1)
		end++;
	if (*end || n > UINT64_MAX / mul)
		return -1;
	*v = n * mul;
	return 0;
}

/* A comma list into out[*n] through one parser per element. kind: 0 integer 1..1e9,
 * 1 bytes 1..ST_MAX_FOOTPRINT, 2 an order (flat or alpha 0..4; doubles). */
static int parse_list(const char *flag, const char *s, int kind, void *out, size_t *n)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t *u = out;
		double *d = out;

		if (*n == ST_MAX_LIST) {
			fprintf(stderr, FM_PROG ": --%s: at most %d values\n", flag, ST_MAX_LIST);
			return -1;
		}
		if (kind == 0 && fm_parse_u64(flag, t, 1, 1000000000, &u[*n]) != 0)
			return -1;
		if (kind == 1 && (st_bytes(t, &u[*n]) != 0 || u[*n] == 0 ||
		    u[*n] > ST_MAX_FOOTPRINT)) {
			fprintf(stderr, FM_PROG ": --%s: expected bytes 1..1T (suffix K, M, G, T), "
				"got \"%s\"\n", flag, t);
			return -1;
		}
		if (kind == 2 && strcmp(t, "flat") == 0)
			d[*n] = ST_FLAT;
		else if (kind == 2 && fm_parse_f64(flag, t, 0, 4, &d[*n]) != 0)
			return -1;
		(*n)++;
	}
	if (*n == 0) {
		fprintf(stderr, FM_PROG ": --%s: empty list\n", flag);
		return -1;
	}
	return 0;
}

/* What the table's defaults do not say: the footprints (their cap needs the library) and
 * the jobs (the CPUs). */
static void st_defaults(struct st_args *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(a, 0, sizeof(*a));
	/* x4 from 8 KiB (below any L1i) to 256 MiB (beyond any LL), capped later. */
	for (uint64_t b = 8192; b <= (256ull << 20); b *= 4)
		a->bytes[a->nbytes++] = b;
	a->bytes[a->nbytes++] = 256ull << 20;
	a->jobs = ncpu > 0 ? (uint64_t)ncpu : 1;
}

static int st_parse(int argc, char **argv, struct st_args *a, struct fm_run *r)
{
	st_defaults(a);
	a->run = r;
	if (fm_cli_parse(&st_cli, argc, argv, a, study_usage) != 0)
		return -1;
	a->bytes_given = a->bytes_text != NULL;
	if ((a->bytes_text && parse_list("footprint", a->bytes_text, 1, a->bytes, &a->nbytes)) ||
	    parse_list("alphas", a->alphas_text, 2, a->alphas, &a->nalphas) ||
	    parse_list("calls", a->calls_text, 0, a->calls, &a->ncalls) ||
	    parse_list("mrc-sizes", a->sizes_text, 0, a->sizes_kib, &a->nsizes))
		return -1;
	if (st_bytes(a->mrc_text, &a->mrc_bytes) != 0 || a->mrc_bytes == 0 ||
	    a->mrc_bytes > ST_MAX_FOOTPRINT) {
		fprintf(stderr, FM_PROG ": --mrc-footprint: expected bytes 1..1T, got \"%s\"\n",
			a->mrc_text);
		return -1;
	}
	return 0;
}

/* Native cost model: seconds = base + per_call x calls x requests; and the library's plan
 * (every function the forwarded knobs keep) in functions and code bytes. */
struct st_model {
	double base_s, per_call_s;
	double lib_functions, lib_copies;
	double plan_functions, plan_bytes;   /* all kept functions and their code bytes */
};

static int st_native(const struct fm_run *r0, const char *tag, const char *calls,
	struct fm_native *out)
{
	struct fm_run r = *r0;
	char err[2048];

	r.tag = tag;
	r.warmup = 0;
	r.requests = 2;
	fm_run_knob(&r, calls ? "calls-per-request" : "plan-only", calls);
	if (fm_native_run(&r, out, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	return 0;
}

static int st_model(const struct fm_run *r0, struct st_model *m)
{
	struct fm_native lo, hi, all;

	if (st_native(r0, "model-lo", "1000", &lo) != 0)
		return -1;
	if (st_native(r0, "model-hi", "50000", &hi) != 0) {
		fm_native_free(&lo);
		return -1;
	}
	if (st_native(r0, "model-plan", NULL, &all) != 0) {
		fm_native_free(&lo);
		fm_native_free(&hi);
		return -1;
	}
	/* Per call: the native extract stage's CPU over its calls (wall-time differences of
	 * short runs are noise); the rest of a run is the low run's wall time. */
	m->per_call_s = fm_json_num(hi.summary, "stages.extract.cpu_ns") / 1e9 /
		fm_json_num(hi.summary, "extract_calls");
	if (!isfinite(m->per_call_s) || m->per_call_s < 1e-9)
		m->per_call_s = 1e-6;
	m->base_s = lo.wall_s;
	m->lib_functions = fm_json_num(lo.summary, "library_functions");
	m->lib_copies = fm_json_num(lo.summary, "copies");
	m->plan_functions = fm_json_num(all.summary, "plan_functions");
	m->plan_bytes = fm_json_num(all.summary, "plan.code_bytes");
	fm_native_free(&lo);
	fm_native_free(&hi);
	fm_native_free(&all);
	if (!(m->plan_functions >= 1) || !(m->plan_bytes >= 1)) {
		fprintf(stderr, FM_PROG ": frontload-simreq --plan-only gave no code bytes\n");
		return -1;
	}
	return 0;
}

/* The default footprints stop at the library: larger ones become the whole library. */
static void st_cap_footprints(struct st_args *a, const struct st_model *m)
{
	size_t k = 0;

	if (a->bytes_given)
		return;
	for (size_t i = 0; i < a->nbytes; i++)
		if ((double)a->bytes[i] < m->plan_bytes)
			a->bytes[k++] = a->bytes[i];
	a->bytes[k++] = (uint64_t)m->plan_bytes;
	a->nbytes = k;
}

static void st_order_str(double alpha, char *buf, size_t len)
{
	if (alpha < 0)
		snprintf(buf, len, "flat");
	else
		snprintf(buf, len, "zipf a=%g", alpha);
}

/* A new point of kind; its plan is found later (st_plan_facts). */
static struct st_point *st_add(struct st_point *p, size_t *n, int kind, uint64_t want,
	double alpha, uint64_t calls, unsigned i1)
{
	struct st_point *q = &p[(*n)++];

	memset(q, 0, sizeof(*q));
	q->kind = kind;
	q->want_bytes = want;
	q->alpha = alpha;
	q->calls = calls;
	q->i1_bytes = i1;
	q->code = q->hot = q->cold = NAN;
	for (int k = 0; k < 3; k++)
		q->reuse_fn[k] = q->reuse_b[k] = NAN;
	return q;
}

/* The point list: sweep points, then the curves. */
static size_t st_points(const struct st_args *a, const struct fm_run *r0,
	struct st_point *p)
{
	size_t n = 0;

	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t i = 0; i < a->nbytes; i++)
			for (size_t k = 0; k < a->ncalls && n < ST_MAX_POINTS; k++)
				st_add(p, &n, ST_SWEEP, a->bytes[i], a->alphas[j], a->calls[k],
					r0->geo.i1.size);
	for (size_t j = 0; !a->no_mrc && j < a->nalphas; j++)
		for (size_t i = 0; i < a->nsizes && n < ST_MAX_POINTS; i++)
			st_add(p, &n, ST_MRC, a->mrc_bytes, a->alphas[j], a->mrc_calls,
				(unsigned)(a->sizes_kib[i] * 1024));
	return n;
}

/* A sweep point whose plan is an earlier one's (same functions, order, calls) is dropped
 * as a duplicate. */
static void st_dedupe(struct st_point *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; p[i].kind == ST_SWEEP && !p[i].skipped && k < i; k++)
			if (p[k].kind == ST_SWEEP && p[k].calls == p[i].calls &&
			    p[k].alpha == p[i].alpha && p[k].nfuncs == p[i].nfuncs && !p[k].skipped &&
			    !p[k].failed) {
				char o[32];

				st_order_str(p[i].alpha, o, sizeof(o));
				p[i].skipped = 2;
				snprintf(p[i].why, sizeof(p[i].why), "same plan as --footprint %llu "
					"(%llu functions, %s)", (unsigned long long)p[k].want_bytes,
					(unsigned long long)p[i].nfuncs, o);
			}
}

/* Estimates; drop the most expensive points until the budget fits. */
static void st_budget(const struct st_args *a, const struct st_model *m,
	struct st_point *p, size_t n, double *total_s)
{
	for (size_t i = 0; i < n; i++) {
		struct st_point *q = &p[i];
		double native = m->base_s + m->per_call_s * (double)q->calls *
			(double)(a->warmup + a->requests);

		q->eta_s = fm_sim_eta(native, (double)q->nfuncs, (double)q->calls, a->warmup,
			a->requests);
		/* Mix runs also disassemble and join: about a fifth more. */
		if (q->kind == ST_SWEEP)
			q->eta_s *= 1.2;
	}
	/* Fit the budget: drop the most expensive points first. */
	for (;;) {
		double sum = 0;
		size_t worst = n;

		for (size_t i = 0; i < n; i++) {
			if (p[i].skipped || p[i].failed)
				continue;
			sum += p[i].eta_s;
			if (worst == n || p[i].eta_s > p[worst].eta_s)
				worst = i;
		}
		*total_s = sum / (double)a->jobs;
		if (*total_s <= a->budget_min * 60 || worst == n)
			break;
		char d[32];

		p[worst].skipped = 1;
		snprintf(p[worst].why, sizeof(p[worst].why), "estimated %s alone, over the "
			"--budget-min %g budget", fm_dur_str(p[worst].eta_s, d, sizeof(d)),
			a->budget_min);
	}
}

/* Set the point's plan knobs on its run: the footprint in bytes (for --plan-only) or the
 * active functions it was found to be. */
static void st_plan_knobs(struct st_point *q, struct fm_run *r, int by_bytes)
{
	if (by_bytes)
		snprintf(q->nfs, sizeof(q->nfs), "%llu", (unsigned long long)q->want_bytes);
	else
		snprintf(q->nfs, sizeof(q->nfs), "%llu", (unsigned long long)q->nfuncs);
	snprintf(q->als, sizeof(q->als), "%.17g", q->alpha < 0 ? 0 : q->alpha);
	fm_run_knob(r, by_bytes ? "footprint-bytes" : "active-functions", q->nfs);
	fm_run_knob(r, "dispatch", q->alpha < 0 ? "flat" : "zipf");
	fm_run_knob(r, "zipf-alpha", q->als);
}

/* Each point's plan: the fewest functions whose code reaches its footprint, their code
 * bytes and reuse profile, from a native --plan-only --footprint-bytes run per distinct
 * (footprint, order); points sharing one copy it. A point whose plan fails is failed.
 * Returns the plans that failed. */
static size_t st_plan_facts(struct st_point *p, size_t n, const struct fm_run *r0)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct st_point *q = &p[i], *same = NULL;
		struct fm_native nat;
		struct fm_run r = *r0;
		char err[2048], tag[32];

		if (q->skipped)
			continue;
		for (size_t k = 0; k < i && same == NULL; k++)
			if (!isnan(p[k].code) && p[k].want_bytes == q->want_bytes &&
			    p[k].alpha == q->alpha)
				same = &p[k];
		if (same) {
			q->nfuncs = same->nfuncs;
			q->code = same->code;
			q->hot = same->hot;
			q->cold = same->cold;
			memcpy(q->reuse_fn, same->reuse_fn, sizeof(q->reuse_fn));
			memcpy(q->reuse_b, same->reuse_b, sizeof(q->reuse_b));
			continue;
		}
		snprintf(tag, sizeof(tag), "plan%03zu", i);
		r.tag = tag;
		st_plan_knobs(q, &r, 1);
		fm_run_knob(&r, "plan-only", NULL);
		if (fm_native_run(&r, &nat, err, sizeof(err)) != 0) {
			q->failed = 1;
			snprintf(q->why, sizeof(q->why), "plan: %.2000s", err);
			bad++;
			continue;
		}
		q->nfuncs = (uint64_t)fm_json_num(nat.summary, "plan_functions");
		q->code = fm_json_num(nat.summary, "plan.code_bytes");
		q->hot = fm_json_num(nat.summary, "plan.code_bytes_hot");
		q->cold = fm_json_num(nat.summary, "plan.code_bytes_cold");
		for (int k = 0; k < 3; k++) {
			json_t *rj = json_object_get(json_object_get(nat.summary, "plan"), "reuse");
			json_t *f = json_array_get(json_object_get(rj, "functions"), (size_t)k);
			json_t *b = json_array_get(json_object_get(rj, "hot_bytes"), (size_t)k);

			q->reuse_fn[k] = f ? json_number_value(f) : NAN;
			q->reuse_b[k] = b ? json_number_value(b) : NAN;
		}
		fm_native_free(&nat);
	}
	return bad;
}

static int st_start(struct st_point *q, const struct fm_run *r0, const char *tmp, int idx)
{
	char err[2048];

	q->run = *r0;
	q->run.tmpdir = tmp;
	snprintf(q->tag, sizeof(q->tag), "p%03d", idx);
	q->run.tag = q->tag;
	q->run.quiet = 1;
	q->run.mix = q->kind == ST_SWEEP;
	q->run.geo.i1.size = q->i1_bytes;
	snprintf(q->cps, sizeof(q->cps), "%llu", (unsigned long long)q->calls);
	st_plan_knobs(q, &q->run, 0);
	fm_run_knob(&q->run, "calls-per-request", q->cps);
	if (q->kind == ST_MRC) {
		struct fm_cache want = q->run.geo.i1, got;
		char note[256];

		if (fm_cache_fit(&want, &got, note, sizeof(note)) != 0) {
			q->failed = 1;
			snprintf(q->why, sizeof(q->why), "%s", note);
			return -1;
		}
		q->run.geo.i1 = got;
		q->i1_bytes = got.size;
	}
	if (fm_sim_start(&q->run, &q->job, err, sizeof(err)) != 0) {
		q->failed = 1;
		snprintf(q->why, sizeof(q->why), "%s", err);
		return -1;
	}
	return 0;
}

/* "512 KiB", "2.5 MiB": bytes for a reader. */
static char *st_bstr(double b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (!isfinite(b)) {
		snprintf(buf, len, "-");
		return buf;
	}
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%.3g %s", b, unit[u]);
	return buf;
}

static void point_label(const struct st_point *q, char *buf, size_t len)
{
	char o[32], b[32];

	st_order_str(q->alpha, o, sizeof(o));
	if (q->kind == ST_SWEEP)
		snprintf(buf, len, "%s (%llu functions), %s, %llu calls/request",
			st_bstr((double)q->want_bytes, b, sizeof(b)), (unsigned long long)q->nfuncs,
			o, (unsigned long long)q->calls);
	else
		snprintf(buf, len, "miss-ratio curve %s: I1 %u KiB", o, q->i1_bytes / 1024);
}

/* Run every non-skipped point, at most jobs at once. Returns points that succeeded. */
static size_t st_run_all(struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0, const char *tmp, double total_s)
{
	size_t next = 0, running = 0, finished = 0, todo = 0, ok = 0;
	struct st_point *slots[64] = { 0 };
	double t0 = fm_now(), last = t0;
	char d1[32], d2[32], lab[160], err[2048];

	for (size_t i = 0; i < n; i++)
		todo += !p[i].skipped && !p[i].failed;
	while (finished < todo) {
		while (running < a->jobs && next < n) {
			struct st_point *q = &p[next];
			int idx = (int)next++;

			if (q->skipped || q->failed)
				continue;
			if (st_start(q, r0, tmp, idx) != 0) {
				finished++;
				fprintf(stderr, FM_PROG ": point failed to start: %s\n", q->why);
				continue;
			}
			for (size_t s = 0; s < a->jobs; s++)
				if (slots[s] == NULL) {
					slots[s] = q;
					break;
				}
			running++;
		}
		if (running == 0)
			break;
		struct timespec ts = { 0, 200000000 };
		nanosleep(&ts, NULL);
		for (size_t s = 0; s < a->jobs; s++) {
			struct st_point *q = slots[s];
			int status;

			if (q == NULL || fm_sim_running(&q->job, &status))
				continue;
			slots[s] = NULL;
			running--;
			finished++;
			point_label(q, lab, sizeof(lab));
			if (fm_sim_finish(&q->run, &q->job, status, &q->sim, err, sizeof(err)) != 0) {
				q->failed = 1;
				snprintf(q->why, sizeof(q->why), "%s", err);
				fprintf(stderr, FM_PROG ": [%zu/%zu] %s: failed: %s\n", finished, todo, lab,
					err);
				continue;
			}
			q->done = 1;
			ok++;
			if (!a->quiet)
			{
				char d3[32], d4[32];

				char mk[32] = "n/a";

				if (q->sim.mix.l1i_mpki.available)
					snprintf(mk, sizeof(mk), "%.2f", q->sim.mix.l1i_mpki.value);
				fprintf(stderr, FM_PROG ": [%zu/%zu] %s: L1i MPKI %s (%s; estimated "
					"%s); %s elapsed of ~%s\n", finished, todo, lab,
					mk, fm_dur_str(q->sim.wall_s, d1, sizeof(d1)),
					fm_dur_str(q->eta_s, d2, sizeof(d2)),
					fm_dur_str(fm_now() - t0, d3, sizeof(d3)),
					fm_dur_str(total_s, d4, sizeof(d4)));
			}
		}
		if (!a->quiet && fm_now() - last >= 60) {
			last = fm_now();
			fprintf(stderr, FM_PROG ": %zu of %zu points done, %zu running, %s elapsed of "
				"~%s\n", finished, todo, running, fm_dur_str(last - t0, d1, sizeof(d1)),
				fm_dur_str(total_s, d2, sizeof(d2)));
		}
	}
	return ok;
}

static double sh(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

/* CSV columns: a point's figures (NAN = not measured). */
static void st_row(const struct st_point *q, double v[12])
{
	const struct fl_mix *x = &q->sim.mix;
	double req = (double)q->run.requests;

	v[0] = x->l1i_mpki.available ? x->l1i_mpki.value : NAN;
	v[1] = x->lli_mpki.available ? x->lli_mpki.value : NAN;
	v[2] = x->cond_mpki.available ? x->cond_mpki.value : NAN;
	v[3] = x->ind_mpki.available ? x->ind_mpki.value : NAN;
	v[4] = x->insns ? sh(x->cond, x->insns) : NAN;
	v[5] = x->insns ? 100 * x->taken_rate : NAN;
	v[6] = x->insns ? sh(x->call + x->call_ind + x->ret, x->insns) : NAN;
	v[7] = x->insns ? sh(x->loads + x->stores, x->insns) : NAN;
	v[8] = x->insns ? sh(x->scalar_fp, x->insns) : NAN;
	v[9] = x->insns ? sh(x->int_div + x->fp_div, x->insns) : NAN;
	v[10] = x->taken_branches ? x->insns_per_taken : NAN;
	v[11] = (double)x->ir_hw / req; /* each rep string execution once (mix.h) */
}

static const char *const st_cols[12] = {
	"l1i_mpki", "ll_code_mpki", "cond_branch_mpki", "indirect_branch_mpki",
	"cond_branch_pct", "cond_taken_pct", "call_ret_pct", "mem_pct", "scalar_fp_pct",
	"div_pct", "insns_per_taken_branch", "insns_per_request",
};

static void fnum(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.6g", v);
}

/* The plan's columns of a point (CSV and JSON share the names). */
static const char *const st_plan_cols[9] = {
	"code_bytes", "code_bytes_hot", "code_bytes_cold", "reuse_p50_functions",
	"reuse_p90_functions", "reuse_p99_functions", "reuse_p50_hot_bytes",
	"reuse_p90_hot_bytes", "reuse_p99_hot_bytes",
};

static void st_plan_row(const struct st_point *q, double v[9])
{
	v[0] = q->code;
	v[1] = q->hot;
	v[2] = q->cold;
	for (int k = 0; k < 3; k++) {
		v[3 + k] = q->reuse_fn[k];
		v[6 + k] = q->reuse_b[k];
	}
}

static const char *st_status(const struct st_point *q)
{
	return q->done ? "ok" : q->skipped ? "skipped" : "failed";
}

/* Columns: 1 kind, 2 footprint_bytes (asked), 3 active_functions, 4 dispatch, 5
 * zipf_alpha, 6..14 st_plan_cols, 15 calls_per_request, 16 i1_bytes, 17 status, 18..29
 * st_cols (18 l1i_mpki, 19 ll_code_mpki), 30 sim_wall_s, 31 estimate_s. study.gp reads
 * them by number. */
static int st_write_csv(const char *dir, const struct st_point *p, size_t n)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.csv", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "kind,footprint_bytes,active_functions,dispatch,zipf_alpha");
	for (int c = 0; c < 9; c++)
		fprintf(fp, ",%s", st_plan_cols[c]);
	fprintf(fp, ",calls_per_request,i1_bytes,status");
	for (int c = 0; c < 12; c++)
		fprintf(fp, ",%s", st_cols[c]);
	fprintf(fp, ",sim_wall_s,estimate_s\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[12], pv[9];

		fprintf(fp, "%s,%llu,%llu,%s,", q->kind == ST_SWEEP ? "sweep" : "mrc",
			(unsigned long long)q->want_bytes, (unsigned long long)q->nfuncs,
			q->alpha < 0 ? "flat" : "zipf");
		if (q->alpha >= 0)
			fprintf(fp, "%g", q->alpha);
		st_plan_row(q, pv);
		for (int c = 0; c < 9; c++) {
			fputc(',', fp);
			fnum(fp, pv[c]);
		}
		fprintf(fp, ",%llu,%u,%s", (unsigned long long)q->calls, q->i1_bytes, st_status(q));
		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++) {
				fputc(',', fp);
				fnum(fp, v[c]);
			}
			fprintf(fp, ",%.1f", q->sim.wall_s);
		} else {
			for (int c = 0; c < 13; c++)
				fputc(',', fp);
		}
		fprintf(fp, ",%.1f\n", q->eta_s);
	}
	return fclose(fp) == 0 ? 0 : -1;
}

/* Some measured point of kind with this order (and calls / asked bytes when nonzero). */
static int st_has(const struct st_point *p, size_t n, int kind, double alpha,
	uint64_t calls, uint64_t want)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].done && p[i].kind == kind && p[i].alpha == alpha &&
		    (!calls || p[i].calls == calls) && (!want || p[i].want_bytes == want))
			return 1;
	return 0;
}

/* A gnuplot condition selecting rows of one order (columns 4 and 5). */
static void st_gp_order(FILE *fp, double alpha)
{
	if (alpha < 0)
		fprintf(fp, "strcol(4) eq \"flat\"");
	else
		fprintf(fp, "strcol(4) eq \"zipf\" && abs($5 - %.17g) < 1e-9", alpha);
}

/* Vertical lines at the I1 and LL sizes on a bytes axis. */
static void st_gp_caches(FILE *fp, const struct fm_run *r0)
{
	char g[64];

	fprintf(fp, "unset arrow\nunset label\n");
	fprintf(fp, "set arrow 1 from %u, graph 0 to %u, graph 1 nohead dt 2 lc rgb '#555555'\n"
		"set label 1 'L1i %s' at %u, graph 0.96 rotate by 90 right font ',8'\n",
		r0->geo.i1.size, r0->geo.i1.size, st_bstr(r0->geo.i1.size, g, sizeof(g)), r0->geo.i1.size);
	fprintf(fp, "set arrow 2 from %u, graph 0 to %u, graph 1 nohead dt 2 lc rgb '#555555'\n"
		"set label 2 'LL %s' at %u, graph 0.96 rotate by 90 right font ',8'\n",
		r0->geo.ll.size, r0->geo.ll.size, st_bstr(r0->geo.ll.size, g, sizeof(g)), r0->geo.ll.size);
}

/* Each plot's series, per order (and per calls value or per footprint), from study.csv.
 * A plot is written only with a series (gnuplot fails on an empty one): head, holding
 * "set output ...", comes before the first, and tail after the last. */
static void st_gp_footprint(FILE *fp, const struct st_point *p, size_t n,
	const struct st_args *a, const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t k = 0; k < a->ncalls; k++) {
			char o[32];

			if (!st_has(p, n, ST_SWEEP, a->alphas[j], a->calls[k], 0))
				continue;
			st_order_str(a->alphas[j], o, sizeof(o));
			for (int col = 18; col <= 19; col++) {
				fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq "
					"\"sweep\" && $15 == %llu && ", first ? head : "", first ? "" : ", ",
					(unsigned long long)a->calls[k]);
				st_gp_order(fp, a->alphas[j]);
				fprintf(fp, " ? $6 : 1/0):%d with linespoints dt %d lc %zu title '%s %s, "
					"%llu calls/req'", col, col == 18 ? 1 : 2, j * a->ncalls + k + 1,
					col == 18 ? "L1i" : "LL code", o, (unsigned long long)a->calls[k]);
				first = 0;
			}
		}
	if (!first)
		fprintf(fp, "%s", tail);
}

static void st_gp_calls(FILE *fp, const struct st_point *p, size_t n,
	const struct st_args *a, const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; a->ncalls > 1 && j < a->nalphas; j++)
		for (size_t i = 0; i < a->nbytes; i++) {
			char o[32], b[32];

			if (!st_has(p, n, ST_SWEEP, a->alphas[j], 0, a->bytes[i]))
				continue;
			st_order_str(a->alphas[j], o, sizeof(o));
			fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq "
				"\"sweep\" && $2 == %llu && ", first ? head : "", first ? "" : ", ",
				(unsigned long long)a->bytes[i]);
			st_gp_order(fp, a->alphas[j]);
			fprintf(fp, " ? $15 : 1/0):18 with linespoints title '%s, %s'",
				st_bstr((double)a->bytes[i], b, sizeof(b)), o);
			first = 0;
		}
	if (!first)
		fprintf(fp, "%s", tail);
}

static void st_gp_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; j < a->nalphas; j++) {
		char o[32];

		if (!st_has(p, n, ST_MRC, a->alphas[j], 0, 0))
			continue;
		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq \"mrc\" && ",
			first ? head : "", first ? "" : ", ");
		st_gp_order(fp, a->alphas[j]);
		fprintf(fp, " ? $16/1024 : 1/0):18 with linespoints title '%s'", o);
		first = 0;
	}
	if (!first)
		fprintf(fp, "%s", tail);
}

/* gnuplot script; runs gnuplot. Returns 0, or -1 (gnuplot failed). */
static int st_plots(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const struct fm_run *r0, const char *cpu_i1)
{
	static const char *const terms[2][2] = {
		{ "pngcairo size 1000,600 font ',10'", "png" }, { "svg size 1000,600", "svg" },
	};
	char path[4200], b[32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.gp", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# study.gp: plots of study.csv (written by " FM_PROG " study)\n"
		"set datafile separator ','\nset key outside right top\nset grid\n");
	for (int t = 0; t < 2; t++) {
		char head[2048], caches[768];
		FILE *mf = fmemopen(caches, sizeof(caches), "w");

		if (mf == NULL) {
			fclose(fp);
			return -1;
		}
		st_gp_caches(mf, r0);
		fclose(mf);
		fprintf(fp, "\nset terminal %s\n", terms[t][0]);
		snprintf(head, sizeof(head), "set output 'mpki_vs_footprint.%s'\nset logscale x 2\n"
			"set format x '%%.0b %%BB'\nset ylabel 'MPKI (simulated, %s)'\n"
			"set xlabel 'executed code footprint (bytes of the plan; solid L1i, dashed "
			"LL code)'\nset title 'L1i and LL code MPKI vs code footprint'\n%splot ",
			terms[t][1], cpu_i1, caches);
		st_gp_footprint(fp, p, n, a, head, "\nunset arrow\nunset label\nset format x "
			"'%g'\nunset logscale x\n");
		snprintf(head, sizeof(head), "set output 'mpki_vs_calls.%s'\nset logscale x\n"
			"set ylabel 'L1i MPKI'\nset xlabel 'extractor calls per request'\n"
			"set title 'L1i MPKI vs calls per request'\nplot ", terms[t][1]);
		st_gp_calls(fp, p, n, a, head, "\nunset logscale x\n");
		snprintf(head, sizeof(head), "set output 'mrc.%s'\nset logscale x 2\n"
			"set ylabel 'L1i MPKI'\nset xlabel 'I1 size (KiB)'\nset title 'L1i "
			"miss-ratio curves: %s of code, %llu calls/request'\nplot ", terms[t][1],
			st_bstr((double)a->mrc_bytes, b, sizeof(b)), (unsigned long long)a->mrc_calls);
		if (!a->no_mrc)
			st_gp_mrc(fp, p, n, a, head, "\nunset logscale x\n");
	}
	fclose(fp);
	const char *const argv[] = { "gnuplot", "study.gp", NULL };
	struct fl_spawn_opts o = { .cwd = dir, .stderr_path = "gnuplot.log" };
	return fl_spawn_wait(argv, &o, NULL, 0) == 0 ? 0 : -1;
}

static void md_num(FILE *fp, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(fp, fmt, v);
	else
		fputs("-", fp);
}

static void st_sum_sweep(FILE *fp, const struct st_point *p, size_t n)
{
	char d1[32], d2[32], b1[32], b2[32], b3[32], b4[32], o[32];

	fprintf(fp, "## Code footprint x call order x calls per request\n\n"
		"Footprint: the executed code bytes of the plan (hot + cold parts of its active "
		"functions, from the library's symbols); reuse: distinct hot bytes called between "
		"two calls of the same function, median and 90th percentile over a lap.\n\n");
	fprintf(fp, "| footprint asked | functions | code bytes (hot + cold) | order | reuse p50 "
		"| reuse p90 | calls/req | L1i MPKI | LL code MPKI | cond br MPKI | ind br MPKI | "
		"cond br %% | taken %% | call+ret %% | ld+st %% | scalar FP %% | div %% | "
		"insns/taken br | instructions/request | status |\n");
	fprintf(fp, "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[12];

		if (q->kind != ST_SWEEP)
			continue;
		st_order_str(q->alpha, o, sizeof(o));
		fprintf(fp, "| %s | %llu | %s (%s + %s) | %s | %s | %s | %llu |",
			st_bstr((double)q->want_bytes, b1, sizeof(b1)), (unsigned long long)q->nfuncs,
			st_bstr(q->code, b2, sizeof(b2)), st_bstr(q->hot, b3, sizeof(b3)),
			st_bstr(q->cold, b4, sizeof(b4)), o, st_bstr(q->reuse_b[0], d1, sizeof(d1)),
			st_bstr(q->reuse_b[1], d2, sizeof(d2)), (unsigned long long)q->calls);
		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++) {
				fputc(' ', fp);
				md_num(fp, v[c], c == 11 ? "%.3g" : c == 1 || c == 3 || c == 9 ? "%.3f" :
					"%.2f");
				fputs(" |", fp);
			}
			fprintf(fp, " ok (%s) |\n", fm_dur_str(q->sim.wall_s, d1, sizeof(d1)));
		} else {
			for (int c = 0; c < 12; c++)
				fputs(" - |", fp);
			fprintf(fp, " %s: %s |\n", st_status(q), q->why);
		}
	}
}

static void st_sum_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0)
{
	char b[32], o[32];

	fprintf(fp, "\n## L1i miss-ratio curves (%s of code, %llu calls/request, I1 %u-way "
		"%u B lines)\n\n| I1 |", st_bstr((double)a->mrc_bytes, b, sizeof(b)),
		(unsigned long long)a->mrc_calls, r0->geo.i1.assoc, r0->geo.i1.line);
	for (size_t j = 0; j < a->nalphas; j++) {
		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, " L1i MPKI, %s |", o);
	}
	fprintf(fp, "\n|---:|");
	for (size_t j = 0; j < a->nalphas; j++)
		fprintf(fp, "---:|");
	fprintf(fp, "\n");
	for (size_t s = 0; s < a->nsizes; s++) {
		fprintf(fp, "| %llu KiB |", (unsigned long long)a->sizes_kib[s]);
		for (size_t j = 0; j < a->nalphas; j++) {
			const struct st_point *hit = NULL;

			/* The point asked for this size (its I1 may have been fitted). */
			for (size_t i = 0, k = 0; i < n; i++) {
				if (p[i].kind != ST_MRC || p[i].alpha != a->alphas[j])
					continue;
				if (k++ == s)
					hit = &p[i];
			}
			fputc(' ', fp);
			if (hit && hit->done)
				md_num(fp, hit->sim.mix.l1i_mpki.available ?
					hit->sim.mix.l1i_mpki.value : NAN, "%.2f");
			else
				fprintf(fp, "%s", hit ? st_status(hit) : "-");
			fputs(" |", fp);
		}
		fprintf(fp, "\n");
	}
}

static int st_write_summary(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const struct fm_run *r0, json_t *notes, const char *command,
	double total_s, double wall_s, const struct st_model *m, int plots_ok)
{
	char path[4200], g1[64], g2[64], g3[64], d1[32], d2[32];
	json_t *host = fm_host_json(), *build = fm_build_json();
	FILE *fp;

	snprintf(path, sizeof(path), "%s/summary.md", dir);
	fp = fopen(path, "w");
	if (fp == NULL) {
		json_decref(host);
		json_decref(build);
		return -1;
	}
	fprintf(fp, "# frontload front-end study\n\n");
	fprintf(fp, "Command:\n\n    %s\n\n", command);
	fprintf(fp, "Host: %s, %s, %lld CPUs, kernel %s.\n",
		json_string_value(json_object_get(host, "hostname")),
		json_string_value(json_object_get(host, "cpu")),
		(long long)json_integer_value(json_object_get(host, "cpus")),
		json_string_value(json_object_get(host, "kernel")));
	if (build != NULL)
		fprintf(fp, "Build: configure %s (copies %lld, seed %lld); ",
			json_string_length(json_object_get(build, "configure_args")) ?
			json_string_value(json_object_get(build, "configure_args")) : "(defaults)",
			(long long)json_integer_value(json_object_get(build, "copies")),
			(long long)json_integer_value(json_object_get(build, "seed")));
	else
		fprintf(fp, "Build: config.json not found beside " FM_PROG "; ");
	fprintf(fp, "library %.0f functions, %.0f copies of each variant; the plan's functions "
		"at most %.0f, %s of code (mean %.0f B a function).\n", m->lib_functions,
		m->lib_copies, m->plan_functions, st_bstr(m->plan_bytes, g1, sizeof(g1)),
		m->plan_bytes / m->plan_functions);
	fprintf(fp, "Path: simulated (valgrind 3.19 callgrind, --cache-sim=yes; sweep points also "
		"--branch-sim=yes --dump-instr=yes --collect-jumps=yes and objdump classes).\n");
	fprintf(fp, "Geometry (%s; sizes marked on the footprint plot): I1 %s, D1 %s, LL %s.\n",
		a->cpu, fm_cache_str(&r0->geo.i1, g1, sizeof(g1)), fm_cache_str(&r0->geo.d1, g2,
		sizeof(g2)), fm_cache_str(&r0->geo.ll, g3, sizeof(g3)));
	for (size_t i = 0; i < json_array_size(notes); i++)
		fprintf(fp, "Note: %s.\n", json_string_value(json_array_get(notes, i)));
	fprintf(fp, "Each point: %llu warmup + %llu measured requests (collection only around "
		"the measured requests' processing); other knobs:", (unsigned long long)a->warmup,
		(unsigned long long)a->requests);
	for (int i = 0; i + 1 < r0->nknobs; i += 2)
		fprintf(fp, " --%s%s%s", r0->knobs[i], r0->knobs[i + 1] ? " " : "",
			r0->knobs[i + 1] ? r0->knobs[i + 1] : "");
	fprintf(fp, "%s.\n", r0->nknobs ? "" : " simreq defaults (the leaf's)");
	fprintf(fp, "Estimated %s, took %s.\n\n", fm_dur_str(total_s, d1, sizeof(d1)),
		fm_dur_str(wall_s, d2, sizeof(d2)));
	st_sum_sweep(fp, p, n);
	if (!a->no_mrc)
		st_sum_mrc(fp, p, n, a, r0);
	fprintf(fp, "\n## Files\n\nstudy.csv (every point), study.json, study.gp%s.\n",
		plots_ok ? "; plots mpki_vs_footprint, mpki_vs_calls, mrc as .png and .svg" :
		"; gnuplot failed (see gnuplot.log), no plots");
	fprintf(fp, "\n## Limits of the simulated path\n\n");
	for (int i = 0; fm_sim_limits[i]; i++)
		fprintf(fp, "- %s.\n", fm_sim_limits[i]);
	fclose(fp);
	json_decref(host);
	json_decref(build);
	return 0;
}

int fm_study_main(int argc, char **argv)
{
	struct st_point *points;
	struct st_args a;
	struct fm_run r;
	struct st_model m;
	char err[2048], tmp[256], dir[4096], d1[32], command[8192] = "";
	json_t *notes = NULL, *js;
	double total_s, t0 = fm_now();
	size_t n, ok;
	int plots_ok;

	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (st_parse(argc, argv, &a, &r) != 0)
		return FM_EXIT_USAGE;
	if (fm_geometry(&r.geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	points = calloc(ST_MAX_POINTS, sizeof(*points));  /* large: kept off the stack */
	if (points == NULL) {
		fprintf(stderr, FM_PROG ": out of memory\n");
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	/* A smaller corpus shortens startup under valgrind; stories still come from it. */
	if (!fm_run_knob_get(&r, "corpus-mb"))
		fm_run_knob(&r, "corpus-mb", "16");
	r.warmup = a.warmup;
	r.requests = a.requests;
	for (int i = -1; i < argc; i++) {
		size_t l = strlen(command);

		snprintf(command + l, sizeof(command) - l, "%s%s", i < 0 ? FM_PROG : " ",
			i < 0 ? "" : argv[i]);
	}
	if (a.out)
		snprintf(dir, sizeof(dir), "%s", a.out);
	else {
		time_t now = time(NULL);
		struct tm tm;
		char ts[32];

		localtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
		snprintf(dir, sizeof(dir), "results/study-%s", ts);
	}
	if (fl_mkdir_p(dir, 0755, NULL, 0) != 0) {
		fprintf(stderr, FM_PROG ": cannot make %s: %s\n", dir, strerror(errno));
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	r.dcache = fm_dis_cache_new();
	if (r.dcache == NULL) {
		fprintf(stderr, FM_PROG ": out of memory\n");
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	if (!a.quiet)
		fprintf(stderr, FM_PROG ": native cost model (two short native runs and the "
			"library's plan)\n");
	if (st_model(&r, &m) != 0) {
		fm_dis_cache_free(r.dcache);
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	st_cap_footprints(&a, &m);
	n = st_points(&a, &r, points);
	if (st_plan_facts(points, n, &r) != 0)
		fprintf(stderr, FM_PROG ": some points have no plan (see summary.md)\n");
	st_dedupe(points, n);
	st_budget(&a, &m, points, n, &total_s);
	if (!a.quiet) {
		char b[32];

		fprintf(stderr, FM_PROG ": library %.0f functions (%.0f copies), the plan at most "
			"%.0f functions, %s of code; native %.2f us per extractor call; %zu points, "
			"estimated %s with %llu jobs (budget %g min)\n", m.lib_functions, m.lib_copies,
			m.plan_functions, st_bstr(m.plan_bytes, b, sizeof(b)), m.per_call_s * 1e6, n,
			fm_dur_str(total_s, d1, sizeof(d1)), (unsigned long long)a.jobs, a.budget_min);
		for (size_t i = 0; i < n; i++) {
			char lab[160];

			point_label(&points[i], lab, sizeof(lab));
			fprintf(stderr, "  %-60s %s%s%s\n", lab,
				fm_dur_str(points[i].eta_s, d1, sizeof(d1)),
				points[i].skipped ? "  skipped: " : "", points[i].skipped ? points[i].why : "");
		}
	}
	ok = st_run_all(points, n, &a, &r, tmp, total_s);
	if (st_write_csv(dir, points, n) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s/study.csv\n", dir);
		fm_dis_cache_free(r.dcache);
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	{
		char i1[64];

		fm_cache_str(&r.geo.i1, i1, sizeof(i1));
		char lab[128];
		snprintf(lab, sizeof(lab), "%s, I1 %s", a.cpu, i1);
		plots_ok = st_plots(dir, points, n, &a, &r, lab) == 0;
	}
	if (!plots_ok)
		fprintf(stderr, FM_PROG ": gnuplot failed (see %s/gnuplot.log)\n", dir);
	st_write_summary(dir, points, n, &a, &r, notes, command, total_s, fm_now() - t0, &m,
		plots_ok);
	js = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &points[i];
		double v[12], pv[9];
		json_t *o = json_pack("{s:s,s:I,s:I,s:s,s:o,s:I,s:I,s:s,s:f}", "kind",
			q->kind == ST_SWEEP ? "sweep" : "mrc", "footprint_bytes",
			(json_int_t)q->want_bytes, "active_functions", (json_int_t)q->nfuncs,
			"dispatch", q->alpha < 0 ? "flat" : "zipf", "zipf_alpha", q->alpha < 0 ?
			json_null() : json_real(q->alpha), "calls_per_request", (json_int_t)q->calls,
			"i1_bytes", (json_int_t)q->i1_bytes, "status", st_status(q), "estimate_s",
			q->eta_s);

		st_plan_row(q, pv);
		for (int c = 0; c < 9; c++)
			json_object_set_new(o, st_plan_cols[c], isfinite(pv[c]) ? json_real(pv[c]) :
				json_null());

		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++)
				json_object_set_new(o, st_cols[c], isfinite(v[c]) ? json_real(v[c]) :
					json_null());
			json_object_set_new(o, "command", json_string(q->sim.cmd));
		} else {
			json_object_set_new(o, "why", json_string(q->why));
		}
		json_array_append_new(js, o);
	}
	{
		char path[4200];
		json_t *o = json_pack("{s:s,s:o,s:o,s:O,s:{s:f,s:f,s:f,s:f},s:{s:I,s:I}}", "command",
			command, "points", js, "host", fm_host_json(), "geometry_notes", notes,
			"library", "functions", m.lib_functions, "copies", m.lib_copies,
			"plan_functions", m.plan_functions, "plan_code_bytes", m.plan_bytes,
			"caches", "i1_bytes", (json_int_t)r.geo.i1.size, "ll_bytes", (json_int_t)r.geo.ll.size);

		snprintf(path, sizeof(path), "%s/study.json", dir);
		if (json_dump_file(o, path, JSON_INDENT(2)) != 0)
			fprintf(stderr, FM_PROG ": cannot write %s\n", path);
		json_decref(o);
	}
	for (size_t i = 0; i < n; i++)
		fm_sim_free(&points[i].sim);
	fm_dis_cache_free(r.dcache);
	fm_rmtree(tmp);
	json_decref(notes);
	free(points);
	printf("study: %zu of %zu points measured, written to %s (summary.md, study.csv%s) in "
		"%s\n", ok, n, dir, plots_ok ? ", plots" : "", fm_dur_str(fm_now() - t0, d1,
		sizeof(d1)));
	return ok ? FM_EXIT_OK : FM_EXIT_RUN;
}
