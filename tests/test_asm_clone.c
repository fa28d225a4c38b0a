/* test_asm_clone.c: tests for generator/asm_clone.c, asm_lex.c and asm_fit.c (fit probe
 * assembly, emit copies).
 *
 * Built by `ninja tests/test_asm_clone` in a build directory; run ./tests/test_asm_clone.
 * The end-to-end test runs gcc, objdump and the dynamic loader in a mkdtemp directory
 * (under $TMPDIR or /tmp); set ASM_CLONE_KEEP=1 to keep that directory.
 *
 * Kept in one file (about 1,150 lines): these are the tests of one API, asm_clone.h's fit
 * and emit, and every case builds on the same hand-written probe fixture, its constant
 * vectors and the scratch-directory helpers at the top; the end-to-end case (11) is the
 * same fit and emit, checked by gcc, objdump and the dynamic loader instead of by text.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "asm_clone.h"
#include "util.h"

/* ---- Helpers ---- */

/* Text of a hand-written probe in gcc's style (x86-64, -O2 -fPIC, with .cfi, a cold part,
 * a constant pool and a switch table). name: the function's name; lp: what follows ".L" in
 * local labels before their own name ("" in a probe, "<tag>_" in an expected copy); ls: what
 * follows the switch table's symbol ("" or ".<tag>"); file_lines: include the file-level
 * lines a copy drops. Constants: k[0] threshold (cmpl $k0-1), k[1] mask (andl $-k1-1), k[2]
 * index scaled by 8, k[3] 32-bit salt, k[4] 64-bit pool value (3*k4+100), k[5] switch table
 * entry, k[6] byte compared with cmpb. The caller frees the result. */
static char *fixture(const char *name, const char *lp, const char *ls, const int64_t *k,
                     int file_lines)
{
	struct buf b = {0};

	if (file_lines)
		buf_printf(&b, "\t.file\t\"fix.c\"\n");
	buf_printf(&b, "\t.text\n\t.p2align 4\n\t.type\t%s, @function\n%s:\n", name, name);
	buf_printf(&b, ".L%sFB0:\n\t.cfi_startproc\n\tmovl\t(%%rdi), %%eax\n", lp);
	buf_printf(&b, "\tcmpl\t$%" PRId64 ", %%eax\n\tjbe\t.L%s2\n", k[0] - 1, lp);
	buf_printf(&b, "\tandl\t$%" PRId64 ", %%eax\n", -k[1] - 1);
	buf_printf(&b, "\tmovq\t%" PRId64 "(%%rsi), %%rdx\n", 8 * k[2]);
	buf_printf(&b, "\txorl\t$%" PRId32 ", %%eax\n", (int32_t)(uint32_t)k[3]);
	buf_printf(&b, "\tcmpb\t$%d, %%al\n\tjne\t%s.cold\n", (int)(int8_t)(uint8_t)k[6], name);
	buf_printf(&b, "\tmovq\t.L%sC0(%%rip), %%rcx\n\taddq\t%%rcx, %%rdx\n\tcall\t%s\n", lp,
	           name);
	buf_printf(&b, ".L%s2:\n\tleaq\tCSWTCH.3%s(%%rip), %%rcx\n", lp, ls);
	buf_printf(&b, "\tmovl\t(%%rcx,%%rax,4), %%eax\n\tret\n\t.cfi_endproc\n");
	buf_printf(&b, "\t.section\t.text.unlikely\n\t.cfi_startproc\n");
	buf_printf(&b, "\t.type\t%s.cold, @function\n%s.cold:\n\tud2\n\t.cfi_endproc\n", name,
	           name);
	buf_printf(&b, ".L%sFE0:\n\t.text\n\t.size\t%s, .-%s\n", lp, name, name);
	buf_printf(&b, "\t.section\t.text.unlikely\n\t.size\t%s.cold, .-%s.cold\n", name, name);
	buf_printf(&b, "\t.section\t.rodata.cst8,\"aM\",@progbits,8\n\t.align 8\n");
	buf_printf(&b, ".L%sC0:\n\t.quad\t%" PRId64 "\n", lp, 3 * k[4] + 100);
	buf_printf(&b, "\t.section\t.rodata\n\t.align 16\n\t.type\tCSWTCH.3%s, @object\n", ls);
	buf_printf(&b, "\t.size\tCSWTCH.3%s, 16\nCSWTCH.3%s:\n", ls, ls);
	buf_printf(&b, "\t.long\t5\n\t.long\t%" PRId32 "\n\t.long\t9\n\t.long\t-2\n",
	           (int32_t)(uint32_t)k[5]);
	if (file_lines)
		buf_printf(&b, "\t.ident\t\"GCC: (test) 12.2.0\"\n"
		               "\t.section\t.note.GNU-stack,\"\",@progbits\n");
	return b.p;
}

#define FIX_NK 7

/* Probe constant vectors for the fixture: every constant differs between probes. Copies
 * are accepted between each constant's smallest and largest probe value. */
static const int64_t fix_k[3][FIX_NK] = {
	{100, 300, 11, 3000000000LL, (INT64_C(1) << 40) + 12345, 70000, 131},
	{4000000, 4242, 29, 2500000011LL, (INT64_C(3) << 41) + 999, 200000, 170},
	{12345, 777, 97, 4000000007LL, (INT64_C(5) << 39) + 77, 123457, 201},
};

struct fix {
	char *text[3];
	const char *names[3];
	const int64_t *k[3];
};

static void fix_init(struct fix *f)
{
	static const char *const names[3] = {"fl_P01_v000_c000000", "fl_P01_v000_c000001",
	                                     "fl_P01_v000_c000002"};
	for (int i = 0; i < 3; i++) {
		f->names[i] = names[i];
		f->k[i] = fix_k[i];
		f->text[i] = fixture(names[i], "", "", fix_k[i], 1);
	}
}

static void fix_done(struct fix *f)
{
	for (int i = 0; i < 3; i++)
		free(f->text[i]);
}

static struct asm_clone *fix_fit(struct fix *f, size_t nk, char *err, size_t errlen)
{
	const char *texts[3] = {f->text[0], f->text[1], f->text[2]};

	return asm_clone_fit(texts, f->names, f->k, nk, err, errlen);
}

/* Replace the first occurrence of from in *text by to (the text is reallocated). */
static void replace_once(char **text, const char *from, const char *to)
{
	char *at = strstr(*text, from);

	assert_non_null(at);
	struct buf b = {0};
	buf_add(&b, *text, (size_t)(at - *text));
	buf_puts(&b, to);
	buf_puts(&b, at + strlen(from));
	free(*text);
	*text = b.p;
}

/* Run a shell command built from fmt; returns its exit status (-1 when it did not exit). */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	struct buf cmd = {0};
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd.p);
	buf_free(&cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

static char *make_scratch(void)
{
	const char *tmp = getenv("TMPDIR");
	struct buf b = {0};

	buf_printf(&b, "%s/test_asm_clone.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(b.p));
	return b.p;
}

static void remove_scratch(char *dir)
{
	if (getenv("ASM_CLONE_KEEP"))
		print_message("kept %s\n", dir);
	else
		assert_int_equal(run("rm -rf '%s'", dir), 0);
	free(dir);
}

/* ---- 1-2: fitting and emitting the fixture ---- */

/* Slots carry the right (j, s, d): s = 1 d = -1 (x < K as cmp $K-1), s = -1 d = -1, s = 8
 * (scaled index), 32-bit wraparound, an 8-bit immediate, a .quad and a .long data slot. */
static void test_01_fixture_rules(void **state)
{
	(void)state;
	struct fix f;
	char err[256];

	fix_init(&f);
	struct asm_clone *c = fix_fit(&f, FIX_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	static const struct { size_t j; int64_t s, d; int width; unsigned line; } want[] = {
		{0, 1, -1, 32, 9},     /* cmpl $k0-1 */
		{1, -1, -1, 32, 11},   /* andl $-k1-1 */
		{2, 8, 0, 64, 12},     /* movq 8*k2(%rsi) */
		{3, 1, 0, 32, 13},     /* xorl $k3, printed as a negative 32-bit value */
		{6, 1, 0, 8, 14},      /* cmpb $k6 */
		{4, 3, 100, 64, 38},   /* .quad 3*k4+100 */
		{5, 1, 0, 32, 45},     /* .long k5 */
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	assert_int_equal(asm_clone_nslots(c), n);
	for (size_t i = 0; i < n; i++) {
		struct asm_clone_rule r;
		assert_int_equal(asm_clone_slot(c, i, &r), 0);
		assert_int_equal(r.j, want[i].j);
		assert_int_equal(r.s, want[i].s);
		assert_int_equal(r.d, want[i].d);
		assert_int_equal(r.width, want[i].width);
		assert_int_equal(r.line, want[i].line);
	}
	struct asm_clone_rule r;
	assert_int_equal(asm_clone_slot(c, n, &r), -1);
	asm_clone_free(c);
	fix_done(&f);
}

/* Emitting with a probe's own constants reproduces that probe, renamed and without the
 * file-level lines; new constants give the text the fixture would have with them. */
static void test_02_emit_reproduces_probes(void **state)
{
	(void)state;
	struct fix f;
	char err[256];

	fix_init(&f);
	struct asm_clone *c = fix_fit(&f, FIX_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	struct buf out = {0};
	for (int i = 0; i < 3; i++) {
		buf_reset(&out);
		assert_int_equal(asm_clone_emit(c, "copy", "t", fix_k[i], &out), 0);
		char *want = fixture("copy", "t_", ".t", fix_k[i], 0);
		assert_string_equal(out.p, want);
		free(want);
	}
	const int64_t fresh[FIX_NK] = {9999, 555, 77, 3333333333LL, (INT64_C(5) << 40) + 3,
	                               99999, 150};
	buf_reset(&out);
	assert_int_equal(asm_clone_emit(c, "fl_x", "f17", fresh, &out), 0);
	char *want = fixture("fl_x", "f17_", ".f17", fresh, 0);
	assert_string_equal(out.p, want);
	free(want);
	buf_free(&out);
	asm_clone_free(c);
	fix_done(&f);
}

/* ---- 3-6: refusals at fit time ---- */

/* Probes that differ in an instruction: NULL, with the line and both tokens named. */
static void test_03_structural_mismatch(void **state)
{
	(void)state;
	struct fix f;
	char err[256];

	fix_init(&f);
	replace_once(&f.text[1], "\tandl\t", "\torl\t");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	print_message("reason: %s\n", err);
	assert_non_null(strstr(err, "line 11"));
	assert_non_null(strstr(err, "'andl'"));
	assert_non_null(strstr(err, "'orl'"));
	fix_done(&f);

	/* a probe with an extra line */
	fix_init(&f);
	replace_once(&f.text[2], "\tret\n", "\tnop\n\tret\n");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	assert_non_null(strstr(err, "line 22"));
	assert_non_null(strstr(err, "'nop'"));
	fix_done(&f);
}

/* Integers that differ where no slot may go (alignment, scale factor): NULL. */
static void test_04_integer_outside_slot(void **state)
{
	(void)state;
	struct fix f;
	char err[256];

	fix_init(&f);
	replace_once(&f.text[2], ".align 16", ".align 32");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	print_message("reason: %s\n", err);
	assert_non_null(strstr(err, "outside"));
	assert_non_null(strstr(err, "line 40"));
	fix_done(&f);

	fix_init(&f);
	replace_once(&f.text[1], "(%rcx,%rax,4)", "(%rcx,%rax,8)");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	assert_non_null(strstr(err, "outside"));
	fix_done(&f);
}

/* A slot no constant explains linearly: NULL. */
static void test_05_no_rule(void **state)
{
	(void)state;
	struct fix f;
	char err[256];
	int64_t k2[FIX_NK];

	fix_init(&f);
	memcpy(k2, fix_k[2], sizeof(k2));
	k2[5] = 90002;   /* .long shows 123457: 70000, 80001 fit k5 but the third does not */
	f.k[2] = k2;
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	print_message("reason: %s\n", err);
	assert_non_null(strstr(err, "line 45"));
	assert_non_null(strstr(err, "not s*k[j]+d"));
	fix_done(&f);
}

/* Two constants that predict a slot identically on all probes: NULL. */
static void test_06_ambiguous_slot(void **state)
{
	(void)state;
	struct fix f;
	char err[256];
	int64_t kk[3][FIX_NK + 1];

	fix_init(&f);
	for (int i = 0; i < 3; i++) {
		memcpy(kk[i], fix_k[i], sizeof(fix_k[i]));
		kk[i][FIX_NK] = fix_k[i][5] + 3;   /* k7 = k5 + 3 in every probe */
		f.k[i] = kk[i];
	}
	assert_null(fix_fit(&f, FIX_NK + 1, err, sizeof(err)));
	print_message("reason: %s\n", err);
	assert_non_null(strstr(err, "ambiguous"));
	assert_non_null(strstr(err, "line 45"));
	fix_done(&f);
}

/* ---- 7-9: emitting ---- */

/* The function is renamed everywhere (label, .type, .size, call, .cold), local labels get
 * the tag, the switch table symbol gets it too, file-level lines and .globl are dropped,
 * output is appended, and two copies assemble side by side with the function local. */
static void test_07_renaming(void **state)
{
	(void)state;
	struct fix f;
	char err[256];

	fix_init(&f);
	/* gcc would write .globl for a non-static function: the copy must still be local */
	for (int i = 0; i < 3; i++) {
		struct buf g = {0};
		buf_printf(&g, "\t.globl\t%s\n\t.type\t%s,", f.names[i], f.names[i]);
		char from[64];
		snprintf(from, sizeof(from), "\t.type\t%s,", f.names[i]);
		replace_once(&f.text[i], from, g.p);
		buf_free(&g);
	}
	struct asm_clone *c = fix_fit(&f, FIX_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	struct buf out = {0};
	buf_puts(&out, "# shard header\n");
	assert_int_equal(asm_clone_emit(c, "fl_copy_7", "t9", fix_k[1], &out), 0);
	size_t first = out.len;
	assert_int_equal(asm_clone_emit(c, "fl_copy_8", "t10", fix_k[2], &out), 0);
	assert_int_equal(strncmp(out.p, "# shard header\n", 15), 0);
	static const char *const must[] = {
		"\t.type\tfl_copy_7, @function\nfl_copy_7:\n.Lt9_FB0:\n", "\tcall\tfl_copy_7\n",
		"\tjne\tfl_copy_7.cold\n", "fl_copy_7.cold:\n", "\t.size\tfl_copy_7, .-fl_copy_7\n",
		"\t.size\tfl_copy_7.cold, .-fl_copy_7.cold\n", "\tjbe\t.Lt9_2\n", ".Lt9_2:\n",
		".Lt9_C0:\n", "\tmovq\t.Lt9_C0(%rip), %rcx\n", "\tleaq\tCSWTCH.3.t9(%rip), %rcx\n",
		"\t.type\tCSWTCH.3.t9, @object\n", "CSWTCH.3.t9:\n", ".Lt10_2:\n", "CSWTCH.3.t10:\n",
		"fl_copy_8.cold:\n", NULL
	};
	for (const char *const *m = must; *m; m++)
		if (!strstr(out.p, *m))
			fail_msg("missing %s in:\n%s", *m, out.p);
	static const char *const never[] = {
		"fl_P01", ".globl", ".file", ".ident", "GNU-stack", ".L2", ".LC0", ".LFB0", NULL
	};
	for (const char *const *m = never; *m; m++)
		if (strstr(out.p, *m))
			fail_msg("unexpected %s in:\n%s", *m, out.p);
	assert_null(strstr(out.p + first, "t9"));

	char *dir = make_scratch();
	struct buf path = {0};
	buf_printf(&path, "%s/two.s", dir);
	buf_puts(&out, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
	write_if_changed(path.p, out.p, out.len);
	assert_int_equal(run("gcc -c -o '%s/two.o' '%s'", dir, path.p), 0);
	assert_int_equal(run("nm '%s/two.o' | grep -q ' t fl_copy_7$'", dir), 0);
	assert_int_equal(run("nm '%s/two.o' | grep -q ' t fl_copy_8$'", dir), 0);
	assert_int_equal(run("nm '%s/two.o' | grep -q ' [A-Z] fl_copy'", dir), 1);
	remove_scratch(dir);
	buf_free(&path);
	buf_free(&out);
	asm_clone_free(c);
	fix_done(&f);
}

/* Emit with constants check: out is untouched and -1 returned. */
static void expect_unsafe(const struct asm_clone *c, const int64_t *k, const char *why)
{
	struct buf out = {0};

	buf_puts(&out, "keep");
	if (asm_clone_emit(c, "x", "t", k, &out) != -1)
		fail_msg("emit accepted %s", why);
	assert_int_equal(out.len, 4);
	assert_string_equal(out.p, "keep");
	buf_free(&out);
}

/* Emit the fixture with fix_k[2] but constant j set to v; returns emit's result. */
static int emit_with(const struct asm_clone *c, size_t j, int64_t v)
{
	int64_t k[FIX_NK];
	struct buf out = {0};

	memcpy(k, fix_k[2], sizeof(k));
	k[j] = v;
	int rc = asm_clone_emit(c, "x", "t", k, &out);
	buf_free(&out);
	return rc;
}

/* Constants outside the probes' range, values that change class inside it, cmp orders that
 * flip: -1, with out untouched. */
static void test_08_unsafe_values(void **state)
{
	(void)state;
	struct fix f;
	char err[256];
	int64_t k[FIX_NK];

	fix_init(&f);
	struct asm_clone *c = fix_fit(&f, FIX_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	memcpy(k, fix_k[2], sizeof(k));
	k[0] = 99;                     /* below every probe's threshold */
	expect_unsafe(c, k, "a threshold below the probes' range");
	assert_int_equal(emit_with(c, 0, 100), 0);        /* the ends of the range are fine */
	assert_int_equal(emit_with(c, 0, 4000000), 0);
	assert_int_equal(emit_with(c, 0, 4000001), -1);
	asm_clone_allow_outside_range(c, 1);              /* the caller's choice */
	assert_int_equal(emit_with(c, 0, 4000001), 0);
	/* cmpl $0 gains the class "0, 1, -1" no probe had: the probes' general compare still
	 * means x < 1, so it is accepted (a class is only kept when every probe had it). */
	assert_int_equal(emit_with(c, 0, 1), 0);
	assert_int_equal(emit_with(c, 0, 0), -1);         /* cmpl $-1: the sign flips */
	asm_clone_allow_outside_range(c, 0);
	assert_int_equal(emit_with(c, 6, 456), -1);       /* cmpb: 456 is not a byte */
	assert_int_equal(emit_with(c, 3, INT64_C(5000000000)), -1);   /* a 33-bit salt */
	/* Powers of two and 2^n-1 inside the range: general code, accepted. */
	assert_int_equal(emit_with(c, 0, 129), 0);        /* cmpl $128 */
	assert_int_equal(emit_with(c, 0, 16384), 0);      /* cmpl $16383 */
	assert_int_equal(emit_with(c, 5, 131072), 0);     /* .long 2^17 */
	assert_int_equal(emit_with(c, 5, 131070), 0);
	(void)k;
	asm_clone_free(c);
	fix_done(&f);

	/* two compares whose order was the same in all probes: a copy may not flip it */
	static const char tpl[] =
		"\t.text\n\t.type\t%s, @function\n%s:\n\tcmpl\t$%d, %%edi\n\tje\t.L2\n"
		"\tcmpl\t$%d, %%edi\n\tje\t.L3\n\tret\n.L2:\n.L3:\n\tret\n\t.size\t%s, .-%s\n";
	static const int64_t ok[3][2] = {{1100, 1200}, {1310, 1420}, {1533, 1947}};
	char text[3][512];
	const char *texts[3], *names[3] = {"f0", "f1", "f2"};
	const int64_t *kp[3];
	for (int i = 0; i < 3; i++) {
		snprintf(text[i], sizeof(text[i]), tpl, names[i], names[i], (int)ok[i][0],
		         (int)ok[i][1], names[i], names[i]);
		texts[i] = text[i];
		kp[i] = ok[i];
	}
	c = asm_clone_fit(texts, names, kp, 2, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	const int64_t flipped[2] = {1500, 1250};
	expect_unsafe(c, flipped, "case labels in the other order");
	const int64_t kept[2] = {1300, 1700};
	struct buf out = {0};
	assert_int_equal(asm_clone_emit(c, "g", "u", kept, &out), 0);
	assert_non_null(strstr(out.p, "\tcmpl\t$1300, %edi\n\tje\t.Lu_2\n\tcmpl\t$1700, %edi\n"));
	buf_free(&out);
	asm_clone_free(c);

	/* compares of different operands are independent */
	for (int i = 0; i < 3; i++) {
		char *e = strstr(text[i], "%edi\n\tje\t.L3");
		assert_non_null(e);
		memcpy(e, "%esi", 4);
	}
	c = asm_clone_fit(texts, names, kp, 2, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	assert_int_equal(asm_clone_emit(c, "g", "u", flipped, &out), 0);
	buf_free(&out);
	asm_clone_free(c);
}

/* Fit the function body fmt (a printf format taking two ints, 4 * k[0] and 4 * k[1]) on
 * probes where the two displacements are at least 80 bytes apart; k[0] and k[1] may range
 * over [-20, 1000]. */
static struct asm_clone *fit_two(const char *fmt)
{
	static const int64_t pk[3][2] = {{-20, 1000}, {1000, -20}, {47, 77}};
	char text[3][512], body[256], err[256];
	const char *texts[3], *names[3] = {"f0", "f1", "f2"};
	const int64_t *kp[3];

	for (int i = 0; i < 3; i++) {
		snprintf(body, sizeof(body), fmt, (int)(4 * pk[i][0]), (int)(4 * pk[i][1]));
		snprintf(text[i], sizeof(text[i]),
		         "\t.text\n\t.type\t%s, @function\n%s:\n%s\tret\n\t.size\t%s, .-%s\n",
		         names[i], names[i], body, names[i], names[i]);
		texts[i] = text[i];
		kp[i] = pk[i];
	}
	struct asm_clone *c = asm_clone_fit(texts, names, kp, 2, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	return c;
}

static int emit_two(const struct asm_clone *c, int64_t k0, int64_t k1)
{
	const int64_t k[2] = {k0, k1};
	struct buf out = {0};
	int rc = asm_clone_emit(c, "g", "u", k, &out);

	buf_free(&out);
	return rc;
}

/* A store and a load off the same registers were apart in every probe: a copy where they
 * overlap is refused (gcc may have forwarded a value past the store); two loads or two
 * adds may overlap; a displacement may change class freely. */
static void test_09_overlapping_accesses(void **state)
{
	(void)state;
	struct asm_clone *c = fit_two("\tmovl\t%%esi, %d(%%rdi)\n\tmovl\t%d(%%rdi), %%eax\n");

	assert_int_equal(emit_two(c, 50, 50), -1);
	assert_int_equal(emit_two(c, 50, 51), -1);
	assert_int_equal(emit_two(c, 51, 50), -1);
	assert_int_equal(emit_two(c, 50, 52), 0);
	assert_int_equal(emit_two(c, 3, 200), 0);  /* 12(%rdi): imm8 where the probes had not */
	assert_int_equal(emit_two(c, 0, 200), 0);  /* 0(%rdi) */
	assert_int_equal(emit_two(c, -2, 9), 0);   /* a negative displacement */
	asm_clone_free(c);

	/* a store to (%rdi) (no displacement) and a store off %rdi */
	c = fit_two("\tmovl\t%%esi, %d(%%rdi)\n\tmovl\t%d(%%rsi), %%eax\n"
	            "\tmovl\t%%eax, (%%rdi)\n");
	assert_int_equal(emit_two(c, 1, 9), -1);
	assert_int_equal(emit_two(c, 2, 9), 0);
	asm_clone_free(c);

	c = fit_two("\tmovl\t%d(%%rdi), %%esi\n\tmovl\t%d(%%rdi), %%eax\n");
	assert_int_equal(emit_two(c, 50, 50), 0);
	asm_clone_free(c);

	/* two adds to memory (FL_YIELD) commute: they may overlap */
	c = fit_two("\taddl\t%%esi, %d(%%rdi)\n\tsubl\t$3, %d(%%rdi)\n");
	assert_int_equal(emit_two(c, 50, 50), 0);
	asm_clone_free(c);

	/* different address registers: no relation */
	c = fit_two("\tmovl\t%%esi, %d(%%rdi)\n\tmovl\t%d(%%rdx), %%eax\n");
	assert_int_equal(emit_two(c, 50, 50), 0);
	asm_clone_free(c);
}

/* ---- 10: more refusals at fit time ---- */

/* Fit refuses: an unused varying constant, debug info, an exported symbol, a wrong name;
 * a constant that never varies is accepted and pinned. */
static void test_10_fit_refusals(void **state)
{
	(void)state;
	struct fix f;
	char err[256];
	int64_t kk[3][FIX_NK + 1];

	fix_init(&f);
	for (int i = 0; i < 3; i++) {
		memcpy(kk[i], fix_k[i], sizeof(fix_k[i]));
		kk[i][FIX_NK] = 1000 + i;   /* differs between probes, appears nowhere */
		f.k[i] = kk[i];
	}
	assert_null(fix_fit(&f, FIX_NK + 1, err, sizeof(err)));
	print_message("reason: %s\n", err);
	assert_non_null(strstr(err, "k[7]"));
	fix_done(&f);

	/* A constant with one value in every probe fits (its uses are literal text), and the
	 * range check then holds every copy to that value. */
	fix_init(&f);
	for (int i = 0; i < 3; i++) {
		memcpy(kk[i], fix_k[i], sizeof(fix_k[i]));
		kk[i][FIX_NK] = 1234;
		f.k[i] = kk[i];
	}
	struct asm_clone *fixed = fix_fit(&f, FIX_NK + 1, err, sizeof(err));
	assert_non_null(fixed);
	int64_t kc[FIX_NK + 1];
	memcpy(kc, fix_k[0], sizeof(fix_k[0]));
	kc[FIX_NK] = 1234;
	struct buf out = {0};
	assert_int_equal(asm_clone_emit(fixed, "fl_copy", "t1", kc, &out), 0);
	kc[FIX_NK] = 1235;
	assert_int_equal(asm_clone_emit(fixed, "fl_copy", "t2", kc, &out), -1);
	buf_free(&out);
	asm_clone_free(fixed);
	fix_done(&f);

	fix_init(&f);
	for (int i = 0; i < 3; i++)
		replace_once(&f.text[i], "\tmovl\t(%rdi)", "\t.loc 1 5 3\n\tmovl\t(%rdi)");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	assert_non_null(strstr(err, "-g"));
	fix_done(&f);

	fix_init(&f);
	for (int i = 0; i < 3; i++)
		replace_once(&f.text[i], "CSWTCH.3:", "\t.globl\tCSWTCH.3\nCSWTCH.3:");
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	assert_non_null(strstr(err, "exports"));
	fix_done(&f);

	fix_init(&f);
	f.names[1] = "fl_other";
	assert_null(fix_fit(&f, FIX_NK, err, sizeof(err)));
	assert_non_null(strstr(err, "probe 1"));
	fix_done(&f);
}

/* ---- 11: end to end with gcc ---- */

#define E2E_NK 6
#define E2E_COPIES 50
#define E2E_INPUTS 1000
#define E2E_STORY 256
#define E2E_DENSE 1024

/* The context the template reads: story words in, dense features out. */
static const char e2e_ctx_h[] =
	"#ifndef CTX_H\n#define CTX_H\n#include <stdint.h>\n"
	"struct ctx { const uint32_t *story; int32_t *dense; };\n#endif\n";
struct e2e_ctx {
	const uint32_t *story;
	int32_t *dense;
};
typedef uint32_t (*e2e_fn)(struct e2e_ctx *);

/* A generated-style function with six per-copy constants: K0 xor salt, K1 story index, K2
 * odd multiplier, K3 comparison threshold, K4 dense slot (an index scaled by 4), K5 a
 * constant in one switch arm (the switch becomes a jump table). */
static const char e2e_tpl_c[] =
	"#include \"ctx.h\"\n"
	"static __attribute__((noinline, noclone, used)) uint32_t NAME(struct ctx *c)\n"
	"{\n"
	"\tuint32_t w = c->story[K1] ^ K0;\n"
	"\tw *= K2;\n"
	"\tw ^= w >> 15;\n"
	"\tuint32_t r;\n"
	"\tif (w < K3)\n"
	"\t\tc->dense[K4] += (int32_t)(w >> 3);\n"
	"\tswitch ((w >> 9) % 6u) {\n"
	"\tcase 0: r = w + K5; break;\n"
	"\tcase 1: r = w ^ (w >> 7); break;\n"
	"\tcase 2: r = w * 5u + 1u; break;\n"
	"\tcase 3: r = (w >> 3) | 0x100u; break;\n"
	"\tcase 4: r = ~w; break;\n"
	"\tdefault: r = w - 9u; break;\n"
	"\t}\n"
	"\treturn r;\n"
	"}\n";

/* Ranges of the constants; each stays within one class (sign, imm8, 32-bit fit). K3 lies
 * above 2^31, so gcc prints cmpl $K3-1 as a negative number: wraparound is exercised. */
static const struct { int64_t lo, hi; int odd; } e2e_range[E2E_NK] = {
	{65536, 1073741823, 0},
	{40, E2E_STORY - 1, 0},
	{100003, 2147483647, 1},   /* not 65537 = 2^16+1: gcc multiplies by shift and add */
	{2147483648LL + 1000, 4294967295LL - 1000, 0},
	{100, E2E_DENSE - 1, 0},
	{1000, 1 << 20, 0},
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* A draw from [lo, hi] avoiding the values the generator avoids (0, +-1, powers of two,
 * 2^n-1), odd when asked. */
static int64_t draw(uint64_t *rng, int64_t lo, int64_t hi, int odd)
{
	for (;;) {
		int64_t v = lo + (int64_t)(rng_next(rng) % (uint64_t)(hi - lo + 1));
		if (odd && !(v & 1))
			continue;
		if (v <= 1 || (v & (v - 1)) == 0 || (v & (v + 1)) == 0)
			continue;
		return v;
	}
}

static void draw_vector(uint64_t *rng, int64_t *k)
{
	for (int j = 0; j < E2E_NK; j++)
		k[j] = draw(rng, e2e_range[j].lo, e2e_range[j].hi, e2e_range[j].odd);
}

/* The story word that makes the template's w equal target for constants k: undoes
 * w ^= w >> 15, the multiply by the odd K2 and the xor with K0. */
static uint32_t story_for(const int64_t *k, uint32_t target)
{
	uint32_t x = target ^ (target >> 15) ^ (target >> 30);
	uint32_t m = (uint32_t)k[2], inv = m;

	for (int i = 0; i < 5; i++)
		inv *= 2u - m * inv;
	return (x * inv) ^ (uint32_t)k[0];
}

/* Write the instructions of function fn from objdump output dis into out, one per line,
 * with numbers, symbolic <...> annotations, comments and padding nops removed: what is
 * left is the instruction stream up to immediates and addresses. Returns 0, or -1 when fn
 * is not in dis. */
static int normalized_body(const char *dis, const char *fn, struct buf *out)
{
	struct buf key = {0};

	buf_printf(&key, "<%s>:\n", fn);
	const char *p = strstr(dis, key.p);
	buf_free(&key);
	if (!p)
		return -1;
	p = strchr(p, '\n') + 1;
	while (*p && *p != '\n') {
		const char *e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		const char *q = memchr(p, ':', (size_t)(e - p));
		q = q ? q + 1 : p;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (!memmem(q, (size_t)(e - q), "nop", 3) && strncmp(q, "int3", 4) != 0) {
			while (q < e && *q != '#' && *q != '<') {
				if (*q >= '0' && *q <= '9') {
					buf_putc(out, 'N');
					while (q < e && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
					                 *q == 'x'))
						q++;
					continue;
				}
				if (*q != ' ')
					buf_putc(out, *q);
				q++;
			}
			buf_putc(out, '\n');
		}
		p = *e ? e + 1 : e;
	}
	return 0;
}

/* Write data to dir/file. */
static void write_scratch(const char *dir, const char *file, const char *data, size_t len)
{
	struct buf path = {0};

	buf_printf(&path, "%s/%s", dir, file);
	write_if_changed(path.p, data, len);
	buf_free(&path);
}

/* The value nearest to from (stepping by step) that a copy can draw from range j. */
static int64_t e2e_edge(int j, int64_t from, int64_t step)
{
	int64_t v = from;

	while ((e2e_range[j].odd && !(v & 1)) || v <= 1 || (v & (v - 1)) == 0 ||
	       (v & (v + 1)) == 0)
		v += step;
	return v;
}

/* Probe constants as asm_clone.h asks for them: probe 0 at the low end of every range,
 * probe 1 at the high end, probe 2 drawn like a copy. Compile the template with each
 * (gcc -O2 -fPIC -S) and fit them. */
static struct asm_clone *e2e_fit(const char *dir, uint64_t *rng)
{
	int64_t pk[3][E2E_NK];
	char *text[3], name[3][24], err[512];
	struct buf defs = {0}, path = {0};

	draw_vector(rng, pk[2]);
	for (int j = 0; j < E2E_NK; j++) {
		pk[0][j] = e2e_edge(j, e2e_range[j].lo, 1);
		pk[1][j] = e2e_edge(j, e2e_range[j].hi, -1);
	}
	for (int i = 0; i < 3; i++) {
		buf_reset(&defs);
		for (int j = 0; j < E2E_NK; j++)
			buf_printf(&defs, " -DK%d=%" PRId64 "u", j, pk[i][j]);
		snprintf(name[i], sizeof(name[i]), "probe_%d", i);
		assert_int_equal(run("gcc -O2 -fPIC -S -o '%s/p%d.s' -DNAME=%s%s '%s/tpl.c'", dir, i,
		                     name[i], defs.p, dir), 0);
		buf_reset(&path);
		buf_printf(&path, "%s/p%d.s", dir, i);
		text[i] = read_file(path.p, NULL);
		assert_non_null(text[i]);
	}
	const char *texts[3] = {text[0], text[1], text[2]};
	const char *names[3] = {name[0], name[1], name[2]};
	const int64_t *kp[3] = {pk[0], pk[1], pk[2]};
	struct asm_clone *c = asm_clone_fit(texts, names, kp, E2E_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	buf_free(&defs);
	buf_free(&path);
	return c;
}

/* Emit every copy clone_I (constants ck[I]) into dir/clones.s with a table clone_table, write
 * the same copies from C as twin_I into dir/twins.c with twin_table, and build both into
 * dir/lib.so. Returns how many copies were emitted as assembly. */
static int e2e_build(const char *dir, const struct asm_clone *c,
                     int64_t ck[E2E_COPIES][E2E_NK])
{
	struct buf s = {0}, twins = {0};
	int emitted = 0;

	buf_puts(&s, "\t.file\t\"clones.s\"\n");
	buf_puts(&twins, "#include \"ctx.h\"\n");
	for (int i = 0; i < E2E_COPIES; i++) {
		char name[32], tag[16];
		snprintf(name, sizeof(name), "clone_%d", i);
		snprintf(tag, sizeof(tag), "c%d", i);
		emitted += asm_clone_emit(c, name, tag, ck[i], &s) == 0;
		buf_printf(&twins, "#define NAME twin_%d\n", i);
		for (int j = 0; j < E2E_NK; j++)
			buf_printf(&twins, "#define K%d %" PRId64 "u\n", j, ck[i][j]);
		buf_printf(&twins, "#include \"tpl.c\"\n#undef NAME\n");
		for (int j = 0; j < E2E_NK; j++)
			buf_printf(&twins, "#undef K%d\n", j);
	}
	buf_puts(&s, "\t.section\t.data.rel.ro,\"aw\"\n\t.align 8\n\t.globl\tclone_table\n"
	             "clone_table:\n");
	for (int i = 0; i < E2E_COPIES; i++)
		buf_printf(&s, "\t.quad\tclone_%d\n", i);
	buf_puts(&s, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
	buf_printf(&twins, "typedef uint32_t (*fn)(struct ctx *);\nconst fn twin_table[] = {\n");
	for (int i = 0; i < E2E_COPIES; i++)
		buf_printf(&twins, "\ttwin_%d,\n", i);
	buf_puts(&twins, "};\n");
	write_scratch(dir, "clones.s", s.p, s.len);
	write_scratch(dir, "twins.c", twins.p, twins.len);
	assert_int_equal(run("gcc -O2 -fPIC -shared -o '%s/lib.so' '%s/twins.c' '%s/clones.s'", dir,
	                     dir, dir), 0);
	buf_free(&s);
	buf_free(&twins);
	return emitted;
}

/* Run every clone and its twin from dir/lib.so on E2E_INPUTS random inputs, a quarter of
 * them aimed at the threshold K3; returns the number of calls whose result or dense writes
 * differ. */
static int e2e_compare_runs(const char *dir, int64_t ck[E2E_COPIES][E2E_NK], uint64_t *rng)
{
	static uint32_t story[E2E_STORY];
	static int32_t dense_a[E2E_DENSE], dense_b[E2E_DENSE];
	struct buf path = {0};
	int bad = 0;

	buf_printf(&path, "%s/lib.so", dir);
	void *so = dlopen(path.p, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		fail_msg("dlopen: %s", dlerror());
	const e2e_fn *clone_table = dlsym(so, "clone_table");
	const e2e_fn *twin_table = dlsym(so, "twin_table");
	assert_non_null(clone_table);
	assert_non_null(twin_table);
	for (int i = 0; i < E2E_COPIES; i++) {
		for (int n = 0; n < E2E_INPUTS; n++) {
			for (int w = 0; w < E2E_STORY; w++)
				story[w] = (uint32_t)rng_next(rng);
			if (n % 4 == 0) {   /* w at K3-2 .. K3+1, where an off-by-one shows */
				uint32_t target = (uint32_t)ck[i][3] + (uint32_t)(n / 4 % 4) - 2u;
				story[ck[i][1]] = story_for(ck[i], target);
			}
			memset(dense_a, 0, sizeof(dense_a));
			memset(dense_b, 0, sizeof(dense_b));
			struct e2e_ctx ca = {story, dense_a}, cb = {story, dense_b};
			uint32_t ra = clone_table[i](&ca), rb = twin_table[i](&cb);
			if ((ra != rb || memcmp(dense_a, dense_b, sizeof(dense_a)) != 0) && bad++ < 5)
				print_message("copy %d input %d: clone %" PRIu32 " twin %" PRIu32 "%s\n",
				              i, n, ra, rb, ra == rb ? " (dense differs)" : "");
		}
	}
	dlclose(so);
	buf_free(&path);
	return bad;
}

/* How many clones in dir/lib.so disassemble (objdump -d) to their twin's instructions, up
 * to immediates and addresses. */
static int e2e_same_disassembly(const char *dir)
{
	struct buf path = {0};
	int same = 0;

	assert_int_equal(run("objdump -d --no-show-raw-insn '%s/lib.so' > '%s/dis.txt'", dir, dir),
	                 0);
	buf_printf(&path, "%s/dis.txt", dir);
	char *dis = read_file(path.p, NULL);
	assert_non_null(dis);
	for (int i = 0; i < E2E_COPIES; i++) {
		struct buf a = {0}, b = {0};
		char fa[32], fb[32];
		snprintf(fa, sizeof(fa), "clone_%d", i);
		snprintf(fb, sizeof(fb), "twin_%d", i);
		assert_int_equal(normalized_body(dis, fa, &a), 0);
		assert_int_equal(normalized_body(dis, fb, &b), 0);
		same += a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
		buf_free(&a);
		buf_free(&b);
	}
	free(dis);
	buf_free(&path);
	return same;
}

/* Fit the template's probes compiled by gcc, emit E2E_COPIES copies with random constants
 * into one .s, build them with the same copies compiled from C into a shared object, and
 * check that every clone returns what its C twin returns (and writes the same dense slots)
 * on E2E_INPUTS random inputs. Prints how many clones disassemble to the same instructions
 * as their twin, up to immediates and addresses (not asserted). */
static void test_11_end_to_end_gcc(void **state)
{
	(void)state;
	char *dir = make_scratch();
	uint64_t rng = 0x9E3779B97F4A7C15ULL;
	int64_t ck[E2E_COPIES][E2E_NK];

	write_scratch(dir, "ctx.h", e2e_ctx_h, strlen(e2e_ctx_h));
	write_scratch(dir, "tpl.c", e2e_tpl_c, strlen(e2e_tpl_c));
	struct asm_clone *c = e2e_fit(dir, &rng);
	print_message("fitted %zu slots from gcc's probes\n", asm_clone_nslots(c));
	for (int i = 0; i < E2E_COPIES; i++)
		draw_vector(&rng, ck[i]);
	int emitted = e2e_build(dir, c, ck);
	print_message("emitted %d of %d copies as assembly\n", emitted, E2E_COPIES);
	assert_int_equal(emitted, E2E_COPIES);
	assert_int_equal(e2e_compare_runs(dir, ck, &rng), 0);
	print_message("objdump: %d of %d clones match their C twin up to immediates/addresses\n",
	              e2e_same_disassembly(dir), E2E_COPIES);
	asm_clone_free(c);
	remove_scratch(dir);
}

/* ---- 12-13: rules ---- */

#define RR_NK 8
#define RR_SLOTS 300   /* more than emit keeps on its stack */

struct rr_rule {
	size_t j;
	int64_t s, d;
	int width;
};

/* A data-only probe holding one .value/.long/.quad per rule, each s * k[j] + d written as
 * gcc would (the W-bit value, signed). */
static char *rr_text(const char *name, const struct rr_rule *r, const int64_t *k)
{
	struct buf b = {0};

	buf_printf(&b, "\t.text\n\t.type\t%s, @function\n%s:\n\tret\n\t.size\t%s, .-%s\n"
	               "\t.section\t.rodata\n.LC0:\n", name, name, name, name);
	for (int i = 0; i < RR_SLOTS; i++) {
		uint64_t e = (uint64_t)r[i].s * (uint64_t)k[r[i].j] + (uint64_t)r[i].d;
		if (r[i].width == 16)
			buf_printf(&b, "\t.value\t%d\n", (int)(int16_t)(uint16_t)e);
		else if (r[i].width == 32)
			buf_printf(&b, "\t.long\t%" PRId32 "\n", (int32_t)(uint32_t)e);
		else
			buf_printf(&b, "\t.quad\t%" PRId64 "\n", (int64_t)e);
	}
	return b.p;
}

/* Whether some rule's value for k is one gcc treats specially (|v| < 128, a power of two or
 * 2^n-1, either sign): the only reason a class-stable round may refuse a copy. */
static int rr_special(const struct rr_rule *r, const int64_t *k)
{
	for (int i = 0; i < RR_SLOTS; i++) {
		int64_t v = r[i].s * k[r[i].j] + r[i].d;
		if (r[i].width == 16)
			v = (int16_t)(uint16_t)v;
		int64_t a = v < 0 ? -v : v;
		if (a < 128 || (a & (a - 1)) == 0 || (a & (a + 1)) == 0)
			return 1;
	}
	return 0;
}

static int64_t rr_between(uint64_t *rng, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* Fit RR_SLOTS random rules over RR_NK random constants. big: multipliers up to 65536 with
 * 32-bit wraparound; otherwise small multipliers and constants whose values keep their
 * class, so that fresh constants within the probes' range must be accepted. Checks every
 * rule, that each probe is reproduced, and that fresh constants give the values the rules
 * say. */
static void rr_round(uint64_t *rng, int big)
{
	struct rr_rule r[RR_SLOTS];
	int64_t pk[3][RR_NK];
	char *text[3];
	const char *names[3] = {"r0", "r1", "r2"};
	const int64_t *kp[3] = {pk[0], pk[1], pk[2]};
	char err[256];

	for (int i = 0; i < RR_SLOTS; i++) {
		r[i].j = (size_t)i % RR_NK;
		r[i].width = i % 3 == 0 && !big ? 16 : i % 3 == 1 ? 32 : 64;
		int64_t mag = r[i].width == 16 ? 1 : big ? rr_between(rng, 4096, 65536) :
		              rr_between(rng, 1, 64);
		r[i].s = rng_next(rng) & 1 ? -mag : mag;
		r[i].d = rr_between(rng, -1000, 1000);
	}
	for (int p = 0; p < 3; p++)
		for (int j = 0; j < RR_NK; j++)
			pk[p][j] = big ? rr_between(rng, 1 << 20, 1 << 30) : rr_between(rng, 2000, 16000);
	for (int p = 0; p < 3; p++)
		text[p] = rr_text(names[p], r, pk[p]);
	const char *texts[3] = {text[0], text[1], text[2]};
	struct asm_clone *c = asm_clone_fit(texts, names, kp, RR_NK, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	assert_int_equal(asm_clone_nslots(c), RR_SLOTS);
	for (int i = 0; i < RR_SLOTS; i++) {
		struct asm_clone_rule got;
		assert_int_equal(asm_clone_slot(c, (size_t)i, &got), 0);
		if (got.j != r[i].j || got.s != r[i].s || got.d != r[i].d || got.width != r[i].width)
			fail_msg("slot %d: got k[%zu]*%" PRId64 "%+" PRId64 " w%d, want k[%zu]*%" PRId64
			         "%+" PRId64 " w%d", i, got.j, got.s, got.d, got.width, r[i].j, r[i].s,
			         r[i].d, r[i].width);
	}
	struct buf out = {0};
	for (int p = 0; p < 3; p++) {
		buf_reset(&out);
		assert_int_equal(asm_clone_emit(c, "x", "t", pk[p], &out), 0);
		char *want = rr_text("x", r, pk[p]);
		replace_once(&want, ".LC0:", ".Lt_C0:");
		assert_string_equal(out.p, want);
		free(want);
	}
	for (int n = 0; n < 20 && !big; n++) {
		int64_t k[RR_NK];
		for (int j = 0; j < RR_NK; j++) {
			int64_t lo = pk[0][j], hi = pk[0][j];
			for (int p = 1; p < 3; p++) {
				lo = pk[p][j] < lo ? pk[p][j] : lo;
				hi = pk[p][j] > hi ? pk[p][j] : hi;
			}
			k[j] = rr_between(rng, lo, hi);
		}
		buf_reset(&out);
		if (asm_clone_emit(c, "x", "t", k, &out) != 0) {
			assert_true(rr_special(r, k));
			continue;
		}
		char *want = rr_text("x", r, k);
		replace_once(&want, ".LC0:", ".Lt_C0:");
		assert_string_equal(out.p, want);
		free(want);
	}
	buf_free(&out);
	for (int p = 0; p < 3; p++)
		free(text[p]);
	asm_clone_free(c);
}

/* Random rules (j, s, d) at widths 16, 32 and 64 are found exactly, including large and
 * negative multipliers whose products wrap modulo 2^32. */
static void test_12_random_rules(void **state)
{
	(void)state;
	uint64_t rng = 0x243F6A8885A308D3ULL;

	for (int round = 0; round < 50; round++)
		rr_round(&rng, round & 1);
}

/* gcc writes (x >> 24) > K as cmpl $K*2^24+0xFFFFFF: a power-of-two multiplier beyond
 * 65536 is fitted; the value must keep fitting 32 bits (K < 256), and the plain bound
 * still holds for other multipliers. */
static void test_13_power_of_two_multiplier(void **state)
{
	(void)state;
	static const int64_t pk[3][1] = {{162}, {37}, {201}};
	char text[3][256], err[256];
	const char *texts[3], *names[3] = {"f0", "f1", "f2"};
	const int64_t *kp[3];

	for (int i = 0; i < 3; i++) {
		uint32_t v = (uint32_t)pk[i][0] << 24 | 0xFFFFFFu;
		snprintf(text[i], sizeof(text[i]),
		         "\t.type\t%s, @function\n%s:\n\tcmpl\t$%" PRId32 ", %%edi\n\tret\n",
		         names[i], names[i], (int32_t)v);
		texts[i] = text[i];
		kp[i] = pk[i];
	}
	struct asm_clone *c = asm_clone_fit(texts, names, kp, 1, err, sizeof(err));
	if (!c)
		fail_msg("fit failed: %s", err);
	struct asm_clone_rule r;
	assert_int_equal(asm_clone_slot(c, 0, &r), 0);
	assert_int_equal(r.s, 1 << 24);
	assert_int_equal(r.d, 0xFFFFFF);
	struct buf out = {0};
	const int64_t k99[1] = {99}, k300[1] = {300};
	assert_int_equal(asm_clone_emit(c, "g", "u", k99, &out), 0);
	assert_non_null(strstr(out.p, "\tcmpl\t$1677721599, %edi\n"));
	assert_int_equal(asm_clone_emit(c, "g", "u", k300, &out), -1);
	buf_free(&out);
	asm_clone_free(c);

	/* s = 3 * 2^20 is neither: no rule */
	for (int i = 0; i < 3; i++) {
		uint32_t v = (uint32_t)pk[i][0] * (3u << 20);
		snprintf(text[i], sizeof(text[i]),
		         "\t.type\t%s, @function\n%s:\n\tcmpl\t$%" PRId32 ", %%edi\n\tret\n",
		         names[i], names[i], (int32_t)v);
	}
	assert_null(asm_clone_fit(texts, names, kp, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "not s*k[j]+d"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_01_fixture_rules),
		cmocka_unit_test(test_02_emit_reproduces_probes),
		cmocka_unit_test(test_03_structural_mismatch),
		cmocka_unit_test(test_04_integer_outside_slot),
		cmocka_unit_test(test_05_no_rule),
		cmocka_unit_test(test_06_ambiguous_slot),
		cmocka_unit_test(test_07_renaming),
		cmocka_unit_test(test_08_unsafe_values),
		cmocka_unit_test(test_09_overlapping_accesses),
		cmocka_unit_test(test_10_fit_refusals),
		cmocka_unit_test(test_11_end_to_end_gcc),
		cmocka_unit_test(test_12_random_rules),
		cmocka_unit_test(test_13_power_of_two_multiplier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
