/* study.c: frontload-measure study: MPKI over executed code bytes x call order x calls per
 * request, and L1i miss-ratio curves per call order. This file runs the points (at most
 * --jobs at once) and holds the command; the options are in study_args.c, the point plan
 * in study_plan.c, the report in study_report.c (study.h: what they share). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "cpumodel.h"
#include "measure.h"
#include "mutil.h"
#include "simrun.h"
#include "osfile.h"
#include "report_html.h"
#include "study.h"

/* The signal (SIGINT, SIGTERM) that interrupted the study, 0 while none: written by the
 * handler, read by the run loop, which then stops the running points and starts no more. */
static volatile sig_atomic_t st_stop_signal;

static void st_on_signal(int sig)
{
	st_stop_signal = sig;
}

static void st_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = st_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int st_start(struct st_point *q, const struct st_args *a, const struct fm_run *r0,
	const char *tmp, int idx)
{
	char err[2048];

	q->run = *r0;
	q->run.tmpdir = tmp;
	snprintf(q->tag, sizeof(q->tag), "p%03d", idx);
	if (q->kind == ST_LEAF)
		return st_leaf_start(q, a, r0, tmp);
	q->run.tag = q->tag;
	q->run.quiet = 1;
	q->run.mix = q->kind == ST_SWEEP;
	q->run.geo.i1.size = q->i1_bytes;
	snprintf(q->cps, sizeof(q->cps), "%llu", (unsigned long long)q->calls);
	st_plan_knobs(q, &q->run, 0);
	fm_run_knob(&q->run, "calls-per-request", q->cps);
	if (q->kind == ST_MRC) {
		struct fm_cache want = q->run.geo.i1, got;
		char note[256];

		if (fm_cache_fit(&want, &got, note, sizeof(note)) != 0) {
			q->failed = 1;
			snprintf(q->why, sizeof(q->why), "%s", note);
			return -1;
		}
		q->run.geo.i1 = got;
		q->i1_bytes = got.size;
	}
	if (fm_sim_start(&q->run, &q->job, err, sizeof(err)) != 0) {
		q->failed = 1;
		snprintf(q->why, sizeof(q->why), "%s", err);
		return -1;
	}
	return 0;
}

static void point_label(const struct st_point *q, char *buf, size_t len)
{
	char o[32], b[32];

	st_order_str(q->alpha, o, sizeof(o));
	if (q->kind == ST_SWEEP)
		snprintf(buf, len, "%s (%llu functions), %s, %llu calls/request",
			st_bstr((double)q->want_bytes, b, sizeof(b)), (unsigned long long)q->nfuncs,
			o, (unsigned long long)q->calls);
	else if (q->kind == ST_LEAF)
		snprintf(buf, len, "the running leaf: %s (%llu functions), %s, %llu calls/request",
			st_bstr((double)q->want_bytes, b, sizeof(b)), (unsigned long long)q->nfuncs,
			o, (unsigned long long)(q->eps * ST_LEAF_STORIES));
	else
		snprintf(buf, len, "miss-ratio curve %s: I1 %u KiB", o, q->i1_bytes / 1024);
}

#define ST_STOP_GRACE_S 10.0  /* a point's SIGTERM, then SIGKILL: valgrind in a long
                                 translation or cache dump may not act on it soon */

/* The study was interrupted: stop the running points (their valgrind and simreq, or a leaf
 * point's validate, which stops its service), mark them and every point not started
 * interrupted. */
static void st_stop_all(struct st_point *p, size_t n, struct st_point **slots, size_t nslots)
{
	double t0 = fm_now();

	for (size_t s = 0; s < nslots; s++)
		if (slots[s])
			kill(slots[s]->job.pid, SIGTERM);
	for (size_t s = 0; s < nslots; s++) {
		struct st_point *q = slots[s];
		int status, killed = 0;

		if (q == NULL)
			continue;
		for (;;) {
			pid_t r = waitpid(q->job.pid, &status, WNOHANG);

			if (r == q->job.pid || (r < 0 && errno != EINTR))
				break;
			if (!killed && fm_now() - t0 > ST_STOP_GRACE_S) {
				kill(q->job.pid, SIGKILL);
				killed = 1;
			}
			nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		}
		slots[s] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!p[i].done && !p[i].skipped && !p[i].failed) {
			p[i].interrupted = 1;
			snprintf(p[i].why, sizeof(p[i].why), "not measured: the study was interrupted "
				"by signal %d (%s); the same command resumes it", (int)st_stop_signal,
				strsignal(st_stop_signal));
		}
}

/* Run every point not skipped, failed or done (resumed), at most jobs at once; each one
 * finished goes into dir's journal. Returns points that succeeded. */
static size_t st_run_all(struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0, const char *tmp, const char *dir, double total_s)
{
	size_t next = 0, running = 0, finished = 0, todo = 0, ok = 0;
	struct st_point *slots[64] = { 0 };
	double t0 = fm_now(), last = t0;
	char d1[32], d2[32], lab[160], err[2048];

	for (size_t i = 0; i < n; i++)
		todo += !p[i].skipped && !p[i].failed && !p[i].done;
	while (finished < todo) {
		if (st_stop_signal) {
			st_stop_all(p, n, slots, a->jobs);
			break;
		}
		while (running < a->jobs && next < n) {
			struct st_point *q = &p[next];
			int idx = (int)next++;

			if (q->skipped || q->failed || q->done)
				continue;
			if (st_start(q, a, r0, tmp, idx) != 0) {
				finished++;
				fprintf(stderr, FM_PROG ": point failed to start: %s\n", q->why);
				continue;
			}
			for (size_t s = 0; s < a->jobs; s++)
				if (slots[s] == NULL) {
					slots[s] = q;
					break;
				}
			running++;
		}
		if (running == 0)
			break;
		struct timespec ts = { 0, 200000000 };
		nanosleep(&ts, NULL);
		for (size_t s = 0; s < a->jobs; s++) {
			struct st_point *q = slots[s];
			int status;

			if (q == NULL || fm_sim_running(&q->job, &status))
				continue;
			slots[s] = NULL;
			if (st_stop_signal && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				running--;  /* ended by the signal too: st_stop_all marks it */
				continue;
			}
			running--;
			finished++;
			point_label(q, lab, sizeof(lab));
			if (q->kind == ST_LEAF ? st_leaf_finish(q, status, err, sizeof(err)) != 0 :
			    fm_sim_finish(&q->run, &q->job, status, &q->sim, err, sizeof(err)) != 0) {
				q->failed = 1;
				snprintf(q->why, sizeof(q->why), "%s", err);
				fprintf(stderr, FM_PROG ": [%zu/%zu] %s: failed: %s\n", finished, todo, lab,
					err);
				continue;
			}
			q->done = 1;
			ok++;
			if (q->kind != ST_LEAF)
				st_fill_figures(q);
			if (st_journal_save(dir, q, r0, err, sizeof(err)) != 0)
				fprintf(stderr, FM_PROG ": cannot keep %s in the journal (a resumed study "
					"measures it again): %s\n", lab, err);
			if (!a->quiet)
			{
				char d3[32], d4[32];

				char mk[32] = "n/a";

				if (isfinite(q->fig[0]))
					snprintf(mk, sizeof(mk), "%.2f", q->fig[0]);
				fprintf(stderr, FM_PROG ": [%zu/%zu] %s: L1i MPKI %s (%s; estimated "
					"%s); %s elapsed of ~%s\n", finished, todo, lab,
					mk, fm_dur_str(q->sim.wall_s, d1, sizeof(d1)),
					fm_dur_str(q->eta_s, d2, sizeof(d2)),
					fm_dur_str(fm_now() - t0, d3, sizeof(d3)),
					fm_dur_str(total_s, d4, sizeof(d4)));
			}
		}
		if (!a->quiet && fm_now() - last >= 60) {
			last = fm_now();
			fprintf(stderr, FM_PROG ": %zu of %zu points done, %zu running, %s elapsed of "
				"~%s\n", finished, todo, running, fm_dur_str(last - t0, d1, sizeof(d1)),
				fm_dur_str(total_s, d2, sizeof(d2)));
		}
	}
	return ok;
}

/* --merge takes --out and --quiet only: the study's own options are the shards'. */
static int st_merge_args_ok(int argc, char **argv)
{
	static const char *const ok[] = { "--merge", "--out", "--quiet", NULL };

	for (int i = 1; i < argc; i++) {
		size_t l = strcspn(argv[i], "=");
		int known = 0;

		if (strncmp(argv[i], "--", 2) != 0)
			continue;  /* a value */
		for (int k = 0; ok[k]; k++)
			known |= strlen(ok[k]) == l && strncmp(argv[i], ok[k], l) == 0;
		if (!known) {
			fprintf(stderr, FM_PROG ": study --merge: %.*s is a study option; the merge "
				"takes only --out and --quiet (the shards' options are in their "
				"study.json)\n", (int)l, argv[i]);
			return 0;
		}
	}
	return 1;
}

int fm_study_main(int argc, char **argv)
{
	struct st_point *points;
	struct st_args a;
	struct fm_run r;
	struct st_model m;
	char err[2048], tmp[256], dir[4096], d1[32], command[8192] = "";
	json_t *notes = NULL;
	double total_s, t0 = fm_now();
	size_t n, ok, resumed = 0;
	int plots_ok;

	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (st_parse(argc, argv, &a, &r) != 0)
		return FM_EXIT_USAGE;
	if (a.merge_text)
		return st_merge_args_ok(argc, argv) ? st_merge_main(&a, FM_PROG) : FM_EXIT_USAGE;
	if (fm_geometry(&r.geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	points = calloc(ST_MAX_POINTS, sizeof(*points));  /* large: kept off the stack */
	if (points == NULL) {
		fprintf(stderr, FM_PROG ": out of memory\n");
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	/* A smaller corpus shortens startup under valgrind; stories still come from it. */
	if (!fm_run_knob_get(&r, "corpus-mb"))
		fm_run_knob(&r, "corpus-mb", "16");
	r.warmup = a.warmup;
	r.requests = a.requests;
	for (int i = -1; i < argc; i++) {
		size_t l = strlen(command);

		snprintf(command + l, sizeof(command) - l, "%s%s", i < 0 ? FM_PROG : " ",
			i < 0 ? "" : argv[i]);
	}
	if (a.out)
		snprintf(dir, sizeof(dir), "%s", a.out);
	else if (st_interrupted_dir(command, dir, sizeof(dir))) {
		fprintf(stderr, FM_PROG ": resuming the interrupted study in %s (the same "
			"command)\n", dir);
	} else {
		fm_default_out("study", dir, sizeof(dir));
	}
	if (fl_mkdir_p(dir, 0755, NULL, 0) != 0) {
		fprintf(stderr, FM_PROG ": cannot make %s: %s\n", dir, strerror(errno));
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	if (!a.quiet)
		fprintf(stderr, FM_PROG ": native cost model (short native runs and the "
			"library's plan)\n");
	if (st_model(&r, &m) != 0) {
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	st_cap_footprints(&a, &m);
	st_leaf_footprints(&a, &r);
	n = st_points(&a, &r, points);
	if (st_plan_facts(points, n, &r) != 0)
		fprintf(stderr, FM_PROG ": some points have no plan (see summary.md)\n");
	st_dedupe(points, n);
	if (a.shard_n > 1)
		st_shard(points, n, a.shard_k, a.shard_n);
	for (size_t i = 0; i < n; i++)
		if (!points[i].skipped && !points[i].failed)
			resumed += (size_t)st_journal_load(dir, &points[i], &r);
	if (resumed && !a.quiet)
		fprintf(stderr, FM_PROG ": %zu point%s measured by an earlier run of this study "
			"(%s/points): kept, not run again\n", resumed, resumed == 1 ? "" : "s", dir);
	st_budget(&a, &m, points, n, &total_s);
	if (!a.quiet) {
		char b[32];

		fprintf(stderr, FM_PROG ": library %.0f functions (%.0f copies), the plan at most "
			"%.0f functions, %s of code; native %.2f us per extractor call (%.2f us on a "
			"64-function plan); %zu points, estimated %s with %llu jobs (budget %g min)\n",
			m.lib_functions, m.lib_copies, m.plan_functions, st_bstr(m.plan_bytes, b,
			sizeof(b)), m.per_call_s * 1e6, m.small_call_s * 1e6, n,
			fm_dur_str(total_s, d1, sizeof(d1)), (unsigned long long)a.jobs, a.budget_min);
		for (size_t i = 0; i < n; i++) {
			char lab[160];

			point_label(&points[i], lab, sizeof(lab));
			fprintf(stderr, "  %-60s %s%s%s\n", lab,
				fm_dur_str(points[i].eta_s, d1, sizeof(d1)),
				points[i].skipped ? "  skipped: " : "", points[i].skipped ? points[i].why : "");
		}
	}
	st_install_signals();
	ok = st_run_all(points, n, &a, &r, tmp, dir, total_s) + resumed;
	if (st_write_csv(dir, points, n) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s/study.csv\n", dir);
		fm_rmtree(tmp);
		json_decref(notes);
		free(points);
		return FM_EXIT_RUN;
	}
	{
		char i1[64];

		fm_cache_str(&r.geo.i1, i1, sizeof(i1));
		char lab[128];
		snprintf(lab, sizeof(lab), "%s, I1 %s", a.cpu, i1);
		plots_ok = st_plots(dir, points, n, &a, &r, lab) == 0;
	}
	if (!plots_ok)
		fprintf(stderr, FM_PROG ": gnuplot failed (see %s/gnuplot.log)\n", dir);
	st_write_summary(dir, points, n, &a, &r, notes, command, total_s, fm_now() - t0, &m,
		plots_ok);
	if (fm_write_report_html(dir, "study", err, sizeof(err)) != 0)
		fprintf(stderr, FM_PROG ": warning: %s/report.html not written: %s\n", dir, err);
	st_write_json(dir, points, n, command, notes, &m, &a, &r, (int)st_stop_signal);
	for (size_t i = 0; i < n; i++)
		fm_sim_free(&points[i].sim);
	fm_rmtree(tmp);
	json_decref(notes);
	free(points);
	printf("study: %zu of %zu points measured, written to %s (summary.md, report.html, "
		"study.csv%s) in %s\n", ok, n, dir, plots_ok ? ", plots" : "",
		fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
	if (st_stop_signal) {
		fprintf(stderr, FM_PROG ": interrupted by signal %d (%s): %zu of %zu points "
			"measured (%zu by an earlier run); the same command resumes the study\n",
			(int)st_stop_signal, strsignal(st_stop_signal), ok, n, resumed);
		return 128 + st_stop_signal;
	}
	return ok ? FM_EXIT_OK : FM_EXIT_RUN;
}
