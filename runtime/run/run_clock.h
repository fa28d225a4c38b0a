/* run_clock.h: another host's clock against this one's, from stamps taken around one
 * exchange, and its judgement against a bound.
 *
 * NTP-style with one server stamp: the request leaves at t0 (this host's realtime clock),
 * the server stamps ts (its realtime clock: snapshot_wall_ns of a stats snapshot), the
 * reply arrives at t3 (ours). ts happened between t0 and t3, so the server's clock is
 * ahead of ours by offset = ts - (t0 + t3) / 2, within +- (t3 - t0) / 2. Of several
 * samples the one with the shortest round trip is kept: the tightest bound.
 */
#ifndef FL_RUN_CLOCK_H
#define FL_RUN_CLOCK_H

#include <stdint.h>

/* One host's clock against this one's. */
struct fl_clock_sample {
	unsigned samples;    /* stamps seen; 0: nothing known (the other fields unset) */
	double offset_ms;    /* their clock minus ours, of the best sample (ms) */
	double uncert_ms;    /* half its round trip: the offset is exact within +- this */
	double rtt_ms;       /* its round trip t3 - t0 (ms) */
};

enum fl_clock_verdict {
	FL_CLOCK_UNKNOWN,    /* no sample */
	FL_CLOCK_OK,         /* |offset| + uncertainty <= bound: surely within */
	FL_CLOCK_UNSURE,     /* the interval straddles the bound */
	FL_CLOCK_BEYOND      /* |offset| - uncertainty > bound: surely beyond */
};

/* Add the sample (t0, ts, t3) in ns (see above) to c; kept when its round trip is the
 * shortest so far. A sample with t3 < t0 (our clock stepped back) is ignored. */
void fl_clock_add(struct fl_clock_sample *c, uint64_t t0_ns, uint64_t ts_ns, uint64_t t3_ns);

/* Judge c against bound_ms (> 0). */
enum fl_clock_verdict fl_clock_judge(const struct fl_clock_sample *c, double bound_ms);

/* "unknown", "ok", "unsure", "beyond". */
const char *fl_clock_verdict_name(enum fl_clock_verdict v);

#endif
