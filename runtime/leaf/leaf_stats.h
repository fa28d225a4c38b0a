/* leaf_stats.h: the leaf's stats JSON (jansson), gathered from every module on demand; the
 * pools' per-thread meters it sums are in common/meter.h.
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
 * metrics (ipc, l1i_mpki, itlb_mpki, branch_mpki, branch_miss_pct, frontend_stall_cycle_ratio) derive
 * from them. An event or metric that cannot be counted is the string "unsupported: <why>",
 * never a number; a pool sums only when every one of its threads counted the event.
 */
#ifndef FL_LEAF_STATS_H
#define FL_LEAF_STATS_H

#include <stddef.h>
#include <stdint.h>

struct json_t;
struct fl_io;
struct fl_ranker;
struct fl_fanout;
struct fl_fanout_stats;
struct fl_rpc_dist;
struct fl_session_store;
struct fl_overheads;
struct fl_corpus;
struct fl_meter_config;
struct fl_meter_sum;

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
	double ready_ms;                  /* exec to listening with everything loaded (ms,
	                                     +- one clock tick); < 0: not measured */
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
