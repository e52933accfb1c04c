/* SPDX-License-Identifier: MIT */
/*
 * wire.c — the Internet checksum of wire.h, shared by every transport
 * (IPv4 and ICMP in net, TCP in tcp, segments built by the memory port).
 */
#include <string.h>

#include "floodgate/wire.h"

uint32_t fg_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = 0;
	uint32_t w;

	/*
	 * RFC 1071 2(B): the one's complement sum does not depend on byte
	 * order, so add native 32-bit words into a 64-bit accumulator and
	 * swap once at the end (x86 is little-endian: the result is folded
	 * to 16 bits and byte-swapped into network order).
	 */
	while (len >= 16) {
		uint64_t a, b;

		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		s += (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32);
		p += 16;
		len -= 16;
	}
	while (len >= 4) {
		memcpy(&w, p, 4);
		s += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		s += (uint32_t)(p[0] | p[1] << 8);
		p += 2;
		len -= 2;
	}
	if (len)
		s += p[0];	/* the high byte of a big-endian word, in native order */
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	s = ((s & 0xff) << 8) | (s >> 8);	/* into network order */
	s += sum;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

uint32_t fg_csum_derive(const uint8_t *start, uint32_t len, uint32_t sum, const uint8_t *p,
			uint32_t n)
{
	uint32_t before = (uint32_t)(p - start), after = len - before - n;
	uint32_t s = fg_csum_sub(sum, fg_csum_add(0, start, before));
	uint32_t tail = fg_csum_add(0, p + n, after);

	s = fg_csum_sub(s, ((before + n) & 1) ? fg_csum_swap(tail) : tail);
	return (before & 1) ? fg_csum_swap(s) : s;
}
