/* asm_lex.c: split a probe's assembly text into tokens (asm_tok.h): literal text, integers,
 * the function's name, .L labels and other symbols the probe defines. Each integer is marked
 * with where it sits (an immediate, a displacement, a data operand: the places a slot may
 * go, asm_clone.h) and the width of its arithmetic; file-level lines are dropped and lines
 * that cannot be cloned (exports, debug info) refused.
 */
#define _GNU_SOURCE   /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_tok.h"
#include "util.h"

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

/* Lex a whole probe text into out. Returns 0, or -1 with err set (unsupported lines, no
 * definition of the function). */
int asm_lex_probe(const char *text, const char *name, int probe, struct toks *out,
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

/* Describe token t of text for an error message. */
void asm_lex_tok_desc(char *d, size_t n, const char *text, const struct tok *t)
{
	size_t len = t->len > 40 ? 40 : t->len;
	const char *s = text + t->off;

	if (len == 1 && s[0] == '\n')
		snprintf(d, n, "end of line");
	else
		snprintf(d, n, "'%.*s'", (int)len, s);
}
