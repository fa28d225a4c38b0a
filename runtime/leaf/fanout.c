/* fanout.c: stage 6, the leaf's outbound RPCs to the mock over pipelined TLS channels:
 * requests and their calls, in-flight slots, FANOUT threads and the API. The channels
 * are in fanout_channel.c. */
#define _GNU_SOURCE
#include "fanout_int.h"

#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "fanout_slots.h"
#include "meter.h"
#include "net.h"
#include "rng.h"
#include "sampler.h"
#include "tls.h"
#include "zcodec.h"

#define FO_DEFAULT_WINDOW 16u
#define FO_DEFAULT_PING_MS 200u
#define FO_DEFAULT_TIMEOUT_MS 1000u
#define FO_DEFAULT_MAX_REPLY (16u << 20)
#define FO_MIN_REPLY_BYTES 64u        /* room for the 4-byte size plus protobuf framing */
#define FO_PB_SLACK 16u               /* RpcReply bytes around its body (tags, varints) */
#define FO_LATENCY_CAP_US 200000u     /* the mock's default latency cap (mock_shape.h) */
#define FO_CONNECT_TIMEOUT_MS 1000u   /* at least this long for TCP connect + handshake */
#define FO_ZSTD_LEVEL 3               /* zstd's default: requests are small, cost is minor */
#define FO_MAX_THREADS 1024u
#define FO_MAX_CHANNELS 65536u
#define FO_MAX_CALLS (1u << 20)       /* calls per request, a sanity bound on scale */

_Static_assert(FL_RPC_OUTBOUND == sizeof(((struct fl_fanout_stats *)0)->calls_per_method) /
	sizeof(uint64_t), "calls_per_method is indexed like dist->out");

static void fo_set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "fanout: %s", msg);
}

/* ---- requests and calls (FANOUT thread) ---- */

static void fo_req_pump(struct fo_thread *t, struct fo_req *req);

/* Record how one call ended and let the request issue its next call. */
void fo_call_finish(struct fo_thread *t, struct fo_req *req, enum fo_outcome o,
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

/* Free scratch grown past cfg.scratch_keep_bytes by one large call, and publish what
 * stays. After every send and every reply. */
void fo_trim(struct fo_thread *t)
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
void fo_slot_detach(struct fo_thread *t, struct fl_fslot *s)
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
