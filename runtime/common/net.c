/* net.c: address resolution and the plain-bind port probe (net.h). */
#include "net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"

int fl_net_resolve(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss,
	socklen_t *len, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	char portstr[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
	int rc = getaddrinfo(host, portstr, &hints, &res);
	if (rc != 0 || res == NULL) {
		fl_errf(err, errlen, "%s", rc != 0 ? gai_strerror(rc) : "no address");
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

void fl_net_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

int fl_net_probe_bind(const struct sockaddr_storage *ss, socklen_t len, const char **what)
{
	int one = 1, e;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*what = "socket";
		return errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	e = bind(fd, (const struct sockaddr *)ss, len) == 0 ? 0 : errno;
	close(fd);
	*what = "bind";
	return e;
}
