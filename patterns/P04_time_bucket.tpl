@pattern P04 time_bucket
@title Time arithmetic: age of a timestamp, bucketed linear, log or by a threshold ladder
@variants 15
@lines 25 60
@knob style 0 2         # bucketing: 0 linear (shift + clamp), 1 fl_log_bucket, 2 threshold ladder
@knob extra 0 4         # extra timestamps compared against the primary one
@body
	@# Timestamps are the request time minus a story-derived delta, so ages spread over days.
	uint32_t now = ctx->now_s;
	uint32_t ts = now - (FL_W(ctx, $K(0, 255)) >> $S(11, 13));
	uint32_t flags = FL_W(ctx, $K(0, 255));
	if (FL_UNLIKELY(FL_RARE(flags, $K(0, 127)))) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
@if style == 1
	uint32_t age = now > ts ? now - ts : 0u;
@else
	uint32_t age = fl_age_s(ctx, ts);
@end
	uint32_t hour = (ts % 86400u) / 3600u;
	FL_YIELD(ctx, $K(0, 4095) + hour, 65536);
	uint32_t b;
@if style == 0
	b = age >> $S(13, 15);
	if (b > 15u)
		b = 15u;
@elif style == 1
	b = fl_log_bucket(age, $S(12, 20));
@else
	if (age < $K(60, 600))
		b = 0;
	else if (age < $K(900, 3500))
		b = 1;
	else if (age < $K(3700, 40000))
		b = 2;
	else if (age < $K(43200, 400000))
		b = 3;
	else
		b = 4;
@end
	FL_YIELD(ctx, $K(0, 4095) + b, 65536);
	FL_YIELD(ctx, $K(0, 4095), b * $K(257, 4095, odd));
	if ((flags >> $S(0, 31)) & 1u)
		FL_YIELD(ctx, $K(0, 4095), age >> 6);
	else
		FL_YIELD(ctx, $K(0, 4095), (age >> 10) ^ (flags & 0xFFu));
	uint32_t newest = age;
@for e 0 extra
	uint32_t a{{e}} = FL_W(ctx, $K(0, 255)) >> $S(11, 13);
	newest = a{{e}} < newest ? a{{e}} : newest;
	if (a{{e}} < age)
		FL_YIELD(ctx, $K(0, 4095), (age - a{{e}}) >> {{4 + e}});
	else
		FL_YIELD(ctx, $K(0, 4095), (a{{e}} - age) >> {{6 + e}});
@end
	if (newest < $K(300, 86400))
		FL_YIELD(ctx, $K(0, 4095), {{1 + extra}} * 4096);
