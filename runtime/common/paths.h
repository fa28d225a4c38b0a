/* paths.h: where installed and in-tree programs find their data files. */
#ifndef FL_PATHS_H
#define FL_PATHS_H

#include <stddef.h>

/* Directory holding this executable (from /proc/self/exe). Returns 0 or -1. */
int fl_exe_dir(char *out, size_t outlen);

/* Path of data file name: <exe dir>/../share/frontload/data/name when it exists, else the
 * source tree's runtime/data/name (FL_SRC_DATA_DIR, set at build time). Returns 0, or -1
 * (err filled) when neither exists. */
int fl_data_path(const char *name, char *out, size_t outlen, char *err, size_t errlen);

#endif
