/* SPDX-License-Identifier: MIT */
/*
 * bench_tail.h — the journal records a benchmark's restore replays after
 * its snapshot (bench_control, bench_scale): n ACCEPTED records of keys
 * from next_key, appended through a writer slot of region r and drained
 * and committed as floodctld would, into a journal in dir.
 */
#ifndef FLOODGATE_BENCH_TAIL_H
#define FLOODGATE_BENCH_TAIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "floodgate/journal.h"
#include "floodgate/region.h"

static int bench_journal_tail(struct fg_region *r, const char *dir, uint64_t n, fg_time_t now,
			      struct fg_history_key (*next_key)(uint64_t i))
{
	struct fg_journal_params jp = { .dir = dir };
	struct fg_region_writer *w;
	struct fg_journal *j;
	struct fg_stats st;
	int err;

	fg_region_seed(r, jp.seed);
	fg_region_seed_check(fg_region_history(r), &jp.seed_check);
	j = fg_journal_open(&jp, &st, &err);
	w = fg_region_claim(r, "tail", &err);
	if (!j || !w)
		return -EIO;
	for (uint64_t i = 0; i < n; i++) {
		struct fg_history_key k = next_key(i);

		while (fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, now, now, 0, 0) == -ENOSPC) {
			fg_journal_drain(j, r, UINT32_MAX);
			fg_journal_commit(j, r);
		}
	}
	fg_journal_drain(j, r, UINT32_MAX);
	fg_journal_commit(j, r);
	fg_region_release(w);
	fg_region_reap(r, NULL, NULL);
	fg_journal_close(j);
	return 0;
}

#endif /* FLOODGATE_BENCH_TAIL_H */
