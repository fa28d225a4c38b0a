/* patmap.c: pattern of each code address of a generated library, from its symbol table. */
#include "patmap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

/* The 0-based pattern of a generated function's symbol (fl_PNN_..., its .cold and .part.K
 * parts too: they share the prefix), or FM_PAT_SHARED for any other name. */
static unsigned pm_pattern_of_name(const char *s, size_t room)
{
	if (room < 7 || strncmp(s, "fl_P", 4) != 0 || s[4] < '0' || s[4] > '9' ||
	    s[5] < '0' || s[5] > '9' || s[6] != '_')
		return FM_PAT_SHARED;
	unsigned id = (unsigned)(s[4] - '0') * 10 + (unsigned)(s[5] - '0');
	return id >= 1 && id <= FM_PAT_MAX ? id - 1 : FM_PAT_SHARED;
}

static int pm_by_lo(const void *a, const void *b)
{
	const struct fm_pat_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Collect the pattern functions of e's SHT_SYMTAB into pm. */
static int pm_collect(Elf *e, struct fm_patmap *pm, char *err, size_t errlen)
{
	GElf_Shdr sh;
	Elf_Scn *scn = NULL, *strscn;
	Elf_Data *d, *sd;

	for (Elf_Scn *s = elf_nextscn(e, NULL); s && !scn; s = elf_nextscn(e, s))
		if (gelf_getshdr(s, &sh) && sh.sh_type == SHT_SYMTAB)
			scn = s;
	if (scn == NULL || (d = elf_getdata(scn, NULL)) == NULL || sh.sh_entsize == 0 ||
	    (strscn = elf_getscn(e, sh.sh_link)) == NULL ||
	    (sd = elf_getdata(strscn, NULL)) == NULL || sd->d_buf == NULL) {
		snprintf(err, errlen, "no symbol table (stripped?)");
		return -1;
	}
	size_t nsym = sh.sh_size / sh.sh_entsize;
	pm->r = malloc((nsym ? nsym : 1) * sizeof *pm->r);
	if (pm->r == NULL) {
		snprintf(err, errlen, "out of memory for %zu symbols", nsym);
		return -1;
	}
	const char *strs = sd->d_buf;
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_size == 0 || s.st_name >= sd->d_size)
			continue;
		unsigned pat = pm_pattern_of_name(strs + s.st_name, sd->d_size - s.st_name);
		if (pat != FM_PAT_SHARED)
			pm->r[pm->n++] = (struct fm_pat_range){ s.st_value, s.st_value + s.st_size,
				pat };
	}
	if (pm->n == 0) {
		snprintf(err, errlen, "no fl_PNN_ function symbols: not a generated library");
		return -1;
	}
	qsort(pm->r, pm->n, sizeof *pm->r, pm_by_lo);
	return 0;
}

int fm_patmap_load(struct fm_patmap *pm, const char *path, char *err, size_t errlen)
{
	char why[200] = "";
	int rc = -1, fd;

	memset(pm, 0, sizeof *pm);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	if ((fd = open(path, O_RDONLY)) < 0) {
		snprintf(err, errlen, "%s: cannot open for its symbols", path);
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF)
		snprintf(err, errlen, "%s: not an ELF object", path);
	else if (pm_collect(e, pm, why, sizeof why) != 0)
		snprintf(err, errlen, "%s: %s", path, why);
	else
		rc = 0;
	if (e)
		elf_end(e);
	close(fd);
	if (rc != 0)
		fm_patmap_free(pm);
	return rc;
}

unsigned fm_patmap_of(const struct fm_patmap *pm, uint64_t a)
{
	size_t lo = 0, hi = pm->n;

	/* The last range starting at or below a, if a lies inside it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pm->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < pm->r[lo - 1].hi ? pm->r[lo - 1].pat : FM_PAT_SHARED;
}

void fm_patmap_free(struct fm_patmap *pm)
{
	free(pm->r);
	memset(pm, 0, sizeof *pm);
}
