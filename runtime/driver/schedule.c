/* schedule.c: deterministic open-loop inter-arrival times (Poisson, fixed or binomial). */
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

int fl_schedule_windows(struct fl_schedule *s, const uint64_t *len_ns, unsigned n)
{
	if (s->arrival != FL_ARRIVAL_BINOMIAL || n == 0 || n > FL_SCHEDULE_MAX_WINDOWS)
		return -1;
	memcpy(s->win_ns, len_ns, n * sizeof *len_ns);
	s->nwin = n;
	s->win = 0;
	s->win_start_ns = s->win_len_ns = 0;
	s->win_left = 0;
	return 0;
}

static double next_gap(struct fl_schedule *s)
{
	if (s->arrival == FL_ARRIVAL_FIXED)
		return s->gap_mean_ns;
	/* Inverse-CDF exponential; 1 - u lies in (0, 1], so the log is finite. */
	return -log(1.0 - fl_rng_unit(&s->rng)) * s->gap_mean_ns;
}

/* The next window with arrivals in it: 1, or 0 when none is left. */
static int window_begin(struct fl_schedule *s)
{
	while (s->win < s->nwin) {
		uint64_t len = s->win_ns[s->win++];
		s->win_start_ns += s->win_len_ns;
		s->win_len_ns = len;
		s->win_left = (uint64_t)llround((double)len / s->gap_mean_ns);
		s->win_u = 0;
		if (s->win_left > 0)
			return 1;
	}
	return 0;
}

/* The next of the window's uniform arrivals in increasing order: with m left, the
 * smallest of m uniforms on (u, 1) lies at 1 - (1 - u) V^(1/m), V uniform on (0, 1]. */
static uint64_t binomial_next(struct fl_schedule *s)
{
	double v, t;

	if (s->win_left == 0 && !window_begin(s))
		return s->win_start_ns + s->win_len_ns;
	s->issued++;
	v = 1.0 - fl_rng_unit(&s->rng);
	s->win_u = 1.0 - (1.0 - s->win_u) * pow(v, 1.0 / (double)s->win_left);
	s->win_left--;
	t = (double)s->win_start_ns + s->win_u * (double)s->win_len_ns;
	/* Rounding must not carry an arrival into the next window. */
	if (t >= (double)(s->win_start_ns + s->win_len_ns))
		t = (double)(s->win_start_ns + s->win_len_ns - 1);
	return (uint64_t)t;
}

uint64_t fl_schedule_next(struct fl_schedule *s)
{
	if (s->arrival == FL_ARRIVAL_BINOMIAL && s->nwin > 0) {
		uint64_t t = binomial_next(s);
		s->next_ns = (double)t;
		return t;
	}
	s->issued++;
	s->next_ns += next_gap(s);
	return (uint64_t)s->next_ns;
}

int fl_arrival_parse(const char *text, enum fl_arrival *out)
{
	if (strcmp(text, "poisson") == 0)
		*out = FL_ARRIVAL_POISSON;
	else if (strcmp(text, "fixed") == 0)
		*out = FL_ARRIVAL_FIXED;
	else if (strcmp(text, "binomial") == 0)
		*out = FL_ARRIVAL_BINOMIAL;
	else
		return -1;
	return 0;
}
