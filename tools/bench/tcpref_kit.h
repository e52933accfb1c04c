/* SPDX-License-Identifier: MIT */
/*
 * tcpref_kit.h — the userspace TCP sending articles out of DPDK mbufs, no
 * device and no kernel in the path: what bench_tcpref times and
 * tests/unit/test_tcp_mbuf checks.
 *
 * The port is mbuf.h's, as floodgate's port.c uses it: TX headers from a
 * pool of their own, pieces attached as indirect mbufs from a small pool
 * (fg_mbuf_tx_attach), the head's lengths set at tx_burst
 * (fg_mbuf_tx_lengths). The article lies in "receive" mbufs of 1448
 * octets each, filled once, in `copies` copies (more of them than the
 * caches hold, so that a send reads memory as one of a real feed's
 * articles would); every send queues the next copy by reference
 * (fg_tcp_send_ref) behind its TAKETHIS line, and after it the
 * terminator, both copied. With csum_offload the TCP leaves the
 * checksums to the "port", as it does for a NIC that computes them.
 *
 * The peer is this kit, on the far side of tx_burst:
 *   1. it opens the connection (SYN with MSS 1460 and window scale 7);
 *   2. each frame the TCP sends is read where it lies: the head's headers
 *      for seq and length, then handed to `on_frame` (the unit test looks
 *      at the chain and copies the bytes out; the benchmark does not),
 *      then freed, as a NIC frees what it sent;
 *   3. after every burst it acknowledges everything in order so far, with
 *      an open window: no loss, so both ways of sending differ only in
 *      how frames are built.
 * One lcore, the caller's clock (a counter: no timer ever fires).
 */
#ifndef FLOODGATE_TCPREF_KIT_H
#define FLOODGATE_TCPREF_KIT_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "floodgate/mbuf.h"
#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"
#include "floodgate/wire.h"

#define TK_PIECE 1448u			/* octets of article per receive mbuf */
#define TK_PORT 119
#define TK_PEER_PORT 40000
#define TK_PEER_ISN 1000u
#define TK_IND_MBUFS 4095		/* indirect mbufs */
#define TK_TX_MBUFS 4095		/* TX header mbufs */

struct tk;
typedef void tk_frame_fn(struct tk *k, struct rte_mbuf *m, uint32_t seq, uint32_t plen,
			 const uint8_t *tcp_hdr);

struct tk {
	struct rte_mempool *rx, *tx, *ind;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	struct fg_tcp_conn *conn;
	uint64_t now;
	uint8_t mac[6], peer_mac[6];
	uint32_t addr, peer;
	uint32_t iss;			/* the TCP's ISS, from its SYN-ACK */
	uint32_t rcv_nxt;		/* the peer's: next octet expected */
	bool synack_seen;
	struct rte_mbuf **art;		/* the article's receive mbufs, copy after copy */
	unsigned n_art;			/* mbufs of one copy */
	unsigned copies, next;		/* copies, and the one the next send takes */
	uint32_t art_len;
	int sum_off;			/* the mbufs' kept payload sums (tk_keep_sums); -1: none */
	tk_frame_fn *on_frame;		/* optional */
	void *arg;
	int token;
};

static void *tk_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	struct tk *k = app;

	(void)peer, (void)local;
	k->conn = c;
	return &k->token;
}

static uint32_t tk_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	uint32_t all = 0;

	(void)ctx, (void)c;
	for (unsigned i = 0; i < n; i++)
		all += iov[i].len;
	return all;
}

static void tk_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)c, (void)why;
}

static const struct fg_tcp_app_ops tk_app_ops = {
	.on_accept = tk_accept, .on_data = tk_data, .on_close = tk_close,
};

static uint8_t *tk_tx_alloc(void *port, uint32_t size, void **h)
{
	return fg_mbuf_tx_alloc(((struct tk *)port)->tx, size, h);
}

static int tk_tx_attach(void *port, void *frame, void *piece, const uint8_t *data, uint32_t len)
{
	return fg_mbuf_tx_attach(((struct tk *)port)->ind, frame, piece, data, len);
}

/* The wire: each frame read by the peer and freed (step 2). */
static unsigned tk_tx_burst(void *port, struct fg_tx_frame *f, unsigned n)
{
	struct tk *k = port;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = f[i].handle;
		const uint8_t *ip, *th;
		uint32_t ihl, plen, seq;

		fg_mbuf_tx_lengths(m, f[i].len, f[i].flags & FG_TX_CHAINED);
		ip = rte_pktmbuf_mtod(m, const uint8_t *) + FG_ETH_HLEN;
		ihl = (ip[0] & 15u) * 4;
		th = ip + ihl;
		plen = (uint32_t)(ip[2] << 8 | ip[3]) - ihl - (th[12] >> 4) * 4u;
		seq = fg_rd32(th + 4);
		if (th[13] & 0x02) {	/* SYN-ACK */
			k->iss = seq;
			k->rcv_nxt = seq + 1;
			k->synack_seen = true;
		}
		if (k->on_frame)
			k->on_frame(k, m, seq, plen, th);
		if (plen && seq == k->rcv_nxt)
			k->rcv_nxt += plen;
		rte_pktmbuf_free(m);
	}
	return n;
}

static struct fg_buf_sum *tk_buf_sum(void *port, void *h)
{
	return fg_mbuf_buf_sum(((struct tk *)port)->sum_off, h);
}

static const struct fg_port_ops tk_port_ops = {
	.buf_ref = fg_mbuf_ref, .buf_unref = fg_mbuf_unref, .tx_alloc = tk_tx_alloc,
	.tx_free = fg_mbuf_unref, .tx_burst = tk_tx_burst, .tx_attach = tk_tx_attach,
	.buf_sum = tk_buf_sum,
};

/* A segment from the peer (flags, its sequence number, the ack). */
static void tk_peer_seg(struct tk *k, uint8_t flags, uint32_t seq, uint32_t ack,
			const uint8_t *opts, unsigned optlen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(k->rx);
	struct fg_rx_frame fr = { 0 };
	struct fg_craft_tcp c = {
		.dst_mac = k->mac, .src_mac = k->peer_mac, .src = k->peer, .dst = k->addr,
		.sport = TK_PEER_PORT, .dport = TK_PORT, .seq = seq, .ack = ack, .flags = flags,
		.wnd = 65535, .opts = opts, .optlen = optlen,
	};

	if (!m)
		return;
	fr.data = rte_pktmbuf_mtod(m, uint8_t *);
	fr.len = fg_craft_tcp_frame(fr.data, &c);
	m->data_len = (uint16_t)fr.len;
	m->pkt_len = fr.len;
	fr.handle = m;
	fg_net_rx(k->net, &fr, 1, ++k->now);
}

/* The peer acknowledges what it has (step 3). */
static void tk_ack(struct tk *k)
{
	tk_peer_seg(k, 0x10, TK_PEER_ISN + 1, k->rcv_nxt, NULL, 0);
}

/* Pools, the instance, the article, the handshake: 0 or -1. tx_segs: the
 * frame's mbufs at most (1: every octet copied). */
static int tk_open(struct tk *k, const char *name, unsigned tx_segs, bool csum_offload,
		   unsigned copies, uint32_t art_len, const uint8_t *art)
{
	static const uint8_t syn_opts[8] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7 };
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	char pn[RTE_MEMPOOL_NAMESIZE];

	memset(k, 0, sizeof(*k));
	k->sum_off = -1;
	k->now = 1;
	memcpy(k->mac, (const uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	memcpy(k->peer_mac, (const uint8_t[]){ 2, 0, 0, 0, 0, 1 }, 6);
	inet_pton(AF_INET, "198.18.0.2", &k->addr);
	inet_pton(AF_INET, "198.18.0.1", &k->peer);
	k->n_art = (art_len + TK_PIECE - 1) / TK_PIECE;
	k->copies = FG_MAX(copies, 1u);
	snprintf(pn, sizeof(pn), "%.16s_rx", name);
	k->rx = rte_pktmbuf_pool_create(pn, k->n_art * k->copies + 1023, 0, 0,
					2048 + RTE_PKTMBUF_HEADROOM, (int)rte_socket_id());
	snprintf(pn, sizeof(pn), "%.16s_tx", name);
	k->tx = rte_pktmbuf_pool_create(pn, TK_TX_MBUFS, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
					(int)rte_socket_id());
	snprintf(pn, sizeof(pn), "%.16s_ind", name);
	k->ind = rte_pktmbuf_pool_create(pn, TK_IND_MBUFS, 0, 0, 0, (int)rte_socket_id());
	k->art = calloc((size_t)k->n_art * k->copies, sizeof(*k->art));
	if (!k->rx || !k->tx || !k->ind || !k->art)
		return -1;
	for (unsigned i = 0; i < k->n_art * k->copies; i++) {
		uint32_t at = (i % k->n_art) * TK_PIECE, n = FG_MIN(TK_PIECE, art_len - at);

		k->art[i] = rte_pktmbuf_alloc(k->rx);
		if (!k->art[i])
			return -1;
		memcpy(rte_pktmbuf_append(k->art[i], (uint16_t)n), art + at, n);
	}
	k->art_len = art_len;
	nc = (struct fg_net_config){ .ipv4 = { k->addr }, .n_ipv4 = 1, .hash_seed = 42,
				     .tx_max_segs = tx_segs, .tx_csum_offload = csum_offload };
	memcpy(nc.mac, k->mac, 6);
	k->net = fg_net_create(&nc, &tk_port_ops, k, &k->st);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	tc.listen[0] = (struct fg_endpoint){ .family = AF_INET, .port = TK_PORT };
	tc.n_listen = 1;
	tc.rcvbuf = 1u << 20;
	tc.secret = 7;
	k->tcp = k->net ? fg_tcp_create(k->net, &tc, &tk_app_ops, k) : NULL;
	if (!k->tcp)
		return -1;
	fg_net_arp_static(k->net, k->peer, k->peer_mac);
	tk_peer_seg(k, 0x02, TK_PEER_ISN, 0, syn_opts, sizeof(syn_opts));
	if (!k->synack_seen)
		return -1;
	tk_peer_seg(k, 0x10, TK_PEER_ISN + 1, k->iss + 1, NULL, 0);
	return k->conn ? 0 : -1;
}

/* One article sent and acknowledged: TAKETHIS line, the article by
 * reference, the terminator. The octets queued, or 0 when the TCP
 * refused them or the peer could not get them all. */
static uint32_t tk_send_article(struct tk *k, struct fg_iov *iov)
{
	static const char line[] = "TAKETHIS <bench@tcpref>\r\n", end[] = ".\r\n";
	uint32_t want, rounds = 0;

	struct rte_mbuf **a = k->art + (size_t)k->n_art * k->next;

	k->next = (k->next + 1) % k->copies;
	iov[0] = (struct fg_iov){ (const uint8_t *)line, sizeof(line) - 1, NULL };
	for (unsigned i = 0; i < k->n_art; i++)
		iov[1 + i] = (struct fg_iov){ rte_pktmbuf_mtod(a[i], const uint8_t *),
					      a[i]->data_len, a[i] };
	iov[1 + k->n_art] = (struct fg_iov){ (const uint8_t *)end, sizeof(end) - 1, NULL };
	want = k->rcv_nxt + k->art_len + (uint32_t)(sizeof(line) - 1 + sizeof(end) - 1);
	if (fg_tcp_send_ref(k->conn, iov, k->n_art + 2) != 0)
		return 0;
	fg_net_poll(k->net, ++k->now);
	while (k->rcv_nxt != want && rounds++ < 1000000)
		tk_ack(k);
	tk_ack(k);	/* the last octets acknowledged: the references go */
	return k->rcv_nxt == want ? k->art_len + (uint32_t)(sizeof(line) + sizeof(end) - 2) : 0;
}

/* Each article mbuf keeps its payload's sum, as the receive path keeps
 * it when it verifies a segment in software (tcp_input.c checksum_ok; the
 * sum is taken there anyway): the TCP then derives the sums of what it
 * sends by reference instead of reading the article. 0, or -1. */
static int tk_keep_sums(struct tk *k)
{
	k->sum_off = fg_mbuf_sum_register();
	if (k->sum_off < 0)
		return -1;
	for (unsigned i = 0; i < k->n_art * k->copies; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(k->art[i], const uint8_t *);

		*fg_mbuf_buf_sum(k->sum_off, k->art[i]) = (struct fg_buf_sum){
			d, k->art[i]->data_len, fg_csum_add(0, d, k->art[i]->data_len), NULL, 0 };
	}
	return 0;
}

/* The EAL without hugepages, devices or shared files, on lcore 0:
 * 0, or -1 (the reason logged by DPDK). Once a process. */
static int tk_eal_start(const char *prog, unsigned memory_mb)
{
	static char args[192];
	char *eal[16], *save = NULL;
	int n = 0;

	snprintf(args, sizeof(args), "%s --no-huge -m %u --no-pci --no-shconf --no-telemetry "
		 "-l 0 --log-level lib.eal:error", prog, memory_mb);
	for (char *t = strtok_r(args, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save))
		eal[n++] = t;
	eal[n] = NULL;
	return rte_eal_init(n, eal) < 0 ? -1 : 0;
}

static void tk_close_all(struct tk *k)
{
	fg_tcp_destroy(k->tcp);
	fg_net_destroy(k->net);
	for (unsigned i = 0; k->art && i < k->n_art * k->copies; i++)
		rte_pktmbuf_free(k->art[i]);
	free(k->art);
	rte_mempool_free(k->ind);
	rte_mempool_free(k->tx);
	rte_mempool_free(k->rx);
}

#endif /* FLOODGATE_TCPREF_KIT_H */
