/* wire.c: frontload's 40-byte frame header and the evbuffer frame reader/writer (wire.h). */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "wire.h"

/* Big-endian loads and stores: byte by byte, so alignment and host order never matter. */
static void wire_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void wire_put64(uint8_t *p, uint64_t v)
{
	wire_put32(p, (uint32_t)(v >> 32));
	wire_put32(p + 4, (uint32_t)v);
}

static uint16_t wire_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* inline: fl_hdr_decode reads three of these per frame, and gcc would keep it a call. */
static inline uint64_t wire_get64(const uint8_t *p)
{
	return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}

void fl_hdr_init(struct fl_frame_hdr *h, enum fl_msg_type type, uint64_t request_id,
	uint64_t client_ts_ns)
{
	memset(h, 0, sizeof(*h));
	h->magic = FL_WIRE_MAGIC;
	h->version = FL_WIRE_VERSION;
	h->type = (uint8_t)type;
	h->request_id = request_id;
	h->client_ts_ns = client_ts_ns;
}

void fl_hdr_encode(const struct fl_frame_hdr *h, uint8_t out[FL_WIRE_HDR_BYTES])
{
	wire_put32(out + 0, h->magic);
	out[4] = h->version;
	out[5] = h->type;
	wire_put16(out + 6, h->flags);
	wire_put32(out + 8, h->payload_len);
	wire_put32(out + 12, h->status);
	wire_put64(out + 16, h->request_id);
	wire_put64(out + 24, h->client_ts_ns);
	wire_put64(out + 32, h->server_ns);
}

/* Fills every field before checking any, so a caller can echo request_id in an error
 * reply whatever was wrong. Checks run in header order and the first failure wins. */
int fl_hdr_decode(const uint8_t in[FL_WIRE_HDR_BYTES], struct fl_frame_hdr *h,
	uint32_t max_payload)
{
	h->magic = wire_get32(in + 0);
	h->version = in[4];
	h->type = in[5];
	h->flags = wire_get16(in + 6);
	h->payload_len = wire_get32(in + 8);
	h->status = wire_get32(in + 12);
	h->request_id = wire_get64(in + 16);
	h->client_ts_ns = wire_get64(in + 24);
	h->server_ns = wire_get64(in + 32);

	if (h->magic != FL_WIRE_MAGIC)
		return FL_WIRE_BAD_MAGIC;
	if (h->version != FL_WIRE_VERSION)
		return FL_WIRE_BAD_VERSION;
	if (h->type == 0 || h->type > FL_MSG_TYPE_MAX)
		return FL_WIRE_BAD_TYPE;
	if (h->flags & ~(uint16_t)FL_FRAME_FLAGS_ALL)
		return FL_WIRE_BAD_FLAGS;
	if (h->payload_len > max_payload)
		return FL_WIRE_TOO_LONG;
	return FL_WIRE_FRAME;
}

/* fl_wire_peek with the buffer's length already read (have), so a pull asks libevent once. */
static int wire_peek(struct evbuffer *in, size_t have, uint32_t max_payload,
	struct fl_frame_hdr *h)
{
	uint8_t raw[FL_WIRE_HDR_BYTES];

	if (have < FL_WIRE_HDR_BYTES ||
	    evbuffer_copyout(in, raw, sizeof(raw)) != (ev_ssize_t)sizeof(raw))
		return FL_WIRE_NEED_MORE;
	return fl_hdr_decode(raw, h, max_payload);
}

int fl_wire_peek(struct evbuffer *in, uint32_t max_payload, struct fl_frame_hdr *h)
{
	return wire_peek(in, evbuffer_get_length(in), max_payload, h);
}

/* The header is judged as soon as its 40 bytes are in, before any wait for the payload,
 * so a bad or oversized frame is refused without buffering it. The buffer is touched
 * only once the whole frame is there and its payload copy is allocated, so every
 * non-FRAME return leaves it as it was. */
int fl_wire_pull(struct evbuffer *in, uint32_t max_payload, struct fl_frame_hdr *h,
	uint8_t **payload)
{
	size_t have = evbuffer_get_length(in);
	size_t plen;
	uint8_t *p = NULL;
	int rc;

	*payload = NULL;
	rc = wire_peek(in, have, max_payload, h);
	if (rc != FL_WIRE_FRAME)
		return rc;
	plen = h->payload_len;
	if (have - FL_WIRE_HDR_BYTES < plen)
		return FL_WIRE_NEED_MORE;

	if (plen > 0) {
		struct evbuffer_ptr pos;

		p = malloc(plen);
		if (p == NULL)
			return FL_WIRE_NO_MEMORY;
		/* Copy first, drain after: a failure (which the length check above rules
		 * out) leaves the buffer untouched instead of handing back a short payload. */
		if (evbuffer_ptr_set(in, &pos, FL_WIRE_HDR_BYTES, EVBUFFER_PTR_SET) != 0 ||
		    evbuffer_copyout_from(in, &pos, p, plen) != (ev_ssize_t)plen) {
			free(p);
			return FL_WIRE_NO_MEMORY;
		}
	}
	if (evbuffer_drain(in, FL_WIRE_HDR_BYTES + plen) != 0) {
		free(p);
		return FL_WIRE_NO_MEMORY;
	}
	*payload = p;
	return FL_WIRE_FRAME;
}

/* Header and payload go into one reserved extent, committed together: the output buffer
 * never holds half a frame, even when it fails to grow. */
int fl_wire_push(struct evbuffer *out, struct fl_frame_hdr *h, const void *payload, size_t len)
{
	struct evbuffer_iovec vec;

	if (len > UINT32_MAX || (len > 0 && payload == NULL))
		return -1;
	h->payload_len = (uint32_t)len;
	if (evbuffer_reserve_space(out, (ev_ssize_t)(FL_WIRE_HDR_BYTES + len), &vec, 1) != 1)
		return -1;
	if (vec.iov_len < FL_WIRE_HDR_BYTES + len)
		return -1;
	fl_hdr_encode(h, vec.iov_base);
	if (len > 0)
		memcpy((uint8_t *)vec.iov_base + FL_WIRE_HDR_BYTES, payload, len);
	vec.iov_len = FL_WIRE_HDR_BYTES + len;
	if (evbuffer_commit_space(out, &vec, 1) != 0)
		return -1;
	return 0;
}

const char *fl_wire_strerror(int rc)
{
	switch (rc) {
	case FL_WIRE_FRAME: return "frame";
	case FL_WIRE_NEED_MORE: return "need more bytes";
	case FL_WIRE_BAD_MAGIC: return "bad magic";
	case FL_WIRE_BAD_VERSION: return "bad version";
	case FL_WIRE_BAD_TYPE: return "bad message type";
	case FL_WIRE_BAD_FLAGS: return "unknown flag bits";
	case FL_WIRE_TOO_LONG: return "payload too long";
	case FL_WIRE_NO_MEMORY: return "out of memory";
	}
	return "unknown wire error";
}

const char *fl_status_name(uint32_t status)
{
	switch (status) {
	case FL_STATUS_OK: return "ok";
	case FL_STATUS_OVERLOADED: return "overloaded";
	case FL_STATUS_BAD_REQUEST: return "bad request";
	case FL_STATUS_DENIED: return "denied";
	case FL_STATUS_STALE: return "stale";
	case FL_STATUS_INTERNAL: return "internal error";
	case FL_STATUS_DEADLINE_EXCEEDED: return "deadline exceeded";
	}
	return "unknown status";
}
