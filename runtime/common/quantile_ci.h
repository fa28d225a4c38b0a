/* quantile_ci.h: the order-statistics confidence interval of a percentile (header only, pure).
 *
 * With n samples, the rank of the q-quantile is about n*q, and a 95% interval for it spans
 * n*q +- z*sqrt(n*q*(1-q)) ranks, z = 1.96 (the binomial normal approximation, the bound
 * Lancet uses for its tail-latency confidence). The values at those ranks bound the
 * percentile. frontload-driver reports them with every control-mode step; the search of
 * `frontload run` judges a step only when its SLA lies outside them.
 *
 * That interval treats the n latencies as independent; in a queue they are not (a request
 * that waited behind a slow one is slow too), and near saturation a window's latencies
 * move together for seconds. Batch means (Law & Kelton) widen it: split the window into b
 * batches (seconds), take the statistic of each, and the statistic's 95% interval spans
 * +- t(b-1) x sd / sqrt(b) of their values. A queue still building up in the window (its
 * batches' p95 rising) gets a wide interval, so a short step cannot pass it by luck.
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

/* Student's t two-sided 95% quantile for df (>= 1) degrees of freedom: the table to 30,
 * then 1.96 + 2.4 / df (within 0.3% of the exact value there). */
static inline double fl_ci_t95(unsigned df)
{
	static const double t[30] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
	if (df == 0)
		return INFINITY;
	return df <= 30 ? t[df - 1] : FL_CI_Z95 + 2.4 / df;
}

#define FL_CI_MIN_BATCHES 3u  /* fewer batches give no batch-means interval */

/* Batch means: the half-width of the 95% interval of a statistic from its values x[0..b)
 * over b batches, t(b-1) x sd / sqrt(b); -1 for b < FL_CI_MIN_BATCHES. */
static inline double fl_ci_batch_half(const double *x, unsigned b)
{
	double mean = 0, ss = 0;

	if (b < FL_CI_MIN_BATCHES)
		return -1;
	for (unsigned i = 0; i < b; i++)
		mean += x[i];
	mean /= b;
	for (unsigned i = 0; i < b; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	return fl_ci_t95(b - 1) * sqrt(ss / (b - 1)) / sqrt((double)b);
}

#endif
