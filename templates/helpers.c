/* helpers.c: the shared hot helpers and map builder every extractor library carries.
 *
 * Generated extractors call these as real, non-inlined functions (patterns/README.md rule
 * 5): the hash-map find is a chain of four calls (fl_hmap_find -> hmap_lookup -> hmap_probe
 * -> hmap_slot_match, the slot hash inline in the lookup), so a profile shows shared code
 * beside the unique generated code. Everything here is integer-only and keeps no global mutable
 * state; the runtime builds the map (fl_hmap_build) and hands it over in the context.
 */
#include <stdlib.h>
#include <string.h>

#include "fl_extract.h"
#include "rng.h"   /* splitmix64 (header-only): the map builder's stream and the slot hash */

/* A helper that must stay a real call: never inlined, never cloned into a specialised
 * copy (IPA-SRA and constant propagation would otherwise fold arguments away). */
#define HELPER_NOINLINE __attribute__((noinline, noclone))

#define HMAP_SLOTS (2u * FL_KEY_UNIVERSE)   /* slots in a built map: load factor <= 1/2 */
#define HMAP_MISS UINT32_MAX                /* hmap_probe: key absent */
#define HASH_SALT 0xbb67ae8584caa73bull     /* hmap_hash: decorrelates slot from key bits */

/* Slot hash of key, before masking. Keys are already mixed, but a second mix keeps the
 * slot independent of the key's own bits (a caller may hand in any 64-bit key, such as a
 * qkey). Inline in the lookup, as a hash map's hasher is: the chain's calls are below. */
static inline uint32_t hmap_hash(uint64_t key)
{
	uint64_t h = fl_rng_mix64(key ^ HASH_SALT);

	return (uint32_t)(h ^ (h >> 32));
}

/* Compare one slot with key: 1 when it holds key, -1 when it is empty (the probe stops:
 * key is absent), 0 when it holds another key. Checked for empty first, so key 0 never
 * "matches" an empty slot. Level 4 of the find chain. */
static HELPER_NOINLINE int hmap_slot_match(const struct fl_hmap_slot *slot, uint64_t key)
{
	if (slot->key == 0)
		return -1;
	return slot->key == key;
}

/* Linear probe from slot index first: returns the index of key's slot, or HMAP_MISS at
 * the first empty slot. Bounded by the slot count, so a (never built) full map cannot
 * loop forever. Level 3 of the find chain. */
static HELPER_NOINLINE uint32_t hmap_probe(const struct fl_hmap *m, uint64_t key, uint32_t first)
{
	uint32_t i = first & m->mask;

	for (uint32_t n = 0; n <= m->mask; n++) {
		int r = hmap_slot_match(&m->slots[i], key);

		if (r > 0)
			return i;
		if (r < 0)
			return HMAP_MISS;
		i = (i + 1u) & m->mask;
	}
	return HMAP_MISS;
}

/* Hash key and probe for it: the slot holding key, or NULL. Level 2 of the find chain;
 * turning the index into a pointer keeps the probe a real call, not a tail jump. */
static HELPER_NOINLINE const struct fl_hmap_slot *hmap_lookup(const struct fl_hmap *m, uint64_t key)
{
	uint32_t i = hmap_probe(m, key, hmap_hash(key));

	return i == HMAP_MISS ? NULL : &m->slots[i];
}

/* Level 1: the counters of key in ctx->hmap, or NULL on a miss or when the context has no
 * map (a context without a map misses every lookup). */
HELPER_NOINLINE const uint32_t *fl_hmap_find(const struct fl_ctx *ctx, uint64_t key)
{
	const struct fl_hmap *m = ctx->hmap;
	const struct fl_hmap_slot *s;

	if (m == NULL || m->slots == NULL)
		return NULL;
	s = hmap_lookup(m, key);
	return s != NULL ? s->val : NULL;
}

/* Nonzero when story words [first, first + n) (indices wrap modulo FL_STORY_U32, n is
 * capped at FL_STORY_U32) are not all zero and hold no 0xFFFFFFFF sentinel. n = 0 gives 0:
 * an empty range has nothing sane in it. */
/* An absent field reads as a default derived from the request time, so callers cannot fold
 * it: cold and out of line, as a production accessor's default path is. */
HELPER_NOINLINE uint32_t fl_field_default(const struct fl_ctx *ctx)
{
	return ctx->now_s & 0xFFu;
}

HELPER_NOINLINE int fl_validate(const struct fl_ctx *ctx, uint32_t first, uint32_t n)
{
	uint32_t any = 0;

	if (n > FL_STORY_U32)
		n = FL_STORY_U32;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t w = ctx->story[(first + k) & (FL_STORY_U32 - 1u)];

		if (w == UINT32_MAX)
			return 0;
		any |= w;
	}
	return any != 0;
}

/* num / den in Q16.16, clamped to [0, 65536] (a rate above 1 is a data error, not a
 * feature); den 0 gives 0. One 64-bit divide: callers keep it off inner loops. */
HELPER_NOINLINE int32_t fl_rate_q16(uint32_t num, uint32_t den)
{
	uint64_t r;

	if (den == 0)
		return 0;
	r = ((uint64_t)num << 16) / den;
	return r > 65536u ? 65536 : (int32_t)r;
}

/* Log2 bucket of v: 0 for v = 0, otherwise floor(log2(v)) + 1 (1..32), clamped to
 * nbuckets - 1; nbuckets 0 gives 0. Non-decreasing in v for any nbuckets. */
HELPER_NOINLINE uint32_t fl_log_bucket(uint32_t v, uint32_t nbuckets)
{
	uint32_t b;

	if (nbuckets == 0)
		return 0;
	b = v == 0 ? 0u : 32u - (uint32_t)__builtin_clz(v);
	return b < nbuckets ? b : nbuckets - 1u;
}

/* Seconds from ts to the request time ctx->now_s; 0 when ts is in the future. */
HELPER_NOINLINE uint32_t fl_age_s(const struct fl_ctx *ctx, uint32_t ts)
{
	return ctx->now_s > ts ? ctx->now_s - ts : 0u;
}

/* Fill one slot's counters from two random words: val[0] impressions (1..65536), val[1]
 * clicks (<= impressions), val[2] seconds since the last engagement (< 2^22, ~48 days),
 * val[3] active days (0..255), val[4] and val[5] scores in Q16.16 (0..65535). Consistent
 * counts keep rate features (clicks / impressions) in range, as real counters would be. */
static void hmap_fill_vals(uint32_t *val, uint64_t a, uint64_t b)
{
	val[0] = (uint32_t)(a & 0xFFFFu) + 1u;
	val[1] = FL_PICK((uint32_t)(a >> 16), val[0] + 1u);
	val[2] = (uint32_t)(a >> 48) << 6 | (uint32_t)(b & 0x3Fu);
	val[3] = (uint32_t)(b >> 8) & 0xFFu;
	val[4] = (uint32_t)(b >> 16) & 0xFFFFu;
	val[5] = (uint32_t)(b >> 32) & 0xFFFFu;
}

/* Insert key (absent, non-zero) into m by linear probing from its hash, the same walk
 * hmap_probe takes, and return its slot. The map is never more than half full here. */
static struct fl_hmap_slot *hmap_insert(struct fl_hmap *m, uint64_t key)
{
	uint32_t i = hmap_hash(key) & m->mask;

	while (m->slots[i].key != 0)
		i = (i + 1u) & m->mask;
	m->slots[i].key = key;
	m->nkeys++;
	return &m->slots[i];
}

/* Walk the universe in selector order and keep each key when 16 random bits fall below
 * hit_q16: 0 keeps none, 65536 keeps all, so those rates are exact. Every selector draws
 * exactly three words (coin, two for counters, drawn even when the key is dropped) from one
 * seeded splitmix64 stream, so the same (hit_q16, seed) gives a byte-identical map and,
 * with the same seed, a smaller hit_q16 keeps a subset of a larger one's keys with the
 * same counters. */
int fl_hmap_build(struct fl_hmap *m, uint32_t hit_q16, uint64_t seed)
{
	struct fl_rng rng = { seed };

	memset(m, 0, sizeof(*m));
	if (hit_q16 > 65536u)
		return -1;
	m->slots = calloc(HMAP_SLOTS, sizeof(*m->slots));
	if (m->slots == NULL)
		return -1;
	m->mask = HMAP_SLOTS - 1u;
	m->hit_q16 = hit_q16;
	for (uint32_t sel = 0; sel < FL_KEY_UNIVERSE; sel++) {
		uint64_t coin = fl_rng_next(&rng);
		uint64_t a = fl_rng_next(&rng);
		uint64_t b = fl_rng_next(&rng);

		if ((uint32_t)(coin >> 48) < hit_q16)
			hmap_fill_vals(hmap_insert(m, fl_key_of(sel))->val, a, b);
	}
	return 0;
}

/* Release a map built by fl_hmap_build; safe on a zeroed or already freed map. */
void fl_hmap_free(struct fl_hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
