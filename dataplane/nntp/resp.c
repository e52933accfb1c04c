/* SPDX-License-Identifier: MIT */
/*
 * resp.c — every answer a session gives, and every verdict record, built
 * in one place.
 *
 * An answer goes into the session's response queue (respq.c) in command
 * order. Most commands answer at once (fg_nntp_put); an article's outcome
 * and a warm-up question's answer come later, so their command reserves
 * the place (fg_respq_push with FG_RQ_WAIT) and the answer fills it
 * (fg_nntp_fill). Every command checked that its answer has room before it
 * ran, so neither can fail.
 *
 * "<code> <id>" (RFC 4644 2.4.1, 2.5.1: the client's argument echoed, as
 * it came) is laid out by echo() for all of them.
 *
 * A verdict record (session.h; the verdict log) starts from
 * fg_nntp_verdict_init — time, peer, the ID, the command, the code and
 * the reason — and an article's caller adds its dates and size.
 */
#include <string.h>

#include "nntp_int.h"

static uint32_t echo(char *p, const char *prefix, const char *id, uint32_t len)
{
	memcpy(p, prefix, 4);
	memcpy(p + 4, id, len);
	memcpy(p + 4 + len, "\r\n", 2);
	return 4 + len + 2;
}

void fg_nntp_put(struct fg_nntp_session *s, enum fg_nntp_code code, const char *text, uint32_t len,
		 enum fg_respq_state st)
{
	uint32_t seq;
	char *p = fg_respq_push(&s->q, len, st, &seq);

	/* every command checked for room before it ran */
	FG_ASSERT(p != NULL);
	memcpy(p, text, len);
	fg_nntp_count_code(s, code);
	if (st == FG_RQ_CLOSE)
		s->closing = true;
}

void fg_nntp_put_echo(struct fg_nntp_session *s, enum fg_nntp_code code, const char *prefix,
		      const char *id, uint32_t len)
{
	uint32_t seq;
	char *p = fg_respq_push(&s->q, FG_NNTP_ECHO_LEN(len), FG_RQ_READY, &seq);

	FG_ASSERT(p != NULL);
	echo(p, prefix, id, len);
	fg_nntp_count_code(s, code);
}

void fg_nntp_fill(struct fg_nntp_session *s, uint32_t seq, enum fg_nntp_code code, const char *text,
		  uint32_t len, enum fg_respq_state st)
{
	uint32_t cap;
	char *p = fg_respq_slot(&s->q, seq, &cap);

	FG_ASSERT(len <= cap);
	memcpy(p, text, len);
	fg_respq_fill(&s->q, seq, len, st);
	fg_nntp_count_code(s, code);
	if (st == FG_RQ_CLOSE)
		s->closing = true;
}

void fg_nntp_fill_echo(struct fg_nntp_session *s, uint32_t seq, enum fg_nntp_code code,
		       const char *prefix, const char *id, uint32_t len)
{
	uint32_t cap;
	char *p = fg_respq_slot(&s->q, seq, &cap);

	FG_ASSERT(FG_NNTP_ECHO_LEN(len) <= cap);
	fg_respq_fill(&s->q, seq, echo(p, prefix, id, len), FG_RQ_READY);
	fg_nntp_count_code(s, code);
}

/* Drop every queued response: the session closes after a CLOSE line or
 * when the transport can no longer send. The transfers and questions that
 * were to fill a place in it have nowhere to answer now. */
void fg_nntp_drop_responses(struct fg_nntp_session *s)
{
	struct fg_nntp_engine *e = s->e;

	fg_respq_clear(&s->q);
	for (unsigned i = 0; i < e->max_xfers && s->n_xfers; i++)
		if (e->xfers[i].state != FG_X_FREE && e->xfers[i].s == s)
			e->xfers[i].resp = false;
	fg_nntp_warmup_drop(s);
}

void fg_nntp_verdict_init(struct fg_verdict_rec *r, const struct fg_nntp_session *s,
			  enum fg_nntp_verb verb, enum fg_nntp_code code, enum fg_reason reason,
			  const char *id, uint32_t len)
{
	*r = (struct fg_verdict_rec){
		.time = s->e->now, .peer = s->peer_idx, .peer_name = s->peer ? s->peer->name : "",
		.remote = s->remote.family ? &s->remote : NULL,
		.msgid = id, .msgid_len = (uint16_t)FG_MIN(len, (uint32_t)UINT16_MAX), .verb = verb,
		.code = fg_nntp_code_number(code), .reason = reason,
	};
}

/* A decision without an article's dates (an offer, a drained article). */
void fg_nntp_verdict_of(struct fg_nntp_session *s, enum fg_nntp_verb verb, enum fg_nntp_code code,
			enum fg_reason reason, const char *id, uint32_t len, uint64_t size)
{
	struct fg_verdict_rec r;

	if (!s->e->hooks.verdict && !s->e->observe)
		return;
	fg_nntp_verdict_init(&r, s, verb, code, reason, id, len);
	r.size = size;
	fg_nntp_verdict(s, &r);
}

void fg_nntp_verdict(struct fg_nntp_session *s, const struct fg_verdict_rec *r)
{
	struct fg_nntp_engine *e = s->e;

	if (e->observe)
		e->observe(e->observe_ctx, r);
	if (!e->hooks.verdict)
		return;
	if (e->hooks.verdict(e->hooks.ctx, r) == 0)
		fg_nntp_count(s, FG_CTR_NNTP_VERDICTS_LOGGED);
	else
		fg_nntp_count(s, FG_CTR_NNTP_VERDICTS_DROPPED);
}
