/* disasm.h: x86-64 instruction table from objdump text, with a static class per instruction.
 *
 * Input: GNU objdump's `objdump -d --no-show-raw-insn -M att FILE` (AT&T syntax only;
 * Intel-syntax text is rejected). Raw-byte columns (without --no-show-raw-insn) are also
 * accepted and then give exact lengths. Lines used:
 *   "FILE:     file format elf64-x86-64"      the object's path (fl_dis.path)
 *   "Disassembly of section .text:"          a section start (lengths never cross it)
 *   "    1149:\tpush   %rbx"                  an instruction at file VA 0x1149
 *   "\t..."                                   skipped zeros (ends the previous length)
 * Everything else (symbol lines, blank lines) is skipped. Addresses are file virtual
 * addresses as objdump prints them; a linked executable or shared object is expected
 * (a relocatable .o repeats addresses per section, which is rejected as a duplicate).
 * Length is the distance to the next instruction in the same section, or 0 if unknown.
 *
 * Classification (fl_dis_classify), from the mnemonic after dropping prefixes (lock, rep*,
 * notrack, bnd, data16, addr32, segment overrides, xacquire/xrelease, {vex}, rex*), an
 * AT&T size suffix (b w l q) and branch hints (",pt"/",pn"):
 *   flow   cond: j<cc>, jcxz/jecxz/jrcxz, loop/loope/loopne/loopz/loopnz.
 *          jmp: direct jmp; jmp_ind: jmp *X and ljmp. call: direct call; call_ind: call *X
 *          and lcall. ret: ret, lret, iret*. Everything else (syscall, int, ud2) is none.
 *   memory an operand is memory when it has "(", a segment override on a non-register
 *          ("%fs:0x28"), or is a bare absolute address ("0x601040", not for branches).
 *          Never memory: lea, nop*, prefetch*, clflush*, clwb, endbr*.
 *          Compare-like (cmp, test, bt, [v]ucomis*, [v]comis*, [v]ptest, vtestp*): load only.
 *          Read-modify-write with a memory destination (last operand) is load+store: add adc
 *          sub sbb and or xor inc dec neg not shl shr sal sar rol ror rcl rcr shld shrd bts btr
 *          btc; xchg, xadd and cmpxchg* with any memory operand.
 *          Otherwise a memory last operand is a store (mov*, setcc, pextr*, x87 fst*, fist*,
 *          fnst*, fsave, fxsave...), and a memory source or sole operand is a load (x87 fld,
 *          mul/div *X, ...).
 *          Implicit stack and string accesses: push = store (push mem: also load), pop =
 *          load (pop mem: also store), call = store (return address; call *mem: also load),
 *          ret/lret/iret and leave = load, enter = store, movs = load+store, stos/ins =
 *          store, lods/cmps/scas/outs = load. A rep-prefixed string instruction is one
 *          instruction per iteration in valgrind's counts: rep_string marks it ("repz ret"
 *          and other rep prefixes on non-string instructions are not marked).
 *   fp     scalar_fp: x87 (f* except fxsave/fxrstor/femms) and SSE/AVX scalar forms
 *          ([v]...ss/sd such as addsd, movss, vfmadd231sd, cvt* without a packed type such
 *          as cvtsi2sd/cvttsd2si, [v]ucomis*, [v]comis*). vector: any other instruction
 *          with an %xmm/%ymm/%zmm/%mm/%k operand (packed FP and integer, GPR<->SIMD
 *          moves, broadcasts) and vzeroupper/vzeroall/emms.
 *   divide int_div: div, idiv. fp_div: [v]div{ss,sd,ps,pd}, [v]sqrt*, x87 fdiv*, fidiv*,
 *          fsqrt (rcp/rsqrt approximations are not divides).
 *   other  none of the above: no flow and no flags (mov reg,reg, arithmetic on registers,
 *          lea, nop, cmp/test on registers, ...).
 */
#ifndef FL_DISASM_H
#define FL_DISASM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Control flow of an instruction. */
enum fl_dis_flow {
	FL_DIS_NONE = 0,   /* falls through (including syscall, int) */
	FL_DIS_COND,       /* conditional branch */
	FL_DIS_JMP,        /* direct unconditional jump */
	FL_DIS_JMP_IND,    /* indirect jump */
	FL_DIS_CALL,       /* direct near call */
	FL_DIS_CALL_IND,   /* indirect call */
	FL_DIS_RET,        /* return */
};

/* Data and compute flags (any combination). */
enum {
	FL_DIS_LOAD = 1u << 0,      /* reads memory */
	FL_DIS_STORE = 1u << 1,     /* writes memory (LOAD|STORE: read-modify-write) */
	FL_DIS_SCALAR_FP = 1u << 2, /* x87 or SSE/AVX scalar FP arithmetic (not moves) */
	FL_DIS_VECTOR = 1u << 3,    /* SIMD other than scalar FP */
	FL_DIS_INT_DIV = 1u << 4,   /* div, idiv */
	FL_DIS_FP_DIV = 1u << 5,    /* floating-point divide or square root */
};

/* Static class of one instruction. */
struct fl_dis_class {
	enum fl_dis_flow flow; /* control flow */
	unsigned flags;        /* FL_DIS_* flags */
	int rep_string;        /* 1: rep/repe/repne + movs/stos/lods/cmps/scas/ins/outs, which
	                        * valgrind counts once per iteration and hardware retires once
	                        * per execution (mix.h corrects for it) */
};

/* One instruction of the table. */
struct fl_dis_insn {
	uint64_t addr;          /* file virtual address */
	uint32_t len;           /* bytes; 0 when not derivable */
	uint32_t text;          /* offset in fl_dis.pool: mnemonic (with prefixes), NUL, operands */
	struct fl_dis_class cls; /* fl_dis_classify of the text */
};

/* Instruction table of one object, sorted by address. */
struct fl_dis {
	char *path;               /* object path from objdump's header, or NULL */
	struct fl_dis_insn *insns; /* sorted by addr, no duplicates */
	size_t n;                 /* entries in insns */
	size_t cap;               /* allocated entries */
	char *pool;               /* mnemonic and operand strings */
	size_t pool_len;          /* bytes used in pool */
	size_t pool_cap;          /* bytes allocated */
};

/* Empty table. */
void fl_dis_init(struct fl_dis *d);

/* Free everything held by d; d is left empty. */
void fl_dis_free(struct fl_dis *d);

/* Parse objdump text from in into the empty table d. name labels errors. Returns 0, or -1
 * with err "name:LINE: problem" (Intel syntax, duplicate addresses, out of memory, ...). */
int fl_dis_parse_stream(struct fl_dis *d, FILE *in, const char *name, char *err,
	size_t errlen);
int fl_dis_parse_file(struct fl_dis *d, const char *path, char *err, size_t errlen);

/* Run `objdump -d --no-show-raw-insn -M att -- object` ($OBJDUMP overrides the program) and
 * parse its output into the empty table d. Returns 0, or -1 with err set (objdump missing
 * or failing, parse error). */
int fl_dis_load(struct fl_dis *d, const char *object, char *err, size_t errlen);

/* The disassembler: $OBJDUMP, else objdump. */
const char *fl_objdump_prog(void);

/* Start `objdump -d --no-show-raw-insn -M att -- object` (no shell) with its output on
 * *in. Its pid, or -1 with err. End it with fl_objdump_close. */
pid_t fl_objdump_open(const char *object, FILE **in, char *err, size_t errlen);

/* Close in (may be NULL) and reap pid: 0 when objdump exited 0, else -1 with err (may be
 * NULL) saying how it ended. */
int fl_objdump_close(pid_t pid, FILE *in, const char *object, char *err, size_t errlen);

/* Class of an instruction given objdump's AT&T mnemonic field (prefixes allowed) and
 * operand text (may hold objdump's "<sym>" and "# comment" annotations; NULL = none). */
struct fl_dis_class fl_dis_classify(const char *mnem, const char *ops);

/* Instruction starting exactly at file VA addr, or NULL. O(log n). */
const struct fl_dis_insn *fl_dis_find(const struct fl_dis *d, uint64_t addr);

/* Mnemonic and operand strings of an entry ("" when no operands). */
const char *fl_dis_mnem(const struct fl_dis *d, const struct fl_dis_insn *i);
const char *fl_dis_ops(const struct fl_dis *d, const struct fl_dis_insn *i);

/* Load bias (runtime VA - file VA) that maps the most of the n runtime addresses onto
 * instruction starts of d. Candidates map the smallest address onto an instruction with
 * the same page offset (so the bias is a multiple of 4096; that address must be valid);
 * at most 4096 addresses, evenly spaced, are scored. Returns 0 with *bias and, if matched
 * is non-NULL, how many scored addresses matched; -1 with err when n is 0, nothing matches,
 * or two biases tie. */
int fl_dis_guess_bias(const struct fl_dis *d, const uint64_t *addrs, size_t n,
	uint64_t *bias, size_t *matched, char *err, size_t errlen);

/* Short name of a flow ("cond", "jmp", ...) and a "flow|flag|flag" description of a class
 * written to buf (at most len bytes, NUL-terminated); returns buf. */
const char *fl_dis_flow_name(enum fl_dis_flow flow);
char *fl_dis_class_str(struct fl_dis_class c, char *buf, size_t len);

#endif
