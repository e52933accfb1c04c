/* SPDX-License-Identifier: MIT */
/*
 * tcp_connect.c — the active open (RFC 9293 3.10.1 OPEN, active), SYN-SENT
 * (3.10.7.3) and its timer. The client half of the state machine: feedgen
 * on a DPDK port opens its peers' connections with it; everything after
 * ESTABLISHED is the same code as a passive open's.
 *
 * An open, in steps:
 *
 *   1. fg_tcp_connect: a block for the 4-tuple, IPv4 or IPv6 (an
 *      ephemeral port when the app gave none: the first free one from a
 *      rotating start in 49152-65535, so a peer's TIME-WAIT blocks are
 *      never reused, that the config's port_ok predicate accepts — the
 *      DPDK worker's says whether the answers would reach its RX queue by
 *      the port's RSS; none accepted: -EADDRNOTAVAIL), the
 *      ISS from the keyed clock (tcp_iss), SYN-SENT, the app's context
 *      attached (CF_ACTIVE: it hears of every end, on_close).
 *   2. The peer's MAC from net's ARP cache, or for IPv6 its neighbour
 *      cache (Neighbour Discovery, RFC 4861 7.2). Known: the SYN goes now
 *      (MSS from our MTU, our window scale, SACK-permitted; the window
 *      unscaled, RFC 7323 2.2), the retransmission timer runs at RTO.
 *      Unknown: net sends an ARP request or a Neighbour Solicitation (at
 *      most one a second per address) and the timer polls the cache every
 *      tick (CF_NO_MAC); the SYN leaves with the first tick after the
 *      reply or advertisement.
 *   3. SYN-SENT, a segment arrives (3.10.7.3):
 *        ACK outside (ISS, SND.NXT]    -> RST <SEQ=SEG.ACK> unless RST; drop
 *        RST with an acceptable ACK    -> refused: on_close(rst); RST without
 *                                         ACK dropped (RFC 5961 3.2: never a
 *                                         guessable reset)
 *        SYN with our SYN acknowledged -> ESTABLISHED, the ACK sent, the
 *                                         peer's options taken (MSS, window
 *                                         scale only if both sent it, SACK),
 *                                         an RTT sample unless the SYN was
 *                                         sent again (Karn), on_connect; text
 *                                         and FIN after the SYN go on to the
 *                                         ordinary checks
 *        SYN without ACK               -> simultaneous open: SYN-RECEIVED,
 *                                         our SYN-ACK; the peer's ACK then
 *                                         establishes (tcp_establish sends an
 *                                         active block here)
 *        anything else                 -> dropped
 *   4. The timer in SYN-SENT: the SYN again with the RTO doubled (RFC 6298
 *      5.5; at most syn_retries times), then the open is given up:
 *      on_close(timeout). Waiting for ARP or ND counts against the same budget
 *      (the time the last SYN retransmission would have expired by).
 *
 * Closing in SYN-SENT (fg_tcp_close) is remembered: once established the
 * connection goes straight to FIN-WAIT-1 without on_connect. An abort in
 * SYN-SENT sends nothing (3.10.5: the peer holds no state to reset).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/wire.h"
#include "tcp_int.h"

#define EPH_LOW 49152u		/* RFC 6335 6: the dynamic ports */
#define EPH_COUNT 16384u

/* ---------------------------------------------------------------- open */

static void key_endpoints(const struct tcp_tuple *k, struct fg_endpoint *local,
			  struct fg_endpoint *peer)
{
	int family = k->v6 ? AF_INET6 : AF_INET;

	memset(local, 0, sizeof(*local));
	memset(peer, 0, sizeof(*peer));
	local->family = peer->family = family;
	memcpy(local->addr, k->laddr, FG_IP6_ALEN);
	memcpy(peer->addr, k->raddr, FG_IP6_ALEN);
	local->port = k->lport;
	peer->port = k->rport;
}

/* The first free port for key `k` (its lport 0) from a start that rotates
 * with every open, and that cfg.port_ok accepts (when there is one): 0
 * and *port, -EADDRINUSE (none free) or -EADDRNOTAVAIL (none accepted). */
static int ephemeral_port(struct fg_tcp *t, struct tcp_tuple k, uint16_t *port)
{
	uint32_t start = tcp_conn_hash(t, &k) + t->eph_next++;
	struct fg_endpoint local, peer;
	bool any_free = false;

	key_endpoints(&k, &local, &peer);
	for (uint32_t i = 0; i < EPH_COUNT; i++) {
		k.lport = (uint16_t)(EPH_LOW + (start + i) % EPH_COUNT);
		if (tcp_lookup(t, &k))
			continue;
		any_free = true;
		local.port = k.lport;
		if (t->cfg.port_ok && !t->cfg.port_ok(t->cfg.port_ok_ctx, &local, &peer))
			continue;
		*port = k.lport;
		return 0;
	}
	if (!any_free)
		return -EADDRINUSE;
	fg_stats_inc(t->st, FG_CTR_TCP_CONNECT_NO_PORT);
	return -EADDRNOTAVAIL;
}

/* Step 2: the SYN now, or the cache polled every tick until the reply. */
static void syn_send_or_wait(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	int rc = c->k.v6 ? fg_net_nd_resolve(t->net, c->k.raddr, c->rmac, t->now)
			 : fg_net_arp_resolve(t->net, fg_rdaddr(c->k.raddr), c->rmac, t->now);

	if (rc == 0) {
		c->flags &= ~CF_NO_MAC;
		if (c->retries == 0)
			c->rtt_start = t->now;	/* the first SYN: Karn allows a sample */
		tcp_send_syn(c);
		c->t_rexmt = t->now + FG_MIN(c->rto << FG_MIN(c->backoff, 16), t->cfg.rto_max_ns);
	} else {
		c->flags |= CF_NO_MAC;
		c->t_rexmt = t->now + t->cfg.timer_tick_ns;
	}
	tcp_timer_update(c);
}

static bool ipv6_peer_ok(const struct fg_tcp *t, const uint8_t *a)
{
	static const uint8_t loopback[FG_IP6_ALEN] = { [15] = 1 };
	static const uint8_t unspecified[FG_IP6_ALEN];

	/* as tcp_input refuses sources: ::, ::1, multicast, and ourselves */
	return memcmp(a, unspecified, FG_IP6_ALEN) && memcmp(a, loopback, FG_IP6_ALEN) &&
	       a[0] != 0xff && !fg_net_is_local_ipv6(t->net, a);
}

static int open_check(const struct fg_tcp *t, const struct fg_endpoint *local,
		      const struct fg_endpoint *peer)
{
	uint32_t laddr, raddr;

	if (t->passive)
		return -EOPNOTSUPP;
	if (local->family != peer->family ||
	    (local->family != AF_INET && local->family != AF_INET6))
		return -EAFNOSUPPORT;
	if (local->family == AF_INET6) {
		if (!fg_net_is_local_ipv6(t->net, local->addr))
			return -EADDRNOTAVAIL;
		return ipv6_peer_ok(t, peer->addr) && peer->port ? 0 : -EINVAL;
	}
	laddr = fg_rdaddr(local->addr);
	raddr = fg_rdaddr(peer->addr);
	if (!fg_net_is_local_ipv4(t->net, laddr))
		return -EADDRNOTAVAIL;
	/* as tcp_input refuses sources: no connection can have these */
	if (peer->addr[0] == 0 || peer->addr[0] >= 224 || raddr == 0xffffffffu || !peer->port ||
	    fg_net_is_local_ipv4(t->net, raddr))
		return -EINVAL;
	return 0;
}

struct fg_tcp_conn *fg_tcp_connect(struct fg_tcp *t, const struct fg_endpoint *local,
				   const struct fg_endpoint *peer, void *ctx, uint64_t now_ns,
				   int *err)
{
	struct tcp_tuple k;
	struct fg_tcp_conn *c;
	int rc = open_check(t, local, peer);

	if (rc < 0)
		goto out_err;
	if (now_ns > t->now)
		t->now = now_ns;
	memset(&k, 0, sizeof(k));	/* an IPv4 key: 4 octets, 12 zeros */
	k.v6 = local->family == AF_INET6;
	memcpy(k.laddr, local->addr, k.v6 ? FG_IP6_ALEN : 4);
	memcpy(k.raddr, peer->addr, k.v6 ? FG_IP6_ALEN : 4);
	k.rport = peer->port;
	k.lport = local->port;
	if (!k.lport && (rc = ephemeral_port(t, k, &k.lport)) < 0)
		goto out_err;
	if (tcp_lookup(t, &k)) {
		rc = -EADDRINUSE;
		goto out_err;
	}
	c = tcp_conn_alloc(t);
	if (!c) {
		rc = -ENOBUFS;
		goto out_err;
	}
	c->k = k;
	c->mss = tcp_mss_local(t, &k);	/* until the SYN-ACK says the peer's */
	c->rto = t->cfg.rto_init_ns;
	c->ssthresh = UINT32_MAX / 2;
	c->iss = tcp_iss(t, &k, t->now);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->iss + 1;
	c->last_rx = t->now;		/* SYN-SENT: when the open began */
	c->ctx = ctx;
	c->flags |= CF_ACTIVE | CF_APP;
	tcp_set_state(c, FG_TCP_SYN_SENT);
	tcp_conn_insert(c);
	fg_stats_inc(t->st, FG_CTR_TCP_CONNECTS);
	syn_send_or_wait(c);
	return c;

out_err:
	if (err)
		*err = rc;
	return NULL;
}

/* ---------------------------------------------------------------- SYN-SENT */

int tcp_connected(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	tcp_set_state(c, FG_TCP_ESTABLISHED);
	c->retries = 0;
	c->backoff = 0;
	c->t_rexmt = 0;
	c->last_rx = t->now;
	fg_stats_inc(t->st, FG_CTR_TCP_CONNECTED);
	tcp_mark_pending(c);
	if (c->flags & CF_APP_CLOSED) {
		/* closed while opening: the FIN follows at once */
		tcp_set_state(c, FG_TCP_FIN_WAIT_1);
		return 0;
	}
	if (t->ops->on_connect)
		t->ops->on_connect(c->ctx, c);
	return (c->flags & CF_FREEING) ? -1 : 0;
}

/* The peer's SYN options and sequence numbers: the synchronized state. */
static void take_syn(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;

	memcpy(c->rmac, s->f->data + 6, FG_ETH_ALEN);
	c->irs = s->seq;
	c->rcv_nxt = c->last_ack_sent = s->seq + 1;
	c->rcv_adv = c->rcv_nxt + FG_MIN(t->cfg.rcvbuf, 65535u);	/* what our SYN said */
	c->mss = FG_MAX(FG_MIN(s->mss ? s->mss : TCP_DEFAULT_MSS, tcp_mss_local(t, &c->k)), 64u);
	if (s->ws >= 0) {
		/* RFC 7323 2.2: scaling only when both SYNs carried the option */
		c->flags |= CF_WS_OK;
		c->snd_wscale = (uint8_t)s->ws;
		c->rcv_wscale = t->rcv_wscale;
	}
	if (s->sack)
		c->flags |= CF_SACK_OK;	/* (never with cfg.no_sack: tcp_input drops the option) */
	/* RFC 5681 3.1 (RFC 3390): IW = min(4*SMSS, max(2*SMSS, 4380)) */
	c->cwnd = FG_MIN(4 * c->mss, FG_MAX(2 * c->mss, 4380u));
	/* RFC 7323 2.2: the window of a SYN is not scaled */
	c->snd_wnd = c->max_snd_wnd = s->wnd;
	c->snd_wl1 = s->seq;
}

/* Simultaneous open (3.10.7.3, fourth step, no ACK): SYN-RECEIVED. */
static void simultaneous(struct fg_tcp_conn *c, const struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;

	take_syn(c, s);
	c->snd_wl2 = c->iss;
	tcp_set_state(c, FG_TCP_SYN_RCVD);
	c->retries = 0;
	c->backoff = 0;
	tcp_send_synack(c);
	c->t_rexmt = t->now + c->rto;
	tcp_timer_update(c);
}

void tcp_syn_sent_input(struct fg_tcp_conn *c, struct tcp_seg_in *s)
{
	struct fg_tcp *t = c->tcp;
	bool ack_ok = false;

	if (s->flags & TH_ACK) {
		/* first: the ACK must acknowledge our SYN and nothing beyond */
		if (SEQ_LEQ(s->ack, c->iss) || SEQ_GT(s->ack, c->snd_nxt)) {
			fg_stats_inc(t->st, FG_CTR_TCP_RX_SYN_SENT_BAD);
			if (!(s->flags & TH_RST))
				tcp_reply_rst(t, s->f, &s->k, s->ack, 0, TH_RST);
			return;
		}
		ack_ok = true;
	}
	if (s->flags & TH_RST) {
		/* second: refused, if the RST answers our SYN */
		if (ack_ok) {
			fg_stats_inc(t->st, FG_CTR_TCP_CONNECT_REFUSED);
			tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
		} else {
			fg_stats_inc(t->st, FG_CTR_TCP_RX_SYN_SENT_BAD);
		}
		return;
	}
	if (!(s->flags & TH_SYN) || (c->flags & CF_NO_MAC)) {
		/* fifth: neither SYN nor RST; or a SYN to a SYN never sent */
		fg_stats_inc(t->st, FG_CTR_TCP_RX_SYN_SENT_BAD);
		return;
	}
	if (!ack_ok) {
		simultaneous(c, s);
		return;
	}
	/* fourth: SYN, our SYN acknowledged */
	take_syn(c, s);
	c->snd_una = s->ack;
	c->snd_wl2 = s->ack;
	if (c->retries == 0)
		tcp_rtt_sample(c, t->now - c->rtt_start);
	c->flags |= CF_ACK_NOW;
	if (tcp_connected(c) < 0)
		return;
	/* text or a FIN after the SYN: the ordinary checks from here */
	s->seq++;
	s->flags &= (uint8_t)~TH_SYN;
	if (s->len && c->state == FG_TCP_ESTABLISHED)
		tcp_data_input(c, s);
	if ((s->flags & TH_FIN) && s->seq + s->len == c->rcv_nxt && !(c->flags & CF_FREEING))
		tcp_fin_input(c);
	if (!(c->flags & CF_FREEING))
		tcp_timer_update(c);
}

void tcp_syn_sent_timeout(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint64_t budget = 0;

	if (c->flags & CF_NO_MAC) {
		/* the whole schedule of SYNs, as the ARP wait's bound */
		for (unsigned i = 0; i <= t->cfg.syn_retries; i++)
			budget += FG_MIN(t->cfg.rto_init_ns << FG_MIN(i, 16u), t->cfg.rto_max_ns);
		if (t->now - c->last_rx >= budget)
			goto out_give_up;
		syn_send_or_wait(c);
		return;
	}
	if (++c->retries > t->cfg.syn_retries)
		goto out_give_up;
	c->backoff++;
	fg_stats_inc(t->st, FG_CTR_TCP_SYN_RETRANS);
	syn_send_or_wait(c);
	return;

out_give_up:
	fg_stats_inc(t->st, FG_CTR_TCP_CONNECT_TIMEOUT);
	tcp_conn_drop(c, FG_TCP_CLOSE_TIMEOUT, true);
}
