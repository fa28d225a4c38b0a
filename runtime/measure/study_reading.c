/* study_reading.c: every sentence summary.md says about the results, computed from the
 * measured points, the geometry and the targets file: the plots embedded, a reading under
 * each plot or table, and the Anchors section. study_report.c writes the rest. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cpumodel.h"
#include "mutil.h"
#include "simrun.h"
#include "study.h"
#include "targets.h"

/* ---- summary.md's plots, readings and anchors: every sentence about the results is
 * computed from the measured points, the geometry and the targets file ---- */

/* A measured figure of a point (0: L1i MPKI, 1: LL code MPKI), NAN when not measured. */
static double rd_fig(const struct st_point *q, int c)
{
	return q->done && isfinite(q->fig[c]) ? q->fig[c] : NAN;
}

/* A point's footprint: the plan's code bytes, else the bytes asked. */
static double rd_bytes(const struct st_point *q)
{
	return isfinite(q->code) && q->code > 0 ? q->code : (double)q->want_bytes;
}

/* The key a series is sorted by: 0 footprint, 1 calls per request, 2 I1 size. */
static double rd_key(const struct st_point *q, int key)
{
	return key == 0 ? rd_bytes(q) : key == 1 ? (double)q->calls : (double)q->i1_bytes;
}

/* The points of kind and order alpha (and these calls / asked bytes when nonzero) with a
 * measured L1i MPKI into idx, by key. Returns how many. */
static size_t rd_series(const struct st_point *p, size_t n, int kind, double alpha,
	uint64_t calls, uint64_t want, int key, size_t *idx)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];

		if (q->kind == kind && q->alpha == alpha && (!calls || q->calls == calls) &&
		    (!want || q->want_bytes == want) && isfinite(rd_fig(q, 0)))
			idx[m++] = i;
	}
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && rd_key(&p[idx[j]], key) < rd_key(&p[idx[j - 1]], key);
		     j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return m;
}

/* Where b bytes of code sit against the geometry's I1 and LL, into buf. */
static char *rd_where(double b, const struct fm_run *r0, char *buf, size_t len)
{
	double i1 = r0->geo.i1.size, ll = r0->geo.ll.size;
	char s[32];

	if (b <= i1)
		snprintf(buf, len, "within the %s I1", st_bstr(i1, s, sizeof(s)));
	else if (b <= ll)
		snprintf(buf, len, "%.3gx the I1, within the %s LL", b / i1,
			st_bstr(ll, s, sizeof(s)));
	else
		snprintf(buf, len, "%.3gx the %s LL", b / ll, st_bstr(ll, s, sizeof(s)));
	return buf;
}

/* What a step from b1 to b2 bytes crosses. */
static const char *rd_span(double b1, double b2, const struct fm_run *r0)
{
	double i1 = r0->geo.i1.size, ll = r0->geo.ll.size;
	int ci = b1 < i1 && b2 >= i1, cl = b1 < ll && b2 >= ll;

	return ci && cl ? "crosses both the I1 and the LL size" : ci ? "crosses the I1 size" :
		cl ? "crosses the LL size" : b2 < i1 ? "stays below the I1 size" : b1 >= ll ?
		"lies beyond the LL size" : "lies between the I1 and the LL size";
}

/* The plot name.svg as a markdown image, when gnuplot wrote it. */
void rd_plot(FILE *fp, const char *dir, int plots_ok, const char *name,
	const char *alt)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s.svg", dir, name);
	if (plots_ok && access(path, R_OK) == 0)
		fprintf(fp, "\n![%s](%s.svg)\n", alt, name);
}

/* The plots gnuplot wrote, for the Files section. */
void rd_plot_list(FILE *fp, const char *dir, int plots_ok)
{
	static const char *const names[] = { "mpki_vs_footprint", "mpki_vs_calls", "mrc" };
	int k = 0;

	for (int i = 0; plots_ok && i < 3; i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s.svg", dir, names[i]);
		if (access(path, R_OK) == 0)
			fprintf(fp, "%s%s", k++ ? ", " : "; plots ", names[i]);
	}
	fprintf(fp, "%s.\n", k ? " as .png and .svg" : plots_ok ? "; no plot (no series "
		"measured)" : "; gnuplot failed (see gnuplot.log), no plots");
}

/* Under the footprint table and plot: per order and calls, L1i MPKI at the smallest and
 * the largest footprint and the steepest rise per doubling of code (the knee). */
void rd_sweep(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0)
{
	size_t idx[ST_MAX_POINTS];
	char c1[32], c2[32];

	fprintf(fp, "\n**Reading** (from the measured points; I1 %s, LL %s):\n\n",
		st_bstr(r0->geo.i1.size, c1, sizeof(c1)), st_bstr(r0->geo.ll.size, c2, sizeof(c2)));
	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t k = 0; k < a->ncalls; k++) {
			size_t m = rd_series(p, n, ST_SWEEP, a->alphas[j], a->calls[k], 0, 0, idx), best = 0;
			char o[32], b1[32], b2[32], w1[96], w2[96];
			const struct st_point *lo, *hi;
			double slope = 0, rise;
			int any = 0;

			st_order_str(a->alphas[j], o, sizeof(o));
			fprintf(fp, "- %s, %llu calls/request: ", o, (unsigned long long)a->calls[k]);
			if (m == 0) {
				fprintf(fp, "no footprint measured, nothing to read.\n");
				continue;
			}
			lo = &p[idx[0]];
			hi = &p[idx[m - 1]];
			if (m == 1) {
				fprintf(fp, "one footprint measured (%s, %s: L1i MPKI %.2f), too few for a "
					"trend or a knee.\n", st_bstr(rd_bytes(lo), b1, sizeof(b1)),
					rd_where(rd_bytes(lo), r0, w1, sizeof(w1)), rd_fig(lo, 0));
				continue;
			}
			fprintf(fp, "L1i MPKI %.2f at %s of code (%s) and %.2f at %s (%s)", rd_fig(lo, 0),
				st_bstr(rd_bytes(lo), b1, sizeof(b1)), rd_where(rd_bytes(lo), r0, w1,
				sizeof(w1)), rd_fig(hi, 0), st_bstr(rd_bytes(hi), b2, sizeof(b2)),
				rd_where(rd_bytes(hi), r0, w2, sizeof(w2)));
			if (isfinite(rd_fig(lo, 1)) && isfinite(rd_fig(hi, 1)))
				fprintf(fp, "; LL code MPKI %.2f to %.2f", rd_fig(lo, 1), rd_fig(hi, 1));
			for (size_t i = 0; i + 1 < m; i++) {
				double x1 = rd_bytes(&p[idx[i]]), x2 = rd_bytes(&p[idx[i + 1]]), s;

				if (!(x2 > x1))
					continue;
				s = (rd_fig(&p[idx[i + 1]], 0) - rd_fig(&p[idx[i]], 0)) / log2(x2 / x1);
				if (!any || s > slope) {
					best = i;
					slope = s;
					any = 1;
				}
			}
			if (!any) {
				fprintf(fp, ".\n");
				continue;
			}
			lo = &p[idx[best]];
			hi = &p[idx[best + 1]];
			rise = rd_fig(hi, 0) - rd_fig(lo, 0);
			st_bstr(rd_bytes(lo), b1, sizeof(b1));
			st_bstr(rd_bytes(hi), b2, sizeof(b2));
			if (slope <= 0)
				fprintf(fp, ". L1i MPKI does not rise between any two neighbouring footprints "
					"measured.\n");
			else if (m == 2)
				fprintf(fp, ". Only two footprints: it rises by %.2f MPKI (%.2f per doubling "
					"of code) in a step that %s; more footprints between them would place "
					"the knee.\n", rise, slope, rd_span(rd_bytes(lo), rd_bytes(hi), r0));
			else {
				double all = rd_fig(&p[idx[m - 1]], 0) - rd_fig(&p[idx[0]], 0);

				fprintf(fp, ". Steepest rise (the knee) between %s and %s: +%.2f MPKI, %.2f "
					"per doubling of code", b1, b2, rise, slope);
				if (all > 0)
					fprintf(fp, ", %.0f%% of the whole rise", 100 * rise / all);
				fprintf(fp, "; that step %s.\n", rd_span(rd_bytes(lo), rd_bytes(hi), r0));
			}
		}
}

/* The calls-per-request plot and its reading: per order and footprint, how L1i MPKI moves
 * from the fewest to the most calls measured. */
void rd_calls(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const char *dir, int plots_ok)
{
	size_t idx[ST_MAX_POINTS];
	int said = 0;

	fprintf(fp, "\n### L1i MPKI vs calls per request\n");
	if (a->ncalls < 2) {
		fprintf(fp, "\nOne calls/request value measured (%llu): how L1i MPKI moves with calls "
			"per request is not measured here (--calls with several values draws "
			"mpki_vs_calls).\n", (unsigned long long)a->calls[0]);
		return;
	}
	rd_plot(fp, dir, plots_ok, "mpki_vs_calls", "L1i MPKI vs calls per request");
	fprintf(fp, "\n**Reading** (from the measured points):\n\n");
	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t i = 0; i < a->nbytes; i++) {
			size_t m = rd_series(p, n, ST_SWEEP, a->alphas[j], 0, a->bytes[i], 1, idx);
			int up = 0, down = 0;
			char o[32], b[32], c[32];
			double v0, v1;

			if (m == 0)
				continue;
			said = 1;
			st_order_str(a->alphas[j], o, sizeof(o));
			fprintf(fp, "- %s, %s asked (%s of code): ", o, st_bstr((double)a->bytes[i], b,
				sizeof(b)), st_bstr(rd_bytes(&p[idx[0]]), c, sizeof(c)));
			if (m == 1) {
				fprintf(fp, "one calls/request value measured (%llu: L1i MPKI %.2f), too few "
					"for a trend.\n", (unsigned long long)p[idx[0]].calls,
					rd_fig(&p[idx[0]], 0));
				continue;
			}
			v0 = rd_fig(&p[idx[0]], 0);
			v1 = rd_fig(&p[idx[m - 1]], 0);
			for (size_t t = 0; t + 1 < m; t++) {
				up += rd_fig(&p[idx[t + 1]], 0) > rd_fig(&p[idx[t]], 0);
				down += rd_fig(&p[idx[t + 1]], 0) < rd_fig(&p[idx[t]], 0);
			}
			fprintf(fp, "L1i MPKI %.2f at %llu calls/request, %.2f at %llu", v0,
				(unsigned long long)p[idx[0]].calls, v1,
				(unsigned long long)p[idx[m - 1]].calls);
			if (v0 > 0)
				fprintf(fp, " (%+.0f%%)", 100 * (v1 - v0) / v0);
			fprintf(fp, ": %s.\n", fabs(v1 - v0) <= 0.05 * fmax(fabs(v0), fabs(v1)) ?
				"flat within 5%" : up == (int)m - 1 ? (m == 2 ? "it rises" :
				"it rises at every step") : down == (int)m - 1 ? (m == 2 ? "it falls" :
				"it falls at every step") : "not monotonic");
		}
	if (!said)
		fprintf(fp, "- no footprint has a measured point, nothing to read.\n");
}

/* Under the miss-ratio table and plot: per order, the I1 size at which L1i MPKI first
 * falls below half its value at the smallest I1 measured. */
void rd_mrc(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0)
{
	size_t idx[ST_MAX_POINTS];
	char g[32];

	fprintf(fp, "\n**Reading** (from the measured points; the study's I1 is %s):\n\n",
		st_bstr(r0->geo.i1.size, g, sizeof(g)));
	for (size_t j = 0; j < a->nalphas; j++) {
		size_t m = rd_series(p, n, ST_MRC, a->alphas[j], 0, 0, 2, idx), t;
		char o[32], s0[32], s1[32];
		double base;

		st_order_str(a->alphas[j], o, sizeof(o));
		fprintf(fp, "- %s: ", o);
		if (m == 0) {
			fprintf(fp, "no I1 size measured, no curve to read.\n");
			continue;
		}
		base = rd_fig(&p[idx[0]], 0);
		st_bstr(p[idx[0]].i1_bytes, s0, sizeof(s0));
		if (m == 1) {
			fprintf(fp, "one I1 size measured (%s: L1i MPKI %.2f), too few for a curve.\n",
				s0, base);
			continue;
		}
		if (!(base > 0)) {
			fprintf(fp, "no L1i misses at the smallest I1 measured (%s), nothing to halve.\n",
				s0);
			continue;
		}
		for (t = 1; t < m && !(rd_fig(&p[idx[t]], 0) < base / 2); t++)
			;
		fprintf(fp, "L1i MPKI %.2f at the smallest I1 measured (%s); ", base, s0);
		if (t < m)
			fprintf(fp, "it first falls below half of that (%.2f) at %s (%.2f), %.3gx the "
				"study's I1", base / 2, st_bstr(p[idx[t]].i1_bytes, s1, sizeof(s1)),
				rd_fig(&p[idx[t]], 0), (double)p[idx[t]].i1_bytes / r0->geo.i1.size);
		else
			fprintf(fp, "it stays above half of that (%.2f) up to the largest I1 measured "
				"(%s: %.2f)", base / 2, st_bstr(p[idx[m - 1]].i1_bytes, s1, sizeof(s1)),
				rd_fig(&p[idx[m - 1]], 0));
		fprintf(fp, ".\n");
	}
}

/* The measured sweep point nearest to calls per request (by ratio; calls 0: the most
 * calls), the largest footprint among equals; NULL when none was measured. */
static const struct st_point *rd_nearest(const struct st_point *p, size_t n, double calls)
{
	const struct st_point *best = NULL;
	double bd = 0;

	for (size_t i = 0; i < n; i++) {
		const struct st_point *q = &p[i];
		double d;

		if (q->kind != ST_SWEEP || !isfinite(rd_fig(q, 0)))
			continue;
		d = calls > 0 ? fabs(log((double)q->calls / calls)) : -(double)q->calls;
		if (best == NULL || d < bd - 1e-9 || (d <= bd + 1e-9 && rd_bytes(q) > rd_bytes(best))) {
			best = q;
			bd = d;
		}
	}
	return best;
}

/* "the study point comparable to it: ...": the point, its MPKI and its I1 against the
 * anchor's core (cpu, NULL when unknown). */
static void rd_point(FILE *fp, const struct st_point *q, double calls, const struct fm_run *r0,
	const struct fm_cpu *cpu)
{
	char o[32], b[32], g[64];

	if (q == NULL) {
		fprintf(fp, "no sweep point was measured, so no study point compares.");
		return;
	}
	st_order_str(q->alpha, o, sizeof(o));
	fprintf(fp, "comparable study point: %s of code (%llu functions), %s, %llu "
		"calls/request", st_bstr(rd_bytes(q), b, sizeof(b)), (unsigned long long)q->nfuncs,
		o, (unsigned long long)q->calls);
	if (calls > 0 && (double)q->calls < calls)
		fprintf(fp, " (%.3gx fewer than the anchor's)", calls / (double)q->calls);
	else if (calls > 0 && (double)q->calls > calls)
		fprintf(fp, " (%.3gx the anchor's)", (double)q->calls / calls);
	fprintf(fp, ": L1i MPKI %.2f with I1 %s", rd_fig(q, 0), fm_cache_str(&r0->geo.i1, g,
		sizeof(g)));
	if (cpu == NULL)
		fprintf(fp, ".");
	else if (cpu->i1.size == r0->geo.i1.size && cpu->i1.assoc == r0->geo.i1.assoc &&
		 cpu->i1.line == r0->geo.i1.line)
		fprintf(fp, ", the anchor core's L1i (%s model).", cpu->name);
	else
		fprintf(fp, "; the anchor's core has %s (`--cpu %s` simulates it).",
			fm_cache_str(&cpu->i1, g, sizeof(g)), cpu->name);
}

/* FeedSim v2's measured L1i MPKI (DCPerf pull request 704's description: "Results on
 * T1_BGM (Bergamo)": 21.34 at 500K calls/request; "T11_GRC_ARM (Grace)": 15.91 at 100K).
 * The targets file keeps production's figures, not FeedSim's, so these two live here. */
#define RD_FEEDSIM_BGM_MPKI 21.34
#define RD_FEEDSIM_BGM_CALLS 500000.0
#define RD_FEEDSIM_GRC_MPKI 15.91
#define RD_FEEDSIM_GRC_CALLS 100000.0

/* The Anchors section: production's and FeedSim v2's published figures, from the targets
 * file where it has them, each with its source and the study point comparable to it. */
void rd_anchors(FILE *fp, const struct st_point *p, size_t n, const struct st_args *a,
	const struct fm_run *r0, const struct st_model *m)
{
	struct fl_targets tg = { 0 };
	char tpath[4096], err[1024], t[128], b[32];
	const struct fl_target *tl = NULL, *tf = NULL;
	const struct fl_tgt_source *s704 = NULL, *skan = NULL;
	const struct fm_cpu *bgm = fm_cpu_find("zen4"), *grc = fm_cpu_find("neoverse-v2");
	int loaded = fl_targets_default_path(tpath, sizeof(tpath), err, sizeof(err)) == 0 &&
		fl_targets_load(tpath, &tg, err, sizeof(err)) == 0;
	double l1 = 21, fmin = 15, fmax = 30;

	if (loaded) {
		tl = fl_targets_find(&tg, "l1i_mpki");
		tf = fl_targets_find(&tg, "frontend_bound_pct");
		s704 = tl ? fl_targets_source(&tg, tl->source) : NULL;
		skan = tf ? fl_targets_source(&tg, tf->source) : NULL;
	}
	if (tl && tl->kind == FL_TGT_APPROX)
		l1 = tl->value;
	if (tf && tf->kind == FL_TGT_RANGE) {
		fmin = tf->min;
		fmax = tf->max;
	}
	fprintf(fp, "\n## Anchors\n\nPublished front-end figures to hold the curves against; ");
	if (loaded)
		fprintf(fp, "production's values and the source titles are read from %s.", tpath);
	else
		fprintf(fp, "the targets file could not be read (%s), so the values below are this "
			"program's copy.", err);
	fprintf(fp, " The study's L1i MPKI is simulated (callgrind: demand-fetched LRU caches, "
		"no prefetcher) over %s, %llu measured request%s a point. Production and FeedSim "
		"count a whole service on hardware (prefetchers, other threads, the kernel), so an "
		"anchor compares in order of magnitude with the study point named beside it (the "
		"nearest in calls per request, the largest footprint among those), not digit for "
		"digit.\n\n", strcmp(r0->stage, "extract") == 0 ? "the extractor calls alone "
		"(frontload-simreq's extraction stage)" : "frontload-simreq's whole in-process "
		"request path, not the extractor calls alone (decode, overheads, extraction, story "
		"processing, ranking, reply; no network IO, TLS or fanout), in which extraction's "
		"share of the instructions grows with calls per request",
		(unsigned long long)a->requests, a->requests == 1 ? "" : "s");
	fprintf(fp, "- **Production feed leaf: L1i MPKI ≈ %g**", l1);
	if (tl)
		fprintf(fp, " (frontload's target %s; %s)", fl_target_str(tl, t, sizeof(t)),
			tl->note[0] ? tl->note : tl->label);
	fprintf(fp, " [dcperf-704]. The source gives no calls per request or footprint for it, "
		"so the most calls and the largest footprint stand for it; ");
	rd_point(fp, rd_nearest(p, n, 0), 0, r0, bgm);
	fprintf(fp, "\n- **FeedSim v2: L1i MPKI %.2f at %.0fK calls/request, AMD Bergamo** "
		"[dcperf-704]; ", RD_FEEDSIM_BGM_MPKI, RD_FEEDSIM_BGM_CALLS / 1000);
	rd_point(fp, rd_nearest(p, n, RD_FEEDSIM_BGM_CALLS), RD_FEEDSIM_BGM_CALLS, r0, bgm);
	fprintf(fp, " FeedSim v2 runs ~700K generated functions (699 variants x 1000 copies, "
		"this project's default build); this build's library holds %.0f (%.0f copies), %s "
		"of code in the plan.\n", m->lib_functions, m->lib_copies,
		st_bstr(m->plan_bytes, b, sizeof(b)));
	fprintf(fp, "- **FeedSim v2: L1i MPKI %.2f at %.0fK calls/request, NVIDIA Grace** "
		"[dcperf-704]; ", RD_FEEDSIM_GRC_MPKI, RD_FEEDSIM_GRC_CALLS / 1000);
	rd_point(fp, rd_nearest(p, n, RD_FEEDSIM_GRC_CALLS), RD_FEEDSIM_GRC_CALLS, r0, grc);
	for (size_t j = 0; grc && !a->no_mrc && j < a->nalphas; j++)
		for (size_t i = 0; i < n; i++)
			if (p[i].kind == ST_MRC && p[i].alpha == a->alphas[j] &&
			    p[i].i1_bytes == grc->i1.size && isfinite(rd_fig(&p[i], 0))) {
				char o[32];

				st_order_str(a->alphas[j], o, sizeof(o));
				fprintf(fp, " The %s miss-ratio curve reads %.2f at Grace's %s I1 (%s of "
					"code, %llu calls/request).", o, rd_fig(&p[i], 0),
					st_bstr(grc->i1.size, b, sizeof(b)), st_bstr(rd_bytes(&p[i]), t,
					sizeof(t)), (unsigned long long)p[i].calls);
			}
	fprintf(fp, "\n- **Front-end bound %g-%g%% of pipeline slots** across Google's fleet "
		"[kanev-isca15]: no study point compares, as the simulated path has no timing "
		"model and so no pipeline slots; `" FM_PROG " validate` judges it on hardware with "
		"slot counters.\n", fmin, fmax);
	fprintf(fp, "\nSources:\n\n- [dcperf-704] %s <%s> (FeedSim's Grace figure: the same pull "
		"request's description)\n- [kanev-isca15] %s <%s>\n",
		s704 ? s704->title : "facebookresearch/DCPerf pull request 704, \"Add scaled-up "
		"feature extraction pipeline\" (FeedSim)", s704 ? s704->url :
		"https://github.com/facebookresearch/DCPerf/pull/704", skan ? skan->title :
		"S. Kanev et al., \"Profiling a warehouse-scale computer\", ISCA 2015", skan ?
		skan->url : "https://doi.org/10.1145/2749469.2750392");
	fl_targets_free(&tg);
}

void rd_leaf(FILE *fp, const struct st_point *p, size_t n)
{
	int said = 0;

	for (size_t i = 0; i < n; i++) {
		const struct st_point *l = &p[i], *h = NULL;
		char b[32], o[32];

		if (l->kind != ST_LEAF || !isfinite(rd_fig(l, 0)))
			continue;
		for (size_t k = 0; k < n && h == NULL; k++)
			if (p[k].kind == ST_SWEEP && p[k].want_bytes == l->want_bytes &&
			    p[k].alpha == l->alpha && p[k].calls == l->calls && isfinite(rd_fig(&p[k], 0)))
				h = &p[k];
		st_order_str(l->alpha, o, sizeof(o));
		fprintf(fp, "%s- %s, %s: the running leaf %.2f L1i MPKI", said ? "" : "\nReading:\n\n",
			st_bstr(rd_bytes(l), b, sizeof(b)), o, rd_fig(l, 0));
		if (h)
			fprintf(fp, " against the harness's %.2f (x %.2f)", rd_fig(h, 0),
				rd_fig(l, 0) / rd_fig(h, 0));
		if (isfinite(l->fig[12]) && isfinite(l->fig[13]))
			fprintf(fp, "; the generated library runs %.1f%% of the leaf's instructions and "
				"takes %.1f%% of its L1i misses", l->fig[12], l->fig[13]);
		if (h && isfinite(rd_fig(h, 11)) && isfinite(rd_fig(l, 11)))
			fprintf(fp, "; %.3g instructions a request against %.3g", rd_fig(l, 11),
				rd_fig(h, 11));
		fprintf(fp, ".\n");
		said = 1;
	}
	if (!said)
		return;
	fprintf(fp, "\nThe harness isolates the request path's own front-end behaviour; the leaf "
		"adds what the whole service runs around it (TLS, compression, copies, fanout, IO "
		"threads): its MPKI lies above the harness's where that code misses more per "
		"instruction than the extractors, below where it misses less.\n");
}
