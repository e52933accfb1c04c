/* SPDX-License-Identifier: MIT */
/*
 * siphash.h — SipHash (Aumasson & Bernstein, 2012), the keyed hash every
 * module that must resist chosen inputs uses: the history table's
 * reference hash and fallback (dataplane/history/siphash.c, with the
 * paper's test vectors in test_history), the TCP module's connection keys,
 * initial sequence numbers and SYN cookies. And the two unkeyed 64-bit
 * mixers the modules use to spread a value that no peer chooses.
 */
#ifndef FLOODGATE_SIPHASH_H
#define FLOODGATE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-c-d with 128-bit output, and SipHash-2-4 with 64-bit output. */
void fg_siphash24_128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2]);
void fg_siphash13_128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2]);
uint64_t fg_siphash24_64(const uint64_t key[2], const void *data, size_t len);

/* MurmurHash3's 64-bit finalizer: a bijection with full avalanche. */
static inline uint64_t fg_mix64_murmur3(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* SplitMix64's finalizer (Steele, Lea, Flood 2014): another bijection,
 * for deriving keys from one secret. */
static inline uint64_t fg_mix64_splitmix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif /* FLOODGATE_SIPHASH_H */
