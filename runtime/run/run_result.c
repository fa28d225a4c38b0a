/* run_result.c: result.json and steps.csv out, written after every step. The driver's
 * lines come in through run_obs.c; the leaf's stats block is run_window.c's. */
#define _GNU_SOURCE
#include "osfile.h"
#include "run_json.h"
#include "run_result.h"
#include "run_window.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


json_t *fl_result_load_json(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	return j;
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
	json_object_set_new(j, "p95_batch_halfwidth_ms", o->p95_batch_half_ms >= 0 ?
		jreal(o->p95_batch_half_ms) : json_null());
	json_object_set_new(j, "p95_batches", o->p95_batch_half_ms >= 0 ?
		json_integer(o->p95_batches) : json_null());
	json_object_set_new(j, "backlogged", json_integer((json_int_t)o->backlogged));
	json_object_set_new(j, "inflight_ceiling", o->inflight_ceiling ?
		json_integer(o->inflight_ceiling) : json_null());
	json_object_set_new(j, "driver_limited", json_boolean(o->driver_limited));
	json_object_set_new(j, "interrupted", json_boolean(o->interrupted));
	json_object_set_new(j, "miss_stop", o->miss_stop_json ?
		json_deep_copy(o->miss_stop_json) : json_null());
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
	/* An unjudged step (a capacity probe, a driver-limited step) neither passed nor
	 * failed: null, as steps.csv leaves it empty. */
	json_object_set_new(j, "pass", st->verdict == FL_VERDICT_UNJUDGED ? json_null() :
		json_boolean(st->pass));
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
		json_object_set_new(j, "final_achieved_qps", o->window_s > 0 ?
			jreal(o->achieved_qps) : json_null());
		json_object_set_new(j, "final_offered_qps", o->window_s > 0 ?
			jreal(o->offered_qps) : json_null());
		json_object_set_new(j, "final_latency_msec", jreal(o->lat.p95));
		lat_flat(j, &o->lat);
		json_object_set_new(j, "errors", o->errors_json ? json_deep_copy(o->errors_json) :
			json_null());
		json_object_set_new(j, "overloaded", json_integer((json_int_t)o->overloaded));
		json_object_set_new(j, "timeouts", json_integer((json_int_t)o->timeouts));
	}
	json_object_set_new(j, "leaf_stats", fl_run_leaf_stats_json(in));
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
	json_object_set_new(j, "profile", c->profile ? json_string(c->profile_path) :
		json_null());
	{
		/* What the profile held when the run started (it may change later). */
		json_t *p = c->profile ? json_load_file(c->profile_path, 0, NULL) : NULL;
		json_object_set_new(j, "profile_leaf_args", p && json_object_get(p, "leaf_args") ?
			json_deep_copy(json_object_get(p, "leaf_args")) : json_null());
		json_decref(p);
	}
	json_object_set_new(j, "mock_args", c->mock_args ? json_string(c->mock_args) :
		json_null());
	json_object_set_new(j, "arrival", json_string(c->arrival));
	json_object_set_new(j, "draws", json_string(c->draws));
	json_object_set_new(j, "batch_means", json_boolean(c->batch_means));
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
	json_object_set_new(j, "saturation_qps", jrate(s->saturation_qps));
	json_object_set_new(j, "final_cap_qps", jreal(fl_search_cap(s)));  /* INFINITY: null */
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
	/* Only a run that did not complete, or completed with a caveat, has a reason to give. */
	json_object_set_new(j, "status_reason", r->status_reason[0] ?
		json_string(r->status_reason) : json_null());
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
		char ach[32] = "", off[32] = "", pass[4] = "";
		if (st->verdict != FL_VERDICT_UNJUDGED)
			snprintf(pass, sizeof pass, "%d", st->pass);
		if (isfinite(st->sum.achieved_qps))
			snprintf(ach, sizeof ach, "%.3f", st->sum.achieved_qps);
		if (isfinite(st->sum.offered_qps))
			snprintf(off, sizeof off, "%.3f", st->sum.offered_qps);
		fprintf(f, "%u,%s,%.3f,%s,%s,%s,%s,%llu,%llu,%s,%s,%llu,%s,%d,%s,%s,%llu,"
			"%s,%d,%s,%.3f,\"%s\"\n",
			st->number, fl_search_phase_name(st->phase), st->sum.requested_qps,
			ach, p50, p95, p99,
			(unsigned long long)st->sum.errors, (unsigned long long)st->overloaded,
			pass, off, (unsigned long long)st->timeouts,
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
