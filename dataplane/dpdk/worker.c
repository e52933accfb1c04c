/* SPDX-License-Identifier: MIT */
/*
 * worker.c — one worker lcore: its modules, built once at start, and its
 * run-to-completion loop.
 *
 * Active mode, per iteration:
 *
 *   mailbox (a quiescent point: config swap, peers snapshot)
 *   for each of its RX queues: rx burst -> GRO ([dataplane] gro: in-order
 *       TCP segments of a flow merged, port.c) -> fg_net_rx (Ethernet, ARP,
 *       IPv4, TCP, reassembly, on_data -> NNTP engine -> answers queued
 *       in TCP; at the end of the burst TCP sends ACKs and answers, and
 *       the net module hands the frames to the TX queue in one burst)
 *   frames the TX ring could not take are retried (drain)
 *   engine poll when due (sink completions -> 239, journal retries, idle)
 *   session work (closes the engine asked for), net poll when due (TCP
 *       timers, window updates after releases, what the poll made)
 *   counters into the region slot every 100 ms
 *   the pass's TSC cycles: busy when it received frames or did work,
 *       idle otherwise (its sleep or interrupt wait included); a
 *       polling lcore's CPU time counts its spinning, its busy cycles
 *       do not, so figures per offer use these (busy + idle = the
 *       loop's wall time)
 *   idle back-off: after DP_SPIN_NS of empty polls the worker blocks on
 *       its queues' receive interrupts until a frame comes or its next
 *       timer is due, when the port has interrupts; otherwise it sleeps,
 *       1 us doubling up to [dataplane] idle-backoff, never past its next
 *       timer. An idle worker costs little CPU, a busy one never sleeps;
 *       idle-backoff 0 spins (no interrupts, no sleeps). On an 802.3ad
 *       bond no wait is longer than DP_LACP_POLL_NS (bond.c). The spell of
 *       polling first covers a peer's round trip: a sleep and its wake-up
 *       cost more than 50 us of polling, more still on a virtual machine.
 *
 * Passive mode: rx burst -> fg_passive_rx (per frame: net, TCP's passive
 * reassembly, tcpsess -> engine), engine poll, passive work; no TX at all.
 *
 * While floodctld restores the history (main.c), `restoring` is set from
 * the start: every new connection is answered 400 with the reason and
 * closed before a command is read; the workers are then stopped and
 * built again on the restored region.
 *
 * Shutdown: the main lcore sets `draining` (new connections are answered
 * 400), then `shutdown` once its grace period is over (the engine answers
 * 400 to every session still open and closes it; transfers in flight
 * complete), then, after DP_ABORT_NS more, what is still open is reset.
 * The worker reports `finished` once it has no session, transfer or
 * connection left.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "dp.h"
#include "floodgate/log.h"
#include "floodgate/mbuf.h"

#define DP_ABORT_NS (5ull * 1000000000ull)
#define MAX_SLEEP_NS 1000000000ull
/* Receive window and hold budget per connection, sized for binaries: a
 * connection may hold half its window for the queue's writer (tcpsess.c),
 * so a 700 KB article is held whole, never copied, while the next one
 * arrives in the other half instead of waiting for the first one's sync.
 * The segment limits follow the window (full-size frames fill it). */
#define DP_TCP_WINDOW (2u << 20)
#define DP_HOLD_SEGS 1024u
#define DP_RX_SEGS_PER_CONN (DP_TCP_WINDOW / 1024u)

void dp_io_signals(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void dp_clock(fg_time_t *now, uint64_t *now_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	*now = ts.tv_sec;
	*now_ns = fg_mono_ns();
}

/* ------------------------------------------------------------ set-up */

/* The sink: null in passive mode, with --sink null and while floodctld
 * restores (decided, counted, never relayed; while it restores nothing is
 * decided at all: every session is refused); else the durable queue, whose
 * completions come back through the handle's ring and the engine's poll,
 * due within a millisecond while a transfer is in flight, so the writer
 * needs no way to wake this lcore; else memory, holding the mbufs. */
static enum fg_wiring_sink sink_kind(const struct dp *dp)
{
	if (dp->passive || dp->o.sink == FG_WIRING_SINK_NULL || dp->restoring)
		return FG_WIRING_SINK_NULL;
	return dp->ob ? FG_WIRING_SINK_QUEUE : FG_WIRING_SINK_MEMORY;
}

/* Results for this worker are in a ring (the relay's, the writer's, the
 * cluster's): a worker blocked in its epoll set is woken at once; one
 * that polls or sleeps finds them at its next pass (its wait is capped
 * by the engine's deadline while a transfer is open). Any thread. */
static void worker_wake(void *arg)
{
	struct dp_worker *w = arg;
	uint64_t one = 1;

	/* not counted here: the worker's counter block is its own thread's.
	 * An eventfd write fails only at a counter of 2^64 - 2: never. */
	if (atomic_load_explicit(&w->waiting, memory_order_seq_cst) && w->wakefd >= 0 &&
	    write(w->wakefd, &one, sizeof(one)) < 0)
		return;
}

/* The worker's own acker, when downstreams take the port path: created
 * here (the sink takes its acker), attached to TCP in net_setup. */
static struct fg_relay_acker *portack_setup(struct dp_worker *w)
{
	struct fg_portack_params pp = { 0 };

	if (!w->dp->port_ack || sink_kind(w->dp) != FG_WIRING_SINK_QUEUE)
		return NULL;
	pp.cfg = w->dp->ob_cfg;
	pp.stats = &w->stats->s;
	w->pa = fg_portack_create(&pp);
	return w->pa ? fg_portack_acker(w->pa) : NULL;
}

/* The sink, the writer slot "floodgate/w<i>" and the engine (wiring.h). */
static int wiring_setup(struct dp_worker *w)
{
	struct fg_wiring_params wp = { 0 };
	char name[FG_REGION_NAME_MAX], who[32];
	uint32_t token;
	int err;

	if (getrandom(&token, sizeof(token), 0) != sizeof(token))
		token = (uint32_t)fg_mono_ns();
	snprintf(name, sizeof(name), "floodgate/w%u", w->index);
	snprintf(who, sizeof(who), "worker %u", w->index);
	wp.sink = sink_kind(w->dp);
	wp.mem.hold = true;
	wp.ob = w->dp->ob;
	wp.acker = portack_setup(w);
	wp.region = w->dp->region;
	wp.slot_name = name;
	wp.claimer = w->dp->cluster.claimer;
	wp.log_comp = DP;
	wp.log_who = who;
	if (w->wakefd < 0)
		w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	wp.wake = worker_wake;
	wp.wake_arg = w;
	wp.engine.cfg = w->cfg;
	wp.engine.history = w->dp->history;
	wp.engine.stats = w->stats;
	wp.engine.peer_stats = w->peer_stats;
	wp.engine.max_sessions = w->dp->per_worker_conns;
	wp.engine.max_holds = w->dp->per_worker_holds;
	wp.engine.token_base = token;
	wp.engine.limits = w->dp->lim;
	w->wire = fg_wiring_build(&wp, &err);
	if (!w->wire) {
		w->pa = NULL;	/* the sink took its acker */
		return err;
	}
	w->e = fg_wiring_engine(w->wire);
	w->slot = fg_wiring_slot(w->wire);
	w->link = fg_wiring_link(w->wire);
	return 0;
}

/* The queue's completions of what the writer finished after this worker's
 * lcore stopped (fg_outbound_stop hands every one back): delivered, so the
 * handle is idle before it goes. Main lcore, the worker's lcore ended. */
static void sink_settle(struct dp_worker *w)
{
	fg_time_t now;
	uint64_t now_ns;

	for (unsigned i = 0; i < 100 && fg_wiring_sink_busy(w->wire); i++) {
		dp_clock(&now, &now_ns);
		if (w->pa)
			fg_portack_poll(w->pa, now_ns);
		fg_nntp_engine_poll(w->e, now, now_ns);
		if (w->ts)
			fg_tcpsess_work(w->ts);
		if (fg_wiring_sink_busy(w->wire))
			usleep(10 * 1000);
	}
	if (fg_wiring_sink_busy(w->wire))
		FG_LOG_WARN(DP, "worker %u: %u articles still in the queue's hands at exit",
			    w->index, fg_wiring_sink_busy(w->wire));
}

void dp_net_addrs(const struct fg_config *cfg, struct fg_net_config *nc)
{
	uint16_t untagged_vid = 0;

	nc->n_ipv4 = nc->n_ipv6 = 0;
	/* VLANs: `vlan N` alone tags the addresses of `address` (IPv4 only:
	 * config.c refuses it beside an IPv6 one); `vlan N ADDR` adds one */
	for (unsigned i = 0; i < cfg->n_dp_vlan; i++)
		if (!cfg->dp_vlan[i].addr.family)
			untagged_vid = (uint16_t)cfg->dp_vlan[i].id;
	for (unsigned i = 0; i < cfg->n_dp_addr; i++) {
		const struct fg_prefix *a = &cfg->dp_addr[i];

		if (a->family == AF_INET) {
			memcpy(&nc->ipv4[nc->n_ipv4], a->addr, 4);
			nc->plen[nc->n_ipv4] = a->len;
			nc->vid[nc->n_ipv4++] = untagged_vid;
		} else {
			memcpy(nc->ipv6[nc->n_ipv6++], a->addr, FG_IP6_ALEN);
		}
	}
	for (unsigned i = 0; i < cfg->n_dp_vlan && nc->n_ipv4 < FG_NET_MAX_ADDRS; i++) {
		const struct fg_config_vlan *v = &cfg->dp_vlan[i];

		if (v->addr.family != AF_INET)
			continue;
		memcpy(&nc->ipv4[nc->n_ipv4], v->addr.addr, 4);
		nc->plen[nc->n_ipv4] = v->addr.len;
		nc->vid[nc->n_ipv4++] = (uint16_t)v->id;
	}
}

/* One TCP instance carries the peers' sessions (tcpsess) and, with the
 * port path, the worker's own connections to downstreams (portack): its
 * callbacks go to whichever owns the connection. Only the worker's lcore
 * runs them. */
static __thread struct fg_portack *dp_tcp_pa;

static const struct fg_tcp_app_ops *tcp_owner(const void *ctx)
{
	return fg_portack_owns(dp_tcp_pa, ctx) ? &fg_portack_tcp_ops : &fg_tcpsess_app_ops;
}

static void *tcp_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			const struct fg_endpoint *local)
{
	return fg_tcpsess_app_ops.on_accept(app, c, peer, local);
}

static uint32_t tcp_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	return tcp_owner(ctx)->on_data(ctx, c, iov, n);
}

static void tcp_eof(void *ctx, struct fg_tcp_conn *c)
{
	tcp_owner(ctx)->on_eof(ctx, c);
}

static void tcp_writable(void *ctx, struct fg_tcp_conn *c)
{
	tcp_owner(ctx)->on_writable(ctx, c);
}

static void tcp_closed(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	tcp_owner(ctx)->on_close(ctx, c, why);
}

static void tcp_connected(void *ctx, struct fg_tcp_conn *c)
{
	fg_portack_tcp_ops.on_connect(ctx, c);
}

static const struct fg_tcp_app_ops dp_tcp_ops = {
	.on_accept = tcp_accept, .on_data = tcp_data, .on_eof = tcp_eof,
	.on_writable = tcp_writable, .on_close = tcp_closed, .on_connect = tcp_connected,
};

/* The port path's connections leave from the first IPv4 address. */
static void portack_attach(struct dp_worker *w)
{
	struct fg_endpoint local = { .family = AF_INET };

	for (unsigned i = 0; i < w->cfg->n_dp_addr; i++)
		if (w->cfg->dp_addr[i].family == AF_INET) {
			memcpy(local.addr, w->cfg->dp_addr[i].addr, 4);
			fg_portack_attach(w->pa, w->tcp, &local);
			return;
		}
}

static int net_setup(struct dp_worker *w)
{
	const struct dp *dp = w->dp;
	struct fg_net_config nc = { 0 };
	struct fg_tcp_config tc = { 0 };
	struct fg_tcpsess_params sp = { 0 };
	struct fg_net_faults faults = { 0 };
	uint64_t secret[2];

	if (getrandom(secret, sizeof(secret), 0) != sizeof(secret))
		return -EIO;
	memcpy(nc.mac, dp->mac, 6);
	dp_net_addrs(w->cfg, &nc);
	/* one worker probes and announces the IPv6 addresses (DAD) */
	nc.nd_announce = w->index == 0;
	nc.mtu = dp->mtu;
	nc.tx_csum_offload = dp->tx_csum;
	nc.tx_max_segs = w->tx.ind_pool ? dp->tx_segs : 1;
	nc.tso_max = dp->tso ? DP_TSO_MAX : 0;
	nc.hash_seed = secret[0];
	/* the exception path's rate, shared by the workers */
	if (dp->exc_port >= 0)
		nc.kernel_rate = FG_MAX(1u, w->cfg->dp_exception_rate / dp->n_workers);
	w->net = fg_net_create(&nc, &dp_port_ops, &w->tx, &w->stats->s);
	if (!w->net)
		return -EINVAL;
	if (dp->o.fault) {
		if (fg_net_faults_parse(dp->o.fault, &faults) != 0)
			return -EINVAL;
		faults.seed += w->index;
		fg_net_set_faults(w->net, &faults);
	}
	sp.net = w->net;
	sp.engine = w->e;
	sp.cfg = w->cfg;
	sp.stats = &w->stats->s;
	sp.max_conns = 2 * dp->per_worker_conns;
	sp.hold_segs = DP_HOLD_SEGS;
	w->ts = fg_tcpsess_create(&sp);
	if (!w->ts)
		return -ENOMEM;
	for (unsigned i = 0; i < w->cfg->n_listen; i++)
		tc.listen[tc.n_listen++] = w->cfg->listen[i];
	tc.max_conns = dp->per_worker_conns;
	/* NNTP's server speaks first: a client whose SYN was answered with
	 * a cookie and whose ACK is lost waits for a greeting forever. A
	 * feeding peer opens many connections at once from one address, so
	 * the half-open backlog is sized for that, and cookies are left for
	 * floods. */
	tc.syn_backlog = FG_MAX(1024u, dp->per_worker_conns / 4);
	tc.syn_backlog_per_peer = 128;
	tc.rcvbuf = DP_TCP_WINDOW;
	tc.rx_segs = dp->per_worker_segs;
	tc.rx_segs_per_conn = FG_MIN(DP_RX_SEGS_PER_CONN, dp->per_worker_segs);
	tc.ooo_segs_per_conn = FG_MIN(64u, tc.rx_segs_per_conn);
	tc.secret = secret[1];
	/* an active open's port brings its answers to this worker (rss.h) */
	w->rss_pick.t = &dp->rss_tab;
	tc.port_ok = dp_rss_port_ok;
	tc.port_ok_ctx = &w->rss_pick;
	w->tcp = fg_tcp_create(w->net, &tc, &dp_tcp_ops, w->ts);
	if (w->tcp && w->pa)
		portack_attach(w);
	return w->tcp ? 0 : -EINVAL;
}

static int passive_setup(struct dp_worker *w)
{
	struct fg_passive_params pp = { 0 };

	pp.engine = w->e;
	pp.cfg = w->cfg;
	pp.ops = &dp_port_ops;
	pp.port = &w->tx;
	pp.stats = &w->stats->s;
	pp.max_flows = w->dp->per_worker_conns;
	pp.segs = w->dp->per_worker_segs;
	pp.shadow = w->dp->shadow;
	w->pv = fg_passive_create(&pp);
	if (w->pv && pp.shadow) {
		w->shadow_pub = calloc(1, sizeof(*w->shadow_pub));
		if (!w->shadow_pub || pthread_mutex_init(&w->shadow_mu, NULL) != 0) {
			free(w->shadow_pub);
			w->shadow_pub = NULL;
			return -ENOMEM;
		}
	}
	return w->pv ? 0 : -ENOMEM;
}

static int snap_setup(struct dp_worker *w)
{
	w->snap = calloc(1, sizeof(*w->snap));
	if (!w->snap)
		return -ENOMEM;
	w->snap->peer = calloc(FG_CONFIG_MAX_PEERS + 1, sizeof(*w->snap->peer));
	w->snap->name = calloc(FG_CONFIG_MAX_PEERS, sizeof(*w->snap->name));
	return w->snap->peer && w->snap->name ? 0 : -ENOMEM;
}

int dp_worker_setup(struct dp_worker *w)
{
	struct dp *dp = w->dp;
	int rc;

	w->cfg = dp->cfg;
	w->tx.port = dp->port_id;
	w->tx.queue = (uint16_t)w->index;
	w->tx.pool = dp->pool;
	if (dp->tx_segs > 1) {
		/* pieces sent by reference: indirect mbufs, no data room */
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), DP_IND_POOL_NAME, w->index);
		/* a worker set up again (the history restored) finds its own:
		 * the pools live until dp_port_stop */
		w->tx.ind_pool = rte_mempool_lookup(name);
		if (!w->tx.ind_pool)
			w->tx.ind_pool = rte_pktmbuf_pool_create(name, DP_IND_MBUFS, 64, 0, 0,
								 (int)rte_socket_id());
		if (!w->tx.ind_pool)
			FG_LOG_WARN(DP, "worker %u: no indirect mbufs (%s): TCP copies what "
				    "it sends by reference", w->index, rte_strerror(rte_errno));
	}
	w->tx.csum_offload = dp->tx_csum;
	w->tx.tso_seg_frame_max = dp->tso_l2_in_mtu ? (uint16_t)dp->mtu : 0;
	/* received payload keeps its checksum sum for TCP to reuse (net.h
	 * struct fg_buf_sum): only where TCP checksums in software */
	w->tx.sum_off = dp->sum_off;
	w->tx.vlan_insert = dp->vlan_insert;
	w->tx.exc_port = dp->exc_port;
	w->tx.lacp = dp_bond_lacp(dp);
	w->stats = aligned_alloc(FG_CACHE_LINE, sizeof(*w->stats));
	w->peer_stats = calloc(w->cfg->n_peer + 1, sizeof(*w->peer_stats));
	if (!w->stats || !w->peer_stats)
		return -ENOMEM;
	memset(w->stats, 0, sizeof(*w->stats));
	w->tx.st = &w->stats->s;
	for (unsigned q = w->index; q < dp->n_rxq; q += dp->n_workers) {
		w->rxq[w->n_rxq++] = (uint16_t)q;
		dp_rss_pick_queue(&w->rss_pick, (uint16_t)q);
	}
	rc = snap_setup(w);
	if (rc == 0)
		rc = wiring_setup(w);
	if (rc == 0)
		rc = dp->passive ? passive_setup(w) : net_setup(w);
	if (rc != 0)
		FG_LOG_ERR(DP, "worker %u: set-up failed: %s", w->index, strerror(-rc));
	return rc;
}

void dp_worker_teardown(struct dp_worker *w)
{
	if (w->pv)
		fg_passive_end_all(w->pv);
	if (w->e && w->ts) {
		fg_tcpsess_abort_all(w->ts);
		fg_tcpsess_work(w->ts);
	}
	/* the articles with its downstreams spill to the queue */
	fg_portack_abort_all(w->pa);
	if (w->wire)
		sink_settle(w);
	fg_tcp_destroy(w->tcp);
	fg_tcpsess_destroy(w->ts);
	fg_net_destroy(w->net);
	fg_passive_destroy(w->pv);
	/* w->tx.ind_pool goes in dp_port_stop, once the TX rings let go */
	if (w->shadow_pub) {
		pthread_mutex_destroy(&w->shadow_mu);
		free(w->shadow_pub);
		w->shadow_pub = NULL;
	}
	if (w->link)
		fg_slotlink_publish(w->link, w->stats, w->peer_stats, w->cfg->n_peer, false);
	fg_wiring_destroy(w->wire);
	dp_tx_drain(&w->tx);
	for (unsigned i = 0; i < w->tx.n_pending; i++)
		rte_pktmbuf_free(w->tx.pending[i]);
	w->tx.n_pending = 0;
	if (w->snap) {
		free(w->snap->peer);
		free(w->snap->name);
		free(w->snap);
	}
	free(w->stats);
	free(w->peer_stats);
	/* its modules are gone: the report sees an empty worker */
	memset(&w->tx, 0, offsetof(struct dp_worker, mbox) - offsetof(struct dp_worker, tx));
	w->epfd = -1;
}

/* ------------------------------------------------------------ the loop */

/* Poll every RX queue once; returns frames received. */
static unsigned rx_active(struct dp_worker *w, uint64_t now_ns)
{
	struct rte_mbuf *mb[DP_BURST];
	struct fg_rx_frame fr[DP_BURST];
	struct fg_rx_piece pc[DP_BURST];	/* merged packets' pieces (GRO) */
	unsigned got = 0;

	for (unsigned i = 0; i < w->n_rxq; i++) {
		uint16_t n = rte_eth_rx_burst(w->dp->port_id, w->rxq[i], mb, DP_BURST);
		unsigned k;

		if (!n)
			continue;
		fg_stats_inc(&w->stats->s, FG_CTR_DP_RX_BURSTS);
		k = dp_rx_frames(w->dp, mb, n, fr, pc, NULL, &w->stats->s);
		if (k)
			fg_net_rx(w->net, fr, k, now_ns);
		got += n;
	}
	/* the kernel's frames, out through the port (the exception path) */
	if (w->tx.exc_port >= 0)
		got += dp_exc_rx(&w->tx, (uint16_t)w->tx.exc_port, &w->stats->s);
	return got;
}

static unsigned rx_passive(struct dp_worker *w, fg_time_t now, uint64_t now_ns)
{
	struct rte_mbuf *mb[DP_BURST];
	struct fg_rx_frame fr[DP_BURST];
	uint64_t ts[DP_BURST];
	unsigned got = 0;

	for (unsigned i = 0; i < w->n_rxq && !fg_passive_backlogged(w->pv); i++) {
		uint16_t n = rte_eth_rx_burst(w->dp->port_id, w->rxq[i], mb, DP_BURST);
		unsigned k;

		if (!n)
			continue;
		fg_stats_inc(&w->stats->s, FG_CTR_DP_RX_BURSTS);
		k = dp_rx_frames(w->dp, mb, n, fr, NULL, w->dp->o.capture_clock ? ts : NULL,
				 &w->stats->s);
		if (k)
			fg_passive_rx(w->pv, fr, k, w->dp->o.capture_clock ? ts : NULL, now,
				      now_ns);
		got += n;
	}
	return got;
}

/* Nothing left to end: the worker may stop. */
static bool worker_done(const struct dp_worker *w)
{
	if (fg_nntp_engine_sessions(w->e) || fg_nntp_engine_xfers(w->e))
		return false;
	return w->pv ? fg_passive_flows(w->pv) == 0 : fg_tcpsess_unfinished(w->ts) == 0;
}

/* Drain, shutdown and the passive replay's end. */
static void lifecycle(struct dp_worker *w, uint64_t now_ns)
{
	struct dp_mbox *m = &w->mbox;

	if (w->ts) {
		fg_tcpsess_set_draining(w->ts, atomic_load(&m->draining));
		fg_tcpsess_set_restoring(w->ts, atomic_load(&m->restoring));
	}
	dp_levers_worker(w);
	if (atomic_load(&m->shutdown) && !w->shutdown_deadline_ns) {
		w->shutdown_deadline_ns = now_ns + DP_ABORT_NS;
		if (w->pv)
			fg_passive_end_all(w->pv);
		fg_nntp_engine_shutdown(w->e);
	}
	if (w->shutdown_deadline_ns && now_ns > w->shutdown_deadline_ns && w->ts &&
	    fg_tcpsess_unfinished(w->ts)) {
		FG_LOG_WARN(DP, "worker %u: %u connections still open after the shutdown's grace; "
			    "resetting them", w->index, fg_tcpsess_abort_all(w->ts));
		w->shutdown_deadline_ns = UINT64_MAX;
	}
	if (w->pv && w->dp->o.exit_idle_ms && w->last_rx_ns &&
	    now_ns - w->last_rx_ns > w->dp->o.exit_idle_ms * 1000000ull &&
	    !atomic_load(&m->shutdown)) {
		/* the capture is over: every flow ends, as at its last frame */
		fg_passive_end_all(w->pv);
		atomic_store(&m->shutdown, true);
		w->shutdown_deadline_ns = now_ns + DP_ABORT_NS;
	}
	atomic_store(&m->finished, (atomic_load(&m->draining) || atomic_load(&m->shutdown)) &&
					   worker_done(w));
}

/* Receive interrupts of the worker's queues into an epoll set of its
 * own; none (-1) when the port has none for one of them. Called on the
 * worker's lcore once the port runs. */
static void intr_setup(struct dp_worker *w)
{
	int ethdev_log = rte_log_register("lib.ethdev"), level;

	w->epfd = -1;
	if (!w->dp->rx_intr || w->pv)
		return;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	/* a PMD that accepted the configuration may still have no vector
	 * (net_af_packet): ethdev's complaint about it is not ours to log */
	level = rte_log_get_level(ethdev_log);
	rte_log_set_level(ethdev_log, RTE_LOG_EMERG);
	for (unsigned i = 0; i < w->n_rxq && w->epfd >= 0; i++) {
		int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(w->dp->port_id, w->rxq[i]);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = w->rxq[i] };

		if (fd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(w->epfd);
			w->epfd = -1;
		}
	}
	if (w->tx.exc_port >= 0 && w->epfd >= 0) {
		/* the kernel's frames wake an idle worker too */
		int fd = rte_eth_dev_rx_intr_ctl_q_get_fd((uint16_t)w->tx.exc_port, w->tx.queue);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = DP_EV_EXCEPTION };

		if (fd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(w->epfd);
			w->epfd = -1;
		}
	}
	if (w->epfd >= 0 && w->wakefd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = DP_EV_WAKE };

		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &ev) != 0)
			FG_LOG_WARN(DP, "worker %u: results will not wake it: %s", w->index,
				    strerror(errno));
	}
	rte_log_set_level(ethdev_log, (uint32_t)level);
	FG_LOG_INFO(DP, "worker %u: idle on %s", w->index,
		    w->epfd >= 0 ? "receive interrupts" : "sleeps (the port has no interrupts)");
}

static void intr_arm(struct dp_worker *w, bool on)
{
	for (unsigned i = 0; i < w->n_rxq; i++) {
		if (on)
			rte_eth_dev_rx_intr_enable(w->dp->port_id, w->rxq[i]);
		else
			rte_eth_dev_rx_intr_disable(w->dp->port_id, w->rxq[i]);
	}
	if (w->tx.exc_port >= 0) {
		if (on)
			rte_eth_dev_rx_intr_enable((uint16_t)w->tx.exc_port, w->tx.queue);
		else
			rte_eth_dev_rx_intr_disable((uint16_t)w->tx.exc_port, w->tx.queue);
	}
}

/* Frames already waiting (ports that can tell; others' interrupts are
 * level-triggered, which makes the wait return at once). */
static bool rx_pending(const struct dp_worker *w)
{
	for (unsigned i = 0; i < w->n_rxq; i++)
		if (rte_eth_rx_queue_count(w->dp->port_id, w->rxq[i]) > 0)
			return true;
	return w->tx.exc_port >= 0 &&
	       rte_eth_rx_queue_count((uint16_t)w->tx.exc_port, w->tx.queue) > 0;
}

/* Block on the receive interrupts until a frame or the next timer. */
static void intr_wait(struct dp_worker *w, uint64_t wait_ns)
{
	struct epoll_event ev[8];
	int ms = (int)FG_MIN(wait_ns / 1000000ull, MAX_SLEEP_NS / 1000000ull);

	int n = 0;
	uint64_t v;

	intr_arm(w, true);
	atomic_store_explicit(&w->waiting, true, memory_order_seq_cst);
	if (!rx_pending(w)) {
		fg_stats_inc(&w->stats->s, FG_CTR_DP_IDLE_WAITS);
		n = epoll_wait(w->epfd, ev, FG_ARRAY_SIZE(ev), ms);
	}
	atomic_store_explicit(&w->waiting, false, memory_order_seq_cst);
	intr_arm(w, false);
	for (int i = 0; i < n; i++)
		if (ev[i].data.u32 == DP_EV_WAKE && read(w->wakefd, &v, sizeof(v)) == sizeof(v))
			fg_stats_inc(&w->stats->s, FG_CTR_DP_WAKES);
}

/* Idle: block on interrupts, or sleep in growing steps, never longer
 * than `wait_ns` (until the next timer). `mono_ns` times the spell. */
static void idle_backoff(struct dp_worker *w, uint64_t mono_ns, uint64_t wait_ns)
{
	uint64_t cap = (uint64_t)w->cfg->idle_backoff_us * 1000ull, d;
	struct timespec ts;

	if (w->tx.lacp)
		wait_ns = FG_MIN(wait_ns, DP_LACP_POLL_NS);
	if (!w->idle_since_ns)
		w->idle_since_ns = mono_ns;
	if (mono_ns - w->idle_since_ns < DP_SPIN_NS || cap == 0 || wait_ns == 0)
		return;
	if (w->epfd >= 0) {
		/* epoll's resolution is a millisecond: a timer due sooner
		 * (TCP's wheel ticks every ~1 ms while any timer runs) is
		 * served at most one tick late */
		intr_wait(w, FG_MAX(wait_ns, 1000000ull));
		return;
	}
	w->sleep_ns = w->sleep_ns ? FG_MIN(w->sleep_ns * 2, cap) : FG_MIN(1000ull, cap);
	d = FG_MIN(FG_MIN(w->sleep_ns, wait_ns), MAX_SLEEP_NS);
	ts.tv_sec = (time_t)(d / 1000000000ull);
	ts.tv_nsec = (long)(d % 1000000000ull);
	fg_stats_inc(&w->stats->s, FG_CTR_DP_IDLE_SLEEPS);
	nanosleep(&ts, NULL);
}

static void publish(struct dp_worker *w, uint64_t now_ns)
{
	if (now_ns < w->next_publish_ns)
		return;
	w->next_publish_ns = now_ns + DP_PUBLISH_NS;
	/* never waits: main holds the lock only to copy it out */
	if (w->shadow_pub && pthread_mutex_trylock(&w->shadow_mu) == 0) {
		fg_shadow_report(fg_passive_shadow(w->pv), w->shadow_pub);
		pthread_mutex_unlock(&w->shadow_mu);
	}
	if (w->link)
		fg_slotlink_publish(w->link, w->stats, w->peer_stats, w->cfg->n_peer,
				    fg_nntp_engine_clock_suspect(w->e));
}

/* One pass of the loop; returns true when it did work. */
static bool iteration(struct dp_worker *w)
{
	fg_time_t now;
	uint64_t now_ns, next, mono_ns;
	unsigned got, work;

	dp_mbox_serve(w);
	dp_clock(&now, &now_ns);
	if (w->pv) {
		got = rx_passive(w, now, now_ns);
		if (w->dp->o.capture_clock && fg_passive_clock(w->pv)) {
			/* timers run on the capture's clock too */
			now_ns = fg_passive_clock(w->pv);
			now = (fg_time_t)(now_ns / 1000000000ull);
		}
		fg_nntp_engine_poll(w->e, now, now_ns);
		work = fg_passive_work(w->pv);
		next = w->engine_due_ns = fg_nntp_engine_next_poll(w->e, now_ns);
	} else {
		fg_tcpsess_set_time(w->ts, now, now_ns);
		if (w->pa)
			fg_portack_set_time(w->pa, now_ns);
		got = rx_active(w, now_ns);
		dp_tx_drain(&w->tx);
		/* its results reach the sink through the engine's poll */
		if (w->pa && now_ns >= fg_portack_next(w->pa))
			fg_portack_poll(w->pa, now_ns);
		if (got || now_ns >= w->engine_due_ns || (w->pa && !fg_portack_next(w->pa))) {
			fg_nntp_engine_poll(w->e, now, now_ns);
			/* the engine says when, from now: transfers waiting on
			 * another's outcome are retried within a millisecond */
			w->engine_due_ns = fg_nntp_engine_next_poll(w->e, now_ns);
		}
		work = fg_tcpsess_work(w->ts);
		if (got || work || now_ns >= fg_net_next_deadline(w->net)) {
			fg_net_poll(w->net, now_ns);
			work += fg_tcpsess_work(w->ts);
		}
		next = FG_MIN(fg_net_next_deadline(w->net), w->engine_due_ns);
		if (w->pa)
			next = FG_MIN(next, fg_portack_next(w->pa));
		if (w->tx.n_pending)
			next = now_ns;
	}
	/* the engine may run on the capture's clock; the worker's own
	 * deadlines (publication, exit-idle, shutdown) use the monotonic one */
	mono_ns = fg_mono_ns();
	if (got)
		w->last_rx_ns = mono_ns;
	publish(w, mono_ns);
	lifecycle(w, mono_ns);
	if (got || work) {
		w->idle_since_ns = 0;
		w->sleep_ns = 0;
		return true;
	}
	if (!w->pv || !w->dp->o.capture_clock)
		idle_backoff(w, mono_ns, next > now_ns ? next - now_ns : 0);
	else
		idle_backoff(w, mono_ns, MAX_SLEEP_NS);	/* capture time stands still */
	return false;
}

int dp_worker_main(void *arg)
{
	struct dp_worker *w = arg;

	FG_LOG_INFO(DP, "worker %u on lcore %u: %u RX queue(s), TX queue %u", w->index,
		    rte_lcore_id(), w->n_rxq, w->tx.queue);
	w->next_publish_ns = 0;
	dp_io_signals(false);
	dp_tcp_pa = w->pa;
	intr_setup(w);
	w->pass_tsc = rte_rdtsc();
	while (!atomic_load_explicit(&w->mbox.stop, memory_order_acquire)) {
		bool busy = iteration(w);
		uint64_t tsc = rte_rdtsc();

		fg_stats_add(&w->stats->s, busy ? FG_CTR_DP_BUSY_CYCLES : FG_CTR_DP_IDLE_CYCLES,
			     tsc - w->pass_tsc);
		w->pass_tsc = tsc;
	}
	publish(w, UINT64_MAX);
	if (w->epfd >= 0)
		close(w->epfd);
	w->epfd = -1;
	return 0;
}
