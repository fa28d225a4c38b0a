/* dis_cs.h: the classes of an object's executed instructions, decoded in process.
 *
 * objdump of a whole extractor library is minutes of text (2.15 GB of code at the default
 * --copies), almost all of it never executed in a window. This decodes only the given
 * addresses: the object's executable sections are mapped (libelf finds them), Capstone
 * decodes one x86-64 instruction at each address in AT&T syntax, and disasm.h's
 * fl_dis_classify gives its class, so the classes are the ones objdump's text would get.
 */
#ifndef FL_DIS_CS_H
#define FL_DIS_CS_H

#include <stddef.h>
#include <stdint.h>

struct fl_dis;

/* Fill the empty table d with the instructions at addrs[0..n-1] (file virtual addresses,
 * sorted ascending) of the ELF object at path. An address outside every executable
 * section, or where no instruction decodes, is left out (the mix counts it as
 * unmatched). Returns 0, or -1 with err (unreadable file, not ELF, out of memory). */
int fm_dis_cs(const char *path, const uint64_t *addrs, size_t n, struct fl_dis *d,
	char *err, size_t errlen);

#endif
