// Golden: patterns/P12_time_window_stats.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P12_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 880195495);
	uint32_t now = ctx->now_s;
	uint32_t at = FL_W(ctx, 133) & 127u;
	uint32_t i, ts, age, v, n = 0, tot = 0, last = 1048575u;
	uint32_t k, c[2] = {0};
	uint32_t s[2] = {0};

	if (FL_RARE(at, 48))
		return;
	#pragma GCC unroll 4
	for (i = 0; i < 4u; i++) {
		ts = FL_WA(ctx, at + 2u * i);
		if (FL_UNLIKELY((ts & 4095u) == 0u))
			continue;
		age = (now - ts) & 1048575u;
		v = FL_WA(ctx, at + 2u * i + 1u) & 65535u;
		n++;
		tot += v;
		if (age < last)
			last = age;
		if (age < 112606)
			k = 0;
		else
			k = 1;
		c[k]++;
		s[k] += v;
	}
	FL_YIELD(ctx, 61, (int32_t)(n << 10) - 27970);
	FL_YIELD(ctx, 135, (int32_t)(tot >> 3) - 32179);
	if (n != 0u) {
		uint32_t b = fl_log_bucket(last, 16u);
		FL_YIELD(ctx, 187 + b, 18618);
		if (b > 11)
			FL_YIELD(ctx, 263, (int32_t)(last >> 4));
	} else {
		FL_YIELD(ctx, 311, 19057);
	}
	FL_YIELD(ctx, 451, (int32_t)(c[0] << 9) + 30780);
	if (c[0] != 0u)
		FL_YIELD(ctx, 521, (int32_t)(s[0] >> 2) - 31403);
	FL_YIELD(ctx, 637, (int32_t)(c[1] << 10) + 42220);
	if (c[1] != 0u)
		FL_YIELD(ctx, 717, (int32_t)(s[1] >> 3) - 34231);
	if ((c[0] << 2) > n)
		FL_YIELD(ctx, 1977, (int32_t)(s[0] >> 3) - (int32_t)(s[1] >> 5));
}
