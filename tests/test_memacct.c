/* test_memacct.c: tests for runtime/common/memacct.c: the release thread's pace and the
 * allocator stats it reports.
 *
 * Build: ninja tests/test_memacct.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "memacct.h"

#define MS 1000000ull  /* ns */

/* A call that costs under 5 ms keeps the least gap: the heap is small, RSS follows
 * what is in use within a second. */
static void gap_floor(void **state)
{
	(void)state;
	assert_int_equal(fl_mem_release_gap_ms(0), FL_MEM_RELEASE_MS);
	assert_int_equal(fl_mem_release_gap_ms(4 * MS), FL_MEM_RELEASE_MS);
	assert_int_equal(fl_mem_release_gap_ms(5 * MS - 1), FL_MEM_RELEASE_MS);
}

/* In between, the gap is 200 times the call: its cost stays at 0.5% of the time. */
static void gap_follows_cost(void **state)
{
	(void)state;
	assert_int_equal(fl_mem_release_gap_ms(6 * MS), 6 * FL_MEM_RELEASE_COST_X);
	assert_int_equal(fl_mem_release_gap_ms(20 * MS), 20 * FL_MEM_RELEASE_COST_X);
	assert_int_equal(fl_mem_release_gap_ms(20 * MS + MS / 2), 20 * FL_MEM_RELEASE_COST_X);
}

/* A costly call (the 54 ms measured under overload) waits the most, and no cost, however
 * large, waits longer or wraps. */
static void gap_ceiling(void **state)
{
	(void)state;
	assert_int_equal(fl_mem_release_gap_ms(54 * MS), FL_MEM_RELEASE_MAX_MS);
	assert_int_equal(fl_mem_release_gap_ms(3600000 * MS), FL_MEM_RELEASE_MAX_MS);
	assert_int_equal(fl_mem_release_gap_ms(UINT64_MAX), FL_MEM_RELEASE_MAX_MS);
}

/* After fl_mem_tune the stats name the bounds, and once the thread has run its first
 * call, the gap it chose and that call's time. */
static void stats_after_a_release(void **state)
{
	(void)state;
	unsetenv("FL_MALLOC");
	fl_mem_tune();
	const struct fl_mem_tuning *t = fl_mem_tuning();
	assert_int_equal(t->on, 1);
	assert_int_equal(t->release_ms, FL_MEM_RELEASE_MS);

	json_t *m = fl_mem_json(NULL, 0), *a = json_object_get(m, "allocator");
	assert_non_null(a);
	assert_int_equal(json_integer_value(json_object_get(a, "release_min_gap_ms")),
		FL_MEM_RELEASE_MS);
	assert_int_equal(json_integer_value(json_object_get(a, "release_max_gap_ms")),
		FL_MEM_RELEASE_MAX_MS);
	json_decref(m);

	/* Free memory for the first call to give back, then wait it out (1 s, with room). */
	free(malloc(8u << 20));
	json_t *g = NULL;
	for (int i = 0; i < 40; i++) {
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
		m = fl_mem_json(NULL, 0);
		a = json_object_get(m, "allocator");
		if (json_integer_value(json_object_get(a, "releases")) >= 1) {
			g = json_incref(a);
			json_decref(m);
			break;
		}
		/* Before the first call there is no gap chosen and no call timed: null. */
		assert_true(json_is_null(json_object_get(a, "release_gap_ms")));
		assert_true(json_is_null(json_object_get(a, "release_last_ms")));
		json_decref(m);
	}
	assert_non_null(g);
	json_int_t gap = json_integer_value(json_object_get(g, "release_gap_ms"));
	assert_true(gap >= FL_MEM_RELEASE_MS && gap <= FL_MEM_RELEASE_MAX_MS);
	assert_true(json_is_real(json_object_get(g, "release_last_ms")));
	assert_true(json_real_value(json_object_get(g, "release_last_ms")) >= 0);
	json_decref(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gap_floor),
		cmocka_unit_test(gap_follows_cost),
		cmocka_unit_test(gap_ceiling),
		cmocka_unit_test(stats_after_a_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
