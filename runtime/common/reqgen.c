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

/* Packs by pointing stories and padding at corpus memory: the only copy made is the pack
 * itself. The stories' draws (id, offset) come after the padding offset in the stream. */
int fl_reqgen_build_to(const struct fl_reqgen *g, uint64_t request_index,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, size_t *len_out)
{
	Frontload__LeafRequest req = FRONTLOAD__LEAF_REQUEST__INIT;
	struct fl_reqgen_info info;
	struct fl_rng r;
	unsigned n = g->cfg.stories;
	Frontload__Story *stories = NULL;
	Frontload__Story **sp = NULL;
	uint8_t **copies = NULL;  /* n story copies + the padding copy (rarely used) */
	uint8_t *dst;
	uint64_t pad_rnd;
	size_t base, pad, size;
	int rc = -1;

	fl_rng_seed(&r, fl_rng_derive(g->cfg.seed, request_index));
	reqgen_draw(g, &r, &info);
	pad_rnd = fl_rng_next(&r);

	stories = calloc(n ? n : 1, sizeof *stories);
	sp = calloc(n ? n : 1, sizeof *sp);
	copies = calloc((size_t)n + 1, sizeof *copies);
	if (stories == NULL || sp == NULL || copies == NULL)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		frontload__story__init(&stories[i]);
		stories[i].id = fl_rng_next(&r);
		stories[i].body.len = g->cfg.story_bytes;
		stories[i].body.data = reqgen_slice(g->corpus, fl_rng_next(&r),
			g->cfg.story_bytes, &copies[i]);
		if (g->cfg.story_bytes > 0 && stories[i].body.data == NULL)
			goto out;
		sp[i] = &stories[i];
	}

	req.method = (Frontload__InboundMethod)info.method;
	req.session_id = info.session_id;
	req.user_id = info.user_id;
	req.n_stories = n;
	req.stories = sp;
	req.want_zstd = g->cfg.want_zstd != 0;
	req.reply_bytes = g->cfg.reply_bytes;

	base = frontload__leaf_request__get_packed_size(&req);
	pad = reqgen_padding_for(base, info.target_bytes);
	if (pad > 0) {
		req.padding.len = pad;
		req.padding.data = reqgen_slice(g->corpus, pad_rnd, pad, &copies[n]);
		if (req.padding.data == NULL)
			goto out;
	}
	size = frontload__leaf_request__get_packed_size(&req);
	dst = reserve(arg, size);
	if (dst == NULL)
		goto out;
	*len_out = frontload__leaf_request__pack(&req, dst);
	rc = 0;
out:
	if (copies != NULL)
		for (unsigned i = 0; i <= n; i++)
			free(copies[i]);
	free(copies);
	free(sp);
	free(stories);
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
