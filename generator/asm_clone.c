/* asm_clone.c: fit a variant's probe assembly to per-copy constants and emit its copies.
 *
 * Fit: each probe text is lexed into tokens (text, integer, function name, .L label, other
 * locally defined symbol). The three token streams are compared position by position; an
 * integer that differs between the probes becomes a slot with a rule s * k[j] + d (mod 2^W).
 * Everything else becomes literal text. The result is a flat program: one literal byte array
 * and a list of ops, each "copy the next n literal bytes, then write the name / the label tag
 * / a slot value", so emitting a copy is a run of memcpy calls and integer formatting.
 */
#define _GNU_SOURCE   /* memmem */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_clone.h"
#include "util.h"

#define S_MAX 65536   /* largest |s| a rule may use, besides powers of two */

/* ---- Tokens ---- */

enum tok_kind {
	TK_TEXT,    /* literal bytes: blanks, punctuation, mnemonics, registers, strings */
	TK_SYM,     /* a symbol reference, resolved to TK_TEXT or TK_LOCAL after the lex */
	TK_NUM,     /* an integer literal (with its unary minus) */
	TK_NAME,    /* the function's name, possibly with a suffix (NAME.cold) */
	TK_LABEL,   /* a .L local label */
	TK_LOCAL    /* another symbol the probe defines (CSWTCH.3, x.0) */
};

/* Most probes one fit takes (asm_clone_fit_n). */
#define MAXP 8

enum num_ctx { NC_NONE, NC_IMM, NC_DISP, NC_DATA };

struct tok {
	uint32_t off, len;   /* bytes in the probe text */
	uint32_t line;       /* 1-based line in the probe text */
	uint8_t kind;        /* enum tok_kind */
	uint8_t ctx;         /* TK_NUM: enum num_ctx, NC_NONE when no slot may go there;
	                        TK_TEXT "(": NC_DISP for a memory operand without displacement */
	uint8_t width;       /* TK_NUM: W of the arithmetic, 8/16/32/64 */
	uint8_t need32;      /* TK_NUM: the encoding holds a signed 32-bit value */
	uint8_t is_cmp;      /* TK_NUM: the immediate of a cmp instruction */
	uint8_t is_store;    /* NC_DISP: the memory operand may be written (the last operand) */
	uint8_t is_addsub;   /* NC_DISP: ... by an add or sub (updates that commute) */
	uint16_t key_len;    /* NC_DISP: length of the "(base,index,scale)" text after it, 0 in
	                        lea (no memory access); cmp immediate: length of the rest of
	                        the operands (", %eax"): what it is compared with */
	uint64_t val;        /* TK_NUM: value, two's complement */
	uint32_t label_id;   /* TK_LABEL: order of the label's first appearance in its probe */
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

/* What the previous non-blank token on a line was: decides whether '-' is unary and
 * whether an integer sits where a slot may go. */
enum prev_sig { PS_START, PS_HEAD, PS_DOLLAR, PS_COMMA, PS_OPEN, PS_STAR, PS_OTHER };

/* What the line's head (mnemonic or directive) says about integers on the line. */
struct head_info {
	int is_data;       /* a data directive: whole operands are slots */
	int is_cmp;        /* a cmp instruction: its immediate's order matters */
	int reads_last;    /* its last operand is only read (cmp, test, push, jmp, ...) */
	int is_lea;        /* lea: its "memory operand" is arithmetic, not an access */
	int is_addsub;     /* add or sub */
	int defines;       /* .comm/.lcomm/.set/.equ: the first symbol operand is defined */
	int imm_width;     /* W for $immediates, 0 when they cannot be slots */
	int imm_need32;    /* immediates are encoded as signed 32 bits */
	int disp_width;    /* W for displacements */
	int disp_need32;
	int data_width;    /* W for data operands */
};

/* A span of the probe text naming a symbol the probe defines. */
struct span {
	uint32_t off, len;
};

struct lexer {
	const char *text;
	const char *name;          /* the probe's function name */
	size_t name_len;
	struct toks *out;
	uint32_t line;
	struct span *defs;         /* symbols defined here, other than NAME and .L labels */
	size_t ndefs, defcap;
	int name_defined;          /* saw "NAME:" */
	int probe;
	char *err;
	size_t errlen;
};

static int is_sym_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

static int is_sym_char(int c)
{
	return is_sym_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int span_is(const char *p, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(p, word, n) == 0;
}

static int span_in(const char *p, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (span_is(p, n, *words))
			return 1;
	return 0;
}

/* Sign-extend the low w bits of x. */
static int64_t sext(uint64_t x, int w)
{
	if (w >= 64)
		return (int64_t)x;
	return (int64_t)(x << (64 - w)) >> (64 - w);
}

static uint64_t wmask(int w)
{
	return w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
}

static void push_tok(struct toks *t, struct tok tok)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n++] = tok;
}

static void add_text(struct lexer *lx, const char *p, size_t n)
{
	struct tok t = {0};

	t.off = (uint32_t)(p - lx->text);
	t.len = (uint32_t)n;
	t.line = lx->line;
	t.kind = TK_TEXT;
	push_tok(lx->out, t);
}

static void add_def(struct lexer *lx, const char *p, size_t n)
{
	if (lx->ndefs == lx->defcap) {
		lx->defcap = lx->defcap ? lx->defcap * 2 : 8;
		lx->defs = xrealloc(lx->defs, lx->defcap * sizeof(*lx->defs));
	}
	lx->defs[lx->ndefs].off = (uint32_t)(p - lx->text);
	lx->defs[lx->ndefs].len = (uint32_t)n;
	lx->ndefs++;
}

static void lex_error(struct lexer *lx, const char *what, const char *p, size_t n)
{
	if (n > 60)
		n = 60;
	snprintf(lx->err, lx->errlen, "probe %d line %u: %s: %.*s", lx->probe, lx->line, what,
	         (int)n, p);
}

/* Classify a line head (mnemonic or directive) for the integers that follow it.
 * Immediates may be slots only in integer ALU instructions whose AT&T size suffix (gcc
 * always writes one) gives the width W, and in movabs; shift counts, bit indexes and SSE
 * control bytes are not linear in anything and stay literal. A displacement is part of a
 * 64-bit address (W = 64, encoded as signed 32 bits) except in leal/leaw, where the result
 * is truncated to the destination's width. */
static struct head_info classify_head(const char *p, size_t n)
{
	static const char *const alu_ops[] = {
		"mov", "add", "sub", "and", "or", "xor", "cmp", "test", "imul", "adc", "sbb",
		"push", "lea", NULL
	};
	static const char *const reads_prefix[] = {
		"j", "call", "ucomi", "comi", "vucomi", "vcomi", "prefetch", "ptest", "vptest", NULL
	};
	static const char *const reads_op[] = {"cmp", "test", "bt", "push", NULL};
	struct head_info h = {0};

	h.disp_width = 64;
	h.disp_need32 = 1;
	for (const char *const *r = reads_prefix; *r; r++)
		if (n >= strlen(*r) && memcmp(p, *r, strlen(*r)) == 0)
			h.reads_last = 1;
	if (span_in(p, n, reads_op) || (n > 1 && span_in(p, n - 1, reads_op)))
		h.reads_last = 1;   /* cmpl, btq; not cmpxchg or bts */
	if (n > 0 && p[0] == '.') {
		static const struct { const char *d; int w; } data[] = {
			{".byte", 8}, {".value", 16}, {".word", 16}, {".short", 16}, {".hword", 16},
			{".2byte", 16}, {".long", 32}, {".int", 32}, {".4byte", 32}, {".quad", 64},
			{".8byte", 64},
		};
		for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
			if (span_is(p, n, data[i].d)) {
				h.is_data = 1;
				h.data_width = data[i].w;
			}
		}
		static const char *const defining[] = {".comm", ".lcomm", ".set", ".equ", NULL};
		h.defines = span_in(p, n, defining);
		return h;
	}
	if (span_is(p, n, "movabsq") || span_is(p, n, "movabs")) {
		h.imm_width = 64;
		return h;
	}
	if (n < 2 || n > 8)
		return h;
	int w;
	switch (p[n - 1]) {
	case 'b': w = 8; break;
	case 'w': w = 16; break;
	case 'l': w = 32; break;
	case 'q': w = 64; break;
	default: return h;
	}
	if (!span_in(p, n - 1, alu_ops))
		return h;
	h.imm_width = w;
	h.imm_need32 = 1;
	h.is_cmp = n == 4 && memcmp(p, "cmp", 3) == 0;
	h.is_addsub = n == 4 && (memcmp(p, "add", 3) == 0 || memcmp(p, "sub", 3) == 0);
	h.is_lea = n == 4 && memcmp(p, "lea", 3) == 0;
	if (h.is_lea && w < 64) {
		h.disp_width = w;
		h.disp_need32 = 0;
	}
	return h;
}

/* Parse the integer literal at p (digits, or 0x and hex digits). Returns its length and
 * stores the value, or 0 when it overflows 64 bits or runs into symbol characters (then it
 * is not an integer we understand and stays literal text). */
static size_t parse_uint(const char *p, const char *end, uint64_t *val)
{
	const char *q = p;
	uint64_t v = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		q += 2;
		const char *first = q;
		for (; q < end; q++) {
			int c = *q, dv;
			if (is_digit(c))
				dv = c - '0';
			else if (c >= 'a' && c <= 'f')
				dv = c - 'a' + 10;
			else if (c >= 'A' && c <= 'F')
				dv = c - 'A' + 10;
			else
				break;
			if (v >> 60)
				return 0;
			v = v * 16 + (uint64_t)dv;
		}
		if (q == first)
			return 0;
	} else {
		for (; q < end && is_digit(*q); q++) {
			uint64_t dv = (uint64_t)(*q - '0');
			if (v > (UINT64_MAX - dv) / 10)
				return 0;
			v = v * 10 + dv;
		}
	}
	if (q < end && is_sym_char(*q))
		return 0;
	*val = v;
	return (size_t)(q - p);
}

/* The first non-blank character at or after p on this line, or '\n' at the line's end. */
static int next_sig_char(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p < end ? *p : '\n';
}

/* Whether value v (two's complement) is representable in w bits, signed or unsigned. */
static int fits_width(uint64_t v, int w)
{
	if (w >= 64)
		return 1;
	return sext(v, w) == (int64_t)v || (v >> w) == 0;
}

/* Mark t as the displacement of the memory operand whose "(...)" starts at open: its
 * address registers (the key relating it to other accesses) and whether it may be written
 * (the last operand of an instruction that writes its last operand). */
static void mark_address(struct tok *t, const struct head_info *h, const char *open,
                         const char *end)
{
	const char *close = memchr(open, ')', (size_t)(end - open));

	if (!close || close - open >= UINT16_MAX)
		return;
	t->ctx = NC_DISP;
	t->width = (uint8_t)h->disp_width;
	t->need32 = (uint8_t)h->disp_need32;
	t->key_len = h->is_lea ? 0 : (uint16_t)(close + 1 - open);
	int last = next_sig_char(close + 1, end);
	t->is_store = !h->reads_last && (last == '\n' || last == '#');
	t->is_addsub = t->is_store && h->is_addsub;
}

/* Decide where the integer just lexed may become a slot, from the line's head, the token
 * before it and the character after it. */
static void number_context(struct tok *t, const struct head_info *h, int head_seen,
                           enum prev_sig ps, const char *after, const char *end)
{
	int nc = next_sig_char(after, end);
	int operand_end = nc == ',' || nc == '\n' || nc == '#';

	t->ctx = NC_NONE;
	if (ps == PS_DOLLAR && operand_end && head_seen && h->imm_width) {
		t->ctx = NC_IMM;
		t->width = (uint8_t)h->imm_width;
		t->need32 = (uint8_t)h->imm_need32;
		t->is_cmp = (uint8_t)h->is_cmp;
		if (t->is_cmp) {   /* the compared operand, up to a comment or the line's end */
			const char *e = memchr(after, '#', (size_t)(end - after));
			e = e ? e : end;
			while (e > after && is_blank(e[-1]))
				e--;
			t->key_len = (uint16_t)(e - after < UINT16_MAX ? e - after : 0);
		}
	} else if (after < end && *after == '(' && head_seen && !h->is_data &&
	           (ps == PS_HEAD || ps == PS_COMMA || ps == PS_STAR)) {
		mark_address(t, h, after, end);
	} else if (h->is_data && (ps == PS_HEAD || ps == PS_COMMA) && operand_end) {
		t->ctx = NC_DATA;
		t->width = (uint8_t)h->data_width;
		t->need32 = 0;
	}
	if (t->ctx != NC_NONE && !fits_width(t->val, t->width))
		t->ctx = NC_NONE;
}

/* Lex a symbol at p..p+n: the function's name, a .L label or a plain symbol reference. */
static void add_symbol(struct lexer *lx, const char *p, size_t n)
{
	struct tok t = {0};

	t.off = (uint32_t)(p - lx->text);
	t.len = (uint32_t)n;
	t.line = lx->line;
	if (n >= lx->name_len && memcmp(p, lx->name, lx->name_len) == 0 &&
	    (n == lx->name_len || p[lx->name_len] == '.'))
		t.kind = TK_NAME;
	else if (n > 2 && p[0] == '.' && p[1] == 'L')
		t.kind = TK_LABEL;
	else
		t.kind = TK_SYM;
	push_tok(lx->out, t);
}

/* Whether a line starting with head p..p+n (rest of line up to end) is dropped from copies
 * (file-level lines the shard writer emits once; the function's own .globl). Sets an error
 * and returns -1 for lines that cannot be cloned: exported symbols, debug info. */
static int line_dropped(struct lexer *lx, const char *p, size_t n, const char *end)
{
	const char *rest = p + n;
	size_t rlen = (size_t)(end - rest);

	if (span_is(p, n, ".file") || span_is(p, n, ".ident"))
		return 1;
	if (span_is(p, n, ".loc") || span_is(p, n, ".loc_mark_labels")) {
		lex_error(lx, "debug line info (probe compiled with -g) is not supported", p,
		          (size_t)(end - p));
		return -1;
	}
	if (span_is(p, n, ".section") || span_is(p, n, ".pushsection")) {
		if (memmem(rest, rlen, ".note.GNU-stack", 15))
			return 1;
		if (memmem(rest, rlen, ".debug", 6)) {
			lex_error(lx, "debug sections are not supported", p, (size_t)(end - p));
			return -1;
		}
		return 0;
	}
	static const char *const exporting[] = {".globl", ".global", ".weak", ".protected", NULL};
	if (!span_in(p, n, exporting))
		return 0;
	while (rest < end && is_blank(*rest))
		rest++;
	const char *s = rest;
	while (rest < end && is_sym_char(*rest))
		rest++;
	if (span_is(p, n, ".weak") || (size_t)(rest - s) != lx->name_len ||
	    memcmp(s, lx->name, lx->name_len) != 0) {
		lex_error(lx, "exports a symbol other than the function", p, (size_t)(end - p));
		return -1;
	}
	return 1;
}

/* Where lexing one line stands. */
struct line_state {
	const char *end;          /* the line's '\n' or the end of the text */
	struct head_info hi;      /* what the head says (zero before it) */
	enum prev_sig ps;
	int head_seen;
	int define_next;          /* the next symbol is defined by the head (.comm, .set) */
};

/* Lex the word s..q (a symbol or directive): a label definition (with its ':'), the
 * line's head, or a symbol operand. Returns where lexing goes on. */
static const char *lex_word(struct lexer *lx, struct line_state *ls, const char *s,
                            const char *q)
{
	static const char *const prefixes[] = {
		"rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "data16", "addr32",
		"bnd", NULL
	};
	size_t n = (size_t)(q - s);

	if (ls->ps == PS_START && q < ls->end && *q == ':') {
		/* a label definition; a head may follow it on the same line */
		add_symbol(lx, s, n);
		struct tok *t = &lx->out->v[lx->out->n - 1];
		if (t->kind == TK_NAME && n == lx->name_len)
			lx->name_defined++;
		if (t->kind == TK_SYM) {
			t->kind = TK_LOCAL;
			add_def(lx, s, n);
		}
		add_text(lx, q, 1);
		return q + 1;
	}
	if (ls->ps == PS_START) {
		add_text(lx, s, n);
		if (span_in(s, n, prefixes))
			return q;   /* the instruction follows */
		ls->hi = classify_head(s, n);
		ls->head_seen = 1;
		ls->define_next = ls->hi.defines;
		ls->ps = PS_HEAD;
		return q;
	}
	add_symbol(lx, s, n);
	if (ls->define_next && lx->out->v[lx->out->n - 1].kind == TK_SYM)
		add_def(lx, s, n);
	ls->define_next = 0;
	ls->ps = PS_OTHER;
	return q;
}

/* Lex an integer literal at s (its unary minus included when unary); returns where it
 * ends. Something that is not an integer we understand (1f, 2b, 64-bit overflow) becomes
 * literal text. */
static const char *lex_number(struct lexer *lx, struct line_state *ls, const char *s, int unary)
{
	uint64_t v;
	size_t n = parse_uint(s + unary, ls->end, &v);
	const char *q = s + unary + n;

	if (n == 0) {
		for (q = s + unary; q < ls->end && is_sym_char(*q);)
			q++;
		add_text(lx, s, (size_t)(q - s));
	} else {
		struct tok t = {0};
		t.off = (uint32_t)(s - lx->text);
		t.len = (uint32_t)(q - s);
		t.line = lx->line;
		t.kind = TK_NUM;
		t.val = unary ? (uint64_t)0 - v : v;
		number_context(&t, &ls->hi, ls->head_seen, ls->ps, q, ls->end);
		push_tok(lx->out, t);
	}
	ls->ps = PS_OTHER;
	return q;
}

/* Lex a string literal at s; returns where it ends. */
static const char *skip_string(const char *s, const char *end)
{
	const char *q = s + 1;

	for (; q < end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < end)
			q++;
	return q < end ? q + 1 : q;
}

/* Lex one line p..end (end at its '\n' or the end of the text), appending tokens for the
 * line and its newline (when *end is one). Returns 0, or -1 with lx->err set. */
static int lex_line(struct lexer *lx, const char *p, const char *end)
{
	struct line_state ls = {end, {0}, PS_START, 0, 0};
	const char *q = p;

	while (q < end && is_blank(*q))
		q++;
	if (q < end && is_sym_start(*q)) {
		const char *h = q;
		while (q < end && is_sym_char(*q))
			q++;
		int drop = line_dropped(lx, h, (size_t)(q - h), end);
		if (drop)
			return drop < 0 ? -1 : 0;
	}
	for (q = p; q < end;) {
		const char *s = q;
		int c = *q;
		if (is_blank(c)) {
			while (q < end && is_blank(*q))
				q++;
			add_text(lx, s, (size_t)(q - s));
		} else if (c == '"') {
			q = skip_string(s, end);
			add_text(lx, s, (size_t)(q - s));
			ls.ps = PS_OTHER;
		} else if (c == '#') {
			add_text(lx, s, (size_t)(end - s));   /* a comment */
			q = end;
		} else if (is_sym_start(c)) {
			while (q < end && is_sym_char(*q))
				q++;
			q = lex_word(lx, &ls, s, q);
		} else if (is_digit(c) || (c == '-' && q + 1 < end && is_digit(q[1]) &&
		                           ls.ps != PS_OTHER)) {
			q = lex_number(lx, &ls, s, c == '-');
		} else {
			q++;
			add_text(lx, s, 1);
			if (c == '(' && ls.head_seen && !ls.hi.is_data &&
			    (ls.ps == PS_HEAD || ls.ps == PS_COMMA || ls.ps == PS_STAR))
				mark_address(&lx->out->v[lx->out->n - 1], &ls.hi, s, end);
			ls.ps = c == '$' ? PS_DOLLAR : c == ',' ? PS_COMMA : c == '(' ? PS_OPEN :
			        c == '*' ? PS_STAR : PS_OTHER;
		}
	}
	if (*end == '\n')
		add_text(lx, end, 1);
	return 0;
}

/* Turn the plain symbol references that name a symbol the probe defines into TK_LOCAL (they
 * are renamed per copy), and the rest into literal text. */
static void resolve_symbols(struct lexer *lx)
{
	for (size_t i = 0; i < lx->out->n; i++) {
		struct tok *t = &lx->out->v[i];
		if (t->kind != TK_SYM)
			continue;
		t->kind = TK_TEXT;
		for (size_t d = 0; d < lx->ndefs; d++) {
			if (lx->defs[d].len == t->len &&
			    memcmp(lx->text + lx->defs[d].off, lx->text + t->off, t->len) == 0) {
				t->kind = TK_LOCAL;
				break;
			}
		}
	}
}

/* Lex a whole probe text into out. Returns 0, or -1 with err set (unsupported lines, no
 * definition of the function). */
/* Number each .L label by its first appearance. gcc numbers labels as it creates them, and
 * a label it creates and then drops shifts the numbers of all later ones, so two probes
 * with the same control flow can print .L15 where the other prints .L16: probes are
 * compared on these numbers, and copies keep probe 0's names. */
static void number_labels(struct toks *t, const char *text)
{
	size_t cap = 64, nlab = 0;
	while (cap < 2 * t->n)
		cap *= 2;
	struct {
		uint32_t off, len, id;
	} *tab = xcalloc(cap, sizeof(*tab));

	for (size_t i = 0; i < t->n; i++) {
		struct tok *k = &t->v[i];
		if (k->kind != TK_LABEL)
			continue;
		uint64_t h = 1469598103934665603ull;
		for (uint32_t c = 0; c < k->len; c++)
			h = (h ^ (unsigned char)text[k->off + c]) * 1099511628211ull;
		size_t at = (size_t)h & (cap - 1);
		while (tab[at].len && !(tab[at].len == k->len &&
					memcmp(text + tab[at].off, text + k->off, k->len) == 0))
			at = (at + 1) & (cap - 1);
		if (!tab[at].len) {
			tab[at].off = k->off;
			tab[at].len = k->len;
			tab[at].id = (uint32_t)nlab++;
		}
		k->label_id = tab[at].id;
	}
	free(tab);
}

static int lex_probe(const char *text, const char *name, int probe, struct toks *out,
                     char *err, size_t errlen)
{
	struct lexer lx = {0};

	lx.text = text;
	lx.name = name;
	lx.name_len = strlen(name);
	lx.out = out;
	lx.probe = probe;
	lx.err = err;
	lx.errlen = errlen;
	if (strlen(text) > UINT32_MAX / 2) {
		snprintf(err, errlen, "probe %d: text too large", probe);
		return -1;
	}
	if (lx.name_len == 0) {
		snprintf(err, errlen, "probe %d: empty function name", probe);
		return -1;
	}
	const char *p = text;
	int rc = 0;
	for (lx.line = 1; *p; lx.line++) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		if (lex_line(&lx, p, end) != 0) {
			rc = -1;
			break;
		}
		p = nl ? nl + 1 : end;
	}
	if (rc == 0 && lx.name_defined != 1) {
		snprintf(err, errlen, "probe %d: function %s is defined %d times, expected once",
		         probe, name, lx.name_defined);
		rc = -1;
	}
	if (rc == 0)
		resolve_symbols(&lx);
	if (rc == 0)
		number_labels(out, text);
	free(lx.defs);
	return rc;
}

/* ---- Fitting slots ---- */

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

struct slot {
	int64_t s, d;        /* value = sext_W(s * k[j] + d) */
	uint32_t j;
	uint32_t line;       /* line in probe 0 */
	uint8_t width;
	uint8_t need32;      /* the value must fit a signed 32-bit encoding */
	uint32_t agree;      /* class bits all probes share */
	uint32_t want;       /* their setting */
};

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

/* Describe token t of text for an error message. */
static void tok_desc(char *d, size_t n, const char *text, const struct tok *t)
{
	size_t len = t->len > 40 ? 40 : t->len;
	const char *s = text + t->off;

	if (len == 1 && s[0] == '\n')
		snprintf(d, n, "end of line");
	else
		snprintf(d, n, "'%.*s'", (int)len, s);
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
static int fit_slot(const struct tok *const at[MAXP], int np, const char *const text[MAXP],
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
	tok_desc(what, sizeof(what), text[0], t);
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
		         "line %u: integer %s is ambiguous: k[%zu]*%" PRId64 "%+" PRId64
		         " and k[%zu]*%" PRId64 "%+" PRId64 " both fit (%zu rules)",
		         t->line, what, cands[0].j, cands[0].s, cands[0].d, cands[1].j, cands[1].s,
		         cands[1].d, n);
		return -1;
	}
	*out = make_slot(&cands[0], at, np, k);
	return 0;
}

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
		tok_desc(a, sizeof(a), text[longer == &t[0] ? 0 : p], &longer->v[i]);
		snprintf(err, errlen, "probe %d line %u: probes differ in length: %s only in probe %d",
		         longer == &t[0] ? 0 : p, longer->v[i].line, a, longer == &t[0] ? 0 : p);
		return;
	}
	tok_desc(a, sizeof(a), text[0], &t[0].v[i]);
	tok_desc(b, sizeof(b), text[p], &t[p].v[i]);
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
			rc = fit_slot(at, np, text, k, nk, &sl, err, errlen);
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
		rc = lex_probe(asm_text[p], probe_name[p], p, &t[p], err, errlen);
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
	for (size_t i = 0; i < c->nslots; i++) {
		const struct slot *sl = &c->slots[i];
		__int128 e = exact_value(sl, k[sl->j]);
		int64_t v = sext((uint64_t)e, sl->width);
		unsigned cls = value_class(e, v, sl->width);
		if ((cls ^ sl->want) & sl->agree & ~(CL_GAINABLE & cls & ~sl->want))
			return -1;
		if (sl->need32 && (v < INT32_MIN || v > INT32_MAX))
			return -1;
		vals[i] = v;
	}
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

int asm_clone_emit(const struct asm_clone *c, const char *name, const char *label_tag,
                   const int64_t *k, struct buf *out)
{
	int64_t stack_vals[256];
	struct numtxt stack_nums[256];
	int big = c->nslots > 256;
	int64_t *vals = big ? xmalloc(c->nslots * sizeof(*vals)) : stack_vals;
	struct numtxt *nums = big ? xmalloc(c->nslots * sizeof(*nums)) : stack_nums;
	int rc = slot_values(c, k, vals);

	if (rc == 0) {
		size_t name_len = strlen(name), tag_len = strlen(label_tag);
		size_t total = c->lit_len + c->n_name * name_len + c->n_tag * tag_len;
		for (size_t i = 0; i < c->nslots; i++) {
			fmt_i64(&nums[i], vals[i]);
			total += nums[i].len;
		}
		/* + sizeof(numtxt): room for the last slot's fixed-size copy */
		char *w = reserve(out, total + sizeof(nums[0].s));
		w = write_copy(c, w, name, name_len, label_tag, tag_len, nums);
		out->len = (size_t)(w - out->p);
		out->p[out->len] = '\0';
	}
	if (big) {
		free(vals);
		free(nums);
	}
	return rc;
}
