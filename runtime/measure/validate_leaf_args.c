/* validate_leaf_args.c: the options of `validate` on the running leaf: their table, the
 * leaf knobs it forwards (and those it refuses), the help, and the parse. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "margs.h"
#include "mutil.h"
#include "validate_leaf.h"

/* ---- options ---- */

#define FL_CLI_OBJ struct vl_args
static const struct fl_cli_opt vl_opts[] = {
	FL_OPT_FLAG("simulate", simulate, "both runs, as with neither flag: the simulated "
		"window's rate comes from the native one (--sim-qps auto), which is judged too; "
		"kept for commands written for --harness --simulate", .section = "path (neither "
		"given: both runs)"),
	FL_OPT_FLAG("hardware", hardware, "the native run only"),
	FL_OPT_REAL("qps", qps, 0.01, 1e6, "R", "40", "native rate (requests/s): at the "
		"default profile's ~5 ms of leaf CPU per request (12-07, Intel Xeon host), 40 qps "
		"and --perf-hz 19999 give ~270,000 cpu-clock samples in the 45 s window (a share "
		"near 3.5% then has a 95% interval of about +-0.07 points, a quarter of "
		"encryption's 0.3-point band)",
		.section = "rates and windows"),
	FL_OPT_STR("sim-qps", sim_qps_text, "R|auto", "auto", "rate under simulation "
		"(requests/s, 0.001..1e6): valgrind runs the leaf ~50x slower, one thread at a "
		"time, and every request must still complete without queueing behind another (the "
		"leaf calls a request older than --stale-ms stale); auto = 0.25 / (the native "
		"window's CPU per request x 50 + its median latency), at most --qps; arrivals at "
		"fixed gaps (driver --arrival fixed)"),
	FL_OPT_UINT("sim-requests", sim_requests, 1, 100000, "N", "32", "requests in the "
		"simulated window (32: the fanout's zstd payloads, drawn from heavy-tailed size "
		"tables, made libzstd 7% of one 16-request window's instructions and 22% of "
		"another's, and 11-13% of 32-request windows): its length is (N + 1/2) / rate; "
		"the warm-up step there is the longer of --warmup and 3 requests' gaps (the first "
		"requests pay valgrind's translation of everything they run)"),
	FL_OPT_STR("sim-leaves", sim_leaves_text, "N|auto", "auto", "simulated leaves run side "
		"by side (1..8), each with its own mock and driver, under its own valgrind (one CPU "
		"each), holding its share of --sim-requests (leaf k: --seed SEED+k-1); their "
		"callgrind counts are summed; auto = 2 on a host with 2 or more online CPUs, else 1, "
		"never more than --sim-requests. Each takes ~4 GB of memory on the default build"),
	FL_OPT_REAL("warmup", warmup_s, 0, 86400, "S", "4", "warm-up step before the window "
		"(seconds)"),
	FL_OPT_REAL("window", window_s, 0.1, 86400, "S", "45", "the measured step (seconds): "
		"45 s holds ~1,800 requests at --qps 40 and keeps the native run under a minute; "
		"against 15 s it cuts the sampling error by sqrt(3) and averages the workload's "
		"own spread (payload sizes drawn per call) over 3x the requests: 15 s windows of "
		"one profile read encryption 3.41-3.79% (band 3.3-3.6) on 12-07"),
	FL_OPT_REAL("timeout-s", timeout_s, 1, 86400, "S", "60", "driver timeout, and the "
		"leaf's --rpc-timeout-ms (seconds; the leaf's at most 3600); the simulated leaves get "
		"5x it (the leaf's still at most 3600), and --stale-ms "
		"and --rpc-ping-ms stretched 50x (valgrind's clock)"),
	FL_OPT_FLAG("tls", tls, "TLS between driver and leaf (frontload run --tls)",
		.section = "the service"),
	FL_OPT_STR("profile", leaf_profile, "FILE|NAME|none", NULL, "a leaf profile "
		"(calibrate --leaf writes one; not the CPU profile of --no-profile): both leaves "
		"get --profile FILE, its workload knobs before every other leaf flag. Not given: "
		"the leaf applies the shipped default profile when its library is the build that "
		"profile was calibrated for (the default build), else its built-in knobs; none = "
		"the built-in knobs always. JSON: config.leaf_profile_applied"),
	FL_OPT_STR("leaf-args", leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags (as "
		"frontload run --leaf-args)"),
	FL_OPT_STR("driver-args", driver_args, "\"ARGS\"", NULL, "more frontload-driver "
		"flags"),
	FL_OPT_FLAG("no-profile", no_profile, "no perf record profile", .section = "measurement"),
	FL_OPT_UINT("perf-hz", perf_hz, 1, 100000, "HZ", "19999", "perf sampling frequency "
		"(Hz; kernel.perf_event_max_sample_rate caps it): 19999 rather than 4999 because "
		"encryption's band, 3.3..3.6%, is narrower than the 95% interval of ~48,000 "
		"samples (+-0.16 points; 3 validates of one profile read 3.04-3.24% at 4999 Hz, "
		"3.32-3.41% at 19999, 12-07: the rate moves the shares too, README: Validation); "
		"the wall time is the same"),
	FL_OPT_FLAG("objdump", objdump, "classify the executed instructions from objdump's "
		"text of each whole object (as --harness) instead of decoding just them in "
		"process with Capstone (the default; same classes: tests/test_dis_cs compares "
		"the two)"),
	FM_GEO_CLI_OPTS("simulated geometry"),
	FL_OPT_STR("json", json, "PATH", NULL, "the full report as JSON", .section = "output"),
	FL_OPT_STR("targets", targets, "PATH", NULL, "targets file (default: production.json, "
		"as --harness)"),
	FL_OPT_STR("keep", keep, "DIR", NULL, "keep logs, stats, callgrind and perf files in "
		"DIR"),
	FL_OPT_FLAG("quiet", quiet, "no progress lines"),
};
#undef FL_CLI_OBJ

/* A leaf knob: --seed is the run's (kept here), any other is passed to the leaf. */
static int vl_take_knob(void *obj, const struct fl_cli_opt *o, const char *val, char *err,
	size_t errlen)
{
	struct vl_args *a = obj;

	if (fm_knob_not_leaf(o->name)) {
		snprintf(err, errlen, "--%s is not a frontload-leaf knob (the request "
			"stream is the driver's: give it in --driver-args if the driver takes "
			"it)", o->name);
		return -1;
	}
	if (strcmp(o->name, "seed") == 0)
		return fl_cli_parse_uint(val, &a->seed);  /* range-checked by the table */
	if (a->nknobs + 2 >= FM_MAX_KNOBS) {
		snprintf(err, errlen, "--%s: too many knobs", o->name);
		return -1;
	}
	a->knobs[a->nknobs++] = o->name;
	a->knobs[a->nknobs++] = val;
	return 0;
}

static const struct fl_cli vl_cli = {
	.opts = vl_opts, .nopts = sizeof(vl_opts) / sizeof(vl_opts[0]), .fwd = &fm_knob_cli,
	.fwd_title = "leaf knobs (the frontload-simreq knobs frontload-leaf also takes, passed "
		"to the leaf; defaults are the leaf's; calls-per-request, corpus-mb, "
		"max-request-bytes, method, request-bytes, sessions, stories, story-bytes, zstd "
		"and zstd-frames shape the request stream and are refused here)",
	.fwd_take = vl_take_knob,
};

static void vl_usage(FILE *fp)
{
	fputs(
"usage: " FM_PROG " validate [--simulate|--hardware] [options] [leaf knobs]\n"
"       " FM_PROG " validate --harness [...]   (frontload-simreq in process; --harness\n"
"                                              --help for its options)\n"
"\n"
"Measures the service that `frontload run` loads: starts frontload-mock, frontload-leaf\n"
"(with the leaf knobs given) and frontload-driver as frontload run does, holds a fixed\n"
"low rate, and measures one window of whole requests: between two leaf stats snapshots\n"
"around one driver step, after a warm-up step on the same connections. The window must\n"
"hold only whole, successful requests (the driver: every request answered OK, no\n"
"timeouts, errors or OVERLOADED; the leaf: received = replied = OK = sent, no stale,\n"
"denied or bad requests, no deadline skips, no failed fanout calls); otherwise the\n"
"window fails, says why, and nothing measured in it is judged.\n"
"\n"
"Two runs of the service, the same steps each:\n"
"  native     the leaf as frontload run starts it: its stage clock over the window (stage\n"
"             CPU shares, of stage CPU and of the pools' CPU), its per-pool PMU groups\n"
"             (the hardware path: \"unsupported: <why>\" where the host has no counters),\n"
"             and a perf record -e cpu-clock profile of the leaf over the window, kernel\n"
"             included where permitted, each sample classified into production's\n"
"             categories by runtime/data/profile_categories.txt\n"
"  simulated  the leaf under valgrind --tool=callgrind with cache and branch simulation\n"
"             (--cpu geometry), instrumentation off until the warm-up step starts\n"
"             (callgrind_control -i on), counters zeroed at the window's start and dumped\n"
"             at its end, every thread separately (--separate-threads=yes): Ir, L1i and\n"
"             LL code MPKI, branch MPKI and the instruction mix (the classes and rep\n"
"             string correction of --harness, the executed instructions decoded in\n"
"             process with Capstone; PLT stubs, which callgrind charges to the call\n"
"             through them, count as their GOT jumps, not as calls) for the whole\n"
"             process, per object kind\n"
"             (generated library, leaf, libc, libcrypto/libssl, libzstd, libevent,\n"
"             OpenBLAS, protobuf-c, ...), per pool (ranker, io, fanout, main) and,\n"
"             within the generated library, per pattern (P01..P27 by its fl_PNN_\n"
"             symbols, shared for its helpers: which code shapes run its instructions\n"
"             and miss the L1i; miss% is of the whole process's L1i misses);\n"
"             valgrind runs one thread at a time, so the window's requests are spread\n"
"             over --sim-leaves leaves side by side (each its own mock, leaf and driver)\n"
"             and their counts summed\n"
"  (--hardware: the native run only; default and --simulate: both)\n"
"\n"
"options (defaults in brackets):\n", fp);
	fl_cli_help(fp, &vl_cli);
	fputs(
"\n"
"Every table names its path (simulated, native, hardware). Verdicts as --harness: the\n"
"simulated figures judge L1i MPKI and the mix, the native stage clock judges the\n"
"extraction share (extract stage CPU / the RANKER, IO and FANOUT pools' CPU over the\n"
"window), the native profile judges the category shares, the PMU groups IPC and\n"
"front-end bound.\n"
"\n"
"limits: the simulated leaf runs serialized on one core under valgrind, so its timers\n"
"(keepalive pings, stats) fire relatively more often per request than natively; they\n"
"are part of the window's instructions. valgrind's CPUID hides instruction-set\n"
"extensions (AVX-512, VAES, VPCLMULQDQ, SHA on an AVX-512 host) from OpenSSL, zstd\n"
"and OpenBLAS, which may then run other code under simulation than natively\n"
"(tests/bench/crypto_cpuid.sh measures OpenSSL's side; README, validation). The\n"
"profile attributes each sample to its own symbol (no call\n"
"chains): libc's memcpy and malloc stay \"other\".\n"
"\n"
"--json: config {qps, warmup_s, window_s, sim_qps, sim_warmup_s, sim_window_s, ...};\n"
"  native {whole, why, wall_s, error, driver_step (the driver's step object)};\n"
"  simulated {whole, why, wall_s (the slowest leaf), sent (summed), leaves [{tag, seed,\n"
"  requests (its share), whole, why, wall_s, error, driver_step}]}; stages {stages {<stage>: cpu_ns, share}, pools {ranker, io, fanout: cpu_ns},\n"
"  process_cpu_ns, stage_cpu_ns}; pmu {ranker, io, fanout, total: instructions, cycles,\n"
"  l1i_misses, branch_misses, ipc, l1i_mpki, branch_mpki, each a number or\n"
"  \"unsupported: <why>\"}; profile {samples, kernel_samples, event, categories {<id>:\n"
"  label, samples, pct, top [{symbol, samples}]}, pools {<pool>: {<id>: samples}}} or\n"
"  \"unsupported: <why>\"; process, objects [...], pools [...] (simulated rows: name, ir,\n"
"  ir_pct, ir_per_request, instructions, l1i_mpki, l1i_miss_pct, ll_code_mpki,\n"
"  cond_branch_mpki, indirect_branch_mpki, cond_branch_pct, mem_pct, scalar_fp_pct,\n"
"  call_ret_pct, div_pct, insns_per_taken_branch, classified_pct, rep_ir_removed,\n"
"  plt_stub_insns (PLT-stub instructions callgrind charges to call sites); pools\n"
"  add threads); classified_by {decoder, seconds}; targets [...]; summary; host; build;\n"
"  wall_s. A figure not measured is null, never 0.\n"
"\n"
"exit status: 0 every measured target met, 3 a target missed or the window was not\n"
"whole, 1 a run failed, 2 usage error, 130 / 143 interrupted by SIGINT / SIGTERM (mock,\n"
"leaf and driver stopped first; nothing judged).\n", fp);
}

int vl_parse(int argc, char **argv, struct vl_args *a)
{
	memset(a, 0, sizeof *a);
	a->seed = 1;
	if (fm_cli_parse(&vl_cli, argc, argv, a, vl_usage) != 0)
		return -1;
	a->profile = !a->no_profile;
	a->sim_qps = 0;   /* auto */
	if (strcmp(a->sim_qps_text, "auto") != 0 &&
	    fm_parse_f64("sim-qps", a->sim_qps_text, 0.001, 1e6, &a->sim_qps) != 0)
		return -1;
	a->sim_leaves = 0;  /* auto */
	if (strcmp(a->sim_leaves_text, "auto") != 0) {
		double v;
		if (fm_parse_f64("sim-leaves", a->sim_leaves_text, 1, VL_MAX_SIM_LEAVES, &v) != 0)
			return -1;
		if (v != floor(v)) {
			fprintf(stderr, FM_PROG ": --sim-leaves %s: not a whole number\n",
				a->sim_leaves_text);
			return -1;
		}
		a->sim_leaves = (uint64_t)v;
	}
	if (a->simulate && a->hardware) {
		fprintf(stderr, FM_PROG ": --simulate and --hardware exclude each other\n");
		return -1;
	}
	return 0;
}
