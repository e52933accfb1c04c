/* SPDX-License-Identifier: MIT */
/*
 * tcp_timer.c — one hashed timer wheel per instance (Varghese and Lauck,
 * scheme 4) and the per-connection deadlines behind it.
 *
 * A connection keeps its deadlines as plain fields (retransmission or
 * persist, delayed ACK, 2*MSL, and the idle time derived from last_rx)
 * and owns exactly one wheel node, filed under the earliest of them.
 * Setting a later deadline never touches the wheel: the node fires early,
 * the handler finds nothing due and files it again. So a packet costs
 * O(1) timer work (usually none: refreshing idle is one store), and a
 * tick visits only the nodes filed in its slot — no connection scans.
 *
 * Slots are timer_tick_ns apart (a power of two, ~1 ms by default);
 * deadlines past the wheel's horizon are filed at its far end and re-filed
 * when they come round.
 */
#include <stdlib.h>

#include "tcp_int.h"

int tcp_wheel_init(struct fg_tcp *t)
{
	t->wheel = calloc(t->cfg.timer_slots, sizeof(*t->wheel));
	if (!t->wheel)
		return -1;
	t->wmask = t->cfg.timer_slots - 1;
	t->tick_shift = (unsigned)__builtin_ctzll(t->cfg.timer_tick_ns);
	t->cur_tick = UINT64_MAX;	/* set by the first time seen */
	return 0;
}

void tcp_wheel_free(struct fg_tcp *t)
{
	free(t->wheel);
}

static void wheel_start(struct fg_tcp *t)
{
	if (t->cur_tick == UINT64_MAX)
		t->cur_tick = t->now >> t->tick_shift;
}

static void node_unlink(struct tcp_tnode *n)
{
	if (n->next)
		n->next->pprev = n->pprev;
	*n->pprev = n->next;
	n->next = NULL;
	n->pprev = NULL;
}

static void node_link(struct tcp_tnode **head, struct tcp_tnode *n)
{
	n->next = *head;
	if (n->next)
		n->next->pprev = &n->next;
	*head = n;
	n->pprev = head;
}

void tcp_timer_cancel(struct fg_tcp_conn *c)
{
	if (c->tn.pprev) {
		node_unlink(&c->tn);
		c->tcp->n_timers--;
	}
}

uint64_t tcp_idle_deadline(const struct fg_tcp_conn *c)
{
	return tcp_state_live(c) ? c->last_rx + c->tcp->cfg.idle_timeout_ns : 0;
}

static uint64_t min_nz(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

void tcp_timer_update(struct fg_tcp_conn *c)
{
	struct fg_tcp *t = c->tcp;
	uint64_t d = min_nz(min_nz(c->t_rexmt, c->t_dack), min_nz(c->t_2msl, tcp_idle_deadline(c)));
	uint64_t tick;

	if (c->flags & CF_FREEING)
		return;
	if (!d) {
		tcp_timer_cancel(c);
		return;
	}
	if (c->tn.pprev && c->tn.at <= d)
		return;	/* fires early enough; re-filed then */
	tcp_timer_cancel(c);
	wheel_start(t);
	tick = d >> t->tick_shift;
	if (tick <= t->cur_tick)
		tick = t->cur_tick + 1;
	if (tick - t->cur_tick > t->wmask)
		tick = t->cur_tick + t->wmask;
	c->tn.at = d;
	node_link(&t->wheel[tick & t->wmask], &c->tn);
	t->n_timers++;
}

/* Every deadline of `c` that is due, then the node is filed again. */
static void conn_fire(struct fg_tcp_conn *c, uint64_t now)
{
	struct fg_tcp *t = c->tcp;
	uint64_t idle;

	if (c->t_2msl && now >= c->t_2msl) {
		/* RFC 9293 3.10.8: TIME-WAIT timeout -> CLOSED */
		c->t_2msl = 0;
		tcp_conn_drop(c, FG_TCP_CLOSE_FIN, false);
		return;
	}
	if (c->t_rexmt && now >= c->t_rexmt) {
		c->t_rexmt = 0;
		if (c->flags & CF_PERSIST)
			tcp_persist_timeout(c);
		else
			tcp_rexmt_timeout(c);
		if (c->flags & CF_FREEING)
			return;
	}
	if (c->t_dack && now >= c->t_dack) {
		c->t_dack = 0;
		if (c->flags & CF_DACK) {
			fg_stats_inc(t->st, FG_CTR_TCP_TX_DELAYED_ACKS);
			tcp_send_ack_now(c);
		}
	}
	idle = tcp_idle_deadline(c);
	if (idle && now >= idle) {
		tcp_send_ctl(c, TH_RST | TH_ACK, c->snd_nxt);
		tcp_conn_drop(c, FG_TCP_CLOSE_IDLE, true);
		return;
	}
	tcp_timer_update(c);
}

void tcp_timers(void *ctx, uint64_t now)
{
	struct fg_tcp *t = ctx;
	uint64_t target;

	t->now = now;
	wheel_start(t);
	target = now >> t->tick_shift;
	if (target > t->cur_tick + t->wmask + 1)
		t->cur_tick = target - t->wmask - 1;	/* visit every slot once */
	while (t->cur_tick < target) {
		struct tcp_tnode *list;

		t->cur_tick++;
		list = t->wheel[t->cur_tick & t->wmask];
		if (!list)
			continue;
		/* detach the slot: handlers re-file into the live wheel */
		t->wheel[t->cur_tick & t->wmask] = NULL;
		list->pprev = &list;
		while (list) {
			struct tcp_tnode *n = list;
			struct fg_tcp_conn *c = (struct fg_tcp_conn *)((char *)n -
						 offsetof(struct fg_tcp_conn, tn));

			node_unlink(n);
			t->n_timers--;
			if (n->at > now) {
				tcp_timer_update(c);	/* filed early: not due yet */
				continue;
			}
			conn_fire(c, now);
		}
	}
}

/*
 * The start of the first non-empty slot ahead: a poll loop may sleep until
 * then. Walking the slots costs at most one pass over the wheel (4096
 * pointer tests by default), paid only by a caller about to sleep.
 */
uint64_t tcp_next_deadline(const void *ctx)
{
	const struct fg_tcp *t = ctx;

	if (t->pending || t->freeing)
		return t->now;
	if (!t->n_timers || t->cur_tick == UINT64_MAX)
		return t->n_timers ? t->now : UINT64_MAX;
	for (uint64_t k = 1; k <= (uint64_t)t->wmask + 1; k++)
		if (t->wheel[(t->cur_tick + k) & t->wmask])
			return (t->cur_tick + k) << t->tick_shift;
	return (t->cur_tick + 1) << t->tick_shift;
}
