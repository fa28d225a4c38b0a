/* mix.c: callgrind counts × objdump classes → dynamic instruction mix and MPKI. */
#include "mix.h"

#include <stdlib.h>
#include <string.h>

#include "cgparse.h"
#include "disasm.h"

static const char *mix_basename(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* 1000 * event / ir when both exist and ir > 0 (ir: Ir less the rep correction). */
static void mix_rate(struct fl_mix_rate *r, const struct fl_cg *cg, const char *event,
	const char *option, uint64_t ir)
{
	int e = fl_cg_event(cg, event);
	memset(r, 0, sizeof *r);
	if (!cg->nevents)
		snprintf(r->why, sizeof r->why, "no callgrind data");
	else if (cg->ir_event < 0)
		snprintf(r->why, sizeof r->why, "no Ir event");
	else if (e < 0)
		snprintf(r->why, sizeof r->why, "no %s event (callgrind %s)", event, option);
	else if (ir == 0)
		snprintf(r->why, sizeof r->why, "Ir is 0");
	else {
		r->available = 1;
		r->value = 1000.0 * (double)cg->totals[e] / (double)ir;
	}
}

static void mix_rates_over(struct fl_mix *m, const struct fl_cg *cg, uint64_t ir)
{
	mix_rate(&m->l1i_mpki, cg, "I1mr", "--cache-sim=yes", ir);
	mix_rate(&m->lli_mpki, cg, "ILmr", "--cache-sim=yes", ir);
	mix_rate(&m->cond_mpki, cg, "Bcm", "--branch-sim=yes", ir);
	mix_rate(&m->ind_mpki, cg, "Bim", "--branch-sim=yes", ir);
}

void fl_mix_rates(struct fl_mix *m, const struct fl_cg *cg)
{
	m->ir_total = cg->ir_event >= 0 ? cg->totals[cg->ir_event] : 0;
	m->ir_hw = m->ir_total;
	m->rep_corrected = 0;
	mix_rates_over(m, cg, m->ir_total);
}

/* Executions of a rep string instruction from its callgrind entry (see mix.h): every
 * taken jcnd= there re-entered the instruction for one more iteration. */
static uint64_t mix_rep_execs(struct fl_mix *m, const struct fl_cg_insn *e,
	struct fl_dis_class c)
{
	m->rep_ir += e->ir;
	if (e->njcnd == 0 || e->jcnd_taken > e->ir) {
		m->rep_uncorrected_ir += e->ir;
		m->rep_execs += e->ir;
		return e->ir;
	}
	m->rep_execs += e->ir - e->jcnd_taken;
	m->rep_ir_removed += e->jcnd_taken;
	if (c.flags & FL_DIS_LOAD)
		m->rep_removed_loads += e->jcnd_taken;
	if (c.flags & FL_DIS_STORE)
		m->rep_removed_stores += e->jcnd_taken;
	return e->ir - e->jcnd_taken;
}

/* Which given object each callgrind object is (-1: none): exact names first, then
 * basenames, so /lib/a/libx.so and /lib/b/libx.so can both be named exactly. */
static int mix_map_objects(const struct fl_cg *cg, const struct fl_mix_obj *objs,
	size_t nobjs, long *map, char *err, size_t errlen)
{
	for (size_t j = 0; j < nobjs; j++)
		if (!objs[j].dis || (!objs[j].ob_name && !objs[j].dis->path)) {
			snprintf(err, errlen, "mix: object %zu has no table or no name", j);
			return -1;
		}
	for (uint32_t i = 0; i < cg->nobjs; i++) {
		map[i] = -1;
		for (int pass = 0; pass < 2 && map[i] < 0; pass++)
			for (size_t j = 0; j < nobjs && map[i] < 0; j++) {
				const char *n = objs[j].ob_name ? objs[j].ob_name : objs[j].dis->path;
				if (pass == 0 ? strcmp(n, cg->objs[i]) == 0 :
					strcmp(mix_basename(n), mix_basename(cg->objs[i])) == 0)
					map[i] = (long)j;
			}
	}
	return 0;
}

static int mix_guess(const struct fl_cg *cg, struct fl_mix_obj *objs, size_t nobjs,
	const long *map, char *err, size_t errlen)
{
	uint64_t *addrs = NULL;
	int rc = 0;
	for (size_t j = 0; j < nobjs && rc == 0; j++) {
		if (!objs[j].guess_bias)
			continue;
		size_t n = 0;
		if (!addrs && !(addrs = malloc((cg->ninsns ? cg->ninsns : 1) * sizeof *addrs))) {
			snprintf(err, errlen, "mix: out of memory");
			return -1;
		}
		for (size_t i = 0; i < cg->ninsns; i++) {
			uint32_t o = cg->insns[i].obj;
			if (o != FL_CG_NO_OBJ && map[o] == (long)j)
				addrs[n++] = cg->insns[i].addr;
		}
		if (!n)
			continue; /* nothing executed there: the bias does not matter */
		char e[160];
		if (fl_dis_guess_bias(objs[j].dis, addrs, n, &objs[j].bias, NULL, e, sizeof e) != 0) {
			snprintf(err, errlen, "mix: %s: %s", objs[j].ob_name ? objs[j].ob_name :
				objs[j].dis->path, e);
			rc = -1;
		}
	}
	free(addrs);
	return rc;
}

static void mix_add(struct fl_mix *m, struct fl_dis_class c, uint64_t n)
{
	m->insns += n;
	switch (c.flow) {
	case FL_DIS_COND: m->cond += n; break;
	case FL_DIS_JMP: m->jmp += n; break;
	case FL_DIS_JMP_IND: m->jmp_ind += n; break;
	case FL_DIS_CALL: m->call += n; break;
	case FL_DIS_CALL_IND: m->call_ind += n; break;
	case FL_DIS_RET: m->ret += n; break;
	case FL_DIS_NONE: break;
	}
	if (c.flags & FL_DIS_LOAD)
		m->loads += n;
	if (c.flags & FL_DIS_STORE)
		m->stores += n;
	if ((c.flags & (FL_DIS_LOAD | FL_DIS_STORE)) == (FL_DIS_LOAD | FL_DIS_STORE))
		m->rmw += n;
	if (c.flags & (FL_DIS_LOAD | FL_DIS_STORE))
		m->mem += n;
	if (c.flags & FL_DIS_SCALAR_FP)
		m->scalar_fp += n;
	if (c.flags & FL_DIS_VECTOR)
		m->vector += n;
	if (c.flags & FL_DIS_INT_DIV)
		m->int_div += n;
	if (c.flags & FL_DIS_FP_DIV)
		m->fp_div += n;
	if (c.flow == FL_DIS_NONE && !c.flags)
		m->other += n;
}

/* PLT-stub code callgrind charged to a call site (cgparse.h): each stub ends in one
 * indirect jump through the GOT (a load), counted by the Bi event; the stub's other
 * instructions (endbr64, mold's mov $index,%r11d) are plain. Without Bi every stub
 * instruction counts as a jump (GNU ld's stub is the jump alone). */
static void mix_plt(struct fl_mix *m, const struct fl_cg_insn *e)
{
	uint64_t jumps = e->plt_jumps && e->plt_jumps <= e->plt_ir ? e->plt_jumps : e->plt_ir;
	mix_add(m, fl_dis_classify("jmp", "*0x0(%rip)"), jumps);
	mix_add(m, fl_dis_classify("nop", ""), e->plt_ir - jumps);
	m->plt_ir += e->plt_ir;
}

int fl_mix_compute(struct fl_mix *m, const struct fl_cg *cg, struct fl_mix_obj *objs,
	size_t nobjs, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	fl_mix_rates(m, cg);
	if (!cg->has_instr) {
		snprintf(err, errlen, "mix: callgrind data has no instr positions "
			"(run callgrind with --dump-instr=yes)");
		return -1;
	}
	if (cg->ir_event < 0) {
		snprintf(err, errlen, "mix: callgrind data has no Ir event");
		return -1;
	}
	long *map = malloc((cg->nobjs ? cg->nobjs : 1) * sizeof *map);
	if (!map) {
		snprintf(err, errlen, "mix: out of memory");
		return -1;
	}
	if (mix_map_objects(cg, objs, nobjs, map, err, errlen) != 0 ||
		mix_guess(cg, objs, nobjs, map, err, errlen) != 0) {
		free(map);
		return -1;
	}
	for (size_t i = 0; i < cg->ninsns; i++) {
		const struct fl_cg_insn *e = &cg->insns[i];
		long j = e->obj == FL_CG_NO_OBJ ? -1 : map[e->obj];
		if (j < 0) {
			m->unmapped_addrs++;
			m->unmapped_ir += e->ir;
			continue;
		}
		const struct fl_dis_insn *d = e->addr >= objs[j].bias ?
			fl_dis_find(objs[j].dis, e->addr - objs[j].bias) : NULL;
		if (!d) {
			m->unmatched_addrs++;
			m->unmatched_ir += e->ir;
			continue;
		}
		if (e->plt_ir && e->plt_ir <= e->ir && !d->cls.rep_string) {
			mix_add(m, d->cls, e->ir - e->plt_ir);
			mix_plt(m, e);
		} else {
			mix_add(m, d->cls, d->cls.rep_string ? mix_rep_execs(m, e, d->cls) : e->ir);
		}
		if (d->cls.flow == FL_DIS_COND)
			m->cond_taken += e->jcnd_taken;
		else if (e->njcnd && !d->cls.rep_string)
			m->jcnd_elsewhere++;
	}
	free(map);
	m->ir_hw = m->ir_total - m->rep_ir_removed;
	m->rep_corrected = 1;
	mix_rates_over(m, cg, m->ir_hw);
	m->taken_branches = m->cond_taken + m->jmp + m->jmp_ind + m->call + m->call_ind + m->ret;
	m->taken_rate = m->cond ? (double)m->cond_taken / (double)m->cond : 0;
	m->insns_per_taken = m->taken_branches ?
		(double)m->insns / (double)m->taken_branches : 0;
	return 0;
}

static void mix_row(FILE *out, const char *name, uint64_t n, uint64_t total)
{
	fprintf(out, "  %-22s %14llu %7.2f%%\n", name, (unsigned long long)n,
		total ? 100.0 * (double)n / (double)total : 0.0);
}

static void mix_rate_row(FILE *out, const char *name, const struct fl_mix_rate *r)
{
	if (r->available)
		fprintf(out, "  %-22s %14.3f\n", name, r->value);
	else
		fprintf(out, "  %-22s %14s  (%s)\n", name, "n/a", r->why);
}

void fl_mix_print(const struct fl_mix *m, FILE *out)
{
	uint64_t t = m->insns;
	fprintf(out, "dynamic instruction mix: %llu classified of %llu Ir\n",
		(unsigned long long)t, (unsigned long long)m->ir_total);
	if (m->rep_corrected)
		fprintf(out, "  rep string correction: %llu Ir removed (%.3f%% of Ir; %llu rep "
			"executions from %llu Ir%s), %llu instructions as hardware counts them\n",
			(unsigned long long)m->rep_ir_removed, m->ir_total ? 100.0 *
			(double)m->rep_ir_removed / (double)m->ir_total : 0.0,
			(unsigned long long)m->rep_execs, (unsigned long long)m->rep_ir,
			m->rep_uncorrected_ir ? "; some without jcnd data, uncorrected" : "",
			(unsigned long long)m->ir_hw);
	else
		fprintf(out, "  rep string correction: not applied (no classification): rates "
			"per valgrind Ir\n");
	if (m->plt_ir)
		fprintf(out, "  PLT stubs: %llu instructions callgrind charged to call sites, "
			"classified as their GOT jumps and plain instructions (not calls)\n",
			(unsigned long long)m->plt_ir);
	fprintf(out, "  %-22s %14s %8s\n", "class", "count", "share");
	mix_row(out, "conditional branch", m->cond, t);
	fprintf(out, "  %-22s %14llu %7.2f%% of conditional\n", "  taken",
		(unsigned long long)m->cond_taken, 100.0 * m->taken_rate);
	mix_row(out, "jump (direct)", m->jmp, t);
	mix_row(out, "jump (indirect)", m->jmp_ind, t);
	mix_row(out, "call (direct)", m->call, t);
	mix_row(out, "call (indirect)", m->call_ind, t);
	mix_row(out, "return", m->ret, t);
	mix_row(out, "load", m->loads, t);
	mix_row(out, "store", m->stores, t);
	mix_row(out, "load+store (rmw)", m->rmw, t);
	mix_row(out, "any memory", m->mem, t);
	mix_row(out, "scalar FP", m->scalar_fp, t);
	mix_row(out, "vector", m->vector, t);
	mix_row(out, "integer divide", m->int_div, t);
	mix_row(out, "FP divide/sqrt", m->fp_div, t);
	mix_row(out, "other", m->other, t);
	if (m->taken_branches)
		fprintf(out, "  %-22s %14.2f  (%llu taken branches)\n", "insns per taken branch",
			m->insns_per_taken, (unsigned long long)m->taken_branches);
	else
		fprintf(out, "  %-22s %14s  (no taken branches)\n", "insns per taken branch", "n/a");
	if (m->unmapped_addrs || m->unmatched_addrs || m->jcnd_elsewhere)
		fprintf(out, "  not classified: %llu addresses (%llu Ir) in objects not given, "
			"%llu (%llu Ir) not at an instruction; %llu jcnd= at non-branches\n",
			(unsigned long long)m->unmapped_addrs, (unsigned long long)m->unmapped_ir,
			(unsigned long long)m->unmatched_addrs, (unsigned long long)m->unmatched_ir,
			(unsigned long long)m->jcnd_elsewhere);
	fprintf(out, "per 1000 instructions (%llu: Ir less the rep correction):\n",
		(unsigned long long)m->ir_hw);
	mix_rate_row(out, "L1i misses (I1mr)", &m->l1i_mpki);
	mix_rate_row(out, "LL instr misses (ILmr)", &m->lli_mpki);
	mix_rate_row(out, "cond mispredicts (Bcm)", &m->cond_mpki);
	mix_rate_row(out, "ind mispredicts (Bim)", &m->ind_mpki);
}
