/* hist_json.c: histograms to and from their compact JSON form (see hist_json.h). */
#include "hist_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "hist.h"

#define HJ_INT_MAX ((uint64_t)INT64_MAX)

json_t *fl_hist_to_json(const struct fl_hist *h)
{
	json_t *o, *b = json_array();
	int bad = b == NULL;

	if (h->n > HJ_INT_MAX || (h->n > 0 && h->max > HJ_INT_MAX) || h->sum < 0) {
		json_decref(b);
		return NULL;
	}
	for (unsigned i = 0; i < FL_HIST_BUCKETS && !bad; i++)
		if (h->counts[i] > 0)
			bad = json_array_append_new(b, json_pack("[II]", (json_int_t)i,
				(json_int_t)h->counts[i])) != 0;
	/* Values are whole ns, so the sum is a whole number: exact while it fits. */
	json_t *sum = h->sum <= (long double)HJ_INT_MAX ? json_integer((json_int_t)h->sum) :
		json_real((double)h->sum);
	json_t *lo = h->n ? json_integer((json_int_t)h->min) : json_null();
	json_t *hi = h->n ? json_integer((json_int_t)h->max) : json_null();
	if (bad || sum == NULL || lo == NULL || hi == NULL) {
		json_decref(b);
		json_decref(sum);
		json_decref(lo);
		json_decref(hi);
		return NULL;
	}
	o = json_pack("{sisIsosososo}", "sub_bits", (int)FL_HIST_SUB_BITS, "count",
		(json_int_t)h->n, "min", lo, "max", hi, "sum", sum, "buckets", b);
	return o;
}

/* A non-negative JSON integer of o's key into *v. 0, or -1 when missing or not one. */
static int hj_uint(const json_t *o, const char *key, uint64_t *v)
{
	const json_t *x = json_object_get(o, key);
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(x);
	return 0;
}

/* The buckets array into h->counts, checking order, range and the total. 0 or -1. */
static int hj_buckets(const json_t *a, struct fl_hist *h, unsigned *first, unsigned *last,
	uint64_t *total, char *err, size_t errlen)
{
	size_t k;
	const json_t *e;
	long prev = -1;

	if (!json_is_array(a)) {
		snprintf(err, errlen, "histogram: buckets is not an array");
		return -1;
	}
	*total = 0;
	json_array_foreach(a, k, e) {
		const json_t *ji = json_array_get(e, 0), *jc = json_array_get(e, 1);
		if (json_array_size(e) != 2 || !json_is_integer(ji) || !json_is_integer(jc)) {
			snprintf(err, errlen, "histogram: bucket %zu is not [index, count]", k);
			return -1;
		}
		json_int_t i = json_integer_value(ji), c = json_integer_value(jc);
		if (i < 0 || i >= (json_int_t)FL_HIST_BUCKETS || i <= prev) {
			snprintf(err, errlen, "histogram: bucket index %lld out of range [0, %u) or "
				"not increasing", (long long)i, FL_HIST_BUCKETS);
			return -1;
		}
		if (c <= 0 || (uint64_t)c > HJ_INT_MAX - *total) {
			snprintf(err, errlen, "histogram: bucket %lld count %lld (must be > 0, and "
				"all together < 2^63)", (long long)i, (long long)c);
			return -1;
		}
		if (prev < 0)
			*first = (unsigned)i;
		*last = (unsigned)i;
		prev = (long)i;
		h->counts[i] = (uint64_t)c;
		*total += (uint64_t)c;
	}
	return 0;
}

/* min, max and sum of a histogram with n > 0 values, against its buckets. 0 or -1. */
static int hj_extent(const json_t *j, struct fl_hist *h, unsigned first, unsigned last,
	char *err, size_t errlen)
{
	const json_t *js = json_object_get(j, "sum");

	if (hj_uint(j, "min", &h->min) != 0 || hj_uint(j, "max", &h->max) != 0 ||
	    h->min > h->max) {
		snprintf(err, errlen, "histogram: min and max must be integers, min <= max");
		return -1;
	}
	if (fl_hist_bucket(h->min) != first || fl_hist_bucket(h->max) != last) {
		snprintf(err, errlen, "histogram: min %llu or max %llu lies outside the first "
			"or last non-empty bucket", (unsigned long long)h->min,
			(unsigned long long)h->max);
		return -1;
	}
	if (json_is_integer(js) && json_integer_value(js) >= 0)
		h->sum = (long double)json_integer_value(js);
	else if (json_is_real(js) && json_real_value(js) >= 0)
		h->sum = (long double)json_real_value(js);
	else {
		snprintf(err, errlen, "histogram: sum is not a number >= 0");
		return -1;
	}
	/* A real sum (past 2^63) is rounded: allow its rounding, no more. */
	long double n = (long double)h->n, slack = json_is_real(js) ? h->sum * 1e-12L : 0;
	if (h->sum + slack < (long double)h->min * n || h->sum - slack > (long double)h->max * n) {
		snprintf(err, errlen, "histogram: sum outside [min x count, max x count]");
		return -1;
	}
	return 0;
}

int fl_hist_from_json(const json_t *j, struct fl_hist *h, char *err, size_t errlen)
{
	uint64_t sub, total;
	unsigned first = 0, last = 0;

	fl_hist_init(h);
	if (!json_is_object(j)) {
		snprintf(err, errlen, "histogram: not a JSON object");
		return -1;
	}
	if (hj_uint(j, "sub_bits", &sub) != 0 || sub != FL_HIST_SUB_BITS) {
		snprintf(err, errlen, "histogram: sub_bits is not %u (another bucket layout)",
			FL_HIST_SUB_BITS);
		return -1;
	}
	if (hj_uint(j, "count", &h->n) != 0) {
		snprintf(err, errlen, "histogram: count is not an integer >= 0");
		goto bad;
	}
	if (hj_buckets(json_object_get(j, "buckets"), h, &first, &last, &total, err,
	    errlen) != 0)
		goto bad;
	if (total != h->n) {
		snprintf(err, errlen, "histogram: buckets hold %llu values, count says %llu",
			(unsigned long long)total, (unsigned long long)h->n);
		goto bad;
	}
	if (h->n == 0) {
		h->min = UINT64_MAX;
		return 0;
	}
	if (hj_extent(j, h, first, last, err, errlen) != 0)
		goto bad;
	return 0;
bad:
	fl_hist_init(h);
	return -1;
}

int fl_hist_merge_json(struct fl_hist *dst, const json_t *j, char *err, size_t errlen)
{
	struct fl_hist *h = malloc(sizeof *h);

	if (h == NULL) {
		snprintf(err, errlen, "histogram: out of memory");
		return -1;
	}
	int rc = fl_hist_from_json(j, h, err, errlen);
	if (rc == 0)
		fl_hist_merge(dst, h);
	free(h);
	return rc;
}
