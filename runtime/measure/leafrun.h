/* leafrun.h: the service as `frontload run` starts it, for measuring: mock, leaf, driver.
 *
 * fm_leaf_start starts frontload-mock, then frontload-leaf (optionally behind a wrapper
 * such as valgrind) pointed at it, then frontload-driver in --control mode on pipes, each
 * waited for through its port file (the driver through its first answer), with the flags
 * `frontload run` gives them (runtime/run/run_launch.c). The driver keeps its connections
 * open across steps, so a step holds only request work. Each child's stdout and stderr go
 * to DIR/TAG-NAME.log; a child is signalled only by the PID it was spawned with, until it
 * has been reaped. Errors go to a caller buffer and end with the child's log tail.
 */
#ifndef FL_LEAFRUN_H
#define FL_LEAFRUN_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#define FM_LEAF_MAX_ARGS 128 /* extra arguments of one child */

struct fm_leaf_cfg {
	const char *bindir;        /* holds frontload-leaf, frontload-mock, frontload-driver */
	const char *dir;           /* scratch: logs, port files, stats files (exists) */
	const char *tag;           /* file name prefix in dir ("native", "sim") */
	const char *wrap[40];      /* argv put before the leaf's (valgrind ...); NULL-ended */
	const char *leaf_args[FM_LEAF_MAX_ARGS];   /* more leaf flags; NULL-ended */
	const char *driver_args[FM_LEAF_MAX_ARGS]; /* more driver flags; NULL-ended */
	int tls;                   /* TLS between driver and leaf (as frontload run --tls) */
	unsigned long long seed;   /* leaf --seed and driver --seed */
	double timeout_s;          /* driver --timeout-s: a request unanswered this long fails */
	double ready_s;            /* how long the leaf may take to write its port file (s) */
	const volatile sig_atomic_t *stop; /* non-NULL: every wait ends, failing with
	                           "interrupted", once *stop is nonzero (the caller's
	                           SIGINT/SIGTERM handler sets it); then fm_leaf_stop */
};

struct fm_leaf {
	pid_t mock, leaf, driver;  /* spawned PIDs; 0 once reaped or never started */
	int mock_status, leaf_status, driver_status; /* wait status once reaped */
	int to_drv, from_drv;      /* the driver's stdin (write) and stdout (read) */
	char rbuf[1 << 16];        /* bytes read from the driver, not yet a whole line */
	size_t rlen;
	char mock_addr[64], leaf_addr[64]; /* 127.0.0.1:PORT */
	char leaf_stats[4200], mock_stats[4200];    /* --stats-file paths */
	char leaf_log[4200], mock_log[4200], driver_log[4200];
	const volatile sig_atomic_t *stop; /* the cfg's */
};

/* Start mock, leaf and driver. Returns 0, or -1 with err (what failed and why); after -1
 * fm_leaf_stop still cleans up. */
int fm_leaf_start(const struct fm_leaf_cfg *c, struct fm_leaf *l, char *err, size_t errlen);

/* Run one driver step ("step QPS WARMUP_S DURATION_S") and return its result line (the
 * driver's --json step object), waiting at most wait_s. NULL with err on a dead child, an
 * {"error"} answer or the wait running out. */
json_t *fm_leaf_step(struct fm_leaf *l, double qps, double warmup_s, double duration_s,
	double wait_s, char *err, size_t errlen);

/* The leaf's stats now: SIGUSR1, then wait (at most wait_s) for the rewritten stats file.
 * NULL with err when the leaf died or did not write. */
json_t *fm_leaf_stats(struct fm_leaf *l, double wait_s, char *err, size_t errlen);

/* Stop everything started: the driver gets "quit", then SIGTERM leaf and mock (the leaf
 * writes its final stats), SIGKILL after grace_s. Safe after a failed start. */
void fm_leaf_stop(struct fm_leaf *l, double grace_s);

/* 1 while the leaf runs (reaping it when it has exited). */
int fm_leaf_alive(struct fm_leaf *l);

#endif
