// Golden: patterns/P18_hash_sparse_threshold.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P18_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1335658993);
	uint32_t sel = fl_mix32(FL_W(ctx, 75) ^ 309106465);
	const uint32_t *h = fl_hmap_find(ctx, fl_key_of(sel));
	uint32_t i, wgt, sc, n = 0;
	const uint32_t lb = 181;

	if (h == NULL) {
		FL_YIELD(ctx, 79, 27553);
		return;
	}
	wgt = (h[0] & 255u) + 1u;
	#pragma GCC unroll 4
	for (i = 0; i < 8u; i += 2u) {
		sc = ((FL_WA(ctx, lb + i + 1u) & 65535u) * wgt) >> 8;
		if (sc > 23516) {
			FL_YIELD_SPARSE(ctx, FL_WA(ctx, lb + i) ^ 671785366, (int32_t)sc);
			n++;
		}
	}
	FL_YIELD(ctx, 135, (int32_t)(n << 11) - 17756);
	if (n == 0u)
		FL_YIELD(ctx, 195, (int32_t)(wgt * 1333));
}
