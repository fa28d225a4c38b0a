/* extract_bench.c: frontload-extract-bench: runs the generated extractors the way the leaf
 * does (dispatch plan, stories x calls per request) and prints what one request costs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dispatch.h"
#include "fl_extract.h"
#include "libload.h"
#include "osfile.h"

/* The flags; the percentages stay integers, as the context takes them in 1/65536. */
struct bench_args {
	const char *lib;
	uint64_t requests, warmup, stories, per_story, active, body, hit, seed;
};

#define FL_CLI_OBJ struct bench_args
static const struct fl_cli_opt bench_opts[] = {
	FL_OPT_STR("lib", lib, "PATH", NULL, "extractor library (without it: "
		"libfrontload-extract.so next to this program, then ../lib/)"),
	FL_OPT_UINT("requests", requests, 1, 100000000, "N", "200", "measured requests"),
	FL_OPT_UINT("warmup", warmup, 0, 100000000, "N", "20", "requests run before "
		"measuring"),
	FL_OPT_UINT("stories", stories, 1, 100000, "N", "20", "stories per request"),
	FL_OPT_UINT("calls-per-story", per_story, 0, 100000000, "N", "500", "extractor calls "
		"per story"),
	FL_OPT_UINT("active-copies", active, 0, UINT32_MAX, "N", "0", "footprint knob: copies "
		"of each variant in the plan, 0 = all"),
	FL_OPT_UINT("body", body, 0, 100, "PCT", "100", "share of calls that run the full "
		"body, in percent"),
	FL_OPT_UINT("hit", hit, 0, 100, "PCT", "50", "lookup hit rate, in percent"),
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "plan shuffle and story seed"),
};
#undef FL_CLI_OBJ
static const struct fl_cli bench_cli = {
	.opts = bench_opts, .nopts = sizeof(bench_opts) / sizeof(bench_opts[0]),
};

static const char usage_head[] =
"usage: frontload-extract-bench [options]\n"
"\n"
"Loads the extractor library, builds a dispatch plan (the table cut to --active-copies\n"
"copies per variant, shuffled with --seed) and runs --requests requests, each calling\n"
"--stories x --calls-per-story generated functions over seeded story bytes. Prints the\n"
"footprint, ns per call and request latency percentiles (µs) after --warmup requests.\n"
"Wall-clock figures: run it on an idle machine; they are not a front-end measurement.\n"
"\n"
"options (defaults in brackets):\n";

static const char usage_tail[] =
"\n"
"exit status: 0 on success, 2 on a bad flag, 1 when the library cannot be used.\n";

#define die(code, fmt, arg) fl_die("frontload-extract-bench", FL_DIE_EXIT, code, fmt, arg)

static void usage(FILE *fp)
{
	fputs(usage_head, fp);
	fl_cli_help(fp, &bench_cli);
	fputs(usage_tail, fp);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	char err[512];
	memset(&a, 0, sizeof(a));
	int prc = fl_cli_parse(&bench_cli, argc, argv, &a, err, sizeof(err));
	if (prc == FL_CLI_HELP) {
		usage(stdout);
		return 0;
	}
	if (prc != 0)
		die(2, "%s (see --help)", err);

	struct fl_lib l;
	if (fl_lib_open(&l, a.lib, err, sizeof(err)))
		die(1, "%s", err);
	const struct fl_fn_entry *tab = l.tab;
	size_t n = l.n;
	struct fl_plan plan;
	if (fl_plan_init(&plan, tab, n, a.seed, (uint32_t)a.active, err, sizeof(err)))
		die(1, "plan: %s", err);
	struct fl_ctx *ctx = fl_ctx_init(a.seed, 64, err, sizeof(err));
	if (!ctx)
		die(1, "context: %s", err);
	if (fl_ctx_set_body(ctx, (uint32_t)(a.body * 65536 / 100)) ||
	    fl_ctx_set_hit(ctx, (uint32_t)(a.hit * 65536 / 100), err, sizeof(err)))
		die(1, "context: %s", err);

	uint64_t *lat = malloc(a.requests * sizeof(*lat));
	uint8_t story[FL_STORY_BYTES];
	uint64_t cursor = 0, x = a.seed, features = 0, total_ns = 0;
	for (uint64_t r = 0; r < a.warmup + a.requests; r++) {
		uint64_t t0 = now_ns();
		fl_ctx_clear_sink(ctx);
		for (uint64_t s = 0; s < a.stories; s++) {
			for (size_t b = 0; b < sizeof(story); b += 8) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				memcpy(story + b, &x, 8);
			}
			fl_ctx_set_story(ctx, story, sizeof(story));
			cursor = fl_plan_run(&plan, ctx, cursor, a.per_story);
		}
		uint64_t dt = now_ns() - t0;
		if (r >= a.warmup) {
			lat[r - a.warmup] = dt;
			total_ns += dt;
			features += ctx->sink->nsparse;
			for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
				features += ctx->sink->dense[i] != 0;
		}
	}
	qsort(lat, a.requests, sizeof(*lat), cmp_u64);
	uint64_t calls = a.requests * a.stories * a.per_story;
	printf("library:            %s\n", l.build_info());
	printf("footprint:          %zu functions of %zu (%u of %u copies per variant)\n",
	       fl_plan_footprint(&plan), n, plan.active_copies, plan.copies);
	printf("requests:           %llu measured after %llu warm-up, %llu stories x %llu calls\n",
	       (unsigned long long)a.requests, (unsigned long long)a.warmup,
	       (unsigned long long)a.stories, (unsigned long long)a.per_story);
	printf("knobs:              body %llu%%, lookup hit %llu%%, seed %llu\n",
	       (unsigned long long)a.body, (unsigned long long)a.hit, (unsigned long long)a.seed);
	printf("ns per call:        %.1f\n", (double)total_ns / (double)calls);
	printf("request latency µs: p50 %.1f  p95 %.1f  p99 %.1f  max %.1f\n",
	       lat[a.requests / 2] / 1e3, lat[a.requests * 95 / 100] / 1e3,
	       lat[a.requests * 99 / 100] / 1e3, lat[a.requests - 1] / 1e3);
	printf("features per request (non-zero dense slots + sparse): %.1f\n",
	       (double)features / (double)a.requests);
	free(lat);
	fl_ctx_free(ctx);
	fl_plan_free(&plan);
	fl_lib_close(&l);
	return 0;
}
