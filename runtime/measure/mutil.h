/* mutil.h: frontload-measure's small shared helpers (clocks, JSON, host and build
 * descriptions, scratch directories) and the exit statuses every subcommand documents. */
#ifndef FL_MUTIL_H
#define FL_MUTIL_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define FM_PROG "frontload-measure"

/* Exit statuses, documented in every --help. */
enum { FM_EXIT_OK = 0, FM_EXIT_RUN = 1, FM_EXIT_USAGE = 2, FM_EXIT_MISSED = 3 };

/* Monotonic seconds. */
double fm_now(void);

/* "1h02m", "4m05s", "12s" into buf. */
char *fm_dur_str(double s, char *buf, size_t len);

/* A number from a JSON object by dotted path ("stages.extract.cpu_share"); NAN if absent. */
double fm_json_num(json_t *o, const char *path);

/* Write o to path (indented, sorted keys). 0, or -1 with a message printed. */
int fm_write_json(json_t *o, const char *path);

/* Host description (kernel, CPU model, CPUs) as a JSON object. */
json_t *fm_host_json(void);

/* "Host: NAME, CPU, N CPUs, kernel K." and a newline into fp (a report's header line). */
void fm_host_line(FILE *fp);

/* A report directory's default name, relative to the current directory:
 * results/KIND-<YYYYmmdd-HHMMSS> (local time) into dir. */
void fm_default_out(const char *kind, char *dir, size_t len);

/* The build's config.json beside this program (configure_args, copies, ...), or NULL. */
json_t *fm_build_json(void);

/* Make a scratch directory /tmp/frontload-measure.XXXXXX into out; fm_rmtree removes it.
 * fm_keep_files copies its contents into keep (--keep DIR; NULL: nothing). */
int fm_mktemp(char *out, size_t len, char *err, size_t errlen);
void fm_rmtree(const char *dir);
void fm_keep_files(const char *tmp, const char *keep);

#endif
