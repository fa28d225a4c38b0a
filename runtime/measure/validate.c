/* validate.c: `frontload-measure validate --harness`: frontload-simreq's front-end figures
 * (simulated or hardware path) against the production targets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cpumodel.h"
#include "harness_cli.h"
#include "margs.h"
#include "measure.h"
#include "mix.h"
#include "mutil.h"
#include "pmu.h"
#include "simreport.h"
#include "simrun.h"
#include "targets.h"
#include "verdicts.h"

static void validate_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " validate --harness [--simulate|--hardware] [options] [simreq knobs]\n"
"\n"
"Runs frontload-simreq (the leaf's request path in process: decode, overheads, extract,\n"
"stories, rank, compress, reply; no network) and checks what it measures against the\n"
"production targets, printing a table (metric, target, measured, verdict, path) and, with\n"
"--json, the same as JSON with the full mix, miss rates and run details.\n"
"\n"
"Targets (results/targets/production.json; --targets PATH for another file):\n"
"  L1i MPKI 21 +- 4 and IPC 0.6..0.8: feed aggregator on AMD Bergamo, DCPerf PR 704\n"
"    (github.com/facebookresearch/DCPerf/pull/704)\n"
"  scalar FP <= 3.5%, conditional branches >= 15%, near call/return <= 1.5%,\n"
"    loads+stores 40..46%, divides <= 2% (production: divider-active cycles; here divide\n"
"    instructions, a proxy), instructions per taken branch >= 18: DCPerf PR 705\n"
"  front-end bound 15..30% of slots: Kanev et al., ISCA 2015, \"Profiling a\n"
"    warehouse-scale computer\"; DCPerf PR 704 reports 23.5%\n"
"  feature extraction 30..35% of leaf CPU: DCPerf PR 715 (production's profile)\n"
"Measured (simulated): instructions = Ir less rep string iterations (valgrind counts a\n"
"rep movs/stos/lods/cmps/scas once per iteration, hardware once per execution:\n"
"executions = Ir - taken jcnd at the instruction); L1i MPKI = 1000 x I1mr /\n"
"instructions; LL code MPKI = 1000 x ILmr / instructions; branch MPKI = 1000 x Bcm\n"
"(conditional) or Bim (indirect) / instructions; mix shares are of instructions\n"
"classified (Capstone, AT&T, the executed addresses only) over the objects holding\n"
">= 0.1% of Ir, each rep string execution once; instructions per taken branch =\n"
"classified instructions / (taken\n"
"conditional + jumps + calls + returns). The Ir removed is printed and in the JSON\n"
"(mix.rep_ir_removed, mix.rep_ir_removed_pct).\n"
"Measured (hardware): L1i MPKI and IPC from perf counters; front-end bound only from\n"
"top-down slot events (Intel topdown-fe-bound / slots or TMA level 1, AMD Zen 4+\n"
"dispatch slots; the formula is printed), else unmeasurable, with stalled-cycles-frontend\n"
"/ cycles printed beside it as frontend_stall_cycle_ratio and never judged.\n"
"The extraction share is thread CPU time of stage 3 over stages 1-5,7 in a native run.\n"
"Verdicts: pass, fail, or unmeasurable (the path cannot produce the metric, with why).\n"
"Under a fail the table prints what moves the metric (the target's \"knob\" text).\n"
"\n", fp);
	fm_harness_usage(fp, FM_CMD_VALIDATE);
	fputc('\n', fp);
	fm_sim_limits_usage(fp);
	fputs("\nexit status: 0 every measured target met (unmeasurable ones do not count), 3 a\n"
		"measured target missed, 1 a run failed (simreq, valgrind, the decoder, targets file),\n"
		"2 usage error.\n", fp);
}

static json_t *stages_json(json_t *native)
{
	json_t *o = json_object(), *st = json_object_get(native, "stages"), *v;
	const char *k;

	json_object_foreach(st, k, v)
		json_object_set_new(o, k, fm_num_or_null(100.0 * fm_json_num(v, "cpu_share")));
	return o;
}

int fm_validate_main(int argc, char **argv)
{
	struct fm_harness_args a;
	struct fm_run r;
	struct fm_native nat = { 0 };
	struct fm_sim sim;
	struct fl_targets tg;
	struct fl_measured m[FM_M_N];
	enum fl_verdict v[FM_M_N];
	int have[FM_M_N] = { 0 }, rc = FM_EXIT_RUN, simulated = 0;
	char err[2048], tpath[4096], tmp[256], why[FL_PMU_WHY_LEN], tv[64];
	json_t *notes = NULL, *out = NULL, *tj;
	double eta = 0, t0 = fm_now();
	unsigned path;
	int pass = 0, fail = 0, unm = 0;

	memset(&sim, 0, sizeof(sim));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (fm_harness_parse(argc, argv, FM_CMD_VALIDATE, &a, &r, validate_usage) != 0)
		return FM_EXIT_USAGE;
	if (fm_geometry(&r.geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (a.targets)
		snprintf(tpath, sizeof(tpath), "%s", a.targets);
	else if (fl_targets_default_path(tpath, sizeof(tpath), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	if (fl_targets_load(tpath, &tg, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		goto out;
	}
	r.tmpdir = tmp;
	r.tag = "validate";
	path = fm_harness_path(&a, why, sizeof(why));
	if (!a.simulate && !a.hardware && path == FL_PATH_HARDWARE)
		fprintf(stderr, FM_PROG ": hardware counters open here: using the hardware path "
			"(--simulate for the simulated one)\n");
	if (!a.simulate && !a.hardware && path == FL_PATH_SIMULATED)
		fprintf(stderr, FM_PROG ": hardware path unsupported here (%s): using the "
			"simulated path\n", why);

	if (path == FL_PATH_SIMULATED) {
		if (fm_harness_simulate(&r, &nat, &sim, &eta) != 0)
			goto out;
		simulated = 1;
		fm_meas_sim(m, &sim);
	} else {
		r.pmu = 1;
		if (!a.quiet)
			fprintf(stderr, FM_PROG ": native run of frontload-simreq with --pmu\n");
		if (fm_native_run(&r, &nat, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto out;
		}
		fm_meas_hw(m, nat.summary);
	}
	fm_meas_extract(&m[FM_M_EXTRACT], nat.summary);

	tj = json_array();
	for (int k = 0; k < FM_M_N; k++) {
		const struct fl_target *x = fl_targets_find(&tg, fm_metric_names[k]);
		const struct fl_tgt_source *src;

		if (x == NULL)
			continue;
		have[k] = 1;
		v[k] = fl_target_check(x, &m[k]);
		pass += v[k] == FL_VERDICT_PASS;
		fail += v[k] == FL_VERDICT_FAIL;
		unm += v[k] == FL_VERDICT_UNMEASURABLE;
		src = fl_targets_source(&tg, x->source);
		json_array_append_new(tj, json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s}",
			"metric", x->metric, "label", x->label, "target",
			fl_target_str(x, tv, sizeof(tv)), "unit", x->unit, "measured",
			m[k].available ? json_real(m[k].value) : json_null(), "why", m[k].why,
			"verdict", fl_verdict_name(v[k]), "path", fl_path_name(m[k].path),
			"source", src->title, "url", src->url));
		if (x->knob[0] != '\0')
			json_object_set_new(json_array_get(tj, json_array_size(tj) - 1), "knob",
				json_string(x->knob));
	}
	out = json_object();
	json_object_set_new(out, "tool", json_string(FM_PROG " validate"));
	json_object_set_new(out, "path", json_string(fl_path_name(path)));
	json_object_set_new(out, "targets_file", json_string(tpath));
	json_object_set_new(out, "targets", tj);
	json_object_set_new(out, "summary", json_pack("{s:i,s:i,s:i}", "pass", pass, "fail",
		fail, "unmeasurable", unm));
	json_t *mets = json_object();
	for (int k = 0; k < FM_M_N; k++)
		json_object_set_new(mets, fm_metric_names[k], m[k].available ? json_real(m[k].value) :
			json_null());
	json_object_set_new(out, "metrics", mets);
	json_object_set_new(out, "stages_cpu_pct", stages_json(nat.summary));
	if (!simulated)
		json_object_set_new(out, "hardware", fm_hw_extra(nat.summary, 0));
	json_object_set_new(out, "native", json_incref(nat.summary));
	json_object_set_new(out, "host", fm_host_json());
	json_t *bj = fm_build_json();
	json_object_set_new(out, "build", bj ? bj : json_null());
	if (simulated) {
		json_object_set_new(out, "mix", fm_mix_json(&sim));
		json_object_set_new(out, "rates", fm_rates_json(&sim));
		json_object_set_new(out, "geometry", fm_geometry_json(&r, a.cpu, notes));
		json_object_set_new(out, "simulation", json_pack("{s:s,s:f,s:f,s:O}", "command",
			sim.cmd, "wall_s", sim.wall_s, "estimate_s", eta, "simreq", sim.summary));
		json_t *lim = json_array();
		for (int i = 0; fm_sim_limits[i]; i++)
			json_array_append_new(lim, json_string(fm_sim_limits[i]));
		json_object_set_new(out, "limits", lim);
	}
	json_object_set_new(out, "wall_s", json_real(fm_now() - t0));

	/* The report. */
	printf("frontload validate: %s path", fl_path_name(path));
	if (simulated) {
		char g1[64], g2[64], g3[64];

		printf(", %s model (I1 %s, D1 %s, LL %s)", a.cpu,
			fm_cache_str(&r.geo.i1, g1, sizeof(g1)), fm_cache_str(&r.geo.d1, g2, sizeof(g2)),
			fm_cache_str(&r.geo.ll, g3, sizeof(g3)));
	}
	printf("\n%llu measured requests after %llu warmup, stage %s, %.0f functions in the "
		"plan, %.0f extractor calls per request\n", (unsigned long long)r.requests,
		(unsigned long long)r.warmup, r.stage, fm_json_num(nat.summary, "plan_functions"),
		fm_json_num(nat.summary, "extract_calls_per_request"));
	for (size_t i = 0; notes && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
	putchar('\n');
	fm_print_table(&tg, m, v, have);
	if (!simulated)
		json_decref(fm_hw_extra(nat.summary, 1));
	if (simulated) {
		const struct fl_mix *x = &sim.mix;

		char r1[32], r2[32], r3[32], r4[32], r5[32];

		printf("\nsimulated rates (per 1000 instructions: %llu Ir in the window, less %llu "
			"Ir of rep string iterations (%.3f%%) = %llu instructions as hardware retires "
			"them):\n", (unsigned long long)sim.ir, (unsigned long long)x->rep_ir_removed,
			fm_pct(x->rep_ir_removed, x->ir_total), (unsigned long long)x->ir_hw);
		printf("  L1i MPKI %s, LL code MPKI %s, conditional branch MPKI %s (%s%% "
			"mispredicted), indirect branch MPKI %s\n", fm_rate_str(&x->l1i_mpki, "%.2f", r1),
			fm_rate_str(&x->lli_mpki, "%.3f", r2), fm_rate_str(&x->cond_mpki, "%.2f", r3),
			fm_num_str(fm_pct(sim.bcm, sim.bc), "%.2f", r4), fm_rate_str(&x->ind_mpki, "%.3f", r5));
		printf("instruction mix (%.1f%% of instructions classified; objects: %s):\n",
			100 * sim.classified_share, sim.objects);
		printf("  conditional %.2f%% (taken %.1f%%), calls %.2f%%, returns %.2f%%, loads "
			"%.2f%%, stores %.2f%%, scalar FP %.2f%%, vector %.2f%%, divides %.3f%%, "
			"%s instructions per taken branch\n", fm_pct(x->cond, x->insns),
			100 * x->taken_rate, fm_pct(x->call + x->call_ind, x->insns), fm_pct(x->ret, x->insns),
			fm_pct(x->loads, x->insns), fm_pct(x->stores, x->insns), fm_pct(x->scalar_fp, x->insns),
			fm_pct(x->vector, x->insns), fm_pct(x->int_div + x->fp_div, x->insns),
			fm_num_str(x->taken_branches ? x->insns_per_taken : NAN, "%.2f", r1));
	}
	printf("stage CPU share (native run, thread CPU clock):");
	{
		json_t *st = json_object_get(nat.summary, "stages"), *sv;
		const char *sk;

		json_object_foreach(st, sk, sv) {
			char b[32];

			printf(" %s %s%%", sk, fm_num_str(100 * fm_json_num(sv, "cpu_share"), "%.1f", b));
		}
	}
	printf("\n");
	if (simulated) {
		printf("limits of the simulated path:\n");
		for (int i = 0; fm_sim_limits[i]; i++)
			printf("  - %s\n", fm_sim_limits[i]);
	}
	printf("\n%d pass, %d fail, %d unmeasurable\n", pass, fail, unm);
	if (a.json && fm_write_json(out, a.json) != 0)
		goto out;
	rc = fail ? FM_EXIT_MISSED : FM_EXIT_OK;
out:
	fm_keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	json_decref(out);
	json_decref(notes);
	fm_sim_free(&sim);
	fm_native_free(&nat);
	fl_targets_free(&tg);
	return rc;
}
