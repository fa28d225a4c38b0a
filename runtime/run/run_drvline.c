/* run_drvline.c: a driver's control-pipe output split into lines (run_drvline.h). */
#include "run_drvline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_result.h"
#include "run_status.h"

int run_drv_line(struct fl_run *r, struct fl_run_driver *dv, char **line, size_t *len)
{
	char buf[65536];
	for (;;) {
		char *nl = dv->line ? memchr(dv->line, '\n', dv->line_len) : NULL;
		if (nl) {
			*nl = 0;
			*line = dv->line;
			*len = (size_t)(nl - dv->line);
			return 1;
		}
		ssize_t n = read(dv->proc.from_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 0;  /* EAGAIN: nothing more now */
		if (n == 0)
			return -2;
		if (dv->line_len + (size_t)n + 1 > dv->line_cap) {
			size_t cap = (dv->line_len + (size_t)n + 1) * 2;
			char *p = realloc(dv->line, cap);
			if (p == NULL) {
				run_set_status(r, FL_RUN_FAILED, "out of memory reading %s",
					dv->proc.name);
				return -1;
			}
			dv->line = p;
			dv->line_cap = cap;
		}
		memcpy(dv->line + dv->line_len, buf, (size_t)n);
		dv->line_len += (size_t)n;
	}
}

void run_drv_consume(struct fl_run_driver *dv, size_t len)
{
	memmove(dv->line, dv->line + len + 1, dv->line_len - len - 1);
	dv->line_len -= len + 1;
}

int run_drv_send(struct fl_run_driver *dv, const char *cmd)
{
	size_t n = strlen(cmd);
	ssize_t w = write(dv->proc.to_fd, cmd, n);
	if (w == (ssize_t)n)
		return 0;
	if (w >= 0)
		errno = EPIPE;  /* a short write on a pipe: the reader is going */
	return -1;
}
