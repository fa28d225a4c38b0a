/* dispatch.c: plans (filtered, shuffled extractor order) and owned request contexts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "errbuf.h"
#include "fl_extract.h"
#include "rng.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	"story words are read in host order and the contract says little endian");

#define PLAN_SALT_KEY 0x243f6a8885a308d3ull   /* seed -> call-word salt */
#define CTX_MAP_SEED_KEY 0x13198a2e03707344ull /* ctx seed -> hash map seed */
#define CTX_NOW_BASE_S 1700000000u            /* request time base, seconds (Nov 2023) */
#define CTX_MAX_QKEYS 65536u                  /* fl_ctx_init: most query keys */

/* A context and everything it points at, in one allocation. ctx comes first and is what
 * callers hold; ctx_owner_of recovers the rest. story64 is the one story buffer: ctx->story
 * reads the same bytes as 32-bit words. */
struct ctx_owner {
	struct fl_ctx ctx;                        /* handed out by fl_ctx_init */
	uint64_t seed;                            /* seed of the tables and maps */
	uint64_t story64[FL_STORY_U64];           /* story bytes, FL_STORY_BYTES */
	uint8_t text[FL_TEXT_BYTES];              /* story text */
	uint8_t has[FL_STORY_U32];                /* field presence bytes */
	uint32_t table[FL_TABLE_SLOTS];           /* lookup table */
	int16_t emb[FL_EMB_ROWS * FL_EMB_DIM];    /* embedding table, Q8.8 */
	uint64_t state[FL_STATE_WORDS];           /* mutable per-request state */
	struct fl_sink sink;                      /* output */
	uint64_t *qkeys;                          /* nqkeys query keys */
	uint32_t nqkeys;                          /* entries in qkeys */
	struct fl_hmap **maps;                    /* nmaps maps built so far, one per hit rate */
	size_t nmaps;                             /* entries in maps */
};

/* Uniform integer in [0, bound) for bound >= 1, unbiased (Lemire's multiply and reject):
 * the modulo runs only when a draw lands in the biased low part, so almost never. */
static uint32_t plan_below(struct fl_rng *rng, uint32_t bound)
{
	uint64_t m = (uint64_t)(uint32_t)fl_rng_next(rng) * bound;

	if ((uint32_t)m < bound) {
		uint32_t t = (uint32_t)(-bound) % bound;

		while ((uint32_t)m < t)
			m = (uint64_t)(uint32_t)fl_rng_next(rng) * bound;
	}
	return (uint32_t)(m >> 32);
}

/* Check the registry and find its shape: 1 + largest pattern and copy index. Returns 0,
 * or -1 with err filled on an entry without a function. */
static int plan_scan(const struct fl_fn_entry *tab, size_t n, size_t *npatterns,
	uint32_t *copies, char *err, size_t errlen)
{
	*npatterns = 0;
	*copies = 0;
	for (size_t i = 0; i < n; i++) {
		if (tab[i].fn == NULL) {
			fl_errf(err, errlen, "registry entry %zu (pattern %u variant %u copy %u) "
				"has no function", i, tab[i].pattern, tab[i].variant, tab[i].copy);
			return -1;
		}
		if ((size_t)tab[i].pattern + 1 > *npatterns)
			*npatterns = (size_t)tab[i].pattern + 1;
		if (tab[i].copy >= *copies)
			*copies = tab[i].copy + 1u;   /* copy < UINT32_MAX in any real registry */
	}
	return 0;
}

/* Keep the entries with copy < active copies (in registry order), then shuffle them with
 * Fisher-Yates: a seeded permutation, uniform over all orders of the kept entries. The
 * pointer array is filled last, from the shuffled indices, so the hot loop reads only it. */
int fl_plan_init(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n, uint64_t seed,
	uint32_t active_copies, char *err, size_t errlen)
{
	struct fl_rng rng = { seed };
	size_t kept = 0;

	memset(p, 0, sizeof(*p));
	if (tab == NULL || n == 0) {
		fl_errf(err, errlen, "empty registry");
		return -1;
	}
	if (n > UINT32_MAX) {
		fl_errf(err, errlen, "registry too large: %zu entries", n);
		return -1;
	}
	if (plan_scan(tab, n, &p->npatterns, &p->copies, err, errlen) < 0)
		return -1;
	p->active_copies = active_copies == 0 || active_copies > p->copies ? p->copies : active_copies;
	p->seed = seed;
	p->salt = (uint32_t)fl_rng_next(&(struct fl_rng){ seed ^ PLAN_SALT_KEY });
	p->reg_index = malloc(n * sizeof(*p->reg_index));
	p->per_pattern = calloc(p->npatterns, sizeof(*p->per_pattern));
	if (p->reg_index == NULL || p->per_pattern == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		if (tab[i].copy < p->active_copies) {
			p->reg_index[kept++] = (uint32_t)i;
			p->per_pattern[tab[i].pattern]++;
		}
	}
	if (kept == 0) {
		fl_errf(err, errlen, "no registry entry has copy < %u", p->active_copies);
		fl_plan_free(p);
		return -1;
	}
	for (size_t i = kept - 1; i > 0; i--) {
		uint32_t j = plan_below(&rng, (uint32_t)(i + 1));
		uint32_t t = p->reg_index[i];

		p->reg_index[i] = p->reg_index[j];
		p->reg_index[j] = t;
	}
	p->fns = malloc(kept * sizeof(*p->fns));
	if (p->fns == NULL)
		goto oom;
	for (size_t i = 0; i < kept; i++)
		p->fns[i] = tab[p->reg_index[i]].fn;
	p->nfns = kept;
	return 0;
oom:
	fl_errf(err, errlen, "out of memory for a plan of %zu entries", n);
	fl_plan_free(p);
	return -1;
}

void fl_plan_free(struct fl_plan *p)
{
	free(p->fns);
	free(p->reg_index);
	free(p->per_pattern);
	memset(p, 0, sizeof(*p));
}

/* The hot loop: one indirect call per iteration, the call word a multiply-xorshift of the
 * running index (a bijection of it, so consecutive calls never share a word), the position
 * wrapped by compare instead of a divide. */
uint64_t fl_plan_run(const struct fl_plan *p, struct fl_ctx *ctx, uint64_t cursor, uint64_t calls)
{
	void (*const *fns)(struct fl_ctx *) = p->fns;
	size_t n = p->nfns;
	size_t i;
	uint64_t idx = cursor;

	if (n == 0)
		return cursor;
	i = (size_t)(cursor % n);
	for (uint64_t k = 0; k < calls; k++, idx++) {
		ctx->call_word = fl_mix32((uint32_t)idx ^ (uint32_t)(idx >> 32) ^ p->salt);
		fns[i](ctx);
		if (++i == n)
			i = 0;
	}
	return cursor + calls;
}

size_t fl_plan_footprint(const struct fl_plan *p)
{
	return p->nfns;
}

uint32_t fl_plan_pattern_count(const struct fl_plan *p, uint32_t pattern)
{
	return pattern < p->npatterns ? p->per_pattern[pattern] : 0u;
}

/* The owner of a context made by fl_ctx_init. */
static struct ctx_owner *ctx_owner_of(struct fl_ctx *ctx)
{
	return (struct ctx_owner *)((char *)ctx - offsetof(struct ctx_owner, ctx));
}

/* Derive the query keys from the story words: key i comes from word i (wrapping) mixed
 * with i, so every key is a universe key (hits at the map's rate) chosen by the request. */
static void ctx_derive_qkeys(struct ctx_owner *o)
{
	const uint32_t *w = o->ctx.story;

	for (uint32_t i = 0; i < o->nqkeys; i++)
		o->qkeys[i] = fl_key_of(fl_mix32(w[i & (FL_STORY_U32 - 1u)] ^ (i * 0x9E3779B1u)));
}

/* Fill the seeded tables: lookup table (any u32), embeddings in [-256, 256] (+-1.0 in
 * Q8.8, so a 64-dim dot product stays far inside int32), state words, request time. */
static void ctx_fill_tables(struct ctx_owner *o, uint64_t seed)
{
	struct fl_rng rng = { seed };

	for (uint32_t i = 0; i < FL_TABLE_SLOTS; i++)
		o->table[i] = (uint32_t)fl_rng_next(&rng);
	for (uint32_t i = 0; i < FL_EMB_ROWS * FL_EMB_DIM; i++)
		o->emb[i] = (int16_t)((int32_t)FL_PICK(fl_rng_next(&rng) >> 32, 513u) - 256);
	for (uint32_t i = 0; i < FL_STATE_WORDS; i++)
		o->state[i] = fl_rng_next(&rng);
	/* Feature switches: 1 feature slot in 256 is turned off, as production kill switches. */
	for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
		o->sink.enabled[i] = (fl_rng_next(&rng) >> 56) != 0;
	o->ctx.now_s = CTX_NOW_BASE_S + (uint32_t)(fl_rng_next(&rng) >> 44);
}

struct fl_ctx *fl_ctx_init(uint64_t seed, uint32_t nqkeys, char *err, size_t errlen)
{
	struct ctx_owner *o;

	if (nqkeys == 0 || nqkeys > CTX_MAX_QKEYS) {
		fl_errf(err, errlen, "nqkeys %u out of range 1..%u", nqkeys, CTX_MAX_QKEYS);
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL || (o->qkeys = calloc(nqkeys, sizeof(*o->qkeys))) == NULL) {
		free(o);
		fl_errf(err, errlen, "out of memory for a context (%zu bytes)", sizeof(*o));
		return NULL;
	}
	o->seed = seed;
	o->nqkeys = nqkeys;
	o->ctx.story = (const uint32_t *)o->story64;
	o->ctx.story64 = o->story64;
	o->ctx.has = o->has;
	o->ctx.text = o->text;
	o->ctx.table = o->table;
	o->ctx.emb = o->emb;
	o->ctx.qkeys = o->qkeys;
	o->ctx.nqkeys = nqkeys;
	o->ctx.body_q16 = 65536u;
	o->ctx.hmap = NULL;
	o->ctx.state = o->state;
	o->ctx.sink = &o->sink;
	ctx_fill_tables(o, seed);
	fl_ctx_set_story(&o->ctx, NULL, 0);
	return &o->ctx;
}

void fl_ctx_free(struct fl_ctx *ctx)
{
	struct ctx_owner *o;

	if (ctx == NULL)
		return;
	o = ctx_owner_of(ctx);
	for (size_t i = 0; i < o->nmaps; i++) {
		fl_hmap_free(o->maps[i]);
		free(o->maps[i]);
	}
	free(o->maps);
	free(o->qkeys);
	free(o);
}

/* FNV-1a over the story bytes, then the length folded in: the seed of the padding. */
static uint64_t ctx_story_hash(const uint8_t *b, size_t n, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (uint64_t)len;
}

/* Copy, pad with the content-seeded stream, fill the text cyclically, re-derive qkeys.
 * The padding is written byte-wise from whole random words so its bytes are the same on
 * any host. */
int fl_ctx_set_story(struct fl_ctx *ctx, const void *bytes, size_t len)
{
	struct ctx_owner *o;
	uint8_t *story;
	size_t n = len < FL_STORY_BYTES ? len : FL_STORY_BYTES;
	struct fl_rng rng;

	if (ctx == NULL || (bytes == NULL && len > 0))
		return -1;
	o = ctx_owner_of(ctx);
	story = (uint8_t *)o->story64;
	if (n > 0)
		memcpy(story, bytes, n);
	rng.s = ctx_story_hash(story, n, len);
	for (size_t i = n; i < FL_STORY_BYTES; i += 8) {
		uint64_t r = fl_rng_next(&rng);

		for (size_t b = 0; b < 8 && i + b < FL_STORY_BYTES; b++)
			story[i + b] = (uint8_t)(r >> (8 * b));
	}
	if (n == 0) {
		memset(o->text, ' ', FL_TEXT_BYTES);
	} else {
		for (size_t i = 0; i < FL_TEXT_BYTES; i += n)
			memcpy(o->text + i, story, FL_TEXT_BYTES - i < n ? FL_TEXT_BYTES - i : n);
	}
	/* Presence: field i is absent when 6 mixed bits of its word are zero (1 in 64). */
	for (size_t i = 0; i < FL_STORY_U32; i++)
		o->has[i] = (fl_mix32(o->ctx.story[i] ^ 0x5bd1e995u) >> 26) != 0;
	ctx_derive_qkeys(o);
	return 0;
}

int fl_ctx_set_body(struct fl_ctx *ctx, uint32_t body_q16)
{
	if (ctx == NULL || body_q16 > 65536u)
		return -1;
	ctx->body_q16 = body_q16;
	return 0;
}

/* Reuse the map built for hit_q16 if there is one, else build and keep it. All maps of a
 * context share one seed, so a lower rate's keys are a subset of a higher rate's. */
int fl_ctx_set_hit(struct fl_ctx *ctx, uint32_t hit_q16, char *err, size_t errlen)
{
	struct ctx_owner *o;
	struct fl_hmap **maps;
	struct fl_hmap *m;

	if (ctx == NULL) {
		fl_errf(err, errlen, "no context");
		return -1;
	}
	if (hit_q16 > 65536u) {
		fl_errf(err, errlen, "hit rate %u out of range 0..65536 (Q16)", hit_q16);
		return -1;
	}
	o = ctx_owner_of(ctx);
	for (size_t i = 0; i < o->nmaps; i++) {
		if (o->maps[i]->hit_q16 == hit_q16) {
			ctx->hmap = o->maps[i];
			return 0;
		}
	}
	maps = realloc(o->maps, (o->nmaps + 1) * sizeof(*maps));
	if (maps == NULL)
		goto oom;
	o->maps = maps;
	m = malloc(sizeof(*m));
	if (m == NULL)
		goto oom;
	if (fl_hmap_build(m, hit_q16, o->seed ^ CTX_MAP_SEED_KEY) < 0) {
		free(m);
		goto oom;
	}
	o->maps[o->nmaps++] = m;
	ctx->hmap = m;
	return 0;
oom:
	fl_errf(err, errlen, "out of memory building the hash map for hit rate %u", hit_q16);
	return -1;
}

void fl_ctx_clear_sink(struct fl_ctx *ctx)
{
	memset(ctx->sink->dense, 0, sizeof(ctx->sink->dense));
	ctx->sink->nsparse = 0;
	ctx->sink->dropped = 0;
}
