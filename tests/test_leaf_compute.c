/* test_leaf_compute.c: the leaf's compute stages: sessions, overheads, story processors,
 * DLRM and the pipeline end to end without a network.
 *
 * Random tests draw from a splitmix64 stream whose seed is printed; set FL_TEST_SEED to
 * replay one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "deadline.h"
#include "dispatch.h"
#include "dlrm.h"
#include "fl_extract.h"
#include "frontload.pb-c.h"
#include "murmur.h"
#include "overheads.h"
#include "paths.h"
#include "pipeline.h"
#include "rng.h"
#include "sampler.h"
#include "session.h"
#include "stages.h"
#include "story_proc.h"
#include "wire.h"
#include "zcodec.h"

#define MS 1000000ull          /* ns per ms */
#define ERRLEN 256u

/* The run's seed: FL_TEST_SEED if set, else a fixed default; printed for replay. */
static uint64_t test_seed(void)
{
	const char *e = getenv("FL_TEST_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 0x1eaf0005ull;

	print_message("seed = %#llx (FL_TEST_SEED to replay)\n", (unsigned long long)seed);
	return seed;
}

/* ---- sessions ---- */

/* Get (create when absent) and store back, as the pipeline does. Returns get's result. */
static int sess_touch(struct fl_session_store *s, uint64_t id, uint64_t now_ns)
{
	struct fl_session se;
	int rc = fl_session_get(s, id, now_ns, 0, &se);

	se.requests++;
	fl_session_put(s, &se, now_ns);
	return rc;
}

/* 1: a full store evicts the least recently used session, and a get refreshes recency. */
static void test_session_lru_order(void **state)
{
	struct fl_session_store *s = fl_session_store_new(4, 0);
	struct fl_session_stats st;
	struct fl_session se;

	(void)state;
	assert_non_null(s);
	for (uint64_t id = 1; id <= 4; id++)
		assert_int_equal(sess_touch(s, id, id * MS), 0);
	assert_int_equal(sess_touch(s, 1, 5 * MS), 1);     /* 1 is now the most recent */
	assert_int_equal(sess_touch(s, 5, 6 * MS), 0);     /* evicts 2 */
	for (uint64_t id = 3; id <= 5; id++)
		assert_int_equal(sess_touch(s, id, (6 + id) * MS), 1);
	assert_int_equal(sess_touch(s, 1, 20 * MS), 1);
	assert_int_equal(fl_session_get(s, 2, 21 * MS, 0, &se), 0);  /* gone; evicts 3 */
	assert_int_equal(se.requests, 0);
	assert_int_equal(fl_session_get(s, 3, 22 * MS, 0, &se), 0);  /* evicts 4 */
	assert_int_equal(fl_session_get(s, 5, 23 * MS, 0, &se), 1);
	assert_int_equal(se.requests, 2);
	assert_int_equal(fl_session_get(s, 1, 24 * MS, 0, &se), 1);
	assert_int_equal(se.requests, 3);
	fl_session_stats(s, &st);
	assert_int_equal(st.evicted_lru, 3);
	assert_int_equal(st.misses, 7);
	assert_int_equal(st.created, 7);
	assert_int_equal(st.hits, 7);
	assert_int_equal(st.live, 4);
	assert_int_equal(st.capacity, 4);
	fl_session_store_free(s);
}

/* 2: sessions idle beyond the TTL are dropped; create = 1 always starts fresh. */
static void test_session_ttl(void **state)
{
	struct fl_session_store *s = fl_session_store_new(8, 10);
	struct fl_session se, got;
	struct fl_session_stats st;

	(void)state;
	assert_non_null(s);
	assert_int_equal(fl_session_get(s, 7, 100 * MS, 1, &se), 0);
	se.requests = 3;
	se.story_ids[0] = 42;
	se.nstories = 1;
	se.story_head = 1;
	fl_session_put(s, &se, 100 * MS);
	assert_int_equal(fl_session_get(s, 7, 105 * MS, 0, &got), 1);
	assert_int_equal(got.requests, 3);
	assert_int_equal(got.story_ids[0], 42);
	assert_int_equal(got.touched_ns, 105 * MS);
	assert_int_equal(fl_session_get(s, 7, 116 * MS, 0, &got), 0);  /* idle 11 ms */
	assert_int_equal(got.requests, 0);
	assert_int_equal(got.nstories, 0);
	assert_int_equal(got.id, 7);
	fl_session_put(s, &se, 117 * MS);
	assert_int_equal(fl_session_get(s, 7, 118 * MS, 1, &got), 0);  /* create: fresh */
	assert_int_equal(got.requests, 0);
	fl_session_stats(s, &st);
	assert_int_equal(st.expired_ttl, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.created, 3);
	assert_int_equal(st.live, 1);
	fl_session_store_free(s);
}

/* 3: 10x capacity distinct sessions never hold more than capacity. */
static void test_session_capacity(void **state)
{
	const size_t cap = 1000;
	struct fl_session_store *s = fl_session_store_new(cap, 0);
	struct fl_session_stats st;

	(void)state;
	assert_non_null(s);
	for (uint64_t i = 0; i < 10 * cap; i++) {
		sess_touch(s, 0x1000 + i * 7919, i);
		if (i % 97 == 0) {
			fl_session_stats(s, &st);
			assert_true(st.live <= cap);
		}
	}
	fl_session_stats(s, &st);
	assert_int_equal(st.live, cap);
	/* Full: the store's bytes are its bound, a node per session plus the buckets. */
	assert_true(st.bytes_per_session >= sizeof(struct fl_session));
	assert_int_equal(st.bytes_per_session, fl_session_node_bytes());
	assert_int_equal(st.bytes, st.max_bytes);
	assert_true(st.max_bytes >= cap * st.bytes_per_session);
	assert_true(st.max_bytes <= cap * (st.bytes_per_session + 2 * sizeof(void *)));
	assert_int_equal(st.misses, 10 * cap);
	assert_int_equal(st.created, 10 * cap);
	assert_int_equal(st.evicted_lru, 9 * cap);
	assert_int_equal(st.hits, 0);
	assert_null(fl_session_store_new(0, 0));
	fl_session_store_free(s);
}

/* ---- overheads ---- */

static struct fl_overheads *ovh_new(uint32_t limit, uint64_t stale_ns)
{
	struct fl_overheads_config c = { .inflight_limit = limit, .stale_ns = stale_ns,
		.acl_entries = 256, .seed = 11 };
	char err[ERRLEN];
	struct fl_overheads *o = fl_overheads_new(&c, err, sizeof(err));

	if (o == NULL)
		fail_msg("fl_overheads_new: %s", err);
	return o;
}

/* 4: at the inflight limit requests are shed; a leave makes room again. */
static void test_ovh_inflight(void **state)
{
	struct fl_overheads *o = ovh_new(3, 0);
	struct fl_overheads_stats st;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	fl_overheads_leave(o);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.overloaded, 3);
	assert_int_equal(st.inflight, 3);
	assert_int_equal(st.inflight_peak, 3);
	for (int i = 0; i < 5; i++)
		fl_overheads_leave(o);   /* unmatched leaves never wrap */
	fl_overheads_stats(o, &st);
	assert_int_equal(st.inflight, 0);
	fl_overheads_free(o);
}

/* 5: the ACL admits the five methods and denies any other; the key hash follows the key. */
static void test_ovh_acl(void **state)
{
	struct fl_overheads *o = ovh_new(8, 0);
	struct fl_overheads_stats st;
	struct fl_ovh_req r = { .user_id = 77, .session_id = 88, .request_id = 1,
		.client_ts_ns = 1000, .now_ns = 2000 };
	struct fl_ovh_out out, out2;
	struct fl_overheads_config bad = { .inflight_limit = 1, .acl_entries = 8 };
	char err[ERRLEN] = "";

	(void)state;
	for (uint32_t m = 0; m < 5; m++) {
		r.method = m;
		assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
		assert_int_equal(out.admit_ns, 2000);
		assert_int_equal(out.deadline_ns, 0);
	}
	r.method = 5;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_DENIED);
	r.method = 1234567;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_DENIED);
	r.method = 2;
	fl_overheads_run(o, &r, &out);
	fl_overheads_run(o, &r, &out2);
	assert_int_equal(out.key_hash, out2.key_hash);
	r.request_id = 2;
	fl_overheads_run(o, &r, &out2);
	assert_int_not_equal(out.key_hash, out2.key_hash);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.admitted, 8);
	assert_int_equal(st.denied, 2);
	assert_int_equal(st.per_method[0], 1);
	assert_int_equal(st.per_method[2], 4);
	assert_int_equal(st.per_method[4], 1);
	fl_overheads_free(o);
	assert_null(fl_overheads_new(&bad, err, sizeof(err)));
	assert_true(strlen(err) > 0);
}

/* 6: a client stamp older than stale_ns is stale; a future stamp is not. */
static void test_ovh_stale(void **state)
{
	struct fl_overheads *o = ovh_new(8, 5 * MS);
	struct fl_overheads *never = ovh_new(8, 0);
	struct fl_ovh_req r = { .method = 1, .now_ns = 1000 * MS };
	struct fl_ovh_out out;
	struct fl_overheads_stats st;

	(void)state;
	r.client_ts_ns = r.now_ns - 6 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_STALE);
	assert_int_equal(fl_overheads_run(never, &r, &out), FL_OVH_ADMIT);
	r.client_ts_ns = r.now_ns - 4 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
	assert_int_equal(out.deadline_ns, r.now_ns + 5 * MS);
	r.client_ts_ns = r.now_ns + 60000 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.admitted, 2);
	fl_overheads_free(o);
	fl_overheads_free(never);
}

/* ---- story processors ---- */

static int sp_naive_cmp(const void *pa, const void *pb)
{
	const struct fl_sp_story *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Random stories; scores on a coarse grid so ties are common. */
static void sp_random(struct fl_rng *r, struct fl_sp_story *s, size_t n, uint8_t *bodies)
{
	for (size_t i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].id = fl_rng_below(r, 1000000);
		s[i].score = (float)fl_rng_below(r, 50) / 8.0f - 3.0f;
		for (unsigned f = 0; f < FL_SP_FEAT; f++)
			s[i].feat[f] = (float)(fl_rng_unit(r) * 8.0 - 4.0);
		s[i].slot = (uint32_t)i;
		s[i].body = bodies + i * 64;
		s[i].body_len = 64;
		for (size_t b = 0; b < 64; b++)
			bodies[i * 64 + b] = (uint8_t)fl_rng_next(r);
	}
}

/* 7: top-K equals the first K of a full sort, for K below, at and above n. */
static void test_sp_topk(void **state)
{
	enum { N = 300 };
	static const size_t ks[] = { 1, 2, 7, 64, 299, 300, 500 };
	struct fl_sp_story *s = malloc(N * sizeof(*s)), *sorted = malloc(N * sizeof(*s));
	uint8_t *bodies = malloc(N * 64);
	uint32_t order[N];
	struct fl_rng r;

	(void)state;
	fl_rng_seed(&r, test_seed());
	for (int round = 0; round < 20; round++) {
		size_t n = 1 + fl_rng_below(&r, N);

		sp_random(&r, s, n, bodies);
		memcpy(sorted, s, n * sizeof(*s));
		qsort(sorted, n, sizeof(*s), sp_naive_cmp);
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
			size_t k = fl_sp_topk(s, n, ks[ki], order);

			assert_int_equal(k, ks[ki] < n ? ks[ki] : n);
			for (size_t i = 0; i < k; i++) {
				assert_int_equal(s[order[i]].id, sorted[i].id);
				assert_true(s[order[i]].score == sorted[i].score);
			}
		}
	}
	assert_int_equal(fl_sp_topk(s, 0, 5, order), 0);
	free(s);
	free(sorted);
	free(bodies);
}

/* Score, filter, top-K, blend and serialize one batch; returns the checksum. */
static uint64_t sp_run(uint64_t wseed, uint64_t dseed, size_t n, uint32_t *kept_out,
	float *scores)
{
	struct fl_sp *sp = fl_sp_new(n, wseed);
	struct fl_sp_story *s = malloc(n * sizeof(*s));
	uint8_t *bodies = malloc(n * 64);
	uint32_t *order = malloc(n * sizeof(*order));
	struct fl_rng r;
	size_t kept, k, packed;
	uint64_t sum;

	assert_non_null(sp);
	fl_rng_seed(&r, dseed);
	sp_random(&r, s, n, bodies);
	fl_sp_score(sp, s, n, 4);
	kept = fl_sp_filter(sp, s, n, NULL, 0);
	k = fl_sp_topk(s, kept, 16, order);
	fl_sp_blend(s, order, k, 2);
	for (size_t i = 1; i < k; i++)
		assert_true(s[order[i - 1]].score >= s[order[i]].score);
	sum = fl_sp_serialize(sp, s, order, k, 3, &packed);
	assert_true(packed > 8 + k * (1 + 4 + FL_SP_FEAT + 1));
	for (size_t i = 0; i < k; i++)
		scores[i] = s[order[i]].score;
	*kept_out = (uint32_t)kept;
	fl_sp_free(sp);
	free(s);
	free(bodies);
	free(order);
	return sum;
}

/* 8: the processors are deterministic for a seed, and the weights follow the seed. */
static void test_sp_determinism(void **state)
{
	float a[16], b[16], c[16];
	uint32_t ka, kb, kc;
	uint64_t sa = sp_run(1, 99, 100, &ka, a);
	uint64_t sb = sp_run(1, 99, 100, &kb, b);
	uint64_t sc = sp_run(2, 99, 100, &kc, c);

	(void)state;
	assert_int_equal(sa, sb);
	assert_int_equal(ka, kb);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_not_equal(sa, sc);
	assert_true(ka >= 85 && ka <= 100);
}

/* 9: the filter drops repeated ids, session-seen ids and score outliers, keeping order. */
static void test_sp_filter(void **state)
{
	struct fl_sp *sp = fl_sp_new(16, 3);
	struct fl_sp_story s[12];
	const uint64_t seen[] = { 105, 999 };
	size_t kept;

	(void)state;
	assert_non_null(sp);
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 12; i++) {
		s[i].id = 100 + (uint64_t)i;
		s[i].score = 0.5f + 0.01f * (float)i;
	}
	s[3].id = 101;          /* repeat of story 1 */
	s[8].score = -50.0f;    /* outlier */
	s[10].feat[2] = NAN;
	kept = fl_sp_filter(sp, s, 12, seen, 2);
	assert_int_equal(kept, 8);
	const uint64_t want[] = { 100, 101, 102, 104, 106, 107, 109, 111 };
	for (size_t i = 0; i < kept; i++)
		assert_int_equal(s[i].id, want[i]);
	fl_sp_free(sp);
}

/* ---- DLRM ---- */

static void dlrm_inputs(struct fl_rng *r, float *dense, uint32_t *sparse, size_t n)
{
	for (size_t i = 0; i < n * FL_DLRM_DENSE; i++)
		dense[i] = (float)(fl_rng_unit(r) * 4.0);
	for (size_t i = 0; i < n * FL_DLRM_SPARSE; i++)
		sparse[i] = (uint32_t)fl_rng_next(r);
}

/* 10: outputs in (0, 1), the same for the same seed, different for another; one dense
 * input changes the output. */
static void test_dlrm_forward(void **state)
{
	enum { N = 37 };
	char err[ERRLEN];
	struct fl_dlrm *m1 = fl_dlrm_new(500, 7, err, sizeof(err));
	struct fl_dlrm *m2 = fl_dlrm_new(500, 7, err, sizeof(err));
	struct fl_dlrm *m3 = fl_dlrm_new(500, 8, err, sizeof(err));
	struct fl_dlrm_scratch *sc = fl_dlrm_scratch_new(16);   /* N runs in chunks */
	float dense[N * FL_DLRM_DENSE], o1[N], o2[N], o3[N], o4[N];
	uint32_t sparse[N * FL_DLRM_SPARSE];
	struct fl_rng r;
	int differ = 0;

	(void)state;
	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(m3);
	assert_non_null(sc);
	fl_rng_seed(&r, test_seed());
	dlrm_inputs(&r, dense, sparse, N);
	fl_dlrm_forward(m1, sc, dense, sparse, N, o1);
	fl_dlrm_forward(m2, sc, dense, sparse, N, o2);
	fl_dlrm_forward(m3, sc, dense, sparse, N, o3);
	for (int i = 0; i < N; i++) {
		assert_true(o1[i] > 0.0f && o1[i] < 1.0f);
		differ |= o1[i] != o3[i];
	}
	assert_memory_equal(o1, o2, sizeof(o1));
	assert_true(differ);
	dense[5 * FL_DLRM_DENSE + 3] += 2.5f;
	fl_dlrm_forward(m1, sc, dense, sparse, N, o4);
	assert_true(o4[5] != o1[5]);
	assert_true(o4[4] == o1[4] && o4[6] == o1[6]);
	assert_null(fl_dlrm_new(0, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "emb_rows"));
	fl_dlrm_scratch_free(sc);
	fl_dlrm_free(m1);
	fl_dlrm_free(m2);
	fl_dlrm_free(m3);
}

/* 11: one sgemm layer against a naive triple loop. */
static void test_dlrm_linear(void **state)
{
	enum { N = 5, IN = 19, OUT = 11 };
	float x[N * IN], w[OUT * IN], b[OUT], y[N * OUT];
	struct fl_rng r;

	(void)state;
	fl_rng_seed(&r, 12345);
	for (int i = 0; i < N * IN; i++)
		x[i] = (float)(fl_rng_unit(&r) * 2.0 - 1.0);
	for (int i = 0; i < OUT * IN; i++)
		w[i] = (float)(fl_rng_unit(&r) * 2.0 - 1.0);
	for (int i = 0; i < OUT; i++)
		b[i] = (float)(fl_rng_unit(&r) - 0.5);
	for (int relu = 0; relu < 2; relu++) {
		int negatives = 0;

		fl_dlrm_linear(x, N, IN, w, b, OUT, relu, y);
		for (int n = 0; n < N; n++) {
			for (int o = 0; o < OUT; o++) {
				double acc = b[o];

				for (int i = 0; i < IN; i++)
					acc += (double)x[n * IN + i] * w[o * IN + i];
				negatives += acc < 0;
				if (relu && acc < 0)
					acc = 0;
				assert_true(fabs(acc - y[n * OUT + o]) < 1e-4);
			}
		}
		assert_true(negatives > 0);   /* ReLU was exercised */
	}
}

/* ---- pipeline end to end ---- */

/* Test extractors: each reads story words and writes dense and sparse features. */
static void tx_sum(struct fl_ctx *ctx)
{
	uint32_t a = FL_W(ctx, 0), b = FL_W(ctx, 1);

	FL_YIELD(ctx, a, (int32_t)(b >> 4));
	FL_YIELD_SPARSE(ctx, a % 977u, (int32_t)(a ^ b));
}

static void tx_table(struct fl_ctx *ctx)
{
	uint32_t a = FL_W(ctx, 5);

	FL_YIELD(ctx, a >> 20, (int32_t)(FL_T(ctx, a) >> 6));
	FL_YIELD(ctx, a >> 8, (int32_t)(FL_W(ctx, 9) & 0xffffu));
}

static void tx_loop(struct fl_ctx *ctx)
{
	uint32_t acc = ctx->call_word;

	for (uint32_t i = 0; i < 16; i++)
		acc = fl_mix32(acc ^ FL_W(ctx, i * 3u));
	FL_YIELD(ctx, acc, (int32_t)(acc & 0xfffffu) - 0x80000);
	FL_YIELD_SPARSE(ctx, acc >> 12, (int32_t)(acc & 0xffffu));
}

static void tx_lookup(struct fl_ctx *ctx)
{
	const uint32_t *v = fl_hmap_find(ctx, ctx->qkeys[FL_W(ctx, 2) % ctx->nqkeys]);

	FL_YIELD(ctx, FL_W(ctx, 3), v != NULL ? (int32_t)(v[0] & 0xffffu) : 1);
}

static const struct fl_fn_entry tx_registry[] = {
	{ tx_sum, 0, 0, 0 }, { tx_table, 1, 0, 0 }, { tx_loop, 2, 0, 0 }, { tx_lookup, 3, 0, 0 },
};

#define PIPE_EPS 8u        /* extract_per_story */
#define PIPE_TOPK 10u
#define PIPE_MAX_STORIES 32u
#define PIPE_MAX_REPLY (1u << 20)

/* Everything one pipeline test needs. */
struct pipe_fix {
	struct fl_plan plan;
	struct fl_corpus corpus;
	struct fl_pct resp;
	struct fl_session_store *sessions;
	struct fl_pipeline *p;
	struct fl_worker *wk;
	struct fl_zcodec *z;
	struct fl_rng rng;
	struct fl_pipeline_config cfg;  /* the pipeline's config, for variants of it */
};

static int pipe_setup(void **state)
{
	struct pipe_fix *f = calloc(1, sizeof(*f));
	char err[ERRLEN], path[4096];
	struct fl_pipeline_config c = { 0 };

	if (f == NULL)
		return -1;
	if (fl_plan_init(&f->plan, tx_registry, 4, 5, 0, err, sizeof(err)) < 0 ||
		fl_corpus_generate(&f->corpus, 9, 2u << 20, err, sizeof(err)) < 0 ||
		fl_data_path("feed_aggregator_resp_sizes.json", path, sizeof(path), err,
			sizeof(err)) < 0 ||
		fl_size_table_load(path, "resp_size_", &f->resp, err, sizeof(err)) < 0) {
		print_error("setup: %s\n", err);
		return -1;
	}
	f->sessions = fl_session_store_new(100, 0);
	c.plan = &f->plan;
	c.corpus = &f->corpus;
	c.resp_bytes = &f->resp;
	c.sessions = f->sessions;
	c.extract_per_story = PIPE_EPS;
	c.max_stories = PIPE_MAX_STORIES;
	c.body_q16 = 65536;
	c.hit_q16 = 32768;
	c.score_passes = 4;
	c.topk = PIPE_TOPK;
	c.blend_passes = 2;
	c.serialize_passes = 2;
	c.emb_rows = 1000;
	c.max_reply_bytes = PIPE_MAX_REPLY;
	c.max_request_bytes = 1u << 20;
	c.zstd_level = 3;
	c.seed = 42;
	f->cfg = c;
	f->p = fl_pipeline_new(&c, err, sizeof(err));
	if (f->p == NULL) {
		print_error("setup: %s\n", err);
		return -1;
	}
	f->wk = fl_worker_new(f->p, 0, err, sizeof(err));
	f->z = fl_zcodec_new(3);
	if (f->wk == NULL || f->z == NULL || f->sessions == NULL) {
		print_error("setup: %s\n", err);
		return -1;
	}
	fl_rng_seed(&f->rng, 77);
	*state = f;
	return 0;
}

static int pipe_teardown(void **state)
{
	struct pipe_fix *f = *state;

	fl_worker_free(f->wk);
	fl_pipeline_free(f->p);
	fl_session_store_free(f->sessions);
	fl_zcodec_free(f->z);
	fl_corpus_free(&f->corpus);
	fl_plan_free(&f->plan);
	free(f);
	return 0;
}

/* A packed LeafRequest with nstories stories (ids id0, id0 + 1, ...), into out. */
static void pipe_request(struct pipe_fix *f, Frontload__InboundMethod method, uint64_t session,
	size_t nstories, uint64_t id0, uint32_t reply_bytes, int want_zstd, struct fl_bytes *out)
{
	Frontload__LeafRequest req = FRONTLOAD__LEAF_REQUEST__INIT;
	Frontload__Story *st = calloc(nstories, sizeof(*st));
	Frontload__Story **stp = calloc(nstories, sizeof(*stp));
	uint8_t *bodies = malloc(nstories * 300);

	assert_non_null(st);
	assert_non_null(stp);
	assert_non_null(bodies);
	for (size_t i = 0; i < nstories; i++) {
		size_t len = 40 + fl_rng_below(&f->rng, 260);

		frontload__story__init(&st[i]);
		st[i].id = id0 + i;
		fl_corpus_copy(&f->corpus, fl_rng_next(&f->rng), bodies + i * 300, len);
		st[i].body.data = bodies + i * 300;
		st[i].body.len = len;
		stp[i] = &st[i];
	}
	req.method = method;
	req.session_id = session;
	req.user_id = 5;
	req.n_stories = nstories;
	req.stories = stp;
	req.want_zstd = want_zstd;
	req.reply_bytes = reply_bytes;
	assert_int_equal(fl_bytes_reserve(out, frontload__leaf_request__get_packed_size(&req)), 0);
	out->len = frontload__leaf_request__pack(&req, out->data);
	free(st);
	free(stp);
	free(bodies);
}

/* Decode, compute and reply one request; returns the unpacked reply. */
static Frontload__LeafReply *pipe_run(struct pipe_fix *f, struct fl_work *w, uint64_t request_id,
	const struct fl_bytes *payload, uint16_t flags)
{
	char err[ERRLEN] = "";
	Frontload__LeafReply *rep;

	memset(w, 0, sizeof(*w));
	w->request_id = request_id;
	w->frame_flags = flags;
	w->payload = payload->data;
	w->payload_len = payload->len;
	if (fl_pipeline_decode(f->wk, w, err, sizeof(err)) < 0)
		fail_msg("decode: %s", err);
	assert_int_equal(fl_pipeline_compute(f->wk, w), 0);
	w->fanout_calls = 3;
	assert_int_equal(fl_pipeline_reply(f->wk, w), 0);
	rep = frontload__leaf_reply__unpack(NULL, w->out.len, w->out.data);
	assert_non_null(rep);
	return rep;
}

static void pipe_check_sorted(const Frontload__LeafReply *rep)
{
	for (size_t i = 1; i < rep->n_ranked; i++)
		assert_true(rep->ranked[i - 1]->score >= rep->ranked[i]->score);
}

/* 12: a zstd-framed request, zstd reply: counts, sizes, flags and stage times. */
static void test_pipe_end_to_end(void **state)
{
	struct pipe_fix *f = *state;
	struct fl_bytes req = { 0 }, zreq = { 0 }, plain = { 0 };
	struct fl_work w;
	Frontload__LeafReply *rep;

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__STREAM_DATA, 1, 24, 1000, 5000, 1, &req);
	assert_int_equal(fl_zcodec_compress(f->z, req.data, req.len, &zreq), 0);
	rep = pipe_run(f, &w, 1, &zreq, FL_FRAME_ZSTD);
	assert_int_equal(rep->session_id, 1);
	assert_int_equal(rep->n_ranked, PIPE_TOPK);
	pipe_check_sorted(rep);
	for (size_t i = 0; i < rep->n_ranked; i++)
		assert_true(rep->ranked[i]->id >= 1000 && rep->ranked[i]->id < 1024);
	assert_int_equal(rep->payload_raw_bytes, 5000);
	assert_true(rep->payload_zstd);
	assert_int_equal(fl_zcodec_decompress(f->z, rep->payload.data, rep->payload.len, 1u << 20,
		&plain), 0);
	assert_int_equal(plain.len, 5000);
	assert_int_equal(rep->extract_calls, 24 * PIPE_EPS);
	assert_int_equal(w.extract_calls, 24 * PIPE_EPS);
	assert_int_equal(rep->fanout_calls, 3);
	assert_int_equal(w.nranked, PIPE_TOPK);
	assert_int_equal(w.out_flags, 0);
	print_message("stage cpu ns (24 stories x %u calls):", PIPE_EPS);
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		print_message(" %s=%llu", fl_stage_name((enum fl_stage)s),
			(unsigned long long)w.t.cpu_ns[s]);
	print_message("\n");
	static const enum fl_stage timed[] = { FL_STAGE_DECODE, FL_STAGE_EXTRACT,
		FL_STAGE_STORIES, FL_STAGE_RANK, FL_STAGE_COMPRESS, FL_STAGE_REPLY };
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++) {
		assert_true(w.t.cpu_ns[timed[i]] > 0);
		assert_true(w.t.wall_ns[timed[i]] > 0);
	}
	assert_int_equal(w.t.cpu_ns[FL_STAGE_FANOUT], 0);
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);
	assert_null(w.req);
	fl_bytes_free(&req);
	fl_bytes_free(&zreq);
	fl_bytes_free(&plain);
}

/* Worker scratch after one 512 KiB plain reply, with scratch_keep_bytes keep. */
static size_t pipe_scratch_after(struct pipe_fix *f, size_t keep)
{
	struct fl_pipeline_config c = f->cfg;
	struct fl_bytes req = { 0 };
	struct fl_work w;
	char err[ERRLEN];
	Frontload__LeafReply *rep;
	struct pipe_fix g = *f;
	size_t n;

	c.scratch_keep_bytes = keep;
	g.p = fl_pipeline_new(&c, err, sizeof(err));
	assert_non_null(g.p);
	g.wk = fl_worker_new(g.p, 0, err, sizeof(err));
	assert_non_null(g.wk);
	pipe_request(&g, FRONTLOAD__INBOUND_METHOD__STREAM_DATA, 1, 8, 1, 512u << 10, 0, &req);
	rep = pipe_run(&g, &w, 1, &req, 0);
	assert_int_equal(rep->payload_raw_bytes, 512u << 10);
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);
	fl_worker_trim(g.wk);
	n = fl_worker_scratch_bytes(g.wk);
	fl_worker_free(g.wk);
	fl_pipeline_free(g.p);
	fl_bytes_free(&req);
	return n;
}

/* A reply buffer one large reply grew is freed after the request when it is over
 * scratch_keep_bytes, and kept (grow-only) with 0; the worker publishes what it holds. */
static void test_pipe_scratch_trim(void **state)
{
	struct pipe_fix *f = *state;
	size_t kept = pipe_scratch_after(f, 0), trimmed = pipe_scratch_after(f, 64u << 10);

	print_message("worker scratch after a 512 KiB reply: grow-only %zu B, keep 64 KiB %zu B\n",
		kept, trimmed);
	assert_true(kept >= 512u << 10);
	assert_true(trimmed < 256u << 10);
}

/* 13: getStoriesUncompressed never compresses; sampled sizes are capped and follow the
 * request id; stories beyond max_stories are ignored. */
static void test_pipe_methods(void **state)
{
	struct pipe_fix *f = *state;
	struct fl_bytes req = { 0 };
	struct fl_work w;
	Frontload__LeafReply *rep;
	uint32_t sizes[3];

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__GET_STORIES_UNCOMPRESSED, 2, 40, 5000, 777, 1,
		&req);
	rep = pipe_run(f, &w, 2, &req, 0);
	assert_false(rep->payload_zstd);
	assert_int_equal(rep->payload.len, 777);
	assert_int_equal(rep->payload_raw_bytes, 777);
	assert_int_equal(rep->extract_calls, PIPE_MAX_STORIES * PIPE_EPS);
	assert_int_equal(rep->n_ranked, PIPE_TOPK);
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__STREAM_IFR_PRIORITY_RANKING, 3, 4, 9000, 0, 0,
		&req);
	for (int i = 0; i < 3; i++) {
		rep = pipe_run(f, &w, i < 2 ? 500 : 501, &req, 0);
		sizes[i] = rep->payload_raw_bytes;
		assert_int_equal(rep->payload.len, sizes[i]);
		assert_true(sizes[i] <= PIPE_MAX_REPLY);
		assert_int_equal(rep->n_ranked, 4 - (i > 0 ? 4 : 0));  /* later: session-seen */
		frontload__leaf_reply__free_unpacked(rep, NULL);
		fl_work_clear(&w);
	}
	assert_int_equal(sizes[0], sizes[1]);
	fl_bytes_free(&req);
}

/* 14: createAndPrimeSession starts fresh; getAllStories merges the remembered stories. */
static void test_pipe_sessions(void **state)
{
	struct pipe_fix *f = *state;
	struct fl_bytes req = { 0 };
	struct fl_work w;
	Frontload__LeafReply *rep;
	uint64_t first[PIPE_TOPK];
	size_t found = 0;

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__CREATE_AND_PRIME_SESSION, 9, 20, 100, 10, 0,
		&req);
	rep = pipe_run(f, &w, 10, &req, 0);
	assert_int_equal(rep->n_ranked, PIPE_TOPK);
	for (size_t i = 0; i < PIPE_TOPK; i++)
		first[i] = rep->ranked[i]->id;
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES, 9, 20, 200, 10, 0, &req);
	rep = pipe_run(f, &w, 11, &req, 0);
	assert_int_equal(rep->n_ranked, 2 * PIPE_TOPK);
	pipe_check_sorted(rep);
	for (size_t i = 0; i < rep->n_ranked; i++)
		for (size_t j = 0; j < PIPE_TOPK; j++)
			found += rep->ranked[i]->id == first[j];
	assert_int_equal(found, PIPE_TOPK);
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);

	/* A new createAndPrimeSession forgets: the first stories rank again. */
	pipe_request(f, FRONTLOAD__INBOUND_METHOD__CREATE_AND_PRIME_SESSION, 9, 20, 100, 10, 0,
		&req);
	rep = pipe_run(f, &w, 12, &req, 0);
	assert_int_equal(rep->n_ranked, PIPE_TOPK);
	frontload__leaf_reply__free_unpacked(rep, NULL);
	fl_work_clear(&w);
	fl_bytes_free(&req);
}

/* ---- deadlines (deadline.h) ---- */

/* The verdict: none without a deadline; expired at or after it; would-miss when the rest
 * does not fit in what is left; go when it does (exactly fitting is go). */
static void test_dl_decide(void **state)
{
	(void)state;
	assert_int_equal(fl_dl_decide(5 * MS, 0, UINT64_MAX), FL_DL_GO);
	assert_int_equal(fl_dl_decide(10 * MS, 10 * MS, 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide(11 * MS, 10 * MS, 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide(4 * MS, 10 * MS, 6 * MS), FL_DL_GO);
	assert_int_equal(fl_dl_decide(4 * MS, 10 * MS, 6 * MS + 1), FL_DL_WOULD_MISS);
	assert_int_equal(fl_dl_decide(9 * MS, 10 * MS, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide(0, UINT64_MAX, UINT64_MAX - 1), FL_DL_GO);
}

/* The queue bound comes first (OVERLOADED even with time left), 0 means none, and waits
 * within it fall through to the deadline verdict. */
static void test_dl_decide_queue(void **state)
{
	(void)state;
	assert_int_equal(fl_dl_decide_queue(200 * MS, 50 * MS, 100 * MS, 0, 0), FL_DL_QUEUE_WAIT);
	assert_int_equal(fl_dl_decide_queue(200 * MS, 50 * MS, 100 * MS, 900 * MS, 0),
		FL_DL_QUEUE_WAIT);
	assert_int_equal(fl_dl_decide_queue(150 * MS, 50 * MS, 100 * MS, 0, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide_queue(900 * MS, 50 * MS, 0, 0, 0), FL_DL_GO);
	assert_int_equal(fl_dl_decide_queue(120 * MS, 50 * MS, 100 * MS, 110 * MS, 0),
		FL_DL_EXPIRED);
	assert_int_equal(fl_dl_decide_queue(120 * MS, 50 * MS, 100 * MS, 130 * MS, 20 * MS),
		FL_DL_WOULD_MISS);
	/* A clock read before the enqueue stamp (another thread's) is not a wait. */
	assert_int_equal(fl_dl_decide_queue(40 * MS, 50 * MS, 1, 0, 0), FL_DL_GO);
}

/* Client realtime deadline onto the local monotonic clock: none stays 0, time left is
 * kept, a passed deadline lands in the past but never on 0 (which would mean none). */
static void test_dl_local(void **state)
{
	const uint64_t wall = 1700000000ull * 1000000000ull, mono = 5000 * MS;

	(void)state;
	assert_int_equal(fl_dl_local(0, wall, mono), 0);
	assert_int_equal(fl_dl_local(wall + 300 * MS, wall, mono), mono + 300 * MS);
	assert_int_equal(fl_dl_local(wall - 20 * MS, wall, mono), mono - 20 * MS);
	assert_int_equal(fl_dl_local(1, wall, mono), 1);
	assert_int_equal(fl_dl_decide(mono, fl_dl_local(wall - 1, wall, mono), 0), FL_DL_EXPIRED);
	assert_int_equal(fl_dl_local(UINT64_MAX, 0, 10), UINT64_MAX);
}

/* The estimate: the first sample seeds it; a sample above moves it up 1/32, one below
 * down 3/32, never past the sample, so it settles at the 25th percentile; rest sums the
 * stages from the one asked for. */
static void test_dl_estimate(void **state)
{
	static const uint64_t cycle[4] = { 40 * MS, 10 * MS, 30 * MS, 20 * MS };
	struct fl_dl_est e;
	uint64_t a[FL_STAGE_COUNT] = { 0 }, b[FL_STAGE_COUNT] = { 0 };

	(void)state;
	memset(&e, 0, sizeof(e));
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		a[s] = (uint64_t)(s + 1) * 32 * MS;
	fl_dl_est_add(&e, a);
	assert_int_equal(e.wall_ns[FL_STAGE_RANK], 5 * 32 * MS);
	b[FL_STAGE_RANK] = 10 * 32 * MS;
	b[FL_STAGE_EXTRACT] = 0;
	b[FL_STAGE_DECODE] = 32 * MS + 1000;  /* just above: the move stops at the sample */
	fl_dl_est_add(&e, b);
	assert_int_equal(e.wall_ns[FL_STAGE_RANK], 5 * 32 * MS + 5 * MS);
	assert_int_equal(e.wall_ns[FL_STAGE_EXTRACT], 3 * 32 * MS - 9 * MS);
	assert_int_equal(e.wall_ns[FL_STAGE_DECODE], 32 * MS + 1000);
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_REPLY), e.wall_ns[FL_STAGE_REPLY]);
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_FANOUT), e.wall_ns[FL_STAGE_FANOUT] +
		e.wall_ns[FL_STAGE_COMPRESS] + e.wall_ns[FL_STAGE_REPLY]);
	uint64_t all = 0;
	for (int s = 0; s < FL_STAGE_COUNT; s++)
		all += e.wall_ns[s];
	assert_int_equal(fl_dl_est_rest(&e, FL_STAGE_DECODE), all);

	/* 10, 20, 30, 40 ms over and over: the 25th percentile lies between 10 and 20. */
	for (int i = 0; i < 2000; i++) {
		a[FL_STAGE_FANOUT] = cycle[i % 4];
		fl_dl_est_add(&e, a);
	}
	assert_true(e.wall_ns[FL_STAGE_FANOUT] >= 10 * MS && e.wall_ns[FL_STAGE_FANOUT] <= 20 * MS);
	/* Then everything takes 100 ms: it climbs there and stays. */
	for (int i = 0; i < 200; i++) {
		a[FL_STAGE_FANOUT] = 100 * MS;
		fl_dl_est_add(&e, a);
	}
	assert_int_equal(e.wall_ns[FL_STAGE_FANOUT], 100 * MS);
	assert_string_equal(fl_dl_stage_name(FL_DL_FANOUT), "fanout");
	assert_string_equal(fl_dl_stage_name(FL_DL_ADMIT), "admit");
}

/* A would-miss run lets every FL_DL_PROBE_EVERY-th request through; GO resets the run;
 * expired and queue-wait verdicts are never let through and do not count. */
static void test_dl_probe(void **state)
{
	struct fl_dl_est e;
	unsigned through = 0;

	(void)state;
	memset(&e, 0, sizeof(e));
	for (unsigned i = 0; i < 4 * FL_DL_PROBE_EVERY; i++)
		through += fl_dl_probe(&e, FL_DL_WOULD_MISS) == FL_DL_GO;
	assert_int_equal(through, 4);
	for (unsigned i = 0; i < FL_DL_PROBE_EVERY - 1; i++)
		assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_WOULD_MISS);
	assert_int_equal(fl_dl_probe(&e, FL_DL_GO), FL_DL_GO);
	for (unsigned i = 0; i < FL_DL_PROBE_EVERY - 1; i++)
		assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_WOULD_MISS);
	for (unsigned i = 0; i < 3 * FL_DL_PROBE_EVERY; i++) {
		assert_int_equal(fl_dl_probe(&e, FL_DL_EXPIRED), FL_DL_EXPIRED);
		assert_int_equal(fl_dl_probe(&e, FL_DL_QUEUE_WAIT), FL_DL_QUEUE_WAIT);
	}
	assert_int_equal(fl_dl_probe(&e, FL_DL_WOULD_MISS), FL_DL_GO);
}

/* A gate that refuses the stage in *arg (and records what it was asked). */
struct gate_probe {
	enum fl_stage refuse;
	unsigned asked;  /* bit per stage asked about */
};

static int gate_refuse(void *arg, enum fl_stage next)
{
	struct gate_probe *g = arg;

	g->asked |= 1u << next;
	return next == g->refuse;
}

/* The pipeline asks its gate before extraction and before ranking; a refusal ends compute
 * with 1 and the stage named, no ranking done (and no extraction when refused first). */
static void test_pipe_gate(void **state)
{
	struct pipe_fix *f = *state;
	struct fl_bytes req = { 0 };
	char err[ERRLEN] = "";
	struct fl_work w;
	struct gate_probe g;

	pipe_request(f, FRONTLOAD__INBOUND_METHOD__STREAM_DATA, 3, 20, 100, 10, 0, &req);
	for (int round = 0; round < 3; round++) {
		enum fl_stage refuse = round == 0 ? FL_STAGE_EXTRACT : round == 1 ? FL_STAGE_RANK :
			FL_STAGE_COUNT;
		memset(&w, 0, sizeof(w));
		g = (struct gate_probe){ refuse, 0 };
		w.gate = gate_refuse;
		w.gate_arg = &g;
		w.payload = req.data;
		w.payload_len = req.len;
		assert_int_equal(fl_pipeline_decode(f->wk, &w, err, sizeof(err)), 0);
		int rc = fl_pipeline_compute(f->wk, &w);
		if (refuse == FL_STAGE_COUNT) {
			assert_int_equal(rc, 0);
			assert_int_equal(w.nranked, PIPE_TOPK);
			assert_int_equal(g.asked, 1u << FL_STAGE_EXTRACT | 1u << FL_STAGE_RANK);
		} else {
			assert_int_equal(rc, 1);
			assert_int_equal(w.skipped_before, refuse);
			assert_int_equal(w.nranked, 0);
			assert_int_equal(w.t.wall_ns[FL_STAGE_RANK], 0);
			assert_int_equal(w.extract_calls, refuse == FL_STAGE_EXTRACT ? 0 :
				20 * PIPE_EPS);
		}
		fl_work_clear(&w);
	}
	fl_bytes_free(&req);
}

/* Decode payload[0..len) with flags; expects failure with a message containing want. */
static void pipe_bad(struct pipe_fix *f, const void *payload, size_t len, uint16_t flags,
	const char *want)
{
	struct fl_work w = { 0 };
	char err[ERRLEN] = "";

	w.payload = payload;
	w.payload_len = len;
	w.frame_flags = flags;
	assert_int_equal(fl_pipeline_decode(f->wk, &w, err, sizeof(err)), -1);
	assert_null(w.req);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_true(w.t.cpu_ns[FL_STAGE_DECODE] > 0 || w.t.wall_ns[FL_STAGE_DECODE] > 0);
	fl_work_clear(&w);
}

/* 15: garbage, zstd-flagged garbage, a bomb over the cap and an unknown method fail. */
static void test_pipe_decode_errors(void **state)
{
	struct pipe_fix *f = *state;
	uint8_t garbage[200];
	struct fl_bytes big = { 0 }, zbig = { 0 }, req = { 0 };
	Frontload__LeafRequest bad = FRONTLOAD__LEAF_REQUEST__INIT;

	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)(0xff - i * 7);
	pipe_bad(f, garbage, sizeof(garbage), 0, "not a LeafRequest");
	pipe_bad(f, garbage, sizeof(garbage), FL_FRAME_ZSTD, "zstd");
	pipe_bad(f, garbage, sizeof(garbage), 0x8, "flags");
	pipe_bad(f, NULL, 0, FL_FRAME_ZSTD, "zstd");

	assert_int_equal(fl_bytes_reserve(&big, (2u << 20)), 0);
	memset(big.data, 'a', 2u << 20);
	big.len = 2u << 20;
	assert_int_equal(fl_zcodec_compress(f->z, big.data, big.len, &zbig), 0);
	pipe_bad(f, zbig.data, zbig.len, FL_FRAME_ZSTD, "zstd");

	bad.method = (Frontload__InboundMethod)9;
	assert_int_equal(fl_bytes_reserve(&req, frontload__leaf_request__get_packed_size(&bad)), 0);
	req.len = frontload__leaf_request__pack(&bad, req.data);
	pipe_bad(f, req.data, req.len, 0, "unknown method 9");
	fl_bytes_free(&big);
	fl_bytes_free(&zbig);
	fl_bytes_free(&req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_lru_order),
		cmocka_unit_test(test_session_ttl),
		cmocka_unit_test(test_session_capacity),
		cmocka_unit_test(test_ovh_inflight),
		cmocka_unit_test(test_ovh_acl),
		cmocka_unit_test(test_ovh_stale),
		cmocka_unit_test(test_sp_topk),
		cmocka_unit_test(test_sp_determinism),
		cmocka_unit_test(test_sp_filter),
		cmocka_unit_test(test_dlrm_forward),
		cmocka_unit_test(test_dlrm_linear),
		cmocka_unit_test_setup_teardown(test_pipe_end_to_end, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_methods, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_scratch_trim, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_sessions, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_decode_errors, pipe_setup, pipe_teardown),
		cmocka_unit_test(test_dl_decide),
		cmocka_unit_test(test_dl_decide_queue),
		cmocka_unit_test(test_dl_local),
		cmocka_unit_test(test_dl_estimate),
		cmocka_unit_test(test_dl_probe),
		cmocka_unit_test_setup_teardown(test_pipe_gate, pipe_setup, pipe_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
