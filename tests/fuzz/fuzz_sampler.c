/* fuzz_sampler.c: percentile tables (rpc_dist.json, feed_aggregator_*_sizes.json) parsed from memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "sampler.h"

static void fz_die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_sampler: %s: %s\n", what, err);
	abort();
}

/* A table the loader accepted must sample within its knots and monotonically. */
static void fz_check_pct(const struct fl_pct *t)
{
	double prev = -1, m;

	if (t->n < 2 || t->n > FL_PCT_MAX_KNOTS)
		fz_die("table", "knot count out of range");
	for (int i = 0; i <= 64; i++) {
		double v = fl_pct_sample(t, i / 64.0);

		if (!(v >= t->v[0] && v <= t->v[t->n - 1]) || v < prev)
			fz_die("table", "sample outside the knots or not monotone");
		prev = v;
	}
	m = fl_pct_mean(t);
	if (!(m >= t->v[0] * (1 - 1e-9) && m <= t->v[t->n - 1] * (1 + 1e-9)))
		fz_die("table", "mean outside the knots");
}

/* Every input goes through all three loaders: which one accepts it depends on its shape. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fl_rpc_dist d;
	struct fl_fanout_expect e;
	struct fl_pct t;
	char err[512];
	const char *json = (const char *)data;

	err[0] = '\0';
	if (fl_rpc_dist_parse(json, size, "fuzz", &d, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < FL_RPC_INBOUND; i++)
			fz_check_pct(&d.in[i].req_bytes);
		for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
			fz_check_pct(&d.out[i].req_bytes);
			fz_check_pct(&d.out[i].resp_bytes);
			fz_check_pct(&d.out[i].latency_us);
			(void)fl_rpc_calls(&d, i, 1.0);
		}
		fl_rpc_expect(&d, 1.0, &e);
	} else if (err[0] == '\0') {
		fz_die("rpc_dist", "refused without a message");
	}
	err[0] = '\0';
	if (fl_size_table_parse(json, size, "fuzz", "req_size_", &t, err, sizeof(err)) == 0)
		fz_check_pct(&t);
	else if (err[0] == '\0')
		fz_die("size table", "refused without a message");
	if (fl_size_table_parse(json, size, "fuzz", "resp_size_", &t, err, sizeof(err)) == 0)
		fz_check_pct(&t);
	return 0;
}
