// Golden: patterns/P10_dual_hash_lookup.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P10_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 617721509);
	uint32_t sa = fl_mix32(FL_W(ctx, 69) ^ 512516681);
	uint32_t sb = fl_mix32(FL_W(ctx, 219) ^ 625709421);
	const uint32_t *pa = fl_hmap_find(ctx, fl_key_of(sa));
	const uint32_t *pb = fl_hmap_find(ctx, fl_key_of(sb));
	const uint32_t sw = 131;
	uint32_t t;

	if (pa != NULL) {
		t = pa[0] ^ FL_WA(ctx, sw + 0u);
		if (t > 531454874)
			FL_YIELD(ctx, 73, (int32_t)(t & 65535u) - 11436);
		t = pa[1] ^ FL_WA(ctx, sw + 1u);
		if ((t & 65535u) > 7921)
			FL_YIELD(ctx, 139, (int32_t)((t >> 4) * 2819));
		t = pa[2] ^ FL_WA(ctx, sw + 2u);
		if (((t >> 7) & 1023u) < 737)
			FL_YIELD(ctx, 189, (int32_t)((t >> 11) ^ 728812785));
		t = pa[3] ^ FL_WA(ctx, sw + 3u);
		if ((t & 65535u) > 19964)
			FL_YIELD(ctx, 247, (int32_t)((t & 25045) + (uint32_t)(sa >> 10)));
		t = pa[4] ^ FL_WA(ctx, sw + 4u);
		if (t > 536313309)
			FL_YIELD(ctx, 307, (int32_t)(t & 65535u) - 10199);
		t = pa[5] ^ FL_WA(ctx, sw + 5u);
		if ((t & 65535u) > 7115)
			FL_YIELD(ctx, 391, (int32_t)((t >> 5) * 1483));
		t = pa[0] ^ FL_WA(ctx, sw + 6u);
		if (((t >> 8) & 1023u) < 775)
			FL_YIELD(ctx, 443, (int32_t)((t >> 12) ^ 564884240));
	} else {
		FL_YIELD(ctx, 1089, 59935);
		t = FL_WA(ctx, sw + 30u);
		if ((t & 65535u) > 15754)
			FL_YIELD(ctx, 1161, (int32_t)(t >> 7) - 27682);
		t = FL_T(ctx, sa >> 12);
		if ((t & 65535u) > 3175)
			FL_YIELD(ctx, 1221, (int32_t)((t & 32767u) * 12837));
		FL_YIELD(ctx, 1293, 30098);
		t = FL_WA(ctx, sw + 31u);
		if ((t & 65535u) > 14970)
			FL_YIELD(ctx, 1337, (int32_t)(t >> 9) - 27005);
		t = FL_T(ctx, sa >> 14);
		if ((t & 65535u) > 3066)
			FL_YIELD(ctx, 1417, (int32_t)((t & 32767u) * 2919));
		FL_YIELD(ctx, 1475, 40778);
	}
	if (pb != NULL) {
		t = pb[1] + FL_WA(ctx, sw + 15u);
		if (t > 555605679)
			FL_YIELD(ctx, 2123, (int32_t)(t & 65535u) - 11781);
		t = pb[2] + FL_WA(ctx, sw + 16u);
		if ((t & 65535u) > 6625)
			FL_YIELD(ctx, 2179, (int32_t)((t >> 5) * 13825));
		t = pb[3] + FL_WA(ctx, sw + 17u);
		if (((t >> 8) & 1023u) < 728)
			FL_YIELD(ctx, 2249, (int32_t)((t >> 12) ^ 601724621));
		t = pb[4] + FL_WA(ctx, sw + 18u);
		if ((t & 65535u) > 20156)
			FL_YIELD(ctx, 2299, (int32_t)((t & 35411) + (uint32_t)(sa >> 11)));
		t = pb[5] + FL_WA(ctx, sw + 19u);
		if (t > 779891784)
			FL_YIELD(ctx, 2361, (int32_t)(t & 65535u) - 10674);
		t = pb[0] + FL_WA(ctx, sw + 20u);
		if ((t & 65535u) > 8166)
			FL_YIELD(ctx, 2437, (int32_t)((t >> 6) * 5529));
		t = pb[1] + FL_WA(ctx, sw + 21u);
		if (((t >> 9) & 1023u) < 866)
			FL_YIELD(ctx, 2481, (int32_t)((t >> 13) ^ 355483565));
	} else {
		FL_YIELD(ctx, 3137, 29631);
		t = FL_WA(ctx, sw + 35u);
		if ((t & 65535u) > 15869)
			FL_YIELD(ctx, 3205, (int32_t)(t >> 8) - 26781);
		t = FL_T(ctx, sb >> 13);
		if ((t & 65535u) > 3376)
			FL_YIELD(ctx, 3255, (int32_t)((t & 32767u) * 1707));
		FL_YIELD(ctx, 3321, 54652);
		t = FL_WA(ctx, sw + 36u);
		if ((t & 65535u) > 14500)
			FL_YIELD(ctx, 3387, (int32_t)(t >> 10) - 28929);
		t = FL_T(ctx, sb >> 2);
		if ((t & 65535u) > 3450)
			FL_YIELD(ctx, 3445, (int32_t)((t & 32767u) * 13187));
		FL_YIELD(ctx, 3513, 43441);
	}
}
