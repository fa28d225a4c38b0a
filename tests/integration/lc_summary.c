/* lc_summary.c: leaf-client's counts and summary: the first error, min/max/sum ranges, the
 * latency percentiles, the summary line on stdout and the --json summary. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "leaf_client.h"
#include "osfile.h"

const char *const lc_status_key[LC_NSTATUS] = {
	"ok", "overloaded", "bad_request", "denied", "stale", "internal", "deadline_exceeded",
};

void lc_note(struct lc_client *cl, const char *fmt, ...)
{
	if (cl->first_error[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cl->first_error, sizeof cl->first_error, fmt, ap);
	va_end(ap);
}

void lc_range_add(struct lc_range *r, uint64_t v)
{
	if (r->n == 0 || v < r->min)
		r->min = v;
	if (v > r->max)
		r->max = v;
	r->sum += v;
	r->n++;
}

static int lc_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t lc_pct(const uint64_t *v, uint64_t n, double q)
{
	if (n == 0)
		return 0;
	uint64_t k = (uint64_t)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

static json_t *lc_range_json(const struct lc_range *r)
{
	return json_pack("{s:I,s:I,s:I}", "min", (json_int_t)r->min, "max", (json_int_t)r->max,
		"sum", (json_int_t)r->sum);
}

static uint64_t lc_error_total(const struct lc_errors *e)
{
	return e->connect + e->closed + e->frame + e->unknown_id + e->decode + e->reply_size +
		e->zstd + e->ranked + e->method + e->echo + e->timeout;
}

int lc_write_json(const char *path, json_t *j)
{
	struct fl_atomic_file a;
	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0 ||
	    fl_atomic_commit(&a, json_dumpf(j, a.f, JSON_INDENT(2)) == 0, NULL, 0) != 0) {
		fprintf(stderr, "leaf-client: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* Method m's name: rpc_dist.json's inbound name of InboundMethod m (leaf) or outbound
 * method m (RPC), else "method_<m>". */
static void lc_method_name(const struct lc_client *cl, unsigned m, char *out, size_t len)
{
	snprintf(out, len, "method_%u", m);
	if (cl->o.rpc) {
		if (m < FL_RPC_OUTBOUND)
			snprintf(out, len, "%s", cl->dist.out[m].name);
		return;
	}
	for (size_t k = 0; k < FL_RPC_INBOUND; k++)
		if (cl->in_enum[k] == m)
			snprintf(out, len, "%s", cl->dist.in[k].name);
}

int lc_report(struct lc_client *cl)
{
	uint64_t n = cl->replied;
	qsort(cl->lat_ns, n, sizeof *cl->lat_ns, lc_cmp_u64);
	uint64_t p50 = lc_pct(cl->lat_ns, n, 0.50) / 1000, p95 = lc_pct(cl->lat_ns, n, 0.95) / 1000;
	uint64_t mx = n ? cl->lat_ns[n - 1] / 1000 : 0;
	cl->err.timeout = cl->timed_out ? cl->o.requests - cl->replied : 0;
	double wall_s = (double)(cl->end_ns - cl->start_ns) / 1e9;
	uint64_t errors = lc_error_total(&cl->err);
	int rc = 0;
	if (cl->replied < cl->o.requests || errors)
		rc = 1;
	if (cl->o.json) {
		json_t *st = json_object();
		for (int s = 0; s < LC_NSTATUS; s++)
			json_object_set_new(st, lc_status_key[s], json_integer((json_int_t)cl->status[s]));
		json_object_set_new(st, "other", json_integer((json_int_t)cl->status[LC_NSTATUS]));
		const struct lc_errors *e = &cl->err;
		json_t *ej = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"connect", (json_int_t)e->connect, "closed", (json_int_t)e->closed,
			"frame", (json_int_t)e->frame, "unknown_id", (json_int_t)e->unknown_id,
			"decode", (json_int_t)e->decode, "reply_size", (json_int_t)e->reply_size,
			"zstd", (json_int_t)e->zstd, "ranked", (json_int_t)e->ranked,
			"method", (json_int_t)e->method, "echo", (json_int_t)e->echo,
			"timeout", (json_int_t)e->timeout,
			"total", (json_int_t)errors);
		json_t *mj = json_object();
		for (unsigned m = 0; m < 256; m++) {
			if (!cl->sent_by_method[m])
				continue;
			char name[80];
			lc_method_name(cl, m, name, sizeof name);
			json_object_set_new(mj, name, json_integer((json_int_t)cl->sent_by_method[m]));
		}
		char hash[32];
		snprintf(hash, sizeof hash, "%016" PRIx64, cl->stream_hash);
		json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,"
			"s:{s:I,s:I,s:I},s:I,s:o,s:o,s:s,s:s,s:f,s:s}",
			"mode", cl->o.rpc ? "rpc" : "leaf",
			"requests", (json_int_t)cl->o.requests,
			"sent", (json_int_t)cl->sent,
			"replied", (json_int_t)cl->replied,
			"unanswered", (json_int_t)(cl->o.requests - cl->replied),
			"status", st,
			"request_bytes", lc_range_json(&cl->req_bytes),
			"wire_request_bytes", lc_range_json(&cl->wire_bytes),
			"reply_raw_bytes", lc_range_json(&cl->reply_raw),
			"ranked", lc_range_json(&cl->ranked),
			"fanout_calls", lc_range_json(&cl->fanout_calls),
			"fanout_errors", lc_range_json(&cl->fanout_errors),
			"extract_calls", lc_range_json(&cl->extract_calls),
			"zstd_replies", (json_int_t)cl->zstd_replies,
			"zstd_expected", (json_int_t)cl->zstd_expected,
			"latency_us", "p50", (json_int_t)p50, "p95", (json_int_t)p95, "max", (json_int_t)mx,
			"server_us_max", (json_int_t)(cl->server_ns_max / 1000),
			"methods", mj,
			"errors", ej,
			"cipher", cl->cipher,
			"stream_hash", hash,
			"wall_s", wall_s,
			"first_error", cl->first_error);
		if (!j || lc_write_json(cl->o.json, j) < 0)
			rc = 2;
		json_decref(j);
	}
	if (!cl->o.quiet) {
		printf("%" PRIu64 "/%" PRIu64 " replied in %.2f s: ok %" PRIu64, cl->replied,
			cl->o.requests, wall_s, cl->status[0]);
		for (int s = 1; s <= LC_NSTATUS; s++)
			if (cl->status[s])
				printf(", %s %" PRIu64, s < LC_NSTATUS ? lc_status_key[s] : "other",
					cl->status[s]);
		printf("; latency p50 %" PRIu64 " us p95 %" PRIu64 " us max %" PRIu64 " us",
			p50, p95, mx);
		if (!cl->o.rpc && cl->fanout_calls.n)
			printf("; fanout %" PRIu64 " calls", cl->fanout_calls.sum);
		if (cl->cipher[0])
			printf("; %s", cl->cipher);
		printf("\n");
	}
	if (cl->replied < cl->o.requests)
		fprintf(stderr, "leaf-client: %" PRIu64 " of %" PRIu64 " requests unanswered%s\n",
			cl->o.requests - cl->replied, cl->o.requests,
			cl->timed_out ? " at the deadline" : "");
	if (errors)
		fprintf(stderr, "leaf-client: %" PRIu64 " errors, first: %s\n", errors,
			cl->first_error);
	else if (cl->replied < cl->o.requests && cl->first_error[0])
		fprintf(stderr, "leaf-client: %s\n", cl->first_error);
	return rc;
}
