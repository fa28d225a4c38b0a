/* validate_leaf.h: what the files of `validate` on the running leaf share (private to
 * validate_leaf*.c): the parsed options, the perf profile of the native window, the
 * simulated window's rows, and the functions each file gives the others. The command
 * itself is fm_validate_leaf_main (measure.h). */
#ifndef FL_VALIDATE_LEAF_H
#define FL_VALIDATE_LEAF_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "cpumodel.h"
#include "leafrun.h"
#include "mix.h"
#include "objects.h"
#include "patmap.h"
#include "profile.h"
#include "simrun.h"
#include "targets.h"

/* What the leaf path parsed. */
struct vl_args {
	int simulate, hardware, tls, profile, no_profile, quiet, objdump;
	const char *cpu, *i1, *d1, *ll, *json, *targets, *keep;
	const char *leaf_args, *driver_args, *sim_qps_text, *sim_leaves_text;
	const char *leaf_profile;         /* --profile FILE: given to both leaves */
	double qps, sim_qps, warmup_s, window_s, timeout_s;
	uint64_t perf_hz, seed, sim_requests;
	uint64_t sim_leaves;              /* --sim-leaves N, 0 = auto */
	const char *knobs[FM_MAX_KNOBS];  /* forwarded leaf flags (name, value or NULL) */
	int nknobs;
};

/* A perf profile of the leaf over the window (native run only). */
struct vl_prof {
	int want;
	pid_t perf;
	char data[4200], log[4200];
	char why[512];            /* why there is no profile ("" when there is) */
	struct fm_profile p;
};

/* Counts and the mix of one row (the process, an object kind or a pool). */
struct vl_row {
	char name[32];
	uint64_t ir, i1mr, ilmr, bcm, bim;
	struct fl_mix mix;
	int have_mix;        /* fl_mix_compute ran */
};

struct vl_sim {
	struct vl_row all, kind[FM_OBJ_N], pool[FM_POOL_N];
	/* The generated library by pattern (patmap.h): pat[p] for P(p+1), pat[FM_PAT_SHARED]
	 * its shared code; rows with ir 0 did not run. have_pat 0: not split, pat_why says why. */
	struct vl_row pat[FM_PAT_MAX + 1];
	int have_pat;
	char pat_why[300];
	int threads[FM_POOL_N];   /* threads per pool */
	double classified_share;
	double dis_s;             /* seconds spent classifying the executed instructions */
	char objects[1024];       /* disassembled objects */
};

/* The judged metrics, in the order of their names (vl_metrics, validate_leaf_report.c). */
enum { T_L1I, T_IPC, T_FE, T_FP, T_COND, T_CALLRET, T_MEM, T_DIV, T_IPTB, T_EXTRACT,
	T_P_EXTRACT, T_P_RANK, T_P_COMPRESS, T_P_CRYPTO, T_N };

/* validate_leaf_args.c */

/* Parse argv into a (--help: usage on stdout, exit 0). 0, or -1 (message printed). */
int vl_parse(int argc, char **argv, struct vl_args *a);

/* validate_leaf.c */

/* A progress line "frontload-measure: ..." on stderr, unless --quiet. */
void vl_say(const struct vl_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* validate_leaf_run.c */

#define VL_POOL (16 * FM_LEAF_MAX_ARGS) /* strings the runs' argv own */
#define VL_MAX_SIM_LEAVES 8             /* --sim-leaves at most */

/* What one run (native or simulated) measured around its window. */
struct vl_phase {
	const char *tag;          /* "native", "sim", "sim2", ... (file name prefix) */
	char tagbuf[16];          /* a simulated leaf's tag */
	uint64_t seed;            /* a simulated leaf's --seed (leaf and driver) */
	uint64_t requests;        /* a simulated leaf's share of --sim-requests */
	json_t *step;             /* the window step's driver result */
	json_t *before, *after;   /* leaf stats around the window */
	int whole;                /* the window held only whole, successful requests */
	char why[1024];           /* why not */
	double wall_s;
	char err[2048];           /* a failed run: why ("" when it ran) */
};

void vl_phase_free(struct vl_phase *p);

/* {whole, why, wall_s, error, driver_step}. New reference. */
json_t *vl_phase_json(const struct vl_phase *p);

/* The flags every run gives the leaf (simulated: the keepalive stretched, --pmu off) and
 * the driver; strings the argv needs are owned by pool. */
void vl_leaf_flags(const struct vl_args *a, struct fm_leaf_cfg *c, char **pool,
	int *npool, int simulated);

/* valgrind callgrind's argv before the leaf's: geometry g, output DIR/TAG.cg. */
void vl_wrap(const struct fm_geo *g, const char *dir, struct fm_leaf_cfg *c,
	char **pool, int *npool);

/* One run: start, warm-up step, leaf stats, window step, leaf stats, stop. 0, or -1 with
 * ph->err. */
int vl_run(const struct vl_args *a, const struct fm_leaf_cfg *c, double qps,
	double warmup_s, double window_s, const char *dir, struct vl_phase *ph,
	struct vl_prof *prof);

/* The simulated window over n leaves (1..VL_MAX_SIM_LEAVES) side by side: leaf k (tag
 * "sim", then "sim2", ...; --seed a->seed + k) holds its share of --sim-requests in a
 * window of (share + 1/2) gaps at qps after warmup_s; leaves 2.. run in child processes
 * (each writes DIR/TAG-phase.json), leaf 1 here; a stop signal (*stop) reaches them all.
 * Fills ph[0..n-1]. 0 when every run ran (a window may still not be whole), or -1 with
 * err. */
int vl_sim_leaves(const struct vl_args *a, const struct fm_geo *g, const char *bindir,
	const char *dir, double qps, double warmup_s, int n, const volatile sig_atomic_t *stop,
	struct vl_phase *ph, char **pool, int *npool, char *err, size_t errlen);

/* validate_leaf_sim.c */

/* The rows of the simulated window from the callgrind dumps of every simulated leaf in
 * dir (DIR/sim*.cg.1-TT). 0, or -1 with err. */
int vl_sim_analyse(const char *dir, struct vl_sim *s, const struct vl_args *a,
	char *err, size_t errlen);

/* validate_leaf_report.c */

/* The header line of a table of rows, its first column named what. */
void vl_rows_head(const char *what);

/* One row of that table: shares of all's counts, Ir per request of reqs requests. */
void vl_row_print(const struct vl_row *r, const struct vl_row *all, double reqs);

/* The same row as a JSON object (figures not measured are null). New reference. */
json_t *vl_row_json(const struct vl_row *r, const struct vl_row *all, double reqs);

/* The generated library's rows by pattern (s->pat), printed as a table under the objects,
 * or the reason they are missing; and as a JSON array (null when not split). */
void vl_print_patterns(const struct vl_sim *s, double reqs);
json_t *vl_patterns_json(const struct vl_sim *s, double reqs);

/* The native window's stage clock table, from fm_stage_window's JSON sw. */
void vl_print_stages(json_t *sw);

/* The native window's CPU profile table (or why there is none). */
void vl_print_profile(const struct vl_prof *pr);

/* The native window's PMU table, from fm_pmu_window's JSON pmu. */
void vl_print_pmu(json_t *pmu);

/* The profile as JSON, or its "not measured"/"unsupported" string. New reference. */
json_t *vl_profile_json(const struct vl_prof *pr);

/* The measured figures judged against the targets. */
void vl_measure(struct fl_measured m[T_N], const struct vl_sim *s, int have_sim,
	const char *sim_why, json_t *pmu, json_t *sw, const struct vl_prof *pr);

/* The verdicts of m against tg: printed, appended to tj, counted in *pass, *fail, *unm.
 * With s (the simulated window; NULL when none), a missed mix target also says what the
 * generated library, and what the rest of the process, would need to run to meet it, the
 * other held as measured (targets[].needs). */
void vl_print_targets(const struct fl_targets *tg, const struct fl_measured m[T_N],
	const struct vl_sim *s, json_t *tj, int *pass, int *fail, int *unm);

#endif
