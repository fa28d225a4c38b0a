/* verdicts.h: the harness's figure for each target metric, from the path that measured it
 * (simulated, hardware, or the native stage clock), with why a path cannot produce one,
 * and the table of verdicts. */
#ifndef FL_VERDICTS_H
#define FL_VERDICTS_H

#include <jansson.h>

#include "targets.h"

struct fm_sim;

/* The metrics validate --harness judges, in table order. */
enum {
	FM_M_L1I, FM_M_IPC, FM_M_FE, FM_M_FP, FM_M_COND, FM_M_CALLRET, FM_M_MEM, FM_M_DIV,
	FM_M_IPTB, FM_M_EXTRACT, FM_M_N
};

/* Their names in the targets file ("l1i_mpki", ...). */
extern const char *const fm_metric_names[FM_M_N];

/* Fill m from a simulated run (IPC and front-end bound unmeasurable: no timing model),
 * from a native --pmu run's summary (mix metrics unmeasurable: no per-class counters),
 * and the extraction share from a native run's stage clock. */
void fm_meas_sim(struct fl_measured m[FM_M_N], const struct fm_sim *s);
void fm_meas_hw(struct fl_measured m[FM_M_N], json_t *native);
void fm_meas_extract(struct fl_measured *m, json_t *native);

/* Hardware figures without a target (the front-end stall-cycle ratio, the top-down
 * formula), printed when print is set; returned as JSON. */
json_t *fm_hw_extra(json_t *native, int print);

/* The table: metric, target, measured, verdict, path; why when unmeasured, the target's
 * knob under a fail. Rows with have[k] == 0 are left out. */
void fm_print_table(const struct fl_targets *tg, const struct fl_measured m[FM_M_N],
	const enum fl_verdict v[FM_M_N], const int have[FM_M_N]);

#endif
