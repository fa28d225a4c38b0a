/* stats_probe.c: tests/stats-probe, a STATS client for the integration scenarios.
 *
 *   stats-probe [--tls-dir DIR] [--bad] HOST:PORT
 *
 * Opens one connection (TLS trusting DIR's certificate when --tls-dir is given). With
 * --bad it first sends a malformed STATS frame (a 4-byte payload) and prints
 * "bad: <status name>: <error text>"; then, on the same connection, a good STATS frame,
 * and prints "ok: <bytes> bytes, snapshot_wall_ns <n>, keys <n>". Exit 0 when the bad
 * frame (if sent) was refused with an error reply and the good one answered with a JSON
 * object; 1 otherwise (the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "run_remote.h"
#include "tls.h"
#include "wire.h"

static int probe_bad(struct fl_remote *c)
{
	struct fl_remote_reply rep;
	char err[512];

	if (fl_remote_exchange(c, FL_MSG_STATS, "junk", 4, &rep, err, sizeof err) != 0) {
		fprintf(stderr, "stats-probe: malformed STATS: %s\n", err);
		return -1;
	}
	json_t *j = fl_remote_parse_reply(&rep.hdr, rep.request_id, rep.payload,
		rep.hdr.payload_len, err, sizeof err);
	free(rep.payload);
	if (j != NULL) {
		fprintf(stderr, "stats-probe: a malformed STATS was answered with stats\n");
		json_decref(j);
		return -1;
	}
	printf("bad: %s\n", err);
	return 0;
}

static int probe_good(struct fl_remote *c)
{
	struct fl_remote_reply rep;
	char err[512];

	if (fl_remote_exchange(c, FL_MSG_STATS, NULL, 0, &rep, err, sizeof err) != 0) {
		fprintf(stderr, "stats-probe: STATS: %s\n", err);
		return -1;
	}
	json_t *j = fl_remote_parse_reply(&rep.hdr, rep.request_id, rep.payload,
		rep.hdr.payload_len, err, sizeof err);
	free(rep.payload);
	if (j == NULL) {
		fprintf(stderr, "stats-probe: STATS: %s\n", err);
		return -1;
	}
	printf("ok: %u bytes, snapshot_wall_ns %lld, keys %zu\n", rep.hdr.payload_len,
		(long long)json_integer_value(json_object_get(j, "snapshot_wall_ns")),
		json_object_size(j));
	json_decref(j);
	return 0;
}

int main(int argc, char **argv)
{
	const char *tls_dir = NULL, *addr = NULL;
	int bad = 0;
	char err[512];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tls-dir") == 0 && i + 1 < argc)
			tls_dir = argv[++i];
		else if (strcmp(argv[i], "--bad") == 0)
			bad = 1;
		else if (argv[i][0] != '-' && addr == NULL)
			addr = argv[i];
		else {
			addr = NULL;  /* unknown flag or a second address: usage */
			break;
		}
	}
	if (addr == NULL) {
		fprintf(stderr, "usage: stats-probe [--tls-dir DIR] [--bad] HOST:PORT\n");
		return 2;
	}
	SSL_CTX *tls = tls_dir ? fl_tls_client_ctx(tls_dir, err, sizeof err) : NULL;
	if (tls_dir && tls == NULL) {
		fprintf(stderr, "stats-probe: %s\n", err);
		return 1;
	}
	struct fl_remote *c = fl_remote_open(addr, tls, 5, err, sizeof err);
	int rc = c == NULL;
	if (c == NULL)
		fprintf(stderr, "stats-probe: %s\n", err);
	else
		rc = (bad && probe_bad(c) != 0) || probe_good(c) != 0;
	fl_remote_close(c);
	if (tls)
		SSL_CTX_free(tls);
	return rc;
}
