/* test_hist.c: the latency histogram's buckets, error bound, percentiles and merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "hist.h"
#include "rng.h"

static struct fl_hist *new_hist(void)
{
	struct fl_hist *h = malloc(sizeof *h);
	assert_non_null(h);
	fl_hist_init(h);
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Buckets tile the whole u64 range without gaps or overlaps, each at most 1/128 of its
 * lower bound wide. */
static void test_buckets_tile(void **state)
{
	(void)state;
	uint64_t prev_hi = 0;
	for (unsigned b = 0; b < FL_HIST_BUCKETS; b++) {
		uint64_t lo, hi;
		fl_hist_bucket_range(b, &lo, &hi);
		if (b > 0)
			assert_int_equal(lo, prev_hi + 1);
		assert_true(hi >= lo);
		if (lo >= FL_HIST_SUB)
			assert_true((hi - lo) <= lo / FL_HIST_SUB);
		assert_int_equal(fl_hist_bucket(lo), b);
		assert_int_equal(fl_hist_bucket(hi), b);
		prev_hi = hi;
	}
	assert_int_equal(prev_hi, UINT64_MAX);
}

/* Small values are exact; empty histograms report 0. */
static void test_small_exact_and_empty(void **state)
{
	(void)state;
	struct fl_hist *h = new_hist();
	assert_int_equal(fl_hist_percentile(h, 50), 0);
	assert_true(fl_hist_mean(h) == 0.0);
	for (uint64_t v = 1; v <= 100; v++)
		fl_hist_record(h, v);
	assert_int_equal(fl_hist_percentile(h, 50), 50);
	assert_int_equal(fl_hist_percentile(h, 95), 95);
	assert_int_equal(fl_hist_percentile(h, 0), 1);
	assert_int_equal(fl_hist_percentile(h, 100), 100);
	assert_int_equal(fl_hist_percentile(h, -5), 1);
	assert_int_equal(fl_hist_percentile(h, 250), 100);
	assert_true(fl_hist_mean(h) > 50.49 && fl_hist_mean(h) < 50.51);
	free(h);
}

/* Against exact percentiles of 200,000 log-uniform latencies (1 µs .. 10 s in ns): every
 * reported percentile within 1% of the exact order statistic. */
static void test_relative_error(void **state)
{
	(void)state;
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof *v);
	assert_non_null(v);
	struct fl_hist *h = new_hist();
	struct fl_rng r;
	fl_rng_seed(&r, 42);
	for (int i = 0; i < N; i++) {
		double e = 3.0 + 7.0 * fl_rng_unit(&r);  /* 10^3 .. 10^10 ns */
		v[i] = (uint64_t)__builtin_exp(e * 2.302585092994046);
		fl_hist_record(h, v[i]);
	}
	qsort(v, N, sizeof *v, cmp_u64);
	const double ps[] = { 1, 10, 50, 90, 95, 99, 99.9, 99.99 };
	for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
		size_t rank = (size_t)__builtin_ceil(ps[i] / 100.0 * N);
		uint64_t exact = v[rank - 1];
		uint64_t got = fl_hist_percentile(h, ps[i]);
		double rel = ((double)got - (double)exact) / (double)exact;
		if (rel < 0)
			rel = -rel;
		assert_true(rel <= 0.01);
	}
	assert_int_equal(fl_hist_percentile(h, 100), v[N - 1]);
	assert_int_equal(fl_hist_percentile(h, 0), v[0]);
	free(h);
	free(v);
}

/* Merging per-thread histograms equals recording everything in one. */
static void test_merge(void **state)
{
	(void)state;
	struct fl_hist *a = new_hist(), *b = new_hist(), *all = new_hist();
	struct fl_rng r;
	fl_rng_seed(&r, 7);
	for (int i = 0; i < 50000; i++) {
		uint64_t x = fl_rng_below(&r, 1000000000ull);
		fl_hist_record(i & 1 ? a : b, x);
		fl_hist_record(all, x);
	}
	fl_hist_merge(a, b);
	assert_int_equal(a->n, all->n);
	assert_int_equal(a->min, all->min);
	assert_int_equal(a->max, all->max);
	assert_memory_equal(a->counts, all->counts, sizeof a->counts);
	for (double p = 0; p <= 100; p += 2.5)
		assert_int_equal(fl_hist_percentile(a, p), fl_hist_percentile(all, p));
	fl_hist_record_n(b, 5, 0);
	free(a);
	free(b);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_tile),
		cmocka_unit_test(test_small_exact_and_empty),
		cmocka_unit_test(test_relative_error),
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
