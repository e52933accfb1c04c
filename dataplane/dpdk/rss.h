/* SPDX-License-Identifier: MIT */
/*
 * rss.h — the RSS key floodgate gives a port with more than one RX queue:
 * 0x6d5a repeated, the symmetric Toeplitz key (Woo and Park, 2012). With
 * it a 4-tuple and its reverse hash alike, for IPv4 and IPv6, so both
 * directions of a connection (a mirrored server's RST in passive mode)
 * reach one queue. tests/unit/test_rss.c checks that with rte_softrss.
 *
 * Active opens (fg_tcp_connect from a worker) choose their ephemeral port
 * so that the answers come back to the opening worker: dp_rss_port_ok is
 * the TCP config's port_ok predicate. In steps:
 *   1. port.c, once the port has started: the key and the redirection
 *      table (RETA) the port uses, read back from it (struct
 *      dp_rss_table); a port that cannot say its RETA is taken to use
 *      the usual default, entry i -> queue i % rx queues; no RSS (one RX
 *      queue, or a port without it): reta_size 0.
 *   2. worker.c: the worker's own RX queues as a bitmap (struct
 *      dp_rss_pick).
 *   3. For a candidate port, the answers' 4-tuple (the peer's address and
 *      port as source, ours as destination) is hashed with rte_softrss,
 *      the RETA entry hash % reta_size names the queue, and the port fits
 *      when that queue is the worker's. Without RSS every port fits.
 */
#ifndef FLOODGATE_DP_RSS_H
#define FLOODGATE_DP_RSS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_thash.h>

#include "floodgate/config.h"

#define DP_RSS_KEY_LEN 40
#define DP_RSS_KEY_INIT { \
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, \
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, \
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, \
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, \
}

#define DP_RSS_RETA_MAX 512		/* RTE_ETH_RSS_RETA_SIZE_512, the largest */
#define DP_RSS_MAX_QUEUES 1024		/* DP_MAX_RXQ */

/* Step 1: the port's. */
struct dp_rss_table {
	uint8_t key[DP_RSS_KEY_LEN];
	uint16_t reta[DP_RSS_RETA_MAX];
	uint16_t reta_size;		/* 0: no RSS, every port fits */
};

/* Step 2: a worker's. */
struct dp_rss_pick {
	const struct dp_rss_table *t;
	uint64_t mine[DP_RSS_MAX_QUEUES / 64];
};

static inline void dp_rss_pick_queue(struct dp_rss_pick *p, uint16_t q)
{
	p->mine[(q / 64) % (DP_RSS_MAX_QUEUES / 64)] |= 1ull << (q % 64);
}

/* The Toeplitz hash of a TCP 4-tuple from `src` to `dst` as the port
 * computes it (rte_softrss wants the words in host order). */
static inline uint32_t dp_rss_hash(const uint8_t *key, const struct fg_endpoint *src,
				   const struct fg_endpoint *dst)
{
	union rte_thash_tuple t;

	memset(&t, 0, sizeof(t));
	if (src->family == AF_INET6) {
		struct rte_ipv6_hdr ip;

		memcpy(ip.src_addr, src->addr, 16);
		memcpy(ip.dst_addr, dst->addr, 16);
		rte_thash_load_v6_addrs(&ip, &t);
		t.v6.sport = src->port;
		t.v6.dport = dst->port;
		return rte_softrss((uint32_t *)&t, RTE_THASH_V6_L4_LEN, key);
	}
	t.v4.src_addr = (uint32_t)src->addr[0] << 24 | (uint32_t)src->addr[1] << 16 |
			(uint32_t)src->addr[2] << 8 | src->addr[3];
	t.v4.dst_addr = (uint32_t)dst->addr[0] << 24 | (uint32_t)dst->addr[1] << 16 |
			(uint32_t)dst->addr[2] << 8 | dst->addr[3];
	t.v4.sport = src->port;
	t.v4.dport = dst->port;
	return rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN, key);
}

/* The RX queue the port puts a frame of that 4-tuple on. */
static inline uint16_t dp_rss_queue(const struct dp_rss_table *t, const struct fg_endpoint *src,
				    const struct fg_endpoint *dst)
{
	return t->reta[dp_rss_hash(t->key, src, dst) % t->reta_size];
}

/* Step 3: struct fg_tcp_config's port_ok, ctx a struct dp_rss_pick. */
static inline bool dp_rss_port_ok(void *ctx, const struct fg_endpoint *local,
				  const struct fg_endpoint *peer)
{
	const struct dp_rss_pick *p = ctx;
	uint16_t q;

	if (!p->t || !p->t->reta_size)
		return true;
	q = dp_rss_queue(p->t, peer, local);	/* the answers: from the peer to us */
	return (p->mine[(q / 64) % (DP_RSS_MAX_QUEUES / 64)] >> (q % 64)) & 1;
}

#endif /* FLOODGATE_DP_RSS_H */
