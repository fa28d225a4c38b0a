/* sampler.h: production percentile tables and inverse-CDF sampling from them.
 *
 * Tables come from runtime/data/ (copied from Meta DCPerf FeedSim v2, see
 * runtime/data/SOURCES.md): rpc_dist.json (per-method call counts, request and response
 * sizes in bytes, latency in µs, knots min, p05..p95, p99, p99_9, p99_99, max) and
 * feed_aggregator_{req,resp}_sizes.json (pooled inbound request/response sizes, bytes).
 *
 * Sampling is the inverse CDF through every knot: linear in value between knots below p95,
 * log-linear (linear in log value) from p95 up to max where both ends are positive, since
 * linear interpolation over the long last segments overstates the tail mass.
 */
#ifndef FL_SAMPLER_H
#define FL_SAMPLER_H

#include <stddef.h>

#define FL_PCT_MAX_KNOTS 32
#define FL_RPC_INBOUND 5
#define FL_RPC_OUTBOUND 20

/* One distribution: n knots (q[i] cumulative probability in [0, 1], strictly increasing,
 * q[0] = 0, q[n-1] = 1; v[i] values, non-decreasing, non-negative). */
struct fl_pct {
	size_t n;
	double q[FL_PCT_MAX_KNOTS];
	double v[FL_PCT_MAX_KNOTS];
};

/* Value at cumulative probability u (clamped to [0, 1]): the inverse CDF above. */
double fl_pct_sample(const struct fl_pct *t, double u);

/* Mean of the interpolated distribution (exact integral of the inverse CDF). */
double fl_pct_mean(const struct fl_pct *t);

/* One RPC method of rpc_dist.json. */
struct fl_rpc_method {
	char name[64];
	double total_weighted_count;  /* sampled call volume over the trace window */
	double per_session;           /* total_weighted_count / createAndPrimeSession's */
	struct fl_pct req_bytes;      /* request_sizes, bytes */
	struct fl_pct resp_bytes;     /* response_sizes, bytes */
	struct fl_pct latency_us;     /* latency_us, µs */
};

/* rpc_dist.json: the 5 inbound and 20 outbound methods. Outbound methods are kept in
 * descending total_weighted_count order (ties by name), so indices are stable. */
struct fl_rpc_dist {
	struct fl_rpc_method in[FL_RPC_INBOUND];
	struct fl_rpc_method out[FL_RPC_OUTBOUND];
};

/* Load and validate rpc_dist.json. Every one of the 5 inbound and 20 outbound method
 * names this project expects must be present (extra methods are an error too), each with
 * the three tables holding every knot key, values non-negative and non-decreasing in
 * percentile order. Returns 0, or -1 with err naming the file, method and key at fault. */
int fl_rpc_dist_load(const char *path, struct fl_rpc_dist *d, char *err, size_t errlen);

/* The same from len bytes of JSON text in memory (need not be NUL-terminated); name takes
 * the path's place in error messages. Both share one validator: only the reading differs
 * (the file loader keeps jansson's texts for an unreadable file). */
int fl_rpc_dist_parse(const char *json, size_t len, const char *name, struct fl_rpc_dist *d,
	char *err, size_t errlen);

/* Calls of outbound method i per leaf request at fanout scale: per_session * scale
 * rounded to nearest (0 drops the method). */
unsigned fl_rpc_calls(const struct fl_rpc_dist *d, size_t i, double scale);

/* Load feed_aggregator_req_sizes.json (prefix "req_size_") or _resp_sizes.json
 * (prefix "resp_size_"): an array holding one object with keys prefix + min, p05..p95,
 * p99, max. Same validation and error rules as fl_rpc_dist_load. */
int fl_size_table_load(const char *path, const char *prefix, struct fl_pct *t, char *err,
	size_t errlen);

/* The same from len bytes of JSON text in memory; name takes the path's place in errors. */
int fl_size_table_parse(const char *json, size_t len, const char *name, const char *prefix,
	struct fl_pct *t, char *err, size_t errlen);

/* Expected outbound calls, request bytes and response bytes per leaf request at scale,
 * from the table means (what the leaf prints at startup). */
struct fl_fanout_expect {
	unsigned calls;
	double req_bytes;
	double resp_bytes;
	double latency_us_sum;   /* sum of mean latencies of all calls (µs), before windowing */
};
void fl_rpc_expect(const struct fl_rpc_dist *d, double scale, struct fl_fanout_expect *e);

#endif
