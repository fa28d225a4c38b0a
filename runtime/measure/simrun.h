/* simrun.h: runs of frontload-simreq for the harness path of frontload-measure.
 *
 * A run executes frontload-simreq (found beside frontload-measure) with forwarded knobs,
 * either natively (its JSON summary, optionally with perf counters: the hardware path) or
 * under valgrind's callgrind with a cache geometry (the simulated path), then parses
 * callgrind's output (cgparse.h) and joins it with instruction classes (discache.h,
 * mix.h). Errors go to a caller buffer; progress lines go to stderr unless quiet.
 */
#ifndef FL_SIMRUN_H
#define FL_SIMRUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "cpumodel.h"
#include "mix.h"

#define FM_MAX_KNOBS 96       /* forwarded simreq argv entries */
#define FM_TRANSLATE_MS 1.2   /* valgrind translation per distinct function (ms, estimate) */
#define FM_SLOWDOWN 50.0      /* callgrind with cache+branch sim vs native, upper estimate */

/* Everything a run needs. Fill with fm_run_init, then set fields. */
struct fm_run {
	char simreq[4200];               /* frontload-simreq path */
	const char *knobs[FM_MAX_KNOBS]; /* forwarded simreq flags and values */
	int nknobs;
	uint64_t warmup, requests;
	const char *stage;               /* "all" or "extract" */
	struct fm_geo geo;               /* geometry given to valgrind (representable) */
	int mix;                         /* simulated: branch simulation too (per-instruction
	                                    data, jumps and instruction classes always: the
	                                    rep string correction needs them) */
	int pmu;                         /* native: --pmu */
	const char *tmpdir;              /* scratch directory (exists) */
	const char *tag;                 /* file name prefix inside tmpdir */
	int quiet;                       /* no progress lines */
	int objdump;                     /* classify the executed instructions from objdump's
	                                    text of each object (0: Capstone, discache.h) */
};

/* Find frontload-simreq beside this program; defaults: warmup 2, requests 10, stage all,
 * mix on, the default CPU model's geometry. Returns 0, or -1 (err filled) when simreq is
 * missing. */
int fm_run_init(struct fm_run *r, char *err, size_t errlen);

/* Append a forwarded knob ("--name" and, when value is not NULL, its value). Returns 0, or
 * -1 when FM_MAX_KNOBS is reached. */
int fm_run_knob(struct fm_run *r, const char *name, const char *value);

/* Value of forwarded knob name (without "--"), or NULL when not given. */
const char *fm_run_knob_get(const struct fm_run *r, const char *name);

/* Result of a native run: simreq's JSON summary and the run's wall time. */
struct fm_native {
	json_t *summary;   /* owned */
	double wall_s;
};

/* Run simreq natively (with --pmu when r->pmu). Returns 0, or -1 with err (exit status,
 * stderr tail). Free with fm_native_free. */
int fm_native_run(const struct fm_run *r, struct fm_native *out, char *err, size_t errlen);
void fm_native_free(struct fm_native *n);

/* Counts and derived figures of one simulated run. */
struct fm_sim {
	json_t *summary;         /* simreq's JSON summary from the run under valgrind */
	struct fl_mix mix;       /* rates and classified counts (branch counts need mix) */
	uint64_t ir, i1mr, ilmr, bc, bcm, bi, bim;  /* event totals (0 when not simulated) */
	double wall_s;
	double classified_share; /* insns / ir_hw: instructions covered by disassembled objects */
	char objects[1024];      /* disassembled objects, comma separated basenames */
	char cmd[8192];          /* the valgrind command line */
};

/* A simulated run in flight (see fm_sim_start). */
struct fm_sim_job {
	pid_t pid;
	double t0;
	char cg[4200], js[4200], log[4200]; /* callgrind --callgrind-out-file, simreq JSON, log */
	char window[4300];                  /* cg.2: the dump holding the measured window */
	char cmd[8192];
};

/* Start valgrind callgrind on simreq with r's geometry (non-blocking). Returns 0 or -1. */
int fm_sim_start(const struct fm_run *r, struct fm_sim_job *job, char *err, size_t errlen);

/* Nonzero while job runs (waitpid WNOHANG); *status gets the wait status once it ended. */
int fm_sim_running(struct fm_sim_job *job, int *status);

/* Parse a finished job's output into out (status: its wait status). Disassembles the
 * objects holding at least 0.1% of Ir. Returns 0, or -1 with err. */
int fm_sim_finish(const struct fm_run *r, struct fm_sim_job *job, int status,
	struct fm_sim *out, char *err, size_t errlen);

/* fm_sim_start, wait (a progress line every 30 s against eta_s unless quiet), finish. */
int fm_sim_run(const struct fm_run *r, double eta_s, struct fm_sim *out, char *err,
	size_t errlen);
void fm_sim_free(struct fm_sim *s);

/* Estimated seconds of a simulated run: touched functions x FM_TRANSLATE_MS + native wall
 * time x FM_SLOWDOWN. touched = min(plan functions, (warmup + requests) x calls per
 * request) + 3000 (runtime and libraries). */
double fm_sim_eta(double native_wall_s, double plan_functions, double calls_per_request,
	uint64_t warmup, uint64_t requests);

/* Limits of the simulated path, one sentence each, NULL-terminated; fm_sim_limits_usage
 * prints them as a --help section. */
extern const char *const fm_sim_limits[];
void fm_sim_limits_usage(FILE *fp);

#endif
