/* simreq_knobs.h: frontload-simreq's knobs, the flags that shape its plan, pipeline and
 * request stream (not its run: warmup, requests, stage, output). One table for two
 * parsers: frontload-simreq's own, and frontload-measure's, which checks the knobs it
 * forwards to simreq against it and lists them in its --help (margs.c).
 *
 * The fields are a macro so that simreq's config struct holds them under the same names
 * as struct fl_simreq_knobs: FL_SIMREQ_KNOB_OPTS then fits either as FL_CLI_OBJ.
 */
#ifndef FL_SIMREQ_KNOBS_H
#define FL_SIMREQ_KNOBS_H

#include <stdint.h>

#include "cli.h"
#include "codesize.h"
#include "libload.h"
#include "request_setup.h"

#define FL_SIMREQ_KNOB_FIELDS \
	const char *lib; \
	uint64_t active_copies, active_functions, footprint_bytes, seed; \
	const char *dispatch; \
	double zipf_alpha; \
	struct fl_pipeline_knobs pk; \
	uint64_t calls_per_request, stories, story_bytes; \
	uint64_t max_request_bytes, request_bytes, sessions, sessions_max; \
	const char *method; \
	int zstd, zstd_frames; \
	uint64_t corpus_mb, corpus_seed;

struct fl_simreq_knobs {
	FL_SIMREQ_KNOB_FIELDS
};

/* The knobs the leaf also has keep the leaf's names and defaults. */
#define FL_SIMREQ_KNOB_OPTS \
	FL_OPT_STR("lib", lib, "PATH", NULL, "extractor library (default: " FL_LIB_NAME \
		" beside frontload-simreq, then ../lib/)"), \
	FL_OPT_UINT("active-copies", active_copies, 0, UINT32_MAX, "N", "0", "footprint " \
		"knob: copies of each extractor variant in the plan (0 = all)"), \
	FL_PLAN_CLI_OPTS, \
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "seed of the plan shuffle, model " \
		"weights, overheads and the request stream"), \
	FL_PIPELINE_CLI_OPTS, \
	FL_OPT_UINT("calls-per-request", calls_per_request, 0, 1000000000, "N", "0", \
		"convenience: sets --extractors-per-story to round(N / min(stories, " \
		"max-stories)) (0 = unset)"), \
	FL_OPT_UINT("stories", stories, 1, 65536, "N", "16", "stories per request (the " \
		"request builder's, as frontload-driver sends)"), \
	FL_OPT_UINT("story-bytes", story_bytes, 0, 1u << 20, "BYTES", "1024", "body bytes " \
		"per story"), \
	FL_OPT_UINT("max-request-bytes", max_request_bytes, 64, UINT32_MAX, "BYTES", \
		"4194304", "cap on a sampled request size and on a decompressed request"), \
	FL_OPT_UINT("request-bytes", request_bytes, 0, 1u << 30, "BYTES", "0", "fixed " \
		"packed request size (0 = sampled from feed_aggregator_req_sizes.json)"), \
	FL_OPT_STR("method", method, "NAME", "mix", "inbound method: mix (rpc_dist.json's " \
		"inbound mix) or one method name"), \
	FL_OPT_UINT("sessions", sessions, 1, UINT32_MAX, "N", "1000", "distinct session ids " \
		"in the request stream"), \
	FL_OPT_UINT("sessions-max", sessions_max, 0, 100000000, "N", "100000", "sessions " \
		"the leaf keeps (LRU); 0 = no session state"), \
	FL_OPT_FLAG("zstd", zstd, "ask for zstd-compressed reply payloads"), \
	FL_OPT_FLAG("zstd-frames", zstd_frames, "send request payloads as zstd frames " \
		"(decoded in stage 1)"), \
	FL_OPT_UINT("corpus-mb", corpus_mb, 1, 4096, "MIB", "64", "size of the generated " \
		"corpus (MiB)"), \
	FL_OPT_UINT("corpus-seed", corpus_seed, 0, UINT64_MAX, "S", "1", "seed of the " \
		"generated corpus")

#endif
