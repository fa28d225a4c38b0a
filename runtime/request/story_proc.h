/* story_proc.h: stage 4, the story processors a ranking leaf runs around its model.
 *
 * Over one request's stories: scoring passes (weighted sums over each story's feature
 * vector and a body statistic), filtering (outlier scores, non-finite features, ids seen
 * earlier in the request or in the session), top-K selection (a bounded heap), blending
 * (diversity re-rank: a story whose features are close to the one ranked above it loses
 * score) and serialization (pack the kept stories into a compact buffer, checksum it).
 * A struct fl_sp holds the seeded weights and one thread's scratch; it belongs to one
 * thread. Nothing here allocates after fl_sp_new.
 */
#ifndef FL_STORY_PROC_H
#define FL_STORY_PROC_H

#include <stddef.h>
#include <stdint.h>

#define FL_SP_FEAT 16u           /* floats in a story's feature vector */
#define FL_SP_PREFIX_BYTES 32u   /* story body bytes copied into a serialized record */

/* One story as the processors see it. */
struct fl_sp_story {
	uint64_t id;                 /* story id from the request */
	float feat[FL_SP_FEAT];      /* features from the extractor sink, log-scaled, |x| <~ 24 */
	float score;                 /* processor score (fl_sp_score); callers may replace it
	                                with a final score before top-K and blending */
	uint32_t slot;               /* caller's index (e.g. of the story's model inputs);
	                                carried through filtering untouched */
	const uint8_t *body;         /* story bytes, body_len of them (not owned; may be NULL
	                                when body_len is 0) */
	size_t body_len;
};

struct fl_sp;

/* Processors for requests of up to max_stories stories (1..1048576), weights drawn from
 * seed (the same seed ranks the same way on every thread). NULL on bad input or out of
 * memory. */
struct fl_sp *fl_sp_new(size_t max_stories, uint64_t seed);
void fl_sp_free(struct fl_sp *sp);

/* passes scoring passes over s[0..n): pass p sets score = score / 2 + softsign(w_p . feat
 * + wb_p * body_stat + b_p), with weight set p mod 8, so score stays in (-2, 2). The first
 * pass starts from score 0. n <= max_stories. */
void fl_sp_score(const struct fl_sp *sp, struct fl_sp_story *s, size_t n, uint32_t passes);

/* Keep the stories of s[0..n) that have finite features and score, a score no lower than
 * mean - 2.5 standard deviations of the batch, and an id neither earlier in s nor among
 * seen[0..nseen) (the session's recent ids, nseen <= 64). Compacts s in place, order kept;
 * returns the number kept. n <= max_stories. */
size_t fl_sp_filter(struct fl_sp *sp, struct fl_sp_story *s, size_t n, const uint64_t *seen,
	size_t nseen);

/* The min(k, n) best stories of s[0..n) by score (higher first, ties by lower id, NaN
 * last) as indices into s, written to order[0..min(k, n)) best first. Returns min(k, n).
 * A k-entry heap: O(n log k). */
size_t fl_sp_topk(const struct fl_sp_story *s, size_t n, size_t k, uint32_t *order);

/* passes diversity passes over the ranked list order[0..k) (indices into s): a story whose
 * feature vector has cosine similarity above 0.8 with the one ranked just above it loses
 * up to 5% of its score; after each pass order is re-sorted (score down, id up). */
void fl_sp_blend(struct fl_sp_story *s, uint32_t *order, size_t k, uint32_t passes);

/* passes serialization passes: pack order[0..k) (indices into s, k <= max_stories) into
 * the processor's buffer as records (varint id, score bits, 16 int8 features, u8 prefix
 * length, up to FL_SP_PREFIX_BYTES body bytes), each pass salted by its index, and fold
 * every pass's FNV-1a 64 checksum into the result. *packed_bytes (may be NULL) gets the
 * last pass's size in bytes. */
uint64_t fl_sp_serialize(struct fl_sp *sp, const struct fl_sp_story *s, const uint32_t *order,
	size_t k, uint32_t passes, size_t *packed_bytes);

#endif
