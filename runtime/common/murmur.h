/* murmur.h: MurmurHash2 (Austin Appleby's public-domain algorithm), as production request
 * paths use it to hash compound keys. Written here from the algorithm's description. */
#ifndef FL_MURMUR_H
#define FL_MURMUR_H

#include <stddef.h>
#include <stdint.h>

/* 32-bit MurmurHash2 of len bytes at key (any alignment) with seed. */
uint32_t fl_murmur2(const void *key, size_t len, uint32_t seed);

/* 64-bit MurmurHash64A of len bytes at key (any alignment) with seed. */
uint64_t fl_murmur64a(const void *key, size_t len, uint64_t seed);

#endif
