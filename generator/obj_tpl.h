/* obj_tpl.h: what obj_tpl.c reads out of an assembled template and obj_shard.c copies; only
 * these two files include it. */
#ifndef OBJ_TPL_H
#define OBJ_TPL_H

#include <stddef.h>
#include <stdint.h>

/* Little-endian 32-bit fields of .eh_frame records (length, CIE pointer). */
static inline uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* A relocation of a template section: against another template section (sec >= 0, addend
 * relative to its start) or an undefined symbol (ext >= 0). */
struct tpl_rel {
	uint64_t off;
	int64_t addend;
	uint64_t symval;        /* into a SHF_MERGE section: the local symbol's value there */
	uint32_t type;
	int32_t sec;
	int32_t ext;
	uint8_t via_sym;        /* against a local symbol at symval (linkers split merge
	                           sections by symbol, as gas's output has it), not sec + addend */
};

struct tpl_sec {
	char *name;             /* the shard section it goes to: .text, .text.unlikely, .eh_frame */
	uint32_t type;
	uint64_t flags, align, entsize;
	unsigned char *data;
	size_t size;
	struct tpl_rel *rels;
	size_t nrels;
	size_t cie_len;         /* .eh_frame: the CIE's bytes at the start, shared by every copy
	                           in a shard (0: none, or one with relocations: copied each time) */
};

struct tpl_sym {               /* a function symbol: the copy's name + suffix ("", ".cold") */
	char *suffix;
	int32_t sec;
	uint64_t value, size;
};

struct tpl_ext {               /* an undefined symbol the code refers to (memcpy, helpers) */
	char *name;
	unsigned char info, other;
};

struct tpl_field {             /* where slot `slot` lands: size bytes, little-endian */
	int32_t sec;
	uint32_t off;
	uint32_t slot;
	uint8_t size;
	uint8_t width;          /* the slot's W: its value is a signed W-bit number */
};

struct obj_tpl {
	struct tpl_sec *secs;
	size_t nsecs;
	struct tpl_sym *syms;
	size_t nsyms;
	struct tpl_ext *exts;
	size_t nexts;
	struct tpl_field *fields;
	size_t nfields;
	int32_t text;           /* the section of the function symbol with suffix "" */
	uint64_t entry;         /* its value there */
};

#endif
