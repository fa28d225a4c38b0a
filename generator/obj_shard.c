/* obj_shard.c: fill a relocatable object with copies of assembled templates and write it
 * with libelf (obj_clone.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obj_clone.h"
#include "obj_tpl.h"
#include "util.h"

struct orel {
	uint64_t off;
	int64_t addend;
	uint32_t type;
	int32_t sym;            /* >= 0: that section's symbol; <= SYM_LOCAL(0): local symbol
	                           SYM_LOCAL(i); else undefined symbol -sym-1 */
};

#define SYM_EXT_MAX (1 << 24)   /* undefined symbols: -1 .. -SYM_EXT_MAX */
#define SYM_LOCAL(i) (-(int32_t)SYM_EXT_MAX - 1 - (int32_t)(i))

struct osec {
	char *name;
	uint32_t type;
	uint64_t flags, align, entsize;
	struct buf data;        /* SHT_NOBITS: only data.len counts */
	struct orel *rels;
	size_t nrels, relcap;
};

struct ofn {                   /* a local symbol: a function, or a label in a merge section */
	uint32_t name;          /* offset in strtab */
	int32_t sec;
	uint64_t value, size;
	unsigned char type;     /* STT_FUNC or STT_NOTYPE */
};

struct cie {                   /* a CIE already in a shard's .eh_frame */
	int32_t sec;
	uint64_t off, len;
};

struct obj_shard {
	struct cie *cies;
	size_t ncies;
	struct osec *secs;
	size_t nsecs;
	struct ofn *fns;
	size_t nfns, fncap;
	struct buf strtab;
	struct tpl_ext *exts;
	size_t nexts;
	size_t copies;
	int32_t registry;
	uint32_t label_name;    /* strtab offset of ".LM", the name of merge-section labels */
};

static int32_t osec_get(struct obj_shard *o, const char *name, uint32_t type, uint64_t flags,
                        uint64_t align, uint64_t entsize)
{
	for (size_t i = 0; i < o->nsecs; i++) {
		struct osec *s = &o->secs[i];
		if (s->type == type && s->flags == flags && s->entsize == entsize &&
		    !strcmp(s->name, name)) {
			if (align > s->align)
				s->align = align;
			return (int32_t)i;
		}
	}
	o->secs = xrealloc(o->secs, (o->nsecs + 1) * sizeof(*o->secs));
	struct osec *s = &o->secs[o->nsecs];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->type = type;
	s->flags = flags;
	s->align = align ? align : 1;
	s->entsize = entsize;
	return (int32_t)o->nsecs++;
}

static int32_t ext_get(struct obj_shard *o, const struct tpl_ext *x)
{
	for (size_t i = 0; i < o->nexts; i++)
		if (!strcmp(o->exts[i].name, x->name))
			return (int32_t)i;
	o->exts = xrealloc(o->exts, (o->nexts + 1) * sizeof(*o->exts));
	o->exts[o->nexts] = *x;
	o->exts[o->nexts].name = xstrdup(x->name);
	return (int32_t)o->nexts++;
}

static uint32_t add_sym(struct obj_shard *o, uint32_t name, int32_t sec, uint64_t value,
                        uint64_t size, unsigned char type)
{
	if (o->nfns == o->fncap) {
		o->fncap = o->fncap ? o->fncap * 2 : 1024;
		o->fns = xrealloc(o->fns, o->fncap * sizeof(*o->fns));
	}
	o->fns[o->nfns] = (struct ofn){name, sec, value, size, type};
	return (uint32_t)o->nfns++;
}

static void add_rel(struct osec *s, uint64_t off, uint32_t type, int32_t sym, int64_t addend)
{
	if (s->nrels == s->relcap) {
		s->relcap = s->relcap ? s->relcap * 2 : 256;
		s->rels = xrealloc(s->rels, s->relcap * sizeof(*s->rels));
	}
	s->rels[s->nrels++] = (struct orel){off, addend, type, sym};
}

/* Pad s to align; returns the offset the next bytes go to. */
static uint64_t place(struct osec *s, uint64_t align)
{
	size_t at = s->data.len;

	if (align > 1)
		at = (at + align - 1) / align * align;
	if (s->type == SHT_NOBITS)
		s->data.len = at;
	/* Code is padded with the long NOPs as fills it with (never executed, but a disassembly
	 * of the shard then reads as the assembler's would); data with zeros. */
	static const unsigned char nop[9][9] = {
		{0x90}, {0x66, 0x90}, {0x0f, 0x1f, 0x00}, {0x0f, 0x1f, 0x40, 0x00},
		{0x0f, 0x1f, 0x44, 0x00, 0x00}, {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
		{0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
		{0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}};
	while (s->data.len < at) {
		size_t gap = at - s->data.len;
		if (!(s->flags & SHF_EXECINSTR))
			buf_putc(&s->data, 0);
		else
			buf_add(&s->data, nop[(gap > 9 ? 9 : gap) - 1], gap > 9 ? 9 : gap);
	}
	return at;
}

struct obj_shard *obj_shard_new(void)
{
	struct obj_shard *o = xcalloc(1, sizeof(*o));

	buf_putc(&o->strtab, '\0');
	o->label_name = (uint32_t)o->strtab.len;
	buf_puts(&o->strtab, ".LM");
	buf_putc(&o->strtab, '\0');
	o->registry = osec_get(o, "fl_registry", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 8, 0);
	osec_get(o, ".note.GNU-stack", SHT_PROGBITS, 0, 1, 0);
	return o;
}

/* Whether the signed W-bit value v survives a field of size bytes. */
static int fits(int64_t v, int size, int width)
{
	if (8 * size >= width || size >= 8)
		return 1;
	int sh = 64 - 8 * size;
	return (int64_t)((uint64_t)v << sh) >> sh == v;
}

/* Append a template's .eh_frame FDEs to section si, pointing at the shard's copy of their
 * CIE (added on first use, as gas shares one CIE per object). Returns where the template's
 * chunk would have started, so relocation offsets past the CIE map as for any section. */
static uint64_t add_fdes(struct obj_shard *o, int32_t si, const struct tpl_sec *ts)
{
	struct osec *s = &o->secs[si];
	uint64_t cie = UINT64_MAX;

	for (size_t i = 0; i < o->ncies && cie == UINT64_MAX; i++)
		if (o->cies[i].sec == si && o->cies[i].len == ts->cie_len &&
		    !memcmp(s->data.p + o->cies[i].off, ts->data, ts->cie_len))
			cie = o->cies[i].off;
	if (cie == UINT64_MAX) {
		cie = place(s, 4);
		buf_add(&s->data, ts->data, ts->cie_len);
		o->cies = xrealloc(o->cies, (o->ncies + 1) * sizeof(*o->cies));
		o->cies[o->ncies++] = (struct cie){si, cie, ts->cie_len};
	}
	uint64_t at = place(s, 4);
	buf_add(&s->data, ts->data + ts->cie_len, ts->size - ts->cie_len);
	for (uint64_t q = at; q + 8 <= s->data.len;) {
		unsigned char *rec = (unsigned char *)s->data.p + q;
		uint32_t len = rd32(rec), ptr = (uint32_t)(q + 4 - cie);
		wr32(rec + 4, ptr);
		q += 4 + len;
	}
	return at - ts->cie_len;
}

int obj_shard_add(struct obj_shard *o, const struct obj_tpl *t, const int64_t *vals,
                  const char *name, unsigned pattern, unsigned variant, uint32_t copy)
{
	int32_t oi_stack[16], *oi = t->nsecs > 16 ? xmalloc(t->nsecs * sizeof(*oi)) : oi_stack;
	uint64_t base_stack[16], *base = t->nsecs > 16 ? xmalloc(t->nsecs * sizeof(*base))
						       : base_stack;
	int rc = 0;

	for (size_t i = 0; i < t->nfields; i++)
		if (!fits(vals[t->fields[i].slot], t->fields[i].size, t->fields[i].width))
			rc = -1;
	for (size_t i = 0; i < t->nsecs && rc == 0; i++) {
		const struct tpl_sec *ts = &t->secs[i];
		oi[i] = osec_get(o, ts->name, ts->type, ts->flags, ts->align, ts->entsize);
		struct osec *s = &o->secs[oi[i]];
		if (ts->cie_len) {
			base[i] = add_fdes(o, oi[i], ts);
			continue;
		}
		base[i] = place(s, ts->align);
		if (s->type == SHT_NOBITS)
			s->data.len += ts->size;
		else
			buf_add(&s->data, ts->data, ts->size);
	}
	for (size_t i = 0; i < t->nfields && rc == 0; i++) {
		const struct tpl_field *f = &t->fields[i];
		unsigned char *p = (unsigned char *)o->secs[oi[f->sec]].data.p + base[f->sec] + f->off;
		uint64_t v = (uint64_t)vals[f->slot];
		for (int b = 0; b < f->size; b++, v >>= 8)
			p[b] = (unsigned char)v;
	}
	for (size_t i = 0; i < t->nsecs && rc == 0; i++) {
		const struct tpl_sec *ts = &t->secs[i];
		struct osec *s = &o->secs[oi[i]];
		for (size_t r = 0; r < ts->nrels; r++) {
			const struct tpl_rel *tr = &ts->rels[r];
			if (tr->via_sym) {
				uint32_t y = add_sym(o, o->label_name, oi[tr->sec],
						     base[tr->sec] + tr->symval, 0, STT_NOTYPE);
				add_rel(s, base[i] + tr->off, tr->type, SYM_LOCAL(y), tr->addend);
			} else if (tr->sec >= 0)
				add_rel(s, base[i] + tr->off, tr->type, oi[tr->sec],
					tr->addend + (int64_t)base[tr->sec]);
			else
				add_rel(s, base[i] + tr->off, tr->type, -ext_get(o, &t->exts[tr->ext]) - 1,
					tr->addend);
		}
	}
	for (size_t i = 0; i < t->nsyms && rc == 0; i++) {
		const struct tpl_sym *ts = &t->syms[i];
		add_sym(o, (uint32_t)o->strtab.len, oi[ts->sec], base[ts->sec] + ts->value,
			ts->size, STT_FUNC);
		buf_puts(&o->strtab, name);
		buf_puts(&o->strtab, ts->suffix);
		buf_putc(&o->strtab, '\0');
	}
	if (rc == 0) {
		/* The registry row, as emit.c writes it in assembly: .quad fn; .value p, v; .long c */
		struct osec *reg = &o->secs[o->registry];
		unsigned char row[16] = {0};
		row[8] = (unsigned char)pattern;
		row[9] = (unsigned char)(pattern >> 8);
		row[10] = (unsigned char)variant;
		row[11] = (unsigned char)(variant >> 8);
		for (int b = 0; b < 4; b++)
			row[12 + b] = (unsigned char)(copy >> (8 * b));
		uint64_t at = place(reg, 8);
		buf_add(&reg->data, row, sizeof(row));
		add_rel(reg, at, R_X86_64_64, oi[t->text], (int64_t)(base[t->text] + t->entry));
		o->copies++;
	}
	if (oi != oi_stack)
		free(oi);
	if (base != base_stack)
		free(base);
	return rc;
}

size_t obj_shard_copies(const struct obj_shard *o)
{
	return o->copies;
}

size_t obj_shard_bytes(const struct obj_shard *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->nsecs; i++)
		n += o->secs[i].data.len;
	return n;
}

void obj_shard_free(struct obj_shard *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nsecs; i++) {
		free(o->secs[i].name);
		buf_free(&o->secs[i].data);
		free(o->secs[i].rels);
	}
	for (size_t i = 0; i < o->nexts; i++)
		free(o->exts[i].name);
	free(o->secs);
	free(o->cies);
	free(o->fns);
	free(o->exts);
	buf_free(&o->strtab);
	free(o);
}

/* ---- Writing ---- */

static Elf_Scn *new_section(Elf *e, struct buf *shstr, const char *name, uint32_t type,
                            uint64_t flags, uint64_t align, uint64_t entsize, void *data,
                            size_t size, Elf_Type dtype)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = elf_newdata(scn);
	GElf_Shdr sh;

	d->d_buf = type == SHT_NOBITS ? NULL : data;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align ? align : 1;
	d->d_version = EV_CURRENT;
	gelf_getshdr(scn, &sh);
	sh.sh_name = (GElf_Word)shstr->len;
	buf_puts(shstr, name);
	buf_putc(shstr, '\0');
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align ? align : 1;
	sh.sh_entsize = entsize;
	sh.sh_size = size;
	gelf_update_shdr(scn, &sh);
	return scn;
}

static int write_elf(struct obj_shard *o, int fd, char *err, size_t errlen)
{
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	GElf_Ehdr eh;
	gelf_newehdr(e, ELFCLASS64);
	gelf_getehdr(e, &eh);
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = EM_X86_64;
	eh.e_type = ET_REL;
	eh.e_version = EV_CURRENT;

	struct buf shstr = {0};
	buf_putc(&shstr, '\0');
	size_t nrela = 0;
	for (size_t i = 0; i < o->nsecs; i++)
		nrela += o->secs[i].nrels > 0;
	size_t symtab_idx = 1 + o->nsecs + nrela;
	size_t first_global = 1 + o->nsecs + o->nfns, nsyms = first_global + o->nexts;

	for (size_t i = 0; i < o->nsecs; i++) {
		struct osec *s = &o->secs[i];
		new_section(e, &shstr, s->name, s->type, s->flags, s->align, s->entsize, s->data.p,
			    s->data.len, ELF_T_BYTE);
	}
	Elf64_Rela **relas = xcalloc(o->nsecs + 1, sizeof(*relas));
	struct buf name = {0};
	for (size_t i = 0; i < o->nsecs; i++) {
		struct osec *s = &o->secs[i];
		if (!s->nrels)
			continue;
		relas[i] = xmalloc(s->nrels * sizeof(**relas));
		for (size_t r = 0; r < s->nrels; r++) {
			const struct orel *x = &s->rels[r];
			size_t sym;
			if (x->sym >= 0)
				sym = 1 + (size_t)x->sym;
			else if (x->sym < SYM_LOCAL(0) + 1)
				sym = 1 + o->nsecs + (size_t)(SYM_LOCAL(0) - x->sym);
			else
				sym = first_global + (size_t)(-x->sym - 1);
			relas[i][r].r_offset = x->off;
			relas[i][r].r_info = ELF64_R_INFO(sym, x->type);
			relas[i][r].r_addend = x->addend;
		}
		buf_reset(&name);
		buf_printf(&name, ".rela%s", s->name);
		Elf_Scn *scn = new_section(e, &shstr, name.p, SHT_RELA, SHF_INFO_LINK, 8,
					   sizeof(Elf64_Rela), relas[i], s->nrels * sizeof(Elf64_Rela),
					   ELF_T_RELA);
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		sh.sh_link = (GElf_Word)symtab_idx;
		sh.sh_info = (GElf_Word)(1 + i);
		gelf_update_shdr(scn, &sh);
	}

	Elf64_Sym *syms = xcalloc(nsyms, sizeof(*syms));
	for (size_t i = 0; i < o->nsecs; i++) {
		syms[1 + i].st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
		syms[1 + i].st_shndx = (Elf64_Section)(1 + i);
	}
	for (size_t i = 0; i < o->nfns; i++) {
		Elf64_Sym *y = &syms[1 + o->nsecs + i];
		y->st_name = o->fns[i].name;
		y->st_info = ELF64_ST_INFO(STB_LOCAL, o->fns[i].type);
		y->st_shndx = (Elf64_Section)(1 + o->fns[i].sec);
		y->st_value = o->fns[i].value;
		y->st_size = o->fns[i].size;
	}
	for (size_t i = 0; i < o->nexts; i++) {
		Elf64_Sym *y = &syms[first_global + i];
		y->st_name = (Elf64_Word)o->strtab.len;
		buf_puts(&o->strtab, o->exts[i].name);
		buf_putc(&o->strtab, '\0');
		y->st_info = o->exts[i].info;
		y->st_other = o->exts[i].other;
		y->st_shndx = SHN_UNDEF;
	}
	Elf_Scn *st = new_section(e, &shstr, ".symtab", SHT_SYMTAB, 0, 8, sizeof(Elf64_Sym), syms,
				  nsyms * sizeof(*syms), ELF_T_SYM);
	GElf_Shdr sh;
	gelf_getshdr(st, &sh);
	sh.sh_link = (GElf_Word)(symtab_idx + 1);
	sh.sh_info = (GElf_Word)first_global;
	gelf_update_shdr(st, &sh);
	new_section(e, &shstr, ".strtab", SHT_STRTAB, 0, 1, 0, o->strtab.p, o->strtab.len,
		    ELF_T_BYTE);
	Elf_Scn *shs = new_section(e, &shstr, ".shstrtab", SHT_STRTAB, 0, 1, 0, NULL, 0, ELF_T_BYTE);
	/* every name is in shstr now: point the section at it */
	Elf_Data *d = elf_getdata(shs, NULL);
	d->d_buf = shstr.p;
	d->d_size = shstr.len;
	gelf_getshdr(shs, &sh);
	sh.sh_size = shstr.len;
	gelf_update_shdr(shs, &sh);
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(shs);
	gelf_update_ehdr(e, &eh);

	int rc = 0;
	if (elf_update(e, ELF_C_WRITE) < 0) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		rc = -1;
	}
	elf_end(e);
	for (size_t i = 0; i < o->nsecs; i++)
		free(relas[i]);
	free(relas);
	free(syms);
	buf_free(&name);
	buf_free(&shstr);
	return rc;
}

int obj_shard_write(struct obj_shard *o, const char *path, char *err, size_t errlen)
{
	struct buf tmp = {0};

	elf_version(EV_CURRENT);
	buf_printf(&tmp, "%s.tmp%ld", path, (long)getpid());
	int fd = open(tmp.p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp.p, strerror(errno));
		buf_free(&tmp);
		return -1;
	}
	int rc = write_elf(o, fd, err, errlen);
	close(fd);
	if (rc == 0) {
		size_t len;
		char *bytes = read_file(tmp.p, &len);
		if (!bytes) {
			snprintf(err, errlen, "cannot read back %s: %s", tmp.p, strerror(errno));
			rc = -1;
		} else {
			write_if_changed(path, bytes, len);
			free(bytes);
		}
	}
	unlink(tmp.p);
	buf_free(&tmp);
	return rc;
}
