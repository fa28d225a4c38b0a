/* fanout.c: stage 6, the leaf's outbound RPCs to the mock over pipelined TLS channels. */
#define _GNU_SOURCE
#include "fanout.h"

#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "corpus.h"
#include "fanout_slots.h"
#include "frontload.pb-c.h"
#include "meter.h"
#include "net.h"
#include "rng.h"
#include "sampler.h"
#include "tls.h"
#include "wire.h"
#include "zcodec.h"

#define FO_DEFAULT_WINDOW 16u
#define FO_DEFAULT_PING_MS 200u
#define FO_DEFAULT_TIMEOUT_MS 1000u
#define FO_DEFAULT_MAX_REPLY (16u << 20)
#define FO_MIN_REPLY_BYTES 64u        /* room for the 4-byte size plus protobuf framing */
#define FO_PB_SLACK 16u               /* RpcReply bytes around its body (tags, varints) */
#define FO_LATENCY_CAP_US 200000u     /* the mock's default latency cap (mock_shape.h) */
#define FO_BACKOFF_MIN_MS 50u
#define FO_BACKOFF_MAX_MS 2000u
#define FO_DEAD_PINGS 3u              /* ping periods without an answer before reconnecting */
#define FO_CONNECT_TIMEOUT_MS 1000u   /* at least this long for TCP connect + handshake */
#define FO_ZSTD_LEVEL 3               /* zstd's default: requests are small, cost is minor */
#define FO_MAX_THREADS 1024u
#define FO_MAX_CHANNELS 65536u
#define FO_MAX_CALLS (1u << 20)       /* calls per request, a sanity bound on scale */
#define FO_PING_BIT (1ull << 63)      /* ping ids; call ids never set it (fanout_slots.h) */

_Static_assert(FL_RPC_OUTBOUND == sizeof(((struct fl_fanout_stats *)0)->calls_per_method) /
	sizeof(uint64_t), "calls_per_method is indexed like dist->out");

/* Counters of one FANOUT thread. Only that thread writes them (relaxed load + store: no
 * locked instruction on the hot path); fl_fanout_stats reads them from any thread. */
#define FO_COUNTERS(X) X(calls) X(ok) X(errors) X(timeouts) X(req_bytes) X(resp_bytes) \
	X(wire_bytes_out) X(wire_bytes_in) X(connects) X(reconnects) X(pings) X(pongs)

struct fo_counters {
#define FO_FIELD(name) _Atomic uint64_t name;
	FO_COUNTERS(FO_FIELD)
#undef FO_FIELD
	_Atomic uint64_t per_method[FL_RPC_OUTBOUND]; /* calls issued, by dist->out index */
	_Atomic unsigned channels_up;                 /* channels with a finished handshake */
};

/* One outbound call of a request, sampled on the FANOUT thread. */
struct fo_call {
	uint32_t method;      /* index into dist->out, sent to the mock */
	uint32_t req_bytes;   /* RpcRequest body size (bytes, >= 4) */
	uint32_t resp_bytes;  /* reply body size asked for (bytes) */
	uint32_t latency_us;  /* latency asked for (µs) */
	uint64_t filler_off;  /* corpus offset of the body's filler */
};

/* One request's fanout: its calls, issued at most `window` at a time. */
struct fo_req {
	struct fo_req *next;          /* inbox link */
	uint64_t seed;                /* request_seed: shuffles and samples the calls */
	fl_fanout_done_fn done;
	void *arg;
	uint64_t start_ns;            /* fl_fanout_start time (monotonic) */
	unsigned n;                   /* calls */
	unsigned issued;              /* calls[0..issued) were started */
	unsigned inflight;            /* started and not finished */
	unsigned finished;
	struct fl_fanout_result res;
	struct fo_call calls[];
};

/* An in-flight call is a slot (fanout_slots.h): the id it was sent under, its channel's
 * in-flight list, and here its thread (owner), its deadline event (latency, capped, plus
 * timeout_ms), its request (req) and its call (call). */

enum fo_chan_state {
	FO_CHAN_WAIT,        /* not connected; the retry timer is armed */
	FO_CHAN_CONNECTING,  /* TCP connect and TLS handshake under way */
	FO_CHAN_UP,          /* handshake done: calls are sent here */
	FO_CHAN_CLOSED       /* shutting down: never reconnects */
};

/* One TLS connection to the mock, owned by one FANOUT thread. */
struct fo_chan {
	struct fo_thread *t;
	bool zstd;                    /* requests carry FL_FRAME_ZSTD, replies must too */
	enum fo_chan_state state;
	struct bufferevent *bev;      /* NULL unless CONNECTING or UP */
	struct event *tick;           /* keepalive, dead-peer and connect-timeout checks */
	struct event *retry;          /* reconnect after the backoff */
	uint32_t backoff_ms;          /* next retry delay */
	uint64_t connect_ns;          /* when the current attempt started */
	uint64_t last_tx_ns, last_rx_ns;
	uint64_t ping_wait_ns;        /* when the oldest unanswered ping was sent */
	uint32_t pings_out;           /* pings sent since the last PONG */
	struct fl_fslot_list calls;   /* calls waiting for a reply here */
};

/* One FANOUT thread: a loop, its channels, and the inbox other threads hand requests to. */
struct fo_thread {
	struct fl_fanout *f;
	unsigned index;
	pthread_t tid;
	bool started;                 /* tid is valid */
	struct event_base *base;
	struct event *notify;         /* activated by fl_fanout_start and fl_fanout_free */
	pthread_mutex_t mu;           /* guards inbox_* and closed */
	struct fo_req *inbox_head, *inbox_tail;
	bool closed;                  /* fl_fanout_free began: refuse new requests */
	bool stopping;                /* the thread's own view: channels closed, no new calls */
	struct fo_chan *chans;
	unsigned nchans;
	unsigned chan_rr;             /* rotates ties in the least-loaded pick */
	struct fl_fslots slots;       /* in-flight calls of all its channels */
	uint64_t ping_seq;
	struct fl_zcodec *z;
	struct fl_bytes body, packed, zbuf, dbuf; /* scratch: request body, protobuf, zstd */
	_Atomic size_t scratch_bytes;  /* what they and the codec hold, after fo_trim */
	struct fo_counters st;
	struct fl_meter meter;        /* PMU group, opened by the thread */
};

struct fl_fanout {
	struct fl_fanout_config cfg;  /* copy, defaults filled; host points at host below */
	char *host;
	struct sockaddr_storage addr; /* resolved once in fl_fanout_new */
	socklen_t addr_len;
	SSL_CTX *ssl_ctx;             /* shared by all channels (read-only after setup) */
	uint8_t *plan;                /* method of each call, unshuffled */
	unsigned ncalls;
	unsigned nchannels, nzstd;
	uint32_t body_max;            /* cap on request and response body sizes (bytes) */
	uint64_t tick_us, ping_ns, connect_timeout_ns;
	struct fo_thread *threads;
	unsigned nthreads;
	_Atomic unsigned rr;          /* round-robin over threads */
	pthread_mutex_t cipher_mu;
	char cipher[96];              /* from the first established channel */
};

enum fo_outcome { FO_OK, FO_ERROR, FO_TIMEOUT };

static void fo_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
		memory_order_relaxed);
}

static void fo_up_add(struct fo_thread *t, int d)
{
	unsigned v = atomic_load_explicit(&t->st.channels_up, memory_order_relaxed);
	atomic_store_explicit(&t->st.channels_up, v + (unsigned)d, memory_order_relaxed);
}

static struct timeval fo_tv_us(uint64_t us)
{
	struct timeval tv = { (time_t)(us / 1000000u), (suseconds_t)(us % 1000000u) };
	return tv;
}

static void fo_set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "fanout: %s", msg);
}

/* ---- requests and calls (FANOUT thread) ---- */

static void fo_req_pump(struct fo_thread *t, struct fo_req *req);

/* Record how one call ended and let the request issue its next call. */
static void fo_call_finish(struct fo_thread *t, struct fo_req *req, enum fo_outcome o,
	bool was_inflight)
{
	if (o == FO_OK) {
		req->res.ok++;
		fo_add(&t->st.ok, 1);
	} else {
		req->res.errors++;
		fo_add(&t->st.errors, 1);
		if (o == FO_TIMEOUT) {
			req->res.timeouts++;
			fo_add(&t->st.timeouts, 1);
		}
	}
	if (was_inflight)
		req->inflight--;
	req->finished++;
	fo_req_pump(t, req);
}

static struct fo_chan *fo_chan_pick(struct fo_thread *t);
static int fo_chan_send_call(struct fo_chan *ch, uint64_t id, const struct fo_call *c);

/* Free scratch grown past cfg.scratch_keep_bytes by one large call, and publish what
 * stays. After every send and every reply. */
static void fo_trim(struct fo_thread *t)
{
	size_t keep = t->f->cfg.scratch_keep_bytes ? t->f->cfg.scratch_keep_bytes : SIZE_MAX;
	size_t n = fl_bytes_trim(&t->body, keep) + fl_bytes_trim(&t->packed, keep) +
		fl_bytes_trim(&t->zbuf, keep) + fl_bytes_trim(&t->dbuf, keep);

	atomic_store_explicit(&t->scratch_bytes, n + fl_zcodec_bytes(t->z),
		memory_order_relaxed);
}

/* Send call c on the least-loaded up channel and arm its deadline. -1: no channel is up
 * or the frame could not be built (the caller counts an error). */
static int fo_call_send(struct fo_thread *t, struct fo_req *req, struct fo_call *c)
{
	struct fo_chan *ch = fo_chan_pick(t);
	if (!ch)
		return -1;
	struct fl_fslot *s = fl_fslot_get(&t->slots);
	if (!s)
		return -1;
	int rc = fo_chan_send_call(ch, s->id, c);
	fo_trim(t);
	if (rc != 0) {
		fl_fslot_put(&t->slots, s);
		return -1;
	}
	s->req = req;
	s->call = c;
	fl_fslot_link(&ch->calls, s);
	uint32_t lat = c->latency_us < FO_LATENCY_CAP_US ? c->latency_us : FO_LATENCY_CAP_US;
	struct timeval tv = fo_tv_us(lat + (uint64_t)t->f->cfg.timeout_ms * 1000u);
	event_add(s->deadline, &tv);
	req->res.req_bytes += c->req_bytes;
	fo_add(&t->st.req_bytes, c->req_bytes);
	return 0;
}

/* Issue calls while the window allows, then complete the request when all are done.
 * With no channel up every remaining call fails at once, so a request always ends. The
 * request may be freed on return. */
static void fo_req_pump(struct fo_thread *t, struct fo_req *req)
{
	unsigned window = t->f->cfg.window;
	while (req->issued < req->n && req->inflight < window) {
		struct fo_call *c = &req->calls[req->issued++];
		fo_add(&t->st.calls, 1);
		fo_add(&t->st.per_method[c->method], 1);
		if (fo_call_send(t, req, c) == 0) {
			req->inflight++;
			continue;
		}
		req->res.errors++;
		fo_add(&t->st.errors, 1);
		req->finished++;
	}
	if (req->finished < req->n)
		return;
	req->res.calls = req->n;
	req->res.wall_ns = fl_mono_ns() - req->start_ns;
	req->done(req->arg, &req->res);
	free(req);
}

/* Build the request's call list: the fixed plan (per-method per-session counts) in an
 * order shuffled by the request's stream, then each call's request size, response size and
 * latency drawn from its method's percentile tables with the same stream, so a request_seed
 * always gives the same calls. Counts and tables come from runtime/data/rpc_dist.json
 * (DCPerf FeedSim v2), loaded by sampler.c. */
static void fo_req_expand(const struct fl_fanout *f, struct fo_req *req)
{
	struct fl_rng r;
	fl_rng_seed(&r, req->seed);
	for (unsigned i = 0; i < req->n; i++)
		req->calls[i].method = f->plan[i];
	for (unsigned i = req->n; i > 1; i--) {
		unsigned j = (unsigned)fl_rng_below(&r, i);
		uint32_t m = req->calls[i - 1].method;
		req->calls[i - 1].method = req->calls[j].method;
		req->calls[j].method = m;
	}
	for (unsigned i = 0; i < req->n; i++) {
		struct fo_call *c = &req->calls[i];
		const struct fl_rpc_method *m = &f->cfg.dist->out[c->method];
		double rq = fl_pct_sample(&m->req_bytes, fl_rng_unit(&r));
		double rs = fl_pct_sample(&m->resp_bytes, fl_rng_unit(&r));
		double lat = fl_pct_sample(&m->latency_us, fl_rng_unit(&r));
		rq = rq < 4 ? 4 : (rq > f->body_max ? f->body_max : rq);
		rs = rs < 0 ? 0 : (rs > f->body_max ? f->body_max : rs);
		lat = lat < 0 ? 0 : (lat > UINT32_MAX ? UINT32_MAX : lat);
		c->req_bytes = (uint32_t)llround(rq);
		c->resp_bytes = (uint32_t)llround(rs);
		c->latency_us = (uint32_t)llround(lat);
		c->filler_off = fl_rng_next(&r);
	}
}

/* ---- in-flight slots (FANOUT thread) ---- */

static void fo_slot_deadline_cb(evutil_socket_t fd, short what, void *arg);

/* The pool's init hook: a new slot belongs to thread arg and gets its deadline event. */
static int fo_slot_init(struct fl_fslot *s, void *arg)
{
	struct fo_thread *t = arg;
	s->owner = t;
	s->deadline = event_new(t->base, -1, 0, fo_slot_deadline_cb, s);
	return s->deadline ? 0 : -1;
}

static void fo_slot_fini(struct fl_fslot *s, void *arg)
{
	(void)arg;
	event_free(s->deadline);
}

/* Take s off its channel and disarm its deadline; the slot is free on return. */
static void fo_slot_detach(struct fo_thread *t, struct fl_fslot *s)
{
	event_del(s->deadline);
	fl_fslot_detach(&t->slots, s);
}

static void fo_slot_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fl_fslot *s = arg;
	struct fo_thread *t = s->owner;
	struct fo_req *req = s->req;
	fo_slot_detach(t, s);
	fo_call_finish(t, req, FO_TIMEOUT, true);
}

/* ---- channels (FANOUT thread) ---- */

static void fo_chan_connect(struct fo_chan *ch);

/* Least-loaded up channel, ties rotating; NULL when none is up or the thread stops. */
static struct fo_chan *fo_chan_pick(struct fo_thread *t)
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
static int fo_chan_send_call(struct fo_chan *ch, uint64_t id, const struct fo_call *c)
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
static void fo_chan_fail(struct fo_chan *ch)
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
static void fo_chan_connect(struct fo_chan *ch)
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

static void fo_chan_retry_cb(evutil_socket_t fd, short what, void *arg)
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
static void fo_chan_tick_cb(evutil_socket_t fd, short what, void *arg)
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

/* ---- threads ---- */

/* Shut the thread's channels: every in-flight call fails, and its request, with no
 * channel left, fails its remaining calls and completes. */
static void fo_thread_stop(struct fo_thread *t)
{
	t->stopping = true;
	for (unsigned i = 0; i < t->nchans; i++) {
		struct fo_chan *ch = &t->chans[i];
		event_del(ch->tick);
		event_del(ch->retry);
		/* A close_notify lets the mock count a clean close rather than an I/O error. */
		SSL *ssl = ch->state == FO_CHAN_UP ? bufferevent_openssl_get_ssl(ch->bev) : NULL;
		if (ssl)
			SSL_shutdown(ssl);
		fo_chan_fail(ch);
	}
}

/* Take the inbox; on shutdown close everything first, so queued requests fail at once. */
static void fo_thread_notify_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fo_thread *t = arg;
	pthread_mutex_lock(&t->mu);
	struct fo_req *req = t->inbox_head;
	t->inbox_head = t->inbox_tail = NULL;
	bool closed = t->closed;
	pthread_mutex_unlock(&t->mu);
	if (closed && !t->stopping)
		fo_thread_stop(t);
	while (req) {
		struct fo_req *next = req->next;
		fo_req_expand(t->f, req);
		fo_req_pump(t, req);
		req = next;
	}
	if (closed)
		event_base_loopbreak(t->base);
}

static void *fo_thread_main(void *arg)
{
	struct fo_thread *t = arg;
	char name[16];
	snprintf(name, sizeof name, "leaf-fanout-%u", t->index);
	pthread_setname_np(pthread_self(), name);
	/* A write to a reset TLS socket raises SIGPIPE; blocked here it stays pending and the
	 * write fails with EPIPE, which the bufferevent reports as an error. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	fl_meter_start(&t->meter);  /* no clock asked: cannot fail (a PMU refusal is noted) */
	for (unsigned i = 0; i < t->nchans; i++)
		fo_chan_connect(&t->chans[i]);
	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	fl_meter_exit(&t->meter);
	return NULL;
}

/* ---- public API ---- */

static int fo_thread_init(struct fl_fanout *f, struct fo_thread *t, unsigned index)
{
	t->f = f;
	t->index = index;
	fl_fslots_init(&t->slots, fo_slot_init, t);
	pthread_mutex_init(&t->mu, NULL);
	fl_meter_init(&t->meter, f->cfg.meter, 0);
	t->base = event_base_new();
	if (!t->base)
		return -1;
	t->notify = event_new(t->base, -1, 0, fo_thread_notify_cb, t);
	t->z = fl_zcodec_new(FO_ZSTD_LEVEL);
	t->nchans = f->cfg.channels_per_thread;
	t->chans = calloc(t->nchans, sizeof *t->chans);
	if (!t->notify || !t->z || !t->chans)
		return -1;
	struct timeval tick = fo_tv_us(f->tick_us);
	for (unsigned c = 0; c < t->nchans; c++) {
		struct fo_chan *ch = &t->chans[c];
		ch->t = t;
		/* Interleaved global index: the zstd share spreads evenly over the threads. */
		ch->zstd = (uint64_t)c * f->nthreads + index < f->nzstd;
		ch->state = FO_CHAN_WAIT;
		ch->backoff_ms = FO_BACKOFF_MIN_MS;
		ch->tick = event_new(t->base, -1, EV_PERSIST, fo_chan_tick_cb, ch);
		ch->retry = event_new(t->base, -1, 0, fo_chan_retry_cb, ch);
		if (!ch->tick || !ch->retry || event_add(ch->tick, &tick) != 0)
			return -1;
	}
	return 0;
}

/* Free everything of a stopped (joined or never started) fanout. */
static void fo_destroy(struct fl_fanout *f)
{
	for (unsigned i = 0; f->threads && i < f->nthreads; i++) {
		struct fo_thread *t = &f->threads[i];
		if (!t->f)
			continue;
		for (unsigned c = 0; t->chans && c < t->nchans; c++) {
			struct fo_chan *ch = &t->chans[c];
			if (ch->bev)
				bufferevent_free(ch->bev);
			if (ch->tick)
				event_free(ch->tick);
			if (ch->retry)
				event_free(ch->retry);
		}
		free(t->chans);
		fl_fslots_free(&t->slots, fo_slot_fini, NULL);
		if (t->notify)
			event_free(t->notify);
		if (t->base)
			event_base_free(t->base);
		fl_zcodec_free(t->z);
		fl_bytes_free(&t->body);
		fl_bytes_free(&t->packed);
		fl_bytes_free(&t->zbuf);
		fl_bytes_free(&t->dbuf);
		fl_meter_close(&t->meter);
		pthread_mutex_destroy(&t->mu);
	}
	free(f->threads);
	if (f->ssl_ctx)
		SSL_CTX_free(f->ssl_ctx);
	pthread_mutex_destroy(&f->cipher_mu);
	free(f->plan);
	free(f->host);
	free(f);
}

static int fo_resolve(struct fl_fanout *f, char *err, size_t errlen)
{
	char why[256], msg[320];
	if (fl_net_resolve(f->host, f->cfg.port, 0, &f->addr, &f->addr_len, why, sizeof why)) {
		snprintf(msg, sizeof msg, "resolve %s: %s", f->host, why);
		fo_set_err(err, errlen, msg);
		return -1;
	}
	return 0;
}

/* Stop the threads already started (only fl_fanout_new's failure path and free). */
static void fo_stop_threads(struct fl_fanout *f)
{
	for (unsigned i = 0; i < f->nthreads; i++) {
		struct fo_thread *t = &f->threads[i];
		if (!t->f)
			continue;
		pthread_mutex_lock(&t->mu);
		t->closed = true;
		if (t->started)
			event_active(t->notify, EV_READ, 0);
		pthread_mutex_unlock(&t->mu);
	}
	for (unsigned i = 0; i < f->nthreads; i++)
		if (f->threads[i].started)
			pthread_join(f->threads[i].tid, NULL);
}

struct fl_fanout *fl_fanout_new(const struct fl_fanout_config *cfg, char *err, size_t errlen)
{
	if (!cfg || !cfg->host || !cfg->tls_dir || !cfg->dist || cfg->port == 0) {
		fo_set_err(err, errlen, "host, port, tls_dir and dist are required");
		return NULL;
	}
	if (cfg->threads < 1 || cfg->threads > FO_MAX_THREADS || cfg->channels_per_thread < 1 ||
		(uint64_t)cfg->threads * cfg->channels_per_thread > FO_MAX_CHANNELS) {
		fo_set_err(err, errlen, "threads and channels_per_thread must be >= 1 (65536 "
			"channels at most)");
		return NULL;
	}
	if (!(cfg->scale > 0) || !isfinite(cfg->scale) || !(cfg->zstd_fraction >= 0) ||
		!(cfg->zstd_fraction <= 1)) {
		fo_set_err(err, errlen, "scale must be > 0 and zstd_fraction in [0, 1]");
		return NULL;
	}
	if (cfg->max_reply_bytes && cfg->max_reply_bytes < FO_MIN_REPLY_BYTES) {
		fo_set_err(err, errlen, "max_reply_bytes must be >= 64");
		return NULL;
	}
	struct fl_fanout *f = calloc(1, sizeof *f);
	if (!f) {
		fo_set_err(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&f->cipher_mu, NULL);
	f->cfg = *cfg;
	f->host = strdup(cfg->host);
	f->cfg.host = f->host;
	f->cfg.tls_dir = NULL;  /* only used here */
	if (!f->cfg.window)
		f->cfg.window = FO_DEFAULT_WINDOW;
	if (!f->cfg.ping_ms)
		f->cfg.ping_ms = FO_DEFAULT_PING_MS;
	if (!f->cfg.timeout_ms)
		f->cfg.timeout_ms = FO_DEFAULT_TIMEOUT_MS;
	if (!f->cfg.max_reply_bytes)
		f->cfg.max_reply_bytes = FO_DEFAULT_MAX_REPLY;
	f->body_max = f->cfg.max_reply_bytes - FO_PB_SLACK;
	f->ping_ns = (uint64_t)f->cfg.ping_ms * 1000000u;
	f->tick_us = (uint64_t)f->cfg.ping_ms * 1000u / 2;
	if (f->tick_us < 1000)
		f->tick_us = 1000;
	f->connect_timeout_ns = FO_DEAD_PINGS * f->ping_ns;
	if (f->connect_timeout_ns < FO_CONNECT_TIMEOUT_MS * 1000000ull)
		f->connect_timeout_ns = FO_CONNECT_TIMEOUT_MS * 1000000ull;
	f->nthreads = cfg->threads;
	f->nchannels = cfg->threads * cfg->channels_per_thread;
	f->nzstd = (unsigned)lround(cfg->zstd_fraction * f->nchannels);
	if (!f->host || fo_resolve(f, err, errlen) != 0)
		goto fail;

	/* The fixed call list: per-method per-session counts of runtime/data/rpc_dist.json
	 * (DCPerf FeedSim v2) at this scale, each method repeated that many times. */
	uint64_t total = 0;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++)
		total += fl_rpc_calls(cfg->dist, i, cfg->scale);
	if (total > FO_MAX_CALLS) {
		fo_set_err(err, errlen, "scale gives more than 2^20 calls per request");
		goto fail;
	}
	f->ncalls = (unsigned)total;
	f->plan = malloc(total ? total : 1);
	if (!f->plan) {
		fo_set_err(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0, k = 0; i < FL_RPC_OUTBOUND; i++)
		for (unsigned n = fl_rpc_calls(cfg->dist, i, cfg->scale); n; n--)
			f->plan[k++] = (uint8_t)i;

	/* Idempotent (libevent accepts the same callbacks again); needed before any base is
	 * made so fl_fanout_start can activate a FANOUT thread's notify event. */
	if (evthread_use_pthreads() != 0) {
		fo_set_err(err, errlen, "evthread_use_pthreads failed");
		goto fail;
	}
	f->ssl_ctx = fl_tls_client_ctx(cfg->tls_dir, err, errlen);
	if (!f->ssl_ctx)
		goto fail;
	f->threads = calloc(f->nthreads, sizeof *f->threads);
	if (!f->threads) {
		fo_set_err(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < f->nthreads; i++) {
		if (fo_thread_init(f, &f->threads[i], i) != 0) {
			fo_set_err(err, errlen, "cannot create a FANOUT thread's event loop");
			goto fail;
		}
	}
	for (unsigned i = 0; i < f->nthreads; i++) {
		struct fo_thread *t = &f->threads[i];
		if (pthread_create(&t->tid, NULL, fo_thread_main, t) != 0) {
			fo_set_err(err, errlen, "pthread_create failed");
			goto fail;
		}
		t->started = true;
	}
	for (unsigned i = 0; i < f->nthreads; i++)
		fl_meter_wait(&f->threads[i].meter, err, errlen);  /* 0: no clock asked */
	return f;
fail:
	if (f->threads)
		fo_stop_threads(f);
	fo_destroy(f);
	return NULL;
}

void fl_fanout_free(struct fl_fanout *f)
{
	if (!f)
		return;
	fo_stop_threads(f);
	fo_destroy(f);
}

unsigned fl_fanout_calls_per_request(const struct fl_fanout *f)
{
	return f->ncalls;
}

int fl_fanout_start(struct fl_fanout *f, uint64_t request_seed, fl_fanout_done_fn done,
	void *arg)
{
	if (!done)
		return -1;
	struct fo_req *req = malloc(sizeof *req + (size_t)f->ncalls * sizeof req->calls[0]);
	if (!req)
		return -1;
	memset(req, 0, sizeof *req);
	req->seed = request_seed;
	req->done = done;
	req->arg = arg;
	req->n = f->ncalls;
	req->start_ns = fl_mono_ns();
	unsigned i = atomic_fetch_add_explicit(&f->rr, 1, memory_order_relaxed) % f->nthreads;
	struct fo_thread *t = &f->threads[i];
	pthread_mutex_lock(&t->mu);
	if (t->closed) {
		pthread_mutex_unlock(&t->mu);
		free(req);
		return -1;
	}
	/* One wakeup per batch: a non-empty inbox already has its notify pending. */
	bool wake = !t->inbox_head;
	if (t->inbox_tail)
		t->inbox_tail->next = req;
	else
		t->inbox_head = req;
	t->inbox_tail = req;
	if (wake)
		event_active(t->notify, EV_READ, 0);
	pthread_mutex_unlock(&t->mu);
	return 0;
}

void fl_fanout_stats(struct fl_fanout *f, struct fl_fanout_stats *s)
{
	memset(s, 0, sizeof *s);
	for (unsigned i = 0; i < f->nthreads; i++) {
		struct fo_counters *c = &f->threads[i].st;
#define FO_SUM(name) s->name += atomic_load_explicit(&c->name, memory_order_relaxed);
		FO_COUNTERS(FO_SUM)
#undef FO_SUM
		for (size_t m = 0; m < FL_RPC_OUTBOUND; m++)
			s->calls_per_method[m] += atomic_load_explicit(&c->per_method[m],
				memory_order_relaxed);
		s->channels_up += atomic_load_explicit(&c->channels_up, memory_order_relaxed);
	}
	s->channels = f->nchannels;
	s->channels_zstd = f->nzstd;
	pthread_mutex_lock(&f->cipher_mu);
	memcpy(s->cipher, f->cipher, sizeof s->cipher);
	pthread_mutex_unlock(&f->cipher_mu);
}

size_t fl_fanout_scratch_bytes(struct fl_fanout *f)
{
	size_t n = 0;

	for (unsigned i = 0; i < f->nthreads; i++)
		n += atomic_load_explicit(&f->threads[i].scratch_bytes, memory_order_relaxed);
	return n;
}

void fl_fanout_meters(struct fl_fanout *f, struct fl_meter_sum *s)
{
	for (unsigned i = 0; i < f->nthreads; i++)
		fl_meter_sum_add(s, &f->threads[i].meter);
}
