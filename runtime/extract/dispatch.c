/* dispatch.c: plans (filtered, shuffled extractor order) and owned request contexts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmap.h"
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

/* One step of rng.h's splitmix64 on a bare state word: all randomness here comes from
 * seeds through it. */
static uint64_t dispatch_splitmix64(uint64_t *state)
{
	struct fl_rng r = { *state };
	uint64_t v = fl_rng_next(&r);

	*state = r.s;
	return v;
}

/* Uniform integer in [0, bound) for bound >= 1, unbiased (Lemire's multiply and reject):
 * the modulo runs only when a draw lands in the biased low part, so almost never. */
static uint32_t plan_below(uint64_t *rng, uint32_t bound)
{
	uint64_t m = (uint64_t)(uint32_t)dispatch_splitmix64(rng) * bound;

	if ((uint32_t)m < bound) {
		uint32_t t = (uint32_t)(-bound) % bound;

		while ((uint32_t)m < t)
			m = (uint64_t)(uint32_t)dispatch_splitmix64(rng) * bound;
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

/* Seeded streams of one plan, all from o->seed: the shuffle keeps the seed itself, so a
 * plan of every kept entry is ordered as before the active-functions knob existed. */
#define PLAN_PICK_KEY 0x452821e638d01377ull   /* seed -> variant order inside a pattern */
#define PLAN_PHASE_KEY 0xbe5466cf34e90c6cull  /* seed -> per-pattern phase of the draw */
#define PLAN_HEAT_KEY 0xc0ac29b7c97c50ddull   /* seed -> a function's heat key (Zipf rank) */

/* One kept entry while the active set is drawn. */
struct plan_pick {
	double key;          /* sort key (see plan_select) */
	uint64_t tie;        /* second key */
	uint32_t reg;        /* registry index */
	uint32_t pattern;    /* its pattern */
};

static int plan_pick_cmp(const void *a, const void *b)
{
	const struct plan_pick *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->tie != y->tie)
		return x->tie < y->tie ? -1 : 1;
	return x->reg < y->reg ? -1 : x->reg > y->reg;
}

static int plan_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Put kept[0..nkept) (registry order) in draw order, across patterns in proportion to
 * their kept counts: inside pattern p (c entries) the entries are ranked k = 0..c-1 by
 * (copy, seeded variant order), and entry k gets the key (k + u_p) / c with a seeded
 * phase u_p in [0, 1). The first N keys hold floor or ceil of N c / nkept of every
 * pattern (systematic sampling), and a prefix of a longer cut. Returns 0, or -1 out of
 * memory. */
static int plan_draw(const struct fl_fn_entry *tab, uint32_t *kept, size_t nkept,
	const uint32_t *per_pattern, size_t npatterns, uint64_t seed)
{
	struct plan_pick *pk = malloc(nkept * sizeof(*pk));
	uint32_t *rank = calloc(npatterns, sizeof(*rank));
	double *phase = malloc(npatterns * sizeof(*phase));
	uint64_t rng = seed ^ PLAN_PHASE_KEY;

	if (pk == NULL || rank == NULL || phase == NULL) {
		free(pk);
		free(rank);
		free(phase);
		return -1;
	}
	for (size_t q = 0; q < npatterns; q++)
		phase[q] = (double)(dispatch_splitmix64(&rng) >> 11) * 0x1p-53;
	/* Rank inside a pattern: sort by (pattern, copy, variant hash). */
	for (size_t i = 0; i < nkept; i++) {
		const struct fl_fn_entry *e = &tab[kept[i]];
		uint64_t h = seed ^ PLAN_PICK_KEY ^ ((uint64_t)e->pattern << 32 | e->variant);

		pk[i].key = (double)e->pattern * 4294967296.0 + (double)e->copy;
		pk[i].tie = dispatch_splitmix64(&h);
		pk[i].reg = kept[i];
		pk[i].pattern = e->pattern;
	}
	qsort(pk, nkept, sizeof(*pk), plan_pick_cmp);
	for (size_t i = 0; i < nkept; i++) {
		uint32_t q = pk[i].pattern;

		pk[i].key = ((double)rank[q]++ + phase[q]) / (double)per_pattern[q];
		pk[i].tie = q;
	}
	qsort(pk, nkept, sizeof(*pk), plan_pick_cmp);
	for (size_t i = 0; i < nkept; i++)
		kept[i] = pk[i].reg;
	free(pk);
	free(rank);
	free(phase);
	return 0;
}

/* The registry indices with copy < copies into reg (registry order) and their count per
 * pattern into per_pattern (zeroed first). Returns the count. */
static size_t plan_keep(const struct fl_fn_entry *tab, size_t n, uint32_t copies,
	uint32_t *reg, uint32_t *per_pattern, size_t npatterns)
{
	size_t kept = 0;

	memset(per_pattern, 0, npatterns * sizeof(*per_pattern));
	for (size_t i = 0; i < n; i++) {
		if (tab[i].copy < copies) {
			reg[kept++] = (uint32_t)i;
			per_pattern[tab[i].pattern]++;
		}
	}
	return kept;
}

/* Fisher-Yates over a[0..n): a seeded permutation, uniform over all orders. */
static void plan_shuffle(uint32_t *a, size_t n, uint64_t *rng)
{
	for (size_t i = n > 0 ? n - 1 : 0; i > 0; i--) {
		uint32_t j = plan_below(rng, (uint32_t)(i + 1));
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/* Zipf ranks: active functions sorted by a seeded key of their registry index, so a
 * function keeps its place relative to the others at every N (the nested sets of the
 * footprint axis keep their hottest functions) and heat is unrelated to address. */
static int plan_heat_order(uint32_t *reg, size_t n, uint64_t seed)
{
	struct plan_pick *pk = malloc(n * sizeof(*pk));

	if (pk == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = seed ^ PLAN_HEAT_KEY ^ reg[i];

		pk[i] = (struct plan_pick){ 0, dispatch_splitmix64(&h), reg[i], 0 };
	}
	qsort(pk, n, sizeof(*pk), plan_pick_cmp);
	for (size_t i = 0; i < n; i++)
		reg[i] = pk[i].reg;
	free(pk);
	return 0;
}

/* Calls of rank r (0-based) in a lap of about t calls: max(1, round(t (r+1)^-alpha / h)). */
static size_t plan_zipf_calls(size_t t, size_t r, double alpha, double h)
{
	double c = round((double)t * pow((double)(r + 1), -alpha) / h);

	return c < 1 ? 1 : (size_t)c;
}

/* The Zipf lap: each rank's calls (plan_zipf_calls), then the lap is shuffled. Returns
 * the lap in *seq (*nseq entries), or -1 out of memory. */
static int plan_zipf_lap(size_t nfns, double alpha, uint64_t *rng, uint32_t **seq,
	size_t *nseq)
{
	size_t t = nfns * FL_ZIPF_LAP_PER_FN, k = 0;
	double h = 0;
	uint32_t *s;

	if (t > FL_ZIPF_LAP_MAX)
		t = FL_ZIPF_LAP_MAX > nfns ? FL_ZIPF_LAP_MAX : nfns;
	for (size_t r = 0; r < nfns; r++)
		h += pow((double)(r + 1), -alpha);
	*nseq = 0;
	for (size_t r = 0; r < nfns; r++)
		*nseq += plan_zipf_calls(t, r, alpha, h);
	s = malloc(*nseq * sizeof(*s));
	if (s == NULL)
		return -1;
	for (size_t r = 0; r < nfns; r++)
		for (size_t j = plan_zipf_calls(t, r, alpha, h); j > 0; j--)
			s[k++] = (uint32_t)r;
	plan_shuffle(s, *nseq, rng);
	*seq = s;
	return 0;
}

/* Check the knobs that need no registry. Returns 0, or -1 with err filled. */
static int plan_check_opts(const struct fl_plan_opts *o, char *err, size_t errlen)
{
	if (o->dispatch != FL_DISPATCH_FLAT && o->dispatch != FL_DISPATCH_ZIPF) {
		fl_errf(err, errlen, "unknown dispatch %d (flat or zipf)", o->dispatch);
		return -1;
	}
	if (!(o->zipf_alpha >= 0 && o->zipf_alpha <= FL_ZIPF_ALPHA_MAX)) {
		fl_errf(err, errlen, "zipf alpha %g out of range 0..%g", o->zipf_alpha,
			FL_ZIPF_ALPHA_MAX);
		return -1;
	}
	return 0;
}

/* Keep the entries with copy < active copies (in registry order), cut them to the active
 * functions, then shuffle them with Fisher-Yates. The pointer array is filled last, from
 * the shuffled indices (and the Zipf lap), so the hot loop reads only it. */
int fl_plan_build(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n,
	const struct fl_plan_opts *o, char *err, size_t errlen)
{
	uint64_t rng = o->seed;
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
	if (plan_check_opts(o, err, errlen) < 0 ||
	    plan_scan(tab, n, &p->npatterns, &p->copies, err, errlen) < 0)
		return -1;
	p->active_copies = o->active_copies == 0 || o->active_copies > p->copies ? p->copies :
		o->active_copies;
	p->seed = o->seed;
	p->dispatch = o->dispatch;
	p->zipf_alpha = o->dispatch == FL_DISPATCH_ZIPF ? o->zipf_alpha : 0;
	p->salt = (uint32_t)dispatch_splitmix64(&(uint64_t){ o->seed ^ PLAN_SALT_KEY });
	p->reg_index = malloc(n * sizeof(*p->reg_index));
	p->per_pattern = calloc(p->npatterns, sizeof(*p->per_pattern));
	if (p->reg_index == NULL || p->per_pattern == NULL)
		goto oom;
	kept = plan_keep(tab, n, p->active_copies, p->reg_index, p->per_pattern, p->npatterns);
	if (kept == 0) {
		fl_errf(err, errlen, "no registry entry has copy < %u", p->active_copies);
		fl_plan_free(p);
		return -1;
	}
	if (o->active_functions > kept) {
		fl_errf(err, errlen, "%u active functions asked, but the plan has %zu (%u of %u "
			"copies of the library's %zu functions)", o->active_functions, kept,
			p->active_copies, p->copies, n);
		fl_plan_free(p);
		return -1;
	}
	if (o->active_functions != 0 && o->active_functions < kept) {
		if (plan_draw(tab, p->reg_index, kept, p->per_pattern, p->npatterns, o->seed) < 0)
			goto oom;
		kept = o->active_functions;
		qsort(p->reg_index, kept, sizeof(*p->reg_index), plan_u32_cmp);
		memset(p->per_pattern, 0, p->npatterns * sizeof(*p->per_pattern));
		for (size_t i = 0; i < kept; i++)
			p->per_pattern[tab[p->reg_index[i]].pattern]++;
	}
	plan_shuffle(p->reg_index, kept, &rng);
	p->nfns = kept;
	p->nseq = kept;
	if (o->dispatch == FL_DISPATCH_ZIPF &&
	    (plan_heat_order(p->reg_index, kept, o->seed) < 0 ||
	     plan_zipf_lap(kept, o->zipf_alpha, &rng, &p->seq, &p->nseq) < 0))
		goto oom;
	p->fns = malloc(p->nseq * sizeof(*p->fns));
	if (p->fns == NULL)
		goto oom;
	for (size_t i = 0; i < p->nseq; i++)
		p->fns[i] = tab[p->reg_index[p->seq ? p->seq[i] : i]].fn;
	return 0;
oom:
	fl_errf(err, errlen, "out of memory for a plan of %zu entries", n);
	fl_plan_free(p);
	return -1;
}

/* The draw of fl_plan_build step 2 over every kept entry, summing sizes along it. */
int fl_plan_functions_for_bytes(const struct fl_fn_entry *tab, size_t n,
	const struct fl_plan_opts *o, const uint32_t *size_of, uint64_t bytes, uint32_t *nfns,
	char *err, size_t errlen)
{
	size_t npatterns, kept;
	uint32_t copies, *reg, *per;
	uint64_t sum = 0;

	if (tab == NULL || n == 0 || n > UINT32_MAX) {
		fl_errf(err, errlen, "empty or oversized registry");
		return -1;
	}
	if (plan_scan(tab, n, &npatterns, &copies, err, errlen) < 0)
		return -1;
	if (o->active_copies != 0 && o->active_copies < copies)
		copies = o->active_copies;
	reg = malloc(n * sizeof(*reg));
	per = calloc(npatterns, sizeof(*per));
	if (reg == NULL || per == NULL) {
		free(reg);
		free(per);
		fl_errf(err, errlen, "out of memory for a draw of %zu entries", n);
		return -1;
	}
	kept = plan_keep(tab, n, copies, reg, per, npatterns);
	if (plan_draw(tab, reg, kept, per, npatterns, o->seed) < 0) {
		free(reg);
		free(per);
		fl_errf(err, errlen, "out of memory for a draw of %zu entries", n);
		return -1;
	}
	*nfns = 0;
	while (*nfns < kept && (sum < bytes || *nfns == 0))
		sum += size_of[reg[(*nfns)++]];
	free(reg);
	free(per);
	return 0;
}

int fl_plan_init(struct fl_plan *p, const struct fl_fn_entry *tab, size_t n, uint64_t seed,
	uint32_t active_copies, char *err, size_t errlen)
{
	struct fl_plan_opts o = { .seed = seed, .active_copies = active_copies };

	return fl_plan_build(p, tab, n, &o, err, errlen);
}

int fl_dispatch_parse(const char *name, int *d)
{
	if (strcmp(name, "flat") == 0)
		*d = FL_DISPATCH_FLAT;
	else if (strcmp(name, "zipf") == 0)
		*d = FL_DISPATCH_ZIPF;
	else
		return -1;
	return 0;
}

const char *fl_dispatch_name(int d)
{
	return d == FL_DISPATCH_FLAT ? "flat" : d == FL_DISPATCH_ZIPF ? "zipf" : "?";
}

uint64_t fl_plan_code_bytes(const struct fl_plan *p, const uint32_t *size_of)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->nfns; i++)
		sum += size_of[p->reg_index[i]];
	return sum;
}

/* Fenwick (binary indexed) tree over positions 1..n of marks (a count and bytes each):
 * both in one node, so a step touches one cache line, not two. */
struct fen_node {
	uint64_t calls, bytes;
};

static void fen_add(struct fen_node *f, size_t n, size_t i, int64_t calls, int64_t bytes)
{
	for (; i <= n; i += i & (~i + 1)) {
		f[i].calls += (uint64_t)calls;
		f[i].bytes += (uint64_t)bytes;
	}
}

static struct fen_node fen_sum(const struct fen_node *f, size_t i)
{
	struct fen_node s = { 0, 0 };

	for (; i > 0; i -= i & (~i + 1)) {
		s.calls += f[i].calls;
		s.bytes += f[i].bytes;
	}
	return s;
}

static void plan_u64_swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* Put d[k] where a sort of d[lo..hi] would (quickselect, median-of-three pivot, Hoare
 * partition): smaller or equal values before it, larger or equal after. O(n) expected,
 * where a sort is O(n log n), for 699,000 calls a lap at --copies=1000. */
static void plan_select(uint64_t *d, size_t lo, size_t hi, size_t k)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d[mid] < d[lo])
			plan_u64_swap(&d[mid], &d[lo]);
		if (d[hi] < d[lo])
			plan_u64_swap(&d[hi], &d[lo]);
		if (d[hi] < d[mid])
			plan_u64_swap(&d[hi], &d[mid]);
		uint64_t pivot = d[mid];
		size_t i = lo, j = hi;
		for (;;) {
			while (d[i] < pivot)
				i++;
			while (d[j] > pivot)
				j--;
			if (i >= j)
				break;
			plan_u64_swap(&d[i++], &d[j--]);
		}
		/* d[lo..j] <= pivot <= d[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

/* Nearest-rank quantiles 0.5, 0.9, 0.99 of d[0..n), n > 0 (d is reordered). */
static void plan_quantiles(uint64_t *d, size_t n, uint64_t out[3])
{
	static const double q[3] = { 0.5, 0.9, 0.99 };
	size_t from = 0;

	for (int k = 0; k < 3; k++) {
		size_t r = (size_t)ceil(q[k] * (double)n);

		r = r > 0 ? r - 1 : 0;
		/* Ranks rise, and after selecting one everything past it is no smaller. */
		plan_select(d, from, n - 1, r);
		out[k] = d[r];
		from = r;
	}
}

/* Stack distances over two laps: a mark (1, and the function's bytes) sits at each
 * function's last call; the distance of a call is the marks between it and its previous
 * call. Only the second lap is kept, so every call has a previous one (the lap is cyclic). */
int fl_plan_reuse(const struct fl_plan *p, const uint32_t *size_of, struct fl_plan_reuse *r,
	char *err, size_t errlen)
{
	size_t l = p->nseq, m = 2 * l;
	struct fen_node *f = NULL;
	uint64_t *dc = NULL, *db = NULL;
	size_t *last = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (l == 0) {
		fl_errf(err, errlen, "empty plan");
		return -1;
	}
	/* start-up scratch (bigmap.h): zeroed pages, freed before the first request */
	dc = fl_bigmap(l, sizeof(*dc));
	if (size_of != NULL)
		db = fl_bigmap(l, sizeof(*db));
	if (p->seq != NULL) {   /* the Fenwick pass; a flat lap needs neither */
		f = fl_bigmap(m + 1, sizeof(*f));
		last = fl_bigmap(p->nfns, sizeof(*last));   /* 0 = not seen, else position + 1 */
	}
	if (dc == NULL || (size_of && db == NULL) || (p->seq && (f == NULL || last == NULL))) {
		fl_errf(err, errlen, "out of memory for the reuse profile of %zu calls", l);
		goto out;
	}
	if (p->seq == NULL) {
		/* Flat: a lap calls every function once, in the same order, so between two calls
		 * of a function lie the last calls of all the others. */
		uint64_t sum = 0;
		for (size_t x = 0; x < l; x++)
			sum += size_of ? size_of[p->reg_index[x]] : 0;
		for (size_t x = 0; x < l; x++) {
			dc[x] = l - 1;
			if (db)
				db[x] = sum - size_of[p->reg_index[x]];
		}
		goto quantiles;
	}
	for (size_t t = 0; t < m; t++) {
		size_t x = p->seq[t % l], prev = last[x];
		uint64_t b = size_of ? size_of[p->reg_index[x]] : 0;

		if (t >= l) {
			struct fen_node to = fen_sum(f, t), from = fen_sum(f, prev);
			dc[t - l] = to.calls - from.calls;
			if (db)
				db[t - l] = to.bytes - from.bytes;
		}
		if (prev)
			fen_add(f, m, prev, -1, -(int64_t)b);
		fen_add(f, m, t + 1, 1, (int64_t)b);
		last[x] = t + 1;
	}
quantiles:
	r->calls = l;
	plan_quantiles(dc, l, r->fns);
	if (db) {
		plan_quantiles(db, l, r->bytes);
		r->has_bytes = 1;
	}
	rc = 0;
out:
	fl_bigmap_free(f, m + 1, sizeof(*f));
	fl_bigmap_free(dc, l, sizeof(*dc));
	fl_bigmap_free(db, l, sizeof(*db));
	fl_bigmap_free(last, p->nfns, sizeof(*last));
	return rc;
}

void fl_plan_free(struct fl_plan *p)
{
	free(p->fns);
	free(p->seq);
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
	size_t n = p->nseq;
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
	uint64_t rng = seed;

	for (uint32_t i = 0; i < FL_TABLE_SLOTS; i++)
		o->table[i] = (uint32_t)dispatch_splitmix64(&rng);
	for (uint32_t i = 0; i < FL_EMB_ROWS * FL_EMB_DIM; i++)
		o->emb[i] = (int16_t)((int32_t)FL_PICK(dispatch_splitmix64(&rng) >> 32, 513u) - 256);
	for (uint32_t i = 0; i < FL_STATE_WORDS; i++)
		o->state[i] = dispatch_splitmix64(&rng);
	/* Feature switches: 1 feature slot in 256 is turned off, as production kill switches. */
	for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
		o->sink.enabled[i] = (dispatch_splitmix64(&rng) >> 56) != 0;
	o->ctx.now_s = CTX_NOW_BASE_S + (uint32_t)(dispatch_splitmix64(&rng) >> 44);
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

	/* Unrolled as clang -O2 would (production leaves are built with clang; gcc -O2 takes
	 * a back-edge every 5 instructions here: a whole story per call). */
	#pragma GCC unroll 8
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
	uint64_t rng;

	if (ctx == NULL || (bytes == NULL && len > 0))
		return -1;
	o = ctx_owner_of(ctx);
	story = (uint8_t *)o->story64;
	if (n > 0)
		memcpy(story, bytes, n);
	rng = ctx_story_hash(story, n, len);
	for (size_t i = n; i < FL_STORY_BYTES; i += 8) {
		uint64_t r = dispatch_splitmix64(&rng);

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
	#pragma GCC unroll 4
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
