// Golden: patterns/P27_hierarchical_keys.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P27_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 625731999);
	uint32_t w = fl_mix32(FL_W(ctx, 245) ^ 452743570);
	uint32_t agg[3] = {0, 0, 0};
	uint32_t top = 0;
	uint32_t k0, k1, k2, v;
	const uint32_t *p;

	if (FL_RARE(w, 68))
		return;
	/* first pass: per category, root -> parent -> leaf keys; a level is read only when its parent is active */
	k0 = (FL_W(ctx, 5) ^ w) * 402635861;
	v = FL_T(ctx, k0) >> 20;
	if (v > ((w >> 0) & 4095u)) {
		k1 = (k0 ^ FL_W(ctx, 14)) * 643406059;
		v += FL_T(ctx, k1) >> 20;
		agg[1] += v;
		top ^= k1;
		if (FL_T(ctx, k1 >> 12) > FL_T(ctx, k0 >> 12)) {
			k2 = (k1 ^ FL_W(ctx, 26)) * 680433161;
			agg[2] += FL_T(ctx, k2) >> 22;
			FL_YIELD(ctx, 90, v);
		}
	}
	agg[0] += v;
	k0 = (FL_W(ctx, 34) ^ w) * 340746301;
	v = FL_T(ctx, k0) >> 20;
	if (v > ((w >> 1) & 4095u)) {
		k1 = (k0 ^ FL_W(ctx, 46)) * 574137391;
		v += FL_T(ctx, k1) >> 20;
		agg[1] += v;
		top ^= k1;
		if (FL_T(ctx, k1 >> 12) > FL_T(ctx, k0 >> 12)) {
			k2 = (k1 ^ FL_W(ctx, 53)) * 663074423;
			agg[2] += FL_T(ctx, k2) >> 22;
			FL_YIELD(ctx, 167, v);
		}
	}
	agg[0] += v;
	k0 = (FL_W(ctx, 63) ^ w) * 351251319;
	v = FL_T(ctx, k0) >> 20;
	if (v > ((w >> 2) & 4095u)) {
		k1 = (k0 ^ FL_W(ctx, 75)) * 413995367;
		v += FL_T(ctx, k1) >> 20;
		agg[1] += v;
		top ^= k1;
		if (FL_T(ctx, k1 >> 12) > FL_T(ctx, k0 >> 12)) {
			k2 = (k1 ^ FL_W(ctx, 86)) * 344587383;
			agg[2] += FL_T(ctx, k2) >> 22;
			FL_YIELD(ctx, 225, v);
		}
	}
	agg[0] += v;
	FL_YIELD(ctx, 685, agg[0] << 7);
	FL_YIELD(ctx, 730, agg[1] << 4);
	FL_YIELD(ctx, 786, agg[2] << 8);

	/* the combined parent key names the user's affinity record */
	p = fl_hmap_find(ctx, fl_key_of(top ^ w));
	if (p == NULL) {
		FL_YIELD(ctx, 873, w & 47234);
	} else if (p[0] > p[1]) {
		FL_YIELD_SPARSE(ctx, top ^ 675815879, (p[0] - p[1]) >> 2);
		FL_YIELD(ctx, 940, agg[1] + (p[2] & 0xFFFFu));
	} else {
		FL_YIELD(ctx, 989, agg[2] + (p[3] & 0xFFFFu));
	}
}
