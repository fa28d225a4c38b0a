/* driver_engine.c: what the sender threads run: their event loops, the pipelined leaf
 * connections (connect, TLS, reconnect, replies matched to slots), the open-loop send
 * schedule and backlog, timeouts, the per-second trace; the main thread's side is
 * driver_control.c. tests/fuzz/fuzz_reply.c includes this file whole, so the reply reader
 * and all it calls stay here, static. */
#define _GNU_SOURCE
#include "driver_engine.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "driver_engine_int.h"
#include "driver_report.h"
#include "hist.h"
#include "reqgen.h"
#include "rng.h"
#include "wire.h"

#define DRV_TICK_US 100000u               /* housekeeping period: timeouts, trace, stop */
#define DRV_BACKOFF_MIN_MS 10u            /* first reconnect delay, doubled per failure */
#define DRV_BACKOFF_MAX_MS 1000u
#define DRV_SLOT_BITS 16u                 /* request_id = sequence << 16 | slot index */
#define DRV_SLOT_MASK ((1ull << DRV_SLOT_BITS) - 1)

/* One pipelined request awaiting its reply. */
struct drv_slot {
	uint64_t request_id;   /* 0: slot free */
	uint64_t intended_ns;  /* intended send time (CLOCK_MONOTONIC ns) */
	uint64_t sent_ns;      /* actual send time: packing began (CLOCK_MONOTONIC ns) */
	uint32_t gen;          /* step generation it was sent in */
	int measured;          /* intended time inside the measured window */
};

/* A request whose send time has come but has no slot yet. */
struct drv_pending {
	uint64_t intended_ns;  /* CLOCK_MONOTONIC ns */
	uint64_t index;        /* reqgen request index */
	uint64_t seq;          /* enqueue order, to tell which ever waited for a slot */
	int measured;
};

static uint64_t drv_timeout_ns(const struct fl_driver *d)
{
	return (uint64_t)(d->cfg.timeout_s * 1e9);
}

static struct timeval drv_tv(uint64_t ns)
{
	struct timeval tv = { (time_t)(ns / 1000000000ull), (suseconds_t)(ns % 1000000000ull / 1000) };
	return tv;
}

/* ---- trace ---- */

/* Move the thread's current-second counters into the shared cell, and note in-flight
 * requests for every second from the current one up to (not including) upto. */
static void drv_trace_flush(struct drv_thread *t, uint64_t upto)
{
	struct fl_driver *d = t->d;
	size_t last = d->nsecs - 1;
	size_t cell = t->sec < last ? (size_t)t->sec : last;

	pthread_mutex_lock(&d->mu);
	d->secs[cell].sent += t->sec_sent;
	d->secs[cell].completed += t->sec_completed;
	if (t->sec_hist.n > 0)
		fl_hist_merge(&d->secs[cell].hist, &t->sec_hist);
	for (uint64_t s = t->sec; s < upto && s <= last; s++)
		d->secs[s].inflight += t->inflight;
	if (cell + 1 > d->secs_used)
		d->secs_used = cell + 1;
	pthread_mutex_unlock(&d->mu);
	t->sec_sent = t->sec_completed = 0;
	if (t->sec_hist.n > 0)
		fl_hist_init(&t->sec_hist);
}

/* Start collecting the second now falls in, when that is a new one. */
static void drv_trace_roll(struct drv_thread *t, uint64_t now)
{
	uint64_t sec = now > t->t0_ns ? (now - t->t0_ns) / 1000000000ull : 0;

	if (sec <= t->sec)
		return;
	drv_trace_flush(t, sec);
	t->sec = sec;
}

/* Unsent bytes a connection may hold before it takes no new request. Packing a request
 * into the output while the leaf is not reading only moves the wait into the driver's
 * memory: at 3x capacity with sampled (MB-sized) requests the outputs grew by gigabytes
 * and the driver spent three quarters of its CPU zeroing fresh pages (perf: clear_page)
 * beside the leaf it measures. A held-back request stays in the backlog as a few bytes,
 * its intended time kept, and is packed when the output drains below half of this. */
#define DRV_OUT_CAP_BYTES (8u << 20)

/* ---- slots and backlog ---- */

static void drv_slot_free(struct drv_conn *c, uint32_t idx)
{
	struct drv_thread *t = c->t;
	struct drv_slot *s = &c->slots[idx];

	if (s->gen == t->gen && t->step_inflight > 0)
		t->step_inflight--;
	s->request_id = 0;
	c->free_idx[c->nfree++] = idx;
	c->inflight--;
	t->inflight--;
}

static int drv_backlog_push(struct drv_thread *t, const struct drv_pending *p)
{
	if (t->bl_len == t->bl_cap) {
		size_t cap = t->bl_cap ? t->bl_cap * 2 : 1024;
		struct drv_pending *n = malloc(cap * sizeof *n);
		if (n == NULL)
			return -1;
		for (size_t i = 0; i < t->bl_len; i++)
			n[i] = t->bl[(t->bl_head + i) % t->bl_cap];
		free(t->bl);
		t->bl = n;
		t->bl_cap = cap;
		t->bl_head = 0;
	}
	t->bl[(t->bl_head + t->bl_len) % t->bl_cap] = *p;
	t->bl_len++;
	return 0;
}

static struct drv_pending drv_backlog_pop(struct drv_thread *t)
{
	struct drv_pending p = t->bl[t->bl_head];

	t->bl_head = (t->bl_head + 1) % t->bl_cap;
	t->bl_len--;
	return p;
}

/* ---- connections ---- */

static void drv_read_cb(struct bufferevent *bev, void *arg);
static void drv_event_cb(struct bufferevent *bev, short what, void *arg);
static void drv_write_cb(struct bufferevent *bev, void *arg);
static void drv_dispatch(struct drv_thread *t);
static void drv_check_done(struct drv_thread *t);

static void drv_init_report(struct drv_thread *t, int rc, const char *msg)
{
	struct fl_driver *d = t->d;

	pthread_mutex_lock(&d->mu);
	if (t->init_rc == 0) {
		t->init_rc = rc;
		if (msg != NULL)
			snprintf(t->init_err, sizeof t->init_err, "%s", msg);
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
}

/* Close c and give up its requests (conn_lost when they belong to the step). */
static void drv_conn_close(struct drv_conn *c)
{
	struct drv_thread *t = c->t;

	for (uint32_t i = 0; i < t->d->slot_cap && c->inflight > 0; i++) {
		struct drv_slot *s = &c->slots[i];
		if (s->request_id == 0)
			continue;
		if (t->phase != DRV_IDLE && s->gen == t->gen && s->measured)
			t->c.errors[FL_DRIVER_ERR_CONN_LOST]++;
		drv_slot_free(c, i);
	}
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	c->bev = NULL;
	c->state = DRV_CONN_DOWN;
}

static void drv_conn_open(struct drv_conn *c);

static void drv_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drv_conn_open(arg);
}

/* Reconnect after a delay doubling from DRV_BACKOFF_MIN_MS to DRV_BACKOFF_MAX_MS. */
static void drv_conn_retry_later(struct drv_conn *c)
{
	struct timeval tv;

	c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : DRV_BACKOFF_MIN_MS;
	if (c->backoff_ms > DRV_BACKOFF_MAX_MS)
		c->backoff_ms = DRV_BACKOFF_MAX_MS;
	tv = drv_tv((uint64_t)c->backoff_ms * 1000000ull);
	evtimer_add(c->retry_ev, &tv);
}

/* A failed connection attempt: counted (during a step) and reported to fl_driver_new. */
static void drv_connect_failed(struct drv_conn *c, const char *msg)
{
	struct drv_thread *t = c->t;

	if (t->phase != DRV_IDLE)
		t->c.errors[FL_DRIVER_ERR_CONNECT]++;
	drv_init_report(t, -1, msg);
}

/* Start a connection attempt (TCP connect, then the TLS handshake when configured). */
static void drv_conn_open(struct drv_conn *c)
{
	struct drv_thread *t = c->t;
	struct fl_driver *d = t->d;
	struct bufferevent *bev;
	char msg[512];

	if (d->ssl != NULL) {
		SSL *ssl = SSL_new(d->ssl);
		if (ssl == NULL)
			goto fail;
		bev = bufferevent_openssl_socket_new(t->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
			BEV_OPT_CLOSE_ON_FREE);
		if (bev == NULL) {
			SSL_free(ssl);
			goto fail;
		}
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	} else {
		bev = bufferevent_socket_new(t->base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (bev == NULL)
			goto fail;
	}
	bufferevent_setcb(bev, drv_read_cb, drv_write_cb, drv_event_cb, c);
	bufferevent_setwatermark(bev, EV_WRITE, DRV_OUT_CAP_BYTES / 2, 0);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	c->state = DRV_CONN_CONNECTING;
	c->connect_start_ns = fl_mono_ns();
	/* A refused connect is reported later through drv_event_cb; -1 here is a local
	 * failure (no socket). */
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&d->addr, (int)d->addrlen) != 0) {
		bufferevent_free(bev);
		goto fail;
	}
	c->bev = bev;
	return;
fail:
	snprintf(msg, sizeof msg, "connect %.300s: %.160s", d->addr_text, strerror(errno));
	c->state = DRV_CONN_DOWN;
	drv_connect_failed(c, msg);
	drv_conn_retry_later(c);
}

/* Drop c after a failure and retry after the backoff. */
static void drv_conn_fail(struct drv_conn *c)
{
	drv_conn_close(c);
	drv_conn_retry_later(c);
}

static void drv_conn_ready(struct drv_conn *c)
{
	struct drv_thread *t = c->t;
	int one = 1;
	evutil_socket_t fd = bufferevent_getfd(c->bev);

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->state = DRV_CONN_READY;
	c->backoff_ms = 0;
	for (unsigned i = 0; i < t->d->cfg.connections; i++)
		if (t->conns[i].state != DRV_CONN_READY)
			return;
	drv_init_report(t, 1, NULL);
}

static void drv_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct drv_conn *c = arg;
	struct drv_thread *t = c->t;
	int saved = errno;
	char msg[512];

	if (what & BEV_EVENT_CONNECTED) {
		drv_conn_ready(c);
		drv_dispatch(t);
		return;
	}
	if (c->state == DRV_CONN_CONNECTING) {
		unsigned long ssl_err = bufferevent_get_openssl_error(bev);
		if (ssl_err != 0) {
			char e[256];
			ERR_error_string_n(ssl_err, e, sizeof e);
			snprintf(msg, sizeof msg, "TLS handshake with %.200s: %.250s", t->d->addr_text, e);
		} else {
			snprintf(msg, sizeof msg, "connect %.300s: %.160s", t->d->addr_text,
				saved ? strerror(saved) : (what & BEV_EVENT_EOF) ?
				"closed by peer" : "connection failed");
		}
		drv_connect_failed(c, msg);
	}
	drv_conn_fail(c);
	drv_dispatch(t);
	drv_check_done(t);
}

/* ---- sending ---- */

/* A READY connection with a free slot and room in its output, round-robin; NULL when
 * none. *ceiling tells whether every READY connection was at its depth (then the
 * driver's in-flight ceiling, not the leaf, held us back); a full output is the leaf
 * not reading, which is no ceiling of the driver's. */
static struct drv_conn *drv_pick_conn(struct drv_thread *t, int *ceiling)
{
	unsigned n = t->d->cfg.connections, ready = 0, at_depth = 0;

	for (unsigned k = 0; k < n; k++) {
		struct drv_conn *c = &t->conns[(t->rr + k) % n];
		if (c->state != DRV_CONN_READY)
			continue;
		ready++;
		if (c->inflight >= t->depth || c->nfree == 0) {
			at_depth++;
			continue;
		}
		if (evbuffer_get_length(bufferevent_get_output(c->bev)) >= DRV_OUT_CAP_BYTES)
			continue;
		t->rr = (t->rr + k + 1) % n;
		*ceiling = 0;
		return c;
	}
	*ceiling = ready > 0 && at_depth == ready;
	return NULL;
}

/* Room for a frame's header and head (reqgen.h fl_reqgen_build_parts) in an output
 * evbuffer: reserved by drv_reserve_frame, committed by drv_send once packed into it. */
struct drv_frame_space {
	struct evbuffer *out;
	struct evbuffer_iovec vec;
};

static uint8_t *drv_reserve_frame(void *arg, size_t len)
{
	struct drv_frame_space *fs = arg;

	if (len > UINT32_MAX - FL_WIRE_HDR_BYTES ||
	    evbuffer_reserve_space(fs->out, (ev_ssize_t)(FL_WIRE_HDR_BYTES + len), &fs->vec, 1) != 1 ||
	    fs->vec.iov_len < FL_WIRE_HDR_BYTES + len)
		return NULL;
	return (uint8_t *)fs->vec.iov_base + FL_WIRE_HDR_BYTES;
}

/* The request's deadline on the realtime clock the leaf compares with: its intended send
 * time (monotonic) plus the budget, moved by one reading of each clock. 0 = none. */
static uint64_t drv_deadline_wall(const struct fl_driver *d, uint64_t intended_ns,
	uint64_t wall, uint64_t mono)
{
	uint64_t due;

	if (!(d->cfg.deadline_ms > 0))
		return 0;
	due = intended_ns + (uint64_t)(d->cfg.deadline_ms * 1e6);
	if (due >= mono)
		return wall + (due - mono);
	return wall > mono - due ? wall - (mono - due) : 1;  /* passed: still not "none" */
}

/* Build request p into c's output buffer and give it a slot: the header and the fields
 * before the padding packed in place, the padding added by reference to the corpus (the
 * kernel's copy into the socket is its only copy), then the fields after it. Packing the
 * padding took a third of the driver's CPU at 600 qps of the default requests. */
static void drv_send(struct drv_thread *t, struct drv_conn *c, const struct drv_pending *p)
{
	struct fl_driver *d = t->d;
	struct drv_frame_space fs = { bufferevent_get_output(c->bev), { NULL, 0 } };
	struct fl_reqgen_parts pt;
	struct fl_frame_hdr h;
	struct drv_slot *s;
	size_t len;
	uint32_t idx;
	uint64_t now;
	int counted = t->phase != DRV_IDLE && p->measured;

	/* Sending starts with packing: a 4 MiB request takes a millisecond or more to pack,
	 * which is the request's cost, not the driver falling behind its schedule. */
	now = fl_mono_ns();
	if (fl_reqgen_build_parts(d->cfg.gen, p->index, drv_reserve_frame, &fs, &pt) != 0) {
		if (counted)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
		return;
	}
	len = pt.head_len + pt.pad_len + pt.tail_len;
	idx = c->free_idx[--c->nfree];
	s = &c->slots[idx];
	s->request_id = (++t->next_seq << DRV_SLOT_BITS) | idx;
	uint64_t wall = fl_wall_ns();
	fl_hdr_init(&h, FL_MSG_REQUEST, s->request_id, wall);
	h.deadline_ns = drv_deadline_wall(d, p->intended_ns, wall, fl_mono_ns());
	h.payload_len = (uint32_t)len;
	fl_hdr_encode(&h, fs.vec.iov_base);
	fs.vec.iov_len = FL_WIRE_HDR_BYTES + pt.head_len;
	if (evbuffer_commit_space(fs.out, &fs.vec, 1) != 0) {
		s->request_id = 0;
		c->free_idx[c->nfree++] = idx;
		if (counted)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
		return;
	}
	if ((pt.pad_len > 0 && evbuffer_add_reference(fs.out, pt.pad, pt.pad_len, NULL,
		NULL) != 0) ||
	    (pt.tail_len > 0 && evbuffer_add(fs.out, pt.tail, pt.tail_len) != 0)) {
		/* Out of memory behind a committed header: the stream is cut mid-frame. */
		s->request_id = 0;
		c->free_idx[c->nfree++] = idx;
		if (counted)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
		drv_conn_fail(c);
		return;
	}
	s->intended_ns = p->intended_ns;
	s->sent_ns = now;
	s->gen = t->gen;
	s->measured = p->measured;
	c->inflight++;
	t->inflight++;
	t->step_inflight++;
	drv_trace_roll(t, now);
	t->sec_sent++;
	if (counted) {
		t->c.sent++;
		if (now - p->intended_ns > FL_DRIVER_LATE_NS)
			t->c.late++;
		if (p->seq < t->bl_blocked)
			t->c.backlogged++;
	}
}

/* Send backlogged requests, oldest first, while some connection has a free slot. */
static void drv_dispatch(struct drv_thread *t)
{
	while (t->bl_len > 0) {
		int ceiling;
		struct drv_conn *c = drv_pick_conn(t, &ceiling);
		if (c == NULL) {
			/* Everything queued now has waited for a slot or for room. */
			t->bl_blocked = t->bl_seq;
			if (ceiling && t->phase != DRV_IDLE)
				t->backlog_seen = 1;
			return;
		}
		struct drv_pending p = drv_backlog_pop(t);
		drv_send(t, c, &p);
	}
}

/* The output drained below half its cap: pack what waited for room. */
static void drv_write_cb(struct bufferevent *bev, void *arg)
{
	struct drv_conn *c = arg;

	(void)bev;
	if (c->t->bl_len > 0)
		drv_dispatch(c->t);
}

/* Finish the step: stop sending, drop what never went out, hand the results over. A step
 * that ran its course measured until end_ns even when its last reply came earlier; an
 * interrupted one measured until now. */
static void drv_finish(struct drv_thread *t, uint64_t now, int interrupted)
{
	struct fl_driver *d = t->d;

	evtimer_del(t->send_ev);
	while (t->bl_len > 0) {
		struct drv_pending p = drv_backlog_pop(t);
		if (p.measured)
			t->c.unsent++;
	}
	t->window_end_ns = interrupted && now < t->end_ns ? now : t->end_ns;
	drv_trace_roll(t, now);
	drv_trace_flush(t, t->sec + 1);
	t->phase = DRV_IDLE;
	pthread_mutex_lock(&d->mu);
	d->ndone++;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

static void drv_check_done(struct drv_thread *t)
{
	if (t->phase == DRV_DRAINING && t->step_inflight == 0 && t->bl_len == 0)
		drv_finish(t, fl_mono_ns(), 0);
}

/* Timer at the intended send times. Every request due by now is queued, in schedule
 * order, then dispatched: a late timer sends a batch rather than losing requests, and
 * each keeps its own intended time, so the lateness shows in its latency. */
static void drv_send_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drv_thread *t = arg;
	uint64_t now = fl_mono_ns();

	(void)fd;
	(void)what;
	if (t->phase != DRV_SENDING)
		return;
	while (t->next_due_ns <= now && t->next_due_ns < t->end_ns) {
		struct drv_pending p = {
			.intended_ns = t->next_due_ns,
			.index = t->nreq * t->d->cfg.threads + t->id,
			.seq = t->bl_seq++,
			.measured = t->next_due_ns >= t->warm_ns,
		};
		t->nreq++;
		if (drv_backlog_push(t, &p) != 0 && p.measured)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
		t->next_due_ns = t->t0_ns + fl_schedule_next(&t->sched);
	}
	drv_dispatch(t);
	if (t->next_due_ns >= t->end_ns) {
		t->phase = DRV_DRAINING;
		drv_check_done(t);
		return;
	}
	now = fl_mono_ns();
	struct timeval tv = drv_tv(t->next_due_ns > now ? t->next_due_ns - now : 0);
	evtimer_add(t->send_ev, &tv);
}

/* ---- replies ---- */

/* The lowest value of lat's histogram bucket: a reply counts as over the miss-stop's bound
 * only when its whole bucket is, so the p95 the histogram reports is over it too. */
static uint64_t drv_bucket_floor(uint64_t lat)
{
	uint64_t lo, hi;

	fl_hist_bucket_range(fl_hist_bucket(lat), &lo, &hi);
	return lo;
}

static void drv_complete(struct drv_conn *c, const struct fl_frame_hdr *h, uint64_t now)
{
	struct drv_thread *t = c->t;
	uint32_t idx = (uint32_t)(h->request_id & DRV_SLOT_MASK);
	struct drv_slot *s;

	if (h->request_id == 0 || idx >= t->d->slot_cap)
		return;
	s = &c->slots[idx];
	if (s->request_id != h->request_id)
		return;  /* the reply of a request that already timed out */
	if (t->phase != DRV_IDLE && s->gen == t->gen) {
		uint64_t lat = now - s->intended_ns;
		drv_trace_roll(t, now);
		t->sec_completed++;
		if (h->status == FL_STATUS_OK)
			fl_hist_record(&t->sec_hist, lat);
		if (now >= t->warm_ns && now < t->end_ns) {
			t->c.window_completions++;
			if (h->status == FL_STATUS_OK)
				t->c.window_ok++;
		}
		if (s->measured) {
			t->c.completed++;
			switch (h->status) {
			case FL_STATUS_OK:
				t->c.ok++;
				fl_hist_record(&t->lat, lat);
				if (t->d->stop_on && drv_bucket_floor(lat) > t->d->stop_over_ns)
					t->late++;
				fl_hist_record(&t->svc, now - s->sent_ns);
				break;
			case FL_STATUS_OVERLOADED: t->c.overloaded++; break;
			case FL_STATUS_BAD_REQUEST: t->c.errors[FL_DRIVER_ERR_BAD_REQUEST]++; break;
			case FL_STATUS_DENIED: t->c.errors[FL_DRIVER_ERR_DENIED]++; break;
			case FL_STATUS_STALE: t->c.errors[FL_DRIVER_ERR_STALE]++; break;
			case FL_STATUS_INTERNAL: t->c.errors[FL_DRIVER_ERR_INTERNAL]++; break;
			case FL_STATUS_DEADLINE_EXCEEDED: t->c.errors[FL_DRIVER_ERR_DEADLINE]++; break;
			default: t->c.errors[FL_DRIVER_ERR_STATUS_OTHER]++; break;
			}
		}
	}
	drv_slot_free(c, idx);
}

/* Take whole frames off the input. Reply payloads are skipped, not decoded: the driver
 * measures the leaf, and decoding megabytes per reply would make it the bottleneck. */
static void drv_read_cb(struct bufferevent *bev, void *arg)
{
	struct drv_conn *c = arg;
	struct drv_thread *t = c->t;
	struct evbuffer *in = bufferevent_get_input(bev);

	for (;;) {
		uint8_t raw[FL_WIRE_HDR_BYTES];
		struct fl_frame_hdr h;
		size_t have = evbuffer_get_length(in);
		int rc;

		if (have < FL_WIRE_HDR_BYTES)
			break;
		evbuffer_copyout(in, raw, sizeof raw);
		rc = fl_hdr_decode(raw, &h, FL_DRIVER_MAX_REPLY_BYTES);
		if (rc != FL_WIRE_FRAME || (h.type != FL_MSG_REPLY && h.type != FL_MSG_PONG)) {
			if (t->phase != DRV_IDLE)
				t->c.errors[FL_DRIVER_ERR_PROTOCOL]++;
			drv_conn_fail(c);
			break;
		}
		if (have - FL_WIRE_HDR_BYTES < h.payload_len)
			break;
		evbuffer_drain(in, FL_WIRE_HDR_BYTES + (size_t)h.payload_len);
		if (h.type == FL_MSG_REPLY)
			drv_complete(c, &h, fl_mono_ns());
	}
	drv_dispatch(t);
	drv_check_done(t);
}

/* ---- housekeeping ---- */

/* The miss-stop rule (driver_engine.h): publish this thread's counts and read every
 * thread's; 1 once their sums make the step's miss certain (then every thread ends it at
 * its next tick). */
static int drv_miss_certain(struct drv_thread *t, uint64_t now)
{
	struct fl_driver *d = t->d;
	uint64_t late = 0, failed = 0;

	if (!d->stop_on)
		return 0;
	if (__atomic_load_n(&d->stopped, __ATOMIC_ACQUIRE))
		return 1;
	if (now - d->t0_ns < d->stop_from_ns)
		return 0;  /* not before the window's minimum seconds */
	__atomic_store_n(&t->pub_late, t->late, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pub_failed, fl_driver_failed(&t->c), __ATOMIC_RELAXED);
	for (unsigned i = 0; i < d->cfg.threads; i++) {
		late += __atomic_load_n(&d->threads[i].pub_late, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&d->threads[i].pub_failed, __ATOMIC_RELAXED);
	}
	if (late <= d->stop_late_limit && failed < d->stop_failed_limit)
		return 0;
	int expect = 0;
	if (__atomic_compare_exchange_n(&d->stopped, &expect, 1, 0, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE))
		d->stopped_ns = now;
	return 1;
}

/* Every DRV_TICK_US: end the step on a stop request or a certain miss, time out requests
 * (from their intended send time, in the backlog or in flight), give up hung connects and
 * reopen retiring connections once idle, and keep the trace's seconds moving. */
static void drv_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drv_thread *t = arg;
	struct fl_driver *d = t->d;
	uint64_t now = fl_mono_ns();
	uint64_t tmo = drv_timeout_ns(d);
	int in_step = t->phase != DRV_IDLE;

	(void)fd;
	(void)what;
	if (in_step && ((d->cfg.stop != NULL && *d->cfg.stop) || drv_miss_certain(t, now))) {
		drv_finish(t, now, 1);
		return;
	}
	if (in_step)
		drv_trace_roll(t, now);
	for (unsigned i = 0; i < d->cfg.connections; i++) {
		struct drv_conn *c = &t->conns[i];
		if (c->state == DRV_CONN_CONNECTING && now - c->connect_start_ns > tmo) {
			drv_connect_failed(c, "connect: no answer within the timeout");
			drv_conn_fail(c);
			continue;
		}
		for (uint32_t k = 0; k < d->slot_cap && c->inflight > 0; k++) {
			struct drv_slot *s = &c->slots[k];
			if (s->request_id == 0 || now - s->intended_ns < tmo)
				continue;
			if (in_step && s->gen == t->gen && s->measured)
				t->c.timeouts++;
			drv_slot_free(c, k);
			/* Its reply may still come: take no more requests on this connection. */
			if (c->state == DRV_CONN_READY)
				c->state = DRV_CONN_RETIRING;
		}
		if (c->state == DRV_CONN_RETIRING && c->inflight == 0) {
			drv_conn_close(c);
			if (in_step)
				t->c.recycled++;
			drv_conn_open(c);
		}
	}
	while (t->bl_len > 0 && now - t->bl[t->bl_head].intended_ns >= tmo) {
		struct drv_pending p = drv_backlog_pop(t);
		if (in_step && p.measured)
			t->c.timeouts++;
	}
	drv_dispatch(t);
	drv_check_done(t);
}

/* ---- steps ---- */

void drv_schedule_for(const struct fl_driver *d, unsigned id, uint64_t warm_ns,
	uint64_t end_ns, struct fl_schedule *s)
{
	/* Common draws: every step starts the same streams (request index and arrival
	 * gaps), so the search's steps compare rates on one sample of requests. */
	uint64_t step = d->cfg.common_draws ? 0 : d->step_no;
	uint64_t seed = fl_rng_derive(d->cfg.seed, (step << 32) | id);

	fl_schedule_init(s, d->cfg.arrival, d->qps / d->cfg.threads, seed);
	if (d->cfg.arrival == FL_ARRIVAL_BINOMIAL) {
		/* Warm-up and measured window each get exactly their share of the rate. */
		uint64_t win[2] = { warm_ns, end_ns - warm_ns };
		fl_schedule_windows(s, win, 2);
	}
}

static void drv_step_begin(struct drv_thread *t)
{
	struct fl_driver *d = t->d;
	uint64_t now;
	struct timeval tv;

	t->gen++;
	t->depth = d->depth;
	if (d->cfg.common_draws)
		t->nreq = 0;
	memset(&t->c, 0, sizeof t->c);
	fl_hist_init(&t->lat);
	fl_hist_init(&t->svc);
	fl_hist_init(&t->sec_hist);
	t->sec = 0;
	t->sec_sent = t->sec_completed = 0;
	t->step_inflight = 0;
	t->backlog_seen = 0;
	t->t0_ns = d->t0_ns;
	t->warm_ns = t->t0_ns + (uint64_t)(d->warmup_s * 1e9);
	t->end_ns = t->warm_ns + (uint64_t)(d->duration_s * 1e9);
	t->window_end_ns = t->end_ns;
	t->late = 0;
	drv_schedule_for(d, t->id, t->warm_ns - t->t0_ns, t->end_ns - t->t0_ns, &t->sched);
	t->next_due_ns = t->t0_ns + fl_schedule_next(&t->sched);
	t->phase = DRV_SENDING;
	now = fl_mono_ns();
	tv = drv_tv(t->next_due_ns > now ? t->next_due_ns - now : 0);
	evtimer_add(t->send_ev, &tv);
}

static void drv_cmd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drv_thread *t = arg;
	enum drv_cmd cmd;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&t->d->mu);
	cmd = t->d->cmd;
	pthread_mutex_unlock(&t->d->mu);
	if (cmd == DRV_CMD_QUIT)
		event_base_loopbreak(t->base);
	else if (cmd == DRV_CMD_START)
		drv_step_begin(t);
}

void *drv_engine_thread_main(void *arg)
{
	struct drv_thread *t = arg;
	char name[16];

	snprintf(name, sizeof name, "driver-%u", t->id);
	pthread_setname_np(pthread_self(), name);
	for (unsigned i = 0; i < t->d->cfg.connections; i++)
		drv_conn_open(&t->conns[i]);
	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

/* ---- setup ---- */

int drv_engine_thread_setup(struct fl_driver *d, struct drv_thread *t, unsigned id)
{
	struct event_config *ec = event_config_new();
	struct timeval tick = { 0, DRV_TICK_US };

	t->d = d;
	t->id = id;
	if (ec == NULL)
		return -1;
	/* Timer precision is the schedule's precision: without this flag libevent uses
	 * CLOCK_MONOTONIC_COARSE and millisecond epoll timeouts. */
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	t->base = event_base_new_with_config(ec);
	event_config_free(ec);
	if (t->base == NULL)
		return -1;
	t->send_ev = evtimer_new(t->base, drv_send_cb, t);
	t->tick_ev = event_new(t->base, -1, EV_PERSIST, drv_tick_cb, t);
	t->cmd_ev = event_new(t->base, -1, 0, drv_cmd_cb, t);
	t->conns = calloc(d->cfg.connections, sizeof *t->conns);
	if (t->send_ev == NULL || t->tick_ev == NULL || t->cmd_ev == NULL || t->conns == NULL)
		return -1;
	if (event_add(t->tick_ev, &tick) != 0)
		return -1;
	for (unsigned i = 0; i < d->cfg.connections; i++) {
		struct drv_conn *c = &t->conns[i];
		c->t = t;
		c->retry_ev = evtimer_new(t->base, drv_retry_cb, c);
		c->slots = calloc(d->slot_cap, sizeof *c->slots);
		c->free_idx = malloc(d->slot_cap * sizeof *c->free_idx);
		if (c->retry_ev == NULL || c->slots == NULL || c->free_idx == NULL)
			return -1;
		/* Lowest index on top, so the first requests use slots 0, 1, ... */
		for (uint32_t k = 0; k < d->slot_cap; k++)
			c->free_idx[k] = d->slot_cap - 1 - k;
		c->nfree = d->slot_cap;
	}
	return 0;
}
