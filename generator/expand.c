/* expand.c: variants from knob spaces, skeletons from templates, constants per copy. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "expr.h"
#include "pattern.h"
#include "rng.h"
#include "util.h"

#define ERRLEN 256
#define MAX_KNOB_SPACE 20000000
#define MAX_CONSTS 16384  /* per-copy constants of one variant (the largest pattern: 1411) */

/* The next output of rng.h's splitmix64 stream at state x (fl_rng_mix64 of x plus the
 * stream's increment, not of x): the hash behind every stream key and draw here. Every
 * generated constant comes from it, so it must not change (tests/golden/). */
static uint64_t rng_step(uint64_t x)
{
	struct fl_rng r = { x };

	return fl_rng_next(&r);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Stream key of (seed, pattern id, variant, copy, tag): constants depend on the pattern's
 * id, not its position, so adding a pattern file does not change the others' code. */
static uint64_t stream_key(uint64_t seed, const struct pattern *p, int variant, uint64_t copy,
			   uint64_t tag)
{
	uint64_t k = rng_step(seed ^ hash_str(p->id));
	k = rng_step(k ^ (uint64_t)variant);
	k = rng_step(k ^ copy);
	return rng_step(k ^ tag);
}

static int is_special(int64_t v)
{
	uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	return a <= 1 || (a & (a - 1)) == 0 || ((a + 1) & a) == 0;
}

/* Draw from spec with stream key: uniform in [lo, hi], odd if asked, avoiding 0, +-1, powers
 * of two and 2^k-1 when the range is wide enough that the compiler could otherwise pick
 * different instructions for different copies. */
static int64_t draw_range(int64_t lo, int64_t hi, int odd, uint64_t key)
{
	/* Unsigned: a range over most of int64 has a span beyond INT64_MAX (0: all 2^64). */
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	int avoid = span >= 64 || span == 0;
	int64_t v = lo;

	for (uint64_t attempt = 0; attempt < 64; attempt++) {
		uint64_t x = rng_step(key + attempt * 0x632BE59BD9B4E019ull);
		v = (int64_t)(span ? (uint64_t)lo + x % span : x);
		if (odd && !(v & 1))
			v = v + 1 <= hi ? v + 1 : v - 1;
		if (!avoid || !is_special(v))
			break;
	}
	return v;
}

int expand_value_ok(const struct cspec *c, int64_t v)
{
	uint64_t span = (uint64_t)c->phi - (uint64_t)c->plo + 1;

	return v >= c->plo && v <= c->phi && (!c->odd || (v & 1)) &&
	       !((span >= 64 || span == 0) && is_special(v));
}

/* A per-copy draw: from the probe hull [plo, phi] (see set_hulls). */
static int64_t draw(const struct cspec *c, uint64_t key)
{
	return draw_range(c->plo, c->phi, c->odd, key);
}

static int acceptable(int64_t v, int odd, int avoid)
{
	return (!odd || (v & 1)) && (!avoid || !is_special(v));
}

/* Probe hulls. The assembly cloner may only reuse a probe's code for constants inside the
 * range its probes spanned (gcc decides things from value ranges: a mask it proved
 * redundant for the probes' constants is redundant for any constant between them, not
 * outside). So copies draw from [plo, phi], and probes 0 and 1 put every constant at one
 * end or the other. The hull is the middle half of the template's range (gcc's decisions
 * change near a range's ends: a compare that can no longer fail, a mask it proves
 * redundant, values like 2^n+1), less a seeded jitter of up to 1/16 of the range at each
 * end, moved to non-special values. The jitter matters: templates give neighbouring uses
 * ranges that are shifted copies of each other (slot bands), and without it two constants
 * would keep the same difference in both end probes, so that an immediate derived from one
 * would fit the other too (an ambiguous slot). Constants that share a range are also
 * staggered by 2 per use, so no two sit on the same value in the end probes (equal values
 * let gcc merge two loads, and the probes would no longer line up). */
#define NARROW_SPAN 65536

/* What set_hulls asks about earlier constants, in hash tables so that a variant with
 * thousands of constants costs near-linear time, not cubic (a template repeating
 * $K(0, 255) thousands of times took minutes): the ends of the narrow ones, and how many
 * share each (lo, hi, odd). Open addressing; cap is a power of two above twice the entries.
 *
 * Each end also keeps skip links, so that the walk for a free end value jumps over runs of
 * taken ends instead of stepping through them one by one (thousands of $K(0, 65535) made
 * that walk O(constants x range): 10^8 steps, over 25 s under the fuzzer). up[s] of a taken
 * end t is a value past t such that t, t + step, ... up to it (not included) are all taken,
 * for step 1 (s = 0) and step 2 (s = 1: the walk over odd values); dn[s] the same
 * downwards. The links are offsets from t: a run of taken values holds at most every end
 * (2 * MAX_CONSTS of them), so an offset fits 32 bits; 0 means no value that way fits in
 * int64. Walks shorten the links they follow (path compression). */
struct hull_end {
	int64_t v;
	uint32_t up[2], dn[2];
};

struct hull_sets {
	struct hull_end *ends;  /* end values of narrow constants */
	unsigned char *used;    /* ends[i] holds a value */
	int *first;             /* a constant with that range, or -1 */
	int *count;             /* constants so far with the range of cs[first[i]] */
	size_t cap;
};

static size_t hull_end_slot(const struct hull_sets *h, int64_t v)
{
	size_t i = (size_t)rng_step((uint64_t)v) & (h->cap - 1);

	while (h->used[i] && h->ends[i].v != v)
		i = (i + 1) & (h->cap - 1);
	return i;
}

/* v's entry if v is already an end of one of the narrow constants handled so far. */
static struct hull_end *end_taken(struct hull_sets *h, int64_t v)
{
	size_t i = hull_end_slot(h, v);

	return h->used[i] ? &h->ends[i] : NULL;
}

/* The link offset from v one step of 1 << s up (dir 1) or down (dir -1); 0 past int64. */
static uint32_t end_link(int64_t v, int s, int dir)
{
	int64_t step = (int64_t)1 << s;

	if (dir > 0)
		return v <= INT64_MAX - step ? (uint32_t)step : 0;
	return v >= INT64_MIN + step ? (uint32_t)step : 0;
}

static void end_add(struct hull_sets *h, int64_t v)
{
	size_t i = hull_end_slot(h, v);

	if (h->used[i])
		return;
	h->used[i] = 1;
	h->ends[i].v = v;
	for (int s = 0; s < 2; s++) {
		h->ends[i].up[s] = end_link(v, s, 1);
		h->ends[i].dn[s] = end_link(v, s, -1);
	}
}

static uint32_t *end_skip(struct hull_end *e, int s, int dir)
{
	return dir > 0 ? &e->up[s] : &e->dn[s];
}

/* From v towards bound (dir 1: up to bound, -1: down to it) in steps of 1 << s: the first
 * value that is no taken end, in *out; 0 when every one up to bound is taken. Links walked
 * are pointed at where the walk ended. Offsets are unsigned distances, so a walk near
 * INT64_MIN/MAX never overflows. */
static int end_free(struct hull_sets *h, int64_t v, int64_t bound, int s, int dir,
		    int64_t *out)
{
	int64_t at = v;
	struct hull_end *e;
	int found = 1;

	while ((e = end_taken(h, at)) != NULL) {
		uint32_t d = *end_skip(e, s, dir);
		uint64_t room = dir > 0 ? (uint64_t)bound - (uint64_t)at : (uint64_t)at - (uint64_t)bound;

		if (d == 0 || d > room) {  /* the run of taken values reaches past bound */
			found = 0;
			break;
		}
		at = (int64_t)((uint64_t)at + (dir > 0 ? d : (uint64_t)0 - d));
	}
	/* Path compression: every link on the way now points at, where the walk stopped. */
	for (int64_t x = v; x != at && (e = end_taken(h, x)) != NULL;) {
		uint32_t *d = end_skip(e, s, dir);
		uint64_t dist = dir > 0 ? (uint64_t)at - (uint64_t)x : (uint64_t)x - (uint64_t)at;
		int64_t next = (int64_t)((uint64_t)x + (dir > 0 ? *d : (uint64_t)0 - *d));

		*d = (uint32_t)dist;
		x = next;
	}
	*out = at;
	return found;
}

/* The first value from v towards bound (v itself when it fits) that is acceptable and, for
 * a narrow constant, no earlier narrow constant's end: in *out, or 0 when none is. Odd
 * constants walk the odd values only; each taken run is skipped in one jump. */
static int hull_end_value(struct hull_sets *h, const struct cspec *c, int64_t v,
			  int64_t bound, int dir, int narrow, int avoid, int64_t *out)
{
	int s = c->odd ? 1 : 0;
	uint64_t step = c->odd ? 2 : 1;

	if (c->odd && !(v & 1)) {
		if (v == bound)
			return 0;
		v = dir > 0 ? v + 1 : v - 1;
	}
	for (;;) {
		if (narrow && !end_free(h, v, bound, s, dir, &v))
			return 0;
		if (acceptable(v, c->odd, avoid)) {
			*out = v;
			return 1;
		}
		if ((dir > 0 ? (uint64_t)bound - (uint64_t)v : (uint64_t)v - (uint64_t)bound) < step)
			return 0;
		v = (int64_t)((uint64_t)v + (dir > 0 ? step : (uint64_t)0 - step));
	}
}

/* Constants before c (cs[j]) with the same range and odd flag; counts c in. */
static int range_rank(struct hull_sets *h, const struct cspec *cs, int j)
{
	const struct cspec *c = &cs[j];
	size_t i = (size_t)rng_step((uint64_t)c->lo ^ rng_step((uint64_t)c->hi) ^
				    (uint64_t)c->odd) & (h->cap - 1);

	for (; h->first[i] >= 0; i = (i + 1) & (h->cap - 1)) {
		const struct cspec *o = &cs[h->first[i]];
		if (o->lo == c->lo && o->hi == c->hi && o->odd == c->odd)
			return h->count[i]++;
	}
	h->first[i] = j;
	h->count[i] = 1;
	return 0;
}

static void set_hulls(struct cspec *cs, int n, uint64_t key)
{
	struct hull_sets hs;

	hs.cap = 16;
	while (hs.cap < 4 * (size_t)n)
		hs.cap *= 2;
	hs.ends = xmalloc(hs.cap * sizeof(*hs.ends));
	hs.used = xcalloc(hs.cap, 1);
	hs.first = xmalloc(hs.cap * sizeof(*hs.first));
	hs.count = xmalloc(hs.cap * sizeof(*hs.count));
	for (size_t i = 0; i < hs.cap; i++)
		hs.first[i] = -1;
	for (int j = 0; j < n; j++) {
		struct cspec *c = &cs[j];
		/* Offsets from the ends are unsigned: near INT64_MIN/MAX, or over a range wider
		 * than INT64_MAX, signed arithmetic would overflow. */
		uint64_t width = (uint64_t)c->hi - (uint64_t)c->lo;  /* span - 1 */
		uint64_t span = width + 1;
		int narrow = width < NARROW_SPAN;
		int avoid = width >= 63;
		uint64_t margin = span / 4;
		uint64_t rank = (uint64_t)range_rank(&hs, cs, j);
		uint64_t jit = 1;
		uint64_t u = rng_step(key + 2 * (uint64_t)j) % jit;
		uint64_t w = rng_step(key + 2 * (uint64_t)j + 1) % jit;
		uint64_t in_lo = margin + u + 2 * rank, in_hi = margin + w + 2 * rank;
		if (in_lo >= width || in_hi >= width - in_lo) {  /* the ends would meet or cross */
			in_lo = margin;
			in_hi = margin;
		}
		int64_t lo = (int64_t)((uint64_t)c->lo + in_lo);
		int64_t hi = (int64_t)((uint64_t)c->hi - in_hi);
		/* End values are also kept apart from every earlier narrow constant's ends: two
		 * uses with different ranges (a story word read twice) must not meet either. The
		 * low end is the first such value up from lo (none up to hi: the whole range),
		 * the high end the last down from hi, which stops at the low end at the latest. */
		if (hull_end_value(&hs, c, lo, hi, 1, narrow, avoid, &lo)) {
			hull_end_value(&hs, c, hi, lo, -1, narrow, avoid, &hi);
		} else {
			lo = c->lo;
			hi = c->hi;
		}
		c->plo = lo;
		c->phi = hi;
		if (narrow) {
			end_add(&hs, lo);
			end_add(&hs, hi);
		}
	}
	free(hs.ends);
	free(hs.used);
	free(hs.first);
	free(hs.count);
}

int expand_format_const(int64_t v, char *out)
{
	if (v < 0)
		return sprintf(out, "(%" PRId64 ")", v);
	if (v <= INT32_MAX)
		return sprintf(out, "%" PRId64, v);
	if (v <= (int64_t)UINT32_MAX)
		return sprintf(out, "%" PRId64 "u", v);
	return sprintf(out, "%" PRId64 "ull", v);
}

/* ---- Expansion of a body tree into a skeleton ---- */

/* A block scope that @let and @for extend. */
struct block {
	struct scope sc;
	const char **names;
	int64_t *values;
	int n, cap;
};

static void block_bind(struct block *b, const char *name, int64_t v)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		b->names = xrealloc(b->names, (size_t)b->cap * sizeof(*b->names));
		b->values = xrealloc(b->values, (size_t)b->cap * sizeof(*b->values));
	}
	b->names[b->n] = name;
	b->values[b->n++] = v;
	b->sc.names = b->names;
	b->sc.values = b->values;
	b->sc.nnames = b->n;
}

struct expander {
	const struct pattern *p;
	const struct gen_params *gp;
	int variant;
	struct buf text;          /* skeleton text */
	struct slot *slots;
	int nslots;
	struct cspec *consts;
	int nconsts;
	int nstatic;              /* $S draws so far */
	int next_line;            /* source line the next text line continues, for #line */
	int lines;
};

static int64_t eval_at(struct expander *x, const struct expr *e, const struct scope *sc, int line)
{
	char err[ERRLEN];
	int64_t v;

	if (expr_eval(e, sc, &v, err, sizeof(err)))
		fatal("%s:%d: variant %d: %s", x->p->path, line, x->variant, err);
	return v;
}

/* Room for element n of an array grown by doubling (capacity 8, 16, 32, ... implied by
 * n): appending n elements copies O(n) bytes, not O(n^2) as growing by one did (a
 * template with thousands of $K took minutes under ASan). */
static void *grow(void *a, int n, size_t size)
{
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return a;
	return xrealloc(a, (size_t)(n == 0 ? 8 : 2 * n) * size);
}

static void add_slot(struct expander *x, int j)
{
	x->slots = grow(x->slots, x->nslots, sizeof(*x->slots));
	x->slots[x->nslots++] = (struct slot){x->text.len, j};
}

static void add_const(struct expander *x, int64_t lo, int64_t hi, int odd, int line)
{
	if (lo > hi)
		fatal("%s:%d: variant %d: $K range %" PRId64 "..%" PRId64 " is empty", x->p->path,
		      line, x->variant, lo, hi);
	if (odd && lo == hi && !(lo & 1))
		fatal("%s:%d: variant %d: $K(%" PRId64 ", %" PRId64 ", odd) has no odd value",
		      x->p->path, line, x->variant, lo, hi);
	if (x->nconsts >= MAX_CONSTS)
		fatal("%s:%d: variant %d: over %d per-copy constants", x->p->path, line, x->variant,
		      MAX_CONSTS);
	x->consts = grow(x->consts, x->nconsts, sizeof(*x->consts));
	x->consts[x->nconsts] = (struct cspec){lo, hi, odd, lo, hi};
	add_slot(x, x->nconsts++);
}

static void line_marker(struct expander *x, int line)
{
	if (!x->gp->line_directives || line == x->next_line)
		return;
	buf_printf(&x->text, "#line %d \"%s\"\n", line, x->p->display);
	x->next_line = line;
}

static void expand_nodes(struct expander *x, const struct node *nodes, int n, const struct scope *up)
{
	struct block b = {.sc = {.up = up}};

	for (int i = 0; i < n; i++) {
		const struct node *nd = &nodes[i];
		switch (nd->kind) {
		case NODE_TEXT:
			line_marker(x, nd->line);
			for (int k = 0; k < nd->nparts; k++) {
				const struct part *pt = &nd->parts[k];
				char num[32];
				int64_t lo, hi;
				switch (pt->kind) {
				case PART_TEXT:
					buf_puts(&x->text, pt->text);
					break;
				case PART_EXPR:
					expand_format_const(eval_at(x, pt->e, &b.sc, nd->line), num);
					buf_puts(&x->text, num);
					break;
				case PART_K:
					lo = eval_at(x, pt->e, &b.sc, nd->line);
					hi = eval_at(x, pt->hi, &b.sc, nd->line);
					add_const(x, lo, hi, pt->odd, nd->line);
					break;
				case PART_S: {
					struct cspec c = {eval_at(x, pt->e, &b.sc, nd->line),
							  eval_at(x, pt->hi, &b.sc, nd->line), 0, 0, 0};
					if (c.lo > c.hi)
						fatal("%s:%d: variant %d: $S range is empty", x->p->path,
						      nd->line, x->variant);
					uint64_t key = stream_key(x->gp->seed, x->p, x->variant,
								  0xFFFFFFFFull, 0x53000000ull + (uint64_t)x->nstatic++);
					expand_format_const(draw_range(c.lo, c.hi, 0, key), num);
					buf_puts(&x->text, num);
					break;
				}
				}
			}
			x->lines++;
			x->next_line = nd->line + 1;
			break;
		case NODE_LET:
			block_bind(&b, nd->var, eval_at(x, nd->e, &b.sc, nd->line));
			break;
		case NODE_FOR: {
			int64_t lo = eval_at(x, nd->e, &b.sc, nd->line);
			int64_t hi = eval_at(x, nd->hi, &b.sc, nd->line);
			if (hi > lo && (uint64_t)hi - (uint64_t)lo > 100000)
				fatal("%s:%d: variant %d: @for over %" PRIu64 " iterations", x->p->path,
				      nd->line, x->variant, (uint64_t)hi - (uint64_t)lo);
			struct block it = {.sc = {.up = &b.sc}};
			block_bind(&it, nd->var, 0);
			for (int64_t v = lo; v < hi; v++) {
				it.values[0] = v;
				expand_nodes(x, nd->body, nd->nbody, &it.sc);
			}
			free(it.names);
			free(it.values);
			break;
		}
		case NODE_IF:
			for (int k = 0; k < nd->nbr; k++) {
				const struct branch *br = &nd->br[k];
				if (!br->cond || eval_at(x, br->cond, &b.sc, nd->line)) {
					expand_nodes(x, br->body, br->nbody, &b.sc);
					break;
				}
			}
			break;
		}
	}
	free(b.names);
	free(b.values);
}

/* Expand variant vi of p (knob values kv) into a skeleton. */
static void build_skel(struct variant *v, const struct gen_params *gp)
{
	const struct pattern *p = v->p;
	struct expander x = {.p = p, .gp = gp, .variant = v->index, .next_line = -1};
	int nn = p->nknobs + 2;
	const char **names = xmalloc((size_t)nn * sizeof(*names));
	int64_t *vals = xmalloc((size_t)nn * sizeof(*vals));

	for (int i = 0; i < p->nknobs; i++) {
		names[i] = p->knobs[i].name;
		vals[i] = v->knobs[i];
	}
	names[p->nknobs] = "variant";
	vals[p->nknobs] = v->index;
	names[p->nknobs + 1] = "copies";
	vals[p->nknobs + 1] = gp->copies;
	struct scope top = {NULL, names, vals, nn};

	if (gp->line_directives) {
		buf_printf(&x.text, "#line %d \"%s\"\n", p->body_line, p->display);
		x.next_line = p->body_line;
	}
	buf_puts(&x.text, "static FL_EXTRACTOR void ");
	add_slot(&x, -1);
	buf_puts(&x.text, "(struct fl_ctx *ctx)\n{\n\tFL_GATE(ctx, ");
	add_const(&x, 1 << 20, 0x7FFFFFFF, 1, p->body_line);
	buf_puts(&x.text, ");\n");
	x.lines = 3;
	x.next_line = -1;
	expand_nodes(&x, p->body, p->nbody, &top);
	buf_puts(&x.text, "}\n\n");
	x.lines++;

	v->sk.text = x.text.p;
	v->sk.len = x.text.len;
	v->sk.slots = x.slots;
	v->sk.nslots = x.nslots;
	set_hulls(x.consts, x.nconsts, stream_key(gp->seed, p, v->index, EXPAND_PROBE, 0x4855ull));
	v->sk.consts = x.consts;
	v->sk.nconsts = x.nconsts;
	v->sk.lines = x.lines;
	v->sk.copy_bytes = x.text.len + (size_t)x.nslots * 8;
	free(names);
	free(vals);
}

/* Decode combination index idx into knob values (first knob varies slowest). */
static void decode(const struct pattern *p, int64_t idx, int64_t *kv)
{
	for (int i = p->nknobs - 1; i >= 0; i--) {
		int64_t span = p->knobs[i].hi - p->knobs[i].lo + 1;
		kv[i] = p->knobs[i].lo + idx % span;
		idx /= span;
	}
}

/* Whether knob values kv pass every @require; names are the knobs' names. */
static int passes(const struct pattern *p, const char **names, const int64_t *kv)
{
	struct scope sc = {NULL, names, kv, p->nknobs};
	int ok = 1;
	for (int r = 0; r < p->nrequires && ok; r++) {
		char err[ERRLEN];
		int64_t v;
		if (expr_eval(p->requires[r], &sc, &v, err, sizeof(err)))
			fatal("%s:%d: @require: %s", p->path, p->require_lines[r], err);
		ok = v != 0;
	}
	return ok;
}

/* The combinations that pass @require, in valid[] (returns their count). Without
 * @require every one passes: no table (8 bytes and a decode per combination, up to
 * MAX_KNOB_SPACE of them) and *valid NULL, the index being the combination. */
static int64_t valid_combinations(const struct pattern *p, int64_t total, int64_t **valid)
{
	int64_t nvalid = 0;

	*valid = NULL;
	if (!p->nrequires)
		return total;
	const char **names = xmalloc((size_t)p->nknobs * sizeof(*names) + 1);
	int64_t *kv = xcalloc((size_t)p->nknobs + 1, sizeof(*kv));
	*valid = xmalloc((size_t)total * sizeof(**valid));
	for (int i = 0; i < p->nknobs; i++)
		names[i] = p->knobs[i].name;
	for (int64_t i = 0; i < total; i++) {
		decode(p, i, kv);
		if (passes(p, names, kv))
			(*valid)[nvalid++] = i;
	}
	free(kv);
	free(names);
	return nvalid;
}

struct variant *expand_pattern(const struct pattern *p, const struct gen_params *gp)
{
	int64_t total = 1;

	for (int i = 0; i < p->nknobs; i++) {
		/* Checked before multiplying: a knob over most of int64 overflows its span. */
		uint64_t width = (uint64_t)p->knobs[i].hi - (uint64_t)p->knobs[i].lo;
		if (width >= MAX_KNOB_SPACE || total * (int64_t)(width + 1) > MAX_KNOB_SPACE)
			fatal("%s: knob space over %d combinations", p->path, MAX_KNOB_SPACE);
		total *= (int64_t)(width + 1);
	}
	int64_t *valid;
	int64_t nvalid = valid_combinations(p, total, &valid);
	if (nvalid < p->variants)
		fatal("%s: @variants %d but only %" PRId64 " knob combinations pass @require",
		      p->path, p->variants, nvalid);
	struct variant *vs = xcalloc((size_t)p->variants, sizeof(*vs));
	for (int i = 0; i < p->variants; i++) {
		struct variant *v = &vs[i];
		v->p = p;
		v->index = i;
		v->knobs = xcalloc((size_t)p->nknobs + 1, sizeof(int64_t));
		int64_t pick = (int64_t)i * nvalid / p->variants;
		decode(p, valid ? valid[pick] : pick, v->knobs);
		build_skel(v, gp);
	}
	free(valid);
	return vs;
}

/* Narrow ranges (story word indices, slots) are where two draws of one copy collide; the
 * compiler then merges the two loads or stores and that copy's code takes another shape
 * than its siblings'. So within a copy, a draw from a narrow range that repeats an earlier
 * narrow draw (of any range: a story word index read by two uses with different ranges) is
 * drawn again (a small open-addressing set of values). */
static uint64_t draw_key(int64_t v)
{
	return rng_step((uint64_t)v);
}

void expand_draw(const struct variant *v, const struct gen_params *gp, uint32_t copy, int64_t *out)
{
	uint64_t base = stream_key(gp->seed, v->p, v->index, copy, 0x4B000000ull);
	size_t cap = 16;
	while (cap < 2 * (size_t)v->sk.nconsts)
		cap *= 2;
	uint64_t small[64], *seen = cap <= 64 ? small : xmalloc(cap * sizeof(*seen));

	memset(seen, 0, cap * sizeof(*seen));
	if (copy == EXPAND_PROBE || copy == EXPAND_PROBE + 1) {
		/* The end probes: each constant at one end of its hull, the other probe at the
		 * other end, sides mixed so that no probe has every constant low. */
		uint64_t side = stream_key(gp->seed, v->p, v->index, EXPAND_PROBE, 0x51444500ull);
		for (int j = 0; j < v->sk.nconsts; j++) {
			const struct cspec *c = &v->sk.consts[j];
			int low = (int)(rng_step(side ^ (uint64_t)j) & 1);
			out[j] = (low ^ (copy == EXPAND_PROBE + 1)) ? c->plo : c->phi;
		}
		if (seen != small)
			free(seen);
		return;
	}
	for (int j = 0; j < v->sk.nconsts; j++) {
		const struct cspec *c = &v->sk.consts[j];
		uint64_t span = (uint64_t)c->phi - (uint64_t)c->plo + 1;
		int64_t x = draw(c, rng_step(base + (uint64_t)j));
		if (span <= NARROW_SPAN && span > 1) {
			/* Up to 8 redraws: a range narrower than its uses must repeat values. */
			for (uint64_t again = 1; again <= 8; again++) {
				uint64_t key = draw_key(x) | 1, h = key & (cap - 1);
				while (seen[h] && seen[h] != key)
					h = (h + 1) & (cap - 1);
				if (!seen[h]) {
					seen[h] = key;
					break;
				}
				x = draw(c, rng_step(base + (uint64_t)j + (again << 40)));
			}
		}
		out[j] = x;
	}
	if (seen != small)
		free(seen);
}

void expand_symbol(const struct variant *v, uint32_t copy, char *out, size_t outlen)
{
	if (copy >= EXPAND_PROBE)
		snprintf(out, outlen, "fl_%s_v%03d_probe%u", v->p->id, v->index, copy - EXPAND_PROBE);
	else
		snprintf(out, outlen, "fl_%s_v%03d_c%05u", v->p->id, v->index, copy);
}

void expand_render(const struct variant *v, const char *name, const int64_t *k, struct buf *out)
{
	size_t at = 0;
	char num[32];

	for (int i = 0; i < v->sk.nslots; i++) {
		const struct slot *s = &v->sk.slots[i];
		buf_add(out, v->sk.text + at, s->off - at);
		at = s->off;
		if (s->j < 0) {
			buf_puts(out, name);
		} else {
			int n = expand_format_const(k[s->j], num);
			buf_add(out, num, (size_t)n);
		}
	}
	buf_add(out, v->sk.text + at, v->sk.len - at);
}
