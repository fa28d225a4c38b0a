/* util.h: fatal errors, checked allocation and a growable byte buffer for the generator. */
#include <stdarg.h>
#include <stddef.h>

/* Print "frontload-gen: " + message to stderr and exit(1). A message ending in ':' gets
 * the OS error (strerror(errno)) appended, as samurai's fatal() does. */
void fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The same, printed as a warning; returns. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that never returns NULL: out of memory is fatal. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* A growable byte buffer, always NUL-terminated after len bytes. Zero-initialise to start. */
struct buf {
	char *p;      /* bytes, NUL at p[len]; NULL until the first append */
	size_t len;   /* bytes used, not counting the NUL */
	size_t cap;   /* bytes allocated */
};
void buf_add(struct buf *b, const void *data, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
void buf_reset(struct buf *b);   /* len = 0, keeps the memory */
void buf_free(struct buf *b);

/* Read a whole file into memory (NUL-terminated); *len gets its size. NULL with errno set
 * on failure. */
char *read_file(const char *path, size_t *len);

/* Write data to path only when the file's current contents differ (so ninja's restat sees an
 * unchanged output). Writes through a temporary file and rename(). Returns 1 when written,
 * 0 when unchanged; fatal on I/O error. */
int write_if_changed(const char *path, const void *data, size_t len);

/* mkdir -p; fatal on error. */
void make_dirs(const char *path);

/* Run cmd (split at blanks: "ccache gcc -O2" is three words) with args (NULL-terminated)
 * appended, and wait. Returns 0 when it exited 0, else -1 with err set. */
int run_command(const char *cmd, const char *const *args, char *err, size_t errlen);
