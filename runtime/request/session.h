/* session.h: bounded per-session state for the five inbound session methods.
 *
 * createAndPrimeSession makes a session; getStoriesUncompressed, streamData,
 * streamIfrPriorityRanking and getAllStories find it (or make it when it was evicted or
 * never created, counted as a miss). The store holds at most `capacity` sessions (LRU
 * eviction) and drops sessions idle longer than ttl_ms, so memory is bounded whatever the
 * client sends. Thread-safe (lock striping by session id).
 */
#ifndef FL_SESSION_H
#define FL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define FL_SESSION_STORIES 64  /* story ids a session remembers (ring) */

/* A session's state, copied in and out under the store's lock. */
struct fl_session {
	uint64_t id;
	uint64_t created_ns, touched_ns;       /* monotonic stamps */
	uint32_t requests;                     /* requests seen in this session */
	uint32_t nstories;                     /* valid entries in story_ids (<= FL_SESSION_STORIES) */
	uint32_t story_head;                   /* ring position of the next write */
	uint64_t story_ids[FL_SESSION_STORIES]; /* recently ranked story ids */
	float story_scores[FL_SESSION_STORIES];
};

struct fl_session_store;

/* capacity >= 1 sessions; ttl_ms 0 = no idle expiry. NULL on bad input or no memory. */
struct fl_session_store *fl_session_store_new(size_t capacity, uint64_t ttl_ms);
void fl_session_store_free(struct fl_session_store *s);

/* Bytes one stored session takes (its node: state, hash chain and LRU links). */
size_t fl_session_node_bytes(void);

/* Copy session id's state into *out and mark it used at now_ns; when absent (or expired)
 * start a fresh one (out zeroed but for id and stamps) and return 0, else return 1.
 * create = 1 always starts fresh (createAndPrimeSession). */
int fl_session_get(struct fl_session_store *s, uint64_t id, uint64_t now_ns, int create,
	struct fl_session *out);

/* Store *in back as session in->id (insert or replace), evicting the least recently used
 * session when full. */
void fl_session_put(struct fl_session_store *s, const struct fl_session *in, uint64_t now_ns);

struct fl_session_stats {
	uint64_t hits, misses, created, evicted_lru, expired_ttl;
	size_t live, capacity;
	size_t bytes;           /* stored sessions (node size each) + bucket arrays */
	size_t bytes_per_session, max_bytes; /* node size; bytes when full */
};
void fl_session_stats(struct fl_session_store *s, struct fl_session_stats *st);

#endif
