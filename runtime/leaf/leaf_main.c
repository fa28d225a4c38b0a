/* leaf_main.c: frontload-leaf: flags, startup, the signal loop, drain and shutdown. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/thread.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "cli.h"
#include "clock.h"
#include "codesize.h"
#include "corpus.h"
#include "dispatch.h"
#include "fanout.h"
#include "leaf_io.h"
#include "leaf_stats.h"
#include "leafprofile.h"
#include "libload.h"
#include "memacct.h"
#include "meter.h"
#include "osfile.h"
#include "overheads.h"
#include "paths.h"
#include "pipeline.h"
#include "request_setup.h"
#include "ranker.h"
#include "sampler.h"
#include "session.h"
#include "tls.h"

#define PROG "frontload-leaf"
#define DRAIN_NS 2000000000ull  /* in-flight requests get this long at shutdown */
#define ACL_ENTRIES 4096u       /* stage 2's ACL map size (no flag: a fixed realism knob) */

/* Every knob, as parsed. Field names follow the flags. */
struct leaf_config {
	const char *host;
	uint64_t port;
	const char *port_file;
	int tls;
	const char *tls_dir;
	const char *lib;
	uint64_t io_threads, ranker_threads, fanout_threads;
	const char *mock;
	double rpc_fanout_scale;
	uint64_t rpc_window;
	double rpc_zstd_fraction;
	uint64_t rpc_ping_ms, rpc_timeout_ms, rpc_channels;
	uint64_t inflight_limit, max_queue_ms, stale_ms, sessions_max, session_ttl_ms;
	uint64_t sessions_max_bytes;
	uint64_t active_copies, active_functions, footprint_bytes;
	const char *dispatch;
	double zipf_alpha;
	struct fl_pipeline_knobs pk;
	uint64_t max_frame_bytes, max_output_bytes;
	const char *corpus_dir;
	uint64_t corpus_seed, seed;
	const char *stats_file;
	uint64_t stats_interval_s;
	const char *cpu_clock;
	const char *pmu;
	const char *profile;
	int quiet;
	char *profile_argv[FL_PROFILE_MAX_ARGS];  /* the --profile's flags (owned; the fields
	                                             above may point into them) */
	int profile_argc;
	char profile_file[4096];    /* the default profile applied, when no --profile given */
	char profile_source[1024];  /* where the knobs came from (stats: config.profile_source) */
	struct fl_lib lib_probe;    /* the library, opened to check the default profile's build;
	                               closed once the pipeline holds it */
};

/* Every flag: parsing, --help and the stats "config" echo (keys: name with - as _) all
 * walk this table. The thread counts' defaults depend on the CPUs: leaf_cli fills them. */
#define FL_CLI_OBJ struct leaf_config
static const struct fl_cli_opt leaf_opts[] = {
	FL_OPT_STR("host", host, "ADDR", "127.0.0.1", "address to listen on"),
	FL_OPT_UINT("port", port, 0, 65535, "PORT", "0", "port to listen on; 0 = ephemeral "
		"(see --port-file)"),
	FL_OPT_STR("port-file", port_file, "PATH", NULL, "write the port and a newline here "
		"(atomically) once ready: listening, corpus made, library loaded, fanout channels "
		"started"),
	FL_OPT_FLAG("tls", tls, "serve TLS instead of plain TCP (certificate from --tls-dir, "
		"made if missing)"),
	FL_OPT_STR("tls-dir", tls_dir, "DIR", NULL, "certificate directory: the listener's "
		"certificate with --tls, and the certificate trusted for the mock (default: "
		"<exe>/../share/frontload/tls, else <exe>/tls)"),
	FL_OPT_STR("lib", lib, "PATH", NULL, "extractor library (default: " FL_LIB_NAME
		" beside this program, then ../lib/)"),
	FL_OPT_UINT("io-threads", io_threads, 1, 256, "N", NULL, "IO threads (default: "
		"max(1, CPUs/4))"),
	FL_OPT_UINT("ranker-threads", ranker_threads, 1, 1024, "N", NULL, "RANKER threads "
		"(default: CPUs)"),
	FL_OPT_UINT("fanout-threads", fanout_threads, 1, 256, "N", NULL, "FANOUT threads "
		"(default: max(1, CPUs/4))"),
	FL_OPT_STR("mock", mock, "HOST:PORT", NULL, "the mock service for outbound RPCs, or "
		"\"none\" to run without fanout (required)"),
	FL_OPT_REAL("rpc-fanout-scale", rpc_fanout_scale, 1e-9, 1e6, "X", "0.01", "outbound "
		"calls per request = per-session calls of each method in rpc_dist.json x X, "
		"rounded"),
	FL_OPT_UINT("rpc-window", rpc_window, 1, 65536, "K", "16", "outbound calls of one "
		"request in flight at most"),
	FL_OPT_REAL("rpc-zstd-fraction", rpc_zstd_fraction, 0, 1, "F", "0.5", "share of mock "
		"channels with zstd frames, 0..1"),
	FL_OPT_UINT("rpc-ping-ms", rpc_ping_ms, 1, 3600000, "MS", "200", "keepalive period "
		"of idle mock channels (ms)"),
	FL_OPT_UINT("rpc-timeout-ms", rpc_timeout_ms, 1, 3600000, "MS", "1000", "outbound "
		"call deadline beyond its asked latency (ms)"),
	FL_OPT_UINT("rpc-channels", rpc_channels, 1, 1024, "N", "4", "TLS channels to the "
		"mock per FANOUT thread"),
	FL_OPT_UINT("inflight-limit", inflight_limit, 1, 10000000, "N", "256", "requests "
		"admitted at once; more are answered OVERLOADED"),
	FL_OPT_UINT("max-queue-ms", max_queue_ms, 0, 86400000, "MS", "0", "a request that "
		"waited longer than this in the RANKER queue is shed OVERLOADED before any work "
		"(ms; 0 = no bound but the request's own deadline). Requests that carry a "
		"deadline (the driver's --deadline-ms) are also skipped, DEADLINE_EXCEEDED, "
		"wherever the stages left would end past it. Stats: deadline"),
	FL_OPT_UINT("stale-ms", stale_ms, 0, 86400000, "MS", "10000", "client timestamps "
		"older than this are answered STALE (ms; 0 = no check)"),
	FL_OPT_UINT("sessions-max", sessions_max, 0, 100000000, "N", "100000", "sessions "
		"kept (LRU); 0 = no session state"),
	FL_OPT_BYTES("sessions-max-bytes", sessions_max_bytes, 0, 1ull << 40, "BYTES", "0",
		"cap on the session store's memory: sessions kept = min(--sessions-max, BYTES / "
		"bytes per session, 832 on x86-64); 0 = no cap but --sessions-max. Stats: "
		"sessions.bytes, max_bytes"),
	FL_OPT_UINT("session-ttl-ms", session_ttl_ms, 0, UINT32_MAX, "MS", "600000", "idle "
		"session expiry (ms; 0 = none)"),
	FL_OPT_UINT("active-copies", active_copies, 0, UINT32_MAX, "N", "0", "footprint "
		"knob: copies of each extractor variant in the plan (0 = all)"),
	FL_PLAN_CLI_OPTS,
	FL_PIPELINE_CLI_OPTS,
	FL_OPT_UINT("max-frame-bytes", max_frame_bytes, 64, UINT32_MAX, "BYTES", "33554432",
		"largest request frame payload, also the cap on a decompressed request and on "
		"mock replies"),
	FL_OPT_UINT("max-output-bytes", max_output_bytes, 1, 1ull << 40, "BYTES", "67108864",
		"unsent reply bytes per connection before the client is dropped as too slow"),
	FL_OPT_STR("corpus-dir", corpus_dir, "DIR", NULL, "reply bytes from this directory's "
		"files (default: a generated 64 MiB corpus)"),
	FL_OPT_UINT("corpus-seed", corpus_seed, 0, UINT64_MAX, "S", "1", "seed of the "
		"generated corpus"),
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "seed of the plan shuffle, model "
		"weights, overheads and per-request fanout streams"),
	FL_OPT_STR("stats-file", stats_file, "PATH", NULL, "write stats JSON here (temp file "
		"+ rename) every --stats-interval-s, on SIGUSR1 and at exit"),
	FL_OPT_UINT("stats-interval-s", stats_interval_s, 0, 86400, "S", "0", "stats period "
		"(s; 0 = only on SIGUSR1 and at exit)"),
	FL_OPT_STR("cpu-clock", cpu_clock, "auto|perf-mmap|clock_gettime", "auto", "per-thread "
		"CPU clock of the stage timing (ns, read per stage per request on RANKER "
		"threads): perf-mmap reads the perf task-clock page with rdtsc, no system call; "
		"clock_gettime is CLOCK_THREAD_CPUTIME_ID; auto takes perf-mmap where the kernel "
		"offers it (cap_user_time), else clock_gettime. perf-mmap where it is unavailable "
		"is a startup error naming the reason. Stats: cpu_clock"),
	FL_OPT_STR("pmu", pmu, "on|off", "on", "count hardware events per RANKER, IO and "
		"FANOUT thread from its start (perf_event_open groups: instructions, cycles, L1i "
		"and iTLB misses, branches, branch misses, front-end stalled cycles; about 7 "
		"descriptors per thread, nothing per request). A host without counters runs "
		"anyway and says why. Stats: pmu"),
	FL_OPT_STR("profile", profile, "FILE|NAME|none", NULL, "workload knobs from a profile "
		"(JSON, leafprofile.h; frontload-measure calibrate --leaf writes one; NAME = the "
		"shipped data/profile-NAME-KIND.json fitted on this host's kind of CPU, KIND from "
		"/proc/cpuinfo's model name as in intel-xeon or amd-epyc, else "
		"data/profile-NAME.json): its leaf_args are applied before this command "
		"line, whose flags win. Flags that place the process (ports, files, --mock, --lib, "
		"--tls-dir) are refused in a profile. Without --profile the shipped default "
		"profile (as --profile default) applies when the library is the build it was "
		"calibrated for (same functions, variants, copies and seed: the default build, "
		"configure --copies=1000), "
		"else none does; none = the built-in defaults shown here. Stats: config.profile, "
		"config.profile_source and config.profile_args"),
	FL_OPT_FLAG("quiet", quiet, "print nothing at startup and exit"),
};
#undef FL_CLI_OBJ
#define NOPTS (sizeof(leaf_opts) / sizeof(leaf_opts[0]))

static const char usage_head[] =
"usage: " PROG " --mock HOST:PORT|none [options]\n"
"\n"
"The service under test of frontload: a ranking leaf modelled on DCPerf FeedSim. It serves\n"
"LeafRequest frames (frontload.proto, framing in wire.h) over TCP or TLS and runs each\n"
"request through its stages, charging thread CPU and wall time to each:\n"
"  1 decode     zstd (when flagged) and protobuf-c unpack            (RANKER)\n"
"  2 overheads  request key, MurmurHash2, ACL, inflight, staleness   (IO admits, RANKER)\n"
"  3 extract    generated extractors from the library, via a plan   (RANKER)\n"
"  4 stories    story processors: score, filter, top-K, blend, serialize (RANKER)\n"
"  5 rank       DLRM-style model (OpenBLAS)                          (RANKER)\n"
"  6 fanout     windowed TLS calls to the mock                       (FANOUT)\n"
"  7 compress, reply   reply bytes from the corpus, zstd, LeafReply  (RANKER, IO)\n"
"Outbound calls, their sizes and latencies come from runtime/data/rpc_dist.json, reply\n"
"sizes from feed_aggregator_resp_sizes.json (DCPerf FeedSim v2 production tables;\n"
"installed under <prefix>/share/frontload/data).\n"
"\n"
"options (defaults in brackets; CPUs = %ld here):\n";

static const char usage_tail[] =
"\n"
"signals: SIGTERM/SIGINT stop accepting (connections; new requests are answered\n"
"OVERLOADED), drain in-flight requests (up to 2 s), write the final stats and exit 0;\n"
"SIGUSR1 writes the stats now. A STATS frame on the port (wire.h) takes a snapshot\n"
"too: written to --stats-file and sent back as the reply (compact JSON), so a remote\n"
"`frontload run --leaf` reads the stats without a shared file; snapshot_wall_ns is\n"
"this host's realtime clock when it was taken (its clock check).\n"
"stats (--stats-file, JSON; counts since start, times in ns): requests (shed_unread:\n"
"those shed on their header, DEADLINE_EXCEEDED or OVERLOADED, answered before the\n"
"payload was read and the payload dropped, never copied), frames, connections,\n"
"bytes_in, bytes_out, bytes_skipped (payload bytes of shed_unread requests),\n"
"bytes_skipped_kernel (of those, bytes the kernel dropped: recv with MSG_TRUNC on plain\n"
"TCP; with --tls they are decrypted and drained), stages {<stage>: cpu_ns, wall_ns},\n"
"cpu_share (each stage's fraction of the stages' cpu_ns, 0..1; null before any CPU was\n"
"measured), pools {io, ranker, fanout: threads, cpu_ns (null when cpu_unread, the\n"
"threads whose clock could not be read, is not 0)}, fanout, sessions, overheads, and\n"
"  deadline   work skipped because it could not meet its deadline: with_deadline (jobs\n"
"             taken that carried one), skipped {admit, queue, extract, rank, fanout:\n"
"             {expired (deadline passed), would_miss (the stages left, at a fast recent\n"
"             wall time, end past it)}}, skipped_total, queue_wait_shed (waited over\n"
"             --max-queue-ms: OVERLOADED), probes (would-miss verdicts let through, one\n"
"             in 8 in a row, so a stale estimate cannot shut the leaf out), max_queue_ms,\n"
"             estimate_ms {<stage>: running 25th percentile of its wall ms over OK\n"
"             requests; null before one finished}.\n"
"  ready_ms   ms from exec until listening with library, corpus, model and fanout\n"
"             channels ready (from /proc/self/stat's start time: +- one clock tick,\n"
"             10 ms at CLK_TCK 100); null when /proc cannot be read.\n"
"  cpu_clock  the stage clock of the RANKER threads: requested, method (perf-mmap or\n"
"             clock_gettime), fast_path_unavailable (why not perf-mmap, null when in\n"
"             use), threads per method. IO and FANOUT threads time no stage; pool\n"
"             cpu_ns is always read with clock_gettime from another thread.\n"
"  pmu        enabled, supported, why, user_only; per pool (ranker, io, fanout) and\n"
"             total: threads, threads_counted, instructions, cycles, l1i_misses,\n"
"             itlb_misses, branches, branch_misses, stalled_cycles_frontend,\n"
"             topdown_slots, topdown_fe (counts, scaled for multiplexing), ipc,\n"
"             l1i_mpki, itlb_mpki, branch_mpki (per 1000 instructions),\n"
"             branch_miss_pct, frontend_stall_cycle_ratio (stalled-cycles-frontend\n"
"             / cycles, 0..1: a share of cycles, not top-down slots),\n"
"             mux_scale (largest enabled/running of any thread, 1 = never\n"
"             multiplexed), enabled_ns and running_ns per event. What cannot be\n"
"             counted is the string \"unsupported: <why>\", never a number.\n"
"  memory     rss_bytes, rss_anon_bytes, rss_file_bytes (/proc/self/status); owners\n"
"             {corpus_bytes, dlrm_bytes, sessions_bytes, ranker_scratch_bytes,\n"
"             fanout_scratch_bytes, conn_buffers_bytes, tls_heap_bytes}; allocator\n"
"             {name (jemalloc or glibc: configure --malloc), version, tuning,\n"
"             why_default, scratch_keep_bytes, arena_max, arenas; jemalloc:\n"
"             dirty_decay_ms, background_thread, malloc_conf (built in: 8-page slabs\n"
"             for the 4 and 8 KiB classes; MALLOC_CONF overrides it, FL_MALLOC=default\n"
"             does not), regions_per_slab_4KiB, regions_per_slab_8KiB (as jemalloc\n"
"             laid them out), allocated_bytes, active_bytes,\n"
"             resident_bytes, mapped_bytes, retained_bytes, dirty_bytes (freed, not\n"
"             yet purged), purged_bytes (since start); glibc: mmap_threshold_bytes,\n"
"             heap_bytes, heap_in_use_bytes, heap_free_bytes, top_releasable_bytes,\n"
"             mmapped_bytes, mmapped_chunks} (null: not measured). The allocator is\n"
"             set up for reuse with a plateau (jemalloc: freed pages purged after\n"
"             about 10 s by a background thread; glibc: mmap threshold fixed at 1 MiB,\n"
"             2 arenas; both: scratch over 1 MiB freed after use); FL_MALLOC=default\n"
"             in the environment keeps the allocator's defaults and grow-only scratch\n"
"             (tuning \"allocator default\").\n"
"exit status: 0 after a clean stop, 2 on a bad flag, 1 when startup fails (library,\n"
"data file, certificate, address or port in use, --cpu-clock perf-mmap unavailable).\n";

/* The whole server: everything main builds, in build order, and what the stats read. */
struct leaf_server {
	struct leaf_config cfg;
	char tls_dir[4096];
	char mock_host[256];
	uint16_t mock_port;
	struct fl_request_base base;    /* reply sizes, library, plan (request_setup.h) */
	struct fl_rpc_dist dist;
	struct fl_corpus corpus;
	int have_corpus;
	struct fl_session_store *sessions;
	struct fl_overheads *ovh;
	struct fl_pipeline *pipeline;
	SSL_CTX *tls_ctx;
	struct fl_fanout *fanout;
	struct fl_fanout_stats fanout_final;
	struct fl_ranker *ranker;
	struct fl_io *io;
	struct fl_meter_config meter;     /* --cpu-clock and --pmu, for every pool */
	struct fl_meter_sum fanout_meter_final; /* FANOUT meters before fl_fanout_free */
	json_t *config_json;
	struct fl_leaf_stats_src stats;
};

/* Startup failure: pool threads may be running (a late one), so leave without running
 * library destructors under them. */
#define die(code, ...) fl_die(PROG, FL_DIE_FAST, code, __VA_ARGS__)

/* The flags with the thread counts' defaults for ncpu CPUs filled in: a copy of leaf_opts
 * in opts (NOPTS entries), the defaults' text in defs. */
static void leaf_cli(struct fl_cli *cli, struct fl_cli_opt *opts, char defs[2][24], long ncpu)
{
	memcpy(opts, leaf_opts, sizeof(leaf_opts));
	long quarter = ncpu / 4 > 1 ? ncpu / 4 : 1;
	snprintf(defs[0], sizeof(defs[0]), "%ld", quarter < 256 ? quarter : 256);
	snprintf(defs[1], sizeof(defs[1]), "%ld", ncpu < 1024 ? ncpu : 1024);
	for (size_t i = 0; i < NOPTS; i++) {
		if (strcmp(opts[i].name, "io-threads") == 0 ||
		    strcmp(opts[i].name, "fanout-threads") == 0)
			opts[i].def = defs[0];
		else if (strcmp(opts[i].name, "ranker-threads") == 0)
			opts[i].def = defs[1];
	}
	*cli = (struct fl_cli){ .opts = opts, .nopts = NOPTS };
}

static void usage(FILE *fp, const struct fl_cli *cli, long ncpu)
{
	fprintf(fp, usage_head, ncpu);
	fl_cli_help(fp, cli);
	fputs(usage_tail, fp);
}

/* Without --profile: the shipped default profile when the library (--lib, else the one
 * beside this program) is the build it was calibrated for. The library stays open in
 * c->lib_probe until the pipeline's own dlopen shares it. Fills c->profile_file when it
 * applies and c->profile_source either way. */
static void config_default_profile(struct leaf_config *c)
{
	char err[512], why[512];

	if (fl_profile_resolve("default", c->profile_file, sizeof(c->profile_file), err,
	    sizeof(err)) != 0) {
		c->profile_file[0] = '\0';
		snprintf(c->profile_source, sizeof(c->profile_source), "none: %s",
			err);
		return;
	}
	if (fl_lib_open(&c->lib_probe, c->lib, err, sizeof(err)) != 0)
		die(1, "%s", err);
	int fits = fl_profile_fits_build(c->profile_file, c->lib_probe.build_info(), why,
		sizeof(why));
	const char *base = strrchr(c->profile_file, '/');
	if (fits == 1) {
		char cpu[256];
		int on_cpu = fl_profile_fits_cpu(c->profile_file, cpu, sizeof(cpu));

		snprintf(c->profile_source, sizeof(c->profile_source), "default: %.200s, the "
			"shipped profile calibrated for this library's build, %s%s", base ? base + 1 :
			c->profile_file, cpu, on_cpu == 1 ? "" : " (its CPU shares may miss here: "
			"frontload-measure calibrate --leaf fits this host)");
		return;
	}
	snprintf(c->profile_source, sizeof(c->profile_source), "none: the shipped %.200s does "
		"not fit this library (%s)", base ? base + 1 : c->profile_file, why);
	c->profile_file[0] = '\0';
}

/* Defaults, then argv into c. --help prints the usage and exits 0, a bad flag exits 2. */
static void config_parse(struct leaf_config *c, int argc, char **argv, long ncpu)
{
	struct fl_cli_opt opts[NOPTS];
	struct fl_cli cli;
	char defs[2][24], err[512];
	const char *given = fl_profile_given(argc, argv);
	char **argv_auto = NULL;

	leaf_cli(&cli, opts, defs, ncpu);
	memset(c, 0, sizeof(*c));
	if (given == NULL) {
		/* A first parse finds --lib (and answers --help, refuses a bad flag). */
		int rc = fl_cli_parse(&cli, argc, argv, c, err, sizeof(err));
		if (rc == FL_CLI_HELP) {
			usage(stdout, &cli, ncpu);
			exit(0);
		}
		if (rc != 0)
			die(2, "%s (see --help)", err);
		config_default_profile(c);
		if (c->profile_file[0] != '\0') {
			argv_auto = calloc((size_t)argc + 3, sizeof(*argv_auto));
			if (argv_auto == NULL)
				die(1, "out of memory");
			memcpy(argv_auto, argv, (size_t)argc * sizeof(*argv));
			argv_auto[argc] = "--profile";
			argv_auto[argc + 1] = c->profile_file;
			argv = argv_auto;
			argc += 2;
		}
	} else {
		char file[4096];

		if (strcmp(given, "none") == 0)
			snprintf(c->profile_source, sizeof(c->profile_source), "none: --profile none");
		else if (fl_profile_resolve(given, file, sizeof(file), err, sizeof(err)) == 0)
			snprintf(c->profile_source, sizeof(c->profile_source), "command line: "
				"--profile %.900s", file);
		else  /* the splice below says what is wrong */
			snprintf(c->profile_source, sizeof(c->profile_source), "command line: "
				"--profile");
	}
	/* The profile's flags go first, so the command line's win. The footprint in functions
	 * or in bytes is one knob given two ways (the plan refuses both), so either on the
	 * command line replaces the profile's; --active-copies composes with them (the draw's
	 * pool), so it does not. */
	static const char *const footprint[] = { "active-functions", "footprint-bytes", NULL };
	char **av = NULL;
	int ac = 0, dropped = 0;
	if (fl_profile_splice(argc, argv, footprint, c->profile_argv, &c->profile_argc,
	    &dropped, &av, &ac, err, sizeof(err)) != 0)
		die(2, "%s", err);
	if (dropped) {
		size_t l = strlen(c->profile_source);
		snprintf(c->profile_source + l, sizeof(c->profile_source) - l, "; its footprint "
			"(%d flag%s) left to the command line's", dropped, dropped == 1 ? "" : "s");
	}
	int rc = fl_cli_parse(&cli, av ? ac : argc, av ? av : argv, c, err, sizeof(err));
	free(av);  /* the strings stay: c points into them */
	if (rc == FL_CLI_HELP) {
		usage(stdout, &cli, ncpu);
		exit(0);
	}
	if (rc != 0)
		die(2, "%s (see --help%s)", err, c->profile_argc ? "; the --profile's flags are "
			"parsed before the command line's" : "");
	/* argv_auto's strings are argv's and c->profile_file: c may point into them. */
	free(argv_auto);
}

/* --mock HOST:PORT or none. */
static void config_mock(struct leaf_server *s)
{
	const char *m = s->cfg.mock;
	if (!m)
		die(2, "--mock is required: HOST:PORT of frontload-mock, or none");
	if (strcmp(m, "none") == 0)
		return;
	if (fl_cli_hostport(m, s->mock_host, sizeof(s->mock_host), &s->mock_port) != 0)
		die(2, "--mock: expected HOST:PORT (port 1..65535) or none, got \"%s\"", m);
}

/* --cpu-clock and --pmu into s->meter. A perf-mmap clock is tried here once, on the main
 * thread, so that its absence stops the leaf before the library and corpus are loaded
 * (every RANKER thread still opens, and checks, its own). */
static void config_meter(struct leaf_server *s)
{
	static const struct {
		const char *name;
		enum fl_cputime_method m;
	} clocks[] = {
		{ "auto", FL_CPUTIME_AUTO },
		{ "perf-mmap", FL_CPUTIME_PERF_MMAP },
		{ "clock_gettime", FL_CPUTIME_CLOCK_GETTIME },
	};
	const char *c = s->cfg.cpu_clock, *p = s->cfg.pmu;
	size_t i = 0;

	while (i < sizeof(clocks) / sizeof(clocks[0]) && strcmp(c, clocks[i].name) != 0)
		i++;
	if (i == sizeof(clocks) / sizeof(clocks[0]))
		die(2, "--cpu-clock: expected auto, perf-mmap or clock_gettime, got \"%s\"", c);
	s->meter.clock = clocks[i].m;
	if (strcmp(p, "on") != 0 && strcmp(p, "off") != 0)
		die(2, "--pmu: expected on or off, got \"%s\"", p);
	s->meter.pmu = strcmp(p, "on") == 0;
	if (s->meter.clock == FL_CPUTIME_PERF_MMAP) {
		struct fl_cputime probe;
		char why[256];
		if (fl_cputime_open(&probe, FL_CPUTIME_PERF_MMAP, why, sizeof(why)) != 0)
			die(1, "--cpu-clock perf-mmap: the fast clock is unavailable here: %s "
				"(use auto or clock_gettime)", why);
		fl_cputime_close(&probe);
	}
}

/* Every knob into the stats "config" object, from the same table as the flags. */
static json_t *config_json(struct leaf_server *s)
{
	json_t *o = json_object();
	for (size_t i = 0; i < NOPTS; i++) {
		const struct fl_cli_opt *op = &leaf_opts[i];
		char key[64];
		snprintf(key, sizeof(key), "%s", op->name);
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		json_t *v = NULL;
		switch (op->type) {
		case FL_CLI_STR:
			v = fl_cli_str(op, &s->cfg) ? json_string(fl_cli_str(op, &s->cfg)) :
				json_null();
			break;
		case FL_CLI_UINT:
		case FL_CLI_BYTES: v = json_integer((json_int_t)fl_cli_uint(op, &s->cfg)); break;
		case FL_CLI_REAL: v = json_real(fl_cli_real(op, &s->cfg)); break;
		case FL_CLI_FLAG: v = json_boolean(fl_cli_uint(op, &s->cfg)); break;
		}
		json_object_set_new(o, key, v);
	}
	/* What the defaults resolved to. */
	json_t *pa = json_array();
	for (int i = 0; i < s->cfg.profile_argc; i++)
		json_array_append_new(pa, json_string(s->cfg.profile_argv[i]));
	json_object_set_new(o, "profile_args", pa);
	json_object_set_new(o, "profile_source", json_string(s->cfg.profile_source));
	json_object_set_new(o, "lib_path", json_string(s->base.lib.path));
	json_object_set_new(o, "port_bound", json_integer(fl_io_port(s->io)));
	json_object_set_new(o, "plan_functions",
		json_integer((json_int_t)fl_plan_footprint(&s->base.plan)));
	json_object_set_new(o, "library_functions", json_integer((json_int_t)s->base.lib.n));
	json_object_set_new(o, "plan", json_loads(s->base.plan_json, 0, NULL));
	json_object_set_new(o, "corpus", json_string(s->corpus.source));
	json_object_set_new(o, "corpus_bytes", json_integer((json_int_t)s->corpus.len));
	return o;
}

/* Write text to path through a temp file and rename (readers never see half of it). */
static int write_atomic(const char *path, const char *text)
{
	return fl_write_file_atomic(path, text, strlen(text), NULL, 0);
}

/* The scratch cap of the pools' configs: 0 (grow-only) when the tuning is off. */
static size_t keep_bytes(void)
{
	size_t k = fl_mem_keep_bytes();

	return k == SIZE_MAX ? 0 : k;
}

/* An IO thread holds a STATS frame: wake main's sigtimedwait as SIGUSR1 does. */
static void leaf_stats_wanted(void *arg)
{
	(void)arg;
	kill(getpid(), SIGUSR1);
}

/* The corpus, made on its own thread while main opens the library: the two are independent
 * and the largest parts of a start (here, opening the --copies=1000 library and reading its
 * symbol sizes for the plan report took 0.36-0.41 s; the 64 MB corpus is most of a
 * --copies=2 start's 0.47 s), so on two cores they overlap. */
struct corpus_job {
	const struct leaf_config *cfg;
	struct fl_corpus *corpus;
	int rc;
	char err[1024];
};

static void *corpus_make(void *arg)
{
	struct corpus_job *j = arg;

	j->rc = j->cfg->corpus_dir ?
		fl_corpus_load_dir(j->corpus, j->cfg->corpus_dir, j->err, sizeof(j->err)) :
		fl_corpus_generate(j->corpus, j->cfg->corpus_seed, FL_CORPUS_DEFAULT_BYTES,
			j->err, sizeof(j->err));
	return NULL;
}

/* Load tables, library, corpus; build every module; bind. Exits 1 on any failure. */
static void leaf_start(struct leaf_server *s)
{
	struct leaf_config *c = &s->cfg;
	char err[1024], path[4096];
	struct corpus_job cj = { .cfg = c, .corpus = &s->corpus };
	pthread_t corpus_thread;

	if (fl_data_path("rpc_dist.json", path, sizeof(path), err, sizeof(err)) != 0 ||
	    fl_rpc_dist_load(path, &s->dist, err, sizeof(err)) != 0)
		die(1, "%s", err);
	int threaded = pthread_create(&corpus_thread, NULL, corpus_make, &cj) == 0;
	if (!threaded)
		corpus_make(&cj);
	if (fl_request_base_open(&s->base, c->lib, &(struct fl_plan_knobs){ c->seed,
	    c->active_copies, c->active_functions, c->footprint_bytes, c->dispatch,
	    c->zipf_alpha }, 1, err, sizeof(err)) != 0)
		die(1, "%s", err);
	fl_lib_close(&c->lib_probe);  /* the pipeline's dlopen holds the library now */
	if (threaded)
		pthread_join(corpus_thread, NULL);
	if (cj.rc != 0)
		die(1, "%s", cj.err);
	s->have_corpus = 1;

	uint64_t nsess = c->sessions_max;
	if (c->sessions_max_bytes && nsess > c->sessions_max_bytes / fl_session_node_bytes())
		nsess = c->sessions_max_bytes / fl_session_node_bytes();
	if (c->sessions_max && c->sessions_max_bytes && nsess == 0)
		die(2, "--sessions-max-bytes %llu holds no session (%zu bytes each)",
			(unsigned long long)c->sessions_max_bytes, fl_session_node_bytes());
	if (nsess) {
		s->sessions = fl_session_store_new(nsess, c->session_ttl_ms);
		if (!s->sessions)
			die(1, "sessions: cannot make a store of %llu", (unsigned long long)nsess);
	}
	struct fl_overheads_config oc = {
		.inflight_limit = (uint32_t)c->inflight_limit,
		.stale_ns = c->stale_ms * 1000000ull,
		.acl_entries = ACL_ENTRIES,
		.seed = c->seed,
	};
	if (!(s->ovh = fl_overheads_new(&oc, err, sizeof(err))))
		die(1, "overheads: %s", err);

	struct fl_pipeline_config pc;
	fl_pipeline_config_init(&pc, &s->base, &c->pk, c->seed);
	pc.corpus = &s->corpus;
	pc.sessions = s->sessions;
	pc.max_request_bytes = (uint32_t)c->max_frame_bytes;
	pc.scratch_keep_bytes = keep_bytes();
	if (!(s->pipeline = fl_pipeline_new(&pc, err, sizeof(err))))
		die(1, "pipeline: %s", err);

	if (c->tls_dir)
		snprintf(s->tls_dir, sizeof(s->tls_dir), "%s", c->tls_dir);
	else if (fl_tls_default_dir(s->tls_dir, sizeof(s->tls_dir), err, sizeof(err)) != 0)
		die(1, "tls: %s", err);
	c->tls_dir = s->tls_dir;
	if (c->tls) {
		if (fl_tls_ensure_cert(s->tls_dir, err, sizeof(err)) != 0 ||
		    !(s->tls_ctx = fl_tls_server_ctx(s->tls_dir, err, sizeof(err))))
			die(1, "tls: %s", err);
	}

	if (s->mock_port) {
		struct fl_fanout_config fc = {
			.host = s->mock_host,
			.port = s->mock_port,
			.tls_dir = s->tls_dir,
			.threads = (unsigned)c->fanout_threads,
			.channels_per_thread = (unsigned)c->rpc_channels,
			.window = (unsigned)c->rpc_window,
			.scale = c->rpc_fanout_scale,
			.zstd_fraction = c->rpc_zstd_fraction,
			.ping_ms = (uint32_t)c->rpc_ping_ms,
			.timeout_ms = (uint32_t)c->rpc_timeout_ms,
			.max_reply_bytes = (uint32_t)c->max_frame_bytes,
			.dist = &s->dist,
			.corpus = &s->corpus,
			.seed = c->seed,
			.meter = &s->meter,
			.scratch_keep_bytes = keep_bytes(),
		};
		if (!(s->fanout = fl_fanout_new(&fc, err, sizeof(err))))
			die(1, "fanout: %s", err);
	}

	struct fl_ranker_config rc2 = {
		.pipeline = s->pipeline,
		.ovh = s->ovh,
		.fanout = s->fanout,
		.threads = (unsigned)c->ranker_threads,
		/* Every queued job was admitted, so the inflight limit bounds the queue. */
		.queue_cap = (unsigned)c->inflight_limit,
		.max_queue_ns = c->max_queue_ms * 1000000ull,
		.seed = c->seed,
		.meter = &s->meter,
	};
	if (!(s->ranker = fl_ranker_new(&rc2, err, sizeof(err))))
		die(1, "%s", err);

	struct fl_io_config ic = {
		.host = c->host,
		.port = (uint16_t)c->port,
		.threads = (unsigned)c->io_threads,
		.tls = s->tls_ctx,
		.max_frame_bytes = (uint32_t)c->max_frame_bytes,
		.max_output_bytes = (size_t)c->max_output_bytes,
		.ovh = s->ovh,
		.ranker = s->ranker,
		.meter = &s->meter,
		.stats_wanted = leaf_stats_wanted,
	};
	if (!(s->io = fl_io_new(&ic, err, sizeof(err))))
		die(1, "%s", err);
	if (fl_io_start(s->io, err, sizeof(err)) != 0)
		die(1, "%s", err);

	s->config_json = config_json(s);
	s->stats = (struct fl_leaf_stats_src){
		.start_ns = fl_mono_ns(),
		.config = s->config_json,
		.io = s->io,
		.ranker = s->ranker,
		.fanout = s->fanout,
		.fanout_threads = s->fanout ? (unsigned)c->fanout_threads : 0,
		.fanout_scale = c->rpc_fanout_scale,
		.dist = &s->dist,
		.sessions = s->sessions,
		.ovh = s->ovh,
		.meter = &s->meter,
		.corpus = &s->corpus,
		.model_bytes = fl_pipeline_model_bytes(s->pipeline),
		.ready_ms = -1,  /* set once listening (main) */
	};
}

/* Milliseconds since this process was exec'd: CLOCK_BOOTTIME now minus /proc/self/stat's
 * starttime (field 22, clock ticks since boot, so the figure has the tick's resolution,
 * 10 ms at CLK_TCK 100). Includes the dynamic loader and everything before main. -1 when
 * /proc cannot be read. */
static double leaf_exec_age_ms(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');  /* the command name may hold spaces and parentheses */
	unsigned long long start = 0;
	long tck = sysconf(_SC_CLK_TCK);
	/* After ")": state is field 3, starttime field 22. */
	if (p == NULL || tck <= 0 || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		"%*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &start) != 1)
		return -1;
	uint64_t now = fl_clock_ns(CLOCK_BOOTTIME);
	double age = (double)now / 1e6 - (double)start * 1e3 / (double)tck;
	return now > 0 && age >= 0 ? age : -1;
}

static void leaf_banner(struct leaf_server *s)
{
	struct leaf_config *c = &s->cfg;
	printf(PROG ": listening on %s port %u (%s), stats %s\n", c->host,
		(unsigned)fl_io_port(s->io), c->tls ? "TLS" : "plain TCP",
		c->stats_file ? c->stats_file : "off");
	printf("  library:   %s\n", s->base.lib.path);
	printf("  profile:   %s%s%s\n", c->profile && strcmp(c->profile, "none") ? c->profile :
		"none", " -- ", c->profile_source);
	printf("  footprint: %zu functions in the plan of %zu in the library (%u of %u copies "
		"per variant)\n", fl_plan_footprint(&s->base.plan), s->base.lib.n, s->base.plan.active_copies,
		s->base.plan.copies);
	printf("  plan:      %s\n", s->base.plan_json);
	printf("  corpus:    %s, %zu bytes\n", s->corpus.source, s->corpus.len);
	if (s->stats.ready_ms >= 0)
		printf("  ready:     %.0f ms after exec (+- 1 clock tick)\n", s->stats.ready_ms);
	else
		printf("  ready:     unknown (/proc/self/stat unreadable)\n");
	printf("  pools:     io %llu, ranker %llu, ", (unsigned long long)c->io_threads,
		(unsigned long long)c->ranker_threads);
	if (s->fanout)
		printf("fanout %llu x %llu channels to %s:%u\n",
			(unsigned long long)c->fanout_threads,
			(unsigned long long)c->rpc_channels,
			s->mock_host, (unsigned)s->mock_port);
	else
		printf("fanout off (--mock none)\n");
	printf("  request:   %llu extractor calls per story, up to %llu stories, inflight "
		"limit %llu\n", (unsigned long long)c->pk.extractors_per_story,
		(unsigned long long)c->pk.max_stories, (unsigned long long)c->inflight_limit);

	struct fl_fanout_expect e;
	fl_rpc_expect(&s->dist, c->rpc_fanout_scale, &e);
	printf("  fanout:    scale %g: %u calls, %.0f request bytes, %.0f response bytes per "
		"request (expected)%s\n", c->rpc_fanout_scale, e.calls, e.req_bytes,
		e.resp_bytes, s->fanout ? "" : ", not issued");
	printf("  calls per request by method:");
	int any = 0;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned n = fl_rpc_calls(&s->dist, i, c->rpc_fanout_scale);
		if (n) {
			printf(" %s %u", s->dist.out[i].name, n);
			any = 1;
		}
	}
	printf("%s\n", any ? "" : " none at this scale");
	fflush(stdout);
}

/* One snapshot: into the stats file (if any) and to every STATS frame claimed before it
 * was taken (leaf_io.h), so a remote reader gets exactly what the file holds. */
static void leaf_write_stats(struct leaf_server *s)
{
	char err[512];

	unsigned asked = fl_io_stats_claim(s->io);
	if (asked == 0 && s->cfg.stats_file == NULL)
		return;
	json_t *root = fl_leaf_stats_json(&s->stats);
	if (root == NULL)
		fprintf(stderr, PROG ": stats: out of memory\n");
	else if (s->cfg.stats_file &&
	    fl_leaf_stats_write_json(root, s->cfg.stats_file, err, sizeof(err)) != 0)
		fprintf(stderr, PROG ": %s\n", err);
	if (asked > 0) {
		char *text = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10)) :
			NULL;
		fl_io_stats_answer(s->io, text, text ? strlen(text) : 0);
		free(text);
	}
	json_decref(root);
}

/* Wait for signals; write stats every interval. Returns on SIGTERM or SIGINT. */
static void leaf_wait(struct leaf_server *s, const sigset_t *sigs)
{
	uint64_t period = s->cfg.stats_interval_s * 1000000000ull;
	uint64_t next = period ? fl_mono_ns() + period : UINT64_MAX;

	for (;;) {
		uint64_t now = fl_mono_ns(), wait = 1000000000ull;
		if (next != UINT64_MAX)
			wait = next > now ? (next - now < wait ? next - now : wait) : 0;
		struct timespec ts = {
			(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull),
		};
		int sig = sigtimedwait(sigs, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			return;
		if (sig == SIGUSR1)
			leaf_write_stats(s);
		now = fl_mono_ns();
		if (now >= next) {
			leaf_write_stats(s);
			next += period;
			if (next <= now)
				next = now + period;
		}
	}
}

/* Stop accepting, let in-flight requests finish (up to DRAIN_NS), then take the pools
 * down in dependency order: fanout (its failed calls come back through the RANKER queue),
 * RANKER (finishes what is queued), IO (drops what it can no longer send). */
static void leaf_stop(struct leaf_server *s)
{
	fl_io_stop_accepting(s->io);
	uint64_t deadline = fl_mono_ns() + DRAIN_NS;
	while (fl_mono_ns() < deadline) {
		struct fl_overheads_stats os;
		fl_overheads_stats(s->ovh, &os);
		if (os.inflight == 0 && fl_io_pending(s->io) == 0)
			break;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	if (s->fanout) {
		fl_ranker_detach_fanout(s->ranker);
		fl_fanout_stats(s->fanout, &s->fanout_final);
		fl_meter_sum_init(&s->fanout_meter_final);
		fl_fanout_meters(s->fanout, &s->fanout_meter_final);
		s->stats.fanout = NULL;
		s->stats.fanout_final = &s->fanout_final;
		s->stats.fanout_meter_final = &s->fanout_meter_final;
		fl_fanout_free(s->fanout);
		s->fanout = NULL;
	}
	fl_ranker_stop(s->ranker);
	fl_io_stop(s->io);
}

static void leaf_free(struct leaf_server *s)
{
	fl_io_free(s->io);
	fl_ranker_free(s->ranker);
	if (s->fanout)
		fl_fanout_free(s->fanout);
	if (s->tls_ctx)
		SSL_CTX_free(s->tls_ctx);
	if (s->pipeline)
		fl_pipeline_free(s->pipeline);
	if (s->ovh)
		fl_overheads_free(s->ovh);
	if (s->sessions)
		fl_session_store_free(s->sessions);
	if (s->have_corpus)
		fl_corpus_free(&s->corpus);
	fl_request_base_close(&s->base);
	json_decref(s->config_json);
	fl_profile_args_free(s->cfg.profile_argv, s->cfg.profile_argc);
}

int main(int argc, char **argv)
{
	static struct leaf_server server;  /* the one server; static: it is large */
	struct leaf_server *s = &server;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;

	/* Before any thread or large allocation (memacct.h), and before OpenSSL allocates. */
	fl_mem_tune();
	fl_tls_count_memory();
	config_parse(&s->cfg, argc, argv, ncpu);
	config_mock(s);
	config_meter(s);

	/* Signals are taken by sigtimedwait in main only: block them before any thread
	 * exists so every thread inherits the mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0)
		die(1, "libevent has no pthreads support");

	leaf_start(s);
	s->stats.ready_ms = leaf_exec_age_ms();  /* listening, everything loaded */
	if (!s->cfg.quiet)
		leaf_banner(s);
	if (s->cfg.port_file) {
		char line[16];
		snprintf(line, sizeof(line), "%u\n", (unsigned)fl_io_port(s->io));
		if (write_atomic(s->cfg.port_file, line) != 0)
			die(1, "cannot write --port-file %s: %s", s->cfg.port_file,
				strerror(errno));
	}

	leaf_wait(s, &sigs);
	leaf_stop(s);
	leaf_write_stats(s);
	if (!s->cfg.quiet) {
		struct fl_io_stats st;
		fl_io_stats(s->io, &st);
		printf(PROG ": stopped: %llu requests, %llu replied (%llu ok, %llu overloaded, "
			"%llu bad), %llu dropped\n", (unsigned long long)st.received,
			(unsigned long long)st.replied, (unsigned long long)st.ok,
			(unsigned long long)st.overloaded, (unsigned long long)st.bad_request,
			(unsigned long long)st.dropped_disconnected);
	}
	leaf_free(s);
	return 0;
}
