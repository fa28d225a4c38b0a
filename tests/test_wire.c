/* test_wire.c: frame header, evbuffer framing, protobuf-c payloads and zstd codec (wire.c, zcodec.c).
 *
 * Random tests draw from a splitmix64 stream whose seed is printed; set FL_TEST_SEED to
 * replay one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frontload.pb-c.h"
#include "wire.h"
#include "zcodec.h"

#define TEST_SEED_DEFAULT 0x5eed0002ull /* test_seed() without FL_TEST_SEED */
#include "testutil.h"

#define MAX_PAYLOAD (1u << 20)  /* receiver limit used by most tests (bytes) */
#define FUZZ_ROUNDS 2000u       /* random inputs per robustness test */

static void test_fill_random(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)test_rand(s);
}

/* A header with every field at a value whose bytes are all distinct. */
static void test_distinct_hdr(struct fl_frame_hdr *h)
{
	fl_hdr_init(h, FL_MSG_REPLY, 0x1122334455667788ull, 0x99aabbccddeeff01ull);
	h->flags = FL_FRAME_ZSTD;
	h->payload_len = 0x000a0b0cu;
	h->status = FL_STATUS_STALE;
	h->server_ns = 0x0203040506070809ull;
}

/* Encode h and return the 40 bytes as a fresh header's raw form. */
static void test_encode(const struct fl_frame_hdr *h, uint8_t raw[FL_WIRE_HDR_BYTES])
{
	memset(raw, 0xee, FL_WIRE_HDR_BYTES);
	fl_hdr_encode(h, raw);
}

/* 1: every field survives encode/decode, and the bytes sit at the documented offsets. */
static void test_hdr_round_trip(void **state)
{
	struct fl_frame_hdr h, d;
	uint8_t raw[FL_WIRE_HDR_BYTES];
	static const uint8_t want_head[16] = {
		'F', 'L', 'W', '1', 1, 2, 0x00, 0x01,
		0x00, 0x0a, 0x0b, 0x0c, 0x00, 0x00, 0x00, 0x04,
	};

	(void)state;
	test_distinct_hdr(&h);
	test_encode(&h, raw);
	assert_memory_equal(raw, want_head, sizeof(want_head));
	assert_int_equal(raw[16], 0x11);
	assert_int_equal(raw[23], 0x88);
	assert_int_equal(raw[24], 0x99);
	assert_int_equal(raw[31], 0x01);
	assert_int_equal(raw[32], 0x02);
	assert_int_equal(raw[39], 0x09);

	memset(&d, 0, sizeof(d));
	assert_int_equal(fl_hdr_decode(raw, &d, MAX_PAYLOAD), FL_WIRE_FRAME);
	assert_int_equal(d.magic, FL_WIRE_MAGIC);
	assert_int_equal(d.version, FL_WIRE_VERSION);
	assert_int_equal(d.type, FL_MSG_REPLY);
	assert_int_equal(d.flags, FL_FRAME_ZSTD);
	assert_int_equal(d.payload_len, 0x000a0b0cu);
	assert_int_equal(d.status, FL_STATUS_STALE);
	assert_true(d.request_id == 0x1122334455667788ull);
	assert_true(d.client_ts_ns == 0x99aabbccddeeff01ull);
	assert_true(d.server_ns == 0x0203040506070809ull);

	/* fl_hdr_init leaves the reply-only fields zero. */
	fl_hdr_init(&h, FL_MSG_PING, 7, 8);
	assert_int_equal(h.flags, 0);
	assert_int_equal(h.payload_len, 0);
	assert_int_equal(h.status, 0);
	assert_true(h.server_ns == 0);
}

/* Decode raw after applying one byte edit; h still carries the request id. */
static int test_decode_edited(size_t off, uint8_t val, uint32_t max_payload)
{
	struct fl_frame_hdr h;
	uint8_t raw[FL_WIRE_HDR_BYTES];
	int rc;

	test_distinct_hdr(&h);
	test_encode(&h, raw);
	raw[off] = val;
	memset(&h, 0, sizeof(h));
	rc = fl_hdr_decode(raw, &h, max_payload);
	assert_true(h.request_id == 0x1122334455667788ull);
	return rc;
}

/* 2: each header fault returns its own code, checked in header order. */
static void test_hdr_errors(void **state)
{
	struct fl_frame_hdr h;
	uint8_t raw[FL_WIRE_HDR_BYTES];

	(void)state;
	assert_int_equal(test_decode_edited(0, 'G', MAX_PAYLOAD), FL_WIRE_BAD_MAGIC);
	assert_int_equal(test_decode_edited(3, '2', MAX_PAYLOAD), FL_WIRE_BAD_MAGIC);
	assert_int_equal(test_decode_edited(4, 0, MAX_PAYLOAD), FL_WIRE_BAD_VERSION);
	assert_int_equal(test_decode_edited(4, 2, MAX_PAYLOAD), FL_WIRE_BAD_VERSION);
	assert_int_equal(test_decode_edited(5, 0, MAX_PAYLOAD), FL_WIRE_BAD_TYPE);
	assert_int_equal(test_decode_edited(5, FL_MSG_TYPE_MAX + 1, MAX_PAYLOAD),
		FL_WIRE_BAD_TYPE);
	assert_int_equal(test_decode_edited(5, 0xff, MAX_PAYLOAD), FL_WIRE_BAD_TYPE);
	assert_int_equal(test_decode_edited(5, FL_MSG_TYPE_MAX, MAX_PAYLOAD), FL_WIRE_FRAME);
	assert_int_equal(test_decode_edited(7, 0x02, MAX_PAYLOAD), FL_WIRE_BAD_FLAGS);
	assert_int_equal(test_decode_edited(6, 0x80, MAX_PAYLOAD), FL_WIRE_BAD_FLAGS);
	assert_int_equal(test_decode_edited(7, 0x00, MAX_PAYLOAD), FL_WIRE_FRAME);
	/* payload_len is 0x000a0b0c: one above, at, and one below the limit. */
	assert_int_equal(test_decode_edited(0, 'F', 0x000a0b0bu), FL_WIRE_TOO_LONG);
	assert_int_equal(test_decode_edited(0, 'F', 0x000a0b0cu), FL_WIRE_FRAME);
	assert_int_equal(test_decode_edited(8, 0xff, UINT32_MAX), FL_WIRE_FRAME);
	assert_int_equal(test_decode_edited(8, 0xff, MAX_PAYLOAD), FL_WIRE_TOO_LONG);

	/* Several faults at once: the first in header order wins. */
	test_distinct_hdr(&h);
	h.version = 9;
	h.type = 0;
	h.flags = 0xffff;
	h.payload_len = UINT32_MAX;
	test_encode(&h, raw);
	assert_int_equal(fl_hdr_decode(raw, &h, 0), FL_WIRE_BAD_VERSION);
	memset(raw, 0, sizeof(raw));
	assert_int_equal(fl_hdr_decode(raw, &h, 0), FL_WIRE_BAD_MAGIC);
}

/* Append one frame built with fl_wire_push. */
static void test_push(struct evbuffer *b, enum fl_msg_type type, uint64_t id,
	const void *payload, size_t len)
{
	struct fl_frame_hdr h;

	fl_hdr_init(&h, type, id, id * 3);
	assert_int_equal(fl_wire_push(b, &h, payload, len), 0);
	assert_int_equal(h.payload_len, len);
}

/* 3: a frame trickling in one byte at a time is taken only when its last byte lands; its
 * header can be peeked at from its 40th byte. */
static void test_pull_byte_at_a_time(void **state)
{
	struct evbuffer *src = evbuffer_new(), *in = evbuffer_new();
	struct fl_frame_hdr h;
	uint8_t *payload = (uint8_t *)"x", msg[300], c;
	size_t total;

	(void)state;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	test_push(src, FL_MSG_REQUEST, 42, msg, sizeof(msg));
	total = evbuffer_get_length(src);
	assert_int_equal(total, FL_WIRE_HDR_BYTES + sizeof(msg));

	for (size_t i = 0; i + 1 < total; i++) {
		assert_int_equal(evbuffer_remove(src, &c, 1), 1);
		assert_int_equal(evbuffer_add(in, &c, 1), 0);
		assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_NEED_MORE);
		assert_null(payload);
		assert_int_equal(evbuffer_get_length(in), i + 1);
		/* The header alone is readable from its 40th byte on, and peeking takes nothing. */
		if (i + 1 < FL_WIRE_HDR_BYTES) {
			assert_int_equal(fl_wire_peek(in, MAX_PAYLOAD, &h), FL_WIRE_NEED_MORE);
		} else {
			memset(&h, 0, sizeof(h));
			assert_int_equal(fl_wire_peek(in, MAX_PAYLOAD, &h), FL_WIRE_FRAME);
			assert_true(h.request_id == 42);
			assert_int_equal(h.payload_len, sizeof(msg));
		}
		assert_int_equal(evbuffer_get_length(in), i + 1);
	}
	assert_int_equal(evbuffer_remove(src, &c, 1), 1);
	assert_int_equal(evbuffer_add(in, &c, 1), 0);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_FRAME);
	assert_int_equal(h.type, FL_MSG_REQUEST);
	assert_true(h.request_id == 42);
	assert_true(h.client_ts_ns == 126);
	assert_int_equal(h.payload_len, sizeof(msg));
	assert_non_null(payload);
	assert_memory_equal(payload, msg, sizeof(msg));
	assert_int_equal(evbuffer_get_length(in), 0);
	free(payload);
	evbuffer_free(src);
	evbuffer_free(in);
}

/* 4: pipelined frames in one buffer come out in order, and then NEED_MORE. */
static void test_pull_pipelined(void **state)
{
	struct evbuffer *in = evbuffer_new();
	struct fl_frame_hdr h;
	uint8_t *payload;

	(void)state;
	test_push(in, FL_MSG_REQUEST, 1, "first", 5);
	test_push(in, FL_MSG_REPLY, 2, "second frame", 12);
	test_push(in, FL_MSG_PING, 3, NULL, 0);
	evbuffer_add(in, "FLW", 3);  /* the start of a fourth */

	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_FRAME);
	assert_true(h.request_id == 1);
	assert_int_equal(h.payload_len, 5);
	assert_memory_equal(payload, "first", 5);
	free(payload);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_FRAME);
	assert_true(h.request_id == 2);
	assert_int_equal(h.type, FL_MSG_REPLY);
	assert_int_equal(h.payload_len, 12);
	assert_memory_equal(payload, "second frame", 12);
	free(payload);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_FRAME);
	assert_true(h.request_id == 3);
	assert_int_equal(h.type, FL_MSG_PING);
	assert_null(payload);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_NEED_MORE);
	assert_int_equal(evbuffer_get_length(in), 3);
	evbuffer_free(in);
}

/* 5: an oversized frame is refused once its 40 header bytes are in, with no payload
 * yet; bad headers leave the buffer untouched. */
static void test_pull_oversized_early(void **state)
{
	struct evbuffer *in = evbuffer_new();
	struct fl_frame_hdr h;
	uint8_t raw[FL_WIRE_HDR_BYTES], *payload;

	(void)state;
	fl_hdr_init(&h, FL_MSG_REQUEST, 77, 0);
	h.payload_len = MAX_PAYLOAD + 1;
	test_encode(&h, raw);
	evbuffer_add(in, raw, FL_WIRE_HDR_BYTES - 1);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_NEED_MORE);
	evbuffer_add(in, raw + FL_WIRE_HDR_BYTES - 1, 1);
	memset(&h, 0, sizeof(h));
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_TOO_LONG);
	assert_null(payload);
	assert_true(h.request_id == 77);  /* for the error reply */
	assert_int_equal(evbuffer_get_length(in), FL_WIRE_HDR_BYTES);
	/* The same header under a larger limit just waits for the payload. */
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD + 1, &h, &payload), FL_WIRE_NEED_MORE);

	evbuffer_drain(in, evbuffer_get_length(in));
	raw[5] = 0;
	evbuffer_add(in, raw, FL_WIRE_HDR_BYTES);
	assert_int_equal(fl_wire_pull(in, MAX_PAYLOAD, &h, &payload), FL_WIRE_BAD_TYPE);
	assert_int_equal(evbuffer_get_length(in), FL_WIRE_HDR_BYTES);
	evbuffer_free(in);
}

/* 6: a zero-length payload gives a NULL pointer and consumes exactly the header. */
static void test_pull_empty_payload(void **state)
{
	struct evbuffer *in = evbuffer_new();
	struct fl_frame_hdr h;
	uint8_t *payload = (uint8_t *)"x";

	(void)state;
	test_push(in, FL_MSG_PONG, 9, "ignored", 0);
	assert_int_equal(evbuffer_get_length(in), FL_WIRE_HDR_BYTES);
	assert_int_equal(fl_wire_pull(in, 0, &h, &payload), FL_WIRE_FRAME);
	assert_null(payload);
	assert_int_equal(h.payload_len, 0);
	assert_int_equal(h.type, FL_MSG_PONG);
	assert_int_equal(evbuffer_get_length(in), 0);
	assert_int_equal(fl_wire_pull(in, 0, &h, &payload), FL_WIRE_NEED_MORE);

	/* push refuses a missing payload instead of reading through NULL. */
	fl_hdr_init(&h, FL_MSG_REQUEST, 1, 1);
	assert_int_equal(fl_wire_push(in, &h, NULL, 4), -1);
	assert_int_equal(evbuffer_get_length(in), 0);
	evbuffer_free(in);
}

/* 7: every code and status has its own text, and unknown values still get one. */
static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(fl_wire_strerror(FL_WIRE_BAD_MAGIC), "bad magic");
	assert_string_equal(fl_status_name(FL_STATUS_OVERLOADED), "overloaded");
	for (int rc = FL_WIRE_NO_MEMORY; rc <= FL_WIRE_FRAME; rc++)
		for (int o = rc + 1; o <= FL_WIRE_FRAME; o++)
			assert_string_not_equal(fl_wire_strerror(rc), fl_wire_strerror(o));
	for (uint32_t s = 0; s <= FL_STATUS_MAX; s++)
		for (uint32_t o = s + 1; o <= FL_STATUS_MAX + 1; o++)
			assert_string_not_equal(fl_status_name(s), fl_status_name(o));
	assert_non_null(fl_wire_strerror(-1000));
	assert_non_null(fl_status_name(UINT32_MAX));
}

/* 8: LeafRequest with stories survives pack/unpack field for field. */
static void test_proto_leaf_request(void **state)
{
	Frontload__LeafRequest req = FRONTLOAD__LEAF_REQUEST__INIT, *got;
	Frontload__Story st[3] = {
		FRONTLOAD__STORY__INIT, FRONTLOAD__STORY__INIT, FRONTLOAD__STORY__INIT,
	};
	Frontload__Story *sp[3] = { &st[0], &st[1], &st[2] };
	uint8_t body1[] = { 0, 1, 2, 0xff }, pad[100], *buf;
	size_t n;

	(void)state;
	memset(pad, 0xa5, sizeof(pad));
	st[0].id = 1;
	st[1].id = UINT64_MAX;
	st[1].body.data = body1;
	st[1].body.len = sizeof(body1);
	st[2].id = 0x123456789ull;
	st[2].body.data = (uint8_t *)"story two";
	st[2].body.len = 9;
	req.method = FRONTLOAD__INBOUND_METHOD__STREAM_IFR_PRIORITY_RANKING;
	req.session_id = 0xdeadbeefcafeull;
	req.user_id = 31337;
	req.n_stories = 3;
	req.stories = sp;
	req.padding.data = pad;
	req.padding.len = sizeof(pad);
	req.want_zstd = 1;
	req.reply_bytes = 65536;

	n = frontload__leaf_request__get_packed_size(&req);
	buf = malloc(n);
	assert_non_null(buf);
	assert_int_equal(frontload__leaf_request__pack(&req, buf), n);
	got = frontload__leaf_request__unpack(NULL, n, buf);
	assert_non_null(got);
	assert_int_equal(got->method, FRONTLOAD__INBOUND_METHOD__STREAM_IFR_PRIORITY_RANKING);
	assert_true(got->session_id == 0xdeadbeefcafeull);
	assert_true(got->user_id == 31337);
	assert_int_equal(got->n_stories, 3);
	assert_true(got->stories[0]->id == 1);
	assert_int_equal(got->stories[0]->body.len, 0);
	assert_true(got->stories[1]->id == UINT64_MAX);
	assert_int_equal(got->stories[1]->body.len, sizeof(body1));
	assert_memory_equal(got->stories[1]->body.data, body1, sizeof(body1));
	assert_true(got->stories[2]->id == 0x123456789ull);
	assert_memory_equal(got->stories[2]->body.data, "story two", 9);
	assert_int_equal(got->padding.len, sizeof(pad));
	assert_memory_equal(got->padding.data, pad, sizeof(pad));
	assert_true(got->want_zstd);
	assert_int_equal(got->reply_bytes, 65536);
	frontload__leaf_request__free_unpacked(got, NULL);

	/* A truncated message is refused, not misread. */
	assert_null(frontload__leaf_request__unpack(NULL, n - 1, buf));
	free(buf);
}

/* 9: RpcRequest round trip, carried in a zstd frame through push and pull. */
static void test_proto_rpc_request(void **state)
{
	Frontload__RpcRequest req = FRONTLOAD__RPC_REQUEST__INIT, *got;
	struct fl_zcodec *z = fl_zcodec_new(3);
	struct fl_bytes packed = { 0 }, comp = { 0 }, plain = { 0 };
	struct evbuffer *b = evbuffer_new();
	struct fl_frame_hdr h;
	uint8_t body[2000], *payload;

	(void)state;
	assert_non_null(z);
	body[0] = 0;
	body[1] = 0;
	body[2] = 0x10;
	body[3] = 0x00;  /* 4096 bytes asked for */
	memset(body + 4, 'f', sizeof(body) - 4);
	req.method = 19;
	req.latency_us = 2500;
	req.body.data = body;
	req.body.len = sizeof(body);

	assert_int_equal(fl_bytes_reserve(&packed, frontload__rpc_request__get_packed_size(&req)), 0);
	packed.len = frontload__rpc_request__pack(&req, packed.data);
	assert_int_equal(fl_zcodec_compress(z, packed.data, packed.len, &comp), 0);
	assert_true(comp.len < packed.len);

	fl_hdr_init(&h, FL_MSG_REQUEST, 5, 6);
	h.flags = FL_FRAME_ZSTD;
	assert_int_equal(fl_wire_push(b, &h, comp.data, comp.len), 0);
	assert_int_equal(fl_wire_pull(b, MAX_PAYLOAD, &h, &payload), FL_WIRE_FRAME);
	assert_int_equal(h.flags, FL_FRAME_ZSTD);
	assert_int_equal(h.payload_len, comp.len);
	assert_int_equal(fl_zcodec_decompress(z, payload, h.payload_len, MAX_PAYLOAD, &plain), 0);
	assert_int_equal(plain.len, packed.len);

	got = frontload__rpc_request__unpack(NULL, plain.len, plain.data);
	assert_non_null(got);
	assert_int_equal(got->method, 19);
	assert_int_equal(got->latency_us, 2500);
	assert_int_equal(got->body.len, sizeof(body));
	assert_memory_equal(got->body.data, body, sizeof(body));
	frontload__rpc_request__free_unpacked(got, NULL);

	free(payload);
	evbuffer_free(b);
	fl_bytes_free(&packed);
	fl_bytes_free(&comp);
	fl_bytes_free(&plain);
	fl_zcodec_free(z);
}

/* Compress then decompress src with z, reusing the two buffers. */
static void test_zstd_trip(struct fl_zcodec *z, const uint8_t *src, size_t len,
	struct fl_bytes *comp, struct fl_bytes *plain)
{
	assert_int_equal(fl_zcodec_compress(z, src, len, comp), 0);
	assert_true(comp->len > 0);
	assert_int_equal(fl_zcodec_decompress(z, comp->data, comp->len, len, plain), 0);
	assert_int_equal(plain->len, len);
	if (len > 0)
		assert_memory_equal(plain->data, src, len);
}

/* 10: zstd round trip on compressible, random and empty inputs, contexts reused. */
static void test_zstd_round_trip(void **state)
{
	uint64_t s = test_seed();
	struct fl_zcodec *z = fl_zcodec_new(3), *z19 = fl_zcodec_new(19);
	struct fl_bytes comp = { 0 }, plain = { 0 };
	size_t n = 200000;
	uint8_t *text = malloc(n), *noise = malloc(n);

	(void)state;
	assert_non_null(z);
	assert_non_null(z19);
	assert_null(fl_zcodec_new(0));
	assert_null(fl_zcodec_new(20));
	assert_non_null(text);
	assert_non_null(noise);
	for (size_t i = 0; i < n; i++)
		text[i] = (uint8_t)"the quick brown fox jumps over the lazy dog "[i % 44];
	test_fill_random(&s, noise, n);

	test_zstd_trip(z, text, n, &comp, &plain);
	assert_true(comp.len < n / 50);
	test_zstd_trip(z, noise, n, &comp, &plain);
	assert_true(comp.len >= n);  /* incompressible: stored, slightly larger */
	test_zstd_trip(z19, text, n, &comp, &plain);
	test_zstd_trip(z, text, 1, &comp, &plain);
	test_zstd_trip(z, NULL, 0, &comp, &plain);
	for (int i = 0; i < 50; i++) {
		size_t len = test_rand(&s) % 5000;

		test_zstd_trip(z, (i & 1) ? noise : text + i, len, &comp, &plain);
	}

	free(text);
	free(noise);
	fl_bytes_free(&comp);
	fl_bytes_free(&plain);
	fl_zcodec_free(z);
	fl_zcodec_free(z19);
	fl_zcodec_free(NULL);
}

/* 11: decompression refuses bombs, truncation, garbage and trailing bytes. */
static void test_zstd_refusals(void **state)
{
	uint64_t s = test_seed();
	struct fl_zcodec *z = fl_zcodec_new(1);
	struct fl_bytes comp = { 0 }, plain = { 0 };
	size_t n = 100000;
	uint8_t *zeros = calloc(1, n), garbage[512], *two;

	(void)state;
	assert_non_null(z);
	assert_non_null(zeros);
	assert_int_equal(fl_zcodec_compress(z, zeros, n, &comp), 0);
	assert_true(comp.len < 100);

	/* Content size above max_out: refused before allocating anything. */
	assert_int_equal(fl_zcodec_decompress(z, comp.data, comp.len, n - 1, &plain), -1);
	assert_null(plain.data);
	assert_int_equal(plain.len, 0);
	assert_int_equal(fl_zcodec_decompress(z, comp.data, comp.len, n, &plain), 0);
	assert_int_equal(plain.len, n);

	/* Truncated anywhere. */
	for (size_t cut = 0; cut < comp.len; cut++)
		assert_int_equal(fl_zcodec_decompress(z, comp.data, cut, n, &plain), -1);
	/* A second frame or a trailing byte after the first. */
	two = malloc(comp.len * 2);
	assert_non_null(two);
	memcpy(two, comp.data, comp.len);
	memcpy(two + comp.len, comp.data, comp.len);
	assert_int_equal(fl_zcodec_decompress(z, two, comp.len * 2, 2 * n, &plain), -1);
	assert_int_equal(fl_zcodec_decompress(z, two, comp.len + 1, 2 * n, &plain), -1);
	free(two);

	/* Garbage, with and without a valid magic number in front. */
	for (unsigned i = 0; i < FUZZ_ROUNDS; i++) {
		size_t len = 1 + test_rand(&s) % sizeof(garbage);

		test_fill_random(&s, garbage, len);
		if (i & 1 && len >= 4)
			memcpy(garbage, comp.data, 4);
		if (fl_zcodec_decompress(z, garbage, len, 4096, &plain) == 0)
			assert_true(plain.len <= 4096);
	}
	assert_int_equal(fl_zcodec_decompress(z, "not zstd at all", 15, n, &plain), -1);
	assert_int_equal(fl_zcodec_decompress(z, NULL, 0, n, &plain), -1);

	/* The codec still works after all those failures. */
	assert_int_equal(fl_zcodec_decompress(z, comp.data, comp.len, n, &plain), 0);
	assert_int_equal(plain.len, n);
	assert_memory_equal(plain.data, zeros, n);

	free(zeros);
	fl_bytes_free(&comp);
	fl_bytes_free(&plain);
	fl_zcodec_free(z);
}

/* 12: fl_bytes grows geometrically, never shrinks, and is reusable after free. */
static void test_bytes_reserve(void **state)
{
	struct fl_bytes b = { 0 };
	size_t prev, grows = 0;

	(void)state;
	assert_int_equal(fl_bytes_reserve(&b, 0), 0);
	assert_int_equal(fl_bytes_reserve(&b, 1), 0);
	assert_non_null(b.data);
	assert_true(b.cap >= 1);
	b.data[0] = 0x5a;
	b.len = 1;
	prev = b.cap;
	for (size_t need = 1; need <= (1u << 20); need += 997) {
		assert_int_equal(fl_bytes_reserve(&b, need), 0);
		assert_true(b.cap >= need);
		if (b.cap != prev) {
			assert_true(b.cap >= 2 * prev);  /* geometric */
			prev = b.cap;
			grows++;
		}
	}
	assert_true(grows <= 20);
	assert_int_equal(b.data[0], 0x5a);  /* contents kept across growth */
	assert_int_equal(b.len, 1);
	prev = b.cap;
	assert_int_equal(fl_bytes_reserve(&b, 10), 0);
	assert_int_equal(b.cap, prev);
#ifndef __SANITIZE_ADDRESS__  /* ASan treats an impossible allocation as a fatal error */
	/* An impossible size fails and leaves the buffer as it was. */
	assert_int_equal(fl_bytes_reserve(&b, SIZE_MAX), -1);
	assert_int_equal(b.cap, prev);
	assert_int_equal(b.data[0], 0x5a);
#endif
	fl_bytes_free(&b);
	assert_null(b.data);
	assert_int_equal(b.cap, 0);
	assert_int_equal(b.len, 0);
	fl_bytes_free(&b);
	assert_int_equal(fl_bytes_reserve(&b, 3000), 0);
	assert_true(b.cap >= 3000);
	fl_bytes_free(&b);
}

/* 13: random bytes fed to the frame reader never crash it, and whatever it accepts is
 * consistent with its header. */
static void test_pull_random_bytes(void **state)
{
	uint64_t s = test_seed();
	struct evbuffer *in = evbuffer_new();
	struct fl_frame_hdr h, good;
	uint8_t buf[256], *payload;
	unsigned frames = 0;

	(void)state;
	fl_hdr_init(&good, FL_MSG_REQUEST, 1, 2);
	for (unsigned i = 0; i < FUZZ_ROUNDS; i++) {
		size_t len = test_rand(&s) % sizeof(buf);
		int rc;

		test_fill_random(&s, buf, len);
		/* Half the time keep a valid prefix so the checks past magic get exercised. */
		if ((i & 1) && len >= 8) {
			fl_hdr_encode(&good, buf);
			buf[5] = (uint8_t)(test_rand(&s) % 6);
			buf[7] = (uint8_t)(test_rand(&s) % 3);
			if (len >= 12 && (i & 2)) {  /* a payload length near the limit */
				memset(buf + 8, 0, 3);
				buf[11] = (uint8_t)(test_rand(&s) % 80);
			}
		}
		evbuffer_drain(in, evbuffer_get_length(in));
		evbuffer_add(in, buf, len);
		rc = fl_wire_pull(in, 64, &h, &payload);
		assert_true(rc >= FL_WIRE_TOO_LONG && rc <= FL_WIRE_FRAME);
		if (rc == FL_WIRE_FRAME) {
			frames++;
			assert_true(h.payload_len <= 64);
			assert_int_equal(evbuffer_get_length(in), len - FL_WIRE_HDR_BYTES - h.payload_len);
			if (h.payload_len > 0)
				assert_memory_equal(payload, buf + FL_WIRE_HDR_BYTES, h.payload_len);
			free(payload);
		} else {
			assert_null(payload);
			assert_int_equal(evbuffer_get_length(in), len);
		}
	}
	assert_true(frames > 0);  /* the valid-prefix inputs did reach the payload path */
	print_message("%u of %u random inputs were whole frames\n", frames, FUZZ_ROUNDS);
	evbuffer_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_round_trip),
		cmocka_unit_test(test_hdr_errors),
		cmocka_unit_test(test_pull_byte_at_a_time),
		cmocka_unit_test(test_pull_pipelined),
		cmocka_unit_test(test_pull_oversized_early),
		cmocka_unit_test(test_pull_empty_payload),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_proto_leaf_request),
		cmocka_unit_test(test_proto_rpc_request),
		cmocka_unit_test(test_zstd_round_trip),
		cmocka_unit_test(test_zstd_refusals),
		cmocka_unit_test(test_bytes_reserve),
		cmocka_unit_test(test_pull_random_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
