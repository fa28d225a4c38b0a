/* run_procs.h: the child processes of `frontload run`: spawn, pin, watch, stop.
 *
 * Each child is started with posix_spawn in its own process group (a Ctrl-C on the
 * terminal reaches only frontload, which then stops the children in order), with default
 * signal dispositions and an empty signal mask, stdout and stderr appended to a log file
 * (or stdin/stdout on pipes for the driver's control protocol). A child is only ever
 * signalled by the PID it was spawned with, and only until it has been reaped, so a
 * reused PID is never hit.
 */
#ifndef FL_RUN_PROCS_H
#define FL_RUN_PROCS_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "run_host.h"

struct fl_proc {
	char name[32];           /* "mock0", "leaf0", "driver0": messages and log names */
	pid_t pid;               /* spawned PID; 0: never started */
	int exited;              /* reaped: status holds its wait status */
	int status;
	char log_path[4096];     /* its stdout and stderr (stderr only with pipes) */
	int to_fd;               /* with pipes: write end of its stdin; else -1 */
	int from_fd;             /* with pipes: read end of its stdout; else -1 */
};

/* A fresh, unstarted process slot named name. */
void fl_proc_init(struct fl_proc *p, const char *name);

/* Spawn argv (argv[0] a path) with output appended to log_path. cpus: the CPU set it is
 * pinned to from its first instruction (NULL or empty: not pinned). pipes: stdin and
 * stdout on pipes (to_fd, from_fd; from_fd non-blocking), else stdin is /dev/null and
 * stdout goes to the log too. Returns 0, or -1 with err ("cannot start leaf0 (path):
 * No such file or directory"). */
int fl_proc_start(struct fl_proc *p, char *const argv[], const char *log_path,
	const struct fl_cpus *cpus, int pipes, char *err, size_t errlen);

/* 1 while p was started and has not exited (reaping it, without blocking, if it has). */
int fl_proc_running(struct fl_proc *p);

/* Stop every running process of ps[0..n-1]: sig (SIGTERM) to each, wait up to grace_ms
 * for all, then SIGKILL those left and reap them. Closes the pipes. */
void fl_proc_stop_all(struct fl_proc *const *ps, size_t n, int sig, int grace_ms);

/* How p ended: "exited with status 1", "killed by signal 9 (Killed)", or "running". */
void fl_proc_describe(const struct fl_proc *p, char *out, size_t outlen);

/* The last `lines` lines of the file at path into out (truncated from the front to fit);
 * "" when it is missing or empty. */
void fl_log_tail(const char *path, unsigned lines, char *out, size_t outlen);

/* Wait until the port file at path holds a port (1..65535), checking that p is still
 * running (p may be NULL) and *stop (may be NULL) is 0, for up to timeout_s seconds.
 * Returns 0 with *port, -1 with err (names p, how it ended and its log tail, or the
 * timeout), or -2 when *stop was set. */
int fl_port_file_wait(const char *path, struct fl_proc *p, double timeout_s,
	volatile sig_atomic_t *stop, unsigned *port, char *err, size_t errlen);

#endif
