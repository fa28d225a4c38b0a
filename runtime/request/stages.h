/* stages.h: the leaf's per-request stages, for CPU and wall time attribution. */
#ifndef FL_STAGES_H
#define FL_STAGES_H

#include <stdint.h>

enum fl_stage {
	FL_STAGE_DECODE,     /* 1: frame payload -> LeafRequest (zstd + protobuf-c) */
	FL_STAGE_OVERHEADS,  /* 2: key, MurmurHash2, ACL, inflight, counters, staleness */
	FL_STAGE_EXTRACT,    /* 3: generated extractors through the dispatch API */
	FL_STAGE_STORIES,    /* 4: story processors: score, filter, top-K, blend, serialize */
	FL_STAGE_RANK,       /* 5: DLRM-style model (OpenBLAS) and its input features, which
	                      * stage 3 derives story by story (charged here, as the CPU
	                      * profile's categories count them: ranking, not extraction) */
	FL_STAGE_FANOUT,     /* 6: outbound RPCs to the mock (wall: request's fanout time) */
	FL_STAGE_COMPRESS,   /* 7a: reply bytes from the corpus, zstd when asked */
	FL_STAGE_REPLY,      /* 7b: LeafReply encode and frame */
	FL_STAGE_COUNT
};

/* Stage names as they appear in stats JSON ("decode", "overheads", ...). */
const char *fl_stage_name(enum fl_stage s);

/* CPU (thread clock) and wall ns spent in each stage, for one request or summed. */
struct fl_stage_ns {
	uint64_t cpu_ns[FL_STAGE_COUNT];
	uint64_t wall_ns[FL_STAGE_COUNT];
};

#endif
