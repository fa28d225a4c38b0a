@pattern P12 time_window_stats
@title Templated time-window statistics over a story event list
@variants 130
@lines 40 70
@knob windows 1 6                             # time windows
@knob events 0 6                              # event loop trips: 4, 6, ..., 16
@knob stats 0 2                               # per window: 0 count, 1 count+sum, 2 count+sum+max
@knob ladder 0 1                              # 0 every window counts (registers), 1 else-if ladder into bucket arrays
@require (1 - ladder) * (31 + windows * (5 + 3 * stats - (stats == 2)) + 2 * (stats > 0)) + ladder * (36 + 3 * windows + stats * (6 + 2 * windows) - (stats == 2) * (2 + windows)) >= 42   # C lines
@require (1 - ladder) * (31 + windows * (5 + 3 * stats - (stats == 2)) + 2 * (stats > 0)) + ladder * (36 + 3 * windows + stats * (6 + 2 * windows) - (stats == 2) * (2 + windows)) <= 68
@body
@# Events are (timestamp, value) word pairs at a story-chosen offset; ages are masked to
@# about 12 days so every window threshold sees both outcomes on random story data.
@# Clone-friendly constants: window w's threshold comes from its own band (windows stay
@# sorted in every copy, so gcc's range reasoning is the same for all copies); dense slot o
@# is drawn odd from 33 + 64 * o .. 94 + 64 * o, so no two yields share or neighbour a slot.
@# Counts are scaled by shifts, not by per-copy multipliers: gcc's loop optimiser prices a
@# multiply by its constant and would pick different induction variables per copy.
@# ladder=0 keeps one counter set per window in registers; ladder=1 finds the event's
@# bucket (first window holding it, or the last bucket) and updates small stack arrays.
@let trips = 4 + events * 2
@let nb = windows + 1
	uint32_t now = ctx->now_s;
	uint32_t at = FL_W(ctx, $K(32, 255)) & 127u;
	uint32_t i, ts, age, v, n = 0, tot = 0, last = 1048575u;
@if ladder
	uint32_t k, c[{{nb}}] = {0};
@if stats >= 1
	uint32_t s[{{nb}}] = {0};
@end
@if stats == 2
	uint32_t m[{{nb}}] = {0};
@end
@else
@for w 0 windows
@if stats == 0
	uint32_t c{{w}} = 0;
@elif stats == 1
	uint32_t c{{w}} = 0, s{{w}} = 0;
@else
	uint32_t c{{w}} = 0, s{{w}} = 0, m{{w}} = 0;
@end
@end
@end

	if (FL_RARE(at, $K(2, 126)))
		return;
	#pragma GCC unroll 4
	for (i = 0; i < {{trips}}u; i++) {
		ts = FL_WA(ctx, at + 2u * i);
		if (FL_UNLIKELY((ts & 4095u) == 0u))
			continue;
		age = (now - ts) & 1048575u;
		v = FL_WA(ctx, at + 2u * i + 1u) & 65535u;
		n++;
		tot += v;
		if (age < last)
			last = age;
@if ladder
@for w 0 windows
@if w == 0
		if (age < $K(20000 + 160000 * w, 150000 + 160000 * w))
@else
		else if (age < $K(20000 + 160000 * w, 150000 + 160000 * w))
@end
			k = {{w}};
@end
		else
			k = {{windows}};
		c[k]++;
@if stats >= 1
		s[k] += v;
@end
@if stats == 2
		if (v > m[k])
			m[k] = v;
@end
@else
@for w 0 windows
@if w > 0
		}
@end
		if (age < $K(20000 + 160000 * w, 150000 + 160000 * w)) {
			c{{w}}++;
@if stats >= 1
			s{{w}} += v;
@end
@if stats == 2
			m{{w}} = v > m{{w}} ? v : m{{w}};
@end
@end
		}
@end
	}
	FL_YIELD(ctx, $K(33, 94, odd), (int32_t)(n << 10) - $K(1000, 60000));
	FL_YIELD(ctx, $K(97, 158, odd), (int32_t)(tot >> {{2 + trips / 4}}) - $K(1000, 60000));
	if (n != 0u) {
		uint32_t b = fl_log_bucket(last, 16u);
		FL_YIELD(ctx, $K(161, 206, odd) + b, $K(1000, 60000));
		if (b > $S(4, 12))
			FL_YIELD(ctx, $K(225, 286, odd), (int32_t)(last >> 4));
	} else {
		FL_YIELD(ctx, $K(289, 350, odd), $K(1000, 60000));
	}
@if ladder
@for w 0 nb
@let o = 6 + 3 * w
	FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(c[{{w}}] << {{9 + w % 4}}) + $K(1000, 60000));
@if stats >= 1
	if (c[{{w}}] != 0u)
		FL_YIELD(ctx, $K(97 + 64 * o, 158 + 64 * o, odd), (int32_t)(s[{{w}}] >> {{2 + (w + trips) % 4}}) - $K(1000, 60000));
@end
@if stats == 2
	FL_YIELD(ctx, $K(161 + 64 * o, 222 + 64 * o, odd), (int32_t)m[{{w}}] - $K(4096, 65535));
@end
@end
@if stats >= 1
	if ((c[0] << 2) > n)
		FL_YIELD(ctx, $K(33 + 64 * 30, 94 + 64 * 30, odd), (int32_t)(s[0] >> 3) - (int32_t)(s[{{windows}}] >> 5));
@end
@else
@for w 0 windows
@let o = 6 + 3 * w
	FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(c{{w}} << {{9 + w % 4}}) + $K(1000, 60000));
@if stats >= 1
	if (c{{w}} != 0u)
		FL_YIELD(ctx, $K(97 + 64 * o, 158 + 64 * o, odd), (int32_t)(s{{w}} >> {{2 + (w + trips) % 4}}) - $K(1000, 60000));
@end
@if stats == 2
	FL_YIELD(ctx, $K(161 + 64 * o, 222 + 64 * o, odd), (int32_t)m{{w}} - $K(4096, 65535));
@end
@end
@if stats >= 1
	if ((c0 << 2) > n)
		FL_YIELD(ctx, $K(33 + 64 * 30, 94 + 64 * 30, odd), (int32_t)(s0 >> 3) - (int32_t)(s{{windows - 1}} >> 5));
@end
@end
