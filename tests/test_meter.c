/* test_meter.c: tests for runtime/common/meter.c (per-thread meters and their pool sums).
 *
 * Meters are opened on real threads with --pmu off and on: without a PMU (this host) every
 * count must stay unsupported with a reason, never a number; with one, a counted thread must
 * say so. Sums are built from meters only, never from hand-set fields. Build: ninja
 * tests/test_meter.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "meter.h"

/* A pool thread's life: start the meter, spin a little on its clock, exit the meter. */
static void *thread_main(void *arg)
{
	struct fl_meter *m = arg;
	volatile uint64_t x = 0;

	if (fl_meter_start(m) == 0) {
		uint64_t t0 = fl_meter_cpu_ns(m);
		while (fl_meter_cpu_ns(m) - t0 < 1000000)
			x++;
	}
	fl_meter_exit(m);
	return NULL;
}

static void run_thread(struct fl_meter *m, const struct fl_meter_config *cfg, int timed)
{
	pthread_t t;
	char err[256] = "";

	fl_meter_init(m, cfg, timed);
	assert_int_equal(pthread_create(&t, NULL, thread_main, m), 0);
	assert_int_equal(fl_meter_wait(m, err, sizeof(err)), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* 1. An empty sum says "no threads in this pool" for every event, and merging it changes
 * nothing. */
static void test_empty_sum(void **state)
{
	(void)state;
	struct fl_meter_sum s, t;

	fl_meter_sum_init(&s);
	assert_int_equal(s.threads, 0);
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		assert_false(s.counts.ev[e].supported);
		assert_string_equal(s.counts.ev[e].why, "no threads in this pool");
	}
	fl_meter_sum_init(&t);
	fl_meter_sum_merge(&t, &s);
	assert_memory_equal(&t, &s, sizeof(s));
}

/* 2. --pmu off, a timed thread on clock_gettime: the clock is counted per method with its
 * reason, and every event is unsupported with "disabled (--pmu off)". */
static void test_pmu_off(void **state)
{
	(void)state;
	struct fl_meter_config cfg = { .clock = FL_CPUTIME_CLOCK_GETTIME, .pmu = 0 };
	struct fl_meter m;
	struct fl_meter_sum s;

	run_thread(&m, &cfg, 1);
	fl_meter_sum_init(&s);
	fl_meter_sum_add(&s, &m);
	assert_int_equal(s.threads, 1);
	assert_int_equal(s.clock_gettime, 1);
	assert_int_equal(s.clock_perf_mmap, 0);
	assert_string_equal(s.clock_why, "not tried (--cpu-clock clock_gettime)");
	assert_int_equal(s.pmu_threads, 0);
	assert_string_equal(s.pmu_why, "disabled (--pmu off)");
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		assert_false(s.counts.ev[e].supported);
		assert_int_equal(s.counts.ev[e].value, 0);
		assert_string_equal(s.counts.ev[e].why, "disabled (--pmu off)");
	}
	fl_meter_close(&m);
}

/* 3. --pmu on, two untimed threads summed and merged into a total: with no PMU every event
 * stays unsupported with the open's reason; with one, both threads count instructions. */
static void test_pmu_on_merge(void **state)
{
	(void)state;
	struct fl_meter_config cfg = { .clock = FL_CPUTIME_AUTO, .pmu = 1 };
	struct fl_meter m[2];
	struct fl_meter_sum pool, total;

	fl_meter_sum_init(&pool);
	for (int i = 0; i < 2; i++) {
		run_thread(&m[i], &cfg, 0);
		fl_meter_sum_add(&pool, &m[i]);
	}
	fl_meter_sum_init(&total);
	fl_meter_sum_merge(&total, &pool);
	assert_int_equal(total.threads, 2);
	assert_int_equal(total.clock_gettime + total.clock_perf_mmap, 0); /* untimed */
	if (total.pmu_threads == 0) {
		assert_true(total.pmu_why[0] != '\0');
		for (int e = 0; e < FL_PMU_NEVENTS; e++) {
			assert_false(total.counts.ev[e].supported);
			assert_string_equal(total.counts.ev[e].why, total.pmu_why);
		}
	} else {
		assert_int_equal(total.pmu_threads, 2);
		assert_true(total.counts.ev[FL_PMU_INSTRUCTIONS].supported);
		assert_true(total.counts.ev[FL_PMU_INSTRUCTIONS].value > 0);
	}
	for (int i = 0; i < 2; i++)
		fl_meter_close(&m[i]);
}

/* 4. A meter with no configuration opens nothing and reads as "no meter configured". */
static void test_no_config(void **state)
{
	(void)state;
	struct fl_meter m;
	struct fl_meter_sum s;

	run_thread(&m, NULL, 1);
	fl_meter_sum_init(&s);
	fl_meter_sum_add(&s, &m);
	assert_int_equal(s.threads, 1);
	assert_int_equal(s.clock_gettime + s.clock_perf_mmap, 0);
	assert_string_equal(s.pmu_why, "no meter configured");
	assert_false(s.counts.ev[FL_PMU_INSTRUCTIONS].supported);
	fl_meter_close(&m);
	fl_meter_close(&m); /* a second close is a no-op */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_sum),
		cmocka_unit_test(test_pmu_off),
		cmocka_unit_test(test_pmu_on_merge),
		cmocka_unit_test(test_no_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
