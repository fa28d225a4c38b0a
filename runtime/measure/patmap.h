/* patmap.h: which extractor pattern each code address of a generated library belongs to.
 *
 * The generator names every function fl_PNN_vVVV_cCCCCC (pattern NN, variant, copy), and
 * GCC names the parts it splits off NAME.cold and NAME.part.K, so the symbol table alone
 * says which pattern file wrote each byte of code. Everything else in the library (the
 * shared helpers of templates/helpers.c, the registry, the map builder) is "shared". Used
 * by validate to split the generated library's simulated counts by pattern: which code
 * shapes run the instructions, take the branches and miss the L1i.
 */
#ifndef FL_PATMAP_H
#define FL_PATMAP_H

#include <stddef.h>
#include <stdint.h>

#define FM_PAT_MAX 99            /* pattern ids P01..P99 the names can carry */
#define FM_PAT_SHARED FM_PAT_MAX /* fm_patmap_of: code of no pattern */

struct fm_pat_range {
	uint64_t lo, hi;  /* file virtual addresses [lo, hi) */
	unsigned pat;     /* 0-based pattern index (P01 = 0) */
};

struct fm_patmap {
	struct fm_pat_range *r;  /* by lo, not overlapping */
	size_t n;
};

/* Read the function symbols of the shared object at path into pm. Returns 0, or -1 with
 * err set (cannot open, not ELF, no symbol table: stripped, no fl_P symbol at all). */
int fm_patmap_load(struct fm_patmap *pm, const char *path, char *err, size_t errlen);

/* The 0-based pattern of file virtual address a, or FM_PAT_SHARED. */
unsigned fm_patmap_of(const struct fm_patmap *pm, uint64_t a);

void fm_patmap_free(struct fm_patmap *pm);

#endif
