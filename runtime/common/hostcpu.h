/* hostcpu.h: this host's CPU model, and the kind of CPU it names as a file-name word.
 *
 * A leaf profile's knobs are fitted on one CPU (shares of CPU time move with the core:
 * an extractor missing in L1i costs more cycles on one core than another), so shipped
 * profiles are kept per CPU kind, profile-NAME-KIND.json (leafprofile.h), and the kind
 * comes from /proc/cpuinfo's "model name" here.
 */
#ifndef FL_HOSTCPU_H
#define FL_HOSTCPU_H

#include <stddef.h>

/* /proc/cpuinfo's first "model name" in out, "unknown" when there is none. */
void fl_cpu_model(char *out, size_t outlen);

/* model as a file-name word: lower case, "(R)", "(TM)", the words "CPU" and "Processor"
 * and anything from '@' on left out, other runs of non-alphanumerics one '-'.
 * "Intel(R) Xeon(R) Processor" is intel-xeon, "AMD EPYC 7B13 64-Core Processor" is
 * amd-epyc-7b13-64-core, an empty model "unknown". */
void fl_cpu_kind(const char *model, char *out, size_t outlen);

#endif
