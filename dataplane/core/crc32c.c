/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c — CRC-32C (Castagnoli), the checksum of every file floodgate
 * writes: journal blocks, queue records, snapshots, history images. It
 * uses SSE4.2's crc32 instruction (-march=corei7 and later).
 */
#include <pthread.h>
#include <string.h>
#include <nmmintrin.h>

#include "floodgate/crc32c.h"

static inline uint64_t load64le(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * CRC-32C in three streams. The crc32 instruction takes three cycles and
 * can start one each cycle, so one dependent chain uses a third of it.
 * fg_crc32c cuts a buffer into blocks of three equal lanes, runs the
 * three lanes' chains side by side, and joins them: the CRC state is
 * linear, so the state after lanes A B C is shift(shift(a) ^ b) ^ c, where
 * b and c are the lanes' states from zero and shift() appends a lane's
 * length of zero octets (a 32x32 matrix over GF(2), applied through four
 * 256-entry tables; Mark Adler's crc32c.c does the same). Two lane sizes:
 * CRC_LONG for long buffers, CRC_SHORT so that a full-size TCP segment's
 * payload (1448 octets, what the queue's writer checksums piece by piece)
 * is two blocks. The tables are built once (pthread_once).
 */
#define CRC_POLY 0x82f63b78u		/* reflected Castagnoli polynomial */
#define CRC_LONG 8192u
#define CRC_SHORT 240u
_Static_assert(CRC_LONG % 8 == 0 && CRC_SHORT % 8 == 0, "lanes of whole 8-octet words");

static uint32_t crc_long[4][256], crc_short[4][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t mat[32], uint32_t vec)
{
	uint32_t sum = 0;

	for (unsigned i = 0; vec; vec >>= 1, i++)
		if (vec & 1)
			sum ^= mat[i];
	return sum;
}

/* out = a after b (both 32x32 over GF(2), column i = image of bit i) */
static void gf2_compose(uint32_t out[32], const uint32_t a[32], const uint32_t b[32])
{
	uint32_t t[32];

	for (unsigned i = 0; i < 32; i++)
		t[i] = gf2_times(a, b[i]);
	memcpy(out, t, sizeof(t));
}

/* The tables that append `len` zero octets to a CRC state. */
static void crc_zeros_tables(uint32_t tab[4][256], size_t len)
{
	uint32_t op[32], sq[32];

	/* sq: one zero bit (a shift right, the polynomial when bit 0 falls out) */
	sq[0] = CRC_POLY;
	for (unsigned i = 1; i < 32; i++)
		sq[i] = 1u << (i - 1);
	for (unsigned i = 0; i < 3; i++)	/* one zero octet */
		gf2_compose(sq, sq, sq);
	for (unsigned i = 0; i < 32; i++)
		op[i] = 1u << i;
	for (; len; len >>= 1) {
		if (len & 1)
			gf2_compose(op, sq, op);
		gf2_compose(sq, sq, sq);
	}
	for (uint32_t n = 0; n < 256; n++)
		for (unsigned k = 0; k < 4; k++)
			tab[k][n] = gf2_times(op, n << (8 * k));
}

static void crc_tables_build(void)
{
	crc_zeros_tables(crc_long, CRC_LONG);
	crc_zeros_tables(crc_short, CRC_SHORT);
}

static inline uint32_t crc_shift(const uint32_t tab[4][256], uint32_t c)
{
	return tab[0][c & 0xff] ^ tab[1][(c >> 8) & 0xff] ^ tab[2][(c >> 16) & 0xff] ^
	       tab[3][c >> 24];
}

/* Whole blocks of three `lane`-octet lanes; returns the octets taken. */
static inline size_t crc_blocks(uint64_t *c, const uint8_t *p, size_t len, size_t lane,
				const uint32_t tab[4][256])
{
	size_t done = 0;

	for (; len - done >= 3 * lane; done += 3 * lane) {
		const uint8_t *a = p + done, *end = a + lane;
		uint64_t c0 = *c, c1 = 0, c2 = 0;

		for (; a < end; a += 8) {
			c0 = _mm_crc32_u64(c0, load64le(a));
			c1 = _mm_crc32_u64(c1, load64le(a + lane));
			c2 = _mm_crc32_u64(c2, load64le(a + 2 * lane));
		}
		c0 = crc_shift(tab, (uint32_t)c0) ^ c1;
		*c = crc_shift(tab, (uint32_t)c0) ^ c2;
	}
	return done;
}

uint32_t fg_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t c = ~crc;
	size_t k;

	if (len >= 3 * CRC_SHORT) {
		pthread_once(&crc_once, crc_tables_build);
		k = crc_blocks(&c, p, len, CRC_LONG, crc_long);
		p += k;
		len -= k;
		k = crc_blocks(&c, p, len, CRC_SHORT, crc_short);
		p += k;
		len -= k;
	}
	for (; len >= 8; p += 8, len -= 8)
		c = _mm_crc32_u64(c, load64le(p));
	for (; len; p++, len--)
		c = _mm_crc32_u8((uint32_t)c, *p);
	return ~(uint32_t)c;
}
