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
 * logs the peer's name). A session whose peer is no longer configured is
 * answered 400 and closed. The per-peer counter blocks follow the new
 * configuration's numbering: the caller hands in a new array (zeroed, or
 * carried over by name) and keeps the old one until the engine is done
 * with it, which is when this returns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

#define L_NOT_PEER "400 No longer a configured peer, closing\r\n"

/* Move one session to cfg (by its peer's name; s->peer still points into
 * the old configuration, or into cfg when moved already); false when its
 * peer is gone. */
static bool remap(struct fg_nntp_session *s, const struct fg_config *cfg,
		  struct fg_nntp_counters *peer_stats, unsigned *peer_sessions)
{
	const struct fg_config_peer *p = s->peer ? fg_config_peer_by_name(cfg, s->peer->name) : NULL;
	unsigned idx = p ? (unsigned)(p - cfg->peer) : cfg->n_peer;
	bool had = s->peer != NULL;

	s->peer = p;
	s->peer_idx = p ? (int)idx : -1;
	s->pst = peer_stats ? &peer_stats[idx] : NULL;
	if (p && s->greeted && !s->gone && peer_sessions)
		peer_sessions[idx]++;
	return p || !had;
}

int fg_nntp_engine_set_config(struct fg_nntp_engine *e, const struct fg_config *cfg,
			 struct fg_nntp_counters *peer_stats)
{
	struct fg_rules rules;
	struct fg_nntp_rate *rate;
	unsigned *ps;

	if (cfg->max_line != e->cfg->max_line ||
	    cfg->max_pending_commands != e->cfg->max_pending_commands)
		return -EINVAL;
	if (fg_rules_init(&rules, cfg, &e->rules_hist) != 0)
		return -EINVAL;
	ps = calloc(cfg->n_peer + 1, sizeof(*ps));
	rate = calloc(cfg->n_peer + 1, sizeof(*rate));	/* budgets start full */
	if (!ps || !rate) {
		free(ps);
		free(rate);
		return -ENOMEM;
	}
	e->cfg = cfg;
	e->rules = rules;
	e->peer_st = peer_stats;
	free(e->peer_sessions);
	e->peer_sessions = ps;
	free(e->rate);
	e->rate = rate;
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
			remap(x->s, cfg, peer_stats, NULL);
	}
	for (unsigned i = 0; i < e->max_sessions; i++) {
		struct fg_nntp_session *s = e->sess[i];

		if (s && !remap(s, cfg, peer_stats, ps) && !s->closing)
			fg_nntp_session_close_now(s, L_NOT_PEER, sizeof(L_NOT_PEER) - 1);
	}
	return 0;
}
