/* measure_main.c: frontload-measure: the top-level help and the subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "measure.h"
#include "mutil.h"

static const char usage_text[] =
"usage: " FM_PROG " validate|mix|calibrate|study|scale [options]   (--help after any)\n"
"\n"
"Measures the front-end load frontload puts on a CPU and checks it against published\n"
"production targets (results/targets/production.json, each with its source).\n"
"\n"
"  validate   L1i MPKI, branch MPKI, instruction mix, stage CPU shares and the CPU\n"
"             profile of the running leaf (mock, leaf, driver as frontload run starts\n"
"             them) vs the targets: per object, per pool, a table (metric, target,\n"
"             measured, verdict, path) and JSON; --harness: frontload-simreq in process\n"
"  mix        the dynamic instruction mix and miss rates only\n"
"  calibrate  find calls per request (then the body share) that give a target L1i MPKI;\n"
"             --leaf: fit the running leaf's CPU profile to the targets, write a profile\n"
"  study      sweep footprint x calls per request, plus an L1i miss-ratio curve; writes\n"
"             study.csv, summary.md and gnuplot plots\n"
"  scale      the scaling study: frontload run per configuration of instances x\n"
"             RANKER threads; QPS, QPS per CPU, p95, IPC and L1i MPKI per configuration\n"
"\n"
"Two measurement paths: hardware (perf counters around the measured window: the leaf's\n"
"per-pool PMU groups, or frontload-simreq's with --harness; where the host has no PMU\n"
"every counter metric is \"unsupported: reason\") and\n"
"simulated (valgrind callgrind's cache and branch simulation with a CPU model's geometry,\n"
"Capstone for the instruction classes). Numbers are never invented: a metric a path cannot\n"
"produce gets the verdict \"unmeasurable\".\n"
"\n"
"exit status: 0 done and every measured target met, 3 a measured target missed\n"
"(validate), 1 a run failed, 2 usage error.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return FM_EXIT_USAGE;
	}
	const char *sub = argv[1];

	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(usage_text, stdout);
		return FM_EXIT_OK;
	}
	if (strcmp(sub, "validate") == 0) {
		/* --harness: frontload-simreq in process; else the running leaf. */
		for (int i = 2; i < argc; i++)
			if (strcmp(argv[i], "--harness") == 0) {
				memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof *argv);
				return fm_validate_main(argc - 2, argv + 1);
			}
		return fm_validate_leaf_main(argc - 1, argv + 1);
	}
	if (strcmp(sub, "mix") == 0)
		return fm_mix_main(argc - 1, argv + 1);
	if (strcmp(sub, "calibrate") == 0) {
		for (int i = 2; i < argc; i++)
			if (strcmp(argv[i], "--leaf") == 0)
				return fm_calibrate_leaf_main(argc - 1, argv + 1);
		return fm_calibrate_main(argc - 1, argv + 1);
	}
	if (strcmp(sub, "study") == 0)
		return fm_study_main(argc - 1, argv + 1);
	if (strcmp(sub, "scale") == 0)
		return fm_scale_main(argc - 1, argv + 1);
	fprintf(stderr, FM_PROG ": unknown subcommand \"%s\" (validate, mix, calibrate, study, "
		"scale; see --help)\n", sub);
	return FM_EXIT_USAGE;
}
