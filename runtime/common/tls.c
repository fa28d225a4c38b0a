/* tls.c: the self-signed certificate and OpenSSL 3 contexts for frontload's channels. */
#define _GNU_SOURCE
#include "tls.h"

#include "osfile.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define TLS_CERT_DAYS (10 * 365 + 3)  /* ten years, leap days included */

/* OpenSSL's live heap bytes, kept by the hooks below; tls_counted once they are in. */
static _Atomic long long tls_heap;
static int tls_counted;

static void *tls_malloc(size_t n, const char *file, int line)
{
	void *p = malloc(n);
	(void)file;
	(void)line;
	if (p != NULL)
		atomic_fetch_add_explicit(&tls_heap, (long long)malloc_usable_size(p),
			memory_order_relaxed);
	return p;
}

/* NULL returns at once: OpenSSL 3's ERR_clear_error frees each of its 16 error slots, most
 * of them empty, and libevent calls it around its TLS reads and writes. */
static void tls_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p == NULL)
		return;
	atomic_fetch_sub_explicit(&tls_heap, (long long)malloc_usable_size(p),
		memory_order_relaxed);
	free(p);
}

/* OpenSSL hands every realloc here, n == 0 included (a free). */
static void *tls_realloc(void *p, size_t n, const char *file, int line)
{
	size_t old = p != NULL ? malloc_usable_size(p) : 0;
	void *q;

	if (n == 0) {
		tls_free(p, file, line);
		return NULL;
	}
	q = realloc(p, n);
	if (q != NULL)
		atomic_fetch_add_explicit(&tls_heap, (long long)malloc_usable_size(q) -
			(long long)old, memory_order_relaxed);
	return q;
}

int fl_tls_count_memory(void)
{
	if (CRYPTO_set_mem_functions(tls_malloc, tls_realloc, tls_free) != 1)
		return -1;
	tls_counted = 1;
	return 0;
}

long long fl_tls_heap_bytes(void)
{
	return tls_counted ? atomic_load_explicit(&tls_heap, memory_order_relaxed) : -1;
}

/* Fill err with what, then the oldest OpenSSL error queued (if any); clear the queue. */
static void tls_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	if (err && errlen) {
		if (e) {
			char buf[256];
			ERR_error_string_n(e, buf, sizeof buf);
			snprintf(err, errlen, "%s: %s", what, buf);
		} else {
			snprintf(err, errlen, "%s", what);
		}
	}
	ERR_clear_error();
}

/* Fill err with what, the path and strerror(errno). */
static void tls_err_os(char *err, size_t errlen, const char *what, const char *path)
{
	if (err && errlen)
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
}

static int tls_path(char *out, size_t outlen, const char *dir, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

static int tls_add_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -1;
	int ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* A self-signed v3 certificate for key: CN frontload, SAN localhost and 127.0.0.1, valid
 * from an hour ago (clock skew between hosts) for ten years. CA:TRUE so that the cert is a
 * well-formed trust anchor when a client pins it. */
static X509 *tls_make_cert(EVP_PKEY *key)
{
	X509 *x = X509_new();
	if (!x)
		return NULL;
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	if (RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f;  /* positive */
	bn = BN_bin2bn(serial, sizeof serial, NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		goto fail;
	if (!X509_set_version(x, X509_VERSION_3) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_time_adj_ex(X509_getm_notAfter(x), TLS_CERT_DAYS, 0, NULL) ||
	    !X509_set_pubkey(x, key))
		goto fail;
	X509_NAME *name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)"frontload", -1, -1, 0) ||
	    !X509_set_issuer_name(x, name))
		goto fail;
	if (tls_add_ext(x, NID_basic_constraints, "critical,CA:TRUE") ||
	    tls_add_ext(x, NID_key_usage, "critical,digitalSignature,keyCertSign") ||
	    tls_add_ext(x, NID_ext_key_usage, "serverAuth,clientAuth") ||
	    tls_add_ext(x, NID_subject_key_identifier, "hash") ||
	    tls_add_ext(x, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"))
		goto fail;
	if (!X509_sign(x, key, EVP_sha256()))
		goto fail;
	BN_free(bn);
	return x;
fail:
	BN_free(bn);
	X509_free(x);
	return NULL;
}

/* Write a PEM file through a temporary name and rename it into place (osfile.h), synced,
 * so a reader never sees half a file. key != NULL writes the private key, else the
 * certificate. */
static int tls_write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert,
	char *err, size_t errlen)
{
	struct fl_atomic_file a;

	if (fl_atomic_open(&a, path, mode, FL_ATOMIC_SYNC, err, errlen) != 0)
		return -1;
	int ok = key ? PEM_write_PrivateKey(a.f, key, NULL, NULL, 0, NULL, NULL)
	             : PEM_write_X509(a.f, cert);
	if (!ok)
		tls_err(err, errlen, "cannot write PEM");
	return fl_atomic_commit(&a, ok, err, errlen);
}

static int tls_both_exist(const char *cert, const char *key)
{
	return access(cert, R_OK) == 0 && access(key, R_OK) == 0;
}

int fl_tls_ensure_cert(const char *dir, char *err, size_t errlen)
{
	char cert[PATH_MAX], key[PATH_MAX], lock[PATH_MAX];
	if (tls_path(cert, sizeof cert, dir, FL_TLS_CERT_FILE) ||
	    tls_path(key, sizeof key, dir, FL_TLS_KEY_FILE) ||
	    tls_path(lock, sizeof lock, dir, ".frontload-tls.lock")) {
		if (err)
			snprintf(err, errlen, "certificate directory path too long");
		return -1;
	}
	if (tls_both_exist(cert, key))
		return 0;
	if (fl_mkdir_p(dir, 0700, err, errlen))
		return -1;

	/* Processes starting together (a mock per test) must not pair one's key with
	 * another's certificate: generate under an exclusive lock and look again. */
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0) {
		tls_err_os(err, errlen, "cannot create", lock);
		return -1;
	}
	while (flock(lfd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			tls_err_os(err, errlen, "cannot lock", lock);
			close(lfd);
			return -1;
		}
	}
	int rc = 0;
	if (!tls_both_exist(cert, key)) {
		EVP_PKEY *pk = EVP_EC_gen("P-256");
		X509 *x = pk ? tls_make_cert(pk) : NULL;
		if (!pk || !x) {
			tls_err(err, errlen, pk ? "cannot make certificate" : "cannot make P-256 key");
			rc = -1;
		} else {
			/* Key first: a certificate present means its key is too. */
			rc = tls_write_pem(key, 0600, pk, NULL, err, errlen);
			if (rc == 0)
				rc = tls_write_pem(cert, 0644, NULL, x, err, errlen);
		}
		X509_free(x);
		EVP_PKEY_free(pk);
	}
	close(lfd);  /* releases the lock */
	return rc;
}

static SSL_CTX *tls_new_ctx(const SSL_METHOD *m, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(m);
	if (!ctx) {
		tls_err(err, errlen, "SSL_CTX_new");
		return NULL;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
		tls_err(err, errlen, "cannot set TLS 1.2 minimum");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	/* bufferevent_openssl may hand SSL_write a moved buffer after a WANT_WRITE. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return ctx;
}

SSL_CTX *fl_tls_server_ctx(const char *dir, char *err, size_t errlen)
{
	char cert[PATH_MAX], key[PATH_MAX];
	if (tls_path(cert, sizeof cert, dir, FL_TLS_CERT_FILE) ||
	    tls_path(key, sizeof key, dir, FL_TLS_KEY_FILE)) {
		if (err)
			snprintf(err, errlen, "certificate directory path too long");
		return NULL;
	}
	SSL_CTX *ctx = tls_new_ctx(TLS_server_method(), err, errlen);
	if (!ctx)
		return NULL;
	char what[PATH_MAX + 32];
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		snprintf(what, sizeof what, "cannot load certificate %s", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		snprintf(what, sizeof what, "cannot load key %s", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(what, sizeof what, "key and certificate in %s do not match", dir);
		goto fail;
	}
	return ctx;
fail:
	tls_err(err, errlen, what);
	SSL_CTX_free(ctx);
	return NULL;
}

SSL_CTX *fl_tls_client_ctx(const char *dir, char *err, size_t errlen)
{
	char cert[PATH_MAX];
	if (tls_path(cert, sizeof cert, dir, FL_TLS_CERT_FILE)) {
		if (err)
			snprintf(err, errlen, "certificate directory path too long");
		return NULL;
	}
	SSL_CTX *ctx = tls_new_ctx(TLS_client_method(), err, errlen);
	if (!ctx)
		return NULL;
	/* The pinned certificate is the only trust anchor; PARTIAL_CHAIN lets the peer's own
	 * (self-signed) certificate end the chain. No hostname check: the pin is the identity. */
	if (SSL_CTX_load_verify_locations(ctx, cert, NULL) != 1) {
		char what[PATH_MAX + 32];
		snprintf(what, sizeof what, "cannot load certificate %s", cert);
		tls_err(err, errlen, what);
		SSL_CTX_free(ctx);
		return NULL;
	}
	X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx), X509_V_FLAG_PARTIAL_CHAIN);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

void fl_tls_describe(const SSL *ssl, char *out, size_t outlen)
{
	if (!outlen)
		return;
	if (!ssl) {
		snprintf(out, outlen, "none");
		return;
	}
	const char *cipher = SSL_get_cipher_name(ssl);
	snprintf(out, outlen, "%s %s", SSL_get_version(ssl), cipher ? cipher : "(none)");
}

static int tls_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fl_tls_default_dir(char *out, size_t outlen, char *err, size_t errlen)
{
	char exe[PATH_MAX], share[PATH_MAX], real[PATH_MAX];
	if (fl_exe_dir(exe, sizeof exe) != 0) {
		if (err)
			snprintf(err, errlen, "cannot find this executable's directory");
		return -1;
	}
	int n = snprintf(share, sizeof share, "%s/../share/frontload", exe);
	if (n > 0 && (size_t)n < sizeof share && tls_is_dir(share)) {
		/* Installed layout: tls/ beside data/ (created by ensure_cert if missing). */
		const char *base = realpath(share, real) ? real : share;
		n = snprintf(out, outlen, "%s/tls", base);
	} else {
		n = snprintf(out, outlen, "%s/tls", exe);
	}
	if (n <= 0 || (size_t)n >= outlen) {
		if (err)
			snprintf(err, errlen, "certificate directory path too long");
		return -1;
	}
	return 0;
}
