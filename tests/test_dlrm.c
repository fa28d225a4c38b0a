/* test_dlrm.c: tests for runtime/request/dlrm.c, the DLRM forward pass.
 *
 * Random tests draw from a splitmix64 stream whose seed is printed; set FL_TEST_SEED to
 * replay one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "dlrm.h"
#include "rng.h"

#define ERRLEN 256u
#define TEST_SEED_DEFAULT 0x1eaf0005ull /* test_seed() without FL_TEST_SEED */
#include "testutil.h"

static void dlrm_inputs(struct fl_rng *r, float *dense, uint32_t *sparse, size_t n)
{
	for (size_t i = 0; i < n * FL_DLRM_DENSE; i++)
		dense[i] = (float)(fl_rng_unit(r) * 4.0);
	for (size_t i = 0; i < n * FL_DLRM_SPARSE; i++)
		sparse[i] = (uint32_t)fl_rng_next(r);
}

/* 10: outputs in (0, 1), the same for the same seed, different for another; one dense
 * input changes the output. */
static void test_dlrm_forward(void **state)
{
	enum { N = 37 };
	char err[ERRLEN];
	struct fl_dlrm *m1 = fl_dlrm_new(500, 7, err, sizeof(err));
	struct fl_dlrm *m2 = fl_dlrm_new(500, 7, err, sizeof(err));
	struct fl_dlrm *m3 = fl_dlrm_new(500, 8, err, sizeof(err));
	struct fl_dlrm_scratch *sc = fl_dlrm_scratch_new(16);   /* N runs in chunks */
	float dense[N * FL_DLRM_DENSE], o1[N], o2[N], o3[N], o4[N];
	uint32_t sparse[N * FL_DLRM_SPARSE];
	struct fl_rng r;
	int differ = 0;

	(void)state;
	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(m3);
	assert_non_null(sc);
	fl_rng_seed(&r, test_seed());
	dlrm_inputs(&r, dense, sparse, N);
	fl_dlrm_forward(m1, sc, dense, sparse, N, o1);
	fl_dlrm_forward(m2, sc, dense, sparse, N, o2);
	fl_dlrm_forward(m3, sc, dense, sparse, N, o3);
	for (int i = 0; i < N; i++) {
		assert_true(o1[i] > 0.0f && o1[i] < 1.0f);
		differ |= o1[i] != o3[i];
	}
	assert_memory_equal(o1, o2, sizeof(o1));
	assert_true(differ);
	dense[5 * FL_DLRM_DENSE + 3] += 2.5f;
	fl_dlrm_forward(m1, sc, dense, sparse, N, o4);
	assert_true(o4[5] != o1[5]);
	assert_true(o4[4] == o1[4] && o4[6] == o1[6]);
	assert_null(fl_dlrm_new(0, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "emb_rows"));
	fl_dlrm_scratch_free(sc);
	fl_dlrm_free(m1);
	fl_dlrm_free(m2);
	fl_dlrm_free(m3);
}

/* 11: one sgemm layer against a naive triple loop. */
static void test_dlrm_linear(void **state)
{
	enum { N = 5, IN = 19, OUT = 11 };
	float x[N * IN], w[OUT * IN], b[OUT], y[N * OUT];
	struct fl_rng r;

	(void)state;
	fl_rng_seed(&r, 12345);
	for (int i = 0; i < N * IN; i++)
		x[i] = (float)(fl_rng_unit(&r) * 2.0 - 1.0);
	for (int i = 0; i < OUT * IN; i++)
		w[i] = (float)(fl_rng_unit(&r) * 2.0 - 1.0);
	for (int i = 0; i < OUT; i++)
		b[i] = (float)(fl_rng_unit(&r) - 0.5);
	for (int relu = 0; relu < 2; relu++) {
		int negatives = 0;

		fl_dlrm_linear(x, N, IN, w, b, OUT, relu, y);
		for (int n = 0; n < N; n++) {
			for (int o = 0; o < OUT; o++) {
				double acc = b[o];

				for (int i = 0; i < IN; i++)
					acc += (double)x[n * IN + i] * w[o * IN + i];
				negatives += acc < 0;
				if (relu && acc < 0)
					acc = 0;
				assert_true(fabs(acc - y[n * OUT + o]) < 1e-4);
			}
		}
		assert_true(negatives > 0);   /* ReLU was exercised */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dlrm_forward),
		cmocka_unit_test(test_dlrm_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
