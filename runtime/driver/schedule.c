/* schedule.c: deterministic open-loop inter-arrival times (Poisson or fixed). */
#include "schedule.h"

#include <math.h>
#include <string.h>

int fl_schedule_set_qps(struct fl_schedule *s, double qps)
{
	if (!(qps > 0) || !isfinite(qps))
		return -1;
	s->gap_mean_ns = 1e9 / qps;
	return 0;
}

int fl_schedule_init(struct fl_schedule *s, enum fl_arrival arrival, double qps, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->arrival = arrival;
	fl_rng_seed(&s->rng, seed);
	return fl_schedule_set_qps(s, qps);
}

static double next_gap(struct fl_schedule *s)
{
	if (s->arrival == FL_ARRIVAL_FIXED)
		return s->gap_mean_ns;
	/* Inverse-CDF exponential; 1 - u lies in (0, 1], so the log is finite. */
	return -log(1.0 - fl_rng_unit(&s->rng)) * s->gap_mean_ns;
}

uint64_t fl_schedule_next(struct fl_schedule *s)
{
	s->next_ns += next_gap(s);
	s->issued++;
	return (uint64_t)s->next_ns;
}

int fl_arrival_parse(const char *text, enum fl_arrival *out)
{
	if (strcmp(text, "poisson") == 0)
		*out = FL_ARRIVAL_POISSON;
	else if (strcmp(text, "fixed") == 0)
		*out = FL_ARRIVAL_FIXED;
	else
		return -1;
	return 0;
}
