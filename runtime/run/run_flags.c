/* run_flags.c: the flags of `frontload run`: option table, defaults, --help, parsing. */
#include "run_flags.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errbuf.h"
#include "leafprofile.h"
#include "run_result.h"
#include "run_search.h"

/* What the flags fill: the run's config, and --qps as given (parsed into cfg after). */
struct run_args {
	struct fl_run_config cfg;
	const char *qps;
};

/* One flag of `frontload run`: parsing, defaults, --quick's defaults and --help read this
 * table. Options with no default here get theirs in run_config_defaults. */
#define FL_CLI_OBJ struct run_args
static const struct fl_cli_opt run_opts[] = {
	FL_OPT_REAL("sla-ms", cfg.search.sla_p95_ms, 0.001, 1e9, "MS", "700", "p95 end-to-end "
		"latency bound of a passing step (ms)"),
	FL_OPT_REAL("start-qps", cfg.search.start_qps, 0.001, 1e9, "QPS", "4", "first capacity "
		"probe, per instance (requests/s)"),
	FL_OPT_REAL("max-qps", cfg.search.max_qps, 0.001, 1e9, "QPS", "100000", "highest rate "
		"the search probes, per instance (requests/s)"),
	FL_OPT_REAL("growth", cfg.search.growth, 1.01, 100, "X", "4", "capacity-probe "
		"multiplier: the probe rate grows by X until the leaf saturates"),
	FL_OPT_REAL("tolerance", cfg.search.tolerance, 0.1, 1000, "PCT", "5", "bisection stops "
		"when (fail - pass) / pass <= PCT percent: the reported rate lies at most this far "
		"below the knee the steps saw, so runs can agree no closer", .div = 100),
	FL_OPT_REAL("saturation-margin", cfg.search.sat_margin, 0, 100, "PCT", "5", "once a "
		"step could not keep up (saturation S, its reply rate), no step or final window "
		"runs above S / (1 + PCT percent): just below saturation a short step passes rates "
		"a 300 s window does not hold; 0 turns the cap off", .div = 100),
	FL_OPT_UINT("max-steps", cfg.search.max_steps, 1, 64, "N", "16", "judged search steps "
		"in all (bracket, bisect, re-measure, and repeats of unsure or driver-limited "
		"steps); capacity probes and final windows are extra", .alt = "14"),
	FL_OPT_UINT("max-finals", cfg.search.max_finals, 1, 8, "N", "3", "final windows at "
		"most: a failed final window sends the search down and the final window runs "
		"again, until N have run"),
	FL_OPT_REAL("warmup-seconds", cfg.warmup_s, 0, 3600, "S", "5", "warm-up before each "
		"step's measured window, not recorded (s)", .alt = "1"),
	FL_OPT_REAL("step-seconds", cfg.search.step_s, 0.5, 86400, "S", "15", "shortest "
		"measured seconds of a search step (longer at low rates, so each step has the "
		"latencies --p95-interval asks for)", .alt = "4"),
	FL_OPT_REAL("max-step-seconds", cfg.search.max_step_s, 0.5, 86400, "S", "60",
		"longest measured seconds of a search step: an unsure step is re-measured for "
		"twice as long up to this", .alt = "12"),
	FL_OPT_REAL("probe-seconds", cfg.search.probe_s, 0.2, 3600, "S", "2", "measured "
		"seconds of a capacity probe", .alt = "1.5"),
	FL_OPT_REAL("p95-interval", cfg.search.ci_pct, 0.1, 4.9, "PCT", "1", "size steps for "
		"a p95 95% interval of +- PCT percentile points (1: p94..p96, 1825 latencies; 2: "
		"p93..p97, 456)", .alt = "2"),
	FL_OPT_REAL("final-seconds", cfg.search.final_s, 1, 86400, "S", "300", "measured "
		"seconds of the steady final window at the chosen rate", .alt = "15"),
	FL_OPT_FLAG("full-finals", cfg.full_finals, "run every final window to its end; "
		"without this a final window ends as soon as its miss is certain: its driver "
		"counted more than 5% of the requests due in it answered over --sla-ms, or 1% "
		"failed, so no end of the window could pass (one driver per instance only)"),
	FL_OPT_STR("qps", qps, "R[,R...]", NULL, "fixed mode: no search; run each rate (per "
		"instance) for --duration and report each (is_fixed_qps = true)"),
	FL_OPT_REAL("duration", cfg.duration_s, 0.5, 86400, "S", "60", "fixed mode: measured "
		"seconds per rate", .alt = "4"),
	FL_OPT_FLAG("quick", cfg.quick, "the whole job in one to three minutes (60 to 190 s "
		"measured on a 2-core machine), for smoke tests and CI: 1 s warm-up, 1.5 s "
		"probes, 4..12 s steps sized for a p95 interval of +- 2 points, 14 steps, 15 s "
		"final windows, 3 at most (flags given explicitly still win)"),
	FL_OPT_UINT("instances", cfg.instances, 1, FL_RUN_MAX_INSTANCES, "N", "1", "sets of "
		"mock + leaf + driver, each pinned to its own CPU range (whole physical cores "
		"first); rates are per instance, QPS is summed, p95 is the worst instance"),
	FL_OPT_UINT("drivers", cfg.drivers, 1, FL_RUN_MAX_DRIVERS, "N", "1", "driver "
		"processes per instance, side by side on the same schedule split N ways: each "
		"sends rate / N requests/s with its own seed and gets 1/N of the in-flight "
		"ceiling; a step's latencies are their histograms merged exactly (the p95 of all "
		"their requests, not an average), counts and rates summed"),
	FL_OPT_STR("driver-ssh", cfg.driver_ssh, "HOST[=DIR][,...]", NULL, "run drivers 1.. of "
		"each instance on other hosts (one host, or one per driver after the first; "
		"driver 0 stays here), each as `ssh HOST DIR/bin/frontload-driver --tls-dir "
		"DIR/tls --control ...` (no =DIR: frontload-driver from the remote PATH, its "
		"default certificates); the step protocol runs over ssh's stdin and stdout, the "
		"driver's stderr goes to its log here, it writes no --json or trace there; needs "
		"--leaf (an address those hosts reach) and --drivers >= 2"),
	FL_OPT_STR("ssh", cfg.ssh, "\"CMD\"", "ssh -o BatchMode=yes", "the ssh command "
		"--driver-ssh runs, split on spaces (add -i KEY, -p PORT, -F CONFIG here)"),
	FL_OPT_FLAG("pin", cfg.pin, "also pin the mock, leaf and driver of an instance to "
		"disjoint CPUs of its range (leaf first; shared when the range has one CPU)"),
	FL_OPT_STR("profile", cfg.profile, "FILE|NAME|none", NULL, "a leaf profile "
		"(frontload-measure calibrate --leaf writes one; NAME = the shipped "
		"data/profile-NAME-KIND.json for this host's kind of CPU, else "
		"data/profile-NAME.json, as frontload-leaf --help says): every leaf started gets --profile FILE, its workload "
		"knobs before the leaf's other flags (--leaf-args win); result.json keeps the path "
		"and the profile's leaf_args. Not given: each leaf applies the shipped default "
		"profile when its library is the build that profile was calibrated for (the "
		"default build), else its built-in knobs; none = the built-in knobs always. What "
		"a leaf applied: result.json instances[].leaf_stats.leaf_config.profile_source. "
		"Not with --leaf"),
	FL_OPT_STR("leaf", cfg.leaf, "HOST:PORT[,...]", NULL, "use running leaves (one, or one "
		"per instance) instead of starting mock and leaf"),
	FL_OPT_STR("mock", cfg.mock, "HOST:PORT[,...]", NULL, "use running mocks (one shared, "
		"or one per instance) instead of starting them; with --leaf, the leaves' mocks, "
		"only to read their stats"),
	FL_OPT_REAL("clock-bound-ms", cfg.clock_bound_ms, 0.001, 1e6, "MS", "10", "remote "
		"hosts' clocks may differ from this one's by this much: a host surely beyond it "
		"(offset less its uncertainty) sets clocks.within_bound false and is warned "
		"about (deadlines and latencies cross hosts on the realtime clock)"),
	FL_OPT_STR("out", cfg.out, "DIR", NULL, "run directory (default: results/<run-id> "
		"under the current directory)"),
	FL_OPT_UINT("seed", cfg.seed, 0, 18000000000000000000ull, "S", "1", "seed of the leaf "
		"(plan, model, fanout) and the driver (schedule, requests; instance i's driver d "
		"uses S + i + d x instances)"),
	FL_OPT_REAL("rpc-fanout-scale", cfg.rpc_fanout_scale, 1e-9, 1e6, "X", NULL, "leaf "
		"outbound calls per request = rpc_dist.json's per-session calls x X (default: "
		"the leaf's, 0.01)"),
	FL_OPT_UINT("extractors-per-story", cfg.extractors_per_story, 0, 100000000, "N", NULL,
		"generated extractor calls per story in the leaf (default: the leaf's, 340)"),
	FL_OPT_UINT("active-copies", cfg.active_copies, 0, UINT32_MAX, "N", NULL, "footprint "
		"knob: copies of each extractor variant in the leaf's plan (0 = all; default: the "
		"leaf's)"),
	FL_OPT_UINT("active-functions", cfg.active_functions, 1, UINT32_MAX, "N", NULL, "fine "
		"footprint knob: distinct functions in the leaf's plan, 1..kept by --active-copies "
		"(default: the leaf's, all kept)"),
	FL_OPT_STR("dispatch", cfg.dispatch, "flat|zipf", NULL, "the leaf's call order: flat "
		"walk or Zipf-skewed frequencies (default: the leaf's, flat)"),
	FL_OPT_REAL("zipf-alpha", cfg.zipf_alpha, 0, 4, "ALPHA", NULL, "Zipf exponent alpha "
		"of --dispatch zipf, 0..4 (default: the leaf's, 1)"),
	FL_OPT_FLAG("tls", cfg.tls, "TLS between driver and leaf (leaf to mock is always "
		"TLS)"),
	FL_OPT_STR("tls-dir", cfg.tls_dir, "DIR", NULL, "certificate directory (tls.h) given "
		"to the mock, leaf and driver started, and trusted when reading remote stats "
		"(default: theirs, the installed tls directory)"),
	FL_OPT_FLAG("trace", cfg.trace, "write trace.csv: per-second sent, completed, in "
		"flight and p95 of every step"),
	FL_OPT_STR("leaf-args", cfg.leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags, "
		"split on spaces (they come last, so they win)"),
	FL_OPT_STR("mock-args", cfg.mock_args, "\"ARGS\"", NULL, "more frontload-mock flags, "
		"split on spaces"),
	FL_OPT_STR("arrival", cfg.arrival, "poisson|binomial|fixed", "poisson", "the "
		"drivers' arrivals (frontload-driver --arrival): poisson = exponential gaps (a "
		"4 s step at 200/s offers 800 +- 28 requests); binomial = every warm-up and "
		"measured window holds exactly round(rate x seconds) requests at uniformly random "
		"times (a Poisson process conditioned on its count, so a step offers the rate "
		"asked for; not the default: measured, it did not make searches repeat closer, "
		"see README); fixed = exactly 1/rate apart"),
	FL_OPT_STR("draws", cfg.draws, "common|fresh", "common", "the drivers' draws "
		"(frontload-driver --draws): common = every step replays the same seeded arrival "
		"gaps and requests, scaled to its rate (common random numbers: two steps differ "
		"in their rate alone, so the search compares rates, not samples, and a re-measure "
		"repeats its step); fresh = each step draws anew, seeded by its number"),
	FL_OPT_FLAG("batch-means", cfg.batch_means, "judge steps and final windows with the "
		"p95's interval widened by batch means (p95 +- t(b-1) x sd / sqrt(b) over the "
		"p95s of the window's b whole seconds, where wider than the order-statistics "
		"interval): latencies in a queue are correlated, which the order-statistics "
		"interval ignores. More steps come out unsure and run longer; without the flag "
		"the half-width is still reported (steps[].instances[].p95_batch_halfwidth_ms)"),
	FL_OPT_STR("driver-args", cfg.driver_args, "\"ARGS\"", NULL, "more frontload-driver "
		"flags, split on spaces (e.g. \"--connections 8\")"),
	FL_OPT_REAL("ready-timeout", cfg.ready_timeout_s, 1, 86400, "S", "120", "how long the "
		"mock and the leaf may take to write their port files (s)"),
};
#undef FL_CLI_OBJ
static const struct fl_cli run_cli = {
	.opts = run_opts, .nopts = sizeof run_opts / sizeof run_opts[0], .alt_flag = "quick",
};

void run_usage(FILE *f)
{
	fputs(
"usage: frontload run [options]\n"
"\n"
"Starts frontload-mock, frontload-leaf and frontload-driver (found beside this program,\n"
"else in PATH), finds the highest request rate whose p95 end-to-end latency stays within\n"
"the SLA, holds it for a steady final window and writes the run directory.\n"
"\n"
"Search: the driver (--drivers: each driver) of an instance keeps its connections open\n"
"across steps.\n"
"  probe     capacity: from --start-qps, short steps (--probe-seconds) with at most 64\n"
"            requests in flight, the rate times --growth until replies fall below 85%\n"
"            of the offered rate; their reply rate is the capacity C (not judged).\n"
"            The first probe that saturates (a cold leaf, or 2 s losing replies to\n"
"            the window's edge) runs again 4 x longer, once, before C rests on it (at\n"
"            1.5 x its replies/s when it answered more than the probe before asked,\n"
"            as deep overload collapses the replies); C is the most replies/s of a\n"
"            saturated probe. Bracket rates are rounded to 0.1 qps.\n"
"  bracket   from 0.8 C, up (or down) by 2 x --tolerance per step (about 4 x after\n"
"            two passes), never past 1.1 x the most the leaf answered (C, or a step's\n"
"            OK replies/s) while below it; bisect (geometric midpoints)\n"
"            between the highest pass and the lowest fail until they are within\n"
"            --tolerance; re-measure the best pass once.\n"
"  final     the steady final window at the best pass. After a failed one the next\n"
"            runs at once --tolerance / 2 below it (the last of --max-finals a whole\n"
"            tolerance below), and its pass converges; with no lower rate passed yet\n"
"            the search first steps down by bracket steps (within --max-steps). A final\n"
"            window ends as soon as its miss is certain: its driver counts the requests\n"
"            due in it from the seeded schedule, and once more than 5% of them came\n"
"            back over the SLA (or 1% failed) no end of the window could pass; but not\n"
"            before 10 s of it, so that a window that fell behind still reads the\n"
"            saturation (--full-finals runs it to its end; the step's miss_stop says\n"
"            what was counted and when it stopped).\n"
"A step passes when the p95's 95% interval lies at or below the SLA (with n latencies,\n"
"the values at ranks n*0.95 +- 1.96*sqrt(n*0.95*0.05), order statistics as in Lancet;\n"
"with --batch-means widened to p95 +- t(b-1) x sd / sqrt(b) of the p95s of the\n"
"window's b whole seconds where that is wider: latencies in a queue are correlated,\n"
"and a queue still building up shows as rising seconds; b >= 3, >= 20 OK a second),\n"
"achieved (OK replies that arrive in the window, any send time) >= the rate the\n"
"open-loop schedule offered minus the larger of 5% and the noise of the window's edges\n"
"(1 + 2 x sqrt(2 x offered x min(p95, SLA)) requests over the window), and errors\n"
"(error replies,\n"
"timeouts, OVERLOADED) < 1% of requests (a request unanswered max(3 s, 4 x SLA) after\n"
"its send time is a timeout). It fails when the interval lies above the SLA (or\n"
"achieved or errors miss). When the SLA lies inside the interval the step is unsure\n"
"and the rate runs again for twice as long (up to --max-step-seconds, where unsure\n"
"counts as a miss). Steps last long enough for the interval --p95-interval asks for.\n"
"Before each step the drivers' in-flight ceiling is set to the requests of one driver\n"
"timeout (max(3 s, 4 x SLA)) at the rate, plus 4 standard deviations of their Poisson\n"
"count (at least 64), so it binds only on requests that would time out anyway; a step\n"
"the driver still limited (driver_limited) is not judged but run again with twice the\n"
"ceiling. After a failed step frontload waits until the leaf has nothing in\n"
"flight before the next one. Default timing: 5 s warm-up, 15..60 s steps and a 300 s\n"
"final window: about 10 minutes. Rates are requests/s per instance.\n"
"\n"
"options (defaults in brackets):\n", f);
	fl_cli_help(f, &run_cli);
	fputs(
"\n"
"Run directory (results/<UTC time>-<random>/ or --out):\n"
"  result.json   rewritten after every step (temp file + rename):\n"
"    status            running | complete | interrupted | failed, with status_reason\n"
"                      (why it stopped or failed; null when there is nothing to say)\n"
"    converged         true only when the knee was bracketed within the tolerance, the\n"
"                      chosen rate passed twice, and the final window at it passed (or\n"
"                      the final window run at once below a failed one, half the\n"
"                      tolerance below with two or more left, a tolerance below as the\n"
"                      last, passed);\n"
"                      converged_reason says why or why not (\"even X qps misses the\n"
"                      SLA\", \"SLA never reached below max\", step budget, the final\n"
"                      window failed --max-finals times); null in fixed mode\n"
"    sla_bound_qps     converged: the final window's rate, summed over instances; else\n"
"                      null\n"
"    lower_bound_qps   not converged: the highest rate that passed every time it was\n"
"                      judged (a lower bound on the knee, not an SLA bound); else null\n"
"    final_requested_qps, final_achieved_qps (OK replies/s in the final window),\n"
"    final_offered_qps (what the schedule offered), final_latency_msec (= p95),\n"
"    p50_ms p90_ms p95_ms p99_ms p99_9_ms max_ms mean_ms   final window, worst instance\n"
"    final_pass, final_verdict (pass/fail/unsure/unjudged), final_why,\n"
"    final_p95_interval_ms {lo, hi, confidence}   the last final window judged like a\n"
"                      search step\n"
"                      (fixed mode: the final_* fields describe the last rate)\n"
"    host_cpu_util_pct  busy share of all CPUs over the final window (/proc/stat)\n"
"    errors            final window: total (error replies + timeouts + OVERLOADED),\n"
"                      overloaded, timeouts, requests\n"
"    is_fixed_qps, sla_p95_ms (= target_latency_msec), instances[] (per instance: CPUs,\n"
"    processes, final numbers, leaf_stats: per-stage CPU ns and cpu_share over the final\n"
"    window and the whole run, cpu_clock (the stage clock in use and why a faster one\n"
"    is not), pmu (per pool ranker/io/fanout and total: IPC, L1i/iTLB/branch MPKI,\n"
"    front-end stall share over the final window, or \"unsupported: reason\");\n"
"    source file, or wire for a --leaf: read with a STATS frame on its port, address,\n"
"    last_error), mock_stats (a --mock with --leaf: its stats at the end, by STATS)),\n"
"    steps[] (every step: verdict, pass (null when unjudged: capacity probes and\n"
"    driver-limited steps; steps.csv leaves it empty), p95_interval_ms, latencies, inflight_ceiling,\n"
"    driver_limited, with per-instance detail: miss_stop (final windows: null, or\n"
"    {p95_over_ms, due, late_limit, failed_limit, late, failed, stopped, stopped_at_s}), p95_batch_halfwidth_ms and p95_batches\n"
"    (batch means over the window's whole seconds, which --batch-means judges with;\n"
"    null under 3 seconds or 20 OK replies a second); with --drivers N > 1\n"
"    each instance's\n"
"    figures are its drivers' merged: latency_hist_ns, the pooled histogram (ns, the\n"
"    driver's form: sub_bits, count, min, max, sum, buckets [[index, count], ...]), and\n"
"    drivers[] each driver's own figures with its seed and latency_hist_ns), search\n"
"    (capacity_qps, capacity_saturated, capacity_reprobed, saturation_qps (the\n"
"    highest reply rate of a judged step that fell short of its offered rate and\n"
"    answered more than any passing step at least as long, null while none did),\n"
"    final_cap_qps\n"
"    (saturation_qps / (1 + --saturation-margin): no final window above it; null\n"
"    without saturation or with margin 0), lo_qps,\n"
"    hi_qps, judged_steps, final_windows; per instance),\n"
"    config (every knob), build (config.json/manifest.json), machines[] (CPU\n"
"    model and counts, kernel), clocks {reference, bound_ms, within_bound (false:\n"
"    a host's clock is surely more than --clock-bound-ms off), hosts[] (each remote\n"
"    leaf, mock and --driver-ssh driver: offset_ms = its clock - ours,\n"
"    uncertainty_ms = half the round trip of the best exchange (STATS frames; a\n"
"    driver's clock control lines, 5 before the first step), rtt_ms, samples,\n"
"    verdict ok/unsure/beyond/unknown, unknown_because when no sample)}\n"
"  steps.csv     one row per step: step, phase (probe/bracket/bisect/remeasure/final/\n"
"                fixed), requested_qps, achieved_qps, p50_ms, p95_ms, p99_ms, errors,\n"
"                overloaded, pass, offered_qps, timeouts, host_cpu_pct, complete,\n"
"                p95_lo_ms, p95_hi_ms (the p95's 95% interval judged: order\n"
"                statistics, with --batch-means widened), latencies, verdict,\n"
"                driver_limited, inflight_ceiling, duration_s, why; empty where nothing\n"
"                was measured\n"
"  trace.csv     with --trace (trace-<i>.csv per instance when several;\n"
"                trace-<i>.<d>.csv per driver with --drivers N > 1)\n"
"  leaf<i>.log, mock<i>.log, driver<i>.log; leaf<i>-stats.json, mock<i>-stats.json;\n"
"  driver<i>.jsonl (every step result line) and driver<i>.json (driver<i>.<d>.* for\n"
"  driver d with --drivers N > 1)\n"
"\n"
"Progress goes to stderr: one line updated in place on a terminal, plain lines otherwise.\n"
"Ctrl-C or SIGTERM stops the current step, stops the children (SIGTERM, 3 s, SIGKILL)\n"
"and writes the result with status interrupted.\n"
"\n"
"exit status: 0 complete, and the search converged (sla_bound_qps set) or fixed mode;\n"
"3 complete but the search did not converge (no SLA bound: see lower_bound_qps and\n"
"converged_reason); 1 failed (a process died or would not start, a driver misbehaved,\n"
"the run directory cannot be written); 2 bad flags;\n"
"130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP.\n", f);
}

/* The defaults the table does not give. */
static void run_config_defaults(struct fl_run_config *c)
{
	memset(c, 0, sizeof *c);
	fl_search_config_default(&c->search);
	c->rpc_fanout_scale = -1;
	c->extractors_per_story = -1;
	c->active_copies = -1;
	c->active_functions = -1;
	c->zipf_alpha = -1;
	c->driver_timeout_s = 10;
}

int run_parse_args(struct fl_run_config *c, int argc, char **argv, char *err,
	size_t errlen)
{
	struct run_args a = { .qps = NULL };

	run_config_defaults(&a.cfg);
	int rc = fl_cli_parse(&run_cli, argc, argv, &a, err, errlen);
	*c = a.cfg;
	if (rc != 0)
		return rc;
	if (a.qps) {
		int n = fl_cli_rates(a.qps, c->fixed_qps, FL_RUN_MAX_FIXED);
		if (n < 0) {
			fl_errf(err, errlen, "--qps: '%s' is not a list of rates > 0 (at most %u)",
				a.qps, FL_RUN_MAX_FIXED);
			return -1;
		}
		c->nfixed = (unsigned)n;
	}
	if (fl_search_config_check(&c->search, err, errlen) != 0)
		return -1;
	if (strcmp(c->arrival, "binomial") != 0 && strcmp(c->arrival, "poisson") != 0 &&
	    strcmp(c->arrival, "fixed") != 0) {
		fl_errf(err, errlen, "--arrival: '%s' is not poisson, binomial or fixed",
			c->arrival);
		return -1;
	}
	if (strcmp(c->draws, "common") != 0 && strcmp(c->draws, "fresh") != 0) {
		fl_errf(err, errlen, "--draws: '%s' is not common or fresh", c->draws);
		return -1;
	}
	if (c->profile && c->leaf) {
		fl_errf(err, errlen, "--profile: the leaves given with --leaf run with the "
			"flags they were started with; give the profile to them");
		return -1;
	}
	if (c->profile && strcmp(c->profile, "none") == 0) {
		snprintf(c->profile_path, sizeof(c->profile_path), "none");
	} else if (c->profile) {
		char *args[FL_PROFILE_MAX_ARGS];
		int n = 0;

		/* Checked here, so a bad profile stops the run before anything starts. */
		if (fl_profile_args(c->profile, args, &n, err, errlen) != 0)
			return -1;
		fl_profile_args_free(args, n);
		char file[4096];
		if (fl_profile_resolve(c->profile, file, sizeof(file), err, errlen) != 0)
			return -1;
		if (realpath(file, c->profile_path) == NULL) {
			fl_errf(err, errlen, "--profile %s: %s", c->profile, strerror(errno));
			return -1;
		}
	}
	if (c->driver_ssh && (c->drivers < 2 || c->leaf == NULL)) {
		fl_errf(err, errlen, "--driver-ssh: needs --drivers 2 or more (driver 0 runs "
			"here) and --leaf (an address the driver hosts can reach)");
		return -1;
	}
	/* Well past the SLA, so a timeout is a failed request, yet short enough that an
	 * overloaded step does not drag on. */
	c->driver_timeout_s = fmax(3.0, 4 * c->search.sla_p95_ms / 1000);
	/* Sized from the timeout, the driver's ceiling binds only on requests that would
	 * fail anyway: with 2 x SLA it bound in a default run's 300 s final windows (p99
	 * 1.1-1.6 x SLA), leaving them unjudged. */
	c->search.inflight_s = c->driver_timeout_s;
	return 0;
}
