/* test_calib_foot.c: tests for runtime/measure/calib_foot.c, the generated code's share
 * of the instructions against an L1i MPKI target (calibrate --leaf's footprint step):
 * 1. the figures of a measured run, 2. a run on target, 3. no split measured, 4. the cost
 * of a generated instruction, 5. its exponent over the footprint.
 * Build: ninja tests/test_calib_foot.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "calib_foot.h"

/* validate's JSON with a process of I instructions at MPKI m, the generated library ig
 * of them at MPKI mg (and an unrelated object before it, as validate lists them). */
static json_t *run(double I, double m, double ig, double mg)
{
	return json_pack("{s:{s:f,s:f},s:[{s:s,s:f,s:f},{s:s,s:f,s:f}]}",
		"process", "instructions", I, "l1i_mpki", m,
		"objects", "name", "leaf", "instructions", I - ig, "l1i_mpki", 1.0,
		"name", "generated", "instructions", ig, "l1i_mpki", mg);
}

/* 1. The default build's run at a 512 KiB footprint (2026-12-05): 367.4 M instructions at
 * 37.53, the generated code 221.2 M at 59.90. The rest misses at
 * (37.53 x 367.4 - 59.90 x 221.2) / 146.2 = 3.68; MPKI 21 needs a generated share of
 * (21 - 3.68) / (59.90 - 3.68) = 0.308 against the 0.602 run: odds 1.513 / 0.445. */
static void test_measured_run(void **state)
{
	(void)state;
	json_t *v = run(367.4e6, 37.53, 221.2e6, 59.90);
	double s = 221.2 / 367.4, mo = (37.53 * 367.4 - 59.90 * 221.2) / (367.4 - 221.2);
	double st = (21 - mo) / (59.90 - mo);
	double want = (s / (1 - s)) / (st / (1 - st));

	assert_true(fabs(fm_foot_odds(v, 21) - want) < 1e-9);
	assert_true(want > 3.3 && want < 3.5);  /* the footprint must grow */
	/* Below the target the ratio is under 1: the footprint shrinks. */
	assert_true(fm_foot_odds(v, 45) < 1);
	json_decref(v);
	/* A run whose generated code misses less than the rest: raising the MPKI asks for
	 * the least generated share (0.01), lowering it for the most (0.99). */
	v = run(100e6, 6.0, 10e6, 2.0);
	assert_true(fabs(fm_foot_odds(v, 21) - (0.1 / 0.9) / (0.01 / 0.99)) < 1e-9);
	assert_true(fabs(fm_foot_odds(v, 3) - (0.1 / 0.9) / (0.99 / 0.01)) < 1e-9);
	json_decref(v);
}

/* 2. A run at the target: ratio 1, the footprint holds. */
static void test_on_target(void **state)
{
	(void)state;
	/* 30% of 100 M at 60, the rest at 3: 0.3 x 60 + 0.7 x 3 = 20.1. */
	json_t *v = run(100e6, 20.1, 30e6, 60.0);

	assert_true(fabs(fm_foot_odds(v, 20.1) - 1) < 1e-9);
	json_decref(v);
}

/* 3. No split: no simulated figures, no generated code, only generated code, NaN-free
 * garbage. */
static void test_no_split(void **state)
{
	(void)state;
	json_t *v[] = {
		json_object(),
		json_pack("{s:{s:f,s:n}}", "process", "instructions", 1e6, "l1i_mpki"),
		run(100e6, 5.0, 0, 60.0),
		run(100e6, 60.0, 100e6, 60.0),
		json_pack("{s:{s:f,s:f},s:[{s:s,s:s}]}", "process", "instructions", 1e6,
			"l1i_mpki", 5.0, "objects", "name", "generated", "instructions", "many"),
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		assert_true(isnan(fm_foot_odds(v[i], 21)));
		json_decref(v[i]);
	}
}

/* 4. 212.85 ms of extraction CPU over 48 requests of 27.65 M generated instructions each. */
static void test_cost(void **state)
{
	(void)state;
	json_t *v = json_pack("{s:{s:{s:{s:f}}},s:{s:{s:i}},s:[{s:s,s:f}]}",
		"stages", "stages", "extract", "cpu_ns", 212.85e6, "native", "driver_step", "ok",
		48, "objects", "name", "generated", "ir_per_request", 27.65e6);

	assert_true(fabs(fm_foot_cost(v) - 212.85e6 / 48 / 27.65e6) < 1e-12);
	json_object_set_new(json_object_get(v, "native"), "driver_step", json_object());
	assert_true(isnan(fm_foot_cost(v)));
	json_decref(v);
}

/* 5. Points on cost = 2 x footprint^1.5 give slope 1.5; one point, or footprints that do
 * not differ, give none. */
static void test_slope(void **state)
{
	(void)state;
	double x[4], y[4];

	for (int i = 0; i < 4; i++) {
		x[i] = log(400e3 * (i + 1));
		y[i] = log(2) + 1.5 * x[i];
	}
	assert_true(fabs(fm_foot_slope(x, y, 4) - 1.5) < 1e-9);
	assert_true(isnan(fm_foot_slope(x, y, 1)));
	x[1] = x[0] + 0.01;
	assert_true(isnan(fm_foot_slope(x, y, 2)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured_run),
		cmocka_unit_test(test_on_target),
		cmocka_unit_test(test_no_split),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_slope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
