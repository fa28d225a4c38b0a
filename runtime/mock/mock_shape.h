/* mock_shape.h: how long the mock waits before replying, and how it waits.
 *
 * A request asks for a latency L (µs, RpcRequest.latency_us, sampled by the leaf from the
 * production distribution). The mock shapes it:
 *
 *   L         = fixed_us instead, when a fixed latency is set (controlled experiments)
 *   effective = min(L, cap_us) - offset_us, floored at 0
 *   effective <  skip_us  -> reply at once (a timer would cost more than it waits)
 *   effective <  spin_us  -> busy-spin effective µs on the IO thread, then reply
 *   otherwise             -> arm a timer for effective µs
 *
 * offset_us subtracts what the network and the mock's own work already add. All values
 * are in microseconds.
 */
#ifndef MOCK_SHAPE_H
#define MOCK_SHAPE_H

#include <stdint.h>

#define MOCK_SHAPE_CAP_US 200000u    /* default cap: 200 ms */
#define MOCK_SHAPE_OFFSET_US 0u      /* default offset */
#define MOCK_SHAPE_SKIP_US 100u      /* default: below 100 µs reply at once */
#define MOCK_SHAPE_SPIN_US 200u      /* default: below 200 µs spin, else timer */
#define MOCK_SHAPE_NOT_FIXED UINT32_MAX /* fixed_us value meaning "use the asked latency" */

struct mock_shape_cfg {
	uint32_t cap_us;     /* latencies asked above this are cut to it (µs) */
	uint32_t offset_us;  /* subtracted after the cap (µs) */
	uint32_t skip_us;    /* effective latency below this: no wait (µs) */
	uint32_t spin_us;    /* effective latency below this (and >= skip): spin (µs) */
	uint32_t fixed_us;   /* every request's latency (µs), or MOCK_SHAPE_NOT_FIXED */
};

enum mock_shape_action {
	MOCK_SHAPE_NOW = 0,    /* reply immediately */
	MOCK_SHAPE_SPIN = 1,   /* busy-spin the effective latency, then reply */
	MOCK_SHAPE_TIMER = 2,  /* reply from a timer after the effective latency */
	MOCK_SHAPE_ACTIONS = 3
};

/* Fill c with the defaults above. */
void mock_shape_defaults(struct mock_shape_cfg *c);

/* The effective latency (µs) for a requested latency_us. Pure. */
uint32_t mock_shape_effective_us(const struct mock_shape_cfg *c, uint32_t latency_us);

/* What to do for a requested latency_us; *wait_us gets the effective latency (µs; 0 for
 * MOCK_SHAPE_NOW). Pure. */
enum mock_shape_action mock_shape_decide(const struct mock_shape_cfg *c, uint32_t latency_us,
	uint32_t *wait_us);

/* "now", "spin", "timer". */
const char *mock_shape_action_name(enum mock_shape_action a);

/* Busy-wait us microseconds on CLOCK_MONOTONIC (the calling thread stays on CPU). */
void mock_shape_spin(uint32_t us);

#endif
