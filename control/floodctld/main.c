/* SPDX-License-Identifier: MIT */
/*
 * main.c — floodctld: start-up, signals, shutdown.
 *
 *   floodctld [-c FILE] [--log-level LEVEL] [test and tuning options]
 *
 * Start-up order: load and validate the config (a bad one: every error
 * listed, exit 2); take the data directory's lock; adopt the shared region
 * if it is there and sound (a writer or floodctld restarted), else restore
 * it from the newest sound snapshot and the journal after it, else start
 * empty and say so; open a new journal segment; publish the region; start
 * the threads (floodctld.h); serve until SIGTERM/SIGINT. SIGHUP reloads
 * the config file. docs/operations.md has the operator's view.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/notify.h"
#include "floodgate/queue.h"
#include "floodgate/warmup.h"
#include "floodctld.h"

static const char usage_text[] =
	"usage: floodctld [-c FILE] [--log-level LEVEL] [options]\n"
	"\n"
	"The floodgate control plane: owns the shared history region, the journal,\n"
	"snapshots, expiry, the verdict log, the stats export and the control socket.\n"
	"\n"
	"  -c, --config FILE          floodgate.conf (default: the embedded configuration)\n"
	"  --log-level LEVEL          err, warn, notice (default), info, debug\n"
	"  --writers N                writer slots in a new region (default: 2 x (workers + 1), at least 8)\n"
	"  --journal-ring N           journal records per writer ring, a power of two (default 131072)\n"
	"  --journal-segment-size N   rotate journal segments past N octets (default 64M)\n"
	"  --expire-interval SECONDS  between background expiry passes (default 60)\n"
	"  --expire-pause MICROS      pause between expiry slices (default 200)\n"
	"  --expire-share PERCENT     expiry's most share of one core, averaged: a pass\n"
	"                             that took C s of CPU waits C x (100 / PERCENT - 1) s\n"
	"                             before the next, at least --expire-interval (default 1)\n"
	"  --graph-period SECONDS     a point of the status page's graphs every SECONDS, 1 to\n"
	"                             60; they show the last 60 points (default 5)\n"
	"  -h, --help                 this text\n"
	"\n"
	"Signals: SIGHUP reloads the config file, SIGTERM and SIGINT stop.\n"
	"Exit status: 0 clean stop, 1 start-up failed, 2 bad usage or configuration.\n";

void ctld_wait(struct ctld *d, int64_t ms)
{
	struct timespec ts;
	uint64_t until;

	if (ms <= 0 || atomic_load(&d->stop))
		return;
	/* the condition variable runs on the monotonic clock (main) */
	until = fg_mono_ns() + (uint64_t)ms * 1000000ull;
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	pthread_cond_timedwait(&d->cond, &d->lock, &ts);
}

void ctld_settings_from(struct ctld_settings *s, const struct fg_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->journal_commit_ms = cfg->journal_commit_ms;
	s->snapshot_interval = cfg->snapshot_interval;
	s->snapshot_keep = cfg->snapshot_keep;
	s->snapshot_rate = (uint64_t)cfg->snapshot_rate;
	s->expiry = cfg->expiry;
	s->cutoff = cfg->cutoff;
	s->retention = cfg->retention;
	s->full_policy = cfg->full_policy;
	s->alarm_load_pct = cfg->alarm_load_pct;
	s->http = cfg->http;
	snprintf(s->verdict_log, sizeof(s->verdict_log), "%s", cfg->verdict_log);
	s->verdict_log_rotate = cfg->verdict_log_rotate;
	s->verdict_log_keep = cfg->verdict_log_keep;
	s->report_interval = cfg->report_interval;
	s->report_keep = cfg->report_keep;
	s->version_numbers = cfg->version_numbers;
}

/* A percentage in (0, 100], the whole string. */
static int parse_share(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 100))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct ctld_opts *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "writers", required_argument, NULL, 'w' },
		{ "journal-ring", required_argument, NULL, 'r' },
		{ "journal-segment-size", required_argument, NULL, 's' },
		{ "expire-interval", required_argument, NULL, 'e' },
		{ "expire-pause", required_argument, NULL, 'p' },
		{ "expire-share", required_argument, NULL, 'x' },
		{ "graph-period", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, lvl;

	memset(o, 0, sizeof(*o));
	o->expire_interval = 60;
	o->expire_pause_us = FG_EXPIRY_PAUSE_DEFAULT;
	o->expire_share = FG_EXPIRY_SHARE_DEFAULT;
	o->journal_ring = FG_REGION_JOURNAL_RING_DEFAULT;
	o->graph_period = 5;
	while ((c = getopt_long(argc, argv, "c:h", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config_path = optarg;
			break;
		case 'l':
			lvl = fg_log_level_parse(optarg);
			if (lvl < 0)
				goto bad;
			fg_log_set_level((enum fg_log_level)lvl);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'x':
			if (parse_share(optarg, &o->expire_share) < 0) {
				fprintf(stderr, "floodctld: --expire-share: '%s' is not a percentage "
						"above 0 and at most 100\n", optarg);
				goto bad;
			}
			break;
		default:
			if (c == '?' || fg_parse_size(optarg, &v) < 0 || v > UINT32_MAX * 16ull)
				goto bad;
			if (c == 'w')
				o->writers = (unsigned)v;
			else if (c == 'r')
				o->journal_ring = (uint32_t)v;
			else if (c == 's')
				o->segment_bytes = v;
			else if (c == 'e')
				o->expire_interval = (unsigned)v;
			else if (c == 'g' && v >= 1 && v <= 60)
				o->graph_period = (unsigned)v;
			else if (c == 'g')
				goto bad;
			else
				o->expire_pause_us = (unsigned)v;
		}
	}
	if (optind == argc)
		return 0;
bad:
	fputs(usage_text, stderr);
	return -EINVAL;
}

static struct fg_config *load_config(const char *path)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = path ? fg_config_load_file(path, &errs) : fg_config_load_default(&errs);
	/* the file's warnings already go where its [log] says */
	if (cfg)
		fg_config_log_open(cfg, CTLD);
	fg_config_errors_log(&errs);
	if (!cfg)
		FG_LOG_ERR(CTLD, "%s: %u errors; not starting", path ? path : "<default>", errs.total);
	return cfg;
}

/* One floodctld per data directory. */
static int lock_data_dir(struct ctld *d)
{
	char path[PATH_MAX];
	int rc = fg_datadir_make(d->data_dir);

	if (rc < 0) {
		FG_LOG_ERR(CTLD, "cannot create %s: %s", d->data_dir, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/floodctld.lock", d->data_dir);
	d->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (d->lock_fd < 0 || flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		rc = -errno;
		FG_LOG_ERR(CTLD, "%s: %s (another floodctld uses this data directory?)", path,
			   strerror(-rc));
		return rc;
	}
	return 0;
}

static void history_params(const struct fg_config *cfg, struct fg_history_params *hp)
{
	uint64_t side = cfg->history_capacity / 256;

	memset(hp, 0, sizeof(*hp));
	hp->capacity = cfg->history_capacity;
	hp->shards = cfg->history_shards;
	hp->side_capacity = cfg->version_numbers ? (uint32_t)FG_MAX(1024, FG_MIN(side, 262144)) : 0;
	hp->full_policy = cfg->full_policy;
	hp->alarm_load_pct = cfg->alarm_load_pct;
	hp->now = time(NULL);
}

static void notify(const char *state);

/* No usable region: rebuild one from the data directory. */
/* A cold start (nothing on disk): the warm-up period begins (docs/relay.md);
 * the dataplane reads its end from the data directory. */
static void warmup_begin(struct ctld *d)
{
	fg_time_t until = time(NULL) + d->cfg->warmup;
	int rc;

	if (d->cfg->warmup <= 0)
		return;
	rc = fg_warmup_begin(d->data_dir, until);
	if (rc != 0)
		FG_LOG_ERR(CTLD, "warm-up file in %s: %s", d->data_dir, strerror(-rc));
	else
		FG_LOG_NOTICE(CTLD, "cold start: warm-up for %llds (CHECKs of unknown IDs are asked "
			      "of the downstream)", (long long)d->cfg->warmup);
}

static int restore_region(struct ctld *d)
{
	struct fg_restore_params p;
	struct fg_restore_source src;
	char why[512];

	memset(&p, 0, sizeof(p));
	p.data_dir = d->data_dir;
	p.shm_path = d->shm_path;
	/* a dataplane claims a slot per worker and one for its outbound
	 * queue; twice that lets it restart after a crash before floodctld
	 * has reaped the dead one's slots */
	p.region.writers = d->opt.writers ? d->opt.writers
					  : FG_MAX(FG_REGION_WRITERS_MIN, 2 * (d->cfg->workers + 1));
	p.region.journal_ring = d->opt.journal_ring;
	p.region.vlog_ring = FG_REGION_VLOG_RING_DEFAULT;
	p.region.huge = (enum fg_region_huge)d->cfg->huge_pages;
	history_params(d->cfg, &p.history);
	p.now = time(NULL);
	/* the outbound queue: every ID that got 239 is in it (docs/relay.md) */
	src.name = "the outbound queue";
	src.replay = fg_queue_replay;
	src.arg = d->data_dir;
	p.sources = &src;
	p.n_sources = 1;
	/* `systemctl status floodctld` says why it is not ready yet: a
	 * restore of billions of entries takes tens of seconds or more */
	notify("STATUS=restoring the history from the data directory");
	d->r = fg_restore(&p, &d->restore, why, sizeof(why));
	if (!d->r) {
		FG_LOG_ERR(CTLD, "%s", why);
		return -EIO;
	}
	notify("STATUS=history restored");
	d->startup = fg_restore_from_name(d->restore.from);
	if (d->restore.from == FG_RESTORE_EMPTY)
		warmup_begin(d);
	d->restore_seconds = d->restore.seconds;
	if (d->restore.from == FG_RESTORE_SNAPSHOT)
		d->snap_last = d->restore.snapshot;
	/* a fresh snapshot covers what was replayed and lets damaged segments go */
	d->snap_now = d->restore.from != FG_RESTORE_SNAPSHOT || d->restore.records ||
		      d->restore.source_inserted || d->restore.n_damaged;
	return 0;
}

/* The newest snapshot's header, for its age after an adopt. */
static void newest_snapshot(struct ctld *d)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	char path[PATH_MAX], why[128];
	struct fg_snap_file f;

	fg_snapshot_list(d->data_dir, &seqs, &n);
	if (n && fg_snapshot_path(d->data_dir, seqs[n - 1], path, sizeof(path)) == 0 &&
	    fg_snapshot_open(path, &f, why, sizeof(why)) == 0) {
		d->snap_last = f.info;
		fg_snapshot_close(&f);
	}
	free(seqs);
}

static int open_region(struct ctld *d)
{
	double t0 = (double)fg_mono_ns() / 1e9;
	char why[512];
	int err;

	d->r = fg_region_adopt(d->shm_path, &err, why, sizeof(why));
	if (d->r) {
		struct fg_history_stats hs;

		fg_history_stats(fg_region_history(d->r), &hs);
		d->startup = "adopted";
		d->transient_dirty = true;
		d->restore_seconds = (double)fg_mono_ns() / 1e9 - t0;
		newest_snapshot(d);
		FG_LOG_NOTICE(CTLD, "adopted the region at %s: %llu entries, %u writers alive",
			      fg_region_path(d->r), (unsigned long long)hs.entries,
			      fg_region_live_writers(d->r));
		return 0;
	}
	if (err == -EBUSY) {
		FG_LOG_ERR(CTLD, "%s", why);
		return err;
	}
	if (err != -ENOENT)
		FG_LOG_WARN(CTLD, "region not usable: %s; rebuilding it from %s", why, d->data_dir);
	return restore_region(d);
}

static int open_journal(struct ctld *d)
{
	struct fg_journal_params jp;
	int err;

	memset(&jp, 0, sizeof(jp));
	jp.dir = d->data_dir;
	fg_region_seed(d->r, jp.seed);
	fg_region_seed_check(fg_region_history(d->r), &jp.seed_check);
	jp.segment_bytes = d->opt.segment_bytes;
	d->j = fg_journal_open(&jp, d->st, &err);
	return d->j ? 0 : err;
}

static void add_peers(struct ctld *d, const struct fg_config *cfg)
{
	const char *names[FG_CONFIG_MAX_PEERS];

	for (unsigned i = 0; i < cfg->n_peer; i++)
		names[i] = cfg->peer[i].name;
	fg_region_add_peers(d->r, names, cfg->n_peer);
}

static int start(struct ctld *d)
{
	int rc;

	snprintf(d->data_dir, sizeof(d->data_dir), "%s", d->cfg->data_dir);
	snprintf(d->shm_path, sizeof(d->shm_path), "%s", d->cfg->shm_path);
	snprintf(d->ctl_path, sizeof(d->ctl_path), "%s", d->cfg->control_socket);
	rc = lock_data_dir(d);
	if (rc == 0)
		rc = open_region(d);
	if (rc < 0)
		return rc;
	d->st = fg_region_ctld_stats(d->r);
	add_peers(d, d->cfg);
	fg_region_set_vlog(d->r, d->set.verdict_log[0] != '\0');
	fg_history_set_policy(fg_region_history(d->r), d->set.full_policy, d->set.alarm_load_pct);
	rc = open_journal(d);
	if (rc < 0)
		return rc;
	d->snap_next_seq = ctld_snap_first_seq(d->data_dir);
	fg_region_publish(d->r);
	return 0;
}

static int spawn(pthread_t *t, void *(*fn)(void *), struct ctld *d)
{
	int rc = pthread_create(t, NULL, fn, d);

	if (rc)
		FG_LOG_ERR(CTLD, "pthread_create: %s", strerror(rc));
	return -rc;
}

static int start_threads(struct ctld *d)
{
	int rc = ctld_ctl_listen(d);

	if (rc == 0)
		rc = ctld_http_listen(&d->set.http, &d->http_fd);
	if (rc < 0)
		return rc;
	if (spawn(&d->t_rings, ctld_rings_main, d) || spawn(&d->t_snap, ctld_snap_main, d) ||
	    spawn(&d->t_expire, ctld_expire_main, d) || spawn(&d->t_http, ctld_http_main, d) ||
	    spawn(&d->t_ctl, ctld_ctl_main, d) || spawn(&d->t_report, ctld_report_main, d))
		return -EAGAIN;
	return 0;
}

/* systemd's Type=notify (notify.h): READY=1 once the region is published
 * and the control socket listens, so `systemctl start floodctld` returns
 * when floodctl and the dataplane can use it. */
static void notify(const char *state)
{
	int rc = fg_notify(state);

	if (rc < 0)
		FG_LOG_WARN(CTLD, "%s to $NOTIFY_SOCKET: %s", state, strerror(-rc));
}

static void serve(struct ctld *d, const sigset_t *set)
{
	int sig;

	FG_LOG_NOTICE(CTLD, "ready: region %s, data %s, control %s", fg_region_path(d->r),
		      d->data_dir, d->ctl_path);
	notify("READY=1");
	while (sigwait(set, &sig) == 0) {
		if (sig == SIGHUP) {
			struct fg_sbuf out;

			fg_sbuf_init(&out);
			ctld_reload_all(d, NULL, false, &out);
			fg_sbuf_free(&out);
			continue;
		}
		FG_LOG_NOTICE(CTLD, "signal %d: stopping", sig);
		notify("STOPPING=1");
		break;
	}
}

static void stop_threads(struct ctld *d)
{
	pthread_mutex_lock(&d->lock);
	atomic_store(&d->stop, true);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->t_report, NULL);
	pthread_join(d->t_ctl, NULL);
	pthread_join(d->t_http, NULL);
	pthread_join(d->t_expire, NULL);
	pthread_join(d->t_snap, NULL);
	pthread_join(d->t_rings, NULL);
	ctld_rings_flush(d);
	unlink(d->ctl_path);
}

static void cleanup(struct ctld *d)
{
	fg_journal_close(d->j);
	if (d->r)
		fg_region_close(d->r);
	fg_config_free(d->cfg);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	if (d->http_fd >= 0)
		close(d->http_fd);
	if (d->ctl_fd >= 0)
		close(d->ctl_fd);
}

int main(int argc, char **argv)
{
	static struct ctld d;
	pthread_condattr_t ca;
	sigset_t set;
	int rc;

	d.lock_fd = d.http_fd = d.ctl_fd = -1;
	if (parse_opts(argc, argv, &d.opt) < 0)
		return 2;
	d.cfg = load_config(d.opt.config_path);
	if (!d.cfg)
		return 2;
	if (d.opt.config_path && !realpath(d.opt.config_path, d.config_path))
		snprintf(d.config_path, sizeof(d.config_path), "%s", d.opt.config_path);
	ctld_settings_from(&d.set, d.cfg);
	d.config_loaded = d.started = time(NULL);
	pthread_mutex_init(&d.lock, NULL);
	pthread_mutex_init(&d.jlock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d.cond, &ca);
	/* every thread inherits the mask; only serve() takes these signals */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = start(&d);
	if (rc == 0)
		rc = start_threads(&d);
	if (rc < 0) {
		cleanup(&d);
		return 1;
	}
	serve(&d, &set);
	stop_threads(&d);
	FG_LOG_NOTICE(CTLD, "stopped");
	cleanup(&d);
	return 0;
}
