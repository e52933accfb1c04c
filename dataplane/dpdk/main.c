/* SPDX-License-Identifier: MIT */
/*
 * main.c — floodgate: the DPDK dataplane process.
 *
 *   floodgate [-c CONFIG] [--port DEV] [--ctl-socket PATH] [--stats-file PATH]
 *             [--fault SPEC] [--clock wall|capture] [--exit-idle MS]
 *             [--shutdown-grace S] [--sink queue|memory|null] [--log-level L]
 *
 * Start-up, in this order (the steps floodgate-host shares are
 * startup.h's), each step refusing to go on with a message that says what
 * to do:
 *   1. the configuration (a file, or the embedded default);
 *   2. the history: active mode attaches to floodctld's region (refused
 *      when floodctld is not running or the region is not one this build
 *      understands); while floodctld restores it, the start goes on with
 *      a placeholder and every session is greeted 400 until the region is
 *      ready (the restore wait, below); passive mode keeps a private
 *      table, since what it decides must never reach the real history;
 *      so does shadow mode unless --history region asks for floodctld's
 *      (seeded by floodctl remember or an import, its decisions
 *      journaled: the history a cut-over starts from);
 *   3. the EAL (eal.c), the port and its mempool (port.c);
 *   4. with --sink queue (the default when the configuration has a
 *      [downstream]): the outbound side (outbound.h) — the queue in the
 *      data directory (its recovery runs now), the relay;
 *   5. the workers: a writer slot each in the region, their modules, a
 *      queue sink handle each;
 *   6. the control socket; the queue's writer and relay threads (created
 *      here, on the main lcore, whose CPU set and blocked signals they
 *      inherit: never on a polling worker's CPU); then the worker lcores.
 * Stop, in reverse: the workers end their sessions (transfers in flight
 * still complete through the writer), then the relay and the writer stop
 * (the writer finishes what it was handed and makes the cursors durable),
 * then the workers' modules are torn down.
 * The main lcore then serves the control socket, signals (SIGTERM/SIGINT:
 * shutdown, SIGHUP: reload, SIGUSR1: counters to --stats-file) and the
 * drain/shutdown sequence. Exit status: 0 after a clean shutdown, 1 when
 * the start failed, 2 for a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "dp.h"
#include "floodgate/log.h"

#define EAL_ARGV_MAX 64
#define FINISH_EXTRA_NS (2ull * 1000000000ull)
/* The table the workers' engines hold while floodctld restores: every
 * session is refused before it reaches the engine, so the least size. */
#define RESTORE_PLACEHOLDER_ENTRIES 1024u
/* How often the wait for floodctld's restore looks at the region again
 * (the control socket is served meanwhile). */
#define RESTORE_POLL_MS 100
/* A private table's version-number side entries, with [history]
 * version-numbers. */
#define HISTORY_SIDE_ENTRIES 65536u

static volatile sig_atomic_t sig_stop, sig_usr1, sig_hup;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		sig_usr1 = 1;
	else if (sig == SIGHUP)
		sig_hup = 1;
	else
		sig_stop = 1;
}

/* The main thread's signals (startup.h's set) set flags the loops read. */
static void signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;

	fg_startup_signals(&set);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: floodgate [options]\n"
		"  -c, --config FILE        floodgate.conf (default: the embedded one)\n"
		"      --port DEV           the port instead of [dataplane] port\n"
		"      --ctl-socket PATH    control socket (default: dataplane.sock next to\n"
		"                           [stats] control-socket)\n"
		"      --stats-file PATH    counters here on SIGUSR1 and at exit\n"
		"      --history private|region  shadow mode: decide on a private history\n"
		"                           (the default) or on floodctld's, seeded by\n"
		"                           floodctl remember; the decisions are journaled\n"
		"      --shadow-file PATH   shadow mode: the comparison with the server's\n"
		"                           answers here every second and at exit (default\n"
		"                           shadow.status in the data directory)\n"
		"      --fault SPEC         TCP fault knob, percent: rx-drop=1,tx-drop=1,\n"
		"                           rx-dup=,tx-dup=,rx-reorder=,tx-reorder=,seed=N\n"
		"      --clock wall|capture passive mode: dates and timers from the wall clock\n"
		"                           or from the port's receive timestamps (pcap)\n"
		"      --exit-idle MS       passive mode: exit once no frame came for MS\n"
		"      --shutdown-grace S   seconds sessions get to end at a shutdown (10)\n"
		"      --sink queue|memory|null  where accepted articles go: the durable queue\n"
		"                           and the relay to [downstream] servers (default when\n"
		"                           the config has one), held in memory and completed\n"
		"                           (the default otherwise), or only counted (benchmarks)\n"
		"      --log-level L        err, warn, notice, info, debug (default notice)\n"
		"  -h, --help\n");
}

static int parse_opts(struct dp_opts *o, int argc, char **argv)
{
	enum { O_PORT = 256, O_CTL, O_STATS, O_FAULT, O_CLOCK, O_EXIT, O_GRACE, O_LOG, O_SINK,
	       O_SHADOW, O_HISTORY };
	static const struct option lo[] = {
		{ "config", 1, NULL, 'c' }, { "port", 1, NULL, O_PORT },
		{ "ctl-socket", 1, NULL, O_CTL }, { "stats-file", 1, NULL, O_STATS },
		{ "fault", 1, NULL, O_FAULT }, { "clock", 1, NULL, O_CLOCK },
		{ "exit-idle", 1, NULL, O_EXIT }, { "shutdown-grace", 1, NULL, O_GRACE },
		{ "log-level", 1, NULL, O_LOG }, { "sink", 1, NULL, O_SINK },
		{ "shadow-file", 1, NULL, O_SHADOW }, { "history", 1, NULL, O_HISTORY },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->log_level = FG_LOG_NOTICE;
	o->shutdown_grace_ms = 10000;
	while ((c = getopt_long(argc, argv, "c:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case O_PORT: o->port = optarg; break;
		case O_CTL: o->ctl_socket = optarg; break;
		case O_STATS: o->stats_file = optarg; break;
		case O_SHADOW: o->shadow_file = optarg; break;
		case O_HISTORY:
			if (strcmp(optarg, "private") && strcmp(optarg, "region"))
				return -EINVAL;
			o->region_history = strcmp(optarg, "region") == 0;
			break;
		case O_FAULT: o->fault = optarg; break;
		case O_CLOCK:
			if (strcmp(optarg, "capture") && strcmp(optarg, "wall"))
				return -EINVAL;
			o->capture_clock = strcmp(optarg, "capture") == 0;
			break;
		case O_EXIT: o->exit_idle_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case O_GRACE: o->shutdown_grace_ms = (unsigned)strtoul(optarg, NULL, 10) * 1000u; break;
		case O_LOG:
			if (fg_startup_parse_log_level(optarg, &o->log_level) != 0)
				return -EINVAL;
			break;
		case O_SINK:
			if (fg_startup_parse_sink(optarg, &o->sink) != 0)
				return -EINVAL;
			o->sink_given = true;
			break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

/* What floodgate refuses in a file that loaded (config_programs.c: the
 * same messages `floodctl config --check --for floodgate` prints). */
static bool refused_by_file(const struct fg_config *cfg, const char *port)
{
	char why[8][FG_CONFIG_REFUSAL_MAX];
	struct fg_config *copy = NULL;
	unsigned n;

	/* --port stands for [dataplane] port: judged in its place */
	if (port) {
		if (!(copy = malloc(sizeof(*copy))))
			return true;
		*copy = *cfg;
		snprintf(copy->port, sizeof(copy->port), "%s", port);
	}
	n = fg_config_refusals(copy ? copy : cfg, FG_PROGRAM_FLOODGATE, why, FG_ARRAY_SIZE(why));
	free(copy);
	for (unsigned i = 0; i < FG_MIN(n, (unsigned)FG_ARRAY_SIZE(why)); i++)
		FG_LOG_ERR(DP, "%s", why[i]);
	return n > 0;
}

static int load_config(struct dp *dp)
{
	dp->cfg = fg_startup_config_load(dp->o.config, "floodgate");
	if (!dp->cfg)
		return -EINVAL;
	if (dp->o.config && !realpath(dp->o.config, dp->config_path))
		snprintf(dp->config_path, sizeof(dp->config_path), "%s", dp->o.config);
	dp->passive = dp->cfg->dp_mode != FG_DATAPLANE_ACTIVE;
	dp->shadow = dp->cfg->dp_mode == FG_DATAPLANE_SHADOW;
	if (dp->o.region_history && !dp->shadow) {
		/* a replay must not make the real filter remember anything */
		FG_LOG_ERR(DP, "--history region is for shadow mode only");
		return -EINVAL;
	}
	if (dp->o.shadow_file)
		snprintf(dp->shadow_path, sizeof(dp->shadow_path), "%s", dp->o.shadow_file);
	else
		snprintf(dp->shadow_path, sizeof(dp->shadow_path), "%s/%s", dp->cfg->data_dir,
			 FG_SHADOW_STATUS_FILE);
	if (refused_by_file(dp->cfg, dp->o.port))
		return -EINVAL;
	if (!dp->o.sink_given)
		dp->o.sink = fg_startup_default_sink(dp->cfg, !dp->passive);
	if (dp->passive && dp->o.sink == FG_WIRING_SINK_QUEUE) {
		/* what passive mode decides must never reach a downstream */
		FG_LOG_ERR(DP, "--sink queue: passive mode relays nothing");
		return -EINVAL;
	}
	dp->n_workers = dp->cfg->workers;
	if (dp->o.ctl_socket) {
		snprintf(dp->ctl_path, sizeof(dp->ctl_path), "%s", dp->o.ctl_socket);
	} else {
		char dir[FG_CONFIG_PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", dp->cfg->control_socket);
		snprintf(dp->ctl_path, sizeof(dp->ctl_path), "%s/dataplane.sock", dirname(dir));
	}
	return 0;
}

/* ------------------------------------------------------------ history */

static int history_private(struct dp *dp, uint64_t capacity)
{
	struct fg_history_params hp;
	int rc;

	fg_startup_table_params(&hp, dp->cfg, capacity,
				dp->cfg->version_numbers ? HISTORY_SIDE_ENTRIES : 0);
	rc = fg_startup_table_open(&dp->table, &hp);
	dp->history = dp->table.h;
	return rc;
}

static int history_open(struct dp *dp)
{
	char why[512];

	if (dp->passive && !dp->o.region_history) {
		int rc = history_private(dp, dp->cfg->history_capacity);

		if (rc != 0)
			FG_LOG_ERR(DP, "passive mode: private history of %llu entries: %s",
				   (unsigned long long)dp->cfg->history_capacity, strerror(-rc));
		return rc;
	}
	if (fg_region_restoring(dp->cfg->shm_path)) {
		/* the workers refuse every session until the restore is over:
		 * their engines need a table, never consulted */
		dp->restoring = true;
		FG_LOG_NOTICE(DP, "floodctld is restoring the history (%s): new sessions are "
			      "greeted with 400 until it is ready", dp->cfg->shm_path);
		return history_private(dp, RESTORE_PLACEHOLDER_ENTRIES);
	}
	why[0] = '\0';
	dp->region = fg_region_attach(dp->cfg->shm_path, why, sizeof(why));
	if (!dp->region) {
		FG_LOG_ERR(DP, "cannot attach to floodctld's region %s: %s. Start floodctld with "
			   "the same configuration first; the dataplane keeps no history of its own.",
			   dp->cfg->shm_path, why[0] ? why : "unknown reason");
		return -ENOENT;
	}
	dp->history = fg_region_history(dp->region);
	return 0;
}

static void history_close(struct dp *dp)
{
	if (dp->region)
		fg_region_close(dp->region);
	dp->region = NULL;
	fg_startup_table_close(&dp->table);
	dp->history = NULL;
}

/* ------------------------------------------------------------ outbound */

/* The queue and the relay (before the workers, which take sink handles). */
/* A worker's own connection (the port path) must get its answers on that
 * worker's RX queue: one queue, or a port that hashes with a RETA, which
 * rss.h reproduces to choose the source port (dp_rss_port_ok). A port
 * spreading queues another way (net_af_packet's fanout) cannot promise it. */
static bool answers_come_home(const struct dp *dp)
{
	struct rte_eth_dev_info di;

	if (dp->n_rxq == 1)
		return true;
	return dp->rss && rte_eth_dev_info_get(dp->port_id, &di) == 0 && di.reta_size > 0 &&
	       di.reta_size <= DP_RSS_RETA_MAX;
}

static int outbound_open(struct dp *dp)
{
	struct fg_outbound_params op = { 0 };
	int err = 0;

	if (dp->o.sink != FG_WIRING_SINK_QUEUE || dp->restoring)
		return 0;
	if (!dp->cfg->n_downstream)
		FG_LOG_WARN(DP, "--sink queue without a [downstream]: articles are queued, "
			    "and kept until a downstream is configured");
	dp->ob_cfg = dp->cfg;
	op.cfg = dp->ob_cfg;
	dp->port_ack = fg_portack_any(dp->cfg) && answers_come_home(dp);
	if (fg_portack_any(dp->cfg) && !dp->port_ack)
		FG_LOG_WARN(DP, "[downstream] path port: port %u spreads %u RX queues without a "
			    "redirection table floodgate can reproduce, so a worker's downstream "
			    "connection could get its answers on another worker's queue: the "
			    "relay's kernel sockets feed those downstreams", dp->port_id, dp->n_rxq);
	op.port_path = dp->port_ack;
	/* floodctld built the history: it begins the warm-up period */
	op.cold_start = false;
	op.region = dp->region;
	op.slot_name = "floodgate/outbound";
	op.max_gate = dp->n_workers;
	dp->ob = fg_outbound_open(&op, &err);
	return dp->ob ? 0 : err;
}

/* [cluster] (docs/scale.md, "Several boxes"): the cluster client, before
 * the workers, which each take a link; its counters get a writer slot. */
static int claimer_open(struct dp *dp)
{
	struct fg_startup_cluster_params cp = {
		.cfg = dp->cfg, .max_links = dp->n_workers, .region = dp->region,
		.slot_name = "floodgate/cluster", .region_what = "the region", .log_comp = DP,
	};

	/* passive and shadow modes decide for no box of the cluster */
	if (dp->restoring || dp->passive)
		return 0;
	return fg_startup_cluster_open(&dp->cluster, &cp);
}

/* The writer and relay threads and the cluster thread, from this (the
 * main lcore's) thread: they inherit its CPU set, and — blocked here while
 * they are created — none of the signals the main loop handles interrupts
 * their system calls. */
static int outbound_start(struct dp *dp)
{
	sigset_t set, old;
	int rc;

	if (!dp->ob && !dp->cluster.claimer)
		return 0;
	fg_startup_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	rc = dp->ob ? fg_outbound_start(dp->ob) : 0;
	if (rc != 0)
		FG_LOG_ERR(DP, "the queue's writer or relay thread: %s", strerror(-rc));
	if (rc == 0 && dp->cluster.claimer && (rc = fg_claimer_start(dp->cluster.claimer)) != 0)
		FG_LOG_ERR(DP, "the cluster thread: %s", strerror(-rc));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* ------------------------------------------------------------ EAL, workers */

static int eal_start(struct dp *dp)
{
	static char buf[8192];
	char *argv[EAL_ARGV_MAX];
	int argc = dp_eal_args(dp->cfg, dp->o.port ? dp->o.port : dp->cfg->port, buf,
			       sizeof(buf), argv, EAL_ARGV_MAX);

	if (argc < 0) {
		FG_LOG_ERR(DP, "[dataplane] eal-args: %s", strerror(-argc));
		return argc;
	}
	if (rte_eal_init(argc, argv) < 0) {
		FG_LOG_ERR(DP, "EAL start failed: %s (arguments from [dataplane] eal-args and port)",
			   rte_strerror(rte_errno));
		return -rte_errno;
	}
	dp->eal_up = true;
	dp->tsc_hz = rte_get_tsc_hz();	/* the workers' busy and idle cycles */
	if (rte_lcore_count() < dp->n_workers + 1) {
		FG_LOG_ERR(DP, "%u workers need %u lcores; the EAL has %u (eal-args -l/--lcores)",
			   dp->n_workers, dp->n_workers + 1, rte_lcore_count());
		return -EINVAL;
	}
	return 0;
}

static int workers_setup(struct dp *dp)
{
	unsigned i = 0, lcore;

	dp->w = calloc(dp->n_workers, sizeof(*dp->w));
	if (!dp->w)
		return -ENOMEM;
	/* the peers' limits are the box's: one table for every worker, kept
	 * across a restore wait (its sessions have all closed by then) */
	if (!dp->lim)
		dp->lim = fg_peerlim_create(dp->n_workers);
	if (!dp->lim || fg_peerlim_add(dp->lim, dp->cfg) != 0)
		return -ENOMEM;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == dp->n_workers)
			break;
		dp->w[i].dp = dp;
		dp->w[i].index = i;
		dp->w[i].lcore = lcore;
		dp->w[i].epfd = -1;
		dp->w[i].wakefd = -1;
		/* a drain asked during a restore wait holds for the new workers */
		atomic_store(&dp->w[i].mbox.draining, dp->draining);
		atomic_store(&dp->w[i].mbox.restoring, dp->restoring);
		if (dp_worker_setup(&dp->w[i]) != 0)
			return -EINVAL;
		i++;
	}
	return 0;
}

/* What is built on the history (steps 4 and 5): the queue, the cluster
 * client, the workers; once at start, once more after a restore wait. */
static int history_users_open(struct dp *dp)
{
	int rc = outbound_open(dp);

	if (rc == 0)
		rc = claimer_open(dp);
	if (rc == 0)
		rc = workers_setup(dp);
	return rc;
}

static void workers_launch(struct dp *dp)
{
	for (unsigned i = 0; i < dp->n_workers; i++)
		rte_eal_remote_launch(dp_worker_main, &dp->w[i], dp->w[i].lcore);
}

/* Worker 0 runs DAD for our IPv6 addresses (ipv6.c); we are ready only
 * once it passed, and refuse to run when another node holds one of them
 * (the net module logged which, and whose MAC). */
static int ipv6_dad_wait(struct dp *dp)
{
	const struct timespec step = { 0, 10 * 1000000L };
	int rc;

	if (dp->passive)
		return 0;
	while ((rc = fg_net_ipv6_dad(dp->w[0].net)) == -EAGAIN && !sig_stop)
		nanosleep(&step, NULL);
	if (rc == -EADDRINUSE)
		FG_LOG_ERR(DP, "an IPv6 address of [dataplane] address is in use on the link; "
			   "not starting");
	return rc == -EAGAIN ? -EINTR : rc;
}

static void workers_teardown(struct dp *dp)
{
	for (unsigned i = 0; dp->w && i < dp->n_workers; i++)
		if (dp->w[i].dp) {
			dp_worker_teardown(&dp->w[i]);	/* its sink and askers: none wakes it now */
			if (dp->w[i].wakefd >= 0)
				close(dp->w[i].wakefd);
		}
	free(dp->w);
	dp->w = NULL;
}

/* ------------------------------------------------------------ the main loop */

void dp_request_drain(struct dp *dp, bool on)
{
	dp->draining = on;
	for (unsigned i = 0; i < dp->n_workers; i++)
		atomic_store(&dp->w[i].mbox.draining, on);
	FG_LOG_NOTICE(DP, on ? "draining: new sessions are refused" : "drain ended");
}

void dp_request_shutdown(struct dp *dp, unsigned grace_ms)
{
	if (dp->shutdown_asked)
		return;
	dp->shutdown_asked = true;
	dp->shutdown_grace_ms = grace_ms;
	dp_request_drain(dp, true);
}

static bool all(struct dp *dp, bool finished)
{
	for (unsigned i = 0; i < dp->n_workers; i++)
		if (atomic_load(&dp->w[i].mbox.finished) != finished)
			return false;
	return true;
}

static void handle_signals(struct dp *dp)
{
	if (sig_stop) {
		sig_stop = 0;
		dp_request_shutdown(dp, dp->o.shutdown_grace_ms);
	}
	if (sig_usr1) {
		sig_usr1 = 0;
		if (dp->o.stats_file)
			dp_write_stats_file(dp, dp->o.stats_file);
	}
	if (sig_hup) {
		sig_hup = 0;
		if (dp_reload(dp, NULL, stderr) != 0)
			FG_LOG_WARN(DP, "SIGHUP reload failed; the running configuration is kept");
	}
}

/*
 * While floodctld restores the history (its region is BUILDING, its owner
 * alive), floodgate does not exit to be restarted by its unit: it starts
 * its port and workers as usual, with a placeholder table and
 * `restoring` set, so ARP, ND and TCP are answered and every new NNTP
 * session is greeted "400 ... being restored ..." and closed before a
 * command is read (tcpsess.c). Once the region is READY:
 *  1. the workers stop (each refused connection is closed already: no
 *     session or transfer can be open);
 *  2. the refusals they counted are kept, the workers are torn down and
 *     the placeholder table goes;
 *  3. the region is attached and the rest of the start runs — the queue,
 *     the cluster client, the workers with their writer slots, the NIC
 *     block — as it would have without the wait; the port keeps running.
 * A worker is built once per history: rebuilding it is lighter than
 * swapping the table, slot, link and sink under a running engine, and
 * nothing of a refused connection is worth keeping. Counted
 * (dp_restore_attached) and logged once per change.
 */
static int restore_wait(struct dp *dp)
{
	/* a SIGTERM becomes a shutdown request in handle_signals() */
	while (!dp->shutdown_asked && fg_region_restoring(dp->cfg->shm_path)) {
		dp_ctl_serve(dp, RESTORE_POLL_MS);
		handle_signals(dp);
	}
	return dp->shutdown_asked ? -EINTR : 0;
}

static uint64_t workers_stop(struct dp *dp)
{
	uint64_t refused = 0;

	for (unsigned i = 0; i < dp->n_workers; i++)
		atomic_store_explicit(&dp->w[i].mbox.stop, true, memory_order_release);
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < dp->n_workers; i++)
		refused += dp->w[i].stats->s.ctr[FG_CTR_DP_SESSIONS_REFUSED_RESTORING];
	dp->nic.block = NULL;		/* worker 0's slot (none yet) */
	workers_teardown(dp);
	return refused;
}

static int restore_attach(struct dp *dp)
{
	uint64_t refused = workers_stop(dp);
	int rc;

	history_close(dp);
	dp->restoring = false;
	rc = history_open(dp);
	if (rc == 0)
		rc = history_users_open(dp);
	if (rc != 0)
		return rc;
	dp_nic_setup(dp);
	fg_stats_add(&dp->w[0].stats->s, FG_CTR_DP_SESSIONS_REFUSED_RESTORING, refused);
	fg_stats_inc(&dp->w[0].stats->s, FG_CTR_DP_RESTORE_ATTACHED);
	FG_LOG_NOTICE(DP, "the history is restored: attached to %s; %llu sessions were greeted "
		      "with 400 meanwhile", dp->cfg->shm_path, (unsigned long long)refused);
	return outbound_start(dp);
}

/* Serve until a shutdown is asked (or a passive replay is over). */
static void main_loop(struct dp *dp)
{
	fg_time_t last_tick = 0;

	while (!dp->shutdown_asked) {
		fg_time_t now;

		dp_ctl_serve(dp, 50);
		handle_signals(dp);
		now = time(NULL);
		if (now != last_tick) {
			dp_levers_tick(dp, now);
			if (dp->shadow)
				dp_write_shadow_file(dp, dp->shadow_path);
			last_tick = now;
		}
		fg_outbound_publish(dp->ob, fg_mono_ns());
		dp_nic_publish(dp, false);
		fg_startup_cluster_publish(&dp->cluster, dp->cfg->data_dir, fg_mono_ns(), DP);
		if (dp->passive && dp->o.exit_idle_ms && all(dp, true))
			break;
	}
}

/* Drain for the grace period, then end what is left, then stop. */
static void shutdown_sequence(struct dp *dp)
{
	uint64_t t0 = fg_mono_ns(), grace = (uint64_t)dp->shutdown_grace_ms * 1000000ull;

	FG_LOG_NOTICE(DP, "shutting down: %u ms for open sessions to end", dp->shutdown_grace_ms);
	while (!all(dp, true) && fg_mono_ns() - t0 < grace) {
		dp_ctl_serve(dp, 50);
		handle_signals(dp);
		fg_outbound_publish(dp->ob, fg_mono_ns());
		dp_nic_publish(dp, false);
	}
	for (unsigned i = 0; i < dp->n_workers; i++)
		atomic_store(&dp->w[i].mbox.shutdown, true);
	t0 = fg_mono_ns();
	while (!all(dp, true) && fg_mono_ns() - t0 < 5000000000ull + FINISH_EXTRA_NS) {
		dp_ctl_serve(dp, 50);
		dp_nic_publish(dp, false);
	}
	if (!all(dp, true))
		FG_LOG_WARN(DP, "a worker still had work at the end of the shutdown");
	for (unsigned i = 0; i < dp->n_workers; i++)
		atomic_store_explicit(&dp->w[i].mbox.stop, true, memory_order_release);
	rte_eal_mp_wait_lcore();
	dp_nic_publish(dp, true);
	/* after the workers: their last transfers needed the writer */
	fg_outbound_stop(dp->ob);
}

void dp_status(struct dp *dp, FILE *f, bool json)
{
	unsigned sessions = 0, conns = 0;

	for (unsigned i = 0; i < dp->n_workers; i++) {
		sessions += fg_nntp_engine_sessions(dp->w[i].e);
		conns += dp->w[i].ts ? fg_tcpsess_in_use(dp->w[i].ts) : 0;
	}
	if (json) {
		fprintf(f, "{\"mode\":\"%s\",\"pid\":%d,\"uptime_s\":%.1f,\"workers\":%u,"
			   "\"rx_queues\":%u,\"sessions\":%u,\"connections\":%u,\"draining\":%s,"
			   "\"shutting_down\":%s,\"restoring\":%s,\"config\":\"%s\",\"reloads\":%llu",
			dp->shadow ? "shadow" : dp->passive ? "passive" : "active", (int)getpid(),
			(double)(fg_mono_ns() - dp->started_ns) / 1e9, dp->n_workers, dp->n_rxq,
			sessions, conns, dp->draining ? "true" : "false",
			dp->shutdown_asked ? "true" : "false", dp->restoring ? "true" : "false",
			dp->config_path[0] ? dp->config_path : "<default>",
			(unsigned long long)dp->reloads);
		dp_levers_json(dp, f, false);
		fputs("}\n", f);
		return;
	}
	fprintf(f, "floodgate %s, pid %d, up %.1f s\n", dp->shadow ? "shadow" : dp->passive ? "passive" : "active",
		(int)getpid(), (double)(fg_mono_ns() - dp->started_ns) / 1e9);
	fprintf(f, "config     %s (%llu reloads)\n",
		dp->config_path[0] ? dp->config_path : "<default>", (unsigned long long)dp->reloads);
	fprintf(f, "port       %u, %u RX queues, %u workers\n", dp->port_id, dp->n_rxq,
		dp->n_workers);
	fprintf(f, "sessions   %u on %u connections%s%s%s\n", sessions, conns,
		dp->draining ? ", draining" : "", dp->shutdown_asked ? ", shutting down" : "",
		dp->restoring ? ", 400 to every new one: floodctld is restoring the history" : "");
	dp_nic_text(dp, f);
	dp_levers_text(dp, f);
}

static int start(struct dp *dp)
{
	int rc = load_config(dp);

	if (rc == 0)
		rc = dp_levers_load(dp);
	if (rc == 0)
		rc = history_open(dp);
	if (rc == 0)
		rc = eal_start(dp);
	if (rc == 0)
		rc = dp_port_setup(dp);
	if (rc == 0)
		rc = history_users_open(dp);
	if (rc == 0)
		rc = dp_port_start(dp);
	if (rc == 0)
		dp_nic_setup(dp);
	if (rc == 0)
		rc = dp_ctl_listen(dp);
	if (rc == 0)
		rc = outbound_start(dp);
	return rc;
}

/* The reverse of start(), from wherever it stopped (the workers have
 * stopped): the counters and shadow report, the control socket, the
 * outbound side, the cluster client (the workers' links go with it), the
 * workers, the port, the history, the EAL, the configurations. */
static void stop(struct dp *dp)
{
	if (dp->o.stats_file && dp->w)
		dp_write_stats_file(dp, dp->o.stats_file);
	if (dp->shadow && dp->w)
		dp_write_shadow_file(dp, dp->shadow_path);
	dp_ctl_close(dp);
	fg_outbound_stop(dp->ob);	/* a failed start: the workers never ran */
	dp->nic.block = NULL;		/* worker 0's slot goes with its teardown */
	fg_startup_cluster_close(&dp->cluster);
	workers_teardown(dp);
	fg_peerlim_destroy(dp->lim);
	fg_outbound_close(dp->ob);
	if (dp->pool)
		dp_port_stop(dp);
	history_close(dp);
	if (dp->eal_up)
		dp_eal_stop();
	if (dp->ob_cfg != dp->cfg)
		fg_config_free(dp->ob_cfg);
	fg_config_free(dp->cfg);
	FG_LOG_NOTICE(DP, "stopped");
}

int main(int argc, char **argv)
{
	static struct dp dp = { .ctl_fd = -1, .ts_offset = -1, .exc_port = -1, .sum_off = -1 };
	int rc = parse_opts(&dp.o, argc, argv), status = 1;

	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc > 0 ? 0 : 2;
	}
	fg_log_set_level((enum fg_log_level)dp.o.log_level);
	signals_install();
	dp.started_ns = fg_mono_ns();
	dp.started = time(NULL);
	/* I/O signals a PMD asks for (net_tap raises one per received frame)
	 * go to the worker lcores, which poll anyway: this thread and the
	 * threads the EAL starts from it block them (the workers unblock) */
	dp_io_signals(true);
	if (start(&dp) != 0)
		goto out;
	workers_launch(&dp);
	if (ipv6_dad_wait(&dp) != 0)
		goto out_shutdown;
	if (dp.restoring) {
		printf("restoring\n");
		fflush(stdout);
		if (restore_wait(&dp) != 0)
			goto out_stop;	/* a shutdown was asked: a clean stop */
		if (restore_attach(&dp) != 0)
			goto out;
		workers_launch(&dp);
		if (ipv6_dad_wait(&dp) != 0)
			goto out_shutdown;
	}
	FG_LOG_NOTICE(DP, "ready: %s mode, %u workers, control socket %s",
		      dp.shadow ? "shadow" : dp.passive ? "passive" : "active", dp.n_workers, dp.ctl_path);
	printf("ready\n");
	fflush(stdout);
	main_loop(&dp);
	if (!dp.shutdown_asked)
		dp_request_shutdown(&dp, 0);
out_stop:
	shutdown_sequence(&dp);
	status = 0;
	goto out;
out_shutdown:
	dp_request_shutdown(&dp, 0);
	shutdown_sequence(&dp);
out:
	stop(&dp);
	return status;
}
