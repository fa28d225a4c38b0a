/* run_result.h: the run-state of `frontload run` and its outputs (result.json, steps.csv).
 *
 * struct fl_run is the one run-state: configuration, host, instances with their
 * processes, the search, every measured step and the status. run_main fills it; this
 * module parses the driver's step lines into it (run_obs.c) and writes it out (run_result.c,
 * with the leaf's stats block from run_window.c), atomically (temp file + rename), after
 * every step, so whatever was measured survives an interruption.
 */
#ifndef FL_RUN_RESULT_H
#define FL_RUN_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "run_host.h"
#include "run_procs.h"
#include "run_clock.h"
#include "run_search.h"

struct ssl_ctx_st;

#define FL_RUN_MAX_INSTANCES 64u
#define FL_RUN_MAX_DRIVERS 16u    /* --drivers: driver processes per instance */
#define FL_RUN_MAX_FIXED 64u
#define FL_RUN_MAX_BATCHES 4096u  /* batch-means seconds of one step at most (the first) */

/* Latency of OK replies from intended send time (ms): the driver's "latency_ms". */
struct fl_lat_ms {
	uint64_t count;
	double p50, p90, p95, p99, p99_9, max, mean;
};

/* One instance's measurement of one step: a parsed driver control line. */
struct fl_run_obs {
	double requested_qps;    /* rate asked of this instance */
	double achieved_qps;     /* replies per second in the measured window */
	double offered_qps;      /* (sent + unsent) / window: what the schedule offered */
	double window_s;         /* measured window run (s) */
	uint64_t sent, completed, ok, overloaded, timeouts, late, unsent;
	uint64_t errors;         /* errors.total (bad status, protocol, lost, connect...) */
	struct fl_lat_ms lat;
	double p95_lo_ms, p95_hi_ms; /* the p95's 95% interval (driver's p95_interval_ms,
	                                order statistics); < 0: not reported */
	double p95_batch_half_ms; /* batch means over the window's whole seconds of the trace
	                             (quantile_ci.h); < 0: not computed (fewer than 3 seconds,
	                             or under 20 OK replies a second) */
	unsigned p95_batches;    /* seconds it used */
	uint64_t backlogged;     /* waited for a free connection slot */
	unsigned inflight_ceiling; /* the driver's in-flight ceiling in the step; 0: unknown */
	double driver_cpu_pct;   /* the driver's host CPU estimate (%), < 0 unknown */
	int driver_limited;      /* the driver itself was the bottleneck */
	int interrupted;         /* cut short by a signal */
	int miss_stopped;        /* the driver ended it early: its miss was certain */
	json_t *miss_stop_json;  /* the driver's miss_stop object (owned), NULL without one */
	json_t *errors_json;     /* errors by kind (owned) */
	json_t *hist_json;       /* latency_hist_ns (hist_json.h; owned), NULL when absent */
	uint64_t seed;           /* a driver's own observation: that driver's --seed */
	unsigned ndrv;           /* > 1: merged (fl_result_obs_merge) from drv */
	struct fl_run_obs *drv;  /* ndrv drivers' own observations (owned) */
};

/* One step of the run over all instances. */
struct fl_run_step {
	unsigned number;             /* 1-based, in run order */
	enum fl_search_phase phase;
	double qps;                  /* requested per instance */
	double warmup_s, duration_s; /* asked */
	double started_s, ended_s;   /* since the run started */
	double host_cpu_pct;         /* /proc/stat busy share over the step; < 0 unknown */
	unsigned ninst;
	struct fl_run_obs *inst;     /* ninst */
	int complete;                /* every instance reported, none interrupted */
	struct fl_search_obs sum;    /* totals (rates summed), worst p95: what is judged */
	struct fl_lat_ms worst;      /* the instance with the highest p95 */
	uint64_t overloaded, timeouts;  /* summed */
	unsigned inflight;           /* in-flight ceiling asked of each instance (split among
	                                its drivers); 0: none */
	enum fl_verdict verdict;     /* under the search rule (probes: unjudged) */
	int pass;                    /* verdict == pass */
	char why[320];               /* "ok" or what failed, or why not judged */
};

/* Every knob of `frontload run`. */
struct fl_run_config {
	struct fl_search_config search;  /* start, max, growth, SLA, tolerance, steps, and
	                                    the probe, step and final seconds */
	double warmup_s;           /* per step and before the final window (s) */
	double duration_s;         /* measured seconds per --qps rate */
	double fixed_qps[FL_RUN_MAX_FIXED];
	unsigned nfixed;           /* > 0: fixed mode */
	int quick;
	unsigned instances;
	unsigned drivers;          /* driver processes per instance (--drivers) */
	int pin;
	const char *leaf;          /* --leaf list as given, or NULL */
	const char *mock;          /* --mock list as given, or NULL */
	const char *out;           /* --out, or NULL */
	uint64_t seed;
	double rpc_fanout_scale;   /* < 0: the leaf's default */
	int64_t extractors_per_story;  /* < 0: the leaf's default */
	int64_t active_copies;     /* < 0: the leaf's default */
	int64_t active_functions;  /* < 0: the leaf's default (all kept) */
	const char *dispatch;      /* NULL: the leaf's default (flat) */
	double zipf_alpha;         /* < 0: the leaf's default (1) */
	int tls;
	const char *tls_dir;       /* --tls-dir for every child and remote STATS, or NULL */
	int trace;
	int full_finals;           /* --full-finals: no miss-stop rule on final windows */
	const char *leaf_args, *mock_args, *driver_args;
	const char *arrival;       /* the drivers' --arrival: binomial, poisson or fixed */
	const char *draws;         /* the drivers' --draws: common or fresh */
	int batch_means;           /* --batch-means: judge with the p95 interval widened */
	const char *profile;       /* --profile FILE as given, or NULL */
	char profile_path[4096];   /* its absolute path, given to the leaves started */
	const char *driver_ssh;    /* --driver-ssh HOST[=DIR][,...]: drivers 1.. remote, or NULL */
	const char *ssh;           /* --ssh: the ssh command, split on spaces */
	double ready_timeout_s;
	double driver_timeout_s;   /* the driver's --timeout-s (10): bounds a step's drain */
	double clock_bound_ms;     /* remote hosts' clocks may differ from ours by this */
};

/* One driver process of an instance, on pipes for the step protocol. */
struct fl_run_driver {
	struct fl_proc proc;
	uint64_t seed;                   /* its --seed: --seed + instance + d x instances */
	char host[256];                  /* ssh destination it runs on; "": this host */
	char home[1024];                 /* there: the frontload directory (bin/, tls/); "":
	                                    frontload-driver from the remote PATH */
	char json_path[4096];            /* its --json */
	struct fl_clock_sample clock;    /* remote (host set): its clock against ours */
	char clock_err[256];             /* why its clock is unknown, "" */
	char *line;                      /* output not yet a full line */
	size_t line_len, line_cap;
	FILE *jsonl;                     /* every line it wrote, as received */
};

/* One set of mock + leaf + drivers. */
struct fl_run_instance {
	unsigned index;
	struct fl_cpus cpus;             /* its CPU range (all CPUs when not placed) */
	struct fl_cpus leaf_cpus, mock_cpus, driver_cpus;  /* pinned sets; n = 0: unpinned */
	int placed;                      /* pinned to cpus at all */
	struct fl_proc mock, leaf;
	unsigned ndrv;                   /* drivers (--drivers) */
	struct fl_run_driver *drv;       /* ndrv, calloc'd */
	int own_mock, own_leaf;          /* started by frontload (else given by address) */
	char mock_addr[300], leaf_addr[300];
	char leaf_stats_path[4096], mock_stats_path[4096];
	json_t *leaf_stats_pre;          /* leaf stats before the final window */
	json_t *leaf_stats_post;         /* ... after it */
	json_t *leaf_stats_end;          /* at exit (whole run) */
	json_t *mock_stats_end;
	struct fl_clock_sample leaf_clock, mock_clock; /* remote hosts against ours */
	char leaf_remote_err[512], mock_remote_err[512]; /* last STATS failure, "" */
};

enum fl_run_status { FL_RUN_RUNNING, FL_RUN_COMPLETE, FL_RUN_INTERRUPTED, FL_RUN_FAILED };

/* The one run-state. */
struct fl_run {
	struct fl_run_config cfg;
	int argc;
	char **argv;                   /* the command line, for the result */
	char run_id[64];
	char dir[2048];                /* run directory */
	char exe_dir[2048];
	time_t started_wall;
	double t0;                     /* monotonic start (s) */
	struct fl_host_topo topo;
	struct fl_host_info host;
	json_t *build;                 /* build summary (config.json, manifest.json) or NULL */
	struct ssl_ctx_st *stats_tls;  /* client context for remote STATS (TLS), or NULL */
	unsigned ninst;
	struct fl_run_instance *inst;
	struct fl_search search;
	struct fl_run_step *steps;
	size_t nsteps, steps_cap;
	long final_step;               /* index in steps of the final window; -1: none */
	double final_host_cpu_pct;     /* /proc/stat over the final window; < 0 unknown */
	enum fl_run_status status;
	char status_reason[4096];
	int exit_signal;               /* SIGINT/SIGTERM that interrupted the run, or 0 */
	int tty;                       /* stderr is a terminal: progress updated in place */
	int progress_open;             /* a progress line without newline is on screen */
	double progress_at;            /* when the progress line was last drawn */
};

/* "running", "complete", "interrupted", "failed". */
const char *fl_run_status_name(enum fl_run_status s);

/* Seconds on the monotonic clock. */
double fl_run_now(void);

/* Parse one driver control line into o (zeroed first). Returns 0; 1 when the line is the
 * driver's {"error": ...} (err holds its text); -1 when it is not a step result (err). */
int fl_result_parse_obs(const char *line, struct fl_run_obs *o, char *err, size_t errlen);

/* Free what o owns (its drivers' observations too). */
void fl_result_obs_free(struct fl_run_obs *o);

/* Fill o's figures from its o->ndrv drivers' observations (o->drv), the drivers of one
 * instance running one step side by side: rates, counts, errors by kind and backlog
 * summed; the window the shortest; driver_limited and interrupted when any was; the
 * latency figures and the p95 interval from their latency histograms merged exactly
 * (hist_json.h), into o->hist_json too. A driver with no histogram counts only when it
 * measured nothing (stopped before it reported). Returns 0, or -1 (err) when a driver
 * that measured sent no histogram, or one that does not rebuild or does not match its
 * latency count. */
int fl_result_obs_merge(struct fl_run_obs *o, char *err, size_t errlen);

/* Sum st's instances into st->sum, st->worst, overloaded, timeouts and complete. The
 * p95 interval judged is the worst instance's; with batch_means (--batch-means) each
 * instance's is first widened to p95 +- its p95_batch_half_ms where that is wider. */
void fl_result_step_aggregate(struct fl_run_step *st, int batch_means);

/* Build summary from config.json and manifest.json in exe_dir, else in
 * exe_dir/../share/frontload; NULL when neither exists. */
json_t *fl_result_build_summary(const char *exe_dir);

/* Read a JSON file; NULL when missing or unparsable. */
json_t *fl_result_load_json(const char *path);

/* Write result.json and steps.csv into r->dir (temp + rename). Returns 0, or -1 (err). */
int fl_result_write(const struct fl_run *r, char *err, size_t errlen);

#endif
