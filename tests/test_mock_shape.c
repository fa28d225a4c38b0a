/* test_mock_shape.c: tests for runtime/mock/mock_shape.c, the mock's latency shaping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <time.h>

#include "mock_shape.h"

static uint32_t decide(const struct mock_shape_cfg *c, uint32_t l, enum mock_shape_action want)
{
	uint32_t wait = 12345;
	assert_int_equal(mock_shape_decide(c, l, &wait), want);
	return wait;
}

/* 1.1 Defaults, and each region with its boundaries: [0,100) now, [100,200) spin, else timer. */
static void test_shape_regions(void **state)
{
	(void)state;
	struct mock_shape_cfg c;
	mock_shape_defaults(&c);
	assert_int_equal(c.cap_us, 200000);
	assert_int_equal(c.offset_us, 0);
	assert_int_equal(c.skip_us, 100);
	assert_int_equal(c.spin_us, 200);

	assert_int_equal(decide(&c, 0, MOCK_SHAPE_NOW), 0);
	assert_int_equal(decide(&c, 99, MOCK_SHAPE_NOW), 0);
	assert_int_equal(decide(&c, 100, MOCK_SHAPE_SPIN), 100);
	assert_int_equal(decide(&c, 199, MOCK_SHAPE_SPIN), 199);
	assert_int_equal(decide(&c, 200, MOCK_SHAPE_TIMER), 200);
	assert_int_equal(decide(&c, 5000, MOCK_SHAPE_TIMER), 5000);
	/* wait_us may be NULL */
	assert_int_equal(mock_shape_decide(&c, 150, NULL), MOCK_SHAPE_SPIN);
	assert_string_equal(mock_shape_action_name(MOCK_SHAPE_TIMER), "timer");
	assert_string_equal(mock_shape_action_name(MOCK_SHAPE_ACTIONS), "unknown");
}

/* 1.2 The cap applies before the offset; the offset floors at 0. */
static void test_shape_cap_offset(void **state)
{
	(void)state;
	struct mock_shape_cfg c;
	mock_shape_defaults(&c);
	assert_int_equal(mock_shape_effective_us(&c, 199999), 199999);
	assert_int_equal(mock_shape_effective_us(&c, 200000), 200000);
	assert_int_equal(mock_shape_effective_us(&c, 200001), 200000);
	assert_int_equal(mock_shape_effective_us(&c, UINT32_MAX), 200000);
	assert_int_equal(decide(&c, 9979607, MOCK_SHAPE_TIMER), 200000);

	/* A fixed latency replaces every asked one, then goes through cap and offset. */
	c.fixed_us = 5000;
	assert_int_equal(mock_shape_effective_us(&c, 0), 5000);
	assert_int_equal(mock_shape_effective_us(&c, 9979607), 5000);
	c.fixed_us = 300000;
	assert_int_equal(mock_shape_effective_us(&c, 10), 200000);
	c.fixed_us = MOCK_SHAPE_NOT_FIXED;

	c.offset_us = 50;
	assert_int_equal(mock_shape_effective_us(&c, 0), 0);
	assert_int_equal(mock_shape_effective_us(&c, 50), 0);
	assert_int_equal(mock_shape_effective_us(&c, 51), 1);
	assert_int_equal(mock_shape_effective_us(&c, UINT32_MAX), 199950);
	assert_int_equal(decide(&c, 149, MOCK_SHAPE_NOW), 0);     /* 99 */
	assert_int_equal(decide(&c, 150, MOCK_SHAPE_SPIN), 100);  /* 100 */
	assert_int_equal(decide(&c, 249, MOCK_SHAPE_SPIN), 199);
	assert_int_equal(decide(&c, 250, MOCK_SHAPE_TIMER), 200);

	c.offset_us = 300000;  /* larger than the cap: everything is immediate */
	assert_int_equal(decide(&c, UINT32_MAX, MOCK_SHAPE_NOW), 0);
}

/* 1.3 Degenerate thresholds: skip >= spin leaves no spin region; zeros time everything. */
static void test_shape_thresholds(void **state)
{
	(void)state;
	struct mock_shape_cfg c = { .cap_us = 1000, .offset_us = 0, .skip_us = 300, .spin_us = 200,
		.fixed_us = MOCK_SHAPE_NOT_FIXED };
	decide(&c, 250, MOCK_SHAPE_NOW);
	assert_int_equal(decide(&c, 300, MOCK_SHAPE_TIMER), 300);
	c.skip_us = 0;
	c.spin_us = 0;
	assert_int_equal(decide(&c, 0, MOCK_SHAPE_TIMER), 0);
	c.cap_us = 0;
	assert_int_equal(decide(&c, 777, MOCK_SHAPE_TIMER), 0);
}

/* 1.4 The spin waits at least as long as asked. */
static void test_shape_spin(void **state)
{
	(void)state;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	mock_shape_spin(300);
	clock_gettime(CLOCK_MONOTONIC, &b);
	int64_t ns = (b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec);
	assert_true(ns >= 300000);
	mock_shape_spin(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape_regions),
		cmocka_unit_test(test_shape_cap_offset),
		cmocka_unit_test(test_shape_thresholds),
		cmocka_unit_test(test_shape_spin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
