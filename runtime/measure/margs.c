/* margs.c: option parsing shared by frontload-measure's harness subcommands (validate
 * --harness, mix, calibrate, study), and the frontload-simreq knobs they forward. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "margs.h"
#include "mutil.h"

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

/* The value of option name: "--name=V", or the next argument when it takes one. 1, or -1
 * (message printed) when it is missing or given to an option that takes none. */
static int take_value(int has_arg, const char *eq, int argc, char **argv, int *i,
	const char *name, const char **val)
{
	*val = NULL;
	if (!has_arg) {
		if (eq == NULL)
			return 1;
		fprintf(stderr, FM_PROG ": --%s takes no value\n", name);
		return -1;
	}
	if (eq)
		*val = eq + 1;
	else if (*i < argc)
		*val = argv[(*i)++];
	else {
		fprintf(stderr, FM_PROG ": --%s needs a value (see --help)\n", name);
		return -1;
	}
	return 1;
}

int fm_args_next(int argc, char **argv, int *i, const struct fm_opt *opts, int *id,
	const char **val, const char **knob)
{
	char name[128];
	const char *a, *eq;

	if (*i >= argc)
		return 0;
	a = argv[(*i)++];
	if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
		fprintf(stderr, FM_PROG ": unexpected argument \"%s\" (see --help)\n", a);
		return -1;
	}
	eq = strchr(a, '=');
	snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - a - 2 : (long)strlen(a + 2)), a + 2);
	for (const struct fm_opt *o = opts; o->name; o++)
		if (strcmp(o->name, name) == 0) {
			*id = o->id;
			return take_value(o->has_arg, eq, argc, argv, i, name, val);
		}
	for (const struct fm_knob_def *k = fm_knob_defs; k->name; k++)
		if (strcmp(k->name, name) == 0) {
			*id = FM_OPT_KNOB;
			*knob = k->name;
			return take_value(k->has_arg, eq, argc, argv, i, name, val);
		}
	fprintf(stderr, FM_PROG ": unknown option \"%s\" (see --help)\n", a);
	return -1;
}

int fm_parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, FM_PROG ": --%s: expected an integer in %llu..%llu, got \"%s\"\n",
			flag, (unsigned long long)lo, (unsigned long long)hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int fm_parse_f64(const char *flag, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		fprintf(stderr, FM_PROG ": --%s: expected a number in %g..%g, got \"%s\"\n", flag,
			lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}
