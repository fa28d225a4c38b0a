/* pmu.h: hardware counter groups for one thread (perf_event_open) and front-end metrics.
 *
 * Events: instructions (required; leader of the first group), cycles, L1i read misses
 * (PERF_TYPE_HW_CACHE L1I/READ/MISS), iTLB read misses (ITLB/READ/MISS), branch
 * instructions, branch misses, and front-end stalled cycles
 * (PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, exposed by few CPUs). Every event but
 * instructions is optional: one the host refuses is kept as unsupported with the
 * perf_event_open errno text, and metrics that need it are unsupported, never zero.
 *
 * Events go into one group (scheduled on the PMU together, so their ratios are exact);
 * an event the group cannot fit (EINVAL/ENOSPC when joining) leads a further group.
 * Groups are read with PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID, and a
 * count is scaled by enabled/running when the kernel multiplexed the group (the factor is
 * kept so reports can show it). A group that never ran (running = 0) gives unsupported
 * counts, not zeros.
 *
 * Counting is user plus kernel when perf_event_paranoid allows, else user only
 * (fl_pmu.user_only says which). Errors: functions return 0 or -1 and fill a caller
 * buffer (why, whylen) with "call: OS text", as anet does; nothing prints.
 *
 * Threads: fl_pmu_open may target any thread of the process (tid); enable, disable,
 * reset and read may be called from any thread. A struct fl_pmu is not shared
 * concurrently. Sum per-thread counts with fl_pmu_sum (pool totals), then derive.
 */
#ifndef FL_PMU_H
#define FL_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FL_PMU_WHY_LEN 128 /* bytes of a reason string, NUL included */

enum fl_pmu_event {
	FL_PMU_INSTRUCTIONS,     /* retired instructions (required) */
	FL_PMU_CYCLES,           /* core cycles */
	FL_PMU_L1I_MISSES,       /* L1 instruction cache read misses */
	FL_PMU_ITLB_MISSES,      /* instruction TLB read misses */
	FL_PMU_BRANCHES,         /* retired branch instructions */
	FL_PMU_BRANCH_MISSES,    /* mispredicted branches */
	FL_PMU_STALLED_FRONTEND, /* cycles the front end delivered no uops */
	FL_PMU_NEVENTS,
};

/* One event of one thread (or a sum over threads) over a measured window. */
struct fl_pmu_count {
	uint64_t value;      /* scaled count: raw * enabled / running */
	uint64_t raw;        /* count as read (while on the PMU) */
	uint64_t enabled_ns; /* time the event was enabled */
	uint64_t running_ns; /* time it was on the PMU (< enabled_ns when multiplexed) */
	bool supported;      /* false: value is meaningless, why says so */
	char why[FL_PMU_WHY_LEN]; /* reason when !supported, else "" */
};

struct fl_pmu_counts {
	struct fl_pmu_count ev[FL_PMU_NEVENTS]; /* indexed by enum fl_pmu_event */
	unsigned threads; /* threads summed in: 1 after fl_pmu_read, 0 after init */
};

/* A derived metric; value is only meaningful when supported. */
struct fl_pmu_metric {
	double value;
	bool supported;
	char why[FL_PMU_WHY_LEN]; /* why it cannot be computed, else "" */
};

struct fl_pmu_metrics {
	struct fl_pmu_metric ipc;            /* instructions / cycles */
	struct fl_pmu_metric l1i_mpki;       /* 1000 * L1i misses / instructions */
	struct fl_pmu_metric itlb_mpki;      /* 1000 * iTLB misses / instructions */
	struct fl_pmu_metric branch_mpki;    /* 1000 * branch misses / instructions */
	struct fl_pmu_metric branch_miss_pct; /* 100 * branch misses / branches */
	struct fl_pmu_metric fe_stall_share; /* stalled-frontend cycles / cycles, 0..1 */
	double max_scale; /* largest enabled/running factor among supported events (1 = none) */
};

struct fl_pmu {
	int fd[FL_PMU_NEVENTS];      /* event fd, -1 when unsupported */
	uint64_t id[FL_PMU_NEVENTS]; /* kernel event id (PERF_FORMAT_ID), to match reads */
	unsigned group[FL_PMU_NEVENTS]; /* group index of each opened event */
	int leader[FL_PMU_NEVENTS];  /* fd of each group's leader, ngroups used */
	unsigned ngroups;            /* groups opened (1 unless the first did not fit) */
	char why[FL_PMU_NEVENTS][FL_PMU_WHY_LEN]; /* open error per unsupported event */
	bool user_only;              /* true: paranoid setting forced exclude_kernel */
	pid_t tid;                   /* thread counted (0: the opener) */
};

/* Open the counters, disabled, for thread tid (0 = the calling thread) of this process.
 * Returns 0 when at least instructions opened (other events may be unsupported: see
 * p->fd and p->why), else -1 with nothing left open and why = "hardware counters
 * unsupported on this host: perf_event_open(instructions): <errno text>". */
int fl_pmu_open(struct fl_pmu *p, pid_t tid, char *why, size_t whylen);

/* Start, stop and zero counting (all groups). Enabling does not reset: windows add up
 * until fl_pmu_reset. Return 0, or -1 with why filled (ioctl text). */
int fl_pmu_enable(struct fl_pmu *p, char *why, size_t whylen);
int fl_pmu_disable(struct fl_pmu *p, char *why, size_t whylen);
int fl_pmu_reset(struct fl_pmu *p, char *why, size_t whylen);

/* Read every group into out (threads = 1), scaling for multiplexing. Events that failed
 * to open, or whose group never ran, are unsupported with a reason. Returns 0, or -1
 * with why filled when a group read fails (out is then all unsupported). */
int fl_pmu_read(struct fl_pmu *p, struct fl_pmu_counts *out, char *why, size_t whylen);

/* Close every fd; safe on a closed or failed p. */
void fl_pmu_close(struct fl_pmu *p);

/* raw * enabled / running without overflow (the perf_event.h quot/rem form): the count
 * the event would have reached had it been on the PMU the whole enabled time. raw when
 * enabled <= running (no multiplexing), 0 when running = 0. */
uint64_t fl_pmu_scale_count(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns);

/* enabled / running (1.0 = never multiplexed), 0 when running = 0. */
double fl_pmu_scale_factor(const struct fl_pmu_count *c);

/* Empty counts (threads = 0, every event supported with zero counts), ready to sum into. */
void fl_pmu_counts_init(struct fl_pmu_counts *c);

/* Add src (one thread or a partial sum) to dst: values, raw counts and times add; an event
 * is supported in the sum only when supported in both (else the first reason is kept). */
void fl_pmu_sum(struct fl_pmu_counts *dst, const struct fl_pmu_counts *src);

/* Metrics from counts (one thread or a sum). A metric whose input is unsupported, or whose
 * denominator is zero, is unsupported with a reason; it is never reported as zero. */
void fl_pmu_derive(const struct fl_pmu_counts *c, struct fl_pmu_metrics *m);

/* Short event name: "instructions", "cycles", "L1i-misses", "iTLB-misses", "branches",
 * "branch-misses", "stalled-cycles-frontend"; "unknown" otherwise. */
const char *fl_pmu_event_name(enum fl_pmu_event e);

#endif
