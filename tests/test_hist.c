/* test_hist.c: the latency histogram's buckets, error bound, percentiles and merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "hist.h"
#include "hist_json.h"
#include "quantile_ci.h"
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

/* h through its JSON form and back (hist_json.h); asserts the form is accepted. */
static void merge_via_json(struct fl_hist *dst, const struct fl_hist *h)
{
	char err[256] = "";
	json_t *j = fl_hist_to_json(h);
	assert_non_null(j);
	/* Through text, as a driver's step line travels. */
	char *text = json_dumps(j, JSON_COMPACT);
	json_t *back = json_loads(text, 0, NULL);
	assert_non_null(back);
	if (fl_hist_merge_json(dst, back, err, sizeof err) != 0)
		fail_msg("refused: %s", err);
	free(text);
	json_decref(back);
	json_decref(j);
}

/* Three "drivers" with different latency shapes (seeded), each sent as JSON and merged:
 * the merge equals one histogram of the pooled values bucket for bucket, with the same
 * count, min, max and sum, so p95 (every percentile) and the p95 interval are the pooled
 * ones; the merged p95 lies between the drivers' own. */
static void test_json_merge_pooled(void **state)
{
	(void)state;
	struct fl_hist *d[3] = { new_hist(), new_hist(), new_hist() };
	struct fl_hist *all = new_hist(), *merged = new_hist();
	struct fl_rng r;
	const uint64_t spread[3] = { 5000000ull, 20000000ull, 800000000ull };  /* ns */
	fl_rng_seed(&r, 11);
	printf("seed 11\n");
	for (int i = 0; i < 60000; i++) {
		int k = i % 3;
		uint64_t x = 100000 + fl_rng_below(&r, spread[k]);
		fl_hist_record(d[k], x);
		fl_hist_record(all, x);
	}
	for (int k = 0; k < 3; k++)
		merge_via_json(merged, d[k]);
	assert_memory_equal(merged->counts, all->counts, sizeof all->counts);
	assert_int_equal(merged->n, all->n);
	assert_int_equal(merged->min, all->min);
	assert_int_equal(merged->max, all->max);
	assert_true(merged->sum == all->sum);
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(fl_hist_percentile(merged, p), fl_hist_percentile(all, p));
	uint64_t lo, hi, alo, ahi;
	assert_int_equal(fl_hist_quantile_interval(merged, 0.95, FL_CI_Z95, &lo, &hi), 0);
	assert_int_equal(fl_hist_quantile_interval(all, 0.95, FL_CI_Z95, &alo, &ahi), 0);
	assert_int_equal(lo, alo);
	assert_int_equal(hi, ahi);
	uint64_t p95 = fl_hist_percentile(merged, 95), dmin = UINT64_MAX, dmax = 0;
	for (int k = 0; k < 3; k++) {
		uint64_t v = fl_hist_percentile(d[k], 95);
		dmin = v < dmin ? v : dmin;
		dmax = v > dmax ? v : dmax;
	}
	assert_true(p95 >= dmin && p95 <= dmax);
	assert_true(p95 > dmin);  /* not the best driver's, nor an average of them */
	for (int k = 0; k < 3; k++)
		free(d[k]);
	free(all);
	free(merged);
}

/* A driver with no latencies: its form has count 0, min and max null, no buckets; it
 * merges as nothing, into an empty or a full histogram. */
static void test_json_empty(void **state)
{
	(void)state;
	struct fl_hist *e = new_hist(), *h = new_hist(), *want = new_hist();
	json_t *j = fl_hist_to_json(e);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "count")), 0);
	assert_true(json_is_null(json_object_get(j, "min")));
	assert_true(json_is_null(json_object_get(j, "max")));
	assert_int_equal(json_array_size(json_object_get(j, "buckets")), 0);
	json_decref(j);
	merge_via_json(h, e);
	assert_int_equal(h->n, 0);
	assert_int_equal(h->min, UINT64_MAX);
	uint64_t lo, hi;
	assert_int_equal(fl_hist_quantile_interval(h, 0.95, FL_CI_Z95, &lo, &hi), -1);
	fl_hist_record_n(h, 3000000, 5);
	fl_hist_record_n(want, 3000000, 5);
	merge_via_json(h, e);
	assert_memory_equal(h, want, sizeof *h);
	free(e);
	free(h);
	free(want);
}

/* Malformed or mismatched forms are refused with a reason and leave the destination
 * as it was: never a crash, never a silently wrong merge. */
static void test_json_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"[]",
		"{\"sub_bits\": 6, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[5, 1]]}",                             /* other layout */
		"{\"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, \"buckets\": [[5, 1]]}",
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5}",
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[7424, 1]]}",                          /* index past the end */
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[-1, 1]]}",
		"{\"sub_bits\": 7, \"count\": 2, \"min\": 5, \"max\": 9, \"sum\": 14, "
			"\"buckets\": [[9, 1], [5, 1]]}",                     /* out of order */
		"{\"sub_bits\": 7, \"count\": 2, \"min\": 5, \"max\": 5, \"sum\": 10, "
			"\"buckets\": [[5, 1], [5, 1]]}",                     /* twice */
		"{\"sub_bits\": 7, \"count\": 0, \"min\": 5, \"max\": 5, \"sum\": 0, "
			"\"buckets\": [[5, 0]]}",                             /* empty bucket listed */
		"{\"sub_bits\": 7, \"count\": 3, \"min\": 5, \"max\": 5, \"sum\": 15, "
			"\"buckets\": [[5, 2]]}",                             /* counts do not add up */
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 6, \"max\": 6, \"sum\": 6, "
			"\"buckets\": [[5, 1]]}",                             /* min outside */
		"{\"sub_bits\": 7, \"count\": 2, \"min\": 9, \"max\": 5, \"sum\": 14, "
			"\"buckets\": [[5, 1], [9, 1]]}",                     /* min > max */
		"{\"sub_bits\": 7, \"count\": 2, \"min\": 5, \"max\": 9, \"sum\": 100, "
			"\"buckets\": [[5, 1], [9, 1]]}",                     /* sum > max x count */
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": \"5\", "
			"\"buckets\": [[5, 1]]}",
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[5]]}",                                /* not a pair */
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[\"5\", 1]]}",
		"{\"sub_bits\": 7, \"count\": 1, \"min\": 5, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[5, 9223372036854775807], [6, 1]]}",   /* the total overflows */
		"{\"sub_bits\": 7, \"count\": 1, \"min\": null, \"max\": 5, \"sum\": 5, "
			"\"buckets\": [[5, 1]]}",
	};
	struct fl_hist *h = new_hist(), *want = new_hist();
	fl_hist_record_n(h, 42, 3);
	fl_hist_record_n(want, 42, 3);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		json_t *j = json_loads(bad[i], 0, NULL);
		assert_non_null(j);
		if (fl_hist_merge_json(h, j, err, sizeof err) != -1)
			fail_msg("form %zu accepted: %s", i, bad[i]);
		assert_true(strncmp(err, "histogram: ", 11) == 0);
		assert_memory_equal(h, want, sizeof *h);
		json_decref(j);
	}
	assert_int_equal(fl_hist_merge_json(h, NULL, (char[64]){ 0 }, 64), -1);
	free(h);
	free(want);
}

/* The p95 interval: the values at ranks n*0.95 -+ 1.96 sqrt(n 0.95 0.05). Values
 * 1..200 each in its own bucket: ranks 183 and 197, so the values 183 and 197. */
static void test_quantile_interval(void **state)
{
	(void)state;
	struct fl_hist *h = new_hist();
	uint64_t lo, hi;
	for (uint64_t v = 1; v <= 200; v++)
		fl_hist_record(h, v);
	assert_int_equal(fl_hist_quantile_interval(h, 0.95, FL_CI_Z95, &lo, &hi), 0);
	assert_int_equal(lo, 183);
	assert_int_equal(hi, 197);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_tile),
		cmocka_unit_test(test_small_exact_and_empty),
		cmocka_unit_test(test_relative_error),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_json_merge_pooled),
		cmocka_unit_test(test_json_empty),
		cmocka_unit_test(test_json_refused),
		cmocka_unit_test(test_quantile_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
