/* obj_clone.h: clone copies straight to object code (--clone=obj).
 *
 * The assembly cloner (asm_clone.h) writes each copy as text that the assembler then reads
 * again: at --copies=1000 that was 7.1 GB of text and two thirds of the build's CPU. Here a
 * fitted template is assembled once, with chosen slot values, and every copy is its machine
 * code with the slots' fields patched:
 *  - Where a slot lands: the template is assembled in 1 + L sets (2^L > slots). Set 0 holds
 *    the template's own values; in set s the slots whose index + 1 has bit s-1 set get their
 *    value with bit 0 flipped. Flipping bit 0 never moves a value across an encoding edge
 *    (imm8 / imm32, disp8 / disp32), so every set has the same layout and each slot's field
 *    is the one byte whose flips spell its index. The field's size comes from decoding the
 *    instruction there (Capstone: the immediate or displacement field that starts at that
 *    byte) or, in data, from the directive's width. Any disagreement (a section of another
 *    size, a flip outside any field, a slot found twice or not at all, other relocations)
 *    refuses the template, and its copies go the assembly way.
 *  - A copy's values get every check of asm_clone_values (range, classes, orders, overlaps)
 *    and one more: each value must fit the field the template's encoding gave its slot (a
 *    displacement of 200 in a disp8 field does not). A copy that fails it is assembled.
 *  - Relocations, function symbols (NAME and NAME.cold) and the template's .eh_frame records
 *    (its CIE and FDEs, the CIE pointers rewritten) are carried over to each copy, against
 *    the shard's sections, so the linker, the unwinder and verify see what `as` would give.
 * The template values are the hull's high ends, else its low ends (wide values give wide
 * fields, which more copies fit), else those of the variant's first copy in the part.
 */
#ifndef OBJ_CLONE_H
#define OBJ_CLONE_H

#include <stddef.h>
#include <stdint.h>

struct asm_clone;
struct obj_tpl;     /* a template's machine code, relocations, symbols and slot fields */
struct obj_shard;   /* a relocatable object being filled with copies */

/* Assemble template ac with cc (a compiler driver that takes `-c -x assembler`), its files
 * at work_path.s and work_path.o (kept, for inspection). Its values come from the hull's
 * high ends, else its low ends, else the constants k of a copy (may be NULL). NULL with a
 * one-line reason in err when the template cannot be cloned to object code. */
struct obj_tpl *obj_tpl_make(const struct asm_clone *ac, const int64_t *k, const char *cc,
                             const char *work_path, char *err, size_t errlen);
void obj_tpl_free(struct obj_tpl *t);
size_t obj_tpl_fields(const struct obj_tpl *t);

struct obj_shard *obj_shard_new(void);
/* Append one copy: the template's bytes with slot values vals (from asm_clone_values) in its
 * fields, its function symbols named name and name + suffix, and its registry row {name,
 * pattern, variant, copy} in section fl_registry. Returns 0, or -1 with the shard untouched
 * when a value does not fit its field. */
int obj_shard_add(struct obj_shard *o, const struct obj_tpl *t, const int64_t *vals,
                  const char *name, unsigned pattern, unsigned variant, uint32_t copy);
size_t obj_shard_copies(const struct obj_shard *o);
size_t obj_shard_bytes(const struct obj_shard *o);   /* section bytes so far */
/* Write the ELF relocatable object to path (only when its bytes changed, for ninja's restat).
 * Returns 0, or -1 with err set. */
int obj_shard_write(struct obj_shard *o, const char *path, char *err, size_t errlen);
void obj_shard_free(struct obj_shard *o);

#endif
