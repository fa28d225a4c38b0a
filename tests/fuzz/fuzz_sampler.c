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

/* Inputs up to this size go through all three loaders; larger ones (up to a whole
 * rpc_dist.json, 41 KB) only through those their top-level bracket can satisfy. */
#define FZ_ALL_LOADERS_BYTES 4096

/* Which loaders can accept the input: 1 rpc_dist, 2 the size tables, 3 both. jansson
 * (no JSON_DECODE_ANY) takes only an object or an array at the top, after whitespace, so
 * a text opening with '{' is never a size table (an array) and one opening with '[' never
 * an rpc_dist (an object): their loaders would parse the same text again (a millisecond
 * for 41 KB under ASan, two thirds of this target's time) only to refuse it on shape. The
 * small inputs still take those refusal paths. */
static int fz_loaders(const char *json, size_t size)
{
	size_t i = 0;

	if (size <= FZ_ALL_LOADERS_BYTES)
		return 3;
	while (i < size && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' ||
			    json[i] == '\r'))
		i++;
	if (i < size && json[i] == '{')
		return 1;
	if (i < size && json[i] == '[')
		return 2;
	return 3;
}

/* Every input goes through the loaders that may accept it: which one does depends on its
 * shape. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fl_rpc_dist d;
	struct fl_fanout_expect e;
	struct fl_pct t;
	char err[512];
	const char *json = (const char *)data;
	int loaders = fz_loaders(json, size);

	err[0] = '\0';
	if (!(loaders & 1))
		;
	else if (fl_rpc_dist_parse(json, size, "fuzz", &d, err, sizeof(err)) == 0) {
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
	if (!(loaders & 2))
		return 0;
	err[0] = '\0';
	if (fl_size_table_parse(json, size, "fuzz", "req_size_", &t, err, sizeof(err)) == 0)
		fz_check_pct(&t);
	else if (err[0] == '\0')
		fz_die("size table", "refused without a message");
	if (fl_size_table_parse(json, size, "fuzz", "resp_size_", &t, err, sizeof(err)) == 0)
		fz_check_pct(&t);
	return 0;
}
