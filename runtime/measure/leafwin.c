/* leafwin.c: a measured window from two leaf stats snapshots and a driver step. */
#define _GNU_SOURCE
#include "leafwin.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The value at dotted path ("requests.ok") of o, or NULL. */
static json_t *win_get(json_t *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static long long win_int(json_t *o, const char *path)
{
	json_t *v = win_get(o, path);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

long long fm_win_delta(json_t *before, json_t *after, const char *path)
{
	long long a = win_int(before, path), b = win_int(after, path);
	return a < 0 || b < 0 ? -1 : b - a;
}

static void win_add(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void win_add(char *why, size_t len, const char *fmt, ...)
{
	size_t l = strlen(why);
	va_list ap;
	if (l && l + 2 < len) {
		snprintf(why + l, len - l, "; ");
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + l, len - l, fmt, ap);
	va_end(ap);
}

/* Driver counters that must be 0 in a whole window. */
static const char *const drv_zero[] = { "timeouts", "overloaded", "unsent", "errors.total" };

/* Leaf counters whose change over the window must be 0. */
static const char *const leaf_zero[] = {
	"requests.overloaded", "requests.bad_request", "requests.denied", "requests.stale",
	"requests.internal", "requests.dropped_disconnected", "deadline.skipped_total",
	"deadline.queue_wait_shed", "fanout.errors", "fanout.timeouts",
};

int fm_window_whole(json_t *step, json_t *before, json_t *after, char *why, size_t len)
{
	why[0] = '\0';
	long long sent = win_int(step, "sent");
	if (sent <= 0)
		win_add(why, len, "driver: %s", sent < 0 ? "no sent count" : "sent nothing");
	for (size_t i = 0; i < sizeof drv_zero / sizeof drv_zero[0]; i++) {
		long long v = win_int(step, drv_zero[i]);
		if (v != 0)
			win_add(why, len, "driver: %s %lld", drv_zero[i], v);
	}
	long long ok = win_int(step, "ok"), done = win_int(step, "completed");
	if (sent > 0 && (ok != sent || done != sent))
		win_add(why, len, "driver: %lld sent, %lld completed, %lld ok", sent, done, ok);
	static const char *const counts[] = { "requests.received", "requests.replied",
		"requests.ok" };
	for (size_t i = 0; i < 3; i++) {
		long long d = fm_win_delta(before, after, counts[i]);
		if (d != sent)
			win_add(why, len, "leaf: %s %lld, driver sent %lld", counts[i], d, sent);
	}
	for (size_t i = 0; i < sizeof leaf_zero / sizeof leaf_zero[0]; i++) {
		long long d = fm_win_delta(before, after, leaf_zero[i]);
		if (d != 0)
			win_add(why, len, "leaf: %s %s%lld", leaf_zero[i], d < 0 ? "unreadable " :
				"+", d < 0 ? 0 : d);
	}
	return why[0] == '\0';
}

static json_t *win_share(long long part, long long total)
{
	return total > 0 && part >= 0 ? json_real((double)part / (double)total) : json_null();
}

json_t *fm_stage_window(json_t *before, json_t *after)
{
	json_t *o = json_object(), *pools = json_object();
	json_t *st = json_object_get(after, "stages"), *v;
	const char *k;
	long long sum = 0, proc = 0;
	int proc_ok = 1;
	char path[128];

	json_object_foreach(st, k, v) {
		snprintf(path, sizeof path, "stages.%s.cpu_ns", k);
		long long d = fm_win_delta(before, after, path);
		if (d > 0)
			sum += d;
	}
	json_object_foreach(st, k, v) {
		snprintf(path, sizeof path, "stages.%s.cpu_ns", k);
		long long d = fm_win_delta(before, after, path);
		json_object_set_new(o, k, json_pack("{s:o,s:o}", "cpu_ns", d >= 0 ?
			json_integer(d) : json_null(), "share", win_share(d, sum)));
	}
	static const char *const pl[] = { "ranker", "io", "fanout" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "pools.%s.cpu_ns", pl[i]);
		long long d = fm_win_delta(before, after, path);
		json_object_set_new(pools, pl[i], d >= 0 ? json_integer(d) : json_null());
		if (d >= 0)
			proc += d;
		else
			proc_ok = 0;
	}
	json_t *out = json_pack("{s:o,s:o,s:o,s:I}", "stages", o, "pools", pools,
		"process_cpu_ns", proc_ok ? json_integer(proc) : json_null(), "stage_cpu_ns",
		(json_int_t)sum);
	return out;
}

/* A number at path in o as a double; -1 when it is not a number. */
static double win_num(json_t *o, const char *path)
{
	json_t *v = win_get(o, path);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* The "unsupported: ..." text for event ev of pool (the event's own string, else why). */
static json_t *win_unsupported(json_t *after, const char *pool, const char *ev,
	const char *why)
{
	char path[128], buf[512];
	snprintf(path, sizeof path, "pmu.%s.%s", pool, ev);
	json_t *v = win_get(after, path);
	if (json_is_string(v))
		return json_string(json_string_value(v));
	snprintf(buf, sizeof buf, "unsupported: %s", why);
	return json_string(buf);
}

json_t *fm_pmu_window(json_t *before, json_t *after)
{
	static const char *const pools[] = { "ranker", "io", "fanout", "total" };
	static const char *const evs[] = { "instructions", "cycles", "l1i_misses",
		"branch_misses" };
	json_t *o = json_object();
	const char *why = json_string_value(win_get(after, "pmu.why"));
	int supported = json_is_true(win_get(after, "pmu.supported"));

	if (why == NULL || *why == '\0')
		why = supported ? "not counted" : "the leaf reports no PMU";
	for (size_t p = 0; p < 4; p++) {
		json_t *po = json_object();
		double d[4];
		for (size_t e = 0; e < 4; e++) {
			char path[128];
			snprintf(path, sizeof path, "pmu.%s.%s", pools[p], evs[e]);
			double a = win_num(before, path), b = win_num(after, path);
			d[e] = supported && a >= 0 && b >= a ? b - a : -1;
			json_object_set_new(po, evs[e], d[e] >= 0 ? json_real(d[e]) :
				win_unsupported(after, pools[p], evs[e], why));
		}
		struct { const char *k; int num, den; double scale; } m[] = {
			{ "ipc", 0, 1, 1 }, { "l1i_mpki", 2, 0, 1000 }, { "branch_mpki", 3, 0, 1000 },
		};
		for (size_t i = 0; i < 3; i++) {
			double n = d[m[i].num], q = d[m[i].den];
			json_t *v;
			if (n >= 0 && q > 0)
				v = json_real(m[i].scale * n / q);
			else if (n >= 0 && q == 0)
				v = json_string("unsupported: no instructions or cycles counted in the "
					"window");
			else
				v = win_unsupported(after, pools[p], m[i].k, why);
			json_object_set_new(po, m[i].k, v);
		}
		json_object_set_new(o, pools[p], po);
	}
	return o;
}
