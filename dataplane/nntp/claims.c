/* SPDX-License-Identifier: MIT */
/*
 * claims.c — the shared second-level history (session.h, struct
 * fg_nntp_engine_cluster; docs/scale.md, "Several boxes").
 *
 * Only a local miss goes to the cluster, and only from a CHECK:
 *
 *   do_check: offer() won here -> a WAIT response entry, the claim goes out
 *             (the session holds the ID as OFFERED meanwhile, so this
 *             box's other sessions get 431 without asking)
 *   poll():   the answer -> WON:  the offer stays, 238
 *                           HAVE: the offer becomes ACCEPTED here
 *                                 (warm-up's record_have, journaled), 438
 *                           BUSY: the offer shrinks to a second's
 *                                 hold here (busy_hold), 431
 *                           NONE: decided here alone, 238 (counted)
 *   xfer:     an accepted or refused article -> settle(): its outcome
 *             goes to the cluster for the window
 *
 * Claims share warm-up's table of questions (warmup.c): the same
 * response-entry, session-reference and cookie rules. With both on, a
 * local miss is claimed in the cluster (the site's other boxes are the
 * nearer history); warm-up asks only when no cluster is configured.
 */
#include "nntp_int.h"

#define BUSY_HOLD_S 1

bool fg_nntp_claim_ask(struct fg_nntp_session *s, const char *arg, uint32_t len,
		       const struct fg_history_key *k)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_nntp_ask *a;

	if (!e->cl.claim)
		return false;
	a = fg_nntp_ask_take(s, arg, len, k);
	if (!a) {
		fg_nntp_count(s, FG_CTR_NNTP_CLUSTER_FALLBACKS);
		return false;
	}
	fg_nntp_count(s, FG_CTR_NNTP_CLUSTER_CLAIMS);
	if (e->cl.claim(e->cl.ctx, arg, len, fg_nntp_ask_cookie(e, a)) != 0)
		fg_nntp_ask_end(a, FG_CTR_NNTP_CLUSTER_FALLBACKS, FG_NNTP_CODE_C238, false);
	return true;
}

/*
 * Another box's transfer is in flight: the session's offer gives way to a
 * short one (BUSY_HOLD_S, to the second) so that this box's other peers,
 * offering the same ID meanwhile, get 431 from the local history instead
 * of a claim each; the next offer after it claims again and, the other
 * box's outcome settled by then, hears HAVE. A TAKETHIS still completes
 * the short offer like any other.
 */
static void busy_hold(struct fg_nntp_session *s, const struct fg_history_key *k)
{
	struct fg_nntp_engine *e = s->e;
	struct fg_history_entry found;
	struct fg_history_ref ref;

	fg_nntp_offer_forget(s, k, true);
	/* the hold counts against max-outstanding-offers like the offer it
	 * replaces (which a TAKETHIS may have taken already): none past it */
	if (fg_nntp_offer_room(s) &&
	    fg_history_offer(e->h, k, e->now, e->now + BUSY_HOLD_S, s->token, &ref, &found) == 0)
		fg_nntp_track_offer(s, k, &ref, e->now + BUSY_HOLD_S);
}

static void claim_done(void *engine, uint64_t cookie, enum fg_claim_answer ans)
{
	struct fg_nntp_engine *e = engine;
	struct fg_nntp_ask *a = fg_nntp_ask_find(e, cookie);

	if (!a)
		return;
	switch (ans) {
	case FG_CLAIM_WON:
		fg_nntp_ask_end(a, FG_CTR_NNTP_CLUSTER_WINS, FG_NNTP_CODE_C238, true);
		break;
	case FG_CLAIM_HAVE:
		fg_nntp_ask_record_have(e, a);
		fg_nntp_ask_end(a, FG_CTR_NNTP_CLUSTER_LOSSES, FG_NNTP_CODE_C438, true);
		break;
	case FG_CLAIM_BUSY:
		if (!a->s->gone)
			busy_hold(a->s, &a->key);
		fg_nntp_ask_end(a, FG_CTR_NNTP_CLUSTER_INFLIGHT_WAITS, FG_NNTP_CODE_C431, true);
		break;
	case FG_CLAIM_NONE:
	default:
		fg_nntp_ask_end(a, FG_CTR_NNTP_CLUSTER_FALLBACKS, FG_NNTP_CODE_C238, true);
		break;
	}
}

unsigned fg_nntp_claims_poll(struct fg_nntp_engine *e)
{
	if (!e->cl.poll || !e->n_asks)
		return 0;
	return e->cl.poll(e->cl.ctx, claim_done, e);
}

void fg_nntp_claim_settle(struct fg_nntp_engine *e, const char *id, uint16_t len, bool accepted)
{
	if (e->cl.settle && len)
		e->cl.settle(e->cl.ctx, id, len, accepted);
}
