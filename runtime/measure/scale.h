/* scale.h: what the files of frontload-measure scale share (private to them): the parsed
 * options, one configuration of the grid, and the calls between the run (scale.c) and the
 * report (scale_report.c). */
#ifndef FL_SCALE_H
#define FL_SCALE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SC_MAX_LIST 16
#define SC_MAX_CONFIGS 256
#define SC_FILL 0              /* a --ranker-threads entry: the instance's CPUs */

/* What scale parsed. */
struct sc_args {
	uint64_t instances[SC_MAX_LIST], threads[SC_MAX_LIST];
	size_t ninstances, nthreads;
	const char *instances_text, *threads_text, *run_args, *leaf_args, *out;
	int quick, quiet;
	uint64_t cpus;             /* the host's online CPUs */
};

/* One configuration: instances x ranker threads each, and what its run measured. */
struct sc_config {
	uint64_t instances, threads;   /* threads: per instance (SC_FILL resolved) */
	int fill;                      /* threads came from "fill" */
	char name[64];                 /* i<N>-t<T>: the run's directory under DIR/runs */
	int ran, exit_status;          /* exit_status: frontload run's (-1 killed) */
	int interrupted;               /* not run or stopped: scale was interrupted */
	char why[1024];                /* why nothing was measured ("" when measured) */
	double wall_s;
	json_t *result;                /* the run's result.json, or NULL */
	/* From result: */
	const char *status;            /* "complete", "interrupted", "failed" */
	const char *qps_kind;          /* "sla_bound", "lower_bound", "fixed_achieved", NULL */
	double qps, cpus_used, qps_per_cpu, p50_ms, p95_ms, p99_ms, host_cpu_pct;
	json_t *ipc, *l1i_mpki;        /* numbers, or "unsupported: why" strings (owned) */
};

/* Parse argv into a (--help: usage on stdout, exit 0). 0, or -1 (message printed). */
int sc_parse(int argc, char **argv, struct sc_args *a);

/* The figures of c from its result.json (c->result; NULL: none, every figure NAN and
 * the counters "unsupported: why"). Call once on a new configuration, again after its run. */
void sc_read_result(struct sc_config *c);

/* DIR/scale.csv, DIR/scale.json, DIR/scale.gp with its plots, DIR/summary.md and
 * DIR/report.html. Returns 0, or -1 when a file could not be written (printed). */
int sc_write_report(const char *dir, struct sc_config *c, size_t n, const struct sc_args *a,
	const char *command, double wall_s, int stop_signal);

#endif
