/* asm_fit.c: fit an integer that differs between the probes to a rule value = s * k[j] + d
 * (mod 2^W) of one per-copy constant, and the value classes that decide whether a copy's
 * value is safe (asm_clone.h explains both).
 */
#include <inttypes.h>
#include <stdio.h>

#include "asm_clone.h"
#include "asm_tok.h"

#define S_MAX 65536   /* largest |s| a rule may use, besides powers of two */

/* Class bits of a value: gcc picks instructions by these, so a copy whose value changes
 * class may need different code than the probes got. A slot's class word holds the bits of
 * the value as written (v, W-bit), of the exact s * k + d (e, << CL_EXACT) and whether e
 * fits W bits signed / unsigned (CL_FITS, CL_FITU): gcc chose a W-bit place (a .byte
 * table, an 8-bit compare) because the probes' values fitted it, and a copy whose value
 * does not would be silently truncated by the modulo 2^W rule. */
enum {
	CL_NEG = 1, CL_IMM8 = 2, CL_I32 = 4, CL_U32 = 8, CL_SMALL = 16, CL_POW2 = 32,
	CL_MASK = 64, CL_I64 = 128
};
#define CL_EXACT 8
#define CL_FITS (1u << 16)
#define CL_FITU (1u << 17)
/* The classes that matter for a displacement: only its range. It is the constant part of
 * an address, any signed 32-bit value encodes in the same instruction, and gcc's -O2
 * address costs do not look at it; what does matter, overlap with other accesses, is
 * checked separately (struct order, ORD_APART). */
#define CL_DISP (CL_I32 | CL_I64 | (CL_I32 | CL_I64) << CL_EXACT | CL_FITS | CL_FITU)
/* Classes a copy may gain when no probe had them. They steer gcc towards special code (a
 * shift for a power of two, movzbl for 255, an inc for 1), which a copy with such a value
 * would have got from C; the probes' general instruction (imul, and, add with an
 * immediate) still computes the same for it. The other way round is refused: code gcc
 * specialised for a class all probes shared is wrong outside it. Sign and width changes
 * are never allowed: they change what an unsigned compare or a narrow operand means. */
#define CL_GAINABLE ((CL_IMM8 | CL_SMALL | CL_POW2 | CL_MASK) * (1u | 1u << CL_EXACT))

/* Class bits of x when it fits 64 bits: the common case, kept cheap for emit. */
static unsigned class_bits64(int64_t x)
{
	uint64_t u = (uint64_t)x;
	unsigned b = CL_I64;

	b |= x < 0 ? CL_NEG : 0;
	b |= u + 127 < 255 ? CL_IMM8 : 0;
	b |= x == (int32_t)x ? CL_I32 : 0;
	b |= u <= UINT32_MAX ? CL_U32 : 0;
	b |= u + 1 <= 2 ? CL_SMALL : 0;
	b |= x > 0 && (u & (u - 1)) == 0 ? CL_POW2 : 0;
	b |= x >= 0 && (u & (u + 1)) == 0 ? CL_MASK : 0;
	return b;
}

static unsigned class_bits(__int128 x)
{
	if (x >= INT64_MIN && x <= INT64_MAX)
		return class_bits64((int64_t)x);
	unsigned b = x < 0 ? CL_NEG : 0;
	if (x > 0 && (x & (x - 1)) == 0)
		b |= CL_POW2;
	if (x > 0 && (x & (x + 1)) == 0)
		b |= CL_MASK;
	return b;
}

struct rule {
	size_t j;
	int64_t s, d;
};

/* Inverse of odd a modulo 2^64 (Newton's iteration; each step doubles the correct bits). */
static uint64_t inv_odd(uint64_t a)
{
	uint64_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/* Record candidate rule r into cands (at most 2 kept: one is the answer, two mean
 * ambiguous); returns the number of candidates seen so far. */
static size_t add_cand(struct rule *cands, size_t n, struct rule r)
{
	if (n < 2)
		cands[n] = r;
	return n + 1;
}

/* Add rule (j, s, d) to cands when it predicts all three probes, with d fitted on probe 0.
 * Returns the updated candidate count. */
static size_t try_rule(size_t j, int64_t s, const uint64_t kv[MAXP], const uint64_t v[MAXP],
                       int np, int w, struct rule *cands, size_t n)
{
	uint64_t mask = wmask(w);
	uint64_t d = (v[0] - (uint64_t)s * kv[0]) & mask;

	for (int i = 1; i < np; i++)
		if ((((uint64_t)s * kv[i] + d) & mask) != v[i])
			return n;
	struct rule r = {j, s, sext(d, w)};
	return add_cand(cands, n, r);
}

/* Try every multiplier s with s * dk == dv (mod 2^w) for constant j, where dk, dv are the
 * differences between probes a and b (kv[a] != kv[b]); keep those that predict all probes.
 * s is 0 < |s| <= S_MAX or +-2^n (n < w): gcc rewrites (x >> 24) > K as
 * x > K * 2^24 + 0xFFFFFF, which a tenth of the README variants do. Narrow slots
 * (w <= 16) take only s = +-1: modulo 2^8 a third probe leaves a 1 in 256 chance that a
 * wrong constant and multiplier fit by accident, which is too high for a silent miscompile;
 * with s = +-1 the chance is 1 in 2^(2w) per constant. Returns the updated candidate
 * count. */
static size_t fit_constant(size_t j, const uint64_t kv[MAXP], const uint64_t v[MAXP], int np,
                           int a, int b, int w, struct rule *cands, size_t n)
{
	if (w <= 16) {
		n = try_rule(j, 1, kv, v, np, w, cands, n);
		return try_rule(j, -1, kv, v, np, w, cands, n);
	}
	uint64_t mask = wmask(w);
	uint64_t dk = (kv[b] - kv[a]) & mask, dv = (v[b] - v[a]) & mask;
	int t = __builtin_ctzll(dk);

	if (dv & (((uint64_t)1 << t) - 1))
		return n;
	int m = w - t;   /* s is determined modulo 2^m */
	uint64_t s0 = ((dv >> t) * inv_odd(dk >> t)) & wmask(m);
	int64_t s = sext(s0, m);   /* the member of s's class with the smallest |s| */
	if (m >= 18) {             /* other members are 2^m > 2 * S_MAX away */
		if (s != 0 && s <= S_MAX && s >= -S_MAX)
			n = try_rule(j, s, kv, v, np, w, cands, n);
	} else {
		int64_t step = (int64_t)1 << m;
		while (s - step >= -S_MAX)
			s -= step;
		for (; s <= S_MAX; s += step)
			if (s != 0)
				n = try_rule(j, s, kv, v, np, w, cands, n);
	}
	for (int e = 17; e < w; e++) {   /* powers of two beyond S_MAX, each sign once */
		uint64_t pw = (uint64_t)1 << e;
		if (((pw - s0) & wmask(m)) == 0)
			n = try_rule(j, sext(pw, w), kv, v, np, w, cands, n);
		if (e < w - 1 && ((0 - pw - s0) & wmask(m)) == 0)
			n = try_rule(j, -(int64_t)pw, kv, v, np, w, cands, n);
	}
	return n;
}

/* Find every rule (j, s, d) explaining the probe values v[] at width w. Returns the number
 * of distinct rules; the first two go to cands. */
static size_t fit_values(const uint64_t v_in[MAXP], int np, int w, const int64_t *const k[MAXP],
                         size_t nk, struct rule cands[2])
{
	uint64_t mask = wmask(w), v[MAXP];
	size_t n = 0;

	for (int i = 0; i < np; i++)
		v[i] = v_in[i] & mask;
	for (size_t j = 0; j < nk; j++) {
		uint64_t kv[MAXP];
		for (int i = 0; i < np; i++)
			kv[i] = (uint64_t)k[i][j] & mask;
		for (int b = 1; b < np; b++)
			if (kv[b] != kv[0]) {
				n = fit_constant(j, kv, v, np, 0, b, w, cands, n);
				break;
			}
	}
	return n;
}

static __int128 exact_value(const struct slot *sl, int64_t k)
{
	return (__int128)sl->s * k + sl->d;
}

/* The class word of a slot whose exact value is e and written value v. */
static unsigned value_class(__int128 e, int64_t v, int w)
{
	unsigned c = class_bits64(v) | class_bits(e) << CL_EXACT;

	if (w < 64) {
		__int128 half = (__int128)1 << (w - 1);
		if (e >= -half && e < half)
			c |= CL_FITS;
		if (e >= 0 && e < 2 * half)
			c |= CL_FITU;
	} else {
		c |= CL_FITS | CL_FITU;
	}
	return c;
}

static unsigned slot_class(const struct slot *sl, int64_t k)
{
	__int128 e = exact_value(sl, k);

	return value_class(e, sext((uint64_t)e, sl->width), sl->width);
}

/* Make slot from rule r for the integer tokens at[0..2]; computes which classes the probes
 * agree on. */
static struct slot make_slot(const struct rule *r, const struct tok *const at[MAXP], int np,
                             const int64_t *const k[MAXP])
{
	struct slot sl = {0};

	sl.s = r->s;
	sl.d = r->d;
	sl.j = (uint32_t)r->j;
	sl.line = at[0]->line;
	sl.width = at[0]->width;
	sl.need32 = at[0]->need32;
	unsigned c0 = slot_class(&sl, k[0][r->j]);
	sl.agree = ~0u;
	for (int i = 1; i < np; i++)
		sl.agree &= ~(c0 ^ slot_class(&sl, k[i][r->j]));
	if (at[0]->ctx == NC_DISP)
		sl.agree &= CL_DISP;
	sl.want = c0 & sl.agree;
	return sl;
}

/* Fit the differing integers at[0..2] to one rule. Returns 0 and fills *out, or -1 with err
 * naming the line and values. */
int asm_fit_slot(const struct tok *const at[MAXP], int np, const char *const text[MAXP],
                 const int64_t *const k[MAXP], size_t nk, struct slot *out, char *err,
                 size_t errlen)
{
	const struct tok *t = at[0];
	char what[64];
	uint64_t v[MAXP];
	struct rule cands[2];
	int same_kind = 1;

	for (int i = 0; i < np; i++) {
		v[i] = at[i]->val;
		same_kind &= at[i]->ctx == t->ctx && at[i]->width == t->width;
	}
	asm_lex_tok_desc(what, sizeof(what), text[0], t);
	if (t->ctx == NC_NONE || !same_kind) {
		snprintf(err, errlen,
		         "line %u: integer %s differs between probes (%" PRId64 ", %" PRId64 ", %"
		         PRId64 ") outside an immediate, displacement or data operand",
		         t->line, what, (int64_t)v[0], (int64_t)v[1], (int64_t)v[2]);
		return -1;
	}
	size_t n = fit_values(v, np, t->width, k, nk, cands);
	if (n == 0) {
		snprintf(err, errlen,
		         "line %u: integer %s (%" PRId64 ", %" PRId64 ", %" PRId64
		         ") is not s*k[j]+d mod 2^%d for any constant j",
		         t->line, what, (int64_t)v[0], (int64_t)v[1], (int64_t)v[2], t->width);
		return -1;
	}
	if (n > 1) {
		snprintf(err, errlen,
		         "line %u: integer %s" ASM_CLONE_AMBIGUOUS "k[%zu]*%" PRId64 "%+" PRId64
		         " and k[%zu]*%" PRId64 "%+" PRId64 " both fit (%zu rules)",
		         t->line, what, cands[0].j, cands[0].s, cands[0].d, cands[1].j, cands[1].s,
		         cands[1].d, n);
		return -1;
	}
	*out = make_slot(&cands[0], at, np, k);
	return 0;
}

int asm_fit_slot_values(const struct slot *slots, size_t n, const int64_t *k, int64_t *vals)
{
	for (size_t i = 0; i < n; i++) {
		const struct slot *sl = &slots[i];
		__int128 e = exact_value(sl, k[sl->j]);
		int64_t v = sext((uint64_t)e, sl->width);
		unsigned cls = value_class(e, v, sl->width);
		if ((cls ^ sl->want) & sl->agree & ~(CL_GAINABLE & cls & ~sl->want))
			return -1;
		if (sl->need32 && (v < INT32_MIN || v > INT32_MAX))
			return -1;
		vals[i] = v;
	}
	return 0;
}
