// Golden: patterns/P01_minimal_field_read.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P01_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1425394653);
	uint32_t v = FL_W(ctx, 171);
	uint32_t aux = FL_W(ctx, 178);
	if (FL_UNLIKELY(v == 0u)) {
		FL_YIELD(ctx, 2843, 38670);
		return;
	}
	if (FL_UNLIKELY(FL_RARE(aux, 47)))
		return;
	FL_YIELD(ctx, 1331, v & 0xFFFFu);
	uint32_t f0 = FL_T(ctx, v >> 8);
	if (FL_LIKELY((f0 & 0xFFFFFu) > 248796))
		FL_YIELD(ctx, 2260, f0 >> 16);
	else
		FL_YIELD(ctx, 1461, aux >> 20);
	if ((f0 >> 20) != (aux & 0xFFu))
		FL_YIELD(ctx, 2176, f0 & 0xFFFFu);
	FL_YIELD(ctx, 1425, FL_T(ctx, 2198) & f0);
}
