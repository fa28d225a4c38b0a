/* mock_request.c: the mock's request path, on its IO threads: a frame in (REQUEST, PING,
 * STATS or a bad one), its reply out, at once or held for its shaped latency. */
#include "mock_server_int.h"

#include "clock.h"
#include "frontload.pb-c.h"
#include "memacct.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

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

void mock_request_pending_unlink(struct mock_pending *p)
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
	mock_request_pending_unlink(p);
	if (rc != 0)
		mock_server_conn_free(c);
	else if (c->state == MOCK_CONN_CLOSING)
		mock_server_conn_maybe_close(c);
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
		mock_stats_json(io->srv, f);
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
int mock_request_frame(struct mock_conn *c, const struct fl_frame_hdr *h, const uint8_t *payload,
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
void mock_request_bad_header(struct mock_conn *c, int rc, const struct fl_frame_hdr *h)
{
	struct mock_io *io = c->io;
	int kind = -rc - 1;
	if (kind >= 0 && kind < MOCK_BAD_KINDS)
		MOCK_STAT_ADD(io, bad_frames[kind], 1);
	char msg[96];
	snprintf(msg, sizeof msg, "bad frame header: %s; closing", fl_wire_strerror(rc));
	while (c->pending) {
		MOCK_STAT_ADD(io, replies_cancelled, 1);
		mock_request_pending_unlink(c->pending);
	}
	c->state = MOCK_CONN_CLOSING;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (conn_error_reply(c, h, FL_STATUS_BAD_REQUEST, msg) != 0)
		mock_server_conn_free(c);
	else
		mock_server_conn_maybe_close(c);
}
