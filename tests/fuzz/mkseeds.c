/* mkseeds.c: writes the frame and mock seed corpora: real frames built with the project's encoders.
 *
 * Run by hand when the wire or the messages change:
 *   cc -std=gnu11 -Wall -Wextra -I runtime/common -I GEN tests/fuzz/mkseeds.c
 *     runtime/common/wire.c runtime/common/zcodec.c GEN/frontload.pb-c.c
 *     $(pkg-config --libs libevent libzstd libprotobuf-c) -o mkseeds && ./mkseeds tests/fuzz/corpus
 * (GEN holds protoc-c's output for runtime/common/frontload.proto.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frontload.pb-c.h"
#include "wire.h"
#include "zcodec.h"

static const char *seed_dir;
static struct fl_zcodec *seed_z;

static void seed_die(const char *what)
{
	fprintf(stderr, "mkseeds: %s\n", what);
	exit(1);
}

/* Append one frame of type with payload (zstd-compressed first when zstd). */
static void seed_frame(struct evbuffer *out, enum fl_msg_type type, uint64_t id,
	const uint8_t *payload, size_t len, int zstd)
{
	struct fl_frame_hdr h;
	struct fl_bytes z = { 0 };

	fl_hdr_init(&h, type, id, 1000000u + id);
	if (zstd) {
		if (fl_zcodec_compress(seed_z, payload, len, &z) != 0)
			seed_die("compress");
		payload = z.data;
		len = z.len;
		h.flags = FL_FRAME_ZSTD;
	}
	if (fl_wire_push(out, &h, payload, len) != 0)
		seed_die("push");
	fl_bytes_free(&z);
}

static void seed_write(const char *target, const char *name, struct evbuffer *b)
{
	char path[4096];
	size_t n = evbuffer_get_length(b);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", seed_dir, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(evbuffer_pullup(b, -1), 1, n, f) != n || fclose(f) != 0)
		seed_die(path);
	evbuffer_drain(b, n);
}

/* A LeafRequest with nstories stories of story_len bytes each. */
static void seed_leaf(struct evbuffer *out, uint64_t id, int method, int nstories,
	size_t story_len, size_t padding, int want_zstd, uint32_t reply_bytes, int zstd)
{
	Frontload__LeafRequest rq = FRONTLOAD__LEAF_REQUEST__INIT;
	Frontload__Story st[16], *stp[16];
	uint8_t body[16][256], pad[512];
	size_t n;
	uint8_t *buf;

	for (int i = 0; i < nstories; i++) {
		frontload__story__init(&st[i]);
		for (size_t k = 0; k < story_len; k++)
			body[i][k] = (uint8_t)(k * 7u + (unsigned)i * 13u);
		st[i].id = 100u + (unsigned)i;
		st[i].body.data = body[i];
		st[i].body.len = story_len;
		stp[i] = &st[i];
	}
	memset(pad, 'p', sizeof(pad));
	rq.method = (Frontload__InboundMethod)method;
	rq.session_id = 42;
	rq.user_id = 7;
	rq.n_stories = (size_t)nstories;
	rq.stories = nstories ? stp : NULL;
	rq.padding.data = padding ? pad : NULL;
	rq.padding.len = padding;
	rq.want_zstd = want_zstd;
	rq.reply_bytes = reply_bytes;
	n = frontload__leaf_request__get_packed_size(&rq);
	buf = malloc(n ? n : 1);
	if (buf == NULL)
		seed_die("out of memory");
	frontload__leaf_request__pack(&rq, buf);
	seed_frame(out, FL_MSG_REQUEST, id, buf, n, zstd);
	free(buf);
}

/* An RpcRequest asking method for want bytes, the body filled to body_len. */
static void seed_rpc(struct evbuffer *out, uint64_t id, uint32_t method, uint32_t want,
	size_t body_len, uint32_t latency_us, int zstd)
{
	Frontload__RpcRequest rq = FRONTLOAD__RPC_REQUEST__INIT;
	uint8_t body[256], buf[512];
	size_t n;

	memset(body, 'b', sizeof(body));
	if (body_len >= 4) {
		body[0] = (uint8_t)(want >> 24);
		body[1] = (uint8_t)(want >> 16);
		body[2] = (uint8_t)(want >> 8);
		body[3] = (uint8_t)want;
	}
	rq.method = method;
	rq.latency_us = latency_us;
	rq.body.data = body;
	rq.body.len = body_len;
	n = frontload__rpc_request__pack(&rq, buf);
	seed_frame(out, FL_MSG_REQUEST, id, buf, n, zstd);
}

int main(int argc, char **argv)
{
	struct evbuffer *b = evbuffer_new();

	if (argc != 2 || b == NULL || (seed_z = fl_zcodec_new(3)) == NULL)
		seed_die("usage: mkseeds CORPUS-DIR (with frame/ and mock/ in it)");
	seed_dir = argv[1];

	seed_leaf(b, 1, 0, 2, 64, 0, 0, 0, 0);
	seed_write("frame", "plain_two_stories", b);
	seed_leaf(b, 2, 1, 3, 200, 300, 1, 100, 1);
	seed_write("frame", "zstd_want_zstd", b);
	seed_frame(b, FL_MSG_PING, 3, NULL, 0, 0);
	seed_leaf(b, 4, 4, 1, 16, 0, 0, 0, 0);
	seed_leaf(b, 5, 4, 12, 32, 0, 1, 0, 0);
	seed_write("frame", "ping_then_pipelined", b);
	seed_frame(b, FL_MSG_REQUEST, 6, NULL, 0, 0);
	seed_write("frame", "empty_request", b);
	seed_leaf(b, 7, 3, 0, 0, 0, 0, 5000, 1);
	seed_write("frame", "zstd_no_stories", b);

	seed_rpc(b, 1, 0, 100, 32, 50, 0);
	seed_write("mock", "mcget_small", b);
	seed_rpc(b, 2, 19, 10000, 64, 150, 1);
	seed_write("mock", "zstd_wraps_corpus", b);
	seed_frame(b, FL_MSG_PING, 3, NULL, 0, 0);
	seed_rpc(b, 4, 7, 0, 4, 500, 0);
	seed_rpc(b, 5, 3, 1, 2, 0, 0);
	seed_write("mock", "ping_zero_short", b);
	seed_rpc(b, 6, 25, 10, 8, 0, 0);
	seed_write("mock", "unknown_method", b);

	evbuffer_free(b);
	fl_zcodec_free(seed_z);
	return 0;
}
