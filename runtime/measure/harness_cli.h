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

/* The three commands: their tables differ in a few options (targets, calibration). */
enum fm_harness_cmd { FM_CMD_VALIDATE, FM_CMD_MIX, FM_CMD_CALIBRATE };

/* What validate, mix and calibrate parsed. */
struct fm_harness_args {
	const char *sub;
	struct fm_run *run;      /* takes the forwarded simreq knobs */
	int simulate, hardware, quick, quiet;
	const char *cpu, *i1, *d1, *ll, *json, *targets, *keep, *stage;
	uint64_t requests, warmup;
	double target_mpki;      /* 0: not given (calibrate requires it) */
	double tolerance, body_min;
	uint64_t min_calls, max_calls, max_runs;
};

/* Parse argv (argv[0] the subcommand) of cmd into a and r's knobs and run settings;
 * --help prints usage to stdout and exits 0. Returns 0, or -1 (message printed). */
int fm_harness_parse(int argc, char **argv, enum fm_harness_cmd cmd,
	struct fm_harness_args *a, struct fm_run *r, void (*usage)(FILE *));

/* cmd's option list (generated from its table, the forwarded knobs after it), then the
 * notes the three share: CPU models with their sources, the cost of a simulated run. */
void fm_harness_usage(FILE *fp, enum fm_harness_cmd cmd);

/* The path: the one asked for, else hardware when counters open here (why says why not). */
unsigned fm_harness_path(const struct fm_harness_args *a, char *why, size_t len);

/* A native run, then the simulated run with its estimated duration (*eta_out). 0, or -1
 * (message printed). */
int fm_harness_simulate(struct fm_run *r, struct fm_native *nat, struct fm_sim *sim,
	double *eta_out);

#endif
