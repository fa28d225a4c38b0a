/* hist_json.h: a latency histogram (hist.h) as compact, exact JSON, and back.
 *
 * The form (values in ns, as recorded):
 *   {"sub_bits": 7, "count": N, "min": NS, "max": NS, "sum": NS,
 *    "buckets": [[INDEX, COUNT], ...]}
 * buckets lists the non-empty buckets (fl_hist_bucket indices, increasing, counts > 0);
 * sub_bits is FL_HIST_SUB_BITS, the layout the indices belong to. An empty histogram has
 * count 0, min and max null, sum 0 and no buckets. A histogram rebuilt from this form has
 * the same buckets, count, min, max and sum, so its percentiles, and those of a merge of
 * several (fl_hist_merge), are exactly what one histogram of the pooled values gives.
 * frontload-driver sends it with every control-mode step (latency_hist_ns) so that
 * `frontload run --drivers N` can judge the drivers' pooled p95.
 */
#ifndef FL_HIST_JSON_H
#define FL_HIST_JSON_H

#include <stddef.h>

struct fl_hist;
struct json_t;

/* h in the form above. NULL when out of memory, or when a value or a count does not fit
 * a JSON integer (>= 2^63). The caller owns the reference. */
struct json_t *fl_hist_to_json(const struct fl_hist *h);

/* Rebuild h from j (h is emptied first). Returns 0, or -1 with err when j is not that
 * form: another sub_bits, an index out of range or out of order, a count of 0, bucket
 * counts that do not add up to count, min or max outside their buckets, a sum outside
 * [min x count, max x count]. */
int fl_hist_from_json(const struct json_t *j, struct fl_hist *h, char *err, size_t errlen);

/* Rebuild j and add it to dst (fl_hist_merge). dst is unchanged when j is refused.
 * Returns 0, or -1 with err (as fl_hist_from_json, or out of memory). */
int fl_hist_merge_json(struct fl_hist *dst, const struct json_t *j, char *err,
	size_t errlen);

#endif
