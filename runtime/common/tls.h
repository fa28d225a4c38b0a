/* tls.h: OpenSSL contexts for frontload's channels, and the self-signed certificate.
 *
 * The mock (and the leaf when its listener uses TLS) serves with a certificate generated
 * once (ECDSA P-256, self-signed, CN "frontload") into a directory: at install time
 * (`frontload-mock --gen-cert DIR`) or on first run. Clients verify the peer against that
 * same certificate, so a channel is authenticated as well as encrypted. TLS 1.2 minimum.
 */
#ifndef FL_TLS_H
#define FL_TLS_H

#include <stddef.h>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

#define FL_TLS_CERT_FILE "frontload-cert.pem"
#define FL_TLS_KEY_FILE "frontload-key.pem"

/* Create dir (mode 0700) if missing and write a new key and certificate there unless both
 * files already exist. Returns 0, or -1 (err filled). */
int fl_tls_ensure_cert(const char *dir, char *err, size_t errlen);

/* Server context using dir's certificate and key. NULL (err filled) on failure. */
SSL_CTX *fl_tls_server_ctx(const char *dir, char *err, size_t errlen);

/* Client context trusting dir's certificate (peer verified). NULL (err filled). */
SSL_CTX *fl_tls_client_ctx(const char *dir, char *err, size_t errlen);

/* "TLSv1.3 TLS_AES_256_GCM_SHA384" for an established connection, into out. */
void fl_tls_describe(const SSL *ssl, char *out, size_t outlen);

/* The default certificate directory: <exe dir>/../share/frontload/tls when that exists
 * or its parent <exe dir>/../share/frontload exists (an install tree), else <exe dir>/tls.
 * Returns 0, or -1 (err filled). */
int fl_tls_default_dir(char *out, size_t outlen, char *err, size_t errlen);

/* Count OpenSSL's heap use from now on (CRYPTO_set_mem_functions): call first thing in
 * main, before OpenSSL allocates anything. Returns 0, or -1 when it is too late (then
 * fl_tls_heap_bytes says -1). */
int fl_tls_count_memory(void);

/* Bytes OpenSSL holds on the heap (allocator usable sizes), or -1 when not counted. */
long long fl_tls_heap_bytes(void);

#endif
