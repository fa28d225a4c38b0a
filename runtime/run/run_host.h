/* run_host.h: the host as `frontload run` sees it: CPU topology, CPU sets for instances
 * and roles, /proc/stat utilisation, and the machine description for the result.
 *
 * Topology comes from sysfs (online CPUs, each CPU's topology/thread_siblings_list); every
 * reader takes a root directory ("" for the real one) so tests can use a fake tree.
 * Placement keeps SMT siblings together: an instance gets whole physical cores when there
 * are enough, and within an instance the leaf, mock and driver get whole cores when there
 * are at least three, so a helper never shares a core's front end with the leaf.
 */
#ifndef FL_RUN_HOST_H
#define FL_RUN_HOST_H

#include <stddef.h>
#include <stdint.h>

#define FL_HOST_MAX_CPUS 1024u   /* CPU numbers 0..1023 */

/* A set of CPU numbers, ascending, no duplicates. */
struct fl_cpus {
	unsigned n;
	uint16_t cpu[FL_HOST_MAX_CPUS];
};

/* Parse a kernel CPU list ("0-3,8,10-11", whitespace around ignored; "" is empty) into
 * out. Returns 0, or -1 on bad syntax or a CPU >= FL_HOST_MAX_CPUS. */
int fl_cpus_parse(const char *text, struct fl_cpus *out);

/* out as a CPU list ("0-3,8"), "" when empty. Truncated to outlen. */
void fl_cpus_format(const struct fl_cpus *c, char *out, size_t outlen);

/* 1 when c holds cpu. */
int fl_cpus_has(const struct fl_cpus *c, unsigned cpu);

/* Online CPUs grouped by physical core. */
struct fl_host_topo {
	unsigned ncpu;                        /* online CPUs considered */
	uint16_t cpu[FL_HOST_MAX_CPUS];       /* ascending */
	uint16_t core[FL_HOST_MAX_CPUS];      /* per entry of cpu[]: its core's index,
	                                         0..ncores-1, cores ordered by first CPU */
	uint16_t thread[FL_HOST_MAX_CPUS];    /* per entry: rank among its core's siblings */
	unsigned ncores;
	unsigned threads_per_core;            /* most siblings of any core */
};

/* Read the topology under root (root "" = this machine): root/sys/devices/system/cpu/
 * online, then cpuN/topology/thread_siblings_list for each online CPU (a CPU without that
 * file is its own core). When allowed is not NULL, CPUs outside it are left out (the
 * process's affinity mask). Returns 0, or -1 with err. */
int fl_host_topo_read(const char *root, const struct fl_cpus *allowed,
	struct fl_host_topo *t, char *err, size_t errlen);

/* Split t's CPUs into n disjoint sets, one per instance (out[0..n-1]). With at least n
 * cores, instance i gets whole cores [i*C/n, (i+1)*C/n) with their siblings; otherwise
 * CPUs are dealt physical cores first (first threads of every core, then second threads,
 * ...) in n contiguous runs. Returns 0, or -1 (err) when there are fewer CPUs than n. */
int fl_host_partition(const struct fl_host_topo *t, unsigned n, struct fl_cpus *out,
	char *err, size_t errlen);

/* Split one instance's CPUs among its processes for --pin. With 3 or more cores in inst:
 * mock and driver get max(1, cores/4) whole cores each, the leaf the rest (first cores).
 * Otherwise by CPU, siblings adjacent: 1 CPU: all three share it; 2: leaf the first, mock
 * and driver the second; k >= 3: mock and driver max(1, k/4) each, the leaf the rest. */
void fl_host_roles(const struct fl_host_topo *t, const struct fl_cpus *inst,
	struct fl_cpus *leaf, struct fl_cpus *mock, struct fl_cpus *driver);

/* Aggregate CPU time from the "cpu " line of /proc/stat, in clock ticks. */
struct fl_cpu_times {
	uint64_t busy;   /* user + nice + system + irq + softirq + steal */
	uint64_t total;  /* busy + idle + iowait */
};

/* Parse the text of /proc/stat. Returns 0, or -1 when the "cpu " line is missing. */
int fl_host_cpu_times_parse(const char *text, struct fl_cpu_times *out);

/* Read and parse path (normally "/proc/stat"). Returns 0 or -1. */
int fl_host_cpu_times_read(const char *path, struct fl_cpu_times *out);

/* Busy share of all CPUs between samples a and b (b later), in percent; -1 when no
 * time passed. */
double fl_host_cpu_util_pct(const struct fl_cpu_times *a, const struct fl_cpu_times *b);

/* The machine, for the result (DCPerf "machines" entry). */
struct fl_host_info {
	char cpu_model[256];       /* /proc/cpuinfo "model name" (or "Processor"/"cpu model") */
	char architecture[65];     /* uname machine */
	char kernel[256];          /* uname release */
	char kernel_version[256];  /* uname version */
	char hostname[256];
	unsigned logical_cpus;     /* online CPUs */
	unsigned usable_cpus;      /* in this process's affinity mask */
	unsigned cores;            /* physical cores among the usable CPUs */
	unsigned threads_per_core;
	uint64_t mem_total_kib;    /* /proc/meminfo MemTotal; 0 unknown */
};

/* Fill info from uname, root/proc/cpuinfo, root/proc/meminfo and the topology t. */
void fl_host_info_read(const char *root, const struct fl_host_topo *t,
	struct fl_host_info *info);

#endif
