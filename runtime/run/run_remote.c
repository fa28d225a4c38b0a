/* run_remote.c: a STATS frame to a remote leaf or mock and its reply (run_remote.h). */
#define _GNU_SOURCE
#include "run_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "cli.h"
#include "clock.h"
#include "frontload.pb-c.h"
#include "run_clock.h"
#include "wire.h"

/* The server's ErrorReply text, or a stand-in when it has none. */
static void remote_error_text(const uint8_t *payload, size_t len, char *out, size_t outlen)
{
	Frontload__ErrorReply *er = len ? frontload__error_reply__unpack(NULL, len, payload) :
		NULL;
	snprintf(out, outlen, "%s", er && er->message ? er->message : "(no message)");
	if (er)
		frontload__error_reply__free_unpacked(er, NULL);
}

json_t *fl_remote_parse_reply(const struct fl_frame_hdr *h, uint64_t request_id,
	const uint8_t *payload, size_t len, char *err, size_t errlen)
{
	char msg[256];
	json_error_t je;

	if (h->type != FL_MSG_REPLY || h->request_id != request_id) {
		snprintf(err, errlen, "answer is not the reply to the STATS frame (type %u, id "
			"%llu)", (unsigned)h->type, (unsigned long long)h->request_id);
		return NULL;
	}
	if (h->status != FL_STATUS_OK) {
		remote_error_text(payload, len, msg, sizeof msg);
		snprintf(err, errlen, "STATS refused (%s): %s", fl_status_name(h->status), msg);
		return NULL;
	}
	if (h->flags & FL_FRAME_ZSTD) {
		snprintf(err, errlen, "stats reply is compressed; a STATS answer never is");
		return NULL;
	}
	json_t *j = json_loadb((const char *)payload, len, 0, &je);
	if (!json_is_object(j)) {
		snprintf(err, errlen, "stats reply is not a JSON object: %s", j ? "not an "
			"object" : je.text);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* ---- a blocking connection with timeouts ---- */

struct fl_remote {
	int fd;
	SSL *ssl;        /* NULL: plain TCP */
	uint64_t next_id; /* request ids on this connection */
};

static int remote_connect(const char *addr, double timeout_s, int *fd_out, char *err,
	size_t errlen)
{
	char host[256], port_s[8];
	uint16_t port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;

	if (fl_cli_hostport(addr, host, sizeof host, &port) != 0) {
		snprintf(err, errlen, "'%s' is not HOST:PORT", addr);
		return -1;
	}
	snprintf(port_s, sizeof port_s, "%u", (unsigned)port);
	int rc = getaddrinfo(host, port_s, &hints, &res);
	if (rc != 0 || res == NULL) {
		snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	rc = connect(fd, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (rc != 0 && errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		rc = poll(&p, 1, (int)(timeout_s * 1000));
		if (rc == 0)
			errno = ETIMEDOUT;
		else if (rc > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0)
			errno = soerr;
		rc = rc > 0 && soerr == 0 ? 0 : -1;
	}
	if (rc != 0) {
		snprintf(err, errlen, "connect to %s: %s", addr, strerror(errno));
		close(fd);
		return -1;
	}
	/* Blocking from here on, each call bounded by the socket timeouts. */
	struct timeval tv = { (time_t)timeout_s,
		(suseconds_t)((timeout_s - floor(timeout_s)) * 1e6) };
	int one = 1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	*fd_out = fd;
	return 0;
}

static int remote_io(struct fl_remote *c, void *buf, size_t n, int writing)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t k;
		if (c->ssl) {
			int m = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
			k = writing ? SSL_write(c->ssl, p, m) : SSL_read(c->ssl, p, m);
		} else {
			k = writing ? write(c->fd, p, n) : read(c->fd, p, n);
			if (k < 0 && errno == EINTR)
				continue;
		}
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

struct fl_remote *fl_remote_open(const char *addr, struct ssl_ctx_st *tls, double timeout_s,
	char *err, size_t errlen)
{
	struct fl_remote *c = calloc(1, sizeof *c);

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->next_id = 1;
	if (remote_connect(addr, timeout_s, &c->fd, err, errlen) != 0) {
		free(c);
		return NULL;
	}
	if (tls != NULL) {
		c->ssl = SSL_new(tls);
		if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1 || SSL_connect(c->ssl) != 1) {
			snprintf(err, errlen, "TLS handshake with %s failed (a certificate from "
				"another --tls-dir, or a plain server?)", addr);
			fl_remote_close(c);
			return NULL;
		}
	}
	return c;
}

void fl_remote_close(struct fl_remote *c)
{
	if (c == NULL)
		return;
	if (c->ssl) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	close(c->fd);
	free(c);
}

int fl_remote_exchange(struct fl_remote *c, enum fl_msg_type type, const void *body,
	size_t len, struct fl_remote_reply *out, char *err, size_t errlen)
{
	uint8_t raw[FL_WIRE_HDR_BYTES];
	struct fl_frame_hdr h;

	memset(out, 0, sizeof *out);
	out->request_id = c->next_id++;
	out->t0_ns = fl_wall_ns();
	fl_hdr_init(&h, type, out->request_id, out->t0_ns);
	h.payload_len = (uint32_t)len;
	fl_hdr_encode(&h, raw);
	errno = 0;
	if (remote_io(c, raw, sizeof raw, 1) != 0 ||
	    (len > 0 && remote_io(c, (void *)body, len, 1) != 0)) {
		snprintf(err, errlen, "sending the frame: %s", errno ? strerror(errno) : "failed");
		return -1;
	}
	if (remote_io(c, raw, sizeof raw, 0) != 0) {
		snprintf(err, errlen, "no answer to STATS: %s", errno == EAGAIN ? "timed out" :
			errno ? strerror(errno) : "connection closed (a server without STATS?)");
		return -1;
	}
	int rc = fl_hdr_decode(raw, &out->hdr, FL_REMOTE_MAX_REPLY_BYTES);
	if (rc != FL_WIRE_FRAME) {
		snprintf(err, errlen, "bad reply header: %s", fl_wire_strerror(rc));
		return -1;
	}
	out->payload = malloc(out->hdr.payload_len ? out->hdr.payload_len : 1);
	if (out->payload == NULL || remote_io(c, out->payload, out->hdr.payload_len, 0) != 0) {
		snprintf(err, errlen, "reading the %u-byte reply: %s", out->hdr.payload_len,
			out->payload ? "short read" : "out of memory");
		free(out->payload);
		out->payload = NULL;
		return -1;
	}
	out->t3_ns = fl_wall_ns();
	return 0;
}

json_t *fl_remote_stats(const char *addr, struct ssl_ctx_st *tls, double timeout_s,
	struct fl_clock_sample *clk, char *err, size_t errlen)
{
	struct fl_remote_reply rep;
	json_t *j = NULL;
	struct fl_remote *c = fl_remote_open(addr, tls, timeout_s, err, errlen);

	if (c == NULL)
		return NULL;
	if (fl_remote_exchange(c, FL_MSG_STATS, NULL, 0, &rep, err, errlen) == 0) {
		j = fl_remote_parse_reply(&rep.hdr, rep.request_id, rep.payload,
			rep.hdr.payload_len, err, errlen);
		json_t *ts = json_object_get(j, "snapshot_wall_ns");
		if (json_is_integer(ts) && json_integer_value(ts) > 0)
			fl_clock_add(clk, rep.t0_ns, (uint64_t)json_integer_value(ts), rep.t3_ns);
		free(rep.payload);
	}
	fl_remote_close(c);
	return j;
}
