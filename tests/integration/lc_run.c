/* lc_run.c: leaf-client's pipelined run: the connections, their events (connected, readable,
 * closed), the whole-run deadline, and the loop that ends when every request is answered,
 * every connection is gone or the deadline passes. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>

#include "clock.h"
#include "leaf_client.h"
#include "tls.h"

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

int lc_run(struct lc_client *cl)
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
