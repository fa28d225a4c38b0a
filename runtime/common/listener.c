/* listener.c: an evconnlistener with a back-off timer for failed accepts (listener.h).
 * libevent hands both of a listener's callbacks the same argument, so the listener
 * registers its own and calls the owner's with the owner's argument. */
#include "listener.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <event2/event.h>

struct fl_listener {
	struct evconnlistener *lis;
	struct event *retry;      /* timer: accepting back on after a failed accept */
	evconnlistener_cb on_accept;
	void (*on_pause)(void *arg);
	void *arg;
	int stopped;
};

static void listener_accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
	struct sockaddr *sa, int salen, void *arg)
{
	struct fl_listener *l = arg;
	l->on_accept(lis, fd, sa, salen, l->arg);
}

static void listener_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fl_listener *l = arg;
	(void)fd;
	(void)what;
	if (!l->stopped)
		evconnlistener_enable(l->lis);
}

static void listener_error_cb(struct evconnlistener *lis, void *arg)
{
	struct fl_listener *l = arg;
	struct timeval pause = { 0, FL_ACCEPT_PAUSE_MS * 1000 };

	evconnlistener_disable(lis);
	if (l->on_pause)
		l->on_pause(l->arg);
	if (!l->stopped)
		event_add(l->retry, &pause);
}

struct fl_listener *fl_listener_new(const struct fl_listener_cfg *c)
{
	struct fl_listener *l = calloc(1, sizeof *l);
	if (l == NULL)
		return NULL;
	l->on_accept = c->on_accept;
	l->on_pause = c->on_pause;
	l->arg = c->arg;
	l->retry = evtimer_new(c->base, listener_retry_cb, l);
	if (l->retry == NULL) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	l->lis = evconnlistener_new_bind(c->base, listener_accept_cb, l, c->lev_flags,
		c->backlog, (const struct sockaddr *)c->addr, (int)c->addrlen);
	if (l->lis == NULL) {
		int e = errno;
		event_free(l->retry);
		free(l);
		errno = e;
		return NULL;
	}
	evconnlistener_set_error_cb(l->lis, listener_error_cb);
	return l;
}

int fl_listener_port(const struct fl_listener *l, uint16_t *port)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof got;

	if (getsockname(evconnlistener_get_fd(l->lis), (struct sockaddr *)&got, &len) != 0)
		return -1;
	*port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port :
		((struct sockaddr_in *)&got)->sin_port);
	return 0;
}

void fl_listener_stop(struct fl_listener *l)
{
	l->stopped = 1;
	event_del(l->retry);
	evconnlistener_disable(l->lis);
}

void fl_listener_free(struct fl_listener *l)
{
	if (l == NULL)
		return;
	evconnlistener_free(l->lis);
	event_free(l->retry);
	free(l);
}
