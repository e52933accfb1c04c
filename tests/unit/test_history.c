/* SPDX-License-Identifier: MIT */
/*
 * test_history.c — single-threaded behaviour of the history table: the
 * keyed hash, every state transition, the time encodings at their edges,
 * expiry in both RFC 5537 modes at the exact boundary seconds, both
 * full-table policies, relocation at high load, images (round trip, every
 * flipped byte refused), attach validation, hash flooding (chi-square) and
 * the version side index. Concurrency is test_history_mt.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "../../dataplane/history/history_int.h"
#include "fgtest.h"

#define T0 1767225600	/* 2026-01-01 00:00:00 UTC */

static const uint8_t test_seed[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

struct tbl {
	struct fg_history *h;
	void *mem;
	size_t len;
};

static void tbl_open_hash(struct tbl *t, uint64_t cap, uint32_t side, enum fg_full_policy pol,
			  const uint8_t seed[16], enum fg_history_hashfn hash)
{
	struct fg_history_params p = { .capacity = cap, .side_capacity = side, .hash = hash,
				       .full_policy = pol, .alarm_load_pct = 90, .now = T0 };

	memcpy(p.seed, seed, 16);
	t->len = fg_history_region_size(cap, side);
	ck_assert_uint_gt(t->len, 0);
	t->mem = aligned_alloc(64, (t->len + 63) & ~(size_t)63);
	ck_assert_ptr_nonnull(t->mem);
	t->h = fg_history_create(t->mem, t->len, &p);
	ck_assert_ptr_nonnull(t->h);
}

static void tbl_open_seed(struct tbl *t, uint64_t cap, uint32_t side, enum fg_full_policy pol,
			  const uint8_t seed[16])
{
	tbl_open_hash(t, cap, side, pol, seed, FG_HISTORY_HASH_AUTO);
}

static void tbl_open(struct tbl *t, uint64_t cap, uint32_t side, enum fg_full_policy pol)
{
	tbl_open_seed(t, cap, side, pol, test_seed);
}

static void tbl_close(struct tbl *t)
{
	fg_history_detach(t->h);
	free(t->mem);
}

static struct fg_history_key key_of(const struct fg_history *h, const char *fmt, unsigned n)
{
	struct fg_history_key k;
	char id[128];
	int len = snprintf(id, sizeof(id), fmt, n);

	fg_history_hash(h, id, (size_t)len, &k);
	return k;
}

#define KEY(h, n) key_of((h), "<%u.part-of-the-test$aeiou@news.example.net>", (n))

/* ---- keyed hash and checksum ---- */

static void le_bytes(const uint64_t *w, unsigned n, uint8_t *out)
{
	for (unsigned i = 0; i < n * 8; i++)
		out[i] = (uint8_t)(w[i / 8] >> (8 * (i % 8)));
}

START_TEST(test_siphash_vectors)
{
	/* reference vectors (SipHash paper, vectors.h): key 00..0f, message
	 * 00 01 02 ... of length i */
	static const struct { unsigned len; uint8_t out[16]; } v128[] = {
		{ 0, { 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93 } },
		{ 1, { 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45 } },
		{ 7, { 0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f, 0xf0, 0x82, 0x39 } },
		{ 8, { 0x3b, 0x62, 0xa9, 0xba, 0x62, 0x58, 0xf5, 0x61, 0x0f, 0x83, 0xe2, 0x64, 0xf3, 0x14, 0x97, 0xb4 } },
		{ 15, { 0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97, 0xcf, 0xc3, 0xd9 } },
		{ 63, { 0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97, 0x3f, 0xbd, 0x7c } },
	};
	static const struct { unsigned len; uint8_t out[8]; } v64[] = {
		{ 0, { 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 } },
		{ 8, { 0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93 } },
		{ 63, { 0x72, 0x45, 0x06, 0xeb, 0x4c, 0x32, 0x8a, 0x95 } },
	};
	uint8_t kb[16], msg[64], got[16];
	uint64_t key[2] = { 0, 0 }, out[2];

	for (unsigned i = 0; i < 16; i++)
		kb[i] = (uint8_t)i;
	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	memcpy(key, kb, 16);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v128); i++) {
		fg_siphash24_128(key, msg, v128[i].len, out);
		le_bytes(out, 2, got);
		ck_assert_mem_eq(got, v128[i].out, 16);
	}
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v64); i++) {
		out[0] = fg_siphash24_64(key, msg, v64[i].len);
		le_bytes(out, 1, got);
		ck_assert_mem_eq(got, v64[i].out, 8);
	}
	/* 1-3 is a different function of the same key */
	fg_siphash13_128(key, msg, 15, out);
	le_bytes(out, 2, got);
	ck_assert_mem_ne(got, v128[4].out, 16);
	/* CRC-32C check value (RFC 3720 B.4 / the "123456789" check) */
	ck_assert_uint_eq(fg_crc32c(0, "123456789", 9), 0xe3069283u);
}
END_TEST

/* CRC-32C one bit at a time: the definition the three-lane code must match. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (unsigned k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

/* Every length around the lane sizes (240 and 8192 octets, three lanes a
 * block), odd offsets, and a buffer fed in random pieces: the same value
 * as the bitwise definition. */
START_TEST(test_crc32c_lanes_match_bitwise)
{
	static uint8_t buf[3 * 8192 * 2 + 4096];
	static const size_t lens[] = { 0, 1, 7, 8, 719, 720, 721, 727, 728, 1440, 1448, 2160,
				       24575, 24576, 24577, 24576 + 720, 24576 + 719, 49152,
				       sizeof(buf) - 3 };
	uint64_t rng = 24;
	uint32_t want, got;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)fg_test_rng(&rng);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(lens); i++)
		for (unsigned off = 0; off < 3; off++) {
			want = crc32c_bitwise(0x12345678u, buf + off, lens[i]);
			got = fg_crc32c(0x12345678u, buf + off, lens[i]);
			ck_assert_msg(got == want, "len %zu offset %u: %08x, want %08x", lens[i], off,
				      got, want);
		}
	for (size_t len = 700; len < 800; len++)
		ck_assert_uint_eq(fg_crc32c(0, buf, len), crc32c_bitwise(0, buf, len));
	/* incremental, in pieces of 1 to 3000 octets */
	want = crc32c_bitwise(0, buf, sizeof(buf));
	got = 0;
	for (size_t at = 0; at < sizeof(buf);) {
		size_t n = FG_MIN(sizeof(buf) - at, 1 + fg_test_rng(&rng) % 3000);

		got = fg_crc32c(got, buf + at, n);
		at += n;
	}
	ck_assert_uint_eq(got, want);
}
END_TEST

/* FIPS-197 appendix C.1 (AES-128): the key schedule and rounds the AES
 * hash is built from. */
START_TEST(test_aes128_fips197)
{
	static const uint8_t pt[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const uint8_t ct[16] = { 0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
					0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a };
	uint8_t key[16], got[16];
	struct fg_aeskey k;

	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	fg_aeskey_init(&k, key);
	fg_aes128_encrypt(&k, pt, got);
	ck_assert_mem_eq(got, ct, 16);
}
END_TEST

/* The construction of aeshash.h written the plain way: block i of the ID
 * (the last one ending at its end) into lane i mod 4. */
static void aeshash_reference(const struct fg_aeskey *k, const uint8_t *p, size_t len,
			      uint64_t out[2])
{
	__m128i s[4] = { k->lane[0], k->lane[1], k->lane[2], k->lane[3] }, y;
	size_t n = (len + 15) / 16;
	uint8_t b[16];

	for (size_t i = 0; i < n; i++) {
		memset(b, 0, sizeof(b));
		if (len < 16)
			memcpy(b, p, len);
		else
			memcpy(b, p + (i + 1 < n ? 16 * i : len - 16), 16);
		s[i % 4] = fg_aes_r4(s[i % 4], fg_aes_ld(b), k);
	}
	y = _mm_xor_si128(_mm_xor_si128(s[0], s[1]), _mm_xor_si128(s[2], s[3]));
	y = _mm_xor_si128(y, _mm_set_epi64x(0, (long long)len));
	for (unsigned r = 5; r <= 7; r++)
		y = _mm_aesenc_si128(y, k->rk[r]);
	memcpy(out, &y, 16);
}

START_TEST(test_aeshash_vectors)
{
	/* Values of this implementation when it was written (key 00..0f,
	 * message 00 01 02 ...): a changed function would make every image
	 * written before unreadable, so a change must be deliberate (and
	 * bump the layout version). */
	static const struct { unsigned len; uint64_t lo, hi; } v[] = {
		{ 0, 0xc116f704c4a12771ull, 0xebcf80146119b754ull },
		{ 1, 0x6f3913951f7777ebull, 0x685fad7058acf64bull },
		{ 15, 0x1fa8f31da5e7bf78ull, 0x147842963d71084dull },
		{ 16, 0xbbbf478d0fe50fc9ull, 0xc2ab4aeafa362822ull },
		{ 17, 0xa36c6d480be29888ull, 0xb871cd07e91b7929ull },
		{ 40, 0xfe016b198a83ff47ull, 0x754a02f8185bc36eull },
		{ 48, 0x6f9d92e2e339cc1cull, 0xf5ee21fb1129b8f2ull },
		{ 63, 0x2d9dad6142875380ull, 0xfa23f7d76b74664eull },
		{ 64, 0xefff9ceb7be8aa1dull, 0xa35219b2f42d0897ull },
		{ 65, 0x7de851fb45f804cfull, 0x265d3c812521b32dull },
		{ 128, 0x90edf5a99723c9c4ull, 0xac734cfc74ee775eull },
		{ 250, 0xaa3200575e409597ull, 0x1002c7ac15e44e43ull },
	};
	uint8_t key[16], msg[300];
	struct fg_aeskey k;
	uint64_t out[2], ref[2];
	struct tbl t;
	struct fg_history_key hk;

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	memcpy(key, msg, 16);
	fg_aeskey_init(&k, key);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v); i++) {
		fg_aeshash128(&k, msg, v[i].len, out);
		ck_assert_msg(out[0] == v[i].lo && out[1] == v[i].hi, "length %u", v[i].len);
	}
	/* every tail shape of the fast path is the construction */
	for (size_t len = 0; len <= sizeof(msg); len++) {
		fg_aeshash128(&k, msg, len, out);
		aeshash_reference(&k, msg, len, ref);
		ck_assert_msg(out[0] == ref[0] && out[1] == ref[1], "length %zu", len);
	}
	/* an AES table hashes with its seed */
	tbl_open_hash(&t, 100, 0, FG_FULL_DEFER, key, FG_HISTORY_HASH_AES);
	fg_history_hash(t.h, msg, 64, &hk);
	ck_assert(hk.lo == v[8].lo && hk.hi == v[8].hi);
	ck_assert_uint_eq(((struct fg_hregion *)t.mem)->hash, FG_HISTORY_HASH_AES);
	tbl_close(&t);
}
END_TEST

static const enum fg_history_hashfn hashes[] = { FG_HISTORY_HASH_AES, FG_HISTORY_HASH_SIPHASH };

START_TEST(test_hash_depends_on_seed_and_every_octet)
{
	struct tbl a, b;
	uint8_t seed2[16], id[250];
	struct fg_history_key ka, kb, kc;
	enum fg_history_hashfn fn = hashes[_i];

	memcpy(seed2, test_seed, 16);
	seed2[15] ^= 1;
	tbl_open_hash(&a, 100, 0, FG_FULL_DEFER, test_seed, fn);
	tbl_open_hash(&b, 100, 0, FG_FULL_DEFER, seed2, fn);
	memset(id, 'x', sizeof(id));
	fg_history_hash(a.h, id, sizeof(id), &ka);
	fg_history_hash(b.h, id, sizeof(id), &kb);
	ck_assert(ka.lo != kb.lo && ka.hi != kb.hi);
	/* each octet, each bit of it (RFC 3977 3.6: octet equality, so case
	 * matters), and the length */
	for (unsigned i = 0; i < sizeof(id); i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			id[i] ^= (uint8_t)(1u << bit);
			fg_history_hash(a.h, id, sizeof(id), &kc);
			ck_assert(kc.lo != ka.lo && kc.hi != ka.hi);
			id[i] ^= (uint8_t)(1u << bit);
		}
		fg_history_hash(a.h, id, i, &kc);
		ck_assert(kc.lo != ka.lo && kc.hi != ka.hi);
	}
	tbl_close(&a);
	tbl_close(&b);
}
END_TEST

/* ---- transitions ---- */

START_TEST(test_offer_and_expiry_of_the_offer)
{
	struct tbl t;
	struct fg_history_ref r1, r2;
	struct fg_history_entry e;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(e.flags, 0);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0, 7, &r1, &e), -EINVAL);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + FG_HISTORY_OFFER_MAX + 1, 7, &r1, &e), -EINVAL);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 0x7abcde, &r1, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 5, &e), FG_HISTORY_OFFERED);
	ck_assert_int_eq(e.deadline, T0 + 10);
	ck_assert_uint_eq(e.token, 0x7abcde);
	ck_assert_uint_eq(e.flags, 0);
	/* another session's CHECK while the offer is live: 431 */
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0 + 9, T0 + 19, 99, &r2, &e), -EEXIST);
	ck_assert_int_eq(e.state, FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.token, 0x7abcde);
	/* at the deadline second the offer is over */
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 10, &e), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.flags, FG_HISTORY_F_EXPIRED);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0 + 10, T0 + 20, 99, &r2, &e), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 11, &e), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.token, 99);
	ck_assert_int_eq(e.deadline, T0 + 20);
	/* the first session's release no longer names this offer */
	ck_assert_int_eq(fg_history_release(t.h, &r1), -ESTALE);
	ck_assert_int_eq(fg_history_release(t.h, &r2), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 11, &e), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_release(t.h, &r2), -ESTALE);
	tbl_close(&t);
}
END_TEST

START_TEST(test_release_checks_the_whole_token)
{
	struct tbl t;
	struct fg_history_ref r, forged;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 2);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 0x12345, &r, NULL), 0);
	forged = r;
	forged.token ^= 0x100;	/* same low 7 bits, other high bits */
	ck_assert_int_eq(fg_history_release(t.h, &forged), -ESTALE);
	forged = r;
	forged.slot = t.h->m * FG_HSLOTS;
	ck_assert_int_eq(fg_history_release(t.h, &forged), -EINVAL);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_history_release(t.h, &r), 0);
	tbl_close(&t);
}
END_TEST

START_TEST(test_accept_from_absent_and_duplicates)
{
	struct tbl t;
	struct fg_history_ref r, r2;
	struct fg_history_entry e;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 3);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, 5, &r, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, 6, &r2, &e), -EAGAIN);
	ck_assert_int_eq(e.state, FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 6, &r2, &e), -EEXIST);
	ck_assert_int_eq(e.state, FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_REJECTED, T0, T0, T0, &e), -EEXIST);
	ck_assert_int_eq(fg_history_release(t.h, &r), -EINVAL);	/* not an offer */
	ck_assert_int_eq(fg_history_finish(t.h, &r, FG_HISTORY_OFFERED, T0, T0, T0), -EINVAL);
	ck_assert_int_eq(fg_history_finish(t.h, &r, FG_HISTORY_ACCEPTED, T0 - 3600, T0 - 5, T0), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(e.first_seen, T0 - 5);
	/* whole minutes from first-seen, rounded up: -3595 s -> -59 min */
	ck_assert_int_eq(e.article_date, T0 - 5 - 59 * 60);
	ck_assert_int_eq(fg_history_finish(t.h, &r, FG_HISTORY_ACCEPTED, T0, T0, T0), -ESTALE);
	ck_assert_int_eq(fg_history_abort(t.h, &r), -ESTALE);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, 6, &r2, &e), -EEXIST);
	ck_assert_int_eq(e.state, FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 6, &r2, &e), -EEXIST);
	ck_assert_int_eq(e.state, FG_HISTORY_ACCEPTED);
	tbl_close(&t);
}
END_TEST

START_TEST(test_any_session_completes_an_offer)
{
	struct tbl t;
	struct fg_history_ref offer, acc;
	struct fg_history_entry e;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 4);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 1, &offer, NULL), 0);
	/* innfeed may switch to TAKETHIS without CHECK: session 2 sends it */
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0 + 1, 2, &acc, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.token, 1);
	ck_assert_int_eq(fg_history_release(t.h, &offer), -ESTALE);
	ck_assert_int_eq(fg_history_finish(t.h, &acc, FG_HISTORY_REJECTED, T0, T0, T0 + 1), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 1, &e), FG_HISTORY_REJECTED);
	/* an expired offer is taken over just the same */
	k = KEY(t.h, 5);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 1, &offer, NULL), 0);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0 + 60, 2, &acc, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.flags, FG_HISTORY_F_EXPIRED);
	ck_assert_int_eq(fg_history_finish(t.h, &acc, FG_HISTORY_ACCEPTED, T0, T0, T0 + 60), 0);
	tbl_close(&t);
}
END_TEST

START_TEST(test_second_transfer_takes_over_after_abort)
{
	struct tbl t;
	struct fg_history_ref first, second;
	struct fg_history_entry e;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 6);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, 1, &first, NULL), 0);
	/* the second transfer of the same ID waits for the first's outcome */
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, 2, &second, &e), -EAGAIN);
	ck_assert_int_eq(e.state, FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0 + 1, 2, &second, &e), -EAGAIN);
	/* the first could not be made durable */
	ck_assert_int_eq(fg_history_abort(t.h, &first), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_abort(t.h, &first), -ESTALE);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0 + 2, 2, &second, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_finish(t.h, &first, FG_HISTORY_ACCEPTED, T0, T0, T0), -ESTALE);
	ck_assert_int_eq(fg_history_finish(t.h, &second, FG_HISTORY_ACCEPTED, T0, T0, T0 + 2), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 2, &e), FG_HISTORY_ACCEPTED);
	tbl_close(&t);
}
END_TEST

START_TEST(test_insert_final_states)
{
	static const enum fg_history_state finals[] = { FG_HISTORY_ACCEPTED, FG_HISTORY_REJECTED,
							FG_HISTORY_SUPERSEDED };
	struct tbl t;
	struct fg_history_entry e;
	struct fg_history_ref r;
	struct fg_history_key k;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < 3; i++) {
		k = KEY(t.h, 10 + i);
		ck_assert_int_eq(fg_history_insert_final(t.h, &k, finals[i], T0 - 600, T0 - 300, T0, &e), 0);
		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, &e), -EEXIST);
		ck_assert_int_eq(e.state, finals[i]);
		ck_assert_int_eq(e.first_seen, T0 - 300);
		ck_assert_int_eq(e.article_date, T0 - 600);
	}
	k = KEY(t.h, 20);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_OFFERED, T0, T0, T0, &e), -EINVAL);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ABSENT, T0, T0, T0, &e), -EINVAL);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0 + FG_HISTORY_CLOCK_SLACK + 1, T0, &e), -EINVAL);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0 - FG_HISTORY_MAX_AGE, T0, &e), -EINVAL);
	/* a live offer blocks it, an expired one does not */
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 3, &r, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_SUPERSEDED, T0, T0, T0 + 9, &e), -EEXIST);
	ck_assert_int_eq(e.state, FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_SUPERSEDED, T0, T0, T0 + 10, &e), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 10, &e), FG_HISTORY_SUPERSEDED);
	tbl_close(&t);
}
END_TEST

static unsigned fill_until_full(struct fg_history *h, unsigned max);

/* floodctl forget: a final entry goes, in-flight ones stay, absent is said;
 * at high load (entries relocated) every forgotten key is gone, none other. */
START_TEST(test_forget)
{
	struct tbl t;
	struct fg_history_entry e;
	struct fg_history_ref r;
	struct fg_history_key k;
	struct fg_history_stats st;
	unsigned n;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	k = KEY(t.h, 1);
	ck_assert_int_eq(fg_history_forget(t.h, &k, T0, &e), -ENOENT);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_REJECTED, T0 - 600, T0 - 300, T0, NULL), 0);
	ck_assert_int_eq(fg_history_forget(t.h, &k, T0, &e), 0);
	ck_assert_int_eq(e.state, FG_HISTORY_REJECTED);
	ck_assert_int_eq(e.first_seen, T0 - 300);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_forget(t.h, &k, T0, NULL), -ENOENT);
	/* offered, then accepting: the transfer decides */
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 3, &r, NULL), 0);
	ck_assert_int_eq(fg_history_forget(t.h, &k, T0, NULL), -EBUSY);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_OFFERED);
	tbl_close(&t);

	tbl_open(&t, 20000, 0, FG_FULL_DEFER);
	n = fill_until_full(t.h, 30000);
	for (unsigned i = 0; i < n; i += 2) {
		k = KEY(t.h, i);
		ck_assert_int_eq(fg_history_forget(t.h, &k, T0, NULL), 0);
	}
	for (unsigned i = 0; i < n; i++) {
		k = KEY(t.h, i);
		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL),
				 i % 2 ? FG_HISTORY_ACCEPTED : FG_HISTORY_ABSENT);
	}
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, n / 2);
	tbl_close(&t);
}
END_TEST

/* ---- times ---- */

START_TEST(test_first_seen_exact_across_its_window)
{
	struct tbl t;
	struct fg_history_entry e;
	static const int64_t ages[] = { 0, 1, 59, 86399, 86400 * 7 + 13, 86400LL * 45,
					FG_HISTORY_MAX_AGE - 1, -1, -FG_HISTORY_CLOCK_SLACK };

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(ages); i++) {
		struct fg_history_key k = KEY(t.h, 100 + i);
		fg_time_t fs = T0 - ages[i];

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, fs, fs, T0, NULL), 0);
		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ACCEPTED);
		ck_assert_int_eq(e.first_seen, fs);
		ck_assert_int_eq(e.article_date, fs);
		ck_assert_uint_eq(e.flags, 0);
	}
	tbl_close(&t);
}
END_TEST

START_TEST(test_article_date_rounding_and_clamps)
{
	static const struct { int64_t off, stored; uint32_t flags; } c[] = {
		{ 0, 0, 0 },
		{ 1, 60, 0 },			/* rounded up: never earlier than the truth */
		{ 59, 60, 0 },
		{ 60, 60, 0 },
		{ -1, 0, 0 },
		{ -59, 0, 0 },
		{ -61, -60, 0 },
		{ -7 * 86400, -7 * 86400, 0 },
		{ FG_HISTORY_DATE_MIN_OFFSET, FG_HISTORY_DATE_MIN_OFFSET, 0 },
		{ FG_HISTORY_DATE_MIN_OFFSET - 60, FG_HISTORY_DATE_MIN_OFFSET - 60, FG_HISTORY_F_DATE_CLAMPED_OLD },
		{ -400LL * 86400, FG_HISTORY_DATE_MIN_OFFSET - 60, FG_HISTORY_F_DATE_CLAMPED_OLD },
		{ 24 * 3600, 24 * 3600, 0 },
		{ FG_HISTORY_DATE_MAX_OFFSET, FG_HISTORY_DATE_MAX_OFFSET, 0 },
		{ FG_HISTORY_DATE_MAX_OFFSET + 1, FG_HISTORY_DATE_MAX_OFFSET + 60, FG_HISTORY_F_DATE_CLAMPED_FUTURE },
		{ 90LL * 86400, FG_HISTORY_DATE_MAX_OFFSET + 60, FG_HISTORY_F_DATE_CLAMPED_FUTURE },
	};
	struct tbl t;
	struct fg_history_entry e;
	const fg_time_t fs = T0 - 1000;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(c); i++) {
		struct fg_history_key k = KEY(t.h, 200 + i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_REJECTED, fs + c[i].off, fs, T0, NULL), 0);
		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_REJECTED);
		ck_assert_msg(e.article_date == fs + c[i].stored, "case %u: offset %lld stored as %lld",
			      i, (long long)c[i].off, (long long)(e.article_date - fs));
		ck_assert_uint_eq(e.flags, c[i].flags);
		ck_assert_int_eq(e.first_seen, fs);
	}
	tbl_close(&t);
}
END_TEST

/* ---- expiry ---- */

/* One whole sweep pass in slices of `budget` buckets. */
static void sweep(struct fg_history *h, struct fg_history_sweep *s, enum fg_expiry_mode mode,
		  fg_time_t now, int64_t limit, bool dry_run, unsigned budget)
{
	unsigned steps = 0;

	ck_assert_int_eq(fg_history_sweep_init(s, mode, now, limit, limit, dry_run), 0);
	while (fg_history_sweep_step(h, s, budget))
		steps++;
	ck_assert(s->done);
	ck_assert_uint_eq(s->cursor, h->m);
	ck_assert_uint_eq(steps, (h->m + budget - 1) / budget - 1);
}

#define SWEEP_FS(now, retention, dry, budget) \
	sweep(t.h, &s, FG_EXPIRY_FIRST_SEEN, (now), (retention), (dry), (budget))
#define SWEEP_DATE(now, cutoff) sweep(t.h, &s, FG_EXPIRY_ARTICLE_DATE, (now), (cutoff), false, 3)

START_TEST(test_expiry_by_first_seen_exact_second)
{
	const int64_t retention = 11 * 86400;
	const fg_time_t now = T0 + 86400LL * 30;
	struct tbl t;
	struct fg_history_sweep s;
	struct fg_history_key keep, drop, young;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	keep = KEY(t.h, 1);
	drop = KEY(t.h, 2);
	young = KEY(t.h, 3);
	/* dropped iff first_seen < now - retention; the article date is
	 * irrelevant in this mode (here: far in the past for all three) */
	ck_assert_int_eq(fg_history_insert_final(t.h, &keep, FG_HISTORY_ACCEPTED, T0, now - retention, now, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &drop, FG_HISTORY_ACCEPTED, T0, now - retention - 1, now, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &young, FG_HISTORY_REJECTED, T0, now - 5, now, NULL), 0);
	SWEEP_FS(now, retention, true, 7);
	ck_assert_uint_eq(s.expired, 1);
	ck_assert_uint_eq(s.kept, 2);
	ck_assert_uint_eq(s.expired_by_state[FG_HISTORY_ACCEPTED], 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &drop, now, NULL), FG_HISTORY_ACCEPTED);	/* dry run */
	SWEEP_FS(now, retention, false, 1);
	ck_assert_uint_eq(s.expired, 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &drop, now, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &keep, now, NULL), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_history_lookup(t.h, &young, now, NULL), FG_HISTORY_REJECTED);
	/* one second later the boundary entry goes too */
	SWEEP_FS(now + 1, retention, false, 1000);
	ck_assert_uint_eq(s.expired, 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &keep, now + 1, NULL), FG_HISTORY_ABSENT);
	tbl_close(&t);
}
END_TEST

START_TEST(test_expiry_by_article_date_exact_to_the_minute)
{
	const int64_t cutoff = 10 * 86400;
	const fg_time_t fs = T0;
	/* a: a whole number of minutes before first-seen, stored exactly;
	 * b: stored rounded up to fs - 3600, 30 s later than its truth;
	 * c: stored as fs - 3540 */
	const fg_time_t da = fs - 3600, db = fs - 3630, dc = fs - 3570;
	struct tbl t;
	struct fg_history_sweep s;
	struct fg_history_key a, b, c;
	struct fg_history_stats st;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	a = KEY(t.h, 1);
	b = KEY(t.h, 2);
	c = KEY(t.h, 3);
	ck_assert_int_eq(fg_history_insert_final(t.h, &a, FG_HISTORY_ACCEPTED, da, fs, fs, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &b, FG_HISTORY_ACCEPTED, db, fs, fs, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &c, FG_HISTORY_REJECTED, dc, fs, fs, NULL), 0);
	/* b's true date is one second past the cutoff, its stored date is
	 * not: kept (never dropped early, at most 59 s late) */
	SWEEP_DATE(db + cutoff + 1, cutoff);
	ck_assert_uint_eq(s.expired, 0);
	ck_assert_uint_eq(s.kept, 3);
	/* dropped iff stored date < now - cutoff: at now = date + cutoff, kept */
	SWEEP_DATE(da + cutoff, cutoff);
	ck_assert_uint_eq(s.expired, 0);
	SWEEP_DATE(da + cutoff + 1, cutoff);
	ck_assert_uint_eq(s.expired, 2);
	ck_assert_uint_eq(s.kept_by_state[FG_HISTORY_REJECTED], 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &a, fs, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &b, fs, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &c, fs, NULL), FG_HISTORY_REJECTED);
	SWEEP_DATE(fs - 3540 + cutoff, cutoff);
	ck_assert_uint_eq(s.expired, 0);
	SWEEP_DATE(fs - 3540 + cutoff + 1, cutoff);
	ck_assert_uint_eq(s.expired, 1);
	ck_assert_uint_eq(s.expired_by_state[FG_HISTORY_REJECTED], 1);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.expired, 3);
	ck_assert_uint_eq(st.entries, 0);
	tbl_close(&t);
}
END_TEST

START_TEST(test_sweep_drops_dead_offers_keeps_transfers)
{
	struct tbl t;
	struct fg_history_sweep s;
	struct fg_history_ref r;
	struct fg_history_key live, dead, acc;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	live = KEY(t.h, 1);
	dead = KEY(t.h, 2);
	acc = KEY(t.h, 3);
	ck_assert_int_eq(fg_history_offer(t.h, &live, T0, T0 + 20, 1, &r, NULL), 0);
	ck_assert_int_eq(fg_history_offer(t.h, &dead, T0, T0 + 5, 1, &r, NULL), 0);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &acc, T0 - 86400 * 50, 1, &r, NULL), 0);
	SWEEP_FS(T0 + 10, 0, false, 50);
	ck_assert_uint_eq(s.expired_offers, 1);
	ck_assert_uint_eq(s.expired, 0);
	ck_assert_uint_eq(s.kept, 2);
	ck_assert_uint_eq(s.kept_by_state[FG_HISTORY_ACCEPTING], 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &dead, T0 + 10, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &live, T0 + 10, NULL), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_history_lookup(t.h, &acc, T0 + 10, NULL), FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_sweep_init(&s, FG_EXPIRY_FIRST_SEEN, T0, 0, FG_HISTORY_RETENTION_MAX + 1, false), -EINVAL);
	ck_assert_int_eq(fg_history_sweep_init(&s, FG_EXPIRY_ARTICLE_DATE, T0, -1, 0, false), -EINVAL);
	ck_assert_int_eq(fg_history_sweep_init(&s, (enum fg_expiry_mode)7, T0, 0, 0, false), -EINVAL);
	tbl_close(&t);
}
END_TEST

/* ---- load, relocation, full table ---- */

/* Fill with final entries until the first failed insert; returns how many
 * were stored and checks every one of them is still found. */
static unsigned fill_until_full(struct fg_history *h, unsigned max)
{
	unsigned n;
	int r = 0;

	for (n = 0; n < max; n++) {
		struct fg_history_key k = KEY(h, n);

		r = fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, T0, T0 - (fg_time_t)n, T0, NULL);
		if (r)
			break;
	}
	ck_assert_int_eq(r, -ENOSPC);
	for (unsigned i = 0; i < n; i++) {
		struct fg_history_key k = KEY(h, i);
		struct fg_history_entry e;

		ck_assert_int_eq(fg_history_lookup(h, &k, T0, &e), FG_HISTORY_ACCEPTED);
		ck_assert_int_eq(e.first_seen, T0 - (fg_time_t)i);
	}
	return n;
}

START_TEST(test_relocation_reaches_high_load_and_loses_nothing)
{
	struct tbl t;
	struct fg_history_stats st;
	unsigned n;

	tbl_open(&t, 20000, 0, FG_FULL_DEFER);
	n = fill_until_full(t.h, 30000);
	fg_history_stats(t.h, &st);
	/* two-choice without relocation stops near 50 %; the BFS makes 98 % */
	ck_assert_msg(n >= 19000, "first failure at %u of 20000 slots", n);
	fprintf(stderr, "relocation: first failure at %u of 20000 slots\n", n);
	ck_assert_uint_eq(st.entries, n);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTED], n);
	ck_assert_uint_gt(st.moves, n / 20);
	ck_assert_uint_eq(st.insert_failures, 1);
	ck_assert(st.alarm);
	ck_assert_uint_le((uint64_t)st.region_size * 100 / n, 16 * 100);
	tbl_close(&t);
}
END_TEST

START_TEST(test_defer_policy_refuses_and_counts)
{
	struct tbl t;
	struct fg_history_stats st;
	struct fg_history_entry e;
	struct fg_history_ref r;
	unsigned n, refused = 0, taken = 0;

	tbl_open(&t, 500, 0, FG_FULL_DEFER);
	n = fill_until_full(t.h, 1000);
	/* the first failure says one pair had no room; others may still */
	for (unsigned i = 0; i < 200; i++) {
		struct fg_history_key k = KEY(t.h, 5000 + i);
		int rc = fg_history_offer(t.h, &k, T0, T0 + 10, 1, &r, &e);

		ck_assert(rc == 0 || rc == -ENOSPC);
		refused += rc == -ENOSPC;
		taken += rc == 0;
	}
	ck_assert_uint_gt(refused, 100);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, n + taken);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_OFFERED], taken);
	ck_assert_uint_eq(st.insert_failures, 1 + refused);
	ck_assert_uint_eq(st.evictions, 0);
	tbl_close(&t);
}
END_TEST

START_TEST(test_evict_oldest_policy)
{
	struct tbl t;
	struct fg_history_stats st;
	unsigned n, absent = 0;

	tbl_open(&t, 500, 0, FG_FULL_DEFER);
	n = fill_until_full(t.h, 1000);
	ck_assert_int_eq(fg_history_set_policy(t.h, FG_FULL_EVICT_OLDEST, 90), 0);
	ck_assert_int_eq(fg_history_set_policy(t.h, (enum fg_full_policy)9, 90), -EINVAL);
	ck_assert_int_eq(fg_history_set_policy(t.h, FG_FULL_EVICT_OLDEST, 101), -EINVAL);
	/* 100 newer entries: each goes in, the oldest of its pair goes out */
	for (unsigned i = 0; i < 100; i++) {
		struct fg_history_key k = KEY(t.h, 5000 + i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0 + 1, T0 + 1, NULL), 0);
	}
	fg_history_stats(t.h, &st);
	ck_assert_uint_ge(st.evictions, 1);
	ck_assert_uint_le(st.evictions, 100);
	ck_assert_uint_eq(st.entries, n + 100 - st.evictions);
	for (unsigned i = 0; i < 100; i++) {
		struct fg_history_key k = KEY(t.h, 5000 + i);

		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0 + 1, NULL), FG_HISTORY_ACCEPTED);
	}
	/* entry i was first seen at T0 - i: the evicted are old ones, each
	 * the oldest of its pair, so far more of the oldest half went */
	for (unsigned i = 0; i < n; i++) {
		struct fg_history_key k = KEY(t.h, i);

		if (fg_history_lookup(t.h, &k, T0 + 1, NULL) == FG_HISTORY_ABSENT)
			absent += i >= n / 2 ? 1 : 0;
	}
	ck_assert_uint_gt(absent, st.evictions / 2);
	tbl_close(&t);
}
END_TEST

/* Keys whose two buckets are one: five slots only, nothing can move. */
START_TEST(test_single_bucket_pair)
{
	struct tbl t;
	struct fg_history_key k[6];
	unsigned found = 0;
	uint64_t m;

	tbl_open(&t, 50, 0, FG_FULL_DEFER);
	m = t.h->m;
	/* alt(3) == 3 when H(fp) mod m == 6; lo lands in bucket 3 */
	for (uint64_t fp = 1; found < 6 && fp < 100000; fp++) {
		if (fg_halt(m, 3, fp) != 3)
			continue;
		k[found].hi = fp << (64 - FG_HISTORY_FP_BITS);
		k[found].lo = (uint64_t)(((unsigned __int128)3 << 64) / m) + 1;
		found++;
	}
	ck_assert_uint_eq(found, 6);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(fg_history_insert_final(t.h, &k[i], FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k[5], FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), -ENOSPC);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(fg_history_lookup(t.h, &k[i], T0, NULL), FG_HISTORY_ACCEPTED);
	tbl_close(&t);
}
END_TEST

/* A key for a 2-bucket table: first bucket b1, and x = H(fp) mod 2, so
 * that its other bucket is (x - b1) mod 2 (x = 0: both buckets are b1). */
static struct fg_history_key crafted_key(uint64_t m, uint64_t b1, uint64_t x, uint64_t *fp)
{
	struct fg_history_key k;

	for (++*fp; fg_hrange(fg_hmix(*fp), m) != x; ++*fp)
		;
	k.hi = *fp << (64 - FG_HISTORY_FP_BITS);
	k.lo = b1 ? UINT64_MAX : 0;
	return k;
}

struct relocate_during_probe {
	struct fg_history *other;
	struct fg_history_key j;
	int inserted;
};

/* Runs inside a lookup of K, between its two buckets: an insert that
 * relocates K from the bucket not yet read into the one already read. */
static void relocate_hook(void *arg, enum fg_history_hook_point where)
{
	struct relocate_during_probe *r = arg;

	if (where == FG_HISTORY_HOOK_PROBE && !r->inserted++)
		ck_assert_int_eq(fg_history_insert_final(r->other, &r->j, FG_HISTORY_ACCEPTED,
							 T0, T0, T0, NULL), 0);
}

START_TEST(test_lookup_sees_an_entry_moving_behind_it)
{
	struct tbl t;
	struct fg_history_sweep s;
	struct relocate_during_probe r = { 0 };
	struct fg_history_key k, fill;
	struct fg_history_entry e;
	struct fg_history_stats st;
	uint64_t fp = 0;

	tbl_open(&t, 10, 0, FG_FULL_DEFER);	/* two buckets: 0 and 1 */
	ck_assert_uint_eq(t.h->m, 2);
	/* bucket 0: five immovable entries, one of them old */
	for (unsigned i = 0; i < 5; i++) {
		fill = crafted_key(2, 0, 0, &fp);
		ck_assert_int_eq(fg_history_insert_final(t.h, &fill, FG_HISTORY_ACCEPTED, T0,
							 i ? T0 : T0 - 86400 * 30, T0, NULL), 0);
	}
	/* K prefers bucket 0, which is full: it goes to bucket 1 */
	k = crafted_key(2, 0, 1, &fp);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0 - 67, T0 - 7, T0, NULL), 0);
	/* the old entry expires: bucket 0 has a free slot */
	sweep(t.h, &s, FG_EXPIRY_FIRST_SEEN, T0, 86400, false, 2);
	ck_assert_uint_eq(s.expired, 1);
	/* bucket 1 full with K and four immovable entries */
	for (unsigned i = 0; i < 4; i++) {
		fill = crafted_key(2, 1, 0, &fp);
		ck_assert_int_eq(fg_history_insert_final(t.h, &fill, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	}
	/* J lives only in bucket 1: inserting it moves K to bucket 0 */
	r.j = crafted_key(2, 1, 0, &fp);
	r.other = fg_history_attach(t.mem, t.len, NULL);
	fg_history_set_test_hook(t.h, relocate_hook, &r);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &e), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(r.inserted, 1);
	ck_assert_int_eq(e.first_seen, T0 - 7);
	ck_assert_int_eq(e.article_date, T0 - 67);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.moves, 1);
	fg_history_detach(r.other);
	tbl_close(&t);
}
END_TEST

static struct fg_history *sweep_other;	/* the sweeper's own handle */

struct sweep_in_move {
	int calls;
	struct fg_history_sweep s;
};

/* Runs inside a relocation, between its copy and its delete: a whole
 * expiry pass over the table. */
static void sweep_hook(void *arg, enum fg_history_hook_point where)
{
	struct sweep_in_move *m = arg;

	if (where != FG_HISTORY_HOOK_MOVE || m->calls++)
		return;
	ck_assert_int_eq(fg_history_sweep_init(&m->s, FG_EXPIRY_FIRST_SEEN, T0, 86400, 86400, false), 0);
	while (fg_history_sweep_step(sweep_other, &m->s, 1))
		;
}

START_TEST(test_sweep_counts_a_moving_entry_once)
{
	/* K moves out of bucket `from` while a sweep passes both buckets: the
	 * sweep meets the source first (from 0) or the copy first (from 1),
	 * and either way deletes both and counts one expiry */
	for (unsigned from = 0; from < 2; from++) {
		struct sweep_in_move m = { 0 };
		struct fg_history_key k, j, fill;
		struct fg_history_stats st;
		struct tbl t;
		uint64_t fp = 0;

		tbl_open(&t, 10, 0, FG_FULL_DEFER);	/* two buckets: 0 and 1 */
		ck_assert_uint_eq(t.h->m, 2);
		k = crafted_key(2, from, 1, &fp);	/* expired, movable */
		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0 - 86400 * 30,
							 T0 - 86400 * 30, T0, NULL), 0);
		for (unsigned i = 0; i < 4; i++) {	/* fresh, immovable */
			fill = crafted_key(2, from, 0, &fp);
			ck_assert_int_eq(fg_history_insert_final(t.h, &fill, FG_HISTORY_ACCEPTED, T0, T0,
								 T0, NULL), 0);
		}
		/* J lives only in bucket `from`: inserting it moves K */
		j = crafted_key(2, from, 0, &fp);
		sweep_other = fg_history_attach(t.mem, t.len, NULL);
		fg_history_set_test_hook(t.h, sweep_hook, &m);
		ck_assert_int_eq(fg_history_insert_final(t.h, &j, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
		ck_assert_int_eq(m.calls, 1);
		ck_assert(m.s.done);
		ck_assert_uint_eq(m.s.expired, 1);
		ck_assert_uint_eq(m.s.kept, 4);
		fg_history_stats(t.h, &st);
		ck_assert_uint_eq(st.expired, 1);
		ck_assert_uint_eq(st.moves, 0);		/* the move lost to the sweep */
		ck_assert_uint_eq(st.entries, 5);
		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_ABSENT);
		ck_assert_int_eq(fg_history_lookup(t.h, &j, T0, NULL), FG_HISTORY_ACCEPTED);
		fg_history_detach(sweep_other);
		tbl_close(&t);
	}
}
END_TEST

struct nested_insert {
	struct fg_history *other;
	struct fg_history_key k;
	enum fg_history_hook_point at;
	int rc, calls;
	struct fg_history_entry e;
};

/* At one hook point of an insert, the same ID is inserted by another
 * handle, start to finish: the two interleavings a single thread can make. */
static void nested_hook(void *arg, enum fg_history_hook_point where)
{
	struct nested_insert *n = arg;
	struct fg_history_ref ref;

	if (where == n->at && !n->calls++)
		n->rc = fg_history_offer(n->other, &n->k, T0, T0 + 10, 2, &ref, &n->e);
}

START_TEST(test_insert_races_at_each_step)
{
	struct tbl t;
	struct nested_insert n = { 0 };
	struct fg_history_entry e;
	struct fg_history_ref ref;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	n.other = fg_history_attach(t.mem, t.len, NULL);
	fg_history_set_test_hook(t.h, nested_hook, &n);
	/* the other insert runs between our scan and our claim: it wins, and
	 * our decide scan finds its entry (token 2) and withdraws ours */
	n.k = KEY(t.h, 1);
	n.at = FG_HISTORY_HOOK_CLAIM;
	ck_assert_int_eq(fg_history_offer(t.h, &n.k, T0, T0 + 10, 1, &ref, &e), -EEXIST);
	ck_assert_int_eq(n.rc, 0);
	ck_assert_uint_eq(e.token, 2);
	/* it runs while ours is placed and about to publish: it sees ours
	 * deciding (-EAGAIN), and ours wins */
	n.k = KEY(t.h, 2);
	n.at = FG_HISTORY_HOOK_PUBLISH;
	n.calls = 0;
	ck_assert_int_eq(fg_history_offer(t.h, &n.k, T0, T0 + 10, 1, &ref, &e), 0);
	ck_assert_int_eq(n.rc, -EAGAIN);
	ck_assert_int_eq(n.e.state, FG_HISTORY_PENDING);
	ck_assert_int_eq(fg_history_lookup(t.h, &n.k, T0, &e), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(e.token, 1);
	fg_history_detach(n.other);
	tbl_close(&t);
}
END_TEST

/* ---- a writer that died: settle, then drop, by owner ---- */

START_TEST(test_settle_and_drop_by_owner)
{
	const unsigned dead = 3, live = 5;
	struct tbl t;
	struct fg_history_key k[6];
	struct fg_history_ref ref;
	struct fg_history_entry e;
	struct fg_history_owned o;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < 6; i++)
		k[i] = KEY(t.h, i);
	ck_assert_uint_eq(fg_history_token(1, dead) & FG_HISTORY_OWNER_NONE, dead);
	ck_assert_uint_eq(fg_history_token_owner(fg_history_token(0x7fffffu, live)), live);
	/* the dead owner: an offer, two transfers; the live one: one of each */
	ck_assert_int_eq(fg_history_offer(t.h, &k[0], T0, T0 + 60, fg_history_token(1, dead), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k[1], T0, fg_history_token(2, dead), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k[2], T0, fg_history_token(3, dead), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_offer(t.h, &k[3], T0, T0 + 60, fg_history_token(1, live), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k[4], T0, fg_history_token(2, live), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k[5], FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	fg_history_count_owned(t.h, dead, &o);
	ck_assert_uint_eq(o.offered, 1);
	ck_assert_uint_eq(o.accepting, 2);
	ck_assert_uint_eq(o.pending, 0);
	fg_history_count_owned(t.h, FG_HISTORY_OWNER_ANY, &o);
	ck_assert_uint_eq(o.offered + o.accepting, 5);
	/* settle: only an ACCEPTING entry of that owner */
	ck_assert_int_eq(fg_history_settle(t.h, &k[1], live, T0 - 100, T0, T0), -ENOENT);
	ck_assert_int_eq(fg_history_settle(t.h, &k[0], dead, T0 - 100, T0, T0), -ENOENT);
	ck_assert_int_eq(fg_history_settle(t.h, &k[5], dead, T0 - 100, T0, T0), -ENOENT);
	ck_assert_int_eq(fg_history_settle(t.h, &k[1], dead, T0 - 100, T0 + 1000 * 86400LL, T0), -EINVAL);
	ck_assert_int_eq(fg_history_settle(t.h, &k[1], dead, T0 - 100, T0, T0), 0);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[1], T0, &e), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(e.first_seen, T0);
	ck_assert_int_le(e.article_date - (T0 - 100), FG_HISTORY_DATE_UNIT);
	ck_assert_int_eq(fg_history_settle(t.h, &k[1], dead, T0, T0, T0), -ENOENT);	/* once */
	/* drop: the dead owner's offer and remaining transfer, nothing else */
	ck_assert_uint_eq(fg_history_drop_owned(t.h, dead, &o), 2);
	ck_assert_uint_eq(o.offered, 1);
	ck_assert_uint_eq(o.accepting, 1);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[0], T0, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[2], T0, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[1], T0, NULL), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[3], T0, NULL), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[4], T0, NULL), FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(fg_history_lookup(t.h, &k[5], T0, NULL), FG_HISTORY_ACCEPTED);
	ck_assert_uint_eq(fg_history_drop_owned(t.h, dead, NULL), 0);
	/* the freed IDs are free at once for anyone */
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k[2], T0, fg_history_token(9, live), &ref, NULL), 0);
	ck_assert_int_eq(fg_history_offer(t.h, &k[0], T0, T0 + 60, fg_history_token(9, live), &ref, NULL), 0);
	/* the counts follow: 1 offered + ... as a recount says */
	{
		struct fg_history_stats st;

		fg_history_stats(t.h, &st);
		ck_assert_uint_eq(st.by_state[FG_HISTORY_OFFERED], 2);
		ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTING], 2);
		ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTED], 2);
	}
	/* everyone at once */
	ck_assert_uint_eq(fg_history_drop_owned(t.h, FG_HISTORY_OWNER_ANY, NULL), 4);
	tbl_close(&t);
}
END_TEST

/* An insert still deciding when its owner died: the hook freezes one at
 * its publish step, where a writer that died there would have left it
 * BUSY. The drop takes it; let go, it cannot publish (its CAS finds the
 * slot changed) and the ID is free. */
struct drop_at_publish {
	struct fg_history *h;
	unsigned owner;
	uint64_t dropped;
	struct fg_history_owned o;
};

static void drop_hook(void *arg, enum fg_history_hook_point at)
{
	struct drop_at_publish *d = arg;

	if (at == FG_HISTORY_HOOK_PUBLISH && !d->dropped)
		d->dropped = fg_history_drop_owned(d->h, d->owner, &d->o);
}

START_TEST(test_drop_owned_takes_a_deciding_insert)
{
	struct tbl t;
	struct drop_at_publish d = { 0 };
	struct fg_history_key k;
	struct fg_history_ref ref;
	struct fg_history_entry e;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	d.h = fg_history_attach(t.mem, t.len, NULL);
	d.owner = 11;
	fg_history_set_test_hook(t.h, drop_hook, &d);
	k = KEY(t.h, 77);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, fg_history_token(4, 11), &ref, &e), -EAGAIN);
	ck_assert_int_eq(e.state, FG_HISTORY_PENDING);
	ck_assert_uint_eq(d.dropped, 1);
	ck_assert_uint_eq(d.o.pending, 1);
	fg_history_set_test_hook(t.h, NULL, NULL);
	ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0, fg_history_token(5, 11), &ref, &e), 0);
	fg_history_detach(d.h);
	tbl_close(&t);
}
END_TEST

START_TEST(test_stats_alarm_and_clear_transient)
{
	struct tbl t;
	struct fg_history_stats st;
	struct fg_history_ref r;
	unsigned i;

	tbl_open(&t, 100, 0, FG_FULL_DEFER);
	ck_assert_int_eq(fg_history_set_policy(t.h, FG_FULL_DEFER, 50), 0);
	for (i = 0; i < 49; i++) {
		struct fg_history_key k = KEY(t.h, i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	}
	fg_history_stats(t.h, &st);
	ck_assert(!st.alarm);
	ck_assert_uint_eq(st.load_ppm, 490000);
	for (; i < 53; i++) {
		struct fg_history_key k = KEY(t.h, i);

		ck_assert_int_eq(i % 2 ? fg_history_offer(t.h, &k, T0, T0 + 5, i, &r, NULL)
				       : fg_history_begin_accept(t.h, &k, T0, i, &r, NULL), 0);
	}
	fg_history_stats(t.h, &st);
	ck_assert(st.alarm);
	ck_assert_uint_eq(st.entries, 53);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_OFFERED], 2);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTING], 2);
	ck_assert_uint_eq(st.slots, 100);
	ck_assert_uint_eq(st.alarm_load_pct, 50);
	/* after a dataplane crash its sessions are gone */
	ck_assert_uint_eq(fg_history_clear_transient(t.h), 4);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, 49);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_OFFERED], 0);
	tbl_close(&t);
}
END_TEST

static int count_cb(void *arg, const struct fg_history_record *r)
{
	unsigned *n = arg;

	ck_assert_int_eq(r->e.state, FG_HISTORY_ACCEPTED);
	return ++*n == 25 ? -ECANCELED : 0;
}

static int count_all_cb(void *arg, const struct fg_history_record *r)
{
	(void)r;
	++*(unsigned *)arg;
	return 0;
}

START_TEST(test_iterate)
{
	struct tbl t;
	uint64_t cursor = 0;
	unsigned n = 0;
	int rc;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < 300; i++) {
		struct fg_history_key k = KEY(t.h, i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	}
	rc = fg_history_iterate(t.h, &cursor, 1000000, count_cb, &n, T0);
	ck_assert_int_eq(rc, -ECANCELED);
	ck_assert_uint_eq(n, 25);
	cursor = 0;
	n = 0;
	while ((rc = fg_history_iterate(t.h, &cursor, 7, count_all_cb, &n, T0)) == 1)
		;
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(n, 300);
	tbl_close(&t);
}
END_TEST

START_TEST(test_burst_lookup_matches_single)
{
	struct tbl t;
	const void *ids[100];
	uint16_t lens[100];
	char buf[100][64];
	struct fg_history_key keys[100];
	struct fg_history_entry out[100], one;

	tbl_open(&t, 1000, 0, FG_FULL_DEFER);
	for (unsigned i = 0; i < 100; i++) {
		lens[i] = (uint16_t)snprintf(buf[i], sizeof(buf[i]), "<burst.%u@example.org>", i);
		ids[i] = buf[i];
		if (i % 3 == 0) {
			struct fg_history_key k;

			fg_history_hash(t.h, buf[i], lens[i], &k);
			ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_REJECTED, T0, T0 - i, T0, NULL), 0);
		}
	}
	ck_assert_uint_eq(fg_history_lookup_burst(t.h, ids, lens, 0, T0, keys, out), 0);
	ck_assert_uint_eq(fg_history_lookup_burst(t.h, ids, lens, 100, T0, keys, out), 100);
	for (unsigned i = 0; i < 100; i++) {
		struct fg_history_key k;

		fg_history_hash(t.h, buf[i], lens[i], &k);
		ck_assert(k.lo == keys[i].lo && k.hi == keys[i].hi);
		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, &one), out[i].state);
		ck_assert_int_eq(out[i].state, i % 3 == 0 ? FG_HISTORY_REJECTED : FG_HISTORY_ABSENT);
		if (i % 3 == 0)
			ck_assert_int_eq(out[i].first_seen, T0 - (fg_time_t)i);
	}
	tbl_close(&t);
}
END_TEST

/* ---- attach and images ---- */

START_TEST(test_attach_validates_header)
{
	struct tbl t;
	struct fg_hregion *r;
	struct fg_history *h2;
	enum fg_history_error why;
	struct fg_history_key k;
	struct fg_test_logcap cap;

	tbl_open(&t, 1000, 8, FG_FULL_DEFER);
	r = t.mem;
	k = KEY(t.h, 1);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	h2 = fg_history_attach(t.mem, t.len, &why);
	ck_assert_ptr_nonnull(h2);
	ck_assert_int_eq(why, FG_HISTORY_E_OK);
	ck_assert_int_eq(fg_history_lookup(h2, &k, T0, NULL), FG_HISTORY_ACCEPTED);
	fg_history_detach(h2);

	fg_test_logcap_start(&cap);
#define REFUSED(len, err) \
	do { \
		ck_assert_ptr_null(fg_history_attach(t.mem, (len), &why)); \
		ck_assert_int_eq(why, (err)); \
	} while (0)
	REFUSED(t.len - 1, FG_HISTORY_E_SHORT);
	REFUSED(100, FG_HISTORY_E_SHORT);
	ck_assert_ptr_null(fg_history_attach((uint8_t *)t.mem + 8, t.len - 8, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_ALIGN);
	r->magic ^= 1;
	REFUSED(t.len, FG_HISTORY_E_MAGIC);
	r->magic ^= 1;
	r->version = 1;		/* before the hash was recorded: SipHash, not read */
	REFUSED(t.len, FG_HISTORY_E_VERSION);
	r->version = FG_HLAYOUT + 1;
	REFUSED(t.len, FG_HISTORY_E_VERSION);
	r->version = FG_HLAYOUT;
	r->hash = FG_HISTORY_HASH_AUTO;
	REFUSED(t.len, FG_HISTORY_E_HASH);
	r->hash = 3;
	REFUSED(t.len, FG_HISTORY_E_HASH);
	/* the seed check binds the seed to its hash function */
	r->hash = FG_HISTORY_HASH_SIPHASH;
	REFUSED(t.len, FG_HISTORY_E_SEED);
	r->hash = FG_HISTORY_HASH_AES;
	r->n_buckets++;
	REFUSED(t.len, FG_HISTORY_E_GEOMETRY);
	r->n_buckets--;
	r->side_capacity = 5;
	REFUSED(t.len, FG_HISTORY_E_GEOMETRY);
	r->side_capacity = 8;
	r->seed[1] ^= 1ull << 40;
	REFUSED(t.len, FG_HISTORY_E_SEED);
	r->seed[1] ^= 1ull << 40;
	atomic_store(&r->full_policy, 3);
	REFUSED(t.len, FG_HISTORY_E_SETTINGS);
	atomic_store(&r->full_policy, 0);
	atomic_store(&r->alarm_pct, 0);
	REFUSED(t.len, FG_HISTORY_E_SETTINGS);
	atomic_store(&r->alarm_pct, 90);
	atomic_store(&r->stripe[3].n[FG_HS_ACCEPTED], -5);
	REFUSED(t.len, FG_HISTORY_E_COUNTS);
	atomic_store(&r->stripe[3].n[FG_HS_ACCEPTED], 100000);
	REFUSED(t.len, FG_HISTORY_E_COUNTS);
	atomic_store(&r->stripe[3].n[FG_HS_ACCEPTED], 0);
#undef REFUSED
	fg_test_logcap_stop();
	ck_assert(fg_test_logcap_has(&cap, "attach refused: seed does not match its check value"));
	h2 = fg_history_attach(t.mem, t.len, &why);
	ck_assert_ptr_nonnull(h2);
	fg_history_detach(h2);
	ck_assert_str_eq(fg_history_error_str(FG_HISTORY_E_CHECKSUM), "checksum mismatch");
	ck_assert_str_eq(fg_history_error_str(FG_HISTORY_E__COUNT), "unknown error");
	ck_assert_str_eq(fg_history_state_name(FG_HISTORY_SUPERSEDED), "superseded");
	tbl_close(&t);
}
END_TEST

START_TEST(test_create_refuses_bad_parameters)
{
	struct fg_history_params p = { .capacity = 100, .alarm_load_pct = 90, .now = T0 };
	size_t len = fg_history_region_size(100, 0);
	void *mem = aligned_alloc(64, len + 64);
	struct fg_test_logcap cap;

	ck_assert_uint_eq(fg_history_region_size(0, 0), 0);
	ck_assert_uint_eq(fg_history_region_size(UINT64_MAX, 0), 0);
	ck_assert_uint_eq(len, 4096 + 20 * 64);
	ck_assert_uint_eq(fg_history_region_size(100, 5), 4096 + 20 * 64 + 8 * 544);
	fg_test_logcap_start(&cap);
	ck_assert_ptr_null(fg_history_create(mem, len - 1, &p));
	ck_assert_ptr_null(fg_history_create((uint8_t *)mem + 32, len, &p));
	p.alarm_load_pct = 0;
	ck_assert_ptr_null(fg_history_create(mem, len, &p));
	p.alarm_load_pct = 90;
	p.full_policy = (enum fg_full_policy)5;
	ck_assert_ptr_null(fg_history_create(mem, len, &p));
	p.full_policy = FG_FULL_DEFER;
	p.hash = (enum fg_history_hashfn)3;
	ck_assert_ptr_null(fg_history_create(mem, len, &p));
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 5);
	/* AUTO takes AES where the CPU has it, and the header says which */
	p.hash = FG_HISTORY_HASH_AUTO;
	fg_history_detach(fg_history_create(mem, len, &p));
	ck_assert_uint_eq(((struct fg_hregion *)mem)->hash,
			  fg_aes_cpu_ok() ? FG_HISTORY_HASH_AES : FG_HISTORY_HASH_SIPHASH);
	free(mem);
}
END_TEST

/* A small table holding every kind of entry, and a side record. */
static void populate(struct fg_history *h)
{
	struct fg_history_ref r;

	for (unsigned i = 0; i < 40; i++) {
		struct fg_history_key k = KEY(h, i);

		if (i % 10 == 0)
			ck_assert_int_eq(fg_history_offer(h, &k, T0, T0 + 10, i, &r, NULL), 0);
		else if (i % 10 == 1)
			ck_assert_int_eq(fg_history_begin_accept(h, &k, T0, i, &r, NULL), 0);
		else
			ck_assert_int_eq(fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED + i % 3,
								 T0 - 120 * (fg_time_t)i,
								 T0 - 60 * (fg_time_t)i, T0, NULL), 0);
	}
	ck_assert_int_eq(fg_history_version_note(h, "<faq@site>", 10, 3, "<faq$v=3$x@site>", 16, T0), 0);
}

START_TEST(test_image_round_trip)
{
	struct tbl t;
	void *img, *mem2;
	struct fg_history *h2;
	enum fg_history_error why;
	struct fg_history_stats st;
	struct fg_test_logcap cap;
	char id[256];
	uint64_t v;
	size_t n;

	tbl_open(&t, 200, 8, FG_FULL_DEFER);
	populate(t.h);
	img = aligned_alloc(64, t.len);
	mem2 = aligned_alloc(64, t.len);
	ck_assert_int_eq(fg_history_image_copy(t.h, img, t.len - 1), -ENOSPC);
	ck_assert_int_eq(fg_history_image_copy(t.h, img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	ck_assert_int_eq(why, FG_HISTORY_E_OK);
	/* a live region is not an image */
	ck_assert_int_eq(fg_history_image_check(t.mem, t.len, &why), -EINVAL);
	ck_assert_int_eq(why, FG_HISTORY_E_CHECKSUM);
	h2 = fg_history_restore(mem2, t.len, img, t.len, &why);
	ck_assert_ptr_nonnull(h2);
	for (unsigned i = 0; i < 40; i++) {
		struct fg_history_key k = KEY(h2, i);
		struct fg_history_entry e;
		enum fg_history_state s = fg_history_lookup(h2, &k, T0, &e);

		if (i % 10 < 2) {
			ck_assert_int_eq(s, FG_HISTORY_ABSENT);	/* sessions did not survive */
			continue;
		}
		ck_assert_int_eq(s, FG_HISTORY_ACCEPTED + i % 3);
		ck_assert_int_eq(e.first_seen, T0 - 60 * (fg_time_t)i);
		ck_assert_int_eq(e.article_date, T0 - 120 * (fg_time_t)i);
	}
	fg_history_stats(h2, &st);
	ck_assert_uint_eq(st.entries, 32);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_OFFERED], 0);
	ck_assert_int_eq(fg_history_version_newest(h2, "<faq@site>", 10, &v, id, sizeof(id), &n), 0);
	ck_assert_uint_eq(v, 3);
	ck_assert_str_eq(id, "<faq$v=3$x@site>");
	/* the restored table is live: it takes new entries */
	{
		struct fg_history_key k = KEY(h2, 1000);

		ck_assert_int_eq(fg_history_insert_final(h2, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	}
	fg_history_detach(h2);
	fg_test_logcap_start(&cap);
	ck_assert_ptr_null(fg_history_restore(mem2, t.len - 1, img, t.len, &why));
	fg_test_logcap_stop();
	ck_assert_int_eq(why, FG_HISTORY_E_SHORT);
	ck_assert(fg_test_logcap_has(&cap, "restore refused: region shorter"));
	free(img);
	free(mem2);
	tbl_close(&t);
}
END_TEST

START_TEST(test_image_any_flipped_byte_is_refused)
{
	struct tbl t;
	uint8_t *img;
	enum fg_history_error why;
	unsigned refused = 0;

	tbl_open(&t, 50, 4, FG_FULL_DEFER);
	populate(t.h);
	img = aligned_alloc(64, t.len);
	ck_assert_int_eq(fg_history_image_copy(t.h, img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	for (size_t i = 0; i < t.len; i++) {
		for (unsigned bit = 0; bit < 8; bit += 7) {
			img[i] ^= (uint8_t)(1u << bit);
			refused += fg_history_image_check(img, t.len, &why) == -EINVAL;
			img[i] ^= (uint8_t)(1u << bit);
		}
		img[i] ^= 0xff;
		refused += fg_history_image_check(img, t.len, &why) == -EINVAL;
		img[i] ^= 0xff;
	}
	ck_assert_uint_eq(refused, 3 * t.len);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	/* sealing again after an edit makes the checksum right, and the
	 * deeper checks still catch what is wrong */
	((struct fg_hregion *)img)->image_counts[FG_HS_ACCEPTED]++;
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), -EINVAL);
	ck_assert_int_eq(why, FG_HISTORY_E_COUNTS);
	free(img);
	tbl_close(&t);
}
END_TEST

/* ---- hash flooding ---- */

static double chi_square(const unsigned *count, unsigned m, unsigned n)
{
	double expect = (double)n / m, chi = 0;

	for (unsigned i = 0; i < m; i++)
		chi += (count[i] - expect) * (count[i] - expect) / expect;
	return chi;
}

START_TEST(test_crafted_collisions_spread_under_a_random_seed)
{
	enum { N = 6400 };
	static const uint8_t zero[16];
	struct tbl z, r;
	uint8_t seed[16];
	char (*ids)[48] = malloc(N * sizeof(*ids));
	unsigned counts[64] = { 0 }, found = 0;
	double chi;

	/* 320 slots = 64 buckets */
	tbl_open_hash(&z, 320, 0, FG_FULL_DEFER, zero, hashes[_i]);
	ck_assert_uint_eq(z.h->m, 64);
	/* an attacker who knew the seed (zero) picks IDs for bucket 0 */
	for (unsigned n = 0; found < N; n++) {
		struct fg_history_key k;
		struct fg_hloc loc;
		int len = snprintf(ids[found], sizeof(ids[found]), "<flood.%u@attacker.example>", n);

		fg_history_hash(z.h, ids[found], (size_t)len, &k);
		fg_hlocate(z.h, &k, &loc);
		if (loc.b1 == 0)
			found++;
	}
	ck_assert_int_eq(fg_history_seed_random(seed), 0);
	tbl_open_hash(&r, 320, 0, FG_FULL_DEFER, seed, hashes[_i]);
	for (unsigned i = 0; i < N; i++) {
		struct fg_history_key kz, kr;
		struct fg_hloc lz, lr;

		fg_history_hash(z.h, ids[i], strlen(ids[i]), &kz);
		fg_hlocate(z.h, &kz, &lz);
		ck_assert_uint_eq(lz.b1, 0);
		fg_history_hash(r.h, ids[i], strlen(ids[i]), &kr);
		fg_hlocate(r.h, &kr, &lr);
		counts[lr.b1]++;
	}
	chi = chi_square(counts, 64, N);
	/* 63 degrees of freedom: P(chi2 > 130) < 1e-6, so a false alarm is
	 * negligible; all in one bucket would give 63 * N = 403200 */
	ck_assert_msg(chi < 130.0, "chi-square %.1f: crafted IDs still cluster", chi);
	memset(counts, 0, sizeof(counts));
	counts[0] = N;
	ck_assert_double_gt(chi_square(counts, 64, N), 400000.0);
	free(ids);
	tbl_close(&z);
	tbl_close(&r);
}
END_TEST

/*
 * Structured families an attacker could send without knowing the seed,
 * each of which a weak construction maps unevenly: IDs sharing a long
 * prefix; one-bit neighbours of a few IDs; one octet at every length (for
 * zero padding or a length mixed in badly); 64-octet IDs with their
 * blocks permuted (lanes swapped); pairs of lengths 40 and 48 built to
 * give the AES hash the very same blocks. Each family must spread over 64
 * buckets as chance would (chi-square, 63 degrees of freedom: < 130 fails
 * with probability below 1e-6), hold no two equal hashes, and one-bit
 * neighbours must differ in each output bit about half the time.
 */
enum { FAM_PREFIX, FAM_BITS, FAM_LENGTHS, FAM_BLOCKS, FAM_SAME_BLOCKS, FAM__N };
#define FAM_MAX 4096
#define FAM_ONE (1 + 8 * 51)	/* an ID and its 408 one-bit neighbours */

/* Member i of a family; its length, 0 past the end. */
static size_t family_member(unsigned fam, unsigned i, uint8_t *id)
{
	static const char base[] = "<part.%08x.%u$v=2$xQ9@news.example-isp.co.uk>";
	unsigned perm[4] = { 0, 1, 2, 3 };
	size_t len;

	switch (fam) {
	case FAM_PREFIX:	/* 200 octets in common, then a counter */
		memset(id, 'a', 200);
		return 200 + (size_t)sprintf((char *)id + 200, "%u@x>", i);
	case FAM_BITS:		/* 8 IDs, and each with every single bit flipped */
		if (i >= 8 * FAM_ONE)
			return 0;
		/* bases far apart: no ID is a one-bit neighbour of two */
		len = (size_t)sprintf((char *)id, base, (i / FAM_ONE + 1) * 2654435761u,
				      i / FAM_ONE + 1000);
		ck_assert_uint_eq(len, 51);
		if (i % FAM_ONE)
			id[(i % FAM_ONE - 1) / 8] ^= (uint8_t)(1u << ((i % FAM_ONE - 1) % 8));
		return len;
	case FAM_LENGTHS:	/* NUL x i: only the length differs (i = 0 too) */
		memset(id, 0, i);
		return i;
	case FAM_BLOCKS:	/* 170 base IDs x the 24 orders of their 4 blocks */
		if (i >= 170 * 24)
			return 0;
		for (unsigned j = 0, q = i % 24; j < 4; j++) {
			unsigned t = j + q % (4 - j);

			unsigned tmp = perm[j];

			q /= 4 - j;
			perm[j] = perm[t];
			perm[t] = tmp;
		}
		for (unsigned j = 0; j < 4; j++)
			sprintf((char *)id + 16 * j, "<%04u-blk-%u-pad>", i / 24, perm[j]);
		return 64;
	case FAM_SAME_BLOCKS:
		/* "<nnnnn" and q to the end: at 40 octets the blocks are
		 * [0,16) [16,32) [24,40), at 48 [0,16) [16,32) [32,48): the
		 * same three */
		if (i >= 4000)
			return 0;
		memset(id, 'q', 48);
		sprintf((char *)id, "<%05u", i / 2);
		id[6] = 'q';
		return i % 2 ? 48 : 40;
	}
	return 0;
}

START_TEST(test_hash_families_spread)
{
	enum fg_history_hashfn fn = hashes[_i / 2];
	uint8_t seed[16], id[FAM_MAX + 64];
	static struct fg_history_key keys[FAM_MAX];
	struct tbl t;

	if (_i % 2)
		ck_assert_int_eq(fg_history_seed_random(seed), 0);
	else
		memcpy(seed, test_seed, 16);
	tbl_open_hash(&t, 320, 0, FG_FULL_DEFER, seed, fn);
	ck_assert_uint_eq(t.h->m, 64);
	for (unsigned fam = 0; fam < FAM__N; fam++) {
		unsigned counts[64] = { 0 }, flips[128] = { 0 }, n, pairs = 0;
		double chi;

		for (n = 0; n < FAM_MAX; n++) {
			size_t len = family_member(fam, n, id);
			struct fg_hloc loc;

			if (len == 0 && !(fam == FAM_LENGTHS && n == 0))
				break;
			fg_history_hash(t.h, id, len, &keys[n]);
			fg_hlocate(t.h, &keys[n], &loc);
			counts[loc.b1]++;
			/* (a passing ck_assert costs a write to check's pipe) */
			for (unsigned j = 0; j < n; j++)
				if (keys[j].lo == keys[n].lo && keys[j].hi == keys[n].hi)
					ck_abort_msg("family %u: members %u and %u collide", fam, j, n);
			if (fam == FAM_BITS && n % FAM_ONE) {
				const struct fg_history_key *b = &keys[n - n % FAM_ONE];

				for (unsigned bit = 0; bit < 128; bit++)
					flips[bit] += (unsigned)(((bit < 64 ? b->lo ^ keys[n].lo :
							   b->hi ^ keys[n].hi) >> (bit % 64)) & 1);
				pairs++;
			}
		}
		ck_assert_uint_ge(n, 3000);
		chi = chi_square(counts, 64, n);
		ck_assert_msg(chi < 130.0, "hash %d family %u: chi-square %.1f over %u IDs", fn, fam,
			      chi, n);
		/* each output bit flips with probability 1/2: 3264 pairs give
		 * 1632 +- 29 (sd); outside +-8 sd is a biased bit */
		for (unsigned bit = 0; bit < 128 && pairs; bit++)
			ck_assert_msg(flips[bit] > pairs / 2 - 240 && flips[bit] < pairs / 2 + 240,
				      "hash %d: output bit %u flips %u of %u", fn, bit, flips[bit], pairs);
	}
	tbl_close(&t);
}
END_TEST

/* ---- version side index ---- */

START_TEST(test_version_side_index)
{
	struct tbl t, none;
	char id[256], base[64], full[64];
	uint64_t v;
	size_t n;

	tbl_open(&t, 100, 4, FG_FULL_DEFER);	/* one set of four */
	ck_assert_int_eq(fg_history_version_newest(t.h, "<a@b>", 5, &v, id, sizeof(id), &n), -ENOENT);
	ck_assert_int_eq(fg_history_version_note(t.h, "<a@b>", 5, 1, "<a$v=1$q@b>", 11, T0), 0);
	ck_assert_int_eq(fg_history_version_note(t.h, "<a@b>", 5, 3, "<a$v=3$r@b>", 11, T0 + 1), 0);
	ck_assert_int_eq(fg_history_version_note(t.h, "<a@b>", 5, 2, "<a$v=2$s@b>", 11, T0 + 2), -EEXIST);
	ck_assert_int_eq(fg_history_version_note(t.h, "<a@b>", 5, 3, "<a$v=3$t@b>", 11, T0 + 2), -EEXIST);
	ck_assert_int_eq(fg_history_version_newest(t.h, "<a@b>", 5, &v, id, sizeof(id), &n), 0);
	ck_assert_uint_eq(v, 3);
	ck_assert_str_eq(id, "<a$v=3$r@b>");
	ck_assert_uint_eq(n, 11);
	/* a different base of the same length is another record */
	ck_assert_int_eq(fg_history_version_newest(t.h, "<a@c>", 5, &v, id, sizeof(id), &n), -ENOENT);
	/* bounded: four more bases push the least recently updated out */
	for (unsigned i = 0; i < 4; i++) {
		int bl = snprintf(base, sizeof(base), "<b%u@x>", i);
		int fl = snprintf(full, sizeof(full), "<b%u$v=9$z@x>", i);

		ck_assert_int_eq(fg_history_version_note(t.h, base, (size_t)bl, 9, full, (size_t)fl, T0 + 10 + i), 0);
	}
	ck_assert_int_eq(fg_history_version_newest(t.h, "<a@b>", 5, &v, id, sizeof(id), &n), -ENOENT);
	ck_assert_int_eq(fg_history_version_newest(t.h, "<b0@x>", 6, &v, id, sizeof(id), &n), 0);
	ck_assert_str_eq(id, "<b0$v=9$z@x>");
	/* arguments */
	ck_assert_int_eq(fg_history_version_note(t.h, "", 0, 1, "<x>", 3, T0), -EINVAL);
	ck_assert_int_eq(fg_history_version_note(t.h, "<x>", 3, 1, id, 251, T0), -EINVAL);
	ck_assert_int_eq(fg_history_version_newest(t.h, "<b0@x>", 6, &v, id, 250, &n), -EINVAL);
	tbl_open(&none, 100, 0, FG_FULL_DEFER);
	ck_assert_int_eq(fg_history_version_note(none.h, "<a@b>", 5, 1, "<a$v=1@b>", 9, T0), -ENOSPC);
	ck_assert_int_eq(fg_history_version_newest(none.h, "<a@b>", 5, &v, id, sizeof(id), &n), -ENOENT);
	tbl_close(&none);
	tbl_close(&t);
}
END_TEST

static Suite *history_suite(void)
{
	Suite *s = suite_create("history");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_siphash_vectors);
	tcase_add_test(tc, test_crc32c_lanes_match_bitwise);
	tcase_add_test(tc, test_aes128_fips197);
	tcase_add_test(tc, test_aeshash_vectors);
	tcase_add_loop_test(tc, test_hash_depends_on_seed_and_every_octet, 0, FG_ARRAY_SIZE(hashes));
	tcase_add_test(tc, test_offer_and_expiry_of_the_offer);
	tcase_add_test(tc, test_release_checks_the_whole_token);
	tcase_add_test(tc, test_accept_from_absent_and_duplicates);
	tcase_add_test(tc, test_any_session_completes_an_offer);
	tcase_add_test(tc, test_second_transfer_takes_over_after_abort);
	tcase_add_test(tc, test_insert_final_states);
	tcase_add_test(tc, test_forget);
	tcase_add_test(tc, test_first_seen_exact_across_its_window);
	tcase_add_test(tc, test_article_date_rounding_and_clamps);
	tcase_add_test(tc, test_expiry_by_first_seen_exact_second);
	tcase_add_test(tc, test_expiry_by_article_date_exact_to_the_minute);
	tcase_add_test(tc, test_sweep_drops_dead_offers_keeps_transfers);
	tcase_add_test(tc, test_relocation_reaches_high_load_and_loses_nothing);
	tcase_add_test(tc, test_defer_policy_refuses_and_counts);
	tcase_add_test(tc, test_evict_oldest_policy);
	tcase_add_test(tc, test_single_bucket_pair);
	tcase_add_test(tc, test_lookup_sees_an_entry_moving_behind_it);
	tcase_add_test(tc, test_sweep_counts_a_moving_entry_once);
	tcase_add_test(tc, test_insert_races_at_each_step);
	tcase_add_test(tc, test_stats_alarm_and_clear_transient);
	tcase_add_test(tc, test_settle_and_drop_by_owner);
	tcase_add_test(tc, test_drop_owned_takes_a_deciding_insert);
	tcase_add_test(tc, test_iterate);
	tcase_add_test(tc, test_burst_lookup_matches_single);
	tcase_add_test(tc, test_attach_validates_header);
	tcase_add_test(tc, test_create_refuses_bad_parameters);
	tcase_add_test(tc, test_image_round_trip);
	tcase_add_test(tc, test_image_any_flipped_byte_is_refused);
	tcase_add_loop_test(tc, test_crafted_collisions_spread_under_a_random_seed, 0,
			    FG_ARRAY_SIZE(hashes));
	tcase_add_loop_test(tc, test_hash_families_spread, 0, 2 * FG_ARRAY_SIZE(hashes));
	tcase_add_test(tc, test_version_side_index);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(history_suite)
