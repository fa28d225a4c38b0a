/* hist.c: log-linear latency histogram (see hist.h for the error bound). */
#include "hist.h"
#include "quantile_ci.h"

#include <math.h>
#include <string.h>

void fl_hist_init(struct fl_hist *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

unsigned fl_hist_bucket(uint64_t v)
{
	if (v < FL_HIST_SUB)
		return (unsigned)v;
	unsigned mag = 63u - (unsigned)__builtin_clzll(v);  /* >= FL_HIST_SUB_BITS */
	unsigned shift = mag - FL_HIST_SUB_BITS;
	/* v >> shift lies in [SUB, 2 SUB): the sub-bucket within this power of two. */
	return FL_HIST_SUB * shift + (unsigned)(v >> shift);
}

void fl_hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	if (b < 2 * FL_HIST_SUB) {
		*lo = *hi = b;
		return;
	}
	unsigned shift = b / FL_HIST_SUB - 1u;
	uint64_t sub = (uint64_t)(b % FL_HIST_SUB) + FL_HIST_SUB;
	*lo = sub << shift;
	*hi = *lo + ((1ull << shift) - 1u);
}

void fl_hist_record_n(struct fl_hist *h, uint64_t v, uint64_t count)
{
	if (count == 0)
		return;
	h->counts[fl_hist_bucket(v)] += count;
	h->n += count;
	h->sum += (long double)v * (long double)count;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void fl_hist_record(struct fl_hist *h, uint64_t v)
{
	fl_hist_record_n(h, v, 1);
}

void fl_hist_merge(struct fl_hist *dst, const struct fl_hist *src)
{
	if (src->n == 0)
		return;
	for (unsigned i = 0; i < FL_HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->n += src->n;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t fl_hist_percentile(const struct fl_hist *h, double p)
{
	if (h->n == 0)
		return 0;
	if (!(p > 0))
		return h->min;
	if (p >= 100)
		return h->max;
	uint64_t rank = (uint64_t)ceill((long double)p / 100.0L * (long double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < FL_HIST_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen < rank)
			continue;
		uint64_t lo, hi;
		fl_hist_bucket_range(b, &lo, &hi);
		uint64_t mid = lo + (hi - lo) / 2;
		if (mid < h->min)
			mid = h->min;
		if (mid > h->max)
			mid = h->max;
		return mid;
	}
	return h->max;
}

int fl_hist_quantile_interval(const struct fl_hist *h, double q, double z, uint64_t *lo,
	uint64_t *hi)
{
	double n = (double)h->n, rlo, rhi;

	if (h->n == 0)
		return -1;
	fl_ci_rank_interval(n, q, z, &rlo, &rhi);
	/* fl_hist_percentile finds rank ceil(p/100 n): p = 100 rank / n, a hair under. */
	*lo = fl_hist_percentile(h, 100 * (rlo - 0.5) / n);
	*hi = fl_hist_percentile(h, 100 * (rhi - 0.5) / n);
	return 0;
}

double fl_hist_mean(const struct fl_hist *h)
{
	return h->n ? (double)(h->sum / (long double)h->n) : 0.0;
}
