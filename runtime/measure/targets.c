/* targets.c: load and validate the production targets file; verdicts on measurements. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "errbuf.h"
#include "paths.h"
#include "targets.h"

static const char *const tgt_metrics[] = {
	"l1i_mpki", "ipc", "frontend_bound_pct", "scalar_fp_pct", "cond_branch_pct",
	"call_ret_pct", "mem_pct", "div_pct", "insns_per_taken_branch", "extract_cpu_pct",
	"profile_extract_pct", "profile_ranking_pct", "profile_compression_pct",
	"profile_encryption_pct",
};

static const struct {
	const char *name;
	unsigned bit;
} tgt_paths[] = {
	{ "hardware", FL_PATH_HARDWARE },
	{ "simulated", FL_PATH_SIMULATED },
	{ "native", FL_PATH_NATIVE },
};

int fl_tgt_metric_known(const char *name)
{
	for (size_t i = 0; i < sizeof(tgt_metrics) / sizeof(tgt_metrics[0]); i++)
		if (strcmp(name, tgt_metrics[i]) == 0)
			return 1;
	return 0;
}

/* Copy a required (or optional) string member into out. Returns 0 or -1 (err set). */
static int tgt_string(json_t *obj, const char *key, int required, char *out, size_t outlen,
	const char *where, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	out[0] = '\0';
	if (v == NULL) {
		if (!required)
			return 0;
		fl_errf(err, errlen, "%s.%s: missing", where, key);
		return -1;
	}
	if (!json_is_string(v)) {
		fl_errf(err, errlen, "%s.%s: must be a string", where, key);
		return -1;
	}
	if (json_string_length(v) >= outlen) {
		fl_errf(err, errlen, "%s.%s: longer than %zu bytes", where, key, outlen - 1);
		return -1;
	}
	snprintf(out, outlen, "%s", json_string_value(v));
	return 0;
}

static int tgt_number(json_t *obj, const char *key, double *out, const char *where, char *err,
	size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL) {
		fl_errf(err, errlen, "%s.%s: missing", where, key);
		return -1;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v))) {
		fl_errf(err, errlen, "%s.%s: must be a finite number", where, key);
		return -1;
	}
	*out = json_number_value(v);
	return 0;
}

/* Refuse members not in allowed (NULL-terminated). */
static int tgt_only(json_t *obj, const char *const *allowed, const char *where, char *err,
	size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		size_t i = 0;

		while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
			i++;
		if (allowed[i] == NULL) {
			fl_errf(err, errlen, "%s.%s: unknown key", where, key);
			return -1;
		}
	}
	return 0;
}

static int tgt_parse_kind(json_t *o, struct fl_target *t, const char *where, char *err,
	size_t errlen)
{
	static const char *const bounds[] = { "min", "max", "value", "tolerance" };
	char kind[FL_TGT_NAME];
	int want[4] = { 0 };

	if (tgt_string(o, "kind", 1, kind, sizeof(kind), where, err, errlen) < 0)
		return -1;
	if (strcmp(kind, "range") == 0) {
		t->kind = FL_TGT_RANGE;
		want[0] = want[1] = 1;
	} else if (strcmp(kind, "min") == 0) {
		t->kind = FL_TGT_MIN;
		want[0] = 1;
	} else if (strcmp(kind, "max") == 0) {
		t->kind = FL_TGT_MAX;
		want[1] = 1;
	} else if (strcmp(kind, "approx") == 0) {
		t->kind = FL_TGT_APPROX;
		want[2] = want[3] = 1;
	} else {
		fl_errf(err, errlen, "%s.kind: \"%s\" is not range, min, max or approx", where,
			kind);
		return -1;
	}
	/* Each kind takes exactly its bounds: a stray one would be ignored silently. */
	for (int i = 0; i < 4; i++) {
		if (!want[i] && json_object_get(o, bounds[i]) != NULL) {
			fl_errf(err, errlen, "%s.%s: not a bound of kind \"%s\"", where, bounds[i],
				kind);
			return -1;
		}
	}
	if ((want[0] && tgt_number(o, "min", &t->min, where, err, errlen) < 0) ||
	    (want[1] && tgt_number(o, "max", &t->max, where, err, errlen) < 0) ||
	    (want[2] && tgt_number(o, "value", &t->value, where, err, errlen) < 0) ||
	    (want[3] && tgt_number(o, "tolerance", &t->tolerance, where, err, errlen) < 0))
		return -1;
	if (t->kind == FL_TGT_RANGE && !(t->min < t->max)) {
		fl_errf(err, errlen, "%s.max: %g is not above min %g", where, t->max, t->min);
		return -1;
	}
	if (t->kind == FL_TGT_APPROX && t->tolerance < 0) {
		fl_errf(err, errlen, "%s.tolerance: %g is negative", where, t->tolerance);
		return -1;
	}
	return 0;
}

static int tgt_parse_paths(json_t *o, struct fl_target *t, const char *where, char *err,
	size_t errlen)
{
	json_t *a = json_object_get(o, "paths"), *v;
	size_t i;

	if (a == NULL || !json_is_array(a) || json_array_size(a) == 0) {
		fl_errf(err, errlen, "%s.paths: must be a non-empty array of \"hardware\", "
			"\"simulated\", \"native\"", where);
		return -1;
	}
	t->paths = 0;
	json_array_foreach(a, i, v) {
		size_t k = 0;

		while (k < sizeof(tgt_paths) / sizeof(tgt_paths[0]) &&
		       !(json_is_string(v) && strcmp(json_string_value(v), tgt_paths[k].name) == 0))
			k++;
		if (k == sizeof(tgt_paths) / sizeof(tgt_paths[0])) {
			fl_errf(err, errlen, "%s.paths[%zu]: not \"hardware\", \"simulated\" or "
				"\"native\"", where, i);
			return -1;
		}
		t->paths |= tgt_paths[k].bit;
	}
	return 0;
}

static int tgt_parse_target(json_t *o, const struct fl_targets *tg, size_t idx,
	struct fl_target *t, char *err, size_t errlen)
{
	static const char *const keys[] = { "metric", "label", "kind", "min", "max", "value",
		"tolerance", "unit", "source", "paths", "note", "knob", NULL };
	char where[64];

	snprintf(where, sizeof(where), "targets[%zu]", idx);
	if (!json_is_object(o)) {
		fl_errf(err, errlen, "%s: must be an object", where);
		return -1;
	}
	if (tgt_only(o, keys, where, err, errlen) < 0 ||
	    tgt_string(o, "metric", 1, t->metric, sizeof(t->metric), where, err, errlen) < 0)
		return -1;
	if (!fl_tgt_metric_known(t->metric)) {
		fl_errf(err, errlen, "%s.metric: unknown metric \"%s\"", where, t->metric);
		return -1;
	}
	for (size_t i = 0; i < idx; i++) {
		if (strcmp(tg->t[i].metric, t->metric) == 0) {
			fl_errf(err, errlen, "%s.metric: \"%s\" already has a target (targets[%zu])",
				where, t->metric, i);
			return -1;
		}
	}
	if (tgt_string(o, "label", 1, t->label, sizeof(t->label), where, err, errlen) < 0 ||
	    tgt_parse_kind(o, t, where, err, errlen) < 0 ||
	    tgt_string(o, "unit", 1, t->unit, sizeof(t->unit), where, err, errlen) < 0 ||
	    tgt_string(o, "source", 1, t->source, sizeof(t->source), where, err, errlen) < 0 ||
	    tgt_parse_paths(o, t, where, err, errlen) < 0 ||
	    tgt_string(o, "note", 0, t->note, sizeof(t->note), where, err, errlen) < 0 ||
	    tgt_string(o, "knob", 0, t->knob, sizeof(t->knob), where, err, errlen) < 0)
		return -1;
	if (fl_targets_source(tg, t->source) == NULL) {
		fl_errf(err, errlen, "%s.source: \"%s\" is not in \"sources\"", where, t->source);
		return -1;
	}
	return 0;
}

static int tgt_parse_sources(json_t *s, struct fl_targets *tg, char *err, size_t errlen)
{
	static const char *const keys[] = { "title", "url", NULL };
	const char *id;
	json_t *v;

	if (s == NULL || !json_is_object(s) || json_object_size(s) == 0) {
		fl_errf(err, errlen, "sources: must be a non-empty object");
		return -1;
	}
	tg->sources = calloc(json_object_size(s), sizeof(*tg->sources));
	if (tg->sources == NULL) {
		fl_errf(err, errlen, "out of memory");
		return -1;
	}
	json_object_foreach(s, id, v) {
		struct fl_tgt_source *src = &tg->sources[tg->nsources];
		char where[FL_TGT_NAME + 16];

		snprintf(where, sizeof(where), "sources.%.*s", FL_TGT_NAME - 1, id);
		if (strlen(id) == 0 || strlen(id) >= sizeof(src->id)) {
			fl_errf(err, errlen, "%s: id must be 1..%d bytes", where, FL_TGT_NAME - 1);
			return -1;
		}
		if (!json_is_object(v)) {
			fl_errf(err, errlen, "%s: must be an object", where);
			return -1;
		}
		snprintf(src->id, sizeof(src->id), "%s", id);
		if (tgt_only(v, keys, where, err, errlen) < 0 ||
		    tgt_string(v, "title", 1, src->title, sizeof(src->title), where, err,
			errlen) < 0 ||
		    tgt_string(v, "url", 1, src->url, sizeof(src->url), where, err, errlen) < 0)
			return -1;
		if (src->title[0] == '\0') {
			fl_errf(err, errlen, "%s.title: empty", where);
			return -1;
		}
		tg->nsources++;
	}
	return 0;
}

static int tgt_parse_root(json_t *root, struct fl_targets *tg, char *err, size_t errlen)
{
	static const char *const keys[] = { "schema", "name", "description", "sources",
		"targets", NULL };
	json_t *schema, *arr, *v;
	char desc[4096];
	size_t i;

	if (!json_is_object(root)) {
		fl_errf(err, errlen, "top level: must be an object");
		return -1;
	}
	if (tgt_only(root, keys, "top level", err, errlen) < 0)
		return -1;
	schema = json_object_get(root, "schema");
	if (!json_is_integer(schema) || json_integer_value(schema) != 1) {
		fl_errf(err, errlen, "schema: must be 1");
		return -1;
	}
	if (tgt_string(root, "name", 1, tg->name, sizeof(tg->name), "top level", err,
		errlen) < 0 ||
	    tgt_string(root, "description", 0, desc, sizeof(desc), "top level", err,
		errlen) < 0)
		return -1;
	if (tgt_parse_sources(json_object_get(root, "sources"), tg, err, errlen) < 0)
		return -1;
	arr = json_object_get(root, "targets");
	if (arr == NULL || !json_is_array(arr) || json_array_size(arr) == 0) {
		fl_errf(err, errlen, "targets: must be a non-empty array");
		return -1;
	}
	tg->t = calloc(json_array_size(arr), sizeof(*tg->t));
	if (tg->t == NULL) {
		fl_errf(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(arr, i, v) {
		if (tgt_parse_target(v, tg, i, &tg->t[i], err, errlen) < 0)
			return -1;
		tg->n++;
	}
	return 0;
}

int fl_targets_parse(const char *text, const char *name, struct fl_targets *tg, char *err,
	size_t errlen)
{
	json_error_t je;
	char why[FL_TGT_TEXT];
	json_t *root;
	int rc;

	memset(tg, 0, sizeof(*tg));
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		fl_errf(err, errlen, "%s:%d:%d: %s", name, je.line, je.column, je.text);
		return -1;
	}
	why[0] = '\0';
	rc = tgt_parse_root(root, tg, why, sizeof(why));
	json_decref(root);
	if (rc < 0) {
		fl_errf(err, errlen, "%s: %s", name, why);
		fl_targets_free(tg);
		return -1;
	}
	return 0;
}

int fl_targets_load(const char *path, struct fl_targets *tg, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc;

	memset(tg, 0, sizeof(*tg));
	if (fp == NULL) {
		fl_errf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *n = realloc(text, cap = (cap + 4096) * 2);

			if (n == NULL) {
				free(text);
				fclose(fp);
				fl_errf(err, errlen, "%s: out of memory", path);
				return -1;
			}
			text = n;
		}
		size_t got = fread(text + len, 1, 4096, fp);

		len += got;
		if (got < 4096)
			break;
	}
	rc = ferror(fp);
	fclose(fp);
	if (rc) {
		free(text);
		fl_errf(err, errlen, "%s: read error", path);
		return -1;
	}
	text[len] = '\0';
	rc = fl_targets_parse(text, path, tg, err, errlen);
	free(text);
	return rc;
}

void fl_targets_free(struct fl_targets *tg)
{
	free(tg->sources);
	free(tg->t);
	memset(tg, 0, sizeof(*tg));
}

int fl_targets_default_path(char *out, size_t outlen, char *err, size_t errlen)
{
	char dir[4096], src[4096];
	char *p;
	int n;

	if (fl_exe_dir(dir, sizeof(dir)) == 0) {
		n = snprintf(out, outlen, "%s/../share/frontload/targets/production.json", dir);
		if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
			return 0;
	}
	/* FL_SRC_DATA_DIR is <src>/runtime/data; the file lives in <src>/results/targets. */
	snprintf(src, sizeof(src), "%s", FL_SRC_DATA_DIR);
	p = strstr(src, "/runtime/data");
	if (p != NULL)
		*p = '\0';
	n = snprintf(out, outlen, "%s/results/targets/production.json", src);
	if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
		return 0;
	fl_errf(err, errlen, "no targets file: neither <exe dir>/../share/frontload/targets/"
		"production.json nor %s/results/targets/production.json exists (use --targets)",
		src);
	return -1;
}

const struct fl_target *fl_targets_find(const struct fl_targets *tg, const char *metric)
{
	for (size_t i = 0; i < tg->n; i++)
		if (strcmp(tg->t[i].metric, metric) == 0)
			return &tg->t[i];
	return NULL;
}

const struct fl_tgt_source *fl_targets_source(const struct fl_targets *tg, const char *id)
{
	for (size_t i = 0; i < tg->nsources; i++)
		if (strcmp(tg->sources[i].id, id) == 0)
			return &tg->sources[i];
	return NULL;
}

enum fl_verdict fl_target_check(const struct fl_target *t, const struct fl_measured *m)
{
	double x = m->value;

	if (!m->available || !isfinite(x) || (m->path & t->paths) == 0)
		return FL_VERDICT_UNMEASURABLE;
	switch (t->kind) {
	case FL_TGT_RANGE:
		return x >= t->min && x <= t->max ? FL_VERDICT_PASS : FL_VERDICT_FAIL;
	case FL_TGT_MIN:
		return x >= t->min ? FL_VERDICT_PASS : FL_VERDICT_FAIL;
	case FL_TGT_MAX:
		return x <= t->max ? FL_VERDICT_PASS : FL_VERDICT_FAIL;
	case FL_TGT_APPROX:
		return fabs(x - t->value) <= t->tolerance ? FL_VERDICT_PASS : FL_VERDICT_FAIL;
	}
	return FL_VERDICT_UNMEASURABLE;
}

const char *fl_verdict_name(enum fl_verdict v)
{
	switch (v) {
	case FL_VERDICT_PASS: return "pass";
	case FL_VERDICT_FAIL: return "fail";
	case FL_VERDICT_UNMEASURABLE: return "unmeasurable";
	}
	return "unknown";
}

const char *fl_path_name(unsigned path)
{
	for (size_t i = 0; i < sizeof(tgt_paths) / sizeof(tgt_paths[0]); i++)
		if (path == tgt_paths[i].bit)
			return tgt_paths[i].name;
	return "none";
}

char *fl_target_str(const struct fl_target *t, char *buf, size_t len)
{
	switch (t->kind) {
	case FL_TGT_RANGE: snprintf(buf, len, "%g..%g", t->min, t->max); break;
	case FL_TGT_MIN: snprintf(buf, len, ">= %g", t->min); break;
	case FL_TGT_MAX: snprintf(buf, len, "<= %g", t->max); break;
	case FL_TGT_APPROX: snprintf(buf, len, "%g +- %g", t->value, t->tolerance); break;
	}
	return buf;
}
