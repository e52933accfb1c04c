/* SPDX-License-Identifier: MIT */
/*
 * test_net.c — net's L4 handler interface (net.h): registration and its
 * refusals, dispatch by protocol number with the network header's view,
 * the end-of-burst pass after every burst and poll, timers from the poll,
 * the earliest next deadline, unregistering, and TCP's own registration
 * (one TCP instance per net), and the exception path: what goes to the
 * kernel, what stays, and the rate that bounds it. Ethernet/ARP/IPv4/ICMP
 * and TCP themselves are in test_tcp.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"
#include "fgtest.h"

#define PROTO_UDP 17
#define PROTO_SCTP 132

static const uint8_t our_mac[6] = { 2, 0, 0, 0, 0, 2 }, peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t our_ip[4] = { 198, 18, 0, 2 }, peer_ip[4] = { 198, 18, 0, 1 };

/* A recording handler: what it was given, and a deadline it reports. */
struct rec {
	unsigned inputs, bursts, timers;
	unsigned family;
	uint32_t src, dst, len;
	uint8_t first;
	uint64_t last_now, deadline;
};

static void rec_input(void *ctx, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
		      const uint8_t *l4, uint32_t len, uint64_t now_ns)
{
	struct rec *r = ctx;

	(void)f;
	r->inputs++;
	r->family = l3->family;
	memcpy(&r->src, l3->src, 4);
	memcpy(&r->dst, l3->dst, 4);
	r->len = len;
	r->first = len ? l4[0] : 0;
	r->last_now = now_ns;
}

static void rec_burst(void *ctx, uint64_t now_ns)
{
	struct rec *r = ctx;

	r->bursts++;
	r->last_now = now_ns;
}

static void rec_timers(void *ctx, uint64_t now_ns)
{
	struct rec *r = ctx;

	r->timers++;
	r->last_now = now_ns;
}

static uint64_t rec_deadline(const void *ctx)
{
	const struct rec *r = ctx;

	return r->deadline;
}

static const struct fg_net_l4_ops rec_ops = {
	.input = rec_input, .end_of_burst = rec_burst, .timers = rec_timers,
	.next_deadline = rec_deadline,
};
static const struct fg_net_l4_ops input_only_ops = { .input = rec_input };

struct fx {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_stats st;
};

static struct fx X;

static void up(void)
{
	struct fg_net_config nc = { 0 };

	memset(&X, 0, sizeof(X));
	memcpy(nc.mac, our_mac, 6);
	memcpy(&nc.ipv4[0], our_ip, 4);
	nc.n_ipv4 = 1;
	X.mp = fg_memport_create(64, 2048, NULL, NULL);
	ck_assert_ptr_nonnull(X.mp);
	X.net = fg_net_create(&nc, fg_memport_ops(), X.mp, &X.st);
	ck_assert_ptr_nonnull(X.net);
}

static void down(void)
{
	fg_net_destroy(X.net);
	ck_assert_uint_eq(fg_memport_in_use(X.mp), 0);
	fg_memport_destroy(X.mp);
}

/* One IPv4 packet of `proto` from the peer to us, `len` octets of payload
 * starting with `first`, received at `now`. */
static void rx_ip(uint8_t proto, uint8_t first, uint32_t len, uint64_t now)
{
	struct fg_rx_frame fr;
	uint32_t src, dst;

	memcpy(&src, peer_ip, 4);
	memcpy(&dst, our_ip, 4);
	ck_assert_int_eq(fg_memport_rx_frame(X.mp, NULL, FG_ETH_HLEN + FG_IP_HLEN + len, &fr), 0);
	fg_net_build_ipv4(fr.data, our_mac, peer_mac, src, dst, proto, len, 1, 0);
	memset(fr.data + FG_ETH_HLEN + FG_IP_HLEN, first, len);
	fg_net_rx(X.net, &fr, 1, now);
}

/* The fault knob's spec, as floodgate --fault and fg-taphost take it. */
START_TEST(test_faults_parse)
{
	struct fg_net_faults f = { .tx_dup_ppm = 7 };
	char big[300];

	ck_assert_int_eq(fg_net_faults_parse("rx-drop=1,rx-reorder=0.5,tx-drop=100,seed=0x10", &f), 0);
	ck_assert_uint_eq(f.rx_drop_ppm, 10000);
	ck_assert_uint_eq(f.rx_reorder_ppm, 5000);
	ck_assert_uint_eq(f.tx_drop_ppm, 1000000);
	ck_assert_uint_eq(f.tx_dup_ppm, 7);		/* not named: kept */
	ck_assert_uint_eq(f.seed, 16);
	ck_assert_int_eq(fg_net_faults_parse("", &f), 0);
	ck_assert_int_eq(fg_net_faults_parse("rx-drop", &f), -EINVAL);
	ck_assert_int_eq(fg_net_faults_parse("rx-lose=1", &f), -EINVAL);
	ck_assert_int_eq(fg_net_faults_parse("tx-dup=101", &f), -EINVAL);
	ck_assert_int_eq(fg_net_faults_parse("tx-dup=-1", &f), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(fg_net_faults_parse(big, &f), -EINVAL);
}
END_TEST

START_TEST(test_register_refusals)
{
	struct rec a = { 0 }, b = { 0 };
	const struct fg_net_l4_ops no_input = { .end_of_burst = rec_burst };

	up();
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, NULL, &a), -EINVAL);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &no_input, &a), -EINVAL);
	/* ICMP echo is net's own */
	ck_assert_int_eq(fg_net_l4_register(X.net, FG_IP_PROTO_ICMP, &rec_ops, &a), -EINVAL);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &rec_ops, &a), 0);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &rec_ops, &b), -EEXIST);
	for (unsigned p = 200; p < 200 + FG_NET_MAX_L4 - 1; p++)
		ck_assert_int_eq(fg_net_l4_register(X.net, (uint8_t)p, &rec_ops, &b), 0);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_SCTP, &rec_ops, &b), -ENOSPC);
	/* a freed slot can be taken again */
	fg_net_l4_unregister(X.net, 200);
	fg_net_l4_unregister(X.net, 200);	/* twice: nothing happens */
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_SCTP, &rec_ops, &b), 0);
	down();
}
END_TEST

START_TEST(test_dispatch_by_protocol)
{
	struct rec udp = { 0 }, sctp = { 0 };
	uint32_t src, dst;

	up();
	memcpy(&src, peer_ip, 4);
	memcpy(&dst, our_ip, 4);
	/* nobody registered: counted and dropped */
	rx_ip(PROTO_UDP, 0xab, 8, 100);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 1);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &rec_ops, &udp), 0);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_SCTP, &input_only_ops, &sctp), 0);
	rx_ip(PROTO_UDP, 0xcd, 12, 200);
	ck_assert_uint_eq(udp.inputs, 1);
	ck_assert_uint_eq(udp.family, AF_INET);
	ck_assert_uint_eq(udp.src, src);
	ck_assert_uint_eq(udp.dst, dst);
	ck_assert_uint_eq(udp.len, 12);
	ck_assert_uint_eq(udp.first, 0xcd);
	ck_assert_uint_eq(udp.bursts, 1);	/* every handler's pass after the burst */
	ck_assert_uint_eq(sctp.inputs, 0);
	rx_ip(PROTO_SCTP, 0x11, 4, 300);
	ck_assert_uint_eq(sctp.inputs, 1);
	ck_assert_uint_eq(sctp.first, 0x11);
	ck_assert_uint_eq(udp.inputs, 1);
	ck_assert_uint_eq(udp.bursts, 2);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 1);
	/* unregistered: dropped again; the other handler keeps its packets */
	fg_net_l4_unregister(X.net, PROTO_UDP);
	rx_ip(PROTO_UDP, 0xcd, 12, 400);
	ck_assert_uint_eq(udp.inputs, 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 2);
	rx_ip(PROTO_SCTP, 0x22, 4, 500);
	ck_assert_uint_eq(sctp.inputs, 2);
	ck_assert_uint_eq(sctp.first, 0x22);
	down();
}
END_TEST

START_TEST(test_poll_timers_and_deadline)
{
	struct rec a = { .deadline = 9000 }, b = { .deadline = 7000 };

	up();
	ck_assert_uint_eq(fg_net_next_deadline(X.net), UINT64_MAX);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &rec_ops, &a), 0);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), 9000);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_SCTP, &rec_ops, &b), 0);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), 7000);	/* the earliest */
	fg_net_poll(X.net, 7000);
	ck_assert_uint_eq(a.timers, 1);
	ck_assert_uint_eq(b.timers, 1);
	ck_assert_uint_eq(a.bursts, 1);
	ck_assert_uint_eq(b.last_now, 7000);
	b.deadline = UINT64_MAX;
	ck_assert_uint_eq(fg_net_next_deadline(X.net), 9000);
	/* a handler without the optional ops is never asked */
	fg_net_l4_unregister(X.net, PROTO_UDP);
	fg_net_l4_unregister(X.net, PROTO_SCTP);
	ck_assert_int_eq(fg_net_l4_register(X.net, PROTO_UDP, &input_only_ops, &a), 0);
	ck_assert_uint_eq(fg_net_next_deadline(X.net), UINT64_MAX);
	fg_net_poll(X.net, 8000);
	ck_assert_uint_eq(a.timers, 1);
	down();
}
END_TEST

static void *tcp_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			const struct fg_endpoint *local)
{
	(void)c, (void)peer, (void)local;
	return app;
}

static uint32_t tcp_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	(void)ctx, (void)c, (void)iov, (void)n;
	return 0;
}

static void tcp_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)c, (void)why;
}

/* A TCP instance on X.net listening on port 119 of any address. */
static struct fg_tcp *tcp_on_119(struct fg_tcp_config *tc, const struct fg_tcp_app_ops *ops)
{
	struct fg_tcp *tcp;

	tc->listen[0].family = AF_INET;
	tc->listen[0].port = 119;
	tc->n_listen = 1;
	tc->max_conns = 4;
	tcp = fg_tcp_create(X.net, tc, ops, NULL);
	ck_assert_ptr_nonnull(tcp);
	return tcp;
}

START_TEST(test_tcp_registers_itself)
{
	static const struct fg_tcp_app_ops ops = { .on_accept = tcp_accept, .on_data = tcp_data,
						   .on_close = tcp_close };
	struct fg_tcp_config tc = { 0 };
	struct fg_tcp *tcp, *again;
	struct rec r = { 0 };

	up();
	tcp = tcp_on_119(&tc, &ops);
	/* protocol 6 is taken: a second TCP instance on the same net is refused */
	ck_assert_int_eq(fg_net_l4_register(X.net, FG_IP_PROTO_TCP, &rec_ops, &r), -EEXIST);
	again = fg_tcp_create(X.net, &tc, &ops, NULL);
	ck_assert_ptr_null(again);
	rx_ip(FG_IP_PROTO_TCP, 0, 20, 100);	/* a TCP header of zeros reaches TCP */
	ck_assert_uint_eq(X.st.ctr[FG_CTR_TCP_RX_SEGS], 1);
	fg_tcp_destroy(tcp);
	/* gone: TCP segments are counted and dropped, the number is free */
	rx_ip(FG_IP_PROTO_TCP, 0, 20, 200);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_TCP_RX_SEGS], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 1);
	ck_assert_int_eq(fg_net_l4_register(X.net, FG_IP_PROTO_TCP, &rec_ops, &r), 0);
	rx_ip(FG_IP_PROTO_TCP, 0x50, 20, 300);
	ck_assert_uint_eq(r.inputs, 1);
	down();
}
END_TEST

/* ---- the exception path ---- */

/* What reached the kernel, and what net sent itself. */
struct kern {
	unsigned frames, sent;
	uint16_t last_type;
	uint8_t last_proto;
};

static struct kern K;

static void kernel_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	(void)arg;
	(void)flags;
	K.frames++;
	K.last_type = (uint16_t)(frame[12] << 8 | frame[13]);
	K.last_proto = len > FG_ETH_HLEN + 9 ? frame[FG_ETH_HLEN + 9] : 0;
}

static void wire_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	(void)arg;
	(void)frame;
	(void)len;
	(void)flags;
	K.sent++;
}

/* A net whose port has a kernel side, with this rate and burst. */
static void up_kernel(uint32_t rate, uint32_t burst, bool sink)
{
	struct fg_net_config nc = { 0 };

	memset(&X, 0, sizeof(X));
	memset(&K, 0, sizeof(K));
	memcpy(nc.mac, our_mac, 6);
	memcpy(&nc.ipv4[0], our_ip, 4);
	nc.n_ipv4 = 1;
	nc.kernel_rate = rate;
	nc.kernel_burst = burst;
	X.mp = fg_memport_create(64, 2048, wire_sink, NULL);
	ck_assert_ptr_nonnull(X.mp);
	if (sink)
		fg_memport_set_kernel(X.mp, kernel_sink, NULL);
	X.net = fg_net_create(&nc, fg_memport_ops(), X.mp, &X.st);
	ck_assert_ptr_nonnull(X.net);
}

/* A frame of `type` from the peer with `len` octets after the Ethernet
 * header, filled by the caller through `body`. */
static void rx_raw(uint16_t type, const uint8_t *body, uint32_t len, uint64_t now)
{
	struct fg_rx_frame fr;

	ck_assert_int_eq(fg_memport_rx_frame(X.mp, NULL, FG_ETH_HLEN + len, &fr), 0);
	memcpy(fr.data, our_mac, 6);
	memcpy(fr.data + 6, peer_mac, 6);
	fr.data[12] = (uint8_t)(type >> 8);
	fr.data[13] = (uint8_t)type;
	memcpy(fr.data + FG_ETH_HLEN, body, len);
	fg_net_rx(X.net, &fr, 1, now);
}

/* An ARP packet (RFC 826) from the peer: op, target address. */
static void rx_arp(uint16_t op, const uint8_t tpa[4], uint64_t now)
{
	uint8_t a[28] = { 0, 1, 8, 0, 6, 4, 0, (uint8_t)op };

	memcpy(a + 8, peer_mac, 6);
	memcpy(a + 14, peer_ip, 4);
	memcpy(a + 24, tpa, 4);
	rx_raw(FG_ETHERTYPE_ARP, a, sizeof(a), now);
}

/* A TCP SYN from the peer to our `port`. */
static void rx_syn(uint16_t port, uint64_t now)
{
	uint8_t frame[64];
	struct fg_craft_tcp c = { .dst_mac = our_mac, .src_mac = peer_mac, .sport = 40000,
				  .dport = port, .seq = 1000, .flags = 0x02, .wnd = 65535 };
	struct fg_rx_frame fr;
	uint32_t len;

	memcpy(&c.src, peer_ip, 4);
	memcpy(&c.dst, our_ip, 4);
	len = fg_craft_tcp_frame(frame, &c);
	ck_assert_int_eq(fg_memport_rx_frame(X.mp, frame, len, &fr), 0);
	fg_net_rx(X.net, &fr, 1, now);
}

/* What is not the dataplane's goes to the kernel; what is stays. */
START_TEST(test_exception_sorts)
{
	static const struct fg_tcp_app_ops ops = { .on_accept = tcp_accept, .on_data = tcp_data,
						   .on_close = tcp_close };
	static const uint8_t other_ip[4] = { 198, 18, 0, 9 }, v6[40] = { 0x60 }, lldp[46] = { 0 };
	struct fg_tcp_config tc = { 0 };
	struct fg_tcp *tcp;
	uint64_t now = 1000000000ull;

	up_kernel(1000, 100, true);
	tcp = tcp_on_119(&tc, &ops);
	/* TCP: the listen port is TCP's (a SYN-ACK goes out), another the kernel's */
	rx_syn(119, now);
	ck_assert_uint_eq(K.frames, 0);
	ck_assert_uint_eq(K.sent, 1);
	rx_syn(22, now);
	ck_assert_uint_eq(K.frames, 1);
	ck_assert_uint_eq(K.last_proto, FG_IP_PROTO_TCP);
	ck_assert_uint_eq(K.sent, 1);		/* no RST from us */
	/* UDP has no handler: the kernel's, not a drop */
	rx_ip(PROTO_UDP, 0, 16, now);
	ck_assert_uint_eq(K.frames, 2);
	ck_assert_uint_eq(K.last_proto, PROTO_UDP);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 0);
	/* ICMP: echo requests are answered here, the rest is the kernel's */
	rx_ip(FG_IP_PROTO_ICMP, 3, 36, now);	/* destination unreachable */
	ck_assert_uint_eq(K.frames, 3);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_ICMP_DROP], 0);
	/* ARP: a request for us is answered; one for another address and a
	 * reply to us (the kernel may have asked) are the kernel's too */
	rx_arp(1, our_ip, now);
	ck_assert_uint_eq(K.frames, 3);
	ck_assert_uint_eq(K.sent, 2);
	rx_arp(1, other_ip, now);
	ck_assert_uint_eq(K.frames, 4);
	ck_assert_uint_eq(K.last_type, FG_ETHERTYPE_ARP);
	rx_arp(2, our_ip, now);
	ck_assert_uint_eq(K.frames, 5);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_ARP_LEARNED], 2);
	/* IPv6 (no IPv6 handler here) and other ethertypes */
	rx_raw(FG_ETHERTYPE_IPV6, v6, sizeof(v6), now);
	ck_assert_uint_eq(K.frames, 6);
	ck_assert_uint_eq(K.last_type, FG_ETHERTYPE_IPV6);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_RX_IPV6], 0);
	rx_raw(0x88cc, lldp, sizeof(lldp), now);
	ck_assert_uint_eq(K.frames, 7);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL], 7);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL_LIMITED], 0);
	fg_tcp_destroy(tcp);
	down();
}
END_TEST

/* Without a path (no rate, or a port without a kernel side) nothing
 * changes: the same frames are counted and dropped as they always were. */
START_TEST(test_exception_absent)
{
	static const uint8_t v6[40] = { 0x60 };
	struct fg_rx_frame fr;

	up_kernel(0, 0, true);
	rx_ip(PROTO_UDP, 0, 16, 100);
	rx_raw(FG_ETHERTYPE_IPV6, v6, sizeof(v6), 100);
	rx_ip(FG_IP_PROTO_ICMP, 3, 36, 100);
	ck_assert_uint_eq(K.frames, 0);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_PROTO], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_RX_IPV6], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_ICMP_DROP], 1);
	ck_assert_int_eq(fg_memport_rx_frame(X.mp, NULL, 60, &fr), 0);
	ck_assert_int_eq(fg_net_to_kernel(X.net, &fr), -ENOENT);
	fg_net_buf_unref(X.net, fr.handle);
	down();
	/* a rate but a port that cannot: counted as failed, not as sent */
	up_kernel(100, 0, false);
	rx_ip(PROTO_UDP, 0, 16, 100);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL_FAILED], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL], 0);
	down();
}
END_TEST

/* The rate: a burst at once, then the rate; the rest dropped, counted. */
START_TEST(test_exception_rate)
{
	uint64_t t = 5000000000ull;

	up_kernel(100, 8, true);
	for (int i = 0; i < 20; i++)
		rx_ip(PROTO_UDP, 0, 16, t);
	ck_assert_uint_eq(K.frames, 8);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL_LIMITED], 12);
	/* 50 ms at 100/s: 5 more */
	t += 50000000ull;
	for (int i = 0; i < 10; i++)
		rx_ip(PROTO_UDP, 0, 16, t);
	ck_assert_uint_eq(K.frames, 13);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL_LIMITED], 17);
	/* a long quiet spell fills the bucket, never beyond the burst */
	t += 3600ull * 1000000000ull;
	for (int i = 0; i < 20; i++)
		rx_ip(PROTO_UDP, 0, 16, t);
	ck_assert_uint_eq(K.frames, 21);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_TO_KERNEL], 21);
	down();
	/* burst 0: a tenth of the rate, at least 8 */
	up_kernel(1000, 0, true);
	for (int i = 0; i < 150; i++)
		rx_ip(PROTO_UDP, 0, 16, t);
	ck_assert_uint_eq(K.frames, 100);
	down();
	up_kernel(10, 0, true);
	for (int i = 0; i < 20; i++)
		rx_ip(PROTO_UDP, 0, 16, t);
	ck_assert_uint_eq(K.frames, 8);
	down();
}
END_TEST

/* ---- VLANs ---- */

/* What net sent: its VLAN (0: untagged) and what the tag carried. */
struct wire {
	unsigned frames;
	uint16_t vid, type;
	uint8_t arp_op, l4;
	uint32_t spa;
};

static struct wire Wr;

static void vlan_sink(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	uint32_t l2 = FG_ETH_HLEN;

	(void)arg;
	(void)flags;
	Wr.frames++;
	Wr.vid = 0;
	Wr.type = fg_rd16(f + 12);
	if (Wr.type == FG_ETHERTYPE_VLAN) {
		Wr.vid = fg_rd16(f + 14) & 0xfff;
		Wr.type = fg_rd16(f + 16);
		l2 += FG_VLAN_HLEN;
	}
	if (Wr.type == FG_ETHERTYPE_ARP && len >= l2 + 28) {
		Wr.arp_op = f[l2 + 7];
		Wr.spa = fg_rdaddr(f + l2 + 14);
	}
	if (Wr.type == FG_ETHERTYPE_IPV4 && len >= l2 + 20)
		Wr.l4 = f[l2 + 9];
}

static const uint8_t v10_ip[4] = { 198, 18, 10, 2 }, v20_ip[4] = { 198, 18, 20, 2 };
static const uint8_t v10_peer[4] = { 198, 18, 10, 1 }, v20_peer[4] = { 198, 18, 20, 1 };

/* 198.18.0.2 untagged, 198.18.10.2/24 on VLAN 10, 198.18.20.2/24 on 20. */
static void up_vlans(void)
{
	struct fg_net_config nc = { 0 };

	memset(&X, 0, sizeof(X));
	memset(&Wr, 0, sizeof(Wr));
	memcpy(nc.mac, our_mac, 6);
	memcpy(&nc.ipv4[0], our_ip, 4);
	memcpy(&nc.ipv4[1], v10_ip, 4);
	memcpy(&nc.ipv4[2], v20_ip, 4);
	nc.plen[0] = nc.plen[1] = nc.plen[2] = 24;
	nc.vid[1] = 10;
	nc.vid[2] = 20;
	nc.n_ipv4 = 3;
	X.mp = fg_memport_create(64, 2048, vlan_sink, NULL);
	X.net = fg_net_create(&nc, fg_memport_ops(), X.mp, &X.st);
	ck_assert_ptr_nonnull(X.net);
}

/* A frame from the peer, tagged `vid` in the frame (stripped: in the
 * frame's flags, as a port with VLAN strip gives it; vid 0: untagged):
 * Ethernet type `type` and `body`. */
static void rx_vlan(uint16_t vid, bool stripped, uint16_t type, const uint8_t *body,
		    uint32_t len, uint64_t now)
{
	uint32_t l2 = vid && !stripped ? FG_ETH_HLEN + FG_VLAN_HLEN : FG_ETH_HLEN;
	struct fg_rx_frame fr;

	ck_assert_int_eq(fg_memport_rx_frame(X.mp, NULL, l2 + len, &fr), 0);
	memcpy(fr.data, our_mac, 6);
	memcpy(fr.data + 6, peer_mac, 6);
	if (vid && !stripped) {
		fg_wr16(fr.data + 12, FG_ETHERTYPE_VLAN);
		fg_wr16(fr.data + 14, vid);
	} else if (vid) {
		fr.flags |= FG_RX_VLAN;
		fr.vlan = vid;
	}
	fg_wr16(fr.data + l2 - 2, type);
	memcpy(fr.data + l2, body, len);
	fg_net_rx(X.net, &fr, 1, now);
}

static void rx_vlan_arp(uint16_t vid, const uint8_t spa[4], const uint8_t tpa[4])
{
	uint8_t a[28] = { 0, 1, 8, 0, 6, 4, 0, 1 };

	memcpy(a + 8, peer_mac, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 24, tpa, 4);
	rx_vlan(vid, false, FG_ETHERTYPE_ARP, a, sizeof(a), 100);
}

/* An echo request from src to dst: an IPv4 header and 8 octets of ICMP. */
static void rx_vlan_ping(uint16_t vid, bool stripped, const uint8_t src[4], const uint8_t dst[4])
{
	uint8_t p[28] = { 0 };
	uint32_t s, d;

	memcpy(&s, src, 4);
	memcpy(&d, dst, 4);
	p[0] = 0x45;
	fg_wr16(p + 2, 28);
	p[8] = 64;
	p[9] = FG_IP_PROTO_ICMP;
	fg_wraddr(p + 12, s);
	fg_wraddr(p + 16, d);
	fg_wr16(p + 10, fg_csum_fold(fg_csum_add(0, p, 20)));
	p[20] = 8;
	fg_wr16(p + 22, fg_csum_fold(fg_csum_add(0, p + 20, 8)));
	rx_vlan(vid, stripped, FG_ETHERTYPE_IPV4, p, sizeof(p), 100);
}

/* Each address answers on its own VLAN, tagged; not on another's. */
START_TEST(test_vlan_answers_on_its_own)
{
	uint32_t v20;

	up_vlans();
	memcpy(&v20, v20_ip, 4);
	rx_vlan_arp(10, v10_peer, v10_ip);
	ck_assert_uint_eq(Wr.frames, 1);
	ck_assert_uint_eq(Wr.vid, 10);
	ck_assert_uint_eq(Wr.arp_op, 2);
	rx_vlan_arp(0, peer_ip, our_ip);
	ck_assert_uint_eq(Wr.frames, 2);
	ck_assert_uint_eq(Wr.vid, 0);
	/* VLAN 10's address asked for on VLAN 20, or untagged: no answer */
	rx_vlan_arp(20, v20_peer, v10_ip);
	rx_vlan_arp(0, peer_ip, v10_ip);
	ck_assert_uint_eq(Wr.frames, 2);
	/* echo, tagged in the frame and stripped by the port: tagged replies */
	rx_vlan_ping(20, false, v20_peer, v20_ip);
	ck_assert_uint_eq(Wr.frames, 3);
	ck_assert_uint_eq(Wr.vid, 20);
	ck_assert_uint_eq(Wr.l4, FG_IP_PROTO_ICMP);
	rx_vlan_ping(10, true, v10_peer, v10_ip);
	ck_assert_uint_eq(Wr.frames, 4);
	ck_assert_uint_eq(Wr.vid, 10);
	/* an address of another VLAN: not ours here */
	rx_vlan_ping(10, false, v10_peer, v20_ip);
	ck_assert_uint_eq(Wr.frames, 4);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_NOT_OURS], 1);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_ICMP_ECHO], 2);
	/* a VLAN we have no address on */
	rx_vlan_ping(30, false, v20_peer, v20_ip);
	rx_vlan_ping(30, true, v20_peer, v20_ip);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_RX_VLAN_UNKNOWN], 2);
	ck_assert_uint_eq(Wr.frames, 4);
	/* a tag cut short */
	rx_vlan(0, false, FG_ETHERTYPE_VLAN, (const uint8_t *)"\0", 1, 100);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_RX_RUNT], 1);
	down();
}
END_TEST

/* Resolving asks from the address on the peer's network, on its VLAN. */
START_TEST(test_vlan_resolve)
{
	uint8_t mac[6];
	uint32_t peer20 = htonl(0xc6121407u), other = htonl(0x0a000001u), v20, ours;

	up_vlans();
	memcpy(&v20, v20_ip, 4);
	memcpy(&ours, our_ip, 4);
	ck_assert_int_eq(fg_net_arp_resolve(X.net, peer20, mac, 1000), -EAGAIN);
	fg_net_flush(X.net);
	ck_assert_uint_eq(Wr.frames, 1);
	ck_assert_uint_eq(Wr.vid, 20);
	ck_assert_uint_eq(Wr.arp_op, 1);
	ck_assert_uint_eq(Wr.spa, v20);
	/* off every network: from the first address, untagged */
	ck_assert_int_eq(fg_net_arp_resolve(X.net, other, mac, 1000), -EAGAIN);
	fg_net_flush(X.net);
	ck_assert_uint_eq(Wr.frames, 2);
	ck_assert_uint_eq(Wr.vid, 0);
	ck_assert_uint_eq(Wr.spa, ours);
	down();
}
END_TEST

/* A static neighbour answers at once, past the TTL, without a request;
 * 0.0.0.0 is refused. */
START_TEST(test_arp_static)
{
	static const uint8_t gw[6] = { 0x02, 0xfd, 0, 0, 0, 0x02 };
	uint8_t mac[6];
	uint32_t peer = htonl(0xc6120002u);

	up_vlans();
	ck_assert_int_eq(fg_net_arp_static(X.net, 0, gw), -EINVAL);
	ck_assert_int_eq(fg_net_arp_static(X.net, peer, gw), 0);
	ck_assert_int_eq(fg_net_arp_resolve(X.net, peer, mac, 1000), 0);
	ck_assert_mem_eq(mac, gw, 6);
	/* an hour on: still there, and nothing was asked */
	ck_assert_int_eq(fg_net_arp_resolve(X.net, peer, mac, 3600ull * 1000000000ull), 0);
	ck_assert_mem_eq(mac, gw, 6);
	fg_net_flush(X.net);
	ck_assert_uint_eq(Wr.frames, 0);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_ARP_REQUESTS], 0);
	down();
}
END_TEST

/* Reload: a new IPv4 set. An added address is ours at once; a removed one
 * is leaving (still ours, TCP told) until its time, then gone at a poll;
 * a set past FG_NET_MAX_ADDRS changes nothing. */
START_TEST(test_set_ipv4)
{
	uint32_t old, added, too_many[FG_NET_MAX_ADDRS + 1];
	uint8_t plen[FG_NET_MAX_ADDRS + 1] = { 0 };
	uint16_t vid[FG_NET_MAX_ADDRS + 1] = { 0 };

	up();
	memcpy(&old, our_ip, 4);
	added = htonl(0xc6120009u);		/* 198.18.0.9 */
	fg_net_poll(X.net, 1000);
	ck_assert(!fg_net_is_local_ipv4(X.net, added));
	for (unsigned i = 0; i <= FG_NET_MAX_ADDRS; i++)
		too_many[i] = htonl(0xc6120100u + i);
	ck_assert_int_eq(fg_net_set_ipv4(X.net, too_many, plen, vid, FG_NET_MAX_ADDRS + 1, 50), -EINVAL);
	ck_assert(fg_net_is_local_ipv4(X.net, old) && !fg_net_ipv4_leaving(X.net, old));
	ck_assert_int_eq(fg_net_set_ipv4(X.net, &added, plen, vid, 1, 5000), 0);
	ck_assert(fg_net_is_local_ipv4(X.net, added) && !fg_net_ipv4_leaving(X.net, added));
	ck_assert(fg_net_is_local_ipv4(X.net, old) && fg_net_ipv4_leaving(X.net, old));
	/* packets to the leaving address are still taken */
	rx_ip(PROTO_UDP, 1, 8, 2000);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_NOT_OURS], 0);
	fg_net_poll(X.net, 5999);
	ck_assert(fg_net_is_local_ipv4(X.net, old));
	fg_net_poll(X.net, 6000);
	ck_assert(!fg_net_is_local_ipv4(X.net, old) && !fg_net_ipv4_leaving(X.net, old));
	ck_assert(fg_net_is_local_ipv4(X.net, added));
	rx_ip(PROTO_UDP, 1, 8, 7000);
	ck_assert_uint_eq(X.st.ctr[FG_CTR_NET_IP_NOT_OURS], 1);
	down();
}
END_TEST

static Suite *net_suite(void)
{
	Suite *s = suite_create("net");
	TCase *t = tcase_create("l4-handlers");

	tcase_add_test(t, test_register_refusals);
	tcase_add_test(t, test_arp_static);
	tcase_add_test(t, test_set_ipv4);
	tcase_add_test(t, test_faults_parse);
	tcase_add_test(t, test_dispatch_by_protocol);
	tcase_add_test(t, test_poll_timers_and_deadline);
	tcase_add_test(t, test_tcp_registers_itself);
	tcase_add_test(t, test_exception_sorts);
	tcase_add_test(t, test_exception_absent);
	tcase_add_test(t, test_exception_rate);
	tcase_add_test(t, test_vlan_answers_on_its_own);
	tcase_add_test(t, test_vlan_resolve);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(net_suite)
