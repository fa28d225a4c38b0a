/* run_search.h: the SLA search of `frontload run` as a pure state machine.
 *
 * No I/O, no clock, no randomness: the caller asks fl_search_next for the step to run
 * (rate, phase, seconds, driver in-flight ceiling), measures it, and hands the
 * measurement to fl_search_record, until fl_search_next says the search is done. Tests
 * drive it with synthetic step outcomes.
 *
 * The search (rates are per instance, requests/s):
 *   probe     capacity estimate: short steps from start_qps, the rate times growth each
 *             time, with the driver's in-flight ceiling held at probe_inflight, so the
 *             leaf sees a bounded (closed-loop-like) concurrency. The first probe whose
 *             replies fall below 85% of the offered rate saturated the leaf: its reply
 *             rate is the capacity C. The first probe that saturates is run again, 4x
 *             longer, once, before C rests on it: the leaf may still be faulting in its
 *             library, and 2 s lose the last p95 of replies to the window's edge (one
 *             2 s probe read 114.5 qps of a leaf whose 15 s steps then answered 135).
 *             When it answered more than the probe before it asked, the repeat runs at
 *             1.5x what it answered (at most its rate): deep overload collapses the
 *             replies (a 6 s repeat at 1024/s read 114/s of a leaf that had answered
 *             213/s at that rate in 1.5 s). C is the most replies/s of a saturated
 *             probe.
 *             No probe is judged against the SLA.
 *   bracket   from 0.8 C, up by `step` (1 + 2 x tolerance; step^2 after two passes) while
 *             a step passes, but not past step x A while the bracket is below it, A the
 *             larger of C and the most replies/s any judged step answered (probes read
 *             low, and a bracket held under step x C may never overload the leaf, so S
 *             goes unread); down by it (faster each time) while one fails, so no step is
 *             pushed far past the knee.
 *   saturation S = the highest reply rate of a judged step the leaf could not keep up
 *             with (its achieved test failed, or it missed and answered less than offered
 *             by more than the window's edge noise). No rate at or above S holds a steady
 *             window (the queue grows without bound at utilisation >= 1), and within the
 *             tolerance below S a queue's relaxation time (growing as 1/(1 - rho)^2)
 *             outlasts a short step: measured here, 132.6 qps passed two 15 s steps at
 *             p95 412 and 387 ms with S = 133.7, then missed its 300 s final window at
 *             p95 749 ms. So once S is known, hi is at most S, lo is a rate at or below
 *             the cap S / (1 + sat_margin) (rounded down to 0.1 qps; a pass above it is
 *             kept in the log but is no candidate), bisection never steps above the cap,
 *             and a lo at the cap (or within tolerance / 4 below it) that passed twice
 *             brackets the knee. sat_margin 0 turns the cap off;
 *             S is still recorded. A step that fell behind answering less than a
 *             passing step at least as long reads no S (goodput collapsing, not the
 *             host's limit); a shorter pass is no such evidence, so a 15 s final
 *             window that fell behind reads S after 4 s passes answered more.
 *   bisect    the geometric midpoint of the highest pass (lo) and the lowest fail (hi)
 *             until (hi - lo) / lo <= tolerance; one step stays in reserve for the
 *             re-measure.
 *   remeasure lo once more, so one lucky step cannot decide. A failed re-measure makes lo
 *             the new hi and the next lower rate that never failed the new lo.
 *   final     the steady final window at lo. converged only when the knee is bracketed
 *             within the tolerance, lo passed twice, and the final window passed. A failed
 *             final window is treated as a failed re-measure (the search steps down,
 *             bisects or re-measures within the step budget; with no lower rate that
 *             passed, it brackets down from the failed rate) and the final window runs
 *             again, at most max_finals times in all. With two or more final windows
 *             left and the next lower clean pass more than tolerance / 2 below, the next
 *             final window runs at once at failed / (1 + tolerance / 2) (0.1 qps grid, at
 *             most the cap): a pass there converges (the knee lies within half the
 *             tolerance above it, by the longest windows the search runs).
 *   done      converged: sla_bound_qps = the final window's rate. Otherwise no SLA bound:
 *             lower_bound_qps = the highest rate that passed every time it was judged
 *             (0: none), with the reason (start rate misses the SLA, max_qps passes, the
 *             step budget ran out, the final window failed max_finals times).
 *
 * Judging a step (fl_search_judge): with n latencies, the p95's 95% interval spans the
 * values at ranks n*0.95 +- 1.96*sqrt(n*0.95*0.05) (common/quantile_ci.h; the driver
 * reports them).
 * A step passes when the interval lies at or below the SLA, achieved >= offered - slack
 * (fl_search_achieved_slack: the larger of (1 - min_achieved) x offered and the noise of
 * the window's edges) and errors < max_error_rate of requests; it fails when the interval lies above
 * the SLA or achieved or errors miss; it is UNSURE when the SLA lies inside the interval
 * (then the same rate is measured again for twice as long, up to max_step_s; still
 * unsure at max_step_s counts as a miss: the rate is not known to hold); it is UNJUDGED
 * when the driver limited it (then it runs again with twice the in-flight ceiling, twice
 * at most, and a third time ends the search).
 * Step lengths: at least step_s, and long enough for min_samples latencies (enough for the
 * p95's interval to span +- ci_pct percentile points), at most max_step_s.
 * In-flight ceiling: the arrivals of inflight_s seconds at the rate plus 4 standard
 * deviations of their Poisson count, so with inflight_s the driver's timeout the ceiling
 * never binds while requests are still answered in time (without it, 2 x SLA: a leaf
 * holding that many is past the SLA on average, by Little's law); at least
 * probe_inflight, doubled per unjudged retry.
 */
#ifndef FL_RUN_SEARCH_H
#define FL_RUN_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#define FL_SEARCH_MAX_PROBES 96u  /* every step of a search: probes, steps, finals */
#define FL_SEARCH_MAX_CAP_PROBES 8u  /* capacity probes at most */
/* A step shorter than this reads no saturation: a short overloaded window answers less
 * than the leaf sustains (quick runs on the --copies=2 build, 12-06: 4 s steps at 271.2
 * and 279.0 qps answered 236.8 and 245.5/s where 15 s finals that fell behind answered
 * 251.7 and 252.0/s, and with the cap at S / 1.05 three runs converged 14.1% apart). So
 * a final window stopped once its miss is certain runs at least this long. */
#define FL_SEARCH_SAT_MIN_S 10.0

/* What a step is for (also the "phase" column of steps.csv). */
enum fl_search_phase {
	FL_PHASE_BRACKET,    /* near the knee, up or down by the bracket step */
	FL_PHASE_BISECT,     /* between the highest pass and the lowest fail */
	FL_PHASE_REMEASURE,  /* the best passing rate, once more */
	FL_PHASE_FINAL,      /* the steady final window */
	FL_PHASE_FIXED,      /* a rate of --qps (run_main, not the search) */
	FL_PHASE_PROBE       /* capacity probe (not judged) */
};

/* "bracket", "bisect", "remeasure", "final", "fixed", "probe". */
const char *fl_search_phase_name(enum fl_search_phase p);

/* A step's verdict. */
enum fl_verdict {
	FL_VERDICT_FAIL,      /* the SLA (or achieved, or errors) surely missed */
	FL_VERDICT_PASS,      /* surely met */
	FL_VERDICT_UNSURE,    /* the SLA lies inside the p95's interval */
	FL_VERDICT_UNJUDGED   /* the driver limited the step, or a capacity probe */
};

/* "fail", "pass", "unsure", "unjudged". */
const char *fl_verdict_name(enum fl_verdict v);

struct fl_search_config {
	double start_qps;       /* first capacity probe, > 0 (requests/s) */
	double max_qps;         /* no step above this, >= start_qps (requests/s) */
	double growth;          /* capacity-probe multiplier, > 1 */
	double sla_p95_ms;      /* p95 end-to-end latency bound (ms) */
	double tolerance;       /* bisection stops when (hi - lo) / lo <= this (0.05 = 5%) */
	double sat_margin;      /* once a step saturated at S, no step or final window above
	                           S / (1 + this); 0: no cap (0.05 = 5%) */
	unsigned max_steps;     /* judged steps (bracket, bisect, remeasure, repeats), 1..64 */
	unsigned max_finals;    /* final windows at most, 1..8 */
	double min_achieved;    /* pass needs achieved >= this x offered (0.95) */
	double max_error_rate;  /* pass needs errors / requests < this (0.01) */
	double probe_s;         /* measured seconds of a capacity probe */
	double step_s;          /* shortest measured seconds of a judged step */
	double max_step_s;      /* longest, >= step_s */
	double final_s;         /* measured seconds of a final window */
	double ci_pct;          /* steps aim for a p95 interval of +- this many percentile
	                           points (1: p94..p96) */
	unsigned probe_inflight; /* driver in-flight ceiling in probes, and the least one */
	double inflight_s;      /* judged steps: the ceiling holds this many seconds of
	                           arrivals (the driver's timeout: a request older is failed
	                           anyway); 0: 2 x SLA */
};

/* start 4, max 100000, growth 4, SLA 700 ms, tolerance 5%, saturation margin 5%, 16
 * steps, 2 finals, 95%, 1%,
 * probes 2 s, steps 15..60 s, final 300 s, +- 1 point, 64 in flight, ceilings 2 x SLA. */
void fl_search_config_default(struct fl_search_config *c);

/* Check c. Returns 0, or -1 with err naming the bad field. */
int fl_search_config_check(const struct fl_search_config *c, char *err, size_t errlen);

/* What one step measured (summed over instances, worst p95). */
struct fl_search_obs {
	double requested_qps;   /* rate asked for */
	double offered_qps;     /* rate the open-loop schedule actually offered in the
	                           measured window (Poisson arrivals differ from the requested
	                           rate by about 1/sqrt(N); binomial ones, frontload run's
	                           default, by rounding); <= 0: use requested_qps */
	double achieved_qps;    /* replies per second in the measured window */
	double p95_ms;          /* p95 latency of OK replies (ms) */
	double p95_lo_ms;       /* the p95's 95% interval (ms): the largest lower end and */
	double p95_hi_ms;       /* the largest upper end over instances; < 0: unknown (then
	                           the point p95 is both ends) */
	uint64_t latencies;     /* OK replies in the histograms (fewest over instances) */
	uint64_t requests;      /* requests due in the measured window */
	uint64_t errors;        /* of those: errors, timeouts and OVERLOADED replies */
	int driver_limited;     /* some instance's driver was the bottleneck */
	int miss_certain;       /* some instance's driver stopped the window early because its
	                           miss was certain (frontload-driver's miss-stop rule) */
	double window_s;        /* measured seconds; <= 0: unknown (then no edge allowance) */
};

/* qps by which o's achieved rate may fall short of its offered rate and still pass:
 * max((1 - min_achieved) x offered, (1 + 2 sqrt(2 x offered x L)) / window_s), L =
 * min(p95, SLA) in seconds (the window's edges: two sd of the difference between the
 * replies that leave the window and those the warm-up brings into it); only the first
 * when window_s or p95 is unknown. */
double fl_search_achieved_slack(const struct fl_search_config *c, const struct fl_search_obs *o);

/* The verdict of o under c; why (may be NULL) says what failed, "ok", or why not judged. */
enum fl_verdict fl_search_judge(const struct fl_search_config *c,
	const struct fl_search_obs *o, char *why, size_t whylen);

/* The step to run next. */
struct fl_search_step {
	double qps;
	enum fl_search_phase phase;
	double duration_s;      /* measured seconds */
	unsigned inflight;      /* driver in-flight ceiling (all connections) */
};

/* One step of the log. */
struct fl_search_probe {
	struct fl_search_step step;
	enum fl_verdict verdict;
	int pass;               /* counts as a pass (verdict PASS) */
	int miss;               /* counts as a miss (FAIL, or UNSURE at max_step_s) */
	double p95_ms, p95_lo_ms, p95_hi_ms;
	double achieved_qps;
};

enum fl_search_state { FL_SEARCH_RUNNING, FL_SEARCH_DONE };

struct fl_search {
	struct fl_search_config cfg;
	enum fl_search_state state;
	double capacity_qps;        /* from the probes; 0 while unknown */
	double saturation_qps;      /* S: highest reply rate of a judged step that fell short
	                               of its offered rate (by more than a pass allows, or,
	                               when it missed, by more than the window's edge
	                               noise) and answered more than any passing
	                               step (less is a collapse); 0 while none did */
	int capacity_saturated;     /* a probe saturated the leaf (else capacity >= it) */
	double lo;                  /* highest rate believed to pass; 0: none */
	double hi;                  /* lowest rate that missed; 0: none */
	struct fl_search_step next; /* the step handed out (or to hand out) next */
	unsigned nprobes;           /* entries of probes[] */
	unsigned judged_steps;      /* steps counted against max_steps */
	unsigned cap_probes;        /* capacity probes run */
	int reprobed;               /* a saturated probe was repeated, longer, once */
	double sat_probe_qps;       /* most replies/s of a saturated capacity probe; 0: none */
	unsigned finals;            /* final windows run */
	unsigned unjudged_run;      /* consecutive driver-limited repeats of next */
	int final_converges;        /* the pending final window would converge the search */
	char final_note[200];       /* why it would not (for the reason) */
	struct fl_search_probe probes[FL_SEARCH_MAX_PROBES];
	/* Outcome, once state is DONE. */
	int converged;              /* bracketed within the tolerance, confirmed, final passed */
	double sla_bound_qps;       /* converged: the final window's rate; else 0 */
	double lower_bound_qps;     /* not converged: highest clean pass; 0: none */
	double final_qps;           /* rate of the last final window; 0: none ran */
	char reason[320];           /* why it converged or did not, for the result */
};

/* Start a search (c must pass fl_search_config_check). */
void fl_search_init(struct fl_search *s, const struct fl_search_config *c);

/* The next step: returns 1 with *st set, or 0 when the search is done. Calling it again
 * before recording returns the same step. */
int fl_search_next(const struct fl_search *s, struct fl_search_step *st);

/* Record the measurement of the step fl_search_next handed out. Returns its verdict, or
 * -1 when the search is already done. why as fl_search_judge. */
int fl_search_record(struct fl_search *s, const struct fl_search_obs *o, char *why,
	size_t whylen);

/* End the search now (interrupted or a failure): not converged, lower bound = the highest
 * clean pass, reason = why. */
void fl_search_abort(struct fl_search *s, const char *why);

/* The highest rate the search runs a final window at: S / (1 + sat_margin) rounded down
 * to 0.1 qps, or INFINITY while S is unknown or sat_margin is 0. */
double fl_search_cap(const struct fl_search *s);

/* Upper bound on the steps still to come, final windows included (for an ETA). */
unsigned fl_search_remaining(const struct fl_search *s);

/* The in-flight ceiling for qps under c: n = qps x inflight_s (or x 2 x SLA), plus
 * 4 sqrt(n), rounded up, at least probe_inflight, times 2^doublings. */
unsigned fl_search_inflight(const struct fl_search_config *c, double qps, unsigned doublings);

/* Measured seconds of a judged step at qps: enough for the p95 interval target, within
 * [step_s, max_step_s]. */
double fl_search_step_seconds(const struct fl_search_config *c, double qps);

#endif
