/* validate_leaf.c: `validate` on the running leaf: mock, leaf and driver as frontload run
 * starts them, a fixed low rate, one window of whole requests, measured natively (stage
 * clock, per-pool PMU groups, perf cpu-clock profile) and under callgrind (cache and
 * branch simulation, per object and per pool). */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cgparse.h"
#include "dis_cs.h"
#include "disasm.h"
#include "leafrun.h"
#include "leafwin.h"
#include "cpumodel.h"
#include "discache.h"
#include "margs.h"
#include "measure.h"
#include "mutil.h"
#include "simrun.h"
#include "mix.h"
#include "objects.h"
#include "osfile.h"
#include "paths.h"
#include "process.h"
#include "profile.h"
#include "targets.h"

/* ---- options ---- */

/* What the leaf path parsed. */
struct vl_args {
	int simulate, hardware, tls, profile, no_profile, quiet, objdump;
	const char *cpu, *i1, *d1, *ll, *json, *targets, *keep;
	const char *leaf_args, *driver_args, *sim_qps_text;
	double qps, sim_qps, warmup_s, window_s, timeout_s;
	uint64_t perf_hz, seed, sim_requests;
	const char *knobs[FM_MAX_KNOBS];  /* forwarded leaf flags (name, value or NULL) */
	int nknobs;
};

#define FL_CLI_OBJ struct vl_args
static const struct fl_cli_opt vl_opts[] = {
	FL_OPT_FLAG("simulate", simulate, "the simulated run only", .section = "path (neither "
		"given: both runs)"),
	FL_OPT_FLAG("hardware", hardware, "the native run only"),
	FL_OPT_REAL("qps", qps, 0.01, 1e6, "R", "5", "native rate (requests/s)",
		.section = "rates and windows"),
	FL_OPT_STR("sim-qps", sim_qps_text, "R|auto", "auto", "rate under simulation "
		"(requests/s, 0.001..1e6): valgrind runs the leaf ~50x slower, one thread at a "
		"time, and every request must still complete without queueing behind another (the "
		"leaf calls a request older than --stale-ms stale); auto = 0.25 / (the native "
		"window's CPU per request x 50 + its median latency), at most --qps; arrivals at "
		"fixed gaps (driver --arrival fixed)"),
	FL_OPT_UINT("sim-requests", sim_requests, 1, 100000, "N", "8", "requests in the "
		"simulated window: its length is (N + 1/2) / rate; the warm-up step there is the "
		"longer of --warmup and 3 requests' gaps (the first requests pay valgrind's "
		"translation of everything they run)"),
	FL_OPT_REAL("warmup", warmup_s, 0, 86400, "S", "4", "warm-up step before the window "
		"(seconds)"),
	FL_OPT_REAL("window", window_s, 0.1, 86400, "S", "10", "the measured step (seconds)"),
	FL_OPT_REAL("timeout-s", timeout_s, 1, 86400, "S", "60", "driver timeout, and the "
		"leaf's --rpc-timeout-ms (seconds)"),
	FL_OPT_FLAG("tls", tls, "TLS between driver and leaf (frontload run --tls)",
		.section = "the service"),
	FL_OPT_STR("leaf-args", leaf_args, "\"ARGS\"", NULL, "more frontload-leaf flags (as "
		"frontload run --leaf-args)"),
	FL_OPT_STR("driver-args", driver_args, "\"ARGS\"", NULL, "more frontload-driver "
		"flags"),
	FL_OPT_FLAG("no-profile", no_profile, "no perf record profile", .section = "measurement"),
	FL_OPT_UINT("perf-hz", perf_hz, 1, 100000, "HZ", "999", "perf sampling frequency (Hz)"),
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

/* The simreq knobs frontload-leaf does not take: they shape the request stream, which is
 * frontload-driver's here (or simreq's corpus), so the leaf would refuse them at start. */
static const char *const vl_not_leaf[] = { "calls-per-request", "corpus-mb",
	"max-request-bytes", "method", "request-bytes", "sessions", "stories", "story-bytes",
	"zstd", "zstd-frames", NULL };

/* A leaf knob: --seed is the run's (kept here), any other is passed to the leaf. */
static int vl_take_knob(void *obj, const struct fl_cli_opt *o, const char *val, char *err,
	size_t errlen)
{
	struct vl_args *a = obj;

	for (int i = 0; vl_not_leaf[i]; i++)
		if (strcmp(o->name, vl_not_leaf[i]) == 0) {
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
"             process with Capstone) for the whole process, per object kind\n"
"             (generated library, leaf, libc, libcrypto/libssl, libzstd, libevent,\n"
"             OpenBLAS, protobuf-c, ...) and per pool (ranker, io, fanout, main)\n"
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
"  native and simulated {whole, why, wall_s, error, driver_step (the driver's step\n"
"  object)}; stages {stages {<stage>: cpu_ns, share}, pools {ranker, io, fanout: cpu_ns},\n"
"  process_cpu_ns, stage_cpu_ns}; pmu {ranker, io, fanout, total: instructions, cycles,\n"
"  l1i_misses, branch_misses, ipc, l1i_mpki, branch_mpki, each a number or\n"
"  \"unsupported: <why>\"}; profile {samples, kernel_samples, event, categories {<id>:\n"
"  label, samples, pct, top [{symbol, samples}]}, pools {<pool>: {<id>: samples}}} or\n"
"  \"unsupported: <why>\"; process, objects [...], pools [...] (simulated rows: name, ir,\n"
"  ir_pct, ir_per_request, instructions, l1i_mpki, l1i_miss_pct, ll_code_mpki,\n"
"  cond_branch_mpki, indirect_branch_mpki, cond_branch_pct, mem_pct, scalar_fp_pct,\n"
"  call_ret_pct, div_pct, insns_per_taken_branch, classified_pct, rep_ir_removed; pools\n"
"  add threads); classified_by {decoder, seconds}; targets [...]; summary; host; build;\n"
"  wall_s. A figure not measured is null, never 0.\n"
"\n"
"exit status: 0 every measured target met, 3 a target missed or the window was not\n"
"whole, 1 a run failed, 2 usage error.\n", fp);
}

#define VL_POOL (4 * FM_LEAF_MAX_ARGS) /* strings the runs' argv own */
#define VL_PING_MS 200.0                /* frontload-leaf --rpc-ping-ms default */

/* A copy of n bytes of s owned by pool ("" when the pool is full or memory ran out). */
static const char *vl_dup(const char *s, size_t n, char **pool, int *npool)
{
	char *d = *npool < VL_POOL ? strndup(s, n) : NULL;
	if (d == NULL)
		return "";
	pool[(*npool)++] = d;
	return d;
}

/* Split "A B C" into argv entries appended to out at n (at most max). Returns the new
 * count; out[count] is NULL. */
static int vl_split(const char *text, const char **out, int n, int max, char **pool,
	int *npool)
{
	while (text && *text && n < max) {
		text += strspn(text, " \t");
		size_t k = strcspn(text, " \t");
		if (k > 0)
			out[n++] = vl_dup(text, k, pool, npool);
		text += k;
	}
	out[n] = NULL;
	return n;
}

static int vl_parse(int argc, char **argv, struct vl_args *a)
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
	if (a->simulate && a->hardware) {
		fprintf(stderr, FM_PROG ": --simulate and --hardware exclude each other\n");
		return -1;
	}
	return 0;
}

/* ---- one run of the service ---- */

/* What one run (native or simulated) measured around its window. */
struct vl_phase {
	const char *tag;          /* "native", "sim" */
	json_t *step;             /* the window step's driver result */
	json_t *before, *after;   /* leaf stats around the window */
	int whole;                /* the window held only whole, successful requests */
	char why[1024];           /* why not */
	double wall_s;
	char err[2048];           /* a failed run: why ("" when it ran) */
};

static void vl_phase_free(struct vl_phase *p)
{
	json_decref(p->step);
	json_decref(p->before);
	json_decref(p->after);
	p->step = p->before = p->after = NULL;
}

static void vl_say(const struct vl_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void vl_say(const struct vl_args *a, const char *fmt, ...)
{
	va_list ap;
	if (a->quiet)
		return;
	va_start(ap, fmt);
	fputs(FM_PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Run `callgrind_control ARG PID` (output to log). 0, or -1 with err. */
static int vl_cgctl(const char *arg, pid_t pid, const char *log, char *err, size_t errlen)
{
	char p[32], why[512];
	snprintf(p, sizeof p, "%d", (int)pid);
	const char *const on[] = { "callgrind_control", "-i", "on", p, NULL };
	const char *const other[] = { "callgrind_control", arg, p, NULL };
	int rc = fl_spawn_wait(strcmp(arg, "-i") == 0 ? on : other, &(struct fl_spawn_opts){
		.stdout_path = log, .stderr_path = log, .append = 1 }, why, sizeof why);
	if (rc != 0) {
		snprintf(err, errlen, "callgrind_control %s %d failed (%s; log %s)", arg, (int)pid,
			rc < 0 ? why : "non-zero exit status", log);
		return -1;
	}
	return 0;
}

/* Stats once the leaf holds no request (received = replied), at most wait_s. */
static json_t *vl_idle_stats(struct fm_leaf *l, double wait_s, char *err, size_t errlen)
{
	double t0 = fm_now();
	for (;;) {
		json_t *s = fm_leaf_stats(l, wait_s, err, errlen);
		if (s == NULL)
			return NULL;
		json_t *rq = json_object_get(s, "requests");
		json_int_t in = json_integer_value(json_object_get(rq, "received"));
		json_int_t out = json_integer_value(json_object_get(rq, "replied")) +
			json_integer_value(json_object_get(rq, "dropped_disconnected"));
		if (in <= out || fm_now() - t0 > wait_s)
			return s;
		json_decref(s);
		struct timespec ts = { 0, 200000000 };
		nanosleep(&ts, NULL);
	}
}

/* The flags every run gives the leaf: the fanout timeout (and, simulated, --pmu off and
 * the keepalive period), then the knobs, then --leaf-args (the leaf keeps the last value
 * of a flag, so what the user gives wins). */
static void vl_leaf_flags(const struct vl_args *a, struct fm_leaf_cfg *c, char **pool,
	int *npool, int simulated)
{
	int n = 0;
	char buf[64];
	/* A fanout call must not time out because the simulated leaf is slow to read it. */
	snprintf(buf, sizeof buf, "%.0f", a->timeout_s * 1000);
	c->leaf_args[n++] = "--rpc-timeout-ms";
	c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
	if (simulated) {
		/* perf_event_open under valgrind measures nothing of the guest. */
		c->leaf_args[n++] = "--pmu";
		c->leaf_args[n++] = "off";
		/* The keepalive on the simulated clock: valgrind runs the leaf ~FM_SLOWDOWN times
		 * slower, so the default 200 ms period would send that many more pings per
		 * request, and a FANOUT thread waiting for the big lock would miss its 3 periods
		 * and reconnect (failing the calls in flight). Given flags come later and win. */
		snprintf(buf, sizeof buf, "%.0f", VL_PING_MS * FM_SLOWDOWN);
		c->leaf_args[n++] = "--rpc-ping-ms";
		c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
	}
	for (int i = 0; i + 1 < a->nknobs && n + 2 < FM_LEAF_MAX_ARGS; i += 2) {
		snprintf(buf, sizeof buf, "--%s", a->knobs[i]);
		c->leaf_args[n++] = vl_dup(buf, strlen(buf), pool, npool);
		if (a->knobs[i + 1])
			c->leaf_args[n++] = a->knobs[i + 1];
	}
	vl_split(a->leaf_args, c->leaf_args, n, FM_LEAF_MAX_ARGS - 1, pool, npool);
	n = 0;
	if (simulated) {
		/* Fixed gaps: at the low simulated rate a Poisson cluster would queue requests
		 * behind each other for seconds. */
		c->driver_args[n++] = "--arrival";
		c->driver_args[n++] = "fixed";
	}
	vl_split(a->driver_args, c->driver_args, n, FM_LEAF_MAX_ARGS - 1, pool, npool);
}

/* valgrind's argv before the leaf's. */
static void vl_wrap(const struct fm_geo *g, const char *dir, struct fm_leaf_cfg *c,
	char **pool, int *npool)
{
	static const char *const fixed[] = {
		"valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
		"--branch-sim=yes", "--dump-instr=yes", "--dump-line=no", "--collect-jumps=yes",
		"--separate-threads=yes",
	};
	char buf[4300];
	int n = 0;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		c->wrap[n++] = fixed[i];
	const struct fm_cache *lv[3] = { &g->i1, &g->d1, &g->ll };
	const char *nm[3] = { "I1", "D1", "LL" };
	for (int k = 0; k < 3; k++) {
		snprintf(buf, sizeof buf, "--%s=%u,%u,%u", nm[k], lv[k]->size, lv[k]->assoc,
			lv[k]->line);
		c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	}
	snprintf(buf, sizeof buf, "--callgrind-out-file=%s/sim.cg", dir);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	snprintf(buf, sizeof buf, "--log-file=%s/sim-valgrind.log", dir);
	c->wrap[n++] = vl_dup(buf, strlen(buf), pool, npool);
	c->wrap[n] = NULL;
}

/* A perf profile of the leaf over the window (native run only). */
struct vl_prof {
	int want;
	pid_t perf;
	char data[4200], log[4200];
	char why[512];            /* why there is no profile ("" when there is) */
	struct fm_profile p;
};

/* One run: start, warm-up step, snapshot, window step, snapshot, stop. */
static int vl_run(const struct vl_args *a, const struct fm_leaf_cfg *c, double qps,
	double warmup_s, double window_s, const char *dir, struct vl_phase *ph,
	struct vl_prof *prof)
{
	struct fm_leaf l;
	char err[2048], log[4200];
	int simulated = c->wrap[0] != NULL, rc = -1;
	double t0 = fm_now(), slack = simulated ? 600 : 60;

	snprintf(log, sizeof log, "%s/%s-callgrind_control.log", dir, ph->tag);
	vl_say(a, "%s run: starting mock, leaf%s and driver", ph->tag, simulated ?
		" (under valgrind callgrind)" : "");
	if (fm_leaf_start(c, &l, err, sizeof err) != 0)
		goto out;
	if (simulated && vl_cgctl("-i", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if (warmup_s > 0) {
		vl_say(a, "%s run: warm-up step, %.3g qps for %.1f s", ph->tag, qps, warmup_s);
		json_t *w = fm_leaf_step(&l, qps, 0, warmup_s, warmup_s + c->timeout_s + slack,
			err, sizeof err);
		if (w == NULL)
			goto out;
		json_decref(w);
	}
	if ((ph->before = vl_idle_stats(&l, c->timeout_s + slack, err, sizeof err)) == NULL)
		goto out;
	if (simulated && vl_cgctl("-z", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if (prof && prof->want) {
		prof->perf = fm_prof_record_start(l.leaf, (unsigned)a->perf_hz, prof->data,
			prof->log, prof->why, sizeof prof->why);
		if (prof->perf < 0)
			prof->perf = 0;
	}
	vl_say(a, "%s run: measured window, %.3g qps for %.1f s", ph->tag, qps, window_s);
	ph->step = fm_leaf_step(&l, qps, 0, window_s, window_s + c->timeout_s + slack, err,
		sizeof err);
	if (prof && prof->perf > 0 && fm_prof_record_stop(prof->perf, prof->log, prof->why,
	    sizeof prof->why) != 0)
		prof->perf = 0;
	if (ph->step == NULL)
		goto out;
	if (simulated && vl_cgctl("-d", l.leaf, log, err, sizeof err) != 0)
		goto out;
	if ((ph->after = fm_leaf_stats(&l, c->timeout_s + slack, err, sizeof err)) == NULL)
		goto out;
	ph->whole = fm_window_whole(ph->step, ph->before, ph->after, ph->why, sizeof ph->why);
	rc = 0;
out:
	fm_leaf_stop(&l, 10);
	ph->wall_s = fm_now() - t0;
	if (rc != 0)
		snprintf(ph->err, sizeof ph->err, "%s", err);
	return rc;
}

/* ---- the simulated window: per object kind and per pool ---- */

/* Counts and the mix of one row (the process, an object kind or a pool). */
struct vl_row {
	char name[32];
	uint64_t ir, i1mr, ilmr, bcm, bim;
	struct fl_mix mix;
	int have_mix;        /* fl_mix_compute ran */
};

struct vl_sim {
	struct vl_row all, kind[FM_OBJ_N], pool[FM_POOL_N];
	int threads[FM_POOL_N];   /* threads per pool */
	double classified_share;
	double dis_s;             /* seconds spent classifying the executed instructions */
	char objects[1024];       /* disassembled objects */
};

static uint64_t vl_ev(const struct fl_cg *cg, const char *name)
{
	int e = fl_cg_event(cg, name);
	return e >= 0 ? cg->totals[e] : 0;
}

/* Fill row from cg (its totals) and the mix over the disassembled objects. */
static int vl_row_fill(struct vl_row *row, const char *name, const struct fl_cg *cg,
	struct fl_mix_obj *objs, size_t nobjs, char *err, size_t errlen)
{
	snprintf(row->name, sizeof row->name, "%s", name);
	row->ir = vl_ev(cg, "Ir");
	row->i1mr = vl_ev(cg, "I1mr");
	row->ilmr = vl_ev(cg, "ILmr");
	row->bcm = vl_ev(cg, "Bcm");
	row->bim = vl_ev(cg, "Bim");
	if (row->ir == 0)
		return 0;
	if (fl_mix_compute(&row->mix, cg, objs, nobjs, err, errlen) != 0)
		return -1;
	row->have_mix = 1;
	return 0;
}

/* A view of cg holding only the objects of one kind: its instructions and summed totals
 * (the object rows of cgparse). insns and totals are allocated here. */
static int vl_kind_view(const struct fl_cg *cg, enum fm_obj_kind k, struct fl_cg *v)
{
	*v = *cg;
	v->insns = malloc((cg->ninsns ? cg->ninsns : 1) * sizeof *v->insns);
	v->totals = calloc(cg->nevents ? cg->nevents : 1, sizeof *v->totals);
	v->ninsns = 0;
	v->slots = NULL;
	v->nslots = 0;
	if (v->insns == NULL || v->totals == NULL) {
		free(v->insns);
		free(v->totals);
		return -1;
	}
	for (size_t i = 0; i < cg->ninsns; i++) {
		uint32_t o = cg->insns[i].obj;
		enum fm_obj_kind ok = o == FL_CG_NO_OBJ ? FM_OBJ_UNKNOWN :
			fm_obj_classify(cg->objs[o]);
		if (ok == k)
			v->insns[v->ninsns++] = cg->insns[i];
	}
	for (uint32_t o = 0; o < cg->nobjs; o++)
		if (fm_obj_classify(cg->objs[o]) == k)
			for (unsigned e = 0; e < cg->nevents; e++)
				v->totals[e] += fl_cg_obj_total(cg, o, (int)e);
	if (k == FM_OBJ_UNKNOWN)
		/* Cost lines before any ob=: the process total less every object's. */
		for (unsigned e = 0; e < cg->nevents; e++) {
			uint64_t s = 0;
			for (uint32_t o = 0; o < cg->nobjs; o++)
				s += fl_cg_obj_total(cg, o, (int)e);
			v->totals[e] = cg->totals[e] - s;
		}
	return 0;
}

/* The executed addresses of object o in cg (sorted by fl_cg_sort: by object, then
 * address), copied into a new array of *n. NULL when out of memory. */
static uint64_t *vl_obj_addrs(const struct fl_cg *cg, uint32_t o, size_t *n)
{
	size_t lo = 0, k = 0;
	while (lo < cg->ninsns && cg->insns[lo].obj != o)
		lo++;
	while (lo + k < cg->ninsns && cg->insns[lo + k].obj == o)
		k++;
	uint64_t *a = malloc((k ? k : 1) * sizeof *a);
	for (size_t i = 0; a && i < k; i++)
		a[i] = cg->insns[lo + i].addr;
	*n = k;
	return a;
}

/* The classes of what object o ran: Capstone on just those addresses, or objdump. */
static int vl_dis(const struct fl_cg *cg, uint32_t o, int objdump, struct fl_dis *d,
	char *err, size_t errlen)
{
	if (objdump)
		return fm_dis_executed(cg, o, NULL, d, err, errlen);
	size_t n;
	uint64_t *a = vl_obj_addrs(cg, o, &n);
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = fm_dis_cs(cg->objs[o], a, n, d, err, errlen);
	free(a);
	return rc;
}

static const char *vl_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Parse the window's per-thread dumps (DIR/sim.cg.1-TT), disassemble what ran, and fill
 * the rows. 0, or -1 with err. */
static int vl_sim_analyse(const char *dir, struct vl_sim *s, const struct vl_args *a,
	char *err, size_t errlen)
{
	struct fl_cg all, pc[FM_POOL_N];
	struct fl_dis *dis = NULL;
	struct fl_mix_obj *objs = NULL;
	size_t nobjs = 0;
	char pat[4200];
	glob_t g;
	int rc = -1;

	memset(s, 0, sizeof *s);
	fl_cg_init(&all);
	for (int p = 0; p < FM_POOL_N; p++)
		fl_cg_init(&pc[p]);
	snprintf(pat, sizeof pat, "%s/sim.cg.1-*", dir);
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
		snprintf(err, errlen, "no callgrind dump of the window (%.1000s)", pat);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int pool = fm_pool_of_cg_file(g.gl_pathv[i]);
		if (pool < 0) {
			snprintf(err, errlen, "%s: %s", g.gl_pathv[i], strerror(errno));
			goto out;
		}
		s->threads[pool]++;
		if (fl_cg_parse_file(&all, g.gl_pathv[i], err, errlen) != 0 ||
		    fl_cg_parse_file(&pc[pool], g.gl_pathv[i], err, errlen) != 0)
			goto out;
	}
	if (fl_cg_sort(&all) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	uint64_t total = vl_ev(&all, "Ir");
	dis = calloc(all.nobjs + 1, sizeof *dis);
	objs = calloc(all.nobjs + 1, sizeof *objs);
	if (dis == NULL || objs == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	double t_dis = fm_now();
	vl_say(a, "simulated run: classifying the executed instructions (%s)", a->objdump ?
		"objdump" : "Capstone");
	for (uint32_t o = 0; o < all.nobjs; o++) {
		uint64_t ir = fl_cg_obj_total(&all, o, all.ir_event);
		if (ir == 0 || (double)ir < 0.001 * (double)total || access(all.objs[o], R_OK))
			continue;
		if (vl_dis(&all, o, a->objdump, &dis[nobjs], err, errlen) != 0)
			goto out;
		objs[nobjs].dis = &dis[nobjs];
		objs[nobjs].ob_name = all.objs[o];
		nobjs++;
		size_t l = strlen(s->objects);
		snprintf(s->objects + l, sizeof s->objects - l, "%s%s", l ? ", " : "",
			vl_base(all.objs[o]));
	}
	s->dis_s = fm_now() - t_dis;
	if (vl_row_fill(&s->all, "process", &all, objs, nobjs, err, errlen) != 0)
		goto out;
	s->classified_share = s->all.mix.ir_hw ? (double)s->all.mix.insns /
		(double)s->all.mix.ir_hw : NAN;
	for (int k = 0; k < FM_OBJ_N; k++) {
		struct fl_cg v;
		if (vl_kind_view(&all, (enum fm_obj_kind)k, &v) != 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		int r = vl_row_fill(&s->kind[k], fm_obj_kind_name((enum fm_obj_kind)k), &v, objs,
			nobjs, err, errlen);
		free(v.insns);
		free(v.totals);
		if (r != 0)
			goto out;
	}
	for (int p = 0; p < FM_POOL_N; p++) {
		if (s->threads[p] == 0)
			continue;
		if (fl_cg_sort(&pc[p]) != 0 || vl_row_fill(&s->pool[p],
		    fm_pool_name((enum fm_pool)p), &pc[p], objs, nobjs, err, errlen) != 0)
			goto out;
	}
	rc = 0;
out:
	globfree(&g);
	for (size_t i = 0; i < nobjs; i++)
		fl_dis_free(&dis[i]);
	free(dis);
	free(objs);
	fl_cg_free(&all);
	for (int p = 0; p < FM_POOL_N; p++)
		fl_cg_free(&pc[p]);
	return rc;
}

/* ---- report ---- */

static double vl_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

static json_t *vl_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double vl_rate(const struct fl_mix_rate *r)
{
	return r->available ? r->value : NAN;
}

/* Mix shares of a row (NAN when nothing was classified). */
struct vl_shares {
	double cond, mem, fp, callret, div, iptb;
};

static struct vl_shares vl_shares_of(const struct vl_row *r)
{
	const struct fl_mix *x = &r->mix;
	struct vl_shares s = { NAN, NAN, NAN, NAN, NAN, NAN };
	if (!r->have_mix || x->insns == 0)
		return s;
	s.cond = vl_pct(x->cond, x->insns);
	s.mem = vl_pct(x->loads + x->stores, x->insns);
	s.fp = vl_pct(x->scalar_fp, x->insns);
	s.callret = vl_pct(x->call + x->call_ind + x->ret, x->insns);
	s.div = vl_pct(x->int_div + x->fp_div, x->insns);
	s.iptb = x->taken_branches ? x->insns_per_taken : NAN;
	return s;
}

static json_t *vl_row_json(const struct vl_row *r, const struct vl_row *all, double reqs)
{
	struct vl_shares s = vl_shares_of(r);
	const struct fl_mix *x = &r->mix;
	return json_pack("{s:s,s:I,s:o,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
		"s:o,s:o}",
		"name", r->name, "ir", (json_int_t)r->ir,
		"ir_pct", vl_num(vl_pct(r->ir, all->ir)),
		"ir_per_request", vl_num(reqs > 0 ? (double)r->ir / reqs : NAN),
		"instructions", (json_int_t)(r->have_mix ? x->ir_hw : r->ir),
		"l1i_mpki", vl_num(r->have_mix ? vl_rate(&x->l1i_mpki) : NAN),
		"l1i_miss_pct", vl_num(vl_pct(r->i1mr, all->i1mr)),
		"ll_code_mpki", vl_num(r->have_mix ? vl_rate(&x->lli_mpki) : NAN),
		"cond_branch_mpki", vl_num(r->have_mix ? vl_rate(&x->cond_mpki) : NAN),
		"indirect_branch_mpki", vl_num(r->have_mix ? vl_rate(&x->ind_mpki) : NAN),
		"cond_branch_pct", vl_num(s.cond), "mem_pct", vl_num(s.mem),
		"scalar_fp_pct", vl_num(s.fp), "call_ret_pct", vl_num(s.callret),
		"div_pct", vl_num(s.div), "insns_per_taken_branch", vl_num(s.iptb),
		"classified_pct", vl_num(r->have_mix ? vl_pct(x->insns, x->ir_hw) : NAN),
		"rep_ir_removed", r->have_mix ? json_integer((json_int_t)x->rep_ir_removed) :
			json_null());
}

static const char *vl_f(double v, const char *fmt, char *buf)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, 32, fmt, v);
	return buf;
}

static void vl_row_print(const struct vl_row *r, const struct vl_row *all, double reqs)
{
	struct vl_shares s = vl_shares_of(r);
	const struct fl_mix *x = &r->mix;
	char b[13][32];
	printf("  %-17s %13llu %6s %10s %7s %6s %7s %6s %6s | %5s %5s %5s %5s %6s %5s\n",
		r->name, (unsigned long long)r->ir, vl_f(vl_pct(r->ir, all->ir), "%.1f", b[0]),
		vl_f(reqs > 0 ? (double)r->ir / reqs : NAN, "%.0f", b[1]),
		vl_f(r->have_mix ? vl_rate(&x->l1i_mpki) : NAN, "%.2f", b[2]),
		vl_f(vl_pct(r->i1mr, all->i1mr), "%.1f", b[3]),
		vl_f(r->have_mix ? vl_rate(&x->lli_mpki) : NAN, "%.3f", b[4]),
		vl_f(r->have_mix ? vl_rate(&x->cond_mpki) : NAN, "%.2f", b[5]),
		vl_f(r->have_mix ? vl_rate(&x->ind_mpki) : NAN, "%.3f", b[6]),
		vl_f(s.cond, "%.1f", b[7]), vl_f(s.mem, "%.1f", b[8]), vl_f(s.fp, "%.2f", b[9]),
		vl_f(s.callret, "%.2f", b[10]), vl_f(s.div, "%.3f", b[11]),
		vl_f(s.iptb, "%.1f", b[12]));
}

static void vl_rows_head(const char *what)
{
	printf("  %-17s %13s %6s %10s %7s %6s %7s %6s %6s | %5s %5s %5s %5s %6s %5s\n", what,
		"Ir", "Ir%", "Ir/req", "L1iMPKI", "miss%", "LLcode", "condBr", "indBr", "cond%",
		"ld+st", "FP%", "c+r%", "div%", "i/tb");
}

/* ---- targets ---- */

enum { T_L1I, T_IPC, T_FE, T_FP, T_COND, T_CALLRET, T_MEM, T_DIV, T_IPTB, T_EXTRACT,
	T_P_EXTRACT, T_P_RANK, T_P_COMPRESS, T_P_CRYPTO, T_N };
static const char *const vl_metrics[T_N] = {
	"l1i_mpki", "ipc", "frontend_bound_pct", "scalar_fp_pct", "cond_branch_pct",
	"call_ret_pct", "mem_pct", "div_pct", "insns_per_taken_branch", "extract_cpu_pct",
	"profile_extract_pct", "profile_ranking_pct", "profile_compression_pct",
	"profile_encryption_pct",
};

static void vl_set(struct fl_measured *m, unsigned path, double v)
{
	memset(m, 0, sizeof *m);
	m->path = path;
	if (isfinite(v)) {
		m->available = 1;
		m->value = v;
	} else {
		snprintf(m->why, sizeof m->why, "not measured");
	}
}

static void vl_none(struct fl_measured *m, unsigned path, const char *why)
{
	memset(m, 0, sizeof *m);
	m->path = path;
	snprintf(m->why, sizeof m->why, "%s", why);
}

/* A hardware figure from the PMU window: a number, or its "unsupported" string. */
static void vl_hw(struct fl_measured *m, json_t *pmu, const char *key)
{
	json_t *v = json_object_get(json_object_get(pmu, "total"), key);
	if (json_is_number(v))
		vl_set(m, FL_PATH_HARDWARE, json_number_value(v));
	else
		vl_none(m, FL_PATH_HARDWARE, json_is_string(v) ? json_string_value(v) :
			"not counted");
}

/* ---- main ---- */

static json_t *vl_phase_json(const struct vl_phase *p)
{
	return json_pack("{s:b,s:s,s:f,s:s,s:O?}", "whole", p->whole, "why", p->why,
		"wall_s", p->wall_s, "error", p->err, "driver_step", p->step);
}

static json_t *vl_profile_json(const struct vl_prof *pr)
{
	if (!pr->want)
		return json_string("not measured: --no-profile");
	if (pr->why[0] || pr->p.total == 0)
		return json_sprintf("unsupported: %s", pr->why[0] ? pr->why : "no samples");
	json_t *o = json_object(), *c = json_object();
	for (int k = 0; k < FM_PROF_N; k++) {
		json_t *top = json_array();
		for (size_t i = 0, n = 0; i < pr->p.nsyms && n < 5; i++)
			if (pr->p.syms[i].cat == (enum fm_prof_cat)k) {
				json_array_append_new(top, json_pack("{s:s,s:I}", "symbol",
					pr->p.syms[i].name, "samples", (json_int_t)pr->p.syms[i].samples));
				n++;
			}
		json_object_set_new(c, fm_prof_cat_id((enum fm_prof_cat)k), json_pack(
			"{s:s,s:I,s:o,s:o}", "label", fm_prof_cat_label((enum fm_prof_cat)k),
			"samples", (json_int_t)pr->p.samples[k], "pct",
			vl_num(vl_pct(pr->p.samples[k], pr->p.total)), "top", top));
	}
	json_object_set_new(o, "categories", c);
	json_t *pools = json_object();
	for (int q = 0; q < FM_PPOOL_N; q++) {
		json_t *po = json_object();
		for (int k = 0; k < FM_PROF_N; k++)
			json_object_set_new(po, fm_prof_cat_id((enum fm_prof_cat)k),
				json_integer((json_int_t)pr->p.pool[q][k]));
		json_object_set_new(pools, fm_prof_pool_name((enum fm_prof_pool)q), po);
	}
	json_object_set_new(o, "pools", pools);
	json_object_set_new(o, "samples", json_integer((json_int_t)pr->p.total));
	json_object_set_new(o, "kernel_samples", json_integer((json_int_t)pr->p.kernel));
	json_object_set_new(o, "event", json_string("cpu-clock"));
	return o;
}

static double vl_prof_pct(const struct vl_prof *pr, enum fm_prof_cat c)
{
	if (!pr->want || pr->why[0] || pr->p.total == 0)
		return NAN;
	return vl_pct(pr->p.samples[c], pr->p.total);
}

static void vl_print_stages(json_t *sw)
{
	json_t *st = json_object_get(sw, "stages"), *v;
	const char *k;
	double proc = (double)json_integer_value(json_object_get(sw, "process_cpu_ns"));
	char b[32], c[32];
	printf("\nleaf stage clock over the native window (path native; of summed stage CPU, "
		"and of the RANKER+IO+FANOUT pools' CPU %.1f ms):\n", proc / 1e6);
	json_object_foreach(st, k, v) {
		double ns = (double)json_integer_value(json_object_get(v, "cpu_ns"));
		printf("  %-10s %9.2f ms  %6s%%  %6s%%\n", k, ns / 1e6,
			vl_f(100 * json_number_value(json_object_get(v, "share")), "%.1f", b),
			vl_f(proc > 0 ? 100 * ns / proc : NAN, "%.1f", c));
	}
	json_t *pl = json_object_get(sw, "pools");
	printf("  pools: ranker %.2f ms, io %.2f ms, fanout %.2f ms\n",
		(double)json_integer_value(json_object_get(pl, "ranker")) / 1e6,
		(double)json_integer_value(json_object_get(pl, "io")) / 1e6,
		(double)json_integer_value(json_object_get(pl, "fanout")) / 1e6);
}

static void vl_print_profile(const struct vl_prof *pr)
{
	printf("\nCPU profile of the native window (path native; perf record -e cpu-clock, "
		"rules runtime/data/profile_categories.txt):\n");
	if (!pr->want) {
		printf("  not measured: --no-profile\n");
		return;
	}
	if (pr->why[0] || pr->p.total == 0) {
		printf("  unsupported: %s\n", pr->why[0] ? pr->why : "no samples");
		return;
	}
	printf("  %llu samples, %llu in the kernel\n", (unsigned long long)pr->p.total,
		(unsigned long long)pr->p.kernel);
	for (int k = 0; k < FM_PROF_N; k++) {
		printf("  %-22s %6llu  %5.1f%%", fm_prof_cat_label((enum fm_prof_cat)k),
			(unsigned long long)pr->p.samples[k], vl_pct(pr->p.samples[k], pr->p.total));
		for (size_t i = 0, n = 0; i < pr->p.nsyms && n < 2; i++)
			if (pr->p.syms[i].cat == (enum fm_prof_cat)k) {
				printf("%s %s %llu", n ? "," : "  top:", pr->p.syms[i].name,
					(unsigned long long)pr->p.syms[i].samples);
				n++;
			}
		putchar('\n');
	}
	/* The stage clock charges all FANOUT thread CPU to "fanout": what it is made of. */
	for (int q = 0; q < FM_PPOOL_N; q++) {
		uint64_t n = 0;
		for (int k = 0; k < FM_PROF_N; k++)
			n += pr->p.pool[q][k];
		if (n == 0)
			continue;
		printf("  %s threads (%llu samples):", fm_prof_pool_name((enum fm_prof_pool)q),
			(unsigned long long)n);
		for (int k = 0; k < FM_PROF_N; k++)
			if (pr->p.pool[q][k])
				printf(" %s %.1f%%", fm_prof_cat_label((enum fm_prof_cat)k),
					vl_pct(pr->p.pool[q][k], n));
		putchar('\n');
	}
}

static void vl_print_pmu(json_t *pmu)
{
	static const char *const pools[] = { "ranker", "io", "fanout", "total" };
	static const char *const ks[] = { "instructions", "ipc", "l1i_mpki", "branch_mpki" };
	printf("\nper-pool PMU groups over the native window (path hardware):\n");
	for (size_t p = 0; p < 4; p++) {
		json_t *o = json_object_get(pmu, pools[p]);
		json_t *ins = json_object_get(o, "instructions");
		printf("  %-7s", pools[p]);
		if (!json_is_number(ins)) {
			/* Nothing counted: one reason, not one per figure. */
			printf(" %s\n", json_string_value(ins) ? json_string_value(ins) : "-");
			continue;
		}
		for (size_t k = 0; k < 4; k++) {
			json_t *v = json_object_get(o, ks[k]);
			if (json_is_number(v))
				printf(" %s %.3f", ks[k], json_number_value(v));
			else
				printf(" %s %s", ks[k], json_string_value(v) ? json_string_value(v) : "-");
		}
		putchar('\n');
	}
}

static void vl_print_targets(const struct fl_targets *tg, const struct fl_measured m[T_N],
	json_t *tj, int *pass, int *fail, int *unm)
{
	char t[64], val[32];
	printf("\n%-38s %-12s %10s  %-13s %s\n", "metric", "target", "measured", "verdict",
		"path");
	for (int k = 0; k < T_N; k++) {
		const struct fl_target *x = fl_targets_find(tg, vl_metrics[k]);
		if (x == NULL)
			continue;
		enum fl_verdict v = fl_target_check(x, &m[k]);
		*pass += v == FL_VERDICT_PASS;
		*fail += v == FL_VERDICT_FAIL;
		*unm += v == FL_VERDICT_UNMEASURABLE;
		snprintf(val, sizeof val, m[k].available ? "%.2f" : "-", m[k].value);
		printf("%-38s %-12s %10s  %-13s %s\n", x->label, fl_target_str(x, t, sizeof t),
			val, fl_verdict_name(v), fl_path_name(m[k].path));
		if (!m[k].available)
			printf("    %s\n", m[k].why);
		if (v == FL_VERDICT_FAIL && x->knob[0])
			printf("    what moves it: %s\n", x->knob);
		const struct fl_tgt_source *src = fl_targets_source(tg, x->source);
		json_array_append_new(tj, json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s}", "metric",
			x->metric, "label", x->label, "target", fl_target_str(x, t, sizeof t),
			"measured", m[k].available ? json_real(m[k].value) : json_null(), "why",
			m[k].why, "verdict", fl_verdict_name(v), "path", fl_path_name(m[k].path),
			"source", src ? src->url : ""));
	}
}

/* The measured figures judged against the targets. */
static void vl_measure(struct fl_measured m[T_N], const struct vl_sim *s, int have_sim,
	const char *sim_why, json_t *pmu, json_t *sw, const struct vl_prof *pr)
{
	struct vl_shares sh = have_sim ? vl_shares_of(&s->all) : (struct vl_shares){ NAN, NAN,
		NAN, NAN, NAN, NAN };
	double mix[] = { sh.fp, sh.cond, sh.callret, sh.mem, sh.div, sh.iptb };
	int idx[] = { T_FP, T_COND, T_CALLRET, T_MEM, T_DIV, T_IPTB };
	for (int i = 0; i < 6; i++) {
		if (have_sim)
			vl_set(&m[idx[i]], FL_PATH_SIMULATED, mix[i]);
		else
			vl_none(&m[idx[i]], FL_PATH_SIMULATED, sim_why);
	}
	if (have_sim)
		vl_set(&m[T_L1I], FL_PATH_SIMULATED, vl_rate(&s->all.mix.l1i_mpki));
	else
		vl_none(&m[T_L1I], FL_PATH_SIMULATED, sim_why);
	if (pmu) {
		vl_hw(&m[T_IPC], pmu, "ipc");
		vl_none(&m[T_FE], FL_PATH_HARDWARE, "the leaf's PMU groups count no top-down "
			"slots over a window");
	} else {
		vl_none(&m[T_IPC], FL_PATH_HARDWARE, "no native window");
		vl_none(&m[T_FE], FL_PATH_HARDWARE, "no native window");
	}
	double ex = NAN;
	if (sw) {
		double proc = json_number_value(json_object_get(sw, "process_cpu_ns"));
		json_t *e = json_object_get(json_object_get(sw, "stages"), "extract");
		double ns = json_number_value(json_object_get(e, "cpu_ns"));
		ex = proc > 0 && json_is_integer(json_object_get(e, "cpu_ns")) ? 100 * ns / proc :
			NAN;
	}
	vl_set(&m[T_EXTRACT], FL_PATH_NATIVE, ex);
	enum fm_prof_cat pc[] = { FM_PROF_EXTRACT, FM_PROF_RANK, FM_PROF_COMPRESS,
		FM_PROF_CRYPTO };
	for (int i = 0; i < 4; i++) {
		vl_set(&m[T_P_EXTRACT + i], FL_PATH_NATIVE, vl_prof_pct(pr, pc[i]));
		if (!m[T_P_EXTRACT + i].available)
			snprintf(m[T_P_EXTRACT + i].why, sizeof m[0].why, "%s", !pr->want ?
				"--no-profile" : pr->why[0] ? pr->why : "no samples");
	}
}

/* The simulated rate: a quarter of what one simulated request takes at most to run alone
 * (the native window's CPU per request x FM_SLOWDOWN, valgrind running one thread at a
 * time, plus its median latency, which the mock's delays dominate), within
 * [0.02, --qps]. */
static double vl_sim_rate(const struct vl_args *a, const struct vl_phase *nat, json_t *sw)
{
	double sent = (double)json_integer_value(json_object_get(nat->step, "sent"));
	double cpu = (double)json_integer_value(json_object_get(sw, "process_cpu_ns")) / 1e9;
	double p50 = json_number_value(json_object_get(json_object_get(nat->step,
		"latency_ms"), "p50")) / 1e3;
	if (!(sent > 0) || !(cpu > 0))
		return fmin(a->qps, 0.1);
	double per = cpu / sent * FM_SLOWDOWN + (isfinite(p50) ? p50 : 0);
	return fmax(0.02, fmin(a->qps, 0.25 / per));
}

/* --keep: the scratch directory's files copied into keep (cp -r, no shell). */
static void vl_keep(const char *tmp, const char *keep)
{
	char src[4200], why[512] = "cp -r exited non-zero";
	if (keep == NULL)
		return;
	snprintf(src, sizeof src, "%s/.", tmp);
	const char *const cp[] = { "cp", "-r", src, keep, NULL };
	if (fl_mkdir_p(keep, 0755, why, sizeof why) != 0 ||
	    fl_spawn_wait(cp, &(struct fl_spawn_opts){ 0 }, why, sizeof why) != 0)
		fprintf(stderr, FM_PROG ": --keep %s: copy failed (%s)\n", keep, why);
}

int fm_validate_leaf_main(int argc, char **argv)
{
	struct vl_args a;
	struct fm_geo geo;
	struct fl_targets tg = { 0 };
	struct vl_phase nat = { .tag = "native" }, sim = { .tag = "sim" };
	struct vl_prof prof = { 0 };
	struct vl_sim vs;
	struct fl_measured m[T_N];
	json_t *notes = NULL, *out = json_object(), *sw = NULL, *pmu = NULL;
	char err[2048], tpath[4096], tmp[256], bindir[4096], rules[4200];
	char *pool[VL_POOL];
	int npool = 0, rc = FM_EXIT_RUN, have_sim = 0;
	double t0 = fm_now();
	char sim_why[2048] = "";
	double sim_qps = 0, sim_window = 0, sim_warmup = 0;

	memset(&vs, 0, sizeof vs);
	memset(&geo, 0, sizeof geo);
	tmp[0] = '\0';
	if (vl_parse(argc, argv, &a) != 0)
		return FM_EXIT_USAGE;
	if (fm_geometry(&geo, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (a.targets)
		snprintf(tpath, sizeof tpath, "%s", a.targets);
	else if (fl_targets_default_path(tpath, sizeof tpath, err, sizeof err) != 0)
		goto fail;
	if (fl_targets_load(tpath, &tg, err, sizeof err) != 0 ||
	    fl_exe_dir(bindir, sizeof bindir) != 0 || fm_mktemp(tmp, sizeof tmp, err,
	    sizeof err) != 0)
		goto fail;

	/* Native run: stage clock, PMU groups, profile. */
	struct fm_leaf_cfg nc = { .bindir = bindir, .dir = tmp, .tag = "native", .tls = a.tls,
		.seed = a.seed, .timeout_s = a.timeout_s, .ready_s = 120 };
	vl_leaf_flags(&a, &nc, pool, &npool, 0);
	prof.want = a.profile;
	snprintf(prof.data, sizeof prof.data, "%s/native-perf.data", tmp);
	snprintf(prof.log, sizeof prof.log, "%s/native-perf.log", tmp);
	if (vl_run(&a, &nc, a.qps, a.warmup_s, a.window_s, tmp, &nat, &prof) != 0) {
		fprintf(stderr, FM_PROG ": native run failed: %s\n", nat.err);
		goto done;
	}
	sw = fm_stage_window(nat.before, nat.after);
	pmu = fm_pmu_window(nat.before, nat.after);
	if (prof.want && prof.why[0] == '\0') {
		struct fm_prof_rules rs;
		if (fl_data_path("profile_categories.txt", rules, sizeof rules, prof.why,
		    sizeof prof.why) == 0 && fm_prof_rules_load(rules, &rs, prof.why,
		    sizeof prof.why) == 0) {
			if (fm_prof_report(prof.data, &rs, &prof.p, prof.why, sizeof prof.why) != 0)
				fm_prof_free(&prof.p);
			fm_prof_rules_free(&rs);
		}
	}

	/* Simulated run. */
	if (a.hardware) {
		snprintf(sim_why, sizeof sim_why, "--hardware: no simulated run");
	} else {
		struct fm_leaf_cfg sc = { .bindir = bindir, .dir = tmp, .tag = "sim", .tls = a.tls,
			.seed = a.seed, .timeout_s = a.timeout_s, .ready_s = 900 };
		vl_leaf_flags(&a, &sc, pool, &npool, 1);
		vl_wrap(&geo, tmp, &sc, pool, &npool);
		sim_qps = a.sim_qps > 0 ? a.sim_qps : vl_sim_rate(&a, &nat, sw);
		/* Fixed gaps send the first request one gap in: N + 1/2 gaps hold N. */
		sim_window = ((double)a.sim_requests + 0.5) / sim_qps;
		sim_warmup = fmax(a.warmup_s, 3 / sim_qps);
		vl_say(&a, "sim run: %.3g qps (%s), %llu requests: %.1f s window after %.1f s warm-up",
			sim_qps, a.sim_qps > 0 ? "--sim-qps" : "auto", (unsigned long long)a.sim_requests,
			sim_window, sim_warmup);
		if (vl_run(&a, &sc, sim_qps, sim_warmup, sim_window, tmp, &sim, NULL) != 0) {
			fprintf(stderr, FM_PROG ": simulated run failed: %s\n", sim.err);
			goto done;
		}
		if (!sim.whole) {
			snprintf(sim_why, sizeof sim_why, "the simulated window was not whole: %s",
				sim.why);
		} else if (vl_sim_analyse(tmp, &vs, &a, err, sizeof err) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto done;
		} else {
			have_sim = 1;
		}
	}

	/* The report. */
	double nreq = (double)json_integer_value(json_object_get(nat.step, "sent"));
	double sreq = (double)json_integer_value(json_object_get(sim.step, "sent"));
	char g1[64], g2[64], g3[64];
	printf("frontload validate: the running leaf (mock, leaf, driver as frontload run "
		"starts them%s)\n", a.tls ? ", --tls" : "");
	printf("native window: %.3g qps for %.1f s after %.1f s warm-up: %.0f requests, %s\n", a.qps,
		a.window_s, a.warmup_s, nreq, nat.whole ? "all whole and OK" : nat.why);
	if (!a.hardware)
		printf("simulated window: %.3g qps for %.1f s after %.1f s warm-up: %.0f requests, %s; "
			"%s model (I1 %s, D1 %s, LL %s)\n", sim_qps, sim_window, sim_warmup, sreq,
			sim.whole ? "all whole and OK" : sim.why, a.cpu,
			fm_cache_str(&geo.i1, g1, sizeof g1), fm_cache_str(&geo.d1, g2, sizeof g2),
			fm_cache_str(&geo.ll, g3, sizeof g3));
	for (size_t i = 0; notes && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
	if (have_sim) {
		const struct fl_mix *x = &vs.all.mix;
		printf("\nsimulated window (path simulated; per 1000 instructions: Ir less %llu "
			"rep string iterations = %llu instructions; %.1f%% classified by %s in %.1f s, "
			"objects: %s):\n", (unsigned long long)x->rep_ir_removed,
			(unsigned long long)x->ir_hw, 100 * vs.classified_share, a.objdump ? "objdump" :
			"Capstone", vs.dis_s, vs.objects);
		vl_rows_head("object");
		vl_row_print(&vs.all, &vs.all, sreq);
		uint64_t sum = 0;
		for (int k = 0; k < FM_OBJ_N; k++) {
			sum += vs.kind[k].ir;
			if (vs.kind[k].ir)
				vl_row_print(&vs.kind[k], &vs.all, sreq);
		}
		printf("  (objects' Ir sum %llu = process Ir %llu: %s)\n", (unsigned long long)sum,
			(unsigned long long)vs.all.ir, sum == vs.all.ir ? "yes" : "NO");
		vl_rows_head("pool (threads)");
		for (int p = 0; p < FM_POOL_N; p++)
			if (vs.threads[p]) {
				struct vl_row r = vs.pool[p];
				snprintf(r.name, sizeof r.name, "%s (%d)", fm_pool_name((enum fm_pool)p),
					vs.threads[p]);
				vl_row_print(&r, &vs.all, sreq);
			}
	} else if (!a.hardware) {
		printf("\nsimulated window: not judged: %s\n", sim_why);
	}
	vl_print_stages(sw);
	vl_print_profile(&prof);
	vl_print_pmu(pmu);

	int pass = 0, fail = 0, unm = 0;
	json_t *tj = json_array();
	vl_measure(m, &vs, have_sim, sim_why, pmu, nat.whole ? sw : NULL, nat.whole ? &prof :
		&(struct vl_prof){ .want = 1, .why = "the native window was not whole" });
	vl_print_targets(&tg, m, tj, &pass, &fail, &unm);
	double wall = fm_now() - t0;
	printf("\n%d pass, %d fail, %d unmeasurable; wall time %.0f s (native run %.0f s, "
		"simulated run %.0f s)\n", pass, fail, unm, wall, nat.wall_s, sim.wall_s);

	json_object_set_new(out, "tool", json_string(FM_PROG " validate"));
	json_object_set_new(out, "path", json_string("leaf"));
	json_object_set_new(out, "config", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:I,"
		"s:s}", "qps", a.qps, "warmup_s", a.warmup_s, "window_s", a.window_s, "sim_qps",
		sim_qps, "sim_warmup_s", sim_warmup, "sim_window_s", sim_window, "timeout_s",
		a.timeout_s, "tls", a.tls, "seed", (json_int_t)a.seed, "cpu", a.cpu));
	json_object_set_new(out, "native", vl_phase_json(&nat));
	json_object_set_new(out, "simulated", a.hardware ? json_null() : vl_phase_json(&sim));
	json_object_set_new(out, "stages", json_incref(sw));
	json_object_set_new(out, "pmu", json_incref(pmu));
	json_object_set_new(out, "profile", vl_profile_json(&prof));
	if (have_sim) {
		json_t *ob = json_array(), *po = json_array();
		for (int k = 0; k < FM_OBJ_N; k++)
			if (vs.kind[k].ir)
				json_array_append_new(ob, vl_row_json(&vs.kind[k], &vs.all, sreq));
		for (int p = 0; p < FM_POOL_N; p++)
			if (vs.threads[p]) {
				json_t *r = vl_row_json(&vs.pool[p], &vs.all, sreq);
				json_object_set_new(r, "threads", json_integer(vs.threads[p]));
				json_array_append_new(po, r);
			}
		json_object_set_new(out, "process", vl_row_json(&vs.all, &vs.all, sreq));
		json_object_set_new(out, "objects", ob);
		json_object_set_new(out, "pools", po);
		json_object_set_new(out, "disassembled", json_string(vs.objects));
		json_object_set_new(out, "classified_by", json_pack("{s:s,s:f}", "decoder",
			a.objdump ? "objdump" : "capstone", "seconds", vs.dis_s));
	}
	json_object_set_new(out, "targets", tj);
	json_object_set_new(out, "summary", json_pack("{s:i,s:i,s:i}", "pass", pass, "fail",
		fail, "unmeasurable", unm));
	json_object_set_new(out, "host", fm_host_json());
	json_t *bj = fm_build_json();
	json_object_set_new(out, "build", bj ? bj : json_null());
	json_object_set_new(out, "wall_s", json_real(wall));
	if (a.json && json_dump_file(out, a.json, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s: %s\n", a.json, strerror(errno));
		goto done;
	}
	rc = fail || !nat.whole || (!a.hardware && !sim.whole) ? FM_EXIT_MISSED : FM_EXIT_OK;
	goto done;
fail:
	fprintf(stderr, FM_PROG ": %s\n", err);
done:
	if (tmp[0]) {
		vl_keep(tmp, a.keep);
		fm_rmtree(tmp);
	}
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	fm_prof_free(&prof.p);
	vl_phase_free(&nat);
	vl_phase_free(&sim);
	json_decref(sw);
	json_decref(pmu);
	json_decref(out);
	json_decref(notes);
	fl_targets_free(&tg);
	return rc;
}
