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
 * sum, and the steps shrink as they approach. The fit aims at the middle half of each
 * band (CL_AIM); a run with every figure in its aim is measured again by the next run and
 * the mean of the two decides (a lucky window cannot stop the fit at an aim's edge); the
 * knobs with every figure in its aim, or else the smallest squared miss of the aims in
 * band widths, are written.
 *
 * Unless --hardware, each run also measures the simulated window, and a fifth knob, the
 * generated code's executed footprint (--footprint-bytes), is fitted to L1i MPKI: the
 * generated library misses the L1i at about the same rate at any footprint far above it
 * (flat dispatch: every function cold when it is called again), so the process's MPKI is
 * set by the generated code's share of the instructions, and at a fixed extraction share
 * of the CPU that share follows the cost of a call, which grows with the footprint (the
 * L2 and LLC hit less). See cl_foot_step and calib_foot.h.
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

#include "calib_foot.h"
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
/* The fit aims at the middle half of each band: on the default build here the Xeon fit of
 * 12-06, fitted 1.1 points above the extraction band's floor, read 29.3%, 30.5%, 31.4%
 * and 31.1% in four validates the next day. */
#define CL_AIM 0.5
#define CL_CHANNELS 32   /* --rpc-channels the fit sets (cl_base_defaults) */
/* The cost of a generated instruction grows as footprint^beta; beta is fitted over the
 * runs so far (calib_foot.h), this until two footprints were measured. On the default
 * build here (2026-12-05, Xeon with 2 MiB L2 per core) twelve runs from 348 KiB to 2 MiB
 * gave beta 1.24 (0.19 to 1.59 ns per generated instruction). */
#define CL_FOOT_BETA 1.0
#define CL_MAX_RUNS 50   /* --runs at most */
#define CL_FOOT_BETA_MIN 0.3
#define CL_FOOT_BETA_MAX 3.0
#define CL_FOOT_START (2u << 20) /* start footprint when the start profile sets none */

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
	int leaf, quiet, hardware, no_confirm;
	const char *out, *start, *targets, *leaf_args, *keep;
	uint64_t runs, seed, sim_requests, repeats;
	double qps, window_s, warmup_s;
};

#define FL_CLI_OBJ struct cl_args
static const struct fl_cli_opt cl_opts[] = {
	FL_OPT_FLAG("leaf", leaf, "fit the running leaf's CPU profile (this mode)"),
	FL_OPT_STR("write-profile", out, "FILE", NULL, "the leaf profile to write (JSON: "
		"leaf_args and how they were found, calibrated.host.cpu the CPU it was fitted on; "
		"required). Saved as runtime/data/profile-default-KIND.json (KIND: frontload-leaf "
		"--help's --profile), it ships as this CPU kind's default", .section = "output"),
	FL_OPT_FLAG("quiet", quiet, "no progress lines"),
	FL_OPT_STR("profile", start, "FILE|NAME", NULL, "start from this profile's knobs (its "
		"other leaf_args are kept in the one written; NAME = the shipped "
		"data/profile-NAME-KIND.json for this host's kind of CPU, else "
		"data/profile-NAME.json; default: the leaf's built-in knobs, as --profile none)",
		.section = "the fit"),
	FL_OPT_STR("targets", targets, "FILE", NULL, "targets file (default: "
		"production.json, as validate)"),
	FL_OPT_FLAG("hardware", hardware, "the native runs only (validate --hardware, ~20 s "
		"each): fit the four CPU-profile knobs, hold the footprint"),
	FL_OPT_UINT("runs", runs, 1, CL_MAX_RUNS, "N", "12", "validate runs at most, 1..50 (native "
		"and simulated: about 40 s each near the fitted profile on the default build here, "
		"minutes at footprints of hundreds of MiB): the fit stops early when two runs of "
		"the same knobs have every fitted figure, as their mean, in the middle half of its "
		"band"),
	FL_OPT_FLAG("no-confirm", no_confirm, "no confirmation run: the best run's knobs are "
		"not measured again (the fit stops at the first run with every figure in its aim)"),
	FL_OPT_UINT("repeats", repeats, 1, 10, "K", "1", "native windows per run, 1..10: the "
		"run's validate, then K-1 validate --hardware windows of the same knobs; each "
		"CPU-profile share is their mean (its sampling error shrinks as 1/sqrt(K)), L1i "
		"MPKI the one simulated window's (its requests are seeded: it repeats). Against "
		"the best-of-noisy-runs pick: near the fit, one 10 s window at validate's 19999 Hz "
		"reads a ~3.5% share to +-0.15 points (95%)"),
	FL_OPT_REAL("qps", qps, 0.1, 100000, "R", "40", "validate's native rate "
		"(requests/s; the default build's fitted profile costs ~5 ms of leaf CPU a request "
		"on this host kind, 12-07, so 40 qps fills a 10 s window with ~60,000 perf "
		"samples at validate's --perf-hz 19999, 5 qps with ~7,500)",
		.section = "each run (validate)"),
	FL_OPT_REAL("window", window_s, 1, 86400, "S", "10", "its measured window (seconds; "
		"with --repeats K a run's shares come from K x S seconds of samples)"),
	FL_OPT_REAL("warmup", warmup_s, 0, 86400, "S", "4", "its warm-up step (seconds)"),
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "seed of every run (leaf, "
		"driver)"),
	FL_OPT_UINT("sim-requests", sim_requests, 1, 1000, "N", "8", "requests in each "
		"run's simulated window (validate --sim-requests)"),
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
"Fits the running leaf to production's CPU profile and L1i MPKI: runs validate (mock,\n"
"leaf and driver as frontload run starts them; natively, a perf cpu-clock profile of the\n"
"leaf over a window of whole requests, each sample classified by\n"
"runtime/data/profile_categories.txt; under callgrind, the simulated window's L1i MPKI and\n"
"its split by object) and adjusts five workload knobs jointly, each the work behind one\n"
"figure:\n"
"  --extractors-per-story  feature extraction (CPU profile, %)  profile_extract_pct\n"
"  --rank-passes           ranking/prediction (%)               profile_ranking_pct\n"
"  --rpc-zstd-fraction     compression (%)                      profile_compression_pct\n"
"  --rpc-fanout-scale      encryption (TLS to the mock, %)      profile_encryption_pct\n"
"  --footprint-bytes       L1i MPKI (simulated, misses per       l1i_mpki\n"
"                          kilo-instruction)\n"
"(the zstd share's step leaves out what the fanout's step does to compression; the\n"
"profile also sets --rpc-channels 32, unless the start profile sets it, so the zstd share\n"
"moves in 1/32 steps rather than the leaf's 1/4)\n"
"Bands come from the targets file (production.json: DCPerf PRs 715 and 746 for the\n"
"shares, PR 704 for L1i MPKI 21 +- 4). Every run moves each share's knob by its share's\n"
"odds ratio to the band's centre (damped, at most x4). The footprint: the generated\n"
"library misses the L1i at about the same rate at any footprint far above the L1i, so the\n"
"process's MPKI is set by the generated code's share of the instructions; from the run's\n"
"own split (the generated code's MPKI and the rest's) the share that gives the band's\n"
"centre follows, and the footprint moves by the odds ratio of the two shares to the\n"
"power 1/beta (a larger footprint makes each generated instruction dearer, ~ footprint^\n"
"beta, so fewer calls fill the extraction share; beta is the log-log slope of the\n"
"extraction CPU per generated instruction over the footprint across the runs so far, 1\n"
"until two footprints were measured, within 0.3..3), the calls knob taking out what that\n"
"step adds to the extraction share. The footprint starts at the start profile's\n"
"--footprint-bytes, else 2 MiB. The fit aims at the middle half of each band (the aim:\n"
"a later window's noise then leaves the figure in its band). A run with every figure in\n"
"its aim is measured again by the next run (the same knobs, no step) and judged by the\n"
"mean of the two: in every aim, the fit stops and that second run is the confirmation\n"
"run; otherwise it steps on from the mean. The run closest to every aim (squared miss in\n"
"band widths; a re-measured run's by the mean) is written as a leaf profile: its\n"
"leaf_args, and under \"calibrated\" the command, host, build, every run's knobs and\n"
"measured figures, and each target's residual (in the target's unit outside its band, 0\n"
"inside) and aim. The best run was chosen among noisy runs, so unless a re-measure\n"
"confirmed it, its knobs are then measured once more (the confirmation run; --no-confirm\n"
"skips both): its figures and residuals are written under \"calibrated\".\"confirmation\"\n"
"and set the exit status. With --repeats K every run (and the confirmation) reads each\n"
"share as the mean of K native windows, so the pick and the steps follow the knobs more\n"
"than one window's sampling noise.\n"
"Printed: one line per run, each target's residual, then the confirmation run's.\n"
"\n"
"The shares are native, L1i MPKI simulated (validate's zen4 model; valgrind's CPUID may\n"
"hide instruction-set extensions, README: Limits). --hardware fits the four shares only,\n"
"with the native runs (about 20 s each; the footprint held). The rest of the mix is not\n"
"fitted: the profile written is judged on it by validate --profile FILE. Shares are\n"
"sampled (a share of n samples is known to about +-2/sqrt(n) of itself): --qps and\n"
"--window set how many; --sim-requests steadies the MPKI (the fanout's zstd payloads,\n"
"sampled from heavy-tailed size tables, move the rest's share of the instructions).\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &cl_cli);
	fputs("\nSIGINT or SIGTERM stops the running validate (and the service it started) and\n"
"writes the closest of the finished runs.\n"
"exit status: 0 every fitted figure inside its band (in the confirmation run, when\n"
"there was one), 3 the closest run written but some figure outside its band\n"
"(residuals printed), 1 no run measured the profile (nothing written), 2 usage error,\n"
"130 / 143 stopped by SIGINT / SIGTERM.\n", fp);
}

/* Flags the fit needs beyond its four knobs, unless the start profile sets them. */
static void cl_base_defaults(json_t *base)
{
	/* The zstd share is counted in channels (fanout.c: lround(fraction x channels)):
	 * 32 per FANOUT thread rather than the leaf's 4 give it 1/32 steps: at 16 on the
	 * default build one channel moved compression ~1.1 points (2 of 16: 3.6%, 3 of 16:
	 * 4.7-5.4%), most of the 1.3-point band. */
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
		char path[4096];

		/* A name (--profile default) is a shipped profile, as the leaf resolves it. */
		if (fl_profile_resolve(a->start, path, sizeof(path), err, errlen) != 0)
			return -1;
		root = json_load_file(path, 0, NULL);
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
	if (!a->hardware && json_object_get(*base, "active-functions") != NULL) {
		snprintf(err, errlen, "--profile %s sets active-functions, which the footprint "
			"fit replaces (--footprint-bytes): remove it, or fit with --hardware",
			a->start);
		return -1;
	}
	for (int i = 0; i < nk; i++) {
		json_t *v = json_object_get(*base, k[i].flag);
		uint64_t b;

		if (json_is_number(v))
			k[i].value = json_number_value(v);
		else if (json_is_string(v) && fl_cli_parse_bytes(json_string_value(v), &b) == 0)
			k[i].value = (double)b;  /* "512k": the leaf's byte syntax */
		else if (v != NULL) {
			snprintf(err, errlen, "--profile %s: leaf_args.%s is not a number", a->start,
				k[i].flag);
			return -1;
		}
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

/* Run n's validate with the knobs: repeat 0 as the fit runs (native and simulated, or
 * --hardware), a later repeat the native window only. Returns its JSON, or NULL (err). */
static json_t *cl_run(const struct cl_args *a, const char *self, const char *dir, int n,
	int rep, const json_t *leaf_args, char *err, size_t errlen)
{
	int native_only = a->hardware || rep > 0;
	char tag[32];
	char prof[4200], js[4200], log[4200], q[32], w[32], wu[32], sd[32], sr[32];
	const char *argv[32];
	int k = 0, rc;
	json_t *p = json_pack("{s:i,s:O}", "frontload_profile", FL_PROFILE_VERSION,
		"leaf_args", leaf_args);
	json_t *out;

	if (rep > 0)
		snprintf(tag, sizeof(tag), "run%02d-r%d", n, rep + 1);
	else
		snprintf(tag, sizeof(tag), "run%02d", n);
	snprintf(prof, sizeof(prof), "%s/%s-profile.json", dir, tag);
	snprintf(js, sizeof(js), "%s/%s-validate.json", dir, tag);
	snprintf(log, sizeof(log), "%s/%s-validate.log", dir, tag);
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
	if (native_only)
		argv[k++] = "--hardware";
	else {
		snprintf(sr, sizeof(sr), "%llu", (unsigned long long)a->sim_requests);
		argv[k++] = "--sim-requests";
		argv[k++] = sr;
	}
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
	for (int i = 0; i < (native_only ? 1 : 2); i++) {
		const char *path = i == 0 ? "native" : "simulated";
		const json_t *pw = json_object_get(out, path);

		if (!json_is_true(json_object_get(pw, "whole"))) {
			snprintf(err, errlen, "the %s window was not whole: %s (see %.2000s)", path,
				json_string_value(json_object_get(pw, "why")) ?: "?", log);
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* The aim of figure i: the middle CL_AIM of its band, so that a later window's noise (a
 * share's sampling error, the workload's own spread) leaves the fitted figure in its band. */
static void cl_aim(const double *band, double *lo, double *hi)
{
	double c = (band[0] + band[1]) / 2, h = (band[1] - band[0]) * CL_AIM / 2;

	*lo = c - h;
	*hi = c + h;
}

/* Squared misses of the aims in band widths over the fitted targets (0: every figure in
 * the middle of its band); NAN when one was not measured. */
static double cl_score(const double *m, const double (*band)[2], int nk)
{
	double s = 0;

	for (int i = 0; i < nk; i++) {
		double w = fmax(band[i][1] - band[i][0], 0.1), d = 0, lo, hi;

		if (!isfinite(m[i]))
			return NAN;
		cl_aim(band[i], &lo, &hi);
		if (m[i] < lo)
			d = (lo - m[i]) / w;
		else if (m[i] > hi)
			d = (m[i] - hi) / w;
		s += d * d;
	}
	return s;
}

/* 1 when every fitted figure is inside its band (what the exit status reports). */
static int cl_in_bands(const double *m, const double (*band)[2], int nk)
{
	for (int i = 0; i < nk; i++)
		if (!(m[i] >= band[i][0] && m[i] <= band[i][1]))
			return 0;
	return 1;
}

/* The footprint's step toward L1i MPKI t from a simulated run (calib_foot.h): the odds
 * ratio of the generated code's instruction share to the one that gives t, to the power
 * 1 / beta (at a fixed extraction share the generated instructions go as 1 / (cost of an
 * instruction), the cost as footprint^beta), damped, at most x4; 1 when the run did not
 * split its instructions. */
static double cl_foot_step(const json_t *v, double t, double beta)
{
	double r = fm_foot_odds(v, t);

	if (!isfinite(r))
		return 1;
	return fmin(fmax(pow(r, CL_DAMP / beta), 1 / CL_MAX_STEP), CL_MAX_STEP);
}

/* Move each share's knob by its share's odds ratio to the band's centre, and the footprint
 * (knob foot, -1 when not fitted) by ffoot. The zstd channels' bytes are the fanout's, so
 * compression moves with --rpc-fanout-scale too: the zstd fraction's step leaves out what
 * the fanout's step already does to it; likewise the calls step leaves out what the
 * footprint's step does to the extraction share (cost per call ~ footprint^beta). */
static void cl_step(struct cl_knob *k, int nk, const double *m, const double (*band)[2],
	int foot, double ffoot, double beta)
{
	double f[8];

	for (int i = 0; i < nk; i++) {
		double t = (band[i][0] + band[i][1]) / 200, s = m[i] / 100;

		if (i == foot)
			f[i] = ffoot;
		else if (s <= 0)
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
		if (strcmp(k[i].flag, "extractors-per-story") == 0 && foot >= 0)
			fi = fmin(fmax(fi * pow(f[foot], -beta), 1 / CL_MAX_STEP),
				CL_MAX_STEP);
		k[i].value = fmin(fmax(k[i].value * fi, k[i].lo), k[i].hi);
		if (k[i].integer)
			k[i].value = fmax(k[i].lo, round(k[i].value));
	}
}

/* Each fitted figure's residual (in its unit outside its band, 0 inside) as JSON, and
 * printed one line each under a heading unless heading is NULL. */
static json_t *cl_residuals(const struct cl_knob *k, int nk, const double *m,
	const double (*band)[2], const char *heading)
{
	json_t *res = json_object();

	if (heading && heading[0])
		printf("%s\n", heading);
	for (int i = 0; i < nk; i++) {
		double r = m[i] < band[i][0] ? m[i] - band[i][0] : m[i] > band[i][1] ?
			m[i] - band[i][1] : 0, alo, ahi;
		int mpki = strcmp(k[i].metric, "l1i_mpki") == 0;
		const char *u = mpki ? " MPKI" : "%";

		cl_aim(band[i], &alo, &ahi);
		if (heading)
			printf("  %-26s band %g..%g%s (aim %.4g..%.4g)  measured %.2f%s  residual "
				"%+.2f%s\n", k[i].metric, band[i][0], band[i][1], u, alo, ahi, m[i], u, r,
				mpki ? " MPKI" : " points");
		json_object_set_new(res, k[i].metric, json_pack("{s:f,s:f,s:[f,f],s:f,s:f,s:s}",
			"lo", band[i][0], "hi", band[i][1], "aim", alo, ahi, "measured", m[i],
			"residual", r, "knob", k[i].flag));
	}
	return res;
}

/* The fitted figures of a validate run (v) into m[0..nk-1], NAN when not measured;
 * returned as JSON, null for those. */
static json_t *cl_measure(const json_t *v, const struct cl_knob *k, int nk, double *m)
{
	json_t *mo = json_object();

	for (int i = 0; i < nk; i++) {
		m[i] = cl_measured(v, k[i].metric);
		json_object_set_new(mo, k[i].metric, isfinite(m[i]) ? json_real(m[i]) :
			json_null());
	}
	return mo;
}

/* Run n with the knobs: its validate (*v, the caller's), then --repeats - 1 native
 * windows. m[i] is each fitted figure: a CPU-profile share the mean over the windows, the
 * footprint's L1i MPKI (simulated, seeded requests) the first run's. Returns the figures
 * as JSON ("repeats": every window's shares when there were more than one), or NULL with
 * err when a run failed. */
static json_t *cl_take(const struct cl_args *a, const char *self, const char *dir, int n,
	const json_t *la, const struct cl_knob *k, int nk, double *m, json_t **v, char *err,
	size_t errlen)
{
	json_t *mo, *reps;

	*v = cl_run(a, self, dir, n, 0, la, err, errlen);
	if (*v == NULL)
		return NULL;
	mo = cl_measure(*v, k, nk, m);
	if (a->repeats <= 1)
		return mo;
	reps = json_array();
	json_array_append_new(reps, json_deep_copy(mo));
	for (int r = 1; r < (int)a->repeats; r++) {
		double mr[8];
		json_t *vr = cl_run(a, self, dir, n, r, la, err, errlen);

		if (vr == NULL) {
			json_decref(mo);
			json_decref(reps);
			return NULL;
		}
		json_array_append_new(reps, cl_measure(vr, k, nk, mr));
		json_decref(vr);
		for (int i = 0; i < nk; i++)
			if (strcmp(k[i].flag, "footprint-bytes") != 0)
				m[i] += mr[i];  /* NAN stays NAN: a window that measured nothing */
	}
	for (int i = 0; i < nk; i++)
		if (strcmp(k[i].flag, "footprint-bytes") != 0) {
			m[i] /= (double)a->repeats;
			json_object_set_new(mo, k[i].metric, isfinite(m[i]) ? json_real(m[i]) :
				json_null());
		}
	json_object_set_new(mo, "repeats", reps);
	return mo;
}

/* A confirmation from a run of the best knobs (la, mo: references taken) and its figures
 * m: {leaf_args, measured, score, residuals}, the residuals printed; *sc is its squared
 * miss of the aims (NAN when not measured), *inband whether every figure was inside its
 * band. */
static json_t *cl_confirm_of(json_t *la, json_t *mo, const struct cl_knob *best, int nk,
	const double *m, const double (*band)[2], double *sc, int *inband)
{
	json_t *c;

	*sc = cl_score(m, band, nk);
	*inband = isfinite(*sc) && cl_in_bands(m, band, nk);
	c = json_pack("{s:o,s:o,s:o}", "leaf_args", la, "measured", mo, "score",
		isfinite(*sc) ? json_real(*sc) : json_null());
	if (isfinite(*sc))
		json_object_set_new(c, "residuals", cl_residuals(best, nk, m, band,
			"confirmation run (the same knobs measured again):"));
	return c;
}

/* The best run was chosen among noisy runs: measure its knobs once more (run n); the
 * confirmation (cl_confirm_of), or {error} when the run failed. */
static json_t *cl_confirm(const struct cl_args *a, const char *self, const char *dir, int n,
	const struct cl_knob *best, int nk, const json_t *base, const double (*band)[2],
	double *sc, int *inband)
{
	char err[4400];
	double m[8];
	json_t *la = cl_leaf_args(best, nk, base), *v, *mo;

	*sc = NAN;
	*inband = 0;
	mo = cl_take(a, self, dir, n, la, best, nk, m, &v, err, sizeof(err));
	json_decref(v);
	if (mo == NULL) {
		fprintf(stderr, FM_PROG ": confirmation run: %s\n", err);
		json_decref(la);
		return json_pack("{s:s}", "error", err);
	}
	return cl_confirm_of(la, mo, best, nk, m, band, sc, inband);
}

int fm_calibrate_leaf_main(int argc, char **argv)
{
	struct cl_knob k[] = {  /* at most 8 (cl_step); the footprint last (--hardware: off) */
		{ "extractors-per-story", "profile_extract_pct", 1, 100000, 1, 340 },
		{ "rank-passes", "profile_ranking_pct", 1, 1000, 1, 1 },
		{ "rpc-zstd-fraction", "profile_compression_pct", 0.01, 1, 0, 0.5 },
		{ "rpc-fanout-scale", "profile_encryption_pct", 1e-4, 10, 0, 0.01 },
		{ "footprint-bytes", "l1i_mpki", 64 << 10, 1ull << 40, 1, CL_FOOT_START },
	};
	enum { NK = sizeof(k) / sizeof(k[0]) };
	int nk, nfoot = 0;
	double logf[CL_MAX_RUNS], logc[CL_MAX_RUNS];
	struct cl_args a;
	struct fl_targets tg;
	char err[4400], tpath[4096], self[4200], dir[4096], tmp[256] = "", d1[32];
	double band[NK][2], best_score = INFINITY, best_m[NK], t0 = fm_now();
	struct cl_knob best_k[NK];
	json_t *base = NULL, *runs = json_array(), *out = NULL, *conf = NULL;
	int rc = FM_EXIT_RUN, nrun = 0, check = 0, confirmed = 0, cin = 0;
	double prev_m[NK], conf_m[NK], csc = NAN, save_m[NK], save_score = INFINITY;
	struct cl_knob save_k[NK];

	memset(&tg, 0, sizeof(tg));
	if (fm_cli_parse(&cl_cli, argc, argv, &a, cl_usage) != 0)
		return FM_EXIT_USAGE;
	nk = a.hardware ? NK - 1 : NK;
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
	for (int i = 0; i < nk; i++) {
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
		json_t *la = cl_leaf_args(k, nk, base), *v, *mo;
		double m[NK], sc, ffoot = 1, beta = CL_FOOT_BETA, cost;

		mo = cl_take(&a, self, dir, nrun, la, k, nk, m, &v, err, sizeof(err));
		if (mo == NULL) {
			fprintf(stderr, FM_PROG ": run %d: %s\n", nrun, err);
			json_decref(v);
			json_decref(la);
			break;
		}
		json_object_set_new(mo, "extract_cpu_pct", json_real(cl_measured(v,
			"extract_cpu_pct")));
		if (nk == NK) {
			/* The cost exponent from every run so far (log-log least squares). */
			cost = fm_foot_cost(v);
			if (isfinite(cost) && nfoot < CL_MAX_RUNS) {
				logf[nfoot] = log(k[NK - 1].value);
				logc[nfoot++] = log(cost);
			}
			double b = fm_foot_slope(logf, logc, nfoot);

			if (isfinite(b))
				beta = fmin(fmax(b, CL_FOOT_BETA_MIN), CL_FOOT_BETA_MAX);
			json_object_set_new(mo, "generated_ns_per_instruction", isfinite(cost) ?
				json_real(cost) : json_null());
			json_object_set_new(mo, "footprint_beta", json_real(beta));
			ffoot = cl_foot_step(v, (band[NK - 1][0] + band[NK - 1][1]) / 2, beta);
		}
		json_decref(v);
		sc = cl_score(m, (const double (*)[2])band, nk);
		json_array_append_new(runs, json_pack("{s:i,s:o,s:o,s:o}", "run", nrun, "leaf_args",
			la, "measured", mo, "score", isfinite(sc) ? json_real(sc) : json_null()));
		if (!a.quiet) {
			char fp[96] = "";

			if (nk == NK)
				snprintf(fp, sizeof(fp), ", footprint %.0f KiB -> L1i MPKI %.2f",
					k[NK - 1].value / 1024, m[NK - 1]);
			fprintf(stderr, FM_PROG ": run %d/%llu: eps %.0f, rank passes %.0f, zstd "
				"%.3f, fanout %.4g -> %sextraction %.2f%%, ranking %.2f%%, compression "
				"%.2f%%, encryption %.2f%%%s (miss %.3f, %s)\n", nrun,
				(unsigned long long)a.runs, k[0].value, k[1].value, k[2].value, k[3].value,
				a.repeats > 1 ? "mean of the windows: " : "", m[0], m[1], m[2], m[3], fp,
				sc, fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
		}
		if (!isfinite(sc)) {
			fprintf(stderr, FM_PROG ": run %d: a fitted figure was not measured (no CPU "
				"profile: perf missing or not permitted? no simulated window: valgrind?)\n",
				nrun);
			break;
		}
		if (check) {
			/* This run measured the last one's knobs again: they are judged by the mean
			 * of the two, so one lucky window cannot end the fit at an aim's edge. */
			double pm[NK], psc;

			for (int i = 0; i < nk; i++)
				pm[i] = (prev_m[i] + m[i]) / 2;
			psc = cl_score(pm, (const double (*)[2])band, nk);
			check = 0;
			/* The last run was the best: its knobs now count by the mean, unless an
			 * earlier run's miss is smaller. */
			if (psc <= save_score) {
				memcpy(best_m, pm, sizeof(pm));
				best_score = psc;
			} else {
				memcpy(best_k, save_k, sizeof(k));
				memcpy(best_m, save_m, sizeof(best_m));
				best_score = save_score;
			}
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1),
				"remeasures_run", json_integer(nrun - 1));
			if (!a.quiet) {
				char mp[48] = "";

				if (nk == NK)
					snprintf(mp, sizeof(mp), ", L1i MPKI %.2f", pm[NK - 1]);
				fprintf(stderr, FM_PROG ": runs %d and %d (the same knobs): mean "
					"extraction %.2f%%, ranking %.2f%%, compression %.2f%%, encryption "
					"%.2f%%%s (miss %.3f)%s\n", nrun - 1, nrun, pm[0], pm[1], pm[2],
					pm[3], mp, psc, psc == 0 ? ": every figure in its aim" :
					": stepping on");
			}
			if (psc == 0) {
				confirmed = 1;
				memcpy(conf_m, m, sizeof(m));
			}
			if (psc == 0 || cl_stop_signal)
				break;
			/* The shares step from the mean; the footprint's step is this run's (its
			 * simulated window repeats the last one's seeded requests). */
			cl_step(k, nk, pm, (const double (*)[2])band, nk == NK ? NK - 1 : -1, ffoot,
				beta);
			continue;
		}
		if (sc < best_score) {
			/* Kept in case a re-measure of these knobs reads them worse than it. */
			memcpy(save_k, best_k, sizeof(k));
			memcpy(save_m, best_m, sizeof(best_m));
			save_score = best_score;
			best_score = sc;
			memcpy(best_k, k, sizeof(k));
			memcpy(best_m, m, sizeof(m));
		}
		if (cl_stop_signal || (sc == 0 && a.no_confirm))
			break;
		if (sc == 0) {
			/* In every aim: the next run measures the same knobs again (no step). */
			check = 1;
			memcpy(prev_m, m, sizeof(m));
			continue;
		}
		cl_step(k, nk, m, (const double (*)[2])band, nk == NK ? NK - 1 : -1, ffoot, beta);
	}
	if (!isfinite(best_score)) {
		fprintf(stderr, FM_PROG ": no run measured the profile: nothing written\n");
		if (cl_stop_signal)
			rc = 128 + cl_stop_signal;
		goto done;
	}
	{
		json_t *res, *host = fm_host_json(), *build = fm_build_json();
		char cmd[8192] = FM_PROG;

		for (int i = 0; i < argc; i++) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, " %s", argv[i]);
		}
		printf("calibrate --leaf: %zu run%s; best: --extractors-per-story %.0f --rank-passes "
			"%.0f --rpc-zstd-fraction %.3f --rpc-fanout-scale %.4g", json_array_size(runs),
			json_array_size(runs) == 1 ? "" : "s", best_k[0].value, best_k[1].value,
			best_k[2].value, best_k[3].value);
		if (nk == NK)
			printf(" --footprint-bytes %.0f", best_k[NK - 1].value);
		printf("\n");
		res = cl_residuals(best_k, nk, best_m, (const double (*)[2])band, "");
		if (confirmed) {
			/* The run that measured the best knobs again is their confirmation. */
			json_t *r = json_array_get(runs, json_array_size(runs) - 1);

			fflush(stdout);
			conf = cl_confirm_of(json_incref(json_object_get(r, "leaf_args")),
				json_incref(json_object_get(r, "measured")), best_k, nk, conf_m,
				(const double (*)[2])band, &csc, &cin);
		} else if (!a.no_confirm && !cl_stop_signal) {
			fflush(stdout);
			conf = cl_confirm(&a, self, dir, (int)json_array_size(runs) + 1, best_k, nk,
				base, (const double (*)[2])band, &csc, &cin);
		}
		out = json_pack("{s:i,s:o,s:{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:f,s:s}}",
			"frontload_profile", FL_PROFILE_VERSION, "leaf_args",
			cl_leaf_args(best_k, nk, base), "calibrated", "command", cmd, "targets",
			tpath, "host", host ? host : json_null(), "build", build ? build : json_null(),
			"residuals", res, "runs", json_incref(runs), "confirmation", conf ? conf :
			json_null(), "wall_s", fm_now() - t0, "path",
			nk == NK ? "native shares (validate: perf cpu-clock profile) and simulated L1i "
			"MPKI (validate: callgrind, zen4 model); the rest of the mix not fitted: "
			"validate --profile FILE judges it" : "native (validate --hardware: perf "
			"cpu-clock profile); L1i MPKI and the mix not fitted: validate --simulate "
			"--profile FILE measures them");
		if (out == NULL || json_dump_file(out, a.out, JSON_INDENT(2)) != 0) {
			fprintf(stderr, FM_PROG ": cannot write %s: %s\n", a.out, strerror(errno));
			goto done;
		}
		printf("  written to %s (%s)\n", a.out, fm_dur_str(fm_now() - t0, d1, sizeof(d1)));
		/* In band means in the confirmation run when there was one. */
		rc = (isfinite(csc) ? cin : cl_in_bands(best_m, (const double (*)[2])band, nk)) ?
			FM_EXIT_OK : FM_EXIT_MISSED;
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
