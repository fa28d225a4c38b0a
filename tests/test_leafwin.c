/* test_leafwin.c: tests for runtime/measure/leafwin.c, the measurement windows:
 * 4. whole window: accepted, every kind of broken window refused, 5. PMU window: counted
 * (synthetic) and unsupported, 6. stage window shares. Build: ninja tests/test_leafwin.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "leafwin.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_whole),
		cmocka_unit_test(test_pmu_window),
		cmocka_unit_test(test_stage_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
