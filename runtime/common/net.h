/* net.h: socket address helpers shared by the leaf, the mock and the driver.
 *
 * Address resolution for listening and connecting, setting the port of a resolved
 * address, and the plain-bind probe that tells whether somebody already holds a port
 * (servers bind with SO_REUSEPORT, which would otherwise share a busy port silently).
 * Nothing here prints; messages go into the caller's buffer (errbuf.h habit).
 */
#ifndef FL_NET_H
#define FL_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The first TCP address getaddrinfo gives for host and port (any family). passive: an
 * address to listen on (AI_PASSIVE). Returns 0, or -1 with err holding getaddrinfo's
 * reason (gai_strerror), for the caller to put after its own words. */
int fl_net_resolve(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss,
	socklen_t *len, char *err, size_t errlen);

/* Set the port of an IPv4 or IPv6 address. */
void fl_net_set_port(struct sockaddr_storage *ss, uint16_t port);

/* Bind a plain socket (SO_REUSEADDR only) to ss and close it again. Returns 0 when that
 * worked (the address is free), else the errno of the step that failed, named in *what
 * ("socket" or "bind"). */
int fl_net_probe_bind(const struct sockaddr_storage *ss, socklen_t len, const char **what);

#endif
