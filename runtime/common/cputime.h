/* cputime.h: a fast per-thread CPU clock (perf task-clock mmap page, else clock_gettime).
 *
 * Method PERF_MMAP opens a PERF_TYPE_SOFTWARE / PERF_COUNT_SW_TASK_CLOCK event on the
 * calling thread, maps its first page (struct perf_event_mmap_page) and, when the kernel
 * sets cap_user_time, computes the thread's CPU time in user space: rdtsc converted with
 * the page's time_mult/time_shift/time_offset and added to time_enabled, all read under
 * the page's seqlock (the recipe in the comments of linux/perf_event.h). No system call
 * per read. A public report measured about 67x over a clock_gettime wrapper with this
 * approach (facebook/hhvm pull request 9811, "Add fast nanosecond-resolution per-thread
 * CPU timer", https://github.com/facebook/hhvm/pull/9811; one machine, not merged).
 * x86-64 only (rdtsc); elsewhere the method reports itself unavailable.
 *
 * Method CLOCK_GETTIME reads clock_gettime(CLOCK_THREAD_CPUTIME_ID): a system call (the
 * vDSO does not serve thread CPU clocks): 0.2-0.3 µs per read measured by
 * tests/cputime-bench on one project VM, 0.7-0.9 µs reported on others; on these VMs the
 * perf page has cap_user_time=0 (no stable native sched_clock under the hypervisor).
 *
 * Both methods return nanoseconds on CLOCK_THREAD_CPUTIME_ID's scale (the perf method is
 * offset to it once at open, to within about one clock_gettime read; the open-time check
 * refuses a page more than 200 µs off), so values may be compared across methods.
 *
 * Cost rule: read per stage per request (a handful of reads per request), never per
 * generated-function call: even the fast path costs tens of ns, and the fallback up to
 * about a microsecond.
 *
 * Threads: a struct fl_cputime belongs to the thread that opened it; only that thread may
 * call fl_cputime_ns (the perf page and CLOCK_THREAD_CPUTIME_ID describe the caller).
 */
#ifndef FL_CPUTIME_H
#define FL_CPUTIME_H

#include <stddef.h>
#include <stdint.h>

enum fl_cputime_method {
	FL_CPUTIME_AUTO,          /* PERF_MMAP when it works, else CLOCK_GETTIME (open only) */
	FL_CPUTIME_PERF_MMAP,     /* perf task-clock mmap page + rdtsc, no system call */
	FL_CPUTIME_CLOCK_GETTIME, /* clock_gettime(CLOCK_THREAD_CPUTIME_ID) */
};

struct fl_cputime {
	enum fl_cputime_method method; /* in use after open: PERF_MMAP or CLOCK_GETTIME */
	int fd;                        /* task-clock perf event; -1 with CLOCK_GETTIME */
	void *page;                    /* mapped struct perf_event_mmap_page, or NULL */
	size_t page_len;               /* bytes mapped (one page) */
	int64_t base_ns;               /* added to the perf time: CLOCK_THREAD_CPUTIME_ID scale */
};

/* Open a CPU clock for the calling thread. want: AUTO, PERF_MMAP or CLOCK_GETTIME.
 * why (whylen bytes, may be NULL/0) receives "" when the fast path is in use or was not
 * asked for, else why it is unavailable, e.g. "perf_event_open(task-clock): Permission
 * denied" or "cap_user_time=0 on this host (kernel cannot expose the task clock to user
 * space)". Returns 0 on success (c->method says which), -1 when want=PERF_MMAP and the
 * fast path is unavailable or when CLOCK_THREAD_CPUTIME_ID itself fails; c is then closed
 * (safe to pass to fl_cputime_close). Costs ~1 ms when the page offers cap_user_time (a
 * self-check that the page time stops while the thread sleeps and matches the kernel's
 * thread clock; a page failing it is refused with the measured gap as the reason). */
int fl_cputime_open(struct fl_cputime *c, enum fl_cputime_method want, char *why,
                    size_t whylen);

/* CPU time of the owning thread in ns (kernel + user), monotonic per thread. 0 if the
 * clock fails (CLOCK_GETTIME only; never seen on Linux). */
uint64_t fl_cputime_ns(struct fl_cputime *c);

/* "auto", "perf-mmap", "clock_gettime" or "unknown". */
const char *fl_cputime_method_name(enum fl_cputime_method m);

/* Unmap and close; c reads as CLOCK_GETTIME afterwards. Safe on a closed or failed c. */
void fl_cputime_close(struct fl_cputime *c);

#endif
