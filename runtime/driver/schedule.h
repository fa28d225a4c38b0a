/* schedule.h: the driver's open-loop send schedule (intended send times).
 *
 * An open-loop driver decides when each request *should* be sent before any reply comes
 * back, and measures latency from that intended time, so a stalled server shows up in the
 * tail instead of silently slowing the driver down (no coordinated omission; the idea
 * wrk2 popularised). A schedule is a deterministic stream of inter-arrival gaps for one
 * sender at rate qps: exponential gaps (a Poisson process, the default), a fixed
 * interval, or a binomial process over given windows. The driver gives each sender thread
 * its own schedule at qps / threads with a seed derived per thread, so the whole request
 * stream is reproducible.
 *
 * Binomial: a window of L seconds holds exactly round(qps x L) arrivals, each at a
 * uniformly random time in it (a Poisson process conditioned on its count: the gaps are
 * exponential spacings scaled to the window, so bursts stay as in a Poisson stream). A
 * search step of 4 s at 200/s offers 800 +- 28 requests (3.5%) under Poisson, so its
 * verdict near the knee says as much about the draw as about the rate; binomial offers
 * the rate asked for (frontload run --arrival binomial).
 */
#ifndef FL_SCHEDULE_H
#define FL_SCHEDULE_H

#include <stdint.h>

#include "rng.h"

enum fl_arrival {
	FL_ARRIVAL_POISSON = 0,  /* exponential inter-arrival gaps with mean 1/qps */
	FL_ARRIVAL_FIXED = 1,    /* every gap exactly 1/qps */
	FL_ARRIVAL_BINOMIAL = 2  /* round(qps x L) uniform arrivals per window of L s */
};

#define FL_SCHEDULE_MAX_WINDOWS 4u

struct fl_schedule {
	enum fl_arrival arrival;
	double gap_mean_ns;   /* 1e9 / qps */
	double next_ns;       /* intended time of the next request, ns after start */
	uint64_t issued;      /* requests scheduled so far (not the end a spent binomial
	                         schedule returns) */
	struct fl_rng rng;
	/* Binomial only: the windows (ns), the next one to draw, and the current draw. */
	uint64_t win_ns[FL_SCHEDULE_MAX_WINDOWS];
	unsigned nwin, win;
	uint64_t win_start_ns;  /* start of the window being drawn */
	uint64_t win_len_ns;    /* its length */
	uint64_t win_left;      /* its arrivals still to hand out */
	double win_u;           /* the last arrival's place in it, 0..1 */
};

/* A schedule at qps (> 0) requests per second starting at offset 0. Returns 0, or -1 when
 * qps is not a positive finite number. */
int fl_schedule_init(struct fl_schedule *s, enum fl_arrival arrival, double qps, uint64_t seed);

/* Binomial: the consecutive windows from offset 0, n (1..FL_SCHEDULE_MAX_WINDOWS) lengths
 * in ns (e.g. warm-up, then the measured window). After the last one fl_schedule_next
 * returns its end, once the arrivals are spent. Returns 0, or -1 for a bad n or a
 * schedule that is not binomial. */
int fl_schedule_windows(struct fl_schedule *s, const uint64_t *len_ns, unsigned n);

/* Intended send time (ns after start) of the next request, then advance. The first request
 * is due one gap after start (for Poisson, a random gap), so threads do not fire in step.
 * Binomial without windows draws Poisson gaps. */
uint64_t fl_schedule_next(struct fl_schedule *s);

/* Change the rate from now on (the next gap is drawn at the new rate; binomial: from the
 * next window on). Returns 0 or -1. */
int fl_schedule_set_qps(struct fl_schedule *s, double qps);

/* Parse "poisson", "fixed" or "binomial". Returns 0 or -1. */
int fl_arrival_parse(const char *text, enum fl_arrival *out);

#endif
