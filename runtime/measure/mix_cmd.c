/* mix_cmd.c: `frontload-measure mix`: the dynamic instruction mix and miss rates of
 * frontload-simreq's measured window, simulated. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cpumodel.h"
#include "harness_cli.h"
#include "margs.h"
#include "measure.h"
#include "mix.h"
#include "mutil.h"
#include "simreport.h"
#include "simrun.h"

static void mix_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " mix [options] [simreq knobs]\n"
"\n"
"The dynamic instruction mix of frontload-simreq's measured window under valgrind\n"
"callgrind (always the simulated path: the hardware path reads no per-class counters):\n"
"every executed address's count (--dump-instr=yes) joined with its objdump class, taken\n"
"conditional branches from --collect-jumps=yes, plus L1i/LL code MPKI and branch MPKI.\n"
"A rep string instruction counts once per execution (Ir - taken jcnd at it), in the mix\n"
"and in every rate's denominator; the Ir this removes is printed and in the JSON.\n"
"Prints a table and, with --json PATH, JSON. No targets are checked (see validate).\n"
"\n", fp);
	fm_harness_usage(fp, FM_CMD_MIX);
	fputc('\n', fp);
	fm_sim_limits_usage(fp);
	fputs("\nexit status: 0 done, 1 a run failed, 2 usage error.\n", fp);
}

int fm_mix_main(int argc, char **argv)
{
	struct fm_harness_args a;
	struct fm_run r;
	struct fm_native nat = { 0 };
	struct fm_sim sim;
	char err[2048], tmp[256];
	json_t *notes = NULL, *out;
	double eta;
	int rc = FM_EXIT_RUN;

	memset(&sim, 0, sizeof(sim));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (fm_harness_parse(argc, argv, FM_CMD_MIX, &a, &r, mix_usage) != 0)
		return FM_EXIT_USAGE;
	if (a.hardware) {
		fprintf(stderr, FM_PROG ": mix: the hardware path reads no per-class counters; "
			"the mix is simulated only\n");
		return FM_EXIT_USAGE;
	}
	if (fm_geometry(&r.geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	r.tag = "mix";
	if (fm_harness_simulate(&r, &nat, &sim, &eta) != 0)
		goto out;
	printf("frontload mix: simulated, %s model, %llu measured requests, stage %s, objects: "
		"%s\n", a.cpu, (unsigned long long)r.requests, r.stage, sim.objects);
	fl_mix_print(&sim.mix, stdout);
	out = json_pack("{s:s,s:o,s:o,s:o,s:s,s:f}", "tool", FM_PROG " mix", "mix",
		fm_mix_json(&sim), "rates", fm_rates_json(&sim), "geometry",
		fm_geometry_json(&r, a.cpu, notes), "command", sim.cmd, "wall_s", sim.wall_s);
	json_object_set_new(out, "simreq", json_incref(sim.summary));
	rc = a.json && fm_write_json(out, a.json) != 0 ? FM_EXIT_RUN : FM_EXIT_OK;
	json_decref(out);
out:
	fm_keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	json_decref(notes);
	fm_sim_free(&sim);
	fm_native_free(&nat);
	return rc;
}
