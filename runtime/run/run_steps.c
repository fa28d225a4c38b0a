/* run_steps.c: the steps of `frontload run`: one rate through every driver, the search
 * and the fixed rates. */
#include "run_steps.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "run_drvline.h"
#include "run_host.h"
#include "run_launch.h"
#include "run_procs.h"
#include "run_result.h"
#include "run_search.h"
#include "run_status.h"

#define RUN_STEP_SLACK_S 30.0    /* a step may take warm-up + window + drain + this */
#define RUN_STATS_WAIT_S 3.0     /* a leaf answers SIGUSR1 with a stats file this fast */

/* A fresh stats snapshot of in's leaf. Ours: SIGUSR1, then wait for the file to be
 * replaced (it is written to a temp file and renamed, so a new inode means a new
 * snapshot). Remote: a STATS frame to its port (run_remote_snapshot). NULL when it is
 * gone or does not answer in time. */
static json_t *run_leaf_snapshot(struct fl_run *r, struct fl_run_instance *in)
{
	struct stat st;
	if (!in->own_leaf)
		return run_remote_snapshot(r, in, 0);
	if (!fl_proc_running(&in->leaf))
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
		*slot = run_leaf_snapshot(r, in);
	}
}

/* After an overloaded step the leaves may still hold requests the driver gave up on:
 * wait (up to max_s) until every leaf we started has none in flight, so the next step
 * starts from an idle service. Remote leaves are asked over their port (STATS). */
static void run_settle(struct fl_run *r, double max_s)
{
	for (double end = fl_run_now() + max_s; !run_signal && fl_run_now() < end;) {
		int busy = 0;
		for (unsigned i = 0; i < r->ninst && !busy; i++) {
			json_t *j = run_leaf_snapshot(r, &r->inst[i]);
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
	} else {
		/* The steps still to come after this one, the last a final window. */
		unsigned more = fl_search_remaining(&r->search);
		if (more > 1)
			eta += (double)(more - 2) * (c->warmup_s + c->search.step_s + 0.5);
		if (more > 1 || phase != FL_PHASE_FINAL)
			eta += c->warmup_s + c->search.final_s;
	}
	return eta;
}

/* Take the complete lines of dv's output. Returns 1 with o filled when a step result
 * arrived, 0 when none yet, -1 on failure (status set), -2 at end of output. */
static int run_read_driver(struct fl_run *r, struct fl_run_driver *dv,
	struct fl_run_obs *o)
{
	char err[1024], *line;
	size_t len;
	int got = run_drv_line(r, dv, &line, &len);
	if (got != 1)
		return got;
	if (dv->jsonl) {
		fprintf(dv->jsonl, "%s\n", line);
		fflush(dv->jsonl);
	}
	int rc = fl_result_parse_obs(line, o, err, sizeof err);
	run_drv_consume(dv, len);
	o->seed = dv->seed;
	if (rc == 0)
		return 1;
	char what[1200];
	snprintf(what, sizeof what, "%s the step: %s", rc == 1 ? "refused" :
		"answered something other than a step result to", err);
	run_driver_failed(r, dv, what);
	return -1;
}

/* The drivers of a step, flat: every instance's, in order. */
struct run_slots {
	unsigned n;
	struct fl_run_driver *dv[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];
	struct fl_run_obs *obs[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];  /* where each
		driver's result goes: the instance's observation, or with several drivers its
		drv[d] */
	unsigned share[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];  /* in-flight ceiling */
	unsigned ways[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];   /* its instance's drivers */
};

/* Lay out st's slots; with several drivers per instance each instance gets its drivers'
 * observations, and driver d the d-th share of inflight (at least 1). 0, or -1 out of
 * memory. */
static int run_slots_init(struct fl_run *r, struct fl_run_step *st, unsigned inflight,
	struct run_slots *sl)
{
	sl->n = 0;
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct fl_run_obs *o = &st->inst[i];
		if (in->ndrv > 1) {
			o->drv = calloc(in->ndrv, sizeof *o->drv);
			if (o->drv == NULL)
				return -1;
			o->ndrv = in->ndrv;
		}
		for (unsigned d = 0; d < in->ndrv; d++) {
			unsigned share = inflight / in->ndrv + (d < inflight % in->ndrv);
			sl->dv[sl->n] = &in->drv[d];
			sl->obs[sl->n] = in->ndrv > 1 ? &o->drv[d] : o;
			sl->ways[sl->n] = in->ndrv;
			sl->share[sl->n++] = share ? share : 1;
		}
	}
	return 0;
}

/* Several drivers per instance: merge each instance's into its observation. 0, or -1
 * (status set). */
static int run_merge_drivers(struct fl_run *r, struct fl_run_step *st)
{
	char err[1024];
	for (unsigned i = 0; i < r->ninst; i++) {
		if (st->inst[i].ndrv <= 1)
			continue;
		if (fl_result_obs_merge(&st->inst[i], err, sizeof err) != 0) {
			run_set_status(r, FL_RUN_FAILED, "instance %u, step %u: %s", i, st->number,
				err);
			return -1;
		}
	}
	return 0;
}

/* Run one step at qps per instance. inflight: the drivers' in-flight ceiling (0: leave
 * it). snap: take leaf stats around the measured window. Returns 0 (step kept), -1
 * failed, -2 interrupted (the partial step is kept). */
static int run_step(struct fl_run *r, enum fl_search_phase phase, double qps, double warmup,
	double duration, unsigned inflight, int snap)
{
	struct fl_run_step st;
	char cmd[160], rate[32], eta[32], ceil_txt[32] = "";
	static struct run_slots sl;  /* large; one step runs at a time */
	static int got[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];
	int ngot = 0, rc = 0;
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
	st.inflight = inflight;
	st.verdict = FL_VERDICT_UNJUDGED;
	st.ninst = r->ninst;
	st.host_cpu_pct = -1;
	st.inst = calloc(r->ninst, sizeof *st.inst);
	if (st.inst == NULL || run_slots_init(r, &st, inflight, &sl) != 0) {
		run_set_status(r, FL_RUN_FAILED, "out of memory");
		rc = -1;
		goto out;
	}
	memset(got, 0, sizeof got);
	double t_start = fl_run_now();
	st.started_s = t_start - r->t0;
	double win_start = t_start + warmup, win_end = win_start + duration;
	double deadline = win_end + r->cfg.driver_timeout_s + RUN_STEP_SLACK_S;
	double interrupt_at = 0;

	snprintf(rate, sizeof rate, "%.1f qps%s", qps * r->ninst, r->ninst > 1 ? " total" : "");
	run_fmt_secs(run_eta(r, phase, warmup + duration), eta, sizeof eta);
	if (inflight)
		snprintf(ceil_txt, sizeof ceil_txt, ", %u in flight at most", inflight);
	run_say(r, !r->tty, RUN_PROG ": step %u %s %s: %g s warm-up + %g s%s, ETA %s",
		st.number, fl_search_phase_name(phase), rate, warmup, duration, ceil_txt, eta);

	/* Each driver of an instance runs its share: the rate and the ceiling split N ways.
	 * A final window's driver stops it once its miss is certain, when it alone measures
	 * its instance's p95 (the rule is sound for one driver's p95, not a pooled one), but
	 * not before FL_SEARCH_SAT_MIN_S: a window that fell behind that long still reads
	 * the saturation S, so the next final runs under S / 1.05 (CI, 12-06: the first two
	 * of three quick finals stopped before 10 s and read no S, and the three missed at
	 * 265, 259 and 246 qps where the leaf answered 217, 190 and 225/s). */
	for (unsigned k = 0; k < sl.n; k++) {
		double q = qps / sl.ways[k];
		if (inflight && phase == FL_PHASE_FINAL && sl.ways[k] == 1 && !r->cfg.full_finals)
			snprintf(cmd, sizeof cmd, "step %.6f %.6f %.6f %u %.6f %.6f %.6f\n", q,
				warmup, duration, sl.share[k], r->cfg.search.sla_p95_ms,
				r->cfg.search.max_error_rate, FL_SEARCH_SAT_MIN_S);
		else if (inflight)
			snprintf(cmd, sizeof cmd, "step %.6f %.6f %.6f %u\n", q, warmup, duration,
				sl.share[k]);
		else
			snprintf(cmd, sizeof cmd, "step %.6f %.6f %.6f\n", q, warmup, duration);
		if (run_drv_send(sl.dv[k], cmd) != 0) {
			char what[256];
			snprintf(what, sizeof what, "could not be sent the step: %s", strerror(errno));
			run_driver_failed(r, sl.dv[k], what);
			rc = -1;
			goto out;
		}
	}

	while (ngot < (int)sl.n) {
		static struct pollfd pfd[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];
		static unsigned map[FL_RUN_MAX_INSTANCES * FL_RUN_MAX_DRIVERS];
		unsigned np = 0;
		for (unsigned k = 0; k < sl.n; k++)
			if (!got[k]) {
				pfd[np] = (struct pollfd){ sl.dv[k]->proc.from_fd, POLLIN, 0 };
				map[np++] = k;
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
		for (unsigned p = 0; p < np; p++) {
			unsigned k = map[p];
			if (!(pfd[p].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int x = run_read_driver(r, sl.dv[k], sl.obs[k]);
			if (x == 1) {
				got[k] = 1;
				ngot++;
			} else if (x == -1) {
				rc = -1;
				goto out;
			} else if (x == -2) {
				if (interrupt_at) {
					got[k] = 1;  /* stopped by us before it could report */
					ngot++;
					continue;
				}
				run_driver_failed(r, sl.dv[k], "closed its output mid-step");
				rc = -1;
				goto out;
			}
		}
		if (run_signal && !interrupt_at) {
			/* The drivers end the step early and report what they measured. */
			interrupt_at = now;
			for (unsigned k = 0; k < sl.n; k++)
				if (fl_proc_running(&sl.dv[k]->proc))
					kill(sl.dv[k]->proc.pid, SIGTERM);
		}
		if (interrupt_at && now - interrupt_at > RUN_STOP_GRACE_MS / 1000.0)
			break;
		if (!interrupt_at && run_check_servers(r)) {
			rc = -1;
			goto out;
		}
		if (now > deadline) {
			for (unsigned k = 0; k < sl.n; k++)
				if (!got[k]) {
					char what[128];
					snprintf(what, sizeof what, "gave no result within %.0f s of the "
						"step's start", deadline - t_start);
					run_driver_failed(r, sl.dv[k], what);
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
					fl_verdict_name(r->steps[r->nsteps - 1].verdict));
			run_fmt_secs(run_eta(r, phase, left), eta, sizeof eta);
			run_say(r, 0, RUN_PROG ": step %u %s %s: %s, %d/%u reported%s, ETA %s",
				st.number, fl_search_phase_name(phase), rate, now < win_start ?
				"warming up" : now < win_end ? "measuring" : "draining", ngot, sl.n,
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
	if (run_merge_drivers(r, &st) != 0) {
		rc = -1;
		goto out;
	}
	fl_result_step_aggregate(&st, r->cfg.batch_means);
	if (interrupt_at) {
		st.complete = 0;
		st.pass = 0;
		snprintf(st.why, sizeof st.why, "interrupted by signal %d", (int)run_signal);
		rc = -2;
	} else if (phase == FL_PHASE_FIXED) {
		st.verdict = fl_search_judge(&r->cfg.search, &st.sum, st.why, sizeof st.why);
	} else {
		int v = fl_search_record(&r->search, &st.sum, st.why, sizeof st.why);
		st.verdict = v < 0 ? FL_VERDICT_UNJUDGED : (enum fl_verdict)v;
	}
	st.pass = st.verdict == FL_VERDICT_PASS;
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
	char cpu[16] = "?", ci[64] = "";
	if (s->host_cpu_pct >= 0)
		snprintf(cpu, sizeof cpu, "%.0f%%", s->host_cpu_pct);
	if (s->sum.p95_lo_ms >= 0 && s->sum.p95_hi_ms >= 0)
		snprintf(ci, sizeof ci, " [%.1f..%.1f]", s->sum.p95_lo_ms, s->sum.p95_hi_ms);
	const char *verdict = s->pass ? "pass" :
		s->verdict == FL_VERDICT_FAIL ? "FAIL" : s->verdict == FL_VERDICT_UNSURE ?
		"unsure" : "not judged";
	char p95[32] = "n/a", p99[32] = "n/a";
	if (isfinite(s->worst.p95))
		snprintf(p95, sizeof p95, "%.1f ms", s->worst.p95);
	if (isfinite(s->worst.p99))
		snprintf(p99, sizeof p99, "%.1f ms", s->worst.p99);
	if (rc == -2)  /* cut short: what it measured is partial, so no figures here */
		run_say(r, 1, RUN_PROG ": step %u %s %s: interrupted (cut short; its partial "
			"counts are in result.json)", s->number, fl_search_phase_name(phase), rate);
	else
		run_say(r, 1, RUN_PROG ": step %u %s %s: achieved %.1f qps, p95 %s%s, p99 %s, "
			"errors %llu, host cpu %s: %s%s%s", s->number, fl_search_phase_name(phase),
			rate, s->sum.achieved_qps, p95, ci, p99, (unsigned long long)s->sum.errors,
			cpu, verdict, s->pass ? "" : ": ", s->pass ? "" : s->why);
	run_write(r);
	if (rc == 0 && (!s->pass || s->timeouts > 0))
		run_settle(r, fmin(10, r->cfg.warmup_s + r->cfg.search.step_s));
out:
	if (st.inst) {
		for (unsigned i = 0; i < r->ninst; i++)
			fl_result_obs_free(&st.inst[i]);
		free(st.inst);
	}
	return rc;
}

int run_search_all(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	struct fl_search_step st;
	int rc;

	fl_search_init(&r->search, &c->search);
	while (fl_search_next(&r->search, &st)) {
		int final = st.phase == FL_PHASE_FINAL;
		/* A probe needs only the connections warm, not the leaf's caches. */
		double warm = st.phase == FL_PHASE_PROBE ? fmin(c->warmup_s, 0.5) : c->warmup_s;
		if (final)
			run_say(r, 1, RUN_PROG ": final window at %.1f qps%s: %s", st.qps * r->ninst,
				r->ninst > 1 ? " total" : "", r->search.final_note);
		rc = run_step(r, st.phase, st.qps, warm, st.duration_s, st.inflight, final);
		if (rc != -1 && final) {
			r->final_step = (long)r->nsteps - 1;
			r->final_host_cpu_pct = r->steps[r->final_step].host_cpu_pct;
		}
		if (rc != 0)
			return rc;
	}
	run_say(r, 1, RUN_PROG ": search %s: %s", r->search.converged ? "converged" :
		"did not converge", r->search.reason);
	run_write(r);
	return 0;
}

int run_fixed_all(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	for (unsigned i = 0; i < c->nfixed; i++) {
		int last = i + 1 == c->nfixed;
		int rc = run_step(r, FL_PHASE_FIXED, c->fixed_qps[i], c->warmup_s, c->duration_s,
			0, last);
		if (rc != -1 && last) {
			r->final_step = (long)r->nsteps - 1;
			r->final_host_cpu_pct = r->steps[r->final_step].host_cpu_pct;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}
