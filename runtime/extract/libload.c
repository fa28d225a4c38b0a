/* libload.c: locating, dlopening and checking the extractor library. */
#include "libload.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef const struct fl_fn_entry *(*fl_registry_fn)(size_t *count);
typedef const char *(*fl_build_info_fn)(void);

/* dlopen one file and resolve the two entry points; -1 (err filled) on any failure. */
static int lib_try(struct fl_lib *lib, const char *path, char *err, size_t errlen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		if (err && errlen) {
			const char *why = dlerror();
			snprintf(err, errlen, "cannot load %s: %s", path,
				why ? why : "dlopen failed");
		}
		return -1;
	}
	/* POSIX dlsym returns void *; going through a union avoids the object/function
	 * pointer cast warning under -Wpedantic. */
	union { void *p; fl_registry_fn f; } reg = { dlsym(h, "fl_registry") };
	union { void *p; fl_build_info_fn f; } info = { dlsym(h, "fl_build_info") };
	if (!reg.p || !info.p) {
		if (err && errlen)
			snprintf(err, errlen, "%s: no fl_registry or fl_build_info: not a frontload "
				"extractor library", path);
		dlclose(h);
		return -1;
	}
	size_t n = 0;
	const struct fl_fn_entry *tab = reg.f(&n);
	if (!tab || n == 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s: fl_registry is empty", path);
		dlclose(h);
		return -1;
	}
	lib->handle = h;
	lib->tab = tab;
	lib->n = n;
	lib->build_info = info.f;
	snprintf(lib->path, sizeof(lib->path), "%s", path);
	return 0;
}

int fl_lib_open(struct fl_lib *lib, const char *path, char *err, size_t errlen)
{
	memset(lib, 0, sizeof(*lib));
	if (path)
		return lib_try(lib, path, err, errlen);

	char self[4096], cand[4096 + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		if (err && errlen)
			snprintf(err, errlen, "cannot find this program's directory; "
				"pass --lib");
		return -1;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	static const char *const tries[] = { "%s/" FL_LIB_NAME, "%s/../lib/" FL_LIB_NAME };
	char first[512] = "";
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		snprintf(cand, sizeof(cand), tries[i], self);
		if (access(cand, F_OK) != 0)
			continue;
		/* A file that exists but does not load is the error worth reporting. */
		if (lib_try(lib, cand, first, sizeof(first)) == 0)
			return 0;
		break;
	}
	if (err && errlen) {
		if (first[0])
			snprintf(err, errlen, "%s", first);
		else
			snprintf(err, errlen, FL_LIB_NAME " not found beside this program or in "
				"../lib; pass --lib");
	}
	return -1;
}

void fl_lib_close(struct fl_lib *lib)
{
	if (lib->handle)
		dlclose(lib->handle);
	memset(lib, 0, sizeof(*lib));
}
