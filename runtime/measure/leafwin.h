/* leafwin.h: what the leaf's stats and the driver's step say about one measured window.
 *
 * The leaf path of validate measures between two stats snapshots of the leaf (SIGUSR1)
 * around one driver step. These pure functions read the two snapshots (frontload-leaf
 * --stats-file JSON, counters since start) and the step's result line (frontload-driver
 * --control), so they are tested with synthetic JSON.
 */
#ifndef FL_LEAFWIN_H
#define FL_LEAFWIN_H

#include <stddef.h>

#include <jansson.h>

/* Whether the window holds only whole, successful requests: the driver sent some, every
 * one was answered OK (no timeouts, errors, OVERLOADED or unsent requests), and the leaf
 * received, replied and answered OK exactly that many, with no stale, denied, bad,
 * internal or dropped requests, no deadline skips, no shed queue waits and no failed or
 * timed-out fanout calls between the snapshots. Returns 1 when whole; else 0 with why
 * listing every problem ("driver: 2 timeouts; leaf: 1 deadline skips"). */
int fm_window_whole(json_t *step, json_t *before, json_t *after, char *why, size_t len);

/* after - before of an integer at a dotted path of both; -1 when absent in either. */
long long fm_win_delta(json_t *before, json_t *after, const char *path);

/* Stage CPU over the window: {<stage>: {cpu_ns, share}} (share of summed stage CPU),
 * plus "pools" {ranker, io, fanout: cpu_ns} and "process_cpu_ns" (their sum). A share
 * is null when no stage CPU was measured. New reference. */
json_t *fm_stage_window(json_t *before, json_t *after);

/* The leaf's per-pool PMU groups over the window: per pool (ranker, io, fanout, total)
 * instructions, cycles, l1i_misses, branch_misses deltas and ipc, l1i_mpki,
 * branch_mpki; every value that was not counted is "unsupported: <why>" (pmu.why of the
 * leaf, or the event's own string), never a number. New reference. */
json_t *fm_pmu_window(json_t *before, json_t *after);

#endif
