/* calibrate_leaf.c: `frontload-measure calibrate --leaf`: fit the running leaf's CPU
 * profile to a targets file's bands by adjusting its workload knobs jointly, and write the
 * knobs found as a leaf profile (leafprofile.h) that frontload-leaf, frontload run and
 * validate load with --profile FILE.
 *
 * Each run is `validate --hardware` (the native run: mock, leaf, driver; the perf
 * cpu-clock profile by production's categories) with the current knobs as a profile.
 * Each fitted category has one knob that sets the work behind it; a share s of the CPU
 * moves to the band's centre t when that work is scaled by the odds ratio
 * (t / (1 - t)) / (s / (1 - s)) with the rest held, so every knob takes that step
 * (damped, at most x4) at once and the runs repeat: the shares are coupled through their
 * sum, and the steps shrink as they approach. The run with every share inside its band,
 * or else the smallest squared miss in band widths, is written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "leafprofile.h"
#include "margs.h"
#include "measure.h"
#include "mutil.h"
#include "osfile.h"
#include "paths.h"
#include "process.h"
#include "targets.h"

#define CL_DAMP 0.8      /* exponent on the odds ratio: a step short of the whole way */
#define CL_MAX_STEP 4.0  /* a knob moves by at most x4 (or /4) per run */
#define CL_CHANNELS 16   /* --rpc-channels the fit sets (cl_base_defaults) */

/* The signal (SIGINT, SIGTERM) that stopped the fit, 0 while none: written by the
 * handler, read while a run is waited for, which then stops that run's validate. */
static volatile sig_atomic_t cl_stop_signal;

static void cl_on_signal(int sig)
{
	cl_stop_signal = sig;
}

/* A fitted knob and the target metric whose work it sets. */
struct cl_knob {
	const char *flag;      /* leaf flag, without -- */
	const char *metric;    /* targets-file metric (validate's JSON targets[].metric) */
	double lo, hi;         /* the flag's accepted range */
	int integer;
	double value;          /* current */
};

struct cl_args {
	int leaf, quiet;
	const char *out, *start, *targets, *leaf_args, *keep;
	uint64_t runs, seed;
	double qps, window_s, warmup_s;
};

#define FL_CLI_OBJ struct cl_args
static const struct fl_cli_opt cl_opts[] = {
	FL_OPT_FLAG("leaf", leaf, "fit the running leaf's CPU profile (this mode)"),
	FL_OPT_STR("write-profile", out, "FILE", NULL, "the leaf profile to write (JSON: "
		"leaf_args and how they were found; required)", .section = "output"),
	FL_OPT_FLAG("quiet", quiet, "no progress lines"),
	FL_OPT_STR("profile", start, "FILE", NULL, "start from this profile's knobs (its "
		"other leaf_args are kept in the one written; default: the leaf's defaults)",
		.section = "the fit"),
	FL_OPT_STR("targets", targets, "FILE", NULL, "targets file (default: "
		"production.json, as validate)"),
	FL_OPT_UINT("runs", runs, 1, 50, "N", "8", "native validate runs at most, 1..50 "
		"(about 20 s each here): the fit stops early when every fitted share is in its "
		"band"),
	FL_OPT_REAL("qps", qps, 0.1, 100000, "R", "5", "validate's native rate "
		"(requests/s)", .section = "each run (validate --hardware)"),
	FL_OPT_REAL("window", window_s, 1, 86400, "S", "10", "its measured window (seconds)"),
	FL_OPT_REAL("warmup", warmup_s, 0, 86400, "S", "4", "its warm-up step (seconds)"),
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "seed of every run (leaf, "
		"driver)"),
	FL_OPT_STR("leaf-args", leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags for "
		"every run (not written to the profile)"),
	FL_OPT_STR("keep", keep, "DIR", NULL, "keep each run's profile and validate JSON "
		"here"),
};
#undef FL_CLI_OBJ

static const struct fl_cli cl_cli = { .opts = cl_opts, .nopts = sizeof(cl_opts) /
	sizeof(cl_opts[0]) };

static void cl_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " calibrate --leaf --write-profile FILE [options]\n"
"\n"
"Fits the running leaf's CPU profile to production's categories: runs validate --hardware\n"
"(mock, leaf and driver as frontload run starts them; a perf cpu-clock profile of the leaf\n"
"over a window of whole requests, each sample classified by\n"
"runtime/data/profile_categories.txt) and adjusts four workload knobs jointly, each the\n"
"work behind one category:\n"
"  --extractors-per-story  feature extraction (CPU profile)   profile_extract_pct\n"
"  --rank-passes           ranking/prediction                 profile_ranking_pct\n"
"  --rpc-zstd-fraction     compression                        profile_compression_pct\n"
"  --rpc-fanout-scale      encryption (TLS to the mock)       profile_encryption_pct\n"
"(the zstd share's step leaves out what the fanout's step does to compression; the\n"
"profile also sets --rpc-channels 16, unless the start profile sets it, so the zstd share\n"
"moves in 1/16 steps rather than the leaf's 1/4)\n"
"Bands come from the targets file (production.json: DCPerf PRs 715 and 746). Every run\n"
"moves each knob by its category's odds ratio to the band's centre (damped, at most x4);\n"
"the run closest to every band (squared miss in band widths) is written as a leaf profile:\n"
"its leaf_args, and under \"calibrated\" the command, host, build, every run's knobs and\n"
"shares, and each target's residual (percentage points outside its band, 0 inside).\n"
"Printed: one line per run, then each target's residual.\n"
"\n"
"The fit is native: L1i MPKI and the instruction mix need the simulated path, which is\n"
"too slow to iterate on the default build (validate --simulate --profile FILE measures\n"
"them for the profile written). Shares are sampled: ~1,500 samples a 10 s window here,\n"
"so a 1% share is known to about +-25%; lengthen --window for a finer fit.\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &cl_cli);
	fputs("\nSIGINT or SIGTERM stops the running validate (and the service it started) and\n"
"writes the closest of the finished runs.\n"
"exit status: 0 every fitted share inside its band, 3 the closest run written\n"
"but some share outside its band (residuals printed), 1 no run measured the profile\n"
"(nothing written), 2 usage error, 130 / 143 stopped by SIGINT / SIGTERM.\n", fp);
}

/* Flags the fit needs beyond its four knobs, unless the start profile sets them. */
static void cl_base_defaults(json_t *base)
{
	/* The zstd share is counted in channels (fanout.c: lround(fraction x channels)):
	 * 16 per FANOUT thread rather than the leaf's 4 give it 1/16 steps, fine enough for
	 * a band 1.3 points wide. */
	if (json_object_get(base, "rpc-channels") == NULL)
		json_object_set_new(base, "rpc-channels", json_integer(CL_CHANNELS));
}

/* Starting values: the start profile's, else the leaf's defaults. */
static int cl_start(const struct cl_args *a, struct cl_knob *k, int nk, json_t **base,
	char *err, size_t errlen)
{
	json_t *root, *la;

	*base = json_object();
	if (a->start != NULL) {
		root = json_load_file(a->start, 0, NULL);
		la = json_object_get(root, "leaf_args");
		if (!json_is_object(la)) {
			snprintf(err, errlen, "--profile %s: no leaf_args object (not a leaf profile)",
				a->start);
			json_decref(root);
			return -1;
		}
		json_object_update(*base, la);
		json_decref(root);
	}
	cl_base_defaults(*base);
	for (int i = 0; i < nk; i++) {
		json_t *v = json_object_get(*base, k[i].flag);

		if (json_is_number(v))
			k[i].value = json_number_value(v);
	}
	return 0;
}

/* The profile of the current knobs (over base's other flags). */
static json_t *cl_leaf_args(const struct cl_knob *k, int nk, const json_t *base)
{
	json_t *la = json_deep_copy(base);

	for (int i = 0; i < nk; i++)
		json_object_set_new(la, k[i].flag, k[i].integer ?
			json_integer((json_int_t)k[i].value) : json_real(k[i].value));
	return la;
}

/* A target's band [lo, hi] (a min or max target: the other side open). */
static void cl_band(const struct fl_target *t, double *lo, double *hi)
{
	*lo = t->kind == FL_TGT_MAX ? 0 : t->kind == FL_TGT_APPROX ? t->value - t->tolerance :
		t->min;
	*hi = t->kind == FL_TGT_MIN ? 100 : t->kind == FL_TGT_APPROX ? t->value +
		t->tolerance : t->max;
}

/* The measured value of metric in validate's JSON, NAN when not measured. */
static double cl_measured(const json_t *v, const char *metric)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(v, "targets"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "metric")) ?
		    json_string_value(json_object_get(t, "metric")) : "", metric) == 0)
			return json_is_number(json_object_get(t, "measured")) ?
				json_number_value(json_object_get(t, "measured")) : NAN;
	return NAN;
}

/* One validate --hardware run with the knobs. Returns its JSON, or NULL (err). */
static json_t *cl_run(const struct cl_args *a, const char *self, const char *dir, int n,
	const json_t *leaf_args, char *err, size_t errlen)
{
	char prof[4200], js[4200], log[4200], q[32], w[32], wu[32], sd[32];
	const char *argv[32];
	int k = 0, rc;
	json_t *p = json_pack("{s:i,s:O}", "frontload_profile", FL_PROFILE_VERSION,
		"leaf_args", leaf_args);
	json_t *out;

	snprintf(prof, sizeof(prof), "%s/run%02d-profile.json", dir, n);
	snprintf(js, sizeof(js), "%s/run%02d-validate.json", dir, n);
	snprintf(log, sizeof(log), "%s/run%02d-validate.log", dir, n);
	if (p == NULL || json_dump_file(p, prof, JSON_INDENT(2)) != 0) {
		snprintf(err, errlen, "cannot write %.2000s", prof);
		json_decref(p);
		return NULL;
	}
	json_decref(p);
	snprintf(q, sizeof(q), "%g", a->qps);
	snprintf(w, sizeof(w), "%g", a->window_s);
	snprintf(wu, sizeof(wu), "%g", a->warmup_s);
	snprintf(sd, sizeof(sd), "%llu", (unsigned long long)a->seed);
	argv[k++] = self;
	argv[k++] = "validate";
	argv[k++] = "--hardware";
	argv[k++] = "--quiet";
	argv[k++] = "--json";
	argv[k++] = js;
	argv[k++] = "--profile";
	argv[k++] = prof;
	argv[k++] = "--qps";
	argv[k++] = q;
	argv[k++] = "--window";
	argv[k++] = w;
	argv[k++] = "--warmup";
	argv[k++] = wu;
	argv[k++] = "--seed";
	argv[k++] = sd;
	if (a->targets) {
		argv[k++] = "--targets";
		argv[k++] = a->targets;
	}
	if (a->leaf_args) {
		argv[k++] = "--leaf-args";
		argv[k++] = a->leaf_args;
	}
	argv[k] = NULL;
	pid_t pid = fl_spawn(argv, &(struct fl_spawn_opts){ .stdout_path = log,
		.stderr_path = log, .append = 1 }, err, errlen);
	int status, stopping = 0;

	if (pid < 0)
		return NULL;
	/* validate stops the mock, leaf and driver it started on SIGTERM. */
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			return NULL;
		}
		if (cl_stop_signal && !stopping) {
			kill(pid, SIGTERM);
			stopping = 1;
		}
	}
	if (cl_stop_signal) {
		snprintf(err, errlen, "stopped by signal %d", (int)cl_stop_signal);
		return NULL;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	/* 3: a target missed, which is what a fit starts from. */
	if (rc != 0 && rc != 3) {
		snprintf(err, errlen, "validate %s %d (see %.2000s)", rc < 0 ? "killed by signal" :
			"exited", rc < 0 ? WTERMSIG(status) : rc, log);
		return NULL;
	}
	out = json_load_file(js, 0, NULL);
	if (out == NULL) {
		snprintf(err, errlen, "validate wrote no %.1500s (see %.1500s)", js, log);
		return NULL;
	}
	if (!json_is_true(json_object_get(json_object_get(out, "native"), "whole"))) {
		snprintf(err, errlen, "the native window was not whole: %s", json_string_value(
			json_object_get(json_object_get(out, "native"), "why")) ?: "?");
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Squared misses in band widths over the fitted targets; NAN when one was not measured. */
static double cl_score(const double *m, const double (*band)[2], int nk)
{
	double s = 0;

	for (int i = 0; i < nk; i++) {
		double w = fmax(band[i][1] - band[i][0], 0.1), d = 0;

		if (!isfinite(m[i]))
			return NAN;
		if (m[i] < band[i][0])
			d = (band[i][0] - m[i]) / w;
		else if (m[i] > band[i][1])
			d = (m[i] - band[i][1]) / w;
		s += d * d;
	}
	return s;
}

/* Move each knob by its share's odds ratio to the band's centre. The zstd channels'
 * bytes are the fanout's, so compression moves with --rpc-fanout-scale too: the zstd
 * fraction's step leaves out what the fanout's step already does to it. */
static void cl_step(struct cl_knob *k, int nk, const double *m, const double (*band)[2])
{
	double f[8];

	for (int i = 0; i < nk; i++) {
		double t = (band[i][0] + band[i][1]) / 200, s = m[i] / 100;

		if (s <= 0)
			f[i] = CL_MAX_STEP;  /* no sample at all: as far as a step goes */
		else
			f[i] = pow((t / (1 - t)) / (s / (1 - s)), CL_DAMP);
		f[i] = fmin(fmax(f[i], 1 / CL_MAX_STEP), CL_MAX_STEP);
	}
	for (int i = 0; i < nk; i++) {
		double fi = f[i];

		if (strcmp(k[i].flag, "rpc-zstd-fraction") == 0)
			for (int j = 0; j < nk; j++)
				if (strcmp(k[j].flag, "rpc-fanout-scale") == 0)
					fi = fmin(fmax(fi / f[j], 1 / CL_MAX_STEP), CL_MAX_STEP);
		k[i].value = fmin(fmax(k[i].value * fi, k[i].lo), k[i].hi);
		if (k[i].integer)
			k[i].value = fmax(k[i].lo, round(k[i].value));
	}
}

int fm_calibrate_leaf_main(int argc, char **argv)
{
	struct cl_knob k[] = {  /* at most 8 (cl_step) */
		{ "extractors-per-story", "profile_extract_pct", 1, 100000, 1, 340 },
		{ "rank-passes", "profile_ranking_pct", 1, 1000, 1, 1 },
		{ "rpc-zstd-fraction", "profile_compression_pct", 0.01, 1, 0, 0.5 },
		{ "rpc-fanout-scale", "profile_encryption_pct", 1e-4, 10, 0, 0.01 },
	};
	enum { NK = sizeof(k) / sizeof(k[0]) };
	struct cl_args a;
	struct fl_targets tg;
	char err[4400], tpath[4096], self[4200], dir[4096], tmp[256] = "", d1[32];
	double band[NK][2], best_score = INFINITY, best_m[NK], t0 = fm_now();
	struct cl_knob best_k[NK];
	json_t *base = NULL, *runs = json_array(), *out = NULL;
	int rc = FM_EXIT_RUN, nrun = 0;

	memset(&tg, 0, sizeof(tg));
	if (fm_cli_parse(&cl_cli, argc, argv, &a, cl_usage) != 0)
		return FM_EXIT_USAGE;
	if (a.out == NULL) {
		fprintf(stderr, FM_PROG ": calibrate --leaf needs --write-profile FILE\n");
		return FM_EXIT_USAGE;
	}
	if (a.targets)
		snprintf(tpath, sizeof(tpath), "%s", a.targets);
	else if (fl_targets_default_path(tpath, sizeof(tpath), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (fl_targets_load(tpath, &tg, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_USAGE;
	}
	for (int i = 0; i < NK; i++) {
		const struct fl_target *t = fl_targets_find(&tg, k[i].metric);

		if (t == NULL) {
			fprintf(stderr, FM_PROG ": %s has no %s target to fit --%s to\n", tpath,
				k[i].metric, k[i].flag);
			fl_targets_free(&tg);
			return FM_EXIT_USAGE;
		}
		cl_band(t, &band[i][0], &band[i][1]);
	}
	if (cl_start(&a, k, NK, &base, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		goto done;
	}
	if (fl_exe_dir(dir, sizeof(dir)) != 0) {
		fprintf(stderr, FM_PROG ": cannot find this program's directory\n");
		goto done;
	}
	snprintf(self, sizeof(self), "%s/frontload-measure", dir);
	if (a.keep)
		snprintf(dir, sizeof(dir), "%s", a.keep);
	else if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) == 0)
		snprintf(dir, sizeof(dir), "%s", tmp);
	else {
		fprintf(stderr, FM_PROG ": %s\n", err);
		goto done;
	}
	if (fl_mkdir_p(dir, 0755, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		goto done;
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = cl_on_signal;  /* no SA_RESTART: waitpid returns EINTR */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (nrun = 1; nrun <= (int)a.runs; nrun++) {
		json_t *la = cl_leaf_args(k, NK, base), *v;
		double m[NK], sc;

		v = cl_run(&a, self, dir, nrun, la, err, sizeof(err));
		if (v == NULL) {
			fprintf(stderr, FM_PROG ": run %d: %s\n", nrun, err);
			json_decref(la);
			break;
		}
		for (int i = 0; i < NK; i++)
			m[i] = cl_measured(v, k[i].metric);
		sc = cl_score(m, (const double (*)[2])band, NK);
		json_array_append_new(runs, json_pack("{s:i,s:o,s:{s:o,s:o,s:o,s:o,s:o},s:o}",
			"run", nrun, "leaf_args", la, "measured_pct", k[0].metric, json_real(m[0]),
			k[1].metric, json_real(m[1]), k[2].metric, json_real(m[2]), k[3].metric,
			json_real(m[3]), "extract_cpu_pct", json_real(cl_measured(v,
			"extract_cpu_pct")), "score", isfinite(sc) ? json_real(sc) : json_null()));
		json_decref(v);
		if (!a.quiet)
			fprintf(stderr, FM_PROG ": run %d/%llu: eps %.0f, rank passes %.0f, zstd "
				"%.3f, fanout %.4g -> extraction %.1f%%, ranking %.1f%%, compression "
				"%.1f%%, encryption %.1f%% (miss %.3f, %s)\n", nrun,
				(unsigned long long)a.runs, k[0].value, k[1].value, k[2].value, k[3].value,
				m[0], m[1], m[2], m[3], sc, fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
		if (!isfinite(sc)) {
			fprintf(stderr, FM_PROG ": run %d: a fitted share was not measured (no CPU "
				"profile: perf missing or not permitted?)\n", nrun);
			break;
		}
		if (sc < best_score) {
			best_score = sc;
			memcpy(best_k, k, sizeof(k));
			memcpy(best_m, m, sizeof(m));
		}
		if (sc == 0 || cl_stop_signal)
			break;
		cl_step(k, NK, m, (const double (*)[2])band);
	}
	if (!isfinite(best_score)) {
		fprintf(stderr, FM_PROG ": no run measured the profile: nothing written\n");
		if (cl_stop_signal)
			rc = 128 + cl_stop_signal;
		goto done;
	}
	{
		json_t *res = json_object(), *host = fm_host_json(), *build = fm_build_json();
		char cmd[8192] = FM_PROG;

		for (int i = 0; i < argc; i++) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, " %s", argv[i]);
		}
		printf("calibrate --leaf: %zu run%s; best: --extractors-per-story %.0f --rank-passes "
			"%.0f --rpc-zstd-fraction %.3f --rpc-fanout-scale %.4g\n", json_array_size(runs),
			json_array_size(runs) == 1 ? "" : "s", best_k[0].value, best_k[1].value,
			best_k[2].value, best_k[3].value);
		for (int i = 0; i < NK; i++) {
			double r = best_m[i] < band[i][0] ? best_m[i] - band[i][0] : best_m[i] >
				band[i][1] ? best_m[i] - band[i][1] : 0;

			printf("  %-26s band %g..%g%%  measured %.2f%%  residual %+.2f points\n",
				k[i].metric, band[i][0], band[i][1], best_m[i], r);
			json_object_set_new(res, k[i].metric, json_pack("{s:f,s:f,s:f,s:f,s:s}", "lo",
				band[i][0], "hi", band[i][1], "measured", best_m[i], "residual", r,
				"knob", k[i].flag));
		}
		out = json_pack("{s:i,s:o,s:{s:s,s:s,s:o,s:o,s:o,s:o,s:f,s:s}}",
			"frontload_profile", FL_PROFILE_VERSION, "leaf_args",
			cl_leaf_args(best_k, NK, base), "calibrated", "command", cmd, "targets",
			tpath, "host", host ? host : json_null(), "build", build ? build : json_null(),
			"residuals", res, "runs", json_incref(runs), "wall_s", fm_now() - t0, "path",
			"native (validate --hardware: perf cpu-clock profile); L1i MPKI and the mix not "
			"fitted: validate --simulate --profile FILE measures them");
		if (out == NULL || json_dump_file(out, a.out, JSON_INDENT(2)) != 0) {
			fprintf(stderr, FM_PROG ": cannot write %s: %s\n", a.out, strerror(errno));
			goto done;
		}
		printf("  written to %s (%s)\n", a.out, fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
		rc = best_score == 0 ? FM_EXIT_OK : FM_EXIT_MISSED;
	}
	if (cl_stop_signal) {
		fprintf(stderr, FM_PROG ": stopped by signal %d: the closest of the runs that "
			"finished is written\n", (int)cl_stop_signal);
		rc = 128 + cl_stop_signal;
	}
done:
	if (tmp[0])
		fm_rmtree(tmp);
	json_decref(out);
	json_decref(runs);
	json_decref(base);
	fl_targets_free(&tg);
	return rc;
}
