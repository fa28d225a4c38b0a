/* expr.c: a small recursive-descent parser and evaluator for C-like integer expressions
 * (the {{...}}, @if, @for and @let operands of pattern templates). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "util.h"

enum op {
	OP_NUM, OP_NAME, OP_NEG, OP_NOT, OP_BNOT, OP_MUL, OP_DIV, OP_MOD, OP_ADD, OP_SUB,
	OP_SHL, OP_SHR, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_BAND, OP_XOR, OP_BOR,
	OP_AND, OP_OR, OP_COND, OP_MIN, OP_MAX
};

struct expr {
	enum op op;
	int64_t num;          /* OP_NUM */
	char *name;           /* OP_NAME */
	struct expr *a, *b, *c; /* operands (c: the else arm of ?:) */
};

/* Nesting bound of parentheses, ?: and unary operators: each level is a dozen frames of
 * recursion, and a deep enough line would overflow the stack. Templates use under 10. */
#define EXPR_MAX_DEPTH 200

struct parser {
	const char *s;   /* cursor */
	char *err;       /* error buffer */
	size_t errlen;
	int failed;
	int depth;       /* parse_cond and parse_unary levels open */
};

static struct expr *node(enum op op, struct expr *a, struct expr *b)
{
	struct expr *e = xcalloc(1, sizeof(*e));

	e->op = op;
	e->a = a;
	e->b = b;
	return e;
}

static void skip_ws(struct parser *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static void fail(struct parser *p, const char *what)
{
	if (!p->failed)
		snprintf(p->err, p->errlen, "%s at \"%.20s\"", what, p->s);
	p->failed = 1;
}

/* Consume token tok if it comes next (and is not the start of a longer operator). */
static int accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(p);
	if (strncmp(p->s, tok, n) != 0)
		return 0;
	/* "<" must not match "<<" or "<=", "&" must not match "&&", and so on. */
	if (n == 1 && strchr("<>&|=!", tok[0]) && p->s[1] &&
	    (p->s[1] == tok[0] || p->s[1] == '=') && !(tok[0] == '!' && p->s[1] == '!'))
		return 0;
	p->s += n;
	return 1;
}

static struct expr *parse_cond(struct parser *p);
static struct expr *parse_cond1(struct parser *p);
static struct expr *parse_unary(struct parser *p);

static struct expr *parse_primary(struct parser *p)
{
	skip_ws(p);
	if (accept(p, "(")) {
		struct expr *e = parse_cond(p);
		if (!accept(p, ")"))
			fail(p, "expected ')'");
		return e;
	}
	if (isdigit((unsigned char)*p->s)) {
		char *end;
		struct expr *e = node(OP_NUM, NULL, NULL);
		e->num = (int64_t)strtoull(p->s, &end, 0);
		p->s = end;
		while (*p->s == 'u' || *p->s == 'U' || *p->s == 'l' || *p->s == 'L')
			p->s++;
		return e;
	}
	if (isalpha((unsigned char)*p->s) || *p->s == '_') {
		const char *start = p->s;
		while (isalnum((unsigned char)*p->s) || *p->s == '_')
			p->s++;
		size_t n = (size_t)(p->s - start);
		if ((n == 3 && (!strncmp(start, "min", 3) || !strncmp(start, "max", 3)))) {
			enum op op = start[1] == 'i' ? OP_MIN : OP_MAX;
			if (!accept(p, "(")) {
				fail(p, "expected '(' after min/max");
				return node(OP_NUM, NULL, NULL);
			}
			struct expr *a = parse_cond(p);
			if (!accept(p, ","))
				fail(p, "expected ','");
			struct expr *b = parse_cond(p);
			if (!accept(p, ")"))
				fail(p, "expected ')'");
			return node(op, a, b);
		}
		struct expr *e = node(OP_NAME, NULL, NULL);
		e->name = xstrndup(start, n);
		return e;
	}
	fail(p, "expected a number, a name or '('");
	return node(OP_NUM, NULL, NULL);
}

static struct expr *parse_unary1(struct parser *p)
{
	if (accept(p, "-"))
		return node(OP_NEG, parse_unary(p), NULL);
	if (accept(p, "+"))
		return parse_unary(p);
	if (accept(p, "!"))
		return node(OP_NOT, parse_unary(p), NULL);
	if (accept(p, "~"))
		return node(OP_BNOT, parse_unary(p), NULL);
	return parse_primary(p);
}

static struct expr *parse_unary(struct parser *p)
{
	struct expr *e;

	if (p->depth >= EXPR_MAX_DEPTH) {
		fail(p, "expression nested too deeply");
		return node(OP_NUM, NULL, NULL);
	}
	p->depth++;
	e = parse_unary1(p);
	p->depth--;
	return e;
}

/* Binary operators by precedence level, loosest first (C's table). */
static const struct {
	const char *tok;
	enum op op;
	int level;
} binops[] = {
	{"||", OP_OR, 0}, {"&&", OP_AND, 1}, {"|", OP_BOR, 2}, {"^", OP_XOR, 3},
	{"&", OP_BAND, 4}, {"==", OP_EQ, 5}, {"!=", OP_NE, 5}, {"<=", OP_LE, 6},
	{">=", OP_GE, 6}, {"<<", OP_SHL, 7}, {">>", OP_SHR, 7}, {"<", OP_LT, 6},
	{">", OP_GT, 6}, {"+", OP_ADD, 8}, {"-", OP_SUB, 8}, {"*", OP_MUL, 9},
	{"/", OP_DIV, 9}, {"%", OP_MOD, 9},
};
#define NLEVELS 10

static struct expr *parse_level(struct parser *p, int level)
{
	if (level == NLEVELS)
		return parse_unary(p);
	struct expr *e = parse_level(p, level + 1);
	for (;;) {
		size_t i;
		for (i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
			if (binops[i].level == level && accept(p, binops[i].tok))
				break;
		if (i == sizeof(binops) / sizeof(binops[0]) || p->failed)
			return e;
		e = node(binops[i].op, e, parse_level(p, level + 1));
	}
}

static struct expr *parse_cond(struct parser *p)
{
	if (p->depth >= EXPR_MAX_DEPTH) {
		fail(p, "expression nested too deeply");
		return node(OP_NUM, NULL, NULL);
	}
	p->depth++;
	struct expr *e = parse_cond1(p);
	p->depth--;
	return e;
}

static struct expr *parse_cond1(struct parser *p)
{
	struct expr *e = parse_level(p, 0);

	if (!accept(p, "?"))
		return e;
	struct expr *c = node(OP_COND, e, parse_cond(p));
	if (!accept(p, ":"))
		fail(p, "expected ':'");
	c->c = parse_cond(p);
	return c;
}

struct expr *expr_parse(const char *s, char *err, size_t errlen)
{
	struct parser p = {s, err, errlen, 0, 0};
	struct expr *e = parse_cond(&p);

	skip_ws(&p);
	if (!p.failed && *p.s)
		fail(&p, "unexpected text");
	if (p.failed) {
		expr_free(e);
		return NULL;
	}
	return e;
}

static int lookup(const struct scope *sc, const char *name, int64_t *out)
{
	for (; sc; sc = sc->up)
		for (int i = sc->nnames - 1; i >= 0; i--)
			if (strcmp(sc->names[i], name) == 0) {
				*out = sc->values[i];
				return 0;
			}
	return -1;
}

int expr_eval(const struct expr *e, const struct scope *sc, int64_t *out, char *err,
	      size_t errlen)
{
	int64_t a = 0, b = 0;

	switch (e->op) {
	case OP_NUM:
		*out = e->num;
		return 0;
	case OP_NAME:
		if (lookup(sc, e->name, out) != 0) {
			snprintf(err, errlen, "unknown name '%s'", e->name);
			return -1;
		}
		return 0;
	case OP_AND:
	case OP_OR:
	case OP_COND:
		if (expr_eval(e->a, sc, &a, err, errlen))
			return -1;
		if (e->op == OP_AND && !a) {
			*out = 0;
			return 0;
		}
		if (e->op == OP_OR && a) {
			*out = 1;
			return 0;
		}
		if (e->op == OP_COND)
			return expr_eval(a ? e->b : e->c, sc, out, err, errlen);
		if (expr_eval(e->b, sc, &b, err, errlen))
			return -1;
		*out = b != 0;
		return 0;
	default:
		break;
	}
	if (expr_eval(e->a, sc, &a, err, errlen))
		return -1;
	if (e->b && expr_eval(e->b, sc, &b, err, errlen))
		return -1;
	switch (e->op) {
	case OP_NEG: *out = (int64_t)(0 - (uint64_t)a); break;
	case OP_NOT: *out = !a; break;
	case OP_BNOT: *out = ~a; break;
	case OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); break;
	case OP_DIV:
	case OP_MOD:
		if (b == 0 || (a == INT64_MIN && b == -1)) {
			snprintf(err, errlen, "division by zero or overflow");
			return -1;
		}
		*out = e->op == OP_DIV ? a / b : a % b;
		break;
	case OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); break;
	case OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); break;
	case OP_SHL:
	case OP_SHR:
		if (b < 0 || b > 63) {
			snprintf(err, errlen, "shift count %lld out of range 0..63", (long long)b);
			return -1;
		}
		*out = e->op == OP_SHL ? (int64_t)((uint64_t)a << b) : a >> b;
		break;
	case OP_LT: *out = a < b; break;
	case OP_LE: *out = a <= b; break;
	case OP_GT: *out = a > b; break;
	case OP_GE: *out = a >= b; break;
	case OP_EQ: *out = a == b; break;
	case OP_NE: *out = a != b; break;
	case OP_BAND: *out = a & b; break;
	case OP_XOR: *out = a ^ b; break;
	case OP_BOR: *out = a | b; break;
	case OP_MIN: *out = a < b ? a : b; break;
	case OP_MAX: *out = a > b ? a : b; break;
	default:
		snprintf(err, errlen, "internal: bad operator");
		return -1;
	}
	return 0;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	expr_free(e->c);
	free(e->name);
	free(e);
}
