/* probes.h: how many probes the build compiles per variant (--mode asm), in one place.
 *
 * configure reads the #define line below with sed to write one compile edge per probe, and
 * frontload-gen writes and fits that many; README and --help quote the value. Probes 0 and 1
 * put every constant at the ends of its hull, the rest draw like copies (expand.c); a clone
 * template is fitted from any three whose assembly lines up (emit.c, asm_clone.h), so the
 * value must stay in 3..8 (asm_clone_fit_n). Keep the line's shape: configure parses it.
 */
#define FL_NPROBES 6

/* The value as a string literal, for help texts. */
#define FL_STR_(x) #x
#define FL_STR(x) FL_STR_(x)
#define FL_NPROBES_STR FL_STR(FL_NPROBES)
