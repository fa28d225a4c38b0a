/* dis_cs.c: decode an object's executed instructions with Capstone, classify as disasm.h. */
#define _GNU_SOURCE
#include "dis_cs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capstone/capstone.h>
#include <gelf.h>
#include <libelf.h>

#include "disasm.h"

#define CS_MAX_SECTIONS 64 /* executable sections of one object, at most */

/* One executable section: its addresses and where its bytes are in the file. */
struct cs_sec {
	uint64_t addr, size, off;
};

/* The executable PROGBITS sections of the ELF file open on fd. Returns their count, or -1
 * with err. */
static int cs_sections(int fd, const char *path, struct cs_sec *s, char *err, size_t errlen)
{
	int n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF object", path);
		if (e)
			elf_end(e);
		return -1;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL && n < CS_MAX_SECTIONS;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		s[n++] = (struct cs_sec){ sh.sh_addr, sh.sh_size, sh.sh_offset };
	}
	elf_end(e);
	return n;
}

/* Append "mnem\0ops\0" to d's pool; its offset, or -1 out of memory. */
static long cs_pool_add(struct fl_dis *d, const char *mnem, const char *ops)
{
	size_t a = strlen(mnem) + 1, b = strlen(ops) + 1;
	if (d->pool_len + a + b > d->pool_cap) {
		size_t cap = (d->pool_len + a + b) * 2;
		char *p = realloc(d->pool, cap);
		if (p == NULL)
			return -1;
		d->pool = p;
		d->pool_cap = cap;
	}
	long off = (long)d->pool_len;
	memcpy(d->pool + d->pool_len, mnem, a);
	memcpy(d->pool + d->pool_len + a, ops, b);
	d->pool_len += a + b;
	return off;
}

int fm_dis_cs(const char *path, const uint64_t *addrs, size_t n, struct fl_dis *d,
	char *err, size_t errlen)
{
	struct cs_sec sec[CS_MAX_SECTIONS];
	struct stat st;
	csh h = 0;
	cs_insn *ci = NULL;
	int rc = -1, fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *map = MAP_FAILED;

	fl_dis_init(d);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	int ns = cs_sections(fd, path, sec, err, errlen);
	if (ns < 0)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "mmap %s: %s", path, strerror(errno));
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK ||
	    cs_option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT) != CS_ERR_OK ||
	    (ci = cs_malloc(h)) == NULL) {
		snprintf(err, errlen, "capstone: cannot open an x86-64 AT&T decoder");
		goto out;
	}
	d->insns = malloc((n ? n : 1) * sizeof *d->insns);
	d->path = strdup(path);
	d->cap = n;
	if (d->insns == NULL || d->path == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		while (k < (size_t)ns && addrs[i] >= sec[k].addr + sec[k].size)
			k++;
		if (k == (size_t)ns)
			break;
		if (addrs[i] < sec[k].addr || sec[k].off + sec[k].size > (uint64_t)st.st_size)
			continue;
		uint64_t at = addrs[i] - sec[k].addr;
		const uint8_t *code = map + sec[k].off + at;
		size_t left = (size_t)(sec[k].size - at);
		uint64_t pc = addrs[i];
		if (!cs_disasm_iter(h, &code, &left, &pc, ci))
			continue;
		/* Capstone names x87 fwait "wait"; disasm.h knows objdump's name. */
		const char *mn = strcmp(ci->mnemonic, "wait") == 0 ? "fwait" : ci->mnemonic;
		long t = cs_pool_add(d, mn, ci->op_str);
		if (t < 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		struct fl_dis_insn *x = &d->insns[d->n++];
		x->addr = addrs[i];
		x->len = ci->size;
		x->text = (uint32_t)t;
		x->cls = fl_dis_classify(mn, ci->op_str);
	}
	rc = 0;
out:
	if (ci)
		cs_free(ci, 1);
	if (h)
		cs_close(&h);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		fl_dis_free(d);
	return rc;
}
