/* reqgen.h: deterministic LeafRequest builder shared by the driver and the test client.
 *
 * Request i of a generator is a pure function of (config, corpus, i): its random draws come
 * from the stream fl_rng_derive(seed, i), so any thread may build any request, in any
 * order, and get the same bytes. A request is:
 *
 *   method       drawn from the inbound mix of rpc_dist.json (weights: each method's
 *                total_weighted_count), or one fixed method
 *   session_id   one of `sessions` ids derived from the seed; user_id derived from it
 *   stories      `stories` stories, each a random 64-bit id and story_bytes bytes copied
 *                from the corpus at a random offset
 *   padding      corpus bytes bringing the packed LeafRequest to its target size, so a
 *                zstd of the request compresses like real data, not like zeros
 *   want_zstd,   copied from the config
 *   reply_bytes
 *
 * The target size (bytes of packed protobuf payload, excluding the 40-byte frame header)
 * is sampled from feed_aggregator_req_sizes.json and capped at max_request_bytes, or a
 * fixed number. When the stories alone exceed the target, no padding is added and the
 * request is larger than its target.
 *
 * Threads: fl_reqgen_init once; then fl_reqgen_build/describe from any thread at once
 * (the generator is read-only after init).
 */
#ifndef FL_REQGEN_H
#define FL_REQGEN_H

#include <stddef.h>
#include <stdint.h>

#include "sampler.h"

struct fl_bytes;
struct fl_corpus;

#define FL_REQGEN_MIX (-1)  /* method: draw from the inbound mix */
#define FL_REQGEN_SIZE_SAMPLED 0u  /* fixed_bytes value meaning "sample from the table" */

struct fl_reqgen_config {
	uint64_t seed;             /* stream seed: same seed, same requests */
	unsigned stories;          /* stories per request (default 16, 0..65536) */
	size_t story_bytes;        /* body bytes per story (default 1024) */
	size_t fixed_bytes;        /* target packed size (bytes); FL_REQGEN_SIZE_SAMPLED
	                              (0, the default) samples it from the size table */
	size_t max_request_bytes;  /* cap on a sampled target (bytes, default 4 MiB) */
	int method;                /* enum Frontload__InboundMethod value, or FL_REQGEN_MIX
	                              (the default) */
	uint64_t sessions;         /* distinct session ids (default 1000, >= 1) */
	int want_zstd;             /* ask the leaf for a zstd reply payload (default 0) */
	uint32_t reply_bytes;      /* reply size asked for (bytes); 0 (default): leaf samples */
};

struct fl_reqgen {
	struct fl_reqgen_config cfg;
	const struct fl_corpus *corpus;     /* bodies and padding; outlives the generator */
	struct fl_pct sizes;                /* request sizes (bytes); loaded in sampled mode */
	double method_cum[FL_RPC_INBOUND];  /* cumulative mix weights, normalised to 1; in
	                                       enum Frontload__InboundMethod order */
	uint64_t session_seed;              /* session k's id is fl_rng_derive(this, k) */
};

/* What request i is, without building it. */
struct fl_reqgen_info {
	int method;              /* enum Frontload__InboundMethod value */
	uint64_t session_id;
	uint64_t user_id;
	size_t target_bytes;     /* packed payload size aimed at (bytes) */
};

/* Fill c with the defaults above. */
void fl_reqgen_config_default(struct fl_reqgen_config *c);

/* Set up g. Loads feed_aggregator_req_sizes.json (sampled sizes) and rpc_dist.json (the
 * mix) through fl_data_path when the config needs them. corpus must outlive g. Returns 0,
 * or -1 with err filled (bad config value, missing or invalid table). */
int fl_reqgen_init(struct fl_reqgen *g, const struct fl_reqgen_config *c,
	const struct fl_corpus *corpus, char *err, size_t errlen);

/* Pack request request_index as a Frontload__LeafRequest into out_payload (its contents
 * replaced; out_payload->len is the packed size in bytes). Returns 0, or -1 when out of
 * memory. */
int fl_reqgen_build(const struct fl_reqgen *g, uint64_t request_index,
	struct fl_bytes *out_payload);

/* The same request packed into memory the caller provides: reserve(arg, len) returns
 * room for the len packed bytes (NULL: fail), and *len_out gets len. This lets a sender
 * pack straight into its output buffer instead of copying. Returns 0, or -1 when out of
 * memory or reserve fails. */
int fl_reqgen_build_to(const struct fl_reqgen *g, uint64_t request_index,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, size_t *len_out);

/* The same request for a sender that gathers its bytes (writev) instead of copying the
 * padding, most of a large request. reserve(arg, len) gives room for the head: the packed
 * fields before the padding's bytes, its tag and length included (out->head_len bytes
 * used). out->pad points at the padding in the corpus (which outlives g: never freed,
 * never written), out->tail holds the fields after it. head, pad and tail in that order
 * are exactly fl_reqgen_build's bytes. A request without padding, or whose padding wraps
 * around the corpus, is packed whole into the head (pad_len and tail_len 0). Returns 0,
 * or -1 when out of memory or reserve fails. */
#define FL_REQGEN_TAIL_MAX 16  /* want_zstd and reply_bytes: at most 2 + 6 bytes */
struct fl_reqgen_parts {
	size_t head_len;                 /* bytes packed into the reserved room */
	const uint8_t *pad;              /* padding bytes, in the corpus */
	size_t pad_len;
	uint8_t tail[FL_REQGEN_TAIL_MAX];
	size_t tail_len;
};
int fl_reqgen_build_parts(const struct fl_reqgen *g, uint64_t request_index,
	uint8_t *(*reserve)(void *arg, size_t len), void *arg, struct fl_reqgen_parts *out);

/* The method, session and target size request_index will have (same draws as build). */
void fl_reqgen_describe(const struct fl_reqgen *g, uint64_t request_index,
	struct fl_reqgen_info *info);

/* Parse a --method value: "mix" gives FL_REQGEN_MIX; a method is named as in rpc_dist.json
 * ("streamData") or as in frontload.proto ("STREAM_DATA", any case). Returns 0 or -1. */
int fl_reqgen_method_parse(const char *text, int *method);

/* "streamData" for an enum Frontload__InboundMethod value, "mix" for FL_REQGEN_MIX. */
const char *fl_reqgen_method_name(int method);

#endif
