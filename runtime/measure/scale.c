/* scale.c: frontload-measure scale: the scaling study. N small instances against one large
 * on the same CPUs, and ranker threads per instance: one `frontload run` per configuration
 * of the grid, each its SLA-bound QPS (or its fixed rates' throughput), QPS per CPU, p95
 * and, where the host has counters, IPC and L1i MPKI. This file holds the options, the
 * grid and the runs; scale_report.c writes the report (scale.h: what they share). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "margs.h"
#include "measure.h"
#include "mutil.h"
#include "osfile.h"
#include "paths.h"
#include "process.h"
#include "scale.h"

#define FL_CLI_OBJ struct sc_args
static const struct fl_cli_opt sc_opts[] = {
	FL_OPT_STR("instances", instances_text, "LIST", NULL, "instances to sweep (sets of mock "
		"+ leaf + driver, each pinned to its own CPU range: frontload run --instances), "
		"1..the CPUs (default: 1, 2, 4, ... up to the CPUs)", .section = "the grid"),
	FL_OPT_STR("ranker-threads", threads_text, "LIST", "fill,1", "RANKER threads per "
		"instance to sweep, 1..1024, or fill = the instance's CPUs (the CPUs / instances, "
		"at least 1), so every fill configuration uses the same CPUs; a configuration "
		"with more ranker threads than its instance's CPUs runs, marked oversubscribed; "
		"repeats are dropped"),
	FL_OPT_FLAG("quick", quick, "each run with frontload run --quick (one to three "
		"minutes a configuration instead of about ten)", .section = "each run"),
	FL_OPT_STR("run-args", run_args, "\"ARGS\"", NULL, "more frontload run flags for every "
		"configuration, split on spaces (--sla-ms, --qps R --duration S for fixed rates, "
		"--drivers, --tls, ...; not --instances, --out or --leaf-args)"),
	FL_OPT_STR("leaf-args", leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags, after "
		"--ranker-threads (frontload run --leaf-args)"),
	FL_OPT_STR("out", out, "DIR", NULL, "output directory (default: "
		"results/scale-<YYYYmmdd-HHMMSS>, relative to the current directory)",
		.section = "output"),
	FL_OPT_FLAG("quiet", quiet, "no progress lines"),
};
#undef FL_CLI_OBJ

static const struct fl_cli sc_cli = {
	.opts = sc_opts, .nopts = sizeof(sc_opts) / sizeof(sc_opts[0]),
};

static void sc_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " scale [options]   (also: frontload scale)\n"
"\n"
"The scaling study: N small instances against one large on the same CPUs, and RANKER\n"
"threads per instance. For each configuration of --instances x --ranker-threads it runs\n"
"`frontload run --instances N --leaf-args \"--ranker-threads T\"` (frontload found beside\n"
"this program), which finds the highest rate whose p95 stays within the SLA and holds it\n"
"for a final window, and reads its result.json.\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &sc_cli);
	fputs(
"\nPer configuration (scale.csv, scale.json, summary.md):\n"
"  qps            requests/s summed over instances: the SLA-bound rate when the search\n"
"                 converged (qps_kind sla_bound); else the highest rate that passed every\n"
"                 time (lower_bound, a bound, not an SLA figure); with --qps in --run-args\n"
"                 the replies/s of the last fixed rate (fixed_achieved); null when the\n"
"                 run measured none\n"
"  qps_per_cpu    qps / the CPUs its instances were pinned to (logical CPUs, from\n"
"                 result.json instances[].cpus; an instance not pinned, as one instance\n"
"                 without --pin, counts every usable CPU of the host)\n"
"  p50/p95/p99_ms final window's end-to-end latency (ms), worst instance\n"
"  host_cpu_pct   busy share of all CPUs over the final window (%)\n"
"  ipc, l1i_mpki  the leaves' hardware counters over the final window, summed over\n"
"                 instances (instructions / cycles; L1i misses per 1000 instructions),\n"
"                 or \"unsupported: <why>\" where the host has none (never 0)\n"
"  status, exit_status, converged_reason, run_dir (DIR/runs/i<N>-t<T>/: the run's\n"
"                 result.json, steps.csv and logs), wall_s; exit_status -1 when the run\n"
"                 was killed by a signal (why names it) or could not be waited for\n"
"  why            why nothing was measured (absent when measured)\n"
"\n"
"Writes DIR/scale.csv, DIR/scale.json, DIR/summary.md (the exact command, host, build,\n"
"the table, the plot and a reading computed from the measured configurations: the best\n"
"QPS per CPU, and each N-instance configuration against one instance on the same\n"
"CPUs), DIR/report.html (summary.md as one self-contained page, the SVG plot inline),\n"
"qps.png and qps.svg (gnuplot: QPS and QPS per CPU per configuration) and scale.gp.\n"
"\n"
"Ctrl-C or SIGTERM stops the running configuration (its frontload run writes its result\n"
"with status interrupted), starts no more, and writes the report with what finished.\n"
"\n"
"exit status: 0 written and every configuration's run ended 0 (converged, or fixed\n"
"rates); 3 written, some run did not converge or failed (see summary.md); 1 no\n"
"configuration measured or the report cannot be written; 2 usage error; 130 / 143\n"
"interrupted by SIGINT / SIGTERM (the report written).\n", fp);
}

/* "1,2,4" (or fill for threads) into out. 0, or -1 (message printed). */
static int sc_list(const char *flag, const char *s, uint64_t hi, int fill_ok, uint64_t *out,
	size_t *n)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == SC_MAX_LIST) {
			fprintf(stderr, FM_PROG ": --%s: at most %d values\n", flag, SC_MAX_LIST);
			return -1;
		}
		if (fill_ok && strcmp(t, "fill") == 0)
			out[(*n)++] = SC_FILL;
		else if (fm_parse_u64(flag, t, 1, hi, &out[(*n)++]) != 0)
			return -1;
	}
	if (*n == 0) {
		fprintf(stderr, FM_PROG ": --%s: empty list\n", flag);
		return -1;
	}
	return 0;
}

/* A --run-args word scale sets itself. */
static const char *sc_own_flag(const char *args)
{
	static const char *const own[] = { "--instances", "--out", "--leaf-args", NULL };
	char buf[2048], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", args);
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		for (int i = 0; own[i]; i++) {
			size_t l = strlen(own[i]);

			if (strncmp(t, own[i], l) == 0 && (t[l] == '\0' || t[l] == '='))
				return own[i];
		}
	return NULL;
}

int sc_parse(int argc, char **argv, struct sc_args *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *own;

	memset(a, 0, sizeof(*a));
	a->cpus = ncpu > 0 ? (uint64_t)ncpu : 1;
	if (fm_cli_parse(&sc_cli, argc, argv, a, sc_usage) != 0)
		return -1;
	if (a->instances_text) {
		if (sc_list("instances", a->instances_text, a->cpus, 0, a->instances,
		    &a->ninstances) != 0)
			return -1;
	} else {
		for (uint64_t i = 1; i <= a->cpus && a->ninstances < SC_MAX_LIST; i *= 2)
			a->instances[a->ninstances++] = i;
	}
	if (sc_list("ranker-threads", a->threads_text, 1024, 1, a->threads, &a->nthreads) != 0)
		return -1;
	if (a->run_args && (own = sc_own_flag(a->run_args)) != NULL) {
		fprintf(stderr, FM_PROG ": --run-args: %s is scale's own (use --instances, --out, "
			"--leaf-args)\n", own);
		return -1;
	}
	return 0;
}

/* The grid: instances x threads, fill resolved, repeats dropped. Returns how many. */
static size_t sc_grid(const struct sc_args *a, struct sc_config *c)
{
	size_t n = 0;

	for (size_t i = 0; i < a->ninstances; i++)
		for (size_t t = 0; t < a->nthreads && n < SC_MAX_CONFIGS; t++) {
			uint64_t inst = a->instances[i], thr = a->threads[t];
			int fill = thr == SC_FILL, dup = 0;

			if (fill)
				thr = a->cpus / inst > 0 ? a->cpus / inst : 1;
			for (size_t k = 0; k < n; k++)
				dup |= c[k].instances == inst && c[k].threads == thr;
			if (dup)
				continue;
			memset(&c[n], 0, sizeof(c[n]));
			c[n].instances = inst;
			c[n].threads = thr;
			c[n].fill = fill;
			snprintf(c[n].name, sizeof(c[n].name), "i%llu-t%llu", (unsigned long long)inst,
				(unsigned long long)thr);
			sc_read_result(&c[n]);  /* nothing measured yet: NAN, not 0 */
			n++;
		}
	return n;
}

/* ---- the runs ---- */

/* The signal (SIGINT, SIGTERM) that stops the study, 0 while none: written by the handler,
 * read by the run loop, which then passes it to the running frontload run. */
static volatile sig_atomic_t sc_stop_signal;

static void sc_on_signal(int sig)
{
	sc_stop_signal = sig;
}

/* Append the words of text to argv at *n (copies owned by pool). */
static void sc_split(const char *text, const char **argv, int *n, int max, char **pool,
	int *npool, int maxpool)
{
	while (text && *text && *n < max && *npool < maxpool) {
		text += strspn(text, " \t");
		size_t k = strcspn(text, " \t");

		if (k > 0) {
			char *w = strndup(text, k);

			if (w == NULL)
				return;
			pool[(*npool)++] = w;
			argv[(*n)++] = w;
		}
		text += k;
	}
}

/* Run configuration c: frontload run into DIR/runs/NAME, its output in NAME.log. Fills
 * c->exit_status, c->result. */
static void sc_run(struct sc_config *c, const struct sc_args *a, const char *dir,
	const char *frontload)
{
	const char *argv[160];
	char *pool[160];
	char inst[32], leaf[2400], out[4300], log[4300], res[4400], err[1024];
	int n = 0, npool = 0, status;
	double t0 = fm_now();

	snprintf(inst, sizeof(inst), "%llu", (unsigned long long)c->instances);
	snprintf(leaf, sizeof(leaf), "--ranker-threads %llu%s%s",
		(unsigned long long)c->threads, a->leaf_args ? " " : "",
		a->leaf_args ? a->leaf_args : "");
	snprintf(out, sizeof(out), "%s/runs/%s", dir, c->name);
	snprintf(log, sizeof(log), "%s/runs/%s.log", dir, c->name);
	argv[n++] = frontload;
	argv[n++] = "run";
	argv[n++] = "--instances";
	argv[n++] = inst;
	argv[n++] = "--leaf-args";
	argv[n++] = leaf;
	argv[n++] = "--out";
	argv[n++] = out;
	if (a->quick)
		argv[n++] = "--quick";
	sc_split(a->run_args, argv, &n, 150, pool, &npool, 150);
	argv[n] = NULL;
	/* Its own process group: a terminal's Ctrl-C reaches scale only, which passes it on
	 * once (frontload run stops its children and writes its result). */
	struct fl_spawn_opts o = { .stdout_path = log, .stderr_path = log, .append = 1,
		.stdin_path = "/dev/null", .new_pgroup = 1 };
	pid_t pid = fl_spawn(argv, &o, err, sizeof(err));

	for (int i = 0; i < npool; i++)
		free(pool[i]);
	c->ran = 1;
	if (pid < 0) {
		c->exit_status = -1;
		snprintf(c->why, sizeof(c->why), "frontload run did not start: %.900s", err);
		sc_read_result(c);
		return;
	}
	int passed = 0, wait_errno = 0;
	for (;;) {
		pid_t r = waitpid(pid, &status, 0);

		if (r == pid)
			break;
		if (r < 0 && errno == EINTR && sc_stop_signal && !passed) {
			kill(pid, sc_stop_signal);
			passed = 1;
		} else if (r < 0 && errno != EINTR) {
			wait_errno = errno;
			break;
		}
	}
	c->wall_s = fm_now() - t0;
	c->exit_status = !wait_errno && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	c->interrupted = passed;
	snprintf(res, sizeof(res), "%s/result.json", out);
	c->result = json_load_file(res, 0, NULL);
	/* A run that did not exit by itself left a result.json that says "running", or
	 * none: say what ended it, whatever the file holds. */
	if (wait_errno)
		snprintf(c->why, sizeof(c->why), "waiting for frontload run failed (%s); its "
			"output is in %.800s", strerror(wait_errno), log);
	else if (WIFSIGNALED(status))
		snprintf(c->why, sizeof(c->why), "frontload run was killed by signal %d (%s)%s; "
			"its output is in %.800s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			c->result ? "" : " and wrote no result.json", log);
	else if (c->result == NULL)
		snprintf(c->why, sizeof(c->why), "frontload run exited %d and wrote no "
			"result.json (see %.800s)", c->exit_status, log);
	sc_read_result(c);
}

/* The progress line after a configuration: figures only where measured (no NaN, no
 * 0 standing for "not measured"). */
static void sc_say_done(const struct sc_config *c, size_t i, size_t n, char *d1, size_t dl)
{
	char fig[256] = "no rate measured";

	if (isfinite(c->qps)) {
		int k = snprintf(fig, sizeof(fig), "%s qps %.4g", c->qps_kind, c->qps);

		if (isfinite(c->qps_per_cpu))
			k += snprintf(fig + k, sizeof(fig) - (size_t)k, ", %.4g qps/CPU",
				c->qps_per_cpu);
		if (isfinite(c->p95_ms))
			snprintf(fig + k, sizeof(fig) - (size_t)k, ", p95 %.4g ms", c->p95_ms);
	}
	fprintf(stderr, FM_PROG ": [%zu/%zu] %s: %s, %s, exit %d, %s%s%s\n", i + 1, n, c->name,
		c->status ? c->status : "no result", fig, c->exit_status,
		fm_dur_str(c->wall_s, d1, dl), c->why[0] ? "; " : "", c->why);
}

int fm_scale_main(int argc, char **argv)
{
	struct sc_args a;
	struct sc_config *cfg;
	char dir[4096], runs[4200], frontload[4200], bindir[4096], command[8192] = "";
	char d1[32];
	double t0 = fm_now();
	size_t n, measured = 0;
	int worst = 0;

	if (sc_parse(argc, argv, &a) != 0)
		return FM_EXIT_USAGE;
	if (fl_exe_dir(bindir, sizeof(bindir)) != 0) {
		fprintf(stderr, FM_PROG ": cannot find this program's directory (/proc/self/exe)\n");
		return FM_EXIT_RUN;
	}
	snprintf(frontload, sizeof(frontload), "%s/frontload", bindir);
	if (access(frontload, X_OK) != 0) {
		fprintf(stderr, FM_PROG ": %s: %s (scale runs frontload run from beside this "
			"program)\n", frontload, strerror(errno));
		return FM_EXIT_RUN;
	}
	/* The command as typed again: a word with a space in quotes. */
	for (int i = -1; i < argc; i++) {
		size_t l = strlen(command);
		int q = i >= 0 && strpbrk(argv[i], " \t") != NULL;

		snprintf(command + l, sizeof(command) - l, "%s%s%s%s", i < 0 ? FM_PROG : " ",
			q ? "\"" : "", i < 0 ? "" : argv[i], q ? "\"" : "");
	}
	if (a.out) {
		snprintf(dir, sizeof(dir), "%s", a.out);
	} else {
		fm_default_out("scale", dir, sizeof(dir));
	}
	snprintf(runs, sizeof(runs), "%s/runs", dir);
	if (fl_mkdir_p(runs, 0755, NULL, 0) != 0) {
		fprintf(stderr, FM_PROG ": cannot make %s: %s\n", runs, strerror(errno));
		return FM_EXIT_RUN;
	}
	cfg = calloc(SC_MAX_CONFIGS, sizeof(*cfg));
	if (cfg == NULL) {
		fprintf(stderr, FM_PROG ": out of memory\n");
		return FM_EXIT_RUN;
	}
	n = sc_grid(&a, cfg);
	if (!a.quiet) {
		fprintf(stderr, FM_PROG ": %zu configurations on %llu CPUs, one frontload run "
			"each%s:", n, (unsigned long long)a.cpus, a.quick ? " (--quick)" : "");
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %s", cfg[i].name);
		fputc('\n', stderr);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sc_on_signal;  /* no SA_RESTART: waitpid returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (size_t i = 0; i < n; i++) {
		struct sc_config *c = &cfg[i];

		if (sc_stop_signal) {
			c->interrupted = 1;
			snprintf(c->why, sizeof(c->why), "not run: scale was interrupted by signal "
				"%d (%s)", (int)sc_stop_signal, strsignal(sc_stop_signal));
			continue;
		}
		if (!a.quiet)
			fprintf(stderr, FM_PROG ": [%zu/%zu] %s: %llu instance%s x %llu ranker "
				"thread%s (%s/runs/%s)\n", i + 1, n, c->name,
				(unsigned long long)c->instances, c->instances == 1 ? "" : "s",
				(unsigned long long)c->threads, c->threads == 1 ? "" : "s", dir, c->name);
		sc_run(c, &a, dir, frontload);
		measured += c->qps == c->qps;  /* not NAN */
		if (c->exit_status != 0)
			worst = c->exit_status;
		if (!a.quiet)
			sc_say_done(c, i, n, d1, sizeof(d1));
	}
	int wrote = sc_write_report(dir, cfg, n, &a, command, fm_now() - t0,
		(int)sc_stop_signal);
	for (size_t i = 0; i < n; i++) {
		json_decref(cfg[i].result);
		json_decref(cfg[i].ipc);
		json_decref(cfg[i].l1i_mpki);
	}
	free(cfg);
	printf("scale: %zu of %zu configurations measured, written to %s (summary.md, "
		"report.html, scale.csv, scale.json) in %s\n", measured, n, dir,
		fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
	if (sc_stop_signal) {
		fprintf(stderr, FM_PROG ": interrupted by signal %d (%s)\n", (int)sc_stop_signal,
			strsignal(sc_stop_signal));
		return 128 + sc_stop_signal;
	}
	if (wrote != 0 || measured == 0)
		return FM_EXIT_RUN;
	return worst ? FM_EXIT_MISSED : FM_EXIT_OK;
}
