/* run_search.c: the SLA search state machine (bracket, bisect, re-measure); pure logic. */
#include "run_search.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *fl_search_phase_name(enum fl_search_phase p)
{
	switch (p) {
	case FL_PHASE_BRACKET: return "bracket";
	case FL_PHASE_BISECT: return "bisect";
	case FL_PHASE_REMEASURE: return "remeasure";
	case FL_PHASE_FINAL: return "final";
	case FL_PHASE_FIXED: return "fixed";
	}
	return "?";
}

void fl_search_config_default(struct fl_search_config *c)
{
	c->start_qps = 4;
	c->max_qps = 100000;
	c->growth = 2;
	c->sla_p95_ms = 700;
	c->tolerance = 0.05;
	c->max_steps = 12;
	c->min_achieved = 0.95;
	c->max_error_rate = 0.01;
}

int fl_search_config_check(const struct fl_search_config *c, char *err, size_t errlen)
{
	const char *bad = NULL;

	if (!(c->start_qps > 0) || !isfinite(c->start_qps))
		bad = "start rate must be > 0";
	else if (!(c->max_qps >= c->start_qps) || !isfinite(c->max_qps))
		bad = "max rate must be >= the start rate";
	else if (!(c->growth > 1) || !isfinite(c->growth))
		bad = "growth must be > 1";
	else if (!(c->sla_p95_ms > 0) || !isfinite(c->sla_p95_ms))
		bad = "SLA must be > 0 ms";
	else if (!(c->tolerance > 0) || !(c->tolerance < 10))
		bad = "tolerance must be in (0, 10)";
	else if (c->max_steps < 1 || c->max_steps > FL_SEARCH_MAX_PROBES)
		bad = "max steps must be in 1..64";
	else if (!(c->min_achieved >= 0) || !(c->min_achieved <= 1))
		bad = "min achieved fraction must be in [0, 1]";
	else if (!(c->max_error_rate > 0) || !(c->max_error_rate <= 1))
		bad = "max error rate must be in (0, 1]";
	if (bad == NULL)
		return 0;
	snprintf(err, errlen, "%s", bad);
	return -1;
}

/* Append ", text" (or text when out is empty) to out. */
static void why_add(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void why_add(char *out, size_t n, const char *fmt, ...)
{
	size_t len = strlen(out);
	va_list ap;

	if (len > 0 && len + 2 < n) {
		memcpy(out + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(out + len, n - len, fmt, ap);
	va_end(ap);
}

int fl_search_judge(const struct fl_search_config *c, const struct fl_search_obs *o,
	char *why, size_t whylen)
{
	char buf[256] = "";
	double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;

	if (o->requests == 0) {
		why_add(buf, sizeof buf, "no requests were due in the measured window");
	} else {
		if (!(o->p95_ms <= c->sla_p95_ms))
			why_add(buf, sizeof buf, "p95 %.1f ms > SLA %g ms", o->p95_ms, c->sla_p95_ms);
		if (!(o->achieved_qps >= c->min_achieved * ref))
			why_add(buf, sizeof buf, "achieved %.1f qps < %.0f%% of offered %.1f qps",
				o->achieved_qps, c->min_achieved * 100, ref);
		double rate = (double)o->errors / (double)o->requests;
		if (!(rate < c->max_error_rate))
			why_add(buf, sizeof buf, "errors %.2f%% >= %g%%", rate * 100,
				c->max_error_rate * 100);
	}
	int pass = buf[0] == 0;
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", pass ? "ok" : buf);
	return pass;
}

static void search_finish(struct fl_search *s, int converged, double chosen, const char *fmt,
	...) __attribute__((format(printf, 4, 5)));
static void search_finish(struct fl_search *s, int converged, double chosen, const char *fmt,
	...)
{
	va_list ap;

	s->state = FL_SEARCH_DONE;
	s->converged = converged;
	s->chosen_qps = chosen;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof s->reason, fmt, ap);
	va_end(ap);
}

/* qps has been confirmed: passed twice, or passed a re-measure, and never failed. */
static int search_confirmed(const struct fl_search *s, double qps)
{
	unsigned passes = 0;

	for (unsigned i = 0; i < s->nprobes; i++) {
		if (s->probes[i].qps != qps)
			continue;
		if (!s->probes[i].pass)
			return 0;
		passes++;
	}
	return passes >= 2;
}

/* The highest rate below limit that passed and never failed; 0 when none. */
static double search_clean_pass_below(const struct fl_search *s, double limit)
{
	double best = 0;

	for (unsigned i = 0; i < s->nprobes; i++) {
		double q = s->probes[i].qps;
		if (!s->probes[i].pass || q >= limit || q <= best)
			continue;
		int failed = 0;
		for (unsigned j = 0; j < s->nprobes; j++)
			failed |= s->probes[j].qps == q && !s->probes[j].pass;
		if (!failed)
			best = q;
	}
	return best;
}

/* The geometric midpoint of lo and hi, rounded to 0.1 qps when that keeps it inside. */
static double search_mid(double lo, double hi)
{
	double mid = sqrt(lo * hi);
	double r = round(mid * 10) / 10;
	return r > lo && r < hi ? r : mid;
}

/* Choose the next probe, or finish. */
static void search_decide(struct fl_search *s)
{
	const struct fl_search_config *c = &s->cfg;
	unsigned budget = c->max_steps > s->nprobes ? c->max_steps - s->nprobes : 0;

	if (s->state == FL_SEARCH_DONE)
		return;
	if (s->lo == 0 && s->hi > 0) {
		search_finish(s, 0, 0, "even START qps misses SLA: the start rate %g qps failed%s "
			"(p95 SLA %g ms); lower --start-qps or check the logs", c->start_qps,
			s->nprobes > 1 ? " its re-measure" : "", c->sla_p95_ms);
		return;
	}
	if (s->hi == 0) {
		if (s->lo >= c->max_qps) {
			search_finish(s, 0, s->lo, "SLA never reached below max: %g qps (--max-qps) "
				"still meets the SLA", c->max_qps);
			return;
		}
		if (budget == 0) {
			search_finish(s, 0, s->lo, "step budget (%u steps) ran out before any rate "
				"missed the SLA; %g qps passed", c->max_steps, s->lo);
			return;
		}
		s->next_qps = s->lo == 0 ? c->start_qps : fmin(s->lo * c->growth, c->max_qps);
		s->next_phase = FL_PHASE_BRACKET;
		return;
	}

	double gap = (s->hi - s->lo) / s->lo;
	int confirmed = search_confirmed(s, s->lo);
	double mid = search_mid(s->lo, s->hi);
	/* One probe stays in reserve for the re-measure unless lo is already confirmed. */
	if (gap > c->tolerance && budget >= (confirmed ? 1u : 2u) && mid > s->lo &&
	    mid < s->hi) {
		s->next_qps = mid;
		s->next_phase = FL_PHASE_BISECT;
		return;
	}
	if (!confirmed && budget >= 1) {
		s->next_qps = s->lo;
		s->next_phase = FL_PHASE_REMEASURE;
		return;
	}
	if (confirmed && gap <= c->tolerance)
		search_finish(s, 1, s->lo, "%g qps meets the SLA (confirmed by a re-measure), "
			"%g qps misses it: %.1f%% apart, within the %g%% tolerance", s->lo, s->hi,
			gap * 100, c->tolerance * 100);
	else if (gap > c->tolerance)
		search_finish(s, 0, s->lo, "step budget (%u steps) ran out: the knee lies between "
			"%g and %g qps (%.1f%% apart, tolerance %g%%)%s", c->max_steps, s->lo, s->hi,
			gap * 100, c->tolerance * 100, confirmed ? "" : "; the lower rate was not "
			"re-measured");
	else
		search_finish(s, 0, s->lo, "step budget (%u steps) ran out before %g qps could be "
			"re-measured", c->max_steps, s->lo);
}

void fl_search_init(struct fl_search *s, const struct fl_search_config *c)
{
	memset(s, 0, sizeof *s);
	s->cfg = *c;
	if (s->cfg.max_steps > FL_SEARCH_MAX_PROBES)
		s->cfg.max_steps = FL_SEARCH_MAX_PROBES;
	s->state = FL_SEARCH_RUNNING;
	search_decide(s);
}

int fl_search_next(struct fl_search *s, double *qps, enum fl_search_phase *phase)
{
	if (s->state == FL_SEARCH_DONE)
		return 0;
	*qps = s->next_qps;
	*phase = s->next_phase;
	return 1;
}

int fl_search_record(struct fl_search *s, const struct fl_search_obs *o, char *why,
	size_t whylen)
{
	if (s->state == FL_SEARCH_DONE || s->nprobes >= FL_SEARCH_MAX_PROBES)
		return -1;
	double q = s->next_qps;
	int pass = fl_search_judge(&s->cfg, o, why, whylen);
	s->probes[s->nprobes++] = (struct fl_search_probe){ q, s->next_phase, pass, o->p95_ms };

	if (s->next_phase == FL_PHASE_REMEASURE) {
		/* A failed re-measure: q is not a safe rate. It bounds the knee from above, and
		 * the next lower rate that never failed becomes the candidate. */
		if (!pass) {
			s->hi = q;
			s->lo = search_clean_pass_below(s, q);
		}
	} else if (pass) {
		if (q > s->lo)
			s->lo = q;
	} else if (s->hi == 0 || q < s->hi) {
		s->hi = q;
	}
	search_decide(s);
	return pass;
}

void fl_search_abort(struct fl_search *s, const char *why)
{
	if (s->state == FL_SEARCH_DONE)
		return;
	search_finish(s, 0, s->lo, "%s", why);
}

unsigned fl_search_remaining(const struct fl_search *s)
{
	const struct fl_search_config *c = &s->cfg;
	unsigned budget = c->max_steps > s->nprobes ? c->max_steps - s->nprobes : 0;

	if (s->state == FL_SEARCH_DONE)
		return 0;
	if (s->hi == 0 || s->lo == 0)
		return budget;
	/* Bisection halves log(hi / lo) per probe; then one re-measure. */
	unsigned n = search_confirmed(s, s->lo) ? 0 : 1;
	double ratio = s->hi / s->lo;
	while (ratio - 1 > c->tolerance && n < budget) {
		ratio = sqrt(ratio);
		n++;
	}
	return n < budget ? n : budget;
}
