/* SPDX-License-Identifier: MIT */
/*
 * headers.c — the link and network headers of a frame we send: Ethernet
 * and IPv4 (with its header checksum unless the port offloads it), or
 * Ethernet and IPv6. Pure functions over a buffer: TCP, ICMP, ICMPv6 and
 * Neighbour Discovery call them with the addresses they chose; the
 * instance's state (addresses, ARP, the TX queue) stays in net.c.
 */
#include <string.h>

#include "floodgate/net.h"
#include "floodgate/wire.h"

void fg_net_build_ipv4(uint8_t *frame, const uint8_t *dst_mac, const uint8_t *src_mac,
		       uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4_len,
		       uint16_t ip_id, int offload)
{
	uint8_t *ip = frame + FG_ETH_HLEN;

	memcpy(frame, dst_mac, FG_ETH_ALEN);
	memcpy(frame + 6, src_mac, FG_ETH_ALEN);
	fg_wr16(frame + 12, FG_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = 0;
	fg_wr16(ip + 2, (uint16_t)(FG_IP_HLEN + l4_len));
	fg_wr16(ip + 4, ip_id);
	fg_wr16(ip + 6, 0x4000);	/* DF: we size segments by the MTU */
	ip[8] = 64;
	ip[9] = proto;
	fg_wr16(ip + 10, 0);
	fg_wraddr(ip + 12, src);
	fg_wraddr(ip + 16, dst);
	if (!offload)
		fg_wr16(ip + 10, fg_csum_fold(fg_csum_add(0, ip, FG_IP_HLEN)));
}

void fg_net_build_ipv6(uint8_t *frame, const uint8_t *dst_mac, const uint8_t *src_mac,
		       const uint8_t *src, const uint8_t *dst, uint8_t proto,
		       uint32_t l4_len, uint8_t hlim)
{
	uint8_t *ip = frame + FG_ETH_HLEN;

	memcpy(frame, dst_mac, FG_ETH_ALEN);
	memcpy(frame + 6, src_mac, FG_ETH_ALEN);
	fg_wr16(frame + 12, FG_ETHERTYPE_IPV6);
	fg_wr32(ip, 6u << 28);		/* version 6, traffic class 0, no flow label */
	fg_wr16(ip + 4, (uint16_t)l4_len);
	ip[6] = proto;
	ip[7] = hlim;
	memcpy(ip + 8, src, FG_IP6_ALEN);
	memcpy(ip + 24, dst, FG_IP6_ALEN);
}
