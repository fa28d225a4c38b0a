/* fanout_int.h: private to the fanout (fanout.h is its API): the structs and counter
 * helpers fanout.c and fanout_channel.c share, and the functions one calls in the other. */
#ifndef FL_FANOUT_INT_H
#define FL_FANOUT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/util.h>

#include "fanout.h"
#include "fanout_slots.h"
#include "meter.h"
#include "sampler.h"
#include "tls.h"
#include "zcodec.h"

struct bufferevent;
struct event;
struct event_base;

#define FO_BACKOFF_MIN_MS 50u
#define FO_BACKOFF_MAX_MS 2000u
#define FO_DEAD_PINGS 3u              /* ping periods without an answer before reconnecting */

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

/* Add n to a counter only this FANOUT thread writes (relaxed load + store, FO_COUNTERS). */
static inline void fo_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
		memory_order_relaxed);
}

static inline struct timeval fo_tv_us(uint64_t us)
{
	struct timeval tv = { (time_t)(us / 1000000u), (suseconds_t)(us % 1000000u) };
	return tv;
}

/* ---- fanout.c: requests, calls and slots (FANOUT thread) ---- */

/* Record how one call ended and let the request issue its next call (req may be freed). */
void fo_call_finish(struct fo_thread *t, struct fo_req *req, enum fo_outcome o,
	bool was_inflight);

/* Free scratch grown past cfg.scratch_keep_bytes and publish what stays (after IO). */
void fo_trim(struct fo_thread *t);

/* Take in-flight slot s off its channel and disarm its deadline; s is free on return. */
void fo_slot_detach(struct fo_thread *t, struct fl_fslot *s);

/* ---- fanout_channel.c: channels (FANOUT thread) ---- */

/* Least-loaded up channel, ties rotating; NULL when none is up or the thread stops. */
struct fo_chan *fo_chan_pick(struct fo_thread *t);

/* Queue call c as an RpcRequest frame under id on up channel ch. 0, or -1 (not sent). */
int fo_chan_send_call(struct fo_chan *ch, uint64_t id, const struct fo_call *c);

/* Drop ch's connection, fail its in-flight calls, and retry after the backoff unless the
 * thread stops (then ch is FO_CHAN_CLOSED). */
void fo_chan_fail(struct fo_chan *ch);

/* Start ch's TCP connect and TLS handshake (a failure goes through fo_chan_fail). */
void fo_chan_connect(struct fo_chan *ch);

/* ch's retry event (arg: the fo_chan): reconnect after the backoff. */
void fo_chan_retry_cb(evutil_socket_t fd, short what, void *arg);

/* ch's periodic tick event (arg: the fo_chan): connect timeout, dead peer, keepalive ping. */
void fo_chan_tick_cb(evutil_socket_t fd, short what, void *arg);

#endif
