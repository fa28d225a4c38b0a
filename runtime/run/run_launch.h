/* run_launch.h: the processes of `frontload run`: start (or adopt) every instance's mock,
 * leaf and driver, notice one that dies, stop them all in order.
 *
 * Children are found beside the frontload executable, else in PATH. Mocks start first
 * (all at once) and each is waited for through its port file, then the leaves, then the
 * drivers, which stay on pipes for the step protocol. Failures set the run's status
 * (run_status.h), naming the child and, when it died, ending with its log's last lines.
 */
#ifndef FL_RUN_LAUNCH_H
#define FL_RUN_LAUNCH_H

struct fl_run;
struct fl_run_driver;
struct fl_run_instance;
struct json_t;

#define RUN_STOP_GRACE_MS 3000   /* SIGTERM, then this long, then SIGKILL */

/* Start (or adopt) every instance's mock, leaf and driver. 0, -1 failed, -2 interrupted. */
int run_start(struct fl_run *r);

/* A stats snapshot of in's remote leaf (mock = 0) or mock (mock = 1) over its port (a
 * STATS frame, run_remote.h), adding a clock sample; NULL when it is ours, has no address
 * or does not answer (in->*_remote_err says why). */
struct json_t *run_remote_snapshot(struct fl_run *r, struct fl_run_instance *in, int mock);

/* A started mock or leaf that is gone: fail naming it. Returns 1 when one died. */
int run_check_servers(struct fl_run *r);

/* Driver dv is gone or broke the protocol: fail naming it. */
void run_driver_failed(struct fl_run *r, struct fl_run_driver *dv, const char *what);

/* Stop everything frontload started: drivers get "quit" (then SIGTERM), then leaves and
 * mocks SIGTERM together (the leaf writes its final stats); SIGKILL after 3 s each. The
 * leaves' and mocks' final stats are loaded into their instances: from their files, or
 * for remote ones (left running) over their ports. */
void run_stop(struct fl_run *r);

#endif
