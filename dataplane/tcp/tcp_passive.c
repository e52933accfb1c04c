/* SPDX-License-Identifier: MIT */
/*
 * tcp_passive.c — SEGMENT ARRIVES for an instance that only observes
 * (fg_net_config.passive): no handshake, no answers, the client's half of
 * each connection reassembled as captured.
 */
#include "tcp_int.h"

/* ---------------------------------------------------------------- passive mode */

/*
 * Observe only (issue 9): the client's half of each connection to a
 * listen endpoint is reassembled from the segments as captured; the
 * server's half is never seen (it is addressed elsewhere), nothing is
 * sent, and there is no window to enforce: data up to rcvbuf beyond
 * RCV.NXT is kept, the rest counted out of window. A SYN opens (or,
 * with another ISN, replaces) the stream; data with no stream picks one
 * up mid-way; RST and FIN end it; ACK fields mean nothing here.
 */
static struct fg_tcp_conn *passive_open(struct fg_tcp *t, struct tcp_seg_in *s, uint32_t irs)
{
	struct fg_tcp_conn *c = tcp_conn_alloc(t);

	if (!c) {
		fg_stats_inc(t->st, FG_CTR_TCP_POOL_EMPTY);
		return NULL;
	}
	tcp_conn_init(c, s, s->mss, s->ws, false);
	c->irs = irs;
	c->rcv_nxt = c->last_ack_sent = irs + 1;
	tcp_conn_insert(c);
	if (tcp_establish(c) < 0)
		return NULL;
	return c;
}

void tcp_passive_input(struct fg_tcp *t, struct fg_tcp_conn *c, struct tcp_seg_in *s)
{
	uint32_t fin_seq;

	if (c && (s->flags & TH_SYN) && s->seq != c->irs) {
		/* the port pair is reused by a new connection */
		tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
		c = NULL;
	}
	if (!c) {
		if (s->flags & TH_RST)
			return;
		if (s->flags & TH_SYN) {
			c = passive_open(t, s, s->seq);
			fg_stats_inc(t->st, FG_CTR_TCP_PASSIVE_OPENS);
		} else if (s->len || (s->flags & TH_FIN)) {
			c = passive_open(t, s, s->seq - 1);
			fg_stats_inc(t->st, FG_CTR_TCP_PASSIVE_PICKUPS);
		}
		if (!c || (s->flags & TH_SYN))
			return;	/* a SYN's data, if any, is sent again after the handshake */
	}
	c->last_rx = t->now;
	if (s->flags & TH_RST) {
		tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
		return;
	}
	c->rcv_adv = c->rcv_nxt + t->cfg.rcvbuf;	/* no window: keep up to rcvbuf */
	fin_seq = s->seq + s->len;
	if (s->len && c->state == FG_TCP_ESTABLISHED) {
		if (SEQ_GEQ(s->seq, c->rcv_adv))
			fg_stats_inc(t->st, FG_CTR_TCP_RX_OUT_OF_WINDOW);
		else
			tcp_data_input(c, s);
	}
	if ((s->flags & TH_FIN) && !(c->flags & CF_FIN_RCVD)) {
		if (fin_seq == c->rcv_nxt) {
			tcp_fin_input(c);
		} else if (SEQ_GT(fin_seq, c->rcv_nxt)) {
			c->flags |= CF_OOO_FIN;
			c->ooo_fin_seq = fin_seq;
		}
	}
	if ((c->flags & CF_OOO_FIN) && c->ooo_fin_seq == c->rcv_nxt)
		tcp_fin_input(c);
	tcp_timer_update(c);
}

