/* mix.h: dynamic instruction mix and front-end miss rates from callgrind + objdump data.
 *
 * Joins callgrind's per-address execution counts (cgparse.h) with the static classes of
 * the disassembled objects (disasm.h): each address adds its self Ir to its class. An
 * address belongs to an object by callgrind's ob= name and becomes a file VA by subtracting
 * the object's bias: 0 for callgrind 3.19 output, which already writes file VAs (see
 * cgparse.h); the load base when addresses are runtime VAs (other producers); or guessed
 * (fl_dis_guess_bias). Addresses that do not map are counted, never dropped: "unmapped"
 * when their object was not given, "unmatched" when it was but no instruction starts there.
 *
 * rep string instructions (fl_dis_class.rep_string): valgrind translates rep movs/stos/
 * lods/cmps/scas as a one-instruction loop that re-enters its own address per iteration,
 * so its Ir counts iterations (plus the final rcx == 0 check), while hardware retires the
 * instruction once per execution. Callgrind (--collect-jumps=yes) writes each iteration's
 * re-entry as a taken jcnd= from the instruction to itself and the leaving one as not
 * taken, so executions = Ir - jcnd taken at that address (checked on valgrind 3.19:
 * rep movsb with rcx 100, called 10 times: Ir 1010, jcnd taken 1000, 10 executions; repz
 * cmpsb stopping after 51 of 200: Ir 153, taken 150, 3). The mix counts executions, and
 * the rates' denominator is ir_hw = ir_total - rep_ir_removed. A rep instruction without
 * jcnd data (no --collect-jumps) cannot be corrected: its Ir is kept and counted in
 * rep_uncorrected_ir.
 *
 * PLT stubs: callgrind (--skip-plt=yes, its default) charges a stub's instructions to the
 * call (or tail-call jmp) that went through it, at the call's address (cgparse.h keeps them
 * apart as plt_ir). They are classified as what they are, one indirect jump through the
 * GOT per stub (the Bi event counts them) and plain instructions for the rest (endbr64;
 * mold's mov $index,%r11d), never as calls: counted as the call, 3.35 M stub instructions
 * in a validate window of 338 M put near calls+returns at 2.39% for 1.55% and instructions
 * per taken branch at 12.3 for 13.5 (default build, 2026-12-07, README).
 *
 * Shares are of classified instructions (insns). Taken branches = taken conditional
 * branches (from jcnd=, so callgrind needs --collect-jumps=yes) + all executed jumps,
 * calls and returns. Rates per kilo-instruction use the file's Ir total (all collected
 * code) less the rep correction (ir_hw), and need the events: I1mr/ILmr from
 * --cache-sim=yes, Bcm/Bim from --branch-sim=yes.
 */
#ifndef FL_MIX_H
#define FL_MIX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fl_cg;
struct fl_dis;

/* One disassembled object to join. */
struct fl_mix_obj {
	const struct fl_dis *dis; /* its instruction table */
	const char *ob_name;      /* callgrind ob= name; NULL: dis->path. Equal strings or equal
	                           * basenames match */
	uint64_t bias;            /* callgrind address - file VA; usually 0 (output when
	                           * guess_bias) */
	int guess_bias;           /* nonzero: set bias with fl_dis_guess_bias over the object's
	                           * addresses */
};

/* A derived rate that may be missing from the data. */
struct fl_mix_rate {
	int available;  /* 0: value is meaningless, why says what is missing */
	double value;   /* events per 1000 instructions (ir_hw) */
	char why[96];   /* reason when unavailable */
};

/* Dynamic counts (instructions executed) and derived rates. */
struct fl_mix {
	uint64_t ir_total;       /* Ir total of the callgrind file (sum of self costs) */
	uint64_t ir_hw;          /* ir_total - rep_ir_removed: instructions as hardware
	                          * retires them; the rates' denominator */
	uint64_t insns;          /* classified: executions at addresses matched to an
	                          * instruction (Ir, each rep string execution once) */
	uint64_t rep_ir;         /* valgrind Ir at rep string instructions */
	uint64_t rep_execs;      /* ... their executions (what hardware retires) */
	uint64_t rep_ir_removed; /* rep_ir - rep_execs: per-iteration Ir the correction took out */
	uint64_t rep_uncorrected_ir; /* Ir at rep string instructions without jcnd data */
	uint64_t rep_removed_loads;  /* of rep_ir_removed: at instructions reading memory */
	uint64_t rep_removed_stores; /* ... writing memory (movs: both). With rep_ir_removed
	                              * they give the mix as valgrind's Ir counts it, for
	                              * comparison with uncorrected figures */
	uint64_t plt_ir;         /* PLT-stub instructions callgrind charged to call sites
	                          * (cgparse.h), classified as their jumps and plain
	                          * instructions, not as the call at that address */
	int rep_corrected;       /* 1: the rep correction ran (instructions were classified);
	                          * 0: ir_hw = ir_total, uncorrected (fl_mix_rates alone) */
	uint64_t cond;           /* conditional branches executed */
	uint64_t cond_taken;     /* ... taken (jcnd= counts at conditional-branch addresses) */
	uint64_t jmp;            /* direct unconditional jumps */
	uint64_t jmp_ind;        /* indirect jumps */
	uint64_t call;           /* direct calls */
	uint64_t call_ind;       /* indirect calls */
	uint64_t ret;            /* returns */
	uint64_t loads;          /* instructions reading memory (includes rmw) */
	uint64_t stores;         /* instructions writing memory (includes rmw) */
	uint64_t rmw;            /* instructions both reading and writing memory */
	uint64_t mem;            /* instructions touching memory: loads + stores - rmw */
	uint64_t scalar_fp;      /* x87 and SSE/AVX scalar FP */
	uint64_t vector;         /* other SIMD */
	uint64_t int_div;        /* div, idiv */
	uint64_t fp_div;         /* FP divide and square root */
	uint64_t other;          /* no flow and no flag */
	uint64_t taken_branches; /* cond_taken + jmp + jmp_ind + call + call_ind + ret */
	double taken_rate;       /* cond_taken / cond (0 when no conditional branches) */
	double insns_per_taken;  /* insns / taken_branches (0 when none taken) */
	uint64_t unmapped_addrs; /* addresses whose object was not given (or no ob=) */
	uint64_t unmapped_ir;    /* ... their Ir */
	uint64_t unmatched_addrs; /* addresses of given objects with no instruction start */
	uint64_t unmatched_ir;   /* ... their Ir */
	uint64_t jcnd_elsewhere; /* addresses with jcnd= data neither conditional nor rep
	                          * string (rep string jcnd= is the correction's input) */
	struct fl_mix_rate l1i_mpki;  /* 1000 * I1mr / Ir */
	struct fl_mix_rate lli_mpki;  /* 1000 * ILmr / Ir */
	struct fl_mix_rate cond_mpki; /* 1000 * Bcm / Ir (conditional mispredicts) */
	struct fl_mix_rate ind_mpki;  /* 1000 * Bim / Ir (indirect mispredicts) */
};

/* Compute m from cg (needs positions with instr and an Ir event) and nobjs objects (0 is
 * allowed: then only the rates and ir_total are meaningful). Objects with guess_bias get
 * their bias written. Returns 0, or -1 with err set (no instr positions, no Ir, bias guess
 * failed, out of memory). */
int fl_mix_compute(struct fl_mix *m, const struct fl_cg *cg, struct fl_mix_obj *objs,
	size_t nobjs, char *err, size_t errlen);

/* Per-kilo-instruction rates only (fills the four fl_mix_rate fields, ir_total and
 * ir_hw = ir_total: without classification the rep correction cannot run). */
void fl_mix_rates(struct fl_mix *m, const struct fl_cg *cg);

/* Write a small human-readable table of m to out. */
void fl_mix_print(const struct fl_mix *m, FILE *out);

#endif
