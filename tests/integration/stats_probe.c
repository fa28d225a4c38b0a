/* stats_probe.c: tests/stats-probe, a STATS client for the integration scenarios.
 *
 *   stats-probe [--tls-dir DIR] [--bad] HOST:PORT
 *
 * Opens one connection (TLS trusting DIR's certificate when --tls-dir is given). With
 * --bad it first sends a malformed STATS frame (a 4-byte payload) and prints
 * "bad: <status name>: <error text>"; then, on the same connection, a good STATS frame,
 * and prints "ok: <bytes> bytes, snapshot_wall_ns <n>, keys <n>". Exit 0 when the bad
 * frame (if sent) was refused with an error reply and the good one answered with a JSON
 * object; 1 otherwise (the reason on stderr); 2 for a bad flag or argument. The flags are
 * a runtime/common/cli.h table (--help lists them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "cli.h"
#include "run_remote.h"
#include "tls.h"
#include "wire.h"

struct probe_opts {
	const char *tls_dir;  /* NULL: plain TCP */
	int bad;
};

#define FL_CLI_OBJ struct probe_opts
static const struct fl_cli_opt probe_opt_defs[] = {
	FL_OPT_STR("tls-dir", tls_dir, "DIR", NULL, "connect with TLS, trusting DIR's "
		"certificate (default: plain TCP)"),
	FL_OPT_FLAG("bad", bad, "first send a malformed STATS frame (a 4-byte payload), which "
		"must be refused with an error reply"),
};
#undef FL_CLI_OBJ
static const struct fl_cli probe_cli = {
	.opts = probe_opt_defs, .nopts = sizeof probe_opt_defs / sizeof probe_opt_defs[0],
};

static void probe_usage(FILE *f)
{
	fprintf(f,
"usage: stats-probe [--tls-dir DIR] [--bad] HOST:PORT\n"
"\n"
"A STATS client for the integration scenarios. It opens one connection to HOST:PORT;\n"
"with --bad it first sends a malformed STATS frame and prints\n"
"  bad: <status name>: <error text>\n"
"then, on the same connection, a good STATS frame, and prints\n"
"  ok: <bytes> bytes, snapshot_wall_ns <n>, keys <n>\n"
"\n"
"Options:\n");
	fl_cli_help(f, &probe_cli);
	fprintf(f,
"\n"
"Exit status: 0 when the bad frame (if sent) was refused with an error reply and the\n"
"good one answered with a JSON object; 1 otherwise (the reason on stderr); 2 for a bad\n"
"flag or argument.\n");
}

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
	struct probe_opts po = { 0 };
	const char *ops[2];
	char err[512];

	/* HOST:PORT is an operand. */
	int npos = fl_cli_take_operands(&probe_cli, &argc, argv, ops, 2);
	const char *addr = ops[0], *extra = ops[1];
	int rc = fl_cli_parse(&probe_cli, argc, argv, &po, err, sizeof err);
	if (rc == FL_CLI_HELP) {
		probe_usage(stdout);
		return 0;
	}
	if (rc == 0 && npos > 1)
		snprintf(err, sizeof err, "unexpected argument \"%s\"", extra);
	else if (rc == 0 && npos == 0)
		snprintf(err, sizeof err, "no HOST:PORT");
	if (rc != 0 || npos != 1) {
		fprintf(stderr, "stats-probe: %s (see --help)\n", err);
		return 2;
	}
	SSL_CTX *tls = po.tls_dir ? fl_tls_client_ctx(po.tls_dir, err, sizeof err) : NULL;
	if (po.tls_dir && tls == NULL) {
		fprintf(stderr, "stats-probe: %s\n", err);
		return 1;
	}
	struct fl_remote *c = fl_remote_open(addr, tls, 5, err, sizeof err);
	rc = c == NULL;
	if (c == NULL)
		fprintf(stderr, "stats-probe: %s\n", err);
	else
		rc = (po.bad && probe_bad(c) != 0) || probe_good(c) != 0;
	fl_remote_close(c);
	if (tls)
		SSL_CTX_free(tls);
	return rc;
}
