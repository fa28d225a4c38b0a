/* dispatch.h: the runtime's API over the generated extractor table (plans, contexts).
 *
 * A plan is the order in which a leaf calls extractors: the registry (fl_registry()) cut to
 * the first A copies of every variant (the footprint knob, patterns/README.md rule 1) and
 * shuffled with a seed, kept as a flat array of function pointers for the hot loop. A context is a
 * struct fl_ctx (templates/fl_extract.h) that owns its story buffer, tables, state, sink and
 * hash maps; story bytes and knobs are set between calls.
 *
 * Errors: functions that can fail return -1 (or NULL); those taking err (char *err, size_t
 * errlen) also write a NUL-terminated message of at most errlen bytes there when err is not
 * NULL. Nothing here prints.
 *
 * Threads: a plan is read-only after fl_plan_init and may be shared by any number of
 * threads; a context belongs to one thread at a time (fl_plan_run writes its call_word,
 * sink and state).
 */
#ifndef FL_DISPATCH_H
#define FL_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

struct fl_ctx;
struct fl_fn_entry;

/* A shuffled, filtered view of the registry. Built by fl_plan_init, read-only after. */
struct fl_plan {
	void (**fns)(struct fl_ctx *);  /* nfns extractor pointers, in run order */
	uint32_t *reg_index;            /* nfns registry indices: fns[i] is tab[reg_index[i]].fn */
	size_t nfns;                    /* active functions = unique-function footprint */
	uint32_t *per_pattern;          /* npatterns counts: active functions per pattern index */
	size_t npatterns;               /* 1 + the largest pattern index in the registry */
	uint32_t copies;                /* copies in the registry: 1 + the largest copy index */
	uint32_t active_copies;         /* copies kept: min(A, copies), or copies when A = 0 */
	uint64_t seed;                  /* shuffle seed the plan was built with */
	uint32_t salt;                  /* per-plan salt of the call words, derived from seed */
};

/* Build plan p from registry tab (n entries, as fl_registry() returns), keeping the entries
 * whose copy < active_copies (0, or any value >= the registry's copies, keeps all) and
 * shuffling them with a Fisher-Yates pass driven by a splitmix64 stream seeded with seed.
 * The same (tab, n, seed, active_copies) always gives the same order.
 * Returns 0, or -1 (p zeroed, err filled) when tab is NULL, n is 0 or above UINT32_MAX, an
 * entry has a NULL fn, no entry is kept, or memory runs out. Free with fl_plan_free. */
int fl_plan_init(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n, uint64_t seed,
	uint32_t active_copies, char *err, size_t errlen);

/* Release a plan; safe on a zeroed or already freed plan. */
void fl_plan_free(struct fl_plan *p);

/* Make calls extractor calls in plan order, starting at plan position cursor mod nfns and
 * wrapping at the end. cursor counts calls made so far (it is not reduced): before each
 * call ctx->call_word is set to fl_mix32 of the call's running index (low and high 32 bits
 * of cursor + k folded) xor the plan salt, so the same function sees a different call word
 * (and body gate outcome) on every lap. Returns cursor + calls, the cursor to pass next;
 * an empty plan makes no call. One 64-bit modulo per run, none per call. */
uint64_t fl_plan_run(const struct fl_plan *p, struct fl_ctx *ctx, uint64_t cursor, uint64_t calls);

/* Active functions in the plan (the unique-function footprint, in functions). */
size_t fl_plan_footprint(const struct fl_plan *p);

/* Active functions of pattern index pattern (0-based, as in struct fl_fn_entry); 0 for an
 * index beyond the registry's patterns. */
uint32_t fl_plan_pattern_count(const struct fl_plan *p, uint32_t pattern);

/* Allocate a context owning all its buffers: the lookup table (FL_TABLE_SLOTS random u32),
 * the embedding table (FL_EMB_ROWS x FL_EMB_DIM int16 in [-256, 256], Q8.8), nqkeys query
 * keys (universe keys fl_key_of(random), so they hit at the map's rate), FL_STATE_WORDS of
 * random state and a zeroed sink, all from seed. The story and text start as the padding
 * of an empty story (see fl_ctx_set_story); now_s is 1700000000 plus a seeded offset below
 * 2^20 s (the caller may overwrite ctx->now_s); body_q16 is 65536 (every call runs its full
 * body); hmap is NULL (every lookup misses) until fl_ctx_set_hit.
 * nqkeys: 1..65536. Returns the context, or NULL (err filled) on a bad nqkeys or out of
 * memory. Only contexts from fl_ctx_init may be passed to the fl_ctx_* functions below. */
struct fl_ctx *fl_ctx_init(uint64_t seed, uint32_t nqkeys, char *err, size_t errlen);

/* Free a context from fl_ctx_init with its tables and maps; NULL is allowed. */
void fl_ctx_free(struct fl_ctx *ctx);

/* Load a story: its first min(len, FL_STORY_BYTES) bytes become the story words (little
 * endian); the rest of the FL_STORY_BYTES buffer is padded with a splitmix64 stream seeded
 * from a hash of the given bytes and len, so a short story still gives full-entropy words
 * that are a pure function of its content. Bytes past FL_STORY_BYTES are ignored. The text
 * (FL_TEXT_BYTES) is the story's first bytes repeated cyclically to fill it, or all spaces
 * for an empty story. The query keys are re-derived from the story words, so lookups on
 * them follow the request. bytes may be NULL only when len is 0.
 * Returns 0, or -1 on a NULL ctx or NULL bytes with len > 0 (no message: those are the
 * only causes). */
int fl_ctx_set_story(struct fl_ctx *ctx, const void *bytes, size_t len);

/* Set the share of calls that run the full body, Q16 (0..65536; 65536 = all).
 * Returns 0, or -1 on a value above 65536 (the only cause; no message). */
int fl_ctx_set_body(struct fl_ctx *ctx, uint32_t body_q16);

/* Point the context at a map holding each universe key with probability hit_q16 / 65536
 * (0..65536). Each distinct hit rate is built once with fl_hmap_build (4 MiB each, seeded
 * from the context seed) and kept until fl_ctx_free, so sweeping rates is cheap after the
 * first pass. Returns 0, or -1 (err filled) on hit_q16 > 65536 or out of memory. */
int fl_ctx_set_hit(struct fl_ctx *ctx, uint32_t hit_q16, char *err, size_t errlen);

/* Zero the sink: dense slots, sparse count and drop count (a new request's output). */
void fl_ctx_clear_sink(struct fl_ctx *ctx);

#endif
