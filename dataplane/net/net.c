/* SPDX-License-Identifier: MIT */
/*
 * net.c — L2/L3 of one dataplane instance: Ethernet demux (ARP frames to
 * arp.c, IPv6 packets to ipv6.c), IPv4 validation (checksum, lengths,
 * options skipped, fragments dropped), ICMP echo, the TX burst queue and
 * the fault knob.
 *
 * Receive path: every frame of a burst is classified and handed on (an
 * IP packet to the L4 handler registered for its protocol number: TCP's
 * segments to TCP) with the instance's reference dropped at the end; the
 * handler takes its own references on payload it keeps. After the burst
 * every handler runs its end-of-burst pass, then queued TX frames are
 * flushed.
 *
 * L4 handlers: at most FG_NET_MAX_L4, in registration order; a 256-entry
 * map from protocol number to slot makes the dispatch one load.
 *
 * Merged packets (FG_RX_MORE, net.h): checked once at the door (untagged
 * IPv4, TCP, both checksums verified by the port, no padding) and then
 * handled as one packet whose IP total length covers the pieces; the TCP
 * handler walks them. Every reference the frame brought (its own and its
 * pieces') is dropped together (frame_unref). The reorder fault never
 * holds one: its pieces live in the caller's array, valid for the burst.
 *
 * Passive mode (an instance that only observes a capture or a mirror
 * port): frames addressed anywhere are taken (the observed server's, not
 * ours), one 802.1Q tag is allowed, checksums count as verified (a capture
 * taken on the sending host holds checksums its NIC had not filled in yet;
 * a mirror's frames were checked on the wire), the destination address is
 * left to the L4 handler (TCP's listen endpoints), nothing but IPv4 and
 * IPv6 is looked at, and nothing is sent. Its drops are counted as passive mode's
 * own (passive_not_tcp, passive_bad) instead of net's.
 *
 * Faults (tests only): a seeded xorshift PRNG decides per TCP segment.
 * A received segment may be dropped, processed twice, or held back and
 * processed after the next one (or at the next poll); a transmitted one
 * may be dropped, sent twice (a copy), or held behind the next frame.
 *
 * The exception path (net.h): fg_net_to_kernel() spends a token of a
 * bucket refilled at kernel_rate frames a second (in nano-frames, capped
 * at kernel_burst frames) and hands the frame to the port's to_kernel op.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/log.h"
#include "floodgate/net.h"
#include "net_int.h"

#define ICMP_ECHO_REQUEST 8
#define ICMP_ECHO_REPLY 0
#define NS_PER_S 1000000000ull
#define KERNEL_BURST_MIN 8u

struct fault_dir {
	uint32_t drop, dup, reorder;	/* ppm */
};

struct l4_handler {
	const struct fg_net_l4_ops *ops;
	void *ctx;
	uint8_t proto;
};

struct fg_net {
	struct fg_net_config cfg;
	const struct fg_port_ops *ops;
	void *port;
	struct fg_stats *st;
	uint64_t now;
	uint16_t ip_id;

	struct fg_tx_frame txq[FG_NET_TX_BURST];
	unsigned n_txq;

	struct net_arp *arp;

	struct l4_handler l4[FG_NET_MAX_L4];
	unsigned n_l4;
	uint8_t l4_slot[FG_IP_PROTO_MAX + 1];	/* protocol -> slot + 1; 0: none */

	bool vlans;			/* an address is on a VLAN */
	/* cfg.ipv4[i] is leaving (fg_net_set_ipv4): ours until then, 0 for good */
	uint64_t leave_at[FG_NET_MAX_ADDRS];
	uint16_t rx_vid;		/* the VLAN of the frame being processed */
	/* the exception path's token bucket, in nano-frames */
	uint64_t kern_tokens, kern_cap, kern_last_ns;

	bool faults_on;
	struct fault_dir f_rx, f_tx;
	uint64_t rng;
	bool rx_held;			/* a received segment held back (reorder) */
	struct fg_rx_frame rx_held_frame;
	bool tx_held;
	struct fg_tx_frame tx_held_frame;

	struct net6 *v6;		/* NULL: no IPv6 address, IPv6 dropped */
};

static void process_frame(struct fg_net *net, struct fg_rx_frame *f, bool faults);

struct fg_net *fg_net_create(const struct fg_net_config *cfg,
			     const struct fg_port_ops *ops, void *port,
			     struct fg_stats *stats)
{
	struct fg_net *net;
	unsigned n_arp = cfg->arp_entries ? cfg->arp_entries : 1024;
	int err = 0;

	if ((n_arp & (n_arp - 1)) || n_arp < NET_ARP_WAYS || cfg->n_ipv4 > FG_NET_MAX_ADDRS ||
	    cfg->n_ipv6 > FG_NET_MAX_ADDRS ||
	    (cfg->mtu && (cfg->mtu < 576 || cfg->mtu > 9000))) {
		FG_LOG_ERR("net", "bad config: arp_entries %u (power of two >= 4), "
			   "%u + %u addresses (max %d each), mtu %u (576..9000)",
			   n_arp, cfg->n_ipv4, cfg->n_ipv6, FG_NET_MAX_ADDRS, cfg->mtu);
		return NULL;
	}
	net = calloc(1, sizeof(*net));
	if (!net)
		return NULL;
	net->cfg = *cfg;
	net->cfg.arp_entries = n_arp;
	if (!net->cfg.mtu)
		net->cfg.mtu = 1500;
	if (!net->cfg.arp_ttl_ns)
		net->cfg.arp_ttl_ns = 300ull * 1000000000ull;
	for (unsigned i = 0; i < cfg->n_ipv4; i++)
		net->vlans |= (cfg->vid[i] & 0xfff) != 0;
	if (!ops->to_kernel)
		net->cfg.kernel_rate = 0;
	if (net->cfg.kernel_rate && !net->cfg.kernel_burst)
		net->cfg.kernel_burst = FG_MAX(KERNEL_BURST_MIN, net->cfg.kernel_rate / 10);
	net->kern_cap = net->kern_tokens = (uint64_t)net->cfg.kernel_burst * NS_PER_S;
	net->ops = ops;
	net->port = port;
	net->st = stats;
	net->arp = net_arp_create(net, &net->cfg);
	if (!net->arp)
		goto out_free_net;
	net->v6 = net6_create(net, &net->cfg, &err);
	if (err)
		goto out_destroy_arp;
	return net;

out_destroy_arp:
	net_arp_destroy(net->arp);
out_free_net:
	free(net);
	return NULL;
}

void fg_net_destroy(struct fg_net *net)
{
	if (!net)
		return;
	if (net->rx_held)
		net->ops->buf_unref(net->port, net->rx_held_frame.handle);
	if (net->tx_held)
		net->ops->tx_free(net->port, net->tx_held_frame.handle);
	for (unsigned i = 0; i < net->n_txq; i++)
		net->ops->tx_free(net->port, net->txq[i].handle);
	net6_destroy(net->v6);
	net_arp_destroy(net->arp);
	free(net);
}

/* ---------------------------------------------------------------- kernel */

int fg_net_to_kernel(struct fg_net *net, const struct fg_rx_frame *f)
{
	uint64_t dt;
	int rc;

	if (!net->cfg.kernel_rate)
		return -ENOENT;
	/* refill: a second or more of idleness fills the bucket */
	dt = net->now - net->kern_last_ns;
	net->kern_last_ns = net->now;
	net->kern_tokens = dt >= NS_PER_S ? net->kern_cap :
			   FG_MIN(net->kern_cap, net->kern_tokens + dt * net->cfg.kernel_rate);
	if (net->kern_tokens < NS_PER_S) {
		fg_stats_inc(net->st, FG_CTR_NET_TO_KERNEL_LIMITED);
		return 0;
	}
	net->kern_tokens -= NS_PER_S;
	rc = net->ops->to_kernel(net->port, f);
	fg_stats_inc(net->st, rc == 0 ? FG_CTR_NET_TO_KERNEL : FG_CTR_NET_TO_KERNEL_FAILED);
	return 0;
}

/* ---------------------------------------------------------------- L4 */

int fg_net_l4_register(struct fg_net *net, uint8_t proto, const struct fg_net_l4_ops *ops,
		       void *ctx)
{
	if (!ops || !ops->input || proto == FG_IP_PROTO_ICMP)
		return -EINVAL;
	if (net->l4_slot[proto])
		return -EEXIST;
	if (net->n_l4 == FG_NET_MAX_L4)
		return -ENOSPC;
	net->l4[net->n_l4] = (struct l4_handler){ ops, ctx, proto };
	net->l4_slot[proto] = (uint8_t)++net->n_l4;
	return 0;
}

void fg_net_l4_unregister(struct fg_net *net, uint8_t proto)
{
	unsigned slot = net->l4_slot[proto];

	if (!slot)
		return;
	net->l4_slot[proto] = 0;
	/* the last handler moves into the freed slot */
	if (slot != net->n_l4) {
		net->l4[slot - 1] = net->l4[net->n_l4 - 1];
		net->l4_slot[net->l4[slot - 1].proto] = (uint8_t)slot;
	}
	net->n_l4--;
}

static void l4_end_of_burst(struct fg_net *net, uint64_t now_ns)
{
	for (unsigned i = 0; i < net->n_l4; i++)
		if (net->l4[i].ops->end_of_burst)
			net->l4[i].ops->end_of_burst(net->l4[i].ctx, now_ns);
}

/* ---------------------------------------------------------------- helpers */

static uint32_t rng_ppm(struct fg_net *net)
{
	/* xorshift64*: the fault knob only needs repeatable choices */
	net->rng ^= net->rng >> 12;
	net->rng ^= net->rng << 25;
	net->rng ^= net->rng >> 27;
	return (uint32_t)((net->rng * 0x2545f4914f6cdd1dull) >> 32) % 1000000u;
}

bool fg_net_is_local_ipv4(const struct fg_net *net, uint32_t ip)
{
	for (unsigned i = 0; i < net->cfg.n_ipv4; i++)
		if (net->cfg.ipv4[i] == ip)
			return true;
	return false;
}

const uint8_t *fg_net_mac(const struct fg_net *net)
{
	return net->cfg.mac;
}

unsigned fg_net_mtu(const struct fg_net *net)
{
	return net->cfg.mtu;
}

bool fg_net_tx_offload(const struct fg_net *net)
{
	return net->cfg.tx_csum_offload;
}

unsigned fg_net_tx_max_attach(const struct fg_net *net)
{
	return net->cfg.tx_max_segs > 1 && net->ops->tx_attach ? net->cfg.tx_max_segs - 1 : 0;
}

uint32_t fg_net_tso_max(const struct fg_net *net)
{
	return net->cfg.tso_max;
}

struct fg_buf_sum *fg_net_buf_sum(struct fg_net *net, void *handle)
{
	return net->ops->buf_sum ? net->ops->buf_sum(net->port, handle) : NULL;
}

int fg_net_tx_attach(struct fg_net *net, void *frame, void *piece, const uint8_t *data,
		     uint32_t len)
{
	return net->ops->tx_attach(net->port, frame, piece, data, len);
}

bool fg_net_passive(const struct fg_net *net)
{
	return net->cfg.passive;
}

struct fg_stats *fg_net_stats(struct fg_net *net)
{
	return net->st;
}

uint64_t net_now(const struct fg_net *net)
{
	return net->now;
}

int fg_net_ipv6_dad(const struct fg_net *net)
{
	return net->v6 ? net6_dad(net->v6) : 0;
}

unsigned fg_net_ipv6_mc_macs(const struct fg_net *net, uint8_t (*macs)[FG_ETH_ALEN],
			     unsigned max)
{
	return net->v6 ? net6_mc_macs(net->v6, macs, max) : 0;
}

bool fg_net_ipv6_link_local(const struct fg_net *net, uint8_t out[FG_IP6_ALEN])
{
	if (!net->v6)
		return false;
	net6_link_local(net->v6, out);
	return true;
}

bool fg_net_is_local_ipv6(const struct fg_net *net, const uint8_t *ip)
{
	return net->v6 && net6_is_local(net->v6, ip);
}

void fg_net_buf_ref(struct fg_net *net, void *handle)
{
	net->ops->buf_ref(net->port, handle);
}

void fg_net_buf_unref(struct fg_net *net, void *handle)
{
	net->ops->buf_unref(net->port, handle);
}

int fg_net_faults_parse(const char *spec, struct fg_net_faults *f)
{
	char buf[256], *save = NULL;

	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		static const char *const keys[] = { "rx-drop", "rx-dup", "rx-reorder",
						    "tx-drop", "tx-dup", "tx-reorder" };
		uint32_t *fields[] = { &f->rx_drop_ppm, &f->rx_dup_ppm, &f->rx_reorder_ppm,
				       &f->tx_drop_ppm, &f->tx_dup_ppm, &f->tx_reorder_ppm };
		char *eq = strchr(tok, '=');
		unsigned k;
		double pct;

		if (!eq)
			return -EINVAL;
		*eq++ = 0;
		if (!strcmp(tok, "seed")) {
			f->seed = strtoull(eq, NULL, 0);
			continue;
		}
		for (k = 0; k < FG_ARRAY_SIZE(keys) && strcmp(tok, keys[k]); k++)
			;
		pct = strtod(eq, NULL);
		if (k == FG_ARRAY_SIZE(keys) || pct < 0 || pct > 100)
			return -EINVAL;
		*fields[k] = (uint32_t)(pct * 10000.0 + 0.5);
	}
	return 0;
}

int fg_net_set_faults(struct fg_net *net, const struct fg_net_faults *f)
{
	if (f->rx_drop_ppm + f->rx_dup_ppm + f->rx_reorder_ppm > 1000000u ||
	    f->tx_drop_ppm + f->tx_dup_ppm + f->tx_reorder_ppm > 1000000u)
		return -EINVAL;
	net->f_rx = (struct fault_dir){ f->rx_drop_ppm, f->rx_dup_ppm, f->rx_reorder_ppm };
	net->f_tx = (struct fault_dir){ f->tx_drop_ppm, f->tx_dup_ppm, f->tx_reorder_ppm };
	net->rng = f->seed ? f->seed : 0x853c49e6748fea9bull;
	net->faults_on = f->rx_drop_ppm || f->rx_dup_ppm || f->rx_reorder_ppm ||
			 f->tx_drop_ppm || f->tx_dup_ppm || f->tx_reorder_ppm;
	return 0;
}

/* Which fault (0 none, 1 drop, 2 dup, 3 reorder) applies to one segment. */
static int fault_pick(struct fg_net *net, const struct fault_dir *d)
{
	uint32_t r = rng_ppm(net);

	if (r < d->drop)
		return 1;
	if (r < d->drop + d->dup)
		return 2;
	if (r < d->drop + d->dup + d->reorder)
		return 3;
	return 0;
}

/* ---------------------------------------------------------------- TX */

uint8_t *fg_net_tx_alloc(struct fg_net *net, uint32_t size, void **handle)
{
	uint8_t *p;

	if (net->cfg.passive)
		return NULL;	/* observe only: ARP, ICMP and TCP stay silent */
	p = net->ops->tx_alloc(net->port, size, handle);

	if (!p)
		fg_stats_inc(net->st, FG_CTR_NET_TX_NOBUF);
	return p;
}

void fg_net_tx_discard(struct fg_net *net, void *handle)
{
	net->ops->tx_free(net->port, handle);
}

void fg_net_flush(struct fg_net *net)
{
	unsigned n = net->n_txq, sent;

	if (!n)
		return;
	net->n_txq = 0;
	sent = net->ops->tx_burst(net->port, net->txq, n);
	if (sent < n)
		fg_stats_add(net->st, FG_CTR_NET_TX_PORT_DROP, n - sent);
}

/* Index of our address `ip`, or -1. */
static int addr_index(const struct fg_net *net, uint32_t ip)
{
	for (unsigned i = 0; i < net->cfg.n_ipv4; i++)
		if (net->cfg.ipv4[i] == ip)
			return (int)i;
	return -1;
}

/* The VLAN a frame we built leaves on: its source address's. */
static uint16_t tx_vid(const struct fg_net *net, const struct fg_tx_frame *f)
{
	uint16_t type;
	int i = -1;

	if (f->len < FG_ETH_HLEN + 20)
		return 0;
	type = fg_rd16(f->data + 12);
	if (type == FG_ETHERTYPE_IPV4)
		i = addr_index(net, fg_rdaddr(f->data + FG_ETH_HLEN + 12));
	else if (type == FG_ETHERTYPE_ARP && f->len >= FG_ETH_HLEN + 28)
		i = addr_index(net, fg_rdaddr(f->data + FG_ETH_HLEN + 14));
	return i < 0 ? 0 : net->cfg.vid[i] & 0xfff;
}

static void txq_push(struct fg_net *net, const struct fg_tx_frame *f)
{
	if (net->n_txq == FG_NET_TX_BURST)
		fg_net_flush(net);
	net->txq[net->n_txq] = *f;
	if (net->vlans && (net->txq[net->n_txq].vlan = tx_vid(net, f)) != 0)
		net->txq[net->n_txq].flags |= FG_TX_VLAN;
	net->n_txq++;
	fg_stats_inc(net->st, FG_CTR_NET_TX_FRAMES);
	fg_stats_add(net->st, FG_CTR_NET_TX_BYTES, f->len);
}

/* A second copy of a TX frame, for the duplicate fault. */
static void tx_dup(struct fg_net *net, const struct fg_tx_frame *f)
{
	struct fg_tx_frame c = *f;

	if (f->flags & FG_TX_CHAINED)
		return;	/* its pieces are the port's to copy: no second frame */
	c.data = net->ops->tx_alloc(net->port, f->len, &c.handle);
	if (!c.data)
		return;
	memcpy(c.data, f->data, f->len);
	txq_push(net, &c);
}

static void tx_queue(struct fg_net *net, const struct fg_tx_frame *fp, bool is_tcp)
{
	struct fg_tx_frame f = *fp;
	void *handle = f.handle;

	if (net->faults_on && is_tcp) {
		switch (fault_pick(net, &net->f_tx)) {
		case 1:
			fg_stats_inc(net->st, FG_CTR_NET_FAULT_TX_DROP);
			net->ops->tx_free(net->port, handle);
			return;
		case 2:
			fg_stats_inc(net->st, FG_CTR_NET_FAULT_TX_DUP);
			tx_dup(net, &f);
			break;
		case 3:
			if (!net->tx_held) {
				fg_stats_inc(net->st, FG_CTR_NET_FAULT_TX_REORDER);
				net->tx_held = true;
				net->tx_held_frame = f;
				return;
			}
			break;
		default:
			break;
		}
	}
	txq_push(net, &f);
	if (net->tx_held) {
		/* the held frame goes out behind this one */
		net->tx_held = false;
		txq_push(net, &net->tx_held_frame);
	}
}

void fg_net_tx_queue(struct fg_net *net, uint8_t *data, uint32_t len, void *handle,
		     uint32_t flags, bool is_tcp)
{
	tx_queue(net, &(struct fg_tx_frame){ data, len, flags, handle, 0, 0 }, is_tcp);
}

void fg_net_tx_queue_tso(struct fg_net *net, uint8_t *data, uint32_t len, void *handle,
			 uint32_t flags, uint16_t segsz)
{
	tx_queue(net, &(struct fg_tx_frame){ data, len, flags | FG_TX_TSO, handle, 0, segsz },
		 true);
}

/* ---------------------------------------------------------------- ARP (arp.c) */

/* Our address `ip` on VLAN `vid`? An address answers on its own VLAN only. */
bool net_local_on_vlan(const struct fg_net *net, uint32_t ip, uint16_t vid)
{
	int i = addr_index(net, ip);

	return i >= 0 && (net->cfg.vid[i] & 0xfff) == vid;
}

int fg_net_arp_static(struct fg_net *net, uint32_t ip, const uint8_t mac[FG_ETH_ALEN])
{
	return net_arp_static(net->arp, ip, mac);
}

int fg_net_arp_resolve(struct fg_net *net, uint32_t ip, uint8_t mac[FG_ETH_ALEN],
		       uint64_t now_ns)
{
	return net_arp_resolve(net->arp, ip, mac, now_ns);
}

int fg_net_nd_resolve(struct fg_net *net, const uint8_t *ip, uint8_t mac[FG_ETH_ALEN],
		      uint64_t now_ns)
{
	if (!net->v6)
		return -EHOSTUNREACH;
	return net6_nd_resolve(net->v6, ip, mac, now_ns);
}

/* ---------------------------------------------------------------- IPv4 */

/* A frame dropped for `live`, or in passive mode for `passive`: one
 * counter per drop, the names each mode's operators read. */
static void count_drop(struct fg_net *net, enum fg_counter live, enum fg_counter passive)
{
	fg_stats_inc(net->st, net->cfg.passive ? passive : live);
}

static void icmp_input(struct fg_net *net, const struct fg_rx_frame *f,
		       const uint8_t *ip, const uint8_t *l4, uint32_t l4_len)
{
	uint32_t src = fg_rdaddr(ip + 12), dst = fg_rdaddr(ip + 16);
	uint32_t flen = FG_ETH_HLEN + FG_IP_HLEN + l4_len;
	uint8_t *o;
	void *h;

	/* not an echo request: the kernel's (an error about its own
	 * connections, a reply to its ping) when there is a path */
	if (l4_len >= 1 && l4[0] != ICMP_ECHO_REQUEST && fg_net_to_kernel(net, f) == 0)
		return;
	if (l4_len < 8 || l4[0] != ICMP_ECHO_REQUEST ||
	    (!(f->flags & FG_RX_L4_CSUM_OK) && fg_csum_fold(fg_csum_add(0, l4, l4_len)) != 0)) {
		fg_stats_inc(net->st, FG_CTR_NET_ICMP_DROP);
		return;
	}
	if (flen > FG_ETH_HLEN + net->cfg.mtu) {
		fg_stats_inc(net->st, FG_CTR_NET_ICMP_DROP);
		return;
	}
	o = fg_net_tx_alloc(net, flen, &h);
	if (!o)
		return;
	/* RFC 792: echo reply = the request with type 0, checksum redone */
	fg_net_build_ipv4(o, f->data + 6, net->cfg.mac, dst, src, FG_IP_PROTO_ICMP,
			  l4_len, net->ip_id++, 0);
	memcpy(o + FG_ETH_HLEN + FG_IP_HLEN, l4, l4_len);
	o[FG_ETH_HLEN + FG_IP_HLEN] = ICMP_ECHO_REPLY;
	fg_wr16(o + FG_ETH_HLEN + FG_IP_HLEN + 2, 0);
	fg_wr16(o + FG_ETH_HLEN + FG_IP_HLEN + 2,
		fg_csum_fold(fg_csum_add(0, o + FG_ETH_HLEN + FG_IP_HLEN, l4_len)));
	fg_net_tx_queue(net, o, flen, h, 0, false);
	fg_stats_inc(net->st, FG_CTR_NET_ICMP_ECHO);
}

/* The references a received frame brought: its buffer's and, for a
 * merged packet, each piece's. */
static void frame_ref(struct fg_net *net, const struct fg_rx_frame *f)
{
	net->ops->buf_ref(net->port, f->handle);
	if (f->flags & FG_RX_MORE)
		for (unsigned i = 0; i < f->n_more; i++)
			net->ops->buf_ref(net->port, f->more[i].handle);
}

static void frame_unref(struct fg_net *net, const struct fg_rx_frame *f)
{
	net->ops->buf_unref(net->port, f->handle);
	if (f->flags & FG_RX_MORE)
		for (unsigned i = 0; i < f->n_more; i++)
			net->ops->buf_unref(net->port, f->more[i].handle);
}

/* A merged packet as the port may make one (net.h): untagged IPv4 with
 * TCP in it, both checksums verified before the merge, live mode, and an
 * IP total length that is exactly the frame and its pieces. */
static bool merged_ok(const struct fg_net *net, const struct fg_rx_frame *f)
{
	const uint32_t want = FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK;
	const uint8_t *ip = f->data + FG_ETH_HLEN;

	return !net->cfg.passive && f->n_more && (f->flags & want) == want &&
	       !(f->flags & FG_RX_VLAN) && f->len >= FG_ETH_HLEN + FG_IP_HLEN &&
	       fg_rd16(f->data + 12) == FG_ETHERTYPE_IPV4 && ip[9] == FG_IP_PROTO_TCP &&
	       fg_rd16(ip + 2) == f->len - FG_ETH_HLEN + fg_rx_more_len(f);
}

/* Validates an IPv4 header (RFC 791); returns the header length, or 0. */
static uint32_t ipv4_check(struct fg_net *net, const struct fg_rx_frame *f,
			   const uint8_t *ip, uint32_t avail, uint32_t *tot)
{
	uint32_t hl;

	if (avail < FG_IP_HLEN || (ip[0] >> 4) != 4 || (hl = (ip[0] & 15u) * 4) < FG_IP_HLEN ||
	    avail < hl || (*tot = fg_rd16(ip + 2)) < hl || *tot > avail) {
		count_drop(net, FG_CTR_NET_IP_BAD, FG_CTR_PASSIVE_BAD);
		return 0;
	}
	if (!(f->flags & FG_RX_IP_CSUM_OK) && fg_csum_fold(fg_csum_add(0, ip, hl)) != 0) {
		fg_stats_inc(net->st, FG_CTR_NET_IP_BAD_CSUM);
		return 0;
	}
	if (!net->cfg.passive && !net_local_on_vlan(net, fg_rdaddr(ip + 16), net->rx_vid)) {
		fg_stats_inc(net->st, FG_CTR_NET_IP_NOT_OURS);
		return 0;
	}
	/* MF set or a non-zero offset: a fragment */
	if (fg_rd16(ip + 6) & 0x3fff) {
		count_drop(net, FG_CTR_NET_IP_FRAGMENT, FG_CTR_PASSIVE_BAD);
		return 0;
	}
	if (hl > FG_IP_HLEN)
		fg_stats_inc(net->st, FG_CTR_NET_IP_OPTIONS);
	return hl;
}

/* Returns true when the segment was consumed by a fault (dropped/held). */
static bool rx_fault(struct fg_net *net, struct fg_rx_frame *f)
{
	switch (fault_pick(net, &net->f_rx)) {
	case 1:
		fg_stats_inc(net->st, FG_CTR_NET_FAULT_RX_DROP);
		frame_unref(net, f);
		return true;
	case 2:
		/* processed twice: the second pass needs its own references */
		fg_stats_inc(net->st, FG_CTR_NET_FAULT_RX_DUP);
		frame_ref(net, f);
		process_frame(net, f, false);
		return false;
	case 3:
		if (net->rx_held || (f->flags & FG_RX_MORE))
			return false;
		fg_stats_inc(net->st, FG_CTR_NET_FAULT_RX_REORDER);
		net->rx_held = true;
		net->rx_held_frame = *f;
		return true;
	default:
		return false;
	}
}

static void rx_release_held(struct fg_net *net)
{
	if (net->rx_held) {
		struct fg_rx_frame h = net->rx_held_frame;

		net->rx_held = false;
		process_frame(net, &h, false);
	}
}

/* The handler of `proto` takes the packet; false only when the fault knob
 * consumed it (dropped, or held with its reference). The caller checked
 * that the protocol has a handler. */
bool net_l4_input(struct fg_net *net, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
		  uint8_t proto, const uint8_t *l4, uint32_t len, bool faults)
{
	const struct l4_handler *h = &net->l4[net->l4_slot[proto] - 1];

	/* with an exception path, what the handler does not want is the
	 * kernel's (it takes its own reference) */
	if (net->cfg.kernel_rate && h->ops->wants && !h->ops->wants(h->ctx, l3, l4, len)) {
		fg_net_to_kernel(net, f);
		return true;
	}
	if (faults && net->faults_on && rx_fault(net, f))
		return false;
	h->ops->input(h->ctx, f, l3, l4, len, net->now);
	if (faults)
		rx_release_held(net);
	return true;
}

bool net_l4_has(const struct fg_net *net, uint8_t proto)
{
	return net->l4_slot[proto] != 0;
}

bool net_l4_icmp_error(struct fg_net *net, uint8_t proto, const struct fg_net_icmp_err *e)
{
	unsigned slot = net->l4_slot[proto];
	const struct l4_handler *h;

	if (!slot || !(h = &net->l4[slot - 1])->ops->icmp_error)
		return false;
	h->ops->icmp_error(h->ctx, e, net->now);
	return true;
}

/* The IPv4 packet after `l2` octets of link header. */
static void ipv4_input(struct fg_net *net, struct fg_rx_frame *f, uint32_t l2, bool faults)
{
	uint8_t *ip = f->data + l2;
	uint32_t tot = 0, hl;

	fg_stats_inc(net->st, FG_CTR_NET_IP_RX);
	hl = ipv4_check(net, f, ip, f->len - l2 + fg_rx_more_len(f), &tot);
	if (!hl)
		goto out_unref;
	if (net->l4_slot[ip[9]]) {
		struct fg_net_l3 l3 = { AF_INET, ip, ip + 12, ip + 16 };

		if (!net_l4_input(net, f, &l3, ip[9], ip + hl, tot - hl, faults))
			return;	/* consumed by the fault; a held frame keeps its reference */
	} else if (ip[9] == FG_IP_PROTO_ICMP && !net->cfg.passive) {
		icmp_input(net, f, ip, ip + hl, tot - hl);
	} else if (net->cfg.passive || fg_net_to_kernel(net, f) != 0) {
		count_drop(net, FG_CTR_NET_IP_PROTO, FG_CTR_PASSIVE_NOT_TCP);
	}
out_unref:
	frame_unref(net, f);
}

/* The link layers' answer when the frame's reference was taken (the
 * fault knob held or dropped it) */
#define L2_TAKEN UINT32_MAX

/* Passive mode's link layer (see the head comment): the length of the
 * link header before an IPv4 packet, or 0 (counted, or an IPv6 packet
 * handed on) for anything else. */
static uint32_t observed_l2(struct fg_net *net, struct fg_rx_frame *f)
{
	uint32_t l2 = FG_ETH_HLEN;
	uint16_t type = fg_rd16(f->data + 12);

	if (type == FG_ETHERTYPE_VLAN && f->len >= FG_ETH_HLEN + FG_VLAN_HLEN) {
		type = fg_rd16(f->data + 16);
		l2 += FG_VLAN_HLEN;
	}
	if (type != FG_ETHERTYPE_IPV4 && type != FG_ETHERTYPE_IPV6) {
		fg_stats_inc(net->st, FG_CTR_PASSIVE_NOT_TCP);
		return 0;
	}
	f->flags |= FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK;
	if (type == FG_ETHERTYPE_IPV6)
		return net6_observe(net, f, l2) ? L2_TAKEN : 0;
	return l2;
}

/* A VLAN we have an address on (0: untagged)? */
static bool vlan_known(const struct fg_net *net, uint16_t vid)
{
	for (unsigned i = 0; i < net->cfg.n_ipv4; i++)
		if ((net->cfg.vid[i] & 0xfff) == vid)
			return true;
	return false;
}

/* The live link layer: the length of the link header (Ethernet, and an
 * 802.1Q tag the port left in) before an IPv4 packet, or 0 when the frame
 * was something else (handled or counted), or L2_TAKEN. Sets the frame's
 * VLAN. */
static uint32_t link_input(struct fg_net *net, struct fg_rx_frame *f, bool faults)
{
	const uint8_t *d = f->data;
	uint32_t l2 = FG_ETH_HLEN;
	uint16_t type;

	/* ours, broadcast or multicast (group bit) */
	if (!(d[0] & 1) && memcmp(d, net->cfg.mac, FG_ETH_ALEN) != 0) {
		fg_stats_inc(net->st, FG_CTR_NET_RX_NOT_OURS);
		return 0;
	}
	type = fg_rd16(d + 12);
	net->rx_vid = f->flags & FG_RX_VLAN ? f->vlan & 0xfff : 0;
	if (type == FG_ETHERTYPE_VLAN && !(f->flags & FG_RX_VLAN)) {
		if (f->len < FG_ETH_HLEN + FG_VLAN_HLEN) {
			fg_stats_inc(net->st, FG_CTR_NET_RX_RUNT);
			return 0;
		}
		net->rx_vid = fg_rd16(d + 14) & 0xfff;
		type = fg_rd16(d + 16);
		l2 += FG_VLAN_HLEN;
	}
	if (net->rx_vid && !vlan_known(net, net->rx_vid)) {
		fg_stats_inc(net->st, FG_CTR_NET_RX_VLAN_UNKNOWN);
		return 0;
	}
	if (type == FG_ETHERTYPE_IPV4)
		return l2;
	if (type == FG_ETHERTYPE_ARP)
		net_arp_input(net->arp, f, l2, net->rx_vid);
	else if (type == FG_ETHERTYPE_IPV6 && net->v6 && !net->rx_vid)
		/* IPv6 addresses are untagged (docs/dataplane.md, "VLANs") */
		return net6_input(net->v6, f, l2, faults) ? L2_TAKEN : 0;
	else if (fg_net_to_kernel(net, f) == 0)
		;	/* other ethertypes: the kernel's, when it has a path */
	else if (type == FG_ETHERTYPE_IPV6)
		fg_stats_inc(net->st, FG_CTR_NET_RX_IPV6);
	else
		fg_stats_inc(net->st, FG_CTR_NET_RX_ETHERTYPE);
	return 0;
}

/* One frame; drops the reference it was given. */
static void process_frame(struct fg_net *net, struct fg_rx_frame *f, bool faults)
{
	uint32_t l2;

	if (f->len < FG_ETH_HLEN) {
		count_drop(net, FG_CTR_NET_RX_RUNT, FG_CTR_PASSIVE_NOT_TCP);
		goto out_unref;
	}
	if ((f->flags & FG_RX_MORE) && !merged_ok(net, f)) {
		fg_stats_inc(net->st, FG_CTR_NET_RX_MERGED_BAD);
		goto out_unref;
	}
	l2 = net->cfg.passive ? observed_l2(net, f) : link_input(net, f, faults);
	if (l2 == L2_TAKEN)
		return;
	if (!l2)
		goto out_unref;
	ipv4_input(net, f, l2, faults);	/* drops the references */
	return;
out_unref:
	frame_unref(net, f);
}

unsigned fg_net_rx(struct fg_net *net, struct fg_rx_frame *frames, unsigned n,
		   uint64_t now_ns)
{
	net->now = now_ns;
	for (unsigned i = 0; i < n; i++) {
		fg_stats_inc(net->st, FG_CTR_NET_RX_FRAMES);
		fg_stats_add(net->st, FG_CTR_NET_RX_BYTES, frames[i].len + fg_rx_more_len(&frames[i]));
		process_frame(net, &frames[i], true);
	}
	l4_end_of_burst(net, now_ns);
	fg_net_flush(net);
	return n;
}

/* ------------------------------------------------------------ reload */

static void ipv4_put(struct fg_net *net, uint32_t ip, uint8_t plen, uint16_t vid, uint64_t leave)
{
	unsigned k = net->cfg.n_ipv4++;

	net->cfg.ipv4[k] = ip;
	net->cfg.plen[k] = plen;
	net->cfg.vid[k] = vid;
	net->leave_at[k] = leave;
	net->vlans |= (vid & 0xfff) != 0;
}

int fg_net_set_ipv4(struct fg_net *net, const uint32_t *ipv4, const uint8_t *plen,
		    const uint16_t *vid, unsigned n, uint64_t leave_ns)
{
	struct fg_net_config old = net->cfg;
	uint64_t old_leave[FG_NET_MAX_ADDRS];

	if (n > FG_NET_MAX_ADDRS || net->cfg.passive)
		return -EINVAL;
	memcpy(old_leave, net->leave_at, sizeof(old_leave));
	net->cfg.n_ipv4 = 0;
	net->vlans = false;
	for (unsigned i = 0; i < n; i++)
		ipv4_put(net, ipv4[i], plen[i], vid[i], 0);
	/* the removed ones leave later, in the room that is left */
	for (unsigned j = 0; j < old.n_ipv4 && net->cfg.n_ipv4 < FG_NET_MAX_ADDRS; j++) {
		bool kept = false;

		for (unsigned i = 0; i < n && !kept; i++)
			kept = ipv4[i] == old.ipv4[j];
		if (!kept && (!old_leave[j] || old_leave[j] > net->now))
			ipv4_put(net, old.ipv4[j], old.plen[j], old.vid[j],
				 old_leave[j] ? old_leave[j] : net->now + leave_ns);
	}
	return 0;
}

bool fg_net_ipv4_leaving(const struct fg_net *net, uint32_t ip)
{
	for (unsigned i = 0; i < net->cfg.n_ipv4; i++)
		if (net->cfg.ipv4[i] == ip)
			return net->leave_at[i] != 0;
	return false;
}

/* Addresses whose leaving time has come are no longer ours. */
static void ipv4_expire(struct fg_net *net)
{
	for (unsigned i = 0; i < net->cfg.n_ipv4;) {
		unsigned last = net->cfg.n_ipv4 - 1;

		if (!net->leave_at[i] || net->leave_at[i] > net->now) {
			i++;
			continue;
		}
		net->cfg.ipv4[i] = net->cfg.ipv4[last];
		net->cfg.plen[i] = net->cfg.plen[last];
		net->cfg.vid[i] = net->cfg.vid[last];
		net->leave_at[i] = net->leave_at[last];
		net->cfg.n_ipv4--;
	}
}

void fg_net_poll(struct fg_net *net, uint64_t now_ns)
{
	net->now = now_ns;
	if (net->cfg.n_ipv4)
		ipv4_expire(net);
	/* a segment held back by the reorder fault goes in now */
	rx_release_held(net);
	if (net->v6)
		net6_poll(net->v6, now_ns);
	for (unsigned i = 0; i < net->n_l4; i++)
		if (net->l4[i].ops->timers)
			net->l4[i].ops->timers(net->l4[i].ctx, now_ns);
	l4_end_of_burst(net, now_ns);
	if (net->tx_held) {
		net->tx_held = false;
		txq_push(net, &net->tx_held_frame);
	}
	fg_net_flush(net);
}

uint64_t fg_net_next_deadline(const struct fg_net *net)
{
	uint64_t next = UINT64_MAX;

	if (net->rx_held || net->tx_held || net->n_txq)
		return net->now;
	if (net->v6)
		next = net6_next_deadline(net->v6);
	for (unsigned i = 0; i < net->n_l4; i++)
		if (net->l4[i].ops->next_deadline)
			next = FG_MIN(next, net->l4[i].ops->next_deadline(net->l4[i].ctx));
	return next;
}
