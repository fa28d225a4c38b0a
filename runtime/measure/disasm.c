/* disasm.c: objdump (AT&T) text → sorted, classified x86-64 instruction table. */
#include "disasm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"
#include "process.h"

#define DIS_MAX_OPS 8     /* operands looked at */
#define DIS_MAX_WORD 48   /* longest mnemonic word kept for classification */

/* ---- mnemonic helpers ---- */

static int dis_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int dis_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* base is name, optionally with one AT&T size suffix (addl, callq, pushq, stosb). */
static int dis_is(const char *base, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(base, name, n) != 0)
		return 0;
	return base[n] == 0 || (base[n + 1] == 0 && strchr("bwlq", base[n]));
}

/* base matches any of the NULL-terminated names (with a size suffix). */
static int dis_is_any(const char *base, const char *const *names)
{
	for (; *names; names++)
		if (dis_is(base, *names))
			return 1;
	return 0;
}

static int dis_starts_any(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (dis_starts(s, *prefixes))
			return 1;
	return 0;
}

static int dis_is_prefix(const char *w, size_t n)
{
	static const char *const prefixes[] = {
		"lock", "rep", "repz", "repe", "repnz", "repne", "notrack", "bnd", "data16",
		"data32", "addr16", "addr32", "cs", "ds", "es", "fs", "gs", "ss", "xacquire",
		"xrelease", NULL,
	};
	if (n >= 3 && strncmp(w, "rex", 3) == 0)
		return 1;
	if (n >= 2 && w[0] == '{' && w[n - 1] == '}')
		return 1; /* {vex}, {vex3}, {evex}, {load}, {store}, {disp32} */
	for (const char *const *p = prefixes; *p; p++)
		if (strlen(*p) == n && strncmp(w, *p, n) == 0)
			return 1;
	return 0;
}

/* Split objdump's instruction text: *mnem_len covers prefix words and the mnemonic, and
 * the returned pointer is the operand text (never NULL). */
static const char *dis_split(const char *text, size_t *mnem_len)
{
	const char *p = text, *end = text;
	for (;;) {
		while (*p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (p == w)
			break;
		end = p;
		if (!dis_is_prefix(w, (size_t)(p - w)))
			break;
	}
	*mnem_len = (size_t)(end - text);
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* ---- operands ---- */

struct dis_ops {
	unsigned n;        /* operands */
	unsigned mem;      /* bit i: operand i is memory */
	int indirect;      /* first operand starts with '*' */
	int simd;          /* some operand names an xmm/ymm/zmm/mm/k register */
};

static int dis_has_reg(const char *s, const char *reg, int need_digit)
{
	for (const char *p = s; (p = strstr(p, reg)) != NULL; p++)
		if (!need_digit || (p[strlen(reg)] >= '0' && p[strlen(reg)] <= '9'))
			return 1;
	return 0;
}

/* One operand (trimmed, braces removed): memory? (branch: targets are not memory) */
static int dis_op_is_mem(const char *o, size_t n, int branch)
{
	if (!n || o[0] == '$')
		return 0;
	if (o[0] == '%') {
		/* "%fs:0x28" and "%es:(%rdi)" are memory; "%rax" and x87 "%st(1)" are not. */
		const char *c = memchr(o, ':', n);
		return c && c + 1 < o + n && c[1] != '%';
	}
	if (memchr(o, '(', n))
		return 1;
	return !branch; /* bare number: absolute address, or a direct branch target */
}

static void dis_operands(const char *ops, int branch, struct dis_ops *r)
{
	memset(r, 0, sizeof *r);
	if (!ops)
		return;
	r->simd = dis_has_reg(ops, "%xmm", 0) || dis_has_reg(ops, "%ymm", 0) ||
		dis_has_reg(ops, "%zmm", 0) || dis_has_reg(ops, "%mm", 1) || dis_has_reg(ops, "%k", 1);
	char buf[256];
	size_t len = 0;
	int paren = 0, brace = 0;
	/* Stop at objdump annotations: "<sym+0x10>" and "# 4028 <x>". */
	for (const char *p = ops;; p++) {
		char c = *p;
		int end = c == 0 || c == '#' || c == '<';
		if (end || (c == ',' && paren == 0 && brace == 0)) {
			size_t a = 0, b = len;
			while (a < b && buf[a] == ' ')
				a++;
			while (b > a && buf[b - 1] == ' ')
				b--;
			if (a < b && r->n < DIS_MAX_OPS) {
				int ind = buf[a] == '*';
				if (r->n == 0)
					r->indirect = ind;
				if (dis_op_is_mem(buf + a + ind, b - a - (size_t)ind, branch && !ind))
					r->mem |= 1u << r->n;
				r->n++;
			}
			len = 0;
			if (end)
				break;
			continue;
		}
		/* {%k1}{z}{rn-sae}: decorations, not operands. */
		if (c == '{' || c == '}') {
			brace += c == '{' ? 1 : -(brace > 0);
			continue;
		}
		if (brace > 0)
			continue;
		if (c == '(')
			paren++;
		else if (c == ')')
			paren -= paren > 0;
		if (len < sizeof buf - 1)
			buf[len++] = c == '\t' ? ' ' : c;
	}
}

/* ---- classification ---- */

static unsigned dis_memory(const char *b, const struct dis_ops *o, enum fl_dis_flow flow)
{
	static const char *const nomem[] = { "lea", "clwb", "cldemote", "endbr64", "endbr32",
		"invlpg", NULL };
	static const char *const cmp_like[] = { "cmp", "test", "bt", "ucomiss", "ucomisd",
		"comiss", "comisd", "vucomiss", "vucomisd", "vcomiss", "vcomisd", "ptest", "vptest",
		"vtestps", "vtestpd", NULL };
	static const char *const rmw_dst[] = { "add", "adc", "sub", "sbb", "and", "or", "xor",
		"inc", "dec", "neg", "not", "shl", "shr", "sal", "sar", "rol", "ror", "rcl", "rcr",
		"shld", "shrd", "bts", "btr", "btc", NULL };
	static const char *const rmw_any[] = { "xchg", "xadd", "cmpxchg", "cmpxchg8b",
		"cmpxchg16b", NULL };
	static const char *const store_sole[] = { "stmxcsr", "vstmxcsr", "sgdt", "sidt", "sldt",
		"smsw", NULL };
	unsigned last = o->n ? 1u << (o->n - 1) : 0;
	unsigned m = o->mem;

	switch (flow) {
	case FL_DIS_COND:
	case FL_DIS_JMP:
		return 0;
	case FL_DIS_JMP_IND:
		return m ? FL_DIS_LOAD : 0;
	case FL_DIS_CALL:
		return FL_DIS_STORE;
	case FL_DIS_CALL_IND:
		return FL_DIS_STORE | (m ? FL_DIS_LOAD : 0);
	case FL_DIS_RET:
		return FL_DIS_LOAD;
	case FL_DIS_NONE:
		break;
	}
	if (dis_is_any(b, nomem) || dis_starts(b, "nop") || dis_starts(b, "prefetch") ||
		dis_starts(b, "clflush"))
		return 0;
	if (dis_is(b, "push") || dis_is(b, "pushf") || dis_is(b, "enter"))
		return FL_DIS_STORE | (m ? FL_DIS_LOAD : 0);
	if (dis_is(b, "pop") || dis_is(b, "popf"))
		return FL_DIS_LOAD | (m ? FL_DIS_STORE : 0);
	if (dis_is(b, "leave"))
		return FL_DIS_LOAD;
	if (!o->simd) {
		/* String instructions: memory through rsi/rdi whatever objdump prints. */
		if (dis_is(b, "movs"))
			return FL_DIS_LOAD | FL_DIS_STORE;
		if (dis_is(b, "stos") || dis_is(b, "ins"))
			return FL_DIS_STORE;
		if (dis_is(b, "lods") || dis_is(b, "cmps") || dis_is(b, "scas") || dis_is(b, "outs"))
			return FL_DIS_LOAD;
	}
	if (!m)
		return 0;
	if (dis_is_any(b, cmp_like))
		return FL_DIS_LOAD;
	if (dis_is_any(b, rmw_any))
		return FL_DIS_LOAD | FL_DIS_STORE;
	if (dis_is_any(b, rmw_dst))
		return (m & last ? FL_DIS_LOAD | FL_DIS_STORE : FL_DIS_LOAD);
	if (b[0] == 'f') {
		/* x87: the memory operand is the only one; stores are named st/save. */
		if (dis_starts(b, "fst") || dis_starts(b, "fist") || dis_starts(b, "fnst") ||
			dis_starts(b, "fsave") || dis_starts(b, "fnsave") ||
			dis_starts(b, "fxsave") || dis_starts(b, "fbstp"))
			return FL_DIS_STORE;
		return FL_DIS_LOAD;
	}
	if (dis_starts(b, "set") && strlen(b) <= 6)
		return FL_DIS_STORE;
	if (dis_is_any(b, store_sole) || dis_starts(b, "xsave"))
		return FL_DIS_STORE;
	if (o->n >= 2 && (m & last))
		return FL_DIS_STORE | (m & ~last ? FL_DIS_LOAD : 0);
	return FL_DIS_LOAD;
}

/* SSE/AVX scalar floating point, arithmetic or not (b without a leading 'v'). */
static int dis_simd_scalar(const char *b)
{
	if (dis_starts(b, "cvt"))
		return strchr(b + 3, 'p') == NULL; /* cvtsi2sd, cvttsd2si; not cvtdq2ps */
	if (dis_starts(b, "ucomis") || dis_starts(b, "comis"))
		return 1;
	if (b[0] == 'p' || strstr(b, "broadcast"))
		return 0; /* pminsd, pabsd: packed integer; vbroadcastss: a vector fill */
	return dis_ends(b, "ss") || dis_ends(b, "sd");
}

/* Scalar FP counts arithmetic, as the hardware events behind production's share do
 * (DCPerf PR 705's "scalar FP", measured with counters on Intel Cooper Lake among
 * others): Intel's FP_ARITH_INST_RETIRED.SCALAR_SINGLE/DOUBLE count the SSE/AVX scalar
 * ADD SUB MUL DIV MIN MAX SQRT RCP14 RSQRT14 RANGE FM(N)ADD/SUB (Intel perfmon event
 * files), not moves, conversions or compares. s has no leading 'v' and is scalar. */
static int dis_simd_scalar_arith(const char *s)
{
	static const char *const stems[] = { "add", "sub", "mul", "div", "min", "max", "sqrt",
		"rcp14", "rsqrt14", "range", "fmadd", "fmsub", "fnmadd", "fnmsub", NULL };

	return dis_starts_any(s, stems);
}

/* x87 arithmetic, by the same rule: loads, stores, exchanges, compares and control
 * words are not. (The Intel events above do not count x87 at all; x87 arithmetic is
 * counted here as scalar FP all the same, and is rare in this code.) */
static int dis_x87_arith(const char *b)
{
	static const char *const stems[] = { "fadd", "fiadd", "fsub", "fisub", "fmul", "fimul",
		"fdiv", "fidiv", "fsqrt", "fprem", "fscale", "frndint", "fsin", "fcos", "fptan",
		"fpatan", "f2xm1", "fyl2x", NULL };

	return dis_starts_any(b, stems);
}

static unsigned dis_compute(const char *b, const struct dis_ops *o)
{
	unsigned f = 0;
	if (dis_is(b, "div") || dis_is(b, "idiv"))
		f |= FL_DIS_INT_DIV;
	if (b[0] == 'f' && !dis_starts(b, "fxsave") && !dis_starts(b, "fxrstor") &&
		strcmp(b, "femms") != 0) {
		if (dis_x87_arith(b))
			f |= FL_DIS_SCALAR_FP;
		if (dis_starts(b, "fdiv") || dis_starts(b, "fidiv") || strcmp(b, "fsqrt") == 0)
			f |= FL_DIS_FP_DIV;
		return f;
	}
	if (o->simd) {
		const char *s = b[0] == 'v' ? b + 1 : b;
		if (!dis_simd_scalar(s))
			f |= FL_DIS_VECTOR;
		else if (dis_simd_scalar_arith(s))
			f |= FL_DIS_SCALAR_FP;
		if (dis_starts(s, "div") || dis_starts(s, "sqrt"))
			f |= FL_DIS_FP_DIV;
	} else if (dis_starts(b, "vzero") || strcmp(b, "emms") == 0) {
		f |= FL_DIS_VECTOR;
	}
	return f;
}

static enum fl_dis_flow dis_flow(const char *b, const struct dis_ops *o)
{
	static const char *const loops[] = { "loop", "loope", "loopne", "loopz", "loopnz", NULL };
	static const char *const rets[] = { "ret", "lret", "iret", "iretd", NULL };
	if (dis_is(b, "jmp"))
		return o->indirect ? FL_DIS_JMP_IND : FL_DIS_JMP;
	if (dis_is(b, "ljmp"))
		return FL_DIS_JMP_IND;
	if (b[0] == 'j' && b[1])
		return FL_DIS_COND; /* jcc, jcxz, jecxz, jrcxz */
	if (dis_is_any(b, loops))
		return FL_DIS_COND;
	if (dis_is(b, "call"))
		return o->indirect ? FL_DIS_CALL_IND : FL_DIS_CALL;
	if (dis_is(b, "lcall"))
		return FL_DIS_CALL_IND;
	if (dis_is_any(b, rets))
		return FL_DIS_RET;
	return FL_DIS_NONE;
}

/* String instructions, which a rep prefix repeats (cmpsd/movsd as SSE take %xmm
 * operands and are excluded by the caller's simd test). */
static const char *const dis_string_ops[] = {
	"movs", "stos", "lods", "cmps", "scas", "ins", "outs", NULL,
};

/* Does a rep/repe/repz/repne/repnz word come before the mnemonic at w? */
static int dis_rep_prefixed(const char *mnem, const char *w)
{
	for (const char *p = mnem; p < w;) {
		while (p < w && (*p == ' ' || *p == '\t'))
			p++;
		const char *q = p;
		while (q < w && *q != ' ' && *q != '\t')
			q++;
		size_t n = (size_t)(q - p);
		if ((n == 3 && strncmp(p, "rep", 3) == 0) ||
		    (n == 4 && (strncmp(p, "repz", 4) == 0 || strncmp(p, "repe", 4) == 0)) ||
		    (n == 5 && (strncmp(p, "repnz", 5) == 0 || strncmp(p, "repne", 5) == 0)))
			return 1;
		p = q;
	}
	return 0;
}

struct fl_dis_class fl_dis_classify(const char *mnem, const char *ops)
{
	struct fl_dis_class c = { FL_DIS_NONE, 0, 0 };
	char b[DIS_MAX_WORD];
	size_t mlen;
	if (!mnem)
		return c;
	/* The last word of the mnemonic field is the mnemonic, the others are prefixes. */
	dis_split(mnem, &mlen);
	const char *w = mnem + mlen;
	while (w > mnem && w[-1] != ' ' && w[-1] != '\t')
		w--;
	size_t n = (size_t)(mnem + mlen - w);
	if (!n || n >= sizeof b || dis_is_prefix(w, n))
		return c;
	memcpy(b, w, n);
	b[n] = 0;
	char *hint = strchr(b, ',');
	if (hint)
		*hint = 0; /* jne,pt */
	struct dis_ops o;
	/* Operands of these are code addresses, not absolute memory. */
	int branch = (b[0] == 'j' || dis_is(b, "call") || dis_starts(b, "loop") ||
		dis_is(b, "lcall") || strcmp(b, "xbegin") == 0);
	dis_operands(ops, branch, &o);
	c.flow = dis_flow(b, &o);
	c.flags = dis_memory(b, &o, c.flow) | dis_compute(b, &o);
	c.rep_string = !o.simd && dis_rep_prefixed(mnem, w) && dis_is_any(b, dis_string_ops);
	return c;
}

const char *fl_dis_flow_name(enum fl_dis_flow flow)
{
	switch (flow) {
	case FL_DIS_NONE: return "none";
	case FL_DIS_COND: return "cond";
	case FL_DIS_JMP: return "jmp";
	case FL_DIS_JMP_IND: return "jmp_ind";
	case FL_DIS_CALL: return "call";
	case FL_DIS_CALL_IND: return "call_ind";
	case FL_DIS_RET: return "ret";
	}
	return "?";
}

char *fl_dis_class_str(struct fl_dis_class c, char *buf, size_t len)
{
	static const char *const names[] = { "load", "store", "scalar_fp", "vector", "int_div",
		"fp_div" };
	size_t at = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	if (c.flow != FL_DIS_NONE || !c.flags)
		at += (size_t)snprintf(buf, len, "%s", c.flow == FL_DIS_NONE ? "other" :
			fl_dis_flow_name(c.flow));
	for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
		if (c.flags & (1u << i) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "|" : "", names[i]);
	return buf;
}

/* ---- table ---- */

void fl_dis_init(struct fl_dis *d)
{
	memset(d, 0, sizeof *d);
}

void fl_dis_free(struct fl_dis *d)
{
	free(d->path);
	free(d->insns);
	free(d->pool);
	fl_dis_init(d);
}

const char *fl_dis_mnem(const struct fl_dis *d, const struct fl_dis_insn *i)
{
	return d->pool + i->text;
}

const char *fl_dis_ops(const struct fl_dis *d, const struct fl_dis_insn *i)
{
	const char *m = d->pool + i->text;
	return m + strlen(m) + 1;
}

const struct fl_dis_insn *fl_dis_find(const struct fl_dis *d, uint64_t addr)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->insns[lo].addr == addr ? &d->insns[lo] : NULL;
}

struct dis_parse {
	struct fl_dis *d;
	const char *name;
	uint64_t lineno;
	char *err;
	size_t errlen;
	int prev_open;     /* the last instruction may still get a length from the next */
	int raw;           /* raw bytes seen: lengths come from byte counts */
};

/* "name:line: " and the message into the caller's err; -1. */
#define dis_fail(p, ...) \
	fl_errf_at((p)->err, (p)->errlen, (p)->name, (p)->lineno, __VA_ARGS__)

/* Count "xx xx xx " raw bytes at s (up to a tab or NUL); 0 if s is not only hex pairs. */
static unsigned dis_raw_bytes(const char *s, const char **after)
{
	static const char hex[] = "0123456789abcdef";
	unsigned n = 0;
	const char *p = s;
	for (;;) {
		if (!*p || *p == '\t')
			break;
		if (!strchr(hex, p[0]) || !p[0] || !strchr(hex, p[1]) || !p[1] ||
			!(p[2] == ' ' || p[2] == '\t' || p[2] == 0))
			return 0;
		n++;
		p += 2;
		while (*p == ' ')
			p++;
	}
	*after = p;
	return n;
}

static int dis_add(struct dis_parse *p, uint64_t addr, const char *text, unsigned raw_len)
{
	struct fl_dis *d = p->d;
	size_t mlen;
	const char *ops = dis_split(text, &mlen);
	size_t olen = strlen(ops);
	while (olen && (ops[olen - 1] == ' ' || ops[olen - 1] == '\t'))
		olen--;
	if (!mlen)
		return dis_fail(p, "instruction without mnemonic");
	if (strstr(ops, " PTR ") || strstr(ops, "PTR ["))
		return dis_fail(p, "Intel syntax; use objdump -M att");
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct fl_dis_insn *n = realloc(d->insns, cap * sizeof *n);
		if (!n)
			return dis_fail(p, "out of memory");
		d->insns = n;
		d->cap = cap;
	}
	size_t need = mlen + olen + 2;
	if (d->pool_len + need > UINT32_MAX)
		return dis_fail(p, "instruction text exceeds 4 GiB");
	if (d->pool_len + need > d->pool_cap) {
		size_t cap = d->pool_cap ? d->pool_cap * 2 : 65536;
		while (cap < d->pool_len + need)
			cap *= 2;
		char *n = realloc(d->pool, cap);
		if (!n)
			return dis_fail(p, "out of memory");
		d->pool = n;
		d->pool_cap = cap;
	}
	struct fl_dis_insn *i = &d->insns[d->n];
	i->addr = addr;
	i->len = raw_len;
	i->text = (uint32_t)d->pool_len;
	char *m = d->pool + d->pool_len;
	memcpy(m, text, mlen);
	m[mlen] = 0;
	memcpy(m + mlen + 1, ops, olen);
	m[mlen + 1 + olen] = 0;
	d->pool_len += need;
	i->cls = fl_dis_classify(m, m + mlen + 1);
	/* Without raw bytes, the previous instruction ends where this one starts. */
	if (p->prev_open && d->n && i[-1].len == 0 && addr > i[-1].addr && addr - i[-1].addr <= 15)
		i[-1].len = (uint32_t)(addr - i[-1].addr);
	d->n++;
	p->prev_open = 1;
	return 0;
}

static int dis_line(struct dis_parse *p, char *line)
{
	struct fl_dis *d = p->d;
	char *s = line;
	if (strncmp(s, "Disassembly of section ", 23) == 0) {
		p->prev_open = 0;
		return 0;
	}
	char *ff = strstr(s, ":     file format ");
	if (ff && s[0] != ' ' && s[0] != '\t') {
		if (!d->path) {
			*ff = 0;
			if (!(d->path = strdup(s)))
				return dis_fail(p, "out of memory");
		}
		return 0;
	}
	while (*s == ' ')
		s++;
	if (strcmp(s, "\t...") == 0 || strcmp(s, "...") == 0) {
		p->prev_open = 0;
		return 0;
	}
	uint64_t addr = 0;
	char *h = s;
	for (; (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'); s++) {
		if (addr >> 60)
			return dis_fail(p, "address too long");
		addr = addr << 4 | (uint64_t)(*s <= '9' ? *s - '0' : *s - 'a' + 10);
	}
	if (s == h || s[0] != ':' || s[1] != '\t')
		return 0; /* symbol line "0000000000001149 <f>:", blank, or other chatter */
	s += 2;
	const char *after;
	unsigned raw = dis_raw_bytes(s, &after);
	if (raw) {
		p->raw = 1;
		if (*after != '\t') {
			/* Continuation of the previous instruction's bytes. */
			if (d->n && p->prev_open)
				d->insns[d->n - 1].len += raw;
			return 0;
		}
		s = (char *)after + 1;
	}
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	if (!n)
		return 0;
	return dis_add(p, addr, s, raw);
}

static int dis_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct fl_dis_insn *)a)->addr, y = ((const struct fl_dis_insn *)b)->addr;
	return x < y ? -1 : x > y;
}

int fl_dis_parse_stream(struct fl_dis *d, FILE *in, const char *name, char *err,
	size_t errlen)
{
	struct dis_parse p = { .d = d, .name = name ? name : "objdump", .err = err,
		.errlen = errlen };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	if (err && errlen)
		err[0] = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		p.lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if ((rc = dis_line(&p, line)) != 0)
			break;
	}
	free(line);
	if (rc == 0 && ferror(in))
		rc = dis_fail(&p, "read error");
	if (rc != 0)
		return rc;
	/* Sections come in address order in practice; sort anyway, then reject repeats. */
	if (d->n)
		qsort(d->insns, d->n, sizeof *d->insns, dis_cmp);
	for (size_t i = 1; i < d->n; i++)
		if (d->insns[i].addr == d->insns[i - 1].addr) {
			fl_errf(err, errlen, "%s: duplicate address 0x%llx (relocatable "
				"object?)", p.name, (unsigned long long)d->insns[i].addr);
			return -1;
		}
	return 0;
}

int fl_dis_parse_file(struct fl_dis *d, const char *path, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		fl_errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = fl_dis_parse_stream(d, in, path, err, errlen);
	fclose(in);
	return rc;
}

const char *fl_objdump_prog(void)
{
	const char *prog = getenv("OBJDUMP");
	return prog && *prog ? prog : "objdump";
}

pid_t fl_objdump_open(const char *object, FILE **in, char *err, size_t errlen)
{
	const char *prog = fl_objdump_prog();
	const char *const argv[] = { prog, "-d", "--no-show-raw-insn", "-M", "att", "--",
		object, NULL };
	int fd = -1;
	pid_t pid = fl_spawn(argv, &(struct fl_spawn_opts){ .stdout_pipe = &fd }, err, errlen);

	if (pid < 0)
		return -1;
	*in = fdopen(fd, "r");
	if (*in == NULL) {
		fl_errf(err, errlen, "fdopen: %s", strerror(errno));
		close(fd);
		fl_objdump_close(pid, NULL, object, NULL, 0);
		return -1;
	}
	return pid;
}

int fl_objdump_close(pid_t pid, FILE *in, const char *object, char *err, size_t errlen)
{
	int st;
	if (in)
		fclose(in);  /* a writer still going gets SIGPIPE, which the status shows */
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fl_errf(err, errlen, "wait for %s: %s", fl_objdump_prog(), strerror(errno));
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	fl_errf(err, errlen, "%s -d %s: %s %d", fl_objdump_prog(), object,
		WIFEXITED(st) ? "exit status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return -1;
}

int fl_dis_load(struct fl_dis *d, const char *object, char *err, size_t errlen)
{
	char label[512];
	FILE *in;
	pid_t pid = fl_objdump_open(object, &in, err, errlen);

	if (pid < 0)
		return -1;
	snprintf(label, sizeof label, "%s -d %s", fl_objdump_prog(), object);
	int rc = fl_dis_parse_stream(d, in, label, err, errlen);
	char why[512];
	if (fl_objdump_close(pid, in, object, why, sizeof why) != 0 && rc == 0) {
		fl_errf(err, errlen, "%s", why);
		rc = -1;
	}
	if (rc == 0 && d->n == 0) {
		fl_errf(err, errlen, "%s -d %s: no instructions", fl_objdump_prog(), object);
		rc = -1;
	}
	return rc;
}

/* Matches among the sample for one candidate bias; stops once it cannot beat best. */
static size_t dis_score(const struct fl_dis *d, const uint64_t *addrs, size_t n, size_t step,
	uint64_t bias, size_t tried, size_t best)
{
	size_t hits = 0, seen = 0;
	for (size_t i = 0; i < n; i += step) {
		seen++;
		if (addrs[i] >= bias && fl_dis_find(d, addrs[i] - bias))
			hits++;
		else if (tried - seen + hits < best)
			break;
	}
	return hits;
}

int fl_dis_guess_bias(const struct fl_dis *d, const uint64_t *addrs, size_t n,
	uint64_t *bias, size_t *matched, char *err, size_t errlen)
{
	if (!n || !d->n) {
		fl_errf(err, errlen, "bias: no %s", n ? "instructions" : "addresses");
		return -1;
	}
	size_t step = n > 4096 ? n / 4096 : 1, tried = (n + step - 1) / step;
	/* Anchor on the smallest address: the real bias maps it onto some instruction with
	 * the same page offset. */
	uint64_t a0 = addrs[0];
	for (size_t i = 1; i < n; i++)
		if (addrs[i] < a0)
			a0 = addrs[i];
	size_t best = 0, ties = 0;
	uint64_t best_bias = 0;
	for (size_t i = 0; i < d->n; i++) {
		uint64_t va = d->insns[i].addr;
		if ((va & 0xfff) != (a0 & 0xfff) || va > a0)
			continue;
		uint64_t b = a0 - va;
		size_t s = dis_score(d, addrs, n, step, b, tried, best);
		if (s > best) {
			best = s;
			best_bias = b;
			ties = 0;
		} else if (s == best && s) {
			ties++;
		}
	}
	if (!best) {
		fl_errf(err, errlen, "bias: no load bias maps the addresses onto instructions");
		return -1;
	}
	if (ties) {
		fl_errf(err, errlen, "bias: %zu load biases tie at %zu of %zu addresses", ties + 1,
			best, tried);
		return -1;
	}
	*bias = best_bias;
	if (matched)
		*matched = best;
	return 0;
}
