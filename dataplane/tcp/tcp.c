/* SPDX-License-Identifier: MIT */
/*
 * tcp.c — the TCP instance: preallocated pools (connection blocks, send
 * buffers, held-segment descriptors), the keyed connection table, state
 * transitions with their counters, connection teardown, and the calls the
 * application makes (tcp.h). Segment arrival is in tcp_input.c, the send
 * path in tcp_output.c, timers in tcp_timer.c.
 *
 * Teardown is deferred: a connection that ends is unhashed, its timers and
 * queues released and its app told at once, but its block goes back to
 * the free list only at the end of the burst, so a callback that aborts a
 * connection can never pull the block from under the code that called it.
 */
#include <errno.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"
#include "floodgate/siphash.h"
#include "tcp_int.h"

static const char *const state_names[FG_TCP_STATE__COUNT] = {
	[FG_TCP_CLOSED] = "CLOSED",
	[FG_TCP_LISTEN] = "LISTEN",
	[FG_TCP_SYN_SENT] = "SYN-SENT",
	[FG_TCP_SYN_RCVD] = "SYN-RECEIVED",
	[FG_TCP_ESTABLISHED] = "ESTABLISHED",
	[FG_TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[FG_TCP_LAST_ACK] = "LAST-ACK",
	[FG_TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	[FG_TCP_FIN_WAIT_2] = "FIN-WAIT-2",
	[FG_TCP_CLOSING] = "CLOSING",
	[FG_TCP_TIME_WAIT] = "TIME-WAIT",
};

static const enum fg_counter state_ctr[FG_TCP_STATE__COUNT] = {
	[FG_TCP_CLOSED] = FG_CTR_TCP_TO_CLOSED,
	[FG_TCP_LISTEN] = FG_CTR_TCP_TO_CLOSED,	/* never entered */
	[FG_TCP_SYN_SENT] = FG_CTR_TCP_TO_SYN_SENT,
	[FG_TCP_SYN_RCVD] = FG_CTR_TCP_TO_SYN_RCVD,
	[FG_TCP_ESTABLISHED] = FG_CTR_TCP_TO_ESTABLISHED,
	[FG_TCP_CLOSE_WAIT] = FG_CTR_TCP_TO_CLOSE_WAIT,
	[FG_TCP_LAST_ACK] = FG_CTR_TCP_TO_LAST_ACK,
	[FG_TCP_FIN_WAIT_1] = FG_CTR_TCP_TO_FIN_WAIT_1,
	[FG_TCP_FIN_WAIT_2] = FG_CTR_TCP_TO_FIN_WAIT_2,
	[FG_TCP_CLOSING] = FG_CTR_TCP_TO_CLOSING,
	[FG_TCP_TIME_WAIT] = FG_CTR_TCP_TO_TIME_WAIT,
};

static const char *const close_names[] = {
	[FG_TCP_CLOSE_FIN] = "fin",
	[FG_TCP_CLOSE_RST] = "rst",
	[FG_TCP_CLOSE_TIMEOUT] = "timeout",
	[FG_TCP_CLOSE_IDLE] = "idle",
	[FG_TCP_CLOSE_ERROR] = "error",
};

static const enum fg_counter close_ctr[] = {
	[FG_TCP_CLOSE_FIN] = FG_CTR_TCP_CLOSE_FIN,
	[FG_TCP_CLOSE_RST] = FG_CTR_TCP_CLOSE_RST,
	[FG_TCP_CLOSE_TIMEOUT] = FG_CTR_TCP_CLOSE_TIMEOUT,
	[FG_TCP_CLOSE_IDLE] = FG_CTR_TCP_CLOSE_IDLE,
	[FG_TCP_CLOSE_ERROR] = FG_CTR_TCP_CLOSE_ERROR,
};

const char *fg_tcp_state_name(enum fg_tcp_state s)
{
	return (unsigned)s < FG_TCP_STATE__COUNT ? state_names[s] : "?";
}

const char *fg_tcp_close_reason_name(enum fg_tcp_close_reason r)
{
	return (unsigned)r < FG_ARRAY_SIZE(close_names) ? close_names[r] : "?";
}

/* ---------------------------------------------------------------- config */

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int config_defaults(struct fg_tcp_config *c)
{
#define DEF(f, v) \
	do { \
		if (!c->f) \
			c->f = (v); \
	} while (0)
	DEF(max_conns, 4096);
	DEF(syn_backlog, FG_MIN(256u, c->max_conns));
	DEF(syn_backlog_per_peer, 16);
	DEF(sndbuf, 32 * 1024);
	DEF(sndref_max, 8u << 20);
	DEF(sndref_pieces, 65536);
	DEF(rcvbuf, 256 * 1024);
	DEF(rx_segs, c->max_conns * 64);
	DEF(rx_segs_per_conn, 256);
	DEF(ooo_segs_per_conn, 64);
	DEF(rto_min_ns, 200 * NS_PER_MS);
	DEF(rto_max_ns, 60000 * NS_PER_MS);
	DEF(rto_init_ns, 1000 * NS_PER_MS);
	DEF(max_retries, 10);
	DEF(synack_retries, 4);
	DEF(syn_retries, 6);
	DEF(delack_ns, 40 * NS_PER_MS);
	DEF(idle_timeout_ns, 600000 * NS_PER_MS);
	DEF(time_wait_ns, 60000 * NS_PER_MS);
	DEF(timer_tick_ns, 1u << 20);
	DEF(timer_slots, 4096);
#undef DEF
	if (c->n_listen > FG_TCP_MAX_LISTEN || c->max_conns > (1u << 24) ||
	    c->syn_backlog > c->max_conns || c->syn_backlog_per_peer > 255 ||
	    c->sndbuf < 1024 || c->rcvbuf < 4096 || c->rcvbuf > (1u << 30) ||
	    c->rx_segs_per_conn > 65535 || c->ooo_segs_per_conn > c->rx_segs_per_conn ||
	    !pow2(c->timer_tick_ns) || !pow2(c->timer_slots) || c->timer_slots < 16 ||
	    c->rto_min_ns > c->rto_max_ns || c->max_retries > 30 || c->synack_retries > 30 ||
	    c->syn_retries > 30 || c->sndref_max > (1u << 30) || c->sndref_pieces > (1u << 24))
		return -EINVAL;
	for (unsigned i = 0; i < c->n_listen; i++)
		if (!c->listen[i].port ||
		    (c->listen[i].family != AF_INET && c->listen[i].family != AF_INET6))
			return -EINVAL;
	return 0;
}

/* With an exception path, a segment is TCP's only when it is for a listen
 * endpoint: every connection of floodgate's stack is one a peer opened to
 * it (only feedgen's client instances open, and they have no exception
 * path), so the rest — the box's own SSH, the relay's kernel connections
 * coming back — is the kernel's. */
static bool tcp_wants(const void *ctx, const struct fg_net_l3 *l3, const uint8_t *l4,
		      uint32_t len)
{
	struct tcp_tuple k = { .v6 = l3->family == AF_INET6 };

	if (len < 4)
		return false;
	memcpy(k.laddr, l3->dst, k.v6 ? FG_IP6_ALEN : 4);
	k.lport = fg_rd16(l4 + 2);
	return tcp_listening(ctx, &k);
}

static const struct fg_net_l4_ops tcp_l4_ops = {
	.input = tcp_input, .end_of_burst = tcp_end_burst, .timers = tcp_timers,
	.next_deadline = tcp_next_deadline, .icmp_error = tcp_icmp_error, .wants = tcp_wants,
};

static int alloc_pools(struct fg_tcp *t)
{
	const struct fg_tcp_config *c = &t->cfg;
	uint32_t hsize = 16, psize = 256;

	while (hsize < c->max_conns * 2)
		hsize <<= 1;
	while (psize < c->syn_backlog * 4)
		psize <<= 1;
	t->conns = calloc(c->max_conns, sizeof(*t->conns));
	t->sbufs = malloc((size_t)c->max_conns * c->sndbuf);
	t->htab = calloc(hsize, sizeof(*t->htab));
	t->segs = calloc(c->rx_segs, sizeof(*t->segs));
	t->syn_peer = calloc(psize, 1);
	t->srefs = calloc(c->sndref_pieces, sizeof(*t->srefs));
	if (!t->conns || !t->sbufs || !t->htab || !t->segs || !t->syn_peer || !t->srefs)
		return -ENOMEM;
	t->hmask = hsize - 1;
	t->syn_peer_mask = psize - 1;
	for (unsigned i = c->max_conns; i-- > 0;) {
		struct fg_tcp_conn *k = &t->conns[i];

		k->tcp = t;
		k->sbuf = t->sbufs + (size_t)i * c->sndbuf;
		k->hnext = t->free_conns;
		t->free_conns = k;
	}
	for (unsigned i = c->rx_segs; i-- > 0;) {
		t->segs[i].next = t->free_segs;
		t->free_segs = &t->segs[i];
	}
	for (unsigned i = c->sndref_pieces; i-- > 0;) {
		t->srefs[i].next = t->free_srefs;
		t->free_srefs = &t->srefs[i];
	}
	return tcp_wheel_init(t);
}

static void free_pools(struct fg_tcp *t)
{
	free(t->conns);
	free(t->sbufs);
	free(t->htab);
	free(t->segs);
	free(t->syn_peer);
	free(t->srefs);
	tcp_wheel_free(t);
}

struct fg_tcp *fg_tcp_create(struct fg_net *net, const struct fg_tcp_config *cfg,
			     const struct fg_tcp_app_ops *ops, void *app)
{
	struct fg_tcp *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cfg = *cfg;
	/* without listen addresses a client only: nothing to accept */
	if (config_defaults(&t->cfg) < 0 || !ops || (t->cfg.n_listen && !ops->on_accept) ||
	    !ops->on_data || !ops->on_close) {
		FG_LOG_ERR("tcp", "bad config: listen addresses, limits or app ops");
		goto out_free_tcp;
	}
	if (alloc_pools(t) < 0) {
		FG_LOG_ERR("tcp", "cannot allocate pools for %u connections", t->cfg.max_conns);
		goto out_free_pools;
	}
	t->net = net;
	t->st = fg_net_stats(net);
	t->ops = ops;
	t->app = app;
	t->mss_local = fg_net_mtu(net) - 40;
	t->passive = fg_net_passive(net);
	t->segs_cap = t->passive ? UINT16_MAX : t->cfg.rx_segs_per_conn;
	t->backlog_at = t->passive ? t->cfg.rx_segs_per_conn : 0;
	/* an eighth of the pool, at least 16, at most half */
	t->segs_reserve = t->passive ? 0 : FG_MIN(FG_MAX(t->cfg.rx_segs / 8, 16u), t->cfg.rx_segs / 2);
	/* RFC 7323 2.3: the smallest shift that lets rcvbuf be advertised */
	while (t->rcv_wscale < TCP_MAX_WSCALE && (t->cfg.rcvbuf >> t->rcv_wscale) > 65535)
		t->rcv_wscale++;
	t->sip_k0 = fg_mix64_splitmix(t->cfg.secret ^ 0x6a09e667f3bcc908ull);
	t->sip_k1 = fg_mix64_splitmix(t->cfg.secret ^ 0xbb67ae8584caa73bull);
	if (fg_net_l4_register(net, FG_IP_PROTO_TCP, &tcp_l4_ops, t) < 0) {
		FG_LOG_ERR("tcp", "the net instance has a TCP handler already");
		goto out_free_pools;
	}
	return t;

out_free_pools:
	free_pools(t);
out_free_tcp:
	free(t);
	return NULL;
}

void fg_tcp_destroy(struct fg_tcp *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->cfg.max_conns; i++) {
		tcp_rxq_flush(&t->conns[i]);
		tcp_sendq_flush(&t->conns[i]);
	}
	fg_net_l4_unregister(t->net, FG_IP_PROTO_TCP);
	free_pools(t);
	free(t);
}

/* ---------------------------------------------------------------- table */

/* The previous segment's connection first: a burst often carries several
 * segments of one connection, and the keyed hash costs more than the
 * compare. */
struct fg_tcp_conn *tcp_lookup(struct fg_tcp *t, const struct tcp_tuple *k)
{
	struct fg_tcp_conn *c = t->last;

	if (c && tcp_tuple_eq(&c->k, k))
		return c;
	c = t->htab[tcp_conn_hash(t, k) & t->hmask];
	for (; c; c = c->hnext) {
		if (tcp_tuple_eq(&c->k, k)) {
			t->last = c;
			return c;
		}
	}
	return NULL;
}

void tcp_conn_insert(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	struct fg_tcp_conn **b =
		&t->htab[tcp_conn_hash(t, &c->k) & t->hmask];

	c->hnext = *b;
	*b = c;
}

static void conn_unhash(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	struct fg_tcp_conn **pp =
		&t->htab[tcp_conn_hash(t, &c->k) & t->hmask];

	if (t->last == c)
		t->last = NULL;
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == c) {
			*pp = c->hnext;
			c->hnext = NULL;
			return;
		}
	}
}

static void tw_unlink(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	if (c->twprev)
		c->twprev->twnext = c->twnext;
	else
		t->tw_head = c->twnext;
	if (c->twnext)
		c->twnext->twprev = c->twprev;
	else
		t->tw_tail = c->twprev;
	c->twnext = c->twprev = NULL;
}

static void conn_reset_block(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint8_t *sbuf = c->sbuf;

	tcp_sendq_flush(c);	/* nothing queued by now: a guard */
	memset(c, 0, sizeof(*c));
	c->tcp = t;
	c->sbuf = sbuf;
}

struct fg_tcp_conn *tcp_conn_alloc(struct fg_tcp *t)
{
	struct fg_tcp_conn *c = t->free_conns;

	if (c) {
		t->free_conns = c->hnext;
	} else if (t->tw_head && !(t->tw_head->flags & CF_PENDING)) {
		/* pool empty: the oldest TIME-WAIT block is the cheapest loss */
		c = t->tw_head;
		fg_stats_inc(t->st, FG_CTR_TCP_TW_RECYCLED);
		tw_unlink(c);
		conn_unhash(c);
		tcp_timer_cancel(c);
		t->n_conns_used--;
		fg_stats_inc(t->st, FG_CTR_TCP_TO_CLOSED);
	} else {
		return NULL;
	}
	conn_reset_block(c);
	t->n_conns_used++;
	return c;
}

uint8_t *tcp_syn_peer(struct fg_tcp *t, const struct tcp_tuple *k)
{
	return &t->syn_peer[tcp_peer_hash(t, k) & t->syn_peer_mask];
}

void tcp_syn_peer_dec(struct fg_tcp *t, const struct tcp_tuple *k)
{
	uint8_t *n = tcp_syn_peer(t, k);

	if (*n)
		(*n)--;
}

void tcp_set_state(struct fg_tcp_conn *c, enum fg_tcp_state s)
{
	struct fg_tcp *t = c->tcp;

	if (c->state == FG_TCP_SYN_RCVD) {
		t->n_syn_rcvd--;
		tcp_syn_peer_dec(t, &c->k);
	}
	if (s == FG_TCP_SYN_RCVD) {
		t->n_syn_rcvd++;
		(*tcp_syn_peer(t, &c->k))++;
	}
	c->state = (uint8_t)s;
	fg_stats_inc(t->st, state_ctr[s]);
}

void tcp_mark_pending(struct fg_tcp_conn *c)
{
	if (c->flags & (CF_PENDING | CF_FREEING))
		return;
	c->flags |= CF_PENDING;
	c->pnext = c->tcp->pending;
	c->tcp->pending = c;
}

uint32_t tcp_rx_used(const struct fg_tcp_conn *c)
{
	return c->rxq_bytes + c->ooo_bytes + c->held;
}

static void seg_list_free(struct fg_tcp *t, struct tcp_seg *s)
{
	while (s) {
		struct tcp_seg *n = s->next;

		fg_net_buf_unref(t->net, s->handle);
		s->next = t->free_segs;
		t->free_segs = s;
		t->n_segs_used--;
		s = n;
	}
}

void tcp_rxq_flush(struct fg_tcp_conn *c)
{
	seg_list_free(c->tcp, c->rxq);
	seg_list_free(c->tcp, c->ooo);
	c->rxq = c->rxq_tail = c->ooo = NULL;
	c->rxq_off = c->rxq_bytes = c->ooo_bytes = 0;
	c->n_segs = c->n_ooo = 0;
	if (c->flags & CF_BACKLOG)
		tcp_passive_backlog(c);
}

void tcp_app_close_notify(struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	struct fg_tcp *t = c->tcp;

	if (!(c->flags & CF_APP))
		return;
	c->flags &= ~CF_APP;
	fg_stats_inc(t->st, close_ctr[why]);
	t->ops->on_close(c->ctx, c, why);
	c->ctx = NULL;
}

void tcp_conn_drop(struct fg_tcp_conn *c, enum fg_tcp_close_reason why, bool notify)
{
	struct fg_tcp *t = c->tcp;

	if (c->flags & CF_FREEING)
		return;
	/* an active open's app holds the conn from fg_tcp_connect on: it is
	 * told of every end but its own abort (which detached it) */
	if (notify || (c->flags & CF_ACTIVE))
		tcp_app_close_notify(c, why);
	if (c->flags & CF_FREEING)
		return;	/* the app aborted from inside on_close */
	c->flags &= ~CF_APP;
	if (c->state == FG_TCP_TIME_WAIT)
		tw_unlink(c);
	tcp_set_state(c, FG_TCP_CLOSED);
	conn_unhash(c);
	tcp_timer_cancel(c);
	tcp_rxq_flush(c);
	tcp_sendq_flush(c);
	c->flags |= CF_FREEING;
	c->hnext = t->freeing;
	t->freeing = c;
}

void tcp_enter_time_wait(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;

	tcp_set_state(c, FG_TCP_TIME_WAIT);
	tcp_app_close_notify(c, FG_TCP_CLOSE_FIN);
	tcp_rxq_flush(c);
	c->flags &= ~(CF_PERSIST | CF_RTT_TIMING);
	c->t_rexmt = 0;
	c->t_2msl = t->now + t->cfg.time_wait_ns;
	c->twprev = t->tw_tail;
	c->twnext = NULL;
	if (t->tw_tail)
		t->tw_tail->twnext = c;
	else
		t->tw_head = c;
	t->tw_tail = c;
	tcp_timer_update(c);
}

static void reap(struct fg_tcp *t)
{
	while (t->freeing) {
		struct fg_tcp_conn *c = t->freeing;

		t->freeing = c->hnext;
		/* the pending list is empty here, so no stale link survives */
		FG_ASSERT(!(c->flags & CF_PENDING));
		conn_reset_block(c);
		c->hnext = t->free_conns;
		t->free_conns = c;
		t->n_conns_used--;
	}
}

void tcp_end_burst(void *ctx, uint64_t now)
{
	struct fg_tcp *t = ctx;
	struct fg_tcp_conn *c;

	t->now = now;
	while ((c = t->pending)) {
		t->pending = c->pnext;
		c->pnext = NULL;
		c->flags &= ~CF_PENDING;
		if (c->flags & CF_FREEING)
			continue;	/* on the freeing list already */
		tcp_deliver(c);
		if (c->flags & CF_FREEING)
			continue;
		if (!t->passive)
			tcp_output(c);
		else if (c->flags & CF_APP_CLOSED)
			tcp_passive_closed(c);
	}
	reap(t);
}

unsigned fg_tcp_conns_in_use(const struct fg_tcp *t)
{
	return t->n_conns_used;
}

unsigned fg_tcp_segs_in_use(const struct fg_tcp *t)
{
	return t->n_segs_used;
}

unsigned fg_tcp_drop_all(struct fg_tcp *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->cfg.max_conns; i++) {
		struct fg_tcp_conn *c = &t->conns[i];

		if (c->state == FG_TCP_CLOSED || (c->flags & CF_FREEING))
			continue;
		tcp_conn_drop(c, FG_TCP_CLOSE_RST, true);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- app */

static bool can_send(const struct fg_tcp_conn *c)
{
	return !(c->flags & (CF_APP_CLOSED | CF_FREEING)) &&
	       (c->state == FG_TCP_ESTABLISHED || c->state == FG_TCP_CLOSE_WAIT);
}

/* `n` octets (at most the ring's space) onto the end of the stream. */
static void ring_put(struct fg_tcp_conn *c, const void *buf, uint32_t n)
{
	uint32_t size = c->tcp->cfg.sndbuf;
	uint32_t tail = (c->sb_head + c->sb_ring) % size, first = FG_MIN(n, size - tail);

	memcpy(c->sbuf + tail, buf, first);
	memcpy(c->sbuf, (const uint8_t *)buf + first, n - first);
	c->sb_ring += n;
	c->sb_len += n;
}

int fg_tcp_send(struct fg_tcp_conn *c, const void *buf, uint32_t len)
{
	uint32_t size = c->tcp->cfg.sndbuf, n;

	if (!can_send(c))
		return -ENOTCONN;
	if (c->tcp->passive) {
		/* observe only: answers are decided, counted, sent nowhere */
		fg_stats_add(c->tcp->st, FG_CTR_PASSIVE_ANSWER_BYTES, len);
		return (int)len;
	}
	n = FG_MIN(len, tcp_ring_space(c));
	ring_put(c, buf, n);
	if (n < len) {
		fg_stats_inc(c->tcp->st, FG_CTR_TCP_SEND_FULL);
		if (!(c->flags & CF_WANT_WRITE))
			fg_tcp_want_writable(c, size / 4);
	}
	if (n)
		tcp_mark_pending(c);
	return (int)n;
}

uint32_t fg_tcp_send_space(const struct fg_tcp_conn *c)
{
	return tcp_ring_space(c);
}

uint32_t fg_tcp_ref_space(const struct fg_tcp_conn *c)
{
	return c->tcp->cfg.sndref_max - c->sr_bytes;
}

uint32_t fg_tcp_conn_unacked(const struct fg_tcp_conn *c)
{
	return c->sb_len;
}

/* Queue one referenced piece at the end of the stream: it extends the
 * last piece when it continues it in the same buffer (no new reference),
 * else takes a descriptor and a reference. */
static void sref_put(struct fg_tcp_conn *c, const struct fg_iov *p)
{
	struct fg_tcp *t = c->tcp;
	struct tcp_sref *d = c->sr_tail;
	uint32_t seq = c->snd_una + c->sb_len;

	if (d && d->handle == p->handle && d->data + d->len == p->base &&
	    d->seq + d->len == seq) {
		d->len += p->len;
	} else {
		d = t->free_srefs;
		t->free_srefs = d->next;
		t->n_srefs_used++;
		*d = (struct tcp_sref){ .data = p->base, .handle = p->handle, .seq = seq,
					.len = p->len };
		fg_net_buf_ref(t->net, p->handle);
		if (c->sr_tail)
			c->sr_tail->next = d;
		else
			c->sr_head = d;
		c->sr_tail = d;
	}
	c->sr_bytes += p->len;
	c->sb_len += p->len;
}

int fg_tcp_send_ref(struct fg_tcp_conn *c, const struct fg_iov *p, unsigned n)
{
	struct fg_tcp *t = c->tcp;
	uint64_t refd = 0, copied = 0;
	unsigned pieces = 0;

	if (!can_send(c)) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (p[i].len && !p[i].base) {
			errno = EINVAL;
			return -1;
		}
		if (!p[i].len)
			continue;
		if (p[i].handle) {
			refd += p[i].len;
			pieces++;
		} else {
			copied += p[i].len;
		}
	}
	if (t->passive) {
		fg_stats_add(t->st, FG_CTR_PASSIVE_ANSWER_BYTES, refd + copied);
		return 0;
	}
	/* all or nothing: every kind of room first */
	if (refd > fg_tcp_ref_space(c) || copied > tcp_ring_space(c) ||
	    pieces > t->cfg.sndref_pieces - t->n_srefs_used) {
		fg_stats_inc(t->st, FG_CTR_TCP_SEND_REF_FULL);
		if (refd > fg_tcp_ref_space(c) || pieces > t->cfg.sndref_pieces - t->n_srefs_used) {
			c->want_ref = (uint32_t)FG_MIN(refd, (uint64_t)t->cfg.sndref_max);
			c->want_pieces = FG_MIN(pieces, t->cfg.sndref_pieces);
			c->flags |= CF_WANT_REF;
		}
		if (copied > tcp_ring_space(c))
			fg_tcp_want_writable(c, (uint32_t)FG_MIN(copied, (uint64_t)t->cfg.sndbuf));
		tcp_mark_pending(c);	/* there may be room already */
		errno = EAGAIN;
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!p[i].len)
			continue;
		if (p[i].handle)
			sref_put(c, &p[i]);
		else
			ring_put(c, p[i].base, p[i].len);
	}
	if (refd + copied)
		tcp_mark_pending(c);
	return 0;
}

void fg_tcp_want_writable(struct fg_tcp_conn *c, uint32_t bytes)
{
	c->want_space = FG_MIN(FG_MAX(bytes, 1u), c->tcp->cfg.sndbuf);
	c->flags |= CF_WANT_WRITE;
	tcp_mark_pending(c);	/* there may be room already */
}

int fg_tcp_close(struct fg_tcp_conn *c)
{
	if (c->flags & (CF_APP_CLOSED | CF_FREEING))
		return 0;
	c->flags |= CF_APP_CLOSED;
	/* inside on_data the queue is flushed once the app says what it took */
	if (!(c->flags & CF_IN_DATA)) {
		if (c->rxq_bytes || c->ooo_bytes)
			fg_stats_add(c->tcp->st, FG_CTR_TCP_RX_AFTER_CLOSE,
				     c->rxq_bytes + c->ooo_bytes);
		tcp_rxq_flush(c);
	}
	/* RFC 9293 3.10.4 CLOSE: the FIN follows the queued data */
	if (c->state == FG_TCP_ESTABLISHED)
		tcp_set_state(c, FG_TCP_FIN_WAIT_1);
	else if (c->state == FG_TCP_CLOSE_WAIT)
		tcp_set_state(c, FG_TCP_LAST_ACK);
	tcp_mark_pending(c);
	return 0;
}

void fg_tcp_abort(struct fg_tcp_conn *c)
{
	if (c->flags & CF_FREEING)
		return;
	/* RFC 9293 3.10.5 ABORT: <SEQ=SND.NXT><CTL=RST>; in SYN-SENT the
	 * block just goes (the peer has nothing to reset) */
	if (c->state != FG_TCP_SYN_SENT)
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_nxt);
	if (c->flags & CF_APP)
		fg_stats_inc(c->tcp->st, FG_CTR_TCP_CLOSE_APP_ABORT);
	c->flags &= ~CF_APP;
	tcp_conn_drop(c, FG_TCP_CLOSE_ERROR, false);
}

void fg_tcp_pause(struct fg_tcp_conn *c)
{
	c->flags |= CF_PAUSED;
}

void fg_tcp_resume(struct fg_tcp_conn *c)
{
	if (!(c->flags & CF_PAUSED))
		return;
	c->flags = (c->flags & ~CF_PAUSED) | CF_DATA_NEW;
	tcp_mark_pending(c);
}

void fg_tcp_hold(struct fg_tcp_conn *c, const struct fg_iov *seg)
{
	fg_net_buf_ref(c->tcp->net, seg->handle);
	c->held += seg->len;
}

void fg_tcp_release(struct fg_tcp_conn *c, const struct fg_iov *seg)
{
	fg_net_buf_unref(c->tcp->net, seg->handle);
	fg_tcp_unaccount(c, seg->len);
}

void fg_tcp_unaccount(struct fg_tcp_conn *c, uint32_t bytes)
{
	FG_ASSERT(bytes <= c->held);
	c->held -= bytes;
	/* the window may open: the end-of-burst pass decides on an update */
	tcp_mark_pending(c);
}

enum fg_tcp_state fg_tcp_conn_state(const struct fg_tcp_conn *c)
{
	return (enum fg_tcp_state)c->state;
}

void *fg_tcp_conn_ctx(const struct fg_tcp_conn *c)
{
	return c->ctx;
}

int fg_tcp_set_listen(struct fg_tcp *t, const struct fg_endpoint *eps, unsigned n)
{
	if (t->passive || n > FG_TCP_MAX_LISTEN || (n && !t->ops->on_accept))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (!eps[i].port || (eps[i].family != AF_INET && eps[i].family != AF_INET6))
			return -EINVAL;
	memcpy(t->cfg.listen, eps, n * sizeof(eps[0]));
	t->cfg.n_listen = n;
	return 0;
}

void fg_tcp_conn_local(const struct fg_tcp_conn *c, struct fg_endpoint *local)
{
	memset(local, 0, sizeof(*local));
	local->family = c->k.v6 ? AF_INET6 : AF_INET;
	memcpy(local->addr, c->k.laddr, c->k.v6 ? FG_IP6_ALEN : 4);
	local->port = c->k.lport;
}

void fg_tcp_conn_peer(const struct fg_tcp_conn *c, struct fg_endpoint *peer)
{
	memset(peer, 0, sizeof(*peer));
	peer->family = c->k.v6 ? AF_INET6 : AF_INET;
	memcpy(peer->addr, c->k.raddr, c->k.v6 ? FG_IP6_ALEN : 4);
	peer->port = c->k.rport;
}

uint32_t fg_tcp_conn_rcv_window(const struct fg_tcp_conn *c)
{
	uint32_t used = tcp_rx_used(c), buf = c->tcp->cfg.rcvbuf;

	return used >= buf ? 0 : buf - used;
}

uint32_t fg_tcp_conn_rcvbuf(const struct fg_tcp_conn *c)
{
	return c->tcp->cfg.rcvbuf;
}

uint32_t fg_tcp_conn_rx_bytes(const struct fg_tcp_conn *c)
{
	return tcp_rx_used(c);
}
