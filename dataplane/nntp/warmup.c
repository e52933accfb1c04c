/* SPDX-License-Identifier: MIT */
/*
 * warmup.c — downstream-assisted CHECK after a cold start (docs/relay.md,
 * "Warm-up"; session.h, struct fg_nntp_engine_warmup).
 *
 * A new box starts with an empty history and would accept again every
 * article of the last cutoff days its peers still offer. While the host
 * says warm-up is on, a CHECK whose ID the history does not know — the
 * session already holds it as OFFERED, so other sessions get 431 meanwhile
 * — is asked of a downstream server before it is answered:
 *
 *   do_check: offer() won -> a WAIT response entry, the question goes out
 *   poll():   the answer  -> 438: the OFFERED entry becomes ACCEPTED
 *                                 (journaled; date and first-seen = now,
 *                                 which errs on keeping it longer), 438
 *                            238, 431 or none: the offer stays, 238
 *
 * A 431 does not travel on to the peer: innd answers 431 to a CHECK for
 * as long as an earlier CHECK of that ID from another of its channels is
 * "in progress" (its WIP table, wipexpire), and our own questions are such
 * CHECKs that never send the article, so passing 431 on let an ID be
 * deferred for as long as peers kept offering it. 431 says the downstream
 * does not have the article yet: the filter takes it, and if another feed
 * does get it to the downstream first, the relay's TAKETHIS is refused
 * there (439, counted), nothing lost.
 *
 * Answers fill their entries in command order (the response queue holds
 * later lines back), exactly as a TAKETHIS waiting for its sink. A question
 * keeps its session alive (a reference, like a transfer's) so a late answer
 * still records a 438 after the peer has gone; its response is then
 * dropped. A host that cannot ask (no downstream streams, its ring is
 * full) makes the engine answer 238 at once: warm-up never stalls a feed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

#define DEFAULT_MAX_ASKS 1024u

/* One table of questions serves warm-up and cluster claims (claims.c). */
int fg_nntp_warmup_init(struct fg_nntp_engine *e, const struct fg_nntp_engine_warmup *w,
			const struct fg_nntp_engine_cluster *cl)
{
	unsigned n;

	e->ask_free = FG_NNTP_NONE;
	if (!w && !cl)
		return 0;
	if (w)
		e->warm = *w;
	if (cl)
		e->cl = *cl;
	n = FG_MAX(w ? w->max_asks : 0, cl ? cl->max_claims : 0);
	n = e->warm.max_asks = n ? n : DEFAULT_MAX_ASKS;
	e->asks = calloc(n, sizeof(*e->asks));
	if (!e->asks)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		e->asks[i].next = i + 1 < n ? i + 1 : FG_NNTP_NONE;
	e->ask_free = 0;
	return 0;
}

void fg_nntp_warmup_fini(struct fg_nntp_engine *e)
{
	free(e->asks);
	e->asks = NULL;
}

uint64_t fg_nntp_ask_cookie(const struct fg_nntp_engine *e, const struct fg_nntp_ask *a)
{
	return (uint64_t)a->gen << 32 | (uint32_t)(a - e->asks);
}

void fg_nntp_ask_free(struct fg_nntp_engine *e, struct fg_nntp_ask *a)
{
	struct fg_nntp_session *s = a->s;

	a->used = false;
	a->s = NULL;
	a->next = e->ask_free;
	e->ask_free = (uint32_t)(a - e->asks);
	e->n_asks--;
	s->n_asks--;
	fg_nntp_session_xfer_done(s);
}

/* "<code> <id>" into the question's response entry. */
static void ask_answer(struct fg_nntp_ask *a, enum fg_nntp_code code, const char *prefix)
{
	if (!a->resp || a->s->gone)
		return;
	fg_nntp_fill_echo(a->s, a->seq, code, prefix, a->id, a->id_len);
	a->resp = false;
}

static void ask_verdict(struct fg_nntp_ask *a, enum fg_nntp_code code)
{
	fg_nntp_verdict_of(a->s, FG_NNTP_VERB_CHECK, code, FG_REASON_NONE, a->id, a->id_len, 0);
}

/* A free question with the command's response entry waiting for it;
 * NULL when none is free or the ID is too long. */
struct fg_nntp_ask *fg_nntp_ask_take(struct fg_nntp_session *s, const char *arg, uint32_t len,
				     const struct fg_history_key *k)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_nntp_ask *a;
	char *p;

	if (e->ask_free == FG_NNTP_NONE || len > FG_MSGID_MAX)
		return NULL;
	a = &e->asks[e->ask_free];
	/* the command was checked for room for its answer: this is that room */
	p = fg_respq_push(&s->q, FG_NNTP_ECHO_LEN(len), FG_RQ_WAIT, &a->seq);
	FG_ASSERT(p != NULL);
	e->ask_free = a->next;
	a->used = true;
	a->resp = true;
	a->gen = ++e->ask_gen;
	a->s = s;
	a->key = *k;
	a->id_len = (uint16_t)len;
	memcpy(a->id, arg, len);
	e->n_asks++;
	s->n_asks++;
	s->n_xfers++;		/* the session stays while its question lives */
	return a;
}

bool fg_nntp_warmup_ask(struct fg_nntp_session *s, const char *arg, uint32_t len,
			const struct fg_history_key *k)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_nntp_ask *a;

	if (!e->warm.ask || !e->warm.active(e->warm.ctx, e->now))
		return false;
	a = fg_nntp_ask_take(s, arg, len, k);
	if (!a)
		return false;
	fg_nntp_count(s, FG_CTR_NNTP_WARMUP_ASKED);
	if (e->warm.ask(e->warm.ctx, arg, len, fg_nntp_ask_cookie(e, a)) != 0)
		fg_nntp_ask_end(a, FG_CTR_NNTP_WARMUP_UNKNOWN, FG_NNTP_CODE_C238, false);
	return true;
}

/* The question's end: counted, answered (238, 431 or 438), freed. From
 * poll() the session's responses are flushed; from its own command they
 * go out with the command's. */
void fg_nntp_ask_end(struct fg_nntp_ask *a, enum fg_counter why, enum fg_nntp_code code,
		     bool from_poll)
{
	struct fg_nntp_session *s = a->s;

	fg_nntp_count(s, why);
	ask_answer(a, code, code == FG_NNTP_CODE_C438   ? FG_L_ECHO_438
				    : code == FG_NNTP_CODE_C431 ? FG_L_ECHO_431
								: FG_L_ECHO_238);
	ask_verdict(a, code);
	if (from_poll && !s->gone)
		fg_nntp_session_flush(s);
	fg_nntp_ask_free(s->e, a);
}

/* The session's responses are dropped (it closes): nothing to fill. */
void fg_nntp_warmup_drop(struct fg_nntp_session *s)
{
	struct fg_nntp_engine *e = s->e;

	for (unsigned i = 0; s->n_asks && i < e->warm.max_asks; i++)
		if (e->asks[i].used && e->asks[i].s == s)
			e->asks[i].resp = false;
}

/* The downstream has it: the offer becomes ACCEPTED (or, the session gone
 * and its offers released, a fresh ACCEPTED entry). */
void fg_nntp_ask_record_have(struct fg_nntp_engine *e, struct fg_nntp_ask *a)
{
	struct fg_history_entry found;
	struct fg_history_ref ref;
	int rc;

	if (a->s->gone) {
		rc = fg_history_insert_final(e->h, &a->key, FG_HISTORY_ACCEPTED, e->now, e->now,
					     e->now, NULL);
	} else {
		fg_nntp_offer_forget(a->s, &a->key, false);
		rc = fg_history_begin_accept(e->h, &a->key, e->now, a->s->token, &ref, &found);
		if (rc == 0)
			rc = fg_history_finish(e->h, &ref, FG_HISTORY_ACCEPTED, e->now, e->now, e->now);
	}
	/* -EEXIST: final already; -EAGAIN: an article for it is being accepted */
	if (rc == 0)
		fg_nntp_journal(e, &a->key, FG_HISTORY_ACCEPTED, e->now, e->now,
				FG_RULES_DATE_NONE, FG_REASON_NONE, a->id, a->id_len);
}

/* The live question a cookie names, or NULL (answered already). */
struct fg_nntp_ask *fg_nntp_ask_find(struct fg_nntp_engine *e, uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie;

	if (idx >= e->warm.max_asks || !e->asks[idx].used ||
	    e->asks[idx].gen != (uint32_t)(cookie >> 32))
		return NULL;
	return &e->asks[idx];
}

static void warm_done(void *engine, uint64_t cookie, unsigned code)
{
	struct fg_nntp_engine *e = engine;
	struct fg_nntp_ask *a = fg_nntp_ask_find(e, cookie);

	if (!a)
		return;
	if (code == 438) {
		fg_nntp_ask_record_have(e, a);
		fg_nntp_ask_end(a, FG_CTR_NNTP_WARMUP_HAVE, FG_NNTP_CODE_C438, true);
	} else {
		fg_nntp_ask_end(a, code == 238   ? FG_CTR_NNTP_WARMUP_WANTED
				   : code == 431 ? FG_CTR_NNTP_WARMUP_LATER
						 : FG_CTR_NNTP_WARMUP_UNKNOWN,
				FG_NNTP_CODE_C238, true);
	}
}

unsigned fg_nntp_warmup_poll(struct fg_nntp_engine *e)
{
	if (!e->warm.poll || !e->n_asks)
		return 0;
	return e->warm.poll(e->warm.ctx, warm_done, e);
}
