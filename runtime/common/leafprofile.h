/* leafprofile.h: a leaf profile: frontload-leaf workload knobs in a file, as
 * `frontload-measure calibrate --leaf` writes them and frontload-leaf, frontload run and
 * validate load them with --profile FILE.
 *
 * The file is JSON:
 *   { "frontload_profile": 1,
 *     "leaf_args": { "extractors-per-story": 300, "rank-passes": 6, "tls": true, ... },
 *     ... anything else (how it was calibrated: command, host, build, residuals) }
 * leaf_args names frontload-leaf flags without their "--"; a value is a number or a
 * string, true for a flag that takes none. The leaf applies them before its command line,
 * so a flag given there wins. Flags that name this process's place rather than its
 * workload (ports, files, the mock's address, certificates) are refused.
 */
#ifndef FL_LEAFPROFILE_H
#define FL_LEAFPROFILE_H

#include <stddef.h>

#define FL_PROFILE_VERSION 1
#define FL_PROFILE_MAX_ARGS 128  /* flags and values of one profile */

/* The file of profile name: name itself when it is a readable file or holds a '/', else
 * the shipped data/profile-NAME-KIND.json for this host's kind of CPU (hostcpu.h), else
 * data/profile-NAME.json (paths.h: installed, else the source tree's), so "--profile
 * default" names the profile calibrated for the default build, on this kind of CPU when
 * one ships for it. 0, or -1 with err naming both files looked for. */
int fl_profile_resolve(const char *name, char *out, size_t outlen, char *err,
	size_t errlen);

/* Whether the profile at path was calibrated on this host's kind of CPU: its
 * calibrated.host.cpu and /proc/cpuinfo's model give the same fl_cpu_kind. 1 or 0 (why
 * names the kinds either way), -1 when the file cannot be read or records no CPU. */
int fl_profile_fits_cpu(const char *path, char *why, size_t whylen);

/* Whether the profile at path (a file) was calibrated for the extractor library whose
 * fl_build_info() JSON is build_info: its calibrated.build must give the same functions,
 * variants, copies and seed (the code the knobs were fitted on; the compiler and linker
 * may differ). 1 when it does, 0 when not (why says which field differs or is missing),
 * -1 when either JSON cannot be read (why says so). */
int fl_profile_fits_build(const char *path, const char *build_info, char *why,
	size_t whylen);

/* The profile's flags as an argv fragment ("--name", value...) in out (malloc'd strings,
 * *n of them, at most FL_PROFILE_MAX_ARGS). 0, or -1 with err naming the file and what is
 * wrong in it. */
int fl_profile_args(const char *name, char **out, int *n, char *err, size_t errlen);
void fl_profile_args_free(char **args, int n);

/* The value of the first --profile in argv (before any "--"), NULL when there is none. */
const char *fl_profile_given(int argc, char **argv);

/* argv with the profile's flags inserted after argv[0] (the command line's come after, so
 * they win): *argv_out is malloc'd (argc_out + 1 entries, NULL-terminated; the strings are
 * argv's and args'). The profile is the value of the first --profile FILE or
 * --profile=FILE in argv; without one, or with --profile none, *argv_out is NULL.
 * group (NULL-terminated flag names without "--", each taking a value; may be NULL) is one
 * knob set several ways: when the command line gives any of them, the profile's flags of
 * the group are left out (*dropped counts them), so a footprint given as --active-functions
 * is not also cut by the profile's --footprint-bytes. 0, or -1 with err. */
int fl_profile_splice(int argc, char **argv, const char *const *group, char **args,
	int *nargs, int *dropped, char ***argv_out, int *argc_out, char *err, size_t errlen);

#endif
