/* SPDX-License-Identifier: MIT */
/*
 * metrics.h — the stats export: every counter of every writer and of
 * floodctld, the delay histograms, history, journal, snapshot, expiry and
 * alarm gauges, as Prometheus text (exposition format 0.0.4), as JSON
 * (/stats.json, `floodctl stats --json`) and as the table of `floodctl
 * stats`. docs/operations.md lists every metric.
 *
 * Names: each counter of tbl/counters.h is floodgate_<name>_total (the
 * sum over writers, the retired block and floodctld's own block), and
 * floodgate_peer_<name>_total{peer="..."} for the counters some peer has
 * counted; reject reasons are floodgate_rejected_total{reason="..."}
 * (every reason, zeros included) and floodgate_peer_rejected_total{peer,
 * reason} (non-zero ones). The two delays of seed 002 are histograms in
 * seconds with bucket bounds 2^i - 1 (exact for whole seconds) and one
 * bucket le="-1" for negative delays (a clock or a header is wrong). The
 * outbound queue's size and age and each downstream's lag are gauges
 * (docs/relay.md). The port's own figures (tbl/nic.h, nic.h) are
 * floodgate_nic_<name>_total{port,role} (counters),
 * floodgate_nic_<name>{port,role} (gauges: link up, speed) and
 * floodgate_nic_queue_<name>_total{port,queue}, for every dataplane that
 * published them, and "nic" in the JSON.
 */
#ifndef FLOODGATE_METRICS_H
#define FLOODGATE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/dstatus.h"
#include "floodgate/levers.h"
#include "floodgate/queue.h"
#include "floodgate/cstatus.h"
#include "floodgate/region.h"
#include "floodgate/sbuf.h"

/* What floodctld knows beyond the region, sampled when rendering. */
struct fg_metrics_state {
	fg_time_t now;
	fg_time_t started;		/* floodctld's start */
	const char *startup;		/* "adopted", "snapshot", "journal", "empty" */
	double restore_seconds;
	uint64_t journal_lag_records;	/* in rings + drained, not yet durable */
	double journal_commit_age;	/* seconds since the last commit; < 0: none yet */
	uint64_t journal_segment;
	fg_time_t snapshot_time;	/* newest snapshot written or restored; 0: none */
	double snapshot_seconds;	/* duration of the last write */
	uint64_t snapshot_seq;
	enum fg_expiry_mode expiry_mode;
	fg_time_t expiry_last_end;	/* 0: no pass yet */
	double expiry_last_seconds;
	uint64_t expiry_last_expired;
	bool vlog_on;
	/* the outbound queue and each downstream's lag, read from the data
	 * directory (fg_queue_inspect); queue.present is false without one */
	struct fg_queue_status queue;
	/* each downstream as the dataplane last published it (dstatus.h);
	 * ds_written 0: no such file */
	struct fg_ds_status ds[FG_CONFIG_MAX_DOWNSTREAMS];
	unsigned n_ds;
	fg_time_t ds_written;
	/* the shared second-level history as the dataplane last published it
	 * (cstatus.h); cs_written 0: no such file (no [cluster]) */
	struct fg_cluster_status cs;
	fg_time_t cs_written;
	/* the operator levers, as the dataplane journaled them in the data
	 * directory (levers.h); levers_ok false: the journal was unreadable */
	struct fg_levers levers;
	bool levers_ok;
};

/* The kernel's view of its clock (adjtimex, read only): shown, never acted on. */
struct fg_kclock {
	bool ok;		/* adjtimex answered */
	bool synchronised;	/* STA_UNSYNC clear, state not TIME_ERROR */
	double est_error;	/* seconds */
	double max_error;	/* seconds */
};

struct timex;
/* 0, or -errno (then k->ok is false). */
int fg_kclock_read(struct fg_kclock *k);
/* From adjtimex's answer (`state` its return value): for tests. */
void fg_kclock_from_timex(const struct timex *tx, int state, struct fg_kclock *k);
/* As `"kernel_clock": {...}` / one line of text, for status and stats. */
void fg_metrics_kclock_json(struct fg_json *j, const struct fg_kclock *k);
void fg_metrics_kclock_text(struct fg_sbuf *b, const struct fg_kclock *k);

/* True while any live writer says its clock looks wrong. */
bool fg_metrics_clock_suspect(const struct fg_region *r);

/* Append the exposition text / the JSON document / the table to out. */
void fg_metrics_prometheus(struct fg_region *r, const struct fg_metrics_state *s,
			   struct fg_sbuf *out);
void fg_metrics_json(struct fg_region *r, const struct fg_metrics_state *s, struct fg_sbuf *out);
void fg_metrics_table(struct fg_region *r, const struct fg_metrics_state *s, struct fg_sbuf *out);
/* One peer's counters, delay histograms and share of first offers (the
 * table's block, or a JSON object): 0, or -ENOENT when the region names
 * no such peer. */
int fg_metrics_peer(struct fg_region *r, const char *peer, bool json, struct fg_sbuf *out);

/* The port's figures of every dataplane: `"nic": [...]` / a line a port,
 * for `floodctl status`. */
void fg_metrics_nic_json(struct fg_json *j, struct fg_region *r);
void fg_metrics_nic_text(struct fg_sbuf *b, struct fg_region *r);

/* `floodctl downstreams`: each downstream's state, lag, backlog and
 * counters, as a table or one JSON document (the region is not needed). */
void fg_metrics_downstreams(const struct fg_metrics_state *s, bool json, struct fg_sbuf *out);
/* One word for a downstream's state, the first that holds: "paused",
 * "parked-full", "parked", "feeding", "connecting". */
const char *fg_metrics_ds_state(const struct fg_ds_status *d);
/* Its lag: from the queue's own files when floodctld has them (fresher
 * than the status file when the dataplane is down), else the dataplane's. */
void fg_metrics_ds_lag(const struct fg_metrics_state *m, const struct fg_ds_status *d,
		       uint64_t *rec, uint64_t *bytes, int64_t *secs);

#endif /* FLOODGATE_METRICS_H */
