/* test_tls.c: tests for runtime/common/tls.c: the self-signed certificate, TLS contexts and
 * in-memory handshakes. */
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
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls.h"

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
		cmocka_unit_test_setup_teardown(test_tls_ensure_cert, tls_setup, tls_teardown),
		cmocka_unit_test_setup_teardown(test_tls_handshake, tls_setup, tls_teardown),
		cmocka_unit_test_setup_teardown(test_tls_errors, tls_setup, tls_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
