/* calibrate.c: `frontload-measure calibrate`: the extractor calls per request (then the
 * body share) that give a target L1i MPKI, by bisection over measured runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cpumodel.h"
#include "harness_cli.h"
#include "margs.h"
#include "measure.h"
#include "mutil.h"
#include "pmu.h"
#include "simrun.h"
#include "targets.h"

static void calibrate_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " calibrate --target-mpki X [--simulate|--hardware] [options]\n"
"                  [simreq knobs]\n"
"\n"
"Finds the extractor calls per request that give L1i MPKI X: L1i MPKI rises with calls\n"
"per request, as extraction's share of the instructions grows against the small-footprint\n"
"stages. Geometric bisection between --min-calls and --max-calls, one measured run per\n"
"step (simulated: callgrind cache totals per instruction, without branch simulation, so\n"
"rep string iterations count once (see mix); hardware: perf L1i misses). When\n"
"X is above the MPKI at --max-calls, it then bisects the body share (--body, % of calls\n"
"running their full body: fewer instructions per fetched function) down to --body-min.\n"
"Prints each step and the settings found (--calls-per-request N [--body P]).\n"
"calibrate --leaf fits the running leaf's CPU profile instead and writes a leaf profile\n"
"(calibrate --leaf --help).\n"
"\n", fp);
	fm_harness_usage(fp, FM_CMD_CALIBRATE);
	fputs("\nexit status: 0 a setting within tolerance was found, 3 none within tolerance\n"
		"(the closest is printed), 1 a run failed (or no hardware counters with --hardware),\n"
		"2 usage error.\n", fp);
}

struct cal_ctx {
	struct fm_run *r;
	unsigned path;
	int runs, max_runs;
	json_t *steps;
	double native_s_per_call, native_base_s;
	double plan_functions;
};

/* One measured point. Returns 0 with *mpki, or -1 (printed). */
static int cal_point(struct cal_ctx *c, uint64_t calls, double body, double *mpki)
{
	struct fm_run rr = *c->r;
	char cs[32], bs[32], err[2048], tag[64], a[32];
	double t0 = fm_now();

	snprintf(cs, sizeof(cs), "%llu", (unsigned long long)calls);
	snprintf(bs, sizeof(bs), "%g", body);
	snprintf(tag, sizeof(tag), "cal%d", c->runs);
	rr.tag = tag;
	fm_run_knob(&rr, "calls-per-request", cs);
	fm_run_knob(&rr, "body", bs);
	c->runs++;
	if (c->path == FL_PATH_SIMULATED) {
		struct fm_sim s;
		double eta = fm_sim_eta(c->native_base_s + c->native_s_per_call * (double)calls *
			(double)(rr.warmup + rr.requests), c->plan_functions, (double)calls, rr.warmup,
			rr.requests);

		rr.mix = 0;
		rr.quiet = 1;
		fprintf(stderr, FM_PROG ": run %d/%d: %llu calls per request, body %g%%, "
			"estimated %s\n", c->runs, c->max_runs, (unsigned long long)calls, body,
			fm_dur_str(eta, a, sizeof(a)));
		if (fm_sim_run(&rr, eta, &s, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			return -1;
		}
		if (!s.mix.l1i_mpki.available) {
			fprintf(stderr, FM_PROG ": %s\n", s.mix.l1i_mpki.why);
			fm_sim_free(&s);
			return -1;
		}
		*mpki = s.mix.l1i_mpki.value;
		fm_sim_free(&s);
	} else {
		struct fm_native n;

		rr.pmu = 1;
		if (fm_native_run(&rr, &n, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			return -1;
		}
		*mpki = fm_json_num(n.summary, "pmu.metrics.l1i_mpki.value");
		fm_native_free(&n);
		if (!isfinite(*mpki)) {
			fprintf(stderr, FM_PROG ": L1i misses unsupported by the counters here\n");
			return -1;
		}
	}
	fprintf(stderr, FM_PROG ": run %d/%d: %llu calls per request, body %g%% -> L1i MPKI "
		"%.2f (%s)\n", c->runs, c->max_runs, (unsigned long long)calls, body, *mpki,
		fm_dur_str(fm_now() - t0, a, sizeof(a)));
	json_array_append_new(c->steps, json_pack("{s:I,s:f,s:f,s:f}", "calls_per_request",
		(json_int_t)calls, "body_pct", body, "l1i_mpki", *mpki, "seconds", fm_now() - t0));
	return 0;
}

int fm_calibrate_main(int argc, char **argv)
{
	struct fm_harness_args a;
	struct fm_run r;
	struct cal_ctx c;
	char err[2048], tmp[256], why[FL_PMU_WHY_LEN];
	json_t *notes = NULL, *out;
	double lo_m, hi_m, best_m, best_body = 100, body_given = 100;
	uint64_t lo, hi, best;
	int rc = FM_EXIT_RUN, found = 0;

	memset(&c, 0, sizeof(c));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (fm_harness_parse(argc, argv, FM_CMD_CALIBRATE, &a, &r, calibrate_usage) != 0)
		return FM_EXIT_USAGE;
	if (a.target_mpki == 0) {
		fprintf(stderr, FM_PROG ": calibrate needs --target-mpki X (see --help)\n");
		return FM_EXIT_USAGE;
	}
	if (a.min_calls >= a.max_calls) {
		fprintf(stderr, FM_PROG ": --min-calls must be below --max-calls\n");
		return FM_EXIT_USAGE;
	}
	if (fm_run_knob_get(&r, "calls-per-request") || fm_run_knob_get(&r,
	    "extractors-per-story")) {
		fprintf(stderr, FM_PROG ": calibrate chooses the calls per request itself; drop "
			"--calls-per-request/--extractors-per-story\n");
		return FM_EXIT_USAGE;
	}
	if (fm_run_knob_get(&r, "body"))
		body_given = atof(fm_run_knob_get(&r, "body"));
	if (fm_geometry(&r.geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	c.path = fm_harness_path(&a, why, sizeof(why));
	if (a.hardware && c.path == FL_PATH_HARDWARE) {
		struct fl_pmu p;

		if (fl_pmu_open(&p, 0, why, sizeof(why)) != 0) {
			fprintf(stderr, FM_PROG ": --hardware: unsupported: %s\n", why);
			json_decref(notes);
			return FM_EXIT_RUN;
		}
		fl_pmu_close(&p);
	} else if (!a.simulate && !a.hardware && c.path == FL_PATH_SIMULATED) {
		fprintf(stderr, FM_PROG ": hardware path unsupported here (%s): using the "
			"simulated path\n", why);
	}
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	c.r = &r;
	c.max_runs = (int)a.max_runs;
	c.steps = json_array();

	/* Native cost model: one short run at each bracket end. */
	{
		struct fm_run rr = r;
		struct fm_native n1, n2;
		char s1[32], s2[32];

		rr.tag = "cal-native-lo";
		snprintf(s1, sizeof(s1), "%llu", (unsigned long long)a.min_calls);
		snprintf(s2, sizeof(s2), "%llu", (unsigned long long)a.max_calls);
		fm_run_knob(&rr, "calls-per-request", s1);
		if (fm_native_run(&rr, &n1, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto out;
		}
		rr = r;
		rr.tag = "cal-native-hi";
		fm_run_knob(&rr, "calls-per-request", s2);
		if (fm_native_run(&rr, &n2, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			fm_native_free(&n1);
			goto out;
		}
		c.native_s_per_call = (n2.wall_s - n1.wall_s) / ((double)(a.max_calls -
			a.min_calls) * (double)(r.warmup + r.requests));
		if (c.native_s_per_call < 0)
			c.native_s_per_call = 0;
		c.native_base_s = n1.wall_s;
		c.plan_functions = fm_json_num(n1.summary, "plan_functions");
		fm_native_free(&n1);
		fm_native_free(&n2);
	}

	lo = a.min_calls;
	hi = a.max_calls;
	if (cal_point(&c, lo, body_given, &lo_m) != 0 || cal_point(&c, hi, body_given, &hi_m) != 0)
		goto out;
	best = fabs(lo_m - a.target_mpki) < fabs(hi_m - a.target_mpki) ? lo : hi;
	best_m = best == lo ? lo_m : hi_m;
	best_body = body_given;
	if (fabs(best_m - a.target_mpki) <= a.tolerance)
		found = 1;
	if (!found && a.target_mpki > lo_m && a.target_mpki < hi_m) {
		/* MPKI grows with calls: bisect in log space. */
		while (c.runs < c.max_runs && hi > lo + 1 && !found) {
			uint64_t mid = (uint64_t)llround(sqrt((double)lo * (double)hi));
			double mm;

			if (mid <= lo || mid >= hi)
				break;
			if (cal_point(&c, mid, body_given, &mm) != 0)
				goto out;
			if (fabs(mm - a.target_mpki) < fabs(best_m - a.target_mpki)) {
				best = mid;
				best_m = mm;
			}
			if (fabs(mm - a.target_mpki) <= a.tolerance)
				found = 1;
			else if (mm < a.target_mpki)
				lo = mid;
			else
				hi = mid;
		}
	} else if (!found && a.target_mpki > hi_m && a.body_min < body_given) {
		/* Even the most calls fall short: fewer full bodies at the top of the bracket. */
		double blo = a.body_min, bhi = body_given;

		while (c.runs < c.max_runs && !found && bhi - blo > 1) {
			double mid = (blo + bhi) / 2, mm;

			if (cal_point(&c, a.max_calls, mid, &mm) != 0)
				goto out;
			if (fabs(mm - a.target_mpki) < fabs(best_m - a.target_mpki)) {
				best = a.max_calls;
				best_m = mm;
				best_body = mid;
			}
			if (fabs(mm - a.target_mpki) <= a.tolerance)
				found = 1;
			else if (mm < a.target_mpki)
				bhi = mid;  /* need more misses per instruction: less body */
			else
				blo = mid;
		}
	}
	printf("frontload calibrate: %s path, target L1i MPKI %g +- %g\n", fl_path_name(c.path),
		a.target_mpki, a.tolerance);
	for (size_t i = 0; i < json_array_size(c.steps); i++) {
		json_t *s = json_array_get(c.steps, i);

		printf("  %2zu  calls per request %8.0f  body %5.1f%%  L1i MPKI %7.2f\n", i + 1,
			fm_json_num(s, "calls_per_request"), fm_json_num(s, "body_pct"),
			fm_json_num(s, "l1i_mpki"));
	}
	printf("%s: --calls-per-request %llu", found ? "found" :
		"closest (not within tolerance)", (unsigned long long)best);
	if (best_body != body_given)
		printf(" --body %g", best_body);
	printf("  (L1i MPKI %.2f)\n", best_m);
	out = json_pack("{s:s,s:s,s:f,s:f,s:b,s:I,s:f,s:f,s:o,s:O}", "tool",
		FM_PROG " calibrate", "path", fl_path_name(c.path), "target_mpki", a.target_mpki,
		"tolerance", a.tolerance, "found", found, "calls_per_request", (json_int_t)best,
		"body_pct", best_body, "l1i_mpki", best_m, "steps", json_incref(c.steps),
		"geometry_notes", notes);
	rc = a.json && fm_write_json(out, a.json) != 0 ? FM_EXIT_RUN :
		found ? FM_EXIT_OK : FM_EXIT_MISSED;
	json_decref(out);
out:
	fm_keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	json_decref(c.steps);
	json_decref(notes);
	return rc;
}
