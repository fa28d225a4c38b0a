/* clone_cmp.c: a generated function against its twin over contexts that vary the knobs
 * (see clone_cmp.h). */
#include "clone_cmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

#define NSEEDS 2u

struct clone_cmp {
	struct fl_ctx *ctx[NSEEDS];
	uint64_t *state0;            /* state before the reference call */
	uint64_t *state_ref;         /* state after it */
	int32_t *dense_ref;          /* dense slots after it */
	struct fl_sparse *sparse_ref;
	struct clone_cmp_stats st;
};

const struct clone_cmp_stats *clone_cmp_stats(const struct clone_cmp *c)
{
	return &c->st;
}

static int any_nonzero(const int32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return 1;
	return 0;
}

static const uint32_t hits[] = {0, 16384, 32768, 49152, 65536};
static const uint32_t bodies[] = {65536, 0, 32768, 8192};
/* Sparse entries free at the call's start, and drops already counted. */
static const struct { uint32_t free, dropped; } fills[] = {
	{FL_SPARSE_CAP, 0}, {1, 0}, {3, 5},
};
#define NHITS ((uint32_t)(sizeof(hits) / sizeof(hits[0])))
#define NBODIES ((uint32_t)(sizeof(bodies) / sizeof(bodies[0])))
#define NFILLS ((uint32_t)(sizeof(fills) / sizeof(fills[0])))
_Static_assert(NHITS * NBODIES * NFILLS * NSEEDS == CLONE_CMP_CONTEXTS, "context count");

struct clone_cmp *clone_cmp_new(char *err, size_t errlen)
{
	struct clone_cmp *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (uint32_t i = 0; i < NSEEDS; i++) {
		c->ctx[i] = fl_ctx_init(3 + i, 64, err, errlen);
		if (!c->ctx[i]) {
			clone_cmp_free(c);
			return NULL;
		}
	}
	c->state0 = malloc(FL_STATE_WORDS * 8);
	c->state_ref = malloc(FL_STATE_WORDS * 8);
	c->dense_ref = malloc(FL_DENSE_SLOTS * 4);
	c->sparse_ref = malloc(FL_SPARSE_CAP * sizeof(struct fl_sparse));
	if (!c->state0 || !c->state_ref || !c->dense_ref || !c->sparse_ref) {
		snprintf(err, errlen, "out of memory");
		clone_cmp_free(c);
		return NULL;
	}
	return c;
}

void clone_cmp_free(struct clone_cmp *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < NSEEDS; i++)
		fl_ctx_free(c->ctx[i]);
	free(c->state0);
	free(c->state_ref);
	free(c->dense_ref);
	free(c->sparse_ref);
	free(c);
}

/* The sink as a call of context i starts it: cleared, then filled to leave fills[f].free. */
static void sink_start(struct fl_ctx *ctx, uint32_t f)
{
	fl_ctx_clear_sink(ctx);
	ctx->sink->nsparse = FL_SPARSE_CAP - fills[f].free;
	ctx->sink->dropped = fills[f].dropped;
}

/* Name the first output of ctx that differs from the reference's; 0 when none does. */
static int diff_outputs(const struct clone_cmp *c, const struct fl_ctx *ctx, uint32_t nsparse_ref,
			uint32_t dropped_ref, uint32_t start, char *why, size_t whylen)
{
	const struct fl_sink *s = ctx->sink;
	for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
		if (s->dense[i] != c->dense_ref[i]) {
			snprintf(why, whylen, "dense slot %u: %d, its C twin %d", i, s->dense[i],
				 c->dense_ref[i]);
			return 1;
		}
	if (s->nsparse != nsparse_ref) {
		snprintf(why, whylen, "sparse count %u, its C twin %u", s->nsparse, nsparse_ref);
		return 1;
	}
	for (uint32_t i = start; i < nsparse_ref; i++)
		if (s->sparse[i].id != c->sparse_ref[i - start].id ||
		    s->sparse[i].score != c->sparse_ref[i - start].score) {
			snprintf(why, whylen, "sparse entry %u: (%u, %d), its C twin (%u, %d)", i,
				 s->sparse[i].id, s->sparse[i].score, c->sparse_ref[i - start].id,
				 c->sparse_ref[i - start].score);
			return 1;
		}
	if (s->dropped != dropped_ref) {
		snprintf(why, whylen, "dropped count %u, its C twin %u", s->dropped, dropped_ref);
		return 1;
	}
	for (uint32_t i = 0; i < FL_STATE_WORDS; i++)
		if (ctx->state[i] != c->state_ref[i]) {
			snprintf(why, whylen, "state word %u: %#llx, its C twin %#llx", i,
				 (unsigned long long)ctx->state[i], (unsigned long long)c->state_ref[i]);
			return 1;
		}
	return 0;
}

int clone_cmp_run(struct clone_cmp *c, fl_extract_fn ref, fl_extract_fn fn, uint64_t key,
		  char *why, size_t whylen)
{
	char err[256];
	for (uint32_t n = 0; n < CLONE_CMP_CONTEXTS; n++) {
		uint32_t h = n % NHITS, b = n / NHITS % NBODIES, f = n / (NHITS * NBODIES) % NFILLS;
		struct fl_ctx *ctx = c->ctx[n / (NHITS * NBODIES * NFILLS)];
		uint8_t story[FL_STORY_BYTES];
		uint64_t x = key * 1000003u + n;
		for (size_t i = 0; i < sizeof(story); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			story[i] = (uint8_t)(x >> 56);
		}
		fl_ctx_set_story(ctx, story, sizeof(story));
		if (fl_ctx_set_hit(ctx, hits[h], err, sizeof(err)) != 0 ||
		    fl_ctx_set_body(ctx, bodies[b]) != 0) {
			snprintf(why, whylen, "context %u: %s", n, err);
			return -1;
		}
		ctx->call_word = (uint32_t)x;
		memcpy(c->state0, ctx->state, FL_STATE_WORDS * 8);
		sink_start(ctx, f);
		uint32_t start = ctx->sink->nsparse;
		ref(ctx);
		uint32_t nsparse_ref = ctx->sink->nsparse, dropped_ref = ctx->sink->dropped;
		memcpy(c->dense_ref, ctx->sink->dense, FL_DENSE_SLOTS * 4);
		memcpy(c->sparse_ref, ctx->sink->sparse + start,
		       (nsparse_ref - start) * sizeof(struct fl_sparse));
		memcpy(c->state_ref, ctx->state, FL_STATE_WORDS * 8);
		c->st.calls++;
		c->st.yielding += nsparse_ref > start || any_nonzero(c->dense_ref, FL_DENSE_SLOTS);
		c->st.dropping += dropped_ref > fills[f].dropped;
		c->st.state_changing += memcmp(c->state_ref, c->state0, FL_STATE_WORDS * 8) != 0;
		memcpy(ctx->state, c->state0, FL_STATE_WORDS * 8);
		sink_start(ctx, f);
		fn(ctx);
		char what[200];
		int d = diff_outputs(c, ctx, nsparse_ref, dropped_ref, start, what, sizeof(what));
		memcpy(ctx->state, c->state0, FL_STATE_WORDS * 8);  /* the next copy starts alike */
		if (d) {
			snprintf(why, whylen, "%s (context %u: hit %u/65536, body %u/65536, %u sparse free, "
				 "seed %u)", what, n, hits[h], bodies[b], fills[f].free,
				 3 + n / (NHITS * NBODIES * NFILLS));
			return -1;
		}
	}
	return 0;
}

int clone_index_build(struct clone_index *ix, const struct fl_fn_entry *tab, size_t n,
		      const struct fl_pattern_info *pats, size_t npats)
{
	memset(ix, 0, sizeof(*ix));
	ix->first = calloc(npats + 1, sizeof(size_t));
	if (!ix->first)
		return -1;
	ix->npats = npats;
	for (size_t p = 0; p < npats; p++)
		ix->first[p + 1] = ix->first[p] + pats[p].variants;
	ix->nvariants = ix->first[npats];
	if (!ix->nvariants || n % ix->nvariants)
		return -1;
	ix->copies = (uint32_t)(n / ix->nvariants);
	ix->at = malloc(n * sizeof(long));
	if (!ix->at)
		return -1;
	for (size_t i = 0; i < n; i++)
		ix->at[i] = -1;
	for (size_t i = 0; i < n; i++) {
		const struct fl_fn_entry *e = &tab[i];
		if (e->pattern >= npats || e->variant >= pats[e->pattern].variants ||
		    e->copy >= ix->copies)
			return -1;
		ix->at[clone_index_variant(ix, e) * ix->copies + e->copy] = (long)i;
	}
	return 0;
}

size_t clone_index_variant(const struct clone_index *ix, const struct fl_fn_entry *e)
{
	return ix->first[e->pattern] + e->variant;
}

long clone_index_find(const struct clone_index *ix, const struct fl_fn_entry *e)
{
	if (e->pattern >= ix->npats || e->copy >= ix->copies ||
	    clone_index_variant(ix, e) >= ix->nvariants)
		return -1;
	return ix->at[clone_index_variant(ix, e) * ix->copies + e->copy];
}

void clone_index_free(struct clone_index *ix)
{
	free(ix->first);
	free(ix->at);
	memset(ix, 0, sizeof(*ix));
}
