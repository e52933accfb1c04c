/* SPDX-License-Identifier: MIT */
/*
 * test_tcp.c — the TCP state machine on crafted segments, with a driven
 * clock: every state x every combination of the six flags (with and
 * without payload) against RFC 9293 3.10.7.4 (and RFC 5961 for RST/SYN),
 * then the handshake and its options, CLOSED/LISTEN replies, reassembly,
 * receive window and holds, delayed ACK, segmentation by MSS, RTO with
 * backoff and give-up, RTT estimation, fast retransmit, persist,
 * TIME-WAIT, idle timeout, SYN backlog and cookies, pool exhaustion.
 * Every test ends with all packet buffers returned to the port.
 */
#include <errno.h>
#include <stdlib.h>

#include "tcp_fixture.h"

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10
#define F_URG 0x20

enum reply { R_NONE, R_ACK };

/* ---------------------------------------------------------------- state drivers */

struct drive {
	enum fg_tcp_state state;
	struct fg_tcp_conn *blk;	/* the block (valid memory even after free) */
	uint32_t our_nxt;		/* our SND.NXT */
	bool app;			/* the app is attached */
};

static void app_close_now(void)
{
	ck_assert_int_eq(fg_tcp_close(FX->conn), 0);
	fx_advance(0);
}

/* Bring a fresh connection into `s`; FX->pseq is RCV.NXT afterwards. */
static struct drive drive_to(enum fg_tcp_state s)
{
	struct fx *f = FX;
	struct drive d = { .state = s };

	if (s == FG_TCP_SYN_RCVD) {
		f->pseq = 5000;
		fx_syn(f->pseq - 1, -1);
		ck_assert_uint_eq(fx_last()->flags, F_SYN | F_ACK);
		d.our_nxt = fx_last()->seq + 1;
		f->n_tx = 0;
		return d;
	}
	fx_handshake();
	d.blk = f->conn;
	d.our_nxt = f->our_seq;
	d.app = true;
	switch (s) {
	case FG_TCP_CLOSE_WAIT:
	case FG_TCP_LAST_ACK:
		fx_seg(F_FIN | F_ACK, f->pseq++, d.our_nxt, 65535, NULL, 0);
		ck_assert_int_eq(fg_tcp_conn_state(d.blk), FG_TCP_CLOSE_WAIT);
		if (s == FG_TCP_LAST_ACK) {
			app_close_now();
			ck_assert_uint_eq(fx_last()->flags, F_FIN | F_ACK);
			d.our_nxt++;
		}
		break;
	case FG_TCP_FIN_WAIT_1:
	case FG_TCP_FIN_WAIT_2:
	case FG_TCP_CLOSING:
	case FG_TCP_TIME_WAIT:
		app_close_now();
		ck_assert_uint_eq(fx_last()->flags, F_FIN | F_ACK);
		d.our_nxt++;
		if (s == FG_TCP_CLOSING) {
			fx_seg(F_FIN | F_ACK, f->pseq++, d.our_nxt - 1, 65535, NULL, 0);
		} else if (s != FG_TCP_FIN_WAIT_1) {
			fx_seg(F_ACK, f->pseq, d.our_nxt, 65535, NULL, 0);
			if (s == FG_TCP_TIME_WAIT) {
				fx_seg(F_FIN | F_ACK, f->pseq++, d.our_nxt, 65535, NULL, 0);
				d.app = false;
			}
		}
		break;
	default:
		break;
	}
	ck_assert_int_eq(fg_tcp_conn_state(d.blk), s);
	f->n_tx = 0;
	return d;
}

/* ---------------------------------------------------------------- the table */

struct expect {
	enum fg_tcp_state next;		/* FG_TCP_CLOSED = block freed */
	enum reply reply;
	int app_close;			/* -1 none, else enum fg_tcp_close_reason */
};

/*
 * RFC 9293 3.10.7.4 for a segment at RCV.NXT acknowledging SND.NXT, in
 * the RFC's order: RST, then SYN, then "no ACK -> drop", then ACK, FIN.
 */
static struct expect expected(enum fg_tcp_state s, uint8_t fl, bool data)
{
	bool attached = s != FG_TCP_SYN_RCVD && s != FG_TCP_TIME_WAIT;

	if (fl & F_RST)
		return (struct expect){ FG_TCP_CLOSED, R_NONE, attached ? FG_TCP_CLOSE_RST : -1 };
	if (fl & F_SYN) {
		if (s == FG_TCP_SYN_RCVD)	/* passive open: back to LISTEN */
			return (struct expect){ FG_TCP_CLOSED, R_NONE, -1 };
		return (struct expect){ s, R_ACK, -1 };	/* RFC 5961 4.2 challenge */
	}
	if (!(fl & F_ACK))
		return (struct expect){ s, R_NONE, -1 };
	switch (s) {
	case FG_TCP_SYN_RCVD:
		if (fl & F_FIN)
			return (struct expect){ FG_TCP_CLOSE_WAIT, R_ACK, -1 };
		return (struct expect){ FG_TCP_ESTABLISHED, R_NONE, -1 };
	case FG_TCP_ESTABLISHED:
		if (fl & F_FIN)
			return (struct expect){ FG_TCP_CLOSE_WAIT, R_ACK, -1 };
		return (struct expect){ s, R_NONE, -1 };	/* data: delayed ACK */
	case FG_TCP_FIN_WAIT_1:	/* the ACK covers our FIN */
	case FG_TCP_FIN_WAIT_2:
		if (fl & F_FIN)
			return (struct expect){ FG_TCP_TIME_WAIT, R_ACK, FG_TCP_CLOSE_FIN };
		/* after the app's close, data is ACKed and dropped */
		return (struct expect){ FG_TCP_FIN_WAIT_2, data ? R_ACK : R_NONE, -1 };
	case FG_TCP_CLOSING:	/* the ACK covers our FIN; a FIN there is ACKed */
		return (struct expect){ FG_TCP_TIME_WAIT, (fl & F_FIN) ? R_ACK : R_NONE,
					FG_TCP_CLOSE_FIN };
	case FG_TCP_LAST_ACK:
		return (struct expect){ FG_TCP_CLOSED, R_NONE, FG_TCP_CLOSE_FIN };
	case FG_TCP_TIME_WAIT:
		return (struct expect){ s, (fl & F_FIN) ? R_ACK : R_NONE, -1 };
	default:	/* CLOSE-WAIT: text and FIN "should not occur", ignored */
		return (struct expect){ s, R_NONE, -1 };
	}
}

static void table_case(enum fg_tcp_state s, uint8_t fl, bool data)
{
	static const uint8_t payload[10] = "0123456789";
	struct fg_tcp_config tc;
	struct drive d;
	struct expect e;
	unsigned closes0, accepts0;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	tc.sndbuf = 4096;
	tc.rcvbuf = 8192;
	tc.rx_segs = 64;
	tc.timer_slots = 64;
	fx_setup_bufs(&tc, 128);
	d = drive_to(s);
	e = expected(s, fl, data);
	closes0 = FX->closes;
	accepts0 = FX->accepts;
	fx_seg(fl, FX->pseq, d.our_nxt, 65535, data ? payload : NULL, data ? 10 : 0);
	fg_net_poll(FX->net, FX->now);	/* reap freed blocks */
	if (e.reply == R_NONE) {
		ck_assert_msg(FX->n_tx == 0, "%s flags %#x data %d: unexpected reply %#x",
			      fg_tcp_state_name(s), fl, data, FX->n_tx ? FX->tx[0].flags : 0);
	} else {
		ck_assert_msg(FX->n_tx == 1 && FX->tx[0].flags == F_ACK,
			      "%s flags %#x data %d: want one ACK, got %u (%#x)", fg_tcp_state_name(s),
			      fl, data, FX->n_tx, FX->n_tx ? FX->tx[0].flags : 0);
	}
	if (e.next == FG_TCP_CLOSED) {
		ck_assert_msg(fg_tcp_conns_in_use(FX->tcp) == 0, "%s flags %#x: block not freed",
			      fg_tcp_state_name(s), fl);
	} else if (s == FG_TCP_SYN_RCVD) {
		ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 1);
		ck_assert_msg(FX->accepts == accepts0 + (e.next != FG_TCP_SYN_RCVD),
			      "SYN-RCVD flags %#x: accept count", fl);
		if (e.next != FG_TCP_SYN_RCVD)
			ck_assert_int_eq(fg_tcp_conn_state(FX->conn), e.next);
	} else {
		ck_assert_msg(fg_tcp_conn_state(d.blk) == e.next, "%s flags %#x data %d: state %s, want %s",
			      fg_tcp_state_name(s), fl, data, fg_tcp_state_name(fg_tcp_conn_state(d.blk)),
			      fg_tcp_state_name(e.next));
	}
	if (e.app_close >= 0) {
		ck_assert_msg(FX->closes == closes0 + 1 && (int)FX->close_why == e.app_close,
			      "%s flags %#x: app close %d (%u)", fg_tcp_state_name(s), fl,
			      (int)FX->close_why, FX->closes - closes0);
	} else {
		ck_assert_msg(FX->closes == closes0, "%s flags %#x: unexpected app close",
			      fg_tcp_state_name(s), fl);
	}
	if (data && e.next == FG_TCP_ESTABLISHED && (fl & (F_ACK | F_SYN | F_RST)) == F_ACK)
		ck_assert_msg(FX->rx_len == 10, "%s flags %#x: %u bytes delivered",
			      fg_tcp_state_name(s), fl, FX->rx_len);
	fx_teardown();
}

static const enum fg_tcp_state table_states[] = {
	FG_TCP_SYN_RCVD, FG_TCP_ESTABLISHED, FG_TCP_CLOSE_WAIT, FG_TCP_LAST_ACK,
	FG_TCP_FIN_WAIT_1, FG_TCP_FIN_WAIT_2, FG_TCP_CLOSING, FG_TCP_TIME_WAIT,
};

START_TEST(test_state_flag_table)
{
	enum fg_tcp_state s = table_states[_i / 2];
	bool data = _i % 2;

	for (unsigned fl = 0; fl < 64; fl++)
		table_case(s, (uint8_t)fl, data);
}
END_TEST

/* Out-of-window segments: an ACK in reply (none to a RST), no state change. */
START_TEST(test_out_of_window_table)
{
	enum fg_tcp_state s = table_states[_i];

	for (unsigned fl = 0; fl < 64; fl++) {
		struct fg_tcp_config tc;
		struct drive d;
		uint32_t seq;

		if (s == FG_TCP_SYN_RCVD)
			continue;	/* a SYN-RCVD seq check is covered by the RST/SYN rows */
		memset(&tc, 0, sizeof(tc));
		tc.max_conns = 4;
		tc.sndbuf = 4096;
		tc.rcvbuf = 8192;
		tc.rx_segs = 64;
		tc.timer_slots = 64;
		fx_setup_bufs(&tc, 128);
		d = drive_to(s);
		seq = FX->pseq + 1000000;
		fx_seg((uint8_t)fl, seq, d.our_nxt, 65535, "zz", 2);
		fg_net_poll(FX->net, FX->now);
		if (fl & F_RST) {
			ck_assert_msg(FX->n_tx == 0, "%s: reply to an out-of-window RST",
				      fg_tcp_state_name(s));
		} else if (s == FG_TCP_TIME_WAIT && (fl & (F_SYN | F_ACK)) == F_SYN) {
			/* a SYN above RCV.NXT reopens a TIME-WAIT pair (RFC 6191) */
			ck_assert_uint_eq(FX->tx[FX->n_tx - 1].flags, F_SYN | F_ACK);
			fx_teardown();
			continue;
		} else {
			ck_assert_msg(FX->n_tx == 1 && FX->tx[0].flags == F_ACK &&
					      FX->tx[0].ack == FX->pseq,
				      "%s flags %#x: want ACK of RCV.NXT", fg_tcp_state_name(s), fl);
		}
		ck_assert_int_eq(fg_tcp_conn_state(d.blk), s);
		fx_teardown();
	}
}
END_TEST

/* ---------------------------------------------------------------- handshake */

START_TEST(test_handshake_options)
{
	struct fx_tx *sa;

	fx_syn(99, 7);
	sa = fx_last();
	ck_assert_uint_eq(sa->flags, F_SYN | F_ACK);
	ck_assert_uint_eq(sa->ack, 100);
	ck_assert_uint_eq(sa->mss, 1460);
	ck_assert_int_eq(sa->ws, 3);		/* 256 KiB needs a shift of 3 */
	ck_assert_uint_eq(sa->wnd, 65535);	/* a SYN's window is not scaled */
	ck_assert_uint_eq(FX->accepts, 0);	/* not before the handshake completes */
	fx_seg(F_ACK, 100, sa->seq + 1, 1000, NULL, 0);
	ck_assert_uint_eq(FX->accepts, 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TO_ESTABLISHED], 1);
	/* the endpoints come as config.h's struct fg_endpoint */
	ck_assert_int_eq(FX->peer_seen.family, FX->v6 ? AF_INET6 : AF_INET);
	ck_assert_int_eq(memcmp(FX->peer_seen.addr, fx_peer_addr(), fx_alen()), 0);
	ck_assert_uint_eq(FX->peer_seen.port, FX_PEER_PORT);
	ck_assert_int_eq(memcmp(FX->local_seen.addr, fx_our_addr(), fx_alen()), 0);
	ck_assert_uint_eq(FX->local_seen.port, 119);
	{
		struct fg_endpoint p;

		fg_tcp_conn_peer(FX->conn, &p);
		ck_assert_int_eq(memcmp(&p, &FX->peer_seen, sizeof(p)), 0);
	}
	/* the first window update advertises the whole buffer, scaled */
	ck_assert_int_eq(fg_tcp_send(FX->conn, "hi", 2), 2);
	fx_advance(0);
	ck_assert_uint_eq(fx_last()->wnd, 256 * 1024 >> 3);
	ck_assert_uint_eq(fx_last()->plen, 2);
}
END_TEST

START_TEST(test_handshake_no_ws)
{
	fx_syn(99, -1);
	ck_assert_int_eq(fx_last()->ws, -1);	/* RFC 7323 2.2: only if offered */
	ck_assert_uint_eq(fx_last()->mss, 1460);
}
END_TEST

START_TEST(test_sack)
{
	const uint8_t opts[8] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2 };	/* MSS, SACK-permitted */
	struct fx_tx *sa;
	uint32_t p;

	fx_seg_full(FX_PEER_PORT, 119, F_SYN, 99, 0, 65535, NULL, 0, opts, 8, 0);
	sa = fx_last();
	ck_assert_int_eq(sa->sack_ok, 1);		/* RFC 2018 2: echoed */
	fx_seg(F_ACK, 100, sa->seq + 1, 65535, NULL, 0);
	p = 100;
	/* two holes: [p+10, p+20) and [p+30, p+40) arrive; the latest first */
	fx_seg(F_ACK, p + 10, sa->seq + 1, 65535, "0123456789", 10);
	ck_assert_uint_eq(fx_last()->n_sack, 1);
	fx_seg(F_ACK, p + 30, sa->seq + 1, 65535, "0123456789", 10);
	ck_assert_uint_eq(fx_last()->n_sack, 2);
	ck_assert_uint_eq(fx_last()->sack[0], p + 30);
	ck_assert_uint_eq(fx_last()->sack[1], p + 40);
	ck_assert_uint_eq(fx_last()->sack[2], p + 10);
	ck_assert_uint_eq(fx_last()->sack[3], p + 20);
	/* adjacent data merges blocks */
	fx_seg(F_ACK, p + 20, sa->seq + 1, 65535, "0123456789", 10);
	ck_assert_uint_eq(fx_last()->n_sack, 1);
	ck_assert_uint_eq(fx_last()->sack[0], p + 10);
	ck_assert_uint_eq(fx_last()->sack[1], p + 40);
	/* the hole fills: no blocks left */
	fx_seg(F_ACK, p, sa->seq + 1, 65535, "0123456789", 10);
	ck_assert_uint_eq(fx_last()->ack, p + 40);
	ck_assert_uint_eq(fx_last()->n_sack, 0);
	ck_assert_uint_eq(FX->rx_len, 40);
	/* a peer that did not offer SACK never gets blocks */
	FX->n_tx = 0;
	fx_syn(5000, -1);
	ck_assert_int_eq(fx_last()->sack_ok, 0);
}
END_TEST

START_TEST(test_bad_ack_in_syn_rcvd)
{
	fx_syn(99, -1);
	fx_seg(F_ACK, 100, fx_last()->seq + 77, 1000, NULL, 0);
	/* RFC 9293 3.10.7.4: unacceptable ACK in SYN-RECEIVED -> <SEQ=SEG.ACK><RST> */
	ck_assert_uint_eq(fx_last()->flags, F_RST);
	ck_assert_uint_eq(FX->accepts, 0);
}
END_TEST

START_TEST(test_closed_replies)
{
	/* RFC 9293 3.10.7.1 */
	fx_seg_full(FX_PEER_PORT, 25, F_SYN, 500, 0, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, F_RST | F_ACK);
	ck_assert_uint_eq(fx_last()->seq, 0);
	ck_assert_uint_eq(fx_last()->ack, 501);
	fx_seg_full(FX_PEER_PORT, 25, F_ACK, 500, 777, 1000, "abc", 3, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
	ck_assert_uint_eq(fx_last()->seq, 777);
	FX->n_tx = 0;
	fx_seg_full(FX_PEER_PORT, 25, F_RST, 500, 0, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(FX->n_tx, 0);
	/* LISTEN: a stray ACK (not a cookie) -> RST, a RST -> nothing */
	fx_seg(F_ACK, 500, 12345, 1000, NULL, 0);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
	ck_assert_uint_eq(fx_last()->seq, 12345);
	FX->n_tx = 0;
	fx_seg(F_RST, 500, 0, 1000, NULL, 0);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_NO_CONN], 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNCOOKIES_BAD], 1);
}
END_TEST

/* Reload: a new listen set. A connection made on the old port goes on;
 * a SYN to it is refused from then on, one to the new port accepted; a
 * bad set changes nothing. */
START_TEST(test_set_listen)
{
	struct fg_endpoint ep[2];
	struct fg_endpoint mine;

	fx_handshake();
	memset(ep, 0, sizeof(ep));
	ep[0].family = FX->v6 ? AF_INET6 : AF_INET;
	ep[0].port = 120;
	ep[1] = ep[0];
	ep[1].port = 0;			/* no port: refused, nothing changed */
	ck_assert_int_eq(fg_tcp_set_listen(FX->tcp, ep, 2), -EINVAL);
	fg_tcp_conn_local(FX->conn, &mine);
	ck_assert(fg_tcp_listens_on(FX->tcp, &mine));
	ck_assert_int_eq(fg_tcp_set_listen(FX->tcp, ep, 1), 0);
	ck_assert(!fg_tcp_listens_on(FX->tcp, &mine));
	mine.port = 120;
	ck_assert(fg_tcp_listens_on(FX->tcp, &mine));
	/* the open connection still takes data */
	fx_seg(0x18, FX->pseq, FX->our_seq, 65535, "abc", 3);
	ck_assert_uint_eq(FX->rx_len, 3);
	ck_assert_int_eq(fg_tcp_conn_state(FX->conn), FG_TCP_ESTABLISHED);
	/* a new SYN to 119: RST; to 120: SYN-ACK */
	fx_seg_full(FX_PEER_PORT + 1, 119, 0x02, 5000, 0, 65535, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, 0x14);
	fx_seg_full(FX_PEER_PORT + 1, 120, 0x02, 5000, 0, 65535, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, 0x12);
}
END_TEST

START_TEST(test_config_checks)
{
	struct fg_tcp_config tc;
	struct fg_tcp_app_ops no_close = fx_ops;
	struct fg_test_logcap cap;

	fg_test_logcap_start(&cap);
	memset(&tc, 0, sizeof(tc));
	tc.n_listen = 1;
	tc.listen[0].family = AF_INET6;	/* not implemented: refused */
	tc.listen[0].port = 119;
	ck_assert_ptr_null(fg_tcp_create(FX->net, &tc, &fx_ops, FX));
	tc.listen[0].family = AF_INET;
	tc.listen[0].port = 0;
	ck_assert_ptr_null(fg_tcp_create(FX->net, &tc, &fx_ops, FX));
	tc.listen[0].port = 119;
	tc.timer_slots = 1000;		/* not a power of two */
	ck_assert_ptr_null(fg_tcp_create(FX->net, &tc, &fx_ops, FX));
	tc.timer_slots = 0;
	no_close.on_close = NULL;	/* a required callback missing */
	ck_assert_ptr_null(fg_tcp_create(FX->net, &tc, &no_close, FX));
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 4);	/* each refusal says why */
	ck_assert(fg_test_logcap_has(&cap, "err tcp: bad config"));
}
END_TEST

START_TEST(test_bad_checksum_and_header)
{
	fx_seg_full(FX_PEER_PORT, 119, F_SYN, 1, 0, 1000, NULL, 0, NULL, 0, 1);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_BAD_CSUM], 1);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

START_TEST(test_app_refuses)
{
	FX->refuse = 1;
	fx_syn(99, -1);
	fx_seg(F_ACK, 100, fx_last()->seq + 1, 1000, NULL, 0);
	ck_assert_uint_eq(fx_last()->flags & F_RST, F_RST);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_APP_REFUSED], 1);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

/* ---------------------------------------------------------------- data */

START_TEST(test_in_order_and_reassembly)
{
	fx_handshake();
	fx_seg(F_ACK | F_PSH, FX->pseq + 5, FX->our_seq, 65535, "FGHIJ", 5);	/* hole */
	ck_assert_uint_eq(FX->rx_len, 0);
	ck_assert_uint_eq(fx_last()->ack, FX->pseq);	/* immediate dup ACK */
	fx_seg(F_ACK, FX->pseq + 8, FX->our_seq, 65535, "IJKLM", 5);	/* overlaps */
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "ABCDE", 5);	/* fills the hole */
	ck_assert_uint_eq(FX->rx_len, 13);
	ck_assert_int_eq(memcmp(FX->rx, "ABCDEFGHIJKLM", 13), 0);
	ck_assert_uint_eq(fx_last()->ack, FX->pseq + 13);
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "ABCDE", 5);	/* all old */
	ck_assert_uint_eq(FX->rx_len, 13);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_OOO], 2);
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_TCP_RX_DUP_DATA], 1);
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 0);
}
END_TEST

/* ---------------------------------------------------------------- merged packets (GRO) */

#define MERGED_OK (FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK)

/* A merged packet as the port's GRO makes one (FG_RX_MORE, net.h): one
 * TCP header (ACK only) for the octets data[0..sum of cuts) at `seq`, the
 * first cuts[0] in the frame's own buffer and each further cut in a
 * buffer of its own; the IP total length covers them all (plus `pad`
 * octets the frame does not have, for the bad case) and its checksum is
 * left stale, as GRO leaves it: `rx_flags` say what the port verified. */
static void fx_merged(uint32_t seq, const uint8_t *data, const uint32_t *cuts, unsigned n,
		      uint32_t rx_flags, uint32_t pad)
{
	struct fx *f = FX;
	struct fg_rx_frame fr;
	struct fg_rx_piece pc[16];
	struct fg_craft_tcp c = {
		.dst_mac = f->mac, .src_mac = f->peer_mac, .src = f->peer, .dst = f->addr,
		.sport = FX_PEER_PORT, .dport = 119, .seq = seq, .ack = f->our_seq,
		.flags = F_ACK, .wnd = 65535, .data = data, .len = cuts[0],
	};
	uint32_t off = cuts[0];

	ck_assert_uint_le(n, 17);
	if (f->v6) {
		c.src6 = f->peer6;
		c.dst6 = f->addr6;
	}
	ck_assert_int_eq(fg_memport_rx_frame(f->mp, NULL, 74 + cuts[0], &fr), 0);
	fr.len = fg_craft_tcp_frame(fr.data, &c);
	for (unsigned i = 1; i < n; i++) {
		struct fg_rx_frame p;

		ck_assert_int_eq(fg_memport_rx_frame(f->mp, data + off, cuts[i], &p), 0);
		pc[i - 1] = (struct fg_rx_piece){ p.data, p.len, p.handle };
		off += cuts[i];
	}
	if (!f->v6)
		fg_wr16(fr.data + 16, (uint16_t)(fr.len - 14 + off - cuts[0] + pad));
	fr.flags = rx_flags | FG_RX_MORE;
	fr.more = pc;
	fr.n_more = (uint16_t)(n - 1);
	fg_net_rx(f->net, &fr, 1, f->now);
}

static const uint8_t *pattern(void)
{
	static uint8_t p[4096];

	for (unsigned i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)('A' + i % 23 + i / 997);
	return p;
}

START_TEST(test_merged_in_order)
{
	const uint8_t *d = pattern();
	const uint32_t cuts[] = { 1000, 1000, 600, 400 };
	uint64_t segs;

	fx_handshake();
	segs = FX->st.ctr[FG_CTR_TCP_RX_SEGS];
	fx_merged(FX->pseq, d, cuts, 4, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 3000);
	ck_assert_int_eq(memcmp(FX->rx, d, 3000), 0);
	/* four segments' worth in one packet: ACKed at once, once */
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(fx_last()->ack, FX->pseq + 3000);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_SEGS], segs + 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_BYTES], 3000);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_OOO], 0);
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
}
END_TEST

START_TEST(test_merged_out_of_order_and_dup)
{
	const uint8_t *d = pattern();
	const uint32_t late[] = { 500, 700, 800 }, first[] = { 700, 800 },
		       again[] = { 1000, 1500, 500 };
	uint64_t dup;

	fx_handshake();
	FX->consume_limit = 0;			/* keep the queue to look at */
	fx_merged(FX->pseq + 1000, d + 1000, late, 3, MERGED_OK, 0);	/* [1000, 3000): a hole */
	ck_assert_uint_eq(fx_last()->ack, FX->pseq);	/* immediate dup ACK */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_OOO], 3);
	fx_merged(FX->pseq + 1000, d + 1000, late, 3, MERGED_OK, 0);	/* the same again */
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 3);	/* one copy kept */
	FX->consume_limit = UINT32_MAX;
	fx_merged(FX->pseq, d, first, 2, MERGED_OK, 0);	/* [0, 1500): fills, overlaps */
	ck_assert_uint_eq(FX->rx_len, 3000);
	ck_assert_int_eq(memcmp(FX->rx, d, 3000), 0);
	ck_assert_uint_eq(fx_last()->ack, FX->pseq + 3000);
	dup = FX->st.ctr[FG_CTR_TCP_RX_DUP_DATA];
	fx_merged(FX->pseq, d, again, 3, MERGED_OK, 0);	/* all old */
	ck_assert_uint_eq(FX->rx_len, 3000);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_DUP_DATA], dup + 1);
	/* the next octets after it, one more merged packet in order */
	fx_merged(FX->pseq + 3000, d + 3000, (const uint32_t[]){ 100, 900 }, 2, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 4000);
	ck_assert_int_eq(memcmp(FX->rx, d, 4000), 0);
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
}
END_TEST

START_TEST(test_merged_holds)
{
	const uint8_t *d = pattern();
	const uint32_t cuts[] = { 300, 300, 300 };

	fx_handshake();
	FX->hold_all = 1;
	fx_merged(FX->pseq, d, cuts, 3, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 900);
	/* each piece is held in its own buffer */
	ck_assert_uint_eq(FX->n_held, 3);
	ck_assert_ptr_ne(FX->held[0].handle, FX->held[1].handle);
	ck_assert_ptr_ne(FX->held[1].handle, FX->held[2].handle);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 3);
	for (unsigned i = 0; i < FX->n_held; i++)
		fg_tcp_release(FX->conn, &FX->held[i]);
	FX->n_held = 0;
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
}
END_TEST

/* The fault knob on merged packets: a dropped one gives back every
 * piece, a duplicated one takes a reference on every piece for its second
 * pass, and none is held back (its pieces are the caller's, for the burst). */
START_TEST(test_merged_faults)
{
	const uint8_t *d = pattern();
	const uint32_t cuts[] = { 500, 500, 500 };
	struct fg_net_faults fl = { .rx_drop_ppm = 1000000, .seed = 3 };

	fx_handshake();
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_merged(FX->pseq, d, cuts, 3, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
	fl = (struct fg_net_faults){ .rx_dup_ppm = 1000000, .seed = 3 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_merged(FX->pseq, d, cuts, 3, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 1500);
	ck_assert_int_eq(memcmp(FX->rx, d, 1500), 0);
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_NET_FAULT_RX_DUP], 1);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
	fl = (struct fg_net_faults){ .rx_reorder_ppm = 1000000, .seed = 3 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_merged(FX->pseq + 1500, d + 1500, cuts, 3, MERGED_OK, 0);
	ck_assert_uint_eq(FX->rx_len, 3000);	/* taken at once, not held */
	ck_assert_int_eq(memcmp(FX->rx, d, 3000), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_FAULT_RX_REORDER], 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
}
END_TEST

/* What a port must not make is dropped whole: unverified checksums, a
 * total length that is not the frame and its pieces, IPv6. */
START_TEST(test_merged_refused)
{
	const uint8_t *d = pattern();
	const uint32_t cuts[] = { 400, 400 };
	uint64_t segs;

	fx_handshake();
	segs = FX->st.ctr[FG_CTR_TCP_RX_SEGS];
	fx_merged(FX->pseq, d, cuts, 2, FX->v6 ? MERGED_OK : FG_RX_L4_CSUM_OK, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_RX_MERGED_BAD], 1);
	if (!FX->v6) {
		fx_merged(FX->pseq, d, cuts, 2, FG_RX_IP_CSUM_OK, 0);
		fx_merged(FX->pseq, d, cuts, 2, MERGED_OK, 4);
		ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_RX_MERGED_BAD], 3);
	}
	ck_assert_uint_eq(FX->rx_len, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_SEGS], segs);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
	/* and the connection still takes the same octets as a plain segment */
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, d, 800);
	ck_assert_uint_eq(FX->rx_len, 800);
}
END_TEST

START_TEST(test_delayed_ack)
{
	fx_handshake();
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "one", 3);
	ck_assert_uint_eq(FX->n_tx, 0);			/* delayed */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_WINDOW_UPDATES], 0);
	fx_advance(10 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 0);
	fx_advance(40 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);			/* the delayed-ACK timer */
	ck_assert_uint_eq(FX->tx[0].ack, FX->pseq + 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_DELAYED_ACKS], 1);
	FX->n_tx = 0;
	fx_seg(F_ACK, FX->pseq + 3, FX->our_seq, 65535, "two", 3);
	fx_seg(F_ACK, FX->pseq + 6, FX->our_seq, 65535, "three", 5);
	ck_assert_uint_eq(FX->n_tx, 1);			/* every second segment */
	ck_assert_uint_eq(FX->tx[0].ack, FX->pseq + 11);
}
END_TEST

START_TEST(test_window_backpressure_and_hold)
{
	static uint8_t chunk[1000];
	uint32_t seq;

	fx_handshake();
	FX->consume_limit = 0;			/* the app takes nothing */
	seq = FX->pseq;
	for (int i = 0; i < 10; i++) {
		fx_seg(F_ACK, seq, FX->our_seq, 65535, chunk, sizeof(chunk));
		seq += sizeof(chunk);
	}
	ck_assert_uint_eq(fg_tcp_conn_rx_bytes(FX->conn), 10000);
	ck_assert_uint_eq(fg_tcp_conn_rcv_window(FX->conn), 256 * 1024 - 10000);
	/* the app takes it all and holds the buffers: still counted */
	FX->consume_limit = UINT32_MAX;
	FX->hold_all = 1;
	fg_tcp_resume(FX->conn);
	fg_tcp_pause(FX->conn);
	fg_tcp_resume(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->rx_len, 10000);
	ck_assert_uint_eq(FX->n_held, 10);
	ck_assert_uint_eq(fg_tcp_conn_rx_bytes(FX->conn), 10000);
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 10);	/* the app's references */
	FX->n_tx = 0;
	for (unsigned i = 0; i < FX->n_held; i++)
		fg_tcp_release(FX->conn, &FX->held[i]);
	FX->n_held = 0;
	FX->hold_all = 0;
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conn_rx_bytes(FX->conn), 0);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);
	fx_advance(50 * FX_MS);
	ck_assert_uint_ge(FX->n_tx, 1);			/* the window update */
	ck_assert_uint_eq(fx_last()->wnd, 65535);	/* no window scaling agreed */
	ck_assert_uint_eq(fx_last()->ack, seq);
}
END_TEST

START_TEST(test_zero_window)
{
	struct fg_tcp_config tc;
	static uint8_t chunk[1024];
	uint32_t seq;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.rcvbuf = 4096;
	fx_reconfig(&tc);
	fx_handshake();
	FX->consume_limit = 0;
	seq = FX->pseq;
	for (int i = 0; i < 4; i++) {
		fx_seg(F_ACK, seq, FX->our_seq, 65535, chunk, sizeof(chunk));
		seq += sizeof(chunk);
	}
	fx_advance(50 * FX_MS);
	ck_assert_uint_eq(fx_last()->wnd, 0);
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_TCP_TX_ZERO_WINDOW], 1);
	/* beyond the window: not acceptable, answered with an ACK */
	FX->n_tx = 0;
	fx_seg(F_ACK, seq, FX->our_seq, 65535, chunk, 100);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].ack, seq);
	ck_assert_uint_eq(fg_tcp_conn_rx_bytes(FX->conn), 4096);
	/* the app catches up: a window update opens it */
	FX->consume_limit = UINT32_MAX;
	fg_tcp_pause(FX->conn);
	fg_tcp_resume(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->rx_len, 4096);
	ck_assert_uint_gt(fx_last()->wnd, 0);
}
END_TEST

START_TEST(test_segmentation_by_mss)
{
	static uint8_t big[5000];
	const uint8_t opts[4] = { 2, 4, 0x03, 0xe8 };	/* MSS 1000 */
	uint32_t total = 0;
	struct fx_tx *sa;

	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	fx_seg_full(FX_PEER_PORT, 119, F_SYN, 99, 0, 65535, NULL, 0, opts, 4, 0);
	sa = fx_last();
	fx_seg(F_ACK, 100, sa->seq + 1, 65535, NULL, 0);
	FX->n_tx = 0;
	ck_assert_int_eq(fg_tcp_send(FX->conn, big, sizeof(big)), (int)sizeof(big));
	fx_advance(0);
	/* initial window: min(4*MSS, max(2*MSS, 4380)) = 4000 bytes */
	ck_assert_uint_eq(FX->n_tx, 4);
	for (unsigned i = 0; i < FX->n_tx; i++) {
		ck_assert_uint_eq(FX->tx[i].plen, 1000);
		ck_assert_int_eq(memcmp(FX->tx[i].payload, big + total, 1000), 0);
		total += FX->tx[i].plen;
	}
	fx_seg(F_ACK, 100, FX->tx[3].seq + 1000, 65535, NULL, 0);
	ck_assert_uint_eq(fx_last()->plen, 1000);
	ck_assert_int_eq(memcmp(fx_last()->payload, big + 4000, 1000), 0);
	ck_assert_uint_eq(fx_last()->flags, F_ACK | F_PSH);
}
END_TEST

START_TEST(test_send_buffer_full)
{
	static uint8_t big[40000];

	fx_handshake();
	ck_assert_int_eq(fg_tcp_send(FX->conn, big, sizeof(big)), 32 * 1024);
	ck_assert_int_eq(fg_tcp_send(FX->conn, big, 10), 0);
	ck_assert_uint_eq(fg_tcp_send_space(FX->conn), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SEND_FULL], 2);
	fx_advance(0);
	/* the peer ACKs what was sent: room again, on_writable once a
	 * quarter of the buffer is free */
	while (fg_tcp_send_space(FX->conn) < 8192) {
		ck_assert_uint_eq(FX->writables, 0);
		fx_seg(F_ACK, FX->pseq, FX->tx[FX->n_tx - 1].seq + FX->tx[FX->n_tx - 1].plen,
		       65535, NULL, 0);
	}
	ck_assert_uint_eq(FX->writables, 1);
	/* after close nothing more can be queued */
	fg_tcp_close(FX->conn);
	ck_assert_int_eq(fg_tcp_send(FX->conn, "x", 1), -ENOTCONN);
}
END_TEST

/* ---------------------------------------------------------------- timers */

START_TEST(test_rto_backoff_and_give_up)
{
	uint64_t t0;
	unsigned n;

	fx_handshake();
	fg_tcp_send(FX->conn, "hello", 5);
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 1);
	t0 = FX->now;
	/* RFC 6298 2.1: initial RTO 1 s */
	fx_advance(990 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	fx_advance(20 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->tx[1].seq, FX->tx[0].seq);
	ck_assert_uint_eq(FX->tx[1].plen, 5);
	/* 5.5: doubled */
	fx_advance(1990 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);
	fx_advance(20 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RETRANS_SEGS], 2);
	/* give up after max_retries: RST and on_close(timeout) */
	for (n = 0; n < 400 && FX->closes == 0; n++)
		fx_advance(1000 * FX_MS);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_TIMEOUT);
	ck_assert_uint_eq(fx_last()->flags & F_RST, F_RST);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 10);
	ck_assert_uint_gt(FX->now - t0, 60ull * 1000 * FX_MS);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
}
END_TEST

START_TEST(test_rtt_estimate)
{
	fx_handshake();
	fg_tcp_send(FX->conn, "a", 1);
	fx_advance(0);
	fx_advance(100 * FX_MS);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 1, 65535, NULL, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTT_SAMPLES], 1);
	/* RFC 6298 2.2: SRTT 100 ms, RTTVAR 50 ms -> RTO 300 ms */
	FX->n_tx = 0;
	fg_tcp_send(FX->conn, "b", 1);
	fx_advance(0);
	fx_advance(290 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);
	fx_advance(20 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);
}
END_TEST

START_TEST(test_fast_retransmit)
{
	static uint8_t big[4000];
	uint32_t una;

	fx_handshake();
	fg_tcp_send(FX->conn, big, sizeof(big));
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 3);		/* 1460 + 1460 + 1080 in the initial window */
	una = FX->tx[0].seq;
	for (int i = 0; i < 3; i++)
		fx_seg(F_ACK, FX->pseq, una, 65535, NULL, 0);
	/* RFC 5681 3.2: the third duplicate ACK retransmits at once */
	ck_assert_uint_eq(FX->n_tx, 4);
	ck_assert_uint_eq(FX->tx[3].seq, una);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_FAST_RETRANS], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_DUP_ACKS], 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 0);
	/* a partial ACK (NewReno) retransmits the next hole first */
	fx_seg(F_ACK, FX->pseq, una + 1460, 65535, NULL, 0);
	ck_assert_uint_eq(FX->tx[4].seq, una + 1460);
	fx_seg(F_ACK, FX->pseq, una + 4000, 65535, NULL, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 0);
}
END_TEST

START_TEST(test_persist)
{
	fx_handshake();
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 0, NULL, 0);	/* the peer's window closes */
	FX->n_tx = 0;
	fg_tcp_send(FX->conn, "data", 4);
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 0);				/* nothing fits */
	fx_advance(1010 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 1);				/* a one-byte probe */
	ck_assert_uint_eq(FX->tx[0].plen, 1);
	ck_assert_uint_eq(FX->tx[0].seq, FX->our_seq);
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 0, NULL, 0);	/* still closed */
	fx_advance(2100 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 2);				/* backed off */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PERSIST_PROBES], 2);
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 1000, NULL, 0);	/* it opens */
	ck_assert_uint_eq(fx_last()->plen, 4);
	ck_assert_int_eq(memcmp(fx_last()->payload, "data", 4), 0);
	ck_assert_uint_eq(FX->closes, 0);
}
END_TEST

START_TEST(test_time_wait_expiry_and_reuse)
{
	struct drive d = drive_to(FG_TCP_TIME_WAIT);

	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_FIN);
	/* the peer's FIN again: ACKed, TIME-WAIT restarted */
	fx_advance(30000 * FX_MS);
	fx_seg(F_FIN | F_ACK, FX->pseq - 1, d.our_nxt, 65535, NULL, 0);
	ck_assert_uint_eq(fx_last()->flags, F_ACK);
	fx_advance(40000 * FX_MS);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 1);
	fx_advance(25000 * FX_MS);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);	/* 2*MSL after the last FIN */
	/* a new SYN with a higher sequence number reopens a TIME-WAIT pair */
	d = drive_to(FG_TCP_TIME_WAIT);
	fx_syn(FX->pseq + 100000, -1);
	ck_assert_uint_eq(fx_last()->flags, F_SYN | F_ACK);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TW_REUSED], 1);
}
END_TEST

START_TEST(test_next_deadline)
{
	uint64_t d;

	ck_assert_uint_eq(fg_net_next_deadline(FX->net), UINT64_MAX);	/* nothing armed */
	fx_handshake();
	fg_tcp_send(FX->conn, "x", 1);
	fx_advance(0);
	/* a node filed for an earlier deadline (the delayed ACK the data
	 * segment made moot) fires early and is filed again */
	fx_advance(50 * FX_MS);
	/* then the retransmission timer (1 s after sending) is next */
	d = fg_net_next_deadline(FX->net);
	ck_assert_uint_ge(d, FX->now + 940 * FX_MS);
	ck_assert_uint_le(d, FX->now + 960 * FX_MS);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 1, 65535, NULL, 0);
	/* acknowledged; the delayed window update (the window grew past what
	 * the SYN-ACK could say) goes out 40 ms later */
	fx_advance(50 * FX_MS);
	ck_assert_uint_eq(fx_last()->wnd, 65535);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_DELAYED_ACKS], 1);
	/* only the idle timeout is left, beyond the wheel's horizon, so the
	 * node comes round at the far end (~4.3 s) */
	d = fg_net_next_deadline(FX->net);
	ck_assert_uint_gt(d, FX->now + 4000 * FX_MS);
}
END_TEST

START_TEST(test_idle_timeout)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.idle_timeout_ns = 5000 * FX_MS;
	fx_reconfig(&tc);
	fx_handshake();
	fx_advance(3000 * FX_MS);
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "x", 1);	/* activity */
	fx_advance(4000 * FX_MS);
	ck_assert_uint_eq(FX->closes, 0);
	fx_advance(1100 * FX_MS);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_IDLE);
	ck_assert_uint_eq(fx_last()->flags & F_RST, F_RST);
}
END_TEST

START_TEST(test_synack_retransmit_and_timeout)
{
	fx_syn(99, -1);
	ck_assert_uint_eq(FX->n_tx, 1);
	fx_syn(99, -1);					/* the same SYN again */
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->tx[1].flags, F_SYN | F_ACK);
	for (int i = 0; i < 40; i++)
		fx_advance(1000 * FX_MS);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_RCVD_TIMEOUT], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNACK_RETRANS], 5);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	ck_assert_uint_eq(FX->accepts, 0);
}
END_TEST

/* ---------------------------------------------------------------- admission */

START_TEST(test_syn_backlog_and_cookies)
{
	struct fg_tcp_config tc;
	struct fx_tx *sa;
	uint32_t cookie_ack;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.syn_backlog = 2;
	tc.syn_backlog_per_peer = 2;
	fx_reconfig(&tc);
	fx_seg_full(1001, 119, F_SYN, 10, 0, 1000, NULL, 0, NULL, 0, 0);
	fx_seg_full(1002, 119, F_SYN, 20, 0, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 2);
	/* the third: no block, a cookie (SACK-permitted comes back out of it) */
	fx_seg_full(1003, 119, F_SYN, 30, 0, 1000, NULL, 0, (const uint8_t[]){ 1, 1, 4, 2 }, 4, 0);
	ck_assert_int_eq(fx_last()->sack_ok, 1);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNCOOKIES_SENT], 1);
	sa = fx_last();
	ck_assert_uint_eq(sa->flags, F_SYN | F_ACK);
	/* a wrong cookie is refused */
	fx_seg_full(1003, 119, F_ACK, 31, sa->seq + 2, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNCOOKIES_BAD], 1);
	/* the right one opens the connection, with data on the ACK */
	cookie_ack = FX->tx[FX->n_tx - 2].seq + 1;
	fx_seg_full(1003, 119, F_ACK, 31, cookie_ack, 1000, "hey", 3, NULL, 0, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNCOOKIES_OK], 1);
	ck_assert_uint_eq(FX->accepts, 1);
	ck_assert_uint_eq(FX->rx_len, 3);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 3);
	fx_seg_full(1003, 119, F_ACK, 40, cookie_ack, 1000, "z", 1, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->n_sack, 1);	/* SACK survived the cookie */
	/* a stale cookie (after two periods) is refused */
	fx_seg_full(1004, 119, F_SYN, 40, 0, 1000, NULL, 0, NULL, 0, 0);
	sa = fx_last();
	FX->now += 200ull * 1000 * FX_MS;
	fx_seg_full(1004, 119, F_ACK, 41, sa->seq + 1, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYNCOOKIES_BAD], 2);
}
END_TEST

START_TEST(test_per_peer_backlog_and_no_cookies)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.syn_backlog = 6;
	tc.syn_backlog_per_peer = 2;
	tc.no_syncookies = true;
	fx_reconfig(&tc);
	for (uint16_t p = 0; p < 4; p++)
		fx_seg_full((uint16_t)(2000 + p), 119, F_SYN, 10, 0, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_PEER_FULL], 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_DROPPED], 2);
}
END_TEST

START_TEST(test_pool_empty)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 2;
	tc.syn_backlog = 2;
	fx_reconfig(&tc);
	for (uint16_t p = 0; p < 2; p++) {
		fx_seg_full((uint16_t)(3000 + p), 119, F_SYN, 10, 0, 1000, NULL, 0, NULL, 0, 0);
		fx_seg_full((uint16_t)(3000 + p), 119, F_ACK, 11, fx_last()->seq + 1, 1000, NULL, 0,
			    NULL, 0, 0);
	}
	ck_assert_uint_eq(FX->accepts, 2);
	fx_seg_full(3009, 119, F_SYN, 10, 0, 1000, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(fx_last()->flags, F_RST | F_ACK);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_POOL_EMPTY], 1);
}
END_TEST

START_TEST(test_app_abort)
{
	fx_handshake();
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "partial", 7);
	fg_tcp_abort(FX->conn);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(fx_last()->flags & F_RST, F_RST);
	ck_assert_uint_eq(FX->closes, 0);		/* no on_close for the app's own abort */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CLOSE_APP_ABORT], 1);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	/* segments for it now get a RST */
	fx_seg(F_ACK, FX->pseq + 7, FX->our_seq, 65535, "x", 1);
	ck_assert_uint_eq(fx_last()->flags, F_RST);
}
END_TEST

START_TEST(test_rst_mid_data_releases_holds)
{
	fx_handshake();
	FX->hold_all = 1;
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "article part", 12);
	ck_assert_uint_eq(FX->n_held, 1);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 1);
	fx_seg(F_RST, FX->pseq + 12, 0, 0, NULL, 0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
	ck_assert_uint_eq(fg_memport_in_use(FX->mp), 0);	/* released in on_close */
}
END_TEST

/* The connection table remembers the last lookup's hit: a connection
 * reset and gone must not be found again when its 4-tuple comes back in
 * the same burst (its block is only freed at the end of the burst),
 * while a live connection is found as before. */
START_TEST(test_lookup_after_reset)
{
	struct fg_craft_tcp c = { .dst_mac = FX->mac, .src_mac = FX->peer_mac, .src = FX->peer,
				  .dst = FX->addr, .sport = FX_PEER_PORT, .dport = 119,
				  .wnd = 65535 };
	struct fg_rx_frame fr[2];

	if (FX->v6) {
		c.src6 = FX->peer6;
		c.dst6 = FX->addr6;
	}
	fx_handshake();
	fx_seg(F_ACK | F_PSH, FX->pseq, FX->our_seq, 65535, "a", 1);
	ck_assert_uint_eq(FX->rx_len, 1);
	/* one burst: the RST that ends it, then a SYN on the same 4-tuple */
	for (unsigned i = 0; i < 2; i++) {
		c.flags = i ? F_SYN : F_RST;
		c.seq = i ? 5000 : FX->pseq + 1;
		ck_assert_int_eq(fg_memport_rx_frame(FX->mp, NULL, 74, &fr[i]), 0);
		fr[i].len = fg_craft_tcp_frame(fr[i].data, &c);
	}
	FX->n_tx = 0;
	fg_net_rx(FX->net, fr, 2, FX->now);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
	/* the SYN met LISTEN: a SYN-ACK for it, and a connection block */
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].flags, F_SYN | F_ACK);
	ck_assert_uint_eq(FX->tx[0].ack, 5001);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 1);
}
END_TEST

START_TEST(test_rst_challenge)
{
	fx_handshake();
	fx_seg(F_RST, FX->pseq + 10, 0, 0, NULL, 0);	/* in window, not exact */
	ck_assert_uint_eq(FX->closes, 0);
	ck_assert_uint_eq(fx_last()->flags, F_ACK);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_CHALLENGE_ACKS], 1);
	/* an ACK for data never sent: challenge ACK, dropped */
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 5000, 65535, "zz", 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_BAD_ACK], 1);
	ck_assert_uint_eq(FX->rx_len, 0);
}
END_TEST


/* ---------------------------------------------------------------- net layer */

static void fx_raw(const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct fg_rx_frame fr;

	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, frame, len, &fr), 0);
	fr.flags = flags;
	fg_net_rx(FX->net, &fr, 1, FX->now);
}

/* Ethernet + IPv4 header (20 bytes + optlen of NOPs) around `l4`. */
static uint32_t fx_ipv4(uint8_t *f, uint8_t proto, const uint8_t *l4, uint32_t l4len,
			unsigned optlen, uint16_t frag)
{
	uint8_t *ip = f + 14;
	uint32_t hl = 20 + optlen;
	uint16_t c;

	memcpy(f, FX->mac, 6);
	memcpy(f + 6, FX->peer_mac, 6);
	f[12] = 0x08;
	f[13] = 0;
	memset(ip, 0, hl);
	ip[0] = (uint8_t)(0x40 | hl / 4);
	ip[2] = (uint8_t)((hl + l4len) >> 8);
	ip[3] = (uint8_t)(hl + l4len);
	ip[6] = (uint8_t)(frag >> 8);
	ip[7] = (uint8_t)frag;
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &FX->peer, 4);
	memcpy(ip + 16, &FX->addr, 4);
	memset(ip + 20, 1, optlen);
	c = fx_csum(ip, hl, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	memcpy(ip + hl, l4, l4len);
	return 14 + hl + l4len;
}

START_TEST(test_checksum_reference)
{
	uint8_t buf[301];
	unsigned seed = 1;

	/* against a byte-at-a-time RFC 1071 sum, every length and chaining */
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(rand_r(&seed) >> 3);
	for (unsigned len = 0; len <= sizeof(buf); len++) {
		uint32_t ref = 0;

		for (unsigned i = 0; i < len; i++)
			ref += i % 2 ? buf[i] : (uint32_t)buf[i] << 8;
		ck_assert_uint_eq(fg_csum_fold(fg_csum_add(0, buf, len)), fg_csum_fold(ref));
		if (len >= 12)
			ck_assert_uint_eq(fg_csum_fold(fg_csum_add(fg_csum_add(0, buf, 12), buf + 12,
								   len - 12)), fg_csum_fold(ref));
	}
	/* RFC 1071 3's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 */
	ck_assert_uint_eq(fg_csum_fold(fg_csum_add(0, (const uint8_t[]){ 0x00, 0x01, 0xf2, 0x03,
				       0xf4, 0xf5, 0xf6, 0xf7 }, 8)), (uint16_t)~0xddf2);
}
END_TEST

START_TEST(test_arp)
{
	uint8_t f[60] = { 0 }, mac[6];
	uint8_t *a = f + 14;
	uint32_t other = FX->addr ^ 0x01000000u;

	memset(f, 0xff, 6);
	memcpy(f + 6, FX->peer_mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	a[1] = 1;		/* Ethernet */
	a[2] = 0x08;		/* IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[7] = 1;		/* request */
	memcpy(a + 8, FX->peer_mac, 6);
	memcpy(a + 14, &FX->peer, 4);
	memcpy(a + 24, &FX->addr, 4);
	fx_raw(f, 60, 0);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_int_eq(memcmp(FX->tx[0].frame, FX->peer_mac, 6), 0);
	ck_assert_uint_eq(FX->tx[0].frame[21], 2);			/* reply */
	ck_assert_int_eq(memcmp(FX->tx[0].frame + 22, FX->mac, 6), 0);	/* our MAC */
	ck_assert_int_eq(memcmp(FX->tx[0].frame + 28, &FX->addr, 4), 0);
	/* the sender was learned (RFC 826 merge) */
	ck_assert_int_eq(fg_net_arp_resolve(FX->net, FX->peer, mac, FX->now), 0);
	ck_assert_int_eq(memcmp(mac, FX->peer_mac, 6), 0);
	/* not for us: no reply; malformed: counted */
	memcpy(a + 24, &other, 4);
	fx_raw(f, 60, 0);
	ck_assert_uint_eq(FX->n_tx, 1);
	a[4] = 8;
	fx_raw(f, 60, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_ARP_BAD], 1);
	fx_raw(f, 20, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_ARP_BAD], 2);
	/* an unknown peer: one broadcast request, then quiet for a second */
	ck_assert_int_eq(fg_net_arp_resolve(FX->net, other, mac, FX->now), -EAGAIN);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->tx[1].frame[0], 0xff);
	ck_assert_uint_eq(FX->tx[1].frame[21], 1);
	ck_assert_int_eq(fg_net_arp_resolve(FX->net, other, mac, FX->now + 10 * FX_MS), -EAGAIN);
	fg_net_flush(FX->net);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_ARP_REQUESTS], 1);
}
END_TEST

START_TEST(test_icmp_echo)
{
	uint8_t icmp[40], f[128];
	uint32_t n;
	uint16_t c;

	memset(icmp, 'p', sizeof(icmp));
	icmp[0] = 8;
	icmp[1] = 0;
	icmp[2] = icmp[3] = 0;
	c = fx_csum(icmp, sizeof(icmp), 0);
	icmp[2] = (uint8_t)(c >> 8);
	icmp[3] = (uint8_t)c;
	n = fx_ipv4(f, 1, icmp, sizeof(icmp), 0, 0);
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].frame[34], 0);				/* echo reply */
	ck_assert_int_eq(memcmp(FX->tx[0].frame + 38, icmp + 4, sizeof(icmp) - 4), 0);
	ck_assert_uint_eq(fx_csum(FX->tx[0].frame + 34, sizeof(icmp), 0), 0);	/* valid */
	ck_assert_uint_eq(fx_csum(FX->tx[0].frame + 14, 20, 0), 0);
	icmp[10] ^= 1;		/* bad checksum now */
	n = fx_ipv4(f, 1, icmp, sizeof(icmp), 0, 0);
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_ICMP_DROP], 1);
	fx_raw(f, n, FG_RX_L4_CSUM_OK);	/* the NIC said it was fine */
	ck_assert_uint_eq(FX->n_tx, 2);
}
END_TEST

START_TEST(test_ipv4_checks)
{
	uint8_t syn[20] = { 0x9c, 0x40, 0, 119, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x10, 0 };
	uint8_t f[128];
	uint8_t ph[12];
	uint32_t n, sum;
	uint16_t c;

	memcpy(ph, &FX->peer, 4);
	memcpy(ph + 4, &FX->addr, 4);
	ph[8] = 0;
	ph[9] = 6;
	ph[10] = 0;
	ph[11] = 20;
	sum = fg_csum_add(0, ph, 12);
	c = fx_csum(syn, 20, sum);
	syn[16] = (uint8_t)(c >> 8);
	syn[17] = (uint8_t)c;
	/* a fragment (MF) is counted and dropped */
	n = fx_ipv4(f, 6, syn, 20, 0, 0x2000);
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_FRAGMENT], 1);
	ck_assert_uint_eq(FX->n_tx, 0);
	/* options are skipped: the SYN gets its SYN-ACK */
	n = fx_ipv4(f, 6, syn, 20, 8, 0);
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_OPTIONS], 1);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].flags, F_SYN | F_ACK);
	/* a wrong header checksum, unless the NIC verified it */
	n = fx_ipv4(f, 6, syn, 20, 0, 0);
	f[24] ^= 0xff;
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_BAD_CSUM], 1);
	/* truncated, not ours, unknown protocol, IPv6, runt, other MAC */
	fx_raw(f, 30, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_BAD], 1);
	n = fx_ipv4(f, 17, syn, 20, 0, 0);
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_PROTO], 1);
	f[30] ^= 1;	/* destination address */
	n = 54;
	{
		uint16_t hc;

		f[24] = f[25] = 0;
		hc = fx_csum(f + 14, 20, 0);
		f[24] = (uint8_t)(hc >> 8);
		f[25] = (uint8_t)hc;
	}
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_IP_NOT_OURS], 1);
	f[12] = 0x86;
	f[13] = 0xdd;
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_RX_IPV6], 1);
	fx_raw(f, 10, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_RX_RUNT], 1);
	f[0] = 0x04;
	fx_raw(f, n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_RX_NOT_OURS], 1);
	ck_assert_uint_eq(FX->n_tx, 1);
}
END_TEST

START_TEST(test_tx_offload)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	const uint8_t *th;

	/* rebuild the instance with checksum offload on */
	fx_teardown();
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	fx_setup_cfg(&tc);
	fg_tcp_destroy(FX->tcp);
	fg_net_destroy(FX->net);
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, FX->mac, 6);
	nc.ipv4[0] = FX->addr;
	nc.n_ipv4 = 1;
	nc.tx_csum_offload = true;
	FX->net = fg_net_create(&nc, fg_memport_ops(), FX->mp, &FX->st);
	tc.listen[0].port = 119;
	tc.listen[0].family = AF_INET;
	tc.n_listen = 1;
	FX->tcp = fg_tcp_create(FX->net, &tc, &fx_ops, FX);
	fx_syn(99, -1);
	th = FX->tx[0].frame + 34;
	/* the IPv4 checksum is left to the NIC, TCP's holds the pseudo-header sum */
	ck_assert_uint_eq(FX->tx[0].frame[24] | FX->tx[0].frame[25], 0);
	ck_assert_uint_ne(fx_csum(th, FX->tx[0].len - 34, 0), 0);
	{
		uint8_t ph[12];
		uint16_t want;

		memcpy(ph, &FX->addr, 4);
		memcpy(ph + 4, &FX->peer, 4);
		ph[8] = 0;
		ph[9] = 6;
		ph[10] = 0;
		ph[11] = (uint8_t)(FX->tx[0].len - 34);
		want = (uint16_t)~fx_csum(ph, 12, 0);
		ck_assert_uint_eq((uint16_t)(th[16] << 8 | th[17]), want);
	}
}
END_TEST

START_TEST(test_fault_knob)
{
	struct fg_net_faults fl = { .tx_drop_ppm = 1000000, .seed = 3 };

	fx_handshake();
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fg_tcp_send(FX->conn, "lost", 4);
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_FAULT_TX_DROP], 1);
	/* every received segment twice: the second copy is duplicate data */
	fl = (struct fg_net_faults){ .rx_dup_ppm = 1000000, .seed = 3 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, "dup", 3);
	ck_assert_uint_eq(FX->rx_len, 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_FAULT_RX_DUP], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_DUP_DATA], 1);
	/* reorder: the first is held back until the next one went in */
	fl = (struct fg_net_faults){ .rx_reorder_ppm = 1000000, .seed = 3 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_seg(F_ACK, FX->pseq + 3, FX->our_seq, 65535, "abc", 3);
	ck_assert_uint_eq(FX->rx_len, 3);
	fl = (struct fg_net_faults){ 0 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), 0);
	fx_seg(F_ACK, FX->pseq + 6, FX->our_seq, 65535, "def", 3);
	ck_assert_uint_eq(FX->rx_len, 9);
	ck_assert_int_eq(memcmp(FX->rx, "dupabcdef", 9), 0);
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_TCP_RX_OOO], 1);
	/* shares above 100 % are refused */
	fl = (struct fg_net_faults){ .rx_drop_ppm = 600000, .rx_dup_ppm = 600000 };
	ck_assert_int_eq(fg_net_set_faults(FX->net, &fl), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------- passive mode */

START_TEST(test_passive_mode)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	uint8_t arp[60] = { 0 };

	/* an instance that only observes */
	fg_tcp_destroy(FX->tcp);
	fg_net_destroy(FX->net);
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, FX->mac, 6);
	nc.ipv4[0] = FX->addr;
	nc.n_ipv4 = 1;
	nc.passive = true;
	FX->net = fg_net_create(&nc, fg_memport_ops(), FX->mp, &FX->st);
	memset(&tc, 0, sizeof(tc));
	tc.listen[0].family = AF_INET;
	tc.listen[0].port = 119;
	tc.n_listen = 1;
	tc.max_conns = 8;
	tc.rx_segs = 128;
	tc.rx_segs_per_conn = 4;
	tc.ooo_segs_per_conn = 2;
	FX->tcp = fg_tcp_create(FX->net, &tc, &fx_ops, FX);
	ck_assert_ptr_nonnull(FX->tcp);
	/* a captured stream: SYN, ACK of a SYN-ACK we never saw, data out of
	 * order, a duplicate, FIN */
	fx_syn(999, 7);
	ck_assert_uint_eq(FX->accepts, 1);
	fx_seg(F_ACK, 1000, 77777, 502, NULL, 0);
	fx_seg(F_ACK | F_PSH, 1005, 77777, 502, "world", 5);
	fx_seg(F_ACK | F_PSH, 1000, 77777, 502, "hello", 5);
	fx_seg(F_ACK | F_PSH, 1000, 77777, 502, "hello", 5);
	ck_assert_int_eq(fg_tcp_send(FX->conn, "238 <x>\r\n", 9), 9);	/* swallowed */
	fx_seg(F_ACK | F_FIN, 1010, 77777, 502, NULL, 0);
	fx_advance(0);
	ck_assert_uint_eq(FX->rx_len, 10);
	ck_assert_int_eq(memcmp(FX->rx, "helloworld", 10), 0);
	ck_assert_uint_eq(FX->eofs, 1);
	fg_tcp_close(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->closes, 1);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_FIN);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	/* data with no SYN seen cannot be decoded from a command boundary */
	fx_seg_full(40001, 119, F_ACK, 5000, 1, 502, "CHECK <a@b>\r\n", 13, NULL, 0, 0);
	ck_assert_uint_eq(FX->accepts, 1);
	ck_assert_uint_eq(FX->rx_len, 10);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_MIDSTREAM], 1);
	/* a SYN twice is one stream; the app closes before the client: the
	 * stream lingers, the client's last octets are counted, not taken for
	 * a stream seen mid-way, and its FIN ends it */
	fx_seg_full(40001, 119, F_SYN, 6000, 0, 502, NULL, 0, NULL, 0, 0);
	fx_seg_full(40001, 119, F_SYN, 6000, 0, 502, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(FX->accepts, 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_FLOWS], 2);
	fx_seg_full(40001, 119, F_ACK, 6001, 1, 502, "QUIT\r\n", 6, NULL, 0, 0);
	ck_assert_uint_eq(FX->rx_len, 16);
	fg_tcp_close(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->closes, 2);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 1);
	fx_seg_full(40001, 119, F_ACK, 6007, 1, 502, "late", 4, NULL, 0, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_AFTER_CLOSE_BYTES], 4);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_MIDSTREAM], 1);
	fx_seg_full(40001, 119, F_ACK | F_FIN, 6011, 1, 502, NULL, 0, NULL, 0, 0);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	/* a SYN with another ISN on a live 4-tuple replaces the stream */
	fx_seg_full(40002, 119, F_SYN, 7000, 0, 502, NULL, 0, NULL, 0, 0);
	fx_seg_full(40002, 119, F_ACK, 7001, 1, 502, "x", 1, NULL, 0, 0);
	fx_seg_full(40002, 119, F_SYN, 8000, 0, 502, NULL, 0, NULL, 0, 0);
	ck_assert_uint_eq(FX->accepts, 4);
	ck_assert_uint_eq(FX->closes, 3);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_RST);
	ck_assert_uint_eq(FX->rx_len, 17);
	/* the end of a replay: every stream as if reset */
	ck_assert_uint_eq(fg_tcp_drop_all(FX->tcp), 1);
	ck_assert_uint_eq(FX->closes, 4);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	/* an app that does not read: its segments stay queued past the bound
	 * (a capture sends nothing again) and the caller is told to wait */
	fx_seg_full(40003, 119, F_SYN, 9000, 0, 502, NULL, 0, NULL, 0, 0);
	FX->consume_limit = 0;
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert(!fg_tcp_backlogged(FX->tcp) || i == 4);
		fx_seg_full(40003, 119, F_ACK, 9001 + 4 * i, 1, 502, "abcd", 4, NULL, 0, 0);
	}
	ck_assert(fg_tcp_backlogged(FX->tcp));
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_BACKLOG], 1);
	FX->consume_limit = UINT32_MAX;
	fg_tcp_pause(FX->conn);
	fg_tcp_resume(FX->conn);
	fx_advance(0);
	ck_assert_uint_eq(FX->rx_len, 37);
	ck_assert(!fg_tcp_backlogged(FX->tcp));
	/* a hole the out-of-order list cannot wait behind ends the stream */
	fx_seg_full(40004, 119, F_SYN, 10000, 0, 502, NULL, 0, NULL, 0, 0);
	for (uint32_t i = 0; i < 3; i++)
		fx_seg_full(40004, 119, F_ACK, 10005 + 5 * i, 1, 502, "hello", 5, NULL, 0, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_OOO], 1 + 2);	/* "world" before "hello" */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_GAPS], 1);
	ck_assert_uint_eq(FX->closes, 5);
	ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_ERROR);
	fx_seg_full(40004, 119, F_ACK, 10001, 1, 502, "abcd", 4, NULL, 0, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_PASSIVE_MIDSTREAM], 2);
	ck_assert_uint_eq(FX->rx_len, 37);
	fg_tcp_drop_all(FX->tcp);
	fx_advance(0);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 0);
	ck_assert_uint_eq(fg_tcp_segs_in_use(FX->tcp), 0);
	/* ARP gets no answer either: nothing at all was transmitted */
	memset(arp, 0xff, 6);
	memcpy(arp + 6, FX->peer_mac, 6);
	arp[12] = 0x08;
	arp[13] = 0x06;
	arp[15] = 1;
	arp[16] = 0x08;
	arp[18] = 6;
	arp[19] = 4;
	arp[21] = 1;
	memcpy(arp + 28, &FX->peer, 4);
	memcpy(arp + 38, &FX->addr, 4);
	fx_raw(arp, 60, 0);
	fx_advance(700ull * 1000 * FX_MS);
	ck_assert_uint_eq(FX->n_tx, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_SEGS], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET_TX_NOBUF], 0);
}
END_TEST


/* ---- IPv6 only (fixture fx_setup6) ---- */

/* A Packet Too Big from a router: MTU `mtu`, quoting the frame we sent as
 * FX->tx[i] (its IPv6 header and the first `quote` octets after). */
static void fx_ptb(unsigned i, uint32_t mtu, uint32_t quote, uint32_t seq_delta)
{
	uint8_t router[16];
	uint32_t len = 8 + 40 + quote;
	struct fg_rx_frame fr;
	uint8_t *m, *q;

	inet_pton(AF_INET6, "2001:db8:ffff::1", router);
	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, NULL, 14 + 40 + len, &fr), 0);
	fg_net_build_ipv6(fr.data, FX->mac, FX->peer_mac, router, FX->addr6, 58, len, 64);
	m = fr.data + 54;
	memset(m, 0, 8);
	m[0] = 2;
	fg_wr32(m + 4, mtu);
	q = m + 8;
	memcpy(q, FX->tx[i].frame + 14, 40 + quote);
	fg_wr32(q + 40 + 4, fg_rd32(q + 40 + 4) + seq_delta);
	fg_wr16(m + 2, fg_csum_fold(fg_csum_add(fg_ipv6_pseudo_sum(router, FX->addr6, 58, len),
						m, len)));
	fg_net_rx(FX->net, &fr, 1, FX->now);
}

START_TEST(test_v6_packet_too_big)
{
	static uint8_t big[6000];
	uint32_t una;

	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	fx_handshake();
	ck_assert_int_eq(fg_tcp_send(FX->conn, big, sizeof(big)), (int)sizeof(big));
	fx_advance(0);
	ck_assert_uint_eq(FX->n_tx, 3);		/* 1460 + 1460 + 1460 of the initial window */
	ck_assert_uint_eq(FX->tx[0].plen, 1460);
	una = FX->tx[0].seq;
	/* not believed: an MTU under 1280; a quoted sequence number beyond
	 * what was sent; one already acknowledged; a quote too short */
	fx_ptb(0, 1279, 20, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_PTB_BAD], 1);
	fx_ptb(2, 1280, 20, 1460);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PMTU_IGNORED], 1);
	fx_ptb(0, 1280, 20, (uint32_t)-1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PMTU_IGNORED], 2);
	fx_ptb(0, 1280, 7, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_PTB_BAD], 2);
	ck_assert_uint_eq(FX->n_tx, 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PMTU_LOWERED], 0);
	/* believed: the MSS falls to 1280 - 40 - 20 and the flight goes again */
	fx_ptb(1, 1280, 20, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_NET6_PTB], 3);	/* handed on: two ignored by TCP */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PMTU_LOWERED], 1);
	ck_assert_uint_gt(FX->n_tx, 3);
	ck_assert_uint_eq(FX->tx[3].seq, una);
	ck_assert_uint_eq(FX->tx[3].plen, 1220);
	ck_assert_int_eq(memcmp(FX->tx[3].payload, big, 1220), 0);
	for (unsigned i = 3; i < FX->n_tx; i++)
		ck_assert_uint_le(FX->tx[i].len, 14 + 1280);
	/* a larger MTU later does not raise it again */
	fx_ptb(3, 1400, 20, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_PMTU_LOWERED], 1);
	/* what follows the ACK is cut at 1220 too */
	FX->n_tx = 0;
	fx_seg(F_ACK, FX->pseq, una + 1220, 65535, NULL, 0);
	for (unsigned i = 0; i < FX->n_tx; i++)
		ck_assert_uint_le(FX->tx[i].plen, 1220);
}
END_TEST

/* IPv4 and IPv6 on one instance: each family finds its own listener and
 * its own connections, even with equal ports and an IPv6 address that
 * begins with the IPv4 one's octets. */
START_TEST(test_dual_stack)
{
	struct fg_tcp_config tc = { .max_conns = 16 };
	struct fg_craft_tcp c4 = { .dst_mac = FX->mac, .src_mac = FX->peer_mac, .sport = 40000,
				   .dport = 119, .flags = F_SYN, .seq = 7, .wnd = 65535 };
	struct fg_craft_tcp c6 = c4;
	uint8_t alias[16] = { 0 };
	struct fg_rx_frame fr;

	tc.listen[0] = (struct fg_endpoint){ .family = AF_INET, .port = 119 };
	tc.listen[1] = (struct fg_endpoint){ .family = AF_INET6, .port = 119 };
	tc.n_listen = 2;
	fx_reconfig(&tc);
	c4.src = FX->peer;
	c4.dst = FX->addr;
	c6.src6 = FX->peer6;
	c6.dst6 = FX->addr6;
	/* the IPv4 one: the fixture's net has its IPv4 address too */
	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, NULL, 74, &fr), 0);
	fr.len = fg_craft_tcp_frame(fr.data, &c4);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].flags, F_SYN | F_ACK);
	ck_assert_uint_eq(fg_rd16(FX->tx[0].frame + 12), FG_ETHERTYPE_IPV4);
	ck_assert_uint_eq(FX->tx[0].mss, 1480);		/* MTU 1520 - 40 */
	fg_memport_rx_frame(FX->mp, NULL, 74, &fr);
	fr.len = fg_craft_tcp_frame(fr.data, &c6);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(FX->n_tx, 2);
	ck_assert_uint_eq(fg_rd16(FX->tx[1].frame + 12), FG_ETHERTYPE_IPV6);
	ck_assert_uint_eq(FX->tx[1].mss, 1460);		/* MTU 1520 - 60 */
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 2);
	/* an IPv6 peer whose address starts with the IPv4 peer's octets and
	 * the same ports: a third connection, not the IPv4 one's */
	memcpy(alias, &FX->peer, 4);
	c6.src6 = alias;
	fg_memport_rx_frame(FX->mp, NULL, 74, &fr);
	fr.len = fg_craft_tcp_frame(fr.data, &c6);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 3);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SYN_RX], 3);
	/* sources no connection can have: loopback, unspecified */
	alias[15] = 1;
	memset(alias, 0, 15);
	fg_memport_rx_frame(FX->mp, NULL, 74, &fr);
	fr.len = fg_craft_tcp_frame(fr.data, &c6);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	alias[15] = 0;
	fg_memport_rx_frame(FX->mp, NULL, 74, &fr);
	fr.len = fg_craft_tcp_frame(fr.data, &c6);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_BAD], 2);
	ck_assert_uint_eq(fg_tcp_conns_in_use(FX->tcp), 3);
	/* a listener of one family only: the other's SYN is refused (RST) */
	tc.n_listen = 1;
	fx_reconfig(&tc);
	c6.src6 = FX->peer6;
	c6.dst6 = FX->addr6;
	fg_memport_rx_frame(FX->mp, NULL, 74, &fr);
	fr.len = fg_craft_tcp_frame(fr.data, &c6);
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RX_NO_CONN], 1);
	ck_assert_uint_eq(FX->tx[0].flags, F_RST | F_ACK);
	ck_assert_uint_eq(fg_rd16(FX->tx[0].frame + 12), FG_ETHERTYPE_IPV6);
}
END_TEST

/* With checksum offload an IPv6 segment leaves with the pseudo-header
 * sum in its checksum field and the frame flagged IPv6 for the port. */
START_TEST(test_v6_tx_offload)
{
	struct fg_tcp_config tc = { .max_conns = 8 };
	struct fg_net_config nc = { 0 };
	const uint8_t *ip, *th;
	uint32_t l4;

	/* rebuild the net with offload: the fixture's config plus the flag */
	fg_tcp_destroy(FX->tcp);
	fg_net_destroy(FX->net);
	memcpy(nc.mac, FX->mac, 6);
	memcpy(nc.ipv6[0], FX->addr6, 16);
	nc.n_ipv6 = 1;
	nc.tx_csum_offload = true;
	FX->net = fg_net_create(&nc, fg_memport_ops(), FX->mp, &FX->st);
	ck_assert_ptr_nonnull(FX->net);
	tc.listen[0] = (struct fg_endpoint){ .family = AF_INET6, .port = 119 };
	tc.n_listen = 1;
	FX->tcp = fg_tcp_create(FX->net, &tc, &fx_ops, FX);
	ck_assert_ptr_nonnull(FX->tcp);
	fx_syn(99, -1);
	ck_assert_uint_eq(FX->n_tx, 1);
	ip = FX->tx[0].frame + 14;
	th = ip + 40;
	l4 = fg_rd16(ip + 4);
	ck_assert_uint_eq(FX->tx_flags[0], FG_TX_CSUM_OFFLOAD | FG_TX_IPV6);
	ck_assert_uint_eq(fg_rd16(th + 16),
			  (uint16_t)~fg_csum_fold(fg_ipv6_pseudo_sum(ip + 8, ip + 24, 6, l4)));
	ck_assert_uint_eq(FX->tx[0].mss, 1440);		/* MTU 1500 - 60 */
}
END_TEST

/* A behaviour test runs twice: over IPv4 and over IPv6 (the fixture's
 * peer sends its segments with the other family). */
static void add_both(TCase *v4, TCase *v6, const TTest *t)
{
	tcase_add_test(v4, t);
	tcase_add_test(v6, t);
}


static Suite *tcp_suite(void)
{
	Suite *s = suite_create("tcp");
	TCase *t = tcase_create("state-table");
	TCase *u = tcase_create("behaviour");
	TCase *u6 = tcase_create("behaviour-ipv6");
	TCase *n = tcase_create("net");
	TCase *n6 = tcase_create("ipv6");

	tcase_add_loop_test(t, test_state_flag_table, 0, 2 * (int)FG_ARRAY_SIZE(table_states));
	tcase_add_loop_test(t, test_out_of_window_table, 0, (int)FG_ARRAY_SIZE(table_states));
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(u, fx_setup4, fx_teardown);
	tcase_add_checked_fixture(u6, fx_setup6, fx_teardown);
	add_both(u, u6, test_handshake_options);
	add_both(u, u6, test_handshake_no_ws);
	add_both(u, u6, test_sack);
	add_both(u, u6, test_bad_ack_in_syn_rcvd);
	add_both(u, u6, test_closed_replies);
	add_both(u, u6, test_config_checks);
	add_both(u, u6, test_set_listen);
	add_both(u, u6, test_bad_checksum_and_header);
	add_both(u, u6, test_app_refuses);
	add_both(u, u6, test_in_order_and_reassembly);
	add_both(u, u6, test_delayed_ack);
	tcase_add_test(u, test_merged_in_order);
	tcase_add_test(u, test_merged_out_of_order_and_dup);
	tcase_add_test(u, test_merged_holds);
	tcase_add_test(u, test_merged_faults);
	add_both(u, u6, test_merged_refused);
	add_both(u, u6, test_window_backpressure_and_hold);
	add_both(u, u6, test_zero_window);
	add_both(u, u6, test_segmentation_by_mss);
	add_both(u, u6, test_send_buffer_full);
	add_both(u, u6, test_rto_backoff_and_give_up);
	add_both(u, u6, test_rtt_estimate);
	add_both(u, u6, test_fast_retransmit);
	add_both(u, u6, test_persist);
	add_both(u, u6, test_time_wait_expiry_and_reuse);
	add_both(u, u6, test_next_deadline);
	add_both(u, u6, test_idle_timeout);
	add_both(u, u6, test_synack_retransmit_and_timeout);
	add_both(u, u6, test_syn_backlog_and_cookies);
	add_both(u, u6, test_per_peer_backlog_and_no_cookies);
	add_both(u, u6, test_pool_empty);
	add_both(u, u6, test_app_abort);
	add_both(u, u6, test_rst_mid_data_releases_holds);
	add_both(u, u6, test_rst_challenge);
	add_both(u, u6, test_lookup_after_reset);
	suite_add_tcase(s, u);
	suite_add_tcase(s, u6);
	tcase_add_checked_fixture(n, fx_setup4, fx_teardown);
	tcase_add_test(n, test_checksum_reference);
	tcase_add_test(n, test_arp);
	tcase_add_test(n, test_icmp_echo);
	tcase_add_test(n, test_ipv4_checks);
	tcase_add_test(n, test_tx_offload);
	tcase_add_test(n, test_fault_knob);
	tcase_add_test(n, test_passive_mode);
	suite_add_tcase(s, n);
	tcase_add_checked_fixture(n6, fx_setup6, fx_teardown);
	tcase_add_test(n6, test_v6_packet_too_big);
	tcase_add_test(n6, test_dual_stack);
	tcase_add_test(n6, test_v6_tx_offload);
	suite_add_tcase(s, n6);
	return s;
}

FG_TEST_MAIN(tcp_suite)
