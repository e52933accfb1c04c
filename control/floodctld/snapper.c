/* SPDX-License-Identifier: MIT */
/*
 * snapper.c — floodctld's snapshot thread: a snapshot every
 * snapshot-interval, one on request (`floodctl snapshot`), one at once
 * after a restore; then pruning (snapshot-keep, and the journal segments
 * the oldest kept snapshot covers).
 *
 * The journal is committed first and its durable position read under the
 * journal lock: that is the position the snapshot covers (snapshot.h
 * explains why every record before it is in the image).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodctld.h"

uint64_t ctld_snap_first_seq(const char *dir)
{
	static const char *const suffixes[] = { ".fgs", ".fgs.bad", ".fgs.tmp" };
	uint64_t next = 1;

	for (size_t s = 0; s < FG_ARRAY_SIZE(suffixes); s++) {
		uint64_t *v = NULL;
		size_t n = 0;

		if (fg_datadir_list(dir, "snapshot-", suffixes[s], &v, &n) == 0 && n)
			next = FG_MAX(next, v[n - 1] + 1);
		free(v);
	}
	return next;
}

/* Segments a restore found damaged: set aside now that a snapshot covers them. */
static void set_aside_damaged(struct ctld *d, const struct fg_snap_info *info)
{
	for (unsigned i = 0; i < d->restore.n_damaged; i++) {
		char path[PATH_MAX], as[PATH_MAX + 16];
		uint64_t seg = d->restore.damaged[i];

		if (seg >= info->covers.segment ||
		    fg_journal_segment_path(d->data_dir, seg, path, sizeof(path)) < 0)
			continue;
		if (fg_datadir_set_aside(path, as, sizeof(as)) == 0)
			FG_LOG_ERR(CTLD, "damaged journal segment set aside as %s (a snapshot now covers it)",
				   as);
		d->restore.damaged[i] = UINT64_MAX;
	}
}

static int take(struct ctld *d, struct fg_snap_info *info, double *seconds)
{
	uint8_t seed[FG_HISTORY_SEED_LEN];
	struct fg_jpos pos, app;
	uint64_t t0, rate;
	unsigned keep;
	int rc;

	pthread_mutex_lock(&d->jlock);
	fg_journal_drain(d->j, d->r, UINT32_MAX);
	rc = fg_journal_commit(d->j, d->r);
	fg_journal_position(d->j, &app, &pos);
	pthread_mutex_unlock(&d->jlock);
	if (rc < 0) {
		FG_LOG_ERR(CTLD, "snapshot skipped: the journal could not be committed");
		return rc;
	}
	fg_region_seed(d->r, seed);
	t0 = fg_mono_ns();
	pthread_mutex_lock(&d->lock);
	rate = d->set.snapshot_rate;	/* a reload may change it */
	pthread_mutex_unlock(&d->lock);
	rc = fg_snapshot_write_paced(d->data_dir, d->snap_next_seq, fg_region_history(d->r), seed,
				     &pos, rate, info);
	*seconds = (double)(fg_mono_ns() - t0) / 1e9;
	if (rc < 0) {
		ctld_count(d, FG_CTR_SNAPSHOT_FAILURES);
		return rc;
	}
	d->snap_next_seq++;
	ctld_count(d, FG_CTR_SNAPSHOTS);
	FG_LOG_INFO(CTLD, "snapshot %llu: %llu entries, covers journal %llu:%llu, %.2f s",
		    (unsigned long long)info->seq, (unsigned long long)info->entries,
		    (unsigned long long)pos.segment, (unsigned long long)pos.offset, *seconds);
	set_aside_damaged(d, info);
	pthread_mutex_lock(&d->lock);
	keep = d->set.snapshot_keep;
	pthread_mutex_unlock(&d->lock);
	fg_snapshot_prune(d->data_dir, keep, app.segment, d->st);
	return 0;
}

void *ctld_snap_main(void *arg)
{
	struct ctld *d = arg;
	uint64_t last = fg_mono_ns();	/* the interval counts from the last snapshot */

	pthread_mutex_lock(&d->lock);
	if (d->snap_now)
		last = 0;
	while (!atomic_load(&d->stop)) {
		/* recomputed each time: a reload may have changed the interval */
		uint64_t next = last ? last + (uint64_t)d->set.snapshot_interval * 1000000000ull : 0;
		uint64_t now = fg_mono_ns(), want = d->snap_requested;
		struct fg_snap_info info;
		double secs = 0;
		int rc;

		if (want == d->snap_done && now < next) {
			ctld_wait(d, (int64_t)((next - now) / 1000000) + 1);
			continue;
		}
		pthread_mutex_unlock(&d->lock);
		rc = take(d, &info, &secs);
		pthread_mutex_lock(&d->lock);
		d->snap_last_rc = rc;
		if (rc == 0) {
			d->snap_last = info;
			d->snap_seconds = secs;
		}
		d->snap_done = want;
		last = fg_mono_ns();
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int ctld_snap_request(struct ctld *d, int timeout_ms, struct fg_snap_info *info,
		      double *seconds)
{
	uint64_t deadline = fg_mono_ns() + (uint64_t)timeout_ms * 1000000ull, ticket;
	int rc;

	pthread_mutex_lock(&d->lock);
	ticket = ++d->snap_requested;
	pthread_cond_broadcast(&d->cond);
	while (d->snap_done < ticket && !atomic_load(&d->stop) && fg_mono_ns() < deadline)
		ctld_wait(d, (int64_t)((deadline - fg_mono_ns()) / 1000000) + 1);
	if (d->snap_done < ticket)
		rc = -ETIMEDOUT;
	else
		rc = d->snap_last_rc;
	*info = d->snap_last;
	*seconds = d->snap_seconds;
	pthread_mutex_unlock(&d->lock);
	return rc;
}
