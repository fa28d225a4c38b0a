/* driver_report.c: per-step driver results as JSON, CSV and a human summary. */
#include "driver_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hist_json.h"
#include "quantile_ci.h"

/* Percentiles reported for every histogram: JSON key, percentile. */
static const struct {
	const char *key;
	double pct;
} report_pcts[] = {
	{ "p50", 50.0 }, { "p90", 90.0 }, { "p95", 95.0 }, { "p99", 99.0 }, { "p99_9", 99.9 },
};

#define REPORT_NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const report_err_keys[FL_DRIVER_ERR_N] = {
#define REPORT_ERR_KEY(e, key, help) key,
	FL_DRIVER_ERRORS(REPORT_ERR_KEY)
#undef REPORT_ERR_KEY
};

static double report_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

void fl_driver_result_init(struct fl_driver_result *r)
{
	memset(r, 0, sizeof *r);
	fl_hist_init(&r->latency);
	fl_hist_init(&r->service);
	r->host_cpu_pct = -1;
}

void fl_driver_result_free(struct fl_driver_result *r)
{
	free(r->trace);
	r->trace = NULL;
	r->trace_len = 0;
}

uint64_t fl_driver_errors_total(const struct fl_driver_counts *c)
{
	uint64_t n = 0;
	for (int e = 0; e < FL_DRIVER_ERR_N; e++)
		n += c->errors[e];
	return n;
}

uint64_t fl_driver_failed(const struct fl_driver_counts *c)
{
	return fl_driver_errors_total(c) + c->timeouts + c->overloaded;
}

const char *fl_driver_err_key(enum fl_driver_err e)
{
	return (unsigned)e < FL_DRIVER_ERR_N ? report_err_keys[e] : "unknown";
}

/* n per second of the measured window; -1 when the window is empty. */
static int report_rate(const struct fl_driver_result *r, uint64_t n, double *qps)
{
	if (!(r->window_s > 0))
		return -1;
	*qps = (double)n / r->window_s;
	return 0;
}

int fl_driver_achieved_qps(const struct fl_driver_result *r, double *qps)
{
	return report_rate(r, r->c.window_ok, qps);
}

int fl_driver_replied_qps(const struct fl_driver_result *r, double *qps)
{
	return report_rate(r, r->c.window_completions, qps);
}

/* A rate as JSON: null when the window was empty. */
static json_t *report_rate_json(int (*rate)(const struct fl_driver_result *, double *),
	const struct fl_driver_result *r)
{
	double v;

	return rate(r, &v) == 0 ? json_real(v) : json_null();
}

/* ns as ms, or null when nothing stands behind it. */
static json_t *report_ms_json(int have, uint64_t ns)
{
	return have ? json_real(report_ms(ns)) : json_null();
}

/* json_object_set_new fails only out of memory; one flag collects every failure. */
static void report_set(json_t *o, const char *key, json_t *v, int *bad)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		*bad = 1;
}

json_t *fl_driver_hist_json(const struct fl_hist *h)
{
	json_t *o = json_object();
	int bad = o == NULL;

	if (bad)
		return NULL;
	/* An empty histogram has no percentiles: null, never 0 ms. */
	report_set(o, "count", json_integer((json_int_t)h->n), &bad);
	for (size_t i = 0; i < REPORT_NELEM(report_pcts); i++)
		report_set(o, report_pcts[i].key,
			report_ms_json(h->n > 0, fl_hist_percentile(h, report_pcts[i].pct)), &bad);
	report_set(o, "max", report_ms_json(h->n > 0, h->max), &bad);
	report_set(o, "mean", h->n > 0 ? json_real(fl_hist_mean(h) / 1e6) : json_null(), &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *report_trace_json(const struct fl_driver_result *r)
{
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	for (size_t i = 0; i < r->trace_len; i++) {
		const struct fl_driver_trace_row *t = &r->trace[i];
		json_t *o = json_pack("{sIsIsIsIsIso}", "second", (json_int_t)t->second,
			"sent", (json_int_t)t->sent, "completed", (json_int_t)t->completed,
			"ok", (json_int_t)t->ok, "inflight", (json_int_t)t->inflight,
			"p95_ms", report_ms_json(t->ok > 0, t->p95_ns));
		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The miss-stop rule and what it counted, or null when the step ran without one. */
static json_t *report_miss_stop_json(const struct fl_driver_miss_stop *m)
{
	if (!(m->p95_over_ms > 0))
		return json_null();
	return json_pack("{sfsfsIsIsIsIsIsbso}", "p95_over_ms", m->p95_over_ms, "min_s",
		m->min_s, "due",
		(json_int_t)m->due, "late_limit", (json_int_t)m->late_limit, "failed_limit",
		(json_int_t)m->failed_limit, "late", (json_int_t)m->late, "failed",
		(json_int_t)m->failed, "stopped", m->stopped, "stopped_at_s", m->stopped ?
		json_real(m->stopped_at_s) : json_null());
}

json_t *fl_driver_result_json(const struct fl_driver_result *r, int with_trace)
{
	json_t *o = json_object();
	json_t *errs = json_object();
	int bad = o == NULL || errs == NULL;

	if (bad) {
		json_decref(o);
		json_decref(errs);
		return NULL;
	}
	report_set(o, "step", json_integer(r->step), &bad);
	report_set(o, "requested_qps", json_real(r->requested_qps), &bad);
	report_set(o, "achieved_qps", report_rate_json(fl_driver_achieved_qps, r), &bad);
	report_set(o, "replied_qps", report_rate_json(fl_driver_replied_qps, r), &bad);
	report_set(o, "warmup_s", json_real(r->warmup_s), &bad);
	report_set(o, "duration_s", json_real(r->duration_s), &bad);
	report_set(o, "window_s", json_real(r->window_s), &bad);
#define REPORT_COUNT_JSON(f, help) report_set(o, #f, json_integer((json_int_t)r->c.f), &bad);
	FL_DRIVER_COUNTS(REPORT_COUNT_JSON)
#undef REPORT_COUNT_JSON
	report_set(errs, "total", json_integer((json_int_t)fl_driver_errors_total(&r->c)), &bad);
	for (int e = 0; e < FL_DRIVER_ERR_N; e++)
		report_set(errs, report_err_keys[e], json_integer((json_int_t)r->c.errors[e]), &bad);
	report_set(o, "errors", errs, &bad);
	report_set(o, "latency_ms", fl_driver_hist_json(&r->latency), &bad);
	report_set(o, "service_ms", fl_driver_hist_json(&r->service), &bad);
	report_set(o, "depth", json_integer(r->depth), &bad);
	report_set(o, "next_depth", json_integer(r->next_depth), &bad);
	report_set(o, "driver_limited", json_boolean(r->driver_limited), &bad);
	report_set(o, "host_cpu_pct", r->host_cpu_pct >= 0 ? json_real(r->host_cpu_pct) :
		json_null(), &bad);
	report_set(o, "interrupted", json_boolean(r->interrupted), &bad);
	report_set(o, "miss_stop", report_miss_stop_json(&r->miss_stop), &bad);
	if (with_trace)
		report_set(o, "trace", report_trace_json(r), &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The p95's 95% interval {lo, hi, confidence} in ms, or null with no OK reply. */
static json_t *report_p95_interval(const struct fl_hist *h)
{
	uint64_t lo, hi;

	if (fl_hist_quantile_interval(h, 0.95, FL_CI_Z95, &lo, &hi) != 0)
		return json_null();
	return json_pack("{sfsfsf}", "lo", report_ms(lo), "hi", report_ms(hi), "confidence",
		0.95);
}

json_t *fl_driver_control_json(const struct fl_driver_result *r, unsigned ceiling)
{
	json_t *o = fl_driver_result_json(r, 1);
	int bad = o == NULL;

	if (bad)
		return NULL;
	report_set(o, "inflight_ceiling", json_integer(ceiling), &bad);
	report_set(o, "p95_interval_ms", report_p95_interval(&r->latency), &bad);
	report_set(o, "latency_hist_ns", fl_hist_to_json(&r->latency), &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One CSV cell of ns as ms, empty when nothing stands behind it. 0 or -1. */
static int report_csv_ms(FILE *f, int have, uint64_t ns)
{
	return have && fprintf(f, "%.3f", report_ms(ns)) < 0 ? -1 : 0;
}

/* A rate cell, empty when the window was empty. 0 or -1. */
static int report_csv_rate(FILE *f, int (*rate)(const struct fl_driver_result *, double *),
	const struct fl_driver_result *r)
{
	double v;

	if (fputc(',', f) == EOF)
		return -1;
	return rate(r, &v) == 0 && fprintf(f, "%.3f", v) < 0 ? -1 : 0;
}

int fl_driver_trace_csv(FILE *f, const struct fl_driver_result *const *steps, size_t n)
{
	uint64_t base = 0;

	if (fprintf(f, "second,sent,completed,ok,inflight,p95_ms\n") < 0)
		return -1;
	for (size_t s = 0; s < n; s++) {
		const struct fl_driver_result *r = steps[s];
		for (size_t i = 0; i < r->trace_len; i++) {
			const struct fl_driver_trace_row *t = &r->trace[i];
			if (fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
				base + t->second, t->sent, t->completed, t->ok, t->inflight) < 0 ||
			    report_csv_ms(f, t->ok > 0, t->p95_ns) < 0 || fputc('\n', f) == EOF)
				return -1;
		}
		base += r->trace_len;
	}
	return fflush(f) == 0 ? 0 : -1;
}

/* An empty histogram leaves its cells empty. */
static int report_hist_csv(FILE *f, const struct fl_hist *h)
{
	for (size_t i = 0; i < REPORT_NELEM(report_pcts); i++)
		if (fputc(',', f) == EOF ||
		    report_csv_ms(f, h->n > 0, fl_hist_percentile(h, report_pcts[i].pct)) < 0)
			return -1;
	if (fputc(',', f) == EOF || report_csv_ms(f, h->n > 0, h->max) < 0 || fputc(',', f) == EOF)
		return -1;
	return h->n > 0 && fprintf(f, "%.3f", fl_hist_mean(h) / 1e6) < 0 ? -1 : 0;
}

static int report_hist_csv_header(FILE *f, const char *prefix)
{
	for (size_t i = 0; i < REPORT_NELEM(report_pcts); i++)
		if (fprintf(f, ",%s_%s", prefix, report_pcts[i].key) < 0)
			return -1;
	return fprintf(f, ",%s_max,%s_mean", prefix, prefix) < 0 ? -1 : 0;
}

int fl_driver_steps_csv(FILE *f, const struct fl_driver_result *const *steps, size_t n)
{
	if (fprintf(f, "step,requested_qps,achieved_qps,replied_qps,window_s") < 0)
		return -1;
#define REPORT_COUNT_HDR(fld, help) if (fprintf(f, "," #fld) < 0) return -1;
	FL_DRIVER_COUNTS(REPORT_COUNT_HDR)
#undef REPORT_COUNT_HDR
	if (fprintf(f, ",errors") < 0)
		return -1;
	for (int e = 0; e < FL_DRIVER_ERR_N; e++)
		if (fprintf(f, ",err_%s", report_err_keys[e]) < 0)
			return -1;
	if (report_hist_csv_header(f, "latency_ms") || report_hist_csv_header(f, "service_ms") ||
	    fprintf(f, ",depth,driver_limited\n") < 0)
		return -1;

	for (size_t s = 0; s < n; s++) {
		const struct fl_driver_result *r = steps[s];
		if (fprintf(f, "%u,%.3f", r->step, r->requested_qps) < 0 ||
		    report_csv_rate(f, fl_driver_achieved_qps, r) < 0 ||
		    report_csv_rate(f, fl_driver_replied_qps, r) < 0 ||
		    fprintf(f, ",%.3f", r->window_s) < 0)
			return -1;
#define REPORT_COUNT_ROW(fld, help) if (fprintf(f, ",%" PRIu64, r->c.fld) < 0) return -1;
		FL_DRIVER_COUNTS(REPORT_COUNT_ROW)
#undef REPORT_COUNT_ROW
		if (fprintf(f, ",%" PRIu64, fl_driver_errors_total(&r->c)) < 0)
			return -1;
		for (int e = 0; e < FL_DRIVER_ERR_N; e++)
			if (fprintf(f, ",%" PRIu64, r->c.errors[e]) < 0)
				return -1;
		if (report_hist_csv(f, &r->latency) || report_hist_csv(f, &r->service) ||
		    fprintf(f, ",%u,%d\n", r->depth, r->driver_limited) < 0)
			return -1;
	}
	return fflush(f) == 0 ? 0 : -1;
}

static void report_print_hist(FILE *f, const char *what, const struct fl_hist *h)
{
	if (h->n == 0) {
		fprintf(f, "  %-8s no OK replies: no percentiles\n", what);
		return;
	}
	fprintf(f, "  %-8s p50 %.2f  p90 %.2f  p95 %.2f  p99 %.2f  p99.9 %.2f  max %.2f ms\n",
		what, report_ms(fl_hist_percentile(h, 50)), report_ms(fl_hist_percentile(h, 90)),
		report_ms(fl_hist_percentile(h, 95)), report_ms(fl_hist_percentile(h, 99)),
		report_ms(fl_hist_percentile(h, 99.9)), report_ms(h->max));
}

void fl_driver_result_print(FILE *f, const struct fl_driver_result *r)
{
	uint64_t nerr = fl_driver_errors_total(&r->c);
	double good, replied;

	if (fl_driver_achieved_qps(r, &good) == 0 && fl_driver_replied_qps(r, &replied) == 0)
		fprintf(f, "step %u: requested %.1f qps, achieved %.1f OK replies/s (%.1f replies/s "
			"of any status) over %.1f s%s\n", r->step, r->requested_qps, good, replied,
			r->window_s, r->interrupted ? " (interrupted)" : "");
	else
		fprintf(f, "step %u: requested %.1f qps, no measured window%s\n", r->step,
			r->requested_qps, r->interrupted ? " (interrupted)" : "");
	fprintf(f, "  sent %" PRIu64 "  completed %" PRIu64 "  ok %" PRIu64 "  overloaded %"
		PRIu64 "  timeouts %" PRIu64 "  late %" PRIu64 "  errors %" PRIu64 "\n",
		r->c.sent, r->c.completed, r->c.ok, r->c.overloaded, r->c.timeouts, r->c.late, nerr);
	if (r->miss_stop.stopped)
		fprintf(f, "  stopped at %.1f s: its miss was certain (%" PRIu64 " OK replies over %g "
			"ms, limit %" PRIu64 "; %" PRIu64 " failed, limit %" PRIu64 "; %" PRIu64
			" requests due)\n", r->miss_stop.stopped_at_s, r->miss_stop.late,
			r->miss_stop.p95_over_ms, r->miss_stop.late_limit, r->miss_stop.failed,
			r->miss_stop.failed_limit, r->miss_stop.due);
	if (nerr > 0) {
		fprintf(f, "  errors:");
		for (int e = 0; e < FL_DRIVER_ERR_N; e++)
			if (r->c.errors[e] > 0)
				fprintf(f, " %s %" PRIu64, report_err_keys[e], r->c.errors[e]);
		fprintf(f, "\n");
	}
	if (r->c.unsent > 0 || r->c.recycled > 0)
		fprintf(f, "  unsent %" PRIu64 "  connections recycled %" PRIu64 "\n", r->c.unsent,
			r->c.recycled);
	report_print_hist(f, "latency", &r->latency);
	report_print_hist(f, "service", &r->service);
	if (r->host_cpu_pct >= 0)
		fprintf(f, "  depth %u  host cpu %.0f%%\n", r->depth, r->host_cpu_pct);
	if (r->next_depth > r->depth)
		fprintf(f, "  driver-limited: depth raised %u -> %u\n", r->depth, r->next_depth);
	else if (r->driver_limited)
		fprintf(f, "  driver-limited: requests waited for free slots (depth %u at its cap "
			"or host cpu busy)\n", r->depth);
}
