/* SPDX-License-Identifier: MIT */
/*
 * test_rss.c — the RSS key the dataplane gives a port (dataplane/dpdk/
 * rss.h), computed with DPDK's own software Toeplitz hash, rte_softrss
 * (a tap spreads no flows by RSS, so this is where the hash is checked):
 * the tuple layout is right (Microsoft's published verification vectors
 * for IPv4 and IPv6 with TCP, default key), and with our key a TCP
 * 4-tuple and its reverse hash alike in both IP versions — which the
 * default key does not do — so both directions of a connection reach
 * one queue. And the active opens' port choice (rss.h, dp_rss_port_ok as
 * an fg_tcp instance's port_ok): over IPv4 and IPv6 every ephemeral port
 * fg_tcp_connect picks makes the answers hash, by an independent
 * computation here, to the asked queue of a 4-queue RETA; a worker that
 * owns no queue of the RETA gets -EADDRNOTAVAIL and nothing is opened.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_thash.h>

#include "../../dataplane/dpdk/rss.h"
#include "fgtest.h"
#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

static const uint8_t symmetric_key[DP_RSS_KEY_LEN] = DP_RSS_KEY_INIT;

/* The key of Microsoft's RSS specification and its verification suite. */
static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint32_t hash4(const char *src, const char *dst, uint16_t sport, uint16_t dport,
		      const uint8_t *key)
{
	union rte_thash_tuple t;
	uint32_t a;

	memset(&t, 0, sizeof(t));
	inet_pton(AF_INET, src, &a);
	t.v4.src_addr = ntohl(a);
	inet_pton(AF_INET, dst, &a);
	t.v4.dst_addr = ntohl(a);
	t.v4.sport = sport;
	t.v4.dport = dport;
	return rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN, key);
}

static uint32_t hash6(const char *src, const char *dst, uint16_t sport, uint16_t dport,
		      const uint8_t *key)
{
	struct rte_ipv6_hdr ip;
	union rte_thash_tuple t;

	memset(&ip, 0, sizeof(ip));
	memset(&t, 0, sizeof(t));
	inet_pton(AF_INET6, src, ip.src_addr);
	inet_pton(AF_INET6, dst, ip.dst_addr);
	rte_thash_load_v6_addrs(&ip, &t);	/* the words in host order */
	t.v6.sport = sport;
	t.v6.dport = dport;
	return rte_softrss((uint32_t *)&t, RTE_THASH_V6_L4_LEN, key);
}

START_TEST(test_layout_against_published_vectors)
{
	/* "Verifying the RSS Hash Calculation": IPv4 and IPv6 with TCP */
	ck_assert_uint_eq(hash4("66.9.149.187", "161.142.100.80", 2794, 1766, ms_key),
			  0x51ccc178);
	ck_assert_uint_eq(hash4("199.92.111.2", "65.69.140.83", 14230, 4739, ms_key),
			  0xc626b0ea);
	ck_assert_uint_eq(hash6("3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
				ms_key), 0x40207d3d);
	ck_assert_uint_eq(hash6("3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
				ms_key), 0xdde51bbf);
}
END_TEST

START_TEST(test_symmetric_both_families)
{
	static const char *const v4[][2] = {
		{ "198.18.0.1", "198.18.0.2" }, { "203.0.113.77", "192.0.2.10" },
		{ "10.1.2.3", "172.16.254.1" },
	};
	static const char *const v6[][2] = {
		{ "fd00:fd::1", "fd00:fd::2" }, { "2001:db8:1::77", "2001:db8:ffff::10" },
		{ "fe80::1:2ff:fe03:405", "2001:db8::1" },
	};
	static const uint16_t ports[][2] = { { 40000, 119 }, { 119, 119 }, { 65535, 1 } };
	unsigned asymmetric_default = 0;

	for (unsigned i = 0; i < 3; i++) {
		for (unsigned p = 0; p < 3; p++) {
			uint16_t sp = ports[p][0], dp = ports[p][1];

			ck_assert_uint_eq(hash4(v4[i][0], v4[i][1], sp, dp, symmetric_key),
					  hash4(v4[i][1], v4[i][0], dp, sp, symmetric_key));
			ck_assert_uint_eq(hash6(v6[i][0], v6[i][1], sp, dp, symmetric_key),
					  hash6(v6[i][1], v6[i][0], dp, sp, symmetric_key));
			asymmetric_default +=
				hash6(v6[i][0], v6[i][1], sp, dp, ms_key) !=
				hash6(v6[i][1], v6[i][0], dp, sp, ms_key);
		}
	}
	/* the property is the key's: the default one has not got it */
	ck_assert_uint_gt(asymmetric_default, 0);
	/* and the hash still tells flows apart */
	ck_assert_uint_ne(hash6("fd00:fd::1", "fd00:fd::2", 40000, 119, symmetric_key),
			  hash6("fd00:fd::1", "fd00:fd::2", 40001, 119, symmetric_key));
	ck_assert_uint_ne(hash6("fd00:fd::1", "fd00:fd::2", 40000, 119, symmetric_key),
			  hash6("fd00:fd::3", "fd00:fd::2", 40000, 119, symmetric_key));
}
END_TEST

/* ---------------------------------------------------------------- port choice */

#define RETA_SIZE 128
#define N_QUEUES 4

static void drop_frame(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	(void)arg, (void)f, (void)len, (void)flags;
}

static void *no_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	(void)app, (void)c, (void)peer, (void)local;
	return NULL;
}

static uint32_t no_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	(void)ctx, (void)c, (void)iov, (void)n;
	return 0;
}

static void no_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)c, (void)why;
}

static const struct fg_tcp_app_ops ops = {
	.on_accept = no_accept, .on_data = no_data, .on_close = no_close,
};

START_TEST(test_port_choice_lands_on_queue)
{
	static const char *const ours[2] = { "198.18.0.2", "2001:db8::2" };
	static const char *const peers[2] = { "198.18.0.1", "2001:db8::1" };
	struct dp_rss_table tab;
	struct dp_rss_pick pick, none;
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	struct fg_stats st;
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	unsigned hits[N_QUEUES] = { 0 };
	int v6 = _i, err = 0;

	/* a RETA as a port might hold it: not simply i % n */
	memcpy(tab.key, symmetric_key, DP_RSS_KEY_LEN);
	tab.reta_size = RETA_SIZE;
	for (unsigned i = 0; i < RETA_SIZE; i++)
		tab.reta[i] = (uint16_t)((i * 7 + i / 16) % N_QUEUES);
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, (const uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	inet_pton(AF_INET, ours[0], &nc.ipv4[0]);
	nc.n_ipv4 = 1;
	inet_pton(AF_INET6, ours[1], nc.ipv6[0]);
	nc.n_ipv6 = 1;
	memset(&st, 0, sizeof(st));
	mp = fg_memport_create(256, 2048, drop_frame, NULL);
	net = fg_net_create(&nc, fg_memport_ops(), mp, &st);
	ck_assert_ptr_nonnull(net);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 64;
	tc.port_ok = dp_rss_port_ok;
	tc.port_ok_ctx = &pick;
	tcp = fg_tcp_create(net, &tc, &ops, NULL);
	ck_assert_ptr_nonnull(tcp);

	for (uint16_t q = 0; q < N_QUEUES; q++) {
		memset(&pick, 0, sizeof(pick));
		pick.t = &tab;
		dp_rss_pick_queue(&pick, q);
		for (unsigned k = 0; k < 8; k++) {
			struct fg_endpoint local = { .family = v6 ? AF_INET6 : AF_INET };
			struct fg_endpoint peer = { .family = local.family, .port = 119 };
			struct fg_tcp_conn *c;
			char src[64], dst[64];
			uint32_t h;

			inet_pton(local.family, ours[v6], local.addr);
			inet_pton(local.family, peers[v6], peer.addr);
			c = fg_tcp_connect(tcp, &local, &peer, NULL, 1000, &err);
			ck_assert_msg(c != NULL, "connect: %d", err);
			fg_tcp_conn_local(c, &local);
			/* the answers: from the peer's 119 to our chosen port */
			inet_ntop(local.family, peer.addr, src, sizeof(src));
			inet_ntop(local.family, local.addr, dst, sizeof(dst));
			h = v6 ? hash6(src, dst, 119, local.port, symmetric_key)
			       : hash4(src, dst, 119, local.port, symmetric_key);
			ck_assert_uint_eq(tab.reta[h % RETA_SIZE], q);
			hits[q]++;
		}
	}
	for (unsigned q = 0; q < N_QUEUES; q++)
		ck_assert_uint_eq(hits[q], 8);
	/* a worker none of whose queues the RETA names: no port fits */
	memset(&none, 0, sizeof(none));
	none.t = &tab;
	dp_rss_pick_queue(&none, N_QUEUES);
	tc.port_ok_ctx = &none;
	fg_tcp_destroy(tcp);
	tcp = fg_tcp_create(net, &tc, &ops, NULL);
	{
		struct fg_endpoint local = { .family = v6 ? AF_INET6 : AF_INET };
		struct fg_endpoint peer = { .family = local.family, .port = 119 };

		inet_pton(local.family, ours[v6], local.addr);
		inet_pton(local.family, peers[v6], peer.addr);
		ck_assert_ptr_null(fg_tcp_connect(tcp, &local, &peer, NULL, 1000, &err));
		ck_assert_int_eq(err, -EADDRNOTAVAIL);
		ck_assert_uint_eq(fg_tcp_conns_in_use(tcp), 0);
		ck_assert_uint_eq(st.ctr[FG_CTR_TCP_CONNECT_NO_PORT], 1);
		/* and without RSS (reta_size 0) every port fits */
		none.t = NULL;
		ck_assert_ptr_nonnull(fg_tcp_connect(tcp, &local, &peer, NULL, 1000, &err));
	}
	fg_tcp_destroy(tcp);
	fg_net_destroy(net);
	ck_assert_uint_eq(fg_memport_in_use(mp), 0);
	fg_memport_destroy(mp);
}
END_TEST

static Suite *rss_suite(void)
{
	Suite *s = suite_create("rss");
	TCase *t = tcase_create("toeplitz");

	tcase_add_test(t, test_layout_against_published_vectors);
	tcase_add_test(t, test_symmetric_both_families);
	tcase_add_loop_test(t, test_port_choice_lands_on_queue, 0, 2);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(rss_suite)
