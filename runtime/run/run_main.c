/* run_main.c: the frontload command: subcommand table, and `frontload run` itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "osfile.h"
#include "paths.h"
#include "run_drvclock.h"
#include "run_flags.h"
#include "run_host.h"
#include "run_launch.h"
#include "run_measure.h"
#include "run_procs.h"
#include "run_result.h"
#include "run_search.h"
#include "run_status.h"
#include "run_steps.h"

#define RUN_EXIT_OK 0
#define RUN_EXIT_FAIL 1
#define RUN_EXIT_USAGE 2
#define RUN_EXIT_NOT_CONVERGED 3  /* complete, but the search found no SLA bound */

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
		fprintf(stderr, RUN_PROG ": cannot find this program's directory (/proc/self/exe)\n");
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
	if (fl_mkdir_p(r->dir, 0755, NULL, 0) != 0) {
		fprintf(stderr, RUN_PROG ": cannot create the run directory %s: %s\n", r->dir,
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
		fprintf(stderr, RUN_PROG ": %s\n", err);
		return -1;
	}
	fl_host_info_read("", &r->topo, &r->host);
	r->build = fl_result_build_summary(r->exe_dir);

	r->ninst = r->cfg.instances;
	r->inst = calloc(r->ninst, sizeof *r->inst);
	if (r->inst == NULL) {
		fprintf(stderr, RUN_PROG ": out of memory\n");
		return -1;
	}
	int place = r->ninst > 1 || r->cfg.pin;
	if (place && fl_host_partition(&r->topo, r->ninst, parts, err, sizeof err) != 0) {
		fprintf(stderr, RUN_PROG ": --instances %u: %s\n", r->ninst, err);
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
		in->ndrv = r->cfg.drivers;
		in->drv = calloc(in->ndrv, sizeof *in->drv);
		if (in->drv == NULL) {
			fprintf(stderr, RUN_PROG ": out of memory\n");
			return -1;
		}
		for (unsigned d = 0; d < in->ndrv; d++) {
			/* One driver keeps the names of old; several are driver<i>.<d>. */
			if (in->ndrv > 1)
				snprintf(name, sizeof name, "driver%u.%u", i, d);
			else
				snprintf(name, sizeof name, "driver%u", i);
			fl_proc_init(&in->drv[d].proc, name);
			in->drv[d].seed = r->cfg.seed + i + (uint64_t)d * r->ninst;
		}
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

/* ---- run ------------------------------------------------------------------------- */

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
		for (unsigned d = 0; in->drv && d < in->ndrv; d++)
			free(in->drv[d].line);
		free(in->drv);
	}
	free(r->inst);
	json_decref(r->build);
	if (r->stats_tls)
		SSL_CTX_free(r->stats_tls);
	free(r);
}

/* A remote host whose clock is surely off by more than the bound: say so (the result
 * has it in clocks.within_bound). */
static void run_clock_warn(const char *role, const char *addr,
	const struct fl_clock_sample *c, double bound_ms)
{
	if (fl_clock_judge(c, bound_ms) == FL_CLOCK_BEYOND)
		fprintf(stderr, "  warning: the %s at %s has a clock %+.3f ms (+- %.3f) off this "
			"host's, beyond --clock-bound-ms %g: timestamps and deadlines crossing "
			"hosts are off by as much\n", role, addr, c->offset_ms, c->uncert_ms,
			bound_ms);
}

/* The closing lines on stderr. */
static void run_summary(struct fl_run *r)
{
	char took[32];
	run_fmt_secs(fl_run_now() - r->t0, took, sizeof took);
	run_say(r, 1, RUN_PROG ": %s after %s; result %s/result.json",
		fl_run_status_name(r->status), took, r->dir);
	if (r->status_reason[0])
		fprintf(stderr, "  %s\n", r->status_reason);
	for (unsigned i = 0; i < r->ninst; i++) {
		run_clock_warn("leaf", r->inst[i].leaf_addr, &r->inst[i].leaf_clock,
			r->cfg.clock_bound_ms);
		run_clock_warn("mock", r->inst[i].mock_addr, &r->inst[i].mock_clock,
			r->cfg.clock_bound_ms);
		for (unsigned d = 0; d < r->inst[i].ndrv; d++)
			if (r->inst[i].drv[d].host[0])
				run_clock_warn("driver", r->inst[i].drv[d].host,
					&r->inst[i].drv[d].clock, r->cfg.clock_bound_ms);
	}
	if (r->final_step >= 0) {
		const struct fl_run_step *st = &r->steps[r->final_step];
		char ci[64] = "", cpu[32] = "unknown";
		if (st->sum.p95_lo_ms >= 0 && st->sum.p95_hi_ms >= 0)
			snprintf(ci, sizeof ci, " (95%% interval %.1f..%.1f)", st->sum.p95_lo_ms,
				st->sum.p95_hi_ms);
		if (r->final_host_cpu_pct >= 0)
			snprintf(cpu, sizeof cpu, "%.0f%%", r->final_host_cpu_pct);
		char p95[32] = "n/a", p99[32] = "n/a";  /* no OK reply: no percentile */
		char ach[32] = "n/a";  /* no window measured: no rate */
		if (isfinite(st->sum.achieved_qps))
			snprintf(ach, sizeof ach, "%.1f", st->sum.achieved_qps);
		if (isfinite(st->worst.p95))
			snprintf(p95, sizeof p95, "%.1f ms", st->worst.p95);
		if (isfinite(st->worst.p99))
			snprintf(p99, sizeof p99, "%.1f ms", st->worst.p99);
		fprintf(stderr, "  %s: requested %.1f qps, achieved %s qps, p95 %s%s (SLA "
			"%g ms), p99 %s, errors %llu, host CPU %s\n",
			st->phase == FL_PHASE_FINAL ? "final window" : "last rate",
			st->sum.requested_qps, ach, p95, ci,
			r->cfg.search.sla_p95_ms, p99, (unsigned long long)st->sum.errors, cpu);
		if (!st->pass)
			fprintf(stderr, "  the %s missed: %s\n", st->phase == FL_PHASE_FINAL ?
				"final window" : "last rate", st->why);
	}
	if (r->cfg.nfixed == 0 && r->search.state == FL_SEARCH_DONE) {
		const struct fl_search *s = &r->search;
		fprintf(stderr, "  converged: %s (%s)\n", s->converged ? "yes" : "no", s->reason);
		if (s->converged)
			fprintf(stderr, "  sla_bound_qps %.1f\n", s->sla_bound_qps * r->ninst);
		else if (s->lower_bound_qps > 0)
			fprintf(stderr, "  no SLA bound; lower_bound_qps %.1f (passed every time it "
				"was judged)\n", s->lower_bound_qps * r->ninst);
		else
			fprintf(stderr, "  no SLA bound and no lower bound: no rate passed\n");
	}
}

/* The exit status: complete runs exit 0 only when they have what they were asked for. */
static int run_exit_code(const struct fl_run *r)
{
	if (r->status == FL_RUN_FAILED)
		return RUN_EXIT_FAIL;
	if (r->status != FL_RUN_COMPLETE)
		return 128 + (run_signal ? run_signal : SIGINT);
	if (r->cfg.nfixed == 0 && !r->search.converged)
		return RUN_EXIT_NOT_CONVERGED;
	return RUN_EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
	char err[512];
	struct fl_run *r = calloc(1, sizeof *r);
	int rc, code;

	if (r == NULL) {
		fprintf(stderr, RUN_PROG ": out of memory\n");
		return RUN_EXIT_FAIL;
	}
	rc = run_parse_args(&r->cfg, argc, argv, err, sizeof err);
	if (rc != 0) {
		if (rc == 1)
			run_usage(stdout);
		else
			fprintf(stderr, RUN_PROG " run: %s (see frontload run --help)\n", err);
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
	char drivers[48] = "";
	if (r->cfg.drivers > 1)
		snprintf(drivers, sizeof drivers, " (%u drivers each)", r->cfg.drivers);
	run_say(r, 1, RUN_PROG ": run %s in %s: %u instance%s%s, SLA p95 <= %g ms, %s",
		r->run_id, r->dir, r->ninst, r->ninst > 1 ? "s" : "", drivers,
		r->cfg.search.sla_p95_ms,
		r->cfg.nfixed ? "fixed rates" : r->cfg.quick ? "quick search" : "search");
	run_write(r);

	rc = run_start(r);
	if (rc == 0)
		rc = run_driver_clocks(r);
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
		run_say(r, 1, RUN_PROG ": stopping");
	run_stop(r);
	run_write(r);
	run_summary(r);
	code = run_exit_code(r);
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
	{ "scale", fl_cmd_measure, "the scaling study: instances x ranker threads on the same CPUs" },
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
	fprintf(stderr, RUN_PROG ": unknown command '%s' (see frontload --help)\n", argv[1]);
	return RUN_EXIT_USAGE;
}
