/* leafprofile.c: read a leaf profile (leafprofile.h) into flags for the leaf's parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <unistd.h>

#include "hostcpu.h"
#include "leafprofile.h"
#include "paths.h"

/* Flags that place the process (addresses, files, certificates, output), not its work:
 * a profile made on one host must not move another's ports or files. */
static int profile_refused(const char *name)
{
	static const char *const no[] = { "host", "port", "port-file", "mock", "tls-dir",
		"stats-file", "stats-interval-s", "quiet", "profile", "lib", "help", "corpus-dir",
		NULL };

	for (int i = 0; no[i]; i++)
		if (strcmp(name, no[i]) == 0)
			return 1;
	return 0;
}

static char *dup_str(const char *s)
{
	size_t l = strlen(s) + 1;
	char *p = malloc(l);

	if (p)
		memcpy(p, s, l);
	return p;
}

void fl_profile_args_free(char **args, int n)
{
	for (int i = 0; i < n; i++)
		free(args[i]);
}

int fl_profile_resolve(const char *name, char *out, size_t outlen, char *err,
	size_t errlen)
{
	char file[256], model[256], kind[128];

	if (strchr(name, '/') != NULL || access(name, R_OK) == 0 || strlen(name) > 100) {
		snprintf(out, outlen, "%s", name);
		return strlen(name) < outlen ? 0 : -1;
	}
	/* This CPU kind's own fit first (hostcpu.h), then the one for any host. */
	fl_cpu_model(model, sizeof(model));
	fl_cpu_kind(model, kind, sizeof(kind));
	snprintf(file, sizeof(file), "profile-%s-%s.json", name, kind);
	if (fl_data_path(file, out, outlen, NULL, 0) == 0 && access(out, R_OK) == 0)
		return 0;
	snprintf(file, sizeof(file), "profile-%s.json", name);
	if (fl_data_path(file, out, outlen, NULL, 0) != 0 || access(out, R_OK) != 0) {
		snprintf(err, errlen, "--profile %s: no such file, and no shipped profile %s or "
			"profile-%s-%s.json", name, file, name, kind);
		return -1;
	}
	return 0;
}

int fl_profile_fits_cpu(const char *path, char *why, size_t whylen)
{
	json_error_t je;
	json_t *prof = json_load_file(path, 0, &je);
	const json_t *cpu;
	char model[256], here[128], there[128];
	int rc = -1;

	if (prof == NULL) {
		snprintf(why, whylen, "%s: %s", path, je.text);
		return -1;
	}
	cpu = json_object_get(json_object_get(json_object_get(prof, "calibrated"), "host"),
		"cpu");
	if (!json_is_string(cpu)) {
		snprintf(why, whylen, "%s records no calibrated.host.cpu", path);
		goto out;
	}
	fl_cpu_model(model, sizeof(model));
	fl_cpu_kind(model, here, sizeof(here));
	fl_cpu_kind(json_string_value(cpu), there, sizeof(there));
	rc = strcmp(here, there) == 0;
	if (rc)
		snprintf(why, whylen, "calibrated on this kind of CPU, %s", here);
	else
		snprintf(why, whylen, "calibrated on %s, this host is %s", there, here);
out:
	json_decref(prof);
	return rc;
}

int fl_profile_args(const char *name, char **out, int *n, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root;
	const json_t *la, *v;
	const char *key;
	char buf[96], path[4096];

	*n = 0;
	if (fl_profile_resolve(name, path, sizeof(path), err, errlen) != 0)
		return -1;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		if (je.line > 0)
			snprintf(err, errlen, "--profile %s: %s (line %d)", path, je.text, je.line);
		else
			snprintf(err, errlen, "--profile %s: %s", path, je.text);
		return -1;
	}
	v = json_object_get(root, "frontload_profile");
	if (!json_is_integer(v) || json_integer_value(v) != FL_PROFILE_VERSION) {
		snprintf(err, errlen, "--profile %s: not a frontload profile (\"frontload_profile\": "
			"%d missing or another version)", path, FL_PROFILE_VERSION);
		goto fail;
	}
	la = json_object_get(root, "leaf_args");
	if (!json_is_object(la)) {
		snprintf(err, errlen, "--profile %s: \"leaf_args\" is not an object", path);
		goto fail;
	}
	json_object_foreach((json_t *)la, key, v) {
		if (key[0] == '\0' || key[0] == '-' || strlen(key) > 64) {
			snprintf(err, errlen, "--profile %s: leaf_args key \"%.64s\" is not a flag name "
				"(without --)", path, key);
			goto fail;
		}
		if (profile_refused(key)) {
			snprintf(err, errlen, "--profile %s: --%s places the process, not its work; "
				"give it on the command line", path, key);
			goto fail;
		}
		if (*n + 2 > FL_PROFILE_MAX_ARGS) {
			snprintf(err, errlen, "--profile %s: more than %d flags", path,
				FL_PROFILE_MAX_ARGS / 2);
			goto fail;
		}
		snprintf(buf, sizeof(buf), "--%s", key);
		if (json_is_true(v)) {
			out[(*n)++] = dup_str(buf);
			continue;
		}
		if (json_is_false(v))  /* a flag left off */
			continue;
		out[(*n)++] = dup_str(buf);
		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		else if (json_is_string(v) && json_string_length(v) < sizeof(buf))
			snprintf(buf, sizeof(buf), "%s", json_string_value(v));
		else {
			snprintf(err, errlen, "--profile %s: leaf_args.%s is not a number, a string "
				"under %zu bytes or a boolean", path, key, sizeof(buf));
			goto fail;
		}
		out[(*n)++] = dup_str(buf);
		if (out[*n - 1] == NULL || out[*n - 2] == NULL) {
			snprintf(err, errlen, "--profile %s: out of memory", path);
			goto fail;
		}
	}
	json_decref(root);
	return 0;
fail:
	fl_profile_args_free(out, *n);
	*n = 0;
	json_decref(root);
	return -1;
}

const char *fl_profile_given(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--profile=", 10) == 0)
			return argv[i] + 10;
	}
	return NULL;
}

/* The integer at key of o into *v: 0, or -1 when it is absent or not an integer. */
static int build_field(const json_t *o, const char *key, long long *v)
{
	const json_t *x = json_object_get(o, key);

	if (!json_is_integer(x))
		return -1;
	*v = json_integer_value(x);
	return 0;
}

int fl_profile_fits_build(const char *path, const char *build_info, char *why,
	size_t whylen)
{
	static const char *const keys[] = { "functions", "variants", "copies", "seed", NULL };
	json_error_t je;
	json_t *prof = json_load_file(path, 0, &je), *lib = NULL;
	const json_t *pb;
	int rc = -1;

	if (prof == NULL) {
		snprintf(why, whylen, "%s: %s", path, je.text);
		return -1;
	}
	lib = json_loads(build_info ? build_info : "", 0, &je);
	if (!json_is_object(lib)) {
		snprintf(why, whylen, "the library's build info is not JSON: %s", je.text);
		goto out;
	}
	pb = json_object_get(json_object_get(prof, "calibrated"), "build");
	if (!json_is_object(pb)) {
		snprintf(why, whylen, "%s records no calibrated.build", path);
		rc = 0;
		goto out;
	}
	rc = 1;
	for (int i = 0; keys[i] && rc == 1; i++) {
		long long a, b;

		if (build_field(pb, keys[i], &a) != 0) {
			snprintf(why, whylen, "%s: calibrated.build.%s missing", path, keys[i]);
			rc = 0;
		} else if (build_field(lib, keys[i], &b) != 0) {
			snprintf(why, whylen, "the library's build info has no %s", keys[i]);
			rc = 0;
		} else if (a != b) {
			snprintf(why, whylen, "calibrated for %s %lld, the library has %lld", keys[i],
				a, b);
			rc = 0;
		}
	}
out:
	json_decref(prof);
	json_decref(lib);
	return rc;
}

/* Whether "--NAME" (with or without "=value") names a flag of group. */
static int in_group(const char *arg, const char *const *group)
{
	if (group == NULL || strncmp(arg, "--", 2) != 0)
		return 0;
	for (int g = 0; group[g]; g++) {
		size_t l = strlen(group[g]);

		if (strncmp(arg + 2, group[g], l) == 0 && (arg[2 + l] == '\0' || arg[2 + l] == '='))
			return 1;
	}
	return 0;
}

/* Leave the profile's flags of group out when the command line gives one of them. */
static int drop_group(int argc, char **argv, const char *const *group, char **args,
	int *nargs)
{
	int given = 0, k = 0, dropped = 0;

	for (int i = 1; i < argc && !given; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		given = in_group(argv[i], group);
	}
	if (!given)
		return 0;
	for (int i = 0; i < *nargs; i++) {
		/* The profile writes "--name" "value" pairs (fl_profile_args). */
		if (in_group(args[i], group) && i + 1 < *nargs) {
			free(args[i]);
			free(args[i + 1]);
			i++;
			dropped++;
			continue;
		}
		args[k++] = args[i];
	}
	*nargs = k;
	return dropped;
}

int fl_profile_splice(int argc, char **argv, const char *const *group, char **args,
	int *nargs, int *dropped, char ***argv_out, int *argc_out, char *err, size_t errlen)
{
	const char *path = fl_profile_given(argc, argv);
	char **av;
	int k = 0;

	*argv_out = NULL;
	*nargs = 0;
	*dropped = 0;
	/* None, "--profile" without a value (the parser says so), or none asked for. */
	if (path == NULL || strcmp(path, "none") == 0)
		return 0;
	if (fl_profile_args(path, args, nargs, err, errlen) != 0)
		return -1;
	*dropped = drop_group(argc, argv, group, args, nargs);
	av = malloc(((size_t)argc + (size_t)*nargs + 1) * sizeof(*av));
	if (av == NULL) {
		fl_profile_args_free(args, *nargs);
		*nargs = 0;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	av[k++] = argv[0];
	for (int i = 0; i < *nargs; i++)
		av[k++] = args[i];
	for (int i = 1; i < argc; i++)
		av[k++] = argv[i];
	av[k] = NULL;
	*argv_out = av;
	*argc_out = k;
	return 0;
}
