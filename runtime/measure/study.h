/* study.h: what the files of frontload-measure study share (private to them): a point,
 * the parsed options, the native cost model, and the calls between the options
 * (study_args.c), the point plan (study_plan.c), the report (study_report.c) and the
 * run (study.c). */
#ifndef FL_STUDY_H
#define FL_STUDY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <jansson.h>

#include "simrun.h"

#define ST_MAX_LIST 32
#define ST_MAX_POINTS 512
#define ST_FLAT (-1.0)                 /* an order of the --alphas list: the flat walk */
#define ST_MAX_FOOTPRINT (1ull << 40)  /* --footprint: 1 TiB is beyond any library */

enum { ST_SWEEP, ST_MRC, ST_LEAF }; /* ST_LEAF: a headline sweep point on the running leaf */

#define ST_NFIG 14                     /* measured figures of a point (st_cols): 12 of
                                          every point, 2 of leaf points only */
#define ST_LEAF_STORIES 16             /* stories per request frontload-driver sends */

/* One simulated point. */
struct st_point {
	int kind;                /* ST_SWEEP or ST_MRC */
	uint64_t want_bytes;     /* footprint asked: executed code bytes */
	uint64_t nfuncs;         /* --active-functions it maps to */
	double alpha;            /* Zipf exponent, or ST_FLAT */
	uint64_t calls;          /* --calls-per-request */
	unsigned i1_bytes;       /* I1 size of this run */
	double code, hot, cold;  /* the plan's code bytes (--plan-only); NAN: not known */
	double reuse_fn[3];      /* reuse distance p50, p90, p99: distinct functions; NAN */
	double reuse_b[3];       /* the same in distinct hot bytes; NAN */
	double eta_s;
	int skipped;             /* 1: over budget; 2: duplicate of another point */
	int done, failed;
	int resumed;             /* done by an earlier run of the same study (its journal) */
	int interrupted;         /* not run or stopped: the study was interrupted */
	double fig[ST_NFIG];     /* measured figures in st_cols order, NAN: not measured;
	                            from the run (st_fill_figures, st_leaf_finish) or the
	                            journal */
	uint64_t eps;            /* leaf points: --extractors-per-story given the leaf */
	uint64_t lreq;           /* leaf points: requests of the simulated window; else 0 */
	char why[2048];
	struct fm_run run;
	char tag[64], nfs[32], cps[32], als[32];
	struct fm_sim_job job;
	struct fm_sim sim;
};

/* What study parsed. */
struct st_args {
	uint64_t bytes[ST_MAX_LIST], calls[ST_MAX_LIST], sizes_kib[ST_MAX_LIST];
	double alphas[ST_MAX_LIST];
	size_t nbytes, ncalls, nsizes, nalphas;
	uint64_t mrc_bytes, mrc_calls, jobs, requests, warmup;
	double budget_min;
	uint64_t leaf_bytes[ST_MAX_LIST], leaf_requests;
	size_t nleaf;
	int no_mrc, no_leaf, quiet, bytes_given;
	const char *cpu, *i1, *d1, *ll, *out;
	const char *bytes_text, *alphas_text, *calls_text, *sizes_text, *mrc_text, *leaf_text;
	const char *shard_text;  /* --shard K/N, parsed into shard_k, shard_n (0/1: whole) */
	unsigned shard_k, shard_n;
	const char *merge_text;  /* --merge DIR,...: the fleet's shard directories */
	struct fm_run *run;      /* takes the forwarded simreq knobs */
};

/* Native cost model: seconds = base + per_call x calls x requests; and the library's plan
 * (every function the forwarded knobs keep) in functions and code bytes. */
struct st_model {
	double base_s, per_call_s;           /* per call: the whole plan's, natively */
	double small_call_s;                 /* per call of a 64-function plan (warm caches) */
	double lib_functions, lib_copies;
	double plan_functions, plan_bytes;   /* all kept functions and their code bytes */
};

/* Parse argv into a (defaults first) and r's forwarded knobs. 0, or -1 (message printed). */
int st_parse(int argc, char **argv, struct st_args *a, struct fm_run *r);

/* Fill m from two short native runs and the library's plan. 0, or -1 (message printed). */
int st_model(const struct fm_run *r0, struct st_model *m);
/* Native seconds an extractor call of a plan of nfuncs functions: between the small and
 * the whole plan's, by log(functions) (the caches warm a small plan natively too). */
double st_call_cost(const struct st_model *m, double nfuncs);
/* Cap the default footprints at the library's code bytes (m); given lists stay. */
void st_cap_footprints(struct st_args *a, const struct st_model *m);
/* An order for a reader: "flat" or "zipf a=ALPHA". */
void st_order_str(double alpha, char *buf, size_t len);
/* The leaf footprints: --leaf-footprints, else the I1 and LL sizes of r0's geometry; each
 * moved to the nearest swept footprint (log scale), repeats dropped. */
void st_leaf_footprints(struct st_args *a, const struct fm_run *r0);
/* Fill p (ST_MAX_POINTS) with the sweep points, the leaf points, then the curves'. Returns
 * how many. */
size_t st_points(const struct st_args *a, const struct fm_run *r0, struct st_point *p);
/* Each point's plan from native --plan-only runs. Returns the plans that failed. */
size_t st_plan_facts(struct st_point *p, size_t n, const struct fm_run *r0);
/* Mark sweep points whose plan an earlier point has as skipped (2). */
void st_dedupe(struct st_point *p, size_t n);
/* Each point's estimate; skip (1) the most expensive until *total_s, the points still to
 * run (not done), fits the budget. */
void st_budget(const struct st_args *a, const struct st_model *m, struct st_point *p,
	size_t n, double *total_s);
/* Mark the points another shard of the fleet measures (index % shard_n != shard_k) as
 * skipped (3), so a host measures its share of the same plan. */
void st_shard(struct st_point *p, size_t n, unsigned shard_k, unsigned shard_n);
/* Set q's footprint (by_bytes: in bytes, else its active functions) and order on r. */
void st_plan_knobs(struct st_point *q, struct fm_run *r, int by_bytes);

/* Leaf points (study_leaf.c): `validate --simulate` on the running leaf with the point's
 * plan, started like a simulation (q->job.pid, polled with fm_sim_running). */
/* Start it. 0, or -1 with q->why filled (q->failed set). */
int st_leaf_start(struct st_point *q, const struct st_args *a, const struct fm_run *r0,
	const char *tmp);
/* Its figures (q->fig) from validate's JSON, once it ended with status. 0, or -1 with err. */
int st_leaf_finish(struct st_point *q, int status, char *err, size_t errlen);
/* Estimated seconds of leaf point q on m's native costs. */
double st_leaf_eta(const struct st_model *m, const struct st_point *q);
/* "sweep", "mrc" or "leaf". */
const char *st_kind_str(int kind);

/* q->fig from its finished run (q->sim). */
void st_fill_figures(struct st_point *q);
/* Name of figure c (0 .. ST_NFIG - 1), as in study.csv and study.json. */
const char *st_fig_name(int c);

/* The journal (study_journal.c): DIR/points/ keeps each finished point with its key (the
 * point's knobs and whatever else of r0 and the build changes its figures), so a study
 * run again with the same command skips the points an earlier run finished. */
/* Save a done point. 0, or -1 (err). */
int st_journal_save(const char *dir, const struct st_point *q, const struct fm_run *r0,
	char *err, size_t errlen);
/* Fill q (done, resumed, fig, i1_bytes, wall time, command) from the journal when an
 * entry with its key exists. 1 when loaded, 0 when none. */
int st_journal_load(const char *dir, struct st_point *q, const struct fm_run *r0);
/* The newest results/study-* directory whose study.json has this command and status
 * "interrupted", into dir. 1 when found, 0 when none. */
int st_interrupted_dir(const char *command, char *dir, size_t len);

/* "512 KiB", "2.5 MiB" into buf ("-" when not finite); returns buf. */
char *st_bstr(double b, char *buf, size_t len);
/* DIR/study.csv, one row per point. 0, or -1. */
int st_write_csv(const char *dir, const struct st_point *p, size_t n);
/* DIR/study.gp, then gnuplot on it. 0, or -1 (gnuplot failed). */
int st_plots(const char *dir, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0, const char *cpu_i1);
/* summary.md's readings (study_reading.c), each written into fp. */
/* The plot DIR/name.svg as a markdown image, when gnuplot wrote it. */
void rd_plot(FILE *fp, const char *dir, int plots_ok, const char *name, const char *alt);
/* The plots gnuplot wrote, for the Files section. */
void rd_plot_list(FILE *fp, const char *dir, int plots_ok);
/* Per order and calls: L1i MPKI at the smallest and largest footprint, and the knee. */
void rd_sweep(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0);
/* Per leaf point: its L1i MPKI against its harness twin's, the generated library's shares. */
void rd_leaf(FILE *fp, const struct st_point *p, size_t n);
/* The calls-per-request plot and how L1i MPKI moves with the calls. */
void rd_calls(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const char *dir, int plots_ok);
/* Per order: the I1 size where L1i MPKI first falls below half its smallest-I1 value. */
void rd_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0);
/* The Anchors section: published figures, their sources, the comparable study points. */
void rd_anchors(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0, const struct st_model *m);

/* DIR/summary.md. 0, or -1 (cannot write). */
int st_write_summary(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const struct fm_run *r0, json_t *notes, const char *command,
	double total_s, double wall_s, const struct st_model *m, int plots_ok);
/* DIR/study.json: every point, the host, geometry notes, library and caches, and the
 * status ("complete", or "interrupted" with the signal when stop_signal is not 0); a
 * failure to write is printed. */
void st_write_json(const char *dir, const struct st_point *p, size_t n, const char *command,
	json_t *notes, const struct st_model *m, const struct st_args *a, const struct fm_run *r0,
	int stop_signal);

/* study --merge (study_fleet.c): the shards' study.json files in a->merge_text merged into
 * one report in a->out, grouped by the simulated CPU model. Returns the exit status. */
int st_merge_main(const struct st_args *a, const char *command);
#endif
