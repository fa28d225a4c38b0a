/* run_search.h: the SLA search of `frontload run` as a pure state machine.
 *
 * No I/O, no clock, no randomness: the caller asks fl_search_next for the rate to probe,
 * measures it, and hands the measurement to fl_search_record, until fl_search_next says
 * the search is done. Tests drive it with a synthetic latency model.
 *
 * The search (rates are per instance, requests/s):
 *   bracket   start at start_qps and multiply by growth while a step passes (capped at
 *             max_qps); the first failing rate ends the bracket.
 *   bisect    probe the geometric midpoint of the highest pass (lo) and the lowest fail
 *             (hi) until (hi - lo) / lo <= tolerance. One probe is always kept in reserve
 *             for the re-measure.
 *   remeasure probe lo once more, so one lucky step cannot decide. When the re-measure
 *             fails, lo becomes the new hi and the next lower passing rate the new lo;
 *             bisection resumes if the gap is wider than the tolerance, and the new lo is
 *             re-measured in turn.
 *   done      converged: lo passed twice (or its re-measure passed) and hi failed, within
 *             the tolerance. Otherwise converged = 0 with a reason: the start rate misses
 *             the SLA, max_qps passes, or the step budget ran out.
 * A step passes when p95 <= SLA, achieved >= min_achieved x offered and the error rate is
 * below max_error_rate (fl_search_judge).
 */
#ifndef FL_RUN_SEARCH_H
#define FL_RUN_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#define FL_SEARCH_MAX_PROBES 64u  /* largest max_steps */

/* What a step is for (also the "phase" column of steps.csv). */
enum fl_search_phase {
	FL_PHASE_BRACKET,    /* exponential growth from the start rate */
	FL_PHASE_BISECT,     /* between the highest pass and the lowest fail */
	FL_PHASE_REMEASURE,  /* the best passing rate, once more */
	FL_PHASE_FINAL,      /* the steady final window (run_main, not the search) */
	FL_PHASE_FIXED       /* a rate of --qps (run_main, not the search) */
};

/* "bracket", "bisect", "remeasure", "final", "fixed". */
const char *fl_search_phase_name(enum fl_search_phase p);

struct fl_search_config {
	double start_qps;       /* first rate, > 0 (requests/s) */
	double max_qps;         /* no probe above this, >= start_qps (requests/s) */
	double growth;          /* bracket multiplier, > 1 */
	double sla_p95_ms;      /* p95 end-to-end latency bound (ms) */
	double tolerance;       /* bisection stops when (hi - lo) / lo <= this (0.05 = 5%) */
	unsigned max_steps;     /* probes in all: bracket + bisect + remeasure, 1..64 */
	double min_achieved;    /* pass needs achieved >= this x offered (0.95) */
	double max_error_rate;  /* pass needs errors / requests < this (0.01) */
};

/* start 4, max 100000, growth 2, SLA 700 ms, tolerance 5%, 12 steps, 95%, 1%. */
void fl_search_config_default(struct fl_search_config *c);

/* Check c. Returns 0, or -1 with err naming the bad field. */
int fl_search_config_check(const struct fl_search_config *c, char *err, size_t errlen);

/* What one step measured (summed over instances, worst p95). */
struct fl_search_obs {
	double requested_qps;   /* rate asked for */
	double offered_qps;     /* rate the open-loop schedule actually offered in the
	                           measured window (Poisson arrivals differ from the requested
	                           rate by about 1/sqrt(N)); <= 0: use requested_qps */
	double achieved_qps;    /* replies per second in the measured window */
	double p95_ms;          /* p95 latency of OK replies (ms) */
	uint64_t requests;      /* requests due in the measured window */
	uint64_t errors;        /* of those: errors, timeouts and OVERLOADED replies */
};

/* Whether o passes under c: 1 or 0; why (may be NULL) says what failed or "ok". */
int fl_search_judge(const struct fl_search_config *c, const struct fl_search_obs *o,
	char *why, size_t whylen);

/* One probe of the log. */
struct fl_search_probe {
	double qps;
	enum fl_search_phase phase;
	int pass;
	double p95_ms;
};

enum fl_search_state { FL_SEARCH_RUNNING, FL_SEARCH_DONE };

struct fl_search {
	struct fl_search_config cfg;
	enum fl_search_state state;
	double lo;                  /* highest rate believed to pass; 0: none */
	double hi;                  /* lowest rate that failed; 0: none */
	double next_qps;            /* the probe handed out (or to hand out) next */
	enum fl_search_phase next_phase;
	unsigned nprobes;
	struct fl_search_probe probes[FL_SEARCH_MAX_PROBES];
	/* Outcome, once state is DONE. */
	int converged;              /* 1: the knee is bracketed within the tolerance */
	double chosen_qps;          /* rate for the final window; 0: none passed */
	char reason[256];           /* why it converged or did not, for the result */
};

/* Start a search (c must pass fl_search_config_check). */
void fl_search_init(struct fl_search *s, const struct fl_search_config *c);

/* The next probe: returns 1 with *qps and *phase set, or 0 when the search is done (see
 * converged, chosen_qps and reason). Calling it again before recording returns the same
 * probe. */
int fl_search_next(struct fl_search *s, double *qps, enum fl_search_phase *phase);

/* Record the measurement of the probe fl_search_next handed out. Returns its verdict
 * (1 pass, 0 fail), or -1 when the search is already done. why as fl_search_judge. */
int fl_search_record(struct fl_search *s, const struct fl_search_obs *o, char *why,
	size_t whylen);

/* End the search now (interrupted or a failure): converged = 0, chosen_qps = the highest
 * rate that passed and never failed, reason = why. */
void fl_search_abort(struct fl_search *s, const char *why);

/* Upper bound on the probes still to come (for an ETA). */
unsigned fl_search_remaining(const struct fl_search *s);

#endif
