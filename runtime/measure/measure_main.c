/* measure_main.c: frontload-measure: subcommand dispatch, top-level help, shared helpers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "measure.h"
#include "osfile.h"
#include "paths.h"

const struct fm_knob_def fm_knob_defs[] = {
	{ "lib", 1, "extractor library (default: " "libfrontload-extract.so beside the programs)" },
	{ "active-copies", 1, "footprint knob: copies of each variant in the plan (0 = all) [0]" },
	{ "active-functions", 1, "fine footprint knob: distinct functions in the plan, 1..kept "
		"(0 = all kept) [0]" },
	{ "footprint-bytes", 1, "the same in executed code bytes (k, M, G), 0 = unset [0]" },
	{ "dispatch", 1, "call order: flat (each function once a lap) or zipf [flat]" },
	{ "zipf-alpha", 1, "Zipf exponent alpha of --dispatch zipf, 0..4 [1]" },
	{ "seed", 1, "plan shuffle, model and request stream seed [1]" },
	{ "extractors-per-story", 1, "extractor calls per story [340]" },
	{ "calls-per-request", 1, "sets extractors-per-story = N / stories used" },
	{ "stories", 1, "stories per request [16]" },
	{ "story-bytes", 1, "body bytes per story [1024]" },
	{ "max-stories", 1, "stories of a request used [64]" },
	{ "body", 1, "share of extractor calls running their full body, % [100]" },
	{ "hit", 1, "extractor lookup hit rate, % [50]" },
	{ "score-passes", 1, "story processor scoring passes [4]" },
	{ "topk", 1, "stories kept after ranking [16]" },
	{ "blend-passes", 1, "blending passes [2]" },
	{ "serialize-passes", 1, "serialization passes [2]" },
	{ "emb-rows", 1, "DLRM rows per embedding table [4096]" },
	{ "zstd-level", 1, "reply compression level [3]" },
	{ "max-reply-bytes", 1, "cap on a sampled reply size [16777216]" },
	{ "max-request-bytes", 1, "cap on a sampled request size [4194304]" },
	{ "request-bytes", 1, "fixed request size, 0 = sampled [0]" },
	{ "method", 1, "inbound method, or mix [mix]" },
	{ "sessions", 1, "distinct session ids [1000]" },
	{ "sessions-max", 1, "sessions kept by the leaf [100000]" },
	{ "zstd", 0, "ask for zstd reply payloads" },
	{ "zstd-frames", 0, "send requests as zstd frames" },
	{ "corpus-mb", 1, "generated corpus size, MiB [64]" },
	{ "corpus-seed", 1, "corpus seed [1]" },
	{ NULL, 0, NULL },
};

void fm_knobs_usage(FILE *fp)
{
	fputs("frontload-simreq knobs (forwarded as given; see frontload-simreq --help):\n", fp);
	for (const struct fm_knob_def *k = fm_knob_defs; k->name; k++) {
		char flag[64];

		snprintf(flag, sizeof(flag), "--%s%s", k->name, k->has_arg ? " V" : "");
		fprintf(fp, "  %-26s %s\n", flag, k->help);
	}
}

const char *const fm_sim_limits[] = {
	"callgrind's cache model has no hardware prefetcher, no op (uop) cache, no loop "
	"buffer and no iTLB: L1i misses are those of a demand-fetched cache and overstate a "
	"real core with a next-line/stream prefetcher",
	"replacement is LRU in every level, sets are chosen by plain address bits, the last "
	"level (LL, here the core's L2) is inclusive and unified, and there is no L3 "
	"(cachegrind manual 5.8.1)",
	"caches are virtually indexed with one process and no other tenants: no SMT sibling, "
	"no kernel code, no interrupts or context switches pollute them",
	"the branch model is the 2004-era one of the cachegrind manual (5.8.2): conditional "
	"branches by 16384 2-bit counters indexed by address and recent history, indirect "
	"branches by a 512-entry last-target table, returns always predicted: mispredict rates "
	"are indicative, not those of a modern TAGE/ITTAGE predictor",
	"no timing: IPC and top-down front-end bound cannot be simulated",
	"the instructions are x86-64 whatever --cpu says; only the cache geometry follows the "
	"model",
	"per-stage CPU shares come from a native run (thread CPU clock), not from the "
	"simulation, which inflates every stage unevenly",
	NULL,
};

double fm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *fm_dur_str(double s, char *buf, size_t len)
{
	long t = s > 0 ? lround(s) : 0;

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
	return buf;
}

double fm_json_num(json_t *o, const char *path)
{
	char key[128];
	const char *p = path;

	while (o != NULL && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key))
			return NAN;
		memcpy(key, p, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return o != NULL && json_is_number(o) ? json_number_value(o) : NAN;
}

json_t *fm_host_json(void)
{
	struct utsname u;
	char model[256] = "unknown", line[512];
	FILE *fp = fopen("/proc/cpuinfo", "r");

	if (fp != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			if (strncmp(line, "model name", 10) == 0) {
				char *v = strchr(line, ':');

				if (v != NULL) {
					v += strspn(v + 1, " \t") + 1;
					v[strcspn(v, "\n")] = '\0';
					snprintf(model, sizeof(model), "%s", v);
				}
				break;
			}
		}
		fclose(fp);
	}
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	return json_pack("{s:s,s:s,s:s,s:I}", "hostname", u.nodename, "kernel", u.release,
		"cpu", model, "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN));
}

json_t *fm_build_json(void)
{
	char dir[4096], path[4200];

	if (fl_exe_dir(dir, sizeof(dir)) != 0)
		return NULL;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if (access(path, R_OK) != 0) {
		snprintf(path, sizeof(path), "%s/../share/frontload/config.json", dir);
		if (access(path, R_OK) != 0)
			return NULL;
	}
	return json_load_file(path, 0, NULL);
}

int fm_mktemp(char *out, size_t len, char *err, size_t errlen)
{
	snprintf(out, len, "/tmp/frontload-measure.XXXXXX");
	if (mkdtemp(out) == NULL) {
		snprintf(err, errlen, "mkdtemp %s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

void fm_rmtree(const char *dir)
{
	fl_rmtree(dir);
}

static const char usage_text[] =
"usage: " FM_PROG " validate|mix|calibrate|study [options]   (--help after any of them)\n"
"\n"
"Measures the front-end load frontload puts on a CPU and checks it against published\n"
"production targets (results/targets/production.json, each with its source).\n"
"\n"
"  validate   L1i MPKI, branch MPKI, instruction mix, stage CPU shares and the CPU\n"
"             profile of the running leaf (mock, leaf, driver as frontload run starts\n"
"             them) vs the targets: per object, per pool, a table (metric, target,\n"
"             measured, verdict, path) and JSON; --harness: frontload-simreq in process\n"
"  mix        the dynamic instruction mix and miss rates only\n"
"  calibrate  find calls per request (then the body share) that give a target L1i MPKI\n"
"  study      sweep footprint x calls per request, plus an L1i miss-ratio curve; writes\n"
"             study.csv, summary.md and gnuplot plots\n"
"\n"
"Two measurement paths: hardware (perf counters around the measured window: the leaf's\n"
"per-pool PMU groups, or frontload-simreq's with --harness; where the host has no PMU\n"
"every counter metric is \"unsupported: reason\") and\n"
"simulated (valgrind callgrind's cache and branch simulation with a CPU model's geometry,\n"
"objdump for the instruction classes). Numbers are never invented: a metric a path cannot\n"
"produce gets the verdict \"unmeasurable\".\n"
"\n"
"exit status: 0 done and every measured target met, 3 a measured target missed\n"
"(validate), 1 a run failed, 2 usage error.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return FM_EXIT_USAGE;
	}
	const char *sub = argv[1];

	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(usage_text, stdout);
		return FM_EXIT_OK;
	}
	if (strcmp(sub, "validate") == 0) {
		/* --harness: frontload-simreq in process; else the running leaf. */
		for (int i = 2; i < argc; i++)
			if (strcmp(argv[i], "--harness") == 0) {
				memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof *argv);
				return fm_validate_main(argc - 2, argv + 1);
			}
		return fm_validate_leaf_main(argc - 1, argv + 1);
	}
	if (strcmp(sub, "mix") == 0)
		return fm_mix_main(argc - 1, argv + 1);
	if (strcmp(sub, "calibrate") == 0)
		return fm_calibrate_main(argc - 1, argv + 1);
	if (strcmp(sub, "study") == 0)
		return fm_study_main(argc - 1, argv + 1);
	fprintf(stderr, FM_PROG ": unknown subcommand \"%s\" (validate, mix, calibrate, study; "
		"see --help)\n", sub);
	return FM_EXIT_USAGE;
}
