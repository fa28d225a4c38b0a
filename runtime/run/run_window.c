/* run_window.c: the leaf's own stats in result.json: stage CPU, request counts and PMU
 * counts over the final window (after minus before), and the whole run's figures. */
#define _GNU_SOURCE
#include "run_json.h"
#include "run_window.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

json_t *fl_run_leaf_stats_json(const struct fl_run_instance *in)
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
