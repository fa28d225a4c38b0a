/* ranker.h: the leaf's RANKER pool: a bounded job queue and the threads that run a
 * request's stages around its fanout.
 *
 * A job enters from an IO thread (fl_ranker_submit) and goes through two phases on RANKER
 * threads: RANK (decode, overheads, extraction, story processors, ranking, then the fanout
 * is started) and, once the fanout's done callback has put it back on the queue, REPLY
 * (reply bytes, zstd, LeafReply encode). Then job->done hands it back to its submitter.
 * A failed stage ends the job early with a non-OK status and an ErrorReply payload.
 * Deadlines (deadline.h): at the queue pop and before extraction, ranking and the fanout
 * a job that cannot end before its deadline at the thread's recent stage times is
 * answered DEADLINE_EXCEEDED, and one that waited over max_queue_ns is shed OVERLOADED;
 * each skip is counted by where it happened.
 * Each thread owns one fl_worker and sums its jobs' struct fl_stage_ns, read on the
 * thread's own CPU clock (its struct fl_meter, common/meter.h, opened at thread start).
 */
#ifndef FL_RANKER_H
#define FL_RANKER_H

#include <stddef.h>
#include <stdint.h>

#include "deadline.h"
#include "pipeline.h"
#include "stages.h"

struct fl_overheads;
struct fl_fanout;
struct fl_meter_config;
struct fl_meter_sum;
struct fl_ranker;
struct fl_job;

/* Called once per job on a RANKER thread when the reply (or error) is ready; the callee
 * owns the job from then on and frees it with fl_job_free. */
typedef void (*fl_job_done_fn)(struct fl_job *job);

enum fl_job_phase {
	FL_JOB_RANK = 0,  /**< waiting for stages 1-5 and the fanout start */
	FL_JOB_REPLY      /**< fanout done (or skipped): waiting for stage 7 */
};

/* One request on its way through the leaf. The submitter allocates it zeroed (calloc)
 * and sets the first block; the ranker fills the rest. */
struct fl_job {
	struct fl_job *next;           /* link: RANKER queue, then the submitter's inbox */
	/* set by the submitter */
	uint64_t request_id;           /* from the request frame, echoed in the reply */
	uint64_t client_ts_ns;         /* from the request frame, echoed in the reply */
	uint16_t frame_flags;          /* request frame flags (FL_FRAME_ZSTD) */
	uint8_t *payload;              /* request payload (owned, malloc'd; NULL when empty) */
	size_t payload_len;
	uint64_t decoded_ns;           /* monotonic stamp: frame decoded (server_ns start) */
	uint64_t deadline_ns;          /* the client's deadline, monotonic (fl_dl_local); 0 =
	                                  none */
	void *owner;                   /* the submitter's connection */
	fl_job_done_fn done;           /* hand-back, see fl_job_done_fn */
	/* set by the ranker */
	struct fl_ranker *ranker;      /* pool the job was submitted to */
	enum fl_job_phase phase;
	uint64_t queued_ns;            /* monotonic stamp: entered the RANKER queue */
	int probe;                     /* let through as a probe (fl_dl_probe): later checks
	                                  skip it only once its deadline has passed */
	uint32_t status;               /* enum fl_status of the reply */
	struct fl_bytes err;           /* ErrorReply payload when status is not OK (or empty) */
	struct fl_work w;              /* pipeline work; w.out is the payload of an OK reply */
};

/* Free a job with its payload, error bytes and work. NULL is allowed. Any thread. */
void fl_job_free(struct fl_job *job);

/* Encode an ErrorReply carrying msg into out (replacing its contents). 0, or -1 when out
 * of memory (out left empty). */
int fl_error_reply_encode(struct fl_bytes *out, const char *msg);

struct fl_ranker_config {
	struct fl_pipeline *pipeline;  /* shared by all threads; must outlive the pool */
	struct fl_overheads *ovh;      /* stage 2 state */
	struct fl_fanout *fanout;      /* stage 6; NULL = no fanout (--mock none) */
	unsigned threads;              /* RANKER threads, 1..1024 */
	unsigned queue_cap;            /* new jobs waiting at most (>= 1); replies-to-be are
	                                  not bounded here: admission (inflight) bounds them */
	uint64_t max_queue_ns;         /* a new job that waited longer in the queue is shed
	                                  OVERLOADED (--max-queue-ms; 0 = no bound) */
	uint64_t seed;                 /* fanout seeds are fl_rng_derive(seed, request_id) */
	const struct fl_meter_config *meter; /* stage clock and PMU per thread; NULL: stage
	                                  CPU on clock_gettime, no counters */
};

/* Build one fl_worker per thread and start the threads ("leaf-rank-N"), each opening its
 * meter (stage clock, PMU group) before it takes a job. NULL (err filled) when a worker or
 * a thread cannot be made, or a thread cannot have the clock asked for. Main thread. */
struct fl_ranker *fl_ranker_new(const struct fl_ranker_config *cfg, char *err, size_t errlen);

/* Queue a new job (phase RANK). Returns 0, or -1 when the queue holds queue_cap new jobs
 * or the pool is stopping: the caller keeps the job. Any thread. */
int fl_ranker_submit(struct fl_ranker *r, struct fl_job *job);

/* Start no more fanouts (jobs then skip stage 6) and take a last reading of the FANOUT
 * threads' CPU. Returns once no RANKER thread is inside fl_fanout_start, so the caller may
 * then fl_fanout_free (whose failed calls still come back through the queue). Main thread. */
void fl_ranker_detach_fanout(struct fl_ranker *r);

/* Finish every queued job, then join the threads. Call after fl_ranker_detach_fanout and
 * fl_fanout_free, so no job is still out in a fanout. Main thread. */
void fl_ranker_stop(struct fl_ranker *r);

/* Stop (if still running) and free the workers and the pool. */
void fl_ranker_free(struct fl_ranker *r);

struct fl_ranker_stats {
	struct fl_stage_ns t;          /* summed over every finished job; FANOUT cpu is the
	                                  RANKER side only (starting fanouts) */
	uint64_t jobs;                 /* jobs finished (any status) */
	uint64_t extract_calls;        /* generated extractor calls made */
	uint64_t queue_full;           /* submits refused: queue at queue_cap */
	uint64_t with_deadline;        /* jobs taken that carried a deadline */
	uint64_t expired[FL_DL_NSTAGES];   /* skipped: deadline passed, by where (FL_DL_ADMIT
	                                      is the IO thread's, 0 here) */
	uint64_t would_miss[FL_DL_NSTAGES];/* skipped: the rest would end past the deadline */
	uint64_t queue_wait_shed;      /* shed OVERLOADED: queue wait above max_queue_ns */
	uint64_t probes;               /* would-miss verdicts let through to refresh the
	                                  estimate (deadline.h fl_dl_probe) */
	struct fl_dl_est est;          /* stage wall time estimate, ns: the mean of the
	                                  threads' that have one */
	int est_valid;                 /* some OK job has finished: est holds samples */
	unsigned threads;              /* RANKER threads */
	uint64_t cpu_ns;               /* their thread CPU time (of those read) */
	unsigned cpu_unread;           /* RANKER threads whose CPU clock could not be read */
	unsigned fanout_threads_seen;  /* FANOUT threads that ran a done callback */
	uint64_t fanout_cpu_ns;        /* their thread CPU time (of those read) */
	unsigned fanout_cpu_unread;    /* FANOUT threads that could not be read */
};

/* Snapshot the counters and thread CPU (pthread_getcpuclockid). Main thread. */
void fl_ranker_stats(struct fl_ranker *r, struct fl_ranker_stats *s);

/* Add every RANKER thread's meter (clock in use, PMU counts) into s (fl_meter_sum_init'd).
 * Main thread, while the pool exists. */
void fl_ranker_meters(struct fl_ranker *r, struct fl_meter_sum *s);

/* Bytes the RANKER threads' scratch buffers hold (fl_worker_scratch_bytes summed). */
size_t fl_ranker_scratch_bytes(struct fl_ranker *r);

#endif
