/* SPDX-License-Identifier: MIT */
/*
 * xfer.c — one article transfer, from its first octet to its recorded
 * outcome.
 *
 *   start:   the sink's begin() (at the TAKETHIS line, or with the 335)
 *   append:  each piece of the article, in place; the sink copies it or
 *            asks for a hold (the engine takes it through the transport)
 *   end:     the article is complete. Its answer's place in the response
 *            queue is reserved now (command order), then:
 *              rules (rules.h) over the copied header section; the
 *              history is asked first inside them (a duplicate is one
 *              whatever its date, RFC 5537 3.3), then dates, headers,
 *              size, the peer's newsgroups;
 *              refused  -> the sink's copy is discarded; remembered as
 *                          REJECTED when the article itself carried the
 *                          ID and the reason is a fact of the article
 *                          (fg_rules_remember); 439 / 437
 *              accepted -> ACCEPTING (begin_accept), then commit()
 *   wait:    begin_accept said another transfer of this ID is ACCEPTING
 *            (or the table is full): retried from poll() until that one
 *            ends — 439 if it was accepted, else this one takes its place
 *   done:    the sink says safe -> ACCEPTED (journal, version note,
 *            Supersedes mark), 239 / 235; failed -> the entry is released
 *            (abort), 400 and close (RFC 4644 2.5.2) / 436; refused by
 *            the acknowledging downstream (end-to-end, docs/relay.md) ->
 *            439 / 437, REJECTED when that server confirmed it with a
 *            438 to CHECK, else the entry is released
 *
 * A transfer keeps what its completion needs (the dates, the version and
 * Supersedes it honours), because the session's header buffer is reused
 * by the next article long before a slow sink answers, and the session
 * itself may be gone by then: the outcome is recorded all the same.
 *
 * Clock sanity (clock.c): every complete article with a trusted
 * Injection-Date feeds the view. The view never defers anything: while it
 * suspects the clock, an article refused only for its date is looked at
 * again at the time the view estimates; if that accepts it, it is passed
 * on (accepted and relayed: the downstream judges it with its own clock),
 * else refused (439/437) and not remembered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

static uint64_t cookie(const struct fg_nntp_engine *e, const struct fg_xfer *x)
{
	return (uint64_t)x->gen << 32 | fg_nntp_xfer_index(e, x);
}

/* ------------------------------------------------------------ buffers */

static void release_holds(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	while (x->hold_head != FG_NNTP_NONE) {
		struct fg_nntp_hold *h = &e->holds[x->hold_head];
		uint32_t next = h->next;

		x->s->ops->release(x->s->t, &h->seg);
		h->next = e->hold_free;
		e->hold_free = x->hold_head;
		x->hold_head = next;
	}
	x->n_holds = 0;
}

/* The peer and Message-ID of a transfer, for the journal's fields (log.h). */
static const struct fg_log_ctx *xfer_log_ctx(const struct fg_xfer *x, struct fg_log_ctx *lc)
{
	lc->peer = x->s->peer ? x->s->peer->name : NULL;
	lc->msgid = x->id;
	return lc;
}

/* The sink is done with the article's octets (discarded or completed). */
static void settle(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	release_holds(e, x);
	FG_ASSERT(x->s->pending_bytes >= x->bytes);
	x->s->pending_bytes -= x->bytes;
	x->bytes = 0;
}

void fg_nntp_xfer_sink_close(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	if (x->sink_open) {
		e->sink_ops->discard(e->sink, x->art);
		x->sink_open = false;
	}
	settle(e, x);
}

struct fg_xfer *fg_nntp_xfer_start(struct fg_nntp_session *s, enum fg_nntp_verb verb,
				   const char *id, size_t id_len,
				   const struct fg_history_key *key, int *err)
{
	struct fg_nntp_engine *e = s->e;
	unsigned peer = s->peer_idx >= 0 ? (unsigned)s->peer_idx : e->cfg->n_peer;
	struct fg_xfer *x = fg_nntp_xfer_alloc(e);
	void *art = NULL;
	int rc;

	FG_ASSERT(x != NULL && id_len <= FG_MSGID_MAX);
	rc = e->sink_ops->begin(e->sink, id, id_len, peer, &art);
	if (rc == -EAGAIN) {
		x->state = FG_X_OPEN;
		fg_nntp_xfer_free(e, x);
		*err = rc;
		return NULL;
	}
	x->s = s;
	s->n_xfers++;
	x->state = FG_X_OPEN;
	x->verb = verb;
	x->key = *key;
	x->token = s->token;
	x->art = art;
	x->sink_open = rc == 0;
	x->failed = rc != 0;
	memcpy(x->id, id, id_len);
	x->id[id_len] = '\0';
	if (rc != 0) {
		struct fg_log_ctx lc;

		fg_log_about(FG_LOG_WARN, FG_NNTP_COMP, xfer_log_ctx(x, &lc),
			     "sink refused %s: %d", x->id, rc);
	}
	x->id_len = (uint16_t)id_len;
	return x;
}

void fg_nntp_xfer_append(struct fg_nntp_session *s, struct fg_xfer *x, const struct fg_iov *seg,
			 bool holdable)
{
	struct fg_nntp_engine *e = s->e;
	bool may_hold = holdable && s->ops->hold && e->hold_free != FG_NNTP_NONE &&
			(!s->ops->may_hold || s->ops->may_hold(s->t, seg->len));
	int rc = e->sink_ops->append(e->sink, x->art, seg, may_hold);

	if (rc < 0 || (rc == FG_SINK_HOLD && !may_hold)) {
		x->failed = true;
		fg_nntp_xfer_sink_close(e, x);
		return;
	}
	if (rc == FG_SINK_HOLD) {
		uint32_t h = fg_nntp_hold_alloc(e);

		e->holds[h].seg = *seg;
		e->holds[h].next = x->hold_head;
		x->hold_head = h;
		x->n_holds++;
		s->ops->hold(s->t, seg);
		fg_nntp_count(s, FG_CTR_NNTP_SINK_HOLDS);
	}
	x->bytes += seg->len;
	s->pending_bytes += seg->len;
}

/* ------------------------------------------------------------ answers */

static bool can_answer(const struct fg_xfer *x)
{
	return x->resp && !x->s->gone;
}

static void answer(struct fg_xfer *x, enum fg_nntp_code code, const char *text, uint32_t len,
		   enum fg_respq_state st)
{
	if (!can_answer(x))
		return;
	fg_nntp_fill(x->s, x->seq, code, text, len, st);
	x->resp = false;
}

#define ANSWER(x, code, lit, st) answer(x, FG_NNTP_CODE_##code, lit, sizeof(lit) - 1, st)

/* "<code> <id>" for TAKETHIS */
static void answer_echo(struct fg_xfer *x, enum fg_nntp_code code, const char *prefix)
{
	if (!can_answer(x))
		return;
	fg_nntp_fill_echo(x->s, x->seq, code, prefix, x->id, x->id_len);
	x->resp = false;
}

static void verdict(struct fg_xfer *x, enum fg_nntp_code code, enum fg_reason reason,
		    uint64_t size)
{
	struct fg_verdict_rec r;

	fg_nntp_verdict_init(&r, x->s, x->verb, code, reason, x->id, x->id_len);
	r.has_date = x->has_date;
	r.has_injection_date = x->has_inj;
	r.date = x->date;
	r.injection_date = x->inj;
	r.size = size;
	fg_nntp_verdict(x->s, &r);
}

/* The transfer's end: its session may be freed here. */
static void done(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	struct fg_nntp_session *s = x->s;

	settle(e, x);
	fg_nntp_xfer_free(e, x);
	fg_nntp_session_flush(s);
	fg_nntp_session_xfer_done(s);
}

/* ------------------------------------------------------------ outcomes */

/* The article could not be made safe: the peer must retry it later. */
static void fail(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	if (x->state == FG_X_COMMITTED)
		fg_history_abort(e->h, &x->ref);
	else if (!x->s->gone)
		fg_nntp_offer_forget(x->s, &x->key, true);
	fg_nntp_xfer_sink_close(e, x);
	fg_nntp_count(x->s, FG_CTR_NNTP_ARTICLES_FAILED);
	if (x->verb == FG_NNTP_VERB_TAKETHIS) {
		/* RFC 4644 2.5.2: 400 and close; never 431 to TAKETHIS */
		ANSWER(x, C400, FG_L_SINK_FAILED, FG_RQ_CLOSE);
		verdict(x, FG_NNTP_CODE_C400, FG_REASON_NONE, 0);
	} else {
		ANSWER(x, C436, FG_L_FAILED_LATER, FG_RQ_READY);
		verdict(x, FG_NNTP_CODE_C436, FG_REASON_NONE, 0);
	}
	done(e, x);
}

/* Refused: 439 <id> / 437. */
static void refuse(struct fg_xfer *x, enum fg_reason reason, uint64_t size)
{
	char line[sizeof(FG_L_REJECTED_FMT) + 32];
	int n;

	fg_nntp_count(x->s, FG_CTR_NNTP_ARTICLES_REFUSED);
	if (x->verb == FG_NNTP_VERB_TAKETHIS) {
		answer_echo(x, FG_NNTP_CODE_C439, FG_L_ECHO_439);
		verdict(x, FG_NNTP_CODE_C439, reason, size);
		return;
	}
	n = snprintf(line, sizeof(line), FG_L_REJECTED_FMT, fg_reason_name(reason));
	answer(x, FG_NNTP_CODE_C437, line, (uint32_t)FG_MIN((size_t)n, sizeof(line) - 1), FG_RQ_READY);
	verdict(x, FG_NNTP_CODE_C437, reason, size);
}

static void succeed(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	struct fg_history_key k;
	struct fg_log_ctx lc;
	int rc;

	/* the article is safe: journal it first, then finish the entry. A
	 * writer killed between the two leaves ACCEPTING, which floodctld
	 * settles from the queue (region.h); the other order would leave an
	 * ACCEPTED entry without its journal record, that the queue's
	 * deletion gate never waits for */
	fg_nntp_journal(e, &x->key, FG_HISTORY_ACCEPTED, x->article_date, x->first_seen,
			x->date_used, FG_REASON_NONE, x->id, x->id_len);
	fg_nntp_claim_settle(e, x->id, x->id_len, true);
	rc = fg_history_finish(e->h, &x->ref, FG_HISTORY_ACCEPTED, x->article_date, x->first_seen,
			       e->now);
	if (rc != 0)
		fg_log_about(FG_LOG_ERR, FG_NNTP_COMP, xfer_log_ctx(x, &lc),
			     "history finish(accepted) of %s: %d", x->id, rc);
	if (x->note_version &&
	    fg_history_version_note(e->h, x->base, x->base_len, x->version, x->id, x->id_len,
				    e->now) == 0)
		fg_nntp_count(x->s, FG_CTR_NNTP_VERSIONS_NOTED);
	if (x->has_sup) {
		/* RFC 5537 3.6: the named ID becomes unwanted (honour is opt-in) */
		fg_history_hash(e->h, x->sup, x->sup_len, &k);
		if (fg_history_insert_final(e->h, &k, FG_HISTORY_SUPERSEDED, x->article_date,
					    x->first_seen, e->now, NULL) == 0) {
			fg_nntp_journal(e, &k, FG_HISTORY_SUPERSEDED, x->article_date,
					x->first_seen, FG_RULES_DATE_NONE, FG_REASON_NONE,
					x->sup, x->sup_len);
			fg_nntp_count(x->s, FG_CTR_NNTP_SUPERSEDES_HONORED);
		}
	}
	fg_nntp_count(x->s, FG_CTR_NNTP_ARTICLES_ACCEPTED);
	if (x->verb == FG_NNTP_VERB_TAKETHIS) {
		answer_echo(x, FG_NNTP_CODE_C239, FG_L_ECHO_239);
		verdict(x, FG_NNTP_CODE_C239, FG_REASON_NONE, x->size);
	} else {
		ANSWER(x, C235, FG_L_IHAVE_OK, FG_RQ_READY);
		verdict(x, FG_NNTP_CODE_C235, FG_REASON_NONE, x->size);
	}
	done(e, x);
}

/* ACCEPTING, then the sink; or wait for the transfer that is ahead. */
static void try_accept(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	struct fg_history_entry found;
	struct fg_log_ctx lc;
	enum fg_reason reason;
	int rc;

	rc = fg_history_begin_accept(e->h, &x->key, e->now, x->token, &x->ref, &found);
	if (rc == 0) {
		/* an offer of ours, if any, became this ACCEPTING entry */
		if (!x->s->gone)
			fg_nntp_offer_forget(x->s, &x->key, false);
		x->state = FG_X_COMMITTED;
		if (e->sink_ops->commit(e->sink, x->art, cookie(e, x)) != 0) {
			x->sink_open = false;	/* a failed commit ends the sink's article */
			fail(e, x);
		}
		return;
	}
	if (rc == -EAGAIN || rc == -ENOSPC) {
		if (x->state != FG_X_WAIT)
			fg_nntp_count(x->s, rc == -EAGAIN ? FG_CTR_NNTP_WAIT_ACCEPTING :
							FG_CTR_NNTP_HISTORY_FULL);
		x->state = FG_X_WAIT;
		fg_nntp_wait_add(e, x);
		return;
	}
	if (rc == -EEXIST) {
		/* the one ahead was accepted (or rejected, superseded) */
		reason = found.state == FG_HISTORY_SUPERSEDED && e->cfg->honor_supersedes ?
			 FG_REASON_SUPERSEDED : FG_REASON_DUPLICATE;
		fg_nntp_count_reason(x->s, reason);
		if (!x->s->gone)
			fg_nntp_offer_forget(x->s, &x->key, true);
		fg_nntp_xfer_sink_close(e, x);
		refuse(x, reason, x->size);
		done(e, x);
		return;
	}
	fg_log_about(FG_LOG_ERR, FG_NNTP_COMP, xfer_log_ctx(x, &lc),
		     "history begin_accept of %s: %d", x->id, rc);
	fail(e, x);
}

void fg_nntp_xfer_retry(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	FG_ASSERT(x->state == FG_X_WAIT);
	try_accept(e, x);
}

/*
 * The acknowledging downstream refused the article (sink.h,
 * FG_SINK_REFUSED*): the peer hears 439 / 437 as if the filter had. Kept
 * as REJECTED only when the server confirmed (438 to a CHECK of the ID):
 * innd answers 439 and forgets when it cannot store (a full spool), and
 * remembering that would refuse the article site-wide for the retention.
 */
static void downstream_refused(struct fg_nntp_engine *e, struct fg_xfer *x, bool confirmed)
{
	struct fg_log_ctx lc;

	if (confirmed) {
		fg_nntp_journal(e, &x->key, FG_HISTORY_REJECTED, x->article_date, x->first_seen,
				x->date_used, FG_REASON_DOWNSTREAM_REFUSED, x->id, x->id_len);
		fg_nntp_claim_settle(e, x->id, x->id_len, false);
		if (fg_history_finish(e->h, &x->ref, FG_HISTORY_REJECTED, x->article_date,
				      x->first_seen, e->now) != 0)
			fg_log_about(FG_LOG_ERR, FG_NNTP_COMP, xfer_log_ctx(x, &lc),
				     "history finish(rejected) of %s", x->id);
		fg_nntp_count(x->s, FG_CTR_NNTP_REJECTS_REMEMBERED);
	} else {
		fg_history_abort(e->h, &x->ref);
	}
	fg_nntp_count_reason(x->s, FG_REASON_DOWNSTREAM_REFUSED);
	refuse(x, FG_REASON_DOWNSTREAM_REFUSED, x->size);
	done(e, x);
}

void fg_nntp_xfer_sink_done(void *engine, uint64_t ck, int status)
{
	struct fg_nntp_engine *e = engine;
	uint32_t i = (uint32_t)ck;
	struct fg_xfer *x = i < e->max_xfers ? &e->xfers[i] : NULL;

	if (!x || x->gen != (uint32_t)(ck >> 32) || x->state != FG_X_COMMITTED) {
		FG_LOG_ERR(FG_NNTP_COMP, "sink completion for no committed article (%#llx)",
			   (unsigned long long)ck);
		return;
	}
	x->sink_open = false;	/* the sink is done with its article */
	if (status == 0)
		succeed(e, x);
	else if (status == FG_SINK_REFUSED || status == FG_SINK_REFUSED_FORGET)
		downstream_refused(e, x, status == FG_SINK_REFUSED);
	else
		fail(e, x);
}

/* REJECTED in history: re-offers are refused at CHECK (INN remembertrash). */
static bool remember(struct fg_nntp_engine *e, struct fg_xfer *x, enum fg_reason reason)
{
	struct fg_history_entry found;

	if (fg_history_begin_accept(e->h, &x->key, e->now, x->token, &x->ref, &found) != 0)
		return false;
	/* an offer of ours, if any, became this entry: no longer live, so
	 * its place under max-outstanding-offers is free (offers.c) */
	if (!x->s->gone)
		fg_nntp_offer_forget(x->s, &x->key, false);
	if (fg_history_finish(e->h, &x->ref, FG_HISTORY_REJECTED, x->article_date, x->first_seen,
			      e->now) != 0)
		return false;
	fg_nntp_journal(e, &x->key, FG_HISTORY_REJECTED, x->article_date, x->first_seen,
			x->date_used, reason, x->id, x->id_len);
	fg_nntp_claim_settle(e, x->id, x->id_len, false);
	fg_nntp_count(x->s, FG_CTR_NNTP_REJECTS_REMEMBERED);
	return true;
}

/* ------------------------------------------------------------ the decision */

/* The header section must end for the scanner: an article that ended
 * inside it has the terminator appended (its content ends with CRLF). */
static void finish_header(struct fg_nntp_session_art *a)
{
	if (a->hdr_done)
		return;
	a->hdr_done = true;
	memcpy(a->hdr + a->hdr_len, ".\r\n", 3);
	a->hdr_len += 3;
	fg_article_scan(&a->scan, (const char *)a->hdr, a->hdr_len);
}

static bool date_reason(enum fg_reason r)
{
	return r == FG_REASON_TOO_OLD || r == FG_REASON_TOO_FAR_FUTURE;
}

/* The verdict acted on, in the engine's and the peer's counters. */
static void count_rules(struct fg_nntp_session *s, const struct fg_rules_verdict *v)
{
	fg_rules_count(v, &s->e->st->s);
	if (s->pst)
		fg_rules_count(v, &s->pst->s);
}

/*
 * While the clock view suspects the local clock, an article refused for
 * its date alone gets a second look at the time the view estimates (now
 * minus the offset): if that would accept it, the estimated error could
 * flip the verdict, and the article is passed on — accepted and relayed,
 * the downstream judges it with its own clock. Returns the reason acted on.
 */
static enum fg_reason clock_second_look(struct fg_nntp_session *s, struct fg_rules_input *in,
					struct fg_rules_verdict *v, enum fg_reason reason)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_rules_verdict again;

	if (!e->clock.suspect || !date_reason(reason))
		return reason;
	in->now = e->now - e->clock.offset;
	if (fg_rules_decide(&e->rules, in, &again, NULL) != FG_REASON_NONE)
		return reason;
	*v = again;
	fg_nntp_count(s, FG_CTR_NNTP_CLOCK_PASSED);
	return FG_REASON_NONE;
}

static void hist_add(struct fg_nntp_session *s, bool arrival, int64_t v)
{
	fg_hist_add(arrival ? &s->e->st->n.arrival_delay : &s->e->st->n.injection_delay, v);
	if (s->pst)
		fg_hist_add(arrival ? &s->pst->n.arrival_delay : &s->pst->n.injection_delay, v);
}

/* Seed 002: the three times stay apart; two delays are measured. */
static void note_dates(struct fg_nntp_session *s, struct fg_xfer *x,
		       const struct fg_rules_verdict *v)
{
	struct fg_nntp_engine *e = s->e;
	int turned;

	x->first_seen = e->now;
	x->article_date = v->date_used != FG_RULES_DATE_NONE ? v->article_date : e->now;
	x->date_used = v->date_used;
	x->has_date = v->date.parsed && v->date.err == FG_DATE_OK && v->date.count == 1;
	x->date = v->date.t;
	x->has_inj = v->injection_date.parsed && v->injection_date.err == FG_DATE_OK &&
		     v->injection_date.count == 1;
	x->inj = v->injection_date.t;
	if (!x->has_inj)
		return;
	hist_add(s, true, e->now - x->inj);
	if (x->has_date)
		hist_add(s, false, x->inj - x->date);
	/* a guessed or misread zone says nothing about our clock */
	if (!fg_date_reading_trusted(&v->injection_date.reading)) {
		fg_nntp_count(s, FG_CTR_NNTP_CLOCK_UNTRUSTED);
		return;
	}
	turned = fg_nntp_clock_sample(&e->clock, e->now - x->inj);
	if (turned > 0) {
		fg_nntp_count(s, FG_CTR_NNTP_CLOCK_SUSPECT_ENTERED);
		FG_LOG_WARN(FG_NNTP_COMP, "local clock looks off by %lld s (arrival - Injection-Date "
			    "of recent articles); date verdicts it could flip are passed on, none remembered",
			    (long long)e->clock.offset);
	} else if (turned < 0) {
		fg_nntp_count(s, FG_CTR_NNTP_CLOCK_SUSPECT_CLEARED);
		FG_LOG_NOTICE(FG_NNTP_COMP, "local clock looks right again");
	}
}

/* What the completion needs of the verdict, copied out of the header. */
static void keep_for_completion(const struct fg_nntp_engine *e, struct fg_xfer *x,
				const struct fg_rules_verdict *v)
{
	if (e->cfg->version_numbers && v->version_ok && v->version.has_version) {
		x->note_version = true;
		x->version = v->version.version;
		x->base_len = (uint16_t)v->version.base_len;
		memcpy(x->base, v->version.base, v->version.base_len + 1);
	}
	if (e->cfg->honor_supersedes && v->supersedes_valid && v->supersedes.len <= FG_MSGID_MAX) {
		x->has_sup = true;
		x->sup_len = (uint16_t)v->supersedes.len;
		memcpy(x->sup, v->supersedes.ptr, v->supersedes.len);
		x->sup[x->sup_len] = '\0';
	}
}

void fg_nntp_xfer_end(struct fg_nntp_session *s, struct fg_xfer *x)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_nntp_session_art *a = &s->a;
	struct fg_rules_input in = {
		.art = &a->scan, .arg = x->id, .arg_len = x->id_len, .arg_key = &x->key,
		.size = a->size, .now = e->now, .peer = s->peer,
	};
	struct fg_rules_verdict v;
	enum fg_reason reason;
	uint32_t cap = FG_MAX(FG_NNTP_ECHO_LEN(x->id_len), (uint32_t)FG_L_FIXED_MAX);

	char *slot;

	/* the answer's place, in command order (room was checked at the command) */
	slot = fg_respq_push(&s->q, cap, FG_RQ_WAIT, &x->seq);
	FG_ASSERT(slot != NULL);
	x->resp = true;
	x->size = a->size;
	if (!a->hdr)
		a->scan.error = FG_ARTICLE_E_HEADER_TOO_LONG;	/* no memory for it */
	else
		finish_header(a);
	reason = fg_rules_decide(&e->rules, &in, &v, NULL);
	reason = clock_second_look(s, &in, &v, reason);
	count_rules(s, &v);
	note_dates(s, x, &v);
	if (reason == FG_REASON_NONE) {
		keep_for_completion(e, x, &v);
		if (x->failed || !x->sink_open) {
			fail(e, x);
			return;
		}
		if (e->sink_ops->route) {
			/* decided once, here, with the config it was accepted under */
			struct fg_feeds_set route;

			fg_feeds_select(e->cfg, &a->scan, a->size, &route, NULL);
			e->sink_ops->route(e->sink, x->art, &route);
		}
		try_accept(e, x);
		return;
	}
	fg_nntp_xfer_sink_close(e, x);
	/* remember only what the article itself said about its own ID, and
	 * never a date verdict made with a clock that looks wrong */
	if (date_reason(reason) && e->clock.suspect) {
		fg_nntp_count(s, FG_CTR_NNTP_CLOCK_NOT_REMEMBERED);
		fg_nntp_offer_forget(s, &x->key, true);
	} else if (!(fg_rules_remember(&e->rules, &v) && remember(e, x, reason))) {
		fg_nntp_offer_forget(s, &x->key, true);
	}
	refuse(x, reason, a->size);
	done(e, x);
}

void fg_nntp_xfer_drop(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	FG_ASSERT(x->state == FG_X_OPEN);
	x->resp = false;
	fg_nntp_xfer_sink_close(e, x);
	done(e, x);
}
