/* lc_stream.c: leaf-client's request stream: LeafRequest i from reqgen (the driver's
 * builder), RpcRequest i made here (reqgen builds none), each framed, compressed when asked
 * and queued on a connection. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>

#include "clock.h"
#include "frontload.pb-c.h"
#include "leaf_client.h"
#include "rng.h"

/* FNV-1a of p[0..n-1]: the request payloads' stream_hash adds these. */
static uint64_t lc_fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void lc_reserve(struct fl_bytes *b, size_t need)
{
	if (fl_bytes_reserve(b, need) < 0)
		lc_die("out of memory (%zu bytes)", need);
}

/* RpcRequest size: sampled from the method's table (capped) or fixed. */
static size_t lc_target_size(struct lc_client *cl, struct fl_rng *r, const struct fl_pct *t)
{
	if (!cl->o.size_sampled)
		return cl->o.request_bytes;
	double v = fl_pct_sample(t, fl_rng_unit(r));
	if (v > (double)cl->o.max_request_bytes)
		v = (double)cl->o.max_request_bytes;
	return v < 0 ? 0 : (size_t)v;
}

/* Build LeafRequest i into cl->pack with reqgen (the driver's builder) and fill its slot
 * from the request as packed: the reply check needs its session and story ids. The one
 * request made by hand: a --method that is no InboundMethod (bad_frames.sh sends 9 to see
 * it refused) is deliberately bad and reqgen will not build it, so it is reqgen's request
 * for method 0 (lc_setup_reqgen) repacked with that method. */
void lc_build_leaf(struct lc_client *cl, uint64_t i)
{
	if (fl_reqgen_build(&cl->gen, i, &cl->pack) != 0)
		lc_die("out of memory building request %" PRIu64, i + 1);
	Frontload__LeafRequest *q = frontload__leaf_request__unpack(NULL, cl->pack.len,
		cl->pack.data);
	if (!q)
		lc_die("request %" PRIu64 " from reqgen does not decode", i + 1);
	if (cl->bad_method) {
		q->method = (Frontload__InboundMethod)cl->o.method;
		lc_reserve(&cl->pack, frontload__leaf_request__get_packed_size(q));
		cl->pack.len = frontload__leaf_request__pack(q, cl->pack.data);
	}
	struct lc_slot *sl = &cl->slots[i];
	sl->method = (uint32_t)q->method;
	sl->reply_bytes = q->reply_bytes;
	sl->want_zstd = q->want_zstd;
	sl->session_id = q->session_id;
	if (q->n_stories) {
		sl->story_ids = malloc(q->n_stories * sizeof *sl->story_ids);
		if (!sl->story_ids)
			lc_die("out of memory");
		for (size_t s = 0; s < q->n_stories; s++)
			sl->story_ids[s] = q->stories[s]->id;
	}
	frontload__leaf_request__free_unpacked(q, NULL);
}

/* Build RpcRequest i (to the mock) into cl->pack: body[0..3] the reply size asked for.
 * Built here because reqgen builds LeafRequests only; the body has the shape the leaf's
 * fanout sends (fanout_channel.c, fo_chan_send_call). */
void lc_build_rpc(struct lc_client *cl, uint64_t i)
{
	struct fl_rng r;
	fl_rng_seed(&r, fl_rng_derive(cl->o.seed, i));
	uint32_t m = cl->o.method_mix ? (uint32_t)fl_rng_below(&r, FL_RPC_OUTBOUND) :
		cl->o.method;
	const struct fl_rpc_method *rm = &cl->dist.out[m % FL_RPC_OUTBOUND];
	size_t body_len = lc_target_size(cl, &r, &rm->req_bytes);
	if (body_len < 4)
		body_len = 4;
	uint32_t want = cl->o.reply_bytes;
	if (want == 0) {
		double v = fl_pct_sample(&rm->resp_bytes, fl_rng_unit(&r));
		want = v > 65536 ? 65536 : (uint32_t)v;
	}
	lc_reserve(&cl->scratch, body_len);
	uint8_t *b = cl->scratch.data;
	b[0] = (uint8_t)(want >> 24);
	b[1] = (uint8_t)(want >> 16);
	b[2] = (uint8_t)(want >> 8);
	b[3] = (uint8_t)want;
	fl_corpus_copy(&cl->corpus, fl_rng_next(&r), b + 4, body_len - 4);
	Frontload__RpcRequest q = FRONTLOAD__RPC_REQUEST__INIT;
	q.method = m;
	q.latency_us = 0;
	q.body.data = b;
	q.body.len = body_len;
	lc_reserve(&cl->pack, frontload__rpc_request__get_packed_size(&q));
	cl->pack.len = frontload__rpc_request__pack(&q, cl->pack.data);
	cl->slots[i].method = m;
	cl->slots[i].reply_bytes = want;
}

/* Queue request i on conn c: build, compress when asked, frame. */
static void lc_send(struct lc_conn *c, uint64_t i)
{
	struct lc_client *cl = c->cl;
	if (cl->o.rpc)
		lc_build_rpc(cl, i);
	else
		lc_build_leaf(cl, i);
	cl->stream_hash += lc_fnv1a(cl->pack.data, cl->pack.len);
	lc_range_add(&cl->req_bytes, cl->pack.len);
	const struct fl_bytes *out = &cl->pack;
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REQUEST, i + 1, fl_wall_ns());
	cl->slots[i].client_ts_ns = h.client_ts_ns;
	cl->sent_by_method[cl->slots[i].method & 255]++;
	if (cl->o.zstd_frames) {
		if (fl_zcodec_compress(cl->z, cl->pack.data, cl->pack.len, &cl->comp) < 0)
			lc_die("zstd compression of request %" PRIu64 " failed", i + 1);
		out = &cl->comp;
		h.flags = FL_FRAME_ZSTD;
	}
	lc_range_add(&cl->wire_bytes, out->len + FL_WIRE_HDR_BYTES);
	if (fl_wire_push(bufferevent_get_output(c->bev), &h, out->data, out->len) < 0)
		lc_die("out of memory queueing request %" PRIu64, i + 1);
	cl->slots[i].sent_ns = fl_mono_ns();
	cl->slots[i].state = 1;
	c->inflight++;
	cl->sent++;
}

void lc_fill(struct lc_conn *c)
{
	struct lc_client *cl = c->cl;
	while (c->bev && c->up && c->inflight < cl->o.depth && cl->next < cl->o.requests)
		lc_send(c, cl->next++);
}
