/* SPDX-License-Identifier: MIT */
/*
 * tcp_sack.c — the sender's half of SACK: the scoreboard and the loss
 * recovery of RFC 6675, for a connection whose peer agreed to SACK
 * (CF_SACK_OK). A peer without SACK gets NewReno (tcp_input.c, RFC 6582).
 *
 * Terms (RFC 6675 2): HighACK is SND.UNA, HighData SND.MAX, SMSS the
 * connection's MSS, DupThresh 3; HighRxt and RecoveryPoint live in the
 * scoreboard (struct tcp_sack_sb, tcp_int.h).
 *
 *   1. Update() (tcp_sack_update), on every ACK, after its cumulative part
 *      moved SND.UNA: ranges at or below SND.UNA are dropped or cut; each
 *      block of the ACK is checked (RFC 2018 3, RFC 2883): a block wholly
 *      at or below SND.UNA (and within a window of it) reports a
 *      duplicate (D-SACK): counted
 *      (tcp_sack_dsacks), harmless, ignored; an empty one, or one not
 *      within (SND.UNA, SND.MAX], is bogus: counted (tcp_sack_blocks_bad),
 *      ignored; the rest merge into the sorted, disjoint ranges. At most
 *      TCP_SACK_SB_BLOCKS ranges: beyond that the highest is forgotten
 *      (tcp_sack_sb_full) — less is then believed SACKed, so at worst
 *      more is sent again, never less.
 *   2. IsLost(seq) (tcp_sack_is_lost): the octets not SACKed below the
 *      highest range form holes, one below each range. An octet of a hole
 *      is lost when DupThresh ranges lie above it or more than
 *      (DupThresh - 1) * SMSS SACKed octets do. Every octet of one hole
 *      has the same ranges above it, so a hole is lost as a whole; the
 *      octets above the highest range are never lost.
 *   3. SetPipe() (tcp_sack_pipe): the octets in flight are those of
 *      [SND.UNA, SND.MAX) neither SACKed nor lost, plus those not SACKed
 *      below HighRxt (sent again, so in flight again).
 *   4. Entering recovery (RFC 6675 5): not in recovery, not after an RTO
 *      (step 7), data in flight, and the third duplicate ACK — an ACK
 *      that SACKs octets not SACKed before (RFC 6675 2), or, from a peer
 *      that sends no blocks, RFC 5681's duplicate — or IsLost(SND.UNA):
 *      RecoveryPoint = HighData; ssthresh = cwnd = max(FlightSize / 2,
 *      2 * SMSS); HighRxt = SND.UNA; the first segment from SND.UNA sent
 *      again; the RTO restarted; then (C) at the burst's end.
 *                                                   tcp_sack_recoveries
 *   5. In recovery, each ACK: Update(); cwnd stays; at the end of the
 *      burst tcp_output runs (C): while cwnd - pipe >= SMSS, NextSeg():
 *        rule 1: the first octet at or above HighRxt in a lost hole: up
 *                to SMSS of the hole (tcp_sack_rexmit, rule3 false);
 *        rule 2: new data within the peer's window (send_data, its room
 *                cwnd - pipe from tcp_sack_room);
 *        rule 3: nothing new to send: the first octet at or above HighRxt
 *                in any hole, lost or not (tcp_sack_rexmit, rule3 true);
 *        rule 4 (the rescue retransmission, a MAY) is not done: the RTO
 *                covers a lost last segment.
 *      Every retransmission moves HighRxt to its end.  tcp_sack_rexmit_segs
 *   6. Leaving recovery: the ACK that reaches RecoveryPoint; cwnd =
 *      ssthresh (RFC 5681 3.2, step 6's deflation).
 *   7. An RTO (RFC 6675 5.1, RFC 2018 8): the receiver may have reneged,
 *      so the scoreboard is cleared; RecoveryPoint = HighData; recovery,
 *      if any, ends, and none begins again until SND.UNA reaches
 *      RecoveryPoint (CF_SACK_RTO). Sending restarts at SND.UNA with cwnd
 *      one SMSS as without SACK (tcp_output.c), but from there the
 *      scoreboard rules what goes again: the ACKs after the RTO rebuild
 *      it (step 1), and the go-back-N steps over every range they report
 *      (tcp_sack_skip), so only holes are sent again.
 *   8. Limited Transmit (RFC 3042, as RFC 6675 5 asks before recovery):
 *      on the first and second duplicate ACK, one new segment each beyond
 *      cwnd (tcp_sack_room), so a small window still draws the third
 *      duplicate instead of waiting for the RTO.
 *   9. A lost retransmission (beyond RFC 6675, which leaves it to the
 *      RTO; Linux's lost-retransmit mark before RACK): in recovery, when
 *      SND.UNA's segment was sent again and more than (DupThresh - 1) *
 *      SMSS octets sent after that retransmission left (HighData then:
 *      una_mark, for a later first hole the mark of the latest
 *      retransmission, which is no earlier) have been SACKed, that
 *      retransmission is lost too: SND.UNA's segment goes once more,
 *      with the mark moved to HighData.          tcp_sack_rexmit_lost
 */
#include <string.h>

#include "floodgate/wire.h"
#include "tcp_int.h"

#define DUP_THRESH 3u		/* RFC 6675 2: DupThresh */

/* ---------------------------------------------------------------- the ranges */

static uint32_t sb_octets(const struct tcp_sack_sb *sb)
{
	uint32_t sum = 0;

	for (unsigned i = 0; i < sb->n; i++)
		sum += sb->blk[2 * i + 1] - sb->blk[2 * i];
	return sum;
}

/* Step 1: ranges at or below SND.UNA are acknowledged now. */
static void sb_drop_acked(struct tcp_sack_sb *sb, uint32_t una)
{
	unsigned k = 0;

	for (unsigned i = 0; i < sb->n; i++) {
		uint32_t s = sb->blk[2 * i], e = sb->blk[2 * i + 1];

		if (SEQ_LEQ(e, una))
			continue;
		sb->blk[2 * k] = SEQ_LT(s, una) ? una : s;
		sb->blk[2 * k + 1] = e;
		k++;
	}
	sb->n = (uint8_t)k;
}

/* Step 1: [s, e) merged into the sorted, disjoint ranges. */
static void sb_insert(struct fg_tcp_conn *c, uint32_t s, uint32_t e)
{
	struct tcp_sack_sb *sb = &c->sb;
	uint32_t *b = sb->blk;
	unsigned n = sb->n, i = 0, j;

	while (i < n && SEQ_LT(b[2 * i + 1], s))
		i++;
	for (j = i; j < n && SEQ_LEQ(b[2 * j], e); j++) {
		if (SEQ_LT(b[2 * j], s))
			s = b[2 * j];
		if (SEQ_GT(b[2 * j + 1], e))
			e = b[2 * j + 1];
	}
	if (j == i) {
		/* a range of its own at i */
		if (n == TCP_SACK_SB_BLOCKS) {
			fg_stats_inc(c->tcp->st, FG_CTR_TCP_SACK_SB_FULL);
			if (i == n)
				return;		/* it is the highest: forgotten */
			n--;			/* the highest is forgotten */
		}
		memmove(&b[2 * (i + 1)], &b[2 * i], (n - i) * 2 * sizeof(*b));
		n++;
	} else if (j > i + 1) {
		memmove(&b[2 * (i + 1)], &b[2 * j], (n - j) * 2 * sizeof(*b));
		n -= j - i - 1;
	}
	b[2 * i] = s;
	b[2 * i + 1] = e;
	sb->n = (uint8_t)n;
}

uint32_t tcp_sack_update(struct fg_tcp_conn *c, const uint32_t *blk, unsigned n)
{
	struct fg_tcp *t = c->tcp;
	uint32_t before;

	sb_drop_acked(&c->sb, c->snd_una);
	before = sb_octets(&c->sb);
	for (unsigned i = 0; i < n; i++) {
		uint32_t s = blk[2 * i], e = blk[2 * i + 1];

		if (SEQ_LT(s, e) && SEQ_LT(s, c->snd_una) && SEQ_LEQ(e, c->snd_una) &&
		    SEQ_GEQ(s, c->snd_una - FG_MAX(c->max_snd_wnd, 65535u))) {
			fg_stats_inc(t->st, FG_CTR_TCP_SACK_DSACKS);	/* RFC 2883 */
			continue;
		}
		if (!SEQ_LT(s, e) || !SEQ_GT(s, c->snd_una) || SEQ_GT(e, c->snd_max)) {
			fg_stats_inc(t->st, FG_CTR_TCP_SACK_BLOCKS_BAD);
			continue;
		}
		sb_insert(c, s, e);
	}
	return sb_octets(&c->sb) - before;
}

/* ---------------------------------------------------------------- holes */

/* Hole i: [hole_start, hole_end) below range i, or above them all (i == n). */
static uint32_t hole_start(const struct fg_tcp_conn *c, unsigned i)
{
	return i ? c->sb.blk[2 * i - 1] : c->snd_una;
}

static uint32_t hole_end(const struct fg_tcp_conn *c, unsigned i)
{
	return i < c->sb.n ? c->sb.blk[2 * i] : c->snd_max;
}

/* Step 2 for hole i, given the SACKed octets of ranges i..n-1. */
static bool hole_lost(const struct fg_tcp_conn *c, unsigned i, uint32_t above)
{
	return i < c->sb.n &&
	       (c->sb.n - i >= DUP_THRESH || above > (DUP_THRESH - 1) * c->mss);
}

bool tcp_sack_is_lost(const struct fg_tcp_conn *c, uint32_t seq)
{
	uint32_t above = sb_octets(&c->sb);

	for (unsigned i = 0; i < c->sb.n; i++) {
		if (SEQ_LT(seq, c->sb.blk[2 * i]))
			return SEQ_GEQ(seq, hole_start(c, i)) && hole_lost(c, i, above);
		above -= c->sb.blk[2 * i + 1] - c->sb.blk[2 * i];
	}
	return false;
}

uint32_t tcp_sack_pipe(const struct fg_tcp_conn *c)
{
	bool rxt = (c->flags & CF_SACK_RECOVERY) != 0;
	uint32_t pipe = 0, above = 0;

	for (int i = c->sb.n; i >= 0; i--) {
		uint32_t hs = hole_start(c, (unsigned)i), he = hole_end(c, (unsigned)i);

		if ((unsigned)i < c->sb.n)
			above += c->sb.blk[2 * i + 1] - c->sb.blk[2 * i];
		if (!SEQ_LT(hs, he))
			continue;
		if (!hole_lost(c, (unsigned)i, above))
			pipe += he - hs;
		if (rxt && SEQ_GT(c->sb.high_rxt, hs))
			pipe += (SEQ_LT(c->sb.high_rxt, he) ? c->sb.high_rxt : he) - hs;
	}
	return pipe;
}

int tcp_sack_next_seg(const struct fg_tcp_conn *c, bool rule3, uint32_t *seq, uint32_t *len)
{
	uint32_t above = sb_octets(&c->sb);
	uint32_t from = SEQ_GT(c->sb.high_rxt, c->snd_una) ? c->sb.high_rxt : c->snd_una;

	for (unsigned i = 0; i < c->sb.n; i++) {
		uint32_t hs = hole_start(c, i), he = hole_end(c, i);
		bool lost = hole_lost(c, i, above);

		above -= c->sb.blk[2 * i + 1] - c->sb.blk[2 * i];
		if (SEQ_GT(from, hs))
			hs = from;
		if (!SEQ_LT(hs, he) || !(lost || rule3))
			continue;
		*seq = hs;
		*len = FG_MIN(he - hs, c->mss);
		*len = FG_MIN(*len, c->sb_len - (hs - c->snd_una));
		return *len ? 0 : -1;
	}
	return -1;
}

/* ---------------------------------------------------------------- recovery */

/* A retransmission from `seq` of up to `len` octets, as much as one frame
 * carries of the send queue (tcp_seg_fit); Karn: not timed any more. */
static int rexmit(struct fg_tcp_conn *c, uint32_t seq, uint32_t len)
{
	struct fg_tcp *t = c->tcp;

	len = tcp_seg_fit(c, seq, len);
	if (!len || tcp_xmit(c, TH_ACK, seq, len) < 0)
		return -1;
	fg_stats_inc(t->st, FG_CTR_TCP_RETRANS_SEGS);
	fg_stats_inc(t->st, FG_CTR_TCP_SACK_REXMIT_SEGS);
	if ((c->flags & CF_RTT_TIMING) && SEQ_LEQ(seq, c->rtt_seq) && SEQ_LT(c->rtt_seq, seq + len))
		c->flags &= ~CF_RTT_TIMING;
	if (SEQ_GT(seq + len, c->sb.high_rxt))
		c->sb.high_rxt = seq + len;
	c->sb.rxt_mark = c->snd_max;
	return 0;
}

/* Step 9: SND.UNA's segment went again and then more than (DupThresh - 1)
 * SMSS sent after it were SACKed: that retransmission was lost too. */
static void lost_rexmit(struct fg_tcp_conn *c)
{
	struct tcp_sack_sb *sb = &c->sb;
	uint32_t above = 0, len;

	if (sb->una_seen != c->snd_una) {
		/* a new first hole: its retransmission left before the latest */
		sb->una_seen = c->snd_una;
		sb->una_mark = sb->rxt_mark;
	}
	if (!SEQ_LT(c->snd_una, sb->high_rxt) || !sb->n)
		return;
	for (unsigned i = 0; i < sb->n; i++)
		if (SEQ_GT(sb->blk[2 * i + 1], sb->una_mark))
			above += sb->blk[2 * i + 1] -
				 (SEQ_GT(sb->blk[2 * i], sb->una_mark) ? sb->blk[2 * i] : sb->una_mark);
	if (above <= (DUP_THRESH - 1) * c->mss)
		return;
	len = FG_MIN(FG_MIN(c->mss, c->sb_len), hole_end(c, 0) - c->snd_una);
	if (len && rexmit(c, c->snd_una, len) == 0) {
		fg_stats_inc(c->tcp->st, FG_CTR_TCP_SACK_REXMIT_LOST);
		sb->una_mark = c->snd_max;
	}
}

/* Step 4. */
static void enter_recovery(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint32_t flight = c->snd_max - c->snd_una;
	uint32_t len = FG_MIN(FG_MIN(c->mss, c->sb_len), hole_end(c, 0) - c->snd_una);

	fg_stats_inc(t->st, FG_CTR_TCP_SACK_RECOVERIES);
	fg_stats_inc(t->st, FG_CTR_TCP_FAST_RETRANS);
	c->sb.recovery_point = c->snd_max;
	c->ssthresh = c->cwnd = FG_MAX(flight / 2, 2 * c->mss);
	c->sb.high_rxt = c->snd_una;
	c->flags |= CF_SACK_RECOVERY;
	c->flags &= ~CF_RTT_TIMING;
	if (len)
		rexmit(c, c->snd_una, len);
	c->sb.una_seen = c->snd_una;
	c->sb.una_mark = c->snd_max;
	c->t_rexmt = t->now + c->rto;
}

void tcp_sack_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s, bool dup)
{
	struct fg_tcp *t = c->tcp;
	uint32_t blk[2 * TCP_MAX_SACK], newly;
	unsigned n = FG_MIN(s->n_sack_blk, (unsigned)TCP_MAX_SACK);

	for (unsigned i = 0; i < 2 * n; i++)
		blk[i] = fg_rd32(s->sack_blk + 4 * i);
	newly = tcp_sack_update(c, blk, n);
	if ((c->flags & CF_SACK_RTO) && SEQ_GEQ(c->snd_una, c->sb.recovery_point))
		c->flags &= ~CF_SACK_RTO;
	if (c->flags & CF_SACK_RECOVERY) {
		if (SEQ_GEQ(c->snd_una, c->sb.recovery_point)) {
			/* step 6 */
			c->flags &= ~CF_SACK_RECOVERY;
			c->cwnd = c->ssthresh;
			c->dupacks = 0;
		} else {
			lost_rexmit(c);
		}
		tcp_mark_pending(c);	/* (C) at the end of the burst */
		return;
	}
	if (newly || (dup && !n)) {
		fg_stats_inc(t->st, FG_CTR_TCP_DUP_ACKS);
		if (c->dupacks < UINT8_MAX)
			c->dupacks++;
		tcp_mark_pending(c);	/* step 8's segment, at the end of the burst */
	}
	if (c->snd_max == c->snd_una || (c->flags & CF_SACK_RTO) ||
	    (c->dupacks < DUP_THRESH && !tcp_sack_is_lost(c, c->snd_una)))
		return;
	enter_recovery(c);
	tcp_mark_pending(c);
}

bool tcp_sack_rexmit(struct fg_tcp_conn *c, bool rule3)
{
	uint32_t seq, len;
	bool sent = false;

	while (c->cwnd >= tcp_sack_pipe(c) + c->mss &&
	       tcp_sack_next_seg(c, rule3, &seq, &len) == 0 && rexmit(c, seq, len) == 0)
		sent = true;
	return sent;
}

uint32_t tcp_sack_room(const struct fg_tcp_conn *c, uint32_t inflight)
{
	uint32_t rwnd = c->snd_wnd > inflight ? c->snd_wnd - inflight : 0;
	uint32_t pipe, cw;

	if (!(c->flags & CF_SACK_RECOVERY)) {
		/* step 8: Limited Transmit, a segment more per duplicate */
		cw = c->cwnd + FG_MIN(c->dupacks, DUP_THRESH - 1) * c->mss;
		return FG_MIN(rwnd, cw > inflight ? cw - inflight : 0);
	}
	pipe = tcp_sack_pipe(c);
	cw = c->cwnd > pipe ? c->cwnd - pipe : 0;
	return FG_MIN(rwnd, cw);
}

void tcp_sack_rto(struct fg_tcp_conn *c)
{
	c->sb.n = 0;
	c->sb.recovery_point = c->snd_max;
	c->flags &= ~CF_SACK_RECOVERY;
	c->flags |= CF_SACK_RTO;
}

uint32_t tcp_sack_skip(struct fg_tcp_conn *c, uint32_t len)
{
	for (unsigned i = 0; i < c->sb.n; i++) {
		uint32_t s = c->sb.blk[2 * i], e = c->sb.blk[2 * i + 1];

		if (SEQ_LEQ(e, c->snd_nxt))
			continue;
		if (SEQ_LEQ(s, c->snd_nxt)) {
			/* the peer has it: step over, but not over the FIN
			 * (Linux SACKs it too), which goes again on its own */
			uint32_t data_end = c->snd_una + c->sb_len;

			c->snd_nxt = SEQ_GT(e, data_end) ? data_end : e;
			continue;
		}
		return FG_MIN(len, s - c->snd_nxt);
	}
	return len;
}
