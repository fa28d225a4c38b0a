/* discache.h: instruction classes (disasm.h) of the addresses a simulated run executed.
 *
 * Without a cache, each object is disassembled per run, keeping only the executed
 * addresses (a full extractor library is hundreds of MB of text). A cache disassembles
 * whole objects once and serves every run of a study or calibration from them (about 10
 * bytes per instruction).
 */
#ifndef FL_DISCACHE_H
#define FL_DISCACHE_H

#include <stddef.h>
#include <stdint.h>

struct fl_cg;
struct fl_dis;
struct fm_dis_cache;

struct fm_dis_cache *fm_dis_cache_new(void);
void fm_dis_cache_free(struct fm_dis_cache *c);

/* The classes of the instructions object obj of cg executed (cg sorted by fl_cg_sort),
 * from cache, or objdump of that object filtered to them when cache is NULL. 0, or -1
 * with err (d is then empty). */
int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, struct fm_dis_cache *cache,
	struct fl_dis *d, char *err, size_t errlen);

#endif
