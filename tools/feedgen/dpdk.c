/* SPDX-License-Identifier: MIT */
/*
 * dpdk.c — feedgen's kernel-free transport (--dpdk PORT): its peers' TCP
 * runs on the project's own TCP module (dataplane/tcp, active open) over
 * a DPDK port, typically one end of a net_memif pair whose other end is
 * floodgate (docs/dataplane.md, "floodgate on memif").
 *
 * Set-up, in steps:
 *   1. the EAL, as a primary of its own: no hugepages, no PCI, no shared
 *      config, one lcore (feedgen's loop polls from its main thread);
 *   2. the port (the --dpdk device string, e.g.
 *      net_memif0,role=client,socket=/run/x/memif.sock): `queues` RX and
 *      TX queues, a mempool, no offloads (memif has none: both ends
 *      compute checksums in software), then the link, waited for; a
 *      bond's members (--dpdk-member, created first) and, for an 802.3ad
 *      bond, LACP: every member collecting and distributing, waited for
 *      while its LACPDUs are polled through the bond (lacp_wait);
 *   3. net (our address, the port's MAC; the server's MAC when given,
 *      --dpdk-peer-mac) and a client-only TCP instance whose app is
 *      client.c's connections.
 *
 * Queues: memif has no RSS; the sender chooses the queue. floodgate's
 * worker i polls RX queue i, so a frame is sent on TX queue
 * (source port % queues): every segment of a connection reaches the one
 * worker that owns it, and the worker answers on its own TX queue, which
 * is feedgen's RX queue i. The loop polls every RX queue.
 *
 * Buffers: floodgate's (mbuf.h: a received frame's handle is its mbuf).
 * Frames a full TX ring cannot take wait in their queue's backlog, in
 * order, and go with the next burst or poll (a 700 KB article is ~480
 * frames, a memif ring 1024 slots); past FD_TX_PENDING they are dropped
 * and TCP sends them again (counted, logged at exit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_bond.h>
#include <rte_eth_bond_8023ad.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "feedgen.h"
#include "floodgate/log.h"
#include "floodgate/mbuf.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

#define FD "feedgen"
#define FD_BURST 32
#define FD_DESC 1024
#define FD_MBUFS 16383u
#define FD_TX_PENDING 4096	/* frames a queue keeps while its ring is full */
#define FD_LINK_WAIT_MS 10000
#define FD_LACP_WAIT_MS 60000	/* a bound: LACP agrees in a few seconds */
#define FD_LACP_UP (STATE_COLLECTING | STATE_DISTRIBUTING)
#define FD_MAX_QUEUES 16

/* A TX queue's frames the ring could not take yet, oldest first. */
struct fd_txq {
	struct rte_mbuf *pending[FD_TX_PENDING];
	unsigned n;
};

struct feed_dp {
	uint16_t port;
	uint16_t queues;
	struct fd_txq txq[FD_MAX_QUEUES];
	uint64_t tx_dropped;		/* beyond FD_TX_PENDING: TCP sends them again */
	struct rte_mempool *pool;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	uint32_t addr;			/* network order */
	bool eal_up, port_up;
};

/* ---------------------------------------------------------------- port ops */

static uint8_t *mb_tx_alloc(void *port, uint32_t size, void **h)
{
	return fg_mbuf_tx_alloc(((struct feed_dp *)port)->pool, size, h);
}

/* The queue of a frame: its TCP source port's, queue 0 for the rest. */
static uint16_t tx_queue(const struct feed_dp *d, const uint8_t *f, uint32_t len)
{
	uint32_t ihl;

	if (d->queues == 1 || len < FG_ETH_HLEN + FG_IP_HLEN + 4 || f[12] != 0x08 || f[13] != 0 ||
	    f[FG_ETH_HLEN + 9] != FG_IP_PROTO_TCP)
		return 0;
	ihl = (f[FG_ETH_HLEN] & 15u) * 4u;
	if (len < FG_ETH_HLEN + ihl + 2)
		return 0;
	return (uint16_t)(fg_rd16(f + FG_ETH_HLEN + ihl) % d->queues);
}

/* As much of queue q's backlog as its ring takes now, in order. */
static void txq_drain(struct feed_dp *d, uint16_t q)
{
	struct fd_txq *t = &d->txq[q];
	uint16_t sent;

	if (!t->n)
		return;
	sent = rte_eth_tx_burst(d->port, q, t->pending, (uint16_t)FG_MIN(t->n, 65535u));
	t->n -= sent;
	memmove(t->pending, t->pending + sent, t->n * sizeof(t->pending[0]));
}

/* Frames join their queue's backlog (a connection's order is kept on its
 * queue) and every backlog goes to its ring; what a full ring leaves is
 * sent by the next burst or poll. */
static unsigned mb_tx_burst(void *port, struct fg_tx_frame *f, unsigned n)
{
	struct feed_dp *d = port;
	unsigned kept = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = f[i].handle;
		struct fd_txq *t = &d->txq[tx_queue(d, f[i].data, f[i].len)];

		m->data_len = (uint16_t)f[i].len;
		m->pkt_len = f[i].len;
		if (t->n == FD_TX_PENDING)
			txq_drain(d, (uint16_t)(t - d->txq));
		if (t->n == FD_TX_PENDING) {
			d->tx_dropped++;
			rte_pktmbuf_free(m);
			continue;
		}
		t->pending[t->n++] = m;
		kept++;
	}
	for (uint16_t q = 0; q < d->queues; q++)
		txq_drain(d, q);
	return kept;
}

static const struct fg_port_ops feed_port_ops = {
	.buf_ref = fg_mbuf_ref, .buf_unref = fg_mbuf_unref, .tx_alloc = mb_tx_alloc,
	.tx_free = fg_mbuf_unref, .tx_burst = mb_tx_burst,
};

/* ---------------------------------------------------------------- set-up */

/* argv[argc++] = a copy of `w` in buf; false when it does not fit. */
static bool arg_add(char *buf, size_t cap, size_t *used, char **argv, unsigned *argc,
		    const char *w)
{
	size_t n = strlen(w) + 1;

	if (*used + n > cap)
		return false;
	memcpy(buf + *used, w, n);
	argv[(*argc)++] = buf + *used;
	*used += n;
	return true;
}

static bool vdev_add(char *buf, size_t size, size_t *used, char **argv, unsigned *argc,
		     const char *dev)
{
	char word[600];

	return (size_t)snprintf(word, sizeof(word), "--vdev=%s", dev) < sizeof(word) &&
	       arg_add(buf, size, used, argv, argc, word);
}

static int eal_start(struct feed_dp *d, const struct feed_dp_params *p)
{
	static const char *const fixed[] = { "feedgen", "--no-huge", "-m", "256", "--no-pci",
					     "--no-shconf", "--no-telemetry", "-l", "0",
					     "--log-level", "lib.eal:error" };
	char buf[4096], word[600], *argv[FG_ARRAY_SIZE(fixed) + FEED_DP_MAX_MEMBERS + 3];
	unsigned argc = 0;
	size_t used = 0;
	bool ok = true;

	for (unsigned i = 0; i < FG_ARRAY_SIZE(fixed); i++)
		ok = ok && arg_add(buf, sizeof(buf), &used, argv, &argc, fixed[i]);
	snprintf(word, sizeof(word), "--file-prefix=feedgen-%d", (int)getpid());
	ok = ok && arg_add(buf, sizeof(buf), &used, argv, &argc, word);
	/* a bond's members first: the bond finds them by name */
	for (unsigned m = 0; m < p->n_members && m < FEED_DP_MAX_MEMBERS; m++)
		ok = ok && vdev_add(buf, sizeof(buf), &used, argv, &argc, p->member[m]);
	ok = ok && vdev_add(buf, sizeof(buf), &used, argv, &argc, p->port);
	if (!ok)
		return -EINVAL;
	argv[argc] = NULL;
	if (rte_eal_init((int)argc, argv) < 0) {
		FG_LOG_ERR(FD, "--dpdk %s: EAL start failed: %s", p->port, rte_strerror(rte_errno));
		return -rte_errno;
	}
	d->eal_up = true;
	return 0;
}

static int port_find(struct feed_dp *d, const char *spec)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(spec, ",");

	if (n >= sizeof(name))
		return -EINVAL;
	memcpy(name, spec, n);
	name[n] = '\0';
	if (rte_eth_dev_get_port_by_name(name, &d->port) != 0) {
		FG_LOG_ERR(FD, "--dpdk: no port %s after the EAL started", name);
		return -ENODEV;
	}
	return 0;
}

/* The members of an 802.3ad bond that collect and distribute, of n. */
static unsigned lacp_members_up(uint16_t port, unsigned *n)
{
	uint16_t member[RTE_MAX_ETHPORTS];
	int k = rte_eth_bond_slaves_get(port, member, RTE_MAX_ETHPORTS);
	unsigned up = 0;

	*n = k > 0 ? (unsigned)k : 0;
	for (unsigned m = 0; m < *n; m++) {
		struct rte_eth_bond_8023ad_slave_info info;

		if (rte_eth_bond_8023ad_slave_info(port, member[m], &info) == 0 &&
		    (info.actor_state & FD_LACP_UP) == FD_LACP_UP)
			up++;
	}
	return up;
}

/* An 802.3ad bond carries nothing until LACP has agreed with the partner
 * (floodgate's bond): its LACPDUs go out and come in only through the
 * bond's bursts, so they are polled here (nothing else is received yet)
 * until every member collects and distributes. Any other port: 0 now. */
static int lacp_wait(struct feed_dp *d)
{
	unsigned n = 0, up = 0;

	if (rte_eth_bond_mode_get(d->port) != BONDING_MODE_8023AD)
		return 0;
	for (unsigned ms = 0; ms < FD_LACP_WAIT_MS; ms += 10) {
		struct rte_mbuf *mb[FD_BURST];

		for (uint16_t q = 0; q < d->queues; q++) {
			uint16_t got = rte_eth_rx_burst(d->port, q, mb, FD_BURST);

			rte_pktmbuf_free_bulk(mb, got);
			rte_eth_tx_burst(d->port, q, mb, 0);
		}
		up = lacp_members_up(d->port, &n);
		if (n && up == n) {
			FG_LOG_NOTICE(FD, "--dpdk: 802.3ad: all %u members collecting and "
				      "distributing after %u ms", n, ms);
			return 0;
		}
		usleep(10 * 1000);
	}
	FG_LOG_ERR(FD, "--dpdk: 802.3ad: %u of %u members collecting and distributing after %u s "
		   "(is the partner an 802.3ad bond, polling its port?)", up, n,
		   FD_LACP_WAIT_MS / 1000);
	return -ETIMEDOUT;
}

static int port_start(struct feed_dp *d)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_link link;
	int rc;

	d->pool = rte_pktmbuf_pool_create("feedgen", FD_MBUFS, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (!d->pool)
		return -ENOMEM;
	rc = rte_eth_dev_configure(d->port, d->queues, d->queues, &conf);
	for (uint16_t q = 0; rc == 0 && q < d->queues; q++)
		rc = rte_eth_rx_queue_setup(d->port, q, FD_DESC, SOCKET_ID_ANY, NULL, d->pool);
	for (uint16_t q = 0; rc == 0 && q < d->queues; q++)
		rc = rte_eth_tx_queue_setup(d->port, q, FD_DESC, SOCKET_ID_ANY, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(d->port);
	if (rc != 0) {
		FG_LOG_ERR(FD, "--dpdk: port set-up failed: %s", strerror(-rc));
		return rc;
	}
	d->port_up = true;
	/* memif's link comes up once the client has joined the server */
	for (unsigned ms = 0; ms < FD_LINK_WAIT_MS; ms += 10) {
		if (rte_eth_link_get_nowait(d->port, &link) == 0 && link.link_status)
			return lacp_wait(d);
		usleep(10 * 1000);
	}
	FG_LOG_ERR(FD, "--dpdk: the link stayed down for %u s (is the other end running?)",
		   FD_LINK_WAIT_MS / 1000);
	return -ETIMEDOUT;
}

static int stack_start(struct feed_dp *d, const struct fg_tcp_app_ops *ops, void *app,
		       unsigned max_conns, uint32_t peer, const uint8_t *peer_mac)
{
	struct fg_net_config nc = { 0 };
	struct fg_tcp_config tc = { 0 };
	struct rte_ether_addr mac;

	rte_eth_macaddr_get(d->port, &mac);
	memcpy(nc.mac, mac.addr_bytes, 6);
	nc.ipv4[0] = d->addr;
	nc.n_ipv4 = 1;
	nc.hash_seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	d->net = fg_net_create(&nc, &feed_port_ops, d, &d->st);
	if (!d->net)
		return -EINVAL;
	if (peer_mac && fg_net_arp_static(d->net, peer, peer_mac) != 0)
		return -EINVAL;
	tc.max_conns = FG_MAX(16u, 2 * max_conns);
	tc.syn_backlog = FG_MIN(256u, tc.max_conns);
	/* the sender's side: the peers' answers are small, the articles big */
	tc.sndbuf = 1u << 20;
	tc.rcvbuf = 256u << 10;
	tc.secret = nc.hash_seed * 3;
	d->tcp = fg_tcp_create(d->net, &tc, ops, app);
	return d->tcp ? 0 : -EINVAL;
}

struct feed_dp *feed_dp_open(const struct feed_dp_params *p, const struct fg_tcp_app_ops *ops,
			     void *app, unsigned max_conns)
{
	struct feed_dp *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return NULL;
	d->queues = (uint16_t)FG_MAX(1u, FG_MIN(p->queues, FD_MAX_QUEUES));
	d->addr = p->addr;
	rc = eal_start(d, p);
	if (rc == 0)
		rc = port_find(d, p->port);
	if (rc == 0)
		rc = port_start(d);
	if (rc == 0)
		rc = stack_start(d, ops, app, max_conns, p->peer, p->peer_mac);
	if (rc != 0) {
		feed_dp_close(d);
		return NULL;
	}
	return d;
}

void feed_dp_close(struct feed_dp *d)
{
	if (!d)
		return;
	fg_tcp_destroy(d->tcp);
	fg_net_destroy(d->net);
	for (uint16_t q = 0; q < FD_MAX_QUEUES; q++)
		for (unsigned i = 0; i < d->txq[q].n; i++)
			rte_pktmbuf_free(d->txq[q].pending[i]);
	if (d->tx_dropped)
		FG_LOG_NOTICE(FD, "--dpdk: %llu frames dropped with a full TX ring (sent again by TCP)",
			      (unsigned long long)d->tx_dropped);
	if (d->port_up) {
		rte_eth_dev_stop(d->port);
		rte_eth_dev_close(d->port);
	}
	rte_mempool_free(d->pool);
	if (d->eal_up)
		rte_eal_cleanup();
	free(d);
}

/* ---------------------------------------------------------------- the loop */

unsigned feed_dp_poll(struct feed_dp *d, uint64_t now)
{
	struct rte_mbuf *mb[FD_BURST];
	struct fg_rx_frame fr[FD_BURST];
	unsigned got = 0;

	for (uint16_t q = 0; q < d->queues; q++)
		txq_drain(d, q);
	for (uint16_t q = 0; q < d->queues; q++) {
		uint16_t n = rte_eth_rx_burst(d->port, q, mb, FD_BURST);
		unsigned k = 0;

		for (unsigned i = 0; i < n; i++) {
			if (mb[i]->nb_segs != 1) {
				rte_pktmbuf_free(mb[i]);
				continue;
			}
			fr[k].data = rte_pktmbuf_mtod(mb[i], uint8_t *);
			fr[k].len = mb[i]->data_len;
			fr[k].flags = 0;	/* no offload: checksums in software */
			fr[k].handle = mb[i];
			k++;
		}
		if (k)
			fg_net_rx(d->net, fr, k, now);
		got += n;
	}
	/* every pass: what the app sent outside a burst goes out now */
	fg_net_poll(d->net, now);
	return got;
}

void feed_dp_linger(struct feed_dp *d, uint64_t max_ns)
{
	uint64_t end = fg_mono_ns() + max_ns;

	while (fg_tcp_conns_in_use(d->tcp) && fg_mono_ns() < end)
		feed_dp_poll(d, fg_mono_ns());
}

struct fg_tcp *feed_dp_tcp(struct feed_dp *d)
{
	return d->tcp;
}

uint32_t feed_dp_addr(const struct feed_dp *d)
{
	return d->addr;
}

