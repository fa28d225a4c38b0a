/* lc_replies.c: leaf-client's reply checks: a frame is matched to its request (id, type,
 * echoed client_ts_ns), counted by status, and an OK reply decoded and checked against
 * what was asked (sizes, zstd, ranked stories; an RpcReply's method and size). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "clock.h"
#include "frontload.pb-c.h"
#include "leaf_client.h"

static void lc_check_leaf_reply(struct lc_client *cl, uint64_t i, const uint8_t *p, size_t n)
{
	Frontload__LeafReply *rep = frontload__leaf_reply__unpack(NULL, n, p);
	if (!rep) {
		cl->err.decode++;
		lc_note(cl, "request %" PRIu64 ": OK reply does not decode as LeafReply", i + 1);
		return;
	}
	const struct lc_slot *sl = &cl->slots[i];
	lc_range_add(&cl->reply_raw, rep->payload_raw_bytes);
	lc_range_add(&cl->ranked, rep->n_ranked);
	lc_range_add(&cl->fanout_calls, rep->fanout_calls);
	lc_range_add(&cl->fanout_errors, rep->fanout_errors);
	lc_range_add(&cl->extract_calls, rep->extract_calls);
	if (sl->want_zstd && sl->method != FRONTLOAD__INBOUND_METHOD__GET_STORIES_UNCOMPRESSED)
		cl->zstd_expected++;
	if (rep->payload_zstd) {
		cl->zstd_replies++;
		if (fl_zcodec_decompress(cl->z, rep->payload.data, rep->payload.len,
			rep->payload_raw_bytes, &cl->comp) < 0 ||
			cl->comp.len != rep->payload_raw_bytes) {
			cl->err.zstd++;
			lc_note(cl, "request %" PRIu64 ": zstd payload does not decompress to %u "
				"bytes", i + 1, rep->payload_raw_bytes);
		}
	} else if (rep->payload.len != rep->payload_raw_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": payload %zu bytes, payload_raw_bytes %u", i + 1,
			rep->payload.len, rep->payload_raw_bytes);
	}
	if (sl->reply_bytes && rep->payload_raw_bytes != sl->reply_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": asked for %u reply bytes, got %u", i + 1,
			sl->reply_bytes, rep->payload_raw_bytes);
	}
	/* Ranked stories: best first, from the request's stories; getAllStories also
	 * returns stories its session remembers from earlier requests (at most
	 * LC_SESSION_STORIES of them), so only its count and order are checked. */
	int all = sl->method == FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES;
	int bad = rep->n_ranked > cl->o.stories + (all ? LC_SESSION_STORIES : 0) ||
		rep->session_id != sl->session_id;
	for (size_t k = 0; k < rep->n_ranked && !bad; k++) {
		const Frontload__RankedStory *rs = rep->ranked[k];
		int found = all;
		for (unsigned s = 0; s < cl->o.stories && !found; s++)
			found = sl->story_ids[s] == rs->id;
		if (!found || isnan(rs->score) || (k > 0 && rs->score > rep->ranked[k - 1]->score))
			bad = 1;
	}
	if (bad) {
		cl->err.ranked++;
		lc_note(cl, "request %" PRIu64 ": ranked list (%zu stories, session %" PRIu64
			") is not a best-first subset of the request's", i + 1, rep->n_ranked,
			rep->session_id);
	}
	frontload__leaf_reply__free_unpacked(rep, NULL);
}

static void lc_check_rpc_reply(struct lc_client *cl, uint64_t i, const uint8_t *p, size_t n)
{
	Frontload__RpcReply *rep = frontload__rpc_reply__unpack(NULL, n, p);
	if (!rep) {
		cl->err.decode++;
		lc_note(cl, "request %" PRIu64 ": OK reply does not decode as RpcReply", i + 1);
		return;
	}
	const struct lc_slot *sl = &cl->slots[i];
	lc_range_add(&cl->reply_raw, rep->body.len);
	if (rep->method != sl->method) {
		cl->err.method++;
		lc_note(cl, "request %" PRIu64 ": sent method %u, reply for %u", i + 1, sl->method,
			rep->method);
	}
	if (cl->o.reply_bytes && rep->body.len != sl->reply_bytes) {
		cl->err.reply_size++;
		lc_note(cl, "request %" PRIu64 ": asked for %u reply bytes, got %zu", i + 1,
			sl->reply_bytes, rep->body.len);
	}
	frontload__rpc_reply__free_unpacked(rep, NULL);
}

void lc_on_frame(struct lc_conn *c, const struct fl_frame_hdr *h, uint8_t *payload)
{
	struct lc_client *cl = c->cl;
	uint64_t id = h->request_id;
	if (h->type != FL_MSG_REPLY || id == 0 || id > cl->o.requests ||
		cl->slots[id - 1].state != 1) {
		cl->err.unknown_id++;
		lc_note(cl, "unexpected frame type %u for request id %" PRIu64, h->type, id);
		return;
	}
	uint64_t i = id - 1;
	struct lc_slot *sl = &cl->slots[i];
	cl->lat_ns[cl->replied] = fl_mono_ns() - sl->sent_ns;
	sl->state = 2;
	c->inflight--;
	cl->replied++;
	cl->status[h->status < LC_NSTATUS ? h->status : LC_NSTATUS]++;
	if (h->client_ts_ns != sl->client_ts_ns) {
		cl->err.echo++;
		lc_note(cl, "request %" PRIu64 ": reply echoes client_ts_ns %" PRIu64 ", sent %"
			PRIu64, id, h->client_ts_ns, sl->client_ts_ns);
	}
	if (h->status == FL_STATUS_OK) {
		if (h->server_ns > cl->server_ns_max)
			cl->server_ns_max = h->server_ns;
		const uint8_t *p = payload;
		size_t n = h->payload_len;
		if (h->flags & FL_FRAME_ZSTD) {
			if (fl_zcodec_decompress(cl->z, payload, n, cl->o.max_frame_bytes,
				&cl->scratch) < 0) {
				cl->err.zstd++;
				lc_note(cl, "request %" PRIu64 ": zstd reply frame is corrupt", id);
				return;  /* its story ids go in lc_free */
			}
			p = cl->scratch.data;
			n = cl->scratch.len;
		}
		if (cl->o.rpc)
			lc_check_rpc_reply(cl, i, p, n);
		else
			lc_check_leaf_reply(cl, i, p, n);
	}
	free(sl->story_ids);
	sl->story_ids = NULL;
}
