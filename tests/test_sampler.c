/* test_sampler.c: percentile tables (runtime/common/sampler.c) on the real runtime/data files.
 *
 * The group setup loads rpc_dist.json and the two size tables (from $FL_SRCDIR/runtime/data
 * when set, else where fl_data_path finds them) and makes a mkdtemp directory for the
 * broken copies the validation tests write; the teardown removes it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "sampler.h"
#include "testutil.h"

#define TEST_PATH 4096u
#define TEST_ERRLEN 512u
#define TEST_SCALE 0.01             /* fan-out scale the leaf runs at by default */
#define TEST_MC_SAMPLES 1000000u
#define TEST_MC_SEED 0x5eed5a3d1e5ULL

/* Loaded tables and the temporary directory, shared by all tests. */
struct test_state {
	struct fl_rpc_dist dist;       /* rpc_dist.json */
	struct fl_pct req;             /* feed_aggregator_req_sizes.json */
	struct fl_pct resp;            /* feed_aggregator_resp_sizes.json */
	char rpc_path[TEST_PATH];      /* real rpc_dist.json */
	char req_path[TEST_PATH];      /* real feed_aggregator_req_sizes.json */
	char tmpdir[64];               /* broken copies go here */
	char bad_path[TEST_PATH];      /* tmpdir/rpc_dist.json */
	char bad_size_path[TEST_PATH]; /* tmpdir/feed_aggregator_req_sizes.json */
};

static int test_data_path(const char *name, char *out, size_t outlen)
{
	const char *src = getenv("FL_SRCDIR");
	char err[TEST_ERRLEN];
	if (src && *src) {
		int n = snprintf(out, outlen, "%s/runtime/data/%s", src, name);
		return n > 0 && (size_t)n < outlen ? 0 : -1;
	}
	if (fl_data_path(name, out, outlen, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int test_setup(void **state)
{
	struct test_state *s = calloc(1, sizeof *s);
	char resp_path[TEST_PATH], err[TEST_ERRLEN];
	if (!s)
		return -1;
	*state = s;
	if (test_data_path("rpc_dist.json", s->rpc_path, sizeof s->rpc_path) < 0 ||
		test_data_path("feed_aggregator_req_sizes.json", s->req_path,
			sizeof s->req_path) < 0 ||
		test_data_path("feed_aggregator_resp_sizes.json", resp_path,
			sizeof resp_path) < 0)
		return -1;
	if (fl_rpc_dist_load(s->rpc_path, &s->dist, err, sizeof err) < 0 ||
		fl_size_table_load(s->req_path, "req_size_", &s->req, err, sizeof err) < 0 ||
		fl_size_table_load(resp_path, "resp_size_", &s->resp, err, sizeof err) < 0) {
		fprintf(stderr, "load: %s\n", err);
		return -1;
	}
	snprintf(s->tmpdir, sizeof s->tmpdir, "/tmp/test_sampler.XXXXXX");
	if (!mkdtemp(s->tmpdir))
		return -1;
	snprintf(s->bad_path, sizeof s->bad_path, "%s/rpc_dist.json", s->tmpdir);
	snprintf(s->bad_size_path, sizeof s->bad_size_path, "%s/feed_aggregator_req_sizes.json",
		s->tmpdir);
	return 0;
}

static int test_teardown(void **state)
{
	struct test_state *s = *state;
	if (s) {
		unlink(s->bad_path);
		unlink(s->bad_size_path);
		if (s->tmpdir[0])
			rmdir(s->tmpdir);
		free(s);
	}
	return 0;
}

/* Every table of the loaded files, and a name for messages. */
#define TEST_NTABLES (3 * (FL_RPC_INBOUND + FL_RPC_OUTBOUND) + 2)

static size_t test_tables(struct test_state *s, const struct fl_pct **t, char (*name)[96])
{
	size_t n = 0;
	for (size_t g = 0; g < 2; g++) {
		struct fl_rpc_method *m = g ? s->dist.out : s->dist.in;
		size_t cnt = g ? FL_RPC_OUTBOUND : FL_RPC_INBOUND;
		for (size_t i = 0; i < cnt; i++) {
			t[n] = &m[i].req_bytes;
			snprintf(name[n++], 96, "%.63s.req_bytes", m[i].name);
			t[n] = &m[i].resp_bytes;
			snprintf(name[n++], 96, "%.63s.resp_bytes", m[i].name);
			t[n] = &m[i].latency_us;
			snprintf(name[n++], 96, "%.63s.latency_us", m[i].name);
		}
	}
	t[n] = &s->req;
	snprintf(name[n++], 96, "req_size");
	t[n] = &s->resp;
	snprintf(name[n++], 96, "resp_size");
	return n;
}

/* Loaded shape: knot counts, q values, method order. */
static void test_loaded(void **state)
{
	struct test_state *s = *state;
	static const char *const in[FL_RPC_INBOUND] = {
		"createAndPrimeSession", "getStoriesUncompressed", "streamData",
		"streamIfrPriorityRanking", "getAllStories",
	};
	for (size_t i = 0; i < FL_RPC_INBOUND; i++)
		assert_string_equal(s->dist.in[i].name, in[i]);
	assert_true(fabs(s->dist.in[0].per_session - 1.0) < 1e-15);
	assert_string_equal(s->dist.out[0].name, "mcGet");
	assert_string_equal(s->dist.out[FL_RPC_OUTBOUND - 1].name, "MultiGet");
	for (size_t i = 1; i < FL_RPC_OUTBOUND; i++)
		assert_true(s->dist.out[i - 1].total_weighted_count >=
			s->dist.out[i].total_weighted_count);
	const struct fl_pct *lat = &s->dist.out[0].latency_us;
	assert_int_equal(lat->n, 24);
	assert_true(lat->q[0] == 0.0 && lat->q[20] == 0.99 && lat->q[21] == 0.999 &&
		lat->q[22] == 0.9999 && lat->q[23] == 1.0);
	assert_true(lat->v[21] == 276144 && lat->v[23] == 9979607);
	assert_int_equal(s->req.n, 22);
	assert_true(s->req.q[20] == 0.99 && s->req.v[10] == 47874 && s->req.v[21] == 18882521);
	assert_true(s->resp.v[0] == 4 && s->resp.v[21] == 10319524);
}

/* Sampling at a knot's own q gives that knot's value exactly, in every table. */
static void test_knots_exact(void **state)
{
	const struct fl_pct *t[TEST_NTABLES];
	char name[TEST_NTABLES][96];
	size_t n = test_tables(*state, t, name);
	assert_int_equal(n, TEST_NTABLES);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < t[i]->n; k++) {
			double v = fl_pct_sample(t[i], t[i]->q[k]);
			if (v != t[i]->v[k])
				fail_msg("%s knot %zu (q %g): got %.17g, want %.17g", name[i], k,
					t[i]->q[k], v, t[i]->v[k]);
		}
}

/* Non-decreasing over a sweep of u, dense near the top where the log segments are. */
static void test_monotone(void **state)
{
	const struct fl_pct *t[TEST_NTABLES];
	char name[TEST_NTABLES][96];
	size_t n = test_tables(*state, t, name);
	for (size_t i = 0; i < n; i++) {
		double prev = fl_pct_sample(t[i], 0);
		for (unsigned j = 1; j <= 200000; j++) {
			double u = j <= 100000 ? j / 100000.0 * 0.95 :
				0.95 + (j - 100000) / 100000.0 * 0.05;
			double v = fl_pct_sample(t[i], u);
			if (v < prev)
				fail_msg("%s: sample(%.9g) = %.17g < %.17g", name[i], u, v, prev);
			prev = v;
		}
	}
}

/* Segment midpoints: arithmetic mean of the ends below p95, geometric mean from p95 up. */
static void test_midpoints(void **state)
{
	struct test_state *s = *state;
	const struct fl_pct *lat = &s->dist.out[0].latency_us;  /* mcGet */
	unsigned nlin = 0, nlog = 0;
	for (size_t k = 0; k + 1 < lat->n; k++) {
		double a = lat->v[k], b = lat->v[k + 1];
		double mid = fl_pct_sample(lat, (lat->q[k] + lat->q[k + 1]) / 2);
		double want = lat->q[k] < 0.95 ? (a + b) / 2 : sqrt(a * b);
		assert_true(fabs(mid - want) <= 1e-9 * want);
		if (a != b)
			*(lat->q[k] < 0.95 ? &nlin : &nlog) += 1;
	}
	assert_true(nlin >= 10 && nlog >= 2);
	/* p50 (47874) to p55 (55587) of the request sizes: linear. */
	assert_true(fabs(fl_pct_sample(&s->req, 0.525) - (47874 + 55587) / 2.0) < 1e-6);
	/* p99 to max of the response sizes: log-linear. */
	double g = sqrt(2594795.0 * 10319524.0);
	assert_true(fabs(fl_pct_sample(&s->resp, 0.995) - g) < 1e-6 * g);
	/* A log segment with a zero end falls back to linear. */
	struct fl_pct z = {.n = 3, .q = {0, 0.95, 1}, .v = {0, 0, 10}};
	assert_true(fabs(fl_pct_sample(&z, 0.975) - 5) < 1e-12);
	assert_true(fabs(fl_pct_mean(&z) - 0.25) < 1e-12);
}

/* u outside [0, 1] clamps to min and max. */
static void test_clamp(void **state)
{
	struct test_state *s = *state;
	const struct fl_pct *lat = &s->dist.out[0].latency_us;
	assert_true(fl_pct_sample(lat, -0.5) == lat->v[0]);
	assert_true(fl_pct_sample(lat, -1e300) == lat->v[0]);
	assert_true(fl_pct_sample(lat, 1.5) == lat->v[lat->n - 1]);
	assert_true(fl_pct_sample(lat, 1e300) == lat->v[lat->n - 1]);
	assert_true(fl_pct_sample(lat, NAN) == lat->v[0]);
	assert_true(fl_pct_sample(&s->req, 2) == 18882521);
	struct fl_pct empty = {.n = 0};
	assert_true(fl_pct_sample(&empty, 0.5) == 0 && fl_pct_mean(&empty) == 0);
}

/* fl_pct_mean against 1e6 samples, within 1%, for every table. The samples are jittered
 * (one uniform draw in each of N equal strata of u): plain draws leave the 1e-4 wide top
 * segments (latency up to 10 s) with ~100 samples, an error near the 1% bound. */
static void test_mean_monte_carlo(void **state)
{
	const struct fl_pct *t[TEST_NTABLES];
	char name[TEST_NTABLES][96];
	size_t n = test_tables(*state, t, name);
	uint64_t seed = TEST_MC_SEED;
	printf("monte carlo: seed %#llx, %u jittered samples per table\n",
		(unsigned long long)seed, TEST_MC_SAMPLES);
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (unsigned j = 0; j < TEST_MC_SAMPLES; j++) {
			double r = (test_rand(&seed) >> 11) * 0x1p-53;
			sum += fl_pct_sample(t[i], (j + r) / TEST_MC_SAMPLES);
		}
		double mc = sum / TEST_MC_SAMPLES, mean = fl_pct_mean(t[i]);
		double rel = fabs(mc - mean) / mean;
		if (rel > worst)
			worst = rel;
		if (!(rel < 0.01))
			fail_msg("%s: mean %.6g, monte carlo %.6g", name[i], mean, mc);
	}
	printf("monte carlo: worst relative error %.2e over %zu tables\n", worst, n);
}

/* Mean with every segment linear, as FeedSim interpolates. */
static double test_linear_mean(const struct fl_pct *t)
{
	double sum = 0;
	for (size_t k = 0; k + 1 < t->n; k++)
		sum += (t->v[k] + t->v[k + 1]) / 2 * (t->q[k + 1] - t->q[k]);
	return sum;
}

/* The log-linear tail carries less mass than a linear one would. */
static void test_log_tail_mean(void **state)
{
	struct test_state *s = *state;
	const struct {
		const char *name;
		const struct fl_pct *t;
	} c[] = {
		{"mcGet.latency_us", &s->dist.out[0].latency_us},
		{"mcGet.resp_bytes", &s->dist.out[0].resp_bytes},
		{"req_size", &s->req},
		{"resp_size", &s->resp},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		double lin = test_linear_mean(c[i].t), lg = fl_pct_mean(c[i].t);
		printf("mean %-18s linear tail %12.1f  log-linear tail %12.1f  (%.1f%%)\n",
			c[i].name, lin, lg, 100 * (lg - lin) / lin);
		assert_true(lg < lin);
	}
}

/* Write root to the bad rpc_dist.json and load it: must fail with every want in err. */
static void test_refused(struct test_state *s, json_t *root, const char *text,
	const char *const *want)
{
	char err[TEST_ERRLEN] = "";
	struct fl_rpc_dist *d = calloc(1, sizeof *d);
	assert_non_null(d);
	if (root) {
		assert_int_equal(json_dump_file(root, s->bad_path, JSON_INDENT(1)), 0);
	} else {
		FILE *f = fopen(s->bad_path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	}
	assert_int_equal(fl_rpc_dist_load(s->bad_path, d, err, sizeof err), -1);
	printf("refused: %s\n", err);
	assert_non_null(strstr(err, s->bad_path));
	for (; *want; want++)
		if (!strstr(err, *want))
			fail_msg("err \"%s\" lacks \"%s\"", err, *want);
	assert_string_equal(d->out[0].name, "");  /* left alone on failure */
	free(d);
}

static json_t *test_real(struct test_state *s)
{
	json_error_t je;
	json_t *root = json_load_file(s->rpc_path, 0, &je);
	assert_non_null(root);
	return root;
}

static json_t *test_table(json_t *root, const char *group, const char *method,
	const char *table)
{
	json_t *t = json_object_get(json_object_get(json_object_get(root, group), method), table);
	assert_non_null(t);
	return t;
}

/* Broken copies of rpc_dist.json are refused, naming what is wrong. */
static void test_bad_rpc_dist(void **state)
{
	struct test_state *s = *state;
	json_t *root;

	root = test_real(s);
	json_object_del(json_object_get(root, "outbound"), "mcSet");
	test_refused(s, root, NULL, (const char *const[]){"outbound.mcSet", "missing", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_del(json_object_get(root, "inbound"), "streamData");
	test_refused(s, root, NULL, (const char *const[]){"inbound.streamData", "missing", NULL});
	json_decref(root);

	root = test_real(s);
	json_t *out = json_object_get(root, "outbound");
	json_object_set(out, "FbkeyPointGetRequest", json_object_get(out, "MultiGet"));
	test_refused(s, root, NULL,
		(const char *const[]){"outbound.FbkeyPointGetRequest", "unknown method", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_del(test_table(root, "outbound", "mcGet", "latency_us"), "p99_9");
	test_refused(s, root, NULL,
		(const char *const[]){"outbound.mcGet.latency_us.p99_9", "missing", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_set_new(test_table(root, "outbound", "mcGet", "latency_us"), "p99_9",
		json_integer(1200));
	test_refused(s, root, NULL, (const char *const[]){
		"outbound.mcGet.latency_us.p99_9: 1200 is below p99 (24980)", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_set_new(test_table(root, "inbound", "streamData", "request_sizes"), "min",
		json_integer(-1));
	test_refused(s, root, NULL, (const char *const[]){
		"inbound.streamData.request_sizes.min: -1 is negative", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_set_new(test_table(root, "outbound", "fciGet", "response_sizes"), "p50",
		json_string("97"));
	test_refused(s, root, NULL, (const char *const[]){
		"outbound.fciGet.response_sizes.p50: not a number", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_set_new(test_table(root, "outbound", "mcGet", "request_sizes"), "p98",
		json_integer(110));
	test_refused(s, root, NULL, (const char *const[]){
		"outbound.mcGet.request_sizes.p98: unknown key", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_del(json_object_get(json_object_get(root, "outbound"), "getStatus"),
		"latency_us");
	test_refused(s, root, NULL, (const char *const[]){
		"outbound.getStatus.latency_us: missing", NULL});
	json_decref(root);

	root = test_real(s);
	json_object_set_new(json_object_get(json_object_get(root, "outbound"), "mcGet"),
		"total_weighted_count", json_integer(0));
	test_refused(s, root, NULL, (const char *const[]){
		"outbound.mcGet.total_weighted_count", NULL});
	json_decref(root);

	test_refused(s, NULL, "{\"inbound\": {\"streamData\": ",
		(const char *const[]){"not JSON", NULL});
	test_refused(s, NULL, "[1, 2]", (const char *const[]){"not an object", NULL});

	char err[TEST_ERRLEN] = "";
	struct fl_rpc_dist *d = malloc(sizeof *d);
	assert_non_null(d);
	assert_int_equal(fl_rpc_dist_load("/nonexistent/rpc_dist.json", d, err, sizeof err), -1);
	assert_non_null(strstr(err, "/nonexistent/rpc_dist.json"));
	assert_int_equal(fl_rpc_dist_load(s->bad_path, d, NULL, 0), -1);  /* no err buffer */
	free(d);
}

/* Write text as the bad size table and load it with prefix: must fail naming want. */
static void test_size_refused(struct test_state *s, const char *text, const char *prefix,
	const char *want)
{
	char err[TEST_ERRLEN] = "";
	struct fl_pct t = {.n = 99};
	FILE *f = fopen(s->bad_size_path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(fl_size_table_load(s->bad_size_path, prefix, &t, err, sizeof err), -1);
	printf("refused: %s\n", err);
	if (!strstr(err, want) || !strstr(err, s->bad_size_path))
		fail_msg("err \"%s\" lacks \"%s\"", err, want);
	assert_int_equal(t.n, 99);
}

/* Broken size tables are refused the same way. */
static void test_bad_size_table(void **state)
{
	struct test_state *s = *state;
	char err[TEST_ERRLEN];
	struct fl_pct t;
	/* The real request table read with the response prefix. */
	assert_int_equal(fl_size_table_load(s->req_path, "resp_size_", &t, err, sizeof err), -1);
	assert_non_null(strstr(err, "resp_size_min: missing"));

	json_error_t je;
	json_t *root = json_load_file(s->req_path, 0, &je);
	assert_non_null(root);
	json_t *obj = json_array_get(root, 0);
	char *text;

	json_object_del(obj, "req_size_p99");
	text = json_dumps(root, 0);
	test_size_refused(s, text, "req_size_", "[0].req_size_p99: missing");
	free(text);

	json_object_set_new(obj, "req_size_p99", json_integer(100));
	text = json_dumps(root, 0);
	test_size_refused(s, text, "req_size_", "[0].req_size_p99: 100 is below req_size_p95");
	free(text);

	json_object_set_new(obj, "req_size_p99", json_real(-0.5));
	text = json_dumps(root, 0);
	test_size_refused(s, text, "req_size_", "[0].req_size_p99: -0.5 is negative");
	free(text);

	json_object_set_new(obj, "req_size_p99", json_null());
	text = json_dumps(root, 0);
	test_size_refused(s, text, "req_size_", "[0].req_size_p99: not a number");
	free(text);
	json_decref(root);

	test_size_refused(s, "{\"req_size_min\": 9}", "req_size_", "not an array");
	test_size_refused(s, "[{\"req_size_min\": 9}, {}]", "req_size_", "not an array");
	test_size_refused(s, "[{\"req_size_min\": 9", "req_size_", "not JSON");
}

/* Calls per leaf request: per_session × scale, rounded half away from zero. */
static void test_calls(void **state)
{
	struct test_state *s = *state;
	const struct fl_rpc_dist *d = &s->dist;
	/* mcGet: 293160194274928 / 205939652022 = 1423.52 per session. */
	assert_true(fabs(d->out[0].per_session - 1423.52) < 0.01);
	assert_int_equal(fl_rpc_calls(d, 0, TEST_SCALE), 14);
	assert_int_equal(fl_rpc_calls(d, 0, 1), 1424);
	assert_int_equal(fl_rpc_calls(d, 0, 0), 0);
	assert_int_equal(fl_rpc_calls(d, 0, -1), 0);
	assert_int_equal(fl_rpc_calls(d, FL_RPC_OUTBOUND, 1), 0);
	unsigned zero = 0;
	printf("calls at scale %g:", TEST_SCALE);
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned c = fl_rpc_calls(d, i, TEST_SCALE);
		printf(" %s %u", d->out[i].name, c);
		assert_int_equal(c, (unsigned)llround(d->out[i].per_session * TEST_SCALE));
		zero += c == 0;
	}
	printf("\n");
	/* MultiGet (15.9 per session) rounds to 0; calls fall with the count. */
	assert_string_equal(d->out[FL_RPC_OUTBOUND - 1].name, "MultiGet");
	assert_int_equal(fl_rpc_calls(d, FL_RPC_OUTBOUND - 1, TEST_SCALE), 0);
	assert_true(zero >= 1 && zero < FL_RPC_OUTBOUND);
	for (size_t i = 1; i < FL_RPC_OUTBOUND; i++)
		assert_true(fl_rpc_calls(d, i, TEST_SCALE) <= fl_rpc_calls(d, i - 1, TEST_SCALE));

	/* Exact halves round away from zero. */
	struct fl_rpc_dist *h = calloc(1, sizeof *h);
	assert_non_null(h);
	h->out[0].per_session = 2.5;
	h->out[1].per_session = 0.5;
	h->out[2].per_session = 0.49;
	assert_int_equal(fl_rpc_calls(h, 0, 1), 3);
	assert_int_equal(fl_rpc_calls(h, 1, 1), 1);
	assert_int_equal(fl_rpc_calls(h, 2, 1), 0);
	free(h);
}

/* Expected fan-out per leaf request at scale 0.01, from the table means. */
static void test_expect(void **state)
{
	struct test_state *s = *state;
	const struct fl_rpc_dist *d = &s->dist;
	struct fl_fanout_expect e;
	fl_rpc_expect(d, TEST_SCALE, &e);
	printf("expect at scale %g: %u calls, %.0f request bytes, %.0f response bytes, "
		"%.0f us latency sum (%.0f us per call)\n", TEST_SCALE, e.calls, e.req_bytes,
		e.resp_bytes, e.latency_us_sum, e.calls ? e.latency_us_sum / e.calls : 0);
	unsigned calls = 0;
	double req = 0, lat_min = INFINITY, lat_max = 0;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned c = fl_rpc_calls(d, i, TEST_SCALE);
		calls += c;
		req += c * fl_pct_mean(&d->out[i].req_bytes);
		if (c) {
			double m = fl_pct_mean(&d->out[i].latency_us);
			lat_min = m < lat_min ? m : lat_min;
			lat_max = m > lat_max ? m : lat_max;
		}
	}
	assert_int_equal(e.calls, calls);
	assert_true(calls > 14 && calls < 100);
	assert_true(fabs(e.req_bytes - req) <= 1e-9 * req);
	assert_true(e.req_bytes > 0 && e.resp_bytes > 0);
	/* The average call's latency lies between the smallest and largest method mean. */
	assert_true(e.latency_us_sum >= calls * lat_min && e.latency_us_sum <= calls * lat_max);
	fl_rpc_expect(d, 0, &e);
	assert_true(e.calls == 0 && e.req_bytes == 0 && e.resp_bytes == 0 &&
		e.latency_us_sum == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded),
		cmocka_unit_test(test_knots_exact),
		cmocka_unit_test(test_monotone),
		cmocka_unit_test(test_midpoints),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_mean_monte_carlo),
		cmocka_unit_test(test_log_tail_mean),
		cmocka_unit_test(test_bad_rpc_dist),
		cmocka_unit_test(test_bad_size_table),
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_expect),
	};
	return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
