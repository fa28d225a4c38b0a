/* rng.h: the runtime's seeded random streams (splitmix64 and its derivations).
 *
 * Every random choice in the leaf, mock and driver takes one of these, seeded from a flag,
 * so the same seed gives the same request stream and the same sampled sizes. Header-only:
 * the functions are tiny and sit on hot paths.
 */
#ifndef FL_RNG_H
#define FL_RNG_H

#include <stdint.h>

/* A splitmix64 stream: state advances by the golden-ratio constant, output is mixed. */
struct fl_rng {
	uint64_t s;
};

static inline void fl_rng_seed(struct fl_rng *r, uint64_t seed)
{
	r->s = seed;
}

/* splitmix64's output mix alone: a 64-bit hash of z (a bijection), for keys and ids. */
static inline uint64_t fl_rng_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Next 64 random bits. */
static inline uint64_t fl_rng_next(struct fl_rng *r)
{
	return fl_rng_mix64(r->s += 0x9e3779b97f4a7c15ull);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double fl_rng_unit(struct fl_rng *r)
{
	return (double)(fl_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n); n = 0 gives 0. Lemire's multiply-shift (bias < n / 2^64). */
static inline uint64_t fl_rng_below(struct fl_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)fl_rng_next(r) * n) >> 64);
}

/* Derive an independent seed for sub-stream `stream` of seed (e.g. per thread, per
 * request id) so streams never overlap by construction. */
static inline uint64_t fl_rng_derive(uint64_t seed, uint64_t stream)
{
	struct fl_rng r = { seed ^ (stream * 0xd1342543de82ef95ull) };
	fl_rng_next(&r);
	return fl_rng_next(&r);
}

#endif
