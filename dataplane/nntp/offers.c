/* SPDX-License-Identifier: MIT */
/*
 * offers.c — an offer (CHECK, and the offer part of TAKETHIS and IHAVE):
 * the decision, what the session keeps of it, and its peer's budgets.
 *
 * The decision (fg_nntp_offer): the history says absent, offered elsewhere
 * (431), or final (438); a newer $v=N version known makes an ID unwanted
 * (seed 000, when honoured); a full sink or journal ring, or the
 * session at its bound (below), defers (431).
 *
 * Offers: every 238 a session gave is remembered in a ring (its key, its
 * history ref, its deadline) until a transfer of the ID takes it over or
 * the deadline passes, so that a session that closes releases them at
 * once (history.h: release) instead of leaving them to lapse.
 *
 * The bound: an OFFERED entry stays in its slot until its article or its
 * deadline (the table never moves it: sessions hold refs to it), so 238s
 * that no article follows pin slots; a peer sending CHECKs and no articles
 * at 100 k/s would pin a million for a 10 s offer-timeout and make other
 * peers' inserts fail long before the table is full. So a session holds
 * at most its peer's max-outstanding-offers live offers:
 *
 *   1. below the bound: the offer goes to the history as any other
 *   2. at it: the lapsed ones at the ring's head are dropped; if none,
 *      lapsed ones behind a live head (a shorter BUSY hold, a reload's
 *      shorter offer-timeout) are squeezed out, at most once a second
 *   3. still at it: the offer is deferred (CHECK 431, IHAVE 436, counted
 *      as nntp_defer_outstanding) before the history is asked; a known
 *      ID is still refused (438/435). A TAKETHIS, a refusal of the
 *      article, a lapse or the session's close frees a place
 *   4. the ring holds max(64, max-pending-commands) at first and doubles,
 *      up to the bound, only when all it holds is live (a ring that cannot
 *      grow defers the same way)
 *
 * So every live offer is in the ring and none is ever forgotten: a
 * session's close releases every entry it pinned.
 *
 * The index: a transfer finds its offer by key in a hash index beside the
 * ring (linear probing over the key's low bits, at most a quarter full), not by
 * walking the ring: a peer whose 238s are not all followed by articles
 * keeps hundreds of live offers, and a TAKETHIS never offered by CHECK
 * (the usual case in a pure streaming feed) would walk all of them.
 * Invariant: the index holds exactly the ring's entries with a nonzero
 * deadline (live or lapsed, not yet taken over); a deletion shifts the
 * probe run back (Knuth's algorithm R), so there are no tombstones, and
 * entries of one key keep their order: the oldest is found first. A cell
 * carries its key's 32-bit tag beside the slot, so probing and shifting
 * read the index alone (32 KiB at the default 1024 offers), never the
 * ring. A feed whose 238s are followed by their articles gains over a
 * walked ring (bench_dataplane's check, 1.4-1.5x); the bound costs a
 * CHECK one comparison while the session is under it (bench_session's
 * check-dup and check-new against the commit before it, 11 alternating
 * runs on a loaded 2-core VM: median ratios 1.01 and 1.03, runs spread
 * +-20 %). A bound in the millions costs more per CHECK once the index
 * outgrows the caches (1 M live offers: 32 MiB of index, about 2.3x a
 * CHECK); the default keeps it at 32 KiB.
 *
 * Budgets: a peer's max-offer-rate and max-byte-rate ([peer]), held
 * box-wide (peerlim.c): an offer takes from this engine's cache, only an
 * empty cache reaches the shared bucket. Over them the session stops
 * reading and TCP pushes back; an answer never changes because of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"
#include "floodgate/msgid.h"
#include "lines.h"
#include "nntp_int.h"

/* ------------------------------------------------------------ peer budgets */

/* The engine's cache of bucket b: topped up to a batch from the peer's
 * shared bucket when it holds less than `need` millionths. */
static int64_t *cache_fill(const struct fg_nntp_session *s, enum fg_peerlim_bucket b,
			   uint64_t rate, int64_t need)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_nntp_rate *r = &e->rate[s->peer_idx];
	int64_t *c = b == FG_PEERLIM_OFFERS ? &r->offers_u : &r->bytes_u;

	if (*c < need)
		*c += fg_peerlim_take(e->lim_peer[s->peer_idx], b,
				      fg_peerlim_batch(e->lim, rate) - *c, rate, e->now_ns);
	return c;
}

/* Room for one more offer: taken, or false (stop reading until there is). */
bool fg_nntp_take_offer(struct fg_nntp_session *s)
{
	unsigned rate = s->peer ? s->peer->max_offer_rate : 0;
	int64_t *c;

	if (!rate)
		return true;
	c = cache_fill(s, FG_PEERLIM_OFFERS, rate, FG_PEERLIM_UNIT);
	if (*c < FG_PEERLIM_UNIT)
		return false;
	*c -= FG_PEERLIM_UNIT;
	return true;
}

/* The peer's byte budget is spent (octets already read are a debt). */
bool fg_nntp_bytes_spent(const struct fg_nntp_session *s)
{
	uint64_t rate = s->peer ? s->peer->max_byte_rate : 0;

	return rate && *cache_fill(s, FG_PEERLIM_BYTES, rate, 1) <= 0;
}

void fg_nntp_charge_bytes(const struct fg_nntp_session *s, uint64_t n)
{
	if (s->peer && s->peer->max_byte_rate)
		s->e->rate[s->peer_idx].bytes_u -= (int64_t)n * FG_PEERLIM_UNIT;
}

bool fg_nntp_budget_ok(const struct fg_nntp_session *s)
{
	const struct fg_config_peer *p = s->peer;

	if (!p)
		return true;
	if (p->max_offer_rate &&
	    *cache_fill(s, FG_PEERLIM_OFFERS, p->max_offer_rate, FG_PEERLIM_UNIT) < FG_PEERLIM_UNIT)
		return false;
	return !fg_nntp_bytes_spent(s);
}

/* The engine's slots for cfg's peers, and empty caches (a configuration
 * taken at creation or a reload). 0, -ENOSPC (the engine's own table is
 * full of names), -ENOMEM. */
int fg_nntp_limits_set(struct fg_nntp_engine *e, const struct fg_config *cfg)
{
	struct fg_peerlim_peer **lp = calloc(cfg->n_peer + 1, sizeof(*lp));
	struct fg_nntp_rate *rate = calloc(cfg->n_peer + 1, sizeof(*rate));
	int rc = lp && rate ? 0 : -ENOMEM;

	if (rc == 0 && e->lim_own)
		rc = fg_peerlim_add(e->lim, cfg);
	for (unsigned i = 0; rc == 0 && i < cfg->n_peer; i++) {
		lp[i] = fg_peerlim_find(e->lim, cfg->peer[i].name);
		if (!lp[i]) {
			FG_LOG_ERR(FG_NNTP_COMP, "limits: no slot for peer %s (the program "
				   "did not add the configuration)", cfg->peer[i].name);
			rc = -EINVAL;
		}
	}
	if (rc != 0) {
		free(lp);
		free(rate);
		return rc;
	}
	free(e->lim_peer);
	free(e->rate);
	e->lim_peer = lp;
	e->rate = rate;
	return 0;
}

/* What the caches hold goes back to the shared buckets (before a reload
 * or at the end), so that no other engine goes short of it; a debt of
 * octets is forgiven. */
void fg_nntp_limits_return(struct fg_nntp_engine *e)
{
	if (!e->rate)
		return;
	for (unsigned i = 0; i < e->cfg->n_peer; i++) {
		const struct fg_config_peer *p = &e->cfg->peer[i];

		fg_peerlim_give(e->lim_peer[i], FG_PEERLIM_OFFERS, e->rate[i].offers_u,
				p->max_offer_rate);
		fg_peerlim_give(e->lim_peer[i], FG_PEERLIM_BYTES, e->rate[i].bytes_u,
				p->max_byte_rate);
		e->rate[i] = (struct fg_nntp_rate){ 0 };
	}
}

/* ------------------------------------------------------------ offers */

static bool key_eq(const struct fg_history_key *a, const struct fg_history_key *b)
{
	return a->lo == b->lo && a->hi == b->hi;
}

#define IDX_EMPTY 0u	/* a cell in use is tag << 32 | ring slot + 1, never 0 */

static uint32_t idx_tag(const struct fg_history_key *k)
{
	return (uint32_t)(k->lo ^ (k->lo >> 32));
}

static uint32_t cell_slot1(uint64_t c)
{
	return (uint32_t)c;	/* the ring slot + 1 */
}

static unsigned cell_home(const struct fg_nntp_session *s, uint64_t c)
{
	return (unsigned)(c >> 32) & s->off_mask;
}

static void idx_put(struct fg_nntp_session *s, unsigned slot)
{
	uint32_t tag = idx_tag(&s->offers[slot].key);
	unsigned i = tag & s->off_mask;

	while (s->off_idx[i] != IDX_EMPTY)
		i = (i + 1) & s->off_mask;
	s->off_idx[i] = (uint64_t)tag << 32 | (slot + 1);
	s->off_live++;
}

/* Empty cell i and shift the rest of its probe run back into the hole. */
static void idx_del_at(struct fg_nntp_session *s, unsigned i)
{
	unsigned j = i;
	uint64_t v;

	for (;;) {
		j = (j + 1) & s->off_mask;
		v = s->off_idx[j];
		if (v == IDX_EMPTY)
			break;
		/* v may fill the hole unless its home lies (cyclically) in (i, j] */
		unsigned home = cell_home(s, v);

		if (((j - home) & s->off_mask) >= ((j - i) & s->off_mask)) {
			s->off_idx[i] = v;
			i = j;
		}
	}
	s->off_idx[i] = IDX_EMPTY;
	s->off_live--;
}

/* Take ring slot `slot` (an entry with a nonzero deadline) out of the index. */
static void idx_del_slot(struct fg_nntp_session *s, unsigned slot)
{
	unsigned i = idx_tag(&s->offers[slot].key) & s->off_mask;

	while (cell_slot1(s->off_idx[i]) != slot + 1) {
		FG_ASSERT(s->off_idx[i] != IDX_EMPTY);
		i = (i + 1) & s->off_mask;
	}
	idx_del_at(s, i);
}

/* Drop the oldest entry from the ring (and from the index if it is there). */
static void offers_pop(struct fg_nntp_session *s)
{
	if (s->offers[s->off_head].deadline != 0)
		idx_del_slot(s, s->off_head);
	s->off_head = (s->off_head + 1) % s->off_cap;
	s->off_n--;
}

static void offers_trim(struct fg_nntp_session *s)
{
	while (s->off_n && s->offers[s->off_head].deadline <= s->e->now)
		offers_pop(s);
}

/* Squeeze out the offers already taken over, released or lapsed, and
 * index the survivors anew at their new slots. */
static void offers_compact(struct fg_nntp_session *s)
{
	unsigned n = 0;

	memset(s->off_idx, 0, (s->off_mask + 1) * sizeof(*s->off_idx));
	s->off_live = 0;
	for (unsigned i = 0; i < s->off_n; i++) {
		struct fg_nntp_offer *o = &s->offers[(s->off_head + i) % s->off_cap];

		if (o->deadline > s->e->now) {
			unsigned slot = (s->off_head + n++) % s->off_cap;

			s->offers[slot] = *o;
			idx_put(s, slot);
		}
	}
	s->off_n = n;
	s->off_dead = 0;
}

/* A ring of `cap` entries and its index (at most a quarter full: short
 * probes), holding the live offers of the old one if there was one:
 * 0, or -ENOMEM (the old one stays). */
int fg_nntp_offers_init(struct fg_nntp_session *s, unsigned cap)
{
	struct fg_nntp_offer *ring = calloc(cap, sizeof(*ring));
	unsigned mask = 1, n = 0;
	uint64_t *idx;

	while (mask + 1 < 4 * cap)
		mask = 2 * mask + 1;
	idx = calloc(mask + 1, sizeof(*idx));
	if (!ring || !idx) {
		free(ring);
		free(idx);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < s->off_n; i++) {
		const struct fg_nntp_offer *o = &s->offers[(s->off_head + i) % s->off_cap];

		if (o->deadline > s->e->now)
			ring[n++] = *o;
	}
	free(s->offers);
	free(s->off_idx);
	s->offers = ring;
	s->off_idx = idx;
	s->off_cap = cap;
	s->off_mask = mask;
	s->off_head = 0;
	s->off_n = n;
	s->off_dead = 0;
	s->off_live = 0;
	for (unsigned i = 0; i < n; i++)
		idx_put(s, i);
	return 0;
}

/* The session's bound on its live offers (steps 1-4 above). */
static unsigned offers_bound(const struct fg_nntp_session *s)
{
	return s->peer ? s->peer->max_outstanding_offers : s->off_cap;
}

/*
 * Whether the session may make one more offer: fewer live offers than its
 * bound, and a ring slot for it (squeezed free or grown). Steps 2-4.
 */
bool fg_nntp_offer_room(struct fg_nntp_session *s)
{
	unsigned bound = offers_bound(s);

	if (s->off_live >= bound) {
		offers_trim(s);
		if (s->off_live >= bound && s->off_squeezed != s->e->now) {
			s->off_squeezed = s->e->now;
			offers_compact(s);
		}
		if (s->off_live >= bound)
			return false;
	}
	if (s->off_n < s->off_cap)
		return true;
	offers_trim(s);
	/* squeezing pays only when something was taken out of the middle */
	if (s->off_n == s->off_cap && s->off_dead)
		offers_compact(s);
	if (s->off_n < s->off_cap)
		return true;
	/* all live and below the bound: the ring itself is too small */
	return fg_nntp_offers_init(s, FG_MIN(2 * s->off_cap, FG_MAX(bound, s->off_cap + 1))) == 0;
}

/* Remember a 238 the history granted; fg_nntp_offer_room() said yes. */
void fg_nntp_track_offer(struct fg_nntp_session *s, const struct fg_history_key *k,
			const struct fg_history_ref *ref, fg_time_t deadline)
{
	struct fg_nntp_offer *o;
	unsigned slot;

	FG_ASSERT(s->off_n < s->off_cap);
	slot = (s->off_head + s->off_n++) % s->off_cap;
	o = &s->offers[slot];
	o->key = *k;
	o->ref = *ref;
	o->deadline = deadline;
	if (deadline != 0)
		idx_put(s, slot);
}

static void release_offer(struct fg_nntp_session *s, struct fg_nntp_offer *o)
{
	if (o->deadline > s->e->now && fg_history_release(s->e->h, &o->ref) == 0)
		fg_nntp_count(s, FG_CTR_NNTP_OFFERS_RELEASED);
	o->deadline = 0;
}

/*
 * The session's live offer of k is taken over (release false) or given up
 * (true): out of the index. Lapsed offers of k found before it (the
 * session offered the ID again after its first offer lapsed) go with it,
 * or the live one would keep a place under the bound it no longer holds.
 * A deletion fills cell i from further along the run, never from before
 * it, so the scan goes on at i.
 */
void fg_nntp_offer_forget(struct fg_nntp_session *s, const struct fg_history_key *k, bool release)
{
	uint32_t tag = idx_tag(k);
	unsigned i = tag & s->off_mask;

	while (s->off_idx[i] != IDX_EMPTY) {
		struct fg_nntp_offer *o = NULL;
		bool live;

		/* the tag first: the ring is read only for a likely match */
		if ((uint32_t)(s->off_idx[i] >> 32) == tag)
			o = &s->offers[cell_slot1(s->off_idx[i]) - 1];
		if (!o || !key_eq(&o->key, k)) {
			i = (i + 1) & s->off_mask;
			continue;
		}
		live = o->deadline > s->e->now;
		if (live && release)
			release_offer(s, o);
		o->deadline = 0;
		s->off_dead++;
		idx_del_at(s, i);
		if (live)
			break;
	}
	offers_trim(s);
}

void fg_nntp_release_offers(struct fg_nntp_session *s)
{
	for (unsigned i = 0; i < s->off_n; i++)
		release_offer(s, &s->offers[(s->off_head + i) % s->off_cap]);
	s->off_n = 0;
	s->off_live = 0;
	memset(s->off_idx, 0, (s->off_mask + 1) * sizeof(*s->off_idx));
}

/* ------------------------------------------------------------ decisions */

static uint32_t offer_timeout(const struct fg_nntp_engine *e)
{
	int64_t t = e->cfg->offer_timeout;

	return (uint32_t)(t < 1 ? 1 : t > FG_HISTORY_OFFER_MAX ? FG_HISTORY_OFFER_MAX : t);
}

/* A final state found in history is a refusal; which reason? */
bool fg_nntp_final_reason(const struct fg_nntp_engine *e, enum fg_history_state st,
			  enum fg_reason *r)
{
	switch (st) {
	case FG_HISTORY_ACCEPTED:
	case FG_HISTORY_REJECTED:
		*r = FG_REASON_DUPLICATE;
		return true;
	case FG_HISTORY_SUPERSEDED:
		/* as the rules: a mark made while honouring was on */
		*r = e->cfg->honor_supersedes ? FG_REASON_SUPERSEDED : FG_REASON_DUPLICATE;
		return true;
	default:
		return false;
	}
}

/* Why new IDs are deferred right now, or 0. Never the clock view: a CHECK
 * answer depends on history alone, and articles are what clears the view. */
static enum fg_counter defer_cause(const struct fg_nntp_session *s)
{
	const struct fg_nntp_engine *e = s->e;

	if (s->retiring)
		return FG_CTR_NNTP_DEFER_RETIRING;
	if (fg_nntp_peer_paused(s))
		return FG_CTR_NNTP_DEFER_PAUSED;
	if (fg_nntp_journal_blocked(e))
		return FG_CTR_NNTP_DEFER_JOURNAL;
	if (fg_nntp_sink_full(e))
		return FG_CTR_NNTP_DEFER_SINK;
	return (enum fg_counter)0;
}

/* Seed 000 versions, when honoured: a newer $v=N known makes this unwanted. */
static enum fg_reason version_check(struct fg_nntp_engine *e, const char *arg, uint32_t len,
				    const struct fg_history_key *k)
{
	enum fg_reason r;

	if (!e->cfg->honor_versions || !e->cfg->version_numbers)
		return FG_REASON_NONE;
	r = fg_rules_offer(&e->rules, arg, len, k, NULL, NULL);
	return r;
}

/*
 * The history's answer to an offer (CHECK or IHAVE): 0 with *ref (wanted),
 * 1 (refused: *reason), 2 (later: a counter already bumped).
 */
int fg_nntp_offer(struct fg_nntp_session *s, const char *arg, uint32_t len,
		  const struct fg_history_key *k, struct fg_history_ref *ref, fg_time_t *deadline,
		 enum fg_reason *reason)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_history_entry found;
	enum fg_counter defer;
	int rc;

	if (e->cfg->refuse_cyber_cancels && fg_rules_is_cyber_cancel(arg, len)) {
		*reason = FG_REASON_CYBER_CANCEL;
		return 1;
	}
	*reason = version_check(e, arg, len, k);
	if (*reason != FG_REASON_NONE)
		return 1;
	defer = defer_cause(s);
	if (!defer && !fg_nntp_offer_room(s))
		defer = FG_CTR_NNTP_DEFER_OUTSTANDING;
	if (defer) {
		/* a known ID is refused whatever else holds new ones back */
		if (fg_nntp_final_reason(e, fg_history_lookup(e->h, k, e->now, NULL), reason))
			return 1;
		fg_nntp_count(s, defer);
		return 2;
	}
	*deadline = e->now + offer_timeout(e);
	rc = fg_history_offer(e->h, k, e->now, *deadline, s->token, ref, &found);
	if (rc == 0) {
		/* a miss of our own history: INN's, if the site brought it (foreign.c) */
		if (!fg_nntp_foreign_known(s, arg, len))
			return 0;
		fg_history_release(e->h, ref);
		*reason = FG_REASON_DUPLICATE;
		return 1;
	}
	if (rc == -EEXIST && fg_nntp_final_reason(e, found.state, reason))
		return 1;
	if (rc == -EEXIST || rc == -EAGAIN)
		fg_nntp_count(s, FG_CTR_NNTP_DEFER_INFLIGHT);
	else if (rc == -ENOSPC)
		fg_nntp_count(s, FG_CTR_NNTP_HISTORY_FULL);
	else
		FG_LOG_ERR(FG_NNTP_COMP, "history offer failed: %d", rc);
	return 2;
}

/* Seed 002, who offers first: every offer of a valid ID counts once per
 * peer (a TAKETHIS after the session's own 238 is not a second offer),
 * and those of an ID the history did not hold yet count as first. */
void fg_nntp_count_offer(struct fg_nntp_session *s, bool first)
{
	fg_nntp_count(s, FG_CTR_NNTP_OFFERS);
	if (first)
		fg_nntp_count(s, FG_CTR_NNTP_OFFERS_FIRST);
}

/* RFC 4644 2.4: CHECK <id> -> 238 / 431 / 438, always echoing <id>. */
void fg_nntp_do_check(struct fg_nntp_session *s, const struct fg_nntp_cmd *c)
{
	const char *arg = c->arg[0];
	uint32_t len = c->arg_len[0];
	struct fg_history_key k;
	struct fg_history_ref ref;
	enum fg_reason reason = FG_REASON_BAD_MESSAGE_ID;
	fg_time_t deadline;

	if (c->argc != 1) {
		FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		return;
	}
	/*
	 * RFC-NOTES: an invalid argument gets "438 <arg>", never 501. Invalid
	 * here is anything that cannot be an article's Message-ID (RFC 5536
	 * 3.1.3): such an article could only be refused, so it is not wanted.
	 */
	if (fg_msgid_valid_header(arg, len)) {
		if (c->key)
			k = *c->key;
		else
			fg_history_hash(s->e->h, arg, len, &k);
		switch (fg_nntp_offer(s, arg, len, &k, &ref, &deadline, &reason)) {
		case 0:
			fg_nntp_count_offer(s, true);
			fg_nntp_track_offer(s, &k, &ref, deadline);
			/* the site's other boxes (claims.c), else, during a
			 * warm-up, the downstream (warmup.c) are asked first */
			if (fg_nntp_claim_ask(s, arg, len, &k) || fg_nntp_warmup_ask(s, arg, len, &k))
				return;
			fg_nntp_put_echo(s, FG_NNTP_CODE_C238, FG_L_ECHO_238, arg, len);
			fg_nntp_verdict_of(s, FG_NNTP_VERB_CHECK, FG_NNTP_CODE_C238, FG_REASON_NONE, arg, len, 0);
			return;
		case 2:
			fg_nntp_count_offer(s, false);
			fg_nntp_put_echo(s, FG_NNTP_CODE_C431, FG_L_ECHO_431, arg, len);
			fg_nntp_verdict_of(s, FG_NNTP_VERB_CHECK, FG_NNTP_CODE_C431, FG_REASON_NONE, arg, len, 0);
			return;
		default:
			fg_nntp_count_offer(s, false);
			break;
		}
	}
	fg_nntp_count_reason(s, reason);
	fg_nntp_put_echo(s, FG_NNTP_CODE_C438, FG_L_ECHO_438, arg, len);
	fg_nntp_verdict_of(s, FG_NNTP_VERB_CHECK, FG_NNTP_CODE_C438, reason, arg, len, 0);
}
