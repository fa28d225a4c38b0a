/* validate_leaf.c: `validate` on the running leaf: mock, leaf and driver as frontload run
 * starts them, a fixed low rate, one window of whole requests, measured natively (stage
 * clock, per-pool PMU groups, perf cpu-clock profile) and under callgrind (cache and
 * branch simulation, per object and per pool). This file holds the command's main; one
 * run of the service and the simulated leaves side by side are in validate_leaf_run.c,
 * the options in validate_leaf_args.c, the simulated window's rows in
 * validate_leaf_sim.c, the report and the verdicts in validate_leaf_report.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ---- main ---- */

/* A string of the leaf stats' config (the profile it applied), or dflt. */
static const char *vl_leaf_profile(const json_t *stats, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(json_object_get(stats, "config"),
		key));

	return v ? v : dflt;
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

/* --sim-leaves: as given, else (auto) one per online CPU up to 2 (each simulated leaf
 * holds a valgrind of ~4 GB on the default build), never more than the requests. */
static int vl_sim_leaf_count(const struct vl_args *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t n = a->sim_leaves ? a->sim_leaves : (uint64_t)(cpus >= 2 ? 2 : 1);
	return (int)(n < a->sim_requests ? n : a->sim_requests);
}

/* "simulated": {whole, why, wall_s (the slowest leaf's), sent (summed over leaves), leaves
 * [{tag, seed, requests (its share), whole, why, wall_s, error, driver_step}]}. */
static json_t *vl_sims_json(const struct vl_phase *ph, int n, int whole, const char *why,
	double wall_s, double sent)
{
	json_t *leaves = json_array();
	for (int k = 0; k < n; k++) {
		json_t *o = vl_phase_json(&ph[k]);
		json_object_set_new(o, "tag", json_string(ph[k].tag));
		json_object_set_new(o, "seed", json_integer((json_int_t)ph[k].seed));
		json_object_set_new(o, "requests", json_integer((json_int_t)ph[k].requests));
		json_array_append_new(leaves, o);
	}
	return json_pack("{s:b,s:s,s:f,s:I,s:o}", "whole", whole, "why", why, "wall_s", wall_s,
		"sent", (json_int_t)sent, "leaves", leaves);
}

int fm_validate_leaf_main(int argc, char **argv)
{
	struct vl_args a;
	struct fm_geo geo;
	struct fl_targets tg = { 0 };
	struct vl_phase nat = { .tag = "native" }, sims[VL_MAX_SIM_LEAVES];
	struct vl_prof prof = { 0 };
	struct vl_sim vs;
	struct fl_measured m[T_N];
	json_t *notes = NULL, *out = json_object(), *sw = NULL, *pmu = NULL;
	char err[2048], tpath[4096], tmp[256], bindir[4096], rules[4200];
	char *pool[VL_POOL];
	int npool = 0, rc = FM_EXIT_RUN, have_sim = 0;
	double t0 = fm_now();
	char sim_why[2048] = "";
	double sim_qps = 0, sim_window = 0, sim_warmup = 0, sim_wall = 0, sreq = 0;
	int nsim = 0, sim_whole = 0;

	memset(&vs, 0, sizeof vs);
	memset(sims, 0, sizeof sims);
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
	vl_say(&a, "leaf profile: %s (%s)", vl_leaf_profile(nat.after, "profile", "none"),
		vl_leaf_profile(nat.after, "profile_source", "not in the leaf's stats"));
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
		nsim = vl_sim_leaf_count(&a);
		sim_qps = a.sim_qps > 0 ? a.sim_qps : vl_sim_rate(&a, &nat, sw);
		/* Leaf 1 holds the most requests: its window is the longest. */
		sim_window = ((double)((a.sim_requests + (uint64_t)nsim - 1) / (uint64_t)nsim) +
			0.5) / sim_qps;
		sim_warmup = fmax(a.warmup_s, 3 / sim_qps);
		vl_say(&a, "sim run: %.3g qps (%s), %llu requests over %d simulated %s: "
			"windows up to %.1f s after %.1f s warm-up", sim_qps, a.sim_qps > 0 ?
			"--sim-qps" : "auto", (unsigned long long)a.sim_requests, nsim,
			nsim > 1 ? "leaves" : "leaf", sim_window, sim_warmup);
		if (vl_sim_leaves(&a, &geo, bindir, tmp, sim_qps, sim_warmup, nsim,
		    &vl_stop_signal, sims, pool, &npool, err, sizeof err) != 0) {
			fprintf(stderr, FM_PROG ": simulated run failed: %s\n", err);
			goto done;
		}
		sim_whole = 1;
		for (int k = 0; k < nsim; k++) {
			sreq += (double)json_integer_value(json_object_get(sims[k].step, "sent"));
			sim_wall = fmax(sim_wall, sims[k].wall_s);
			if (sim_whole && !sims[k].whole)
				snprintf(sim_why, sizeof sim_why, "the simulated window of %s was not "
					"whole: %s", sims[k].tag, sims[k].why);
			sim_whole = sim_whole && sims[k].whole;
		}
		if (sim_whole) {
			if (vl_sim_analyse(tmp, &vs, &a, err, sizeof err) != 0) {
				fprintf(stderr, FM_PROG ": %s\n", err);
				goto done;
			}
			have_sim = 1;
		}
	}

	/* The report. */
	double nreq = (double)json_integer_value(json_object_get(nat.step, "sent"));
	char g1[64], g2[64], g3[64];
	printf("frontload validate: the running leaf (mock, leaf, driver as frontload run "
		"starts them%s)\n", a.tls ? ", --tls" : "");
	printf("native window: %.3g qps for %.1f s after %.1f s warm-up: %.0f requests, %s\n", a.qps,
		a.window_s, a.warmup_s, nreq, nat.whole ? "all whole and OK" : nat.why);
	if (!a.hardware)
		printf("simulated window: %.3g qps for up to %.1f s after %.1f s warm-up, on %d "
			"simulated %s (seeds %llu..%llu) side by side: %.0f requests, %s; "
			"%s model (I1 %s, D1 %s, LL %s)\n", sim_qps, sim_window, sim_warmup, nsim,
			nsim > 1 ? "leaves" : "leaf", (unsigned long long)a.seed,
			(unsigned long long)(a.seed + (uint64_t)nsim - 1),
			sreq, sim_whole ? "all whole and OK" : sim_why, a.cpu,
			fm_cache_str(&geo.i1, g1, sizeof g1), fm_cache_str(&geo.d1, g2, sizeof g2),
			fm_cache_str(&geo.ll, g3, sizeof g3));
	for (size_t i = 0; notes && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
	if (have_sim) {
		const struct fl_mix *x = &vs.all.mix;
		printf("\nsimulated window (path simulated; per 1000 instructions: Ir less %llu "
			"rep string iterations = %llu instructions, %llu of them in PLT stubs, counted "
			"as their jumps, not as the calls callgrind charges them to; %.1f%% classified "
			"by %s in %.1f s, objects: %s):\n", (unsigned long long)x->rep_ir_removed,
			(unsigned long long)x->ir_hw, (unsigned long long)x->plt_ir,
			100 * vs.classified_share, a.objdump ? "objdump" : "Capstone", vs.dis_s,
			vs.objects);
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
		vl_print_patterns(&vs, sreq);
		vl_rows_head(nsim > 1 ? "pool (threads, all)" : "pool (threads)");
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
	vl_print_targets(&tg, m, have_sim ? &vs : NULL, tj, &pass, &fail, &unm);
	double wall = fm_now() - t0;
	printf("\n%d pass, %d fail, %d unmeasurable; wall time %.0f s (native run %.0f s, "
		"simulated run %.0f s)\n", pass, fail, unm, wall, nat.wall_s, sim_wall);

	json_object_set_new(out, "tool", json_string(FM_PROG " validate"));
	json_object_set_new(out, "path", json_string("leaf"));
	json_object_set_new(out, "config", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:I,"
		"s:s}", "qps", a.qps, "warmup_s", a.warmup_s, "window_s", a.window_s, "sim_qps",
		sim_qps, "sim_warmup_s", sim_warmup, "sim_window_s", sim_window, "timeout_s",
		a.timeout_s, "tls", a.tls, "seed", (json_int_t)a.seed, "cpu", a.cpu));
	json_object_set_new(json_object_get(out, "config"), "sim_leaves", json_integer(nsim));
	json_object_set_new(json_object_get(out, "config"), "leaf_profile", a.leaf_profile ?
		json_string(a.leaf_profile) : json_null());
	/* What the leaf applied (without --profile: the default profile when it fits). */
	json_object_set_new(json_object_get(out, "config"), "leaf_profile_applied", nat.after ?
		json_pack("{s:s,s:s}", "profile", vl_leaf_profile(nat.after, "profile", "none"),
		"source", vl_leaf_profile(nat.after, "profile_source", "unknown")) : json_null());
	json_object_set_new(out, "native", vl_phase_json(&nat));
	json_object_set_new(out, "simulated", a.hardware ? json_null() : vl_sims_json(sims,
		nsim, sim_whole, sim_why, sim_wall, sreq));
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
		json_object_set_new(out, "patterns", vl_patterns_json(&vs, sreq));
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
	rc = fail || !nat.whole || (!a.hardware && !sim_whole) ? FM_EXIT_MISSED : FM_EXIT_OK;
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
	for (int k = 0; k < VL_MAX_SIM_LEAVES; k++)
		vl_phase_free(&sims[k]);
	json_decref(sw);
	json_decref(pmu);
	json_decref(out);
	json_decref(notes);
	fl_targets_free(&tg);
	return rc;
}
