/* SPDX-License-Identifier: MIT */
/*
 * engine.c — the per-thread context of the session engine.
 *
 * One engine per thread owns: the sessions of that thread, a preallocated
 * pool of transfers (articles open or in flight) and of hold records (the
 * received segments a sink keeps instead of copying), the journal backlog,
 * the clock-sanity view and that thread's counter block. Nothing here is
 * shared with other engines except the history table, so nothing locks.
 *
 * poll() is the engine's heartbeat: the sink's completions (the relay's
 * writer thread hands them back through a ring that the sink's poll
 * drains, so they arrive on this thread), the journal records the control
 * plane's ring refused, transfers waiting for another transfer of their ID,
 * sessions that stopped reading and can go on, and once a second the idle
 * timeouts.
 *
 * Journal backlog: a final history transition is appended to the journal
 * hook at once; when the ring is full (-ENOSPC) the record is kept here in
 * order and retried from poll(), and while any is kept the engine takes no
 * new work that could make more (CHECK -> 431, TAKETHIS: stop reading).
 * Every record comes from a transfer and a transfer makes at most two, so
 * 2 * max_xfers records is a bound the backlog cannot pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lines.h"
#include "nntp_int.h"

#define DEFAULT_MAX_SESSIONS 4096
#define DEFAULT_MAX_HOLDS 65536
#define DEFAULT_RESPONSE_BUFFER (32u << 10)
#define NS_PER_SEC 1000000000ull

/* ------------------------------------------------------------ counting */

void fg_nntp_count(struct fg_nntp_session *s, enum fg_counter c)
{
	s->e->st->s.ctr[c]++;
	if (s->pst)
		s->pst->s.ctr[c]++;
}

/* A command read: counted by verb, and the peer's last command stamped
 * (floodgate_peer_last_seen_seconds). */
void fg_nntp_count_verb(struct fg_nntp_session *s, enum fg_nntp_verb v)
{
	s->e->st->n.verb[v]++;
	s->e->st->n.last_command = s->e->now;
	if (s->pst) {
		s->pst->n.verb[v]++;
		s->pst->n.last_command = s->e->now;
	}
}

void fg_nntp_count_n(struct fg_nntp_session *s, enum fg_counter c, uint64_t n)
{
	s->e->st->s.ctr[c] += n;
	if (s->pst)
		s->pst->s.ctr[c] += n;
}

void fg_nntp_count_code(struct fg_nntp_session *s, enum fg_nntp_code code)
{
	s->e->st->n.code[code]++;
	if (s->pst)
		s->pst->n.code[code]++;
}

void fg_nntp_count_reason(struct fg_nntp_session *s, enum fg_reason r)
{
	s->e->st->s.rejected[r]++;
	if (s->pst)
		s->pst->s.rejected[r]++;
}

void fg_nntp_ecount(struct fg_nntp_engine *e, enum fg_counter c)
{
	e->st->s.ctr[c]++;
}

void fg_nntp_counters_merge(struct fg_nntp_counters *into, const struct fg_nntp_counters *from)
{
	fg_stats_merge(&into->s, &from->s);
	for (unsigned i = 0; i < FG_NNTP_VERB__COUNT; i++)
		into->n.verb[i] += from->n.verb[i];
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		into->n.code[i] += from->n.code[i];
	fg_hist_merge(&into->n.injection_delay, &from->n.injection_delay);
	fg_hist_merge(&into->n.arrival_delay, &from->n.arrival_delay);
	into->n.last_command = FG_MAX(into->n.last_command, from->n.last_command);
}

/* ------------------------------------------------------------ hooks */

void fg_nntp_engine_observe_verdicts(struct fg_nntp_engine *e, fg_nntp_verdict_observer_fn *fn,
				     void *ctx)
{
	e->observe = fn;
	e->observe_ctx = ctx;
}

static void jq_push(struct fg_nntp_engine *e, const struct fg_journal_rec *r)
{
	struct fg_nntp_jrec *j;

	/* the bound of the file head: see above */
	FG_ASSERT(e->jq_n < e->jq_cap);
	j = &e->jq[(e->jq_head + e->jq_n++) % e->jq_cap];
	j->r = *r;
	memcpy(j->id, r->msgid, r->msgid_len);
	j->id[r->msgid_len] = '\0';
	j->r.msgid = j->id;
}

void fg_nntp_journal(struct fg_nntp_engine *e, const struct fg_history_key *k,
		     enum fg_history_state st, fg_time_t article_date, fg_time_t first_seen,
		     unsigned date_used, enum fg_reason reason, const char *id, size_t id_len)
{
	struct fg_journal_rec r = {
		.key = *k, .state = st, .article_date = article_date,
		.first_seen = first_seen, .date_used = date_used, .reason = reason, .msgid = id,
		.msgid_len = (uint16_t)FG_MIN(id_len, (size_t)FG_MSGID_MAX),
	};

	if (!e->hooks.journal)
		return;
	/* keep the order: nothing overtakes a record already waiting */
	if (e->jq_n == 0 && e->hooks.journal(e->hooks.ctx, &r) == 0) {
		fg_nntp_ecount(e, FG_CTR_NNTP_JOURNAL_RECORDS);
		return;
	}
	fg_nntp_ecount(e, FG_CTR_NNTP_JOURNAL_RETRIES);
	jq_push(e, &r);
}

static unsigned journal_retry(struct fg_nntp_engine *e)
{
	unsigned n = 0;

	while (e->jq_n > 0) {
		struct fg_nntp_jrec *j = &e->jq[e->jq_head];

		if (e->hooks.journal(e->hooks.ctx, &j->r) != 0)
			break;
		e->jq_head = (e->jq_head + 1) % e->jq_cap;
		e->jq_n--;
		fg_nntp_ecount(e, FG_CTR_NNTP_JOURNAL_RECORDS);
		n++;
	}
	return n;
}

bool fg_nntp_journal_blocked(const struct fg_nntp_engine *e)
{
	return e->jq_n > 0;
}

bool fg_nntp_sink_full(const struct fg_nntp_engine *e)
{
	return e->sink_ops->full && e->sink_ops->full(e->sink);
}

/* ------------------------------------------------------------ pools */

struct fg_xfer *fg_nntp_xfer_alloc(struct fg_nntp_engine *e)
{
	struct fg_xfer *x;
	uint32_t gen;

	if (e->xfer_free == FG_NNTP_NONE)
		return NULL;
	x = &e->xfers[e->xfer_free];
	e->xfer_free = x->next;
	gen = x->gen + 1;
	memset(x, 0, offsetof(struct fg_xfer, id));
	x->gen = gen;
	x->hold_head = FG_NNTP_NONE;
	x->next = FG_NNTP_NONE;
	e->n_xfers++;
	return x;
}

void fg_nntp_xfer_free(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	FG_ASSERT(x->state != FG_X_FREE && x->hold_head == FG_NNTP_NONE);
	x->state = FG_X_FREE;
	x->next = e->xfer_free;
	e->xfer_free = fg_nntp_xfer_index(e, x);
	e->n_xfers--;
}

uint32_t fg_nntp_xfer_index(const struct fg_nntp_engine *e, const struct fg_xfer *x)
{
	return (uint32_t)(x - e->xfers);
}

void fg_nntp_wait_add(struct fg_nntp_engine *e, struct fg_xfer *x)
{
	x->next = e->wait_head;
	e->wait_head = fg_nntp_xfer_index(e, x);
}

uint32_t fg_nntp_hold_alloc(struct fg_nntp_engine *e)
{
	uint32_t h = e->hold_free;

	if (h != FG_NNTP_NONE)
		e->hold_free = e->holds[h].next;
	return h;
}

/* ------------------------------------------------------------ rules' view of history */

/* `key`: the engine's own key of the offered ID, when the rules ask about
 * the command's argument (saves hashing it again). */
static enum fg_rules_id_state rules_lookup(void *ctx, const char *id, size_t len, const void *key)
{
	struct fg_nntp_engine *e = ctx;
	struct fg_history_key tmp;

	if (!key)
		fg_history_hash(e->h, id, len, &tmp);
	switch (fg_history_lookup(e->h, key ? key : &tmp, e->now, NULL)) {
	case FG_HISTORY_ACCEPTED:
	case FG_HISTORY_REJECTED:
		return FG_RULES_ID_KNOWN;
	case FG_HISTORY_SUPERSEDED:
		return FG_RULES_ID_SUPERSEDED;
	default:
		/* in flight (OFFERED, ACCEPTING, PENDING) is the engine's to arbitrate */
		return FG_RULES_ID_UNKNOWN;
	}
}

static bool rules_newest(void *ctx, const char *base, size_t len, uint64_t *version)
{
	struct fg_nntp_engine *e = ctx;
	char id[FG_HISTORY_ID_MAX + 1];
	size_t id_len;

	return fg_history_version_newest(e->h, base, len, version, id, sizeof(id), &id_len) == 0;
}

/* ------------------------------------------------------------ lifecycle */

static int alloc_pools(struct fg_nntp_engine *e, const struct fg_nntp_engine_params *p)
{
	e->sess = calloc(e->max_sessions, sizeof(*e->sess));
	e->xfers = calloc(e->max_xfers, sizeof(*e->xfers));
	e->holds = calloc(e->max_holds, sizeof(*e->holds));
	e->jq_cap = 2 * e->max_xfers + 16;
	e->jq = calloc(e->jq_cap, sizeof(*e->jq));
	if (!e->sess || !e->xfers || !e->holds || !e->jq)
		return -ENOMEM;
	e->lim = p->limits;
	if (!e->lim) {
		e->lim = fg_peerlim_create(1);
		e->lim_own = true;
	}
	if (!e->lim || fg_nntp_limits_set(e, e->cfg) != 0)
		return -ENOMEM;
	if (fg_nntp_warmup_init(e, p->warmup, p->cluster) != 0)
		return -ENOMEM;
	for (unsigned i = 0; i < e->max_xfers; i++)
		e->xfers[i].next = i + 1 < e->max_xfers ? i + 1 : FG_NNTP_NONE;
	e->xfer_free = 0;
	for (unsigned i = 0; i < e->max_holds; i++)
		e->holds[i].next = i + 1 < e->max_holds ? i + 1 : FG_NNTP_NONE;
	e->hold_free = e->max_holds ? 0 : FG_NNTP_NONE;
	e->wait_head = FG_NNTP_NONE;
	return 0;
}

static void free_pools(struct fg_nntp_engine *e)
{
	free(e->sess);
	free(e->xfers);
	free(e->holds);
	free(e->jq);
	if (e->lim_peer)
		fg_nntp_limits_return(e);
	free(e->lim_peer);
	free(e->rate);
	if (e->lim_own)
		fg_peerlim_destroy(e->lim);
	fg_nntp_warmup_fini(e);
	fg_nntp_foreign_fini(e);
}

struct fg_nntp_engine *fg_nntp_engine_create(const struct fg_nntp_engine_params *p)
{
	struct fg_nntp_engine *e;

	if (!p->cfg || !p->history || !p->sink_ops || !p->stats || !p->sink_ops->begin ||
	    !p->sink_ops->append || !p->sink_ops->commit || !p->sink_ops->discard ||
	    !p->sink_ops->poll) {
		FG_LOG_ERR(FG_NNTP_COMP, "engine: config, history, a complete sink and stats are required");
		return NULL;
	}
	if (p->history_owner > FG_HISTORY_OWNER_NONE) {
		FG_LOG_ERR(FG_NNTP_COMP, "engine: history owner %u is not a writer slot (0..%u)",
			   p->history_owner, FG_HISTORY_OWNER_NONE - 1);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = p->cfg;
	e->h = p->history;
	e->sink_ops = p->sink_ops;
	e->sink = p->sink;
	if (p->hooks)
		e->hooks = *p->hooks;
	e->st = p->stats;
	e->peer_st = p->peer_stats;
	e->max_sessions = p->max_sessions ? p->max_sessions : DEFAULT_MAX_SESSIONS;
	e->max_xfers = p->max_xfers ? p->max_xfers : 4 * e->max_sessions;
	e->max_holds = p->max_holds ? p->max_holds : DEFAULT_MAX_HOLDS;
	e->response_buffer = p->response_buffer ? p->response_buffer : DEFAULT_RESPONSE_BUFFER;
	e->token_next = p->token_base;
	e->history_owner = p->history_owner;
	e->rules_hist.lookup = rules_lookup;
	e->rules_hist.newest_version = rules_newest;
	e->rules_hist.ctx = e;
	fg_nntp_clock_init(&e->clock, p->cfg->clock_skew_limit);
	if (fg_rules_init(&e->rules, p->cfg, &e->rules_hist) != 0) {
		FG_LOG_ERR(FG_NNTP_COMP, "engine: the rules refuse this configuration");
		goto out_free;
	}
	if (e->response_buffer < 2u * (p->cfg->max_line + FG_L_FIXED_MAX)) {
		FG_LOG_ERR(FG_NNTP_COMP, "engine: response buffer %u is below two maximal lines",
			   e->response_buffer);
		goto out_free;
	}
	if (alloc_pools(e, p) != 0) {
		FG_LOG_ERR(FG_NNTP_COMP, "engine: out of memory for %u sessions, %u transfers",
			   e->max_sessions, e->max_xfers);
		goto out_free_pools;
	}
	/* INN's history, if imported and in force (the wall clock: the engine
	 * has no time of its own before its first input); its window is
	 * checked again at each lookup and every second (foreign.c) */
	fg_nntp_foreign_refresh(e, (fg_time_t)time(NULL));
	return e;

out_free_pools:
	free_pools(e);
out_free:
	free(e);
	return NULL;
}

void fg_nntp_engine_destroy(struct fg_nntp_engine *e)
{
	if (!e)
		return;
	if (e->n_sessions || e->n_xfers)
		FG_LOG_WARN(FG_NNTP_COMP, "engine destroyed with %u sessions and %u transfers left",
			    e->n_sessions, e->n_xfers);
	free_pools(e);
	free(e);
}

/* ------------------------------------------------------------ poll */

static unsigned run_waits(struct fg_nntp_engine *e)
{
	uint32_t i = e->wait_head;
	unsigned n = 0;

	e->wait_head = FG_NNTP_NONE;
	while (i != FG_NNTP_NONE) {
		struct fg_xfer *x = &e->xfers[i];

		i = x->next;
		fg_nntp_xfer_retry(e, x);	/* may put it back on the list */
		if (x->state != FG_X_WAIT)
			n++;
	}
	return n;
}

static unsigned run_stalled(struct fg_nntp_engine *e)
{
	unsigned n = 0, seen = 0;

	for (unsigned i = 0; i < e->max_sessions && seen < e->n_sessions; i++) {
		struct fg_nntp_session *s = e->sess[i];

		if (!s)
			continue;
		seen++;
		if (s->stall && fg_nntp_session_try_resume(s))
			n++;
	}
	return n;
}

static unsigned run_idle(struct fg_nntp_engine *e)
{
	unsigned n = 0;

	for (unsigned i = 0; i < e->max_sessions; i++)
		if (e->sess[i] && fg_nntp_session_idle_check(e->sess[i], e->now_ns))
			n++;
	return n;
}

unsigned fg_nntp_engine_poll(struct fg_nntp_engine *e, fg_time_t now, uint64_t now_ns)
{
	unsigned n;

	e->now = now;
	e->now_ns = now_ns;
	n = e->sink_ops->poll(e->sink, now_ns, fg_nntp_xfer_sink_done, e);
	n += fg_nntp_warmup_poll(e);
	n += fg_nntp_claims_poll(e);
	if (e->jq_n)
		n += journal_retry(e);
	if (e->wait_head != FG_NNTP_NONE)
		n += run_waits(e);
	if (e->n_stalled)
		n += run_stalled(e);
	if (now_ns >= e->next_scan_ns) {
		e->next_scan_ns = now_ns + NS_PER_SEC;
		n += run_idle(e);
		fg_nntp_foreign_refresh(e, now);
	}
	return n;
}

uint64_t fg_nntp_engine_next_poll(const struct fg_nntp_engine *e, uint64_t now_ns)
{
	/* work in flight is driven by poll(): come back soon */
	if (e->n_xfers || e->n_asks || e->jq_n || e->wait_head != FG_NNTP_NONE ||
	    e->n_rate_stalled)
		return now_ns + NS_PER_SEC / 1000;
	return FG_MIN(now_ns + NS_PER_SEC, FG_MAX(e->next_scan_ns, now_ns));
}

void fg_nntp_engine_shutdown(struct fg_nntp_engine *e)
{
	e->shutting_down = true;
	for (unsigned i = 0; i < e->max_sessions; i++) {
		struct fg_nntp_session *s = e->sess[i];

		if (s && !s->closing)
			fg_nntp_session_close_now(s, FG_L_SHUTDOWN, sizeof(FG_L_SHUTDOWN) - 1);
	}
}

unsigned fg_nntp_engine_sessions(const struct fg_nntp_engine *e)
{
	return e->n_sessions;
}

unsigned fg_nntp_engine_xfers(const struct fg_nntp_engine *e)
{
	return e->n_xfers + e->n_asks;
}

bool fg_nntp_engine_clock_suspect(const struct fg_nntp_engine *e)
{
	return e->clock.suspect;
}

int64_t fg_nntp_engine_clock_offset(const struct fg_nntp_engine *e)
{
	return e->clock.offset;
}
