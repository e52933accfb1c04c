/* SPDX-License-Identifier: MIT */
/*
 * tcp_input.c — SEGMENT ARRIVES (RFC 9293 3.10.7), in the RFC's order of
 * checks:
 *
 *   no connection, no listener  -> CLOSED rules: RST unless RST (3.10.7.1)
 *   no connection, a listener   -> LISTEN rules (3.10.7.2): RST ignored,
 *                                  ACK -> SYN cookie or RST, SYN -> SYN-RCVD
 *                                  (or a cookie when the backlog is full)
 *   a connection in SYN-SENT    -> tcp_connect.c (3.10.7.3)
 *   a connection                -> 1 sequence acceptability, 2 RST,
 *                                  4 SYN, 5 ACK, 7 text, 8 FIN (3.10.7.4)
 *
 * RFC 5961 hardening: a RST whose sequence number is in the window but
 * not exactly RCV.NXT, and any SYN on a synchronized connection, draw a
 * challenge ACK instead of tearing the connection down; an ACK of data
 * never sent is dropped with an ACK.
 *
 * The seventh check (segment text) is tcp_reass.c's: the receive queue,
 * the out-of-order list and delivery to the app. An instance in passive
 * mode sends every segment to tcp_passive.c instead of these rules.
 */
#include <string.h>
#include <sys/socket.h>

#include "floodgate/log.h"
#include "floodgate/wire.h"
#include "tcp_int.h"

/* ---------------------------------------------------------------- parsing */

/* A SYN's options (MSS, window scale, SACK-permitted), or the SACK blocks
 * of any other segment. */
static void parse_options(struct tcp_seg_in *s, const uint8_t *o, uint32_t len, bool syn)
{
	uint32_t i = 0;

	while (i < len) {
		uint8_t kind = o[i], olen;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || (olen = o[i + 1]) < 2 || i + olen > len)
			break;	/* malformed: ignore the rest */
		if (!syn) {
			if (kind == 5 && olen >= 10 && (olen - 2) % 8 == 0) {
				s->sack_blk = o + i + 2;		/* RFC 2018 3 */
				s->n_sack_blk = (olen - 2u) / 8;
			}
		} else if (kind == 2 && olen == 4)
			s->mss = fg_rd16(o + i + 2);
		else if (kind == 3 && olen == 3)
			s->ws = FG_MIN(o[i + 2], TCP_MAX_WSCALE);	/* RFC 7323 2.3 */
		else if (kind == 4 && olen == 2)
			s->sack = true;					/* RFC 2018 2 */
		i += olen;
	}
}

/* A listener for a local port and address: its own address, or the
 * unspecified address of its family (any of ours, but one a reload
 * removed: it is leaving, fg_net_set_ipv4). */
bool fg_tcp_listens_on(const struct fg_tcp *t, const struct fg_endpoint *local)
{
	static const uint8_t any[FG_IP6_ALEN];
	size_t alen = local->family == AF_INET6 ? FG_IP6_ALEN : 4;
	uint32_t ip;

	if (local->family == AF_INET) {
		memcpy(&ip, local->addr, 4);
		if (fg_net_ipv4_leaving(t->net, ip))
			return false;
	}

	for (unsigned i = 0; i < t->cfg.n_listen; i++) {
		const struct fg_endpoint *l = &t->cfg.listen[i];

		if (l->port == local->port && l->family == local->family &&
		    (!memcmp(l->addr, any, alen) || !memcmp(l->addr, local->addr, alen)))
			return true;
	}
	return false;
}

bool tcp_listening(const struct fg_tcp *t, const struct tcp_tuple *k)
{
	struct fg_endpoint local = { .family = k->v6 ? AF_INET6 : AF_INET, .port = k->lport };

	memcpy(local.addr, k->laddr, k->v6 ? FG_IP6_ALEN : 4);
	return fg_tcp_listens_on(t, &local);
}

static uint32_t seg_len(const struct tcp_seg_in *s)
{
	return s->len + ((s->flags & TH_SYN) ? 1 : 0) + ((s->flags & TH_FIN) ? 1 : 0);
}

/* ---------------------------------------------------------------- CLOSED/LISTEN */

static void closed_reply(struct fg_tcp *t, const struct tcp_seg_in *s)
{
	/* RFC 9293 3.10.7.1: never answer a RST; an ACK is answered with
	 * <SEQ=SEG.ACK><CTL=RST>, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> */
	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK)
		tcp_reply_rst(t, s->f, &s->k, s->ack, 0, TH_RST);
	else
		tcp_reply_rst(t, s->f, &s->k, 0,
			      s->seq + seg_len(s), TH_RST | TH_ACK);
}

void tcp_conn_init(struct fg_tcp_conn *c, const struct tcp_seg_in *s, uint32_t peer_mss,
		   int peer_ws, bool sack)
{
	struct fg_tcp *t = c->tcp;

	c->k = s->k;
	memcpy(c->rmac, s->f->data + 6, FG_ETH_ALEN);
	c->mss = FG_MIN(peer_mss ? peer_mss : TCP_DEFAULT_MSS, tcp_mss_local(t, &s->k));
	if (c->mss < 64)
		c->mss = 64;
	if (sack)
		c->flags |= CF_SACK_OK;
	if (peer_ws >= 0) {
		c->flags |= CF_WS_OK;
		c->snd_wscale = (uint8_t)peer_ws;
		c->rcv_wscale = t->rcv_wscale;
	}
	/* RFC 5681 3.1 (RFC 3390): IW = min(4*SMSS, max(2*SMSS, 4380)) */
	c->cwnd = FG_MIN(4 * c->mss, FG_MAX(2 * c->mss, 4380u));
	c->ssthresh = UINT32_MAX / 2;
	c->rto = t->cfg.rto_init_ns;
	c->last_rx = t->now;
}

int tcp_establish(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	int family = c->k.v6 ? AF_INET6 : AF_INET;
	struct fg_endpoint peer = { .family = family, .port = c->k.rport };
	struct fg_endpoint local = { .family = family, .port = c->k.lport };
	void *ctx;

	if (c->flags & CF_ACTIVE)
		return tcp_connected(c);	/* a simultaneous open's end */
	memcpy(peer.addr, c->k.raddr, FG_IP6_ALEN);
	memcpy(local.addr, c->k.laddr, FG_IP6_ALEN);
	tcp_set_state(c, FG_TCP_ESTABLISHED);
	c->retries = 0;
	c->backoff = 0;
	c->t_rexmt = 0;
	ctx = t->ops->on_accept(t->app, c, &peer, &local);
	if (c->flags & CF_FREEING)
		return -1;	/* aborted from inside on_accept */
	if (!ctx) {
		fg_stats_inc(t->st, FG_CTR_TCP_APP_REFUSED);
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_nxt);
		tcp_conn_drop(c, FG_TCP_CLOSE_ERROR, false);
		return -1;
	}
	c->ctx = ctx;
	c->flags |= CF_APP;
	fg_stats_inc(t->st, FG_CTR_TCP_ACCEPTED);
	tcp_mark_pending(c);
	return 0;
}

static void syn_input(struct fg_tcp *t, const struct tcp_seg_in *s)
{
	uint8_t peer_n = *tcp_syn_peer(t, &s->k);
	struct fg_tcp_conn *c;
	bool full = false;

	fg_stats_inc(t->st, FG_CTR_TCP_SYN_RX);
	if (t->n_syn_rcvd >= t->cfg.syn_backlog) {
		fg_stats_inc(t->st, FG_CTR_TCP_SYN_BACKLOG_FULL);
		full = true;
	} else if (peer_n >= t->cfg.syn_backlog_per_peer) {
		fg_stats_inc(t->st, FG_CTR_TCP_SYN_PEER_FULL);
		full = true;
	}
	if (full) {
		uint32_t mss = FG_MIN(s->mss ? s->mss : TCP_DEFAULT_MSS, tcp_mss_local(t, &s->k));
		uint32_t cookie;

		if (t->cfg.no_syncookies) {
			fg_stats_inc(t->st, FG_CTR_TCP_SYN_DROPPED);
			return;
		}
		/* RFC 4987 3.6: answer statelessly */
		cookie = tcp_cookie_make(t, &s->k, s->seq,
					 mss, s->ws, s->sack, t->now);
		tcp_send_cookie_synack(t, s->f, &s->k, cookie, s->seq + 1, mss, s->ws, s->sack);
		fg_stats_inc(t->st, FG_CTR_TCP_SYNCOOKIES_SENT);
		return;
	}
	c = tcp_conn_alloc(t);
	if (!c) {
		fg_stats_inc(t->st, FG_CTR_TCP_POOL_EMPTY);
		tcp_reply_rst(t, s->f, &s->k, 0, s->seq + 1,
			      TH_RST | TH_ACK);
		return;
	}
	tcp_conn_init(c, s, s->mss, s->ws, s->sack);
	c->irs = s->seq;
	c->rcv_nxt = c->rcv_adv = c->last_ack_sent = s->seq + 1;
	c->iss = tcp_iss(t, &s->k, t->now);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->iss + 1;
	/* RFC 7323 2.2: the window in a SYN is not scaled */
	c->snd_wnd = c->max_snd_wnd = s->wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = c->iss;
	tcp_set_state(c, FG_TCP_SYN_RCVD);
	tcp_conn_insert(c);
	tcp_send_synack(c);
	c->t_rexmt = t->now + c->rto;
	tcp_timer_update(c);
}

static void conn_input(struct fg_tcp_conn *c, struct tcp_seg_in *s);

/* An ACK to a listener with no connection: a SYN cookie coming back? */
static bool cookie_ack(struct fg_tcp *t, struct tcp_seg_in *s)
{
	uint32_t mss;
	int ws;
	bool sack;
	struct fg_tcp_conn *c;

	if (t->cfg.no_syncookies || (s->flags & (TH_SYN | TH_FIN)))
		return false;
	if (tcp_cookie_check(t, &s->k, s->seq - 1, s->ack - 1,
			     t->now, &mss, &ws, &sack) < 0) {
		fg_stats_inc(t->st, FG_CTR_TCP_SYNCOOKIES_BAD);
		return false;
	}
	c = tcp_conn_alloc(t);
	if (!c) {
		fg_stats_inc(t->st, FG_CTR_TCP_POOL_EMPTY);
		return false;
	}
	fg_stats_inc(t->st, FG_CTR_TCP_SYNCOOKIES_OK);
	tcp_conn_init(c, s, mss, ws, sack);
	c->irs = s->seq - 1;
	c->rcv_nxt = c->last_ack_sent = s->seq;
	c->rcv_adv = s->seq + FG_MIN(t->cfg.rcvbuf, 65535u);	/* what the SYN-ACK said */
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = s->ack;
	c->snd_wnd = c->max_snd_wnd = (uint32_t)s->wnd << c->snd_wscale;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	tcp_conn_insert(c);
	if (tcp_establish(c) == 0)
		conn_input(c, s);	/* the ACK may carry data already */
	return true;
}

static void listen_input(struct fg_tcp *t, struct tcp_seg_in *s)
{
	/* RFC 9293 3.10.7.2 */
	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK) {
		if (!cookie_ack(t, s))
			tcp_reply_rst(t, s->f, &s->k, s->ack, 0,
				      TH_RST);
		return;
	}
	if (s->flags & TH_SYN)
		syn_input(t, s);
}

/* ---------------------------------------------------------------- FIN */

void tcp_fin_input(struct fg_tcp_conn *c)
{
	/* RFC 9293 3.10.7.4, eighth check */
	c->rcv_nxt++;
	c->flags |= CF_FIN_RCVD | CF_ACK_NOW;
	c->flags &= ~CF_OOO_FIN;
	switch (c->state) {
	case FG_TCP_ESTABLISHED:
		tcp_set_state(c, FG_TCP_CLOSE_WAIT);
		c->flags |= CF_DATA_NEW;	/* on_eof once the queue drains */
		break;
	case FG_TCP_FIN_WAIT_1:
		tcp_set_state(c, FG_TCP_CLOSING);
		break;
	case FG_TCP_FIN_WAIT_2:
		tcp_enter_time_wait(c);
		break;
	default:
		break;
	}
	tcp_mark_pending(c);
}

/* ---------------------------------------------------------------- ACK */

static void retransmit_first(struct fg_tcp_conn *c)
{
	uint32_t len = tcp_seg_fit(c, c->snd_una, FG_MIN(c->mss, c->sb_len));
	uint8_t flags = TH_ACK;

	if (len == c->sb_len && (c->flags & CF_FIN_SENT))
		flags |= TH_FIN;
	fg_stats_inc(c->tcp->st, FG_CTR_TCP_RETRANS_SEGS);
	tcp_xmit(c, flags, c->snd_una, len);
}

static void new_ack(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;
	uint32_t acked = s->ack - c->snd_una, data_acked = FG_MIN(acked, c->sb_len);
	bool fin_acked = (c->flags & CF_FIN_SENT) && s->ack == c->snd_una + c->sb_len + 1;

	tcp_sendq_acked(c, data_acked);
	c->snd_una = s->ack;
	if (SEQ_LT(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	if ((c->flags & CF_RTT_TIMING) && SEQ_GT(s->ack, c->rtt_seq)) {
		c->flags &= ~CF_RTT_TIMING;
		tcp_rtt_sample(c, t->now - c->rtt_start);
	}
	c->retries = 0;
	c->backoff = 0;
	if (c->flags & CF_RECOVERY) {
		if (SEQ_GEQ(s->ack, c->recover)) {
			/* RFC 6582 3.2 step 3: full acknowledgment */
			c->flags &= ~CF_RECOVERY;
			c->cwnd = FG_MIN(c->ssthresh, (c->snd_max - c->snd_una) + c->mss);
		} else {
			/* partial ACK: retransmit the next hole, deflate */
			retransmit_first(c);
			c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
			c->cwnd += c->mss;
		}
	} else if (c->flags & CF_SACK_RECOVERY) {
		/* RFC 6675 5: cwnd holds through SACK recovery (tcp_sack.c) */
	} else if (c->cwnd < c->ssthresh) {
		c->cwnd += FG_MIN(acked, c->mss);	/* RFC 5681 3.1 slow start */
	} else {
		c->cwnd += FG_MAX(1u, c->mss * c->mss / c->cwnd);	/* eq. 3 */
	}
	if (c->cwnd > (1u << 30))
		c->cwnd = 1u << 30;
	c->dupacks = 0;
	/* RFC 6298 5.2/5.3: stop when all is acked, else restart */
	if (!(c->flags & CF_PERSIST))
		c->t_rexmt = c->snd_una == c->snd_max ? 0 : t->now + c->rto;
	tcp_mark_pending(c);
	if (!fin_acked)
		return;
	switch (c->state) {
	case FG_TCP_FIN_WAIT_1:
		tcp_set_state(c, FG_TCP_FIN_WAIT_2);
		break;
	case FG_TCP_CLOSING:
		tcp_enter_time_wait(c);
		break;
	case FG_TCP_LAST_ACK:
		tcp_conn_drop(c, FG_TCP_CLOSE_FIN, true);
		break;
	default:
		break;
	}
}

static void dup_ack(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	fg_stats_inc(t->st, FG_CTR_TCP_DUP_ACKS);
	if (++c->dupacks == 3 && !(c->flags & CF_RECOVERY)) {
		/* RFC 5681 3.2 / RFC 6582: fast retransmit, fast recovery */
		uint32_t flight = c->snd_max - c->snd_una;

		fg_stats_inc(t->st, FG_CTR_TCP_FAST_RETRANS);
		c->ssthresh = FG_MAX(flight / 2, 2 * c->mss);
		c->recover = c->snd_max;
		c->flags |= CF_RECOVERY;
		c->flags &= ~CF_RTT_TIMING;
		retransmit_first(c);
		c->cwnd = c->ssthresh + 3 * c->mss;
		c->t_rexmt = t->now + c->rto;
	} else if (c->dupacks > 3 && (c->flags & CF_RECOVERY)) {
		c->cwnd += c->mss;	/* inflate: a segment has left the network */
		tcp_mark_pending(c);
	}
}

/* Fifth check for synchronized states; false when the segment is done. */
static bool ack_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;
	uint32_t wnd = (c->flags & CF_WS_OK) ? (uint32_t)s->wnd << c->snd_wscale : s->wnd;
	bool update = SEQ_LT(c->snd_wl1, s->seq) ||
		      (c->snd_wl1 == s->seq && SEQ_LEQ(c->snd_wl2, s->ack));
	bool dup;

	if (SEQ_GT(s->ack, c->snd_max) ||
	    SEQ_LT(s->ack, c->snd_una - FG_MAX(c->max_snd_wnd, 65535u))) {
		/* RFC 5961 5.2: ACK of unsent data, or far too old */
		fg_stats_inc(t->st, FG_CTR_TCP_RX_BAD_ACK);
		fg_stats_inc(t->st, FG_CTR_TCP_CHALLENGE_ACKS);
		tcp_send_ack_now(c);
		return false;
	}
	/* RFC 5681 2: the definition of a duplicate ACK */
	dup = s->ack == c->snd_una && s->len == 0 && !(s->flags & (TH_SYN | TH_FIN)) &&
	      wnd == c->snd_wnd && c->snd_max != c->snd_una;
	if (SEQ_GT(s->ack, c->snd_una)) {
		new_ack(c, s);
		if (c->flags & CF_FREEING)
			return false;
	} else if (dup && !(c->flags & CF_SACK_OK)) {
		dup_ack(c);	/* NewReno */
	}
	if (c->flags & CF_SACK_OK)
		tcp_sack_input(c, s, dup);	/* RFC 6675: the scoreboard, recovery */
	if (update) {
		if (c->snd_wnd == 0 && wnd > 0 && (c->flags & CF_PERSIST)) {
			c->flags &= ~CF_PERSIST;
			c->t_rexmt = 0;
			c->backoff = 0;
		}
		if (wnd != c->snd_wnd)
			tcp_mark_pending(c);
		c->snd_wnd = wnd;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
	}
	return true;
}

/* ---------------------------------------------------------------- connection */

static bool seq_acceptable(const struct fg_tcp_conn *c, const struct tcp_seg_in *s, bool *zero_ok)
{
	uint32_t wnd = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t len = seg_len(s);

	*zero_ok = false;
	/* RFC 9293 3.10.7.4, first check: the four cases */
	if (len == 0 && wnd == 0)
		return s->seq == c->rcv_nxt;
	if (len == 0)
		return SEQ_LEQ(c->rcv_nxt, s->seq) && SEQ_LT(s->seq, c->rcv_nxt + wnd);
	if (wnd == 0) {
		/* "special allowance": ACKs and RSTs of a segment at RCV.NXT */
		*zero_ok = s->seq == c->rcv_nxt;
		return *zero_ok;
	}
	return (SEQ_LEQ(c->rcv_nxt, s->seq) && SEQ_LT(s->seq, c->rcv_nxt + wnd)) ||
	       (SEQ_LEQ(c->rcv_nxt, s->seq + len - 1) && SEQ_LT(s->seq + len - 1, c->rcv_nxt + wnd));
}

static void challenge_ack(struct fg_tcp_conn *c)
{
	fg_stats_inc(c->tcp->st, FG_CTR_TCP_CHALLENGE_ACKS);
	tcp_send_ack_now(c);
}

static void rst_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	/* RFC 5961 3.2: only an exact RCV.NXT resets; else challenge */
	if (s->seq != c->rcv_nxt) {
		fg_stats_inc(c->tcp->st, FG_CTR_TCP_RX_RST_BAD_SEQ);
		challenge_ack(c);
		return;
	}
	/* SYN-RECEIVED from a passive open returns to LISTEN: the block goes
	 * (an active open's app is told: tcp_conn_drop) */
	tcp_conn_drop(c, FG_TCP_CLOSE_RST, c->state != FG_TCP_SYN_RCVD);
}

/* Time-wait and SYN-received special cases; true when handled. */
static bool pre_checks(struct fg_tcp_conn *c, struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;

	if (c->state == FG_TCP_TIME_WAIT && (s->flags & (TH_SYN | TH_RST | TH_ACK)) == TH_SYN &&
	    SEQ_GT(s->seq, c->rcv_nxt)) {
		/* RFC 9293 3.10.7.4 note / RFC 6191: a new incarnation */
		fg_stats_inc(t->st, FG_CTR_TCP_TW_REUSED);
		tcp_conn_drop(c, FG_TCP_CLOSE_FIN, false);
		if (tcp_listening(t, &s->k))
			syn_input(t, s);
		return true;
	}
	if (c->state == FG_TCP_TIME_WAIT && (s->flags & (TH_FIN | TH_RST | TH_SYN)) == TH_FIN &&
	    s->seq + s->len + 1 == c->rcv_nxt) {
		/* RFC 9293 3.10.7.4: the peer's FIN again (our ACK was lost):
		 * acknowledge it and restart the 2*MSL timeout */
		c->t_2msl = t->now + t->cfg.time_wait_ns;
		c->flags |= CF_ACK_NOW;
		tcp_mark_pending(c);
		tcp_timer_update(c);
		return true;
	}
	if (c->state == FG_TCP_SYN_RCVD && (s->flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN &&
	    s->seq == c->irs) {
		/* the peer did not get our SYN-ACK: send it again */
		fg_stats_inc(t->st, FG_CTR_TCP_SYNACK_RETRANS);
		tcp_send_synack(c);
		return true;
	}
	return false;
}

static void conn_input(struct fg_tcp_conn *c, struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;
	bool zero_ok;
	uint32_t fin_seq = s->seq + s->len;

	if (c->state == FG_TCP_SYN_SENT) {
		tcp_syn_sent_input(c, s);
		return;
	}
	if (pre_checks(c, s))
		return;
	if (!seq_acceptable(c, s, &zero_ok)) {
		if (!(s->flags & TH_RST)) {
			fg_stats_inc(t->st, SEQ_LEQ(s->seq + seg_len(s), c->rcv_nxt) && seg_len(s)
				     ? FG_CTR_TCP_RX_DUP_DATA : FG_CTR_TCP_RX_OUT_OF_WINDOW);
			c->flags |= CF_ACK_NOW;
			tcp_mark_pending(c);
		}
		return;
	}
	if (zero_ok) {
		/* zero window: only the control part counts; a probe is
		 * answered with our (still closed) window */
		s->len = 0;
		s->flags &= (uint8_t)~TH_FIN;
		c->flags |= CF_ACK_NOW;
		tcp_mark_pending(c);
	}
	c->last_rx = t->now;
	if (s->flags & TH_RST) {
		rst_input(c, s);
		return;
	}
	if (s->flags & TH_SYN) {
		if (c->state == FG_TCP_SYN_RCVD) {
			tcp_conn_drop(c, FG_TCP_CLOSE_RST, false);
			return;
		}
		fg_stats_inc(t->st, FG_CTR_TCP_RX_SYN_IN_WINDOW);
		challenge_ack(c);	/* RFC 5961 4.2 */
		return;
	}
	if (!(s->flags & TH_ACK)) {
		fg_stats_inc(t->st, FG_CTR_TCP_RX_NO_ACK);
		return;
	}
	if (c->state == FG_TCP_SYN_RCVD) {
		if (!(SEQ_LT(c->snd_una, s->ack) && SEQ_LEQ(s->ack, c->snd_max))) {
			tcp_reply_rst(t, s->f, &s->k, s->ack, 0,
				      TH_RST);
			return;
		}
		c->snd_una = s->ack;
		c->snd_wnd = (c->flags & CF_WS_OK) ? (uint32_t)s->wnd << c->snd_wscale : s->wnd;
		c->max_snd_wnd = c->snd_wnd;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (tcp_establish(c) < 0)
			return;
	} else if (!ack_input(c, s)) {
		return;
	}
	if (c->state == FG_TCP_TIME_WAIT) {
		/* only the peer's FIN again: ACK it, restart 2*MSL */
		if (s->flags & TH_FIN) {
			c->t_2msl = t->now + t->cfg.time_wait_ns;
			c->flags |= CF_ACK_NOW;
			tcp_mark_pending(c);
		}
		return;
	}
	if (s->len && (c->state == FG_TCP_ESTABLISHED || c->state == FG_TCP_FIN_WAIT_1 ||
		       c->state == FG_TCP_FIN_WAIT_2))
		tcp_data_input(c, s);
	if (s->flags & TH_FIN && !(c->flags & CF_FIN_RCVD)) {
		if (fin_seq == c->rcv_nxt) {
			tcp_fin_input(c);
		} else if (SEQ_GT(fin_seq, c->rcv_nxt)) {
			c->flags |= CF_OOO_FIN | CF_ACK_NOW;
			c->ooo_fin_seq = fin_seq;
			tcp_mark_pending(c);
		}
	}
	if ((c->flags & CF_OOO_FIN) && c->ooo_fin_seq == c->rcv_nxt && !(c->flags & CF_FREEING))
		tcp_fin_input(c);
	if (!(c->flags & CF_FREEING))
		tcp_timer_update(c);
}

/* A source a connection can have: IPv4 not 0/8, multicast, class E or
 * broadcast; IPv6 not unspecified, loopback or multicast (RFC 4291 2.5.2,
 * 2.5.3, 2.7; the net layer refused multicast already). */
static bool source_ok(const struct tcp_tuple *k)
{
	static const uint8_t unspecified[15];

	if (!k->v6)
		return k->raddr[0] != 0 && k->raddr[0] < 224;
	return k->raddr[0] != 0xff &&
	       !(!memcmp(k->raddr, unspecified, 15) && k->raddr[15] <= 1);
}

/*
 * The segment's checksum, verified in software unless the port did. The
 * payload is summed on its own first (it starts at an even offset: the
 * header is whole 32-bit words) and the sum kept with its buffer
 * (struct fg_buf_sum), so that sending a piece of it by reference need
 * not read it again (tcp_output.c). A buffer whose payload was not summed
 * here gets its kept sum cleared: it may hold a sum from an earlier use.
 */
static bool checksum_ok(struct fg_tcp *t, const struct fg_rx_frame *f,
			const struct fg_net_l3 *l3, const uint8_t *l4, uint32_t l4_len,
			uint32_t doff)
{
	struct fg_buf_sum *bs = fg_net_buf_sum(t->net, f->handle);
	uint32_t sum, payload;

	if (f->flags & FG_RX_L4_CSUM_OK) {
		/* the port verified it: its own sums (FG_RX_SUM_KEPT), or none */
		if (!bs || (f->flags & FG_RX_SUM_KEPT))
			return true;
		bs->start = NULL;
		for (unsigned i = 0; (f->flags & FG_RX_MORE) && i < f->n_more; i++)
			fg_net_buf_sum(t->net, f->more[i].handle)->start = NULL;
		return true;
	}
	payload = fg_csum_add(0, l4 + doff, l4_len - doff);
	sum = l3->family == AF_INET6
		      ? fg_ipv6_pseudo_sum(l3->src, l3->dst, FG_IP_PROTO_TCP, l4_len)
		      : fg_ipv4_pseudo_sum(fg_rdaddr(l3->src), fg_rdaddr(l3->dst),
					   FG_IP_PROTO_TCP, l4_len);
	sum = fg_csum_combine(fg_csum_add(sum, l4, doff), payload);
	if (fg_csum_fold(sum) != 0)
		return false;
	if (bs)
		*bs = (struct fg_buf_sum){ l4_len > doff ? l4 + doff : NULL, l4_len - doff,
					   payload, NULL, 0 };
	return true;
}

void tcp_input(void *ctx, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
	       const uint8_t *l4, uint32_t l4_len, uint64_t now)
{
	struct fg_tcp *t = ctx;
	struct tcp_seg_in s = { .f = f, .ws = -1 };
	struct fg_tcp_conn *c;
	uint32_t doff;

	t->now = now;
	fg_stats_inc(t->st, FG_CTR_TCP_RX_SEGS);
	if (l3->family == AF_INET6) {
		s.k.v6 = 1;
		memcpy(s.k.laddr, l3->dst, FG_IP6_ALEN);
		memcpy(s.k.raddr, l3->src, FG_IP6_ALEN);
	} else {
		memcpy(s.k.laddr, l3->dst, 4);
		memcpy(s.k.raddr, l3->src, 4);
	}
	/* a merged packet's header is in the frame's own buffer (net.h) */
	if (l4_len < FG_TCP_HLEN + fg_rx_more_len(f) ||
	    (doff = (uint32_t)(l4[12] >> 4) * 4) < FG_TCP_HLEN ||
	    doff > l4_len - fg_rx_more_len(f) || !source_ok(&s.k)) {
		/* short, bad data offset, or a source no connection can have */
		fg_stats_inc(t->st, t->passive ? FG_CTR_PASSIVE_BAD : FG_CTR_TCP_RX_BAD);
		return;
	}
	if (!checksum_ok(t, f, l3, l4, l4_len, doff)) {
		fg_stats_inc(t->st, FG_CTR_TCP_RX_BAD_CSUM);
		return;
	}
	s.k.rport = fg_rd16(l4);
	s.k.lport = fg_rd16(l4 + 2);
	s.seq = fg_rd32(l4 + 4);
	s.ack = fg_rd32(l4 + 8);
	s.flags = l4[13] & 0x3f;
	s.wnd = fg_rd16(l4 + 14);
	s.data = l4 + doff;
	s.len = l4_len - doff;
	if (doff > FG_TCP_HLEN && ((s.flags & TH_SYN) || !t->passive))
		parse_options(&s, l4 + FG_TCP_HLEN, doff - FG_TCP_HLEN, s.flags & TH_SYN);
	if (t->cfg.no_sack) {
		s.sack = false;		/* neither offered nor used: NewReno */
		s.n_sack_blk = 0;
	}
	if (t->passive) {
		tcp_passive_input(t, &s);
		return;
	}
	c = tcp_lookup(t, &s.k);
	if (c) {
		conn_input(c, &s);
	} else if (tcp_listening(t, &s.k)) {
		listen_input(t, &s);
	} else {
		fg_stats_inc(t->st, FG_CTR_TCP_RX_NO_CONN);
		closed_reply(t, &s);
	}
}

