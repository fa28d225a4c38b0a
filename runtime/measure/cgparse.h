/* cgparse.h: streaming parser for callgrind output: event totals and per-address self costs.
 *
 * Input is the Callgrind Format (valgrind manual, "Callgrind Format Specification", version
 * 1), as written by valgrind 3.19 `--tool=callgrind`. Understood:
 *   header  `version: 1`, `positions: [instr] [line]` (default `line`), `events: Ir ...`,
 *           `summary:` / `totals:` (declared totals); other `key: value` lines are ignored.
 *   names   `ob=`/`cob=`, `fl=`/`fi=`/`fe=`/`cfi=`/`cfl=`/`jfi=`, `fn=`/`cfn=`/`jfn=`, each
 *           as `(id) name` (define), `(id)` (use) or `name`; ids are per file and
 *           per namespace (objects, files, functions). A `(id)` never defined is an error.
 *   costs   a line of positions then up to one count per event (missing trailing counts are
 *           0). Each position is absolute (decimal or 0x hex), `+N`/`-N` relative to the
 *           same column of the previous cost line, or `*` (same). Costs are self costs.
 *   calls=  `calls=COUNT TARGET-POSITIONS`; the next cost line gives the call site and the
 *           callee's INCLUSIVE cost, which is not added to any self cost or total.
 *   jump=   `jump=COUNT TARGET-POSITIONS`, and
 *   jcnd=   `jcnd=TAKEN/EXECUTED TARGET-POSITIONS`: the next line is the jump's source
 *           position (callgrind writes it without costs; costs there count as self costs).
 *           Order checked on valgrind 3.19: a loop branch taken 9 of 10 times is written
 *           `jcnd=9/10`, although the manual's prose names the executed count first.
 * Jump and call target positions are relative to the previous cost line and do not move it.
 * A cost line at a call's own position right after its inclusive line is the cost of the
 * PLT stub the call went through: callgrind (--skip-plt=yes, the default) charges skipped
 * code to the call site. It is a self cost like any other, and is also kept apart per
 * address (plt_ir, plt_jumps) so that a mix does not count stub instructions as calls.
 *
 * Per-address data needs `positions: instr` (callgrind --dump-instr=yes); jump data needs
 * --collect-jumps=yes. Callgrind writes an instruction's address minus its object's load
 * bias, i.e. the object's file virtual address (valgrind 3.19, PIE: the function at
 * runtime 0x109149 is written 0x1149), so addresses repeat across objects and entries are
 * keyed by (object, address). Files of several runs of one build may be accumulated.
 * Memory: about 56 bytes per distinct address; the file itself is streamed line by line.
 */
#ifndef FL_CGPARSE_H
#define FL_CGPARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FL_CG_NO_OBJ UINT32_MAX /* fl_cg_insn.obj before any ob= line */

/* Self costs and control transfers at one instruction address, summed over all contexts. */
struct fl_cg_insn {
	uint64_t addr;       /* the instr position: file VA in object obj (see above) */
	uint64_t ir;         /* self Ir: times the instruction executed (0 if no Ir event) */
	uint64_t jcnd_exec;  /* jcnd= lines from here: times executed, summed */
	uint64_t jcnd_taken; /* jcnd= lines from here: times taken, summed */
	uint64_t jumps;      /* jump= lines from here: transfers, summed over targets */
	uint64_t calls;      /* calls= lines from here: calls, summed over callees */
	uint64_t plt_ir;     /* part of ir that is PLT-stub code charged here (see above) */
	uint64_t plt_jumps;  /* its indirect jumps (Bi event; 0 without --branch-sim=yes) */
	uint32_t obj;        /* index into fl_cg.objs, or FL_CG_NO_OBJ */
	uint32_t njcnd;      /* number of jcnd= lines seen for this address */
	/* Self misses here, where the file has the event (else 0), saturating at UINT32_MAX:
	 * what lets a subset of addresses (one pattern's functions) get its own miss rates. */
	uint32_t i1mr, ilmr; /* I1 and LL instruction-fetch misses */
	uint32_t bcm, bim;   /* conditional and indirect branch mispredicts */
};

/* Parse result; fields are read-only for callers. */
struct fl_cg {
	char **events;            /* event names from `events:`, nevents of them */
	unsigned nevents;         /* 0 until a file with an events line is parsed */
	uint64_t *totals;         /* per event: sum of all self cost lines */
	uint64_t *declared;       /* per event: `totals:` (else `summary:`), summed over files */
	int has_declared;         /* some file had a summary: or totals: line */
	int has_instr;            /* positions include instr: insns[] is meaningful */
	int ir_event;             /* index of "Ir" in events, or -1 */
	int bi_event;             /* index of "Bi" (indirect branches) in events, or -1 */
	int miss_event[4];        /* indices of I1mr, ILmr, Bcm, Bim in events, or -1 */
	char **objs;              /* object names from ob=/cob= (as written by callgrind) */
	uint32_t nobjs;           /* entries in objs */
	uint64_t *obj_totals;     /* per object, per event: sum of its self cost lines; row o
	                             at obj_totals[o * nevents]; rows past obj_rows are 0 */
	uint32_t obj_rows;        /* rows allocated in obj_totals */
	struct fl_cg_insn *insns; /* one per (obj, addr); order: first seen, or sorted */
	size_t ninsns;            /* entries in insns */
	size_t insns_cap;         /* allocated entries */
	uint32_t *slots;          /* open-addressing hash: insns index + 1, 0 = empty */
	size_t nslots;            /* power of two */
	uint64_t lines;           /* lines read, all files */
	unsigned nfiles;          /* files parsed successfully */
};

/* Empty result, ready for fl_cg_parse_*. */
void fl_cg_init(struct fl_cg *cg);

/* Free everything held by cg (cg itself is the caller's); cg is left empty. */
void fl_cg_free(struct fl_cg *cg);

/* Parse one callgrind file and add it to cg. A second file must have the same events and
 * positions. Returns 0, or -1 with err set to "name:LINE: problem" (line numbers start at
 * 1) on malformed input, I/O or allocation failure; after -1 cg is undefined except for
 * fl_cg_free. name labels errors (the path for fl_cg_parse_file). */
int fl_cg_parse_file(struct fl_cg *cg, const char *path, char *err, size_t errlen);
int fl_cg_parse_stream(struct fl_cg *cg, FILE *in, const char *name, char *err,
	size_t errlen);

/* Self cost of event ev (an index into events) summed over object obj's cost lines; 0
 * when obj has none (or obj is FL_CG_NO_OBJ). */
uint64_t fl_cg_obj_total(const struct fl_cg *cg, uint32_t obj, int ev);

/* Index of event name in cg->events, or -1. */
int fl_cg_event(const struct fl_cg *cg, const char *name);

/* The entry for address addr of object obj (an index into objs, or FL_CG_NO_OBJ), or NULL. */
const struct fl_cg_insn *fl_cg_find(const struct fl_cg *cg, uint32_t obj, uint64_t addr);

/* Sort insns by object, then address (fl_cg_find keeps working). Returns 0, or -1 if out
 * of memory. */
int fl_cg_sort(struct fl_cg *cg);

#endif
