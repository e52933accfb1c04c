/* SPDX-License-Identifier: MIT */
/*
 * aeshash.h — the history's keyed 128-bit hash on AES-NI, private to
 * dataplane/history (and its tests and benchmark). docs/history.md, "Hash,
 * seed, bucket and fingerprint", has the security argument; in short:
 *
 *   K        the table's 128-bit seed, expanded by the AES-128 key
 *            schedule (FIPS-197 5.2) into round keys k0..k10
 *   I_j      AES-128_K(j, "fg-lane"), j = 0..3: four secret lane starts
 *            (full encryptions, computed once per handle)
 *   R(x)     four AES rounds (AESENC: SubBytes, ShiftRows, MixColumns,
 *            XOR round key) keyed k1, k2, k3, k4
 *   blocks   the ID in 16-octet blocks B_0..B_{n-1}, n = ceil(len / 16);
 *            the last block is the ID's last 16 octets, overlapping the
 *            one before when 16 does not divide len (for a fixed length
 *            the blocks still determine every octet); an ID shorter than
 *            16 octets is one zero-padded block, the empty ID none
 *   lanes    S_j = I_j; for i = 0..n-1: S_(i mod 4) = R(S_(i mod 4) ^ B_i)
 *   output   F(S_0 ^ S_1 ^ S_2 ^ S_3 ^ len) with F = three AES rounds
 *            keyed k5, k6, k7; lo = its low 64 bits, hi = its high 64
 *
 * Why this shape: every octet an attacker chooses passes through at
 * least four keyed AES rounds before it can meet another (the Pelican MAC
 * argument: the expected probability of any differential over four AES
 * rounds is below 2^-113, Keliher and Sui), the lane starts are secret so
 * blocks cannot be swapped between lanes, and the length enters only
 * after the lanes, so an attacker who makes two IDs of different lengths
 * give the same lanes gets two different outputs (F is a permutation).
 * Four lanes run in parallel: a 48..64-octet ID costs 16 + 3 rounds, with
 * only 4 + 3 on its critical path.
 */
#ifndef FLOODGATE_AESHASH_H
#define FLOODGATE_AESHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <smmintrin.h>
#include <wmmintrin.h>

struct fg_aeskey {
	__m128i rk[11];		/* AES-128 round keys of the seed */
	__m128i lane[4];	/* I_0..I_3 */
};

/* Expand a 16-octet seed (FIPS-197 key expansion, lane starts). */
void fg_aeskey_init(struct fg_aeskey *k, const uint8_t seed[16]);
/* One AES-128 block encryption under the expanded seed (tests: FIPS-197
 * appendix C.1). */
void fg_aes128_encrypt(const struct fg_aeskey *k, const uint8_t in[16], uint8_t out[16]);
/* Whether this CPU has AES-NI (and SSE4.1). */
bool fg_aes_cpu_ok(void);

static inline __m128i fg_aes_ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* R: four rounds absorbing one block into a lane. */
static inline __m128i fg_aes_r4(__m128i s, __m128i b, const struct fg_aeskey *k)
{
	s = _mm_aesenc_si128(_mm_xor_si128(s, b), k->rk[1]);
	s = _mm_aesenc_si128(s, k->rk[2]);
	s = _mm_aesenc_si128(s, k->rk[3]);
	return _mm_aesenc_si128(s, k->rk[4]);
}

static inline void fg_aeshash128(const struct fg_aeskey *k, const void *data, size_t len,
				 uint64_t out[2])
{
	const uint8_t *p = data, *end = p + len;
	__m128i s0 = k->lane[0], s1 = k->lane[1], s2 = k->lane[2], s3 = k->lane[3], y;

	if (len >= 16) {
		__m128i last;
		size_t r;

		for (; end - p > 64; p += 64) {
			s0 = fg_aes_r4(s0, fg_aes_ld(p), k);
			s1 = fg_aes_r4(s1, fg_aes_ld(p + 16), k);
			s2 = fg_aes_r4(s2, fg_aes_ld(p + 32), k);
			s3 = fg_aes_r4(s3, fg_aes_ld(p + 48), k);
		}
		/* 1..64 octets left: blocks from p, the last one ending at end */
		r = (size_t)(end - p);
		last = fg_aes_ld(end - 16);
		if (r <= 16) {
			s0 = fg_aes_r4(s0, last, k);
		} else if (r <= 32) {
			s0 = fg_aes_r4(s0, fg_aes_ld(p), k);
			s1 = fg_aes_r4(s1, last, k);
		} else if (r <= 48) {
			s0 = fg_aes_r4(s0, fg_aes_ld(p), k);
			s1 = fg_aes_r4(s1, fg_aes_ld(p + 16), k);
			s2 = fg_aes_r4(s2, last, k);
		} else {
			s0 = fg_aes_r4(s0, fg_aes_ld(p), k);
			s1 = fg_aes_r4(s1, fg_aes_ld(p + 16), k);
			s2 = fg_aes_r4(s2, fg_aes_ld(p + 32), k);
			s3 = fg_aes_r4(s3, last, k);
		}
	} else if (len) {
		uint8_t b[16] = { 0 };

		memcpy(b, p, len);
		s0 = fg_aes_r4(s0, fg_aes_ld(b), k);
	}
	y = _mm_xor_si128(_mm_xor_si128(s0, s1), _mm_xor_si128(s2, s3));
	y = _mm_xor_si128(y, _mm_cvtsi64_si128((long long)len));
	y = _mm_aesenc_si128(y, k->rk[5]);
	y = _mm_aesenc_si128(y, k->rk[6]);
	y = _mm_aesenc_si128(y, k->rk[7]);
	out[0] = (uint64_t)_mm_cvtsi128_si64(y);
	out[1] = (uint64_t)_mm_extract_epi64(y, 1);
}

#endif /* FLOODGATE_AESHASH_H */
