/* pmu.h: hardware counter groups for one thread (perf_event_open) and front-end metrics.
 *
 * Events: instructions (required; leader of the first group), cycles, L1i read misses
 * (PERF_TYPE_HW_CACHE L1I/READ/MISS), iTLB read misses (ITLB/READ/MISS), branch
 * instructions, branch misses, and front-end stalled cycles
 * (PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, exposed by few CPUs), and a top-down pair where
 * the CPU has one (fl_pmu_topdown_find): pipeline slots and the slots the front end left
 * empty. Every event but
 * instructions is optional: one the host refuses is kept as unsupported with the
 * perf_event_open errno text, and metrics that need it are unsupported, never zero.
 *
 * Events go into one group (scheduled on the PMU together, so their ratios are exact);
 * an event the group cannot fit (EINVAL/ENOSPC when joining) leads a further group. The
 * top-down pair is always a group of its own, slots leading (Intel requires it).
 * Groups are read with PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID, and a
 * count is scaled by enabled/running when the kernel multiplexed the group (the factor is
 * kept so reports can show it). Times count from the last fl_pmu_reset (the kernel's
 * reset zeroes counts only, so reset records the times as a baseline). A group that
 * never ran since (running = 0) gives unsupported counts, not zeros.
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
	FL_PMU_TD_SLOTS,         /* top-down pipeline slots (see struct fl_pmu_topdown) */
	FL_PMU_TD_FE,            /* top-down slots the front end left empty */
	FL_PMU_NEVENTS,
};

/* One event of one thread (or a sum over threads) over a measured window. */
struct fl_pmu_count {
	uint64_t value;      /* scaled count: raw * enabled / running */
	uint64_t raw;        /* count as read (while on the PMU) */
	uint64_t enabled_ns; /* time the event was enabled */
	uint64_t running_ns; /* time it was on the PMU (< enabled_ns when multiplexed) */
	double max_scale;    /* largest enabled/running among the reads summed in (1 = none;
	                      * 0 on hand-made counts: then enabled/running of the sums) */
	bool supported;      /* false: value is meaningless, why says so */
	char why[FL_PMU_WHY_LEN]; /* reason when !supported, else "" */
};

/* Where the top-down pair comes from on this CPU. front-end bound = fe * fe_mult /
 * (slots * slots_mult), a share of pipeline slots, 0..1. */
struct fl_pmu_topdown {
	const char *name;    /* "intel-perf-metrics", "intel-tma-l1", "amd-zen4"; NULL: none */
	const char *formula; /* the events and arithmetic, as printed with the figure */
	uint32_t type;       /* perf type of both events */
	uint64_t slots_config, fe_config;
	double slots_mult, fe_mult; /* sysfs .scale, or slots per cycle on AMD */
};

struct fl_pmu_counts {
	struct fl_pmu_count ev[FL_PMU_NEVENTS]; /* indexed by enum fl_pmu_event */
	unsigned threads; /* threads summed in: 1 after fl_pmu_read, 0 after init */
	struct fl_pmu_topdown td; /* the top-down source the TD events were counted with */
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
	struct fl_pmu_metric fe_stall_share; /* stalled-frontend cycles / cycles, 0..1: a
	                                      * cycle ratio, not a share of slots */
	struct fl_pmu_metric fe_bound;       /* top-down front-end bound, share of slots, 0..1
	                                      * (formula: fe_bound_formula) */
	const char *fe_bound_formula;        /* counts' td.formula, or NULL */
	double max_scale; /* largest enabled/running factor of any supported event in any read
	                   * summed in (1 = none) */
};

struct fl_pmu {
	int fd[FL_PMU_NEVENTS];      /* event fd, -1 when unsupported */
	uint64_t id[FL_PMU_NEVENTS]; /* kernel event id (PERF_FORMAT_ID), to match reads */
	unsigned group[FL_PMU_NEVENTS]; /* group index of each opened event */
	int leader[FL_PMU_NEVENTS];  /* fd of each group's leader, ngroups used */
	unsigned ngroups;            /* groups opened (1 unless the first did not fit) */
	uint64_t base_enabled[FL_PMU_NEVENTS], base_running[FL_PMU_NEVENTS]; /* per group:
	                              * times at the last fl_pmu_reset (0 before any) */
	struct fl_pmu_topdown td;    /* top-down source opened (name NULL: none) */
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
 * until fl_pmu_reset, which also makes later reads' enabled/running times start there.
 * Return 0, or -1 with why filled (ioctl or read text). */
int fl_pmu_enable(struct fl_pmu *p, char *why, size_t whylen);
int fl_pmu_disable(struct fl_pmu *p, char *why, size_t whylen);
int fl_pmu_reset(struct fl_pmu *p, char *why, size_t whylen);

/* Read every group into out (threads = 1), scaling for multiplexing. Events that failed
 * to open, or whose group never ran, are unsupported with a reason. Returns 0, or -1
 * with why filled when a group read fails (out is then all unsupported). */
int fl_pmu_read(struct fl_pmu *p, struct fl_pmu_counts *out, char *why, size_t whylen);

/* Parse group g's read buffer (len bytes: nr, time_enabled, time_running, then {value, id}
 * x nr) into the events of out that p put in group g, matched by id in any order. Times
 * are taken since p's baseline for g. Events whose id is absent stay unsupported
 * ("missing from its group's read"); a group that did not run since the baseline gives
 * unsupported events, never zeros. Returns 0, or -1 with why filled when len is short of
 * what nr promises. Pure: no system call (the read path and the tests share it). */
int fl_pmu_parse_group(const struct fl_pmu *p, unsigned g, const void *buf, size_t len,
	struct fl_pmu_counts *out, char *why, size_t whylen);

/* The top-down source of this host's CPU, from sysfs event names (Intel) or the CPU family
 * (AMD Zen 4 and later), into td; td->name NULL (and why filled) when there is none. */
void fl_pmu_topdown_find(struct fl_pmu_topdown *td, char *why, size_t whylen);

/* A sysfs event spec ("event=0x00,umask=0x82", terms event, umask, edge, pc, any, inv,
 * cmask, each =value or bare for 1) as a config in the x86 core layout (event bits 0-7 and
 * 32-35, umask 8-15, edge 18, pc 19, any 21, inv 23, cmask 24-31). Returns 0, or -1 for an
 * unknown term or a value that does not fit. */
int fl_pmu_spec_config(const char *spec, uint64_t *config);

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
 * "branch-misses", "stalled-cycles-frontend", "topdown-slots", "topdown-fe";
 * "unknown" otherwise. */
const char *fl_pmu_event_name(enum fl_pmu_event e);

#endif
