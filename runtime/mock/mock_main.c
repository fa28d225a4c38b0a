/* mock_main.c: frontload-mock, the downstream service the leaf fans out to. */
#include "corpus.h"
#include "mock_server.h"
#include "mock_shape.h"
#include "tls.h"

#include <errno.h>
#include <getopt.h>
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
	int help;
};

enum opt_kind { OPT_STR, OPT_U64, OPT_FLAG };

/* The options, once: getopt_long's table, parsing, range checks and --help read this. */
struct opt_def {
	const char *name;
	enum opt_kind kind;
	size_t off;                /* field in struct mock_opts */
	uint64_t min, max;         /* OPT_U64 range */
	const char *arg;           /* value placeholder in --help */
	const char *help;          /* text, default included */
};

#define O(f) offsetof(struct mock_opts, f)
static const struct opt_def opt_defs[] = {
	{ "host", OPT_STR, O(host), 0, 0, "ADDR",
	  "address to listen on (default 127.0.0.1)" },
	{ "port", OPT_U64, O(port), 0, 65535, "N",
	  "TCP port (default 0: an ephemeral port, see --port-file)" },
	{ "port-file", OPT_STR, O(port_file), 0, 0, "PATH",
	  "once listening and ready, write the port and a newline\n"
	  "here (atomically, temp file + rename)" },
	{ "threads", OPT_U64, O(threads), 1, 1024, "N",
	  "IO threads, each with its own listener on the port\n"
	  "(default: CPUs / 2, at least 1)" },
	{ "tls-dir", OPT_STR, O(tls_dir), 0, 0, "DIR",
	  "certificate directory; key and certificate are created\n"
	  "there on first run (default <exe dir>/../share/frontload/tls\n"
	  "when <exe dir>/../share/frontload exists, else <exe dir>/tls)" },
	{ "gen-cert", OPT_STR, O(gen_cert), 0, 0, "DIR",
	  "create the key and certificate in DIR (both kept when\n"
	  "they exist) and exit" },
	{ "corpus-dir", OPT_STR, O(corpus_dir), 0, 0, "DIR",
	  "cut replies from the files of DIR, concatenated in name\n"
	  "order (default: a generated corpus)" },
	{ "corpus-seed", OPT_U64, O(corpus_seed), 0, UINT64_MAX, "S",
	  "seed of the generated corpus (default 1)" },
	{ "corpus-mb", OPT_U64, O(corpus_mb), 1, 65536, "N",
	  "size of the generated corpus, MiB (default 64)" },
	{ "max-frame-bytes", OPT_U64, O(max_frame_bytes), 64, UINT32_MAX, "N",
	  "largest request payload accepted, as sent and after\n"
	  "decompression, bytes (default 67108864 = 64 MiB: above\n"
	  "the leaf's largest fanout request, so no sampled call is refused)" },
	{ "max-reply-bytes", OPT_U64, O(max_reply_bytes), 0, 1u << 30, "N",
	  "response sizes asked above this are cut to it, bytes\n"
	  "(default 33554432 = 32 MiB)" },
	{ "max-output-bytes", OPT_U64, O(max_output_bytes), 0, UINT64_MAX, "N",
	  "drop a connection whose unsent replies exceed this, bytes\n"
	  "(default 0: the larger of 128 MiB, 4 x --max-reply-bytes)" },
	{ "zstd-level", OPT_U64, O(zstd_level), 1, 19, "N",
	  "zstd level of replies to compressed requests (default 3)" },
	{ "latency-cap-us", OPT_U64, O(latency_cap_us), 0, UINT32_MAX, "US",
	  "latencies asked above this are cut to it, µs (default 200000)" },
	{ "latency-offset-us", OPT_U64, O(latency_offset_us), 0, UINT32_MAX, "US",
	  "subtracted from each capped latency (floor 0), µs (default 0)" },
	{ "latency-skip-us", OPT_U64, O(latency_skip_us), 0, UINT32_MAX, "US",
	  "effective latencies below this are not waited for, µs\n"
	  "(default 100)" },
	{ "spin-below-us", OPT_U64, O(spin_below_us), 0, UINT32_MAX, "US",
	  "effective latencies below this (and not skipped) busy-spin\n"
	  "the IO thread; longer ones use a timer, µs (default 200)" },
	{ "latency-fixed-us", OPT_U64, O(latency_fixed_us), 0, UINT32_MAX - 1, "US",
	  "ignore the latency each request asks for and use this one,\n"
	  "µs, before cap and offset (default: off; for controlled\n"
	  "experiments, e.g. checking the driver's p50 against it)" },
	{ "stats-file", OPT_STR, O(stats_file), 0, 0, "PATH",
	  "write stats as JSON here at exit (temp file + rename)" },
	{ "stats-interval-s", OPT_U64, O(stats_interval_s), 0, 86400, "N",
	  "also write --stats-file every N seconds\n"
	  "(default 0: only at exit)" },
	{ "quiet", OPT_FLAG, O(quiet), 0, 0, NULL, "print nothing on start" },
	{ "help", OPT_FLAG, O(help), 0, 0, NULL, "this text" },
};
#undef O
#define OPT_COUNT (sizeof opt_defs / sizeof opt_defs[0])

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
"Replies may come back out of order; match them by request_id. PING gets PONG. A bad\n"
"frame header gets an error REPLY (status BAD_REQUEST) and the connection is closed; a\n"
"payload that does not decode, a body under 4 bytes or an unknown method gets an error\n"
"REPLY and the connection stays open. SIGTERM or SIGINT stop the mock: pending replies\n"
"get up to 1 s, then the final stats are written.\n"
"\n"
"Options (numbers are decimal):\n");
	for (size_t i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *d = &opt_defs[i];
		char left[64];
		snprintf(left, sizeof left, "--%s%s%s", d->name, d->arg ? " " : "",
			d->arg ? d->arg : "");
		fprintf(f, "  %-26s", left);
		for (const char *p = d->help; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "  %-26s", "");
		}
		fputc('\n', f);
	}
	fprintf(f,
"\n"
"Exit status: 0 after a signal-initiated stop, --gen-cert or --help; 1 when the mock\n"
"cannot start (bind, certificate, corpus) or cannot write the final stats; 2 for a bad\n"
"flag or value.\n");
}

static int mock_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Fill o from argv. Returns 0, or MOCK_EXIT_USAGE after printing why. */
static int mock_parse(int argc, char **argv, struct mock_opts *o)
{
	struct option lopts[OPT_COUNT + 1];
	for (size_t i = 0; i < OPT_COUNT; i++) {
		lopts[i].name = opt_defs[i].name;
		lopts[i].has_arg = opt_defs[i].kind == OPT_FLAG ? no_argument : required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = 256 + (int)i;
	}
	memset(&lopts[OPT_COUNT], 0, sizeof lopts[OPT_COUNT]);

	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (ch == 'h') {
			o->help = 1;
			continue;
		}
		if (ch < 256 || ch >= 256 + (int)OPT_COUNT) {
			const char *bad = argv[optind - 1];
			if (optopt >= 256 && optopt < 256 + (int)OPT_COUNT)
				fprintf(stderr, "frontload-mock: --%s needs a value\n",
					opt_defs[optopt - 256].name);
			else
				fprintf(stderr, "frontload-mock: unknown option %s\n", bad);
			fprintf(stderr, "try frontload-mock --help\n");
			return MOCK_EXIT_USAGE;
		}
		const struct opt_def *d = &opt_defs[ch - 256];
		void *field = (char *)o + d->off;
		switch (d->kind) {
		case OPT_FLAG:
			*(int *)field = 1;
			break;
		case OPT_STR:
			if (!*optarg) {
				fprintf(stderr, "frontload-mock: --%s: empty value\n", d->name);
				return MOCK_EXIT_USAGE;
			}
			*(const char **)field = optarg;
			break;
		case OPT_U64: {
			uint64_t v;
			if (mock_parse_u64(optarg, &v) || v < d->min || v > d->max) {
				fprintf(stderr, "frontload-mock: --%s: \"%s\" is not an integer in "
					"[%llu, %llu]\n", d->name, optarg, (unsigned long long)d->min,
					(unsigned long long)d->max);
				return MOCK_EXIT_USAGE;
			}
			*(uint64_t *)field = v;
			break;
		}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "frontload-mock: unexpected argument \"%s\"\n", argv[optind]);
		return MOCK_EXIT_USAGE;
	}
	return 0;
}

/* Write the port and a newline to path through a temporary file, so a waiting test never
 * reads a half-written number. */
static int mock_write_port_file(const char *path, unsigned port)
{
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if (n <= 0 || (size_t)n >= sizeof tmp)
		return -1;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mock_opts o = {
		.host = "127.0.0.1",
		.corpus_seed = 1,
		.corpus_mb = FL_CORPUS_DEFAULT_BYTES >> 20,
		.max_frame_bytes = 64u << 20,
		.max_reply_bytes = 32u << 20,
		.zstd_level = 3,
		.latency_cap_us = MOCK_SHAPE_CAP_US,
		.latency_offset_us = MOCK_SHAPE_OFFSET_US,
		.latency_skip_us = MOCK_SHAPE_SKIP_US,
		.spin_below_us = MOCK_SHAPE_SPIN_US,
		.latency_fixed_us = MOCK_SHAPE_NOT_FIXED,
	};
	int rc = mock_parse(argc, argv, &o);
	if (rc)
		return rc;
	if (o.help) {
		mock_usage(stdout);
		return MOCK_EXIT_OK;
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

	char err[512];
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
