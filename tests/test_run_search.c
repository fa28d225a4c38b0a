/* test_run_search.c: the SLA search state machine against a synthetic latency model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "run_search.h"

/* A service whose p95 is 200 ms far below the knee and reaches the SLA (700 ms) exactly
 * at `knee` qps, rising steeply past it; replies keep up to `capacity` qps. Noise
 * multiplies p95 by 1 +- noise (seeded xorshift). force_at / force_pass: probe number
 * force_at (0-based; -1: none) passes or fails whatever the model says. */
struct model {
	double knee;
	double capacity;
	double noise;
	uint64_t rng;
	int force_at;
	int force_pass;
	int calls;
};

static double model_uniform(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (double)(m->rng >> 11) / 9007199254740992.0;
}

static struct fl_search_obs model_measure(struct model *m, double qps)
{
	struct fl_search_obs o = { 0 };
	o.requested_qps = qps;
	o.offered_qps = qps;
	o.achieved_qps = qps < m->capacity ? qps : m->capacity;
	o.requests = (uint64_t)(qps * 20) + 1;
	o.p95_ms = 200 + 500 * exp((qps - m->knee) / (m->knee * 0.05));
	o.p95_ms *= 1 + m->noise * (2 * model_uniform(m) - 1);
	if (m->calls == m->force_at) {
		o.p95_ms = m->force_pass ? 100 : 5000;
		o.achieved_qps = qps;
	}
	m->calls++;
	return o;
}

/* Run the whole search; returns the probe count. */
static unsigned run_search(struct fl_search *s, const struct fl_search_config *c,
	struct model *m)
{
	double q;
	enum fl_search_phase ph;
	unsigned n = 0;

	fl_search_init(s, c);
	while (fl_search_next(s, &q, &ph)) {
		assert_true(q > 0);
		assert_true(q <= c->max_qps);
		struct fl_search_obs o = model_measure(m, q);
		assert_true(fl_search_record(s, &o, NULL, 0) >= 0);
		n++;
		assert_true(n <= c->max_steps);
	}
	assert_int_equal(n, s->nprobes);
	return n;
}

static struct model model_make(double knee, uint64_t seed)
{
	struct model m = { knee, knee * 1.2, 0.03, seed * 0x9E3779B97F4A7C15ull | 1, -1, 0, 0 };
	return m;
}

/* Knee at 137 qps with 3% noise, defaults: converges within 12 steps to a rate within
 * the tolerance below the knee, after re-measuring it. */
static void test_converges_default(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	for (uint64_t seed = 1; seed <= 30; seed++) {
		struct model m = model_make(137, seed);
		unsigned n = run_search(&s, &c, &m);
		assert_true(n <= 12);
		assert_true(s.converged);
		assert_true(s.chosen_qps <= 137.5);
		assert_true(s.chosen_qps >= 137 / 1.05 - 1);
		assert_non_null(strstr(s.reason, "meets the SLA (confirmed by a re-measure)"));
		/* The chosen rate was probed at least twice, passing each time. */
		unsigned seen = 0;
		for (unsigned i = 0; i < s.nprobes; i++)
			if (s.probes[i].qps == s.chosen_qps) {
				assert_true(s.probes[i].pass);
				seen++;
			}
		assert_true(seen >= 2);
		assert_int_equal(s.probes[s.nprobes - 1].phase, FL_PHASE_REMEASURE);
	}
}

/* Knees across three decades, with a budget that allows them: always within tolerance. */
static void test_converges_many_knees(void **state)
{
	(void)state;
	const double knees[] = { 5.5, 20, 63, 137, 333, 999, 2500 };
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	c.max_steps = 24;
	for (size_t k = 0; k < sizeof knees / sizeof knees[0]; k++) {
		for (uint64_t seed = 1; seed <= 10; seed++) {
			struct model m = model_make(knees[k], seed);
			run_search(&s, &c, &m);
			assert_true(s.converged);
			assert_true(s.chosen_qps <= knees[k] * 1.005);
			assert_true(s.chosen_qps >= knees[k] / 1.05 * 0.99);
		}
	}
	/* Growth 4 (the --quick bracket) with a 10% tolerance also converges. */
	c.growth = 4;
	c.tolerance = 0.10;
	c.max_steps = 9;
	struct model m = model_make(137, 3);
	run_search(&s, &c, &m);
	assert_true(s.converged);
	assert_true(s.chosen_qps <= 137.5 && s.chosen_qps >= 137 / 1.10 - 1);
}

/* Nothing passes: one probe, no rate, converged = 0 with the reason. */
static void test_always_fail(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	struct model m = model_make(1, 1);  /* knee far below the start rate */
	unsigned n = run_search(&s, &c, &m);
	assert_int_equal(n, 1);
	assert_false(s.converged);
	assert_true(s.chosen_qps == 0);
	assert_non_null(strstr(s.reason, "even START qps misses SLA"));
}

/* Everything passes up to --max-qps: the cap is probed, then converged = 0. */
static void test_always_pass_to_max(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	c.max_qps = 500;
	struct model m = model_make(1e9, 1);
	m.capacity = 1e12;
	unsigned n = run_search(&s, &c, &m);
	assert_int_equal(n, 8);  /* 4, 8, ..., 256, then 500 */
	assert_true(s.probes[7].qps == 500);
	assert_false(s.converged);
	assert_true(s.chosen_qps == 500);
	assert_non_null(strstr(s.reason, "SLA never reached below max"));

	/* Without a cap in reach the step budget ends it, also with a reason. */
	c.max_qps = 1e6;
	m = model_make(1e9, 1);
	m.capacity = 1e12;
	run_search(&s, &c, &m);
	assert_false(s.converged);
	assert_true(s.chosen_qps == 4 * pow(2, 11));
	assert_non_null(strstr(s.reason, "step budget"));
}

/* One lucky step above the knee (the first bisection probe, 181 qps) must not become the
 * answer: its re-measure fails and the search goes back down. */
static void test_noisy_false_pass(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	c.max_steps = 20;
	struct model m = model_make(137, 5);
	m.noise = 0;
	m.force_at = 7;
	m.force_pass = 1;
	run_search(&s, &c, &m);
	assert_true(s.probes[7].pass && s.probes[7].qps > 137);
	assert_true(s.converged);
	assert_true(s.chosen_qps <= 137 && s.chosen_qps >= 137 / 1.05 - 1);

	/* With the default budget of 12 it runs out, but still never reports the lucky rate. */
	c.max_steps = 12;
	m = model_make(137, 5);
	m.noise = 0;
	m.force_at = 7;
	m.force_pass = 1;
	run_search(&s, &c, &m);
	assert_false(s.converged);
	assert_true(s.chosen_qps > 0 && s.chosen_qps <= 137);
	assert_non_null(strstr(s.reason, "step budget"));
}

/* One unlucky step below the knee ends the bracket early: the answer is conservative
 * (below the knee), never above it. */
static void test_noisy_false_fail(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	fl_search_config_default(&c);
	struct model m = model_make(137, 2);
	m.force_at = 4;  /* 64 qps */
	m.force_pass = 0;
	run_search(&s, &c, &m);
	assert_true(s.chosen_qps >= 32 && s.chosen_qps < 64);
	assert_true(s.converged);
}

/* The pass rule: p95, achieved vs offered, error rate, empty windows. */
static void test_judge(void **state)
{
	(void)state;
	struct fl_search_config c;
	char why[256];
	fl_search_config_default(&c);
	struct fl_search_obs o = { 100, 100, 99, 650, 2000, 0 };
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 1);
	assert_string_equal(why, "ok");

	o.p95_ms = 700.5;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 0);
	assert_non_null(strstr(why, "p95 700.5 ms > SLA 700 ms"));

	o.p95_ms = 100;
	o.achieved_qps = 90;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 0);
	assert_non_null(strstr(why, "achieved 90.0 qps"));

	/* Poisson: the schedule offered only 92 qps; 90 achieved keeps up with it. */
	o.offered_qps = 92;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 1);
	o.offered_qps = 0;  /* unknown: compare with the requested rate */
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 0);

	o.achieved_qps = 100;
	o.errors = 20;  /* exactly 1%: fails */
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 0);
	assert_non_null(strstr(why, "errors 1.00%"));
	o.errors = 19;
	assert_int_equal(fl_search_judge(&c, &o, NULL, 0), 1);

	o.requests = 0;
	assert_int_equal(fl_search_judge(&c, &o, why, sizeof why), 0);
	assert_non_null(strstr(why, "no requests"));

	/* Several failures are all named. */
	struct fl_search_obs bad = { 100, 100, 10, 900, 100, 50 };
	assert_int_equal(fl_search_judge(&c, &bad, why, sizeof why), 0);
	assert_non_null(strstr(why, "p95"));
	assert_non_null(strstr(why, "achieved"));
	assert_non_null(strstr(why, "errors"));
}

/* next() repeats until record(); record() after done fails; remaining() reaches 0;
 * abort keeps the best clean pass; bad configs are refused. */
static void test_api(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	double q1, q2;
	enum fl_search_phase p1, p2;
	char err[128];

	fl_search_config_default(&c);
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), 0);
	fl_search_init(&s, &c);
	assert_int_equal(fl_search_remaining(&s), 12);
	assert_int_equal(fl_search_next(&s, &q1, &p1), 1);
	assert_int_equal(fl_search_next(&s, &q2, &p2), 1);
	assert_true(q1 == 4 && q2 == 4 && p1 == FL_PHASE_BRACKET && p2 == p1);
	struct fl_search_obs o = { 4, 4, 4, 100, 80, 0 };
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), 1);
	assert_int_equal(fl_search_next(&s, &q1, &p1), 1);
	assert_true(q1 == 8);
	fl_search_abort(&s, "interrupted");
	assert_int_equal(fl_search_next(&s, &q1, &p1), 0);
	assert_int_equal(fl_search_record(&s, &o, NULL, 0), -1);
	assert_int_equal(fl_search_remaining(&s), 0);
	assert_false(s.converged);
	assert_true(s.chosen_qps == 4);
	assert_string_equal(s.reason, "interrupted");

	c.growth = 1;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "growth"));
	fl_search_config_default(&c);
	c.max_steps = 65;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);
	fl_search_config_default(&c);
	c.max_qps = 1;
	assert_int_equal(fl_search_config_check(&c, err, sizeof err), -1);

	assert_string_equal(fl_search_phase_name(FL_PHASE_REMEASURE), "remeasure");
	assert_string_equal(fl_search_phase_name(FL_PHASE_FIXED), "fixed");
}

/* The ETA estimate shrinks as bisection narrows. */
static void test_remaining(void **state)
{
	(void)state;
	struct fl_search_config c;
	struct fl_search s;
	double q;
	enum fl_search_phase ph;
	fl_search_config_default(&c);
	struct model m = model_make(137, 1);
	fl_search_init(&s, &c);
	unsigned prev = fl_search_remaining(&s);
	while (fl_search_next(&s, &q, &ph)) {
		struct fl_search_obs o = model_measure(&m, q);
		fl_search_record(&s, &o, NULL, 0);
		unsigned r = fl_search_remaining(&s);
		if (ph != FL_PHASE_BRACKET)
			assert_true(r < prev);
		prev = r;
	}
	assert_int_equal(prev, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_converges_default),
		cmocka_unit_test(test_converges_many_knees),
		cmocka_unit_test(test_always_fail),
		cmocka_unit_test(test_always_pass_to_max),
		cmocka_unit_test(test_noisy_false_pass),
		cmocka_unit_test(test_noisy_false_fail),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_remaining),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
