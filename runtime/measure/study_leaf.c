/* study_leaf.c: the study's leaf points: a headline sweep point measured again on the
 * running leaf (mock, leaf and driver as frontload run starts them, the leaf under
 * callgrind), by this program's own `validate --simulate`, so the report shows the
 * extraction alone (the harness) beside what the whole service sees at the same plan. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "margs.h"
#include "mutil.h"
#include "paths.h"
#include "process.h"
#include "study.h"

/* Seconds validate spends besides the simulated window: the native window (--warmup 2
 * --window 4), starting and stopping mock, leaf and driver twice, valgrind's start. */
#define ST_LEAF_FIXED_S 30.0
/* The leaf's CPU a request besides the extraction (TLS, zstd, fanout, copies), natively,
 * and the median latency the mock's delays add (s): validate's rate counts both. */
#define ST_LEAF_BASE_S 0.006
#define ST_LEAF_P50_S 0.15

const char *st_kind_str(int kind)
{
	return kind == ST_SWEEP ? "sweep" : kind == ST_MRC ? "mrc" : "leaf";
}

double st_leaf_eta(const struct st_model *m, const struct st_point *q)
{
	/* validate's simulated rate: a quarter of one request's time alone (CPU x
	 * FM_SLOWDOWN + the median latency); its window: a warm-up of 3 gaps, then N + 1/2;
	 * plus valgrind's translation of the functions the warm-up touches. */
	double per = (st_call_cost(m, (double)q->nfuncs) * (double)q->calls +
		ST_LEAF_BASE_S) * FM_SLOWDOWN + ST_LEAF_P50_S;
	double touched = fmin((double)q->nfuncs, (double)q->calls * (3.0 + (double)q->lreq));

	return ST_LEAF_FIXED_S + touched * FM_TRANSLATE_MS / 1e3 + 4 * per *
		(3.5 + (double)q->lreq);
}

/* Append "--name" and value (when not NULL) to argv at *n. */
static void add(const char **argv, int *n, int max, const char *name, const char *value)
{
	if (*n + 2 >= max)
		return;
	argv[(*n)++] = name;
	if (value)
		argv[(*n)++] = value;
}

int st_leaf_start(struct st_point *q, const struct st_args *a, const struct fm_run *r0,
	const char *tmp)
{
	const char *argv[160];
	char self[4200], flags[FM_MAX_KNOBS][64], sreq[32], err[1024], out[4300];
	int n = 0;

	if (fl_exe_dir(self, sizeof(self) - 32) != 0) {
		q->failed = 1;
		snprintf(q->why, sizeof(q->why), "leaf point: cannot find this program "
			"(/proc/self/exe)");
		return -1;
	}
	strcat(self, "/frontload-measure");
	snprintf(q->job.js, sizeof(q->job.js), "%s/%s-leaf.json", tmp, q->tag);
	snprintf(q->job.log, sizeof(q->job.log), "%s/%s-leaf.log", tmp, q->tag);
	snprintf(out, sizeof(out), "%s/%s-leaf.out", tmp, q->tag);
	snprintf(sreq, sizeof(sreq), "%llu", (unsigned long long)q->lreq);
	snprintf(q->cps, sizeof(q->cps), "%llu", (unsigned long long)q->eps);
	snprintf(q->nfs, sizeof(q->nfs), "%llu", (unsigned long long)q->nfuncs);
	snprintf(q->als, sizeof(q->als), "%.17g", q->alpha < 0 ? 0 : q->alpha);
	argv[n++] = self;
	argv[n++] = "validate";
	add(argv, &n, 160, "--simulate", NULL);
	add(argv, &n, 160, "--no-profile", NULL);
	add(argv, &n, 160, "--quiet", NULL);
	add(argv, &n, 160, "--warmup", "2");
	add(argv, &n, 160, "--window", "4");
	add(argv, &n, 160, "--sim-requests", sreq);
	add(argv, &n, 160, "--json", q->job.js);
	add(argv, &n, 160, "--cpu", a->cpu);
	if (a->i1)
		add(argv, &n, 160, "--i1", a->i1);
	if (a->d1)
		add(argv, &n, 160, "--d1", a->d1);
	if (a->ll)
		add(argv, &n, 160, "--ll", a->ll);
	/* The study's forwarded knobs the leaf takes, then the point's plan (later wins). */
	for (int i = 0; i + 1 < r0->nknobs; i += 2) {
		if (fm_knob_not_leaf(r0->knobs[i]))
			continue;
		snprintf(flags[i / 2], sizeof(flags[0]), "--%s", r0->knobs[i]);
		add(argv, &n, 160, flags[i / 2], r0->knobs[i + 1]);
	}
	add(argv, &n, 160, "--active-functions", q->nfs);
	add(argv, &n, 160, "--dispatch", q->alpha < 0 ? "flat" : "zipf");
	add(argv, &n, 160, "--zipf-alpha", q->als);
	add(argv, &n, 160, "--extractors-per-story", q->cps);
	argv[n] = NULL;
	q->job.cmd[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t l = strlen(q->job.cmd);

		snprintf(q->job.cmd + l, sizeof(q->job.cmd) - l, "%s%s", i ? " " : "",
			i ? argv[i] : FM_PROG);
	}
	struct fl_spawn_opts o = { .stdout_path = out, .stderr_path = q->job.log,
		.stdin_path = "/dev/null" };
	q->job.t0 = fm_now();
	q->job.pid = fl_spawn(argv, &o, err, sizeof(err));
	if (q->job.pid < 0) {
		q->failed = 1;
		snprintf(q->why, sizeof(q->why), "leaf point: %s", err);
		return -1;
	}
	return 0;
}

/* A number of a JSON row, NAN when null or absent. */
static double num(json_t *row, const char *key)
{
	json_t *v = json_object_get(row, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The last line of a file (validate's last message), into buf. */
static void last_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	char line[1024];

	snprintf(buf, len, "no message (%.900s)", path);
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp))
		if (line[0] != '\n') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line);
		}
	fclose(fp);
}

int st_leaf_finish(struct st_point *q, int status, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o, *sim, *proc, *obj;
	char msg[1024];
	double sent;
	size_t i;

	q->sim.wall_s = fm_now() - q->job.t0;
	snprintf(q->sim.cmd, sizeof(q->sim.cmd), "%s", q->job.cmd);
	/* 0: every target met, 3: a target missed; the figures are good either way. */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != FM_EXIT_OK &&
	    WEXITSTATUS(status) != FM_EXIT_MISSED)) {
		last_line(q->job.log, msg, sizeof(msg));
		snprintf(err, errlen, "validate on the leaf %s %d: %s", WIFEXITED(status) ?
			"exited" : "was killed by signal", WIFEXITED(status) ? WEXITSTATUS(status) :
			WTERMSIG(status), msg);
		return -1;
	}
	o = json_load_file(q->job.js, 0, &je);
	if (o == NULL) {
		snprintf(err, errlen, "validate's JSON %s: %s", q->job.js, je.text);
		return -1;
	}
	sim = json_object_get(o, "simulated");
	proc = json_object_get(o, "process");
	if (!json_is_true(json_object_get(sim, "whole")) || !json_is_object(proc)) {
		snprintf(err, errlen, "the leaf's simulated window was not whole: %s",
			json_string_value(json_object_get(sim, "why")) ?
			json_string_value(json_object_get(sim, "why")) : "no reason given");
		json_decref(o);
		return -1;
	}
	sent = (double)json_integer_value(json_object_get(sim, "sent"));
	double *v = q->fig;
	v[0] = num(proc, "l1i_mpki");
	v[1] = num(proc, "ll_code_mpki");
	v[2] = num(proc, "cond_branch_mpki");
	v[3] = num(proc, "indirect_branch_mpki");
	v[4] = num(proc, "cond_branch_pct");
	v[5] = NAN;  /* taken share: the leaf's rows do not carry it */
	v[6] = num(proc, "call_ret_pct");
	v[7] = num(proc, "mem_pct");
	v[8] = num(proc, "scalar_fp_pct");
	v[9] = num(proc, "div_pct");
	v[10] = num(proc, "insns_per_taken_branch");
	v[11] = sent > 0 ? num(proc, "instructions") / sent : NAN;
	v[12] = v[13] = NAN;
	json_array_foreach(json_object_get(o, "objects"), i, obj) {
		if (json_is_string(json_object_get(obj, "name")) &&
		    strcmp(json_string_value(json_object_get(obj, "name")), "generated") == 0) {
			v[12] = num(obj, "ir_pct");
			v[13] = num(obj, "l1i_miss_pct");
		}
	}
	json_decref(o);
	return 0;
}
