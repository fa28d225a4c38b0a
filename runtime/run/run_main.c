/* run_main.c: the frontload command: subcommand table, and `frontload run` itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "errbuf.h"
#include "paths.h"
#include "run_host.h"
#include "run_measure.h"
#include "run_procs.h"
#include "run_result.h"
#include "run_search.h"

#define PROG "frontload"
#define RUN_EXIT_OK 0
#define RUN_EXIT_FAIL 1
#define RUN_EXIT_USAGE 2
#define RUN_STOP_GRACE_MS 3000   /* SIGTERM, then this long, then SIGKILL */
#define RUN_STEP_SLACK_S 30.0    /* a step may take warm-up + window + drain + this */
#define RUN_STATS_WAIT_S 3.0     /* a leaf answers SIGUSR1 with a stats file this fast */
#define RUN_MAX_ARGS 256

/* The signal that asked frontload to stop (0: none): the only global it writes. */
static volatile sig_atomic_t run_signal;

/* ---- flags ---------------------------------------------------------------------- */

/* What the flags fill: the run's config, and --qps as given (parsed into cfg after). */
struct run_args {
	struct fl_run_config cfg;
	const char *qps;
};

/* One flag of `frontload run`: parsing, defaults, --quick's defaults and --help read this
 * table. Options with no default here get theirs in run_config_defaults. */
#define FL_CLI_OBJ struct run_args
static const struct fl_cli_opt run_opts[] = {
	FL_OPT_REAL("sla-ms", cfg.search.sla_p95_ms, 0.001, 1e9, "MS", "700", "p95 end-to-end "
		"latency bound of a passing step (ms)"),
	FL_OPT_REAL("start-qps", cfg.search.start_qps, 0.001, 1e9, "QPS", "4", "first rate of "
		"the search, per instance (requests/s)"),
	FL_OPT_REAL("max-qps", cfg.search.max_qps, 0.001, 1e9, "QPS", "100000", "highest rate "
		"the search probes, per instance (requests/s)"),
	FL_OPT_REAL("growth", cfg.search.growth, 1.01, 100, "X", "2", "bracket multiplier: the "
		"rate grows by X while steps pass", .alt = "4"),
	FL_OPT_REAL("tolerance", cfg.search.tolerance, 0.1, 1000, "PCT", "5", "bisection stops "
		"when (fail - pass) / pass <= PCT percent", .div = 100, .alt = "10"),
	FL_OPT_UINT("max-steps", cfg.search.max_steps, 1, FL_SEARCH_MAX_PROBES, "N", "12",
		"search steps in all (bracket, bisect, re-measure); the final window is extra",
		.alt = "9"),
	FL_OPT_REAL("warmup-seconds", cfg.warmup_s, 0, 3600, "S", "5", "warm-up before each "
		"step's measured window, not recorded (s)", .alt = "1"),
	FL_OPT_REAL("step-seconds", cfg.step_s, 0.5, 86400, "S", "15", "measured seconds of "
		"each search step", .alt = "4"),
	FL_OPT_REAL("final-seconds", cfg.final_s, 1, 86400, "S", "300", "measured seconds of "
		"the steady final window at the chosen rate", .alt = "15"),
	FL_OPT_STR("qps", qps, "R[,R...]", NULL, "fixed mode: no search; run each rate (per "
		"instance) for --duration and report each (is_fixed_qps = true)"),
	FL_OPT_REAL("duration", cfg.duration_s, 0.5, 86400, "S", "60", "fixed mode: measured "
		"seconds per rate", .alt = "4"),
	FL_OPT_FLAG("quick", cfg.quick, "the whole job in about a minute, for smoke tests and "
		"CI: 1 s warm-up + 4 s steps, growth 4, tolerance 10%, 9 steps, 15 s final window "
		"(flags given explicitly still win)"),
	FL_OPT_UINT("instances", cfg.instances, 1, FL_RUN_MAX_INSTANCES, "N", "1", "sets of "
		"mock + leaf + driver, each pinned to its own CPU range (whole physical cores "
		"first); rates are per instance, QPS is summed, p95 is the worst instance"),
	FL_OPT_FLAG("pin", cfg.pin, "also pin the mock, leaf and driver of an instance to "
		"disjoint CPUs of its range (leaf first; shared when the range has one CPU)"),
	FL_OPT_STR("leaf", cfg.leaf, "HOST:PORT[,...]", NULL, "use running leaves (one, or one "
		"per instance) instead of starting mock and leaf"),
	FL_OPT_STR("mock", cfg.mock, "HOST:PORT[,...]", NULL, "use running mocks (one shared, "
		"or one per instance) instead of starting them"),
	FL_OPT_STR("out", cfg.out, "DIR", NULL, "run directory (default: results/<run-id> "
		"under the current directory)"),
	FL_OPT_UINT("seed", cfg.seed, 0, 18000000000000000000ull, "S", "1", "seed of the leaf "
		"(plan, model, fanout) and the driver (schedule, requests; instance i uses S + "
		"i)"),
	FL_OPT_REAL("rpc-fanout-scale", cfg.rpc_fanout_scale, 1e-9, 1e6, "X", NULL, "leaf "
		"outbound calls per request = rpc_dist.json's per-session calls x X (default: "
		"the leaf's, 0.01)"),
	FL_OPT_UINT("extractors-per-story", cfg.extractors_per_story, 0, 100000000, "N", NULL,
		"generated extractor calls per story in the leaf (default: the leaf's, 300)"),
	FL_OPT_UINT("active-copies", cfg.active_copies, 0, UINT32_MAX, "N", NULL, "footprint "
		"knob: copies of each extractor variant in the leaf's plan (0 = all; default: the "
		"leaf's)"),
	FL_OPT_FLAG("tls", cfg.tls, "TLS between driver and leaf (leaf to mock is always "
		"TLS)"),
	FL_OPT_FLAG("trace", cfg.trace, "write trace.csv: per-second sent, completed, in "
		"flight and p95 of every step"),
	FL_OPT_STR("leaf-args", cfg.leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags, "
		"split on spaces (they come last, so they win)"),
	FL_OPT_STR("mock-args", cfg.mock_args, "\"ARGS\"", NULL, "more frontload-mock flags, "
		"split on spaces"),
	FL_OPT_STR("driver-args", cfg.driver_args, "\"ARGS\"", NULL, "more frontload-driver "
		"flags, split on spaces (e.g. \"--connections 8\")"),
	FL_OPT_REAL("ready-timeout", cfg.ready_timeout_s, 1, 86400, "S", "120", "how long the "
		"mock and the leaf may take to write their port files (s)"),
};
#undef FL_CLI_OBJ
static const struct fl_cli run_cli = {
	run_opts, sizeof run_opts / sizeof run_opts[0], "quick"
};

static void run_usage(FILE *f)
{
	fputs(
"usage: frontload run [options]\n"
"\n"
"Starts frontload-mock, frontload-leaf and frontload-driver (found beside this program,\n"
"else in PATH), finds the highest request rate whose p95 end-to-end latency stays within\n"
"the SLA, holds it for a steady final window and writes the run directory.\n"
"\n"
"Search: one driver per instance keeps its connections open across steps. From\n"
"--start-qps the rate grows by --growth while a step passes, then bisects (geometric\n"
"midpoints) between the highest pass and the lowest fail until they are within\n"
"--tolerance, then re-measures the best pass once (a failed re-measure sends the search\n"
"back down). A step passes when p95 <= SLA, achieved >= 95% of the rate the open-loop\n"
"schedule offered, and errors (error replies, timeouts, OVERLOADED) < 1% of requests\n"
"(a request unanswered max(3 s, 4 x SLA) after its send time is a timeout). After a\n"
"failed step frontload waits until the leaf has nothing in flight before the next one.\n"
"The final window runs at the chosen rate. Default timing: 5 + 15 s steps, at most 12,\n"
"and a 300 s final window: under 10 minutes. Rates are requests/s per instance.\n"
"\n"
"options (defaults in brackets):\n", f);
	fl_cli_help(f, &run_cli);
	fputs(
"\n"
"Run directory (results/<UTC time>-<random>/ or --out):\n"
"  result.json   rewritten after every step (temp file + rename):\n"
"    status            running | complete | interrupted | failed, with status_reason\n"
"    converged         the knee was bracketed within the tolerance and the chosen\n"
"                      rate passed its re-measure; converged_reason says why or why not\n"
"                      (\"even START qps misses SLA\", \"SLA never reached below max\",\n"
"                      step budget); null in fixed mode\n"
"    sla_bound_qps     the chosen rate, summed over instances\n"
"    final_requested_qps, final_achieved_qps (replies/s in the final window),\n"
"    final_offered_qps (what the Poisson schedule offered), final_latency_msec (= p95),\n"
"    p50_ms p90_ms p95_ms p99_ms p99_9_ms max_ms mean_ms   final window, worst instance\n"
"    final_pass, final_why   the final window judged like a search step\n"
"                      (fixed mode: the final_* fields describe the last rate)\n"
"    host_cpu_util_pct  busy share of all CPUs over the final window (/proc/stat)\n"
"    errors            final window: total (error replies + timeouts + OVERLOADED),\n"
"                      overloaded, timeouts, requests\n"
"    is_fixed_qps, sla_p95_ms (= target_latency_msec), instances[] (per instance: CPUs,\n"
"    processes, final numbers, leaf_stats: per-stage CPU ns and cpu_share over the final\n"
"    window and the whole run), steps[] (every probe, with per-instance detail),\n"
"    search, config (every knob), build (config.json/manifest.json), machines[] (CPU\n"
"    model and counts, kernel)\n"
"  steps.csv     one row per step: step, phase (bracket/bisect/remeasure/final/fixed),\n"
"                requested_qps, achieved_qps, p50_ms, p95_ms, p99_ms, errors, overloaded,\n"
"                pass, offered_qps, timeouts, host_cpu_pct, complete, why\n"
"  trace.csv     with --trace (trace-<i>.csv per instance when several)\n"
"  leaf<i>.log, mock<i>.log, driver<i>.log; leaf<i>-stats.json, mock<i>-stats.json;\n"
"  driver<i>.jsonl (every step result line) and driver<i>.json\n"
"\n"
"Progress goes to stderr: one line updated in place on a terminal, plain lines otherwise.\n"
"Ctrl-C or SIGTERM stops the current step, stops the children (SIGTERM, 3 s, SIGKILL)\n"
"and writes the result with status interrupted.\n"
"\n"
"exit status: 0 complete (check converged); 1 failed (a process died or would not\n"
"start, a driver misbehaved, the run directory cannot be written); 2 bad flags;\n"
"130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP.\n", f);
}

/* The defaults the table does not give. */
static void run_config_defaults(struct fl_run_config *c)
{
	memset(c, 0, sizeof *c);
	fl_search_config_default(&c->search);
	c->rpc_fanout_scale = -1;
	c->extractors_per_story = -1;
	c->active_copies = -1;
	c->driver_timeout_s = 10;
}

/* Flags into c: --name VALUE or --name=VALUE; --quick fills what was not given. Returns
 * 0, 1 for --help, -1 (err) on a bad flag. */
static int run_parse_args(struct fl_run_config *c, int argc, char **argv, char *err,
	size_t errlen)
{
	struct run_args a = { .qps = NULL };

	run_config_defaults(&a.cfg);
	int rc = fl_cli_parse(&run_cli, argc, argv, &a, err, errlen);
	*c = a.cfg;
	if (rc != 0)
		return rc;
	if (a.qps) {
		int n = fl_cli_rates(a.qps, c->fixed_qps, FL_RUN_MAX_FIXED);
		if (n < 0) {
			fl_errf(err, errlen, "--qps: '%s' is not a list of rates > 0 (at most %u)",
				a.qps, FL_RUN_MAX_FIXED);
			return -1;
		}
		c->nfixed = (unsigned)n;
	}
	if (fl_search_config_check(&c->search, err, errlen) != 0)
		return -1;
	/* Well past the SLA, so a timeout is a failed request, yet short enough that an
	 * overloaded step does not drag on. */
	c->driver_timeout_s = fmax(3.0, 4 * c->search.sla_p95_ms / 1000);
	return 0;
}

/* ---- small helpers --------------------------------------------------------------- */

static void run_on_signal(int sig)
{
	run_signal = sig;
}

static void run_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = run_on_signal;  /* no SA_RESTART: poll and sleeps return early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void run_set_status(struct fl_run *r, enum fl_run_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void run_set_status(struct fl_run *r, enum fl_run_status st, const char *fmt, ...)
{
	va_list ap;
	if (r->status != FL_RUN_RUNNING)
		return;  /* the first cause wins */
	r->status = st;
	va_start(ap, fmt);
	vsnprintf(r->status_reason, sizeof r->status_reason, fmt, ap);
	va_end(ap);
}

/* Progress to stderr: on a terminal one line redrawn in place (permanent lines scroll
 * above it); otherwise only permanent lines. */
static void run_say(struct fl_run *r, int permanent, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void run_say(struct fl_run *r, int permanent, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (r->tty) {
		fprintf(stderr, "\r\033[K%s%s", buf, permanent ? "\n" : "");
		r->progress_open = !permanent;
	} else if (permanent) {
		fprintf(stderr, "%s\n", buf);
	}
	fflush(stderr);
}

static void run_fmt_secs(double s, char *out, size_t len)
{
	long t = s > 0 ? lround(s) : 0;
	if (t >= 60)
		snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, len, "%lds", t);
}

static int run_mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* path of program name: beside this executable, else in PATH. Returns 0 or -1. */
static int run_find_program(const struct fl_run *r, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", r->exe_dir, name);
	if (access(out, X_OK) == 0)
		return 0;
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n > 0 && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	snprintf(out, len, "%s/%s", r->exe_dir, name);
	return -1;
}

/* An argv under construction; every string owned. */
struct run_argv {
	char *v[RUN_MAX_ARGS + 1];
	int n;
};

static void argv_add(struct run_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void argv_add(struct run_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	if (a->n >= RUN_MAX_ARGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* Append the words of text (split on spaces). */
static void argv_split(struct run_argv *a, const char *text)
{
	while (text && *text) {
		text += strspn(text, " \t");
		size_t n = strcspn(text, " \t");
		if (n > 0)
			argv_add(a, "%.*s", (int)n, text);
		text += n;
	}
}

static void argv_free(struct run_argv *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

/* Item i of a comma list (or the only item when the list has one). 0 or -1. */
static int run_list_item(const char *list, unsigned i, unsigned n, char *out, size_t len,
	unsigned *count)
{
	unsigned k = 0;
	const char *p = list;
	*count = 1;
	for (const char *q = list; *q; q++)
		*count += *q == ',';
	if (*count != 1 && *count != n)
		return -1;
	if (*count == 1)
		i = 0;
	for (; k < i; k++)
		p = strchr(p, ',') + 1;
	size_t l = strcspn(p, ",");
	if (l == 0 || l >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)l, p);
	return 0;
}

/* ---- setup ----------------------------------------------------------------------- */

/* run id, directory, host, placement. Returns 0 or -1 (message printed). */
static int run_setup(struct fl_run *r)
{
	char err[512];
	struct fl_cpus allowed, parts[FL_RUN_MAX_INSTANCES];
	cpu_set_t mask;
	unsigned char rnd[3] = { 0 };

	r->t0 = fl_run_now();
	r->started_wall = time(NULL);
	r->final_step = -1;
	r->final_host_cpu_pct = -1;
	r->tty = isatty(2);
	if (fl_exe_dir(r->exe_dir, sizeof r->exe_dir) != 0) {
		fprintf(stderr, PROG ": cannot find this program's directory (/proc/self/exe)\n");
		return -1;
	}
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, rnd, sizeof rnd) != (ssize_t)sizeof rnd) {
		unsigned x = (unsigned)getpid() ^ (unsigned)r->started_wall;
		rnd[0] = (unsigned char)x;
		rnd[1] = (unsigned char)(x >> 8);
		rnd[2] = (unsigned char)(x >> 16);
	}
	if (fd >= 0)
		close(fd);
	struct tm tm;
	gmtime_r(&r->started_wall, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(r->run_id, sizeof r->run_id, "%s-%02x%02x%02x", stamp, rnd[0], rnd[1], rnd[2]);
	if (r->cfg.out)
		snprintf(r->dir, sizeof r->dir, "%s", r->cfg.out);
	else
		snprintf(r->dir, sizeof r->dir, "results/%s", r->run_id);
	if (run_mkdirs(r->dir) != 0) {
		fprintf(stderr, PROG ": cannot create the run directory %s: %s\n", r->dir,
			strerror(errno));
		return -1;
	}

	/* CPUs this process may use: the instances share them out. */
	allowed.n = 0;
	if (sched_getaffinity(0, sizeof mask, &mask) == 0)
		for (unsigned c = 0; c < FL_HOST_MAX_CPUS && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &mask))
				allowed.cpu[allowed.n++] = (uint16_t)c;
	if (fl_host_topo_read("", allowed.n ? &allowed : NULL, &r->topo, err, sizeof err) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	fl_host_info_read("", &r->topo, &r->host);
	r->build = fl_result_build_summary(r->exe_dir);

	r->ninst = r->cfg.instances;
	r->inst = calloc(r->ninst, sizeof *r->inst);
	if (r->inst == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	int place = r->ninst > 1 || r->cfg.pin;
	if (place && fl_host_partition(&r->topo, r->ninst, parts, err, sizeof err) != 0) {
		fprintf(stderr, PROG ": --instances %u: %s\n", r->ninst, err);
		return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		char name[32];
		in->index = i;
		snprintf(name, sizeof name, "mock%u", i);
		fl_proc_init(&in->mock, name);
		snprintf(name, sizeof name, "leaf%u", i);
		fl_proc_init(&in->leaf, name);
		snprintf(name, sizeof name, "driver%u", i);
		fl_proc_init(&in->driver, name);
		if (place) {
			in->placed = 1;
			in->cpus = parts[i];
			if (r->cfg.pin) {
				fl_host_roles(&r->topo, &in->cpus, &in->leaf_cpus, &in->mock_cpus,
					&in->driver_cpus);
			} else {
				in->leaf_cpus = in->mock_cpus = in->driver_cpus = in->cpus;
			}
		}
	}
	return 0;
}

/* ---- processes ------------------------------------------------------------------- */

/* Every process slot of every instance, drivers first. */
static size_t run_all_procs(struct fl_run *r, struct fl_proc **out, int drivers,
	int servers)
{
	size_t n = 0;
	for (unsigned i = 0; i < r->ninst; i++)
		if (drivers)
			out[n++] = &r->inst[i].driver;
	for (unsigned i = 0; i < r->ninst; i++)
		if (servers) {
			out[n++] = &r->inst[i].leaf;
			out[n++] = &r->inst[i].mock;
		}
	return n;
}

static int run_spawn(struct fl_run *r, struct fl_proc *p, struct run_argv *a,
	const struct fl_cpus *cpus, int pipes)
{
	char log[4200], err[1024];
	snprintf(log, sizeof log, "%s/%s.log", r->dir, p->name);
	if (fl_proc_start(p, a->v, log, cpus, pipes, err, sizeof err) != 0) {
		run_set_status(r, FL_RUN_FAILED, "%s", err);
		return -1;
	}
	char c[256] = "";
	if (cpus && cpus->n)
		fl_cpus_format(cpus, c, sizeof c);
	run_say(r, 1, PROG ": started %s (pid %d%s%s), log %s", p->name, (int)p->pid,
		c[0] ? ", CPUs " : "", c, log);
	return 0;
}

/* Wait for p's port file; addr = 127.0.0.1:port. 0, -1 failed, -2 interrupted. */
static int run_wait_ready(struct fl_run *r, struct fl_proc *p, const char *port_file,
	char *addr, size_t addrlen)
{
	char err[2048];
	unsigned port;
	int rc = fl_port_file_wait(port_file, p, r->cfg.ready_timeout_s, &run_signal, &port,
		err, sizeof err);
	if (rc == -1)
		run_set_status(r, FL_RUN_FAILED, "%s", err);
	if (rc == 0)
		snprintf(addr, addrlen, "127.0.0.1:%u", port);
	return rc;
}

/* Start (or adopt) every instance's mock, leaf and driver. 0, -1 failed, -2 interrupted. */
static int run_start(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	char mock_bin[4096], leaf_bin[4096], drv_bin[4096], port_file[4200];
	unsigned count;
	int rc;

	if (run_find_program(r, "frontload-driver", drv_bin, sizeof drv_bin) != 0 ||
	    (!c->leaf && run_find_program(r, "frontload-leaf", leaf_bin, sizeof leaf_bin) != 0) ||
	    (!c->leaf && !c->mock &&
	     run_find_program(r, "frontload-mock", mock_bin, sizeof mock_bin) != 0)) {
		run_set_status(r, FL_RUN_FAILED, "cannot find frontload-driver, frontload-leaf or "
			"frontload-mock beside %s/frontload or in PATH (build them: ninja "
			"frontload-driver frontload-leaf frontload-mock)", r->exe_dir);
		return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		in->own_leaf = c->leaf == NULL;
		in->own_mock = in->own_leaf && c->mock == NULL;
		if (c->leaf && (run_list_item(c->leaf, i, r->ninst, in->leaf_addr,
		    sizeof in->leaf_addr, &count) != 0 || (count == 1 && r->ninst > 1))) {
			run_set_status(r, FL_RUN_FAILED, "--leaf: give one HOST:PORT per instance "
				"(%u)", r->ninst);
			return -1;
		}
		if (in->own_leaf && c->mock && run_list_item(c->mock, i, r->ninst, in->mock_addr,
		    sizeof in->mock_addr, &count) != 0) {
			run_set_status(r, FL_RUN_FAILED, "--mock: give one HOST:PORT, or one per "
				"instance (%u)", r->ninst);
			return -1;
		}
		snprintf(in->leaf_stats_path, sizeof in->leaf_stats_path, "%s/leaf%u-stats.json",
			r->dir, i);
		snprintf(in->mock_stats_path, sizeof in->mock_stats_path, "%s/mock%u-stats.json",
			r->dir, i);
		snprintf(in->driver_json_path, sizeof in->driver_json_path, "%s/driver%u.json",
			r->dir, i);
	}

	/* Mocks first (all at once), then leaves, then drivers. */
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct run_argv a = { 0 };
		if (!in->own_mock)
			continue;
		snprintf(port_file, sizeof port_file, "%s/mock%u.port", r->dir, i);
		unlink(port_file);
		argv_add(&a, "%s", mock_bin);
		argv_add(&a, "--port");
		argv_add(&a, "0");
		argv_add(&a, "--port-file");
		argv_add(&a, "%s", port_file);
		argv_add(&a, "--stats-file");
		argv_add(&a, "%s", in->mock_stats_path);
		if (in->mock_cpus.n) {
			argv_add(&a, "--threads");
			argv_add(&a, "%u", in->mock_cpus.n / 2 ? in->mock_cpus.n / 2 : 1);
		}
		argv_split(&a, c->mock_args);
		rc = run_spawn(r, &in->mock, &a, &in->mock_cpus, 0);
		argv_free(&a);
		if (rc != 0)
			return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (!in->own_mock)
			continue;
		snprintf(port_file, sizeof port_file, "%s/mock%u.port", r->dir, i);
		if ((rc = run_wait_ready(r, &in->mock, port_file, in->mock_addr,
		    sizeof in->mock_addr)) != 0)
			return rc;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct run_argv a = { 0 };
		if (!in->own_leaf)
			continue;
		snprintf(port_file, sizeof port_file, "%s/leaf%u.port", r->dir, i);
		unlink(port_file);
		argv_add(&a, "%s", leaf_bin);
		argv_add(&a, "--port");
		argv_add(&a, "0");
		argv_add(&a, "--port-file");
		argv_add(&a, "%s", port_file);
		argv_add(&a, "--mock");
		argv_add(&a, "%s", in->mock_addr);
		argv_add(&a, "--stats-file");
		argv_add(&a, "%s", in->leaf_stats_path);
		argv_add(&a, "--seed");
		argv_add(&a, "%llu", (unsigned long long)c->seed);
		if (c->rpc_fanout_scale >= 0) {
			argv_add(&a, "--rpc-fanout-scale");
			argv_add(&a, "%.17g", c->rpc_fanout_scale);
		}
		if (c->extractors_per_story >= 0) {
			argv_add(&a, "--extractors-per-story");
			argv_add(&a, "%lld", (long long)c->extractors_per_story);
		}
		if (c->active_copies >= 0) {
			argv_add(&a, "--active-copies");
			argv_add(&a, "%lld", (long long)c->active_copies);
		}
		if (c->tls)
			argv_add(&a, "--tls");
		if (in->leaf_cpus.n) {
			/* Pool sizes from the CPUs it may use, not the whole host's. */
			unsigned k = in->leaf_cpus.n, q = k / 4 ? k / 4 : 1;
			argv_add(&a, "--ranker-threads");
			argv_add(&a, "%u", k);
			argv_add(&a, "--io-threads");
			argv_add(&a, "%u", q);
			argv_add(&a, "--fanout-threads");
			argv_add(&a, "%u", q);
		}
		argv_split(&a, c->leaf_args);
		rc = run_spawn(r, &in->leaf, &a, &in->leaf_cpus, 0);
		argv_free(&a);
		if (rc != 0)
			return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (!in->own_leaf)
			continue;
		snprintf(port_file, sizeof port_file, "%s/leaf%u.port", r->dir, i);
		if ((rc = run_wait_ready(r, &in->leaf, port_file, in->leaf_addr,
		    sizeof in->leaf_addr)) != 0)
			return rc;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct run_argv a = { 0 };
		char path[4200];
		snprintf(path, sizeof path, "%s/driver%u.jsonl", r->dir, i);
		in->jsonl = fopen(path, "we");
		argv_add(&a, "%s", drv_bin);
		argv_add(&a, "--leaf");
		argv_add(&a, "%s", in->leaf_addr);
		argv_add(&a, "--control");
		argv_add(&a, "--seed");
		argv_add(&a, "%llu", (unsigned long long)(c->seed + i));
		argv_add(&a, "--sla-ms");
		argv_add(&a, "%.17g", c->search.sla_p95_ms);
		argv_add(&a, "--timeout-s");
		argv_add(&a, "%.17g", c->driver_timeout_s);
		argv_add(&a, "--json");
		argv_add(&a, "%s", in->driver_json_path);
		if (c->tls)
			argv_add(&a, "--tls");
		if (c->trace) {
			argv_add(&a, "--trace-csv");
			if (r->ninst > 1)
				argv_add(&a, "%s/trace-%u.csv", r->dir, i);
			else
				argv_add(&a, "%s/trace.csv", r->dir);
		}
		argv_split(&a, c->driver_args);
		rc = run_spawn(r, &in->driver, &a, &in->driver_cpus, 1);
		argv_free(&a);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* A started mock or leaf that is gone: fail naming it. Returns 1 when one died. */
static int run_check_servers(struct fl_run *r)
{
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct fl_proc *ps[2] = { &in->leaf, &in->mock };
		int own[2] = { in->own_leaf, in->own_mock };
		for (int k = 0; k < 2; k++) {
			if (!own[k] || fl_proc_running(ps[k]))
				continue;
			char how[256], tail[1536];
			fl_proc_describe(ps[k], how, sizeof how);
			fl_log_tail(ps[k]->log_path, 8, tail, sizeof tail);
			run_set_status(r, FL_RUN_FAILED, "%s (pid %d) %s during the run; %s ends:\n%s",
				ps[k]->name, (int)ps[k]->pid, how, ps[k]->log_path,
				tail[0] ? tail : "(empty)");
			return 1;
		}
	}
	return 0;
}

/* The driver of in is gone or broke the protocol: fail naming it. */
static void run_driver_failed(struct fl_run *r, struct fl_run_instance *in, const char *what)
{
	char how[256], tail[1536];
	for (int waited = 0; waited < 1000 && fl_proc_running(&in->driver); waited += 20)
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	fl_proc_describe(&in->driver, how, sizeof how);
	fl_log_tail(in->driver.log_path, 8, tail, sizeof tail);
	run_set_status(r, FL_RUN_FAILED, "%s (pid %d) %s (%s); %s ends:\n%s", in->driver.name,
		(int)in->driver.pid, what, how, in->driver.log_path, tail[0] ? tail : "(empty)");
}

/* A fresh stats snapshot of in's leaf: SIGUSR1, then wait for the file to be replaced
 * (it is written to a temp file and renamed, so a new inode means a new snapshot). NULL
 * when the leaf is not ours, is gone, or does not answer within RUN_STATS_WAIT_S. */
static json_t *run_leaf_snapshot(struct fl_run_instance *in)
{
	struct stat st;
	if (!in->own_leaf || !fl_proc_running(&in->leaf))
		return NULL;
	ino_t old = stat(in->leaf_stats_path, &st) == 0 ? st.st_ino : 0;
	kill(in->leaf.pid, SIGUSR1);
	for (double t = fl_run_now(), end = t + RUN_STATS_WAIT_S; t < end; t = fl_run_now()) {
		if (stat(in->leaf_stats_path, &st) == 0 && st.st_ino != old) {
			json_t *j = fl_result_load_json(in->leaf_stats_path);
			if (j)
				return j;
		}
		if (!fl_proc_running(&in->leaf))
			break;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	return NULL;
}

/* Take the leaves' snapshots into their pre (post = 0) or post slots. */
static void run_leaf_snapshots(struct fl_run *r, int post)
{
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		json_t **slot = post ? &in->leaf_stats_post : &in->leaf_stats_pre;
		json_decref(*slot);
		*slot = run_leaf_snapshot(in);
	}
}

/* After an overloaded step the leaves may still hold requests the driver gave up on:
 * wait (up to max_s) until every leaf we started has none in flight, so the next step
 * starts from an idle service. Remote leaves get a short pause instead. */
static void run_settle(struct fl_run *r, double max_s)
{
	int remote = 0;
	for (unsigned i = 0; i < r->ninst; i++)
		remote |= !r->inst[i].own_leaf;
	if (remote)
		max_s = fmin(max_s, 2);  /* no way to look inside: a short fixed pause */
	for (double end = fl_run_now() + max_s; !run_signal && fl_run_now() < end;) {
		int busy = remote;
		for (unsigned i = 0; i < r->ninst && !busy; i++) {
			json_t *j = run_leaf_snapshot(&r->inst[i]);
			json_t *inflight = json_object_get(json_object_get(j, "overheads"),
				"inflight");
			busy = json_is_integer(inflight) && json_integer_value(inflight) > 0;
			json_decref(j);
		}
		if (!busy)
			return;
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
}

/* ---- steps ----------------------------------------------------------------------- */

static void run_write(struct fl_run *r)
{
	char err[4200];
	if (fl_result_write(r, err, sizeof err) != 0) {
		run_say(r, 1, PROG ": %s", err);
		run_set_status(r, FL_RUN_FAILED, "%s", err);
	}
}

/* Time still to come, for the progress line: the rest of this step, then the steps the
 * search still expects (or the remaining fixed rates), then the final window. */
static double run_eta(const struct fl_run *r, enum fl_search_phase phase, double step_left)
{
	const struct fl_run_config *c = &r->cfg;
	double eta = step_left > 0 ? step_left : 0;
	if (phase == FL_PHASE_FIXED) {
		size_t done = 0;
		for (size_t i = 0; i < r->nsteps; i++)
			done += r->steps[i].phase == FL_PHASE_FIXED;
		if (done + 1 < c->nfixed)
			eta += (double)(c->nfixed - done - 1) * (c->warmup_s + c->duration_s + 0.5);
	} else if (phase != FL_PHASE_FINAL) {
		unsigned more = fl_search_remaining(&r->search);
		if (more > 0)
			eta += (double)(more - 1) * (c->warmup_s + c->step_s + 0.5);
		eta += c->warmup_s + c->final_s;
	}
	return eta;
}

/* Take the complete lines of in's driver output. Returns 1 with o filled when a step
 * result arrived, 0 when none yet, -1 on failure (status set), -2 at end of output. */
static int run_read_driver(struct fl_run *r, struct fl_run_instance *in,
	struct fl_run_obs *o)
{
	char buf[65536], err[1024];
	for (;;) {
		char *nl = in->line ? memchr(in->line, '\n', in->line_len) : NULL;
		if (nl) {
			size_t len = (size_t)(nl - in->line);
			*nl = 0;
			if (in->jsonl) {
				fprintf(in->jsonl, "%s\n", in->line);
				fflush(in->jsonl);
			}
			int rc = fl_result_parse_obs(in->line, o, err, sizeof err);
			memmove(in->line, nl + 1, in->line_len - len - 1);
			in->line_len -= len + 1;
			if (rc == 0)
				return 1;
			char what[1200];
			snprintf(what, sizeof what, "%s the step: %s", rc == 1 ? "refused" :
				"answered something other than a step result to", err);
			run_driver_failed(r, in, what);
			return -1;
		}
		ssize_t n = read(in->driver.from_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 0;  /* EAGAIN: nothing more now */
		if (n == 0)
			return -2;
		if (in->line_len + (size_t)n + 1 > in->line_cap) {
			size_t cap = (in->line_len + (size_t)n + 1) * 2;
			char *p = realloc(in->line, cap);
			if (p == NULL) {
				run_set_status(r, FL_RUN_FAILED, "out of memory reading %s",
					in->driver.name);
				return -1;
			}
			in->line = p;
			in->line_cap = cap;
		}
		memcpy(in->line + in->line_len, buf, (size_t)n);
		in->line_len += (size_t)n;
	}
}

/* Run one step at qps per instance. snap: take leaf stats around the measured window.
 * Returns 0 (step kept), -1 failed, -2 interrupted (the partial step is kept). */
static int run_step(struct fl_run *r, enum fl_search_phase phase, double qps, double warmup,
	double duration, int snap)
{
	struct fl_run_step st;
	char cmd[160], rate[32], eta[32];
	int got[FL_RUN_MAX_INSTANCES] = { 0 }, ngot = 0, rc = 0;
	struct fl_cpu_times c0, c1;
	int have_c0 = 0, have_c1 = 0;

	if (run_signal)
		return -2;  /* asked to stop between steps */
	memset(&st, 0, sizeof st);
	st.number = (unsigned)r->nsteps + 1;
	st.phase = phase;
	st.qps = qps;
	st.warmup_s = warmup;
	st.duration_s = duration;
	st.ninst = r->ninst;
	st.host_cpu_pct = -1;
	st.inst = calloc(r->ninst, sizeof *st.inst);
	if (st.inst == NULL) {
		run_set_status(r, FL_RUN_FAILED, "out of memory");
		return -1;
	}
	double t_start = fl_run_now();
	st.started_s = t_start - r->t0;
	double win_start = t_start + warmup, win_end = win_start + duration;
	double deadline = win_end + r->cfg.driver_timeout_s + RUN_STEP_SLACK_S;
	double interrupt_at = 0;

	snprintf(rate, sizeof rate, "%.1f qps%s", qps * r->ninst, r->ninst > 1 ? " total" : "");
	run_fmt_secs(run_eta(r, phase, warmup + duration), eta, sizeof eta);
	run_say(r, !r->tty, PROG ": step %u %s %s: %.0f s warm-up + %.0f s, ETA %s", st.number,
		fl_search_phase_name(phase), rate, warmup, duration, eta);

	snprintf(cmd, sizeof cmd, "step %.6f %.6f %.6f\n", qps, warmup, duration);
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (write(in->driver.to_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
			char what[256];
			snprintf(what, sizeof what, "could not be sent the step: %s", strerror(errno));
			run_driver_failed(r, in, what);
			rc = -1;
			goto out;
		}
	}

	while (ngot < (int)r->ninst) {
		struct pollfd pfd[FL_RUN_MAX_INSTANCES];
		unsigned map[FL_RUN_MAX_INSTANCES], np = 0;
		for (unsigned i = 0; i < r->ninst; i++)
			if (!got[i]) {
				pfd[np] = (struct pollfd){ r->inst[i].driver.from_fd, POLLIN, 0 };
				map[np++] = i;
			}
		double now = fl_run_now();
		/* Wake for the window's edges: /proc/stat and leaf stats are sampled there. */
		double next = now + 0.25;
		if (!have_c0 && win_start < next)
			next = win_start;
		if (!have_c1 && win_end < next)
			next = win_end;
		int wait_ms = next > now ? (int)((next - now) * 1000) + 1 : 0;
		poll(pfd, np, wait_ms);
		now = fl_run_now();

		if (!have_c0 && now >= win_start && !interrupt_at) {
			have_c0 = fl_host_cpu_times_read("/proc/stat", &c0) == 0;
			if (snap)
				run_leaf_snapshots(r, 0);
		}
		if (!have_c1 && have_c0 && now >= win_end && !interrupt_at) {
			have_c1 = fl_host_cpu_times_read("/proc/stat", &c1) == 0;
			if (snap)
				run_leaf_snapshots(r, 1);
		}
		for (unsigned k = 0; k < np; k++) {
			unsigned i = map[k];
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int x = run_read_driver(r, &r->inst[i], &st.inst[i]);
			if (x == 1) {
				got[i] = 1;
				ngot++;
			} else if (x == -1) {
				rc = -1;
				goto out;
			} else if (x == -2) {
				if (interrupt_at) {
					got[i] = 1;  /* stopped by us before it could report */
					ngot++;
					continue;
				}
				run_driver_failed(r, &r->inst[i], "closed its output mid-step");
				rc = -1;
				goto out;
			}
		}
		if (run_signal && !interrupt_at) {
			/* The drivers end the step early and report what they measured. */
			interrupt_at = now;
			for (unsigned i = 0; i < r->ninst; i++)
				if (fl_proc_running(&r->inst[i].driver))
					kill(r->inst[i].driver.pid, SIGTERM);
		}
		if (interrupt_at && now - interrupt_at > RUN_STOP_GRACE_MS / 1000.0)
			break;
		if (!interrupt_at && run_check_servers(r)) {
			rc = -1;
			goto out;
		}
		if (now > deadline) {
			for (unsigned i = 0; i < r->ninst; i++)
				if (!got[i]) {
					char what[128];
					snprintf(what, sizeof what, "gave no result within %.0f s of the "
						"step's start", deadline - t_start);
					run_driver_failed(r, &r->inst[i], what);
					break;
				}
			rc = -1;
			goto out;
		}
		if (r->tty && now - r->progress_at >= 1) {
			double left = win_end - now;
			r->progress_at = now;
			char last[64] = "";
			if (r->nsteps > 0)
				snprintf(last, sizeof last, ", last p95 %.0f ms (%s)",
					r->steps[r->nsteps - 1].worst.p95,
					r->steps[r->nsteps - 1].pass ? "pass" : "fail");
			run_fmt_secs(run_eta(r, phase, left), eta, sizeof eta);
			run_say(r, 0, PROG ": step %u %s %s: %s, %d/%u reported%s, ETA %s",
				st.number, fl_search_phase_name(phase), rate, now < win_start ?
				"warming up" : now < win_end ? "measuring" : "draining", ngot, r->ninst,
				last, eta);
		}
	}
	/* The driver may report a little before our clock reaches the window's end (its
	 * last request went out earlier): close the window now. */
	if (have_c0 && !have_c1 && !interrupt_at) {
		have_c1 = fl_host_cpu_times_read("/proc/stat", &c1) == 0;
		if (snap)
			run_leaf_snapshots(r, 1);
	}
	st.ended_s = fl_run_now() - r->t0;
	if (have_c0 && have_c1)
		st.host_cpu_pct = fl_host_cpu_util_pct(&c0, &c1);
	fl_result_step_aggregate(&st);
	if (interrupt_at) {
		st.complete = 0;
		st.pass = 0;
		snprintf(st.why, sizeof st.why, "interrupted by signal %d", (int)run_signal);
		rc = -2;
	} else if (phase == FL_PHASE_BRACKET || phase == FL_PHASE_BISECT ||
		   phase == FL_PHASE_REMEASURE) {
		st.pass = fl_search_record(&r->search, &st.sum, st.why, sizeof st.why) == 1;
	} else {
		st.pass = fl_search_judge(&r->cfg.search, &st.sum, st.why, sizeof st.why);
	}
	/* Keep the step. */
	if (r->nsteps == r->steps_cap) {
		size_t cap = r->steps_cap ? r->steps_cap * 2 : 16;
		struct fl_run_step *p = realloc(r->steps, cap * sizeof *p);
		if (p == NULL) {
			run_set_status(r, FL_RUN_FAILED, "out of memory");
			rc = -1;
			goto out;
		}
		r->steps = p;
		r->steps_cap = cap;
	}
	r->steps[r->nsteps++] = st;
	st.inst = NULL;
	const struct fl_run_step *s = &r->steps[r->nsteps - 1];
	char cpu[16] = "?";
	if (s->host_cpu_pct >= 0)
		snprintf(cpu, sizeof cpu, "%.0f%%", s->host_cpu_pct);
	run_say(r, 1, PROG ": step %u %s %s: achieved %.1f, p95 %.1f ms, p99 %.1f ms, "
		"errors %llu, host cpu %s: %s%s%s", s->number, fl_search_phase_name(phase), rate,
		s->sum.achieved_qps, s->worst.p95, s->worst.p99,
		(unsigned long long)s->sum.errors, cpu,
		rc == -2 ? "interrupted" : s->pass ? "pass" : "FAIL",
		s->pass || rc == -2 ? "" : ": ", s->pass || rc == -2 ? "" : s->why);
	run_write(r);
	if (rc == 0 && (!s->pass || s->timeouts > 0))
		run_settle(r, fmin(10, r->cfg.warmup_s + r->cfg.step_s));
out:
	if (st.inst) {
		for (unsigned i = 0; i < r->ninst; i++)
			fl_result_obs_free(&st.inst[i]);
		free(st.inst);
	}
	return rc;
}

/* The search, then the final window. 0, -1 failed, -2 interrupted. */
static int run_search_all(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	double q;
	enum fl_search_phase ph;
	int rc;

	fl_search_init(&r->search, &c->search);
	while (fl_search_next(&r->search, &q, &ph))
		if ((rc = run_step(r, ph, q, c->warmup_s, c->step_s, 0)) != 0)
			return rc;
	run_say(r, 1, PROG ": search %s: %s", r->search.converged ? "converged" :
		"did not converge", r->search.reason);
	run_write(r);
	if (r->search.chosen_qps <= 0)
		return 0;
	rc = run_step(r, FL_PHASE_FINAL, r->search.chosen_qps, c->warmup_s, c->final_s, 1);
	if (rc != -1) {
		r->final_step = (long)r->nsteps - 1;
		r->final_host_cpu_pct = r->steps[r->final_step].host_cpu_pct;
	}
	return rc;
}

/* Fixed rates: each for --duration; the last is reported as the final window. */
static int run_fixed_all(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	for (unsigned i = 0; i < c->nfixed; i++) {
		int last = i + 1 == c->nfixed;
		int rc = run_step(r, FL_PHASE_FIXED, c->fixed_qps[i], c->warmup_s, c->duration_s,
			last);
		if (rc != -1 && last) {
			r->final_step = (long)r->nsteps - 1;
			r->final_host_cpu_pct = r->steps[r->final_step].host_cpu_pct;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Stop everything frontload started: drivers get "quit" (then SIGTERM), then leaves and
 * mocks SIGTERM together (the leaf writes its final stats); SIGKILL after 3 s each. */
static void run_stop(struct fl_run *r)
{
	struct fl_proc *ps[3 * FL_RUN_MAX_INSTANCES];
	size_t n;
	/* After a failure or a signal a driver may be mid-step: no point waiting for it. */
	int graceful = r->status == FL_RUN_RUNNING || r->status == FL_RUN_COMPLETE;

	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (in->driver.to_fd >= 0) {
			if (fl_proc_running(&in->driver) && write(in->driver.to_fd, "quit\n", 5) != 5)
				(void)0;  /* it is gone already; reaped below */
			close(in->driver.to_fd);
			in->driver.to_fd = -1;
		}
	}
	for (int waited = 0; graceful && waited < RUN_STOP_GRACE_MS; waited += 20) {
		int left = 0;
		for (unsigned i = 0; i < r->ninst; i++)
			left += fl_proc_running(&r->inst[i].driver);
		if (!left)
			break;
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	n = run_all_procs(r, ps, 1, 0);
	fl_proc_stop_all(ps, n, SIGTERM, RUN_STOP_GRACE_MS);
	n = run_all_procs(r, ps, 0, 1);
	fl_proc_stop_all(ps, n, SIGTERM, RUN_STOP_GRACE_MS);
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (in->own_leaf && in->leaf.pid > 0)
			in->leaf_stats_end = fl_result_load_json(in->leaf_stats_path);
		if (in->own_mock && in->mock.pid > 0)
			in->mock_stats_end = fl_result_load_json(in->mock_stats_path);
		if (in->jsonl)
			fclose(in->jsonl);
		in->jsonl = NULL;
	}
}

static void run_free(struct fl_run *r)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		for (unsigned k = 0; k < r->steps[i].ninst; k++)
			fl_result_obs_free(&r->steps[i].inst[k]);
		free(r->steps[i].inst);
	}
	free(r->steps);
	for (unsigned i = 0; r->inst && i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		json_decref(in->leaf_stats_pre);
		json_decref(in->leaf_stats_post);
		json_decref(in->leaf_stats_end);
		json_decref(in->mock_stats_end);
		free(in->line);
	}
	free(r->inst);
	json_decref(r->build);
	free(r);
}

/* The closing lines on stderr. */
static void run_summary(struct fl_run *r)
{
	char took[32];
	run_fmt_secs(fl_run_now() - r->t0, took, sizeof took);
	run_say(r, 1, PROG ": %s after %s; result %s/result.json",
		fl_run_status_name(r->status), took, r->dir);
	if (r->status_reason[0])
		fprintf(stderr, "  %s\n", r->status_reason);
	if (r->final_step >= 0) {
		const struct fl_run_step *st = &r->steps[r->final_step];
		fprintf(stderr, "  %s: requested %.1f qps, achieved %.1f qps, p95 %.1f ms (SLA %g "
			"ms), p99 %.1f ms, errors %llu, host CPU %.0f%%\n",
			st->phase == FL_PHASE_FINAL ? "final window" : "last rate",
			st->sum.requested_qps, st->sum.achieved_qps, st->worst.p95,
			r->cfg.search.sla_p95_ms, st->worst.p99, (unsigned long long)st->sum.errors,
			r->final_host_cpu_pct);
		if (!st->pass)
			fprintf(stderr, "  the %s missed: %s\n", st->phase == FL_PHASE_FINAL ?
				"final window" : "last rate", st->why);
	}
	if (r->cfg.nfixed == 0 && r->search.state == FL_SEARCH_DONE)
		fprintf(stderr, "  converged: %s (%s)\n", r->search.converged ? "yes" : "no",
			r->search.reason);
}

static int cmd_run(int argc, char **argv)
{
	char err[512];
	struct fl_run *r = calloc(1, sizeof *r);
	int rc, code;

	if (r == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return RUN_EXIT_FAIL;
	}
	rc = run_parse_args(&r->cfg, argc, argv, err, sizeof err);
	if (rc != 0) {
		if (rc == 1)
			run_usage(stdout);
		else
			fprintf(stderr, PROG " run: %s (see frontload run --help)\n", err);
		free(r);
		return rc == 1 ? RUN_EXIT_OK : RUN_EXIT_USAGE;
	}
	r->argc = argc;
	r->argv = argv;
	run_install_signals();
	if (run_setup(r) != 0) {
		run_free(r);
		return RUN_EXIT_FAIL;
	}
	fl_search_init(&r->search, &r->cfg.search);
	r->status = FL_RUN_RUNNING;
	run_say(r, 1, PROG ": run %s in %s: %u instance%s, SLA p95 <= %g ms, %s", r->run_id,
		r->dir, r->ninst, r->ninst > 1 ? "s" : "", r->cfg.search.sla_p95_ms,
		r->cfg.nfixed ? "fixed rates" : r->cfg.quick ? "quick search" : "search");
	run_write(r);

	rc = run_start(r);
	if (rc == 0)
		rc = r->cfg.nfixed ? run_fixed_all(r) : run_search_all(r);
	if (rc == -2 || (rc == 0 && run_signal)) {
		size_t whole = 0;
		for (size_t i = 0; i < r->nsteps; i++)
			whole += r->steps[i].complete;
		run_set_status(r, FL_RUN_INTERRUPTED, "interrupted by signal %d (%s); %zu complete "
			"step%s kept%s", (int)run_signal, strsignal(run_signal), whole,
			whole == 1 ? "" : "s", r->nsteps > whole ? ", and the one in progress, cut "
			"short" : "");
	}
	if (r->status == FL_RUN_RUNNING)
		r->status = FL_RUN_COMPLETE;
	if (r->search.state != FL_SEARCH_DONE && r->cfg.nfixed == 0)
		fl_search_abort(&r->search, r->status == FL_RUN_INTERRUPTED ? "interrupted before "
			"the search finished" : "the run failed before the search finished");
	if (r->tty && r->progress_open)
		run_say(r, 1, PROG ": stopping");
	run_stop(r);
	run_write(r);
	run_summary(r);
	code = r->status == FL_RUN_COMPLETE ? RUN_EXIT_OK : r->status == FL_RUN_FAILED ?
		RUN_EXIT_FAIL : 128 + (run_signal ? run_signal : SIGINT);
	run_free(r);
	return code;
}

/* ---- the command table --------------------------------------------------------------- */

struct fl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the subcommand */
	const char *summary;
};

static const struct fl_cmd fl_cmds[] = {
	{ "run", cmd_run, "find the highest QPS within the p95 SLA, hold it, write a result" },
	{ "validate", fl_cmd_measure, "measure front-end metrics (hardware or simulated) against targets" },
	{ "mix", fl_cmd_measure, "dynamic instruction mix of the request path (callgrind)" },
	{ "calibrate", fl_cmd_measure, "find calls per request that hit a target L1i MPKI" },
	{ "study", fl_cmd_measure, "the I-cache MPKI study: sweep footprint and calls per request" },
};
#define FL_NCMDS (sizeof fl_cmds / sizeof fl_cmds[0])

static void usage(FILE *f)
{
	fprintf(f,
"usage: frontload COMMAND [options]\n"
"\n"
"frontload: a workload for studying CPU front-end pressure in datacenter ranking\n"
"services (modelled on DCPerf FeedSim): a ranking leaf running generated extractor code,\n"
"a mock downstream service and an open-loop load driver.\n"
"\n"
"commands:\n");
	for (size_t i = 0; i < FL_NCMDS; i++)
		fprintf(f, "  %-10s %s\n", fl_cmds[i].name, fl_cmds[i].summary);
	fprintf(f,
"\n"
"`frontload COMMAND --help` describes a command's options and output.\n"
"exit status: the command's; 2 for an unknown command or none.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RUN_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return RUN_EXIT_OK;
	}
	for (size_t i = 0; i < FL_NCMDS; i++)
		if (strcmp(argv[1], fl_cmds[i].name) == 0)
			return fl_cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, PROG ": unknown command '%s' (see frontload --help)\n", argv[1]);
	return RUN_EXIT_USAGE;
}
