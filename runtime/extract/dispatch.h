/* dispatch.h: the runtime's API over the generated extractor table (plans, contexts).
 *
 * A plan is the order in which a leaf calls extractors: the registry (fl_registry()) cut to
 * the first A copies of every variant (the coarse footprint knob) and then to N functions
 * (the fine one), ordered with a seed as a flat walk or a Zipf-skewed lap, kept as a flat
 * array of function pointers for the hot loop. A context is a
 * struct fl_ctx (templates/fl_extract.h) that owns its story buffer, tables, state, sink and
 * hash maps; story bytes and knobs are set between calls.
 *
 * Errors: functions that can fail return -1 (or NULL); those taking err (char *err, size_t
 * errlen) also write a NUL-terminated message of at most errlen bytes there when err is not
 * NULL. Nothing here prints.
 *
 * Threads: a plan is read-only after fl_plan_build and may be shared by any number of
 * threads; a context belongs to one thread at a time (fl_plan_run writes its call_word,
 * sink and state).
 */
#ifndef FL_DISPATCH_H
#define FL_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

struct fl_ctx;
struct fl_fn_entry;

/* How a plan orders its calls (--dispatch). */
enum fl_dispatch {
	FL_DISPATCH_FLAT = 0,  /* walk the active functions in one seeded order, each once a lap */
	FL_DISPATCH_ZIPF = 1,  /* a seeded shuffled lap where rank r's calls ~ 1 / r^alpha */
};

#define FL_ZIPF_ALPHA_MAX 4.0      /* largest --zipf-alpha */
#define FL_ZIPF_LAP_PER_FN 8u      /* a Zipf lap holds about 8 calls per active function... */
#define FL_ZIPF_LAP_MAX (1u << 22) /* ...and at most this many (unless nfns is larger) */

/* What to build. Zero-initialised means every entry, flat, seed 0. */
struct fl_plan_opts {
	uint64_t seed;              /* seed of the selection, heat order and shuffles */
	uint32_t active_copies;     /* keep entries with copy < this; 0 = all copies */
	uint32_t active_functions;  /* then keep this many (1..kept), drawn across patterns in
	                             * proportion to their kept entries; 0 = all kept */
	int dispatch;               /* enum fl_dispatch */
	double zipf_alpha;          /* FL_DISPATCH_ZIPF: exponent, 0..FL_ZIPF_ALPHA_MAX */
};

/* A shuffled, filtered view of the registry. Built by fl_plan_build, read-only after. */
struct fl_plan {
	void (**fns)(struct fl_ctx *);  /* nseq extractor pointers: one lap, in run order */
	size_t nseq;                    /* calls in a lap (nfns when flat) */
	uint32_t *reg_index;            /* nfns registry indices of the active functions: flat,
	                                 * in run order (fns[i] is tab[reg_index[i]].fn); Zipf,
	                                 * in heat order (rank 0 the hottest) */
	uint32_t *seq;                  /* nseq ranks, fns[i] is tab[reg_index[seq[i]]].fn; NULL
	                                 * when flat (position i is rank i) */
	size_t nfns;                    /* active functions = unique-function footprint */
	uint32_t *per_pattern;          /* npatterns counts: active functions per pattern index */
	size_t npatterns;               /* 1 + the largest pattern index in the registry */
	uint32_t copies;                /* copies in the registry: 1 + the largest copy index */
	uint32_t active_copies;         /* copies kept: min(A, copies), or copies when A = 0 */
	uint64_t seed;                  /* shuffle seed the plan was built with */
	uint32_t salt;                  /* per-plan salt of the call words, derived from seed */
	int dispatch;                   /* enum fl_dispatch */
	double zipf_alpha;              /* exponent (0 when flat) */
};

/* Build plan p from registry tab (n entries, as fl_registry() returns):
 * 1. keep the entries whose copy < o->active_copies (0, or any value >= the registry's
 *    copies, keeps all);
 * 2. when o->active_functions is not 0, keep that many of them, drawn across patterns in
 *    proportion to each pattern's kept entries (within 1 of its share at every N; the
 *    shares are the patterns' variant counts), inside a pattern copy 0 of its variants
 *    first, in a seeded order, then copy 1... The sets are nested: N's functions are among
 *    N + 1's, so code bytes grow with N;
 * 3. order them with a Fisher-Yates shuffle driven by a splitmix64 stream seeded with
 *    o->seed (flat: the run order). Zipf ranks them instead by a seeded key of each
 *    registry index (hot and cold functions sit anywhere in the address space, and a
 *    function keeps its rank relative to the others at every N), then gives rank r
 *    max(1, round(T r^-alpha / H)) calls of a lap (T = min(8 nfns, 2^22), at least
 *    nfns; H = sum of r^-alpha: every active function is called at least once a lap)
 *    and shuffles the lap with that stream.
 * The same (tab, n, *o) always gives the same plan; o with only seed and active_copies set
 * gives the plan of fl_plan_init.
 * Returns 0, or -1 (p zeroed, err filled) when tab is NULL, n is 0 or above UINT32_MAX, an
 * entry has a NULL fn, no entry is kept, active_functions exceeds the kept entries, the
 * dispatch is unknown, alpha is out of range, or memory runs out. Free with fl_plan_free. */
int fl_plan_build(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n,
	const struct fl_plan_opts *o, char *err, size_t errlen);

/* The fewest active functions whose bytes reach bytes: *nfns = the smallest N >= 1 such
 * that the N functions fl_plan_build would keep (same o->seed and o->active_copies; the
 * other fields are ignored) have sum size_of >= bytes, or every kept entry when they all
 * fall short. size_of as fl_plan_code_bytes. Returns 0, or -1 (err filled) on an empty
 * registry, a NULL fn or out of memory. */
int fl_plan_functions_for_bytes(const struct fl_fn_entry *tab, size_t n,
	const struct fl_plan_opts *o, const uint32_t *size_of, uint64_t bytes, uint32_t *nfns,
	char *err, size_t errlen);

/* fl_plan_build of every entry with copy < active_copies (0 = all), flat. */
int fl_plan_init(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n, uint64_t seed,
	uint32_t active_copies, char *err, size_t errlen);

/* Parse a --dispatch name ("flat", "zipf") into *d. Returns 0, or -1 on another name. */
int fl_dispatch_parse(const char *name, int *d);

/* The --dispatch name of d: "flat", "zipf", or "?" for another value. */
const char *fl_dispatch_name(int d);

/* Bytes of the plan's active functions, size_of[i] being registry entry i's bytes (as many
 * entries as the plan's registry): every active function runs once a lap at least. */
uint64_t fl_plan_code_bytes(const struct fl_plan *p, const uint32_t *size_of);

/* Reuse distances of a plan's calls over one lap taken as cyclic: for each call, the
 * distinct functions (and their bytes) called since the previous call of the same one. */
struct fl_plan_reuse {
	uint64_t calls;             /* calls measured (one lap) */
	uint64_t fns[3];            /* distance at quantiles 0.5, 0.9, 0.99: distinct functions */
	uint64_t bytes[3];          /* the same in distinct bytes (size_of) */
	int has_bytes;              /* bytes[] filled (size_of was given) */
};

/* Fill r from the plan's lap: O(L log L) time and about 40 L bytes of scratch for a lap of
 * L calls. size_of as fl_plan_code_bytes, or NULL (bytes not computed). Returns 0, or -1
 * (err filled) on an empty plan or out of memory. */
int fl_plan_reuse(const struct fl_plan *p, const uint32_t *size_of, struct fl_plan_reuse *r,
	char *err, size_t errlen);

/* Release a plan; safe on a zeroed or already freed plan. */
void fl_plan_free(struct fl_plan *p);

/* Make calls extractor calls in plan order, starting at lap position cursor mod nseq and
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
