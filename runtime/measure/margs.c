/* margs.c: the option parsing frontload-measure's subcommands share: the forwarded
 * fl_cli call with its help and error handling, and
 * the number parsers of list items. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "margs.h"
#include "mutil.h"

int fm_cli_parse(const struct fl_cli *cli, int argc, char **argv, void *obj,
	void (*usage)(FILE *))
{
	char err[512];
	int rc = fl_cli_parse(cli, argc, argv, obj, err, sizeof(err));

	if (rc == FL_CLI_HELP) {
		usage(stdout);
		exit(FM_EXIT_OK);
	}
	if (rc != 0) {
		fprintf(stderr, FM_PROG ": %s (see --help)\n", err);
		return -1;
	}
	return 0;
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

/* The simreq knobs frontload-leaf does not take: they shape the request stream, which is
 * frontload-driver's there (or simreq's corpus), so the leaf would refuse them at start. */
int fm_knob_not_leaf(const char *name)
{
	static const char *const not_leaf[] = { "calls-per-request", "corpus-mb",
		"max-request-bytes", "method", "request-bytes", "sessions", "stories",
		"story-bytes", "zstd", "zstd-frames", NULL };

	for (int i = 0; not_leaf[i]; i++)
		if (strcmp(name, not_leaf[i]) == 0)
			return 1;
	return 0;
}
