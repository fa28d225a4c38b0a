/* study_report.c: frontload-measure study's report: study.csv, study.json, the gnuplot
 * script and its plots, and summary.md; separate from the points and their run. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cpumodel.h"
#include "mutil.h"
#include "simrun.h"
#include "process.h"
#include "study.h"

/* "512 KiB", "2.5 MiB": bytes for a reader. */
char *st_bstr(double b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (!isfinite(b)) {
		snprintf(buf, len, "-");
		return buf;
	}
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%.3g %s", b, unit[u]);
	return buf;
}

static double sh(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

static const char *const st_cols[ST_NFIG] = {
	"l1i_mpki", "ll_code_mpki", "cond_branch_mpki", "indirect_branch_mpki",
	"cond_branch_pct", "cond_taken_pct", "call_ret_pct", "mem_pct", "scalar_fp_pct",
	"div_pct", "insns_per_taken_branch", "insns_per_request",
	"generated_ir_pct", "generated_l1i_miss_pct",
};

const char *st_fig_name(int c)
{
	return c >= 0 && c < ST_NFIG ? st_cols[c] : "?";
}

void st_fill_figures(struct st_point *q)
{
	const struct fl_mix *x = &q->sim.mix;
	double req = (double)q->run.requests, *v = q->fig;

	v[0] = x->l1i_mpki.available ? x->l1i_mpki.value : NAN;
	v[1] = x->lli_mpki.available ? x->lli_mpki.value : NAN;
	v[2] = x->cond_mpki.available ? x->cond_mpki.value : NAN;
	v[3] = x->ind_mpki.available ? x->ind_mpki.value : NAN;
	v[4] = x->insns ? sh(x->cond, x->insns) : NAN;
	v[5] = x->insns ? 100 * x->taken_rate : NAN;
	v[6] = x->insns ? sh(x->call + x->call_ind + x->ret, x->insns) : NAN;
	v[7] = x->insns ? sh(x->loads + x->stores, x->insns) : NAN;
	v[8] = x->insns ? sh(x->scalar_fp, x->insns) : NAN;
	v[9] = x->insns ? sh(x->int_div + x->fp_div, x->insns) : NAN;
	v[10] = x->taken_branches ? x->insns_per_taken : NAN;
	v[11] = (double)x->ir_hw / req; /* each rep string execution once (mix.h) */
	v[12] = v[13] = NAN;            /* the harness's objects are not split: leaf only */
}

/* CSV columns: a point's figures (NAN = not measured). */
static void st_row(const struct st_point *q, double v[ST_NFIG])
{
	for (int c = 0; c < ST_NFIG; c++)
		v[c] = q->done ? q->fig[c] : NAN;
}

static void fnum(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.6g", v);
}

/* The plan's columns of a point (CSV and JSON share the names). */
static const char *const st_plan_cols[9] = {
	"code_bytes", "code_bytes_hot", "code_bytes_cold", "reuse_p50_functions",
	"reuse_p90_functions", "reuse_p99_functions", "reuse_p50_hot_bytes",
	"reuse_p90_hot_bytes", "reuse_p99_hot_bytes",
};

static void st_plan_row(const struct st_point *q, double v[9])
{
	v[0] = q->code;
	v[1] = q->hot;
	v[2] = q->cold;
	for (int k = 0; k < 3; k++) {
		v[3 + k] = q->reuse_fn[k];
		v[6 + k] = q->reuse_b[k];
	}
}

static const char *st_status(const struct st_point *q)
{
	return q->done ? "ok" : q->skipped == 3 ? "other_shard" : q->skipped ? "skipped" :
		q->interrupted ? "interrupted" :
		"failed";
}

/* Columns: 1 kind, 2 footprint_bytes (asked), 3 active_functions, 4 dispatch, 5
 * zipf_alpha, 6..14 st_plan_cols, 15 calls_per_request, 16 i1_bytes, 17 status, 18..29
 * st_cols (18 l1i_mpki, 19 ll_code_mpki), 30 sim_wall_s, 31 estimate_s, then the leaf
 * points' own: 32 generated_ir_pct, 33 generated_l1i_miss_pct, 34
 * leaf_extractors_per_story (the leaf's calls per request: it x ST_LEAF_STORIES). study.gp
 * reads them by number. */
int st_write_csv(const char *dir, const struct st_point *p, size_t n)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.csv", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "kind,footprint_bytes,active_functions,dispatch,zipf_alpha");
	for (int c = 0; c < 9; c++)
		fprintf(fp, ",%s", st_plan_cols[c]);
	fprintf(fp, ",calls_per_request,i1_bytes,status");
	for (int c = 0; c < 12; c++)
		fprintf(fp, ",%s", st_cols[c]);
	fprintf(fp, ",sim_wall_s,estimate_s,%s,%s,leaf_extractors_per_story\n", st_cols[12],
		st_cols[13]);
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[ST_NFIG], pv[9];

		fprintf(fp, "%s,%llu,%llu,%s,", st_kind_str(q->kind),
			(unsigned long long)q->want_bytes, (unsigned long long)q->nfuncs,
			q->alpha < 0 ? "flat" : "zipf");
		if (q->alpha >= 0)
			fprintf(fp, "%g", q->alpha);
		st_plan_row(q, pv);
		for (int c = 0; c < 9; c++) {
			fputc(',', fp);
			fnum(fp, pv[c]);
		}
		fprintf(fp, ",%llu,%u,%s", (unsigned long long)q->calls, q->i1_bytes, st_status(q));
		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++) {
				fputc(',', fp);
				fnum(fp, v[c]);
			}
			fprintf(fp, ",%.1f", q->sim.wall_s);
		} else {
			for (int c = 0; c < 13; c++)
				fputc(',', fp);
		}
		fprintf(fp, ",%.1f,", q->eta_s);
		if (q->done) {
			fnum(fp, v[12]);
			fputc(',', fp);
			fnum(fp, v[13]);
		} else {
			fputc(',', fp);
		}
		fputc(',', fp);
		if (q->kind == ST_LEAF)
			fprintf(fp, "%llu", (unsigned long long)q->eps);
		fputc('\n', fp);
	}
	return fclose(fp) == 0 ? 0 : -1;
}

/* Some measured point of kind with this order (and calls / asked bytes when nonzero). */
static int st_has(const struct st_point *p, size_t n, int kind, double alpha,
	uint64_t calls, uint64_t want)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].done && p[i].kind == kind && p[i].alpha == alpha &&
		    (!calls || p[i].calls == calls) && (!want || p[i].want_bytes == want))
			return 1;
	return 0;
}

/* A gnuplot condition selecting rows of one order (columns 4 and 5). */
static void st_gp_order(FILE *fp, double alpha)
{
	if (alpha < 0)
		fprintf(fp, "strcol(4) eq \"flat\"");
	else
		fprintf(fp, "strcol(4) eq \"zipf\" && abs($5 - %.17g) < 1e-9", alpha);
}

/* Vertical lines at the I1 and LL sizes on a bytes axis. */
static void st_gp_caches(FILE *fp, const struct fm_run *r0)
{
	char g[64];

	fprintf(fp, "unset arrow\nunset label\n");
	fprintf(fp, "set arrow 1 from %u, graph 0 to %u, graph 1 nohead dt 2 lc rgb '#555555'\n"
		"set label 1 'L1i %s' at %u, graph 0.96 rotate by 90 right font ',8'\n",
		r0->geo.i1.size, r0->geo.i1.size, st_bstr(r0->geo.i1.size, g, sizeof(g)), r0->geo.i1.size);
	fprintf(fp, "set arrow 2 from %u, graph 0 to %u, graph 1 nohead dt 2 lc rgb '#555555'\n"
		"set label 2 'LL %s' at %u, graph 0.96 rotate by 90 right font ',8'\n",
		r0->geo.ll.size, r0->geo.ll.size, st_bstr(r0->geo.ll.size, g, sizeof(g)), r0->geo.ll.size);
}

/* Each plot's series, per order (and per calls value or per footprint), from study.csv.
 * A plot is written only with a series (gnuplot fails on an empty one): head, holding
 * "set output ...", comes before the first, and tail after the last. */
static void st_gp_footprint(FILE *fp, const struct st_point *p, size_t n,
	const struct st_args *a, const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t k = 0; k < a->ncalls; k++) {
			char o[32];

			if (!st_has(p, n, ST_SWEEP, a->alphas[j], a->calls[k], 0))
				continue;
			st_order_str(a->alphas[j], o, sizeof(o));
			for (int col = 18; col <= 19; col++) {
				fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq "
					"\"sweep\" && $15 == %llu && ", first ? head : "", first ? "" : ", ",
					(unsigned long long)a->calls[k]);
				st_gp_order(fp, a->alphas[j]);
				fprintf(fp, " ? $6 : 1/0):%d with linespoints dt %d lc %zu title '%s %s, "
					"%llu calls/req'", col, col == 18 ? 1 : 2, j * a->ncalls + k + 1,
					col == 18 ? "L1i" : "LL code", o, (unsigned long long)a->calls[k]);
				first = 0;
			}
		}
	/* The leaf points: the whole leaf process's L1i MPKI, as marks. */
	for (size_t j = 0; j < a->nalphas; j++) {
		char o[32];

		if (!st_has(p, n, ST_LEAF, a->alphas[j], 0, 0))
			continue;
		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq "
			"\"leaf\" && ", first ? head : "", first ? "" : ", ");
		st_gp_order(fp, a->alphas[j]);
		fprintf(fp, " ? $6 : 1/0):18 with points pt 7 ps 1.5 lc %zu title 'L1i %s, the "
			"running leaf'", j * a->ncalls + 1, o);
		first = 0;
	}
	if (!first)
		fprintf(fp, "%s", tail);
}

static void st_gp_calls(FILE *fp, const struct st_point *p, size_t n,
	const struct st_args *a, const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; a->ncalls > 1 && j < a->nalphas; j++)
		for (size_t i = 0; i < a->nbytes; i++) {
			char o[32], b[32];

			if (!st_has(p, n, ST_SWEEP, a->alphas[j], 0, a->bytes[i]))
				continue;
			st_order_str(a->alphas[j], o, sizeof(o));
			fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq "
				"\"sweep\" && $2 == %llu && ", first ? head : "", first ? "" : ", ",
				(unsigned long long)a->bytes[i]);
			st_gp_order(fp, a->alphas[j]);
			fprintf(fp, " ? $15 : 1/0):18 with linespoints title '%s, %s'",
				st_bstr((double)a->bytes[i], b, sizeof(b)), o);
			first = 0;
		}
	if (!first)
		fprintf(fp, "%s", tail);
}

static void st_gp_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const char *head, const char *tail)
{
	int first = 1;

	for (size_t j = 0; j < a->nalphas; j++) {
		char o[32];

		if (!st_has(p, n, ST_MRC, a->alphas[j], 0, 0))
			continue;
		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, "%s%s'study.csv' using (strcol(17) eq \"ok\" && strcol(1) eq \"mrc\" && ",
			first ? head : "", first ? "" : ", ");
		st_gp_order(fp, a->alphas[j]);
		fprintf(fp, " ? $16/1024 : 1/0):18 with linespoints title '%s'", o);
		first = 0;
	}
	if (!first)
		fprintf(fp, "%s", tail);
}

/* gnuplot script; runs gnuplot. Returns 0, or -1 (gnuplot failed). */
int st_plots(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const struct fm_run *r0, const char *cpu_i1)
{
	static const char *const terms[2][2] = {
		{ "pngcairo size 1000,600 font ',10'", "png" }, { "svg size 1000,600", "svg" },
	};
	char path[4200], b[32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/study.gp", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# study.gp: plots of study.csv (written by " FM_PROG " study)\n"
		"set datafile separator ','\nset key outside right top\nset grid\n");
	for (int t = 0; t < 2; t++) {
		char head[2048], caches[768];
		FILE *mf = fmemopen(caches, sizeof(caches), "w");

		if (mf == NULL) {
			fclose(fp);
			return -1;
		}
		st_gp_caches(mf, r0);
		fclose(mf);
		fprintf(fp, "\nset terminal %s\n", terms[t][0]);
		snprintf(head, sizeof(head), "set output 'mpki_vs_footprint.%s'\nset logscale x 2\n"
			"set format x '%%.0b %%BB'\nset ylabel 'MPKI (simulated, %s)'\n"
			"set xlabel 'executed code footprint (bytes of the plan; solid L1i, dashed "
			"LL code)'\nset title 'L1i and LL code MPKI vs code footprint'\n%splot ",
			terms[t][1], cpu_i1, caches);
		st_gp_footprint(fp, p, n, a, head, "\nunset arrow\nunset label\nset format x "
			"'%g'\nunset logscale x\n");
		snprintf(head, sizeof(head), "set output 'mpki_vs_calls.%s'\nset logscale x\n"
			"set ylabel 'L1i MPKI'\nset xlabel 'extractor calls per request'\n"
			"set title 'L1i MPKI vs calls per request'\nplot ", terms[t][1]);
		st_gp_calls(fp, p, n, a, head, "\nunset logscale x\n");
		snprintf(head, sizeof(head), "set output 'mrc.%s'\nset logscale x 2\n"
			"set ylabel 'L1i MPKI'\nset xlabel 'I1 size (KiB)'\nset title 'L1i "
			"miss-ratio curves: %s of code, %llu calls/request'\nplot ", terms[t][1],
			st_bstr((double)a->mrc_bytes, b, sizeof(b)), (unsigned long long)a->mrc_calls);
		if (!a->no_mrc)
			st_gp_mrc(fp, p, n, a, head, "\nunset logscale x\n");
	}
	fclose(fp);
	const char *const argv[] = { "gnuplot", "study.gp", NULL };
	struct fl_spawn_opts o = { .cwd = dir, .stderr_path = "gnuplot.log" };
	return fl_spawn_wait(argv, &o, NULL, 0) == 0 ? 0 : -1;
}

static void md_num(FILE *fp, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(fp, fmt, v);
	else
		fputs("-", fp);
}

static void st_sum_sweep(FILE *fp, const struct st_point *p, size_t n)
{
	char d1[32], d2[32], b1[32], b2[32], b3[32], b4[32], o[32];

	fprintf(fp, "## Code footprint x call order x calls per request\n\n"
		"Footprint: the executed code bytes of the plan (hot + cold parts of its active "
		"functions, from the library's symbols); reuse: distinct hot bytes called between "
		"two calls of the same function, median and 90th percentile over a lap.\n\n");
	fprintf(fp, "| footprint asked | functions | code bytes (hot + cold) | order | reuse p50 "
		"| reuse p90 | calls/req | L1i MPKI | LL code MPKI | cond br MPKI | ind br MPKI | "
		"cond br %% | taken %% | call+ret %% | ld+st %% | scalar FP %% | div %% | "
		"insns/taken br | instructions/request | status |\n");
	fprintf(fp, "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[ST_NFIG];

		if (q->kind != ST_SWEEP)
			continue;
		st_order_str(q->alpha, o, sizeof(o));
		fprintf(fp, "| %s | %llu | %s (%s + %s) | %s | %s | %s | %llu |",
			st_bstr((double)q->want_bytes, b1, sizeof(b1)), (unsigned long long)q->nfuncs,
			st_bstr(q->code, b2, sizeof(b2)), st_bstr(q->hot, b3, sizeof(b3)),
			st_bstr(q->cold, b4, sizeof(b4)), o, st_bstr(q->reuse_b[0], d1, sizeof(d1)),
			st_bstr(q->reuse_b[1], d2, sizeof(d2)), (unsigned long long)q->calls);
		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++) {
				fputc(' ', fp);
				md_num(fp, v[c], c == 11 ? "%.3g" : c == 1 || c == 3 || c == 9 ? "%.3f" :
					"%.2f");
				fputs(" |", fp);
			}
			fprintf(fp, " ok (%s%s) |\n", fm_dur_str(q->sim.wall_s, d1, sizeof(d1)),
				q->resumed ? ", an earlier run" : "");
		} else {
			for (int c = 0; c < 12; c++)
				fputs(" - |", fp);
			fprintf(fp, " %s: %s |\n", st_status(q), q->why);
		}
	}
}

/* The harness's sweep point of a leaf point (same plan, order and calls), or NULL. */
static const struct st_point *st_twin(const struct st_point *p, size_t n,
	const struct st_point *l)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].kind == ST_SWEEP && p[i].want_bytes == l->want_bytes &&
		    p[i].alpha == l->alpha && p[i].calls == l->calls)
			return &p[i];
	return NULL;
}

/* Leaf points beside their harness twins. */
static void st_sum_leaf(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a)
{
	char b1[32], b2[32], o[32], d1[32];
	int any = 0;

	for (size_t i = 0; i < n; i++)
		any |= p[i].kind == ST_LEAF;
	if (!any)
		return;
	fprintf(fp, "\n## The running leaf beside the extraction alone\n\n"
		"Headline points measured twice: the harness (frontload-simreq: the request path "
		"in process, no network, TLS or fanout) and the running leaf (validate --simulate: "
		"mock, leaf and driver as frontload run starts them, the whole leaf process under "
		"callgrind over a window of %llu whole requests, every thread). The leaf's calls "
		"per request are --extractors-per-story x the driver's %d stories. Leaf MPKI is per "
		"1000 instructions of the whole process (TLS, zstd, libc, OpenBLAS, fanout "
		"included); \"generated\" is the extractor library's share of the leaf's "
		"instructions and of its L1i misses.\n\n", (unsigned long long)a->leaf_requests,
		ST_LEAF_STORIES);
	fprintf(fp, "| footprint | functions | order | calls/req harness / leaf | L1i MPKI "
		"harness | L1i MPKI leaf | LL code MPKI harness | LL code MPKI leaf | cond br "
		"MPKI harness | cond br MPKI leaf | generated %% of leaf Ir | generated %% of leaf "
		"L1i misses | instructions/request harness | instructions/request leaf | leaf "
		"status |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		"---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct st_point *l = &p[i], *h;
		static const double none[ST_NFIG] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
			NAN, NAN, NAN, NAN, NAN, NAN };
		const double *hv, *lv;

		if (l->kind != ST_LEAF)
			continue;
		h = st_twin(p, n, l);
		hv = h && h->done ? h->fig : none;
		lv = l->done ? l->fig : none;
		st_order_str(l->alpha, o, sizeof(o));
		fprintf(fp, "| %s | %llu (%s) | %s | %llu / %llu |",
			st_bstr((double)l->want_bytes, b1, sizeof(b1)), (unsigned long long)l->nfuncs,
			st_bstr(l->code, b2, sizeof(b2)), o, (unsigned long long)l->calls,
			(unsigned long long)(l->eps * ST_LEAF_STORIES));
		const int cols[] = { 0, 1, 2 };
		for (int c = 0; c < 3; c++) {
			fputc(' ', fp);
			md_num(fp, hv[cols[c]], "%.2f");
			fputs(" | ", fp);
			md_num(fp, lv[cols[c]], "%.2f");
			fputs(" |", fp);
		}
		fputc(' ', fp);
		md_num(fp, lv[12], "%.1f");
		fputs(" | ", fp);
		md_num(fp, lv[13], "%.1f");
		fputs(" | ", fp);
		md_num(fp, hv[11], "%.3g");
		fputs(" | ", fp);
		md_num(fp, lv[11], "%.3g");
		if (l->done)
			fprintf(fp, " | ok (%s%s) |\n", fm_dur_str(l->sim.wall_s, d1, sizeof(d1)),
				l->resumed ? ", an earlier run" : "");
		else
			fprintf(fp, " | %s: %s |\n", st_status(l), l->why);
	}
}

static void st_sum_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0)
{
	char b[32], o[32];

	fprintf(fp, "\n## L1i miss-ratio curves (%s of code, %llu calls/request, I1 %u-way "
		"%u B lines)\n\n| I1 |", st_bstr((double)a->mrc_bytes, b, sizeof(b)),
		(unsigned long long)a->mrc_calls, r0->geo.i1.assoc, r0->geo.i1.line);
	for (size_t j = 0; j < a->nalphas; j++) {
		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, " L1i MPKI, %s |", o);
	}
	fprintf(fp, "\n|---:|");
	for (size_t j = 0; j < a->nalphas; j++)
		fprintf(fp, "---:|");
	fprintf(fp, "\n");
	for (size_t s = 0; s < a->nsizes; s++) {
		fprintf(fp, "| %llu KiB |", (unsigned long long)a->sizes_kib[s]);
		for (size_t j = 0; j < a->nalphas; j++) {
			const struct st_point *hit = NULL;

			/* The point asked for this size (its I1 may have been fitted). */
			for (size_t i = 0, k = 0; i < n; i++) {
				if (p[i].kind != ST_MRC || p[i].alpha != a->alphas[j])
					continue;
				if (k++ == s)
					hit = &p[i];
			}
			fputc(' ', fp);
			if (hit && hit->done)
				md_num(fp, hit->fig[0], "%.2f");
			else
				fprintf(fp, "%s", hit ? st_status(hit) : "-");
			fputs(" |", fp);
		}
		fprintf(fp, "\n");
	}
}

int st_write_summary(const char *dir, const struct st_point *p, size_t n,
	const struct st_args *a, const struct fm_run *r0, json_t *notes, const char *command,
	double total_s, double wall_s, const struct st_model *m, int plots_ok)
{
	char path[4200], g1[64], g2[64], g3[64], d1[32], d2[32];
	json_t *build;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/summary.md", dir);
	fp = fopen(path, "w");
	if (fp == NULL)
		return -1;
	build = fm_build_json();
	fprintf(fp, "# frontload front-end study\n\n");
	fprintf(fp, "Command:\n\n    %s\n\n", command);
	if (a->shard_n > 1)
		fprintf(fp, "Shard %u/%u of a fleet study: this host measured the points whose "
			"index modulo %u is %u; the others are listed as another shard's. `study "
			"--merge` joins the shards into one report.\n\n", a->shard_k, a->shard_n,
			a->shard_n, a->shard_k);
	fm_host_line(fp);
	if (build != NULL)
		fprintf(fp, "Build: configure %s (copies %lld, seed %lld); ",
			json_string_length(json_object_get(build, "configure_args")) ?
			json_string_value(json_object_get(build, "configure_args")) : "(defaults)",
			(long long)json_integer_value(json_object_get(build, "copies")),
			(long long)json_integer_value(json_object_get(build, "seed")));
	else
		fprintf(fp, "Build: config.json not found beside " FM_PROG "; ");
	fprintf(fp, "library %.0f functions, %.0f copies of each variant; the plan's functions "
		"at most %.0f, %s of code (mean %.0f B a function).\n", m->lib_functions,
		m->lib_copies, m->plan_functions, st_bstr(m->plan_bytes, g1, sizeof(g1)),
		m->plan_bytes / m->plan_functions);
	fprintf(fp, "Path: simulated (valgrind 3.19 callgrind, --cache-sim=yes; sweep points also "
		"--branch-sim=yes --dump-instr=yes --collect-jumps=yes and the executed instructions' "
		"classes, decoded with Capstone).\n");
	fprintf(fp, "Geometry (%s; sizes marked on the footprint plot): I1 %s, D1 %s, LL %s.\n",
		a->cpu, fm_cache_str(&r0->geo.i1, g1, sizeof(g1)), fm_cache_str(&r0->geo.d1, g2,
		sizeof(g2)), fm_cache_str(&r0->geo.ll, g3, sizeof(g3)));
	for (size_t i = 0; i < json_array_size(notes); i++)
		fprintf(fp, "Note: %s.\n", json_string_value(json_array_get(notes, i)));
	fprintf(fp, "Each point: %llu warmup + %llu measured requests (collection only around "
		"the measured requests' processing); other knobs:", (unsigned long long)a->warmup,
		(unsigned long long)a->requests);
	for (int i = 0; i + 1 < r0->nknobs; i += 2)
		fprintf(fp, " --%s%s%s", r0->knobs[i], r0->knobs[i + 1] ? " " : "",
			r0->knobs[i + 1] ? r0->knobs[i + 1] : "");
	fprintf(fp, "%s.\n", r0->nknobs ? "" : " simreq defaults (the leaf's)");
	fprintf(fp, "Estimated %s, took %s.\n\n", fm_dur_str(total_s, d1, sizeof(d1)),
		fm_dur_str(wall_s, d2, sizeof(d2)));
	st_sum_sweep(fp, p, n);
	rd_plot(fp, dir, plots_ok, "mpki_vs_footprint", "L1i and LL code MPKI vs code footprint");
	rd_sweep(fp, p, n, a, r0);
	st_sum_leaf(fp, p, n, a);
	rd_leaf(fp, p, n);
	rd_calls(fp, p, n, a, dir, plots_ok);
	if (!a->no_mrc) {
		st_sum_mrc(fp, p, n, a, r0);
		rd_plot(fp, dir, plots_ok, "mrc", "L1i miss-ratio curves");
		rd_mrc(fp, p, n, a, r0);
	}
	rd_anchors(fp, p, n, a, r0, m);
	fprintf(fp, "\n## Files\n\nreport.html (this summary as one self-contained page, the "
		"plots inline), study.csv (every point), study.json, study.gp");
	rd_plot_list(fp, dir, plots_ok);
	fprintf(fp, "\n## Limits of the simulated path\n\n");
	for (int i = 0; fm_sim_limits[i]; i++)
		fprintf(fp, "- %s.\n", fm_sim_limits[i]);
	fclose(fp);
	json_decref(build);
	return 0;
}

/* The points, the host, the geometry notes, the library and the caches, as study.json. */
void st_write_json(const char *dir, const struct st_point *p, size_t n, const char *command,
	json_t *notes, const struct st_model *m, const struct st_args *a, const struct fm_run *r0,
	int stop_signal)
{
	json_t *js = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double v[ST_NFIG], pv[9];
		json_t *o = json_pack("{s:s,s:I,s:I,s:s,s:o,s:I,s:I,s:s,s:f}", "kind",
			st_kind_str(q->kind), "footprint_bytes",
			(json_int_t)q->want_bytes, "active_functions", (json_int_t)q->nfuncs,
			"dispatch", q->alpha < 0 ? "flat" : "zipf", "zipf_alpha", q->alpha < 0 ?
			json_null() : json_real(q->alpha), "calls_per_request", (json_int_t)q->calls,
			"i1_bytes", (json_int_t)q->i1_bytes, "status", st_status(q), "estimate_s",
			q->eta_s);

		st_plan_row(q, pv);
		for (int c = 0; c < 9; c++)
			json_object_set_new(o, st_plan_cols[c], isfinite(pv[c]) ? json_real(pv[c]) :
				json_null());
		if (q->kind == ST_LEAF)
			json_object_set_new(o, "leaf", json_pack("{s:I,s:I,s:I}",
				"extractors_per_story", (json_int_t)q->eps, "calls_per_request",
				(json_int_t)(q->eps * ST_LEAF_STORIES), "requests", (json_int_t)q->lreq));

		if (q->done) {
			st_row(q, v);
			for (int c = 0; c < 12; c++)
				json_object_set_new(o, st_cols[c], isfinite(v[c]) ? json_real(v[c]) :
					json_null());
			json_object_set_new(o, "command", json_string(q->sim.cmd));
			for (int c = 12; c < ST_NFIG; c++)
				json_object_set_new(o, st_cols[c], isfinite(v[c]) ? json_real(v[c]) :
					json_null());
			json_object_set_new(o, "resumed", json_boolean(q->resumed));
		} else {
			json_object_set_new(o, "why", json_string(q->why));
		}
		json_array_append_new(js, o);
	}
	{
		char path[4200];
		json_t *o = json_pack("{s:s,s:o,s:o,s:O,s:{s:f,s:f,s:f,s:f},s:{s:I,s:I}}", "command",
			command, "points", js, "host", fm_host_json(), "geometry_notes", notes,
			"library", "functions", m->lib_functions, "copies", m->lib_copies,
			"plan_functions", m->plan_functions, "plan_code_bytes", m->plan_bytes,
			"caches", "i1_bytes", (json_int_t)r0->geo.i1.size, "ll_bytes", (json_int_t)r0->geo.ll.size);

		json_object_set_new(o, "status", json_string(stop_signal ? "interrupted" :
			"complete"));
		/* What study --merge groups and checks the shards by. */
		json_object_set_new(o, "cpu_model", json_string(a->cpu));
		json_object_set_new(o, "geometry", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}",
			"i1_bytes", (json_int_t)r0->geo.i1.size, "i1_ways",
			(json_int_t)r0->geo.i1.assoc, "d1_bytes", (json_int_t)r0->geo.d1.size,
			"d1_ways", (json_int_t)r0->geo.d1.assoc, "ll_bytes",
			(json_int_t)r0->geo.ll.size, "ll_ways", (json_int_t)r0->geo.ll.assoc));
		json_object_set_new(o, "shard", a->shard_n > 1 ? json_pack("{s:I,s:I}", "index",
			(json_int_t)a->shard_k, "count", (json_int_t)a->shard_n) : json_null());
		json_object_set_new(o, "interrupted_by_signal", stop_signal ?
			json_integer(stop_signal) : json_null());
		snprintf(path, sizeof(path), "%s/study.json", dir);
		if (json_dump_file(o, path, JSON_INDENT(2)) != 0)
			fprintf(stderr, FM_PROG ": cannot write %s\n", path);
		json_decref(o);
	}
}
