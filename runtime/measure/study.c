/* study.c: frontload-measure study: footprint x calls sweep and an L1i miss-ratio curve. */
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

#include "measure.h"
#include "osfile.h"
#include "process.h"

#define ST_MAX_LIST 32
#define ST_MAX_POINTS 256

enum { ST_SWEEP, ST_MRC };

/* One simulated point. */
struct st_point {
	int kind;                /* ST_SWEEP or ST_MRC */
	uint64_t copies;         /* --active-copies asked */
	uint64_t calls;          /* --calls-per-request */
	unsigned i1_bytes;       /* I1 size of this run */
	double plan_functions;   /* footprint (functions) expected from the library */
	double eta_s;
	int skipped;             /* 1: over budget; 2: duplicate of another point */
	int done, failed;
	char why[2048];
	struct fm_run run;
	char tag[64], cs[32], cps[32];
	struct fm_sim_job job;
	struct fm_sim sim;
};

/* What study parsed. */
struct st_args {
	uint64_t copies[ST_MAX_LIST], calls[ST_MAX_LIST], sizes_kib[ST_MAX_LIST];
	size_t ncopies, ncalls, nsizes;
	uint64_t mrc_copies, mrc_calls, jobs, requests, warmup;
	double budget_min;
	int no_mrc, quiet;
	const char *cpu, *i1, *d1, *ll, *out;
};

enum {
	SO_COPIES = 1, SO_CALLS, SO_MRC_COPIES, SO_MRC_CALLS, SO_MRC_SIZES, SO_NO_MRC, SO_JOBS,
	SO_REQUESTS, SO_WARMUP, SO_BUDGET, SO_CPU, SO_I1, SO_D1, SO_LL, SO_OUT, SO_QUIET, SO_HELP,
};

static const struct fm_opt st_opts[] = {
	{ "copies", 1, SO_COPIES }, { "calls", 1, SO_CALLS }, { "mrc-copies", 1, SO_MRC_COPIES },
	{ "mrc-calls", 1, SO_MRC_CALLS }, { "mrc-sizes", 1, SO_MRC_SIZES },
	{ "no-mrc", 0, SO_NO_MRC }, { "jobs", 1, SO_JOBS }, { "requests", 1, SO_REQUESTS },
	{ "warmup", 1, SO_WARMUP }, { "budget-min", 1, SO_BUDGET }, { "cpu", 1, SO_CPU },
	{ "i1", 1, SO_I1 }, { "d1", 1, SO_D1 }, { "ll", 1, SO_LL }, { "out", 1, SO_OUT },
	{ "quiet", 0, SO_QUIET }, { "help", 0, SO_HELP }, { NULL, 0, 0 },
};

static void study_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " study [options] [simreq knobs]\n"
"\n"
"Sweeps the active footprint (--active-copies: copies of each of the library's ~699\n"
"variants in the plan) and the extractor calls per request, and at each point measures\n"
"L1i MPKI, LL code MPKI, branch MPKI and the instruction mix with the simulated path\n"
"(valgrind callgrind, as in validate --simulate). Then an L1i miss-ratio curve: L1i MPKI\n"
"over I1 sizes at one footprint (one callgrind run per size, cache totals only; ways\n"
"and line as the CPU model's L1i). Points with more copies than the library holds are\n"
"capped by the plan (duplicates are dropped and listed).\n"
"\n"
"Writes DIR/study.csv (one row per point), DIR/study.json, DIR/summary.md (the exact\n"
"command, host, build configuration, geometry, tables, skipped points, limits) and\n"
"gnuplot plots as PNG (pngcairo) and SVG: mpki_vs_footprint, mpki_vs_calls, mrc, plus\n"
"the script study.gp.\n"
"\n"
"  --copies LIST              active copies to sweep [1,10,100,1000]\n"
"  --calls LIST               calls per request to sweep [10000,100000,500000]\n"
"  --mrc-copies N             footprint of the miss-ratio curve [2: ~1400 functions, about\n"
"                             1.5 MB of code, so the plan is re-walked within a request and\n"
"                             the curve shows where the code fits]\n"
"  --mrc-calls N              calls per request of the curve [10000]\n"
"  --mrc-sizes LIST           I1 sizes in KiB [8,16,32,64,128,256,512,1024,2048,4096]\n"
"  --no-mrc                   skip the curve\n"
"  --requests N, --warmup N   measured and warmup requests per point [2, 1]\n"
"  --jobs N                   simulations at once [CPUs]\n"
"  --budget-min M             estimated wall-time budget in minutes [25]: points are\n"
"                             dropped, most expensive first, until the estimate fits;\n"
"                             dropped points are listed as skipped with their estimate\n"
"  --cpu MODEL                cache model (zen4, zen5, golden-cove, neoverse-v2) [zen4];\n"
"                             --i1/--d1/--ll S,A,L override a level (see validate --help)\n"
"  --out DIR                  output directory [results/study-<YYYYmmdd-HHMMSS>, relative\n"
"                             to the current directory]\n"
"  --quiet                    no progress lines\n"
"cost: per point (min(footprint, (warmup + requests) x calls) + 3000) functions x 1.2 ms\n"
"of translation + native time x 50, the native time from two short native runs; the\n"
"estimate is printed before starting, with a progress line per finished point.\n"
"\n", fp);
	fm_knobs_usage(fp);
	fputs("\nlimits: those of the simulated path (validate --help): no prefetcher, op cache or\n"
"iTLB, LRU, inclusive LL, a simple branch model, no timing.\n"
"\nexit status: 0 written (some points may have failed: see summary.md), 1 no point\n"
"could run or the output cannot be written, 2 usage error.\n", fp);
}

static int parse_list(const char *flag, const char *s, uint64_t *out, size_t *n)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == ST_MAX_LIST) {
			fprintf(stderr, FM_PROG ": --%s: at most %d values\n", flag, ST_MAX_LIST);
			return -1;
		}
		if (fm_parse_u64(flag, t, 1, 1000000000, &out[(*n)++]) != 0)
			return -1;
	}
	if (*n == 0) {
		fprintf(stderr, FM_PROG ": --%s: empty list\n", flag);
		return -1;
	}
	return 0;
}

static int st_parse(int argc, char **argv, struct st_args *a, struct fm_run *r)
{
	static const uint64_t copies[] = { 1, 10, 100, 1000 };
	static const uint64_t calls[] = { 10000, 100000, 500000 };
	static const uint64_t sizes[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096 };
	int i = 1, id, rc;
	const char *v, *knob;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(a, 0, sizeof(*a));
	memcpy(a->copies, copies, sizeof(copies));
	a->ncopies = sizeof(copies) / sizeof(copies[0]);
	memcpy(a->calls, calls, sizeof(calls));
	a->ncalls = sizeof(calls) / sizeof(calls[0]);
	memcpy(a->sizes_kib, sizes, sizeof(sizes));
	a->nsizes = sizeof(sizes) / sizeof(sizes[0]);
	a->mrc_copies = 2;
	a->mrc_calls = 10000;
	a->jobs = ncpu > 0 ? (uint64_t)ncpu : 1;
	a->requests = 2;
	a->warmup = 1;
	a->budget_min = 25;
	a->cpu = "zen4";
	while ((rc = fm_args_next(argc, argv, &i, st_opts, &id, &v, &knob)) > 0) {
		switch (id) {
		case SO_HELP: study_usage(stdout); exit(FM_EXIT_OK);
		case SO_COPIES:
			if (parse_list("copies", v, a->copies, &a->ncopies) != 0)
				return -1;
			break;
		case SO_CALLS:
			if (parse_list("calls", v, a->calls, &a->ncalls) != 0)
				return -1;
			break;
		case SO_MRC_SIZES:
			if (parse_list("mrc-sizes", v, a->sizes_kib, &a->nsizes) != 0)
				return -1;
			break;
		case SO_MRC_COPIES:
			if (fm_parse_u64("mrc-copies", v, 1, 100000, &a->mrc_copies) != 0)
				return -1;
			break;
		case SO_MRC_CALLS:
			if (fm_parse_u64("mrc-calls", v, 1, 100000000, &a->mrc_calls) != 0)
				return -1;
			break;
		case SO_NO_MRC: a->no_mrc = 1; break;
		case SO_JOBS:
			if (fm_parse_u64("jobs", v, 1, 64, &a->jobs) != 0)
				return -1;
			break;
		case SO_REQUESTS:
			if (fm_parse_u64("requests", v, 1, 100000, &a->requests) != 0)
				return -1;
			break;
		case SO_WARMUP:
			if (fm_parse_u64("warmup", v, 0, 100000, &a->warmup) != 0)
				return -1;
			break;
		case SO_BUDGET:
			if (fm_parse_f64("budget-min", v, 0.1, 100000, &a->budget_min) != 0)
				return -1;
			break;
		case SO_CPU: a->cpu = v; break;
		case SO_I1: a->i1 = v; break;
		case SO_D1: a->d1 = v; break;
		case SO_LL: a->ll = v; break;
		case SO_OUT: a->out = v; break;
		case SO_QUIET: a->quiet = 1; break;
		case FM_OPT_KNOB:
			if (strcmp(knob, "active-copies") == 0 ||
			    strcmp(knob, "calls-per-request") == 0 ||
			    strcmp(knob, "extractors-per-story") == 0) {
				fprintf(stderr, FM_PROG ": study sets --%s itself (use --copies, "
					"--calls)\n", knob);
				return -1;
			}
			if (fm_run_knob(r, knob, v) != 0) {
				fprintf(stderr, FM_PROG ": too many knobs\n");
				return -1;
			}
			break;
		}
	}
	return rc < 0 ? -1 : 0;
}

/* Native cost model: seconds = base + per_call x calls x requests, and the library size. */
struct st_model {
	double base_s, per_call_s;
	double lib_functions, lib_copies;
};

static int st_model(const struct fm_run *r0, const struct st_args *a, struct st_model *m)
{
	struct fm_run r = *r0;
	struct fm_native lo, hi;
	char err[2048];
	r.tag = "model-lo";
	r.warmup = 0;
	r.requests = 2;
	fm_run_knob(&r, "calls-per-request", "1000");
	if (fm_native_run(&r, &lo, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	r = *r0;
	r.tag = "model-hi";
	r.warmup = 0;
	r.requests = 2;
	fm_run_knob(&r, "calls-per-request", "50000");
	if (fm_native_run(&r, &hi, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		fm_native_free(&lo);
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
	(void)a;
	fm_native_free(&lo);
	fm_native_free(&hi);
	return 0;
}

static double st_plan(const struct st_model *m, uint64_t copies)
{
	double c = (double)copies < m->lib_copies ? (double)copies : m->lib_copies;

	return m->lib_functions / m->lib_copies * c;
}

/* Build the point list with estimates; drop duplicates and what exceeds the budget. */
static size_t st_points(const struct st_args *a, const struct fm_run *r0,
	const struct st_model *m, struct st_point *p, double *total_s)
{
	size_t n = 0;

	for (size_t i = 0; i < a->ncopies; i++) {
		for (size_t j = 0; j < a->ncalls && n < ST_MAX_POINTS; j++) {
			struct st_point *q = &p[n++];

			memset(q, 0, sizeof(*q));
			q->kind = ST_SWEEP;
			q->copies = a->copies[i];
			q->calls = a->calls[j];
			q->i1_bytes = r0->i1.size;
			q->plan_functions = st_plan(m, q->copies);
			for (size_t k = 0; k + 1 < n; k++)
				if (p[k].kind == ST_SWEEP && p[k].calls == q->calls &&
				    p[k].plan_functions == q->plan_functions && !p[k].skipped) {
					q->skipped = 2;
					snprintf(q->why, sizeof(q->why), "same plan as --copies %llu (the "
						"library has %.0f copies)", (unsigned long long)p[k].copies,
						m->lib_copies);
				}
		}
	}
	for (size_t i = 0; !a->no_mrc && i < a->nsizes && n < ST_MAX_POINTS; i++) {
		struct st_point *q = &p[n++];

		memset(q, 0, sizeof(*q));
		q->kind = ST_MRC;
		q->copies = a->mrc_copies;
		q->calls = a->mrc_calls;
		q->i1_bytes = (unsigned)(a->sizes_kib[i] * 1024);
		q->plan_functions = st_plan(m, q->copies);
	}
	for (size_t i = 0; i < n; i++) {
		struct st_point *q = &p[i];
		double native = m->base_s + m->per_call_s * (double)q->calls *
			(double)(a->warmup + a->requests);

		q->eta_s = fm_sim_eta(native, q->plan_functions, (double)q->calls, a->warmup,
			a->requests);
		/* Mix runs also disassemble and join: about a fifth more. */
		if (q->kind == ST_SWEEP)
			q->eta_s *= 1.2;
	}
	/* Fit the budget: drop the most expensive sweep points first (the curve is cheap). */
	for (;;) {
		double sum = 0;
		size_t worst = n;

		for (size_t i = 0; i < n; i++) {
			if (p[i].skipped)
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
	return n;
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
	q->run.i1.size = q->i1_bytes;
	snprintf(q->cs, sizeof(q->cs), "%llu", (unsigned long long)q->copies);
	snprintf(q->cps, sizeof(q->cps), "%llu", (unsigned long long)q->calls);
	fm_run_knob(&q->run, "active-copies", q->cs);
	fm_run_knob(&q->run, "calls-per-request", q->cps);
	if (q->kind == ST_MRC) {
		struct fm_cache want = q->run.i1, got;
		char note[256];

		if (fm_cache_fit(&want, &got, note, sizeof(note)) != 0) {
			q->failed = 1;
			snprintf(q->why, sizeof(q->why), "%s", note);
			return -1;
		}
		q->run.i1 = got;
		q->i1_bytes = got.size;
	}
	if (fm_sim_start(&q->run, &q->job, err, sizeof(err)) != 0) {
		q->failed = 1;
		snprintf(q->why, sizeof(q->why), "%s", err);
		return -1;
	}
	return 0;
}

static void point_label(const struct st_point *q, char *buf, size_t len)
{
	if (q->kind == ST_SWEEP)
		snprintf(buf, len, "copies %llu (%.0f functions), %llu calls/request",
			(unsigned long long)q->copies, q->plan_functions, (unsigned long long)q->calls);
	else
		snprintf(buf, len, "miss-ratio curve: I1 %u KiB", q->i1_bytes / 1024);
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
		todo += !p[i].skipped;
	while (finished < todo) {
		while (running < a->jobs && next < n) {
			struct st_point *q = &p[next];
			int idx = (int)next++;

			if (q->skipped)
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

static int st_write_csv(const char *dir, const struct st_point *p, size_t n)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.csv", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "kind,active_copies,plan_functions,calls_per_request,i1_bytes,status");
	for (int c = 0; c < 12; c++)
		fprintf(fp, ",%s", st_cols[c]);
	fprintf(fp, ",sim_wall_s,estimate_s\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[12];

		fprintf(fp, "%s,%llu,%.0f,%llu,%u,%s", q->kind == ST_SWEEP ? "sweep" : "mrc",
			(unsigned long long)q->copies, q->plan_functions,
			(unsigned long long)q->calls, q->i1_bytes,
			q->done ? "ok" : q->skipped ? "skipped" : "failed");
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

/* Some measured point of kind (with copies / calls when nonzero). */
static int st_has(const struct st_point *p, size_t n, int kind, uint64_t copies,
	uint64_t calls)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].done && p[i].kind == kind && (!copies || p[i].copies == copies) &&
		    (!calls || p[i].calls == calls))
			return 1;
	return 0;
}

/* gnuplot script and data blocks; runs gnuplot. Returns 0, or -1 (gnuplot failed). */
static int st_plots(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const char *cpu_i1)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.gp", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# study.gp: plots of study.csv (written by " FM_PROG " study)\n"
		"set datafile separator ','\nset key outside right top\nset grid\n"
		"set ylabel 'L1i MPKI (simulated, %s)'\n", cpu_i1);
	/* One series per calls value (vs footprint) and per copies value (vs calls). */
	static const char *const terms[2][2] = {
		{ "pngcairo size 900,560 font ',10'", "png" }, { "svg size 900,560", "svg" },
	};
	for (int t = 0; t < 2; t++) {
		fprintf(fp, "\nset terminal %s\n", terms[t][0]);
		fprintf(fp, "set output 'mpki_vs_footprint.%s'\nset logscale x\n"
			"set xlabel 'active footprint (functions in the plan)'\n"
			"set title 'L1i MPKI vs footprint'\nplot ", terms[t][1]);
		int first = 1;
		for (size_t j = 0; j < a->ncalls; j++) {
			if (!st_has(p, n, ST_SWEEP, 0, a->calls[j]))
				continue;
			fprintf(fp, "%s'study.csv' using (strcol(6) eq \"ok\" && strcol(1) eq "
				"\"sweep\" && $4 == %llu ? $3 : 1/0):7 with linespoints title "
				"'%llu calls/request'", first ? "" : ", ",
				(unsigned long long)a->calls[j], (unsigned long long)a->calls[j]);
			first = 0;
		}
		if (first)
			fprintf(fp, "NaN notitle");
		fprintf(fp, "\nset output 'mpki_vs_calls.%s'\n"
			"set xlabel 'extractor calls per request'\n"
			"set title 'L1i MPKI vs calls per request'\nplot ", terms[t][1]);
		first = 1;
		for (size_t i = 0; i < a->ncopies; i++) {
			if (!st_has(p, n, ST_SWEEP, a->copies[i], 0))
				continue;
			fprintf(fp, "%s'study.csv' using (strcol(6) eq \"ok\" && strcol(1) eq "
				"\"sweep\" && $2 == %llu ? $4 : 1/0):7 with linespoints title "
				"'%llu copies'", first ? "" : ", ", (unsigned long long)a->copies[i],
				(unsigned long long)a->copies[i]);
			first = 0;
		}
		if (first)
			fprintf(fp, "NaN notitle");
		if (!a->no_mrc && st_has(p, n, ST_MRC, 0, 0))
			fprintf(fp, "\nset output 'mrc.%s'\nset logscale x 2\n"
				"set xlabel 'I1 size (KiB)'\nset title 'L1i miss-ratio curve: %llu "
				"copies, %llu calls/request'\nplot 'study.csv' using (strcol(6) eq \"ok\" "
				"&& strcol(1) eq \"mrc\" ? $5/1024 : 1/0):7 with linespoints title "
				"'L1i MPKI'\n"
				"unset logscale x\n", terms[t][1], (unsigned long long)a->mrc_copies,
				(unsigned long long)a->mrc_calls);
		fprintf(fp, "\nunset logscale x\n");
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
		fprintf(fp, "Build: configure %s (copies %lld, seed %lld); library %.0f functions, "
			"%.0f copies of each variant.\n",
			json_string_length(json_object_get(build, "configure_args")) ?
			json_string_value(json_object_get(build, "configure_args")) : "(defaults)",
			(long long)json_integer_value(json_object_get(build, "copies")),
			(long long)json_integer_value(json_object_get(build, "seed")),
			m->lib_functions, m->lib_copies);
	else
		fprintf(fp, "Build: config.json not found beside " FM_PROG "; library %.0f "
			"functions, %.0f copies.\n", m->lib_functions, m->lib_copies);
	fprintf(fp, "Path: simulated (valgrind 3.19 callgrind, --cache-sim=yes; sweep points also "
		"--branch-sim=yes --dump-instr=yes --collect-jumps=yes and objdump classes).\n");
	fprintf(fp, "Geometry (%s): I1 %s, D1 %s, LL %s.\n", a->cpu,
		fm_cache_str(&r0->i1, g1, sizeof(g1)), fm_cache_str(&r0->d1, g2, sizeof(g2)),
		fm_cache_str(&r0->ll, g3, sizeof(g3)));
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

	fprintf(fp, "## Footprint x calls per request\n\n");
	fprintf(fp, "| copies | functions | calls/req | L1i MPKI | LL code MPKI | cond br MPKI | "
		"ind br MPKI | cond br %% | taken %% | call+ret %% | ld+st %% | scalar FP %% | "
		"div %% | insns/taken br | instructions/request | status |\n");
	fprintf(fp, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[12];

		if (q->kind != ST_SWEEP)
			continue;
		fprintf(fp, "| %llu | %.0f | %llu |", (unsigned long long)q->copies,
			q->plan_functions, (unsigned long long)q->calls);
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
			fprintf(fp, " %s: %s |\n", q->skipped ? "skipped" : "failed", q->why);
		}
	}
	if (!a->no_mrc) {
		fprintf(fp, "\n## L1i miss-ratio curve (%llu copies, %llu calls/request, I1 %u-way "
			"%u B lines)\n\n| I1 | L1i MPKI | status |\n|---:|---:|---|\n",
			(unsigned long long)a->mrc_copies, (unsigned long long)a->mrc_calls,
			r0->i1.assoc, r0->i1.line);
		for (size_t i = 0; i < n; i++) {
			const struct st_point *q = &p[i];

			if (q->kind != ST_MRC)
				continue;
			fprintf(fp, "| %u KiB | ", q->i1_bytes / 1024);
			if (q->done)
				md_num(fp, q->sim.mix.l1i_mpki.available ?
					q->sim.mix.l1i_mpki.value : NAN, "%.2f");
			else
				fputs("-", fp);
			fprintf(fp, " | %s |\n", q->done ? "ok" : q->why);
		}
	}
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
	if (fm_geometry(&r, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
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
		fprintf(stderr, FM_PROG ": native cost model (two short native runs)\n");
	if (st_model(&r, &a, &m) != 0) {
		fm_dis_cache_free(r.dcache);
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	n = st_points(&a, &r, &m, points, &total_s);
	if (!a.quiet) {
		fprintf(stderr, FM_PROG ": library %.0f functions (%.0f copies); native %.2f us per "
			"extractor call; %zu points, estimated %s with %llu jobs (budget %g min)\n",
			m.lib_functions, m.lib_copies, m.per_call_s * 1e6, n,
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

		fm_cache_str(&r.i1, i1, sizeof(i1));
		char lab[128];
		snprintf(lab, sizeof(lab), "%s, I1 %s", a.cpu, i1);
		plots_ok = st_plots(dir, points, n, &a, lab) == 0;
	}
	if (!plots_ok)
		fprintf(stderr, FM_PROG ": gnuplot failed (see %s/gnuplot.log)\n", dir);
	st_write_summary(dir, points, n, &a, &r, notes, command, total_s, fm_now() - t0, &m,
		plots_ok);
	js = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &points[i];
		double v[12];
		json_t *o = json_pack("{s:s,s:I,s:f,s:I,s:I,s:s,s:f}", "kind", q->kind == ST_SWEEP ?
			"sweep" : "mrc", "active_copies", (json_int_t)q->copies, "plan_functions",
			q->plan_functions, "calls_per_request", (json_int_t)q->calls, "i1_bytes",
			(json_int_t)q->i1_bytes, "status", q->done ? "ok" : q->skipped ? "skipped" :
			"failed", "estimate_s", q->eta_s);

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
		json_t *o = json_pack("{s:s,s:o,s:o,s:O}", "command", command, "points", js, "host",
			fm_host_json(), "geometry_notes", notes);

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
