/* SPDX-License-Identifier: MIT */
/*
 * aeshash.c — the AES-128 key schedule and lane starts of the history's
 * AES hash (aeshash.h has the construction, docs/history.md the argument).
 * Runs once per handle, never on the hot path.
 */
#include <stdbool.h>

#include "aeshash.h"

/* FIPS-197 5.2: w[i] = w[i-4] ^ SubWord(RotWord(w[i-1])) ^ Rcon for the
 * first word of each round key, w[i-4] ^ w[i-1] for the three others;
 * AESKEYGENASSIST gives SubWord(RotWord()) ^ Rcon in its top word. */
static __m128i expand(__m128i key, __m128i assist)
{
	assist = _mm_shuffle_epi32(assist, 0xff);
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	return _mm_xor_si128(key, assist);
}

/* The round constant is an immediate operand: one line per round. */
#define EXPAND(i, rcon) (k->rk[i] = expand(k->rk[(i) - 1], _mm_aeskeygenassist_si128(k->rk[(i) - 1], rcon)))

static __m128i encrypt(const struct fg_aeskey *k, __m128i x)
{
	x = _mm_xor_si128(x, k->rk[0]);
	for (unsigned i = 1; i < 10; i++)
		x = _mm_aesenc_si128(x, k->rk[i]);
	return _mm_aesenclast_si128(x, k->rk[10]);
}

void fg_aeskey_init(struct fg_aeskey *k, const uint8_t seed[16])
{
	k->rk[0] = fg_aes_ld(seed);
	EXPAND(1, 0x01);
	EXPAND(2, 0x02);
	EXPAND(3, 0x04);
	EXPAND(4, 0x08);
	EXPAND(5, 0x10);
	EXPAND(6, 0x20);
	EXPAND(7, 0x40);
	EXPAND(8, 0x80);
	EXPAND(9, 0x1b);
	EXPAND(10, 0x36);
	/* "fg-lane" in the high half: a domain of its own under K */
	for (unsigned j = 0; j < 4; j++)
		k->lane[j] = encrypt(k, _mm_set_epi64x(0x656e616c2d6766ll, (long long)j));
}

void fg_aes128_encrypt(const struct fg_aeskey *k, const uint8_t in[16], uint8_t out[16])
{
	_mm_storeu_si128((__m128i *)(void *)out, encrypt(k, fg_aes_ld(in)));
}

bool fg_aes_cpu_ok(void)
{
	return __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1");
}
