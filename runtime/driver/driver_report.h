/* driver_report.h: the driver's per-step results, and their JSON, CSV and text forms.
 *
 * Pure functions over the structs below (no engine, no I/O beyond a FILE *), so tests can
 * build a result by hand. Times in a result are ns; the JSON and CSV give ms.
 *
 * One step as JSON (fl_driver_result_json):
 *   {"step": 0, "requested_qps": 500, "achieved_qps": 499.1, "replied_qps": 499.3,
 *    "warmup_s": 5, "duration_s": 30, "window_s": 30,
 *    "sent": .., "completed": .., "ok": .., "overloaded": .., "timeouts": .., "late": ..,
 *    "unsent": .., "backlogged": .., "window_completions": .., "window_ok": ..,
 *    "recycled": ..,
 *    "errors": {"total": .., "bad_request": .., "denied": .., "stale": .., "internal": ..,
 *               "deadline_exceeded": .., "status_other": .., "protocol": .., "conn_lost": ..,
 *               "connect": .., "build": ..},
 *    "latency_ms": {"count": .., "p50": .., "p90": .., "p95": .., "p99": .., "p99_9": ..,
 *                   "max": .., "mean": ..},   (every figure null when count is 0)
 *    "service_ms": {same keys},
 *    "depth": 16, "next_depth": 32, "driver_limited": true, "host_cpu_pct": 41.5,
 *    "interrupted": false,
 *    "miss_stop": null, or {"p95_over_ms": .., "min_s": .., "due": .., "late_limit": ..,
 *                  "failed_limit": ..,
 *                  "late": .., "failed": .., "stopped": true, "stopped_at_s": ..},
 *    "trace": [{"second": 0, "sent": .., "completed": .., "ok": .., "inflight": ..,
 *               "p95_ms": ..}, ..]}
 * A figure with nothing behind it is null, never 0: achieved_qps and replied_qps of an
 * empty window, percentiles of an empty histogram, host_cpu_pct when /proc/stat could not
 * be read, p95_ms of a second without OK replies. The CSVs leave such a cell empty.
 * Trace CSV (fl_driver_trace_csv): header "second,sent,completed,ok,inflight,p95_ms", one
 * row per second. Step CSV (fl_driver_steps_csv): one row per step of the scalar fields.
 */
#ifndef FL_DRIVER_REPORT_H
#define FL_DRIVER_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

struct json_t;

/* Error kinds: enum name, JSON key, meaning. A request counts under at most one. */
#define FL_DRIVER_ERRORS(X) \
	X(BAD_REQUEST, "bad_request", "reply status BAD_REQUEST") \
	X(DENIED, "denied", "reply status DENIED") \
	X(STALE, "stale", "reply status STALE") \
	X(INTERNAL, "internal", "reply status INTERNAL") \
	X(DEADLINE, "deadline_exceeded", "reply status DEADLINE_EXCEEDED (skipped by the leaf: " \
		"it could not meet the request's deadline)") \
	X(STATUS_OTHER, "status_other", "reply with a status this driver does not know") \
	X(PROTOCOL, "protocol", "bad frame from the leaf (the connection is dropped)") \
	X(CONN_LOST, "conn_lost", "request lost when its connection closed") \
	X(CONNECT, "connect", "connection attempt failed (not a request)") \
	X(BUILD, "build", "request could not be built or queued (out of memory)")

enum fl_driver_err {
#define FL_DRIVER_ERR_ENUM(e, key, help) FL_DRIVER_ERR_##e,
	FL_DRIVER_ERRORS(FL_DRIVER_ERR_ENUM)
#undef FL_DRIVER_ERR_ENUM
	FL_DRIVER_ERR_N
};

/* Request counters of one step: field, meaning. "Measured" requests are those whose
 * intended send time lies in the measured window (after warm-up). */
#define FL_DRIVER_COUNTS(X) \
	X(sent, "measured requests sent") \
	X(completed, "measured requests answered (any status)") \
	X(ok, "answered with status OK (the only ones in the latency histograms)") \
	X(overloaded, "answered with status OVERLOADED (shed by the leaf)") \
	X(timeouts, "no reply within the timeout of the intended send time") \
	X(late, "sending (packing) began more than 1 ms after the intended send time") \
	X(unsent, "never sent: the step was cut short while they waited") \
	X(backlogged, "waited for a free connection slot before being sent") \
	X(window_completions, "replies of any request received within the measured window") \
	X(window_ok, "OK replies of any request received within the measured window") \
	X(recycled, "connections reopened after a timeout (any request)")

struct fl_driver_counts {
#define FL_DRIVER_COUNT_FIELD(f, help) uint64_t f;
	FL_DRIVER_COUNTS(FL_DRIVER_COUNT_FIELD)
#undef FL_DRIVER_COUNT_FIELD
	uint64_t errors[FL_DRIVER_ERR_N];  /* by enum fl_driver_err */
};

/* One second of a step, from the step's start (warm-up included). */
struct fl_driver_trace_row {
	uint64_t second;     /* whole seconds since the step's time 0 */
	uint64_t sent;       /* requests sent in this second */
	uint64_t completed;  /* replies received in this second (any status) */
	uint64_t ok;         /* of which OK */
	uint64_t inflight;   /* requests awaiting a reply at the end of the second */
	uint64_t p95_ns;     /* p95 latency from intended send time of this second's OK
	                        replies (ns); meaningless (reported null) when ok is 0 */
};

struct fl_driver_result {
	unsigned step;               /* 0-based step number of the engine */
	double requested_qps;        /* requests per second asked for */
	double warmup_s;             /* warm-up (s): sent, not recorded */
	double duration_s;           /* measured window asked for (s) */
	double window_s;             /* measured window actually run (s): duration_s unless
	                                interrupted */
	struct fl_driver_counts c;
	struct fl_hist latency;      /* OK replies: ns from intended send time to reply */
	struct fl_hist service;      /* OK replies: ns from actual send (packing began) to reply
	                                (uncorrected, as wrk2 -U) */
	unsigned depth;              /* in-flight cap per connection during the step */
	unsigned next_depth;         /* cap for the next step (> depth when raised) */
	int driver_limited;          /* requests waited for slots while p95 < SLA */
	double host_cpu_pct;         /* host CPU busy during the step (%, /proc/stat); < 0:
	                                unknown */
	int interrupted;             /* cut short by SIGINT/SIGTERM */
	struct fl_driver_miss_stop {  /* the step's miss-stop rule (driver_engine.h) */
		double p95_over_ms;      /* <= 0: no rule this step (JSON null) */
		double min_s;            /* measured seconds before any stop */
		uint64_t due;            /* requests due in the measured window, as scheduled */
		uint64_t late_limit;     /* more OK replies over p95_over_ms than this: stop */
		uint64_t failed_limit;   /* this many failed requests: stop */
		uint64_t late, failed;   /* what the step counted */
		int stopped;             /* the rule ended the step */
		double stopped_at_s;     /* measured seconds when it did */
	} miss_stop;
	size_t trace_len;
	struct fl_driver_trace_row *trace;  /* trace_len rows, malloc'd; see _free */
};

/* Zero r (histograms emptied, no trace). */
void fl_driver_result_init(struct fl_driver_result *r);

/* Free r's trace. */
void fl_driver_result_free(struct fl_driver_result *r);

/* Sum of r's error counters. */
uint64_t fl_driver_errors_total(const struct fl_driver_counts *c);

/* Requests that failed the pass test's error limit: errors, timeouts and OVERLOADED. */
uint64_t fl_driver_failed(const struct fl_driver_counts *c);

/* JSON key of an error kind ("conn_lost"). */
const char *fl_driver_err_key(enum fl_driver_err e);

/* Goodput: OK replies received in the measured window per second of it, window_ok /
 * window_s. Returns 0 with *qps set, or -1 when the window is empty (nothing measured). */
int fl_driver_achieved_qps(const struct fl_driver_result *r, double *qps);

/* Replies of any status received in the measured window per second of it
 * (window_completions / window_s). 0, or -1 when the window is empty. */
int fl_driver_replied_qps(const struct fl_driver_result *r, double *qps);

/* r as the JSON object above; with_trace = 0 leaves out "trace". NULL when out of
 * memory. The caller owns the reference. */
struct json_t *fl_driver_result_json(const struct fl_driver_result *r, int with_trace);

/* r as a control-mode step line (frontload-driver --control): the JSON above with its
 * trace, plus inflight_ceiling (ceiling), p95_interval_ms {lo, hi, confidence: 0.95}: the
 * latencies (ms) at ranks n*0.95 -+ 1.96*sqrt(n*0.95*0.05) of the n OK replies (null when
 * none), and latency_hist_ns: the latency histogram in hist_json.h's exact form, so that
 * several drivers' steps can be merged. NULL when out of memory. */
struct json_t *fl_driver_control_json(const struct fl_driver_result *r, unsigned ceiling);

/* Histogram h (ns) as {"count", "p50", "p90", "p95", "p99", "p99_9", "max", "mean"} in
 * ms. NULL when out of memory. */
struct json_t *fl_driver_hist_json(const struct fl_hist *h);

/* Trace CSV: the header line, then the rows of each result with seconds continuing from
 * one step to the next (step k starts at the sum of the earlier steps' trace lengths).
 * Returns 0, or -1 on a write error. */
int fl_driver_trace_csv(FILE *f, const struct fl_driver_result *const *steps, size_t n);

/* Step CSV: a header, then one row per step: step, requested_qps, achieved_qps, counts,
 * errors, latency and service percentiles (ms), depth, driver_limited. 0 or -1. */
int fl_driver_steps_csv(FILE *f, const struct fl_driver_result *const *steps, size_t n);

/* A few human lines for r (stderr summary). Error kinds appear only when non-zero. */
void fl_driver_result_print(FILE *f, const struct fl_driver_result *r);

#endif
