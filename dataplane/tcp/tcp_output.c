/* SPDX-License-Identifier: MIT */
/*
 * tcp_output.c — building segments and the send path.
 *
 * Responses are copied into the connection's send ring by fg_tcp_send()
 * and go out in the end-of-burst pass, so everything the app wrote while a
 * burst was processed leaves in as few MSS-sized segments as the windows
 * allow.
 *
 * Sending by reference (fg_tcp_send_ref; the queue's layout is in
 * tcp_int.h). A segment is planned before it is built (plan_segment):
 *   1. its octets are walked from the piece holding its first one, ring
 *      runs and referenced pieces in stream order;
 *   2. copied octets (ring runs, and referenced ones when the port cannot
 *      chain) go into the header buffer, so they may only come before the
 *      first attached piece: a ring run after one ends the segment there;
 *   3. a referenced piece is attached (fg_net_tx_attach) while the frame
 *      has room for one more (the port's tx_max_segs), else the segment
 *      ends before it; with no chaining at all it is copied;
 *   4. with software checksums an attached piece's sum is derived from
 *      the one its buffer kept when it was received (piece_sum; net.h
 *      struct fg_buf_sum), else read where the piece lies;
 *   5. copied octets stay within one MSS (the header buffer holds one
 *      frame), so a TSO frame's bulk is attached pieces.
 * TSO: on a port that segments (fg_net_tso_max), a frame carries as many
 * whole MSS-sized segments as the windows and its buffers allow, marked
 * for the port with the segment size (emit, tcp_frame_max); sequence
 * accounting is as for one segment of that length.
 * The same plan serves new data, go-back-N after an RTO and the fast
 * retransmit, so a retransmission carries references too. Octets sent are
 * counted as copied (tcp_tx_copied_octets) or attached
 * (tcp_tx_referenced_octets); the two add up to tcp_tx_bytes.
 *
 * The usable window is min(peer's window, cwnd) (RFC 5681 2) minus
 * what is in flight; sender silly-window avoidance (RFC 9293 3.8.6.2.1)
 * holds back a short segment only while something is in flight. No Nagle:
 * pipelined NNTP answers must not wait for an ACK.
 *
 * Retransmission (RFC 6298): one timer per connection runs while data or a
 * FIN is unacknowledged; on expiry the RTO doubles (5.5), cwnd falls to one
 * segment and ssthresh to half the flight (RFC 5681 3.1, eq. 4), and
 * sending restarts at snd_una (go-back-N, as BSD does without SACK; with
 * SACK the ranges the peer reports from then on are stepped over,
 * tcp_sack.c step 7). RTT is sampled on one segment at a time, never on a
 * retransmission (Karn). Fast retransmit and recovery: NewReno in
 * tcp_input.c, or with SACK RFC 6675 in tcp_sack.c, whose rules 1 and 3
 * run around send_data here and whose pipe bounds its room.
 *
 * Persist (RFC 9293 3.8.6.1): when the peer's window is zero, data is
 * queued and nothing is in flight, a probe of one byte goes out at
 * backed-off intervals until the window opens.
 */
#include <string.h>
#include <sys/socket.h>

#include "floodgate/wire.h"
#include "tcp_int.h"

/* One part of a segment's payload: copied into the header buffer
 * (attach false) or attached as a piece of `handle`. */
struct seg_part {
	const uint8_t *data;
	void *handle;
	uint32_t len;
	bool attach;
};

#define TCP_TSO_IP_MAX 65535u	/* an IP packet's length field */
#define TCP_TSO_HDR_MAX 60u	/* an IPv4 or TCP header with options, at most */

struct seg_plan {
	unsigned n;
	uint32_t len, copied, attached;
	struct seg_part p[TCP_SEG_PARTS];
};

struct seg_out {
	const uint8_t *dmac;
	const struct tcp_tuple *k;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	uint16_t mss_opt;		/* 0 = no MSS option */
	int ws_opt;			/* -1 = no window-scale option */
	bool sack_ok;			/* SACK-permitted option (SYN-ACK) */
	unsigned n_sack;		/* SACK blocks (RFC 2018 3) */
	uint32_t sack[2 * TCP_MAX_SACK];
	const struct seg_plan *plan;	/* the payload, or NULL */
	uint32_t data_len;
	uint32_t mss;			/* with data over it: a TSO frame; 0: never */
};

uint32_t tcp_ring_space(const struct fg_tcp_conn *c)
{
	return c->tcp->cfg.sndbuf - c->sb_ring;
}

/* The first piece ending after `seq` (NULL: none), and *before the
 * referenced octets in [snd_una, its seq) (all of them for NULL). */
static struct tcp_sref *sref_find(struct fg_tcp_conn *c, uint32_t seq, uint32_t *before)
{
	struct tcp_sref *d = c->sr_head;
	uint32_t b = 0;

	if (c->sr_cur && SEQ_LEQ(c->sr_cur->seq, seq)) {
		d = c->sr_cur;
		b = c->sr_cur_before;
	}
	while (d && SEQ_LEQ(d->seq + d->len, seq)) {
		b += d->len;
		d = d->next;
	}
	if (d) {
		c->sr_cur = d;
		c->sr_cur_before = b;
	}
	*before = b;
	return d;
}

static bool plan_add(struct seg_plan *pl, const uint8_t *data, void *handle, uint32_t len,
		     bool attach)
{
	if (pl->n == TCP_SEG_PARTS)
		return false;
	pl->p[pl->n++] = (struct seg_part){ data, handle, len, attach };
	pl->len += len;
	if (attach)
		pl->attached++;
	else
		pl->copied += len;
	return true;
}

/* Octets of the ring from stream position `pos` (with `before`
 * referenced octets between snd_una and it): one part, two at the wrap. */
static bool plan_ring(struct fg_tcp_conn *c, struct seg_plan *pl, uint32_t pos,
		      uint32_t before, uint32_t k)
{
	uint32_t size = c->tcp->cfg.sndbuf;
	uint32_t at = (c->sb_head + (pos - c->snd_una) - before) % size;
	uint32_t first = FG_MIN(k, size - at);

	if (pl->n + (first < k ? 2 : 1) > TCP_SEG_PARTS)
		return false;
	plan_add(pl, c->sbuf + at, NULL, first, false);
	if (first < k)
		plan_add(pl, c->sbuf, NULL, k - first, false);
	return true;
}

/* The parts of up to `len` octets from `seq` (the steps at the head of
 * the file); pl->len is what one segment carries, at least 1 octet. */
static void plan_segment(struct fg_tcp_conn *c, uint32_t seq, uint32_t len,
			 struct seg_plan *pl)
{
	unsigned max_att = fg_net_tx_max_attach(c->tcp->net);
	uint32_t before, pos = seq, end = seq + len;
	struct tcp_sref *d = c->sr_head ? sref_find(c, seq, &before) : NULL;

	pl->n = 0;
	pl->len = pl->copied = pl->attached = 0;
	if (!d && !c->sr_head) {
		plan_ring(c, pl, seq, 0, FG_MIN(len, c->mss));
		return;
	}
	if (!d)
		before = c->sr_bytes;
	while (pos != end) {
		/* copied octets stay within one MSS: the header buffer holds
		 * one frame of the MTU (a TSO frame's rest is attached) */
		uint32_t room = c->mss - pl->copied;

		if (!d || SEQ_LT(pos, d->seq)) {
			uint32_t k = d ? FG_MIN(d->seq - pos, end - pos) : end - pos;

			k = FG_MIN(k, room);
			if (!k || pl->attached || !plan_ring(c, pl, pos, before, k))
				break;
			pos += k;
			continue;
		}
		uint32_t off = pos - d->seq, k = FG_MIN(d->len - off, end - pos);
		bool ok;

		if (max_att)
			ok = pl->attached < max_att && plan_add(pl, d->data + off, d->handle, k, true);
		else
			ok = (k = FG_MIN(k, room)) != 0 && plan_add(pl, d->data + off, NULL, k, false);
		if (!ok)
			break;
		pos += k;
		if (pos == d->seq + d->len) {
			before += d->len;
			d = d->next;
		}
	}
}

uint32_t tcp_seg_fit(struct fg_tcp_conn *c, uint32_t seq, uint32_t len)
{
	struct seg_plan pl;

	if (!len)
		return 0;
	plan_segment(c, seq, len, &pl);
	return pl.len;
}

void tcp_sendq_acked(struct fg_tcp_conn *c, uint32_t n)
{
	struct fg_tcp *t = c->tcp;
	uint32_t una = c->snd_una + n, refs = 0;
	struct tcp_sref *d;

	while ((d = c->sr_head) && SEQ_LT(d->seq, una)) {
		uint32_t k = FG_MIN(d->len, una - d->seq);

		refs += k;
		if (k < d->len) {
			d->data += k;
			d->seq += k;
			d->len -= k;
			break;
		}
		c->sr_head = d->next;
		if (!c->sr_head)
			c->sr_tail = NULL;
		if (c->sr_cur == d)
			c->sr_cur = NULL;
		fg_net_buf_unref(t->net, d->handle);
		d->next = t->free_srefs;
		t->free_srefs = d;
		t->n_srefs_used--;
	}
	if (c->sr_cur == c->sr_head)
		c->sr_cur = NULL;
	else if (c->sr_cur)
		c->sr_cur_before -= refs;
	c->sr_bytes -= refs;
	c->sb_head = (c->sb_head + (n - refs)) % t->cfg.sndbuf;
	c->sb_ring -= n - refs;
	c->sb_len -= n;
}

void tcp_sendq_flush(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	while (c->sr_head) {
		struct tcp_sref *d = c->sr_head;

		c->sr_head = d->next;
		fg_net_buf_unref(t->net, d->handle);
		d->next = t->free_srefs;
		t->free_srefs = d;
		t->n_srefs_used--;
	}
	c->sr_tail = c->sr_cur = NULL;
	c->sr_bytes = c->sr_cur_before = 0;
	c->sb_len = c->sb_ring = 0;
}

/* The sum of an attached piece, as fg_csum_add(0, data, len) gives it:
 * derived from the sum kept with its buffer when one covers it and the
 * octets outside the piece are fewer than its own (net.h struct
 * fg_buf_sum), else read. */
static uint32_t piece_sum(struct fg_tcp *t, const struct seg_part *p)
{
	struct fg_buf_sum *bs = fg_net_buf_sum(t->net, p->handle);
	const uint8_t *end = p->data + p->len;
	uint32_t ps, at;

	if (!bs || !bs->start || p->data < bs->start || end > bs->start + bs->len) {
		fg_stats_add(t->st, FG_CTR_TCP_TX_CSUM_READ_OCTETS, p->len);
		return fg_csum_add(0, p->data, p->len);
	}
	at = (uint32_t)(p->data - bs->start);
	/* one side of a cut learnt before: nothing to read */
	if (bs->cut && p->data == bs->start && end == bs->cut) {
		fg_stats_add(t->st, FG_CTR_TCP_TX_CSUM_REUSED_OCTETS, p->len);
		return bs->cut_sum;
	}
	if (bs->cut && p->data == bs->cut && end == bs->start + bs->len) {
		fg_stats_add(t->st, FG_CTR_TCP_TX_CSUM_REUSED_OCTETS, p->len);
		ps = fg_csum_sub(bs->sum, bs->cut_sum);
		return (at & 1) ? fg_csum_swap(ps) : ps;
	}
	if (bs->len - p->len < p->len) {
		fg_stats_add(t->st, FG_CTR_TCP_TX_CSUM_REUSED_OCTETS, p->len);
		ps = fg_csum_derive(bs->start, bs->len, bs->sum, p->data, p->len);
	} else {
		fg_stats_add(t->st, FG_CTR_TCP_TX_CSUM_READ_OCTETS, p->len);
		ps = fg_csum_add(0, p->data, p->len);
	}
	/* a piece from either end cuts the payload in two: learn the cut */
	if (p->data == bs->start && p->len < bs->len) {
		bs->cut = end;
		bs->cut_sum = ps;
	} else if (end == bs->start + bs->len && at) {
		bs->cut = p->data;
		bs->cut_sum = fg_csum_sub(bs->sum, (at & 1) ? fg_csum_swap(ps) : ps);
	}
	return ps;
}

/* The TCP checksum of the frame whose header (and copied octets) lie at
 * `th` for `at` octets, `sum` the pseudo-header's: attached pieces summed
 * by piece_sum, each swapped when it starts at an odd offset of the
 * segment (RFC 1071 2(B)). */
static uint16_t segment_csum(struct fg_tcp *t, const struct seg_plan *pl, const uint8_t *th,
			     uint32_t at, uint32_t sum)
{
	const struct fg_buf_sum *bs;

	/* the pieces to be read are usually cold (an article received a
	 * while ago): ask for all their lines at once, so that the sum waits
	 * on memory once rather than line by line */
	for (unsigned i = 0; pl && i < pl->n; i++) {
		const struct seg_part *p = &pl->p[i];

		if (!p->attach || ((bs = fg_net_buf_sum(t->net, p->handle)) && bs->start))
			continue;
		for (uint32_t b = 0; b < p->len; b += FG_CACHE_LINE)
			__builtin_prefetch(p->data + b);
	}
	sum = fg_csum_add(sum, th, at);
	for (unsigned i = 0; pl && i < pl->n; i++) {
		const struct seg_part *p = &pl->p[i];
		uint32_t ps;

		if (!p->attach)
			continue;
		ps = piece_sum(t, p);
		sum = fg_csum_combine(sum, (at & 1) ? fg_csum_swap(ps) : ps);
		at += p->len;
	}
	return fg_csum_fold(sum);
}

/* The plan's copied parts into the frame at `dst`, its attached pieces
 * onto the frame `h`: 0, or -1 when the port had no buffer to attach. */
static int build_payload(struct fg_tcp *t, const struct seg_plan *pl, uint8_t *dst, void *h)
{
	for (unsigned i = 0; i < pl->n; i++) {
		const struct seg_part *p = &pl->p[i];

		if (!p->attach) {
			memcpy(dst, p->data, p->len);
			dst += p->len;
		} else if (fg_net_tx_attach(t->net, h, p->handle, p->data, p->len) < 0) {
			return -1;
		}
	}
	return 0;
}

static int emit(struct fg_tcp *t, const struct seg_out *o)
{
	uint32_t optlen = (o->mss_opt ? 4 : 0) + (o->ws_opt >= 0 ? 4 : 0) + (o->sack_ok ? 4 : 0) +
			  (o->n_sack ? 4 + 8 * o->n_sack : 0);
	uint32_t hlen = FG_TCP_HLEN + optlen, l4 = hlen + o->data_len;
	uint32_t flen = FG_ETH_HLEN + tcp_l3_hlen(o->k) + l4;
	uint32_t copied = o->plan ? o->plan->copied : 0;
	/* TSO: the port cuts the payload into segments of the MSS less the
	 * options, and fills every checksum (DPDK's rules: the IPv4 header's
	 * 0, the TCP one the pseudo-header's without the length) */
	uint16_t segsz = (uint16_t)(o->mss - optlen);
	bool tso = o->data_len > segsz && o->mss && !o->k->v6;
	bool offload = tso || fg_net_tx_offload(t->net);
	uint32_t sum, txf = offload ? FG_TX_CSUM_OFFLOAD : 0;
	uint8_t *f, *th, *opt;
	void *h;

	if (t->passive)
		return 0;	/* observe only: the segment is not needed */
	f = fg_net_tx_alloc(t->net, flen - o->data_len + copied, &h);
	if (!f) {
		fg_stats_inc(t->st, FG_CTR_TCP_TX_NOBUF);
		return -1;
	}
	if (o->k->v6) {
		fg_net_build_ipv6(f, o->dmac, fg_net_mac(t->net), o->k->laddr, o->k->raddr,
				  FG_IP_PROTO_TCP, l4, 64);
		sum = fg_ipv6_pseudo_sum(o->k->laddr, o->k->raddr, FG_IP_PROTO_TCP, tso ? 0 : l4);
		txf |= offload ? FG_TX_IPV6 : 0;
	} else {
		fg_net_build_ipv4(f, o->dmac, fg_net_mac(t->net), fg_rdaddr(o->k->laddr),
				  fg_rdaddr(o->k->raddr), FG_IP_PROTO_TCP, l4, t->ip_id++, offload);
		sum = fg_ipv4_pseudo_sum(fg_rdaddr(o->k->laddr), fg_rdaddr(o->k->raddr),
					 FG_IP_PROTO_TCP, tso ? 0 : l4);
	}
	th = f + FG_ETH_HLEN + tcp_l3_hlen(o->k);
	fg_wr16(th, o->k->lport);
	fg_wr16(th + 2, o->k->rport);
	fg_wr32(th + 4, o->seq);
	fg_wr32(th + 8, (o->flags & TH_ACK) ? o->ack : 0);
	th[12] = (uint8_t)((hlen / 4) << 4);
	th[13] = o->flags;
	fg_wr16(th + 14, o->wnd);
	fg_wr16(th + 16, 0);
	fg_wr16(th + 18, 0);
	opt = th + FG_TCP_HLEN;
	if (o->mss_opt) {
		/* RFC 9293 3.2: kind 2, length 4 */
		opt[0] = 2;
		opt[1] = 4;
		fg_wr16(opt + 2, o->mss_opt);
		opt += 4;
	}
	if (o->ws_opt >= 0) {
		/* RFC 7323 2.2: NOP, kind 3, length 3, shift */
		opt[0] = 1;
		opt[1] = 3;
		opt[2] = 3;
		opt[3] = (uint8_t)o->ws_opt;
		opt += 4;
	}
	if (o->sack_ok) {
		/* RFC 2018 2: NOP, NOP, kind 4, length 2 */
		opt[0] = 1;
		opt[1] = 1;
		opt[2] = 4;
		opt[3] = 2;
		opt += 4;
	}
	if (o->n_sack) {
		/* RFC 2018 3: NOP, NOP, kind 5, length 2 + 8n, left/right edges */
		opt[0] = 1;
		opt[1] = 1;
		opt[2] = 5;
		opt[3] = (uint8_t)(2 + 8 * o->n_sack);
		for (unsigned i = 0; i < 2 * o->n_sack; i++)
			fg_wr32(opt + 4 + 4 * i, o->sack[i]);
	}
	if (o->plan && build_payload(t, o->plan, th + hlen, h) < 0) {
		fg_net_tx_discard(t->net, h);
		fg_stats_inc(t->st, FG_CTR_TCP_TX_NOBUF);
		return -1;
	}
	if (offload)
		fg_wr16(th + 16, (uint16_t)~fg_csum_fold(sum));
	else
		fg_wr16(th + 16, segment_csum(t, o->plan, th, hlen + copied, sum));
	if (o->plan && o->plan->attached)
		txf |= FG_TX_CHAINED;
	fg_stats_inc(t->st, FG_CTR_TCP_TX_SEGS);
	if (o->flags & TH_RST)
		fg_stats_inc(t->st, FG_CTR_TCP_TX_RST);
	if (o->data_len) {
		fg_stats_inc(t->st, FG_CTR_TCP_TX_DATA_SEGS);
		fg_stats_add(t->st, FG_CTR_TCP_TX_BYTES, o->data_len);
		fg_stats_add(t->st, FG_CTR_TCP_TX_COPIED_OCTETS, copied);
		fg_stats_add(t->st, FG_CTR_TCP_TX_REFERENCED_OCTETS, o->data_len - copied);
	}
	if (o->wnd == 0 && !(o->flags & TH_RST))
		fg_stats_inc(t->st, FG_CTR_TCP_TX_ZERO_WINDOW);
	if (tso) {
		fg_stats_inc(t->st, FG_CTR_TCP_TX_TSO_FRAMES);
		fg_stats_add(t->st, FG_CTR_TCP_TX_TSO_SEGS, (o->data_len + segsz - 1) / segsz);
		fg_net_tx_queue_tso(t->net, f, flen, h, txf, segsz);
		return 0;
	}
	fg_net_tx_queue(t->net, f, flen, h, txf, true);
	return 0;
}

uint32_t tcp_window_edge(const struct fg_tcp_conn *c)
{
	uint32_t used = tcp_rx_used(c), buf = c->tcp->cfg.rcvbuf;

	return c->rcv_nxt + (used >= buf ? 0 : buf - used);
}

uint16_t tcp_window_to_advertise(struct fg_tcp_conn *c, bool syn)
{
	struct fg_tcp *t = c->tcp;
	uint32_t edge = tcp_window_edge(c), wnd, field;
	uint32_t sws = FG_MIN(t->cfg.rcvbuf / 2, t->mss_local);
	unsigned ws = (!syn && (c->flags & CF_WS_OK)) ? c->rcv_wscale : 0;

	/* RFC 9293 3.8.6: never retract the right edge; receiver SWS
	 * avoidance (3.8.6.2.2): advance it only by a worthwhile amount */
	if (SEQ_LT(edge, c->rcv_adv) || (SEQ_GT(c->rcv_adv, c->rcv_nxt) &&
					  edge - c->rcv_adv < sws))
		edge = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv : c->rcv_nxt;
	if (edge - c->rcv_nxt < sws && !syn)
		edge = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv : c->rcv_nxt;
	wnd = edge - c->rcv_nxt;
	field = (wnd + (1u << ws) - 1) >> ws;
	if (field > 65535)
		field = 65535;
	if (SEQ_GT(c->rcv_nxt + (field << ws), c->rcv_adv))
		c->rcv_adv = c->rcv_nxt + (field << ws);
	return (uint16_t)field;
}

/*
 * SACK blocks from the out-of-order list (RFC 2018 4): adjacent entries
 * merge into one block; the block holding the latest arrival goes first,
 * then the others in order, at most TCP_MAX_SACK.
 */
static unsigned sack_blocks(const struct fg_tcp_conn *c, uint32_t *out)
{
	uint32_t blk[2 * FG_TCP_SACK_SCAN];
	unsigned n = 0, first = 0, k = 0;

	for (const struct tcp_seg *g = c->ooo; g; g = g->next) {
		if (n && blk[2 * n - 1] == g->seq) {
			blk[2 * n - 1] = g->seq + g->len;
		} else if (n < FG_TCP_SACK_SCAN) {
			blk[2 * n] = g->seq;
			blk[2 * n + 1] = g->seq + g->len;
			n++;
		} else {
			break;
		}
		if (g->seq == c->last_ooo_seq)
			first = n - 1;
	}
	if (!n)
		return 0;
	out[k++] = blk[2 * first];
	out[k++] = blk[2 * first + 1];
	for (unsigned i = 0; i < n && k < 2 * TCP_MAX_SACK; i++) {
		if (i == first)
			continue;
		out[k++] = blk[2 * i];
		out[k++] = blk[2 * i + 1];
	}
	return k / 2;
}

/* A segment of `len` queued octets (at seq) with `flags`; `len` is one
 * tcp_seg_fit() allows. */
static int xmit(struct fg_tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len)
{
	struct seg_plan pl;
	struct seg_out o = {
		.dmac = c->rmac, .k = &c->k, .seq = seq, .ack = c->rcv_nxt,
		.flags = flags, .ws_opt = -1, .data_len = len,
		.mss = fg_net_tso_max(c->tcp->net) ? c->mss : 0,
	};
	int rc;

	if (len) {
		plan_segment(c, seq, len, &pl);
		FG_ASSERT(pl.len == len);
		o.plan = &pl;
	}

	if (!(flags & TH_RST))
		o.wnd = tcp_window_to_advertise(c, false);
	if ((c->flags & CF_SACK_OK) && c->ooo && (flags & TH_ACK) && !(flags & TH_RST))
		o.n_sack = sack_blocks(c, o.sack);
	/* RFC 6691 / RFC 9293 3.7.1: data plus options stay within the MSS,
	 * or the frame outgrows the MTU (a NIC drops it); a full segment
	 * carries fewer SACK blocks, the pure ACKs carry them all */
	while (o.n_sack && len + 4 + 8 * o.n_sack > c->mss)
		o.n_sack--;
	rc = emit(c->tcp, &o);
	if (rc == 0 && (flags & TH_ACK)) {
		c->last_ack_sent = c->rcv_nxt;
		c->rx_unacked = 0;
		c->flags &= ~(CF_ACK_NOW | CF_DACK);
		c->t_dack = 0;
	}
	return rc;
}

int tcp_xmit(struct fg_tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len)
{
	return xmit(c, flags, seq, len);
}

int tcp_send_ctl(struct fg_tcp_conn *c, uint8_t flags, uint32_t seq)
{
	return xmit(c, flags, seq, 0);
}

void tcp_send_ack_now(struct fg_tcp_conn *c)
{
	if (xmit(c, TH_ACK, c->snd_nxt, 0) == 0)
		fg_stats_inc(c->tcp->st, FG_CTR_TCP_TX_ACKS);
}

void tcp_send_synack(struct fg_tcp_conn *c)
{
	struct seg_out o = {
		.dmac = c->rmac, .k = &c->k, .seq = c->iss, .ack = c->rcv_nxt,
		.flags = TH_SYN | TH_ACK, .mss_opt = (uint16_t)tcp_mss_local(c->tcp, &c->k),
		.ws_opt = (c->flags & CF_WS_OK) ? c->rcv_wscale : -1,
		.sack_ok = (c->flags & CF_SACK_OK) != 0,
	};

	/* RFC 7323 2.2: the window of a SYN is never scaled */
	o.wnd = tcp_window_to_advertise(c, true);
	emit(c->tcp, &o);
}

void tcp_send_syn(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	struct seg_out o = {
		.dmac = c->rmac, .k = &c->k, .seq = c->iss, .flags = TH_SYN,
		.mss_opt = (uint16_t)tcp_mss_local(t, &c->k), .ws_opt = t->rcv_wscale,
		.sack_ok = !t->cfg.no_sack,
		/* RFC 7323 2.2: unscaled; no RCV.NXT yet to count from */
		.wnd = (uint16_t)FG_MIN(t->cfg.rcvbuf, 65535u),
	};

	emit(t, &o);
}

void tcp_reply_rst(struct fg_tcp *t, const struct fg_rx_frame *f, const struct tcp_tuple *k,
		   uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct seg_out o = {
		.dmac = f->data + 6, .k = k, .seq = seq, .ack = ack, .flags = flags, .ws_opt = -1,
	};

	emit(t, &o);
}

void tcp_send_cookie_synack(struct fg_tcp *t, const struct fg_rx_frame *f,
			    const struct tcp_tuple *k, uint32_t iss, uint32_t ack, uint32_t mss,
			    int peer_ws, bool sack)
{
	struct seg_out o = {
		.dmac = f->data + 6, .k = k, .seq = iss, .ack = ack, .flags = TH_SYN | TH_ACK,
		.wnd = (uint16_t)FG_MIN(t->cfg.rcvbuf, 65535u),
		.mss_opt = (uint16_t)FG_MIN(mss, tcp_mss_local(t, k)),
		.ws_opt = peer_ws >= 0 ? t->rcv_wscale : -1, .sack_ok = sack,
	};

	emit(t, &o);
}

/* ---------------------------------------------------------------- RTO */

static uint64_t rto_backed_off(const struct fg_tcp_conn *c)
{
	uint64_t r = c->rto << FG_MIN(c->backoff, 16);

	return FG_MIN(r, c->tcp->cfg.rto_max_ns);
}

void tcp_rtt_sample(struct fg_tcp_conn *c, uint64_t r)
{
	const struct fg_tcp_config *cfg = &c->tcp->cfg;
	uint64_t var;

	fg_stats_inc(c->tcp->st, FG_CTR_TCP_RTT_SAMPLES);
	if (!c->srtt) {
		/* RFC 6298 2.2 */
		c->srtt = r ? r : 1;
		c->rttvar = r / 2;
	} else {
		/* RFC 6298 2.3: beta = 1/4, alpha = 1/8 */
		uint64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	var = FG_MAX(cfg->timer_tick_ns, 4 * c->rttvar);
	c->rto = c->srtt + var;
	/* RFC 6298 2.4/2.5: bounded below and above */
	c->rto = FG_MAX(c->rto, cfg->rto_min_ns);
	c->rto = FG_MIN(c->rto, cfg->rto_max_ns);
}

void tcp_rexmt_timeout(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint32_t flight;

	if (c->state == FG_TCP_SYN_SENT) {
		tcp_syn_sent_timeout(c);
		return;
	}
	if (c->state == FG_TCP_SYN_RCVD) {
		if (++c->retries > t->cfg.synack_retries) {
			fg_stats_inc(t->st, FG_CTR_TCP_SYN_RCVD_TIMEOUT);
			tcp_conn_drop(c, FG_TCP_CLOSE_TIMEOUT, false);
			return;
		}
		c->backoff++;
		fg_stats_inc(t->st, FG_CTR_TCP_SYNACK_RETRANS);
		tcp_send_synack(c);
		c->t_rexmt = t->now + rto_backed_off(c);
		tcp_timer_update(c);
		return;
	}
	if (c->snd_max == c->snd_una)
		return;	/* everything was acknowledged meanwhile */
	if (++c->retries > t->cfg.max_retries) {
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_nxt);
		tcp_conn_drop(c, FG_TCP_CLOSE_TIMEOUT, true);
		return;
	}
	fg_stats_inc(t->st, FG_CTR_TCP_RTO_EXPIRED);
	if (c->flags & CF_SACK_OK)
		tcp_sack_rto(c);	/* RFC 6675 5.1: the scoreboard rules from here */
	flight = c->snd_max - c->snd_una;
	c->ssthresh = FG_MAX(flight / 2, 2 * c->mss);
	c->cwnd = c->mss;
	c->backoff++;
	c->snd_nxt = c->snd_una;
	c->dupacks = 0;
	c->flags &= ~(CF_RECOVERY | CF_RTT_TIMING);
	tcp_output(c);
}

/*
 * Packet Too Big for a segment we sent (net checked MTU >= 1280 and that
 * the quote came from one of our addresses). Believed only when the
 * quoted 4-tuple is a live connection's and the quoted sequence number is
 * one we sent and the peer has not acknowledged (RFC 5927 4.1: a blind
 * attacker must guess the window); then the MSS falls to fit the MTU and
 * what is in flight goes again at the new size (as Linux's simple
 * retransmit: a lost segment, not congestion, so cwnd stays).
 */
void tcp_icmp_error(void *ctx, const struct fg_net_icmp_err *e, uint64_t now_ns)
{
	struct fg_tcp *t = ctx;
	struct tcp_tuple k = { .v6 = e->family == AF_INET6 };
	struct fg_tcp_conn *c;
	uint32_t seq, mss;

	t->now = now_ns;
	memcpy(k.laddr, e->src, k.v6 ? FG_IP6_ALEN : 4);
	memcpy(k.raddr, e->dst, k.v6 ? FG_IP6_ALEN : 4);
	k.lport = fg_rd16(e->l4);
	k.rport = fg_rd16(e->l4 + 2);
	seq = fg_rd32(e->l4 + 4);
	c = tcp_lookup(t, &k);
	if (!c || !tcp_state_live(c) || SEQ_LT(seq, c->snd_una) || !SEQ_LT(seq, c->snd_max)) {
		fg_stats_inc(t->st, FG_CTR_TCP_PMTU_IGNORED);
		return;
	}
	mss = e->mtu - tcp_l3_hlen(&k) - FG_TCP_HLEN;
	if (mss >= c->mss)
		return;
	fg_stats_inc(t->st, FG_CTR_TCP_PMTU_LOWERED);
	c->mss = mss;
	c->snd_nxt = c->snd_una;
	c->flags &= ~CF_RTT_TIMING;
	tcp_output(c);
	tcp_timer_update(c);
}

void tcp_persist_timeout(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	if (c->snd_wnd != 0 || c->sb_len == 0 || c->snd_nxt != c->snd_una) {
		c->flags &= ~CF_PERSIST;
		tcp_output(c);
		return;
	}
	/* RFC 9293 3.8.6.1: probe with one byte of new data */
	fg_stats_inc(t->st, FG_CTR_TCP_PERSIST_PROBES);
	if (xmit(c, TH_ACK, c->snd_una, 1) == 0 && SEQ_LT(c->snd_max, c->snd_una + 1))
		c->snd_max = c->snd_una + 1;
	if (c->backoff < 8)
		c->backoff++;
	c->t_rexmt = t->now + FG_MAX(rto_backed_off(c), t->cfg.rto_min_ns);
	tcp_timer_update(c);
}

/* ---------------------------------------------------------------- output */

static bool fin_wanted(const struct fg_tcp_conn *c)
{
	return c->state == FG_TCP_FIN_WAIT_1 || c->state == FG_TCP_CLOSING ||
	       c->state == FG_TCP_LAST_ACK;
}

static void window_update_check(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint32_t edge = tcp_window_edge(c);
	uint32_t thresh = FG_MIN(t->cfg.rcvbuf / 2, 2 * t->mss_local);

	if (c->flags & (CF_FIN_RCVD | CF_ACK_NOW))
		return;
	/* RFC 9293 3.8.6.2.2: tell the peer once the window has opened by
	 * a worthwhile amount (the app released bytes it held) */
	if (SEQ_GT(edge, c->rcv_adv) && edge - c->rcv_adv >= thresh) {
		/* urgent only while the peer may be stalled on a small window;
		 * otherwise it rides on the next (possibly delayed) ACK */
		if (c->rcv_adv - c->rcv_nxt < 4 * t->mss_local) {
			c->flags |= CF_ACK_NOW;
			fg_stats_inc(t->st, FG_CTR_TCP_TX_WINDOW_UPDATES);
		} else {
			c->flags |= CF_DACK;
		}
	}
}

/* Payload octets one frame may carry: one MSS, or with TSO as many whole
 * MSS-sized segments as the port takes in a frame, the IP packet within
 * its 16-bit length (headers and options of at most 60 octets each).
 * IPv4 only: DPDK 22.11's GSO, which net_tap's TSO is, cuts no TCP over
 * IPv6 (it would send the frame whole, over the MTU). */
static uint32_t tcp_frame_max(const struct fg_tcp_conn *c)
{
	uint32_t tso = c->k.v6 ? 0 : FG_MIN(fg_net_tso_max(c->tcp->net),
					     TCP_TSO_IP_MAX - 2 * TCP_TSO_HDR_MAX);

	return tso > c->mss ? tso / c->mss * c->mss : c->mss;
}

static bool send_data(struct fg_tcp_conn *c)
{
	bool sent = false;

	for (;;) {
		/* after an RTO, what the peer SACKed since is not sent again */
		uint32_t hole = c->sb.n && SEQ_LT(c->snd_nxt, c->snd_max) ?
				tcp_sack_skip(c, UINT32_MAX) : UINT32_MAX;
		uint32_t off = c->snd_nxt - c->snd_una, wnd, inflight, usable, len;
		uint8_t flags = TH_ACK;

		if (off >= c->sb_len)
			break;
		wnd = FG_MIN(c->snd_wnd, c->cwnd);
		inflight = c->snd_nxt - c->snd_una;
		usable = wnd > inflight ? wnd - inflight : 0;
		if ((c->flags & CF_SACK_RECOVERY) || ((c->flags & CF_SACK_OK) && c->dupacks))
			usable = tcp_sack_room(c, inflight);	/* RFC 6675 5 (C), RFC 3042 */
		/* TSO frames outside loss recovery only: in it, a segment at a time */
		len = FG_MIN(c->sb_len - off,
			     FG_MIN((c->flags & CF_SACK_RECOVERY) || c->dupacks ? c->mss
										 : tcp_frame_max(c),
				    usable));
		len = FG_MIN(len, hole);
		if (!len)
			break;
		/* sender SWS avoidance, only while something is in flight */
		if (len < c->mss && len < c->sb_len - off && len < hole && inflight &&
		    len < c->max_snd_wnd / 2)
			break;
		/* then what one frame can carry of the queue as it is made */
		len = tcp_seg_fit(c, c->snd_nxt, len);
		if (off + len == c->sb_len) {
			flags |= TH_PSH;
			if (fin_wanted(c))
				flags |= TH_FIN;
		}
		if (xmit(c, flags, c->snd_nxt, len) < 0)
			break;
		if (SEQ_LT(c->snd_nxt, c->snd_max))
			fg_stats_inc(c->tcp->st, FG_CTR_TCP_RETRANS_SEGS);
		else if (!(c->flags & CF_RTT_TIMING)) {
			c->flags |= CF_RTT_TIMING;
			c->rtt_seq = c->snd_nxt;
			c->rtt_start = c->tcp->now;
		}
		c->snd_nxt += len + ((flags & TH_FIN) ? 1 : 0);
		if (flags & TH_FIN)
			c->flags |= CF_FIN_SENT;
		if (SEQ_GT(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		sent = true;
	}
	return sent;
}

static void arm_timers(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	if (c->snd_max != c->snd_una && !c->t_rexmt) {
		c->flags &= ~CF_PERSIST;
		c->t_rexmt = t->now + rto_backed_off(c);
	} else if (c->snd_wnd == 0 && c->sb_len && c->snd_nxt == c->snd_una &&
		   c->snd_max == c->snd_una && !c->t_rexmt) {
		c->flags |= CF_PERSIST;
		c->t_rexmt = t->now + FG_MAX(rto_backed_off(c), t->cfg.rto_min_ns);
	}
	if ((c->flags & CF_DACK) && !c->t_dack)
		c->t_dack = t->now + t->cfg.delack_ns;
	tcp_timer_update(c);
}

void tcp_output(struct fg_tcp_conn *c)
{
	bool sent;

	if (!tcp_state_live(c)) {
		if (c->state == FG_TCP_TIME_WAIT && (c->flags & CF_ACK_NOW))
			tcp_send_ack_now(c);
		return;
	}
	if ((c->flags & (CF_WANT_WRITE | CF_WANT_REF)) && (c->flags & CF_APP) &&
	    (!(c->flags & CF_WANT_WRITE) || tcp_ring_space(c) >= c->want_space) &&
	    (!(c->flags & CF_WANT_REF) || (fg_tcp_ref_space(c) >= c->want_ref &&
					   c->tcp->cfg.sndref_pieces - c->tcp->n_srefs_used >=
						   c->want_pieces))) {
		c->flags &= ~(CF_WANT_WRITE | CF_WANT_REF);
		if (c->tcp->ops->on_writable)
			c->tcp->ops->on_writable(c->ctx, c);
		if (c->flags & CF_FREEING)
			return;
	}
	window_update_check(c);
	/* SACK recovery (tcp_sack.c): NextSeg's rules 1, 2 and 3 in turn */
	sent = (c->flags & CF_SACK_RECOVERY) && tcp_sack_rexmit(c, false);
	sent |= send_data(c);
	if (c->flags & CF_SACK_RECOVERY)
		sent |= tcp_sack_rexmit(c, true);
	if (fin_wanted(c) && c->snd_nxt == c->snd_una + c->sb_len) {
		/* a FIN on its own (no data left, or a retransmission) */
		if (xmit(c, TH_FIN | TH_ACK, c->snd_nxt, 0) == 0) {
			c->snd_nxt++;
			c->flags |= CF_FIN_SENT;
			if (SEQ_GT(c->snd_nxt, c->snd_max))
				c->snd_max = c->snd_nxt;
			sent = true;
		}
	}
	if (!sent && (c->flags & CF_ACK_NOW))
		tcp_send_ack_now(c);
	arm_timers(c);
}
