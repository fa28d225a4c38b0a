/* test_reqgen.c: the driver's request builder: determinism, sizes, stories, method mix.
 *
 * Generators use fixed seeds (the draws are a pure function of seed and request index),
 * so every check is reproducible; set FL_TEST_SEED to try another seed. */
#define _GNU_SOURCE
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
#include "frontload.pb-c.h"
#include "paths.h"
#include "reqgen.h"
#include "sampler.h"
#include "zcodec.h"

#define CORPUS_BYTES (8u << 20)  /* test corpus: bigger than a capped request */
#define SIZE_SAMPLES 2000u       /* requests for the size checks */
#define MIX_SAMPLES 20000u       /* requests for the method mix check */
#define SLACK 48u                /* bytes a bare request's size varies by (varint ids) */

static struct fl_corpus corpus;
static uint64_t seed;

static int setup(void **state)
{
	char err[256];
	const char *e = getenv("FL_TEST_SEED");

	(void)state;
	seed = e ? strtoull(e, NULL, 0) : 0x5eed0007ull;
	print_message("seed = %#llx (FL_TEST_SEED to replay)\n", (unsigned long long)seed);
	if (fl_corpus_generate(&corpus, 42, CORPUS_BYTES, err, sizeof err) != 0) {
		print_error("corpus: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fl_corpus_free(&corpus);
	return 0;
}

static void gen_init(struct fl_reqgen *g, const struct fl_reqgen_config *c)
{
	char err[512];
	int rc = fl_reqgen_init(g, c, &corpus, err, sizeof err);
	if (rc != 0)
		print_error("fl_reqgen_init: %s\n", err);
	assert_int_equal(rc, 0);
}

static void default_config(struct fl_reqgen_config *c)
{
	fl_reqgen_config_default(c);
	c->seed = seed;
}

/* 1. The same (seed, i) gives the same bytes, from the same or a fresh generator; another
 * index or another seed gives other bytes. */
static void test_deterministic(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g1, g2, g3;
	struct fl_bytes a = { 0 }, b = { 0 }, x = { 0 };
	unsigned differ_i = 0, differ_seed = 0;

	(void)state;
	default_config(&c);
	gen_init(&g1, &c);
	gen_init(&g2, &c);
	c.seed = seed + 1;
	gen_init(&g3, &c);
	for (uint64_t i = 0; i < 50; i++) {
		assert_int_equal(fl_reqgen_build(&g1, i, &a), 0);
		assert_int_equal(fl_reqgen_build(&g2, i, &b), 0);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		assert_int_equal(fl_reqgen_build(&g1, i, &b), 0);  /* rebuild: same again */
		assert_memory_equal(a.data, b.data, a.len);
		assert_int_equal(fl_reqgen_build(&g1, i + 1, &x), 0);
		differ_i += x.len != a.len || memcmp(x.data, a.data, a.len) != 0;
		assert_int_equal(fl_reqgen_build(&g3, i, &x), 0);
		differ_seed += x.len != a.len || memcmp(x.data, a.data, a.len) != 0;
	}
	assert_int_equal(differ_i, 50);
	assert_int_equal(differ_seed, 50);
	fl_bytes_free(&a);
	fl_bytes_free(&b);
	fl_bytes_free(&x);
}

/* reserve for fl_reqgen_build_parts: room in a fixed buffer. */
static uint8_t parts_head[1u << 20];
static uint8_t *parts_reserve(void *arg, size_t len)
{
	(void)arg;
	return len <= sizeof parts_head ? parts_head : NULL;
}

static uint8_t *big_reserve(void *arg, size_t len)
{
	return len <= CORPUS_BYTES + 65536 ? arg : NULL;
}

/* 1b. The gathered parts (head, padding in the corpus, tail) are the packed bytes exactly:
 * sampled sizes (padding from none to 4 MiB), with want_zstd and reply_bytes set or not, a
 * fixed size below the stories (no padding), and a padding longer than the corpus (packed
 * whole into the head). */
static void test_parts_equal_build(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	struct fl_reqgen_parts pt;
	struct fl_bytes a = { 0 };
	unsigned padded = 0, whole = 0;

	(void)state;
	for (int v = 0; v < 4; v++) {
		default_config(&c);
		c.want_zstd = v & 1;
		c.reply_bytes = v & 2 ? 300000u : 0;
		if (v == 3)
			c.fixed_bytes = 100;  /* below the 16 stories: no padding */
		gen_init(&g, &c);
		for (uint64_t i = 0; i < 200; i++) {
			assert_int_equal(fl_reqgen_build(&g, i, &a), 0);
			assert_int_equal(fl_reqgen_build_parts(&g, i, parts_reserve, NULL, &pt), 0);
			assert_int_equal(pt.head_len + pt.pad_len + pt.tail_len, a.len);
			assert_memory_equal(parts_head, a.data, pt.head_len);
			if (pt.pad_len > 0) {
				assert_true(pt.pad >= corpus.data && pt.pad + pt.pad_len <=
					corpus.data + corpus.len);
				assert_memory_equal(pt.pad, a.data + pt.head_len, pt.pad_len);
				padded++;
			} else {
				whole++;
			}
			assert_memory_equal(pt.tail, a.data + pt.head_len + pt.pad_len, pt.tail_len);
		}
	}
	assert_true(padded > 300);
	assert_true(whole >= 200);
	/* Padding longer than the corpus wraps: a copy, so packed whole. */
	default_config(&c);
	c.fixed_bytes = CORPUS_BYTES + 32768;  /* padding > the corpus, after 16 KiB of stories */
	c.max_request_bytes = CORPUS_BYTES * 2;
	gen_init(&g, &c);
	struct fl_bytes big = { 0 };
	static uint8_t head_big[CORPUS_BYTES + 65536];
	assert_int_equal(fl_reqgen_build(&g, 1, &big), 0);
	assert_true(big.len <= sizeof head_big);
	assert_int_equal(fl_reqgen_build_parts(&g, 1, big_reserve, head_big, &pt), 0);
	assert_int_equal(pt.pad_len, 0);
	assert_int_equal(pt.tail_len, 0);
	assert_int_equal(pt.head_len, big.len);
	assert_memory_equal(head_big, big.data, big.len);
	fl_bytes_free(&big);
	fl_bytes_free(&a);
}

/* Mean of min(size, cap) under the table's inverse CDF, by a fine midpoint sweep. */
static double capped_table_mean(const struct fl_pct *t, double cap)
{
	enum { N = 200000 };
	double sum = 0;

	for (int k = 0; k < N; k++) {
		double v = fl_pct_sample(t, (k + 0.5) / N);
		sum += v < cap ? v : cap;
	}
	return sum / N;
}

/* 2. Sampled targets follow the capped table (mean within 10%), and the packed size
 * reaches the target: exactly, one byte over at a varint length boundary, or the bare
 * stories when they alone exceed it. */
static void test_sizes_follow_table(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g, bare;
	struct fl_bytes out = { 0 };
	double target_sum = 0, packed_sum = 0, want;
	size_t bare_len;

	(void)state;
	default_config(&c);
	gen_init(&g, &c);
	/* The stories-only size: a fixed 1-byte target never gets padding. */
	c.fixed_bytes = 1;
	gen_init(&bare, &c);
	assert_int_equal(fl_reqgen_build(&bare, 0, &out), 0);
	bare_len = out.len;

	for (uint64_t i = 0; i < SIZE_SAMPLES; i++) {
		struct fl_reqgen_info info;
		fl_reqgen_describe(&g, i, &info);
		assert_true(info.target_bytes <= c.max_request_bytes);
		assert_int_equal(fl_reqgen_build(&g, i, &out), 0);
		target_sum += (double)info.target_bytes;
		packed_sum += (double)out.len;
		if (info.target_bytes > bare_len + SLACK) {
			assert_true(out.len >= info.target_bytes);
			assert_true(out.len <= info.target_bytes + 1);
		} else {
			/* Little or no room for padding: about the stories alone. */
			assert_true(out.len + SLACK >= bare_len && out.len <= bare_len + SLACK + 1);
		}
	}
	want = capped_table_mean(&g.sizes, (double)c.max_request_bytes);
	print_message("capped table mean %.0f, sampled mean %.0f, packed mean %.0f bytes\n",
		want, target_sum / SIZE_SAMPLES, packed_sum / SIZE_SAMPLES);
	assert_true(fabs(target_sum / SIZE_SAMPLES - want) < 0.10 * want);
	assert_true(fabs(packed_sum / SIZE_SAMPLES - want) < 0.10 * want);
	fl_bytes_free(&out);
}

/* 3. Fixed sizes are hit exactly; the cap bounds sampled sizes. */
static void test_fixed_size_and_cap(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	struct fl_bytes out = { 0 };
	size_t sizes[] = { 20000, 65536, 100000, 1u << 20 };

	(void)state;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		default_config(&c);
		c.fixed_bytes = sizes[k];
		gen_init(&g, &c);
		for (uint64_t i = 0; i < 20; i++) {
			assert_int_equal(fl_reqgen_build(&g, i, &out), 0);
			assert_true(out.len >= sizes[k] && out.len <= sizes[k] + 1);
		}
	}
	default_config(&c);
	c.max_request_bytes = 50000;
	gen_init(&g, &c);
	for (uint64_t i = 0; i < 500; i++) {
		assert_int_equal(fl_reqgen_build(&g, i, &out), 0);
		assert_true(out.len <= 50000 + 1 || out.len < 20000);
	}
	fl_bytes_free(&out);
}

/* Whether the n bytes at p occur in the corpus. */
static int in_corpus(const uint8_t *p, size_t n)
{
	return memmem(corpus.data, corpus.len, p, n) != NULL;
}

/* 4. Unpacking gives back what describe promised: method, session, user, the configured
 * stories (count, body size, bodies cut from the corpus) and flags; padding comes from
 * the corpus too; packing the decoded message again gives the same bytes. */
static void test_unpack_round_trip(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	struct fl_bytes out = { 0 }, again = { 0 };

	(void)state;
	default_config(&c);
	c.stories = 7;
	c.story_bytes = 300;
	c.want_zstd = 1;
	c.reply_bytes = 12345;
	gen_init(&g, &c);
	for (uint64_t i = 0; i < 40; i++) {
		struct fl_reqgen_info info;
		Frontload__LeafRequest *req;
		fl_reqgen_describe(&g, i, &info);
		assert_int_equal(fl_reqgen_build(&g, i, &out), 0);
		req = frontload__leaf_request__unpack(NULL, out.len, out.data);
		assert_non_null(req);
		assert_int_equal(req->method, info.method);
		assert_int_equal(req->session_id, info.session_id);
		assert_int_equal(req->user_id, info.user_id);
		assert_int_equal(req->n_stories, 7);
		for (size_t k = 0; k < req->n_stories; k++) {
			assert_int_equal(req->stories[k]->body.len, 300);
			assert_true(in_corpus(req->stories[k]->body.data, 300));
		}
		assert_true(req->want_zstd);
		assert_int_equal(req->reply_bytes, 12345);
		if (req->padding.len >= 64)
			assert_true(in_corpus(req->padding.data, 64));
		assert_int_equal(frontload__leaf_request__get_packed_size(req), out.len);
		assert_int_equal(fl_bytes_reserve(&again, out.len), 0);
		assert_int_equal(frontload__leaf_request__pack(req, again.data), out.len);
		assert_memory_equal(again.data, out.data, out.len);
		frontload__leaf_request__free_unpacked(req, NULL);
	}
	fl_bytes_free(&out);
	fl_bytes_free(&again);
}

/* 5. Method frequencies over 20000 requests are within 2 percentage points of the
 * inbound weights of rpc_dist.json (each within 5 standard errors as well). */
static void test_method_mix(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	struct fl_rpc_dist *d = malloc(sizeof *d);
	char path[4096], err[512];
	unsigned count[FL_RPC_INBOUND] = { 0 };
	double total = 0;

	(void)state;
	assert_non_null(d);
	assert_int_equal(fl_data_path("rpc_dist.json", path, sizeof path, err, sizeof err), 0);
	assert_int_equal(fl_rpc_dist_load(path, d, err, sizeof err), 0);
	for (int m = 0; m < FL_RPC_INBOUND; m++)
		total += d->in[m].total_weighted_count;
	default_config(&c);
	gen_init(&g, &c);
	for (uint64_t i = 0; i < MIX_SAMPLES; i++) {
		struct fl_reqgen_info info;
		fl_reqgen_describe(&g, i, &info);
		assert_true(info.method >= 0 && info.method < FL_RPC_INBOUND);
		count[info.method]++;
	}
	for (int m = 0; m < FL_RPC_INBOUND; m++) {
		double w = d->in[m].total_weighted_count / total;
		double f = (double)count[m] / MIX_SAMPLES;
		double se = sqrt(w * (1 - w) / MIX_SAMPLES);
		print_message("%-26s weight %.4f freq %.4f\n", fl_reqgen_method_name(m), w, f);
		assert_true(fabs(f - w) < 0.02);
		assert_true(fabs(f - w) < 5 * se);
	}
	free(d);

	/* A fixed method is always that method. */
	c.method = 3;
	gen_init(&g, &c);
	for (uint64_t i = 0; i < 1000; i++) {
		struct fl_reqgen_info info;
		fl_reqgen_describe(&g, i, &info);
		assert_int_equal(info.method, 3);
	}
}

/* 6. Sessions: at most `sessions` distinct ids, nearly all of them used, and the user id
 * is a function of the session id. */
static void test_sessions(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	enum { NS = 50, N = 5000 };
	uint64_t sid[NS], uid[NS];
	unsigned nsid = 0;

	(void)state;
	default_config(&c);
	c.sessions = NS;
	gen_init(&g, &c);
	for (uint64_t i = 0; i < N; i++) {
		struct fl_reqgen_info info;
		unsigned k;
		fl_reqgen_describe(&g, i, &info);
		for (k = 0; k < nsid && sid[k] != info.session_id; k++)
			;
		if (k == nsid) {
			assert_true(nsid < NS);
			sid[nsid] = info.session_id;
			uid[nsid++] = info.user_id;
		} else {
			assert_int_equal(uid[k], info.user_id);
		}
	}
	assert_int_equal(nsid, NS);  /* 5000 draws over 50 ids: all used */
}

/* 7. Method names and config errors. */
static void test_parse_and_errors(void **state)
{
	struct fl_reqgen_config c;
	struct fl_reqgen g;
	char err[256];
	int m;

	(void)state;
	assert_int_equal(fl_reqgen_method_parse("mix", &m), 0);
	assert_int_equal(m, FL_REQGEN_MIX);
	assert_int_equal(fl_reqgen_method_parse("streamData", &m), 0);
	assert_int_equal(m, FRONTLOAD__INBOUND_METHOD__STREAM_DATA);
	assert_int_equal(fl_reqgen_method_parse("get_all_stories", &m), 0);
	assert_int_equal(m, FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES);
	assert_int_equal(fl_reqgen_method_parse("nope", &m), -1);
	assert_string_equal(fl_reqgen_method_name(FRONTLOAD__INBOUND_METHOD__CREATE_AND_PRIME_SESSION),
		"createAndPrimeSession");

	default_config(&c);
	c.sessions = 0;
	assert_int_equal(fl_reqgen_init(&g, &c, &corpus, err, sizeof err), -1);
	assert_non_null(strstr(err, "sessions"));
	default_config(&c);
	c.method = 9;
	assert_int_equal(fl_reqgen_init(&g, &c, &corpus, err, sizeof err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_parts_equal_build),
		cmocka_unit_test(test_sizes_follow_table),
		cmocka_unit_test(test_fixed_size_and_cap),
		cmocka_unit_test(test_unpack_round_trip),
		cmocka_unit_test(test_method_mix),
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_parse_and_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
