/* fanout_channel.c: the fanout's TLS channels to the mock, on their FANOUT thread:
 * connect, pick, send calls and pings, read replies, keepalive, fail and reconnect. */
#include "fanout_int.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "corpus.h"
#include "frontload.pb-c.h"
#include "wire.h"

/* ---- channels (FANOUT thread) ---- */

#define FO_PING_BIT (1ull << 63)      /* ping ids; call ids never set it (fanout_slots.h) */

static void fo_up_add(struct fo_thread *t, int d)
{
	unsigned v = atomic_load_explicit(&t->st.channels_up, memory_order_relaxed);
	atomic_store_explicit(&t->st.channels_up, v + (unsigned)d, memory_order_relaxed);
}

/* Least-loaded up channel, ties rotating; NULL when none is up or the thread stops. */
struct fo_chan *fo_chan_pick(struct fo_thread *t)
{
	if (t->stopping)
		return NULL;
	struct fo_chan *best = NULL;
	unsigned n = t->nchans, start = t->chan_rr++ % n;
	for (unsigned i = 0; i < n; i++) {
		struct fo_chan *ch = &t->chans[(start + i) % n];
		if (ch->state == FO_CHAN_UP && (!best || ch->calls.n < best->calls.n))
			best = ch;
	}
	return best;
}

/* Frame one RpcRequest: body = 4-byte big-endian response size + corpus filler. */
int fo_chan_send_call(struct fo_chan *ch, uint64_t id, const struct fo_call *c)
{
	struct fo_thread *t = ch->t;
	const struct fl_corpus *corpus = t->f->cfg.corpus;
	if (fl_bytes_reserve(&t->body, c->req_bytes) != 0)
		return -1;
	uint8_t *b = t->body.data;
	b[0] = (uint8_t)(c->resp_bytes >> 24);
	b[1] = (uint8_t)(c->resp_bytes >> 16);
	b[2] = (uint8_t)(c->resp_bytes >> 8);
	b[3] = (uint8_t)c->resp_bytes;
	if (corpus && corpus->len)
		fl_corpus_copy(corpus, c->filler_off, b + 4, c->req_bytes - 4);
	else
		memset(b + 4, 0, c->req_bytes - 4);

	Frontload__RpcRequest m = FRONTLOAD__RPC_REQUEST__INIT;
	m.method = c->method;
	m.latency_us = c->latency_us;
	m.body.data = b;
	m.body.len = c->req_bytes;
	size_t plen = frontload__rpc_request__get_packed_size(&m);
	if (fl_bytes_reserve(&t->packed, plen) != 0)
		return -1;
	t->packed.len = frontload__rpc_request__pack(&m, t->packed.data);
	const struct fl_bytes *payload = &t->packed;
	if (ch->zstd) {
		if (fl_zcodec_compress(t->z, t->packed.data, t->packed.len, &t->zbuf) != 0)
			return -1;
		payload = &t->zbuf;
	}
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REQUEST, id, fl_wall_ns());
	h.flags = ch->zstd ? FL_FRAME_ZSTD : 0;
	if (fl_wire_push(bufferevent_get_output(ch->bev), &h, payload->data, payload->len) != 0)
		return -1;
	fo_add(&t->st.wire_bytes_out, FL_WIRE_HDR_BYTES + payload->len);
	ch->last_tx_ns = fl_mono_ns();
	return 0;
}

static void fo_chan_send_ping(struct fo_chan *ch, uint64_t now)
{
	struct fo_thread *t = ch->t;
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_PING, FO_PING_BIT | ++t->ping_seq, fl_wall_ns());
	if (fl_wire_push(bufferevent_get_output(ch->bev), &h, NULL, 0) != 0)
		return;
	fo_add(&t->st.pings, 1);
	fo_add(&t->st.wire_bytes_out, FL_WIRE_HDR_BYTES);
	if (ch->pings_out++ == 0)
		ch->ping_wait_ns = now;
	ch->last_tx_ns = now;
}

/* Drop the connection: fail its in-flight calls and, unless stopping, retry after the
 * backoff (50 ms doubling to 2 s; reset by a finished handshake). */
void fo_chan_fail(struct fo_chan *ch)
{
	struct fo_thread *t = ch->t;
	if (ch->bev) {
		bufferevent_free(ch->bev);
		ch->bev = NULL;
	}
	if (ch->state == FO_CHAN_UP)
		fo_up_add(t, -1);
	ch->state = t->stopping ? FO_CHAN_CLOSED : FO_CHAN_WAIT;
	ch->pings_out = 0;
	/* Not up any more, so the requests pumped here issue elsewhere or fail fast. */
	while (ch->calls.head) {
		struct fl_fslot *s = ch->calls.head;
		struct fo_req *req = s->req;
		fo_slot_detach(t, s);
		fo_call_finish(t, req, FO_ERROR, true);
	}
	if (ch->state == FO_CHAN_CLOSED)
		return;
	struct timeval tv = fo_tv_us((uint64_t)ch->backoff_ms * 1000u);
	event_add(ch->retry, &tv);
	ch->backoff_ms = ch->backoff_ms * 2 > FO_BACKOFF_MAX_MS ? FO_BACKOFF_MAX_MS
		: ch->backoff_ms * 2;
}

static void fo_chan_up(struct fo_chan *ch)
{
	struct fo_thread *t = ch->t;
	struct fl_fanout *f = t->f;
	uint64_t now = fl_mono_ns();
	ch->state = FO_CHAN_UP;
	ch->backoff_ms = FO_BACKOFF_MIN_MS;
	ch->last_tx_ns = ch->last_rx_ns = now;
	ch->pings_out = 0;
	fo_add(&t->st.connects, 1);
	fo_up_add(t, 1);
	pthread_mutex_lock(&f->cipher_mu);
	if (!f->cipher[0]) {
		SSL *ssl = bufferevent_openssl_get_ssl(ch->bev);
		if (ssl)
			fl_tls_describe(ssl, f->cipher, sizeof f->cipher);
	}
	pthread_mutex_unlock(&f->cipher_mu);
}

/* Check one OK-or-not reply against its call: status OK, compression as the channel
 * expects, an RpcReply that decodes, the method echoed and a body of the asked size. */
static bool fo_reply_ok(struct fo_chan *ch, const struct fl_frame_hdr *h, const uint8_t *payload,
	const struct fo_call *c, uint64_t *body_len)
{
	struct fo_thread *t = ch->t;
	if (h->status != FL_STATUS_OK)
		return false;
	bool zstd = (h->flags & FL_FRAME_ZSTD) != 0;
	if (zstd != ch->zstd)
		return false;
	const uint8_t *data = payload ? payload : (const uint8_t *)"";
	size_t len = h->payload_len;
	if (zstd) {
		if (fl_zcodec_decompress(t->z, data, len, t->f->cfg.max_reply_bytes, &t->dbuf) != 0)
			return false;
		data = t->dbuf.data ? t->dbuf.data : (const uint8_t *)"";
		len = t->dbuf.len;
	}
	Frontload__RpcReply *r = frontload__rpc_reply__unpack(NULL, len, data);
	if (!r)
		return false;
	bool ok = r->method == c->method && r->body.len == c->resp_bytes;
	*body_len = r->body.len;
	frontload__rpc_reply__free_unpacked(r, NULL);
	return ok;
}

/* Handle one frame; returns -1 when the channel must be dropped (protocol error). */
static int fo_chan_frame(struct fo_chan *ch, const struct fl_frame_hdr *h, const uint8_t *payload)
{
	struct fo_thread *t = ch->t;
	switch (h->type) {
	case FL_MSG_PONG:
		fo_add(&t->st.pongs, 1);
		ch->pings_out = 0;
		return 0;
	case FL_MSG_PING:
		return 0;  /* the mock does not ping; harmless if it does */
	case FL_MSG_REPLY:
		break;
	default:
		return -1; /* a server never sends requests */
	}
	/* NULL for an id sent on another channel too: the reply is dropped. */
	struct fl_fslot *s = fl_fslot_find(&t->slots, &ch->calls, h->request_id);
	if (!s)
		return 0;  /* late reply of a timed-out call, or unknown id */
	struct fo_req *req = s->req;
	const struct fo_call *c = s->call;
	fo_slot_detach(t, s);
	uint64_t body_len = 0;
	bool ok = fo_reply_ok(ch, h, payload, c, &body_len);
	fo_trim(t);
	if (ok) {
		req->res.resp_bytes += body_len;
		fo_add(&t->st.resp_bytes, body_len);
	}
	fo_call_finish(t, req, ok ? FO_OK : FO_ERROR, true);
	return 0;
}

static void fo_chan_read_cb(struct bufferevent *bev, void *arg)
{
	struct fo_chan *ch = arg;
	struct fo_thread *t = ch->t;
	struct evbuffer *in = bufferevent_get_input(bev);
	/* A zstd reply may be slightly larger than its content (incompressible bodies). */
	uint64_t max = t->f->cfg.max_reply_bytes;
	if (ch->zstd)
		max += max / 128 + 1024;
	uint32_t max_payload = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
	bool any = false;
	for (;;) {
		struct fl_frame_hdr h;
		uint8_t *payload = NULL;
		int rc = fl_wire_pull(in, max_payload, &h, &payload);
		if (rc == FL_WIRE_NEED_MORE)
			break;
		if (rc != FL_WIRE_FRAME) {
			fo_chan_fail(ch);
			return;
		}
		any = true;
		fo_add(&t->st.wire_bytes_in, FL_WIRE_HDR_BYTES + (uint64_t)h.payload_len);
		rc = fo_chan_frame(ch, &h, payload);
		free(payload);
		if (rc != 0) {
			fo_chan_fail(ch);
			return;
		}
	}
	if (any)
		ch->last_rx_ns = fl_mono_ns();
}

static void fo_chan_event_cb(struct bufferevent *bev, short events, void *arg)
{
	(void)bev;
	struct fo_chan *ch = arg;
	if (events & BEV_EVENT_CONNECTED) {
		fo_chan_up(ch);
		return;
	}
	if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		fo_chan_fail(ch);
}

/* Start a TLS connection: TCP connect, then the handshake (BEV_EVENT_CONNECTED once done). */
void fo_chan_connect(struct fo_chan *ch)
{
	struct fo_thread *t = ch->t;
	struct fl_fanout *f = t->f;
	ch->state = FO_CHAN_CONNECTING;
	ch->connect_ns = fl_mono_ns();
	SSL *ssl = SSL_new(f->ssl_ctx);
	if (!ssl) {
		fo_chan_fail(ch);
		return;
	}
	ch->bev = bufferevent_openssl_socket_new(t->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
		BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (!ch->bev) {
		fo_chan_fail(ch);
		return;
	}
	/* The mock may close without close_notify; that is an EOF, not a TLS error. */
	bufferevent_openssl_set_allow_dirty_shutdown(ch->bev, 1);
	bufferevent_setcb(ch->bev, fo_chan_read_cb, NULL, fo_chan_event_cb, ch);
	bufferevent_enable(ch->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(ch->bev, (struct sockaddr *)&f->addr, (int)f->addr_len) != 0) {
		fo_chan_fail(ch);
		return;
	}
	evutil_socket_t fd = bufferevent_getfd(ch->bev);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void fo_chan_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fo_chan *ch = arg;
	if (ch->state != FO_CHAN_WAIT)
		return;
	fo_add(&ch->t->st.reconnects, 1);
	fo_chan_connect(ch);
}

/* Periodic check: connect timeout, dead peer (FO_DEAD_PINGS periods of silence with pings
 * out), and a ping when nothing was sent for ping_ms. */
void fo_chan_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fo_chan *ch = arg;
	struct fl_fanout *f = ch->t->f;
	uint64_t now = fl_mono_ns();
	if (ch->state == FO_CHAN_CONNECTING) {
		if (now - ch->connect_ns >= f->connect_timeout_ns)
			fo_chan_fail(ch);
		return;
	}
	if (ch->state != FO_CHAN_UP)
		return;
	if (ch->pings_out) {
		uint64_t since = ch->last_rx_ns > ch->ping_wait_ns ? ch->last_rx_ns : ch->ping_wait_ns;
		if (now - since >= FO_DEAD_PINGS * f->ping_ns) {
			fo_chan_fail(ch);
			return;
		}
	}
	if (now - ch->last_tx_ns >= f->ping_ns)
		fo_chan_send_ping(ch, now);
}

