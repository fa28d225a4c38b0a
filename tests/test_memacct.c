/* test_memacct.c: tests for runtime/common/memacct.c and the allocator it sets up
 * (memalloc_jemalloc.c or memalloc_glibc.c, whichever configure --malloc linked).
 *
 * The settings must be in force and reported, each allocator's figures present and
 * consistent, FL_MALLOC=default honoured, and with jemalloc the reason it is the default:
 * a large buffer freed and allocated again is reused without page faults, and freed
 * pages are given back within a few seconds. Build: ninja tests/test_memacct.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "memacct.h"

/* bytes: a large message, above glibc's fixed mmap threshold and under jemalloc's
 * opt.oversize_threshold (8 MiB: buffers that size and up are purged on free) */
#define BIG (4u << 20)

/* Where the buffers are published, so the compiler keeps each malloc, memset and free. */
static char *volatile seen;

static json_t *allocator_json(void)
{
	json_t *m = fl_mem_json(NULL, 0);
	json_t *a;

	assert_non_null(m);
	a = json_object_get(m, "allocator");
	assert_non_null(a);
	json_incref(a);
	json_decref(m);
	return a;
}

static long long num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return (long long)json_integer_value(v);
}

static int is_jemalloc(void)
{
	return strcmp(fl_mem_tuning()->allocator, "jemalloc") == 0;
}

/* Built with ASan or TSan (gcc's and clang's ways of saying so). */
static int sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void settings_in_force(void **state)
{
	const struct fl_mem_tuning *t;
	json_t *a;

	(void)state;
	unsetenv("FL_MALLOC");
	fl_mem_tune();
	t = fl_mem_tuning();
	if (sanitized() && !t->on) {
		/* ASan's and TSan's malloc replace glibc's, and their mallopt refuses */
		printf("skip: the sanitizer's malloc refused the settings (%s)\n", t->why);
		skip();
	}
	assert_int_equal(t->on, 1);
	assert_string_equal(t->why, "");
	assert_true(t->keep_bytes == FL_MEM_SCRATCH_KEEP);
	assert_int_equal(fl_mem_keep_bytes(), FL_MEM_SCRATCH_KEEP);
	a = allocator_json();
	assert_string_equal(json_string_value(json_object_get(a, "name")), t->allocator);
	assert_string_equal(json_string_value(json_object_get(a, "tuning")), "frontload");
	assert_true(json_is_null(json_object_get(a, "why_default")));
	assert_int_equal(num(a, "scratch_keep_bytes"), FL_MEM_SCRATCH_KEEP);
	assert_true(json_is_string(json_object_get(a, "version")));
	assert_in_range(num(a, "arenas"), 1, num(a, "arena_max"));
	if (is_jemalloc()) {
		assert_int_equal(t->decay_ms, FL_MEM_DECAY_MS);
		assert_int_equal(num(a, "dirty_decay_ms"), FL_MEM_DECAY_MS);
		assert_true(json_is_true(json_object_get(a, "background_thread")));
		/* The built-in malloc_conf, read by jemalloc before main: 8-page slabs for the
		 * 4 and 8 KiB classes (jemalloc 5.3's own: 1 and 2 pages). */
		assert_string_equal(json_string_value(json_object_get(a, "malloc_conf")),
			"slab_sizes:4096-8192:8");
		assert_int_equal(num(a, "regions_per_slab_4KiB"), 8);
		assert_int_equal(num(a, "regions_per_slab_8KiB"), 4);
		/* jemalloc's own order: allocated <= active <= resident, active <= mapped. */
		assert_true(num(a, "allocated_bytes") > 0);
		assert_true(num(a, "allocated_bytes") <= num(a, "active_bytes"));
		assert_true(num(a, "active_bytes") <= num(a, "resident_bytes"));
		assert_true(num(a, "active_bytes") <= num(a, "mapped_bytes"));
		assert_true(num(a, "dirty_bytes") >= 0 && num(a, "purged_bytes") >= 0);
		assert_null(json_object_get(a, "mmap_threshold_bytes"));
	} else {
		assert_string_equal(t->allocator, "glibc");
		assert_int_equal(num(a, "mmap_threshold_bytes"), FL_MEM_MMAP_THRESHOLD);
		assert_int_equal(num(a, "arena_max"), FL_MEM_ARENA_MAX);
		assert_true(num(a, "heap_bytes") >= num(a, "heap_in_use_bytes"));
		assert_null(json_object_get(a, "dirty_decay_ms"));
	}
	json_decref(a);
}

/* A buffer freed and allocated again at once comes back from the arena: its pages are
 * still mapped, so touching them again costs (almost) no page faults. The first rounds
 * may fault (their extents can come from fresh memory); the last four are judged. */
static void large_buffer_reused(void **state)
{
	long faults[8], late = 0;

	(void)state;
	if (!is_jemalloc()) {
		/* glibc maps and unmaps it (FL_MEM_MMAP_THRESHOLD): a fault per page, by design */
		printf("skip: jemalloc's reuse; this build links glibc malloc (configure --malloc)\n");
		skip();
	}
	for (int round = 0; round < 8; round++) {
		long before = minor_faults();
		char *p = malloc(BIG);

		assert_non_null(p);
		memset(p, round, BIG);
		seen = p;
		free(p);
		faults[round] = minor_faults() - before;
	}
	for (int round = 4; round < 8; round++)
		late += faults[round];
	if (late >= 4 * (long)(BIG / 4096 / 10))
		printf("faults per round: %ld %ld %ld %ld %ld %ld %ld %ld of %u pages\n",
			faults[0], faults[1], faults[2], faults[3], faults[4], faults[5],
			faults[6], faults[7], BIG / 4096);
	/* 1,024 pages a round; a few faults allowed for jemalloc's own metadata. */
	assert_true(late < 4 * (long)(BIG / 4096 / 10));
}

static long long purged_now(void)
{
	json_t *a = allocator_json();
	long long v = num(a, "purged_bytes");

	json_decref(a);
	return v;
}

/* Freed pages go back to the OS after about FL_MEM_DECAY_MS, by the background thread
 * (this thread only sleeps): bounded at 3 decays for a loaded host. */
static void freed_pages_purged(void **state)
{
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	long long start;
	char *p;

	(void)state;
	if (!is_jemalloc()) {
		/* glibc unmaps chunks over the threshold at once: nothing to decay */
		printf("skip: jemalloc's decay; this build links glibc malloc (configure --malloc)\n");
		skip();
	}
	p = malloc(4 * BIG);
	assert_non_null(p);
	memset(p, 3, 4 * BIG);
	seen = p;
	start = purged_now();
	free(p);
	for (int i = 0; i < 3 * FL_MEM_DECAY_MS / 100 && purged_now() - start < (long long)(2 * BIG); i++)
		nanosleep(&nap, NULL);
	assert_true(purged_now() - start >= (long long)(2 * BIG));
}

/* Last: FL_MALLOC=default turns the settings off in what memacct reports and uses. */
static void default_when_asked(void **state)
{
	const struct fl_mem_tuning *t;
	json_t *a;

	(void)state;
	setenv("FL_MALLOC", "default", 1);
	fl_mem_tune();
	unsetenv("FL_MALLOC");
	t = fl_mem_tuning();
	assert_int_equal(t->on, 0);
	assert_string_equal(t->why, "FL_MALLOC=default");
	assert_true(fl_mem_keep_bytes() == SIZE_MAX);
	assert_int_equal(t->decay_ms, -1);
	a = allocator_json();
	assert_string_equal(json_string_value(json_object_get(a, "tuning")), "allocator default");
	assert_string_equal(json_string_value(json_object_get(a, "why_default")),
		"FL_MALLOC=default");
	assert_true(json_is_null(json_object_get(a, "scratch_keep_bytes")));
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(settings_in_force),
		cmocka_unit_test(large_buffer_reused),
		cmocka_unit_test(freed_pages_purged),
		cmocka_unit_test(default_when_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
