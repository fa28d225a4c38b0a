/* test_mock.c: the mock's latency shaping, method table and handlers, and TLS (mock_shape.c,
 * mock_methods.c, tls.c). The server itself is exercised end to end by the integration
 * tests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "mock_methods.h"
#include "mock_shape.h"
#include "tls.h"

/* ---- 1. latency shaping ---- */

static uint32_t decide(const struct mock_shape_cfg *c, uint32_t l, enum mock_shape_action want)
{
	uint32_t wait = 12345;
	assert_int_equal(mock_shape_decide(c, l, &wait), want);
	return wait;
}

/* 1.1 Defaults, and each region with its boundaries: [0,100) now, [100,200) spin, else timer. */
static void test_shape_regions(void **state)
{
	(void)state;
	struct mock_shape_cfg c;
	mock_shape_defaults(&c);
	assert_int_equal(c.cap_us, 200000);
	assert_int_equal(c.offset_us, 0);
	assert_int_equal(c.skip_us, 100);
	assert_int_equal(c.spin_us, 200);

	assert_int_equal(decide(&c, 0, MOCK_SHAPE_NOW), 0);
	assert_int_equal(decide(&c, 99, MOCK_SHAPE_NOW), 0);
	assert_int_equal(decide(&c, 100, MOCK_SHAPE_SPIN), 100);
	assert_int_equal(decide(&c, 199, MOCK_SHAPE_SPIN), 199);
	assert_int_equal(decide(&c, 200, MOCK_SHAPE_TIMER), 200);
	assert_int_equal(decide(&c, 5000, MOCK_SHAPE_TIMER), 5000);
	/* wait_us may be NULL */
	assert_int_equal(mock_shape_decide(&c, 150, NULL), MOCK_SHAPE_SPIN);
	assert_string_equal(mock_shape_action_name(MOCK_SHAPE_TIMER), "timer");
	assert_string_equal(mock_shape_action_name(MOCK_SHAPE_ACTIONS), "unknown");
}

/* 1.2 The cap applies before the offset; the offset floors at 0. */
static void test_shape_cap_offset(void **state)
{
	(void)state;
	struct mock_shape_cfg c;
	mock_shape_defaults(&c);
	assert_int_equal(mock_shape_effective_us(&c, 199999), 199999);
	assert_int_equal(mock_shape_effective_us(&c, 200000), 200000);
	assert_int_equal(mock_shape_effective_us(&c, 200001), 200000);
	assert_int_equal(mock_shape_effective_us(&c, UINT32_MAX), 200000);
	assert_int_equal(decide(&c, 9979607, MOCK_SHAPE_TIMER), 200000);

	/* A fixed latency replaces every asked one, then goes through cap and offset. */
	c.fixed_us = 5000;
	assert_int_equal(mock_shape_effective_us(&c, 0), 5000);
	assert_int_equal(mock_shape_effective_us(&c, 9979607), 5000);
	c.fixed_us = 300000;
	assert_int_equal(mock_shape_effective_us(&c, 10), 200000);
	c.fixed_us = MOCK_SHAPE_NOT_FIXED;

	c.offset_us = 50;
	assert_int_equal(mock_shape_effective_us(&c, 0), 0);
	assert_int_equal(mock_shape_effective_us(&c, 50), 0);
	assert_int_equal(mock_shape_effective_us(&c, 51), 1);
	assert_int_equal(mock_shape_effective_us(&c, UINT32_MAX), 199950);
	assert_int_equal(decide(&c, 149, MOCK_SHAPE_NOW), 0);     /* 99 */
	assert_int_equal(decide(&c, 150, MOCK_SHAPE_SPIN), 100);  /* 100 */
	assert_int_equal(decide(&c, 249, MOCK_SHAPE_SPIN), 199);
	assert_int_equal(decide(&c, 250, MOCK_SHAPE_TIMER), 200);

	c.offset_us = 300000;  /* larger than the cap: everything is immediate */
	assert_int_equal(decide(&c, UINT32_MAX, MOCK_SHAPE_NOW), 0);
}

/* 1.3 Degenerate thresholds: skip >= spin leaves no spin region; zeros time everything. */
static void test_shape_thresholds(void **state)
{
	(void)state;
	struct mock_shape_cfg c = { .cap_us = 1000, .offset_us = 0, .skip_us = 300, .spin_us = 200,
		.fixed_us = MOCK_SHAPE_NOT_FIXED };
	decide(&c, 250, MOCK_SHAPE_NOW);
	assert_int_equal(decide(&c, 300, MOCK_SHAPE_TIMER), 300);
	c.skip_us = 0;
	c.spin_us = 0;
	assert_int_equal(decide(&c, 0, MOCK_SHAPE_TIMER), 0);
	c.cap_us = 0;
	assert_int_equal(decide(&c, 777, MOCK_SHAPE_TIMER), 0);
}

/* 1.4 The spin waits at least as long as asked. */
static void test_shape_spin(void **state)
{
	(void)state;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	mock_shape_spin(300);
	clock_gettime(CLOCK_MONOTONIC, &b);
	int64_t ns = (b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec);
	assert_true(ns >= 300000);
	mock_shape_spin(0);
}

/* ---- 2. method table and handlers ---- */

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

/* ---- 3. TLS ---- */

struct tls_fixture {
	char dir[64];
	char other[64];
};

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[512];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static int tls_setup(void **state)
{
	struct tls_fixture *t = calloc(1, sizeof *t);
	assert_non_null(t);
	snprintf(t->dir, sizeof t->dir, "/tmp/fl-test-mock-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->other, sizeof t->other, "/tmp/fl-test-mock-XXXXXX");
	assert_non_null(mkdtemp(t->other));
	*state = t;
	return 0;
}

static int tls_teardown(void **state)
{
	struct tls_fixture *t = *state;
	rm_tree(t->dir);
	rm_tree(t->other);
	free(t);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 8192);
	if (buf && fread(buf, 1, 8191, f) == 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* 3.1 ensure_cert creates both files (key 0600) in a new subdirectory; a second call keeps
 * them; the certificate is P-256, CN frontload, SAN localhost and 127.0.0.1, ten years. */
static void test_tls_ensure_cert(void **state)
{
	struct tls_fixture *t = *state;
	char dir[128], cert[192], key[192], err[256] = "";
	snprintf(dir, sizeof dir, "%s/sub/tls", t->dir);
	snprintf(cert, sizeof cert, "%s/%s", dir, FL_TLS_CERT_FILE);
	snprintf(key, sizeof key, "%s/%s", dir, FL_TLS_KEY_FILE);
	assert_int_equal(fl_tls_ensure_cert(dir, err, sizeof err), 0);

	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(cert, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_size > 0);

	char *c1 = slurp(cert), *k1 = slurp(key);
	assert_non_null(c1);
	assert_non_null(k1);
	assert_int_equal(fl_tls_ensure_cert(dir, err, sizeof err), 0);
	char *c2 = slurp(cert), *k2 = slurp(key);
	assert_string_equal(c1, c2);
	assert_string_equal(k1, k2);
	free(c1);
	free(c2);
	free(k1);
	free(k2);

	FILE *f = fopen(cert, "r");
	assert_non_null(f);
	X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	char cn[64] = "";
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
	assert_string_equal(cn, "frontload");
	assert_int_equal(X509_check_host(x, "localhost", 0, 0, NULL), 1);
	assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
	int days = 0, secs = 0;
	assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x),
		X509_get0_notAfter(x)), 1);
	assert_true(days >= 3650);
	EVP_PKEY *pk = X509_get0_pubkey(x);
	assert_true(EVP_PKEY_is_a(pk, "EC"));
	char group[32] = "";
	size_t glen = 0;
	EVP_PKEY_get_utf8_string_param(pk, "group", group, sizeof group, &glen);
	assert_string_equal(group, "prime256v1");
	X509_free(x);

	/* Only one file present: both are made anew. */
	unlink(cert);
	assert_int_equal(fl_tls_ensure_cert(dir, err, sizeof err), 0);
	assert_int_equal(access(cert, R_OK), 0);
	assert_int_equal(access(key, R_OK), 0);
	/* A path that cannot be a directory fails with a message. */
	err[0] = 0;
	assert_int_equal(fl_tls_ensure_cert(cert, err, sizeof err), -1);
	assert_true(err[0] != 0);
}

/* Drive a handshake between two SSLs joined by a BIO pair; 0 when both finish. */
static int handshake(SSL *cli, SSL *srv)
{
	BIO *a, *b;
	if (!BIO_new_bio_pair(&a, 0, &b, 0))
		return -1;
	SSL_set_bio(cli, a, a);
	SSL_set_bio(srv, b, b);
	SSL_set_connect_state(cli);
	SSL_set_accept_state(srv);
	int cdone = 0, sdone = 0;
	for (int i = 0; i < 100 && !(cdone && sdone); i++) {
		if (!cdone) {
			int r = SSL_do_handshake(cli);
			if (r == 1)
				cdone = 1;
			else if (SSL_get_error(cli, r) != SSL_ERROR_WANT_READ)
				return -1;
		}
		if (!sdone) {
			int r = SSL_do_handshake(srv);
			if (r == 1)
				sdone = 1;
			else if (SSL_get_error(srv, r) != SSL_ERROR_WANT_READ)
				return -1;
		}
	}
	return cdone && sdone ? 0 : -1;
}

/* 3.2 Server and client contexts from the directory shake hands in memory over TLS 1.3,
 * and move application data; a client pinned to another certificate is refused. */
static void test_tls_handshake(void **state)
{
	struct tls_fixture *t = *state;
	char err[256] = "";
	assert_int_equal(fl_tls_ensure_cert(t->dir, err, sizeof err), 0);
	SSL_CTX *sctx = fl_tls_server_ctx(t->dir, err, sizeof err);
	assert_non_null(sctx);
	SSL_CTX *cctx = fl_tls_client_ctx(t->dir, err, sizeof err);
	assert_non_null(cctx);

	SSL *cli = SSL_new(cctx), *srv = SSL_new(sctx);
	assert_int_equal(handshake(cli, srv), 0);
	assert_int_equal(SSL_get_verify_result(cli), X509_V_OK);
	char d[96];
	fl_tls_describe(cli, d, sizeof d);
	assert_true(strncmp(d, "TLSv1.3 ", 8) == 0);
	fl_tls_describe(srv, d, sizeof d);
	assert_true(strncmp(d, "TLSv1.3 TLS_", 12) == 0);
	char buf[8] = "";
	assert_int_equal(SSL_write(cli, "frame", 5), 5);
	assert_int_equal(SSL_read(srv, buf, sizeof buf), 5);
	assert_memory_equal(buf, "frame", 5);
	SSL_free(cli);
	SSL_free(srv);

	/* TLS 1.2 is still accepted (the floor). */
	cli = SSL_new(cctx);
	srv = SSL_new(sctx);
	SSL_set_max_proto_version(cli, TLS1_2_VERSION);
	assert_int_equal(handshake(cli, srv), 0);
	fl_tls_describe(cli, d, sizeof d);
	assert_true(strncmp(d, "TLSv1.2 ", 8) == 0);
	SSL_free(cli);
	SSL_free(srv);

	/* Pinned to a different certificate: verification fails. */
	assert_int_equal(fl_tls_ensure_cert(t->other, err, sizeof err), 0);
	SSL_CTX *octx = fl_tls_client_ctx(t->other, err, sizeof err);
	assert_non_null(octx);
	cli = SSL_new(octx);
	srv = SSL_new(sctx);
	assert_int_equal(handshake(cli, srv), -1);
	assert_int_not_equal(SSL_get_verify_result(cli), X509_V_OK);
	SSL_free(cli);
	SSL_free(srv);
	SSL_CTX_free(octx);

	fl_tls_describe(NULL, d, sizeof d);
	assert_string_equal(d, "none");
	SSL_CTX_free(cctx);
	SSL_CTX_free(sctx);
}

/* 3.3 Contexts from a directory without a certificate fail with a message; the default
 * directory ends in /tls. */
static void test_tls_errors(void **state)
{
	struct tls_fixture *t = *state;
	char dir[128], err[256] = "";
	snprintf(dir, sizeof dir, "%s/missing", t->other);
	assert_null(fl_tls_server_ctx(dir, err, sizeof err));
	assert_non_null(strstr(err, FL_TLS_CERT_FILE));
	err[0] = 0;
	assert_null(fl_tls_client_ctx(dir, err, sizeof err));
	assert_true(err[0] != 0);

	char out[4096];
	assert_int_equal(fl_tls_default_dir(out, sizeof out, err, sizeof err), 0);
	size_t n = strlen(out);
	assert_true(n > 4 && strcmp(out + n - 4, "/tls") == 0);
	assert_int_equal(fl_tls_default_dir(out, 4, err, sizeof err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape_regions),
		cmocka_unit_test(test_shape_cap_offset),
		cmocka_unit_test(test_shape_thresholds),
		cmocka_unit_test(test_shape_spin),
		cmocka_unit_test(test_method_table),
		cmocka_unit_test_setup_teardown(test_handler_size, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_cap, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_errors, call_setup, call_teardown),
		cmocka_unit_test_setup_teardown(test_handler_deterministic, call_setup,
			call_teardown),
		cmocka_unit_test_setup_teardown(test_tls_ensure_cert, tls_setup, tls_teardown),
		cmocka_unit_test_setup_teardown(test_tls_handshake, tls_setup, tls_teardown),
		cmocka_unit_test_setup_teardown(test_tls_errors, tls_setup, tls_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
