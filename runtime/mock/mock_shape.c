/* mock_shape.c: latency shaping for the mock's replies (see mock_shape.h). */
#include "mock_shape.h"

#include "clock.h"

void mock_shape_defaults(struct mock_shape_cfg *c)
{
	c->cap_us = MOCK_SHAPE_CAP_US;
	c->offset_us = MOCK_SHAPE_OFFSET_US;
	c->skip_us = MOCK_SHAPE_SKIP_US;
	c->spin_us = MOCK_SHAPE_SPIN_US;
	c->fixed_us = MOCK_SHAPE_NOT_FIXED;
}

uint32_t mock_shape_effective_us(const struct mock_shape_cfg *c, uint32_t latency_us)
{
	if (c->fixed_us != MOCK_SHAPE_NOT_FIXED)
		latency_us = c->fixed_us;
	uint32_t l = latency_us < c->cap_us ? latency_us : c->cap_us;
	return l > c->offset_us ? l - c->offset_us : 0;
}

enum mock_shape_action mock_shape_decide(const struct mock_shape_cfg *c, uint32_t latency_us,
	uint32_t *wait_us)
{
	uint32_t e = mock_shape_effective_us(c, latency_us);
	enum mock_shape_action a;
	if (e < c->skip_us)
		a = MOCK_SHAPE_NOW;
	else if (e < c->spin_us)
		a = MOCK_SHAPE_SPIN;
	else
		a = MOCK_SHAPE_TIMER;
	if (wait_us)
		*wait_us = a == MOCK_SHAPE_NOW ? 0 : e;
	return a;
}

const char *mock_shape_action_name(enum mock_shape_action a)
{
	static const char *const names[MOCK_SHAPE_ACTIONS] = { "now", "spin", "timer" };
	return (unsigned)a < MOCK_SHAPE_ACTIONS ? names[a] : "unknown";
}

void mock_shape_spin(uint32_t us)
{
	uint64_t end = fl_mono_ns() + (uint64_t)us * 1000u;
	while (fl_mono_ns() < end) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();  /* be kind to a hyperthread sibling */
#endif
	}
}
