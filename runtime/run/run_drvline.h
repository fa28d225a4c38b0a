/* run_drvline.h: lines from a driver on its control pipe (frontload-driver --control).
 *
 * A driver answers each control line with one line of JSON on stdout; its pipe is
 * non-blocking, so output is gathered in dv->line until a newline completes a line.
 */
#ifndef FL_RUN_DRVLINE_H
#define FL_RUN_DRVLINE_H

#include <stddef.h>

struct fl_run;
struct fl_run_driver;

/* The next whole line of dv, NUL-terminated in place, in *line (*len bytes, newline
 * dropped), valid until run_drv_consume: 1. 0: no whole line yet (nothing more to read
 * now); -2: end of output; -1: out of memory (the run's status is set). */
int run_drv_line(struct fl_run *r, struct fl_run_driver *dv, char **line, size_t *len);

/* Drop the line run_drv_line gave (len as it said). */
void run_drv_consume(struct fl_run_driver *dv, size_t len);

/* Send one control line (cmd ends with a newline). 0, or -1 with errno. */
int run_drv_send(struct fl_run_driver *dv, const char *cmd);

#endif
