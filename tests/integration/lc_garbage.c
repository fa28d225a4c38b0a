/* lc_garbage.c: leaf-client's fault injection (--garbage MODE): one bad input on a new
 * connection (a frame with one thing wrong, or noise) and what the server did about it. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>

#include "clock.h"
#include "frontload.pb-c.h"
#include "leaf_client.h"
#include "rng.h"

struct lc_garbage {
	struct lc_client *cl;
	struct bufferevent *bev;
	int half_close;          /* shut our write side once the bytes are out */
	int done;
	char outcome[32];        /* "reply", "closed", "reset", "timeout", "connect" */
	int have_reply;
	struct fl_frame_hdr reply;
	char message[256];       /* ErrorReply text, if any */
};

static void lc_g_finish(struct lc_garbage *g, const char *outcome)
{
	if (g->done)
		return;
	g->done = 1;
	snprintf(g->outcome, sizeof g->outcome, "%s", outcome);
	event_base_loopbreak(g->cl->base);
}

static void lc_g_read(struct bufferevent *bev, void *arg)
{
	struct lc_garbage *g = arg;
	struct fl_frame_hdr h;
	uint8_t *payload = NULL;
	int rc = fl_wire_pull(bufferevent_get_input(bev), g->cl->o.max_frame_bytes, &h, &payload);
	if (rc == FL_WIRE_NEED_MORE)
		return;
	if (rc < 0) {
		snprintf(g->message, sizeof g->message, "server sent a bad frame: %s",
			fl_wire_strerror(rc));
		lc_g_finish(g, "bad-reply");
		return;
	}
	g->have_reply = 1;
	g->reply = h;
	if (h.status != FL_STATUS_OK && payload) {
		Frontload__ErrorReply *e = frontload__error_reply__unpack(NULL, h.payload_len, payload);
		if (e) {
			snprintf(g->message, sizeof g->message, "%s", e->message);
			frontload__error_reply__free_unpacked(e, NULL);
		}
	}
	free(payload);
	lc_g_finish(g, "reply");
}

static void lc_g_write(struct bufferevent *bev, void *arg)
{
	struct lc_garbage *g = arg;
	if (!g->half_close)
		return;
	g->half_close = 0;
	if (g->cl->o.tls) {
		/* TLS has no half close: drop the connection; nothing can come back. */
		lc_g_finish(g, "client-closed");
		return;
	}
	shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void lc_g_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct lc_garbage *g = arg;
	if (what & BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_EOF)
		lc_g_finish(g, "closed");
	else if (what & BEV_EVENT_ERROR)
		lc_g_finish(g, EVUTIL_SOCKET_ERROR() == ECONNREFUSED ? "connect" : "reset");
}

static void lc_g_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lc_g_finish(arg, "timeout");
}

static const char *const lc_garbage_modes[] = {
	"bad-magic", "bad-version", "bad-type", "bad-flags", "truncated", "oversized", "random",
	"bad-payload", "bad-zstd", "expired-head", NULL,
};

int lc_garbage_known(const char *mode)
{
	int known = 0;
	for (size_t k = 0; lc_garbage_modes[k]; k++)
		known |= !strcmp(mode, lc_garbage_modes[k]);
	return known;
}

/* Bytes for mode into out: a frame with one thing wrong (the rest valid, so a server that
 * skipped the check would act on it), or noise. */
static void lc_g_bytes(struct lc_client *cl, const char *mode, struct evbuffer *out,
	int *half_close)
{
	struct fl_frame_hdr h;
	uint8_t hdr[FL_WIRE_HDR_BYTES];
	struct fl_rng r;
	fl_rng_seed(&r, cl->o.seed);
	cl->slots = calloc(1, sizeof *cl->slots);
	if (!cl->slots)
		lc_die("out of memory");
	if (cl->o.rpc)
		lc_build_rpc(cl, 0);
	else
		lc_build_leaf(cl, 0);
	fl_hdr_init(&h, FL_MSG_REQUEST, 1, fl_wall_ns());
	h.payload_len = (uint32_t)cl->pack.len;
	const void *payload = cl->pack.data;
	size_t plen = cl->pack.len;
	uint8_t junk[4096];
	for (size_t k = 0; k < sizeof junk; k++)
		junk[k] = (uint8_t)fl_rng_next(&r);
	if (!strcmp(mode, "bad-magic")) {
		h.magic = 0x58585858u;
	} else if (!strcmp(mode, "bad-version")) {
		h.version = FL_WIRE_VERSION + 7;
	} else if (!strcmp(mode, "bad-type")) {
		h.type = 77;
	} else if (!strcmp(mode, "bad-flags")) {
		h.flags = 0x8000;
	} else if (!strcmp(mode, "truncated")) {
		*half_close = 1;
		fl_hdr_encode(&h, hdr);
		size_t half = (FL_WIRE_HDR_BYTES + plen) / 2;
		if (half <= FL_WIRE_HDR_BYTES) {
			evbuffer_add(out, hdr, half);
		} else {
			evbuffer_add(out, hdr, sizeof hdr);
			evbuffer_add(out, payload, half - FL_WIRE_HDR_BYTES);
		}
		return;
	} else if (!strcmp(mode, "oversized")) {
		h.payload_len = 0xfffffff0u;
		payload = junk;
		plen = 1024;
	} else if (!strcmp(mode, "random")) {
		evbuffer_add(out, junk, sizeof junk);
		return;
	} else if (!strcmp(mode, "bad-payload")) {
		/* 0xff bytes: a varint that never ends, which no protobuf decoder accepts. */
		memset(junk, 0xff, 64);
		payload = junk;
		plen = 64;
		h.payload_len = (uint32_t)plen;
	} else if (!strcmp(mode, "bad-zstd")) {
		h.flags = FL_FRAME_ZSTD;
	} else if (!strcmp(mode, "expired-head")) {
		/* A good request whose deadline passed long ago, and only half its payload:
		 * a server that judges the header answers now; one that waits for the whole
		 * frame stays silent (the connection stays open). */
		h.deadline_ns = 1;
		fl_hdr_encode(&h, hdr);
		evbuffer_add(out, hdr, sizeof hdr);
		evbuffer_add(out, payload, plen / 2);
		return;
	} else {
		lc_die("unknown --garbage mode '%s'", mode);
	}
	fl_hdr_encode(&h, hdr);
	evbuffer_add(out, hdr, sizeof hdr);
	evbuffer_add(out, payload, plen);
}

/* Send one bad input and report what the server did. Passes (0) on an error reply or a
 * close; fails (1) on an OK reply, on silence until the deadline, or no connection. */
int lc_run_garbage(struct lc_client *cl)
{
	struct lc_garbage g = { .cl = cl };
	cl->o.requests = 1;
	g.bev = lc_connect(cl);
	if (!g.bev)
		lc_die("connect to %s:%u failed: %s", cl->o.host, cl->o.port, strerror(errno));
	bufferevent_setcb(g.bev, lc_g_read, lc_g_write, lc_g_event, &g);
	bufferevent_enable(g.bev, EV_READ | EV_WRITE);
	lc_g_bytes(cl, cl->o.garbage, bufferevent_get_output(g.bev), &g.half_close);
	struct timeval tv = { (time_t)cl->o.timeout_s,
		(suseconds_t)((cl->o.timeout_s - floor(cl->o.timeout_s)) * 1e6) };
	struct event *tev = evtimer_new(cl->base, lc_g_timeout, &g);
	evtimer_add(tev, &tv);
	event_base_dispatch(cl->base);
	event_free(tev);
	bufferevent_free(g.bev);
	/* Let libevent run the deferred finalizers of the freed bufferevent (its SSL). */
	event_base_loop(cl->base, EVLOOP_NONBLOCK);

	int ok = !strcmp(g.outcome, "closed") || !strcmp(g.outcome, "reset") ||
		!strcmp(g.outcome, "client-closed") ||
		(!strcmp(g.outcome, "reply") && g.reply.status != FL_STATUS_OK);
	if (!cl->o.quiet) {
		printf("garbage %s: %s", cl->o.garbage, g.outcome);
		if (g.have_reply)
			printf(" status %u (%s)", g.reply.status, g.reply.status < LC_NSTATUS ?
				lc_status_key[g.reply.status] : "unknown");
		if (g.message[0])
			printf(" \"%s\"", g.message);
		printf("%s\n", ok ? "" : " -- FAIL");
	}
	if (cl->o.json) {
		json_t *j = json_pack("{s:s,s:s,s:i,s:s,s:b}", "garbage", cl->o.garbage,
			"outcome", g.outcome, "status", g.have_reply ? (int)g.reply.status : -1,
			"message", g.message, "pass", ok);
		if (!j || lc_write_json(cl->o.json, j) < 0)
			ok = 0;
		json_decref(j);
	}
	if (!ok)
		fprintf(stderr, "leaf-client: garbage %s: server %s\n", cl->o.garbage,
			!strcmp(g.outcome, "timeout") ? "neither replied nor closed before the deadline" :
			!strcmp(g.outcome, "reply") ? "accepted the bad input (status OK)" :
			g.message[0] ? g.message : "could not be reached");
	return ok ? 0 : 1;
}
