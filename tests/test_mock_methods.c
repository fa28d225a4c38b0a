/* test_mock_methods.c: tests for runtime/mock/mock_methods.c, the mock's method table and
 * handlers. The server itself is exercised end to end by the integration tests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mock_methods.h"

/* rpc_dist.json "outbound", descending per-session call count. */
static const char *const want_names[MOCK_METHOD_COUNT] = {
	"mcGet", "mcLeaseGet", "mcSet", "fetchTopKEntitiesRequest",
	"getActionStreamsRequestCompressed2", "getObjectsFromQueries", "getSerializedObjects",
	"getStatus", "runFullyRemotePrediction", "getActionStreamsCompressed2", "runModelMethod",
	"edsMultiGet", "fetchCandidateScoreRequest", "mcLeaseSet", "prefixScan",
	"fetchEntityFeatures", "getUserConsents", "fciGet", "multiget", "MultiGet",
};

/* 2.1 Twenty distinct names in index order and twenty distinct handler symbols. */
static void test_method_table(void **state)
{
	(void)state;
	for (unsigned i = 0; i < MOCK_METHOD_COUNT; i++) {
		assert_string_equal(mock_method_table[i].name, want_names[i]);
		assert_string_equal(mock_method_name(i), want_names[i]);
		assert_non_null(mock_method_table[i].fn);
		for (unsigned j = 0; j < i; j++) {
			assert_string_not_equal(mock_method_table[i].name, mock_method_table[j].name);
			assert_true(mock_method_table[i].fn != mock_method_table[j].fn);
		}
	}
	assert_ptr_equal(mock_method_table[0].fn, mock_mcGet);
	assert_ptr_equal(mock_method_table[4].fn, mock_getActionStreamsRequestCompressed2);
	assert_ptr_equal(mock_method_table[18].fn, mock_multiget);
	assert_ptr_equal(mock_method_table[19].fn, mock_MultiGet);
	assert_string_equal(mock_method_name(MOCK_METHOD_COUNT), "unknown");
}

#define CORPUS_BYTES (1u << 20)

struct fixture {
	uint8_t *corpus;
	struct mock_call call;
};

static int call_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->corpus = malloc(CORPUS_BYTES);
	assert_non_null(f->corpus);
	uint64_t x = 1;
	for (size_t i = 0; i < CORPUS_BYTES; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		f->corpus[i] = (uint8_t)(x >> 56);
	}
	f->call.corpus = f->corpus;
	f->call.corpus_len = CORPUS_BYTES;
	f->call.max_reply_bytes = 32u << 20;
	*state = f;
	return 0;
}

static int call_teardown(void **state)
{
	struct fixture *f = *state;
	mock_call_release(&f->call);
	free(f->corpus);
	free(f);
	return 0;
}

/* A request body: big-endian size then filler bytes of value fill (len >= 4). */
static void make_body(uint8_t *b, size_t len, uint32_t size, uint8_t fill)
{
	memset(b, fill, len);
	b[0] = (uint8_t)(size >> 24);
	b[1] = (uint8_t)(size >> 16);
	b[2] = (uint8_t)(size >> 8);
	b[3] = (uint8_t)size;
}

/* The reply's bytes are corpus bytes from some offset, wrapping around the end. */
static void assert_from_corpus(const struct fixture *f, const Frontload__RpcReply *r)
{
	if (r->body.len == 0)
		return;
	const uint8_t *d = r->body.data;
	if (d >= f->corpus && d + r->body.len <= f->corpus + CORPUS_BYTES)
		return;  /* a slice of the corpus itself */
	size_t off = 0;
	while (off < CORPUS_BYTES && memcmp(f->corpus + off, d, 16) != 0)
		off++;
	assert_true(off < CORPUS_BYTES);
	for (size_t i = 0; i < r->body.len; i++)
		assert_int_equal(d[i], f->corpus[(off + i) % CORPUS_BYTES]);
}

static void reply_init(Frontload__RpcReply *r)
{
	memset(r, 0, sizeof *r);  /* the handlers set method and body only */
	r->method = 999;
}

/* 2.2 Every handler honours the big-endian size and names its own index. */
static void test_handler_size(void **state)
{
	struct fixture *f = *state;
	uint8_t body[64];
	static const uint32_t sizes[] = { 0, 1, 9, 16, 586, 4096, 65537, 523283 };
	for (unsigned m = 0; m < MOCK_METHOD_COUNT; m++) {
		for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			Frontload__RpcReply r;
			reply_init(&r);
			make_body(body, sizeof body, sizes[k], (uint8_t)m);
			assert_int_equal(mock_method_table[m].fn(&f->call, body, sizeof body, &r),
				MOCK_OK);
			assert_int_equal(r.method, m);
			assert_int_equal(r.body.len, sizes[k]);
			assert_from_corpus(f, &r);
		}
	}
	/* A body of exactly 4 bytes is enough. */
	Frontload__RpcReply r;
	reply_init(&r);
	make_body(body, 4, 100, 0);
	assert_int_equal(mock_mcSet(&f->call, body, 4, &r), MOCK_OK);
	assert_int_equal(r.body.len, 100);
}

/* 2.3 Sizes above max_reply_bytes are cut to it; larger than the corpus wraps around. */
static void test_handler_cap(void **state)
{
	struct fixture *f = *state;
	uint8_t body[16];
	Frontload__RpcReply r;
	f->call.max_reply_bytes = 5000;
	reply_init(&r);
	make_body(body, sizeof body, UINT32_MAX, 1);
	assert_int_equal(mock_getStatus(&f->call, body, sizeof body, &r), MOCK_OK);
	assert_int_equal(r.body.len, 5000);
	make_body(body, sizeof body, 5001, 1);
	assert_int_equal(mock_getStatus(&f->call, body, sizeof body, &r), MOCK_OK);
	assert_int_equal(r.body.len, 5000);
	make_body(body, sizeof body, 4999, 1);
	assert_int_equal(mock_getStatus(&f->call, body, sizeof body, &r), MOCK_OK);
	assert_int_equal(r.body.len, 4999);

	f->call.max_reply_bytes = 3 * CORPUS_BYTES + 17;
	make_body(body, sizeof body, 3 * CORPUS_BYTES + 17, 2);
	assert_int_equal(mock_prefixScan(&f->call, body, sizeof body, &r), MOCK_OK);
	assert_int_equal(r.body.len, 3 * CORPUS_BYTES + 17);
	assert_ptr_equal(r.body.data, f->call.scratch);
	assert_from_corpus(f, &r);
}

/* 2.4 Bad input: a body under 4 bytes, an unknown method, no corpus. */
static void test_handler_errors(void **state)
{
	struct fixture *f = *state;
	uint8_t body[8] = { 0, 0, 1, 0 };
	Frontload__RpcReply r;
	reply_init(&r);
	for (size_t len = 0; len < MOCK_REQ_SIZE_BYTES; len++)
		assert_int_equal(mock_fciGet(&f->call, body, len, &r), MOCK_ERR_SHORT_BODY);
	assert_int_equal(mock_fciGet(&f->call, NULL, 0, &r), MOCK_ERR_SHORT_BODY);
	assert_int_equal(mock_dispatch(&f->call, MOCK_METHOD_COUNT, body, 8, &r),
		MOCK_ERR_UNKNOWN_METHOD);
	assert_int_equal(mock_dispatch(&f->call, UINT32_MAX, body, 8, &r),
		MOCK_ERR_UNKNOWN_METHOD);
	assert_int_equal(mock_dispatch(&f->call, 3, body, 8, &r), MOCK_OK);
	assert_int_equal(r.method, 3);
	assert_int_equal(r.body.len, 256);

	struct mock_call empty = { .max_reply_bytes = 100 };
	assert_int_equal(mock_mcGet(&empty, body, 8, &r), MOCK_ERR_NO_CORPUS);
	uint8_t zero[4] = { 0 };
	assert_int_equal(mock_mcGet(&empty, zero, 4, &r), MOCK_OK);  /* nothing to cut */
	assert_int_equal(r.body.len, 0);
	for (int rc = MOCK_OK; rc >= MOCK_ERR_NO_MEMORY; rc--)
		assert_string_not_equal(mock_strerror(rc), "unknown error");
}

/* 2.5 The same request gets the same bytes; other requests get other offsets. */
static void test_handler_deterministic(void **state)
{
	struct fixture *f = *state;
	uint8_t a[100], b[100];
	Frontload__RpcReply r1, r2;
	reply_init(&r1);
	reply_init(&r2);
	make_body(a, sizeof a, 2000, 7);
	memcpy(b, a, sizeof a);
	assert_int_equal(mock_edsMultiGet(&f->call, a, sizeof a, &r1), MOCK_OK);
	assert_int_equal(mock_edsMultiGet(&f->call, b, sizeof b, &r2), MOCK_OK);
	assert_ptr_equal(r1.body.data, r2.body.data);
	assert_memory_equal(r1.body.data, r2.body.data, 2000);

	/* Changing the filler, the length or the method moves the slice (almost surely). */
	const uint8_t *first = r1.body.data;
	unsigned moved = 0;
	for (unsigned i = 0; i < 64; i++) {
		b[10 + i] ^= 0x5a;
		assert_int_equal(mock_edsMultiGet(&f->call, b, sizeof b, &r2), MOCK_OK);
		moved += r2.body.data != first;
	}
	assert_true(moved >= 62);
	assert_int_equal(mock_edsMultiGet(&f->call, a, sizeof a - 1, &r2), MOCK_OK);
	assert_ptr_not_equal(r2.body.data, first);
	assert_int_equal(mock_mcLeaseSet(&f->call, a, sizeof a, &r2), MOCK_OK);
	assert_ptr_not_equal(r2.body.data, first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_table),
		cmocka_unit_test_setup_teardown(test_handler_size, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_cap, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_errors, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_deterministic, call_setup,
			call_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
