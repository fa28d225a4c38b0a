/* libload.h: find and open the generated extractor library and take its registry.
 *
 * The extractor library (libfrontload-extract.so) is loaded at run time, not linked, so one
 * leaf or bench binary can run libraries of any size or seed (--lib). Without a path the
 * library is looked for beside the running program, then in <exe dir>/../lib (installed).
 * Nothing here prints; errors are written to a caller buffer.
 */
#ifndef FL_LIBLOAD_H
#define FL_LIBLOAD_H

#include <stddef.h>

struct fl_fn_entry;

#define FL_LIB_NAME "libfrontload-extract.so"

/* An opened extractor library. Zero-initialise; filled by fl_lib_open. */
struct fl_lib {
	void *handle;                        /* dlopen handle */
	const struct fl_fn_entry *tab;       /* fl_registry(): n entries, the library's */
	size_t n;                            /* registry entries (generated functions) */
	const char *(*build_info)(void);     /* fl_build_info(): the build's JSON description */
	char path[4096];                     /* the file opened */
};

/* Open path (when not NULL) or the first of <exe dir>/libfrontload-extract.so and
 * <exe dir>/../lib/libfrontload-extract.so that loads (RTLD_NOW | RTLD_LOCAL), and look up
 * fl_registry and fl_build_info. Returns 0, or -1 with lib zeroed and err (errlen bytes,
 * NUL-terminated; may be NULL) naming the file and the dlopen/dlsym problem: not found,
 * not loadable, or not a frontload extractor library. */
int fl_lib_open(struct fl_lib *lib, const char *path, char *err, size_t errlen);

/* dlclose the library and zero lib; safe on a zeroed lib. Registry pointers die with it. */
void fl_lib_close(struct fl_lib *lib);

#endif
