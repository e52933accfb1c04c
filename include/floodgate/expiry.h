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
	double seconds;
};

/*
 * Run a whole pass. `stop` (may be NULL) ends it early between slices.
 * 0, or -EINVAL for parameters fg_history_sweep_init refuses.
 */
int fg_expiry_pass(struct fg_history *h, enum fg_expiry_mode mode, fg_time_t now,
		   int64_t cutoff, int64_t retention, bool dry_run, unsigned slice,
		   unsigned pause_us, const atomic_bool *stop, struct fg_expiry_result *out);

const char *fg_expiry_mode_name(enum fg_expiry_mode m);

#endif /* FLOODGATE_EXPIRY_H */
