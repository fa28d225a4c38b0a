/* test_story_proc.c: tests for runtime/request/story_proc.c, the story processors.
 *
 * Random tests draw from a splitmix64 stream whose seed is printed; set FL_TEST_SEED to
 * replay one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "story_proc.h"

#define TEST_SEED_DEFAULT 0x1eaf0005ull /* test_seed() without FL_TEST_SEED */
#include "testutil.h"

static int sp_naive_cmp(const void *pa, const void *pb)
{
	const struct fl_sp_story *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Random stories; scores on a coarse grid so ties are common. */
static void sp_random(struct fl_rng *r, struct fl_sp_story *s, size_t n, uint8_t *bodies)
{
	for (size_t i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].id = fl_rng_below(r, 1000000);
		s[i].score = (float)fl_rng_below(r, 50) / 8.0f - 3.0f;
		for (unsigned f = 0; f < FL_SP_FEAT; f++)
			s[i].feat[f] = (float)(fl_rng_unit(r) * 8.0 - 4.0);
		s[i].slot = (uint32_t)i;
		s[i].body = bodies + i * 64;
		s[i].body_len = 64;
		for (size_t b = 0; b < 64; b++)
			bodies[i * 64 + b] = (uint8_t)fl_rng_next(r);
	}
}

/* 7: top-K equals the first K of a full sort, for K below, at and above n. */
static void test_sp_topk(void **state)
{
	enum { N = 300 };
	static const size_t ks[] = { 1, 2, 7, 64, 299, 300, 500 };
	struct fl_sp_story *s = malloc(N * sizeof(*s)), *sorted = malloc(N * sizeof(*s));
	uint8_t *bodies = malloc(N * 64);
	uint32_t order[N];
	struct fl_rng r;

	(void)state;
	fl_rng_seed(&r, test_seed());
	for (int round = 0; round < 20; round++) {
		size_t n = 1 + fl_rng_below(&r, N);

		sp_random(&r, s, n, bodies);
		memcpy(sorted, s, n * sizeof(*s));
		qsort(sorted, n, sizeof(*s), sp_naive_cmp);
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
			size_t k = fl_sp_topk(s, n, ks[ki], order);

			assert_int_equal(k, ks[ki] < n ? ks[ki] : n);
			for (size_t i = 0; i < k; i++) {
				assert_int_equal(s[order[i]].id, sorted[i].id);
				assert_true(s[order[i]].score == sorted[i].score);
			}
		}
	}
	assert_int_equal(fl_sp_topk(s, 0, 5, order), 0);
	free(s);
	free(sorted);
	free(bodies);
}

/* Score, filter, top-K, blend and serialize one batch; returns the checksum. */
static uint64_t sp_run(uint64_t wseed, uint64_t dseed, size_t n, uint32_t *kept_out,
	float *scores)
{
	struct fl_sp *sp = fl_sp_new(n, wseed);
	struct fl_sp_story *s = malloc(n * sizeof(*s));
	uint8_t *bodies = malloc(n * 64);
	uint32_t *order = malloc(n * sizeof(*order));
	struct fl_rng r;
	size_t kept, k, packed;
	uint64_t sum;

	assert_non_null(sp);
	fl_rng_seed(&r, dseed);
	sp_random(&r, s, n, bodies);
	fl_sp_score(sp, s, n, 4);
	kept = fl_sp_filter(sp, s, n, NULL, 0);
	k = fl_sp_topk(s, kept, 16, order);
	fl_sp_blend(s, order, k, 2);
	for (size_t i = 1; i < k; i++)
		assert_true(s[order[i - 1]].score >= s[order[i]].score);
	sum = fl_sp_serialize(sp, s, order, k, 3, &packed);
	assert_true(packed > 8 + k * (1 + 4 + FL_SP_FEAT + 1));
	for (size_t i = 0; i < k; i++)
		scores[i] = s[order[i]].score;
	*kept_out = (uint32_t)kept;
	fl_sp_free(sp);
	free(s);
	free(bodies);
	free(order);
	return sum;
}

/* 8: the processors are deterministic for a seed, and the weights follow the seed. */
static void test_sp_determinism(void **state)
{
	float a[16], b[16], c[16];
	uint32_t ka, kb, kc;
	uint64_t sa = sp_run(1, 99, 100, &ka, a);
	uint64_t sb = sp_run(1, 99, 100, &kb, b);
	uint64_t sc = sp_run(2, 99, 100, &kc, c);

	(void)state;
	assert_int_equal(sa, sb);
	assert_int_equal(ka, kb);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_not_equal(sa, sc);
	assert_true(ka >= 85 && ka <= 100);
}

/* 9: the filter drops repeated ids, session-seen ids and score outliers, keeping order. */
static void test_sp_filter(void **state)
{
	struct fl_sp *sp = fl_sp_new(16, 3);
	struct fl_sp_story s[12];
	const uint64_t seen[] = { 105, 999 };
	size_t kept;

	(void)state;
	assert_non_null(sp);
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 12; i++) {
		s[i].id = 100 + (uint64_t)i;
		s[i].score = 0.5f + 0.01f * (float)i;
	}
	s[3].id = 101;          /* repeat of story 1 */
	s[8].score = -50.0f;    /* outlier */
	s[10].feat[2] = NAN;
	kept = fl_sp_filter(sp, s, 12, seen, 2);
	assert_int_equal(kept, 8);
	const uint64_t want[] = { 100, 101, 102, 104, 106, 107, 109, 111 };
	for (size_t i = 0; i < kept; i++)
		assert_int_equal(s[i].id, want[i]);
	fl_sp_free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sp_topk),
		cmocka_unit_test(test_sp_determinism),
		cmocka_unit_test(test_sp_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
