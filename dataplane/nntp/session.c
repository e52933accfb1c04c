/* SPDX-License-Identifier: MIT */
/*
 * session.c — one peer connection: its states, its command lines and their
 * dispatch, its limits, and the API the transports call. The parts of a
 * session's work each have their file: offers.c (an offer's decision, the
 * live offers, the peer's budgets), artin.c (an article's octets, kept or
 * drained), xfer.c (a transfer to its recorded outcome), resp.c (every
 * answer and verdict record), warmup.c (questions to the downstream).
 *
 * States: a session reads command lines, or it reads an article (after a
 * TAKETHIS line, or after it answered an IHAVE with 335). Beside that it
 * may have stopped reading (`stall`: a limit is reached, the transport
 * was paused and resumes when the limit clears) or be closing (QUIT, 502,
 * a 400, EOF: no more input; close once every response is out).
 *
 *   command line ─┬─ CHECK / MODE / CAPABILITIES / HELP / QUIT / other:
 *                 │    answered at once (a line in the response queue)
 *                 ├─ TAKETHIS <id> ──> article ──> 239 / 439 (/ 400)
 *                 ├─ IHAVE <id> ─ 335 ──> article ──> 235 / 437 / 436
 *                 │               435 / 436 (no article follows)
 *                 └─ AUTHINFO USER / PASS: 381, 281, 481, 482, 502 (auth.c)
 *
 * A peer whose entry has credentials must pass them first (RFC 4643):
 * until its AUTHINFO PASS got 281, CHECK and IHAVE are answered 480 and a
 * TAKETHIS's article is drained, then 480 (auth.c); the other commands
 * work as for any peer.
 *
 * Lines: a command line ends with LF; CRLF is the rule (RFC 3977 3.1), a
 * bare LF is accepted and counted. A line that is complete in one input
 * piece is parsed in place; only a line split across pieces is copied
 * (at most max-line octets). A line longer than max-line (its line end
 * included) is answered "501 Line too long" and skipped to its LF — and
 * when it was a TAKETHIS line, the article that follows it is drained
 * first, so the stream stays in step.
 *
 * Articles: the reader (reader.c) finds the terminator in any
 * segmentation. A TAKETHIS whose ID is invalid or already final in
 * history is drained without the sink and answered from what the command
 * said (the common flood of duplicates costs no copy at all). Otherwise a
 * transfer (xfer.c) streams the article to the sink in place, copies its
 * header section (at most 64 KiB) for the rules, and answers when the
 * outcome is known. Beyond max-article-size the sink's copy is dropped and
 * the rest drained without buffering; the rules then refuse it (oversize).
 *
 * Limits (config [session]): responses not yet sent are bounded by
 * max-pending-commands and by the response buffer; article octets not yet
 * safe by max-pending-bytes; beyond either, the session stops reading at
 * the next command (never inside an article, whose own size is bounded by
 * max-article-size), which closes the peer's TCP window. Nothing grows
 * without bound, whatever the peer sends.
 *
 * History consistency: every 238 and 335 this session gave is tracked
 * (struct fg_nntp_offer) and released when the session ends or its article
 * is refused without being remembered; an article in progress when the
 * connection drops is discarded (its ID was never ACCEPTING); an ACCEPTING
 * entry belongs to its transfer, which outlives the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lines.h"
#include "nntp_int.h"

enum run { RUN_OK = 0, RUN_STALL = 1 };


static void drop_article(struct fg_nntp_session *s)
{
	struct fg_xfer *x = s->a.x;

	if (!s->in_article)
		return;
	/* first: dropping the transfer flushes this session again */
	s->a.x = NULL;
	s->in_article = false;
	if (x)
		fg_nntp_xfer_drop(s->e, x);
}

static void set_stall(struct fg_nntp_session *s, unsigned bit, enum fg_counter c)
{
	if (!(s->stall & bit)) {
		fg_nntp_count(s, c);
		if (bit == FG_STALL_RATE)
			s->e->n_rate_stalled++;
	}
	if (!s->stall)
		s->e->n_stalled++;
	s->stall |= bit;
}

static void clear_stall(struct fg_nntp_session *s)
{
	if (s->stall)
		s->e->n_stalled--;
	if (s->stall & FG_STALL_RATE)
		s->e->n_rate_stalled--;
	s->stall = 0;
}

void fg_nntp_session_flush(struct fg_nntp_session *s)
{
	bool closed_line;
	int64_t rc;

	if (s->gone || s->close_sent)
		return;
	rc = fg_respq_flush(&s->q, s->ops, s->t, &closed_line);
	if (rc > 0)
		fg_nntp_count_n(s, FG_CTR_NNTP_BYTES_OUT, (uint64_t)rc);
	if (rc < 0 || closed_line) {
		fg_nntp_drop_responses(s);
		s->closing = true;
	}
	if (!s->closing || fg_respq_entries(&s->q) != 0)
		return;
	drop_article(s);
	s->line_ready = false;
	clear_stall(s);
	s->close_sent = true;
	s->ops->close(s->t);
}

/* Stop reading now, answer `line` (a 400) after what is queued, close. */
void fg_nntp_session_close_now(struct fg_nntp_session *s, const char *line, size_t len)
{
	if (s->closing || s->gone)
		return;
	drop_article(s);
	s->line_ready = false;
	clear_stall(s);
	if (fg_respq_room(&s->q, (uint32_t)len))
		fg_nntp_put(s, FG_NNTP_CODE_C400, line, (uint32_t)len, FG_RQ_CLOSE);
	else
		fg_nntp_drop_responses(s);	/* the peer reads nothing: just close */
	s->closing = true;
	fg_nntp_session_flush(s);
}

/* ------------------------------------------------------------ retiring */

/*
 * Retiring: a reload removed the session's peer or the address it came in
 * on. The session drains, then closes:
 *
 *   1. The article being read when the reload came is read to its end and
 *      judged as any other (under the box's defaults: the peer's entry is
 *      gone); so is a TAKETHIS that follows (the peer sent it after a 238,
 *      or without a CHECK: refusing it would only make it come again).
 *   2. Every new offer read meanwhile is deferred: CHECK 431, IHAVE 436
 *      (RFC 4644 2.4, RFC 3977 6.3.2: try again later, which the peer
 *      does on the server it is sent to next), counted nntp_defer_retiring.
 *   3. At the first point where all that was read is answered (no article
 *      in flight, no partial or saved line), retire_line (a 400) goes out
 *      after the answers still waiting for their outcome, and the session
 *      closes.
 *   4. Bound: RETIRE_MAX_NS after the reload the session is closed as at
 *      step 3 whatever is in flight (an article cut off is not accepted;
 *      its peer sends it again). The engine's once-a-second scan checks it.
 */
#define RETIRE_MAX_NS (10ull * 1000000000ull)

static bool at_rest(const struct fg_nntp_session *s)
{
	return !s->in_article && !s->line_len && !s->line_over && !s->line_ready;
}

static void retire_if_done(struct fg_nntp_session *s)
{
	if (s->retiring && !s->closing && !s->gone && at_rest(s))
		fg_nntp_session_close_now(s, s->retire_line, strlen(s->retire_line));
}

void fg_nntp_session_retire(struct fg_nntp_session *s, enum fg_nntp_retire why)
{
	if (s->retiring || s->closing || s->gone)
		return;
	s->retiring = true;
	s->retire_line = why == FG_NNTP_RETIRE_ADDRESS ? FG_L_ADDR_GONE : FG_L_PEER_GONE;
	s->retire_by = s->e->now_ns + RETIRE_MAX_NS;
	fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_RETIRED);
	retire_if_done(s);
}

bool fg_nntp_session_retiring(const struct fg_nntp_session *s)
{
	return s->retiring;
}

/* ------------------------------------------------------------ limits */

static bool room(const struct fg_nntp_session *s, uint32_t bytes, uint32_t entries)
{
	return fg_respq_entries(&s->q) + entries <= s->e->cfg->max_pending_commands &&
	       fg_respq_room(&s->q, bytes);
}

/* Room for the answers of one command; flush first, stall if still none. */
static bool need_room(struct fg_nntp_session *s, uint32_t bytes, uint32_t entries)
{
	if (room(s, bytes, entries))
		return true;
	fg_nntp_session_flush(s);
	if (room(s, bytes, entries))
		return true;
	set_stall(s, FG_STALL_RESPONSES, FG_CTR_NNTP_STALL_RESPONSES);
	return false;
}

/* Can an article that needs the sink start now? (IHAVE answers 436 when
 * the journal or the sink is full; TAKETHIS may only stop reading.) */
static bool can_take_article(struct fg_nntp_session *s, bool ihave)
{
	struct fg_nntp_engine *e = s->e;

	if (s->pending_bytes >= e->cfg->max_pending_bytes)
		set_stall(s, FG_STALL_BYTES, FG_CTR_NNTP_STALL_BYTES);
	else if (!ihave && fg_nntp_journal_blocked(e))
		set_stall(s, FG_STALL_JOURNAL, FG_CTR_NNTP_STALL_JOURNAL);
	else if (!ihave && fg_nntp_sink_full(e))
		set_stall(s, FG_STALL_SINK, FG_CTR_NNTP_STALL_SINK);
	else if (e->xfer_free == FG_NNTP_NONE)
		set_stall(s, FG_STALL_XFERS, FG_CTR_NNTP_STALL_XFERS);
	return s->stall == 0;
}

static bool stall_cleared(const struct fg_nntp_session *s)
{
	const struct fg_nntp_engine *e = s->e;

	if ((s->stall & FG_STALL_RESPONSES) &&
	    !room(s, e->cfg->max_line + 2 * FG_L_FIXED_MAX, 2))
		return false;
	if ((s->stall & FG_STALL_BYTES) && s->pending_bytes >= e->cfg->max_pending_bytes)
		return false;
	if ((s->stall & FG_STALL_JOURNAL) && fg_nntp_journal_blocked(e))
		return false;
	if ((s->stall & FG_STALL_SINK) && fg_nntp_sink_full(e))
		return false;
	if ((s->stall & FG_STALL_XFERS) && e->xfer_free == FG_NNTP_NONE)
		return false;
	if ((s->stall & FG_STALL_RATE) && !fg_nntp_budget_ok(s))
		return false;
	return true;
}

/* ------------------------------------------------------------ TAKETHIS, IHAVE */

/* What a TAKETHIS or IHAVE line says, worked out before it runs. */
struct prep {
	bool syntax_ok;			/* one argument, no stray control octet */
	bool wire;			/* the argument is an RFC 3977 Message-ID */
	bool valid;			/* ... and an RFC 5536 one, an article could carry it */
	struct fg_history_key key;
	enum fg_reason known;		/* final in history: refused at once */
	bool unknown;			/* the history did not hold the ID (seed 002: first) */
	bool own_offer;			/* ... it holds this session's own 238 for it */
};

static void prepare(struct fg_nntp_session *s, const struct fg_nntp_cmd *c, struct prep *p)
{
	struct fg_history_entry e;
	enum fg_history_state st;

	memset(p, 0, sizeof(*p));
	p->syntax_ok = c->argc == 1 && !c->bad_char;
	if (!p->syntax_ok)
		return;
	/* a syntax error (RFC 3977 3.6) for IHAVE; never wanted (RFC 5536) */
	p->valid = fg_msgid_valid_header(c->arg[0], c->arg_len[0]);
	/* every header-form ID is a wire-form one (msgid.h): one pass */
	p->wire = p->valid || fg_msgid_valid_wire(c->arg[0], c->arg_len[0]);
	if (!p->valid)
		return;
	if (c->key)
		p->key = *c->key;
	else
		fg_history_hash(s->e->h, c->arg[0], c->arg_len[0], &p->key);
	if (s->e->cfg->refuse_cyber_cancels && fg_rules_is_cyber_cancel(c->arg[0], c->arg_len[0])) {
		p->known = FG_REASON_CYBER_CANCEL;	/* refused at once, as a known ID */
		return;
	}
	st = fg_history_lookup(s->e->h, &p->key, s->e->now, &e);
	fg_nntp_final_reason(s->e, st, &p->known);
	p->unknown = st == FG_HISTORY_ABSENT ||
		     (st == FG_HISTORY_OFFERED && (e.flags & FG_HISTORY_F_EXPIRED));
	/* a miss of our own history: INN's, if the site brought it (foreign.c) */
	if (p->unknown && fg_nntp_foreign_known(s, c->arg[0], c->arg_len[0])) {
		p->known = FG_REASON_DUPLICATE;
		p->unknown = false;
	}
	p->own_offer = st == FG_HISTORY_OFFERED && !p->unknown && e.token == s->token;
}

/* RFC 4644 2.5: TAKETHIS <id> and its article -> 239 / 439 (400). */
static enum run do_takethis(struct fg_nntp_session *s, const struct fg_nntp_cmd *c,
			    const struct prep *p)
{
	struct fg_xfer *x;
	int err = 0;

	if (!p->syntax_ok) {
		fg_nntp_start_drain(s, FG_REASON_NONE, c->bad_char ? FG_L_BAD_CHAR : FG_L_SYNTAX);
		return RUN_OK;
	}
	memcpy(s->a.arg, c->arg[0], c->arg_len[0]);
	s->a.arg_len = c->arg_len[0];
	/* RFC-NOTES: an invalid ID is read to its end, then "439 <arg>" */
	if (!p->valid) {
		fg_nntp_start_drain(s, FG_REASON_BAD_MESSAGE_ID, NULL);
		return RUN_OK;
	}
	if (p->known != FG_REASON_NONE) {
		fg_nntp_count_offer(s, false);
		fg_nntp_start_drain(s, p->known, NULL);
		return RUN_OK;
	}
	if (fg_nntp_peer_paused(s)) {
		fg_nntp_count_offer(s, false);
		fg_nntp_count(s, FG_CTR_NNTP_DEFER_PAUSED);
		fg_nntp_start_paused_drain(s);
		return RUN_OK;
	}
	x = fg_nntp_xfer_start(s, FG_NNTP_VERB_TAKETHIS, c->arg[0], c->arg_len[0], &p->key, &err);
	if (!x) {
		/* never a 431 to TAKETHIS: stop reading instead (the command
		 * runs again, and counts then) */
		set_stall(s, FG_STALL_SINK, FG_CTR_NNTP_STALL_SINK);
		return RUN_STALL;
	}
	if (!p->own_offer)
		fg_nntp_count_offer(s, p->unknown);
	fg_nntp_start_article(s, FG_ART_TAKETHIS, x);
	return RUN_OK;
}

/* RFC 3977 6.3.2: IHAVE <id> -> 335 (article follows) / 435 / 436. */
static void do_ihave(struct fg_nntp_session *s, const struct fg_nntp_cmd *c, const struct prep *p)
{
	const char *arg = c->arg[0];
	uint32_t len = c->arg_len[0];
	enum fg_reason reason = p->known;
	struct fg_history_ref ref;
	fg_time_t deadline;
	struct fg_xfer *x;
	int err = 0;

	if (!p->syntax_ok || !p->wire) {
		FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		return;
	}
	if (!p->valid)
		reason = FG_REASON_BAD_MESSAGE_ID;
	else if (reason != FG_REASON_NONE)
		fg_nntp_count_offer(s, false);
	if (reason == FG_REASON_NONE) {
		switch (fg_nntp_offer(s, arg, len, &p->key, &ref, &deadline, &reason)) {
		case 0:
			x = fg_nntp_xfer_start(s, FG_NNTP_VERB_IHAVE, arg, len, &p->key, &err);
			if (!x) {
				fg_history_release(s->e->h, &ref);
				fg_nntp_count_offer(s, false);
				fg_nntp_count(s, FG_CTR_NNTP_DEFER_SINK);
				goto later;
			}
			fg_nntp_count_offer(s, true);
			fg_nntp_track_offer(s, &p->key, &ref, deadline);
			memcpy(s->a.arg, arg, len);
			s->a.arg_len = len;
			FG_NNTP_PUT(s, C335, FG_L_SEND_IT);
			fg_nntp_verdict_of(s, FG_NNTP_VERB_IHAVE, FG_NNTP_CODE_C335, FG_REASON_NONE, arg, len, 0);
			fg_nntp_start_article(s, FG_ART_IHAVE, x);
			return;
		case 2:
			fg_nntp_count_offer(s, false);
			goto later;
		default:
			fg_nntp_count_offer(s, false);
			break;
		}
	}
	fg_nntp_count_reason(s, reason);
	FG_NNTP_PUT(s, C435, FG_L_NOT_WANTED);
	fg_nntp_verdict_of(s, FG_NNTP_VERB_IHAVE, FG_NNTP_CODE_C435, reason, arg, len, 0);
	return;
later:
	FG_NNTP_PUT(s, C436, FG_L_LATER);
	fg_nntp_verdict_of(s, FG_NNTP_VERB_IHAVE, FG_NNTP_CODE_C436, FG_REASON_NONE, arg, len, 0);
}

/* ------------------------------------------------------------ other commands */

static void do_greeting(struct fg_nntp_session *s)
{
	char buf[sizeof(FG_L_GREETING_FMT) + FG_CONFIG_NAME_MAX];
	int n = snprintf(buf, sizeof(buf), FG_L_GREETING_FMT, s->e->cfg->server_name);

	fg_nntp_put(s, FG_NNTP_CODE_C200, buf, (uint32_t)FG_MIN((size_t)n, sizeof(buf) - 1), FG_RQ_READY);
}

/* RFC 4644 2.3, RFC 3977 5.3: MODE STREAM -> 203; MODE READER -> 502. */
static void do_mode(struct fg_nntp_session *s, const struct fg_nntp_cmd *c)
{
	static const char stream[] = "stream", reader[] = "reader";

	if (c->argc == 1 && c->arg_len[0] == 6 && strncasecmp(c->arg[0], stream, 6) == 0)
		FG_NNTP_PUT(s, C203, FG_L_STREAMING);
	else if (c->argc == 1 && c->arg_len[0] == 6 && strncasecmp(c->arg[0], reader, 6) == 0)
		FG_NNTP_PUT_CLOSE(s, C502, FG_L_NO_READER);	/* transit only */
	else
		FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
}

/* How much response room a command needs before it may run. */
static void needs(const struct fg_nntp_cmd *c, uint32_t line_len, uint32_t *bytes,
		  uint32_t *entries)
{
	*entries = 1;
	switch (c->verb) {
	case FG_NNTP_VERB_CAPABILITIES:
		*bytes = FG_MAX(sizeof(FG_L_CAPABILITIES), sizeof(FG_L_CAPABILITIES_AUTH));
		break;
	case FG_NNTP_VERB_HELP:
		*bytes = sizeof(FG_L_HELP);
		break;
	case FG_NNTP_VERB_IHAVE:
		*bytes = sizeof(FG_L_SEND_IT) + FG_L_FIXED_MAX;
		*entries = 2;
		break;
	default:
		/* an echo, a fixed line, or a transfer's reserved line */
		*bytes = line_len + FG_L_FIXED_MAX;
		break;
	}
}

/* One parsed command line of `len` octets (no line end). */
static enum run run_cmd(struct fg_nntp_session *s, const struct fg_nntp_cmd *c, uint32_t len)
{
	struct prep p;
	uint32_t bytes, entries;

	needs(c, len, &bytes, &entries);
	if (!need_room(s, bytes, entries))
		return RUN_STALL;
	/* RFC 4643 2.2: a peer with credentials offers nothing before them */
	if (fg_nntp_auth_refuse(s, c))
		return RUN_OK;
	if (c->verb == FG_NNTP_VERB_TAKETHIS || c->verb == FG_NNTP_VERB_IHAVE) {
		prepare(s, c, &p);
		/* only an article that may go to the sink waits for room */
		if (p.valid && p.known == FG_REASON_NONE &&
		    !can_take_article(s, c->verb == FG_NNTP_VERB_IHAVE))
			return RUN_STALL;
	}
	/* the peer's max-offer-rate: stop reading, never another answer */
	if ((c->verb == FG_NNTP_VERB_CHECK || c->verb == FG_NNTP_VERB_TAKETHIS ||
	     c->verb == FG_NNTP_VERB_IHAVE) && !fg_nntp_take_offer(s)) {
		set_stall(s, FG_STALL_RATE, FG_CTR_NNTP_STALL_RATE);
		return RUN_STALL;
	}
	fg_nntp_count_verb(s, c->verb);
	if (c->bad_char && c->verb != FG_NNTP_VERB_TAKETHIS) {
		fg_nntp_count(s, FG_CTR_NNTP_BAD_CHAR);
		FG_NNTP_PUT(s, C501, FG_L_BAD_CHAR);
		return RUN_OK;
	}
	switch (c->verb) {
	case FG_NNTP_VERB_CHECK:
		fg_nntp_do_check(s, c);
		break;
	case FG_NNTP_VERB_TAKETHIS:
		if (c->bad_char)
			fg_nntp_count(s, FG_CTR_NNTP_BAD_CHAR);
		return do_takethis(s, c, &p);
	case FG_NNTP_VERB_IHAVE:
		do_ihave(s, c, &p);
		break;
	case FG_NNTP_VERB_MODE:
		do_mode(s, c);
		break;
	case FG_NNTP_VERB_CAPABILITIES:
		/* RFC 3977 5.2.2: an optional keyword argument */
		if (c->argc <= 1 && fg_nntp_auth_needed(s))
			FG_NNTP_PUT(s, C101, FG_L_CAPABILITIES_AUTH);
		else if (c->argc <= 1)
			FG_NNTP_PUT(s, C101, FG_L_CAPABILITIES);
		else
			FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		break;
	case FG_NNTP_VERB_HELP:
		if (c->argc == 0)
			FG_NNTP_PUT(s, C100, FG_L_HELP);
		else
			FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		break;
	case FG_NNTP_VERB_AUTHINFO:
		fg_nntp_do_authinfo(s, c);
		break;
	case FG_NNTP_VERB_QUIT:
		if (c->argc == 0)
			FG_NNTP_PUT_CLOSE(s, C205, FG_L_BYE);
		else
			FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		break;
	default:
		FG_NNTP_PUT(s, C500, FG_L_UNKNOWN);
		break;
	}
	return RUN_OK;
}

/* A line longer than max-line: 501, and drain a TAKETHIS's article. */
static enum run run_overlong(struct fg_nntp_session *s, enum fg_nntp_verb verb)
{
	if (!need_room(s, FG_L_FIXED_MAX, 1))
		return RUN_STALL;
	fg_nntp_count_verb(s, verb);
	fg_nntp_count(s, FG_CTR_NNTP_LINE_TOO_LONG);
	if (verb == FG_NNTP_VERB_TAKETHIS)
		fg_nntp_start_drain(s, FG_REASON_NONE, FG_L_LINE_TOO_LONG);
	else
		FG_NNTP_PUT(s, C501, FG_L_LINE_TOO_LONG);
	return RUN_OK;
}

/* A complete line [p, p + len) without its LF, in place or copied;
 * `cmd` is its parse when the look-ahead made it (else NULL). */
static enum run take_line(struct fg_nntp_session *s, const char *p, uint32_t len,
			  const struct fg_nntp_cmd *cmd)
{
	bool bare = len == 0 || p[len - 1] != '\r';
	struct fg_nntp_cmd c;
	enum run r;

	if (len + 1 > s->e->cfg->max_line)
		return run_overlong(s, fg_nntp_cmd_verb(p, len));
	if (!cmd) {
		fg_nntp_cmd_parse(p, bare ? len : len - 1, &c);
		cmd = &c;
	}
	r = run_cmd(s, cmd, bare ? len : len - 1);
	if (r == RUN_OK && bare)
		fg_nntp_count(s, FG_CTR_NNTP_BARE_LF);
	return r;
}

/* Part of a line with no LF yet: keep it, or note that it is too long. */
static void append_partial(struct fg_nntp_session *s, const uint8_t *p, uint32_t n)
{
	uint32_t max = s->e->cfg->max_line;

	if (s->line_over)
		return;
	if (s->line_len + n >= max) {
		/* with its LF it will pass max-line: keep the start for its verb */
		uint32_t k = max - s->line_len;

		memcpy(s->line + s->line_len, p, k);
		s->over_verb = fg_nntp_cmd_verb(s->line, max);
		s->line_over = true;
		return;
	}
	memcpy(s->line + s->line_len, p, n);
	s->line_len += n;
}

/* Run the copied line; on a stall it stays (line_ready) for later. */
static enum run run_saved(struct fg_nntp_session *s)
{
	enum run r = s->line_over ? run_overlong(s, s->over_verb) :
		     take_line(s, s->line, s->line_len, NULL);

	s->line_ready = r == RUN_STALL;
	if (r == RUN_OK) {
		s->line_len = 0;
		s->line_over = false;
	}
	return r;
}

/* Command octets from one input piece from *off; advances *off. */
static enum run command_input(struct fg_nntp_session *s, const struct fg_iov *iov, uint32_t *off)
{
	const uint8_t *p = iov->base + *off;
	uint32_t avail = iov->len - *off;
	const struct fg_nntp_pf_ent *e;
	const uint8_t *lf;
	uint32_t k;

	if (s->line_len == 0 && !s->line_over) {
		/* a line the look-ahead prepared: its end and parse are known */
		fg_nntp_pf_ahead(s, iov->base, *off, iov->len);
		e = fg_nntp_pf_line(s, (const char *)p);
		if (e) {
			if (take_line(s, e->line, e->len, &e->cmd) == RUN_STALL)
				return RUN_STALL;
			*off += e->len + 1;
			fg_nntp_pf_pop(s);
			return RUN_OK;
		}
	}
	lf = memchr(p, '\n', avail);
	if (!lf) {
		append_partial(s, p, avail);
		*off = iov->len;
		return RUN_OK;
	}
	k = (uint32_t)(lf - p);
	if (s->line_len == 0 && !s->line_over) {
		/* the whole line is here: parse it in place */
		if (take_line(s, (const char *)p, k, NULL) == RUN_STALL)
			return RUN_STALL;
		*off += k + 1;
		return RUN_OK;
	}
	append_partial(s, p, k);
	*off += k + 1;
	return run_saved(s);
}

/* ------------------------------------------------------------ API */

void fg_nntp_session_set_remote(struct fg_nntp_session *s, const struct fg_endpoint *remote)
{
	s->remote = *remote;
}

uint32_t fg_nntp_session_input(struct fg_nntp_session *s, const struct fg_iov *iov, unsigned n,
			  fg_time_t now, uint64_t now_ns)
{
	uint64_t total = 0, consumed = 0;
	unsigned i;

	s->e->now = now;
	s->e->now_ns = now_ns;
	s->last_ns = now_ns;
	for (i = 0; i < n; i++)
		total += iov[i].len;
	if (s->closing || s->gone)
		return (uint32_t)total;	/* after QUIT, a 400 or EOF: ignored */
	fg_nntp_pf_reset(&s->pf);
	if (s->line_ready && run_saved(s) == RUN_STALL)
		goto out;
	for (i = 0; i < n; i++) {
		uint32_t off = 0;

		while (off < iov[i].len && !s->stall && !s->closing) {
			/* the peer's max-byte-rate: what was read is a debt */
			if (fg_nntp_bytes_spent(s)) {
				set_stall(s, FG_STALL_RATE, FG_CTR_NNTP_STALL_RATE);
				break;
			}
			if (s->in_article)
				off += fg_nntp_article_input(s, &iov[i], off);
			else if (command_input(s, &iov[i], &off) == RUN_STALL)
				break;
		}
		fg_nntp_charge_bytes(s, off);
		if (s->closing) {
			consumed = total;	/* the rest is ignored */
			goto out;
		}
		consumed += off;
		if (off < iov[i].len)
			break;
	}
out:
	fg_nntp_pf_reset(&s->pf);	/* it points into the caller's buffers */
	fg_nntp_count_n(s, FG_CTR_NNTP_BYTES_IN, consumed);
	if (consumed == total)
		retire_if_done(s);
	fg_nntp_session_flush(s);
	if (consumed < total && s->stall && !s->paused && !s->gone) {
		s->paused = true;
		s->ops->pause(s->t);
	}
	return (uint32_t)consumed;
}

void fg_nntp_session_writable(struct fg_nntp_session *s)
{
	s->last_ns = s->e->now_ns;
	fg_nntp_session_flush(s);
	if (s->stall)
		fg_nntp_session_try_resume(s);
}

bool fg_nntp_session_try_resume(struct fg_nntp_session *s)
{
	if (!s->stall || s->gone)
		return false;
	if (s->closing) {
		clear_stall(s);
		return false;
	}
	if (!stall_cleared(s))
		return false;
	clear_stall(s);
	if (s->line_ready && run_saved(s) == RUN_STALL) {
		fg_nntp_session_flush(s);
		return false;
	}
	fg_nntp_session_flush(s);
	if (s->paused && !s->closing && !s->gone) {
		s->paused = false;
		s->ops->resume(s->t);
	}
	if (s->eof && !s->line_ready) {
		s->closing = true;
		fg_nntp_session_flush(s);
	}
	retire_if_done(s);
	return true;
}

void fg_nntp_session_eof(struct fg_nntp_session *s, fg_time_t now, uint64_t now_ns)
{
	s->e->now = now;
	s->e->now_ns = now_ns;
	s->eof = true;
	if (s->in_article) {
		/* the peer stopped mid-article: nothing of it was accepted */
		fg_nntp_count(s, FG_CTR_NNTP_EOF_MID_ARTICLE);
		drop_article(s);
	} else if (s->line_len || s->line_over) {
		if (!s->line_ready) {
			/* RFC 3977 3.1: a command ends with CRLF; this one never did */
			fg_nntp_count(s, FG_CTR_NNTP_EOF_PARTIAL_LINE);
			s->line_len = 0;
			s->line_over = false;
		}
	}
	if (!s->line_ready)
		s->closing = true;
	fg_nntp_session_flush(s);
}

bool fg_nntp_session_idle_check(struct fg_nntp_session *s, uint64_t now_ns)
{
	uint64_t idle = (uint64_t)s->e->cfg->idle_timeout * 1000000000ull;

	if (s->retiring && !s->closing && !s->gone && now_ns >= s->retire_by) {
		fg_nntp_session_close_now(s, s->retire_line, strlen(s->retire_line));
		return true;
	}
	/* waiting for us (a sink, a limit of ours) is not the peer's idleness */
	if (!idle || s->closing || s->gone || s->q.n_wait ||
	    (s->stall & ~FG_STALL_RESPONSES) || now_ns - s->last_ns < idle)
		return false;
	fg_nntp_count(s, FG_CTR_NNTP_IDLE_TIMEOUTS);
	fg_nntp_session_close_now(s, FG_L_IDLE, sizeof(FG_L_IDLE) - 1);
	return true;
}

static void free_session(struct fg_nntp_session *s)
{
	if (s->ops && s->ops->detach)
		s->ops->detach(s->t);
	fg_respq_free(&s->q);
	free(s->line);
	free(s->a.arg);
	free(s->a.hdr);
	free(s->offers);
	free(s->off_idx);
	free(s);
}

void fg_nntp_session_xfer_done(struct fg_nntp_session *s)
{
	FG_ASSERT(s->n_xfers > 0);
	if (--s->n_xfers == 0 && s->gone)
		free_session(s);
}

void fg_nntp_session_closed(struct fg_nntp_session *s)
{
	struct fg_nntp_engine *e = s->e;

	/* gone first: nothing below may call the transport's send or close */
	s->gone = true;
	s->closing = true;
	s->n_xfers++;		/* and s stays while its transfers are dropped */
	if (s->in_article) {
		fg_nntp_count(s, FG_CTR_NNTP_EOF_MID_ARTICLE);
		drop_article(s);
	}
	fg_nntp_release_offers(s);
	fg_nntp_drop_responses(s);
	clear_stall(s);
	fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_CLOSED);
	if (s->lim_conn)
		fg_peerlim_conn_close(s->lim_conn);
	s->lim_conn = NULL;
	e->sess[s->slot] = NULL;
	e->n_sessions--;
	fg_nntp_session_xfer_done(s);
}

static int alloc_session(struct fg_nntp_engine *e, struct fg_nntp_session *s)
{
	const struct fg_config *cfg = e->cfg;

	s->line = malloc(cfg->max_line);
	s->a.arg = malloc(cfg->max_line);
	/* grown up to the peer's max-outstanding-offers when it needs more */
	if (!s->line || !s->a.arg ||
	    fg_nntp_offers_init(s, FG_MAX(64u, cfg->max_pending_commands)) != 0 ||
	    fg_respq_init(&s->q, e->response_buffer, cfg->max_pending_commands + 4) != 0)
		return -ENOMEM;
	return 0;
}

struct fg_nntp_session *fg_nntp_session_open(struct fg_nntp_engine *e,
					      const struct fg_config_peer *peer,
					      const struct fg_nntp_session_transport *ops,
					      void *t, fg_time_t now, uint64_t now_ns)
{
	struct fg_nntp_session *s;
	unsigned slot;

	if (e->n_sessions >= e->max_sessions || e->shutting_down)
		return NULL;
	for (slot = 0; e->sess[slot]; slot++)
		;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (alloc_session(e, s) != 0) {
		free_session(s);
		return NULL;
	}
	s->e = e;
	s->ops = ops;
	s->t = t;
	s->peer = peer;
	s->peer_idx = peer ? (int)(peer - e->cfg->peer) : -1;
	FG_ASSERT(!peer || (unsigned)s->peer_idx < e->cfg->n_peer);
	if (e->peer_st)
		s->pst = &e->peer_st[peer ? (unsigned)s->peer_idx : e->cfg->n_peer];
	s->slot = slot;
	s->token = fg_history_token(e->token_next++, e->history_owner);
	s->last_ns = now_ns;
	e->sess[slot] = s;
	e->n_sessions++;
	e->now = now;
	e->now_ns = now_ns;
	if (!peer) {
		/* RFC-NOTES: a host that is not a configured peer gets 502 */
		fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_NOT_PEER);
		FG_NNTP_PUT_CLOSE(s, C502, FG_L_NOT_PEER);
	} else if (e->throttle_len) {
		/* innd's throttle: greeted with its reason, closed */
		fg_nntp_count(s, FG_CTR_NNTP_THROTTLE_CLOSED);
		fg_nntp_put(s, FG_NNTP_CODE_C400, e->throttle_line, e->throttle_len, FG_RQ_CLOSE);
	} else if (peer->max_connection_rate &&
		   !fg_peerlim_take_unit(e->lim_peer[s->peer_idx], FG_PEERLIM_CONNS,
					 peer->max_connection_rate, now_ns)) {
		fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_TOO_FAST);
		FG_NNTP_PUT_CLOSE(s, C400, FG_L_TOO_FAST);
	} else if (!fg_peerlim_conn_open(e->lim_peer[s->peer_idx], peer->max_connections)) {
		fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_TOO_MANY);
		FG_NNTP_PUT_CLOSE(s, C400, FG_L_TOO_MANY);
	} else {
		fg_nntp_count(s, FG_CTR_NNTP_SESSIONS_OPENED);
		s->lim_conn = e->lim_peer[s->peer_idx];
		s->greeted = true;
		do_greeting(s);
	}
	fg_nntp_session_flush(s);
	return s;
}

uint32_t fg_nntp_session_unsent(const struct fg_nntp_session *s)
{
	return fg_respq_unsent(&s->q);
}

bool fg_nntp_session_closing(const struct fg_nntp_session *s)
{
	return s->closing;
}
