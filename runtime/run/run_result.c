/* run_result.c: driver step lines in, result.json and steps.csv out. */
#define _GNU_SOURCE
#include "hist.h"
#include "hist_json.h"
#include "osfile.h"
#include "quantile_ci.h"
#include "run_result.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *fl_run_status_name(enum fl_run_status s)
{
	switch (s) {
	case FL_RUN_RUNNING: return "running";
	case FL_RUN_COMPLETE: return "complete";
	case FL_RUN_INTERRUPTED: return "interrupted";
	case FL_RUN_FAILED: return "failed";
	}
	return "?";
}

double fl_run_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* A count, saturated at INT64_MAX: a double past uint64's range does not convert (the
 * behaviour is undefined), and result.json writes counts as signed JSON integers. */
static uint64_t jcount(const json_t *o, const char *key)
{
	double v = jnum(o, key);
	return v >= 0x1p63 ? (uint64_t)INT64_MAX : v > 0 ? (uint64_t)v : 0;
}

/* A difference of two stats figures as a JSON integer, saturated to json_int_t's range
 * (a corrupt stats file must not make the conversion undefined); NaN gives 0. */
static json_int_t jdelta(double v)
{
	if (v >= 0x1p63)
		return INT64_MAX;
	if (v < -0x1p63)
		return INT64_MIN;
	return isnan(v) ? 0 : (json_int_t)v;
}

/* A latency figure: NAN (written as null) when absent, null, or nothing was counted. */
static double jlat(const json_t *o, const char *key, uint64_t count)
{
	const json_t *v = json_object_get(o, key);
	return count > 0 && json_is_number(v) ? json_number_value(v) : NAN;
}

static void lat_parse(const json_t *o, struct fl_lat_ms *l)
{
	l->count = jcount(o, "count");
	l->p50 = jlat(o, "p50", l->count);
	l->p90 = jlat(o, "p90", l->count);
	l->p95 = jlat(o, "p95", l->count);
	l->p99 = jlat(o, "p99", l->count);
	l->p99_9 = jlat(o, "p99_9", l->count);
	l->max = jlat(o, "max", l->count);
	l->mean = jlat(o, "mean", l->count);
}

int fl_result_parse_obs(const char *line, struct fl_run_obs *o, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j = json_loads(line, 0, &je);

	memset(o, 0, sizeof *o);
	if (!json_is_object(j)) {
		snprintf(err, errlen, "not a JSON object: %s", j ? "" : je.text);
		json_decref(j);
		return -1;
	}
	const json_t *e = json_object_get(j, "error");
	if (json_is_string(e)) {
		snprintf(err, errlen, "%s", json_string_value(e));
		json_decref(j);
		return 1;
	}
	const json_t *lat = json_object_get(j, "latency_ms");
	const json_t *errs = json_object_get(j, "errors");
	if (!json_is_number(json_object_get(j, "requested_qps")) || !json_is_object(lat) ||
	    !json_is_object(errs)) {
		snprintf(err, errlen, "a step result without requested_qps, latency_ms or errors");
		json_decref(j);
		return -1;
	}
	o->requested_qps = jnum(j, "requested_qps");
	o->achieved_qps = jnum(j, "achieved_qps");
	o->window_s = jnum(j, "window_s");
	o->sent = jcount(j, "sent");
	o->completed = jcount(j, "completed");
	o->ok = jcount(j, "ok");
	o->overloaded = jcount(j, "overloaded");
	o->timeouts = jcount(j, "timeouts");
	o->late = jcount(j, "late");
	o->unsent = jcount(j, "unsent");
	o->errors = jcount(errs, "total");
	o->offered_qps = o->window_s > 0 ? (double)(o->sent + o->unsent) / o->window_s : 0;
	lat_parse(lat, &o->lat);
	const json_t *ci = json_object_get(j, "p95_interval_ms");
	const json_t *cl = json_object_get(ci, "lo"), *ch = json_object_get(ci, "hi");
	o->p95_lo_ms = json_is_number(cl) ? json_number_value(cl) : -1;
	o->p95_hi_ms = json_is_number(ch) ? json_number_value(ch) : -1;
	o->backlogged = jcount(j, "backlogged");
	o->inflight_ceiling = (unsigned)jcount(j, "inflight_ceiling");
	const json_t *cpu = json_object_get(j, "host_cpu_pct");
	o->driver_cpu_pct = json_is_number(cpu) ? json_number_value(cpu) : -1;
	o->driver_limited = json_is_true(json_object_get(j, "driver_limited"));
	o->interrupted = json_is_true(json_object_get(j, "interrupted"));
	o->errors_json = json_deep_copy(errs);
	json_t *h = json_object_get(j, "latency_hist_ns");
	o->hist_json = json_is_object(h) ? json_incref(h) : NULL;
	json_decref(j);
	return 0;
}

void fl_result_obs_free(struct fl_run_obs *o)
{
	json_decref(o->errors_json);
	o->errors_json = NULL;
	json_decref(o->hist_json);
	o->hist_json = NULL;
	for (unsigned d = 0; o->drv && d < o->ndrv; d++)
		fl_result_obs_free(&o->drv[d]);
	free(o->drv);
	o->drv = NULL;
	o->ndrv = 0;
}

/* A histogram's figures in ms, as the driver writes latency_ms: NAN when empty. */
static void lat_from_hist(const struct fl_hist *h, struct fl_lat_ms *l)
{
	l->count = h->n;
	if (h->n == 0) {
		l->p50 = l->p90 = l->p95 = l->p99 = l->p99_9 = l->max = l->mean = NAN;
		return;
	}
	l->p50 = (double)fl_hist_percentile(h, 50) / 1e6;
	l->p90 = (double)fl_hist_percentile(h, 90) / 1e6;
	l->p95 = (double)fl_hist_percentile(h, 95) / 1e6;
	l->p99 = (double)fl_hist_percentile(h, 99) / 1e6;
	l->p99_9 = (double)fl_hist_percentile(h, 99.9) / 1e6;
	l->max = (double)h->max / 1e6;
	l->mean = fl_hist_mean(h) / 1e6;
}

/* Add the integer errors by kind of src into dst (a JSON object). */
static void errors_add(json_t *dst, const json_t *src)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)src, key, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			continue;
		json_t *have = json_object_get(dst, key);
		json_int_t a = json_integer_value(v), b = json_is_integer(have) ?
			json_integer_value(have) : 0;
		/* Saturated, as counts are read (jcount). */
		json_object_set_new(dst, key, json_integer(a > INT64_MAX - b ? INT64_MAX : a + b));
	}
}

/* Counts, rates and flags of d added into o. */
static void obs_add(struct fl_run_obs *o, const struct fl_run_obs *d, int first)
{
	o->requested_qps += d->requested_qps;
	o->achieved_qps += d->achieved_qps;
	o->offered_qps += d->offered_qps;
	o->window_s = first || d->window_s < o->window_s ? d->window_s : o->window_s;
	o->sent += d->sent;
	o->completed += d->completed;
	o->ok += d->ok;
	o->overloaded += d->overloaded;
	o->timeouts += d->timeouts;
	o->late += d->late;
	o->unsent += d->unsent;
	o->errors += d->errors;
	o->backlogged += d->backlogged;
	/* Unknown for one is unknown for all. */
	o->inflight_ceiling = first || o->inflight_ceiling ? (d->inflight_ceiling ?
		o->inflight_ceiling + d->inflight_ceiling : 0) : 0;
	o->driver_cpu_pct = fmax(o->driver_cpu_pct, d->driver_cpu_pct);
	o->driver_limited |= d->driver_limited;
	o->interrupted |= d->interrupted;
	if (d->errors_json)
		errors_add(o->errors_json, d->errors_json);
}

/* Clear o's own figures, keeping its drivers. */
static void obs_reset(struct fl_run_obs *o)
{
	unsigned n = o->ndrv;
	struct fl_run_obs *drv = o->drv;

	o->ndrv = 0;
	o->drv = NULL;
	fl_result_obs_free(o);
	memset(o, 0, sizeof *o);
	o->ndrv = n;
	o->drv = drv;
	o->driver_cpu_pct = -1;
	o->p95_lo_ms = o->p95_hi_ms = -1;
}

int fl_result_obs_merge(struct fl_run_obs *o, char *err, size_t errlen)
{
	struct fl_hist *h = malloc(sizeof *h);
	char why[512];
	int rc = -1;

	obs_reset(o);
	o->errors_json = json_object();
	if (h == NULL || o->errors_json == NULL) {
		snprintf(err, errlen, "out of memory merging the drivers' results");
		goto out;
	}
	fl_hist_init(h);
	for (unsigned d = 0; d < o->ndrv; d++) {
		const struct fl_run_obs *x = &o->drv[d];
		obs_add(o, x, d == 0);
		if (x->hist_json == NULL) {
			/* Stopped before it could report: nothing to merge, and nothing lost. */
			if (x->lat.count == 0 && x->ok == 0 && x->window_s <= 0)
				continue;
			snprintf(err, errlen, "driver %u (seed %llu) reported %llu latencies but no "
				"latency_hist_ns: its histogram cannot be merged", d,
				(unsigned long long)x->seed, (unsigned long long)x->lat.count);
			goto out;
		}
		uint64_t before = h->n;
		if (fl_hist_merge_json(h, x->hist_json, why, sizeof why) != 0) {
			snprintf(err, errlen, "driver %u (seed %llu): %s", d,
				(unsigned long long)x->seed, why);
			goto out;
		}
		if (h->n - before != x->lat.count) {
			snprintf(err, errlen, "driver %u (seed %llu): latency_hist_ns holds %llu "
				"latencies, latency_ms.count %llu", d, (unsigned long long)x->seed,
				(unsigned long long)(h->n - before), (unsigned long long)x->lat.count);
			goto out;
		}
	}
	lat_from_hist(h, &o->lat);
	uint64_t lo, hi;
	if (fl_hist_quantile_interval(h, 0.95, FL_CI_Z95, &lo, &hi) == 0) {
		o->p95_lo_ms = (double)lo / 1e6;
		o->p95_hi_ms = (double)hi / 1e6;
	}
	o->hist_json = fl_hist_to_json(h);
	if (o->hist_json == NULL) {
		snprintf(err, errlen, "out of memory merging the drivers' results");
		goto out;
	}
	rc = 0;
out:
	free(h);
	return rc;
}

void fl_result_step_aggregate(struct fl_run_step *st)
{
	struct fl_search_obs *s = &st->sum;
	double worst = -1;
	int ci_known = st->ninst > 0;

	memset(s, 0, sizeof *s);
	s->latencies = UINT64_MAX;
	s->window_s = st->duration_s;
	memset(&st->worst, 0, sizeof st->worst);
	st->overloaded = st->timeouts = 0;
	st->complete = st->ninst > 0;
	for (unsigned i = 0; i < st->ninst; i++) {
		const struct fl_run_obs *o = &st->inst[i];
		s->requested_qps += o->requested_qps;
		s->offered_qps += o->offered_qps;
		s->achieved_qps += o->achieved_qps;
		s->requests += o->sent + o->unsent;
		s->errors += o->errors + o->timeouts + o->overloaded;
		st->overloaded += o->overloaded;
		st->timeouts += o->timeouts;
		/* An instance with no p95 (no OK reply) is the worst of all. */
		double p95 = isfinite(o->lat.p95) ? o->lat.p95 : INFINITY;
		if (p95 > worst) {
			worst = p95;
			st->worst = o->lat;
		}
		/* Judged on the worst instance: the largest lower end and the largest upper. */
		ci_known &= o->p95_lo_ms >= 0 && o->p95_hi_ms >= 0;
		s->p95_lo_ms = fmax(s->p95_lo_ms, o->p95_lo_ms);
		s->p95_hi_ms = fmax(s->p95_hi_ms, o->p95_hi_ms);
		if (o->lat.count < s->latencies)
			s->latencies = o->lat.count;
		s->driver_limited |= o->driver_limited;
		if (o->interrupted || o->window_s <= 0)
			st->complete = 0;
	}
	s->p95_ms = st->worst.p95;
	if (!ci_known)
		s->p95_lo_ms = s->p95_hi_ms = -1;
	if (s->latencies == UINT64_MAX)
		s->latencies = 0;
}

json_t *fl_result_load_json(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	return j;
}

/* Copy key from src to dst when present. */
static void copy_key(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);
	if (v != NULL)
		json_object_set(dst, key, v);
}

json_t *fl_result_build_summary(const char *exe_dir)
{
	static const char *const dirs[] = { "", "/../share/frontload" };
	char path[4200];

	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
		snprintf(path, sizeof path, "%s%s/config.json", exe_dir, dirs[d]);
		json_t *cfg = fl_result_load_json(path);
		snprintf(path, sizeof path, "%s%s/manifest.json", exe_dir, dirs[d]);
		json_t *man = fl_result_load_json(path);
		if (cfg == NULL && man == NULL)
			continue;
		json_t *b = json_object();
		snprintf(path, sizeof path, "%s%s", exe_dir, dirs[d]);
		json_object_set_new(b, "dir", json_string(path));
		if (cfg != NULL) {
			static const char *const keys[] = { "configure_args", "copies", "seed",
				"clone", "shards", "cc", "cc_version", "cflags", "linker", "sanitizers",
				"variants", "functions", "build_id" };  /* build_id: a deployed copy's */
			for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
				copy_key(b, cfg, keys[k]);
		}
		if (man != NULL) {
			json_t *m = json_object();
			copy_key(m, man, "generator");
			copy_key(m, man, "seed");
			copy_key(m, man, "copies");
			copy_key(m, man, "clone");
			copy_key(m, man, "totals");
			json_t *v = json_object_get(man, "verify");
			if (json_is_object(v)) {
				json_t *vs = json_object();
				copy_key(vs, v, "ok");
				copy_key(vs, v, "functions");
				copy_key(vs, v, "unique");
				json_object_set_new(m, "verify", vs);
			}
			json_object_set_new(b, "manifest", m);
		}
		json_decref(cfg);
		json_decref(man);
		return b;
	}
	return NULL;
}

/* Real number or null when not finite / flagged unknown. */
static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null();
}

static json_t *lat_json(const struct fl_lat_ms *l)
{
	return json_pack("{sIsososososososo}", "count", (json_int_t)l->count, "p50_ms",
		jreal(l->p50), "p90_ms", jreal(l->p90), "p95_ms", jreal(l->p95), "p99_ms",
		jreal(l->p99), "p99_9_ms", jreal(l->p99_9), "max_ms", jreal(l->max), "mean_ms",
		jreal(l->mean));
}

/* Latency fields flat into o (DCPerf style: p95_ms beside final_*). */
static void lat_flat(json_t *o, const struct fl_lat_ms *l)
{
	json_object_set_new(o, "p50_ms", jreal(l->p50));
	json_object_set_new(o, "p90_ms", jreal(l->p90));
	json_object_set_new(o, "p95_ms", jreal(l->p95));
	json_object_set_new(o, "p99_ms", jreal(l->p99));
	json_object_set_new(o, "p99_9_ms", jreal(l->p99_9));
	json_object_set_new(o, "max_ms", jreal(l->max));
	json_object_set_new(o, "mean_ms", jreal(l->mean));
	json_object_set_new(o, "latency_count", json_integer((json_int_t)l->count));
}

/* {"lo", "hi", "confidence"}, or null when the driver gave no interval. */
static json_t *ci_json(double lo, double hi)
{
	if (lo < 0 || hi < 0)
		return json_null();
	return json_pack("{soso sf}", "lo", jreal(lo), "hi", jreal(hi), "confidence", 0.95);
}

static json_t *obs_json(const struct fl_run_obs *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "requested_qps", jreal(o->requested_qps));
	json_object_set_new(j, "offered_qps", o->window_s > 0 ? jreal(o->offered_qps) :
		json_null());
	json_object_set_new(j, "achieved_qps", o->window_s > 0 ? jreal(o->achieved_qps) :
		json_null());
	json_object_set_new(j, "window_s", jreal(o->window_s));
	json_object_set_new(j, "sent", json_integer((json_int_t)o->sent));
	json_object_set_new(j, "completed", json_integer((json_int_t)o->completed));
	json_object_set_new(j, "ok", json_integer((json_int_t)o->ok));
	json_object_set_new(j, "overloaded", json_integer((json_int_t)o->overloaded));
	json_object_set_new(j, "timeouts", json_integer((json_int_t)o->timeouts));
	json_object_set_new(j, "late", json_integer((json_int_t)o->late));
	json_object_set_new(j, "unsent", json_integer((json_int_t)o->unsent));
	json_object_set_new(j, "errors", o->errors_json ? json_deep_copy(o->errors_json) :
		json_null());
	json_object_set_new(j, "latency", lat_json(&o->lat));
	json_object_set_new(j, "driver_host_cpu_pct", o->driver_cpu_pct >= 0 ?
		jreal(o->driver_cpu_pct) : json_null());
	json_object_set_new(j, "p95_interval_ms", ci_json(o->p95_lo_ms, o->p95_hi_ms));
	json_object_set_new(j, "backlogged", json_integer((json_int_t)o->backlogged));
	json_object_set_new(j, "inflight_ceiling", o->inflight_ceiling ?
		json_integer(o->inflight_ceiling) : json_null());
	json_object_set_new(j, "driver_limited", json_boolean(o->driver_limited));
	json_object_set_new(j, "interrupted", json_boolean(o->interrupted));
	if (o->ndrv > 1) {
		/* Merged from several drivers: the pooled histogram, and each driver's own. */
		json_t *drv = json_array();
		json_object_set_new(j, "latency_hist_ns", o->hist_json ? json_incref(o->hist_json) :
			json_null());
		for (unsigned d = 0; d < o->ndrv; d++) {
			const struct fl_run_obs *x = &o->drv[d];
			json_t *dj = obs_json(x);
			json_object_set_new(dj, "driver", json_integer(d));
			json_object_set_new(dj, "seed", json_integer((json_int_t)x->seed));
			json_object_set_new(dj, "latency_hist_ns", x->hist_json ?
				json_incref(x->hist_json) : json_null());
			json_array_append_new(drv, dj);
		}
		json_object_set_new(j, "drivers", drv);
	}
	return j;
}

static json_t *step_json(const struct fl_run_step *st)
{
	json_t *j = json_object(), *inst = json_array();
	json_object_set_new(j, "step", json_integer(st->number));
	json_object_set_new(j, "phase", json_string(fl_search_phase_name(st->phase)));
	json_object_set_new(j, "requested_qps", jreal(st->sum.requested_qps));
	json_object_set_new(j, "requested_qps_per_instance", jreal(st->qps));
	json_object_set_new(j, "offered_qps", jreal(st->sum.offered_qps));
	json_object_set_new(j, "achieved_qps", jreal(st->sum.achieved_qps));
	lat_flat(j, &st->worst);
	json_object_set_new(j, "requests", json_integer((json_int_t)st->sum.requests));
	json_object_set_new(j, "errors", json_integer((json_int_t)st->sum.errors));
	json_object_set_new(j, "overloaded", json_integer((json_int_t)st->overloaded));
	json_object_set_new(j, "timeouts", json_integer((json_int_t)st->timeouts));
	json_object_set_new(j, "p95_interval_ms", ci_json(st->sum.p95_lo_ms, st->sum.p95_hi_ms));
	json_object_set_new(j, "latencies", json_integer((json_int_t)st->sum.latencies));
	json_object_set_new(j, "verdict", json_string(fl_verdict_name(st->verdict)));
	json_object_set_new(j, "pass", json_boolean(st->pass));
	json_object_set_new(j, "driver_limited", json_boolean(st->sum.driver_limited));
	json_object_set_new(j, "inflight_ceiling", st->inflight ? json_integer(st->inflight) :
		json_null());
	json_object_set_new(j, "why", json_string(st->why));
	json_object_set_new(j, "complete", json_boolean(st->complete));
	json_object_set_new(j, "warmup_s", jreal(st->warmup_s));
	json_object_set_new(j, "duration_s", jreal(st->duration_s));
	json_object_set_new(j, "started_s", jreal(st->started_s));
	json_object_set_new(j, "ended_s", jreal(st->ended_s));
	json_object_set_new(j, "host_cpu_util_pct", st->host_cpu_pct >= 0 ?
		jreal(st->host_cpu_pct) : json_null());
	for (unsigned i = 0; i < st->ninst; i++)
		json_array_append_new(inst, obs_json(&st->inst[i]));
	json_object_set_new(j, "instances", inst);
	return j;
}

/* cpu_ns per stage of after minus before, and each stage's share of their sum: the leaf's
 * "stages" and "cpu_share" blocks over an interval. NULL when a block is missing. */
static json_t *stages_delta(const json_t *before, const json_t *after)
{
	const json_t *sa = json_object_get(after, "stages");
	const json_t *sb = json_object_get(before, "stages");
	const char *name;
	const json_t *v;
	double total = 0;

	if (!json_is_object(sa))
		return NULL;
	json_t *stages = json_object(), *share = json_object();
	json_object_foreach((json_t *)sa, name, v) {
		const json_t *b = json_object_get(sb, name);
		double cpu = jnum(v, "cpu_ns") - jnum(b, "cpu_ns");
		double wall = jnum(v, "wall_ns") - jnum(b, "wall_ns");
		json_object_set_new(stages, name, json_pack("{sIsI}", "cpu_ns",
			jdelta(cpu), "wall_ns", jdelta(wall)));
		total += cpu;
	}
	json_object_foreach(stages, name, v) {
		double cpu = jnum(v, "cpu_ns");
		/* No CPU measured in the window: no share, rather than 0. */
		json_object_set_new(share, name, total > 0 ? jreal(cpu / total) : json_null());
	}
	json_t *out = json_object();
	json_object_set_new(out, "stages", stages);
	json_object_set_new(out, "cpu_share", share);
	double up = jnum(after, "uptime_s") - jnum(before, "uptime_s");
	json_object_set_new(out, "interval_s", jreal(up));
	const json_t *ra = json_object_get(after, "requests");
	const json_t *rb = json_object_get(before, "requests");
	if (json_is_object(ra)) {
		json_t *req = json_object();
		json_object_foreach((json_t *)ra, name, v)
			if (json_is_number(v))
				json_object_set_new(req, name, json_integer(jdelta(jnum(ra, name) -
					jnum(rb, name))));
		json_object_set_new(out, "requests", req);
	}
	return out;
}

/* The leaf's pmu section (leaf_stats.h): event keys, pools, and "unsupported: " prefix. */
static const char *const pmu_event_keys[] = { "instructions", "cycles", "l1i_misses",
	"itlb_misses", "branches", "branch_misses", "stalled_cycles_frontend" };
#define PMU_NEV (sizeof pmu_event_keys / sizeof pmu_event_keys[0])
enum { PMU_INS, PMU_CYC, PMU_L1I, PMU_ITLB, PMU_BR, PMU_BRMISS, PMU_FE };
static const char unsup[] = "unsupported: ";

/* "unsupported: " + fmt, as a JSON string. */
static json_t *pmu_unsupported(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *pmu_unsupported(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	size_t n = snprintf(buf, sizeof buf, "%s", unsup);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	va_end(ap);
	return json_string(buf);
}

/* Why an event of the leaf's stats is not a number: its "unsupported: ..." text without
 * the prefix, or a note when the key is missing. */
static const char *pmu_event_why(const json_t *a, const json_t *b, const char *key)
{
	const json_t *v = json_is_string(json_object_get(a, key)) ? json_object_get(a, key) :
		json_object_get(b, key);
	const char *w = json_string_value(v);
	if (w == NULL)
		return "missing from the leaf stats";
	return strncmp(w, unsup, sizeof unsup - 1) == 0 ? w + sizeof unsup - 1 : w;
}

/* One pool's counts over an interval (after minus before) and the metrics of those
 * deltas, in the leaf's own shape: a number where both snapshots counted, else the
 * "unsupported: why" string. The stats hold each event's enabled and running times summed
 * over the pool's threads, so the window's multiplexing factor can only be had per pool:
 * mux_scale_pool is the largest, over events, of delta enabled / delta running (a mean over
 * the threads weighted by their time, not the worst thread; the leaf's own mux_scale is). */
static json_t *pmu_pool_delta(const json_t *b, const json_t *a)
{
	json_t *o = json_object();
	double d[PMU_NEV];
	int ok[PMU_NEV];
	double scale = 0;

	copy_key(o, a, "threads");
	copy_key(o, a, "threads_counted");
	for (size_t e = 0; e < PMU_NEV; e++) {
		const char *k = pmu_event_keys[e];
		const json_t *va = json_object_get(a, k), *vb = json_object_get(b, k);
		ok[e] = json_is_number(va) && json_is_number(vb);
		d[e] = ok[e] ? json_number_value(va) - json_number_value(vb) : 0;
		if (ok[e] && d[e] < 0) {
			ok[e] = 0;
			json_object_set_new(o, k, pmu_unsupported("count went down between "
				"snapshots (leaf restarted?)"));
			continue;
		}
		json_object_set_new(o, k, ok[e] ? json_integer(jdelta(d[e])) :
			pmu_unsupported("%s", pmu_event_why(a, b, k)));
		if (!ok[e])
			continue;
		const json_t *ea = json_object_get(a, "enabled_ns"), *eb = json_object_get(b, "enabled_ns");
		const json_t *ra = json_object_get(a, "running_ns"), *rb = json_object_get(b, "running_ns");
		double den = jnum(ra, k) - jnum(rb, k), num = jnum(ea, k) - jnum(eb, k);
		if (den > 0 && num / den > scale)
			scale = num / den;
	}
	static const struct {
		const char *name;
		int num, den;
		double mul;
	} metrics[] = {
		{ "ipc", PMU_INS, PMU_CYC, 1 },
		{ "l1i_mpki", PMU_L1I, PMU_INS, 1000 },
		{ "itlb_mpki", PMU_ITLB, PMU_INS, 1000 },
		{ "branch_mpki", PMU_BRMISS, PMU_INS, 1000 },
		{ "branch_miss_pct", PMU_BRMISS, PMU_BR, 100 },
		{ "frontend_stall_cycle_ratio", PMU_FE, PMU_CYC, 1 },
	};
	for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
		int n = metrics[m].num, dn = metrics[m].den;
		json_t *v;
		if (!ok[n] || !ok[dn]) {
			int miss = ok[n] ? dn : n;
			v = pmu_unsupported("%s %s%s", pmu_event_keys[miss], unsup,
				pmu_event_why(a, b, pmu_event_keys[miss]));
		} else if (d[dn] <= 0) {
			v = pmu_unsupported("no %s counted in the window", pmu_event_keys[dn]);
		} else {
			v = json_real(metrics[m].mul * d[n] / d[dn]);
		}
		json_object_set_new(o, metrics[m].name, v);
	}
	json_object_set_new(o, "mux_scale_pool", scale > 0 ? json_real(scale) :
		pmu_unsupported("no event counted in the window"));
	return o;
}

/* The leaf's pmu section over an interval: per pool and total deltas when the leaf
 * counted, else {supported: false, why}. */
static json_t *pmu_delta(const json_t *before, const json_t *after)
{
	const json_t *pa = json_object_get(after, "pmu"), *pb = json_object_get(before, "pmu");
	if (!json_is_object(pa) || !json_is_object(pb))
		return json_pack("{sbss}", "supported", 0, "why", "the leaf stats have no pmu "
			"section");
	if (!json_is_true(json_object_get(pa, "supported")) ||
	    !json_is_true(json_object_get(pb, "supported"))) {
		const json_t *w = json_object_get(pa, "why");
		if (!json_is_string(w) || json_string_length(w) == 0)
			w = json_object_get(pb, "why");
		return json_pack("{sbss}", "supported", 0, "why", json_is_string(w) ?
			json_string_value(w) : "no reason given");
	}
	json_t *o = json_object();
	json_object_set_new(o, "supported", json_true());
	copy_key(o, pa, "user_only");
	static const char *const pools[] = { "ranker", "io", "fanout", "total" };
	for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
		const json_t *a = json_object_get(pa, pools[i]), *b = json_object_get(pb, pools[i]);
		if (json_is_object(a) && json_is_object(b))
			json_object_set_new(o, pools[i], pmu_pool_delta(b, a));
	}
	return o;
}

static json_t *leaf_stats_json(const struct fl_run_instance *in)
{
	json_t *j = json_object();
	if (in->own_leaf) {
		json_object_set_new(j, "source", json_string("file"));
		json_object_set_new(j, "file", json_string(in->leaf_stats_path));
	} else {
		json_object_set_new(j, "source", json_string("wire"));
		json_object_set_new(j, "address", json_string(in->leaf_addr));
		if (in->leaf_remote_err[0])
			json_object_set_new(j, "last_error", json_string(in->leaf_remote_err));
	}
	if (in->leaf_stats_pre != NULL && in->leaf_stats_post != NULL) {
		json_t *d = stages_delta(in->leaf_stats_pre, in->leaf_stats_post);
		if (d != NULL)
			json_object_set_new(d, "pmu", pmu_delta(in->leaf_stats_pre,
				in->leaf_stats_post));
		json_object_set_new(j, "final_window", d ? d : json_null());
	}
	const json_t *whole = in->leaf_stats_end ? in->leaf_stats_end :
		in->leaf_stats_post ? in->leaf_stats_post : in->leaf_stats_pre;
	if (whole != NULL) {
		json_t *w = json_object();
		copy_key(w, whole, "uptime_s");
		copy_key(w, whole, "stages");
		copy_key(w, whole, "cpu_share");
		copy_key(w, whole, "requests");
		copy_key(w, whole, "pools");
		copy_key(w, whole, "extract_calls");
		copy_key(w, whole, "pmu");
		json_object_set_new(j, "whole_run", w);
		copy_key(j, whole, "cpu_clock");
		copy_key(j, whole, "ready_ms");
		const json_t *c = json_object_get(whole, "config");
		if (json_is_object(c))
			json_object_set(j, "leaf_config", (json_t *)c);
		const json_t *f = json_object_get(whole, "fanout");
		if (json_is_object(f)) {
			json_t *fo = json_object();
			static const char *const keys[] = { "enabled", "calls", "ok", "errors",
				"timeouts", "reconnects", "cipher" };
			for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
				copy_key(fo, f, keys[k]);
			json_object_set_new(w, "fanout", fo);
		}
	}
	return j;
}

static json_t *cpus_json(const struct fl_cpus *c)
{
	char buf[4096];
	if (c->n == 0)
		return json_null();
	fl_cpus_format(c, buf, sizeof buf);
	return json_string(buf);
}

static json_t *proc_json(const struct fl_proc *p, int own)
{
	char how[256];
	if (!own)
		return json_null();
	fl_proc_describe(p, how, sizeof how);
	return json_pack("{sIssss}", "pid", (json_int_t)p->pid, "state", how, "log",
		p->log_path);
}

/* A remote mock's stats at the end of the run, read over its port. */
static json_t *mock_remote_json(const struct fl_run_instance *in)
{
	json_t *j = json_object();
	json_object_set_new(j, "source", json_string("wire"));
	json_object_set_new(j, "address", json_string(in->mock_addr));
	if (in->mock_remote_err[0])
		json_object_set_new(j, "last_error", json_string(in->mock_remote_err));
	json_object_set_new(j, "end", in->mock_stats_end ? json_deep_copy(in->mock_stats_end) :
		json_null());
	return j;
}

/* One remote host's clock check (run_remote.h), or NULL when there is no such host. */
static json_t *clock_json(const char *role, unsigned i, const char *addr,
	const struct fl_clock_sample *c, double bound_ms, enum fl_clock_verdict *worst,
	const char *why_unknown)
{
	enum fl_clock_verdict v = fl_clock_judge(c, bound_ms);
	if (v > *worst)
		*worst = v;
	json_t *j = json_pack("{sssisssI}", "role", role, "instance", (int)i, "address", addr,
		"samples", (json_int_t)c->samples);
	json_object_set_new(j, "offset_ms", c->samples ? jreal(c->offset_ms) : json_null());
	json_object_set_new(j, "uncertainty_ms", c->samples ? jreal(c->uncert_ms) :
		json_null());
	json_object_set_new(j, "rtt_ms", c->samples ? jreal(c->rtt_ms) : json_null());
	json_object_set_new(j, "verdict", json_string(fl_clock_verdict_name(v)));
	if (c->samples == 0 && why_unknown && why_unknown[0])
		json_object_set_new(j, "unknown_because", json_string(why_unknown));
	return j;
}

/* Every remote host's clock against this one's (the driver's), judged against the
 * bound; within_bound is false when one is surely beyond, null when none was read or
 * one cannot be told apart from the bound. */
static json_t *clocks_json(const struct fl_run *r)
{
	double bound = r->cfg.clock_bound_ms;
	enum fl_clock_verdict worst = FL_CLOCK_OK;
	json_t *hosts = json_array();
	for (unsigned i = 0; i < r->ninst; i++) {
		const struct fl_run_instance *in = &r->inst[i];
		if (!in->own_leaf)
			json_array_append_new(hosts, clock_json("leaf", i, in->leaf_addr,
				&in->leaf_clock, bound, &worst, in->leaf_remote_err));
		if (!in->own_mock && in->mock_addr[0])
			json_array_append_new(hosts, clock_json("mock", i, in->mock_addr,
				&in->mock_clock, bound, &worst, in->mock_remote_err));
		for (unsigned d = 0; d < in->ndrv; d++) {
			const struct fl_run_driver *dv = &in->drv[d];
			if (!dv->host[0])
				continue;
			json_t *h = clock_json("driver", i, dv->host, &dv->clock, bound, &worst,
				dv->clock_err);
			json_object_set_new(h, "driver", json_integer(d));
			json_array_append_new(hosts, h);
		}
	}
	json_t *within = json_array_size(hosts) == 0 ? json_true() :
		worst == FL_CLOCK_BEYOND ? json_false() : worst == FL_CLOCK_OK ? json_true() :
		json_null();
	return json_pack("{sssososo}", "reference", "this host (frontload run and the drivers)",
		"bound_ms", jreal(bound), "within_bound", within, "hosts", hosts);
}

static json_t *instance_json(const struct fl_run *r, unsigned i)
{
	const struct fl_run_instance *in = &r->inst[i];
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_integer(i));
	json_object_set_new(j, "cpus", in->placed ? cpus_json(&in->cpus) : json_null());
	json_object_set_new(j, "leaf_cpus", cpus_json(&in->leaf_cpus));
	json_object_set_new(j, "mock_cpus", cpus_json(&in->mock_cpus));
	json_object_set_new(j, "driver_cpus", cpus_json(&in->driver_cpus));
	json_object_set_new(j, "leaf", json_string(in->leaf_addr));
	json_object_set_new(j, "mock", in->mock_addr[0] ? json_string(in->mock_addr) :
		json_null());
	json_object_set_new(j, "leaf_process", proc_json(&in->leaf, in->own_leaf));
	json_object_set_new(j, "mock_process", proc_json(&in->mock, in->own_mock));
	json_object_set_new(j, "driver_process", in->ndrv ? proc_json(&in->drv[0].proc, 1) :
		json_null());
	if (in->ndrv > 1) {
		json_t *drv = json_array();
		for (unsigned d = 0; d < in->ndrv; d++)
			json_array_append_new(drv, json_pack("{sisIsoso}", "driver", (int)d, "seed",
				(json_int_t)in->drv[d].seed, "host", in->drv[d].host[0] ?
				json_string(in->drv[d].host) : json_null(), "process",
				proc_json(&in->drv[d].proc, 1)));
		json_object_set_new(j, "drivers", drv);
	}
	if (r->final_step >= 0) {
		const struct fl_run_step *st = &r->steps[r->final_step];
		const struct fl_run_obs *o = &st->inst[i];
		json_object_set_new(j, "final_requested_qps", jreal(o->requested_qps));
		json_object_set_new(j, "final_achieved_qps", jreal(o->achieved_qps));
		json_object_set_new(j, "final_offered_qps", jreal(o->offered_qps));
		json_object_set_new(j, "final_latency_msec", jreal(o->lat.p95));
		lat_flat(j, &o->lat);
		json_object_set_new(j, "errors", o->errors_json ? json_deep_copy(o->errors_json) :
			json_null());
		json_object_set_new(j, "overloaded", json_integer((json_int_t)o->overloaded));
		json_object_set_new(j, "timeouts", json_integer((json_int_t)o->timeouts));
	}
	json_object_set_new(j, "leaf_stats", leaf_stats_json(in));
	if (in->own_mock)
		json_object_set_new(j, "mock_stats_file", json_string(in->mock_stats_path));
	else if (in->mock_addr[0])
		json_object_set_new(j, "mock_stats", mock_remote_json(in));
	return j;
}

static json_t *config_json(const struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	json_t *j = json_object(), *fixed = json_array();
	for (unsigned i = 0; i < c->nfixed; i++)
		json_array_append_new(fixed, jreal(c->fixed_qps[i]));
	json_object_set_new(j, "sla_ms", jreal(c->search.sla_p95_ms));
	json_object_set_new(j, "start_qps", jreal(c->search.start_qps));
	json_object_set_new(j, "max_qps", jreal(c->search.max_qps));
	json_object_set_new(j, "growth", jreal(c->search.growth));
	json_object_set_new(j, "tolerance_pct", jreal(c->search.tolerance * 100));
	json_object_set_new(j, "max_steps", json_integer(c->search.max_steps));
	json_object_set_new(j, "max_finals", json_integer(c->search.max_finals));
	json_object_set_new(j, "max_step_seconds", jreal(c->search.max_step_s));
	json_object_set_new(j, "probe_seconds", jreal(c->search.probe_s));
	json_object_set_new(j, "p95_interval_target_pct", jreal(c->search.ci_pct));
	json_object_set_new(j, "min_achieved_pct", jreal(c->search.min_achieved * 100));
	json_object_set_new(j, "max_error_pct", jreal(c->search.max_error_rate * 100));
	json_object_set_new(j, "warmup_seconds", jreal(c->warmup_s));
	json_object_set_new(j, "step_seconds", jreal(c->search.step_s));
	json_object_set_new(j, "final_seconds", jreal(c->search.final_s));
	json_object_set_new(j, "qps", fixed);
	json_object_set_new(j, "duration", jreal(c->duration_s));
	json_object_set_new(j, "quick", json_boolean(c->quick));
	json_object_set_new(j, "instances", json_integer(c->instances));
	json_object_set_new(j, "drivers", json_integer(c->drivers));
	json_object_set_new(j, "pin", json_boolean(c->pin));
	json_object_set_new(j, "leaf", c->leaf ? json_string(c->leaf) : json_null());
	json_object_set_new(j, "mock", c->mock ? json_string(c->mock) : json_null());
	json_object_set_new(j, "seed", json_integer((json_int_t)c->seed));
	json_object_set_new(j, "rpc_fanout_scale", c->rpc_fanout_scale >= 0 ?
		jreal(c->rpc_fanout_scale) : json_null());
	json_object_set_new(j, "extractors_per_story", c->extractors_per_story >= 0 ?
		json_integer(c->extractors_per_story) : json_null());
	json_object_set_new(j, "active_copies", c->active_copies >= 0 ?
		json_integer(c->active_copies) : json_null());
	json_object_set_new(j, "active_functions", c->active_functions >= 0 ?
		json_integer(c->active_functions) : json_null());
	json_object_set_new(j, "dispatch", c->dispatch ? json_string(c->dispatch) : json_null());
	json_object_set_new(j, "zipf_alpha", c->zipf_alpha >= 0 ? json_real(c->zipf_alpha) :
		json_null());
	json_object_set_new(j, "tls", json_boolean(c->tls));
	json_object_set_new(j, "tls_dir", c->tls_dir ? json_string(c->tls_dir) : json_null());
	json_object_set_new(j, "trace", json_boolean(c->trace));
	json_object_set_new(j, "leaf_args", c->leaf_args ? json_string(c->leaf_args) :
		json_null());
	json_object_set_new(j, "mock_args", c->mock_args ? json_string(c->mock_args) :
		json_null());
	json_object_set_new(j, "driver_args", c->driver_args ? json_string(c->driver_args) :
		json_null());
	json_object_set_new(j, "driver_ssh", c->driver_ssh ? json_string(c->driver_ssh) :
		json_null());
	json_object_set_new(j, "ready_timeout_seconds", jreal(c->ready_timeout_s));
	json_object_set_new(j, "clock_bound_ms", jreal(c->clock_bound_ms));
	return j;
}

static json_t *host_json(const struct fl_run *r)
{
	const struct fl_host_info *h = &r->host;
	return json_pack("{sssssssssssIsIsIsIsI}", "cpu_model", h->cpu_model,
		"cpu_architecture", h->architecture, "kernel_version", h->kernel,
		"kernel_build", h->kernel_version, "hostname", h->hostname,
		"num_logical_cpus", (json_int_t)h->logical_cpus,
		"num_cpus_usable", (json_int_t)h->usable_cpus,
		"physical_cores", (json_int_t)h->cores,
		"threads_per_core", (json_int_t)h->threads_per_core,
		"mem_total_kib", (json_int_t)h->mem_total_kib);
}

static void utc_string(time_t t, char *out, size_t len)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A rate per instance, or null when none (0). */
static json_t *jrate(double q)
{
	return q > 0 ? jreal(q) : json_null();
}

/* The search's state and capacity estimate (rates per instance). */
static json_t *search_json(const struct fl_search *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "steps", json_integer(s->nprobes));
	json_object_set_new(j, "capacity_probes", json_integer(s->cap_probes));
	json_object_set_new(j, "judged_steps", json_integer(s->judged_steps));
	json_object_set_new(j, "final_windows", json_integer(s->finals));
	json_object_set_new(j, "capacity_qps", jrate(s->capacity_qps));
	json_object_set_new(j, "capacity_saturated", json_boolean(s->capacity_saturated));
	json_object_set_new(j, "capacity_reprobed", json_boolean(s->reprobed));
	json_object_set_new(j, "lo_qps", jrate(s->lo));
	json_object_set_new(j, "hi_qps", jrate(s->hi));
	json_object_set_new(j, "final_qps", jrate(s->final_qps));
	json_object_set_new(j, "sla_bound_qps", jrate(s->converged ? s->sla_bound_qps : 0));
	json_object_set_new(j, "lower_bound_qps", jrate(s->converged ? 0 :
		s->lower_bound_qps));
	return j;
}

static json_t *result_json(const struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	json_t *j = json_object(), *steps = json_array(), *inst = json_array(), *cmd = json_array();
	char when[64];
	time_t now = time(NULL);
	int fixed = c->nfixed > 0;

	for (int i = 0; i < r->argc; i++)
		json_array_append_new(cmd, json_string(r->argv[i]));
	json_object_set_new(j, "benchmark_name", json_string("frontload_run"));
	json_object_set_new(j, "run_id", json_string(r->run_id));
	json_object_set_new(j, "status", json_string(fl_run_status_name(r->status)));
	json_object_set_new(j, "status_reason", json_string(r->status_reason));
	json_object_set_new(j, "timestamp", json_integer((json_int_t)r->started_wall));
	utc_string(r->started_wall, when, sizeof when);
	json_object_set_new(j, "started_utc", json_string(when));
	utc_string(now, when, sizeof when);
	json_object_set_new(j, "updated_utc", json_string(when));
	json_object_set_new(j, "elapsed_s", jreal(fl_run_now() - r->t0));
	json_object_set_new(j, "command", cmd);
	json_object_set_new(j, "is_fixed_qps", json_boolean(fixed));
	json_object_set_new(j, "sla_p95_ms", jreal(c->search.sla_p95_ms));
	json_object_set_new(j, "target_latency_msec", jreal(c->search.sla_p95_ms));
	json_object_set_new(j, "target_percentile", json_string("95p"));

	/* The search outcome (null in fixed mode or while it runs). */
	if (!fixed && r->search.state == FL_SEARCH_DONE) {
		const struct fl_search *s = &r->search;
		json_object_set_new(j, "converged", json_boolean(s->converged));
		json_object_set_new(j, "converged_reason", json_string(s->reason));
		json_object_set_new(j, "sla_bound_qps", s->converged && s->sla_bound_qps > 0 ?
			jreal(s->sla_bound_qps * r->ninst) : json_null());
		json_object_set_new(j, "lower_bound_qps", !s->converged && s->lower_bound_qps > 0 ?
			jreal(s->lower_bound_qps * r->ninst) : json_null());
	} else {
		json_object_set_new(j, "converged", json_null());
		json_object_set_new(j, "converged_reason", json_string(fixed ?
			"fixed rates (--qps): no search" : "search not finished"));
		json_object_set_new(j, "sla_bound_qps", json_null());
		json_object_set_new(j, "lower_bound_qps", json_null());
	}

	/* The final window (fixed mode: the last rate), DCPerf names first. */
	if (r->final_step >= 0) {
		const struct fl_run_step *st = &r->steps[r->final_step];
		json_object_set_new(j, "final_requested_qps", jreal(st->sum.requested_qps));
		json_object_set_new(j, "final_achieved_qps", jreal(st->sum.achieved_qps));
		json_object_set_new(j, "final_offered_qps", jreal(st->sum.offered_qps));
		json_object_set_new(j, "final_latency_msec", jreal(st->worst.p95));
		lat_flat(j, &st->worst);
		json_object_set_new(j, "final_window_s", jreal(st->inst[0].window_s));
		json_object_set_new(j, "final_pass", json_boolean(st->pass));
		json_object_set_new(j, "final_verdict", json_string(fl_verdict_name(st->verdict)));
		json_object_set_new(j, "final_p95_interval_ms", ci_json(st->sum.p95_lo_ms,
			st->sum.p95_hi_ms));
		json_object_set_new(j, "final_why", json_string(st->why));
		json_object_set_new(j, "final_complete", json_boolean(st->complete));
		json_object_set_new(j, "host_cpu_util_pct", r->final_host_cpu_pct >= 0 ?
			jreal(r->final_host_cpu_pct) : json_null());
		json_t *errs = json_object();
		json_object_set_new(errs, "total", json_integer((json_int_t)st->sum.errors));
		json_object_set_new(errs, "overloaded", json_integer((json_int_t)st->overloaded));
		json_object_set_new(errs, "timeouts", json_integer((json_int_t)st->timeouts));
		json_object_set_new(errs, "requests", json_integer((json_int_t)st->sum.requests));
		json_object_set_new(j, "errors", errs);
	} else {
		static const char *const keys[] = { "final_requested_qps", "final_achieved_qps",
			"final_offered_qps", "final_latency_msec", "p50_ms", "p90_ms", "p95_ms",
			"p99_ms", "p99_9_ms", "max_ms", "mean_ms", "final_window_s", "final_pass",
			"final_verdict", "final_p95_interval_ms", "host_cpu_util_pct", "errors" };
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			json_object_set_new(j, keys[k], json_null());
	}
	json_object_set_new(j, "spawned_instances", json_integer(r->ninst));
	unsigned ok = 0;
	for (unsigned i = 0; i < r->ninst; i++) {
		json_array_append_new(inst, instance_json(r, i));
		ok += r->final_step >= 0 && !r->steps[r->final_step].inst[i].interrupted &&
			r->steps[r->final_step].inst[i].window_s > 0;
	}
	json_object_set_new(j, "successful_instances", json_integer(ok));
	json_object_set_new(j, "instances", inst);

	json_object_set_new(j, "search", fixed ? json_null() : search_json(&r->search));
	for (size_t i = 0; i < r->nsteps; i++)
		json_array_append_new(steps, step_json(&r->steps[i]));
	json_object_set_new(j, "steps", steps);
	json_object_set_new(j, "config", config_json(r));
	json_object_set_new(j, "clocks", clocks_json(r));
	json_object_set_new(j, "build", r->build ? json_deep_copy(r->build) : json_null());
	json_object_set_new(j, "machines", json_pack("[o]", host_json(r)));
	json_t *files = json_object();
	json_object_set_new(files, "steps_csv", json_string("steps.csv"));
	json_object_set_new(files, "trace_csv", c->trace ? json_string(c->drivers > 1 ?
		"trace-<instance>.<driver>.csv" : r->ninst > 1 ? "trace-<instance>.csv" :
		"trace.csv") : json_null());
	json_object_set_new(j, "files", files);
	return j;
}

/* Write through a temporary and rename (osfile.h). */
static int write_atomic(const char *path, int (*emit)(FILE *, const struct fl_run *),
	const struct fl_run *r)
{
	struct fl_atomic_file a;

	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0)
		return -1;
	return fl_atomic_commit(&a, emit(a.f, r) == 0, NULL, 0);
}

static int emit_json(FILE *f, const struct fl_run *r)
{
	json_t *j = result_json(r);
	int rc = j && json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0 &&
		fputc('\n', f) != EOF ? 0 : -1;
	json_decref(j);
	return rc;
}

/* A latency for steps.csv: empty when not measured. */
static void csv_ms(char *out, size_t n, double v)
{
	if (isfinite(v))
		snprintf(out, n, "%.3f", v);
	else if (n > 0)
		out[0] = 0;
}

static int emit_csv(FILE *f, const struct fl_run *r)
{
	fprintf(f, "step,phase,requested_qps,achieved_qps,p50_ms,p95_ms,p99_ms,errors,"
		"overloaded,pass,offered_qps,timeouts,host_cpu_pct,complete,p95_lo_ms,p95_hi_ms,"
		"latencies,verdict,driver_limited,inflight_ceiling,duration_s,why\n");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct fl_run_step *st = &r->steps[i];
		char why[340];
		size_t n = 0;
		/* CSV-quote the reason (it may hold commas). */
		for (const char *p = st->why; *p && n + 2 < sizeof why; p++)
			why[n++] = *p == '"' ? '\'' : *p;
		why[n] = 0;
		char lo[32] = "", hi[32] = "", cpu[32] = "", ceil[32] = "", p50[32], p95[32],
			p99[32];
		csv_ms(p50, sizeof p50, st->worst.p50);
		csv_ms(p95, sizeof p95, st->worst.p95);
		csv_ms(p99, sizeof p99, st->worst.p99);
		/* Empty, not 0, where nothing was measured. */
		if (st->sum.p95_lo_ms >= 0 && st->sum.p95_hi_ms >= 0) {
			snprintf(lo, sizeof lo, "%.3f", st->sum.p95_lo_ms);
			snprintf(hi, sizeof hi, "%.3f", st->sum.p95_hi_ms);
		}
		if (st->host_cpu_pct >= 0)
			snprintf(cpu, sizeof cpu, "%.1f", st->host_cpu_pct);
		if (st->inflight)
			snprintf(ceil, sizeof ceil, "%u", st->inflight);
		fprintf(f, "%u,%s,%.3f,%.3f,%s,%s,%s,%llu,%llu,%d,%.3f,%llu,%s,%d,%s,%s,%llu,"
			"%s,%d,%s,%.3f,\"%s\"\n",
			st->number, fl_search_phase_name(st->phase), st->sum.requested_qps,
			st->sum.achieved_qps, p50, p95, p99,
			(unsigned long long)st->sum.errors, (unsigned long long)st->overloaded,
			st->pass, st->sum.offered_qps, (unsigned long long)st->timeouts,
			cpu, st->complete, lo, hi, (unsigned long long)st->sum.latencies,
			fl_verdict_name(st->verdict), st->sum.driver_limited, ceil, st->duration_s,
			why);
	}
	return ferror(f) ? -1 : 0;
}

int fl_result_write(const struct fl_run *r, char *err, size_t errlen)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/result.json", r->dir);
	if (write_atomic(path, emit_json, r) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/steps.csv", r->dir);
	if (write_atomic(path, emit_csv, r) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
