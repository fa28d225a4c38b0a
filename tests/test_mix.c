/* test_mix.c: callgrind parser, objdump classifier, instruction mix (fixtures and a live run). */
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

#include "cgparse.h"
#include "disasm.h"
#include "mix.h"

/* ---- helpers ---- */

/* Source tree: $FL_SRCDIR, else FL_SRC_DATA_DIR without its "/runtime/data". */
static const char *src_dir(void)
{
	static char dir[4096];
	const char *e = getenv("FL_SRCDIR");
	if (e && *e)
		return e;
	snprintf(dir, sizeof dir, "%s", FL_SRC_DATA_DIR);
	char *p = strstr(dir, "/runtime/data");
	if (p)
		*p = 0;
	return dir;
}

static const char *fixture(const char *name)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/tests/fixtures/%s", src_dir(), name);
	return path;
}

static int parse_text(struct fl_cg *cg, const char *text, size_t len, char *err,
	size_t errlen)
{
	FILE *f = fmemopen((void *)text, len, "r");
	assert_non_null(f);
	int rc = fl_cg_parse_stream(cg, f, "t", err, errlen);
	fclose(f);
	return rc;
}

static void load_fixture_cg(struct fl_cg *cg)
{
	char err[256];
	fl_cg_init(cg);
	if (fl_cg_parse_file(cg, fixture("mix_small.cg"), err, sizeof err) != 0)
		fail_msg("%s", err);
}

static void load_fixture_dis(struct fl_dis *d)
{
	char err[256];
	fl_dis_init(d);
	if (fl_dis_parse_file(d, fixture("mix_small.objdump"), err, sizeof err) != 0)
		fail_msg("%s", err);
}

/* ---- callgrind parser ---- */

/* 1. Totals, events and objects of the hand-written file; declared totals agree. */
static void test_cg_totals(void **state)
{
	(void)state;
	struct fl_cg cg;
	load_fixture_cg(&cg);
	static const char *const ev[] = { "Ir", "Dr", "Dw", "Bc", "Bcm" };
	static const uint64_t tot[] = { 60, 15, 14, 3, 1 };
	assert_int_equal(cg.nevents, 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_string_equal(cg.events[i], ev[i]);
		assert_int_equal(cg.totals[i], tot[i]);
		assert_int_equal(cg.declared[i], tot[i]);
	}
	assert_true(cg.has_declared);
	assert_true(cg.has_instr);
	assert_int_equal(cg.ir_event, 0);
	assert_int_equal(fl_cg_event(&cg, "Bcm"), 4);
	assert_int_equal(fl_cg_event(&cg, "I1mr"), -1);
	assert_int_equal(cg.nobjs, 2);
	assert_string_equal(cg.objs[0], "/build/tests/prog");
	assert_string_equal(cg.objs[1], "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(cg.ninsns, 25);
	assert_int_equal(cg.nfiles, 1);
	/* Per-object self costs: libc's 7 Ir, the rest in prog; every event adds up. */
	assert_int_equal(fl_cg_obj_total(&cg, 1, 0), 7);
	for (int e = 0; e < 5; e++)
		assert_int_equal(fl_cg_obj_total(&cg, 0, e) + fl_cg_obj_total(&cg, 1, e), tot[e]);
	assert_int_equal(fl_cg_obj_total(&cg, 2, 0), 0);
	assert_int_equal(fl_cg_obj_total(&cg, FL_CG_NO_OBJ, 0), 0);
	fl_cg_free(&cg);
}

/* 2. Per-address sums across contexts, relative positions, jumps, and call sites whose
 * inclusive cost is not self cost. */
static void test_cg_addresses(void **state)
{
	(void)state;
	struct fl_cg cg;
	load_fixture_cg(&cg);
	const struct fl_cg_insn *e;
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1149));
	assert_int_equal(e->ir, 1);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x114d)); /* 1 + 2 from two blocks */
	assert_int_equal(e->ir, 3);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1166)); /* call: 3 self, 15 inclusive */
	assert_int_equal(e->ir, 3);
	assert_int_equal(e->calls, 3);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x116b));
	assert_int_equal(e->ir, 3);
	assert_int_equal(e->jumps, 3);
	assert_int_equal(e->njcnd, 0);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1174));
	assert_int_equal(e->ir, 3);
	assert_int_equal(e->jcnd_taken, 2);
	assert_int_equal(e->jcnd_exec, 3);
	assert_int_equal(e->njcnd, 1);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1177));
	assert_int_equal(e->ir, 1);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1187));
	assert_int_equal(e->ir, 3);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x11c1)); /* main: call site only */
	assert_int_equal(e->ir, 0);
	assert_int_equal(e->calls, 1);
	assert_int_equal(e->obj, 0);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1300)); /* decimal absolute position */
	assert_int_equal(e->ir, 1);
	/* libc's entries share addresses with prog's and stay apart. */
	assert_non_null(e = fl_cg_find(&cg, 1, 0x1154));
	assert_int_equal(e->ir, 3);
	assert_int_equal(e->obj, 1);
	assert_non_null(e = fl_cg_find(&cg, 1, 0x1150));
	assert_int_equal(e->ir, 4);
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1150));
	assert_int_equal(e->ir, 3);
	assert_null(fl_cg_find(&cg, 1, 0x1149));
	assert_null(fl_cg_find(&cg, FL_CG_NO_OBJ, 0x1149));
	assert_null(fl_cg_find(&cg, 0, 0x1179));
	/* Self Ir over addresses equals the Ir total. */
	uint64_t sum = 0;
	for (size_t i = 0; i < cg.ninsns; i++)
		sum += cg.insns[i].ir;
	assert_int_equal(sum, 60);
	assert_int_equal(fl_cg_sort(&cg), 0);
	for (size_t i = 1; i < cg.ninsns; i++)
		assert_true(cg.insns[i - 1].obj < cg.insns[i].obj ||
			(cg.insns[i - 1].obj == cg.insns[i].obj &&
			cg.insns[i - 1].addr < cg.insns[i].addr));
	assert_non_null(e = fl_cg_find(&cg, 0, 0x1174));
	assert_int_equal(e->jcnd_taken, 2);
	fl_cg_free(&cg);
}

/* 3. Files of runs of one build accumulate; a file with other events is refused. */
static void test_cg_two_files(void **state)
{
	(void)state;
	struct fl_cg cg;
	char err[256];
	load_fixture_cg(&cg);
	assert_int_equal(fl_cg_parse_file(&cg, fixture("mix_small.cg"), err, sizeof err), 0);
	assert_int_equal(cg.nfiles, 2);
	assert_int_equal(cg.totals[0], 120);
	assert_int_equal(cg.declared[0], 120);
	assert_int_equal(cg.ninsns, 25);
	assert_int_equal(fl_cg_find(&cg, 0, 0x1174)->jcnd_taken, 4);
	static const char other[] = "positions: instr line\nevents: Ir Dr\n0x10 1 1\n";
	assert_int_equal(parse_text(&cg, other, sizeof other - 1, err, sizeof err), -1);
	assert_non_null(strstr(err, "t:2: events differ"));
	fl_cg_free(&cg);
}

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

/* 5. Malformed input: an error naming the line, never a crash. */
static void test_cg_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t len;        /* 0: strlen */
		const char *where; /* "t:LINE:" */
		const char *what;
	} cases[] = {
		{ "events: Ir\nfoo bar\n", 0, "t:2:", "unrecognised line" },
		{ "positions: instr line\nevents: Ir\nfn=(1) f\n0x10 1 zz\n", 0, "t:4:", "bad count" },
		{ "events: Ir\n1 2 3\n", 0, "t:2:", "more counts" },
		{ "1 2\n", 0, "t:1:", "before events" },
		{ "events: Ir\nfn=(3)\n", 0, "t:2:", "used before definition" },
		{ "events: Ir\ncob=(7)\n", 0, "t:2:", "used before definition" },
		{ "positions: instr\nevents: Ir\n0x10 1\njcnd=3/2 +4\n*\n", 0, "t:4:", "taken 3 > executed 2" },
		{ "positions: instr\nevents: Ir\n0x10 1\njcnd=3 +4\n*\n", 0, "t:4:", "jcnd=" },
		{ "positions: instr\nevents: Ir\n0x10 1\ncalls=1 0x20\nfn=x\n", 0, "t:5:",
			"followed by a cost line" },
		{ "positions: instr\nevents: Ir\n0x10 1\ncalls=1 0x20\n", 0, "t:4:", "file ends after" },
		{ "version: 2\n", 0, "t:1:", "unsupported format version" },
		{ "events: Ir\n99999999999999999999 1\n", 0, "t:2:", "bad position" },
		{ "positions: instr\nevents: Ir\n0x10 1\n-0x20 1\n", 0, "t:4:", "bad position" },
		{ "events: Ir\n0x1g 1\n", 0, "t:2:", "bad position" },
		{ "events: Ir\nxyz=1\n", 0, "t:2:", "unknown specification" },
		{ "positions: instr\nevents: Ir\njump=1\n", 0, "t:3:", "1 position(s) expected" },
		{ "positions: instr\nevents: Ir\njump=1 +1 junk\n*\n", 0, "t:3:", "unexpected text" },
		{ "events: Ir\nsummary: 1 2\n", 0, "t:2:", "more counts" },
		{ "summary: 1\n", 0, "t:1:", "before events" },
		{ "positions: instr bogus\n", 0, "t:1:", "unsupported" },
		{ "events: Ir\ncalls=x 1\n", 0, "t:2:", "calls=: bad count" },
		{ "events: Ir\n1\0 2\n", 16, "t:2:", "NUL byte" },
		{ "events: Ir\nfn=(1\n", 0, "t:2:", "bad name id" },
		{ "events: Ir\nfn=\n", 0, "t:2:", "empty name" },
		{ "events: Ir\nevents: Ir\n", 0, "t:2:", "must come once" },
		{ "events: Ir\n1 2\npositions: instr\n", 0, "t:3:", "before any cost line" },
		{ "events: Ir\n+ 1\n", 0, "t:2:", "bad position" },
		{ "events: Ir\n1 -5\n", 0, "t:2:", "bad count" },
		{ "", 0, "t:0:", "no events" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct fl_cg cg;
		char err[256] = "";
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		fl_cg_init(&cg);
		int rc = len ? parse_text(&cg, cases[i].text, len, err, sizeof err) : -2;
		if (rc == -2) {
			/* fmemopen refuses size 0 on some libcs: use an empty file instead. */
			FILE *f = tmpfile();
			assert_non_null(f);
			rc = fl_cg_parse_stream(&cg, f, "t", err, sizeof err);
			fclose(f);
		}
		if (rc != -1 || !strstr(err, cases[i].where) || !strstr(err, cases[i].what))
			fail_msg("case %zu: rc %d, err '%s', want '%s ... %s'", i + 1, rc, err,
				cases[i].where, cases[i].what);
		fl_cg_free(&cg);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 16);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 16, f);
	assert_true(*len > 0 && *len < 1 << 16);
	fclose(f);
	return buf;
}

/* 6. Every single-byte change and every truncation of the fixtures parses or fails with
 * a located error; none crashes (run under the sanitizers). */
static void test_parsers_mutated(void **state)
{
	(void)state;
	static const char subst[] = { ' ', 'x', '(', ')', '-', '+', '*', '\n', '9', '=', '/',
		':', '\0' };
	static const char *const files[] = { "mix_small.cg", "mix_small.objdump" };
	for (int which = 0; which < 2; which++) {
		size_t len;
		char *orig = slurp(fixture(files[which]), &len);
		char *buf = malloc(len);
		assert_non_null(buf);
		size_t ok = 0, failed = 0;
		for (size_t at = 0; at < len; at++)
			for (size_t k = 0; k <= sizeof subst; k++) {
				char err[256] = "";
				size_t n = len;
				memcpy(buf, orig, len);
				if (k == sizeof subst)
					n = at + 1; /* truncated after byte at */
				else
					buf[at] = subst[k];
				FILE *f = fmemopen(buf, n, "r");
				assert_non_null(f);
				int rc;
				if (which == 0) {
					struct fl_cg cg;
					fl_cg_init(&cg);
					rc = fl_cg_parse_stream(&cg, f, "t", err, sizeof err);
					fl_cg_free(&cg);
				} else {
					struct fl_dis d;
					fl_dis_init(&d);
					rc = fl_dis_parse_stream(&d, f, "t", err, sizeof err);
					fl_dis_free(&d);
				}
				fclose(f);
				if (rc == 0) {
					ok++;
				} else if (rc == -1 && strncmp(err, "t:", 2) == 0) {
					failed++;
				} else {
					fail_msg("%s: byte %zu variant %zu: rc %d err '%s'", files[which], at,
						k, rc, err);
				}
			}
		/* Both outcomes occur: the check is not vacuous. */
		assert_true(ok > 0);
		assert_true(which == 1 || failed > 0);
		free(buf);
		free(orig);
	}
}

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
		{ "movsd", "0x18(%rdi),%xmm0", FL_DIS_NONE, F | L },
		{ "movsd", "%xmm0,0x20(%rdi)", FL_DIS_NONE, F | S },
		{ "vmovsd", "%xmm0,(%rax)", FL_DIS_NONE, F | S },
		{ "vfmadd231sd", "(%rax),%xmm1,%xmm0", FL_DIS_NONE, F | L },
		{ "cvtsi2sd", "%eax,%xmm0", FL_DIS_NONE, F },
		{ "cvtsi2sdl", "0x8(%rax),%xmm0", FL_DIS_NONE, F | L },
		{ "cvttsd2si", "%xmm0,%eax", FL_DIS_NONE, F },
		{ "ucomisd", "0x8(%rax),%xmm0", FL_DIS_NONE, F | L },
		{ "divsd", "%xmm1,%xmm0", FL_DIS_NONE, F | Q },
		{ "sqrtss", "%xmm1,%xmm0", FL_DIS_NONE, F | Q },
		{ "rsqrtss", "%xmm1,%xmm0", FL_DIS_NONE, F },
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
		{ "fldl", "0x8(%rsp)", FL_DIS_NONE, F | L },
		{ "fstpl", "0x8(%rsp)", FL_DIS_NONE, F | S },
		{ "fistpll", "(%rax)", FL_DIS_NONE, F | S },
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
		assert_int_equal(m.scalar_fp, 9);
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
		"'%s/tests/fixtures/mix_main.c'", cc, dir, src_dir(), src_dir());
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
	assert_int_equal(m.scalar_fp, 3 * n);
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

static void test_mix_rep(void **state)
{
	(void)state;
	struct fl_cg cg;
	struct fl_dis d;
	struct fl_mix m;
	char err[256];

	assert_true(fl_dis_classify("rep movsb", "%ds:(%rsi),%es:(%rdi)").rep_string);
	assert_true(fl_dis_classify("repz cmpsb", "%es:(%rdi),%ds:(%rsi)").rep_string);
	assert_true(fl_dis_classify("repnz scas", "%es:(%rdi),%al").rep_string);
	assert_true(fl_dis_classify("rep stos", "%rax,%es:(%rdi)").rep_string);
	assert_true(fl_dis_classify("rep lods", "%ds:(%rsi),%al").rep_string);
	assert_false(fl_dis_classify("repz ret", "").rep_string);
	assert_false(fl_dis_classify("movsb", "%ds:(%rsi),%es:(%rdi)").rep_string);
	assert_false(fl_dis_classify("movsd", "%xmm1,%xmm0").rep_string);
	assert_false(fl_dis_classify("rep bsf", "%eax,%ecx").rep_string);

	fl_cg_init(&cg);
	if (parse_text(&cg, rep_cg, sizeof rep_cg - 1, err, sizeof err) != 0)
		fail_msg("%s", err);
	fl_dis_init(&d);
	FILE *f = fmemopen((void *)rep_objdump, sizeof rep_objdump - 1, "r");
	assert_non_null(f);
	if (fl_dis_parse_stream(&d, f, "rep", err, sizeof err) != 0)
		fail_msg("%s", err);
	fclose(f);
	struct fl_mix_obj obj = { .dis = &d, .ob_name = "prog" };
	if (fl_mix_compute(&m, &cg, &obj, 1, err, sizeof err) != 0)
		fail_msg("%s", err);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cg_totals),
		cmocka_unit_test(test_cg_addresses),
		cmocka_unit_test(test_cg_two_files),
		cmocka_unit_test(test_cg_lines_only),
		cmocka_unit_test(test_cg_malformed),
		cmocka_unit_test(test_parsers_mutated),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_dis_fixture),
		cmocka_unit_test(test_dis_raw_and_errors),
		cmocka_unit_test(test_dis_guess_bias),
		cmocka_unit_test(test_mix_fixture),
		cmocka_unit_test(test_mix_snippet_live),
		cmocka_unit_test(test_mix_rep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
