/* SPDX-License-Identifier: MIT */
/*
 * dp.h — floodgate, the DPDK dataplane: shared state of the program,
 * private to dataplane/dpdk.
 *
 *   main.c    options, configuration, EAL start-up, the region, start and
 *             stop, the main lcore's loop (signals, control socket, stats)
 *   eal.c     the EAL argument list built from the configuration, and
 *             the EAL's stop (its interrupt thread parked first)
 *   port.c    the ethdev port: queues, offloads, mempool; the mbuf port
 *             ops the net module and passive mode use
 *   worker.c  one worker lcore: its modules, its loop, idle back-off
 *   mailbox.c main <-> worker requests (reload, drain, snapshots)
 *   levers.c  the operator's throttle and per-peer pause, journaled
 *   ctl.c     the dataplane's control socket (peers, reload, drain,
 *             shutdown, status), served by the main lcore
 *   report.c  counters as "name value" lines, and the peers table
 *   bond.c    a bonded port's members, for their figures
 *   nic.c     the port's own figures (tbl/nic.h) into the region, read by
 *             the main lcore from rte_eth_stats, the link and xstats
 *   outbound  (library, outbound.h) --sink queue: the durable queue, its
 *             writer thread and the relay thread, started from the main
 *             lcore so that they share its CPUs, never a worker's
 *
 * Threads: the main lcore and one EAL lcore per worker. A worker owns its
 * modules outright (net, TCP, sessions, engine, sink, slot link); the only
 * things it shares are the history table (lock-free, in floodctld's
 * region), the read-only configuration it was handed, and its mailbox
 * (struct dp_mbox), whose fields are atomics: the main lcore posts a
 * request with a sequence number and waits for the worker to echo it at
 * its next quiescent point (between two bursts), which is how a reload
 * swaps the configuration RCU-style — the old one is freed only after
 * every worker has passed a quiescent point holding the new one.
 */
#ifndef FLOODGATE_DP_H
#define FLOODGATE_DP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "floodgate/claimer.h"
#include "floodgate/config.h"
#include "floodgate/ctl.h"
#include "floodgate/history.h"
#include "floodgate/levers.h"
#include "floodgate/net.h"
#include "floodgate/nic.h"
#include "floodgate/outbound.h"
#include "floodgate/peerlim.h"
#include "floodgate/portack.h"
#include "floodgate/passive.h"
#include "floodgate/shadow.h"
#include "floodgate/region.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"
#include "floodgate/startup.h"
#include "floodgate/slotlink.h"
#include "floodgate/tcp.h"
#include "floodgate/tcpsess.h"
#include "floodgate/wiring.h"
#include "rss.h"

#define DP "floodgate"
#define DP_MAX_WORKERS 127
#define DP_MAX_RXQ 1024
#define DP_BURST 32
#define DP_EV_EXCEPTION UINT32_MAX	/* a worker's epoll events beyond its RX queues: */
#define DP_EV_WAKE (UINT32_MAX - 1)	/* the exception port's frames, a result's wake-up */
#define DP_RX_DESC 1024
#define DP_TX_DESC 1024
#define DP_TX_PENDING 256		/* frames a worker keeps when its TX ring is full */
#define DP_TX_SEGS_MAX 17		/* a frame's mbufs at most: its own and 16 pieces */
#define DP_TSO_MAX 65535u		/* TCP payload octets of a TSO frame at most (TCP keeps
					 * the IP packet within its 16-bit length) */
#define DP_IND_MBUFS 8191		/* a worker's indirect mbufs (pieces attached in flight) */
#define DP_IND_POOL_NAME "fg_ind%u"	/* worker i's pool of them */
#define DP_TX_STUCK_TRIES 1024		/* failed sends of one frame before it is dropped */
#define DP_PUBLISH_NS (100ull * 1000000ull)	/* counters into the region slot */
#define DP_SPIN_NS (20ull * 1000ull)	/* an idle worker polls this long before it sleeps */
/* An 802.3ad bond exchanges LACPDUs only inside its RX and TX bursts, and
 * DPDK asks for one at least every 100 ms: a worker on one never idles
 * longer than this, and bursts (empty if need be) every pass. */
#define DP_LACP_POLL_NS (50ull * 1000000ull)
#define DP_PEERS_MAX 4096		/* connections one `peers` snapshot lists per worker */
#define DP_EXC_PORT "net_tap_exc"		/* the exception path's tap port */
#define DP_EXC_DESC 512			/* its RX and TX ring sizes */
#define DP_NIC_PUBLISH_NS (500ull * 1000000ull)	/* the port's figures into the region */
#define DP_NIC_XSTATS_MAX 8		/* TX drop xstats read per port */

struct dp_opts {
	const char *config;		/* NULL: the embedded default */
	const char *port;		/* overrides [dataplane] port */
	const char *ctl_socket;		/* NULL: <dir of control-socket>/dataplane.sock */
	const char *stats_file;
	const char *shadow_file;		/* shadow mode's report (shadowrep.h) */
	bool region_history;			/* shadow mode on floodctld's history */
	const char *fault;		/* the TCP module's fault knob (tests) */
	unsigned exit_idle_ms;		/* passive: stop once the port was idle this long */
	unsigned shutdown_grace_ms;	/* drain time before a shutdown answers 400 to the rest */
	bool capture_clock;		/* passive: time from the port's receive timestamps */
	enum fg_wiring_sink sink;	/* where accepted articles go: memory (tests), null
					 * (benchmarks), the queue and the relay */
	bool sink_given;		/* --sink; else queue iff the config has a [downstream] */
	int log_level;
};

/* What a worker's port ops need: its TX queue and the mbufs it could not
 * send yet (kept in order, retried before anything new). */
struct dp_txq {
	uint16_t port;
	uint16_t queue;
	struct rte_mempool *pool;
	struct rte_mempool *ind_pool;	/* indirect mbufs for attached pieces; NULL: none */
	bool csum_offload;
	int sum_off;			/* mbufs' kept payload sum (fg_mbuf_buf_sum); -1: none */
	uint16_t tso_seg_frame_max;	/* a TSO segment with its headers at most; 0: no bound */
	bool vlan_insert;		/* the port inserts 802.1Q tags (else software) */
	unsigned n_pending;
	unsigned stuck;			/* sends in a row that took nothing */
	int exc_port;			/* the exception tap (its TX queue is `queue`); -1: none */
	bool lacp;			/* an 802.3ad bond: a burst every pass (DP_LACP_POLL_NS) */
	struct rte_mbuf *pending[DP_TX_PENDING];
	struct fg_stats *st;
};

/* Requests from the main lcore; a worker answers at a quiescent point. */
enum dp_req {
	DP_REQ_NONE = 0,
	DP_REQ_CONFIG,		/* switch to mbox.cfg */
	DP_REQ_PEERS,		/* fill the peers snapshot */
};

struct dp_mbox {
	_Atomic(const struct fg_config *) cfg;	/* DP_REQ_CONFIG's argument */
	/* DP_REQ_CONFIG: a zeroed array for the new configuration in; the
	 * worker's old one out (for the main lcore to free) */
	_Atomic(struct fg_nntp_counters *) peer_stats;
	atomic_uint req;			/* enum dp_req */
	atomic_ulong seq;			/* the request's number */
	atomic_ulong done;			/* the last number answered */
	atomic_bool draining;
	atomic_bool restoring;			/* floodctld restores: every new session 400 */
	atomic_bool shutdown;			/* drain, then end every session */
	atomic_bool stop;			/* leave the loop now */
	atomic_bool finished;			/* nothing left: sessions and transfers ended */
	atomic_int rc;				/* the last request's result */
};

/* A worker's answer to DP_REQ_PEERS. */
struct dp_peers_snap {
	unsigned n_conns;
	struct fg_tcpsess_info conn[DP_PEERS_MAX];
	unsigned n_peer;			/* of the worker's configuration */
	struct fg_nntp_counters *peer;		/* n_peer + 1 blocks (copies) */
	char (*name)[FG_CONFIG_NAME_MAX];	/* n_peer names */
};

/* The port's figures (nic.c): which ethdevs, which of their xstats. */
struct dp_nic {
	struct fg_nic_block *block;		/* in worker 0's region slot; NULL: none */
	unsigned n_ports;
	uint16_t port_id[FG_NIC_MAX_PORTS];	/* [0] the port, then bond members */
	unsigned n_xdrop[FG_NIC_MAX_PORTS];
	uint64_t xdrop_id[FG_NIC_MAX_PORTS][DP_NIC_XSTATS_MAX];
	uint64_t next_ns;
};

struct dp;

struct dp_worker {
	struct dp *dp;
	unsigned index;
	unsigned lcore;
	uint16_t rxq[DP_MAX_RXQ];
	unsigned n_rxq;
	struct dp_txq tx;
	const struct fg_config *cfg;
	struct fg_nntp_counters *stats;		/* this lcore's block */
	struct fg_nntp_counters *peer_stats;	/* cfg->n_peer + 1 */
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_tcpsess *ts;
	struct dp_rss_pick rss_pick;		/* its queues: active opens' ports (rss.h) */
	struct fg_passive *pv;
	struct fg_wiring *wire;			/* sink, writer slot, engine (wiring.h) */
	struct fg_nntp_engine *e;		/* the wiring's engine */
	struct fg_region_writer *slot;		/* the wiring's slot and link, or NULL */
	struct fg_slotlink *link;
	struct dp_peers_snap *snap;
	/* end-to-end acknowledgement through the port (portack.h), or NULL;
	 * its acker is the sink's, which destroys it */
	struct fg_portack *pa;
	/* teardown clears everything from tx to here */
	struct dp_mbox mbox;
	/* loop state */
	uint64_t engine_due_ns;			/* the engine's next poll */
	uint64_t next_publish_ns;
	uint64_t last_rx_ns;
	uint64_t idle_since_ns;			/* first empty poll of this idle spell, 0: busy */
	uint64_t sleep_ns;
	uint64_t shutdown_deadline_ns;
	uint64_t pass_tsc;			/* TSC at the end of the last pass */
	unsigned long levers_seen;		/* the levers generation applied */
	int epfd;				/* RX interrupts of its queues, -1: none */
	int wakefd;				/* eventfd in epfd: the relay's, the writer's and
						 * the cluster's results wake the worker; kept
						 * across a restore's rebuild, closed with dp->w */
	atomic_bool waiting;			/* blocked in epfd: worth a wake-up */
	/* shadow mode: its figures as of the last publication, for main */
	pthread_mutex_t shadow_mu;
	struct fg_shadow_report *shadow_pub;
};

struct dp {
	struct dp_opts o;
	struct fg_config *cfg;			/* the one in force (main's) */
	char config_path[4096];			/* "" = the embedded default */
	char ctl_path[FG_CONFIG_PATH_MAX + 32];
	bool passive;
	bool shadow;				/* passive, comparing with the server (shadow.h) */
	char shadow_path[FG_CONFIG_PATH_MAX + 32];	/* its report file */
	bool restoring;				/* waiting for floodctld's restore (main.c) */
	/* history: floodctld's region, or a private table in passive mode */
	struct fg_region *region;
	struct fg_peerlim *lim;			/* the peers' limits, the box's (peerlim.h) */
	struct fg_history *history;
	struct fg_startup_table table;		/* the private one (startup.h) */
	/* the port */
	uint16_t port_id;
	struct rte_mempool *pool;
	unsigned n_rxq;
	uint16_t mtu;
	uint8_t mac[6];
	bool rx_csum, tx_csum, rss, rx_intr;
	struct dp_rss_table rss_tab;		/* the port's key and RETA (rss.h), after start */
	unsigned tx_segs;			/* mbufs a TX frame may chain (1: none) */
	bool tso;				/* the port segments TCP frames (TSO) */
	int sum_off;				/* mbufs' kept payload sums; -1: none (TX
						 * checksums in the port: nothing derives) */
	bool tso_l2_in_mtu;			/* net_tap: a TSO segment's Ethernet header counts
						 * against the MTU (fg_mbuf_tx_tso) */
	bool vlan_strip, vlan_insert;		/* the port's VLAN offloads, in use */
	bool gro;				/* [dataplane] gro, in use (port.c) */
	int exc_port;				/* the exception path's tap port; -1: none */
	uint16_t member[FG_NIC_MAX_PORTS - 1];	/* a bonded port's members */
	unsigned n_members;
	int ts_offset;				/* mbuf timestamp dynfield, -1 none */
	uint64_t ts_flag;
	/* --sink queue: the queue, its writer and the relay, whose threads
	 * run on the main lcore's CPUs; ob_cfg is the configuration they
	 * were opened with (kept until exit: a reload cannot change them) */
	struct fg_outbound *ob;
	struct fg_config *ob_cfg;
	/* the workers feed the downstreams that take the port path with
	 * their own TCP (portack.h); decided at outbound_open */
	bool port_ack;
	/* [cluster]: the cluster thread (on the main lcore's CPUs, like the
	 * outbound's) and its counters' writer slot, or NULL */
	struct fg_startup_cluster cluster;
	/* budgets derived from the pool (port.c) */
	unsigned per_worker_segs, per_worker_holds, per_worker_conns;
	/* workers */
	unsigned n_workers;
	struct dp_worker *w;
	uint64_t tsc_hz;
	int ctl_fd;
	bool eal_up;
	uint64_t started_ns;
	fg_time_t started;
	bool draining;				/* the operator asked for a drain */
	/* the operator's throttle and pauses (levers.c): the main lcore's,
	 * published to the workers under a sequence lock */
	struct fg_levers_pub levers;
	bool shutdown_asked;
	unsigned shutdown_grace_ms;
	uint64_t reloads, reload_failures;
	struct dp_nic nic;
};

/* eal.c: argv for rte_eal_init (strings in `buf`); the count or -errno. */
int dp_eal_args(const struct fg_config *cfg, const char *port, char *buf, size_t buflen,
		char **argv, unsigned max);
/* eal.c: rte_eal_cleanup(), the interrupt thread parked first (the ports
 * must be closed). */
void dp_eal_stop(void);

/* port.c */
/* worker.c: the port's addresses of cfg as fg_net takes them (IPv4 with
 * their prefix lengths and VLANs, IPv6), at start and at a reload. */
void dp_net_addrs(const struct fg_config *cfg, struct fg_net_config *nc);
/* A removed IPv4 address stays ours this long after a reload, for the
 * sessions on it to drain (10 s at most) and close. */
#define DP_ADDR_LEAVE_NS (15ull * 1000000000ull)
int dp_port_setup(struct dp *dp);
int dp_port_start(struct dp *dp);
void dp_port_stop(struct dp *dp);
extern const struct fg_port_ops dp_port_ops;
/* Convert received mbufs to frames (multi-segment mbufs are dropped);
 * fills ts[] from the timestamp dynfield when the port gives one.
 * Returns the frames kept. */
unsigned dp_rx_frames(const struct dp *dp, struct rte_mbuf **m, unsigned n,
		      struct fg_rx_frame *fr, struct fg_rx_piece *pc, uint64_t *ts,
		      struct fg_stats *st);
/* Retry frames kept back when the TX ring was full. */
void dp_tx_drain(struct dp_txq *q);
/* The kernel's frames from the exception port's RX queue `queue`, sent
 * out on the worker's TX queue; returns how many came. */
unsigned dp_exc_rx(struct dp_txq *q, uint16_t exc_port, struct fg_stats *st);

/* bond.c: the members of a bonded port (driver net_bonding), from the
 * port's devargs, into dp->member[]. */
void dp_bond_members(struct dp *dp, const char *port, const char *driver);
/* Active-backup: a member whose link is up becomes the primary when the
 * primary's is down (member_up[i]: dp->member[i]'s link). Main lcore. */
void dp_bond_watch(struct dp *dp, const bool *member_up);
/* True when the port is an 802.3ad bond (LACP runs inside its bursts). */
bool dp_bond_lacp(const struct dp *dp);
/* At the port's start: an 802.3ad bond made all-multicast (broadcast
 * frames pass its filter), or a warning that it cannot be. */
void dp_bond_start(struct dp *dp);

/* nic.c: after the workers claimed their slots; publish from the main
 * lcore's loops (at most every DP_NIC_PUBLISH_NS unless `now`). */
void dp_nic_setup(struct dp *dp);
void dp_nic_publish(struct dp *dp, bool now);
/* The figures as the region has them, for the dataplane's own status. */
void dp_nic_text(const struct dp *dp, FILE *f);

/* worker.c */
int dp_worker_setup(struct dp_worker *w);
void dp_worker_teardown(struct dp_worker *w);
int dp_worker_main(void *arg);		/* lcore entry */
void dp_clock(fg_time_t *now, uint64_t *now_ns);
/* Block (main lcore, before the EAL starts its threads) or unblock
 * (worker lcores) the I/O signals PMDs raise. */
void dp_io_signals(bool block);

/* mailbox.c — main lcore side */
int dp_post(struct dp *dp, enum dp_req req, unsigned timeout_ms);
/* worker side: answer a pending request, if any (between bursts) */
void dp_mbox_serve(struct dp_worker *w);

/* reload.c: load, check and hand a configuration to every worker; the
 * reply text (what changed, what needs a restart, errors) goes to `out`.
 * 0 applied, -EINVAL refused (nothing changed), other -errno. */
int dp_reload(struct dp *dp, const char *path, FILE *out);

/* ctl.c */
int dp_ctl_listen(struct dp *dp);
/* Serve at most one request, waiting up to timeout_ms for it. */
void dp_ctl_serve(struct dp *dp, int timeout_ms);
void dp_ctl_close(struct dp *dp);

/* main.c: what the control socket and the signals ask of the main loop */
void dp_request_drain(struct dp *dp, bool on);
void dp_request_shutdown(struct dp *dp, unsigned grace_ms);
void dp_status(struct dp *dp, FILE *f, bool json);

/* levers.c: the operator's throttle and pauses */
int dp_levers_load(struct dp *dp);			/* at start, before the workers */
void dp_levers_worker(struct dp_worker *w);		/* each worker loop */
void dp_levers_tick(struct dp *dp, fg_time_t now);	/* the main loop, once a second */
const char *dp_levers_ctl(struct dp *dp, const struct fg_ctl_req *q, FILE *f);
/* "throttled" and "paused" as a whole object, or as members to append */
void dp_levers_json(const struct dp *dp, FILE *f, bool whole);
void dp_levers_text(const struct dp *dp, FILE *f);

/* report.c */
void dp_write_counters(FILE *f, const struct dp *dp);
int dp_write_stats_file(const struct dp *dp, const char *path);
/* Shadow mode: the workers' figures added up, to `path` (shadowrep.h). */
int dp_write_shadow_file(struct dp *dp, const char *path);
/* `floodctl peers`: asks every worker for a snapshot; 0 or -errno. */
int dp_peers(struct dp *dp, FILE *f, bool json);

#endif /* FLOODGATE_DP_H */
