/* SPDX-License-Identifier: MIT */
/*
 * reconfig.c — switching a running engine to a new configuration
 * (`floodctl reload`), on the engine's own thread between two bursts.
 *
 * What changes at once, for open sessions too: every rule (cutoff, future
 * margin, required headers, path identities, size limits, remembering
 * rejects, Supersedes and versions), the peers' policies (newsgroups,
 * max-connections, max-article-size), the offer timeout, idle timeout,
 * pending limits and the clock-skew limit (a changed limit starts the
 * clock view afresh: a suspect clock is judged again). What cannot change under open
 * sessions, because their buffers were sized by it, is refused (-EINVAL,
 * nothing changed): max-line and max-pending-commands; the dataplane
 * carries the old values over into the new configuration and reports
 * them as needing a restart.
 *
 * Sessions point at their peer's entry in the configuration: each is
 * moved to the entry of the same name in the new one (a session that is
 * closed but still has transfers finishing too, since their completion
 * logs the peer's name). A session whose peer is no longer configured
 * drains and closes (session.c, "Retiring"): it counts as no peer's from
 * then on. The per-peer counter blocks follow the new
 * configuration's numbering: the caller hands in a new array (zeroed, or
 * carried over by name) and keeps the old one until the engine is done
 * with it, which is when this returns.
 *
 * The peers' limits are the box's (peerlim.h): the program adds the new
 * configuration's names to the shared table before it hands the
 * configuration to any engine; this engine gives its cached budgets back
 * and finds its slots by name. An open session stays counted on the slot
 * it was counted on, so a lowered max-connections closes nobody: it
 * refuses new connections until the count is below it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

/* Move one session to cfg (by its peer's name; s->peer still points into
 * the old configuration, or into cfg when moved already); false when its
 * peer is gone. */
static bool remap(struct fg_nntp_session *s, const struct fg_config *cfg,
		  struct fg_nntp_counters *peer_stats)
{
	const struct fg_config_peer *p = s->peer ? fg_config_peer_by_name(cfg, s->peer->name) : NULL;
	unsigned idx = p ? (unsigned)(p - cfg->peer) : cfg->n_peer;
	bool had = s->peer != NULL;

	s->peer = p;
	s->peer_idx = p ? (int)idx : -1;
	s->pst = peer_stats ? &peer_stats[idx] : NULL;
	return p || !had;
}

int fg_nntp_engine_set_config(struct fg_nntp_engine *e, const struct fg_config *cfg,
			 struct fg_nntp_counters *peer_stats)
{
	struct fg_rules rules;
	int rc;

	if (cfg->max_line != e->cfg->max_line ||
	    cfg->max_pending_commands != e->cfg->max_pending_commands)
		return -EINVAL;
	if (fg_rules_init(&rules, cfg, &e->rules_hist) != 0)
		return -EINVAL;
	/* the caches go back to the box's buckets under the old rates; the
	 * new slots are found by name (the counts of open connections and
	 * the buckets carry over: the table is the box's, not the
	 * configuration's) */
	fg_nntp_limits_return(e);
	rc = fg_nntp_limits_set(e, cfg);
	if (rc != 0)
		return rc;
	e->cfg = cfg;
	e->rules = rules;
	e->peer_st = peer_stats;
	if (e->clock.limit != cfg->clock_skew_limit) {
		/* a new limit judges afresh (0 turns the view off); the
		 * alarm's counters stay balanced */
		if (e->clock.suspect)
			fg_nntp_ecount(e, FG_CTR_NNTP_CLOCK_SUSPECT_CLEARED);
		fg_nntp_clock_init(&e->clock, cfg->clock_skew_limit);
	}
	/* closed sessions whose transfers are still finishing (remap is
	 * idempotent: a session with several transfers is moved once) */
	for (unsigned i = 0; i < e->max_xfers; i++) {
		struct fg_xfer *x = &e->xfers[i];

		if (x->state != FG_X_FREE && x->s && x->s->gone)
			remap(x->s, cfg, peer_stats);
	}
	for (unsigned i = 0; i < e->max_sessions; i++) {
		struct fg_nntp_session *s = e->sess[i];

		if (s && !remap(s, cfg, peer_stats))
			fg_nntp_session_retire(s, FG_NNTP_RETIRE_PEER);
	}
	return 0;
}
