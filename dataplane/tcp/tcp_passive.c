/* SPDX-License-Identifier: MIT */
/*
 * tcp_passive.c — SEGMENT ARRIVES for an instance that only observes
 * (fg_net_config.passive: passive mode, a capture or a mirror port). The
 * client half of every connection to a listen endpoint is reassembled
 * from the segments as they were captured, with the live path's receive
 * queue, out-of-order list and delivery (tcp_reass.c), and offered to the
 * app as a live connection's would be; nothing is ever sent.
 *
 * Direction: a segment to a listen endpoint travels client -> server.
 * Anything else is the captured server's half (or not ours): counted
 * (passive_server_frames) and dropped, except a RST from a listen
 * endpoint, which ends its stream as it ended the real connection.
 *
 * A client segment:
 *   SYN, no ACK        opens a stream anchored at its ISN (passive_flows);
 *                      the same SYN before any data is a retransmission;
 *                      another on a live 4-tuple replaces the stream (the
 *                      port pair was reused: the old one's app is told it
 *                      was reset)
 *   no stream          data or FIN cannot be decoded from a command
 *                      boundary: counted (passive_midstream) and dropped;
 *                      a bare ACK or RST carries nothing
 *   RST                ends the stream at once (passive_resets, on_close(rst))
 *   text, FIN          as a receiving TCP takes them (RFC 9293 3.10.7.4):
 *                      octets already had are trimmed (passive_dup_bytes),
 *                      octets ahead wait out of order (passive_ooo) until
 *                      the hole fills, FIN once every octet before it is in
 *                      (on_eof)
 *   after app close    the stream lingers in TIME-WAIT, 2*MSL from its last
 *                      segment: the client's last octets are counted
 *                      (passive_after_close_bytes), not taken for a new
 *                      stream seen mid-way; its FIN or RST ends it
 *
 * No window: nothing was advertised, so every octet ahead of RCV.NXT is
 * kept (up to PASSIVE_WINDOW, half the sequence space). Octets that cannot
 * be kept — the out-of-order list is full, no segment descriptor is left —
 * are a hole no retransmission will fill (the capture lost a segment):
 * the stream ends there (passive_gaps, on_close(error)), since what
 * follows a hole cannot be decoded. ACK numbers, windows and options
 * other than MSS mean nothing here.
 *
 * Back-pressure: an app that stops reading (fg_tcp_pause) leaves its
 * stream's segments queued. A connection holding rx_segs_per_conn
 * descriptors is not cut off (a live peer would be told by the window;
 * a capture cannot be): it is counted backlogged (passive_backlog) and
 * fg_tcp_backlogged() tells the caller to stop receiving until it drains.
 */
#include "tcp_int.h"

#define PASSIVE_WINDOW (1u << 30)
#define PASSIVE_POOL_MARGIN 64		/* descriptors kept for the rest of a burst */

/* ---------------------------------------------------------------- hooks from tcp_reass.c, tcp.c */

void tcp_passive_backlog(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	bool over = c->n_segs >= t->cfg.rx_segs_per_conn;

	if (over && !(c->flags & CF_BACKLOG)) {
		c->flags |= CF_BACKLOG;
		t->n_backlogged++;
		fg_stats_inc(t->st, FG_CTR_PASSIVE_BACKLOG);
	} else if (!over && (c->flags & CF_BACKLOG)) {
		c->flags &= ~CF_BACKLOG;
		t->n_backlogged--;
	}
}

bool fg_tcp_backlogged(const struct fg_tcp *t)
{
	return t->n_backlogged > 0 || t->cfg.rx_segs - t->n_segs_used < PASSIVE_POOL_MARGIN;
}

void tcp_passive_dup(struct fg_tcp_conn *c, uint32_t n)
{
	fg_stats_add(c->tcp->st, FG_CTR_PASSIVE_DUP_BYTES, n);
}

void tcp_passive_gap(struct fg_tcp_conn *c)
{
	c->flags |= CF_GAP;
}

void tcp_passive_closed(struct fg_tcp_conn *c)
{
	if (c->state == FG_TCP_TIME_WAIT)
		return;
	if (c->flags & CF_FIN_RCVD)
		tcp_conn_drop(c, FG_TCP_CLOSE_FIN, true);	/* nothing more will come */
	else
		tcp_enter_time_wait(c);
}

/* ---------------------------------------------------------------- streams */

static void stream_open(struct fg_tcp *t, const struct tcp_seg_in *s)
{
	struct fg_tcp_conn *c = tcp_conn_alloc(t);

	if (!c) {
		fg_stats_inc(t->st, FG_CTR_PASSIVE_FLOWS_FULL);
		return;
	}
	fg_stats_inc(t->st, FG_CTR_PASSIVE_FLOWS);
	tcp_conn_init(c, s, s->mss, s->ws, false);
	c->irs = s->seq;
	c->rcv_nxt = c->last_ack_sent = s->seq + 1;	/* the SYN's sequence number */
	tcp_conn_insert(c);
	if (tcp_establish(c) == 0)
		tcp_timer_update(c);
	/* a SYN's data, if any, is sent again after the handshake */
}

/* The same SYN again, before any octet of the stream arrived. */
static bool syn_again(const struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	return c->state != FG_TCP_TIME_WAIT && s->seq == c->irs && c->rcv_nxt == s->seq + 1 &&
	       !c->rxq && !(c->flags & (CF_FIN_RCVD | CF_OOO_FIN));
}

/* A segment of a stream whose app has closed (TIME-WAIT). */
static void after_close(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;

	fg_stats_add(t->st, FG_CTR_PASSIVE_AFTER_CLOSE_BYTES, s->len);
	if (s->flags & (TH_FIN | TH_RST)) {
		tcp_conn_drop(c, FG_TCP_CLOSE_FIN, false);
		return;
	}
	c->t_2msl = t->now + t->cfg.time_wait_ns;
	tcp_timer_update(c);
}

/* Text and FIN of a live stream (the seventh and eighth checks). */
static void stream_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;
	uint32_t fin_seq = s->seq + s->len;

	c->last_rx = t->now;
	c->rcv_adv = c->rcv_nxt + PASSIVE_WINDOW;
	if (s->len && (c->state == FG_TCP_ESTABLISHED || c->state == FG_TCP_FIN_WAIT_1 ||
		       c->state == FG_TCP_FIN_WAIT_2))
		tcp_data_input(c, s);
	if (c->flags & CF_GAP) {
		fg_stats_inc(t->st, FG_CTR_PASSIVE_GAPS);
		tcp_conn_drop(c, FG_TCP_CLOSE_ERROR, true);
		return;
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

static void client_input(struct fg_tcp *t, const struct tcp_seg_in *s)
{
	struct fg_tcp_conn *c = tcp_lookup(t, &s->k);

	if ((s->flags & (TH_SYN | TH_ACK)) == TH_SYN) {
		if (c && syn_again(c, s))
			return;
		if (c)	/* the 4-tuple is reused: a new connection */
			tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
		stream_open(t, s);
		return;
	}
	if (!c) {
		if (s->len || (s->flags & TH_FIN))
			fg_stats_inc(t->st, FG_CTR_PASSIVE_MIDSTREAM);
		return;
	}
	if (c->state == FG_TCP_TIME_WAIT) {
		after_close(c, s);
	} else if (s->flags & TH_RST) {
		fg_stats_inc(t->st, FG_CTR_PASSIVE_RESETS);
		tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
	} else {
		stream_input(c, s);
	}
}

void fg_tcp_observe_server(struct fg_tcp *t, fg_tcp_server_seg_fn *fn, void *ctx)
{
	t->server_seg = fn;
	t->server_seg_ctx = ctx;
}

/* The captured server's half: to the observer if there is one (shadow
 * mode); for the stream only its RST matters. */
static void server_input(struct fg_tcp *t, const struct tcp_seg_in *s)
{
	struct tcp_tuple k = { .lport = s->k.rport, .rport = s->k.lport, .v6 = s->k.v6 };
	struct fg_tcp_conn *c;

	fg_stats_inc(t->st, FG_CTR_PASSIVE_SERVER_FRAMES);
	if (t->server_seg) {
		/* the segment's destination is the client */
		struct fg_endpoint client = { .family = s->k.v6 ? AF_INET6 : AF_INET,
					      .port = s->k.lport };

		memcpy(client.addr, s->k.laddr, s->k.v6 ? FG_IP6_ALEN : 4);
		t->server_seg(t->server_seg_ctx, &client, s->seq,
			      (uint8_t)(s->flags & (TH_FIN | TH_SYN | TH_RST)), s->data, s->len);
	}
	if (!(s->flags & TH_RST))
		return;
	/* the stream it answers, seen from the server's side */
	memcpy(k.laddr, s->k.raddr, FG_IP6_ALEN);
	memcpy(k.raddr, s->k.laddr, FG_IP6_ALEN);
	c = tcp_lookup(t, &k);
	if (c) {
		fg_stats_inc(t->st, FG_CTR_PASSIVE_RESETS);
		tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
	}
}

void tcp_passive_input(struct fg_tcp *t, struct tcp_seg_in *s)
{
	if (tcp_listening(t, &s->k))
		client_input(t, s);
	else
		server_input(t, s);
}
