/* mock_main.c: frontload-mock, the downstream service the leaf fans out to. */
#include "cli.h"
#include "corpus.h"
#include "memacct.h"
#include "mock_server.h"
#include "mock_shape.h"
#include "osfile.h"
#include "tls.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/thread.h>

#define MOCK_EXIT_OK 0
#define MOCK_EXIT_FAIL 1   /* runtime failure: bind, certificate, corpus, stats file */
#define MOCK_EXIT_USAGE 2  /* bad flag or value */

/* Every flag's value, filled from defaults then the command line. */
struct mock_opts {
	const char *host;
	uint64_t port;
	const char *port_file;
	uint64_t threads;          /* 0: CPU count / 2, at least 1 */
	const char *tls_dir;       /* NULL: fl_tls_default_dir */
	const char *gen_cert;
	const char *corpus_dir;
	uint64_t corpus_seed;
	uint64_t corpus_mb;
	uint64_t max_frame_bytes;
	uint64_t max_reply_bytes;
	uint64_t max_output_bytes; /* 0: max(128 MiB, 4 x max_reply_bytes) */
	uint64_t zstd_level;
	uint64_t latency_cap_us;
	uint64_t latency_offset_us;
	uint64_t latency_skip_us;
	uint64_t spin_below_us;
	uint64_t latency_fixed_us;
	const char *stats_file;
	uint64_t stats_interval_s;
	int quiet;
};

/* The options, once: parsing, defaults, range checks and --help read this. Options with
 * no default here get theirs in main. */
#define FL_CLI_OBJ struct mock_opts
static const struct fl_cli_opt mock_opt_defs[] = {
	FL_OPT_STR("host", host, "ADDR", "127.0.0.1", "address to listen on"),
	FL_OPT_UINT("port", port, 0, 65535, "N", "0", "TCP port (0: an ephemeral port, see "
		"--port-file)"),
	FL_OPT_STR("port-file", port_file, "PATH", NULL, "once listening and ready, write the "
		"port and a newline here (atomically, temp file + rename)"),
	FL_OPT_UINT("threads", threads, 1, 1024, "N", NULL, "IO threads, each with its own "
		"listener on the port (default: CPUs / 2, at least 1)"),
	FL_OPT_STR("tls-dir", tls_dir, "DIR", NULL, "certificate directory; key and "
		"certificate are created there on first run (default <exe dir>/../share/"
		"frontload/tls when <exe dir>/../share/frontload exists, else <exe dir>/tls)"),
	FL_OPT_STR("gen-cert", gen_cert, "DIR", NULL, "create the key and certificate in DIR "
		"(both kept when they exist) and exit"),
	FL_OPT_STR("corpus-dir", corpus_dir, "DIR", NULL, "cut replies from the files of DIR, "
		"concatenated in name order (default: a generated corpus)"),
	FL_OPT_UINT("corpus-seed", corpus_seed, 0, UINT64_MAX, "S", "1", "seed of the "
		"generated corpus"),
	FL_OPT_UINT("corpus-mb", corpus_mb, 1, 65536, "N", "64", "size of the generated "
		"corpus, MiB"),
	FL_OPT_UINT("max-frame-bytes", max_frame_bytes, 64, UINT32_MAX, "N", "67108864",
		"largest request payload accepted, as sent and after decompression, bytes "
		"(64 MiB: above the leaf's largest fanout request, so no sampled call is "
		"refused)"),
	FL_OPT_UINT("max-reply-bytes", max_reply_bytes, 0, 1u << 30, "N", "33554432",
		"response sizes asked above this are cut to it, bytes (32 MiB)"),
	FL_OPT_UINT("max-output-bytes", max_output_bytes, 0, UINT64_MAX, "N", "0", "drop a "
		"connection whose unsent replies exceed this, bytes (0: the larger of 128 MiB, "
		"4 x --max-reply-bytes)"),
	FL_OPT_UINT("zstd-level", zstd_level, 1, 19, "N", "3", "zstd level of replies to "
		"compressed requests"),
	FL_OPT_UINT("latency-cap-us", latency_cap_us, 0, UINT32_MAX, "US", "200000",
		"latencies asked above this are cut to it, µs"),
	FL_OPT_UINT("latency-offset-us", latency_offset_us, 0, UINT32_MAX, "US", "0",
		"subtracted from each capped latency (floor 0), µs"),
	FL_OPT_UINT("latency-skip-us", latency_skip_us, 0, UINT32_MAX, "US", "100",
		"effective latencies below this are not waited for, µs"),
	FL_OPT_UINT("spin-below-us", spin_below_us, 0, UINT32_MAX, "US", "200", "effective "
		"latencies below this (and not skipped) busy-spin the IO thread; longer ones use "
		"a timer, µs"),
	FL_OPT_UINT("latency-fixed-us", latency_fixed_us, 0, UINT32_MAX - 1, "US", NULL,
		"ignore the latency each request asks for and use this one, µs, before cap and "
		"offset (default: off; for controlled experiments, e.g. checking the driver's "
		"p50 against it)"),
	FL_OPT_STR("stats-file", stats_file, "PATH", NULL, "write stats as JSON here at exit "
		"(temp file + rename)"),
	FL_OPT_UINT("stats-interval-s", stats_interval_s, 0, 86400, "N", "0", "also write "
		"--stats-file every N seconds (0: only at exit)"),
	FL_OPT_FLAG("quiet", quiet, "print nothing on start"),
};
#undef FL_CLI_OBJ
static const struct fl_cli mock_cli = {
	.opts = mock_opt_defs, .nopts = sizeof mock_opt_defs / sizeof mock_opt_defs[0],
};

static unsigned mock_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n >= 2 ? (unsigned)(n / 2) : 1;
}

static void mock_usage(FILE *f)
{
	fprintf(f,
"usage: frontload-mock [options]\n"
"\n"
"The mock downstream service of frontload: it answers the leaf's outbound RPCs (the 20\n"
"methods of runtime/data/rpc_dist.json) over TLS, so the leaf pays for real TLS,\n"
"framing, protobuf and zstd while the mock stays cheap and deterministic.\n"
"\n"
"Request contract: one REQUEST frame (wire.h) carrying an RpcRequest, its payload\n"
"optionally zstd-compressed (FL_FRAME_ZSTD). RpcRequest.method is the method index\n"
"(0..19); the first 4 bytes of RpcRequest.body are the response size asked for, in\n"
"bytes, big endian (capped at --max-reply-bytes; the rest of the body is filler);\n"
"RpcRequest.latency_us is the latency asked for, in microseconds. The REPLY carries an\n"
"RpcReply whose body is that many corpus bytes, chosen by a hash of the request, and is\n"
"compressed when the request was. It goes out after the shaped latency:\n"
"  effective = min(latency_us, --latency-cap-us) - --latency-offset-us (floor 0);\n"
"  below --latency-skip-us reply at once, below --spin-below-us busy-spin, else a timer.\n"
"Replies may come back out of order; match them by request_id. PING gets PONG. STATS\n"
"(no payload) gets a REPLY holding the stats JSON as --stats-file would get it now, with\n"
"snapshot_wall_ns (this host's realtime clock), for a remote `frontload run`. A bad\n"
"frame header gets an error REPLY (status BAD_REQUEST) and the connection is closed; a\n"
"payload that does not decode, a body under 4 bytes or an unknown method gets an error\n"
"REPLY and the connection stays open. SIGTERM or SIGINT stop the mock: pending replies\n"
"get up to 1 s, then the final stats are written.\n"
"The stats' memory block: rss_bytes, rss_anon_bytes, rss_file_bytes; owners\n"
"{corpus_bytes, io_scratch_bytes (the IO threads' request and reply buffers and zstd\n"
"contexts), delayed_replies_bytes (replies waiting for their latency), tls_heap_bytes};\n"
"allocator (jemalloc's mallctl or glibc's mallinfo2: see frontload-leaf --help). The\n"
"allocator is set up for reuse with a plateau (jemalloc: freed pages purged after about\n"
"10 s, 8-page slabs for the 4 and 8 KiB classes; glibc: mmap threshold fixed at 1 MiB,\n"
"2 arenas; both: buffers over 1 MiB freed\n"
"after each request); FL_MALLOC=default keeps the allocator's defaults and grow-only\n"
"buffers.\n"
"\n"
"Options (numbers are decimal; defaults in brackets):\n");
	fl_cli_help(f, &mock_cli);
	fprintf(f,
"\n"
"Exit status: 0 after a signal-initiated stop, --gen-cert or --help; 1 when the mock\n"
"cannot start (bind, certificate, corpus) or cannot write the final stats; 2 for a bad\n"
"flag or value.\n");
}

/* Write the port and a newline to path through a temporary file, so a waiting test never
 * reads a half-written number. */
static int mock_write_port_file(const char *path, unsigned port)
{
	char text[16];
	int n = snprintf(text, sizeof text, "%u\n", port);
	return fl_write_file_atomic(path, text, (size_t)n, NULL, 0);
}

int main(int argc, char **argv)
{
	struct mock_opts o = { .latency_fixed_us = MOCK_SHAPE_NOT_FIXED };
	char err[512];
	/* Before any thread or large allocation (memacct.h), and before OpenSSL allocates. */
	fl_mem_tune();
	fl_tls_count_memory();
	int rc = fl_cli_parse(&mock_cli, argc, argv, &o, err, sizeof err);
	if (rc == FL_CLI_HELP) {
		mock_usage(stdout);
		return MOCK_EXIT_OK;
	}
	if (rc != 0) {
		fprintf(stderr, "frontload-mock: %s (see --help)\n", err);
		return MOCK_EXIT_USAGE;
	}
	if (o.stats_interval_s && !o.stats_file) {
		fprintf(stderr, "frontload-mock: --stats-interval-s needs --stats-file\n");
		return MOCK_EXIT_USAGE;
	}
	if (o.max_output_bytes && o.max_output_bytes < o.max_reply_bytes + 1024) {
		fprintf(stderr, "frontload-mock: --max-output-bytes must exceed --max-reply-bytes "
			"(%llu)\n", (unsigned long long)o.max_reply_bytes);
		return MOCK_EXIT_USAGE;
	}

	if (o.gen_cert) {
		if (fl_tls_ensure_cert(o.gen_cert, err, sizeof err) != 0) {
			fprintf(stderr, "frontload-mock: --gen-cert: %s\n", err);
			return MOCK_EXIT_FAIL;
		}
		if (!o.quiet)
			printf("frontload-mock: certificate and key in %s\n", o.gen_cert);
		return MOCK_EXIT_OK;
	}

	char tls_dir[PATH_MAX];
	if (o.tls_dir) {
		snprintf(tls_dir, sizeof tls_dir, "%s", o.tls_dir);
	} else if (fl_tls_default_dir(tls_dir, sizeof tls_dir, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-mock: %s\n", err);
		return MOCK_EXIT_FAIL;
	}
	if (fl_tls_ensure_cert(tls_dir, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-mock: certificate in %s: %s\n", tls_dir, err);
		return MOCK_EXIT_FAIL;
	}

	struct fl_corpus corpus;
	memset(&corpus, 0, sizeof corpus);
	if (o.corpus_dir)
		rc = fl_corpus_load_dir(&corpus, o.corpus_dir, err, sizeof err);
	else
		rc = fl_corpus_generate(&corpus, o.corpus_seed, (size_t)o.corpus_mb << 20, err,
			sizeof err);
	if (rc != 0) {
		fprintf(stderr, "frontload-mock: %s\n", err);  /* err starts "corpus: " */
		return MOCK_EXIT_FAIL;
	}

	/* SSL writes to a peer that has gone must fail with EPIPE, not kill the server. */
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0) {
		fprintf(stderr, "frontload-mock: libevent has no pthreads support\n");
		fl_corpus_free(&corpus);
		return MOCK_EXIT_FAIL;
	}

	struct mock_config cfg = {
		.host = o.host,
		.port = (uint16_t)o.port,
		.threads = o.threads ? (unsigned)o.threads : mock_default_threads(),
		.tls_dir = tls_dir,
		.max_frame_bytes = (uint32_t)o.max_frame_bytes,
		.max_reply_bytes = (uint32_t)o.max_reply_bytes,
		.max_output_bytes = o.max_output_bytes ? (size_t)o.max_output_bytes :
			(4 * o.max_reply_bytes > (128u << 20) ? 4 * o.max_reply_bytes : 128u << 20),
		.zstd_level = (int)o.zstd_level,
		.shape = {
			.cap_us = (uint32_t)o.latency_cap_us,
			.offset_us = (uint32_t)o.latency_offset_us,
			.skip_us = (uint32_t)o.latency_skip_us,
			.spin_us = (uint32_t)o.spin_below_us,
			.fixed_us = (uint32_t)o.latency_fixed_us,
		},
		.stats_file = o.stats_file,
		.stats_interval_s = (unsigned)o.stats_interval_s,
	};
	struct mock_server *s = mock_server_new(&cfg, &corpus, err, sizeof err);
	if (!s) {
		fprintf(stderr, "frontload-mock: %s\n", err);
		fl_corpus_free(&corpus);
		return MOCK_EXIT_FAIL;
	}
	if (mock_server_start(s, err, sizeof err) != 0) {
		fprintf(stderr, "frontload-mock: %s\n", err);
		mock_server_free(s);
		fl_corpus_free(&corpus);
		return MOCK_EXIT_FAIL;
	}
	unsigned port = mock_server_port(s);
	if (o.port_file && mock_write_port_file(o.port_file, port) != 0) {
		fprintf(stderr, "frontload-mock: --port-file %s: %s\n", o.port_file, strerror(errno));
		mock_server_free(s);
		fl_corpus_free(&corpus);
		return MOCK_EXIT_FAIL;
	}
	if (!o.quiet) {
		int v6 = strchr(o.host, ':') != NULL;
		printf("frontload-mock: listening on %s%s%s:%u, %u threads, TLS cipher negotiated "
			"per connection, cert %s\n", v6 ? "[" : "", o.host, v6 ? "]" : "", port,
			cfg.threads, tls_dir);
		fflush(stdout);
	}

	rc = mock_server_wait(s);
	if (rc != 0)
		fprintf(stderr, "frontload-mock: cannot write stats file %s\n", o.stats_file);
	mock_server_free(s);
	fl_corpus_free(&corpus);
	return rc ? MOCK_EXIT_FAIL : MOCK_EXIT_OK;
}
