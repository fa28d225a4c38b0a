/* verdicts.c: the harness's measured figures per target metric (simulated, hardware,
 * native stage shares), with why a path cannot produce one, and the verdict table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include <jansson.h>

#include "mutil.h"
#include "simreport.h"
#include "simrun.h"
#include "targets.h"
#include "verdicts.h"

const char *const fm_metric_names[FM_M_N] = {
	"l1i_mpki", "ipc", "frontend_bound_pct", "scalar_fp_pct", "cond_branch_pct",
	"call_ret_pct", "mem_pct", "div_pct", "insns_per_taken_branch", "extract_cpu_pct",
};

static void meas_set(struct fl_measured *m, unsigned path, double v)
{
	m->available = 1;
	m->value = v;
	m->path = path;
	m->why[0] = '\0';
}

static void meas_none(struct fl_measured *m, unsigned path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void meas_none(struct fl_measured *m, unsigned path, const char *fmt, ...)
{
	va_list ap;

	m->available = 0;
	m->value = NAN;
	m->path = path;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

/* Stage share from a native run's summary: path native. */
void fm_meas_extract(struct fl_measured *m, json_t *native)
{
	double v = fm_json_num(native, "extract_cpu_share");

	if (isfinite(v))
		meas_set(m, FL_PATH_NATIVE, 100.0 * v);
	else
		meas_none(m, FL_PATH_NATIVE, "no native stage timings");
}

void fm_meas_sim(struct fl_measured m[FM_M_N], const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	unsigned p = FL_PATH_SIMULATED;

	if (x->l1i_mpki.available)
		meas_set(&m[FM_M_L1I], p, x->l1i_mpki.value);
	else
		meas_none(&m[FM_M_L1I], p, "%s", x->l1i_mpki.why);
	meas_none(&m[FM_M_IPC], p, "callgrind has no timing model: IPC needs hardware counters");
	meas_none(&m[FM_M_FE], p, "callgrind has no pipeline model: front-end bound needs "
		"hardware counters (top-down)");
	if (x->insns == 0) {
		for (int k = FM_M_FP; k <= FM_M_IPTB; k++)
			meas_none(&m[k], p, "no instruction was classified (objdump)");
		return;
	}
	meas_set(&m[FM_M_FP], p, fm_pct(x->scalar_fp, x->insns));
	meas_set(&m[FM_M_COND], p, fm_pct(x->cond, x->insns));
	meas_set(&m[FM_M_CALLRET], p, fm_pct(x->call + x->call_ind + x->ret, x->insns));
	meas_set(&m[FM_M_MEM], p, fm_pct(x->loads + x->stores, x->insns));
	meas_set(&m[FM_M_DIV], p, fm_pct(x->int_div + x->fp_div, x->insns));
	if (x->taken_branches)
		meas_set(&m[FM_M_IPTB], p, x->insns_per_taken);
	else
		meas_none(&m[FM_M_IPTB], p, "no taken branches were recorded");
}

/* Hardware path: counters from a native --pmu run; mix metrics are not counted. */
void fm_meas_hw(struct fl_measured m[FM_M_N], json_t *native)
{
	unsigned p = FL_PATH_HARDWARE;
	json_t *pmu = json_object_get(native, "pmu");
	const char *why = json_string_value(json_object_get(pmu, "why"));
	static const struct { int k; const char *key; double scale; } hw[] = {
		/* top-down slots only: the stall-cycle ratio is another quantity (fm_hw_extra) */
		{ FM_M_L1I, "l1i_mpki", 1 }, { FM_M_IPC, "ipc", 1 }, { FM_M_FE, "frontend_bound_slots", 100 },
	};

	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
		json_t *mm = json_object_get(json_object_get(pmu, "metrics"), hw[i].key);

		if (json_is_true(json_object_get(pmu, "supported")) &&
		    json_is_true(json_object_get(mm, "supported")))
			meas_set(&m[hw[i].k], p, hw[i].scale *
				json_number_value(json_object_get(mm, "value")));
		else
			meas_none(&m[hw[i].k], p, "unsupported: %s", mm ?
				json_string_value(json_object_get(mm, "why")) :
				why ? why : "no counters");
	}
	for (int k = FM_M_FP; k <= FM_M_IPTB; k++)
		meas_none(&m[k], p, "the hardware path reads no per-class counters: use "
			"--simulate for the instruction mix");
}

/* A hardware metric of simreq's summary (pmu.metrics.KEY): its value, or NAN. */
static double hw_metric(json_t *native, const char *key)
{
	json_t *mm = json_object_get(json_object_get(json_object_get(native, "pmu"), "metrics"),
		key);

	return json_is_true(json_object_get(mm, "supported")) ?
		json_number_value(json_object_get(mm, "value")) : NAN;
}

/* Hardware figures that have no target: the front-end stall-cycle ratio (a share of
 * cycles, not of slots, so never judged against the slot target) and the formula of the
 * top-down figure. Printed and put in the JSON beside the targets. */
json_t *fm_hw_extra(json_t *native, int print)
{
	json_t *fb = json_object_get(json_object_get(json_object_get(native, "pmu"), "metrics"),
		"frontend_bound_slots");
	const char *formula = json_string_value(json_object_get(fb, "formula"));
	double r = hw_metric(native, "frontend_stall_cycle_ratio");

	if (print) {
		if (formula)
			printf("frontend_bound_pct = 100 * %s\n", formula);
		if (isfinite(r))
			printf("frontend_stall_cycle_ratio (stalled-cycles-frontend / cycles, no "
				"target: a share of cycles, not of slots): %.3f\n", r);
		else
			printf("frontend_stall_cycle_ratio: unsupported\n");
	}
	return json_pack("{s:o,s:o}", "frontend_stall_cycle_ratio", fm_num_or_null(r),
		"frontend_bound_formula", formula ? json_string(formula) : json_null());
}

void fm_print_table(const struct fl_targets *tg, const struct fl_measured m[FM_M_N],
	const enum fl_verdict v[FM_M_N], const int have[FM_M_N])
{
	char t[64], val[32];

	printf("%-38s %-12s %10s  %-13s %s\n", "metric", "target", "measured", "verdict",
		"path");
	for (int k = 0; k < FM_M_N; k++) {
		const struct fl_target *x = fl_targets_find(tg, fm_metric_names[k]);

		if (!have[k] || x == NULL)
			continue;
		if (m[k].available)
			snprintf(val, sizeof(val), "%.2f", m[k].value);
		else
			snprintf(val, sizeof(val), "-");
		printf("%-38s %-12s %10s  %-13s %s\n", x->label, fl_target_str(x, t, sizeof(t)),
			val, fl_verdict_name(v[k]), fl_path_name(m[k].path));
		if (!m[k].available)
			printf("    %s\n", m[k].why);
		if (v[k] == FL_VERDICT_FAIL && x->knob[0] != '\0')
			printf("    what moves it: %s\n", x->knob);
	}
}
