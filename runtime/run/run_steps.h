/* run_steps.h: the steps of `frontload run`.
 *
 * A step sends "step QPS WARMUP DURATION" to every instance's driver, waits for each
 * one's result line (watching the servers, the signal and a deadline), samples /proc/stat
 * at the measured window's edges (and, for the final window or the last fixed rate, the
 * leaves' stats), judges the step and keeps it in the run, rewriting result.json. After
 * a failed step, or one with timeouts, it waits for the leaves to drain.
 */
#ifndef FL_RUN_STEPS_H
#define FL_RUN_STEPS_H

struct fl_run;

/* The search, then the final window. 0, -1 failed, -2 interrupted. */
int run_search_all(struct fl_run *r);

/* Fixed rates: each for --duration; the last is reported as the final window. 0, -1
 * failed, -2 interrupted. */
int run_fixed_all(struct fl_run *r);

#endif
