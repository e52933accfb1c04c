/* SPDX-License-Identifier: MIT */
/*
 * offers.c — an offer (CHECK, and the offer part of TAKETHIS and IHAVE):
 * the decision, what the session keeps of it, and its peer's budgets.
 *
 * The decision (fg_nntp_offer): the history says absent, offered elsewhere
 * (431), or final (438); a newer $v=N version known makes an ID unwanted
 * (seed 000, when honoured); a full sink or journal ring defers (431).
 *
 * Offers: every 238 a session gave is remembered in a small ring (its key,
 * its history ref, its deadline) until a transfer of the ID takes it over
 * or the deadline passes, so that a session that closes releases them at
 * once (history.h: release) instead of leaving them to lapse. A full ring
 * forgets its oldest (counted): that entry lapses at its own deadline.
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
 * ring. The price: a session whose ring is full (CHECKs answered 238 and
 * no articles) evicts and inserts one entry per CHECK, about 60 ns more
 * than a bare ring (bench_session's check-new, 5.1 -> 4.1-4.3 M/s); a
 * feed whose 238s are followed by their articles gains (bench_dataplane's
 * check, 1.4-1.5x).
 *
 * Budgets: a peer's max-offer-rate and max-byte-rate ([peer]), per engine
 * thread. Over them the session stops reading and TCP pushes back; an
 * answer never changes because of them.
 */
#include <errno.h>
#include <string.h>

#include "floodgate/log.h"
#include "floodgate/msgid.h"
#include "lines.h"
#include "nntp_int.h"

/* ------------------------------------------------------------ peer budgets */

/* The peer's budgets refilled to now; NULL when it has none. Each holds a
 * second's worth at most (max-offer-rate, max-byte-rate). */
static struct fg_nntp_rate *budget(const struct fg_nntp_session *s)
{
	const struct fg_config_peer *p = s->peer;
	struct fg_nntp_rate *r;
	uint64_t now = s->e->now_ns;

	if (!p || (!p->max_offer_rate && !p->max_byte_rate))
		return NULL;
	r = &s->e->rate[s->peer_idx];
	if (r->at_ns == 0 || now < r->at_ns) {
		r->offers_u = (int64_t)p->max_offer_rate * 1000000;
		r->bytes = (int64_t)p->max_byte_rate;
	} else {
		/* a second refills the rate; what is beyond a second's worth
		 * (an idle peer's) is not kept */
		unsigned __int128 dt = now - r->at_ns;
		unsigned __int128 offers = dt * p->max_offer_rate / 1000;	/* millionths */
		unsigned __int128 bytes = dt * p->max_byte_rate / 1000000000u;
		int64_t cap_o = (int64_t)p->max_offer_rate * 1000000, cap_b = (int64_t)p->max_byte_rate;

		r->offers_u = offers >= (unsigned __int128)(cap_o - r->offers_u) ? cap_o
			      : r->offers_u + (int64_t)offers;
		r->bytes = bytes >= (unsigned __int128)(cap_b - r->bytes) ? cap_b
			   : r->bytes + (int64_t)bytes;
	}
	r->at_ns = now;
	return r;
}

/* Room for one more offer: taken, or false (stop reading until there is). */
bool fg_nntp_take_offer(struct fg_nntp_session *s)
{
	struct fg_nntp_rate *r = budget(s);

	if (!r || !s->peer->max_offer_rate)
		return true;
	if (r->offers_u < 1000000)
		return false;
	r->offers_u -= 1000000;
	return true;
}

/* The peer's byte budget is spent (octets already read are a debt). */
bool fg_nntp_bytes_spent(const struct fg_nntp_session *s)
{
	const struct fg_nntp_rate *r = budget(s);

	return r && s->peer->max_byte_rate && r->bytes <= 0;
}

void fg_nntp_charge_bytes(const struct fg_nntp_session *s, uint64_t n)
{
	if (s->peer && s->peer->max_byte_rate)
		s->e->rate[s->peer_idx].bytes -= (int64_t)n;
}

bool fg_nntp_budget_ok(const struct fg_nntp_session *s)
{
	struct fg_nntp_rate *r = budget(s);

	return !r || ((!s->peer->max_offer_rate || r->offers_u >= 1000000) &&
		      (!s->peer->max_byte_rate || r->bytes > 0));
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

void fg_nntp_track_offer(struct fg_nntp_session *s, const struct fg_history_key *k,
			const struct fg_history_ref *ref, fg_time_t deadline)
{
	struct fg_nntp_offer *o;
	unsigned slot;

	offers_trim(s);
	/* squeezing pays only when something was taken out of the middle */
	if (s->off_n == s->off_cap && s->off_dead)
		offers_compact(s);
	if (s->off_n == s->off_cap) {
		/* forget the oldest: its entry lapses at its own deadline */
		offers_pop(s);
		fg_nntp_count(s, FG_CTR_NNTP_OFFERS_UNTRACKED);
	}
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

void fg_nntp_offer_forget(struct fg_nntp_session *s, const struct fg_history_key *k, bool release)
{
	uint32_t tag = idx_tag(k);

	for (unsigned i = tag & s->off_mask; s->off_idx[i] != IDX_EMPTY; i = (i + 1) & s->off_mask) {
		struct fg_nntp_offer *o;

		if ((uint32_t)(s->off_idx[i] >> 32) != tag)
			continue;
		o = &s->offers[cell_slot1(s->off_idx[i]) - 1];
		if (!key_eq(&o->key, k))
			continue;
		if (release)
			release_offer(s, o);
		o->deadline = 0;
		s->off_dead++;
		idx_del_at(s, i);
		break;
	}
	offers_trim(s);
}

void fg_nntp_release_offers(struct fg_nntp_session *s)
{
	for (unsigned i = 0; i < s->off_n; i++)
		release_offer(s, &s->offers[(s->off_head + i) % s->off_cap]);
	s->off_n = 0;
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
