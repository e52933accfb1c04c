/* SPDX-License-Identifier: MIT */
/*
 * rask.c — warm-up lookups: engine threads ask whether a downstream has a
 * Message-ID; the relay thread asks the server with CHECK (RFC 4644 2.4)
 * on a connection kept for asking, and hands the answer back.
 *
 * Each asker (one per engine thread) has two single-producer
 * single-consumer rings: requests (engine -> relay) and answers (relay ->
 * engine). An asker never has more than its capacity asked and not yet
 * taken back, so the answer ring cannot overflow.
 *
 * Every question gets exactly one answer, and soon: the server's (238,
 * 431, 438), or UNKNOWN when there is no connection ready to ask on, the
 * connection fails, or the server takes longer than ask_timeout (its late
 * answer is then dropped). UNKNOWN makes the engine answer as it would
 * without warm-up: a cold start must never stall a feed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"
#include "relay_int.h"

struct fg_relay_asker *fg_relay_asker_create(struct fg_relay *r, unsigned max_pending,
					     void (*wake)(void *arg), void *wake_arg)
{
	struct fg_relay_asker *a;
	uint32_t cap = rpow2(max_pending, 1024);

	if (!r->ask_ds || r->naskers == R_MAX_ASKERS || r->started)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->req = calloc(cap, sizeof(*a->req));
	a->ans = calloc(cap, sizeof(*a->ans));
	if (!a->req || !a->ans) {
		fg_relay_asker_destroy(a);
		return NULL;
	}
	a->r = r;
	a->mask = cap - 1;
	a->wk = (struct rwake){ wake, wake_arg, false };
	a->idx = r->naskers;
	r->askers[r->naskers++] = a;
	return a;
}

void fg_relay_asker_destroy(struct fg_relay_asker *a)
{
	if (!a)
		return;
	if (a->r) {
		FG_ASSERT(!a->r->started);
		a->r->askers[a->idx] = NULL;
	}
	free(a->req);
	free(a->ans);
	free(a);
}

int fg_relay_ask(struct fg_relay_asker *a, const char *id, size_t len, uint64_t cookie)
{
	uint64_t h = atomic_load_explicit(&a->req_head, memory_order_relaxed);
	struct askreq *q;

	if (len == 0 || len > FG_QUEUE_ID_MAX)
		return -EINVAL;
	if (a->outstanding > a->mask)
		return -EAGAIN;
	q = &a->req[h & a->mask];
	q->cookie = cookie;
	q->len = (uint16_t)len;
	memcpy(q->id, id, len);
	atomic_store_explicit(&a->req_head, h + 1, memory_order_release);
	a->outstanding++;
	fg_relay_notify(a->r);
	return 0;
}

unsigned fg_relay_answers(struct fg_relay_asker *a, fg_relay_answer_fn *fn, void *arg)
{
	unsigned n = 0;

	for (;;) {
		uint64_t t = atomic_load_explicit(&a->ans_tail, memory_order_relaxed);
		struct askans x;

		if (t == atomic_load_explicit(&a->ans_head, memory_order_acquire))
			break;
		x = a->ans[t & a->mask];
		atomic_store_explicit(&a->ans_tail, t + 1, memory_order_release);
		a->outstanding--;
		fn(arg, x.cookie, (enum fg_relay_answer)x.answer);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------ relay side */

static void answer_to(struct fg_relay *r, unsigned asker, uint64_t cookie, int answer)
{
	struct fg_relay_asker *a = r->askers[asker];
	uint64_t h;

	if (!a)
		return;
	h = atomic_load_explicit(&a->ans_head, memory_order_relaxed);
	a->ans[h & a->mask] = (struct askans){ cookie, answer };
	atomic_store_explicit(&a->ans_head, h + 1, memory_order_release);
	a->wk.need = true;
	rcount(r, answer == FG_RELAY_HAVE ? FG_CTR_RELAY_ASK_HAVE :
	       answer == FG_RELAY_UNKNOWN ? FG_CTR_RELAY_ASK_UNKNOWN : FG_CTR_RELAY_ASK_OTHER, 1);
}

int rask_send(struct rconn *c, const struct askreq *q, unsigned asker, uint64_t now)
{
	struct fg_relay *r = c->ds->r;
	struct askpend *p = &c->ask[(c->ah + c->an) % R_ASK_WINDOW];
	char id[FG_QUEUE_ID_MAX + 1];

	memcpy(id, q->id, q->len);
	id[q->len] = '\0';
	if (rconn_out_line(c, "CHECK", id) != 0)
		return -ENOMEM;
	p->asker = (uint16_t)asker;
	p->answered = 0;
	p->id_len = (uint8_t)q->len;
	p->cookie = q->cookie;
	p->due_ns = now + r->p.ask_timeout_ns;
	memcpy(p->id, id, q->len + 1);
	if (c->an++ == 0)
		c->deadline_ns = now + r->p.answer_timeout_ns;
	rcount(r, FG_CTR_RELAY_ASKED, 1);
	return 0;
}

/* One answer line on the asking connection. */
void rask_answer(struct rconn *c, int code, const char *rest, const char *line, uint64_t now)
{
	struct fg_relay *r = c->ds->r;
	struct askpend *p = &c->ask[c->ah];
	size_t n = strcspn(rest, " ");
	int answer;

	if (n != p->id_len || memcmp(rest, p->id, n) != 0) {
		char why[600];

		snprintf(why, sizeof(why), "answer \"%.500s\" out of step", line);
		rcount(r, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
		rconn_fail(c, why, now);
		return;
	}
	c->ah = (c->ah + 1) % R_ASK_WINDOW;
	c->an--;
	c->deadline_ns = c->an ? now + r->p.answer_timeout_ns : 0;
	if (p->answered)
		return;
	answer = code == 238 ? FG_RELAY_WANTED : code == 438 ? FG_RELAY_HAVE :
		 code == 431 ? FG_RELAY_LATER : FG_RELAY_UNKNOWN;
	answer_to(r, p->asker, p->cookie, answer);
}

/* The connection is gone: every question still open gets UNKNOWN. */
void rask_fail(struct rconn *c)
{
	while (c->an) {
		struct askpend *p = &c->ask[c->ah];

		if (!p->answered)
			answer_to(c->ds->r, p->asker, p->cookie, FG_RELAY_UNKNOWN);
		c->ah = (c->ah + 1) % R_ASK_WINDOW;
		c->an--;
	}
}

static bool can_ask(const struct rconn *c)
{
	return c->st == CS_READY && c->streaming && c->an < R_ASK_WINDOW;
}

/* Take new questions, time out old ones, wake the askers with answers. */
void rask_pass(struct fg_relay *r, uint64_t now)
{
	struct rconn *c = &r->ask_conn;
	bool sent = false;

	if (!r->naskers)
		return;
	rconn_timer(c, now);
	for (unsigned i = 0; i < r->naskers; i++) {
		struct fg_relay_asker *a = r->askers[i];

		for (; a;) {
			uint64_t t = atomic_load_explicit(&a->req_tail, memory_order_relaxed);

			if (t == atomic_load_explicit(&a->req_head, memory_order_acquire))
				break;
			if (!can_ask(c) || rask_send(c, &a->req[t & a->mask], i, now) != 0)
				answer_to(r, i, a->req[t & a->mask].cookie, FG_RELAY_UNKNOWN);
			else
				sent = true;
			atomic_store_explicit(&a->req_tail, t + 1, memory_order_release);
		}
	}
	if (sent)
		rconn_flush(c, now);
	for (unsigned k = 0; k < c->an; k++) {
		struct askpend *p = &c->ask[(c->ah + k) % R_ASK_WINDOW];

		if (!p->answered && p->due_ns <= now) {
			p->answered = 1;
			answer_to(r, p->asker, p->cookie, FG_RELAY_UNKNOWN);
		}
	}
	for (unsigned i = 0; i < r->naskers; i++) {
		struct fg_relay_asker *a = r->askers[i];

		if (a)
			rwake_fire(&a->wk);
	}
}
