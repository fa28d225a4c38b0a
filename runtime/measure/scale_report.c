/* scale_report.c: frontload-measure scale's figures and report: each configuration's
 * figures from its run's result.json, then scale.csv, scale.json, the gnuplot plot,
 * summary.md with a reading computed from the measured configurations, and report.html. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mutil.h"
#include "process.h"
#include "report_html.h"
#include "scale.h"

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* CPUs in a list such as "0-3,8,10-11"; 0 when it cannot be read. */
static double sc_count_cpus(const char *s)
{
	double n = 0;

	while (s && *s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;

		if (end == s || lo < 0)
			return 0;
		if (*end == '-') {
			s = end + 1;
			hi = strtol(s, &end, 10);
			if (end == s || hi < lo)
				return 0;
		}
		n += (double)(hi - lo + 1);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return 0;
	}
	return n;
}

/* A counter metric of the leaves over the final window, summed over instances (num / den x
 * mul of pmu.total's counts), or the first instance's "unsupported: why". New reference. */
static json_t *sc_pmu_metric(json_t *instances, const char *num, const char *den, double mul)
{
	double sn = 0, sd = 0;
	json_t *in;
	size_t i;

	json_array_foreach(instances, i, in) {
		json_t *pmu = json_object_get(json_object_get(json_object_get(in, "leaf_stats"),
			"final_window"), "pmu");
		json_t *tot = json_object_get(pmu, "total");
		json_t *vn = json_object_get(tot, num), *vd = json_object_get(tot, den);
		const char *why = json_string_value(json_object_get(pmu, "why"));
		char buf[512];

		if (!json_is_true(json_object_get(pmu, "supported"))) {
			snprintf(buf, sizeof(buf), "unsupported: instance %zu: %s", i, why ? why :
				"the leaf reported no counters");
			return json_string(buf);
		}
		if (!json_is_number(vn) || !json_is_number(vd)) {
			const char *s = json_string_value(json_is_number(vn) ? vd : vn);

			snprintf(buf, sizeof(buf), "unsupported: instance %zu: %s", i, s ? s :
				"no count in the final window");
			return json_string(buf);
		}
		sn += json_number_value(vn);
		sd += json_number_value(vd);
	}
	if (json_array_size(instances) == 0)
		return json_string("unsupported: the run reported no instance");
	if (!(sd > 0))
		return json_string("unsupported: nothing counted in the final window");
	return json_real(mul * sn / sd);
}

void sc_read_result(struct sc_config *c)
{
	json_t *r = c->result, *ins = json_object_get(r, "instances"), *in;
	size_t i;

	c->qps = c->cpus_used = c->qps_per_cpu = c->p50_ms = c->p95_ms = c->p99_ms = NAN;
	c->host_cpu_pct = NAN;
	c->status = NULL;
	c->qps_kind = NULL;
	json_decref(c->ipc);
	json_decref(c->l1i_mpki);
	if (r == NULL) {
		c->ipc = json_string(c->ran ? "unsupported: the run wrote no result.json" :
			"unsupported: not run");
		c->l1i_mpki = json_incref(c->ipc);
		return;
	}
	c->status = json_string_value(json_object_get(r, "status"));
	if (json_is_true(json_object_get(r, "is_fixed_qps"))) {
		/* A fixed rate's window cut short (interrupted) measured no rate. */
		if (json_is_true(json_object_get(r, "final_complete")))
			c->qps = jnum(r, "final_achieved_qps");
		c->qps_kind = "fixed_achieved";
	} else if (isfinite(jnum(r, "sla_bound_qps"))) {
		c->qps = jnum(r, "sla_bound_qps");
		c->qps_kind = "sla_bound";
	} else if (isfinite(jnum(r, "lower_bound_qps"))) {
		c->qps = jnum(r, "lower_bound_qps");
		c->qps_kind = "lower_bound";
	}
	if (!isfinite(c->qps))
		c->qps_kind = NULL;
	/* An instance not pinned (one instance without --pin) may use every usable CPU. */
	double host = jnum(json_array_get(json_object_get(r, "machines"), 0), "num_cpus_usable");
	c->cpus_used = 0;
	json_array_foreach(ins, i, in) {
		const char *cpus = json_string_value(json_object_get(in, "cpus"));

		c->cpus_used += cpus ? sc_count_cpus(cpus) : host;
	}
	if (!(c->cpus_used > 0))
		c->cpus_used = NAN;
	c->qps_per_cpu = c->qps / c->cpus_used;
	c->p50_ms = jnum(r, "p50_ms");
	c->p95_ms = jnum(r, "p95_ms");
	c->p99_ms = jnum(r, "p99_ms");
	c->host_cpu_pct = jnum(r, "host_cpu_util_pct");
	c->ipc = sc_pmu_metric(ins, "instructions", "cycles", 1);
	c->l1i_mpki = sc_pmu_metric(ins, "l1i_misses", "instructions", 1000);
	if (!isfinite(c->qps) && c->why[0] == '\0' &&
	    json_is_true(json_object_get(r, "is_fixed_qps")))
		snprintf(c->why, sizeof(c->why), "no rate measured: the fixed rate's window did "
			"not complete (run status %s)", c->status ? c->status : "unknown");
	else if (!isfinite(c->qps) && c->why[0] == '\0')
		snprintf(c->why, sizeof(c->why), "no rate measured: %s",
			json_string_value(json_object_get(r, "converged_reason")) ?
			json_string_value(json_object_get(r, "converged_reason")) :
			json_string_value(json_object_get(r, "status_reason")) ?
			json_string_value(json_object_get(r, "status_reason")) : "see the run");
}

/* ---- files ---- */

static void fnum(FILE *fp, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(fp, fmt, v);
}

static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A counter metric for a table: the number, or "unsupported" (the reason is in JSON). */
static void md_pmu(FILE *fp, json_t *v)
{
	if (json_is_number(v))
		fprintf(fp, " %.3f |", json_number_value(v));
	else
		fprintf(fp, " unsupported |");
}

static void md_num(FILE *fp, double v, const char *fmt)
{
	fputc(' ', fp);
	if (isfinite(v))
		fprintf(fp, fmt, v);
	else
		fputc('-', fp);
	fputs(" |", fp);
}

/* Columns: 1 name, 2 instances, 3 ranker_threads, 4 cpus, 5 qps, 6 qps_per_cpu, 7 qps_kind,
 * 8 p50_ms, 9 p95_ms, 10 p99_ms, 11 host_cpu_pct, 12 ipc, 13 l1i_mpki, 14 status, 15
 * exit_status, 16 wall_s. scale.gp reads them by number. */
static int sc_write_csv(const char *dir, const struct sc_config *c, size_t n)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/scale.csv", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "name,instances,ranker_threads,cpus,qps,qps_per_cpu,qps_kind,p50_ms,p95_ms,"
		"p99_ms,host_cpu_pct,ipc,l1i_mpki,status,exit_status,wall_s\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(fp, "%s,%llu,%llu,", c[i].name, (unsigned long long)c[i].instances,
			(unsigned long long)c[i].threads);
		fnum(fp, c[i].cpus_used, "%.0f");
		fputc(',', fp);
		fnum(fp, c[i].qps, "%.6g");
		fputc(',', fp);
		fnum(fp, c[i].qps_per_cpu, "%.6g");
		fprintf(fp, ",%s,", c[i].qps_kind ? c[i].qps_kind : "");
		fnum(fp, c[i].p50_ms, "%.6g");
		fputc(',', fp);
		fnum(fp, c[i].p95_ms, "%.6g");
		fputc(',', fp);
		fnum(fp, c[i].p99_ms, "%.6g");
		fputc(',', fp);
		fnum(fp, c[i].host_cpu_pct, "%.4g");
		fputc(',', fp);
		if (json_is_number(c[i].ipc))
			fprintf(fp, "%.6g", json_number_value(c[i].ipc));
		fputc(',', fp);
		if (json_is_number(c[i].l1i_mpki))
			fprintf(fp, "%.6g", json_number_value(c[i].l1i_mpki));
		fprintf(fp, ",%s,", c[i].status ? c[i].status : c[i].interrupted ? "interrupted" :
			"not run");
		if (c[i].ran)
			fprintf(fp, "%d", c[i].exit_status);
		fputc(',', fp);
		if (c[i].ran)
			fprintf(fp, "%.1f", c[i].wall_s);
		fputc('\n', fp);
	}
	return fclose(fp) == 0 ? 0 : -1;
}

static int sc_write_json(const char *dir, const struct sc_config *c, size_t n,
	const struct sc_args *a, const char *command, double wall_s, int stop_signal)
{
	json_t *cs = json_array(), *o;
	char path[4200];
	int rc;

	for (size_t i = 0; i < n; i++) {
		json_t *r = c[i].result;
		json_t *j = json_pack("{s:s,s:I,s:I,s:b,s:b,s:o,s:o,s:o,s:s?,s:o,s:o,s:o,s:o,s:O,"
			"s:O,s:s?,s:o,s:O?,s:s,s:o}",
			"name", c[i].name, "instances", (json_int_t)c[i].instances,
			"ranker_threads", (json_int_t)c[i].threads, "fill", c[i].fill,
			"oversubscribed", isfinite(c[i].cpus_used) &&
			(double)(c[i].instances * c[i].threads) > c[i].cpus_used,
			"cpus", jreal(c[i].cpus_used), "qps", jreal(c[i].qps),
			"qps_per_cpu", jreal(c[i].qps_per_cpu), "qps_kind", c[i].qps_kind,
			"p50_ms", jreal(c[i].p50_ms), "p95_ms", jreal(c[i].p95_ms),
			"p99_ms", jreal(c[i].p99_ms), "host_cpu_pct", jreal(c[i].host_cpu_pct),
			"ipc", c[i].ipc ? c[i].ipc : json_null(),
			"l1i_mpki", c[i].l1i_mpki ? c[i].l1i_mpki : json_null(),
			"status", c[i].status, "exit_status", c[i].ran ?
			json_integer(c[i].exit_status) : json_null(),
			"converged_reason", json_object_get(r, "converged_reason"),
			"run_dir", "", "wall_s", c[i].ran ? json_real(c[i].wall_s) :
			json_null());

		if (j == NULL)
			continue;
		if (c[i].why[0])
			json_object_set_new(j, "why", json_string(c[i].why));
		json_object_set_new(j, "run_dir", json_sprintf("runs/%s", c[i].name));
		json_array_append_new(cs, j);
	}
	json_t *build = fm_build_json();
	o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:s?,s:s?,s:b,s:f}", "tool", FM_PROG " scale",
		"command", command, "configurations", cs, "host", fm_host_json(),
		"build", build ? build : json_null(), "cpus", (json_int_t)a->cpus,
		"run_args", a->run_args, "leaf_args", a->leaf_args, "quick", a->quick,
		"wall_s", wall_s);
	json_object_set_new(o, "status", json_string(stop_signal ? "interrupted" :
		"complete"));
	json_object_set_new(o, "interrupted_by_signal", stop_signal ? json_integer(stop_signal) :
		json_null());
	snprintf(path, sizeof(path), "%s/scale.json", dir);
	rc = fm_write_json(o, path);
	json_decref(o);
	return rc;
}

/* scale.gp and its plot (bars of QPS and QPS per CPU). 0, or -1 (gnuplot failed). */
static int sc_plots(const char *dir, const struct sc_config *c, size_t n)
{
	static const char *const terms[2][2] = {
		{ "pngcairo size 900,500 font ',10'", "png" }, { "svg size 900,500", "svg" },
	};
	char path[4200];
	size_t have = 0;
	FILE *fp;

	for (size_t i = 0; i < n; i++)
		have += isfinite(c[i].qps) != 0;
	if (have == 0)
		return -1;
	snprintf(path, sizeof(path), "%s/scale.gp", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# scale.gp: the plot of scale.csv (written by " FM_PROG " scale)\n"
		"set datafile separator ','\nset key outside right top\nset grid ytics\n"
		"set style data histograms\nset style histogram clustered gap 1\n"
		"set style fill solid 0.8 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
		"set ylabel 'requests/s'\nset xlabel 'instances x RANKER threads each'\n"
		"set title 'QPS and QPS per CPU by configuration'\n");
	for (int t = 0; t < 2; t++)
		fprintf(fp, "\nset terminal %s\nset output 'qps.%s'\nplot 'scale.csv' using "
			"5:xticlabels(1) title 'QPS (summed over instances)', '' using 6 title "
			"'QPS per CPU'\n", terms[t][0], terms[t][1]);
	fclose(fp);
	const char *const argv[] = { "gnuplot", "scale.gp", NULL };
	struct fl_spawn_opts o = { .cwd = dir, .stderr_path = "gnuplot.log" };
	return fl_spawn_wait(argv, &o, NULL, 0) == 0 ? 0 : -1;
}

/* The reading: the best QPS per CPU, and each multi-instance configuration against the
 * one-instance configuration on the same CPUs (and, per instance count, threads). */
static void sc_reading(FILE *fp, const struct sc_config *c, size_t n)
{
	const struct sc_config *best = NULL;
	int said = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(c[i].qps_per_cpu) && (best == NULL ||
		    c[i].qps_per_cpu > best->qps_per_cpu))
			best = &c[i];
	fprintf(fp, "\nReading:\n\n");
	if (best == NULL) {
		fprintf(fp, "- No configuration measured a rate: nothing to compare.\n");
		return;
	}
	fprintf(fp, "- Highest QPS per CPU: %s (%llu x %llu), %.4g requests/s on %.0f CPUs, "
		"%.4g a CPU (%s).\n", best->name, (unsigned long long)best->instances,
		(unsigned long long)best->threads, best->qps, best->cpus_used, best->qps_per_cpu,
		best->qps_kind);
	for (size_t i = 0; i < n; i++) {
		const struct sc_config *m = &c[i], *one = NULL;

		if (m->instances < 2 || !isfinite(m->qps))
			continue;
		for (size_t k = 0; k < n; k++)
			if (c[k].instances == 1 && isfinite(c[k].qps) && c[k].cpus_used ==
			    m->cpus_used && c[k].threads == m->instances * m->threads)
				one = &c[k];
		if (one == NULL)
			continue;
		fprintf(fp, "- %llu small instances against one large on the same %.0f CPUs "
			"(%llu ranker threads in all): %s %.4g requests/s against %s %.4g (x %.3f); "
			"p95 %.4g ms against %.4g ms.\n", (unsigned long long)m->instances,
			m->cpus_used, (unsigned long long)(m->instances * m->threads), m->name, m->qps,
			one->name, one->qps, m->qps / one->qps, m->p95_ms, one->p95_ms);
		said = 1;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++) {
			const struct sc_config *x = &c[i], *y = &c[k];

			if (x->instances != y->instances || x->threads >= y->threads ||
			    !isfinite(x->qps) || !isfinite(y->qps))
				continue;
			fprintf(fp, "- %llu instance%s, %llu against %llu ranker threads each: %.4g "
				"against %.4g requests/s (x %.3f).\n", (unsigned long long)x->instances,
				x->instances == 1 ? "" : "s", (unsigned long long)y->threads,
				(unsigned long long)x->threads, y->qps, x->qps, y->qps / x->qps);
			said = 1;
		}
	if (!said)
		fprintf(fp, "- No two measured configurations share their CPUs or their instance "
			"count: no comparison.\n");
	for (size_t i = 0; i < n; i++)
		if (c[i].qps_kind && strcmp(c[i].qps_kind, "sla_bound") != 0) {
			fprintf(fp, "- Rates marked lower_bound did not converge (a bound on the knee, "
				"not an SLA figure); fixed_achieved are replies/s at fixed rates, not a "
				"search.\n");
			break;
		}
}

static int sc_write_summary(const char *dir, const struct sc_config *c, size_t n,
	const struct sc_args *a, const char *command, double wall_s, int plots_ok)
{
	char path[4200], d1[32];
	json_t *build;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/summary.md", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	build = fm_build_json();
	fprintf(fp, "# frontload scaling study\n\nCommand:\n\n    %s\n\n", command);
	fm_host_line(fp);
	if (build)
		fprintf(fp, "Build: configure %s (copies %lld).\n",
			json_string_length(json_object_get(build, "configure_args")) ?
			json_string_value(json_object_get(build, "configure_args")) : "(defaults)",
			(long long)json_integer_value(json_object_get(build, "copies")));
	fprintf(fp, "Each configuration: `frontload run --instances N --leaf-args "
		"\"--ranker-threads T%s%s\"%s%s%s` into runs/iN-tT/ (instances pinned to their "
		"own CPU ranges, rates per instance, QPS summed, p95 the worst instance's). "
		"Took %s.\n\n", a->leaf_args ? " " : "", a->leaf_args ? a->leaf_args : "",
		a->quick ? " --quick" : "", a->run_args ? " " : "", a->run_args ? a->run_args : "",
		fm_dur_str(wall_s, d1, sizeof(d1)));
	fprintf(fp, "| configuration | instances | RANKER threads each | CPUs | QPS | QPS per "
		"CPU | rate is | p50 ms | p95 ms | p99 ms | host CPU %% | IPC | L1i MPKI | status "
		"|\n|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct sc_config *x = &c[i];

		fprintf(fp, "| %s | %llu | %llu%s |", x->name, (unsigned long long)x->instances,
			(unsigned long long)x->threads, x->fill ? " (fill)" : "");
		md_num(fp, x->cpus_used, "%.0f");
		md_num(fp, x->qps, "%.4g");
		md_num(fp, x->qps_per_cpu, "%.4g");
		fprintf(fp, " %s |", x->qps_kind ? x->qps_kind : "-");
		md_num(fp, x->p50_ms, "%.4g");
		md_num(fp, x->p95_ms, "%.4g");
		md_num(fp, x->p99_ms, "%.4g");
		md_num(fp, x->host_cpu_pct, "%.3g");
		md_pmu(fp, x->ipc);
		md_pmu(fp, x->l1i_mpki);
		if (x->ran)
			fprintf(fp, " %s, exit %d (%s)%s%s |\n", x->status ? x->status : "no result",
				x->exit_status, fm_dur_str(x->wall_s, d1, sizeof(d1)),
				x->why[0] ? ": " : "", x->why);
		else
			fprintf(fp, " %s |\n", x->why[0] ? x->why : "not run");
	}
	for (size_t i = 0; i < n; i++)
		if (json_is_string(c[i].ipc)) {
			fprintf(fp, "\nIPC and L1i MPKI: %s\n", json_string_value(c[i].ipc));
			break;
		}
	if (plots_ok)
		fprintf(fp, "\n![QPS and QPS per CPU by configuration](qps.svg)\n");
	else
		fprintf(fp, "\nNo plot: no configuration measured a rate, or gnuplot failed (see "
			"gnuplot.log).\n");
	sc_reading(fp, c, n);
	fprintf(fp, "\n## Files\n\nreport.html (this summary as one page), scale.csv, "
		"scale.json, scale.gp%s, runs/ (each configuration's run directory and log).\n",
		plots_ok ? ", qps.png, qps.svg" : "");
	fclose(fp);
	json_decref(build);
	return 0;
}

int sc_write_report(const char *dir, struct sc_config *c, size_t n, const struct sc_args *a,
	const char *command, double wall_s, int stop_signal)
{
	char err[1024];
	int rc = 0, plots_ok;

	if (sc_write_csv(dir, c, n) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s/scale.csv\n", dir);
		rc = -1;
	}
	if (sc_write_json(dir, c, n, a, command, wall_s, stop_signal) != 0)
		rc = -1;
	plots_ok = sc_plots(dir, c, n) == 0;
	if (sc_write_summary(dir, c, n, a, command, wall_s, plots_ok) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s/summary.md\n", dir);
		return -1;
	}
	if (fm_write_report_html(dir, "scale", err, sizeof(err)) != 0)
		fprintf(stderr, FM_PROG ": warning: %s/report.html not written: %s\n", dir, err);
	return rc;
}
