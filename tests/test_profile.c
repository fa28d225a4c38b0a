/* test_profile.c: tests for runtime/measure/profile.c: 7. profile rules: parse, errors,
 * classification, 8. perf script lines into categories; the shipped rules, 9. a share's
 * 95% interval.
 * Build: ninja tests/test_profile.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile.h"
#include "testutil.h"

static int parse_rules(const char *text, struct fm_prof_rules *rs, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(f);
	int rc = fm_prof_rules_parse(f, "r", rs, err, len);
	fclose(f);
	return rc;
}

/* 7. */
static void test_prof_rules(void **state)
{
	(void)state;
	struct fm_prof_rules rs;
	char err[256];
	assert_int_equal(parse_rules("# c\n\nencryption dso=libcrypto*  # tls\n"
		"kernel_network dso=[[]kernel.kallsyms[]] sym=tcp_*\n"
		"rpc_io comm=leaf-io-* sym=memcpy*\n", &rs, err, sizeof err), 0);
	assert_int_equal(rs.n, 3);
	assert_int_equal(fm_prof_classify(&rs, "EVP_Cipher", "/usr/lib/libcrypto.so.3", "x"),
		FM_PROF_CRYPTO);
	assert_int_equal(fm_prof_classify(&rs, "tcp_sendmsg", "[kernel.kallsyms]", "x"),
		FM_PROF_KNET);
	assert_int_equal(fm_prof_classify(&rs, "schedule", "[kernel.kallsyms]", "x"),
		FM_PROF_OTHER);
	/* Every condition must match. */
	assert_int_equal(fm_prof_classify(&rs, "memcpy_avx", "libc.so.6", "leaf-io-0"),
		FM_PROF_RPC);
	assert_int_equal(fm_prof_classify(&rs, "memcpy_avx", "libc.so.6", "leaf-rank-0"),
		FM_PROF_OTHER);
	fm_prof_rules_free(&rs);
	static const struct { const char *text, *want; } bad[] = {
		{ "ranking\n", "r:1: a rule needs at least one condition" },
		{ "\nspeed sym=x\n", "r:2: unknown category" },
		{ "other foo=x\n", "r:1: a condition is" },
		{ "other sym=\n", "r:1: empty or too long" },
		{ "other sym=a dso=b comm=c sym=d\n", "r:1: too many conditions" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(parse_rules(bad[i].text, &rs, err, sizeof err), -1);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
			fail_msg("\"%s\": got \"%s\", want \"%s\"", bad[i].text, err, bad[i].want);
		assert_int_equal(rs.n, 0);
	}
	assert_string_equal(fm_prof_cat_id(FM_PROF_KNET), "kernel_network");
	assert_string_equal(fm_prof_cat_label(FM_PROF_RANK), "ranking/prediction");
}

/* 8. */
static void test_prof_script(void **state)
{
	(void)state;
	struct fm_prof_rules rs;
	struct fm_profile p;
	char err[256];
	if (fm_prof_rules_load(test_src_file("runtime/data", "profile_categories.txt"), &rs, err, sizeof err))
		fail_msg("%s", err);
	static const char script[] =
		"  leaf-rank-0  4242  7f0011 P03_v001_c0002 (/b/libfrontload-extract.so)\n"
		"  leaf-rank-0  4242  7f0012 P03_v001_c0002 (/b/libfrontload-extract.so)\n"
		"  leaf-rank-0  4242  55aa01 fl_plan_run (/b/frontload-leaf)\n"
		"  leaf-rank-1  4243  55aa02 fl_sp_score (/b/frontload-leaf)\n"
		"  leaf-rank-1  4243  7f2201 sgemm_kernel_HASWELL (/usr/lib/libopenblas.so.0)\n"
		"  leaf-fanout-0 4250 7f3301 aesni_gcm_encrypt (/usr/lib/libcrypto.so.3)\n"
		"  leaf-fanout-0 4250 7f4401 ZSTD_compressBlock_fast (/usr/lib/libzstd.so.1)\n"
		"  leaf-io-0    4260  7f5501 evbuffer_add (/usr/lib/libevent-2.1.so.7)\n"
		"  leaf-rank-0  4242  7f6601 protobuf_c_message_unpack (/usr/lib/libprotobuf-c.so.1)\n"
		"  leaf-rank-0  4242  7f6602 protobuf_c_message_pack (/usr/lib/libprotobuf-c.so.1)\n"
		"  leaf-io-0    4260  ffff01 tcp_sendmsg_locked ([kernel.kallsyms])\n"
		"  leaf-io-0    4260  ffff02 finish_task_switch ([kernel.kallsyms])\n"
		"  leaf-rank-0  4242  7f7701 __memmove_avx_unaligned_erms (/usr/lib/libc.so.6)\n"
		"  leaf-rank-0  4242  7f7702 [unknown] ([unknown])\n"
		"not a sample line\n";
	FILE *f = fmemopen((void *)script, sizeof script - 1, "r");
	memset(&p, 0, sizeof p);
	assert_int_equal(fm_prof_parse_script(f, &rs, &p, err, sizeof err), 0);
	fclose(f);
	assert_int_equal(p.total, 14);
	assert_int_equal(p.kernel, 2);
	const uint64_t want[FM_PROF_N] = { 3, 1, 1, 1, 1, 1, 1, 1, 1, 3 };
	for (int c = 0; c < FM_PROF_N; c++)
		if (p.samples[c] != want[c])
			fail_msg("%s: %llu samples, want %llu", fm_prof_cat_id((enum fm_prof_cat)c),
				(unsigned long long)p.samples[c], (unsigned long long)want[c]);
	/* By pool (thread name): the FANOUT thread's 2 samples are encryption and zstd. */
	assert_int_equal(p.pool[FM_PPOOL_FANOUT][FM_PROF_CRYPTO], 1);
	assert_int_equal(p.pool[FM_PPOOL_FANOUT][FM_PROF_COMPRESS], 1);
	assert_int_equal(p.pool[FM_PPOOL_RANKER][FM_PROF_EXTRACT], 3);
	assert_int_equal(p.pool[FM_PPOOL_IO][FM_PROF_KNET], 1);
	assert_int_equal(fm_prof_pool_of("frontload-leaf"), FM_PPOOL_OTHER);
	assert_int_equal(fm_prof_pool_of(NULL), FM_PPOOL_OTHER);
	/* Symbols sorted by samples: the extractor with 2 first. */
	assert_true(p.nsyms >= 2);
	assert_string_equal(p.syms[0].name, "P03_v001_c0002 (libfrontload-extract.so)");
	assert_int_equal(p.syms[0].samples, 2);
	fm_prof_free(&p);
	fm_prof_rules_free(&rs);
}

/* 9. Wilson intervals: 162 of 4155 samples (the compression share of a validate run on
 * the default build) is 3.90% within 3.35..4.53; 0 of 100 is 0..3.70; none is NAN. */
static void test_share_ci(void **state)
{
	(void)state;
	double lo, hi;

	fm_prof_share_ci95(162, 4155, &lo, &hi);
	assert_true(lo > 3.34 && lo < 3.36 && hi > 4.52 && hi < 4.54);
	fm_prof_share_ci95(0, 100, &lo, &hi);
	assert_true(lo == 0 && hi > 3.69 && hi < 3.71);
	fm_prof_share_ci95(50, 100, &lo, &hi);
	assert_true(fabs((lo + hi) / 2 - 50) < 1e-9 && hi - lo > 19 && hi - lo < 20);
	fm_prof_share_ci95(0, 0, &lo, &hi);
	assert_true(isnan(lo) && isnan(hi));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prof_rules),
		cmocka_unit_test(test_prof_script),
		cmocka_unit_test(test_share_ci),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
