/* test_mix.c: the instruction mix (runtime/measure/mix.c): fixtures and a live run. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mix.h"
#include "mix_fixtures.h"
#include "mixneed.h"

/* 4. Line-only profiles (no instr column) give totals but no addresses. */
static void test_cg_lines_only(void **state)
{
	(void)state;
	static const char text[] = "events: Ir Bc\nfl=a.c\nfn=f\n10 5 1\n+2 3\n"
		"cfn=g\ncalls=2 40\n12 100 7\n";
	struct fl_cg cg;
	char err[256];
	fl_cg_init(&cg);
	assert_int_equal(parse_text(&cg, text, sizeof text - 1, err, sizeof err), 0);
	assert_false(cg.has_instr);
	assert_false(cg.has_declared);
	assert_int_equal(cg.totals[0], 8);
	assert_int_equal(cg.totals[1], 1);
	assert_int_equal(cg.ninsns, 0);
	struct fl_mix m;
	assert_int_equal(fl_mix_compute(&m, &cg, NULL, 0, err, sizeof err), -1);
	assert_non_null(strstr(err, "--dump-instr=yes"));
	fl_cg_free(&cg);
}

/* ---- mix ---- */

/* 11. Fixture mix: n = 3 of mix_snippet.S, libc not given, one address off the table. The
 * bias is 0 (callgrind writes file VAs), given or guessed. */
static void test_mix_fixture(void **state)
{
	(void)state;
	struct fl_cg cg;
	struct fl_dis d;
	struct fl_mix m;
	char err[256];
	load_fixture_cg(&cg);
	load_fixture_dis(&d);
	for (int guess = 0; guess < 2; guess++) {
		struct fl_mix_obj obj = { .dis = &d, .bias = guess ? 0x5000 : 0,
			.guess_bias = guess };
		if (fl_mix_compute(&m, &cg, &obj, 1, err, sizeof err) != 0)
			fail_msg("%s", err);
		assert_int_equal(obj.bias, 0);
		assert_int_equal(m.ir_total, 60);
		assert_int_equal(m.insns, 52);
		assert_int_equal(m.cond, 3);
		assert_int_equal(m.cond_taken, 2);
		assert_int_equal(m.jmp, 3);
		assert_int_equal(m.jmp_ind, 0);
		assert_int_equal(m.call, 3);
		assert_int_equal(m.call_ind, 0);
		assert_int_equal(m.ret, 4);
		assert_int_equal(m.loads, 14);
		assert_int_equal(m.stores, 13);
		assert_int_equal(m.rmw, 3);
		assert_int_equal(m.mem, 24);
		assert_int_equal(m.scalar_fp, 3);  /* addsd x3; the movsd around it are moves */
		assert_int_equal(m.vector, 0);
		assert_int_equal(m.int_div, 3);
		assert_int_equal(m.fp_div, 0);
		assert_int_equal(m.other, 16);
		assert_int_equal(m.taken_branches, 12);
		assert_true(m.taken_rate > 0.6666 && m.taken_rate < 0.6667);
		assert_true(m.insns_per_taken > 4.333 && m.insns_per_taken < 4.334);
		assert_int_equal(m.unmapped_addrs, 2);
		assert_int_equal(m.unmapped_ir, 7);
		assert_int_equal(m.unmatched_addrs, 3);
		assert_int_equal(m.unmatched_ir, 1);
		assert_int_equal(m.jcnd_elsewhere, 0);
		assert_false(m.l1i_mpki.available);
		assert_non_null(strstr(m.l1i_mpki.why, "I1mr"));
		assert_non_null(strstr(m.l1i_mpki.why, "--cache-sim=yes"));
		assert_false(m.lli_mpki.available);
		assert_true(m.cond_mpki.available);
		assert_true(m.cond_mpki.value > 16.666 && m.cond_mpki.value < 16.667);
		assert_false(m.ind_mpki.available);
		assert_non_null(strstr(m.ind_mpki.why, "--branch-sim=yes"));
	}
	/* No objects: everything unmapped, rates still there. */
	assert_int_equal(fl_mix_compute(&m, &cg, NULL, 0, err, sizeof err), 0);
	assert_int_equal(m.insns, 0);
	assert_int_equal(m.unmapped_ir, 60);
	assert_int_equal(m.unmapped_addrs, 25);
	assert_true(m.cond_mpki.available);
	/* An ob_name naming nothing in the file. */
	struct fl_mix_obj other = { .dis = &d, .ob_name = "/lib/libnothere.so" };
	assert_int_equal(fl_mix_compute(&m, &cg, &other, 1, err, sizeof err), 0);
	assert_int_equal(m.unmapped_ir, 60);

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	struct fl_mix_obj obj = { .dis = &d };
	assert_int_equal(fl_mix_compute(&m, &cg, &obj, 1, err, sizeof err), 0);
	fl_mix_print(&m, out);
	fclose(out);
	assert_non_null(strstr(text, "52 classified of 60 Ir"));
	assert_non_null(strstr(text, "n/a  (no I1mr event"));
	assert_non_null(strstr(text, "16.667"));
	assert_non_null(strstr(text, "2 addresses (7 Ir) in objects not given"));
	free(text);
	fl_dis_free(&d);
	fl_cg_free(&cg);
}

/* 12. End to end: build mix_snippet.S, run it under callgrind, disassemble it, and
 * compare the measured mix with the counts the code implies (see the .S header). */
static int have(const char *cmd)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s >/dev/null 2>&1", cmd);
	return system(buf) == 0;
}

static void test_mix_snippet_live(void **state)
{
	(void)state;
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char cmd[16384], err[512];
	/* cmocka reports SKIPPED; tests/run.sh takes the reason from the line before it
	 * (and fails the skip in CI's main run, which installs valgrind and binutils). */
	if (!have("valgrind --version")) {
		printf("skip: valgrind not installed (apt-get install valgrind)\n");
		skip();
	}
	if (!have("objdump --version") || !have("nm --version")) {
		printf("skip: objdump or nm not installed (apt-get install binutils)\n");
		skip();
	}
	char tmpl[] = "/tmp/fl-test-mix.XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	const long n = 1000;
	snprintf(cmd, sizeof cmd, "%s -O1 -o '%s/prog' '%s/tests/fixtures/mix_snippet.S' "
		"'%s/tests/fixtures/mix_main.c'", cc, dir, test_src_dir(), test_src_dir());
	if (system(cmd) != 0)
		fail_msg("build failed: %s", cmd);
	snprintf(cmd, sizeof cmd, "valgrind --tool=callgrind --dump-instr=yes "
		"--collect-jumps=yes --collect-atstart=no --toggle-collect=mix_snippet "
		"--cache-sim=yes --branch-sim=yes --callgrind-out-file='%s/cg.out' '%s/prog' %ld "
		">'%s/out.txt' 2>'%s/vg.log'", dir, dir, n, dir, dir);
	if (system(cmd) != 0)
		fail_msg("valgrind failed: %s (see %s/vg.log)", cmd, dir);

	struct fl_cg cg;
	struct fl_dis d;
	struct fl_mix m;
	char path[4200];
	fl_cg_init(&cg);
	fl_dis_init(&d);
	snprintf(path, sizeof path, "%s/cg.out", dir);
	if (fl_cg_parse_file(&cg, path, err, sizeof err) != 0)
		fail_msg("%s", err);
	snprintf(path, sizeof path, "%s/prog", dir);
	if (fl_dis_load(&d, path, err, sizeof err) != 0)
		fail_msg("%s", err);
	struct fl_mix_obj obj = { .dis = &d, .guess_bias = 1 };
	if (fl_mix_compute(&m, &cg, &obj, 1, err, sizeof err) != 0)
		fail_msg("%s", err);
	fl_mix_print(&m, stdout);

	/* Callgrind wrote file VAs: the guessed bias is 0 although the (PIE) program ran at
	 * another address. */
	unsigned long long runtime = 0, file_va = 0;
	snprintf(path, sizeof path, "%s/out.txt", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "mix_snippet %llx", &runtime), 1);
	fclose(f);
	snprintf(cmd, sizeof cmd, "nm '%s/prog'", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	char line[512];
	while (fgets(line, sizeof line, f))
		if (strstr(line, " T mix_snippet\n"))
			file_va = strtoull(line, NULL, 16);
	pclose(f);
	assert_true(file_va != 0);
	printf("mix_snippet: runtime 0x%llx, file VA 0x%llx, bias guessed from callgrind "
		"addresses 0x%llx\n", runtime, file_va, (unsigned long long)obj.bias);
	assert_int_equal(obj.bias, 0);

	assert_int_equal(m.ir_total, 16 * n + 4);
	assert_int_equal(m.insns, 16 * n + 4);
	assert_int_equal(m.unmatched_addrs, 0);
	assert_int_equal(m.unmapped_ir, 0);
	assert_int_equal(m.jcnd_elsewhere, 0);
	assert_int_equal(m.loads, 4 * n + 2);
	assert_int_equal(m.stores, 4 * n + 1);
	assert_int_equal(m.rmw, n);
	assert_int_equal(m.cond, n);
	assert_int_equal(m.cond_taken, n - 1);
	assert_int_equal(m.jmp, n);
	assert_int_equal(m.jmp_ind, 0);
	assert_int_equal(m.call, n);
	assert_int_equal(m.call_ind, 0);
	assert_int_equal(m.ret, n + 1);
	assert_int_equal(m.scalar_fp, n);  /* addsd; the two movsd are moves */
	assert_int_equal(m.vector, 0);
	assert_int_equal(m.int_div, n);
	assert_int_equal(m.fp_div, 0);
	assert_int_equal(m.other, 5 * n + 1);
	assert_int_equal(m.taken_branches, 4 * n);
	assert_true(m.l1i_mpki.available);
	assert_true(m.lli_mpki.available);
	assert_true(m.cond_mpki.available);
	assert_true(m.ind_mpki.available);
	/* callgrind's own totals: every executed instruction is an Ir. */
	assert_true(cg.has_declared);
	assert_int_equal(cg.declared[cg.ir_event], 16 * n + 4);

	fl_dis_free(&d);
	fl_cg_free(&cg);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fail_msg("cannot remove %s", dir);
}


/* 13. rep string instructions count once per execution: executions = Ir - jcnd taken at
 * the instruction (valgrind re-enters it once per iteration). The callgrind text has the
 * shape valgrind 3.19 writes for rep movsb with rcx = 100 called 10 times; repz ret is not
 * a string instruction; a rep stos without jcnd data stays uncorrected and is counted. */
static const char rep_objdump[] =
	"prog:     file format elf64-x86-64\n\n\n"
	"Disassembly of section .text:\n\n"
	"0000000000001129 <cp>:\n"
	"    1129:\tmov    %rdi,%rcx\n"
	"    112c:\tlea    0x3f0d(%rip),%rdi        # 5040 <a>\n"
	"    1133:\tlea    0x2f06(%rip),%rsi        # 4040 <b>\n"
	"    113a:\trep movsb %ds:(%rsi),%es:(%rdi)\n"
	"    113c:\tret\n"
	"    113d:\tnop\n"
	"0000000000001150 <r>:\n"
	"    1150:\trepz ret\n"
	"    1152:\tnop\n"
	"0000000000001160 <st>:\n"
	"    1160:\trep stos %al,%es:(%rdi)\n"
	"    1162:\tret\n";
static const char rep_cg[] =
	"version: 1\n"
	"positions: instr\n"
	"events: Ir I1mr\n"
	"ob=prog\n"
	"fn=cp\n"
	"0x1129 10 1\n"
	"+3 10\n"
	"+7 10\n"
	"+7 10 20\n"
	"jcnd=10/10 *\n"
	"*\n"
	"* 1000\n"
	"jcnd=990/1000 *\n"
	"*\n"
	"+2 10\n"
	"fn=r\n"
	"0x1150 5\n"
	"fn=st\n"
	"0x1160 50\n"
	"+2 50\n";

/* The mix of callgrind text cg over one object "prog" disassembled from objdump text. */
static void mix_of_text(const char *cg_text, size_t cg_len, const char *objdump, size_t od_len,
	struct fl_cg *cg, struct fl_dis *d, struct fl_mix *m)
{
	char err[256];

	fl_cg_init(cg);
	if (parse_text(cg, cg_text, cg_len, err, sizeof err) != 0)
		fail_msg("%s", err);
	fl_dis_init(d);
	FILE *f = fmemopen((void *)objdump, od_len, "r");
	assert_non_null(f);
	if (fl_dis_parse_stream(d, f, "prog", err, sizeof err) != 0)
		fail_msg("%s", err);
	fclose(f);
	struct fl_mix_obj obj = { .dis = d, .ob_name = "prog" };
	if (fl_mix_compute(m, cg, &obj, 1, err, sizeof err) != 0)
		fail_msg("%s", err);
}

static void test_mix_rep(void **state)
{
	(void)state;
	struct fl_cg cg;
	struct fl_dis d;
	struct fl_mix m;

	assert_true(fl_dis_classify("rep movsb", "%ds:(%rsi),%es:(%rdi)").rep_string);
	assert_true(fl_dis_classify("repz cmpsb", "%es:(%rdi),%ds:(%rsi)").rep_string);
	assert_true(fl_dis_classify("repnz scas", "%es:(%rdi),%al").rep_string);
	assert_true(fl_dis_classify("rep stos", "%rax,%es:(%rdi)").rep_string);
	assert_true(fl_dis_classify("rep lods", "%ds:(%rsi),%al").rep_string);
	assert_false(fl_dis_classify("repz ret", "").rep_string);
	assert_false(fl_dis_classify("movsb", "%ds:(%rsi),%es:(%rdi)").rep_string);
	assert_false(fl_dis_classify("movsd", "%xmm1,%xmm0").rep_string);
	assert_false(fl_dis_classify("rep bsf", "%eax,%ecx").rep_string);

	mix_of_text(rep_cg, sizeof rep_cg - 1, rep_objdump, sizeof rep_objdump - 1, &cg, &d, &m);
	assert_int_equal(m.ir_total, 1155);
	assert_int_equal(m.rep_ir, 1060);
	assert_int_equal(m.rep_execs, 60);
	assert_int_equal(m.rep_ir_removed, 1000);
	assert_int_equal(m.rep_removed_loads, 1000);   /* movsb iterations read ... */
	assert_int_equal(m.rep_removed_stores, 1000);  /* ... and write */
	assert_int_equal(m.rep_uncorrected_ir, 50);
	assert_int_equal(m.ir_hw, 155);
	assert_true(m.rep_corrected);
	assert_int_equal(m.insns, 155);
	assert_int_equal(m.loads, 10 + 10 + 5 + 50);  /* movsb, ret, repz ret, ret */
	assert_int_equal(m.stores, 10 + 50);          /* movsb once per execution, stos */
	assert_int_equal(m.taken_branches, 10 + 5 + 50);
	assert_int_equal(m.jcnd_elsewhere, 0);
	assert_true(m.insns_per_taken > 2.384 && m.insns_per_taken < 2.385); /* 155 / 65 */
	assert_true(m.l1i_mpki.available);
	assert_true(m.l1i_mpki.value > 135.48 && m.l1i_mpki.value < 135.49); /* 21000 / 155 */

	/* The rates alone cannot correct: per valgrind Ir, and said so. */
	struct fl_mix r;
	memset(&r, 0, sizeof r);
	fl_mix_rates(&r, &cg);
	assert_false(r.rep_corrected);
	assert_int_equal(r.ir_hw, 1155);
	assert_true(r.l1i_mpki.value > 18.18 && r.l1i_mpki.value < 18.19); /* 21000 / 1155 */

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	fl_mix_print(&m, out);
	fclose(out);
	assert_non_null(strstr(text, "rep string correction: 1000 Ir removed (86.580% of Ir"));
	free(text);
	fl_dis_free(&d);
	fl_cg_free(&cg);
}

/* 14. PLT stubs: callgrind (--skip-plt=yes) charges a stub's instructions to the call that
 * went through it, on a cost line at the call's position right after its inclusive line
 * (the shape valgrind 3.19 writes; checked on a program calling malloc 1000 times). They
 * are one indirect jump per stub (the Bi event) and plain instructions, not calls: here f
 * calls g 5 times through a 3-instruction stub (mold's: endbr64, mov $i,%r11d, jmp *GOT)
 * and h tail-calls g 4 times through GNU ld's 1-instruction stub. */
static const char plt_objdump[] =
	"prog:     file format elf64-x86-64\n\n\n"
	"Disassembly of section .text:\n\n"
	"0000000000001000 <f>:\n"
	"    1000:\tpush   %rbx\n"
	"    1001:\tcall   1040 <g>\n"
	"    1006:\tpop    %rbx\n"
	"    1007:\tret\n"
	"0000000000001010 <h>:\n"
	"    1010:\tjmp    1040 <g>\n"
	"    1015:\tnop\n"
	"0000000000001040 <g>:\n"
	"    1040:\tret\n";
static const char plt_cg[] =
	"version: 1\n"
	"positions: instr\n"
	"events: Ir Bc Bi\n"
	"ob=prog\n"
	"fn=f\n"
	"0x1000 5\n"
	"+1 5\n"
	"cfn=g\n"
	"calls=5 0x1040\n"
	"* 100\n"
	"* 15 0 5\n"
	"+5 5\n"
	"+1 5\n"
	"fn=h\n"
	"0x1010 4\n"
	"cfn=g\n"
	"calls=4 0x1040\n"
	"* 80\n"
	"* 4 0 4\n"
	"fn=g\n"
	"0x1040 9\n";

static void test_mix_plt(void **state)
{
	(void)state;
	struct fl_cg cg;
	struct fl_dis d;
	struct fl_mix m;

	mix_of_text(plt_cg, sizeof plt_cg - 1, plt_objdump, sizeof plt_objdump - 1, &cg, &d, &m);
	assert_int_equal(cg.totals[cg.ir_event], 5 + 5 + 15 + 5 + 5 + 4 + 4 + 9);
	assert_int_equal(m.insns, 52);
	assert_int_equal(m.plt_ir, 19);
	assert_int_equal(m.call, 5);            /* the call instruction's own 5, not 20 */
	assert_int_equal(m.jmp, 4);             /* h's jmp itself */
	assert_int_equal(m.jmp_ind, 5 + 4);     /* one GOT jump per stub */
	assert_int_equal(m.ret, 5 + 9);
	assert_int_equal(m.other, 10);          /* the mold stubs' endbr64 and mov */
	/* push, call's return address, pop, ret (f's and g's), the stubs' GOT loads */
	assert_int_equal(m.loads, 5 + 5 + 9 + 9);
	assert_int_equal(m.stores, 5 + 5);
	assert_int_equal(m.taken_branches, 5 + 4 + 9 + 14);
	fl_dis_free(&d);
	fl_cg_free(&cg);
}

/* What one part would need for the whole to meet a mix bound, the rest held. */
static void test_mix_need(void **state)
{
	(void)state;
	struct fl_mix all = { .insns = 1000, .cond = 100, .loads = 250, .stores = 100,
		.call = 10, .ret = 20, .taken_branches = 100 };
	struct fl_mix gen = { .insns = 300, .cond = 60, .loads = 90, .stores = 30, .call = 2,
		.ret = 3, .taken_branches = 20 };
	struct fl_mix rest, none = { 0 };

	fl_mix_minus(&all, &gen, &rest);
	assert_int_equal(rest.insns, 700);
	assert_int_equal(rest.cond, 40);
	assert_int_equal(rest.taken_branches, 80);
	assert_float_equal(fl_mix_metric_value(&gen, FL_MM_COND), 20.0, 1e-9);
	assert_float_equal(fl_mix_metric_value(&all, FL_MM_MEM), 35.0, 1e-9);
	assert_float_equal(fl_mix_metric_value(&gen, FL_MM_IPTB), 15.0, 1e-9);
	assert_true(isnan(fl_mix_metric_value(&none, FL_MM_COND)));
	/* 15% of 1000 = 150 conditional branches: the rest has 40, so 110 of gen's 300. */
	assert_float_equal(fl_mix_need(&all, &gen, FL_MM_COND, 15), 100.0 * 110 / 300, 1e-9);
	assert_float_equal(fl_mix_need(&all, &rest, FL_MM_COND, 15), 100.0 * 90 / 700, 1e-9);
	/* The whole's share exactly: the part needs what it runs. */
	assert_float_equal(fl_mix_need(&all, &gen, FL_MM_COND, 10), 100.0 * 60 / 300, 1e-9);
	/* 40% would take 360 of gen's 300 instructions: out of reach. */
	assert_true(isinf(fl_mix_need(&all, &gen, FL_MM_COND, 40)) &&
		fl_mix_need(&all, &gen, FL_MM_COND, 40) > 0);
	/* Loads+stores can reach 200% of a part (read-modify-writes count twice). */
	assert_float_equal(fl_mix_need(&all, &gen, FL_MM_MEM, 46), 100.0 * (460 - 230) / 300,
		1e-9);
	/* Calls+returns at most 1.5%: the rest alone has 25 of 1000, so no part can fix it. */
	assert_true(isinf(fl_mix_need(&all, &gen, FL_MM_CALLRET, 1.5)) &&
		fl_mix_need(&all, &gen, FL_MM_CALLRET, 1.5) < 0);
	assert_float_equal(fl_mix_points(&all, &rest, FL_MM_CALLRET), 2.5, 1e-9);
	assert_true(isnan(fl_mix_points(&all, &rest, FL_MM_IPTB)));
	/* Instructions per taken branch: 1000 / 12 allows 83.3 taken, the rest takes 80, so
	 * gen may take 3.33: 90 instructions each. At 18 the rest alone is past it. */
	assert_float_equal(fl_mix_need(&all, &gen, FL_MM_IPTB, 12), 300 / (1000.0 / 12 - 80),
		1e-9);
	assert_true(isinf(fl_mix_need(&all, &gen, FL_MM_IPTB, 18)));
	assert_true(isnan(fl_mix_need(&all, &none, FL_MM_COND, 15)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cg_lines_only),
		cmocka_unit_test(test_mix_fixture),
		cmocka_unit_test(test_mix_snippet_live),
		cmocka_unit_test(test_mix_rep),
		cmocka_unit_test(test_mix_plt),
		cmocka_unit_test(test_mix_need),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
