/* meter.h: per-thread meters: the stage CPU clock (cputime.h) and the PMU counter group
 * (pmu.h) a pool thread keeps, and their sums over a pool.
 *
 * Every RANKER, IO and FANOUT thread keeps a struct fl_meter: its PMU counter group,
 * counting from the thread's start (--pmu on), and, on the threads that time stages per
 * request (RANKER; IO and FANOUT threads time none), its own CPU clock for those reads
 * (--cpu-clock). The pool sets it up (fl_meter_init) before creating the thread; the
 * thread opens it first thing (fl_meter_start) and the creator waits for that
 * (fl_meter_wait), so a clock that cannot be had is a startup error and what was opened
 * is published before anybody reads it. As it exits the thread snapshots its counts
 * (fl_meter_exit). The stats writer sums meters from its own thread (fl_meter_sum_add):
 * a live thread's group is read through its fds (pmu.h allows any thread), an exited
 * one's snapshot is taken. The pool closes the meter after the join (fl_meter_close).
 * No per-request cost but the clock reads: counters are only read by the stats writer.
 */
#ifndef FL_METER_H
#define FL_METER_H

#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>

#include "cputime.h"
#include "pmu.h"

struct fl_meter_config {
	enum fl_cputime_method clock;  /* --cpu-clock: AUTO, PERF_MMAP or CLOCK_GETTIME */
	int pmu;                       /* --pmu on: one counter group per thread */
};

struct fl_meter {
	const struct fl_meter_config *cfg; /* NULL: nothing opened (counts unsupported) */
	int inited;                    /* fl_meter_init ran: close has work to do */
	int timed;                     /* the thread times stages: open a CPU clock */
	struct fl_cputime clk;         /* the owner's stage clock (timed only) */
	enum fl_cputime_method clock_method; /* method in use after start (timed only) */
	char clock_why[192];           /* why the fast path is not in use, "" */
	struct fl_pmu pmu;             /* the thread's group (valid when pmu_open) */
	int pmu_open;                  /* opened and enabled */
	char pmu_why[FL_PMU_WHY_LEN];  /* why not, "" when pmu_open */
	sem_t ready;                   /* posted once by fl_meter_start */
	int rc;                        /* fl_meter_start's result: 0, or -1 (err) */
	char err[256];                 /* startup error (a refused --cpu-clock perf-mmap) */
	int exited;                    /* atomic: final holds the thread's last counts */
	struct fl_pmu_counts final;    /* counts at fl_meter_exit */
};

/* Set m up for a thread that is about to be created (timed: it reads stage CPU). cfg is
 * borrowed and must outlive the meter; NULL opens nothing. Creator thread. */
void fl_meter_init(struct fl_meter *m, const struct fl_meter_config *cfg, int timed);

/* On the owning thread, first thing: open the clock (timed) and the PMU group, enable the
 * group, and post ready. A PMU that cannot be opened is recorded, not fatal. Returns 0, or
 * -1 when the clock asked for cannot be had (m->err says why): the thread should exit. */
int fl_meter_start(struct fl_meter *m);

/* Wait until the thread has run fl_meter_start; its result, with err filled on -1.
 * Creator thread; once per meter, and only for a thread that was created. */
int fl_meter_wait(struct fl_meter *m, char *err, size_t errlen);

/* CPU time of the owning thread in ns on its stage clock (clock_gettime when untimed).
 * arg is the struct fl_meter (the form of pipeline.h's clock hook). Owning thread only;
 * call per stage per request, never per generated-function call. */
uint64_t fl_meter_cpu_ns(void *arg);

/* On the owning thread as it returns: snapshot the counts for later readers. */
void fl_meter_exit(struct fl_meter *m);

/* Close the clock and the group. After the join, or for a thread never created. */
void fl_meter_close(struct fl_meter *m);

/* Meters summed over a pool (or pools). */
struct fl_meter_sum {
	unsigned threads;              /* meters summed */
	unsigned clock_perf_mmap;      /* timed threads on the perf mmap clock */
	unsigned clock_gettime;        /* timed threads on clock_gettime */
	char clock_why[192];           /* first timed thread's reason for not using perf-mmap */
	unsigned pmu_threads;          /* threads whose group is open */
	int user_only;                 /* some group counts user space only */
	char pmu_why[FL_PMU_WHY_LEN];  /* first reason a thread has no group, "" */
	struct fl_pmu_counts counts;   /* summed; an event is supported only when every
	                                  thread counted it; all unsupported with 0 threads */
};

/* Empty sum: no threads, every event unsupported ("no threads in this pool"). */
void fl_meter_sum_init(struct fl_meter_sum *s);

/* Add one thread's meter (live: its group is read now; exited: its snapshot). Any thread
 * but the owner's teardown: call before fl_meter_close. */
void fl_meter_sum_add(struct fl_meter_sum *s, struct fl_meter *m);

/* Add a pool's sum into a total. */
void fl_meter_sum_merge(struct fl_meter_sum *dst, const struct fl_meter_sum *src);

#endif
