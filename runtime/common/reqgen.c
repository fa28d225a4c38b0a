/* reqgen.c: deterministic LeafRequest builder (see reqgen.h for the request shape). */
#include "reqgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "corpus.h"
#include "frontload.pb-c.h"
#include "paths.h"
#include "rng.h"
#include "zcodec.h"

#define REQGEN_SESSION_SALT 0x53455353494f4e53ull  /* "SESSIONS": session id stream */
#define REQGEN_USER_SALT 0x55534552ull             /* "USER": user id from session id */
#define REQGEN_PADDING_TAG_BYTES 1u                /* field 5, wire type 2: one byte */

/* rpc_dist.json names, in enum Frontload__InboundMethod order (as sampler.c keeps them). */
static const char *const reqgen_method_names[FL_RPC_INBOUND] = {
	"createAndPrimeSession", "getStoriesUncompressed", "streamData",
	"streamIfrPriorityRanking", "getAllStories",
};

void fl_reqgen_config_default(struct fl_reqgen_config *c)
{
	memset(c, 0, sizeof *c);
	c->seed = 1;
	c->stories = 16;
	c->story_bytes = 1024;
	c->fixed_bytes = FL_REQGEN_SIZE_SAMPLED;
	c->max_request_bytes = 4u << 20;
	c->method = FL_REQGEN_MIX;
	c->sessions = 1000;
}

int fl_reqgen_method_parse(const char *text, int *method)
{
	if (strcmp(text, "mix") == 0) {
		*method = FL_REQGEN_MIX;
		return 0;
	}
	for (int i = 0; i < FL_RPC_INBOUND; i++) {
		if (strcmp(text, reqgen_method_names[i]) == 0) {
			*method = i;
			return 0;
		}
	}
	for (unsigned i = 0; i < frontload__inbound_method__descriptor.n_values; i++) {
		const ProtobufCEnumValue *v = &frontload__inbound_method__descriptor.values[i];
		if (strcasecmp(text, v->name) == 0) {
			*method = v->value;
			return 0;
		}
	}
	return -1;
}

const char *fl_reqgen_method_name(int method)
{
	if (method == FL_REQGEN_MIX)
		return "mix";
	if (method >= 0 && method < FL_RPC_INBOUND)
		return reqgen_method_names[method];
	return "unknown";
}

/* Turn the inbound call counts into a cumulative distribution over the methods. */
static int reqgen_load_mix(struct fl_reqgen *g, char *err, size_t errlen)
{
	char path[4096];
	struct fl_rpc_dist *d;
	double total = 0, acc = 0;

	if (fl_data_path("rpc_dist.json", path, sizeof path, err, errlen) != 0)
		return -1;
	d = malloc(sizeof *d);
	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (fl_rpc_dist_load(path, d, err, errlen) != 0) {
		free(d);
		return -1;
	}
	for (int i = 0; i < FL_RPC_INBOUND; i++)
		total += d->in[i].total_weighted_count;
	if (!(total > 0)) {
		snprintf(err, errlen, "%s: inbound total_weighted_count sums to 0", path);
		free(d);
		return -1;
	}
	for (int i = 0; i < FL_RPC_INBOUND; i++) {
		acc += d->in[i].total_weighted_count;
		g->method_cum[i] = acc / total;
	}
	g->method_cum[FL_RPC_INBOUND - 1] = 1.0;  /* no rounding gap at the top */
	free(d);
	return 0;
}

int fl_reqgen_init(struct fl_reqgen *g, const struct fl_reqgen_config *c,
	const struct fl_corpus *corpus, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->cfg = *c;
	g->corpus = corpus;
	if (corpus == NULL || corpus->len == 0) {
		snprintf(err, errlen, "reqgen: empty corpus");
		return -1;
	}
	if (c->sessions == 0) {
		snprintf(err, errlen, "reqgen: sessions must be >= 1");
		return -1;
	}
	if (c->stories > 65536) {
		snprintf(err, errlen, "reqgen: stories %u above 65536", c->stories);
		return -1;
	}
	if (c->method != FL_REQGEN_MIX && (c->method < 0 || c->method >= FL_RPC_INBOUND)) {
		snprintf(err, errlen, "reqgen: unknown method %d", c->method);
		return -1;
	}
	if (c->fixed_bytes == FL_REQGEN_SIZE_SAMPLED) {
		char path[4096];
		if (c->max_request_bytes == 0) {
			snprintf(err, errlen, "reqgen: max request bytes must be > 0");
			return -1;
		}
		if (fl_data_path("feed_aggregator_req_sizes.json", path, sizeof path, err,
			errlen) != 0)
			return -1;
		if (fl_size_table_load(path, "req_size_", &g->sizes, err, errlen) != 0)
			return -1;
	}
	if (c->method == FL_REQGEN_MIX && reqgen_load_mix(g, err, errlen) != 0)
		return -1;
	g->session_seed = fl_rng_derive(c->seed, REQGEN_SESSION_SALT);
	return 0;
}

/* The draws every request starts with, in a fixed order; build continues the stream. */
static void reqgen_draw(const struct fl_reqgen *g, struct fl_rng *r,
	struct fl_reqgen_info *info)
{
	double u = fl_rng_unit(r);
	uint64_t k = fl_rng_below(r, g->cfg.sessions);
	double us = fl_rng_unit(r);

	info->method = g->cfg.method;
	if (info->method == FL_REQGEN_MIX) {
		info->method = FL_RPC_INBOUND - 1;
		for (int m = 0; m < FL_RPC_INBOUND; m++) {
			if (u < g->method_cum[m]) {
				info->method = m;
				break;
			}
		}
	}
	info->session_id = fl_rng_derive(g->session_seed, k);
	info->user_id = fl_rng_derive(info->session_id, REQGEN_USER_SALT);
	if (g->cfg.fixed_bytes != FL_REQGEN_SIZE_SAMPLED) {
		info->target_bytes = g->cfg.fixed_bytes;
	} else {
		double v = fl_pct_sample(&g->sizes, us);
		info->target_bytes = v >= (double)g->cfg.max_request_bytes ?
			g->cfg.max_request_bytes : (size_t)v;
	}
}

void fl_reqgen_describe(const struct fl_reqgen *g, uint64_t request_index,
	struct fl_reqgen_info *info)
{
	struct fl_rng r;

	fl_rng_seed(&r, fl_rng_derive(g->cfg.seed, request_index));
	reqgen_draw(g, &r, info);
}

/* len corpus bytes from a random offset: a pointer into the corpus when they are
 * contiguous (always, unless len exceeds the corpus), else a wrapped copy into *copy,
 * which the caller frees. NULL only when that copy cannot be allocated. */
static uint8_t *reqgen_slice(const struct fl_corpus *c, uint64_t rnd, size_t len,
	uint8_t **copy)
{
	const uint8_t *p;

	*copy = NULL;
	if (len == 0)
		return NULL;
	if (len <= c->len) {
		uint64_t off = rnd % (c->len - len + 1);
		if (fl_corpus_span(c, off, len, &p) == len)
			return (uint8_t *)p;  /* protobuf-c wants non-const; pack only reads */
	}
	*copy = malloc(len);
	if (*copy == NULL)
		return NULL;
	fl_corpus_copy(c, rnd % c->len, *copy, len);
	return *copy;
}

/* Bytes of a protobuf varint holding v. */
static size_t reqgen_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Padding bytes making base + field overhead + padding reach target: the smallest p with
 * base + tag + varint(p) + p >= target (exact except at a varint length boundary). */
static size_t reqgen_padding_for(size_t base, size_t target)
{
	size_t p;

	if (target <= base + REQGEN_PADDING_TAG_BYTES + 1)
		return 0;
	p = target - base - REQGEN_PADDING_TAG_BYTES - reqgen_varint_len(target - base);
	while (base + REQGEN_PADDING_TAG_BYTES + reqgen_varint_len(p) + p < target)
		p++;
	return p;
}

/* A request's fields, its stories and padding pointing at corpus memory (copies[] holds
 * the rare wrapped copies, n stories + the padding). */
struct reqgen_fields {
	Frontload__LeafRequest req;
	Frontload__Story *stories;
	Frontload__Story **sp;
	uint8_t **copies;
	unsigned n;
};

static void reqgen_fields_free(struct reqgen_fields *f)
{
	if (f->copies != NULL)
		for (unsigned i = 0; i <= f->n; i++)
			free(f->copies[i]);
	free(f->copies);
	free(f->sp);
	free(f->stories);
}

/* Fill f for request_index: 0, or -1 when out of memory (f freed). The stories' draws
 * (id, offset) come after the padding offset in the stream. */
static int reqgen_fields_make(const struct fl_reqgen *g, uint64_t request_index,
	struct reqgen_fields *f)
{
	Frontload__LeafRequest init = FRONTLOAD__LEAF_REQUEST__INIT;
	struct fl_reqgen_info info;
	struct fl_rng r;
	unsigned n = g->cfg.stories;
	uint64_t pad_rnd;
	size_t pad;

	memset(f, 0, sizeof *f);
	f->req = init;
	f->n = n;
	fl_rng_seed(&r, fl_rng_derive(g->cfg.seed, request_index));
	reqgen_draw(g, &r, &info);
	pad_rnd = fl_rng_next(&r);

	f->stories = calloc(n ? n : 1, sizeof *f->stories);
	f->sp = calloc(n ? n : 1, sizeof *f->sp);
	f->copies = calloc((size_t)n + 1, sizeof *f->copies);
	if (f->stories == NULL || f->sp == NULL || f->copies == NULL)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		Frontload__Story *st = &f->stories[i];
		frontload__story__init(st);
		st->id = fl_rng_next(&r);
		st->body.len = g->cfg.story_bytes;
		st->body.data = reqgen_slice(g->corpus, fl_rng_next(&r), g->cfg.story_bytes,
			&f->copies[i]);
		if (g->cfg.story_bytes > 0 && st->body.data == NULL)
			goto fail;
		f->sp[i] = st;
	}

	f->req.method = (Frontload__InboundMethod)info.method;
	f->req.session_id = info.session_id;
	f->req.user_id = info.user_id;
	f->req.n_stories = n;
	f->req.stories = f->sp;
	f->req.want_zstd = g->cfg.want_zstd != 0;
	f->req.reply_bytes = g->cfg.reply_bytes;

	pad = reqgen_padding_for(frontload__leaf_request__get_packed_size(&f->req),
		info.target_bytes);
	if (pad > 0) {
		f->req.padding.len = pad;
		f->req.padding.data = reqgen_slice(g->corpus, pad_rnd, pad, &f->copies[n]);
		if (f->req.padding.data == NULL)
			goto fail;
	}
	return 0;
fail:
	reqgen_fields_free(f);
	return -1;
}

/* Pack the whole request f holds into reserve's buffer: the only copy made. */
static int reqgen_pack_whole(const struct reqgen_fields *f,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, size_t *len_out)
{
	uint8_t *dst = reserve(arg, frontload__leaf_request__get_packed_size(&f->req));

	if (dst == NULL)
		return -1;
	*len_out = frontload__leaf_request__pack(&f->req, dst);
	return 0;
}

int fl_reqgen_build_to(const struct fl_reqgen *g, uint64_t request_index,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, size_t *len_out)
{
	struct reqgen_fields f;
	int rc;

	if (reqgen_fields_make(g, request_index, &f) != 0)
		return -1;
	rc = reqgen_pack_whole(&f, reserve, arg, len_out);
	reqgen_fields_free(&f);
	return rc;
}

/* Fields are packed in field-number order, so the request's bytes are: fields 1-4, the
 * padding (field 5: tag, length, bytes), fields 6-7. The head packs a copy without the
 * padding and fields 6-7, then the padding's tag and length; the tail packs a message
 * holding only fields 6-7 (proto3 leaves default fields out, so nothing else appears). */
int fl_reqgen_build_parts(const struct fl_reqgen *g, uint64_t request_index,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, struct fl_reqgen_parts *out)
{
	Frontload__LeafRequest tail = FRONTLOAD__LEAF_REQUEST__INIT;
	Frontload__LeafRequest head;
	struct reqgen_fields f;
	uint8_t *dst;
	size_t pad, n, len;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (reqgen_fields_make(g, request_index, &f) != 0)
		return -1;
	pad = f.req.padding.len;
	if (pad == 0 || f.copies[f.n] != NULL) {
		/* No padding, or a wrapped copy that dies with f: pack it all into the head. */
		rc = reqgen_pack_whole(&f, reserve, arg, &out->head_len);
		reqgen_fields_free(&f);
		return rc;
	}
	tail.want_zstd = f.req.want_zstd;
	tail.reply_bytes = f.req.reply_bytes;
	head = f.req;
	head.padding.len = 0;
	head.padding.data = NULL;
	head.want_zstd = 0;
	head.reply_bytes = 0;
	len = frontload__leaf_request__get_packed_size(&head);
	dst = reserve(arg, len + REQGEN_PADDING_TAG_BYTES + reqgen_varint_len(pad));
	if (dst != NULL) {
		n = frontload__leaf_request__pack(&head, dst);
		dst[n++] = (5u << 3) | 2u;  /* field 5, length-delimited */
		for (uint64_t v = pad; ; v >>= 7) {
			dst[n++] = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
			if (v < 0x80)
				break;
		}
		out->head_len = n;
		out->pad = f.req.padding.data;
		out->pad_len = pad;
		out->tail_len = frontload__leaf_request__pack(&tail, out->tail);
		rc = 0;
	}
	reqgen_fields_free(&f);
	return rc;
}

static uint8_t *reqgen_reserve_bytes(void *arg, size_t len)
{
	struct fl_bytes *b = arg;
	return fl_bytes_reserve(b, len ? len : 1) == 0 ? b->data : NULL;
}

int fl_reqgen_build(const struct fl_reqgen *g, uint64_t request_index,
	struct fl_bytes *out_payload)
{
	size_t len = 0;

	if (fl_reqgen_build_to(g, request_index, reqgen_reserve_bytes, out_payload, &len) != 0)
		return -1;
	out_payload->len = len;
	return 0;
}
