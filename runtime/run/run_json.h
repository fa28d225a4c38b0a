/* run_json.h: small readers and writers of JSON figures the run's result files share.
 *
 * Private to runtime/run/: static inline so run_obs.c, run_window.c and run_result.c use
 * one definition each without a module of four functions. */
#ifndef FL_RUN_JSON_H
#define FL_RUN_JSON_H

#include <math.h>
#include <stdint.h>

#include <jansson.h>

static inline double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* A count, saturated at INT64_MAX: a double past uint64's range does not convert (the
 * behaviour is undefined), and result.json writes counts as signed JSON integers. */
static inline uint64_t jcount(const json_t *o, const char *key)
{
	double v = jnum(o, key);
	return v >= 0x1p63 ? (uint64_t)INT64_MAX : v > 0 ? (uint64_t)v : 0;
}

/* A difference of two stats figures as a JSON integer, saturated to json_int_t's range
 * (a corrupt stats file must not make the conversion undefined); NaN gives 0. */
static inline json_int_t jdelta(double v)
{
	if (v >= 0x1p63)
		return INT64_MAX;
	if (v < -0x1p63)
		return INT64_MIN;
	return isnan(v) ? 0 : (json_int_t)v;
}

/* Real number or null when not finite / flagged unknown. */
static inline json_t *jreal(double v)
{
	return isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null();
}

/* Copy key from src to dst when present. */
static inline void copy_key(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);
	if (v != NULL)
		json_object_set(dst, key, v);
}

#endif
