/* mock_server.c: the mock's IO threads, connections, request path and stats. */
#define _GNU_SOURCE  /* pthread_setname_np */
#include "mock_server.h"

#include "clock.h"
#include "corpus.h"
#include "frontload.pb-c.h"
#include "listener.h"
#include "memacct.h"
#include "mock_methods.h"
#include "net.h"
#include "osfile.h"
#include "tls.h"
#include "wire.h"
#include "zcodec.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#define MOCK_BACKLOG 1024
#define MOCK_STOP_GRACE_MS 1000  /* pending replies get this long after a stop signal */

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
#define MOCK_BAD_KINDS 7
static const char *const mock_bad_kind_names[MOCK_BAD_KINDS] = {
	"bad_magic", "bad_version", "bad_type", "bad_flags", "too_long", "no_memory",
	"unexpected_type",
};
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

static void conn_free(struct mock_conn *c);
static void conn_maybe_close(struct mock_conn *c);
static void srv_stats_json(struct mock_server *s, FILE *f);

/* ---- replies ---- */

/* Queue one frame on c's output. Returns 0, or -1 when the connection must be dropped
 * (the buffer cannot grow, or unsent output passed max_output_bytes). */
static int conn_push(struct mock_conn *c, struct fl_frame_hdr *h, const void *data, size_t len)
{
	struct mock_io *io = c->io;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	if (fl_wire_push(out, h, data, len) != 0) {
		MOCK_STAT_ADD(io, internal_errors, 1);
		return -1;
	}
	MOCK_STAT_ADD(io, replies_sent, 1);
	MOCK_STAT_ADD(io, bytes_out, FL_WIRE_HDR_BYTES + len);
	if (h->status != FL_STATUS_OK)
		MOCK_STAT_ADD(io, error_replies, 1);
	if (evbuffer_get_length(out) + c->pending_bytes > io->srv->cfg.max_output_bytes) {
		MOCK_STAT_ADD(io, dropped_connections, 1);
		return -1;
	}
	return 0;
}

/* An error REPLY for request req: status and an ErrorReply naming the problem. */
static int conn_error_reply(struct mock_conn *c, const struct fl_frame_hdr *req,
	uint32_t status, const char *msg)
{
	Frontload__ErrorReply er = FRONTLOAD__ERROR_REPLY__INIT;
	er.message = (char *)msg;
	uint8_t buf[512];
	size_t n = frontload__error_reply__get_packed_size(&er);
	if (n > sizeof buf) {
		er.message = (char *)"error";
		n = frontload__error_reply__get_packed_size(&er);
	}
	frontload__error_reply__pack(&er, buf);
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REPLY, req->request_id, req->client_ts_ns);
	h.status = status;
	return conn_push(c, &h, buf, n);
}

/* The thread's gauge of delayed replies' bytes (single writer: its IO thread). */
static void io_pending_add(struct mock_io *io, int64_t d)
{
	__atomic_store_n(&io->pending_bytes, io->pending_bytes + (uint64_t)d, __ATOMIC_RELAXED);
}

static void pending_unlink(struct mock_pending *p)
{
	struct mock_conn *c = p->conn;
	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	c->pending_bytes -= p->len;
	io_pending_add(c->io, -(int64_t)p->len);
	event_free(p->timer);
	free(p);
}

/* Timer of a delayed reply: send it now. */
static void pending_fire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct mock_pending *p = arg;
	struct mock_conn *c = p->conn;
	p->hdr.server_ns = fl_mono_ns() - p->t0_ns;
	int rc = conn_push(c, &p->hdr, p->data, p->len);
	pending_unlink(p);
	if (rc != 0)
		conn_free(c);
	else if (c->state == MOCK_CONN_CLOSING)
		conn_maybe_close(c);
}

/* Hold a built reply for wait_us. Returns 0 or -1 (drop the connection). */
static int conn_defer(struct mock_conn *c, const struct fl_frame_hdr *h, uint64_t t0_ns,
	const uint8_t *data, size_t len, uint32_t wait_us)
{
	struct mock_io *io = c->io;
	struct mock_pending *p = malloc(sizeof *p + len);
	if (!p) {
		MOCK_STAT_ADD(io, internal_errors, 1);
		return -1;
	}
	p->timer = evtimer_new(io->base, pending_fire, p);
	if (!p->timer) {
		free(p);
		MOCK_STAT_ADD(io, internal_errors, 1);
		return -1;
	}
	p->conn = c;
	p->hdr = *h;
	p->t0_ns = t0_ns;
	p->len = len;
	if (len)
		memcpy(p->data, data, len);
	p->prev = NULL;
	p->next = c->pending;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	c->pending_bytes += len;
	io_pending_add(io, (int64_t)len);
	struct timeval tv = { wait_us / 1000000u, wait_us % 1000000u };
	evtimer_add(p->timer, &tv);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) + c->pending_bytes >
	    io->srv->cfg.max_output_bytes) {
		MOCK_STAT_ADD(io, dropped_connections, 1);
		return -1;
	}
	return 0;
}

/* ---- the request path: frame -> payload -> handler -> shape -> reply ---- */

/* Free this thread's buffers grown past the scratch cap by one large call (memacct.h)
 * and publish what they hold. The reply is copied out (output or a pending) by now. */
static void io_trim(struct mock_io *io)
{
	size_t keep = fl_mem_keep_bytes();
	size_t n = fl_bytes_trim(&io->dbuf, keep) + fl_bytes_trim(&io->pack, keep) +
		fl_bytes_trim(&io->zout, keep) + fl_zcodec_bytes(io->z);

	if (io->call.scratch_cap > keep) {
		free(io->call.scratch);
		io->call.scratch = NULL;
		io->call.scratch_cap = 0;
	}
	__atomic_store_n(&io->scratch_bytes, (uint64_t)(n + io->call.scratch_cap),
		__ATOMIC_RELAXED);
}

static int conn_request_serve(struct mock_conn *c, const struct fl_frame_hdr *req,
	const uint8_t *payload, uint64_t t0_ns);

/* Serve one REQUEST frame. Returns 0, or -1 when the connection must be dropped. */
static int conn_request(struct mock_conn *c, const struct fl_frame_hdr *req,
	const uint8_t *payload, uint64_t t0_ns)
{
	int rc = conn_request_serve(c, req, payload, t0_ns);

	io_trim(c->io);
	return rc;
}

static int conn_request_serve(struct mock_conn *c, const struct fl_frame_hdr *req,
	const uint8_t *payload, uint64_t t0_ns)
{
	struct mock_io *io = c->io;
	const struct mock_config *cfg = &io->srv->cfg;
	int zstd = (req->flags & FL_FRAME_ZSTD) != 0;
	const uint8_t *msg = payload;
	size_t msg_len = req->payload_len;

	if (zstd) {
		if (fl_zcodec_decompress(io->z, payload, req->payload_len, cfg->max_frame_bytes,
		    &io->dbuf) != 0) {
			MOCK_STAT_ADD(io, bad_payloads, 1);
			return conn_error_reply(c, req, FL_STATUS_BAD_REQUEST,
				"payload is not a zstd frame with a content size within the limit");
		}
		msg = io->dbuf.data;
		msg_len = io->dbuf.len;
	}
	Frontload__RpcRequest *rq = frontload__rpc_request__unpack(NULL, msg_len, msg);
	if (!rq) {
		MOCK_STAT_ADD(io, bad_payloads, 1);
		return conn_error_reply(c, req, FL_STATUS_BAD_REQUEST,
			"payload is not an RpcRequest");
	}
	Frontload__RpcReply reply = FRONTLOAD__RPC_REPLY__INIT;
	uint32_t method = rq->method;
	int rc = mock_dispatch(&io->call, method, rq->body.data, rq->body.len, &reply);
	uint32_t latency_us = rq->latency_us;
	frontload__rpc_request__free_unpacked(rq, NULL);
	if (rc != MOCK_OK) {
		uint32_t status = FL_STATUS_BAD_REQUEST;
		if (rc == MOCK_ERR_UNKNOWN_METHOD) {
			MOCK_STAT_ADD(io, unknown_methods, 1);
		} else if (rc == MOCK_ERR_SHORT_BODY) {
			MOCK_STAT_ADD(io, short_bodies, 1);
		} else {
			MOCK_STAT_ADD(io, internal_errors, 1);
			status = FL_STATUS_INTERNAL;
		}
		return conn_error_reply(c, req, status, mock_strerror(rc));
	}

	size_t n = frontload__rpc_reply__get_packed_size(&reply);
	if (fl_bytes_reserve(&io->pack, n) != 0) {
		MOCK_STAT_ADD(io, internal_errors, 1);
		return conn_error_reply(c, req, FL_STATUS_INTERNAL, "out of memory");
	}
	io->pack.len = frontload__rpc_reply__pack(&reply, io->pack.data);
	const struct fl_bytes *out = &io->pack;
	if (zstd) {
		if (fl_zcodec_compress(io->z, io->pack.data, io->pack.len, &io->zout) != 0) {
			MOCK_STAT_ADD(io, internal_errors, 1);
			return conn_error_reply(c, req, FL_STATUS_INTERNAL, "compression failed");
		}
		out = &io->zout;
		MOCK_STAT_ADD(io, zstd_requests, 1);
	}
	MOCK_STAT_ADD(io, requests, 1);
	MOCK_STAT_ADD(io, by_method[method], 1);

	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REPLY, req->request_id, req->client_ts_ns);
	h.flags = zstd ? FL_FRAME_ZSTD : 0;
	uint32_t wait_us;
	switch (mock_shape_decide(&cfg->shape, latency_us, &wait_us)) {
	case MOCK_SHAPE_SPIN:
		MOCK_STAT_ADD(io, replies_spin, 1);
		mock_shape_spin(wait_us);
		break;
	case MOCK_SHAPE_TIMER:
		MOCK_STAT_ADD(io, replies_timer, 1);
		return conn_defer(c, &h, t0_ns, out->data, out->len, wait_us);
	default:
		MOCK_STAT_ADD(io, replies_now, 1);
		break;
	}
	h.server_ns = fl_mono_ns() - t0_ns;
	return conn_push(c, &h, out->data, out->len);
}

/* A STATS frame: the stats file's snapshot, built now by the same writer, as the reply.
 * One with a payload or flags is malformed: an error REPLY, the connection stays. */
static int conn_stats(struct mock_conn *c, const struct fl_frame_hdr *h)
{
	struct mock_io *io = c->io;
	char *text = NULL;
	size_t len = 0;

	MOCK_STAT_ADD(io, stats_requests, 1);
	if (h->payload_len != 0 || h->flags != 0)
		return conn_error_reply(c, h, FL_STATUS_BAD_REQUEST,
			"bad stats request: STATS takes no payload and no flags");
	FILE *f = open_memstream(&text, &len);
	if (f != NULL) {
		srv_stats_json(io->srv, f);
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
		}
	}
	if (text == NULL) {
		MOCK_STAT_ADD(io, internal_errors, 1);
		return conn_error_reply(c, h, FL_STATUS_INTERNAL, "stats: out of memory");
	}
	struct fl_frame_hdr r;
	fl_hdr_init(&r, FL_MSG_REPLY, h->request_id, h->client_ts_ns);
	int rc = conn_push(c, &r, text, len);
	free(text);
	return rc;
}

/* Serve one frame with a good header. Returns 0, or -1 to drop the connection. */
static int conn_frame(struct mock_conn *c, const struct fl_frame_hdr *h, const uint8_t *payload,
	uint64_t t0_ns)
{
	struct mock_io *io = c->io;
	switch (h->type) {
	case FL_MSG_REQUEST:
		return conn_request(c, h, payload, t0_ns);
	case FL_MSG_PING: {
		struct fl_frame_hdr pong;
		fl_hdr_init(&pong, FL_MSG_PONG, h->request_id, h->client_ts_ns);
		MOCK_STAT_ADD(io, pings, 1);
		return conn_push(c, &pong, NULL, 0);
	}
	case FL_MSG_STATS:
		return conn_stats(c, h);
	default:
		/* A well-formed REPLY or PONG: the stream is intact, so answer and go on. */
		MOCK_STAT_ADD(io, bad_frames[MOCK_BAD_UNEXPECTED], 1);
		return conn_error_reply(c, h, FL_STATUS_BAD_REQUEST,
			"unexpected frame type: the mock takes REQUEST, PING and STATS");
	}
}

/* A bad header: the stream cannot be resynchronised. Answer with an error REPLY (echoing
 * whatever request id the header had), cancel delayed replies and close after flushing. */
static void conn_bad_header(struct mock_conn *c, int rc, const struct fl_frame_hdr *h)
{
	struct mock_io *io = c->io;
	int kind = -rc - 1;
	if (kind >= 0 && kind < MOCK_BAD_KINDS)
		MOCK_STAT_ADD(io, bad_frames[kind], 1);
	char msg[96];
	snprintf(msg, sizeof msg, "bad frame header: %s; closing", fl_wire_strerror(rc));
	while (c->pending) {
		MOCK_STAT_ADD(io, replies_cancelled, 1);
		pending_unlink(c->pending);
	}
	c->state = MOCK_CONN_CLOSING;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (conn_error_reply(c, h, FL_STATUS_BAD_REQUEST, msg) != 0)
		conn_free(c);
	else
		conn_maybe_close(c);
}

/* ---- connection callbacks (IO thread) ---- */

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct mock_conn *c = arg;
	struct mock_io *io = c->io;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint32_t max_frame = io->srv->cfg.max_frame_bytes;

	while (c->state != MOCK_CONN_CLOSING) {
		struct fl_frame_hdr h;
		uint8_t *payload = NULL;
		int rc = fl_wire_pull(in, max_frame, &h, &payload);
		if (rc == FL_WIRE_NEED_MORE) {
			/* Garbage shorter than a header is refused as soon as its magic is wrong. */
			uint8_t m[4];
			if (evbuffer_copyout(in, m, 4) == 4 &&
			    ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 |
			     m[3]) != FL_WIRE_MAGIC) {
				memset(&h, 0, sizeof h);
				conn_bad_header(c, FL_WIRE_BAD_MAGIC, &h);
			}
			return;
		}
		if (rc < 0) {
			conn_bad_header(c, rc, &h);
			return;
		}
		uint64_t t0_ns = fl_mono_ns();
		MOCK_STAT_ADD(io, bytes_in, FL_WIRE_HDR_BYTES + h.payload_len);
		rc = conn_frame(c, &h, payload, t0_ns);
		free(payload);
		if (rc != 0) {
			conn_free(c);
			return;
		}
	}
	/* Closing: discard input so close() sends a FIN, not an RST that could destroy the
	 * error reply before the peer reads it. */
	evbuffer_drain(in, evbuffer_get_length(in));
}

static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct mock_conn *c = arg;
	if (c->state == MOCK_CONN_CLOSING)
		conn_maybe_close(c);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct mock_conn *c = arg;
	struct mock_io *io = c->io;
	if (what & BEV_EVENT_CONNECTED) {
		MOCK_STAT_ADD(io, handshakes, 1);
		if (c->state == MOCK_CONN_HANDSHAKE)
			c->state = MOCK_CONN_OPEN;
		char d[96];
		fl_tls_describe(bufferevent_openssl_get_ssl(bev), d, sizeof d);
		pthread_mutex_lock(&io->srv->tls_lock);
		memcpy(io->srv->tls_last, d, sizeof d);
		pthread_mutex_unlock(&io->srv->tls_lock);
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
		if (c->state == MOCK_CONN_HANDSHAKE)
			MOCK_STAT_ADD(io, handshake_failures, 1);
		else if (what & BEV_EVENT_ERROR)
			MOCK_STAT_ADD(io, io_errors, 1);
		/* The OpenSSL error queue is per thread: leave it clean for the next connection. */
		while (bufferevent_get_openssl_error(bev))
			;
		ERR_clear_error();
		conn_free(c);
	}
}

/* Free c once it owes nothing: no delayed reply pending and its output flushed. */
static void conn_maybe_close(struct mock_conn *c)
{
	if (!c->pending && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_free(c);
}

/* Free c now: cancel its delayed replies and close the socket. */
static void conn_free(struct mock_conn *c)
{
	struct mock_io *io = c->io;
	while (c->pending) {
		MOCK_STAT_ADD(io, replies_cancelled, 1);
		pending_unlink(c->pending);
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		io->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	io->nconns--;
	bufferevent_free(c->bev);  /* frees the SSL and closes the socket */
	free(c);
	MOCK_STAT_ADD(io, connections_closed, 1);
	if (io->stopping && io->nconns == 0)
		event_base_loopbreak(io->base);
}

static void io_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
	int salen, void *arg)
{
	(void)lis;
	(void)sa;
	(void)salen;
	struct mock_io *io = arg;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct mock_conn *c = calloc(1, sizeof *c);
	SSL *ssl = c ? SSL_new(io->srv->ssl_ctx) : NULL;
	struct bufferevent *bev = ssl ? bufferevent_openssl_socket_new(io->base, fd, ssl,
		BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE) : NULL;
	if (!bev) {
		/* Out of memory. libevent 2.1 leaves ssl and fd to the caller on failure. */
		MOCK_STAT_ADD(io, internal_errors, 1);
		SSL_free(ssl);
		ERR_clear_error();
		free(c);
		evutil_closesocket(fd);
		return;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	c->io = io;
	c->bev = bev;
	c->state = MOCK_CONN_HANDSHAKE;
	c->next = io->conns;
	if (io->conns)
		io->conns->prev = c;
	io->conns = c;
	io->nconns++;
	MOCK_STAT_ADD(io, connections, 1);
	bufferevent_setcb(bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* accept() failed (EMFILE...): the listener paused accepting (listener.h); count it. */
static void io_accept_paused(void *arg)
{
	struct mock_io *io = arg;
	MOCK_STAT_ADD(io, accept_errors, 1);
}

/* Stop request from the main thread, run on the IO thread: no new connections, no new
 * requests; connections close as their delayed replies go out, within the grace period. */
static void io_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct mock_io *io = arg;
	io->stopping = 1;
	fl_listener_free(io->lis);
	io->lis = NULL;
	struct timeval grace = { MOCK_STOP_GRACE_MS / 1000, (MOCK_STOP_GRACE_MS % 1000) * 1000 };
	event_base_loopexit(io->base, &grace);
	for (struct mock_conn *c = io->conns, *next; c; c = next) {
		next = c->next;
		c->state = MOCK_CONN_CLOSING;
		conn_maybe_close(c);
	}
	if (io->nconns == 0)
		event_base_loopbreak(io->base);
}

static void *io_main(void *arg)
{
	struct mock_io *io = arg;
	char name[16];
	snprintf(name, sizeof name, "mock-io-%u", io->index);
	pthread_setname_np(pthread_self(), name);
	event_base_loop(io->base, EVLOOP_NO_EXIT_ON_EMPTY);
	while (io->conns)
		conn_free(io->conns);
	return NULL;
}

/* ---- setup ---- */

__attribute__((format(printf, 3, 4)))
static void srv_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Resolve host:port for listening. */
static int srv_addr(const char *host, uint16_t port, struct sockaddr_storage *ss,
	socklen_t *len, char *err, size_t errlen)
{
	char why[256];

	if (fl_net_resolve(host, port, 1, ss, len, why, sizeof(why)) != 0) {
		srv_err(err, errlen, "cannot resolve host %s: %s", host, why);
		return -1;
	}
	return 0;
}

/* With SO_REUSEPORT a second mock on the same fixed port would silently share it; bind a
 * plain socket first so that a port in use is reported as such (any other failure is
 * left to the real bind to report). */
static int srv_probe_port(const struct sockaddr_storage *ss, socklen_t len, const char *host,
	char *err, size_t errlen)
{
	const char *what;
	int e = fl_net_probe_bind(ss, len, &what);

	if (e == EADDRINUSE && strcmp(what, "bind") == 0) {
		srv_err(err, errlen, "bind %s: %s", host, strerror(e));
		return -1;
	}
	return 0;
}

static void srv_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	struct mock_server *s = arg;
	event_base_loopbreak(s->main_base);
}

static void srv_stats_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct mock_server *s = arg;
	mock_server_write_stats(s, s->cfg.stats_file);
}

/* An IO thread's event base. Precise timers: libevent otherwise rounds timer waits to
 * whole milliseconds, which would add up to ~1 ms to every shaped latency. */
static struct event_base *mock_new_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *b;

	if (ec == NULL)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	b = event_base_new_with_config(ec);
	event_config_free(ec);
	return b;
}

struct mock_server *mock_server_new(const struct mock_config *cfg, const struct fl_corpus *corpus,
	char *err, size_t errlen)
{
	if (cfg->threads < 1) {
		srv_err(err, errlen, "threads must be at least 1");
		return NULL;
	}
	struct mock_server *s = calloc(1, sizeof *s);
	if (!s) {
		srv_err(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	pthread_mutex_init(&s->tls_lock, NULL);
	snprintf(s->tls_last, sizeof s->tls_last, "none");
	s->start_ns = fl_mono_ns();
	s->io = calloc(cfg->threads, sizeof *s->io);
	s->ssl_ctx = fl_tls_server_ctx(cfg->tls_dir, err, errlen);
	s->main_base = event_base_new();
	if (!s->io || !s->ssl_ctx || !s->main_base) {
		if (s->ssl_ctx && err)
			snprintf(err, errlen, "out of memory");
		goto fail;
	}

	s->sig_term = evsignal_new(s->main_base, SIGTERM, srv_signal_cb, s);
	s->sig_int = evsignal_new(s->main_base, SIGINT, srv_signal_cb, s);
	if (!s->sig_term || !s->sig_int || evsignal_add(s->sig_term, NULL) ||
	    evsignal_add(s->sig_int, NULL)) {
		srv_err(err, errlen, "cannot install signal handlers");
		goto fail;
	}
	if (cfg->stats_file && cfg->stats_interval_s > 0) {
		s->stats_timer = event_new(s->main_base, -1, EV_PERSIST, srv_stats_cb, s);
		struct timeval tv = { cfg->stats_interval_s, 0 };
		if (!s->stats_timer || event_add(s->stats_timer, &tv)) {
			srv_err(err, errlen, "cannot arm the stats timer");
			goto fail;
		}
	}

	struct sockaddr_storage ss;
	socklen_t sslen;
	if (srv_addr(cfg->host, cfg->port, &ss, &sslen, err, errlen))
		goto fail;
	char where[300];
	snprintf(where, sizeof where, "%s:%u", cfg->host, (unsigned)cfg->port);
	if (cfg->port && srv_probe_port(&ss, sslen, where, err, errlen))
		goto fail;
	if (cfg->host && strchr(cfg->host, ':'))  /* IPv6: bracket it */
		snprintf(where, sizeof where, "[%s]:%u", cfg->host, (unsigned)cfg->port);
	for (unsigned i = 0; i < cfg->threads; i++) {
		struct mock_io *io = &s->io[i];
		io->srv = s;
		io->index = i;
		s->corpus_bytes = corpus ? corpus->map_len : 0;
		io->call.corpus = corpus ? corpus->data : NULL;
		io->call.corpus_len = corpus ? corpus->len : 0;
		io->call.max_reply_bytes = cfg->max_reply_bytes;
		io->base = mock_new_base();
		io->z = fl_zcodec_new(cfg->zstd_level);
		if (!io->base || !io->z) {
			srv_err(err, errlen, "%s", io->base ? "bad zstd level or out of memory" :
				"cannot create an event base");
			goto fail;
		}
		/* The first listener picks the port when it is 0; the rest join it. */
		io->lis = fl_listener_new(&(struct fl_listener_cfg){ io->base, &ss, sslen,
			MOCK_BACKLOG, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
			LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT, io_accept_cb, io_accept_paused,
			io });
		if (!io->lis) {
			int e = errno;
			if (i > 0)
				snprintf(where, sizeof where, "%s port %u", cfg->host, (unsigned)s->port);
			srv_err(err, errlen, "bind %s: %s", where, strerror(e));
			goto fail;
		}
		if (i == 0) {
			if (fl_listener_port(io->lis, &s->port) != 0) {
				srv_err(err, errlen, "getsockname: %s", strerror(errno));
				goto fail;
			}
			fl_net_set_port(&ss, s->port);
		}
	}
	return s;
fail:
	mock_server_free(s);
	return NULL;
}

uint16_t mock_server_port(const struct mock_server *s)
{
	return s->port;
}

int mock_server_start(struct mock_server *s, char *err, size_t errlen)
{
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		int rc = pthread_create(&s->io[i].thread, NULL, io_main, &s->io[i]);
		if (rc != 0) {
			srv_err(err, errlen, "cannot start IO thread: %s", strerror(rc));
			return -1;
		}
		s->io[i].started = 1;
	}
	return 0;
}

/* Ask every started IO thread to stop and join it. */
static void srv_stop_threads(struct mock_server *s)
{
	struct timeval now = { 0, 0 };
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		struct mock_io *io = &s->io[i];
		if (io->started && event_base_once(io->base, -1, EV_TIMEOUT, io_stop_cb, io, &now))
			event_base_loopbreak(io->base);  /* could not queue the stop: just end */
	}
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		if (s->io[i].started) {
			pthread_join(s->io[i].thread, NULL);
			s->io[i].started = 0;
		}
	}
}

int mock_server_wait(struct mock_server *s)
{
	event_base_dispatch(s->main_base);
	srv_stop_threads(s);
	if (s->cfg.stats_file)
		return mock_server_write_stats(s, s->cfg.stats_file);
	return 0;
}

/* ---- stats ---- */

static uint64_t stat_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Sum the threads' counters into t. */
static void srv_stats_sum(struct mock_server *s, struct mock_stats *t)
{
	memset(t, 0, sizeof *t);
	for (unsigned i = 0; i < s->cfg.threads; i++) {
		const struct mock_stats *st = &s->io[i].st;
#define X(f) t->f += stat_load(&st->f);
		MOCK_STATS(X)
#undef X
		for (unsigned m = 0; m < MOCK_METHOD_COUNT; m++)
			t->by_method[m] += stat_load(&st->by_method[m]);
		for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
			t->bad_frames[k] += stat_load(&st->bad_frames[k]);
	}
}

/* The memory block (memacct.h) as compact JSON; free() it. NULL when out of memory. */
static char *srv_memory_json(struct mock_server *s)
{
	uint64_t scratch = 0, pending = 0;

	for (unsigned i = 0; i < s->cfg.threads; i++) {
		scratch += __atomic_load_n(&s->io[i].scratch_bytes, __ATOMIC_RELAXED);
		pending += __atomic_load_n(&s->io[i].pending_bytes, __ATOMIC_RELAXED);
	}
	const struct fl_mem_owner own[] = {
		{ "corpus_bytes", s->corpus_bytes ? (int64_t)s->corpus_bytes : -1 },
		{ "io_scratch_bytes", (int64_t)scratch },
		{ "delayed_replies_bytes", (int64_t)pending },
		{ "tls_heap_bytes", fl_tls_heap_bytes() },
	};
	json_t *o = fl_mem_json(own, sizeof(own) / sizeof(own[0]));
	char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return txt;
}

static void srv_stats_json(struct mock_server *s, FILE *f)
{
	struct mock_stats t;
	srv_stats_sum(s, &t);
	char tls[sizeof s->tls_last];
	pthread_mutex_lock(&s->tls_lock);
	memcpy(tls, s->tls_last, sizeof tls);
	pthread_mutex_unlock(&s->tls_lock);

	fprintf(f, "{\n  \"uptime_s\": %.3f,\n  \"snapshot_wall_ns\": %" PRIu64 ",\n"
		"  \"port\": %u,\n  \"threads\": %u,\n", (double)(fl_mono_ns() - s->start_ns) / 1e9,
		fl_wall_ns(), (unsigned)s->port, s->cfg.threads);
	fprintf(f, "  \"tls_last\": \"");
	for (const char *p = tls; *p; p++)  /* OpenSSL names are plain, but stay valid JSON */
		fputc(*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? '?' : *p, f);
	fprintf(f, "\",\n  \"connections_open\": %" PRIu64 ",\n",
		t.connections - t.connections_closed);
#define X(field) fprintf(f, "  \"" #field "\": %" PRIu64 ",\n", t.field);
	MOCK_STATS(X)
#undef X
	uint64_t bad = 0;
	for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
		bad += t.bad_frames[k];
	fprintf(f, "  \"bad_frames\": %" PRIu64 ",\n  \"bad_frames_by_kind\": {", bad);
	for (unsigned k = 0; k < MOCK_BAD_KINDS; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", mock_bad_kind_names[k],
			t.bad_frames[k]);
	fprintf(f, "},\n  \"requests_by_method\": {");
	for (unsigned m = 0; m < MOCK_METHOD_COUNT; m++)
		fprintf(f, "%s\n    \"%s\": %" PRIu64, m ? "," : "", mock_method_name(m),
			t.by_method[m]);
	char *mem = srv_memory_json(s);
	fprintf(f, "\n  },\n  \"memory\": %s\n}\n", mem ? mem : "null");
	free(mem);
}

int mock_server_write_stats(struct mock_server *s, const char *path)
{
	if (!path)
		return 0;
	struct fl_atomic_file a;
	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0)
		return -1;
	srv_stats_json(s, a.f);
	return fl_atomic_commit(&a, 1, NULL, 0);
}

void mock_server_free(struct mock_server *s)
{
	if (!s)
		return;
	if (s->io) {
		srv_stop_threads(s);
		for (unsigned i = 0; i < s->cfg.threads; i++) {
			struct mock_io *io = &s->io[i];
			while (io->conns)
				conn_free(io->conns);
			fl_listener_free(io->lis);
			if (io->base)
				event_base_free(io->base);
			fl_zcodec_free(io->z);
			fl_bytes_free(&io->dbuf);
			fl_bytes_free(&io->pack);
			fl_bytes_free(&io->zout);
			mock_call_release(&io->call);
		}
		free(s->io);
	}
	if (s->stats_timer)
		event_free(s->stats_timer);
	if (s->sig_term)
		event_free(s->sig_term);
	if (s->sig_int)
		event_free(s->sig_int);
	if (s->main_base)
		event_base_free(s->main_base);
	SSL_CTX_free(s->ssl_ctx);
	pthread_mutex_destroy(&s->tls_lock);
	free(s);
}
