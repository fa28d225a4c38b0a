/* test_objects.c: tests for runtime/measure/objects.c, object kinds and thread pools, and
 * patmap.c, a generated library's addresses by pattern: 1. object kinds by path, 2. pools
 * by function names, 3. pools from a callgrind per-thread file, 4. pattern of an address,
 * 5. libraries patmap refuses. Build: ninja tests/test_objects.
 */
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

#include "objects.h"
#include "patmap.h"

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
	char path[] = "/tmp/test_objects.XXXXXX";
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

/* 4. The range holding an address, [lo, hi): its edges, gaps between ranges, and
 * addresses before the first and past the last belong to no pattern. */
static void test_patmap_of(void **state)
{
	(void)state;
	struct fm_pat_range r[] = { { 0x1000, 0x1040, 0 }, { 0x1040, 0x1100, 26 },
		{ 0x2000, 0x2008, 11 } };
	struct fm_patmap pm = { r, 3 };
	static const struct { uint64_t a; unsigned pat; } c[] = {
		{ 0, FM_PAT_SHARED }, { 0xfff, FM_PAT_SHARED }, { 0x1000, 0 }, { 0x103f, 0 },
		{ 0x1040, 26 }, { 0x10ff, 26 }, { 0x1100, FM_PAT_SHARED },
		{ 0x1fff, FM_PAT_SHARED }, { 0x2000, 11 }, { 0x2007, 11 },
		{ 0x2008, FM_PAT_SHARED }, { UINT64_MAX, FM_PAT_SHARED },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		assert_int_equal(fm_patmap_of(&pm, c[i].a), c[i].pat);
	struct fm_patmap empty = { NULL, 0 };
	assert_int_equal(fm_patmap_of(&empty, 0x1000), FM_PAT_SHARED);
}

/* 5. Not a generated library: a missing file, a file that is not ELF, and an ELF object
 * with symbols but none named fl_PNN_ (this test program) are errors naming the path. */
static void test_patmap_refuses(void **state)
{
	(void)state;
	struct fm_patmap pm;
	char err[400], tmp[] = "/tmp/test_patmap.XXXXXX", self[4096];
	assert_int_equal(fm_patmap_load(&pm, "/nonexistent/lib.so", err, sizeof err), -1);
	assert_non_null(strstr(err, "/nonexistent/lib.so"));
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not elf\n", 8), 8);
	close(fd);
	assert_int_equal(fm_patmap_load(&pm, tmp, err, sizeof err), -1);
	assert_non_null(strstr(err, "not an ELF object"));
	unlink(tmp);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(fm_patmap_load(&pm, self, err, sizeof err), -1);
	assert_non_null(strstr(err, "no fl_PNN_ function symbols"));
	assert_null(pm.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_obj_kinds),
		cmocka_unit_test(test_pool_names),
		cmocka_unit_test(test_pool_file),
		cmocka_unit_test(test_patmap_of),
		cmocka_unit_test(test_patmap_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
