/* calib_foot.c: the generated code's instruction share against an L1i MPKI target
 * (calib_foot.h). */
#include <math.h>
#include <string.h>

#include "calib_foot.h"

/* A number field of o, NAN when absent or not a number. */
static double cf_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The generated library's entry of validate's per-object table, NULL when absent. */
static const json_t *cf_generated(const json_t *v)
{
	const json_t *o;
	size_t i;

	json_array_foreach(json_object_get(v, "objects"), i, o)
		if (json_is_string(json_object_get(o, "name")) &&
		    strcmp(json_string_value(json_object_get(o, "name")), "generated") == 0)
			return o;
	return NULL;
}

double fm_foot_odds(const json_t *v, double t)
{
	const json_t *gen = cf_generated(v), *proc = json_object_get(v, "process");
	double I = cf_num(proc, "instructions"), m = cf_num(proc, "l1i_mpki");
	double ig = cf_num(gen, "instructions"), mg = cf_num(gen, "l1i_mpki");

	if (!(I > 0 && ig > 0 && ig < I && isfinite(m) && isfinite(mg)))
		return NAN;
	/* Misses split: the rest's MPKI from the process's misses less the generated code's. */
	double s = ig / I, mo = fmax(0, (m * I - mg * ig) / (I - ig));
	/* When the generated code misses no more than the rest, more of it lowers the
	 * process's MPKI: ask for the least of it to raise the MPKI, the most to lower it. */
	double st = mg > mo ? (t - mo) / (mg - mo) : (t > m ? 0 : 1);

	st = fmin(fmax(st, 0.01), 0.99);
	return (s / (1 - s)) / (st / (1 - st));
}

double fm_foot_cost(const json_t *v)
{
	double cpu = cf_num(json_object_get(json_object_get(json_object_get(v, "stages"),
		"stages"), "extract"), "cpu_ns");
	double n = cf_num(json_object_get(json_object_get(v, "native"), "driver_step"), "ok");
	double ipr = cf_num(cf_generated(v), "ir_per_request");

	if (!(cpu > 0 && n > 0 && ipr > 0))
		return NAN;
	return cpu / n / ipr;
}

double fm_foot_slope(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, lo = INFINITY, hi = -INFINITY;

	if (n < 2)
		return NAN;
	for (int i = 0; i < n; i++) {
		mx += x[i] / n;
		my += y[i] / n;
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	if (!(hi - lo >= 0.1))
		return NAN;
	for (int i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	return sxy / sxx;
}
