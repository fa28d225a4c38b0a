/* mock_server_int.h: private to the mock server (mock_server.h is its API): the structs
 * and counters mock_server.c, mock_request.c and mock_stats.c share, and the functions one
 * of them calls in another. */
#ifndef MOCK_SERVER_INT_H
#define MOCK_SERVER_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mock_methods.h"
#include "mock_server.h"
#include "tls.h"
#include "wire.h"
#include "zcodec.h"

struct bufferevent;
struct event;
struct event_base;
struct fl_listener;

/* Per-thread counters, listed once. Only the owning IO thread writes them (MOCK_STAT_ADD:
 * a relaxed load and store, no locked instruction); the stats writer reads them with
 * relaxed loads and sums the threads. */
#define MOCK_STATS(X) \
	X(connections)          /* connections accepted */ \
	X(connections_closed)   /* connections freed, for any reason */ \
	X(handshakes)           /* TLS handshakes completed */ \
	X(handshake_failures)   /* connections lost before the handshake completed */ \
	X(io_errors)            /* established connections ended by a socket or TLS error */ \
	X(requests)             /* REQUEST frames that produced an OK reply */ \
	X(zstd_requests)        /* of which had a zstd payload */ \
	X(pings)                /* PING frames answered */ \
	X(stats_requests)       /* STATS frames taken (answered, malformed included) */ \
	X(bad_payloads)         /* payloads that failed to decompress or decode */ \
	X(unknown_methods)      /* RpcRequest.method out of range */ \
	X(short_bodies)         /* RpcRequest.body shorter than 4 bytes */ \
	X(internal_errors)      /* out of memory, compression failure */ \
	X(replies_sent)         /* REPLY and PONG frames queued, errors included */ \
	X(error_replies)        /* of which with a non-OK status */ \
	X(replies_now)          /* OK replies sent at once (shaped below skip) */ \
	X(replies_spin)         /* after a busy-spin */ \
	X(replies_timer)        /* from a timer */ \
	X(replies_cancelled)    /* delayed replies dropped with their connection */ \
	X(bytes_in)             /* frame bytes received (header + payload, as sent) */ \
	X(bytes_out)            /* frame bytes queued for sending */ \
	X(dropped_connections)  /* closed for exceeding max_output_bytes */ \
	X(accept_errors)        /* accept() failed (EMFILE...): accepting paused */

/* Bad frame kinds: the fl_wire_rc header errors, then frames of a type a server does not
 * take (REPLY, PONG). */
#define MOCK_BAD_KINDS 7         /* names: mock_bad_kind_names in mock_stats.c */
#define MOCK_BAD_UNEXPECTED 6

struct mock_stats {
#define X(f) uint64_t f;
	MOCK_STATS(X)
#undef X
	uint64_t by_method[MOCK_METHOD_COUNT];  /* OK requests per method index */
	uint64_t bad_frames[MOCK_BAD_KINDS];    /* per kind, see mock_bad_kind_names */
};

#define MOCK_STAT_ADD(io, field, n) \
	__atomic_store_n(&(io)->st.field, __atomic_load_n(&(io)->st.field, __ATOMIC_RELAXED) + \
		(uint64_t)(n), __ATOMIC_RELAXED)

/* A connection's life. */
enum mock_conn_state {
	MOCK_CONN_HANDSHAKE,  /* TLS accept in progress */
	MOCK_CONN_OPEN,       /* handshake done: frames are served */
	MOCK_CONN_CLOSING     /* no more requests served (input is discarded); freed once no
	                         delayed reply is pending and the output has been flushed */
};

struct mock_io;

/* A reply waiting for its shaped latency: the frame is built, only the send is left. */
struct mock_pending {
	struct mock_pending *prev, *next;  /* the connection's list */
	struct mock_conn *conn;
	struct event *timer;
	struct fl_frame_hdr hdr;           /* reply header; server_ns set when sent */
	uint64_t t0_ns;                    /* when the request frame was decoded */
	size_t len;                        /* payload bytes at data */
	uint8_t data[];
};

struct mock_conn {
	struct mock_conn *prev, *next;     /* the IO thread's list */
	struct mock_io *io;
	struct bufferevent *bev;           /* owns the socket and the SSL */
	enum mock_conn_state state;
	struct mock_pending *pending;      /* delayed replies */
	size_t pending_bytes;              /* payload bytes held by pending */
};

/* One IO thread: its loop, listener, connections, buffers and counters. */
struct mock_io {
	struct mock_server *srv;
	unsigned index;
	pthread_t thread;
	int started;                       /* thread created (join it) */
	struct event_base *base;
	struct fl_listener *lis;     /* pauses accepting when accept() fails (listener.h) */
	struct mock_conn *conns;           /* open connections */
	unsigned nconns;
	int stopping;                      /* stop signal seen: exit once conns drain */
	struct fl_zcodec *z;
	struct fl_bytes dbuf;              /* decompressed request payload */
	struct fl_bytes pack;              /* packed RpcReply */
	struct fl_bytes zout;              /* compressed RpcReply */
	struct mock_call call;             /* handler state: corpus view and scratch */
	struct mock_stats st;
	uint64_t scratch_bytes;            /* atomic: dbuf, pack, zout, call scratch, zstd */
	uint64_t pending_bytes;            /* atomic: delayed replies' bytes, all conns */
};

struct mock_server {
	struct mock_config cfg;
	SSL_CTX *ssl_ctx;                  /* shared by all threads (SSL_new is thread-safe) */
	struct event_base *main_base;      /* signals and the periodic stats timer */
	struct event *sig_term, *sig_int, *stats_timer;
	uint16_t port;
	uint64_t start_ns;
	struct mock_io *io;                /* cfg.threads of them */
	pthread_mutex_t tls_lock;          /* guards tls_last */
	char tls_last[96];                 /* protocol and cipher of the last handshake */
	size_t corpus_bytes;               /* the corpus mapping (0: none) */
};

/* ---- mock_server.c: connections ---- */

/* Free c now: cancel its delayed replies and close the socket. */
void mock_server_conn_free(struct mock_conn *c);

/* Free c once it owes nothing: no delayed reply pending and its output flushed. */
void mock_server_conn_maybe_close(struct mock_conn *c);

/* ---- mock_request.c: frames in, replies out ---- */

/* Serve one frame with a good header. Returns 0, or -1 to drop the connection. */
int mock_request_frame(struct mock_conn *c, const struct fl_frame_hdr *h, const uint8_t *payload,
	uint64_t t0_ns);

/* A bad header (rc < 0, an fl_wire_rc): error REPLY, then c closes (c may be freed). */
void mock_request_bad_header(struct mock_conn *c, int rc, const struct fl_frame_hdr *h);

/* Take delayed reply p off its connection and free it unsent (the caller counts it). */
void mock_request_pending_unlink(struct mock_pending *p);

/* ---- mock_stats.c ---- */

/* Write the merged stats of all IO threads to f as the stats file's JSON. Any thread. */
void mock_stats_json(struct mock_server *s, FILE *f);

#endif
