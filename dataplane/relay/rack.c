/* SPDX-License-Identifier: MIT */
/*
 * rack.c — end-to-end acknowledgement: accepted articles go from the
 * engine threads straight to the downstreams, and the peer's answer waits
 * for theirs (relay.h has the contract, docs/relay.md the promise).
 *
 * One article, step by step:
 *
 *  1. The engine (fg_relay_ack_send) fills a slot of its acker — the ID,
 *     the article's pieces (iovecs onto the receive buffers it holds), the
 *     downstreams its route names as a mask, the deadline — and pushes the
 *     slot's number on `req`. rack_pass takes it into the live list.
 *  2. To each downstream of the mask: TAKETHIS on its #ack connection with
 *     the most room, the pieces output in place (rconn_out_mem). No such
 *     connection ready: that downstream spills (cause eof); all full — a
 *     window of commands, or ACK_UNSENT_MAX octets not yet written — it
 *     waits, within the deadline (an article never sent spills without
 *     closing anything).
 *  3. Answers (rack_answer), in command order, each naming its ID:
 *       239                 final; `accepted` when it acknowledges
 *       439                 final; `refused` when it acknowledges
 *       431, 436, 5xx, ...  that downstream spills (cause refused)
 *     A 400, EOF or a broken connection spills every article open on it
 *     (rack_fail, cause refused for the 400, else eof).
 *  4. decide(), once every downstream is final or spilled, or at the
 *     deadline (what is still open then spills, cause timeout):
 *       one acknowledging downstream accepted   ACCEPTED, or SPILL for the
 *                                               others that still need it
 *       an acknowledging one spilled            SPILL
 *       refused                                 CHECK <id> on that
 *                                               connection: 438 REFUSED,
 *                                               anything else, or the
 *                                               deadline, REFUSED_FORGET
 *  5. Before the result, no octet of the article may still be referenced:
 *     a connection still writing it is closed (unref). The result goes on
 *     `ans`; the article's commands still open on a connection turn stale
 *     (their answers are checked, then dropped); the engine is woken.
 *
 * A downstream with a stale TAKETHIS (an answer overdue past ack-timeout)
 * is not `direct_ok`: new articles take the queue's path at once, instead
 * of each waiting out the timeout, until it answers again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/failpoint.h"
#include "floodgate/log.h"
#include "relay_int.h"

/* Octets queued on an #ack connection and not yet written past which no
 * new article is added: what waits beyond it waits in the live list, where
 * the deadline spills it without closing the connection. */
#define ACK_UNSENT_MAX (4ull << 20)

static uint8_t bit(unsigned d)
{
	return (uint8_t)(1u << d);
}

static uint8_t route_mask(const struct fg_relay *r, const struct fg_feeds_set *route)
{
	uint8_t m = 0;

	for (unsigned d = 0; d < r->nds; d++)
		if (!route || route->all || fg_feeds_has(route, r->ds[d].cfg->ident))
			m |= bit(d);
	return m;
}

/* ------------------------------------------------------------ engine side */

struct fg_relay_acker *fg_relay_acker_create(struct fg_relay *r, unsigned max_pending,
					     void (*wake)(void *arg), void *wake_arg)
{
	struct fg_relay_acker *a;
	uint32_t cap = rpow2(max_pending, 1024);

	if (!r->ack_mask || r->nackers == R_MAX_ASKERS || r->started)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->cap = cap;
	a->slot = calloc(cap, sizeof(*a->slot));
	a->req = calloc(cap, sizeof(*a->req));
	a->ans = calloc(cap, sizeof(*a->ans));
	a->free = calloc(cap, sizeof(*a->free));
	if (!a->slot || !a->req || !a->ans || !a->free) {
		fg_relay_acker_destroy(a);
		return NULL;
	}
	for (uint32_t i = 0; i < cap; i++)
		a->free[i] = cap - 1 - i;
	a->nfree = cap;
	a->r = r;
	a->wk = (struct rwake){ wake, wake_arg, false };
	a->idx = r->nackers;
	r->ackers[r->nackers++] = a;
	return a;
}

struct fg_relay_acker *fg_relay_acker_wrap(const struct fg_relay_acker_ops *ops, void *impl)
{
	struct fg_relay_acker *a = calloc(1, sizeof(*a));

	if (a) {
		a->ops = ops;
		a->impl = impl;
	}
	return a;
}

void fg_relay_acker_destroy(struct fg_relay_acker *a)
{
	if (!a)
		return;
	if (a->ops) {
		a->ops->destroy(a->impl);
		free(a);
		return;
	}
	if (a->r) {
		FG_ASSERT(!a->r->started);
		a->r->ackers[a->idx] = NULL;
	}
	for (uint32_t i = 0; a->slot && i < a->cap; i++)
		fg_ackrule_art_free(&a->slot[i].a);
	free(a->slot);
	free(a->req);
	free(a->ans);
	free(a->free);
	free(a);
}

bool fg_relay_ack_can(const struct fg_relay_acker *a, const struct fg_feeds_set *route)
{
	struct fg_relay *r = a->r;
	uint8_t m;

	if (a->ops)
		return a->ops->can(a->impl, route);
	m = route_mask(r, route);
	if (!(m & r->ack_mask) || (m & ~r->direct_mask) || !a->nfree)
		return false;
	for (unsigned d = 0; d < r->nds; d++)
		if ((m & bit(d)) && !atomic_load_explicit(&r->ds[d].direct_ok, memory_order_relaxed))
			return false;
	return true;
}

int fg_relay_ack_send(struct fg_relay_acker *a, const struct fg_relay_ack_art *art)
{
	uint64_t h = atomic_load_explicit(&a->req_head, memory_order_relaxed);
	struct ackslot *s;
	uint32_t i;
	int rc;

	if (a->ops)
		return a->ops->send(a->impl, art);
	if (!a->nfree)
		return art->id_len == 0 || art->id_len > FG_QUEUE_ID_MAX ? -EINVAL : -EAGAIN;
	i = a->free[a->nfree - 1];
	s = &a->slot[i];
	rc = fg_ackrule_art_take(&s->a, art);
	if (rc != 0)
		return rc;
	s->m = (struct fg_ackrule_marks){ .want = route_mask(a->r, art->route),
					  .cause = FG_CTR_RELAY_ACK_SPILL_EOF };
	a->nfree--;
	a->req[h & (a->cap - 1)] = i;
	atomic_store_explicit(&a->req_head, h + 1, memory_order_release);
	fg_relay_notify(a->r);
	return 0;
}

unsigned fg_relay_ack_results(struct fg_relay_acker *a, fg_relay_ack_fn *fn, void *arg)
{
	unsigned n = 0;

	if (a->ops)
		return a->ops->results(a->impl, fn, arg);
	for (;;) {
		uint64_t t = atomic_load_explicit(&a->ans_tail, memory_order_relaxed);
		struct fg_relay_ack_result res;
		uint32_t i;

		if (t == atomic_load_explicit(&a->ans_head, memory_order_acquire))
			break;
		i = a->ans[t & (a->cap - 1)];
		res = a->slot[i].res;
		atomic_store_explicit(&a->ans_tail, t + 1, memory_order_release);
		a->free[a->nfree++] = i;
		fn(arg, &res);
		n++;
	}
	return n;
}

unsigned fg_relay_ack_out(const struct fg_relay_acker *a)
{
	if (a->ops)
		return a->ops->out(a->impl);
	return a->cap - a->nfree;
}

/* ------------------------------------------------------------ relay side */

int rack_init(struct fg_relay *r)
{
	for (unsigned d = 0; d < r->nds; d++)
		if (r->ds[d].cfg->acknowledges && r->ds[d].cfg->mode == FG_DOWNSTREAM_STREAM)
			r->ack_mask |= bit(d);
	if (!r->ack_mask)
		return 0;
	/* every streaming downstream gets #ack connections: an article goes
	 * straight only when all of its route can take it so */
	for (unsigned d = 0; d < r->nds; d++) {
		struct rds *ds = &r->ds[d];

		if (ds->cfg->mode != FG_DOWNSTREAM_STREAM || (r->p.port_mask & bit(d)))
			continue;
		ds->ndconn = ds->nconn;
		ds->dconns = calloc(ds->ndconn, sizeof(*ds->dconns));
		if (!ds->dconns)
			return -ENOMEM;
		for (unsigned i = 0; i < ds->ndconn; i++) {
			rconn_init(&ds->dconns[i], ds, i);
			ds->dconns[i].direct = true;
		}
		r->direct_mask |= bit(d);
	}
	return 0;
}

void rack_fini(struct fg_relay *r)
{
	for (unsigned d = 0; r->ds && d < r->nds; d++) {
		for (unsigned i = 0; r->ds[d].dconns && i < r->ds[d].ndconn; i++)
			rconn_fini(&r->ds[d].dconns[i]);
		free(r->ds[d].dconns);
		r->ds[d].dconns = NULL;
	}
	for (unsigned i = 0; i < r->nackers; i++)
		if (r->ackers[i])
			r->ackers[i]->r = NULL;
	free(r->live);
	r->live = NULL;
}

static struct ackslot *slot_of(struct fg_relay *r, uint16_t acker, uint32_t slot)
{
	return r->ackers[acker] ? &r->ackers[acker]->slot[slot] : NULL;
}

static struct dpend *dpend_push(struct rconn *c, uint16_t acker, uint32_t slot, uint8_t kind,
				const struct ackslot *s, uint64_t now)
{
	struct dpend *p;

	if (!c->dp) {
		c->dcap = 2 * c->ds->window + 2;
		c->dp = calloc(c->dcap, sizeof(*c->dp));
		if (!c->dp)
			return NULL;
	}
	if (c->dn == c->dcap)
		return NULL;
	p = &c->dp[(c->dh + c->dn) % c->dcap];
	p->acker = acker;
	p->slot = slot;
	p->kind = kind;
	p->stale = 0;
	p->id_len = s->a.id_len;
	memcpy(p->id, s->a.id, s->a.id_len + 1u);
	if (c->dn++ == 0)
		c->deadline_ns = now + c->ds->r->p.answer_timeout_ns;
	return p;
}

static bool conn_up(const struct rconn *c)
{
	return c->st == CS_READY && c->streaming;
}

static struct rconn *pick_conn(struct rds *d)
{
	struct rconn *best = NULL;

	for (unsigned i = 0; i < d->ndconn; i++) {
		struct rconn *c = &d->dconns[i];

		if (conn_up(c) && c->dn < d->window && c->out_total - c->out_done < ACK_UNSENT_MAX &&
		    (!best || c->dn < best->dn))
			best = c;
	}
	return best;
}

static bool any_up(const struct rds *d)
{
	for (unsigned i = 0; i < d->ndconn; i++)
		if (conn_up(&d->dconns[i]))
			return true;
	return false;
}

/* Step 2: TAKETHIS <id>, the article in place, the terminator. */
static void send_takethis(struct rconn *c, const struct acklive *le, struct ackslot *s,
			  unsigned d, uint64_t now)
{
	struct rds *ds = c->ds;
	int rc;

	fg_failpoint("ack-before-forward");
	rc = rconn_out_line(c, "TAKETHIS", s->a.id);

	for (unsigned k = 0; rc == 0 && k < s->a.npiece; k++)
		rc = rconn_out_mem(c, s->a.piece[k].base, s->a.piece[k].len);
	if (rc == 0)
		rc = rconn_out_line(c, ".", NULL);
	if (rc == 0 && !dpend_push(c, le->acker, le->slot, CMD_TAKETHIS, s, now))
		rc = -ENOMEM;
	if (rc != 0) {
		/* what is queued on it, this article's octets included, goes */
		rconn_fail(c, "out of memory", now);
		fg_ackrule_spill(&s->m, d, FG_CTR_RELAY_ACK_SPILL_EOF);
		return;
	}
	s->m.sent |= bit(d);
	s->conn[d] = (uint8_t)c->idx;
	s->out_end[d] = c->out_total;
	rcount(ds->r, FG_CTR_RELAY_OFFERED, 1);
	ds->sent++;
}

/* Step 3: one answer line on an #ack connection. */
void rack_answer(struct rconn *c, int code, const char *rest, const char *line, uint64_t now)
{
	struct fg_relay *r = c->ds->r;
	struct dpend p = c->dp[c->dh];
	unsigned d = (unsigned)(c->ds - r->ds);
	size_t n = strcspn(rest, " ");
	struct ackslot *s;

	if (n != p.id_len || memcmp(rest, p.id, n) != 0) {
		char why[900];

		snprintf(why, sizeof(why), "answer \"%.500s\" out of step (expected %s)", line, p.id);
		rcount(r, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
		rconn_fail(c, why, now);
		return;
	}
	c->dh = (c->dh + 1) % c->dcap;
	c->dn--;
	c->deadline_ns = c->dn ? now + r->p.answer_timeout_ns : 0;
	s = p.stale ? NULL : slot_of(r, p.acker, p.slot);
	if (p.kind == CMD_CHECK) {
		if (s)
			fg_ackrule_checked(&s->m, code);
		return;
	}
	if (code == 239)
		c->ds->accepted++;
	else if (code == 439)
		c->ds->refused++;
	else if (code == 431 || code == 436)
		c->ds->deferred++;
	rcount(r, fg_ackrule_code_counter(code), 1);
	if (s)
		fg_ackrule_answer(&s->m, d, code, r->ack_mask);
}

/* The connection is gone (its output already dropped): every article open
 * on it spills for this downstream; a CHECK out is unconfirmed. */
void rack_fail(struct rconn *c)
{
	struct fg_relay *r = c->ds->r;
	unsigned d = (unsigned)(c->ds - r->ds);

	while (c->dn) {
		struct dpend *p = &c->dp[c->dh];
		struct ackslot *s = p->stale ? NULL : slot_of(r, p->acker, p->slot);

		if (s && p->kind == CMD_CHECK) {
			fg_ackrule_checked(&s->m, 0);
		} else if (s) {
			fg_ackrule_spill(&s->m, d, c->dcause);
		}
		c->dh = (c->dh + 1) % c->dcap;
		c->dn--;
	}
}

/* Step 5, first half: close every connection still writing the article. */
static void unref(struct fg_relay *r, struct ackslot *s, uint64_t now)
{
	for (unsigned d = 0; d < r->nds; d++) {
		struct rconn *c;

		if (!(s->m.sent & bit(d)))
			continue;
		c = &r->ds[d].dconns[s->conn[d]];
		if (c->out_done < s->out_end[d]) {
			c->dcause = FG_CTR_RELAY_ACK_SPILL_TIMEOUT;
			rconn_fail(c, "ack-timeout with an article half written: closed", now);
		}
	}
}

static void mark_stale(struct fg_relay *r, const struct acklive *le, const struct ackslot *s)
{
	for (unsigned d = 0; d < r->nds; d++) {
		struct rconn *c;

		if (!(s->m.sent & bit(d)))
			continue;
		c = &r->ds[d].dconns[s->conn[d]];
		for (unsigned k = 0; k < c->dn; k++) {
			struct dpend *p = &c->dp[(c->dh + k) % c->dcap];

			if (p->acker == le->acker && p->slot == le->slot)
				p->stale = 1;
		}
	}
}

/* Step 5, second half: the result to the engine. */
static void report(struct fg_relay *r, const struct acklive *le, struct ackslot *s,
		   enum fg_relay_ack what)
{
	struct fg_relay_acker *a = r->ackers[le->acker];
	uint64_t h;

	mark_stale(r, le, s);
	s->res = (struct fg_relay_ack_result){ .cookie = s->a.cookie, .ctx = s->a.ctx, .what = what };
	if (what == FG_RELAY_ACK_SPILL)
		for (unsigned d = 0; d < r->nds; d++)
			if (s->m.spill & bit(d))
				s->res.spill.ident[s->res.spill.n++] = r->ds[d].cfg->ident;
	fg_ackrule_count(&s->m, what, r->stats);
	h = atomic_load_explicit(&a->ans_head, memory_order_relaxed);
	a->ans[h & (a->cap - 1)] = le->slot;
	atomic_store_explicit(&a->ans_head, h + 1, memory_order_release);
	a->wk.need = true;
}

/* Ask the refusing acknowledging downstream whether it keeps the refusal. */
static bool send_check(struct fg_relay *r, const struct acklive *le, struct ackslot *s,
		       uint64_t now)
{
	for (unsigned d = 0; d < r->nds; d++) {
		struct rconn *c;

		if (!(s->m.refused & bit(d)))
			continue;
		c = &r->ds[d].dconns[s->conn[d]];
		if (!conn_up(c) || c->dn == c->dcap || rconn_out_line(c, "CHECK", s->a.id) != 0)
			return false;
		if (!dpend_push(c, le->acker, le->slot, CMD_CHECK, s, now)) {
			rconn_fail(c, "out of memory", now);
			return false;
		}
		s->m.checking = true;
		return true;
	}
	return false;
}

/* Step 4: true when the article's result was given. */
static bool decide(struct fg_relay *r, const struct acklive *le, uint64_t now)
{
	struct ackslot *s = slot_of(r, le->acker, le->slot);
	bool late = now >= s->a.deadline_ns;
	int what = fg_ackrule_decide(&s->m, r->ack_mask, late);

	if (what == FG_ACKRULE_WAIT)
		return false;
	unref(r, s, now);
	if (what == FG_ACKRULE_CHECK) {
		if (send_check(r, le, s, now))
			return false;
		fg_ackrule_checked(&s->m, 0);
		what = fg_ackrule_decide(&s->m, r->ack_mask, late);
	}
	report(r, le, s, (enum fg_relay_ack)what);
	return true;
}

static int live_add(struct fg_relay *r, uint16_t acker, uint32_t slot)
{
	if (r->nlive == r->caplive) {
		unsigned cap = r->caplive ? 2 * r->caplive : 256;
		struct acklive *n = realloc(r->live, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->live = n;
		r->caplive = cap;
	}
	r->live[r->nlive++] = (struct acklive){ acker, slot };
	return 0;
}

/* Step 1: new articles from the engines. */
static void take(struct fg_relay *r)
{
	for (unsigned i = 0; i < r->nackers; i++) {
		struct fg_relay_acker *a = r->ackers[i];

		while (a) {
			uint64_t t = atomic_load_explicit(&a->req_tail, memory_order_relaxed);

			if (t == atomic_load_explicit(&a->req_head, memory_order_acquire))
				break;
			if (live_add(r, (uint16_t)i, a->req[t & (a->cap - 1)]) != 0)
				break;	/* taken at a later pass (its deadline holds) */
			atomic_store_explicit(&a->req_tail, t + 1, memory_order_release);
		}
	}
}

/* Step 2 for every live article with a downstream still to send to. */
static void send_all(struct fg_relay *r, uint64_t now)
{
	for (unsigned k = 0; k < r->nlive; k++) {
		struct acklive *le = &r->live[k];
		struct ackslot *s = slot_of(r, le->acker, le->slot);
		uint8_t todo = s->m.want & (uint8_t)~(s->m.sent | s->m.final | s->m.spill);

		for (unsigned d = 0; todo && d < r->nds; d++) {
			struct rconn *c;

			if (!(todo & bit(d)))
				continue;
			c = pick_conn(&r->ds[d]);
			if (c)
				send_takethis(c, le, s, d, now);
			else if (!any_up(&r->ds[d]))
				fg_ackrule_spill(&s->m, d, FG_CTR_RELAY_ACK_SPILL_EOF);
		}
	}
}

/* An answer overdue past ack-timeout on one of its #ack connections. */
static bool overdue(const struct rds *d)
{
	for (unsigned i = 0; i < d->ndconn; i++) {
		const struct rconn *c = &d->dconns[i];

		for (unsigned k = 0; k < c->dn; k++)
			if (c->dp[(c->dh + k) % c->dcap].stale &&
			    c->dp[(c->dh + k) % c->dcap].kind == CMD_TAKETHIS)
				return true;
	}
	return false;
}

void rack_written(const struct rconn *c, uint64_t from, uint64_t to)
{
	struct fg_relay *r = c->ds->r;
	unsigned d = (unsigned)(c->ds - r->ds);

	for (unsigned k = 0; k < c->dn; k++) {
		const struct dpend *p = &c->dp[(c->dh + k) % c->dcap];
		const struct ackslot *s = p->stale ? NULL : slot_of(r, p->acker, p->slot);

		if (s && p->kind == CMD_TAKETHIS && s->out_end[d] > from && s->out_end[d] <= to)
			fg_failpoint("ack-forwarded");
	}
}

void rack_pass(struct fg_relay *r, uint64_t now)
{
	unsigned j = 0;

	if (!r->direct_mask)
		return;
	for (unsigned d = 0; d < r->nds; d++)
		for (unsigned i = 0; i < r->ds[d].ndconn; i++)
			rconn_timer(&r->ds[d].dconns[i], now);
	take(r);
	send_all(r, now);
	for (unsigned d = 0; d < r->nds; d++)
		for (unsigned i = 0; i < r->ds[d].ndconn; i++)
			rconn_flush(&r->ds[d].dconns[i], now);
	for (unsigned k = 0; k < r->nlive; k++)
		if (!decide(r, &r->live[k], now))
			r->live[j++] = r->live[k];
	r->nlive = j;
	for (unsigned d = 0; d < r->nds; d++) {
		struct rds *ds = &r->ds[d];
		bool ok = ds->ndconn && any_up(ds) && !overdue(ds) && !atomic_load(&ds->paused);

		atomic_store_explicit(&ds->direct_ok, ok, memory_order_relaxed);
	}
	for (unsigned i = 0; i < r->nackers; i++) {
		struct fg_relay_acker *a = r->ackers[i];

		if (a)
			rwake_fire(&a->wk);
	}
}

int rack_sleep_ms(struct fg_relay *r, uint64_t now)
{
	uint64_t first = UINT64_MAX;

	for (unsigned k = 0; k < r->nlive; k++) {
		struct ackslot *s = slot_of(r, r->live[k].acker, r->live[k].slot);

		first = FG_MIN(first, s->a.deadline_ns);
	}
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)FG_MIN((first - now) / 1000000 + 1, 1000u);
}
