/* test_model_inputs.c: tests for runtime/request/model_inputs.c, a story's model inputs.
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

#include "dlrm.h"
#include "fl_extract.h"
#include "model_inputs.h"
#include "rng.h"
#include "story_proc.h"

#define TEST_SEED_DEFAULT 0xfea70001ull /* test_seed() without FL_TEST_SEED */
#include "testutil.h"

/* The definition, slot by slot: slot j into input j mod 13 and feature j mod 16. */
static void naive_fold(const int32_t *slot, uint32_t *in13, uint32_t *in16)
{
	for (uint32_t j = 0; j < FL_DENSE_SLOTS; j++) {
		in13[j % FL_DLRM_DENSE] += (uint32_t)slot[j];
		in16[j % FL_SP_FEAT] += (uint32_t)slot[j];
	}
}

static struct fl_sink *sink_new(void)
{
	struct fl_sink *sk = calloc(1, sizeof(*sk));

	assert_non_null(sk);
	return sk;
}

/* The row-wise fold equals the slot-by-slot one, wrapping sums included: sparse sinks,
 * full ones, and slots at INT32_MIN and INT32_MAX. */
static void test_fold_matches_definition(void **state)
{
	struct fl_rng r;
	struct fl_sink *sk = sink_new();

	(void)state;
	fl_rng_seed(&r, test_seed());
	for (int round = 0; round < 64; round++) {
		uint32_t want13[FL_DLRM_DENSE] = { 0 }, want16[FL_SP_FEAT] = { 0 };
		uint32_t got13[FL_DLRM_DENSE] = { 0 }, got16[FL_SP_FEAT] = { 0 };
		uint64_t fill = fl_rng_next(&r) % 101u;   /* percent of slots written */

		for (uint32_t j = 0; j < FL_DENSE_SLOTS; j++) {
			uint64_t x = fl_rng_next(&r);

			sk->dense[j] = x % 100u < fill ? (int32_t)(uint32_t)(x >> 32) : 0;
		}
		if (round % 8 == 7)
			for (uint32_t j = 0; j < FL_DENSE_SLOTS; j++)
				sk->dense[j] = (j & 1u) ? INT32_MAX : INT32_MIN;
		naive_fold(sk->dense, want13, want16);
		fl_inputs_fold_dense(sk->dense, got13, got16);
		assert_memory_equal(got13, want13, sizeof(want13));
		assert_memory_equal(got16, want16, sizeof(want16));
	}
	free(sk);
}

/* Inputs log-scaled with their sign; an empty sink gives zeros; sparse ids below rows;
 * the same sink and hash give the same ids, another hash other ids. */
static void test_story_features(void **state)
{
	struct fl_sink *sk = sink_new();
	float dense[FL_DLRM_DENSE], feat[FL_SP_FEAT], dense2[FL_DLRM_DENSE], feat2[FL_SP_FEAT];
	uint32_t sparse[FL_DLRM_SPARSE], sparse2[FL_DLRM_SPARSE];
	int differ = 0;

	(void)state;
	fl_inputs_story(sk, 1, 1000, dense, sparse, feat);
	for (unsigned i = 0; i < FL_DLRM_DENSE; i++)
		assert_true(dense[i] == 0.0f);
	for (unsigned i = 0; i < FL_SP_FEAT; i++)
		assert_true(feat[i] == 0.0f);

	sk->dense[13] = -65536 * 3;      /* input 0, feature 13: -3.0 */
	sk->dense[14] = 65536;           /* input 1, feature 14: 1.0 */
	for (uint32_t e = 0; e < 100; e++) {
		sk->sparse[e].id = e * 7u;
		sk->sparse[e].score = (int32_t)e;
	}
	sk->nsparse = 100;
	fl_inputs_story(sk, 42, 1000, dense, sparse, feat);
	assert_float_equal(dense[0], -(float)log1p(3.0), 1e-6);
	assert_float_equal(dense[1], (float)log1p(1.0), 1e-6);
	assert_float_equal(feat[13], -(float)log1p(3.0), 1e-6);
	assert_float_equal(feat[14], (float)log1p(1.0), 1e-6);
	assert_true(feat[0] == 0.0f);
	for (unsigned t = 0; t < FL_DLRM_SPARSE; t++)
		assert_true(sparse[t] < 1000u);

	fl_inputs_story(sk, 42, 1000, dense2, sparse2, feat2);
	assert_memory_equal(sparse, sparse2, sizeof(sparse));
	fl_inputs_story(sk, 43, 1000, dense2, sparse2, feat2);
	for (unsigned t = 0; t < FL_DLRM_SPARSE; t++)
		differ += sparse[t] != sparse2[t];
	assert_true(differ > (int)FL_DLRM_SPARSE / 2);
	free(sk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_matches_definition),
		cmocka_unit_test(test_story_features),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
