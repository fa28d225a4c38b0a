/* deadline.h: whether a request can still meet its client's deadline, and the bookkeeping
 * of the work the leaf skipped because it could not.
 *
 * A request frame may carry the client's deadline (wire.h deadline_ns, client realtime).
 * The IO thread turns it into the leaf's monotonic clock once (fl_dl_local), so clock
 * reads later are cheap and steps of the realtime clock do not move it. Before each
 * expensive stage (the RANKER queue pop, extraction, ranking, the fanout) the leaf asks
 * fl_dl_decide whether the stages still to run, at a fast recent wall time per request
 * (each stage's 25th percentile, so a request skipped as would-miss would have missed in
 * about 3 cases of 4 or more), end before the deadline; when not, the request is answered
 * DEADLINE_EXCEEDED without doing them. A RANKER queue wait above --max-queue-ms sheds the request OVERLOADED,
 * deadline or not: the queue is bounded by time as well as by count.
 * Everything here is pure (no clocks, no globals), so tests feed it numbers.
 */
#ifndef FL_DEADLINE_H
#define FL_DEADLINE_H

#include <stdint.h>

#include "stages.h"

/* Where work was skipped, in request order; names as in the stats JSON. */
enum fl_dl_stage {
	FL_DL_ADMIT,    /* IO thread, frame decoded: deadline already passed */
	FL_DL_QUEUE,    /* RANKER queue pop: waited too long, or cannot make the deadline */
	FL_DL_EXTRACT,  /* before stage 3 */
	FL_DL_RANK,     /* before stage 5 */
	FL_DL_FANOUT,   /* before stage 6 */
	FL_DL_NSTAGES
};

enum fl_dl_verdict {
	FL_DL_GO = 0,      /* no deadline, or the rest fits before it */
	FL_DL_EXPIRED,     /* the deadline has passed */
	FL_DL_WOULD_MISS,  /* not passed, but now + the rest's expected time is past it */
	FL_DL_QUEUE_WAIT   /* waited in the queue longer than its bound */
};

/* "admit", "queue", "extract", "rank", "fanout". */
const char *fl_dl_stage_name(enum fl_dl_stage s);

/* The client's deadline (its realtime ns, 0 = none) on this host's monotonic clock, from
 * one reading of each clock (now_wall, now_mono). 0 when there is none; a deadline
 * already passed maps to a stamp <= now_mono (never 0, which would mean none). */
uint64_t fl_dl_local(uint64_t client_deadline_ns, uint64_t now_wall, uint64_t now_mono);

/* Verdict at now (monotonic ns) for a request due by deadline (monotonic, 0 = none) whose
 * remaining stages are expected to take rest_ns. */
enum fl_dl_verdict fl_dl_decide(uint64_t now, uint64_t deadline, uint64_t rest_ns);

/* Verdict at the queue pop: FL_DL_QUEUE_WAIT when now - enqueued > max_wait_ns (0 = no
 * bound), else as fl_dl_decide. */
enum fl_dl_verdict fl_dl_decide_queue(uint64_t now, uint64_t enqueued, uint64_t max_wait_ns,
	uint64_t deadline, uint64_t rest_ns);

/* A fast wall time per stage: a running estimate of its 25th percentile over finished OK
 * requests (stochastic approximation: a sample above moves it up by 1/32 of itself, one
 * below down by 3/32, so it settles where a quarter of the samples lie below). The first
 * sample seeds it; 0 until a stage has one. */
struct fl_dl_est {
	uint64_t wall_ns[FL_STAGE_COUNT];
	uint32_t miss_run;  /* FL_DL_WOULD_MISS verdicts in a row (fl_dl_probe) */
};

/* A would-miss verdict is a prediction from the estimate, and only OK requests refresh
 * it: if every request were skipped, an estimate that is too high (a slow spell, a
 * deadline shorter than the service time) would never come down and the leaf would
 * serve nothing again. So every FL_DL_PROBE_EVERY-th would-miss in a row goes ahead
 * (FL_DL_GO) as a probe. Returns the verdict to act on; GO resets the run. */
#define FL_DL_PROBE_EVERY 8u
enum fl_dl_verdict fl_dl_probe(struct fl_dl_est *e, enum fl_dl_verdict v);

/* Fold one request's stage wall times into e. */
void fl_dl_est_add(struct fl_dl_est *e, const uint64_t wall_ns[FL_STAGE_COUNT]);

/* Fast wall time of stages from..FL_STAGE_COUNT-1 (ns): the sum of their estimates, less
 * what the request already spent in each (done: its wall times so far, NULL for none; a
 * stage can start early, as the rank stage's input features are derived in stage 3). */
uint64_t fl_dl_est_rest(const struct fl_dl_est *e, enum fl_stage from,
	const uint64_t *done);

#endif
