/* test_run_search.c: the SLA search state machine against synthetic step outcomes.
 * Build: ninja tests/test_run_search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "quantile_ci.h"
#include "run_search.h"

/* What a synthetic step is made to do, whatever the model says. */
enum force { F_NONE, F_PASS, F_FAIL, F_STRADDLE, F_DRIVER, F_STARVED };

/* A service whose p95 is 200 ms far below the knee and reaches the SLA (700 ms) exactly
 * at `knee` qps, rising steeply past it; replies keep up to `capacity` qps. Noise
 * multiplies p95 by 1 +- noise (seeded xorshift). The p95's interval is p95 x (1 +- 10
 * delta), delta = 1.96 sqrt(0.0475 / n), n = qps x seconds: 10% at 1825 latencies,
 * narrower for longer steps. force[i] overrides step i (0-based, probes included);
 * final_force overrides every final window. */
struct model {
	double knee;
	double capacity;
	double noise;
	uint64_t rng;
	enum force force[FL_SEARCH_MAX_PROBES];
	enum force final_force;
	double final_fail_above;  /* > 0: a final window above this rate misses the SLA */
	int calls;
};

static double model_uniform(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (double)(m->rng >> 11) / 9007199254740992.0;
}

static struct fl_search_obs model_measure(struct model *m, const struct fl_search_step *st)
{
	struct fl_search_obs o = { 0 };
	double q = st->qps, n = q * st->duration_s;
	enum force f = m->force[m->calls];

	if (st->phase == FL_PHASE_FINAL && m->final_force != F_NONE)
		f = m->final_force;
	if (st->phase == FL_PHASE_FINAL && m->final_fail_above > 0 && q > m->final_fail_above)
		f = F_FAIL;
	o.requested_qps = q;
	o.offered_qps = q;
	o.achieved_qps = q < m->capacity ? q : m->capacity;
	o.requests = (uint64_t)n + 1;
	o.latencies = (uint64_t)n + 1;
	o.p95_ms = 200 + 500 * exp((q - m->knee) / (m->knee * 0.05));
	o.p95_ms *= 1 + m->noise * (2 * model_uniform(m) - 1);
	if (f == F_PASS)
		o.p95_ms = 100;
	else if (f == F_FAIL)
		o.p95_ms = 5000;
	else if (f == F_STRADDLE)
		o.p95_ms = 690;
	if (f != F_NONE)
		o.achieved_qps = q;
	double w = 10 * 1.96 * sqrt(0.0475 / (n > 1 ? n : 1));
	o.p95_lo_ms = o.p95_ms * (1 - w);
	o.p95_hi_ms = o.p95_ms * (1 + w);
	if (f == F_STRADDLE) {
		o.p95_lo_ms = 650;
		o.p95_hi_ms = 730;
	}
	o.driver_limited = f == F_DRIVER;
	if (f == F_STARVED)  /* a cold leaf: a fifth of the replies came back */
		o.achieved_qps = 0.2 * q;
	m->calls++;
	return o;
}

/* Run the whole search; returns the step count. */
static unsigned run_search(struct fl_search *s, const struct fl_search_config *c,
	struct model *m)
{
	struct fl_search_step st;
	unsigned n = 0;

	fl_search_init(s, c);
	while (fl_search_next(s, &st)) {
		assert_true(st.qps > 0);
		assert_true(st.qps <= c->max_qps);
		assert_true(st.duration_s > 0 && st.inflight >= 1);
		struct fl_search_obs o = model_measure(m, &st);
		assert_true(fl_search_record(s, &o, NULL, 0) >= 0);
		n++;
		assert_true(n <= FL_SEARCH_MAX_PROBES);
	}
	assert_int_equal(n, s->nprobes);
	assert_true(s->judged_steps <= c->max_steps);
	assert_true(s->finals <= c->max_finals);
	return n;
}

static struct model model_make(double knee, uint64_t seed)
{
	struct model m;
	memset(&m, 0, sizeof m);
	m.knee = knee;
	m.capacity = knee * 1.1;
	m.noise = 0.03;
	m.rng = seed * 0x9E3779B97F4A7C15ull | 1;
	return m;
}

/* The outcome agrees with itself: an SLA bound only when converged, then the last final
 * window's rate, passed; a lower bound only when not converged. */
static void assert_consistent(const struct fl_search *s)
{
	assert_int_equal(s->state, FL_SEARCH_DONE);
	if (s->converged) {
		assert_true(s->sla_bound_qps > 0);
		assert_true(s->sla_bound_qps == s->final_qps);
		assert_true(s->lower_bound_qps == 0);
		const struct fl_search_probe *last = &s->probes[s->nprobes - 1];
		assert_int_equal(last->step.phase, FL_PHASE_FINAL);
		assert_true(last->pass);
		assert_true(last->step.qps == s->sla_bound_qps);
	} else {
		assert_true(s->sla_bound_qps == 0);
	}
}

/* Knee at 137 qps, capacity 151, 3% noise, defaults: probes find the capacity, the
 * bracket starts near it and never goes far past it, and the search converges within the
 * tolerance below the knee, its rate passed twice and the final window passed there. */
static void test_converges_default(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	for (uint64_t seed = 1; seed <= 30; seed++) {
		struct model m = model_make(137, seed);
		run_search(&s, &c, &m);
		assert_consistent(&s);
		assert_true(s.converged);
		assert_true(s.capacity_saturated);
		assert_true(fabs(s.capacity_qps - 137 * 1.1) < 1e-6);
		assert_true(s.sla_bound_qps <= 137);
		assert_true(s.sla_bound_qps >= 137 / 1.05 * 0.97);
		assert_non_null(strstr(s.reason, "final window"));
		unsigned passes = 0;
		for (unsigned i = 0; i < s.nprobes; i++) {
			const struct fl_search_probe *p = &s.probes[i];
			if (p->step.phase != FL_PHASE_PROBE)
				assert_true(p->step.qps <= 1.25 * s.capacity_qps);
			passes += p->step.qps == s.sla_bound_qps && p->pass;
			/* Bracket rates (C x step^k) rounded to 0.1 qps, their printed precision. */
			if (p->step.phase == FL_PHASE_BRACKET)
				assert_true(fabs(p->step.qps * 10 - round(p->step.qps * 10)) < 1e-6);
			/* Every judged step long enough for the p95 interval target. */
			if (p->step.phase != FL_PHASE_PROBE && p->step.phase != FL_PHASE_FINAL)
				assert_true(p->step.duration_s >= fl_search_step_seconds(&c,
					p->step.qps));
		}
		assert_true(passes >= 3);  /* twice in the search, once in the final window */
	}
}

/* Knees across three decades: always converged within the tolerance below the knee. */
static void test_converges_many_knees(void **state)
{
	(void)state;
	const double knees[] = { 5.5, 20, 63, 137, 333, 999, 2500 };
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	for (size_t k = 0; k < sizeof knees / sizeof knees[0]; k++) {
		for (uint64_t seed = 1; seed <= 10; seed++) {
			struct model m = model_make(knees[k], seed);
			run_search(&s, &c, &m);
			assert_consistent(&s);
			/* No step a hair from another (the 1.1 C ceiling at 0.1 qps). */
			for (unsigned i = 0; i < s.nprobes; i++)
				for (unsigned j = 0; j < i; j++) {
					double d = fabs(s.probes[i].step.qps - s.probes[j].step.qps);
					if (s.probes[i].step.phase != FL_PHASE_PROBE &&
					    s.probes[j].step.phase != FL_PHASE_PROBE && knees[k] > 20)
						assert_true(d == 0 || d >= 0.0999);
				}
			assert_true(s.converged);
			assert_true(s.sla_bound_qps <= knees[k]);
			assert_true(s.sla_bound_qps >= knees[k] / 1.05 * 0.97);
		}
	}
	/* The --quick profile: 12 steps, 4..12 s steps, p95 interval +- 2 points. */
	c.max_steps = 12;
	c.step_s = 4;
	c.max_step_s = 12;
	c.final_s = 15;
	c.ci_pct = 2;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct model m = model_make(300, seed);
		run_search(&s, &c, &m);
		assert_consistent(&s);
		assert_true(s.converged);
		assert_true(s.sla_bound_qps <= 300 && s.sla_bound_qps >= 300 / 1.05 * 0.97);
	}
}

/* Item 1: the final window fails. The search steps down and runs the final window
 * again at a lower rate; sla_bound_qps is that rate only if it passed there. */
static void test_final_fails_steps_down(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	fl_search_config_default(&c);
	struct model m = model_make(137, 4);
	fl_search_init(&s, &c);
	int finals = 0;
	double first_final = 0;
	while (fl_search_next(&s, &st)) {
		if (st.phase == FL_PHASE_FINAL && finals++ == 0) {
			first_final = st.qps;
			m.force[m.calls] = F_FAIL;
		}
		struct fl_search_obs o = model_measure(&m, &st);
		fl_search_record(&s, &o, NULL, 0);
	}
	assert_consistent(&s);
	assert_int_equal(finals, 2);
	assert_int_equal(s.finals, 2);
	assert_true(first_final > 0);
	assert_true(s.final_qps < first_final);
	/* The failed rate is now the upper end; the bound lies below it. */
	assert_true(s.hi <= first_final);
	if (s.converged)
		assert_true(s.sla_bound_qps < first_final);
}

/* A failed final window at the only rate that ever passed (the first bracket step): no
 * lower pass to fall back to, so the search brackets down below it (it used to give up,
 * "no lower rate passed", with one final window left) and runs its second final lower. */
static void test_final_fails_no_lower_pass(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	fl_search_config_default(&c);
	struct model m = model_make(100, 7);
	fl_search_init(&s, &c);
	double r0 = 0, first_final = 0, after = 0;
	int finals = 0;
	while (fl_search_next(&s, &st)) {
		if (st.phase == FL_PHASE_BRACKET && r0 == 0)
			r0 = st.qps;
		if (first_final > 0 && after == 0)
			after = st.qps;  /* the step right after the failed final window */
		if (st.phase == FL_PHASE_FINAL && finals++ == 0) {
			first_final = st.qps;
			m.force[m.calls] = F_FAIL;
		} else if (first_final == 0 && st.phase != FL_PHASE_PROBE) {
			m.force[m.calls] = st.qps <= r0 * 1.0001 ? F_PASS : F_FAIL;
		} else if (first_final > 0) {
			m.knee = r0 * 0.85;  /* the host holds less than the short steps said */
		}
		struct fl_search_obs o = model_measure(&m, &st);
		fl_search_record(&s, &o, NULL, 0);
	}
	assert_consistent(&s);
	assert_true(r0 > 0);
	assert_true(fabs(first_final - r0) < 1e-9);
	assert_true(after > 0 && after < r0);
	assert_int_equal(finals, 2);
	assert_true(s.final_qps < r0);
	assert_null(strstr(s.reason, "no lower rate passed"));
	if (s.converged)
		assert_true(s.sla_bound_qps < r0);
}

/* Item 1: every final window fails. Not converged, no SLA bound; what is left is a lower
 * bound (a rate that passed every time it was judged, below the failed windows). */
static void test_final_always_fails(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	struct model m = model_make(137, 2);
	m.final_force = F_FAIL;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_true(s.sla_bound_qps == 0);
	assert_int_equal(s.finals, c.max_finals);
	assert_true(s.lower_bound_qps > 0 && s.lower_bound_qps < s.final_qps);
	assert_non_null(strstr(s.reason, "final window at"));
	assert_non_null(strstr(s.reason, "missed"));

	/* With one final window allowed it ends after the first. */
	c.max_finals = 1;
	m = model_make(137, 2);
	m.final_force = F_FAIL;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_int_equal(s.finals, 1);
}

/* Item 1: the step budget runs out before the knee is bracketed within the tolerance.
 * The final window still runs at the best pass, and passes, but that is a lower bound,
 * never an SLA bound. */
static void test_budget_lower_bound(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	c.max_steps = 2;
	struct model m = model_make(137, 1);
	m.noise = 0;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_true(s.sla_bound_qps == 0);
	assert_true(s.lower_bound_qps > 0 && s.lower_bound_qps <= 137);
	assert_non_null(strstr(s.reason, "step budget"));
	assert_non_null(strstr(s.reason, "lower bound"));
	assert_int_equal(s.probes[s.nprobes - 1].step.phase, FL_PHASE_FINAL);
	assert_true(s.probes[s.nprobes - 1].pass);
}

/* Item 13: a step whose p95 interval straddles the SLA is not judged: the same rate runs
 * again for twice as long; at max_step_s unsure counts as a miss. */
static void test_straddle_measures_longer(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st, st2;
	char why[320];
	fl_search_config_default(&c);
	struct model m = model_make(137, 1);
	fl_search_init(&s, &c);
	/* Run the probes. */
	while (fl_search_next(&s, &st) && st.phase == FL_PHASE_PROBE) {
		struct fl_search_obs o = model_measure(&m, &st);
		fl_search_record(&s, &o, NULL, 0);
	}
	assert_int_equal(st.phase, FL_PHASE_BRACKET);
	double lo = s.lo, hi = s.hi;
	m.force[m.calls] = F_STRADDLE;
	struct fl_search_obs o = model_measure(&m, &st);
	assert_int_equal(fl_search_record(&s, &o, why, sizeof why), FL_VERDICT_UNSURE);
	assert_non_null(strstr(why, "inside the p95's 95% interval 650.0..730.0"));
	assert_true(s.lo == lo && s.hi == hi);  /* nothing learnt */
	assert_int_equal(fl_search_next(&s, &st2), 1);
	assert_true(st2.qps == st.qps && st2.phase == st.phase);
	assert_true(st2.duration_s == fmin(2 * st.duration_s, c.max_step_s));
	/* Unsure until the longest step: then a miss, and the rate is the upper end. */
	while (st2.duration_s < c.max_step_s) {
		m.force[m.calls] = F_STRADDLE;
		o = model_measure(&m, &st2);
		assert_int_equal(fl_search_record(&s, &o, NULL, 0), FL_VERDICT_UNSURE);
		fl_search_next(&s, &st2);
		assert_true(st2.qps == st.qps);
	}
	m.force[m.calls] = F_STRADDLE;
	o = model_measure(&m, &st2);
	assert_int_equal(fl_search_record(&s, &o, why, sizeof why), FL_VERDICT_UNSURE);
	assert_non_null(strstr(why, "counted as a miss"));
	assert_true(s.hi == st.qps);
	assert_true(s.probes[s.nprobes - 1].miss);
	fl_search_next(&s, &st2);
	assert_true(st2.qps < st.qps);
}

/* Item 13: a driver-limited step is never judged: same rate again with twice the
 * in-flight ceiling; a third time in a row ends the search without a bound from it. */
static void test_driver_limited_not_judged(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st, st2;
	fl_search_config_default(&c);
	struct model m = model_make(137, 1);
	fl_search_init(&s, &c);
	while (fl_search_next(&s, &st) && st.phase == FL_PHASE_PROBE) {
		struct fl_search_obs o = model_measure(&m, &st);
		fl_search_record(&s, &o, NULL, 0);
	}
	assert_int_equal(st.inflight, fl_search_inflight(&c, st.qps, 0));
	for (unsigned k = 1; k <= 2; k++) {
		m.force[m.calls] = F_DRIVER;
		struct fl_search_obs o = model_measure(&m, k == 1 ? &st : &st2);
		o.p95_ms = 100;  /* would pass: still not judged */
		o.p95_lo_ms = 90;
		o.p95_hi_ms = 110;
		assert_int_equal(fl_search_record(&s, &o, NULL, 0), FL_VERDICT_UNJUDGED);
		assert_true(s.lo == 0 && s.hi == 0);
		assert_false(s.probes[s.nprobes - 1].pass || s.probes[s.nprobes - 1].miss);
		fl_search_next(&s, &st2);
		assert_true(st2.qps == st.qps && st2.phase == st.phase);
		assert_int_equal(st2.inflight, st.inflight << k);
	}
	m.force[m.calls] = F_DRIVER;
	struct fl_search_obs o = model_measure(&m, &st2);
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), FL_VERDICT_UNJUDGED);
	assert_int_equal(s.state, FL_SEARCH_DONE);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_true(s.lower_bound_qps == 0);
	assert_non_null(strstr(s.reason, "driver limited"));

	/* One driver-limited step in a run: the search still converges, on judged steps. */
	m = model_make(137, 3);
	m.force[6] = F_DRIVER;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_true(s.converged);
	assert_int_equal(s.probes[6].verdict, FL_VERDICT_UNJUDGED);
}

/* Nothing passes: no SLA bound, no lower bound, the reason. */
static void test_always_fail(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	struct model m = model_make(1e-6, 1);
	m.capacity = 100;  /* replies keep up, latency never meets the SLA */
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_true(s.lower_bound_qps == 0 && s.final_qps == 0);
	assert_non_null(strstr(s.reason, "misses the SLA"));
}

/* Everything passes up to --max-qps: probes reach the cap, the cap passes, and the final
 * window there is a lower bound. */
static void test_always_pass_to_max(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	c.max_qps = 500;
	struct model m = model_make(1e9, 1);
	m.capacity = 1e12;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_false(s.capacity_saturated);
	assert_true(s.capacity_qps == 500);
	assert_false(s.converged);
	assert_true(s.lower_bound_qps == 500 && s.final_qps == 500);
	assert_non_null(strstr(s.reason, "SLA never reached below max"));
}

/* One lucky step above the knee must not become the answer: its re-measure fails and
 * the search goes back down; the bound stays below the knee. */
static void test_noisy_false_pass(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	for (int at = 5; at < 9; at++) {
		struct model m = model_make(137, 5);
		m.noise = 0;
		m.force[at] = F_PASS;
		run_search(&s, &c, &m);
		assert_consistent(&s);
		if (s.converged)
			assert_true(s.sla_bound_qps <= 137);
		else
			assert_true(s.lower_bound_qps <= 137);
	}
}

/* The verdict rule: interval against the SLA, achieved vs offered, errors, empty
 * windows, driver-limited. */
static void test_judge(void **state)
{
	(void)state;
	struct fl_search_config c;
	char why[320];
	fl_search_config_default(&c);
	struct fl_search_obs o = { .requested_qps = 100, .offered_qps = 100, .achieved_qps = 99,
		.p95_ms = 650, .p95_lo_ms = 640, .p95_hi_ms = 660, .latencies = 1990,
		.requests = 2000 };
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_PASS);
	assert_string_equal(why, "ok");
	o.p95_hi_ms = 700;  /* at the SLA: passes */
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_PASS);
	o.p95_hi_ms = 700.5;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_UNSURE);
	o.p95_ms = 710;
	o.p95_lo_ms = 700.5;
	o.p95_hi_ms = 720;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "p95 710.0 ms > SLA 700 ms"));
	/* No interval reported: the point p95 decides. */
	o.p95_lo_ms = o.p95_hi_ms = -1;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_FAIL);
	o.p95_ms = 100;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_PASS);

	o.achieved_qps = 90;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "achieved 90.0 qps"));
	o.offered_qps = 92;  /* Poisson offered fewer: 90 keeps up */
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_PASS);
	o.offered_qps = 0;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_FAIL);

	o.achieved_qps = 100;
	o.errors = 20;  /* exactly 1%: fails */
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "errors 1.00%"));
	/* A decisive miss wins over an unsure latency. */
	o.p95_ms = 700;
	o.p95_lo_ms = 650;
	o.p95_hi_ms = 750;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_FAIL);
	o.errors = 0;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), FL_VERDICT_UNSURE);

	/* The driver limited the step: not judged, even with a passing p95. */
	o.p95_ms = 100;
	o.p95_lo_ms = 90;
	o.p95_hi_ms = 110;
	o.driver_limited = 1;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_UNJUDGED);
	assert_non_null(strstr(why, "driver_limited"));
	o.driver_limited = 0;

	/* No OK reply: no p95 to judge, a miss. */
	o.latencies = 0;
	o.p95_ms = NAN;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "no OK replies"));
	o.requests = 0;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "no requests"));
	assert_string_equal(fl_verdict_name(FL_VERDICT_UNSURE), "unsure");
}

/* Achieved is counted as replies arrive, so the replies in flight when the window closes
 * are not a shortfall: at 1.5 qps over 15 s (22.5 requests) one late reply is 4.4%
 * short, and 5% would fail it. The allowance is 1 + offered x min(p95, SLA) requests;
 * at 100 qps the 5% rule is the larger and still decides. */
static void test_achieved_edge_slack(void **state)
{
	(void)state;
	struct fl_search_config c;
	char why[320];
	fl_search_config_default(&c);
	struct fl_search_obs o = { .requested_qps = 1.5, .offered_qps = 1.5, .achieved_qps = 1.4,
		.p95_ms = 600, .p95_lo_ms = 550, .p95_hi_ms = 650, .latencies = 21, .requests = 22,
		.window_s = 15 };
	/* (1 + 2 sqrt(2 x 1.5 x 0.6)) / 15 = 0.245 qps of slack; 5% is 0.075. */
	assert_true(fabs(fl_search_achieved_slack(&c, &o) - (1 + 2 * sqrt(1.8)) / 15) < 1e-9);
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_PASS);
	o.window_s = 0;  /* window unknown: the 5% rule alone, which fails it */
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	assert_non_null(strstr(why, "achieved 1.4 qps"));
	o.window_s = 15;
	o.achieved_qps = 1.2;  /* 4.5 requests short, > 1 + 2 sd of the edges: a shortfall */
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), FL_VERDICT_FAIL);
	/* A p95 past the SLA widens the allowance no further than the SLA does. */
	o.p95_ms = 5000;
	assert_true(fabs(fl_search_achieved_slack(&c, &o) - (1 + 2 * sqrt(2 * 1.5 * 0.7)) / 15)
		< 1e-9);

	struct fl_search_obs h = { .requested_qps = 100, .offered_qps = 100, .achieved_qps = 94.9,
		.p95_ms = 650, .p95_lo_ms = 640, .p95_hi_ms = 660, .latencies = 1423,
		.requests = 1500, .window_s = 15 };
	assert_true(fabs(fl_search_achieved_slack(&c, &h) - 5) < 1e-9);
	assert_int_equal(fl_search_judge(&c, &h, NULL, 0), FL_VERDICT_FAIL);
	h.achieved_qps = 95.1;
	assert_int_equal(fl_search_judge(&c, &h, NULL, 0), FL_VERDICT_PASS);

	/* A 4 s --quick step measured on the --copies=2 build: the leaf answered 212 of 241.75
	 * qps offered at p95 589 ms (its 15 s final window later missed). The edges' noise
	 * is (1 + 2 sqrt(2 x 241.75 x 0.589)) / 4 = 8.65 qps, under 5% (12.09): it fails.
	 * All replies in flight at the close (the old allowance) were 35.8 qps. */
	struct fl_search_obs q = { .requested_qps = 237.4, .offered_qps = 241.75,
		.achieved_qps = 212, .p95_ms = 589.3, .p95_lo_ms = 560, .p95_hi_ms = 620,
		.latencies = 848, .requests = 967, .window_s = 4 };
	assert_true(fabs(fl_search_achieved_slack(&c, &q) - 0.05 * 241.75) < 1e-9);
	char qwhy[320];
	assert_int_equal(fl_search_judge(&c, &q, qwhy, sizeof qwhy), FL_VERDICT_FAIL);
	assert_non_null(strstr(qwhy, "achieved 212.0 qps"));
	q.achieved_qps = 230;  /* 4.9% short: within 5% */
	assert_int_equal(fl_search_judge(&c, &q, NULL, 0), FL_VERDICT_PASS);
}

/* The first probe meets a cold leaf and saturates: it runs again at the same rate, 4 x
 * longer, once, and the capacity rests on the second measurement. A leaf that really
 * is slower than --start-qps saturates the second time too, and the search goes on from
 * what that probe answered. */
static void test_first_probe_reprobed(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	struct model m = model_make(137, 3);
	m.force[0] = F_STARVED;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_true(s.reprobed);
	assert_int_equal(s.probes[1].step.phase, FL_PHASE_PROBE);
	assert_true(s.probes[1].step.qps == s.probes[0].step.qps);
	assert_true(s.probes[1].step.duration_s == 4 * s.probes[0].step.duration_s);
	assert_true(fabs(s.capacity_qps - 137 * 1.1) < 1e-6);
	assert_true(s.converged);
	assert_true(s.sla_bound_qps <= 137 && s.sla_bound_qps >= 137 / 1.05 * 0.97);

	/* Capacity 3.3 qps below --start-qps 4: saturated twice, capacity 3.3. */
	m = model_make(3, 5);
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_true(s.reprobed);
	assert_true(s.capacity_saturated);
	assert_true(fabs(s.capacity_qps - 3 * 1.1) < 1e-6);
	assert_int_equal(s.probes[2].step.phase, FL_PHASE_BRACKET);

	/* A later probe that saturates once (a hiccup of the host) is measured again too,
	 * and the probes go on from there. */
	m = model_make(137, 7);
	m.force[2] = F_STARVED;  /* the probe at 64 qps */
	run_search(&s, &c, &m);
	assert_true(s.reprobed);
	assert_true(s.probes[3].step.qps == 64 && s.probes[3].step.duration_s == 8);
	assert_true(fabs(s.capacity_qps - 137 * 1.1) < 1e-6);
	assert_true(s.converged);

	/* The probe at 256 qps overshoots a 150.7 qps leaf: its repeat runs at 1.5 x what
	 * it answered, not deeper in overload. */
	m = model_make(137, 9);
	run_search(&s, &c, &m);
	assert_true(s.probes[3].step.qps == 256 && s.probes[4].step.phase == FL_PHASE_PROBE);
	assert_true(fabs(s.probes[4].step.qps - 1.5 * 137 * 1.1) < 1e-6);
	assert_true(s.probes[4].step.duration_s == 4 * s.probes[3].step.duration_s);
	assert_true(fabs(s.capacity_qps - 137 * 1.1) < 1e-6);
	assert_true(s.converged);
}

/* Step i of a hand-fed search: the step handed out, recorded with achieved ach and p95. */
static struct fl_search_step feed(struct fl_search *s, double ach, double p95)
{
	struct fl_search_step st;
	assert_int_equal(fl_search_next(s, &st), 1);
	struct fl_search_obs o = { .requested_qps = st.qps, .offered_qps = st.qps,
		.achieved_qps = ach, .p95_ms = p95, .p95_lo_ms = p95 * 0.97,
		.p95_hi_ms = p95 * 1.03, .window_s = st.duration_s };
	o.requests = o.latencies = (uint64_t)(st.qps * st.duration_s) + 1;
	fl_search_record(s, &o, NULL, 0);
	return st;
}

/* Feed a probed search's steps until its first final window, which it returns the rate
 * of: a step at or below knee passes (answers 0.5% over its rate, p95 pass_p95), one
 * above misses (answers fail_ach: a share of its rate when <= 1, else that rate; p95
 * fail_p95). */
static double to_first_final(struct fl_search *s, double knee, double pass_p95,
	double fail_ach, double fail_p95)
{
	struct fl_search_step st;
	for (int i = 0; i < 20 && fl_search_next(s, &st) && st.phase != FL_PHASE_FINAL; i++) {
		if (st.qps <= knee)
			feed(s, st.qps * 1.005, pass_p95);
		else
			feed(s, fail_ach <= 1 ? st.qps * fail_ach : fail_ach, fail_p95);
	}
	assert_int_equal(fl_search_next(s, &st), 1);
	assert_int_equal(st.phase, FL_PHASE_FINAL);
	return st.qps;
}

/* The highest rate below q that some judged step passed (0 when none). */
static double search_lo_below(const struct fl_search *s, double q)
{
	double best = 0;
	for (unsigned i = 0; i < s->nprobes; i++)
		if (s->probes[i].pass && s->probes[i].step.qps < q)
			best = fmax(best, s->probes[i].step.qps);
	return best;
}

/* A default search whose n capacity probes answered probes[i][0] qps at p95 probes[i][1]. */
static void start_probed(struct fl_search *s, struct fl_search_config *c,
	const double probes[][2], unsigned n)
{
	fl_search_config_default(c);
	fl_search_init(s, c);
	for (unsigned i = 0; i < n; i++)
		feed(s, probes[i][0], probes[i][1]);
}

/* A run measured on the --copies=2 build: the bracket's ceiling, 1.1 x the most a step
 * answered (195.5 qps: 215.05), is rounded down to the 0.1 qps grid, so a pass at 215.0
 * is at the ceiling and the next step goes past it (to 1.1 x what that step answered)
 * rather than to 215.05. A probe that answered more than the one before asked is
 * repeated at 1.5x its replies, and C is the most any saturated probe answered. */
static void test_bracket_ceiling_on_grid(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	fl_search_config_default(&c);
	fl_search_init(&s, &c);
	feed(&s, 4, 140);
	feed(&s, 16, 130);
	feed(&s, 64, 205);
	st = feed(&s, 150, 631);      /* 256/s: saturated */
	assert_true(st.qps == 256);
	st = feed(&s, 210.83, 1103);  /* its repeat at 1.5 x 150: kept up */
	assert_true(st.qps == 225 && st.duration_s == 4 * c.probe_s);
	st = feed(&s, 190.67, 3028);  /* 900/s: saturated */
	assert_true(st.qps == 900);
	assert_true(s.capacity_saturated && fabs(s.capacity_qps - 190.67) < 1e-9);
	st = feed(&s, 152.25, 265);
	assert_true(st.phase == FL_PHASE_BRACKET && st.qps == 152.5);
	st = feed(&s, 166.25, 227);
	assert_true(st.qps == 167.8);
	st = feed(&s, 195.5, 423);
	assert_true(st.qps == 203);
	st = feed(&s, 214, 585);
	assert_true(st.qps == 215);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.phase == FL_PHASE_BRACKET && st.qps == 235.4);
}

/* A default search measured on the default build: S = 126.6 gives the cap 120.5; a pass
 * at 120.3 is within a quarter of the tolerance below it, so it is re-measured and run as
 * the final window instead of a bisection step at 120.5. */
static void test_lo_near_cap_is_at_cap(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	fl_search_config_default(&c);
	fl_search_init(&s, &c);
	feed(&s, 4, 160);
	feed(&s, 14.5, 215);
	feed(&s, 66.5, 174);
	feed(&s, 129.5, 2542);        /* 256/s: saturated */
	st = feed(&s, 129.875, 2085); /* repeated at 1.5 x 129.5 */
	assert_true(fabs(st.qps - 194.25) < 1e-9);
	assert_true(feed(&s, 103.9, 234).qps == 103.9);
	assert_true(feed(&s, 114.3, 246).qps == 114.3);
	st = feed(&s, 126.6, 1900);   /* the leaf could not keep up: S */
	assert_true(st.qps == 138.3);
	assert_true(s.saturation_qps == 126.6 && fl_search_cap(&s) == 120.5);
	st = feed(&s, 120.4, 374);
	assert_true(st.phase == FL_PHASE_BISECT && st.qps == 120.3);
	st = feed(&s, 120.0, 301);
	assert_true(st.phase == FL_PHASE_REMEASURE && st.qps == 120.3);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.phase == FL_PHASE_FINAL && st.qps == 120.3);
}

/* A default search measured on the default build: the probes read C = 128.5 where a
 * 15 s step answered 134.3, and the bracket stopped at 1.1 C (141.3), missed on p95 with
 * its replies within 5%, so S stayed unknown. The ceiling is 1.1 x the most any judged
 * step answered, so the next step overloads the leaf and reads S. */
static void test_bracket_ceiling_from_steps(void **state)
{
	(void)state;
	static const double probes[][2] = { { 4, 160 }, { 14.5, 215 }, { 66.5, 174 },
		{ 129.5, 2542 }, /* 256/s: saturated */ { 128.5, 2085 } /* its repeat */ };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	start_probed(&s, &c, probes, 5);
	assert_true(s.capacity_saturated && s.capacity_qps == 129.5);
	assert_true(feed(&s, 103.6, 215).qps == 103.6);
	assert_true(feed(&s, 114.0, 232).qps == 114.0);
	st = feed(&s, 134.3, 656);    /* two passes: up by 1.21 */
	assert_true(st.qps == 137.9 && s.lo == 137.9);
	assert_int_equal(fl_search_next(&s, &st), 1);
	/* Not 1.1 x C = 142.4 (a step there read no S): 1.1 x 134.3, on the grid. */
	assert_true(st.phase == FL_PHASE_BRACKET && st.qps == 147.7);
	feed(&s, 136.0, 1500);        /* could not keep up: S */
	assert_true(s.saturation_qps == 136.0 && fl_search_cap(&s) == 129.5);
}

/* A default search measured on the default build: a step at 145 qps missed on p95
 * (1,051 ms) with 140.8 of 147.9 offered answered, 4.8% short, within what a pass may
 * fall short (5%), but more than its window's edges explain (2.0 qps): the leaf fell
 * behind, so that is S, and the cap (134.0) keeps the final window below it. A pass
 * that falls as short is no saturation reading. */
static void test_missed_step_reads_saturation(void **state)
{
	(void)state;
	static const double probes[][2] = { { 5, 144 }, { 14.5, 152 }, { 53, 211 },
		{ 132.5, 2173 }, /* 256/s: saturated */ { 136.125, 2995 } /* its repeat */ };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	start_probed(&s, &c, probes, 5);
	assert_true(s.capacity_qps == 136.125);
	assert_true(feed(&s, 108.9, 212).qps == 108.9);
	st = feed(&s, 114.5, 247);    /* a pass 4.4% short: not S */
	assert_true(st.qps == 119.8 && s.saturation_qps == 0);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.qps == 145);
	struct fl_search_obs o = { .requested_qps = 145, .offered_qps = 147.9,
		.achieved_qps = 140.8, .p95_ms = 1050.7, .p95_lo_ms = 1020, .p95_hi_ms = 1080,
		.window_s = 15, .requests = 2219, .latencies = 2112 };
	fl_search_record(&s, &o, NULL, 0);
	assert_true(s.saturation_qps == 140.8 && fl_search_cap(&s) == 134.0);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.qps <= 134.0);
}

/* The default build's run of 12-06: a step at 145 qps (after passes at 108.9 and 114.5)
 * answers 61.5/s with errors, below what a passing step answered: goodput collapsing
 * under overload, not the host's limit, so S stays unread and 145 is an ordinary miss. */
static void test_collapse_is_not_saturation(void **state)
{
	(void)state;
	static const double probes[][2] = { { 5, 144 }, { 14.5, 152 }, { 53, 211 },
		{ 132.5, 2173 }, { 136.125, 2995 } };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	start_probed(&s, &c, probes, 5);
	feed(&s, 108.9, 212);
	feed(&s, 114.5, 247);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.qps == 145);
	struct fl_search_obs o = { .requested_qps = 145, .offered_qps = 147.9,
		.achieved_qps = 61.5, .p95_ms = 2978, .p95_lo_ms = 2944, .p95_hi_ms = 2995,
		.window_s = 15, .requests = 2219, .errors = 878, .latencies = 1100 };
	fl_search_record(&s, &o, NULL, 0);
	assert_true(s.saturation_qps == 0 && !isfinite(fl_search_cap(&s)));
	assert_true(s.hi == 145);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.qps > 114.5 && st.qps < 145);
}

/* A --quick search measured on the --copies=2 build (12-06): 4 s steps passed up to
 * 270.7 qps answering 273.5/s, and the 15 s final window there fell behind, answering
 * 251.7/s. The 4 s passes are shorter than the final, so they are no evidence of a
 * collapse: the final reads S = 251.7 and the next final window runs at once at the cap
 * (S / 1.05 = 239.7), whose pass converges. (A pass as long that answered more makes
 * such a step a collapse, with no S: test_collapse_is_not_saturation.) */
static void test_final_reads_saturation(void **state)
{
	(void)state;
	static const double probes[][2] = { { 5.3, 133 }, { 14.7, 122 }, { 56, 160 },
		{ 224.7, 334 }, { 267.3, 3011 }, { 248.7, 3011 } };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	fl_search_config_default(&c);
	c.max_steps = 14;
	c.step_s = 4;
	c.max_step_s = 12;
	c.probe_s = 1.5;
	c.final_s = 15;
	c.ci_pct = 2;
	c.max_finals = 3;
	fl_search_init(&s, &c);
	for (unsigned i = 0; i < sizeof probes / sizeof probes[0]; i++)
		feed(&s, probes[i][0], probes[i][1]);
	/* Pass everything up to 271 qps at a 4 s p95 well under the SLA, answering the rate
	 * and more; miss above it. */
	for (int i = 0; i < 20 && fl_search_next(&s, &st) && st.phase != FL_PHASE_FINAL; i++)
		feed(&s, st.qps <= 271 ? st.qps * 1.01 : st.qps * 0.8,
			st.qps <= 271 ? 300 : 1100);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_int_equal(st.phase, FL_PHASE_FINAL);
	assert_true(st.qps > 252 && st.qps <= 271);
	assert_true(s.saturation_qps == 0);
	feed(&s, 251.7, 1111);      /* the 15 s final fell behind: S */
	assert_true(s.saturation_qps == 251.7 && fl_search_cap(&s) == 239.7);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_true(st.phase == FL_PHASE_FINAL && st.qps == 239.7);
	feed(&s, 239.9, 450);
	assert_true(s.converged && s.sla_bound_qps == 239.7);
	assert_non_null(strstr(s.reason, "the cap"));
}

/* A default run measured on the default build (12-06, run 2 of three): the 15 s steps
 * passed up to 214.2 qps, the 300 s final there fell behind (205.4 of 213.4 answered,
 * p95 1,330 ms) and so read S, capping finals at 195.6. The clean pass below 214.2
 * (204.2) lies above that cap: the next final runs at once at the cap, measured against
 * the clean pass below the cap (185.6), instead of bisecting and re-measuring there first
 * (that run spent two 15 s steps on 195.3). Its pass converges. */
static void test_final_at_cap_after_miss(void **state)
{
	(void)state;
	static const double probes[][2] = { { 5, 211 }, { 14.5, 140 }, { 53, 190 },
		{ 203, 669 }, { 210.9, 1741 } };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	start_probed(&s, &c, probes, sizeof probes / sizeof probes[0]);
	double first = to_first_final(&s, 216.2, 480, 0.995, 1212);
	assert_true(first > 205.5 && first <= 216.2);
	feed(&s, 205.4, 1330);      /* fell behind over 300 s: S */
	assert_true(s.saturation_qps == 205.4 && fl_search_cap(&s) == 195.6);
	unsigned judged = s.judged_steps;
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_int_equal(st.phase, FL_PHASE_FINAL);
	assert_true(st.qps == 195.6);
	feed(&s, 195.5, 580);
	assert_true(s.converged && s.sla_bound_qps == 195.6);
	assert_int_equal(s.judged_steps, judged);  /* no step between the two finals */
	assert_non_null(strstr(s.reason, "the cap"));
	/* The miss's first clause, whole (a cut inside its parenthesis once read "()"). */
	assert_null(strstr(s.reason, "()"));
	assert_non_null(strstr(s.reason, "missed (p95 1330.0 ms > SLA 700 ms); the next"));
}

/* A default run measured on the default build (12-06, third session, run 1 of three):
 * 15 s steps passed up to 193.6 qps, the step at 217 fell behind (203.3 answered: S,
 * cap 193.6), and the 300 s final at 193.6 missed while its queue grew. The next final
 * runs at once half the tolerance below it (188.8), not at 190.9 after re-measuring
 * that 15 s pass (that run did, and its last final there missed too). */
static void test_final_below_close_pass(void **state)
{
	(void)state;
	static const double probes[][2] = { { 5, 211 }, { 14.5, 140 }, { 53, 190 },
		{ 203, 669 }, { 203.75, 1992 } };
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	start_probed(&s, &c, probes, sizeof probes / sizeof probes[0]);
	double first = to_first_final(&s, 195, 400, 203.3, 1237);
	assert_true(first > 190 && first <= 195);
	double close = search_lo_below(&s, first);
	assert_true(close > floor(first / 1.025 * 10) / 10);  /* a 15 s pass within the gap */
	unsigned judged = s.judged_steps;
	feed(&s, first * 0.98, 1262);
	assert_int_equal(fl_search_next(&s, &st), 1);
	assert_int_equal(st.phase, FL_PHASE_FINAL);
	assert_true(st.qps == floor(first / 1.025 * 10) / 10);
	assert_int_equal(s.judged_steps, judged);
	feed(&s, st.qps, 420);
	assert_true(s.converged && s.sla_bound_qps == st.qps);
	assert_non_null(strstr(s.reason, "half the tolerance"));
}

/* A quick search (3 final windows, no cap) whose first 15 s final window misses at a
 * rate two 4 s steps passed: the next final window runs at once, half the tolerance
 * below it (the next lower clean pass lies a whole bracket step below), and its pass
 * converges; when it misses too, the last final window runs at once a whole tolerance
 * below the second, and its pass converges. A pass between a failed final window and
 * the next does not stop the next from running at once (the default's 12-06 run that
 * re-measured a 15 s pass 1.4% below a failed final and missed there too). */
static void test_final_just_below(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step st;
	for (int second_fails = 0; second_fails <= 1; second_fails++) {
		fl_search_config_default(&c);
		c.max_finals = 3;
		c.sat_margin = 0;
		struct model m = model_make(180, 9);
		fl_search_init(&s, &c);
		double first = 0, second = 0, third = 0;
		int finals = 0, after_second = -1;
		while (fl_search_next(&s, &st)) {
			if (second > 0 && after_second < 0) {
				after_second = st.phase;
				third = st.qps;
			}
			if (st.phase == FL_PHASE_FINAL && ++finals == 1) {
				first = st.qps;
				m.force[m.calls] = F_FAIL;
			} else if (st.phase == FL_PHASE_FINAL && finals == 2) {
				second = st.qps;
				/* nothing but the failed final window since */
				assert_true(s.probes[s.nprobes - 1].step.phase == FL_PHASE_FINAL);
				m.force[m.calls] = second_fails ? F_FAIL : F_PASS;
			}
			struct fl_search_obs o = model_measure(&m, &st);
			fl_search_record(&s, &o, NULL, 0);
		}
		assert_consistent(&s);
		assert_true(first > 0);
		assert_true(second == floor(first / 1.025 * 10) / 10);
		if (!second_fails) {
			assert_true(s.converged && s.sla_bound_qps == second);
			assert_int_equal(s.finals, 2);
			assert_non_null(strstr(s.reason, "half the tolerance"));
		} else {
			assert_int_equal(finals, 3);
			assert_int_equal(after_second, FL_PHASE_FINAL);
			assert_true(third == floor(second / 1.05 * 10) / 10);
			assert_true(s.converged && s.sla_bound_qps == third);
			assert_non_null(strstr(s.reason, "the tolerance below"));
		}
	}
	/* The default's three final windows: the second follows a failed first at once, half
	 * the tolerance below it, and its pass converges. */
	fl_search_config_default(&c);
	struct model m = model_make(180, 9);
	fl_search_init(&s, &c);
	int finals = 0, prev_final = 0;
	double first = 0;
	while (fl_search_next(&s, &st)) {
		if (st.phase == FL_PHASE_FINAL) {
			if (++finals == 1) {
				first = st.qps;
				m.force[m.calls] = F_FAIL;
			} else {
				assert_true(prev_final);
				assert_true(st.qps == fmin(floor(first / 1.025 * 10) / 10, fl_search_cap(&s)));
			}
		}
		prev_final = st.phase == FL_PHASE_FINAL;
		struct fl_search_obs o = model_measure(&m, &st);
		fl_search_record(&s, &o, NULL, 0);
	}
	assert_consistent(&s);
	assert_int_equal(finals, 2);
	assert_true(s.converged);
}

/* The knee at saturation: short steps meet the SLA up to the capacity (134 qps; their
 * p95 would reach it only at 150), but a 300 s window above 131 qps builds the queue a
 * short step does not see and misses. The search
 * learns saturation from a step that could not keep up, runs no final window above
 * 134 / 1.05, and converges with its first final window, in few steps. */
static void test_saturation_caps_final(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct model m = model_make(150, seed);
		m.capacity = 134;
		m.final_fail_above = 131;
		run_search(&s, &c, &m);
		assert_consistent(&s);
		assert_true(s.converged);
		assert_int_equal(s.finals, 1);
		assert_true(s.saturation_qps == 134);
		assert_true(s.sla_bound_qps <= fl_search_cap(&s));
		assert_true(s.sla_bound_qps >= 134 / 1.05 / 1.05);
		assert_true(s.judged_steps <= 8);
		assert_non_null(strstr(s.reason, "saturated at 134.0 qps"));
		/* No step beyond the probes' capacity by more than one bracket step. */
		for (unsigned i = 0; i < s.nprobes; i++)
			assert_true(s.probes[i].step.phase == FL_PHASE_PROBE ||
				s.probes[i].step.qps <= 134 * 1.1 + 1e-9);
		/* No bisection step within a quarter of the tolerance of a rate that passed:
		 * a lo that close to the cap is at it. */
		for (unsigned i = 0; i < s.nprobes; i++)
			for (unsigned k = 0; k < i; k++)
				if (s.probes[i].step.phase == FL_PHASE_BISECT && s.probes[k].pass &&
				    s.probes[i].step.qps > s.probes[k].step.qps)
					assert_true(s.probes[i].step.qps >=
						s.probes[k].step.qps * (1 + c.tolerance / 4) - 1e-9);
	}
	/* Without saturation evidence the cap is not set. */
	fl_search_init(&s, &c);
	assert_true(isinf(fl_search_cap(&s)));

	/* --saturation-margin 0: S is still recorded, but nothing is capped, so a final
	 * window runs above 131 qps, misses, and the search steps down from it. */
	c.sat_margin = 0;
	struct model m = model_make(150, 1);
	m.capacity = 134;
	m.final_fail_above = 131;
	run_search(&s, &c, &m);
	assert_consistent(&s);
	assert_true(s.saturation_qps == 134);
	assert_true(isinf(fl_search_cap(&s)));
	assert_true(s.probes[s.nprobes - 1].step.qps <= 131 || !s.converged);
	int final_missed = 0;
	for (unsigned i = 0; i < s.nprobes; i++)
		final_missed |= s.probes[i].step.phase == FL_PHASE_FINAL && s.probes[i].miss;
	assert_true(final_missed);
}

/* The order-statistics interval (quantile_ci.h), step sizing and the in-flight ceiling. */
static void test_interval_sizing(void **state)
{
	(void)state;
	double lo, hi;
	fl_ci_rank_interval(1000, 0.95, FL_CI_Z95, &lo, &hi);
	/* 950 +- 1.96 sqrt(47.5) = 950 +- 13.5 */
	assert_true(lo == 936 && hi == 964);
	fl_ci_rank_interval(10, 0.95, FL_CI_Z95, &lo, &hi);
	assert_true(lo == 8 && hi == 10);  /* clamped to n */
	fl_ci_rank_interval(0, 0.95, FL_CI_Z95, &lo, &hi);
	assert_true(lo == 0 && hi == 0);
	assert_true(fl_ci_samples_for(0.95, FL_CI_Z95, 1) == 1825);

	struct fl_search_config c;
	fl_search_config_default(&c);
	/* 1825 latencies: 15 s at 300 qps is plenty, 30 qps needs 60 s (the cap). */
	assert_true(fl_search_step_seconds(&c, 300) == 15);
	assert_true(fl_search_step_seconds(&c, 100) == 18.25);
	assert_true(fl_search_step_seconds(&c, 30) == 60);
	/* rate x 2 x SLA: 300 qps x 1.4 s = 420; at least 64; doubled per retry. */
	assert_int_equal(fl_search_inflight(&c, 300, 0), 420);
	assert_int_equal(fl_search_inflight(&c, 300, 2), 1680);
	assert_int_equal(fl_search_inflight(&c, 10, 0), 64);
	/* frontload run's: one 3 s driver timeout of arrivals plus 4 deviations: 300 qps:
	 * 900 + 4 x 30 = 1020; 100 qps: 300 + 4 x 17.3 = 369.3 -> 370; 10 qps: 30 + 21.9,
	 * so 64; a negative or infinite setting is refused. */
	c.inflight_s = 3;
	assert_int_equal(fl_search_inflight(&c, 300, 0), 1020);
	assert_int_equal(fl_search_inflight(&c, 100, 0), 370);
	assert_int_equal(fl_search_inflight(&c, 100, 1), 740);
	assert_int_equal(fl_search_inflight(&c, 10, 0), 64);
	char err[128];
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), 0);
	c.inflight_s = -1;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "in-flight seconds"));
	c.inflight_s = INFINITY;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
}

/* next() repeats until record(); record() after done fails; abort keeps the best clean
 * pass as a lower bound; bad configs are refused; remaining() reaches 0. */
static void test_api(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	struct fl_search_step a, b;
	char err[128];

	fl_search_config_default(&c);
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), 0);
	fl_search_init(&s, &c);
	assert_int_equal(fl_search_next(&s, &a), 1);
	assert_int_equal(fl_search_next(&s, &b), 1);
	assert_true(a.qps == 4 && b.qps == 4 && a.phase == FL_PHASE_PROBE);
	assert_true(a.duration_s == c.probe_s && a.inflight == c.probe_inflight);
	struct fl_search_obs o = { .requested_qps = 4, .offered_qps = 4, .achieved_qps = 4,
		.p95_ms = 100, .latencies = 80, .requests = 80 };
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), FL_VERDICT_UNJUDGED);
	assert_int_equal(fl_search_next(&s, &a), 1);
	assert_true(a.qps == 16 && a.phase == FL_PHASE_PROBE);
	o.requested_qps = o.offered_qps = 16;
	o.achieved_qps = 10;  /* saturated: measured again, 4x longer, at 1.5 x 10 */
	fl_search_record(&s, &o, NULL, 0);
	assert_int_equal(fl_search_next(&s, &a), 1);
	assert_true(a.qps == 15 && a.phase == FL_PHASE_PROBE && a.duration_s == 4 * c.probe_s);
	o.requested_qps = o.offered_qps = 15;
	o.achieved_qps = 9;  /* saturated again: capacity the most answered, 10 */
	fl_search_record(&s, &o, NULL, 0);
	assert_true(s.capacity_qps == 10 && s.capacity_saturated);
	assert_int_equal(fl_search_next(&s, &a), 1);
	assert_true(a.phase == FL_PHASE_BRACKET && fabs(a.qps - 8) < 1e-9);
	o.requested_qps = o.offered_qps = o.achieved_qps = 8;
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), FL_VERDICT_PASS);
	assert_true(fl_search_remaining(&s) > 0);
	fl_search_abort(&s, "interrupted");
	assert_int_equal(fl_search_next(&s, &a), 0);
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), -1);
	assert_int_equal(fl_search_remaining(&s), 0);
	assert_consistent(&s);
	assert_false(s.converged);
	assert_true(s.lower_bound_qps == 8);
	assert_string_equal(s.reason, "interrupted");

	c.growth = 1;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "growth"));
	fl_search_config_default(&c);
	c.max_steps = 65;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	fl_search_config_default(&c);
	c.max_step_s = 1;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	fl_search_config_default(&c);
	c.max_finals = 0;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	assert_string_equal(fl_search_phase_name(FL_PHASE_PROBE), "probe");
	assert_string_equal(fl_search_phase_name(FL_PHASE_FIXED), "fixed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_converges_default),
		cmocka_unit_test(test_converges_many_knees),
		cmocka_unit_test(test_final_fails_steps_down),
		cmocka_unit_test(test_final_always_fails),
		cmocka_unit_test(test_final_fails_no_lower_pass),
		cmocka_unit_test(test_budget_lower_bound),
		cmocka_unit_test(test_straddle_measures_longer),
		cmocka_unit_test(test_driver_limited_not_judged),
		cmocka_unit_test(test_always_fail),
		cmocka_unit_test(test_always_pass_to_max),
		cmocka_unit_test(test_noisy_false_pass),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_achieved_edge_slack),
		cmocka_unit_test(test_first_probe_reprobed),
		cmocka_unit_test(test_bracket_ceiling_on_grid),
		cmocka_unit_test(test_lo_near_cap_is_at_cap),
		cmocka_unit_test(test_bracket_ceiling_from_steps),
		cmocka_unit_test(test_final_reads_saturation),
		cmocka_unit_test(test_final_just_below),
		cmocka_unit_test(test_final_at_cap_after_miss),
		cmocka_unit_test(test_final_below_close_pass),
		cmocka_unit_test(test_missed_step_reads_saturation),
		cmocka_unit_test(test_collapse_is_not_saturation),
		cmocka_unit_test(test_saturation_caps_final),
		cmocka_unit_test(test_interval_sizing),
		cmocka_unit_test(test_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
