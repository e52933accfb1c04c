/* SPDX-License-Identifier: MIT */
/*
 * mbuf.h — the buffer half of struct fg_port_ops (net.h) over DPDK mbufs,
 * shared by floodgate's port (dataplane/dpdk/port.c) and feedgen's --dpdk
 * transport (tools/feedgen/dpdk.c). A frame's handle is its mbuf; a
 * reference is rte_mbuf_refcnt_update(+1), a release rte_pktmbuf_free()
 * (which frees at the last reference); a TX buffer is one mbuf whose data
 * room holds the whole frame. Needs DPDK's headers: include it only where
 * they are on the include path.
 */
#ifndef FLOODGATE_MBUF_H
#define FLOODGATE_MBUF_H

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

#endif /* FLOODGATE_MBUF_H */
