/* leaf_client.c: pipelined test client for frontload-leaf and frontload-mock (tests/leaf-client).
 * LeafRequests come from reqgen.c, the driver's builder; RpcRequests and the --garbage
 * inputs are made here (reqgen builds neither). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "corpus.h"
#include "frontload.pb-c.h"
#include "osfile.h"
#include "paths.h"
#include "reqgen.h"
#include "rng.h"
#include "sampler.h"
#include "tls.h"
#include "wire.h"
#include "zcodec.h"

#define LC_MAX_STORIES 4096
#define LC_NSTATUS (FL_STATUS_MAX + 1)
#define LC_SESSION_STORIES 64  /* stories a leaf session remembers (FL_SESSION_STORIES) */
#define LC_SESSIONS 64         /* distinct session ids of a request stream */

/* Status keys in the summary, the same words as the leaf's "requests" stats. */
static const char *const lc_status_key[LC_NSTATUS] = {
	"ok", "overloaded", "bad_request", "denied", "stale", "internal", "deadline_exceeded",
};

struct lc_opts {
	const char *host;            /* server address */
	unsigned port;               /* server port (or from port_file) */
	const char *port_file;       /* file holding the port, written by the server */
	int tls;                     /* talk TLS */
	const char *tls_dir;         /* certificate dir trusted (tls.h); NULL = default */
	uint64_t requests;           /* requests to send in all */
	unsigned depth;              /* requests in flight per connection */
	unsigned connections;        /* connections */
	uint64_t seed;               /* seed of the request stream */
	unsigned stories;            /* stories per LeafRequest */
	size_t story_bytes;          /* body bytes per story */
	int size_sampled;            /* request size from feed_aggregator_req_sizes */
	size_t request_bytes;        /* fixed request size when !size_sampled (bytes) */
	size_t max_request_bytes;    /* cap on a sampled request size (bytes) */
	uint32_t reply_bytes;        /* reply size asked for; 0 = the server samples */
	int zstd;                    /* want_zstd in every request */
	int zstd_frames;             /* compress request frames (FL_FRAME_ZSTD) */
	int method_mix;              /* inbound method weighted by rpc_dist.json */
	unsigned method;             /* fixed method otherwise */
	int rpc;                     /* speak RpcRequest (to the mock), not LeafRequest */
	double timeout_s;            /* whole-run deadline (s) */
	const char *json;            /* summary JSON path */
	const char *garbage;         /* fault mode, NULL for a normal run */
	size_t corpus_mb;            /* generated corpus size (MiB) */
	uint64_t corpus_seed;        /* generated corpus seed */
	const char *corpus_dir;      /* corpus from files instead */
	uint32_t max_frame_bytes;    /* largest reply payload accepted (bytes) */
	int quiet;                   /* no summary on stdout */
};

/* Per-request bookkeeping, indexed by request id - 1. */
struct lc_slot {
	uint64_t sent_ns;       /* monotonic stamp when the frame was queued */
	uint64_t client_ts_ns;  /* realtime stamp in the request header, echoed in replies */
	uint32_t reply_bytes;   /* reply size asked for (RPC: the body size asked for) */
	uint32_t method;        /* method sent */
	uint8_t want_zstd;      /* reply compression asked for */
	uint8_t state;          /* 0 unsent, 1 in flight, 2 answered */
	uint64_t session_id;    /* LeafRequest: session sent */
	uint64_t *story_ids;    /* LeafRequest: the stories' ids, while in flight */
};

/* min / max / sum of a per-reply quantity. */
struct lc_range {
	uint64_t n, min, max, sum;
};

struct lc_errors {
	uint64_t connect;      /* connection could not be made (or TLS failed) */
	uint64_t closed;       /* connection closed with requests in flight */
	uint64_t frame;        /* reply frame with a bad header */
	uint64_t unknown_id;   /* reply for no request in flight, or wrong type */
	uint64_t decode;       /* OK reply whose payload did not decode */
	uint64_t reply_size;   /* reply size differs from what was asked or stated */
	uint64_t zstd;         /* compressed payload did not decompress */
	uint64_t ranked;       /* ranked ids not from the request, or not best first */
	uint64_t method;       /* RPC reply for another method */
	uint64_t echo;         /* reply header did not echo the request's client_ts_ns */
	uint64_t timeout;      /* requests unanswered at the deadline */
};

struct lc_client;

struct lc_conn {
	struct lc_client *cl;        /* owner */
	struct bufferevent *bev;     /* NULL once closed */
	unsigned inflight;           /* requests sent, not answered */
	int up;                      /* connected (and TLS handshake done) */
};

struct lc_client {
	struct lc_opts o;
	struct event_base *base;
	SSL_CTX *ssl_ctx;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct fl_corpus corpus;
	struct fl_reqgen gen;                 /* LeafRequests: the driver's builder */
	int bad_method;                       /* --method is no InboundMethod (see lc_build_leaf) */
	struct fl_rpc_dist dist;              /* rpc_dist.json */
	unsigned in_enum[FL_RPC_INBOUND];     /* InboundMethod of dist.in[i] */
	struct fl_zcodec *z;
	struct fl_bytes pack, comp, scratch;  /* request build buffers */
	struct lc_conn *conns;
	struct lc_slot *slots;
	uint64_t *lat_ns;                     /* latency per answered request */
	uint64_t next;                        /* next request index to send */
	uint64_t sent, replied, live_conns;
	uint64_t status[LC_NSTATUS + 1];      /* last: unknown statuses */
	struct lc_range req_bytes, wire_bytes, reply_raw, ranked, fanout_calls, fanout_errors,
		extract_calls;
	uint64_t sent_by_method[256];         /* requests sent per method (index & 255) */
	uint64_t server_ns_max;               /* largest server_ns of an OK reply */
	uint64_t zstd_replies;
	uint64_t zstd_expected;               /* OK replies that asked for zstd, but for
	                                         getStoriesUncompressed (never compressed) */
	uint64_t stream_hash;                 /* sum of FNV-1a of every request payload */
	struct lc_errors err;
	char cipher[128];
	char first_error[256];
	int timed_out;
	uint64_t start_ns, end_ns;
};

static void lc_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void lc_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("leaf-client: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* Remember the first error of a run for the final message. */
static void lc_note(struct lc_client *cl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void lc_note(struct lc_client *cl, const char *fmt, ...)
{
	if (cl->first_error[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cl->first_error, sizeof cl->first_error, fmt, ap);
	va_end(ap);
}

static void lc_range_add(struct lc_range *r, uint64_t v)
{
	if (r->n == 0 || v < r->min)
		r->min = v;
	if (v > r->max)
		r->max = v;
	r->sum += v;
	r->n++;
}

static uint64_t lc_fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void lc_reserve(struct fl_bytes *b, size_t need)
{
	if (fl_bytes_reserve(b, need) < 0)
		lc_die("out of memory (%zu bytes)", need);
}

/* ---- the request stream ---- */

/* RpcRequest size: sampled from the method's table (capped) or fixed. */
static size_t lc_target_size(struct lc_client *cl, struct fl_rng *r, const struct fl_pct *t)
{
	if (!cl->o.size_sampled)
		return cl->o.request_bytes;
	double v = fl_pct_sample(t, fl_rng_unit(r));
	if (v > (double)cl->o.max_request_bytes)
		v = (double)cl->o.max_request_bytes;
	return v < 0 ? 0 : (size_t)v;
}

/* Build LeafRequest i into cl->pack with reqgen (the driver's builder) and fill its slot
 * from the request as packed: the reply check needs its session and story ids. The one
 * request made by hand: a --method that is no InboundMethod (bad_frames.sh sends 9 to see
 * it refused) is deliberately bad and reqgen will not build it, so it is reqgen's request
 * for method 0 (lc_setup_reqgen) repacked with that method. */
static void lc_build_leaf(struct lc_client *cl, uint64_t i)
{
	if (fl_reqgen_build(&cl->gen, i, &cl->pack) != 0)
		lc_die("out of memory building request %" PRIu64, i + 1);
	Frontload__LeafRequest *q = frontload__leaf_request__unpack(NULL, cl->pack.len,
		cl->pack.data);
	if (!q)
		lc_die("request %" PRIu64 " from reqgen does not decode", i + 1);
	if (cl->bad_method) {
		q->method = (Frontload__InboundMethod)cl->o.method;
		lc_reserve(&cl->pack, frontload__leaf_request__get_packed_size(q));
		cl->pack.len = frontload__leaf_request__pack(q, cl->pack.data);
	}
	struct lc_slot *sl = &cl->slots[i];
	sl->method = (uint32_t)q->method;
	sl->reply_bytes = q->reply_bytes;
	sl->want_zstd = q->want_zstd;
	sl->session_id = q->session_id;
	if (q->n_stories) {
		sl->story_ids = malloc(q->n_stories * sizeof *sl->story_ids);
		if (!sl->story_ids)
			lc_die("out of memory");
		for (size_t s = 0; s < q->n_stories; s++)
			sl->story_ids[s] = q->stories[s]->id;
	}
	frontload__leaf_request__free_unpacked(q, NULL);
}

/* Build RpcRequest i (to the mock) into cl->pack: body[0..3] the reply size asked for.
 * Built here because reqgen builds LeafRequests only; the body has the shape the leaf's
 * fanout sends (fanout.c, fo_chan_send_call). */
static void lc_build_rpc(struct lc_client *cl, uint64_t i)
{
	struct fl_rng r;
	fl_rng_seed(&r, fl_rng_derive(cl->o.seed, i));
	uint32_t m = cl->o.method_mix ? (uint32_t)fl_rng_below(&r, FL_RPC_OUTBOUND) :
		cl->o.method;
	const struct fl_rpc_method *rm = &cl->dist.out[m % FL_RPC_OUTBOUND];
	size_t body_len = lc_target_size(cl, &r, &rm->req_bytes);
	if (body_len < 4)
		body_len = 4;
	uint32_t want = cl->o.reply_bytes;
	if (want == 0) {
		double v = fl_pct_sample(&rm->resp_bytes, fl_rng_unit(&r));
		want = v > 65536 ? 65536 : (uint32_t)v;
	}
	lc_reserve(&cl->scratch, body_len);
	uint8_t *b = cl->scratch.data;
	b[0] = (uint8_t)(want >> 24);
	b[1] = (uint8_t)(want >> 16);
	b[2] = (uint8_t)(want >> 8);
	b[3] = (uint8_t)want;
	fl_corpus_copy(&cl->corpus, fl_rng_next(&r), b + 4, body_len - 4);
	Frontload__RpcRequest q = FRONTLOAD__RPC_REQUEST__INIT;
	q.method = m;
	q.latency_us = 0;
	q.body.data = b;
	q.body.len = body_len;
	lc_reserve(&cl->pack, frontload__rpc_request__get_packed_size(&q));
	cl->pack.len = frontload__rpc_request__pack(&q, cl->pack.data);
	cl->slots[i].method = m;
	cl->slots[i].reply_bytes = want;
}

/* Queue request i on conn c: build, compress when asked, frame. */
static void lc_send(struct lc_conn *c, uint64_t i)
{
	struct lc_client *cl = c->cl;
	if (cl->o.rpc)
		lc_build_rpc(cl, i);
	else
		lc_build_leaf(cl, i);
	cl->stream_hash += lc_fnv1a(cl->pack.data, cl->pack.len);
	lc_range_add(&cl->req_bytes, cl->pack.len);
	const struct fl_bytes *out = &cl->pack;
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REQUEST, i + 1, fl_wall_ns());
	cl->slots[i].client_ts_ns = h.client_ts_ns;
	cl->sent_by_method[cl->slots[i].method & 255]++;
	if (cl->o.zstd_frames) {
		if (fl_zcodec_compress(cl->z, cl->pack.data, cl->pack.len, &cl->comp) < 0)
			lc_die("zstd compression of request %" PRIu64 " failed", i + 1);
		out = &cl->comp;
		h.flags = FL_FRAME_ZSTD;
	}
	lc_range_add(&cl->wire_bytes, out->len + FL_WIRE_HDR_BYTES);
	if (fl_wire_push(bufferevent_get_output(c->bev), &h, out->data, out->len) < 0)
		lc_die("out of memory queueing request %" PRIu64, i + 1);
	cl->slots[i].sent_ns = fl_mono_ns();
	cl->slots[i].state = 1;
	c->inflight++;
	cl->sent++;
}

static void lc_fill(struct lc_conn *c)
{
	struct lc_client *cl = c->cl;
	while (c->bev && c->up && c->inflight < cl->o.depth && cl->next < cl->o.requests)
		lc_send(c, cl->next++);
}

/* ---- replies ---- */

static void lc_check_leaf_reply(struct lc_client *cl, uint64_t i, const uint8_t *p, size_t n)
{
	Frontload__LeafReply *rep = frontload__leaf_reply__unpack(NULL, n, p);
	if (!rep) {
		cl->err.decode++;
		lc_note(cl, "request %" PRIu64 ": OK reply does not decode as LeafReply", i + 1);
		return;
	}
	const struct lc_slot *sl = &cl->slots[i];
	lc_range_add(&cl->reply_raw, rep->payload_raw_bytes);
	lc_range_add(&cl->ranked, rep->n_ranked);
	lc_range_add(&cl->fanout_calls, rep->fanout_calls);
	lc_range_add(&cl->fanout_errors, rep->fanout_errors);
	lc_range_add(&cl->extract_calls, rep->extract_calls);
	if (sl->want_zstd && sl->method != FRONTLOAD__INBOUND_METHOD__GET_STORIES_UNCOMPRESSED)
		cl->zstd_expected++;
	if (rep->payload_zstd) {
		cl->zstd_replies++;
		if (fl_zcodec_decompress(cl->z, rep->payload.data, rep->payload.len,
			rep->payload_raw_bytes, &cl->comp) < 0 ||
			cl->comp.len != rep->payload_raw_bytes) {
			cl->err.zstd++;
			lc_note(cl, "request %" PRIu64 ": zstd payload does not decompress to %u "
				"bytes", i + 1, rep->payload_raw_bytes);
		}
	} else if (rep->payload.len != rep->payload_raw_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": payload %zu bytes, payload_raw_bytes %u", i + 1,
			rep->payload.len, rep->payload_raw_bytes);
	}
	if (sl->reply_bytes && rep->payload_raw_bytes != sl->reply_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": asked for %u reply bytes, got %u", i + 1,
			sl->reply_bytes, rep->payload_raw_bytes);
	}
	/* Ranked stories: best first, from the request's stories; getAllStories also
	 * returns stories its session remembers from earlier requests (at most
	 * LC_SESSION_STORIES of them), so only its count and order are checked. */
	int all = sl->method == FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES;
	int bad = rep->n_ranked > cl->o.stories + (all ? LC_SESSION_STORIES : 0) ||
		rep->session_id != sl->session_id;
	for (size_t k = 0; k < rep->n_ranked && !bad; k++) {
		const Frontload__RankedStory *rs = rep->ranked[k];
		int found = all;
		for (unsigned s = 0; s < cl->o.stories && !found; s++)
			found = sl->story_ids[s] == rs->id;
		if (!found || isnan(rs->score) || (k > 0 && rs->score > rep->ranked[k - 1]->score))
			bad = 1;
	}
	if (bad) {
		cl->err.ranked++;
		lc_note(cl, "request %" PRIu64 ": ranked list (%zu stories, session %" PRIu64
			") is not a best-first subset of the request's", i + 1, rep->n_ranked,
			rep->session_id);
	}
	frontload__leaf_reply__free_unpacked(rep, NULL);
}

static void lc_check_rpc_reply(struct lc_client *cl, uint64_t i, const uint8_t *p, size_t n)
{
	Frontload__RpcReply *rep = frontload__rpc_reply__unpack(NULL, n, p);
	if (!rep) {
		cl->err.decode++;
		lc_note(cl, "request %" PRIu64 ": OK reply does not decode as RpcReply", i + 1);
		return;
	}
	const struct lc_slot *sl = &cl->slots[i];
	lc_range_add(&cl->reply_raw, rep->body.len);
	if (rep->method != sl->method) {
		cl->err.method++;
		lc_note(cl, "request %" PRIu64 ": sent method %u, reply for %u", i + 1, sl->method,
			rep->method);
	}
	if (cl->o.reply_bytes && rep->body.len != sl->reply_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": asked for %u reply bytes, got %zu", i + 1,
			sl->reply_bytes, rep->body.len);
	}
	frontload__rpc_reply__free_unpacked(rep, NULL);
}

static void lc_finish_check(struct lc_client *cl)
{
	if (cl->replied == cl->o.requests || cl->live_conns == 0)
		event_base_loopbreak(cl->base);
}

static void lc_conn_close(struct lc_conn *c)
{
	if (!c->bev)
		return;
	bufferevent_free(c->bev);
	c->bev = NULL;
	c->up = 0;
	c->cl->live_conns--;
	lc_finish_check(c->cl);
}

static void lc_on_frame(struct lc_conn *c, const struct fl_frame_hdr *h, uint8_t *payload)
{
	struct lc_client *cl = c->cl;
	uint64_t id = h->request_id;
	if (h->type != FL_MSG_REPLY || id == 0 || id > cl->o.requests ||
		cl->slots[id - 1].state != 1) {
		cl->err.unknown_id++;
		lc_note(cl, "unexpected frame type %u for request id %" PRIu64, h->type, id);
		return;
	}
	uint64_t i = id - 1;
	struct lc_slot *sl = &cl->slots[i];
	cl->lat_ns[cl->replied] = fl_mono_ns() - sl->sent_ns;
	sl->state = 2;
	c->inflight--;
	cl->replied++;
	cl->status[h->status < LC_NSTATUS ? h->status : LC_NSTATUS]++;
	if (h->client_ts_ns != sl->client_ts_ns) {
		cl->err.echo++;
		lc_note(cl, "request %" PRIu64 ": reply echoes client_ts_ns %" PRIu64 ", sent %"
			PRIu64, id, h->client_ts_ns, sl->client_ts_ns);
	}
	if (h->status == FL_STATUS_OK) {
		if (h->server_ns > cl->server_ns_max)
			cl->server_ns_max = h->server_ns;
		const uint8_t *p = payload;
		size_t n = h->payload_len;
		if (h->flags & FL_FRAME_ZSTD) {
			if (fl_zcodec_decompress(cl->z, payload, n, cl->o.max_frame_bytes,
				&cl->scratch) < 0) {
				cl->err.zstd++;
				lc_note(cl, "request %" PRIu64 ": zstd reply frame is corrupt", id);
				return;  /* its story ids go in lc_free */
			}
			p = cl->scratch.data;
			n = cl->scratch.len;
		}
		if (cl->o.rpc)
			lc_check_rpc_reply(cl, i, p, n);
		else
			lc_check_leaf_reply(cl, i, p, n);
	}
	free(sl->story_ids);
	sl->story_ids = NULL;
}

static void lc_read_cb(struct bufferevent *bev, void *arg)
{
	struct lc_conn *c = arg;
	struct lc_client *cl = c->cl;
	for (;;) {
		struct fl_frame_hdr h;
		uint8_t *payload = NULL;
		int rc = fl_wire_pull(bufferevent_get_input(bev), cl->o.max_frame_bytes, &h,
			&payload);
		if (rc == FL_WIRE_NEED_MORE)
			break;
		if (rc < 0) {
			cl->err.frame++;
			lc_note(cl, "bad reply frame: %s", fl_wire_strerror(rc));
			lc_conn_close(c);
			return;
		}
		lc_on_frame(c, &h, payload);
		free(payload);
	}
	lc_fill(c);
	if (cl->replied == cl->o.requests)
		event_base_loopbreak(cl->base);
}

static void lc_ssl_errors(struct lc_client *cl, struct bufferevent *bev)
{
	unsigned long e;
	while ((e = bufferevent_get_openssl_error(bev)) != 0) {
		char buf[256];
		ERR_error_string_n(e, buf, sizeof buf);
		lc_note(cl, "TLS: %s", buf);
	}
}

static void lc_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct lc_conn *c = arg;
	struct lc_client *cl = c->cl;
	if (what & BEV_EVENT_CONNECTED) {
		c->up = 1;
		int one = 1;
		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		if (ssl && !cl->cipher[0])
			fl_tls_describe(ssl, cl->cipher, sizeof cl->cipher);
		lc_fill(c);
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (!c->up) {
			cl->err.connect++;
			if (cl->o.tls)
				lc_ssl_errors(cl, bev);
			lc_note(cl, "connect to %s:%u failed: %s", cl->o.host, cl->o.port,
				evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		} else if (c->inflight) {
			cl->err.closed++;
			if (cl->o.tls)
				lc_ssl_errors(cl, bev);
			lc_note(cl, "server closed a connection with %u requests in flight (%s)",
				c->inflight, what & BEV_EVENT_EOF ? "EOF" :
				evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		}
		lc_conn_close(c);
	}
}

static void lc_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct lc_client *cl = arg;
	cl->timed_out = 1;
	lc_note(cl, "deadline of %g s reached: %" PRIu64 " sent, %" PRIu64 " replied",
		cl->o.timeout_s, cl->sent, cl->replied);
	event_base_loopbreak(cl->base);
}

/* A new bufferevent connecting to the server (TLS when asked). */
static struct bufferevent *lc_connect(struct lc_client *cl)
{
	struct bufferevent *bev;
	if (cl->o.tls) {
		SSL *ssl = SSL_new(cl->ssl_ctx);
		if (!ssl)
			lc_die("SSL_new failed");
		bev = bufferevent_openssl_socket_new(cl->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
			BEV_OPT_CLOSE_ON_FREE);
	} else {
		bev = bufferevent_socket_new(cl->base, -1, BEV_OPT_CLOSE_ON_FREE);
	}
	if (!bev)
		lc_die("cannot create a bufferevent");
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&cl->addr, (int)cl->addr_len) < 0) {
		bufferevent_free(bev);
		return NULL;
	}
	return bev;
}

/* ---- setup ---- */

static void lc_resolve(struct lc_client *cl)
{
	if (cl->o.port_file) {
		FILE *f = fopen(cl->o.port_file, "r");
		if (!f)
			lc_die("cannot open port file %s: %s", cl->o.port_file, strerror(errno));
		char buf[256] = "";
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *p = strrchr(buf, ':');
		p = p ? p + 1 : buf;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > 65535)
			lc_die("port file %s holds no port: '%s'", cl->o.port_file, buf);
		cl->o.port = (unsigned)v;
	}
	if (cl->o.port == 0 || cl->o.port > 65535)
		lc_die("need --port or --port-file");
	char ps[16];
	snprintf(ps, sizeof ps, "%u", cl->o.port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int rc = getaddrinfo(cl->o.host, ps, &hints, &res);
	if (rc != 0)
		lc_die("cannot resolve %s: %s", cl->o.host, gai_strerror(rc));
	memcpy(&cl->addr, res->ai_addr, res->ai_addrlen);
	cl->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
}

static void lc_load_tables(struct lc_client *cl)
{
	char path[4096], err[512];
	if (fl_data_path("rpc_dist.json", path, sizeof path, err, sizeof err) ||
		fl_rpc_dist_load(path, &cl->dist, err, sizeof err))
		lc_die("%s", err);
	/* InboundMethod of each rpc_dist.json inbound name: compare letters only, so
	 * "createAndPrimeSession" meets CREATE_AND_PRIME_SESSION. */
	const ProtobufCEnumDescriptor *ed = &frontload__inbound_method__descriptor;
	for (size_t k = 0; k < FL_RPC_INBOUND; k++) {
		int found = 0;
		for (unsigned e = 0; e < ed->n_values && !found; e++) {
			const char *a = cl->dist.in[k].name, *b = ed->values[e].name;
			for (;;) {
				while (*b == '_')
					b++;
				if (!*a || !*b || tolower((unsigned char)*a) != tolower((unsigned char)*b))
					break;
				a++;
				b++;
			}
			if (!*a && !*b) {
				cl->in_enum[k] = (unsigned)ed->values[e].value;
				found = 1;
			}
		}
		if (!found)
			lc_die("inbound method %s of rpc_dist.json is not in frontload.proto",
				cl->dist.in[k].name);
	}
}

/* LeafRequests come from reqgen with the client's options: same seed, same stream. */
static void lc_setup_reqgen(struct lc_client *cl)
{
	const struct lc_opts *o = &cl->o;
	struct fl_reqgen_config c;
	char err[512];
	fl_reqgen_config_default(&c);
	c.seed = o->seed;
	c.stories = o->stories;
	c.story_bytes = o->story_bytes;
	/* A target of 0 reads as "sampled" to reqgen; 1 builds the same request (no padding
	 * fits either way), and so does a cap of 1 for a cap of 0. */
	c.fixed_bytes = o->size_sampled ? FL_REQGEN_SIZE_SAMPLED :
		o->request_bytes ? o->request_bytes : 1;
	c.max_request_bytes = o->max_request_bytes ? o->max_request_bytes : 1;
	cl->bad_method = !o->method_mix && o->method >= FL_RPC_INBOUND;
	c.method = o->method_mix ? FL_REQGEN_MIX : cl->bad_method ? 0 : (int)o->method;
	c.sessions = LC_SESSIONS;
	c.want_zstd = o->zstd;
	c.reply_bytes = o->reply_bytes;
	if (fl_reqgen_init(&cl->gen, &c, &cl->corpus, err, sizeof err) != 0)
		lc_die("%s", err);
}

static void lc_setup(struct lc_client *cl)
{
	char err[512];
	lc_load_tables(cl);
	if (cl->o.corpus_dir) {
		if (fl_corpus_load_dir(&cl->corpus, cl->o.corpus_dir, err, sizeof err))
			lc_die("%s", err);
	} else if (fl_corpus_generate(&cl->corpus, cl->o.corpus_seed, cl->o.corpus_mb << 20,
		err, sizeof err)) {
		lc_die("%s", err);
	}
	if (!cl->o.rpc && !cl->o.garbage)
		lc_setup_reqgen(cl);
	cl->z = fl_zcodec_new(3);
	if (!cl->z)
		lc_die("cannot create a zstd codec");
	cl->base = event_base_new();
	if (!cl->base)
		lc_die("cannot create an event base");
	if (cl->o.tls) {
		char dir[4096];
		const char *d = cl->o.tls_dir;
		if (!d) {
			if (fl_tls_default_dir(dir, sizeof dir, err, sizeof err))
				lc_die("%s", err);
			d = dir;
		}
		cl->ssl_ctx = fl_tls_client_ctx(d, err, sizeof err);
		if (!cl->ssl_ctx)
			lc_die("%s", err);
	}
	lc_resolve(cl);
}

/* ---- summary ---- */

static int lc_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t lc_pct(const uint64_t *v, uint64_t n, double q)
{
	if (n == 0)
		return 0;
	uint64_t k = (uint64_t)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

static json_t *lc_range_json(const struct lc_range *r)
{
	return json_pack("{s:I,s:I,s:I}", "min", (json_int_t)r->min, "max", (json_int_t)r->max,
		"sum", (json_int_t)r->sum);
}

static uint64_t lc_error_total(const struct lc_errors *e)
{
	return e->connect + e->closed + e->frame + e->unknown_id + e->decode + e->reply_size +
		e->zstd + e->ranked + e->method + e->echo + e->timeout;
}

static int lc_write_json(const char *path, json_t *j)
{
	struct fl_atomic_file a;
	if (fl_atomic_open(&a, path, 0644, 0, NULL, 0) != 0 ||
	    fl_atomic_commit(&a, json_dumpf(j, a.f, JSON_INDENT(2)) == 0, NULL, 0) != 0) {
		fprintf(stderr, "leaf-client: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* Method m's name: rpc_dist.json's inbound name of InboundMethod m (leaf) or outbound
 * method m (RPC), else "method_<m>". */
static void lc_method_name(const struct lc_client *cl, unsigned m, char *out, size_t len)
{
	snprintf(out, len, "method_%u", m);
	if (cl->o.rpc) {
		if (m < FL_RPC_OUTBOUND)
			snprintf(out, len, "%s", cl->dist.out[m].name);
		return;
	}
	for (size_t k = 0; k < FL_RPC_INBOUND; k++)
		if (cl->in_enum[k] == m)
			snprintf(out, len, "%s", cl->dist.in[k].name);
}

static int lc_report(struct lc_client *cl)
{
	uint64_t n = cl->replied;
	qsort(cl->lat_ns, n, sizeof *cl->lat_ns, lc_cmp_u64);
	uint64_t p50 = lc_pct(cl->lat_ns, n, 0.50) / 1000, p95 = lc_pct(cl->lat_ns, n, 0.95) / 1000;
	uint64_t mx = n ? cl->lat_ns[n - 1] / 1000 : 0;
	cl->err.timeout = cl->timed_out ? cl->o.requests - cl->replied : 0;
	double wall_s = (double)(cl->end_ns - cl->start_ns) / 1e9;
	uint64_t errors = lc_error_total(&cl->err);
	int rc = 0;
	if (cl->replied < cl->o.requests || errors)
		rc = 1;
	if (cl->o.json) {
		json_t *st = json_object();
		for (int s = 0; s < LC_NSTATUS; s++)
			json_object_set_new(st, lc_status_key[s], json_integer((json_int_t)cl->status[s]));
		json_object_set_new(st, "other", json_integer((json_int_t)cl->status[LC_NSTATUS]));
		const struct lc_errors *e = &cl->err;
		json_t *ej = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"connect", (json_int_t)e->connect, "closed", (json_int_t)e->closed,
			"frame", (json_int_t)e->frame, "unknown_id", (json_int_t)e->unknown_id,
			"decode", (json_int_t)e->decode, "reply_size", (json_int_t)e->reply_size,
			"zstd", (json_int_t)e->zstd, "ranked", (json_int_t)e->ranked,
			"method", (json_int_t)e->method, "echo", (json_int_t)e->echo,
			"timeout", (json_int_t)e->timeout,
			"total", (json_int_t)errors);
		json_t *mj = json_object();
		for (unsigned m = 0; m < 256; m++) {
			if (!cl->sent_by_method[m])
				continue;
			char name[80];
			lc_method_name(cl, m, name, sizeof name);
			json_object_set_new(mj, name, json_integer((json_int_t)cl->sent_by_method[m]));
		}
		char hash[32];
		snprintf(hash, sizeof hash, "%016" PRIx64, cl->stream_hash);
		json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,"
			"s:{s:I,s:I,s:I},s:I,s:o,s:o,s:s,s:s,s:f,s:s}",
			"mode", cl->o.rpc ? "rpc" : "leaf",
			"requests", (json_int_t)cl->o.requests,
			"sent", (json_int_t)cl->sent,
			"replied", (json_int_t)cl->replied,
			"unanswered", (json_int_t)(cl->o.requests - cl->replied),
			"status", st,
			"request_bytes", lc_range_json(&cl->req_bytes),
			"wire_request_bytes", lc_range_json(&cl->wire_bytes),
			"reply_raw_bytes", lc_range_json(&cl->reply_raw),
			"ranked", lc_range_json(&cl->ranked),
			"fanout_calls", lc_range_json(&cl->fanout_calls),
			"fanout_errors", lc_range_json(&cl->fanout_errors),
			"extract_calls", lc_range_json(&cl->extract_calls),
			"zstd_replies", (json_int_t)cl->zstd_replies,
			"zstd_expected", (json_int_t)cl->zstd_expected,
			"latency_us", "p50", (json_int_t)p50, "p95", (json_int_t)p95, "max", (json_int_t)mx,
			"server_us_max", (json_int_t)(cl->server_ns_max / 1000),
			"methods", mj,
			"errors", ej,
			"cipher", cl->cipher,
			"stream_hash", hash,
			"wall_s", wall_s,
			"first_error", cl->first_error);
		if (!j || lc_write_json(cl->o.json, j) < 0)
			rc = 2;
		json_decref(j);
	}
	if (!cl->o.quiet) {
		printf("%" PRIu64 "/%" PRIu64 " replied in %.2f s: ok %" PRIu64, cl->replied,
			cl->o.requests, wall_s, cl->status[0]);
		for (int s = 1; s <= LC_NSTATUS; s++)
			if (cl->status[s])
				printf(", %s %" PRIu64, s < LC_NSTATUS ? lc_status_key[s] : "other",
					cl->status[s]);
		printf("; latency p50 %" PRIu64 " us p95 %" PRIu64 " us max %" PRIu64 " us",
			p50, p95, mx);
		if (!cl->o.rpc && cl->fanout_calls.n)
			printf("; fanout %" PRIu64 " calls", cl->fanout_calls.sum);
		if (cl->cipher[0])
			printf("; %s", cl->cipher);
		printf("\n");
	}
	if (cl->replied < cl->o.requests)
		fprintf(stderr, "leaf-client: %" PRIu64 " of %" PRIu64 " requests unanswered%s\n",
			cl->o.requests - cl->replied, cl->o.requests,
			cl->timed_out ? " at the deadline" : "");
	if (errors)
		fprintf(stderr, "leaf-client: %" PRIu64 " errors, first: %s\n", errors,
			cl->first_error);
	else if (cl->replied < cl->o.requests && cl->first_error[0])
		fprintf(stderr, "leaf-client: %s\n", cl->first_error);
	return rc;
}

static int lc_run(struct lc_client *cl)
{
	cl->slots = calloc(cl->o.requests, sizeof *cl->slots);
	cl->lat_ns = calloc(cl->o.requests, sizeof *cl->lat_ns);
	cl->conns = calloc(cl->o.connections, sizeof *cl->conns);
	if (!cl->slots || !cl->lat_ns || !cl->conns)
		lc_die("out of memory");
	struct timeval tv = { (time_t)cl->o.timeout_s,
		(suseconds_t)((cl->o.timeout_s - floor(cl->o.timeout_s)) * 1e6) };
	struct event *tev = evtimer_new(cl->base, lc_timeout_cb, cl);
	evtimer_add(tev, &tv);
	cl->start_ns = fl_mono_ns();
	for (unsigned k = 0; k < cl->o.connections; k++) {
		struct lc_conn *c = &cl->conns[k];
		c->cl = cl;
		c->bev = lc_connect(cl);
		if (!c->bev) {
			cl->err.connect++;
			lc_note(cl, "connect to %s:%u failed: %s", cl->o.host, cl->o.port,
				strerror(errno));
			continue;
		}
		cl->live_conns++;
		bufferevent_setcb(c->bev, lc_read_cb, NULL, lc_event_cb, c);
		bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	}
	if (cl->live_conns && cl->o.requests)
		event_base_dispatch(cl->base);
	cl->end_ns = fl_mono_ns();
	for (unsigned k = 0; k < cl->o.connections; k++)
		if (cl->conns[k].bev)
			bufferevent_free(cl->conns[k].bev);
	event_base_loop(cl->base, EVLOOP_NONBLOCK);
	event_free(tev);
	return lc_report(cl);
}

static void lc_free(struct lc_client *cl)
{
	for (uint64_t i = 0; cl->slots && i < cl->o.requests; i++)
		free(cl->slots[i].story_ids);  /* requests never answered */
	free(cl->slots);
	free(cl->lat_ns);
	free(cl->conns);
	fl_bytes_free(&cl->pack);
	fl_bytes_free(&cl->comp);
	fl_bytes_free(&cl->scratch);
	if (cl->z)
		fl_zcodec_free(cl->z);
	if (cl->ssl_ctx)
		SSL_CTX_free(cl->ssl_ctx);
	if (cl->base)
		event_base_free(cl->base);
	fl_corpus_free(&cl->corpus);
}

/* ---- fault injection (--garbage) ---- */

struct lc_garbage {
	struct lc_client *cl;
	struct bufferevent *bev;
	int half_close;          /* shut our write side once the bytes are out */
	int done;
	char outcome[32];        /* "reply", "closed", "reset", "timeout", "connect" */
	int have_reply;
	struct fl_frame_hdr reply;
	char message[256];       /* ErrorReply text, if any */
};

static void lc_g_finish(struct lc_garbage *g, const char *outcome)
{
	if (g->done)
		return;
	g->done = 1;
	snprintf(g->outcome, sizeof g->outcome, "%s", outcome);
	event_base_loopbreak(g->cl->base);
}

static void lc_g_read(struct bufferevent *bev, void *arg)
{
	struct lc_garbage *g = arg;
	struct fl_frame_hdr h;
	uint8_t *payload = NULL;
	int rc = fl_wire_pull(bufferevent_get_input(bev), g->cl->o.max_frame_bytes, &h, &payload);
	if (rc == FL_WIRE_NEED_MORE)
		return;
	if (rc < 0) {
		snprintf(g->message, sizeof g->message, "server sent a bad frame: %s",
			fl_wire_strerror(rc));
		lc_g_finish(g, "bad-reply");
		return;
	}
	g->have_reply = 1;
	g->reply = h;
	if (h.status != FL_STATUS_OK && payload) {
		Frontload__ErrorReply *e = frontload__error_reply__unpack(NULL, h.payload_len, payload);
		if (e) {
			snprintf(g->message, sizeof g->message, "%s", e->message);
			frontload__error_reply__free_unpacked(e, NULL);
		}
	}
	free(payload);
	lc_g_finish(g, "reply");
}

static void lc_g_write(struct bufferevent *bev, void *arg)
{
	struct lc_garbage *g = arg;
	if (!g->half_close)
		return;
	g->half_close = 0;
	if (g->cl->o.tls) {
		/* TLS has no half close: drop the connection; nothing can come back. */
		lc_g_finish(g, "client-closed");
		return;
	}
	shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void lc_g_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct lc_garbage *g = arg;
	if (what & BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_EOF)
		lc_g_finish(g, "closed");
	else if (what & BEV_EVENT_ERROR)
		lc_g_finish(g, EVUTIL_SOCKET_ERROR() == ECONNREFUSED ? "connect" : "reset");
}

static void lc_g_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lc_g_finish(arg, "timeout");
}

static const char *const lc_garbage_modes[] = {
	"bad-magic", "bad-version", "bad-type", "bad-flags", "truncated", "oversized", "random",
	"bad-payload", "bad-zstd", NULL,
};

/* Bytes for mode into out: a frame with one thing wrong (the rest valid, so a server that
 * skipped the check would act on it), or noise. */
static void lc_g_bytes(struct lc_client *cl, const char *mode, struct evbuffer *out,
	int *half_close)
{
	struct fl_frame_hdr h;
	uint8_t hdr[FL_WIRE_HDR_BYTES];
	struct fl_rng r;
	fl_rng_seed(&r, cl->o.seed);
	cl->slots = calloc(1, sizeof *cl->slots);
	if (!cl->slots)
		lc_die("out of memory");
	if (cl->o.rpc)
		lc_build_rpc(cl, 0);
	else
		lc_build_leaf(cl, 0);
	fl_hdr_init(&h, FL_MSG_REQUEST, 1, fl_wall_ns());
	h.payload_len = (uint32_t)cl->pack.len;
	const void *payload = cl->pack.data;
	size_t plen = cl->pack.len;
	uint8_t junk[4096];
	for (size_t k = 0; k < sizeof junk; k++)
		junk[k] = (uint8_t)fl_rng_next(&r);
	if (!strcmp(mode, "bad-magic")) {
		h.magic = 0x58585858u;
	} else if (!strcmp(mode, "bad-version")) {
		h.version = FL_WIRE_VERSION + 7;
	} else if (!strcmp(mode, "bad-type")) {
		h.type = 77;
	} else if (!strcmp(mode, "bad-flags")) {
		h.flags = 0x8000;
	} else if (!strcmp(mode, "truncated")) {
		*half_close = 1;
		fl_hdr_encode(&h, hdr);
		size_t half = (FL_WIRE_HDR_BYTES + plen) / 2;
		if (half <= FL_WIRE_HDR_BYTES) {
			evbuffer_add(out, hdr, half);
		} else {
			evbuffer_add(out, hdr, sizeof hdr);
			evbuffer_add(out, payload, half - FL_WIRE_HDR_BYTES);
		}
		return;
	} else if (!strcmp(mode, "oversized")) {
		h.payload_len = 0xfffffff0u;
		payload = junk;
		plen = 1024;
	} else if (!strcmp(mode, "random")) {
		evbuffer_add(out, junk, sizeof junk);
		return;
	} else if (!strcmp(mode, "bad-payload")) {
		/* 0xff bytes: a varint that never ends, which no protobuf decoder accepts. */
		memset(junk, 0xff, 64);
		payload = junk;
		plen = 64;
		h.payload_len = (uint32_t)plen;
	} else if (!strcmp(mode, "bad-zstd")) {
		h.flags = FL_FRAME_ZSTD;
	} else {
		lc_die("unknown --garbage mode '%s'", mode);
	}
	fl_hdr_encode(&h, hdr);
	evbuffer_add(out, hdr, sizeof hdr);
	evbuffer_add(out, payload, plen);
}

/* Send one bad input and report what the server did. Passes (0) on an error reply or a
 * close; fails (1) on an OK reply, on silence until the deadline, or no connection. */
static int lc_run_garbage(struct lc_client *cl)
{
	struct lc_garbage g = { .cl = cl };
	cl->o.requests = 1;
	g.bev = lc_connect(cl);
	if (!g.bev)
		lc_die("connect to %s:%u failed: %s", cl->o.host, cl->o.port, strerror(errno));
	bufferevent_setcb(g.bev, lc_g_read, lc_g_write, lc_g_event, &g);
	bufferevent_enable(g.bev, EV_READ | EV_WRITE);
	lc_g_bytes(cl, cl->o.garbage, bufferevent_get_output(g.bev), &g.half_close);
	struct timeval tv = { (time_t)cl->o.timeout_s,
		(suseconds_t)((cl->o.timeout_s - floor(cl->o.timeout_s)) * 1e6) };
	struct event *tev = evtimer_new(cl->base, lc_g_timeout, &g);
	evtimer_add(tev, &tv);
	event_base_dispatch(cl->base);
	event_free(tev);
	bufferevent_free(g.bev);
	/* Let libevent run the deferred finalizers of the freed bufferevent (its SSL). */
	event_base_loop(cl->base, EVLOOP_NONBLOCK);

	int ok = !strcmp(g.outcome, "closed") || !strcmp(g.outcome, "reset") ||
		!strcmp(g.outcome, "client-closed") ||
		(!strcmp(g.outcome, "reply") && g.reply.status != FL_STATUS_OK);
	if (!cl->o.quiet) {
		printf("garbage %s: %s", cl->o.garbage, g.outcome);
		if (g.have_reply)
			printf(" status %u (%s)", g.reply.status, g.reply.status < LC_NSTATUS ?
				lc_status_key[g.reply.status] : "unknown");
		if (g.message[0])
			printf(" \"%s\"", g.message);
		printf("%s\n", ok ? "" : " -- FAIL");
	}
	if (cl->o.json) {
		json_t *j = json_pack("{s:s,s:s,s:i,s:s,s:b}", "garbage", cl->o.garbage,
			"outcome", g.outcome, "status", g.have_reply ? (int)g.reply.status : -1,
			"message", g.message, "pass", ok);
		if (!j || lc_write_json(cl->o.json, j) < 0)
			ok = 0;
		json_decref(j);
	}
	if (!ok)
		fprintf(stderr, "leaf-client: garbage %s: server %s\n", cl->o.garbage,
			!strcmp(g.outcome, "timeout") ? "neither replied nor closed before the deadline" :
			!strcmp(g.outcome, "reply") ? "accepted the bad input (status OK)" :
			g.message[0] ? g.message : "could not be reached");
	return ok ? 0 : 1;
}

/* ---- helper modes ---- */

/* --get KEY.PATH FILE: print one field of a JSON file. Scalars print bare (strings without
 * quotes); an object prints one "key value" line per member; an array prints compact. */
static int lc_get(const char *path, const char *file)
{
	json_error_t je;
	json_t *root = json_load_file(file, 0, &je);
	if (!root) {
		fprintf(stderr, "leaf-client: %s:%d: %s\n", file, je.line, je.text);
		return 2;
	}
	json_t *v = root;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v;
		k = strtok_r(NULL, ".", &save))
		v = json_is_array(v) ? json_array_get(v, strtoul(k, NULL, 10)) : json_object_get(v, k);
	if (!v) {
		fprintf(stderr, "leaf-client: %s: no field %s\n", file, path);
		json_decref(root);
		return 1;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *m;
		json_object_foreach(v, k, m) {
			if (json_is_string(m)) {
				printf("%s %s\n", k, json_string_value(m));
			} else {
				char *s = json_dumps(m, JSON_COMPACT | JSON_ENCODE_ANY);
				printf("%s %s\n", k, s ? s : "?");
				free(s);
			}
		}
	} else if (json_is_string(v)) {
		printf("%s\n", json_string_value(v));
	} else if (json_is_real(v)) {
		printf("%.17g\n", json_real_value(v));
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		printf("%s\n", s ? s : "?");
		free(s);
	}
	json_decref(root);
	return 0;
}

/* --expect-fanout SCALE: outbound calls per leaf request of each method ("name calls"),
 * then "total N", from rpc_dist.json through fl_rpc_calls (what the leaf must issue). */
static int lc_expect_fanout(const char *scale_s)
{
	char *end;
	double scale = strtod(scale_s, &end);
	if (*end || !(scale > 0))
		lc_die("--expect-fanout needs a positive scale, got '%s'", scale_s);
	char path[4096], err[512];
	static struct fl_rpc_dist d;
	if (fl_data_path("rpc_dist.json", path, sizeof path, err, sizeof err) ||
		fl_rpc_dist_load(path, &d, err, sizeof err))
		lc_die("%s", err);
	unsigned total = 0;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned n = fl_rpc_calls(&d, i, scale);
		printf("%s %u\n", d.out[i].name, n);
		total += n;
	}
	printf("total %u\n", total);
	return 0;
}

/* --table-range req|resp: "min max" of the pooled request or reply size table (bytes). */
static int lc_table_range(const char *which)
{
	int req = !strcmp(which, "req");
	if (!req && strcmp(which, "resp"))
		lc_die("--table-range takes req or resp, got '%s'", which);
	char path[4096], err[512];
	struct fl_pct t;
	if (fl_data_path(req ? "feed_aggregator_req_sizes.json" : "feed_aggregator_resp_sizes.json",
		path, sizeof path, err, sizeof err) ||
		fl_size_table_load(path, req ? "req_size_" : "resp_size_", &t, err, sizeof err))
		lc_die("%s", err);
	printf("%.0f %.0f\n", t.v[0], t.v[t.n - 1]);
	return 0;
}

/* ---- options ---- */

static void lc_usage(FILE *f)
{
	fprintf(f,
"usage: leaf-client [options]                 pipelined requests to a leaf (or mock)\n"
"       leaf-client --garbage MODE [options]  one bad input; report the server's answer\n"
"       leaf-client --get KEY.PATH FILE       print a field of a JSON file\n"
"       leaf-client --expect-fanout SCALE     outbound calls per request, per method\n"
"       leaf-client --table-range req|resp    min and max of a pooled size table (bytes)\n"
"\n"
"  --host H             server address (default 127.0.0.1)\n"
"  --port P             server port\n"
"  --port-file PATH     read the port from PATH (what the servers write when ready)\n"
"  --tls                connect with TLS, verifying the server against --tls-dir\n"
"  --tls-dir DIR        certificate directory (default: fl_tls_default_dir)\n"
"  --requests N         requests to send (default 100)\n"
"  --depth D            requests in flight per connection (default 4)\n"
"  --connections C      connections (default 1)\n"
"  --seed S             request stream seed (default 1); same seed, same requests\n"
"  --stories N          stories per request (default 16, at most %d)\n"
"  --story-bytes B      body bytes per story, cut from the corpus (default 1024)\n"
"  --request-size sampled|N\n"
"                       request payload bytes: sampled from feed_aggregator_req_sizes\n"
"                       (default) or fixed; the padding field makes up the size (never\n"
"                       below the stories' own size; 1 byte over where the padding's\n"
"                       length varint grows). --rpc: RpcRequest body bytes, sampled\n"
"                       from the method's rpc_dist.json request sizes\n"
"  --max-request-bytes N  cap on a sampled request size (default 4194304)\n"
"  --reply-bytes N      reply size to ask for (default 0: the leaf samples it; --rpc:\n"
"                       sampled from the method's response sizes, at most 64 KiB)\n"
"  --zstd               ask for zstd-compressed reply payloads\n"
"  --zstd-frames        send request frames zstd-compressed\n"
"  --method-mix         inbound methods weighted by rpc_dist.json counts\n"
"  --method N           this method for every request (default 0, createAndPrimeSession;\n"
"                       above 4: no InboundMethod, a request the leaf must refuse)\n"
"  --rpc                send RpcRequests, as the leaf does to the mock (--method-mix:\n"
"                       uniform over the 20 outbound methods)\n"
"  --timeout-s T        deadline for the whole run (default 60)\n"
"  --json PATH          write a summary: replies by status, requests sent per method,\n"
"                       request and reply sizes, ranked counts, fanout and extractor\n"
"                       calls per reply (min/max/sum), zstd replies (and how many were\n"
"                       expected: all asked but getStoriesUncompressed), latency\n"
"                       p50/p95/max from send to reply (us), errors by kind, the TLS\n"
"                       cipher, and stream_hash (the same for the same request stream)\n"
"  --corpus-mb N        generated corpus size for story bodies and padding (default 8)\n"
"  --corpus-seed S      its seed (default 1)\n"
"  --corpus-dir DIR     use the files of DIR as the corpus instead\n"
"  --max-frame-bytes N  largest reply payload accepted (default 67108864)\n"
"  --quiet              no summary line on stdout\n"
"  --help               this text\n"
"\n"
"--garbage modes: bad-magic bad-version bad-type bad-flags truncated (half a frame, then\n"
"close) oversized (header claims ~4 GiB) random bad-payload (valid header, undecodable\n"
"payload) bad-zstd (zstd flag on a plain payload). Passes on an error reply or a close.\n"
"\n"
"Replies are checked: request id and timestamp echoed; an OK LeafReply decodes, its\n"
"payload matches payload_raw_bytes (after zstd) and --reply-bytes, and its ranked stories\n"
"come best first from the request (getAllStories: also from its session); an OK RpcReply\n"
"is for the method asked, with --reply-bytes bytes.\n"
"\n"
"Exit status: 0 when every request got a reply (any status) and every reply passed its\n"
"checks, 1 otherwise (the first problem is printed), 2 on usage or setup errors.\n", LC_MAX_STORIES);
}

static uint64_t lc_num(const char *name, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi || *s == '-')
		lc_die("%s: expected an integer in %" PRIu64 "..%" PRIu64 ", got '%s'", name, lo, hi, s);
	return v;
}

enum {
	OPT_HOST = 256, OPT_PORT, OPT_PORT_FILE, OPT_TLS, OPT_TLS_DIR, OPT_REQUESTS, OPT_DEPTH,
	OPT_CONNECTIONS, OPT_SEED, OPT_STORIES, OPT_STORY_BYTES, OPT_REQUEST_SIZE,
	OPT_MAX_REQUEST_BYTES, OPT_REPLY_BYTES, OPT_ZSTD, OPT_ZSTD_FRAMES, OPT_METHOD_MIX,
	OPT_METHOD, OPT_RPC, OPT_TIMEOUT_S, OPT_JSON, OPT_GARBAGE, OPT_CORPUS_MB,
	OPT_CORPUS_SEED, OPT_CORPUS_DIR, OPT_MAX_FRAME_BYTES, OPT_QUIET, OPT_HELP, OPT_GET,
	OPT_EXPECT_FANOUT, OPT_TABLE_RANGE,
};

static const struct option lc_long_opts[] = {
	{ "host", required_argument, NULL, OPT_HOST },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "tls", no_argument, NULL, OPT_TLS },
	{ "tls-dir", required_argument, NULL, OPT_TLS_DIR },
	{ "requests", required_argument, NULL, OPT_REQUESTS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "stories", required_argument, NULL, OPT_STORIES },
	{ "story-bytes", required_argument, NULL, OPT_STORY_BYTES },
	{ "request-size", required_argument, NULL, OPT_REQUEST_SIZE },
	{ "max-request-bytes", required_argument, NULL, OPT_MAX_REQUEST_BYTES },
	{ "reply-bytes", required_argument, NULL, OPT_REPLY_BYTES },
	{ "zstd", no_argument, NULL, OPT_ZSTD },
	{ "zstd-frames", no_argument, NULL, OPT_ZSTD_FRAMES },
	{ "method-mix", no_argument, NULL, OPT_METHOD_MIX },
	{ "method", required_argument, NULL, OPT_METHOD },
	{ "rpc", no_argument, NULL, OPT_RPC },
	{ "timeout-s", required_argument, NULL, OPT_TIMEOUT_S },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "garbage", required_argument, NULL, OPT_GARBAGE },
	{ "corpus-mb", required_argument, NULL, OPT_CORPUS_MB },
	{ "corpus-seed", required_argument, NULL, OPT_CORPUS_SEED },
	{ "corpus-dir", required_argument, NULL, OPT_CORPUS_DIR },
	{ "max-frame-bytes", required_argument, NULL, OPT_MAX_FRAME_BYTES },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "get", required_argument, NULL, OPT_GET },
	{ "expect-fanout", required_argument, NULL, OPT_EXPECT_FANOUT },
	{ "table-range", required_argument, NULL, OPT_TABLE_RANGE },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	static struct lc_client cl;
	struct lc_opts *o = &cl.o;
	*o = (struct lc_opts){
		.host = "127.0.0.1", .requests = 100, .depth = 4, .connections = 1, .seed = 1,
		.stories = 16, .story_bytes = 1024, .size_sampled = 1,
		.max_request_bytes = 4u << 20, .timeout_s = 60, .corpus_mb = 8, .corpus_seed = 1,
		.max_frame_bytes = 64u << 20,
	};
	const char *get = NULL, *expect = NULL, *range = NULL;
	int opt;
	while ((opt = getopt_long(argc, argv, "h", lc_long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_HOST: o->host = optarg; break;
		case OPT_PORT: o->port = (unsigned)lc_num("--port", optarg, 1, 65535); break;
		case OPT_PORT_FILE: o->port_file = optarg; break;
		case OPT_TLS: o->tls = 1; break;
		case OPT_TLS_DIR: o->tls_dir = optarg; break;
		case OPT_REQUESTS: o->requests = lc_num("--requests", optarg, 0, 1u << 28); break;
		case OPT_DEPTH: o->depth = (unsigned)lc_num("--depth", optarg, 1, 1u << 16); break;
		case OPT_CONNECTIONS:
			o->connections = (unsigned)lc_num("--connections", optarg, 1, 4096);
			break;
		case OPT_SEED: o->seed = lc_num("--seed", optarg, 0, UINT64_MAX); break;
		case OPT_STORIES:
			o->stories = (unsigned)lc_num("--stories", optarg, 0, LC_MAX_STORIES);
			break;
		case OPT_STORY_BYTES:
			o->story_bytes = lc_num("--story-bytes", optarg, 0, 1u << 20);
			break;
		case OPT_REQUEST_SIZE:
			o->size_sampled = !strcmp(optarg, "sampled");
			if (!o->size_sampled)
				o->request_bytes = lc_num("--request-size", optarg, 0, 1u << 30);
			break;
		case OPT_MAX_REQUEST_BYTES:
			o->max_request_bytes = lc_num("--max-request-bytes", optarg, 0, 1u << 30);
			break;
		case OPT_REPLY_BYTES:
			o->reply_bytes = (uint32_t)lc_num("--reply-bytes", optarg, 0, UINT32_MAX);
			break;
		case OPT_ZSTD: o->zstd = 1; break;
		case OPT_ZSTD_FRAMES: o->zstd_frames = 1; break;
		case OPT_METHOD_MIX: o->method_mix = 1; break;
		case OPT_METHOD: o->method = (unsigned)lc_num("--method", optarg, 0, 255); break;
		case OPT_RPC: o->rpc = 1; break;
		case OPT_TIMEOUT_S: {
			char *end;
			o->timeout_s = strtod(optarg, &end);
			if (*end || !(o->timeout_s > 0) || o->timeout_s > 86400)
				lc_die("--timeout-s: expected seconds in (0, 86400], got '%s'", optarg);
			break;
		}
		case OPT_JSON: o->json = optarg; break;
		case OPT_GARBAGE: o->garbage = optarg; break;
		case OPT_CORPUS_MB: o->corpus_mb = lc_num("--corpus-mb", optarg, 1, 4096); break;
		case OPT_CORPUS_SEED: o->corpus_seed = lc_num("--corpus-seed", optarg, 0, UINT64_MAX); break;
		case OPT_CORPUS_DIR: o->corpus_dir = optarg; break;
		case OPT_MAX_FRAME_BYTES:
			o->max_frame_bytes = (uint32_t)lc_num("--max-frame-bytes", optarg, 1, UINT32_MAX);
			break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_GET: get = optarg; break;
		case OPT_EXPECT_FANOUT: expect = optarg; break;
		case OPT_TABLE_RANGE: range = optarg; break;
		case 'h':
		case OPT_HELP: lc_usage(stdout); return 0;
		default: lc_usage(stderr); return 2;
		}
	}
	if (get) {
		if (optind != argc - 1)
			lc_die("--get KEY.PATH takes one FILE");
		return lc_get(get, argv[optind]);
	}
	if (optind != argc)
		lc_die("unexpected argument '%s' (see --help)", argv[optind]);
	if (expect)
		return lc_expect_fanout(expect);
	if (range)
		return lc_table_range(range);
	if (o->garbage) {
		int known = 0;
		for (size_t k = 0; lc_garbage_modes[k]; k++)
			known |= !strcmp(o->garbage, lc_garbage_modes[k]);
		if (!known)
			lc_die("unknown --garbage mode '%s' (see --help)", o->garbage);
	}
	lc_setup(&cl);
	int rc = o->garbage ? lc_run_garbage(&cl) : lc_run(&cl);
	lc_free(&cl);
	return rc;
}
