/* SPDX-License-Identifier: MIT */
/*
 * tcp_reass.c — a connection's receive side: the segment text (RFC 9293
 * 3.10.7.4, seventh check), reassembly and delivery to the app.
 *
 * Received payload is never copied: an in-order segment is linked into the
 * connection's receive queue with a reference on its buffer; one beyond
 * RCV.NXT goes into the out-of-order list (sorted, overlaps trimmed,
 * bounded per connection). The app sees the queue as an iovec at the end
 * of the burst (tcp_deliver) and says how much it consumed. ACKs: every
 * second in-order data segment, at once for out-of-order data, a filled
 * hole or a FIN (RFC 5681 4.2), otherwise after delack_ns (RFC 9293
 * 3.8.6.3).
 *
 * The same code reassembles a passive instance's streams (tcp_passive.c):
 * there octets that cannot be kept are a gap, not something the peer
 * will send again, the per-connection descriptor bound only pauses the
 * caller (fg_tcp_backlogged), and trimmed octets are counted.
 */
#include "tcp_int.h"

/* ---------------------------------------------------------------- receive queues */

/* Octets that could not be kept: a live peer sends them again (counted
 * `why`); to an observer they are a gap in the stream. */
static void rx_lost(struct fg_tcp_conn *c, enum fg_counter why)
{
	if (c->tcp->passive)
		tcp_passive_gap(c);
	else
		fg_stats_inc(c->tcp->st, why);
}

/* `n` octets the connection had already, trimmed. */
static void rx_dup(struct fg_tcp_conn *c, uint32_t n)
{
	if (c->tcp->passive)
		tcp_passive_dup(c, n);
}

/* A descriptor for [seq, seq+len) at `data` in the buffer `handle`, with
 * a reference on that buffer; NULL (counted) when none may be had. The
 * pool's last segs_reserve descriptors go only to connections holding
 * fewer than TCP_SEGS_LIGHT, and to in-order data of a connection whose
 * app reads (it is consumed at the end of the burst, and an article under
 * way must be able to end): connections whose apps stopped reading (a
 * session at its held-octets cap, docs/relay.md "Memory") or whose
 * out-of-order lists grow cannot take what a new connection's command or
 * the end of an article under way needs. */
static struct tcp_seg *seg_get(struct fg_tcp_conn *c, void *handle, uint32_t seq,
			       const uint8_t *data, uint32_t len)
{
	struct fg_tcp *t = c->tcp;
	struct tcp_seg *g = t->free_segs;

	if (!g || c->n_segs >= t->segs_cap) {
		rx_lost(c, FG_CTR_TCP_RX_SEGS_FULL);
		return NULL;
	}
	if (c->n_segs >= TCP_SEGS_LIGHT && t->cfg.rx_segs - t->n_segs_used <= t->segs_reserve &&
	    (seq != c->rcv_nxt || (c->flags & CF_PAUSED))) {
		rx_lost(c, FG_CTR_TCP_RX_SEGS_RESERVED);
		return NULL;
	}
	t->free_segs = g->next;
	t->n_segs_used++;
	if (__builtin_expect(++c->n_segs == t->backlog_at, 0))
		tcp_passive_backlog(c);
	g->next = NULL;
	g->seq = seq;
	g->data = data;
	g->len = len;
	g->handle = handle;
	fg_net_buf_ref(t->net, g->handle);
	return g;
}

static inline void seg_put(struct fg_tcp_conn *c, struct tcp_seg *g)
{
	struct fg_tcp *t = c->tcp;

	fg_net_buf_unref(t->net, g->handle);
	g->next = t->free_segs;
	t->free_segs = g;
	t->n_segs_used--;
	if (__builtin_expect(c->n_segs-- == t->backlog_at, 0))
		tcp_passive_backlog(c);
}

static void rxq_append(struct fg_tcp_conn *c, struct tcp_seg *g)
{
	g->next = NULL;
	if (c->rxq_tail)
		c->rxq_tail->next = g;
	else
		c->rxq = g;
	c->rxq_tail = g;
	c->rxq_bytes += g->len;
	c->rcv_nxt += g->len;
	fg_stats_add(c->tcp->st, FG_CTR_TCP_RX_BYTES, g->len);
}

/* Move what the out-of-order list now continues onto the receive queue. */
static bool ooo_pull(struct fg_tcp_conn *c)
{
	bool moved = false;

	while (c->ooo && SEQ_LEQ(c->ooo->seq, c->rcv_nxt)) {
		struct tcp_seg *g = c->ooo;
		uint32_t skip = c->rcv_nxt - g->seq;

		c->ooo = g->next;
		c->n_ooo--;
		c->ooo_bytes -= g->len;
		rx_dup(c, FG_MIN(skip, g->len));
		if (skip >= g->len) {
			seg_put(c, g);
			continue;
		}
		g->data += skip;
		g->seq += skip;
		g->len -= skip;
		rxq_append(c, g);
		moved = true;
	}
	return moved;
}

/* Insert [seq, seq+len) into the sorted out-of-order list, trimmed so no
 * two entries overlap; entries it covers entirely are dropped. */
static void ooo_insert(struct fg_tcp_conn *c, void *handle, uint32_t seq,
		       const uint8_t *data, uint32_t len)
{
	struct fg_tcp *t = c->tcp;
	struct tcp_seg **pp = &c->ooo, *prev = NULL, *g;

	while (*pp && SEQ_LT((*pp)->seq, seq)) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (prev && SEQ_GT(prev->seq + prev->len, seq)) {
		uint32_t over = prev->seq + prev->len - seq;

		rx_dup(c, FG_MIN(over, len));
		if (over >= len)
			return;	/* all seen already */
		seq += over;
		data += over;
		len -= over;
	}
	while (*pp && SEQ_GEQ(seq + len, (*pp)->seq + (*pp)->len)) {
		g = *pp;
		*pp = g->next;
		c->n_ooo--;
		c->ooo_bytes -= g->len;
		rx_dup(c, g->len);
		seg_put(c, g);
	}
	if (*pp && SEQ_GT(seq + len, (*pp)->seq)) {
		rx_dup(c, seq + len - (*pp)->seq);
		len = (*pp)->seq - seq;
	}
	if (!len)
		return;
	if (c->n_ooo >= t->cfg.ooo_segs_per_conn) {
		rx_lost(c, FG_CTR_TCP_RX_OOO_FULL);
		return;
	}
	g = seg_get(c, handle, seq, data, len);
	if (!g)
		return;
	g->next = *pp;
	*pp = g;
	c->last_ooo_seq = seq;
	c->n_ooo++;
	c->ooo_bytes += len;
	fg_stats_inc(t->st, t->passive ? FG_CTR_PASSIVE_OOO : FG_CTR_TCP_RX_OOO);
}

/* ---------------------------------------------------------------- text */

/* [seq, seq+len) at `data` in the buffer `handle`: one received segment,
 * or one piece of a merged packet (each piece is handled as the segment
 * it was on the wire, so ACKs and duplicates count as if unmerged). */
static void piece_input(struct fg_tcp_conn *c, void *handle, uint32_t seq,
			const uint8_t *data, uint32_t len)
{
	struct fg_tcp *t = c->tcp;
	uint32_t edge;
	struct tcp_seg *g;

	if (SEQ_LT(seq, c->rcv_nxt)) {
		uint32_t d = c->rcv_nxt - seq;

		rx_dup(c, FG_MIN(d, len));
		if (d >= len) {
			fg_stats_inc(t->st, FG_CTR_TCP_RX_DUP_DATA);
			c->flags |= CF_ACK_NOW;
			tcp_mark_pending(c);
			return;
		}
		seq += d;
		data += d;
		len -= d;
	}
	/* RFC 9293 3.10.7.4: trim to the window we advertised */
	edge = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv : c->rcv_nxt;
	if (SEQ_GEQ(seq, edge))
		return;
	if (SEQ_GT(seq + len, edge))
		len = edge - seq;
	if (c->flags & CF_APP_CLOSED) {
		/* the app is gone: keep the sequence space moving, drop the bytes */
		if (seq == c->rcv_nxt) {
			c->rcv_nxt += len;
			fg_stats_add(t->st, t->passive ? FG_CTR_PASSIVE_AFTER_CLOSE_BYTES :
				      FG_CTR_TCP_RX_AFTER_CLOSE, len);
		}
		c->flags |= CF_ACK_NOW;
		tcp_mark_pending(c);
		return;
	}
	if (seq != c->rcv_nxt) {
		/* RFC 5681 4.2: out-of-order data gets an immediate ACK */
		ooo_insert(c, handle, seq, data, len);
		c->flags |= CF_ACK_NOW;
		tcp_mark_pending(c);
		return;
	}
	g = seg_get(c, handle, seq, data, len);
	if (!g)
		return;
	rxq_append(c, g);
	if (c->ooo && ooo_pull(c))
		c->flags |= CF_ACK_NOW;	/* a hole was filled */
	c->flags |= CF_DATA_NEW;
	/* RFC 9293 3.8.6.3: ACK at least every second full-sized segment */
	if (++c->rx_unacked >= 2)
		c->flags |= CF_ACK_NOW;
	else
		c->flags |= CF_DACK;
	tcp_mark_pending(c);
}

void tcp_data_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	const struct fg_rx_frame *f = s->f;
	uint32_t seq = s->seq, head = s->len - fg_rx_more_len(f);

	/* a merged packet (FG_RX_MORE): the first segment's payload in the
	 * frame's buffer, then each piece in its own (tcp_input checked that
	 * the pieces are no longer than the payload) */
	if (head)
		piece_input(c, f->handle, seq, s->data, head);
	if (!(f->flags & FG_RX_MORE))
		return;
	seq += head;
	for (unsigned i = 0; i < f->n_more; i++) {
		if (f->more[i].len)
			piece_input(c, f->more[i].handle, seq, f->more[i].data, f->more[i].len);
		seq += f->more[i].len;
	}
}

/* ---------------------------------------------------------------- delivery */

static void consume(struct fg_tcp_conn *c, uint32_t n)
{
	while (n && c->rxq) {
		struct tcp_seg *g = c->rxq;
		uint32_t avail = g->len - c->rxq_off;

		if (n < avail) {
			c->rxq_off += n;
			c->rxq_bytes -= n;
			return;
		}
		n -= avail;
		c->rxq_bytes -= avail;
		c->rxq_off = 0;
		c->rxq = g->next;
		if (!c->rxq)
			c->rxq_tail = NULL;
		seg_put(c, g);
	}
}

/* Offer the queued in-order payload to the app (end of burst). */
void tcp_deliver(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	struct fg_iov iov[FG_TCP_MAX_IOV];

	if (!(c->flags & CF_APP) || (c->flags & (CF_APP_CLOSED | CF_PAUSED)))
		return;
	while ((c->flags & CF_DATA_NEW) && c->rxq_bytes) {
		unsigned n = 0;
		uint32_t offered = 0, took;
		bool more;

		for (struct tcp_seg *g = c->rxq; g && n < FG_TCP_MAX_IOV; g = g->next, n++) {
			uint32_t skip = g == c->rxq ? c->rxq_off : 0;

			iov[n] = (struct fg_iov){ g->data + skip, g->len - skip, g->handle };
			offered += g->len - skip;
		}
		more = offered < c->rxq_bytes;
		c->flags |= CF_IN_DATA;
		took = t->ops->on_data(c->ctx, c, iov, n);
		c->flags &= ~CF_IN_DATA;
		if (c->flags & CF_FREEING)
			return;
		consume(c, FG_MIN(took, offered));
		if (c->flags & CF_APP_CLOSED) {
			/* closed from inside on_data: the rest is unwanted */
			if (c->rxq_bytes || c->ooo_bytes)
				fg_stats_add(t->st, FG_CTR_TCP_RX_AFTER_CLOSE,
					     c->rxq_bytes + c->ooo_bytes);
			tcp_rxq_flush(c);
			return;
		}
		/* everything offered was taken but more is queued: go on */
		if (!(more && took >= offered) || (c->flags & CF_PAUSED))
			c->flags &= ~CF_DATA_NEW;
	}
	c->flags &= ~CF_DATA_NEW;
	if ((c->flags & CF_FIN_RCVD) && !(c->flags & (CF_EOF_DONE | CF_PAUSED)) && !c->rxq_bytes) {
		c->flags |= CF_EOF_DONE;
		if (t->ops->on_eof)
			t->ops->on_eof(c->ctx, c);
		else
			fg_tcp_close(c);
	}
}
