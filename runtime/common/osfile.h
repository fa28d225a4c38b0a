/* osfile.h: files and directories the way every frontload program writes them: atomic
 * replacement (a temporary beside the target, then rename), mkdir -p, rm -rf, and the
 * fatal-error exit of a program's startup.
 *
 * A reader polling a stats, port or result file must never see half of it, so writers
 * open path.tmp.<pid> (the pid keeps two writers of one path apart), write through a
 * FILE *, and commit: flush, close and rename over the target. Any failure on the way
 * removes the temporary. Errors fill the caller's buffer (errbuf.h habit); nothing here
 * prints, except fl_die.
 */
#ifndef FL_OSFILE_H
#define FL_OSFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define FL_OSFILE_PATH_MAX 4096 /* longest path (bytes with the NUL), tmp suffix included */
#define FL_ATOMIC_SYNC 1        /* fl_atomic_open flag: fsync before the rename */

struct fl_atomic_file {
	FILE *f;                        /* write here between open and commit */
	int flags;                      /* FL_ATOMIC_* given to open */
	char tmp[FL_OSFILE_PATH_MAX];   /* path.tmp.<pid> */
	char path[FL_OSFILE_PATH_MAX];  /* the target */
};

/* Create path's temporary with permission bits mode (applied exactly, whatever the umask:
 * 0600 keeps a key private) and open a->f on it. Returns 0, or -1 with err filled and
 * nothing left behind. */
int fl_atomic_open(struct fl_atomic_file *a, const char *path, mode_t mode, int flags,
	char *err, size_t errlen);

/* Finish: ok != 0 and every write succeeded (ferror), then flush, fsync with
 * FL_ATOMIC_SYNC, close and rename over the target. Otherwise, or when any of those fails,
 * close and remove the temporary. Returns 0, or -1 (err filled, but left alone when ok
 * was 0: the caller's own failure). Always closes a->f. */
int fl_atomic_commit(struct fl_atomic_file *a, int ok, char *err, size_t errlen);

/* Replace path's contents with len bytes of data, atomically (mode 0644). 0, or -1. */
int fl_write_file_atomic(const char *path, const void *data, size_t len, char *err,
	size_t errlen);

/* mkdir -p: create dir and its missing parents, parents 0755 and dir itself with mode.
 * An existing directory is fine. Returns 0, or -1 (err filled: which part failed, why). */
int fl_mkdir_p(const char *dir, mode_t mode, char *err, size_t errlen);

/* rm -rf: remove dir and everything below it, not following links. NULL or "" does
 * nothing. Returns 0, or -1 when something could not be removed (errno says why). */
int fl_rmtree(const char *dir);

/* A program's fatal error: "prog: message" and a newline on stderr, then the exit status
 * code, leaving as how says. */
#define FL_DIE_EXIT 0   /* exit(): atexit handlers and destructors run */
#define FL_DIE_FAST 1   /* flush stdio and _exit(): pool threads may still run, so no
                         * library destructor runs under them */
void fl_die(const char *prog, int how, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));

#endif
