/* fuzz_frame.c: driver -> leaf byte stream through fl_wire_pull, zstd, LeafRequest and the leaf's stages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "corpus.h"
#include "dispatch.h"
#include "fl_extract.h"
#include "frontload.pb-c.h"
#include "fuzz.h"
#include "pipeline.h"
#include "session.h"
#include "wire.h"
#include "zcodec.h"

#define FZ_MAX_PAYLOAD (1u << 20)  /* the leaf's default frame limit is larger; plenty here */
#define FZ_MAX_REQUEST (1u << 20)  /* decompressed request cap (bytes) */
#define FZ_MAX_REPLY 4096u         /* reply bytes: small, the reply path is not the target */
#define FZ_MAX_STORIES 8u
#define FZ_SESSIONS 16u

/* Two small extractors, so the compute stage reads the fuzzed story bytes. */
static void fz_words(struct fl_ctx *ctx)
{
	uint32_t a = FL_W(ctx, 0), b = FL_W(ctx, 7);

	FL_YIELD(ctx, a, (int32_t)(b >> 3));
	FL_YIELD_SPARSE(ctx, a % 1021u, (int32_t)(a ^ b));
}

static void fz_lookup(struct fl_ctx *ctx)
{
	const uint32_t *v = fl_hmap_find(ctx, ctx->qkeys[FL_W(ctx, 2) % ctx->nqkeys]);

	FL_YIELD(ctx, FL_T(ctx, FL_W(ctx, 3)), v != NULL ? (int32_t)(v[0] & 0xffffu) : 1);
}

static const struct fl_fn_entry fz_registry[] = {
	{ fz_words, 0, 0, 0 }, { fz_lookup, 1, 0, 0 },
};

/* Built once: a pipeline and its worker cost milliseconds (DLRM weights, extractor hash
 * maps), 20 times a request. What carries over between inputs (the plan cursor, the
 * sessions of a small store) changes which extractors run and which stories a session
 * filters, not how a request is parsed. */
static struct {
	struct fl_plan plan;
	struct fl_corpus corpus;
	struct fl_session_store *sessions;
	struct fl_pipeline *p;
	struct fl_worker *wk;
} fz;

static void fz_die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_frame: %s: %s\n", what, err);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fl_pipeline_config c;
	char err[256];

	(void)argc;
	(void)argv;
	if (fl_plan_init(&fz.plan, fz_registry, 2, 7, 0, err, sizeof(err)) < 0)
		fz_die("plan", err);
	if (fl_corpus_generate(&fz.corpus, 3, 1u << 20, err, sizeof(err)) < 0)
		fz_die("corpus", err);
	fz.sessions = fl_session_store_new(FZ_SESSIONS, 0);
	if (fz.sessions == NULL)
		fz_die("sessions", "out of memory");
	memset(&c, 0, sizeof(c));
	c.plan = &fz.plan;
	c.corpus = &fz.corpus;
	c.sessions = fz.sessions;
	c.extract_per_story = 4;
	c.max_stories = FZ_MAX_STORIES;
	c.body_q16 = 65536;
	c.hit_q16 = 32768;
	c.score_passes = 1;
	c.topk = 4;
	c.blend_passes = 1;
	c.serialize_passes = 1;
	c.emb_rows = 64;
	c.max_reply_bytes = FZ_MAX_REPLY;
	c.max_request_bytes = FZ_MAX_REQUEST;
	c.zstd_level = 1;
	c.seed = 11;
	fz.p = fl_pipeline_new(&c, err, sizeof(err));
	if (fz.p == NULL || (fz.wk = fl_worker_new(fz.p, 0, err, sizeof(err))) == NULL)
		fz_die("pipeline", err);
	return 0;
}

/* The reply must come back through the frame reader as it went in. */
static void fz_check_reply(struct evbuffer *out, const struct fl_work *w)
{
	struct fl_frame_hdr h;
	uint8_t *payload;
	Frontload__LeafReply *r;

	if (fl_wire_pull(out, UINT32_MAX, &h, &payload) != FL_WIRE_FRAME ||
	    h.payload_len != w->out.len || h.request_id != w->request_id)
		fz_die("reply", "frame did not round-trip");
	r = frontload__leaf_reply__unpack(NULL, h.payload_len, payload);
	if (r == NULL || r->n_ranked != w->nranked)
		fz_die("reply", "LeafReply did not round-trip");
	frontload__leaf_reply__free_unpacked(r, NULL);
	free(payload);
}

/* One REQUEST frame as the leaf's RANKER thread runs it (fanout aside). */
static void fz_request(struct evbuffer *out, const struct fl_frame_hdr *h, const uint8_t *payload)
{
	struct fl_work w;
	struct fl_frame_hdr rh;
	char err[256];

	memset(&w, 0, sizeof(w));
	w.request_id = h->request_id;
	w.frame_flags = h->flags;
	w.payload = payload;
	w.payload_len = h->payload_len;
	if (fl_pipeline_decode(fz.wk, &w, err, sizeof(err)) == 0) {
		if (fl_pipeline_compute(fz.wk, &w) < 0 || fl_pipeline_reply(fz.wk, &w) < 0)
			fz_die("request", "compute or reply failed");
		fl_hdr_init(&rh, FL_MSG_REPLY, h->request_id, h->client_ts_ns);
		if (fl_wire_push(out, &rh, w.out.data, w.out.len) != 0)
			fz_die("request", "reply push failed");
		fz_check_reply(out, &w);
	} else if (err[0] == '\0') {
		fz_die("request", "decode failed without a message");
	}
	fl_work_clear(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *in = evbuffer_new(), *out = evbuffer_new();
	int rc;

	if (in == NULL || out == NULL)
		fz_die("setup", "out of memory");
	/* Two chunks, so frames straddle evbuffer chains as they do off a socket. */
	evbuffer_add(in, data, size / 2);
	evbuffer_add(in, data + size / 2, size - size / 2);
	for (;;) {
		struct fl_frame_hdr h;
		uint8_t *payload;
		size_t before = evbuffer_get_length(in);

		rc = fl_wire_pull(in, FZ_MAX_PAYLOAD, &h, &payload);
		if (rc != FL_WIRE_FRAME) {
			if (evbuffer_get_length(in) != before || payload != NULL)
				fz_die("pull", "a refused frame changed the buffer");
			break;
		}
		if (before - evbuffer_get_length(in) != FL_WIRE_HDR_BYTES + (size_t)h.payload_len ||
		    (payload == NULL) != (h.payload_len == 0))
			fz_die("pull", "frame length and payload disagree");
		if (h.type == FL_MSG_REQUEST)
			fz_request(out, &h, payload);
		free(payload);
	}
	evbuffer_free(in);
	evbuffer_free(out);
	return 0;
}
