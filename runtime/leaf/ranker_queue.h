/* ranker_queue.h: the order in which RANKER threads take jobs.
 *
 * Two FIFO queues: jobs back from their fanout (phase REPLY) and new jobs (phase RANK).
 * Replies go first: they finish requests already paid for, and a pool that preferred new
 * work would let every admitted request's latency grow under load. New jobs are bounded by
 * a capacity (each was admitted, so the leaf's inflight limit bounds them too); replies are
 * not (each is a request already counted in flight). Not locked: the pool holds its lock
 * around every call.
 */
#ifndef FL_RANKER_QUEUE_H
#define FL_RANKER_QUEUE_H

struct fl_job;

struct fl_rqueue {
	struct fl_job *fresh_head, *fresh_tail;  /* new jobs, oldest first */
	struct fl_job *reply_head, *reply_tail;  /* jobs back from fanout, oldest first */
	unsigned nfresh;                         /* entries of the new-job queue */
	unsigned cap;                            /* new jobs at most, >= 1 */
};

/* An empty queue pair holding at most cap (>= 1) new jobs. */
void fl_rqueue_init(struct fl_rqueue *q, unsigned cap);

/* Queue a new job: 0, or -1 (j not queued) when cap new jobs wait already. */
int fl_rqueue_push_fresh(struct fl_rqueue *q, struct fl_job *j);

/* Queue a job back from its fanout (never refused). */
void fl_rqueue_push_reply(struct fl_rqueue *q, struct fl_job *j);

/* The next job: the oldest reply, else the oldest new job; NULL when both are empty. */
struct fl_job *fl_rqueue_pop(struct fl_rqueue *q);

/* Nonzero when no job waits. */
int fl_rqueue_empty(const struct fl_rqueue *q);

#endif
