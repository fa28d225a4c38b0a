/* fl_extract.h: the contract between generated extractors, shared helpers and the runtime.
 *
 * Generated code includes this header and nothing else. Every generated function has the
 * type fl_extract_fn and reads only the request context below; it writes features through
 * FL_YIELD / FL_YIELD_SPARSE. The runtime fills the context from story bytes, so branch
 * outcomes in generated code follow real data (patterns/README.md rule 2).
 */
#ifndef FL_EXTRACT_H
#define FL_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

#define FL_STORY_BYTES 1024u      /* bytes of story data visible to one call */
#define FL_STORY_U32 (FL_STORY_BYTES / 4u)
#define FL_STORY_U64 (FL_STORY_BYTES / 8u)
#define FL_TABLE_SLOTS 4096u      /* u32 entries in the lookup table (power of two) */
#define FL_EMB_ROWS 1024u         /* rows in the embedding table (power of two) */
#define FL_EMB_DIM 64u            /* int16 values per embedding row */
#define FL_DENSE_SLOTS 4096u      /* dense feature slots in the sink (power of two) */
#define FL_SPARSE_CAP 8192u       /* sparse (id, score) pairs a sink can hold */
#define FL_STATE_WORDS 256u       /* u64 words of mutable per-request state (P24) */
#define FL_TEXT_BYTES 256u        /* bytes of tokenizable text per story (P23) */

#if defined(__clang__)
#define FL_EXTRACTOR __attribute__((noinline, used))
#else
#define FL_EXTRACTOR __attribute__((noinline, noclone, used))
#endif
/* The library is built with -fvisibility=hidden: generated code reaches the shared helpers
 * by direct calls (no PLT); only the runtime-side API below is exported. */
#define FL_API __attribute__((visibility("default")))

/* One sparse feature: an id and an integer score (fixed point, 1.0 = 65536). */
struct fl_sparse {
	uint32_t id;     /* feature id */
	int32_t score;   /* score, Q16.16 */
};

/* Where features go. dense[] is summed into (slots are shared by many extractors), sparse[]
 * is appended to until it is full; the overflow is counted, never written past the end. */
struct fl_sink {
	int32_t dense[FL_DENSE_SLOTS];       /* dense features, Q16.16 */
	struct fl_sparse sparse[FL_SPARSE_CAP]; /* sparse features in yield order */
	uint32_t nsparse;                     /* sparse entries used */
	uint32_t dropped;                     /* sparse yields lost to a full sink */
	uint32_t pad_[4];                     /* keeps enabled[] 16+ bytes from written fields */
	/* Feature switches of the model this sink feeds: 0 = slot turned off, FL_YIELD skips
	 * it (set once by the runtime, never cleared). Kept in the sink, past sparse[], so
	 * FL_YIELD's check and write go through one base pointer and every switch lies far from
	 * every written field: the assembly cloner's overlap check then never refuses a copy. */
	uint8_t enabled[FL_DENSE_SLOTS];
};

/* The lookup hash map (open addressing, linear probing, power-of-two slots). Keys are
 * 64-bit; a slot whose key is 0 is empty. Built by the runtime (fl_hmap_build) so that a
 * chosen fraction of the key universe is present: that fraction is the lookup hit rate. */
struct fl_hmap_slot {
	uint64_t key;     /* 0 = empty */
	uint32_t val[6];  /* engagement counters for the key (counts, times, scores) */
};
struct fl_hmap {
	struct fl_hmap_slot *slots;  /* nslots entries */
	uint32_t mask;               /* nslots - 1 */
	uint32_t nkeys;              /* keys present */
	uint32_t hit_q16;            /* hit rate it was built for, 0..65536 */
};

/* The per-request context one generated call reads. */
struct fl_ctx {
	const uint32_t *story;      /* FL_STORY_U32 words of story data (little endian) */
	const uint8_t *has;         /* FL_STORY_U32 presence bytes: 0 = field i absent */
	const uint64_t *story64;    /* the same bytes as FL_STORY_U64 words */
	const uint8_t *text;        /* FL_TEXT_BYTES bytes of story text (P23) */
	const uint32_t *table;      /* FL_TABLE_SLOTS entries: rates, thresholds, buckets */
	const int16_t *emb;         /* FL_EMB_ROWS x FL_EMB_DIM embedding table, Q8.8 */
	const uint64_t *qkeys;      /* sparse query keys of the request */
	uint32_t nqkeys;            /* entries in qkeys (at least 1) */
	uint32_t now_s;             /* request time, seconds */
	uint32_t call_word;         /* per-call word from the dispatcher: drives the body gate */
	uint32_t body_q16;          /* share of calls that run the full body, 0..65536 */
	const struct fl_hmap *hmap; /* lookup map; its build decides the hit rate */
	uint64_t *state;            /* FL_STATE_WORDS words of mutable state (P24) */
	struct fl_sink *sink;       /* output */
};

typedef void (*fl_extract_fn)(struct fl_ctx *ctx);

/* One row of the registry: a generated function and where it came from. */
struct fl_fn_entry {
	fl_extract_fn fn;     /* the function (static in its shard) */
	uint16_t pattern;     /* pattern index, 0-based, into fl_patterns() */
	uint16_t variant;     /* variant index within the pattern */
	uint32_t copy;        /* copy index, 0..copies-1 */
};

/* Per-pattern facts the library carries, so a profile or result can name the source. */
struct fl_pattern_info {
	const char *id;       /* "P01" */
	const char *name;     /* "minimal_field_read" */
	uint32_t variants;    /* variants generated */
};

/* ---- Inline data helpers: tiny, integer-only, meant to be inlined into generated code ---- */

/* A 32-bit multiply-xorshift mixer: spreads story bytes so selectors look random. */
static inline uint32_t fl_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	return x;
}

/* Map w uniformly onto 0..n-1 without a divide (n is a compile-time constant). */
#define FL_PICK(w, n) ((uint32_t)(((uint64_t)(uint32_t)(w) * (uint32_t)(n)) >> 32))

/* An absent field's value: a real out-of-line call (cold), as a production accessor's
 * default path is. */
uint32_t fl_field_default(const struct fl_ctx *ctx) __attribute__((cold));

/* Story field i through its presence byte, as optional fields of a Thrift or protobuf
 * story are read: a load of the presence byte, a rarely taken branch, the field's load. */
static inline uint32_t fl_field(const struct fl_ctx *ctx, uint32_t i)
{
	if (__builtin_expect(ctx->has[i] == 0, 0))
		return fl_field_default(ctx);
	return ctx->story[i];
}
static inline uint64_t fl_field64(const struct fl_ctx *ctx, uint32_t i)
{
	if (__builtin_expect(ctx->has[2u * i] == 0, 0))
		return fl_field_default(ctx);
	return ctx->story64[i];
}

/* Story field i, an optional scalar field (templates pass a per-copy constant index). */
#define FL_W(ctx, i) fl_field((ctx), (uint32_t)(i) & (FL_STORY_U32 - 1u))
#define FL_W64(ctx, i) fl_field64((ctx), (uint32_t)(i) & (FL_STORY_U64 - 1u))
/* Element i of a repeated story field (a computed index: loops, data-chosen offsets): the
 * list is present as a whole, so elements are read without a presence check. */
#define FL_WA(ctx, i) ((ctx)->story[(i) & (FL_STORY_U32 - 1u)])
#define FL_WA64(ctx, i) ((ctx)->story64[(i) & (FL_STORY_U64 - 1u)])
#define FL_T(ctx, i) ((ctx)->table[(i) & (FL_TABLE_SLOTS - 1u)])

/* The body gate every generated function opens with: a call runs its full body with
 * probability body_q16 / 65536, decided from the dispatcher's call word and the copy's salt. */
#define FL_GATE(ctx, salt) \
	do { \
		if ((((ctx)->call_word ^ (uint32_t)(salt)) * 0x9E3779B1U) >> 16 >= (ctx)->body_q16) \
			return; \
	} while (0)

/* A rare guard: true about once in 256 calls on random story data. */
#define FL_RARE(w, k) ((((uint32_t)(w) ^ (uint32_t)(k)) & 0xFFu) == 0u)

/* Write one dense feature (summed into its slot, wrapping modulo 2^32: many extractors
 * share a slot, and a signed overflow would be undefined behaviour). */
#define FL_YIELD(ctx, slot, v) \
	do { \
		uint32_t s_ = (uint32_t)(slot) & (FL_DENSE_SLOTS - 1u); \
		if (__builtin_expect((ctx)->sink->enabled[s_] != 0, 1)) { \
			int32_t *d_ = &(ctx)->sink->dense[s_]; \
			*d_ = (int32_t)((uint32_t)*d_ + (uint32_t)(v)); \
		} \
	} while (0)

/* Append one sparse feature; a full sink counts the drop instead. */
#define FL_YIELD_SPARSE(ctx, fid, v) \
	do { \
		struct fl_sink *s_ = (ctx)->sink; \
		if (s_->nsparse < FL_SPARSE_CAP) { \
			s_->sparse[s_->nsparse].id = (uint32_t)(fid); \
			s_->sparse[s_->nsparse].score = (int32_t)(v); \
			s_->nsparse++; \
		} else { \
			s_->dropped++; \
		} \
	} while (0)

#define FL_LIKELY(x) __builtin_expect(!!(x), 1)
#define FL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- Shared hot helpers (templates/helpers.c): real calls, as in production ---- */

/* Find key in the context's hash map: a chain of calls 4-5 deep (find -> hashed -> probe ->
 * match). Returns the slot's counters, or NULL on a miss. */
const uint32_t *fl_hmap_find(const struct fl_ctx *ctx, uint64_t key);

/* Key for lookup selector sel (any 32-bit value; only its low 16 bits matter, so the key
 * universe has FL_KEY_UNIVERSE keys). The map holds each universe key with probability
 * hit_q16 / 65536, so a lookup of fl_key_of(random) hits at that rate. */
#define FL_KEY_UNIVERSE 65536u
#define FL_KEY_OFFSET 0x6a09e667f3bcc909ull  /* moves selector 0 off input 0 */
/* Inline, as a production key hash (a few multiplies) is: the map's find chain below is
 * the shared call, not the key. The key is splitmix64's output finaliser of (low 16 bits
 * + FL_KEY_OFFSET): the inputs are 65536 distinct non-zero words (the offset plus 65535
 * does not wrap) and the finaliser is a bijection fixing only 0, so the universe keys are
 * distinct and never 0 (0 marks an empty slot). The finaliser is rng.h's fl_rng_mix64,
 * written out because generated code includes this header and nothing else. */
static inline uint64_t fl_key_of(uint32_t sel)
{
	uint64_t z = (uint64_t)(sel & (FL_KEY_UNIVERSE - 1u)) + FL_KEY_OFFSET;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Validate a story word range: returns nonzero when words [first, first+n) look sane
 * (not all zero, no 0xFFFFFFFF sentinel). */
int fl_validate(const struct fl_ctx *ctx, uint32_t first, uint32_t n);

/* Rate in Q16.16 of num over den (den 0 gives 0), clamped to [0, 65536]. Uses a divide:
 * callers keep it off their inner loops. */
int32_t fl_rate_q16(uint32_t num, uint32_t den);

/* Bucket v by a log2 ladder into 0..nbuckets-1. */
uint32_t fl_log_bucket(uint32_t v, uint32_t nbuckets);

/* Age in seconds of timestamp ts relative to the request time, 0 for future times. */
uint32_t fl_age_s(const struct fl_ctx *ctx, uint32_t ts);

/* ---- Runtime side of the contract ---- */

/* Build map m over the key universe fl_key_of(0..FL_KEY_UNIVERSE-1), keeping each key with
 * probability hit_q16 / 65536 (0..65536), decided by a generator seeded with seed; values
 * are seeded counters. Uses 2 * FL_KEY_UNIVERSE slots (4 MiB). Free with fl_hmap_free().
 * Returns 0, or -1 on allocation failure or hit_q16 > 65536. */
FL_API int fl_hmap_build(struct fl_hmap *m, uint32_t hit_q16, uint64_t seed);
FL_API void fl_hmap_free(struct fl_hmap *m);

/* The generated table: every function with its pattern, variant and copy. */
FL_API const struct fl_fn_entry *fl_registry(size_t *count);

/* The patterns the library was generated from, in pattern index order. */
FL_API const struct fl_pattern_info *fl_patterns(size_t *count);

/* The build's configuration as a JSON object (copies, seed, clone mode, compiler). */
FL_API const char *fl_build_info(void);

#endif
