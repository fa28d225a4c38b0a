/* run_obs.c: the driver's step lines in: parsed into observations, merged across the
 * drivers of an instance, and summed across instances into a step (run_result.h). */
#define _GNU_SOURCE
#include "hist.h"
#include "hist_json.h"
#include "quantile_ci.h"
#include "run_json.h"
#include "run_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#define OBS_BATCH_MIN_OK 20.0  /* a second's p95 needs this many OK replies to mean much */

/* The p95's batch-means half-width over the whole seconds of the measured window
 * [warm, warm + dur) in the driver's per-second trace (by completion time); -1 when it
 * cannot be had. *nb gets the seconds used. */
static double obs_batch_half(const json_t *trace, double warm, double dur, unsigned *nb)
{
	double x[FL_RUN_MAX_BATCHES], ok_sum = 0;
	unsigned b = 0;
	size_t i;
	const json_t *row;

	*nb = 0;
	if (!json_is_array(trace) || !(dur > 0))
		return -1;
	json_array_foreach(trace, i, row) {
		const json_t *pj = json_object_get(row, "p95_ms");  /* null: no OK reply */
		double sec = jnum(row, "second");
		if (!(sec >= warm - 1e-9 && sec + 1 <= warm + dur + 1e-9) || !json_is_number(pj))
			continue;
		double p = json_number_value(pj);
		if (b == FL_RUN_MAX_BATCHES)
			break;
		ok_sum += (double)jcount(row, "ok");
		x[b++] = p;
	}
	if (b < FL_CI_MIN_BATCHES || ok_sum / b < OBS_BATCH_MIN_OK)
		return -1;
	*nb = b;
	return fl_ci_batch_half(x, b);
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
	o->p95_batch_half_ms = obs_batch_half(json_object_get(j, "trace"), jnum(j, "warmup_s"),
		o->window_s, &o->p95_batches);
	o->backlogged = jcount(j, "backlogged");
	o->inflight_ceiling = (unsigned)jcount(j, "inflight_ceiling");
	const json_t *cpu = json_object_get(j, "host_cpu_pct");
	o->driver_cpu_pct = json_is_number(cpu) ? json_number_value(cpu) : -1;
	o->driver_limited = json_is_true(json_object_get(j, "driver_limited"));
	o->interrupted = json_is_true(json_object_get(j, "interrupted"));
	const json_t *ms = json_object_get(j, "miss_stop");
	o->miss_stopped = json_is_true(json_object_get(ms, "stopped"));
	o->miss_stop_json = json_is_object(ms) ? json_deep_copy(ms) : NULL;
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
	json_decref(o->miss_stop_json);
	o->miss_stop_json = NULL;
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
	o->miss_stopped |= d->miss_stopped;
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
	o->p95_batch_half_ms = -1;
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
	/* Each driver's seconds hold 1/ndrv of the replies, so its batch p95s scatter more:
	 * the widest of theirs is a conservative bound for the merged window. */
	for (unsigned d = 0; d < o->ndrv; d++)
		if (o->drv[d].p95_batch_half_ms > o->p95_batch_half_ms) {
			o->p95_batch_half_ms = o->drv[d].p95_batch_half_ms;
			o->p95_batches = o->drv[d].p95_batches;
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

void fl_result_step_aggregate(struct fl_run_step *st, int batch_means)
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
		/* Judged on the worst instance: the largest lower end and the largest upper
		 * (with batch_means, each widened to p95 +- its batch half-width first). */
		double lo = o->p95_lo_ms, hi = o->p95_hi_ms;
		ci_known &= lo >= 0 && hi >= 0;
		if (batch_means && o->p95_batch_half_ms >= 0 && isfinite(o->lat.p95) && lo >= 0 &&
		    hi >= 0) {
			lo = fmax(0, fmin(lo, o->lat.p95 - o->p95_batch_half_ms));
			hi = fmax(hi, o->lat.p95 + o->p95_batch_half_ms);
		}
		s->p95_lo_ms = fmax(s->p95_lo_ms, lo);
		s->p95_hi_ms = fmax(s->p95_hi_ms, hi);
		if (o->lat.count < s->latencies)
			s->latencies = o->lat.count;
		s->driver_limited |= o->driver_limited;
		s->miss_certain |= o->miss_stopped;
		if (o->miss_stopped && o->window_s > 0)
			s->window_s = fmin(s->window_s, o->window_s);  /* what it measured */
		if (o->interrupted || o->window_s <= 0)
			st->complete = 0;
	}
	s->p95_ms = st->worst.p95;
	/* A sum over instances one of which measured no window is no rate: unknown, not 0. */
	for (unsigned i = 0; i < st->ninst; i++)
		if (st->inst[i].window_s <= 0)
			s->achieved_qps = s->offered_qps = NAN;
	if (!ci_known)
		s->p95_lo_ms = s->p95_hi_ms = -1;
	if (s->latencies == UINT64_MAX)
		s->latencies = 0;
}
