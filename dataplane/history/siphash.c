/* SPDX-License-Identifier: MIT */
/*
 * siphash.c — SipHash (Aumasson & Bernstein, "SipHash: a fast short-input
 * PRF", 2012) with 64- and 128-bit output.
 *
 * The history keys its table with SipHash under a per-instance 128-bit
 * secret, so that a peer who can choose Message-IDs cannot choose their
 * buckets (hash flooding). The 128-bit output variant gives the bucket
 * (64 bits) and the fingerprint (54 bits) from independent halves.
 * SipHash-2-4 is the paper's conservative choice; SipHash-1-3 (Rust's
 * HashMap, Python's str hash) keeps the key-recovery margin that matters
 * for flooding at about half the cost; tools/bench/bench_history.c
 * measures both and docs/history.md says which the table uses.
 */
#include <string.h>

#include "history_int.h"

static inline uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND \
	do { \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
	} while (0)

static inline uint64_t load64le(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);	/* x86 is little-endian, as SipHash's words are */
	return v;
}

/* The generic construction; always inlined so that c and d are constants. */
static inline __attribute__((always_inline)) void
sip(const uint64_t key[2], const void *data, size_t len, unsigned c, unsigned d,
    unsigned outlen, uint64_t out[2])
{
	const uint8_t *p = data;
	const uint8_t *end = p + (len & ~(size_t)7);
	uint64_t v0 = 0x736f6d6570736575ull ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ key[0];
	uint64_t v3 = 0x7465646279746573ull ^ key[1];
	uint64_t b = (uint64_t)len << 56, m;

	if (outlen == 16)
		v1 ^= 0xee;
	for (; p != end; p += 8) {
		m = load64le(p);
		v3 ^= m;
		for (unsigned i = 0; i < c; i++)
			SIPROUND;
		v0 ^= m;
	}
	switch (len & 7) {
	case 7: b |= (uint64_t)p[6] << 48; /* fall through */
	case 6: b |= (uint64_t)p[5] << 40; /* fall through */
	case 5: b |= (uint64_t)p[4] << 32; /* fall through */
	case 4: b |= (uint64_t)p[3] << 24; /* fall through */
	case 3: b |= (uint64_t)p[2] << 16; /* fall through */
	case 2: b |= (uint64_t)p[1] << 8;  /* fall through */
	case 1: b |= (uint64_t)p[0]; break;
	case 0: break;
	}
	v3 ^= b;
	for (unsigned i = 0; i < c; i++)
		SIPROUND;
	v0 ^= b;
	v2 ^= outlen == 16 ? 0xee : 0xff;
	for (unsigned i = 0; i < d; i++)
		SIPROUND;
	out[0] = v0 ^ v1 ^ v2 ^ v3;
	if (outlen != 16)
		return;
	v1 ^= 0xdd;
	for (unsigned i = 0; i < d; i++)
		SIPROUND;
	out[1] = v0 ^ v1 ^ v2 ^ v3;
}

void fg_siphash24_128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2])
{
	sip(key, data, len, 2, 4, 16, out);
}

void fg_siphash13_128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2])
{
	sip(key, data, len, 1, 3, 16, out);
}

uint64_t fg_siphash24_64(const uint64_t key[2], const void *data, size_t len)
{
	uint64_t out[2];

	sip(key, data, len, 2, 4, 8, out);
	return out[0];
}
