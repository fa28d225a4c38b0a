/* dlrm.h: stage 5, a DLRM-style ranking model (dense MLP, embeddings, dot interaction).
 *
 * Per story: 13 dense features through the bottom MLP 13-256-128-64 (ReLU); 26 sparse ids,
 * each picking a row of its own embedding table (64 floats); the pairwise dot products of
 * those 27 vectors (351) concatenated with the bottom output (64) make 415 inputs to the
 * top MLP 415-256-128-1 (ReLU, then a sigmoid). Layers run batched over a request's
 * stories with cblas_sgemm (OpenBLAS, one BLAS thread: leaf threads are the parallelism).
 * Weights are seeded (Xavier-uniform MLPs, embeddings uniform in +-sqrt(1/rows), biases
 * 0), read-only after fl_dlrm_new and shared by all threads; a scratch holds one thread's
 * activations.
 */
#ifndef FL_DLRM_H
#define FL_DLRM_H

#include <stddef.h>
#include <stdint.h>

#define FL_DLRM_DENSE 13u                  /* dense features per story */
#define FL_DLRM_SPARSE 26u                 /* sparse ids (= embedding tables) per story */
#define FL_DLRM_DIM 64u                    /* embedding and bottom output width */
#define FL_DLRM_VECS (FL_DLRM_SPARSE + 1u) /* vectors in the interaction */
#define FL_DLRM_INTER (FL_DLRM_VECS * (FL_DLRM_VECS - 1u) / 2u)  /* 351 pairwise dots */
#define FL_DLRM_TOP_IN (FL_DLRM_DIM + FL_DLRM_INTER)             /* 415 */
#define FL_DLRM_MAX_ROWS (1u << 24)        /* largest emb_rows accepted */

struct fl_dlrm;
struct fl_dlrm_scratch;

/* New model with emb_rows rows per table (1..FL_DLRM_MAX_ROWS; memory is
 * 26 * emb_rows * 256 bytes plus ~0.6 MB of MLP weights), weights from seed. Sets
 * OpenBLAS to one thread. NULL (err filled) on a bad emb_rows or out of memory. */
struct fl_dlrm *fl_dlrm_new(uint32_t emb_rows, uint64_t seed, char *err, size_t errlen);
void fl_dlrm_free(struct fl_dlrm *m);

/* Rows per embedding table. */
uint32_t fl_dlrm_rows(const struct fl_dlrm *m);

/* Bytes of the model's weights and embedding tables. */
size_t fl_dlrm_bytes(const struct fl_dlrm *m);

/* Activations for batches of up to max_batch stories (1..65536); larger calls run in
 * chunks. NULL on bad input or out of memory. One thread's. */
struct fl_dlrm_scratch *fl_dlrm_scratch_new(size_t max_batch);
void fl_dlrm_scratch_free(struct fl_dlrm_scratch *s);

/* Score n stories: dense is n x FL_DLRM_DENSE floats (row-major), sparse n x
 * FL_DLRM_SPARSE ids (an id >= emb_rows is taken mod emb_rows); out gets n probabilities
 * in (0, 1). */
void fl_dlrm_forward(const struct fl_dlrm *m, struct fl_dlrm_scratch *s, const float *dense,
	const uint32_t *sparse, size_t n, float *out);

/* One fully connected layer as the model runs it: y (n x nout) = x (n x nin) * w^T + b,
 * w row-major nout x nin, b nout floats (NULL = none), ReLU when relu != 0. One sgemm. */
void fl_dlrm_linear(const float *x, size_t n, size_t nin, const float *w, const float *b,
	size_t nout, int relu, float *y);

#endif
