/* validate_leaf_run.c: one run of the service for `validate` on the running leaf (the
 * argv of mock, leaf and driver, valgrind's around the simulated leaf, the warm-up and
 * window steps with the leaf's stats around the window), and the simulated window spread
 * over several leaves, each under its own valgrind, run side by side in child processes
 * (valgrind runs a leaf's threads one at a time, so one simulated leaf uses one CPU). */
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

#include "cpumodel.h"
#include "leafrun.h"
#include "leafwin.h"
#include "measure.h"
#include "mutil.h"
#include "process.h"
#include "validate_leaf.h"

/* ---- the runs' argv ---- */

#define VL_PING_MS 200.0                /* frontload-leaf --rpc-ping-ms default */
#define VL_STALE_MS 10000.0             /* frontload-leaf --stale-ms default */
/* The simulated leaves' driver timeout and fanout timeout, in --timeout-s: valgrind's
 * translation of code never run before (most of the generated library's) makes a
 * simulated request of the default build take ~200x its native CPU, and requests that
 * arrive while one runs wait for it. */
#define VL_SIM_TIMEOUT_X 5.0
#define VL_RPC_TIMEOUT_MAX_MS 3600000.0 /* frontload-leaf --rpc-timeout-ms's upper bound */

/* A copy of n bytes of s owned by pool ("" when the pool is full or memory ran out). */
static const char *vl_dup(const char *s, size_t n, char **pool, int *npool)
{
	char *d = *npool < VL_POOL ? strndup(s, n) : NULL;
	if (d == NULL)
		return "";
	pool[(*npool)++] = d;
	return d;
}

/* Split "A B C" into argv entries appended to out at n (at most max). Returns the new
 * count; out[count] is NULL. */
static int vl_split(const char *text, const char **out, int n, int max, char **pool,
	int *npool)
{
	while (text && *text && n < max) {
		text += strspn(text, " \t");
		size_t k = strcspn(text, " \t");
		if (k > 0)
			out[n++] = vl_dup(text, k, pool, npool);
		text += k;
	}
	out[n] = NULL;
	return n;
}

/* ---- one run of the service ---- */

void vl_phase_free(struct vl_phase *p)
{
	json_decref(p->step);
	json_decref(p->before);
	json_decref(p->after);
	p->step = p->before = p->after = NULL;
}

/* Run `callgrind_control ARG PID` (output to log). 0, or -1 with err. */
static int vl_cgctl(const char *arg, pid_t pid, const char *log, char *err, size_t errlen)
{
	char p[32], why[512];
	snprintf(p, sizeof p, "%d", (int)pid);
	const char *const on[] = { "callgrind_control", "-i", "on", p, NULL };
	const char *const other[] = { "callgrind_control", arg, p, NULL };
	int rc = fl_spawn_wait(strcmp(arg, "-i") == 0 ? on : other, &(struct fl_spawn_opts){
		.stdout_path = log, .stderr_path = log, .append = 1 }, why, sizeof why);
	if (rc != 0) {
		snprintf(err, errlen, "callgrind_control %s %d failed (%s; log %s)", arg, (int)pid,
			rc < 0 ? why : "non-zero exit status", log);
		return -1;
	}
	return 0;
}

/* Stats once the leaf holds no request (received = replied), at most wait_s. */
static json_t *vl_idle_stats(struct fm_leaf *l, double wait_s, char *err, size_t errlen)
{
	double t0 = fm_now();
	for (;;) {
		json_t *s = fm_leaf_stats(l, wait_s, err, errlen);
		if (s == NULL)
			return NULL;
		json_t *rq = json_object_get(s, "requests");
		json_int_t in = json_integer_value(json_object_get(rq, "received"));
		json_int_t out = json_integer_value(json_object_get(rq, "replied")) +
			json_integer_value(json_object_get(rq, "dropped_disconnected"));
		if (in <= out || fm_now() - t0 > wait_s)
			return s;
		json_decref(s);
		struct timespec ts = { 0, 200000000 };
		nanosleep(&ts, NULL);
	}
}

/* The flags every run gives the leaf: the fanout timeout (c->timeout_s: a simulated leaf
 * gets its stretched one) and, simulated, --pmu off, the keepalive period and staleness;
 * then the knobs, then --leaf-args (the leaf keeps the last value of a flag, so what the
 * user gives wins). */
void vl_leaf_flags(const struct vl_args *a, struct fm_leaf_cfg *c, char **pool,
	int *npool, int simulated)
{
	int n = 0;
	char buf[64];
	/* A fanout call must not time out because the simulated leaf is slow to read it;
	 * the leaf takes at most an hour (--timeout-s 900 stretched 5x would be refused). */
	snprintf(buf, sizeof buf, "%.0f", fmin(c->timeout_s * 1000, VL_RPC_TIMEOUT_MAX_MS));
	c->leaf_args[n++] = "--rpc-timeout-ms";
	c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
	if (a->leaf_profile) {  /* the leaf puts its flags first, whatever their place here */
		c->leaf_args[n++] = "--profile";
		c->leaf_args[n++] = (char *)a->leaf_profile;
	}
	if (simulated) {
		/* perf_event_open under valgrind measures nothing of the guest. */
		c->leaf_args[n++] = "--pmu";
		c->leaf_args[n++] = "off";
		/* The keepalive on the simulated clock: valgrind runs the leaf ~FM_SLOWDOWN times
		 * slower, so the default 200 ms period would send that many more pings per
		 * request, and a FANOUT thread waiting for the big lock would miss its 3 periods
		 * and reconnect (failing the calls in flight). Given flags come later and win. */
		snprintf(buf, sizeof buf, "%.0f", VL_PING_MS * FM_SLOWDOWN);
		c->leaf_args[n++] = "--rpc-ping-ms";
		c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
		/* Staleness on the simulated clock too: a request that waits behind another
		 * for the default 10 s under valgrind is not stale on the native one. */
		snprintf(buf, sizeof buf, "%.0f", VL_STALE_MS * FM_SLOWDOWN);
		c->leaf_args[n++] = "--stale-ms";
		c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
	}
	for (int i = 0; i + 1 < a->nknobs && n + 2 < FM_LEAF_MAX_ARGS; i += 2) {
		snprintf(buf, sizeof buf, "--%s", a->knobs[i]);
		c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
		if (a->knobs[i + 1])
			c->leaf_args[n++] = a->knobs[i + 1];
	}
	vl_split(a->leaf_args, c->leaf_args, n, FM_LEAF_MAX_ARGS - 1, pool, npool);
	n = 0;
	if (simulated) {
		/* Fixed gaps: at the low simulated rate a Poisson cluster would queue requests
		 * behind each other for seconds. */
		c->driver_args[n++] = "--arrival";
		c->driver_args[n++] = "fixed";
	}
	vl_split(a->driver_args, c->driver_args, n, FM_LEAF_MAX_ARGS - 1, pool, npool);
}

/* valgrind's argv before the leaf's. */
void vl_wrap(const struct fm_geo *g, const char *dir, struct fm_leaf_cfg *c,
	char **pool, int *npool)
{
	static const char *const fixed[] = {
		"valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
		"--branch-sim=yes", "--dump-instr=yes", "--dump-line=no", "--collect-jumps=yes",
		"--separate-threads=yes",
	};
	char buf[4300];
	int n = 0;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		c->wrap[n++] = fixed[i];
	const struct fm_cache *lv[3] = { &g->i1, &g->d1, &g->ll };
	const char *nm[3] = { "I1", "D1", "LL" };
	for (int k = 0; k < 3; k++) {
		snprintf(buf, sizeof buf, "--%s=%u,%u,%u", nm[k], lv[k]->size, lv[k]->assoc,
			lv[k]->line);
		c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	}
	snprintf(buf, sizeof buf, "--callgrind-out-file=%s/%s.cg", dir, c->tag);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	snprintf(buf, sizeof buf, "--log-file=%s/%s-valgrind.log", dir, c->tag);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	c->wrap[n] = NULL;
}

/* One run: start, warm-up step, snapshot, window step, snapshot, stop. */
int vl_run(const struct vl_args *a, const struct fm_leaf_cfg *c, double qps,
	double warmup_s, double window_s, const char *dir, struct vl_phase *ph,
	struct vl_prof *prof)
{
	struct fm_leaf l;
	char err[2048], log[4200];
	int simulated = c->wrap[0] != NULL, rc = -1;
	double t0 = fm_now(), slack = simulated ? 600 : 60;

	snprintf(log, sizeof log, "%s/%s-callgrind_control.log", dir, ph->tag);
	vl_say(a, "%s run: starting mock, leaf%s and driver", ph->tag, simulated ?
		" (under valgrind callgrind)" : "");
	if (fm_leaf_start(c, &l, err, sizeof err) != 0)
		goto out;
	if (simulated && vl_cgctl("-i", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if (warmup_s > 0) {
		vl_say(a, "%s run: warm-up step, %.3g qps for %.1f s", ph->tag, qps, warmup_s);
		json_t *w = fm_leaf_step(&l, qps, 0, warmup_s, warmup_s + c->timeout_s + slack,
			err, sizeof err);
		if (w == NULL)
			goto out;
		json_decref(w);
	}
	if ((ph->before = vl_idle_stats(&l, c->timeout_s + slack, err, sizeof err)) == NULL)
		goto out;
	if (simulated && vl_cgctl("-z", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if (prof && prof->want) {
		prof->perf = fm_prof_record_start(l.leaf, (unsigned)a->perf_hz, prof->data,
			prof->log, prof->why, sizeof prof->why);
		if (prof->perf < 0)
			prof->perf = 0;
	}
	vl_say(a, "%s run: measured window, %.3g qps for %.1f s", ph->tag, qps, window_s);
	ph->step = fm_leaf_step(&l, qps, 0, window_s, window_s + c->timeout_s + slack, err,
		sizeof err);
	if (prof && prof->perf > 0 && fm_prof_record_stop(prof->perf, prof->log, prof->why,
	    sizeof prof->why) != 0)
		prof->perf = 0;
	if (ph->step == NULL)
		goto out;
	if (simulated && vl_cgctl("-d", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if ((ph->after = fm_leaf_stats(&l, c->timeout_s + slack, err, sizeof err)) == NULL)
		goto out;
	ph->whole = fm_window_whole(ph->step, ph->before, ph->after, ph->why, sizeof ph->why);
	rc = 0;
out:
	fm_leaf_stop(&l, 10);
	ph->wall_s = fm_now() - t0;
	if (rc != 0)
		snprintf(ph->err, sizeof ph->err, "%s", err);
	return rc;
}

json_t *vl_phase_json(const struct vl_phase *p)
{
	return json_pack("{s:b,s:s,s:f,s:s,s:O?}", "whole", p->whole, "why", p->why,
		"wall_s", p->wall_s, "error", p->err, "driver_step", p->step);
}

/* A phase written by vl_sim_child back into ph (its tag kept). 0, or -1 with ph->err. */
static int vl_phase_load(const char *dir, struct vl_phase *ph)
{
	char path[4200];
	json_error_t je;

	snprintf(path, sizeof path, "%s/%s-phase.json", dir, ph->tag);
	json_t *o = json_load_file(path, 0, &je);
	if (o == NULL) {
		snprintf(ph->err, sizeof ph->err, "no result from the child process (%.1500s: %s)",
			path, je.text);
		return -1;
	}
	const char *why = json_string_value(json_object_get(o, "why"));
	const char *e = json_string_value(json_object_get(o, "error"));
	ph->whole = json_is_true(json_object_get(o, "whole"));
	ph->wall_s = json_number_value(json_object_get(o, "wall_s"));
	snprintf(ph->why, sizeof ph->why, "%s", why ? why : "");
	snprintf(ph->err, sizeof ph->err, "%s", e ? e : "");
	json_t *step = json_object_get(o, "driver_step");
	ph->step = json_is_object(step) ? json_incref(step) : NULL;
	json_decref(o);
	return 0;
}

/* A child's whole life: its run, then its phase as JSON for the parent. Exit status 0
 * when the run ran and its phase was written. */
static int vl_sim_child(const struct vl_args *a, const struct fm_leaf_cfg *c, double qps,
	double warmup_s, double window_s, const char *dir, struct vl_phase *ph)
{
	char path[4200];
	int rc = vl_run(a, c, qps, warmup_s, window_s, dir, ph, NULL);
	json_t *o = vl_phase_json(ph);

	snprintf(path, sizeof path, "%s/%s-phase.json", dir, ph->tag);
	if (o == NULL || json_dump_file(o, path, 0) != 0)
		rc = -1;
	json_decref(o);
	return rc == 0 ? 0 : 1;
}

int vl_sim_leaves(const struct vl_args *a, const struct fm_geo *g, const char *bindir,
	const char *dir, double qps, double warmup_s, int n, const volatile sig_atomic_t *stop,
	struct vl_phase *ph, char **pool, int *npool, char *err, size_t errlen)
{
	struct fm_leaf_cfg c[VL_MAX_SIM_LEAVES];
	pid_t kid[VL_MAX_SIM_LEAVES] = { 0 };
	double window[VL_MAX_SIM_LEAVES];
	int rc = 0;

	if (n < 1 || n > VL_MAX_SIM_LEAVES) {
		snprintf(err, errlen, "%d simulated leaves: 1..%d", n, VL_MAX_SIM_LEAVES);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		uint64_t reqs = a->sim_requests / (uint64_t)n +
			((uint64_t)k < a->sim_requests % (uint64_t)n);
		/* Fixed gaps send the first request one gap in: reqs + 1/2 gaps hold reqs. */
		window[k] = ((double)reqs + 0.5) / qps;
		snprintf(ph[k].tagbuf, sizeof ph[k].tagbuf, k ? "sim%d" : "sim", k + 1);
		ph[k].tag = ph[k].tagbuf;
		ph[k].seed = a->seed + (uint64_t)k;
		ph[k].requests = reqs;
		c[k] = (struct fm_leaf_cfg){ .bindir = bindir, .dir = dir, .tag = ph[k].tag,
			.tls = a->tls, .seed = ph[k].seed, .timeout_s = a->timeout_s * VL_SIM_TIMEOUT_X,
			.ready_s = 900, .stop = stop };
		vl_leaf_flags(a, &c[k], pool, npool, 1);
		vl_wrap(g, dir, &c[k], pool, npool);
	}
	for (int k = 1; k < n && rc == 0; k++) {
		fflush(NULL);
		kid[k] = fork();
		if (kid[k] == 0)
			_exit(vl_sim_child(a, &c[k], qps, warmup_s, window[k], dir, &ph[k]));
		if (kid[k] < 0) {
			snprintf(err, errlen, "fork for simulated leaf %d: %s", k + 1,
				strerror(errno));
			rc = -1;
		}
	}
	if (rc == 0 && vl_run(a, &c[0], qps, warmup_s, window[0], dir, &ph[0], NULL) != 0) {
		snprintf(err, errlen, "%s run: %.1900s", ph[0].tag, ph[0].err);
		rc = -1;
	}
	for (int k = 1; k < n; k++) {
		int st = 0, signalled = 0;
		if (kid[k] <= 0)
			continue;
		if (rc != 0) {
			kill(kid[k], SIGTERM);
			signalled = 1;
		}
		while (waitpid(kid[k], &st, 0) < 0) {
			/* Our SIGINT/SIGTERM: the child stops its mock, leaf and driver too. */
			if (errno == EINTR && *stop && !signalled) {
				kill(kid[k], SIGTERM);
				signalled = 1;
			} else if (errno != EINTR) {
				break;
			}
		}
		int loaded = vl_phase_load(dir, &ph[k]) == 0;
		if (rc == 0 && (!loaded || !WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			snprintf(err, errlen, "%s run: %.1900s", ph[k].tag, ph[k].err[0] ? ph[k].err :
				"its process failed");
			rc = -1;
		}
	}
	return rc;
}
