/* test_cgparse.c: the callgrind output parser (runtime/measure/cgparse.c) on fixtures. */
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

/* ---- callgrind parser ---- */

/* 1. Totals, events and objects of the hand-written file; declared totals agree; misses
 * kept per address. */
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
	/* Per-address misses: Bcm is kept where it fell and adds up to its total; the events
	 * the file lacks (I1mr, ILmr, Bim) stay 0 at every address. */
	assert_int_equal(cg.miss_event[0], -1);
	assert_int_equal(cg.miss_event[1], -1);
	assert_int_equal(cg.miss_event[2], 4);
	assert_int_equal(cg.miss_event[3], -1);
	uint64_t bcm = 0, other = 0;
	for (size_t i = 0; i < cg.ninsns; i++) {
		bcm += cg.insns[i].bcm;
		other += cg.insns[i].i1mr + cg.insns[i].ilmr + cg.insns[i].bim;
	}
	assert_int_equal(bcm, tot[4]);
	assert_int_equal(other, 0);
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

/* 6. Every single-byte change and every truncation of the fixture parses or fails with
 * a located error; none crashes (run under the sanitizers). */
static int parse_cg(FILE *f, char *err, size_t errlen)
{
	struct fl_cg cg;
	fl_cg_init(&cg);
	int rc = fl_cg_parse_stream(&cg, f, "t", err, errlen);
	fl_cg_free(&cg);
	return rc;
}

static void test_cg_mutated(void **state)
{
	(void)state;
	size_t ok, failed;
	test_mutations(fixture("mix_small.cg"), parse_cg, &ok, &failed);
	/* Both outcomes occur: the check is not vacuous. */
	assert_true(ok > 0);
	assert_true(failed > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cg_totals),
		cmocka_unit_test(test_cg_addresses),
		cmocka_unit_test(test_cg_two_files),
		cmocka_unit_test(test_cg_malformed),
		cmocka_unit_test(test_cg_mutated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
