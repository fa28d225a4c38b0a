/* test_dis_cs.c: tests for runtime/measure/dis_cs.c against disasm.c: 9. Capstone's classes
 * of every instruction of the built frontload-leaf equal objdump's.
 * Build: ninja tests/test_dis_cs.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "dis_cs.h"
#include "disasm.h"

/* 9. The in-process decoder gives the classes objdump's text gives, instruction by
 * instruction, over a whole real object (the leaf: ~29,000 instructions). */
static void test_dis_cs(void **state)
{
	(void)state;
	const char *b = getenv("FL_BUILDDIR");
	char path[4200], err[512];
	struct fl_dis od, cs;
	snprintf(path, sizeof path, "%s/frontload-leaf", b && *b ? b : ".");
	if (access(path, R_OK) != 0)
		skip();
	fl_dis_init(&od);
	if (fl_dis_load(&od, path, err, sizeof err) != 0)
		fail_msg("objdump: %s", err);
	uint64_t *a = malloc(od.n * sizeof *a);
	assert_non_null(a);
	for (size_t i = 0; i < od.n; i++)
		a[i] = od.insns[i].addr;
	if (fm_dis_cs(path, a, od.n, &cs, err, sizeof err) != 0)
		fail_msg("capstone: %s", err);
	assert_true(od.n > 1000);
	assert_int_equal(cs.n, od.n);
	size_t differ = 0;
	for (size_t i = 0; i < od.n; i++) {
		const struct fl_dis_insn *x = &od.insns[i], *y = fl_dis_find(&cs, x->addr);
		assert_non_null(y);
		if (x->cls.flow != y->cls.flow || x->cls.flags != y->cls.flags ||
		    x->cls.rep_string != y->cls.rep_string) {
			if (differ++ < 5)
				print_message("0x%llx: objdump \"%s %s\", capstone \"%s %s\"\n",
					(unsigned long long)x->addr, fl_dis_mnem(&od, x),
					fl_dis_ops(&od, x) ? fl_dis_ops(&od, x) : "", fl_dis_mnem(&cs, y),
					fl_dis_ops(&cs, y));
		}
	}
	assert_int_equal(differ, 0);
	fl_dis_free(&cs);
	/* An address outside the code is left out, not an error; a non-ELF file is one. */
	uint64_t none = 1;
	assert_int_equal(fm_dis_cs(path, &none, 1, &cs, err, sizeof err), 0);
	assert_int_equal(cs.n, 0);
	fl_dis_free(&cs);
	assert_int_equal(fm_dis_cs("/proc/self/status", a, 1, &cs, err, sizeof err), -1);
	free(a);
	fl_dis_free(&od);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dis_cs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
