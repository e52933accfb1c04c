/* SPDX-License-Identifier: MIT */
/*
 * tcp_cookie.c — keyed hashing for the TCP module: SipHash-2-4 (Aumasson
 * and Bernstein) keys the connection table, the initial sequence numbers
 * (RFC 6528: ISN = 4 us clock + F(4-tuple, secret)) and SYN cookies.
 *
 * SYN cookie layout (our ISN when the SYN backlog is full; RFC 4987 3.6):
 *
 *   31      27 26  24 23    20  19   18               0
 *   | t mod 32 | mss  | wscale | sack | hash (19 bits)  |
 *
 *   t      = now / 64 s; a cookie is good for the current and previous
 *            period (64..128 s)
 *   mss    = index into cookie_mss[] (largest entry <= the peer's MSS)
 *   wscale = the peer's window shift, 15 when it sent none
 *   sack   = the peer sent SACK-permitted (RFC 2018)
 *   hash   = SipHash(secret; 4-tuple, peer ISN, t, the other fields) & 0x7ffff
 *            (the 4-tuple of either family: an IPv6 cookie covers the
 *            16-octet addresses; 1220 in the MSS table is IPv6's minimum
 *            MTU less 60)
 *
 * The peer's ACK carries cookie + 1; everything the SYN negotiated that
 * matters (MSS, window scaling, SACK) comes back out of it, so a flood of
 * SYNs costs no memory. Not carried: timestamps (not implemented).
 */
#include <string.h>

#include "floodgate/siphash.h"
#include "tcp_int.h"

#define COOKIE_PERIOD_SHIFT 36	/* 2^36 ns ~ 68.7 s */

static const uint16_t cookie_mss[8] = { 536, 1220, 1360, 1440, 1452, 1460, 4312, 8960 };

/* SipHash of the key, x and y. An IPv4 key hashes its 4-octet addresses
 * only (24 octets in all, what it cost before IPv6); an IPv6 key its 16,
 * with the family in the input so the two never share a hash by design. */
static uint64_t tuple_hash(const struct fg_tcp *t, const struct tcp_tuple *k, uint32_t x,
			   uint64_t y)
{
	const uint64_t key[2] = { t->sip_k0, t->sip_k1 };
	uint8_t b[2 * FG_IP6_ALEN + 20];
	uint32_t alen = k->v6 ? FG_IP6_ALEN : 4, n = 2 * alen;

	memcpy(b, k->laddr, alen);
	memcpy(b + alen, k->raddr, alen);
	memcpy(b + n, &k->lport, 2);
	memcpy(b + n + 2, &k->rport, 2);
	memcpy(b + n + 4, &x, 4);
	memcpy(b + n + 8, &y, 8);
	if (k->v6) {
		memcpy(b + n + 16, &k->v6, 4);
		return fg_siphash24_64(key, b, n + 20);
	}
	return fg_siphash24_64(key, b, n + 16);
}

uint32_t tcp_conn_hash(const struct fg_tcp *t, const struct tcp_tuple *k)
{
	return (uint32_t)tuple_hash(t, k, 0, 0);
}

uint32_t tcp_peer_hash(const struct fg_tcp *t, const struct tcp_tuple *k)
{
	/* the peer's address; for IPv6 its /64, the least a site is given
	 * (RFC 6177), so one peer's addresses share one backlog bucket */
	struct tcp_tuple p = { .v6 = k->v6 };

	memcpy(p.raddr, k->raddr, k->v6 ? 8 : 4);
	return (uint32_t)tuple_hash(t, &p, 0, 0);
}

uint32_t tcp_iss(const struct fg_tcp *t, const struct tcp_tuple *k, uint64_t now)
{
	/* RFC 6528 3: a 4 us clock plus a keyed hash of the 4-tuple */
	return (uint32_t)(now / 4000) + (uint32_t)tuple_hash(t, k, 1, 1);
}

uint32_t tcp_cookie_make(const struct fg_tcp *t, const struct tcp_tuple *k, uint32_t peer_isn,
			 uint32_t mss, int peer_ws, bool sack, uint64_t now)
{
	uint64_t period = now >> COOKIE_PERIOD_SHIFT;
	uint32_t mi = 0, ws = peer_ws < 0 ? 15u : (uint32_t)peer_ws;
	uint32_t h, fields;

	for (uint32_t i = 0; i < 8; i++)
		if (cookie_mss[i] <= mss)
			mi = i;
	fields = (uint32_t)(period & 31) << 27 | mi << 24 | ws << 20 | (uint32_t)sack << 19;

	h = (uint32_t)tuple_hash(t, k, peer_isn, period << 32 | fields) & 0x7ffffu;
	return fields | h;
}

int tcp_cookie_check(const struct fg_tcp *t, const struct tcp_tuple *k, uint32_t peer_isn,
		     uint32_t cookie, uint64_t now, uint32_t *mss, int *peer_ws, bool *sack)
{
	uint64_t cur = now >> COOKIE_PERIOD_SHIFT;
	uint32_t t5 = cookie >> 27, ws = (cookie >> 20) & 15;

	for (uint64_t back = 0; back < 2 && back <= cur; back++) {
		uint64_t period = cur - back;

		if ((period & 31) != t5)
			continue;
		if (((uint32_t)tuple_hash(t, k, peer_isn, period << 32 | (cookie & ~0x7ffffu)) &
		     0x7ffffu) !=
		    (cookie & 0x7ffffu))
			return -1;
		if (ws != 15 && ws > TCP_MAX_WSCALE)
			return -1;
		*mss = cookie_mss[(cookie >> 24) & 7];
		*peer_ws = ws == 15 ? -1 : (int)ws;
		*sack = (cookie >> 19) & 1;
		return 0;
	}
	return -1;
}
