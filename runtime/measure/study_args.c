/* study_args.c: frontload-measure study's options: the flag table, --help, and the
 * parsing of its lists and byte counts; separate from the study's points and run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "margs.h"
#include "mutil.h"
#include "study.h"

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
	FL_OPT_UINT("requests", requests, 1, 100000, "N", "2", "measured requests per point, "
		"1..100000"),
	FL_OPT_UINT("warmup", warmup, 0, 100000, "N", "1", "warmup requests per point, "
		"0..100000"),
	FL_OPT_STR("mrc-footprint", mrc_text, "BYTES", "1M", "executed code bytes of the "
		"miss-ratio curves, 1..1T (suffix K, M, G, T: x 1024)", .section = "miss-ratio "
		"curves"),
	FL_OPT_UINT("mrc-calls", mrc_calls, 1, 100000000, "N", "10000", "calls per request "
		"of the curves, 1..1e8"),
	FL_OPT_STR("mrc-sizes", sizes_text, "LIST", "8,16,32,64,128,256,512,1024,2048,4096",
		"I1 sizes in KiB, 1..1e9, fitted to what valgrind can simulate"),
	FL_OPT_FLAG("no-mrc", no_mrc, "skip the curves"),
	FL_OPT_STR("leaf-footprints", leaf_text, "LIST", NULL, "headline footprints also "
		"measured on the running leaf (validate --simulate: mock, leaf and driver, the "
		"leaf under callgrind), bytes 1..1T (suffix K, M, G, T: x 1024), each moved to the "
		"nearest swept "
		"footprint; at the first --calls value (the leaf gets --extractors-per-story "
		"round(calls / 16), the driver's 16 stories) and every order (default: the I1 "
		"and LL sizes of the geometry)", .section = "the running leaf"),
	FL_OPT_UINT("leaf-requests", leaf_requests, 1, 1000, "N", "3", "requests in a leaf "
		"point's simulated window (validate --sim-requests), 1..1000"),
	FL_OPT_FLAG("no-leaf", no_leaf, "no leaf points: the harness only"),
	FL_OPT_UINT("jobs", jobs, 1, 64, "N", NULL, "simulations at once, 1..64 (default: the "
		"CPUs)",
		.section = "run"),
	FL_OPT_REAL("budget-min", budget_min, 0.1, 100000, "M", "25", "estimated wall-time "
		"budget in minutes: points are dropped, most expensive first, until the estimate "
		"fits; dropped points are listed as skipped with their estimate"),
	FM_GEO_CLI_OPTS("simulated geometry"),
	FL_OPT_STR("shard", shard_text, "K/N", NULL, "measure only this host's share of the "
		"plan: the points whose index modulo N is K (0 <= K < N <= 64); the others are "
		"listed as skipped. study.json records the shard, the host and the CPU model for "
		"--merge", .section = "a fleet (runtime/deploy/study.yml runs both)"),
	FL_OPT_STR("merge", merge_text, "DIR,...", NULL, "measure nothing: merge the shards' "
		"directories (each with its study.json) into one report in --out, grouped by the "
		"simulated CPU model (--cpu and cache sizes), each point tagged with the host that "
		"measured it and that host's CPU; with two or more models, a side-by-side table. "
		"Takes only --out and --quiet; exit 1 when a point of some model was measured by "
		"no shard (the files are still written)"),
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
"dropped and listed. Headline points (--leaf-footprints) are measured twice: the\n"
"extraction alone (frontload-simreq, the harness) and the running leaf (validate\n"
"--simulate: mock, leaf and driver, the whole leaf process under callgrind, its\n"
"simulated window of whole requests), side by side in the report.\n"
"\n"
"Writes DIR/study.csv (one row per point), DIR/study.json, DIR/summary.md (the exact\n"
"command, host, build configuration, geometry, tables, skipped points, limits; the plots\n"
"embedded, under each a reading computed from the measured points, and the published\n"
"anchors with their sources), DIR/report.html (summary.md as one self-contained HTML\n"
"page, the SVG plots inline) and gnuplot plots as PNG (pngcairo) and SVG:\n"
"mpki_vs_footprint (L1i and LL code MPKI, the I1 and LL sizes marked), mpki_vs_calls,\n"
"mrc, plus the script study.gp.\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &st_cli);
	fputs(
"cost: per point (min(functions, (warmup + requests) x calls) + 3000) functions x 1.2 ms\n"
"of translation + native time x 50, the native time a call from short native runs of\n"
"the whole plan and of a 64-function plan (between the two by log(functions)); a leaf\n"
"point 30 s + its translation + (3.5 + --leaf-requests) x 4 x ((calls x native time a\n"
"call + 6 ms) x 50 + 150 ms): validate's simulated rate is a quarter of one request's\n"
"time alone. The estimate is printed before starting, with a progress line per finished\n"
"point.\n"
"--active-copies is forwarded (the coarse knob: the footprint is drawn from those copies);\n"
"the study sets --active-functions, --footprint-bytes, --dispatch and --zipf-alpha.\n"
"\n", fp);
	fputs("limits: those of the simulated path (validate --help): no prefetcher, op cache or\n"
"iTLB, LRU, inclusive LL, a simple branch model, no timing.\n"
"\ninterrupt and resume: each finished point is kept in DIR/points/ with its key (the\n"
"point, requests, warm-up, knobs, geometry and build). SIGINT or SIGTERM stops the running\n"
"points, writes the report with what finished (status \"interrupted\" in study.json) and\n"
"exits 128 + the signal. The same command resumes: points whose key matches are kept,\n"
"the rest measured (without --out, the newest interrupted results/study-* of the same\n"
"command is resumed).\n"
"\nexit status: 0 written (some points may have failed: see summary.md), 1 no point\n"
"could run or the output cannot be written, 2 usage error, 130 / 143 interrupted by\n"
"SIGINT / SIGTERM (the finished points written).\n", fp);
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

int st_parse(int argc, char **argv, struct st_args *a, struct fm_run *r)
{
	st_defaults(a);
	a->run = r;
	if (fm_cli_parse(&st_cli, argc, argv, a, study_usage) != 0)
		return -1;
	a->bytes_given = a->bytes_text != NULL;
	if ((a->bytes_text && parse_list("footprint", a->bytes_text, 1, a->bytes, &a->nbytes)) ||
	    parse_list("alphas", a->alphas_text, 2, a->alphas, &a->nalphas) ||
	    parse_list("calls", a->calls_text, 0, a->calls, &a->ncalls) ||
	    parse_list("mrc-sizes", a->sizes_text, 0, a->sizes_kib, &a->nsizes) ||
	    (a->leaf_text && parse_list("leaf-footprints", a->leaf_text, 1, a->leaf_bytes,
	    &a->nleaf)))
		return -1;
	a->shard_n = 1;
	if (a->shard_text) {
		unsigned k, nn;
		int used = 0;

		if (sscanf(a->shard_text, "%u/%u%n", &k, &nn, &used) != 2 ||
		    a->shard_text[used] != '\0' || nn == 0 || nn > 64 || k >= nn) {
			fprintf(stderr, FM_PROG ": --shard: expected K/N with 0 <= K < N <= 64, got "
				"\"%s\"\n", a->shard_text);
			return -1;
		}
		a->shard_k = k;
		a->shard_n = nn;
	}
	if (a->merge_text && a->shard_text) {
		fprintf(stderr, FM_PROG ": --merge and --shard: give one (a merge measures "
			"nothing)\n");
		return -1;
	}
	if (a->merge_text && a->out == NULL) {
		fprintf(stderr, FM_PROG ": --merge needs --out DIR (where the merged report "
			"goes)\n");
		return -1;
	}
	if (a->leaf_text && a->no_leaf) {
		fprintf(stderr, FM_PROG ": --leaf-footprints and --no-leaf: give one\n");
		return -1;
	}
	if (st_bytes(a->mrc_text, &a->mrc_bytes) != 0 || a->mrc_bytes == 0 ||
	    a->mrc_bytes > ST_MAX_FOOTPRINT) {
		fprintf(stderr, FM_PROG ": --mrc-footprint: expected bytes 1..1T, got \"%s\"\n",
			a->mrc_text);
		return -1;
	}
	return 0;
}
