/* mock_server.c: the mock's setup, IO threads and connections (accept, callbacks, close,
 * stop); the request path is in mock_request.c, the stats in mock_stats.c. */
#define _GNU_SOURCE  /* pthread_setname_np */
#include "mock_server_int.h"

#include "clock.h"
#include "corpus.h"
#include "listener.h"
#include "mock_methods.h"
#include "net.h"
#include "tls.h"
#include "wire.h"
#include "zcodec.h"

#include <errno.h>
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
#include <openssl/err.h>
#include <openssl/ssl.h>

#define MOCK_BACKLOG 1024
#define MOCK_STOP_GRACE_MS 1000  /* pending replies get this long after a stop signal */

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
				mock_request_bad_header(c, FL_WIRE_BAD_MAGIC, &h);
			}
			return;
		}
		if (rc < 0) {
			mock_request_bad_header(c, rc, &h);
			return;
		}
		uint64_t t0_ns = fl_mono_ns();
		MOCK_STAT_ADD(io, bytes_in, FL_WIRE_HDR_BYTES + h.payload_len);
		rc = mock_request_frame(c, &h, payload, t0_ns);
		free(payload);
		if (rc != 0) {
			mock_server_conn_free(c);
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
		mock_server_conn_maybe_close(c);
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
		mock_server_conn_free(c);
	}
}

/* Free c once it owes nothing: no delayed reply pending and its output flushed. */
void mock_server_conn_maybe_close(struct mock_conn *c)
{
	if (!c->pending && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		mock_server_conn_free(c);
}

/* Free c now: cancel its delayed replies and close the socket. */
void mock_server_conn_free(struct mock_conn *c)
{
	struct mock_io *io = c->io;
	while (c->pending) {
		MOCK_STAT_ADD(io, replies_cancelled, 1);
		mock_request_pending_unlink(c->pending);
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
		mock_server_conn_maybe_close(c);
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
		mock_server_conn_free(io->conns);
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

void mock_server_free(struct mock_server *s)
{
	if (!s)
		return;
	if (s->io) {
		srv_stop_threads(s);
		for (unsigned i = 0; i < s->cfg.threads; i++) {
			struct mock_io *io = &s->io[i];
			while (io->conns)
				mock_server_conn_free(io->conns);
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
