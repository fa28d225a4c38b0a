/* util.c: fatal errors, checked allocation, buffers and file helpers for the generator. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "osfile.h"
#include "util.h"

extern char **environ;

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	int err = errno;
	size_t n = strlen(fmt);

	fprintf(stderr, "frontload-gen: %s", kind);
	vfprintf(stderr, fmt, ap);
	if (n > 0 && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(err));
	fputc('\n', stderr);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	exit(1);
}

void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fatal("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static void buf_grow(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	buf_grow(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_grow(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;

	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		fatal("bad format string %s", fmt);
	buf_grow(b, (size_t)n);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	struct buf b = {0};
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		buf_free(&b);
		errno = EIO;
		return NULL;
	}
	if (!b.p)
		buf_add(&b, "", 0);
	if (len)
		*len = b.len;
	return b.p;
}

int write_if_changed(const char *path, const void *data, size_t len)
{
	size_t oldlen;
	char *old = read_file(path, &oldlen);

	if (old) {
		int same = oldlen == len && memcmp(old, data, len) == 0;
		free(old);
		if (same)
			return 0;
	}
	char err[512];
	if (fl_write_file_atomic(path, data, len, err, sizeof(err)) != 0)
		fatal("%s", err);
	return 1;
}

void make_dirs(const char *path)
{
	char err[512];

	if (fl_mkdir_p(path, 0777, err, sizeof(err)) != 0)
		fatal("%s", err);
}

int run_command(const char *cmd, const char *const *args, char *err, size_t errlen)
{
	char *words = xstrdup(cmd), *argv[64];
	int argc = 0;

	for (char *w = strtok(words, " \t"); w && argc < 48; w = strtok(NULL, " \t"))
		argv[argc++] = w;
	if (!argc) {
		free(words);
		snprintf(err, errlen, "empty command");
		return -1;
	}
	for (int i = 0; args[i] && argc < 63; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	pid_t pid;
	int status = 0, rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc == 0 && waitpid(pid, &status, 0) < 0)
		rc = errno;
	if (rc)
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(err, errlen, "%s %s failed (status %d)", cmd, args[0] ? args[0] : "",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	free(words);
	return rc || !WIFEXITED(status) || WEXITSTATUS(status) ? -1 : 0;
}
