/* validate_leaf.c: `validate` on the running leaf: mock, leaf and driver as frontload run
 * starts them, a fixed low rate, one window of whole requests, measured natively (stage
 * clock, per-pool PMU groups, perf cpu-clock profile) and under callgrind (cache and
 * branch simulation, per object and per pool). This file runs the service (the runs'
 * argv, one run's steps) and holds the command's main; the options are in
 * validate_leaf_args.c, the simulated window's rows in validate_leaf_sim.c, the report
 * and the verdicts in validate_leaf_report.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cpumodel.h"
#include "leafrun.h"
#include "leafwin.h"
#include "measure.h"
#include "mix.h"
#include "mutil.h"
#include "objects.h"
#include "osfile.h"
#include "paths.h"
#include "process.h"
#include "profile.h"
#include "simrun.h"
#include "targets.h"
#include "validate_leaf.h"

/* The signal (SIGINT, SIGTERM) that stops validate, 0 while none: written by the handler,
 * read by every wait of the service (fm_leaf_cfg.stop), which then fails, so the run stops
 * mock, leaf and driver (they lead process groups of their own: a terminal's Ctrl-C or a
 * study's SIGTERM reaches only this process) and validate exits 128 + the signal. */
static volatile sig_atomic_t vl_stop_signal;

static void vl_on_signal(int sig)
{
	vl_stop_signal = sig;
}

static void vl_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vl_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ---- the runs' argv ---- */

#define VL_POOL (4 * FM_LEAF_MAX_ARGS) /* strings the runs' argv own */
#define VL_PING_MS 200.0                /* frontload-leaf --rpc-ping-ms default */

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

/* What one run (native or simulated) measured around its window. */
struct vl_phase {
	const char *tag;          /* "native", "sim" */
	json_t *step;             /* the window step's driver result */
	json_t *before, *after;   /* leaf stats around the window */
	int whole;                /* the window held only whole, successful requests */
	char why[1024];           /* why not */
	double wall_s;
	char err[2048];           /* a failed run: why ("" when it ran) */
};

static void vl_phase_free(struct vl_phase *p)
{
	json_decref(p->step);
	json_decref(p->before);
	json_decref(p->after);
	p->step = p->before = p->after = NULL;
}

void vl_say(const struct vl_args *a, const char *fmt, ...)
{
	va_list ap;
	if (a->quiet)
		return;
	va_start(ap, fmt);
	fputs(FM_PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
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

/* The flags every run gives the leaf: the fanout timeout (and, simulated, --pmu off and
 * the keepalive period), then the knobs, then --leaf-args (the leaf keeps the last value
 * of a flag, so what the user gives wins). */
static void vl_leaf_flags(const struct vl_args *a, struct fm_leaf_cfg *c, char **pool,
	int *npool, int simulated)
{
	int n = 0;
	char buf[64];
	/* A fanout call must not time out because the simulated leaf is slow to read it. */
	snprintf(buf, sizeof buf, "%.0f", a->timeout_s * 1000);
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
static void vl_wrap(const struct fm_geo *g, const char *dir, struct fm_leaf_cfg *c,
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
	snprintf(buf, sizeof buf, "--callgrind-out-file=%s/sim.cg", dir);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	snprintf(buf, sizeof buf, "--log-file=%s/sim-valgrind.log", dir);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	c->wrap[n] = NULL;
}

/* One run: start, warm-up step, snapshot, window step, snapshot, stop. */
static int vl_run(const struct vl_args *a, const struct fm_leaf_cfg *c, double qps,
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

/* ---- main ---- */

static json_t *vl_phase_json(const struct vl_phase *p)
{
	return json_pack("{s:b,s:s,s:f,s:s,s:O?}", "whole", p->whole, "why", p->why,
		"wall_s", p->wall_s, "error", p->err, "driver_step", p->step);
}

/* The simulated rate: a quarter of what one simulated request takes at most to run alone
 * (the native window's CPU per request x FM_SLOWDOWN, valgrind running one thread at a
 * time, plus its median latency, which the mock's delays dominate), within
 * [0.02, --qps]. */
static double vl_sim_rate(const struct vl_args *a, const struct vl_phase *nat, json_t *sw)
{
	double sent = (double)json_integer_value(json_object_get(nat->step, "sent"));
	double cpu = (double)json_integer_value(json_object_get(sw, "process_cpu_ns")) / 1e9;
	double p50 = json_number_value(json_object_get(json_object_get(nat->step,
		"latency_ms"), "p50")) / 1e3;
	if (!(sent > 0) || !(cpu > 0))
		return fmin(a->qps, 0.1);
	double per = cpu / sent * FM_SLOWDOWN + (isfinite(p50) ? p50 : 0);
	return fmax(0.02, fmin(a->qps, 0.25 / per));
}

/* --keep: the scratch directory's files copied into keep (cp -r, no shell). */
static void vl_keep(const char *tmp, const char *keep)
{
	char src[4200], why[512] = "cp -r exited non-zero";
	if (keep == NULL)
		return;
	snprintf(src, sizeof src, "%s/.", tmp);
	const char *const cp[] = { "cp", "-r", src, keep, NULL };
	if (fl_mkdir_p(keep, 0755, why, sizeof why) != 0 ||
	    fl_spawn_wait(cp, &(struct fl_spawn_opts){ 0 }, why, sizeof why) != 0)
		fprintf(stderr, FM_PROG ": --keep %s: copy failed (%s)\n", keep, why);
}

int fm_validate_leaf_main(int argc, char **argv)
{
	struct vl_args a;
	struct fm_geo geo;
	struct fl_targets tg = { 0 };
	struct vl_phase nat = { .tag = "native" }, sim = { .tag = "sim" };
	struct vl_prof prof = { 0 };
	struct vl_sim vs;
	struct fl_measured m[T_N];
	json_t *notes = NULL, *out = json_object(), *sw = NULL, *pmu = NULL;
	char err[2048], tpath[4096], tmp[256], bindir[4096], rules[4200];
	char *pool[VL_POOL];
	int npool = 0, rc = FM_EXIT_RUN, have_sim = 0;
	double t0 = fm_now();
	char sim_why[2048] = "";
	double sim_qps = 0, sim_window = 0, sim_warmup = 0;

	memset(&vs, 0, sizeof vs);
	memset(&geo, 0, sizeof geo);
	tmp[0] = '\0';
	if (vl_parse(argc, argv, &a) != 0)
		return FM_EXIT_USAGE;
	if (fm_geometry(&geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (a.targets)
		snprintf(tpath, sizeof tpath, "%s", a.targets);
	else if (fl_targets_default_path(tpath, sizeof tpath, err, sizeof err) != 0)
		goto fail;
	if (fl_targets_load(tpath, &tg, err, sizeof err) != 0 ||
	    fl_exe_dir(bindir, sizeof bindir) != 0 || fm_mktemp(tmp, sizeof tmp, err,
	    sizeof err) != 0)
		goto fail;

	/* Native run: stage clock, PMU groups, profile. */
	vl_install_signals();
	struct fm_leaf_cfg nc = { .bindir = bindir, .dir = tmp, .tag = "native", .tls = a.tls,
		.seed = a.seed, .timeout_s = a.timeout_s, .ready_s = 120,
		.stop = &vl_stop_signal };
	vl_leaf_flags(&a, &nc, pool, &npool, 0);
	prof.want = a.profile;
	snprintf(prof.data, sizeof prof.data, "%s/native-perf.data", tmp);
	snprintf(prof.log, sizeof prof.log, "%s/native-perf.log", tmp);
	if (vl_run(&a, &nc, a.qps, a.warmup_s, a.window_s, tmp, &nat, &prof) != 0) {
		fprintf(stderr, FM_PROG ": native run failed: %s\n", nat.err);
		goto done;
	}
	if (vl_stop_signal)
		goto done;
	sw = fm_stage_window(nat.before, nat.after);
	pmu = fm_pmu_window(nat.before, nat.after);
	if (prof.want && prof.why[0] == '\0') {
		struct fm_prof_rules rs;
		if (fl_data_path("profile_categories.txt", rules, sizeof rules, prof.why,
		    sizeof prof.why) == 0 && fm_prof_rules_load(rules, &rs, prof.why,
		    sizeof prof.why) == 0) {
			if (fm_prof_report(prof.data, &rs, &prof.p, prof.why, sizeof prof.why) != 0)
				fm_prof_free(&prof.p);
			fm_prof_rules_free(&rs);
		}
	}

	/* Simulated run. */
	if (a.hardware) {
		snprintf(sim_why, sizeof sim_why, "--hardware: no simulated run");
	} else {
		struct fm_leaf_cfg sc = { .bindir = bindir, .dir = tmp, .tag = "sim", .tls = a.tls,
			.seed = a.seed, .timeout_s = a.timeout_s, .ready_s = 900,
			.stop = &vl_stop_signal };
		vl_leaf_flags(&a, &sc, pool, &npool, 1);
		vl_wrap(&geo, tmp, &sc, pool, &npool);
		sim_qps = a.sim_qps > 0 ? a.sim_qps : vl_sim_rate(&a, &nat, sw);
		/* Fixed gaps send the first request one gap in: N + 1/2 gaps hold N. */
		sim_window = ((double)a.sim_requests + 0.5) / sim_qps;
		sim_warmup = fmax(a.warmup_s, 3 / sim_qps);
		vl_say(&a, "sim run: %.3g qps (%s), %llu requests: %.1f s window after %.1f s warm-up",
			sim_qps, a.sim_qps > 0 ? "--sim-qps" : "auto", (unsigned long long)a.sim_requests,
			sim_window, sim_warmup);
		if (vl_run(&a, &sc, sim_qps, sim_warmup, sim_window, tmp, &sim, NULL) != 0) {
			fprintf(stderr, FM_PROG ": simulated run failed: %s\n", sim.err);
			goto done;
		}
		if (!sim.whole) {
			snprintf(sim_why, sizeof sim_why, "the simulated window was not whole: %s",
				sim.why);
		} else if (vl_sim_analyse(tmp, &vs, &a, err, sizeof err) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto done;
		} else {
			have_sim = 1;
		}
	}

	/* The report. */
	double nreq = (double)json_integer_value(json_object_get(nat.step, "sent"));
	double sreq = (double)json_integer_value(json_object_get(sim.step, "sent"));
	char g1[64], g2[64], g3[64];
	printf("frontload validate: the running leaf (mock, leaf, driver as frontload run "
		"starts them%s)\n", a.tls ? ", --tls" : "");
	printf("native window: %.3g qps for %.1f s after %.1f s warm-up: %.0f requests, %s\n", a.qps,
		a.window_s, a.warmup_s, nreq, nat.whole ? "all whole and OK" : nat.why);
	if (!a.hardware)
		printf("simulated window: %.3g qps for %.1f s after %.1f s warm-up: %.0f requests, %s; "
			"%s model (I1 %s, D1 %s, LL %s)\n", sim_qps, sim_window, sim_warmup, sreq,
			sim.whole ? "all whole and OK" : sim.why, a.cpu,
			fm_cache_str(&geo.i1, g1, sizeof g1), fm_cache_str(&geo.d1, g2, sizeof g2),
			fm_cache_str(&geo.ll, g3, sizeof g3));
	for (size_t i = 0; notes && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
	if (have_sim) {
		const struct fl_mix *x = &vs.all.mix;
		printf("\nsimulated window (path simulated; per 1000 instructions: Ir less %llu "
			"rep string iterations = %llu instructions; %.1f%% classified by %s in %.1f s, "
			"objects: %s):\n", (unsigned long long)x->rep_ir_removed,
			(unsigned long long)x->ir_hw, 100 * vs.classified_share, a.objdump ? "objdump" :
			"Capstone", vs.dis_s, vs.objects);
		vl_rows_head("object");
		vl_row_print(&vs.all, &vs.all, sreq);
		uint64_t sum = 0;
		for (int k = 0; k < FM_OBJ_N; k++) {
			sum += vs.kind[k].ir;
			if (vs.kind[k].ir)
				vl_row_print(&vs.kind[k], &vs.all, sreq);
		}
		printf("  (objects' Ir sum %llu = process Ir %llu: %s)\n", (unsigned long long)sum,
			(unsigned long long)vs.all.ir, sum == vs.all.ir ? "yes" : "NO");
		vl_rows_head("pool (threads)");
		for (int p = 0; p < FM_POOL_N; p++)
			if (vs.threads[p]) {
				struct vl_row r = vs.pool[p];
				snprintf(r.name, sizeof r.name, "%s (%d)", fm_pool_name((enum fm_pool)p),
					vs.threads[p]);
				vl_row_print(&r, &vs.all, sreq);
			}
	} else if (!a.hardware) {
		printf("\nsimulated window: not judged: %s\n", sim_why);
	}
	vl_print_stages(sw);
	vl_print_profile(&prof);
	vl_print_pmu(pmu);

	int pass = 0, fail = 0, unm = 0;
	json_t *tj = json_array();
	vl_measure(m, &vs, have_sim, sim_why, pmu, nat.whole ? sw : NULL, nat.whole ? &prof :
		&(struct vl_prof){ .want = 1, .why = "the native window was not whole" });
	vl_print_targets(&tg, m, tj, &pass, &fail, &unm);
	double wall = fm_now() - t0;
	printf("\n%d pass, %d fail, %d unmeasurable; wall time %.0f s (native run %.0f s, "
		"simulated run %.0f s)\n", pass, fail, unm, wall, nat.wall_s, sim.wall_s);

	json_object_set_new(out, "tool", json_string(FM_PROG " validate"));
	json_object_set_new(out, "path", json_string("leaf"));
	json_object_set_new(out, "config", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:I,"
		"s:s}", "qps", a.qps, "warmup_s", a.warmup_s, "window_s", a.window_s, "sim_qps",
		sim_qps, "sim_warmup_s", sim_warmup, "sim_window_s", sim_window, "timeout_s",
		a.timeout_s, "tls", a.tls, "seed", (json_int_t)a.seed, "cpu", a.cpu));
	json_object_set_new(json_object_get(out, "config"), "leaf_profile", a.leaf_profile ?
		json_string(a.leaf_profile) : json_null());
	json_object_set_new(out, "native", vl_phase_json(&nat));
	json_object_set_new(out, "simulated", a.hardware ? json_null() : vl_phase_json(&sim));
	json_object_set_new(out, "stages", json_incref(sw));
	json_object_set_new(out, "pmu", json_incref(pmu));
	json_object_set_new(out, "profile", vl_profile_json(&prof));
	if (have_sim) {
		json_t *ob = json_array(), *po = json_array();
		for (int k = 0; k < FM_OBJ_N; k++)
			if (vs.kind[k].ir)
				json_array_append_new(ob, vl_row_json(&vs.kind[k], &vs.all, sreq));
		for (int p = 0; p < FM_POOL_N; p++)
			if (vs.threads[p]) {
				json_t *r = vl_row_json(&vs.pool[p], &vs.all, sreq);
				json_object_set_new(r, "threads", json_integer(vs.threads[p]));
				json_array_append_new(po, r);
			}
		json_object_set_new(out, "process", vl_row_json(&vs.all, &vs.all, sreq));
		json_object_set_new(out, "objects", ob);
		json_object_set_new(out, "pools", po);
		json_object_set_new(out, "disassembled", json_string(vs.objects));
		json_object_set_new(out, "classified_by", json_pack("{s:s,s:f}", "decoder",
			a.objdump ? "objdump" : "capstone", "seconds", vs.dis_s));
	}
	json_object_set_new(out, "targets", tj);
	json_object_set_new(out, "summary", json_pack("{s:i,s:i,s:i}", "pass", pass, "fail",
		fail, "unmeasurable", unm));
	json_object_set_new(out, "host", fm_host_json());
	json_t *bj = fm_build_json();
	json_object_set_new(out, "build", bj ? bj : json_null());
	json_object_set_new(out, "wall_s", json_real(wall));
	if (a.json && json_dump_file(out, a.json, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s: %s\n", a.json, strerror(errno));
		goto done;
	}
	rc = fail || !nat.whole || (!a.hardware && !sim.whole) ? FM_EXIT_MISSED : FM_EXIT_OK;
	goto done;
fail:
	fprintf(stderr, FM_PROG ": %s\n", err);
done:
	if (vl_stop_signal) {
		fprintf(stderr, FM_PROG ": interrupted by signal %d (%s): mock, leaf and driver "
			"stopped, nothing judged\n", (int)vl_stop_signal, strsignal(vl_stop_signal));
		rc = 128 + vl_stop_signal;
	}
	if (tmp[0]) {
		vl_keep(tmp, a.keep);
		fm_rmtree(tmp);
	}
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	fm_prof_free(&prof.p);
	vl_phase_free(&nat);
	vl_phase_free(&sim);
	json_decref(sw);
	json_decref(pmu);
	json_decref(out);
	json_decref(notes);
	fl_targets_free(&tg);
	return rc;
}
