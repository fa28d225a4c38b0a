/* test_template.c: the generator's template language: expressions, pattern files,
 * variant choice, expansion and per-copy constants. Error paths that exit (fatal) are
 * covered by tests/run.sh. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "expand.h"
#include "expr.h"
#include "pattern.h"
#include "util.h"

static int64_t eval(const char *s, const struct scope *sc)
{
	char err[256];
	int64_t v = 0;
	struct expr *e = expr_parse(s, err, sizeof(err));

	if (!e)
		fail_msg("parse %s: %s", s, err);
	if (expr_eval(e, sc, &v, err, sizeof(err)))
		fail_msg("eval %s: %s", s, err);
	expr_free(e);
	return v;
}

/* 1: C precedence and operators. */
static void test_1_expr_precedence(void **state)
{
	(void)state;
	const char *names[] = {"a", "b"};
	int64_t vals[] = {6, 4};
	struct scope sc = {NULL, names, vals, 2};
	assert_int_equal(eval("1 + 2 * 3", NULL), 7);
	assert_int_equal(eval("(1 + 2) * 3", NULL), 9);
	assert_int_equal(eval("a << 2 | 1", &sc), 25);
	assert_int_equal(eval("a < b || a == 6 && b != 3", &sc), 1);
	assert_int_equal(eval("a <= 6 ? min(a, b) : max(a, b)", &sc), 4);
	assert_int_equal(eval("-a % 4", &sc), -2);
	assert_int_equal(eval("!!a + ~0", &sc), 0);
	assert_int_equal(eval("a & 3 ^ 1", &sc), 3);
	assert_int_equal(eval("0x10 >> 2", NULL), 4);
}

/* 2: parse and evaluation errors come back as messages, never crashes. */
static void test_2_expr_errors(void **state)
{
	(void)state;
	char err[256];
	int64_t v;
	assert_null(expr_parse("1 +", err, sizeof(err)));
	assert_null(expr_parse("(1", err, sizeof(err)));
	assert_null(expr_parse("1 2", err, sizeof(err)));
	assert_null(expr_parse("min(1)", err, sizeof(err)));
	struct expr *e = expr_parse("x / 0", err, sizeof(err));
	assert_non_null(e);
	assert_int_not_equal(expr_eval(e, NULL, &v, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "unknown name 'x'"));
	expr_free(e);
	e = expr_parse("1 / 0", err, sizeof(err));
	assert_int_not_equal(expr_eval(e, NULL, &v, err, sizeof(err)), 0);
	expr_free(e);
	e = expr_parse("1 << 64", err, sizeof(err));
	assert_int_not_equal(expr_eval(e, NULL, &v, err, sizeof(err)), 0);
	expr_free(e);
}

static const char demo[] =
	"# a test pattern\n"
	"@pattern P90 demo_shape\n"
	"@title Demo\n"
	"@variants 4\n"
	"@lines 1 200\n"
	"@knob arms 1 4\n"
	"@knob deep 0 1\n"
	"@require arms + deep <= 4\n"
	"@body\n"
	"\tuint32_t w = FL_W(ctx, $K(0, 255));\n"
	"@for a 0 arms\n"
	"@let twice = a * 2\n"
	"\tFL_YIELD(ctx, {{twice}}, w ^ $K(65536, 1073741823, odd));\n"
	"@end\n"
	"@if deep\n"
	"\tw += $S(3, 9);\n"
	"@elif arms > 2\n"
	"\tw -= 1;\n"
	"@else\n"
	"\tw |= 1;\n"
	"@end\n"
	"\tFL_YIELD(ctx, 1, w);\n";

static char *write_demo(char *dir)
{
	assert_non_null(mkdtemp(dir));
	static char path[256];
	snprintf(path, sizeof(path), "%s/P90_demo.tpl", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(demo, f);
	fclose(f);
	return path;
}

/* 3: header, knob space, @require and the even spread of variants. */
static void test_3_pattern_variants(void **state)
{
	(void)state;
	char dir[] = "/tmp/fl-tpl-XXXXXX";
	const char *path = write_demo(dir);
	struct pattern *p = pattern_load(path);
	assert_string_equal(p->id, "P90");
	assert_string_equal(p->name, "demo_shape");
	assert_int_equal(p->variants, 4);
	assert_int_equal(p->nknobs, 2);
	struct gen_params gp = {.seed = 1, .copies = 3, .line_directives = 0};
	struct variant *vs = expand_pattern(p, &gp);
	/* 7 combinations pass (arms 1..4 x deep 0..1, minus arms=4,deep=1); variants take
	 * combinations floor(i * 7 / 4) = 0, 1, 3, 5: (1,0) (1,1) (2,1) (3,1). */
	assert_int_equal(vs[0].knobs[0], 1);
	assert_int_equal(vs[0].knobs[1], 0);
	assert_int_equal(vs[1].knobs[0], 1);
	assert_int_equal(vs[1].knobs[1], 1);
	assert_int_equal(vs[2].knobs[0], 2);
	assert_int_equal(vs[3].knobs[0], 3);
	/* Constants: the gate salt, the word index, one odd salt per arm. */
	assert_int_equal(vs[3].sk.nconsts, 2 + 3);
	assert_true(vs[3].sk.consts[2].odd);
	unlink(path);
	rmdir(dir);
}

static void squash_numbers(char *s)
{
	char *w = s;
	int in_number = 0;

	for (; *s; s++) {
		int digit = *s >= '0' && *s <= '9';
		if (!digit)
			*w++ = *s;
		else if (!in_number)
			*w++ = '#';
		in_number = digit;
	}
	*w = '\0';
}

/* 4: rendering: same seed same text, copies differ only in constants, draws in range. */
static void test_4_render_copies(void **state)
{
	(void)state;
	char dir[] = "/tmp/fl-tpl-XXXXXX";
	const char *path = write_demo(dir);
	struct pattern *p = pattern_load(path);
	struct gen_params gp = {.seed = 9, .copies = 3, .line_directives = 1};
	struct variant *vs = expand_pattern(p, &gp);
	const struct variant *v = &vs[3];
	int64_t k0[16], k1[16], k0b[16];
	expand_draw(v, &gp, 0, k0);
	expand_draw(v, &gp, 1, k1);
	expand_draw(v, &gp, 0, k0b);
	assert_memory_equal(k0, k0b, sizeof(int64_t) * (size_t)v->sk.nconsts);
	assert_memory_not_equal(k0, k1, sizeof(int64_t) * (size_t)v->sk.nconsts);
	for (int j = 0; j < v->sk.nconsts; j++) {
		assert_true(k0[j] >= v->sk.consts[j].lo && k0[j] <= v->sk.consts[j].hi);
		if (v->sk.consts[j].odd)
			assert_true(k0[j] & 1);
	}
	struct buf a = {0}, b = {0};
	expand_render(v, "fn_a", k0, &a);
	expand_render(v, "fn_a", k1, &b);
	assert_non_null(strstr(a.p, "static FL_EXTRACTOR void fn_a(struct fl_ctx *ctx)"));
	assert_non_null(strstr(a.p, "#line 9 \"patterns/P90_demo.tpl\""));
	assert_non_null(strstr(a.p, "FL_YIELD(ctx, 4, w ^"));
	assert_non_null(strstr(a.p, "w += "));
	assert_string_not_equal(a.p, b.p);
	/* Numbers replaced by '#': the two copies have the same shape. */
	squash_numbers(a.p);
	squash_numbers(b.p);
	assert_string_equal(a.p, b.p);
	buf_free(&a);
	buf_free(&b);
	/* Another seed, other constants. */
	struct gen_params gp2 = gp;
	gp2.seed = 10;
	expand_draw(v, &gp2, 0, k1);
	assert_memory_not_equal(k0, k1, sizeof(int64_t) * (size_t)v->sk.nconsts);
	unlink(path);
	rmdir(dir);
}

/* 5: per-copy draws avoid values that change instruction selection. */
static void test_5_draws_avoid_special_values(void **state)
{
	(void)state;
	char dir[] = "/tmp/fl-tpl-XXXXXX";
	const char *path = write_demo(dir);
	struct pattern *p = pattern_load(path);
	struct gen_params gp = {.seed = 1, .copies = 1, .line_directives = 0};
	struct variant *vs = expand_pattern(p, &gp);
	int64_t k[16];
	for (uint32_t c = 0; c < 20000; c++) {
		expand_draw(&vs[3], &gp, c, k);
		for (int j = 0; j < vs[3].sk.nconsts; j++) {
			uint64_t a = (uint64_t)k[j];
			assert_false(a <= 1);
			assert_false((a & (a - 1)) == 0);
			assert_false(((a + 1) & a) == 0);
		}
	}
	unlink(path);
	rmdir(dir);
}

/* 6: constants print as valid C literals of the right type. */
static void test_6_format_const(void **state)
{
	(void)state;
	char s[32];
	expand_format_const(5, s);
	assert_string_equal(s, "5");
	expand_format_const(2147483648ll, s);
	assert_string_equal(s, "2147483648u");
	expand_format_const(4294967296ll, s);
	assert_string_equal(s, "4294967296ull");
	expand_format_const(-7, s);
	assert_string_equal(s, "(-7)");
}

/* The reference for test 7: set_hulls's probe-hull ends found one value at a time, as it
 * did before its walk skipped runs of taken ends. Values live in two windows (from 0 and
 * below INT64_MAX), each a bitmap of taken ends. */
#define REF_WIN (1 << 18)

static unsigned char *ref_taken(unsigned char *map, int64_t v)
{
	if (v >= 0 && v < REF_WIN)
		return &map[v];
	if (v > INT64_MAX - REF_WIN)
		return &map[REF_WIN + (INT64_MAX - v)];
	fail_msg("value %" PRId64 " outside the reference's windows", v);
	return NULL;
}

static int ref_ok(unsigned char *map, int64_t v, int odd, int avoid, int narrow)
{
	uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int special = a <= 1 || (a & (a - 1)) == 0 || ((a + 1) & a) == 0;

	return (!odd || (v & 1)) && (!avoid || !special) && !(narrow && *ref_taken(map, v));
}

static void ref_hulls(const struct cspec *cs, int n, int64_t *plo, int64_t *phi)
{
	unsigned char *map = calloc(2 * REF_WIN, 1);

	assert_non_null(map);
	for (int j = 0; j < n; j++) {
		const struct cspec *c = &cs[j];
		uint64_t width = (uint64_t)c->hi - (uint64_t)c->lo, rank = 0;
		int narrow = width < 65536, avoid = width >= 63, empty = 0;

		for (int i = 0; i < j; i++)
			rank += cs[i].lo == c->lo && cs[i].hi == c->hi && cs[i].odd == c->odd;
		uint64_t in = (width + 1) / 4 + 2 * rank;  /* margin (span / 4) + rank stagger */
		if (in >= width || in >= width - in)
			in = (width + 1) / 4;
		int64_t lo = (int64_t)((uint64_t)c->lo + in), hi = (int64_t)((uint64_t)c->hi - in);
		while (!ref_ok(map, lo, c->odd, avoid, narrow)) {
			if (lo == hi) {
				empty = 1;
				break;
			}
			lo++;
		}
		while (!empty && !ref_ok(map, hi, c->odd, avoid, narrow))
			hi--;
		plo[j] = empty ? c->lo : lo;
		phi[j] = empty ? c->hi : hi;
		if (narrow) {
			*ref_taken(map, plo[j]) = 1;
			*ref_taken(map, phi[j]) = 1;
		}
	}
	free(map);
}

/* 7: probe hulls of crowded ranges (thousands of constants sharing a few narrow ranges,
 * odd ones, ranges at INT64_MAX) are the ends the one-step walk finds, while the skip
 * links that make the walk near-linear jump over the runs of taken ends. */
static void test_7_hulls_crowded_ranges(void **state)
{
	(void)state;
	static const int64_t widths[] = {1, 2, 7, 62, 63, 64, 255, 4095, 65535, 65536};
	struct buf t = {0};
	uint64_t x = 7;  /* LCG: deterministic template text */

	buf_puts(&t, "@pattern P91 crowd\n@title Crowd\n@variants 1\n@lines 1 100000\n@body\n");
	for (int i = 0; i < 6000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int64_t w = widths[(x >> 33) % 10], lo = (int64_t)((x >> 40) % 4) * 100;
		int top = (x >> 20) % 8 == 0, odd = (x >> 24) % 3 == 0;

		if (top)
			lo = INT64_MAX - w - (int64_t)((x >> 44) % 3);
		buf_printf(&t, "\tv ^= $K(%" PRId64 ", %" PRId64 "%s);\n", lo, lo + w,
			   odd ? ", odd" : "");
	}
	struct pattern *p = pattern_parse("t/P91_crowd.tpl", t.p, t.len);
	struct gen_params gp = {.seed = 3, .copies = 2, .line_directives = 0};
	struct variant *vs = expand_pattern(p, &gp);
	const struct skel *sk = &vs[0].sk;
	int64_t *plo = calloc((size_t)sk->nconsts, sizeof(*plo));
	int64_t *phi = calloc((size_t)sk->nconsts, sizeof(*phi));
	int empty = 0;

	assert_int_equal(sk->nconsts, 6001);  /* the gate salt, then the template's */
	ref_hulls(sk->consts, sk->nconsts, plo, phi);
	for (int j = 0; j < sk->nconsts; j++) {
		assert_int_equal(sk->consts[j].plo, plo[j]);
		assert_int_equal(sk->consts[j].phi, phi[j]);
		empty += plo[j] == sk->consts[j].lo && phi[j] == sk->consts[j].hi;
	}
	assert_true(empty > 1000);  /* ranges so crowded that many fall back to the whole */
	free(plo);
	free(phi);
	buf_free(&t);
}

/* 8: without @require every knob combination passes, and variant i takes combination
 * floor(i * total / variants) without a table of them (a 20 M combination space once
 * cost 160 MB and 20 M decodes). */
static void test_8_knob_space_without_require(void **state)
{
	(void)state;
	static const char text[] =
		"@pattern P92 wide_knobs\n@title Wide knobs\n@variants 7\n@lines 1 100\n"
		"@knob a 0 4999\n@knob b 10 4009\n@body\n\tv ^= {{a + b}};\n";
	struct pattern *p = pattern_parse("t/P92_wide_knobs.tpl", text, sizeof(text) - 1);
	struct gen_params gp = {.seed = 1, .copies = 1, .line_directives = 0};
	struct variant *vs = expand_pattern(p, &gp);
	const int64_t total = 5000 * 4000;

	for (int i = 0; i < 7; i++) {
		int64_t idx = (int64_t)i * total / 7;  /* first knob varies slowest */
		assert_int_equal(vs[i].knobs[0], idx / 4000);
		assert_int_equal(vs[i].knobs[1], 10 + idx % 4000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_expr_precedence),
		cmocka_unit_test(test_2_expr_errors),
		cmocka_unit_test(test_3_pattern_variants),
		cmocka_unit_test(test_4_render_copies),
		cmocka_unit_test(test_5_draws_avoid_special_values),
		cmocka_unit_test(test_6_format_const),
		cmocka_unit_test(test_7_hulls_crowded_ranges),
		cmocka_unit_test(test_8_knob_space_without_require),
	};
	return cmocka_run_group_tests_name("template", tests, NULL, NULL);
}
