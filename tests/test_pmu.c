/* test_pmu.c: tests for runtime/common/pmu.c (counter groups, scaling, sums, metrics).
 *
 * Test 1 takes whichever branch the host allows: without a PMU, open must fail with the
 * errno text and leave no fd; with one, a busy loop must count instructions. The others
 * use hand-made counts and synthetic group-read buffers (fl_pmu_parse_group). Build: ninja tests/test_pmu.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pmu.h"

/* Open descriptors of this process (the directory stream's own fd counts each time). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Counts with every event supported, from values in enum order. */
static void make_counts(struct fl_pmu_counts *c, const uint64_t v[FL_PMU_NEVENTS])
{
	memset(c, 0, sizeof *c);
	c->threads = 1;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		c->ev[e].value = c->ev[e].raw = v[e];
		c->ev[e].enabled_ns = c->ev[e].running_ns = 1000000;
		c->ev[e].supported = true;
	}
}

static void unsupport(struct fl_pmu_counts *c, enum fl_pmu_event e, const char *why)
{
	c->ev[e].supported = false;
	c->ev[e].value = 0;
	snprintf(c->ev[e].why, sizeof c->ev[e].why, "%s", why);
}

/* 1. Open on this host: clean failure with a reason and no leaked fd, or real counts. */
static void test_open(void **state)
{
	struct fl_pmu p;
	char why[256] = "x";

	(void)state;
	int before = count_fds();
	int rc = fl_pmu_open(&p, 0, why, sizeof why);
	if (rc != 0) {
		print_message("    no PMU: %s\n", why);
		assert_int_equal(rc, -1);
		assert_true(strlen(why) > 0);
		assert_non_null(strstr(why, "hardware counters unsupported on this host: "
		                            "perf_event_open(instructions): "));
		assert_true(strlen(why) > strlen("hardware counters unsupported on this host: "
		                                  "perf_event_open(instructions): "));
		for (int e = 0; e < FL_PMU_NEVENTS; e++)
			assert_int_equal(p.fd[e], -1);
		assert_int_equal(count_fds(), before);
		assert_int_equal(fl_pmu_enable(&p, why, sizeof why), -1);
		fl_pmu_close(&p);
		assert_int_equal(count_fds(), before);
		return;
	}

	struct fl_pmu_counts c;
	struct fl_pmu_metrics m;
	volatile uint64_t sink = 0;

	assert_string_equal(why, "");
	assert_int_equal(fl_pmu_reset(&p, why, sizeof why), 0);
	assert_int_equal(fl_pmu_enable(&p, why, sizeof why), 0);
	for (uint64_t i = 0; i < 10000000; i++)
		sink += i ^ (sink >> 3);
	assert_int_equal(fl_pmu_disable(&p, why, sizeof why), 0);
	assert_int_equal(fl_pmu_read(&p, &c, why, sizeof why), 0);
	assert_int_equal(c.threads, 1);
	assert_true(c.ev[FL_PMU_INSTRUCTIONS].supported);
	assert_true(c.ev[FL_PMU_INSTRUCTIONS].value > 10000000);
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		print_message("    %-24s %s %llu (x%.2f) %s\n", fl_pmu_event_name(e),
		              c.ev[e].supported ? "ok" : "--", (unsigned long long)c.ev[e].value,
		              fl_pmu_scale_factor(&c.ev[e]), c.ev[e].why);
		if (!c.ev[e].supported)
			assert_true(strlen(c.ev[e].why) > 0);
	}
	fl_pmu_derive(&c, &m);
	assert_true(m.max_scale >= 1.0);
	fl_pmu_close(&p);
	fl_pmu_close(&p);
	assert_int_equal(count_fds(), before);
}

/* 2. Metrics are exact on hand-made counts; a missing input makes a metric unsupported
 * with the input's name, never zero; a zero denominator likewise. */
static void test_derive(void **state)
{
	static const uint64_t v[FL_PMU_NEVENTS] = {
		[FL_PMU_INSTRUCTIONS] = 2000000, [FL_PMU_CYCLES] = 1000000,
		[FL_PMU_L1I_MISSES] = 30000,     [FL_PMU_ITLB_MISSES] = 500,
		[FL_PMU_BRANCHES] = 400000,      [FL_PMU_BRANCH_MISSES] = 8000,
		[FL_PMU_STALLED_FRONTEND] = 250000,
	};
	struct fl_pmu_counts c;
	struct fl_pmu_metrics m;

	(void)state;
	make_counts(&c, v);
	fl_pmu_derive(&c, &m);
	assert_true(m.ipc.supported && m.ipc.value == 2.0);
	assert_true(m.l1i_mpki.supported && m.l1i_mpki.value == 15.0);
	assert_true(m.itlb_mpki.supported && m.itlb_mpki.value == 0.25);
	assert_true(m.branch_mpki.supported && m.branch_mpki.value == 4.0);
	assert_true(m.branch_miss_pct.supported && m.branch_miss_pct.value == 2.0);
	assert_true(m.fe_stall_share.supported && m.fe_stall_share.value == 0.25);
	assert_string_equal(m.l1i_mpki.why, "");
	assert_true(m.max_scale == 1.0);

	unsupport(&c, FL_PMU_STALLED_FRONTEND,
	          "perf_event_open(stalled-cycles-frontend): No such file or directory");
	unsupport(&c, FL_PMU_ITLB_MISSES, "perf_event_open(iTLB-misses): Operation not supported");
	fl_pmu_derive(&c, &m);
	assert_false(m.fe_stall_share.supported);
	assert_non_null(strstr(m.fe_stall_share.why, "stalled-cycles-frontend unsupported"));
	assert_false(m.itlb_mpki.supported);
	assert_non_null(strstr(m.itlb_mpki.why, "Operation not supported"));
	assert_true(m.ipc.supported && m.l1i_mpki.supported && m.branch_mpki.supported);

	unsupport(&c, FL_PMU_CYCLES, "perf_event_open(cycles): No such file or directory");
	fl_pmu_derive(&c, &m);
	assert_false(m.ipc.supported);
	assert_non_null(strstr(m.ipc.why, "cycles unsupported"));
	assert_false(m.fe_stall_share.supported);
	assert_true(m.l1i_mpki.supported && m.l1i_mpki.value == 15.0);

	make_counts(&c, v);
	c.ev[FL_PMU_INSTRUCTIONS].value = 0;
	fl_pmu_derive(&c, &m);
	assert_false(m.l1i_mpki.supported);
	assert_string_equal(m.l1i_mpki.why, "no instructions counted");
	assert_false(m.branch_mpki.supported);
	assert_true(m.ipc.supported && m.ipc.value == 0.0);

	fl_pmu_counts_init(&c);
	fl_pmu_derive(&c, &m);
	assert_false(m.ipc.supported);
	assert_false(m.l1i_mpki.supported);
}

/* 3. Multiplex scaling: raw * enabled / running, exact, without overflow. */
static void test_scaling(void **state)
{
	(void)state;
	assert_int_equal(fl_pmu_scale_count(1000, 300, 100), 3000);
	assert_int_equal(fl_pmu_scale_count(7, 3, 2), 10); /* 10.5 truncated */
	assert_int_equal(fl_pmu_scale_count(1000, 100, 100), 1000);
	assert_int_equal(fl_pmu_scale_count(1000, 100, 150), 1000); /* running > enabled */
	assert_int_equal(fl_pmu_scale_count(1000, 100, 0), 0);
	assert_int_equal(fl_pmu_scale_count(0, 100, 50), 0);
	/* 2^62 * 3e9 / 2e9 = 1.5 * 2^62: the naive product would overflow. */
	assert_true(fl_pmu_scale_count(1ull << 62, 3000000000ull, 2000000000ull) ==
	            (1ull << 62) + (1ull << 61));
#if defined(__SIZEOF_INT128__)
	assert_true(fl_pmu_scale_count(999999999999ull, 4000000007ull, 1000000009ull) ==
	            (uint64_t)((unsigned __int128)999999999999ull * 4000000007ull /
	                       1000000009ull));
#endif

	struct fl_pmu_count k = {.enabled_ns = 400, .running_ns = 100};
	assert_true(fl_pmu_scale_factor(&k) == 4.0);
	k.running_ns = 0;
	assert_true(fl_pmu_scale_factor(&k) == 0.0);

	/* max_scale reports the largest factor among supported events. */
	static const uint64_t v[FL_PMU_NEVENTS] = {[FL_PMU_INSTRUCTIONS] = 100,
	                                           [FL_PMU_CYCLES] = 100};
	struct fl_pmu_counts c;
	struct fl_pmu_metrics m;
	make_counts(&c, v);
	c.ev[FL_PMU_CYCLES].enabled_ns = 2500000;
	c.ev[FL_PMU_CYCLES].value = fl_pmu_scale_count(100, 2500000, 1000000);
	fl_pmu_derive(&c, &m);
	assert_true(m.max_scale == 2.5);
	assert_true(m.ipc.supported && m.ipc.value == 0.4);
}

/* 4. Sums: counts and times add, threads count, an event unsupported anywhere is
 * unsupported in the total with that thread's reason. */
static void test_sum(void **state)
{
	static const uint64_t a[FL_PMU_NEVENTS] = {10, 20, 30, 40, 50, 60, 70};
	static const uint64_t b[FL_PMU_NEVENTS] = {1, 2, 3, 4, 5, 6, 7};
	struct fl_pmu_counts ca, cb, pool, total;

	(void)state;
	make_counts(&ca, a);
	make_counts(&cb, b);
	unsupport(&cb, FL_PMU_STALLED_FRONTEND, "never on the PMU");

	fl_pmu_counts_init(&pool);
	assert_int_equal(pool.threads, 0);
	fl_pmu_sum(&pool, &ca);
	fl_pmu_sum(&pool, &cb);
	assert_int_equal(pool.threads, 2);
	for (int e = 0; e < FL_PMU_STALLED_FRONTEND; e++) {
		assert_true(pool.ev[e].supported);
		assert_int_equal(pool.ev[e].value, a[e] + b[e]);
		assert_int_equal(pool.ev[e].raw, a[e] + b[e]);
		assert_int_equal(pool.ev[e].enabled_ns, 2000000);
		assert_int_equal(pool.ev[e].running_ns, 2000000);
	}
	assert_false(pool.ev[FL_PMU_STALLED_FRONTEND].supported);
	assert_string_equal(pool.ev[FL_PMU_STALLED_FRONTEND].why, "never on the PMU");

	/* Pool totals add up again into a grand total. */
	fl_pmu_counts_init(&total);
	fl_pmu_sum(&total, &pool);
	fl_pmu_sum(&total, &ca);
	assert_int_equal(total.threads, 3);
	assert_int_equal(total.ev[FL_PMU_INSTRUCTIONS].value, 21);
	assert_false(total.ev[FL_PMU_STALLED_FRONTEND].supported);

	struct fl_pmu_metrics m;
	fl_pmu_derive(&pool, &m);
	assert_true(m.ipc.supported && m.ipc.value == 0.5);
	assert_false(m.fe_stall_share.supported);

	assert_string_equal(fl_pmu_event_name(FL_PMU_L1I_MISSES), "L1i-misses");
	assert_string_equal(fl_pmu_event_name(FL_PMU_NEVENTS), "unknown");
}

/* A fake two-group open: instructions, cycles, L1i in group 0 (ids 11, 12, 13), the
 * top-down pair in group 1 (ids 21, 22); the rest unsupported. No fd is real. */
static void fake_pmu(struct fl_pmu *p)
{
	memset(p, 0, sizeof *p);
	for (int e = 0; e < FL_PMU_NEVENTS; e++)
		p->fd[e] = -1;
	static const struct { int e; uint64_t id; unsigned g; } ev[] = {
		{FL_PMU_INSTRUCTIONS, 11, 0}, {FL_PMU_CYCLES, 12, 0}, {FL_PMU_L1I_MISSES, 13, 0},
		{FL_PMU_TD_SLOTS, 21, 1},     {FL_PMU_TD_FE, 22, 1},
	};
	for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
		p->fd[ev[i].e] = 100 + (int)i;
		p->id[ev[i].e] = ev[i].id;
		p->group[ev[i].e] = ev[i].g;
	}
	p->ngroups = 2;
}

/* Events of out all unsupported, as fl_pmu_read starts them. */
static void blank_counts(struct fl_pmu_counts *c)
{
	memset(c, 0, sizeof *c);
	c->threads = 1;
}

/* 5. Group-read parsing on synthetic buffers: multiplexed, never ran, ids out of order, a
 * missing id, a short buffer, and times taken since the reset baseline. */
static void test_parse_group(void **state)
{
	struct fl_pmu p;
	struct fl_pmu_counts c;
	char why[128] = "";

	(void)state;
	fake_pmu(&p);

	/* Multiplexed: enabled 3000, running 1000 -> counts x3, factor 3. Ids 13, 11, 12. */
	uint64_t mux[] = {3, 3000, 1000, 70, 13, 500, 11, 400, 12};
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, mux, sizeof mux, &c, why, sizeof why), 0);
	assert_true(c.ev[FL_PMU_INSTRUCTIONS].supported);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].value, 1500);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].raw, 500);
	assert_int_equal(c.ev[FL_PMU_CYCLES].value, 1200);
	assert_int_equal(c.ev[FL_PMU_L1I_MISSES].value, 210);
	assert_true(c.ev[FL_PMU_L1I_MISSES].max_scale == 3.0);
	assert_false(c.ev[FL_PMU_TD_SLOTS].supported); /* other group: untouched */

	/* Never ran: running 0 -> unsupported with a reason, value not a measured 0. */
	uint64_t idle[] = {3, 5000, 0, 0, 11, 0, 12, 0, 13};
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, idle, sizeof idle, &c, why, sizeof why), 0);
	for (int e = FL_PMU_INSTRUCTIONS; e <= FL_PMU_L1I_MISSES; e++) {
		assert_false(c.ev[e].supported);
		assert_non_null(strstr(c.ev[e].why, "never on the PMU"));
	}
	struct fl_pmu_metrics m;
	fl_pmu_derive(&c, &m);
	assert_false(m.l1i_mpki.supported);
	assert_false(m.ipc.supported);

	/* A missing id (cycles, 12) stays unsupported; an unknown id (99) is ignored. */
	uint64_t miss[] = {3, 100, 100, 7, 99, 900, 11, 9, 13};
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, miss, sizeof miss, &c, why, sizeof why), 0);
	assert_true(c.ev[FL_PMU_INSTRUCTIONS].supported);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].value, 900);
	assert_false(c.ev[FL_PMU_CYCLES].supported);
	assert_string_equal(c.ev[FL_PMU_CYCLES].why, "missing from its group's read");
	fl_pmu_derive(&c, &m);
	assert_false(m.ipc.supported);
	assert_true(m.l1i_mpki.supported && m.l1i_mpki.value == 10.0);

	/* Short: nr promises 3 pairs, the buffer holds 2. */
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, mux, 7 * sizeof mux[0], &c, why, sizeof why),
	                 -1);
	assert_non_null(strstr(why, "short or malformed"));
	assert_int_equal(fl_pmu_parse_group(&p, 0, mux, 2 * sizeof mux[0], &c, why, sizeof why),
	                 -1);

	/* After a reset at enabled 10000 / running 4000 the window is 2000 / 2000 (factor 1),
	 * not the lifetime 12000 / 6000 (factor 2). */
	p.base_enabled[0] = 10000;
	p.base_running[0] = 4000;
	uint64_t after[] = {3, 12000, 6000, 300, 11, 200, 12, 3, 13};
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, after, sizeof after, &c, why, sizeof why), 0);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].enabled_ns, 2000);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].running_ns, 2000);
	assert_int_equal(c.ev[FL_PMU_INSTRUCTIONS].value, 300);
	assert_true(c.ev[FL_PMU_INSTRUCTIONS].max_scale == 1.0);
	/* ... and a group that did not run since the reset is unsupported. */
	uint64_t still[] = {3, 15000, 4000, 0, 11, 0, 12, 0, 13};
	blank_counts(&c);
	assert_int_equal(fl_pmu_parse_group(&p, 0, still, sizeof still, &c, why, sizeof why), 0);
	assert_false(c.ev[FL_PMU_INSTRUCTIONS].supported);
}

/* 6. A pool's max_scale is the largest factor of any thread, not the time-weighted mean. */
static void test_max_scale_sum(void **state)
{
	struct fl_pmu p;
	struct fl_pmu_counts a, b, pool;
	struct fl_pmu_metrics m;
	char why[128];

	(void)state;
	fake_pmu(&p);
	uint64_t full[] = {3, 9000000, 9000000, 1000, 11, 1000, 12, 10, 13};
	uint64_t quarter[] = {3, 1000000, 250000, 100, 11, 100, 12, 1, 13};
	blank_counts(&a);
	blank_counts(&b);
	assert_int_equal(fl_pmu_parse_group(&p, 0, full, sizeof full, &a, why, sizeof why), 0);
	assert_int_equal(fl_pmu_parse_group(&p, 0, quarter, sizeof quarter, &b, why, sizeof why),
	                 0);
	fl_pmu_counts_init(&pool);
	fl_pmu_sum(&pool, &a);
	fl_pmu_sum(&pool, &b);
	/* summed times give 10e6 / 9.25e6 = 1.08; the worst thread was multiplexed 4x */
	assert_true(fl_pmu_scale_factor(&pool.ev[FL_PMU_INSTRUCTIONS]) < 1.1);
	for (int e = FL_PMU_TD_SLOTS; e < FL_PMU_NEVENTS; e++)
		pool.ev[e].supported = false;
	fl_pmu_derive(&pool, &m);
	assert_true(m.max_scale == 4.0);
	assert_int_equal(pool.ev[FL_PMU_INSTRUCTIONS].value, 1000 + 400);
}

/* 7. Front-end bound from the top-down pair, with its formula and multipliers; without a
 * pair it is unsupported while the stall-cycle ratio stays a cycle ratio. */
static void test_fe_bound(void **state)
{
	struct fl_pmu p;
	struct fl_pmu_counts c;
	struct fl_pmu_metrics m;
	char why[128];

	(void)state;
	fake_pmu(&p);
	p.td.name = "amd-zen4";
	p.td.formula = "de_no_dispatch_per_slot.no_ops_from_frontend / (6 * ls_not_halted_cyc)";
	p.td.slots_mult = 6.0;
	p.td.fe_mult = 1.0;
	uint64_t g0[] = {3, 10, 10, 3000, 11, 1000, 12, 30, 13};
	uint64_t g1[] = {2, 10, 10, 1500, 22, 1000, 21}; /* fe first */
	blank_counts(&c);
	c.td = p.td;
	assert_int_equal(fl_pmu_parse_group(&p, 0, g0, sizeof g0, &c, why, sizeof why), 0);
	assert_int_equal(fl_pmu_parse_group(&p, 1, g1, sizeof g1, &c, why, sizeof why), 0);
	fl_pmu_derive(&c, &m);
	assert_true(m.fe_bound.supported);
	assert_true(m.fe_bound.value == 0.25); /* 1500 / (6 * 1000) */
	assert_string_equal(m.fe_bound_formula, p.td.formula);
	assert_false(m.fe_stall_share.supported); /* stalled-cycles-frontend not opened */

	blank_counts(&c);
	snprintf(c.ev[FL_PMU_TD_FE].why, sizeof c.ev[FL_PMU_TD_FE].why,
	         "no top-down slot events on this CPU");
	snprintf(c.ev[FL_PMU_TD_SLOTS].why, sizeof c.ev[FL_PMU_TD_SLOTS].why,
	         "no top-down slot events on this CPU");
	fl_pmu_derive(&c, &m);
	assert_false(m.fe_bound.supported);
	assert_null(m.fe_bound_formula);
	assert_non_null(strstr(m.fe_bound.why, "no top-down slot events"));

	/* The host's own source, whatever it is, is named or explained. */
	struct fl_pmu_topdown td;
	why[0] = '\0';
	fl_pmu_topdown_find(&td, why, sizeof why);
	print_message("    top-down here: %s\n", td.name ? td.formula : why);
	assert_true(td.name ? td.formula != NULL : strlen(why) > 0);
}

/* 8. sysfs event specs into configs (x86 core layout). */
static void test_spec(void **state)
{
	uint64_t c = 1;

	(void)state;
	assert_int_equal(fl_pmu_spec_config("event=0x00,umask=0x4", &c), 0);
	assert_true(c == 0x400);
	assert_int_equal(fl_pmu_spec_config("event=0x00,umask=0x82\n", &c), 0);
	assert_true(c == 0x8200);
	assert_int_equal(fl_pmu_spec_config("event=0x3c,umask=0x0,any=1", &c), 0);
	assert_true(c == (0x3c | 1u << 21));
	assert_int_equal(fl_pmu_spec_config("event=0x9c,umask=0x01,cmask=4,inv", &c), 0);
	assert_true(c == (0x9c | 0x100 | 4u << 24 | 1u << 23));
	assert_int_equal(fl_pmu_spec_config("event=0x1a0,umask=0x01", &c), 0);
	assert_true(c == 0x1000001a0ull);
	assert_int_equal(fl_pmu_spec_config("event=0x00,frob=1", &c), -1);
	assert_int_equal(fl_pmu_spec_config("umask=0x100", &c), -1);
	assert_int_equal(fl_pmu_spec_config("event=zz", &c), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_scaling),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_parse_group),
		cmocka_unit_test(test_max_scale_sum),
		cmocka_unit_test(test_fe_bound),
		cmocka_unit_test(test_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
