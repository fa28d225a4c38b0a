/* run_drvclock.h: the clocks of drivers on other hosts (--driver-ssh) against this one's.
 *
 * A remote driver stamps the requests it sends (the leaf times queueing from those
 * stamps) and reports its window by its own clock, so its clock is checked as a remote
 * leaf's or mock's is (run_clock.h): RUN_CLOCK_SAMPLES "clock" lines on its control pipe,
 * each bracketed by this host's realtime clock, the tightest kept. Over ssh a round trip
 * is a few ms, which bounds the offset's uncertainty. */
#ifndef FL_RUN_DRVCLOCK_H
#define FL_RUN_DRVCLOCK_H

struct fl_run;

#define RUN_CLOCK_SAMPLES 5
#define RUN_CLOCK_WAIT_S 30.0  /* for an answer: the first waits for ssh and the driver's
                                  connections to the leaf */

/* Sample every remote driver's clock (local drivers share ours). 0; -1 when a driver
 * died, closed its output or did not answer in time (status set). A driver that answers
 * with an error (a build without the clock line) is left unknown, with the reason in its
 * clock_err. */
int run_driver_clocks(struct fl_run *r);

#endif
