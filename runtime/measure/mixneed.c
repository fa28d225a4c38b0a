/* mixneed.c: the value one part of a process would need for the whole to meet a mix
 * target (mixneed.h). The shares are linear in the parts' counts; instructions per taken
 * branch is a ratio, so the need is solved on taken branches. */
#include <math.h>

#include "mixneed.h"

/* The metric's count in x, and the most of it one instruction can carry. */
static double mm_count(const struct fl_mix *x, enum fl_mix_metric m, double *cap)
{
	*cap = 1;
	switch (m) {
	case FL_MM_COND:
		return (double)x->cond;
	case FL_MM_MEM:
		*cap = 2;  /* a read-modify-write counts as a load and a store */
		return (double)x->loads + (double)x->stores;
	case FL_MM_FP:
		return (double)x->scalar_fp;
	case FL_MM_CALLRET:
		return (double)x->call + (double)x->call_ind + (double)x->ret;
	case FL_MM_DIV:
		return (double)x->int_div + (double)x->fp_div;
	case FL_MM_IPTB:
		break;
	}
	return (double)x->taken_branches;
}

double fl_mix_metric_value(const struct fl_mix *x, enum fl_mix_metric m)
{
	double cap, c = mm_count(x, m, &cap);

	if (x->insns == 0)
		return NAN;
	if (m == FL_MM_IPTB)
		return c > 0 ? (double)x->insns / c : NAN;
	return 100 * c / (double)x->insns;
}

double fl_mix_points(const struct fl_mix *whole, const struct fl_mix *part,
	enum fl_mix_metric m)
{
	double cap;

	if (m == FL_MM_IPTB || whole->insns == 0)
		return NAN;
	return 100 * mm_count(part, m, &cap) / (double)whole->insns;
}

void fl_mix_minus(const struct fl_mix *a, const struct fl_mix *b, struct fl_mix *out)
{
	*out = (struct fl_mix){ 0 };
#define MM_SUB(f) out->f = a->f > b->f ? a->f - b->f : 0
	MM_SUB(insns);
	MM_SUB(cond);
	MM_SUB(loads);
	MM_SUB(stores);
	MM_SUB(scalar_fp);
	MM_SUB(call);
	MM_SUB(call_ind);
	MM_SUB(ret);
	MM_SUB(int_div);
	MM_SUB(fp_div);
	MM_SUB(taken_branches);
#undef MM_SUB
}

double fl_mix_need(const struct fl_mix *whole, const struct fl_mix *part,
	enum fl_mix_metric m, double bound)
{
	double cap, n = (double)whole->insns, p = (double)part->insns;
	double rest = mm_count(whole, m, &cap) - mm_count(part, m, &cap), need;

	if (part->insns == 0 || whole->insns == 0)
		return NAN;
	if (m == FL_MM_IPTB) {
		/* taken(rest) + p / need = n / bound */
		double room = n / bound - rest;

		return room > 0 ? p / room : INFINITY;
	}
	need = (bound / 100 * n - rest) / p;
	if (need > cap)
		return INFINITY;
	if (need < 0)
		return -INFINITY;
	return 100 * need;
}
