/* model_inputs.c: a story's model inputs from its extractor sink (see model_inputs.h). */
#include <math.h>
#include <stdint.h>

#include "dlrm.h"
#include "fl_extract.h"
#include "model_inputs.h"
#include "rng.h"
#include "story_proc.h"

/* Dense slot j feeds input j mod 13 and feature j mod 16: both are sums of the column sums
 * of the sink laid out in rows of FEAT_FOLD = 13 x 16 slots (the last row short), so one
 * pass adds whole rows, which gcc vectorizes: 2 instructions a slot, where a walk with a
 * wrapping index took 8 and made this fold 12.7% of the leaf process's instructions
 * (validate, 12-07) for a step that is a small part of DLRM's preprocessing. */
#define FEAT_FOLD (FL_DLRM_DENSE * FL_SP_FEAT)

void fl_inputs_fold_dense(const int32_t *slot, uint32_t *in13, uint32_t *in16)
{
	uint32_t col[FEAT_FOLD] = { 0 };
	uint32_t j = 0;

	for (; j + FEAT_FOLD <= FL_DENSE_SLOTS; j += FEAT_FOLD)
		#pragma GCC unroll 4
		for (uint32_t i = 0; i < FEAT_FOLD; i++)
			col[i] += (uint32_t)slot[j + i];
	for (uint32_t i = 0; j + i < FL_DENSE_SLOTS; i++)
		col[i] += (uint32_t)slot[j + i];
	for (uint32_t r = 0; r < FL_SP_FEAT; r++)
		for (uint32_t k = 0; k < FL_DLRM_DENSE; k++)
			in13[k] += col[r * FL_DLRM_DENSE + k];
	for (uint32_t r = 0; r < FL_DLRM_DENSE; r++)
		for (uint32_t k = 0; k < FL_SP_FEAT; k++)
			in16[k] += col[r * FL_SP_FEAT + k];
}

/* Signed log scaling of a Q16.16 sum, as DLRM preprocesses counts: log1p(|x|), sign kept. */
static float feat_log(int32_t q16)
{
	double x = (double)q16 / 65536.0;

	return (float)(x < 0 ? -log1p(-x) : log1p(x));
}

void fl_inputs_story(const struct fl_sink *sk, uint64_t story_hash, uint32_t rows, float *dense,
	uint32_t *sparse, float *feat)
{
	uint32_t in13[FL_DLRM_DENSE] = { 0 };
	uint32_t in16[FL_SP_FEAT] = { 0 };
	uint64_t h[FL_DLRM_SPARSE];
	uint32_t nsparse = sk->nsparse < FL_SPARSE_CAP ? sk->nsparse : FL_SPARSE_CAP;
	unsigned m = 0;

	fl_inputs_fold_dense(sk->dense, in13, in16);
	for (unsigned i = 0; i < FL_DLRM_DENSE; i++)
		dense[i] = feat_log((int32_t)in13[i]);
	for (unsigned i = 0; i < FL_SP_FEAT; i++)
		feat[i] = feat_log((int32_t)in16[i]);
	for (unsigned t = 0; t < FL_DLRM_SPARSE; t++)
		h[t] = story_hash + (uint64_t)(t + 1u) * 0x9e3779b97f4a7c15ull;
	for (uint32_t e = 0; e < nsparse; e++) {
		uint64_t v = (uint64_t)sk->sparse[e].id << 32 | (uint32_t)sk->sparse[e].score;

		h[m] = fl_rng_mix64(h[m] ^ v);
		m = m + 1u == FL_DLRM_SPARSE ? 0 : m + 1u;
	}
	for (unsigned t = 0; t < FL_DLRM_SPARSE; t++)
		sparse[t] = (uint32_t)(fl_rng_mix64(h[t]) % rows);
}
