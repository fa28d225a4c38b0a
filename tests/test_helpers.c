/* test_helpers.c: the shared hot helpers and the hash-map builder (templates/helpers.c).
 *
 * Random tests draw from a splitmix64 stream whose seed is printed; set FL_TEST_SEED to
 * replay one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_extract.h"

#define TEST_SEED_DEFAULT 0x5eed0001ull /* test_seed() without FL_TEST_SEED */
#include "testutil.h"

#define HIT_SAMPLES 100000u   /* random lookups per measured hit rate */

static int test_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every universe key is non-zero and distinct, and only the low 16 bits of sel matter. */
static void test_key_of_universe(void **state)
{
	uint64_t *keys = calloc(FL_KEY_UNIVERSE, sizeof(*keys));

	(void)state;
	assert_non_null(keys);
	for (uint32_t s = 0; s < FL_KEY_UNIVERSE; s++) {
		keys[s] = fl_key_of(s);
		assert_int_not_equal(keys[s], 0);
		assert_int_equal(fl_key_of(s | 0xABCD0000u), keys[s]);
		assert_int_equal(fl_key_of(s | 0xFFFF0000u), keys[s]);
	}
	qsort(keys, FL_KEY_UNIVERSE, sizeof(*keys), test_cmp_u64);
	for (uint32_t s = 1; s < FL_KEY_UNIVERSE; s++)
		assert_true(keys[s] != keys[s - 1]);
	free(keys);
}

/* Measure the hit rate of fl_key_of(random) lookups against a map built for hit_q16, and
 * check each hit's counters are consistent (clicks <= impressions). */
static double test_measure_hits(uint32_t hit_q16, uint64_t seed, uint64_t *rng)
{
	struct fl_hmap m;
	struct fl_ctx ctx;
	uint32_t hits = 0;

	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(fl_hmap_build(&m, hit_q16, seed), 0);
	assert_int_equal(m.mask, 2u * FL_KEY_UNIVERSE - 1u);
	assert_int_equal(m.hit_q16, hit_q16);
	ctx.hmap = &m;
	for (uint32_t i = 0; i < HIT_SAMPLES; i++) {
		const uint32_t *v = fl_hmap_find(&ctx, fl_key_of((uint32_t)test_rand(rng)));

		if (v == NULL)
			continue;
		hits++;
		assert_true(v[0] >= 1 && v[0] <= 65536u);
		assert_true(v[1] <= v[0]);
		assert_true(v[2] < (1u << 22));
		assert_true(v[3] <= 255u && v[4] <= 65535u && v[5] <= 65535u);
	}
	if (hit_q16 == 0)
		assert_int_equal(m.nkeys, 0);
	if (hit_q16 == 65536u)
		assert_int_equal(m.nkeys, FL_KEY_UNIVERSE);
	fl_hmap_free(&m);
	return (double)hits / HIT_SAMPLES;
}

/* Hit rates 0, 0.25, 0.5 and 1 measured over 100k random selectors: within 1% (absolute),
 * and exact at 0 and 1. */
static void test_hmap_hit_rates(void **state)
{
	static const uint32_t rates_q16[] = { 0, 16384, 32768, 65536 };
	uint64_t rng = test_seed();

	(void)state;
	for (size_t i = 0; i < sizeof(rates_q16) / sizeof(rates_q16[0]); i++) {
		double want = rates_q16[i] / 65536.0;
		double got = test_measure_hits(rates_q16[i], test_rand(&rng), &rng);

		print_message("hit_q16 %u: want %.4f got %.4f\n", rates_q16[i], want, got);
		if (rates_q16[i] == 0 || rates_q16[i] == 65536u)
			assert_true(got == want);
		else
			assert_true(got > want - 0.01 && got < want + 0.01);
	}
}

/* The same (hit_q16, seed) gives a byte-identical map; another seed does not; a lower rate
 * with the same seed keeps a subset of the keys, with the same counters. */
static void test_hmap_determinism(void **state)
{
	struct fl_hmap a, b, c, lo;
	size_t bytes = (2u * FL_KEY_UNIVERSE) * sizeof(struct fl_hmap_slot);
	struct fl_ctx ctx;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(fl_hmap_build(&a, 32768, 42), 0);
	assert_int_equal(fl_hmap_build(&b, 32768, 42), 0);
	assert_int_equal(fl_hmap_build(&c, 32768, 43), 0);
	assert_int_equal(fl_hmap_build(&lo, 8192, 42), 0);
	assert_int_equal(a.nkeys, b.nkeys);
	assert_memory_equal(a.slots, b.slots, bytes);
	assert_true(memcmp(a.slots, c.slots, bytes) != 0);
	assert_true(lo.nkeys < a.nkeys);
	ctx.hmap = &a;
	for (uint32_t i = 0; i <= lo.mask; i++)
		if (lo.slots[i].key != 0) {
			const uint32_t *v = fl_hmap_find(&ctx, lo.slots[i].key);

			assert_non_null(v);
			assert_memory_equal(v, lo.slots[i].val, sizeof(lo.slots[i].val));
		}
	fl_hmap_free(&a);
	fl_hmap_free(&b);
	fl_hmap_free(&c);
	fl_hmap_free(&lo);
}

/* Bad rate, double free, a context without a map, key 0. */
static void test_hmap_edges(void **state)
{
	struct fl_hmap m;
	struct fl_ctx ctx;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(fl_hmap_build(&m, 65537u, 1), -1);
	assert_null(m.slots);
	fl_hmap_free(&m);
	assert_null(fl_hmap_find(&ctx, fl_key_of(7)));
	assert_int_equal(fl_hmap_build(&m, 65536u, 1), 0);
	ctx.hmap = &m;
	assert_non_null(fl_hmap_find(&ctx, fl_key_of(7)));
	assert_null(fl_hmap_find(&ctx, 0));
	assert_null(fl_hmap_find(&ctx, 0x1234567ull));
	fl_hmap_free(&m);
	assert_null(m.slots);
	fl_hmap_free(&m);
}

/* den 0, zero numerator, exact fractions, clamping above 1, extreme values. */
static void test_rate_q16(void **state)
{
	(void)state;
	assert_int_equal(fl_rate_q16(0, 0), 0);
	assert_int_equal(fl_rate_q16(5, 0), 0);
	assert_int_equal(fl_rate_q16(UINT32_MAX, 0), 0);
	assert_int_equal(fl_rate_q16(0, 5), 0);
	assert_int_equal(fl_rate_q16(1, 2), 32768);
	assert_int_equal(fl_rate_q16(1, 3), 21845);
	assert_int_equal(fl_rate_q16(7, 7), 65536);
	assert_int_equal(fl_rate_q16(3, 2), 65536);
	assert_int_equal(fl_rate_q16(UINT32_MAX, 1), 65536);
	assert_int_equal(fl_rate_q16(UINT32_MAX, UINT32_MAX), 65536);
	assert_int_equal(fl_rate_q16(1, UINT32_MAX), 0);
	assert_int_equal(fl_rate_q16(UINT32_MAX - 1u, UINT32_MAX), 65535);
}

/* Known values, range 0..nbuckets-1, and non-decreasing in v for every bucket count. */
static void test_log_bucket(void **state)
{
	(void)state;
	assert_int_equal(fl_log_bucket(0, 16), 0);
	assert_int_equal(fl_log_bucket(1, 16), 1);
	assert_int_equal(fl_log_bucket(2, 16), 2);
	assert_int_equal(fl_log_bucket(3, 16), 2);
	assert_int_equal(fl_log_bucket(4, 16), 3);
	assert_int_equal(fl_log_bucket(1000, 16), 10);
	assert_int_equal(fl_log_bucket(UINT32_MAX, 64), 32);
	assert_int_equal(fl_log_bucket(UINT32_MAX, 8), 7);
	assert_int_equal(fl_log_bucket(12345, 1), 0);
	assert_int_equal(fl_log_bucket(12345, 0), 0);
	for (uint32_t nb = 0; nb <= 40; nb++) {
		uint32_t prev = 0;

		for (uint64_t v = 0; v <= UINT32_MAX; v = v < 4096 ? v + 1 : v + v / 7 + 1) {
			uint32_t b = fl_log_bucket((uint32_t)v, nb);

			assert_true(b >= prev);
			assert_true(nb == 0 ? b == 0 : b < nb);
			prev = b;
		}
		assert_true(fl_log_bucket(UINT32_MAX, nb) >= prev);
	}
}

/* All zero, one word set, the sentinel, wrapping ranges, n = 0, n above the story. */
static void test_validate(void **state)
{
	uint32_t story[FL_STORY_U32];
	struct fl_ctx ctx;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	memset(story, 0, sizeof(story));
	ctx.story = story;
	assert_int_equal(fl_validate(&ctx, 0, 8), 0);
	story[5] = 9;
	assert_int_not_equal(fl_validate(&ctx, 0, 8), 0);
	assert_int_equal(fl_validate(&ctx, 6, 8), 0);
	assert_int_equal(fl_validate(&ctx, 0, 0), 0);
	story[0] = 1;
	assert_int_not_equal(fl_validate(&ctx, FL_STORY_U32 - 2u, 4), 0);   /* wraps to word 0 */
	story[3] = UINT32_MAX;
	assert_int_equal(fl_validate(&ctx, 0, 8), 0);
	assert_int_not_equal(fl_validate(&ctx, 4, 4), 0);
	assert_int_equal(fl_validate(&ctx, 100, UINT32_MAX), 0);   /* capped, still sees word 3 */
	story[3] = 0;
	assert_int_not_equal(fl_validate(&ctx, 100, UINT32_MAX), 0);
}

/* Past, present and future timestamps. */
static void test_age_s(void **state)
{
	struct fl_ctx ctx;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	ctx.now_s = 1000;
	assert_int_equal(fl_age_s(&ctx, 400), 600);
	assert_int_equal(fl_age_s(&ctx, 1000), 0);
	assert_int_equal(fl_age_s(&ctx, 1001), 0);
	assert_int_equal(fl_age_s(&ctx, 0), 1000);
	ctx.now_s = UINT32_MAX;
	assert_int_equal(fl_age_s(&ctx, 0), UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_of_universe),
		cmocka_unit_test(test_hmap_hit_rates),
		cmocka_unit_test(test_hmap_determinism),
		cmocka_unit_test(test_hmap_edges),
		cmocka_unit_test(test_rate_q16),
		cmocka_unit_test(test_log_bucket),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_age_s),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
