/* fuzz_disasm.c: objdump text through fl_dis_parse_stream (via fmemopen), then lookups and bias guessing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"
#include "fuzz.h"

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_disasm: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fl_dis d;
	char err[512], cls[128];
	uint64_t addrs[64], bias;
	size_t n = 0, matched;
	FILE *f;
	int rc;

	if (size == 0)
		return 0;  /* fmemopen refuses an empty buffer */
	f = fmemopen((void *)data, size, "r");
	if (f == NULL)
		fz_die("fmemopen");
	fl_dis_init(&d);
	err[0] = '\0';
	rc = fl_dis_parse_stream(&d, f, "fuzz.objdump", err, sizeof(err));
	fclose(f);
	if (rc != 0) {
		if (err[0] == '\0')
			fz_die("refused without a message");
		fl_dis_free(&d);
		return 0;
	}
	for (size_t i = 0; i < d.n; i++) {
		const struct fl_dis_insn *in = &d.insns[i];
		struct fl_dis_class c;

		if (i > 0 && d.insns[i - 1].addr >= in->addr)
			fz_die("table not sorted or has duplicates");
		if (fl_dis_find(&d, in->addr) != in)
			fz_die("find misses an entry");
		/* Classifying the stored text again must give the stored class. */
		c = fl_dis_classify(fl_dis_mnem(&d, in), fl_dis_ops(&d, in));
		if (c.flow != in->cls.flow || c.flags != in->cls.flags)
			fz_die("classify is not a function of the stored text");
		fl_dis_class_str(c, cls, sizeof(cls));
		(void)fl_dis_flow_name(c.flow);
		if (n < sizeof(addrs) / sizeof(addrs[0]))
			addrs[n++] = in->addr + 0x555555554000ull;
	}
	if (n > 0 && fl_dis_guess_bias(&d, addrs, n, &bias, &matched, err, sizeof(err)) == 0 &&
	    matched == 0)
		fz_die("bias guessed from no matches");
	fl_dis_free(&d);
	return 0;
}
