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

#endif /* FLOODGATE_MBUF_H */
