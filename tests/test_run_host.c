/* test_run_host.c: CPU lists, sysfs topology (fake trees), placement, /proc/stat. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "run_host.h"

/* Write text to root/rel, making the directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_root(char *root, size_t len)
{
	snprintf(root, len, "/tmp/test_run_host.XXXXXX");
	assert_non_null(mkdtemp(root));
}

static void remove_root(const char *root)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* A tree with ncpu CPUs; siblings[i] is CPU i's thread_siblings_list (NULL: no file). */
static void make_cpus(const char *root, const char *online, unsigned ncpu,
	const char *const *siblings)
{
	char rel[256];
	put(root, "sys/devices/system/cpu/online", online);
	for (unsigned i = 0; i < ncpu; i++) {
		if (siblings[i] == NULL)
			continue;
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%u/topology/"
			"thread_siblings_list", i);
		put(root, rel, siblings[i]);
	}
}

static void assert_cpus(const struct fl_cpus *c, const char *want)
{
	char got[256];
	fl_cpus_format(c, got, sizeof got);
	assert_string_equal(got, want);
}

static void test_cpulist(void **state)
{
	(void)state;
	struct fl_cpus c;
	assert_int_equal(fl_cpus_parse("0-3,8,10-11\n", &c), 0);
	assert_int_equal(c.n, 7);
	assert_cpus(&c, "0-3,8,10-11");
	assert_true(fl_cpus_has(&c, 10) && !fl_cpus_has(&c, 9));
	assert_int_equal(fl_cpus_parse("  5 ", &c), 0);
	assert_cpus(&c, "5");
	assert_int_equal(fl_cpus_parse("", &c), 0);
	assert_int_equal(c.n, 0);
	assert_cpus(&c, "");
	assert_int_equal(fl_cpus_parse("3,1,2,2", &c), 0);  /* sorted, no duplicates */
	assert_cpus(&c, "1-3");
	assert_int_equal(fl_cpus_parse("3-1", &c), -1);
	assert_int_equal(fl_cpus_parse("a", &c), -1);
	assert_int_equal(fl_cpus_parse("1,,2", &c), -1);
	assert_int_equal(fl_cpus_parse("1-", &c), -1);
	assert_int_equal(fl_cpus_parse("1024", &c), -1);
	assert_int_equal(fl_cpus_parse("1 2", &c), -1);
}

/* 4 cores x 2 threads, siblings n and n+4 (the usual x86 numbering). */
static void test_smt_topology(void **state)
{
	(void)state;
	char root[64], err[256];
	const char *sib[8] = { "0,4\n", "1,5\n", "2,6\n", "3,7\n", "0,4\n", "1,5\n", "2,6\n",
		"3,7\n" };
	struct fl_host_topo t;
	struct fl_cpus inst[8], leaf, mock, driver;

	make_root(root, sizeof root);
	make_cpus(root, "0-7\n", 8, sib);
	assert_int_equal(fl_host_topo_read(root, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t.ncpu, 8);
	assert_int_equal(t.ncores, 4);
	assert_int_equal(t.threads_per_core, 2);
	assert_int_equal(t.core[4], t.core[0]);
	assert_int_equal(t.thread[4], 1);
	assert_int_equal(t.thread[0], 0);

	/* Two instances: two whole cores each. */
	assert_int_equal(fl_host_partition(&t, 2, inst, err, sizeof err), 0);
	assert_cpus(&inst[0], "0-1,4-5");
	assert_cpus(&inst[1], "2-3,6-7");
	/* Four: one core each. */
	assert_int_equal(fl_host_partition(&t, 4, inst, err, sizeof err), 0);
	assert_cpus(&inst[0], "0,4");
	assert_cpus(&inst[3], "3,7");
	/* Eight: single threads, physical cores first. */
	assert_int_equal(fl_host_partition(&t, 8, inst, err, sizeof err), 0);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(inst[i].n, 1);
		assert_int_equal(inst[i].cpu[0], i);
	}
	/* Six: disjoint, covering all, sizes 1 or 2. */
	assert_int_equal(fl_host_partition(&t, 6, inst, err, sizeof err), 0);
	unsigned total = 0;
	for (unsigned i = 0; i < 6; i++) {
		assert_true(inst[i].n >= 1 && inst[i].n <= 2);
		for (unsigned j = 0; j < i; j++)
			for (unsigned k = 0; k < inst[i].n; k++)
				assert_false(fl_cpus_has(&inst[j], inst[i].cpu[k]));
		total += inst[i].n;
	}
	assert_int_equal(total, 8);
	assert_int_equal(fl_host_partition(&t, 9, inst, err, sizeof err), -1);
	assert_non_null(strstr(err, "9 instances"));

	/* Roles over 4 cores: leaf 2 whole cores, mock and driver one each. */
	assert_int_equal(fl_host_partition(&t, 1, inst, err, sizeof err), 0);
	fl_host_roles(&t, &inst[0], &leaf, &mock, &driver);
	assert_cpus(&leaf, "0-1,4-5");
	assert_cpus(&mock, "2,6");
	assert_cpus(&driver, "3,7");
	/* Over 2 cores (4 CPUs): by CPU with siblings adjacent: leaf keeps core 0. */
	assert_int_equal(fl_host_partition(&t, 2, inst, err, sizeof err), 0);
	fl_host_roles(&t, &inst[0], &leaf, &mock, &driver);
	assert_cpus(&leaf, "0,4");
	assert_cpus(&mock, "1");
	assert_cpus(&driver, "5");

	/* An affinity mask leaves CPUs out: 0-3 are four cores of one thread. */
	struct fl_cpus allowed;
	fl_cpus_parse("0-3", &allowed);
	assert_int_equal(fl_host_topo_read(root, &allowed, &t, err, sizeof err), 0);
	assert_int_equal(t.ncpu, 4);
	assert_int_equal(t.ncores, 4);
	assert_int_equal(t.threads_per_core, 1);
	fl_cpus_parse("9", &allowed);
	assert_int_equal(fl_host_topo_read(root, &allowed, &t, err, sizeof err), -1);
	remove_root(root);
}

/* Two CPUs without SMT (this CI machine's shape), and a tree without topology files. */
static void test_two_cpus(void **state)
{
	(void)state;
	char root[64], err[256];
	const char *sib[2] = { "0\n", "1\n" };
	const char *none[3] = { NULL, NULL, NULL };
	struct fl_host_topo t;
	struct fl_cpus inst[2], leaf, mock, driver;

	make_root(root, sizeof root);
	make_cpus(root, "0-1\n", 2, sib);
	assert_int_equal(fl_host_topo_read(root, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t.ncores, 2);
	assert_int_equal(fl_host_partition(&t, 1, inst, err, sizeof err), 0);
	assert_cpus(&inst[0], "0-1");
	fl_host_roles(&t, &inst[0], &leaf, &mock, &driver);
	assert_cpus(&leaf, "0");
	assert_cpus(&mock, "1");
	assert_cpus(&driver, "1");
	assert_int_equal(fl_host_partition(&t, 2, inst, err, sizeof err), 0);
	assert_cpus(&inst[0], "0");
	assert_cpus(&inst[1], "1");
	fl_host_roles(&t, &inst[1], &leaf, &mock, &driver);
	assert_cpus(&leaf, "1");
	assert_cpus(&mock, "1");
	assert_cpus(&driver, "1");
	remove_root(root);

	make_root(root, sizeof root);
	make_cpus(root, "0-2", 3, none);
	assert_int_equal(fl_host_topo_read(root, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t.ncores, 3);
	assert_int_equal(t.threads_per_core, 1);
	remove_root(root);

	/* No sysfs under a given root: an error naming the file. */
	make_root(root, sizeof root);
	assert_int_equal(fl_host_topo_read(root, NULL, &t, err, sizeof err), -1);
	assert_non_null(strstr(err, "online"));
	remove_root(root);
}

/* The real machine reads without error and partitions into one instance. */
static void test_this_host(void **state)
{
	(void)state;
	char err[256];
	struct fl_host_topo t;
	struct fl_cpus inst[1];
	struct fl_host_info info;
	struct fl_cpu_times a, b;

	assert_int_equal(fl_host_topo_read("", NULL, &t, err, sizeof err), 0);
	assert_true(t.ncpu >= 1 && t.ncores >= 1 && t.ncores <= t.ncpu);
	assert_int_equal(fl_host_partition(&t, 1, inst, err, sizeof err), 0);
	assert_int_equal(inst[0].n, t.ncpu);
	fl_host_info_read("", &t, &info);
	assert_true(info.logical_cpus >= 1);
	assert_true(info.kernel[0] != 0);
	assert_int_equal(fl_host_cpu_times_read("/proc/stat", &a), 0);
	usleep(20000);
	assert_int_equal(fl_host_cpu_times_read("/proc/stat", &b), 0);
	assert_true(b.total >= a.total);
}

static void test_proc_stat(void **state)
{
	(void)state;
	struct fl_cpu_times a, b;
	const char *t1 = "intr 1 2 3\ncpu  100 20 30 400 50 6 7 8 9 0\ncpu0 1 2 3 4 5 6 7 8\n";
	const char *t2 = "cpu  200 20 60 470 50 6 7 8 9 0\n";
	assert_int_equal(fl_host_cpu_times_parse(t1, &a), 0);
	assert_int_equal(a.busy, 171);   /* user nice system irq softirq steal */
	assert_int_equal(a.total, 621);  /* + idle iowait */
	assert_int_equal(fl_host_cpu_times_parse(t2, &b), 0);
	/* 130 busy of 200 ticks. */
	assert_true(fl_host_cpu_util_pct(&a, &b) > 64.99 && fl_host_cpu_util_pct(&a, &b) < 65.01);
	assert_true(fl_host_cpu_util_pct(&a, &a) < 0);
	assert_int_equal(fl_host_cpu_times_parse("cpu0 1 2 3 4\n", &a), -1);
	assert_int_equal(fl_host_cpu_times_parse("cpu  1 2\n", &a), -1);
}

static void test_info(void **state)
{
	(void)state;
	char root[64];
	struct fl_host_topo t = { 0 };
	struct fl_host_info info;
	make_root(root, sizeof root);
	put(root, "proc/cpuinfo", "processor\t: 0\nvendor_id\t: X\nmodel name\t: Test CPU @ 1GHz  \n"
		"\nprocessor\t: 1\nmodel name\t: Test CPU @ 1GHz\n");
	put(root, "proc/meminfo", "MemTotal:       16318412 kB\nMemFree: 1 kB\n");
	t.ncpu = 2;
	t.ncores = 1;
	t.threads_per_core = 2;
	fl_host_info_read(root, &t, &info);
	assert_string_equal(info.cpu_model, "Test CPU @ 1GHz");
	assert_int_equal(info.mem_total_kib, 16318412);
	assert_int_equal(info.cores, 1);
	assert_int_equal(info.threads_per_core, 2);
	assert_int_equal(info.usable_cpus, 2);
	remove_root(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_smt_topology),
		cmocka_unit_test(test_two_cpus),
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
