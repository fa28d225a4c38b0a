/* run_status.h: how `frontload run` is going: the stop signal, the run's status, progress
 * lines on stderr and result.json rewritten as it goes. Main thread only.
 */
#ifndef FL_RUN_STATUS_H
#define FL_RUN_STATUS_H

#include <signal.h>
#include <stddef.h>

#include "run_result.h"

#define RUN_PROG "frontload"     /* first word of every message */

/* The signal that asked frontload to stop (0: none): the only global it writes. */
extern volatile sig_atomic_t run_signal;

/* SIGINT, SIGTERM and SIGHUP set run_signal (without SA_RESTART, so poll and sleeps return
 * early); SIGPIPE is ignored. */
void run_install_signals(void);

/* Set r's status and status_reason, unless a status other than running was set before:
 * the first cause wins. */
void run_set_status(struct fl_run *r, enum fl_run_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Progress to stderr: on a terminal one line redrawn in place (permanent lines scroll
 * above it); otherwise only permanent lines. */
void run_say(struct fl_run *r, int permanent, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* s seconds as "42s" or "3m05s". */
void run_fmt_secs(double s, char *out, size_t len);

/* Rewrite result.json and steps.csv; a failure is said and fails the run. */
void run_write(struct fl_run *r);

#endif
