/* SPDX-License-Identifier: MIT */
/*
 * offers.c — what one connection of a feed sends, and when.
 *
 * A connection takes, in order of priority: a retry that is due (431 or
 * 436, after --retry-delay), a re-offer (an offer that had no final
 * answer when its connection was lost), then its next fresh offer: peer
 * p's offer list (workload model) is dealt round-robin to its
 * connections, so connection k of n takes every n-th offer.
 *
 * --rate paces the fresh offers (a demo or a soak at a steady rate rather
 * than flat out): each of the n connections gets rate / n a second, so the
 * peers advance through their lists together, as flood-fill copies of an
 * article arrive close together; a connection's fresh offer k may go once
 * k / (rate / n) seconds have passed since the start. Retries and
 * re-offers are owed answers and are never held back.
 *
 * The window: up to `window` commands in flight (1 for IHAVE, which is
 * lock-step), and no more offers while OUT_HIGH octets wait unsent. Every
 * command is recorded in flight with the checker's stamp and a hash of
 * the Message-ID its answer must repeat (answers.c). When nothing is left
 * to offer or owed an answer, QUIT.
 *
 * Output is built in the connection's buffer (commands, headers, and the
 * body copied from the workload's pool), compacted or grown as needed;
 * client.c writes it out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "floodgate/log.h"

uint64_t feed_id_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

int feed_aring_init(struct aring *r, uint32_t cap, bool with_due)
{
	r->cap = cap;
	r->art = malloc(sizeof(*r->art) * cap);
	r->due = with_due ? malloc(sizeof(*r->due) * cap) : NULL;
	return r->art && (!with_due || r->due) ? 0 : -ENOMEM;
}

int feed_aring_push(struct aring *r, uint32_t art, uint64_t due)
{
	uint32_t at;

	if (r->n == r->cap) {
		uint32_t cap = r->cap * 2;
		uint32_t *na = malloc(sizeof(*na) * cap);
		uint64_t *nd = r->due ? malloc(sizeof(*nd) * cap) : NULL;

		if (!na || (r->due && !nd)) {
			free(na);
			free(nd);
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < r->n; k++) {
			na[k] = r->art[(r->head + k) % r->cap];
			if (nd)
				nd[k] = r->due[(r->head + k) % r->cap];
		}
		free(r->art);
		free(r->due);
		r->art = na;
		r->due = nd;
		r->head = 0;
		r->cap = cap;
	}
	at = (r->head + r->n) % r->cap;
	r->art[at] = art;
	if (r->due)
		r->due[at] = due;
	r->n++;
	return 0;
}

static uint32_t aring_pop(struct aring *r)
{
	uint32_t art = r->art[r->head];

	r->head = (r->head + 1) % r->cap;
	r->n--;
	return art;
}

void feed_aring_free(struct aring *r)
{
	free(r->art);
	free(r->due);
}

static int out_reserve(struct conn *c, size_t need)
{
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + need <= c->out_cap)
		return 0;
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + need > c->out_cap) {
		size_t cap = FG_MAX(c->out_cap * 2, c->out_len + need);
		char *p = realloc(c->out, cap);

		if (!p)
			return -ENOMEM;
		c->out = p;
		c->out_cap = cap;
	}
	return 0;
}

int feed_out_add(struct conn *c, const char *s, size_t len)
{
	int rc = out_reserve(c, len);

	if (rc == 0) {
		memcpy(c->out + c->out_len, s, len);
		c->out_len += len;
	}
	return rc;
}

size_t feed_out_pending(const struct conn *c)
{
	return c->out_len - c->out_off;
}

static void infl_push(struct feed *f, struct conn *c, uint32_t art, enum fg_wlc_cmd cmd,
		      const struct fg_wl_article *a)
{
	struct inflight *e;

	FG_ASSERT(c->infl_n < c->infl_cap);
	e = &c->infl[(c->infl_head + c->infl_n) % c->infl_cap];
	e->art = art;
	e->cmd = (uint8_t)cmd;
	e->stamp = fg_wlc_stamp(f->chk);
	e->t_ns = fg_mono_ns();
	e->id_hash = feed_id_hash(a->msgid, a->msgid_len);
	c->infl_n++;
}

int feed_queue_cmd(struct feed *f, struct conn *c, uint32_t art, enum fg_wlc_cmd cmd)
{
	static const char *const verbs[] = {
		[FG_WLC_CHECK] = "CHECK ", [FG_WLC_TAKETHIS] = "TAKETHIS ", [FG_WLC_IHAVE] = "IHAVE ",
	};
	struct fg_wl_article a;
	size_t head_len;
	int rc;

	fg_wl_article(f->wl, art, &a);
	if (cmd != FG_WLC_IHAVE_ART) {
		rc = out_reserve(c, a.msgid_len + 16);
		if (rc < 0)
			return rc;
		c->out_len += (size_t)sprintf(c->out + c->out_len, "%s%s\r\n", verbs[cmd], a.msgid);
	}
	if (cmd == FG_WLC_TAKETHIS || cmd == FG_WLC_IHAVE_ART) {
		rc = out_reserve(c, FG_WL_HDR_MAX + a.body_len + 3);
		if (rc < 0)
			return rc;
		head_len = fg_wl_wire_head(f->wl, &a, c->peer, c->out + c->out_len, FG_WL_HDR_MAX);
		c->out_len += head_len;
		memcpy(c->out + c->out_len, fg_wl_wire_body(f->wl, &a), a.body_len);
		c->out_len += a.body_len;
		memcpy(c->out + c->out_len, ".\r\n", 3);
		c->out_len += 3;
		f->res->articles_sent++;
		f->res->article_bytes += head_len + a.body_len + 3;
	}
	infl_push(f, c, art, cmd, &a);
	return 0;
}

/* --rate: true while c's next fresh offer is not due yet. */
static bool rate_held(const struct feed *f, const struct conn *c, uint64_t now)
{
	double due_s;

	if (f->o->rate <= 0)
		return false;
	due_s = (double)c->fresh * (double)f->n / f->o->rate;
	return (double)(now - f->t0) / 1e9 < due_s;
}

/* No first offer left for c: its list is done, or --duration is over. */
static bool fresh_over(const struct feed *f, const struct conn *c, uint64_t now)
{
	return c->next >= c->n_list ||
	       (f->o->duration > 0 && (double)(now - f->t0) / 1e9 >= f->o->duration);
}

/* The next offer for c, or false when it has none now. */
static bool next_offer(struct feed *f, struct conn *c, uint64_t now, uint32_t *art)
{
	if (c->retry.n && c->retry.due[c->retry.head] <= now) {
		*art = aring_pop(&c->retry);
		f->retries_pending--;
		f->res->retries++;
		return true;
	}
	if (c->reoffer.n) {
		*art = aring_pop(&c->reoffer);
		f->res->reoffers++;
		return true;
	}
	if (!fresh_over(f, c, now) && !rate_held(f, c, now)) {
		*art = c->list[c->next];
		c->fresh++;
		c->next += c->stride;
		f->res->offers++;
		return true;
	}
	return false;
}

static bool conn_finished(const struct feed *f, const struct conn *c, uint64_t now)
{
	return c->infl_n == 0 && c->retry.n == 0 && c->reoffer.n == 0 && fresh_over(f, c, now);
}

int feed_fill(struct feed *f, struct conn *c, uint64_t now)
{
	const struct feed_opts *o = f->o;
	unsigned window = o->mode == FEED_IHAVE ? 1 : o->window;
	enum fg_wlc_cmd cmd = o->mode == FEED_CHECK ? FG_WLC_CHECK :
			      o->mode == FEED_TAKETHIS ? FG_WLC_TAKETHIS : FG_WLC_IHAVE;
	uint32_t art;
	int rc = 0;

	if (c->state != ST_RUN)
		return 0;
	while (c->infl_n < window && feed_out_pending(c) < OUT_HIGH && next_offer(f, c, now, &art)) {
		rc = feed_queue_cmd(f, c, art, cmd);
		if (rc < 0)
			return rc;
	}
	if (conn_finished(f, c, now)) {
		rc = feed_out_add(c, "QUIT\r\n", 6);
		c->state = ST_QUIT;
	}
	return rc;
}
