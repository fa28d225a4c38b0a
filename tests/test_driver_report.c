/* test_driver_report.c: the driver's result JSON, CSV and arithmetic (driver_report.c). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "driver_report.h"
#include "hist_json.h"
#include "quantile_ci.h"

#define MS 1000000ull  /* ns per ms */

/* A step: 90 OK replies at 10 ms and 10 at 200 ms from intended time, service times a
 * tenth of those, a two-second trace, assorted counters; of the 996 replies received in
 * the 4 s window only 96 were OK (the rest OVERLOADED or errors). */
static struct fl_driver_result *make_result(void)
{
	struct fl_driver_result *r = malloc(sizeof *r);

	assert_non_null(r);
	fl_driver_result_init(r);
	r->step = 2;
	r->requested_qps = 250;
	r->warmup_s = 1;
	r->duration_s = 4;
	r->window_s = 4;
	r->c.sent = 1000;
	r->c.completed = 990;
	r->c.ok = 100;
	r->c.overloaded = 880;
	r->c.timeouts = 7;
	r->c.late = 12;
	r->c.window_completions = 996;
	r->c.window_ok = 96;
	r->c.errors[FL_DRIVER_ERR_STALE] = 4;
	r->c.errors[FL_DRIVER_ERR_DEADLINE] = 3;
	r->c.errors[FL_DRIVER_ERR_CONN_LOST] = 6;
	fl_hist_record_n(&r->latency, 10 * MS, 90);
	fl_hist_record_n(&r->latency, 200 * MS, 10);
	fl_hist_record_n(&r->service, 1 * MS, 90);
	fl_hist_record_n(&r->service, 20 * MS, 10);
	r->depth = 16;
	r->next_depth = 32;
	r->driver_limited = 1;
	r->host_cpu_pct = 37.5;
	r->trace_len = 2;
	r->trace = calloc(2, sizeof *r->trace);
	assert_non_null(r->trace);
	r->trace[0] = (struct fl_driver_trace_row){ 0, 250, 240, 30, 10, 12 * MS };
	r->trace[1] = (struct fl_driver_trace_row){ 1, 251, 255, 25, 6, 1500000 };
	return r;
}

static void free_result(struct fl_driver_result *r)
{
	fl_driver_result_free(r);
	free(r);
}

static double jreal(json_t *o, const char *path1, const char *path2)
{
	json_t *v = json_object_get(o, path1);
	assert_non_null(v);
	if (path2 != NULL)
		v = json_object_get(v, path2);
	assert_non_null(v);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("got %.9g, want %.9g", got, want);
}

/* Within the histogram's 0.4% bucket error. */
static void assert_near_pct(double got, double want)
{
	if (fabs(got - want) > 0.004 * want)
		fail_msg("got %.9g, want %.9g within 0.4%%", got, want);
}

/* 1. achieved_qps is goodput: OK replies in the window / window_s (OVERLOADED and error
 * replies are in replied_qps only); an empty window has no rate at all. */
static void test_achieved_qps(void **state)
{
	struct fl_driver_result *r = make_result();
	double q = -1;

	(void)state;
	assert_int_equal(fl_driver_achieved_qps(r, &q), 0);
	assert_close(q, 96.0 / 4.0);
	assert_int_equal(fl_driver_replied_qps(r, &q), 0);
	assert_close(q, 996.0 / 4.0);
	r->window_s = 2.5;  /* interrupted after 2.5 s of measuring */
	assert_int_equal(fl_driver_achieved_qps(r, &q), 0);
	assert_close(q, 96.0 / 2.5);
	r->window_s = 0;
	q = 123;
	assert_int_equal(fl_driver_achieved_qps(r, &q), -1);
	assert_int_equal(fl_driver_replied_qps(r, &q), -1);
	assert_close(q, 123);  /* untouched */
	assert_int_equal(fl_driver_errors_total(&r->c), 13);
	free_result(r);
}

/* 2. Every JSON field, with percentiles in ms. */
static void test_json_fields(void **state)
{
	struct fl_driver_result *r = make_result();
	json_t *j = fl_driver_result_json(r, 1);
	json_t *trace;

	(void)state;
	assert_non_null(j);
	assert_close(jreal(j, "step", NULL), 2);
	assert_close(jreal(j, "requested_qps", NULL), 250);
	assert_close(jreal(j, "achieved_qps", NULL), 24);
	assert_close(jreal(j, "replied_qps", NULL), 249);
	assert_close(jreal(j, "window_ok", NULL), 96);
	assert_close(jreal(j, "window_s", NULL), 4);
	assert_close(jreal(j, "warmup_s", NULL), 1);
	assert_close(jreal(j, "sent", NULL), 1000);
	assert_close(jreal(j, "completed", NULL), 990);
	assert_close(jreal(j, "ok", NULL), 100);
	assert_close(jreal(j, "overloaded", NULL), 880);
	assert_close(jreal(j, "timeouts", NULL), 7);
	assert_close(jreal(j, "late", NULL), 12);
	assert_close(jreal(j, "errors", "total"), 13);
	assert_close(jreal(j, "errors", "deadline_exceeded"), 3);
	assert_close(jreal(j, "errors", "stale"), 4);
	assert_close(jreal(j, "errors", "conn_lost"), 6);
	assert_close(jreal(j, "errors", "protocol"), 0);
	for (int e = 0; e < FL_DRIVER_ERR_N; e++)
		assert_non_null(json_object_get(json_object_get(j, "errors"), fl_driver_err_key(e)));

	/* Percentiles are bucket midpoints (within 0.4%, hist.h); max and mean are exact. */
	assert_close(jreal(j, "latency_ms", "count"), 100);
	assert_near_pct(jreal(j, "latency_ms", "p50"), 10);
	assert_near_pct(jreal(j, "latency_ms", "p90"), 10);
	assert_near_pct(jreal(j, "latency_ms", "p95"), 200);
	assert_near_pct(jreal(j, "latency_ms", "p99"), 200);
	assert_near_pct(jreal(j, "latency_ms", "p99_9"), 200);
	assert_close(jreal(j, "latency_ms", "max"), 200);
	assert_close(jreal(j, "latency_ms", "mean"), 29);
	assert_near_pct(jreal(j, "service_ms", "p50"), 1);
	assert_near_pct(jreal(j, "service_ms", "p99"), 20);
	assert_close(jreal(j, "service_ms", "mean"), 2.9);

	assert_close(jreal(j, "depth", NULL), 16);
	assert_close(jreal(j, "next_depth", NULL), 32);
	assert_true(json_is_true(json_object_get(j, "driver_limited")));
	assert_true(json_is_false(json_object_get(j, "interrupted")));
	assert_close(jreal(j, "host_cpu_pct", NULL), 37.5);

	trace = json_object_get(j, "trace");
	assert_true(json_is_array(trace));
	assert_int_equal(json_array_size(trace), 2);
	assert_close(jreal(json_array_get(trace, 1), "second", NULL), 1);
	assert_close(jreal(json_array_get(trace, 1), "completed", NULL), 255);
	assert_close(jreal(json_array_get(trace, 1), "inflight", NULL), 6);
	assert_close(jreal(json_array_get(trace, 1), "ok", NULL), 25);
	assert_close(jreal(json_array_get(trace, 1), "p95_ms", NULL), 1.5);
	json_decref(j);

	j = fl_driver_result_json(r, 0);
	assert_null(json_object_get(j, "trace"));
	json_decref(j);
	free_result(r);
}

/* 3. A percentile over a spread of values lands within the histogram's 1% bound. */
static void test_json_percentile_spread(void **state)
{
	struct fl_driver_result *r = make_result();
	json_t *j;

	(void)state;
	fl_hist_init(&r->latency);
	for (uint64_t v = 1; v <= 1000; v++)
		fl_hist_record(&r->latency, v * MS);
	j = fl_driver_result_json(r, 0);
	assert_true(fabs(jreal(j, "latency_ms", "p50") - 500) <= 5);
	assert_true(fabs(jreal(j, "latency_ms", "p99") - 990) <= 9.9);
	assert_close(jreal(j, "latency_ms", "max"), 1000);
	assert_close(jreal(j, "latency_ms", "mean"), 500.5);
	json_decref(j);

	free_result(r);
}

/* 3b. Nothing measured is null, never 0: every figure of an empty histogram (count 0),
 * the rates of an empty window, an unknown host CPU, a second without OK replies. */
static void test_json_nulls(void **state)
{
	static const char *const keys[] = { "p50", "p90", "p95", "p99", "p99_9", "max", "mean" };
	struct fl_driver_result *r = make_result();
	json_t *j, *lat;

	(void)state;
	fl_hist_init(&r->latency);
	r->window_s = 0;
	r->host_cpu_pct = -1;
	r->trace[0].ok = 0;
	j = fl_driver_result_json(r, 1);
	assert_non_null(j);
	lat = json_object_get(j, "latency_ms");
	assert_close(jreal(j, "latency_ms", "count"), 0);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(lat, keys[i]);
		assert_non_null(v);
		if (!json_is_null(v))
			fail_msg("latency_ms.%s of an empty histogram is not null", keys[i]);
	}
	assert_true(json_is_number(json_object_get(json_object_get(j, "service_ms"), "p95")));
	assert_true(json_is_null(json_object_get(j, "achieved_qps")));
	assert_true(json_is_null(json_object_get(j, "replied_qps")));
	assert_true(json_is_null(json_object_get(j, "host_cpu_pct")));
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "trace"), 0),
		"p95_ms")));
	assert_true(json_is_number(json_object_get(json_array_get(json_object_get(j, "trace"), 1),
		"p95_ms")));
	json_decref(j);
	free_result(r);
}

/* Everything fn writes for the steps, as a string (caller frees). */
static char *capture(int (*fn)(FILE *, const struct fl_driver_result *const *, size_t),
	const struct fl_driver_result *const *steps, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, steps, n), 0);
	fclose(f);
	return buf;
}

/* 4. Trace CSV: header and rows, seconds continuing into the second step. */
static void test_trace_csv(void **state)
{
	struct fl_driver_result *a = make_result(), *b = make_result();
	const struct fl_driver_result *steps[2] = { a, b };
	char *s;

	(void)state;
	b->trace[0].ok = 0;  /* no OK reply that second: no p95, an empty cell */
	s = capture(fl_driver_trace_csv, steps, 2);
	assert_string_equal(s,
		"second,sent,completed,ok,inflight,p95_ms\n"
		"0,250,240,30,10,12.000\n"
		"1,251,255,25,6,1.500\n"
		"2,250,240,0,10,\n"
		"3,251,255,25,6,1.500\n");
	free(s);
	free_result(a);
	free_result(b);
}

/* 5. Step CSV: header and row have the same number of columns, and the row starts with
 * the step's numbers. */
static void test_steps_csv(void **state)
{
	struct fl_driver_result *a = make_result();
	const struct fl_driver_result *steps[1] = { a };
	char *s, *nl;
	int hdr_cols = 1, row_cols = 1;

	(void)state;
	s = capture(fl_driver_steps_csv, steps, 1);
	nl = strchr(s, '\n');
	assert_non_null(nl);
	assert_true(strncmp(s, "step,requested_qps,achieved_qps,replied_qps,window_s,sent,",
		58) == 0);
	assert_true(strncmp(nl + 1, "2,250.000,24.000,249.000,4.000,1000,990,100,880,", 48) == 0);
	for (char *p = s; p < nl; p++)
		hdr_cols += *p == ',';
	for (char *p = nl + 1; *p && *p != '\n'; p++)
		row_cols += *p == ',';
	assert_int_equal(hdr_cols, row_cols);
	assert_non_null(strstr(s, "latency_ms_p95"));
	assert_non_null(strstr(s, ",16,1\n"));
	free(s);

	/* An empty window and histograms: empty cells, the same number of columns. */
	fl_hist_init(&a->latency);
	a->window_s = 0;
	s = capture(fl_driver_steps_csv, steps, 1);
	nl = strchr(s, '\n');
	assert_true(strncmp(nl + 1, "2,250.000,,,0.000,", 18) == 0);
	row_cols = 1;
	for (char *p = nl + 1; *p && *p != '\n'; p++)
		row_cols += *p == ',';
	assert_int_equal(hdr_cols, row_cols);
	assert_null(strstr(s, "0.000,0.000,0.000,0.000,0.000"));
	free(s);
	free_result(a);
}

/* 6. The summary names the depth change and only the non-zero error kinds. */
static void test_print(void **state)
{
	struct fl_driver_result *a = make_result();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	fl_driver_result_print(f, a);
	fclose(f);
	assert_non_null(strstr(buf, "driver-limited: depth raised 16 -> 32"));
	assert_non_null(strstr(buf, "stale 4"));
	assert_non_null(strstr(buf, "conn_lost 6"));
	assert_null(strstr(buf, "protocol"));
	assert_non_null(strstr(buf, "achieved 24.0 OK replies/s (249.0 replies/s of any status)"));
	assert_non_null(strstr(buf, "deadline_exceeded 3"));
	free(buf);

	buf = NULL;
	fl_hist_init(&a->latency);
	f = open_memstream(&buf, &len);
	fl_driver_result_print(f, a);
	fclose(f);
	assert_non_null(strstr(buf, "latency  no OK replies: no percentiles"));
	free(buf);
	free_result(a);
}

/* 7. A control-mode step line: the --json step plus inflight_ceiling, the p95 interval
 * and latency_hist_ns, which rebuilds into the very histogram measured (so several
 * drivers' lines merge exactly); with no OK reply the interval is null and the histogram
 * empty. */
static void test_control_json(void **state)
{
	struct fl_driver_result *r = make_result();
	struct fl_hist *back = malloc(sizeof *back);
	char err[256] = "";
	uint64_t lo, hi;

	(void)state;
	assert_non_null(back);
	for (uint64_t v = 1; v <= 1000; v++)
		fl_hist_record(&r->latency, v * 37 * MS / 10);
	json_t *j = fl_driver_control_json(r, 96);
	assert_non_null(j);
	assert_close(jreal(j, "inflight_ceiling", NULL), 96);
	assert_close(jreal(j, "requested_qps", NULL), 250);
	assert_non_null(json_object_get(j, "trace"));
	if (fl_hist_from_json(json_object_get(j, "latency_hist_ns"), back, err, sizeof err) != 0)
		fail_msg("latency_hist_ns refused: %s", err);
	assert_memory_equal(back->counts, r->latency.counts, sizeof back->counts);
	assert_int_equal(back->n, r->latency.n);
	assert_int_equal(back->min, r->latency.min);
	assert_int_equal(back->max, r->latency.max);
	assert_true(back->sum == r->latency.sum);
	assert_int_equal(fl_hist_quantile_interval(&r->latency, 0.95, FL_CI_Z95, &lo, &hi), 0);
	assert_close(jreal(j, "p95_interval_ms", "lo"), (double)lo / 1e6);
	assert_close(jreal(j, "p95_interval_ms", "hi"), (double)hi / 1e6);
	assert_close(jreal(j, "p95_interval_ms", "confidence"), 0.95);
	assert_true(jreal(j, "p95_interval_ms", "lo") <= jreal(j, "latency_ms", "p95"));
	assert_true(jreal(j, "p95_interval_ms", "hi") >= jreal(j, "latency_ms", "p95"));
	json_decref(j);

	fl_hist_init(&r->latency);
	j = fl_driver_control_json(r, 64);
	assert_true(json_is_null(json_object_get(j, "p95_interval_ms")));
	assert_int_equal(fl_hist_from_json(json_object_get(j, "latency_hist_ns"), back, err,
		sizeof err), 0);
	assert_int_equal(back->n, 0);
	json_decref(j);
	free(back);
	free_result(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_achieved_qps),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_json_percentile_spread),
		cmocka_unit_test(test_json_nulls),
		cmocka_unit_test(test_trace_csv),
		cmocka_unit_test(test_steps_csv),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_control_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
