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

#endif
