/* ranker.c: RANKER threads: a request's stages around its fanout, jobs taken in the order of ranker_queue.h. */
#define _GNU_SOURCE
#include "ranker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fanout.h"
#include "frontload.pb-c.h"
#include "meter.h"
#include "overheads.h"
#include "ranker_queue.h"
#include "rng.h"
#include "wire.h"

#define RANKER_MAX_THREADS 1024
#define RANKER_MAX_FANOUT_TIDS 256  /* FANOUT threads whose CPU we can follow */

/* One RANKER thread: its worker and its totals (read by the stats writer). */
struct ranker_thread {
	struct fl_ranker *r;
	unsigned index;
	pthread_t tid;
	int started;                 /* pthread_create succeeded */
	struct fl_worker *wk;        /* this thread's pipeline scratch */
	struct fl_meter meter;       /* stage clock and PMU group, opened by the thread */
	pthread_mutex_t lock;        /* guards the totals below */
	struct fl_stage_ns t;        /* summed stage times of finished jobs */
	uint64_t jobs, extract_calls;
	uint64_t with_deadline;      /* jobs taken that carried a deadline */
	uint64_t expired[FL_DL_NSTAGES], would_miss[FL_DL_NSTAGES];
	uint64_t queue_wait_shed;
	uint64_t probes;             /* would-miss verdicts let through (fl_dl_probe) */
	struct fl_dl_est est;        /* written by this thread only (wall_ns under lock, so
	                                the stats writer may read it; miss_run unlocked) */
	uint64_t est_n;              /* OK jobs folded into est */
	int exited;                  /* atomic: thread returned, final_cpu_ns valid */
	uint64_t final_cpu_ns;       /* thread CPU at exit */
};

struct fl_ranker {
	struct fl_ranker_config cfg;
	pthread_mutex_t lock;        /* guards the queues and stopping */
	pthread_cond_t cond;         /* queue not empty, or stopping */
	struct fl_rqueue queue;      /* replies first, then new jobs (ranker_queue.h) */
	int stopping;
	uint64_t queue_full;         /* under lock */

	pthread_rwlock_t fan_lock;   /* readers start fanouts; the writer detaches */
	struct fl_fanout *fanout;    /* NULL once detached (or never set) */

	pthread_mutex_t tid_lock;    /* guards appends to fan_tids */
	pthread_t fan_tids[RANKER_MAX_FANOUT_TIDS];
	unsigned nfan_tids;          /* atomic: entries published in fan_tids */
	int fan_frozen;              /* threads may be gone: use fan_cpu_final (tid_lock) */
	uint64_t fan_cpu_final;
	unsigned fan_unread_final;   /* threads unread in that last reading */

	unsigned nthreads;
	struct ranker_thread *th;
};

void fl_job_free(struct fl_job *job)
{
	if (!job)
		return;
	fl_work_clear(&job->w);
	fl_bytes_free(&job->err);
	free(job->payload);
	free(job);
}

int fl_error_reply_encode(struct fl_bytes *out, const char *msg)
{
	Frontload__ErrorReply er = FRONTLOAD__ERROR_REPLY__INIT;
	er.message = (char *)msg;
	size_t n = frontload__error_reply__get_packed_size(&er);
	out->len = 0;
	if (fl_bytes_reserve(out, n) != 0)
		return -1;
	out->len = frontload__error_reply__pack(&er, out->data);
	return 0;
}

/* End a job early with a non-OK status and an ErrorReply saying why. */
static void job_fail(struct fl_job *job, uint32_t status, const char *msg)
{
	job->status = status;
	/* Out of memory here leaves an empty payload: the status alone still tells. */
	fl_error_reply_encode(&job->err, msg);
}

/* Sum the job into the thread's totals and hand it back to its submitter. */
static void ranker_finish(struct ranker_thread *rt, struct fl_job *job)
{
	pthread_mutex_lock(&rt->lock);
	for (int s = 0; s < FL_STAGE_COUNT; s++) {
		rt->t.cpu_ns[s] += job->w.t.cpu_ns[s];
		rt->t.wall_ns[s] += job->w.t.wall_ns[s];
	}
	rt->jobs++;
	rt->extract_calls += job->w.extract_calls;
	/* Only whole OK requests say how long the stages take. */
	if (job->status == FL_STATUS_OK) {
		fl_dl_est_add(&rt->est, job->w.t.wall_ns);
		rt->est_n++;
	}
	pthread_mutex_unlock(&rt->lock);
	job->done(job);
	fl_worker_trim(rt->wk);
}

/* Remember the FANOUT thread running this callback, so its CPU can be read. The scan is
 * lock-free; only a thread not yet seen takes the lock. */
static void ranker_note_fanout_thread(struct fl_ranker *r)
{
	pthread_t self = pthread_self();
	unsigned n = __atomic_load_n(&r->nfan_tids, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (pthread_equal(r->fan_tids[i], self))
			return;
	pthread_mutex_lock(&r->tid_lock);
	n = r->nfan_tids;
	int seen = 0;
	for (unsigned i = 0; i < n && !seen; i++)
		seen = pthread_equal(r->fan_tids[i], self);
	if (!seen && !r->fan_frozen && n < RANKER_MAX_FANOUT_TIDS) {
		r->fan_tids[n] = self;
		__atomic_store_n(&r->nfan_tids, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->tid_lock);
}

/* fl_fanout_done_fn, on a FANOUT thread: record the outcome and queue the reply phase. */
static void ranker_fanout_done(void *arg, const struct fl_fanout_result *res)
{
	struct fl_job *job = arg;
	struct fl_ranker *r = job->ranker;

	/* calls = 0 may complete on the caller's own thread: only real calls identify a
	 * FANOUT thread. */
	if (res->calls)
		ranker_note_fanout_thread(r);
	job->w.fanout_calls = res->calls;
	job->w.fanout_errors = res->calls > res->ok ? res->calls - res->ok : 0;
	job->w.t.wall_ns[FL_STAGE_FANOUT] += res->wall_ns;

	pthread_mutex_lock(&r->lock);
	fl_rqueue_push_reply(&r->queue, job);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Stage 6: start the job's fanout. 0: the job now belongs to the fanout and comes back
 * through ranker_fanout_done; -1: no fanout (off, detached or shutting down). */
static int ranker_fanout(struct ranker_thread *rt, struct fl_job *job)
{
	struct fl_ranker *r = rt->r;
	pthread_rwlock_rdlock(&r->fan_lock);
	if (!r->fanout) {
		pthread_rwlock_unlock(&r->fan_lock);
		return -1;
	}
	uint64_t seed = fl_rng_derive(r->cfg.seed, job->request_id);
	job->phase = FL_JOB_REPLY;  /* before the start: the job may be back at once */
	uint64_t c0 = fl_meter_cpu_ns(&rt->meter);
	int rc = fl_fanout_start(r->fanout, seed, ranker_fanout_done, job);
	uint64_t dc = fl_meter_cpu_ns(&rt->meter) - c0;
	pthread_rwlock_unlock(&r->fan_lock);

	/* The job may already be gone: charge the start to the thread, not to the job. */
	pthread_mutex_lock(&rt->lock);
	rt->t.cpu_ns[FL_STAGE_FANOUT] += dc;
	pthread_mutex_unlock(&rt->lock);
	if (rc != 0) {
		job->phase = FL_JOB_RANK;
		return -1;
	}
	return 0;
}

/* Stage 7, then hand back. */
static void ranker_reply(struct ranker_thread *rt, struct fl_job *job)
{
	if (job->status == FL_STATUS_OK && fl_pipeline_reply(rt->wk, &job->w) != 0)
		job_fail(job, FL_STATUS_INTERNAL, "reply: out of memory or zstd error");
	ranker_finish(rt, job);
}

/* Count a skip at where and fail the job with the status it gets: OVERLOADED for a
 * queue wait over its bound, DEADLINE_EXCEEDED otherwise. */
static void ranker_skip(struct ranker_thread *rt, struct fl_job *job, enum fl_dl_stage where,
	enum fl_dl_verdict v, uint64_t rest_ns)
{
	char msg[160];

	pthread_mutex_lock(&rt->lock);
	if (v == FL_DL_QUEUE_WAIT)
		rt->queue_wait_shed++;
	else if (v == FL_DL_EXPIRED)
		rt->expired[where]++;
	else
		rt->would_miss[where]++;
	pthread_mutex_unlock(&rt->lock);
	if (v == FL_DL_QUEUE_WAIT) {
		snprintf(msg, sizeof(msg), "shed: waited over %.1f ms in the RANKER queue",
			(double)rt->r->cfg.max_queue_ns / 1e6);
		job_fail(job, FL_STATUS_OVERLOADED, msg);
		return;
	}
	snprintf(msg, sizeof(msg), "deadline: skipped before %s (%s; rest expected %.1f ms)",
		fl_dl_stage_name(where), v == FL_DL_EXPIRED ? "passed" : "would be missed",
		(double)rest_ns / 1e6);
	job_fail(job, FL_STATUS_DEADLINE_EXCEEDED, msg);
}

/* fl_dl_probe on the thread's estimate, counting the would-miss verdicts let through. A
 * probe runs to its end (a later would-miss does not stop it), or it would refresh
 * nothing. */
static enum fl_dl_verdict ranker_probe(struct ranker_thread *rt, struct fl_job *job,
	enum fl_dl_verdict v)
{
	if (v == FL_DL_WOULD_MISS && job->probe)
		return FL_DL_GO;
	enum fl_dl_verdict out = fl_dl_probe(&rt->est, v);

	if (v == FL_DL_WOULD_MISS && out == FL_DL_GO) {
		job->probe = 1;
		pthread_mutex_lock(&rt->lock);
		rt->probes++;
		pthread_mutex_unlock(&rt->lock);
	}
	return out;
}

/* Before a stage: 1 (job failed, skip counted) when the stages from `from` on cannot end
 * before the job's deadline, else 0. */
static int ranker_check(struct ranker_thread *rt, struct fl_job *job, enum fl_dl_stage where,
	enum fl_stage from)
{
	if (job->deadline_ns == 0)
		return 0;
	uint64_t rest = fl_dl_est_rest(&rt->est, from, job->w.t.wall_ns);
	enum fl_dl_verdict v = ranker_probe(rt, job, fl_dl_decide(fl_mono_ns(),
		job->deadline_ns, rest));
	if (v == FL_DL_GO)
		return 0;
	ranker_skip(rt, job, where, v, rest);
	return 1;
}

/* What the pipeline's gate needs to check a job. */
struct ranker_gate {
	struct ranker_thread *rt;
	struct fl_job *job;
};

/* fl_work_gate_fn: the deadline checks before extraction and ranking. */
static int ranker_gate(void *arg, enum fl_stage next)
{
	struct ranker_gate *g = arg;

	return ranker_check(g->rt, g->job, next == FL_STAGE_EXTRACT ? FL_DL_EXTRACT : FL_DL_RANK,
		next);
}

/* At the queue pop: 1 (job failed) when it waited too long or cannot make its deadline. */
static int ranker_check_queue(struct ranker_thread *rt, struct fl_job *job)
{
	uint64_t rest = fl_dl_est_rest(&rt->est, FL_STAGE_DECODE, NULL);
	enum fl_dl_verdict v = ranker_probe(rt, job, fl_dl_decide_queue(fl_mono_ns(),
		job->queued_ns, rt->r->cfg.max_queue_ns, job->deadline_ns, rest));

	if (job->deadline_ns != 0) {
		pthread_mutex_lock(&rt->lock);
		rt->with_deadline++;
		pthread_mutex_unlock(&rt->lock);
	}
	if (v == FL_DL_GO)
		return 0;
	ranker_skip(rt, job, FL_DL_QUEUE, v, rest);
	return 1;
}

/* Stages 1-5 and the fanout start. */
static void ranker_rank(struct ranker_thread *rt, struct fl_job *job)
{
	struct fl_ranker *r = rt->r;
	struct fl_work *w = &job->w;
	struct ranker_gate gate = { rt, job };
	char msg[256];

	if (ranker_check_queue(rt, job)) {
		ranker_finish(rt, job);
		return;
	}
	w->request_id = job->request_id;
	w->frame_flags = job->frame_flags;
	w->payload = job->payload;
	w->payload_len = job->payload_len;
	if (fl_pipeline_decode(rt->wk, w, msg, sizeof(msg)) != 0) {
		job_fail(job, FL_STATUS_BAD_REQUEST, msg);
		ranker_finish(rt, job);
		return;
	}
	if ((uint32_t)w->req->method > FRONTLOAD__INBOUND_METHOD__GET_ALL_STORIES) {
		snprintf(msg, sizeof(msg), "unknown method %d", (int)w->req->method);
		job_fail(job, FL_STATUS_BAD_REQUEST, msg);
		ranker_finish(rt, job);
		return;
	}

	/* Stage 2 on this thread; its admission half already ran on the IO thread. */
	enum fl_ovh_verdict v = fl_pipeline_overheads(rt->wk, r->cfg.ovh, w, job->client_ts_ns);
	if (v == FL_OVH_DENIED || v == FL_OVH_STALE) {
		job_fail(job, v == FL_OVH_DENIED ? FL_STATUS_DENIED : FL_STATUS_STALE,
			v == FL_OVH_DENIED ? "request key denied by the ACL"
			                   : "client timestamp older than the staleness bound");
		ranker_finish(rt, job);
		return;
	}
	w->gate = ranker_gate;
	w->gate_arg = &gate;
	int crc = fl_pipeline_compute(rt->wk, w);
	w->gate = NULL;  /* gate lives on this stack frame */
	if (crc != 0) {
		if (crc < 0)
			job_fail(job, FL_STATUS_INTERNAL, "compute: out of memory");
		ranker_finish(rt, job);
		return;
	}
	if (ranker_check(rt, job, FL_DL_FANOUT, FL_STAGE_FANOUT)) {
		ranker_finish(rt, job);
		return;
	}
	if (ranker_fanout(rt, job) == 0)
		return;
	ranker_reply(rt, job);
}

static void *ranker_main(void *arg)
{
	struct ranker_thread *rt = arg;
	struct fl_ranker *r = rt->r;
	char name[16];

	snprintf(name, sizeof(name), "leaf-rank-%u", rt->index);
	pthread_setname_np(pthread_self(), name);
	/* The clock must be this thread's (perf task-clock of the caller): open it here. */
	if (fl_meter_start(&rt->meter) != 0) {
		fl_meter_exit(&rt->meter);
		rt->final_cpu_ns = fl_thread_cpu_ns();
		__atomic_store_n(&rt->exited, 1, __ATOMIC_RELEASE);
		return NULL;  /* fl_ranker_new reports it and stops the pool */
	}
	fl_worker_set_cpu_clock(rt->wk, fl_meter_cpu_ns, &rt->meter);
	for (;;) {
		pthread_mutex_lock(&r->lock);
		while (fl_rqueue_empty(&r->queue) && !r->stopping)
			pthread_cond_wait(&r->cond, &r->lock);
		struct fl_job *job = fl_rqueue_pop(&r->queue);
		pthread_mutex_unlock(&r->lock);
		if (!job)
			break;  /* stopping and nothing left */
		if (job->phase == FL_JOB_RANK)
			ranker_rank(rt, job);
		else
			ranker_reply(rt, job);
	}
	fl_meter_exit(&rt->meter);
	rt->final_cpu_ns = fl_thread_cpu_ns();
	__atomic_store_n(&rt->exited, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct fl_ranker *fl_ranker_new(const struct fl_ranker_config *cfg, char *err, size_t errlen)
{
	if (!cfg->pipeline || !cfg->ovh || cfg->threads < 1 ||
	    cfg->threads > RANKER_MAX_THREADS || cfg->queue_cap < 1) {
		snprintf(err, errlen, "ranker: bad config (threads 1..%d, queue >= 1)",
			RANKER_MAX_THREADS);
		return NULL;
	}
	struct fl_ranker *r = calloc(1, sizeof(*r));
	if (!r || !(r->th = calloc(cfg->threads, sizeof(*r->th)))) {
		free(r);
		snprintf(err, errlen, "ranker: out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	r->fanout = cfg->fanout;
	r->nthreads = cfg->threads;
	fl_rqueue_init(&r->queue, cfg->queue_cap);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	pthread_rwlock_init(&r->fan_lock, NULL);
	pthread_mutex_init(&r->tid_lock, NULL);
	for (unsigned i = 0; i < r->nthreads; i++)
		fl_meter_init(&r->th[i].meter, cfg->meter, 1);
	for (unsigned i = 0; i < r->nthreads; i++) {
		struct ranker_thread *rt = &r->th[i];
		rt->r = r;
		rt->index = i;
		pthread_mutex_init(&rt->lock, NULL);
		char why[256];
		rt->wk = fl_worker_new(cfg->pipeline, i, why, sizeof(why));
		if (!rt->wk) {
			snprintf(err, errlen, "ranker: worker %u: %s", i, why);
			fl_ranker_free(r);
			return NULL;
		}
	}
	for (unsigned i = 0; i < r->nthreads; i++) {
		if (pthread_create(&r->th[i].tid, NULL, ranker_main, &r->th[i]) != 0) {
			snprintf(err, errlen, "ranker: cannot start thread %u", i);
			fl_ranker_free(r);
			return NULL;
		}
		r->th[i].started = 1;
	}
	/* Every thread has its clock before the pool is handed out: a --cpu-clock that
	 * cannot be had is a startup error here, not a silent fallback. */
	int bad = 0;
	for (unsigned i = 0; i < r->nthreads; i++) {
		char why[256];
		if (fl_meter_wait(&r->th[i].meter, why, sizeof(why)) != 0 && !bad) {
			snprintf(err, errlen, "ranker: thread %u: %s", i, why);
			bad = 1;
		}
	}
	if (bad) {
		fl_ranker_free(r);
		return NULL;
	}
	return r;
}

int fl_ranker_submit(struct fl_ranker *r, struct fl_job *job)
{
	job->ranker = r;
	job->phase = FL_JOB_RANK;
	job->status = FL_STATUS_OK;
	job->queued_ns = fl_mono_ns();
	pthread_mutex_lock(&r->lock);
	if (r->stopping || fl_rqueue_push_fresh(&r->queue, job) != 0) {
		if (!r->stopping)
			r->queue_full++;
		pthread_mutex_unlock(&r->lock);
		return -1;
	}
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* CPU of the FANOUT threads seen so far (or their last reading once frozen), with the
 * count of threads that could not be read in *unread. Call with tid_lock held. */
static uint64_t ranker_fanout_cpu_locked(struct fl_ranker *r, unsigned *unread)
{
	if (r->fan_frozen) {
		*unread = r->fan_unread_final;
		return r->fan_cpu_final;
	}
	uint64_t sum = 0, ns;
	*unread = 0;
	for (unsigned i = 0; i < r->nfan_tids; i++) {
		if (fl_thread_cpu_ns_of(r->fan_tids[i], &ns) == 0)
			sum += ns;
		else
			(*unread)++;
	}
	return sum;
}

void fl_ranker_detach_fanout(struct fl_ranker *r)
{
	pthread_rwlock_wrlock(&r->fan_lock);
	r->fanout = NULL;
	pthread_rwlock_unlock(&r->fan_lock);

	pthread_mutex_lock(&r->tid_lock);
	r->fan_cpu_final = ranker_fanout_cpu_locked(r, &r->fan_unread_final);
	r->fan_frozen = 1;  /* the threads may exit from now on: never read their clocks */
	pthread_mutex_unlock(&r->tid_lock);
}

void fl_ranker_stop(struct fl_ranker *r)
{
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	for (unsigned i = 0; i < r->nthreads; i++) {
		if (r->th[i].started) {
			pthread_join(r->th[i].tid, NULL);
			r->th[i].started = 0;
		}
	}
}

void fl_ranker_free(struct fl_ranker *r)
{
	if (!r)
		return;
	fl_ranker_stop(r);
	/* Nothing should be left; a job still queued here lost its submitter's loop, so it
	 * is freed without a reply. */
	struct fl_job *j;
	while ((j = fl_rqueue_pop(&r->queue)) != NULL)
		fl_job_free(j);
	for (unsigned i = 0; i < r->nthreads; i++) {
		fl_worker_free(r->th[i].wk);
		fl_meter_close(&r->th[i].meter);
		pthread_mutex_destroy(&r->th[i].lock);
	}
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	pthread_rwlock_destroy(&r->fan_lock);
	pthread_mutex_destroy(&r->tid_lock);
	free(r->th);
	free(r);
}

void fl_ranker_stats(struct fl_ranker *r, struct fl_ranker_stats *s)
{
	uint64_t est_sum[FL_STAGE_COUNT] = { 0 };
	unsigned nest = 0;

	memset(s, 0, sizeof(*s));
	s->threads = r->nthreads;
	for (unsigned i = 0; i < r->nthreads; i++) {
		struct ranker_thread *rt = &r->th[i];
		pthread_mutex_lock(&rt->lock);
		for (int k = 0; k < FL_STAGE_COUNT; k++) {
			s->t.cpu_ns[k] += rt->t.cpu_ns[k];
			s->t.wall_ns[k] += rt->t.wall_ns[k];
		}
		s->jobs += rt->jobs;
		s->extract_calls += rt->extract_calls;
		s->with_deadline += rt->with_deadline;
		for (int k = 0; k < FL_DL_NSTAGES; k++) {
			s->expired[k] += rt->expired[k];
			s->would_miss[k] += rt->would_miss[k];
		}
		s->queue_wait_shed += rt->queue_wait_shed;
		s->probes += rt->probes;
		if (rt->est_n > 0) {
			for (int k = 0; k < FL_STAGE_COUNT; k++)
				est_sum[k] += rt->est.wall_ns[k];
			nest++;
		}
		pthread_mutex_unlock(&rt->lock);
		/* A thread that returned has its final reading; a live one is asked. */
		uint64_t ns = 0;
		if (__atomic_load_n(&rt->exited, __ATOMIC_ACQUIRE) || !rt->started)
			s->cpu_ns += rt->final_cpu_ns;
		else if (fl_thread_cpu_ns_of(rt->tid, &ns) == 0)
			s->cpu_ns += ns;
		else
			s->cpu_unread++;
	}
	/* The estimate reported is the mean of the threads' that have one. */
	s->est_valid = nest > 0;
	for (int k = 0; nest > 0 && k < FL_STAGE_COUNT; k++)
		s->est.wall_ns[k] = est_sum[k] / nest;
	pthread_mutex_lock(&r->lock);
	s->queue_full = r->queue_full;
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_lock(&r->tid_lock);
	s->fanout_threads_seen = r->nfan_tids;
	s->fanout_cpu_ns = ranker_fanout_cpu_locked(r, &s->fanout_cpu_unread);
	pthread_mutex_unlock(&r->tid_lock);
}

size_t fl_ranker_scratch_bytes(struct fl_ranker *r)
{
	size_t n = 0;

	for (unsigned i = 0; i < r->nthreads; i++)
		if (r->th[i].wk != NULL)
			n += fl_worker_scratch_bytes(r->th[i].wk);
	return n;
}

void fl_ranker_meters(struct fl_ranker *r, struct fl_meter_sum *s)
{
	for (unsigned i = 0; i < r->nthreads; i++)
		fl_meter_sum_add(s, &r->th[i].meter);
}
