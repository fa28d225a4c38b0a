/* harness_cli.c: what validate --harness, mix and calibrate share: their options and
 * help, the choice of path, and the native run followed by the simulated one. */
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

/* Options of validate, mix and calibrate. */
enum {
	OPT_SIMULATE = 1, OPT_HARDWARE, OPT_CPU, OPT_I1, OPT_D1, OPT_LL, OPT_REQUESTS,
	OPT_WARMUP, OPT_QUICK, OPT_JSON, OPT_TARGETS, OPT_KEEP, OPT_QUIET, OPT_STAGE, OPT_HELP,
	OPT_TARGET_MPKI, OPT_TOLERANCE, OPT_MIN_CALLS, OPT_MAX_CALLS, OPT_MAX_RUNS, OPT_BODY_MIN,
};

static const struct fm_opt harness_opts[] = {
	{ "simulate", 0, OPT_SIMULATE }, { "hardware", 0, OPT_HARDWARE },
	{ "cpu", 1, OPT_CPU }, { "i1", 1, OPT_I1 }, { "d1", 1, OPT_D1 }, { "ll", 1, OPT_LL },
	{ "requests", 1, OPT_REQUESTS }, { "warmup", 1, OPT_WARMUP }, { "quick", 0, OPT_QUICK },
	{ "json", 1, OPT_JSON }, { "targets", 1, OPT_TARGETS }, { "keep", 1, OPT_KEEP },
	{ "quiet", 0, OPT_QUIET }, { "stage", 1, OPT_STAGE }, { "help", 0, OPT_HELP },
	{ "target-mpki", 1, OPT_TARGET_MPKI }, { "tolerance", 1, OPT_TOLERANCE },
	{ "min-calls", 1, OPT_MIN_CALLS }, { "max-calls", 1, OPT_MAX_CALLS },
	{ "max-runs", 1, OPT_MAX_RUNS }, { "body-min", 1, OPT_BODY_MIN },
	{ NULL, 0, 0 },
};

void fm_harness_usage(FILE *fp)
{
	fprintf(fp,
"path:\n"
"  --simulate                 valgrind callgrind (cache + branch simulation, objdump\n"
"                             classes); works without hardware counters\n"
"  --hardware                 perf counters around the measured window of a native run;\n"
"                             a host without a PMU reports every counter metric as\n"
"                             \"unsupported: <reason>\"\n"
"                             (neither: hardware when counters open here, else simulated;\n"
"                             the choice is printed)\n"
"simulated geometry:\n"
"  --cpu MODEL                %s [zen4]\n"
"                             zen4: L1i 32 KiB 8-way, L1d 32 KiB 8-way, L2 1 MiB 8-way (AMD\n"
"                               Family 19h Software Optimization Guide, pub. 57647)\n"
"                             zen5: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 1 MiB 16-way\n"
"                               (AMD Family 1Ah Software Optimization Guide, pub. 58455)\n"
"                             golden-cove: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 2 MiB\n"
"                               16-way (Intel Optimization Reference Manual; Sapphire\n"
"                               Rapids L2; Alder Lake's 1.25 MiB 10-way via --ll)\n"
"                             neoverse-v2: L1i 64 KiB 4-way, L1d 64 KiB 4-way, L2 1 MiB\n"
"                               8-way (Arm Neoverse V2 TRM; x86 code: indicative only)\n"
"                             The L2 is simulated as valgrind's last level (LL). A\n"
"                             geometry whose set count is not a power of two is simulated\n"
"                             as the nearest representable one, and the output says so.\n"
"  --i1 S,A,L, --d1 S,A,L, --ll S,A,L\n"
"                             override a level: size bytes, ways, line bytes\n"
"run:\n"
"  --requests N               measured requests [10; --quick: 2]\n"
"  --warmup N                 requests before the window [2; --quick: 1]\n"
"  --stage all|extract        window: the whole request path, or the extractor calls only\n"
"                             (callgrind --toggle-collect=fl_plan_run) [all]\n"
"  --quick                    small and fast: --active-copies 2 (unless given),\n"
"                             --corpus-mb 8, warmup 1, 2 requests\n"
"  --keep DIR                 keep the callgrind output, logs and simreq JSON in DIR\n"
"  --quiet                    no progress lines\n"
"cost: valgrind translates each distinct function once (~%.1f ms each) and then runs\n"
"12-50x slower than native; the estimate printed before a run is (footprint functions\n"
"touched + 3000) x %.1f ms + native run time x %.0f, and a progress line follows every\n"
"30 s.\n", fm_cpu_names(), FM_TRANSLATE_MS, FM_TRANSLATE_MS, FM_SLOWDOWN);
}

int fm_harness_parse(int argc, char **argv, struct fm_harness_args *a, struct fm_run *r,
	void (*usage)(FILE *))
{
	int i = 1, id, rc;
	const char *v, *knob = NULL;

	memset(a, 0, sizeof(*a));
	a->sub = argv[0];
	a->cpu = "zen4";
	a->stage = "all";
	a->tolerance = 1.0;
	a->min_calls = 1000;
	a->max_calls = 100000;
	a->max_runs = 7;
	a->body_min = 10;
	while ((rc = fm_args_next(argc, argv, &i, harness_opts, &id, &v, &knob)) > 0) {
		switch (id) {
		case OPT_HELP: usage(stdout); exit(FM_EXIT_OK);
		case OPT_SIMULATE: a->simulate = 1; break;
		case OPT_HARDWARE: a->hardware = 1; break;
		case OPT_CPU: a->cpu = v; break;
		case OPT_I1: a->i1 = v; break;
		case OPT_D1: a->d1 = v; break;
		case OPT_LL: a->ll = v; break;
		case OPT_QUICK: a->quick = 1; break;
		case OPT_QUIET: a->quiet = 1; break;
		case OPT_JSON: a->json = v; break;
		case OPT_TARGETS: a->targets = v; break;
		case OPT_KEEP: a->keep = v; break;
		case OPT_STAGE:
			if (strcmp(v, "all") != 0 && strcmp(v, "extract") != 0) {
				fprintf(stderr, FM_PROG ": --stage: all or extract, got \"%s\"\n", v);
				return -1;
			}
			a->stage = v;
			break;
		case OPT_REQUESTS:
			if (fm_parse_u64("requests", v, 1, 1000000, &a->requests) != 0)
				return -1;
			a->requests_set = 1;
			break;
		case OPT_WARMUP:
			if (fm_parse_u64("warmup", v, 0, 1000000, &a->warmup) != 0)
				return -1;
			a->warmup_set = 1;
			break;
		case OPT_TARGET_MPKI:
			if (fm_parse_f64("target-mpki", v, 0.001, 1000, &a->target_mpki) != 0)
				return -1;
			a->have_target = 1;
			break;
		case OPT_TOLERANCE:
			if (fm_parse_f64("tolerance", v, 0.001, 1000, &a->tolerance) != 0)
				return -1;
			break;
		case OPT_MIN_CALLS:
			if (fm_parse_u64("min-calls", v, 1, 100000000, &a->min_calls) != 0)
				return -1;
			break;
		case OPT_MAX_CALLS:
			if (fm_parse_u64("max-calls", v, 1, 100000000, &a->max_calls) != 0)
				return -1;
			break;
		case OPT_MAX_RUNS:
			if (fm_parse_u64("max-runs", v, 2, 50, &a->max_runs) != 0)
				return -1;
			break;
		case OPT_BODY_MIN:
			if (fm_parse_f64("body-min", v, 0, 100, &a->body_min) != 0)
				return -1;
			break;
		case FM_OPT_KNOB:
			if (fm_run_knob(r, knob, v) != 0) {
				fprintf(stderr, FM_PROG ": too many knobs\n");
				return -1;
			}
			break;
		}
	}
	if (rc < 0)
		return -1;
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
	r->warmup = a->warmup_set ? a->warmup : a->quick ? 1 : 2;
	r->requests = a->requests_set ? a->requests : a->quick ? 2 : 10;
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
