/* model_inputs.h: a story's model inputs from its extractor sink (DLRM preprocessing).
 *
 * After one story's extractors, its sink becomes 13 dense model inputs (slot j summed into
 * input j mod 13), 16 story-processor features (slot j into feature j mod 16), each
 * log-scaled with its sign kept, and 26 sparse ids (the sink's sparse entries dealt
 * round-robin into 26 hashes seeded by the story hash, each taken mod the table rows).
 * Sums wrap modulo 2^32, as the sink's slots themselves do (FL_YIELD).
 */
#ifndef FL_MODEL_INPUTS_H
#define FL_MODEL_INPUTS_H

#include <stdint.h>

struct fl_sink;

/* Fold the sink's FL_DENSE_SLOTS dense slots into in13[FL_DLRM_DENSE] and
 * in16[FL_SP_FEAT], adding to what they hold (callers start them at zero). */
void fl_inputs_fold_dense(const int32_t *slot, uint32_t *in13, uint32_t *in16);

/* One story's features: dense[FL_DLRM_DENSE] and feat[FL_SP_FEAT] (log-scaled),
 * sparse[FL_DLRM_SPARSE] ids below rows (rows > 0). */
void fl_inputs_story(const struct fl_sink *sk, uint64_t story_hash, uint32_t rows, float *dense,
	uint32_t *sparse, float *feat);

#endif
