/* extract_bench.c: frontload-extract-bench: runs the generated extractors the way the leaf
 * does (dispatch plan, stories x calls per request) and prints what one request costs. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "fl_extract.h"
#include "libload.h"
#include "osfile.h"

static const char usage[] =
"usage: frontload-extract-bench [options]\n"
"\n"
"Loads the extractor library, builds a dispatch plan (the table cut to --active-copies\n"
"copies per variant, shuffled with --seed) and runs --requests requests, each calling\n"
"--stories x --calls-per-story generated functions over seeded story bytes. Prints the\n"
"footprint, ns per call and request latency percentiles (µs) after --warmup requests.\n"
"Wall-clock figures: run it on an idle machine; they are not a front-end measurement.\n"
"\n"
"  --lib PATH              extractor library (default: libfrontload-extract.so next to\n"
"                          this program, then ../lib/)\n"
"  --requests N            measured requests (default 200)\n"
"  --warmup N              requests run before measuring (default 20)\n"
"  --stories N             stories per request (default 20)\n"
"  --calls-per-story N     extractor calls per story (default 500)\n"
"  --active-copies N       footprint knob: copies of each variant in the plan, 0 = all\n"
"                          (default 0)\n"
"  --body PCT              share of calls that run the full body, 0..100 (default 100)\n"
"  --hit PCT               lookup hit rate, 0..100 (default 50)\n"
"  --seed S                plan shuffle and story seed (default 1)\n"
"  --help                  this text\n"
"\n"
"exit status: 0 on success, 2 on a bad flag, 1 when the library cannot be used.\n";

#define die(code, fmt, arg) fl_die("frontload-extract-bench", FL_DIE_EXIT, code, fmt, arg)

static uint64_t parse_u64(const char *flag, const char *s, uint64_t hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || *end || end == s || *s == '-' || v > hi) {
		fprintf(stderr, "frontload-extract-bench: %s: expected an integer in 0..%llu, got \"%s\"\n",
			flag, (unsigned long long)hi, s);
		exit(2);
	}
	return v;
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
	const char *lib = NULL;
	uint64_t requests = 200, warmup = 20, stories = 20, per_story = 500, active = 0;
	uint64_t body = 100, hit = 50, seed = 1;
	static const struct option opts[] = {
		{"lib", required_argument, 0, 'l'}, {"requests", required_argument, 0, 'r'},
		{"warmup", required_argument, 0, 'w'}, {"stories", required_argument, 0, 's'},
		{"calls-per-story", required_argument, 0, 'c'},
		{"active-copies", required_argument, 0, 'a'}, {"body", required_argument, 0, 'b'},
		{"hit", required_argument, 0, 'H'}, {"seed", required_argument, 0, 'S'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'r': requests = parse_u64("--requests", optarg, 100000000); break;
		case 'w': warmup = parse_u64("--warmup", optarg, 100000000); break;
		case 's': stories = parse_u64("--stories", optarg, 100000); break;
		case 'c': per_story = parse_u64("--calls-per-story", optarg, 100000000); break;
		case 'a': active = parse_u64("--active-copies", optarg, UINT32_MAX); break;
		case 'b': body = parse_u64("--body", optarg, 100); break;
		case 'H': hit = parse_u64("--hit", optarg, 100); break;
		case 'S': seed = parse_u64("--seed", optarg, UINT64_MAX); break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc)
		die(2, "unexpected argument \"%s\" (see --help)", argv[optind]);
	if (requests == 0 || stories == 0)
		die(2, "%s", "--requests and --stories must be at least 1");

	char err[512];
	struct fl_lib l;
	if (fl_lib_open(&l, lib, err, sizeof(err)))
		die(1, "%s", err);
	const struct fl_fn_entry *tab = l.tab;
	size_t n = l.n;
	struct fl_plan plan;
	if (fl_plan_init(&plan, tab, n, seed, (uint32_t)active, err, sizeof(err)))
		die(1, "plan: %s", err);
	struct fl_ctx *ctx = fl_ctx_init(seed, 64, err, sizeof(err));
	if (!ctx)
		die(1, "context: %s", err);
	if (fl_ctx_set_body(ctx, (uint32_t)(body * 65536 / 100)) ||
	    fl_ctx_set_hit(ctx, (uint32_t)(hit * 65536 / 100), err, sizeof(err)))
		die(1, "context: %s", err);

	uint64_t *lat = malloc(requests * sizeof(*lat));
	uint8_t story[FL_STORY_BYTES];
	uint64_t cursor = 0, x = seed, features = 0, total_ns = 0;
	for (uint64_t r = 0; r < warmup + requests; r++) {
		uint64_t t0 = now_ns();
		fl_ctx_clear_sink(ctx);
		for (uint64_t s = 0; s < stories; s++) {
			for (size_t b = 0; b < sizeof(story); b += 8) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				memcpy(story + b, &x, 8);
			}
			fl_ctx_set_story(ctx, story, sizeof(story));
			cursor = fl_plan_run(&plan, ctx, cursor, per_story);
		}
		uint64_t dt = now_ns() - t0;
		if (r >= warmup) {
			lat[r - warmup] = dt;
			total_ns += dt;
			features += ctx->sink->nsparse;
			for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
				features += ctx->sink->dense[i] != 0;
		}
	}
	qsort(lat, requests, sizeof(*lat), cmp_u64);
	uint64_t calls = requests * stories * per_story;
	printf("library:            %s\n", l.build_info());
	printf("footprint:          %zu functions of %zu (%u of %u copies per variant)\n",
	       fl_plan_footprint(&plan), n, plan.active_copies, plan.copies);
	printf("requests:           %llu measured after %llu warm-up, %llu stories x %llu calls\n",
	       (unsigned long long)requests, (unsigned long long)warmup,
	       (unsigned long long)stories, (unsigned long long)per_story);
	printf("knobs:              body %llu%%, lookup hit %llu%%, seed %llu\n",
	       (unsigned long long)body, (unsigned long long)hit, (unsigned long long)seed);
	printf("ns per call:        %.1f\n", (double)total_ns / (double)calls);
	printf("request latency µs: p50 %.1f  p95 %.1f  p99 %.1f  max %.1f\n",
	       lat[requests / 2] / 1e3, lat[requests * 95 / 100] / 1e3,
	       lat[requests * 99 / 100] / 1e3, lat[requests - 1] / 1e3);
	printf("features per request (non-zero dense slots + sparse): %.1f\n",
	       (double)features / (double)requests);
	free(lat);
	fl_ctx_free(ctx);
	fl_plan_free(&plan);
	fl_lib_close(&l);
	return 0;
}
