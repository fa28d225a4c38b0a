/* discache.h: instruction classes (disasm.h) of the addresses a simulated run executed.
 *
 * Only the executed addresses are classified: by default decoded in process with Capstone
 * (dis_cs.h: a full extractor library is 2.15 GB of code, of which a run executes a few
 * MB), or from objdump's text of the object filtered to them (the classes are the same:
 * tests/test_dis_cs compares the two).
 */
#ifndef FL_DISCACHE_H
#define FL_DISCACHE_H

#include <stddef.h>
#include <stdint.h>

struct fl_cg;
struct fl_dis;

/* The classes of the instructions object obj of cg executed (cg sorted by fl_cg_sort):
 * Capstone, or objdump (objdump != 0) filtered to them. 0, or -1 with err (d is then
 * empty). */
int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, int objdump, struct fl_dis *d,
	char *err, size_t errlen);

#endif
