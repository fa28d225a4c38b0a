/* quantile_ci.h: the order-statistics confidence interval of a percentile (header only, pure).
 *
 * With n samples, the rank of the q-quantile is about n*q, and a 95% interval for it spans
 * n*q +- z*sqrt(n*q*(1-q)) ranks, z = 1.96 (the binomial normal approximation, the bound
 * Lancet uses for its tail-latency confidence). The values at those ranks bound the
 * percentile. frontload-driver reports them with every control-mode step; the search of
 * `frontload run` judges a step only when its SLA lies outside them.
 */
#ifndef FL_QUANTILE_CI_H
#define FL_QUANTILE_CI_H

#include <math.h>

#define FL_CI_Z95 1.959963985  /* two-sided 95% normal quantile */

/* Ranks (1-based, clamped to [1, n]) bounding the q-quantile of n samples at z. For n = 0
 * both are 0. */
static inline void fl_ci_rank_interval(double n, double q, double z, double *lo, double *hi)
{
	if (!(n >= 1)) {
		*lo = *hi = 0;
		return;
	}
	double c = n * q, h = z * sqrt(n * q * (1 - q));
	*lo = fmax(1, floor(c - h));
	*hi = fmin(n, ceil(c + h));
}

/* Samples needed so the q-quantile's interval spans at most +- half percentile points
 * (half in (0, 100)): n >= z^2 q (1-q) / (half/100)^2. */
static inline double fl_ci_samples_for(double q, double z, double half)
{
	double w = half / 100;
	return ceil(z * z * q * (1 - q) / (w * w));
}

#endif
