/* mutil.c: frontload-measure's small shared helpers: clocks and durations, JSON lookups
 * and writes, the host and build descriptions, scratch directories. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "hostcpu.h"
#include "mutil.h"
#include "osfile.h"
#include "paths.h"
#include "process.h"

double fm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *fm_dur_str(double s, char *buf, size_t len)
{
	long t = s > 0 ? lround(s) : 0;

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
	return buf;
}

double fm_json_num(json_t *o, const char *path)
{
	char key[128];
	const char *p = path;

	while (o != NULL && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key))
			return NAN;
		memcpy(key, p, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return o != NULL && json_is_number(o) ? json_number_value(o) : NAN;
}

json_t *fm_host_json(void)
{
	struct utsname u;
	char model[256];

	fl_cpu_model(model, sizeof(model));
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	return json_pack("{s:s,s:s,s:s,s:I}", "hostname", u.nodename, "kernel", u.release,
		"cpu", model, "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN));
}

json_t *fm_build_json(void)
{
	char dir[4096], path[4200];

	if (fl_exe_dir(dir, sizeof(dir)) != 0)
		return NULL;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if (access(path, R_OK) != 0) {
		snprintf(path, sizeof(path), "%s/../share/frontload/config.json", dir);
		if (access(path, R_OK) != 0)
			return NULL;
	}
	return json_load_file(path, 0, NULL);
}

int fm_mktemp(char *out, size_t len, char *err, size_t errlen)
{
	snprintf(out, len, "/tmp/frontload-measure.XXXXXX");
	if (mkdtemp(out) == NULL) {
		snprintf(err, errlen, "mkdtemp %s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

void fm_rmtree(const char *dir)
{
	fl_rmtree(dir);
}

int fm_write_json(json_t *o, const char *path)
{
	if (json_dump_file(o, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

void fm_keep_files(const char *tmp, const char *keep)
{
	char from[4200], err[256] = "";

	if (keep == NULL)
		return;
	snprintf(from, sizeof(from), "%s/.", tmp);
	const char *const argv[] = { "cp", "-r", from, keep, NULL };
	if (fl_mkdir_p(keep, 0755, err, sizeof(err)) != 0 ||
	    fl_spawn_wait(argv, NULL, err, sizeof(err)) != 0)
		fprintf(stderr, FM_PROG ": --keep %s: copy failed\n", keep);
}

void fm_host_line(FILE *fp)
{
	json_t *host = fm_host_json();

	fprintf(fp, "Host: %s, %s, %lld CPUs, kernel %s.\n",
		json_string_value(json_object_get(host, "hostname")),
		json_string_value(json_object_get(host, "cpu")),
		(long long)json_integer_value(json_object_get(host, "cpus")),
		json_string_value(json_object_get(host, "kernel")));
	json_decref(host);
}

void fm_default_out(const char *kind, char *dir, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char ts[32];

	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	snprintf(dir, len, "results/%s-%s", kind, ts);
}
