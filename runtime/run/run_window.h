/* run_window.h: the leaf's stats block of result.json (run_window.c). */
#ifndef FL_RUN_WINDOW_H
#define FL_RUN_WINDOW_H

#include <jansson.h>

#include "run_result.h"

/* An instance's "leaf_stats": where the stats came from, the final window's deltas
 * (stages, cpu_share, requests, pmu per pool) when both snapshots exist, and the whole
 * run's figures from the last snapshot. */
json_t *fl_run_leaf_stats_json(const struct fl_run_instance *in);

#endif
