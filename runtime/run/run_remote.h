/* run_remote.h: the stats of a leaf or mock that `frontload run` did not start, read over
 * its own port (a STATS frame, wire.h), and the clock check of the host it runs on.
 *
 * No ssh and no shared files: the run connects to the server's address, sends one STATS
 * frame and gets back the snapshot the server's stats file gets (leaf_io.h, mock_server.c).
 *
 * Clock check, NTP-style with one server stamp: the frame leaves at t0 (this host's
 * realtime clock), the snapshot is stamped ts (the server's, snapshot_wall_ns), the reply
 * arrives at t3 (ours). ts happened between t0 and t3, so the server's clock is ahead of
 * ours by offset = ts - (t0 + t3) / 2, within +- (t3 - t0) / 2. Of several samples the one
 * with the shortest round trip is kept: the tightest bound.
 */
#ifndef FL_RUN_REMOTE_H
#define FL_RUN_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct fl_clock_sample;
struct fl_frame_hdr;
struct ssl_ctx_st;

#define FL_REMOTE_MAX_REPLY_BYTES (64u << 20)  /* largest stats reply taken (bytes) */

/* The answer to a STATS frame with id request_id: header h (decoded), payload of len
 * bytes. Returns the snapshot object (new reference), or NULL with err filled: a wrong
 * type or id, a compressed payload, a non-OK status (with the server's ErrorReply text),
 * or text that is not a JSON object. */
json_t *fl_remote_parse_reply(const struct fl_frame_hdr *h, uint64_t request_id,
	const uint8_t *payload, size_t len, char *err, size_t errlen);

/* Connect to addr (HOST:PORT), over TLS with tls (a client context, tls.h) or plain TCP
 * when NULL, send one STATS frame and read the reply; each connect, write and read waits
 * at most timeout_s. Returns the snapshot (new reference) and adds its clock sample to
 * clk (when it carries snapshot_wall_ns), or NULL with err filled. */
json_t *fl_remote_stats(const char *addr, struct ssl_ctx_st *tls, double timeout_s,
	struct fl_clock_sample *clk, char *err, size_t errlen);

#endif
