/* clone_cmp.h: run a generated function and its twin (a clone and the same copy compiled
 * from C) over the same contexts and compare every output. Used by tests/test_library.c
 * (test 4) and tests/bench/clone_vs_c.c.
 *
 * The contexts vary what the generated code branches on: the lookup hit rate (0, 25, 50,
 * 75, 100%), the body share (100%, 0, 50%, 12.5%), the sink's fill (empty; one sparse slot
 * left, so later yields are dropped; three left with drops already counted) and the
 * context seed (tables, embeddings, state and feature switches), each with its own story.
 * Compared after each call: every dense slot, the sparse count, every sparse entry written,
 * the dropped count and every state word. */
#ifndef CLONE_CMP_H
#define CLONE_CMP_H

#include <stddef.h>
#include <stdint.h>

#include "fl_extract.h"

#define CLONE_CMP_CONTEXTS 120u   /* 5 hit rates x 4 body shares x 3 fills x 2 seeds */

struct clone_cmp;

/* Allocate the two contexts and buffers; NULL with err filled on failure. */
struct clone_cmp *clone_cmp_new(char *err, size_t errlen);
void clone_cmp_free(struct clone_cmp *c);

/* What the reference calls did so far: evidence that the contexts reach the outputs. */
struct clone_cmp_stats {
	uint64_t calls;          /* reference calls */
	uint64_t yielding;       /* calls that changed a dense slot or wrote a sparse entry */
	uint64_t dropping;       /* calls that dropped sparse yields on a nearly full sink */
	uint64_t state_changing; /* calls that changed a state word */
};
const struct clone_cmp_stats *clone_cmp_stats(const struct clone_cmp *c);

/* Run ref then fn on every context (stories seeded from key: one per copy); 0 when every
 * output is equal, else -1 with the first difference and its context in why. */
int clone_cmp_run(struct clone_cmp *c, fl_extract_fn ref, fl_extract_fn fn, uint64_t key,
		  char *why, size_t whylen);

/* Index of a registry by (pattern, variant, copy): first[p] is pattern p's first variant
 * among all (npats + 1 entries), at[(first[p] + v) * copies + c] the registry row, or -1. */
struct clone_index {
	size_t *first;
	long *at;
	size_t npats;
	size_t nvariants;
	uint32_t copies;
};
/* Build the index of tab (every row's pattern and variant must lie inside pats); -1 when
 * a row lies outside or n is not nvariants * copies. */
int clone_index_build(struct clone_index *ix, const struct fl_fn_entry *tab, size_t n,
		      const struct fl_pattern_info *pats, size_t npats);
/* The global variant number of e (first[pattern] + variant). */
size_t clone_index_variant(const struct clone_index *ix, const struct fl_fn_entry *e);
/* The row of e's (pattern, variant, copy) in the indexed registry, or -1. */
long clone_index_find(const struct clone_index *ix, const struct fl_fn_entry *e);
void clone_index_free(struct clone_index *ix);

#endif
