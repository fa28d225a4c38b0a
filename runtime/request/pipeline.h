/* pipeline.h: the leaf's request path without the network (stages 1-5 and 7).
 *
 * The leaf server runs it on RANKER threads around the fanout (stage 6, fanout.h); the
 * simulated front-end measurement runs it in process under valgrind. A pipeline holds
 * what all threads share read-only (the dispatch plan over the extractor library, DLRM
 * weights, the corpus, size tables, knobs); a worker holds one thread's scratch (extractor
 * context, model activations, zstd codec, buffers). Each stage is timed on the thread CPU
 * clock and the monotonic clock into the work's struct fl_stage_ns: one read of each per
 * stage boundary, never per generated-function call. The CPU clock is clock_gettime
 * (CLOCK_THREAD_CPUTIME_ID) unless the worker's thread hooks its own (the leaf's RANKER
 * threads hook their fl_meter, runtime/common/cputime.h underneath).
 */
#ifndef FL_PIPELINE_H
#define FL_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "overheads.h"
#include "stages.h"
#include "zcodec.h"

struct fl_plan;
struct fl_corpus;
struct fl_pct;
struct fl_session_store;
struct Frontload__LeafRequest;

struct fl_pipeline_config {
	const struct fl_plan *plan;        /* extractor plan (dispatch.h); shared, read-only */
	const struct fl_corpus *corpus;    /* reply bytes come from here */
	const struct fl_pct *resp_bytes;   /* reply size table (feed_aggregator_resp_sizes) */
	struct fl_session_store *sessions; /* session state; may be NULL (sessions off) */
	uint32_t extract_per_story;        /* extractor calls per story (stage 3) */
	uint32_t max_stories;              /* stories used per request, the rest ignored */
	uint32_t body_q16, hit_q16;        /* extractor knobs (dispatch.h) */
	uint32_t score_passes;             /* story processors (stage 4): scoring passes */
	uint32_t topk;                     /* stories kept after ranking */
	uint32_t blend_passes;             /* blending passes over the kept stories */
	uint32_t serialize_passes;         /* serialization passes over the kept stories */
	uint32_t emb_rows;                 /* DLRM rows per embedding table (stage 5) */
	uint32_t rank_passes;              /* DLRM forwards over the kept stories (>= 1) */
	uint32_t max_reply_bytes;          /* cap on a sampled reply size */
	uint32_t max_request_bytes;        /* cap on a decompressed request payload */
	int zstd_level;                    /* reply compression level */
	uint64_t seed;
	size_t scratch_keep_bytes;         /* a worker buffer larger than this is freed after
	                                      each request (fl_worker_trim); 0: grow-only */
};

struct fl_pipeline;
struct fl_worker;

/* New pipeline (builds the DLRM weights from seed). NULL (err filled) on bad knobs or out
 * of memory. The plan, corpus, table and session store must outlive it. */
struct fl_pipeline *fl_pipeline_new(const struct fl_pipeline_config *cfg, char *err,
	size_t errlen);
void fl_pipeline_free(struct fl_pipeline *p);

/* New worker for one thread (index seeds its streams). NULL (err filled) on failure. */
struct fl_worker *fl_worker_new(struct fl_pipeline *p, unsigned index, char *err,
	size_t errlen);
void fl_worker_free(struct fl_worker *w);

/* The calling thread's CPU time in ns, for the stage timing; arg as given below. */
typedef uint64_t (*fl_cpu_clock_fn)(void *arg);

/* Read stage CPU time with fn(arg) instead of clock_gettime (fn NULL: back to it). Call
 * from the thread that runs the worker, before its first stage: fn must read that
 * thread's clock. */
void fl_worker_set_cpu_clock(struct fl_worker *w, fl_cpu_clock_fn fn, void *arg);

/* After a request, on the worker's thread: free the request and reply buffers over
 * scratch_keep_bytes, and publish what the worker's scratch holds now. */
void fl_worker_trim(struct fl_worker *w);

/* Bytes the worker's growable scratch held at its last trim (request and reply buffers,
 * reply entries, zstd contexts). Any thread. */
size_t fl_worker_scratch_bytes(const struct fl_worker *w);

/* Bytes of the pipeline's DLRM weights and embedding tables. */
size_t fl_pipeline_model_bytes(const struct fl_pipeline *p);

struct fl_ranked {
	uint64_t id;
	float score;
};

/* Asked by fl_pipeline_compute before stage `next` (FL_STAGE_EXTRACT, FL_STAGE_RANK):
 * non-zero skips it and the rest of compute. arg as set in the work. */
typedef int (*fl_work_gate_fn)(void *arg, enum fl_stage next);

/* One request's path through the stages. Zero it, set the inputs, call the stages in
 * order, then fl_work_clear before reuse. */
struct fl_work {
	/* in */
	uint64_t request_id;
	fl_work_gate_fn gate;          /* NULL: never skip (the leaf checks deadlines here) */
	void *gate_arg;
	uint16_t frame_flags;          /* wire.h flags of the request frame */
	const uint8_t *payload;        /* request payload as received (not owned) */
	size_t payload_len;
	/* out of decode */
	struct Frontload__LeafRequest *req;  /* owned; freed by fl_work_clear */
	/* out of compute */
	struct fl_ranked *ranked;      /* owned, nranked entries, best first */
	size_t nranked;
	uint32_t extract_calls;
	enum fl_stage skipped_before;  /* the stage the gate refused (compute returned 1) */
	/* set by the caller after fanout, copied into the reply */
	uint32_t fanout_calls, fanout_errors;
	/* out of reply */
	struct fl_bytes out;           /* encoded LeafReply payload (owned) */
	uint16_t out_flags;            /* wire.h flags for the reply frame (0: never zstd'd
	                                  as a frame; compression is inside LeafReply) */
	struct fl_stage_ns t;          /* time per stage for this request */
};

/* Stage 1: decompress (when frame_flags has FL_FRAME_ZSTD) and unpack payload into
 * w->req. Returns 0, or -1 with err naming the problem (the server answers
 * FL_STATUS_BAD_REQUEST). */
int fl_pipeline_decode(struct fl_worker *wk, struct fl_work *w, char *err, size_t errlen);

/* Stage 2 on a decoded request, after its admission (fl_overheads_enter, on the thread
 * that admitted it): request key, hash, ACL, counters, staleness against client_ts_ns
 * (the client's realtime send stamp), timed on the worker's clock like every stage.
 * Returns FL_OVH_ADMIT, or FL_OVH_DENIED / FL_OVH_STALE: the request ends there. */
enum fl_ovh_verdict fl_pipeline_overheads(struct fl_worker *wk, struct fl_overheads *ovh,
	struct fl_work *w, uint64_t client_ts_ns);

/* Stages 3-5 on a decoded request: extraction over min(stories, max_stories) stories,
 * story processors, DLRM ranking, session update. Returns 0, 1 when w->gate refused a
 * stage (w->skipped_before names it; the session is left as it was, nothing is ranked),
 * or -1 (out of memory). */
int fl_pipeline_compute(struct fl_worker *wk, struct fl_work *w);

/* Stage 7: reply bytes (req->reply_bytes, or sampled from the reply size table), zstd when
 * asked, LeafReply encoded into w->out. Returns 0 or -1 (out of memory / codec error). */
int fl_pipeline_reply(struct fl_worker *wk, struct fl_work *w);

/* Free what the stages allocated and zero w. */
void fl_work_clear(struct fl_work *w);

#endif
