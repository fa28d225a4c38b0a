/* cputime.c: per-thread CPU clock from the perf task-clock mmap page, else clock_gettime. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cputime.h"
#include "errbuf.h"

/* Largest gap tolerated between the perf page's time and CLOCK_THREAD_CPUTIME_ID in the
 * open-time self-check, and the most the page's time may advance over a 1 ms sleep. */
#define CPUTIME_CHECK_SLEEP_NS 1000000
#define CPUTIME_MAX_SLEEP_ADVANCE_NS 200000
#define CPUTIME_MAX_DRIFT_NS 200000

static uint64_t cputime_gettime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)

static inline uint64_t cputime_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Task-clock ns since the event was opened, from the mapped page, or false when the kernel
 * has (now) withdrawn cap_user_time. The recipe is the one in linux/perf_event.h: read
 * time_enabled and the time_{offset,mult,shift} conversion under the page's seqlock, then
 * add delta = time_offset + cyc * mult >> shift (split in quot and rem so nothing
 * overflows), the ns elapsed since the kernel last wrote the page. A per-thread context's
 * time only runs while the thread is on a CPU, so time_enabled is the thread's CPU time up
 * to that write; the kernel rewrites the page when the thread is scheduled in, so the
 * delta is CPU time too (checked once at open). The seqlock needs no odd/even test here:
 * the page of a self-monitoring event is written in kernel context on this thread, never
 * concurrently with this loop, and a write between the two reads of lock changes it. */
static bool cputime_perf_read(const volatile struct perf_event_mmap_page *pc, uint64_t *ns)
{
	uint32_t seq, mult, shift;
	uint64_t enabled, cyc, offset, cycles = 0, mask = ~0ull;
	bool user_time, time_short;

	do {
		seq = pc->lock;
		__asm__ volatile("" ::: "memory");
		user_time = pc->cap_user_time;
		time_short = pc->cap_user_time_short;
		enabled = pc->time_enabled;
		cyc = cputime_rdtsc();
		offset = pc->time_offset;
		mult = pc->time_mult;
		shift = pc->time_shift;
		if (time_short) {
			cycles = pc->time_cycles;
			mask = pc->time_mask;
		}
		__asm__ volatile("" ::: "memory");
	} while (pc->lock != seq);

	if (!user_time)
		return false;
	/* A counter narrower than 64 bits: extend it relative to time_cycles (a no-op when
	 * cap_user_time_short is clear, mask being all ones). */
	cyc = cycles + ((cyc - cycles) & mask);
	uint64_t quot = cyc >> shift;
	uint64_t rem = cyc & ((1ull << shift) - 1);
	uint64_t delta = offset + quot * mult + ((rem * mult) >> shift);
	*ns = enabled + delta;
	return true;
}

/* Open the task-clock event of the calling thread and map its page. Kernel time is part
 * of the task clock; when perf_event_paranoid refuses it, exclude_kernel changes nothing
 * for time_enabled, so retry with it. Returns 0, or -1 with why filled. */
static int cputime_perf_open(struct fl_cputime *c, char *why, size_t whylen)
{
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_hv = 1;
	c->fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0 && (errno == EACCES || errno == EPERM)) {
		attr.exclude_kernel = 1;
		c->fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
		                     PERF_FLAG_FD_CLOEXEC);
	}
	if (c->fd < 0) {
		fl_errf(why, whylen, "perf_event_open(task-clock): %s", strerror(errno));
		return -1;
	}
	if (page <= 0)
		page = 4096;
	c->page = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, c->fd, 0);
	if (c->page == MAP_FAILED) {
		c->page = NULL;
		fl_errf(why, whylen, "mmap(perf task-clock page): %s", strerror(errno));
		return -1;
	}
	c->page_len = (size_t)page;

	const volatile struct perf_event_mmap_page *pc = c->page;
	if (!pc->cap_bit0_is_deprecated) {
		fl_errf(why, whylen, "perf mmap page uses the pre-3.12 capability layout");
		return -1;
	}
	if (!pc->cap_user_time) {
		fl_errf(why, whylen,
		            "cap_user_time=0 on this host (the kernel exposes no TSC-based time "
		            "to user space, e.g. no stable native sched_clock under a hypervisor)");
		return -1;
	}
	return 0;
}

/* Align the page time to CLOCK_THREAD_CPUTIME_ID and check it behaves like a CPU clock:
 * it must not run while the thread sleeps and must track the kernel's thread clock.
 * Returns 0, or -1 with why filled. */
static int cputime_perf_check(struct fl_cputime *c, char *why, size_t whylen)
{
	const volatile struct perf_event_mmap_page *pc = c->page;
	uint64_t p0, p1, g0, g1;
	struct timespec nap = {0, CPUTIME_CHECK_SLEEP_NS};

	g0 = cputime_gettime_ns();
	bool ok = cputime_perf_read(pc, &p0);
	g1 = cputime_gettime_ns();
	if (!ok || g0 == 0) {
		fl_errf(why, whylen, "cap_user_time cleared by the kernel during open");
		return -1;
	}
	c->base_ns = (int64_t)(g0 / 2 + g1 / 2) - (int64_t)p0;

	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	ok = cputime_perf_read(pc, &p1);
	g0 = cputime_gettime_ns();
	if (!ok) {
		fl_errf(why, whylen, "cap_user_time cleared by the kernel during open");
		return -1;
	}
	if (p1 - p0 > CPUTIME_MAX_SLEEP_ADVANCE_NS) {
		fl_errf(why, whylen,
		            "perf page time advanced %llu us over a %d us sleep (page not "
		            "refreshed at sched-in on this kernel)",
		            (unsigned long long)((p1 - p0) / 1000), CPUTIME_CHECK_SLEEP_NS / 1000);
		return -1;
	}
	int64_t drift = (int64_t)(p1 + (uint64_t)c->base_ns) - (int64_t)g0;
	if (drift > CPUTIME_MAX_DRIFT_NS || drift < -CPUTIME_MAX_DRIFT_NS) {
		fl_errf(why, whylen,
		            "perf page time disagrees with CLOCK_THREAD_CPUTIME_ID by %lld us",
		            (long long)(drift / 1000));
		return -1;
	}
	return 0;
}

#endif /* __x86_64__ */

int fl_cputime_open(struct fl_cputime *c, enum fl_cputime_method want, char *why,
                    size_t whylen)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->method = FL_CPUTIME_CLOCK_GETTIME;
	fl_errf(why, whylen, "%s", "");

	if (want == FL_CPUTIME_AUTO || want == FL_CPUTIME_PERF_MMAP) {
#if defined(__x86_64__)
		if (cputime_perf_open(c, why, whylen) == 0 &&
		    cputime_perf_check(c, why, whylen) == 0) {
			c->method = FL_CPUTIME_PERF_MMAP;
			return 0;
		}
#else
		fl_errf(why, whylen, "perf mmap clock needs rdtsc (x86-64 only)");
#endif
		fl_cputime_close(c);
		if (want == FL_CPUTIME_PERF_MMAP)
			return -1;
	} else if (want != FL_CPUTIME_CLOCK_GETTIME) {
		fl_errf(why, whylen, "unknown method %d", (int)want);
		return -1;
	}

	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
		fl_errf(why, whylen, "clock_gettime(CLOCK_THREAD_CPUTIME_ID): %s",
		            strerror(errno));
		return -1;
	}
	return 0;
}

uint64_t fl_cputime_ns(struct fl_cputime *c)
{
#if defined(__x86_64__)
	if (c->method == FL_CPUTIME_PERF_MMAP) {
		uint64_t ns;

		if (cputime_perf_read(c->page, &ns))
			return ns + (uint64_t)c->base_ns;
		/* The kernel withdrew user-space time (e.g. the TSC was marked unstable):
		 * the fallback reads the same scale, so switch for good. */
		fl_cputime_close(c);
	}
#else
	(void)c;
#endif
	return cputime_gettime_ns();
}

const char *fl_cputime_method_name(enum fl_cputime_method m)
{
	switch (m) {
	case FL_CPUTIME_AUTO:
		return "auto";
	case FL_CPUTIME_PERF_MMAP:
		return "perf-mmap";
	case FL_CPUTIME_CLOCK_GETTIME:
		return "clock_gettime";
	}
	return "unknown";
}

void fl_cputime_close(struct fl_cputime *c)
{
	if (c->page != NULL)
		munmap(c->page, c->page_len);
	if (c->fd >= 0)
		close(c->fd);
	c->page = NULL;
	c->page_len = 0;
	c->fd = -1;
	c->base_ns = 0;
	c->method = FL_CPUTIME_CLOCK_GETTIME;
}
