/* SPDX-License-Identifier: MIT */
/*
 * mbuf.h — the buffer half of struct fg_port_ops (net.h) over DPDK mbufs,
 * shared by floodgate's port (dataplane/dpdk/port.c) and feedgen's --dpdk
 * transport (tools/feedgen/dpdk.c). A frame's handle is its mbuf; a
 * reference is rte_mbuf_refcnt_update(+1), a release rte_pktmbuf_free()
 * (which frees at the last reference); a TX buffer is one mbuf whose data
 * room holds the whole frame. Needs DPDK's headers: include it only where
 * they are on the include path.
 *
 * A piece attached to a TX frame (tx_attach, net.h) is an indirect mbuf
 * from a small pool of the caller's (no data room of its own):
 *   1. rte_pktmbuf_attach() points it at the piece's mbuf and takes a
 *      reference on that (DPDK's own; freeing the indirect one drops it);
 *   2. its data_off and data_len are narrowed to the slice sent;
 *   3. rte_pktmbuf_chain() appends it to the frame (nb_segs, pkt_len).
 * The frame's head mbuf then has pkt_len = the attached octets until the
 * port's tx_burst gives the head its own data_len (fg_mbuf_tx_lengths).
 */
#ifndef FLOODGATE_MBUF_H
#define FLOODGATE_MBUF_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "floodgate/net.h"

static inline void fg_mbuf_ref(void *port, void *h)
{
	(void)port;
	rte_mbuf_refcnt_update(h, 1);
}

static inline void fg_mbuf_unref(void *port, void *h)
{
	(void)port;
	rte_pktmbuf_free(h);
}

/* A TX buffer of `size` bytes from `pool`: its data, and *h its mbuf; NULL
 * when the pool is empty or one mbuf cannot hold the frame. */
static inline uint8_t *fg_mbuf_tx_alloc(struct rte_mempool *pool, uint32_t size, void **h)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (!m)
		return NULL;
	if (size > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	*h = m;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

/* Attach `len` octets at `data` of the mbuf `piece` to the TX frame
 * `frame`, as an indirect mbuf from `ind`: 0, or -ENOBUFS. */
static inline int fg_mbuf_tx_attach(struct rte_mempool *ind, void *frame, void *piece,
				    const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *mi = ind ? rte_pktmbuf_alloc(ind) : NULL;

	if (!mi)
		return -ENOBUFS;
	rte_pktmbuf_attach(mi, piece);
	mi->data_off = (uint16_t)(data - (const uint8_t *)mi->buf_addr);
	mi->data_len = (uint16_t)len;
	mi->pkt_len = len;
	if (rte_pktmbuf_chain(frame, mi) != 0) {
		rte_pktmbuf_free(mi);
		return -ENOBUFS;
	}
	return 0;
}

/* A TX frame of `len` octets in all: the head's own data_len is what the
 * attached pieces (its pkt_len so far) leave of it. */
static inline void fg_mbuf_tx_lengths(struct rte_mbuf *m, uint32_t len, bool chained)
{
	m->data_len = (uint16_t)(chained ? len - m->pkt_len : len);
	m->pkt_len = len;
}

/* The dynamic field where a received mbuf keeps its payload's sum (the
 * port's buf_sum op, net.h struct fg_buf_sum): its offset, registered on
 * first use (the same offset for every caller), or -1 with rte_errno. */
static inline int fg_mbuf_sum_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "floodgate_payload_sum",
		.size = sizeof(struct fg_buf_sum),
		.align = __alignof__(struct fg_buf_sum),
	};

	return rte_mbuf_dynfield_register(&desc);
}

/* m's kept sum at dynfield offset `off`; NULL when off < 0 (none). */
static inline struct fg_buf_sum *fg_mbuf_buf_sum(int off, void *m)
{
	return off < 0 ? NULL : RTE_MBUF_DYNFIELD((struct rte_mbuf *)m, off, struct fg_buf_sum *);
}

/* A TSO frame's mbuf as DPDK asks (rte_mbuf_core.h RTE_MBUF_F_TX_TCP_SEG):
 * header lengths, segment size, the IPv4 header checksum offloaded too;
 * the TCP checksum field already holds the pseudo-header sum without the
 * length (net.h FG_TX_TSO). `seg_frame_max`, when not 0, bounds a
 * segment with all its headers, the Ethernet one included: net_tap
 * (22.11) refuses a frame whose segment size plus l2, l3 and l4 lengths
 * exceeds its MTU, so its segments carry 14 octets less than the MSS. */
static inline void fg_mbuf_tx_tso(struct rte_mbuf *m, bool v6, uint16_t segsz,
				  uint16_t seg_frame_max)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned hdrs;

	m->l2_len = 14;
	m->l3_len = v6 ? 40 : (d[14] & 15u) * 4u;
	m->l4_len = (d[14 + m->l3_len + 12] >> 4) * 4u;
	hdrs = m->l2_len + m->l3_len + m->l4_len;
	if (seg_frame_max && hdrs + segsz > seg_frame_max)
		segsz = (uint16_t)(seg_frame_max - hdrs);
	m->tso_segsz = segsz;
	m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM |
		       (v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM);
}

#endif /* FLOODGATE_MBUF_H */
