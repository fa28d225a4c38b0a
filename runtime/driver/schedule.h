/* schedule.h: the driver's open-loop send schedule (intended send times).
 *
 * An open-loop driver decides when each request *should* be sent before any reply comes
 * back, and measures latency from that intended time, so a stalled server shows up in the
 * tail instead of silently slowing the driver down (no coordinated omission; the idea
 * wrk2 popularised). A schedule is a deterministic stream of inter-arrival gaps for one
 * sender at rate qps: exponential gaps (a Poisson process, the default) or a fixed
 * interval. The driver gives each sender thread its own schedule at qps / threads with a
 * seed derived per thread, so the whole request stream is reproducible.
 */
#ifndef FL_SCHEDULE_H
#define FL_SCHEDULE_H

#include <stdint.h>

#include "rng.h"

enum fl_arrival {
	FL_ARRIVAL_POISSON = 0,  /* exponential inter-arrival gaps with mean 1/qps */
	FL_ARRIVAL_FIXED = 1     /* every gap exactly 1/qps */
};

struct fl_schedule {
	enum fl_arrival arrival;
	double gap_mean_ns;   /* 1e9 / qps */
	double next_ns;       /* intended time of the next request, ns after start */
	uint64_t issued;      /* requests scheduled so far */
	struct fl_rng rng;
};

/* A schedule at qps (> 0) requests per second starting at offset 0. Returns 0, or -1 when
 * qps is not a positive finite number. */
int fl_schedule_init(struct fl_schedule *s, enum fl_arrival arrival, double qps, uint64_t seed);

/* Intended send time (ns after start) of the next request, then advance. The first request
 * is due one gap after start (for Poisson, a random gap), so threads do not fire in step. */
uint64_t fl_schedule_next(struct fl_schedule *s);

/* Change the rate from now on (the next gap is drawn at the new rate). Returns 0 or -1. */
int fl_schedule_set_qps(struct fl_schedule *s, double qps);

/* Parse "poisson" or "fixed". Returns 0 or -1. */
int fl_arrival_parse(const char *text, enum fl_arrival *out);

#endif
