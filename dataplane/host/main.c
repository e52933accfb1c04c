/* SPDX-License-Identifier: MIT */
/*
 * main.c — floodgate-host: the NNTP session engine on kernel sockets.
 *
 * For sites without a DPDK NIC, and for the integration tests of the relay
 * and the control plane before the dataplane exists. Same configuration,
 * same engine, same counters as the dataplane; the history table lives in
 * memory this process maps itself (private, or a file given by --shm, so
 * that a restart keeps it), until floodctld owns it. Accepted articles go
 * to the durable queue and the relay (outbound.h) when the config has a
 * [downstream] or --sink queue says so; else to the in-memory sink.
 *
 * Start-up, in this order (start_steps; the steps both programs share
 * are startup.h's), each step refusing to go on with a message:
 *   1. the configuration (a file, or the embedded default), and the sink
 *      --sink left open: the queue when the config has a [downstream];
 *   2. the history: floodctld's region (--floodctld, waiting while it
 *      restores: restoring.c), the --shm file (adopted when it holds a
 *      table of this size), or private memory;
 *   3. the signals below, blocked: only the main thread takes them;
 *   4. with the queue sink: the outbound side (the queue, the relay);
 *   5. [cluster]: the cluster client and its writer slot;
 *   6. the peers' limits, the threads' sinks, slots, engines, listeners;
 *   7. the levers journal and the control socket (ctl.c);
 *   8. the outbound and cluster threads, the workers, the control thread.
 * Stop (stop()): the reverse, from wherever the start stopped. Exit
 * status: 0 after SIGTERM/SIGINT, 1 when the start failed, 2 for a usage
 * error.
 *
 * Counters: SIGUSR1 writes them (and at exit) as "name value" lines, to
 * --stats-file (replaced atomically) or to stdout; docs/protocol.md lists
 * the names. SIGHUP reloads the configuration file (ctl.c, as `floodctl
 * reload` does through floodctld and the control socket). SIGTERM/SIGINT:
 * every session is answered 400 and closed, transfers in flight finish,
 * entries are released, the counters written.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/claimer.h"
#include "floodgate/log.h"
#include "floodgate/startup.h"
#include "host.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: floodgate-host [options]\n"
		"  -c, --config FILE       floodgate.conf (default: the embedded one)\n"
		"  -l, --listen ADDR:PORT  listen here instead of the config's [site] listen\n"
		"                          (repeatable; [v6addr]:port for IPv6)\n"
		"  -t, --threads N         worker threads, SO_REUSEPORT listeners (default 1)\n"
		"      --shm PATH          keep the history table in this file (mmap), reused\n"
		"                          across restarts; default: private memory\n"
		"      --history-capacity N  entries (default: the config's [history] capacity)\n"
		"      --floodctld         use floodctld's region (config [history] shm-path): its\n"
		"                          history, a writer slot per thread for the journal, the\n"
		"                          verdict log and the counters (docs/operations.md)\n"
		"      --sink queue|memory|null  where accepted articles go (default: queue\n"
		"                          when the config has a [downstream], else memory)\n"
		"      --sink-delay-ms N   memory sink: completion delay\n"
		"      --sink-fail-every N memory sink: fail every N-th commit\n"
		"      --sink-fail-match S memory sink: fail Message-IDs containing S\n"
		"      --sink-hold         memory sink: hold received buffers, do not copy\n"
		"      --max-sessions N    per thread (default 4096)\n"
		"      --stats-file FILE   counters go here (SIGUSR1, exit) instead of stdout\n"
		"      --ctl-socket PATH   serve the levers and reload here (default with\n"
		"                          --floodctld: dataplane.sock beside floodctld's socket)\n"
		"      --log-level L       err, warn, notice, info, debug (default notice)\n"
		"  -h, --help\n");
}

enum { O_SHM = 256, O_HCAP, O_SINK, O_DELAY, O_FAIL_EVERY, O_FAIL_MATCH, O_HOLD,
       O_MAX_SESS, O_STATS, O_LOG, O_FLOODCTLD, O_CTL };

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "listen", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "shm", required_argument, NULL, O_SHM },
	{ "history-capacity", required_argument, NULL, O_HCAP },
	{ "floodctld", no_argument, NULL, O_FLOODCTLD },
	{ "sink", required_argument, NULL, O_SINK },
	{ "sink-delay-ms", required_argument, NULL, O_DELAY },
	{ "sink-fail-every", required_argument, NULL, O_FAIL_EVERY },
	{ "sink-fail-match", required_argument, NULL, O_FAIL_MATCH },
	{ "sink-hold", no_argument, NULL, O_HOLD },
	{ "max-sessions", required_argument, NULL, O_MAX_SESS },
	{ "stats-file", required_argument, NULL, O_STATS },
	{ "ctl-socket", required_argument, NULL, O_CTL },
	{ "log-level", required_argument, NULL, O_LOG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_uint(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' ? -EINVAL : 0;
}

/* One option; 0, 1 (help printed) or -EINVAL. */
static int parse_one(struct host_opts *o, int opt, const char *arg)
{
	uint64_t v = 0;

	switch (opt) {
	case 'c':
		o->config = arg;
		return 0;
	case 'l':
		if (o->n_listen == FG_CONFIG_MAX_LISTEN ||
		    fg_parse_endpoint(arg, 119, &o->listen[o->n_listen]) != 0)
			return -EINVAL;
		o->n_listen++;
		return 0;
	case 't':
		if (parse_uint(arg, &v) || v < 1 || v > 64)
			return -EINVAL;
		o->threads = (unsigned)v;
		return 0;
	case O_SHM:
		o->shm = arg;
		return 0;
	case O_HCAP:
		return parse_uint(arg, &o->history_capacity);
	case O_FLOODCTLD:
		o->floodctld = true;
		return 0;
	case O_SINK:
		if (fg_startup_parse_sink(arg, &o->sink) != 0)
			return -EINVAL;
		o->sink_given = true;
		return 0;
	case O_DELAY:
		if (parse_uint(arg, &v))
			return -EINVAL;
		o->mem.delay_ns = v * 1000000ull;
		return 0;
	case O_FAIL_EVERY:
		if (parse_uint(arg, &v) || v > UINT32_MAX)
			return -EINVAL;
		o->mem.fail_every = (unsigned)v;
		return 0;
	case O_FAIL_MATCH:
		o->mem.fail_substr = arg;
		return 0;
	case O_HOLD:
		o->mem.hold = true;
		return 0;
	case O_MAX_SESS:
		if (parse_uint(arg, &v) || v < 1 || v > 1000000)
			return -EINVAL;
		o->max_sessions = (unsigned)v;
		return 0;
	case O_STATS:
		o->stats_file = arg;
		return 0;
	case O_CTL:
		o->ctl_socket = arg;
		return 0;
	case O_LOG:
		return fg_startup_parse_log_level(arg, &o->log_level);
	case 'h':
		usage(stdout);
		return 1;
	default:
		return -EINVAL;
	}
}

static int parse_opts(struct host_opts *o, int argc, char **argv)
{
	int opt, rc;

	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->log_level = FG_LOG_NOTICE;
	o->sink = FG_WIRING_SINK_MEMORY;	/* the config step decides, unless --sink */
	o->mem.store_limit = 256u << 20;
	o->mem.max_done = 65536;
	while ((opt = getopt_long(argc, argv, "c:l:t:h", long_opts, NULL)) != -1) {
		rc = parse_one(o, opt, optarg);
		if (rc == 1)
			return 1;
		if (rc < 0) {
			if (opt != '?')
				fprintf(stderr, "floodgate-host: bad value for option: %s\n",
					optarg ? optarg : "");
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "floodgate-host: unexpected argument %s\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ history */

/* The table's version-number side entries. */
#define HISTORY_SIDE_ENTRIES 65536u

struct region {
	struct fg_startup_table table;	/* private memory, or the --shm file's mapping */
	bool fresh;			/* built empty here (not adopted): a cold start */
	struct fg_history *h;
	struct fg_region *ctl;		/* --floodctld: floodctld's region */
};

/* --floodctld: floodctld's region, after its restore if it is restoring. */
static int history_floodctld(struct region *r, const struct host_opts *o,
			     const struct fg_config *cfg)
{
	char msg[512];

	r->ctl = fg_region_attach(cfg->shm_path, msg, sizeof(msg));
	if (!r->ctl)
		r->ctl = host_wait_restore(o, cfg);
	if (!r->ctl) {
		FG_LOG_ERR(HOST_COMP, "cannot use floodctld's region: %s", msg);
		return -ENOENT;
	}
	FG_LOG_NOTICE(HOST_COMP, "attached to floodctld's region %s", fg_region_path(r->ctl));
	r->h = fg_region_history(r->ctl);
	return 0;
}

/* A table --shm's file held: the previous host's sessions are gone, the
 * queue decides what they were accepting (history.h, "a writer that
 * died"), the rest of their entries go. NULL: not adopted, logged. */
static struct fg_history *history_adopt(struct region *r, const struct host_opts *o,
					const struct fg_config *cfg)
{
	enum fg_history_error why;
	struct fg_history *h = fg_history_attach(r->table.mem, r->table.len, &why);
	int64_t settled;

	if (!h) {
		FG_LOG_WARN(HOST_COMP, "history %s not adopted (%s): starting empty", o->shm,
			    fg_history_error_str(why));
		return NULL;
	}
	settled = fg_queue_settle(cfg->data_dir, h, FG_HISTORY_OWNER_ANY, INT64_MIN, time(NULL),
				  NULL);
	if (settled < 0)
		FG_LOG_ERR(HOST_COMP, "the queue in %s could not settle the previous "
			   "run's transfers (%s): dropped unsettled", cfg->data_dir,
			   strerror((int)-settled));
	FG_LOG_NOTICE(HOST_COMP, "history %s adopted; %lld transfers in flight were in "
		      "the queue (accepted), %llu other in-flight entries dropped",
		      o->shm, (long long)FG_MAX(settled, 0),
		      (unsigned long long)fg_history_clear_transient(h));
	return h;
}

/* --shm: the table in a file, adopted when it holds one of this size. */
static int history_file(struct region *r, const struct host_opts *o, const struct fg_config *cfg,
			struct fg_history_params *hp)
{
	struct stat st;
	int fd, rc;

	r->table.len = fg_history_region_size(hp->capacity, hp->side_capacity);
	if (!r->table.len || fg_history_seed_random(hp->seed) != 0)
		return -EINVAL;
	fd = open(o->shm, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size != r->table.len && ftruncate(fd, (off_t)r->table.len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	r->table.mem = mmap(NULL, r->table.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->table.mem == MAP_FAILED) {
		r->table.mem = NULL;
		return -errno;
	}
	if ((size_t)st.st_size == r->table.len && (r->h = history_adopt(r, o, cfg)) != NULL) {
		r->table.h = r->h;
		return 0;
	}
	r->fresh = true;
	r->h = r->table.h = fg_history_create(r->table.mem, r->table.len, hp);
	return r->h ? 0 : -EINVAL;
}

static int history_open(struct region *r, const struct host_opts *o, const struct fg_config *cfg)
{
	struct fg_history_params hp;
	int rc;

	if (o->floodctld)
		return history_floodctld(r, o, cfg);
	fg_startup_table_params(&hp, cfg, o->history_capacity ? o->history_capacity :
				cfg->history_capacity, HISTORY_SIDE_ENTRIES);
	if (o->shm)
		return history_file(r, o, cfg, &hp);
	rc = fg_startup_table_open(&r->table, &hp);
	r->fresh = true;
	r->h = r->table.h;
	return rc;
}

static void history_close(struct region *r)
{
	if (r->ctl)
		fg_region_close(r->ctl);	/* it owns the table's handle */
	else
		fg_startup_table_close(&r->table);
	r->ctl = NULL;
	r->h = NULL;
}

/* The outbound side when the sink is the queue (NULL otherwise). */
static struct fg_outbound *outbound;
/* [cluster]: the cluster thread, or none (docs/scale.md, "Several boxes"),
 * and with --floodctld the slot its counters are published in */
static struct fg_startup_cluster cluster;
static struct fg_peerlim *limits;	/* the peers' limits, the box's (peerlim.h) */

/* ------------------------------------------------------------ counters */

static void write_block(FILE *f, const char *prefix, const struct fg_nntp_counters *c, bool all)
{
	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		if (all || c->s.ctr[i])
			fprintf(f, "%s%s %llu\n", prefix, fg_counter_name(i),
				(unsigned long long)c->s.ctr[i]);
	for (unsigned i = 1; i < FG_REASON__COUNT; i++)
		if (all || c->s.rejected[i])
			fprintf(f, "%srejected:%s %llu\n", prefix, fg_reason_name(i),
				(unsigned long long)c->s.rejected[i]);
	for (unsigned i = 0; i < FG_NNTP_VERB__COUNT; i++)
		if (all || c->n.verb[i])
			fprintf(f, "%snntp_command:%s %llu\n", prefix, fg_nntp_verb_name(i),
				(unsigned long long)c->n.verb[i]);
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		if (all || c->n.code[i])
			fprintf(f, "%snntp_response:%u %llu\n", prefix, fg_nntp_code_number(i),
				(unsigned long long)c->n.code[i]);
	for (unsigned k = 0; k < 2; k++) {
		const struct fg_hist *h = k ? &c->n.arrival_delay : &c->n.injection_delay;
		const char *name = k ? "arrival_delay" : "injection_delay";

		fprintf(f, "%s%s:count %llu\n%s%s:sum %lld\n%s%s:negative %llu\n", prefix, name,
			(unsigned long long)h->count, prefix, name, (long long)h->sum, prefix,
			name, (unsigned long long)h->negative);
		for (unsigned i = 0; i < FG_HIST_BUCKETS; i++)
			if (h->bucket[i])
				fprintf(f, "%s%s:lt_%lld %llu\n", prefix, name,
					(long long)fg_hist_bucket_le(i),
					(unsigned long long)h->bucket[i]);
	}
}

/* What the counters are read from. */
struct stats_view {
	struct host_worker *ws;
	unsigned nw;
	const struct fg_config *cfg;
	struct fg_history *h;
};

static void write_stats(FILE *f, const void *arg)
{
	const struct stats_view *v = arg;
	struct host_worker *ws = v->ws;
	unsigned nw = v->nw;
	const struct fg_config *cfg = v->cfg;
	struct fg_nntp_counters sum;
	struct fg_history_stats hs;
	unsigned sessions = 0, xfers = 0, suspect = 0;

	memset(&sum, 0, sizeof(sum));
	/* the queue writer's, the relay's and the cluster thread count in
	 * blocks of their own */
	fg_outbound_counters(outbound, &sum);
	if (cluster.claimer)
		fg_claimer_counters(cluster.claimer, &sum.s);
	for (unsigned i = 0; i < nw; i++) {
		fg_nntp_counters_merge(&sum, ws[i].stats);
		if (ws[i].e) {
			sessions += fg_nntp_engine_sessions(ws[i].e);
			xfers += fg_nntp_engine_xfers(ws[i].e);
			suspect += fg_nntp_engine_clock_suspect(ws[i].e);
		}
	}
	write_block(f, "", &sum, true);
	for (unsigned p = 0; p <= cfg->n_peer; p++) {
		char prefix[FG_CONFIG_NAME_MAX + 8];

		memset(&sum, 0, sizeof(sum));
		for (unsigned i = 0; i < nw; i++)
			fg_nntp_counters_merge(&sum, &ws[i].peer_stats[p]);
		snprintf(prefix, sizeof(prefix), "peer:%s:", p < cfg->n_peer ? cfg->peer[p].name : "-");
		write_block(f, prefix, &sum, false);
	}
	fg_history_stats(v->h, &hs);
	fprintf(f, "history_entries %llu\nhistory_capacity %llu\n", (unsigned long long)hs.entries,
		(unsigned long long)hs.slots);
	for (unsigned i = FG_HISTORY_OFFERED; i < FG_HISTORY_STATE__COUNT; i++)
		fprintf(f, "history_state:%s %llu\n", fg_history_state_name(i),
			(unsigned long long)hs.by_state[i]);
	fprintf(f, "sessions_open %u\ntransfers_open %u\nclock_suspect %u\n", sessions, xfers,
		suspect);
	/* per thread, as floodgate's worker:N: lines: where the kernel's
	 * SO_REUSEPORT put the connections */
	for (unsigned i = 0; i < nw; i++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "worker:%u:", i);
		fprintf(f, "%ssessions %u\n", prefix, ws[i].e ? fg_nntp_engine_sessions(ws[i].e) : 0);
		write_block(f, prefix, ws[i].stats, false);
	}
	fg_outbound_write(outbound, f);
	if (cluster.claimer) {
		char buf[1024];

		fg_claimer_format(cluster.claimer, buf, sizeof(buf));
		fputs(buf, f);
	}
}

static void dump_stats(const struct host_opts *o, struct host_worker *ws, unsigned nw,
		       const struct fg_config *cfg, struct fg_history *h)
{
	const struct stats_view v = { .ws = ws, .nw = nw, .cfg = cfg, .h = h };

	if (!o->stats_file) {
		write_stats(stdout, &v);
		fflush(stdout);
		return;
	}
	fg_startup_write_file(o->stats_file, "stats file", HOST_COMP, write_stats, &v);
}

/* ------------------------------------------------------------ workers */

static void wake_worker(void *arg)
{
	host_worker_wake(arg);
}

/* The sink, with --floodctld the writer slot "floodgate-host-<i>", and the
 * engine (wiring.h); the queue's, the relay's and the cluster thread's
 * completions wake the thread. */
static int worker_wiring(struct host_worker *w, const struct host_opts *o, struct region *r)
{
	struct fg_wiring_params wp = { 0 };
	char name[FG_REGION_NAME_MAX], who[32];
	int err;

	snprintf(name, sizeof(name), "floodgate-host-%u", w->index);
	snprintf(who, sizeof(who), "worker %u", w->index);
	wp.sink = o->sink;	/* the queue: the outbound side is open */
	wp.mem = o->mem;
	wp.ob = outbound;
	wp.wake = wake_worker;
	wp.wake_arg = w;
	wp.region = r->ctl;
	wp.slot_name = name;
	wp.claimer = cluster.claimer;
	wp.log_comp = HOST_COMP;
	wp.log_who = who;
	wp.engine.cfg = w->cfg;
	wp.engine.history = r->h;
	wp.engine.stats = w->stats;
	wp.engine.peer_stats = w->peer_stats;
	wp.engine.max_sessions = o->max_sessions;
	wp.engine.token_base = w->index << 20;
	wp.engine.limits = limits;
	w->wire = fg_wiring_build(&wp, &err);
	if (!w->wire)
		return err;
	w->e = fg_wiring_engine(w->wire);
	w->link = fg_wiring_link(w->wire);
	return 0;
}

static int worker_setup(struct host_worker *w, unsigned i, const struct host_opts *o,
			const struct fg_config *cfg, struct region *r)
{
	int rc;

	w->index = i;
	w->o = o;
	w->cfg = cfg;
	w->h = r->h;
	w->ep = w->wake = -1;
	w->stats = calloc(1, sizeof(*w->stats));
	w->peer_stats = calloc(cfg->n_peer + 1, sizeof(*w->peer_stats));
	if (!w->stats || !w->peer_stats)
		return -ENOMEM;
	rc = worker_wiring(w, o, r);
	return rc ? rc : host_worker_init(w);
}

static void worker_teardown(struct host_worker *w)
{
	if (w->link) {
		w->next_publish = 0;
		host_worker_publish(w, 0);
	}
	host_worker_fini(w);
	fg_wiring_destroy(w->wire);
	free(w->stats);
	free(w->peer_stats);
}

/* SIGHUP: reload as the control socket's `reload` does; the report to
 * the log, a line each. */
static void reload_on_hup(struct host_ctl *ctl)
{
	char *text = NULL, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return;
	rc = host_reload(ctl, NULL, f);
	fclose(f);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fg_log(rc ? FG_LOG_ERR : FG_LOG_NOTICE, HOST_COMP, "SIGHUP reload: %s", l);
	free(text);
}

/* Wait for signals; SIGUSR1 writes the counters, SIGHUP reloads. Returns
 * on SIGTERM/SIGINT. */
static void signal_loop(const sigset_t *set, const struct host_opts *o, struct host_worker *ws,
			unsigned nw, struct host_ctl *ctl, struct fg_history *h)
{
	/* wake every 100 ms: the outbound counters go to floodctld from here */
	const struct timespec tick = { 0, 100000000 };

	for (;;) {
		int sig = sigtimedwait(set, NULL, &tick);
		fg_time_t now;
		uint64_t now_ns;

		host_clock(&now, &now_ns);
		fg_outbound_publish(outbound, now_ns);
		/* the cluster's counters and health for floodctld (data-dir is
		 * carried across reloads; the lock keeps the config alive) */
		if (cluster.claimer) {
			pthread_mutex_lock(&ctl->lock);
			fg_startup_cluster_publish(&cluster, ctl->cfg->data_dir, now_ns, HOST_COMP);
			pthread_mutex_unlock(&ctl->lock);
		}
		if (sig == SIGUSR1) {
			pthread_mutex_lock(&ctl->lock);
			dump_stats(o, ws, nw, ctl->cfg, h);
			pthread_mutex_unlock(&ctl->lock);
		} else if (sig == SIGHUP) {
			reload_on_hup(ctl);
		} else if (sig == SIGTERM || sig == SIGINT) {
			return;
		}
	}
}

/* ------------------------------------------------------------ start and stop */

/* The process, as the steps below build it. */
struct host {
	struct host_opts o;
	struct fg_config *cfg;
	struct region r;
	sigset_t signals;		/* the main thread's, blocked everywhere */
	struct host_worker *ws;
	pthread_t *tids;
	unsigned started;		/* threads running host_worker_run */
	bool counting;			/* the threads started: counters at the stop */
	struct host_ctl ctl;
};

/* 1. The configuration, and the sink --sink left open. */
static int config_step(struct host *h)
{
	h->cfg = fg_startup_config_load(h->o.config, "floodgate-host");
	if (!h->cfg)
		return -EINVAL;
	if (!h->o.sink_given)
		h->o.sink = fg_startup_default_sink(h->cfg, true);
	return 0;
}

/* 2. The history (logged here: history_open says what it could not use). */
static int history_step(struct host *h)
{
	int rc = history_open(&h->r, &h->o, h->cfg);

	if (rc != 0)
		FG_LOG_ERR(HOST_COMP, "history: %s", strerror(-rc));
	return rc;
}

/* 3. Signals go to the main thread only; every thread started after this
 * inherits the mask. */
static int signals_step(struct host *h)
{
	fg_startup_signals(&h->signals);
	pthread_sigmask(SIG_BLOCK, &h->signals, NULL);
	return 0;
}

/* 4. The queue and the relay, before the workers' sinks. */
static int outbound_step(struct host *h)
{
	struct fg_outbound_params op = { .cfg = h->cfg, .cold_start = h->r.fresh,
					 .region = h->r.ctl,
					 .slot_name = "floodgate-host-outbound",
					 .max_gate = h->o.threads };
	int rc = 0;

	if (h->o.sink != FG_WIRING_SINK_QUEUE)
		return 0;
	outbound = fg_outbound_open(&op, &rc);
	return outbound ? 0 : rc ? rc : -EINVAL;
}

/* 5. The cluster client, before the workers, which each take a link. */
static int cluster_step(struct host *h)
{
	const struct fg_startup_cluster_params cp = {
		.cfg = h->cfg, .max_links = h->o.threads, .region = h->r.ctl,
		.slot_name = "floodgate-host-cluster", .region_what = "floodctld's region",
		.log_comp = HOST_COMP,
	};

	return fg_startup_cluster_open(&cluster, &cp);
}

/* 6. The peers' limits and each thread's sink, slot, engine, listeners. */
static int workers_step(struct host *h)
{
	int rc;

	h->ws = calloc(h->o.threads, sizeof(*h->ws));
	h->tids = calloc(h->o.threads, sizeof(*h->tids));
	limits = fg_peerlim_create(h->o.threads);
	if (!h->ws || !h->tids || !limits || fg_peerlim_add(limits, h->cfg) != 0)
		return -ENOMEM;
	for (unsigned i = 0; i < h->o.threads; i++) {
		rc = worker_setup(&h->ws[i], i, &h->o, h->cfg, &h->r);
		if (rc != 0) {
			FG_LOG_ERR(HOST_COMP, "worker %u: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* 7. The levers journal and the control socket (logged by ctl.c). */
static int ctl_step(struct host *h)
{
	int rc = host_ctl_open(&h->ctl, &h->o, h->cfg, h->ws, h->o.threads);

	h->ctl.lim = limits;
	return rc;
}

/* 8. The outbound and cluster threads, the workers, the control thread. */
static int threads_step(struct host *h)
{
	int rc;

	if (outbound && (rc = fg_outbound_start(outbound)) != 0) {
		FG_LOG_ERR(HOST_COMP, "outbound threads: %s", strerror(-rc));
		return rc;
	}
	if (cluster.claimer && (rc = fg_claimer_start(cluster.claimer)) != 0) {
		FG_LOG_ERR(HOST_COMP, "cluster thread: %s", strerror(-rc));
		return rc;
	}
	h->counting = true;
	for (; h->started < h->o.threads; h->started++)
		if (pthread_create(&h->tids[h->started], NULL, host_worker_run,
				   &h->ws[h->started]) != 0)
			return -EAGAIN;
	if (h->ctl.fd >= 0 && host_ctl_start(&h->ctl) != 0)
		return -EIO;
	return 0;
}

/* The start, in order; the first step that fails ends it. */
static int (*const start_steps[])(struct host *h) = {
	config_step, history_step, signals_step, outbound_step, cluster_step, workers_step,
	ctl_step, threads_step,
};

static int start(struct host *h)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < FG_ARRAY_SIZE(start_steps); i++)
		rc = start_steps[i](h);
	return rc;
}

/* The reverse of start(), from wherever it stopped: the control socket
 * (no lever change or reload after this), the threads, the outbound side
 * (after the workers: their last transfers needed the writer), the
 * counters, the cluster client (before the workers go: its thread wakes
 * them), the workers, the history, the configurations (after the
 * workers' teardown, which reads theirs). */
static void stop(struct host *h)
{
	host_ctl_close(&h->ctl);
	for (unsigned i = 0; i < h->started; i++) {
		__atomic_store_n(&h->ws[i].stop, 1, __ATOMIC_RELEASE);
		host_worker_wake(&h->ws[i]);
	}
	for (unsigned i = 0; i < h->started; i++)
		pthread_join(h->tids[i], NULL);
	fg_outbound_stop(outbound);
	if (h->counting)
		dump_stats(&h->o, h->ws, h->o.threads, h->ctl.cfg, h->r.h);
	fg_startup_cluster_close(&cluster);
	for (unsigned i = 0; h->ws && i < h->o.threads; i++)
		if (h->ws[i].stats)
			worker_teardown(&h->ws[i]);
	free(h->ws);
	free(h->tids);
	fg_peerlim_destroy(limits);
	limits = NULL;
	fg_outbound_close(outbound);
	outbound = NULL;
	history_close(&h->r);
	if (h->ctl.cfg && h->ctl.cfg != h->cfg)
		fg_config_free(h->ctl.cfg);	/* the last reload's */
	fg_config_free(h->cfg);
}

int main(int argc, char **argv)
{
	static struct host h = { .ctl = { .fd = -1 } };
	int rc = parse_opts(&h.o, argc, argv), status = 1;

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	fg_log_set_level((enum fg_log_level)h.o.log_level);
	if (start(&h) == 0) {
		FG_LOG_NOTICE(HOST_COMP, "floodgate-host ready: %u thread(s), history of %llu "
			      "entries", h.o.threads,
			      (unsigned long long)(h.o.history_capacity ? h.o.history_capacity :
						   h.cfg->history_capacity));
		signal_loop(&h.signals, &h.o, h.ws, h.o.threads, &h.ctl, h.r.h);
		status = 0;
	}
	stop(&h);
	return status;
}
