/* clock.h: the runtime's clocks, in nanoseconds.
 *
 * fl_mono_ns is wall time for latencies (CLOCK_MONOTONIC); fl_wall_ns is the realtime
 * clock for timestamps crossing processes (the client send timestamp in frames);
 * fl_thread_cpu_ns is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the
 * fallback stage clock of frontload-simreq and of pipelines without a worker clock (a read
 * measured 0.2-0.3 µs on this project's VMs with tests/cputime-bench). The leaf's ranker
 * threads time stages with their own struct fl_cputime (runtime/common/cputime.h: the
 * perf mmap clock where the host offers it), set by fl_worker_set_cpu_clock; either way a
 * clock is read per stage per request, never per generated call.
 */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

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

#endif
