/* codesize.c: symbol sizes of the generated functions (libelf) and the plan report. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigmap.h"
#include "codesize.h"
#include "dispatch.h"
#include "libload.h"
#include "../common/errbuf.h"
#include "fl_extract.h"

#define CS_NAME_LEN 18u   /* strlen("fl_P01_v000_c00000") */

/* A generated function's main symbol. */
struct cs_sym {
	uint64_t addr;        /* st_value: address in the file */
	uint32_t hot, cold;   /* bytes: main symbol and .part fragments; .cold fragments */
};

/* A symbol named after a generated function, to be sorted by name: sk is the name as an
 * integer (pattern, variant, copy) shifted left 2 with the kind in the low bits, so a
 * function's main symbol sorts just before its fragments. */
enum { CS_MAIN, CS_PART, CS_COLD };
struct cs_ref {
	uint64_t sk;
	uint32_t val;         /* a main: its index among the mains; a fragment: its bytes */
};

#define CS_SK_BITS 36u    /* sk < 10^10 * 4 < 2^36 */
#define CS_RADIX_BITS 9u  /* 4 passes: the sorted refs end where they began */

static int cs_by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct cs_sym *)a)->addr, y = ((const struct cs_sym *)b)->addr;

	return x < y ? -1 : x > y;
}

/* n decimal digits at s, or -1. */
static int64_t cs_digits(const char *s, int n)
{
	int64_t v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* The sort key of name s (room bytes readable), or UINT64_MAX when s is not
 * fl_PNN_vVVV_cCCCCC, optionally followed by '.' and a suffix (a fragment GCC split off:
 * .cold, .part.0). */
static uint64_t cs_name_key(const char *s, size_t room)
{
	size_t len = strnlen(s, room < CS_NAME_LEN + 1 ? room : CS_NAME_LEN + 1);

	if (len < CS_NAME_LEN || room == CS_NAME_LEN || strncmp(s, "fl_P", 4) != 0 ||
	    s[6] != '_' || s[7] != 'v' || s[11] != '_' || s[12] != 'c')
		return UINT64_MAX;
	int64_t p = cs_digits(s + 4, 2), v = cs_digits(s + 8, 3), c = cs_digits(s + 13, 5);
	if (p < 0 || v < 0 || c < 0)
		return UINT64_MAX;
	uint64_t name = ((uint64_t)p * 1000 + (uint64_t)v) * 100000 + (uint64_t)c;
	if (s[CS_NAME_LEN] == '\0')
		return name << 2 | CS_MAIN;
	if (s[CS_NAME_LEN] != '.')
		return UINT64_MAX;
	if (room - CS_NAME_LEN >= 5 && memcmp(s + CS_NAME_LEN, ".cold", 5) == 0)
		return name << 2 | CS_COLD;
	return name << 2 | CS_PART;
}

/* Sort r[0..n) by sk (LSD radix, stable; tmp holds n): this runs at every leaf start, over
 * 1.4 M symbols at --copies=1000, and four linear passes beat qsort's n log n calls. */
static void cs_radix(struct cs_ref *r, struct cs_ref *tmp, size_t n)
{
	struct cs_ref *from = r, *to = tmp;

	for (unsigned shift = 0; shift < CS_SK_BITS; shift += CS_RADIX_BITS) {
		size_t at[1u << CS_RADIX_BITS] = { 0 }, sum = 0;
		uint64_t mask = (1u << CS_RADIX_BITS) - 1;

		for (size_t i = 0; i < n; i++)
			at[(from[i].sk >> shift) & mask]++;
		for (size_t b = 0; b <= mask; b++) {
			size_t c = at[b];
			at[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[at[(from[i].sk >> shift) & mask]++] = from[i];
		struct cs_ref *t = from;
		from = to;
		to = t;
	}
	if (from != r)
		memcpy(r, from, n * sizeof(*r));
}

/* The SHT_SYMTAB section, or NULL (stripped). */
static Elf_Scn *cs_symtab(Elf *e, GElf_Shdr *sh)
{
	for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s))
		if (gelf_getshdr(s, sh) && sh->sh_type == SHT_SYMTAB)
			return s;
	return NULL;
}

/* Add each fragment's bytes to its main symbol: r (n refs) sorted by name puts every
 * main just before its fragments. A fragment with no main (a probe's, or a function's
 * not in the library) is skipped. */
static void cs_join(const struct cs_ref *r, size_t n, struct cs_sym *mains)
{
	struct cs_sym *m = NULL;
	uint64_t name = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		unsigned kind = (unsigned)(r[i].sk & 3);

		if (kind == CS_MAIN) {
			m = &mains[r[i].val];
			name = r[i].sk >> 2;
		} else if (m != NULL && r[i].sk >> 2 == name) {
			if (kind == CS_COLD)
				m->cold += r[i].val;
			else
				m->hot += r[i].val;
		}
	}
}

/* Collect main symbols into *out (*nout used, *ncap allocated: free with fl_bigmap_free, sorted
 * by address), with each fragment's bytes added to its main symbol. */
static int cs_collect(Elf *e, struct cs_sym **out, size_t *nout, size_t *ncap, char *err,
	size_t errlen)
{
	GElf_Shdr sh;
	Elf_Scn *scn = cs_symtab(e, &sh), *strscn;
	Elf_Data *d, *sd;
	size_t nsym, k = 0, nref = 0;
	struct cs_sym *v;
	struct cs_ref *r, *tmp;
	int sorted = 1;

	if (scn == NULL || (d = elf_getdata(scn, NULL)) == NULL || sh.sh_entsize == 0 ||
	    (strscn = elf_getscn(e, sh.sh_link)) == NULL ||
	    (sd = elf_getdata(strscn, NULL)) == NULL || sd->d_buf == NULL) {
		fl_errf(err, errlen, "no symbol table (stripped?)");
		return -1;
	}
	nsym = sh.sh_size / sh.sh_entsize;
	v = fl_bigmap(nsym, sizeof(*v));
	r = fl_bigmap(nsym, sizeof(*r));
	tmp = fl_bigmap(nsym, sizeof(*tmp));
	if (v == NULL || r == NULL || tmp == NULL) {
		fl_bigmap_free(v, nsym, sizeof(*v));
		fl_bigmap_free(r, nsym, sizeof(*r));
		fl_bigmap_free(tmp, nsym, sizeof(*tmp));
		fl_errf(err, errlen, "out of memory for %zu symbols", nsym);
		return -1;
	}
	/* Names straight from the string table's bytes (bounds-checked here) rather than
	 * through elf_strptr, once per symbol. */
	const char *strs = sd->d_buf;
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym s;
		uint64_t sk;

		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_name >= sd->d_size ||
		    (sk = cs_name_key(strs + s.st_name, sd->d_size - s.st_name)) == UINT64_MAX)
			continue;
		if ((sk & 3) == CS_MAIN) {
			if (k > 0 && s.st_value < v[k - 1].addr)
				sorted = 0;
			r[nref++] = (struct cs_ref){ sk, (uint32_t)k };
			v[k++] = (struct cs_sym){ s.st_value, (uint32_t)s.st_size, 0 };
		} else {
			r[nref++] = (struct cs_ref){ sk, (uint32_t)s.st_size };
		}
	}
	cs_radix(r, tmp, nref);
	cs_join(r, nref, v);
	fl_bigmap_free(r, nsym, sizeof(*r));
	fl_bigmap_free(tmp, nsym, sizeof(*tmp));
	/* The linker writes a shard's symbols in address order; sort only if it did not. */
	if (!sorted)
		qsort(v, k, sizeof(*v), cs_by_addr);
	*out = v;
	*nout = k;
	*ncap = nsym;
	return 0;
}

/* One shared object holding generated functions: the library, or one part of a library
 * split over several objects (configure --lib-parts), whose symbols are read as needed. */
struct cs_obj {
	uintptr_t lo, hi;     /* run-time addresses of its first and past its last main symbol */
	uintptr_t bias;       /* load bias: run-time address less file address */
	struct cs_sym *v;     /* k main symbols, by file address (cap allocated) */
	size_t k, cap;
	size_t next;          /* index after the last match: registry rows mostly follow
	                         address order, so the next row is usually there */
};

/* Read the symbols of object path, loaded at bias, into o. */
static int cs_obj_read(struct cs_obj *o, const char *path, uintptr_t bias, char *err,
	size_t errlen)
{
	char why[256] = "";
	Elf *e;
	int rc = -1, fd = open(path, O_RDONLY);

	memset(o, 0, sizeof(*o));
	o->bias = bias;
	if (fd < 0) {
		fl_errf(err, errlen, "%s: cannot open for its symbols", path);
		return -1;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL)
		fl_errf(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
	else if (cs_collect(e, &o->v, &o->k, &o->cap, why, sizeof(why)) != 0)
		fl_errf(err, errlen, "%s: %s", path, why);
	else if (o->k == 0)
		fl_errf(err, errlen, "%s: no fl_P symbols", path);
	else {
		o->lo = bias + (uintptr_t)o->v[0].addr;
		o->hi = bias + (uintptr_t)o->v[o->k - 1].addr + 1;
		rc = 0;
	}
	if (rc != 0 && o->v != NULL) {
		fl_bigmap_free(o->v, o->cap, sizeof(*o->v));
		o->v = NULL;
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The object holding run-time address a among objs (*nobjs, room for FL_CS_MAX_OBJS),
 * reading a new one's symbols when a lies in none: dladdr1 names the object and its load
 * bias, so a split library's parts are found wherever the dynamic linker put them. */
#define FL_CS_MAX_OBJS 64
static struct cs_obj *cs_obj_of(struct cs_obj *objs, size_t *nobjs, uintptr_t a, char *err,
	size_t errlen)
{
	Dl_info info;
	struct link_map *lm = NULL;

	for (size_t i = 0; i < *nobjs; i++)
		if (a >= objs[i].lo && a < objs[i].hi)
			return &objs[i];
	if (dladdr1((void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) == 0 || lm == NULL) {
		fl_errf(err, errlen, "address %#lx is in no loaded object", (unsigned long)a);
		return NULL;
	}
	for (size_t i = 0; i < *nobjs; i++)
		if (objs[i].bias == (uintptr_t)lm->l_addr)   /* read: a is before its first symbol */
			return &objs[i];
	if (*nobjs == FL_CS_MAX_OBJS) {
		fl_errf(err, errlen, "%s: more than %d objects hold generated functions",
			lm->l_name, FL_CS_MAX_OBJS);
		return NULL;
	}
	if (cs_obj_read(&objs[*nobjs], lm->l_name, (uintptr_t)lm->l_addr, err, errlen) != 0)
		return NULL;
	return &objs[(*nobjs)++];
}

int fl_lib_code_sizes(const struct fl_lib *lib, uint32_t *hot, uint32_t *cold, char *err,
	size_t errlen)
{
	struct cs_obj objs[FL_CS_MAX_OBJS], *o = NULL;
	size_t nobjs = 0;
	int rc = 0;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		fl_errf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	/* Entries of one object are contiguous in the registry: one lookup per object. */
	for (size_t i = 0; i < lib->n; i++) {
		uintptr_t a = (uintptr_t)lib->tab[i].fn;

		if (o == NULL || a < o->lo || a >= o->hi)
			o = cs_obj_of(objs, &nobjs, a, err, errlen);
		if (o == NULL) {
			rc = -1;
			break;
		}
		struct cs_sym key = { (uint64_t)(a - o->bias), 0, 0 };
		const struct cs_sym *m = o->next < o->k && o->v[o->next].addr == key.addr ?
			&o->v[o->next] : bsearch(&key, o->v, o->k, sizeof(*o->v), cs_by_addr);
		if (m == NULL) {
			fl_errf(err, errlen, "%s: registry entry %zu (pattern %u variant %u copy %u) "
				"has no fl_P symbol", lib->path, i, lib->tab[i].pattern,
				lib->tab[i].variant, lib->tab[i].copy);
			rc = -1;
			break;
		}
		hot[i] = m->hot;
		cold[i] = m->cold;
		o->next = (size_t)(m - o->v) + 1;
	}
	for (size_t i = 0; i < nobjs; i++)
		fl_bigmap_free(objs[i].v, objs[i].cap, sizeof(*objs[i].v));
	return rc;
}

/* The reuse object, or "null". */
static void cs_reuse_json(const struct fl_plan *p, const uint32_t *hot, int want,
	char *buf, size_t len, char *err, size_t errlen)
{
	struct fl_plan_reuse r;

	if (!want || fl_plan_reuse(p, hot, &r, err, errlen) != 0) {
		snprintf(buf, len, "null");
		return;
	}
	snprintf(buf, len, "{\"calls\": %llu, \"percentiles\": [50, 90, 99], \"functions\": "
		"[%llu, %llu, %llu], \"hot_bytes\": [%llu, %llu, %llu]}",
		(unsigned long long)r.calls, (unsigned long long)r.fns[0],
		(unsigned long long)r.fns[1], (unsigned long long)r.fns[2],
		(unsigned long long)r.bytes[0], (unsigned long long)r.bytes[1],
		(unsigned long long)r.bytes[2]);
}

int fl_plan_report_json(const struct fl_plan *p, const struct fl_lib *lib, int want_reuse,
	char *json, size_t len, char *err, size_t errlen)
{
	uint32_t *hot = malloc(lib->n * sizeof(*hot)), *cold = malloc(lib->n * sizeof(*cold));
	char reuse[512];
	uint64_t h, c;
	int w;

	if (hot == NULL || cold == NULL) {
		free(hot);
		free(cold);
		fl_errf(err, errlen, "out of memory for %zu code sizes", lib->n);
		return -1;
	}
	if (fl_lib_code_sizes(lib, hot, cold, err, errlen) != 0) {
		free(hot);
		free(cold);
		return -1;
	}
	h = fl_plan_code_bytes(p, hot);
	c = fl_plan_code_bytes(p, cold);
	cs_reuse_json(p, hot, want_reuse, reuse, sizeof(reuse), err, errlen);
	w = snprintf(json, len, "{\"dispatch\": \"%s\", \"zipf_alpha\": %.6g, "
		"\"active_copies\": %u, \"active_functions\": %zu, \"lap_calls\": %zu, "
		"\"code_bytes\": %llu, \"code_bytes_hot\": %llu, \"code_bytes_cold\": %llu, "
		"\"reuse\": %s}", fl_dispatch_name(p->dispatch), p->zipf_alpha,
		p->active_copies, p->nfns, p->nseq, (unsigned long long)(h + c),
		(unsigned long long)h, (unsigned long long)c, reuse);
	free(hot);
	free(cold);
	if (w < 0 || (size_t)w >= len) {
		fl_errf(err, errlen, "plan report longer than %zu bytes", len);
		return -1;
	}
	return 0;
}

/* Active functions for a footprint in code bytes (hot + cold). */
static int cs_functions_for(const struct fl_lib *lib, const struct fl_plan_opts *o,
	uint64_t bytes, uint32_t *nfns, char *err, size_t errlen)
{
	uint32_t *hot = malloc(lib->n * sizeof(*hot)), *cold = malloc(lib->n * sizeof(*cold));
	int rc = -1;

	if (hot == NULL || cold == NULL)
		fl_errf(err, errlen, "out of memory for %zu code sizes", lib->n);
	else if (fl_lib_code_sizes(lib, hot, cold, err, errlen) == 0) {
		for (size_t i = 0; i < lib->n; i++)
			hot[i] += cold[i];
		rc = fl_plan_functions_for_bytes(lib->tab, lib->n, o, hot, bytes, nfns, err,
			errlen);
	}
	free(hot);
	free(cold);
	return rc;
}

int fl_plan_from_knobs(struct fl_plan *p, const struct fl_lib *lib,
	const struct fl_plan_knobs *k, char *err, size_t errlen)
{
	struct fl_plan_opts o = { .seed = k->seed, .active_copies = (uint32_t)k->active_copies,
		.active_functions = (uint32_t)k->active_functions, .zipf_alpha = k->zipf_alpha };

	memset(p, 0, sizeof(*p));
	if (fl_dispatch_parse(k->dispatch, &o.dispatch) != 0) {
		fl_errf(err, errlen, "--dispatch %s: not flat or zipf", k->dispatch);
		return -1;
	}
	if (k->footprint_bytes && k->active_functions) {
		fl_errf(err, errlen, "--active-functions and --footprint-bytes both given");
		return -1;
	}
	if (k->footprint_bytes &&
	    cs_functions_for(lib, &o, k->footprint_bytes, &o.active_functions, err, errlen) != 0)
		return -1;
	return fl_plan_build(p, lib->tab, lib->n, &o, err, errlen);
}
