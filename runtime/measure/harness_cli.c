/* harness_cli.c: what validate --harness, mix and calibrate share: their option tables
 * and the help around them, the choice of path, and the native run followed by the
 * simulated one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cpumodel.h"
#include "harness_cli.h"
#include "margs.h"
#include "mutil.h"
#include "pmu.h"
#include "simreport.h"
#include "simrun.h"
#include "targets.h"

/* Options of validate, mix and calibrate: the shared ones, then each command's own. */
#define FL_CLI_OBJ struct fm_harness_args
/* REQ, WARM: the defaults of --requests and --warmup (calibrate runs many points). */
#define HARNESS_OPTS(REQ, WARM) \
	FL_OPT_FLAG("simulate", simulate, "valgrind callgrind (cache + branch simulation, " \
		"Capstone classes of the executed instructions); works without hardware counters", .section = "path (neither " \
		"given: hardware when counters open here, else simulated; the choice is " \
		"printed)"), \
	FL_OPT_FLAG("hardware", hardware, "perf counters around the measured window of a " \
		"native run; a host without a PMU reports every counter metric as " \
		"\"unsupported: <reason>\""), \
	FM_GEO_CLI_OPTS("simulated geometry"), \
	FL_OPT_UINT("requests", requests, 1, 1000000, "N", REQ, "measured requests", \
		.alt = "2", .section = "run"), \
	FL_OPT_UINT("warmup", warmup, 0, 1000000, "N", WARM, "requests before the window", \
		.alt = "1"), \
	FL_OPT_STR("stage", stage, "all|extract", "all", "window: the whole request path, or " \
		"the extractor calls only (callgrind --toggle-collect=fl_plan_run)"), \
	FL_OPT_FLAG("quick", quick, "small and fast: --active-copies 2 and --corpus-mb 8 " \
		"(unless given), and the --quick defaults of --requests and --warmup"), \
	FL_OPT_STR("keep", keep, "DIR", NULL, "keep the callgrind output, logs and simreq " \
		"JSON in DIR"), \
	FL_OPT_FLAG("quiet", quiet, "no progress lines"), \
	FL_OPT_STR("json", json, "PATH", NULL, "write the JSON report here too", \
		.section = "output")

static const struct fl_cli_opt validate_opts[] = {
	HARNESS_OPTS("10", "2"),
	FL_OPT_STR("targets", targets, "PATH", NULL, "targets file (default: "
		"<prefix>/share/frontload/targets/production.json, else the source tree's "
		"results/targets/)"),
};
static const struct fl_cli_opt mix_opts[] = { HARNESS_OPTS("10", "2") };
static const struct fl_cli_opt calibrate_opts[] = {
	FL_OPT_REAL("target-mpki", target_mpki, 0.001, 1000, "X", NULL, "L1i misses per 1000 "
		"instructions to reach (required)", .section = "calibration"),
	FL_OPT_REAL("tolerance", tolerance, 0.001, 1000, "T", "1", "stop within +-T MPKI"),
	FL_OPT_UINT("min-calls", min_calls, 1, 100000000, "N", "1000", "calls-per-request "
		"bracket, low end"),
	FL_OPT_UINT("max-calls", max_calls, 1, 100000000, "N", "100000", "calls-per-request "
		"bracket, high end"),
	FL_OPT_UINT("max-runs", max_runs, 2, 50, "N", "7", "measured runs at most, bracket "
		"ends included"),
	FL_OPT_REAL("body-min", body_min, 0, 100, "PCT", "10", "lowest body share tried (%)"),
	HARNESS_OPTS("2", "1"),
};
#undef FL_CLI_OBJ
#define NOPTS(t) (sizeof(t) / sizeof((t)[0]))

/* A forwarded simreq knob: appended to the run's knobs (o->name is static). */
static int harness_take_knob(void *obj, const struct fl_cli_opt *o, const char *val,
	char *err, size_t errlen)
{
	struct fm_harness_args *a = obj;

	if (fm_run_knob(a->run, o->name, val) != 0) {
		snprintf(err, errlen, "--%s: too many knobs", o->name);
		return -1;
	}
	return 0;
}

static struct fl_cli harness_cli(enum fm_harness_cmd cmd)
{
	struct fl_cli c = { .opts = validate_opts, .nopts = NOPTS(validate_opts),
		.alt_flag = "quick", .fwd = &fm_knob_cli, .fwd_title = FM_KNOBS_TITLE,
		.fwd_take = harness_take_knob };

	if (cmd == FM_CMD_MIX) {
		c.opts = mix_opts;
		c.nopts = NOPTS(mix_opts);
	} else if (cmd == FM_CMD_CALIBRATE) {
		c.opts = calibrate_opts;
		c.nopts = NOPTS(calibrate_opts);
	}
	return c;
}

void fm_harness_usage(FILE *fp, enum fm_harness_cmd cmd)
{
	struct fl_cli c = harness_cli(cmd);

	fputs("options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &c);
	fprintf(fp,
"\n"
"cache models (--cpu: %s):\n"
"  zen4: L1i 32 KiB 8-way, L1d 32 KiB 8-way, L2 1 MiB 8-way (AMD Family 19h Software\n"
"    Optimization Guide, pub. 57647)\n"
"  zen5: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 1 MiB 16-way (AMD Family 1Ah Software\n"
"    Optimization Guide, pub. 58455)\n"
"  golden-cove: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 2 MiB 16-way (Intel Optimization\n"
"    Reference Manual; Sapphire Rapids L2; Alder Lake's 1.25 MiB 10-way via --ll)\n"
"  neoverse-v2: L1i 64 KiB 4-way, L1d 64 KiB 4-way, L2 1 MiB 8-way (Arm Neoverse V2 TRM;\n"
"    x86 code: indicative only)\n"
"  The L2 is simulated as valgrind's last level (LL). A geometry whose set count is not a\n"
"  power of two is simulated as the nearest representable one, and the output says so.\n"
"cost: valgrind translates each distinct function once (~%.1f ms each) and then runs\n"
"12-50x slower than native; the estimate printed before a run is (footprint functions\n"
"touched + 3000) x %.1f ms + native run time x %.0f, and a progress line follows every\n"
"30 s.\n", fm_cpu_names(), FM_TRANSLATE_MS, FM_TRANSLATE_MS, FM_SLOWDOWN);
}

int fm_harness_parse(int argc, char **argv, enum fm_harness_cmd cmd,
	struct fm_harness_args *a, struct fm_run *r, void (*usage)(FILE *))
{
	struct fl_cli c = harness_cli(cmd);

	memset(a, 0, sizeof(*a));
	a->sub = argv[0];
	a->run = r;
	if (fm_cli_parse(&c, argc, argv, a, usage) != 0)
		return -1;
	if (strcmp(a->stage, "all") != 0 && strcmp(a->stage, "extract") != 0) {
		fprintf(stderr, FM_PROG ": --stage: all or extract, got \"%s\"\n", a->stage);
		return -1;
	}
	if (a->simulate && a->hardware) {
		fprintf(stderr, FM_PROG ": --simulate and --hardware exclude each other\n");
		return -1;
	}
	if (a->quick) {
		if (!fm_run_knob_get(r, "active-copies"))
			fm_run_knob(r, "active-copies", "2");
		if (!fm_run_knob_get(r, "corpus-mb"))
			fm_run_knob(r, "corpus-mb", "8");
	}
	r->warmup = a->warmup;
	r->requests = a->requests;
	r->stage = a->stage;
	r->quiet = a->quiet;
	return 0;
}

/* Decide the path: asked for, or hardware when counters open here. */
unsigned fm_harness_path(const struct fm_harness_args *a, char *why, size_t len)
{
	struct fl_pmu p;

	why[0] = '\0';
	if (a->simulate)
		return FL_PATH_SIMULATED;
	if (a->hardware)
		return FL_PATH_HARDWARE;
	if (fl_pmu_open(&p, 0, why, len) == 0) {
		fl_pmu_close(&p);
		return FL_PATH_HARDWARE;
	}
	return FL_PATH_SIMULATED;
}

static void print_native_line(json_t *ns, double wall)
{
	char b[32];

	fprintf(stderr, FM_PROG ": native run: %.1f s, %.0f functions in the plan of %.0f, "
		"%.0f extractor calls per request, %.2f ms CPU per request, extraction %s%% of "
		"request CPU\n", wall, fm_json_num(ns, "plan_functions"),
		fm_json_num(ns, "library_functions"), fm_json_num(ns, "extract_calls_per_request"),
		fm_json_num(ns, "cpu_ns_per_request") / 1e6,
		fm_num_str(100 * fm_json_num(ns, "extract_cpu_share"), "%.1f", b));
}

/* Native run (stage shares, cost estimate) then the simulated run. */
int fm_harness_simulate(struct fm_run *r, struct fm_native *nat, struct fm_sim *sim,
	double *eta_out)
{
	char err[2048], a[32];
	double eta;

	if (!r->quiet)
		fprintf(stderr, FM_PROG ": native run of frontload-simreq (stage timings, cost "
			"estimate)\n");
	if (fm_native_run(r, nat, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	eta = fm_sim_eta(nat->wall_s, fm_json_num(nat->summary, "plan_functions"),
		fm_json_num(nat->summary, "extract_calls_per_request"), r->warmup, r->requests);
	*eta_out = eta;
	if (!r->quiet) {
		print_native_line(nat->summary, nat->wall_s);
		fprintf(stderr, FM_PROG ": simulated run: estimated %s (min(plan, %llu requests x "
			"calls) + 3000 functions x %.1f ms translation + %.1f s native x %.0f)\n",
			fm_dur_str(eta, a, sizeof(a)), (unsigned long long)(r->warmup + r->requests),
			FM_TRANSLATE_MS, nat->wall_s, FM_SLOWDOWN);
	}
	if (fm_sim_run(r, eta, sim, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	return 0;
}
