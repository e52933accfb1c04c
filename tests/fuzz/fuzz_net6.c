/* SPDX-License-Identifier: MIT */
/*
 * fuzz_net6.c — received IPv6 frames into net (ipv6.c) and TCP: the
 * extension-header walk, ICMPv6 (echo, Neighbour Discovery, Packet Too
 * Big) and TCP segments over IPv6, on an instance that runs DAD and
 * resolves the peer for an active open (the neighbour cache).
 *
 * Input: a sequence of records
 *     op (1)  len (2, big-endian)  body (len)
 * op & 0x0f  advances the clock by that many 100 ms steps first (DAD's
 *            deadline, TCP's timers);
 * op & 0x30  0: body is a whole Ethernet frame, fed as is;
 *            1: body is an IPv6 payload: body[0] is the fixed header's
 *               next header, the rest follows a header from the peer to
 *               our address (extension chains reach the walk);
 *            2: the same with the ICMPv6 checksum fixed (body[0] is then
 *               the message type), hop limit 255 (ND's);
 *            3: a TCP header + payload over IPv6 from the peer, checksum
 *               fixed (the handshake and data reach TCP);
 * op & 0x40  marks the frame "checksums verified by the NIC";
 * op & 0x80  the destination is the all-nodes group instead (kinds 1-2).
 * At the end every packet buffer must be back in the pool.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

static const uint8_t our_mac[6] = { 2, 0, 0, 0, 0, 2 }, peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t our_ip[16] = { 0xfd, 0, 0, 0xfd, [15] = 2 };
static const uint8_t peer_ip[16] = { 0xfd, 0, 0, 0xfd, [15] = 1 };
static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };

static struct {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	uint64_t now;
	bool opened;			/* the active open (open_once) */
} Z;

static void sink(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	(void)arg, (void)f, (void)len, (void)flags;
}

static void *on_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	(void)c, (void)peer, (void)local;
	return app;
}

static uint32_t on_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	uint32_t total = 0;

	(void)ctx;
	for (unsigned i = 0; i < n; i++)
		total += iov[i].len;
	/* answer with what came: segments go out, PTB has something to quote */
	fg_tcp_send(c, iov[0].base, iov[0].len);
	return total;
}

static void on_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)c, (void)why;
}

static const struct fg_tcp_app_ops ops = {
	.on_accept = on_accept, .on_data = on_data, .on_close = on_close,
};

static void feed(const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct fg_rx_frame fr;

	if (fg_memport_rx_frame(Z.mp, frame, len, &fr) < 0)
		return;
	fr.flags = flags;
	fg_net_rx(Z.net, &fr, 1, Z.now);
}

/* Kinds 1 and 2: an IPv6 packet around `body`. */
static uint32_t wrap_ip6(uint8_t *f, const uint8_t *body, uint32_t len, bool icmp, bool group)
{
	const uint8_t *dst = group ? all_nodes : our_ip;
	uint8_t *p = f + FG_ETH_HLEN + FG_IP6_HLEN;

	if (icmp) {
		fg_net_build_ipv6(f, our_mac, peer_mac, peer_ip, dst, FG_IP6_NH_ICMP6, len, 255);
		memcpy(p, body, len);
		if (len >= 4) {
			fg_wr16(p + 2, 0);
			fg_wr16(p + 2, fg_csum_fold(fg_csum_add(
				fg_ipv6_pseudo_sum(peer_ip, dst, FG_IP6_NH_ICMP6, len), p, len)));
		}
		return FG_ETH_HLEN + FG_IP6_HLEN + len;
	}
	fg_net_build_ipv6(f, our_mac, peer_mac, peer_ip, dst, body[0], len - 1, 64);
	memcpy(p, body + 1, len - 1);
	return FG_ETH_HLEN + FG_IP6_HLEN + len - 1;
}

/* Kind 3: a TCP segment over IPv6, the header's fields as fuzzed. */
static uint32_t wrap_tcp6(uint8_t *f, const uint8_t *tcp, uint32_t len)
{
	struct fg_craft_tcp c = {
		.dst_mac = our_mac, .src_mac = peer_mac, .src6 = peer_ip, .dst6 = our_ip,
		.sport = fg_rd16(tcp), .dport = 119, .seq = fg_rd32(tcp + 4),
		.ack = fg_rd32(tcp + 8), .flags = tcp[13], .wnd = fg_rd16(tcp + 14),
	};
	uint32_t hl = (uint32_t)(tcp[12] >> 4) * 4;

	if (hl < 20 || hl > len)
		hl = 20;
	c.opts = tcp + 20;
	c.optlen = (hl - 20) & ~3u;
	c.data = tcp + 20 + c.optlen;
	c.len = len - 20 - c.optlen;
	return fg_craft_tcp_frame(f, &c);
}

static void setup(void)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;

	memset(&Z, 0, sizeof(Z));
	Z.now = 1000000000ull;
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, our_mac, 6);
	memcpy(nc.ipv6[0], our_ip, 16);
	nc.n_ipv6 = 1;
	nc.nd_announce = true;
	nc.dad_ns = 200000000ull;
	memset(&tc, 0, sizeof(tc));
	tc.listen[0].port = 119;
	tc.listen[0].family = AF_INET6;
	tc.n_listen = 1;
	tc.max_conns = 8;
	tc.syn_backlog = 4;
	tc.syn_backlog_per_peer = 2;
	tc.sndbuf = 4096;
	tc.rcvbuf = 16384;
	tc.rx_segs = 64;
	tc.rx_segs_per_conn = 32;
	tc.ooo_segs_per_conn = 8;
	tc.timer_slots = 64;
	tc.secret = 1;
	Z.mp = fg_memport_create(256, 2048, sink, NULL);
	Z.net = fg_net_create(&nc, fg_memport_ops(), Z.mp, &Z.st);
	Z.tcp = Z.net ? fg_tcp_create(Z.net, &tc, &ops, &Z) : NULL;
	if (!Z.tcp)
		abort();
	fg_net_poll(Z.net, Z.now);	/* DAD's probes go out */
}

/* Once DAD is over (our address usable): an active open to the peer. Its
 * Neighbour Solicitation goes out, and an advertisement for the peer
 * (kind 2, type 136) is learned into the neighbour cache. */
static void open_once(void)
{
	struct fg_endpoint local = { .family = AF_INET6 };
	struct fg_endpoint peer = { .family = AF_INET6, .port = 119 };

	if (Z.opened || fg_net_ipv6_dad(Z.net) != 0)
		return;
	memcpy(local.addr, our_ip, 16);
	memcpy(peer.addr, peer_ip, 16);
	if (!fg_tcp_connect(Z.tcp, &local, &peer, &Z, Z.now, NULL))
		abort();
	Z.opened = true;
}

static void teardown(void)
{
	fg_tcp_destroy(Z.tcp);
	fg_net_destroy(Z.net);
	if (fg_memport_in_use(Z.mp) != 0)
		abort();
	fg_memport_destroy(Z.mp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[2048];
	size_t i = 0;

	setup();
	while (i + 3 <= size) {
		uint8_t op = data[i];
		uint32_t len = (uint32_t)data[i + 1] << 8 | data[i + 2];
		unsigned kind = (op >> 4) & 3;
		uint32_t flags = (op & 0x40) ? FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK : 0;

		i += 3;
		if (len > size - i)
			len = (uint32_t)(size - i);
		if (op & 0x0f) {
			Z.now += (op & 0x0fu) * 100000000ull;
			fg_net_poll(Z.net, Z.now);
		}
		open_once();
		if (kind == 0)
			feed(data + i, len, flags);
		else if (kind < 3 && len >= 1 && len <= 1400)
			feed(f, wrap_ip6(f, data + i, len, kind == 2, op & 0x80), flags);
		else if (kind == 3 && len >= 20 && len <= 1400)
			feed(f, wrap_tcp6(f, data + i, len), flags);
		i += len;
	}
	Z.now += 700ull * 1000000000ull;	/* let every timer run out */
	fg_net_poll(Z.net, Z.now);
	teardown();
	return 0;
}
