/* fuzz_cgparse.c: callgrind output through fl_cg_parse_stream (via fmemopen), then sort and lookups. */
#include <stdio.h>
#include <stdlib.h>

#include "cgparse.h"
#include "fuzz.h"

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_cgparse: %s\n", what);
	abort();
}

/* The input is parsed twice into one result: the second pass is the "several runs of one
 * build" path (same events and positions, totals added). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fl_cg cg;
	char err[512];

	if (size == 0)
		return 0;  /* fmemopen refuses an empty buffer */
	fl_cg_init(&cg);
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fmemopen((void *)data, size, "r");
		int rc;

		if (f == NULL)
			fz_die("fmemopen");
		err[0] = '\0';
		rc = fl_cg_parse_stream(&cg, f, "fuzz.cg", err, sizeof(err));
		fclose(f);
		if (rc != 0) {
			if (err[0] == '\0')
				fz_die("refused without a message");
			fl_cg_free(&cg);
			return 0;
		}
	}
	for (size_t i = 0; i < cg.ninsns; i++)
		if (fl_cg_find(&cg, cg.insns[i].obj, cg.insns[i].addr) != &cg.insns[i])
			fz_die("find misses an entry");
	if (fl_cg_sort(&cg) != 0)
		fz_die("sort: out of memory");
	for (size_t i = 0; i < cg.ninsns; i++) {
		if (fl_cg_find(&cg, cg.insns[i].obj, cg.insns[i].addr) != &cg.insns[i])
			fz_die("find misses an entry after sort");
		if (i > 0 && (cg.insns[i - 1].obj > cg.insns[i].obj ||
		    (cg.insns[i - 1].obj == cg.insns[i].obj &&
		     cg.insns[i - 1].addr >= cg.insns[i].addr)))
			fz_die("sort order");
	}
	for (unsigned e = 0; e < cg.nevents; e++)
		if (fl_cg_event(&cg, cg.events[e]) < 0)
			fz_die("event lookup");
	fl_cg_free(&cg);
	return 0;
}
