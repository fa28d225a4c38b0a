/* run_host.c: CPU topology from sysfs, instance and role placement, /proc/stat, uname. */
#define _GNU_SOURCE
#include "run_host.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Mark bits[cpu] for each CPU of a list; returns 0 or -1. */
static int cpus_parse_bits(const char *text, unsigned char *bits)
{
	const char *p = text;

	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		char *end;
		errno = 0;
		unsigned long a = strtoul(p, &end, 10), b;
		if (errno || end == p || !isdigit((unsigned char)*p))
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			b = strtoul(p, &end, 10);
			if (errno || end == p)
				return -1;
			p = end;
		}
		if (a > b || b >= FL_HOST_MAX_CPUS)
			return -1;
		for (unsigned long c = a; c <= b; c++)
			bits[c] = 1;
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -1 : 0;
}

int fl_cpus_parse(const char *text, struct fl_cpus *out)
{
	unsigned char bits[FL_HOST_MAX_CPUS] = { 0 };

	out->n = 0;
	if (cpus_parse_bits(text, bits) != 0)
		return -1;
	for (unsigned c = 0; c < FL_HOST_MAX_CPUS; c++)
		if (bits[c])
			out->cpu[out->n++] = (uint16_t)c;
	return 0;
}

void fl_cpus_format(const struct fl_cpus *c, char *out, size_t outlen)
{
	size_t len = 0;

	if (outlen == 0)
		return;
	out[0] = 0;
	for (unsigned i = 0; i < c->n;) {
		unsigned j = i;
		while (j + 1 < c->n && c->cpu[j + 1] == c->cpu[j] + 1)
			j++;
		int w = j > i ? snprintf(out + len, outlen - len, "%s%u-%u", i ? "," : "",
				c->cpu[i], c->cpu[j]) :
			snprintf(out + len, outlen - len, "%s%u", i ? "," : "", c->cpu[i]);
		if (w < 0 || (size_t)w >= outlen - len)
			return;
		len += (size_t)w;
		i = j + 1;
	}
}

int fl_cpus_has(const struct fl_cpus *c, unsigned cpu)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->cpu[i] == cpu)
			return 1;
	return 0;
}

/* Read a small text file into buf (NUL-terminated). Returns 0 or -1. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	int bad = ferror(f);
	fclose(f);
	buf[n] = 0;
	return bad ? -1 : 0;
}

/* Sort CPUs into cpu[] with a core index per CPU (cores numbered by first CPU). */
int fl_host_topo_read(const char *root, const struct fl_cpus *allowed,
	struct fl_host_topo *t, char *err, size_t errlen)
{
	char path[4096], buf[4096];
	struct fl_cpus online;
	static const char base[] = "/sys/devices/system/cpu";
	int first_of[FL_HOST_MAX_CPUS];  /* per CPU: the lowest CPU of its core */

	memset(t, 0, sizeof *t);
	snprintf(path, sizeof path, "%s%s/online", root, base);
	if (read_text(path, buf, sizeof buf) != 0 || fl_cpus_parse(buf, &online) != 0 ||
	    online.n == 0) {
		/* No sysfs (a container without it): count CPUs and call each its own core. */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n < 1 || root[0] != 0) {
			snprintf(err, errlen, "cannot read the online CPUs from %s", path);
			return -1;
		}
		online.n = 0;
		for (long c = 0; c < n && c < (long)FL_HOST_MAX_CPUS; c++)
			online.cpu[online.n++] = (uint16_t)c;
	}
	for (unsigned i = 0; i < online.n; i++) {
		unsigned c = online.cpu[i];
		struct fl_cpus sib;
		first_of[c] = (int)c;
		snprintf(path, sizeof path, "%s%s/cpu%u/topology/thread_siblings_list", root, base,
			c);
		if (read_text(path, buf, sizeof buf) == 0 && fl_cpus_parse(buf, &sib) == 0 &&
		    sib.n > 0)
			first_of[c] = sib.cpu[0];
	}
	for (unsigned i = 0; i < online.n; i++) {
		unsigned c = online.cpu[i];
		if (allowed != NULL && !fl_cpus_has(allowed, c))
			continue;
		t->cpu[t->ncpu++] = (uint16_t)c;
	}
	if (t->ncpu == 0) {
		snprintf(err, errlen, "no usable CPU (online %u, none in the affinity mask)",
			online.n);
		return -1;
	}
	/* Cores in order of their first usable CPU; threads ranked by CPU number. */
	int core_first[FL_HOST_MAX_CPUS];
	unsigned core_threads[FL_HOST_MAX_CPUS];
	for (unsigned i = 0; i < t->ncpu; i++) {
		int f = first_of[t->cpu[i]];
		unsigned k = 0;
		while (k < t->ncores && core_first[k] != f)
			k++;
		if (k == t->ncores) {
			core_first[k] = f;
			core_threads[k] = 0;
			t->ncores++;
		}
		t->core[i] = (uint16_t)k;
		t->thread[i] = (uint16_t)core_threads[k]++;
		if (core_threads[k] > t->threads_per_core)
			t->threads_per_core = core_threads[k];
	}
	return 0;
}

/* Add cpu to set c, keeping it sorted. */
static void cpus_add(struct fl_cpus *c, unsigned cpu)
{
	unsigned i = c->n;
	if (fl_cpus_has(c, cpu) || c->n >= FL_HOST_MAX_CPUS)
		return;
	while (i > 0 && c->cpu[i - 1] > cpu) {
		c->cpu[i] = c->cpu[i - 1];
		i--;
	}
	c->cpu[i] = (uint16_t)cpu;
	c->n++;
}

int fl_host_partition(const struct fl_host_topo *t, unsigned n, struct fl_cpus *out,
	char *err, size_t errlen)
{
	if (n == 0 || n > t->ncpu) {
		snprintf(err, errlen, "%u instances need at least %u CPUs; %u usable", n, n,
			t->ncpu);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		out[i].n = 0;
	if (t->ncores >= n) {
		for (unsigned i = 0; i < t->ncpu; i++) {
			/* Core k goes to the instance whose range [j*C/n, (j+1)*C/n) holds it. */
			unsigned k = t->core[i], j = 0;
			while (j + 1 < n && (uint64_t)(j + 1) * t->ncores / n <= k)
				j++;
			cpus_add(&out[j], t->cpu[i]);
		}
		return 0;
	}
	/* Fewer cores than instances: deal first threads of every core, then second ... */
	unsigned order[FL_HOST_MAX_CPUS], m = 0;
	for (unsigned th = 0; th < t->threads_per_core; th++)
		for (unsigned k = 0; k < t->ncores; k++)
			for (unsigned i = 0; i < t->ncpu; i++)
				if (t->core[i] == k && t->thread[i] == th)
					order[m++] = i;
	for (unsigned j = 0; j < m; j++)
		cpus_add(&out[(uint64_t)j * n / m], t->cpu[order[j]]);
	return 0;
}

/* The core of cpu under t; CPUs t does not know are cores of their own. */
static unsigned topo_core(const struct fl_host_topo *t, unsigned cpu)
{
	for (unsigned i = 0; i < t->ncpu; i++)
		if (t->cpu[i] == cpu)
			return t->core[i];
	return FL_HOST_MAX_CPUS + cpu;
}

void fl_host_roles(const struct fl_host_topo *t, const struct fl_cpus *inst,
	struct fl_cpus *leaf, struct fl_cpus *mock, struct fl_cpus *driver)
{
	unsigned cores[FL_HOST_MAX_CPUS], nc = 0;  /* inst's cores, by first CPU */
	unsigned order[FL_HOST_MAX_CPUS], m = 0;  /* inst's CPUs, siblings adjacent */
	unsigned core_of[FL_HOST_MAX_CPUS];       /* per entry of order[]: index in cores[] */

	leaf->n = mock->n = driver->n = 0;
	for (unsigned i = 0; i < inst->n; i++) {
		unsigned k = topo_core(t, inst->cpu[i]), j = 0;
		while (j < nc && cores[j] != k)
			j++;
		if (j == nc)
			cores[nc++] = k;
	}
	for (unsigned j = 0; j < nc; j++)
		for (unsigned i = 0; i < inst->n; i++)
			if (topo_core(t, inst->cpu[i]) == cores[j]) {
				core_of[m] = j;
				order[m++] = inst->cpu[i];
			}
	if (m == 0)
		return;
	if (m == 1) {
		cpus_add(leaf, order[0]);
		cpus_add(mock, order[0]);
		cpus_add(driver, order[0]);
		return;
	}
	if (m == 2) {
		cpus_add(leaf, order[0]);
		cpus_add(mock, order[1]);
		cpus_add(driver, order[1]);
		return;
	}
	/* Whole cores when there are three or more, else single CPUs. */
	unsigned units = nc >= 3 ? nc : m;
	unsigned q = units / 4 ? units / 4 : 1, nleaf = units - 2 * q;
	for (unsigned j = 0; j < m; j++) {
		unsigned u = nc >= 3 ? core_of[j] : j;
		cpus_add(u < nleaf ? leaf : u < nleaf + q ? mock : driver, order[j]);
	}
}

int fl_host_cpu_times_parse(const char *text, struct fl_cpu_times *out)
{
	const char *p = text;
	uint64_t v[8] = { 0 };

	while (p != NULL && strncmp(p, "cpu ", 4) != 0) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		return -1;
	p += 4;
	/* user nice system idle iowait irq softirq steal (guest is inside user). */
	int n = sscanf(p, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		" %" SCNu64 " %" SCNu64, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return -1;
	out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	out->total = out->busy + v[3] + v[4];
	return 0;
}

int fl_host_cpu_times_read(const char *path, struct fl_cpu_times *out)
{
	char buf[8192];
	if (read_text(path, buf, sizeof buf) != 0)
		return -1;
	return fl_host_cpu_times_parse(buf, out);
}

double fl_host_cpu_util_pct(const struct fl_cpu_times *a, const struct fl_cpu_times *b)
{
	if (b->total <= a->total || b->busy < a->busy)
		return -1;
	return 100.0 * (double)(b->busy - a->busy) / (double)(b->total - a->total);
}

/* The value after "key<spaces>:" on a line of text, into out; 0 or -1. */
static int text_field(const char *text, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);
	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) != 0)
			continue;
		const char *q = p + klen;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ':')
			continue;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		size_t len = strcspn(q, "\n");
		while (len > 0 && isspace((unsigned char)q[len - 1]))
			len--;
		snprintf(out, outlen, "%.*s", (int)len, q);
		return 0;
	}
	return -1;
}

void fl_host_info_read(const char *root, const struct fl_host_topo *t,
	struct fl_host_info *info)
{
	static char buf[1 << 16];  /* /proc/cpuinfo's first CPUs are enough */
	char path[4096];
	struct utsname u;

	memset(info, 0, sizeof *info);
	snprintf(info->cpu_model, sizeof info->cpu_model, "unknown");
	snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
	if (read_text(path, buf, sizeof buf) == 0 &&
	    text_field(buf, "model name", info->cpu_model, sizeof info->cpu_model) != 0 &&
	    text_field(buf, "Processor", info->cpu_model, sizeof info->cpu_model) != 0 &&
	    text_field(buf, "cpu model", info->cpu_model, sizeof info->cpu_model) != 0)
		text_field(buf, "CPU part", info->cpu_model, sizeof info->cpu_model);
	snprintf(path, sizeof path, "%s/proc/meminfo", root);
	char mem[64];
	if (read_text(path, buf, sizeof buf) == 0 &&
	    text_field(buf, "MemTotal", mem, sizeof mem) == 0)
		info->mem_total_kib = strtoull(mem, NULL, 10);
	if (uname(&u) == 0) {
		snprintf(info->architecture, sizeof info->architecture, "%s", u.machine);
		snprintf(info->kernel, sizeof info->kernel, "%s", u.release);
		snprintf(info->kernel_version, sizeof info->kernel_version, "%s", u.version);
		snprintf(info->hostname, sizeof info->hostname, "%s", u.nodename);
	}
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	info->logical_cpus = online > 0 ? (unsigned)online : t->ncpu;
	info->usable_cpus = t->ncpu;
	info->cores = t->ncores;
	info->threads_per_core = t->threads_per_core;
}
