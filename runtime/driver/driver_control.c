/* driver_control.c: the main thread's side of driver_engine.h: starting the sender
 * threads and waiting for their connections, running a step on every thread and merging
 * their results (counts, histograms, the per-second trace), the adaptive depth, and
 * stopping the threads. What the threads run is driver_engine.c. */
#define _GNU_SOURCE
#include "driver_engine.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "driver_engine_int.h"
#include "driver_report.h"
#include "hist.h"
#include "net.h"
#include "tls.h"

#define DRV_START_DELAY_NS 20000000ull    /* step time 0 is this long after the call, so
                                             every thread is armed before it */
#define DRV_INIT_TIMEOUT_S 10             /* fl_driver_new waits this long for connections */
#define DRV_CPU_BUSY_PCT 90.0             /* host CPU at or above this: depth not raised */

/* Host CPU counters from /proc/stat's "cpu" line (jiffies): busy and total. */
static int drv_cpu_read(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		&v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return -1;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];  /* idle and iowait */
	return 0;
}

/* ---- public ---- */

static int drv_resolve(struct fl_driver *d, char *err, size_t errlen)
{
	char why[256];

	if (fl_net_resolve(d->cfg.host, d->cfg.port, 0, &d->addr, &d->addrlen, why,
	    sizeof why) != 0) {
		snprintf(err, errlen, "resolve %s: %s", d->cfg.host, why);
		return -1;
	}
	return 0;
}

struct fl_driver *fl_driver_new(const struct fl_driver_config *cfg, char *err, size_t errlen)
{
	struct fl_driver *d;
	pthread_condattr_t ca;
	sigset_t block, old;
	struct timespec deadline;
	int failed = 0, waiting = 1;

	if (cfg->threads < 1 || cfg->connections < 1 || cfg->depth < 1 ||
	    cfg->depth > FL_DRIVER_MAX_DEPTH || !(cfg->timeout_s > 0) || cfg->gen == NULL ||
	    cfg->host == NULL) {
		snprintf(err, errlen, "driver: bad configuration");
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	d->depth = cfg->depth;
	d->depth_cap = cfg->depth > FL_DRIVER_DEPTH_CAP ? cfg->depth : FL_DRIVER_DEPTH_CAP;
	d->slot_cap = d->depth_cap;
	snprintf(d->addr_text, sizeof d->addr_text, "%s:%u", cfg->host, (unsigned)cfg->port);
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (drv_resolve(d, err, errlen) != 0)
		goto fail;
	if (cfg->tls) {
		d->ssl = fl_tls_client_ctx(cfg->tls_dir, err, errlen);
		if (d->ssl == NULL)
			goto fail;
	}
	evthread_use_pthreads();
	d->threads = calloc(cfg->threads, sizeof *d->threads);
	if (d->threads == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < cfg->threads; i++) {
		if (drv_engine_thread_setup(d, &d->threads[i], i) != 0) {
			snprintf(err, errlen, "driver: cannot set up thread %u (out of memory?)", i);
			goto fail;
		}
	}
	/* Signals go to the main thread, which owns the stop flag and stdin. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned i = 0; i < cfg->threads; i++) {
		struct drv_thread *t = &d->threads[i];
		if (pthread_create(&t->tid, NULL, drv_engine_thread_main, t) != 0)
			break;
		t->started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d->threads[cfg->threads - 1].started) {
		snprintf(err, errlen, "driver: cannot start threads");
		goto fail;
	}

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += DRV_INIT_TIMEOUT_S;
	pthread_mutex_lock(&d->mu);
	while (waiting && !failed) {
		waiting = 0;
		for (unsigned i = 0; i < cfg->threads; i++) {
			if (d->threads[i].init_rc < 0) {
				failed = 1;
				snprintf(err, errlen, "%s", d->threads[i].init_err);
				break;
			}
			waiting |= d->threads[i].init_rc == 0;
		}
		if (waiting && !failed &&
		    pthread_cond_timedwait(&d->cv, &d->mu, &deadline) == ETIMEDOUT) {
			failed = 1;
			snprintf(err, errlen, "connect %s: no connection within %d s", d->addr_text,
				DRV_INIT_TIMEOUT_S);
		}
	}
	pthread_mutex_unlock(&d->mu);
	if (failed)
		goto fail;
	return d;
fail:
	fl_driver_free(d);
	return NULL;
}

unsigned fl_driver_depth(const struct fl_driver *d)
{
	return d->depth;
}

unsigned fl_driver_inflight(const struct fl_driver *d)
{
	return d->depth * d->cfg.threads * d->cfg.connections;
}

unsigned fl_driver_set_inflight(struct fl_driver *d, unsigned n)
{
	unsigned conns = d->cfg.threads * d->cfg.connections;
	unsigned depth = n / conns + (n % conns != 0);
	d->depth = depth < 1 ? 1 : depth > d->slot_cap ? d->slot_cap : depth;
	return fl_driver_inflight(d);
}

void fl_driver_set_miss_stop(struct fl_driver *d, double p95_over_ms, double error_rate,
	double min_s)
{
	d->stop_over_ms = p95_over_ms > 0 && isfinite(p95_over_ms) ? p95_over_ms : 0;
	d->stop_error_rate = error_rate;
	d->stop_min_s = min_s > 0 && isfinite(min_s) ? min_s : 0;
}

/* Counting the window's requests walks every schedule; past this many draws the rule is
 * left off rather than hold the step's start (a 300 s window at 3,000 qps is 900,000). */
#define DRV_STOP_MAX_DRAWS 50000000ull

/* Arm the rule set for this step (d->qps and the times set, threads idle): count the
 * requests due in its measured window from each thread's schedule, and the limits. The
 * rule is used once. */
static void drv_miss_stop_arm(struct fl_driver *d, struct fl_driver_miss_stop *m)
{
	uint64_t warm = (uint64_t)(d->warmup_s * 1e9);
	uint64_t end = warm + (uint64_t)(d->duration_s * 1e9);
	uint64_t due = 0, draws = 0;

	d->stop_on = 0;
	d->stopped = 0;
	d->stopped_ns = 0;
	for (unsigned i = 0; i < d->cfg.threads; i++)
		d->threads[i].pub_late = d->threads[i].pub_failed = 0;
	if (!(d->stop_over_ms > 0))
		return;
	for (unsigned i = 0; i < d->cfg.threads && draws < DRV_STOP_MAX_DRAWS; i++) {
		struct fl_schedule s;
		drv_schedule_for(d, i, warm, end, &s);
		for (uint64_t x = fl_schedule_next(&s); x < end && draws < DRV_STOP_MAX_DRAWS;
		     x = fl_schedule_next(&s), draws++)
			due += x >= warm;
	}
	m->p95_over_ms = d->stop_over_ms;
	m->min_s = d->stop_min_s;
	d->stop_over_ms = 0;
	d->stop_min_s = 0;
	if (draws >= DRV_STOP_MAX_DRAWS || due == 0)
		return;  /* reported with due 0: the rule could not be armed */
	m->due = due;
	/* late > 5% of due: whatever the count of OK replies n <= due, their p95 (rank
	 * ceil(0.95 n)) lies in a bucket over the bound. */
	m->late_limit = due / 20;
	m->failed_limit = d->stop_error_rate > 0 ? (uint64_t)ceil(d->stop_error_rate *
		(double)due) : UINT64_MAX;
	if (m->failed_limit == 0)
		m->failed_limit = 1;
	d->stop_over_ns = (uint64_t)(m->p95_over_ms * 1e6);
	d->stop_from_ns = warm + (uint64_t)(m->min_s * 1e9);
	d->stop_late_limit = m->late_limit;
	d->stop_failed_limit = m->failed_limit;
	d->stop_on = 1;
}

/* Sum the threads' step results into out. Called with every thread done (idle). */
static void drv_merge(struct fl_driver *d, struct fl_driver_result *out, int *backlog_seen,
	uint64_t *window_end)
{
	*backlog_seen = 0;
	*window_end = 0;
	for (unsigned i = 0; i < d->cfg.threads; i++) {
		struct drv_thread *t = &d->threads[i];
#define DRV_SUM(f, help) out->c.f += t->c.f;
		FL_DRIVER_COUNTS(DRV_SUM)
#undef DRV_SUM
		for (int e = 0; e < FL_DRIVER_ERR_N; e++)
			out->c.errors[e] += t->c.errors[e];
		fl_hist_merge(&out->latency, &t->lat);
		fl_hist_merge(&out->service, &t->svc);
		*backlog_seen |= t->backlog_seen;
		if (t->window_end_ns > *window_end)
			*window_end = t->window_end_ns;
	}
}

int fl_driver_step(struct fl_driver *d, double qps, double warmup_s, double duration_s,
	struct fl_driver_result *out)
{
	uint64_t cpu_busy0 = 0, cpu_total0 = 0, cpu_busy1, cpu_total1, window_end, warm_ns;
	int cpu_ok, backlog_seen;
	size_t nsecs;

	fl_driver_result_init(out);
	if (!(qps > 0) || !isfinite(qps) || !(warmup_s >= 0) || !(duration_s > 0) ||
	    !isfinite(warmup_s + duration_s) || warmup_s + duration_s > 1e6)
		return -1;
	nsecs = (size_t)ceil(warmup_s + duration_s + d->cfg.timeout_s) + 2;
	d->secs = calloc(nsecs, sizeof *d->secs);
	if (d->secs == NULL)
		return -1;
	for (size_t i = 0; i < nsecs; i++)
		fl_hist_init(&d->secs[i].hist);
	d->nsecs = nsecs;
	d->secs_used = 0;
	out->step = d->step_no;
	out->requested_qps = qps;
	out->warmup_s = warmup_s;
	out->duration_s = duration_s;
	out->depth = d->depth;
	cpu_ok = drv_cpu_read(&cpu_busy0, &cpu_total0) == 0;

	pthread_mutex_lock(&d->mu);
	d->qps = qps;
	d->warmup_s = warmup_s;
	d->duration_s = duration_s;
	drv_miss_stop_arm(d, &out->miss_stop);
	d->t0_ns = fl_mono_ns() + DRV_START_DELAY_NS;
	d->ndone = 0;
	d->cmd = DRV_CMD_START;
	pthread_mutex_unlock(&d->mu);
	for (unsigned i = 0; i < d->cfg.threads; i++)
		event_active(d->threads[i].cmd_ev, 0, 0);
	pthread_mutex_lock(&d->mu);
	while (d->ndone < d->cfg.threads)
		pthread_cond_wait(&d->cv, &d->mu);
	d->cmd = DRV_CMD_NONE;
	pthread_mutex_unlock(&d->mu);

	if (cpu_ok && drv_cpu_read(&cpu_busy1, &cpu_total1) == 0 && cpu_total1 > cpu_total0)
		out->host_cpu_pct = 100.0 * (double)(cpu_busy1 - cpu_busy0) /
			(double)(cpu_total1 - cpu_total0);
	drv_merge(d, out, &backlog_seen, &window_end);
	warm_ns = d->t0_ns + (uint64_t)(warmup_s * 1e9);
	if (d->stop_on) {
		struct fl_driver_miss_stop *m = &out->miss_stop;
		m->late = m->failed = 0;
		for (unsigned i = 0; i < d->cfg.threads; i++) {
			const struct drv_thread *t = &d->threads[i];
			m->late += t->late;
			m->failed += fl_driver_failed(&t->c);
		}
		m->stopped = d->stopped;
		m->stopped_at_s = d->stopped_ns > warm_ns ? (double)(d->stopped_ns - warm_ns) / 1e9 :
			0;
		d->stop_on = 0;
	}
	out->window_s = window_end > warm_ns ? (double)(window_end - warm_ns) / 1e9 : 0;
	out->interrupted = d->cfg.stop != NULL && *d->cfg.stop != 0;

	out->trace = calloc(d->secs_used ? d->secs_used : 1, sizeof *out->trace);
	if (out->trace != NULL) {
		out->trace_len = d->secs_used;
		for (size_t i = 0; i < d->secs_used; i++) {
			struct fl_driver_trace_row *r = &out->trace[i];
			r->second = i;
			r->sent = d->secs[i].sent;
			r->completed = d->secs[i].completed;
			r->inflight = d->secs[i].inflight;
			r->ok = d->secs[i].hist.n;
			r->p95_ns = fl_hist_percentile(&d->secs[i].hist, 95);
		}
	}
	free(d->secs);
	d->secs = NULL;

	/* Requests waited for slots while the leaf kept within the SLA: the driver's depth,
	 * not the leaf, limited the step. Raise the depth unless the host is busy (then more
	 * in flight would only measure the driver competing with the leaf for CPU). */
	out->driver_limited = backlog_seen && out->latency.n > 0 &&
		(double)fl_hist_percentile(&out->latency, 95) < d->cfg.sla_ms * 1e6;
	if (out->driver_limited && out->host_cpu_pct >= 0 &&
	    out->host_cpu_pct < DRV_CPU_BUSY_PCT && d->depth < d->depth_cap && !out->interrupted) {
		d->depth = d->depth * 2 < d->depth_cap ? d->depth * 2 : d->depth_cap;
	}
	out->next_depth = d->depth;
	d->step_no++;
	return out->trace != NULL ? 0 : -1;
}

void fl_driver_free(struct fl_driver *d)
{
	if (d == NULL)
		return;
	if (d->threads != NULL) {
		pthread_mutex_lock(&d->mu);
		d->cmd = DRV_CMD_QUIT;
		pthread_mutex_unlock(&d->mu);
		for (unsigned i = 0; i < d->cfg.threads; i++) {
			struct drv_thread *t = &d->threads[i];
			if (!t->started)
				continue;
			event_active(t->cmd_ev, 0, 0);
			pthread_join(t->tid, NULL);
		}
		for (unsigned i = 0; i < d->cfg.threads; i++) {
			struct drv_thread *t = &d->threads[i];
			for (unsigned k = 0; t->conns != NULL && k < d->cfg.connections; k++) {
				struct drv_conn *c = &t->conns[k];
				if (c->bev != NULL)
					bufferevent_free(c->bev);
				if (c->retry_ev != NULL)
					event_free(c->retry_ev);
				free(c->slots);
				free(c->free_idx);
			}
			free(t->conns);
			if (t->send_ev != NULL)
				event_free(t->send_ev);
			if (t->tick_ev != NULL)
				event_free(t->tick_ev);
			if (t->cmd_ev != NULL)
				event_free(t->cmd_ev);
			if (t->base != NULL)
				event_base_free(t->base);
			free(t->bl);
		}
		free(d->threads);
	}
	if (d->ssl != NULL)
		SSL_CTX_free(d->ssl);
	free(d->secs);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
