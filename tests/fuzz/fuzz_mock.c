/* fuzz_mock.c: leaf -> mock byte stream through fl_wire_pull, zstd, RpcRequest and the method handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frontload.pb-c.h"
#include "fuzz.h"
#include "mock_methods.h"
#include "mock_shape.h"
#include "wire.h"
#include "zcodec.h"

#define FZ_MAX_FRAME (1u << 20)   /* the mock's max_frame_bytes (payload and inflated) */
#define FZ_MAX_REPLY (64u << 10)  /* max_reply_bytes: above the corpus, so replies wrap */
#define FZ_CORPUS 4093u           /* a small prime: offsets and wraps vary */

static struct {
	uint8_t corpus[FZ_CORPUS];
	struct fl_zcodec *z;
	struct fl_bytes dbuf, pack, zout;
	struct mock_shape_cfg shape;
	uint8_t touched;  /* fold of every reply byte read (kept so the reads stay) */
} fz;

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_mock: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < FZ_CORPUS; i++)
		fz.corpus[i] = (uint8_t)(i * 131u + 7u);
	fz.z = fl_zcodec_new(1);
	if (fz.z == NULL)
		fz_die("zstd codec");
	mock_shape_defaults(&fz.shape);
	return 0;
}

/* Read every reply byte, so ASan checks the whole slice the handler handed out. */
static void fz_touch(const uint8_t *p, size_t n)
{
	uint8_t x = 0;

	for (size_t i = 0; i < n; i++)
		x ^= p[i];
	fz.touched ^= x;
}

/* conn_request of mock_request.c without the connection: unpack, dispatch, pack, shape. */
static void fz_request(struct mock_call *call, const struct fl_frame_hdr *h,
	const uint8_t *payload)
{
	const uint8_t *msg = payload;
	size_t msg_len = h->payload_len;
	Frontload__RpcReply reply = FRONTLOAD__RPC_REPLY__INIT;
	Frontload__RpcRequest *rq;
	uint32_t method, latency_us, wait_us;
	int rc;

	if (h->flags & FL_FRAME_ZSTD) {
		if (fl_zcodec_decompress(fz.z, payload, h->payload_len, FZ_MAX_FRAME, &fz.dbuf) != 0)
			return;
		msg = fz.dbuf.data;
		msg_len = fz.dbuf.len;
	}
	rq = frontload__rpc_request__unpack(NULL, msg_len, msg);
	if (rq == NULL)
		return;
	method = rq->method;
	latency_us = rq->latency_us;
	rc = mock_dispatch(call, method, rq->body.data, rq->body.len, &reply);
	if (rc == MOCK_OK) {
		size_t want = rq->body.len < MOCK_REQ_SIZE_BYTES ? 0 :
			(size_t)rq->body.data[0] << 24 | (size_t)rq->body.data[1] << 16 |
			(size_t)rq->body.data[2] << 8 | rq->body.data[3];

		if (method >= MOCK_METHOD_COUNT || reply.method != method ||
		    reply.body.len != (want < FZ_MAX_REPLY ? want : FZ_MAX_REPLY) ||
		    (reply.body.len != 0 && reply.body.data == NULL))
			fz_die("handler reply does not match the request");
		fz_touch(reply.body.data, reply.body.len);
		if (fl_bytes_reserve(&fz.pack, frontload__rpc_reply__get_packed_size(&reply)) != 0)
			fz_die("out of memory");
		fz.pack.len = frontload__rpc_reply__pack(&reply, fz.pack.data);
		if ((h->flags & FL_FRAME_ZSTD) &&
		    fl_zcodec_compress(fz.z, fz.pack.data, fz.pack.len, &fz.zout) != 0)
			fz_die("compression failed");
	} else if (rc != MOCK_ERR_SHORT_BODY && rc != MOCK_ERR_UNKNOWN_METHOD) {
		fz_die(mock_strerror(rc));
	}
	frontload__rpc_request__free_unpacked(rq, NULL);
	(void)mock_method_name(method);
	if (mock_shape_decide(&fz.shape, latency_us, &wait_us) >= MOCK_SHAPE_ACTIONS)
		fz_die("bad shape action");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *in = evbuffer_new();
	struct mock_call call = { fz.corpus, FZ_CORPUS, FZ_MAX_REPLY, NULL, 0 };

	if (in == NULL)
		fz_die("out of memory");
	evbuffer_add(in, data, size / 2);
	evbuffer_add(in, data + size / 2, size - size / 2);
	for (;;) {
		struct fl_frame_hdr h;
		uint8_t *payload;

		if (fl_wire_pull(in, FZ_MAX_FRAME, &h, &payload) != FL_WIRE_FRAME)
			break;
		if (h.type == FL_MSG_REQUEST)
			fz_request(&call, &h, payload);
		free(payload);
	}
	mock_call_release(&call);
	evbuffer_free(in);
	return 0;
}
