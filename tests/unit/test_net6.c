/* SPDX-License-Identifier: MIT */
/*
 * test_net6.c — IPv6 in net (ipv6.c): the fixed header's checks, the
 * extension-header walk and each of its refusals, fragments, dispatch to
 * an L4 handler with family AF_INET6, the pseudo-header checksum, ICMPv6
 * echo, Neighbour Discovery (answers to unicast and solicited-node NS,
 * DAD probes, the unsolicited NA, a conflict by NA or by another node's
 * probe, our own looped probe), Packet Too Big's checks, and an instance
 * without IPv6 (counted and dropped as before).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "fgtest.h"

#define PROTO_UDP 17

static const uint8_t our_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
static const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0, 9 };
static uint8_t our_ip[16], peer_ip[16], ll_ip[16], all_nodes[16], our_group[16];

/* what was transmitted */
#define MAX_TX 16
struct txrec {
	uint8_t f[2048];
	uint32_t len;
};

struct rec {
	unsigned inputs, errors;
	unsigned family;
	uint8_t src[16], dst[16];
	uint32_t len, mtu;
	uint8_t first;
};

static struct {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_stats st;
	struct txrec tx[MAX_TX];
	unsigned n_tx;
	struct rec r;
} X;

static void sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	(void)arg, (void)flags;
	if (X.n_tx < MAX_TX) {
		memcpy(X.tx[X.n_tx].f, frame, len);
		X.tx[X.n_tx].len = len;
	}
	X.n_tx++;
}

static void rec_input(void *ctx, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
		      const uint8_t *l4, uint32_t len, uint64_t now_ns)
{
	struct rec *r = ctx;

	(void)f, (void)now_ns;
	r->inputs++;
	r->family = l3->family;
	memcpy(r->src, l3->src, 16);
	memcpy(r->dst, l3->dst, 16);
	r->len = len;
	r->first = len ? l4[0] : 0;
}

static void rec_error(void *ctx, const struct fg_net_icmp_err *e, uint64_t now_ns)
{
	struct rec *r = ctx;

	(void)now_ns;
	r->errors++;
	r->family = e->family;
	r->mtu = e->mtu;
	memcpy(r->src, e->src, 16);
	memcpy(r->dst, e->dst, 16);
	r->len = e->len;
}

static const struct fg_net_l4_ops rec_ops = { .input = rec_input, .icmp_error = rec_error };

static void addrs(void)
{
	inet_pton(AF_INET6, "2001:db8::2", our_ip);
	inet_pton(AF_INET6, "2001:db8::1", peer_ip);
	inet_pton(AF_INET6, "fe80::11:22ff:fe33:4455", ll_ip);	/* 02:11:22 with U/L flipped */
	inet_pton(AF_INET6, "ff02::1", all_nodes);
	inet_pton(AF_INET6, "ff02::1:ff00:2", our_group);
}

static bool up_passive;	/* the next up_cfg() makes an observe-only instance */

static void up_cfg(bool v6, bool announce)
{
	struct fg_net_config nc = { 0 };

	memset(&X, 0, sizeof(X));
	addrs();
	memcpy(nc.mac, our_mac, 6);
	if (v6) {
		memcpy(nc.ipv6[0], our_ip, 16);
		nc.n_ipv6 = 1;
	}
	nc.nd_announce = announce;
	nc.dad_ns = 1000;
	nc.passive = up_passive;
	X.mp = fg_memport_create(64, 2048, sink, NULL);
	ck_assert_ptr_nonnull(X.mp);
	X.net = fg_net_create(&nc, fg_memport_ops(), X.mp, &X.st);
	ck_assert_ptr_nonnull(X.net);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &rec_ops, &X.r), 0);
}

static void up(void)
{
	up_cfg(true, false);
}

static void down(void)
{
	fg_net_destroy(X.net);
	ck_assert_uint_eq(fg_memport_in_use(X.mp), 0);
	fg_memport_destroy(X.mp);
}

/* A frame under construction: Ethernet + IPv6 header + `len` octets. */
static uint8_t F[2048];

static uint8_t *ip6(const uint8_t *src, const uint8_t *dst, uint8_t next, uint32_t plen,
		    uint8_t hlim)
{
	memset(F, 0, sizeof(F));
	fg_net_build_ipv6(F, our_mac, peer_mac, src, dst, next, plen, hlim);
	return F + FG_ETH_HLEN + FG_IP6_HLEN;
}

/* Checksums an ICMPv6 message of `len` octets at the upper layer. */
static void icmp6_sum(uint32_t off, uint32_t len)
{
	uint8_t *m = F + FG_ETH_HLEN + off;

	fg_wr16(m + 2, 0);
	fg_wr16(m + 2, fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(F + 22, F + 38, 58, len),
						m, len)));
}

static void rx(uint32_t len, uint64_t now)
{
	struct fg_rx_frame fr;

	ck_assert_int_eq(fg_memport_rx_frame(X.mp, F, len, &fr), 0);
	fg_net_rx(X.net, &fr, 1, now);
}

static void rx_from(const uint8_t *mac, uint32_t len, uint64_t now)
{
	memcpy(F + 6, mac, 6);
	rx(len, now);
}

/* An NS for `target` from `src` to `dst`, with a source link-layer option
 * of `slla` (or none), hop limit `hlim`. Returns the frame length. */
static uint32_t ns(const uint8_t *src, const uint8_t *dst, const uint8_t *target,
		   const uint8_t *slla, uint8_t hlim)
{
	uint32_t len = 24 + (slla ? 8 : 0);
	uint8_t *m = ip6(src, dst, 58, len, hlim);

	m[0] = 135;
	memcpy(m + 8, target, 16);
	if (slla) {
		m[24] = 1;
		m[25] = 1;
		memcpy(m + 26, slla, 6);
	}
	icmp6_sum(FG_IP6_HLEN, len);
	return FG_ETH_HLEN + FG_IP6_HLEN + len;
}

static uint32_t na(const uint8_t *src, const uint8_t *target, const uint8_t *tlla)
{
	uint8_t *m = ip6(src, all_nodes, 58, 32, 255);

	m[0] = 136;
	m[4] = 0x20;
	memcpy(m + 8, target, 16);
	m[24] = 2;
	m[25] = 1;
	memcpy(m + 26, tlla, 6);
	icmp6_sum(FG_IP6_HLEN, 32);
	return FG_ETH_HLEN + FG_IP6_HLEN + 32;
}

/* The transmitted ICMPv6 message `i`: its checksum verified. */
static const uint8_t *tx_icmp6(unsigned i, uint32_t *len)
{
	const uint8_t *f = X.tx[i].f, *ip = f + FG_ETH_HLEN;

	ck_assert_uint_eq(fg_rd16(f + 12), FG_ETHERTYPE_IPV6);
	ck_assert_uint_eq(ip[6], 58);
	*len = fg_rd16(ip + 4);
	ck_assert_uint_eq(X.tx[i].len, FG_ETH_HLEN + FG_IP6_HLEN + *len);
	ck_assert_uint_eq(fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(ip + 8, ip + 24, 58, *len),
						   ip + FG_IP6_HLEN, *len)), 0);
	return ip + FG_IP6_HLEN;
}

START_TEST(test_pseudo_sum)
{
	/* a header checksummed with the pseudo-sum verifies to 0 with it */
	uint8_t seg[21] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 19, 20, 21 };
	uint32_t sum;

	addrs();
	sum = fg_ipv6_pseudo_sum(peer_ip, our_ip, 6, sizeof(seg));
	fg_wr16(seg + 16, fg_csum_fold(fg_csum_add(sum, seg, sizeof(seg))));
	ck_assert_uint_eq(fg_csum_fold(fg_csum_add(sum, seg, sizeof(seg))), 0);
	/* another source, another sum */
	ck_assert_uint_ne(fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(our_ip, our_ip, 6, sizeof(seg)),
						   seg, sizeof(seg))), 0);
	/* the length is 32 bits wide (RFC 8200 8.1) */
	ck_assert_uint_ne(fg_ipv6_pseudo_sum(peer_ip, our_ip, 6, 0x10000),
			  fg_ipv6_pseudo_sum(peer_ip, our_ip, 6, 0));
}
END_TEST

START_TEST(test_link_local_and_groups)
{
	uint8_t ll[16], macs[4][6];
	static const uint8_t want[3][6] = { { 0x33, 0x33, 0xff, 0x33, 0x44, 0x55 },
					    { 0x33, 0x33, 0xff, 0x00, 0x00, 0x02 },
					    { 0x33, 0x33, 0, 0, 0, 1 } };

	up();
	ck_assert(fg_net_ipv6_link_local(X.net, ll));
	ck_assert_mem_eq(ll, ll_ip, 16);
	ck_assert_uint_eq(fg_net_ipv6_mc_macs(X.net, macs, 4), 3);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_mem_eq(macs[i], want[i], 6);
	ck_assert_uint_eq(fg_net_ipv6_mc_macs(X.net, macs, 1), 3);	/* how many, even past max */
	ck_assert(fg_net_is_local_ipv6(X.net, our_ip));
	ck_assert(fg_net_is_local_ipv6(X.net, ll_ip));
	ck_assert(!fg_net_is_local_ipv6(X.net, peer_ip));
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), 0);	/* not the announcer */
	down();
}
END_TEST

START_TEST(test_no_ipv6)
{
	uint8_t ll[16], macs[2][6];

	up_cfg(false, true);
	ck_assert(!fg_net_ipv6_link_local(X.net, ll));
	ck_assert_uint_eq(fg_net_ipv6_mc_macs(X.net, macs, 2), 0);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), 0);
	ip6(peer_ip, our_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_RX_IPV6], 1);
	ck_assert_uint_eq(X.r.inputs, 0);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_RX], 0);
	down();
}
END_TEST

START_TEST(test_header_checks_and_dispatch)
{
	uint8_t *p, mc[16];

	up();
	p = ip6(peer_ip, our_ip, PROTO_UDP, 8, 64);
	p[0] = 0xab;
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 1);
	ck_assert_uint_eq(X.r.inputs, 1);
	ck_assert_uint_eq(X.r.family, AF_INET6);
	ck_assert_mem_eq(X.r.src, peer_ip, 16);
	ck_assert_mem_eq(X.r.dst, our_ip, 16);
	ck_assert_uint_eq(X.r.len, 8);
	ck_assert_uint_eq(X.r.first, 0xab);
	/* trailing Ethernet padding is not payload */
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 20, 2);
	ck_assert_uint_eq(X.r.len, 8);
	/* the link-local address is ours too */
	ip6(peer_ip, ll_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 3);
	ck_assert_uint_eq(X.r.inputs, 3);
	/* payload length past the frame */
	ip6(peer_ip, our_ip, PROTO_UDP, 9, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 4);
	/* short header, wrong version */
	rx(FG_ETH_HLEN + 39, 5);
	ip6(peer_ip, our_ip, PROTO_UDP, 8, 64);
	F[FG_ETH_HLEN] = 0x45;
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 6);
	/* a multicast source */
	ip6(all_nodes, our_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 7);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_BAD], 4);
	/* not ours: another unicast, another group; TCP-like to our group */
	ip6(our_ip, peer_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 8);
	inet_pton(AF_INET6, "ff02::1:ff00:9", mc);
	ip6(peer_ip, mc, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 9);
	ip6(peer_ip, our_group, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 10);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_NOT_OURS], 3);
	/* a protocol nobody registered; no next header */
	ip6(peer_ip, our_ip, 132, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 11);
	ip6(peer_ip, our_ip, FG_IP6_NH_NONE, 0, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN, 12);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_PROTO], 2);
	ck_assert_uint_eq(X.r.inputs, 3);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_RX], 12);
	down();
}
END_TEST

/* A packet with extension headers `ext` (already chained, `n` octets)
 * before 8 octets of UDP-numbered payload. */
static void rx_ext(uint8_t first, const uint8_t *ext, uint32_t n, uint64_t now)
{
	uint8_t *p = ip6(peer_ip, our_ip, first, n + 8, 64);

	memcpy(p, ext, n);
	p[n] = 0x77;
	rx(FG_ETH_HLEN + FG_IP6_HLEN + n + 8, now);
}

START_TEST(test_extension_headers)
{
	/* hop-by-hop (router alert, PadN) then destination options (Pad1s) */
	static const uint8_t good[] = { 60, 0, 5, 2, 0, 0, 1, 0,  PROTO_UDP, 0, 0, 0, 0, 0, 0, 0 };
	/* routing header, segments left 0: we are the last hop */
	static const uint8_t rt_done[] = { PROTO_UDP, 0, 4, 0, 0, 0, 0, 0 };
	static const uint8_t rt_left[] = { PROTO_UDP, 0, 4, 1, 0, 0, 0, 0 };
	/* hop-by-hop after destination options */
	static const uint8_t hbh_second[] = { 0, 0, 1, 4, 0, 0, 0, 0,  PROTO_UDP, 0, 1, 4, 0, 0, 0, 0 };
	/* an unknown option whose action bits say discard (01), and skip (00) */
	static const uint8_t opt_discard[] = { PROTO_UDP, 0, 0x47, 4, 0, 0, 0, 0 };
	static const uint8_t opt_skip[] = { PROTO_UDP, 0, 0x07, 4, 0, 0, 0, 0 };
	/* an option running past its header; a header past the packet */
	static const uint8_t opt_long[] = { PROTO_UDP, 0, 1, 5, 0, 0, 0, 0 };
	static const uint8_t hdr_long[] = { PROTO_UDP, 2, 1, 4, 0, 0, 0, 0 };
	static const uint8_t frag[] = { PROTO_UDP, 0, 0, 1, 0, 0, 0, 1 };
	uint8_t chain[9 * 8];

	up();
	rx_ext(0, good, sizeof(good), 1);
	ck_assert_uint_eq(X.r.inputs, 1);
	ck_assert_uint_eq(X.r.first, 0x77);
	ck_assert_uint_eq(X.r.len, 8);
	rx_ext(43, rt_done, sizeof(rt_done), 2);
	rx_ext(60, opt_skip, sizeof(opt_skip), 3);
	ck_assert_uint_eq(X.r.inputs, 3);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_EXT], 3);
	rx_ext(43, rt_left, sizeof(rt_left), 4);
	rx_ext(60, hbh_second, sizeof(hbh_second), 5);
	rx_ext(60, opt_discard, sizeof(opt_discard), 6);
	rx_ext(0, opt_long, sizeof(opt_long), 7);
	rx_ext(60, hdr_long, sizeof(hdr_long), 8);
	/* nine destination options headers: one too many */
	for (unsigned i = 0; i < 9; i++) {
		memset(chain + i * 8, 0, 8);
		chain[i * 8] = i == 8 ? PROTO_UDP : 60;
		chain[i * 8 + 2] = 1;
		chain[i * 8 + 3] = 4;
	}
	rx_ext(60, chain, sizeof(chain), 9);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_EXT_BAD], 6);
	/* eight are allowed */
	chain[7 * 8] = PROTO_UDP;
	rx_ext(60, chain, 8 * 8, 10);
	ck_assert_uint_eq(X.r.inputs, 4);
	/* a header cut short by the payload length */
	ip6(peer_ip, our_ip, 60, 4, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 4, 11);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_EXT_BAD], 7);
	rx_ext(44, frag, sizeof(frag), 12);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_FRAGMENT], 1);
	ck_assert_uint_eq(X.r.inputs, 4);
	down();
}
END_TEST

START_TEST(test_echo)
{
	uint8_t *m;
	const uint8_t *o;
	uint32_t len;

	up();
	m = ip6(peer_ip, our_ip, 58, 12, 64);
	m[0] = 128;
	fg_wr16(m + 4, 0x1234);
	fg_wr16(m + 6, 7);
	memcpy(m + 8, "ping", 4);
	icmp6_sum(FG_IP6_HLEN, 12);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 12, 1);
	ck_assert_uint_eq(X.n_tx, 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_ECHO], 1);
	o = tx_icmp6(0, &len);
	ck_assert_uint_eq(len, 12);
	ck_assert_uint_eq(o[0], 129);
	ck_assert_uint_eq(fg_rd16(o + 4), 0x1234);
	ck_assert_mem_eq(o + 8, "ping", 4);
	ck_assert_mem_eq(X.tx[0].f, peer_mac, 6);
	ck_assert_mem_eq(X.tx[0].f + 6, our_mac, 6);
	ck_assert_mem_eq(X.tx[0].f + 22, our_ip, 16);
	ck_assert_mem_eq(X.tx[0].f + 38, peer_ip, 16);
	/* a bad checksum, and echo to all-nodes: dropped */
	m = ip6(peer_ip, our_ip, 58, 12, 64);
	m[0] = 128;
	icmp6_sum(FG_IP6_HLEN, 12);
	m[9] ^= 1;
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 12, 2);
	m = ip6(peer_ip, all_nodes, 58, 8, 64);
	m[0] = 128;
	icmp6_sum(FG_IP6_HLEN, 8);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 3);
	/* an unknown type; a message shorter than 8 */
	m = ip6(peer_ip, our_ip, 58, 8, 64);
	m[0] = 200;
	icmp6_sum(FG_IP6_HLEN, 8);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 4);
	ip6(peer_ip, our_ip, 58, 4, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 4, 5);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_ICMP_DROP], 4);
	ck_assert_uint_eq(X.n_tx, 1);
	down();
}
END_TEST

START_TEST(test_ns_answered)
{
	const uint8_t *o;
	uint32_t len;
	uint8_t *m;

	up();
	/* to the solicited-node group, with the asker's link-layer address */
	rx(ns(peer_ip, our_group, our_ip, other_mac, 255), 1);
	ck_assert_uint_eq(X.n_tx, 1);
	o = tx_icmp6(0, &len);
	ck_assert_uint_eq(len, 32);
	ck_assert_uint_eq(o[0], 136);
	ck_assert_uint_eq(o[4], 0x60);			/* solicited, override */
	ck_assert_mem_eq(o + 8, our_ip, 16);
	ck_assert_uint_eq(o[24], 2);			/* target link-layer address */
	ck_assert_mem_eq(o + 26, our_mac, 6);
	ck_assert_uint_eq(X.tx[0].f[FG_ETH_HLEN + 7], 255);
	ck_assert_mem_eq(X.tx[0].f, other_mac, 6);	/* the option's MAC */
	ck_assert_mem_eq(X.tx[0].f + 22, our_ip, 16);
	ck_assert_mem_eq(X.tx[0].f + 38, peer_ip, 16);
	/* unicast (NUD), no option: the frame's source MAC */
	rx(ns(peer_ip, our_ip, our_ip, NULL, 255), 2);
	ck_assert_uint_eq(X.n_tx, 2);
	ck_assert_mem_eq(X.tx[1].f, peer_mac, 6);
	/* for the link-local address */
	rx(ns(peer_ip, ll_ip, ll_ip, NULL, 255), 3);
	ck_assert_uint_eq(X.n_tx, 3);
	o = tx_icmp6(2, &len);
	ck_assert_mem_eq(o + 8, ll_ip, 16);
	/* another node's DAD probe for our address: NA to all-nodes, not solicited */
	rx(ns((const uint8_t[16]){ 0 }, our_group, our_ip, NULL, 255), 4);
	ck_assert_uint_eq(X.n_tx, 4);
	o = tx_icmp6(3, &len);
	ck_assert_uint_eq(o[4], 0x20);
	ck_assert_mem_eq(X.tx[3].f + 38, all_nodes, 16);
	ck_assert_mem_eq(X.tx[3].f, ((const uint8_t[6]){ 0x33, 0x33, 0, 0, 0, 1 }), 6);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_NA_TX], 4);
	/* not for us: silence */
	rx(ns(peer_ip, our_group, peer_ip, NULL, 255), 5);
	ck_assert_uint_eq(X.n_tx, 4);
	/* invalid: hop limit, code, a zero-length option, multicast target,
	 * a probe with a link-layer option, a probe to the wrong group */
	rx(ns(peer_ip, our_group, our_ip, NULL, 64), 6);
	ns(peer_ip, our_group, our_ip, NULL, 255);
	F[FG_ETH_HLEN + FG_IP6_HLEN + 1] = 1;
	icmp6_sum(FG_IP6_HLEN, 24);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 24, 7);
	ns(peer_ip, our_group, our_ip, other_mac, 255);
	m = F + FG_ETH_HLEN + FG_IP6_HLEN;
	m[25] = 0;
	icmp6_sum(FG_IP6_HLEN, 32);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 32, 8);
	rx(ns(peer_ip, our_group, all_nodes, NULL, 255), 9);
	rx(ns((const uint8_t[16]){ 0 }, our_group, our_ip, other_mac, 255), 10);
	rx(ns((const uint8_t[16]){ 0 }, all_nodes, our_ip, NULL, 255), 11);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_ND_BAD], 6);
	ck_assert_uint_eq(X.n_tx, 4);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_NS_RX], 11);
	down();
}
END_TEST

START_TEST(test_dad_passes)
{
	const uint8_t *o;
	uint32_t len;

	up_cfg(true, true);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), -EAGAIN);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), 0);	/* due now */
	fg_net_poll(X.net, 100);
	/* one probe per address: from ::, to its group, no option */
	ck_assert_uint_eq(X.n_tx, 2);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_DAD_NS], 2);
	o = tx_icmp6(1, &len);
	ck_assert_uint_eq(len, 24);
	ck_assert_uint_eq(o[0], 135);
	ck_assert_mem_eq(o + 8, our_ip, 16);
	ck_assert_mem_eq(X.tx[1].f + 22, ((const uint8_t[16]){ 0 }), 16);
	ck_assert_mem_eq(X.tx[1].f + 38, our_group, 16);
	ck_assert_mem_eq(X.tx[1].f, ((const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 2 }), 6);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), 1100);
	/* while tentative: no TCP, no echo, no answer to NS from others */
	ip6(peer_ip, our_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 200);
	ck_assert_uint_eq(X.r.inputs, 0);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_NOT_OURS], 1);
	rx(ns(peer_ip, our_group, our_ip, NULL, 255), 300);
	ck_assert(!fg_net_is_local_ipv6(X.net, our_ip));
	/* our own probe looped back by the port is no objection */
	rx_from(our_mac, ns((const uint8_t[16]){ 0 }, our_group, our_ip, NULL, 255), 400);
	ck_assert_uint_eq(X.n_tx, 2);
	fg_net_poll(X.net, 1099);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), -EAGAIN);
	fg_net_poll(X.net, 1100);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), 0);
	/* usable, announced: one unsolicited NA each to all-nodes */
	ck_assert_uint_eq(X.n_tx, 4);
	o = tx_icmp6(3, &len);
	ck_assert_uint_eq(o[0], 136);
	ck_assert_uint_eq(o[4], 0x20);
	ck_assert_mem_eq(o + 8, our_ip, 16);
	ck_assert_mem_eq(X.tx[3].f + 38, all_nodes, 16);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_DAD_CONFLICT], 0);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), UINT64_MAX);
	ip6(peer_ip, our_ip, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 2000);
	ck_assert_uint_eq(X.r.inputs, 1);
	/* an NA for a usable address later: counted and logged, kept */
	rx(na(peer_ip, our_ip, other_mac), 3000);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_DAD_CONFLICT], 1);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), 0);
	ck_assert(fg_net_is_local_ipv6(X.net, our_ip));
	down();
}
END_TEST

START_TEST(test_dad_conflict_by_na)
{
	struct fg_test_logcap cap;

	up_cfg(true, true);
	fg_net_poll(X.net, 100);
	fg_test_logcap_start(&cap);
	rx(na(peer_ip, our_ip, other_mac), 200);
	fg_test_logcap_stop();
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), -EADDRINUSE);
	ck_assert(fg_test_logcap_has(&cap, "2001:db8::2 is in use by 02:00:00:00:00:09"));
	ck_assert(fg_test_logcap_has(&cap, "duplicate address detection failed"));
	fg_net_poll(X.net, 5000);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), -EADDRINUSE);	/* stays failed */
	ck_assert(!fg_net_is_local_ipv6(X.net, our_ip));
	ck_assert(fg_net_is_local_ipv6(X.net, ll_ip));		/* the others passed */
	down();
}
END_TEST

START_TEST(test_dad_conflict_by_probe)
{
	up_cfg(true, true);
	fg_net_poll(X.net, 100);
	rx_from(other_mac, ns((const uint8_t[16]){ 0 }, our_group, our_ip, NULL, 255), 200);
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), -EADDRINUSE);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_DAD_CONFLICT], 1);
	down();
}
END_TEST

/* A Packet Too Big quoting a packet from `qsrc` with MTU `mtu`. */
static uint32_t ptb(const uint8_t *qsrc, uint32_t mtu, uint8_t qproto, uint32_t quote)
{
	uint32_t len = 8 + quote;
	uint8_t *m = ip6(peer_ip, our_ip, 58, len, 64), *q = m + 8;

	m[0] = 2;
	fg_wr32(m + 4, mtu);
	fg_wr32(q, 6u << 28);
	fg_wr16(q + 4, 1400);
	q[6] = qproto;
	q[7] = 64;
	memcpy(q + 8, qsrc, 16);
	memcpy(q + 24, peer_ip, 16);
	fg_wr16(q + 40, 119);
	fg_wr32(q + 44, 0xdeadbeef);
	icmp6_sum(FG_IP6_HLEN, len);
	return FG_ETH_HLEN + FG_IP6_HLEN + len;
}

START_TEST(test_packet_too_big)
{
	up();
	rx(ptb(our_ip, 1400, PROTO_UDP, 48), 1);
	ck_assert_uint_eq(X.r.errors, 1);
	ck_assert_uint_eq(X.r.family, AF_INET6);
	ck_assert_uint_eq(X.r.mtu, 1400);
	ck_assert_mem_eq(X.r.src, our_ip, 16);
	ck_assert_mem_eq(X.r.dst, peer_ip, 16);
	ck_assert_uint_eq(X.r.len, 8);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_PTB], 1);
	/* refused: MTU under 1280, a quote not from us, a short quote, a
	 * protocol without a handler */
	rx(ptb(our_ip, 1279, PROTO_UDP, 48), 2);
	rx(ptb(peer_ip, 1400, PROTO_UDP, 48), 3);
	rx(ptb(our_ip, 1400, PROTO_UDP, 47), 4);
	rx(ptb(our_ip, 1400, 132, 48), 5);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_PTB_BAD], 4);
	ck_assert_uint_eq(X.r.errors, 1);
	ck_assert_uint_eq(X.n_tx, 0);
	down();
}
END_TEST

/* Passive mode: no addresses of its own, no ND, no DAD; IPv6 packets to
 * anyone reach the handler (the observed server's), and a bad header or a
 * fragment counts as passive_bad, another protocol as passive_not_tcp. */
START_TEST(test_passive_observes)
{
	uint8_t ll[16], other[16];

	up_passive = true;
	up_cfg(true, true);
	up_passive = false;
	ck_assert(!fg_net_ipv6_link_local(X.net, ll));
	ck_assert_int_eq(fg_net_ipv6_dad(X.net), 0);
	fg_net_poll(X.net, 100);
	ck_assert_uint_eq(X.n_tx, 0);			/* no probe: nothing is ever sent */
	inet_pton(AF_INET6, "2001:db8:99::7", other);
	ip6(peer_ip, other, PROTO_UDP, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 200);
	ck_assert_uint_eq(X.r.inputs, 1);
	ck_assert_mem_eq(X.r.dst, other, 16);
	ip6(peer_ip, other, FG_IP6_NH_FRAGMENT, 16, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 16, 300);
	ip6(peer_ip, other, 58, 8, 64);
	rx(FG_ETH_HLEN + FG_IP6_HLEN + 8, 400);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_PASSIVE_BAD], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_PASSIVE_NOT_TCP], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET6_RX], 3);
	ck_assert_uint_eq(X.n_tx, 0);
	down();
}
END_TEST

static Suite *net6_suite(void)
{
	Suite *s = suite_create("net6");
	TCase *t = tcase_create("ipv6");

	tcase_add_test(t, test_pseudo_sum);
	tcase_add_test(t, test_link_local_and_groups);
	tcase_add_test(t, test_no_ipv6);
	tcase_add_test(t, test_header_checks_and_dispatch);
	tcase_add_test(t, test_extension_headers);
	tcase_add_test(t, test_echo);
	tcase_add_test(t, test_ns_answered);
	tcase_add_test(t, test_dad_passes);
	tcase_add_test(t, test_dad_conflict_by_na);
	tcase_add_test(t, test_dad_conflict_by_probe);
	tcase_add_test(t, test_packet_too_big);
	tcase_add_test(t, test_passive_observes);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(net6_suite)
