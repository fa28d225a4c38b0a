/* pattern.c: reads pattern files (header directives, then a body template) into trees. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "pattern.h"
#include "util.h"

/* The file being parsed, split into lines. */
struct reader {
	const char *path;
	char **lines;   /* nlines lines without their newline */
	int nlines;
	int at;         /* next line index (0-based) */
};

#define ERRLEN 256

static void die_at(const struct reader *r, int line, const char *fmt, const char *arg)
{
	char msg[ERRLEN];

	snprintf(msg, sizeof(msg), fmt, arg);
	fatal("%s:%d: %s", r->path, line, msg);
}

static struct expr *parse_expr_at(const struct reader *r, int line, const char *s)
{
	char err[ERRLEN];
	struct expr *e = expr_parse(s, err, sizeof(err));

	if (!e) {
		char msg[2 * ERRLEN];
		snprintf(msg, sizeof(msg), "bad expression \"%s\": %s", s, err);
		die_at(r, line, "%s", msg);
	}
	return e;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Header values may end in a '#' comment. */
static char *strip_comment(char *s)
{
	char *h = strchr(s, '#');

	if (h)
		*h = '\0';
	return trim(s);
}

static void add_part(struct node *n, struct part p)
{
	n->parts = xrealloc(n->parts, (size_t)(n->nparts + 1) * sizeof(*n->parts));
	n->parts[n->nparts++] = p;
}

/* Split "lo, hi[, odd]" at top-level commas into at most 3 pieces. */
static int split_args(char *s, char **out, int max)
{
	int n = 0, depth = 0;

	out[n++] = s;
	for (; *s; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')')
			depth--;
		else if (*s == ',' && depth == 0) {
			if (n == max)
				return -1;
			*s = '\0';
			out[n++] = s + 1;
		}
	}
	return n;
}

/* Parse one body text line into literal text, {{E}}, $K(...) and $S(...) parts. */
static void parse_text_line(const struct reader *r, int line, const char *s, struct node *n)
{
	struct buf lit = {0};

	while (*s) {
		if (s[0] == '{' && s[1] == '{') {
			const char *end = strstr(s + 2, "}}");
			if (!end)
				die_at(r, line, "%s", "unterminated {{");
			if (lit.len) {
				add_part(n, (struct part){.kind = PART_TEXT, .text = xstrdup(lit.p)});
				buf_reset(&lit);
			}
			char *in = xstrndup(s + 2, (size_t)(end - s - 2));
			add_part(n, (struct part){.kind = PART_EXPR, .e = parse_expr_at(r, line, in)});
			free(in);
			s = end + 2;
			continue;
		}
		if (s[0] == '$' && (s[1] == 'K' || s[1] == 'S') && s[2] == '(') {
			int depth = 1;
			const char *p = s + 3;
			while (*p && depth) {
				depth += *p == '(';
				depth -= *p == ')';
				p++;
			}
			if (depth)
				die_at(r, line, "unterminated $%s(", s[1] == 'K' ? "K" : "S");
			char *in = xstrndup(s + 3, (size_t)(p - s - 4));
			char *args[3];
			int na = split_args(in, args, 3);
			struct part part = {.kind = s[1] == 'K' ? PART_K : PART_S};
			if (na < 2 || (na == 3 && (part.kind == PART_S || strcmp(trim(args[2]), "odd"))))
				die_at(r, line, "%s", "expected $K(lo, hi), $K(lo, hi, odd) or $S(lo, hi)");
			part.e = parse_expr_at(r, line, args[0]);
			part.hi = parse_expr_at(r, line, args[1]);
			part.odd = na == 3;
			free(in);
			if (lit.len) {
				add_part(n, (struct part){.kind = PART_TEXT, .text = xstrdup(lit.p)});
				buf_reset(&lit);
			}
			add_part(n, part);
			s = p;
			continue;
		}
		buf_putc(&lit, *s++);
	}
	buf_putc(&lit, '\n');
	add_part(n, (struct part){.kind = PART_TEXT, .text = xstrdup(lit.p)});
	buf_free(&lit);
}

static void push_node(struct node **v, int *n, struct node x)
{
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof(**v));
	(*v)[(*n)++] = x;
}

/* The directive word of line s ("for", "if", ...) or NULL when s is a text line. */
static const char *directive(const char *s, const char **rest)
{
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '@')
		return NULL;
	s++;
	static const char *const words[] = {"for", "if", "elif", "else", "end", "let", "#"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);
		if (strncmp(s, words[i], n) == 0 &&
		    (s[n] == '\0' || isspace((unsigned char)s[n]) || words[i][0] == '#')) {
			*rest = s + n;
			return words[i];
		}
	}
	*rest = s;
	return "?";
}

/* Parse body lines until a line with a closing directive (@end/@elif/@else) or the end of
 * the file; returns that directive ("" at end of file) with the reader on that line. */
static const char *parse_block(struct reader *r, struct node **out, int *nout)
{
	while (r->at < r->nlines) {
		int line = r->at + 1;
		const char *rest;
		const char *d = directive(r->lines[r->at], &rest);
		if (!d) {
			struct node n = {.kind = NODE_TEXT, .line = line};
			parse_text_line(r, line, r->lines[r->at], &n);
			push_node(out, nout, n);
			r->at++;
			continue;
		}
		if (!strcmp(d, "end") || !strcmp(d, "elif") || !strcmp(d, "else"))
			return d;
		r->at++;
		char *args = xstrdup(rest);
		char *a = trim(args);
		if (!strcmp(d, "#")) {
			free(args);
			continue;
		}
		if (!strcmp(d, "?"))
			die_at(r, line, "unknown directive \"%s\"", trim(r->lines[line - 1]));
		if (!strcmp(d, "let")) {
			char *eq = strchr(a, '=');
			if (!eq)
				die_at(r, line, "%s", "expected @let name = expression");
			*eq = '\0';
			struct node n = {.kind = NODE_LET, .line = line, .var = xstrdup(trim(a))};
			n.e = parse_expr_at(r, line, eq + 1);
			push_node(out, nout, n);
		} else if (!strcmp(d, "for")) {
			/* @for v LO HI: LO and HI are separated by whitespace outside parentheses. */
			char *v = a;
			char *sp = v;
			while (*sp && !isspace((unsigned char)*sp))
				sp++;
			if (!*sp)
				die_at(r, line, "%s", "expected @for name lo hi");
			*sp++ = '\0';
			sp = trim(sp);
			int depth = 0;
			char *cut = NULL;
			for (char *q = sp; *q; q++) {
				depth += *q == '(';
				depth -= *q == ')';
				if (depth == 0 && isspace((unsigned char)*q)) {
					cut = q;
					break;
				}
			}
			if (!cut)
				die_at(r, line, "%s", "expected @for name lo hi (write expressions without spaces or in parentheses)");
			*cut = '\0';
			struct node n = {.kind = NODE_FOR, .line = line, .var = xstrdup(v)};
			n.e = parse_expr_at(r, line, sp);
			n.hi = parse_expr_at(r, line, cut + 1);
			const char *close = parse_block(r, &n.body, &n.nbody);
			if (strcmp(close, "end"))
				die_at(r, line, "%s", *close ? "@for closed by @elif/@else" : "@for without @end");
			r->at++;
			push_node(out, nout, n);
		} else { /* if */
			struct node n = {.kind = NODE_IF, .line = line};
			struct expr *cond = parse_expr_at(r, line, a);
			for (;;) {
				struct branch b = {.cond = cond};
				const char *close = parse_block(r, &b.body, &b.nbody);
				n.br = xrealloc(n.br, (size_t)(n.nbr + 1) * sizeof(*n.br));
				n.br[n.nbr++] = b;
				if (!*close)
					die_at(r, line, "%s", "@if without @end");
				int cl = r->at + 1;
				const char *crest;
				directive(r->lines[r->at], &crest);
				r->at++;
				if (!strcmp(close, "end"))
					break;
				if (!cond)
					die_at(r, cl, "%s", "@elif or @else after @else");
				if (!strcmp(close, "else")) {
					cond = NULL;
				} else {
					char *c = xstrdup(crest);
					cond = parse_expr_at(r, cl, trim(c));
					free(c);
				}
			}
			push_node(out, nout, n);
		}
		free(args);
	}
	return "";
}

static int64_t parse_int(const struct reader *r, int line, const char *s)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);

	if (errno || end == s || *trim(end))
		die_at(r, line, "expected an integer, got \"%s\"", s);
	return v;
}

/* Header: "@key value" lines up to @body. Blank lines and '#' comment lines are skipped. */
static void parse_header(struct reader *r, struct pattern *p)
{
	for (; r->at < r->nlines; r->at++) {
		int line = r->at + 1;
		char *l = trim(r->lines[r->at]);
		if (!*l || *l == '#')
			continue;
		if (*l != '@')
			die_at(r, line, "expected a header directive, got \"%s\"", l);
		char *key = l + 1;
		char *val = key;
		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val)
			*val++ = '\0';
		if (!strcmp(key, "body")) {
			p->body_line = line;
			r->at++;
			return;
		}
		if (!strcmp(key, "title")) {
			p->title = xstrdup(trim(val));
			continue;
		}
		val = strip_comment(val);
		if (!strcmp(key, "pattern")) {
			char *name = val;
			while (*name && !isspace((unsigned char)*name))
				name++;
			if (*name)
				*name++ = '\0';
			name = trim(name);
			if (val[0] != 'P' || !isdigit((unsigned char)val[1]) ||
			    !isdigit((unsigned char)val[2]) || val[3] || !*name)
				die_at(r, line, "%s", "expected @pattern PNN name");
			for (char *c = name; *c; c++)
				if (!isalnum((unsigned char)*c) && *c != '_')
					die_at(r, line, "pattern name \"%s\" must be [A-Za-z0-9_]", name);
			p->id = xstrdup(val);
			p->name = xstrdup(name);
		} else if (!strcmp(key, "variants")) {
			int64_t v = parse_int(r, line, val);
			if (v < 1 || v > 999)
				die_at(r, line, "%s", "@variants must be 1..999");
			p->variants = (int)v;
		} else if (!strcmp(key, "lines") || !strcmp(key, "knob")) {
			char *f[3] = {0};
			int nf = 0;
			for (char *t = strtok(val, " \t"); t && nf < 3; t = strtok(NULL, " \t"))
				f[nf++] = t;
			if (!strcmp(key, "lines")) {
				if (nf != 2)
					die_at(r, line, "%s", "expected @lines lo hi");
				p->lines_lo = (int)parse_int(r, line, f[0]);
				p->lines_hi = (int)parse_int(r, line, f[1]);
				continue;
			}
			if (nf != 3)
				die_at(r, line, "%s", "expected @knob name lo hi");
			struct knob k = {xstrdup(f[0]), parse_int(r, line, f[1]), parse_int(r, line, f[2])};
			if (k.lo > k.hi)
				die_at(r, line, "knob %s has lo > hi", k.name);
			p->knobs = xrealloc(p->knobs, (size_t)(p->nknobs + 1) * sizeof(*p->knobs));
			p->knobs[p->nknobs++] = k;
		} else if (!strcmp(key, "require")) {
			p->requires = xrealloc(p->requires, (size_t)(p->nrequires + 1) * sizeof(*p->requires));
			p->require_lines = xrealloc(p->require_lines, (size_t)(p->nrequires + 1) * sizeof(int));
			p->require_lines[p->nrequires] = line;
			p->requires[p->nrequires++] = parse_expr_at(r, line, val);
		} else {
			die_at(r, line, "unknown header directive @%s", key);
		}
	}
	die_at(r, r->nlines, "%s", "missing @body");
}

struct pattern *pattern_load(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);

	if (!text)
		fatal("cannot read pattern file %s:", path);
	struct pattern *p = pattern_parse(path, text, len);
	free(text);
	return p;
}

struct pattern *pattern_parse(const char *path, const char *text, size_t len)
{
	if (memchr(text, '\0', len))
		fatal("%s: contains a NUL byte", path);
	struct reader r = {.path = path};
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		if (n && s[n - 1] == '\r')
			fatal("%s:%d: CRLF line endings are not accepted", path, r.nlines + 1);
		r.lines = xrealloc(r.lines, (size_t)(r.nlines + 1) * sizeof(char *));
		r.lines[r.nlines++] = xstrndup(s, n);
		s += n + (nl != NULL);
	}
	struct pattern *p = xcalloc(1, sizeof(*p));
	p->path = xstrdup(path);
	const char *base = strrchr(path, '/');
	struct buf disp = {0};
	buf_printf(&disp, "patterns/%s", base ? base + 1 : path);
	p->display = disp.p;
	parse_header(&r, p);
	if (!p->id)
		fatal("%s: missing @pattern", path);
	if (!p->variants)
		fatal("%s: missing @variants", path);
	if (!p->title)
		p->title = xstrdup(p->name);
	const char *close = parse_block(&r, &p->body, &p->nbody);
	if (*close)
		die_at(&r, r.at + 1, "@%s without a matching @if/@for", close);
	if (!p->nbody)
		fatal("%s: empty @body", path);
	for (int i = 0; i < r.nlines; i++)
		free(r.lines[i]);
	free(r.lines);
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int wanted(const char *only, const char *id)
{
	if (!only)
		return 1;
	size_t n = strlen(id);
	for (const char *s = only; *s;) {
		const char *c = strchr(s, ',');
		size_t m = c ? (size_t)(c - s) : strlen(s);
		if (m == n && !strncmp(s, id, n))
			return 1;
		s += m + (c != NULL);
	}
	return 0;
}

struct pattern **pattern_load_dir(const char *dir, const char *only, int *npatterns)
{
	DIR *d = opendir(dir);

	if (!d)
		fatal("cannot open patterns directory %s:", dir);
	char **names = NULL;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".tpl")) {
			names = xrealloc(names, (size_t)(n + 1) * sizeof(char *));
			names[n++] = xstrdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), cmp_str);
	struct pattern **ps = NULL;
	int np = 0;
	for (int i = 0; i < n; i++) {
		/* Files are named by id (PNN_name.tpl): skip unwanted ones unread, so one broken
		 * file does not stop work on the others. */
		if (only && strlen(names[i]) > 3 && names[i][3] == '_') {
			char id[4] = {names[i][0], names[i][1], names[i][2], 0};
			if (!wanted(only, id)) {
				free(names[i]);
				continue;
			}
		}
		struct buf path = {0};
		buf_printf(&path, "%s/%s", dir, names[i]);
		struct pattern *p = pattern_load(path.p);
		buf_free(&path);
		free(names[i]);
		if (!wanted(only, p->id))
			continue;
		for (int j = 0; j < np; j++)
			if (!strcmp(ps[j]->id, p->id))
				fatal("%s: pattern id %s already used by %s", p->path, p->id, ps[j]->path);
		p->index = np;
		ps = xrealloc(ps, (size_t)(np + 1) * sizeof(*ps));
		ps[np++] = p;
	}
	free(names);
	if (np == 0)
		fatal("no pattern files (*.tpl)%s in %s", only ? " matching --only" : "", dir);
	*npatterns = np;
	return ps;
}
