/* test_disasm.c: the instruction classifier and objdump parser (runtime/measure/disasm.c). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mix_fixtures.h"

/* ---- classifier and objdump parser ---- */

/* 7. Instruction texts (objdump AT&T) → flow and flags. */
static void test_classify(void **state)
{
	(void)state;
	enum { L = FL_DIS_LOAD, S = FL_DIS_STORE, F = FL_DIS_SCALAR_FP, V = FL_DIS_VECTOR,
		D = FL_DIS_INT_DIV, Q = FL_DIS_FP_DIV };
	static const struct {
		const char *mnem, *ops;
		enum fl_dis_flow flow;
		unsigned flags;
	} t[] = {
		{ "push", "%rbx", FL_DIS_NONE, S },
		{ "pop", "%rbx", FL_DIS_NONE, L },
		{ "pushq", "0x8(%rax)", FL_DIS_NONE, L | S },
		{ "popq", "(%rax)", FL_DIS_NONE, L | S },
		{ "mov", "(%rdi),%rcx", FL_DIS_NONE, L },
		{ "mov", "%rcx,0x10(%rdi)", FL_DIS_NONE, S },
		{ "mov", "%rcx,%rdx", FL_DIS_NONE, 0 },
		{ "movl", "$0x0,-0x4(%rbp)", FL_DIS_NONE, S },
		{ "mov", "0xe65(%rip),%rax        # 2018 <_IO_stdin_used+0x18>", FL_DIS_NONE, L },
		{ "add", "%rcx,0x8(%rdi)", FL_DIS_NONE, L | S },
		{ "add", "0x8(%rdi),%rcx", FL_DIS_NONE, L },
		{ "add", "$0x1,%r9", FL_DIS_NONE, 0 },
		{ "lock addl", "$0x1,(%rax)", FL_DIS_NONE, L | S },
		{ "incq", "(%rax)", FL_DIS_NONE, L | S },
		{ "shll", "(%rax)", FL_DIS_NONE, L | S },
		{ "btsl", "$0x3,(%rax)", FL_DIS_NONE, L | S },
		{ "btl", "$0x3,(%rax)", FL_DIS_NONE, L },
		{ "cmp", "%rsi,%r9", FL_DIS_NONE, 0 },
		{ "cmpq", "$0x0,0x8(%rax)", FL_DIS_NONE, L },
		{ "test", "%al,(%rdx)", FL_DIS_NONE, L },
		{ "lea", "0x8(%rdi,%rax,4),%rcx", FL_DIS_NONE, 0 },
		{ "nopw", "0x0(%rax,%rax,1)", FL_DIS_NONE, 0 },
		{ "data16 cs nopw", "0x0(%rax,%rax,1)", FL_DIS_NONE, 0 },
		{ "xchg", "%ax,%ax", FL_DIS_NONE, 0 },
		{ "xchg", "%eax,(%rdx)", FL_DIS_NONE, L | S },
		{ "lock cmpxchg", "%ecx,(%rdx)", FL_DIS_NONE, L | S },
		{ "mov", "%fs:0x28,%rax", FL_DIS_NONE, L },
		{ "movabs", "$0x1234,%rax", FL_DIS_NONE, 0 },
		{ "movabs", "0x601040,%al", FL_DIS_NONE, L },
		{ "prefetcht0", "(%rax)", FL_DIS_NONE, 0 },
		{ "sete", "%al", FL_DIS_NONE, 0 },
		{ "sete", "(%rax)", FL_DIS_NONE, S },
		{ "rep stos", "%rax,%es:(%rdi)", FL_DIS_NONE, S },
		{ "rep movsb", "%ds:(%rsi),%es:(%rdi)", FL_DIS_NONE, L | S },
		{ "repz cmpsb", "%es:(%rdi),%ds:(%rsi)", FL_DIS_NONE, L },
		{ "leave", "", FL_DIS_NONE, L },
		{ "enter", "$0x10,$0x0", FL_DIS_NONE, S },
		{ "popcnt", "%rdi,%rax", FL_DIS_NONE, 0 },
		{ "shlx", "%rax,(%rdi),%rcx", FL_DIS_NONE, L },
		{ "imul", "$0x3,(%rax),%eax", FL_DIS_NONE, L },
		{ "mull", "(%rax)", FL_DIS_NONE, L },
		{ "stmxcsr", "0x4(%rsp)", FL_DIS_NONE, S },
		{ "ldmxcsr", "0x4(%rsp)", FL_DIS_NONE, L },
		{ "endbr64", "", FL_DIS_NONE, 0 },
		{ "(bad)", "", FL_DIS_NONE, 0 },
		{ "syscall", "", FL_DIS_NONE, 0 },
		{ "xbegin", "11a0 <f+0x57>", FL_DIS_NONE, 0 },
		{ "jne", "114d <mix_snippet+0x4>", FL_DIS_COND, 0 },
		{ "jne,pt", "114d", FL_DIS_COND, 0 },
		{ "jrcxz", "1150 <f+0x7>", FL_DIS_COND, 0 },
		{ "loop", "1150 <f+0x7>", FL_DIS_COND, 0 },
		{ "jmp", "116d <mix_snippet+0x24>", FL_DIS_JMP, 0 },
		{ "bnd jmp", "1020 <_init+0x20>", FL_DIS_JMP, 0 },
		{ "jmp", "*%rax", FL_DIS_JMP_IND, 0 },
		{ "notrack jmp", "*%rax", FL_DIS_JMP_IND, 0 },
		{ "jmp", "*0x2fca(%rip)        # 4000 <printf@GLIBC_2.2.5>", FL_DIS_JMP_IND, L },
		{ "call", "1178 <mix_leaf>", FL_DIS_CALL, S },
		{ "callq", "1178 <mix_leaf>", FL_DIS_CALL, S },
		{ "call", "*%rax", FL_DIS_CALL_IND, S },
		{ "call", "*0x8(%rax)", FL_DIS_CALL_IND, L | S },
		{ "ret", "", FL_DIS_RET, L },
		{ "repz retq", "", FL_DIS_RET, L },
		{ "ret", "$0x8", FL_DIS_RET, L },
		{ "div", "%rcx", FL_DIS_NONE, D },
		{ "idivl", "0x4(%rsp)", FL_DIS_NONE, D | L },
		{ "addsd", "%xmm0,%xmm0", FL_DIS_NONE, F },
		{ "movsd", "0x18(%rdi),%xmm0", FL_DIS_NONE, L },  /* a move: not FP arithmetic */
		{ "movsd", "%xmm0,0x20(%rdi)", FL_DIS_NONE, S },
		{ "vmovsd", "%xmm0,(%rax)", FL_DIS_NONE, S },
		{ "vfmadd231sd", "(%rax),%xmm1,%xmm0", FL_DIS_NONE, F | L },
		{ "cvtsi2sd", "%eax,%xmm0", FL_DIS_NONE, 0 },
		{ "cvtsi2sdl", "0x8(%rax),%xmm0", FL_DIS_NONE, L },
		{ "cvttsd2si", "%xmm0,%eax", FL_DIS_NONE, 0 },
		{ "ucomisd", "0x8(%rax),%xmm0", FL_DIS_NONE, L },
		{ "divsd", "%xmm1,%xmm0", FL_DIS_NONE, F | Q },
		{ "sqrtss", "%xmm1,%xmm0", FL_DIS_NONE, F | Q },
		{ "rsqrtss", "%xmm1,%xmm0", FL_DIS_NONE, 0 },  /* not in Intel's list */
		{ "vrsqrt14sd", "%xmm2,%xmm1,%xmm0", FL_DIS_NONE, F },
		{ "minss", "%xmm1,%xmm0", FL_DIS_NONE, F },
		{ "vfnmsub213ss", "%xmm2,%xmm1,%xmm0", FL_DIS_NONE, F },
		{ "vmovss", "(%rax),%xmm0", FL_DIS_NONE, L },
		{ "cvtss2sd", "%xmm0,%xmm0", FL_DIS_NONE, 0 },
		{ "vdivpd", "%ymm2,%ymm1,%ymm0", FL_DIS_NONE, V | Q },
		{ "addpd", "(%rax),%xmm0", FL_DIS_NONE, V | L },
		{ "vmovups", "%ymm0,(%rdi)", FL_DIS_NONE, V | S },
		{ "pminsd", "%xmm1,%xmm0", FL_DIS_NONE, V },
		{ "vpabsd", "%ymm1,%ymm0", FL_DIS_NONE, V },
		{ "vbroadcastss", "(%rax),%ymm0", FL_DIS_NONE, V | L },
		{ "cvtdq2pd", "%xmm0,%xmm1", FL_DIS_NONE, V },
		{ "pxor", "%xmm0,%xmm0", FL_DIS_NONE, V },
		{ "movq", "%xmm0,%rax", FL_DIS_NONE, V },
		{ "pextrd", "$0x1,%xmm0,(%rax)", FL_DIS_NONE, V | S },
		{ "vpgatherdd", "%ymm2,(%rax,%ymm1,4),%ymm0", FL_DIS_NONE, V | L },
		{ "vaddps", "%zmm2,%zmm1,%zmm0{%k1}{z}", FL_DIS_NONE, V },
		{ "vmovaps", "%zmm0,(%rax){%k1}", FL_DIS_NONE, V | S },
		{ "kmovw", "%k1,%eax", FL_DIS_NONE, V },
		{ "vzeroupper", "", FL_DIS_NONE, V },
		{ "fldl", "0x8(%rsp)", FL_DIS_NONE, L },
		{ "fstpl", "0x8(%rsp)", FL_DIS_NONE, S },
		{ "fistpll", "(%rax)", FL_DIS_NONE, S },
		{ "fxch", "%st(1)", FL_DIS_NONE, 0 },
		{ "fmull", "0x8(%rsp)", FL_DIS_NONE, F | L },
		{ "faddp", "%st,%st(1)", FL_DIS_NONE, F },
		{ "fdivrp", "%st,%st(1)", FL_DIS_NONE, F | Q },
		{ "fsqrt", "", FL_DIS_NONE, F | Q },
		{ "fxsave", "(%rsp)", FL_DIS_NONE, S },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct fl_dis_class c = fl_dis_classify(t[i].mnem, t[i].ops);
		if (c.flow != t[i].flow || c.flags != t[i].flags) {
			char got[96], want[96];
			struct fl_dis_class w = { t[i].flow, t[i].flags, c.rep_string };
			fail_msg("%zu: '%s %s': got %s, want %s", i + 1, t[i].mnem, t[i].ops,
				fl_dis_class_str(c, got, sizeof got), fl_dis_class_str(w, want, sizeof want));
		}
	}
}

/* 8. The objdump fixture: path, order, lengths (none across "..." or sections), text. */
static void test_dis_fixture(void **state)
{
	(void)state;
	struct fl_dis d;
	load_fixture_dis(&d);
	assert_string_equal(d.path, "prog");
	assert_int_equal(d.n, 6 + 20 + 7);
	for (size_t i = 1; i < d.n; i++)
		assert_true(d.insns[i - 1].addr < d.insns[i].addr);
	const struct fl_dis_insn *i;
	assert_non_null(i = fl_dis_find(&d, 0x1150));
	assert_int_equal(i->len, 4);
	assert_string_equal(fl_dis_mnem(&d, i), "add");
	assert_string_equal(fl_dis_ops(&d, i), "%rcx,0x8(%rdi)");
	assert_int_equal(i->cls.flags, FL_DIS_LOAD | FL_DIS_STORE);
	assert_non_null(i = fl_dis_find(&d, 0x1166));
	assert_int_equal(i->cls.flow, FL_DIS_CALL);
	assert_string_equal(fl_dis_ops(&d, i), "1178 <mix_leaf>");
	assert_non_null(i = fl_dis_find(&d, 0x1177));
	assert_int_equal(i->len, 1);
	assert_int_equal(i->cls.flow, FL_DIS_RET);
	assert_non_null(i = fl_dis_find(&d, 0x1187)); /* followed by "...": unknown */
	assert_int_equal(i->len, 0);
	assert_non_null(i = fl_dis_find(&d, 0x103b)); /* last of .plt */
	assert_int_equal(i->len, 0);
	assert_non_null(i = fl_dis_find(&d, 0x1026));
	assert_int_equal(i->len, 6);
	assert_int_equal(i->cls.flow, FL_DIS_JMP_IND);
	assert_non_null(i = fl_dis_find(&d, 0x11a8));
	assert_string_equal(fl_dis_mnem(&d, i), "rep stos");
	assert_string_equal(fl_dis_ops(&d, i), "%rax,%es:(%rdi)");
	assert_int_equal(i->len, 3);
	assert_non_null(i = fl_dis_find(&d, 0x11b7));
	assert_string_equal(fl_dis_mnem(&d, i), "notrack jmp");
	assert_int_equal(i->cls.flow, FL_DIS_JMP_IND);
	assert_non_null(i = fl_dis_find(&d, 0x11a0));
	assert_string_equal(fl_dis_ops(&d, i), "");
	assert_null(fl_dis_find(&d, 0x114b));
	assert_null(fl_dis_find(&d, 0));
	assert_null(fl_dis_find(&d, UINT64_MAX));
	fl_dis_free(&d);
}

static int dis_text(struct fl_dis *d, const char *text, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(f);
	fl_dis_init(d);
	int rc = fl_dis_parse_stream(d, f, "o", err, errlen);
	fclose(f);
	return rc;
}

/* 9. Raw-byte columns give exact lengths (with continuation lines); Intel syntax and
 * repeated addresses are refused. */
static void test_dis_raw_and_errors(void **state)
{
	(void)state;
	struct fl_dis d;
	char err[256];
	static const char raw[] =
		"a.out:     file format elf64-x86-64\n\n"
		"Disassembly of section .text:\n\n"
		"0000000000401000 <f>:\n"
		"  401000:\t55                   \tpush   %rbp\n"
		"  401001:\t66 66 2e 0f 1f 84 00 \tdata16 cs nopw 0x0(%rax,%rax,1)\n"
		"  401008:\t00 00 00 00 \n"
		"  40100c:\tc3                   \tret\n";
	assert_int_equal(dis_text(&d, raw, err, sizeof err), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.path, "a.out");
	assert_int_equal(d.insns[0].len, 1);
	assert_int_equal(d.insns[1].len, 11);
	assert_string_equal(fl_dis_mnem(&d, &d.insns[1]), "data16 cs nopw");
	assert_int_equal(d.insns[2].len, 1);
	assert_int_equal(d.insns[2].cls.flow, FL_DIS_RET);
	fl_dis_free(&d);

	static const char intel[] = "  401000:\tpush   rbp\n  401001:\tmov    rax,QWORD PTR [rdi]\n";
	assert_int_equal(dis_text(&d, intel, err, sizeof err), -1);
	assert_non_null(strstr(err, "o:2: Intel syntax"));
	fl_dis_free(&d);

	static const char dup[] = "Disassembly of section .text:\n     0:\tret\n"
		"Disassembly of section .text.x:\n     0:\tret\n";
	assert_int_equal(dis_text(&d, dup, err, sizeof err), -1);
	assert_non_null(strstr(err, "duplicate address 0x0"));
	fl_dis_free(&d);
}

/* 10. The load bias is found from runtime addresses alone; no match is an error. */
static void test_dis_guess_bias(void **state)
{
	(void)state;
	struct fl_dis d;
	char err[256];
	load_fixture_dis(&d);
	uint64_t addrs[] = { 0x109174, 0x109149, 0x109187, 0x10914d, 0x109166, 0x1091a4 };
	uint64_t bias = 0;
	size_t matched = 0;
	assert_int_equal(fl_dis_guess_bias(&d, addrs, 6, &bias, &matched, err, sizeof err), 0);
	assert_int_equal(bias, 0x108000);
	assert_int_equal(matched, 6);
	uint64_t bad[] = { 0x109001 };
	assert_int_equal(fl_dis_guess_bias(&d, bad, 1, &bias, NULL, err, sizeof err), -1);
	assert_int_equal(fl_dis_guess_bias(&d, addrs, 0, &bias, NULL, err, sizeof err), -1);
	fl_dis_free(&d);
}

/* 6b. Every single-byte change and every truncation of the objdump fixture parses or fails
 * with a located error; none crashes (run under the sanitizers). */
static int parse_dis(FILE *f, char *err, size_t errlen)
{
	struct fl_dis d;
	fl_dis_init(&d);
	int rc = fl_dis_parse_stream(&d, f, "t", err, errlen);
	fl_dis_free(&d);
	return rc;
}

static void test_dis_mutated(void **state)
{
	(void)state;
	size_t ok, failed;
	test_mutations(fixture("mix_small.objdump"), parse_dis, &ok, &failed);
	assert_true(ok > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_dis_fixture),
		cmocka_unit_test(test_dis_raw_and_errors),
		cmocka_unit_test(test_dis_guess_bias),
		cmocka_unit_test(test_dis_mutated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
