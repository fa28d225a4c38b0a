/* hist.h: latency histogram with bounded relative error (HDR-style log-linear buckets).
 *
 * Values are unsigned 64-bit (the runtime records nanoseconds). Values below 128 have a
 * bucket each; above, every power of two is split into 128 equal sub-buckets, so a bucket
 * is at most 1/128 of its lower bound wide and a reported percentile (the bucket midpoint,
 * clamped to the recorded min and max) is within 0.4% of a true recorded value. Fixed size
 * (FL_HIST_BUCKETS counters, ~58 KiB), no allocation: one per thread, merged after.
 */
#ifndef FL_HIST_H
#define FL_HIST_H

#include <stdint.h>

#define FL_HIST_SUB_BITS 7u
#define FL_HIST_SUB (1u << FL_HIST_SUB_BITS)              /* sub-buckets per power of two */
#define FL_HIST_BUCKETS (FL_HIST_SUB * (64u - FL_HIST_SUB_BITS + 1u))

struct fl_hist {
	uint64_t counts[FL_HIST_BUCKETS];
	uint64_t n;     /* values recorded */
	uint64_t min;   /* smallest value (UINT64_MAX when empty) */
	uint64_t max;   /* largest value (0 when empty) */
	long double sum; /* sum of values, for the mean (long double: no overflow in practice) */
};

/* Empty h. */
void fl_hist_init(struct fl_hist *h);

/* Record one value, or count values of v at once. */
void fl_hist_record(struct fl_hist *h, uint64_t v);
void fl_hist_record_n(struct fl_hist *h, uint64_t v, uint64_t count);

/* Add src's counts to dst. */
void fl_hist_merge(struct fl_hist *dst, const struct fl_hist *src);

/* Value at percentile p (0..100, clamped): the smallest bucket whose cumulative count
 * reaches ceil(p/100 * n) (at least 1), reported as its midpoint clamped to [min, max].
 * 0 when empty. */
uint64_t fl_hist_percentile(const struct fl_hist *h, double p);

/* The order-statistics interval of the q-quantile (0 < q < 1) at z (quantile_ci.h): the
 * values at ranks n q -+ z sqrt(n q (1-q)) of the n recorded, as fl_hist_percentile reports
 * values. Returns 0 with *lo and *hi, or -1 when h is empty. */
int fl_hist_quantile_interval(const struct fl_hist *h, double q, double z, uint64_t *lo,
	uint64_t *hi);

/* Mean of recorded values; 0 when empty. */
double fl_hist_mean(const struct fl_hist *h);

/* Bucket index of v and the bucket's [lo, hi] value range (for tests and exports). */
unsigned fl_hist_bucket(uint64_t v);
void fl_hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
