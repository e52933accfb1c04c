/* SPDX-License-Identifier: MIT */
/*
 * expiry.h — one pass of history expiry, in slices, alongside the writers
 * (RFC 5537 3: drop a record by its article date once older than the
 * cutoff, or by local first-seen once older than a retention of at least
 * cutoff + 24 h; config.h refuses a retention that breaks this).
 *
 * A pass walks every bucket with fg_history_sweep_step, `slice` buckets at
 * a time, sleeping `pause_us` between slices so that a pass over billions
 * of entries takes a bounded share of one core and never holds a writer
 * up (the sweep itself never blocks anyone). A dry run counts what a real
 * pass would drop and changes nothing (`floodctl expire --dry-run`).
 *
 * How often: a pass walks the whole table, so its cost grows with the
 * entries, not with what expires; at billions of entries one pass takes
 * minutes of a core. fg_expiry_next_wait_ns spaces the passes so that
 * expiry uses at most a given share of one core on average (floodctld's
 * --expire-share, 1 % by default): after a pass that took C seconds of
 * CPU the next waits at least C x (100 / share - 1). An entry then leaves
 * up to that long after its retention: on a table of a few million
 * entries that is the --expire-interval floor; at 6.6 G entries a few
 * hours, against a retention of days.
 */
#ifndef FLOODGATE_EXPIRY_H
#define FLOODGATE_EXPIRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/history.h"

#define FG_EXPIRY_SLICE_DEFAULT 16384u	/* buckets per slice (1 MiB of table) */
#define FG_EXPIRY_PAUSE_DEFAULT 200u	/* µs between slices */
#define FG_EXPIRY_SHARE_DEFAULT 1.0	/* % of one core, averaged over passes */

struct fg_expiry_result {
	enum fg_expiry_mode mode;
	bool dry_run;
	bool complete;			/* false: stopped early */
	fg_time_t now;
	int64_t cutoff, retention;
	uint64_t buckets;
	uint64_t kept;
	uint64_t expired;		/* final entries dropped (dry run: would be) */
	uint64_t expired_offers;	/* OFFERED entries past their deadline */
	uint64_t expired_by_state[FG_HISTORY_STATE__COUNT];
	double seconds;			/* wall clock, pauses included */
	double cpu_seconds;		/* the passing thread's own CPU time */
};

/*
 * Run a whole pass. `stop` (may be NULL) ends it early between slices.
 * 0, or -EINVAL for parameters fg_history_sweep_init refuses.
 */
int fg_expiry_pass(struct fg_history *h, enum fg_expiry_mode mode, fg_time_t now,
		   int64_t cutoff, int64_t retention, bool dry_run, unsigned slice,
		   unsigned pause_us, const atomic_bool *stop, struct fg_expiry_result *out);

const char *fg_expiry_mode_name(enum fg_expiry_mode m);

/*
 * How long to wait after a pass that used `pass_cpu_s` seconds of CPU so
 * that passes use at most `share_pct` percent of one core on average, and
 * never less than `floor_ns`. share_pct outside (0, 100] counts as 100 (no
 * spacing beyond the floor); the result saturates at UINT64_MAX.
 */
uint64_t fg_expiry_next_wait_ns(uint64_t floor_ns, double share_pct, double pass_cpu_s);

#endif /* FLOODGATE_EXPIRY_H */
