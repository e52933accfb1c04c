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

static uint64_t tuple_hash(const struct fg_tcp *t, uint32_t laddr, uint16_t lport,
			   uint32_t raddr, uint16_t rport, uint32_t x, uint64_t y)
{
	uint8_t b[24];

	memcpy(b, &laddr, 4);
	memcpy(b + 4, &raddr, 4);
	memcpy(b + 8, &lport, 2);
	memcpy(b + 10, &rport, 2);
	memcpy(b + 12, &x, 4);
	memcpy(b + 16, &y, 8);
	return fg_siphash24_64((const uint64_t[2]){ t->sip_k0, t->sip_k1 }, b, sizeof(b));
}

uint32_t tcp_conn_hash(const struct fg_tcp *t, uint32_t laddr, uint16_t lport,
		       uint32_t raddr, uint16_t rport)
{
	return (uint32_t)tuple_hash(t, laddr, lport, raddr, rport, 0, 0);
}

uint32_t tcp_iss(const struct fg_tcp *t, uint32_t laddr, uint16_t lport,
		 uint32_t raddr, uint16_t rport, uint64_t now)
{
	/* RFC 6528 3: a 4 us clock plus a keyed hash of the 4-tuple */
	return (uint32_t)(now / 4000) +
	       (uint32_t)tuple_hash(t, laddr, lport, raddr, rport, 1, 1);
}

uint32_t tcp_cookie_make(const struct fg_tcp *t, uint32_t laddr, uint16_t lport,
			 uint32_t raddr, uint16_t rport, uint32_t peer_isn,
			 uint32_t mss, int peer_ws, bool sack, uint64_t now)
{
	uint64_t period = now >> COOKIE_PERIOD_SHIFT;
	uint32_t mi = 0, ws = peer_ws < 0 ? 15u : (uint32_t)peer_ws;
	uint32_t h, fields;

	for (uint32_t i = 0; i < 8; i++)
		if (cookie_mss[i] <= mss)
			mi = i;
	fields = (uint32_t)(period & 31) << 27 | mi << 24 | ws << 20 | (uint32_t)sack << 19;

	h = (uint32_t)tuple_hash(t, laddr, lport, raddr, rport, peer_isn,
				 period << 32 | fields) & 0x7ffffu;
	return fields | h;
}

int tcp_cookie_check(const struct fg_tcp *t, uint32_t laddr, uint16_t lport,
		     uint32_t raddr, uint16_t rport, uint32_t peer_isn,
		     uint32_t cookie, uint64_t now, uint32_t *mss, int *peer_ws, bool *sack)
{
	uint64_t cur = now >> COOKIE_PERIOD_SHIFT;
	uint32_t t5 = cookie >> 27, ws = (cookie >> 20) & 15;

	for (uint64_t back = 0; back < 2 && back <= cur; back++) {
		uint64_t period = cur - back;

		if ((period & 31) != t5)
			continue;
		if (((uint32_t)tuple_hash(t, laddr, lport, raddr, rport, peer_isn,
					  period << 32 | (cookie & ~0x7ffffu)) & 0x7ffffu) !=
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
