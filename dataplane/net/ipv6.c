/* SPDX-License-Identifier: MIT */
/*
 * ipv6.c — IPv6 for one net instance: the network-layer handler beside
 * net.c's IPv4, with the link layer IPv6 brings along (Neighbour
 * Discovery, RFC 4861) and ICMPv6 (RFC 4443).
 *
 * Receive, in order (a packet failing a step is dropped with one counter;
 * in passive mode, net6_observe, steps 1 and 3 only, with passive mode's
 * counters, and every TCP segment goes to TCP whatever its addresses):
 *   1. Fixed header (RFC 8200 3): version 6, payload length within the
 *      frame, a source that is not multicast (RFC 4291 2.7).        net6_bad
 *   2. Destination: one of our addresses, all-nodes (ff02::1) or one of
 *      our solicited-node groups. A tentative address takes only ND.
 *                                                                net6_not_ours
 *   3. Extension headers (RFC 8200 4): hop-by-hop only first; hop-by-hop
 *      and destination options walked option by option (an unknown option
 *      whose two high bits are not 00 means discard, 4.2); a routing header
 *      only with segments left 0 (we are its last hop, 4.4); at most
 *      MAX_EXT_HEADERS of them; each inside the payload.       net6_ext_bad
 *      A fragment header drops the packet.                     net6_fragment
 *   4. The upper layer: ICMPv6 here; TCP (or any protocol with an L4
 *      handler) through net.c's dispatch with family AF_INET6, to a
 *      usable unicast address only; anything else              net6_proto
 *
 * ICMPv6 (checksum over the pseudo-header, always checked unless the port
 * did): echo requests to a unicast address are answered (RFC 4443 4.2);
 * Neighbour Solicitations and Advertisements below; Packet Too Big
 * (RFC 8201) is checked for an MTU >= 1280 and a quoted packet from one
 * of our addresses, then handed to the quoted protocol's handler, which
 * checks the quote against its connection (TCP: the sequence number in
 * the window, RFC 5927 4.1) before it lowers anything.
 *
 * Neighbour Discovery. Our addresses: the link-local fe80::/64 + EUI-64
 * of the port's MAC (RFC 4291 2.5.6), then the configured ones. ND
 * messages must come with hop limit 255 and code 0 and well-formed
 * options (RFC 4861 7.1).
 *   - NS for a usable address of ours: NA with our MAC (target link-layer
 *     option), solicited and override, to the solicitation's source; to
 *     all-nodes when that source is :: (someone's DAD probe).
 *     The NA goes to the frame's Ethernet source (or the NS's source
 *     link-layer option), as ARP replies and TCP segments do: floodgate
 *     only ever answers, so the address a packet came from is the one to
 *     answer, and a neighbour cache would add state without adding a
 *     destination we do not know already.
 *   - DAD (RFC 4862 5.4), by the one instance per port with nd_announce:
 *     at its first poll every address is tentative and one NS from ::
 *     goes to its solicited-node group; an NA for it, or another node's
 *     NS from :: for it, in the next dad_ns makes it a duplicate:
 *     fg_net_ipv6_dad() then says -EADDRINUSE and the log names the
 *     address and the other node's MAC (the program refuses to start).
 *     Otherwise all become usable and one unsolicited NA each goes to
 *     all-nodes (RFC 4861 7.2.6). Our own NS looped back by the port
 *     (our MAC as Ethernet source) is not an objection.
 *   - An NA for a usable address from another MAC is counted
 *     (net6_dad_conflict) and logged, nothing more.
 *   - Resolving a peer for an active open (fg_net_nd_resolve, RFC 4861
 *     7.2): a small neighbour cache of ND_ENTRIES entries (the oldest
 *     evicted), each valid arp_ttl_ns after it was learned. An unknown or
 *     stale peer gets an NS to its solicited-node group, from our address
 *     of its scope (link-local for fe80::/10, else our first configured
 *     one) with our source link-layer option, at most one per
 *     ND_REQ_INTERVAL_NS per address (RFC 4861 7.2.2 RetransTimer); the
 *     caller retries on -EAGAIN. An NA for an address the cache is
 *     resolving or holds writes its target link-layer option (or the
 *     frame's source) into it (net6_nd_learned); nothing else is learned,
 *     so a flood of advertisements cannot fill the cache.
 * No router discovery: floodgate answers on the MAC a packet came from,
 * so it needs neither a default router nor prefix information; an active
 * open reaches on-link peers only.
 *
 * The DAD state is written by the owning worker and read by the main
 * lcore (fg_net_ipv6_dad): an atomic int.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/log.h"
#include "floodgate/net.h"
#include "net_int.h"

#define MAX_EXT_HEADERS 8
#define ND_HOP_LIMIT 255		/* RFC 4861 7.1: ND only from the link */
#define DEFAULT_HOP_LIMIT 64
#define DAD_DEFAULT_NS 1000000000ull	/* RFC 4861 10: RetransTimer 1 s */

#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136
#define ND_HLEN 24			/* type code csum reserved/flags[4] target[16] */
#define ND_OPT_SOURCE_LLADDR 1
#define ND_OPT_TARGET_LLADDR 2
#define ND_OPT_LLADDR_LEN 8		/* type len mac[6]: one unit of 8 */
#define NA_FLAG_SOLICITED 0x40
#define NA_FLAG_OVERRIDE 0x20
#define PTB_QUOTE_MIN (FG_IP6_HLEN + 8)	/* the quoted header + ports and sequence */
#define ND_ENTRIES 64			/* neighbour cache: peers this instance opens to */
#define ND_REQ_INTERVAL_NS 1000000000ull	/* RFC 4861 10: RetransTimer 1 s */

enum addr_state { ADDR_TENTATIVE, ADDR_USABLE, ADDR_DUPLICATE };

struct addr6 {
	uint8_t ip[FG_IP6_ALEN];
	uint8_t state;			/* enum addr_state */
};

struct nd_entry {
	uint8_t ip[FG_IP6_ALEN];
	uint8_t mac[FG_ETH_ALEN];
	uint8_t used, valid;		/* valid: mac known, not just asked for */
	uint64_t updated_ns;		/* learned, or first asked for */
	uint64_t requested_ns;		/* last NS sent, 0 = none */
};

struct net6 {
	struct fg_net *net;
	const struct fg_net_config *cfg;	/* the instance's own copy */
	struct fg_stats *st;
	struct addr6 a[FG_NET_MAX_ADDRS + 1];	/* [0] is the link-local address */
	unsigned n;
	uint64_t dad_ns;
	uint64_t dad_end;
	uint8_t dad_started, dad_running;
	int dad;				/* atomic: -EAGAIN, 0, -EADDRINUSE */
	struct nd_entry nc[ND_ENTRIES];		/* neighbour cache (active opens) */
};

static const uint8_t all_nodes[FG_IP6_ALEN] = { 0xff, 0x02, [15] = 1 };
static const uint8_t unspecified[FG_IP6_ALEN];

/* ---------------------------------------------------------------- addresses */

static void solicited_node(const uint8_t *ip, uint8_t out[FG_IP6_ALEN])
{
	static const uint8_t prefix[13] = { 0xff, 0x02, [11] = 1, [12] = 0xff };

	memcpy(out, prefix, sizeof(prefix));
	memcpy(out + 13, ip + 13, 3);
}

/* RFC 2464 7: 33:33 and the group's low 32 bits */
static void group_mac(const uint8_t *group, uint8_t mac[FG_ETH_ALEN])
{
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, group + 12, 4);
}

static struct addr6 *addr_find(struct net6 *v6, const uint8_t *ip)
{
	for (unsigned i = 0; i < v6->n; i++)
		if (!memcmp(v6->a[i].ip, ip, FG_IP6_ALEN))
			return &v6->a[i];
	return NULL;
}

static bool is_our_group(const struct net6 *v6, const uint8_t *ip)
{
	uint8_t g[FG_IP6_ALEN];

	if (!memcmp(ip, all_nodes, FG_IP6_ALEN))
		return true;
	for (unsigned i = 0; i < v6->n; i++) {
		solicited_node(v6->a[i].ip, g);
		if (!memcmp(ip, g, FG_IP6_ALEN))
			return true;
	}
	return false;
}

static const char *fmt_ip6(const uint8_t *ip, char buf[INET6_ADDRSTRLEN])
{
	return inet_ntop(AF_INET6, ip, buf, INET6_ADDRSTRLEN) ? buf : "?";
}

bool net6_is_local(const struct net6 *v6, const uint8_t *ip)
{
	for (unsigned i = 0; i < v6->n; i++)
		if (v6->a[i].state == ADDR_USABLE && !memcmp(v6->a[i].ip, ip, FG_IP6_ALEN))
			return true;
	return false;
}

void net6_link_local(const struct net6 *v6, uint8_t out[FG_IP6_ALEN])
{
	memcpy(out, v6->a[0].ip, FG_IP6_ALEN);
}

unsigned net6_mc_macs(const struct net6 *v6, uint8_t (*macs)[FG_ETH_ALEN], unsigned max)
{
	uint8_t g[FG_IP6_ALEN], m[FG_ETH_ALEN];
	unsigned n = 0;

	for (unsigned i = 0; i <= v6->n; i++) {
		bool seen = false;

		if (i == v6->n)
			memcpy(g, all_nodes, FG_IP6_ALEN);
		else
			solicited_node(v6->a[i].ip, g);
		group_mac(g, m);
		for (unsigned j = 0; j < n && j < max; j++)
			seen |= !memcmp(macs[j], m, FG_ETH_ALEN);
		if (seen)
			continue;
		if (n < max)
			memcpy(macs[n], m, FG_ETH_ALEN);
		n++;
	}
	return n;
}

int net6_dad(const struct net6 *v6)
{
	return __atomic_load_n(&v6->dad, __ATOMIC_ACQUIRE);
}

struct net6 *net6_create(struct fg_net *net, const struct fg_net_config *cfg, int *err)
{
	struct net6 *v6;
	uint8_t *ll;

	*err = 0;
	/* passive mode observes anyone's packets (net6_observe): no addresses,
	 * no Neighbour Discovery */
	if (!cfg->n_ipv6 || cfg->passive)
		return NULL;
	v6 = calloc(1, sizeof(*v6));
	if (!v6) {
		*err = -ENOMEM;
		return NULL;
	}
	v6->net = net;
	v6->cfg = cfg;
	v6->st = fg_net_stats(net);
	/* RFC 4291 2.5.6 / appendix A: fe80::/64 + the MAC as modified EUI-64 */
	ll = v6->a[0].ip;
	ll[0] = 0xfe;
	ll[1] = 0x80;
	ll[8] = cfg->mac[0] ^ 0x02;
	ll[9] = cfg->mac[1];
	ll[10] = cfg->mac[2];
	ll[11] = 0xff;
	ll[12] = 0xfe;
	memcpy(ll + 13, cfg->mac + 3, 3);
	v6->n = 1;
	for (unsigned i = 0; i < cfg->n_ipv6; i++)
		if (!addr_find(v6, cfg->ipv6[i]))
			memcpy(v6->a[v6->n++].ip, cfg->ipv6[i], FG_IP6_ALEN);
	for (unsigned i = 0; i < v6->n; i++)
		v6->a[i].state = cfg->nd_announce ? ADDR_TENTATIVE : ADDR_USABLE;
	v6->dad_ns = cfg->dad_ns ? cfg->dad_ns : DAD_DEFAULT_NS;
	v6->dad = cfg->nd_announce ? -EAGAIN : 0;
	v6->dad_running = cfg->nd_announce;
	return v6;
}

void net6_destroy(struct net6 *v6)
{
	free(v6);
}

/* ---------------------------------------------------------------- ICMPv6 out */

/* An ICMPv6 message of `len` octets from `src` to `dst` (hop limit
 * `hlim`): the body is written by the caller into the returned pointer
 * (type first), then icmp6_send() checksums and queues it. */
static uint8_t *icmp6_alloc(struct net6 *v6, uint32_t len, void **h)
{
	uint8_t *f = fg_net_tx_alloc(v6->net, FG_ETH_HLEN + FG_IP6_HLEN + len, h);

	if (f)
		memset(f, 0, FG_ETH_HLEN + FG_IP6_HLEN + len);
	return f;
}

static void icmp6_send(struct net6 *v6, uint8_t *f, void *h, const uint8_t *dst_mac,
		       const uint8_t *src, const uint8_t *dst, uint32_t len, uint8_t hlim)
{
	uint8_t *m = f + FG_ETH_HLEN + FG_IP6_HLEN;

	fg_net_build_ipv6(f, dst_mac, v6->cfg->mac, src, dst, FG_IP6_NH_ICMP6, len, hlim);
	fg_wr16(m + 2, 0);
	fg_wr16(m + 2, fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(src, dst, FG_IP6_NH_ICMP6, len),
						m, len)));
	fg_net_tx_queue(v6->net, f, FG_ETH_HLEN + FG_IP6_HLEN + len, h, 0, false);
}

/* A Neighbour Advertisement for our `target` with our MAC. */
static void na_send(struct net6 *v6, const uint8_t *dst_mac, const uint8_t *dst,
		    const uint8_t *target, uint8_t flags)
{
	uint32_t len = ND_HLEN + ND_OPT_LLADDR_LEN;
	void *h;
	uint8_t *f = icmp6_alloc(v6, len, &h), *m;

	if (!f)
		return;
	m = f + FG_ETH_HLEN + FG_IP6_HLEN;
	m[0] = ND_NEIGHBOR_ADVERT;
	m[4] = flags;
	memcpy(m + 8, target, FG_IP6_ALEN);
	m[ND_HLEN] = ND_OPT_TARGET_LLADDR;
	m[ND_HLEN + 1] = 1;
	memcpy(m + ND_HLEN + 2, v6->cfg->mac, FG_ETH_ALEN);
	icmp6_send(v6, f, h, dst_mac, target, dst, len, ND_HOP_LIMIT);
	fg_stats_inc(v6->st, FG_CTR_NET6_ADVERT_TX);
}

/* A Neighbour Solicitation for `target` to its solicited-node group: from
 * `src` with our source link-layer option (RFC 4861 7.2.2, resolving), or
 * DAD's probe (RFC 4862 5.4.2) from :: without one (src NULL). */
static void ns_send(struct net6 *v6, const uint8_t *src, const uint8_t *target)
{
	uint32_t len = ND_HLEN + (src ? ND_OPT_LLADDR_LEN : 0);
	uint8_t g[FG_IP6_ALEN], mac[FG_ETH_ALEN];
	void *h;
	uint8_t *f = icmp6_alloc(v6, len, &h), *m;

	if (!f)
		return;
	m = f + FG_ETH_HLEN + FG_IP6_HLEN;
	m[0] = ND_NEIGHBOR_SOLICIT;
	memcpy(m + 8, target, FG_IP6_ALEN);
	if (src) {
		m[ND_HLEN] = ND_OPT_SOURCE_LLADDR;
		m[ND_HLEN + 1] = 1;
		memcpy(m + ND_HLEN + 2, v6->cfg->mac, FG_ETH_ALEN);
	}
	solicited_node(target, g);
	group_mac(g, mac);
	icmp6_send(v6, f, h, mac, src ? src : unspecified, g, len, ND_HOP_LIMIT);
	fg_stats_inc(v6->st, src ? FG_CTR_NET6_SOLICIT_TX : FG_CTR_NET6_DAD_PROBES);
}

/* ---------------------------------------------------------------- resolving */

static struct nd_entry *nd_find(struct net6 *v6, const uint8_t *ip)
{
	for (unsigned i = 0; i < ND_ENTRIES; i++)
		if (v6->nc[i].used && !memcmp(v6->nc[i].ip, ip, FG_IP6_ALEN))
			return &v6->nc[i];
	return NULL;
}

/* A free entry for `ip`, or the oldest one. */
static struct nd_entry *nd_take(struct net6 *v6, const uint8_t *ip)
{
	struct nd_entry *e = &v6->nc[0];

	for (unsigned i = 0; i < ND_ENTRIES; i++) {
		if (!v6->nc[i].used) {
			e = &v6->nc[i];
			break;
		}
		if (v6->nc[i].updated_ns < e->updated_ns)
			e = &v6->nc[i];
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->ip, ip, FG_IP6_ALEN);
	e->used = 1;
	return e;
}

/* Our address to ask from: of the target's scope, usable. */
static const uint8_t *nd_source(const struct net6 *v6, const uint8_t *target)
{
	bool link_local = target[0] == 0xfe && (target[1] & 0xc0) == 0x80;

	for (unsigned i = link_local ? 0 : 1; i < v6->n; i++)
		if (v6->a[i].state == ADDR_USABLE)
			return v6->a[i].ip;
	return v6->a[0].state == ADDR_USABLE ? v6->a[0].ip : NULL;
}

int net6_nd_resolve(struct net6 *v6, const uint8_t *ip, uint8_t mac[FG_ETH_ALEN],
		    uint64_t now_ns)
{
	struct nd_entry *e = nd_find(v6, ip);
	const uint8_t *src;

	if (e && e->valid && now_ns - e->updated_ns < v6->cfg->arp_ttl_ns) {
		memcpy(mac, e->mac, FG_ETH_ALEN);
		return 0;
	}
	src = nd_source(v6, ip);
	if (!src)
		return -EAGAIN;		/* our addresses are still tentative */
	if (!e) {
		e = nd_take(v6, ip);
		e->updated_ns = now_ns;
	}
	if (e->requested_ns == 0 || now_ns - e->requested_ns >= ND_REQ_INTERVAL_NS) {
		e->requested_ns = now_ns ? now_ns : 1;
		ns_send(v6, src, ip);
	}
	return -EAGAIN;
}

/* An NA for a peer we resolve or hold: its MAC. */
static void nd_learn(struct net6 *v6, const uint8_t *target, const uint8_t *mac, uint64_t now_ns)
{
	struct nd_entry *e = nd_find(v6, target);

	if (!e || (mac[0] & 1))
		return;
	memcpy(e->mac, mac, FG_ETH_ALEN);
	e->valid = 1;
	e->updated_ns = now_ns;
	fg_stats_inc(v6->st, FG_CTR_NET6_ND_LEARNED);
}

/* ---------------------------------------------------------------- DAD */

static void dad_conflict(struct net6 *v6, struct addr6 *a, const uint8_t *mac, const char *how)
{
	char ip[INET6_ADDRSTRLEN];

	fg_stats_inc(v6->st, FG_CTR_NET6_DAD_CONFLICT);
	if (a->state != ADDR_TENTATIVE) {
		FG_LOG_WARN("net", "IPv6 address %s is claimed by %02x:%02x:%02x:%02x:%02x:%02x "
			    "(%s); kept", fmt_ip6(a->ip, ip), mac[0], mac[1], mac[2], mac[3],
			    mac[4], mac[5], how);
		return;
	}
	a->state = ADDR_DUPLICATE;
	FG_LOG_ERR("net", "IPv6 address %s is in use by %02x:%02x:%02x:%02x:%02x:%02x (%s): "
		   "duplicate address detection failed (RFC 4862 5.4.5)", fmt_ip6(a->ip, ip),
		   mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], how);
	__atomic_store_n(&v6->dad, -EADDRINUSE, __ATOMIC_RELEASE);
}

void net6_poll(struct net6 *v6, uint64_t now_ns)
{
	if (!v6->dad_running)
		return;
	if (!v6->dad_started) {
		v6->dad_started = 1;
		v6->dad_end = now_ns + v6->dad_ns;
		for (unsigned i = 0; i < v6->n; i++)
			ns_send(v6, NULL, v6->a[i].ip);
		return;
	}
	if (now_ns < v6->dad_end)
		return;
	/* no objection in time: usable, and announced (RFC 4861 7.2.6) */
	v6->dad_running = 0;
	for (unsigned i = 0; i < v6->n; i++) {
		uint8_t mac[FG_ETH_ALEN];

		if (v6->a[i].state != ADDR_TENTATIVE)
			continue;
		v6->a[i].state = ADDR_USABLE;
		group_mac(all_nodes, mac);
		na_send(v6, mac, all_nodes, v6->a[i].ip, NA_FLAG_OVERRIDE);
	}
	if (v6->dad == -EAGAIN)
		__atomic_store_n(&v6->dad, 0, __ATOMIC_RELEASE);
}

uint64_t net6_next_deadline(const struct net6 *v6)
{
	if (!v6->dad_running)
		return UINT64_MAX;
	return v6->dad_started ? v6->dad_end : net_now(v6->net);
}

/* ---------------------------------------------------------------- ND in */

/* RFC 4861 7.1.1/7.1.2: hop limit, code, length, a unicast target, and
 * options each of a non-zero length inside the message. Sets *lladdr to
 * the link-layer option of `opt_type`, if any. */
static bool nd_valid(const uint8_t *ip, const uint8_t *m, uint32_t len, uint8_t opt_type,
		     const uint8_t **lladdr)
{
	*lladdr = NULL;
	if (ip[7] != ND_HOP_LIMIT || m[1] != 0 || len < ND_HLEN || m[8] == 0xff)
		return false;
	for (uint32_t o = ND_HLEN; o < len;) {
		uint32_t olen = (uint32_t)m[o + 1] * 8;

		if (len - o < 2 || olen == 0 || olen > len - o)
			return false;
		if (m[o] == opt_type && olen >= ND_OPT_LLADDR_LEN)
			*lladdr = m + o + 2;
		o += olen;
	}
	return true;
}

static void ns_input(struct net6 *v6, const struct fg_rx_frame *f, const uint8_t *ip,
		     const uint8_t *m, uint32_t len)
{
	const uint8_t *src = ip + 8, *slla;
	bool from_dad = !memcmp(src, unspecified, FG_IP6_ALEN);
	uint8_t g[FG_IP6_ALEN], mac[FG_ETH_ALEN];
	struct addr6 *a;

	fg_stats_inc(v6->st, FG_CTR_NET6_SOLICIT_RX);
	solicited_node(m + 8, g);
	/* a DAD probe goes to the target's group and carries no link-layer option */
	if (!nd_valid(ip, m, len, ND_OPT_SOURCE_LLADDR, &slla) ||
	    (from_dad && (slla || memcmp(ip + 24, g, FG_IP6_ALEN)))) {
		fg_stats_inc(v6->st, FG_CTR_NET6_ND_BAD);
		return;
	}
	a = addr_find(v6, m + 8);
	if (!a || a->state == ADDR_DUPLICATE)
		return;
	if (a->state == ADDR_TENTATIVE) {
		/* RFC 4862 5.4.3: another node probing the same address */
		if (from_dad && memcmp(f->data + 6, v6->cfg->mac, FG_ETH_ALEN))
			dad_conflict(v6, a, f->data + 6, "its own probe for it");
		return;
	}
	if (from_dad) {
		group_mac(all_nodes, mac);
		na_send(v6, mac, all_nodes, a->ip, NA_FLAG_OVERRIDE);
	} else {
		na_send(v6, slla ? slla : f->data + 6, src, a->ip,
			NA_FLAG_SOLICITED | NA_FLAG_OVERRIDE);
	}
}

static void na_input(struct net6 *v6, const struct fg_rx_frame *f, const uint8_t *ip,
		     const uint8_t *m, uint32_t len)
{
	const uint8_t *tlla;
	struct addr6 *a;

	if (!nd_valid(ip, m, len, ND_OPT_TARGET_LLADDR, &tlla)) {
		fg_stats_inc(v6->st, FG_CTR_NET6_ND_BAD);
		return;
	}
	a = addr_find(v6, m + 8);
	if (!a) {
		nd_learn(v6, m + 8, tlla ? tlla : f->data + 6, net_now(v6->net));
		return;
	}
	if (a->state == ADDR_DUPLICATE || !memcmp(f->data + 6, v6->cfg->mac, FG_ETH_ALEN))
		return;
	dad_conflict(v6, a, tlla ? tlla : f->data + 6, "a neighbour advertisement");
}

/* ---------------------------------------------------------------- ICMPv6 in */

static void echo_input(struct net6 *v6, const struct fg_rx_frame *f, const uint8_t *ip,
		       const uint8_t *m, uint32_t len)
{
	uint32_t flen = FG_ETH_HLEN + FG_IP6_HLEN + len;
	uint8_t *o;
	void *h;

	if (flen > FG_ETH_HLEN + fg_net_mtu(v6->net) || !net6_is_local(v6, ip + 24)) {
		fg_stats_inc(v6->st, FG_CTR_NET6_ICMP_DROP);
		return;
	}
	o = icmp6_alloc(v6, len, &h);
	if (!o)
		return;
	/* RFC 4443 4.2: the request's identifier, sequence and data, type 129 */
	memcpy(o + FG_ETH_HLEN + FG_IP6_HLEN, m, len);
	o[FG_ETH_HLEN + FG_IP6_HLEN] = ICMP6_ECHO_REPLY;
	icmp6_send(v6, o, h, f->data + 6, ip + 24, ip + 8, len, DEFAULT_HOP_LIMIT);
	fg_stats_inc(v6->st, FG_CTR_NET6_ECHO);
}

/* RFC 8201 4 / RFC 5927: believed only for an MTU of at least 1280 and a
 * quote of a packet we could have sent; the transport checks the rest. */
static void ptb_input(struct net6 *v6, const uint8_t *m, uint32_t len)
{
	const uint8_t *q = m + 8;
	struct fg_net_icmp_err e;

	if (len < 8 + PTB_QUOTE_MIN || fg_rd32(m + 4) < FG_IP6_MIN_MTU || (q[0] >> 4) != 6 ||
	    !net6_is_local(v6, q + 8)) {
		fg_stats_inc(v6->st, FG_CTR_NET6_PTB_BAD);
		return;
	}
	e = (struct fg_net_icmp_err){ AF_INET6, fg_rd32(m + 4), q + 8, q + 24,
				      q + FG_IP6_HLEN, len - 8 - FG_IP6_HLEN };
	if (!net_l4_icmp_error(v6->net, q[6], &e)) {
		fg_stats_inc(v6->st, FG_CTR_NET6_PTB_BAD);
		return;
	}
	fg_stats_inc(v6->st, FG_CTR_NET6_PTB);
}

static void icmp6_input(struct net6 *v6, const struct fg_rx_frame *f, const uint8_t *ip,
			const uint8_t *m, uint32_t len, bool usable)
{
	if (len < 8 || (!(f->flags & FG_RX_L4_CSUM_OK) &&
			fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(ip + 8, ip + 24,
								     FG_IP6_NH_ICMP6, len),
						 m, len)) != 0)) {
		fg_stats_inc(v6->st, FG_CTR_NET6_ICMP_DROP);
		return;
	}
	switch (m[0]) {
	case ND_NEIGHBOR_SOLICIT:
		ns_input(v6, f, ip, m, len);
		return;
	case ND_NEIGHBOR_ADVERT:
		na_input(v6, f, ip, m, len);
		return;
	case ICMP6_ECHO_REQUEST:
		echo_input(v6, f, ip, m, len);
		return;
	case ICMP6_PACKET_TOO_BIG:
		if (usable) {
			ptb_input(v6, m, len);
			return;
		}
		break;
	default:
		break;
	}
	fg_stats_inc(v6->st, FG_CTR_NET6_ICMP_DROP);
}

/* ---------------------------------------------------------------- IPv6 in */

/* RFC 8200 4.2: the options of a hop-by-hop or destination options
 * header: Pad1, PadN and any option whose action bits (the two high bits
 * of its type) say skip. */
static bool options_ok(const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len;) {
		if (p[i] == 0) {		/* Pad1 */
			i++;
			continue;
		}
		if (len - i < 2 || p[i + 1] > len - i - 2 || (p[i] != 1 && (p[i] & 0xc0)))
			return false;
		i += 2u + p[i + 1];
	}
	return true;
}

enum ext_result { EXT_OK, EXT_BAD, EXT_FRAGMENT };

/* Walks the extension headers (step 3): the upper-layer protocol and its
 * offset from the fixed header in *next and *off, *n the headers walked. */
static enum ext_result ext_walk(const uint8_t *ip, uint32_t end, uint8_t *next, uint32_t *off,
				unsigned *n)
{
	*next = ip[6];
	*off = FG_IP6_HLEN;
	*n = 0;
	for (;;) {
		const uint8_t *h = ip + *off;
		uint32_t hl;

		switch (*next) {
		case FG_IP6_NH_HOPOPTS:
			if (*n)
				return EXT_BAD;
			/* fallthrough */
		case FG_IP6_NH_DSTOPTS:
		case FG_IP6_NH_ROUTING:
			if (end - *off < 8 || (hl = (h[1] + 1u) * 8) > end - *off ||
			    ++*n > MAX_EXT_HEADERS)
				return EXT_BAD;
			if (*next == FG_IP6_NH_ROUTING ? h[3] != 0 : !options_ok(h + 2, hl - 2))
				return EXT_BAD;
			*next = h[0];
			*off += hl;
			continue;
		case FG_IP6_NH_FRAGMENT:
			return EXT_FRAGMENT;
		default:
			return EXT_OK;
		}
	}
}

/* Steps 1 and 3 (the fixed header, the extension headers): the packet's
 * end and its upper layer, or false when dropped, counted as the live
 * counter `live` names for each failure or as passive_bad. */
static bool header_walk(struct fg_stats *st, bool passive, const uint8_t *ip, uint32_t avail,
			uint32_t *end, uint8_t *next, uint32_t *off)
{
	enum ext_result r;
	unsigned n;

	fg_stats_inc(st, FG_CTR_NET6_RX);
	if (avail < FG_IP6_HLEN || (ip[0] >> 4) != 6 ||
	    (*end = FG_IP6_HLEN + fg_rd16(ip + 4)) > avail || ip[8] == 0xff) {
		fg_stats_inc(st, passive ? FG_CTR_PASSIVE_BAD : FG_CTR_NET6_BAD);
		return false;
	}
	r = ext_walk(ip, *end, next, off, &n);
	if (r != EXT_OK) {
		fg_stats_inc(st, passive ? FG_CTR_PASSIVE_BAD
				: r == EXT_FRAGMENT ? FG_CTR_NET6_FRAGMENT : FG_CTR_NET6_EXT_BAD);
		return false;
	}
	if (n)
		fg_stats_inc(st, FG_CTR_NET6_EXT);
	return true;
}

bool net6_observe(struct fg_net *net, struct fg_rx_frame *f, uint32_t l2)
{
	struct fg_stats *st = fg_net_stats(net);
	uint8_t *ip = f->data + l2;
	uint32_t end, off;
	uint8_t next;

	if (!header_walk(st, true, ip, f->len - l2, &end, &next, &off))
		return false;
	if (!net_l4_has(net, next)) {
		fg_stats_inc(st, FG_CTR_PASSIVE_NOT_TCP);
		return false;
	}
	return !net_l4_input(net, f, &(struct fg_net_l3){ AF_INET6, ip, ip + 8, ip + 24 }, next,
			     ip + off, end - off, false);
}

bool net6_input(struct net6 *v6, struct fg_rx_frame *f, uint32_t l2, bool faults)
{
	uint8_t *ip = f->data + l2;
	uint32_t avail = f->len - l2, end, off;
	struct addr6 *dst;
	bool usable, group;
	uint8_t next;

	if (!header_walk(v6->st, false, ip, avail, &end, &next, &off))
		return false;
	dst = addr_find(v6, ip + 24);
	usable = dst && dst->state == ADDR_USABLE;
	group = !dst && is_our_group(v6, ip + 24);
	if (!usable && !group && !(dst && dst->state == ADDR_TENTATIVE)) {
		/* the box's own addresses and groups: the kernel's, with a path */
		if (fg_net_to_kernel(v6->net, f) != 0)
			fg_stats_inc(v6->st, FG_CTR_NET6_NOT_OURS);
		return false;
	}
	if (next == FG_IP6_NH_ICMP6) {
		icmp6_input(v6, f, ip, ip + off, end - off, usable);
		return false;
	}
	if (!usable) {
		/* TCP to a group, or to an address still on trial */
		fg_stats_inc(v6->st, FG_CTR_NET6_NOT_OURS);
		return false;
	}
	if (net_l4_has(v6->net, next)) {
		struct fg_net_l3 l3 = { AF_INET6, ip, ip + 8, ip + 24 };

		return !net_l4_input(v6->net, f, &l3, next, ip + off, end - off, faults);
	}
	if (fg_net_to_kernel(v6->net, f) != 0)
		fg_stats_inc(v6->st, FG_CTR_NET6_PROTO);
	return false;
}
