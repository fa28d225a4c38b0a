/* cputime_bench.c: ns per read of each per-thread CPU clock method and two references. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "cputime.h"

struct bench_opts {
	long reads;
};

#define FL_CLI_OBJ struct bench_opts
static const struct fl_cli_opt bench_opt_defs[] = {
	FL_OPT_UINT("reads", reads, 1, LONG_MAX, "N", "1000000", "reads per method"),
};
#undef FL_CLI_OBJ
static const struct fl_cli bench_cli = {
	.opts = bench_opt_defs, .nopts = sizeof bench_opt_defs / sizeof bench_opt_defs[0],
};

static uint64_t bench_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reads of one method; the sink keeps the compiler from dropping them. */
enum bench_kind { BENCH_FL_CPUTIME, BENCH_THREAD_CPUTIME, BENCH_MONOTONIC, BENCH_RDTSC };

static double bench_run(enum bench_kind kind, struct fl_cputime *c, long reads)
{
	volatile uint64_t sink = 0;
	uint64_t t0 = bench_mono_ns();

	for (long i = 0; i < reads; i++) {
		switch (kind) {
		case BENCH_FL_CPUTIME:
			sink += fl_cputime_ns(c);
			break;
		case BENCH_THREAD_CPUTIME:
			sink += bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			break;
		case BENCH_MONOTONIC:
			sink += bench_clock_ns(CLOCK_MONOTONIC);
			break;
		case BENCH_RDTSC:
#if defined(__x86_64__)
		{
			uint32_t lo, hi;
			__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
			sink += ((uint64_t)hi << 32) | lo;
		}
#endif
			break;
		}
	}
	(void)sink;
	return (double)(bench_mono_ns() - t0) / (double)reads;
}

static void bench_usage(FILE *f, const char *argv0)
{
	fprintf(f,
	        "usage: %s [--reads N]\n"
	        "Prints ns per read of each per-thread CPU clock method (perf task-clock mmap\n"
	        "page, clock_gettime(CLOCK_THREAD_CPUTIME_ID) via fl_cputime and raw), with\n"
	        "clock_gettime(CLOCK_MONOTONIC) and raw rdtsc for reference.\n"
	        "\n"
	        "Options (numbers are decimal; defaults in brackets):\n",
	        argv0);
	fl_cli_help(f, &bench_cli);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	char err[512];

	int rc = fl_cli_parse(&bench_cli, argc, argv, &o, err, sizeof err);
	if (rc == FL_CLI_HELP) {
		bench_usage(stdout, argv[0]);
		return 0;
	}
	if (rc != 0) {
		fprintf(stderr, "%s: %s (see --help)\n", argv[0], err);
		return 2;
	}
	long reads = o.reads;

	struct fl_cputime c;
	char why[256];

	printf("reads per method: %ld\n", reads);
	if (fl_cputime_open(&c, FL_CPUTIME_PERF_MMAP, why, sizeof why) == 0) {
		bench_run(BENCH_FL_CPUTIME, &c, reads / 10 + 1); /* warm up */
		printf("%-44s %8.1f ns/read\n", "fl_cputime perf-mmap (task-clock page)",
		       bench_run(BENCH_FL_CPUTIME, &c, reads));
	} else {
		printf("%-44s unsupported: %s\n", "fl_cputime perf-mmap (task-clock page)", why);
	}
	fl_cputime_close(&c);

	if (fl_cputime_open(&c, FL_CPUTIME_CLOCK_GETTIME, why, sizeof why) == 0) {
		bench_run(BENCH_FL_CPUTIME, &c, reads / 10 + 1);
		printf("%-44s %8.1f ns/read\n", "fl_cputime clock_gettime (THREAD_CPUTIME)",
		       bench_run(BENCH_FL_CPUTIME, &c, reads));
	} else {
		printf("%-44s unsupported: %s\n", "fl_cputime clock_gettime (THREAD_CPUTIME)", why);
	}
	fl_cputime_close(&c);

	printf("%-44s %8.1f ns/read\n", "raw clock_gettime(CLOCK_THREAD_CPUTIME_ID)",
	       bench_run(BENCH_THREAD_CPUTIME, NULL, reads));
	printf("%-44s %8.1f ns/read\n", "reference clock_gettime(CLOCK_MONOTONIC)",
	       bench_run(BENCH_MONOTONIC, NULL, reads));
#if defined(__x86_64__)
	printf("%-44s %8.1f ns/read\n", "reference rdtsc (raw cycles)",
	       bench_run(BENCH_RDTSC, NULL, reads));
#else
	printf("%-44s unsupported: not x86-64\n", "reference rdtsc (raw cycles)");
#endif
	return 0;
}
