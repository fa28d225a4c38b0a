/* request_setup.h: the one setup of the request pipeline, for both of its front ends: the
 * leaf (behind the network: leaf/leaf_main.c) and frontload-simreq (in process, no
 * network: measure/simreq.c).
 *
 * What surrounds the pipeline differs (sockets and thread pools, or a loop over generated
 * requests); what the pipeline itself needs is made here, once, in one order: the reply
 * size table (runtime/data/feed_aggregator_resp_sizes.json), the extractor library, the
 * dispatch plan over it and its report, then the pipeline from its knobs. The knobs are
 * parsed by one option-table fragment, FL_PIPELINE_CLI_OPTS, in both programs.
 */
#ifndef FL_REQUEST_SETUP_H
#define FL_REQUEST_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "codesize.h"
#include "dispatch.h"
#include "libload.h"
#include "pipeline.h"
#include "sampler.h"

/* The pipeline's knobs, as parsed (FL_PIPELINE_CLI_OPTS). */
struct fl_pipeline_knobs {
	uint64_t extractors_per_story;  /* generated extractor calls per story (stage 3) */
	uint64_t max_stories;           /* stories of a request used, the rest ignored */
	double body, hit;               /* extractor knobs, % (dispatch.h) */
	uint64_t score_passes, topk, blend_passes, serialize_passes;  /* stage 4 */
	uint64_t emb_rows;              /* DLRM rows per embedding table (stage 5) */
	uint64_t rank_passes;           /* DLRM forwards over the kept stories (stage 5) */
	uint64_t zstd_level;            /* reply compression level (stage 7) */
	uint64_t max_reply_bytes;       /* cap on a sampled reply size */
};

/* The knobs as fl_cli options (runtime/common/cli.h) for a config struct holding a
 * struct fl_pipeline_knobs named pk; one definition for the leaf and frontload-simreq. */
#define FL_PIPELINE_CLI_OPTS \
	FL_OPT_UINT("extractors-per-story", pk.extractors_per_story, 0, 100000000, "N", "340", \
		"generated extractor calls per story"), \
	FL_OPT_UINT("max-stories", pk.max_stories, 1, 1000000, "N", "64", "stories of a " \
		"request used, the rest ignored"), \
	FL_OPT_REAL("body", pk.body, 0, 100, "PCT", "100", "share of extractor calls that run " \
		"their full body (%)"), \
	FL_OPT_REAL("hit", pk.hit, 0, 100, "PCT", "50", "extractor lookup hit rate (%)"), \
	FL_OPT_UINT("score-passes", pk.score_passes, 0, 10000, "N", "4", "story processor " \
		"scoring passes"), \
	FL_OPT_UINT("topk", pk.topk, 1, 1000000, "N", "16", "stories kept after ranking"), \
	FL_OPT_UINT("blend-passes", pk.blend_passes, 0, 10000, "N", "2", "blending passes " \
		"over the kept stories"), \
	FL_OPT_UINT("serialize-passes", pk.serialize_passes, 0, 10000, "N", "2", \
		"serialization passes over the kept stories"), \
	FL_OPT_UINT("emb-rows", pk.emb_rows, 1, 1u << 24, "N", "4096", "DLRM rows per " \
		"embedding table"), \
	FL_OPT_UINT("rank-passes", pk.rank_passes, 1, 1000, "N", "1", "DLRM forward passes " \
		"over the kept stories, 1..1000: the ranking stage's work, as a production ranker " \
		"scores several prediction heads or candidate batches (the score is the last " \
		"pass's; every pass computes the same)"), \
	FL_OPT_UINT("zstd-level", pk.zstd_level, 1, 19, "L", "3", "reply compression level"), \
	FL_OPT_UINT("max-reply-bytes", pk.max_reply_bytes, 1, UINT32_MAX, "BYTES", \
		"16777216", "cap on a reply's sampled size")

/* What every front end holds for its pipeline: built by fl_request_base_open. */
struct fl_request_base {
	struct fl_pct resp_sizes;   /* reply size table */
	struct fl_lib lib;          /* the extractor library */
	struct fl_plan plan;        /* the dispatch plan over it */
	char plan_json[1024];       /* fl_plan_report_json of plan */
	int open;                   /* lib and plan are set (for close) */
};

/* Load the reply size table, open the library at lib (NULL: the default search) and build
 * the plan from k, with its report (want_reuse: the reuse-distance profile too, a pass
 * over one lap). Returns 0, or -1 with err naming the step that failed. */
int fl_request_base_open(struct fl_request_base *b, const char *lib,
	const struct fl_plan_knobs *k, int want_reuse, char *err, size_t errlen);
void fl_request_base_close(struct fl_request_base *b);

/* The pipeline config of base b under knobs k: plan, reply sizes, knobs and seed set;
 * corpus, sessions, max_request_bytes and scratch_keep_bytes are the caller's. */
void fl_pipeline_config_init(struct fl_pipeline_config *pc, const struct fl_request_base *b,
	const struct fl_pipeline_knobs *k, uint64_t seed);

#endif
