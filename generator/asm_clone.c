/* asm_clone.c: fit a variant's probe assembly to per-copy constants and emit its copies.
 *
 * Fit: each probe text is lexed into tokens (text, integer, function name, .L label, other
 * locally defined symbol). The three token streams are compared position by position; an
 * integer that differs between the probes becomes a slot with a rule s * k[j] + d (mod 2^W).
 * Everything else becomes literal text. The result is a flat program: one literal byte array
 * and a list of ops, each "copy the next n literal bytes, then write the name / the label tag
 * / a slot value", so emitting a copy is a run of memcpy calls and integer formatting.
 *
 * This file builds the program and emits copies; the lexer is asm_lex.c, the rules and value
 * classes of slots are asm_fit.c, and what the three share is asm_tok.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_clone.h"
#include "asm_tok.h"
#include "util.h"

/* ---- The program ---- */

enum op_kind { OP_NAME, OP_TAG, OP_SLOT };

struct op {
	uint32_t lit;     /* literal bytes to copy before the dynamic part */
	uint8_t kind;     /* enum op_kind */
	uint32_t slot;    /* OP_SLOT: slot index */
};

/* A relation between a slot and another integer of the same kind (slot or literal) that all
 * three probes shared, so a copy must keep it:
 *  ORD_CMP: the order of two cmp immediates of one width compared with the same operand.
 *    gcc sorts switch case labels into compare trees and drops compares implied by others,
 *    so code fitted on probes where K1 < K2 is wrong where K1 > K2.
 *  ORD_APART: two displacements off the same address registers, at least one of them a
 *    store and not both adds to memory, at least APART_BYTES apart. gcc's alias analysis
 *    treats such accesses as distinct (forwarding a stored value past a store to the other
 *    one), which is wrong for a copy where they overlap. */
enum { ORD_CMP, ORD_APART };
#define REL_ANY 2
#define APART_BYTES 8
struct order {
	uint32_t a, b;        /* slot indexes; b == NO_SLOT: the other side is lit */
	int64_t lit;
	uint8_t kind;         /* ORD_CMP or ORD_APART */
	uint8_t width;
	int8_t rel_s;         /* ORD_CMP: sign of a - b as signed W-bit values, or REL_ANY */
	int8_t rel_u;         /* ORD_CMP: the same, unsigned */
};
#define NO_SLOT UINT32_MAX

struct asm_clone {
	char *lit;            /* all literal bytes, in order */
	size_t lit_len;
	struct op *ops;
	size_t nops;
	size_t tail;          /* literal bytes after the last op */
	size_t n_name, n_tag; /* ops of each kind, to size a copy up front */
	struct slot *slots;
	size_t nslots;
	struct order *orders;
	size_t norders;
	size_t nk;
	int64_t *k_lo, *k_hi;  /* per constant: the smallest and largest probe value */
	int outside_ok;        /* asm_clone_allow_outside_range */
};

struct builder {
	struct asm_clone *c;
	struct buf lit;
	size_t pending;       /* literal bytes since the last op */
	size_t opcap, slotcap;
};

static void b_lit(struct builder *b, const char *p, size_t n)
{
	buf_add(&b->lit, p, n);
	b->pending += n;
}

static void b_op(struct builder *b, enum op_kind kind, uint32_t slot)
{
	struct asm_clone *c = b->c;

	if (c->nops == b->opcap) {
		b->opcap = b->opcap ? b->opcap * 2 : 256;
		c->ops = xrealloc(c->ops, b->opcap * sizeof(*c->ops));
	}
	c->ops[c->nops].lit = (uint32_t)b->pending;
	c->ops[c->nops].kind = (uint8_t)kind;
	c->ops[c->nops].slot = slot;
	c->nops++;
	b->pending = 0;
	if (kind == OP_NAME)
		c->n_name++;
	else if (kind == OP_TAG)
		c->n_tag++;
}

static uint32_t b_slot(struct builder *b, const struct slot *sl)
{
	struct asm_clone *c = b->c;

	if (c->nslots == b->slotcap) {
		b->slotcap = b->slotcap ? b->slotcap * 2 : 64;
		c->slots = xrealloc(c->slots, b->slotcap * sizeof(*c->slots));
	}
	c->slots[c->nslots] = *sl;
	return (uint32_t)c->nslots++;
}

/* Append probe-0 token t to the program: literal text, or literal text around a name, tag
 * or slot op. */
static void b_token(struct builder *b, const char *text, const struct tok *t, size_t name_len)
{
	const char *s = text + t->off;

	switch (t->kind) {
	case TK_NAME:
		b_op(b, OP_NAME, 0);
		b_lit(b, s + name_len, t->len - name_len);
		break;
	case TK_LABEL:
		b_lit(b, s, 2);
		b_op(b, OP_TAG, 0);
		b_lit(b, "_", 1);
		b_lit(b, s + 2, t->len - 2);
		break;
	case TK_LOCAL:
		b_lit(b, s, t->len);
		b_lit(b, ".", 1);
		b_op(b, OP_TAG, 0);
		break;
	default:
		b_lit(b, s, t->len);
		break;
	}
}

/* Whether probe tokens a and b (of texts ta, tb, function names na, nb) are the same apart
 * from an integer value and the function's name. */
static int same_token(const char *ta, const struct tok *a, size_t na, const char *tb,
                      const struct tok *b, size_t nb)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == TK_NUM)
		return 1;
	if (a->kind == TK_NAME)
		return a->len - na == b->len - nb &&
		       memcmp(ta + a->off + na, tb + b->off + nb, a->len - na) == 0;
	if (a->kind == TK_LABEL)
		return a->label_id == b->label_id;
	return a->len == b->len && memcmp(ta + a->off, tb + b->off, a->len) == 0;
}

static int same_num_text(const char *ta, const struct tok *a, const char *tb,
                         const struct tok *b)
{
	return a->len == b->len && memcmp(ta + a->off, tb + b->off, a->len) == 0;
}

/* Report the first difference between probe 0 and probe p at token i. */
static void mismatch(const char *const text[MAXP], const struct toks t[MAXP], int p, size_t i,
                     char *err, size_t errlen)
{
	char a[64], b[64];

	if (i >= t[0].n || i >= t[p].n) {
		const struct toks *longer = i >= t[0].n ? &t[p] : &t[0];
		asm_lex_tok_desc(a, sizeof(a), text[longer == &t[0] ? 0 : p], &longer->v[i]);
		snprintf(err, errlen, "probe %d line %u: probes differ in length: %s only in probe %d",
		         longer == &t[0] ? 0 : p, longer->v[i].line, a, longer == &t[0] ? 0 : p);
		return;
	}
	asm_lex_tok_desc(a, sizeof(a), text[0], &t[0].v[i]);
	asm_lex_tok_desc(b, sizeof(b), text[p], &t[p].v[i]);
	snprintf(err, errlen, "line %u: probes 0 and %d differ: %s vs %s (probe %d line %u)",
	         t[0].v[i].line, p, a, b, p, t[p].v[i].line);
}

void asm_clone_free(struct asm_clone *c)
{
	if (!c)
		return;
	free(c->lit);
	free(c->ops);
	free(c->slots);
	free(c->orders);
	free(c->k_lo);
	free(c->k_hi);
	free(c);
}

/* A cmp immediate or a displacement: its value in each probe (signed W-bit), its slot if
 * any, and for a displacement the address text it is added to. */
struct pos {
	int64_t v[MAXP];
	uint8_t np;           /* probes in v */
	uint32_t slot;        /* NO_SLOT for a literal */
	uint8_t kind;         /* ORD_CMP or ORD_APART */
	uint8_t width;
	uint8_t store;        /* ORD_APART: the access may write */
	uint8_t addsub;       /* ORD_APART: ... and is an add or sub to memory */
	uint16_t key_len;
	const char *key;      /* ORD_APART: "(%rax,%rdx,4)" in probe 0; ORD_CMP: ", %eax" */
};

static int sign3(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int sign3u(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int apart(int64_t a, int64_t b)
{
	__int128 d = (__int128)a - b;

	return d >= APART_BYTES || d <= -APART_BYTES;
}

/* Whether positions x and y can constrain each other: compares of one width with the same
 * operand, or displacements off the same address registers. Compares of different operands
 * (thresholds on different fields) are independent; requiring their probe order would
 * refuse about a third of all copies of README-style variants. */
static int related(const struct pos *x, const struct pos *y)
{
	return x->kind == y->kind && x->width == y->width && x->key_len == y->key_len &&
	       memcmp(x->key, y->key, x->key_len) == 0;
}

/* The relation between positions x (a slot) and y that all probes share; returns 0 when
 * there is none worth keeping. */
static int make_order(const struct asm_clone *c, const struct pos *x, const struct pos *y,
                      struct order *o)
{
	o->a = x->slot;
	o->b = y->slot;
	o->lit = y->v[0];
	o->kind = x->kind;
	o->width = x->width;
	o->rel_s = o->rel_u = REL_ANY;
	if (x->kind == ORD_APART) {
		const struct slot *sx = &c->slots[x->slot];
		const struct slot *sy = y->slot == NO_SLOT ? NULL : &c->slots[y->slot];
		if (sy && sy->j == sx->j && sy->s == sx->s)
			return 0;   /* a fixed distance */
		if (!x->store && !y->store)
			return 0;   /* two loads: reordering them is always right */
		if (x->addsub && y->addsub)
			return 0;   /* two memory adds (FL_YIELD): they commute, merged or not */
		for (int i = 0; i < x->np; i++)
			if (!apart(x->v[i], y->v[i]))
				return 0;
		return 1;
	}
	uint64_t mask = wmask(x->width);
	int rs = sign3(x->v[0], y->v[0]);
	int ru = sign3u((uint64_t)x->v[0] & mask, (uint64_t)y->v[0] & mask);
	for (int i = 1; i < x->np; i++) {
		if (sign3(x->v[i], y->v[i]) != rs)
			rs = REL_ANY;
		if (sign3u((uint64_t)x->v[i] & mask, (uint64_t)y->v[i] & mask) != ru)
			ru = REL_ANY;
	}
	o->rel_s = (int8_t)rs;
	o->rel_u = (int8_t)ru;
	return rs != REL_ANY || ru != REL_ANY;
}

/* Whether literal position y repeats an earlier literal (same relation partners, value). */
static int dup_literal(const struct pos *ps, size_t y)
{
	for (size_t z = 0; z < y; z++)
		if (ps[z].slot == NO_SLOT && related(&ps[z], &ps[y]) && ps[z].v[0] == ps[y].v[0])
			return 1;
	return 0;
}

/* Record the relations between every slot position and every related position: each
 * slot-slot pair once, each slot-literal pair once per distinct literal. */
static void build_orders(struct asm_clone *c, const struct pos *ps, size_t n)
{
	size_t cap = 0;

	for (size_t x = 0; x < n; x++) {
		if (ps[x].slot == NO_SLOT)
			continue;
		for (size_t y = 0; y < n; y++) {
			if (y == x || !related(&ps[x], &ps[y]))
				continue;
			if (ps[y].slot != NO_SLOT ? y < x : dup_literal(ps, y))
				continue;
			struct order o;
			if (!make_order(c, &ps[x], &ps[y], &o))
				continue;
			if (c->norders == cap) {
				cap = cap ? cap * 2 : 16;
				c->orders = xrealloc(c->orders, cap * sizeof(*c->orders));
			}
			c->orders[c->norders++] = o;
		}
	}
}

/* A constant with the same value in every probe shows nowhere: its uses are literal text.
 * That is right for exactly the copies with that value, and the range check of emit
 * (k_lo == k_hi) holds every copy to it, so it is allowed; the generator only lets it
 * happen for a range of one value. */
static int constant_fixed(const int64_t *const k[MAXP], int np, size_t j)
{
	for (int i = 1; i < np; i++)
		if (k[i][j] != k[0][j])
			return 0;
	return 1;
}

/* Check that every constant drives some slot. A constant whose use gcc removed or folded
 * (an implied compare, dead code decided by its value) would otherwise be silently ignored
 * by every copy. Returns 0, or -1 with err set. */
static int check_constants_used(const struct asm_clone *c, const int64_t *const k[MAXP], int np,
                                size_t nk, char *err, size_t errlen)
{
	for (size_t j = 0; j < nk; j++) {
		size_t i = 0;
		if (constant_fixed(k, np, j))
			continue;
		while (i < c->nslots && c->slots[i].j != j)
			i++;
		if (i == c->nslots) {
			snprintf(err, errlen,
			         "constant k[%zu] differs between probes (%" PRId64 ", %" PRId64 ", %"
			         PRId64 ") but no integer in the assembly follows it", j, k[0][j],
			         k[1][j], k[2][j]);
			return -1;
		}
	}
	return 0;
}

/* Check that the probes' token streams match apart from integers and the function's name.
 * Returns 0, or -1 with err naming the first difference. */
static int compare_streams(const char *const text[MAXP], const struct toks t[MAXP], int np,
                           const size_t name_len[MAXP], char *err, size_t errlen)
{
	size_t n = t[0].n;

	for (int p = 1; p < np; p++) {
		size_t m = t[p].n < n ? t[p].n : n;
		for (size_t i = 0; i < m; i++) {
			if (!same_token(text[0], &t[0].v[i], name_len[0], text[p], &t[p].v[i],
			                name_len[p])) {
				mismatch(text, t, p, i, err, errlen);
				return -1;
			}
		}
		if (t[p].n != n) {
			mismatch(text, t, p, m, err, errlen);
			return -1;
		}
	}
	return 0;
}

/* Append the integer tokens at[0..2] (slot index slot, or NO_SLOT) to the positions that
 * relations are built from when they are a cmp immediate or a memory displacement. */
static void add_position(struct pos **ps, size_t *nps, size_t *cap,
                         const struct tok *const at[MAXP], int np, const char *text0, uint32_t slot)
{
	int num = at[0]->kind == TK_NUM;
	int cmp = num && at[0]->ctx == NC_IMM && at[0]->is_cmp;
	int disp = (num || at[0]->kind == TK_TEXT) && at[0]->ctx == NC_DISP && at[0]->key_len > 0;
	if (cmp && at[0]->key_len == 0)
		return;

	if (!cmp && !disp)
		return;
	if (*nps == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*ps = xrealloc(*ps, *cap * sizeof(**ps));
	}
	struct pos *x = &(*ps)[(*nps)++];
	for (int p = 0; p < np; p++)
		x->v[p] = num ? sext(at[p]->val, at[0]->width) : 0;
	x->np = (uint8_t)np;
	x->slot = slot;
	x->kind = cmp ? ORD_CMP : ORD_APART;
	x->width = at[0]->width;
	x->key = text0 + at[0]->off + (num ? at[0]->len : 0);
	x->key_len = at[0]->key_len;
	x->store = disp && at[0]->is_store;
	x->addsub = disp && at[0]->is_addsub;
}

/* Walk the three token streams together, building the program from probe 0 and fitting a
 * slot wherever the integers differ; then record the relations copies must keep and check
 * that every differing constant is used. Returns 0, or -1 with err set. */
static int build(struct builder *b, const char *const text[MAXP], const struct toks t[MAXP],
                 int np, const size_t name_len[MAXP], const int64_t *const k[MAXP], size_t nk,
                 char *err, size_t errlen)
{
	if (compare_streams(text, t, np, name_len, err, errlen) != 0)
		return -1;
	struct pos *ps = NULL;
	size_t nps = 0, pscap = 0;
	int rc = 0;
	for (size_t i = 0; i < t[0].n && rc == 0; i++) {
		const struct tok *at[MAXP];
		int same = 1;
		for (int p = 0; p < np; p++) {
			at[p] = &t[p].v[i];
			same &= same_num_text(text[0], at[0], text[p], at[p]);
		}
		uint32_t slot = NO_SLOT;
		if (at[0]->kind != TK_NUM || same) {
			b_token(b, text[0], at[0], name_len[0]);
		} else {
			struct slot sl;
			rc = asm_fit_slot(at, np, text, k, nk, &sl, err, errlen);
			if (rc != 0)
				break;
			slot = b_slot(b, &sl);
			b_op(b, OP_SLOT, slot);
		}
		add_position(&ps, &nps, &pscap, at, np, text[0], slot);
	}
	if (rc == 0)
		build_orders(b->c, ps, nps);
	free(ps);
	if (rc == 0)
		rc = check_constants_used(b->c, k, np, nk, err, errlen);
	return rc;
}

/* Record each constant's range over the probes. gcc decides things from a constant's value
 * that no slot shows: value range propagation drops the & 4095 of (K + hour) & 4095 when
 * K + 23 < 4096 in every probe, which the copies with K = 4090 need. Such a decision is a
 * threshold on K, so when two probes sit at the ends of K's range and both got the same
 * code, every K between them gets it too: copies are held inside the probes' range. */
static void set_hull(struct asm_clone *c, const int64_t *const k[MAXP], int np, size_t nk)
{
	c->k_lo = xmalloc((nk ? nk : 1) * sizeof(*c->k_lo));
	c->k_hi = xmalloc((nk ? nk : 1) * sizeof(*c->k_hi));
	for (size_t j = 0; j < nk; j++) {
		int64_t lo = k[0][j], hi = k[0][j];
		for (int i = 1; i < np; i++) {
			lo = k[i][j] < lo ? k[i][j] : lo;
			hi = k[i][j] > hi ? k[i][j] : hi;
		}
		c->k_lo[j] = lo;
		c->k_hi[j] = hi;
	}
}

struct asm_clone *asm_clone_fit(const char *const asm_text[3], const char *const probe_name[3],
                                const int64_t *const k[3], size_t nk, char *err, size_t errlen)
{
	return asm_clone_fit_n(asm_text, probe_name, k, 3, nk, err, errlen);
}

struct asm_clone *asm_clone_fit_n(const char *const *asm_text, const char *const *probe_name,
                                  const int64_t *const *k, int np, size_t nk, char *err,
                                  size_t errlen)
{
	struct toks t[MAXP] = {{0}};
	size_t name_len[MAXP];
	struct builder b = {0};
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	if (np < 3 || np > MAXP) {
		snprintf(err, errlen, "%d probes: between 3 and %d are needed", np, MAXP);
		return NULL;
	}
	for (int p = 0; p < np && rc == 0; p++) {
		name_len[p] = strlen(probe_name[p]);
		rc = asm_lex_probe(asm_text[p], probe_name[p], p, &t[p], err, errlen);
	}
	if (rc == 0) {
		b.c = xcalloc(1, sizeof(*b.c));
		b.c->nk = nk;
		set_hull(b.c, k, np, nk);
		rc = build(&b, asm_text, t, np, name_len, k, nk, err, errlen);
	}
	for (int p = 0; p < np; p++)
		free(t[p].v);
	if (rc != 0) {
		asm_clone_free(b.c);
		buf_free(&b.lit);
		return NULL;
	}
	b.c->tail = b.pending;
	b.c->lit_len = b.lit.len;
	b.c->lit = b.lit.p ? b.lit.p : xstrdup("");
	return b.c;
}

void asm_clone_allow_outside_range(struct asm_clone *c, int allow)
{
	c->outside_ok = allow != 0;
}

size_t asm_clone_nk(const struct asm_clone *c)
{
	return c->nk;
}

void asm_clone_hull(const struct asm_clone *c, int64_t *lo, int64_t *hi)
{
	memcpy(lo, c->k_lo, c->nk * sizeof(*lo));
	memcpy(hi, c->k_hi, c->nk * sizeof(*hi));
}

size_t asm_clone_nslots(const struct asm_clone *c)
{
	return c->nslots;
}

int asm_clone_slot(const struct asm_clone *c, size_t i, struct asm_clone_rule *rule)
{
	if (i >= c->nslots)
		return -1;
	rule->j = c->slots[i].j;
	rule->s = c->slots[i].s;
	rule->d = c->slots[i].d;
	rule->width = c->slots[i].width;
	rule->line = c->slots[i].line;
	return 0;
}

/* ---- Emitting ---- */

/* A slot value as decimal text. */
struct numtxt {
	char s[23];
	uint8_t len;
};

/* Format v into t, two digits per step: emit formats tens of millions of numbers. */
static void fmt_i64(struct numtxt *t, int64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	while (u >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * u, 2);
	} else {
		*--p = (char)('0' + u);
	}
	if (v < 0)
		*--p = '-';
	t->len = (uint8_t)(tmp + sizeof(tmp) - p);
	memcpy(t->s, p, t->len);
}

/* Make room for n more bytes (and the NUL) in b; returns where they go. Grows like
 * buf_add so a shard buffer reallocates O(log size) times. */
static char *reserve(struct buf *b, size_t n)
{
	size_t need = b->len + n + 1;

	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

/* Whether the relations the probes shared (struct order) hold for slot values vals. */
static int orders_hold(const struct asm_clone *c, const int64_t *vals)
{
	for (size_t i = 0; i < c->norders; i++) {
		const struct order *o = &c->orders[i];
		int64_t a = vals[o->a], b = o->b == NO_SLOT ? o->lit : vals[o->b];
		if (o->kind == ORD_APART) {
			if (!apart(a, b))
				return 0;
			continue;
		}
		uint64_t mask = wmask(o->width);
		if (o->rel_s != REL_ANY && sign3(a, b) != o->rel_s)
			return 0;
		if (o->rel_u != REL_ANY && sign3u((uint64_t)a & mask, (uint64_t)b & mask) != o->rel_u)
			return 0;
	}
	return 1;
}

/* Compute every slot's value for constants k into vals; returns -1 when one is unsafe (a
 * constant outside the probes' range, a class change, too wide for a signed 32-bit
 * encoding, a changed order or overlap). */
static int slot_values(const struct asm_clone *c, const int64_t *k, int64_t *vals)
{
	for (size_t j = 0; j < c->nk && !c->outside_ok; j++)
		if (k[j] < c->k_lo[j] || k[j] > c->k_hi[j])
			return -1;
	if (asm_fit_slot_values(c->slots, c->nslots, k, vals) != 0)
		return -1;
	return orders_hold(c, vals) ? 0 : -1;
}

/* Write the copy: literal runs, and between them the name, the tag or a slot's text. */
static char *write_copy(const struct asm_clone *c, char *w, const char *name, size_t name_len,
                        const char *tag, size_t tag_len, const struct numtxt *nums)
{
	const char *lit = c->lit;

	for (size_t i = 0; i < c->nops; i++) {
		const struct op *op = &c->ops[i];
		memcpy(w, lit, op->lit);
		w += op->lit;
		lit += op->lit;
		if (op->kind == OP_NAME) {
			memcpy(w, name, name_len);
			w += name_len;
		} else if (op->kind == OP_TAG) {
			memcpy(w, tag, tag_len);
			w += tag_len;
		} else {
			memcpy(w, nums[op->slot].s, sizeof(nums[op->slot].s));   /* fixed size: fast */
			w += nums[op->slot].len;
		}
	}
	memcpy(w, lit, c->tail);
	return w + c->tail;
}

int asm_clone_values(const struct asm_clone *c, const int64_t *k, int64_t *vals)
{
	return slot_values(c, k, vals);
}

void asm_clone_emit_values(const struct asm_clone *c, const char *name, const char *label_tag,
                           const int64_t *vals, struct buf *out)
{
	struct numtxt stack_nums[256];
	struct numtxt *nums = c->nslots > 256 ? xmalloc(c->nslots * sizeof(*nums)) : stack_nums;
	size_t name_len = strlen(name), tag_len = strlen(label_tag);
	size_t total = c->lit_len + c->n_name * name_len + c->n_tag * tag_len;

	for (size_t i = 0; i < c->nslots; i++) {
		fmt_i64(&nums[i], vals[i]);
		total += nums[i].len;
	}
	char *w = reserve(out, total + sizeof(nums[0].s));
	w = write_copy(c, w, name, name_len, label_tag, tag_len, nums);
	out->len = (size_t)(w - out->p);
	out->p[out->len] = '\0';
	if (nums != stack_nums)
		free(nums);
}

int asm_clone_emit(const struct asm_clone *c, const char *name, const char *label_tag,
                   const int64_t *k, struct buf *out)
{
	int64_t stack_vals[256];
	int64_t *vals = c->nslots > 256 ? xmalloc(c->nslots * sizeof(*vals)) : stack_vals;
	int rc = slot_values(c, k, vals);

	if (rc == 0)
		asm_clone_emit_values(c, name, label_tag, vals, out);
	if (vals != stack_vals)
		free(vals);
	return rc;
}
