/* SPDX-License-Identifier: MIT */
/*
 * test_tcp_connect.c — the active open (tcp_connect.c) on crafted
 * segments with a driven clock: the SYN and its options, SYN-SENT's
 * answers (SYN-ACK with and without window scaling, data and FIN on the
 * SYN-ACK, refusal by RST, unacceptable ACKs, stray segments), the wait
 * for ARP, SYN retransmission with backoff and give-up, Karn's rule on the
 * SYN, simultaneous open, a close or an abort while opening, ephemeral
 * ports and the port predicate (RSS), a client-only instance, IPv6 opens
 * with Neighbour Discovery, and the refusals of fg_tcp_connect.
 * Every test ends with all packet buffers returned to the port.
 */
#include <errno.h>

#include "floodgate/wire.h"

#include "tcp_fixture.h"

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_ACK 0x10
#define SERVER_PORT 119
#define PEER_ISN 7000u

static unsigned connects;	/* on_connect calls */

static void on_connect(void *ctx, struct fg_tcp_conn *c)
{
	ck_assert_ptr_eq(ctx, &FX->ctx_token);
	ck_assert_ptr_eq(c, FX->conn);
	ck_assert_int_eq(fg_tcp_conn_state(c), FG_TCP_ESTABLISHED);
	connects++;
}

static const struct fg_tcp_app_ops client_ops = {
	.on_accept = fx_accept, .on_data = fx_data, .on_eof = fx_eof,
	.on_writable = fx_writable, .on_close = fx_close, .on_connect = on_connect,
};

/* The fixture's instance again, with on_connect and `tc`'s limits. */
static void client_setup_cfg(struct fg_tcp_config *tc)
{
	fg_tcp_destroy(FX->tcp);
	tc->secret = 7;
	FX->tcp = fg_tcp_create(FX->net, tc, &client_ops, FX);
	ck_assert_ptr_nonnull(FX->tcp);
	connects = 0;
}

/* A client-only instance (no listen address) of 8 blocks that gives an
 * open up after `syn_retries` resends. */
static void client_only(unsigned syn_retries)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.syn_retries = syn_retries;
	client_setup_cfg(&tc);
}

/* The client instance of 8 blocks, with a listener on port 119 of
 * `family` (the fixture's instance must be of that family). */
static void client_listening(int family)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.listen[0].family = family;
	tc.listen[0].port = 119;
	tc.n_listen = 1;
	client_setup_cfg(&tc);
}

static void client_setup(void)
{
	fx_setup4();
	client_listening(AF_INET);
}

/* An ARP request from the peer: net learns its MAC (RFC 826 merge). */
static void peer_arp(void)
{
	uint8_t f[60];
	struct fg_rx_frame fr;

	fg_craft_arp_request(f, FX->peer_mac, FX->peer, FX->addr);
	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, f, 60, &fr), 0);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	FX->n_tx = 0;	/* our ARP reply */
}

static struct fg_endpoint ep(uint32_t addr, uint16_t port)
{
	struct fg_endpoint e = { .family = AF_INET, .port = port };

	memcpy(e.addr, &addr, 4);
	return e;
}

/* Open to the peer's port 119; returns our port. The SYN is flushed. */
static uint16_t open_conn(void)
{
	struct fg_endpoint local = ep(FX->addr, 0), peer = ep(FX->peer, SERVER_PORT), l;
	int err = 0;

	FX->conn = fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now, &err);
	ck_assert_msg(FX->conn != NULL, "connect: %d", err);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	fg_tcp_conn_local(FX->conn, &l);
	ck_assert_uint_ge(l.port, 49152);
	fg_net_flush(FX->net);
	return l.port;
}

/* The peer's MAC known, an open: our port; its ISS in *iss. */
static uint16_t open_known(uint32_t *iss)
{
	uint16_t port;

	peer_arp();
	port = open_conn();
	*iss = fx_last()->seq;
	return port;
}

/* A segment from the peer's port 119 to our `port`. */
static void from_peer(uint16_t port, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd,
		      const void *data, uint32_t len, const uint8_t *opts, unsigned optlen)
{
	fx_seg_full(SERVER_PORT, port, flags, seq, ack, wnd, data, len, opts, optlen, 0);
}

/* MSS 1000, window scale `ws` (none when < 0), SACK-permitted. */
static void syn_ack(uint16_t port, uint32_t ack, int ws)
{
	const uint8_t opts[12] = { 2, 4, 0x03, 0xe8, 1, 1, 4, 2, 1, 3, 3, (uint8_t)(ws < 0 ? 0 : ws) };

	from_peer(port, F_SYN | F_ACK, PEER_ISN, ack, 65535, NULL, 0, opts, ws < 0 ? 8 : 12);
}

START_TEST(test_connect_handshake_and_session)
{
	struct fx_tx *syn, *t;
	uint32_t iss;
	uint16_t port;

	peer_arp();
	port = open_conn();
	ck_assert_uint_eq(FX->n_tx, 1);
	syn = fx_last();
	ck_assert(syn->is_tcp);
	ck_assert_uint_eq(syn->flags, F_SYN);
	ck_assert_uint_eq(syn->sport, port);
	ck_assert_uint_eq(syn->dport, SERVER_PORT);
	ck_assert_int_eq(memcmp(syn->frame, FX->peer_mac, 6), 0);
	ck_assert_uint_eq(syn->mss, 1460);
	ck_assert_int_eq(syn->ws, 3);		/* 256 KiB of window needs a shift of 3 */
	ck_assert(syn->sack_ok);
	ck_assert_uint_eq(syn->wnd, 65535);
	/* the checksum is right (software: the fixture's port has no offload) */
	ck_assert_uint_eq(fx_csum(syn->frame + 34, syn->len - 34,
				  fg_ipv4_pseudo_sum(FX->addr, FX->peer, FG_IP_PROTO_TCP,
						     syn->len - 34)), 0);
	iss = syn->seq;
	FX->n_tx = 0;
	FX->now += 3 * FX_MS;
	syn_ack(port, iss + 1, 7);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	ck_assert_uint_eq(connects, 1);
	ck_assert_uint_eq(FX->accepts, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECTS], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECTED], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTT_SAMPLES], 1);
	t = fx_last();
	ck_assert_uint_eq(t->flags, F_ACK);
	ck_assert_uint_eq(t->seq, iss + 1);
	ck_assert_uint_eq(t->ack, PEER_ISN + 1);
	ck_assert_uint_eq(t->wnd, (256 * 1024) >> 3);	/* scaled from here on */
	/* the client speaks: segments of the peer's MSS */
	FX->n_tx = 0;
	{
		static uint8_t big[2500];

		memset(big, 'x', sizeof(big));
		ck_assert_int_eq(fg_tcp_send(FX->conn, big, sizeof(big)), (int)sizeof(big));
	}
	fx_advance(0);
	ck_assert_uint_ge(FX->n_tx, 3);
	ck_assert_uint_eq(FX->tx[0].plen, 1000);
	ck_assert_uint_eq(FX->tx[0].seq, iss + 1);
	/* the peer answers and acknowledges */
	from_peer(port, F_ACK, PEER_ISN + 1, iss + 1 + 2500, 1024, "235 ok\r\n", 8, NULL, 0);
	ck_assert_uint_eq(FX->rx_len, 8);
	ck_assert_int_eq(memcmp(FX->rx, "235 ok\r\n", 8), 0);
	/* an orderly close from our side: FIN, the peer's ACK and FIN */
	ck_assert_int_eq(fg_tcp_close(FX->conn), 0);
	fx_advance(0);
	t = fx_last();
	ck_assert_uint_eq(t->flags, F_FIN | F_ACK);
	from_peer(port, F_FIN | F_ACK, PEER_ISN + 9, iss + 2502, 1024, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_FIN);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TO_TIME_WAIT], 1);
}
END_TEST

/* The peer's SYN-ACK without window scale: no scaling either way. */
START_TEST(test_connect_no_window_scale)
{
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	syn_ack(port, iss + 1, -1);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	ck_assert_uint_eq(fx_last()->wnd, 65535);	/* 256 KiB, unscaled: capped */
	/* the peer's window is taken as it is: 1000 bytes, one MSS-sized segment */
	from_peer(port, F_ACK, PEER_ISN + 1, iss + 1, 1000, NULL, 0, NULL, 0);
	FX->n_tx = 0;
	{
		static uint8_t buf[3000];

		ck_assert_int_eq(fg_tcp_send(FX->conn, buf, sizeof(buf)), (int)sizeof(buf));
	}
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].plen, 1000);
}
END_TEST

/* Text and a FIN on the SYN-ACK go on to the ordinary checks. */
START_TEST(test_connect_synack_with_data_and_fin)
{
	const uint8_t opts[4] = { 2, 4, 0x05, 0xb4 };
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	from_peer(port, F_SYN | F_ACK | F_FIN, PEER_ISN, iss + 1, 65535, "200 hi\r\n", 8, opts, 4);
	ck_assert_uint_eq(connects, 1);
	ck_assert_uint_eq(FX->rx_len, 8);
	ck_assert_int_eq(memcmp(FX->rx, "200 hi\r\n", 8), 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_CLOSE_WAIT);
	ck_assert_uint_eq(FX->eofs, 1);
	ck_assert_uint_eq(fx_last()->ack, PEER_ISN + 1 + 8 + 1);
	fg_tcp_close(FX->conn);
	fx_advance(0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_LAST_ACK);
	from_peer(port, F_ACK, PEER_ISN + 10, iss + 2, 65535, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

START_TEST(test_connect_refused)
{
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	FX->n_tx = 0;
	/* a RST without ACK proves nothing (RFC 5961 3.2): ignored */
	from_peer(port, F_RST, 0, 0, 0, NULL, 0, NULL, 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	/* a RST acknowledging something else: dropped, never answered */
	from_peer(port, F_RST | F_ACK, 0, iss + 7, 0, NULL, 0, NULL, 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_SYN_SENT_BAD], 2);
	/* the answer to our SYN: refused */
	from_peer(port, F_RST | F_ACK, 0, iss + 1, 0, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
	ck_assert_uint_eq(connects, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECT_REFUSED], 1);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	ck_assert_uint_eq(FX->n_tx, 0);
}
END_TEST

/* An ACK outside (ISS, SND.NXT] draws <SEQ=SEG.ACK><CTL=RST>; a segment
 * with neither SYN nor RST is dropped. */
START_TEST(test_connect_unacceptable)
{
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	FX->n_tx = 0;
	syn_ack(port, iss, 7);			/* acknowledges nothing of ours */
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
	ck_assert_uint_eq(fx_last()->seq, iss);
	syn_ack(port, iss + 2, 7);		/* beyond what we sent */
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(fx_last()->seq, iss + 2);
	from_peer(port, F_ACK, PEER_ISN, iss + 1, 65535, "x", 1, NULL, 0);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_SYN_SENT_BAD], 3);
	ck_assert_uint_eq(FX->rx_len, 0);
	/* the real answer still completes the open */
	syn_ack(port, iss + 1, 7);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	fg_tcp_abort(FX->conn);
	ck_assert_uint_eq(FX->closes, 0);	/* the app's own abort: no on_close */
	fx_advance(0);
}
END_TEST

/* No ARP entry: a request, no SYN until the reply; then the SYN at the
 * next tick. */
START_TEST(test_connect_waits_for_arp)
{
	uint16_t port;

	port = open_conn();
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert(!FX->tx[0].is_tcp);
	ck_assert_uint_eq(FX->tx[0].frame[21], 1);	/* an ARP request */
	FX->n_tx = 0;
	fx_advance(5 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 0);			/* still no MAC, no SYN */
	/* a SYN-ACK cannot answer a SYN never sent */
	syn_ack(port, 12345, 7);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_SENT);
	FX->n_tx = 0;
	peer_arp();
	fx_advance(2 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->flags, F_SYN);
	syn_ack(port, fx_last()->seq + 1, 7);
	ck_assert_uint_eq(connects, 1);
}
END_TEST

/* ARP never answered: given up when the SYNs' schedule would have ended. */
/* The open is given up 3 s on (syn_retries 1: 1 s + 2 s), not before. */
static void given_up_after_schedule(void)
{
	uint64_t t0 = FX->now;

	while (FX->closes == 0 && FX->now - t0 < 10000 * FX_MS)
		fx_advance(50 * FX_MS);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_TIMEOUT);
	ck_assert_uint_ge(FX->now - t0, 3000 * FX_MS);
	ck_assert_uint_le(FX->now - t0, 3100 * FX_MS);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECT_TIMEOUT], 1);
}

START_TEST(test_connect_arp_never_answered)
{
	client_only(1);			/* 1 s + 2 s */
	open_conn();
	given_up_after_schedule();
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_SEGS], 0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* The SYN again at 1, 2 s (RTO doubling), then given up. */
START_TEST(test_connect_syn_retransmit_and_give_up)
{
	uint32_t iss;

	client_only(2);
	peer_arp();
	open_conn();
	iss = fx_last()->seq;
	FX->n_tx = 0;
	fx_advance(999 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 0);
	fx_advance(2 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->flags, F_SYN);
	ck_assert_uint_eq(fx_last()->seq, iss);		/* the same SYN */
	fx_advance(1990 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	fx_advance(20 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_RETRANS], 2);
	ck_assert_uint_eq(FX->closes, 0);
	fx_advance(4100 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_TIMEOUT);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECT_TIMEOUT], 1);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* Karn: a SYN-ACK after a retransmitted SYN gives no RTT sample. */
START_TEST(test_connect_karn)
{
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	fx_advance(1001 * FX_MS);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_RETRANS], 1);
	syn_ack(port, iss + 1, 7);
	ck_assert_uint_eq(connects, 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTT_SAMPLES], 0);
}
END_TEST

/* Both ends open at once: SYN-RECEIVED, our SYN-ACK, then their ACK. */
START_TEST(test_connect_simultaneous_open)
{
	const uint8_t opts[4] = { 2, 4, 0x05, 0xb4 };
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	FX->n_tx = 0;
	from_peer(port, F_SYN, PEER_ISN, 0, 65535, NULL, 0, opts, 4);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_RCVD);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(fx_last()->flags, F_SYN | F_ACK);
	ck_assert_uint_eq(fx_last()->seq, iss);
	ck_assert_uint_eq(fx_last()->ack, PEER_ISN + 1);
	ck_assert_int_eq(fx_last()->ws, -1);		/* the peer offered none */
	from_peer(port, F_ACK, PEER_ISN + 1, iss + 1, 65535, NULL, 0, NULL, 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	ck_assert_uint_eq(connects, 1);
	ck_assert_uint_eq(FX->accepts, 0);		/* ours, not a passive open */
	/* a RST now is an ordinary reset, told to the app */
	from_peer(port, F_RST, PEER_ISN + 1, 0, 0, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
}
END_TEST

/* Reset in SYN-RECEIVED of a simultaneous open: the app hears of it. */
START_TEST(test_connect_simultaneous_reset)
{
	uint16_t port;

	peer_arp();
	port = open_conn();
	from_peer(port, F_SYN, PEER_ISN, 0, 65535, NULL, 0, NULL, 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_SYN_RCVD);
	from_peer(port, F_RST, PEER_ISN + 1, 0, 0, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* A close while opening is kept: FIN-WAIT-1 at once, no on_connect; an
 * abort while opening sends nothing and tells nothing. */
START_TEST(test_connect_close_and_abort_while_opening)
{
	uint32_t iss;
	uint16_t port;

	port = open_known(&iss);
	ck_assert_int_eq(fg_tcp_send(FX->conn, "x", 1), -ENOTCONN);
	ck_assert_int_eq(fg_tcp_close(FX->conn), 0);
	FX->n_tx = 0;
	syn_ack(port, iss + 1, 7);
	ck_assert_uint_eq(connects, 0);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_FIN_WAIT_1);
	ck_assert_uint_eq(fx_last()->flags, F_FIN | F_ACK);
	ck_assert_uint_eq(fx_last()->seq, iss + 1);
	from_peer(port, F_FIN | F_ACK, PEER_ISN + 1, iss + 2, 65535, NULL, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_FIN);
	/* a second open, aborted before any answer */
	FX->closes = 0;
	port = open_conn();
	FX->n_tx = 0;
	fg_tcp_abort(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->closes, 0);
	/* its late SYN-ACK finds no connection: answered with a RST */
	syn_ack(port, 1, 7);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
}
END_TEST

START_TEST(test_connect_refusals)
{
	struct fg_endpoint local = ep(FX->addr, 0), peer = ep(FX->peer, SERVER_PORT), bad;
	struct fg_tcp_conn *c[8];
	uint16_t ports[8];
	int err = 0;

	peer_arp();
	bad = local;
	bad.family = AF_INET6;
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &bad, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EAFNOSUPPORT);
	bad = ep(FX->peer, 0);			/* not one of ours */
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &bad, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EADDRNOTAVAIL);
	bad = ep(0, SERVER_PORT);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &bad, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EINVAL);
	bad = ep(htonl(0xe0000001u), SERVER_PORT);	/* multicast */
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &bad, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EINVAL);
	bad = ep(FX->addr, SERVER_PORT);		/* ourselves */
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &bad, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EINVAL);
	bad = ep(FX->peer, 0);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &bad, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EINVAL);
	/* eight blocks: eight opens to one peer, each on a port of its own */
	for (unsigned i = 0; i < 8; i++) {
		struct fg_endpoint l;

		c[i] = fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now, &err);
		ck_assert_ptr_nonnull(c[i]);
		fg_tcp_conn_local(c[i], &l);
		ports[i] = l.port;
		for (unsigned k = 0; k < i; k++)
			ck_assert_uint_ne(ports[k], ports[i]);
	}
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -ENOBUFS);
	fg_tcp_abort(c[7]);
	fx_advance(0);
	/* a port given by the app: taken when free, refused when in use */
	bad = ep(FX->addr, ports[0]);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &bad, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	bad.port = 40001;
	c[7] = fg_tcp_connect(FX->tcp, &bad, &peer, &FX->ctx_token, FX->now, &err);
	ck_assert_ptr_nonnull(c[7]);
	for (unsigned i = 0; i < 8; i++)
		fg_tcp_abort(c[i]);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	ck_assert_uint_eq(FX->closes, 0);
}
END_TEST

/* No listen address: a client only, on_accept not needed; a SYN to it
 * finds no listener. */
START_TEST(test_client_only_instance)
{
	struct fg_tcp_app_ops ops = client_ops;
	struct fg_tcp_config tc;
	uint16_t port;

	ops.on_accept = NULL;
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	tc.secret = 7;
	fg_tcp_destroy(FX->tcp);
	FX->tcp = fg_tcp_create(FX->net, &tc, &ops, FX);
	ck_assert_ptr_nonnull(FX->tcp);
	peer_arp();
	fx_syn(999, -1);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(fx_last()->flags, F_RST | F_ACK);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_NO_CONN], 1);
	port = open_conn();
	syn_ack(port, fx_last()->seq + 1, 7);
	ck_assert_uint_eq(connects, 1);
	fg_tcp_abort(FX->conn);
	fx_advance(0);
}
END_TEST

/* A passive (observe-only) instance opens nothing. */
START_TEST(test_connect_passive_refused)
{
	struct fg_endpoint local = ep(FX->addr, 0), peer = ep(FX->peer, SERVER_PORT);
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	struct fg_stats st = { 0 };
	struct fg_net *net;
	struct fg_tcp *t;
	int err = 0;

	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, FX->mac, 6);
	nc.ipv4[0] = FX->addr;
	nc.n_ipv4 = 1;
	nc.passive = true;
	net = fg_net_create(&nc, fg_memport_ops(), FX->mp, &st);
	ck_assert_ptr_nonnull(net);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	tc.n_listen = 1;
	tc.listen[0].family = AF_INET;
	tc.listen[0].port = 119;
	t = fg_tcp_create(net, &tc, &client_ops, FX);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(fg_tcp_connect(t, &local, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EOPNOTSUPP);
	fg_tcp_destroy(t);
	fg_net_destroy(net);
}
END_TEST

/* An IPv6 client instance (fx_setup6's addresses, a listener on [::]:119). */
static void client_setup6(void)
{
	fx_teardown();
	fx_setup6();
	client_listening(AF_INET6);
}

static struct fg_endpoint ep6(const uint8_t *addr, uint16_t port)
{
	struct fg_endpoint e = { .family = AF_INET6, .port = port };

	memcpy(e.addr, addr, 16);
	return e;
}

/* A Neighbour Advertisement from the peer's MAC for `target`, its
 * link-layer option `mac`, solicited and override (RFC 4861 4.4). */
static void peer_na(const uint8_t *target, const uint8_t *mac)
{
	uint8_t f[14 + 40 + 32];
	uint8_t *ip = f + 14, *m = ip + 40;
	struct fg_rx_frame fr;

	memset(f, 0, sizeof(f));
	memcpy(f, FX->mac, 6);
	memcpy(f + 6, FX->peer_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 32;			/* payload length */
	ip[6] = 58;			/* ICMPv6 */
	ip[7] = 255;			/* ND: hop limit 255 */
	memcpy(ip + 8, FX->peer6, 16);
	memcpy(ip + 24, FX->addr6, 16);
	m[0] = 136;
	m[4] = 0x60;
	memcpy(m + 8, target, 16);
	m[24] = 2;			/* target link-layer address */
	m[25] = 1;
	memcpy(m + 26, mac, 6);
	fg_wr16(m + 2, fx_csum(m, 32, fg_ipv6_pseudo_sum(ip + 8, ip + 24, 58, 32)));
	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, f, sizeof(f), &fr), 0);
	fg_net_rx(FX->net, &fr, 1, FX->now);
}

/* IPv6: the peer's MAC by Neighbour Discovery. The open sends an NS to
 * the peer's solicited-node group (our MAC in its source option), waits,
 * sends no second NS within the second, ignores an NA for an address it
 * is not resolving, and sends its SYN (MSS for IPv6's header) to the MAC
 * the peer advertised at the first tick after the NA; the connection
 * then carries data. */
START_TEST(test_connect_ipv6_waits_for_nd)
{
	static const uint8_t sn_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	static const uint8_t adv_mac[6] = { 2, 0, 0, 0, 0, 0x77 };
	uint8_t other[16], group[16];
	struct fg_endpoint local, peer, l;
	const uint8_t *ip, *m;
	int err = 0;

	client_setup6();
	local = ep6(FX->addr6, 0);
	peer = ep6(FX->peer6, SERVER_PORT);
	FX->conn = fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now, &err);
	ck_assert_msg(FX->conn != NULL, "connect: %d", err);
	fg_tcp_conn_local(FX->conn, &l);
	ck_assert_int_eq(l.family, AF_INET6);
	ck_assert_uint_ge(l.port, 49152);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert(!FX->tx[0].is_tcp);
	ip = FX->tx[0].frame + 14;
	m = ip + 40;
	inet_pton(AF_INET6, "ff02::1:ff00:1", group);
	ck_assert_mem_eq(FX->tx[0].frame, sn_mac, 6);
	ck_assert_uint_eq(ip[6], 58);
	ck_assert_uint_eq(ip[7], 255);
	ck_assert_mem_eq(ip + 8, FX->addr6, 16);
	ck_assert_mem_eq(ip + 24, group, 16);
	ck_assert_uint_eq(m[0], 135);
	ck_assert_mem_eq(m + 8, FX->peer6, 16);
	ck_assert_uint_eq(m[24], 1);			/* source link-layer option */
	ck_assert_mem_eq(m + 26, FX->mac, 6);
	ck_assert_uint_eq(fx_csum(m, 32, fg_ipv6_pseudo_sum(ip + 8, ip + 24, 58, 32)), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_SOLICIT_TX], 1);

	FX->n_tx = 0;
	fx_advance(5 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 0);			/* no MAC: no SYN, no second NS */
	inet_pton(AF_INET6, "2001:db8::9", other);
	peer_na(other, adv_mac);			/* not asked for: not learned */
	fx_advance(2 * FX_MS);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_ND_LEARNED], 0);
	ck_assert_uint_eq(FX->n_tx, 0);
	peer_na(FX->peer6, adv_mac);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_ND_LEARNED], 1);
	fx_advance(2 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert(FX->tx[0].is_tcp);
	ck_assert_uint_eq(FX->tx[0].flags, F_SYN);
	ck_assert_uint_eq(FX->tx[0].frame[12], 0x86);
	ck_assert_mem_eq(FX->tx[0].frame, adv_mac, 6);
	ck_assert_uint_eq(FX->tx[0].mss, 1520 - 60);
	ck_assert_uint_eq(FX->tx[0].sport, l.port);
	syn_ack(l.port, FX->tx[0].seq + 1, 7);
	ck_assert_uint_eq(connects, 1);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	FX->n_tx = 0;
	ck_assert_int_eq(fg_tcp_send(FX->conn, "MODE STREAM\r\n", 13), 13);
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->plen, 13);
	/* from the SYN-ACK on, the MAC its frame came from (as for IPv4) */
	ck_assert_mem_eq(fx_last()->frame, FX->peer_mac, 6);
	fg_tcp_abort(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* An NS never answered: one a second, given up with the SYNs' schedule. */
START_TEST(test_connect_ipv6_nd_never_answered)
{
	struct fg_endpoint local, peer;
	struct fg_tcp_config tc;
	int err = 0;

	fx_teardown();
	fx_setup6();
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.syn_retries = 1;				/* 1 s + 2 s */
	tc.listen[0].family = AF_INET6;
	tc.n_listen = 0;
	client_setup_cfg(&tc);
	local = ep6(FX->addr6, 0);
	peer = ep6(FX->peer6, SERVER_PORT);
	FX->conn = fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now, &err);
	ck_assert_ptr_nonnull(FX->conn);
	given_up_after_schedule();
	/* the first at once, then one each second */
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_NET6_SOLICIT_TX], 3);
	ck_assert_uint_le(FX->st.ctr[FG_CTR_NET6_SOLICIT_TX], 4);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_SEGS], 0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* IPv6 opens that cannot be: mixed families, an address not ours, peers
 * no connection can have. */
START_TEST(test_connect_ipv6_refusals)
{
	uint8_t bad[16];
	struct fg_endpoint local, peer;
	int err = 0;

	client_setup6();
	ck_assert_uint_eq(fx_alen(), 16);
	ck_assert_mem_eq(fx_our_addr(), FX->addr6, 16);
	ck_assert_mem_eq(fx_peer_addr(), FX->peer6, 16);
	local = ep6(FX->addr6, 0);
	peer = ep(FX->peer, SERVER_PORT);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EAFNOSUPPORT);
	local = ep6(FX->peer6, 0);
	peer = ep6(FX->peer6, SERVER_PORT);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EADDRNOTAVAIL);
	local = ep6(FX->addr6, 0);
	static const char *const refused[] = { "::", "::1", "ff02::1", "2001:db8::2" };
	for (unsigned i = 0; i < 4; i++) {
		inet_pton(AF_INET6, refused[i], bad);
		peer = ep6(bad, SERVER_PORT);
		err = 0;
		ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
		ck_assert_int_eq(err, -EINVAL);
	}
	peer = ep6(FX->peer6, 0);
	ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_SOLICIT_TX], 0);
}
END_TEST

/* The port predicate: asked once per candidate with the open's endpoints,
 * it decides the port; when it accepts none of the free ports the open is
 * refused cleanly (-EADDRNOTAVAIL, nothing allocated, nothing sent). */
static unsigned pred_calls, pred_mod;
static struct fg_endpoint pred_peer;

static bool port_is_mod(void *ctx, const struct fg_endpoint *local, const struct fg_endpoint *peer)
{
	ck_assert_ptr_eq(ctx, &pred_mod);
	ck_assert_int_eq(local->family, peer->family);
	ck_assert_mem_eq(peer->addr, pred_peer.addr, 16);
	ck_assert_uint_eq(peer->port, pred_peer.port);
	ck_assert(fg_net_is_local_ipv4(FX->net, fg_rdaddr(local->addr)) ||
		  fg_net_is_local_ipv6(FX->net, local->addr));
	pred_calls++;
	return pred_mod && local->port % pred_mod == 3;
}

START_TEST(test_connect_port_predicate)
{
	struct fg_endpoint local, peer, l;
	struct fg_tcp_config tc;
	int err = 0;

	for (int v6 = 0; v6 < 2; v6++) {
		fx_teardown();
		v6 ? fx_setup6() : fx_setup4();
		memset(&tc, 0, sizeof(tc));
		tc.max_conns = 8;
		tc.port_ok = port_is_mod;
		tc.port_ok_ctx = &pred_mod;
		client_setup_cfg(&tc);
		local = v6 ? ep6(FX->addr6, 0) : ep(FX->addr, 0);
		peer = v6 ? ep6(FX->peer6, SERVER_PORT) : ep(FX->peer, SERVER_PORT);
		pred_peer = peer;
		pred_mod = 7;
		for (unsigned i = 0; i < 4; i++) {
			struct fg_tcp_conn *c;

			pred_calls = 0;
			c = fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now, &err);
			ck_assert_msg(c != NULL, "connect: %d", err);
			ck_assert_uint_ge(pred_calls, 1);
			fg_tcp_conn_local(c, &l);
			ck_assert_uint_eq(l.port % 7, 3);
			ck_assert_uint_ge(l.port, 49152);
		}
		/* an explicit port is the app's business */
		local.port = 50000;
		pred_calls = 0;
		ck_assert_ptr_nonnull(fg_tcp_connect(FX->tcp, &local, &peer, &FX->ctx_token, FX->now,
						     &err));
		ck_assert_uint_eq(pred_calls, 0);
		local.port = 0;
		/* no port fits: every free one asked, then a clean refusal */
		pred_mod = 0;
		pred_calls = 0;
		FX->n_tx = 0;
		fg_net_flush(FX->net);
		FX->n_tx = 0;
		ck_assert_ptr_null(fg_tcp_connect(FX->tcp, &local, &peer, NULL, FX->now, &err));
		ck_assert_int_eq(err, -EADDRNOTAVAIL);
		ck_assert_uint_eq(pred_calls, 16384 - 5);
		ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECT_NO_PORT], 1);
		ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 5);
		fg_net_flush(FX->net);
		ck_assert_uint_eq(FX->n_tx, 0);
	}
}
END_TEST

/* One instance accepts and opens side by side. */
START_TEST(test_active_beside_passive)
{
	struct fg_tcp_conn *passive;
	uint16_t port;

	peer_arp();
	fx_handshake();
	passive = FX->conn;
	port = open_conn();
	syn_ack(port, fx_last()->seq + 1, 7);
	ck_assert_uint_eq(connects, 1);
	ck_assert_uint_eq(FX->accepts, 1);
	ck_assert_int_eq(fg_tcp_conn_state(passive), FG_TCP_ESTABLISHED);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 2);
	fg_tcp_abort(passive);
	fg_tcp_abort(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* on_connect is optional: the open completes without it. */
START_TEST(test_connect_without_on_connect)
{
	struct fg_tcp_config tc;
	uint16_t port;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	fx_reconfig(&tc);		/* the fixture's ops: no on_connect */
	connects = 0;
	peer_arp();
	port = open_conn();
	syn_ack(port, fx_last()->seq + 1, 7);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CONNECTED], 1);
	ck_assert_uint_eq(connects, 0);
	fg_tcp_abort(FX->conn);
	fx_advance(0);
}
END_TEST

static Suite *tcp_connect_suite(void)
{
	Suite *s = suite_create("tcp_connect");
	TCase *t = tcase_create("active open");

	tcase_add_checked_fixture(t, client_setup, fx_teardown);
	tcase_add_test(t, test_connect_handshake_and_session);
	tcase_add_test(t, test_connect_no_window_scale);
	tcase_add_test(t, test_connect_synack_with_data_and_fin);
	tcase_add_test(t, test_connect_refused);
	tcase_add_test(t, test_connect_unacceptable);
	tcase_add_test(t, test_connect_waits_for_arp);
	tcase_add_test(t, test_connect_arp_never_answered);
	tcase_add_test(t, test_connect_syn_retransmit_and_give_up);
	tcase_add_test(t, test_connect_karn);
	tcase_add_test(t, test_connect_simultaneous_open);
	tcase_add_test(t, test_connect_simultaneous_reset);
	tcase_add_test(t, test_connect_close_and_abort_while_opening);
	tcase_add_test(t, test_connect_refusals);
	tcase_add_test(t, test_client_only_instance);
	tcase_add_test(t, test_connect_passive_refused);
	tcase_add_test(t, test_connect_ipv6_waits_for_nd);
	tcase_add_test(t, test_connect_ipv6_nd_never_answered);
	tcase_add_test(t, test_connect_ipv6_refusals);
	tcase_add_test(t, test_connect_port_predicate);
	tcase_add_test(t, test_active_beside_passive);
	tcase_add_test(t, test_connect_without_on_connect);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(tcp_connect_suite)
