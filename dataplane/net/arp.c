/* SPDX-License-Identifier: MIT */
/*
 * arp.c — ARP (RFC 826) for one net instance: answering for our IPv4
 * addresses and the cache of peer MACs the transmit path resolves from.
 * net.c owns the link layer and hands every ARP frame here; it keeps the
 * instance's addresses and VLANs (net_local_on_vlan) and the TX queue.
 *
 * Receive:
 *   1. Ethernet/IPv4 only (htype 1, ptype IPv4, lengths 6 and 4), op
 *      request or reply, a sender MAC that is not multicast.  net_arp_bad
 *   2. A target that is not ours on the frame's VLAN (an address answers
 *      on its own VLAN only): to the kernel, if it has a path.
 *   3. RFC 826's merge step: the sender goes into the cache.
 *   4. A request is answered with our MAC; a reply (the kernel may be the
 *      one that asked) also goes to the kernel.
 *
 * The cache is direct-mapped with ARP_WAYS-way linear probing, keyed by a
 * seeded hash of the address: a full set evicts its oldest entry. An
 * entry is valid for the config's arp_ttl_ns after it was learned; a
 * static entry (fg_net_arp_static) never expires and is never evicted.
 * Resolving an unknown or stale address broadcasts a request, at most one
 * per ARP_REQ_INTERVAL_NS per address, from the address whose network
 * holds it; the caller retries on -EAGAIN.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "floodgate/net.h"
#include "floodgate/siphash.h"
#include "net_int.h"

#define ARP_REQ_INTERVAL_NS 1000000000ull
#define ARP_FRAME_LEN 60		/* Ethernet's minimum: the packet is 28 */
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2

struct arp_entry {
	uint32_t ip;		/* 0 = free */
	uint8_t mac[FG_ETH_ALEN];
	uint8_t valid;		/* mac is known (not just a pending request) */
	uint8_t permanent;	/* given by fg_net_arp_static: never expires */
	uint64_t updated_ns;
	uint64_t requested_ns;
};

struct net_arp {
	struct fg_net *net;
	const struct fg_net_config *cfg;	/* the instance's own copy */
	struct fg_stats *st;
	struct arp_entry *e;
	unsigned mask;
};

struct net_arp *net_arp_create(struct fg_net *net, const struct fg_net_config *cfg)
{
	struct net_arp *arp = calloc(1, sizeof(*arp));

	if (!arp)
		return NULL;
	arp->e = calloc(cfg->arp_entries, sizeof(*arp->e));
	if (!arp->e) {
		free(arp);
		return NULL;
	}
	arp->net = net;
	arp->cfg = cfg;
	arp->st = fg_net_stats(net);
	arp->mask = cfg->arp_entries - 1;
	return arp;
}

void net_arp_destroy(struct net_arp *arp)
{
	if (!arp)
		return;
	free(arp->e);
	free(arp);
}

static struct arp_entry *arp_find(struct net_arp *arp, uint32_t ip, bool create)
{
	unsigned base = (unsigned)fg_mix64_murmur3(ip ^ arp->cfg->hash_seed) & arp->mask;
	struct arp_entry *victim = NULL;

	for (unsigned i = 0; i < NET_ARP_WAYS; i++) {
		struct arp_entry *e = &arp->e[(base + i) & arp->mask];

		if (e->ip == ip)
			return e;
		if (!victim || e->ip == 0 ||
		    (victim->ip != 0 && e->updated_ns < victim->updated_ns))
			victim = e;
	}
	if (!create)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	victim->ip = ip;
	return victim;
}

static void arp_learn(struct net_arp *arp, uint32_t ip, const uint8_t *mac)
{
	struct arp_entry *e = arp_find(arp, ip, true);

	memcpy(e->mac, mac, FG_ETH_ALEN);
	e->valid = 1;
	if (!e->permanent)
		e->updated_ns = net_now(arp->net);
	fg_stats_inc(arp->st, FG_CTR_NET_ARP_LEARNED);
}

/* An ARP packet (RFC 826) for Ethernet/IPv4: op, sender and target. */
static void arp_send(struct net_arp *arp, uint16_t op, const uint8_t *tha,
		     uint32_t tpa, uint32_t spa, const uint8_t *eth_dst)
{
	void *h;
	uint8_t *f = fg_net_tx_alloc(arp->net, ARP_FRAME_LEN, &h);
	uint8_t *a;

	if (!f)
		return;
	memset(f, 0, ARP_FRAME_LEN);
	memcpy(f, eth_dst, FG_ETH_ALEN);
	memcpy(f + 6, arp->cfg->mac, FG_ETH_ALEN);
	fg_wr16(f + 12, FG_ETHERTYPE_ARP);
	a = f + FG_ETH_HLEN;
	fg_wr16(a, 1);			/* htype Ethernet */
	fg_wr16(a + 2, FG_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	fg_wr16(a + 6, op);
	memcpy(a + 8, arp->cfg->mac, FG_ETH_ALEN);
	fg_wraddr(a + 14, spa);
	memcpy(a + 18, tha, FG_ETH_ALEN);
	fg_wraddr(a + 24, tpa);
	fg_net_tx_queue(arp->net, f, ARP_FRAME_LEN, h, 0, false);
}

/* RFC 826 for our addresses; the rest, and every reply to us (the
 * kernel may be the one that asked), also to the kernel. */
void net_arp_input(struct net_arp *arp, const struct fg_rx_frame *f, uint32_t l2,
		   uint16_t vid)
{
	const uint8_t *a = f->data + l2;
	uint32_t len = f->len - l2;
	uint16_t op;
	uint32_t spa, tpa;

	fg_stats_inc(arp->st, FG_CTR_NET_ARP_RX);
	if (len < 28 || fg_rd16(a) != 1 || fg_rd16(a + 2) != FG_ETHERTYPE_IPV4 ||
	    a[4] != 6 || a[5] != 4) {
		fg_stats_inc(arp->st, FG_CTR_NET_ARP_BAD);
		return;
	}
	op = fg_rd16(a + 6);
	spa = fg_rdaddr(a + 14);
	tpa = fg_rdaddr(a + 24);
	if ((op != ARP_OP_REQUEST && op != ARP_OP_REPLY) || (a[8] & 1)) {
		fg_stats_inc(arp->st, FG_CTR_NET_ARP_BAD);
		return;
	}
	if (!net_local_on_vlan(arp->net, tpa, vid)) {
		fg_net_to_kernel(arp->net, f);
		return;
	}
	/* RFC 826: merge the sender into the cache when we are the target */
	if (spa)
		arp_learn(arp, spa, a + 8);
	if (op == ARP_OP_REQUEST) {
		arp_send(arp, ARP_OP_REPLY, a + 8, spa, tpa, a + 8);
		fg_stats_inc(arp->st, FG_CTR_NET_ARP_REPLIES);
	} else {
		fg_net_to_kernel(arp->net, f);
	}
}

/* The address to ask from (and so the VLAN to ask on): the one whose
 * network holds `ip`, else the first. */
static uint32_t src_for(const struct net_arp *arp, uint32_t ip)
{
	const struct fg_net_config *cfg = arp->cfg;

	for (unsigned i = 0; i < cfg->n_ipv4; i++) {
		unsigned len = cfg->plen[i];
		uint32_t mask = len ? htonl(~0u << (32 - FG_MIN(len, 32u))) : 0;

		if (len && ((ip ^ cfg->ipv4[i]) & mask) == 0)
			return cfg->ipv4[i];
	}
	return cfg->ipv4[0];
}

int net_arp_static(struct net_arp *arp, uint32_t ip, const uint8_t mac[FG_ETH_ALEN])
{
	struct arp_entry *e;

	if (ip == 0)
		return -EINVAL;
	e = arp_find(arp, ip, true);
	memcpy(e->mac, mac, FG_ETH_ALEN);
	e->valid = 1;
	e->permanent = 1;
	e->updated_ns = UINT64_MAX;	/* never the oldest: never evicted */
	return 0;
}

int net_arp_resolve(struct net_arp *arp, uint32_t ip, uint8_t mac[FG_ETH_ALEN],
		    uint64_t now_ns)
{
	static const uint8_t bcast[FG_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[FG_ETH_ALEN];
	struct arp_entry *e = arp_find(arp, ip, false);

	if (e && e->valid && (e->permanent || now_ns - e->updated_ns < arp->cfg->arp_ttl_ns)) {
		memcpy(mac, e->mac, FG_ETH_ALEN);
		return 0;
	}
	if (!arp->cfg->n_ipv4)
		return -EHOSTUNREACH;
	if (!e)
		e = arp_find(arp, ip, true);
	if (e->requested_ns == 0 || now_ns - e->requested_ns >= ARP_REQ_INTERVAL_NS) {
		e->requested_ns = now_ns ? now_ns : 1;
		arp_send(arp, ARP_OP_REQUEST, zero, ip, src_for(arp, ip), bcast);
		fg_stats_inc(arp->st, FG_CTR_NET_ARP_REQUESTS);
	}
	return -EAGAIN;
}
