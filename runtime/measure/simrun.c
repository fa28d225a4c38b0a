/* simrun.c: runs of frontload-simreq, native (its JSON summary, optionally with perf
 * counters) or under valgrind callgrind with a cache geometry, and the parse of what the
 * simulation counted (cgparse.h) joined with instruction classes (discache.h, mix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cgparse.h"
#include "disasm.h"
#include "discache.h"
#include "mutil.h"
#include "paths.h"
#include "process.h"
#include "simrun.h"

const char *const fm_sim_limits[] = {
	"callgrind's cache model has no hardware prefetcher, no op (uop) cache, no loop "
	"buffer and no iTLB: L1i misses are those of a demand-fetched cache and overstate a "
	"real core with a next-line/stream prefetcher",
	"replacement is LRU in every level, sets are chosen by plain address bits, the last "
	"level (LL, here the core's L2) is inclusive and unified, and there is no L3 "
	"(cachegrind manual 5.8.1)",
	"caches are virtually indexed with one process and no other tenants: no SMT sibling, "
	"no kernel code, no interrupts or context switches pollute them",
	"the branch model is the 2004-era one of the cachegrind manual (5.8.2): conditional "
	"branches by 16384 2-bit counters indexed by address and recent history, indirect "
	"branches by a 512-entry last-target table, returns always predicted: mispredict rates "
	"are indicative, not those of a modern TAGE/ITTAGE predictor",
	"no timing: IPC and top-down front-end bound cannot be simulated",
	"the instructions are x86-64 whatever --cpu says; only the cache geometry follows the "
	"model",
	"per-stage CPU shares come from a native run (thread CPU clock), not from the "
	"simulation, which inflates every stage unevenly",
	NULL,
};

void fm_sim_limits_usage(FILE *fp)
{
	fputs("limits of the simulated path:\n", fp);
	for (int i = 0; fm_sim_limits[i]; i++)
		fprintf(fp, "  - %s\n", fm_sim_limits[i]);
}

int fm_run_init(struct fm_run *r, char *err, size_t errlen)
{
	char dir[4096];

	memset(r, 0, sizeof(*r));
	r->warmup = 2;
	r->requests = 10;
	r->stage = "all";
	r->mix = 1;
	r->tag = "run";
	r->geo.i1 = fm_cpu_default()->i1;
	r->geo.d1 = fm_cpu_default()->d1;
	r->geo.ll = fm_cpu_default()->ll;
	if (fl_exe_dir(dir, sizeof(dir)) != 0) {
		snprintf(err, errlen, "cannot find this program's directory (/proc/self/exe)");
		return -1;
	}
	snprintf(r->simreq, sizeof(r->simreq), "%s/frontload-simreq", dir);
	if (access(r->simreq, X_OK) != 0) {
		snprintf(err, errlen, "%s: %s (frontload-simreq must sit beside " FM_PROG ")",
			r->simreq, strerror(errno));
		return -1;
	}
	return 0;
}

int fm_run_knob(struct fm_run *r, const char *name, const char *value)
{
	if (r->nknobs + 2 > FM_MAX_KNOBS)
		return -1;
	/* Knob names come from the knob table (static strings): "--" is prefixed at spawn. */
	r->knobs[r->nknobs++] = name;
	r->knobs[r->nknobs++] = value;
	return 0;
}

const char *fm_run_knob_get(const struct fm_run *r, const char *name)
{
	const char *v = NULL;

	for (int i = 0; i + 1 < r->nknobs; i += 2)
		if (strcmp(r->knobs[i], name) == 0)
			v = r->knobs[i + 1] ? r->knobs[i + 1] : "";
	return v;
}

/* argv for simreq: knobs (later ones win, as getopt keeps the last), run settings. Strings
 * are allocated into pool (freed by the caller). */
static int simreq_argv(const struct fm_run *r, const char *json, const char **argv, int max,
	char **pool, int *npool)
{
	int n = 0;
	char buf[64];

#define ADD(s) do { if (n + 1 >= max) return -1; argv[n++] = (s); } while (0)
#define ADDDUP(s) do { char *d_ = strdup(s); if (!d_) return -1; pool[(*npool)++] = d_; \
	ADD(d_); } while (0)
	ADD(r->simreq);
	for (int i = 0; i + 1 < r->nknobs; i += 2) {
		snprintf(buf, sizeof(buf), "--%s", r->knobs[i]);
		ADDDUP(buf);
		if (r->knobs[i + 1])
			ADD(r->knobs[i + 1]);
	}
	ADD("--warmup");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->warmup);
	ADDDUP(buf);
	ADD("--requests");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->requests);
	ADDDUP(buf);
	ADD("--stage");
	ADD(r->stage);
	ADD("--json");
	ADD(json);
	argv[n] = NULL;
	return n;
#undef ADD
#undef ADDDUP
}

/* Start argv with stdout to /dev/null and stderr to errpath (NULL: inherited). */
static pid_t spawn(const char *const *argv, const char *errpath, char *err, size_t errlen)
{
	/* The simulation must not be slowed by a BLAS thread pool. */
	static const char *const env[] = { "OPENBLAS_NUM_THREADS=1", NULL };
	struct fl_spawn_opts o = { .stdout_path = "/dev/null", .stderr_path = errpath,
		.env = env };

	return fl_spawn(argv, &o, err, errlen);
}

/* Last lines of a log file into err (after prefix). */
static void log_tail(const char *path, const char *prefix, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char buf[4096];
	size_t n = 0;

	if (fp != NULL) {
		if (fseek(fp, -1024, SEEK_END) != 0)
			rewind(fp);
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	const char *tail = buf;
	for (int lines = 0; n > 0 && lines < 3; n--)
		if (buf[n - 1] == '\n' && ++lines == 3)
			tail = buf + n;
	snprintf(err, errlen, "%s%s%s", prefix, *tail ? ": " : "", tail);
	for (char *p = err; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static void status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status 0x%x", status);
}

int fm_native_run(const struct fm_run *r, struct fm_native *out, char *err, size_t errlen)
{
	const char *argv[FM_MAX_KNOBS + 32];
	char *pool[FM_MAX_KNOBS + 8];
	char js[4200], log[4200], st[64];
	int npool = 0, n, status;
	json_error_t je;
	double t0 = fm_now();
	pid_t pid;

	memset(out, 0, sizeof(*out));
	snprintf(js, sizeof(js), "%s/%s-native.json", r->tmpdir, r->tag);
	snprintf(log, sizeof(log), "%s/%s-native.log", r->tmpdir, r->tag);
	n = simreq_argv(r, js, argv, FM_MAX_KNOBS + 30, pool, &npool);
	if (n < 0) {
		snprintf(err, errlen, "too many knobs");
		goto fail;
	}
	if (r->pmu)
		argv[n++] = "--pmu";
	argv[n] = NULL;
	pid = spawn(argv, log, err, errlen);
	if (pid < 0)
		goto fail;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out->wall_s = fm_now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char pre[128];

		status_str(status, st, sizeof(st));
		snprintf(pre, sizeof(pre), "frontload-simreq (native) failed, %s", st);
		log_tail(log, pre, err, errlen);
		goto fail;
	}
	out->summary = json_load_file(js, 0, &je);
	if (out->summary == NULL) {
		snprintf(err, errlen, "%s: %s", js, je.text);
		goto fail;
	}
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return 0;
fail:
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return -1;
}

void fm_native_free(struct fm_native *n)
{
	json_decref(n->summary);
	n->summary = NULL;
}

int fm_sim_start(const struct fm_run *r, struct fm_sim_job *job, char *err, size_t errlen)
{
	const char *argv[FM_MAX_KNOBS + 64];
	char *pool[FM_MAX_KNOBS + 32];
	char i1[64], d1[64], ll[64], cgo[4300], logo[4300];
	int n = 0, npool = 0, m;
	const char *progress = r->quiet ? NULL : "--progress";

	memset(job, 0, sizeof(*job));
	snprintf(job->cg, sizeof(job->cg), "%s/%s.callgrind", r->tmpdir, r->tag);
	snprintf(job->window, sizeof(job->window), "%s.2", job->cg);
	snprintf(job->js, sizeof(job->js), "%s/%s-sim.json", r->tmpdir, r->tag);
	snprintf(job->log, sizeof(job->log), "%s/%s-valgrind.log", r->tmpdir, r->tag);
	snprintf(i1, sizeof(i1), "--I1=%u,%u,%u", r->geo.i1.size, r->geo.i1.assoc, r->geo.i1.line);
	snprintf(d1, sizeof(d1), "--D1=%u,%u,%u", r->geo.d1.size, r->geo.d1.assoc, r->geo.d1.line);
	snprintf(ll, sizeof(ll), "--LL=%u,%u,%u", r->geo.ll.size, r->geo.ll.assoc, r->geo.ll.line);
	snprintf(cgo, sizeof(cgo), "--callgrind-out-file=%s", job->cg);
	snprintf(logo, sizeof(logo), "--log-file=%s", job->log);
	argv[n++] = "valgrind";
	argv[n++] = "--tool=callgrind";
	/* Everything is collected so the window's opening dump resets every jump counter
	 * (see frontload-simreq --help); --stage extract collects only inside fl_plan_run. */
	argv[n++] = strcmp(r->stage, "extract") == 0 ? "--collect-atstart=no" :
		"--collect-atstart=yes";
	argv[n++] = "--cache-sim=yes";
	argv[n++] = r->mix ? "--branch-sim=yes" : "--branch-sim=no";
	argv[n++] = i1;
	argv[n++] = d1;
	argv[n++] = ll;
	/* Per-instruction counts and jumps always: the rep string correction of every rate
	 * needs them (mix.h), with or without the full mix. */
	argv[n++] = "--dump-instr=yes";
	argv[n++] = "--dump-line=no";
	argv[n++] = "--collect-jumps=yes";
	if (strcmp(r->stage, "extract") == 0)
		argv[n++] = "--toggle-collect=fl_plan_run";
	argv[n++] = cgo;
	argv[n++] = logo;
	m = simreq_argv(r, job->js, argv + n, FM_MAX_KNOBS + 30, pool, &npool);
	if (m < 0) {
		snprintf(err, errlen, "too many knobs");
		goto out;
	}
	n += m;
	if (progress)
		argv[n++] = progress;
	argv[n++] = "--quiet";
	argv[n] = NULL;
	job->cmd[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t l = strlen(job->cmd);

		snprintf(job->cmd + l, sizeof(job->cmd) - l, "%s%s", i ? " " : "", argv[i]);
	}
	job->t0 = fm_now();
	/* With progress the client's stderr (simreq's lines) reaches the terminal; valgrind's
	 * own messages always go to the log. */
	job->pid = spawn(argv, r->quiet ? job->log : NULL, err, errlen);
out:
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return job->pid > 0 ? 0 : -1;
}

int fm_sim_running(struct fm_sim_job *job, int *status)
{
	pid_t p = waitpid(job->pid, status, WNOHANG);

	return p == 0 || (p < 0 && errno == EINTR);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Classify what the objects holding >= 0.1% of Ir executed; join with the counts. */
static int sim_mix(struct fl_cg *cg, int objdump, struct fm_sim *out,
	char *err, size_t errlen)
{
	uint64_t *per = calloc(cg->nobjs + 1, sizeof(*per));
	struct fl_dis *dis = calloc(cg->nobjs + 1, sizeof(*dis));
	struct fl_mix_obj *objs = calloc(cg->nobjs + 1, sizeof(*objs));
	size_t nobjs = 0;
	int rc = -1;

	if (per == NULL || dis == NULL || objs == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (fl_cg_sort(cg) != 0) {
		snprintf(err, errlen, "out of memory sorting callgrind data");
		goto out;
	}
	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj != FL_CG_NO_OBJ)
			per[cg->insns[i].obj] += cg->insns[i].ir;
	uint64_t total = cg->ir_event >= 0 ? cg->totals[cg->ir_event] : 0;
	for (uint32_t o = 0; o < cg->nobjs; o++) {
		if (per[o] == 0 || (double)per[o] < 0.001 * (double)total ||
		    access(cg->objs[o], R_OK) != 0)
			continue;
		if (fm_dis_executed(cg, o, objdump, &dis[nobjs], err, errlen) != 0)
			goto out;
		objs[nobjs].dis = &dis[nobjs];
		objs[nobjs].ob_name = cg->objs[o];
		nobjs++;
		size_t l = strlen(out->objects);
		snprintf(out->objects + l, sizeof(out->objects) - l, "%s%s", l ? ", " : "",
			base_name(cg->objs[o]));
	}
	if (fl_mix_compute(&out->mix, cg, objs, nobjs, err, errlen) != 0)
		goto out;
	/* both sides count rep string executions once */
	out->classified_share = out->mix.ir_hw ?
		(double)out->mix.insns / (double)out->mix.ir_hw : NAN;
	rc = 0;
out:
	for (size_t i = 0; i < nobjs; i++)
		fl_dis_free(&dis[i]);
	free(dis);
	free(objs);
	free(per);
	return rc;
}

static uint64_t ev_total(const struct fl_cg *cg, const char *name)
{
	int e = fl_cg_event(cg, name);

	return e >= 0 ? cg->totals[e] : 0;
}

int fm_sim_finish(const struct fm_run *r, struct fm_sim_job *job, int status,
	struct fm_sim *out, char *err, size_t errlen)
{
	struct fl_cg cg;
	json_error_t je;
	char st[64], pre[4400];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->wall_s = fm_now() - job->t0;
	snprintf(out->cmd, sizeof(out->cmd), "%s", job->cmd);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		status_str(status, st, sizeof(st));
		snprintf(pre, sizeof(pre), "valgrind callgrind run failed, %s (log %s)", st,
			job->log);
		log_tail(job->log, pre, err, errlen);
		return -1;
	}
	out->summary = json_load_file(job->js, 0, &je);
	if (out->summary == NULL) {
		snprintf(err, errlen, "%s: %s", job->js, je.text);
		return -1;
	}
	fl_cg_init(&cg);
	/* The window's dump; the others (startup and warmup, exit) are dropped now. */
	if (fl_cg_parse_file(&cg, job->window, err, errlen) != 0)
		goto out;
	for (int k = 0; k < 2; k++) {
		char other[4300];

		snprintf(other, sizeof(other), k ? "%s" : "%s.1", job->cg);
		unlink(other);
	}
	out->ir = ev_total(&cg, "Ir");
	out->i1mr = ev_total(&cg, "I1mr");
	out->ilmr = ev_total(&cg, "ILmr");
	out->bc = ev_total(&cg, "Bc");
	out->bcm = ev_total(&cg, "Bcm");
	out->bi = ev_total(&cg, "Bi");
	out->bim = ev_total(&cg, "Bim");
	if (out->ir == 0) {
		snprintf(err, errlen, "%s: no instructions were collected (is the window empty?)",
			job->window);
		goto out;
	}
	/* Classified always (without --branch-sim when !r->mix): the rates' denominator needs
	 * the rep string correction. */
	if (sim_mix(&cg, r->objdump, out, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	fl_cg_free(&cg);
	return rc;
}

int fm_sim_run(const struct fm_run *r, double eta_s, struct fm_sim *out, char *err,
	size_t errlen)
{
	struct fm_sim_job job;
	int status;
	double next = 30;
	char a[32], b[32];

	if (fm_sim_start(r, &job, err, errlen) != 0)
		return -1;
	while (fm_sim_running(&job, &status)) {
		struct timespec ts = { 0, 200000000 };
		double el = fm_now() - job.t0;

		nanosleep(&ts, NULL);
		if (!r->quiet && el >= next) {
			fprintf(stderr, FM_PROG ": simulating: %s elapsed, ~%s estimated\n",
				fm_dur_str(el, a, sizeof(a)), fm_dur_str(eta_s, b, sizeof(b)));
			next += 30;
		}
	}
	if (!r->quiet)
		fprintf(stderr, FM_PROG ": simulation done in %s; parsing and disassembling\n",
			fm_dur_str(fm_now() - job.t0, a, sizeof(a)));
	return fm_sim_finish(r, &job, status, out, err, errlen);
}

void fm_sim_free(struct fm_sim *s)
{
	json_decref(s->summary);
	s->summary = NULL;
}

double fm_sim_eta(double native_wall_s, double plan_functions, double calls_per_request,
	uint64_t warmup, uint64_t requests)
{
	double touched = (double)(warmup + requests) * calls_per_request;

	if (touched > plan_functions)
		touched = plan_functions;
	return (touched + 3000.0) * FM_TRANSLATE_MS / 1000.0 + native_wall_s * FM_SLOWDOWN;
}
