/* SPDX-License-Identifier: MIT */
/*
 * wire.h — the wire formats the dataplane transports read and write: the
 * one place net (Ethernet, ARP, IPv4, ICMP), tcp and the memory port take
 * header lengths, protocol numbers, byte-order helpers and the Internet
 * checksum from. Not an application API: the engine never sees a header.
 *
 * Headers are read and written through these byte-offset helpers, never
 * by casting a struct over the frame, so an odd offset or a short frame
 * cannot fault:
 *
 *   Ethernet (14): dst[6] src[6] type[2]   (802.1Q: tpid 0x8100 tci[2] type[2])
 *   IPv4 (20+):    ver/ihl tos len[2] id[2] frag[2] ttl proto csum[2] src[4] dst[4]
 *   IPv6 (40):     ver/tc/flow[4] plen[2] next hlim src[16] dst[16]
 *     extension:   next hdrlen ...  (hop-by-hop, routing, destination options:
 *                  (hdrlen + 1) * 8 octets; fragment: 8 octets; RFC 8200 4)
 *   ICMPv6 (4+):   type code csum[2] body  (RFC 4443; ND messages RFC 4861 4)
 *   TCP (20+):     sport[2] dport[2] seq[4] ack[4] off/rsvd flags wnd[2] csum[2] urp[2]
 *
 * IPv4 addresses stay in network byte order in a uint32_t (copied, never
 * cast), IPv6 addresses as their 16 octets; ports, lengths and sequence
 * numbers are converted to host order.
 */
#ifndef FLOODGATE_WIRE_H
#define FLOODGATE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FG_ETH_HLEN 14
#define FG_ETH_ALEN 6
#define FG_VLAN_HLEN 4			/* one IEEE 802.1Q tag */
#define FG_ETHERTYPE_IPV4 0x0800
#define FG_ETHERTYPE_ARP 0x0806
#define FG_ETHERTYPE_VLAN 0x8100
#define FG_ETHERTYPE_IPV6 0x86dd

#define FG_IP_HLEN 20			/* IPv4 without options */
#define FG_IP_PROTO_ICMP 1		/* IANA protocol numbers, shared by IPv4 and IPv6 */
#define FG_IP_PROTO_TCP 6
#define FG_IP_PROTO_MAX 255

#define FG_TCP_HLEN 20			/* TCP without options */

#define FG_IP6_HLEN 40			/* the fixed IPv6 header (RFC 8200 3) */
#define FG_IP6_ALEN 16
#define FG_IP6_MIN_MTU 1280		/* RFC 8200 5: every link carries this */
/* Next-header values of the IPv6 chain (IANA; RFC 8200 4.1's order) */
#define FG_IP6_NH_HOPOPTS 0
#define FG_IP6_NH_ROUTING 43
#define FG_IP6_NH_FRAGMENT 44
#define FG_IP6_NH_ICMP6 58
#define FG_IP6_NH_NONE 59
#define FG_IP6_NH_DSTOPTS 60

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

/* Internet checksum (RFC 1071): a running 32-bit sum, then folded and
 * complemented. Sums may be chained; every chunk but the last must have
 * an even length. A received header or segment checks out when
 * fg_csum_fold() of its sum is 0. */
uint32_t fg_csum_add(uint32_t sum, const void *data, size_t len);

static inline uint16_t fg_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Sums of pieces (RFC 1071 2(A), 2(B), 4.1): a 32-bit running sum is only
 * ever meant modulo 0xffff, so sums add (fg_csum_combine), subtract
 * (fg_csum_sub: adding the complement), and a sum taken from an octet at
 * an odd offset of what is checksummed counts byte-swapped (fg_csum_swap).
 * Results are folded to 16 bits; 0 and 0xffff are the same sum.
 */
static inline uint32_t fg_csum_fold16(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static inline uint32_t fg_csum_combine(uint32_t a, uint32_t b)
{
	return fg_csum_fold16(fg_csum_fold16(a) + fg_csum_fold16(b));
}

static inline uint32_t fg_csum_sub(uint32_t a, uint32_t b)
{
	return fg_csum_fold16(fg_csum_fold16(a) + (0xffffu - fg_csum_fold16(b)));
}

static inline uint32_t fg_csum_swap(uint32_t sum)
{
	sum = fg_csum_fold16(sum);
	return ((sum & 0xff) << 8) | (sum >> 8);
}

/* The sum fg_csum_add(0, p, n) of a piece [p, p + n) inside a range
 * [start, start + len) whose own sum is `sum`, reading only the octets of
 * the range outside the piece: the range's sum minus the part before the
 * piece and minus the part after it (that one summed at its offset in the
 * range), then swapped when the piece starts at an odd offset. */
uint32_t fg_csum_derive(const uint8_t *start, uint32_t len, uint32_t sum, const uint8_t *p,
			uint32_t n);

/* Sum of the IPv4 pseudo-header (RFC 9293 3.1), unfolded: the start of a
 * TCP checksum. `src` and `dst` in network order. */
static inline uint32_t fg_ipv4_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto,
					  uint32_t len)
{
	uint8_t ph[12];

	fg_wraddr(ph, src);
	fg_wraddr(ph + 4, dst);
	ph[8] = 0;
	ph[9] = proto;
	fg_wr16(ph + 10, (uint16_t)len);
	return fg_csum_add(0, ph, sizeof(ph));
}

/* Sum of the IPv6 pseudo-header (RFC 8200 8.1), unfolded: the start of
 * a TCP or ICMPv6 checksum. `src` and `dst` are 16 octets each. */
static inline uint32_t fg_ipv6_pseudo_sum(const uint8_t *src, const uint8_t *dst,
					  uint8_t proto, uint32_t len)
{
	uint8_t ph[8];

	fg_wr32(ph, len);
	ph[4] = ph[5] = ph[6] = 0;
	ph[7] = proto;
	return fg_csum_add(fg_csum_add(fg_csum_add(0, src, FG_IP6_ALEN), dst, FG_IP6_ALEN),
			   ph, sizeof(ph));
}

#endif /* FLOODGATE_WIRE_H */
