/* test_dispatch.c: plans and contexts (runtime/extract/dispatch.c) over a fake registry.
 *
 * The registry here is 3 patterns x 2 variants x 4 copies of tiny extractors. Each one
 * records its call through the contract itself: a sparse feature (id = its registry index,
 * score = the call word it saw) and +1 in dense slot id, so order, counts and call words
 * are read back from the sink, with no global state. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "fl_extract.h"

#define TEST_PATTERNS 3u
#define TEST_VARIANTS 2u
#define TEST_COPIES 4u
#define TEST_N (TEST_PATTERNS * TEST_VARIANTS * TEST_COPIES)   /* registry entries */
#define TEST_ERRLEN 256u

/* Record one call of extractor id in the sink. */
static void test_record(struct fl_ctx *ctx, uint32_t id)
{
	FL_YIELD_SPARSE(ctx, id, (int32_t)ctx->call_word);
	FL_YIELD(ctx, id, 1);
}

/* Extractor id: records every call. Gated extractor id: opens with the body gate, as
 * generated code does, and records only calls that run the body. */
#define TEST_FN(i) \
	static void test_fn_##i(struct fl_ctx *ctx) { test_record(ctx, i); } \
	static void test_gated_##i(struct fl_ctx *ctx) \
	{ \
		FL_GATE(ctx, 0x1234567u * (i + 1u)); \
		test_record(ctx, i); \
	}
TEST_FN(0) TEST_FN(1) TEST_FN(2) TEST_FN(3) TEST_FN(4) TEST_FN(5) TEST_FN(6) TEST_FN(7)
TEST_FN(8) TEST_FN(9) TEST_FN(10) TEST_FN(11) TEST_FN(12) TEST_FN(13) TEST_FN(14) TEST_FN(15)
TEST_FN(16) TEST_FN(17) TEST_FN(18) TEST_FN(19) TEST_FN(20) TEST_FN(21) TEST_FN(22) TEST_FN(23)

/* Entry i: pattern i / 8, variant (i / 4) % 2, copy i % 4. */
#define TEST_ENTRY(i, f) { f##_##i, (i) / 8u, ((i) / 4u) % 2u, (i) % 4u }
#define TEST_TABLE(f) { \
	TEST_ENTRY(0, f), TEST_ENTRY(1, f), TEST_ENTRY(2, f), TEST_ENTRY(3, f), \
	TEST_ENTRY(4, f), TEST_ENTRY(5, f), TEST_ENTRY(6, f), TEST_ENTRY(7, f), \
	TEST_ENTRY(8, f), TEST_ENTRY(9, f), TEST_ENTRY(10, f), TEST_ENTRY(11, f), \
	TEST_ENTRY(12, f), TEST_ENTRY(13, f), TEST_ENTRY(14, f), TEST_ENTRY(15, f), \
	TEST_ENTRY(16, f), TEST_ENTRY(17, f), TEST_ENTRY(18, f), TEST_ENTRY(19, f), \
	TEST_ENTRY(20, f), TEST_ENTRY(21, f), TEST_ENTRY(22, f), TEST_ENTRY(23, f) }

static const struct fl_fn_entry test_tab[TEST_N] = TEST_TABLE(test_fn);
static const struct fl_fn_entry test_gated_tab[TEST_N] = TEST_TABLE(test_gated);

/* A context for the run tests (fails the test on error). */
static struct fl_ctx *test_ctx(uint64_t seed)
{
	char err[TEST_ERRLEN];
	struct fl_ctx *ctx = fl_ctx_init(seed, 16, err, sizeof(err));

	if (ctx == NULL)
		fail_msg("fl_ctx_init: %s", err);
	return ctx;
}

/* A plan over tab (fails the test on error). */
static void test_plan(struct fl_plan *p, const struct fl_fn_entry *tab, uint64_t seed,
	uint32_t active)
{
	char err[TEST_ERRLEN];

	if (fl_plan_init(p, tab, TEST_N, seed, active, err, sizeof(err)) < 0)
		fail_msg("fl_plan_init: %s", err);
}

/* The plan is a permutation of the registry; the same seed gives the same order. */
static void test_plan_same_seed(void **state)
{
	struct fl_plan a, b;
	int seen[TEST_N] = { 0 };

	(void)state;
	test_plan(&a, test_tab, 1, 0);
	test_plan(&b, test_tab, 1, 0);
	assert_int_equal(fl_plan_footprint(&a), TEST_N);
	assert_int_equal(a.copies, TEST_COPIES);
	assert_int_equal(a.active_copies, TEST_COPIES);
	assert_int_equal(a.npatterns, TEST_PATTERNS);
	assert_memory_equal(a.reg_index, b.reg_index, TEST_N * sizeof(*a.reg_index));
	for (size_t i = 0; i < a.nfns; i++) {
		assert_true(a.reg_index[i] < TEST_N);
		assert_true(a.fns[i] == test_tab[a.reg_index[i]].fn);
		seen[a.reg_index[i]]++;
	}
	for (size_t i = 0; i < TEST_N; i++)
		assert_int_equal(seen[i], 1);
	for (uint32_t p = 0; p < TEST_PATTERNS; p++)
		assert_int_equal(fl_plan_pattern_count(&a, p), TEST_VARIANTS * TEST_COPIES);
	assert_int_equal(fl_plan_pattern_count(&a, TEST_PATTERNS), 0);
	fl_plan_free(&a);
	fl_plan_free(&b);
}

/* Different seeds give different orders, and neither is the registry order. */
static void test_plan_diff_seed(void **state)
{
	struct fl_plan a, b;
	uint32_t ident[TEST_N];

	(void)state;
	for (uint32_t i = 0; i < TEST_N; i++)
		ident[i] = i;
	test_plan(&a, test_tab, 1, 0);
	test_plan(&b, test_tab, 2, 0);
	assert_true(memcmp(a.reg_index, b.reg_index, sizeof(ident)) != 0);
	assert_true(memcmp(a.reg_index, ident, sizeof(ident)) != 0);
	assert_true(a.salt != b.salt);
	fl_plan_free(&a);
	fl_plan_free(&b);
}

/* Active copies A keeps copy < A; 0 and A >= copies keep all. */
static void test_plan_active_copies(void **state)
{
	static const uint32_t as[] = { 0, 1, 2, 3, 4, 5, 1000 };
	struct fl_plan p;

	(void)state;
	for (size_t k = 0; k < sizeof(as) / sizeof(as[0]); k++) {
		uint32_t eff = as[k] == 0 || as[k] > TEST_COPIES ? TEST_COPIES : as[k];

		test_plan(&p, test_tab, 7, as[k]);
		assert_int_equal(p.active_copies, eff);
		assert_int_equal(fl_plan_footprint(&p), TEST_PATTERNS * TEST_VARIANTS * eff);
		for (size_t i = 0; i < p.nfns; i++)
			assert_true(test_tab[p.reg_index[i]].copy < eff);
		for (uint32_t pat = 0; pat < TEST_PATTERNS; pat++)
			assert_int_equal(fl_plan_pattern_count(&p, pat), TEST_VARIANTS * eff);
		fl_plan_free(&p);
	}
}

/* Bad registries: NULL, empty, an entry without a function, nothing kept. */
static void test_plan_errors(void **state)
{
	struct fl_fn_entry bad[2] = { { test_fn_0, 0, 0, 0 }, { NULL, 1, 2, 3 } };
	struct fl_fn_entry late[1] = { { test_fn_0, 0, 0, 3 } };
	struct fl_plan p;
	char err[TEST_ERRLEN];

	(void)state;
	err[0] = '\0';
	assert_int_equal(fl_plan_init(&p, NULL, 4, 1, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "empty registry");
	assert_int_equal(fl_plan_init(&p, test_tab, 0, 1, 0, err, sizeof(err)), -1);
	assert_int_equal(fl_plan_init(&p, bad, 2, 1, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 1"));
	assert_int_equal(fl_plan_init(&p, late, 1, 1, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "copy < 2"));
	assert_null(p.fns);
	assert_int_equal(fl_plan_init(&p, late, 1, 1, 0, NULL, 0), 0);   /* A = 0 keeps it */
	fl_plan_free(&p);
	fl_plan_free(&p);
}

/* One lap from cursor 0 calls every function once, in plan order. */
static void test_plan_run_order(void **state)
{
	struct fl_ctx *ctx = test_ctx(3);
	struct fl_plan p;

	(void)state;
	test_plan(&p, test_tab, 11, 0);
	assert_int_equal(fl_plan_run(&p, ctx, 0, TEST_N), TEST_N);
	assert_int_equal(ctx->sink->nsparse, TEST_N);
	for (uint32_t i = 0; i < TEST_N; i++) {
		assert_int_equal(ctx->sink->sparse[i].id, p.reg_index[i]);
		assert_int_equal(ctx->sink->dense[i], ctx->sink->enabled[i] ? 1 : 0); /* switched off: no write */
	}
	assert_int_equal(fl_plan_run(&p, ctx, 5, 0), 5);   /* no calls */
	assert_int_equal(ctx->sink->nsparse, TEST_N);
	fl_plan_free(&p);
	fl_ctx_free(ctx);
}

/* Starting near the end wraps to the start; a cursor many laps on starts at cursor mod n. */
static void test_plan_cursor_wrap(void **state)
{
	struct fl_ctx *ctx = test_ctx(3);
	struct fl_plan p;
	uint64_t cur;

	(void)state;
	test_plan(&p, test_tab, 11, 0);
	cur = fl_plan_run(&p, ctx, TEST_N - 4, 10);
	assert_int_equal(cur, TEST_N + 6);
	for (uint32_t k = 0; k < 10; k++)
		assert_int_equal(ctx->sink->sparse[k].id, p.reg_index[(TEST_N - 4 + k) % TEST_N]);
	fl_ctx_clear_sink(ctx);
	assert_int_equal(ctx->sink->nsparse, 0);
	cur = fl_plan_run(&p, ctx, 1000ull * TEST_N + 3, 2);
	assert_int_equal(cur, 1000ull * TEST_N + 5);
	assert_int_equal(ctx->sink->sparse[0].id, p.reg_index[3]);
	assert_int_equal(ctx->sink->sparse[1].id, p.reg_index[4]);
	cur = fl_plan_run(&p, ctx, UINT64_MAX, 1);   /* 2^64 - 1 mod 24 = 15 */
	assert_int_equal(ctx->sink->sparse[2].id, p.reg_index[UINT64_MAX % TEST_N]);
	assert_int_equal(cur, 0);
	fl_plan_free(&p);
	fl_ctx_free(ctx);
}

static int test_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Call words differ call to call, lap to lap for one function, and plan to plan. */
static void test_call_word_varies(void **state)
{
	enum { LAPS = 10, CALLS = LAPS * TEST_N };
	struct fl_ctx *ctx = test_ctx(3);
	struct fl_plan p, q;
	uint32_t words[CALLS];

	(void)state;
	test_plan(&p, test_tab, 11, 0);
	test_plan(&q, test_tab, 12, 0);
	fl_plan_run(&p, ctx, 0, CALLS);
	for (uint32_t k = 0; k < CALLS; k++)
		words[k] = (uint32_t)ctx->sink->sparse[k].score;
	for (uint32_t k = 0; k + TEST_N < CALLS; k++)   /* same function, next lap */
		assert_int_equal(ctx->sink->sparse[k].id, ctx->sink->sparse[k + TEST_N].id);
	qsort(words, CALLS, sizeof(words[0]), test_cmp_u32);
	for (uint32_t k = 1; k < CALLS; k++)
		assert_true(words[k] != words[k - 1]);
	fl_ctx_clear_sink(ctx);
	fl_plan_run(&p, ctx, 0, 1);
	fl_plan_run(&q, ctx, 0, 1);
	assert_true(ctx->sink->sparse[0].score != ctx->sink->sparse[1].score);
	fl_plan_free(&p);
	fl_plan_free(&q);
	fl_ctx_free(ctx);
}

/* With the body gate of generated code, body_q16 sets the share of calls that run the
 * body: none at 0, all at 65536, about half at 32768. */
static void test_body_share(void **state)
{
	enum { CALLS = 300 * TEST_N };
	struct fl_ctx *ctx = test_ctx(3);
	struct fl_plan p;

	(void)state;
	test_plan(&p, test_gated_tab, 5, 0);
	assert_int_equal(fl_ctx_set_body(ctx, 0), 0);
	fl_plan_run(&p, ctx, 0, CALLS);
	assert_int_equal(ctx->sink->nsparse, 0);
	assert_int_equal(fl_ctx_set_body(ctx, 65536), 0);
	fl_plan_run(&p, ctx, 0, CALLS);
	assert_int_equal(ctx->sink->nsparse + ctx->sink->dropped, CALLS);
	fl_ctx_clear_sink(ctx);
	assert_int_equal(fl_ctx_set_body(ctx, 32768), 0);
	fl_plan_run(&p, ctx, 0, CALLS);
	print_message("body 0.5: %u of %u calls ran the body\n", ctx->sink->nsparse, CALLS);
	assert_true(ctx->sink->nsparse > CALLS * 45 / 100 && ctx->sink->nsparse < CALLS * 55 / 100);
	for (uint32_t i = 0; i < TEST_N; i++)   /* every function ran some bodies, not all */
		if (ctx->sink->enabled[i])
			assert_true(ctx->sink->dense[i] > 0 && ctx->sink->dense[i] < 300);
	assert_int_equal(fl_ctx_set_body(ctx, 65537), -1);
	assert_int_equal(ctx->body_q16, 32768);
	fl_plan_free(&p);
	fl_ctx_free(ctx);
}

/* A new context: every buffer present, defaults as documented, tables a function of seed. */
static void test_ctx_init(void **state)
{
	struct fl_ctx *a = test_ctx(9), *b = test_ctx(9), *c = test_ctx(10);
	char err[TEST_ERRLEN];

	(void)state;
	assert_non_null(a->story);
	assert_ptr_equal((const void *)a->story, (const void *)a->story64);
	assert_non_null(a->text);
	assert_non_null(a->state);
	assert_non_null(a->sink);
	assert_null(a->hmap);
	assert_int_equal(a->nqkeys, 16);
	assert_int_equal(a->body_q16, 65536);
	assert_true(a->now_s >= 1700000000u && a->now_s < 1700000000u + (1u << 20));
	assert_int_equal(a->sink->nsparse, 0);
	/* Feature switches: 1 slot in 256 off (16 expected of 4096), the same for one seed;
	 * presence: 1 field in 64 absent (4 expected of 256 on the padded empty story). */
	{
		uint32_t off = 0, absent = 0;

		assert_non_null(a->has);
		for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
			off += a->sink->enabled[i] == 0;
		for (uint32_t i = 0; i < FL_STORY_U32; i++)
			absent += a->has[i] == 0;
		assert_true(off >= 4 && off <= 40);
		assert_true(absent <= 20);
		assert_memory_equal(a->sink->enabled, b->sink->enabled, FL_DENSE_SLOTS);
	}
	for (uint32_t i = 0; i < a->nqkeys; i++)
		assert_int_not_equal(a->qkeys[i], 0);
	for (uint32_t i = 0; i < FL_EMB_ROWS * FL_EMB_DIM; i++)
		assert_true(a->emb[i] >= -256 && a->emb[i] <= 256);
	assert_memory_equal(a->table, b->table, FL_TABLE_SLOTS * sizeof(uint32_t));
	assert_memory_equal(a->emb, b->emb, FL_EMB_ROWS * FL_EMB_DIM * sizeof(int16_t));
	assert_memory_equal(a->state, b->state, FL_STATE_WORDS * sizeof(uint64_t));
	assert_true(memcmp(a->table, c->table, FL_TABLE_SLOTS * sizeof(uint32_t)) != 0);
	assert_null(fl_ctx_init(1, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "nqkeys"));
	assert_null(fl_ctx_init(1, 65537, NULL, 0));
	fl_ctx_free(a);
	fl_ctx_free(b);
	fl_ctx_free(c);
	fl_ctx_free(NULL);
}

/* A short story: copied, padded by a content-seeded stream (same story, same padding;
 * another story, other padding), text repeated, query keys re-derived. */
static void test_ctx_story_short(void **state)
{
	struct fl_ctx *a = test_ctx(1), *b = test_ctx(2);
	const uint8_t *sa = (const uint8_t *)a->story, *sb = (const uint8_t *)b->story;
	uint64_t q0 = a->qkeys[0];
	uint32_t zeros = 0;

	(void)state;
	assert_int_equal(fl_ctx_set_story(a, "hello", 5), 0);
	assert_int_equal(fl_ctx_set_story(b, "hello", 5), 0);
	assert_memory_equal(sa, "hello", 5);
	assert_memory_equal(sa, sb, FL_STORY_BYTES);
	assert_memory_equal(a->qkeys, b->qkeys, a->nqkeys * sizeof(uint64_t));
	assert_true(a->qkeys[0] != q0);
	for (uint32_t i = 5; i < FL_STORY_BYTES; i++)
		zeros += sa[i] == 0;
	assert_true(zeros < 20);   /* random padding: about 4 of 1019 bytes are 0 */
	for (uint32_t i = 0; i < FL_TEXT_BYTES; i++)
		assert_int_equal(a->text[i], "hello"[i % 5]);
	assert_int_equal(fl_ctx_set_story(b, "hellp", 5), 0);
	assert_true(memcmp(sa + 5, sb + 5, FL_STORY_BYTES - 5) != 0);
	assert_int_equal(fl_ctx_set_story(b, NULL, 0), 0);
	for (uint32_t i = 0; i < FL_TEXT_BYTES; i++)
		assert_int_equal(b->text[i], ' ');
	assert_int_equal(fl_ctx_set_story(b, NULL, 3), -1);
	assert_int_equal(fl_ctx_set_story(NULL, "x", 1), -1);
	fl_ctx_free(a);
	fl_ctx_free(b);
}

/* A long story: the first FL_STORY_BYTES are the story, the first FL_TEXT_BYTES the text,
 * the rest is ignored; an exact-size story has no padding. */
static void test_ctx_story_long(void **state)
{
	enum { LEN = 3 * FL_STORY_BYTES + 17 };
	struct fl_ctx *a = test_ctx(1);
	uint8_t *buf = malloc(LEN);

	(void)state;
	assert_non_null(buf);
	for (uint32_t i = 0; i < LEN; i++)
		buf[i] = (uint8_t)(i * 7u + 3u);
	assert_int_equal(fl_ctx_set_story(a, buf, LEN), 0);
	assert_memory_equal(a->story, buf, FL_STORY_BYTES);
	assert_memory_equal(a->text, buf, FL_TEXT_BYTES);
	assert_int_equal(a->story[1], (uint32_t)buf[4] | (uint32_t)buf[5] << 8 |
		(uint32_t)buf[6] << 16 | (uint32_t)buf[7] << 24);
	assert_int_equal(a->story64[0] & 0xFFu, buf[0]);
	assert_int_equal(fl_ctx_set_story(a, buf + 1, FL_STORY_BYTES), 0);
	assert_memory_equal(a->story, buf + 1, FL_STORY_BYTES);
	free(buf);
	fl_ctx_free(a);
}

/* Hit-rate knob: 0 and 1 exact on the query keys, one map per rate, reused on return. */
static void test_ctx_set_hit(void **state)
{
	struct fl_ctx *ctx = test_ctx(4);
	const struct fl_hmap *m0;
	char err[TEST_ERRLEN];

	(void)state;
	assert_null(fl_hmap_find(ctx, ctx->qkeys[0]));   /* no map yet */
	assert_int_equal(fl_ctx_set_hit(ctx, 0, err, sizeof(err)), 0);
	m0 = ctx->hmap;
	assert_non_null(m0);
	assert_int_equal(m0->nkeys, 0);
	assert_int_equal(fl_ctx_set_hit(ctx, 65536, err, sizeof(err)), 0);
	assert_int_equal(ctx->hmap->nkeys, FL_KEY_UNIVERSE);
	for (uint32_t i = 0; i < ctx->nqkeys; i++)
		assert_non_null(fl_hmap_find(ctx, ctx->qkeys[i]));
	assert_int_equal(fl_ctx_set_hit(ctx, 0, err, sizeof(err)), 0);
	assert_ptr_equal(ctx->hmap, m0);
	assert_null(fl_hmap_find(ctx, ctx->qkeys[0]));
	assert_int_equal(fl_ctx_set_hit(ctx, 65537, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "65537"));
	assert_ptr_equal(ctx->hmap, m0);
	fl_ctx_free(ctx);
}

/* ---- active functions, Zipf dispatch, code bytes and reuse, over a larger fake registry:
 * 3 patterns of 10, 20 and 30 variants x 4 copies, registry order pattern, variant, copy,
 * every entry the same recording function (the plan only needs a non-NULL fn). ---- */
#define BIG_COPIES 4u
#define BIG_N ((10u + 20u + 30u) * BIG_COPIES)

static struct fl_fn_entry big_tab[BIG_N];
static uint32_t big_size[BIG_N];     /* entry i's bytes: 100 + (i mod 7) */

static void big_fn(struct fl_ctx *ctx)
{
	test_record(ctx, 0);
}

static void big_fill(void)
{
	static const uint16_t variants[3] = { 10, 20, 30 };
	size_t k = 0;

	for (uint16_t p = 0; p < 3; p++)
		for (uint16_t v = 0; v < variants[p]; v++)
			for (uint32_t c = 0; c < BIG_COPIES; c++, k++) {
				big_tab[k] = (struct fl_fn_entry){ big_fn, p, v, c };
				big_size[k] = 100u + (uint32_t)(k % 7u);
			}
}

static void big_plan(struct fl_plan *p, uint32_t nfn, int dispatch, double alpha, uint64_t seed)
{
	struct fl_plan_opts o = { .seed = seed, .active_functions = nfn, .dispatch = dispatch,
		.zipf_alpha = alpha };
	char err[TEST_ERRLEN];

	if (fl_plan_build(p, big_tab, BIG_N, &o, err, sizeof(err)) < 0)
		fail_msg("fl_plan_build: %s", err);
}

/* 1. Every N from 1 to all: N functions, each pattern within 1 of N x its share of the
 * variants, the set of N inside the set of N + 1, and code bytes strictly growing. */
static void test_active_functions_mix(void **state)
{
	static const double share[3] = { 10.0 / 60, 20.0 / 60, 30.0 / 60 };
	uint8_t in_prev[BIG_N] = { 0 };
	uint64_t prev_bytes = 0;

	(void)state;
	big_fill();
	for (uint32_t nf = 1; nf <= BIG_N; nf++) {
		struct fl_plan p;
		uint8_t in[BIG_N] = { 0 };
		uint64_t bytes;

		big_plan(&p, nf, FL_DISPATCH_FLAT, 0, 42);
		assert_int_equal(p.nfns, nf);
		assert_int_equal(p.nseq, nf);
		for (uint32_t q = 0; q < 3; q++) {
			double want = share[q] * nf, got = fl_plan_pattern_count(&p, q);

			if (got < want - 1 || got > want + 1)
				fail_msg("N %u pattern %u: %g functions, share %g", nf, q, got, want);
		}
		for (size_t i = 0; i < p.nfns; i++)
			in[p.reg_index[i]] = 1;
		for (size_t i = 0; i < BIG_N; i++)
			assert_true(!in_prev[i] || in[i]);
		bytes = fl_plan_code_bytes(&p, big_size);
		assert_true(bytes > prev_bytes);
		prev_bytes = bytes;
		memcpy(in_prev, in, sizeof(in));
		fl_plan_free(&p);
	}
}

/* 2. A small N takes copy 0 of distinct variants before any copy 1; N = all is the plan
 * of fl_plan_init; N = 1 works; N above the kept entries and a bad dispatch or alpha are
 * clear errors. */
static void test_active_functions_edges(void **state)
{
	struct fl_plan p, q;
	struct fl_plan_opts o = { .seed = 9, .active_copies = 2, .active_functions = 121 };
	char err[TEST_ERRLEN];

	(void)state;
	big_fill();
	big_plan(&p, 60, FL_DISPATCH_FLAT, 0, 3);
	for (size_t i = 0; i < p.nfns; i++)
		assert_int_equal(big_tab[p.reg_index[i]].copy, 0);
	fl_plan_free(&p);
	big_plan(&p, 0, FL_DISPATCH_FLAT, 0, 5);
	assert_int_equal(fl_plan_init(&q, big_tab, BIG_N, 5, 0, err, sizeof(err)), 0);
	assert_int_equal(p.nfns, BIG_N);
	assert_memory_equal(p.reg_index, q.reg_index, BIG_N * sizeof(*p.reg_index));
	fl_plan_free(&q);
	fl_plan_free(&p);
	big_plan(&p, 1, FL_DISPATCH_ZIPF, 2, 5);
	assert_int_equal(p.nfns, 1);
	assert_int_equal(p.nseq, FL_ZIPF_LAP_PER_FN);
	fl_plan_free(&p);
	assert_int_equal(fl_plan_build(&p, big_tab, BIG_N, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "121 active functions asked, but the plan has 120"));
	assert_null(p.fns);
	o.active_functions = 0;
	o.dispatch = 7;
	assert_int_equal(fl_plan_build(&p, big_tab, BIG_N, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dispatch"));
	o.dispatch = FL_DISPATCH_ZIPF;
	o.zipf_alpha = 4.5;
	assert_int_equal(fl_plan_build(&p, big_tab, BIG_N, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "alpha"));
	assert_int_equal(fl_dispatch_parse("zipf", &o.dispatch), 0);
	assert_int_equal(o.dispatch, FL_DISPATCH_ZIPF);
	assert_int_equal(fl_dispatch_parse("heavy", &o.dispatch), -1);
	assert_string_equal(fl_dispatch_name(FL_DISPATCH_FLAT), "flat");
}

/* Calls of each rank in p's lap, into calls[0..p->nfns). */
static void zipf_counts(const struct fl_plan *p, uint32_t *calls)
{
	memset(calls, 0, p->nfns * sizeof(*calls));
	for (size_t i = 0; i < p->nseq; i++)
		calls[p->seq[i]]++;
}

/* 2b. Bytes to functions: the fewest of the same draw whose bytes reach the footprint. */
static void test_functions_for_bytes(void **state)
{
	struct fl_plan_opts o = { .seed = 42 };
	struct fl_plan p;
	char err[TEST_ERRLEN];
	uint32_t nf = 0;
	uint64_t b37;

	(void)state;
	big_fill();
	big_plan(&p, 37, FL_DISPATCH_FLAT, 0, 42);
	b37 = fl_plan_code_bytes(&p, big_size);
	fl_plan_free(&p);
	assert_int_equal(fl_plan_functions_for_bytes(big_tab, BIG_N, &o, big_size, b37, &nf,
		err, sizeof(err)), 0);
	assert_int_equal(nf, 37);
	assert_int_equal(fl_plan_functions_for_bytes(big_tab, BIG_N, &o, big_size, b37 + 1, &nf,
		err, sizeof(err)), 0);
	assert_int_equal(nf, 38);
	assert_int_equal(fl_plan_functions_for_bytes(big_tab, BIG_N, &o, big_size, 1, &nf, err,
		sizeof(err)), 0);
	assert_int_equal(nf, 1);
	assert_int_equal(fl_plan_functions_for_bytes(big_tab, BIG_N, &o, big_size, 1u << 30, &nf,
		err, sizeof(err)), 0);
	assert_int_equal(nf, BIG_N);
	o.active_copies = 1;
	assert_int_equal(fl_plan_functions_for_bytes(big_tab, BIG_N, &o, big_size, 1u << 30, &nf,
		err, sizeof(err)), 0);
	assert_int_equal(nf, BIG_N / BIG_COPIES);
}

/* 3. alpha 0 gives every function the same calls; a larger alpha puts more of the lap on
 * the hottest ranks (rank 1 over rank 2 about 2^alpha), and the heat order is not the
 * address order. */
static void test_zipf_distribution(void **state)
{
	static const double alphas[4] = { 0, 0.5, 1, 2 };
	uint32_t calls[BIG_N];
	double prev_top = 0;

	(void)state;
	big_fill();
	for (int a = 0; a < 4; a++) {
		struct fl_plan p;
		uint64_t top = 0;
		int sorted = 1;

		big_plan(&p, 0, FL_DISPATCH_ZIPF, alphas[a], 11);
		zipf_counts(&p, calls);
		for (size_t r = 0; r < p.nfns; r++) {
			assert_true(calls[r] >= 1);
			if (r < p.nfns / 10)
				top += calls[r];
			if (r > 0 && p.reg_index[r] < p.reg_index[r - 1])
				sorted = 0;
		}
		if (alphas[a] == 0)
			for (size_t r = 0; r < p.nfns; r++)
				assert_int_equal(calls[r], FL_ZIPF_LAP_PER_FN);
		else
			assert_true(fabs((double)calls[0] / calls[1] - pow(2, alphas[a])) < 0.05 *
				pow(2, alphas[a]));
		assert_true((double)top / p.nseq > prev_top);
		prev_top = (double)top / p.nseq;
		assert_false(sorted);
		fl_plan_free(&p);
	}
}

/* 4. The same seed gives the same lap, another seed another one; a function's rank
 * relative to the others holds at every N. */
static void test_zipf_seeded(void **state)
{
	struct fl_plan a, b, c;

	(void)state;
	big_fill();
	big_plan(&a, 100, FL_DISPATCH_ZIPF, 1.2, 77);
	big_plan(&b, 100, FL_DISPATCH_ZIPF, 1.2, 77);
	big_plan(&c, 100, FL_DISPATCH_ZIPF, 1.2, 78);
	assert_int_equal(a.nseq, b.nseq);
	assert_memory_equal(a.seq, b.seq, a.nseq * sizeof(*a.seq));
	assert_memory_equal(a.reg_index, b.reg_index, a.nfns * sizeof(*a.reg_index));
	assert_true(a.nseq != c.nseq || memcmp(a.seq, c.seq, a.nseq * sizeof(*a.seq)) != 0 ||
		memcmp(a.reg_index, c.reg_index, a.nfns * sizeof(*a.reg_index)) != 0);
	fl_plan_free(&a);
	fl_plan_free(&b);
	fl_plan_free(&c);
	/* Ranks are nested: the 100 functions keep their relative order among 200. */
	big_plan(&a, 100, FL_DISPATCH_ZIPF, 1.2, 77);
	big_plan(&b, 200, FL_DISPATCH_ZIPF, 1.2, 77);
	for (size_t i = 0, j = 0; i < a.nfns; i++) {
		while (j < b.nfns && b.reg_index[j] != a.reg_index[i])
			j++;
		if (j == b.nfns)
			fail_msg("rank %zu of N=100 is out of order (or absent) in N=200", i);
	}
	fl_plan_free(&a);
	fl_plan_free(&b);
}

/* 5. Reuse: the flat walk re-calls a function after all N - 1 others (bytes: all but its
 * own); Zipf's median distance falls as alpha grows. A Zipf plan runs its lap in order. */
static void test_reuse_profile(void **state)
{
	struct fl_plan p;
	struct fl_plan_reuse r;
	char err[TEST_ERRLEN];
	uint64_t total, prev_median = UINT64_MAX;
	static const double alphas[3] = { 0, 1, 2 };

	(void)state;
	big_fill();
	big_plan(&p, 50, FL_DISPATCH_FLAT, 0, 4);
	total = fl_plan_code_bytes(&p, big_size);
	assert_int_equal(fl_plan_reuse(&p, big_size, &r, err, sizeof(err)), 0);
	assert_int_equal(r.calls, 50);
	assert_true(r.has_bytes);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(r.fns[k], 49);
		assert_true(r.bytes[k] >= total - 106 && r.bytes[k] <= total - 100);
	}
	fl_plan_free(&p);
	for (int a = 0; a < 3; a++) {
		big_plan(&p, 0, FL_DISPATCH_ZIPF, alphas[a], 4);
		assert_int_equal(fl_plan_reuse(&p, NULL, &r, err, sizeof(err)), 0);
		assert_false(r.has_bytes);
		assert_int_equal(r.calls, p.nseq);
		assert_true(r.fns[0] < prev_median);
		assert_true(r.fns[0] <= r.fns[1] && r.fns[1] <= r.fns[2] && r.fns[2] < BIG_N);
		prev_median = r.fns[0];
		fl_plan_free(&p);
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* 6. The Zipf profile equals the definition, counted the slow way: for each call of a lap
 * (the lap is cyclic), the distinct functions and their bytes since that function's
 * previous call; then nearest-rank percentiles 50, 90, 99 of a sorted copy. */
static void test_reuse_brute(void **state)
{
	struct fl_plan p;
	struct fl_plan_reuse r;
	char err[TEST_ERRLEN];

	(void)state;
	big_fill();
	big_plan(&p, 200, FL_DISPATCH_ZIPF, 1.0, 9);
	assert_int_equal(fl_plan_reuse(&p, big_size, &r, err, sizeof(err)), 0);
	size_t l = p.nseq;
	uint64_t *dc = calloc(l, sizeof(*dc)), *db = calloc(l, sizeof(*db));
	uint8_t *seen = malloc(p.nfns);
	assert_non_null(dc);
	assert_non_null(db);
	assert_non_null(seen);
	for (size_t t = 0; t < l; t++) {
		uint32_t x = p.seq[t];
		memset(seen, 0, p.nfns);
		for (size_t back = 1; back <= l; back++) {
			uint32_t y = p.seq[(t + l - back) % l];
			if (y == x)
				break;
			if (!seen[y]) {
				seen[y] = 1;
				dc[t]++;
				db[t] += big_size[p.reg_index[y]];
			}
		}
	}
	qsort(dc, l, sizeof(*dc), u64_cmp);
	qsort(db, l, sizeof(*db), u64_cmp);
	static const double q[3] = { 0.5, 0.9, 0.99 };
	for (int k = 0; k < 3; k++) {
		size_t rank = (size_t)ceil(q[k] * (double)l) - 1;
		assert_int_equal(r.fns[k], dc[rank]);
		assert_int_equal(r.bytes[k], db[rank]);
	}
	free(dc);
	free(db);
	free(seen);
	fl_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_same_seed),
		cmocka_unit_test(test_plan_diff_seed),
		cmocka_unit_test(test_plan_active_copies),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_plan_run_order),
		cmocka_unit_test(test_plan_cursor_wrap),
		cmocka_unit_test(test_call_word_varies),
		cmocka_unit_test(test_body_share),
		cmocka_unit_test(test_ctx_init),
		cmocka_unit_test(test_ctx_story_short),
		cmocka_unit_test(test_ctx_story_long),
		cmocka_unit_test(test_ctx_set_hit),
		cmocka_unit_test(test_active_functions_mix),
		cmocka_unit_test(test_active_functions_edges),
		cmocka_unit_test(test_functions_for_bytes),
		cmocka_unit_test(test_zipf_distribution),
		cmocka_unit_test(test_zipf_seeded),
		cmocka_unit_test(test_reuse_profile),
		cmocka_unit_test(test_reuse_brute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
