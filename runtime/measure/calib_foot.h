/* calib_foot.h: what a simulated validate run says about the generated code's footprint.
 *
 * calibrate --leaf fits --footprint-bytes to L1i MPKI. The generated library misses the
 * L1i at about the same rate at any footprint far above the L1i (flat dispatch: every
 * function is cold when it is called again), so the process's MPKI is set by how much of
 * the instructions the generated code runs. This pure function reads that split from
 * validate's JSON, so it is tested with synthetic JSON.
 */
#ifndef FL_CALIB_FOOT_H
#define FL_CALIB_FOOT_H

#include <jansson.h>

/* From validate's JSON v ("process" and the "generated" entry of "objects", each with
 * instructions and l1i_mpki): the generated code's share s of the instructions, the rest's
 * MPKI m_o, and the share s* = (t - m_o) / (m_g - m_o) that would put the process at L1i
 * MPKI t (clamped to 0.01..0.99); returns the odds ratio (s / (1 - s)) / (s* / (1 - s*)):
 * above 1 when the generated code runs too much of the instructions for t. NAN when v
 * holds no such split (no simulated window, no generated instructions, or only them). */
double fm_foot_odds(const json_t *v, double t);

/* The native cost of the generated code in the same run: extraction-stage CPU per request
 * (stages.stages.extract.cpu_ns over native.driver_step.ok requests) over the generated
 * library's simulated instructions per request, in ns per instruction; NAN when either
 * is missing. */
double fm_foot_cost(const json_t *v);

/* Least-squares slope of y over x (n points; here log cost per instruction over log
 * footprint, the exponent beta of cost ~ footprint^beta); NAN when fewer than two points
 * or the x values span less than 0.1. */
double fm_foot_slope(const double *x, const double *y, int n);

#endif
