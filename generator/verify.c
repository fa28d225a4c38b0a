/* verify.c: the uniqueness check: generated functions' bytes, relocations masked, compared. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <jansson.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osfile.h"
#include "util.h"
#include "verify.h"

#define VERIFY_NAME_LEN 18u          /* strlen("fl_P01_v000_c00000") */
#define VERIFY_MAX_GROUPS 20u        /* duplicate groups listed in the manifest */
#define VERIFY_MAX_GROUP_NAMES 20u   /* symbol names listed per group */
#define VERIFY_PATTERN_IDS 100u      /* two-digit pattern ids: P00..P99 */
#define VERIFY_WIDTH_UNKNOWN (-1)    /* reloc_width: a type this check does not know */

/* A run of bytes of one function inside its section. */
struct vpart {
	size_t file;           /* index of the library file (a part of a split library) */
	size_t shndx;          /* section holding the bytes */
	uint64_t off;          /* section-relative start */
	uint64_t size;         /* bytes, st_size */
	const uint8_t *raw;    /* the bytes as linked, inside libelf's section data */
	uint8_t *masked;       /* NULL until a relocation lands here, then a copy of raw with
	                          every relocated field zeroed */
};

/* A generated function (or a fragment split off one, in the fragment list). */
struct vfn {
	const char *name;             /* symbol name, in libelf's string table */
	unsigned pattern;             /* NN of fl_PNN */
	struct vpart main;            /* the symbol's own bytes */
	const struct vfn *frags;      /* nfrags fragments of this function, in name order */
	size_t nfrags;                /* entries in frags */
};

/* One open library file: the library, or one part of a library split over several
 * shared objects (configure --lib-parts). */
struct vfile {
	char *path;                /* file path */
	int fd;                    /* open file, or -1 */
	Elf *elf;                  /* libelf handle, or NULL */
	GElf_Ehdr ehdr;            /* ELF header */
};

/* One verification: the open library files and what was found in them. */
struct verify_run {
	const char *path;          /* the lib_path argument, as given */
	char *err;                 /* caller's message buffer, or NULL */
	size_t errlen;             /* bytes in err */
	struct vfile *files;       /* nfiles library files */
	size_t nfiles;
	size_t cur;                /* index of the file being read; messages name it */
	struct vfn *fns;           /* nfns functions */
	size_t nfns, capfns;       /* used and allocated entries of fns */
	struct vfn *frags;         /* nfrags fragments, sorted by name once attached */
	size_t nfrags, capfrags;   /* used and allocated entries of frags */
	uint64_t nrelocs;          /* relocations found inside functions */
	size_t nattached;          /* fragments attached to a function */
};

/* A run of equal functions in a sorted pointer array. */
struct vgroup {
	size_t first;   /* index of the first member */
	size_t count;   /* members */
};

/* Fill err with "path: message" and return -1, so callers can `return verify_fail(...)`. */
static int verify_fail(struct verify_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int verify_fail(struct verify_run *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->err == NULL || r->errlen == 0)
		return -1;
	n = snprintf(r->err, r->errlen, "%s: ",
		r->cur < r->nfiles ? r->files[r->cur].path : r->path);
	if (n < 0 || (size_t)n >= r->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Whether s[0..n) are all decimal digits; their value goes to *v. */
static int verify_digits(const char *s, size_t n, unsigned *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10u + (unsigned)(s[i] - '0');
	}
	return 1;
}

/* Classify a symbol name: 1 for fl_PNN_vVVV_cCCCCC exactly, 2 for such a name followed by
 * '.' and a suffix (a fragment GCC split off: .cold, .part.0), 0 otherwise. *pattern gets
 * NN when the name matches. */
static int verify_parse_name(const char *s, unsigned *pattern)
{
	unsigned v;

	if (strncmp(s, "fl_P", 4) != 0 || !verify_digits(s + 4, 2, pattern) ||
	    strncmp(s + 6, "_v", 2) != 0 || !verify_digits(s + 8, 3, &v) ||
	    strncmp(s + 11, "_c", 2) != 0 || !verify_digits(s + 13, 5, &v))
		return 0;
	if (s[VERIFY_NAME_LEN] == '\0')
		return 1;
	return s[VERIFY_NAME_LEN] == '.' ? 2 : 0;
}

/* Bytes patched by a relocation of type type on machine, or VERIFY_WIDTH_UNKNOWN. Marker
 * relocations that patch nothing (NONE, TLSDESC_CALL) are 0. */
static int verify_reloc_width(unsigned machine, unsigned type)
{
	/* x86-64 by type number, from the psABI; -1 where a type never appears in code. */
	static const signed char x86_64[] = {
		0, 8, 4, 4, 4, -1, 8, 8, 8, 4,      /* NONE 64 PC32 GOT32 PLT32 COPY GLOB_DAT JUMP_SLOT RELATIVE GOTPCREL */
		4, 4, 2, 2, 1, 1, 8, 8, 8, 4,       /* 32 32S 16 PC16 8 PC8 DTPMOD64 DTPOFF64 TPOFF64 TLSGD */
		4, 4, 4, 4, 8, 8, 4, 8, 8, 8,       /* TLSLD DTPOFF32 GOTTPOFF TPOFF32 PC64 GOTOFF64 GOTPC32 GOT64 GOTPCREL64 GOTPC64 */
		8, 8, 4, 8, 4, 0, 16, 8, 8, 4,      /* GOTPLT64 PLTOFF64 SIZE32 SIZE64 GOTPC32_TLSDESC TLSDESC_CALL TLSDESC IRELATIVE RELATIVE64 PC32_BND */
		4, 4, 4, 4, 4, 4,                   /* PLT32_BND GOTPCRELX REX_GOTPCRELX CODE_4_GOTPCRELX CODE_4_GOTTPOFF CODE_4_GOTPC32_TLSDESC */
	};

	switch (machine) {
	case EM_X86_64:
		return type < sizeof(x86_64) ? x86_64[type] : VERIFY_WIDTH_UNKNOWN;
	case EM_386:
		if (type == 0)
			return 0;
		if (type == 20 || type == 21)      /* R_386_16, R_386_PC16 */
			return 2;
		if (type == 22 || type == 23)      /* R_386_8, R_386_PC8 */
			return 1;
		return type <= 43 ? 4 : VERIFY_WIDTH_UNKNOWN;
	case EM_AARCH64:
		if (type == 0 || type == 256)      /* NONE */
			return 0;
		if (type == 257 || type == 260)    /* ABS64, PREL64 */
			return 8;
		if (type == 259 || type == 262)    /* ABS16, PREL16 */
			return 2;
		if (type < 1024)                   /* ABS32, PREL32 and every instruction field */
			return 4;
		return type <= 1032 ? 8 : VERIFY_WIDTH_UNKNOWN;   /* dynamic: data words */
	default:
		return VERIFY_WIDTH_UNKNOWN;
	}
}

/* Open the current file and read its ELF header. ELF_C_READ_MMAP: section bytes are used
 * in place, not copied. */
static int verify_open(struct verify_run *r)
{
	struct vfile *f = &r->files[r->cur];

	if (elf_version(EV_CURRENT) == EV_NONE)
		return verify_fail(r, "libelf: %s", elf_errmsg(-1));
	f->fd = open(f->path, O_RDONLY);
	if (f->fd < 0)
		return verify_fail(r, "open: %s", strerror(errno));
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (f->elf == NULL)
		return verify_fail(r, "libelf: %s", elf_errmsg(-1));
	if (elf_kind(f->elf) != ELF_K_ELF)
		return verify_fail(r, "not an ELF file");
	if (gelf_getehdr(f->elf, &f->ehdr) == NULL)
		return verify_fail(r, "bad ELF header: %s", elf_errmsg(-1));
	return 0;
}

/* Offset of address addr inside section shdr of the current file: st_value and r_offset
 * are addresses in a linked file and section offsets in a relocatable object. */
static uint64_t verify_sec_off(const struct verify_run *r, const GElf_Shdr *shdr, uint64_t addr)
{
	return r->files[r->cur].ehdr.e_type == ET_REL ? addr : addr - shdr->sh_addr;
}

/* Locate symbol sym's bytes: fill part from its section's data. */
static int verify_sym_part(struct verify_run *r, const char *name, const GElf_Sym *sym,
	size_t shndx, struct vpart *part)
{
	Elf_Scn *scn = elf_getscn(r->files[r->cur].elf, shndx);
	GElf_Shdr shdr;
	Elf_Data *d;

	if (scn == NULL || gelf_getshdr(scn, &shdr) == NULL)
		return verify_fail(r, "%s: bad section index %zu", name, shndx);
	if (shdr.sh_type == SHT_NOBITS)
		return verify_fail(r, "%s: section %zu has no bytes in the file", name, shndx);
	d = elf_getdata(scn, NULL);
	if (d == NULL)
		return verify_fail(r, "%s: reading section %zu: %s", name, shndx, elf_errmsg(-1));
	part->file = r->cur;
	part->shndx = shndx;
	part->off = verify_sec_off(r, &shdr, sym->st_value);
	part->size = sym->st_size;
	if (part->off > d->d_size || part->size > d->d_size - part->off)
		return verify_fail(r, "%s: bytes [%#llx, +%llu) outside section %zu", name,
			(unsigned long long)sym->st_value, (unsigned long long)sym->st_size, shndx);
	part->raw = (const uint8_t *)d->d_buf + part->off;
	part->masked = NULL;
	return 0;
}

/* Append a function or fragment record. */
static struct vfn *verify_push(struct vfn **a, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*a = xrealloc(*a, *cap * sizeof(**a));
	}
	memset(&(*a)[*n], 0, sizeof(**a));
	return &(*a)[(*n)++];
}

/* The SHT_SYMTAB_SHNDX data belonging to symbol table symtab_idx, or NULL: only files with
 * more than 65279 sections need it. */
static Elf_Data *verify_xindex(struct verify_run *r, size_t symtab_idx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(r->files[r->cur].elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_SYMTAB_SHNDX &&
		    shdr.sh_link == symtab_idx)
			return elf_getdata(scn, NULL);
	return NULL;
}

/* Walk the current file's .symtab and record every generated function and fragment. */
static int verify_collect(struct verify_run *r)
{
	Elf *elf = r->files[r->cur].elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *syms, *xdata;
	size_t nsyms, had = r->nfns;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_SYMTAB)
			break;
	if (scn == NULL)
		return verify_fail(r, "no .symtab (stripped?): cannot find the generated functions");
	syms = elf_getdata(scn, NULL);
	if (syms == NULL || shdr.sh_entsize == 0)
		return verify_fail(r, "reading .symtab: %s", elf_errmsg(-1));
	xdata = verify_xindex(r, elf_ndxscn(scn));
	nsyms = shdr.sh_size / shdr.sh_entsize;
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		const char *name;
		unsigned pattern;
		size_t shndx;
		int kind;
		struct vfn *f;

		if (gelf_getsymshndx(syms, xdata, (int)i, &sym, &xndx) == NULL)
			return verify_fail(r, "reading symbol %zu: %s", i, elf_errmsg(-1));
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (name == NULL || (kind = verify_parse_name(name, &pattern)) == 0)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		if (shndx == SHN_UNDEF || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			return verify_fail(r, "%s: not defined in a section", name);
		if (kind == 1)
			f = verify_push(&r->fns, &r->nfns, &r->capfns);
		else
			f = verify_push(&r->frags, &r->nfrags, &r->capfrags);
		f->name = name;
		f->pattern = pattern;
		if (verify_sym_part(r, name, &sym, shndx, &f->main) < 0)
			return -1;
	}
	if (r->nfns == had)
		return verify_fail(r, "no fl_PNN_vVVV_cCCCCC function symbols in .symtab "
			"(not a frontload extractor library?)");
	return 0;
}

static int verify_cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct vfn *)a)->name, ((const struct vfn *)b)->name);
}

/* Give each function its fragments: with both lists sorted by name, the fragments of one
 * function ("name.suffix") are contiguous and follow the order a merge walk visits. A
 * fragment whose function is missing stays unattached (and uncompared). */
static void verify_attach_frags(struct verify_run *r)
{
	size_t j = 0;

	qsort(r->fns, r->nfns, sizeof(*r->fns), verify_cmp_name);
	if (r->nfrags == 0)
		return;
	qsort(r->frags, r->nfrags, sizeof(*r->frags), verify_cmp_name);
	for (size_t i = 0; i < r->nfns && j < r->nfrags; i++) {
		struct vfn *f = &r->fns[i];

		while (j < r->nfrags && strncmp(r->frags[j].name, f->name, VERIFY_NAME_LEN) < 0)
			j++;
		f->frags = &r->frags[j];
		while (j < r->nfrags && strncmp(r->frags[j].name, f->name, VERIFY_NAME_LEN) == 0) {
			f->nfrags++;
			j++;
		}
		r->nattached += f->nfrags;
	}
}

/* Order parts by (file, section, start) for the relocation search. */
static int verify_cmp_part(const void *a, const void *b)
{
	const struct vpart *x = *(const struct vpart *const *)a;
	const struct vpart *y = *(const struct vpart *const *)b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

/* The part of section shndx of file whose start is the greatest at or below off, or NULL. */
static struct vpart *verify_find_part(struct vpart **parts, size_t n, size_t file, size_t shndx,
	uint64_t off)
{
	size_t lo = 0, hi = n;   /* answer in [lo - 1, hi): parts[0..lo) are <= (file, shndx, off) */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct vpart *p = parts[mid];

		if (p->file < file || (p->file == file && (p->shndx < shndx ||
		    (p->shndx == shndx && p->off <= off))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || parts[lo - 1]->file != file || parts[lo - 1]->shndx != shndx)
		return NULL;
	return parts[lo - 1];
}

/* Zero the relocated field [off, off + width) of part p (clipped to the part), making the
 * masked copy on first use. */
static void verify_mask(struct vpart *p, uint64_t off, int width)
{
	uint64_t end = off + (uint64_t)width;

	if (end > p->off + p->size)
		end = p->off + p->size;
	if (p->masked == NULL) {
		p->masked = xmalloc(p->size);
		memcpy(p->masked, p->raw, p->size);
	}
	memset(p->masked + (off - p->off), 0, end - off);
}

/* One relocation section: zero every field it patches inside a function or fragment. */
static int verify_mask_section(struct verify_run *r, Elf_Scn *scn, const GElf_Shdr *shdr,
	struct vpart **parts, size_t nparts)
{
	const struct vfile *f = &r->files[r->cur];
	Elf_Scn *target = elf_getscn(f->elf, shdr->sh_info);
	GElf_Shdr tshdr;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (target == NULL || gelf_getshdr(target, &tshdr) == NULL || d == NULL)
		return verify_fail(r, "reading relocation section %zu: %s", elf_ndxscn(scn),
			elf_errmsg(-1));
	n = shdr->sh_entsize ? shdr->sh_size / shdr->sh_entsize : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela rela;
		GElf_Rel rel;
		uint64_t addr, type, off;
		struct vpart *p;
		int width;

		if (shdr->sh_type == SHT_RELA) {
			if (gelf_getrela(d, (int)i, &rela) == NULL)
				return verify_fail(r, "reading relocation %zu: %s", i, elf_errmsg(-1));
			addr = rela.r_offset;
			type = GELF_R_TYPE(rela.r_info);
		} else {
			if (gelf_getrel(d, (int)i, &rel) == NULL)
				return verify_fail(r, "reading relocation %zu: %s", i, elf_errmsg(-1));
			addr = rel.r_offset;
			type = GELF_R_TYPE(rel.r_info);
		}
		off = verify_sec_off(r, &tshdr, addr);
		p = verify_find_part(parts, nparts, r->cur, shdr->sh_info, off);
		if (p == NULL || off >= p->off + p->size)
			continue;
		width = verify_reloc_width(f->ehdr.e_machine, (unsigned)type);
		if (width == VERIFY_WIDTH_UNKNOWN)
			return verify_fail(r, "relocation type %u (ELF machine %u) at %#llx: unknown width",
				(unsigned)type, f->ehdr.e_machine, (unsigned long long)addr);
		r->nrelocs++;
		if (width > 0)
			verify_mask(p, off, width);
	}
	return 0;
}

/* Zero the relocated fields of every function and fragment, from all SHT_RELA / SHT_REL
 * sections of every file that apply to a section (sh_info != 0; --emit-relocs keeps
 * .rela.text). */
static int verify_mask_relocs(struct verify_run *r)
{
	size_t nparts = r->nfns + r->nfrags;
	struct vpart **parts = xcalloc(nparts, sizeof(*parts));
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int rc = 0;

	for (size_t i = 0; i < r->nfns; i++)
		parts[i] = &r->fns[i].main;
	for (size_t i = 0; i < r->nfrags; i++)
		parts[r->nfns + i] = &r->frags[i].main;
	qsort(parts, nparts, sizeof(*parts), verify_cmp_part);
	for (r->cur = 0; rc == 0 && r->cur < r->nfiles; r->cur++) {
		scn = NULL;
		while (rc == 0 && (scn = elf_nextscn(r->files[r->cur].elf, scn)) != NULL) {
			if (gelf_getshdr(scn, &shdr) == NULL)
				rc = verify_fail(r, "reading section header: %s", elf_errmsg(-1));
			else if ((shdr.sh_type == SHT_RELA || shdr.sh_type == SHT_REL) &&
				 shdr.sh_info != 0)
				rc = verify_mask_section(r, scn, &shdr, parts, nparts);
		}
	}
	free(parts);
	return rc;
}

/* Compare two parts by size, then bytes (masked or raw). */
static int verify_cmp_bytes(const struct vpart *x, const struct vpart *y, int masked)
{
	const uint8_t *a, *b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->size == 0)
		return 0;
	a = masked && x->masked ? x->masked : x->raw;
	b = masked && y->masked ? y->masked : y->raw;
	return memcmp(a, b, x->size);
}

/* Compare two functions' code: fragment count, then the main part, then each fragment. */
static int verify_cmp_code(const struct vfn *x, const struct vfn *y, int masked)
{
	int c;

	if (x->nfrags != y->nfrags)
		return x->nfrags < y->nfrags ? -1 : 1;
	c = verify_cmp_bytes(&x->main, &y->main, masked);
	for (size_t i = 0; c == 0 && i < x->nfrags; i++)
		c = verify_cmp_bytes(&x->frags[i].main, &y->frags[i].main, masked);
	return c;
}

/* qsort orders over function pointers: code first, name last, so equal functions sit
 * together in name order and the result does not depend on qsort's stability. */
static int verify_cmp_masked(const void *a, const void *b)
{
	const struct vfn *x = *(const struct vfn *const *)a, *y = *(const struct vfn *const *)b;
	int c = verify_cmp_code(x, y, 1);

	return c ? c : strcmp(x->name, y->name);
}

static int verify_cmp_raw(const void *a, const void *b)
{
	const struct vfn *x = *(const struct vfn *const *)a, *y = *(const struct vfn *const *)b;
	int c = verify_cmp_code(x, y, 0);

	return c ? c : strcmp(x->name, y->name);
}

/* Sort fns by code (masked or raw) and find the runs of equal code. Returns the number of
 * distinct codes; *groups gets the runs longer than 1 (caller frees), *ngroups their
 * count and *ndup their members. */
static size_t verify_groups(const struct vfn **fns, size_t n, int masked,
	struct vgroup **groups, size_t *ngroups, size_t *ndup)
{
	size_t distinct = 0, cap = 0;

	qsort(fns, n, sizeof(*fns), masked ? verify_cmp_masked : verify_cmp_raw);
	*groups = NULL;
	*ngroups = 0;
	*ndup = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && verify_cmp_code(fns[i], fns[j], masked) == 0; j++)
			;
		distinct++;
		if (j - i < 2)
			continue;
		if (*ngroups == cap) {
			cap = cap ? cap * 2 : 16;
			*groups = xrealloc(*groups, cap * sizeof(**groups));
		}
		(*groups)[(*ngroups)++] = (struct vgroup){ i, j - i };
		*ndup += j - i;
	}
	return distinct;
}

static int verify_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The "verify" object's size and per-pattern members. */
static void verify_json_sizes(const struct verify_run *r, json_t *v)
{
	uint64_t bytes[VERIFY_PATTERN_IDS] = { 0 }, count[VERIFY_PATTERN_IDS] = { 0 }, total = 0;
	uint64_t *sizes = xcalloc(r->nfns, sizeof(*sizes));
	json_t *jb = json_object(), *jc = json_object(), *js = json_object();
	char key[8];

	for (size_t i = 0; i < r->nfns; i++) {
		sizes[i] = r->fns[i].main.size;
		bytes[r->fns[i].pattern] += sizes[i];
		count[r->fns[i].pattern]++;
		total += sizes[i];
	}
	for (unsigned p = 0; p < VERIFY_PATTERN_IDS; p++) {
		if (count[p] == 0)
			continue;
		snprintf(key, sizeof(key), "P%02u", p);
		json_object_set_new(jb, key, json_integer((json_int_t)bytes[p]));
		json_object_set_new(jc, key, json_integer((json_int_t)count[p]));
	}
	qsort(sizes, r->nfns, sizeof(*sizes), verify_cmp_u64);
	json_object_set_new(js, "min", json_integer((json_int_t)sizes[0]));
	json_object_set_new(js, "median", json_integer((json_int_t)sizes[r->nfns / 2]));
	json_object_set_new(js, "max", json_integer((json_int_t)sizes[r->nfns - 1]));
	json_object_set_new(v, "text_bytes", json_integer((json_int_t)total));
	json_object_set_new(v, "text_bytes_per_pattern", jb);
	json_object_set_new(v, "functions_per_pattern", jc);
	json_object_set_new(v, "function_size", js);
	free(sizes);
}

/* A duplicate group with its first member's name: groups are listed in name order, which
 * a plain qsort over these pairs gives without a comparator that needs context. */
struct vgroup_ref {
	const char *name;            /* first member's name */
	const struct vgroup *g;      /* the group */
};

static int verify_cmp_group_ref(const void *a, const void *b)
{
	return strcmp(((const struct vgroup_ref *)a)->name, ((const struct vgroup_ref *)b)->name);
}

/* Build the "verify" object: counts, the first VERIFY_MAX_GROUPS duplicate groups, sizes.
 * Returns 1 when duplicates exist, else 0. */
static int verify_analyse(struct verify_run *r, json_t *v)
{
	const struct vfn **fns = xcalloc(r->nfns, sizeof(*fns));
	struct vgroup *groups, *raw_groups;
	struct vgroup_ref *refs;
	size_t ngroups, ndup, nraw_groups, nraw, unique;
	json_t *jgroups = json_array();

	for (size_t i = 0; i < r->nfns; i++)
		fns[i] = &r->fns[i];
	verify_groups(fns, r->nfns, 0, &raw_groups, &nraw_groups, &nraw);
	free(raw_groups);
	unique = verify_groups(fns, r->nfns, 1, &groups, &ngroups, &ndup);
	refs = xcalloc(ngroups, sizeof(*refs));
	for (size_t i = 0; i < ngroups; i++)
		refs[i] = (struct vgroup_ref){ fns[groups[i].first]->name, &groups[i] };
	qsort(refs, ngroups, sizeof(*refs), verify_cmp_group_ref);
	for (size_t i = 0; i < ngroups && i < VERIFY_MAX_GROUPS; i++) {
		const struct vgroup *g = refs[i].g;
		json_t *jg = json_object(), *names = json_array();

		for (size_t k = 0; k < g->count && k < VERIFY_MAX_GROUP_NAMES; k++)
			json_array_append_new(names, json_string(fns[g->first + k]->name));
		json_object_set_new(jg, "count", json_integer((json_int_t)g->count));
		json_object_set_new(jg, "symbols", names);
		json_array_append_new(jgroups, jg);
	}
	json_object_set_new(v, "library", json_string(r->path));
	json_object_set_new(v, "ok", json_boolean(ngroups == 0));
	json_object_set_new(v, "functions", json_integer((json_int_t)r->nfns));
	json_object_set_new(v, "unique", json_integer((json_int_t)unique));
	json_object_set_new(v, "duplicate_functions", json_integer((json_int_t)ndup));
	json_object_set_new(v, "duplicate_groups", jgroups);
	json_object_set_new(v, "duplicate_groups_total", json_integer((json_int_t)ngroups));
	json_object_set_new(v, "raw_identical", json_integer((json_int_t)nraw));
	json_object_set_new(v, "relocations_masked", json_integer((json_int_t)r->nrelocs));
	json_object_set_new(v, "fragments", json_integer((json_int_t)r->nattached));
	verify_json_sizes(r, v);
	free(refs);
	free(groups);
	free(fns);
	return ngroups > 0;
}

/* Read manifest_in (or start from {}), set "verify" to v, and write manifest_out
 * atomically (osfile.h), so a failed write never leaves half a manifest. */
static int verify_write_manifest(struct verify_run *r, const char *manifest_in,
	const char *manifest_out, json_t *v)
{
	json_error_t je;
	json_t *root;
	int rc = -1;

	if (manifest_in != NULL) {
		root = json_load_file(manifest_in, 0, &je);
		if (root == NULL)
			return verify_fail(r, "manifest %s:%d: %s", manifest_in, je.line, je.text);
		if (!json_is_object(root)) {
			json_decref(root);
			return verify_fail(r, "manifest %s: not a JSON object", manifest_in);
		}
	} else {
		root = json_object();
	}
	json_object_set(root, "verify", v);
	struct fl_atomic_file af;
	char err[512];
	if (fl_atomic_open(&af, manifest_out, 0644, 0, err, sizeof(err)) != 0) {
		verify_fail(r, "manifest: %s", err);
		goto out;
	}
	int ok = json_dumpf(root, af.f, JSON_INDENT(1)) == 0 && fputc('\n', af.f) != EOF;
	if (fl_atomic_commit(&af, ok, err, sizeof(err)) != 0 || !ok) {
		verify_fail(r, "manifest %s: %s", manifest_out, ok ? err : "write failed");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* Open, collect, attach fragments, mask, compare, then write the manifest; the masked
 * copies and libelf's mapping live until the manifest is written (names point into it). */
int verify_library(const char *lib_path, const char *manifest_in, const char *manifest_out,
	char *err, size_t errlen)
{
	struct verify_run r = { .path = lib_path, .err = err, .errlen = errlen };
	json_t *v = NULL;
	int rc = 0;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	/* lib_path: one file, or a split library's parts separated by commas */
	for (const char *s = lib_path; ; s++) {
		size_t n = strcspn(s, ",");

		r.files = xrealloc(r.files, (r.nfiles + 1) * sizeof(*r.files));
		r.files[r.nfiles++] = (struct vfile){ .path = xstrndup(s, n), .fd = -1 };
		s += n;
		if (*s == '\0')
			break;
	}
	for (r.cur = 0; rc == 0 && r.cur < r.nfiles; r.cur++) {
		rc = verify_open(&r);
		if (rc == 0)
			rc = verify_collect(&r);
	}
	r.cur = r.nfiles;   /* messages from here on name the --lib argument */
	if (rc == 0) {
		verify_attach_frags(&r);
		rc = verify_mask_relocs(&r);
	}
	if (rc == 0) {
		v = json_object();
		rc = verify_analyse(&r, v);
		if (verify_write_manifest(&r, manifest_in, manifest_out, v) < 0)
			rc = -1;
	}
	json_decref(v);
	for (size_t i = 0; i < r.nfns; i++)
		free(r.fns[i].main.masked);
	for (size_t i = 0; i < r.nfrags; i++)
		free(r.frags[i].main.masked);
	free(r.fns);
	free(r.frags);
	for (size_t i = 0; i < r.nfiles; i++) {
		if (r.files[i].elf != NULL)
			elf_end(r.files[i].elf);
		if (r.files[i].fd >= 0)
			close(r.files[i].fd);
		free(r.files[i].path);
	}
	free(r.files);
	return rc;
}
