/* murmur.c: MurmurHash2 (32-bit) and MurmurHash64A, written from Austin Appleby's algorithm. */
#include "murmur.h"

#include <string.h>

/* Little-endian loads through memcpy: any alignment, and the same hash on any host. */
static uint32_t murmur_load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static uint64_t murmur_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

uint32_t fl_murmur2(const void *key, size_t len, uint32_t seed)
{
	const uint32_t m = 0x5bd1e995u;
	const uint8_t *p = key;
	/* The reference takes an int length; only its low 32 bits enter the state. */
	uint32_t h = seed ^ (uint32_t)len;

	for (; len >= 4; p += 4, len -= 4) {
		uint32_t k = murmur_load32(p);

		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	switch (len) {
	case 3:
		h ^= (uint32_t)p[2] << 16;
		/* fall through */
	case 2:
		h ^= (uint32_t)p[1] << 8;
		/* fall through */
	case 1:
		h ^= p[0];
		h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return h;
}

uint64_t fl_murmur64a(const void *key, size_t len, uint64_t seed)
{
	const uint64_t m = 0xc6a4a7935bd1e995ull;
	const int r = 47;
	const uint8_t *p = key;
	const uint8_t *end = p + (len & ~(size_t)7);
	uint64_t h = seed ^ ((uint64_t)len * m);

	for (; p != end; p += 8) {
		uint64_t k = murmur_load64(p);

		k *= m;
		k ^= k >> r;
		k *= m;
		h ^= k;
		h *= m;
	}
	switch (len & 7) {
	case 7:
		h ^= (uint64_t)p[6] << 48;
		/* fall through */
	case 6:
		h ^= (uint64_t)p[5] << 40;
		/* fall through */
	case 5:
		h ^= (uint64_t)p[4] << 32;
		/* fall through */
	case 4:
		h ^= (uint64_t)p[3] << 24;
		/* fall through */
	case 3:
		h ^= (uint64_t)p[2] << 16;
		/* fall through */
	case 2:
		h ^= (uint64_t)p[1] << 8;
		/* fall through */
	case 1:
		h ^= (uint64_t)p[0];
		h *= m;
	}
	h ^= h >> r;
	h *= m;
	h ^= h >> r;
	return h;
}
