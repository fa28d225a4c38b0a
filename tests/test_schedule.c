/* test_schedule.c: the driver's open-loop schedule: rates, determinism, Poisson shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "schedule.h"

/* Fixed arrivals are exactly 1/qps apart. */
static void test_fixed(void **state)
{
	(void)state;
	struct fl_schedule s;
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, 1000.0, 1), 0);
	for (uint64_t i = 1; i <= 10000; i++)
		assert_int_equal(fl_schedule_next(&s), i * 1000000ull);
}

/* Poisson: the mean gap is 1/qps within 1% over 200,000 gaps, the coefficient of
 * variation is ~1 (exponential), and P(gap > mean) is ~e^-1. */
static void test_poisson_shape(void **state)
{
	(void)state;
	struct fl_schedule s;
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_POISSON, 500.0, 9), 0);
	enum { N = 200000 };
	double prev = 0, sum = 0, sum2 = 0;
	unsigned above = 0;
	for (int i = 0; i < N; i++) {
		double t = (double)fl_schedule_next(&s);
		double g = t - prev;
		prev = t;
		sum += g;
		sum2 += g * g;
		above += g > 2e6;
	}
	double mean = sum / N;
	double sd = sqrt(sum2 / N - mean * mean);
	assert_true(fabs(mean - 2e6) / 2e6 < 0.01);
	assert_true(fabs(sd / mean - 1.0) < 0.02);
	assert_true(fabs((double)above / N - exp(-1.0)) < 0.01);
}

/* The same seed gives the same times; another seed other times. */
static void test_deterministic(void **state)
{
	(void)state;
	struct fl_schedule a, b, c;
	fl_schedule_init(&a, FL_ARRIVAL_POISSON, 100.0, 5);
	fl_schedule_init(&b, FL_ARRIVAL_POISSON, 100.0, 5);
	fl_schedule_init(&c, FL_ARRIVAL_POISSON, 100.0, 6);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = fl_schedule_next(&a), y = fl_schedule_next(&b), z = fl_schedule_next(&c);
		assert_int_equal(x, y);
		differ |= x != z;
	}
	assert_true(differ);
}

/* Bad rates are refused; a rate change applies to later gaps; arrival names parse. */
static void test_rates_and_names(void **state)
{
	(void)state;
	struct fl_schedule s;
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, 0.0, 1), -1);
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, -3.0, 1), -1);
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, NAN, 1), -1);
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, INFINITY, 1), -1);
	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_FIXED, 10.0, 1), 0);
	assert_int_equal(fl_schedule_next(&s), 100000000ull);
	assert_int_equal(fl_schedule_set_qps(&s, 100.0), 0);
	assert_int_equal(fl_schedule_next(&s), 110000000ull);
	assert_int_equal(fl_schedule_set_qps(&s, 0.0), -1);
	enum fl_arrival a;
	assert_int_equal(fl_arrival_parse("poisson", &a), 0);
	assert_int_equal(a, FL_ARRIVAL_POISSON);
	assert_int_equal(fl_arrival_parse("fixed", &a), 0);
	assert_int_equal(a, FL_ARRIVAL_FIXED);
	assert_int_equal(fl_arrival_parse("binomial", &a), 0);
	assert_int_equal(a, FL_ARRIVAL_BINOMIAL);
	assert_int_equal(fl_arrival_parse("uniform", &a), -1);
	uint64_t w[1] = { 1000000000ull };
	assert_int_equal(fl_schedule_windows(&s, w, 1), -1);  /* s is fixed */
}

/* Binomial: each window holds exactly round(qps x length) arrivals, in order and inside
 * it; an empty window holds none; once spent, the schedule returns the last window's end.
 * The same seed repeats the times. */
static void test_binomial_counts(void **state)
{
	(void)state;
	struct fl_schedule s, r;
	uint64_t w[3] = { 1000000000ull, 0, 4000000000ull };
	uint64_t prev = 0, in[2] = { 0, 0 };

	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_BINOMIAL, 200.0, 3), 0);
	assert_int_equal(fl_schedule_init(&r, FL_ARRIVAL_BINOMIAL, 200.0, 3), 0);
	assert_int_equal(fl_schedule_windows(&s, w, 0), -1);
	assert_int_equal(fl_schedule_windows(&s, w, 3), 0);
	assert_int_equal(fl_schedule_windows(&r, w, 3), 0);
	for (;;) {
		uint64_t t = fl_schedule_next(&s);
		assert_int_equal(t, fl_schedule_next(&r));
		if (t >= 5000000000ull) {
			assert_int_equal(t, 5000000000ull);
			break;
		}
		assert_true(t >= prev);
		prev = t;
		in[t >= 1000000000ull]++;
	}
	assert_int_equal(in[0], 200);
	assert_int_equal(in[1], 800);
	assert_int_equal(s.issued, 1000);
	assert_int_equal(fl_schedule_next(&s), 5000000000ull);
	assert_int_equal(s.issued, 1000);
}

/* Binomial times are uniform over the window and their gaps exponential-like: 100,000
 * arrivals in 10 s put 10,000 +- 5 sd in each second, gaps have a coefficient of
 * variation ~1 and P(gap > mean) ~e^-1, as a Poisson stream's do. */
static void test_binomial_shape(void **state)
{
	(void)state;
	struct fl_schedule s;
	uint64_t w[1] = { 10000000000ull };
	enum { N = 100000 };
	unsigned per_s[10] = { 0 };
	double prev = 0, sum = 0, sum2 = 0;
	unsigned above = 0;

	assert_int_equal(fl_schedule_init(&s, FL_ARRIVAL_BINOMIAL, 10000.0, 11), 0);
	assert_int_equal(fl_schedule_windows(&s, w, 1), 0);
	for (int i = 0; i < N; i++) {
		double t = (double)fl_schedule_next(&s);
		double g = t - prev;
		assert_true(t < 1e10);
		per_s[(int)(t / 1e9)]++;
		prev = t;
		sum += g;
		sum2 += g * g;
		above += g > 1e5;
	}
	assert_int_equal(fl_schedule_next(&s), 10000000000ull);
	for (int k = 0; k < 10; k++)
		assert_true(fabs((double)per_s[k] - 10000.0) < 5 * sqrt(10000.0 * 0.9));
	double mean = sum / N;
	double sd = sqrt(sum2 / N - mean * mean);
	assert_true(fabs(mean - 1e5) / 1e5 < 0.01);
	assert_true(fabs(sd / mean - 1.0) < 0.02);
	assert_true(fabs((double)above / N - exp(-1.0)) < 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_poisson_shape),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_rates_and_names),
		cmocka_unit_test(test_binomial_counts),
		cmocka_unit_test(test_binomial_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
