/* fuzz_result.c: the readers behind result.json: driver control lines through
 * fl_result_parse_obs and fl_result_step_aggregate, leaf stats snapshots through the
 * final-window deltas, then result.json written by fl_result_write and read back.
 *
 * Input: byte 0 is a control byte (bit 0: two instances, else one; bit 1: the last step
 * is the final window; bit 2: the search is done; bit 3: it converged). The rest is
 * sections separated by a line "--": the driver's lines (one JSON object per line),
 * then the leaf stats before the final window, after it, and at exit (JSON each). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz.h"
#include "run_result.h"

#define FZ_MAX_STEPS 16u
#define FZ_MAX_INST 2u
#define FZ_SECTIONS 4

static char fz_dir[64];
static struct fl_run fz_run;
static struct fl_run_instance fz_inst[FZ_MAX_INST];
static struct fl_run_step fz_steps[FZ_MAX_STEPS];
static struct fl_run_obs fz_obs[FZ_MAX_STEPS][FZ_MAX_INST];

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_result: %s\n", what);
	abort();
}

static void fz_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof path, "%s/%s", fz_dir, name);
	unlink(path);
}

static void fz_cleanup(void)
{
	fz_unlink("result.json");
	fz_unlink("steps.csv");
	rmdir(fz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(fz_dir, sizeof fz_dir, "%s/fl-fuzz-result.XXXXXX",
		access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(fz_dir) == NULL)
		fz_die("mkdtemp");
	atexit(fz_cleanup);
	return 0;
}

/* The aggregate of a step must follow from its instances. */
static void fz_check_step(const struct fl_run_step *st)
{
	uint64_t req = 0, minlat = UINT64_MAX;
	int missing = 0, complete = 1;
	double worst = -INFINITY;

	for (unsigned i = 0; i < st->ninst; i++) {
		const struct fl_run_obs *o = &st->inst[i];
		req += o->sent + o->unsent;
		if (o->lat.count < minlat)
			minlat = o->lat.count;
		if (isfinite(o->lat.p95))
			worst = fmax(worst, o->lat.p95);
		else
			missing = 1;
		complete &= !o->interrupted && o->window_s > 0;
	}
	if (st->sum.requests != req || st->sum.latencies != minlat)
		fz_die("step totals differ from its instances");
	if (missing ? isfinite(st->worst.p95) : st->worst.p95 != worst)
		fz_die("worst p95 is not the worst instance's");
	if (st->complete != complete)
		fz_die("complete flag");
}

/* A count of the line as read must be the line's number, saturated to 0..INT64_MAX. */
static void fz_check_counts(const char *line, const struct fl_run_obs *o)
{
	static const char *const keys[] = { "sent", "completed", "ok", "overloaded",
		"timeouts", "late", "unsent", "backlogged" };
	const uint64_t got[] = { o->sent, o->completed, o->ok, o->overloaded, o->timeouts,
		o->late, o->unsent, o->backlogged };
	json_t *j = json_loads(line, 0, NULL);

	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		json_t *v = json_object_get(j, keys[k]);
		double x = json_is_number(v) ? json_number_value(v) : 0;
		uint64_t want = x >= 0x1p63 ? (uint64_t)INT64_MAX : x > 0 ? (uint64_t)x : 0;
		if (got[k] != want)
			fz_die("a count read other than saturated");
	}
	json_decref(j);
}

static double fz_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* The final window's per-stage CPU in result.json must have the sign of after - before. */
static void fz_check_deltas(const json_t *result, const json_t *pre, const json_t *post)
{
	const json_t *inst = json_array_get(json_object_get(result, "instances"), 0);
	const json_t *fw = json_object_get(json_object_get(inst, "leaf_stats"), "final_window");
	const json_t *stages = json_object_get(fw, "stages"), *v;
	const char *name;

	if (!json_is_object(stages))
		return;
	json_object_foreach((json_t *)stages, name, v) {
		double d = fz_num(json_object_get(json_object_get(post, "stages"), name), "cpu_ns") -
			fz_num(json_object_get(json_object_get(pre, "stages"), name), "cpu_ns");
		json_int_t w = json_integer_value(json_object_get(v, "cpu_ns"));
		if ((d >= 1 && w <= 0) || (d <= -1 && w >= 0))
			fz_die("a stage's CPU delta written with the wrong sign");
	}
}

/* Split text at lines "--" into up to FZ_SECTIONS sections (NUL-terminated in place). */
static int fz_sections(char *text, char **sec)
{
	int n = 1;

	sec[0] = text;
	for (char *p = text; n < FZ_SECTIONS && (p = strstr(p, "\n--\n")) != NULL; ) {
		*p = 0;
		p += 4;
		sec[n++] = p;
	}
	return n;
}

/* Each driver line into an observation; every ninst observations make a step. */
static size_t fz_parse_steps(char *lines, unsigned ninst)
{
	size_t nsteps = 0;
	unsigned have = 0;
	char err[1024];

	for (char *line = lines, *next; line != NULL && nsteps < FZ_MAX_STEPS; line = next) {
		struct fl_run_obs *o = &fz_obs[nsteps][have];
		int rc;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = 0;
		err[0] = 0;
		rc = fl_result_parse_obs(line, o, err, sizeof err);
		if (rc != 0) {
			if (err[0] == 0 && rc == -1)
				fz_die("line refused without a message");
			fl_result_obs_free(o);
			continue;
		}
		fz_check_counts(line, o);
		if (++have < ninst)
			continue;
		struct fl_run_step *st = &fz_steps[nsteps];
		memset(st, 0, sizeof *st);
		st->number = (unsigned)nsteps + 1;
		st->ninst = ninst;
		st->inst = fz_obs[nsteps];
		st->qps = st->inst[0].requested_qps;
		st->host_cpu_pct = -1;
		snprintf(st->why, sizeof st->why, "fuzz");
		fl_result_step_aggregate(st, (int)(nsteps & 1));
		fz_check_step(st);
		nsteps++;
		have = 0;
	}
	for (unsigned i = 0; i < have; i++)
		fl_result_obs_free(&fz_obs[nsteps][i]);
	return nsteps;
}

/* result.json as written must parse, hold every step and instance, and give null, not
 * a number, for a p95 nothing measured. */
static void fz_check_written(size_t nsteps, unsigned ninst, const json_t *pre,
	const json_t *post)
{
	char path[128];
	json_t *j, *steps, *v;
	size_t i;

	snprintf(path, sizeof path, "%s/result.json", fz_dir);
	j = fl_result_load_json(path);
	if (!json_is_object(j))
		fz_die("result.json does not read back as an object");
	steps = json_object_get(j, "steps");
	if (json_array_size(steps) != nsteps ||
	    json_array_size(json_object_get(j, "instances")) != ninst)
		fz_die("result.json steps or instances missing");
	json_array_foreach(steps, i, v) {
		json_t *p95 = json_object_get(v, "p95_ms");
		json_t *count = json_object_get(v, "latency_count");
		if (p95 == NULL || count == NULL)
			fz_die("a step without p95_ms or latency_count");
		if (json_integer_value(count) == 0 && !json_is_null(p95))
			fz_die("a p95 where no latency was counted");
	}
	fz_check_deltas(j, pre, post);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *sec[FZ_SECTIONS] = { NULL };
	json_t *stats[FZ_SECTIONS] = { NULL };
	unsigned ninst;
	size_t nsteps;
	char err[512];
	int nsec;

	if (size < 1)
		return 0;
	ninst = (data[0] & 1) ? 2 : 1;
	text = malloc(size);
	if (text == NULL)
		fz_die("out of memory");
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	nsec = fz_sections(text, sec);
	nsteps = fz_parse_steps(sec[0], ninst);
	for (int s = 1; s < nsec; s++)
		stats[s] = json_loads(sec[s], 0, NULL);

	struct fl_run *r = &fz_run;
	memset(r, 0, sizeof *r);
	memset(fz_inst, 0, sizeof fz_inst);
	snprintf(r->dir, sizeof r->dir, "%s", fz_dir);
	snprintf(r->run_id, sizeof r->run_id, "fuzz");
	r->ninst = ninst;
	r->inst = fz_inst;
	r->steps = fz_steps;
	r->nsteps = nsteps;
	r->final_step = (data[0] & 2) && nsteps > 0 ? (long)nsteps - 1 : -1;
	r->final_host_cpu_pct = -1;
	r->search.state = (data[0] & 4) ? FL_SEARCH_DONE : FL_SEARCH_RUNNING;
	r->search.converged = (data[0] >> 3) & 1;
	r->search.sla_bound_qps = r->search.lower_bound_qps = nsteps ? fz_steps[0].qps : 0;
	for (unsigned i = 0; i < ninst; i++) {
		fz_inst[i].own_leaf = 1;
		fz_inst[i].leaf_stats_pre = stats[1];
		fz_inst[i].leaf_stats_post = stats[2];
		fz_inst[i].leaf_stats_end = stats[3];
		snprintf(fz_inst[i].leaf_stats_path, sizeof fz_inst[i].leaf_stats_path,
			"%s/leaf%u-stats.json", fz_dir, i);
	}
	if (fl_result_write(r, err, sizeof err) != 0)
		fz_die(err);
	fz_check_written(nsteps, ninst, stats[1], stats[2]);

	for (size_t s = 0; s < nsteps; s++)
		for (unsigned i = 0; i < ninst; i++)
			fl_result_obs_free(&fz_obs[s][i]);
	for (int s = 1; s < nsec; s++)
		json_decref(stats[s]);
	free(text);
	return 0;
}
