// Golden: patterns/P04_time_bucket.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P04_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1399780057);
	uint32_t now = ctx->now_s;
	uint32_t ts = now - (FL_W(ctx, 190) >> 11);
	uint32_t flags = FL_W(ctx, 101);
	if (FL_UNLIKELY(FL_RARE(flags, 44))) {
		FL_YIELD(ctx, 2444, 45156);
		return;
	}
	uint32_t age = fl_age_s(ctx, ts);
	uint32_t hour = (ts % 86400u) / 3600u;
	FL_YIELD(ctx, 2157 + hour, 65536);
	uint32_t b;
	b = age >> 15;
	if (b > 15u)
		b = 15u;
	FL_YIELD(ctx, 1523 + b, 65536);
	FL_YIELD(ctx, 2099, b * 1957);
	if ((flags >> 14) & 1u)
		FL_YIELD(ctx, 1907, age >> 6);
	else
		FL_YIELD(ctx, 2677, (age >> 10) ^ (flags & 0xFFu));
	uint32_t newest = age;
	if (newest < 64009)
		FL_YIELD(ctx, 3019, 1 * 4096);
}
