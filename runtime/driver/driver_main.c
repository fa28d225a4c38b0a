/* driver_main.c: frontload-driver, the open-loop load generator for frontload-leaf. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "clock.h"
#include "corpus.h"
#include "driver_engine.h"
#include "driver_report.h"
#include "osfile.h"
#include "reqgen.h"
#include "schedule.h"
#include "tls.h"
#include "zcodec.h"

#define DRV_EXIT_OK 0
#define DRV_EXIT_FAIL 1                  /* leaf unreachable, setup or output failure */
#define DRV_EXIT_USAGE 2                 /* bad flags */
#define DRV_MAX_STEPS 256                /* --qps list length and control steps */
#define DRV_PORT_FILE_WAIT_S 10          /* --port-file may appear this long after start */
#define DRV_CORPUS_BYTES (32u << 20)     /* generated corpus for bodies and padding */
#define DRV_AUTO_MIN_INFLIGHT 64u        /* --depth auto's least ceiling (4 x 16) */
#define DRV_AUTO_FIRST_DEPTH 16u         /* --depth auto: per-connection depth at start */
/* Significant digits of every real written: 6 (jansson's %g default) cut a step's rate
 * 130.6664 to 130.666, so frontload run's echoed final rate differed from its own. */
#define DRV_JSON_DIGITS 10

/* The signal that asked us to stop (0: none). The only global the driver writes. */
static volatile sig_atomic_t drv_stop_signal;

/* Every flag's value, defaults applied from drv_opts[]. */
struct drv_args {
	const char *leaf;
	const char *port_file;
	int tls;
	const char *tls_dir;
	const char *qps;
	double duration_s;
	double warmup_s;
	uint64_t threads;
	uint64_t connections;
	const char *depth;
	const char *arrival;
	const char *draws;
	uint64_t seed;
	double sla_ms;
	double timeout_s;
	const char *deadline;
	uint64_t stories;
	uint64_t story_bytes;
	const char *request_size;
	uint64_t max_request_bytes;
	uint64_t sessions;
	const char *method;
	int zstd;
	uint64_t reply_bytes;
	const char *json;
	const char *trace_csv;
	const char *csv;
	int control;
	int quiet;
};

/* One flag each: --help, parsing, defaults and the JSON config echo all read this. */
#define FL_CLI_OBJ struct drv_args
static const struct fl_cli_opt drv_opts[] = {
	FL_OPT_STR("leaf", leaf, "HOST:PORT", NULL, "leaf address ([v6]:PORT for IPv6); this "
		"or --port-file"),
	FL_OPT_STR("port-file", port_file, "PATH", NULL, "read the leaf's port (or HOST:PORT) "
		"from PATH, written by frontload-leaf --port-file; waits up to 10 s for it; host "
		"127.0.0.1"),
	FL_OPT_FLAG("tls", tls, "connect with TLS, verifying the leaf against the pinned "
		"certificate"),
	FL_OPT_STR("tls-dir", tls_dir, "DIR", NULL, "directory holding frontload-cert.pem "
		"(default: the installed tls directory)"),
	FL_OPT_STR("qps", qps, "R[,R2,...]", NULL, "requests per second (required unless "
		"--control); a list runs one step per rate, each with --warmup and --duration; a "
		"k suffix means x1000"),
	FL_OPT_REAL("duration", duration_s, 0.001, 1e6, "S", "30", "measured seconds per "
		"step"),
	FL_OPT_REAL("warmup", warmup_s, 0, 1e6, "S", "5", "seconds per step sent before "
		"measuring (not recorded)"),
	FL_OPT_UINT("threads", threads, 1, 1024, "T", "1", "sender threads, each with its own "
		"event loop and connections"),
	FL_OPT_UINT("connections", connections, 1, 4096, "C", "4", "connections per thread"),
	FL_OPT_STR("depth", depth, "D|auto", "auto", "requests in flight per connection "
		"(pipelined), 1..65536; auto: before each step the ceiling over all connections "
		"is set to rate x the deadline (or --timeout-s with --deadline-ms none), at least "
		"64, so the driver never holds back a request that could still meet its deadline "
		"(Little's law); either way raised when the driver is the bottleneck"),
	FL_OPT_STR("arrival", arrival, "poisson|fixed|binomial", "poisson", "inter-arrival "
		"gaps: exponential (Poisson process), exactly 1/rate, or binomial: the warm-up "
		"and the measured window each hold exactly round(rate x seconds) requests, each "
		"at a uniformly random time (a Poisson process conditioned on its count, so a "
		"step offers the rate asked for)"),
	FL_OPT_STR("draws", draws, "fresh|common", "fresh", "fresh: each step draws its "
		"arrival gaps and requests anew (seeds derived from the step number); common: "
		"every step replays the same seeded draws, request i and arrival i the same in "
		"every step with the times scaled to its rate (common random numbers: steps at "
		"two rates differ in the rate alone, not in the sample of requests they drew)"),
	FL_OPT_UINT("seed", seed, 0, 18000000000000000000ull, "S", "1", "seed of the send "
		"schedule, request contents and corpus"),
	FL_OPT_REAL("sla-ms", sla_ms, 0.001, 1e9, "MS", "700", "p95 latency target (ms); "
		"depth is raised only while p95 stays under it"),
	FL_OPT_REAL("timeout-s", timeout_s, 0.01, 1e6, "S", "10", "a request with no reply "
		"this long after its intended send time is a timeout"),
	FL_OPT_STR("deadline-ms", deadline, "MS|timeout|none", "timeout", "deadline each "
		"request carries (frame header deadline_ns): its intended send time + MS. The leaf "
		"skips the work a request can no longer finish by then and answers "
		"DEADLINE_EXCEEDED (counted under errors.deadline_exceeded); timeout = "
		"--timeout-s (a reply after it is dropped anyway), none = no deadline"),
	FL_OPT_UINT("stories", stories, 0, 65536, "N", "16", "candidate stories per request"),
	FL_OPT_BYTES("story-bytes", story_bytes, 0, 64u << 20, "BYTES", "1024", "body bytes "
		"per story"),
	FL_OPT_STR("request-size", request_size, "sampled|BYTES", "sampled", "packed request "
		"size: sampled from feed_aggregator_req_sizes.json, or fixed"),
	FL_OPT_BYTES("max-request-bytes", max_request_bytes, 1, 1u << 30, "BYTES", "4M", "cap "
		"on sampled request sizes"),
	FL_OPT_UINT("sessions", sessions, 1, 1000000000000000ull, "N", "1000", "distinct "
		"session ids (user id derived from the session)"),
	FL_OPT_STR("method", method, "NAME|mix", "mix", "inbound method (streamData, "
		"STREAM_DATA, ...) or the production mix of rpc_dist.json"),
	FL_OPT_FLAG("zstd", zstd, "ask the leaf to zstd-compress reply payloads"),
	FL_OPT_BYTES("reply-bytes", reply_bytes, 0, UINT32_MAX, "BYTES", "0", "reply size to "
		"ask for; 0: the leaf samples it"),
	FL_OPT_STR("json", json, "PATH", NULL, "write the config and every step's results as "
		"JSON"),
	FL_OPT_STR("trace-csv", trace_csv, "PATH", NULL, "write the per-second trace: "
		"second,sent,completed,inflight,p95_ms"),
	FL_OPT_STR("csv", csv, "PATH", NULL, "write one CSV row of results per step"),
	FL_OPT_FLAG("control", control, "read steps from stdin (see CONTROL MODE) instead of "
		"--qps"),
	FL_OPT_FLAG("quiet", quiet, "no summary on stderr"),
};
#undef FL_CLI_OBJ
static const struct fl_cli drv_cli = {
	.opts = drv_opts, .nopts = sizeof drv_opts / sizeof drv_opts[0],
};

static void drv_usage(FILE *f)
{
	fprintf(f,
"usage: frontload-driver (--leaf HOST:PORT | --port-file PATH) (--qps R[,R...] | --control)\n"
"                        [options]\n"
"\n"
"Open-loop load generator for frontload-leaf. Requests are sent on a schedule fixed in\n"
"advance (Poisson, fixed or binomial gaps at the asked rate), whether or not earlier replies\n"
"come back, and latency is measured from each request's *intended* send time. A stalled\n"
"leaf therefore shows up as latency rather than as a slower driver (no coordinated\n"
"omission, as in wrk2). A request that finds every connection slot busy waits in a\n"
"backlog, and its wait counts in its latency; one sent over 1 ms after its intended time\n"
"is counted as late. Service time (from the actual send) is reported beside it.\n"
"\n"
"Units: rates in requests/s, times in seconds unless the flag says ms, sizes in bytes\n"
"(k, M, G suffixes are powers of 1024). Latencies are reported in ms.\n"
"\n"
"options (defaults in brackets):\n");
	fl_cli_help(f, &drv_cli);
	fprintf(f,
"\n"
"CONTROL MODE (--control): connections stay open across steps. Each stdin line\n"
"  step QPS WARMUP_S DURATION_S [INFLIGHT [MISS_P95_MS MISS_ERROR_RATE [MISS_MIN_S]]]\n"
"runs one step and prints its results as one JSON line on stdout (the object described\n"
"under --json, one element of \"steps\", plus inflight_ceiling: the requests in flight\n"
"allowed over all connections; p95_interval_ms {lo, hi, confidence: 0.95}: the\n"
"latencies at ranks n*0.95 -+ 1.96*sqrt(n*0.95*0.05) of the n OK replies, null when\n"
"none; and latency_hist_ns, the latency histogram exactly, so that several drivers'\n"
"steps merge into the p95 of all their requests: {sub_bits: 7, count, min, max, sum\n"
"(ns, min/max null when count is 0), buckets: [[INDEX, COUNT], ...] of the non-empty\n"
"buckets}; bucket INDEX < 256 holds the value INDEX ns; above, with s = INDEX / 128 - 1,\n"
"it holds [(INDEX %% 128 + 128) << s, that + 2^s - 1] ns). INFLIGHT sets the ceiling\n"
"first (depth = ceil(INFLIGHT / (threads x connections)), at most %u per connection;\n"
"without it, --depth auto sizes it as for any step). With MISS_P95_MS (ms) and\n"
"MISS_ERROR_RATE (0..1, 0: none) the step ends as soon as its miss is certain: more\n"
"than 5%% of the requests due in its measured window (counted from the seeded schedules\n"
"before it starts) came back OK over MISS_P95_MS (whole histogram bucket over it), so\n"
"its p95 is over it however the rest end, or at least MISS_ERROR_RATE of them failed\n"
"(errors, OVERLOADED, timeouts), but not before MISS_MIN_S measured seconds (default\n"
"0: a miss certain earlier stays certain, and a window that long still shows what the\n"
"leaf sustains); \"miss_stop\" {p95_over_ms, min_s, due, late_limit, failed_limit,\n"
"late, failed, stopped, stopped_at_s} says what it counted (null without the rule; due\n"
"0: not armed, a window over 50 M draws). frontload run sends it for final windows,\n"
"with MISS_MIN_S 10. A line that cannot be run prints {\"error\": \"...\"}; \"quit\" or end of\n"
"input ends the run. The line\n"
"  clock\n"
"prints {\"clock_wall_ns\": N}, this host's realtime clock (ns since the epoch) when read:\n"
"frontload run stamps its own clock around it to measure a remote driver's offset.\n"
"\n"
"--json writes {\"tool\", \"config\", \"leaf\", \"interrupted\", \"steps\": [...]}; each step:\n"
"  requested_qps; achieved_qps = goodput: OK replies received in the measured window /\n"
"  its seconds; replied_qps: replies of any status, the same way; sent, completed, ok,\n"
"  overloaded, timeouts, late, unsent, backlogged, window_completions, window_ok,\n"
"  errors {total, by kind: deadline_exceeded, bad_request, ...}, latency_ms and\n"
"  service_ms {count, p50, p90, p95, p99, p99_9, max, mean} over OK replies, depth,\n"
"  next_depth, driver_limited, host_cpu_pct, miss_stop, trace [per second: sent,\n"
"  completed, ok, inflight, p95_ms]. backlogged: requests that waited in the driver\n"
"  for a free slot (the depth) or for room on a connection (a connection holding 8 MiB\n"
"  of unsent bytes takes no new request until half of it has gone: the leaf is not\n"
"  reading, so the request waits here, unpacked, its latency still counted from its\n"
"  intended time; only the depth sets driver_limited). A figure with nothing behind it\n"
"  is null, never 0: the rates of an empty window, every percentile of a histogram with\n"
"  count 0, host_cpu_pct when /proc/stat cannot be read, a second's p95_ms without OK\n"
"  replies (CSV: empty cell).\n"
"\n"
"Adaptive depth: when requests waited for slots while p95 stayed under --sla-ms and host\n"
"CPU was below 90%%, the next step doubles --depth (up to %u) and the summary says\n"
"\"driver-limited: depth raised A -> B\".\n"
"\n"
"exit status: 0 done; 1 leaf unreachable or a setup/output failure; 2 bad flags;\n"
"130/143 stopped by SIGINT/SIGTERM (the current step ends early; results measured so far\n"
"are still written).\n", FL_DRIVER_DEPTH_CAP, FL_DRIVER_DEPTH_CAP);
}

/* The leaf's port from a port file: "PORT" or "HOST:PORT", whitespace around ignored.
 * Waits for the file to exist and hold a value. Returns 0 or -1 (err). */
static int drv_read_port_file(const char *path, char *host, size_t hostlen, uint16_t *port,
	char *err, size_t errlen)
{
	for (int tries = 0; tries <= DRV_PORT_FILE_WAIT_S * 10; tries++) {
		char buf[512];
		FILE *f = fopen(path, "r");
		size_t n = 0;
		if (f != NULL) {
			n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
		}
		buf[n] = 0;
		char *s = buf + strspn(buf, " \t\r\n");
		s[strcspn(s, " \t\r\n")] = 0;
		if (*s != 0) {
			uint64_t p;
			if (strchr(s, ':') != NULL)
				return fl_cli_hostport(s, host, hostlen, port) == 0 ? 0 :
					(snprintf(err, errlen, "--port-file %s: bad contents '%s'", path, s), -1);
			if (fl_cli_parse_uint(s, &p) != 0 || p == 0 || p > 65535) {
				snprintf(err, errlen, "--port-file %s: bad port '%s'", path, s);
				return -1;
			}
			snprintf(host, hostlen, "127.0.0.1");
			*port = (uint16_t)p;
			return 0;
		}
		if (drv_stop_signal)
			break;
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	snprintf(err, errlen, "--port-file %s: no port after %d s", path, DRV_PORT_FILE_WAIT_S);
	return -1;
}

/* The flags as given (defaults applied), typed, for the results file. */
static json_t *drv_config_json(const struct drv_args *a)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i < drv_cli.nopts; i++) {
		const struct fl_cli_opt *op = &drv_opts[i];
		json_t *v = NULL;
		switch (op->type) {
		case FL_CLI_FLAG: v = json_boolean(fl_cli_uint(op, a)); break;
		case FL_CLI_STR:
			v = fl_cli_str(op, a) ? json_string(fl_cli_str(op, a)) : json_null();
			break;
		case FL_CLI_UINT:
		case FL_CLI_BYTES: v = json_integer((json_int_t)fl_cli_uint(op, a)); break;
		case FL_CLI_REAL: v = json_real(fl_cli_real(op, a)); break;
		}
		if (v == NULL || json_object_set_new(o, op->name, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* Write text to path through a temporary file and a rename (no half-written results). */
static int drv_write_file(const char *path, int (*emit)(FILE *, const void *), const void *arg)
{
	struct fl_atomic_file a;

	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0)
		return -1;
	return fl_atomic_commit(&a, emit(a.f, arg) == 0, NULL, 0);
}

/* What the output writers need. */
struct drv_run {
	const struct drv_args *args;
	const char *leaf;                       /* "host:port" */
	struct fl_driver_result **steps;        /* nsteps results */
	size_t nsteps;
	int interrupted;
	const struct fl_driver_config *auto_cfg; /* --depth auto: the config it sizes from */
};

static int drv_emit_json(FILE *f, const void *arg)
{
	const struct drv_run *run = arg;
	json_t *root = json_object(), *steps = json_array();
	int rc = -1;

	if (root == NULL || steps == NULL)
		goto out;
	for (size_t i = 0; i < run->nsteps; i++)
		if (json_array_append_new(steps, fl_driver_result_json(run->steps[i], 1)) != 0)
			goto out;
	if (json_object_set_new(root, "tool", json_string("frontload-driver")) != 0 ||
	    json_object_set_new(root, "config", drv_config_json(run->args)) != 0 ||
	    json_object_set_new(root, "leaf", json_string(run->leaf)) != 0 ||
	    json_object_set_new(root, "interrupted", json_boolean(run->interrupted)) != 0)
		goto out;
	json_object_set(root, "steps", steps);
	rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(DRV_JSON_DIGITS)) == 0 &&
		fputc('\n', f) != EOF ? 0 : -1;
out:
	json_decref(steps);
	json_decref(root);
	return rc;
}

static int drv_emit_trace(FILE *f, const void *arg)
{
	const struct drv_run *run = arg;
	return fl_driver_trace_csv(f, (const struct fl_driver_result *const *)run->steps,
		run->nsteps);
}

static int drv_emit_csv(FILE *f, const void *arg)
{
	const struct drv_run *run = arg;
	return fl_driver_steps_csv(f, (const struct fl_driver_result *const *)run->steps,
		run->nsteps);
}

static int drv_write_outputs(const struct drv_run *run)
{
	const struct drv_args *a = run->args;
	int rc = 0;

	if (a->json && drv_write_file(a->json, drv_emit_json, run) != 0) {
		fprintf(stderr, "frontload-driver: cannot write %s: %s\n", a->json, strerror(errno));
		rc = -1;
	}
	if (a->trace_csv && drv_write_file(a->trace_csv, drv_emit_trace, run) != 0) {
		fprintf(stderr, "frontload-driver: cannot write %s: %s\n", a->trace_csv,
			strerror(errno));
		rc = -1;
	}
	if (a->csv && drv_write_file(a->csv, drv_emit_csv, run) != 0) {
		fprintf(stderr, "frontload-driver: cannot write %s: %s\n", a->csv, strerror(errno));
		rc = -1;
	}
	return rc;
}

static void drv_on_signal(int sig)
{
	drv_stop_signal = sig;
}

/* SIGINT/SIGTERM set the stop flag; no SA_RESTART, so a blocked stdin read returns. */
static void drv_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = drv_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* --deadline-ms as ms (0 = none) into *ms when ms is not NULL. 0, or -1 when malformed. */
static int drv_deadline_ms(const struct drv_args *a, double *ms)
{
	double v;
	char *end;

	if (strcmp(a->deadline, "timeout") == 0)
		v = a->timeout_s * 1e3;
	else if (strcmp(a->deadline, "none") == 0)
		v = 0;
	else {
		errno = 0;
		v = strtod(a->deadline, &end);
		if (errno != 0 || end == a->deadline || *end != 0 || !(v > 0) || !isfinite(v))
			return -1;
	}
	if (ms != NULL)
		*ms = v;
	return 0;
}

/* --depth: a number (1..FL_DRIVER_MAX_DEPTH) into *depth, or "auto" (*depth = 0).
 * Returns 0 or -1. */
static int drv_depth(const struct drv_args *a, unsigned *depth)
{
	uint64_t v;

	if (strcmp(a->depth, "auto") == 0) {
		*depth = 0;
		return 0;
	}
	if (fl_cli_parse_uint(a->depth, &v) != 0 || v < 1 || v > FL_DRIVER_MAX_DEPTH)
		return -1;
	*depth = (unsigned)v;
	return 0;
}

/* --depth auto's ceiling for a step at qps: the requests that can be in flight when each
 * takes up to the latency bound (deadline, else timeout), at least DRV_AUTO_MIN_INFLIGHT. */
static unsigned drv_auto_inflight(const struct fl_driver_config *c, double qps)
{
	double bound_s = c->deadline_ms > 0 ? c->deadline_ms / 1e3 : c->timeout_s;
	double n = ceil(qps * bound_s);
	return n < DRV_AUTO_MIN_INFLIGHT ? DRV_AUTO_MIN_INFLIGHT : n > 1e9 ? 1000000000u :
		(unsigned)n;
}

/* Check the flags that depend on each other and fill the request generator config. */
static int drv_check_args(const struct drv_args *a, struct fl_reqgen_config *rc,
	enum fl_arrival *arrival, char *err, size_t errlen)
{
	if ((a->leaf == NULL) == (a->port_file == NULL)) {
		snprintf(err, errlen, "--leaf or --port-file: give exactly one");
		return -1;
	}
	if ((a->qps == NULL) == !a->control) {
		snprintf(err, errlen, "--qps: give rates, or --control (not both)");
		return -1;
	}
	if (drv_deadline_ms(a, NULL) != 0) {
		snprintf(err, errlen, "--deadline-ms: '%s' is not MS (> 0), timeout or none",
			a->deadline);
		return -1;
	}
	unsigned depth;
	if (drv_depth(a, &depth) != 0) {
		snprintf(err, errlen, "--depth: '%s' is not auto or a count in [1, %u]", a->depth,
			FL_DRIVER_MAX_DEPTH);
		return -1;
	}
	if (fl_arrival_parse(a->arrival, arrival) != 0) {
		snprintf(err, errlen, "--arrival: '%s' is not poisson, fixed or binomial",
			a->arrival);
		return -1;
	}
	if (strcmp(a->draws, "fresh") != 0 && strcmp(a->draws, "common") != 0) {
		snprintf(err, errlen, "--draws: '%s' is not fresh or common", a->draws);
		return -1;
	}
	fl_reqgen_config_default(rc);
	rc->seed = a->seed;
	rc->stories = (unsigned)a->stories;
	rc->story_bytes = (size_t)a->story_bytes;
	rc->max_request_bytes = (size_t)a->max_request_bytes;
	rc->sessions = a->sessions;
	rc->want_zstd = a->zstd;
	rc->reply_bytes = (uint32_t)a->reply_bytes;
	if (strcmp(a->request_size, "sampled") == 0) {
		rc->fixed_bytes = FL_REQGEN_SIZE_SAMPLED;
	} else {
		uint64_t n;
		if (fl_cli_parse_bytes(a->request_size, &n) != 0 || n == 0 || n > (1u << 30)) {
			snprintf(err, errlen, "--request-size: '%s' is not sampled or a byte count "
				"in [1, 1G]", a->request_size);
			return -1;
		}
		rc->fixed_bytes = (size_t)n;
	}
	if (fl_reqgen_method_parse(a->method, &rc->method) != 0) {
		snprintf(err, errlen, "--method: unknown method '%s' (mix, createAndPrimeSession, "
			"getStoriesUncompressed, streamData, streamIfrPriorityRanking, getAllStories)",
			a->method);
		return -1;
	}
	return 0;
}

/* Run one step, keep its result, report it. Returns 0, or -1 when it could not run. */
static int drv_run_step(struct fl_driver *eng, struct drv_run *run, double qps, double warmup,
	double duration, int control, int fixed_ceiling, int quiet)
{
	struct fl_driver_result *r;

	if (run->nsteps >= DRV_MAX_STEPS)
		return -1;
	r = malloc(sizeof *r);
	if (r == NULL)
		return -1;
	/* --depth auto: never below rate x latency bound; an adaptive raise stays. */
	if (run->auto_cfg != NULL && !fixed_ceiling) {
		unsigned want = drv_auto_inflight(run->auto_cfg, qps);
		if (want > fl_driver_inflight(eng))
			fl_driver_set_inflight(eng, want);
	}
	unsigned ceiling = fl_driver_inflight(eng);
	if (fl_driver_step(eng, qps, warmup, duration, r) != 0) {
		fl_driver_result_free(r);
		free(r);
		return -1;
	}
	run->steps[run->nsteps++] = r;
	run->interrupted |= r->interrupted;
	if (!quiet)
		fl_driver_result_print(stderr, r);
	if (control) {
		json_t *j = fl_driver_control_json(r, ceiling);
		if (j != NULL) {
			json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(DRV_JSON_DIGITS));
			json_decref(j);
		}
		fputc('\n', stdout);
		fflush(stdout);
	}
	return 0;
}

static void drv_control_error(const char *msg)
{
	json_t *j = json_pack("{ss}", "error", msg);
	if (j != NULL) {
		json_dumpf(j, stdout, JSON_COMPACT);
		json_decref(j);
	}
	fputc('\n', stdout);
	fflush(stdout);
}

/* Steps from stdin until "quit", end of input or a signal. */
static void drv_control_loop(struct fl_driver *eng, struct drv_run *run, int quiet)
{
	char line[1024];

	while (!drv_stop_signal && fgets(line, sizeof line, stdin) != NULL) {
		char cmd[16], extra[2];
		double qps, warm, dur, over_ms = 0, err_rate = 0, min_s = 0;
		unsigned inflight = 0;
		int n = sscanf(line, "%15s %lf %lf %lf %u %lf %lf %lf %1s", cmd, &qps, &warm, &dur,
			&inflight, &over_ms, &err_rate, &min_s, extra);
		if (n <= 0)
			continue;
		if (strcmp(cmd, "quit") == 0)
			break;
		if (strcmp(cmd, "clock") == 0 && n == 1) {
			/* Read as late as possible: frontload run brackets it with its own. */
			printf("{\"clock_wall_ns\":%llu}\n", (unsigned long long)fl_wall_ns());
			fflush(stdout);
			continue;
		}
		if (strcmp(cmd, "step") != 0 || (n != 4 && n != 5 && n != 7 && n != 8)) {
			drv_control_error("expected: step QPS WARMUP_S DURATION_S [INFLIGHT "
				"[MISS_P95_MS MISS_ERROR_RATE [MISS_MIN_S]]], clock, or quit");
			continue;
		}
		if (!(qps > 0) || !(warm >= 0) || !(dur > 0) || !isfinite(qps + warm + dur) ||
		    (n >= 5 && inflight == 0)) {
			drv_control_error("step: QPS, DURATION_S and INFLIGHT must be > 0, WARMUP_S "
				">= 0");
			continue;
		}
		if (n >= 7 && (!(over_ms > 0) || !isfinite(over_ms) || !(err_rate >= 0) ||
		    !(err_rate <= 1) || !(min_s >= 0) || !isfinite(min_s))) {
			drv_control_error("step: MISS_P95_MS must be > 0 (ms), MISS_ERROR_RATE in "
				"0..1 (0: no error limit) and MISS_MIN_S >= 0 (s)");
			continue;
		}
		if (n >= 5)
			fl_driver_set_inflight(eng, inflight);
		if (n >= 7)
			fl_driver_set_miss_stop(eng, over_ms, err_rate, min_s);
		if (drv_run_step(eng, run, qps, warm, dur, 1, n >= 5, quiet) != 0)
			drv_control_error("step could not run (out of memory or too many steps)");
	}
}

int main(int argc, char **argv)
{
	struct drv_args a;
	struct fl_reqgen_config rcfg;
	struct fl_reqgen gen;
	struct fl_corpus corpus;
	struct fl_driver_config dcfg;
	struct fl_driver *eng;
	struct fl_driver_result *steps[DRV_MAX_STEPS];
	struct drv_run run = { &a, NULL, steps, 0, 0, NULL };
	enum fl_arrival arrival;
	double rates[DRV_MAX_STEPS];
	int nrates = 0, rc = DRV_EXIT_OK;
	char err[1024], host[256], tls_dir[4096], leaf[300];
	uint16_t port;

	memset(&a, 0, sizeof a);
	int prc = fl_cli_parse(&drv_cli, argc, argv, &a, err, sizeof err);
	if (prc == FL_CLI_HELP) {
		drv_usage(stdout);
		return DRV_EXIT_OK;
	}
	if (prc != 0 || drv_check_args(&a, &rcfg, &arrival, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-driver: %s (see --help)\n", err);
		return DRV_EXIT_USAGE;
	}
	if (a.qps != NULL) {
		nrates = fl_cli_rates(a.qps, rates, DRV_MAX_STEPS);
		if (nrates < 0) {
			fprintf(stderr, "frontload-driver: --qps: '%s' is not a comma-separated "
				"list of rates > 0 in requests/s (at most %d; see --help)\n", a.qps,
				DRV_MAX_STEPS);
			return DRV_EXIT_USAGE;
		}
	}
	if (a.leaf != NULL && fl_cli_hostport(a.leaf, host, sizeof host, &port) != 0) {
		fprintf(stderr, "frontload-driver: --leaf: '%s' is not HOST:PORT\n", a.leaf);
		return DRV_EXIT_USAGE;
	}
	drv_install_signals();
	/* Requests of up to max-request-bytes are packed into fresh evbuffer chains; keep
	 * freed ones in the heap instead of an mmap/munmap (and its page faults) per
	 * request. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	if (a.port_file != NULL &&
	    drv_read_port_file(a.port_file, host, sizeof host, &port, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-driver: %s\n", err);
		return DRV_EXIT_FAIL;
	}
	snprintf(leaf, sizeof leaf, "%s:%u", host, (unsigned)port);
	run.leaf = leaf;
	if (a.tls && a.tls_dir == NULL) {
		if (fl_tls_default_dir(tls_dir, sizeof tls_dir, err, sizeof err) != 0) {
			fprintf(stderr, "frontload-driver: --tls-dir: %s\n", err);
			return DRV_EXIT_FAIL;
		}
		a.tls_dir = tls_dir;
	}

	if (fl_corpus_generate(&corpus, a.seed, DRV_CORPUS_BYTES, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-driver: corpus: %s\n", err);
		return DRV_EXIT_FAIL;
	}
	if (fl_reqgen_init(&gen, &rcfg, &corpus, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-driver: %s\n", err);
		fl_corpus_free(&corpus);
		return DRV_EXIT_FAIL;
	}

	memset(&dcfg, 0, sizeof dcfg);
	dcfg.host = host;
	dcfg.port = port;
	dcfg.tls = a.tls;
	dcfg.tls_dir = a.tls_dir;
	dcfg.threads = (unsigned)a.threads;
	dcfg.connections = (unsigned)a.connections;
	unsigned depth = 0;
	drv_depth(&a, &depth);  /* checked by drv_check_args */
	dcfg.depth = depth != 0 ? depth : DRV_AUTO_FIRST_DEPTH;
	dcfg.arrival = arrival;
	dcfg.common_draws = strcmp(a.draws, "common") == 0;
	dcfg.seed = a.seed;
	dcfg.sla_ms = a.sla_ms;
	dcfg.timeout_s = a.timeout_s;
	drv_deadline_ms(&a, &dcfg.deadline_ms);
	dcfg.gen = &gen;
	dcfg.stop = &drv_stop_signal;
	run.auto_cfg = depth == 0 ? &dcfg : NULL;
	eng = fl_driver_new(&dcfg, err, sizeof err);
	if (eng == NULL) {
		fprintf(stderr, "frontload-driver: %s\n", err);
		fl_corpus_free(&corpus);
		return DRV_EXIT_FAIL;
	}
	if (!a.quiet)
		fprintf(stderr, "frontload-driver: %s%s, %" PRIu64 " threads x %" PRIu64
			" connections, depth %s, %s arrivals (%s draws), requests %s, method %s\n",
			leaf, a.tls ? " (TLS)" : "", a.threads, a.connections, a.depth, a.arrival,
			a.draws,
			a.request_size, fl_reqgen_method_name(rcfg.method));

	if (a.control) {
		drv_control_loop(eng, &run, a.quiet);
	} else {
		for (int i = 0; i < nrates && !drv_stop_signal; i++) {
			if (drv_run_step(eng, &run, rates[i], a.warmup_s, a.duration_s, 0, 0,
				a.quiet) != 0) {
				fprintf(stderr, "frontload-driver: step %d could not run\n", i);
				rc = DRV_EXIT_FAIL;
				break;
			}
		}
	}
	fl_driver_free(eng);
	run.interrupted |= drv_stop_signal != 0;
	if (drv_write_outputs(&run) != 0)
		rc = DRV_EXIT_FAIL;
	for (size_t i = 0; i < run.nsteps; i++) {
		fl_driver_result_free(steps[i]);
		free(steps[i]);
	}
	fl_corpus_free(&corpus);
	if (drv_stop_signal == SIGINT)
		return 130;
	if (drv_stop_signal == SIGTERM)
		return 143;
	return rc;
}
