/* SPDX-License-Identifier: MIT */
/*
 * floodctld.h — the control-plane daemon's shared state, private to
 * control/floodctld.
 *
 * Threads (each in its own file):
 *   main      start-up (adopt or restore), signals (SIGHUP reload,
 *             SIGTERM/SIGINT stop), shutdown          main.c
 *   rings     journal drain + group commit, verdict-log files, reaping
 *             dead writers, clearing transient entries  rings.c
 *   snapshot  periodic and requested snapshots, pruning snapper.c
 *   expiry    periodic and requested expiry passes     expire.c
 *   http      /metrics, /stats.json, the status page   http.c
 *             (and the ring of samples its graphs draw)
 *   report    the daily report's samples             reporter.c
 *   control   the control socket, one thread per client ctlsrv.c
 *
 * Locks: `lock` guards the settings, the config pointer and the state
 * fields below it, and goes with `cond` (every thread's wake-up);
 * `jlock` guards the journal handle (the rings thread drains and commits,
 * the snapshot thread commits before it reads the covered position). No
 * thread holds both except in the order lock -> jlock.
 */
#ifndef FLOODGATE_FLOODCTLD_H
#define FLOODGATE_FLOODCTLD_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/ctl.h"
#include "floodgate/expiry.h"
#include "floodgate/journal.h"
#include "floodgate/metrics.h"
#include "floodgate/region.h"
#include "floodgate/sbuf.h"
#include "floodgate/snapshot.h"
#include "floodgate/vlog.h"

#define CTLD "floodctld"
#define CTLD_VERSION "1"

/* What a reload may change, copied out of the config under `lock`. */
struct ctld_settings {
	int64_t journal_commit_ms;
	int64_t snapshot_interval;
	unsigned snapshot_keep;
	uint64_t snapshot_rate;		/* image bytes a second, 0: unpaced */
	enum fg_expiry_mode expiry;
	int64_t cutoff;
	int64_t retention;
	enum fg_full_policy full_policy;
	unsigned alarm_load_pct;
	struct fg_endpoint http;
	char verdict_log[FG_CONFIG_PATH_MAX];
	uint64_t verdict_log_rotate;
	unsigned verdict_log_keep;
	int64_t report_interval;	/* seconds between report samples */
	unsigned report_keep;		/* days of them kept */
	bool version_numbers;
};

struct ctld_opts {
	const char *config_path;	/* NULL: the embedded default */
	uint64_t segment_bytes;		/* --journal-segment-size */
	unsigned expire_interval;	/* --expire-interval, seconds */
	unsigned expire_pause_us;	/* --expire-pause */
	double expire_share;		/* --expire-share, % of one core */
	unsigned writers;		/* --writers */
	uint32_t journal_ring;		/* --journal-ring */
	unsigned graph_period;		/* --graph-period, seconds */
};

struct ctld {
	struct ctld_opts opt;
	char config_path[PATH_MAX];	/* "" = embedded default */
	char data_dir[FG_CONFIG_PATH_MAX];
	char shm_path[FG_CONFIG_PATH_MAX];
	char ctl_path[FG_CONFIG_PATH_MAX];
	int lock_fd;
	bool queue_newer_logged;	/* the queue's files are a newer build's (said once) */
	struct fg_region *r;
	struct fg_stats *st;		/* floodctld's counters, in the region */

	pthread_mutex_t jlock;
	struct fg_journal *j;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;
	struct fg_config *cfg;
	struct ctld_settings set;
	fg_time_t config_loaded;
	bool http_rebind;		/* the http thread re-listens */
	bool vlog_reopen;		/* the rings thread reopens the verdict log */
	/* reopen-logs: requests, and the last one the rings thread served by
	 * closing and opening the file again (rings.c) */
	uint64_t vlog_reopen_req, vlog_reopen_done;

	/* start-up */
	fg_time_t started;
	const char *startup;		/* "adopted", "snapshot", "journal", "empty" */
	struct fg_restore_result restore;
	double restore_seconds;
	bool transient_dirty;		/* clear OFFERED/ACCEPTING once no writer is alive */

	/* snapshots */
	uint64_t snap_next_seq;
	uint64_t snap_requested, snap_done;
	int snap_last_rc;
	struct fg_snap_info snap_last;	/* newest written, or restored from */
	double snap_seconds;
	bool snap_now;			/* take one at once (after a restore) */

	/* expiry */
	uint64_t exp_requested, exp_done;
	struct fg_expiry_result exp_last;
	fg_time_t exp_last_end;

	/* journal, as last seen by the rings thread (for status, metrics) */
	struct fg_jpos j_appended, j_durable;
	uint64_t j_uncommitted;
	uint64_t j_last_commit_ns;

	pthread_t t_rings, t_snap, t_expire, t_http, t_ctl, t_report;
	int http_fd;			/* -1: none (port 0) */
	int ctl_fd;
	atomic_uint ctl_clients;
};

/* floodctld's own counters are bumped from several of its threads: one
 * atomic add each (writers' counters stay plain: one thread per slot). */
static inline void ctld_count(struct ctld *d, enum fg_counter c)
{
	__atomic_fetch_add(&d->st->ctr[c], 1, __ATOMIC_RELAXED);
}

/* main.c */
void ctld_settings_from(struct ctld_settings *s, const struct fg_config *cfg);
/* Wait on `cond` until woken or `ms` pass; called with `lock` held. */
void ctld_wait(struct ctld *d, int64_t ms);

/* rings.c */
void *ctld_rings_main(void *arg);
/* Drain everything and commit (shutdown; start-up after adopt). */
void ctld_rings_flush(struct ctld *d);

/* Close and open the verdict log again (reopen-logs); waits for the
 * rings thread: 0, or -ETIMEDOUT. *path gets the file ("" when off). */
int ctld_vlog_reopen(struct ctld *d, int timeout_ms, char *path, size_t len);

/* snapper.c */
void *ctld_snap_main(void *arg);
uint64_t ctld_snap_first_seq(const char *dir);
/* Ask for a snapshot and wait for it: 0 or -errno (-ETIMEDOUT). */
int ctld_snap_request(struct ctld *d, int timeout_ms, struct fg_snap_info *info,
		      double *seconds);

/* expire.c */
void *ctld_expire_main(void *arg);
int ctld_expire_request(struct ctld *d, int timeout_ms, struct fg_expiry_result *out);
int ctld_expire_dry_run(struct ctld *d, struct fg_expiry_result *out);
void ctld_expiry_json(struct fg_json *j, const struct fg_expiry_result *e);
void ctld_expiry_text(struct fg_sbuf *b, const struct fg_expiry_result *e);

/* http.c: listen on ep (port 0: no listener, *fd = -1); 0 or -errno */
int ctld_http_listen(const struct fg_endpoint *ep, int *fd);
void *ctld_http_main(void *arg);

/* ctlsrv.c: bind the control socket into d->ctl_fd */
int ctld_ctl_listen(struct ctld *d);
void *ctld_ctl_main(void *arg);

/* reporter.c: a sample every report-interval into <data-dir>/report;
 * `floodctl report`: the window of the last `since` seconds (0: 24 h) */
void *ctld_report_main(void *arg);
const char *ctld_report(struct ctld *d, int64_t since, unsigned flags, struct fg_sbuf *out);

/* status.c */
void ctld_metrics_state(struct ctld *d, struct fg_metrics_state *m);
void ctld_status(struct ctld *d, bool json, struct fg_sbuf *out);
/* 0 found, -ENOENT absent, -EINVAL not a Message-ID */
int ctld_lookup(struct ctld *d, const char *id, bool json, struct fg_sbuf *out);

/* levers.c: floodctl forget / remember; the reply head's error code, or NULL */
const char *ctld_forget(struct ctld *d, const char *id, bool json, struct fg_sbuf *out);
const char *ctld_remember(struct ctld *d, const char *id, const char *as, bool json,
			  struct fg_sbuf *out);
/* bulk.c: floodctl remember --file / --inn-news-log (kind "ids" or "inn-news-log") */
const char *ctld_remember_file(struct ctld *d, const char *kind, const char *path, bool json,
			       struct fg_sbuf *out);
/* reload.c, the steps of a reload (its head comment). Check: the file
 * loaded, validated and free of restart keys, its full name in `file`; or
 * NULL with the refusal in out, counted. Refused: the dataplane refused
 * it (counted, logged). Apply: floodctld's part, the report to out; cfg
 * is floodctld's from then on. */
struct fg_config *ctld_reload_check(struct ctld *d, const char *path, bool json,
				   struct fg_sbuf *out, char *file, size_t len);
void ctld_reload_refused(struct ctld *d, const char *file);
void ctld_reload_apply(struct ctld *d, struct fg_config *cfg, const char *file, bool json,
		       struct fg_sbuf *out);

/* dataplane.c: the verbs only the dataplane answers, forwarded to its
 * control socket; and a reload of both (floodctld first, then, when it
 * accepted the file, the dataplane). The reply's error code, or NULL. */
const char *ctld_dataplane_forward(struct ctld *d, const struct fg_ctl_req *q,
				   struct fg_sbuf *out);
const char *ctld_reload_all(struct ctld *d, const char *path, bool json, struct fg_sbuf *out);

#endif /* FLOODGATE_FLOODCTLD_H */
