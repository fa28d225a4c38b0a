/* wire.h: frontload's frame format, shared by driver <-> leaf and leaf <-> mock.
 *
 * Every message is one frame: a fixed 40-byte header, big endian, then payload_len bytes
 * of payload (a protobuf-c message from frontload.proto, zstd-compressed as a whole when
 * the header has FL_FRAME_ZSTD):
 *
 *   off size field
 *     0    4 magic         FL_WIRE_MAGIC ("FLW1")
 *     4    1 version       FL_WIRE_VERSION
 *     5    1 type          enum fl_msg_type
 *     6    2 flags         enum fl_frame_flag bits; unknown bits are an error
 *     8    4 payload_len   bytes after the header (as sent: compressed size if FL_FRAME_ZSTD)
 *    12    4 status        enum fl_status (replies; 0 in requests)
 *    16    8 request_id    chosen by the client, echoed in the reply; pipelined replies
 *                          may come back in any order and are matched by this id
 *    24    8 client_ts_ns  client's send timestamp (ns, its clock), echoed in the reply
 *    32    8 server_ns     replies: server processing time (ns) from frame decoded to reply
 *                          queued. deadline_ns, requests: the client's deadline on its
 *                          realtime clock (ns): a reply after it is of no use, so the server
 *                          may skip the work (FL_STATUS_DEADLINE_EXCEEDED); 0 = none
 *
 * A receiver checks magic, version, type, flags and payload_len <= its configured maximum
 * before reading the payload, so an oversized frame costs nothing to refuse.
 */
#ifndef FL_WIRE_H
#define FL_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

#define FL_WIRE_MAGIC 0x464c5731u  /* "FLW1" */
#define FL_WIRE_VERSION 1u
#define FL_WIRE_HDR_BYTES 40u

enum fl_msg_type {
	FL_MSG_REQUEST = 1,  /* driver -> leaf: LeafRequest; leaf -> mock: RpcRequest */
	FL_MSG_REPLY = 2,    /* the answer: LeafReply or RpcReply; status says how it went */
	FL_MSG_PING = 3,     /* keepalive on an idle channel; empty payload */
	FL_MSG_PONG = 4,     /* answer to a ping, same request_id; empty payload */
	FL_MSG_STATS = 5,    /* client -> leaf or mock: a stats snapshot, please; empty
	                        payload. Answered by a REPLY whose payload is the snapshot
	                        as JSON text (the stats file's object, compact, with
	                        snapshot_wall_ns: the server's realtime clock when taken),
	                        or a non-OK status with an ErrorReply */
	FL_MSG_TYPE_MAX = 5
};

enum fl_frame_flag {
	FL_FRAME_ZSTD = 1u,  /* payload is one zstd frame; decompress before decoding */
	FL_FRAME_FLAGS_ALL = 1u
};

/* Reply status. A reply with a non-zero status has an empty payload, or an ErrorReply. */
enum fl_status {
	FL_STATUS_OK = 0,
	FL_STATUS_OVERLOADED = 1,   /* inflight limit reached: request shed, not processed */
	FL_STATUS_BAD_REQUEST = 2,  /* payload did not decompress or decode */
	FL_STATUS_DENIED = 3,       /* ACL check refused the request key */
	FL_STATUS_STALE = 4,        /* client timestamp older than the staleness bound */
	FL_STATUS_INTERNAL = 5,     /* the server failed (out of memory, ...) */
	FL_STATUS_DEADLINE_EXCEEDED = 6, /* the request's deadline (deadline_ns) passed, or
	                                    its remaining stages would end past it: skipped */
	FL_STATUS_MAX = 6
};

struct fl_frame_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t payload_len;
	uint32_t status;
	uint64_t request_id;
	uint64_t client_ts_ns;
	union {
		uint64_t server_ns;    /* replies */
		uint64_t deadline_ns;  /* requests */
	};
};

/* Header check results (negative) and fl_wire_pull results. */
enum fl_wire_rc {
	FL_WIRE_FRAME = 1,          /* a whole frame was taken */
	FL_WIRE_NEED_MORE = 0,      /* not enough bytes yet */
	FL_WIRE_BAD_MAGIC = -1,
	FL_WIRE_BAD_VERSION = -2,
	FL_WIRE_BAD_TYPE = -3,
	FL_WIRE_BAD_FLAGS = -4,
	FL_WIRE_TOO_LONG = -5,      /* payload_len above the receiver's maximum */
	FL_WIRE_NO_MEMORY = -6
};

/* Fill h for a new frame: magic and version set, the rest as given. */
void fl_hdr_init(struct fl_frame_hdr *h, enum fl_msg_type type, uint64_t request_id,
	uint64_t client_ts_ns);

/* Write h as FL_WIRE_HDR_BYTES big-endian bytes into out. */
void fl_hdr_encode(const struct fl_frame_hdr *h, uint8_t out[FL_WIRE_HDR_BYTES]);

/* Parse FL_WIRE_HDR_BYTES bytes into h and check it: returns FL_WIRE_FRAME (1) for a good
 * header, or a negative enum fl_wire_rc naming the first problem (h is filled anyway, so
 * the caller can echo the request id in an error reply). max_payload: the largest
 * payload_len accepted, in bytes. */
int fl_hdr_decode(const uint8_t in[FL_WIRE_HDR_BYTES], struct fl_frame_hdr *h,
	uint32_t max_payload);

/* Read the header at the front of evbuffer in without taking anything: FL_WIRE_FRAME
 * with h filled when a good header is there (its payload may not have arrived yet),
 * FL_WIRE_NEED_MORE, or a negative code as fl_hdr_decode. Lets a server judge a
 * request before its payload is read. */
int fl_wire_peek(struct evbuffer *in, uint32_t max_payload, struct fl_frame_hdr *h);

/* Take one frame from the front of evbuffer in. Returns FL_WIRE_FRAME with h filled and
 * *payload set to a malloc'd copy of the payload (NULL when payload_len is 0; the caller
 * frees it), FL_WIRE_NEED_MORE (nothing removed), or a negative code for a bad header
 * (nothing removed; the stream cannot be resynchronised: close the connection after an
 * optional error reply). */
int fl_wire_pull(struct evbuffer *in, uint32_t max_payload, struct fl_frame_hdr *h,
	uint8_t **payload);

/* Append header h (its payload_len set to len) and len payload bytes to evbuffer out.
 * Returns 0, or -1 when the buffer cannot grow. */
int fl_wire_push(struct evbuffer *out, struct fl_frame_hdr *h, const void *payload, size_t len);

/* Short constant texts: fl_wire_strerror for an enum fl_wire_rc ("bad magic"),
 * fl_status_name for an enum fl_status ("overloaded"). */
const char *fl_wire_strerror(int rc);
const char *fl_status_name(uint32_t status);

#endif
