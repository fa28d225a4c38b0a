/* driver_engine.c: open-loop sender threads, pipelined leaf connections, per-step results. */
#define _GNU_SOURCE
#include "driver_engine.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
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
#include <event2/thread.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "driver_report.h"
#include "hist.h"
#include "net.h"
#include "reqgen.h"
#include "rng.h"
#include "tls.h"
#include "wire.h"

#define DRV_TICK_US 100000u               /* housekeeping period: timeouts, trace, stop */
#define DRV_START_DELAY_NS 20000000ull    /* step time 0 is this long after the call, so
                                             every thread is armed before it */
#define DRV_BACKOFF_MIN_MS 10u            /* first reconnect delay, doubled per failure */
#define DRV_BACKOFF_MAX_MS 1000u
#define DRV_INIT_TIMEOUT_S 10             /* fl_driver_new waits this long for connections */
#define DRV_SLOT_BITS 16u                 /* request_id = sequence << 16 | slot index */
#define DRV_SLOT_MASK ((1ull << DRV_SLOT_BITS) - 1)
#define DRV_CPU_BUSY_PCT 90.0             /* host CPU at or above this: depth not raised */

/* One pipelined request awaiting its reply. */
struct drv_slot {
	uint64_t request_id;   /* 0: slot free */
	uint64_t intended_ns;  /* intended send time (CLOCK_MONOTONIC ns) */
	uint64_t sent_ns;      /* actual send time: packing began (CLOCK_MONOTONIC ns) */
	uint32_t gen;          /* step generation it was sent in */
	int measured;          /* intended time inside the measured window */
};

enum drv_conn_state {
	DRV_CONN_DOWN,        /* no socket; retry_ev armed (backoff) or reopened by the tick */
	DRV_CONN_CONNECTING,  /* TCP connect, then TLS handshake, in progress */
	DRV_CONN_READY,       /* takes requests while it has a free slot */
	DRV_CONN_RETIRING     /* a request timed out: takes none, reopened once idle */
};

struct drv_thread;

struct drv_conn {
	struct drv_thread *t;
	enum drv_conn_state state;
	struct bufferevent *bev;    /* NULL when DOWN */
	struct event *retry_ev;     /* reconnect after backoff */
	unsigned backoff_ms;        /* next reconnect delay; 0 after a good connect */
	uint64_t connect_start_ns;  /* when the current attempt began */
	struct drv_slot *slots;     /* slot_cap slots */
	uint32_t *free_idx;         /* stack of free slot indices */
	uint32_t nfree;
	unsigned inflight;          /* slots in use */
};

/* A request whose send time has come but has no slot yet. */
struct drv_pending {
	uint64_t intended_ns;  /* CLOCK_MONOTONIC ns */
	uint64_t index;        /* reqgen request index */
	uint64_t seq;          /* enqueue order, to tell which ever waited for a slot */
	int measured;
};

enum drv_phase {
	DRV_IDLE,      /* between steps: connections kept, nothing sent */
	DRV_SENDING,   /* following the schedule */
	DRV_DRAINING   /* past the last send time: waiting for replies or timeouts */
};

/* Per-second trace cell shared by the threads (under fl_driver.mu). */
struct drv_sec {
	uint64_t sent, completed, inflight;
	struct fl_hist hist;  /* OK replies of the second: ns from intended send time */
};

enum drv_cmd { DRV_CMD_NONE, DRV_CMD_START, DRV_CMD_QUIT };

struct drv_thread {
	struct fl_driver *d;
	unsigned id;
	pthread_t tid;
	int started;                 /* tid valid */
	struct event_base *base;
	struct event *send_ev;       /* fires at the next intended send time */
	struct event *tick_ev;       /* every DRV_TICK_US */
	struct event *cmd_ev;        /* activated by the main thread: d->cmd */
	struct drv_conn *conns;
	unsigned rr;                 /* next connection to try */
	unsigned inflight;           /* requests awaiting replies, all connections */
	struct drv_pending *bl;      /* backlog ring: bl_cap entries from bl_head */
	size_t bl_head, bl_len, bl_cap;
	uint64_t bl_seq;             /* requests enqueued so far */
	uint64_t bl_blocked;         /* requests enqueued before this seq waited for a slot */
	uint64_t next_seq;           /* request id sequence */
	uint64_t nreq;               /* requests scheduled, all steps (request index part) */
	int init_rc;                 /* 0 connecting, 1 all connected, -1 failed (under mu) */
	char init_err[512];

	/* The current step (fields below are reset by drv_step_begin). */
	enum drv_phase phase;
	uint32_t gen;                /* step generation: replies of older steps are ignored */
	unsigned depth;              /* in-flight cap per connection */
	struct fl_schedule sched;
	uint64_t t0_ns, warm_ns, end_ns;  /* step time 0, end of warm-up, last send time */
	uint64_t next_due_ns;        /* intended time of the next scheduled request */
	uint64_t window_end_ns;      /* end of the measured window as run */
	unsigned step_inflight;      /* in-flight requests of this step */
	int backlog_seen;            /* a request waited while a READY connection existed */
	struct fl_driver_counts c;
	struct fl_hist lat;          /* measured OK replies, from intended time (ns) */
	struct fl_hist svc;          /* measured OK replies, from actual send (ns) */
	uint64_t sec;                /* trace second being collected */
	uint64_t sec_sent, sec_completed;
	struct fl_hist sec_hist;
};

struct fl_driver {
	struct fl_driver_config cfg;
	struct sockaddr_storage addr;  /* the leaf, resolved once */
	socklen_t addrlen;
	char addr_text[300];           /* "host:port" for messages */
	SSL_CTX *ssl;                  /* NULL: plain TCP */
	unsigned slot_cap;             /* slots per connection (largest depth ever) */
	unsigned depth_cap;            /* adaptive depth stops here */
	unsigned depth;                /* depth of the next step */
	unsigned step_no;
	struct drv_thread *threads;
	pthread_mutex_t mu;
	pthread_cond_t cv;             /* init_rc changes, ndone grows */
	enum drv_cmd cmd;              /* what cmd_ev asks (written before activating it) */
	unsigned ndone;                /* threads done with the current step (mu) */
	double qps, warmup_s, duration_s;  /* the current step */
	uint64_t t0_ns;
	struct drv_sec *secs;          /* nsecs trace cells of the current step (mu) */
	size_t nsecs;
	size_t secs_used;              /* cells touched (mu) */
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
	bufferevent_setcb(bev, drv_read_cb, NULL, drv_event_cb, c);
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

/* A READY connection with a free slot, round-robin; NULL when none. *any_ready tells
 * whether some connection was READY (then the depth, not the leaf, held us back). */
static struct drv_conn *drv_pick_conn(struct drv_thread *t, int *any_ready)
{
	unsigned n = t->d->cfg.connections;

	*any_ready = 0;
	for (unsigned k = 0; k < n; k++) {
		struct drv_conn *c = &t->conns[(t->rr + k) % n];
		if (c->state != DRV_CONN_READY)
			continue;
		*any_ready = 1;
		if (c->inflight < t->depth && c->nfree > 0) {
			t->rr = (t->rr + k + 1) % n;
			return c;
		}
	}
	return NULL;
}

/* Room for one frame in an output evbuffer: reserved by drv_reserve_frame, committed by
 * drv_send once the payload is packed into it. */
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

/* Build request p straight into c's output buffer (header, then the packed payload) and
 * give it a slot. Packing in place saves a copy of up to max-request-bytes per request. */
static void drv_send(struct drv_thread *t, struct drv_conn *c, const struct drv_pending *p)
{
	struct fl_driver *d = t->d;
	struct drv_frame_space fs = { bufferevent_get_output(c->bev), { NULL, 0 } };
	struct fl_frame_hdr h;
	struct drv_slot *s;
	size_t len = 0;
	uint32_t idx;
	uint64_t now;
	int counted = t->phase != DRV_IDLE && p->measured;

	/* Sending starts with packing: a 4 MiB request takes a millisecond or more to pack,
	 * which is the request's cost, not the driver falling behind its schedule. */
	now = fl_mono_ns();
	if (fl_reqgen_build_to(d->cfg.gen, p->index, drv_reserve_frame, &fs, &len) != 0) {
		if (counted)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
		return;
	}
	idx = c->free_idx[--c->nfree];
	s = &c->slots[idx];
	s->request_id = (++t->next_seq << DRV_SLOT_BITS) | idx;
	uint64_t wall = fl_wall_ns();
	fl_hdr_init(&h, FL_MSG_REQUEST, s->request_id, wall);
	h.deadline_ns = drv_deadline_wall(d, p->intended_ns, wall, fl_mono_ns());
	h.payload_len = (uint32_t)len;
	fl_hdr_encode(&h, fs.vec.iov_base);
	fs.vec.iov_len = FL_WIRE_HDR_BYTES + len;
	if (evbuffer_commit_space(fs.out, &fs.vec, 1) != 0) {
		s->request_id = 0;
		c->free_idx[c->nfree++] = idx;
		if (counted)
			t->c.errors[FL_DRIVER_ERR_BUILD]++;
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
		int any_ready;
		struct drv_conn *c = drv_pick_conn(t, &any_ready);
		if (c == NULL) {
			/* Everything queued now has waited for a slot. */
			t->bl_blocked = t->bl_seq;
			if (any_ready && t->phase != DRV_IDLE)
				t->backlog_seen = 1;
			return;
		}
		struct drv_pending p = drv_backlog_pop(t);
		drv_send(t, c, &p);
	}
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

/* Every DRV_TICK_US: end the step on a stop request, time out requests (from their
 * intended send time, in the backlog or in flight), give up hung connects and reopen
 * retiring connections once idle, and keep the trace's seconds moving. */
static void drv_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drv_thread *t = arg;
	struct fl_driver *d = t->d;
	uint64_t now = fl_mono_ns();
	uint64_t tmo = drv_timeout_ns(d);
	int in_step = t->phase != DRV_IDLE;

	(void)fd;
	(void)what;
	if (in_step && d->cfg.stop != NULL && *d->cfg.stop) {
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

static void drv_step_begin(struct drv_thread *t)
{
	struct fl_driver *d = t->d;
	uint64_t seed = fl_rng_derive(d->cfg.seed, ((uint64_t)d->step_no << 32) | t->id);
	uint64_t now;
	struct timeval tv;

	t->gen++;
	t->depth = d->depth;
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
	fl_schedule_init(&t->sched, d->cfg.arrival, d->qps / d->cfg.threads, seed);
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

static void *drv_thread_main(void *arg)
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

/* Host CPU counters from /proc/stat's "cpu" line (jiffies): busy and total. */
static int drv_cpu_read(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		&v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return -1;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];  /* idle and iowait */
	return 0;
}

/* ---- public ---- */

static int drv_thread_setup(struct fl_driver *d, struct drv_thread *t, unsigned id)
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

static int drv_resolve(struct fl_driver *d, char *err, size_t errlen)
{
	char why[256];

	if (fl_net_resolve(d->cfg.host, d->cfg.port, 0, &d->addr, &d->addrlen, why,
	    sizeof why) != 0) {
		snprintf(err, errlen, "resolve %s: %s", d->cfg.host, why);
		return -1;
	}
	return 0;
}

struct fl_driver *fl_driver_new(const struct fl_driver_config *cfg, char *err, size_t errlen)
{
	struct fl_driver *d;
	pthread_condattr_t ca;
	sigset_t block, old;
	struct timespec deadline;
	int failed = 0, waiting = 1;

	if (cfg->threads < 1 || cfg->connections < 1 || cfg->depth < 1 ||
	    cfg->depth > FL_DRIVER_MAX_DEPTH || !(cfg->timeout_s > 0) || cfg->gen == NULL ||
	    cfg->host == NULL) {
		snprintf(err, errlen, "driver: bad configuration");
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	d->depth = cfg->depth;
	d->depth_cap = cfg->depth > FL_DRIVER_DEPTH_CAP ? cfg->depth : FL_DRIVER_DEPTH_CAP;
	d->slot_cap = d->depth_cap;
	snprintf(d->addr_text, sizeof d->addr_text, "%s:%u", cfg->host, (unsigned)cfg->port);
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (drv_resolve(d, err, errlen) != 0)
		goto fail;
	if (cfg->tls) {
		d->ssl = fl_tls_client_ctx(cfg->tls_dir, err, errlen);
		if (d->ssl == NULL)
			goto fail;
	}
	evthread_use_pthreads();
	d->threads = calloc(cfg->threads, sizeof *d->threads);
	if (d->threads == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < cfg->threads; i++) {
		if (drv_thread_setup(d, &d->threads[i], i) != 0) {
			snprintf(err, errlen, "driver: cannot set up thread %u (out of memory?)", i);
			goto fail;
		}
	}
	/* Signals go to the main thread, which owns the stop flag and stdin. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned i = 0; i < cfg->threads; i++) {
		struct drv_thread *t = &d->threads[i];
		if (pthread_create(&t->tid, NULL, drv_thread_main, t) != 0)
			break;
		t->started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d->threads[cfg->threads - 1].started) {
		snprintf(err, errlen, "driver: cannot start threads");
		goto fail;
	}

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += DRV_INIT_TIMEOUT_S;
	pthread_mutex_lock(&d->mu);
	while (waiting && !failed) {
		waiting = 0;
		for (unsigned i = 0; i < cfg->threads; i++) {
			if (d->threads[i].init_rc < 0) {
				failed = 1;
				snprintf(err, errlen, "%s", d->threads[i].init_err);
				break;
			}
			waiting |= d->threads[i].init_rc == 0;
		}
		if (waiting && !failed &&
		    pthread_cond_timedwait(&d->cv, &d->mu, &deadline) == ETIMEDOUT) {
			failed = 1;
			snprintf(err, errlen, "connect %s: no connection within %d s", d->addr_text,
				DRV_INIT_TIMEOUT_S);
		}
	}
	pthread_mutex_unlock(&d->mu);
	if (failed)
		goto fail;
	return d;
fail:
	fl_driver_free(d);
	return NULL;
}

unsigned fl_driver_depth(const struct fl_driver *d)
{
	return d->depth;
}

unsigned fl_driver_inflight(const struct fl_driver *d)
{
	return d->depth * d->cfg.threads * d->cfg.connections;
}

unsigned fl_driver_set_inflight(struct fl_driver *d, unsigned n)
{
	unsigned conns = d->cfg.threads * d->cfg.connections;
	unsigned depth = n / conns + (n % conns != 0);
	d->depth = depth < 1 ? 1 : depth > d->slot_cap ? d->slot_cap : depth;
	return fl_driver_inflight(d);
}

/* Sum the threads' step results into out. Called with every thread done (idle). */
static void drv_merge(struct fl_driver *d, struct fl_driver_result *out, int *backlog_seen,
	uint64_t *window_end)
{
	*backlog_seen = 0;
	*window_end = 0;
	for (unsigned i = 0; i < d->cfg.threads; i++) {
		struct drv_thread *t = &d->threads[i];
#define DRV_SUM(f, help) out->c.f += t->c.f;
		FL_DRIVER_COUNTS(DRV_SUM)
#undef DRV_SUM
		for (int e = 0; e < FL_DRIVER_ERR_N; e++)
			out->c.errors[e] += t->c.errors[e];
		fl_hist_merge(&out->latency, &t->lat);
		fl_hist_merge(&out->service, &t->svc);
		*backlog_seen |= t->backlog_seen;
		if (t->window_end_ns > *window_end)
			*window_end = t->window_end_ns;
	}
}

int fl_driver_step(struct fl_driver *d, double qps, double warmup_s, double duration_s,
	struct fl_driver_result *out)
{
	uint64_t cpu_busy0 = 0, cpu_total0 = 0, cpu_busy1, cpu_total1, window_end, warm_ns;
	int cpu_ok, backlog_seen;
	size_t nsecs;

	fl_driver_result_init(out);
	if (!(qps > 0) || !isfinite(qps) || !(warmup_s >= 0) || !(duration_s > 0) ||
	    !isfinite(warmup_s + duration_s) || warmup_s + duration_s > 1e6)
		return -1;
	nsecs = (size_t)ceil(warmup_s + duration_s + d->cfg.timeout_s) + 2;
	d->secs = calloc(nsecs, sizeof *d->secs);
	if (d->secs == NULL)
		return -1;
	for (size_t i = 0; i < nsecs; i++)
		fl_hist_init(&d->secs[i].hist);
	d->nsecs = nsecs;
	d->secs_used = 0;
	out->step = d->step_no;
	out->requested_qps = qps;
	out->warmup_s = warmup_s;
	out->duration_s = duration_s;
	out->depth = d->depth;
	cpu_ok = drv_cpu_read(&cpu_busy0, &cpu_total0) == 0;

	pthread_mutex_lock(&d->mu);
	d->qps = qps;
	d->warmup_s = warmup_s;
	d->duration_s = duration_s;
	d->t0_ns = fl_mono_ns() + DRV_START_DELAY_NS;
	d->ndone = 0;
	d->cmd = DRV_CMD_START;
	pthread_mutex_unlock(&d->mu);
	for (unsigned i = 0; i < d->cfg.threads; i++)
		event_active(d->threads[i].cmd_ev, 0, 0);
	pthread_mutex_lock(&d->mu);
	while (d->ndone < d->cfg.threads)
		pthread_cond_wait(&d->cv, &d->mu);
	d->cmd = DRV_CMD_NONE;
	pthread_mutex_unlock(&d->mu);

	if (cpu_ok && drv_cpu_read(&cpu_busy1, &cpu_total1) == 0 && cpu_total1 > cpu_total0)
		out->host_cpu_pct = 100.0 * (double)(cpu_busy1 - cpu_busy0) /
			(double)(cpu_total1 - cpu_total0);
	drv_merge(d, out, &backlog_seen, &window_end);
	warm_ns = d->t0_ns + (uint64_t)(warmup_s * 1e9);
	out->window_s = window_end > warm_ns ? (double)(window_end - warm_ns) / 1e9 : 0;
	out->interrupted = d->cfg.stop != NULL && *d->cfg.stop != 0;

	out->trace = calloc(d->secs_used ? d->secs_used : 1, sizeof *out->trace);
	if (out->trace != NULL) {
		out->trace_len = d->secs_used;
		for (size_t i = 0; i < d->secs_used; i++) {
			struct fl_driver_trace_row *r = &out->trace[i];
			r->second = i;
			r->sent = d->secs[i].sent;
			r->completed = d->secs[i].completed;
			r->inflight = d->secs[i].inflight;
			r->ok = d->secs[i].hist.n;
			r->p95_ns = fl_hist_percentile(&d->secs[i].hist, 95);
		}
	}
	free(d->secs);
	d->secs = NULL;

	/* Requests waited for slots while the leaf kept within the SLA: the driver's depth,
	 * not the leaf, limited the step. Raise the depth unless the host is busy (then more
	 * in flight would only measure the driver competing with the leaf for CPU). */
	out->driver_limited = backlog_seen && out->latency.n > 0 &&
		(double)fl_hist_percentile(&out->latency, 95) < d->cfg.sla_ms * 1e6;
	if (out->driver_limited && out->host_cpu_pct >= 0 &&
	    out->host_cpu_pct < DRV_CPU_BUSY_PCT && d->depth < d->depth_cap && !out->interrupted) {
		d->depth = d->depth * 2 < d->depth_cap ? d->depth * 2 : d->depth_cap;
	}
	out->next_depth = d->depth;
	d->step_no++;
	return out->trace != NULL ? 0 : -1;
}

void fl_driver_free(struct fl_driver *d)
{
	if (d == NULL)
		return;
	if (d->threads != NULL) {
		pthread_mutex_lock(&d->mu);
		d->cmd = DRV_CMD_QUIT;
		pthread_mutex_unlock(&d->mu);
		for (unsigned i = 0; i < d->cfg.threads; i++) {
			struct drv_thread *t = &d->threads[i];
			if (!t->started)
				continue;
			event_active(t->cmd_ev, 0, 0);
			pthread_join(t->tid, NULL);
		}
		for (unsigned i = 0; i < d->cfg.threads; i++) {
			struct drv_thread *t = &d->threads[i];
			for (unsigned k = 0; t->conns != NULL && k < d->cfg.connections; k++) {
				struct drv_conn *c = &t->conns[k];
				if (c->bev != NULL)
					bufferevent_free(c->bev);
				if (c->retry_ev != NULL)
					event_free(c->retry_ev);
				free(c->slots);
				free(c->free_idx);
			}
			free(t->conns);
			if (t->send_ev != NULL)
				event_free(t->send_ev);
			if (t->tick_ev != NULL)
				event_free(t->tick_ev);
			if (t->cmd_ev != NULL)
				event_free(t->cmd_ev);
			if (t->base != NULL)
				event_base_free(t->base);
			free(t->bl);
		}
		free(d->threads);
	}
	if (d->ssl != NULL)
		SSL_CTX_free(d->ssl);
	free(d->secs);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
