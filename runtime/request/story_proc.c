/* story_proc.c: stage 4 story processors: score, filter, top-K, blend, serialize. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "story_proc.h"

#define SP_WSETS 8u             /* weight sets the scoring passes cycle through */
#define SP_BODY_SCAN 256u       /* body bytes read for the body statistic */
#define SP_FILTER_SD 2.5        /* filter: scores below mean - this many sd are dropped */
#define SP_SIM_MIN 0.8f         /* blend: similarity above which a story is penalised */
#define SP_PENALTY 0.05f        /* blend: largest score share lost to a similar neighbour */
#define SP_MAX_SEEN 64u         /* session ids a filter call may take */
#define SP_MAX_STORIES (1u << 20)
/* A record: varint id (<= 10) + score (4) + features + prefix length (1) + prefix. */
#define SP_RECORD_MAX (10u + 4u + FL_SP_FEAT + 1u + FL_SP_PREFIX_BYTES)
#define SP_HEADER_BYTES 8u      /* record count and pass index, u32 each */

struct fl_sp {
	size_t max_stories;
	float w[SP_WSETS][FL_SP_FEAT];   /* scoring weights, Xavier-like scale */
	float wb[SP_WSETS];              /* weight of the body statistic */
	float b[SP_WSETS];               /* bias */
	uint64_t *idset;                 /* filter: open-addressing id set, idmask + 1 slots */
	uint8_t *idused;                 /* filter: slot in use */
	uint32_t idmask;
	uint8_t *buf;                    /* serialization buffer, bufcap bytes */
	size_t bufcap;
};

struct fl_sp *fl_sp_new(size_t max_stories, uint64_t seed)
{
	struct fl_sp *sp;
	struct fl_rng rng;
	size_t slots = 1;
	float scale = sqrtf(6.0f / (float)(FL_SP_FEAT + 1u));

	if (max_stories < 1 || max_stories > SP_MAX_STORIES)
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return NULL;
	while (slots < 2u * (max_stories + SP_MAX_SEEN))
		slots <<= 1;
	sp->max_stories = max_stories;
	sp->idmask = (uint32_t)(slots - 1u);
	sp->idset = malloc(slots * sizeof(*sp->idset));
	sp->idused = malloc(slots);
	sp->bufcap = SP_HEADER_BYTES + max_stories * SP_RECORD_MAX;
	sp->buf = malloc(sp->bufcap);
	if (sp->idset == NULL || sp->idused == NULL || sp->buf == NULL) {
		fl_sp_free(sp);
		return NULL;
	}
	fl_rng_seed(&rng, fl_rng_derive(seed, 0x5704));
	for (unsigned p = 0; p < SP_WSETS; p++) {
		for (unsigned i = 0; i < FL_SP_FEAT; i++)
			sp->w[p][i] = (float)(fl_rng_unit(&rng) * 2.0 - 1.0) * scale;
		sp->wb[p] = (float)(fl_rng_unit(&rng) * 2.0 - 1.0);
		sp->b[p] = (float)(fl_rng_unit(&rng) - 0.5) * 0.2f;
	}
	return sp;
}

void fl_sp_free(struct fl_sp *sp)
{
	if (sp == NULL)
		return;
	free(sp->idset);
	free(sp->idused);
	free(sp->buf);
	free(sp);
}

/* Share of printable ASCII among the body's first bytes, in [0, 1]: a cheap quality cue. */
static float sp_body_stat(const struct fl_sp_story *st)
{
	size_t n = st->body_len < SP_BODY_SCAN ? st->body_len : SP_BODY_SCAN;
	unsigned printable = 0;

	for (size_t i = 0; i < n; i++)
		printable += (unsigned)(st->body[i] >= 0x20 && st->body[i] < 0x7f);
	return n != 0 ? (float)printable / (float)n : 0.0f;
}

void fl_sp_score(const struct fl_sp *sp, struct fl_sp_story *s, size_t n, uint32_t passes)
{
	for (size_t j = 0; j < n; j++) {
		struct fl_sp_story *st = &s[j];
		float body = sp_body_stat(st);
		float score = 0.0f;

		for (uint32_t p = 0; p < passes; p++) {
			const float *w = sp->w[p % SP_WSETS];
			float z = sp->b[p % SP_WSETS] + sp->wb[p % SP_WSETS] * body;

			for (unsigned i = 0; i < FL_SP_FEAT; i++)
				z += w[i] * st->feat[i];
			score = 0.5f * score + z / (1.0f + fabsf(z));
		}
		st->score = score;
	}
}

static uint32_t sp_id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (uint32_t)id;
}

/* Add id to the filter's set; returns 1 when it was new, 0 when already there. */
static int sp_idset_add(struct fl_sp *sp, uint64_t id)
{
	for (uint32_t i = sp_id_hash(id) & sp->idmask;; i = (i + 1u) & sp->idmask) {
		if (!sp->idused[i]) {
			sp->idused[i] = 1;
			sp->idset[i] = id;
			return 1;
		}
		if (sp->idset[i] == id)
			return 0;
	}
}

static int sp_finite_story(const struct fl_sp_story *st)
{
	if (!isfinite(st->score))
		return 0;
	for (unsigned i = 0; i < FL_SP_FEAT; i++)
		if (!isfinite(st->feat[i]))
			return 0;
	return 1;
}

size_t fl_sp_filter(struct fl_sp *sp, struct fl_sp_story *s, size_t n, const uint64_t *seen,
	size_t nseen)
{
	double sum = 0.0, sum2 = 0.0, floor_score;
	size_t nfin = 0, kept = 0;

	if (n > sp->max_stories)
		n = sp->max_stories;
	if (nseen > SP_MAX_SEEN)
		nseen = SP_MAX_SEEN;
	for (size_t j = 0; j < n; j++) {
		if (isfinite(s[j].score)) {
			sum += s[j].score;
			sum2 += (double)s[j].score * s[j].score;
			nfin++;
		}
	}
	floor_score = -INFINITY;
	if (nfin > 1) {
		double mean = sum / (double)nfin;
		double var = sum2 / (double)nfin - mean * mean;

		floor_score = mean - SP_FILTER_SD * sqrt(var > 0.0 ? var : 0.0);
	}
	memset(sp->idused, 0, (size_t)sp->idmask + 1u);
	for (size_t i = 0; i < nseen; i++)
		sp_idset_add(sp, seen[i]);
	for (size_t j = 0; j < n; j++) {
		if (!sp_finite_story(&s[j]) || s[j].score < floor_score || !sp_idset_add(sp, s[j].id))
			continue;
		if (kept != j)
			s[kept] = s[j];
		kept++;
	}
	return kept;
}

/* Does story a rank strictly ahead of story b? Score down (NaN as -inf), then id up. */
static int sp_ahead(const struct fl_sp_story *a, const struct fl_sp_story *b)
{
	float sa = isnan(a->score) ? -INFINITY : a->score;
	float sb = isnan(b->score) ? -INFINITY : b->score;

	if (sa != sb)
		return sa > sb;
	return a->id < b->id;
}

/* Restore the heap below position i: the root is the story ranked last among the heap. */
static void sp_sift_down(const struct fl_sp_story *s, uint32_t *h, size_t len, size_t i)
{
	for (;;) {
		size_t l = 2u * i + 1u, r = l + 1u, worst = i;

		if (l < len && sp_ahead(&s[h[worst]], &s[h[l]]))
			worst = l;
		if (r < len && sp_ahead(&s[h[worst]], &s[h[r]]))
			worst = r;
		if (worst == i)
			return;
		uint32_t t = h[i];
		h[i] = h[worst];
		h[worst] = t;
		i = worst;
	}
}

static void sp_sift_up(const struct fl_sp_story *s, uint32_t *h, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1u) / 2u;

		if (!sp_ahead(&s[h[parent]], &s[h[i]]))
			return;
		uint32_t t = h[i];
		h[i] = h[parent];
		h[parent] = t;
		i = parent;
	}
}

/* A heap whose root is the worst kept story: a newcomer only has to beat the root. Popping
 * the root to the end k times leaves order sorted best first. */
size_t fl_sp_topk(const struct fl_sp_story *s, size_t n, size_t k, uint32_t *order)
{
	size_t len = 0;

	if (k > n)
		k = n;
	if (k == 0)
		return 0;
	for (size_t j = 0; j < n; j++) {
		if (len < k) {
			order[len] = (uint32_t)j;
			sp_sift_up(s, order, len);
			len++;
		} else if (sp_ahead(&s[j], &s[order[0]])) {
			order[0] = (uint32_t)j;
			sp_sift_down(s, order, len, 0);
		}
	}
	while (len > 1) {
		uint32_t t = order[0];

		order[0] = order[len - 1u];
		order[len - 1u] = t;
		len--;
		sp_sift_down(s, order, len, 0);
	}
	return k;
}

static float sp_cosine(const float *a, const float *b)
{
	float dot = 0.0f, na = 0.0f, nb = 0.0f;

	for (unsigned i = 0; i < FL_SP_FEAT; i++) {
		dot += a[i] * b[i];
		na += a[i] * a[i];
		nb += b[i] * b[i];
	}
	if (na <= 0.0f || nb <= 0.0f)
		return 0.0f;
	return dot / sqrtf(na * nb);
}

void fl_sp_blend(struct fl_sp_story *s, uint32_t *order, size_t k, uint32_t passes)
{
	for (uint32_t p = 0; p < passes; p++) {
		for (size_t i = 1; i < k; i++) {
			struct fl_sp_story *st = &s[order[i]];
			float sim = sp_cosine(s[order[i - 1u]].feat, st->feat);

			if (sim > SP_SIM_MIN)
				st->score -= fabsf(st->score) * SP_PENALTY *
					(sim - SP_SIM_MIN) / (1.0f - SP_SIM_MIN);
		}
		/* Insertion sort: the list is nearly sorted after a pass. */
		for (size_t i = 1; i < k; i++) {
			uint32_t cur = order[i];
			size_t j = i;

			while (j > 0 && sp_ahead(&s[cur], &s[order[j - 1u]])) {
				order[j] = order[j - 1u];
				j--;
			}
			order[j] = cur;
		}
	}
}

static uint8_t *sp_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static uint8_t *sp_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80u) {
		*p++ = (uint8_t)(v | 0x80u);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint64_t sp_fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Quantise a feature to int8 at 1/8 resolution, saturating. */
static uint8_t sp_quant8(float x)
{
	float q = x * 8.0f;

	if (!(q > -128.0f))
		q = -128.0f;
	if (q > 127.0f)
		q = 127.0f;
	/* Nearest, ties to even, as lrintf in the default rounding mode but without its libm
	 * call (gcc keeps it one for errno): 1.5 * 2^23 added leaves no fraction bits. */
	q = (q + 12582912.0f) - 12582912.0f;
	return (uint8_t)(int8_t)(int)q;
}

uint64_t fl_sp_serialize(struct fl_sp *sp, const struct fl_sp_story *s, const uint32_t *order,
	size_t k, uint32_t passes, size_t *packed_bytes)
{
	uint64_t sum = 0;
	size_t len = 0;

	if (k > sp->max_stories)
		k = sp->max_stories;
	for (uint32_t pass = 0; pass < passes; pass++) {
		uint8_t *p = sp_put_u32(sp_put_u32(sp->buf, (uint32_t)k), pass);

		for (size_t i = 0; i < k; i++) {
			const struct fl_sp_story *st = &s[order[i]];
			size_t plen = st->body_len < FL_SP_PREFIX_BYTES ? st->body_len : FL_SP_PREFIX_BYTES;
			uint32_t bits;

			memcpy(&bits, &st->score, sizeof(bits));
			p = sp_put_varint(p, st->id ^ pass);
			p = sp_put_u32(p, bits);
			for (unsigned f = 0; f < FL_SP_FEAT; f++)
				*p++ = sp_quant8(st->feat[f]);
			*p++ = (uint8_t)plen;
			if (plen != 0)
				memcpy(p, st->body, plen);
			p += plen;
		}
		len = (size_t)(p - sp->buf);
		sum = sum * 0x9e3779b97f4a7c15ull + sp_fnv1a(sp->buf, len);
	}
	if (packed_bytes != NULL)
		*packed_bytes = len;
	return sum;
}
