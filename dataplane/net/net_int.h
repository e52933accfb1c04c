/* SPDX-License-Identifier: MIT */
/*
 * net_int.h — what net.c (Ethernet, IPv4, TX, faults, L4 dispatch),
 * arp.c (ARP and the peer MAC cache) and ipv6.c (IPv6, ICMPv6, Neighbour
 * Discovery) share inside the net module. Not an API: the instance's layout stays in net.c.
 */
#ifndef FLOODGATE_NET_INT_H
#define FLOODGATE_NET_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/net.h"

struct net6;
struct net_arp;

/* arp.c: one instance's ARP state; the cache has cfg->arp_entries slots
 * (a power of two, at least NET_ARP_WAYS: one probe set). NULL on no
 * memory. */
#define NET_ARP_WAYS 4
struct net_arp *net_arp_create(struct fg_net *net, const struct fg_net_config *cfg);
void net_arp_destroy(struct net_arp *arp);
/* The ARP packet after `l2` octets of link header, which came on VLAN
 * `vid`; the frame's reference stays the caller's. */
void net_arp_input(struct net_arp *arp, const struct fg_rx_frame *f, uint32_t l2,
		   uint16_t vid);
int net_arp_static(struct net_arp *arp, uint32_t ip, const uint8_t mac[FG_ETH_ALEN]);
int net_arp_resolve(struct net_arp *arp, uint32_t ip, uint8_t mac[FG_ETH_ALEN],
		    uint64_t now_ns);

/* ipv6.c: one instance's IPv6 state; NULL from create when the config
 * has no IPv6 address (and on no memory: *err then -ENOMEM). */
struct net6 *net6_create(struct fg_net *net, const struct fg_net_config *cfg, int *err);
void net6_destroy(struct net6 *v6);
/* The IPv6 packet after `l2` octets of link header. The frame's reference
 * stays the caller's, except when true is returned: the fault knob took
 * it (dropped, or held to be processed later). */
bool net6_input(struct net6 *v6, struct fg_rx_frame *f, uint32_t l2, bool faults);
/* Passive mode: an observed IPv6 packet (anyone's) to its L4 handler;
 * true when the handler's fault knob took the reference (never: passive
 * mode has no faults; the caller keeps it otherwise). */
bool net6_observe(struct fg_net *net, struct fg_rx_frame *f, uint32_t l2);
/* DAD's clock (from fg_net_poll and every burst). */
void net6_poll(struct net6 *v6, uint64_t now_ns);
uint64_t net6_next_deadline(const struct net6 *v6);
int net6_dad(const struct net6 *v6);
unsigned net6_mc_macs(const struct net6 *v6, uint8_t (*macs)[FG_ETH_ALEN], unsigned max);
void net6_link_local(const struct net6 *v6, uint8_t out[FG_IP6_ALEN]);
bool net6_is_local(const struct net6 *v6, const uint8_t *ip);
/* The MAC of on-link `ip` from the neighbour cache: 0, or -EAGAIN (an NS
 * sent, at most one a second per address). */
int net6_nd_resolve(struct net6 *v6, const uint8_t *ip, uint8_t mac[FG_ETH_ALEN],
		    uint64_t now_ns);

/* net.c: services for arp.c and ipv6.c */
/* Our IPv4 address `ip` on VLAN `vid`? An address answers on its own
 * VLAN only. */
bool net_local_on_vlan(const struct fg_net *net, uint32_t ip, uint16_t vid);
/* Hand an L4 packet to the handler of `proto` (fault knob first when
 * `faults`); false when nobody registered the protocol. */
bool net_l4_input(struct fg_net *net, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
		  uint8_t proto, const uint8_t *l4, uint32_t len, bool faults);
bool net_l4_has(const struct fg_net *net, uint8_t proto);
/* Hand an ICMP error to the handler of the quoted protocol; false when
 * it has none (or no icmp_error op). */
bool net_l4_icmp_error(struct fg_net *net, uint8_t proto, const struct fg_net_icmp_err *e);
uint64_t net_now(const struct fg_net *net);

#endif /* FLOODGATE_NET_INT_H */
