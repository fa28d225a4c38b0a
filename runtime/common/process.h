/* process.h: start a program without a shell (posix_spawnp), optionally wait for it
 * or read its output through a pipe, optionally pinned to CPUs.
 *
 * No command line is ever built as a string, so paths with quotes or spaces need no
 * escaping and nothing is interpreted by sh. The child's directory, standard output and
 * standard error and extra environment entries are set in the child only.
 */
#ifndef FL_PROCESS_H
#define FL_PROCESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fl_spawn_opts {
	const char *cwd;          /* directory to run in (NULL: the caller's) */
	const char *stdout_path;  /* file for stdout, truncated; "/dev/null" drops it; NULL:
	                           * inherited. Relative paths are taken in cwd */
	const char *stderr_path;  /* the same for stderr */
	const char *const *env;   /* "NAME=value" entries added to (or replacing in) the
	                           * caller's environment, NULL-terminated; NULL: none */
	int append;               /* stdout_path and stderr_path are appended to, not
	                           * truncated; the same path for both: one file, both
	                           * streams in order */
	int *stdout_pipe;         /* non-NULL: stdout goes to a pipe (stdout_path unused)
	                           * and *stdout_pipe gets its read end (close-on-exec),
	                           * for the caller to read the output as it comes */
	const char *stdin_path;   /* file for stdin ("/dev/null"); NULL: inherited */
	int *stdin_pipe;          /* non-NULL: stdin comes from a pipe (stdin_path unused)
	                           * and *stdin_pipe gets its write end (close-on-exec) */
	int new_pgroup;           /* the child leads a process group of its own, so a
	                           * terminal's Ctrl-C reaches only the caller */
	int reset_signals;        /* the child starts with no signal blocked and the
	                           * default action for what frontload programs catch or
	                           * ignore (INT, TERM, HUP, PIPE, USR1, CHLD) */
	const uint16_t *cpus;     /* non-NULL: the child runs on these ncpus CPUs from its
	                           * first instruction (the caller, single-threaded, is
	                           * pinned to them around the spawn and then restored) */
	unsigned ncpus;
};

/* Start argv[0] (looked up in PATH) with argv; o may be NULL (inherit everything).
 * Returns the child's pid, or -1 with err filled (the program cannot be found or run). */
pid_t fl_spawn(const char *const *argv, const struct fl_spawn_opts *o, char *err,
	size_t errlen);

/* fl_spawn, then wait for the child. Returns its exit status (0..255), or -1 with err
 * filled when it could not start or was killed by a signal. */
int fl_spawn_wait(const char *const *argv, const struct fl_spawn_opts *o, char *err,
	size_t errlen);

#endif
