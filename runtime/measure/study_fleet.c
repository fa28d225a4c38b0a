/* study_fleet.c: study --merge: the shards of one study, run on several hosts (study
 * --shard K/N, runtime/deploy/study.yml), merged into one report.
 *
 * Shards are grouped by the CPU model they simulated (--cpu and the cache geometry): the
 * hosts of one model split its plan, so each model covers the whole plan and the report
 * puts the models side by side. Each point is taken from the shard that owns it (index
 * modulo N) and tagged with that shard's host and the host's own CPU. Nothing is
 * measured here; a point no shard measured is named, never filled in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "measure.h"
#include "mutil.h"
#include "osfile.h"
#include "report_html.h"
#include "study.h"

#define SF_MAX_SHARDS 64
#define SF_MAX_GROUPS 16

struct sf_shard {
	const char *dir;
	json_t *js;              /* its study.json */
	const char *model, *host, *host_cpu, *status;
	unsigned k, n;
	char base[8192];         /* its command without the per-host options */
};

struct sf_group {
	char key[256];           /* model and geometry */
	const char *model;
	json_t *geometry;
	unsigned n;              /* shards the plan was split into */
	struct sf_shard *by_k[SF_MAX_SHARDS];
	json_t *points;          /* merged, tagged (owned) */
	size_t measured, missing;
};

/* The study's command without what may differ between hosts of one fleet: the shard, the
 * output, the simulated model and geometry (they make the groups), the jobs and budget
 * (a host's own capacity) and the progress lines. */
static void sf_base_command(const char *cmd, char *out, size_t len)
{
	static const char *const drop[] = { "--shard", "--out", "--cpu", "--i1", "--d1", "--ll",
		"--jobs", "--budget-min", NULL };
	char buf[8192], *save = NULL;
	size_t n = 0;
	int skip_next = 0;

	snprintf(buf, sizeof(buf), "%s", cmd);
	out[0] = '\0';
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		size_t l = strcspn(t, "=");
		int dropped = 0;

		if (skip_next) {
			skip_next = 0;
			continue;
		}
		if (strcmp(t, "--quiet") == 0)
			continue;
		for (int k = 0; drop[k]; k++)
			if (strlen(drop[k]) == l && strncmp(t, drop[k], l) == 0) {
				dropped = 1;
				skip_next = t[l] != '=';
			}
		if (!dropped && n < len)
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", t);
	}
}

static const char *sf_str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

/* Load dir/study.json into s. 0, or -1 with err naming what is wrong. */
static int sf_load(const char *dir, struct sf_shard *s, char *err, size_t errlen)
{
	char path[4200];
	json_error_t je;
	const json_t *sh, *host;

	memset(s, 0, sizeof(*s));
	s->dir = dir;
	snprintf(path, sizeof(path), "%s/study.json", dir);
	s->js = json_load_file(path, 0, &je);
	if (s->js == NULL) {
		snprintf(err, errlen, "%s: %s", path, je.text);
		return -1;
	}
	host = json_object_get(s->js, "host");
	sh = json_object_get(s->js, "shard");
	if (!json_is_array(json_object_get(s->js, "points")) ||
	    !json_is_string(json_object_get(s->js, "command")) || !json_is_object(host) ||
	    !json_is_string(json_object_get(s->js, "cpu_model")) ||
	    !json_is_object(json_object_get(s->js, "geometry"))) {
		snprintf(err, errlen, "%s: not a study's study.json of this version (it needs "
			"points, command, host, cpu_model and geometry)", path);
		return -1;
	}
	s->k = 0;
	s->n = 1;
	if (json_is_object(sh)) {
		json_int_t k = json_integer_value(json_object_get(sh, "index"));
		json_int_t n = json_integer_value(json_object_get(sh, "count"));

		if (n < 1 || n > SF_MAX_SHARDS || k < 0 || k >= n) {
			snprintf(err, errlen, "%s: shard %lld/%lld is not K/N with 0 <= K < N <= %d",
				path, (long long)k, (long long)n, SF_MAX_SHARDS);
			return -1;
		}
		s->k = (unsigned)k;
		s->n = (unsigned)n;
	} else if (!json_is_null(sh) && sh != NULL) {
		snprintf(err, errlen, "%s: shard is neither null nor {index, count}", path);
		return -1;
	}
	s->model = sf_str(s->js, "cpu_model", "?");
	s->host = sf_str(host, "hostname", "?");
	s->host_cpu = sf_str(host, "cpu", "unknown");
	s->status = sf_str(s->js, "status", "unknown");
	sf_base_command(sf_str(s->js, "command", ""), s->base, sizeof(s->base));
	return 0;
}

/* Two shards' plans agree point by point on what the point is. */
static int sf_same_plan(const json_t *a, const json_t *b, char *err, size_t errlen)
{
	static const char *const keys[] = { "kind", "footprint_bytes", "active_functions",
		"dispatch", "zipf_alpha", "calls_per_request", NULL };

	if (json_array_size(a) != json_array_size(b)) {
		snprintf(err, errlen, "%zu points against %zu", json_array_size(a),
			json_array_size(b));
		return 0;
	}
	for (size_t i = 0; i < json_array_size(a); i++)
		for (int k = 0; keys[k]; k++)
			if (!json_equal(json_object_get(json_array_get(a, i), keys[k]),
			    json_object_get(json_array_get(b, i), keys[k]))) {
				snprintf(err, errlen, "point %zu differs in %s", i, keys[k]);
				return 0;
			}
	return 1;
}

/* Group g's points: each from the shard that owns it, tagged. */
static void sf_take_points(struct sf_group *g, const json_t *plan)
{
	g->points = json_array();
	for (size_t i = 0; i < json_array_size(plan); i++) {
		const struct sf_shard *s = g->by_k[i % g->n];
		json_t *q;

		if (s == NULL) {
			q = json_deep_copy(json_array_get(plan, i));
			/* Keep what the point is; drop the figures of a shard that did not own it. */
			json_object_set_new(q, "status", json_string("missing"));
			json_object_set_new(q, "why", json_sprintf("no shard %zu/%u of %s was given "
				"to --merge", i % g->n, g->n, g->model));
			json_object_set_new(q, "host", json_null());
			json_object_set_new(q, "host_cpu", json_null());
			for (int c = 0; c < ST_NFIG; c++)
				json_object_del(q, st_fig_name(c));
			json_object_del(q, "command");
			json_object_del(q, "sim_wall_s");
			json_object_del(q, "resumed");
			g->missing++;
		} else {
			q = json_deep_copy(json_array_get(json_object_get(s->js, "points"), i));
			json_object_set_new(q, "host", json_string(s->host));
			json_object_set_new(q, "host_cpu", json_string(s->host_cpu));
			json_object_set_new(q, "shard_dir", json_string(s->dir));
			if (strcmp(sf_str(q, "status", ""), "ok") == 0)
				g->measured++;
			else if (strcmp(sf_str(q, "status", ""), "skipped") != 0)
				g->missing++;  /* failed, interrupted: not measured */
		}
		json_object_set_new(q, "index", json_integer((json_int_t)i));
		json_object_set_new(q, "cpu_model", json_string(g->model));
		json_object_set_new(q, "shard", json_sprintf("%zu/%u", i % g->n, g->n));
		json_array_append_new(g->points, q);
	}
}

static void sf_csv_val(FILE *fp, const json_t *v)
{
	if (json_is_integer(v))
		fprintf(fp, ",%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		fprintf(fp, ",%.6g", json_real_value(v));
	else if (json_is_string(v))
		fprintf(fp, ",\"%s\"", json_string_value(v));
	else
		fputs(",", fp);  /* null: not measured */
}

static int sf_write_csv(const char *dir, struct sf_group *g, size_t ng)
{
	static const char *const meta[] = { "index", "kind", "footprint_bytes",
		"active_functions", "dispatch", "zipf_alpha", "calls_per_request", "i1_bytes",
		"status", NULL };
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.csv", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fputs("cpu_model,host,host_cpu,shard", fp);
	for (int k = 0; meta[k]; k++)
		fprintf(fp, ",%s", meta[k]);
	for (int c = 0; c < ST_NFIG; c++)
		fprintf(fp, ",%s", st_fig_name(c));
	fputs(",code_bytes\n", fp);
	for (size_t i = 0; i < ng; i++)
		for (size_t p = 0; p < json_array_size(g[i].points); p++) {
			const json_t *q = json_array_get(g[i].points, p);

			fprintf(fp, "\"%s\"", g[i].model);
			sf_csv_val(fp, json_object_get(q, "host"));
			sf_csv_val(fp, json_object_get(q, "host_cpu"));
			sf_csv_val(fp, json_object_get(q, "shard"));
			for (int k = 0; meta[k]; k++)
				sf_csv_val(fp, json_object_get(q, meta[k]));
			for (int c = 0; c < ST_NFIG; c++)
				sf_csv_val(fp, json_object_get(q, st_fig_name(c)));
			sf_csv_val(fp, json_object_get(q, "code_bytes"));
			fputc('\n', fp);
		}
	return fclose(fp) == 0 ? 0 : -1;
}

/* "sweep 32 KiB flat 1000 calls" for a table. */
static void sf_point_label(const json_t *q, char *buf, size_t len)
{
	char b[32], i1[32];
	const char *kind = sf_str(q, "kind", "?");
	const json_t *al = json_object_get(q, "zipf_alpha");
	char order[32];

	if (json_is_number(al))
		snprintf(order, sizeof(order), "zipf a=%g", json_number_value(al));
	else
		snprintf(order, sizeof(order), "flat");
	if (strcmp(kind, "mrc") == 0)
		snprintf(buf, len, "mrc %s, %s, I1 %s", st_bstr((double)json_integer_value(
			json_object_get(q, "footprint_bytes")), b, sizeof(b)), order,
			st_bstr((double)json_integer_value(json_object_get(q, "i1_bytes")), i1,
			sizeof(i1)));
	else
		snprintf(buf, len, "%s %s, %s, %lld calls", kind, st_bstr((double)
			json_integer_value(json_object_get(q, "footprint_bytes")), b, sizeof(b)),
			order, (long long)json_integer_value(json_object_get(q, "calls_per_request")));
}

/* A figure of q for a table: "n/a" when not measured. */
static void sf_fig(const json_t *q, const char *key, char *buf, size_t len)
{
	const json_t *v = json_object_get(q, key);

	if (json_is_number(v))
		snprintf(buf, len, "%.2f", json_number_value(v));
	else
		snprintf(buf, len, "n/a");
}

static void sf_group_geo(const struct sf_group *g, char *buf, size_t len)
{
	char a[32], b[32];

	snprintf(buf, len, "I1 %s %lld-way, LL %s %lld-way", st_bstr((double)json_integer_value(
		json_object_get(g->geometry, "i1_bytes")), a, sizeof(a)),
		(long long)json_integer_value(json_object_get(g->geometry, "i1_ways")),
		st_bstr((double)json_integer_value(json_object_get(g->geometry, "ll_bytes")), b,
		sizeof(b)), (long long)json_integer_value(json_object_get(g->geometry, "ll_ways")));
}

/* How model g's L1i MPKI compares with model ref's over the points both measured. */
static void sf_reading(FILE *fp, const struct sf_group *ref, const struct sf_group *g)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t both = 0;
	char geo[128];

	for (size_t p = 0; p < json_array_size(ref->points); p++) {
		const json_t *l0 = json_object_get(json_array_get(ref->points, p), "l1i_mpki");
		const json_t *l1 = json_object_get(json_array_get(g->points, p), "l1i_mpki");

		if (json_is_number(l0) && json_is_number(l1) && json_number_value(l0) > 0) {
			double r = json_number_value(l1) / json_number_value(l0);

			lo = fmin(lo, r);
			hi = fmax(hi, r);
			both++;
		}
	}
	sf_group_geo(g, geo, sizeof(geo));
	if (both)
		fprintf(fp, "\nReading: over the %zu points both measured with L1i misses, L1i "
			"MPKI under %s (%s) is %.2fx to %.2fx that under %s.\n", both, g->model, geo,
			lo, hi, ref->model);
	else
		fprintf(fp, "\nReading: no point was measured under both %s and %s with L1i "
			"misses, so they are not compared.\n", ref->model, g->model);
}

static void sf_side_by_side(FILE *fp, const struct sf_group *g, size_t ng)
{
	char lab[160], f[32];

	fprintf(fp, "\n## Side by side\n\nL1i MPKI and LL code MPKI of each point under each "
		"CPU model (the same plan, the same build).\n\n| point |");
	for (size_t i = 0; i < ng; i++)
		fprintf(fp, " %s L1i | %s LL code |", g[i].model, g[i].model);
	fputs("\n|---|", fp);
	for (size_t i = 0; i < ng; i++)
		fputs("---|---|", fp);
	fputc('\n', fp);
	for (size_t p = 0; p < json_array_size(g[0].points); p++) {
		const json_t *q0 = json_array_get(g[0].points, p);

		sf_point_label(q0, lab, sizeof(lab));
		fprintf(fp, "| %s |", lab);
		for (size_t i = 0; i < ng; i++) {
			const json_t *q = json_array_get(g[i].points, p);

			sf_fig(q, "l1i_mpki", f, sizeof(f));
			fprintf(fp, " %s |", f);
			sf_fig(q, "ll_code_mpki", f, sizeof(f));
			fprintf(fp, " %s |", f);
		}
		fputc('\n', fp);
	}
	for (size_t i = 1; i < ng; i++)
		sf_reading(fp, &g[0], &g[i]);
}

static int sf_write_summary(const char *dir, const struct sf_group *g, size_t ng,
	const char *command, const char *study_cmd)
{
	char path[4200], lab[160], f1[32], f2[32], f3[32], geo[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/summary.md", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# frontload front-end study: a fleet\n\nMerged by:\n\n    %s\n\nThe study "
		"each host ran (without its --shard, --out, --cpu, --jobs and --budget-min):\n\n"
		"    %s\n\n", command, study_cmd);
	fprintf(fp, "Path: simulated (valgrind callgrind), as in one host's study: a CPU model "
		"here is the cache model simulated (--cpu and its geometry). The figures do not "
		"depend on the host that ran them; a host's own CPU only sets its native cost "
		"estimate and wall time. Each point was measured once, by the host of the shard "
		"that owns it (point index modulo the model's shard count).\n\n");
	fprintf(fp, "## Shards\n\n| CPU model | host | host CPU | shard | study status | "
		"directory |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < ng; i++)
		for (unsigned k = 0; k < g[i].n; k++) {
			const struct sf_shard *s = g[i].by_k[k];

			if (s)
				fprintf(fp, "| %s | %s | %s | %u/%u | %s | %s |\n", g[i].model, s->host,
					s->host_cpu, s->k, s->n, s->status, s->dir);
			else
				fprintf(fp, "| %s | - | - | %u/%u | not given | - |\n", g[i].model, k,
					g[i].n);
		}
	for (size_t i = 0; i < ng; i++) {
		sf_group_geo(&g[i], geo, sizeof(geo));
		fprintf(fp, "\n## %s (%s)\n\n%zu of %zu points measured%s.\n\n| # | point | "
			"functions | L1i MPKI | LL code MPKI | cond. branch MPKI | host | status |\n"
			"|---|---|---|---|---|---|---|---|\n", g[i].model, geo, g[i].measured,
			json_array_size(g[i].points), g[i].missing ? "; see the status column for "
			"the rest" : "");
		for (size_t p = 0; p < json_array_size(g[i].points); p++) {
			const json_t *q = json_array_get(g[i].points, p);
			const char *st = sf_str(q, "status", "?");

			sf_point_label(q, lab, sizeof(lab));
			sf_fig(q, "l1i_mpki", f1, sizeof(f1));
			sf_fig(q, "ll_code_mpki", f2, sizeof(f2));
			sf_fig(q, "cond_branch_mpki", f3, sizeof(f3));
			fprintf(fp, "| %zu | %s | %lld | %s | %s | %s | %s | %s%s%s |\n", p, lab,
				(long long)json_integer_value(json_object_get(q, "active_functions")),
				f1, f2, f3, sf_str(q, "host", "-"), st, strcmp(st, "ok") ? ": " : "",
				strcmp(st, "ok") ? sf_str(q, "why", "") : "");
		}
	}
	if (ng >= 2)
		sf_side_by_side(fp, g, ng);
	fprintf(fp, "\n## Files\n\nstudy.csv (one row per point and model, tagged with host, "
		"host CPU and shard), study.json (the same and the shards), report.html (this "
		"page); each shard's own report stays in its directory.\n");
	return fclose(fp) == 0 ? 0 : -1;
}

/* Put shard s into its group (made when new). 0, or -1 with err. */
static int sf_place(struct sf_shard *s, struct sf_group *g, size_t *ng, char *err,
	size_t errlen)
{
	char key[256];
	char *gs = json_dumps(json_object_get(s->js, "geometry"), JSON_COMPACT | JSON_SORT_KEYS);
	size_t i;

	snprintf(key, sizeof(key), "%s %s", s->model, gs ? gs : "");
	free(gs);
	for (i = 0; i < *ng && strcmp(g[i].key, key) != 0; i++)
		;
	if (i == *ng) {
		if (*ng == SF_MAX_GROUPS) {
			snprintf(err, errlen, "more than %d CPU models", SF_MAX_GROUPS);
			return -1;
		}
		memset(&g[i], 0, sizeof(g[i]));
		snprintf(g[i].key, sizeof(g[i].key), "%s", key);
		g[i].model = s->model;
		g[i].geometry = json_object_get(s->js, "geometry");
		g[i].n = s->n;
		(*ng)++;
	}
	if (g[i].n != s->n) {
		snprintf(err, errlen, "%s is shard %u/%u but another %s shard split the plan "
			"into %u", s->dir, s->k, s->n, s->model, g[i].n);
		return -1;
	}
	if (g[i].by_k[s->k]) {
		snprintf(err, errlen, "%s and %s are both shard %u/%u of %s", g[i].by_k[s->k]->dir,
			s->dir, s->k, s->n, s->model);
		return -1;
	}
	g[i].by_k[s->k] = s;
	return 0;
}

int st_merge_main(const struct st_args *a, const char *prog)
{
	struct sf_shard *sh = calloc(SF_MAX_SHARDS, sizeof(*sh));
	struct sf_group *g = calloc(SF_MAX_GROUPS, sizeof(*g));
	char list[8192], *save = NULL, err[4600], command[8400];
	const char *dirs[SF_MAX_SHARDS];
	size_t nd = 0, ng = 0, measured = 0, missing = 0;
	int rc = FM_EXIT_RUN, incomplete = 0;
	json_t *out = NULL, *groups, *points;

	if (sh == NULL || g == NULL) {
		fprintf(stderr, FM_PROG ": out of memory\n");
		goto done;
	}
	snprintf(command, sizeof(command), "%s study --merge %s --out %s", prog, a->merge_text,
		a->out);
	snprintf(list, sizeof(list), "%s", a->merge_text);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (nd == SF_MAX_SHARDS) {
			fprintf(stderr, FM_PROG ": --merge: at most %d directories\n", SF_MAX_SHARDS);
			rc = FM_EXIT_USAGE;
			goto done;
		}
		dirs[nd++] = t;
	}
	if (nd == 0) {
		fprintf(stderr, FM_PROG ": --merge: no directory given\n");
		rc = FM_EXIT_USAGE;
		goto done;
	}
	for (size_t i = 0; i < nd; i++) {
		if (sf_load(dirs[i], &sh[i], err, sizeof(err)) != 0 ||
		    sf_place(&sh[i], g, &ng, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": --merge: %s\n", err);
			goto done;
		}
		if (strcmp(sh[i].base, sh[0].base) != 0) {
			fprintf(stderr, FM_PROG ": --merge: %s ran another study than %s:\n  %s\n  "
				"%s\n", sh[i].dir, sh[0].dir, sh[i].base, sh[0].base);
			goto done;
		}
		if (!sf_same_plan(json_object_get(sh[i].js, "points"),
		    json_object_get(sh[0].js, "points"), err, sizeof(err))) {
			fprintf(stderr, FM_PROG ": --merge: %s's plan is not %s's (%s): another "
				"build or library?\n", sh[i].dir, sh[0].dir, err);
			goto done;
		}
		incomplete |= strcmp(sh[i].status, "complete") != 0;
	}
	if (fl_mkdir_p(a->out, 0755, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": cannot make %s: %s\n", a->out, err);
		goto done;
	}
	groups = json_array();
	points = json_array();
	for (size_t i = 0; i < ng; i++) {
		json_t *shards = json_array();

		sf_take_points(&g[i], json_object_get(sh[0].js, "points"));
		measured += g[i].measured;
		missing += g[i].missing;
		for (unsigned k = 0; k < g[i].n; k++) {
			const struct sf_shard *s = g[i].by_k[k];

			json_array_append_new(shards, s ? json_pack("{s:s,s:s,s:s,s:I,s:I,s:s}", "dir",
				s->dir, "host", s->host, "host_cpu", s->host_cpu, "index",
				(json_int_t)s->k, "count", (json_int_t)s->n, "status", s->status) :
				json_pack("{s:n,s:I,s:I,s:s}", "dir", "index", (json_int_t)k, "count",
				(json_int_t)g[i].n, "status", "not given"));
		}
		json_array_append_new(groups, json_pack("{s:s,s:O,s:o,s:I,s:I}", "cpu_model",
			g[i].model, "geometry", g[i].geometry, "shards", shards, "points_measured",
			(json_int_t)g[i].measured, "points_not_measured", (json_int_t)g[i].missing));
		json_array_extend(points, g[i].points);
	}
	incomplete |= missing > 0;
	out = json_pack("{s:s,s:b,s:s,s:s,s:o,s:o}", "command", command, "fleet", 1,
		"study_command", sh[0].base, "status", incomplete ? "incomplete" : "complete",
		"groups", groups, "points", points);
	{
		char path[4200];

		snprintf(path, sizeof(path), "%s/study.json", a->out);
		if (out == NULL || json_dump_file(out, path, JSON_INDENT(2)) != 0) {
			fprintf(stderr, FM_PROG ": cannot write %s\n", path);
			goto done;
		}
	}
	if (sf_write_csv(a->out, g, ng) != 0 ||
	    sf_write_summary(a->out, g, ng, command, sh[0].base) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s/study.csv or summary.md: %s\n", a->out,
			strerror(errno));
		goto done;
	}
	if (fm_write_report_html(a->out, "study", err, sizeof(err)) != 0)
		fprintf(stderr, FM_PROG ": warning: %s/report.html not written: %s\n", a->out, err);
	printf("study --merge: %zu shard%s, %zu CPU model%s, %zu point%s measured, %zu not "
		"measured; written to %s (summary.md, report.html, study.csv, study.json)\n", nd,
		nd == 1 ? "" : "s", ng, ng == 1 ? "" : "s", measured, measured == 1 ? "" : "s",
		missing, a->out);
	if (incomplete)
		fprintf(stderr, FM_PROG ": --merge: incomplete: %zu point%s measured by no shard "
			"or a shard's study did not complete (see summary.md)\n", missing,
			missing == 1 ? "" : "s");
	rc = incomplete ? FM_EXIT_RUN : FM_EXIT_OK;
done:
	json_decref(out);
	for (size_t i = 0; sh && i < nd; i++)
		json_decref(sh[i].js);
	for (size_t i = 0; g && i < ng; i++)
		json_decref(g[i].points);
	free(sh);
	free(g);
	return rc;
}
