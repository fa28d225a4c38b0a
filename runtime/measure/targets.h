/* targets.h: production front-end targets (a JSON file with sources) and verdicts on them.
 *
 * A targets file (results/targets/production.json, installed as
 * <prefix>/share/frontload/targets/production.json) holds:
 *   "schema": 1, "name": string, "description": string (optional),
 *   "sources": { ID: { "title": string, "url": string }, ... },
 *   "targets": [ { "metric", "label", "kind", bounds, "unit", "source", "paths",
 *                  "note" (optional), "knob" (optional: what moves the metric, printed
 *                  by validate under a miss) }, ... ]
 * metric is one of the names fl_tgt_metric_known accepts, at most once per file. kind and
 * its bounds:
 *   "range"   "min" <= x <= "max" (min < max)
 *   "min"     x >= "min"
 *   "max"     x <= "max"
 *   "approx"  |x - "value"| <= "tolerance" (tolerance >= 0, same unit as the metric)
 * source must name an entry of "sources"; paths is a non-empty array of "hardware"
 * (perf counters), "simulated" (callgrind + objdump) and "native" (CPU clocks of a native
 * run). Bounds are inclusive. Unknown keys are refused, so a typo never silently drops a
 * bound. Errors name the file, the target index and the key at fault.
 *
 * A verdict compares one measurement with one target: pass, fail, or unmeasurable when the
 * measurement is missing (with its reason) or came from a path the target does not accept.
 * Nothing here prints.
 */
#ifndef FL_TARGETS_H
#define FL_TARGETS_H

#include <stddef.h>

#define FL_TGT_TEXT 512  /* bytes of a title, note or reason, NUL included */
#define FL_TGT_NAME 64   /* bytes of a metric, label, unit or source id */

enum fl_tgt_kind { FL_TGT_RANGE, FL_TGT_MIN, FL_TGT_MAX, FL_TGT_APPROX };

/* Measurement paths, as bits of fl_target.paths. */
enum {
	FL_PATH_HARDWARE = 1u << 0,  /* perf counters on a native run */
	FL_PATH_SIMULATED = 1u << 1, /* valgrind callgrind simulation + objdump classes */
	FL_PATH_NATIVE = 1u << 2,    /* CPU clocks of a native run (no counters) */
};

struct fl_tgt_source {
	char id[FL_TGT_NAME];
	char title[FL_TGT_TEXT];
	char url[FL_TGT_TEXT];
};

struct fl_target {
	char metric[FL_TGT_NAME];  /* e.g. "l1i_mpki" */
	char label[FL_TGT_NAME];   /* e.g. "L1i MPKI" */
	enum fl_tgt_kind kind;
	double min, max;           /* range, min, max kinds */
	double value, tolerance;   /* approx kind */
	char unit[FL_TGT_NAME];
	char source[FL_TGT_NAME];  /* id in fl_targets.sources */
	unsigned paths;            /* FL_PATH_* bits, at least one */
	char note[FL_TGT_TEXT];    /* "" when absent */
	char knob[FL_TGT_TEXT];    /* what moves the metric; "" when absent */
};

struct fl_targets {
	char name[FL_TGT_NAME];
	struct fl_tgt_source *sources;
	size_t nsources;
	struct fl_target *t;
	size_t n;
};

/* Load and validate a targets file (the rules above). Returns 0, or -1 with tg zeroed and
 * err "PATH: targets[I].KEY: problem" (or the JSON error with line and column). */
int fl_targets_load(const char *path, struct fl_targets *tg, char *err, size_t errlen);

/* The same from JSON text; name labels errors. */
int fl_targets_parse(const char *text, const char *name, struct fl_targets *tg, char *err,
	size_t errlen);

/* Free what a successful load allocated; tg is zeroed. Safe on a zeroed tg. */
void fl_targets_free(struct fl_targets *tg);

/* The default targets file: <exe dir>/../share/frontload/targets/production.json when it
 * exists, else the source tree's results/targets/production.json. Returns 0, or -1 (err
 * filled) when neither exists. */
int fl_targets_default_path(char *out, size_t outlen, char *err, size_t errlen);

/* Nonzero when name is a metric this project can measure: l1i_mpki, ipc,
 * frontend_bound_pct, scalar_fp_pct, cond_branch_pct, call_ret_pct, mem_pct, div_pct,
 * insns_per_taken_branch, extract_cpu_pct, and the CPU profile's category shares
 * profile_extract_pct, profile_ranking_pct, profile_compression_pct,
 * profile_encryption_pct (validate's leaf path). */
int fl_tgt_metric_known(const char *name);

/* The target for metric, or NULL. */
const struct fl_target *fl_targets_find(const struct fl_targets *tg, const char *metric);

/* The source with id, or NULL. */
const struct fl_tgt_source *fl_targets_source(const struct fl_targets *tg, const char *id);

/* One measured value and where it came from. */
struct fl_measured {
	int available;          /* 0: value is meaningless, why says so */
	double value;
	unsigned path;          /* one FL_PATH_* bit */
	char why[FL_TGT_TEXT];  /* reason when unavailable, else "" */
};

enum fl_verdict { FL_VERDICT_PASS, FL_VERDICT_FAIL, FL_VERDICT_UNMEASURABLE };

/* Verdict of m against t. Unmeasurable when m is unavailable, not finite, or its path is
 * not one of t->paths. */
enum fl_verdict fl_target_check(const struct fl_target *t, const struct fl_measured *m);

/* "pass", "fail", "unmeasurable". */
const char *fl_verdict_name(enum fl_verdict v);

/* "hardware", "simulated", "native" for one path bit; "none" otherwise. */
const char *fl_path_name(unsigned path);

/* The target as text: "0.6..0.8", ">= 15", "<= 3.5", "21 +- 4"; returns buf. */
char *fl_target_str(const struct fl_target *t, char *buf, size_t len);

#endif
