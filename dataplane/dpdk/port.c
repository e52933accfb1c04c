/* SPDX-License-Identifier: MIT */
/*
 * port.c — the one ethdev port: queues, offloads, the mempool and its
 * budget, and the port ops (net.h) over mbufs.
 *
 * Queues: rx-queues RX queues (worker i polls queues i, i + W, ...) and
 * one TX queue per worker. With more than one RX queue, RSS on the TCP
 * 4-tuple of either IP version is asked for when the port lists those
 * hash types (a symmetric key, so both directions of a connection hash
 * alike: tests/unit/test_rss.c checks it with rte_softrss), and the start-up
 * log says "(RSS)"; a port that lists none is used as it is. net_tap lists
 * them and takes the request, but no hash of ours fills its queues: the
 * kernel's tun driver picks the queue for a frame (its own flow hash, then
 * the queue the flow's replies were written on, which is the replying
 * worker's). Either way every segment of a connection reaches one worker.
 *
 * Offloads are used when the port has them, and done in software when it
 * has not: VLAN tag strip and insert when [dataplane] vlan is set (strip
 * not with an exception path: the kernel gets frames as they came, tags
 * and all), IPv4 + TCP receive checksums (frames are marked verified),
 * IPv4 + TCP transmit checksums, over IPv6 too (the net module then leaves
 * them to the port), receive timestamps in passive mode (--clock capture), and
 * receive interrupts (an idle worker blocks on them, worker.c; without
 * them it sleeps in short steps).
 *
 * Mempool budget: every worker's TCP may keep rx-segs mbufs queued and its
 * engine may hold max-holds mbufs for the sink; the RX and TX rings, the
 * per-lcore caches and the TX frames in flight come on top. port_budget()
 * sizes the per-worker shares so that the sum never exceeds the pool: a
 * slow sink closes windows (per-connection quota, the TCP's hold
 * accounting), engine holds beyond their share are copied instead, and
 * the RX rings can always be refilled.
 *
 * MTU: the port's own, or [dataplane] mtu (jumbo frames, up to 9000):
 * asked of the port at configure and set on it (a tap sets its kernel
 * side too); every mbuf's data room then holds one whole frame, since the
 * modules take single-segment frames only. Fewer, larger frames are what
 * a port's per-frame costs (a tap's system call and SIGIO, a NIC's
 * descriptors) are divided by.
 *
 * GRO ([dataplane] gro, docs/dataplane.md "Large articles"): after an RX
 * burst, DPDK's GRO library (lightweight mode: within the burst, no table
 * kept) merges in-order TCP/IPv4 segments of one flow (same addresses,
 * ports, ACK number and options; ACK flag only, so a PSH or FIN segment
 * stays on its own) into a chain of mbufs, each run of such segments
 * apart so that nothing changes places (gro_burst). Only segments whose checksums
 * are known good are offered to it — the port's offload said so, or they
 * are verified here, once, instead of in net — because a merged packet's
 * header (its total length) no longer matches its checksums: net trusts
 * the flags. DPDK 22.11's GRO knows no TCP over IPv6: IPv6 passes as it
 * came. The chain is then taken apart: the head mbuf is the frame, every
 * further mbuf a piece (FG_RX_MORE, net.h), each with its own reference,
 * so TCP keeps and releases pieces one by one as before. Counted:
 * dp_gro_segs_merged (segments appended to another), dp_gro_packets. Not
 * with an exception path: the kernel would get the merged packet with a
 * stale header, so gro is left off there (said at start).
 *
 * Exception path ([dataplane] exception-path tap): a second port, the tap
 * DP_EXC_PORT, with one RX and one TX queue per worker on the same pool.
 * Worker i sends what is not floodgate's on its TX queue i (to_kernel:
 * the frame's mbuf with one more reference, no copy) and polls its RX
 * queue i for the kernel's frames, which it sends out on its own TX queue
 * of the port as they are (the kernel built them, MAC and all).
 *
 * Buffers: an fg_rx_frame's handle is its mbuf; a reference is
 * rte_mbuf_refcnt_update(+1), a release rte_pktmbuf_free() (which frees at
 * the last reference). Only single-segment mbufs reach the modules (GRO's
 * chains are taken apart first).
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_gro.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>

#include "dp.h"
#include "rss.h"
#include "floodgate/log.h"
#include "floodgate/mbuf.h"
#include "floodgate/wire.h"

#define POOL_CACHE 256
#define TX_IN_FLIGHT 128	/* frames a worker may have between alloc and ring */
#define MIN_SHARE 512		/* mbufs a worker needs at the very least */
#define GRO_TCP_FLAGS 0x10	/* ACK alone: the only segments DPDK 22.11's GRO merges */

/* the symmetric Toeplitz key (rss.h) */
static uint8_t rss_key[DP_RSS_KEY_LEN] = DP_RSS_KEY_INIT;

/* ------------------------------------------------------------ port ops */

static uint8_t *mb_tx_alloc(void *port, uint32_t size, void **h)
{
	return fg_mbuf_tx_alloc(((struct dp_txq *)port)->pool, size, h);
}

void dp_tx_drain(struct dp_txq *q)
{
	uint16_t sent;

	if (!q->n_pending) {
		if (q->lacp)	/* the bond sends the LACPDUs it has queued */
			rte_eth_tx_burst(q->port, q->queue, q->pending, 0);
		return;
	}
	sent = rte_eth_tx_burst(q->port, q->queue, q->pending, (uint16_t)q->n_pending);
	if (sent == 0 && ++q->stuck >= DP_TX_STUCK_TRIES) {
		/* a frame the port will never take (a PMD stops at the
		 * first it refuses): drop it rather than block the queue;
		 * TCP retransmits what it carried */
		fg_stats_inc(q->st, FG_CTR_DP_TX_REFUSED);
		rte_pktmbuf_free(q->pending[0]);
		sent = 1;
	}
	if (sent == 0)
		return;
	q->stuck = 0;
	q->n_pending -= sent;
	memmove(q->pending, q->pending + sent, q->n_pending * sizeof(q->pending[0]));
}

/* Keep m in order behind what waits; false (m freed) when the list is
 * full even after a send. */
static bool txq_keep(struct dp_txq *q, struct rte_mbuf *m)
{
	if (q->n_pending == DP_TX_PENDING)
		dp_tx_drain(q);
	if (q->n_pending == DP_TX_PENDING) {
		rte_pktmbuf_free(m);
		return false;
	}
	q->pending[q->n_pending++] = m;
	return true;
}

/* Frames go out in order: what waits from before goes first. What the ring
 * cannot take now is kept (DP_TX_PENDING of them) and retried from the
 * worker's loop; beyond that it is dropped (TCP retransmits). */
static unsigned mb_tx_burst(void *port, struct fg_tx_frame *f, unsigned n)
{
	struct dp_txq *q = port;
	unsigned dropped = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = f[i].handle;

		fg_mbuf_tx_lengths(m, f[i].len, f[i].flags & FG_TX_CHAINED);
		if (f[i].flags & FG_TX_TSO) {
			fg_mbuf_tx_tso(m, f[i].flags & FG_TX_IPV6, f[i].tso_segsz,
				       q->tso_seg_frame_max);
		} else if (f[i].flags & FG_TX_CSUM_OFFLOAD) {
			/* DPDK's convention: header lengths, and the TCP
			 * checksum field holding the pseudo-header sum; an
			 * IPv6 header has no checksum of its own */
			bool v6 = f[i].flags & FG_TX_IPV6;

			m->l2_len = FG_ETH_HLEN;
			m->l3_len = v6 ? FG_IP6_HLEN : (f[i].data[FG_ETH_HLEN] & 15u) * 4u;
			m->l4_len = (f[i].data[FG_ETH_HLEN + m->l3_len + 12] >> 4) * 4u;
			m->ol_flags |= v6 ? RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM
					  : RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
					    RTE_MBUF_F_TX_TCP_CKSUM;
		}
		if (f[i].flags & FG_TX_VLAN) {
			m->vlan_tci = f[i].vlan;
			if (q->vlan_insert) {
				m->ol_flags |= RTE_MBUF_F_TX_VLAN;
			} else if (rte_vlan_insert(&m) != 0) {
				rte_pktmbuf_free(m);
				dropped++;
				continue;
			}
			/* software: rte_vlan_insert also moved l2_len past the tag,
			 * where the checksum offload looks for the IPv4 header */
		}
		if (!txq_keep(q, m))
			dropped++;
	}
	dp_tx_drain(q);
	if (q->n_pending)
		fg_stats_inc(q->st, FG_CTR_DP_TX_RING_FULL);
	return n - dropped;
}

/* Not floodgate's: the same mbuf, one more reference, to the kernel. */
static int mb_to_kernel(void *port, const struct fg_rx_frame *f)
{
	struct dp_txq *q = port;
	struct rte_mbuf *m = f->handle;

	if (q->exc_port < 0 || (f->flags & FG_RX_MORE))
		return -ENOTSUP;	/* no path, or a merged packet (no GRO with a path) */
	rte_mbuf_refcnt_update(m, 1);
	if (rte_eth_tx_burst((uint16_t)q->exc_port, q->queue, &m, 1) == 1)
		return 0;
	rte_pktmbuf_free(m);
	return -EBUSY;
}

unsigned dp_exc_rx(struct dp_txq *q, uint16_t exc_port, struct fg_stats *st)
{
	struct rte_mbuf *mb[DP_BURST];
	uint16_t n = rte_eth_rx_burst(exc_port, q->queue, mb, DP_BURST);

	for (uint16_t i = 0; i < n; i++) {
		mb[i]->ol_flags = 0;	/* the kernel's frames are finished */
		if (!txq_keep(q, mb[i]))
			fg_stats_inc(st, FG_CTR_NET_TX_PORT_DROP);
	}
	if (n) {
		fg_stats_add(st, FG_CTR_DP_FROM_KERNEL, n);
		dp_tx_drain(q);
	}
	return n;
}

static int mb_tx_attach(void *port, void *frame, void *piece, const uint8_t *data,
			uint32_t len)
{
	return fg_mbuf_tx_attach(((struct dp_txq *)port)->ind_pool, frame, piece, data, len);
}

static struct fg_buf_sum *mb_buf_sum(void *port, void *h)
{
	return fg_mbuf_buf_sum(((struct dp_txq *)port)->sum_off, h);
}

const struct fg_port_ops dp_port_ops = {
	.buf_ref = fg_mbuf_ref,
	.buf_unref = fg_mbuf_unref,
	.tx_alloc = mb_tx_alloc,
	.tx_free = fg_mbuf_unref,
	.tx_burst = mb_tx_burst,
	.to_kernel = mb_to_kernel,
	.tx_attach = mb_tx_attach,
	.buf_sum = mb_buf_sum,
};

/* A capture time in ns since the epoch. The mbuf timestamp's unit is the
 * port's own; captures give µs (net_pcap in DPDK 22.11) or ns, told
 * apart by magnitude: 10^17 ns is 1973, 10^17 µs is far beyond 2100. */
static uint64_t capture_ns(uint64_t v)
{
	return v < 100000000000000000ull ? v * 1000ull : v;
}

/* Are m's checksums good? The port's word when it gave one, else
 * verified in software and recorded in ol_flags as the port would have.
 * With sum_off >= 0 the payload's sum is kept with m as TCP keeps it
 * (tcp_input.c checksum_ok; cleared when the port verified it): GRO
 * candidates never reach TCP's own check. */
static bool csums_good(struct rte_mbuf *m, const uint8_t *ip, uint32_t hl, uint32_t tot,
		       uint32_t doff, int sum_off)
{
	const uint64_t mask = RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const uint64_t good = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	uint64_t ip_ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4_ck = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	struct fg_buf_sum *bs = fg_mbuf_buf_sum(sum_off, m);
	const uint8_t *pl = ip + hl + doff;
	uint32_t payload, sum;

	if (ip_ck != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	    (ip_ck != RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN || fg_csum_fold(fg_csum_add(0, ip, hl)) != 0))
		return false;
	if (l4_ck == RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		if (bs)
			bs->start = NULL;
	} else {
		if (l4_ck != RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN)
			return false;
		payload = fg_csum_add(0, pl, tot - hl - doff);
		sum = fg_csum_add(fg_ipv4_pseudo_sum(fg_rdaddr(ip + 12), fg_rdaddr(ip + 16),
						     FG_IP_PROTO_TCP, tot - hl),
				  ip + hl, doff);
		if (fg_csum_fold(fg_csum_combine(sum, payload)) != 0)
			return false;
		if (bs)
			*bs = (struct fg_buf_sum){ pl, tot - hl - doff, payload, NULL, 0 };
	}
	m->ol_flags = (m->ol_flags & ~mask) | good;
	return true;
}

/* May GRO take m? One untagged, unfragmented TCP/IPv4 segment with
 * payload, the ACK flag alone (what DPDK 22.11's GRO merges) and good
 * checksums; its packet type and header lengths are set for the library. */
static bool gro_candidate(struct rte_mbuf *m, int sum_off)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *ip = d + FG_ETH_HLEN;
	uint32_t hl, tot, doff;

	m->packet_type = 0;
	if (m->nb_segs != 1 || (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) ||
	    m->data_len < FG_ETH_HLEN + FG_IP_HLEN + FG_TCP_HLEN ||
	    fg_rd16(d + 12) != FG_ETHERTYPE_IPV4 || (ip[0] >> 4) != 4 ||
	    ip[9] != FG_IP_PROTO_TCP || (fg_rd16(ip + 6) & 0x3fff))
		return false;
	hl = (ip[0] & 15u) * 4;
	tot = fg_rd16(ip + 2);
	if (hl < FG_IP_HLEN || tot < hl + FG_TCP_HLEN || FG_ETH_HLEN + tot > m->data_len)
		return false;
	doff = (uint32_t)(ip[hl + 12] >> 4) * 4;
	if (doff < FG_TCP_HLEN || hl + doff >= tot || ip[hl + 13] != GRO_TCP_FLAGS ||
	    !csums_good(m, ip, hl, tot, doff, sum_off))
		return false;
	m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP;
	m->l2_len = FG_ETH_HLEN;
	m->l3_len = hl;
	m->l4_len = doff;
	return true;
}

/* Merge the burst's segments (see the head comment); returns the packets
 * left, merged ones among them as mbuf chains, in the order they came.
 * The library returns what it merged first and what it would not take
 * after, so it is given runs of candidates only: a PSH segment (or any
 * other) between two runs keeps its place. Out of order, the merged
 * packets after it would fill TCP's out-of-order list piece by piece. */
static unsigned gro_burst(struct rte_mbuf **m, unsigned n, int sum_off)
{
	const struct rte_gro_param param = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = DP_BURST,
		.max_item_per_flow = DP_BURST,
	};
	unsigned out = 0, start = 0;

	for (unsigned i = 0; i <= n; i++) {
		unsigned k;

		if (i < n && gro_candidate(m[i], sum_off))
			continue;
		/* the run m[start, i), merged in place, then what ended it */
		k = i - start;
		if (k >= 2)
			k = rte_gro_reassemble_burst(m + start, (uint16_t)k, &param);
		memmove(m + out, m + start, k * sizeof(*m));
		out += k;
		if (i < n)
			m[out++] = m[i];
		start = i + 1;
	}
	return out;
}

/* Take a merged chain apart: the head alone, its other segments as the
 * frame's pieces (appended to pc[*npc]). */
static void gro_unchain(struct rte_mbuf *m, struct fg_rx_frame *f, struct fg_rx_piece *pc,
			unsigned *npc, struct fg_stats *st)
{
	struct rte_mbuf *seg = m->next;

	fg_stats_inc(st, FG_CTR_DP_GRO_PACKETS);
	fg_stats_add(st, FG_CTR_DP_GRO_SEGS_MERGED, m->nb_segs - 1u);
	f->flags |= FG_RX_MORE;
	f->more = pc + *npc;
	f->n_more = (uint16_t)(m->nb_segs - 1);
	m->next = NULL;
	m->nb_segs = 1;
	m->pkt_len = m->data_len;
	while (seg) {
		struct rte_mbuf *next = seg->next;

		seg->next = NULL;
		seg->nb_segs = 1;
		seg->pkt_len = seg->data_len;
		pc[(*npc)++] = (struct fg_rx_piece){ rte_pktmbuf_mtod(seg, uint8_t *),
						     seg->data_len, seg };
		seg = next;
	}
}

unsigned dp_rx_frames(const struct dp *dp, struct rte_mbuf **m, unsigned n,
		      struct fg_rx_frame *fr, struct fg_rx_piece *pc, uint64_t *ts,
		      struct fg_stats *st)
{
	unsigned k = 0, npc = 0, whole = 0;

	for (unsigned i = 0; i < n; i++) {
		if (m[i]->nb_segs != 1) {
			/* the modules see one contiguous frame; the mbufs'
			 * data room holds one frame of the port's MTU, so
			 * only a frame over it lands here */
			fg_stats_inc(st, FG_CTR_DP_RX_MULTISEG);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		m[whole++] = m[i];
	}
	n = dp->gro && pc ? gro_burst(m, whole, dp->sum_off) : whole;
	for (unsigned i = 0; i < n; i++) {
		uint64_t ol = m[i]->ol_flags;

		fr[k].data = rte_pktmbuf_mtod(m[i], uint8_t *);
		fr[k].len = m[i]->data_len;
		fr[k].flags = 0;
		if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
			fr[k].flags |= FG_RX_IP_CSUM_OK;
		if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
			fr[k].flags |= FG_RX_L4_CSUM_OK;
		fr[k].handle = m[i];
		fr[k].vlan = 0;
		/* a GRO candidate's sums (its pieces' too) are kept by csums_good */
		if (dp->gro && pc && dp->sum_off >= 0 && m[i]->packet_type)
			fr[k].flags |= FG_RX_SUM_KEPT;
		if (ol & RTE_MBUF_F_RX_VLAN_STRIPPED) {
			/* the port took the tag off (VLAN strip offload) */
			fr[k].flags |= FG_RX_VLAN;
			fr[k].vlan = m[i]->vlan_tci;
		}
		if (ts)
			ts[k] = dp->ts_offset >= 0 && (ol & dp->ts_flag) ?
				capture_ns(*RTE_MBUF_DYNFIELD(m[i], dp->ts_offset,
							      rte_mbuf_timestamp_t *)) : 0;
		if (m[i]->nb_segs != 1)
			gro_unchain(m[i], &fr[k], pc, &npc, st);
		k++;
	}
	return k;
}

/* ------------------------------------------------------------ set-up */

static int find_port(struct dp *dp, const char *port)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(port, ",");
	uint16_t id;

	if (rte_eth_dev_count_avail() == 0) {
		FG_LOG_ERR(DP, "no port: %s did not probe (see DPDK's messages above)", port);
		return -ENODEV;
	}
	snprintf(name, sizeof(name), "%.*s", (int)FG_MIN(n, sizeof(name) - 1), port);
	if (rte_eth_dev_get_port_by_name(name, &id) == 0) {
		dp->port_id = id;
		return 0;
	}
	if (rte_eth_dev_count_avail() == 1) {
		RTE_ETH_FOREACH_DEV(id) {
			dp->port_id = id;
			return 0;
		}
	}
	FG_LOG_ERR(DP, "port %s not found among %u ports", name, rte_eth_dev_count_avail());
	return -ENODEV;
}

static void offloads(struct dp *dp, const struct rte_eth_dev_info *di, struct rte_eth_conf *conf)
{
	const uint64_t rx_ck = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	const uint64_t tx_ck = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;

	dp->rx_csum = (di->rx_offload_capa & rx_ck) == rx_ck;
	dp->tx_csum = !dp->passive && (di->tx_offload_capa & tx_ck) == tx_ck;
	if (dp->rx_csum)
		conf->rxmode.offloads |= rx_ck;
	if (dp->tx_csum)
		conf->txmode.offloads |= tx_ck;
	/* chained TX frames: TCP's pieces sent by reference, within both of
	 * the port's limits on a frame's segments (0: none stated) */
	dp->tx_segs = 1;
	if (!dp->passive && (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		unsigned lim = DP_TX_SEGS_MAX;

		if (di->tx_desc_lim.nb_seg_max)
			lim = FG_MIN(lim, di->tx_desc_lim.nb_seg_max);
		if (di->tx_desc_lim.nb_mtu_seg_max)
			lim = FG_MIN(lim, di->tx_desc_lim.nb_mtu_seg_max);
		dp->tx_segs = FG_MAX(lim, 1u);
		if (dp->tx_segs > 1)
			conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	}
	/* TSO: TCP frames of many segments, cut by the port (net_tap does
	 * it in its driver); with the IPv4 and TCP checksum offloads it
	 * implies, and not through a VLAN tag inserted in software */
	dp->tso = !dp->passive && dp->cfg->dp_tso &&
		  (di->tx_offload_capa & (RTE_ETH_TX_OFFLOAD_TCP_TSO | tx_ck)) ==
			  (RTE_ETH_TX_OFFLOAD_TCP_TSO | tx_ck) &&
		  !(dp->cfg->n_dp_vlan && !(di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT));
	if (dp->tso)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO | tx_ck;
	dp->tso_l2_in_mtu = dp->tso && !strcmp(di->driver_name, "net_tap");
	/* received payload keeps its sum for TCP to derive checksums from
	 * (net.h struct fg_buf_sum): only where TCP checksums in software and
	 * sends at all (passive and shadow mode send nothing) */
	dp->sum_off = dp->tx_csum || dp->passive ? -1 : fg_mbuf_sum_register();
	if (!dp->tx_csum && !dp->passive && dp->sum_off < 0)
		FG_LOG_WARN(DP, "no mbuf field for payload sums (%s): TCP reads what it sends "
			    "by reference to checksum it", rte_strerror(rte_errno));
	dp->vlan_strip = dp->cfg->n_dp_vlan && !dp->passive &&
			 dp->cfg->dp_exception == FG_EXCEPTION_NONE &&
			 (di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP);
	dp->vlan_insert = dp->cfg->n_dp_vlan && !dp->passive &&
			  (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT);
	if (dp->vlan_strip)
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
	if (dp->vlan_insert)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
	dp->gro = dp->cfg->dp_gro && !dp->passive &&
		  dp->cfg->dp_exception == FG_EXCEPTION_NONE;
	if (dp->cfg->dp_gro && dp->cfg->dp_exception != FG_EXCEPTION_NONE)
		FG_LOG_INFO(DP, "gro off: the exception path takes frames as they came");
	if (dp->o.capture_clock && (di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	dp->rss = false;
	if (dp->n_rxq > 1 && di->flow_type_rss_offloads) {
		uint64_t hf = di->flow_type_rss_offloads &
			      (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP |
			       RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_TCP);

		if (hf) {
			conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf->rx_adv_conf.rss_conf.rss_hf = hf;
			if (di->hash_key_size == sizeof(rss_key)) {
				conf->rx_adv_conf.rss_conf.rss_key = rss_key;
				conf->rx_adv_conf.rss_conf.rss_key_len = sizeof(rss_key);
			}
			dp->rss = true;
		}
	}
}

static int configure(struct dp *dp, const struct rte_eth_dev_info *di, uint16_t n_txq)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	offloads(dp, di, &conf);
	if (dp->cfg->dp_mtu) {
		uint32_t frame = dp->cfg->dp_mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

		/* DPDK 22.11's net_tap takes 1522-octet frames at most; net_af_packet
		 * its framesz devarg (2048 unless given) */
		if (dp->cfg->dp_mtu > di->max_mtu || dp->cfg->dp_mtu < FG_MAX(di->min_mtu, 576u) ||
		    frame > di->max_rx_pktlen) {
			FG_LOG_ERR(DP, "port %u (%s): [dataplane] mtu %u is not what it takes (MTU "
				   "%u..%u, frames up to %u octets; 576 at least)", dp->port_id,
				   di->driver_name, dp->cfg->dp_mtu, di->min_mtu, di->max_mtu,
				   di->max_rx_pktlen);
			return -EINVAL;
		}
		conf.rxmode.mtu = dp->cfg->dp_mtu;
	}
	/* receive interrupts let an idle worker block instead of polling */
	conf.intr_conf.rxq = dp->cfg->idle_backoff_us ? 1 : 0;
	/* a bond learns that a member's link went down from the member's
	 * link-state interrupts, which it enables only when asked for its own
	 * (members without them it polls) */
	if (dp->n_members && di->dev_flags && (*di->dev_flags & RTE_ETH_DEV_INTR_LSC))
		conf.intr_conf.lsc = 1;
	rc = rte_eth_dev_configure(dp->port_id, (uint16_t)dp->n_rxq, n_txq, &conf);
	if (rc != 0 && conf.intr_conf.rxq) {
		conf.intr_conf.rxq = 0;
		rc = rte_eth_dev_configure(dp->port_id, (uint16_t)dp->n_rxq, n_txq, &conf);
	}
	dp->rx_intr = rc == 0 && conf.intr_conf.rxq;
	if (rc != 0 && dp->rss) {
		conf.intr_conf.rxq = 0;
		/* a port that lists RSS but cannot do it as asked */
		FG_LOG_NOTICE(DP, "port %u refused RSS (%s); the port spreads flows itself",
			      dp->port_id, rte_strerror(-rc));
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
		memset(&conf.rx_adv_conf.rss_conf, 0, sizeof(conf.rx_adv_conf.rss_conf));
		dp->rss = false;
		rc = rte_eth_dev_configure(dp->port_id, (uint16_t)dp->n_rxq, n_txq, &conf);
	}
	if (rc != 0) {
		FG_LOG_ERR(DP, "port %u: configure %u RX / %u TX queues: %s", dp->port_id,
			   dp->n_rxq, n_txq, rte_strerror(-rc));
		return rc;
	}
	return 0;
}

/* Per-worker shares of the pool; -ENOSPC (logged) when it is too small. */
static int port_budget(struct dp *dp, uint16_t nb_rxd, uint16_t nb_txd, uint16_t n_txq)
{
	uint64_t total = dp->cfg->mbufs;
	uint64_t rings = (uint64_t)dp->n_rxq * nb_rxd + (uint64_t)n_txq * nb_txd;
	uint64_t caches = (uint64_t)(dp->n_workers + 1) * POOL_CACHE * 3 / 2;
	uint64_t tx = (uint64_t)dp->n_workers * (DP_TX_PENDING + TX_IN_FLIGHT);
	/* the exception tap's RX rings are filled from the pool too */
	uint64_t exc = dp->cfg->dp_exception == FG_EXCEPTION_TAP && !dp->passive ?
			       (uint64_t)dp->n_workers * DP_EXC_DESC : 0;
	uint64_t reserved = rings + caches + tx + exc, share;

	share = total > reserved ? (total - reserved) / dp->n_workers : 0;
	if (share < MIN_SHARE) {
		FG_LOG_ERR(DP, "[dataplane] mbufs %llu is too few: the rings (%llu), caches (%llu) "
			   "and TX (%llu) need %llu, and each of %u workers %u more; set at "
			   "least %llu", (unsigned long long)total, (unsigned long long)rings,
			   (unsigned long long)caches, (unsigned long long)tx,
			   (unsigned long long)reserved, dp->n_workers, MIN_SHARE,
			   (unsigned long long)(reserved + (uint64_t)MIN_SHARE * dp->n_workers));
		return -ENOSPC;
	}
	dp->per_worker_segs = (unsigned)(share / 2);
	dp->per_worker_holds = (unsigned)(share / 4);
	dp->per_worker_conns = FG_MAX(16u, dp->cfg->tcp_connections / dp->n_workers);
	return 0;
}

static int queues(struct dp *dp, const struct rte_eth_dev_info *di, uint16_t nb_rxd,
		  uint16_t nb_txd, uint16_t n_txq)
{
	int socket = rte_eth_dev_socket_id(dp->port_id);
	struct rte_eth_rxconf rxc = di->default_rxconf;
	struct rte_eth_txconf txc = di->default_txconf;
	/* one whole frame per mbuf (a VLAN tag and the CRC included) */
	uint32_t room = FG_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM,
			       (uint32_t)dp->cfg->dp_mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN +
			       RTE_ETHER_CRC_LEN);
	int rc;

	dp->pool = rte_pktmbuf_pool_create("fg_mbufs", dp->cfg->mbufs, POOL_CACHE, 0,
					   (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
					   socket < 0 ? (int)rte_socket_id() : socket);
	if (!dp->pool) {
		FG_LOG_ERR(DP, "mempool of %u mbufs: %s (more memory: eal-args -m, or hugepages)",
			   dp->cfg->mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	rxc.offloads = 0;
	txc.offloads = 0;
	for (unsigned q = 0; q < dp->n_rxq; q++) {
		rc = rte_eth_rx_queue_setup(dp->port_id, (uint16_t)q, nb_rxd, (unsigned)socket,
					    &rxc, dp->pool);
		if (rc != 0) {
			FG_LOG_ERR(DP, "RX queue %u: %s", q, rte_strerror(-rc));
			return rc;
		}
	}
	for (unsigned q = 0; q < n_txq; q++) {
		rc = rte_eth_tx_queue_setup(dp->port_id, (uint16_t)q, nb_txd, (unsigned)socket,
					    &txc);
		if (rc != 0) {
			FG_LOG_ERR(DP, "TX queue %u: %s", q, rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void port_mac(struct dp *dp)
{
	static const uint8_t zero[6];
	struct rte_ether_addr a;

	if (memcmp(dp->cfg->dp_mac, zero, 6) != 0) {
		memcpy(a.addr_bytes, dp->cfg->dp_mac, 6);
		if (rte_eth_dev_default_mac_addr_set(dp->port_id, &a) != 0) {
			/* the port keeps its own: receive everything, the net
			 * module keeps what is addressed to our MAC */
			FG_LOG_NOTICE(DP, "port %u cannot take MAC address %02x:%02x:%02x:%02x:%02x:%02x;"
				      " promiscuous mode instead", dp->port_id, a.addr_bytes[0],
				      a.addr_bytes[1], a.addr_bytes[2], a.addr_bytes[3],
				      a.addr_bytes[4], a.addr_bytes[5]);
			rte_eth_promiscuous_enable(dp->port_id);
		}
		memcpy(dp->mac, dp->cfg->dp_mac, 6);
		return;
	}
	rte_eth_macaddr_get(dp->port_id, &a);
	memcpy(dp->mac, a.addr_bytes, 6);
}

/* The exception tap: one RX and one TX queue per worker, on the pool. */
static int exc_setup(struct dp *dp)
{
	int socket = rte_eth_dev_socket_id(dp->port_id);
	struct rte_eth_conf conf;
	uint16_t id, n = (uint16_t)dp->n_workers;
	int rc;

	dp->exc_port = -1;
	if (dp->passive || dp->cfg->dp_exception != FG_EXCEPTION_TAP)
		return 0;
	if (rte_eth_dev_get_port_by_name(DP_EXC_PORT, &id) != 0) {
		FG_LOG_ERR(DP, "exception path: no port %s (see DPDK's messages above)", DP_EXC_PORT);
		return -ENODEV;
	}
	memset(&conf, 0, sizeof(conf));
	/* an idle worker wakes for the kernel's frames as for the port's */
	conf.intr_conf.rxq = dp->rx_intr ? 1 : 0;
	rc = rte_eth_dev_configure(id, n, n, &conf);
	for (uint16_t q = 0; rc == 0 && q < n; q++) {
		rc = rte_eth_rx_queue_setup(id, q, DP_EXC_DESC, (unsigned)socket, NULL, dp->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(id, q, DP_EXC_DESC, (unsigned)socket, NULL);
	}
	if (rc != 0) {
		FG_LOG_ERR(DP, "exception path: port %s: %s", DP_EXC_PORT, rte_strerror(-rc));
		return rc;
	}
	dp->exc_port = id;
	FG_LOG_NOTICE(DP, "exception path: port %u (%s, iface %s), %u queue pairs, at most %u "
		      "frames/s to the kernel", id, DP_EXC_PORT, dp->cfg->dp_exception_iface, n,
		      dp->cfg->dp_exception_rate);
	return 0;
}

int dp_port_setup(struct dp *dp)
{
	struct rte_eth_dev_info di;
	uint16_t nb_rxd = DP_RX_DESC, nb_txd = DP_TX_DESC, n_txq;
	int rc = find_port(dp, dp->o.port ? dp->o.port : dp->cfg->port);

	if (rc != 0)
		return rc;
	rc = rte_eth_dev_info_get(dp->port_id, &di);
	if (rc != 0)
		return rc;
	dp_bond_members(dp, dp->o.port ? dp->o.port : dp->cfg->port, di.driver_name);
	dp->n_rxq = dp->cfg->rx_queues ? dp->cfg->rx_queues : dp->n_workers;
	if (dp->n_rxq < dp->n_workers || dp->n_rxq > di.max_rx_queues) {
		FG_LOG_ERR(DP, "port %u (%s): %u RX queues asked for %u workers; it has at most %u",
			   dp->port_id, di.driver_name, dp->n_rxq, dp->n_workers, di.max_rx_queues);
		return -EINVAL;
	}
	n_txq = (uint16_t)FG_MIN(dp->n_workers, (unsigned)di.max_tx_queues);
	if (n_txq < dp->n_workers && !dp->passive) {
		FG_LOG_ERR(DP, "port %u (%s): %u workers need as many TX queues; it has %u",
			   dp->port_id, di.driver_name, dp->n_workers, di.max_tx_queues);
		return -EINVAL;
	}
	rc = configure(dp, &di, n_txq);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(dp->port_id, &nb_rxd, &nb_txd);
	if (rc == 0)
		rc = port_budget(dp, nb_rxd, nb_txd, n_txq);
	if (rc == 0)
		rc = queues(dp, &di, nb_rxd, nb_txd, n_txq);
	if (rc == 0)
		rc = exc_setup(dp);
	if (rc != 0)
		return rc;
	if (dp->cfg->dp_mtu && (rc = rte_eth_dev_set_mtu(dp->port_id,
							 (uint16_t)dp->cfg->dp_mtu)) != 0) {
		FG_LOG_ERR(DP, "port %u: MTU %u: %s", dp->port_id, dp->cfg->dp_mtu,
			   rte_strerror(-rc));
		return rc;
	}
	if (rte_eth_dev_get_mtu(dp->port_id, &dp->mtu) != 0 || dp->mtu < 576)
		dp->mtu = 1500;
	port_mac(dp);
	FG_LOG_NOTICE(DP, "port %u (%s): %u RX queues%s, %u TX queues, MTU %u, checksums rx %s tx %s, "
		      "TX frames of %u mbufs at most, "
		      "%s%s%sidle %s, %u mbufs (per worker: %u queued, %u held, %u connections)",
		      dp->port_id, di.driver_name, dp->n_rxq, dp->rss ? " (RSS)" : "", n_txq, dp->mtu,
		      dp->rx_csum ? "port" : "software", dp->tx_csum ? "port" : "software",
		      dp->tx_segs,
		      dp->cfg->n_dp_vlan ? "VLAN tags strip " : "",
		      !dp->cfg->n_dp_vlan ? "" : dp->vlan_strip ? "port" : "software",
		      !dp->cfg->n_dp_vlan ? "" : dp->vlan_insert ? " insert port, " :
		      " insert software, ",
		      dp->rx_intr ? "interrupts" : "sleeps",
		      dp->cfg->mbufs, dp->per_worker_segs, dp->per_worker_holds,
		      dp->per_worker_conns);
	return 0;
}

/* The receive timestamp a port stamps mbufs with (registered by the PMD,
 * or by the TIMESTAMP offload); --clock capture reads it as the capture
 * time. */
static int capture_clock(struct dp *dp)
{
	int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

	dp->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	if (dp->ts_offset < 0 || bit < 0) {
		FG_LOG_ERR(DP, "--clock capture: port %u gives no receive timestamps "
			   "(net_pcap does)", dp->port_id);
		return -ENOTSUP;
	}
	dp->ts_flag = 1ull << bit;
	return 0;
}

/*
 * IPv6 needs the all-nodes group and our solicited-node groups
 * (RFC 4861 7.2.1): a NIC's filter drops other multicast, and without
 * them nobody can resolve our addresses. The port takes the list, or
 * all-multicast, or (promiscuous) sees everything already; else we say so.
 */
static void join_groups(struct dp *dp)
{
	struct rte_ether_addr mc[FG_NET_MAX_ADDRS + 2];	/* all-nodes, link-local, ours */
	unsigned n = fg_net_ipv6_mc_macs(dp->w[0].net, (uint8_t (*)[FG_ETH_ALEN])mc,
					  FG_ARRAY_SIZE(mc));

	if (n == 0)
		return;
	if (n <= FG_ARRAY_SIZE(mc) && rte_eth_dev_set_mc_addr_list(dp->port_id, mc, n) == 0) {
		FG_LOG_INFO(DP, "port %u: joined %u IPv6 multicast groups", dp->port_id, n);
		return;
	}
	if (rte_eth_allmulticast_enable(dp->port_id) == 0 ||
	    rte_eth_allmulticast_get(dp->port_id) == 1) {
		FG_LOG_INFO(DP, "port %u: all-multicast for IPv6's groups", dp->port_id);
		return;
	}
	if (rte_eth_promiscuous_get(dp->port_id) == 1)
		return;
	FG_LOG_WARN(DP, "port %u takes neither a multicast list nor all-multicast: IPv6 "
		    "neighbours may not find our addresses (neighbour solicitations to "
		    "solicited-node groups are filtered)", dp->port_id);
}

/* rss.h step 1: the key and RETA the port hashes with, as it says them. */
static void rss_table(struct dp *dp)
{
	struct rte_eth_rss_reta_entry64 conf[DP_RSS_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_rss_conf hc = { .rss_key = dp->rss_tab.key,
				       .rss_key_len = DP_RSS_KEY_LEN };
	struct rte_eth_dev_info di;
	static const uint8_t ours[DP_RSS_KEY_LEN] = DP_RSS_KEY_INIT;
	uint16_t size;

	dp->rss_tab.reta_size = 0;
	if (!dp->rss || rte_eth_dev_info_get(dp->port_id, &di) != 0)
		return;		/* one queue, or no RSS: any port fits */
	size = di.reta_size;
	if (rte_eth_dev_rss_hash_conf_get(dp->port_id, &hc) != 0 ||
	    hc.rss_key_len != DP_RSS_KEY_LEN)
		memcpy(dp->rss_tab.key, ours, DP_RSS_KEY_LEN);	/* what we gave it */
	if (!size || size > DP_RSS_RETA_MAX) {
		FG_LOG_NOTICE(DP, "port %u: RETA of %u entries: active opens take any "
			      "source port", dp->port_id, size);
		return;
	}
	memset(conf, 0, sizeof(conf));
	for (unsigned g = 0; g < (size + RTE_ETH_RETA_GROUP_SIZE - 1u) / RTE_ETH_RETA_GROUP_SIZE; g++)
		conf[g].mask = UINT64_MAX;
	if (rte_eth_dev_rss_reta_query(dp->port_id, conf, size) == 0) {
		for (unsigned i = 0; i < size; i++)
			dp->rss_tab.reta[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE]
						      .reta[i % RTE_ETH_RETA_GROUP_SIZE];
	} else {
		for (unsigned i = 0; i < size; i++)
			dp->rss_tab.reta[i] = (uint16_t)(i % dp->n_rxq);	/* the drivers' default */
	}
	dp->rss_tab.reta_size = size;
}

int dp_port_start(struct dp *dp)
{
	int rc = rte_eth_dev_start(dp->port_id);

	if (rc != 0) {
		FG_LOG_ERR(DP, "port %u: start: %s", dp->port_id, rte_strerror(-rc));
		return rc;
	}
	if (dp->exc_port >= 0 && (rc = rte_eth_dev_start((uint16_t)dp->exc_port)) != 0) {
		FG_LOG_ERR(DP, "exception path: start: %s", rte_strerror(-rc));
		return rc;
	}
	/* a mirror or a capture is not addressed to us */
	if (dp->passive)
		rte_eth_promiscuous_enable(dp->port_id);
	else
		join_groups(dp);
	dp_bond_start(dp);
	rss_table(dp);
	return dp->o.capture_clock ? capture_clock(dp) : 0;
}

void dp_port_stop(struct dp *dp)
{
	if (dp->exc_port >= 0) {
		rte_eth_dev_stop((uint16_t)dp->exc_port);
		rte_eth_dev_close((uint16_t)dp->exc_port);
	}
	rte_eth_dev_stop(dp->port_id);
	rte_eth_dev_close(dp->port_id);
	/* the workers' indirect mbufs: none is in a TX ring any more */
	for (unsigned i = 0; i < dp->n_workers; i++) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), DP_IND_POOL_NAME, i);
		rte_mempool_free(rte_mempool_lookup(name));
	}
}
