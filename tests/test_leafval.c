/* test_leafval.c: tests for the leaf path of validate (runtime/measure/objects.c, leafwin.c,
 * profile.c): object kinds, thread pools, the whole-window check, the PMU window on hosts
 * with and without counters, the stage window, the profile rules and perf script parsing.
 *
 * 1. object kinds by path      5. PMU window: counted (synthetic) and unsupported
 * 2. pools by function names   6. stage window shares
 * 3. pools from a callgrind    7. profile rules: parse, errors, classification
 *    per-thread file           8. perf script lines into categories; the shipped rules
 * 4. whole window: accepted, every kind of broken window refused
 * 9. Capstone's classes of every instruction of the built frontload-leaf equal objdump's
 * Build: ninja tests/test_leafval.
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
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "dis_cs.h"
#include "disasm.h"
#include "leafwin.h"
#include "objects.h"
#include "profile.h"

/* 1. */
static void test_obj_kinds(void **state)
{
	(void)state;
	static const struct { const char *path; enum fm_obj_kind k; } c[] = {
		{ "/b/libfrontload-extract.so", FM_OBJ_GENERATED },
		{ "/b/libfrontload-extract-3.so", FM_OBJ_GENERATED },
		{ "/b/frontload-leaf", FM_OBJ_LEAF },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", FM_OBJ_LIBC },
		{ "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", FM_OBJ_LIBC },
		{ "/usr/lib/x86_64-linux-gnu/libm.so.6", FM_OBJ_LIBC },
		{ "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", FM_OBJ_CRYPTO },
		{ "/usr/lib/x86_64-linux-gnu/libssl.so.3", FM_OBJ_CRYPTO },
		{ "/usr/lib/x86_64-linux-gnu/libzstd.so.1", FM_OBJ_ZSTD },
		{ "/usr/lib/x86_64-linux-gnu/libevent_openssl-2.1.so.7", FM_OBJ_EVENT },
		{ "/usr/lib/x86_64-linux-gnu/libevent_core-2.1.so.7", FM_OBJ_EVENT },
		{ "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", FM_OBJ_BLAS },
		{ "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", FM_OBJ_BLAS },
		{ "/usr/lib/x86_64-linux-gnu/libprotobuf-c.so.1", FM_OBJ_PROTOBUF },
		{ "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", FM_OBJ_VALGRIND },
		{ "/usr/lib/x86_64-linux-gnu/libjansson.so.4", FM_OBJ_OTHER },
		{ "libgcc_s.so.1", FM_OBJ_OTHER },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		if (fm_obj_classify(c[i].path) != c[i].k)
			fail_msg("%s: kind %s, want %s", c[i].path,
				fm_obj_kind_name(fm_obj_classify(c[i].path)), fm_obj_kind_name(c[i].k));
	assert_int_equal(fm_obj_classify(NULL), FM_OBJ_UNKNOWN);
	assert_string_equal(fm_obj_kind_name(FM_OBJ_CRYPTO), "libcrypto/libssl");
	assert_string_equal(fm_obj_kind_name(FM_OBJ_N), "unknown");
}

/* 2. */
static void test_pool_names(void **state)
{
	(void)state;
	const char *ranker[] = { "memcpy", "ranker_main", "ranker_rank", "fl_plan_run" };
	const char *io[] = { "epoll_wait", "conn_read_cb", "io_inbox_cb", "ranker_gate" };
	const char *fanout[] = { "fo_thread_main", "fo_chan_read_cb", "SSL_read" };
	const char *none[] = { "main", "sigwait" };
	assert_int_equal(fm_pool_of_names(ranker, 4, 5), FM_POOL_RANKER);
	/* Two IO markers outvote one RANKER one. */
	assert_int_equal(fm_pool_of_names(io, 4, 3), FM_POOL_IO);
	assert_int_equal(fm_pool_of_names(fanout, 3, 9), FM_POOL_FANOUT);
	assert_int_equal(fm_pool_of_names(none, 2, 1), FM_POOL_MAIN);
	assert_int_equal(fm_pool_of_names(none, 2, 7), FM_POOL_OTHER);
	assert_int_equal(fm_pool_of_names(NULL, 0, 2), FM_POOL_OTHER);
	assert_string_equal(fm_pool_name(FM_POOL_FANOUT), "fanout");
}

/* 3. */
static void test_pool_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_leafval.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("# callgrind format\nversion: 1\npart: 1\nthread: 4\n\npositions: instr\n"
		"events: Ir\nob=(1) /b/frontload-leaf\nfl=(1) ???\nfn=(1) fo_chan_read_cb\n"
		"0x10 3\ncfn=(2) fo_reply_ok\ncalls=1 0x20\n0x12 5\nfn=(2)\n0x20 5\n"
		"fn=(3) memcpy\n0x30 1\n", f);
	fclose(f);
	assert_int_equal(fm_pool_of_cg_file(path), FM_POOL_FANOUT);
	f = fopen(path, "w");
	fputs("version: 1\nthread: 1\nevents: Ir\nfn=(1) main\n0x1 1\n", f);
	fclose(f);
	assert_int_equal(fm_pool_of_cg_file(path), FM_POOL_MAIN);
	unlink(path);
	assert_int_equal(fm_pool_of_cg_file(path), -1);
}

/* Leaf stats with the counters the window check reads. */
static json_t *stats(long rx, long tx, long ok, long stale, long skipped, long fo_err)
{
	return json_pack("{s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:{s:i,s:i},"
		"s:{s:i,s:i}}",
		"requests", "received", (int)rx, "replied", (int)tx, "ok", (int)ok,
		"overloaded", 0, "bad_request", 0, "denied", 0, "stale", (int)stale,
		"internal", 0, "dropped_disconnected", 0,
		"deadline", "skipped_total", (int)skipped, "queue_wait_shed", 0,
		"fanout", "errors", (int)fo_err, "timeouts", 0);
}

static json_t *step(long sent, long completed, long ok, long timeouts, long errs)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:{s:i}}", "sent", (int)sent,
		"completed", (int)completed, "ok", (int)ok, "timeouts", (int)timeouts,
		"overloaded", 0, "unsent", 0, "errors", "total", (int)errs);
}

/* 4. */
static void test_window_whole(void **state)
{
	(void)state;
	char why[1024];
	json_t *b = stats(100, 100, 100, 0, 0, 0);
	struct { json_t *st, *after; const char *want; } c[] = {
		{ step(20, 20, 20, 0, 0), stats(120, 120, 120, 0, 0, 0), NULL },
		{ step(20, 20, 18, 2, 0), stats(120, 118, 118, 0, 0, 0), "timeouts 2" },
		{ step(20, 20, 19, 0, 1), stats(120, 120, 119, 0, 0, 0), "errors.total 1" },
		{ step(20, 20, 20, 0, 0), stats(120, 120, 120, 1, 0, 0), "requests.stale +1" },
		{ step(20, 20, 20, 0, 0), stats(120, 120, 120, 0, 3, 0),
		  "deadline.skipped_total +3" },
		{ step(20, 20, 20, 0, 0), stats(120, 120, 120, 0, 0, 2), "fanout.errors +2" },
		{ step(20, 20, 20, 0, 0), stats(121, 121, 121, 0, 0, 0),
		  "requests.received 21, driver sent 20" },
		{ step(0, 0, 0, 0, 0), stats(100, 100, 100, 0, 0, 0), "sent nothing" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int whole = fm_window_whole(c[i].st, b, c[i].after, why, sizeof why);
		if (c[i].want == NULL) {
			assert_int_equal(whole, 1);
			assert_string_equal(why, "");
		} else {
			assert_int_equal(whole, 0);
			if (strstr(why, c[i].want) == NULL)
				fail_msg("case %zu: \"%s\" lacks \"%s\"", i, why, c[i].want);
		}
		json_decref(c[i].st);
		json_decref(c[i].after);
	}
	/* A snapshot without the counters is not a whole window. */
	json_t *st = step(5, 5, 5, 0, 0), *empty = json_object();
	assert_int_equal(fm_window_whole(st, empty, empty, why, sizeof why), 0);
	assert_non_null(strstr(why, "unreadable"));
	json_decref(st);
	json_decref(empty);
	json_decref(b);
	assert_int_equal(fm_win_delta(NULL, NULL, "a.b"), -1);
}

/* 5. */
static void test_pmu_window(void **state)
{
	(void)state;
	json_t *b = json_pack("{s:{s:b,s:s,s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i}}}", "pmu",
		"supported", 1, "why", "", "ranker", "instructions", 1000, "cycles", 2000,
		"l1i_misses", 10, "branch_misses", 5, "total", "instructions", 1000, "cycles", 2000,
		"l1i_misses", 10, "branch_misses", 5);
	json_t *a = json_pack("{s:{s:b,s:s,s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i}}}", "pmu",
		"supported", 1, "why", "", "ranker", "instructions", 11000, "cycles", 22000,
		"l1i_misses", 210, "branch_misses", 55, "total", "instructions", 11000, "cycles",
		22000, "l1i_misses", 210, "branch_misses", 55);
	json_t *w = fm_pmu_window(b, a);
	json_t *r = json_object_get(w, "ranker");
	assert_true(fabs(json_number_value(json_object_get(r, "ipc")) - 0.5) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(r, "l1i_mpki")) - 20) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(r, "branch_mpki")) - 5) < 1e-9);
	/* io was not in the stats: unsupported, never a number. */
	json_t *io = json_object_get(w, "io");
	assert_true(json_is_string(json_object_get(io, "instructions")));
	assert_true(json_is_string(json_object_get(io, "ipc")));
	json_decref(w);
	json_decref(a);
	json_decref(b);

	/* This machine's shape: no PMU, the events are strings. */
	json_t *u = json_pack("{s:{s:b,s:s,s:{s:s,s:s}}}", "pmu", "supported", 0, "why",
		"perf_event_open: No such file or directory", "total", "instructions",
		"unsupported: perf_event_open: No such file or directory", "ipc",
		"unsupported: perf_event_open: No such file or directory");
	w = fm_pmu_window(u, u);
	const char *pools[] = { "ranker", "io", "fanout", "total" };
	const char *keys[] = { "instructions", "cycles", "l1i_misses", "branch_misses", "ipc",
		"l1i_mpki", "branch_mpki" };
	for (int p = 0; p < 4; p++)
		for (int k = 0; k < 7; k++) {
			json_t *v = json_object_get(json_object_get(w, pools[p]), keys[k]);
			assert_true(json_is_string(v));
			assert_int_equal(strncmp(json_string_value(v), "unsupported: ", 13), 0);
			assert_non_null(strstr(json_string_value(v), "perf_event_open"));
		}
	json_decref(w);
	json_decref(u);
}

/* 6. */
static void test_stage_window(void **state)
{
	(void)state;
	json_t *b = json_pack("{s:{s:{s:i},s:{s:i}},s:{s:{s:i},s:{s:i},s:{s:i}}}", "stages",
		"extract", "cpu_ns", 100, "rank", "cpu_ns", 50, "pools", "ranker", "cpu_ns", 1000,
		"io", "cpu_ns", 100, "fanout", "cpu_ns", 10);
	json_t *a = json_pack("{s:{s:{s:i},s:{s:i}},s:{s:{s:i},s:{s:i},s:{s:i}}}", "stages",
		"extract", "cpu_ns", 400, "rank", "cpu_ns", 150, "pools", "ranker", "cpu_ns", 1600,
		"io", "cpu_ns", 200, "fanout", "cpu_ns", 110);
	json_t *w = fm_stage_window(b, a);
	json_t *ex = json_object_get(json_object_get(w, "stages"), "extract");
	assert_int_equal(json_integer_value(json_object_get(ex, "cpu_ns")), 300);
	assert_true(fabs(json_number_value(json_object_get(ex, "share")) - 0.75) < 1e-9);
	assert_int_equal(json_integer_value(json_object_get(w, "process_cpu_ns")), 800);
	assert_int_equal(json_integer_value(json_object_get(w, "stage_cpu_ns")), 400);
	json_decref(w);
	/* No stage CPU in the window: shares are null, not 0. */
	w = fm_stage_window(a, a);
	ex = json_object_get(json_object_get(w, "stages"), "extract");
	assert_true(json_is_null(json_object_get(ex, "share")));
	json_decref(w);
	json_decref(a);
	json_decref(b);
}

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

/* Source tree: $FL_SRCDIR, else FL_SRC_DATA_DIR without its "/runtime/data". */
static const char *data_file(const char *name)
{
	static char path[4200];
	const char *e = getenv("FL_SRCDIR");
	if (e && *e)
		snprintf(path, sizeof path, "%s/runtime/data/%s", e, name);
	else
		snprintf(path, sizeof path, "%s/%s", FL_SRC_DATA_DIR, name);
	return path;
}

/* 8. */
static void test_prof_script(void **state)
{
	(void)state;
	struct fm_prof_rules rs;
	struct fm_profile p;
	char err[256];
	if (fm_prof_rules_load(data_file("profile_categories.txt"), &rs, err, sizeof err))
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
		cmocka_unit_test(test_obj_kinds),
		cmocka_unit_test(test_pool_names),
		cmocka_unit_test(test_pool_file),
		cmocka_unit_test(test_window_whole),
		cmocka_unit_test(test_pmu_window),
		cmocka_unit_test(test_stage_window),
		cmocka_unit_test(test_prof_rules),
		cmocka_unit_test(test_prof_script),
		cmocka_unit_test(test_dis_cs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
