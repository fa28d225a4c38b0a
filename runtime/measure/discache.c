/* discache.c: instruction classes of the addresses a simulated run executed: Capstone on
 * just those addresses (dis_cs.h), or objdump of each object filtered to them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgparse.h"
#include "disasm.h"
#include "dis_cs.h"
#include "discache.h"
#include "process.h"

/* Sorted unique callgrind addresses of object obj. */
static uint64_t *obj_addrs(const struct fl_cg *cg, uint32_t obj, size_t *n)
{
	size_t cnt = 0;
	uint64_t *a;

	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj == obj)
			cnt++;
	a = malloc((cnt ? cnt : 1) * sizeof(*a));
	if (a == NULL)
		return NULL;
	cnt = 0;
	/* fl_cg_sort ordered insns by object, then address: already sorted and unique. */
	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj == obj)
			a[cnt++] = cg->insns[i].addr;
	*n = cnt;
	return a;
}

static int addr_in(const uint64_t *a, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo] == x;
}

/* objdump object, keeping only the instruction lines at the executed addresses (a skipped
 * run becomes objdump's "\t..." line), and parse that into d. A full extractor library is
 * hundreds of MB of text: only what ran is kept in memory. */
static int dis_load_filtered(struct fl_dis *d, const char *object, const uint64_t *addrs,
	size_t naddrs, char *err, size_t errlen)
{
	int rc = -1;
	FILE *in = NULL, *tmp = tmpfile();
	char *line = NULL;
	size_t cap = 0;
	pid_t pid;

	if (tmp == NULL) {
		snprintf(err, errlen, "objdump %s: %s", object, strerror(errno));
		return -1;
	}
	pid = fl_objdump_open(object, &in, err, errlen);
	if (pid < 0) {
		fclose(tmp);
		return -1;
	}
	int skipping = 0;
	for (ssize_t len; (len = getline(&line, &cap, in)) > 0;) {
		const char *p = line + strspn(line, " ");
		char *end;
		unsigned long long a = strtoull(p, &end, 16);

		if (p != line && end != p && *end == ':' && end[1] == '\t') {
			if (!addr_in(addrs, naddrs, a)) {
				if (!skipping)
					fputs("\t...\n", tmp);
				skipping = 1;
				continue;
			}
		}
		skipping = 0;
		fwrite(line, 1, (size_t)len, tmp);
	}
	if (fl_objdump_close(pid, in, object, err, errlen) != 0)
		goto out;
	rewind(tmp);
	rc = fl_dis_parse_stream(d, tmp, object, err, errlen);
out:
	free(line);
	fclose(tmp);
	return rc;
}

int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, int objdump, struct fl_dis *d,
	char *err, size_t errlen)
{
	size_t n;
	uint64_t *a = obj_addrs(cg, obj, &n);

	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fl_dis_init(d);
	int r = objdump ? dis_load_filtered(d, cg->objs[obj], a, n, err, errlen) :
		fm_dis_cs(cg->objs[obj], a, n, d, err, errlen);
	free(a);
	if (r != 0)
		fl_dis_free(d);
	return r;
}
