/* simreport.c: the JSON and text figures of a simulated run (mix, rates per 1000
 * instructions, geometry), shared by validate --harness and mix. */
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "cpumodel.h"
#include "simreport.h"
#include "simrun.h"

double fm_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

json_t *fm_num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A figure as text (buf of 32), "n/a" when not measured. */
const char *fm_num_str(double v, const char *fmt, char *buf)
{
	if (!isfinite(v))
		return "n/a";
	snprintf(buf, 32, fmt, v);
	return buf;
}

const char *fm_rate_str(const struct fl_mix_rate *r, const char *fmt, char *buf)
{
	return fm_num_str(r->available ? r->value : NAN, fmt, buf);
}

/* The mix and rates as valgrind's Ir counts them (each rep string iteration one
 * instruction, a movs iteration a load and a store), from the same run: what frontload
 * printed before the rep correction, for comparison. */
static json_t *mix_uncorrected_json(const struct fl_mix *x)
{
	uint64_t n = x->insns + x->rep_ir_removed;
	double k = x->ir_total ? (double)x->ir_hw / (double)x->ir_total : NAN;
	json_t *o = json_object();

	json_object_set_new(o, "instructions", json_integer((json_int_t)x->ir_total));
	json_object_set_new(o, "mem_pct", fm_num_or_null(fm_pct(x->loads + x->stores +
		x->rep_removed_loads + x->rep_removed_stores, n)));
	json_object_set_new(o, "insns_per_taken_branch", x->taken_branches ?
		json_real((double)n / (double)x->taken_branches) : json_null());
	json_object_set_new(o, "l1i_mpki", x->l1i_mpki.available && isfinite(k) ?
		json_real(x->l1i_mpki.value * k) : json_null());
	json_object_set_new(o, "ll_code_mpki", x->lli_mpki.available && isfinite(k) ?
		json_real(x->lli_mpki.value * k) : json_null());
	return o;
}

json_t *fm_mix_json(const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	json_t *o = json_object();
	uint64_t n = x->insns;

	json_object_set_new(o, "ir", json_integer((json_int_t)s->ir));
	json_object_set_new(o, "instructions", json_integer((json_int_t)x->ir_hw));
	json_object_set_new(o, "rep_ir_removed", json_integer((json_int_t)x->rep_ir_removed));
	json_object_set_new(o, "plt_stub_insns", json_integer((json_int_t)x->plt_ir));
	json_object_set_new(o, "rep_ir_removed_pct", fm_num_or_null(fm_pct(x->rep_ir_removed,
		x->ir_total)));
	json_object_set_new(o, "rep_executions", json_integer((json_int_t)x->rep_execs));
	json_object_set_new(o, "rep_ir", json_integer((json_int_t)x->rep_ir));
	json_object_set_new(o, "rep_uncorrected_ir",
		json_integer((json_int_t)x->rep_uncorrected_ir));
	json_object_set_new(o, "classified", json_integer((json_int_t)n));
	json_object_set_new(o, "classified_share", fm_num_or_null(s->classified_share));
	json_object_set_new(o, "objects", json_string(s->objects));
	json_object_set_new(o, "cond_branch_pct", fm_num_or_null(fm_pct(x->cond, n)));
	json_object_set_new(o, "cond_taken_rate", n ? json_real(x->taken_rate) : json_null());
	json_object_set_new(o, "jump_pct", fm_num_or_null(fm_pct(x->jmp, n)));
	json_object_set_new(o, "indirect_jump_pct", fm_num_or_null(fm_pct(x->jmp_ind, n)));
	json_object_set_new(o, "call_pct", fm_num_or_null(fm_pct(x->call, n)));
	json_object_set_new(o, "indirect_call_pct", fm_num_or_null(fm_pct(x->call_ind, n)));
	json_object_set_new(o, "ret_pct", fm_num_or_null(fm_pct(x->ret, n)));
	json_object_set_new(o, "call_ret_pct", fm_num_or_null(fm_pct(x->call + x->call_ind + x->ret,
		n)));
	json_object_set_new(o, "load_pct", fm_num_or_null(fm_pct(x->loads, n)));
	json_object_set_new(o, "store_pct", fm_num_or_null(fm_pct(x->stores, n)));
	json_object_set_new(o, "mem_pct", fm_num_or_null(fm_pct(x->loads + x->stores, n)));
	json_object_set_new(o, "mem_any_pct", fm_num_or_null(fm_pct(x->mem, n)));
	json_object_set_new(o, "scalar_fp_pct", fm_num_or_null(fm_pct(x->scalar_fp, n)));
	json_object_set_new(o, "vector_pct", fm_num_or_null(fm_pct(x->vector, n)));
	json_object_set_new(o, "div_pct", fm_num_or_null(fm_pct(x->int_div + x->fp_div, n)));
	json_object_set_new(o, "int_div_pct", fm_num_or_null(fm_pct(x->int_div, n)));
	json_object_set_new(o, "fp_div_pct", fm_num_or_null(fm_pct(x->fp_div, n)));
	json_object_set_new(o, "insns_per_taken_branch", x->taken_branches ?
		json_real(x->insns_per_taken) : json_null());
	json_object_set_new(o, "taken_branches", json_integer((json_int_t)x->taken_branches));
	json_object_set_new(o, "unclassified_ir", json_integer((json_int_t)(x->unmapped_ir +
		x->unmatched_ir)));
	json_object_set_new(o, "uncorrected", mix_uncorrected_json(x));
	return o;
}

json_t *fm_rates_json(const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	json_t *o = json_object();
	const struct { const char *k; const struct fl_mix_rate *r; } rr[] = {
		{ "l1i_mpki", &x->l1i_mpki }, { "ll_code_mpki", &x->lli_mpki },
		{ "cond_branch_mpki", &x->cond_mpki }, { "indirect_branch_mpki", &x->ind_mpki },
	};

	for (size_t i = 0; i < sizeof(rr) / sizeof(rr[0]); i++)
		json_object_set_new(o, rr[i].k, rr[i].r->available ? json_real(rr[i].r->value) :
			json_null());
	json_object_set_new(o, "per_1000", json_string(x->rep_corrected ?
		"instructions: Ir less rep string iterations (mix.instructions)" : "valgrind Ir"));
	json_object_set_new(o, "cond_mispredict_pct", fm_num_or_null(fm_pct(s->bcm, s->bc)));
	json_object_set_new(o, "indirect_mispredict_pct", fm_num_or_null(fm_pct(s->bim, s->bi)));
	return o;
}

json_t *fm_geometry_json(const struct fm_run *r, const char *cpu, json_t *notes)
{
	const struct fm_cpu *c = fm_cpu_find(cpu);
	char a[64], b[64], d[64];

	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:O}", "cpu", cpu, "title", c->title,
		"I1", fm_cache_str(&r->geo.i1, a, sizeof(a)), "D1", fm_cache_str(&r->geo.d1, b, sizeof(b)),
		"LL", fm_cache_str(&r->geo.ll, d, sizeof(d)), "source", c->source, "notes", notes);
}
