/* run_remote.h: the stats of a leaf or mock that `frontload run` did not start, read over
 * its own port (a STATS frame, wire.h), with a clock sample of its host (run_clock.h).
 *
 * No ssh and no shared files: the run connects to the server's address, sends one STATS
 * frame and gets back the snapshot the server's stats file gets (leaf_io.h, mock_stats.c).
 */
#ifndef FL_RUN_REMOTE_H
#define FL_RUN_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "wire.h"

struct fl_clock_sample;
struct ssl_ctx_st;

#define FL_REMOTE_MAX_REPLY_BYTES (64u << 20)  /* largest stats reply taken (bytes) */

/* The answer to a STATS frame with id request_id: header h (decoded), payload of len
 * bytes. Returns the snapshot object (new reference), or NULL with err filled: a wrong
 * type or id, a compressed payload, a non-OK status (with the server's ErrorReply text),
 * or text that is not a JSON object. */
json_t *fl_remote_parse_reply(const struct fl_frame_hdr *h, uint64_t request_id,
	const uint8_t *payload, size_t len, char *err, size_t errlen);

/* One open connection to a server, blocking, each call bounded by a timeout. */
struct fl_remote;

/* A reply read by fl_remote_exchange. */
struct fl_remote_reply {
	struct fl_frame_hdr hdr;   /* decoded and checked */
	uint8_t *payload;          /* hdr.payload_len bytes (malloc'd: the caller frees) */
	uint64_t request_id;       /* the id the request went out with */
	uint64_t t0_ns, t3_ns;     /* our realtime clock at send and at the reply's end */
};

/* Connect to addr (HOST:PORT), over TLS with tls (a client context, tls.h) or plain TCP
 * when NULL; each connect, handshake, write and read waits at most timeout_s. NULL with
 * err filled on failure. */
struct fl_remote *fl_remote_open(const char *addr, struct ssl_ctx_st *tls, double timeout_s,
	char *err, size_t errlen);

/* Send one frame (type, body of len bytes: STATS takes none; a test may send a wrong
 * one) and read one reply frame into out. 0, or -1 with err filled. */
int fl_remote_exchange(struct fl_remote *c, enum fl_msg_type type, const void *body,
	size_t len, struct fl_remote_reply *out, char *err, size_t errlen);

void fl_remote_close(struct fl_remote *c);

/* Open, one STATS exchange, close: returns the snapshot (new reference) and adds its
 * clock sample to clk (when it carries snapshot_wall_ns), or NULL with err filled. */
json_t *fl_remote_stats(const char *addr, struct ssl_ctx_st *tls, double timeout_s,
	struct fl_clock_sample *clk, char *err, size_t errlen);

#endif
