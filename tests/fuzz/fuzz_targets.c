/* fuzz_targets.c: a targets file (results/targets/production.json's format) through
 * fl_targets_parse, then lookups and verdicts on every target it accepted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "targets.h"

static void fz_die(const char *what, const char *metric)
{
	fprintf(stderr, "fuzz_targets: %s (%s)\n", what, metric);
	abort();
}

static enum fl_verdict fz_verdict(const struct fl_target *t, double x, unsigned path)
{
	struct fl_measured m = { 1, x, path, "" };
	return fl_target_check(t, &m);
}

/* What the loader promises of a target, and verdicts at its bounds (inclusive). */
static void fz_check_target(const struct fl_targets *tg, const struct fl_target *t)
{
	unsigned path = t->paths & -t->paths;  /* one accepted path */
	char buf[128];

	if (!fl_tgt_metric_known(t->metric) || fl_targets_find(tg, t->metric) != t)
		fz_die("metric unknown or not unique", t->metric);
	if (fl_targets_source(tg, t->source) == NULL)
		fz_die("source not in sources", t->metric);
	if (t->paths == 0 || (t->paths & ~7u) != 0)
		fz_die("paths", t->metric);
	fl_target_str(t, buf, sizeof buf);
	if (buf[0] == 0)
		fz_die("empty target text", t->metric);
	switch (t->kind) {
	case FL_TGT_RANGE:
		if (!(t->min < t->max) || fz_verdict(t, t->min, path) != FL_VERDICT_PASS ||
		    fz_verdict(t, t->max, path) != FL_VERDICT_PASS)
			fz_die("range bounds", t->metric);
		break;
	case FL_TGT_MIN:
		if (fz_verdict(t, t->min, path) != FL_VERDICT_PASS)
			fz_die("min bound", t->metric);
		break;
	case FL_TGT_MAX:
		if (fz_verdict(t, t->max, path) != FL_VERDICT_PASS)
			fz_die("max bound", t->metric);
		break;
	case FL_TGT_APPROX:
		if (!(t->tolerance >= 0) || fz_verdict(t, t->value, path) != FL_VERDICT_PASS)
			fz_die("approx value", t->metric);
		break;
	default:
		fz_die("kind", t->metric);
	}
	if (fz_verdict(t, NAN, path) != FL_VERDICT_UNMEASURABLE)
		fz_die("NaN judged", t->metric);
	if (t->paths != 7u && fz_verdict(t, t->min, 7u & ~t->paths) != FL_VERDICT_UNMEASURABLE)
		fz_die("a path the target does not accept judged", t->metric);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fl_targets tg;
	char err[1024];
	char *text = malloc(size + 1);

	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	err[0] = 0;
	if (fl_targets_parse(text, "fuzz.json", &tg, err, sizeof err) == 0) {
		if (tg.n == 0 || tg.nsources == 0)
			fz_die("accepted without targets or sources", "");
		for (size_t i = 0; i < tg.n; i++)
			fz_check_target(&tg, &tg.t[i]);
		fl_targets_free(&tg);
		if (tg.t != NULL || tg.sources != NULL || tg.n != 0)
			fz_die("free left the struct set", "");
	} else if (err[0] == 0 || tg.t != NULL || tg.sources != NULL) {
		fz_die("refused without a message, or not zeroed", "");
	}
	free(text);
	return 0;
}
