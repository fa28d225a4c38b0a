/* osfile.c: atomic file replacement, mkdir -p, rm -rf and a program's fatal exit. */
#define _GNU_SOURCE /* nftw */
#include "osfile.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"

int fl_atomic_open(struct fl_atomic_file *a, const char *path, mode_t mode, int flags,
	char *err, size_t errlen)
{
	int n, fd;

	a->f = NULL;
	a->flags = flags;
	n = snprintf(a->path, sizeof(a->path), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(a->path))
		goto too_long;
	n = snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(a->tmp))
		goto too_long;
	fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		fl_errf(err, errlen, "cannot create %s: %s", a->tmp, strerror(errno));
		return -1;
	}
	/* The umask may have narrowed the bits, or the file existed with others. */
	if (fchmod(fd, mode) != 0 || (a->f = fdopen(fd, "w")) == NULL) {
		fl_errf(err, errlen, "cannot open %s: %s", a->tmp, strerror(errno));
		close(fd);
		unlink(a->tmp);
		return -1;
	}
	return 0;
too_long:
	fl_errf(err, errlen, "path too long: %s", path);
	return -1;
}

/* The first failing step of finishing a->f, or NULL; errno then says why. */
static const char *atomic_finish(struct fl_atomic_file *a)
{
	const char *what = NULL;

	errno = 0;
	if (ferror(a->f) || fflush(a->f) != 0)
		what = "cannot write";
	else if ((a->flags & FL_ATOMIC_SYNC) && fsync(fileno(a->f)) != 0)
		what = "cannot sync";
	int e = errno;
	if (fclose(a->f) != 0 && what == NULL)
		what = "cannot write";
	else
		errno = e;
	a->f = NULL;
	return what;
}

int fl_atomic_commit(struct fl_atomic_file *a, int ok, char *err, size_t errlen)
{
	if (!ok) {
		fclose(a->f);
		a->f = NULL;
	} else {
		const char *what = atomic_finish(a);
		if (what == NULL && rename(a->tmp, a->path) == 0)
			return 0;
		if (what == NULL)
			fl_errf(err, errlen, "cannot rename %s to %s: %s", a->tmp, a->path,
				strerror(errno));
		else
			fl_errf(err, errlen, "%s %s: %s", what, a->tmp,
				errno ? strerror(errno) : "stream error");
	}
	unlink(a->tmp);
	return -1;
}

int fl_write_file_atomic(const char *path, const void *data, size_t len, char *err,
	size_t errlen)
{
	struct fl_atomic_file a;

	if (fl_atomic_open(&a, path, 0644, 0, err, errlen) != 0)
		return -1;
	return fl_atomic_commit(&a, fwrite(data, 1, len, a.f) == len, err, errlen);
}

/* mkdir that accepts an existing directory. */
static int mkdir_one(const char *dir, mode_t mode, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, mode) == 0)
		return 0;
	if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	int e = errno == EEXIST ? ENOTDIR : errno;
	fl_errf(err, errlen, "cannot create directory %s: %s", dir, strerror(e));
	errno = e;  /* for callers that print strerror(errno) themselves */
	return -1;
}

int fl_mkdir_p(const char *dir, mode_t mode, char *err, size_t errlen)
{
	char buf[FL_OSFILE_PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf)) {
		fl_errf(err, errlen, "bad directory name \"%s\"", dir);
		return -1;
	}
	memcpy(buf, dir, n + 1);
	while (n > 1 && buf[n - 1] == '/')  /* "a/b/": b is the last part, with mode */
		buf[--n] = '\0';
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		if (mkdir_one(buf, 0755, err, errlen) != 0)
			return -1;
		*p = '/';
	}
	return mkdir_one(buf, mode, err, errlen);
}

/* nftw callback: remove one entry (children come first: FTW_DEPTH). */
static int rmtree_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int fl_rmtree(const char *dir)
{
	if (dir == NULL || *dir == '\0')
		return 0;
	return nftw(dir, rmtree_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

void fl_die(const char *prog, int how, int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (how == FL_DIE_FAST) {
		fflush(NULL);
		_exit(code);
	}
	exit(code);
}
