/* validate_leaf_report.c: the report of `validate` on the running leaf: the simulated
 * rows, the native window's stage clock, CPU profile and PMU groups, printed and as JSON,
 * and the measured figures judged against the targets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mix.h"
#include "mixneed.h"
#include "profile.h"
#include "targets.h"
#include "validate_leaf.h"

/* ---- report ---- */

static double vl_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

static json_t *vl_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double vl_rate(const struct fl_mix_rate *r)
{
	return r->available ? r->value : NAN;
}

/* Mix shares of a row (NAN when nothing was classified). */
struct vl_shares {
	double cond, mem, fp, callret, div, iptb;
};

static struct vl_shares vl_shares_of(const struct vl_row *r)
{
	const struct fl_mix *x = &r->mix;
	struct vl_shares s = { NAN, NAN, NAN, NAN, NAN, NAN };
	if (!r->have_mix || x->insns == 0)
		return s;
	s.cond = fl_mix_metric_value(x, FL_MM_COND);
	s.mem = fl_mix_metric_value(x, FL_MM_MEM);
	s.fp = fl_mix_metric_value(x, FL_MM_FP);
	s.callret = fl_mix_metric_value(x, FL_MM_CALLRET);
	s.div = fl_mix_metric_value(x, FL_MM_DIV);
	s.iptb = fl_mix_metric_value(x, FL_MM_IPTB);
	return s;
}

json_t *vl_row_json(const struct vl_row *r, const struct vl_row *all, double reqs)
{
	struct vl_shares s = vl_shares_of(r);
	const struct fl_mix *x = &r->mix;
	return json_pack("{s:s,s:I,s:o,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
		"s:o,s:o,s:o}",
		"name", r->name, "ir", (json_int_t)r->ir,
		"ir_pct", vl_num(vl_pct(r->ir, all->ir)),
		"ir_per_request", vl_num(reqs > 0 ? (double)r->ir / reqs : NAN),
		"instructions", (json_int_t)(r->have_mix ? x->ir_hw : r->ir),
		"l1i_mpki", vl_num(r->have_mix ? vl_rate(&x->l1i_mpki) : NAN),
		"l1i_miss_pct", vl_num(vl_pct(r->i1mr, all->i1mr)),
		"ll_code_mpki", vl_num(r->have_mix ? vl_rate(&x->lli_mpki) : NAN),
		"cond_branch_mpki", vl_num(r->have_mix ? vl_rate(&x->cond_mpki) : NAN),
		"indirect_branch_mpki", vl_num(r->have_mix ? vl_rate(&x->ind_mpki) : NAN),
		"cond_branch_pct", vl_num(s.cond), "mem_pct", vl_num(s.mem),
		"scalar_fp_pct", vl_num(s.fp), "call_ret_pct", vl_num(s.callret),
		"div_pct", vl_num(s.div), "insns_per_taken_branch", vl_num(s.iptb),
		"classified_pct", vl_num(r->have_mix ? vl_pct(x->insns, x->ir_hw) : NAN),
		"rep_ir_removed", r->have_mix ? json_integer((json_int_t)x->rep_ir_removed) :
			json_null(),
		"plt_stub_insns", r->have_mix ? json_integer((json_int_t)x->plt_ir) : json_null());
}

static const char *vl_f(double v, const char *fmt, char *buf)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, 32, fmt, v);
	return buf;
}

void vl_row_print(const struct vl_row *r, const struct vl_row *all, double reqs)
{
	struct vl_shares s = vl_shares_of(r);
	const struct fl_mix *x = &r->mix;
	char b[13][32];
	printf("  %-17s %13llu %6s %10s %7s %6s %7s %6s %6s | %5s %5s %5s %5s %6s %5s\n",
		r->name, (unsigned long long)r->ir, vl_f(vl_pct(r->ir, all->ir), "%.1f", b[0]),
		vl_f(reqs > 0 ? (double)r->ir / reqs : NAN, "%.0f", b[1]),
		vl_f(r->have_mix ? vl_rate(&x->l1i_mpki) : NAN, "%.2f", b[2]),
		vl_f(vl_pct(r->i1mr, all->i1mr), "%.1f", b[3]),
		vl_f(r->have_mix ? vl_rate(&x->lli_mpki) : NAN, "%.3f", b[4]),
		vl_f(r->have_mix ? vl_rate(&x->cond_mpki) : NAN, "%.2f", b[5]),
		vl_f(r->have_mix ? vl_rate(&x->ind_mpki) : NAN, "%.3f", b[6]),
		vl_f(s.cond, "%.1f", b[7]), vl_f(s.mem, "%.1f", b[8]), vl_f(s.fp, "%.2f", b[9]),
		vl_f(s.callret, "%.2f", b[10]), vl_f(s.div, "%.3f", b[11]),
		vl_f(s.iptb, "%.1f", b[12]));
}

void vl_rows_head(const char *what)
{
	printf("  %-17s %13s %6s %10s %7s %6s %7s %6s %6s | %5s %5s %5s %5s %6s %5s\n", what,
		"Ir", "Ir%", "Ir/req", "L1iMPKI", "miss%", "LLcode", "condBr", "indBr", "cond%",
		"ld+st", "FP%", "c+r%", "div%", "i/tb");
}

/* The generated library by pattern: which code shapes run its instructions, take its
 * branches and miss the L1i (the miss% column is of the whole process's misses). */
void vl_print_patterns(const struct vl_sim *s, double reqs)
{
	const struct vl_row *gen = &s->kind[FM_OBJ_GENERATED];
	if (gen->ir == 0)
		return;
	if (!s->have_pat) {
		printf("  generated library by pattern: not split: %s\n", s->pat_why);
		return;
	}
	vl_rows_head("generated, by pattern");
	uint64_t sum = 0;
	for (unsigned p = 0; p <= FM_PAT_MAX; p++)
		if (s->pat[p].ir) {
			sum += s->pat[p].ir;
			vl_row_print(&s->pat[p], &s->all, reqs);
		}
	printf("  (patterns' Ir sum %llu = generated Ir %llu: %s; shared: the library's helpers "
		"and other code of no pattern)\n", (unsigned long long)sum,
		(unsigned long long)gen->ir, sum == gen->ir ? "yes" : "NO");
}

json_t *vl_patterns_json(const struct vl_sim *s, double reqs)
{
	if (!s->have_pat)
		return json_null();
	json_t *a = json_array();
	for (unsigned p = 0; p <= FM_PAT_MAX; p++)
		if (s->pat[p].ir)
			json_array_append_new(a, vl_row_json(&s->pat[p], &s->all, reqs));
	return a;
}

/* ---- targets ---- */

static const char *const vl_metrics[T_N] = {
	"l1i_mpki", "ipc", "frontend_bound_pct", "scalar_fp_pct", "cond_branch_pct",
	"call_ret_pct", "mem_pct", "div_pct", "insns_per_taken_branch", "extract_cpu_pct",
	"profile_extract_pct", "profile_ranking_pct", "profile_compression_pct",
	"profile_encryption_pct",
};

static void vl_set(struct fl_measured *m, unsigned path, double v)
{
	memset(m, 0, sizeof *m);
	m->path = path;
	if (isfinite(v)) {
		m->available = 1;
		m->value = v;
	} else {
		snprintf(m->why, sizeof m->why, "not measured");
	}
}

static void vl_none(struct fl_measured *m, unsigned path, const char *why)
{
	memset(m, 0, sizeof *m);
	m->path = path;
	snprintf(m->why, sizeof m->why, "%s", why);
}

/* A hardware figure from the PMU window: a number, or its "unsupported" string. */
static void vl_hw(struct fl_measured *m, json_t *pmu, const char *key)
{
	json_t *v = json_object_get(json_object_get(pmu, "total"), key);
	if (json_is_number(v))
		vl_set(m, FL_PATH_HARDWARE, json_number_value(v));
	else
		vl_none(m, FL_PATH_HARDWARE, json_is_string(v) ? json_string_value(v) :
			"not counted");
}

/* ---- the native window ---- */

json_t *vl_profile_json(const struct vl_prof *pr)
{
	if (!pr->want)
		return json_string("not measured: --no-profile");
	if (pr->why[0] || pr->p.total == 0)
		return json_sprintf("unsupported: %s", pr->why[0] ? pr->why : "no samples");
	json_t *o = json_object(), *c = json_object();
	for (int k = 0; k < FM_PROF_N; k++) {
		json_t *top = json_array();
		for (size_t i = 0, n = 0; i < pr->p.nsyms && n < 5; i++)
			if (pr->p.syms[i].cat == (enum fm_prof_cat)k) {
				json_array_append_new(top, json_pack("{s:s,s:I}", "symbol",
					pr->p.syms[i].name, "samples", (json_int_t)pr->p.syms[i].samples));
				n++;
			}
		double lo, hi;

		fm_prof_share_ci95(pr->p.samples[k], pr->p.total, &lo, &hi);
		json_object_set_new(c, fm_prof_cat_id((enum fm_prof_cat)k), json_pack(
			"{s:s,s:I,s:o,s:[o,o],s:o}", "label", fm_prof_cat_label((enum fm_prof_cat)k),
			"samples", (json_int_t)pr->p.samples[k], "pct",
			vl_num(vl_pct(pr->p.samples[k], pr->p.total)), "pct_ci95", vl_num(lo),
			vl_num(hi), "top", top));
	}
	json_object_set_new(o, "categories", c);
	json_t *pools = json_object();
	for (int q = 0; q < FM_PPOOL_N; q++) {
		json_t *po = json_object();
		for (int k = 0; k < FM_PROF_N; k++)
			json_object_set_new(po, fm_prof_cat_id((enum fm_prof_cat)k),
				json_integer((json_int_t)pr->p.pool[q][k]));
		json_object_set_new(pools, fm_prof_pool_name((enum fm_prof_pool)q), po);
	}
	json_object_set_new(o, "pools", pools);
	json_object_set_new(o, "samples", json_integer((json_int_t)pr->p.total));
	json_object_set_new(o, "kernel_samples", json_integer((json_int_t)pr->p.kernel));
	json_object_set_new(o, "event", json_string("cpu-clock"));
	return o;
}

static double vl_prof_pct(const struct vl_prof *pr, enum fm_prof_cat c)
{
	if (!pr->want || pr->why[0] || pr->p.total == 0)
		return NAN;
	return vl_pct(pr->p.samples[c], pr->p.total);
}

void vl_print_stages(json_t *sw)
{
	json_t *st = json_object_get(sw, "stages"), *v;
	const char *k;
	double proc = (double)json_integer_value(json_object_get(sw, "process_cpu_ns"));
	char b[32], c[32];
	printf("\nleaf stage clock over the native window (path native; of summed stage CPU, "
		"and of the RANKER+IO+FANOUT pools' CPU %.1f ms):\n", proc / 1e6);
	json_object_foreach(st, k, v) {
		double ns = (double)json_integer_value(json_object_get(v, "cpu_ns"));
		printf("  %-10s %9.2f ms  %6s%%  %6s%%\n", k, ns / 1e6,
			vl_f(100 * json_number_value(json_object_get(v, "share")), "%.1f", b),
			vl_f(proc > 0 ? 100 * ns / proc : NAN, "%.1f", c));
	}
	json_t *pl = json_object_get(sw, "pools");
	printf("  pools: ranker %.2f ms, io %.2f ms, fanout %.2f ms\n",
		(double)json_integer_value(json_object_get(pl, "ranker")) / 1e6,
		(double)json_integer_value(json_object_get(pl, "io")) / 1e6,
		(double)json_integer_value(json_object_get(pl, "fanout")) / 1e6);
}

void vl_print_profile(const struct vl_prof *pr)
{
	printf("\nCPU profile of the native window (path native; perf record -e cpu-clock, "
		"rules runtime/data/profile_categories.txt):\n");
	if (!pr->want) {
		printf("  not measured: --no-profile\n");
		return;
	}
	if (pr->why[0] || pr->p.total == 0) {
		printf("  unsupported: %s\n", pr->why[0] ? pr->why : "no samples");
		return;
	}
	printf("  %llu samples, %llu in the kernel; each share with its 95%% interval "
		"(Wilson, samples as independent draws)\n", (unsigned long long)pr->p.total,
		(unsigned long long)pr->p.kernel);
	for (int k = 0; k < FM_PROF_N; k++) {
		double lo, hi;
		char ci[40];

		fm_prof_share_ci95(pr->p.samples[k], pr->p.total, &lo, &hi);
		snprintf(ci, sizeof ci, "(%.1f..%.1f)", lo, hi);
		printf("  %-22s %6llu  %5.1f%% %-13s", fm_prof_cat_label((enum fm_prof_cat)k),
			(unsigned long long)pr->p.samples[k], vl_pct(pr->p.samples[k], pr->p.total),
			ci);
		for (size_t i = 0, n = 0; i < pr->p.nsyms && n < 2; i++)
			if (pr->p.syms[i].cat == (enum fm_prof_cat)k) {
				printf("%s %s %llu", n ? "," : "  top:", pr->p.syms[i].name,
					(unsigned long long)pr->p.syms[i].samples);
				n++;
			}
		putchar('\n');
	}
	/* The stage clock charges all FANOUT thread CPU to "fanout": what it is made of. */
	for (int q = 0; q < FM_PPOOL_N; q++) {
		uint64_t n = 0;
		for (int k = 0; k < FM_PROF_N; k++)
			n += pr->p.pool[q][k];
		if (n == 0)
			continue;
		printf("  %s threads (%llu samples):", fm_prof_pool_name((enum fm_prof_pool)q),
			(unsigned long long)n);
		for (int k = 0; k < FM_PROF_N; k++)
			if (pr->p.pool[q][k])
				printf(" %s %.1f%%", fm_prof_cat_label((enum fm_prof_cat)k),
					vl_pct(pr->p.pool[q][k], n));
		putchar('\n');
	}
}

void vl_print_pmu(json_t *pmu)
{
	static const char *const pools[] = { "ranker", "io", "fanout", "total" };
	static const char *const ks[] = { "instructions", "ipc", "l1i_mpki", "branch_mpki" };
	printf("\nper-pool PMU groups over the native window (path hardware):\n");
	for (size_t p = 0; p < 4; p++) {
		json_t *o = json_object_get(pmu, pools[p]);
		json_t *ins = json_object_get(o, "instructions");
		printf("  %-7s", pools[p]);
		if (!json_is_number(ins)) {
			/* Nothing counted: one reason, not one per figure. */
			printf(" %s\n", json_string_value(ins) ? json_string_value(ins) : "-");
			continue;
		}
		for (size_t k = 0; k < 4; k++) {
			json_t *v = json_object_get(o, ks[k]);
			if (json_is_number(v))
				printf(" %s %.3f", ks[k], json_number_value(v));
			else
				printf(" %s %s", ks[k], json_string_value(v) ? json_string_value(v) : "-");
		}
		putchar('\n');
	}
}

/* ---- verdicts ---- */

/* One side of a missed mix target: what part (the generated library or the rest of the
 * process) runs now and would need, the other side (other) held as measured. */
static json_t *vl_need_side(const struct fl_mix *all, const struct fl_mix *part,
	const struct fl_mix *other, enum fl_mix_metric mm, double bound, const char *who,
	char *txt, size_t n)
{
	double now = fl_mix_metric_value(part, mm), need = fl_mix_need(all, part, mm, bound);
	double share = vl_pct(part->insns, all->insns);
	int iptb = mm == FL_MM_IPTB;
	const char *u = iptb ? " instructions per taken branch" : "%";
	json_t *o = json_pack("{s:o,s:o,s:o,s:b}", "share_of_instructions_pct",
		vl_num(share), "now", vl_num(now), "need", vl_num(need), "reachable",
		isfinite(need));

	if (isfinite(need))
		snprintf(txt, n, "%s (%.1f%% of the instructions) would need %.1f%s, runs %.1f%s",
			who, share, need, u, now, u);
	else if (isnan(need))
		snprintf(txt, n, "%s ran no classified instruction", who);
	else if (iptb)
		snprintf(txt, n, "%s (%.1f%% of the instructions, runs %.1f%s) cannot carry it: "
			"the other part's taken branches alone are more than the bound allows", who,
			share, now, u);
	else if (need < 0)
		snprintf(txt, n, "%s (%.1f%% of the instructions, runs %.1f%%) cannot carry it: "
			"the other part alone adds %.2f points, past the bound", who, share, now,
			fl_mix_points(all, other, mm));
	else
		snprintf(txt, n, "%s (%.1f%% of the instructions, runs %.1f%%) cannot carry it: "
			"the bound needs more than all of its instructions", who, share, now);
	json_object_set_new(o, "text", json_string(txt));
	return o;
}

/* A missed mix target's quantitative "what moves it": the generated library's value
 * that would meet it with the rest of the process as measured, and the rest's with the
 * generated library as measured. NULL when k is not a mix target or nothing was split. */
static json_t *vl_mix_needs(const struct fl_target *x, int k, double measured,
	const struct vl_sim *s)
{
	static const struct { int t; enum fl_mix_metric mm; } map[] = {
		{ T_FP, FL_MM_FP }, { T_COND, FL_MM_COND }, { T_CALLRET, FL_MM_CALLRET },
		{ T_MEM, FL_MM_MEM }, { T_DIV, FL_MM_DIV }, { T_IPTB, FL_MM_IPTB } };
	const struct vl_row *g = s ? &s->kind[FM_OBJ_GENERATED] : NULL;
	struct fl_mix rest;
	char a[256], b[256];
	double bound;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]) && map[i].t != k; i++)
		;
	if (i == sizeof(map) / sizeof(map[0]) || g == NULL || !g->have_mix ||
		!s->all.have_mix || x->kind == FL_TGT_APPROX)
		return NULL;
	bound = x->kind == FL_TGT_MIN ? x->min : x->kind == FL_TGT_MAX ? x->max :
		measured < x->min ? x->min : x->max;
	fl_mix_minus(&s->all.mix, &g->mix, &rest);
	json_t *o = json_pack("{s:f,s:o,s:o}", "bound", bound, "generated",
		vl_need_side(&s->all.mix, &g->mix, &rest, map[i].mm, bound,
		"the generated library", a, sizeof a), "rest", vl_need_side(&s->all.mix, &rest,
		&g->mix, map[i].mm, bound, "the rest of the process", b, sizeof b));
	printf("    to reach %g%s with the other part as measured: %s; %s\n", bound,
		k == T_IPTB ? "" : "%", a, b);
	return o;
}

void vl_print_targets(const struct fl_targets *tg, const struct fl_measured m[T_N],
	const struct vl_sim *s, json_t *tj, int *pass, int *fail, int *unm)
{
	char t[64], val[32];
	printf("\n%-38s %-12s %10s  %-13s %s\n", "metric", "target", "measured", "verdict",
		"path");
	for (int k = 0; k < T_N; k++) {
		const struct fl_target *x = fl_targets_find(tg, vl_metrics[k]);
		if (x == NULL)
			continue;
		enum fl_verdict v = fl_target_check(x, &m[k]);
		*pass += v == FL_VERDICT_PASS;
		*fail += v == FL_VERDICT_FAIL;
		*unm += v == FL_VERDICT_UNMEASURABLE;
		snprintf(val, sizeof val, m[k].available ? "%.2f" : "-", m[k].value);
		printf("%-38s %-12s %10s  %-13s %s\n", x->label, fl_target_str(x, t, sizeof t),
			val, fl_verdict_name(v), fl_path_name(m[k].path));
		/* Unmeasured: why; measured: a note on how well (a sampled share's interval). */
		if (m[k].why[0])
			printf("    %s\n", m[k].why);
		if (v == FL_VERDICT_FAIL && x->knob[0])
			printf("    what moves it: %s\n", x->knob);
		json_t *needs = v == FL_VERDICT_FAIL ? vl_mix_needs(x, k, m[k].value, s) : NULL;
		const struct fl_tgt_source *src = fl_targets_source(tg, x->source);
		json_t *row = json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s}",
			"metric", x->metric, "label", x->label, "target", fl_target_str(x, t,
			sizeof t), "measured", m[k].available ? json_real(m[k].value) : json_null(),
			"why", m[k].available ? "" : m[k].why, "note", m[k].available ? m[k].why : "",
			"verdict", fl_verdict_name(v), "path", fl_path_name(m[k].path), "source",
			src ? src->url : "");
		if (needs)
			json_object_set_new(row, "needs", needs);
		json_array_append_new(tj, row);
	}
}

/* The measured figures judged against the targets. */
void vl_measure(struct fl_measured m[T_N], const struct vl_sim *s, int have_sim,
	const char *sim_why, json_t *pmu, json_t *sw, const struct vl_prof *pr)
{
	struct vl_shares sh = have_sim ? vl_shares_of(&s->all) : (struct vl_shares){ NAN, NAN,
		NAN, NAN, NAN, NAN };
	double mix[] = { sh.fp, sh.cond, sh.callret, sh.mem, sh.div, sh.iptb };
	int idx[] = { T_FP, T_COND, T_CALLRET, T_MEM, T_DIV, T_IPTB };
	for (int i = 0; i < 6; i++) {
		if (have_sim)
			vl_set(&m[idx[i]], FL_PATH_SIMULATED, mix[i]);
		else
			vl_none(&m[idx[i]], FL_PATH_SIMULATED, sim_why);
	}
	if (have_sim)
		vl_set(&m[T_L1I], FL_PATH_SIMULATED, vl_rate(&s->all.mix.l1i_mpki));
	else
		vl_none(&m[T_L1I], FL_PATH_SIMULATED, sim_why);
	if (pmu) {
		vl_hw(&m[T_IPC], pmu, "ipc");
		vl_none(&m[T_FE], FL_PATH_HARDWARE, "the leaf's PMU groups count no top-down "
			"slots over a window");
	} else {
		vl_none(&m[T_IPC], FL_PATH_HARDWARE, "no native window");
		vl_none(&m[T_FE], FL_PATH_HARDWARE, "no native window");
	}
	double ex = NAN;
	if (sw) {
		double proc = json_number_value(json_object_get(sw, "process_cpu_ns"));
		json_t *e = json_object_get(json_object_get(sw, "stages"), "extract");
		double ns = json_number_value(json_object_get(e, "cpu_ns"));
		ex = proc > 0 && json_is_integer(json_object_get(e, "cpu_ns")) ? 100 * ns / proc :
			NAN;
	}
	vl_set(&m[T_EXTRACT], FL_PATH_NATIVE, ex);
	enum fm_prof_cat pc[] = { FM_PROF_EXTRACT, FM_PROF_RANK, FM_PROF_COMPRESS,
		FM_PROF_CRYPTO };
	for (int i = 0; i < 4; i++) {
		vl_set(&m[T_P_EXTRACT + i], FL_PATH_NATIVE, vl_prof_pct(pr, pc[i]));
		if (!m[T_P_EXTRACT + i].available)
			snprintf(m[T_P_EXTRACT + i].why, sizeof m[0].why, "%s", !pr->want ?
				"--no-profile" : pr->why[0] ? pr->why : "no samples");
		else {
			double lo, hi;

			fm_prof_share_ci95(pr->p.samples[pc[i]], pr->p.total, &lo, &hi);
			snprintf(m[T_P_EXTRACT + i].why, sizeof m[0].why, "%llu of %llu samples, 95%% "
				"interval %.2f..%.2f", (unsigned long long)pr->p.samples[pc[i]],
				(unsigned long long)pr->p.total, lo, hi);
		}
	}
}
