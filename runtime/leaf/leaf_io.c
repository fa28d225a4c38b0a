/* leaf_io.c: IO threads: accept, read frames, admit and queue requests, write replies.
 *
 * One concept kept whole (about 920 lines): a connection's life (its references, its
 * open/closing/closed state, its pending output) is touched by every callback here, the
 * STATS frames and the RANKER threads' finished jobs included. Split, struct io_conn and
 * struct io_thread would have to be shared across files, and the rule "only the owning IO
 * thread touches a connection" would no longer be checkable in one read.
 */
#define _GNU_SOURCE
#include "leaf_io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "listener.h"
#include "meter.h"
#include "net.h"
#include "overheads.h"
#include "ranker.h"
#include "tls.h"
#include "wire.h"

#define IO_MAX_THREADS 256
#define IO_BACKLOG 1024

struct io_thread;
struct io_conn;

/* A STATS frame waiting for the main thread's snapshot (leaf_io.h). */
struct io_stats_wait {
	struct io_conn *c;           /* holds a reference on it */
	uint64_t request_id, client_ts_ns;
	uint64_t decoded_ns;         /* fl_mono_ns when the frame was taken */
	char *json;                  /* the answer (owned), NULL: none could be made */
	size_t len;
	struct io_stats_wait *next;
};

enum conn_state {
	CONN_OPEN,     /**< reading frames, writing replies */
	CONN_CLOSING,  /**< bad frame answered: reads off, closes once the output is flushed */
	CONN_CLOSED    /**< socket gone; the struct waits for its jobs in flight */
};

/* One client connection. Lives while it is open or any of its jobs is in flight. */
struct io_conn {
	struct io_thread *t;         /* owning IO thread (never changes) */
	struct bufferevent *bev;     /* NULL once closed */
	enum conn_state state;
	int refs;                    /* 1 while open + 1 per job in flight; IO thread only */
	int pending;                 /* output holds unwritten reply bytes */
	size_t buffered;             /* input + output bytes at its last event (conn_note) */
	int head_judged;             /* the request at the input's front passed its header
	                                check (conn_judge_head); cleared when it is taken */
	int frame_wm;                /* the input's low watermark holds back the read callback
	                                until the judged request is whole (conn_wait_frame) */
	uint64_t skip_left;          /* payload bytes of a shed request still to drop */
	struct event *skip_ev;       /* plain TCP: drops them in the kernel (conn_skip_cb) */
	struct io_conn *prev, *next; /* the thread's list of live connections */
};

struct io_thread {
	struct fl_io *io;
	unsigned index;
	pthread_t tid;
	int started;
	struct event_base *base;
	struct fl_listener *lis;     /* pauses accepting when accept() fails (listener.h) */
	struct event *inbox_ev;      /* activated by RANKER threads: jobs are back */
	struct event *stop_accept_ev; /* activated by main: disable the listener */
	pthread_mutex_t inbox_lock;  /* guards inbox */
	struct fl_job *inbox_head, *inbox_tail;
	struct event *stats_ev;      /* activated by main: STATS answers are ready */
	struct io_stats_wait *st_waiting; /* STATS frames not yet claimed (inbox_lock) */
	struct io_stats_wait *st_claimed; /* claimed by main, snapshot being built */
	struct io_stats_wait *st_ready;   /* answered, to be written by this thread */
	struct io_conn *conns;       /* live connections */
	int draining;                /* stopping: shed new requests (IO thread only) */
	unsigned npending;           /* atomic: connections with pending output */
	struct fl_io_stats st;       /* counters; written by this thread (relaxed atomics) */
	uint64_t buffered_bytes;     /* atomic: the connections' buffered, summed */
	struct fl_meter meter;       /* PMU group, opened by the thread */
	int exited;                  /* atomic: loop returned, final_cpu_ns valid */
	uint64_t final_cpu_ns;
};

struct fl_io {
	struct fl_io_config cfg;
	uint16_t port;
	unsigned nthreads;
	struct io_thread *th;
	pthread_mutex_t cipher_lock; /* guards cipher */
	char cipher[96];
};

/* Single writer per counter (its IO thread); the stats reader loads them. */
#define IO_ADD(t, field, n) \
	__atomic_store_n(&(t)->st.field, (t)->st.field + (uint64_t)(n), __ATOMIC_RELAXED)

static void io_count_status(struct io_thread *t, uint32_t status)
{
	switch (status) {
	case FL_STATUS_OK: IO_ADD(t, ok, 1); break;
	case FL_STATUS_OVERLOADED: IO_ADD(t, overloaded, 1); break;
	case FL_STATUS_BAD_REQUEST: IO_ADD(t, bad_request, 1); break;
	case FL_STATUS_DENIED: IO_ADD(t, denied, 1); break;
	case FL_STATUS_STALE: IO_ADD(t, stale, 1); break;
	case FL_STATUS_DEADLINE_EXCEEDED: IO_ADD(t, deadline_exceeded, 1); break;
	default: IO_ADD(t, internal, 1); break;
	}
}

static void conn_set_pending(struct io_conn *c, int on)
{
	if (c->pending == on)
		return;
	c->pending = on;
	if (on)
		__atomic_add_fetch(&c->t->npending, 1, __ATOMIC_RELAXED);
	else
		__atomic_sub_fetch(&c->t->npending, 1, __ATOMIC_RELAXED);
}

/* Publish the bytes c's evbuffers hold (requests not yet whole, replies not yet written)
 * into the thread's gauge. At each of c's events, so the gauge is as of those. */
static void conn_note(struct io_conn *c)
{
	size_t n = 0;

	if (c->bev != NULL)
		n = evbuffer_get_length(bufferevent_get_input(c->bev)) +
			evbuffer_get_length(bufferevent_get_output(c->bev));
	__atomic_store_n(&c->t->buffered_bytes, c->t->buffered_bytes - c->buffered + n,
		__ATOMIC_RELAXED);
	c->buffered = n;
}

static void conn_unref(struct io_conn *c)
{
	if (--c->refs > 0)
		return;
	struct io_thread *t = c->t;
	if (c->prev)
		c->prev->next = c->next;
	else
		t->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

/* Close the socket now (unsent output is lost) and drop the connection's own reference;
 * jobs in flight keep the struct alive until they come back. */
static void conn_close(struct io_conn *c)
{
	if (c->state == CONN_CLOSED)
		return;
	conn_set_pending(c, 0);
	if (c->skip_ev)
		event_free(c->skip_ev);
	c->skip_ev = NULL;
	bufferevent_free(c->bev);
	c->bev = NULL;
	conn_note(c);
	c->state = CONN_CLOSED;
	IO_ADD(c->t, closed, 1);
	conn_unref(c);
}

/* Queue one reply frame. server_ns runs from decoded_ns (0: none) to now. Returns 0, or
 * -1 when the connection was closed (unsent output at its bound, or out of memory). */
static int conn_reply(struct io_conn *c, uint32_t status, uint64_t request_id,
	uint64_t client_ts_ns, uint64_t decoded_ns, uint16_t flags, const void *payload,
	size_t len)
{
	struct io_thread *t = c->t;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	struct fl_frame_hdr h;

	/* Checked before adding: a client that reads gets any single reply, however large;
	 * one that leaves max_output_bytes unread is dropped. */
	if (evbuffer_get_length(out) >= t->io->cfg.max_output_bytes) {
		IO_ADD(t, dropped_slow, 1);
		conn_close(c);
		return -1;
	}
	fl_hdr_init(&h, FL_MSG_REPLY, request_id, client_ts_ns);
	h.status = status;
	h.flags = flags;
	h.server_ns = decoded_ns ? fl_mono_ns() - decoded_ns : 0;
	if (fl_wire_push(out, &h, payload, len) != 0) {
		IO_ADD(t, internal, 1);
		conn_close(c);
		return -1;
	}
	IO_ADD(t, replied, 1);
	IO_ADD(t, bytes_out, FL_WIRE_HDR_BYTES + len);
	io_count_status(t, status);
	conn_set_pending(c, 1);
	conn_note(c);
	return 0;
}

/* Answer a bad header with BAD_REQUEST and an ErrorReply, stop reading and close once
 * the reply is written: after a bad header the stream cannot be resynchronised. */
static void conn_bad_frame(struct io_conn *c, int rc)
{
	struct io_thread *t = c->t;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct fl_frame_hdr h;
	uint8_t raw[FL_WIRE_HDR_BYTES];

	/* Behind the right magic the ids are where wire.h says: echo them. */
	memset(&h, 0, sizeof(h));
	if (rc != FL_WIRE_BAD_MAGIC &&
	    evbuffer_copyout(in, raw, sizeof(raw)) == (ev_ssize_t)sizeof(raw))
		fl_hdr_decode(raw, &h, t->io->cfg.max_frame_bytes);
	switch (rc) {
	case FL_WIRE_BAD_MAGIC: IO_ADD(t, bad_magic, 1); break;
	case FL_WIRE_BAD_VERSION: IO_ADD(t, bad_version, 1); break;
	case FL_WIRE_BAD_TYPE: IO_ADD(t, bad_type, 1); break;
	case FL_WIRE_BAD_FLAGS: IO_ADD(t, bad_flags, 1); break;
	case FL_WIRE_TOO_LONG: IO_ADD(t, too_long, 1); break;
	default:
		/* Out of memory: nothing useful to say. */
		IO_ADD(t, internal, 1);
		conn_close(c);
		return;
	}
	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_disable(c->bev, EV_READ);
	c->state = CONN_CLOSING;

	char msg[128];
	struct fl_bytes er = { 0 };
	snprintf(msg, sizeof(msg), "bad frame: %s", fl_wire_strerror(rc));
	fl_error_reply_encode(&er, msg);
	conn_reply(c, FL_STATUS_BAD_REQUEST, h.request_id, h.client_ts_ns, 0, 0, er.data,
		er.len);
	fl_bytes_free(&er);
}

/* Garbage shorter than a header would wait for 40 bytes that may never come: check the
 * magic bytes already here. */
static int conn_bad_prefix(struct evbuffer *in)
{
	static const uint8_t magic[4] = {
		(FL_WIRE_MAGIC >> 24) & 0xff, (FL_WIRE_MAGIC >> 16) & 0xff,
		(FL_WIRE_MAGIC >> 8) & 0xff, FL_WIRE_MAGIC & 0xff,
	};
	uint8_t head[4];
	ev_ssize_t n = evbuffer_copyout(in, head, sizeof(head));
	return n > 0 && memcmp(head, magic, (size_t)n) != 0;
}

/* The judged request at the input's front is not whole yet: ask libevent to hold the read
 * callback until it is, instead of waking for every read of a large request (each wake
 * re-reads and re-judges the header). */
static void conn_wait_frame(struct io_conn *c, const struct fl_frame_hdr *h)
{
	bufferevent_setwatermark(c->bev, EV_READ, FL_WIRE_HDR_BYTES + (size_t)h->payload_len, 0);
	c->frame_wm = 1;
}

/* The awaited request was taken: wake for any byte again (headers, PINGs, bad prefixes). */
static void conn_frame_taken(struct io_conn *c)
{
	if (!c->frame_wm)
		return;
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	c->frame_wm = 0;
}

static void io_job_done(struct fl_job *job);

/* Queue the answer to a STATS frame: w's JSON (OK), or status with an ErrorReply saying
 * msg. Not a request, so only the byte counters see it. -1 when the connection is gone. */
static int conn_stats_reply(struct io_conn *c, const struct io_stats_wait *w,
	uint32_t status, const char *msg)
{
	struct io_thread *t = c->t;
	struct fl_bytes er = { 0 };
	const void *p = w->json;
	size_t n = w->len;
	struct fl_frame_hdr h;

	if (c->state != CONN_OPEN)
		return -1;
	if (status != FL_STATUS_OK) {
		fl_error_reply_encode(&er, msg);
		p = er.data;
		n = er.len;
	}
	fl_hdr_init(&h, FL_MSG_REPLY, w->request_id, w->client_ts_ns);
	h.status = status;
	h.server_ns = fl_mono_ns() - w->decoded_ns;
	int rc = fl_wire_push(bufferevent_get_output(c->bev), &h, p, n);
	fl_bytes_free(&er);
	if (rc != 0) {
		IO_ADD(t, internal, 1);
		conn_close(c);
		return -1;
	}
	IO_ADD(t, bytes_out, FL_WIRE_HDR_BYTES + n);
	conn_set_pending(c, 1);
	conn_note(c);
	return 0;
}

/* A STATS frame: park it on the thread and ask main for a snapshot. A payload or flags
 * make it malformed (answered at once, the stream stays usable). -1: connection gone. */
static int conn_stats(struct io_conn *c, const struct fl_frame_hdr *h, uint64_t decoded_ns)
{
	struct io_thread *t = c->t;
	const struct fl_io_config *cfg = &t->io->cfg;
	struct io_stats_wait now = { .request_id = h->request_id,
		.client_ts_ns = h->client_ts_ns, .decoded_ns = decoded_ns };

	IO_ADD(t, stats_requests, 1);
	if (h->payload_len != 0 || h->flags != 0)
		return conn_stats_reply(c, &now, FL_STATUS_BAD_REQUEST,
			"bad stats request: STATS takes no payload and no flags");
	struct io_stats_wait *w = cfg->stats_wanted ? malloc(sizeof(*w)) : NULL;
	if (w == NULL)
		return conn_stats_reply(c, &now, FL_STATUS_INTERNAL, cfg->stats_wanted ?
			"stats: out of memory" : "stats: not served by this server");
	*w = now;
	w->c = c;
	c->refs++;
	pthread_mutex_lock(&t->inbox_lock);
	w->next = t->st_waiting;
	t->st_waiting = w;
	pthread_mutex_unlock(&t->inbox_lock);
	cfg->stats_wanted(cfg->stats_arg);
	return 0;
}

/* Release a list of STATS waits, answered or not. The owning IO thread, or main once the
 * loops are gone. */
static void io_stats_drop(struct io_stats_wait *w)
{
	while (w) {
		struct io_stats_wait *next = w->next;
		conn_unref(w->c);
		free(w->json);
		free(w);
		w = next;
	}
}

/* Main has answered: write what is ready. */
static void io_stats_cb(evutil_socket_t fd, short what, void *arg)
{
	struct io_thread *t = arg;
	(void)fd;
	(void)what;

	pthread_mutex_lock(&t->inbox_lock);
	struct io_stats_wait *w = t->st_ready;
	t->st_ready = NULL;
	pthread_mutex_unlock(&t->inbox_lock);
	for (struct io_stats_wait *p = w; p; p = p->next)
		conn_stats_reply(p->c, p, p->json ? FL_STATUS_OK : FL_STATUS_INTERNAL,
			"stats: out of memory");
	io_stats_drop(w);
}

/* The client's deadline on our monotonic clock (one reading of each clock), 0 = none. */
static uint64_t conn_deadline(const struct fl_frame_hdr *h, uint64_t now)
{
	return fl_dl_local(h->deadline_ns, h->deadline_ns ? fl_wall_ns() : 0, now);
}

/* Answer request h without running it: FL_STATUS_DEADLINE_EXCEEDED (passed on arrival,
 * counted) or FL_STATUS_OVERLOADED. Returns -1 when the connection was closed. */
static int conn_shed(struct io_conn *c, const struct fl_frame_hdr *h, uint32_t status,
	uint64_t decoded_ns)
{
	static const char msg[] = "deadline: passed on arrival";
	struct fl_bytes er = { 0 };
	int rc;

	if (status != FL_STATUS_DEADLINE_EXCEEDED)
		return conn_reply(c, status, h->request_id, h->client_ts_ns, decoded_ns, 0,
			NULL, 0);
	IO_ADD(c->t, expired_at_admit, 1);
	fl_error_reply_encode(&er, msg);
	rc = conn_reply(c, status, h->request_id, h->client_ts_ns, decoded_ns, 0, er.data,
		er.len);
	fl_bytes_free(&er);
	return rc;
}

/* Plain TCP, a shed request's payload still to come: the kernel drops it (recv with
 * MSG_TRUNC copies nothing), the bufferevent's reads are off until it is gone. */
static void conn_skip_cb(evutil_socket_t fd, short what, void *arg)
{
	struct io_conn *c = arg;
	struct io_thread *t = c->t;
	(void)what;

	while (c->skip_left > 0) {
		size_t want = c->skip_left < (uint64_t)SSIZE_MAX ? (size_t)c->skip_left : SSIZE_MAX;
		ssize_t n = recv(fd, NULL, want, MSG_TRUNC | MSG_DONTWAIT);
		if (n > 0) {
			c->skip_left -= (uint64_t)n;
			IO_ADD(t, bytes_skipped_kernel, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;  /* the rest is not here yet */
		conn_close(c);  /* end of stream or an error, mid-payload */
		return;
	}
	event_del(c->skip_ev);
	bufferevent_enable(c->bev, EV_READ);
}

/* Drop what has arrived of a shed request's payload. 0: all of it is gone; 1: more is to
 * come (on plain TCP the kernel drops it from now on). -1 when c was closed. */
static int conn_skip(struct io_conn *c, struct evbuffer *in)
{
	struct io_thread *t = c->t;
	size_t have = evbuffer_get_length(in);
	size_t n = have < c->skip_left ? have : (size_t)c->skip_left;

	evbuffer_drain(in, n);
	c->skip_left -= n;
	if (c->skip_left == 0)
		return 0;
	if (t->io->cfg.tls)
		return 1;  /* TLS: the bytes must be decrypted to be dropped; drain them */
	if (!c->skip_ev)
		c->skip_ev = event_new(t->base, bufferevent_getfd(c->bev), EV_READ | EV_PERSIST,
			conn_skip_cb, c);
	if (!c->skip_ev || event_add(c->skip_ev, NULL) != 0) {
		IO_ADD(t, internal, 1);
		conn_close(c);
		return -1;
	}
	bufferevent_disable(c->bev, EV_READ);
	return 1;
}

/* Judge the request whose header heads the input before its payload is read: if it would
 * be shed (deadline passed, leaf at its inflight limit, draining), answer now and drop the
 * payload instead of buffering and copying it. Returns 1 when shed (header taken,
 * c->skip_left set), 0 when it goes on to conn_request, -1 when c was closed. */
static int conn_judge_head(struct io_conn *c, struct evbuffer *in, const struct fl_frame_hdr *h)
{
	struct io_thread *t = c->t;
	uint64_t now = fl_mono_ns();
	uint32_t status;

	if (fl_dl_decide(now, conn_deadline(h, now), 0) != FL_DL_GO)
		status = FL_STATUS_DEADLINE_EXCEEDED;
	else if (t->draining || fl_overheads_peek(t->io->cfg.ovh) == FL_OVH_OVERLOADED)
		status = FL_STATUS_OVERLOADED;
	else
		return 0;
	IO_ADD(t, received, 1);
	IO_ADD(t, shed_unread, 1);
	IO_ADD(t, bytes_in, FL_WIRE_HDR_BYTES + h->payload_len);
	IO_ADD(t, bytes_skipped, h->payload_len);
	evbuffer_drain(in, FL_WIRE_HDR_BYTES);
	c->skip_left = h->payload_len;
	return conn_shed(c, h, status, now) != 0 ? -1 : 1;
}

/* A REQUEST frame: admit (or shed) and queue it to the RANKER pool. The payload is
 * taken over. Returns -1 when the connection was closed. */
static int conn_request(struct io_conn *c, const struct fl_frame_hdr *h, uint8_t *payload,
	uint64_t decoded_ns)
{
	struct io_thread *t = c->t;
	struct fl_io *io = t->io;

	IO_ADD(t, received, 1);
	uint64_t deadline = conn_deadline(h, decoded_ns);
	if (fl_dl_decide(decoded_ns, deadline, 0) != FL_DL_GO) {
		free(payload);
		return conn_shed(c, h, FL_STATUS_DEADLINE_EXCEEDED, decoded_ns);
	}
	if (t->draining || fl_overheads_enter(io->cfg.ovh) == FL_OVH_OVERLOADED) {
		free(payload);
		return conn_shed(c, h, FL_STATUS_OVERLOADED, decoded_ns);
	}
	struct fl_job *job = calloc(1, sizeof(*job));
	if (job) {
		job->request_id = h->request_id;
		job->client_ts_ns = h->client_ts_ns;
		job->frame_flags = h->flags;
		job->payload = payload;
		job->payload_len = h->payload_len;
		job->decoded_ns = decoded_ns;
		job->deadline_ns = deadline;
		job->owner = c;
		job->done = io_job_done;
		c->refs++;
		if (fl_ranker_submit(io->cfg.ranker, job) == 0)
			return 0;
		/* Queue full or stopping: shed it like an overload. */
		c->refs--;
		job->payload = NULL;
		fl_job_free(job);
	}
	free(payload);
	fl_overheads_leave(io->cfg.ovh);
	return conn_reply(c, FL_STATUS_OVERLOADED, h->request_id, h->client_ts_ns, decoded_ns,
		0, NULL, 0);
}

/* Pull and handle every whole frame in the input. PING is answered at once; REPLY and
 * PONG have no business arriving here and count as a bad type. */
static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct io_conn *c = arg;
	struct io_thread *t = c->t;
	uint32_t max = t->io->cfg.max_frame_bytes;
	struct evbuffer *in = bufferevent_get_input(bev);

	c->refs++;  /* c stays valid whatever closes below */
	while (c->state == CONN_OPEN) {
		struct fl_frame_hdr h;
		uint8_t *payload = NULL;
		int rc;
		if (c->skip_left > 0) {
			if (conn_skip(c, in) != 0)
				break;
			continue;
		}
		if (!c->head_judged && fl_wire_peek(in, max, &h) == FL_WIRE_FRAME &&
		    h.type == FL_MSG_REQUEST) {
			rc = conn_judge_head(c, in, &h);
			if (rc < 0)
				break;
			if (rc > 0)
				continue;
			c->head_judged = 1;
		}
		rc = fl_wire_pull(in, max, &h, &payload);
		if (rc == FL_WIRE_NEED_MORE) {
			if (conn_bad_prefix(in))
				conn_bad_frame(c, FL_WIRE_BAD_MAGIC);
			else if (c->head_judged)
				conn_wait_frame(c, &h);
			break;
		}
		conn_frame_taken(c);
		if (rc == FL_WIRE_FRAME && h.type == FL_MSG_STATS) {
			IO_ADD(t, bytes_in, FL_WIRE_HDR_BYTES + h.payload_len);
			free(payload);
			if (conn_stats(c, &h, fl_mono_ns()) != 0)
				break;
			continue;
		}
		if (rc == FL_WIRE_FRAME && (h.type == FL_MSG_REPLY || h.type == FL_MSG_PONG)) {
			free(payload);
			rc = FL_WIRE_BAD_TYPE;
			/* already taken off the input: say so without re-reading a header */
			IO_ADD(t, bad_type, 1);
			IO_ADD(t, bytes_in, FL_WIRE_HDR_BYTES + h.payload_len);
			struct fl_bytes er = { 0 };
			fl_error_reply_encode(&er, "bad frame: only REQUEST, PING and STATS "
				"served");
			bufferevent_disable(bev, EV_READ);
			evbuffer_drain(in, evbuffer_get_length(in));
			c->state = CONN_CLOSING;
			conn_reply(c, FL_STATUS_BAD_REQUEST, h.request_id, h.client_ts_ns, 0, 0,
				er.data, er.len);
			fl_bytes_free(&er);
			break;
		}
		if (rc != FL_WIRE_FRAME) {
			conn_bad_frame(c, rc);
			break;
		}
		uint64_t decoded_ns = fl_mono_ns();
		c->head_judged = 0;
		IO_ADD(t, bytes_in, FL_WIRE_HDR_BYTES + h.payload_len);
		if (h.type == FL_MSG_PING) {
			free(payload);
			struct fl_frame_hdr p;
			fl_hdr_init(&p, FL_MSG_PONG, h.request_id, h.client_ts_ns);
			if (fl_wire_push(bufferevent_get_output(bev), &p, NULL, 0) != 0) {
				conn_close(c);
				break;
			}
			IO_ADD(t, bytes_out, FL_WIRE_HDR_BYTES);
			conn_set_pending(c, 1);
			continue;
		}
		if (conn_request(c, &h, payload, decoded_ns) != 0)
			break;
	}
	conn_note(c);
	conn_unref(c);
}

/* Output fully written: a closing connection can go now. */
static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct io_conn *c = arg;
	(void)bev;
	conn_set_pending(c, 0);
	conn_note(c);
	if (c->state == CONN_CLOSING)
		conn_close(c);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct io_conn *c = arg;
	struct io_thread *t = c->t;

	if (what & BEV_EVENT_CONNECTED) {
		/* TLS handshake done (accepting side). */
		IO_ADD(t, tls_handshakes, 1);
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		if (ssl) {
			char desc[96];
			fl_tls_describe(ssl, desc, sizeof(desc));
			pthread_mutex_lock(&t->io->cipher_lock);
			snprintf(t->io->cipher, sizeof(t->io->cipher), "%s", desc);
			pthread_mutex_unlock(&t->io->cipher_lock);
		}
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		conn_close(c);
}

static void io_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
	int salen, void *arg)
{
	struct io_thread *t = arg;
	struct fl_io *io = t->io;
	(void)lis;
	(void)sa;
	(void)salen;

	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct io_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		evutil_closesocket(fd);
		return;
	}
	struct bufferevent *bev;
	if (io->cfg.tls) {
		SSL *ssl = SSL_new(io->cfg.tls);
		bev = ssl ? bufferevent_openssl_socket_new(t->base, fd, ssl,
			BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE) : NULL;
		if (!bev && ssl)
			SSL_free(ssl);
		if (bev)
			bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	} else {
		bev = bufferevent_socket_new(t->base, fd, BEV_OPT_CLOSE_ON_FREE);
	}
	if (!bev) {
		evutil_closesocket(fd);
		free(c);
		return;
	}
	c->t = t;
	c->bev = bev;
	c->refs = 1;
	c->next = t->conns;
	if (t->conns)
		t->conns->prev = c;
	t->conns = c;
	IO_ADD(t, accepted, 1);
	bufferevent_setcb(bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* accept() failed (EMFILE...): the listener paused accepting (listener.h); count it. */
static void io_accept_paused(void *arg)
{
	struct io_thread *t = arg;
	IO_ADD(t, accept_errors, 1);
}

/* A finished job (RANKER thread): into the owning IO thread's inbox. */
static void io_job_done(struct fl_job *job)
{
	struct io_conn *c = job->owner;
	struct io_thread *t = c->t;

	job->next = NULL;
	pthread_mutex_lock(&t->inbox_lock);
	int was_empty = t->inbox_head == NULL;
	if (t->inbox_tail)
		t->inbox_tail->next = job;
	else
		t->inbox_head = job;
	t->inbox_tail = job;
	pthread_mutex_unlock(&t->inbox_lock);
	/* An empty inbox means the loop has taken everything before: wake it. */
	if (was_empty)
		event_active(t->inbox_ev, EV_READ, 1);
}

/* Write (or drop) one finished job's reply and release what it held. IO thread, or the
 * main thread once the loops are gone (c may then be closed). */
static void io_deliver(struct io_thread *t, struct fl_job *job)
{
	struct io_conn *c = job->owner;

	int ok = job->status == FL_STATUS_OK;
	if (c->state != CONN_OPEN ||
	    conn_reply(c, job->status, job->request_id, job->client_ts_ns, job->decoded_ns,
	    ok ? job->w.out_flags : 0, ok ? job->w.out.data : job->err.data,
	    ok ? job->w.out.len : job->err.len) != 0)
		IO_ADD(t, dropped_disconnected, 1);
	fl_overheads_leave(t->io->cfg.ovh);
	conn_unref(c);
	fl_job_free(job);
}

static void io_inbox_cb(evutil_socket_t fd, short what, void *arg)
{
	struct io_thread *t = arg;
	(void)fd;
	(void)what;

	pthread_mutex_lock(&t->inbox_lock);
	struct fl_job *job = t->inbox_head;
	t->inbox_head = t->inbox_tail = NULL;
	pthread_mutex_unlock(&t->inbox_lock);
	while (job) {
		struct fl_job *next = job->next;
		io_deliver(t, job);
		job = next;
	}
}

static void io_stop_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct io_thread *t = arg;
	(void)fd;
	(void)what;
	if (t->lis)
		fl_listener_stop(t->lis);
	t->draining = 1;
}

static void *io_main(void *arg)
{
	struct io_thread *t = arg;
	char name[16];

	snprintf(name, sizeof(name), "leaf-io-%u", t->index);
	pthread_setname_np(pthread_self(), name);
	fl_meter_start(&t->meter);  /* no clock asked: cannot fail (a PMU refusal is noted) */
	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	fl_meter_exit(&t->meter);
	t->final_cpu_ns = fl_thread_cpu_ns();
	__atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The listening address: host resolved, port set. */
static int io_resolve(const char *host, uint16_t port, struct sockaddr_storage *ss,
	socklen_t *sslen, char *err, size_t errlen)
{
	char why[256];

	if (fl_net_resolve(host, port, 1, ss, sslen, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "cannot resolve --host %s: %s", host, why);
		return -1;
	}
	return 0;
}

/* With SO_REUSEPORT a second server of the same user could silently share a busy port:
 * a plain bind first tells whether anybody holds it. */
static int io_port_free(const struct sockaddr_storage *ss, socklen_t sslen, char *err,
	size_t errlen)
{
	const char *what;
	int e = fl_net_probe_bind(ss, sslen, &what);

	if (e != 0) {
		snprintf(err, errlen, "%s%s", strcmp(what, "socket") == 0 ? "socket: " : "",
			strerror(e));
		return -1;
	}
	return 0;
}

struct fl_io *fl_io_new(const struct fl_io_config *cfg, char *err, size_t errlen)
{
	if (cfg->threads < 1 || cfg->threads > IO_MAX_THREADS || !cfg->ovh || !cfg->ranker ||
	    cfg->max_frame_bytes == 0 || cfg->max_output_bytes == 0) {
		snprintf(err, errlen, "io: bad config (threads 1..%d)", IO_MAX_THREADS);
		return NULL;
	}
	struct fl_io *io = calloc(1, sizeof(*io));
	if (!io || !(io->th = calloc(cfg->threads, sizeof(*io->th)))) {
		free(io);
		snprintf(err, errlen, "io: out of memory");
		return NULL;
	}
	io->cfg = *cfg;
	io->nthreads = cfg->threads;
	pthread_mutex_init(&io->cipher_lock, NULL);
	for (unsigned i = 0; i < io->nthreads; i++) {
		io->th[i].io = io;
		io->th[i].index = i;
		pthread_mutex_init(&io->th[i].inbox_lock, NULL);
		fl_meter_init(&io->th[i].meter, cfg->meter, 0);
	}

	struct sockaddr_storage ss;
	socklen_t sslen;
	if (io_resolve(cfg->host, cfg->port, &ss, &sslen, err, errlen) != 0)
		goto fail;
	char why[128];
	if (cfg->port != 0 && io_port_free(&ss, sslen, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "cannot listen on %s port %u: %s", cfg->host,
			(unsigned)cfg->port, why);
		goto fail;
	}
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		t->base = event_base_new();
		if (!t->base) {
			snprintf(err, errlen, "io: event_base_new failed");
			goto fail;
		}
		t->inbox_ev = event_new(t->base, -1, 0, io_inbox_cb, t);
		t->stop_accept_ev = event_new(t->base, -1, 0, io_stop_accept_cb, t);
		t->stats_ev = event_new(t->base, -1, 0, io_stats_cb, t);
		if (!t->inbox_ev || !t->stop_accept_ev || !t->stats_ev) {
			snprintf(err, errlen, "io: event_new failed");
			goto fail;
		}
		/* Thread 0 binds (maybe port 0); the others join the port it got. */
		t->lis = fl_listener_new(&(struct fl_listener_cfg){ t->base, &ss, sslen, IO_BACKLOG,
			LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE |
			LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_THREADSAFE, io_accept_cb, io_accept_paused,
			t });
		if (!t->lis) {
			snprintf(err, errlen, "cannot listen on %s port %u: %s", cfg->host,
				(unsigned)(i ? io->port : cfg->port), strerror(errno));
			goto fail;
		}
		if (i == 0) {
			if (fl_listener_port(t->lis, &io->port) != 0) {
				snprintf(err, errlen, "getsockname: %s", strerror(errno));
				goto fail;
			}
			fl_net_set_port(&ss, io->port);
		}
	}
	return io;
fail:
	fl_io_free(io);
	return NULL;
}

uint16_t fl_io_port(const struct fl_io *io)
{
	return io->port;
}

int fl_io_start(struct fl_io *io, char *err, size_t errlen)
{
	for (unsigned i = 0; i < io->nthreads; i++) {
		if (pthread_create(&io->th[i].tid, NULL, io_main, &io->th[i]) != 0) {
			snprintf(err, errlen, "io: cannot start thread %u", i);
			return -1;
		}
		io->th[i].started = 1;
	}
	for (unsigned i = 0; i < io->nthreads; i++)
		if (fl_meter_wait(&io->th[i].meter, err, errlen) != 0)
			return -1;
	return 0;
}

void fl_io_stop_accepting(struct fl_io *io)
{
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		if (t->started)
			event_active(t->stop_accept_ev, EV_READ, 1);
		else if (t->lis)
			fl_listener_stop(t->lis);
	}
}

unsigned fl_io_pending(struct fl_io *io)
{
	unsigned n = 0;
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		n += __atomic_load_n(&t->npending, __ATOMIC_RELAXED);
		pthread_mutex_lock(&t->inbox_lock);
		n += t->inbox_head != NULL;
		pthread_mutex_unlock(&t->inbox_lock);
	}
	return n;
}

void fl_io_stop(struct fl_io *io)
{
	for (unsigned i = 0; i < io->nthreads; i++)
		if (io->th[i].started)
			event_base_loopbreak(io->th[i].base);
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		if (t->started) {
			pthread_join(t->tid, NULL);
			t->started = 0;
		}
		/* STATS frames never answered: their connections are closed below. */
		io_stats_drop(t->st_waiting);
		io_stats_drop(t->st_claimed);
		io_stats_drop(t->st_ready);
		t->st_waiting = t->st_claimed = t->st_ready = NULL;
		/* Replies the loop never got to: dropped (counted), admission released. */
		struct fl_job *job = t->inbox_head;
		t->inbox_head = t->inbox_tail = NULL;
		while (job) {
			struct fl_job *next = job->next;
			struct io_conn *c = job->owner;
			conn_close(c);  /* nobody will write to it any more */
			io_deliver(t, job);
			job = next;
		}
	}
}

void fl_io_free(struct fl_io *io)
{
	if (!io)
		return;
	fl_io_stop(io);
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		while (t->conns) {
			struct io_conn *c = t->conns;
			if (c->state != CONN_CLOSED)
				conn_close(c);
			if (t->conns == c) {
				/* Still referenced by a job that can no longer come back. */
				c->refs = 1;
				conn_unref(c);
			}
		}
		fl_listener_free(t->lis);
		if (t->inbox_ev)
			event_free(t->inbox_ev);
		if (t->stop_accept_ev)
			event_free(t->stop_accept_ev);
		if (t->stats_ev)
			event_free(t->stats_ev);
		if (t->base)
			event_base_free(t->base);
		fl_meter_close(&t->meter);
		pthread_mutex_destroy(&t->inbox_lock);
	}
	pthread_mutex_destroy(&io->cipher_lock);
	free(io->th);
	free(io);
}

unsigned fl_io_stats_claim(struct fl_io *io)
{
	unsigned n = 0;

	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		pthread_mutex_lock(&t->inbox_lock);
		while (t->st_waiting) {
			struct io_stats_wait *w = t->st_waiting;
			t->st_waiting = w->next;
			w->next = t->st_claimed;
			t->st_claimed = w;
			n++;
		}
		pthread_mutex_unlock(&t->inbox_lock);
	}
	return n;
}

void fl_io_stats_answer(struct fl_io *io, const char *json, size_t len)
{
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
		pthread_mutex_lock(&t->inbox_lock);
		struct io_stats_wait *w = t->st_claimed;
		t->st_claimed = NULL;
		pthread_mutex_unlock(&t->inbox_lock);
		if (w == NULL)
			continue;
		if (!t->started) {
			io_stats_drop(w);  /* no loop to write it any more */
			continue;
		}
		struct io_stats_wait *last = w;
		for (struct io_stats_wait *p = w; p; p = p->next) {
			p->json = json ? malloc(len ? len : 1) : NULL;
			if (p->json) {
				memcpy(p->json, json, len);
				p->len = len;
			}
			last = p;
		}
		pthread_mutex_lock(&t->inbox_lock);
		last->next = t->st_ready;
		t->st_ready = w;
		pthread_mutex_unlock(&t->inbox_lock);
		event_active(t->stats_ev, EV_READ, 1);
	}
}

void fl_io_stats(struct fl_io *io, struct fl_io_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->threads = io->nthreads;
	for (unsigned i = 0; i < io->nthreads; i++) {
		struct io_thread *t = &io->th[i];
#define FL_IO_SUM(group, name) s->name += __atomic_load_n(&t->st.name, __ATOMIC_RELAXED);
		FL_IO_STATS(FL_IO_SUM)
#undef FL_IO_SUM
		s->buffered_bytes += __atomic_load_n(&t->buffered_bytes, __ATOMIC_RELAXED);
		uint64_t ns = 0;
		if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) || !t->started)
			s->cpu_ns += t->final_cpu_ns;
		else if (fl_thread_cpu_ns_of(t->tid, &ns) == 0)
			s->cpu_ns += ns;
		else
			s->cpu_unread++;
	}
	pthread_mutex_lock(&io->cipher_lock);
	snprintf(s->listener_cipher, sizeof(s->listener_cipher), "%s", io->cipher);
	pthread_mutex_unlock(&io->cipher_lock);
}

void fl_io_meters(struct fl_io *io, struct fl_meter_sum *s)
{
	for (unsigned i = 0; i < io->nthreads; i++)
		fl_meter_sum_add(s, &io->th[i].meter);
}
