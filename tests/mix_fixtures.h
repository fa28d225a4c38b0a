/* mix_fixtures.h: the callgrind and objdump fixtures (tests/fixtures/mix_small.*) loaded
 * for test_cgparse, test_disasm and test_mix (include after cmocka.h). */
#ifndef FL_MIX_FIXTURES_H
#define FL_MIX_FIXTURES_H

#include <stdio.h>

#include "cgparse.h"
#include "disasm.h"
#include "testutil.h"

static inline const char *fixture(const char *name)
{
	return test_src_file("tests/fixtures", name);
}

static inline int parse_text(struct fl_cg *cg, const char *text, size_t len, char *err,
	size_t errlen)
{
	FILE *f = fmemopen((void *)text, len, "r");
	assert_non_null(f);
	int rc = fl_cg_parse_stream(cg, f, "t", err, errlen);
	fclose(f);
	return rc;
}

static inline void load_fixture_cg(struct fl_cg *cg)
{
	char err[256];
	fl_cg_init(cg);
	if (fl_cg_parse_file(cg, fixture("mix_small.cg"), err, sizeof err) != 0)
		fail_msg("%s", err);
}

static inline void load_fixture_dis(struct fl_dis *d)
{
	char err[256];
	fl_dis_init(d);
	if (fl_dis_parse_file(d, fixture("mix_small.objdump"), err, sizeof err) != 0)
		fail_msg("%s", err);
}

#endif
