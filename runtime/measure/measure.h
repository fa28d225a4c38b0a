/* measure.h: frontload-measure's shared pieces: CPU cache models, native and simulated runs.
 *
 * A run executes frontload-simreq (found beside frontload-measure) with forwarded knobs,
 * either natively (JSON summary, optionally with perf counters: the hardware path) or
 * under valgrind's callgrind with a CPU's cache geometry (the simulated path), then parses
 * callgrind's output (cgparse.h) and joins it with objdump classes (disasm.h, mix.h).
 * validate.c implements it; validate, mix, calibrate (validate.c) and study (study.c) use it.
 * Errors go to a caller buffer; progress lines go to stderr unless quiet.
 */
#ifndef FL_MEASURE_H
#define FL_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "mix.h"

#define FM_PROG "frontload-measure"
#define FM_MAX_KNOBS 96       /* forwarded simreq argv entries */
#define FM_TRANSLATE_MS 1.2   /* valgrind translation per distinct function (ms, estimate) */
#define FM_SLOWDOWN 50.0      /* callgrind with cache+branch sim vs native, upper estimate */

/* One cache level: bytes, ways, line bytes. */
struct fm_cache {
	unsigned size, assoc, line;
};

/* A CPU model: its caches as documented, and the source of the figures. */
struct fm_cpu {
	const char *name;       /* --cpu value */
	const char *title;      /* "AMD Zen 4 (Genoa, Bergamo = Zen 4c)" */
	struct fm_cache i1, d1, ll;
	const char *source;     /* where the geometry comes from */
	const char *note;       /* caveat, or NULL */
};

/* The CPU model named name, or NULL. fm_cpu_names lists them ("zen4, zen5, ..."). */
const struct fm_cpu *fm_cpu_find(const char *name);
const char *fm_cpu_names(void);

/* valgrind needs size / (assoc * line) to be a power of two: got = want when it is, else
 * the nearest representable geometry (same line; size kept and assoc moved when a nearby
 * assoc works, else assoc kept and size moved), with note saying what changed (note = ""
 * when nothing did). Returns 0, or -1 when nothing is representable (zero fields). */
int fm_cache_fit(const struct fm_cache *want, struct fm_cache *got, char *note, size_t len);

/* "32 KiB 8-way 64 B" into buf. */
char *fm_cache_str(const struct fm_cache *c, char *buf, size_t len);

/* Parse "SIZE,ASSOC,LINE" (bytes, ways, bytes; valgrind's --I1 syntax). Returns 0 or -1. */
int fm_cache_parse(const char *s, struct fm_cache *c);

/* Everything a run needs. Fill with fm_run_init, then set fields. */
struct fm_run {
	char simreq[4200];               /* frontload-simreq path */
	const char *knobs[FM_MAX_KNOBS]; /* forwarded simreq flags and values */
	int nknobs;
	uint64_t warmup, requests;
	const char *stage;               /* "all" or "extract" */
	struct fm_cache i1, d1, ll;      /* geometry given to valgrind (representable) */
	int mix;                         /* simulated: branch simulation too (per-instruction
	                                    data, jumps and objdump classes always: the rep
	                                    string correction needs them) */
	int pmu;                         /* native: --pmu */
	const char *tmpdir;              /* scratch directory (exists) */
	const char *tag;                 /* file name prefix inside tmpdir */
	int quiet;                       /* no progress lines */
	struct fm_dis_cache *dcache;     /* NULL: objdump each run's objects, filtered to the
	                                    executed addresses; else classes from this cache */
};

/* Instruction classes of whole objects, disassembled once and shared by the runs of a
 * study (a full extractor library takes minutes to objdump). About 10 bytes per
 * instruction. */
struct fm_dis_cache;
struct fm_dis_cache *fm_dis_cache_new(void);
void fm_dis_cache_free(struct fm_dis_cache *c);

/* The classes of the instructions object obj of cg executed (cg sorted by fl_cg_sort),
 * from cache, or objdump of that object filtered to them when cache is NULL. 0, or -1
 * with err (d is then empty). */
struct fl_cg;
struct fl_dis;
int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, struct fm_dis_cache *cache,
	struct fl_dis *d, char *err, size_t errlen);

/* Find frontload-simreq beside this program; defaults: warmup 2, requests 10, stage all,
 * mix on. Returns 0, or -1 (err filled) when simreq is missing. */
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

/* Parse a finished job's output into out (status: its wait status). With r->mix, objdump
 * the objects holding at least 0.1% of Ir. Returns 0, or -1 with err. */
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

/* Monotonic seconds. */
double fm_now(void);

/* "1h02m", "4m05s", "12s" into buf. */
char *fm_dur_str(double s, char *buf, size_t len);

/* A number from a JSON object by dotted path ("stages.extract.cpu_share"); NAN if absent. */
double fm_json_num(json_t *o, const char *path);

/* Host description (kernel, CPU model, CPUs) as a JSON object. */
json_t *fm_host_json(void);

/* The build's config.json beside this program (configure_args, copies, ...), or NULL. */
json_t *fm_build_json(void);

/* Make a scratch directory /tmp/frontload-measure.XXXXXX into out; fm_rmtree removes it. */
int fm_mktemp(char *out, size_t len, char *err, size_t errlen);
void fm_rmtree(const char *dir);

/* One subcommand option for fm_args_next: "--name", "--name V" or "--name=V". */
struct fm_opt {
	const char *name;
	int has_arg;
	int id;    /* returned by fm_args_next; nonzero */
};
#define FM_OPT_KNOB (-1) /* fm_args_next id of a forwarded simreq knob */

/* Parse argv[*i] (advancing *i past it and its value): an option of opts (id, *val) or a
 * knob of fm_knob_defs (id FM_OPT_KNOB, *knob its name, *val its value or NULL). Returns
 * 1, 0 at the end, -1 on an unknown option or a missing value (message printed). */
int fm_args_next(int argc, char **argv, int *i, const struct fm_opt *opts, int *id,
	const char **val, const char **knob);

/* Integer / number flag values in [lo, hi]; -1 with a message naming --flag. */
int fm_parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int fm_parse_f64(const char *flag, const char *s, double lo, double hi, double *out);

/* Set r's I1, D1 and LL from CPU model cpu and optional "S,A,L" overrides, fitted to what
 * valgrind can simulate; *notes gets a JSON array of what was changed and caveats.
 * Returns 0, or -1 (message printed) on an unknown model or bad override. */
int fm_geometry(struct fm_run *r, const char *cpu, const char *i1, const char *d1,
	const char *ll, json_t **notes);

/* Subcommands (argv[0] is the subcommand name). Return the process exit status. */
int fm_validate_main(int argc, char **argv);      /* --harness: frontload-simreq */
int fm_validate_leaf_main(int argc, char **argv); /* default: the running leaf */
int fm_mix_main(int argc, char **argv);
int fm_calibrate_main(int argc, char **argv);
int fm_study_main(int argc, char **argv);

/* Exit statuses, documented in every --help. */
enum { FM_EXIT_OK = 0, FM_EXIT_RUN = 1, FM_EXIT_USAGE = 2, FM_EXIT_MISSED = 3 };

/* The simreq knobs frontload-measure forwards: name (without "--") and whether it takes a
 * value; NULL-terminated. Used by every subcommand's option parser and --help. */
struct fm_knob_def {
	const char *name;
	int has_arg;
	const char *help;
};
extern const struct fm_knob_def fm_knob_defs[];

/* Print the forwarded-knob section of a --help. */
void fm_knobs_usage(FILE *fp);

/* Limits of the simulated path, one sentence each, NULL-terminated. */
extern const char *const fm_sim_limits[];

#endif
