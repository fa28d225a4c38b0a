/* test_pipeline.c: tests for runtime/request/pipeline.c, the leaf pipeline end to end
 * without a network: methods, sessions, scratch, the stage gate and decode errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "dispatch.h"
#include "fl_extract.h"
#include "frontload.pb-c.h"
#include "paths.h"
#include "pipeline.h"
#include "rng.h"
#include "sampler.h"
#include "session.h"
#include "stages.h"
#include "wire.h"
#include "zcodec.h"

#define ERRLEN 256u

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
 * with 1 and the stage named, no model run (and no extraction when refused first). */
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
			/* Refused before ranking, the rank stage holds only the model's input
			 * features that stage 3 derived story by story; refused first, nothing. */
			if (refuse == FL_STAGE_EXTRACT)
				assert_int_equal(w.t.wall_ns[FL_STAGE_RANK], 0);
			else
				assert_true(w.t.wall_ns[FL_STAGE_RANK] > 0);
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
		cmocka_unit_test_setup_teardown(test_pipe_end_to_end, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_methods, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_scratch_trim, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_sessions, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_decode_errors, pipe_setup, pipe_teardown),
		cmocka_unit_test_setup_teardown(test_pipe_gate, pipe_setup, pipe_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
