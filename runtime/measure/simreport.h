/* simreport.h: the figures of a simulated run as JSON and text: the instruction mix, the
 * rates per 1000 instructions, the geometry. A figure that was not measured is null in
 * JSON and "n/a" in text, never 0. */
#ifndef FL_SIMREPORT_H
#define FL_SIMREPORT_H

#include <stdint.h>

#include <jansson.h>

#include "mix.h"

struct fm_sim;
struct fm_run;

/* 100 a / b, NAN when b is 0. */
double fm_pct(uint64_t a, uint64_t b);

/* v as a JSON real, null when not finite. */
json_t *fm_num_or_null(double v);

/* v printed with fmt into buf (32 bytes), "n/a" when not finite; fm_rate_str the same for
 * a rate that may be unavailable. */
const char *fm_num_str(double v, const char *fmt, char *buf);
const char *fm_rate_str(const struct fl_mix_rate *r, const char *fmt, char *buf);

/* The mix (rep-corrected, with the uncorrected figures beside it) and the rates. */
json_t *fm_mix_json(const struct fm_sim *s);
json_t *fm_rates_json(const struct fm_sim *s);

/* {cpu, title, I1, D1, LL, source, notes} of r's geometry under model cpu. */
json_t *fm_geometry_json(const struct fm_run *r, const char *cpu, json_t *notes);

#endif
