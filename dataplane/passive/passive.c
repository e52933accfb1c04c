/* SPDX-License-Identifier: MIT */
/*
 * passive.c — passive mode as the live stack in its observe-only mode
 * (contract in passive.h): one fg_net (passive), the fg_tcp registered
 * with it, and an fg_tcpsess as that TCP's app, built in a chain of small
 * steps like a worker's:
 *
 *   fg_passive_rx   per frame: the clock (capture time or the caller's),
 *                   fg_net_rx of that one frame (net -> TCP -> on_data ->
 *                   engine), then an engine poll while a transfer is open
 *   fg_passive_work tcpsess's deferred closes, fg_net_poll (TCP's timers,
 *                   re-offers to sessions that resumed, frees), a poll
 *   end_all         fg_tcp_drop_all (every stream as if reset), then work
 *
 *   shadow          (shadow mode) a fg_shadow fed the server's segments by
 *                   TCP (fg_tcp_observe_server) and floodgate's decisions
 *                   by the engine (fg_nntp_engine_observe_verdicts); ended
 *                   after every stream, so the last decisions are in
 *
 * The flow records passive.h counts are tcpsess's connection records.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "floodgate/log.h"
#include "floodgate/passive.h"
#include "floodgate/shadow.h"
#include "floodgate/tcp.h"
#include "floodgate/tcpsess.h"

#define COMP "passive"
#define POOL_MARGIN 64		/* descriptors beyond one flow's bound (tcp_passive.c) */
#define NO_SEND_BUFFER 1024	/* TCP's smallest: nothing is ever sent */

struct fg_passive {
	struct fg_nntp_engine *e;
	struct fg_stats *st;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_tcpsess *ts;
	struct fg_shadow *sh;
	fg_time_t now;
	uint64_t now_ns;
	uint64_t clock_ns;
};

/* ------------------------------------------------------------ set-up */

static int net_setup(struct fg_passive *p, const struct fg_passive_params *pp)
{
	struct fg_net_config nc = { .passive = true };

	if (getrandom(&nc.hash_seed, sizeof(nc.hash_seed), 0) != sizeof(nc.hash_seed))
		nc.hash_seed = (uint64_t)(uintptr_t)p;
	p->net = fg_net_create(&nc, pp->ops, pp->port, pp->stats);
	return p->net ? 0 : -ENOMEM;
}

static int tcpsess_setup(struct fg_passive *p, const struct fg_passive_params *pp,
			 unsigned max_flows)
{
	struct fg_tcpsess_params sp = { 0 };

	sp.net = p->net;
	sp.engine = pp->engine;
	sp.cfg = pp->cfg;
	sp.stats = pp->stats;
	sp.max_conns = 2 * max_flows;	/* streams, and sessions still finishing */
	p->ts = fg_tcpsess_create(&sp);
	return p->ts ? 0 : -ENOMEM;
}

/* TCP's limits are passive.h's: a flow is a connection block. */
static int tcp_setup(struct fg_passive *p, const struct fg_passive_params *pp,
		     unsigned max_flows)
{
	const struct fg_config *cfg = pp->cfg;
	struct fg_tcp_config tc = { 0 };

	for (unsigned i = 0; i < cfg->n_listen && tc.n_listen < FG_TCP_MAX_LISTEN; i++)
		tc.listen[tc.n_listen++] = cfg->listen[i];
	if (!tc.n_listen) {
		FG_LOG_ERR(COMP, "no [site] listen endpoint to tell clients from servers");
		return -EINVAL;
	}
	tc.max_conns = max_flows;
	tc.rx_segs_per_conn = pp->max_segs ? pp->max_segs : 256;
	tc.ooo_segs_per_conn = FG_MIN(pp->max_ooo ? pp->max_ooo : 64, tc.rx_segs_per_conn);
	tc.rx_segs = FG_MAX(pp->segs ? pp->segs : max_flows * 32,
			    tc.rx_segs_per_conn + POOL_MARGIN);
	tc.sndbuf = NO_SEND_BUFFER;
	if (getrandom(&tc.secret, sizeof(tc.secret), 0) != sizeof(tc.secret))
		tc.secret = (uint64_t)(uintptr_t)p;
	p->tcp = fg_tcp_create(p->net, &tc, &fg_tcpsess_app_ops, p->ts);
	return p->tcp ? 0 : -EINVAL;
}

static void shadow_seg(void *ctx, const struct fg_endpoint *client, uint32_t seq, uint8_t flags,
		       const uint8_t *data, uint32_t len)
{
	fg_shadow_theirs(ctx, client, seq, flags, data, len);
}

static void shadow_verdict(void *ctx, const struct fg_verdict_rec *r)
{
	fg_shadow_ours(ctx, r);
}

static int shadow_setup(struct fg_passive *p, unsigned max_flows)
{
	p->sh = fg_shadow_create(max_flows, p->st);
	if (!p->sh)
		return -ENOMEM;
	fg_tcp_observe_server(p->tcp, shadow_seg, p->sh);
	fg_nntp_engine_observe_verdicts(p->e, shadow_verdict, p->sh);
	return 0;
}

struct fg_passive *fg_passive_create(const struct fg_passive_params *pp)
{
	unsigned max_flows = pp->max_flows ? pp->max_flows : 4096;
	struct fg_passive *p;
	int rc;

	if (!pp->engine || !pp->cfg || !pp->ops || !pp->stats) {
		FG_LOG_ERR(COMP, "engine, config, port ops and stats are required");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->e = pp->engine;
	p->st = pp->stats;
	rc = net_setup(p, pp);
	if (rc == 0)
		rc = tcpsess_setup(p, pp, max_flows);
	if (rc == 0)
		rc = tcp_setup(p, pp, max_flows);
	if (rc == 0 && pp->shadow)
		rc = shadow_setup(p, max_flows);
	if (rc != 0) {
		FG_LOG_ERR(COMP, "set-up failed for %u flows", max_flows);
		fg_passive_destroy(p);
		return NULL;
	}
	return p;
}

void fg_passive_destroy(struct fg_passive *p)
{
	if (!p)
		return;
	if (p->sh)
		fg_nntp_engine_observe_verdicts(p->e, NULL, NULL);
	fg_shadow_destroy(p->sh);
	fg_tcp_destroy(p->tcp);
	fg_tcpsess_destroy(p->ts);
	fg_net_destroy(p->net);
	free(p);
}

void fg_passive_set_config(struct fg_passive *p, const struct fg_config *cfg)
{
	fg_tcpsess_set_config(p->ts, cfg);
}

struct fg_shadow *fg_passive_shadow(const struct fg_passive *p)
{
	return p->sh;
}

unsigned fg_passive_flows(const struct fg_passive *p)
{
	return fg_tcpsess_in_use(p->ts);
}

bool fg_passive_backlogged(const struct fg_passive *p)
{
	return fg_tcp_backlogged(p->tcp);
}

uint64_t fg_passive_clock(const struct fg_passive *p)
{
	return p->clock_ns;
}

/* ------------------------------------------------------------ frames and work */

/* Completions now, not at the next burst: the same capture decides the
 * same way whatever the burst sizes. */
static void settle(struct fg_passive *p)
{
	if (fg_nntp_engine_xfers(p->e))
		fg_nntp_engine_poll(p->e, p->now, p->now_ns);
}

unsigned fg_passive_rx(struct fg_passive *p, struct fg_rx_frame *frames, unsigned n,
		       const uint64_t *ts_ns, fg_time_t now, uint64_t now_ns)
{
	for (unsigned k = 0; k < n; k++) {
		if (ts_ns && ts_ns[k]) {
			p->clock_ns = ts_ns[k];
			p->now = (fg_time_t)(ts_ns[k] / 1000000000ull);
			p->now_ns = ts_ns[k];
		} else {
			p->now = now;
			p->now_ns = now_ns;
		}
		fg_stats_inc(p->st, FG_CTR_PASSIVE_FRAMES);
		fg_tcpsess_set_time(p->ts, p->now, p->now_ns);
		fg_net_rx(p->net, &frames[k], 1, p->now_ns);
		settle(p);
	}
	return n;
}

/* The poll costs little when there is nothing to do (TCP's wheel turns to
 * now, the pending list is empty), unlike asking fg_net_next_deadline(),
 * which walks the wheel: that is for a caller about to sleep. */
unsigned fg_passive_work(struct fg_passive *p)
{
	unsigned done = fg_tcpsess_work(p->ts);

	/* sessions that resumed get their queued octets, timers, frees */
	fg_net_poll(p->net, p->now_ns);
	settle(p);
	return done + fg_tcpsess_work(p->ts);
}

void fg_passive_end_all(struct fg_passive *p)
{
	fg_tcp_drop_all(p->tcp);
	fg_passive_work(p);
	if (p->sh)
		fg_shadow_end_all(p->sh);
}
