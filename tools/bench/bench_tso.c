/* SPDX-License-Identifier: MIT */
/*
 * bench_tso.c — the userspace TCP sending an article by reference through
 * a real net_tap port to the box's kernel, with TSO or one segment a
 * frame: what tests/integration/90_dp_tso.py checks (the kernel's socket
 * gets exactly the octets) and a figure (the sender's CPU per MB, TSO
 * against none, as two runs of one invocation of the test).
 *
 *   bench_tso --iface NAME --addr A --peer B [--port P] [--mb N] [--tso on|off]
 *
 * Run it in a network namespace of its own (the test makes one):
 *   1. the EAL creates the tap NAME (net_tap, one queue), the port is set
 *      up with MULTI_SEGS and, with --tso on, TSO and the IPv4/TCP
 *      checksum offloads it needs (net_tap does all three in software in
 *      its driver); "ready" is printed;
 *   2. the caller gives the kernel side address B/24, a listener on
 *      B:P (default 119), and writes a line to stdin;
 *   3. the TCP (address A) connects to B:P and sends a 1 MiB article held
 *      in 1448-octet mbufs by reference (fg_tcp_send_ref) N times (the
 *      pattern byte i is (i * 7 + (i >> 11)) & 255, from i = 0 at each
 *      copy), then closes;
 *   4. once the close completes it prints one "key value" line each:
 *      the octets, the thread's CPU seconds from connect to close, and
 *      the TCP's counters (tcp_tx_tso_frames, tcp_tx_tso_segs,
 *      tcp_tx_data_segs, tcp_tx_referenced_octets, tcp_retrans_segs).
 * Exit 0, or 1 with the reason on stderr. Nothing is timed against the
 * clock but a 60 s bound on the whole run.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "floodgate/config.h"
#include "floodgate/mbuf.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

#define ART (1u << 20)
#define PIECE 1448u
#define N_ART ((ART + PIECE - 1) / PIECE)
#define POOL_MBUFS 8191
#define IND_MBUFS 8191
#define DESC 1024
#define BURST 32
#define SEGS 17			/* a frame's mbufs, as floodgate's port caps them */
#define BOUND_NS (60ull * 1000000000ull)

struct ts {
	uint16_t port;
	struct rte_mempool *pool, *ind, *art_pool;
	struct rte_mbuf *art[N_ART];
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	struct fg_tcp_conn *conn;
	bool connected, closed, csum;
	uint16_t mtu;			/* net_tap's: bounds a TSO segment with its headers */
	int token;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static double thread_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint8_t *ts_tx_alloc(void *port, uint32_t size, void **h)
{
	return fg_mbuf_tx_alloc(((struct ts *)port)->pool, size, h);
}

static int ts_tx_attach(void *port, void *frame, void *piece, const uint8_t *data, uint32_t len)
{
	return fg_mbuf_tx_attach(((struct ts *)port)->ind, frame, piece, data, len);
}

/* Frames out as port.c sends them: lengths, offload flags, the ring
 * (retried while it is full; what it never takes is freed). */
static unsigned ts_tx_burst(void *port, struct fg_tx_frame *f, unsigned n)
{
	struct ts *s = port;
	struct rte_mbuf *m[FG_NET_TX_BURST];
	unsigned sent = 0;

	for (unsigned i = 0; i < n; i++) {
		m[i] = f[i].handle;
		fg_mbuf_tx_lengths(m[i], f[i].len, f[i].flags & FG_TX_CHAINED);
		if (f[i].flags & FG_TX_TSO) {
			fg_mbuf_tx_tso(m[i], f[i].flags & FG_TX_IPV6, f[i].tso_segsz, s->mtu);
		} else if (f[i].flags & FG_TX_CSUM_OFFLOAD) {
			m[i]->l2_len = FG_ETH_HLEN;
			m[i]->l3_len = (f[i].data[FG_ETH_HLEN] & 15u) * 4u;
			m[i]->l4_len = (f[i].data[FG_ETH_HLEN + m[i]->l3_len + 12] >> 4) * 4u;
			m[i]->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
					  RTE_MBUF_F_TX_TCP_CKSUM;
		}
	}
	for (unsigned tries = 0; sent < n && tries < 1000; tries++)
		sent += rte_eth_tx_burst(s->port, 0, m + sent, (uint16_t)(n - sent));
	for (unsigned i = sent; i < n; i++)
		rte_pktmbuf_free(m[i]);
	return sent;
}

static struct fg_buf_sum *ts_buf_sum(void *port, void *h)
{
	(void)port, (void)h;
	return NULL;
}

static const struct fg_port_ops ts_ops = {
	.buf_ref = fg_mbuf_ref, .buf_unref = fg_mbuf_unref, .tx_alloc = ts_tx_alloc,
	.tx_free = fg_mbuf_unref, .tx_burst = ts_tx_burst, .tx_attach = ts_tx_attach,
	.buf_sum = ts_buf_sum,
};

static uint32_t ts_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	uint32_t all = 0;

	(void)ctx, (void)c;
	for (unsigned i = 0; i < n; i++)
		all += iov[i].len;
	return all;
}

static void ts_connect(void *ctx, struct fg_tcp_conn *c)
{
	(void)c;
	((struct ts *)ctx)->connected = true;
}

static void ts_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	struct ts *s = ctx;

	(void)c;
	if (why != FG_TCP_CLOSE_FIN)
		fprintf(stderr, "bench_tso: connection closed (reason %d)\n", (int)why);
	s->closed = true;
	s->conn = NULL;
}

static const struct fg_tcp_app_ops ts_app = {
	.on_data = ts_data, .on_close = ts_close, .on_connect = ts_connect,
};

/* One receive burst into net, then its timers. */
static void ts_poll(struct ts *s)
{
	struct rte_mbuf *m[BURST];
	struct fg_rx_frame fr[BURST];
	uint16_t n = rte_eth_rx_burst(s->port, 0, m, BURST);
	uint64_t now = now_ns();

	for (uint16_t i = 0; i < n; i++) {
		uint64_t ol = m[i]->ol_flags;

		memset(&fr[i], 0, sizeof(fr[i]));
		fr[i].data = rte_pktmbuf_mtod(m[i], uint8_t *);
		fr[i].len = m[i]->data_len;
		fr[i].handle = m[i];
		if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
			fr[i].flags |= FG_RX_IP_CSUM_OK;
		if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
			fr[i].flags |= FG_RX_L4_CSUM_OK;
	}
	if (n)
		fg_net_rx(s->net, fr, n, now);
	fg_net_poll(s->net, now);
}

static int port_setup(struct ts *s, bool tso)
{
	const uint64_t ck = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info di;

	if (rte_eth_dev_count_avail() != 1 || rte_eth_dev_info_get(0, &di) != 0)
		return -1;
	s->port = 0;
	if (!(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		fprintf(stderr, "bench_tso: the port cannot chain\n");
		return -1;
	}
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	s->csum = (di.tx_offload_capa & ck) == ck;
	if (s->csum)
		conf.txmode.offloads |= ck;
	if (tso) {
		if (!s->csum || !(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO)) {
			fprintf(stderr, "bench_tso: the port has no TSO\n");
			return -1;
		}
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
	}
	s->pool = rte_pktmbuf_pool_create("ts_pool", POOL_MBUFS, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	s->ind = rte_pktmbuf_pool_create("ts_ind", IND_MBUFS, 64, 0, 0, (int)rte_socket_id());
	s->art_pool = rte_pktmbuf_pool_create("ts_art", N_ART + 63, 0, 0,
					      RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!s->pool || !s->ind || !s->art_pool ||
	    rte_eth_dev_configure(s->port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(s->port, 0, DESC, SOCKET_ID_ANY, NULL, s->pool) != 0 ||
	    rte_eth_tx_queue_setup(s->port, 0, DESC, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(s->port) != 0 || rte_eth_dev_get_mtu(s->port, &s->mtu) != 0)
		return -1;
	for (uint32_t i = 0; i < N_ART; i++) {
		uint32_t at = i * PIECE, k = FG_MIN(PIECE, ART - at);
		uint8_t *d;

		s->art[i] = rte_pktmbuf_alloc(s->art_pool);
		if (!s->art[i] || !(d = (uint8_t *)rte_pktmbuf_append(s->art[i], (uint16_t)k)))
			return -1;
		for (uint32_t j = 0; j < k; j++)
			d[j] = (uint8_t)((at + j) * 7 + ((at + j) >> 11));
	}
	return 0;
}

static int stack_setup(struct ts *s, uint32_t addr, bool tso)
{
	struct fg_net_config nc = { .ipv4 = { addr }, .n_ipv4 = 1, .hash_seed = 42,
				    .tx_max_segs = SEGS, .tx_csum_offload = s->csum,
				    .tso_max = tso ? 65535u : 0 };
	struct fg_tcp_config tc = { .max_conns = 4, .secret = 7 };
	struct rte_ether_addr mac;

	rte_eth_macaddr_get(s->port, &mac);
	memcpy(nc.mac, mac.addr_bytes, 6);
	s->net = fg_net_create(&nc, &ts_ops, s, &s->st);
	s->tcp = s->net ? fg_tcp_create(s->net, &tc, &ts_app, s) : NULL;
	return s->tcp ? 0 : -1;
}

/* Steps 3 and 4. */
static int run(struct ts *s, uint32_t addr, uint32_t peer, uint16_t port, unsigned copies)
{
	static struct fg_iov iov[N_ART];
	struct fg_endpoint l = { .family = AF_INET }, p = { .family = AF_INET, .port = port };
	uint64_t t0 = now_ns();
	unsigned queued = 0;
	double c0, c1;
	int err = 0;

	memcpy(l.addr, &addr, 4);
	memcpy(p.addr, &peer, 4);
	for (uint32_t i = 0; i < N_ART; i++)
		iov[i] = (struct fg_iov){ rte_pktmbuf_mtod(s->art[i], const uint8_t *),
					  s->art[i]->data_len, s->art[i] };
	c0 = thread_s();
	s->conn = fg_tcp_connect(s->tcp, &l, &p, s, t0, &err);
	if (!s->conn) {
		fprintf(stderr, "bench_tso: connect: %d\n", err);
		return -1;
	}
	while (!s->closed && now_ns() - t0 < BOUND_NS) {
		ts_poll(s);
		while (s->connected && s->conn && queued < copies &&
		       fg_tcp_send_ref(s->conn, iov, N_ART) == 0)
			if (++queued == copies)
				fg_tcp_close(s->conn);
	}
	c1 = thread_s();
	{
		struct rte_eth_stats es;

		if (rte_eth_stats_get(s->port, &es) == 0)
			fprintf(stderr, "bench_tso: port: %lu frames out, %lu errors\n",
				es.opackets, es.oerrors);
	}
	if (!s->closed || queued < copies) {
		fprintf(stderr, "bench_tso: %u of %u copies queued, %s (TSO frames %lu, data "
			"frames %lu, retransmitted %lu, RTOs %lu)\n", queued, copies,
			s->closed ? "closed" : "not closed within 60 s",
			s->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES], s->st.ctr[FG_CTR_TCP_TX_DATA_SEGS],
			s->st.ctr[FG_CTR_TCP_RETRANS_SEGS], s->st.ctr[FG_CTR_TCP_RTO_EXPIRED]);
		return -1;
	}
	printf("octets %llu\ncpu_s %.6f\n", (unsigned long long)copies * ART, c1 - c0);
	printf("tcp_tx_tso_frames %lu\ntcp_tx_tso_segs %lu\ntcp_tx_data_segs %lu\n"
	       "tcp_tx_referenced_octets %lu\ntcp_retrans_segs %lu\n",
	       s->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES], s->st.ctr[FG_CTR_TCP_TX_TSO_SEGS],
	       s->st.ctr[FG_CTR_TCP_TX_DATA_SEGS], s->st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS],
	       s->st.ctr[FG_CTR_TCP_RETRANS_SEGS]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *iface = NULL, *a = NULL, *b = NULL;
	unsigned mb = 8, port = 119;
	bool tso = true;
	char vdev[96], line[16];
	static struct ts s;
	uint32_t addr, peer;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--iface"))
			iface = argv[i + 1];
		else if (!strcmp(argv[i], "--addr"))
			a = argv[i + 1];
		else if (!strcmp(argv[i], "--peer"))
			b = argv[i + 1];
		else if (!strcmp(argv[i], "--port"))
			port = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--mb"))
			mb = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--tso"))
			tso = !strcmp(argv[i + 1], "on");
		else
			iface = NULL, i = argc;
	}
	if (!iface || !a || !b || inet_pton(AF_INET, a, &addr) != 1 ||
	    inet_pton(AF_INET, b, &peer) != 1 || !mb || !port || port > 65535) {
		fprintf(stderr, "usage: bench_tso --iface NAME --addr A --peer B [--port P] "
				"[--mb N] [--tso on|off]\n");
		return 2;
	}
	snprintf(vdev, sizeof(vdev), "net_tap0,iface=%s", iface);
	{
		static char args[] = "--no-huge -m 256 --no-pci --no-shconf --no-telemetry -l 0 "
				     "--log-level lib.eal:error --vdev";
		char *eal[16], *save = NULL;
		int n = 0;

		eal[n++] = argv[0];
		for (char *t = strtok_r(args, " ", &save); t; t = strtok_r(NULL, " ", &save))
			eal[n++] = t;
		eal[n++] = vdev;
		eal[n] = NULL;
		if (rte_eal_init(n, eal) < 0) {
			fprintf(stderr, "bench_tso: EAL did not start\n");
			return 1;
		}
	}
	if (port_setup(&s, tso) != 0 || stack_setup(&s, addr, tso) != 0) {
		fprintf(stderr, "bench_tso: set-up failed\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (run(&s, addr, peer, (uint16_t)port, mb) != 0)
		return 1;
	fflush(stdout);
	fg_tcp_destroy(s.tcp);
	fg_net_destroy(s.net);
	for (uint32_t i = 0; i < N_ART; i++)
		rte_pktmbuf_free(s.art[i]);
	rte_eth_dev_stop(s.port);
	rte_eth_dev_close(s.port);
	return 0;
}
