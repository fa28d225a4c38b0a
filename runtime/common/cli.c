/* cli.c: the option-table parser and --help printer shared by the frontload programs. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errbuf.h"

#define CLI_HELP_WIDTH 90   /* --help lines end before this column */
#define CLI_FLAG_MIN 26     /* the "--name METAVAR" column is at least this wide ... */
#define CLI_FLAG_MAX 32     /* ... and at most this (a longer one pushes its text right) */

static void *cli_field(const struct fl_cli_opt *o, void *obj)
{
	return (char *)obj + o->off;
}

static const void *cli_cfield(const struct fl_cli_opt *o, const void *obj)
{
	return (const char *)obj + o->off;
}

/* Largest value an unsigned field of size bytes holds; 0 for a size that is no integer. */
static uint64_t cli_size_max(size_t size)
{
	switch (size) {
	case 1: return UINT8_MAX;
	case 2: return UINT16_MAX;
	case 4: return UINT32_MAX;
	case 8: return UINT64_MAX;
	default: return 0;
	}
}

/* Is o's field the right size for its type? */
static int cli_size_ok(const struct fl_cli_opt *o)
{
	switch (o->type) {
	case FL_CLI_STR: return o->size == sizeof(const char *);
	case FL_CLI_UINT:
	case FL_CLI_BYTES: return cli_size_max(o->size) != 0 && o->hi <= cli_size_max(o->size);
	case FL_CLI_REAL: return o->size == sizeof(double);
	case FL_CLI_FLAG: return o->size == sizeof(int);
	}
	return 0;
}

/* The decimal digits at *p (at least one) into *v, *p moved past them; -1 when there are
 * none or they overflow. Leading zeros are fine, however many. */
static int cli_digits(const char **p, uint64_t *v)
{
	uint64_t x = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return 0;
}

int fl_cli_parse_uint(const char *text, uint64_t *v)
{
	uint64_t x;

	if (cli_digits(&text, &x) != 0 || *text != 0)
		return -1;
	*v = x;
	return 0;
}

int fl_cli_parse_bytes(const char *text, uint64_t *v)
{
	const char *s = text;
	uint64_t x, mul = 1;

	if (cli_digits(&s, &x) != 0)
		return -1;
	if (*s != 0) {
		switch (*s++) {
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'm': case 'M': mul = 1ull << 20; break;
		case 'g': case 'G': mul = 1ull << 30; break;
		default: return -1;
		}
		if (strcmp(s, "iB") == 0 || strcmp(s, "B") == 0)
			s += strlen(s);
	}
	if (*s != 0 || x > UINT64_MAX / mul)
		return -1;
	*v = x * mul;
	return 0;
}

/* v in bytes, with the largest k/M/G suffix that divides it ("64M", "1000", "0"). */
static void cli_format_bytes(uint64_t v, char *out, size_t len)
{
	static const char units[] = "GMk";
	for (int i = 0; i < 3; i++) {
		uint64_t unit = 1ull << (10 * (3 - i));
		if (v != 0 && v % unit == 0) {
			snprintf(out, len, "%llu%c", (unsigned long long)(v / unit), units[i]);
			return;
		}
	}
	snprintf(out, len, "%llu", (unsigned long long)v);
}

static void cli_store_uint(const struct fl_cli_opt *o, void *obj, uint64_t v)
{
	void *f = cli_field(o, obj);
	switch (o->size) {
	case 1: *(uint8_t *)f = (uint8_t)v; break;
	case 2: *(uint16_t *)f = (uint16_t)v; break;
	case 4: *(uint32_t *)f = (uint32_t)v; break;
	default: *(uint64_t *)f = v; break;
	}
}

int fl_cli_set(const struct fl_cli_opt *o, const char *text, void *obj, char *err,
	size_t errlen)
{
	if (!cli_size_ok(o)) {
		fl_errf(err, errlen, "--%s: option table: the field does not fit the type or "
			"range", o->name);
		return -1;
	}
	switch (o->type) {
	case FL_CLI_FLAG:
		*(int *)cli_field(o, obj) = 1;
		return 0;
	case FL_CLI_STR:
		if (*text == 0) {
			fl_errf(err, errlen, "--%s: empty value", o->name);
			return -1;
		}
		*(const char **)cli_field(o, obj) = text;
		return 0;
	case FL_CLI_UINT: {
		uint64_t v;
		if (fl_cli_parse_uint(text, &v) != 0 || v < o->lo || v > o->hi) {
			fl_errf(err, errlen, "--%s: expected an integer in %llu..%llu, got \"%s\"",
				o->name, (unsigned long long)o->lo, (unsigned long long)o->hi, text);
			return -1;
		}
		cli_store_uint(o, obj, v);
		return 0;
	}
	case FL_CLI_BYTES: {
		uint64_t v;
		if (fl_cli_parse_bytes(text, &v) != 0 || v < o->lo || v > o->hi) {
			char lo[32], hi[32];
			cli_format_bytes(o->lo, lo, sizeof lo);
			cli_format_bytes(o->hi, hi, sizeof hi);
			fl_errf(err, errlen, "--%s: expected a byte count (k, M, G: x 1024) in "
				"%s..%s, got \"%s\"", o->name, lo, hi, text);
			return -1;
		}
		cli_store_uint(o, obj, v);
		return 0;
	}
	case FL_CLI_REAL: {
		char *end;
		errno = 0;
		double v = strtod(text, &end);
		if (errno != 0 || end == text || *end != 0 || !isfinite(v) || v < o->rlo ||
		    v > o->rhi) {
			fl_errf(err, errlen, "--%s: expected a number in %g..%g, got \"%s\"",
				o->name, o->rlo, o->rhi, text);
			return -1;
		}
		*(double *)cli_field(o, obj) = o->div != 0 ? v / o->div : v;
		return 0;
	}
	}
	fl_errf(err, errlen, "--%s: option table: unknown type", o->name);
	return -1;
}

const struct fl_cli_opt *fl_cli_find(const struct fl_cli *cli, const char *name)
{
	for (size_t i = 0; i < cli->nopts; i++)
		if (strcmp(cli->opts[i].name, name) == 0)
			return &cli->opts[i];
	return NULL;
}

int fl_cli_take_operands(const struct fl_cli *cli, int *argc, char **argv, const char **out,
	int max)
{
	int n = 1, nops = 0;

	for (int k = 0; k < max; k++)
		out[k] = NULL;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-') {
			if (nops < max)
				out[nops] = a;
			nops++;
			continue;
		}
		argv[n++] = argv[i];
		const struct fl_cli_opt *o = a[1] == '-' && !strchr(a, '=') ?
			fl_cli_find(cli, a + 2) : NULL;
		if (o && o->type != FL_CLI_FLAG && i + 1 < *argc)
			argv[n++] = argv[++i];
	}
	argv[n] = NULL;
	*argc = n;
	return nops;
}

/* The option whose name is the first len bytes of name, or NULL. */
static const struct fl_cli_opt *cli_lookup(const struct fl_cli *cli, const char *name,
	size_t len)
{
	for (size_t i = 0; i < cli->nopts; i++)
		if (strlen(cli->opts[i].name) == len && strncmp(cli->opts[i].name, name, len) == 0)
			return &cli->opts[i];
	return NULL;
}

/* The value of o at argv[*i] (val: the text after "=", or NULL), with *i moved past a
 * separate value; -1 with err when a flag has one or a value is missing. */
static int cli_value(const struct fl_cli_opt *o, const char **val, int argc, char **argv,
	int *i, char *err, size_t errlen)
{
	if (o->type == FL_CLI_FLAG && *val) {
		fl_errf(err, errlen, "--%s takes no value", o->name);
		return -1;
	}
	if (o->type != FL_CLI_FLAG && !*val) {
		if (*i + 1 >= argc) {
			fl_errf(err, errlen, "--%s needs a value (%s)", o->name,
				o->metavar ? o->metavar : "VALUE");
			return -1;
		}
		*val = argv[++*i];
	}
	return 0;
}

/* A forwarded flag f: its value checked by parsing it into a scratch copy of the other
 * program's field (only the range matters here), then handed to fwd_take. */
static int cli_forward(const struct fl_cli *cli, const struct fl_cli_opt *f, const char *val,
	int argc, char **argv, int *i, void *obj, char *err, size_t errlen)
{
	if (cli_value(f, &val, argc, argv, i, err, errlen) != 0)
		return -1;
	void *scratch = calloc(1, f->off + f->size);
	if (scratch == NULL) {
		fl_errf(err, errlen, "--%s: out of memory", f->name);
		return -1;
	}
	int rc = fl_cli_set(f, val ? val : "", scratch, err, errlen);
	free(scratch);
	if (rc != 0)
		return -1;
	return cli->fwd_take(obj, f, f->type == FL_CLI_FLAG ? NULL : val, err, errlen);
}

int fl_cli_parse(const struct fl_cli *cli, int argc, char **argv, void *obj, char *err,
	size_t errlen)
{
	unsigned char given[FL_CLI_MAX_OPTS] = { 0 };

	if (cli->nopts > FL_CLI_MAX_OPTS) {
		fl_errf(err, errlen, "option table: %zu options (at most %d)", cli->nopts,
			FL_CLI_MAX_OPTS);
		return -1;
	}
	for (size_t i = 0; i < cli->nopts; i++)
		if (cli->opts[i].def && fl_cli_set(&cli->opts[i], cli->opts[i].def, obj, err,
		    errlen) != 0)
			return -1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return FL_CLI_HELP;
		if (a[0] != '-') {
			fl_errf(err, errlen, "unexpected argument \"%s\"", a);
			return -1;
		}
		size_t nlen = a[1] == '-' ? strcspn(a + 2, "=") : 0;
		const struct fl_cli_opt *o = nlen ? cli_lookup(cli, a + 2, nlen) : NULL;
		const struct fl_cli_opt *f = o == NULL && nlen && cli->fwd && cli->fwd_take ?
			cli_lookup(cli->fwd, a + 2, nlen) : NULL;
		if (f) {
			if (cli_forward(cli, f, a[2 + nlen] == '=' ? a + 3 + nlen : NULL, argc,
			    argv, &i, obj, err, errlen) != 0)
				return -1;
			continue;
		}
		if (o == NULL) {
			fl_errf(err, errlen, "unknown option \"%.*s\"", (int)(nlen ? nlen + 2 :
				strlen(a)), a);
			return -1;
		}
		const char *val = a[2 + nlen] == '=' ? a + 3 + nlen : NULL;
		if (cli_value(o, &val, argc, argv, &i, err, errlen) != 0)
			return -1;
		if (fl_cli_set(o, val ? val : "", obj, err, errlen) != 0)
			return -1;
		given[o - cli->opts] = 1;
	}

	const struct fl_cli_opt *alt = cli->alt_flag ? fl_cli_find(cli, cli->alt_flag) : NULL;
	if (alt && alt->type == FL_CLI_FLAG && fl_cli_uint(alt, obj))
		for (size_t i = 0; i < cli->nopts; i++)
			if (!given[i] && cli->opts[i].alt &&
			    fl_cli_set(&cli->opts[i], cli->opts[i].alt, obj, err, errlen) != 0)
				return -1;
	return 0;
}

/* Print text as words (the cursor is at column col), breaking lines before
 * CLI_HELP_WIDTH; continuation lines start at column indent. */
static void cli_wrap(FILE *fp, const char *text, int col, int indent)
{
	int fresh = 1;

	for (const char *p = text + strspn(text, " \n"); *p; p += strspn(p, " \n")) {
		int len = (int)strcspn(p, " \n");
		if (!fresh && col + 1 + len > CLI_HELP_WIDTH) {
			fprintf(fp, "\n%*s", indent, "");
			col = indent;
			fresh = 1;
		}
		col += fprintf(fp, "%s%.*s", fresh ? "" : " ", len, p);
		fresh = 0;
		p += len;
	}
	fputc('\n', fp);
}

/* "HEADING:", wrapped like the help texts. */
static void cli_heading(FILE *fp, const char *heading)
{
	char text[512];

	snprintf(text, sizeof text, "%s:", heading);
	cli_wrap(fp, text, 0, 2);
}

/* "--name METAVAR" of o into out. */
static int cli_flag_text(const struct fl_cli_opt *o, char *out, size_t len)
{
	return snprintf(out, len, "--%s%s%s", o->name, o->metavar ? " " : "",
		o->metavar ? o->metavar : "");
}

/* The widest "--name METAVAR" of cli's options, within CLI_FLAG_MIN..CLI_FLAG_MAX. */
static int cli_width(const struct fl_cli *cli, int width)
{
	char flag[128];

	for (size_t i = 0; i < cli->nopts; i++) {
		int n = cli_flag_text(&cli->opts[i], flag, sizeof flag);
		if (n > width)
			width = n < CLI_FLAG_MAX ? n : CLI_FLAG_MAX;
	}
	return width;
}

/* One entry per option of cli, in columns of width. */
static void cli_help_opts(FILE *fp, const struct fl_cli *cli, int width)
{
	char flag[128], note[256], text[1024];

	for (size_t i = 0; i < cli->nopts; i++) {
		const struct fl_cli_opt *o = &cli->opts[i];
		const char *alt = cli->alt_flag ? o->alt : NULL;
		if (o->section)
			cli_heading(fp, o->section);
		if (o->def && alt)
			snprintf(note, sizeof note, " [%s; --%s %s]", o->def, cli->alt_flag, alt);
		else if (o->def || alt)
			snprintf(note, sizeof note, " [%s%s%s%s]", alt ? "--" : "",
				alt ? cli->alt_flag : "", alt ? " " : "", alt ? alt : o->def);
		else
			note[0] = 0;
		snprintf(text, sizeof text, "%s%s", o->help, note);
		cli_flag_text(o, flag, sizeof flag);
		cli_wrap(fp, text, fprintf(fp, "  %-*s ", width, flag), width + 3);
	}
}

void fl_cli_help(FILE *fp, const struct fl_cli *cli)
{
	int width = cli_width(cli, CLI_FLAG_MIN);

	if (cli->fwd)
		width = cli_width(cli->fwd, width);
	cli_help_opts(fp, cli, width);
	if (cli->fwd) {
		cli_heading(fp, cli->fwd_title ? cli->fwd_title : "forwarded");
		cli_help_opts(fp, cli->fwd, width);
	}
	cli_wrap(fp, "this text", fprintf(fp, "  %-*s ", width, "--help"), width + 3);
}

uint64_t fl_cli_uint(const struct fl_cli_opt *o, const void *obj)
{
	const void *f = cli_cfield(o, obj);
	if (o->type == FL_CLI_FLAG)
		return *(const int *)f != 0;
	switch (o->size) {
	case 1: return *(const uint8_t *)f;
	case 2: return *(const uint16_t *)f;
	case 4: return *(const uint32_t *)f;
	default: return *(const uint64_t *)f;
	}
}

double fl_cli_real(const struct fl_cli_opt *o, const void *obj)
{
	return *(const double *)cli_cfield(o, obj);
}

const char *fl_cli_str(const struct fl_cli_opt *o, const void *obj)
{
	return *(const char *const *)cli_cfield(o, obj);
}

int fl_cli_rates(const char *text, double *out, size_t max)
{
	size_t n = 0;

	for (const char *p = text; *p; p += *p == ',') {
		size_t len = strcspn(p, ",");
		char item[64], *end;
		double mul = 1;
		if (len == 0)
			continue;  /* "100,,200": an empty item is skipped */
		if (len >= sizeof item || n >= max)
			return -1;
		memcpy(item, p, len);
		item[len] = 0;
		p += len;
		if (item[len - 1] == 'k' || item[len - 1] == 'K') {
			item[len - 1] = 0;
			mul = 1000;
		}
		errno = 0;
		double v = strtod(item, &end) * mul;  /* "1e308k" overflows here: refused */
		if (errno != 0 || end == item || *end != 0 || !isfinite(v) || !(v > 0))
			return -1;
		out[n++] = v;
	}
	return n > 0 ? (int)n : -1;
}

int fl_cli_hostport(const char *text, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon = strrchr(text, ':'), *h = text;
	uint64_t p;

	if (colon == NULL)
		return -1;
	size_t hl = (size_t)(colon - text);
	if (hl >= 2 && text[0] == '[' && text[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= hostlen || fl_cli_parse_uint(colon + 1, &p) != 0 || p == 0 ||
	    p > 65535)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = (uint16_t)p;
	return 0;
}
