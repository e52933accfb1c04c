/* SPDX-License-Identifier: MIT */
/*
 * mailbox.c — requests from the main lcore to the workers, answered at a
 * quiescent point of each worker (between two bursts, where it holds no
 * pointer into the configuration or its counters across the call).
 *
 * Protocol, per worker (struct dp_mbox, all atomics):
 *   main:   arguments -> req -> seq = seq + 1 (release)
 *   worker: seq != done (acquire) -> do it -> rc -> done = seq (release)
 *   main:   waits until done == seq, then reads rc and the results
 * One request at a time: the main lcore is the only poster and waits.
 *
 * Reload is RCU-style: every worker is handed the new configuration and
 * switches at its quiescent point; only when all have answered does the
 * main lcore free the old configuration (and the old per-peer counter
 * arrays), since from then on no worker can still be reading them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"
#include "floodgate/log.h"

/* ------------------------------------------------------------ worker side */

static int serve_peers(struct dp_worker *w)
{
	struct dp_peers_snap *s = w->snap;

	s->n_conns = w->ts ? fg_tcpsess_list(w->ts, s->conn, DP_PEERS_MAX) : 0;
	s->n_peer = w->cfg->n_peer;
	memcpy(s->peer, w->peer_stats, (w->cfg->n_peer + 1) * sizeof(*s->peer));
	for (unsigned i = 0; i < w->cfg->n_peer; i++)
		memcpy(s->name[i], w->cfg->peer[i].name, FG_CONFIG_NAME_MAX);
	return 0;
}

/* Switch to mbox.cfg with the zeroed counter array in mbox.peer_stats;
 * the old array goes back through the same field for the main lcore to
 * free. */
static int serve_config(struct dp_worker *w)
{
	const struct fg_config *cfg = atomic_load(&w->mbox.cfg);
	struct fg_nntp_counters *ps = atomic_load(&w->mbox.peer_stats);
	int rc = fg_slotlink_switch(w->link, w->e, w->cfg, cfg, &w->peer_stats, &ps);

	if (rc != 0)
		return rc;
	if (w->ts)
		fg_tcpsess_set_config(w->ts, cfg);
	/* the port's IPv4 addresses and the listen endpoints (dp_reload
	 * checked them): new connections to a removed one are refused from
	 * now on, its sessions drain; a removed address stays ours for
	 * DP_ADDR_LEAVE_NS, so that they can */
	if (w->ts && w->tcp) {
		struct fg_net_config nc;

		dp_net_addrs(cfg, &nc);
		if (fg_net_set_ipv4(w->net, nc.ipv4, nc.plen, nc.vid, nc.n_ipv4,
				    DP_ADDR_LEAVE_NS) == 0 &&
		    fg_tcp_set_listen(w->tcp, cfg->listen, cfg->n_listen) == 0)
			fg_tcpsess_retire_unlistened(w->ts, w->tcp);
	}
	if (w->pv)
		fg_passive_set_config(w->pv, cfg);
	atomic_store(&w->mbox.peer_stats, ps);	/* the old array, for the main lcore */
	w->cfg = cfg;
	fg_stats_inc(&w->stats->s, FG_CTR_DP_CONFIG_SWAPS);
	return 0;
}

void dp_mbox_serve(struct dp_worker *w)
{
	struct dp_mbox *m = &w->mbox;
	unsigned long seq = atomic_load_explicit(&m->seq, memory_order_acquire);
	int rc = 0;

	if (seq == atomic_load_explicit(&m->done, memory_order_relaxed))
		return;
	switch ((enum dp_req)atomic_load(&m->req)) {
	case DP_REQ_CONFIG:
		rc = serve_config(w);
		break;
	case DP_REQ_PEERS:
		rc = serve_peers(w);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	atomic_store(&m->rc, rc);
	atomic_store_explicit(&m->done, seq, memory_order_release);
}

/* ------------------------------------------------------------ main side */

static void post_one(struct dp_worker *w, enum dp_req req)
{
	atomic_store(&w->mbox.req, (unsigned)req);
	atomic_fetch_add_explicit(&w->mbox.seq, 1, memory_order_release);
}

/* Wait for every worker's answer: 0, the first worker error, or
 * -ETIMEDOUT (a worker stuck for timeout_ms: the caller must not free
 * what it handed over). */
static int wait_all(struct dp *dp, unsigned timeout_ms)
{
	uint64_t until = fg_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	int rc = 0;

	for (unsigned i = 0; i < dp->n_workers; i++) {
		struct dp_mbox *m = &dp->w[i].mbox;

		while (atomic_load_explicit(&m->done, memory_order_acquire) !=
		       atomic_load_explicit(&m->seq, memory_order_relaxed)) {
			if (fg_mono_ns() > until)
				return -ETIMEDOUT;
			usleep(200);
		}
		if (atomic_load(&m->rc) && !rc)
			rc = atomic_load(&m->rc);
	}
	return rc;
}

int dp_post(struct dp *dp, enum dp_req req, unsigned timeout_ms)
{
	for (unsigned i = 0; i < dp->n_workers; i++)
		post_one(&dp->w[i], req);
	return wait_all(dp, timeout_ms);
}
