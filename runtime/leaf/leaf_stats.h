/* leaf_stats.h: the leaf's stats JSON (jansson), gathered from every module on demand, and
 * the per-thread meters (stage CPU clock, PMU counter group) the pools keep for it.
 *
 * Shape (all counters are totals since start; times in ns unless named otherwise):
 *   uptime_s, snapshot_wall_ns (realtime clock when taken), config {every knob},
 *   requests {received, replied, ok, overloaded, bad_request, denied, stale, internal,
 *   dropped_disconnected}, frames {bad_magic, bad_version, bad_type, bad_flags, too_long,
 *   stats_requests}, connections {accepted, closed, dropped_slow, tls_handshakes,
 *   listener_cipher}, bytes_in, bytes_out, extract_calls,
 *   stages {<stage>: {cpu_ns, wall_ns}}, cpu_share {<stage>: share of summed stage CPU},
 *   cpu_clock {requested, method, fast_path_unavailable, threads {perf-mmap,
 *   clock_gettime}}, pmu {enabled, supported, why, user_only, ranker|io|fanout|total
 *   {threads, threads_counted, <event>, <metric>, mux_scale, enabled_ns {<event>},
 *   running_ns {<event>}}},
 *   pools {io|ranker|fanout: {threads, cpu_ns}} (fanout adds threads_measured),
 *   fanout {enabled, fl_fanout_stats fields, calls_per_method {<method>: n},
 *   expected_per_request {calls, req_bytes, resp_bytes}}, sessions {enabled, ...},
 *   overheads {admitted, overloaded, denied, stale, per_method {<method>: n}, inflight,
 *   inflight_peak}, memory {rss_bytes, rss_anon_bytes, rss_file_bytes, owners
 *   {corpus_bytes, dlrm_bytes, sessions_bytes, ranker_scratch_bytes, fanout_scratch_bytes,
 *   conn_buffers_bytes, tls_heap_bytes}, allocator {...}} (memacct.h; null: not there).
 * Stage 6's cpu_ns is the FANOUT threads' CPU (all of their work is fanout) plus what the
 * RANKER threads spent starting fanouts; its wall_ns is the summed per-request fanout time.
 * Stage CPU is read on each RANKER thread's own clock (cpu_clock.method); pool cpu_ns is
 * read from other threads with pthread_getcpuclockid (always clock_gettime).
 * pmu events (instructions, cycles, l1i_misses, itlb_misses, branches, branch_misses,
 * stalled_cycles_frontend) are counts since each thread started, scaled for multiplexing;
 * metrics (ipc, l1i_mpki, itlb_mpki, branch_mpki, branch_miss_pct, fe_stall_share) derive
 * from them. An event or metric that cannot be counted is the string "unsupported: <why>",
 * never a number; a pool sums only when every one of its threads counted the event.
 */
#ifndef FL_LEAF_STATS_H
#define FL_LEAF_STATS_H

#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>

#include "cputime.h"
#include "pmu.h"

struct json_t;
struct fl_io;
struct fl_ranker;
struct fl_fanout;
struct fl_fanout_stats;
struct fl_rpc_dist;
struct fl_session_store;
struct fl_overheads;
struct fl_corpus;

/* ---- per-thread meters ----
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

/* Where the numbers come from. Pointers are borrowed; NULL means "not there". */
struct fl_leaf_stats_src {
	uint64_t start_ns;                /* fl_mono_ns() at startup */
	struct json_t *config;            /* the "config" object (copied into each dump) */
	struct fl_io *io;
	struct fl_ranker *ranker;
	struct fl_fanout *fanout;         /* running fanout, or NULL (off or freed) */
	const struct fl_fanout_stats *fanout_final; /* last snapshot of a freed fanout */
	unsigned fanout_threads;          /* FANOUT threads configured (0: --mock none) */
	double fanout_scale;              /* --rpc-fanout-scale, for the expectation */
	const struct fl_rpc_dist *dist;   /* method names and the expectation */
	struct fl_session_store *sessions;
	struct fl_overheads *ovh;
	const struct fl_meter_config *meter; /* --cpu-clock and --pmu as asked, or NULL */
	const struct fl_meter_sum *fanout_meter_final; /* FANOUT meters of a freed fanout */
	const struct fl_corpus *corpus;   /* reply and filler bytes (its mapping's size) */
	size_t model_bytes;               /* DLRM weights and tables (0: not known) */
};

/* Build the stats object (new reference), or NULL when out of memory. Main thread. */
struct json_t *fl_leaf_stats_json(const struct fl_leaf_stats_src *src);

/* Write the stats object to path through path.tmp.<pid> and rename, so readers never
 * see a partial file. 0, or -1 (err filled). */
int fl_leaf_stats_write(const struct fl_leaf_stats_src *src, const char *path, char *err,
	size_t errlen);

/* The same for an object already built (the snapshot a STATS frame also gets). */
int fl_leaf_stats_write_json(const struct json_t *root, const char *path, char *err,
	size_t errlen);

#endif
