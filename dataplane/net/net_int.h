/* SPDX-License-Identifier: MIT */
/*
 * net_int.h — wire formats shared by net.c and the TCP module. Header
 * structs are read and written through these byte-offset helpers, never
 * cast over the frame, so an odd offset or a short frame cannot fault.
 *
 *   Ethernet (14): dst[6] src[6] type[2]
 *   IPv4 (20+):    ver/ihl tos len[2] id[2] frag[2] ttl proto csum[2] src[4] dst[4]
 *   TCP (20+):     sport[2] dport[2] seq[4] ack[4] off/rsvd flags wnd[2] csum[2] urp[2]
 */
#ifndef FLOODGATE_NET_INT_H
#define FLOODGATE_NET_INT_H

#include <stdint.h>
#include <string.h>

#include "floodgate/net.h"

#define FG_IP_HLEN 20
#define FG_IP_PROTO_ICMP 1
#define FG_IP_PROTO_TCP 6
#define FG_TCP_HLEN 20

static inline uint16_t fg_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t fg_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void fg_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void fg_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Addresses are kept in network byte order as uint32_t: copy, never cast. */
static inline uint32_t fg_rdaddr(const uint8_t *p)
{
	uint32_t a;

	memcpy(&a, p, 4);
	return a;
}

static inline void fg_wraddr(uint8_t *p, uint32_t a)
{
	memcpy(p, &a, 4);
}

/* Write an Ethernet + IPv4 header (20 bytes, DF, TTL 64) for `l4_len`
 * bytes of payload; the header checksum is filled unless `offload`. */
void fg_net_build_ipv4(uint8_t *frame, const uint8_t *dst_mac, const uint8_t *src_mac,
		       uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4_len,
		       uint16_t ip_id, int offload);

/* Sum of the IPv4 pseudo-header (RFC 9293 3.1), unfolded. */
static inline uint32_t fg_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint32_t len)
{
	uint8_t ph[12];

	fg_wraddr(ph, src);
	fg_wraddr(ph + 4, dst);
	ph[8] = 0;
	ph[9] = proto;
	fg_wr16(ph + 10, (uint16_t)len);
	return fg_csum_add(0, ph, sizeof(ph));
}

#endif /* FLOODGATE_NET_INT_H */
