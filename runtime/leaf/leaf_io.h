/* leaf_io.h: the leaf's IO threads: listeners, connections, frames in and replies out.
 *
 * Each IO thread ("leaf-io-N") owns an event_base and its own listener on the shared port
 * (SO_REUSEPORT: the kernel spreads connections), plain or TLS. Per connection it pulls
 * frames (wire.h): PING gets a PONG, REQUEST whose deadline has already passed is
 * answered FL_STATUS_DEADLINE_EXCEEDED, any other is admitted (fl_overheads_enter; shed
 * with FL_STATUS_OVERLOADED) and queued to the RANKER pool as a struct fl_job. A request
 * is judged on its header first: one that would be shed is answered at once and its
 * payload dropped as it arrives, not copied (on plain TCP the kernel drops it: recv with
 * MSG_TRUNC), so shedding costs the leaf little however large the request; any bad header
 * gets a BAD_REQUEST reply with an ErrorReply and the connection is closed after the flush.
 * Finished jobs come back through the thread's mutex inbox (event_active wakes the loop).
 * A connection is reference counted by its jobs: a client that leaves while jobs are in
 * flight has their replies dropped and counted. A connection holding max_output_bytes of
 * unsent replies when another is due (a client that does not read) is dropped and
 * counted; a single reply larger than the bound still goes out to a reading client.
 * A STATS frame (wire.h) waits on its thread until the main thread has taken a snapshot
 * (cfg.stats_wanted wakes it; fl_io_stats_claim, then fl_io_stats_answer): the reply is
 * the very snapshot the stats file gets, taken after the request arrived. A STATS frame
 * with a payload gets BAD_REQUEST and the connection stays open (the stream is intact).
 */
#ifndef FL_LEAF_IO_H
#define FL_LEAF_IO_H

#include <stddef.h>
#include <stdint.h>

struct fl_overheads;
struct fl_ranker;
struct fl_meter_config;
struct fl_meter_sum;
struct fl_io;
struct ssl_ctx_st;

struct fl_io_config {
	const char *host;              /* address to listen on (numeric or a name) */
	uint16_t port;                 /* 0 = an ephemeral port, see fl_io_port */
	unsigned threads;              /* IO threads, 1..256 */
	struct ssl_ctx_st *tls;        /* server context (tls.h), NULL = plain TCP */
	uint32_t max_frame_bytes;      /* largest request payload accepted (bytes) */
	size_t max_output_bytes;       /* unsent reply bytes per connection before a drop */
	struct fl_overheads *ovh;      /* admission (enter/leave) */
	struct fl_ranker *ranker;      /* where requests go */
	const struct fl_meter_config *meter; /* PMU group per thread (IO threads time no
	                                  stage, so they open no clock); NULL: none */
	void (*stats_wanted)(void *arg); /* a STATS frame waits: take a snapshot soon. Called
	                                  on an IO thread; NULL: STATS refused (INTERNAL) */
	void *stats_arg;
};

/* The counters, once: group in the stats JSON, then field name. */
#define FL_IO_STATS(X) \
	X(requests, received)             /* REQUEST frames taken */ \
	X(requests, replied)              /* reply frames queued (bad frames too) */ \
	X(requests, ok) \
	X(requests, overloaded) \
	X(requests, bad_request)          /* payload decode failures and bad frames */ \
	X(requests, denied) \
	X(requests, stale) \
	X(requests, internal) \
	X(requests, deadline_exceeded)    /* replies DEADLINE_EXCEEDED (any stage) */ \
	X(requests, expired_at_admit)     /* of which: deadline passed on arrival */ \
	X(requests, shed_unread)          /* expired or OVERLOADED on the header alone: the \
	                                     payload was dropped, never copied out */ \
	X(requests, dropped_disconnected) /* done, but the connection was gone */ \
	X(frames, bad_magic) \
	X(frames, bad_version) \
	X(frames, bad_type)               /* includes REPLY/PONG sent to the leaf */ \
	X(frames, bad_flags) \
	X(frames, too_long) \
	X(frames, stats_requests)         /* STATS frames taken (answered or not) */ \
	X(connections, accepted) \
	X(connections, closed) \
	X(connections, dropped_slow)      /* unsent output reached max_output_bytes */ \
	X(connections, accept_errors)     /* accept() failed (EMFILE...): accepting paused */ \
	X(connections, tls_handshakes) \
	X(top, bytes_in)                  /* frame bytes received (header + payload) */ \
	X(top, bytes_out)                 /* frame bytes queued (header + payload) */ \
	X(top, bytes_skipped)             /* payload bytes of shed_unread requests */ \
	X(top, bytes_skipped_kernel)      /* of which dropped by the kernel (recv MSG_TRUNC, \
	                                     plain TCP): never copied into the leaf */

struct fl_io_stats {
#define FL_IO_FIELD(group, name) uint64_t name;
	FL_IO_STATS(FL_IO_FIELD)
#undef FL_IO_FIELD
	char listener_cipher[96];      /* last TLS handshake's protocol and cipher, "" */
	unsigned threads;              /* IO threads */
	uint64_t cpu_ns;               /* their thread CPU time (of those read) */
	unsigned cpu_unread;           /* threads whose CPU clock could not be read */
	uint64_t buffered_bytes;       /* connections' evbuffer bytes, as of their last event */
};

/* Make the event bases and bind every thread's listener (threads not started yet).
 * NULL (err filled: address, port in use, TLS) on failure. Main thread; needs
 * evthread_use_pthreads() first. */
struct fl_io *fl_io_new(const struct fl_io_config *cfg, char *err, size_t errlen);

/* The port listened on (the kernel's choice when cfg.port was 0). */
uint16_t fl_io_port(const struct fl_io *io);

/* Start the IO threads and wait until each has opened its meter. 0, or -1 (err filled).
 * Main thread. */
int fl_io_start(struct fl_io *io, char *err, size_t errlen);

/* Stop accepting connections; requests arriving from now on are answered OVERLOADED (so
 * the drain ends), those in flight still get their replies. Main thread. */
void fl_io_stop_accepting(struct fl_io *io);

/* Connections with reply bytes not yet written, over all threads (for the drain). */
unsigned fl_io_pending(struct fl_io *io);

/* Leave the event loops and join the threads, then drop the replies they did not get to
 * (counted as dropped_disconnected; fl_overheads_leave for each). Call after the RANKER
 * pool has stopped, so no job comes back any more. Main thread. */
void fl_io_stop(struct fl_io *io);

/* Stop (if running), close every connection and free everything. */
void fl_io_free(struct fl_io *io);

/* Claim the STATS frames waiting now: the next fl_io_stats_answer answers them. Call
 * before building the snapshot, so every request claimed is older than it. Returns how
 * many were claimed (0: no answer to make). Main thread. */
unsigned fl_io_stats_claim(struct fl_io *io);

/* Answer the claimed STATS frames with json (len bytes, copied), or with INTERNAL when
 * json is NULL. Main thread. */
void fl_io_stats_answer(struct fl_io *io, const char *json, size_t len);

/* Sum the threads' counters and CPU. Main thread (any thread but the IO threads). */
void fl_io_stats(struct fl_io *io, struct fl_io_stats *s);

/* Add every IO thread's meter (PMU counts) into s (fl_meter_sum_init'd). Main thread,
 * while io exists. */
void fl_io_meters(struct fl_io *io, struct fl_meter_sum *s);

#endif
