/* test_cli.c: the shared option-table parser and --help printer (runtime/common/cli.c). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli.h"
#include "errbuf.h"

/* A program's options, with one field of every kind the programs use. */
struct t_opts {
	const char *host;
	uint64_t count;
	unsigned small;
	uint8_t tiny;
	int64_t maybe;        /* -1: not given (no default in the table) */
	uint64_t bytes;
	double ratio;
	double tolerance;     /* given in percent, stored as a fraction */
	int verbose;
	int quick;
};

#define FL_CLI_OBJ struct t_opts
static const struct fl_cli_opt t_table[] = {
	FL_OPT_STR("host", host, "ADDR", "127.0.0.1", "address to listen on"),
	FL_OPT_UINT("count", count, 1, 10, "N", "3", "how many", .alt = "2"),
	FL_OPT_UINT("small", small, 0, 4000000000u, "N", "0", "a 32-bit field"),
	FL_OPT_UINT("tiny", tiny, 0, 255, "N", NULL, "an 8-bit field"),
	FL_OPT_UINT("maybe", maybe, 0, 1000, "N", NULL, "a signed field, -1 when not given"),
	FL_OPT_BYTES("bytes", bytes, 1, 1u << 30, "BYTES", "4M", "a size"),
	FL_OPT_REAL("ratio", ratio, 0, 1, "F", "0.5", "a share, 0..1"),
	FL_OPT_REAL("tolerance", tolerance, 0.1, 100, "PCT", "5", "in percent",
		.div = 100, .alt = "10"),
	FL_OPT_FLAG("verbose", verbose, "say more"),
	FL_OPT_FLAG("quick", quick, "the alternative defaults"),
};
#undef FL_CLI_OBJ
#define T_NOPTS (sizeof t_table / sizeof t_table[0])

static const struct fl_cli t_cli = { .opts = t_table, .nopts = T_NOPTS, .alt_flag = "quick" };

/* Parse a NULL-terminated list of arguments (argv[0] added) into o, from a zeroed struct
 * with maybe = -1. Returns fl_cli_parse's result; err holds the message. */
static int t_parse(struct t_opts *o, char *err, size_t errlen, ...)
{
	char *argv[32] = { "prog" };
	int argc = 1;
	va_list ap;

	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	memset(o, 0, sizeof *o);
	o->maybe = -1;
	err[0] = 0;
	return fl_cli_parse(&t_cli, argc, argv, o, err, errlen);
}

/* Parse one bad value for --flag; the error must name the flag. */
static void t_refused(const char *flag, const char *value, const char *expect)
{
	struct t_opts o;
	char err[256], name[64];

	snprintf(name, sizeof name, "--%s", flag);
	assert_int_equal(t_parse(&o, err, sizeof err, name, value, (char *)NULL), -1);
	if (strstr(err, name) == NULL || strstr(err, expect) == NULL)
		fail_msg("--%s %s: error \"%s\" lacks \"%s\" or \"%s\"", flag, value, err, name,
			expect);
}

static void test_defaults(void **state)
{
	struct t_opts o;
	char err[256];
	(void)state;

	assert_int_equal(t_parse(&o, err, sizeof err, (char *)NULL), 0);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.count, 3);
	assert_int_equal(o.small, 0);
	assert_int_equal(o.maybe, -1);   /* no default: left as the caller set it */
	assert_int_equal(o.bytes, 4u << 20);
	assert_true(o.ratio == 0.5);
	assert_true(o.tolerance > 0.0499 && o.tolerance < 0.0501);
	assert_int_equal(o.verbose, 0);
}

static void test_each_type(void **state)
{
	struct t_opts o;
	char err[256];
	(void)state;

	assert_int_equal(t_parse(&o, err, sizeof err, "--host", "::1", "--count=10",
		"--small", "4000000000", "--tiny", "255", "--maybe", "0", "--bytes", "64KiB",
		"--ratio", "1", "--tolerance=50", "--verbose", (char *)NULL), 0);
	assert_string_equal(o.host, "::1");
	assert_int_equal(o.count, 10);
	assert_int_equal(o.small, 4000000000u);
	assert_int_equal(o.tiny, 255);
	assert_int_equal(o.maybe, 0);
	assert_int_equal(o.bytes, 64u << 10);
	assert_true(o.ratio == 1);
	assert_true(o.tolerance == 0.5);
	assert_int_equal(o.verbose, 1);

	/* A later flag wins; byte suffixes. */
	assert_int_equal(t_parse(&o, err, sizeof err, "--count", "2", "--count", "7",
		"--bytes", "1G", (char *)NULL), 0);
	assert_int_equal(o.count, 7);
	assert_int_equal(o.bytes, 1u << 30);
	assert_int_equal(t_parse(&o, err, sizeof err, "--bytes", "3MB", (char *)NULL), 0);
	assert_int_equal(o.bytes, 3u << 20);
	assert_int_equal(t_parse(&o, err, sizeof err, "--bytes", "1000", (char *)NULL), 0);
	assert_int_equal(o.bytes, 1000);

	/* Getters read back what was stored, whatever the field's size. */
	assert_int_equal(fl_cli_uint(fl_cli_find(&t_cli, "count"), &o), 3);
	assert_int_equal(fl_cli_uint(fl_cli_find(&t_cli, "bytes"), &o), 1000);
	assert_int_equal(fl_cli_uint(fl_cli_find(&t_cli, "verbose"), &o), 0);
	assert_true(fl_cli_real(fl_cli_find(&t_cli, "ratio"), &o) == 0.5);
	assert_string_equal(fl_cli_str(fl_cli_find(&t_cli, "host"), &o), "127.0.0.1");
	assert_null(fl_cli_find(&t_cli, "nope"));
}

static void test_ranges_and_bad_values(void **state)
{
	(void)state;
	t_refused("count", "0", "expected an integer in 1..10, got \"0\"");
	t_refused("count", "11", "1..10");
	t_refused("count", "abc", "1..10");
	t_refused("count", "-1", "1..10");
	t_refused("count", "+5", "1..10");
	t_refused("count", " 5", "1..10");
	t_refused("count", "1.5", "1..10");
	t_refused("count", "1e1", "1..10");
	t_refused("count", "0x5", "1..10");
	t_refused("count", "99999999999999999999999", "1..10");
	t_refused("small", "4000000001", "0..4000000000");
	t_refused("bytes", "0", "byte count");
	t_refused("bytes", "2G", "1..1G");
	t_refused("bytes", "1T", "byte count");
	t_refused("bytes", "4Mb", "byte count");
	t_refused("bytes", "M", "byte count");
	t_refused("bytes", "-4M", "byte count");
	t_refused("ratio", "1.5", "expected a number in 0..1, got \"1.5\"");
	t_refused("ratio", "x", "0..1");
	t_refused("ratio", "nan", "0..1");
	t_refused("ratio", "0.5x", "0..1");
	t_refused("tolerance", "0.01", "0.1..100");
	t_refused("host", "", "empty value");
}

static void test_syntax_errors(void **state)
{
	struct t_opts o;
	char err[256];
	(void)state;

	assert_int_equal(t_parse(&o, err, sizeof err, "--bogus", (char *)NULL), -1);
	assert_string_equal(err, "unknown option \"--bogus\"");
	assert_int_equal(t_parse(&o, err, sizeof err, "--bogus=1", (char *)NULL), -1);
	assert_string_equal(err, "unknown option \"--bogus\"");
	assert_int_equal(t_parse(&o, err, sizeof err, "--cou", "1", (char *)NULL), -1);
	assert_string_equal(err, "unknown option \"--cou\"");   /* no abbreviations */
	assert_int_equal(t_parse(&o, err, sizeof err, "-x", (char *)NULL), -1);
	assert_string_equal(err, "unknown option \"-x\"");
	assert_int_equal(t_parse(&o, err, sizeof err, "extra", (char *)NULL), -1);
	assert_string_equal(err, "unexpected argument \"extra\"");
	assert_int_equal(t_parse(&o, err, sizeof err, "--count", (char *)NULL), -1);
	assert_string_equal(err, "--count needs a value (N)");
	assert_int_equal(t_parse(&o, err, sizeof err, "--verbose=1", (char *)NULL), -1);
	assert_string_equal(err, "--verbose takes no value");
	/* A value may start with "--": it is taken as the value. */
	assert_int_equal(t_parse(&o, err, sizeof err, "--host", "--verbose", (char *)NULL), 0);
	assert_string_equal(o.host, "--verbose");
	assert_int_equal(o.verbose, 0);
	/* No buffer: still refused. */
	char *argv[] = { "prog", "--bogus", NULL };
	assert_int_equal(fl_cli_parse(&t_cli, 2, argv, &o, NULL, 0), -1);
}

static void test_help_request(void **state)
{
	struct t_opts o;
	char err[256];
	(void)state;

	assert_int_equal(t_parse(&o, err, sizeof err, "--help", (char *)NULL), FL_CLI_HELP);
	assert_int_equal(t_parse(&o, err, sizeof err, "-h", (char *)NULL), FL_CLI_HELP);
	/* Flags before --help are checked; what follows it is not. */
	assert_int_equal(t_parse(&o, err, sizeof err, "--count", "5", "--help", "--bogus",
		(char *)NULL), FL_CLI_HELP);
	assert_int_equal(o.count, 5);
	assert_int_equal(t_parse(&o, err, sizeof err, "--count", "50", "--help", (char *)NULL),
		-1);
}

static void test_alt_profile(void **state)
{
	struct t_opts o;
	char err[256];
	(void)state;

	assert_int_equal(t_parse(&o, err, sizeof err, "--quick", (char *)NULL), 0);
	assert_int_equal(o.count, 2);
	assert_true(o.tolerance == 0.1);
	assert_int_equal(o.bytes, 4u << 20);   /* no alt: the default */
	/* A flag given explicitly wins over the alternative default, before or after it. */
	assert_int_equal(t_parse(&o, err, sizeof err, "--count", "9", "--quick",
		"--tolerance", "20", (char *)NULL), 0);
	assert_int_equal(o.count, 9);
	assert_true(o.tolerance == 0.2);
}

static void test_bad_table(void **state)
{
	struct t_opts o = { 0 };
	char err[256];
	(void)state;

	/* A default that does not parse, a range beyond the field, a wrong field size. */
	struct fl_cli_opt bad = t_table[1];
	bad.def = "50";
	struct fl_cli cli = { .opts = &bad, .nopts = 1 };
	char *argv[] = { "prog", NULL };
	assert_int_equal(fl_cli_parse(&cli, 1, argv, &o, err, sizeof err), -1);
	assert_non_null(strstr(err, "--count"));
	bad = t_table[3];
	bad.hi = 256;
	assert_int_equal(fl_cli_set(&bad, "1", &o, err, sizeof err), -1);
	assert_non_null(strstr(err, "option table"));
	bad = t_table[6];
	bad.size = 4;
	assert_int_equal(fl_cli_set(&bad, "1", &o, err, sizeof err), -1);
	assert_non_null(strstr(err, "--ratio"));
}

static void test_help_text(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	(void)state;

	assert_non_null(fp);
	fl_cli_help(fp, &t_cli);
	fclose(fp);
	for (size_t i = 0; i < T_NOPTS; i++) {
		const struct fl_cli_opt *o = &t_table[i];
		char want[128];
		snprintf(want, sizeof want, "  --%s%s%s ", o->name, o->metavar ? " " : "",
			o->metavar ? o->metavar : "");
		if (strstr(text, want) == NULL)
			fail_msg("--help lacks \"%s\":\n%s", want, text);
		if (o->def) {
			snprintf(want, sizeof want, "[%s%s", o->def, o->alt ? ";" : "]");
			if (strstr(text, want) == NULL)
				fail_msg("--help lacks the default \"%s\":\n%s", want, text);
		}
	}
	assert_non_null(strstr(text, "in percent [5; --quick 10]"));
	assert_non_null(strstr(text, "how many [3; --quick 2]"));
	assert_non_null(strstr(text, "  --help"));
	assert_null(strstr(text, "say more ["));   /* flags show no default */
	/* Every line fits in 90 columns. */
	for (char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true(nl - p <= 90);
	}
	free(text);
}

static void test_help_wraps(void **state)
{
	struct t_long {
		const char *s;
	};
#define FL_CLI_OBJ struct t_long
	static const struct fl_cli_opt opts[] = {
		FL_OPT_STR("a-rather-long-flag-name", s, "SOMETHING", "x",
			"one two three four five six seven eight nine ten eleven twelve thirteen "
			"fourteen fifteen sixteen seventeen eighteen nineteen twenty"),
	};
#undef FL_CLI_OBJ
	struct fl_cli cli = { .opts = opts, .nopts = 1 };
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	(void)state;

	fl_cli_help(fp, &cli);
	fclose(fp);
	/* The column widens to the flag (at most 32), and continuation lines line up. */
	const char *second = strchr(text, '\n') + 1;
	assert_int_equal(strspn(second, " "), 2 + 32 + 1);
	assert_non_null(strstr(text, "twenty [x]\n"));
	free(text);
}

static void test_value_helpers(void **state)
{
	uint64_t v;
	double r[4];
	char host[16];
	uint16_t port;
	(void)state;

	assert_int_equal(fl_cli_parse_uint("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(fl_cli_parse_uint("18446744073709551616", &v), -1);
	assert_int_equal(fl_cli_parse_uint("", &v), -1);
	assert_int_equal(fl_cli_parse_bytes("16G", &v), 0);
	assert_true(v == 16ull << 30);
	assert_int_equal(fl_cli_parse_bytes("17179869184G", &v), -1);

	assert_int_equal(fl_cli_rates("500", r, 4), 1);
	assert_true(r[0] == 500);
	assert_int_equal(fl_cli_rates("100,2.5k,,400", r, 4), 3);
	assert_true(r[1] == 2500 && r[2] == 400);
	assert_int_equal(fl_cli_rates("1,2,3,4,5", r, 4), -1);
	assert_int_equal(fl_cli_rates("0", r, 4), -1);
	assert_int_equal(fl_cli_rates("-1", r, 4), -1);
	assert_int_equal(fl_cli_rates("x", r, 4), -1);
	assert_int_equal(fl_cli_rates("k", r, 4), -1);
	assert_int_equal(fl_cli_rates("", r, 4), -1);
	assert_int_equal(fl_cli_rates(",", r, 4), -1);

	assert_int_equal(fl_cli_hostport("127.0.0.1:8080", host, sizeof host, &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 8080);
	assert_int_equal(fl_cli_hostport("[::1]:443", host, sizeof host, &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 443);
	assert_int_equal(fl_cli_hostport("h:0", host, sizeof host, &port), -1);
	assert_int_equal(fl_cli_hostport("h:65536", host, sizeof host, &port), -1);
	assert_int_equal(fl_cli_hostport("h:", host, sizeof host, &port), -1);
	assert_int_equal(fl_cli_hostport(":80", host, sizeof host, &port), -1);
	assert_int_equal(fl_cli_hostport("nohost", host, sizeof host, &port), -1);
	assert_int_equal(fl_cli_hostport("averyveryverylonghostname:80", host, sizeof host,
		&port), -1);
}

/* Operands come out of argv wherever they stand; a value after a flag that takes one stays
 * (even "-3" or one without a dash), as does --name=value; the rest parses unchanged. */
static void test_operands(void **state)
{
	(void)state;
	char *argv[] = { "prog", "A", "--host", "h1", "--verbose", "B", "--count=4", "--tiny",
		"-3", "C", NULL };
	int argc = 10;
	const char *ops[2];

	assert_int_equal(fl_cli_take_operands(&t_cli, &argc, argv, ops, 2), 3);
	assert_string_equal(ops[0], "A");
	assert_string_equal(ops[1], "B");
	assert_int_equal(argc, 7);
	assert_string_equal(argv[1], "--host");
	assert_string_equal(argv[2], "h1");
	assert_string_equal(argv[3], "--verbose");
	assert_string_equal(argv[4], "--count=4");
	assert_string_equal(argv[5], "--tiny");
	assert_string_equal(argv[6], "-3");
	assert_null(argv[7]);

	char *none[] = { "prog", "--verbose", NULL };
	argc = 2;
	assert_int_equal(fl_cli_take_operands(&t_cli, &argc, none, ops, 2), 0);
	assert_null(ops[0]);
	assert_null(ops[1]);
	assert_int_equal(argc, 2);
}

static void test_errf(void **state)
{
	char buf[8];
	(void)state;

	fl_errf(buf, sizeof buf, "%s %d", "abc", 12345);
	assert_string_equal(buf, "abc 123");   /* cut, terminated */
	fl_errf(NULL, 10, "ignored %d", 1);
	fl_errf(buf, 0, "ignored %d", 1);
	assert_string_equal(buf, "abc 123");
}

/* Forwarded flags (frontload-measure's simreq knobs): checked against the other table,
 * handed over as typed, in order; an own option of the same name wins. */
struct t_fwd_got {
	const char *names[8], *vals[8];
	int n;
	int quick;
};

static int t_take(void *obj, const struct fl_cli_opt *o, const char *val, char *err,
	size_t errlen)
{
	struct t_fwd_got *g = obj;

	if (strcmp(o->name, "tiny") == 0) {
		fl_errf(err, errlen, "--tiny refused here");
		return -1;
	}
	g->names[g->n] = o->name;
	g->vals[g->n++] = val;
	return 0;
}

static void test_forwarded(void **state)
{
#define FL_CLI_OBJ struct t_fwd_got
	static const struct fl_cli_opt own[] = {
		FL_OPT_FLAG("quick", quick, "own flag", .section = "mine"),
	};
#undef FL_CLI_OBJ
	struct fl_cli cli = { .opts = own, .nopts = 1, .fwd = &t_cli, .fwd_title = "theirs",
		.fwd_take = t_take };
	struct t_fwd_got g;
	char err[256];
	char *ok[] = { "prog", "--count", "7", "--quick", "--bytes=64k", "--verbose", NULL };
	(void)state;

	memset(&g, 0, sizeof g);
	assert_int_equal(fl_cli_parse(&cli, 6, ok, &g, err, sizeof err), 0);
	assert_int_equal(g.quick, 1);            /* own, not forwarded */
	assert_int_equal(g.n, 3);
	assert_string_equal(g.names[0], "count");
	assert_string_equal(g.vals[0], "7");
	assert_string_equal(g.names[1], "bytes");
	assert_string_equal(g.vals[1], "64k");   /* as typed */
	assert_string_equal(g.names[2], "verbose");
	assert_null(g.vals[2]);                  /* a flag has no value */

	char *range[] = { "prog", "--count", "11", NULL };
	memset(&g, 0, sizeof g);
	assert_int_equal(fl_cli_parse(&cli, 3, range, &g, err, sizeof err), -1);
	assert_string_equal(err, "--count: expected an integer in 1..10, got \"11\"");
	assert_int_equal(g.n, 0);                /* refused before it was handed over */
	char *missing[] = { "prog", "--host", NULL };
	assert_int_equal(fl_cli_parse(&cli, 2, missing, &g, err, sizeof err), -1);
	assert_string_equal(err, "--host needs a value (ADDR)");
	char *flagval[] = { "prog", "--verbose=1", NULL };
	assert_int_equal(fl_cli_parse(&cli, 2, flagval, &g, err, sizeof err), -1);
	assert_string_equal(err, "--verbose takes no value");
	char *taker[] = { "prog", "--count", "2", "--tiny", "3", NULL };
	memset(&g, 0, sizeof g);
	assert_int_equal(fl_cli_parse(&cli, 5, taker, &g, err, sizeof err), -1);
	assert_string_equal(err, "--tiny refused here");
	char *unknown[] = { "prog", "--nope", NULL };
	assert_int_equal(fl_cli_parse(&cli, 2, unknown, &g, err, sizeof err), -1);
	assert_string_equal(err, "unknown option \"--nope\"");

	/* Help: own options under their section, then the forwarded ones, then --help. */
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	fl_cli_help(fp, &cli);
	fclose(fp);
	const char *mine = strstr(text, "mine:\n  --quick"), *theirs = strstr(text, "theirs:\n");
	const char *count = strstr(text, "  --count N"), *help = strstr(text, "  --help");
	assert_true(mine == text);
	assert_true(theirs && count && help && theirs < count && count < help);
	assert_non_null(strstr(text, "how many [3; --quick 2]"));  /* their alt shown */
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_each_type),
		cmocka_unit_test(test_ranges_and_bad_values),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_help_request),
		cmocka_unit_test(test_alt_profile),
		cmocka_unit_test(test_bad_table),
		cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_help_wraps),
		cmocka_unit_test(test_value_helpers),
		cmocka_unit_test(test_errf),
		cmocka_unit_test(test_forwarded),
		cmocka_unit_test(test_operands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
