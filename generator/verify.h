/* verify.h: the build's uniqueness check over the linked extractor library (rule 4). */
#include <stddef.h>

/* Check that every generated function in the linked library lib_path has its own bytes,
 * and record what was found in the manifest. lib_path is one file, or the parts of a
 * library split over several shared objects (configure --lib-parts) separated by commas:
 * functions are compared across all of them, and each must hold some.
 *
 * Functions are the STT_FUNC symbols of .symtab named fl_PNN_vVVV_cCCCCC (two-digit pattern
 * id, three-digit variant, five-digit copy; LOCAL in a real build). Their bytes are read
 * from their section (st_value, st_size). The library must be linked with
 * -Wl,--emit-relocs: every relocated field (.rela.text / .rel.text) inside a function is
 * zeroed before comparing, so calls to shared helpers, whose PC-relative displacements
 * differ at every call site, do not make equal code look different. Zeroing also hides
 * which symbol a field refers to, so two functions that differ only in a call target count
 * as duplicates: the check errs towards reporting. Fragments GCC splits off a function
 * (fl_...cCCCCC.cold, .part.N) are compared with their function. Duplicates are found
 * exactly (sort by size and masked bytes, memcmp), never by hash.
 *
 * manifest_in (NULL: start from {}) must hold a JSON object; manifest_out (may equal
 * manifest_in; written through a temporary file and rename) gets that object with a
 * "verify" member replacing any old one:
 *   library             lib_path
 *   ok                  true when every function is unique
 *   functions           functions found
 *   unique              distinct masked byte strings
 *   duplicate_functions functions sharing their masked bytes with another
 *   duplicate_groups    at most 20 groups (ordered by first symbol name), each
 *                       {"count": members, "symbols": [at most 20 names, sorted]}
 *   duplicate_groups_total  all groups
 *   raw_identical       functions whose raw, unmasked bytes equal another function's
 *   relocations_masked  relocations found inside functions (all were zeroed)
 *   fragments           split-off fragments compared with their functions
 *   text_bytes          sum of st_size over the functions (fragments not included)
 *   text_bytes_per_pattern, functions_per_pattern   {"P01": n, ...}
 *   function_size       {"min", "median" (element n/2 of the sorted sizes), "max"} in bytes
 *
 * Returns 0 when all functions are unique, 1 when duplicates exist (the manifest is still
 * written), -1 with a message in err (errlen bytes, NUL-terminated) on an I/O, ELF or JSON
 * error, a library without .symtab or without any fl_PNN_vVVV_cCCCCC function, or a
 * relocation of a type this check does not know (x86-64, i386 and AArch64 are known).
 * Out of memory is fatal (xmalloc). Prints nothing. */
int verify_library(const char *lib_path, const char *manifest_in, const char *manifest_out,
	char *err, size_t errlen);
