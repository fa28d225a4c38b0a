/* run_search.c: the SLA search state machine (probe, bracket, bisect, re-measure, final
 * window); pure logic. */
#include "run_search.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "quantile_ci.h"

#define SEARCH_SATURATED 0.85   /* a probe whose replies fall below this x offered */
#define SEARCH_START_FRAC 0.8   /* the bracket starts at this x capacity */
#define SEARCH_MAX_UNJUDGED 2u  /* driver-limited repeats of one step before giving up */
#define SEARCH_REPROBE_X 4.0    /* a saturated probe is repeated this x longer, once */
#define SEARCH_REPROBE_PAST 1.5   /* ... at no more than this x what it answered */

const char *fl_search_phase_name(enum fl_search_phase p)
{
	switch (p) {
	case FL_PHASE_BRACKET: return "bracket";
	case FL_PHASE_BISECT: return "bisect";
	case FL_PHASE_REMEASURE: return "remeasure";
	case FL_PHASE_FINAL: return "final";
	case FL_PHASE_FIXED: return "fixed";
	case FL_PHASE_PROBE: return "probe";
	}
	return "?";
}

const char *fl_verdict_name(enum fl_verdict v)
{
	switch (v) {
	case FL_VERDICT_FAIL: return "fail";
	case FL_VERDICT_PASS: return "pass";
	case FL_VERDICT_UNSURE: return "unsure";
	case FL_VERDICT_UNJUDGED: return "unjudged";
	}
	return "?";
}

void fl_search_config_default(struct fl_search_config *c)
{
	c->start_qps = 4;
	c->max_qps = 100000;
	c->growth = 4;
	c->sla_p95_ms = 700;
	c->tolerance = 0.05;
	c->sat_margin = 0.05;
	c->max_steps = 16;
	c->max_finals = 3;
	c->min_achieved = 0.95;
	c->max_error_rate = 0.01;
	c->probe_s = 2;
	c->step_s = 15;
	c->max_step_s = 60;
	c->final_s = 300;
	c->ci_pct = 1;
	c->probe_inflight = 64;
	c->inflight_s = 0;  /* frontload run sets its driver timeout */
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
	else if (!(c->sat_margin >= 0) || !(c->sat_margin < 10))
		bad = "saturation margin must be in [0, 10)";
	else if (c->max_steps < 1 || c->max_steps > 64)
		bad = "max steps must be in 1..64";
	else if (c->max_finals < 1 || c->max_finals > 8)
		bad = "max final windows must be in 1..8";
	else if (!(c->min_achieved >= 0) || !(c->min_achieved <= 1))
		bad = "min achieved fraction must be in [0, 1]";
	else if (!(c->max_error_rate > 0) || !(c->max_error_rate <= 1))
		bad = "max error rate must be in (0, 1]";
	else if (!(c->probe_s > 0) || !(c->step_s > 0) || !(c->final_s > 0))
		bad = "probe, step and final seconds must be > 0";
	else if (!(c->max_step_s >= c->step_s) || !isfinite(c->max_step_s))
		bad = "max step seconds must be >= the step seconds";
	else if (!(c->ci_pct > 0) || !(c->ci_pct < 5))
		bad = "p95 interval target must be in (0, 5) percentile points";
	else if (c->probe_inflight < 1)
		bad = "probe in-flight ceiling must be >= 1";
	else if (!(c->inflight_s >= 0) || !isfinite(c->inflight_s))
		bad = "in-flight seconds must be >= 0";
	if (bad == NULL)
		return 0;
	snprintf(err, errlen, "%s", bad);
	return -1;
}

/* Append "; text" (or text when out is empty) to out. */
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

/* The latency part of a verdict: where the SLA lies against the p95's interval. */
static enum fl_verdict judge_latency(const struct fl_search_config *c,
	const struct fl_search_obs *o, char *buf, size_t n)
{
	double lo = o->p95_lo_ms >= 0 ? o->p95_lo_ms : o->p95_ms;
	double hi = o->p95_hi_ms >= 0 ? o->p95_hi_ms : o->p95_ms;

	if (o->latencies == 0 || !isfinite(o->p95_ms)) {
		why_add(buf, n, "no OK replies: no p95");
		return FL_VERDICT_FAIL;
	}
	if (hi <= c->sla_p95_ms)
		return FL_VERDICT_PASS;
	if (lo > c->sla_p95_ms) {
		why_add(buf, n, "p95 %.1f ms > SLA %g ms (95%% interval %.1f..%.1f ms)", o->p95_ms,
			c->sla_p95_ms, lo, hi);
		return FL_VERDICT_FAIL;
	}
	why_add(buf, n, "SLA %g ms inside the p95's 95%% interval %.1f..%.1f ms (p95 %.1f ms, "
		"%llu latencies)", c->sla_p95_ms, lo, hi, o->p95_ms,
		(unsigned long long)o->latencies);
	return FL_VERDICT_UNSURE;
}

/* The window's edge effect (qps; 0 when the window or p95 is unknown): see below. */
static double search_edge_noise(const struct fl_search_config *c,
	const struct fl_search_obs *o)
{
	double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;
	if (!(o->window_s > 0) || !isfinite(o->p95_ms))
		return 0;
	double lat_s = fmin(o->p95_ms, c->sla_p95_ms) / 1000;
	return (1 + 2 * sqrt(2 * ref * lat_s)) / o->window_s;
}

/* How far (qps) achieved may fall below offered: (1 - min_achieved) x offered, or, when
 * larger, the window's edge effect. achieved counts the OK replies that arrive in the
 * window, whatever their send time: the requests sent in its last L = min(p95, SLA)
 * seconds answer after it, and the warm-up's last L seconds answer inside it, two
 * Poisson counts of mean offered x L that cancel on average; their difference is allowed
 * two standard deviations, sqrt(2 x offered x L) each, and one request, over the window.
 * At a few qps that is more than 5%. It used to be every reply in flight at the close,
 * 1 + offered x L: in a 4 s step at 240 qps, 36 qps (15%), so steps the leaf could not
 * keep up with passed (237.4 qps: 241.75 offered, 212 answered, p95 589 ms) and their
 * 15 s final windows then missed. Past the SLA, latency is the latency test's to judge. */
double fl_search_achieved_slack(const struct fl_search_config *c, const struct fl_search_obs *o)
{
	double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;
	return fmax((1 - c->min_achieved) * ref, search_edge_noise(c, o));
}

enum fl_verdict fl_search_judge(const struct fl_search_config *c,
	const struct fl_search_obs *o, char *why, size_t whylen)
{
	char buf[320] = "";
	double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;
	enum fl_verdict v = FL_VERDICT_PASS;

	if (o->requests == 0) {
		why_add(buf, sizeof buf, "no requests were due in the measured window");
		v = FL_VERDICT_FAIL;
	} else if (o->driver_limited) {
		why_add(buf, sizeof buf, "not judged: the driver's in-flight ceiling held requests "
			"back (driver_limited)");
		v = FL_VERDICT_UNJUDGED;
	} else {
		double slack = fl_search_achieved_slack(c, o);
		if (!(o->achieved_qps >= ref - slack))
			why_add(buf, sizeof buf, "achieved %.1f qps < offered %.1f qps - %.2f "
				"(the larger of %.0f%% and the noise of the window's edges)",
				o->achieved_qps, ref, slack, (1 - c->min_achieved) * 100);
		double rate = (double)o->errors / (double)o->requests;
		if (!(rate < c->max_error_rate))
			why_add(buf, sizeof buf, "errors %.2f%% >= %g%%", rate * 100,
				c->max_error_rate * 100);
		v = buf[0] ? FL_VERDICT_FAIL : FL_VERDICT_PASS;
		enum fl_verdict lat = judge_latency(c, o, buf, sizeof buf);
		if (v == FL_VERDICT_PASS)
			v = lat;
		if (o->miss_certain) {
			/* What it measured is the window's start; its driver stopped it once no end
			 * could pass (over 5% of the requests due over the SLA, or the error limit). */
			why_add(buf, sizeof buf, "stopped after %.1f s: its miss was certain", o->window_s);
			v = FL_VERDICT_FAIL;
		}
	}
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", v == FL_VERDICT_PASS ? "ok" : buf);
	return v;
}

unsigned fl_search_inflight(const struct fl_search_config *c, double qps, unsigned doublings)
{
	double n;

	if (c->inflight_s > 0) {
		/* A 300 s final window sees bursts of arrivals several deviations above the
		 * mean: a ceiling at the mean alone would bind on them (driver_limited). */
		n = qps * c->inflight_s;
		n = ceil(n + 4 * sqrt(n));
	} else {
		n = ceil(qps * 2 * c->sla_p95_ms / 1000);
	}
	if (n < c->probe_inflight)
		n = c->probe_inflight;
	n = ldexp(n, (int)(doublings < 16 ? doublings : 16));
	return n < 1e9 ? (unsigned)n : 1000000000u;
}

double fl_search_step_seconds(const struct fl_search_config *c, double qps)
{
	double need = fl_ci_samples_for(0.95, FL_CI_Z95, c->ci_pct) / qps;
	return fmin(c->max_step_s, fmax(c->step_s, need));
}

static void search_finish(struct fl_search *s, int converged, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Rate q's record: judged passes and misses. */
static void search_tally(const struct fl_search *s, double q, unsigned *pass, unsigned *miss)
{
	*pass = *miss = 0;
	for (unsigned i = 0; i < s->nprobes; i++)
		if (s->probes[i].step.qps == q) {
			*pass += (unsigned)s->probes[i].pass;
			*miss += (unsigned)s->probes[i].miss;
		}
}

/* q passed twice, or passed a re-measure, and never missed. */
static int search_confirmed(const struct fl_search *s, double q)
{
	unsigned pass, miss;
	search_tally(s, q, &pass, &miss);
	return pass >= 2 && miss == 0;
}

/* The highest rate below limit that passed and never missed; 0 when none. */
static double search_clean_pass_below(const struct fl_search *s, double limit)
{
	double best = 0;
	for (unsigned i = 0; i < s->nprobes; i++) {
		double q = s->probes[i].step.qps;
		unsigned pass, miss;
		if (!s->probes[i].pass || q >= limit || q <= best)
			continue;
		search_tally(s, q, &pass, &miss);
		if (miss == 0)
			best = q;
	}
	return best;
}

/* The most OK replies/s any judged step (not a probe) of at least min_s measured seconds
 * answered, or with passed only a step that passed; 0 when none. */
static double search_best_answered(const struct fl_search *s, int passed, double min_s)
{
	double best = 0;
	for (unsigned i = 0; i < s->nprobes; i++) {
		const struct fl_search_probe *p = &s->probes[i];
		if (p->step.phase != FL_PHASE_PROBE && p->verdict != FL_VERDICT_UNJUDGED &&
		    (!passed || p->pass) && p->step.duration_s >= min_s &&
		    isfinite(p->achieved_qps))
			best = fmax(best, p->achieved_qps);
	}
	return best;
}

static void search_finish(struct fl_search *s, int converged, const char *fmt, ...)
{
	va_list ap;

	s->state = FL_SEARCH_DONE;
	s->converged = converged;
	s->sla_bound_qps = converged ? s->final_qps : 0;
	s->lower_bound_qps = converged ? 0 : search_clean_pass_below(s, INFINITY);
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof s->reason, fmt, ap);
	va_end(ap);
}

double fl_search_cap(const struct fl_search *s)
{
	if (!(s->saturation_qps > 0) || !(s->cfg.sat_margin > 0))
		return INFINITY;
	double cap = s->saturation_qps / (1 + s->cfg.sat_margin);
	double r = floor(cap * 10) / 10;
	return r > 0 ? r : cap;
}

/* Apply what saturation says (run_search.h): hi at most S, lo at most the cap. */
static void search_clamp_to_saturation(struct fl_search *s)
{
	double cap = fl_search_cap(s);
	if (!isfinite(cap))
		return;  /* S unknown, or the cap is off */
	if (s->lo > cap)
		s->lo = search_clean_pass_below(s, nextafter(cap, INFINITY));
	if (s->hi == 0 || s->hi > s->saturation_qps)
		s->hi = s->saturation_qps;
}

/* hi stands for saturation, not for a rate that missed the SLA. */
static int search_hi_is_saturation(const struct fl_search *s)
{
	return isfinite(fl_search_cap(s)) && s->hi == s->saturation_qps;
}

/* The geometric midpoint of lo and hi, rounded to 0.1 qps when that keeps it inside. */
static double search_mid(double lo, double hi)
{
	double mid = sqrt(lo * hi);
	double r = round(mid * 10) / 10;
	return r > lo && r < hi ? r : mid;
}

/* The bracket's step factor: twice the tolerance, so a pass and a fail one step apart
 * need one bisection. */
static double search_bracket_step(const struct fl_search_config *c)
{
	return 1 + 2 * c->tolerance;
}

static void search_set(struct fl_search *s, double q, enum fl_search_phase ph)
{
	const struct fl_search_config *c = &s->cfg;
	/* Bracket rates come from C x step^k: 0.1 qps is their printed precision, and the
	 * final window may run at one (sla_bound_qps 173.6533 said more than was known). */
	double r = round(q * 10) / 10;
	if (ph == FL_PHASE_BRACKET && r > 0 && r != s->lo && r != s->hi &&
	    fabs(r - q) <= 0.25 * c->tolerance * q)
		q = r;
	s->next.qps = fmin(q, c->max_qps);
	s->next.phase = ph;
	s->next.duration_s = ph == FL_PHASE_FINAL ? c->final_s : ph == FL_PHASE_PROBE ?
		c->probe_s : fl_search_step_seconds(c, s->next.qps);
	s->next.inflight = ph == FL_PHASE_PROBE ? c->probe_inflight :
		fl_search_inflight(c, s->next.qps, 0);
	s->unjudged_run = 0;
}

/* The search has its candidate lo: run the final window there (converges says whether
 * its pass would converge the search, note says why not), or finish when none is left. */
static void search_to_final(struct fl_search *s, int converges, const char *note)
{
	if (s->lo <= 0 || s->finals >= s->cfg.max_finals) {
		search_finish(s, 0, "%s", note);
		return;
	}
	s->final_converges = converges;
	snprintf(s->final_note, sizeof s->final_note, "%s", note);
	search_set(s, s->lo, FL_PHASE_FINAL);
}

/* Both ends known: bisect, re-measure, or go to the final window. */
static void search_decide_bracketed(struct fl_search *s, unsigned budget)
{
	const struct fl_search_config *c = &s->cfg;
	char note[200];
	double gap = (s->hi - s->lo) / s->lo;
	int confirmed = search_confirmed(s, s->lo);
	double mid = search_mid(s->lo, s->hi);
	double cap = fl_search_cap(s);
	int sat = search_hi_is_saturation(s);
	/* A lo at the cap is as close to S as a final candidate may be; within a quarter of
	 * the tolerance below it, a bisection step there would tell nothing new (120.3 passed,
	 * then 120.5 at the cap). */
	int within = gap <= c->tolerance || (sat && s->lo * (1 + c->tolerance / 4) >= cap);

	if (mid > cap && cap > s->lo)
		mid = cap;
	/* One step stays in reserve for the re-measure unless lo is already confirmed. */
	if (!within && budget >= (confirmed ? 1u : 2u) && mid > s->lo && mid < s->hi) {
		search_set(s, mid, FL_PHASE_BISECT);
		return;
	}
	if (!confirmed && budget >= 1) {
		search_set(s, s->lo, FL_PHASE_REMEASURE);
		return;
	}
	if (confirmed && within && sat) {
		snprintf(note, sizeof note, "%g qps met the SLA twice; the leaf saturated at %.1f "
			"qps, and no rate above %g qps (saturation / %g, --saturation-margin) "
			"runs a final window", s->lo, s->saturation_qps, cap, 1 + c->sat_margin);
		search_to_final(s, 1, note);
	} else if (confirmed && within) {
		snprintf(note, sizeof note, "%g qps met the SLA twice, %g qps missed it: %.1f%% "
			"apart, within the %g%% tolerance", s->lo, s->hi, gap * 100,
			c->tolerance * 100);
		search_to_final(s, 1, note);
	} else if (!within) {
		snprintf(note, sizeof note, "step budget (%u steps) ran out: the knee lies "
			"between %g and %g qps (%.1f%% apart, tolerance %g%%)%s", c->max_steps, s->lo,
			s->hi, gap * 100, c->tolerance * 100, confirmed ? "" : "; the lower rate "
			"was not re-measured");
		search_to_final(s, 0, note);
	} else {
		snprintf(note, sizeof note, "step budget (%u steps) ran out before %g qps could "
			"be re-measured", c->max_steps, s->lo);
		search_to_final(s, 0, note);
	}
}

/* Choose the next judged step, or the final window, or finish. */
static void search_decide(struct fl_search *s)
{
	const struct fl_search_config *c = &s->cfg;
	unsigned budget = c->max_steps > s->judged_steps ? c->max_steps - s->judged_steps : 0;
	double step = search_bracket_step(c);
	char note[200];

	if (s->state == FL_SEARCH_DONE)
		return;
	search_clamp_to_saturation(s);
	if (s->lo == 0 && s->hi > 0) {
		/* Nothing passed yet: down, faster each time, while the budget lasts. */
		unsigned downs = 0;
		for (unsigned i = 0; i < s->nprobes; i++)
			downs += s->probes[i].step.phase == FL_PHASE_BRACKET && s->probes[i].miss;
		unsigned e = downs == 0 ? 0 : downs - 1 < 5 ? downs - 1 : 5;
		double q = s->hi / pow(step, (double)(1u << e));
		if (budget == 0 || q < 0.001)
			search_finish(s, 0, "even %g qps misses the SLA (p95 %g ms): no rate "
				"passed; lower --start-qps or check the logs", s->hi, c->sla_p95_ms);
		else
			search_set(s, q, FL_PHASE_BRACKET);
		return;
	}
	if (s->hi == 0 && s->lo == 0) {
		double q = s->capacity_saturated ? SEARCH_START_FRAC * s->capacity_qps :
			s->capacity_qps;
		if (budget == 0)
			search_finish(s, 0, "step budget (%u steps) ran out before any step",
				c->max_steps);
		else
			search_set(s, q > 0 ? q : c->start_qps, FL_PHASE_BRACKET);
		return;
	}
	if (s->hi == 0) {
		if (s->lo >= c->max_qps) {
			snprintf(note, sizeof note, "SLA never reached below max: %g qps (--max-qps) "
				"still meets the SLA", c->max_qps);
			search_to_final(s, 0, note);
		} else if (budget == 0) {
			snprintf(note, sizeof note, "step budget (%u steps) ran out before any rate "
				"missed the SLA; %g qps passed", c->max_steps, s->lo);
			search_to_final(s, 0, note);
		} else {
			/* Up by step, then by step^2 once two bracket steps passed: at most ~21%
			 * past the last pass (10% tolerance), fewer steps from a low estimate. */
			unsigned ups = 0;
			for (unsigned i = 0; i < s->nprobes; i++)
				ups += s->probes[i].step.phase == FL_PHASE_BRACKET && s->probes[i].pass;
			double q = s->lo * (ups >= 2 ? step * step : step);
			/* Not far past what the leaf was seen to answer: a step deep in overload
			 * spends its 20 s on timeouts and reads a low reply rate. The probes' C
			 * alone reads low (2-8 s): a default run's probes read 128.5 qps where
			 * its 15 s steps answered 134.3, its bracket stopped at 141.3, missed on
			 * p95 with replies within 5%, and S (the cap) was never read. */
			double ceil_q = step * fmax(s->capacity_qps, search_best_answered(s, 0, 0));
			/* At the 0.1 qps the bracket rates are rounded to, so a pass there is at
			 * the ceiling, not a hair below it (209.7 then 209.733). */
			if (ceil_q >= 10)
				ceil_q = floor(ceil_q * 10) / 10;
			if (s->capacity_saturated && s->lo < ceil_q && q > ceil_q)
				q = ceil_q;
			search_set(s, q, FL_PHASE_BRACKET);
		}
		return;
	}
	search_decide_bracketed(s, budget);
}

void fl_search_init(struct fl_search *s, const struct fl_search_config *c)
{
	memset(s, 0, sizeof *s);
	s->cfg = *c;
	if (s->cfg.max_steps > 64)
		s->cfg.max_steps = 64;
	s->state = FL_SEARCH_RUNNING;
	search_set(s, c->start_qps, FL_PHASE_PROBE);
}

int fl_search_next(const struct fl_search *s, struct fl_search_step *st)
{
	if (s->state == FL_SEARCH_DONE)
		return 0;
	*st = s->next;
	return 1;
}

/* A capacity probe's outcome: probe higher, or start the bracket. */
static void search_record_probe(struct fl_search *s, const struct fl_search_obs *o)
{
	const struct fl_search_config *c = &s->cfg;
	double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;
	double q = s->next.qps;
	/* A probe that measured no window (unknown rate) is judged as nothing back. */
	double ach = isfinite(o->achieved_qps) ? o->achieved_qps : 0;

	s->cap_probes++;
	if (ach < SEARCH_SATURATED * ref)
		s->sat_probe_qps = fmax(s->sat_probe_qps, ach);
	if (ach < SEARCH_SATURATED * ref && !s->reprobed) {
		/* The first probe meets a cold leaf (page faults in the library, cold
		 * caches), and a short one loses its last p95 of replies to the window's
		 * edge: before the capacity rests on it, measure the rate again, longer.
		 * A probe that answered more than the rate before it overshot the capacity
		 * by up to the growth factor; its repeat runs at 1.5x what it answered, past
		 * the capacity by enough that a Poisson draw offering 7% less still saturates
		 * (at 1.25x, 157.5/s offered 146.1 and read 133.75 as not saturated), short of
		 * deep overload, which collapses the replies (a 6 s repeat at 1024/s read 114/s
		 * of a leaf that had answered 213/s). */
		double d = s->next.duration_s * SEARCH_REPROBE_X;
		double r = ach > q / c->growth ? fmin(q, SEARCH_REPROBE_PAST * ach) : q;
		s->reprobed = 1;
		search_set(s, r, FL_PHASE_PROBE);
		s->next.duration_s = d;
		return;
	}
	if (ach < SEARCH_SATURATED * ref) {
		s->capacity_saturated = 1;
		/* The most any saturated probe answered (a repeat may read less, deep in
		 * overload); nothing came back: the rate before (or the start). */
		s->capacity_qps = s->sat_probe_qps > 0 ? s->sat_probe_qps : q / c->growth;
	} else if (q >= c->max_qps || s->cap_probes >= FL_SEARCH_MAX_CAP_PROBES) {
		s->capacity_qps = q;
	} else {
		search_set(s, q * c->growth, FL_PHASE_PROBE);
		return;
	}
	search_decide(s);
}

/* After a failed final window at q, with some rate below q that never missed: the next
 * final window runs at q / (1 + g) (0.1 qps grid, at most the cap) straight away, no step
 * first, even when a rate between the two passed its short steps. g is half the tolerance
 * while two or more final windows are left, the whole tolerance for the last one. A final
 * window is the longest measurement the search makes: its pass there, with q's miss at
 * most the tolerance above, brackets the knee as the bisection's own stopping rule asks,
 * more tightly than short steps would. On the default build (12-06, third session) a
 * final at 193.6 qps missed (its queue grew: 189.8 of 193.2 answered), the search
 * re-measured 190.9, 1.4% below, which 15 s steps had passed at p95 362 and 610 ms, and
 * the last final there missed too (p95 1,112 ms) where another run converged at 189.7.
 * Measured on the --copies=2 build: a
 * 15 s final at 179.2 qps missed after two 4 s passes, and the search fell 4.6% to 170.9
 * where two other runs ended at 182.5 and 180.1; and (12-06) finals at 256.2 and 249.9
 * missed, a bisection step and its re-measure passed 241.3 in 4 s, and the last final
 * there missed too (p95 1,086 ms; two other runs converged at 243.3 and 240.7): the 4 s
 * steps cost 10 s and told the last final nothing it needed. Returns 1 when it set that
 * final window. */
static int search_final_just_below(struct fl_search *s, double q, const char *why)
{
	const struct fl_search_config *c = &s->cfg;
	int last = c->max_finals - s->finals < 2;
	double gap = last ? c->tolerance : c->tolerance / 2;
	double near = floor(q / (1 + gap) * 10) / 10;
	double cap = fl_search_cap(s);
	int capped = near > cap;

	if (capped)
		near = cap;
	if (c->max_finals <= s->finals || !(s->lo > 0) || !(near > 0) || !(near < q))
		return 0;
	s->final_converges = 1;
	/* The note keeps the miss's first clause whole: up to its first " (" or ";". */
	int brief = (int)strcspn(why, "(;");
	while (brief > 0 && why[brief - 1] == ' ')
		brief--;
	if (brief > 64)
		brief = 64;
	if (capped)
		snprintf(s->final_note, sizeof s->final_note, "the final window at %g qps "
			"missed (%.*s); the next at %g qps, the cap (saturation %g / %g)", q,
			brief, why, near, s->saturation_qps, 1 + c->sat_margin);
	else
		snprintf(s->final_note, sizeof s->final_note, "the final window at %g qps "
			"missed (%.*s); the next at %g qps, %s below", q, brief, why, near,
			last ? "the tolerance" : "half the tolerance");
	search_set(s, near, FL_PHASE_FINAL);
	return 1;
}

/* A final window's outcome. */
static void search_record_final(struct fl_search *s, double q, int pass, const char *why)
{
	s->finals++;
	s->final_qps = q;
	if (pass) {
		if (s->final_converges)
			search_finish(s, 1, "%s; the final window at %g qps passed", s->final_note, q);
		else
			search_finish(s, 0, "%s; the final window at %g qps passed, so it is a lower "
				"bound, not an SLA bound", s->final_note, q);
		return;
	}
	/* A failed final window is a failed re-measure: step down, to the next lower rate
	 * that never missed, or (none measured) by bracket steps below q, as the bracket
	 * does before its first pass. */
	s->hi = q;
	s->lo = search_clean_pass_below(s, q);
	/* S read from this window caps the next: the clean pass below the cap is the one the
	 * next final is measured against (a pass above the cap is no candidate). */
	search_clamp_to_saturation(s);
	if (s->finals >= s->cfg.max_finals) {
		search_finish(s, 0, "the final window at %g qps missed (%s); %u final window%s "
			"run, no more allowed (--max-finals)", q, why, s->finals,
			s->finals == 1 ? "" : "s");
		return;
	}
	if (search_final_just_below(s, q, why))
		return;
	search_decide(s);
}

int fl_search_record(struct fl_search *s, const struct fl_search_obs *o, char *why,
	size_t whylen)
{
	char buf[320];
	if (s->state == FL_SEARCH_DONE || s->nprobes >= FL_SEARCH_MAX_PROBES)
		return -1;
	const struct fl_search_config *c = &s->cfg;
	struct fl_search_step st = s->next;
	enum fl_verdict v = st.phase == FL_PHASE_PROBE ? FL_VERDICT_UNJUDGED :
		fl_search_judge(c, o, buf, sizeof buf);
	if (st.phase == FL_PHASE_PROBE && isfinite(o->achieved_qps))
		snprintf(buf, sizeof buf, "capacity probe: %.1f of %.1f qps answered",
			o->achieved_qps, o->offered_qps > 0 ? o->offered_qps : o->requested_qps);
	else if (st.phase == FL_PHASE_PROBE)
		snprintf(buf, sizeof buf, "capacity probe at %.1f qps: no window measured",
			o->requested_qps);
	/* Unsure at the longest step (or in a final window) is a miss: not known to hold. */
	int longest = st.phase == FL_PHASE_FINAL || st.duration_s >= c->max_step_s;
	struct fl_search_probe *p = &s->probes[s->nprobes++];
	*p = (struct fl_search_probe){ st, v, v == FL_VERDICT_PASS, v == FL_VERDICT_FAIL ||
		(v == FL_VERDICT_UNSURE && longest), o->p95_ms, o->p95_lo_ms, o->p95_hi_ms,
		o->achieved_qps };
	if (p->miss && v == FL_VERDICT_UNSURE)
		strncat(buf, " (at the longest step: counted as a miss)",
			sizeof buf - strlen(buf) - 1);
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", buf);
	if (st.phase != FL_PHASE_PROBE && st.phase != FL_PHASE_FINAL)
		s->judged_steps++;
	if (st.phase != FL_PHASE_PROBE && v != FL_VERDICT_UNJUDGED && o->requests > 0) {
		/* S: a step that fell short of its offered rate by more than its pass
		 * allows, or a step that missed and fell short by more than its window's
		 * edges explain. The 5% a passing step may fall short is a tolerance, not
		 * evidence of keeping up: measured on the default build, a step at 145 qps
		 * missed (p95 1,051 ms) with 140.8 of 147.9 answered (4.8% short), S stayed
		 * unread and that run converged at 138.2 without a cap where the next read
		 * S at 136.9 (a step 14% short) and converged at 130.1. */
		double ref = o->offered_qps > 0 ? o->offered_qps : o->requested_qps;
		double ach = o->achieved_qps;
		int behind = ach < ref - fl_search_achieved_slack(c, o) ||
			(p->miss && ach < ref - search_edge_noise(c, o));
		/* Below what a passing step as long answered, falling behind is goodput
		 * collapsing under overload, not the host's limit: on the default build a
		 * 15 s step at 128 qps answered 61.5/s (878 errors) after a 15 s one at
		 * 105.8 had passed with 104.0, and S = 61.5 capped the search at 58.6. A
		 * shorter pass is no such evidence: from an empty queue a 4 s step answers
		 * its whole rate a few percent past what the leaf sustains (quick runs on
		 * the --copies=2 build: 4 s passes answered 273-278/s, 15 s finals at 269
		 * and 271 qps fell behind at 252.0 and 251.7). */
		/* A window its driver stopped early (a certain miss) measured its own seconds. */
		double ran_s = o->miss_certain && o->window_s > 0 ? fmin(o->window_s,
			st.duration_s) : st.duration_s;
		if (isfinite(ach) && ach > s->saturation_qps && behind &&
		    ran_s >= FL_SEARCH_SAT_MIN_S &&
		    ach > search_best_answered(s, 1, st.duration_s))
			s->saturation_qps = ach;
	}

	if (st.phase == FL_PHASE_PROBE) {
		search_record_probe(s, o);
	} else if (v == FL_VERDICT_UNJUDGED) {
		unsigned run = s->unjudged_run + 1;
		int budget = st.phase == FL_PHASE_FINAL || s->judged_steps < c->max_steps;
		if (run > SEARCH_MAX_UNJUDGED || !budget) {
			search_finish(s, 0, "the driver limited the step at %g qps %u times, even "
				"with %u requests in flight allowed; give it more connections "
				"(--driver-args \"--connections N\")", st.qps, run, st.inflight);
		} else {
			s->next.inflight = fl_search_inflight(c, st.qps, run);
			s->unjudged_run = run;
		}
	} else if (v == FL_VERDICT_UNSURE && !longest && s->judged_steps < c->max_steps) {
		s->next.duration_s = fmin(c->max_step_s, 2 * st.duration_s);
	} else if (st.phase == FL_PHASE_FINAL) {
		search_record_final(s, st.qps, p->pass, buf);
	} else {
		if (st.phase == FL_PHASE_REMEASURE) {
			/* A failed re-measure: q is not a safe rate. It bounds the knee from above,
			 * and the next lower rate that never missed becomes the candidate. */
			if (p->miss) {
				s->hi = st.qps;
				s->lo = search_clean_pass_below(s, st.qps);
			}
		} else if (p->pass) {
			if (st.qps > s->lo)
				s->lo = st.qps;
		} else if (p->miss && (s->hi == 0 || st.qps < s->hi)) {
			s->hi = st.qps;
		}
		search_decide(s);
	}
	return (int)v;
}

void fl_search_abort(struct fl_search *s, const char *why)
{
	if (s->state == FL_SEARCH_DONE)
		return;
	search_finish(s, 0, "%s", why);
}

unsigned fl_search_remaining(const struct fl_search *s)
{
	const struct fl_search_config *c = &s->cfg;
	unsigned budget = c->max_steps > s->judged_steps ? c->max_steps - s->judged_steps : 0;
	unsigned finals = c->max_finals > s->finals ? 1 : 0;

	if (s->state == FL_SEARCH_DONE)
		return 0;
	if (s->next.phase == FL_PHASE_FINAL)
		return 1;
	if (s->hi == 0 || s->lo == 0)
		return (budget < 5 ? budget : 5) + finals;
	/* Bisection halves log(hi / lo) per step; then one re-measure. */
	unsigned n = search_confirmed(s, s->lo) ? 0 : 1;
	double ratio = s->hi / s->lo;
	while (ratio - 1 > c->tolerance && n < budget) {
		ratio = sqrt(ratio);
		n++;
	}
	return (n < budget ? n : budget) + finals;
}
