/* sampler.c: load and validate DCPerf percentile tables, sample them by inverse CDF. */
#include "sampler.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Segments whose lower knot is at or above this are interpolated in log value. */
#define SAMPLER_LOG_FROM_Q 0.95

/* Bytes of the "file: group.method" prefix of error messages. */
#define SAMPLER_WHERE 1024

/* A knot: the key suffix in the JSON and its cumulative probability. */
struct sampler_knot {
	const char *key;
	double q;
};

/* rpc_dist.json tables (min, p05..p95, p99, p99_9, p99_99, max). */
static const struct sampler_knot sampler_rpc_knots[] = {
	{"min", 0.0}, {"p05", 0.05}, {"p10", 0.10}, {"p15", 0.15}, {"p20", 0.20},
	{"p25", 0.25}, {"p30", 0.30}, {"p35", 0.35}, {"p40", 0.40}, {"p45", 0.45},
	{"p50", 0.50}, {"p55", 0.55}, {"p60", 0.60}, {"p65", 0.65}, {"p70", 0.70},
	{"p75", 0.75}, {"p80", 0.80}, {"p85", 0.85}, {"p90", 0.90}, {"p95", 0.95},
	{"p99", 0.99}, {"p99_9", 0.999}, {"p99_99", 0.9999}, {"max", 1.0},
};

/* feed_aggregator_*_sizes.json tables (min, p05..p95, p99, max), after the prefix. */
static const struct sampler_knot sampler_size_knots[] = {
	{"min", 0.0}, {"p05", 0.05}, {"p10", 0.10}, {"p15", 0.15}, {"p20", 0.20},
	{"p25", 0.25}, {"p30", 0.30}, {"p35", 0.35}, {"p40", 0.40}, {"p45", 0.45},
	{"p50", 0.50}, {"p55", 0.55}, {"p60", 0.60}, {"p65", 0.65}, {"p70", 0.70},
	{"p75", 0.75}, {"p80", 0.80}, {"p85", 0.85}, {"p90", 0.90}, {"p95", 0.95},
	{"p99", 0.99}, {"max", 1.0},
};

#define SAMPLER_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Inbound names in the order of enum InboundMethod (runtime/common/frontload.proto). */
static const char *const sampler_inbound[FL_RPC_INBOUND] = {
	"createAndPrimeSession", "getStoriesUncompressed", "streamData",
	"streamIfrPriorityRanking", "getAllStories",
};

/* Outbound names of rpc_dist.json @ 1057ac16 (the order here does not matter). */
static const char *const sampler_outbound[FL_RPC_OUTBOUND] = {
	"mcGet", "mcLeaseGet", "mcSet", "fetchTopKEntitiesRequest",
	"getActionStreamsRequestCompressed2", "getObjectsFromQueries", "getSerializedObjects",
	"getStatus", "runFullyRemotePrediction", "getActionStreamsCompressed2", "runModelMethod",
	"edsMultiGet", "fetchCandidateScoreRequest", "mcLeaseSet", "prefixScan",
	"fetchEntityFeatures", "getUserConsents", "fciGet", "multiget", "MultiGet",
};

/* The three tables of an rpc_dist.json entry, with where each goes in fl_rpc_method. */
static const struct {
	const char *key;
	size_t off;
} sampler_tables[] = {
	{"request_sizes", offsetof(struct fl_rpc_method, req_bytes)},
	{"response_sizes", offsetof(struct fl_rpc_method, resp_bytes)},
	{"latency_us", offsetof(struct fl_rpc_method, latency_us)},
};

_Static_assert(SAMPLER_NELEM(sampler_rpc_knots) <= FL_PCT_MAX_KNOTS, "too many knots");
_Static_assert(SAMPLER_NELEM(sampler_size_knots) <= FL_PCT_MAX_KNOTS, "too many knots");

static void sampler_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sampler_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Segment of t holding u: the i with q[i] <= u < q[i+1] (n - 2 for u at the top). */
static size_t sampler_segment(const struct fl_pct *t, double u)
{
	size_t lo = 0, hi = t->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->q[mid] <= u)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Whether segment i (knots i, i+1) is interpolated in log value. */
static int sampler_seg_log(const struct fl_pct *t, size_t i)
{
	return t->q[i] >= SAMPLER_LOG_FROM_Q && t->v[i] > 0 && t->v[i + 1] > 0;
}

double fl_pct_sample(const struct fl_pct *t, double u)
{
	if (t->n == 0)
		return 0;
	if (!(u > 0))       /* also catches NaN */
		return t->v[0];
	if (u >= 1 || t->n == 1)
		return t->v[t->n - 1];
	size_t i = sampler_segment(t, u);
	double a = t->v[i], b = t->v[i + 1];
	double dq = t->q[i + 1] - t->q[i];
	double f = dq > 0 ? (u - t->q[i]) / dq : 0;
	/* f == 0 exactly at a knot, so a knot's own q yields the knot's value. */
	if (f <= 0 || a == b)
		return a;
	double v = sampler_seg_log(t, i) ? a * exp(f * log(b / a)) : a + f * (b - a);
	/* Rounding must not step past the upper knot, or the sweep would not be monotone. */
	return v < a ? a : v > b ? b : v;
}

double fl_pct_mean(const struct fl_pct *t)
{
	if (t->n == 0)
		return 0;
	if (t->n == 1)
		return t->v[0];
	double sum = 0;
	for (size_t i = 0; i + 1 < t->n; i++) {
		double a = t->v[i], b = t->v[i + 1];
		double dq = t->q[i + 1] - t->q[i];
		if (a == b)
			sum += a * dq;
		else if (sampler_seg_log(t, i))
			sum += (b - a) / log(b / a) * dq;  /* integral of a (b/a)^f, f 0..1 */
		else
			sum += (a + b) / 2 * dq;
	}
	return sum;
}

/* Read one knot value from obj[key]. where names the table for messages ("file: a.b"). */
static int sampler_read_knot(json_t *obj, const char *key, const char *where,
	const char *prev_key, double prev, double *out, char *err, size_t errlen)
{
	json_t *j = json_object_get(obj, key);
	if (!j) {
		sampler_err(err, errlen, "%s.%s: missing", where, key);
		return -1;
	}
	if (!json_is_number(j)) {
		sampler_err(err, errlen, "%s.%s: not a number", where, key);
		return -1;
	}
	double v = json_number_value(j);
	if (v < 0) {
		sampler_err(err, errlen, "%s.%s: %.15g is negative", where, key, v);
		return -1;
	}
	if (prev_key && v < prev) {
		sampler_err(err, errlen, "%s.%s: %.15g is below %s (%.15g)", where, key, v,
			prev_key, prev);
		return -1;
	}
	*out = v;
	return 0;
}

/* Fill t from the JSON object obj holding keys prefix + knot key. Any other key is an
 * error, so a renamed or added knot is noticed rather than ignored. */
static int sampler_read_table(json_t *obj, const char *prefix,
	const struct sampler_knot *knots, size_t nknots, const char *where, struct fl_pct *t,
	char *err, size_t errlen)
{
	if (!json_is_object(obj)) {
		sampler_err(err, errlen, "%s: not an object", where);
		return -1;
	}
	size_t plen = strlen(prefix);
	char key[64], prev_key[64] = "";
	t->n = 0;
	for (size_t k = 0; k < nknots; k++) {
		snprintf(key, sizeof key, "%s%s", prefix, knots[k].key);
		double prev = k ? t->v[k - 1] : 0;
		if (sampler_read_knot(obj, key, where, k ? prev_key : NULL, prev, &t->v[k],
			err, errlen) < 0)
			return -1;
		t->q[k] = knots[k].q;
		memcpy(prev_key, key, sizeof key);
	}
	t->n = nknots;
	const char *name;
	json_t *val;
	json_object_foreach(obj, name, val) {
		int known = 0;
		if (strncmp(name, prefix, plen) == 0)
			for (size_t k = 0; k < nknots && !known; k++)
				known = strcmp(name + plen, knots[k].key) == 0;
		if (!known) {
			sampler_err(err, errlen, "%s.%s: unknown key", where, name);
			return -1;
		}
	}
	return 0;
}

/* Read entry obj of method name into m; where is "file: inbound.name". */
static int sampler_read_method(json_t *obj, const char *name, const char *where,
	struct fl_rpc_method *m, char *err, size_t errlen)
{
	if (!json_is_object(obj)) {
		sampler_err(err, errlen, "%s: not an object", where);
		return -1;
	}
	snprintf(m->name, sizeof m->name, "%s", name);
	json_t *c = json_object_get(obj, "total_weighted_count");
	if (!c) {
		sampler_err(err, errlen, "%s.total_weighted_count: missing", where);
		return -1;
	}
	if (!json_is_number(c)) {
		sampler_err(err, errlen, "%s.total_weighted_count: not a number", where);
		return -1;
	}
	m->total_weighted_count = json_number_value(c);
	if (!(m->total_weighted_count > 0) || !isfinite(m->total_weighted_count)) {
		sampler_err(err, errlen, "%s.total_weighted_count: %.15g is not positive", where,
			m->total_weighted_count);
		return -1;
	}
	for (size_t i = 0; i < SAMPLER_NELEM(sampler_tables); i++) {
		char w[SAMPLER_WHERE + 32];
		snprintf(w, sizeof w, "%s.%s", where, sampler_tables[i].key);
		json_t *tab = json_object_get(obj, sampler_tables[i].key);
		if (!tab) {
			sampler_err(err, errlen, "%s: missing", w);
			return -1;
		}
		struct fl_pct *t = (struct fl_pct *)((char *)m + sampler_tables[i].off);
		if (sampler_read_table(tab, "", sampler_rpc_knots, SAMPLER_NELEM(sampler_rpc_knots),
			w, t, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Read the methods of group ("inbound" or "outbound") whose names are names[0..n), in
 * that order, into out[], refusing missing and unknown methods. */
static int sampler_read_group(json_t *root, const char *path, const char *group,
	const char *const *names, size_t n, struct fl_rpc_method *out, char *err,
	size_t errlen)
{
	json_t *g = json_object_get(root, group);
	if (!g) {
		sampler_err(err, errlen, "%s: %s: missing", path, group);
		return -1;
	}
	if (!json_is_object(g)) {
		sampler_err(err, errlen, "%s: %s: not an object", path, group);
		return -1;
	}
	const char *name;
	json_t *val;
	json_object_foreach(g, name, val) {
		int known = 0;
		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(name, names[i]) == 0;
		if (!known) {
			sampler_err(err, errlen, "%s: %s.%s: unknown method", path, group, name);
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char where[SAMPLER_WHERE];
		snprintf(where, sizeof where, "%s: %s.%s", path, group, names[i]);
		json_t *e = json_object_get(g, names[i]);
		if (!e) {
			sampler_err(err, errlen, "%s: missing", where);
			return -1;
		}
		if (sampler_read_method(e, names[i], where, &out[i], err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Descending total_weighted_count, ties by name, so out[] indices are stable. */
static int sampler_cmp_out(const void *pa, const void *pb)
{
	const struct fl_rpc_method *a = pa, *b = pb;
	if (a->total_weighted_count != b->total_weighted_count)
		return a->total_weighted_count > b->total_weighted_count ? -1 : 1;
	return strcmp(a->name, b->name);
}

static json_t *sampler_load_json(const char *path, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root)
		sampler_err(err, errlen, "%s: not JSON: line %d column %d: %s", path, je.line,
			je.column, je.text);
	return root;
}

/* The same for text in memory; name stands in for the path in messages. */
static json_t *sampler_parse_json(const char *json, size_t len, const char *name, char *err,
	size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (!root)
		sampler_err(err, errlen, "%s: not JSON: line %d column %d: %s", name, je.line,
			je.column, je.text);
	return root;
}

/* Validate the parsed rpc_dist.json root; takes the reference to root. */
static int sampler_rpc_dist(json_t *root, const char *path, struct fl_rpc_dist *d,
	char *err, size_t errlen)
{
	int rc = -1;
	struct fl_rpc_dist *tmp = NULL;
	/* The shape first: a refusal need not clear 40 KB (a quarter of the fuzzer's time on
	 * small inputs, fresh pages each time under ASan's quarantine). */
	if (!json_is_object(root)) {
		sampler_err(err, errlen, "%s: top level is not an object", path);
		goto out;
	}
	tmp = calloc(1, sizeof *tmp);
	if (!tmp) {
		sampler_err(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (sampler_read_group(root, path, "inbound", sampler_inbound, FL_RPC_INBOUND, tmp->in,
		err, errlen) < 0)
		goto out;
	if (sampler_read_group(root, path, "outbound", sampler_outbound, FL_RPC_OUTBOUND,
		tmp->out, err, errlen) < 0)
		goto out;
	double sessions = tmp->in[0].total_weighted_count;  /* createAndPrimeSession */
	for (size_t i = 0; i < FL_RPC_INBOUND; i++)
		tmp->in[i].per_session = tmp->in[i].total_weighted_count / sessions;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++)
		tmp->out[i].per_session = tmp->out[i].total_weighted_count / sessions;
	qsort(tmp->out, FL_RPC_OUTBOUND, sizeof tmp->out[0], sampler_cmp_out);
	*d = *tmp;  /* d is only written on success */
	rc = 0;
out:
	free(tmp);
	json_decref(root);
	return rc;
}

int fl_rpc_dist_load(const char *path, struct fl_rpc_dist *d, char *err, size_t errlen)
{
	json_t *root = sampler_load_json(path, err, errlen);
	if (!root)
		return -1;
	return sampler_rpc_dist(root, path, d, err, errlen);
}

int fl_rpc_dist_parse(const char *json, size_t len, const char *name, struct fl_rpc_dist *d,
	char *err, size_t errlen)
{
	json_t *root = sampler_parse_json(json, len, name, err, errlen);
	if (!root)
		return -1;
	return sampler_rpc_dist(root, name, d, err, errlen);
}

unsigned fl_rpc_calls(const struct fl_rpc_dist *d, size_t i, double scale)
{
	if (i >= FL_RPC_OUTBOUND || !(scale > 0))
		return 0;
	double x = d->out[i].per_session * scale;
	if (!(x < (double)UINT_MAX))
		return UINT_MAX;
	return (unsigned)llround(x);
}

/* Validate a parsed size table root; takes the reference to root. */
static int sampler_size_table(json_t *root, const char *path, const char *prefix,
	struct fl_pct *t, char *err, size_t errlen)
{
	int rc = -1;
	if (!json_is_array(root) || json_array_size(root) != 1) {
		sampler_err(err, errlen, "%s: top level is not an array of one object", path);
		goto out;
	}
	char where[SAMPLER_WHERE];
	snprintf(where, sizeof where, "%s: [0]", path);
	struct fl_pct tmp;
	if (sampler_read_table(json_array_get(root, 0), prefix, sampler_size_knots,
		SAMPLER_NELEM(sampler_size_knots), where, &tmp, err, errlen) < 0)
		goto out;
	*t = tmp;
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int fl_size_table_load(const char *path, const char *prefix, struct fl_pct *t, char *err,
	size_t errlen)
{
	json_t *root = sampler_load_json(path, err, errlen);
	if (!root)
		return -1;
	return sampler_size_table(root, path, prefix, t, err, errlen);
}

int fl_size_table_parse(const char *json, size_t len, const char *name, const char *prefix,
	struct fl_pct *t, char *err, size_t errlen)
{
	json_t *root = sampler_parse_json(json, len, name, err, errlen);
	if (!root)
		return -1;
	return sampler_size_table(root, name, prefix, t, err, errlen);
}

void fl_rpc_expect(const struct fl_rpc_dist *d, double scale, struct fl_fanout_expect *e)
{
	memset(e, 0, sizeof *e);
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned c = fl_rpc_calls(d, i, scale);
		if (c == 0)
			continue;
		const struct fl_rpc_method *m = &d->out[i];
		e->calls += c;
		e->req_bytes += c * fl_pct_mean(&m->req_bytes);
		e->resp_bytes += c * fl_pct_mean(&m->resp_bytes);
		e->latency_us_sum += c * fl_pct_mean(&m->latency_us);
	}
}
