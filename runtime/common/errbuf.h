/* errbuf.h: fill a caller's error buffer (the runtime's `char *err, size_t errlen` habit).
 *
 * Functions that can fail take a buffer and its size and write one line saying why,
 * without a trailing newline; the caller decides whether and how to print it. A NULL
 * buffer or a zero size means the caller does not want the text. Header-only.
 */
#ifndef FL_ERRBUF_H
#define FL_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* printf-format a message into err (cut to errlen - 1 bytes, always terminated). Does
 * nothing when err is NULL or errlen is 0. */
static inline void fl_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void fl_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* As fl_errf, after a "name:line: " prefix (a parser's position in its input). When the
 * prefix alone does not fit, err holds as much of it as fits. Returns -1, so a parser can
 * `return fl_errf_at(...)` on failure. */
static inline int fl_errf_at(char *err, size_t errlen, const char *name,
	unsigned long long line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline int fl_errf_at(char *err, size_t errlen, const char *name,
	unsigned long long line, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return -1;
	int n = snprintf(err, errlen, "%s:%llu: ", name, line);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

#endif
