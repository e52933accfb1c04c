/* SPDX-License-Identifier: MIT */
/*
 * test_tcp_sack.c — the sender's SACK loss recovery (tcp_sack.c, RFC 6675).
 *
 *   scoreboard  Update() on a bare connection block: blocks merged (overlap,
 *               adjacency, any order), bad blocks and D-SACKs ignored and
 *               counted, ranges cut by the cumulative ACK, the bound;
 *               IsLost() by ranges and by octets, SetPipe(), NextSeg()'s
 *               order and HighRxt.
 *   recovery    the fixture's connection (tcp_fixture.h) against a peer
 *               scripted here: one loss, several in one window (all holes
 *               sent again before any cumulative ACK moves, as NewReno
 *               cannot), a lost retransmission ended by the RTO after which
 *               SACKed data is not sent again, one found lost by the data
 *               SACKed after it, reordering that is no loss, bogus blocks.
 *   lossy link  several MiB between two instances over a memlink dropping
 *               1 % of data segments (tools/bench/tcp_bulk.h): every octet
 *               arrives, in order, and the recovery counters moved — with
 *               SACK over IPv4 and IPv6, and with NewReno.
 */
#include <errno.h>

#include "../../dataplane/tcp/tcp_int.h"
#include "../../tools/bench/tcp_bulk.h"
#include "floodgate/wire.h"
/* the fixture's helpers this file has no use for */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tcp_fixture.h"
#pragma GCC diagnostic pop

#define MSS 1000u
#define UNA 100000u

/* ---------------------------------------------------------------- scoreboard */

static struct fg_stats sb_st;
static struct fg_tcp sb_tcp;
static struct fg_tcp_conn sb_c;

/* A bare block: SND.UNA = UNA, 40 segments of MSS sent. */
static struct fg_tcp_conn *bare(void)
{
	memset(&sb_st, 0, sizeof(sb_st));
	memset(&sb_tcp, 0, sizeof(sb_tcp));
	memset(&sb_c, 0, sizeof(sb_c));
	sb_tcp.st = &sb_st;
	sb_c.tcp = &sb_tcp;
	sb_c.mss = MSS;
	sb_c.snd_una = UNA;
	sb_c.snd_nxt = sb_c.snd_max = UNA + 40 * MSS;
	sb_c.sb_len = 40 * MSS;
	sb_c.cwnd = 20 * MSS;
	return &sb_c;
}

/* Segment i's range [UNA + i*MSS, UNA + j*MSS) as a block. */
static uint32_t seg(unsigned i)
{
	return UNA + i * MSS;
}

static uint32_t upd(struct fg_tcp_conn *c, uint32_t s, uint32_t e)
{
	uint32_t b[2] = { s, e };

	return tcp_sack_update(c, b, 1);
}

static void ranges_are(const struct fg_tcp_conn *c, unsigned n, const uint32_t *want)
{
	ck_assert_uint_eq(c->sb.n, n);
	for (unsigned i = 0; i < 2 * n; i++)
		ck_assert_uint_eq(c->sb.blk[i], want[i]);
}

START_TEST(test_sb_merge)
{
	struct fg_tcp_conn *c = bare();

	ck_assert_uint_eq(upd(c, seg(10), seg(12)), 2 * MSS);
	ck_assert_uint_eq(upd(c, seg(4), seg(5)), MSS);		/* below: sorted first */
	ck_assert_uint_eq(upd(c, seg(20), seg(21)), MSS);
	ranges_are(c, 3, (const uint32_t[]){ seg(4), seg(5), seg(10), seg(12), seg(20), seg(21) });
	ck_assert_uint_eq(upd(c, seg(11), seg(14)), 2 * MSS);	/* overlap: one range */
	ck_assert_uint_eq(upd(c, seg(14), seg(15)), MSS);	/* adjacent: merged */
	ranges_are(c, 3, (const uint32_t[]){ seg(4), seg(5), seg(10), seg(15), seg(20), seg(21) });
	ck_assert_uint_eq(upd(c, seg(10), seg(12)), 0);		/* again: nothing new */
	ck_assert_uint_eq(upd(c, seg(5), seg(20)), 10 * MSS);	/* bridges all three */
	ranges_are(c, 1, (const uint32_t[]){ seg(4), seg(21) });
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 0);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_DSACKS], 0);
	/* the cumulative ACK cuts the range it lands in, drops those below */
	c->snd_una = seg(6);
	ck_assert_uint_eq(upd(c, seg(30), seg(31)), MSS);
	ranges_are(c, 2, (const uint32_t[]){ seg(6), seg(21), seg(30), seg(31) });
	c->snd_una = seg(25);
	ck_assert_uint_eq(tcp_sack_update(c, NULL, 0), 0);
	ranges_are(c, 1, (const uint32_t[]){ seg(30), seg(31) });
}
END_TEST

START_TEST(test_sb_bad_blocks)
{
	struct fg_tcp_conn *c = bare();

	upd(c, seg(10), seg(11));
	/* empty, inverted, straddling SND.UNA, starting at it, past SND.MAX,
	 * wrapped around: ignored and counted */
	ck_assert_uint_eq(upd(c, seg(12), seg(12)), 0);
	ck_assert_uint_eq(upd(c, seg(14), seg(13)), 0);
	ck_assert_uint_eq(upd(c, UNA - 500, seg(2)), 0);
	ck_assert_uint_eq(upd(c, UNA, seg(2)), 0);
	ck_assert_uint_eq(upd(c, seg(39), seg(41)), 0);
	ck_assert_uint_eq(upd(c, seg(20), UNA - 0x80000000u), 0);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 6);
	/* a D-SACK (wholly at or below SND.UNA): harmless, counted apart */
	ck_assert_uint_eq(upd(c, UNA - 2 * MSS, UNA - MSS), 0);
	ck_assert_uint_eq(upd(c, UNA - MSS, UNA), 0);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_DSACKS], 2);
	ranges_are(c, 1, (const uint32_t[]){ seg(10), seg(11) });
	/* a block ending exactly at SND.MAX is good */
	ck_assert_uint_eq(upd(c, seg(39), seg(40)), MSS);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 6);
	/* with a FIN sent (SND.MAX one past the data), one covering it is
	 * good too (Linux SACKs a FIN that came out of order) ... */
	c->snd_max++;
	ck_assert_uint_eq(upd(c, seg(39), seg(40) + 1), 1);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 6);
	/* ... but the go-back-N after an RTO never steps over the FIN */
	c->snd_nxt = seg(39);
	ck_assert_uint_eq(tcp_sack_skip(c, UINT32_MAX), UINT32_MAX);
	ck_assert_uint_eq(c->snd_nxt, seg(40));
}
END_TEST

START_TEST(test_sb_bounded)
{
	struct fg_tcp_conn *c = bare();

	/* every other segment: 19 ranges offered, TCP_SACK_SB_BLOCKS kept,
	 * the highest forgotten (less believed SACKed, never more) */
	for (unsigned i = 1; i < 39; i += 2)
		upd(c, seg(i), seg(i + 1));
	ck_assert_uint_eq(c->sb.n, TCP_SACK_SB_BLOCKS);
	ck_assert_uint_eq(sb_st.ctr[FG_CTR_TCP_SACK_SB_FULL], 19 - TCP_SACK_SB_BLOCKS);
	ck_assert_uint_eq(c->sb.blk[0], seg(1));
	ck_assert_uint_eq(c->sb.blk[2 * TCP_SACK_SB_BLOCKS - 1], seg(2 * TCP_SACK_SB_BLOCKS));
	/* a low block still gets in: the highest makes room */
	c->snd_una = UNA - MSS;
	upd(c, UNA - MSS / 2, UNA);
	ck_assert_uint_eq(c->sb.n, TCP_SACK_SB_BLOCKS);
	ck_assert_uint_eq(c->sb.blk[0], UNA - MSS / 2);
	ck_assert_uint_eq(c->sb.blk[2 * TCP_SACK_SB_BLOCKS - 1], seg(2 * TCP_SACK_SB_BLOCKS - 2));
	/* a block merging with one kept needs no room */
	upd(c, seg(2), seg(3));
	ck_assert_uint_eq(c->sb.n, TCP_SACK_SB_BLOCKS - 1);
}
END_TEST

START_TEST(test_sb_is_lost_and_pipe)
{
	struct fg_tcp_conn *c = bare();

	/* nothing SACKed: nothing lost, all 40 segments in the pipe */
	ck_assert(!tcp_sack_is_lost(c, UNA));
	ck_assert_uint_eq(tcp_sack_pipe(c), 40 * MSS);
	/* segment 0 missing, 1..2 SACKed: 2 MSS above it is not yet loss */
	upd(c, seg(1), seg(3));
	ck_assert(!tcp_sack_is_lost(c, UNA));
	ck_assert_uint_eq(tcp_sack_pipe(c), 38 * MSS);
	/* one octet more than (DupThresh - 1) * SMSS above: lost */
	upd(c, seg(3), seg(3) + 1);
	ck_assert(tcp_sack_is_lost(c, UNA));
	ck_assert(tcp_sack_is_lost(c, seg(1) - 1));
	ck_assert(!tcp_sack_is_lost(c, seg(1)));		/* SACKed */
	ck_assert(!tcp_sack_is_lost(c, seg(4)));		/* above every range */
	ck_assert_uint_eq(tcp_sack_pipe(c), 40 * MSS - MSS - (2 * MSS + 1));
	/* by ranges: three small ones above a hole make it lost */
	c = bare();
	upd(c, seg(5), seg(5) + 10);
	upd(c, seg(6), seg(6) + 10);
	ck_assert(!tcp_sack_is_lost(c, seg(4)));
	upd(c, seg(7), seg(7) + 10);
	ck_assert(tcp_sack_is_lost(c, seg(4)));
	ck_assert(tcp_sack_is_lost(c, UNA));
	ck_assert(!tcp_sack_is_lost(c, seg(5) + 10));		/* two ranges above it */
	/* pipe: lost holes [UNA, seg 5) out; the others in */
	ck_assert_uint_eq(tcp_sack_pipe(c), 40 * MSS - 5 * MSS - 30);
	/* in recovery, what was sent again below HighRxt is in flight again */
	c->flags |= CF_SACK_RECOVERY;
	c->sb.high_rxt = seg(2);
	ck_assert_uint_eq(tcp_sack_pipe(c), 40 * MSS - 5 * MSS - 30 + 2 * MSS);
}
END_TEST

START_TEST(test_sb_next_seg_order)
{
	struct fg_tcp_conn *c = bare();
	uint32_t s, l;

	/* holes: [0,1) [3,4) [6,8) [12,13); SACKed: [1,3) [4,6) [8,12) [13,14) */
	upd(c, seg(13), seg(14));
	upd(c, seg(4), seg(6));
	upd(c, seg(1), seg(3));
	upd(c, seg(8), seg(12));
	c->flags |= CF_SACK_RECOVERY;
	c->sb.high_rxt = UNA;
	/* rule 1 in order: each lost hole, SMSS at a time, from HighRxt */
	static const uint32_t want[][2] = {
		{ 0, MSS }, { 3, MSS }, { 6, MSS }, { 7, MSS },
	};
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_int_eq(tcp_sack_next_seg(c, false, &s, &l), 0);
		ck_assert_uint_eq(s, seg(want[i][0]));
		ck_assert_uint_eq(l, want[i][1]);
		c->sb.high_rxt = s + l;
	}
	/* hole [12,13) has one range of 1 MSS above: not lost, rule 1 has no
	 * more; rule 3 sends it */
	ck_assert_int_eq(tcp_sack_next_seg(c, false, &s, &l), -1);
	ck_assert_int_eq(tcp_sack_next_seg(c, true, &s, &l), 0);
	ck_assert_uint_eq(s, seg(12));
	c->sb.high_rxt = s + l;
	ck_assert_int_eq(tcp_sack_next_seg(c, true, &s, &l), -1);
	/* HighRxt inside a hole: the rest of it; a short hole: its length */
	c->sb.high_rxt = seg(6) + 300;
	ck_assert_int_eq(tcp_sack_next_seg(c, false, &s, &l), 0);
	ck_assert_uint_eq(s, seg(6) + 300);
	ck_assert_uint_eq(l, MSS);
	c->sb.high_rxt = seg(7) + 300;
	ck_assert_int_eq(tcp_sack_next_seg(c, false, &s, &l), 0);
	ck_assert_uint_eq(l, MSS - 300);
}
END_TEST

/* ---------------------------------------------------------------- recovery */

#define F_FIN 0x01
#define F_SYN 0x02
#define F_ACK 0x10
#define NSEG 64
#define SMSS 1460u

/* The flight under test: segments of our data as sent. */
static uint32_t fl_seq[NSEG], fl_len[NSEG];
static unsigned fl_n;
static uint8_t data[256 * 1024];
/* The right edge of the peer's window, once the flight under test is
 * out (0: a window of 65535): the loss rounds then see no new data. */
static uint32_t peer_edge;


static void sack_setup(int sack)
{
	struct fg_tcp_config tc;
	const uint8_t opts[8] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2 };
	struct fx_tx *sa;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.sndbuf = sizeof(data);
	fx_next_v6 = 0;
	peer_edge = 0;
	fx_setup_cfg(&tc);
	FX->pseq = 1000;
	fx_seg_full(FX_PEER_PORT, 119, F_SYN, 999, 0, 65535, NULL, 0, opts, sack ? 8 : 4, 0);
	sa = fx_last();
	ck_assert_int_eq(sa->sack_ok, sack);
	FX->our_seq = sa->seq + 1;
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, NULL, 0);
	ck_assert_ptr_nonnull(FX->conn);
	FX->n_tx = 0;
	ck_assert_int_eq(fg_tcp_send(FX->conn, data, sizeof(data) / 2), sizeof(data) / 2);
	fx_advance(0);
}

/* An ACK from the peer, with `n` SACK blocks. */
static void ack_sack(uint32_t ack, const uint32_t *blk, unsigned n)
{
	uint16_t wnd = peer_edge ? (uint16_t)FG_MIN(peer_edge - ack, 65535u) : 65535;
	uint8_t o[4 + 8 * 4];

	o[0] = 1;
	o[1] = 1;
	o[2] = 5;
	o[3] = (uint8_t)(2 + 8 * n);
	for (unsigned i = 0; i < 2 * n; i++)
		fg_wr32(o + 4 + 4 * i, blk[i]);
	fx_seg_full(FX_PEER_PORT, 119, F_ACK, FX->pseq, ack, wnd, NULL, 0, o, n ? 4 + 8 * n : 0, 0);
}

/* The data segments captured since the last call, in order, as the flight. */
static void take_flight(void)
{
	fl_n = 0;
	for (unsigned i = 0; i < FX->n_tx && fl_n < NSEG; i++) {
		if (!FX->tx[i].is_tcp || !FX->tx[i].plen)
			continue;
		fl_seq[fl_n] = FX->tx[i].seq;
		fl_len[fl_n] = FX->tx[i].plen;
		fl_n++;
	}
	FX->n_tx = 0;
}

static uint32_t flight_end(void)
{
	return fl_seq[fl_n - 1] + fl_len[fl_n - 1];
}

/* Slow start to a flight as large as the peer's window allows. */
static void grow(void)
{
	for (unsigned round = 0; round < 4; round++) {
		take_flight();
		for (unsigned i = 0; i < fl_n; i++)
			ack_sack(fl_seq[i] + fl_len[i], NULL, 0);
	}
	take_flight();
	ck_assert_uint_ge(fl_n, 30);
	ck_assert_uint_eq(flight_end(), FX->conn->snd_max);
	peer_edge = flight_end();
}

/* The peer got the flight but the segments in `lost` (a bitmap): its ACK
 * after segment j, with SACK blocks as RFC 2018 4 has a receiver build
 * them (the block holding j first, then the others upward). */
static void peer_acks(uint64_t lost, unsigned upto)
{
	for (unsigned j = 0; j < upto && j < fl_n; j++) {
		uint32_t blk[8], ack = fl_seq[0];
		unsigned n = 0, first_hole = fl_n, jb = 0;

		if (lost & (1ull << j))
			continue;
		for (unsigned i = 0; i <= j; i++) {
			if (lost & (1ull << i)) {
				first_hole = i;
				break;
			}
			ack = fl_seq[i] + fl_len[i];
		}
		for (unsigned i = first_hole + 1; i <= j; i++) {
			if (lost & (1ull << i))
				continue;
			if (n && blk[2 * n - 1] == fl_seq[i]) {
				blk[2 * n - 1] = fl_seq[i] + fl_len[i];
			} else if (n < 4) {
				blk[2 * n] = fl_seq[i];
				blk[2 * n + 1] = fl_seq[i] + fl_len[i];
				n++;
			}
			if (i == j)
				jb = n - 1;
		}
		if (jb) {
			uint32_t s = blk[2 * jb], e = blk[2 * jb + 1];

			memmove(&blk[2], &blk[0], 2 * jb * sizeof(blk[0]));
			blk[0] = s;
			blk[1] = e;
		}
		ack_sack(ack, blk, n);
	}
}

/* How often `seq` was sent since the flight was taken. */
static unsigned sent_count(uint32_t seq)
{
	unsigned k = 0;

	for (unsigned i = 0; i < FX->n_tx; i++)
		k += FX->tx[i].is_tcp && FX->tx[i].plen && FX->tx[i].seq == seq;
	return k;
}

START_TEST(test_recovery_one_loss)
{
	uint32_t ssthresh_at;

	sack_setup(1);
	grow();
	peer_acks(1ull << 2, 5);	/* 0, 1 in order; 3 and 4 SACKed: 2 MSS */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_eq(sent_count(fl_seq[2]), 0);
	peer_acks(1ull << 2 | 0x1full, 6);	/* the third duplicate */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_FAST_RETRANS], 1);
	ck_assert_uint_eq(sent_count(fl_seq[2]), 1);
	ck_assert(FX->conn->flags & CF_SACK_RECOVERY);
	ck_assert_uint_eq(FX->conn->sb.recovery_point, flight_end());
	ssthresh_at = FX->conn->ssthresh;
	ck_assert_uint_eq(FX->conn->cwnd, ssthresh_at);
	peer_acks(1ull << 2 | 0x3full, fl_n);	/* the rest of the flight */
	/* only the hole went again: nothing SACKed was resent */
	for (unsigned i = 0; i < fl_n; i++)
		ck_assert_uint_eq(sent_count(fl_seq[i]), i == 2 ? 1 : 0);
	ack_sack(flight_end(), NULL, 0);	/* the hole filled: everything */
	ck_assert(!(FX->conn->flags & CF_SACK_RECOVERY));
	ck_assert_uint_eq(FX->conn->cwnd, ssthresh_at);
	ck_assert_uint_eq(FX->conn->sb.n, 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 1);
}
END_TEST

START_TEST(test_recovery_several_losses_one_window)
{
	uint64_t lost = 1ull << 2 | 1ull << 5 | 1ull << 9 | 1ull << 20;

	sack_setup(1);
	grow();
	peer_acks(lost, fl_n);
	/* every hole sent again before any cumulative ACK moved past the
	 * first (NewReno would have sent one per round trip) */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 1);
	for (unsigned i = 0; i < fl_n; i++)
		ck_assert_uint_eq(sent_count(fl_seq[i]), (lost >> i) & 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 4);
	/* the peer gets them: cumulative ACKs climb hole by hole */
	peer_acks(lost & ~(1ull << 2), fl_n);
	peer_acks(lost & ~(3ull << 2 | 1ull << 5), fl_n);
	ck_assert(FX->conn->flags & CF_SACK_RECOVERY);
	ack_sack(flight_end(), NULL, 0);
	ck_assert(!(FX->conn->flags & CF_SACK_RECOVERY));
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 4);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 0);
}
END_TEST

/* The same losses without SACK: NewReno sends one hole per partial ACK. */
START_TEST(test_newreno_without_sack)
{
	uint64_t lost = 1ull << 2 | 1ull << 5 | 1ull << 9;

	sack_setup(0);
	grow();
	peer_acks(lost, fl_n);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_FAST_RETRANS], 1);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_eq(sent_count(fl_seq[2]), 1);
	ck_assert_uint_eq(sent_count(fl_seq[5]), 0);
	ck_assert_uint_eq(sent_count(fl_seq[9]), 0);
	ack_sack(fl_seq[5], NULL, 0);		/* partial: the next hole */
	ck_assert_uint_eq(sent_count(fl_seq[5]), 1);
	ck_assert_uint_eq(sent_count(fl_seq[9]), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 0);
}
END_TEST

START_TEST(test_lost_retransmission_rto)
{
	uint64_t lost = 1ull << 2 | 1ull << 5;
	uint32_t high;

	sack_setup(1);
	grow();
	peer_acks(lost, fl_n);			/* both holes sent again ... */
	ck_assert_uint_eq(sent_count(fl_seq[2]), 1);
	ck_assert_uint_eq(sent_count(fl_seq[5]), 1);
	high = FX->conn->snd_max;
	FX->n_tx = 0;				/* ... and lost again */
	fx_advance(FX->conn->rto + 2 * FX_MS);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 1);
	ck_assert(!(FX->conn->flags & CF_SACK_RECOVERY));
	ck_assert(FX->conn->flags & CF_SACK_RTO);
	ck_assert_uint_eq(FX->conn->sb.n, 0);		/* RFC 2018 8: cleared */
	ck_assert_uint_eq(FX->conn->sb.recovery_point, high);
	ck_assert_uint_eq(FX->n_tx, 1);			/* one segment: SND.UNA's */
	ck_assert_uint_eq(FX->tx[0].seq, fl_seq[2]);
	FX->n_tx = 0;
	/* the peer has everything but hole 5, and says so */
	{
		uint32_t blk[2] = { fl_seq[6], high };

		ack_sack(fl_seq[5], blk, 1);
	}
	/* hole 5 goes; the SACKed octets above it never again */
	ck_assert_uint_eq(sent_count(fl_seq[5]), 1);
	for (unsigned i = 0; i < FX->n_tx; i++)
		if (FX->tx[i].is_tcp && FX->tx[i].plen)
			ck_assert(SEQ_LT(FX->tx[i].seq, fl_seq[6]) || SEQ_GEQ(FX->tx[i].seq, high));
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 1);	/* none new */
	ack_sack(high, NULL, 0);
	ck_assert(!(FX->conn->flags & CF_SACK_RTO));
}
END_TEST

/* The retransmission lost while new data flows: once more than two
 * segments sent after it are SACKed, it goes again, before any RTO. */
START_TEST(test_lost_retransmission_detected)
{
	uint32_t end, blk[2];

	sack_setup(1);
	grow();
	end = flight_end();
	ck_assert_int_gt(fg_tcp_send(FX->conn, data, 64 * 1024), 0);
	fx_advance(0);
	ck_assert_uint_eq(FX->conn->snd_max, end);	/* the window is full */
	peer_acks(1ull << 20, fl_n);
	ck_assert_uint_eq(sent_count(fl_seq[20]), 1);
	ck_assert_uint_eq(FX->conn->snd_max, end);
	/* the peer's window opens: new data goes in recovery */
	peer_edge = end + 20 * SMSS;
	blk[0] = fl_seq[21];
	blk[1] = end;
	ack_sack(fl_seq[20], blk, 1);
	ck_assert(SEQ_GT(FX->conn->snd_max, end + 2 * SMSS));
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_LOST], 0);
	/* the retransmission is lost; the new segments arrive, one by one */
	for (uint32_t s = end + SMSS; SEQ_LEQ(s, FX->conn->snd_max) &&
	     !FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_LOST]; s += SMSS) {
		blk[0] = fl_seq[21];
		blk[1] = s;
		ack_sack(fl_seq[20], blk, 1);
		/* not before three segments past the retransmission are in */
		if (s - end <= 2 * SMSS)
			ck_assert_uint_eq(sent_count(fl_seq[20]), 1);
	}
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_REXMIT_LOST], 1);
	ck_assert_uint_eq(sent_count(fl_seq[20]), 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RTO_EXPIRED], 0);
	ack_sack(FX->conn->snd_max, NULL, 0);
	ck_assert(!(FX->conn->flags & CF_SACK_RECOVERY));
}
END_TEST

START_TEST(test_reordering_is_not_loss)
{
	uint32_t cwnd;

	sack_setup(1);
	grow();
	cwnd = FX->conn->cwnd;
	peer_acks(1ull << 2, 5);		/* 3, 4 arrive before 2: two SACKs */
	ack_sack(fl_seq[5], NULL, 0);		/* then 2: everything to 4 */
	peer_acks(0, fl_n);
	for (unsigned i = 0; i < fl_n; i++)
		ck_assert_uint_eq(sent_count(fl_seq[i]), 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RETRANS_SEGS], 0);
	ck_assert_uint_ge(FX->conn->cwnd, cwnd);
	ck_assert_uint_ge(FX->st.ctr[FG_CTR_TCP_DUP_ACKS], 2);	/* they were seen */
}
END_TEST

START_TEST(test_bogus_blocks_ignored)
{
	sack_setup(1);
	grow();
	/* blocks past SND.MAX and below SND.UNA: counted, no recovery, no
	 * retransmission however many */
	for (unsigned i = 0; i < 5; i++) {
		uint32_t blk[4] = { flight_end() + 1000, flight_end() + 2000, fl_seq[0] - 5000,
				    fl_seq[0] + 10 };

		ack_sack(fl_seq[0], blk, 2);
	}
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 10);
	ck_assert_uint_eq(FX->conn->sb.n, 0);
	/* (RFC 5681's duplicates all the same: the third one recovers) */
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_RETRANS_SEGS], 0);
}
END_TEST

/* ---------------------------------------------------------------- lossy link */

/* `mib` MiB through a 1 % lossy link (RTT 1 ms, 10 Gbit/s), seeded: every
 * octet arrives in order, after the link dropped some. */
static void bulk_check(struct bulk_cfg *cfg, struct bulk_result *r, unsigned mib)
{
	cfg->bytes = (uint64_t)mib << 20;
	cfg->loss_ppm = 10000;
	cfg->delay_ns = 500000;
	cfg->rate_bps = 10000000000ull;
	ck_assert_int_eq(bulk_run(cfg, r), 0);
	ck_assert_uint_eq(r->received, cfg->bytes);
	ck_assert_uint_eq(r->mismatch, 0);
	ck_assert(r->eof);
	ck_assert_uint_gt(r->dropped, 0);	/* the link did drop */
	ck_assert_uint_ge(r->st[0].ctr[FG_CTR_TCP_RETRANS_SEGS], r->dropped);
	ck_assert_uint_gt(r->tx_bytes, cfg->bytes);
}

START_TEST(test_lossy_link_sack)
{
	struct bulk_cfg cfg = { .seed = 1, .v6 = _i };
	struct bulk_result r;

	bulk_check(&cfg, &r, 8);
	ck_assert_uint_gt(r.st[0].ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_gt(r.st[0].ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 0);
	ck_assert_uint_eq(r.st[0].ctr[FG_CTR_TCP_SACK_BLOCKS_BAD], 0);
	ck_assert_uint_gt(r.st[1].ctr[FG_CTR_TCP_RX_OOO], 0);
}
END_TEST

START_TEST(test_lossy_link_newreno)
{
	struct bulk_cfg cfg = { .seed = 2, .no_sack = true };
	struct bulk_result r;

	bulk_check(&cfg, &r, 4);
	ck_assert_uint_gt(r.st[0].ctr[FG_CTR_TCP_FAST_RETRANS], 0);
	ck_assert_uint_eq(r.st[0].ctr[FG_CTR_TCP_SACK_RECOVERIES], 0);
	ck_assert_uint_eq(r.st[0].ctr[FG_CTR_TCP_SACK_REXMIT_SEGS], 0);
}
END_TEST

static Suite *tcp_sack_suite(void)
{
	Suite *s = suite_create("tcp_sack");
	TCase *sb = tcase_create("scoreboard");
	TCase *rc = tcase_create("recovery");
	TCase *ll = tcase_create("lossy link");

	tcase_add_test(sb, test_sb_merge);
	tcase_add_test(sb, test_sb_bad_blocks);
	tcase_add_test(sb, test_sb_bounded);
	tcase_add_test(sb, test_sb_is_lost_and_pipe);
	tcase_add_test(sb, test_sb_next_seg_order);
	suite_add_tcase(s, sb);
	tcase_add_checked_fixture(rc, NULL, fx_teardown);
	tcase_add_test(rc, test_recovery_one_loss);
	tcase_add_test(rc, test_recovery_several_losses_one_window);
	tcase_add_test(rc, test_newreno_without_sack);
	tcase_add_test(rc, test_lost_retransmission_rto);
	tcase_add_test(rc, test_lost_retransmission_detected);
	tcase_add_test(rc, test_reordering_is_not_loss);
	tcase_add_test(rc, test_bogus_blocks_ignored);
	suite_add_tcase(s, rc);
	tcase_set_timeout(ll, 120);
	tcase_add_loop_test(ll, test_lossy_link_sack, 0, 2);
	tcase_add_test(ll, test_lossy_link_newreno);
	suite_add_tcase(s, ll);
	return s;
}

FG_TEST_MAIN(tcp_sack_suite)
