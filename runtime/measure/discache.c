/* discache.c: instruction classes of the addresses a simulated run executed: objdump of
 * each object filtered to them, or a whole-object cache shared by the runs of a study. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgparse.h"
#include "disasm.h"
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

/* Every instruction's class of one object, for runs that share objects (study). */
struct fm_dis_obj {
	char *path;
	uint64_t *addr;   /* sorted file VAs */
	uint16_t *cls;    /* flow | flags << 3 */
	size_t n, cap;
};

struct fm_dis_cache {
	struct fm_dis_obj *objs;
	size_t nobjs;
};

struct fm_dis_cache *fm_dis_cache_new(void)
{
	return calloc(1, sizeof(struct fm_dis_cache));
}

void fm_dis_cache_free(struct fm_dis_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nobjs; i++) {
		free(c->objs[i].path);
		free(c->objs[i].addr);
		free(c->objs[i].cls);
	}
	free(c->objs);
	free(c);
}

/* Parse one chunk of objdump text (whole lines) and append its classes to o. */
static int cache_chunk(struct fm_dis_obj *o, char *buf, size_t len, char *err, size_t errlen)
{
	struct fl_dis d;
	FILE *in = fmemopen(buf, len, "r");
	int rc;

	if (in == NULL) {
		snprintf(err, errlen, "fmemopen: %s", strerror(errno));
		return -1;
	}
	fl_dis_init(&d);
	rc = fl_dis_parse_stream(&d, in, o->path, err, errlen);
	fclose(in);
	if (rc == 0 && o->n + d.n > o->cap) {
		size_t cap = (o->n + d.n) * 2;
		uint64_t *a = realloc(o->addr, cap * sizeof(*a));
		uint16_t *c = a ? realloc(o->cls, cap * sizeof(*c)) : NULL;

		if (a)
			o->addr = a;
		if (c)
			o->cls = c;
		if (!a || !c) {
			snprintf(err, errlen, "out of memory caching %s", o->path);
			rc = -1;
		} else {
			o->cap = cap;
		}
	}
	for (size_t i = 0; rc == 0 && i < d.n; i++) {
		if (o->n && d.insns[i].addr <= o->addr[o->n - 1]) {
			snprintf(err, errlen, "%s: objdump addresses not increasing at 0x%llx",
				o->path, (unsigned long long)d.insns[i].addr);
			rc = -1;
			break;
		}
		o->addr[o->n] = d.insns[i].addr;
		o->cls[o->n++] = (uint16_t)(d.insns[i].cls.flow | d.insns[i].cls.flags << 3);
	}
	fl_dis_free(&d);
	return rc;
}

/* objdump object once, classifying in chunks of whole lines (bounded memory). */
static int cache_load(struct fm_dis_obj *o, char *err, size_t errlen)
{
	size_t cap = 64u << 20, len = 0;
	char *buf = malloc(cap), *line = NULL;
	size_t lcap = 0;
	int rc = 0;
	FILE *in;
	pid_t pid;

	if (buf == NULL) {
		snprintf(err, errlen, "objdump %s: out of memory", o->path);
		return -1;
	}
	pid = fl_objdump_open(o->path, &in, err, errlen);
	if (pid < 0) {
		free(buf);
		return -1;
	}
	for (ssize_t n; in && rc == 0 && (n = getline(&line, &lcap, in)) > 0;) {
		if (len + (size_t)n > cap) {
			rc = cache_chunk(o, buf, len, err, errlen);
			len = 0;
		}
		if ((size_t)n <= cap) {
			memcpy(buf + len, line, (size_t)n);
			len += (size_t)n;
		}
	}
	if (rc == 0 && len)
		rc = cache_chunk(o, buf, len, err, errlen);
	if (fl_objdump_close(pid, in, o->path, rc == 0 ? err : NULL, errlen) != 0)
		rc = -1;
	free(line);
	free(buf);
	return rc;
}

/* A table of the executed addresses of an object from the cache (loaded on first use). */
static int cache_dis(struct fm_dis_cache *c, const char *path, const uint64_t *addrs,
	size_t naddrs, struct fl_dis *d, char *err, size_t errlen)
{
	struct fm_dis_obj *o = NULL;

	for (size_t i = 0; i < c->nobjs; i++)
		if (strcmp(c->objs[i].path, path) == 0)
			o = &c->objs[i];
	if (o == NULL) {
		struct fm_dis_obj *n = realloc(c->objs, (c->nobjs + 1) * sizeof(*n));

		if (n == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->objs = n;
		o = &c->objs[c->nobjs];
		memset(o, 0, sizeof(*o));
		if ((o->path = strdup(path)) == NULL || cache_load(o, err, errlen) != 0) {
			free(o->path);
			free(o->addr);
			free(o->cls);
			return -1;
		}
		c->nobjs++;
	}
	fl_dis_init(d);
	d->insns = malloc((naddrs ? naddrs : 1) * sizeof(*d->insns));
	d->pool = calloc(1, 2);
	d->path = strdup(path);
	if (d->insns == NULL || d->pool == NULL || d->path == NULL) {
		fl_dis_free(d);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->pool_len = d->pool_cap = 2;
	for (size_t i = 0, lo = 0; i < naddrs; i++) {
		size_t hi = o->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (o->addr[mid] < addrs[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->n && o->addr[lo] == addrs[i]) {
			struct fl_dis_insn *x = &d->insns[d->n++];

			x->addr = addrs[i];
			x->len = 0;
			x->text = 0;
			x->cls.flow = (enum fl_dis_flow)(o->cls[lo] & 7);
			x->cls.flags = o->cls[lo] >> 3;
		}
	}
	d->cap = naddrs;
	return 0;
}

int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, struct fm_dis_cache *cache,
	struct fl_dis *d, char *err, size_t errlen)
{
	size_t n;
	uint64_t *a = obj_addrs(cg, obj, &n);

	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fl_dis_init(d);
	int r = cache ? cache_dis(cache, cg->objs[obj], a, n, d, err, errlen) :
		dis_load_filtered(d, cg->objs[obj], a, n, err, errlen);
	free(a);
	if (r != 0)
		fl_dis_free(d);
	return r;
}
