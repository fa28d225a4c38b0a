/* obj_tpl.c: assemble a fitted template once and read out where its slots land
 * (obj_clone.h says how and why). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "asm_clone.h"
#include "obj_clone.h"
#include "obj_tpl.h"
#include "util.h"

#define SET_MARK ".__fls"     /* section name suffix of set s: NAME.__fls<s> */
#define TPL_NAME "__fltpl"    /* the template function in set s: __fltpl<s> */

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- Writing the template sets ---- */

/* Default flags for a section gcc names without them. */
static const char *section_flags(const char *name, size_t len)
{
	if (len >= 5 && !memcmp(name, ".text", 5))
		return ",\"ax\",@progbits";
	if (len >= 7 && !memcmp(name, ".rodata", 7))
		return ",\"a\",@progbits";
	if (len >= 5 && !memcmp(name, ".data", 5))
		return ",\"aw\",@progbits";
	return NULL;
}

/* Copy text into out with every section directive renamed to NAME.__fls<set>, so the sets
 * of one file land in sections of their own. Returns -1 for a directive that changes section
 * in a way this does not follow (.previous, .pushsection, .bss, .comm). */
static int rename_sections(const char *text, int set, struct buf *out, char *err, size_t errlen)
{
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
		const char *d = p;
		while (d < p + n && (*d == ' ' || *d == '\t'))
			d++;
		if (!strncmp(d, ".text", 5) && (d[5] == '\n' || d[5] == '\0')) {
			buf_printf(out, "\t.section .text%s%d,\"ax\",@progbits\n", SET_MARK, set);
		} else if (!strncmp(d, ".section", 8) && (d[8] == ' ' || d[8] == '\t')) {
			const char *name = d + 9;
			while (*name == ' ' || *name == '\t')
				name++;
			const char *e = name;
			while (*e && *e != ',' && *e != '\n' && *e != ' ' && *e != '\t')
				e++;
			const char *rest = e, *end = p + n;
			size_t rest_len = (size_t)(end - rest);
			if (rest_len && rest[rest_len - 1] == '\n')
				rest_len--;
			const char *flags = NULL;
			if (!rest_len && !(flags = section_flags(name, (size_t)(e - name))))
				return fail(err, errlen, "section %.*s without flags", (int)(e - name), name);
			buf_printf(out, "\t.section %.*s%s%d", (int)(e - name), name, SET_MARK, set);
			if (flags)
				buf_puts(out, flags);
			else
				buf_add(out, rest, rest_len);
			buf_putc(out, '\n');
		} else if (!strncmp(d, ".previous", 9) || !strncmp(d, ".pushsection", 12) ||
			   !strncmp(d, ".popsection", 11) || !strncmp(d, ".bss", 4) ||
			   !strncmp(d, ".data", 5) || !strncmp(d, ".comm", 5) ||
			   !strncmp(d, ".local", 6) || !strncmp(d, ".subsection", 11)) {
			return fail(err, errlen, "directive %.*s is not followed", (int)strcspn(d, " \t\n"),
				    d);
		} else {
			buf_add(out, p, n);
		}
		p += n;
	}
	return 0;
}

/* Run cc -c -x assembler in -o out. */
static int assemble(const char *cc, const char *in, const char *out, char *err, size_t errlen)
{
	const char *args[] = {"-c", "-x", "assembler", in, "-o", out, NULL};

	return run_command(cc, args, err, errlen);
}

/* ---- Reading the assembled sets ---- */

/* One ELF section of the template object: which set and template section it is. */
struct esec {
	int set;                /* -1: not a set section */
	int32_t tsec;           /* set 0: index in t->secs; set s: the set-0 twin's index */
	size_t nrels;           /* relocations against it (its .rela) */
};

static int set_of(const char *name, size_t *base_len)
{
	const char *m = strstr(name, SET_MARK);
	if (!m)
		return -1;
	*base_len = (size_t)(m - name);
	return atoi(m + strlen(SET_MARK));
}

static int is_got(uint32_t type)
{
	return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX ||
	       type == R_X86_64_REX_GOTPCRELX || type == R_X86_64_GOT32 ||
	       type == R_X86_64_GOTOFF64 || type == R_X86_64_TLSGD || type == R_X86_64_TLSLD ||
	       type == R_X86_64_GOTTPOFF;
}

static int32_t ext_index(struct obj_tpl *t, const char *name, const GElf_Sym *sym)
{
	for (size_t i = 0; i < t->nexts; i++)
		if (!strcmp(t->exts[i].name, name))
			return (int32_t)i;
	t->exts = xrealloc(t->exts, (t->nexts + 1) * sizeof(*t->exts));
	t->exts[t->nexts].name = xstrdup(name);
	t->exts[t->nexts].info = sym->st_info;
	t->exts[t->nexts].other = sym->st_other;
	return (int32_t)t->nexts++;
}

/* Read one relocation's target: a set-0 section (with the symbol's value folded into the
 * addend) or an undefined symbol. */
static int rel_target(struct obj_tpl *t, Elf *e, Elf_Data *symd, size_t strndx,
                      const struct esec *es, size_t nes, const GElf_Rela *r, struct tpl_rel *out,
                      char *err, size_t errlen)
{
	GElf_Sym sym;
	size_t si = GELF_R_SYM(r->r_info);

	out->off = r->r_offset;
	out->type = (uint32_t)GELF_R_TYPE(r->r_info);
	out->addend = r->r_addend;
	out->sec = out->ext = -1;
	if (!gelf_getsym(symd, (int)si, &sym))
		return fail(err, errlen, "relocation symbol %zu unreadable", si);
	if (sym.st_shndx == SHN_UNDEF) {
		const char *name = elf_strptr(e, strndx, sym.st_name);
		if (!name || !*name)
			return fail(err, errlen, "relocation against an unnamed undefined symbol");
		out->ext = ext_index(t, name, &sym);
		return 0;
	}
	if (sym.st_shndx >= nes || es[sym.st_shndx].set != 0)
		return fail(err, errlen, "relocation against section %u outside the template",
			    (unsigned)sym.st_shndx);
	if (GELF_ST_BIND(sym.st_info) != STB_LOCAL || is_got(out->type))
		return fail(err, errlen, "relocation type %u against a defined symbol", out->type);
	out->sec = es[sym.st_shndx].tsec;
	uint64_t value = GELF_ST_TYPE(sym.st_info) != STT_SECTION ? sym.st_value : 0;
	if (t->secs[out->sec].flags & SHF_MERGE) {
		out->via_sym = 1;
		out->symval = value;
	} else {
		out->addend += (int64_t)value;
	}
	return 0;
}

/* The set-0 part of .eh_frame: its CIE and the FDEs whose pc_begin lies in set 0, as one
 * chunk with the CIE first and every FDE's CIE pointer rewritten to it. rels are the
 * section's relocations, already resolved (sec -1 for those outside set 0). */
static int eh_frame_chunk(struct obj_tpl *t, const unsigned char *d, size_t size,
                          const struct tpl_rel *rels, const int *rel_set0, size_t nrels,
                          uint32_t type, uint64_t flags, char *err, size_t errlen)
{
	struct buf chunk = {0};
	struct tpl_rel *out = NULL;
	size_t nout = 0;
	int64_t cie = -1;

	for (size_t off = 0; off + 4 <= size;) {
		uint32_t len = rd32(d + off);
		if (len == 0)
			break;
		if (len == 0xffffffffu || off + 4 + len > size || len < 8 || len % 4)
			return fail(err, errlen, ".eh_frame record at %zu not understood", off);
		uint32_t id = rd32(d + off + 4);
		if (id != 0) {
			int in0 = 0;
			for (size_t i = 0; i < nrels; i++)
				if (rels[i].off == off + 8)
					in0 = rel_set0[i];
			if (in0) {
				int64_t c = (int64_t)(off + 4) - (int64_t)id;
				if (cie >= 0 && c != cie) {
					buf_free(&chunk);
					free(out);
					return fail(err, errlen, ".eh_frame: FDEs with different CIEs");
				}
				if (cie < 0) {
					cie = c;
					uint32_t clen = rd32(d + c);
					for (size_t i = 0; i < nrels; i++)
						if (rels[i].off >= (uint64_t)c && rels[i].off < (uint64_t)c + 4 + clen) {
							if (!rel_set0[i]) {
								buf_free(&chunk);
								free(out);
								return fail(err, errlen, ".eh_frame CIE relocation "
									    "not understood");
							}
							out = xrealloc(out, (nout + 1) * sizeof(*out));
							out[nout] = rels[i];
							out[nout++].off -= (uint64_t)c;
						}
					buf_add(&chunk, d + c, 4 + clen);
				}
				size_t at = chunk.len;
				for (size_t i = 0; i < nrels; i++)
					if (rels[i].off >= off && rels[i].off < off + 4 + len) {
						if (!rel_set0[i]) {
							buf_free(&chunk);
							free(out);
							return fail(err, errlen, ".eh_frame FDE refers outside its set");
						}
						out = xrealloc(out, (nout + 1) * sizeof(*out));
						out[nout] = rels[i];
						out[nout++].off = rels[i].off - off + at;
					}
				buf_add(&chunk, d + off, 4 + len);
				wr32((unsigned char *)chunk.p + at + 4, (uint32_t)(at + 4));
			}
		}
		off += 4 + len;
	}
	if (cie < 0) {
		free(out);
		return 0;   /* no unwind information: nothing to carry */
	}
	t->secs = xrealloc(t->secs, (t->nsecs + 1) * sizeof(*t->secs));
	struct tpl_sec *s = &t->secs[t->nsecs++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(".eh_frame");
	s->type = type;
	s->flags = flags;
	s->align = 4;   /* records are whole words: copies follow each other without padding */
	s->size = chunk.len;
	s->data = (unsigned char *)chunk.p;
	s->rels = out;
	s->nrels = nout;
	/* The CIE is shared in the shard unless something relocates it (a personality). A CIE
	 * per copy is legal but linkers compare CIEs pairwise: mold took minutes over 700,000. */
	s->cie_len = 4 + rd32(d + cie);
	for (size_t i = 0; i < nout; i++)
		if (out[i].off < s->cie_len)
			s->cie_len = 0;
	return 0;
}

/* For each byte of executable section data (size bytes): the size of the immediate or
 * displacement field that starts there, or 0. One decode per section: a template of P13
 * has hundreds of slots in 40 KB of code. */
static uint8_t *field_starts(csh cs, const unsigned char *data, size_t size)
{
	uint8_t *at = xcalloc(size ? size : 1, 1);
	cs_insn *insn;
	size_t n = cs_disasm(cs, data, size, 0, 0, &insn);

	for (size_t i = 0; i < n; i++) {
		const cs_x86_encoding *en = &insn[i].detail->x86.encoding;
		uint64_t a = insn[i].address;
		if (en->imm_offset && a + en->imm_offset < size)
			at[a + en->imm_offset] = en->imm_size;
		if (en->disp_offset && a + en->disp_offset < size)
			at[a + en->disp_offset] = en->disp_size;
	}
	cs_free(insn, n);
	return at;
}

static int64_t read_le(const unsigned char *p, int size)
{
	uint64_t v = 0;

	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return size == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size);
}

/* Find each slot's field from the bytes where the sets differ. codes[sec][off]: bit s-1 set
 * when set s differs from set 0 there. */
static int find_fields(struct obj_tpl *t, const struct asm_clone *ac, const int64_t *vals,
                       uint32_t **codes, char *err, size_t errlen)
{
	size_t nslots = asm_clone_nslots(ac);
	char *seen = xcalloc(nslots + 1, 1);
	csh cs;
	int rc = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		fatal("capstone: cannot open an x86-64 decoder");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	t->fields = xcalloc(nslots ? nslots : 1, sizeof(*t->fields));
	for (size_t si = 0; si < t->nsecs && rc == 0; si++) {
		const struct tpl_sec *s = &t->secs[si];
		uint8_t *starts = codes[si] && (s->flags & SHF_EXECINSTR)
					  ? field_starts(cs, s->data, s->size) : NULL;
		for (size_t off = 0; codes[si] && off < s->size && rc == 0; off++) {
			uint32_t code = codes[si][off];
			if (!code)
				continue;
			size_t slot = code - 1;
			if (slot >= nslots || seen[slot]) {
				rc = fail(err, errlen, "%s+%zu: a flip that names no slot", s->name, off);
				break;
			}
			seen[slot] = 1;
			struct asm_clone_rule rule;
			asm_clone_slot(ac, slot, &rule);
			int size = starts ? starts[off] : rule.width / 8;
			if (size <= 0 || off + (size_t)size > s->size) {
				rc = fail(err, errlen, "%s+%zu: slot %zu is in no instruction field", s->name,
					  off, slot);
				break;
			}
			int64_t have = read_le(s->data + off, size);
			uint64_t m = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
			if (((uint64_t)have ^ (uint64_t)vals[slot]) & m) {
				rc = fail(err, errlen, "%s+%zu: slot %zu holds %" PRId64 ", not %" PRId64,
					  s->name, off, slot, have, vals[slot]);
				break;
			}
			t->fields[t->nfields++] = (struct tpl_field){
				.sec = (int32_t)si, .off = (uint32_t)off, .slot = (uint32_t)slot,
				.size = (uint8_t)size, .width = (uint8_t)rule.width};
		}
		free(starts);
	}
	for (size_t i = 0; i < nslots && rc == 0; i++)
		if (!seen[i])
			rc = fail(err, errlen, "slot %zu not found in the machine code", i);
	cs_close(&cs);
	free(seen);
	return rc;
}

/* Read the template sets out of the object at path. */
static int read_object(struct obj_tpl *t, const struct asm_clone *ac, const int64_t *vals,
                       int nsets, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nes = 0, shstrndx = 0, strndx = 0;
	int rc = 0;
	if (!e || elf_getshdrnum(e, &nes) || elf_getshdrstrndx(e, &shstrndx)) {
		if (e)
			elf_end(e);
		close(fd);
		return fail(err, errlen, "%s: %s", path, elf_errmsg(-1));
	}
	struct esec *es = xcalloc(nes, sizeof(*es));
	uint32_t **codes = NULL;
	Elf_Data *symd = NULL;
	Elf_Scn *scn = NULL, *eh = NULL, *eh_rela = NULL;
	GElf_Shdr sh;

	/* Pass 1: set-0 sections become template sections; find the symbol table. */
	while ((scn = elf_nextscn(e, scn))) {
		size_t i = elf_ndxscn(scn);
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		size_t blen;
		es[i].set = -1;
		if (!name)
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symd = elf_getdata(scn, NULL);
			strndx = sh.sh_link;
		}
		if (!strcmp(name, ".eh_frame"))
			eh = scn;
		if (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL)
			continue;
		es[i].set = set_of(name, &blen);
		if (es[i].set != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		t->secs = xrealloc(t->secs, (t->nsecs + 1) * sizeof(*t->secs));
		struct tpl_sec *s = &t->secs[t->nsecs];
		memset(s, 0, sizeof(*s));
		s->name = xstrndup(name, blen);
		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		s->align = sh.sh_addralign ? sh.sh_addralign : 1;
		s->entsize = sh.sh_entsize;
		s->size = sh.sh_size;
		s->data = xmalloc(s->size ? s->size : 1);
		if (sh.sh_type != SHT_NOBITS && d && d->d_buf)
			memcpy(s->data, d->d_buf, s->size);
		else
			memset(s->data, 0, s->size ? s->size : 1);
		es[i].tsec = (int32_t)t->nsecs++;
	}
	if (!symd)
		rc = fail(err, errlen, "%s: no symbol table", path);
	codes = xcalloc(t->nsecs + 1, sizeof(*codes));
	size_t nplain = t->nsecs;

	/* Pass 2: the other sets against set 0, and every relocation. */
	scn = NULL;
	while (rc == 0 && (scn = elf_nextscn(e, scn))) {
		size_t i = elf_ndxscn(scn);
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_REL)
			rc = fail(err, errlen, "%s: REL relocations", name);
		if (rc || es[i].set <= 0 || sh.sh_type == SHT_RELA)
			continue;
		size_t blen = 0;
		set_of(name, &blen);
		int32_t twin = -1;
		for (size_t k = 0; k < nplain; k++)
			if (strlen(t->secs[k].name) == blen && !strncmp(t->secs[k].name, name, blen))
				twin = (int32_t)k;
		if (twin < 0 || t->secs[twin].size != sh.sh_size || es[i].set >= nsets) {
			rc = fail(err, errlen, "%s: set %d's layout differs from set 0's", name, es[i].set);
			break;
		}
		es[i].tsec = twin;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		const unsigned char *a = t->secs[twin].data, *b = d->d_buf;
		for (size_t off = 0; off < sh.sh_size; off++)
			if (a[off] != b[off]) {
				if (!codes[twin])
					codes[twin] = xcalloc(sh.sh_size, sizeof(**codes));
				codes[twin][off] |= 1u << (es[i].set - 1);
			}
	}
	scn = NULL;
	while (rc == 0 && (scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_RELA)
			continue;
		if (sh.sh_info < nes && es[sh.sh_info].set > 0)
			es[sh.sh_info].nrels = sh.sh_size / sh.sh_entsize;
		if (eh && sh.sh_info == elf_ndxscn(eh)) {
			eh_rela = scn;
			continue;
		}
		if (sh.sh_info >= nes || es[sh.sh_info].set != 0)
			continue;
		struct tpl_sec *s = &t->secs[es[sh.sh_info].tsec];
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_size / sh.sh_entsize;
		s->rels = xcalloc(n ? n : 1, sizeof(*s->rels));
		for (size_t k = 0; k < n && rc == 0; k++) {
			GElf_Rela r;
			gelf_getrela(d, (int)k, &r);
			rc = rel_target(t, e, symd, strndx, es, nes, &r, &s->rels[k], err, errlen);
		}
		s->nrels = n;
	}
	/* Every set must carry as many relocations per section as set 0. */
	for (size_t i = 0; rc == 0 && i < nes; i++)
		if (es[i].set > 0 && es[i].nrels != t->secs[es[i].tsec].nrels)
			rc = fail(err, errlen, "set %d has other relocations than set 0", es[i].set);

	/* Function symbols of set 0. */
	size_t nsym = symd ? symd->d_size / sizeof(Elf64_Sym) : 0;
	t->text = -1;
	for (size_t k = 1; rc == 0 && k < nsym; k++) {
		GElf_Sym sym;
		gelf_getsym(symd, (int)k, &sym);
		const char *name = elf_strptr(e, strndx, sym.st_name);
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx >= nes ||
		    es[sym.st_shndx].set != 0 || !name)
			continue;
		if (strncmp(name, TPL_NAME "0", strlen(TPL_NAME) + 1)) {
			rc = fail(err, errlen, "function %s in the template", name);
			break;
		}
		t->syms = xrealloc(t->syms, (t->nsyms + 1) * sizeof(*t->syms));
		t->syms[t->nsyms] = (struct tpl_sym){xstrdup(name + strlen(TPL_NAME) + 1),
						    es[sym.st_shndx].tsec, sym.st_value, sym.st_size};
		if (!t->syms[t->nsyms].suffix[0]) {
			t->text = t->syms[t->nsyms].sec;
			t->entry = sym.st_value;
		}
		t->nsyms++;
	}
	if (rc == 0 && t->text < 0)
		rc = fail(err, errlen, "no template function in %s", path);

	/* .eh_frame: the set-0 records. */
	if (rc == 0 && eh) {
		gelf_getshdr(eh, &sh);
		Elf_Data *d = elf_getdata(eh, NULL);
		struct tpl_rel *rels = NULL;
		int *in0 = NULL;
		size_t n = 0;
		if (eh_rela) {
			GElf_Shdr rsh;
			gelf_getshdr(eh_rela, &rsh);
			Elf_Data *rd = elf_getdata(eh_rela, NULL);
			n = rsh.sh_size / rsh.sh_entsize;
			rels = xcalloc(n ? n : 1, sizeof(*rels));
			in0 = xcalloc(n ? n : 1, sizeof(*in0));
			for (size_t k = 0; k < n; k++) {
				GElf_Rela r;
				GElf_Sym sym;
				gelf_getrela(rd, (int)k, &r);
				gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym);
				/* in0: resolved, and not into another set (a personality routine of a
				 * CIE would be an undefined symbol: resolved too) */
				rels[k].off = r.r_offset;
				in0[k] = (sym.st_shndx == SHN_UNDEF ||
					  (sym.st_shndx < nes && es[sym.st_shndx].set == 0)) &&
					 rel_target(t, e, symd, strndx, es, nes, &r, &rels[k], err,
						    errlen) == 0;
			}
		}
		rc = eh_frame_chunk(t, d->d_buf, sh.sh_size, rels, in0, n, sh.sh_type,
				    sh.sh_flags, err, errlen);
		free(rels);
		free(in0);
	}
	if (rc == 0)
		rc = find_fields(t, ac, vals, codes, err, errlen);
	for (size_t i = 0; i <= nplain; i++)
		free(codes[i]);
	free(codes);
	free(es);
	elf_end(e);
	close(fd);
	return rc;
}

void obj_tpl_free(struct obj_tpl *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nsecs; i++) {
		free(t->secs[i].name);
		free(t->secs[i].data);
		free(t->secs[i].rels);
	}
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].suffix);
	for (size_t i = 0; i < t->nexts; i++)
		free(t->exts[i].name);
	free(t->secs);
	free(t->syms);
	free(t->exts);
	free(t->fields);
	free(t);
}

size_t obj_tpl_fields(const struct obj_tpl *t)
{
	return t->nfields;
}

/* The template's values: the hull's high ends, else its low ends, else copy k's. */
static int template_values(const struct asm_clone *ac, const int64_t *k, int64_t *vals)
{
	size_t nk = asm_clone_nk(ac);
	int64_t *lo = xmalloc((nk + 1) * sizeof(*lo)), *hi = xmalloc((nk + 1) * sizeof(*hi));
	asm_clone_hull(ac, lo, hi);
	int rc = asm_clone_values(ac, hi, vals);
	if (rc != 0)
		rc = asm_clone_values(ac, lo, vals);
	if (rc != 0 && k)
		rc = asm_clone_values(ac, k, vals);
	free(lo);
	free(hi);
	return rc;
}

struct obj_tpl *obj_tpl_make(const struct asm_clone *ac, const int64_t *k, const char *cc,
                             const char *work_path, char *err, size_t errlen)
{
	size_t nslots = asm_clone_nslots(ac);
	int64_t *vals = xmalloc((nslots + 1) * sizeof(*vals));
	int64_t *flip = xmalloc((nslots + 1) * sizeof(*flip));
	struct buf text = {0}, file = {0}, path_s = {0}, path_o = {0};
	struct obj_tpl *t = NULL;
	int nsets = 1, rc = 0;

	while ((size_t)1 << (nsets - 1) <= nslots)
		nsets++;
	if (template_values(ac, k, vals) != 0)
		rc = fail(err, errlen, "neither the hull's ends nor the first copy's constants "
			  "pass the template's checks");
	for (int s = 0; s < nsets && rc == 0; s++) {
		char name[32], tag[16];
		snprintf(name, sizeof(name), TPL_NAME "%d", s);
		snprintf(tag, sizeof(tag), "T%d", s);
		for (size_t i = 0; i < nslots; i++)
			flip[i] = vals[i] ^ (int64_t)(s && (((i + 1) >> (s - 1)) & 1));
		buf_reset(&text);
		asm_clone_emit_values(ac, name, tag, flip, &text);
		rc = rename_sections(text.p, s, &file, err, errlen);
	}
	buf_puts(&file, "\t.section .note.GNU-stack,\"\",@progbits\n");
	buf_printf(&path_s, "%s.s", work_path);
	buf_printf(&path_o, "%s.o", work_path);
	if (rc == 0) {
		write_if_changed(path_s.p, file.p, file.len);
		rc = assemble(cc, path_s.p, path_o.p, err, errlen);
	}
	if (rc == 0) {
		elf_version(EV_CURRENT);
		t = xcalloc(1, sizeof(*t));
		if (read_object(t, ac, vals, nsets, path_o.p, err, errlen) != 0) {
			obj_tpl_free(t);
			t = NULL;
		}
	}
	free(vals);
	free(flip);
	buf_free(&text);
	buf_free(&file);
	buf_free(&path_s);
	buf_free(&path_o);
	return t;
}
