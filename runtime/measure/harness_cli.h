/* harness_cli.h: what validate --harness, mix and calibrate share: their options and the
 * common part of their help, the choice between the hardware and simulated paths, and the
 * native run (stage shares, cost estimate) followed by the simulated one. */
#ifndef FL_HARNESS_CLI_H
#define FL_HARNESS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fm_run;
struct fm_native;
struct fm_sim;

/* What validate, mix and calibrate parsed. */
struct fm_harness_args {
	const char *sub;
	int simulate, hardware, quick, quiet;
	int requests_set, warmup_set;
	const char *cpu, *i1, *d1, *ll, *json, *targets, *keep, *stage;
	uint64_t requests, warmup;
	double target_mpki, tolerance, body_min;
	uint64_t min_calls, max_calls, max_runs;
	int have_target;
};

/* Parse argv (argv[0] the subcommand) into a and r's knobs and run settings; --help
 * prints usage to stdout and exits 0. Returns 0, or -1 (message printed). */
int fm_harness_parse(int argc, char **argv, struct fm_harness_args *a, struct fm_run *r,
	void (*usage)(FILE *));

/* The path: the one asked for, else hardware when counters open here (why says why not). */
unsigned fm_harness_path(const struct fm_harness_args *a, char *why, size_t len);

/* The help shared by the three: path, geometry, run options and the cost model. */
void fm_harness_usage(FILE *fp);

/* A native run, then the simulated run with its estimated duration (*eta_out). 0, or -1
 * (message printed). */
int fm_harness_simulate(struct fm_run *r, struct fm_native *nat, struct fm_sim *sim,
	double *eta_out);

#endif
