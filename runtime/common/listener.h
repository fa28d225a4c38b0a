/* listener.h: the servers' TCP listener on a libevent loop, with the accept back-off.
 *
 * accept() failing with other than a retriable error (EMFILE, ENFILE, ENOBUFS, ENOMEM)
 * leaves the connection in the backlog, so the listener is readable again at once and the
 * loop would spin on it. The listener then pauses accepting for FL_ACCEPT_PAUSE_MS and
 * tells its owner (to count it); the connections already open keep being served, and what
 * waits in the backlog is taken once descriptors free up. Used by the leaf's and the
 * mock's IO threads, one listener per thread, all on one port (SO_REUSEPORT).
 */
#ifndef FL_LISTENER_H
#define FL_LISTENER_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/listener.h>

#define FL_ACCEPT_PAUSE_MS 100  /* accepting off this long after accept() fails */

struct fl_listener;

struct fl_listener_cfg {
	struct event_base *base;
	const struct sockaddr_storage *addr;  /* port 0: the kernel picks one */
	socklen_t addrlen;
	int backlog;
	unsigned lev_flags;                   /* LEV_OPT_* (REUSEABLE_PORT to share a port) */
	evconnlistener_cb on_accept;
	void (*on_pause)(void *arg);          /* accept failed, accepting paused; may be NULL */
	void *arg;                            /* for both callbacks */
};

/* Bind and listen. NULL on failure with errno set by the step that failed (the caller
 * words the message: it knows the host and port it asked for). */
struct fl_listener *fl_listener_new(const struct fl_listener_cfg *c);

/* The port bound (what port 0 became): 0, or -1 with errno from getsockname. */
int fl_listener_port(const struct fl_listener *l, uint16_t *port);

/* Accept no more, for good (a pending back-off does not turn it on again). From the
 * loop's thread, or before the loop runs. */
void fl_listener_stop(struct fl_listener *l);

/* Close the socket and free; NULL is a no-op. */
void fl_listener_free(struct fl_listener *l);

#endif
