/* mock_server.h: the mock downstream service: N libevent IO threads serving RpcRequests
 * over TLS.
 *
 * Each IO thread owns an event_base and its own listener on the shared port
 * (SO_REUSEPORT: the kernel spreads connections over the threads). A connection reads
 * frames (wire.h), answers PING with PONG, STATS with a REPLY holding the stats JSON (as
 * mock_server_write_stats would write it now; a STATS with a payload gets an error REPLY),
 * and REQUEST with a REPLY carrying an RpcReply from the method handlers (mock_methods.h),
 * after the latency shaping of mock_shape.h.
 * Replies may leave out of order; the client matches them by request_id. Faults never
 * stop the server: a bad frame header gets an error REPLY (BAD_REQUEST) and the connection
 * is closed after flushing; a payload that fails to decompress or decode, a short body or
 * an unknown method gets an error REPLY and the connection stays open.
 *
 * Threads: mock_server_new, _start, _wait and _free are called by the main thread, in that
 * order. The caller must have called evthread_use_pthreads() before mock_server_new.
 */
#ifndef MOCK_SERVER_H
#define MOCK_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "mock_shape.h"

struct fl_corpus;
struct mock_server;

struct mock_config {
	const char *host;              /* listen address: IPv4/IPv6 literal or name */
	uint16_t port;                 /* 0: ephemeral, picked by the first listener */
	unsigned threads;              /* IO threads, >= 1 */
	const char *tls_dir;           /* holds FL_TLS_CERT_FILE and FL_TLS_KEY_FILE */
	uint32_t max_frame_bytes;      /* largest request payload, and decompressed size (bytes) */
	uint32_t max_reply_bytes;      /* response sizes asked above this are cut (bytes) */
	size_t max_output_bytes;       /* drop a connection whose unsent output exceeds this
	                                  (bytes, queued plus delayed replies) */
	int zstd_level;                /* level for replies to zstd requests (1..19) */
	struct mock_shape_cfg shape;   /* latency shaping (µs) */
	const char *stats_file;        /* final (and periodic) stats JSON; NULL: none */
	unsigned stats_interval_s;     /* > 0: also write stats_file every this many seconds */
};

/* Build the server: TLS context from cfg->tls_dir, one event_base and bound listener per
 * IO thread, SIGTERM/SIGINT handlers on the main base. corpus must outlive the server.
 * Returns NULL (err filled, e.g. "bind 127.0.0.1:80: Permission denied") on failure. */
struct mock_server *mock_server_new(const struct mock_config *cfg, const struct fl_corpus *corpus,
	char *err, size_t errlen);

/* The port listened on (the ephemeral one when cfg->port was 0). */
uint16_t mock_server_port(const struct mock_server *s);

/* Start the IO threads; connections are accepted from now on. Returns 0 or -1 (err). */
int mock_server_start(struct mock_server *s, char *err, size_t errlen);

/* Run until SIGTERM or SIGINT, then stop: close listeners, let pending replies go out for
 * at most 1 s, join the threads and write the final stats. Returns 0, or -1 when the final
 * stats file could not be written. */
int mock_server_wait(struct mock_server *s);

/* Write the merged stats as JSON to path (temp file + rename). Any thread. 0 or -1. */
int mock_server_write_stats(struct mock_server *s, const char *path);

void mock_server_free(struct mock_server *s);

#endif
