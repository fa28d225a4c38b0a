/* overheads.h: stage 2, the production-like per-request overheads around the real work.
 *
 * What a production ranking leaf does before it ranks: build a compound request key
 * (method, user, session, a per-request nonce), hash it with MurmurHash2, check the key's
 * prefix against an ACL hash map, count the request in inflight and per-method counters
 * (overload protection sheds above a limit), check staleness of the client timestamp and
 * stamp response times. Shared by all threads: counters are atomics, the ACL map is
 * read-only after fl_overheads_new.
 */
#ifndef FL_OVERHEADS_H
#define FL_OVERHEADS_H

#include <stddef.h>
#include <stdint.h>

struct fl_overheads;

struct fl_overheads_config {
	uint32_t inflight_limit;  /* requests admitted at once; above it: overloaded. >= 1 */
	uint64_t stale_ns;        /* client timestamps older than this are stale; 0 = no check */
	uint32_t acl_entries;     /* entries in the ACL map (>= 16; the allowed prefixes plus
	                             decoys, so lookups probe a realistic table) */
	uint64_t seed;
};

enum fl_ovh_verdict {
	FL_OVH_ADMIT = 0,
	FL_OVH_OVERLOADED,
	FL_OVH_DENIED,
	FL_OVH_STALE
};

/* Inputs of one request's overheads. */
struct fl_ovh_req {
	uint32_t method;        /* InboundMethod, 0..4 */
	uint64_t user_id;
	uint64_t session_id;
	uint64_t request_id;
	uint64_t client_ts_ns;  /* client's realtime send stamp (ns) */
	uint64_t now_ns;        /* this host's realtime now (ns) */
};

/* Outputs: the key hash and response timestamps the reply carries. */
struct fl_ovh_out {
	uint32_t key_hash;         /* MurmurHash2 of the compound key */
	uint64_t admit_ns;         /* realtime stamp at admission */
	uint64_t deadline_ns;      /* admit_ns + stale_ns (0 without a staleness bound) */
};

/* New overheads state; NULL (err filled) on a bad config or out of memory. */
struct fl_overheads *fl_overheads_new(const struct fl_overheads_config *cfg, char *err,
	size_t errlen);
void fl_overheads_free(struct fl_overheads *o);

/* Cheap admission on the IO thread: FL_OVH_ADMIT and inflight + 1, or FL_OVH_OVERLOADED
 * (counted, inflight unchanged) when inflight is at the limit. Thread-safe. */
enum fl_ovh_verdict fl_overheads_enter(struct fl_overheads *o);

/* The same verdict without admitting: FL_OVH_OVERLOADED (counted as fl_overheads_enter
 * counts it) when inflight is at the limit now, else FL_OVH_ADMIT with nothing changed.
 * For judging a request on its header: one that would be shed is answered before its
 * payload is read, and one that passes is admitted by fl_overheads_enter once whole. */
enum fl_ovh_verdict fl_overheads_peek(struct fl_overheads *o);

/* The rest of stage 2 for an admitted request: key, hash, ACL, counters, staleness,
 * stamps. Returns FL_OVH_ADMIT, FL_OVH_DENIED or FL_OVH_STALE (counted). Thread-safe. */
enum fl_ovh_verdict fl_overheads_run(struct fl_overheads *o, const struct fl_ovh_req *r,
	struct fl_ovh_out *out);

/* An admitted request is done (replied or dropped): inflight - 1. */
void fl_overheads_leave(struct fl_overheads *o);

struct fl_overheads_stats {
	uint64_t admitted, overloaded, denied, stale;
	uint64_t per_method[5];
	uint32_t inflight, inflight_peak;
};
void fl_overheads_stats(const struct fl_overheads *o, struct fl_overheads_stats *s);

#endif
