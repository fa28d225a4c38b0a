/* test_run_result.c: tests for runtime/run/run_result.c: the leaf's cpu_clock and pmu
 * sections in result.json (the pmu delta over the final window, numbers only where both
 * snapshots counted). Build: ninja tests/test_run_result.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "hist.h"
#include "hist_json.h"
#include "quantile_ci.h"
#include "rng.h"
#include "run_result.h"

/* A leaf stats snapshot with one pool ("ranker") and a total, counted by the PMU:
 * instructions and cycles scaled by k, stalled-cycles-frontend unsupported, the
 * instructions event multiplexed (running = enabled / 2 over the interval). */
static json_t *leaf_snapshot(double k, int supported)
{
	const char *why = "hardware counters unsupported on this host: perf_event_open("
		"instructions): No such file or directory";
	json_t *clock = json_pack("{ss ss ss s{si si}}", "requested", "auto", "method",
		"clock_gettime", "fast_path_unavailable", "cap_user_time=0 on this host",
		"threads", "perf-mmap", 0, "clock_gettime", 2);
	json_t *stages = json_pack("{s{sI sI}}", "extract", "cpu_ns", (json_int_t)(1e6 * k),
		"wall_ns", (json_int_t)(2e6 * k));
	json_t *pmu;
	if (supported) {
		json_t *pool = json_pack("{si si sI sI sI sI sI sI ss s{sI sI} s{sI sI}}",
			"threads", 2, "threads_counted", 2,
			"instructions", (json_int_t)(4000000 * k), "cycles", (json_int_t)(2000000 * k),
			"l1i_misses", (json_int_t)(40000 * k), "itlb_misses", (json_int_t)(400 * k),
			"branches", (json_int_t)(800000 * k), "branch_misses", (json_int_t)(8000 * k),
			"stalled_cycles_frontend", "unsupported: perf_event_open("
			"stalled-cycles-frontend): No such file or directory",
			"enabled_ns", "instructions", (json_int_t)(2000000 * k), "cycles",
			(json_int_t)(2000000 * k),
			"running_ns", "instructions", (json_int_t)(1000000 * k), "cycles",
			(json_int_t)(2000000 * k));
		pmu = json_pack("{sb sb ss sb sO so}", "enabled", 1, "supported", 1, "why", "",
			"user_only", 1, "ranker", pool, "total", pool);
	} else {
		pmu = json_pack("{sb sb ss sb s{ss}}", "enabled", 1, "supported", 0, "why", why,
			"user_only", 0, "ranker", "instructions", "unsupported: x");
	}
	return json_pack("{sf so so so s{si}}", "uptime_s", 10.0 * k, "stages", stages,
		"cpu_clock", clock, "pmu", pmu, "requests", "ok", (int)(100 * k));
}

/* A run of one instance writing into a fresh directory dir (a mkdtemp template). */
static void run_one(struct fl_run *r, struct fl_run_instance *in, char *dir)
{
	assert_non_null(mkdtemp(dir));
	memset(r, 0, sizeof *r);
	memset(in, 0, sizeof *in);
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	snprintf(r->run_id, sizeof r->run_id, "test");
	r->final_step = -1;
	r->ninst = 1;
	r->inst = in;
}

/* Write r's result.json, read it back parsed, and remove the directory. */
static json_t *write_and_load(struct fl_run *r, const char *dir)
{
	char path[256], err[256];

	assert_int_equal(fl_result_write(r, err, sizeof err), 0);
	snprintf(path, sizeof path, "%s/result.json", dir);
	json_t *j = fl_result_load_json(path);
	assert_non_null(j);
	unlink(path);
	snprintf(path, sizeof path, "%s/steps.csv", dir);
	unlink(path);
	rmdir(dir);
	return j;
}

/* Write result.json for one instance with the given leaf snapshots; return it parsed. */
static json_t *result_with(json_t *pre, json_t *post)
{
	struct fl_run r;
	struct fl_run_instance in;
	char dir[] = "/tmp/fl-test-result.XXXXXX";

	run_one(&r, &in, dir);
	in.own_leaf = 1;
	in.leaf_stats_pre = pre;
	in.leaf_stats_post = post;
	in.leaf_stats_end = post;
	snprintf(in.leaf_stats_path, sizeof in.leaf_stats_path, "%s/leaf0-stats.json", dir);
	json_t *j = write_and_load(&r, dir);
	json_decref(pre);
	json_decref(post);
	return j;
}

static const json_t *leaf_of(const json_t *result)
{
	const json_t *l = json_object_get(json_array_get(json_object_get(result, "instances"), 0),
		"leaf_stats");
	assert_true(json_is_object(l));
	return l;
}

static void assert_unsupported(const json_t *v, const char *contains)
{
	assert_true(json_is_string(v));
	assert_true(strncmp(json_string_value(v), "unsupported: ", 13) == 0);
	if (contains)
		assert_non_null(strstr(json_string_value(v), contains));
}

/* 1. Counted on both snapshots: per-event deltas, metrics of the deltas, the
 * multiplexing scale of the interval; an unsupported event and its metric stay strings. */
static void test_pmu_delta_supported(void **state)
{
	(void)state;
	json_t *res = result_with(leaf_snapshot(1, 1), leaf_snapshot(3, 1));
	const json_t *l = leaf_of(res);
	const json_t *p = json_object_get(json_object_get(l, "final_window"), "pmu");

	assert_true(json_is_true(json_object_get(p, "supported")));
	assert_true(json_is_true(json_object_get(p, "user_only")));
	const json_t *rk = json_object_get(p, "ranker");
	assert_int_equal(json_integer_value(json_object_get(rk, "instructions")), 8000000);
	assert_int_equal(json_integer_value(json_object_get(rk, "cycles")), 4000000);
	assert_int_equal(json_integer_value(json_object_get(rk, "threads")), 2);
	assert_float_equal(json_real_value(json_object_get(rk, "ipc")), 2.0, 1e-9);
	assert_float_equal(json_real_value(json_object_get(rk, "l1i_mpki")), 10.0, 1e-9);
	assert_float_equal(json_real_value(json_object_get(rk, "itlb_mpki")), 0.1, 1e-9);
	assert_float_equal(json_real_value(json_object_get(rk, "branch_mpki")), 2.0, 1e-9);
	assert_float_equal(json_real_value(json_object_get(rk, "branch_miss_pct")), 1.0, 1e-9);
	assert_float_equal(json_real_value(json_object_get(rk, "mux_scale_pool")), 2.0, 1e-9);
	assert_unsupported(json_object_get(rk, "stalled_cycles_frontend"),
		"stalled-cycles-frontend");
	assert_unsupported(json_object_get(rk, "frontend_stall_cycle_ratio"), "stalled_cycles_frontend");
	assert_non_null(json_object_get(p, "total"));
	/* The stages delta is still there, and the whole run carries the leaf's own pmu. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
		json_object_get(l, "final_window"), "stages"), "extract"), "cpu_ns")), 2000000);
	const json_t *wp = json_object_get(json_object_get(l, "whole_run"), "pmu");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(wp, "ranker"),
		"instructions")), 12000000);
	json_decref(res);
}

/* 2. No PMU on the host: the window says so with the leaf's reason, and nothing else. */
static void test_pmu_delta_unsupported(void **state)
{
	(void)state;
	json_t *res = result_with(leaf_snapshot(1, 0), leaf_snapshot(2, 0));
	const json_t *l = leaf_of(res);
	const json_t *p = json_object_get(json_object_get(l, "final_window"), "pmu");

	assert_true(json_is_false(json_object_get(p, "supported")));
	assert_non_null(strstr(json_string_value(json_object_get(p, "why")), "perf_event_open"));
	assert_int_equal(json_object_size(p), 2);
	json_decref(res);
}

/* 3. cpu_clock is copied from the leaf's stats as it is. */
static void test_cpu_clock(void **state)
{
	(void)state;
	json_t *res = result_with(leaf_snapshot(1, 0), leaf_snapshot(2, 0));
	const json_t *c = json_object_get(leaf_of(res), "cpu_clock");

	assert_string_equal(json_string_value(json_object_get(c, "method")), "clock_gettime");
	assert_string_equal(json_string_value(json_object_get(c, "requested")), "auto");
	assert_non_null(json_string_value(json_object_get(c, "fast_path_unavailable")));
	json_decref(res);
}

/* 4. A snapshot without a pmu section (an older leaf), and counts that went down (a
 * restarted leaf): reasons, never numbers. */
static void test_pmu_delta_odd(void **state)
{
	(void)state;
	json_t *pre = leaf_snapshot(1, 1);
	json_object_del(pre, "pmu");
	json_t *res = result_with(pre, leaf_snapshot(2, 1));
	const json_t *p = json_object_get(json_object_get(leaf_of(res), "final_window"), "pmu");
	assert_true(json_is_false(json_object_get(p, "supported")));
	assert_non_null(strstr(json_string_value(json_object_get(p, "why")), "no pmu section"));
	json_decref(res);

	res = result_with(leaf_snapshot(3, 1), leaf_snapshot(1, 1));
	p = json_object_get(json_object_get(leaf_of(res), "final_window"), "pmu");
	const json_t *rk = json_object_get(p, "ranker");
	assert_unsupported(json_object_get(rk, "instructions"), "went down");
	assert_unsupported(json_object_get(rk, "ipc"), "instructions");
	json_decref(res);
}

/* Write result.json and steps.csv for r (its dir made here); return result.json parsed
 * and steps.csv's text in csv. */
static json_t *write_run(struct fl_run *r, char *csv, size_t csvlen)
{
	char dir[] = "/tmp/fl-test-result.XXXXXX", path[256], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	snprintf(r->run_id, sizeof r->run_id, "test");
	assert_int_equal(fl_result_write(r, err, sizeof err), 0);
	snprintf(path, sizeof path, "%s/result.json", dir);
	json_t *j = fl_result_load_json(path);
	assert_non_null(j);
	unlink(path);
	snprintf(path, sizeof path, "%s/steps.csv", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(csv, 1, csvlen - 1, f);
	csv[n] = 0;
	fclose(f);
	unlink(path);
	rmdir(dir);
	return j;
}

/* A driver step line: p95 300 ms with its interval, or (empty) no OK reply at all, the
 * p95 null as the driver writes it then. */
static void parse_step(struct fl_run_obs *o, int empty)
{
	char err[256];
	const char *full = "{\"requested_qps\": 100, \"achieved_qps\": 99, \"window_s\": 10, "
		"\"sent\": 1000, \"ok\": 990, \"backlogged\": 3, \"inflight_ceiling\": 140, "
		"\"latency_ms\": {\"count\": 990, \"p50\": 100, \"p95\": 300, \"p99\": 400}, "
		"\"p95_interval_ms\": {\"lo\": 280, \"hi\": 320, \"confidence\": 0.95}, "
		"\"errors\": {\"total\": 0}, \"driver_limited\": false}";
	const char *none = "{\"requested_qps\": 100, \"achieved_qps\": 0, \"window_s\": 10, "
		"\"sent\": 1000, \"latency_ms\": {\"count\": 0, \"p50\": null, \"p95\": null}, "
		"\"p95_interval_ms\": null, \"errors\": {\"total\": 1000}, "
		"\"driver_limited\": true}";
	assert_int_equal(fl_result_parse_obs(empty ? none : full, o, err, sizeof err), 0);
}

/* A step line of a 4 s window after 1 s of warm-up, p95 650 ms with the order-statistics
 * interval 640..660, and the per-second trace ps[0..4] (second 0 is warm-up, second 5
 * the drain after the window). */
static void parse_traced(struct fl_run_obs *o, const double *ps, unsigned ok)
{
	char line[2048], trace[1024] = "";
	char err[256];
	size_t n = 0;

	for (unsigned i = 0; i < 6; i++)
		n += (size_t)snprintf(trace + n, sizeof trace - n, "%s{\"second\": %u, \"ok\": %u, "
			"\"p95_ms\": %g}", i ? ", " : "", i, ok, i < 5 ? ps[i] : 5000.0);
	snprintf(line, sizeof line, "{\"requested_qps\": 200, \"achieved_qps\": 199, "
		"\"warmup_s\": 1, \"window_s\": 4, \"sent\": 800, \"ok\": 796, "
		"\"latency_ms\": {\"count\": 796, \"p95\": 650}, \"p95_interval_ms\": {\"lo\": 640, "
		"\"hi\": 660}, \"errors\": {\"total\": 0}, \"trace\": [%s]}", trace);
	assert_int_equal(fl_result_parse_obs(line, o, err, sizeof err), 0);
}

/* The step of one instance o, aggregated with or without --batch-means. */
static void aggregate_one(struct fl_run_step *st, struct fl_run_obs *o, int batch_means)
{
	memset(st, 0, sizeof *st);
	st->number = 1;
	st->phase = FL_PHASE_BISECT;
	st->ninst = 1;
	st->inst = o;
	fl_result_step_aggregate(st, batch_means);
}

/* Batch means: a window whose seconds' p95 climb (300, 500, 700, 900 ms: a queue building
 * up) gets a half-width of 410.8 ms, and with --batch-means an interval that holds the
 * 700 ms SLA, so the step is unsure, not a pass; without it the order-statistics interval
 * is judged. Steady seconds leave the interval as it was; too few replies a second, no
 * batch interval. The warm-up second and the drain after the window are not batches. */
static void test_p95_batch_means(void **state)
{
	(void)state;
	struct fl_run_obs o;
	struct fl_run_step st;
	const double rising[5] = { 9000, 300, 500, 700, 900 };
	const double steady[5] = { 9000, 648, 652, 650, 651 };

	parse_traced(&o, rising, 200);
	assert_int_equal(o.p95_batches, 4);
	/* sd of 300..900 step 200 = 258.2; t(3) 3.182 x 258.2 / 2 = 410.8 */
	assert_true(fabs(o.p95_batch_half_ms - 410.8) < 0.5);
	assert_true(o.p95_lo_ms == 640 && o.p95_hi_ms == 660);
	aggregate_one(&st, &o, 1);
	assert_true(st.sum.p95_lo_ms < 700 - 400 && st.sum.p95_hi_ms > 650 + 400);
	aggregate_one(&st, &o, 0);
	assert_true(st.sum.p95_lo_ms == 640 && st.sum.p95_hi_ms == 660);
	fl_result_obs_free(&o);

	parse_traced(&o, steady, 200);
	assert_int_equal(o.p95_batches, 4);
	assert_true(o.p95_batch_half_ms < 5);
	aggregate_one(&st, &o, 1);
	assert_true(st.sum.p95_lo_ms == 640 && st.sum.p95_hi_ms == 660);
	fl_result_obs_free(&o);

	parse_traced(&o, rising, 10);
	assert_true(o.p95_batch_half_ms < 0);
	aggregate_one(&st, &o, 1);
	assert_true(st.sum.p95_lo_ms == 640 && st.sum.p95_hi_ms == 660);
	fl_result_obs_free(&o);
}

/* Field f (from 0) of data row r (from 1) of csv, up to the next comma (static buffer). */
static const char *csv_field(const char *csv, int r, int f)
{
	static char out[64];
	const char *p = csv;
	size_t n = 0;

	for (int i = 0; i < r && p != NULL; i++)
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	for (int i = 0; i < f && p != NULL; i++)
		if ((p = strchr(p, ',')) != NULL)
			p++;
	if (p == NULL)
		return "(none)";
	while (p[n] && p[n] != ',' && p[n] != '\n' && n + 1 < sizeof out)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
	return out;
}

/* 5. Item 1: a search whose final window failed: converged false, sla_bound_qps null,
 * lower_bound_qps set (times instances), the final window's verdict and interval; the
 * steps carry their verdict and p95 interval, in steps.csv too. */
static void test_result_not_converged(void **state)
{
	(void)state;
	struct fl_run r;
	struct fl_run_instance in;
	struct fl_run_obs obs[2];
	struct fl_run_step steps[2];
	char csv[4096];

	memset(&r, 0, sizeof r);
	memset(&in, 0, sizeof in);
	memset(steps, 0, sizeof steps);
	fl_search_config_default(&r.cfg.search);
	r.ninst = 1;
	r.inst = &in;
	parse_step(&obs[0], 0);
	parse_step(&obs[1], 1);
	for (int i = 0; i < 2; i++) {
		steps[i].number = (unsigned)i + 1;
		steps[i].phase = i ? FL_PHASE_FINAL : FL_PHASE_REMEASURE;
		steps[i].ninst = 1;
		steps[i].inst = &obs[i];
		steps[i].inflight = 140;
		fl_result_step_aggregate(&steps[i], 0);
		steps[i].verdict = fl_search_judge(&r.cfg.search, &steps[i].sum, steps[i].why,
			sizeof steps[i].why);
		steps[i].pass = steps[i].verdict == FL_VERDICT_PASS;
	}
	assert_int_equal(steps[0].verdict, FL_VERDICT_PASS);
	assert_int_equal(steps[1].verdict, FL_VERDICT_UNJUDGED);  /* driver-limited */
	r.steps = steps;
	r.nsteps = 2;
	r.final_step = 1;
	r.final_host_cpu_pct = -1;
	fl_search_init(&r.search, &r.cfg.search);
	r.search.state = FL_SEARCH_DONE;
	r.search.converged = 0;
	r.search.final_qps = 100;
	r.search.lower_bound_qps = 90;
	r.search.sla_bound_qps = 0;
	snprintf(r.search.reason, sizeof r.search.reason, "the final window missed");

	json_t *j = write_run(&r, csv, sizeof csv);
	assert_true(json_is_false(json_object_get(j, "converged")));
	assert_true(json_is_null(json_object_get(j, "sla_bound_qps")));
	assert_true(json_real_value(json_object_get(j, "lower_bound_qps")) == 90);
	assert_true(json_is_false(json_object_get(j, "final_pass")));
	assert_string_equal(json_string_value(json_object_get(j, "final_verdict")), "unjudged");
	/* Not measured is null, never 0: no OK reply, no p95, no interval, no CPU. */
	assert_true(json_is_null(json_object_get(j, "p95_ms")));
	assert_true(json_is_null(json_object_get(j, "p50_ms")));
	assert_true(json_is_null(json_object_get(j, "final_p95_interval_ms")));
	assert_true(json_is_null(json_object_get(j, "host_cpu_util_pct")));
	const json_t *st0 = json_array_get(json_object_get(j, "steps"), 0);
	const json_t *ci = json_object_get(st0, "p95_interval_ms");
	assert_true(json_real_value(json_object_get(ci, "lo")) == 280);
	assert_true(json_real_value(json_object_get(ci, "hi")) == 320);
	assert_string_equal(json_string_value(json_object_get(st0, "verdict")), "pass");
	assert_int_equal(json_integer_value(json_object_get(st0, "inflight_ceiling")), 140);
	assert_int_equal(json_integer_value(json_object_get(st0, "latencies")), 990);
	const json_t *st1 = json_array_get(json_object_get(j, "steps"), 1);
	assert_true(json_is_true(json_object_get(st1, "driver_limited")));
	/* A step not judged neither passed nor failed: pass null (CSV: empty). */
	assert_true(json_is_true(json_object_get(st0, "pass")));
	assert_true(json_is_null(json_object_get(st1, "pass")));
	const json_t *s = json_object_get(j, "search");
	assert_true(json_is_null(json_object_get(s, "sla_bound_qps")));
	json_decref(j);

	assert_non_null(strstr(csv, ",p95_lo_ms,p95_hi_ms,latencies,verdict,driver_limited,"
		"inflight_ceiling,duration_s,why\n"));
	assert_non_null(strstr(csv, ",280.000,320.000,990,pass,0,140,"));
	/* The empty step: p50/p95/p99 and the interval empty, not 0. */
	assert_non_null(strstr(csv, "\n2,final,100.000,0.000,,,,1000,"));
	assert_non_null(strstr(csv, ",,,0,unjudged,1,140,"));
	assert_string_equal(csv_field(csv, 1, 9), "1");   /* pass */
	assert_string_equal(csv_field(csv, 2, 9), "");    /* unjudged */

	/* Converged: the SLA bound (x instances), no lower bound. */
	r.search.converged = 1;
	r.search.sla_bound_qps = 100;
	r.search.lower_bound_qps = 0;
	j = write_run(&r, csv, sizeof csv);
	assert_true(json_is_true(json_object_get(j, "converged")));
	assert_true(json_real_value(json_object_get(j, "sla_bound_qps")) == 100);
	assert_true(json_is_null(json_object_get(j, "lower_bound_qps")));
	json_decref(j);

	/* A final window cut before it measured anything: no rate (null, empty), not 0. */
	obs[1].window_s = 0;
	obs[1].interrupted = 1;
	fl_result_step_aggregate(&steps[1], 0);
	assert_false(steps[1].complete);
	j = write_run(&r, csv, sizeof csv);
	assert_true(json_is_false(json_object_get(j, "final_complete")));
	assert_true(json_is_null(json_object_get(j, "final_achieved_qps")));
	assert_true(json_is_null(json_object_get(j, "final_offered_qps")));
	const json_t *i0 = json_array_get(json_object_get(j, "instances"), 0);
	assert_true(json_is_null(json_object_get(i0, "final_achieved_qps")));
	st1 = json_array_get(json_object_get(j, "steps"), 1);
	assert_true(json_is_null(json_object_get(st1, "achieved_qps")));
	assert_non_null(strstr(csv, "\n2,final,100.000,,,,,1000,"));
	json_decref(j);
	for (int i = 0; i < 2; i++)
		fl_result_obs_free(&obs[i]);
}

/* 6. A stage share over a window with no CPU measured is null, not 0. */
static void test_stage_share_null(void **state)
{
	(void)state;
	json_t *pre = leaf_snapshot(1, 0), *post = leaf_snapshot(1, 0);
	json_t *res = result_with(pre, post);  /* same cpu_ns: nothing in the window */
	const json_t *share = json_object_get(json_object_get(leaf_of(res), "final_window"),
		"cpu_share");
	assert_true(json_is_object(share));
	assert_true(json_is_null(json_object_get(share, "extract")));
	json_decref(res);
}

/* A remote leaf and mock (--leaf, --mock): leaf stats come from the wire, the mock's end
 * snapshot is kept, and a clock surely beyond the bound makes within_bound false. */
static void test_remote_clocks(void **state)
{
	(void)state;
	struct fl_run r;
	struct fl_run_instance in;
	char dir[] = "/tmp/fl-test-result.XXXXXX";

	run_one(&r, &in, dir);
	r.cfg.clock_bound_ms = 10;
	snprintf(in.leaf_addr, sizeof in.leaf_addr, "10.0.0.2:7000");
	snprintf(in.mock_addr, sizeof in.mock_addr, "10.0.0.3:7001");
	in.leaf_stats_pre = leaf_snapshot(1, 0);
	in.leaf_stats_post = leaf_snapshot(2, 0);
	in.mock_stats_end = json_pack("{si}", "requests", 42);
	in.leaf_clock = (struct fl_clock_sample){ 3, 0.25, 0.1, 0.2 };
	in.mock_clock = (struct fl_clock_sample){ 2, -25.0, 0.5, 1.0 };
	json_t *j = write_and_load(&r, dir);

	const json_t *l = leaf_of(j);
	assert_string_equal(json_string_value(json_object_get(l, "source")), "wire");
	assert_string_equal(json_string_value(json_object_get(l, "address")), "10.0.0.2:7000");
	assert_true(json_is_object(json_object_get(l, "final_window")));
	const json_t *m = json_object_get(json_array_get(json_object_get(j, "instances"), 0),
		"mock_stats");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "end"),
		"requests")), 42);
	const json_t *c = json_object_get(j, "clocks");
	assert_true(json_is_false(json_object_get(c, "within_bound")));
	const json_t *hosts = json_object_get(c, "hosts");
	assert_int_equal(json_array_size(hosts), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(hosts, 0),
		"verdict")), "ok");
	assert_string_equal(json_string_value(json_object_get(json_array_get(hosts, 1),
		"verdict")), "beyond");
	assert_float_equal(json_real_value(json_object_get(json_array_get(hosts, 1),
		"offset_ms")), -25.0, 1e-9);

	/* Within the bound once the mock's clock is fixed. */
	in.mock_clock.offset_ms = 2;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/fl-test-result.XXXXXX")));
	snprintf(r.dir, sizeof r.dir, "%s", dir);
	json_t *k = write_and_load(&r, dir);
	assert_true(json_is_true(json_object_get(json_object_get(k, "clocks"),
		"within_bound")));
	json_decref(k);
	json_decref(j);
	json_decref(in.leaf_stats_pre);
	json_decref(in.leaf_stats_post);
	json_decref(in.mock_stats_end);
}

/* A driver's control line for histogram h (ns), as frontload-driver writes it: latency_ms
 * and p95_interval_ms from h, latency_hist_ns h itself (hist = 0 leaves it out). */
static char *driver_line(const struct fl_hist *h, double qps, uint64_t sent, uint64_t stale,
	unsigned ceiling, int hist)
{
	json_t *lat = json_pack("{sI}", "count", (json_int_t)h->n);
	static const struct { const char *key; double p; } pcts[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p95", 95 }, { "p99", 99 }, { "p99_9", 99.9 } };
	for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++)
		json_object_set_new(lat, pcts[k].key, h->n ? json_real((double)fl_hist_percentile(h,
			pcts[k].p) / 1e6) : json_null());
	json_object_set_new(lat, "max", h->n ? json_real((double)h->max / 1e6) : json_null());
	json_object_set_new(lat, "mean", h->n ? json_real(fl_hist_mean(h) / 1e6) : json_null());
	uint64_t lo, hi;
	json_t *ci = fl_hist_quantile_interval(h, 0.95, FL_CI_Z95, &lo, &hi) == 0 ?
		json_pack("{sfsfsf}", "lo", (double)lo / 1e6, "hi", (double)hi / 1e6, "confidence",
		0.95) : json_null();
	json_t *j = json_pack("{sfsfsfsIsIsIsIsos{sIsI}sosIsisfsb}", "requested_qps", qps,
		"achieved_qps", (double)h->n / 10, "window_s", 10.0, "sent", (json_int_t)sent,
		"completed", (json_int_t)(h->n + stale), "ok", (json_int_t)h->n, "unsent",
		(json_int_t)0, "latency_ms", lat, "errors", "total", (json_int_t)stale, "stale",
		(json_int_t)stale, "p95_interval_ms", ci, "backlogged", (json_int_t)1,
		"inflight_ceiling", (int)ceiling, "host_cpu_pct", 40.0, "driver_limited", 0);
	assert_non_null(j);
	if (hist)
		json_object_set_new(j, "latency_hist_ns", fl_hist_to_json(h));
	char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(j);
	return text;
}

static struct fl_hist *hist_new(void)
{
	struct fl_hist *h = malloc(sizeof *h);
	assert_non_null(h);
	fl_hist_init(h);
	return h;
}

/* Parse line into o, which then owns nothing but what the parse gave it. */
static void parse_line(char *line, struct fl_run_obs *o, uint64_t seed)
{
	char err[256];
	assert_int_equal(fl_result_parse_obs(line, o, err, sizeof err), 0);
	o->seed = seed;
	free(line);
}

/* o := an instance observation with n driver slots, the first parsed from h's line with
 * seed; the others are left to the caller. */
static void drivers_first(struct fl_run_obs *o, unsigned n, const struct fl_hist *h,
	uint64_t seed)
{
	memset(o, 0, sizeof *o);
	o->ndrv = n;
	o->drv = calloc(n, sizeof *o->drv);
	assert_non_null(o->drv);
	parse_line(driver_line(h, 30, 3000, 0, 64, 1), &o->drv[0], seed);
}

/* 7. --drivers: three drivers of one instance (one with no OK reply) merge into the
 * instance's observation: counts, rates, errors by kind and ceilings summed; p50..max
 * and the p95 interval are those of one histogram of every driver's latencies (not an
 * average, not the worst driver's), between the drivers' own p95s; the search judges
 * that merged p95; result.json carries the pooled histogram and each driver's figures
 * with its seed and histogram. */
static void test_drivers_merge(void **state)
{
	(void)state;
	struct fl_hist *h[3] = { hist_new(), hist_new(), hist_new() }, *all = hist_new();
	struct fl_rng rng;
	const uint64_t spread[2] = { 40000000ull, 400000000ull };
	fl_rng_seed(&rng, 5);
	printf("seed 5\n");
	for (int i = 0; i < 4000; i++) {
		uint64_t v = 1000000 + fl_rng_below(&rng, spread[i & 1]);
		fl_hist_record(h[i & 1], v);
		fl_hist_record(all, v);
	}
	struct fl_run_obs o;
	memset(&o, 0, sizeof o);
	o.ndrv = 3;
	o.drv = calloc(3, sizeof *o.drv);
	assert_non_null(o.drv);
	parse_line(driver_line(h[0], 50, 2010, 3, 40, 1), &o.drv[0], 1);
	parse_line(driver_line(h[1], 50, 2020, 4, 40, 1), &o.drv[1], 2);
	parse_line(driver_line(h[2], 50, 5, 0, 41, 1), &o.drv[2], 3);  /* no OK reply */
	char err[512] = "";
	if (fl_result_obs_merge(&o, err, sizeof err) != 0)
		fail_msg("merge refused: %s", err);
	assert_int_equal(o.sent, 2010 + 2020 + 5);
	assert_int_equal(o.ok, 4000);
	assert_int_equal(o.errors, 7);
	assert_int_equal(json_integer_value(json_object_get(o.errors_json, "stale")), 7);
	assert_int_equal(o.backlogged, 3);
	assert_int_equal(o.inflight_ceiling, 121);
	assert_float_equal(o.requested_qps, 150, 1e-9);
	assert_float_equal(o.achieved_qps, 400, 1e-9);
	assert_float_equal(o.window_s, 10, 1e-9);
	assert_float_equal(o.driver_cpu_pct, 40, 1e-9);
	assert_int_equal(o.lat.count, 4000);
	assert_true(o.lat.p50 == (double)fl_hist_percentile(all, 50) / 1e6);
	assert_true(o.lat.p95 == (double)fl_hist_percentile(all, 95) / 1e6);
	assert_true(o.lat.p99 == (double)fl_hist_percentile(all, 99) / 1e6);
	assert_true(o.lat.max == (double)all->max / 1e6);
	uint64_t lo, hi;
	assert_int_equal(fl_hist_quantile_interval(all, 0.95, FL_CI_Z95, &lo, &hi), 0);
	assert_true(o.p95_lo_ms == (double)lo / 1e6);
	assert_true(o.p95_hi_ms == (double)hi / 1e6);
	double p0 = o.drv[0].lat.p95, p1 = o.drv[1].lat.p95;
	assert_true(o.lat.p95 > p0 && o.lat.p95 < p1);
	assert_true(fabs(o.lat.p95 - (p0 + p1) / 2) > 1);  /* not their average */
	struct fl_hist *back = hist_new();
	assert_int_equal(fl_hist_from_json(o.hist_json, back, err, sizeof err), 0);
	assert_memory_equal(back->counts, all->counts, sizeof all->counts);

	/* The step is judged on the merged p95. */
	struct fl_run_step st;
	memset(&st, 0, sizeof st);
	st.number = 1;
	st.phase = FL_PHASE_FIXED;
	st.ninst = 1;
	st.inst = &o;
	fl_result_step_aggregate(&st, 0);
	assert_true(st.sum.p95_ms == o.lat.p95);
	assert_true(st.sum.p95_lo_ms == o.p95_lo_ms && st.sum.p95_hi_ms == o.p95_hi_ms);
	assert_int_equal(st.sum.latencies, 4000);

	/* result.json: the merged figures, the pooled histogram, every driver's own. */
	struct fl_run r;
	struct fl_run_instance in;
	struct fl_run_driver dv[3];
	char dir[] = "/tmp/fl-test-result.XXXXXX";
	run_one(&r, &in, dir);
	memset(dv, 0, sizeof dv);
	in.ndrv = 3;
	in.drv = dv;
	r.cfg.drivers = 3;
	for (unsigned d = 0; d < 3; d++) {
		fl_proc_init(&dv[d].proc, "driver0.x");
		dv[d].seed = d + 1;
	}
	r.steps = &st;
	r.nsteps = 1;
	r.final_step = 0;
	json_t *j = write_and_load(&r, dir);
	const json_t *si = json_array_get(json_object_get(json_array_get(json_object_get(j,
		"steps"), 0), "instances"), 0);
	const json_t *drv = json_object_get(si, "drivers");
	assert_int_equal(json_array_size(drv), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(drv, 1), "seed")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(drv, 2), "sent")), 5);
	assert_true(json_is_object(json_object_get(json_array_get(drv, 0), "latency_hist_ns")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(si,
		"latency_hist_ns"), "count")), 4000);
	assert_int_equal(json_integer_value(json_object_get(j, "latency_count")), 4000);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(j,
		"instances"), 0), "drivers")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "config"),
		"drivers")), 3);
	json_decref(j);

	fl_result_obs_free(&o);
	for (int k = 0; k < 3; k++)
		free(h[k]);
	free(all);
	free(back);
}

/* 8. One driver merged alone gives back its own figures exactly (so --drivers 1, which
 * keeps the driver's line as it is, reports what a merge would); a driver stopped before
 * it reported (nothing parsed) merges as nothing but leaves the window empty; and a
 * driver whose line lacks the histogram, or whose histogram disagrees with its
 * latency count, is refused with a reason. */
static void test_drivers_merge_edges(void **state)
{
	(void)state;
	struct fl_hist *h = hist_new();
	for (uint64_t v = 1; v <= 3000; v++)
		fl_hist_record(h, v * 123457);
	struct fl_run_obs one, o;
	char err[512];
	parse_line(driver_line(h, 30, 3000, 0, 64, 1), &one, 9);
	drivers_first(&o, 1, h, 9);
	assert_int_equal(fl_result_obs_merge(&o, err, sizeof err), 0);
	assert_true(o.lat.p50 == one.lat.p50 && o.lat.p90 == one.lat.p90);
	assert_true(o.lat.p95 == one.lat.p95 && o.lat.p99 == one.lat.p99);
	assert_true(o.lat.p99_9 == one.lat.p99_9 && o.lat.max == one.lat.max);
	assert_float_equal(o.lat.mean, one.lat.mean, 1e-6);
	assert_true(o.p95_lo_ms == one.p95_lo_ms && o.p95_hi_ms == one.p95_hi_ms);
	assert_int_equal(o.sent, one.sent);
	fl_result_obs_free(&o);

	/* A driver that never reported: its slot stays zeroed. */
	drivers_first(&o, 2, h, 1);
	assert_int_equal(fl_result_obs_merge(&o, err, sizeof err), 0);
	assert_true(o.lat.p95 == one.lat.p95);
	assert_true(o.window_s == 0);  /* so the step is not complete */
	fl_result_obs_free(&o);

	/* No histogram though it measured. */
	drivers_first(&o, 2, h, 1);
	parse_line(driver_line(h, 30, 3000, 0, 64, 0), &o.drv[1], 2);
	err[0] = 0;
	assert_int_equal(fl_result_obs_merge(&o, err, sizeof err), -1);
	assert_non_null(strstr(err, "no latency_hist_ns"));
	fl_result_obs_free(&o);

	/* A histogram of another driver's size than its latency count says. */
	struct fl_hist *small = hist_new();
	fl_hist_record_n(small, 5000000, 10);
	char *line = driver_line(h, 30, 3000, 0, 64, 0);
	json_t *j = json_loads(line, 0, NULL);
	free(line);
	json_object_set_new(j, "latency_hist_ns", fl_hist_to_json(small));
	line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	drivers_first(&o, 2, h, 1);
	parse_line(line, &o.drv[1], 2);
	err[0] = 0;
	assert_int_equal(fl_result_obs_merge(&o, err, sizeof err), -1);
	assert_non_null(strstr(err, "latency_ms.count"));
	fl_result_obs_free(&o);

	/* A malformed one: refused with hist_json's reason. */
	drivers_first(&o, 2, h, 1);
	parse_line(driver_line(h, 30, 3000, 0, 64, 1), &o.drv[1], 2);
	json_object_set_new(o.drv[1].hist_json, "sub_bits", json_integer(6));
	err[0] = 0;
	assert_int_equal(fl_result_obs_merge(&o, err, sizeof err), -1);
	assert_non_null(strstr(err, "sub_bits"));
	fl_result_obs_free(&o);

	fl_result_obs_free(&one);
	free(small);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_delta_supported),
		cmocka_unit_test(test_pmu_delta_unsupported),
		cmocka_unit_test(test_cpu_clock),
		cmocka_unit_test(test_pmu_delta_odd),
		cmocka_unit_test(test_result_not_converged),
		cmocka_unit_test(test_p95_batch_means),
		cmocka_unit_test(test_stage_share_null),
		cmocka_unit_test(test_remote_clocks),
		cmocka_unit_test(test_drivers_merge),
		cmocka_unit_test(test_drivers_merge_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
