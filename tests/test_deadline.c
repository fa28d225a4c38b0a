/* test_deadline.c: tests for runtime/request/deadline.c, deadline verdicts and estimates. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "deadline.h"

#define MS 1000000ull          /* ns per ms */

/* The verdict: none without a deadline; expired at or after it; would-miss when the rest
 * does not fit in what is left; go when it does (exactly fitting is go). */
static void test_dl_decide(void **state)
{
	(void)state;
	assert_int_equal(fl_dl_decide(5 * MS, 0, UINT64_MAX), FL_DL_GO);
	assert_int_equal(fl_dl_decide(10 * MS, 10 * MS, 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide(11 * MS, 10 * MS, 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide(4 * MS, 10 * MS, 6 * MS), FL_DL_GO);
	assert_int_equal(fl_dl_decide(4 * MS, 10 * MS, 6 * MS + 1), FL_DL_WOULD_MISS);
	assert_int_equal(fl_dl_decide(9 * MS, 10 * MS, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide(0, UINT64_MAX, UINT64_MAX - 1), FL_DL_GO);
}

/* The queue bound comes first (OVERLOADED even with time left), 0 means none, and waits
 * within it fall through to the deadline verdict. */
static void test_dl_decide_queue(void **state)
{
	(void)state;
	assert_int_equal(fl_dl_decide_queue(200 * MS, 50 * MS, 100 * MS, 0, 0), FL_DL_QUEUE_WAIT);
	assert_int_equal(fl_dl_decide_queue(200 * MS, 50 * MS, 100 * MS, 900 * MS, 0),
		FL_DL_QUEUE_WAIT);
	assert_int_equal(fl_dl_decide_queue(150 * MS, 50 * MS, 100 * MS, 0, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide_queue(900 * MS, 50 * MS, 0, 0, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide_queue(120 * MS, 50 * MS, 100 * MS, 110 * MS, 0),
		FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide_queue(120 * MS, 50 * MS, 100 * MS, 130 * MS, 20 * MS),
		FL_DL_WOULD_MISS);
	/* A clock read before the enqueue stamp (another thread's) is not a wait. */
	assert_int_equal(fl_dl_decide_queue(40 * MS, 50 * MS, 1, 0, 0), FL_DL_GO);
}

/* Client realtime deadline onto the local monotonic clock: none stays 0, time left is
 * kept, a passed deadline lands in the past but never on 0 (which would mean none). */
static void test_dl_local(void **state)
{
	const uint64_t wall = 1700000000ull * 1000000000ull, mono = 5000 * MS;

	(void)state;
	assert_int_equal(fl_dl_local(0, wall, mono), 0);
	assert_int_equal(fl_dl_local(wall + 300 * MS, wall, mono), mono + 300 * MS);
	assert_int_equal(fl_dl_local(wall - 20 * MS, wall, mono), mono - 20 * MS);
	assert_int_equal(fl_dl_local(1, wall, mono), 1);
	assert_int_equal(fl_dl_decide(mono, fl_dl_local(wall - 1, wall, mono), 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_local(UINT64_MAX, 0, 10), UINT64_MAX);
}

/* The estimate: the first sample seeds it; a sample above moves it up 1/32, one below
 * down 3/32, never past the sample, so it settles at the 25th percentile; rest sums the
 * stages from the one asked for. */
static void test_dl_estimate(void **state)
{
	static const uint64_t cycle[4] = { 40 * MS, 10 * MS, 30 * MS, 20 * MS };
	struct fl_dl_est e;
	uint64_t a[FL_STAGE_COUNT] = { 0 }, b[FL_STAGE_COUNT] = { 0 };

	(void)state;
	memset(&e, 0, sizeof(e));
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		a[s] = (uint64_t)(s + 1) * 32 * MS;
	fl_dl_est_add(&e, a);
	assert_int_equal(e.wall_ns[FL_STAGE_RANK], 5 * 32 * MS);
	b[FL_STAGE_RANK] = 10 * 32 * MS;
	b[FL_STAGE_EXTRACT] = 0;
	b[FL_STAGE_DECODE] = 32 * MS + 1000;  /* just above: the move stops at the sample */
	fl_dl_est_add(&e, b);
	assert_int_equal(e.wall_ns[FL_STAGE_RANK], 5 * 32 * MS + 5 * MS);
	assert_int_equal(e.wall_ns[FL_STAGE_EXTRACT], 3 * 32 * MS - 9 * MS);
	assert_int_equal(e.wall_ns[FL_STAGE_DECODE], 32 * MS + 1000);
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_REPLY, NULL), e.wall_ns[FL_STAGE_REPLY]);
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_FANOUT, NULL), e.wall_ns[FL_STAGE_FANOUT] +
		e.wall_ns[FL_STAGE_COMPRESS] + e.wall_ns[FL_STAGE_REPLY]);
	uint64_t all = 0;
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		all += e.wall_ns[s];
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_DECODE, NULL), all);
	/* A stage the request already started counts only what is left of it, never less
	 * than nothing: the rank stage's features derived in stage 3, a stage overrun. */
	uint64_t done[FL_STAGE_COUNT] = { 0 };
	done[FL_STAGE_RANK] = 32 * MS;
	done[FL_STAGE_FANOUT] = e.wall_ns[FL_STAGE_FANOUT] + 99 * MS;
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_RANK, done), e.wall_ns[FL_STAGE_RANK] -
		32 * MS + e.wall_ns[FL_STAGE_COMPRESS] + e.wall_ns[FL_STAGE_REPLY]);

	/* 10, 20, 30, 40 ms over and over: the 25th percentile lies between 10 and 20. */
	for (int i = 0; i < 2000; i++) {
		a[FL_STAGE_FANOUT] = cycle[i % 4];
		fl_dl_est_add(&e, a);
	}
	assert_true(e.wall_ns[FL_STAGE_FANOUT] >= 10 * MS && e.wall_ns[FL_STAGE_FANOUT] <= 20 * MS);
	/* Then everything takes 100 ms: it climbs there and stays. */
	for (int i = 0; i < 200; i++) {
		a[FL_STAGE_FANOUT] = 100 * MS;
		fl_dl_est_add(&e, a);
	}
	assert_int_equal(e.wall_ns[FL_STAGE_FANOUT], 100 * MS);
	assert_string_equal(fl_dl_stage_name(FL_DL_FANOUT), "fanout");
	assert_string_equal(fl_dl_stage_name(FL_DL_ADMIT), "admit");
}

/* A would-miss run lets every FL_DL_PROBE_EVERY-th request through; GO resets the run;
 * expired and queue-wait verdicts are never let through and do not count. */
static void test_dl_probe(void **state)
{
	struct fl_dl_est e;
	unsigned through = 0;

	(void)state;
	memset(&e, 0, sizeof(e));
	for (unsigned i = 0; i < 4 * FL_DL_PROBE_EVERY; i++)
		through += fl_dl_probe(&e, FL_DL_WOULD_MISS) == FL_DL_GO;
	assert_int_equal(through, 4);
	for (unsigned i = 0; i < FL_DL_PROBE_EVERY - 1; i++)
		assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_WOULD_MISS);
	assert_int_equal(fl_dl_probe(&e, FL_DL_GO), FL_DL_GO);
	for (unsigned i = 0; i < FL_DL_PROBE_EVERY - 1; i++)
		assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_WOULD_MISS);
	for (unsigned i = 0; i < 3 * FL_DL_PROBE_EVERY; i++) {
		assert_int_equal(fl_dl_probe(&e, FL_DL_EXPIRED), FL_DL_EXPIRED);
		assert_int_equal(fl_dl_probe(&e, FL_DL_QUEUE_WAIT), FL_DL_QUEUE_WAIT);
	}
	assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_GO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dl_decide),
		cmocka_unit_test(test_dl_decide_queue),
		cmocka_unit_test(test_dl_local),
		cmocka_unit_test(test_dl_estimate),
		cmocka_unit_test(test_dl_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
