/* leaf_client.c: pipelined test client for frontload-leaf and frontload-mock
 * (tests/leaf-client): the options (a runtime/common/cli.h table), --help, and main, which
 * picks the mode. The rest is in the lc_*.c files (leaf_client.h lists them). LeafRequests
 * come from reqgen.c, the driver's builder; RpcRequests and the --garbage inputs are made
 * here (reqgen builds neither). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "leaf_client.h"

#define LC_STR_(x) #x
#define LC_STR(x) LC_STR_(x)
#define LC_MAX_REQUEST_SIZE (1u << 30)  /* --request-size N: bytes at most */

void lc_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("leaf-client: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* What the command line gives: the run's options, and what main resolves itself. */
struct lc_args {
	struct lc_opts o;
	const char *request_size;    /* "sampled" or bytes: o.size_sampled, o.request_bytes */
	const char *get;             /* helper modes: --get KEY.PATH (FILE is positional) ... */
	const char *expect_fanout;   /* ... --expect-fanout SCALE ... */
	const char *table_range;     /* ... --table-range req|resp */
};

/* The options, once: parsing, defaults, range checks and --help read this. Options with no
 * default here are off (zero) until given. */
#define FL_CLI_OBJ struct lc_args
static const struct fl_cli_opt lc_opt_defs[] = {
	FL_OPT_STR("host", o.host, "H", "127.0.0.1", "server address", .section = "server"),
	FL_OPT_UINT("port", o.port, 1, 65535, "P", NULL, "server port"),
	FL_OPT_STR("port-file", o.port_file, "PATH", NULL, "read the port from PATH (what the "
		"servers write when ready)"),
	FL_OPT_FLAG("tls", o.tls, "connect with TLS, verifying the server against --tls-dir"),
	FL_OPT_STR("tls-dir", o.tls_dir, "DIR", NULL, "certificate directory (default: "
		"fl_tls_default_dir)"),
	FL_OPT_UINT("requests", o.requests, 0, 1u << 28, "N", "100", "requests to send",
		.section = "requests"),
	FL_OPT_UINT("depth", o.depth, 1, 1u << 16, "D", "4", "requests in flight per "
		"connection"),
	FL_OPT_UINT("connections", o.connections, 1, 4096, "C", "1", "connections"),
	FL_OPT_UINT("seed", o.seed, 0, UINT64_MAX, "S", "1", "request stream seed; same seed, "
		"same requests"),
	FL_OPT_UINT("stories", o.stories, 0, LC_MAX_STORIES, "N", "16", "stories per request "
		"(at most " LC_STR(LC_MAX_STORIES) ")"),
	FL_OPT_UINT("story-bytes", o.story_bytes, 0, 1u << 20, "B", "1024", "body bytes per "
		"story, cut from the corpus"),
	FL_OPT_STR("request-size", request_size, "sampled|N", "sampled", "request payload "
		"bytes: sampled from feed_aggregator_req_sizes or fixed (N at most 1073741824); "
		"the padding field makes up the size (never below the stories' own size; 1 byte "
		"over where the padding's length varint grows). --rpc: RpcRequest body bytes, "
		"sampled from the method's rpc_dist.json request sizes"),
	FL_OPT_UINT("max-request-bytes", o.max_request_bytes, 0, 1u << 30, "N", "4194304",
		"cap on a sampled request size"),
	FL_OPT_UINT("reply-bytes", o.reply_bytes, 0, UINT32_MAX, "N", "0", "reply size to ask "
		"for (0: the leaf samples it; --rpc: sampled from the method's response sizes, at "
		"most 64 KiB)"),
	FL_OPT_FLAG("zstd", o.zstd, "ask for zstd-compressed reply payloads"),
	FL_OPT_FLAG("zstd-frames", o.zstd_frames, "send request frames zstd-compressed"),
	FL_OPT_FLAG("method-mix", o.method_mix, "inbound methods weighted by rpc_dist.json "
		"counts"),
	FL_OPT_UINT("method", o.method, 0, 255, "N", "0", "this method for every request (0: "
		"createAndPrimeSession; above 4: no InboundMethod, a request the leaf must "
		"refuse)"),
	FL_OPT_FLAG("rpc", o.rpc, "send RpcRequests, as the leaf does to the mock "
		"(--method-mix: uniform over the 20 outbound methods)"),
	FL_OPT_REAL("timeout-s", o.timeout_s, 0, 86400, "T", "60", "deadline for the whole "
		"run, seconds (above 0)", .section = "run"),
	FL_OPT_STR("json", o.json, "PATH", NULL, "write a summary: replies by status, requests "
		"sent per method, request and reply sizes, ranked counts, fanout and extractor "
		"calls per reply (min/max/sum), zstd replies (and how many were expected: all "
		"asked but getStoriesUncompressed), latency p50/p95/max from send to reply (us), "
		"errors by kind, the TLS cipher, and stream_hash (the same for the same request "
		"stream)"),
	FL_OPT_FLAG("quiet", o.quiet, "no summary line on stdout"),
	FL_OPT_STR("garbage", o.garbage, "MODE", NULL, "send one bad input instead of the "
		"stream (the modes are below) and report the server's answer"),
	FL_OPT_UINT("max-frame-bytes", o.max_frame_bytes, 1, UINT32_MAX, "N", "67108864",
		"largest reply payload accepted"),
	FL_OPT_UINT("corpus-mb", o.corpus_mb, 1, 4096, "N", "8", "generated corpus size for "
		"story bodies and padding", .section = "corpus"),
	FL_OPT_UINT("corpus-seed", o.corpus_seed, 0, UINT64_MAX, "S", "1", "its seed"),
	FL_OPT_STR("corpus-dir", o.corpus_dir, "DIR", NULL, "use the files of DIR as the "
		"corpus instead"),
	FL_OPT_STR("get", get, "KEY.PATH FILE", NULL, "print the field KEY.PATH (keys and "
		"array indexes, dot-separated; \".\": all) of the JSON file FILE: scalars bare, "
		"an object as \"key value\" lines, an array compact; exit 1 when there is no "
		"such field", .section = "helper modes (each prints and exits)"),
	FL_OPT_STR("expect-fanout", expect_fanout, "SCALE", NULL, "the outbound calls a leaf "
		"request makes to each method at fanout scale SCALE (above 0), from rpc_dist.json "
		"(\"name calls\" lines), then \"total N\""),
	FL_OPT_STR("table-range", table_range, "req|resp", NULL, "\"min max\" of the pooled "
		"request or reply size table (bytes)"),
};
#undef FL_CLI_OBJ
static const struct fl_cli lc_cli = {
	.opts = lc_opt_defs, .nopts = sizeof lc_opt_defs / sizeof lc_opt_defs[0],
};

static void lc_usage(FILE *f)
{
	fprintf(f,
"usage: leaf-client [options]                 pipelined requests to a leaf (or mock)\n"
"       leaf-client --garbage MODE [options]  one bad input; report the server's answer\n"
"       leaf-client --get KEY.PATH FILE       print a field of a JSON file\n"
"       leaf-client --expect-fanout SCALE     outbound calls per request, per method\n"
"       leaf-client --table-range req|resp    min and max of a pooled size table (bytes)\n"
"\n"
"Options (numbers are decimal; defaults in brackets):\n");
	fl_cli_help(f, &lc_cli);
	fprintf(f,
"\n"
"--garbage modes: bad-magic bad-version bad-type bad-flags truncated (half a frame, then\n"
"close) oversized (header claims ~4 GiB) random bad-payload (valid header, undecodable\n"
"payload) bad-zstd (zstd flag on a plain payload) expired-head (a request whose deadline\n"
"passed, header and half its payload sent, the connection left open: a leaf judging the\n"
"header answers without the rest). Passes on an error reply or a close.\n"
"\n"
"Replies are checked: request id and timestamp echoed; an OK LeafReply decodes, its\n"
"payload matches payload_raw_bytes (after zstd) and --reply-bytes, and its ranked stories\n"
"come best first from the request (getAllStories: also from its session); an OK RpcReply\n"
"is for the method asked, with --reply-bytes bytes.\n"
"\n"
"Exit status: 0 when every request got a reply (any status) and every reply passed its\n"
"checks, 1 otherwise (the first problem is printed), 2 on usage or setup errors.\n");
}

/* The checks beyond the table's: --request-size's value into o, --timeout-s above 0.
 * lc_die on a bad one. */
static void lc_check_args(struct lc_args *a)
{
	struct lc_opts *o = &a->o;
	uint64_t v;

	o->size_sampled = !strcmp(a->request_size, "sampled");
	if (!o->size_sampled) {
		if (fl_cli_parse_uint(a->request_size, &v) != 0 || v > LC_MAX_REQUEST_SIZE)
			lc_die("--request-size: expected sampled or an integer in 0..%u, got "
				"\"%s\"", LC_MAX_REQUEST_SIZE, a->request_size);
		o->request_bytes = (size_t)v;
	}
	if (!(o->timeout_s > 0))
		lc_die("--timeout-s: expected seconds in (0, 86400], got %g", o->timeout_s);
}

int main(int argc, char **argv)
{
	static struct lc_client cl;
	struct lc_args a = { 0 };
	const char *file;
	char err[512];

	/* --get's FILE is an operand. */
	int npos = fl_cli_take_operands(&lc_cli, &argc, argv, &file, 1);
	int rc = fl_cli_parse(&lc_cli, argc, argv, &a, err, sizeof err);
	if (rc == FL_CLI_HELP) {
		lc_usage(stdout);
		return 0;
	}
	if (rc != 0)
		lc_die("%s (see --help)", err);
	lc_check_args(&a);
	if (a.get) {
		if (npos != 1)
			lc_die("--get KEY.PATH takes one FILE");
		return lc_get(a.get, file);
	}
	if (npos)
		lc_die("unexpected argument '%s' (see --help)", file);
	if (a.expect_fanout)
		return lc_expect_fanout(a.expect_fanout);
	if (a.table_range)
		return lc_table_range(a.table_range);
	if (a.o.garbage && !lc_garbage_known(a.o.garbage))
		lc_die("unknown --garbage mode '%s' (see --help)", a.o.garbage);
	cl.o = a.o;
	lc_setup(&cl);
	rc = cl.o.garbage ? lc_run_garbage(&cl) : lc_run(&cl);
	lc_free(&cl);
	return rc;
}
