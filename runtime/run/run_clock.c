/* run_clock.c: clock offset from one exchange's stamps, and its verdict (run_clock.h). */
#include "run_clock.h"

#include <math.h>

void fl_clock_add(struct fl_clock_sample *c, uint64_t t0_ns, uint64_t ts_ns, uint64_t t3_ns)
{
	if (t3_ns < t0_ns)
		return;
	double rtt_ms = (double)(t3_ns - t0_ns) / 1e6;
	/* Differences first: the stamps are ~1.8e18, beyond a double's exact integers. */
	double mid_ms = (double)(int64_t)(ts_ns - t0_ns) / 1e6 - rtt_ms / 2;
	if (c->samples++ > 0 && rtt_ms >= c->rtt_ms)
		return;
	c->offset_ms = mid_ms;
	c->rtt_ms = rtt_ms;
	c->uncert_ms = rtt_ms / 2;
}

enum fl_clock_verdict fl_clock_judge(const struct fl_clock_sample *c, double bound_ms)
{
	if (c->samples == 0)
		return FL_CLOCK_UNKNOWN;
	double a = fabs(c->offset_ms);
	if (a + c->uncert_ms <= bound_ms)
		return FL_CLOCK_OK;
	if (a - c->uncert_ms > bound_ms)
		return FL_CLOCK_BEYOND;
	return FL_CLOCK_UNSURE;
}

const char *fl_clock_verdict_name(enum fl_clock_verdict v)
{
	switch (v) {
	case FL_CLOCK_OK: return "ok";
	case FL_CLOCK_UNSURE: return "unsure";
	case FL_CLOCK_BEYOND: return "beyond";
	case FL_CLOCK_UNKNOWN: break;
	}
	return "unknown";
}
