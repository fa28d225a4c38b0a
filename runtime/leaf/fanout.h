/* fanout.h: stage 6, the leaf's outbound RPCs to the mock service.
 *
 * FANOUT threads each own a libevent base and a set of TLS channels to the mock
 * (bufferevent_openssl; zstd framing on a configured fraction of channels). A request's
 * fanout is the list of outbound calls from rpc_dist.json scaled by `scale` (per method
 * round-to-nearest, methods at 0 dropped), each with request bytes, response bytes and
 * latency sampled from that method's tables with a stream seeded per request. At most
 * `window` calls of one request are in flight; a call that fails or times out is counted
 * and the request still completes. Idle channels send pings every ping_ms; a broken
 * channel reconnects with exponential backoff (capped), and calls meanwhile fail fast.
 */
#ifndef FL_FANOUT_H
#define FL_FANOUT_H

#include <stddef.h>
#include <stdint.h>

struct fl_rpc_dist;
struct fl_corpus;
struct fl_fanout;
struct fl_meter_config;
struct fl_meter_sum;

struct fl_fanout_config {
	const char *host;              /* mock address */
	uint16_t port;
	const char *tls_dir;           /* certificate dir trusted for the mock (tls.h) */
	unsigned threads;              /* FANOUT threads, >= 1 */
	unsigned channels_per_thread;  /* TLS connections per thread, >= 1 */
	unsigned window;               /* max calls in flight per request (0: default 16) */
	double scale;                  /* --rpc-fanout-scale, > 0 */
	double zstd_fraction;          /* share of channels using zstd frames, 0..1 */
	uint32_t ping_ms;              /* keepalive period on idle channels (0: default 200) */
	uint32_t timeout_ms;           /* per-call deadline: its requested latency (capped at
	                                  200 ms, the mock's default cap) plus this (0: 1000) */
	uint32_t max_reply_bytes;      /* largest RpcReply payload accepted, >= 64 (0: default
	                                  16 MiB); sampled request and response bodies are capped
	                                  at max_reply_bytes - 16, so the mock's --max-reply-bytes
	                                  and --max-frame-bytes must be at least this */
	const struct fl_rpc_dist *dist;
	const struct fl_corpus *corpus; /* filler bytes of RpcRequest bodies */
	uint64_t seed;                 /* reserved: calls are sampled from request_seed alone */
	const struct fl_meter_config *meter; /* PMU group per thread (meter.h; FANOUT
	                                  threads time no stage, so no clock); NULL: none */
	size_t scratch_keep_bytes;     /* a thread's request/reply buffer larger than this is
	                                  freed after each call; 0: grow-only */
};

/* What one request's fanout did (passed to its completion callback). */
struct fl_fanout_result {
	uint32_t calls, ok, errors, timeouts;
	uint64_t req_bytes, resp_bytes;  /* payload bytes before compression */
	uint64_t wall_ns;                /* start to last call done */
};

typedef void (*fl_fanout_done_fn)(void *arg, const struct fl_fanout_result *r);

/* Start the FANOUT threads (each opens its meter before it returns) and connect their
 * channels (connect failures are retried in the background, not fatal). NULL (err
 * filled) on a bad config or when threads or TLS cannot start. */
struct fl_fanout *fl_fanout_new(const struct fl_fanout_config *cfg, char *err, size_t errlen);

/* Stop the threads, close channels, fail calls in flight (their callbacks run first).
 * Not from a done callback (it joins the FANOUT threads). */
void fl_fanout_free(struct fl_fanout *f);

/* Calls per request at the configured scale (the fixed list every request issues). */
unsigned fl_fanout_calls_per_request(const struct fl_fanout *f);

/* Issue one request's fanout. Thread-safe; returns at once. done(arg, result) runs exactly
 * once on a FANOUT thread when every call has finished (immediately, with calls = 0, when
 * the scale drops every method). request_seed seeds the sampled sizes and latencies.
 * Returns 0, or -1 when the fanout is shutting down or out of memory (done is not called). */
int fl_fanout_start(struct fl_fanout *f, uint64_t request_seed, fl_fanout_done_fn done,
	void *arg);

/* Totals since fl_fanout_new. calls are counted when issued (a call that fails fast for
 * want of an up channel too) and end as ok or errors; timeouts are part of errors.
 * connects: TLS handshakes completed; reconnects: connection attempts after a failure or
 * a lost channel. */
struct fl_fanout_stats {
	uint64_t calls, ok, errors, timeouts;
	uint64_t calls_per_method[20];
	uint64_t req_bytes, resp_bytes;       /* payload bytes, uncompressed */
	uint64_t wire_bytes_out, wire_bytes_in; /* frame bytes as sent / received */
	uint64_t connects, reconnects, pings, pongs;
	unsigned channels, channels_up, channels_zstd;
	char cipher[96];                      /* negotiated protocol and cipher, "" if none */
};
void fl_fanout_stats(struct fl_fanout *f, struct fl_fanout_stats *s);

/* Add every FANOUT thread's meter (PMU counts) into s (fl_meter_sum_init'd). Any thread
 * but a FANOUT one, before fl_fanout_free. */
void fl_fanout_meters(struct fl_fanout *f, struct fl_meter_sum *s);

/* Bytes the FANOUT threads' scratch buffers and zstd contexts hold. Any thread. */
size_t fl_fanout_scratch_bytes(struct fl_fanout *f);

#endif
