/* SPDX-License-Identifier: MIT */
/*
 * levers.c — the operator's levers on sessions, modelled on innd's channel
 * states (docs/operations.md, "Levers"):
 *
 *   throttle REASON   innd's `ctlinnd throttle`: every open session is
 *                     answered "400 REASON" and closed; a new connection is
 *                     greeted "400 REASON" and closed. `go` ends it.
 *   pause PEER        innd's paused channel, for one peer (innd pauses the
 *                     whole server): that peer's sessions defer every new
 *                     offer — CHECK "431 <id>", IHAVE 436, and a TAKETHIS
 *                     is read to its end, answered 400 and the session
 *                     closed (RFC 4644 never allows 431 there) — until the
 *                     pause's end or `resume`. Known IDs are refused as
 *                     ever.
 *
 * Pauses are kept by peer name, so a reload that renumbers the peers keeps
 * them; the list is short and usually empty, so a session asks it only
 * when it is not. The hosts (the DPDK dataplane's workers) set the levers;
 * whoever owns the state makes it survive a restart.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

int fg_nntp_engine_throttle(struct fg_nntp_engine *e, const char *reason)
{
	size_t len = reason ? strlen(reason) : 0;

	if (len == 0) {
		e->throttle_len = 0;
		return 0;
	}
	if (len > FG_NNTP_ENGINE_REASON_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (reason[i] < 0x20 || reason[i] > 0x7e)
			return -EINVAL;	/* one printable line, nothing that breaks NNTP */
	e->throttle_len = (uint16_t)snprintf(e->throttle_line, sizeof(e->throttle_line),
					     "400 %s\r\n", reason);
	snprintf(e->throttle_reason, sizeof(e->throttle_reason), "%s", reason);
	for (unsigned i = 0; i < e->max_sessions; i++) {
		struct fg_nntp_session *s = e->sess[i];

		if (s && !s->closing) {
			fg_nntp_count(s, FG_CTR_NNTP_THROTTLE_CLOSED);
			fg_nntp_session_close_now(s, e->throttle_line, e->throttle_len);
		}
	}
	return 0;
}

const char *fg_nntp_engine_throttled(const struct fg_nntp_engine *e)
{
	return e->throttle_len ? e->throttle_reason : NULL;
}

int fg_nntp_pause_find(const struct fg_nntp_pause *tab, unsigned n, const char *peer)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(tab[i].peer, peer) == 0)
			return (int)i;
	return -1;
}

int fg_nntp_pause_set(struct fg_nntp_pause *tab, unsigned *n, const char *peer,
		      fg_time_t until)
{
	int i;

	if (!peer || strlen(peer) >= FG_CONFIG_NAME_MAX)
		return -EINVAL;
	i = fg_nntp_pause_find(tab, *n, peer);
	if (until == 0) {
		if (i < 0)
			return -ENOENT;
		tab[i] = tab[--*n];
		return 0;
	}
	if (i < 0) {
		if (*n == FG_CONFIG_MAX_PEERS)
			return -ENOSPC;
		i = (int)(*n)++;
		snprintf(tab[i].peer, sizeof(tab[i].peer), "%s", peer);
	}
	tab[i].until = until;
	return 0;
}

int fg_nntp_engine_pause(struct fg_nntp_engine *e, const char *peer, fg_time_t until)
{
	return fg_nntp_pause_set(e->pauses, &e->n_pauses, peer, until);
}

void fg_nntp_engine_pauses_clear(struct fg_nntp_engine *e)
{
	e->n_pauses = 0;
}

bool fg_nntp_engine_paused(const struct fg_nntp_engine *e, const char *peer, fg_time_t *until)
{
	int i = fg_nntp_pause_find(e->pauses, e->n_pauses, peer);

	if (i < 0 || e->pauses[i].until <= e->now)
		return false;
	if (until)
		*until = e->pauses[i].until;
	return true;
}

bool fg_nntp_peer_paused(const struct fg_nntp_session *s)
{
	const struct fg_nntp_engine *e = s->e;

	return e->n_pauses && s->peer && fg_nntp_engine_paused(e, s->peer->name, NULL);
}
