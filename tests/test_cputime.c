/* test_cputime.c: tests for runtime/common/cputime.c (per-thread CPU clock and fallback).
 *
 * Each behaviour test runs once per method: the one AUTO picks, then CLOCK_GETTIME (on
 * hosts with cap_user_time=0 both are clock_gettime). Build: ninja tests/test_cputime.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cmocka.h>

#include "cputime.h"

/* Slack allowed between the two clocks' readings: the perf page is aligned to
 * CLOCK_THREAD_CPUTIME_ID once at open and both tick in ns. */
#define TOL_NS 100000ull

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn about ns of this thread's CPU time. */
static void spin_cpu_ns(uint64_t ns)
{
	volatile uint64_t sink = 0;
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
	(void)sink;
}

static void open_or_fail(struct fl_cputime *c, void **state)
{
	enum fl_cputime_method want = *(const enum fl_cputime_method *)*state;
	char why[256];

	assert_int_equal(fl_cputime_open(c, want, why, sizeof why), 0);
	assert_true(c->method == FL_CPUTIME_PERF_MMAP || c->method == FL_CPUTIME_CLOCK_GETTIME);
}

/* 1. AUTO opens; when it is not the fast path it says why. PERF_MMAP alone then fails
 * with a reason and leaves c closed; CLOCK_GETTIME always opens with no reason. */
static void test_open_auto(void **state)
{
	struct fl_cputime c;
	char why[256] = "x";

	(void)state;
	assert_int_equal(fl_cputime_open(&c, FL_CPUTIME_AUTO, why, sizeof why), 0);
	print_message("    method %s%s%s\n", fl_cputime_method_name(c.method), why[0] ? ": " : "",
	              why);
	if (c.method == FL_CPUTIME_PERF_MMAP) {
		assert_string_equal(why, "");
		assert_true(c.fd >= 0);
		assert_non_null(c.page);
	} else {
		assert_int_equal(c.method, FL_CPUTIME_CLOCK_GETTIME);
		assert_true(strlen(why) > 0);
		assert_true(strstr(why, "cap_user_time") != NULL || strstr(why, ": ") != NULL ||
		            strstr(why, "x86-64") != NULL);
		assert_int_equal(c.fd, -1);
		assert_null(c.page);

		struct fl_cputime f;
		char why2[256] = "";
		assert_int_equal(fl_cputime_open(&f, FL_CPUTIME_PERF_MMAP, why2, sizeof why2), -1);
		assert_true(strlen(why2) > 0);
		assert_int_equal(f.fd, -1);
		assert_null(f.page);
		fl_cputime_close(&f);
	}
	fl_cputime_close(&c);
	fl_cputime_close(&c);

	assert_int_equal(fl_cputime_open(&c, FL_CPUTIME_CLOCK_GETTIME, why, sizeof why), 0);
	assert_int_equal(c.method, FL_CPUTIME_CLOCK_GETTIME);
	assert_string_equal(why, "");
	fl_cputime_close(&c);

	assert_int_equal(fl_cputime_open(&c, FL_CPUTIME_AUTO, NULL, 0), 0);
	fl_cputime_close(&c);
	assert_string_equal(fl_cputime_method_name(FL_CPUTIME_PERF_MMAP), "perf-mmap");
	assert_string_equal(fl_cputime_method_name(FL_CPUTIME_CLOCK_GETTIME), "clock_gettime");
	assert_string_equal(fl_cputime_method_name(FL_CPUTIME_AUTO), "auto");
}

/* 2. Never goes backwards over 100,000 back-to-back reads. */
static void test_monotonic(void **state)
{
	struct fl_cputime c;

	open_or_fail(&c, state);
	uint64_t prev = fl_cputime_ns(&c);
	assert_true(prev > 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t now = fl_cputime_ns(&c);
		if (now < prev)
			fail_msg("read %d went back %llu ns", i, (unsigned long long)(prev - now));
		prev = now;
	}
	fl_cputime_close(&c);
}

/* 3. A busy loop timed by fl_cputime_ns lies between two CLOCK_THREAD_CPUTIME_ID reads. */
static void test_bracketed(void **state)
{
	struct fl_cputime c;

	open_or_fail(&c, state);
	for (int round = 0; round < 5; round++) {
		uint64_t c1 = thread_cpu_ns();
		uint64_t m0 = fl_cputime_ns(&c);
		spin_cpu_ns(20000000ull);
		uint64_t m1 = fl_cputime_ns(&c);
		uint64_t c2 = thread_cpu_ns();

		assert_true(m0 + TOL_NS >= c1);
		assert_true(m1 <= c2 + TOL_NS);
		assert_true(m1 >= m0 + 20000000ull - TOL_NS);
		assert_true(m1 - m0 <= c2 - c1 + TOL_NS);
	}
	fl_cputime_close(&c);
}

/* 4. Sleeping 50 ms advances the clock by less than 2 ms. */
static void test_sleep(void **state)
{
	struct fl_cputime c;
	struct timespec nap = {0, 50000000};

	open_or_fail(&c, state);
	uint64_t m0 = fl_cputime_ns(&c);
	while (nanosleep(&nap, &nap) != 0)
		;
	uint64_t m1 = fl_cputime_ns(&c);
	print_message("    50 ms sleep advanced %llu ns\n", (unsigned long long)(m1 - m0));
	assert_true(m1 - m0 < 2000000ull);
	fl_cputime_close(&c);
}

struct spinner {
	enum fl_cputime_method want;
	uint64_t own_ns; /* the spinner's own clock over its spin */
	int rc;
};

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	struct fl_cputime c;

	s->rc = fl_cputime_open(&c, s->want, NULL, 0);
	if (s->rc != 0)
		return NULL;
	uint64_t t0 = fl_cputime_ns(&c);
	spin_cpu_ns(100000000ull);
	s->own_ns = fl_cputime_ns(&c) - t0;
	fl_cputime_close(&c);
	return NULL;
}

/* 5. Per thread: another thread's 100 ms of spinning does not show in this thread's clock
 * (it waits in pthread_join meanwhile), but does in the spinner's own. */
static void test_per_thread(void **state)
{
	struct fl_cputime c;
	struct spinner s = {.want = *(const enum fl_cputime_method *)*state};
	pthread_t t;

	open_or_fail(&c, state);
	uint64_t m0 = fl_cputime_ns(&c);
	assert_int_equal(pthread_create(&t, NULL, spinner_main, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	uint64_t m1 = fl_cputime_ns(&c);
	assert_int_equal(s.rc, 0);
	print_message("    spinner %llu ns, joiner %llu ns\n", (unsigned long long)s.own_ns,
	              (unsigned long long)(m1 - m0));
	assert_true(s.own_ns >= 100000000ull - TOL_NS);
	assert_true(m1 - m0 < 10000000ull);
	fl_cputime_close(&c);
}

#if defined(__x86_64__)
static uint64_t test_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* 6. The fast-path arithmetic on a hand-made page (this host's kernel gives
 * cap_user_time=0, so the real page cannot exercise it): ns = time_enabled + time_offset
 * + tsc * mult >> shift, with the cap_user_time_short extension, and a fall back to
 * clock_gettime (closing the page) once the kernel clears cap_user_time. */
static void test_fake_page(void **state)
{
	struct fl_cputime c = {.method = FL_CPUTIME_PERF_MMAP, .fd = -1, .page_len = 4096};
	struct perf_event_mmap_page *pg;

	(void)state;
	pg = mmap(NULL, c.page_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	          -1, 0);
	assert_true(pg != MAP_FAILED);
	c.page = pg;
	pg->cap_bit0_is_deprecated = 1;
	pg->cap_user_time = 1;
	pg->time_enabled = 5000000;

	/* mult 0: the tsc drops out, delta = time_offset exactly (2^64 - 1000 wraps to -1000). */
	pg->time_mult = 0;
	pg->time_shift = 0;
	pg->time_offset = (uint64_t)-1000;
	c.base_ns = 7;
	assert_int_equal(fl_cputime_ns(&c), 5000000 - 1000 + 7);

	/* mult/2^shift = 1000/1024, offset cancelling the tsc at t0: the result is the tsc
	 * ticks since t0 scaled by 1000/1024 (quot/rem split, exact to 1 ns). */
	c.base_ns = 0;
	pg->time_mult = 1000;
	pg->time_shift = 10;
	uint64_t t0 = test_rdtsc();
	pg->time_offset = -(uint64_t)((unsigned __int128)t0 * 1000 >> 10);
	uint64_t ns = fl_cputime_ns(&c);
	uint64_t t1 = test_rdtsc();
	assert_true(ns + 1 >= 5000000);
	assert_true(ns <= 5000000 + (uint64_t)((unsigned __int128)(t1 - t0) * 1000 >> 10) + 1);

	/* cap_user_time_short: a 16-bit counter extended from time_cycles. */
	pg->cap_user_time_short = 1;
	pg->time_mult = 1;
	pg->time_shift = 0;
	pg->time_cycles = 1000000;
	pg->time_mask = 0xffff;
	pg->time_offset = 0;
	ns = fl_cputime_ns(&c);
	assert_true(ns >= 5000000 + 1000000 && ns <= 5000000 + 1000000 + 0xffff);

	/* The kernel withdraws user time: the clock falls back and unmaps the page. */
	pg->cap_user_time = 0;
	uint64_t g0 = thread_cpu_ns();
	ns = fl_cputime_ns(&c);
	assert_true(ns >= g0 && ns <= thread_cpu_ns());
	assert_int_equal(c.method, FL_CPUTIME_CLOCK_GETTIME);
	assert_null(c.page);
	fl_cputime_close(&c);
}
#endif

static const enum fl_cputime_method method_auto = FL_CPUTIME_AUTO;
static const enum fl_cputime_method method_gettime = FL_CPUTIME_CLOCK_GETTIME;

#define PER_METHOD(fn)                                                  \
	cmocka_unit_test_prestate(fn, (void *)&method_auto),              \
	cmocka_unit_test_prestate(fn, (void *)&method_gettime)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_auto),
		PER_METHOD(test_monotonic),
		PER_METHOD(test_bracketed),
		PER_METHOD(test_sleep),
		PER_METHOD(test_per_thread),
#if defined(__x86_64__)
		cmocka_unit_test(test_fake_page),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
