/* clock.h: the runtime's clocks, in nanoseconds.
 *
 * fl_mono_ns is wall time for latencies (CLOCK_MONOTONIC); fl_wall_ns is the realtime
 * clock for timestamps crossing processes (the client send timestamp in frames);
 * fl_thread_cpu_ns is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the
 * fallback stage clock of frontload-simreq and of pipelines without a worker clock (a read
 * measured 0.2-0.3 µs on this project's VMs with tests/cputime-bench). The leaf's ranker
 * threads time stages with their own struct fl_cputime (runtime/common/cputime.h: the
 * perf mmap clock where the host offers it), set by fl_worker_set_cpu_clock; either way a
 * clock is read per stage per request, never per generated call. fl_thread_cpu_ns_of reads
 * another thread's CPU time (the stats snapshot of the leaf's pools).
 */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t fl_clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t fl_mono_ns(void) { return fl_clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t fl_wall_ns(void) { return fl_clock_ns(CLOCK_REALTIME); }
static inline uint64_t fl_thread_cpu_ns(void) { return fl_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* CPU time of another thread of this process (still running, not joined) into *ns. 0, or
 * -1 when it cannot be read (the caller counts it: an unread thread is not one at 0 ns). */
static inline int fl_thread_cpu_ns_of(pthread_t t, uint64_t *ns)
{
	clockid_t cid;
	struct timespec ts;
	if (pthread_getcpuclockid(t, &cid) != 0 || clock_gettime(cid, &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

#endif
