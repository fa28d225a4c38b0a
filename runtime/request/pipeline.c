/* pipeline.c: the leaf's request path: decode, extract, story processors, DLRM, reply. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "corpus.h"
#include "dispatch.h"
#include "dlrm.h"
#include "errbuf.h"
#include "fl_extract.h"
#include "frontload.pb-c.h"
#include "model_inputs.h"
#include "murmur.h"
#include "pipeline.h"
#include "rng.h"
#include "sampler.h"
#include "session.h"
#include "story_proc.h"
#include "wire.h"
#include "zcodec.h"

#define PIPE_METHODS 5u           /* InboundMethod values 0..4 */
#define PIPE_QKEYS 64u            /* query keys per extractor context */
#define PIPE_MODEL_SHARE 0.75f    /* final score = share * model + rest * processor score */
#define PIPE_MAX_STORIES 65536u
#define PIPE_CTX_KEY 0xc7c7ull    /* seed stream keys, so sub-streams never coincide */
#define PIPE_CURSOR_KEY 0xc0c0ull
#define PIPE_STORY_KEY 0x5707ull

struct fl_pipeline {
	struct fl_pipeline_config cfg;
	struct fl_dlrm *model;                 /* shared, read-only */
};

/* One thread's scratch; nothing here is shared. */
struct fl_worker {
	struct fl_pipeline *p;
	unsigned index;
	struct fl_ctx *ctx;                    /* extractor context */
	uint64_t cursor;                       /* running plan position (dispatch.h) */
	struct fl_dlrm_scratch *dlrm;
	struct fl_sp *sp;
	struct fl_zcodec *z;
	struct fl_rng rng;                     /* reseeded per request id */
	struct fl_sp_story *stories;           /* max_stories */
	float *dense;                          /* max_stories x FL_DLRM_DENSE, by story slot */
	uint32_t *sparse;                      /* max_stories x FL_DLRM_SPARSE, by story slot */
	float *batch_dense;                    /* the kept stories' inputs, in kept order */
	uint32_t *batch_sparse;
	float *model_out;                      /* max_stories DLRM outputs */
	uint32_t *order;                       /* max_stories: top-K indices */
	struct fl_bytes inbuf;                 /* decompressed request payload */
	struct fl_bytes raw;                   /* reply bytes before compression */
	struct fl_bytes zbuf;                  /* compressed reply bytes */
	Frontload__RankedStory *rs;            /* rscap reply entries and their pointers */
	Frontload__RankedStory **rsp;
	size_t rscap;
	uint64_t sp_checksum;                  /* last serialization checksum (kept live) */
	size_t sp_packed_bytes;
	struct fl_session sess;                /* the request's session state */
	fl_cpu_clock_fn cpu_clock;             /* stage CPU clock; NULL: fl_thread_cpu_ns */
	void *cpu_clock_arg;
	_Atomic size_t scratch_bytes;          /* published by fl_worker_trim */
};

/* Stage clock marks: thread CPU and monotonic. */
struct pipe_mark {
	uint64_t cpu_ns, wall_ns;
};

static void pipe_mark_now(const struct fl_worker *wk, struct pipe_mark *m)
{
	m->cpu_ns = wk->cpu_clock ? wk->cpu_clock(wk->cpu_clock_arg) : fl_thread_cpu_ns();
	m->wall_ns = fl_mono_ns();
}

/* Charge the time since *m to stage s and restart *m there (one clock pair per stage). */
static void pipe_charge(const struct fl_worker *wk, struct fl_work *w, enum fl_stage s,
	struct pipe_mark *m)
{
	struct pipe_mark now;

	pipe_mark_now(wk, &now);
	w->t.cpu_ns[s] += now.cpu_ns - m->cpu_ns;
	w->t.wall_ns[s] += now.wall_ns - m->wall_ns;
	*m = now;
}

enum fl_ovh_verdict fl_pipeline_overheads(struct fl_worker *wk, struct fl_overheads *ovh,
	struct fl_work *w, uint64_t client_ts_ns)
{
	struct pipe_mark m;

	pipe_mark_now(wk, &m);
	struct fl_ovh_req oq = {
		.method = (uint32_t)w->req->method,
		.user_id = w->req->user_id,
		.session_id = w->req->session_id,
		.request_id = w->request_id,
		.client_ts_ns = client_ts_ns,
		.now_ns = fl_wall_ns(),
	};
	struct fl_ovh_out oo;
	enum fl_ovh_verdict v = fl_overheads_run(ovh, &oq, &oo);
	pipe_charge(wk, w, FL_STAGE_OVERHEADS, &m);
	return v;
}

struct fl_pipeline *fl_pipeline_new(const struct fl_pipeline_config *cfg, char *err,
	size_t errlen)
{
	struct fl_pipeline *p;

	if (cfg == NULL || cfg->plan == NULL || cfg->corpus == NULL || cfg->corpus->len == 0) {
		fl_errf(err, errlen, "pipeline: plan and a non-empty corpus are required");
		return NULL;
	}
	if (cfg->max_stories < 1 || cfg->max_stories > PIPE_MAX_STORIES || cfg->topk < 1) {
		fl_errf(err, errlen, "pipeline: max_stories must be 1..%u and topk >= 1",
			PIPE_MAX_STORIES);
		return NULL;
	}
	if (cfg->body_q16 > 65536u || cfg->hit_q16 > 65536u) {
		fl_errf(err, errlen, "pipeline: body_q16 and hit_q16 must be 0..65536");
		return NULL;
	}
	if (cfg->zstd_level < 1 || cfg->zstd_level > 19) {
		fl_errf(err, errlen, "pipeline: zstd level %d out of range 1..19", cfg->zstd_level);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		fl_errf(err, errlen, "pipeline: out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->model = fl_dlrm_new(cfg->emb_rows, cfg->seed, err, errlen);
	if (p->model == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

void fl_pipeline_free(struct fl_pipeline *p)
{
	if (p == NULL)
		return;
	fl_dlrm_free(p->model);
	free(p);
}

/* Each thread gets its own extractor context and plan position (from index), so threads
 * walk different parts of the plan, as production leaf threads serve different requests. */
struct fl_worker *fl_worker_new(struct fl_pipeline *p, unsigned index, char *err, size_t errlen)
{
	const struct fl_pipeline_config *c = &p->cfg;
	size_t n = c->max_stories;
	struct fl_worker *wk = calloc(1, sizeof(*wk));

	if (wk == NULL) {
		fl_errf(err, errlen, "worker %u: out of memory", index);
		return NULL;
	}
	wk->p = p;
	wk->index = index;
	wk->ctx = fl_ctx_init(fl_rng_derive(c->seed ^ PIPE_CTX_KEY, index), PIPE_QKEYS, err, errlen);
	if (wk->ctx == NULL)
		goto fail;
	if (fl_ctx_set_body(wk->ctx, c->body_q16) < 0 ||
		fl_ctx_set_hit(wk->ctx, c->hit_q16, err, errlen) < 0)
		goto fail;
	wk->cursor = fl_rng_derive(c->seed ^ PIPE_CURSOR_KEY, index);
	wk->dlrm = fl_dlrm_scratch_new(n);
	wk->sp = fl_sp_new(n, c->seed);
	wk->z = fl_zcodec_new(c->zstd_level);
	wk->stories = calloc(n, sizeof(*wk->stories));
	wk->dense = calloc(n * FL_DLRM_DENSE, sizeof(float));
	wk->sparse = calloc(n * FL_DLRM_SPARSE, sizeof(uint32_t));
	wk->batch_dense = calloc(n * FL_DLRM_DENSE, sizeof(float));
	wk->batch_sparse = calloc(n * FL_DLRM_SPARSE, sizeof(uint32_t));
	wk->model_out = calloc(n, sizeof(float));
	wk->order = calloc(n, sizeof(uint32_t));
	if (wk->dlrm == NULL || wk->sp == NULL || wk->z == NULL || wk->stories == NULL ||
		wk->dense == NULL || wk->sparse == NULL || wk->batch_dense == NULL ||
		wk->batch_sparse == NULL || wk->model_out == NULL || wk->order == NULL) {
		fl_errf(err, errlen, "worker %u: out of memory", index);
		goto fail;
	}
	return wk;
fail:
	fl_worker_free(wk);
	return NULL;
}

void fl_worker_set_cpu_clock(struct fl_worker *wk, fl_cpu_clock_fn fn, void *arg)
{
	wk->cpu_clock = fn;
	wk->cpu_clock_arg = fn ? arg : NULL;
}

void fl_worker_trim(struct fl_worker *wk)
{
	size_t keep = wk->p->cfg.scratch_keep_bytes ? wk->p->cfg.scratch_keep_bytes : SIZE_MAX;
	size_t n = fl_bytes_trim(&wk->inbuf, keep) + fl_bytes_trim(&wk->raw, keep) +
		fl_bytes_trim(&wk->zbuf, keep);

	n += wk->rscap * (sizeof(*wk->rs) + sizeof(*wk->rsp)) + fl_zcodec_bytes(wk->z);
	atomic_store_explicit(&wk->scratch_bytes, n, memory_order_relaxed);
}

size_t fl_worker_scratch_bytes(const struct fl_worker *wk)
{
	return atomic_load_explicit(&((struct fl_worker *)wk)->scratch_bytes,
		memory_order_relaxed);
}

size_t fl_pipeline_model_bytes(const struct fl_pipeline *p)
{
	return fl_dlrm_bytes(p->model);
}

void fl_worker_free(struct fl_worker *wk)
{
	if (wk == NULL)
		return;
	fl_ctx_free(wk->ctx);
	fl_dlrm_scratch_free(wk->dlrm);
	fl_sp_free(wk->sp);
	fl_zcodec_free(wk->z);
	free(wk->stories);
	free(wk->dense);
	free(wk->sparse);
	free(wk->batch_dense);
	free(wk->batch_sparse);
	free(wk->model_out);
	free(wk->order);
	fl_bytes_free(&wk->inbuf);
	fl_bytes_free(&wk->raw);
	fl_bytes_free(&wk->zbuf);
	free(wk->rs);
	free(wk->rsp);
	free(wk);
}

int fl_pipeline_decode(struct fl_worker *wk, struct fl_work *w, char *err, size_t errlen)
{
	static const uint8_t empty[1];
	const uint8_t *data = w->payload_len != 0 ? w->payload : empty;
	size_t len = w->payload_len;
	struct pipe_mark m;
	int rc = -1;

	pipe_mark_now(wk, &m);
	if (w->req != NULL) {
		frontload__leaf_request__free_unpacked(w->req, NULL);
		w->req = NULL;
	}
	if (w->payload == NULL && len != 0) {
		fl_errf(err, errlen, "request: no payload buffer for %zu bytes", len);
		goto out;
	}
	if ((w->frame_flags & ~FL_FRAME_FLAGS_ALL) != 0) {
		fl_errf(err, errlen, "request: unknown frame flags 0x%x", (unsigned)w->frame_flags);
		goto out;
	}
	if (w->frame_flags & FL_FRAME_ZSTD) {
		if (fl_zcodec_decompress(wk->z, data, len, wk->p->cfg.max_request_bytes,
			&wk->inbuf) < 0) {
			fl_errf(err, errlen, "request: zstd payload of %zu bytes is corrupt or "
				"decompresses beyond %u bytes", len, wk->p->cfg.max_request_bytes);
			goto out;
		}
		data = wk->inbuf.len != 0 ? wk->inbuf.data : empty;
		len = wk->inbuf.len;
	}
	w->req = frontload__leaf_request__unpack(NULL, len, data);
	if (w->req == NULL) {
		fl_errf(err, errlen, "request: %zu bytes are not a LeafRequest", len);
		goto out;
	}
	/* proto3 enums are open: protobuf-c keeps any value, so range-check it here. */
	if ((uint32_t)w->req->method >= PIPE_METHODS) {
		fl_errf(err, errlen, "request: unknown method %d", (int)w->req->method);
		frontload__leaf_request__free_unpacked(w->req, NULL);
		w->req = NULL;
		goto out;
	}
	rc = 0;
out:
	pipe_charge(wk, w, FL_STAGE_DECODE, &m);
	return rc;
}

/* Stage 3: run the extractors over each story and derive its features. The extractors'
 * time is charged to the extract stage and the features' to the rank stage, story by story
 * from *m: the model's input is ranking work (profile_categories.txt counts fl_inputs_*
 * there), so the stage clock and the CPU profile split the same code the same way. */
static int pipe_extract(struct fl_worker *wk, struct fl_work *w, size_t n,
	struct pipe_mark *m)
{
	const struct fl_pipeline_config *c = &wk->p->cfg;
	uint32_t rows = fl_dlrm_rows(wk->p->model);
	uint64_t calls = 0;

	for (size_t i = 0; i < n; i++) {
		const Frontload__Story *st = w->req->stories[i];
		const uint8_t *body = st->body.len != 0 ? st->body.data : NULL;
		struct fl_sp_story *sp = &wk->stories[i];
		uint64_t hash;

		if (fl_ctx_set_story(wk->ctx, body, st->body.len) < 0)
			return -1;
		fl_ctx_clear_sink(wk->ctx);
		wk->cursor = fl_plan_run(c->plan, wk->ctx, wk->cursor, c->extract_per_story);
		calls += c->extract_per_story;
		hash = fl_murmur64a(body != NULL ? body : (const uint8_t *)"", st->body.len,
			c->seed ^ st->id);
		sp->id = st->id;
		sp->slot = (uint32_t)i;
		sp->body = body;
		sp->body_len = st->body.len;
		sp->score = 0.0f;
		pipe_charge(wk, w, FL_STAGE_EXTRACT, m);
		fl_inputs_story(wk->ctx->sink, hash, rows, wk->dense + i * FL_DLRM_DENSE,
			wk->sparse + i * FL_DLRM_SPARSE, sp->feat);
		pipe_charge(wk, w, FL_STAGE_RANK, m);
	}
	w->extract_calls = calls > UINT32_MAX ? UINT32_MAX : (uint32_t)calls;
	return 0;
}

/* Stage 5: DLRM over the kept stories; the final score blends the model's probability with
 * the processor score mapped from (-2, 2) to (0, 1). */
static void pipe_rank(struct fl_worker *wk, size_t kept)
{
	for (size_t j = 0; j < kept; j++) {
		uint32_t slot = wk->stories[j].slot;

		memcpy(wk->batch_dense + j * FL_DLRM_DENSE, wk->dense + (size_t)slot * FL_DLRM_DENSE,
			FL_DLRM_DENSE * sizeof(float));
		memcpy(wk->batch_sparse + j * FL_DLRM_SPARSE,
			wk->sparse + (size_t)slot * FL_DLRM_SPARSE, FL_DLRM_SPARSE * sizeof(uint32_t));
	}
	/* Every pass is a whole forward (sgemm through OpenBLAS): repeated work, not elided. */
	for (uint32_t p = 0; p < (wk->p->cfg.rank_passes ? wk->p->cfg.rank_passes : 1u); p++)
		fl_dlrm_forward(wk->p->model, wk->dlrm, wk->batch_dense, wk->batch_sparse, kept,
			wk->model_out);
	for (size_t j = 0; j < kept; j++) {
		float proc = 0.5f + 0.25f * wk->stories[j].score;

		wk->stories[j].score = PIPE_MODEL_SHARE * wk->model_out[j] +
			(1.0f - PIPE_MODEL_SHARE) * proc;
	}
}

static int pipe_ranked_cmp(const void *pa, const void *pb)
{
	const struct fl_ranked *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Append the session's remembered stories not already ranked, then re-sort. */
static void pipe_merge_session(struct fl_work *w, const struct fl_session *s)
{
	size_t base = w->nranked;

	for (uint32_t i = 0; i < s->nstories && i < FL_SESSION_STORIES; i++) {
		size_t j = 0;

		while (j < w->nranked && w->ranked[j].id != s->story_ids[i])
			j++;
		if (j < w->nranked)
			continue;
		w->ranked[w->nranked].id = s->story_ids[i];
		w->ranked[w->nranked].score = s->story_scores[i];
		w->nranked++;
	}
	if (w->nranked > base)
		qsort(w->ranked, w->nranked, sizeof(*w->ranked), pipe_ranked_cmp);
}

/* Remember this request's ranked stories in the session's ring. */
static void pipe_remember(struct fl_session *s, const struct fl_ranked *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t at = s->story_head % FL_SESSION_STORIES;

		s->story_ids[at] = r[i].id;
		s->story_scores[at] = r[i].score;
		s->story_head = (at + 1u) % FL_SESSION_STORIES;
		if (s->nstories < FL_SESSION_STORIES)
			s->nstories++;
	}
	s->requests++;
}

/* Ask the work's gate about stage next; 1 (and noted) when it says skip. */
static int pipe_skip(struct fl_work *w, enum fl_stage next)
{
	if (w->gate == NULL || w->gate(w->gate_arg, next) == 0)
		return 0;
	w->skipped_before = next;
	return 1;
}

int fl_pipeline_compute(struct fl_worker *wk, struct fl_work *w)
{
	const struct fl_pipeline_config *c = &wk->p->cfg;
	const Frontload__LeafRequest *req = w->req;
	size_t n, kept, k, nseen = 0;
	struct pipe_mark m;
	int method;

	if (req == NULL)
		return -1;
	method = (int)req->method;
	n = req->n_stories < c->max_stories ? req->n_stories : c->max_stories;
	if (pipe_skip(w, FL_STAGE_EXTRACT))
		return 1;
	pipe_mark_now(wk, &m);
	if (pipe_extract(wk, w, n, &m) < 0)
		return -1;

	if (c->sessions != NULL) {
		fl_session_get(c->sessions, req->session_id, m.wall_ns,
			method == FRONTLOAD__INBOUND_METHOD__CREATE_AND_PRIME_SESSION, &wk->sess);
		nseen = wk->sess.nstories;
	}
	fl_sp_score(wk->sp, wk->stories, n, c->score_passes);
	kept = fl_sp_filter(wk->sp, wk->stories, n, wk->sess.story_ids, nseen);
	pipe_charge(wk, w, FL_STAGE_STORIES, &m);

	/* The session is a copy: skipping here leaves the stored one untouched. */
	if (pipe_skip(w, FL_STAGE_RANK))
		return 1;
	pipe_rank(wk, kept);
	pipe_charge(wk, w, FL_STAGE_RANK, &m);

	k = fl_sp_topk(wk->stories, kept, c->topk, wk->order);
	fl_sp_blend(wk->stories, wk->order, k, c->blend_passes);
	wk->sp_checksum ^= fl_sp_serialize(wk->sp, wk->stories, wk->order, k, c->serialize_passes,
		&wk->sp_packed_bytes);
	free(w->ranked);
	w->nranked = 0;
	w->ranked = malloc((k + FL_SESSION_STORIES) * sizeof(*w->ranked));
	if (w->ranked == NULL)
		return -1;
	for (size_t i = 0; i < k; i++) {
		w->ranked[i].id = wk->stories[wk->order[i]].id;
		w->ranked[i].score = wk->stories[wk->order[i]].score;
	}
	w->nranked = k;
	if (c->sessions != NULL) {
		if (method == FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES)
			pipe_merge_session(w, &wk->sess);
		pipe_remember(&wk->sess, w->ranked, k);
		fl_session_put(c->sessions, &wk->sess, fl_mono_ns());
	}
	pipe_charge(wk, w, FL_STAGE_STORIES, &m);
	return 0;
}

/* Reply size: asked for, or sampled from the table; both capped at max_reply_bytes. */
static uint32_t pipe_reply_size(struct fl_worker *wk, const Frontload__LeafRequest *req)
{
	const struct fl_pipeline_config *c = &wk->p->cfg;
	double v;

	if (req->reply_bytes != 0)
		return req->reply_bytes < c->max_reply_bytes ? req->reply_bytes : c->max_reply_bytes;
	if (c->resp_bytes == NULL)
		return 0;
	v = fl_pct_sample(c->resp_bytes, fl_rng_unit(&wk->rng));
	if (!(v > 0.0))
		return 0;
	if (v >= (double)c->max_reply_bytes)
		return c->max_reply_bytes;
	return (uint32_t)llround(v);
}

/* Make room for n reply entries. Returns 0 or -1 (out of memory). */
static int pipe_reply_entries(struct fl_worker *wk, size_t n)
{
	Frontload__RankedStory *rs;
	Frontload__RankedStory **rsp;

	if (n <= wk->rscap)
		return 0;
	rs = realloc(wk->rs, n * sizeof(*rs));
	if (rs == NULL)
		return -1;
	wk->rs = rs;
	rsp = realloc(wk->rsp, n * sizeof(*rsp));
	if (rsp == NULL)
		return -1;
	wk->rsp = rsp;
	wk->rscap = n;
	return 0;
}

int fl_pipeline_reply(struct fl_worker *wk, struct fl_work *w)
{
	const struct fl_pipeline_config *c = &wk->p->cfg;
	const Frontload__LeafRequest *req = w->req;
	Frontload__LeafReply reply = FRONTLOAD__LEAF_REPLY__INIT;
	struct pipe_mark m;
	uint32_t size;
	size_t packed;
	int zstd;

	if (req == NULL)
		return -1;
	pipe_mark_now(wk, &m);
	fl_rng_seed(&wk->rng, fl_rng_derive(c->seed, w->request_id));
	size = pipe_reply_size(wk, req);
	if (fl_bytes_reserve(&wk->raw, size) < 0)
		return -1;
	fl_corpus_copy(c->corpus, fl_rng_next(&wk->rng), wk->raw.data, size);
	wk->raw.len = size;
	zstd = req->want_zstd && req->method != FRONTLOAD__INBOUND_METHOD__GET_STORIES_UNCOMPRESSED;
	if (zstd && fl_zcodec_compress(wk->z, wk->raw.data, wk->raw.len, &wk->zbuf) < 0)
		return -1;
	pipe_charge(wk, w, FL_STAGE_COMPRESS, &m);

	if (pipe_reply_entries(wk, w->nranked) < 0)
		return -1;
	for (size_t i = 0; i < w->nranked; i++) {
		frontload__ranked_story__init(&wk->rs[i]);
		wk->rs[i].id = w->ranked[i].id;
		wk->rs[i].score = w->ranked[i].score;
		wk->rsp[i] = &wk->rs[i];
	}
	reply.session_id = req->session_id;
	reply.n_ranked = w->nranked;
	reply.ranked = w->nranked != 0 ? wk->rsp : NULL;
	reply.payload.data = zstd ? wk->zbuf.data : wk->raw.data;
	reply.payload.len = zstd ? wk->zbuf.len : wk->raw.len;
	reply.payload_raw_bytes = size;
	reply.payload_zstd = zstd;
	reply.fanout_calls = w->fanout_calls;
	reply.fanout_errors = w->fanout_errors;
	reply.extract_calls = w->extract_calls;
	packed = frontload__leaf_reply__get_packed_size(&reply);
	if (fl_bytes_reserve(&w->out, packed) < 0)
		return -1;
	w->out.len = frontload__leaf_reply__pack(&reply, w->out.data);
	w->out_flags = 0;
	pipe_charge(wk, w, FL_STAGE_REPLY, &m);
	return 0;
}

void fl_work_clear(struct fl_work *w)
{
	if (w->req != NULL)
		frontload__leaf_request__free_unpacked(w->req, NULL);
	free(w->ranked);
	fl_bytes_free(&w->out);
	memset(w, 0, sizeof(*w));
}
