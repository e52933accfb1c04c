/* SPDX-License-Identifier: MIT */
/*
 * rings.c — floodctld's rings thread: drains every writer's journal ring
 * into the journal and group-commits it every journal-commit interval,
 * writes the verdict-log rings to their files, reaps writers that died
 * or left — a dead writer's transfers settled from the outbound queue, its
 * other transient history entries dropped, while the other writers run
 * (region.h) — and clears what no writer names (RESV slots) once none is
 * alive.
 *
 * It polls: a ring has no doorbell, and a writer must never make a system
 * call to hand over a record. When the rings are empty it sleeps 2 ms, so
 * an idle floodctld costs nothing and a busy one drains continuously.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "floodgate/queue.h"
#include "floodctld.h"

#define IDLE_NS 2000000ull
#define REAP_NS 100000000ull
#define DRAIN_BATCH 65536u
#define VLOG_BATCH 4096u

static uint64_t ring_backlog(const struct fg_region *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < fg_region_nslots(r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(r, i, &si) == 0 && si.state != FG_SLOT_FREE)
			n += si.pushed[FG_RING_JOURNAL] - si.consumed[FG_RING_JOURNAL];
	}
	return n;
}

/* Drain, and commit when due; publish the journal's state for status. */
static int64_t journal_step(struct ctld *d, uint64_t now, uint64_t *next_commit,
			    int64_t commit_ms)
{
	struct fg_jpos app, dur;
	uint64_t unc, last;
	int64_t moved;

	pthread_mutex_lock(&d->jlock);
	moved = fg_journal_drain(d->j, d->r, DRAIN_BATCH);
	/* records stay in their ring until durable: commit early rather
	 * than let a busy writer find its ring full */
	if (now >= *next_commit ||
	    fg_journal_uncommitted(d->j) >= fg_region_ring_capacity(d->r, FG_RING_JOURNAL) / 2) {
		fg_journal_commit(d->j, d->r);
		*next_commit = now + (uint64_t)commit_ms * 1000000ull;
	}
	fg_journal_position(d->j, &app, &dur);
	unc = fg_journal_uncommitted(d->j);
	last = fg_journal_last_commit_ns(d->j);
	pthread_mutex_unlock(&d->jlock);
	pthread_mutex_lock(&d->lock);
	d->j_appended = app;
	d->j_durable = dur;
	d->j_uncommitted = unc + ring_backlog(d->r);
	d->j_last_commit_ns = last;
	pthread_mutex_unlock(&d->lock);
	return moved;
}

/* ---- a dead writer's transfers: the queue decides (qread.c) ---- */

struct settle_ctx {
	struct ctld *d;
	struct fg_region_writer *w;	/* the dead writer's rings, adopted */
};

static int settle_reserve(void *arg)
{
	struct settle_ctx *c = arg;

	return fg_journal_reserve(c->w) == 0 ? 0 : -EAGAIN;
}

static void settle_unreserve(void *arg)
{
	struct settle_ctx *c = arg;

	fg_journal_unreserve(c->w);
}

static void settle_done(void *arg, const struct fg_queue_rec *r, const struct fg_history_key *k,
			fg_time_t article_date)
{
	struct settle_ctx *c = arg;
	struct timespec ts;

	/* the reservation makes the append certain */
	fg_journal_append(c->w, k, FG_HISTORY_ACCEPTED, article_date, r->arrival, 0,
			  FG_REASON_NONE);
	clock_gettime(CLOCK_REALTIME, &ts);
	fg_vlog_emit(c->w, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, FG_VLOG_RECOVERY, -1, NULL,
		     r->id, r->id_len, FG_VLOG_ACCEPT, FG_REASON_NONE, article_date, 0, 0,
		     r->arrival);
	__atomic_fetch_add(&c->d->st->ctr[FG_CTR_HISTORY_SETTLED], 1, __ATOMIC_RELAXED);
}

static int settle(void *arg, struct fg_region_writer *w, unsigned owner, fg_time_t since)
{
	struct settle_ctx c = { arg, w };
	const struct fg_queue_settle_hooks hooks = {
		settle_reserve, settle_unreserve, settle_done, &c,
	};
	int64_t n = fg_queue_settle(c.d->data_dir, fg_region_history(c.d->r), owner, since,
				    time(NULL), &hooks);

	if (n > 0)
		FG_LOG_NOTICE(CTLD, "writer slot %u died: %lld of its transfers were durable in the "
			      "queue and are recorded as accepted", owner, (long long)n);
	return n < 0 ? (int)n : 0;
}

static void reap(struct ctld *d)
{
	const struct fg_region_resolver res = { settle, d };
	unsigned dead = 0, freed = fg_region_reap(d->r, &dead, &res);
	bool clear;

	fg_region_owner_heartbeat(d->r);
	pthread_mutex_lock(&d->lock);
	if (freed)
		__atomic_fetch_add(&d->st->ctr[FG_CTR_WRITERS_REAPED], freed, __ATOMIC_RELAXED);
	if (dead)
		d->transient_dirty = true;
	clear = d->transient_dirty && fg_region_live_writers(d->r) == 0;
	pthread_mutex_unlock(&d->lock);
	if (clear && fg_region_clear_transient(d->r) >= 0) {
		pthread_mutex_lock(&d->lock);
		d->transient_dirty = false;
		pthread_mutex_unlock(&d->lock);
	}
}

/* (Re)open the verdict log per the settings; NULL when it is off. The
 * same file stays open across a reload, unless reopen-logs asked for a
 * new descriptor (logrotate moved the file away). */
static struct fg_vlog_file *vlog_open(struct ctld *d, struct fg_vlog_file *old)
{
	struct fg_vlog_file *f = NULL;
	char path[FG_CONFIG_PATH_MAX];
	uint64_t rotate, req;
	unsigned keep;
	bool force;
	int err;

	pthread_mutex_lock(&d->lock);
	snprintf(path, sizeof(path), "%s", d->set.verdict_log);
	rotate = d->set.verdict_log_rotate;
	keep = d->set.verdict_log_keep;
	d->vlog_reopen = false;
	req = d->vlog_reopen_req;
	force = req != d->vlog_reopen_done;
	pthread_mutex_unlock(&d->lock);
	if (old && path[0] && strcmp(fg_vlog_path(old), path) == 0 && !force) {
		fg_vlog_settings(old, rotate, keep);
		return old;
	}
	fg_vlog_close(old);
	if (path[0])
		f = fg_vlog_open(path, rotate, keep, &err);
	fg_region_set_vlog(d->r, f != NULL);
	if (force) {
		pthread_mutex_lock(&d->lock);
		d->vlog_reopen_done = req;
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
	}
	return f;
}

int ctld_vlog_reopen(struct ctld *d, int timeout_ms, char *path, size_t len)
{
	uint64_t deadline = fg_mono_ns() + (uint64_t)timeout_ms * 1000000u, req;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	req = ++d->vlog_reopen_req;
	d->vlog_reopen = true;
	snprintf(path, len, "%s", d->set.verdict_log);
	while (d->vlog_reopen_done < req && rc == 0) {
		uint64_t now = fg_mono_ns();

		if (now >= deadline || atomic_load(&d->stop))
			rc = -ETIMEDOUT;
		else
			ctld_wait(d, (int64_t)((deadline - now) / 1000000u) + 1);
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void *ctld_rings_main(void *arg)
{
	struct ctld *d = arg;
	struct fg_vlog_file *vf = vlog_open(d, NULL);
	uint64_t next_commit = 0, next_reap = 0;

	while (!atomic_load(&d->stop)) {
		uint64_t now = fg_mono_ns();
		int64_t commit_ms, moved, lines;
		bool reopen;

		pthread_mutex_lock(&d->lock);
		commit_ms = d->set.journal_commit_ms;
		reopen = d->vlog_reopen;
		pthread_mutex_unlock(&d->lock);
		if (reopen)
			vf = vlog_open(d, vf);
		moved = journal_step(d, now, &next_commit, commit_ms);
		lines = fg_vlog_drain(vf, d->r, VLOG_BATCH, d->st);
		if (now >= next_reap) {
			reap(d);
			next_reap = now + REAP_NS;
		}
		if (moved <= 0 && lines <= 0) {
			uint64_t wait = FG_MIN(IDLE_NS, next_commit > now ? next_commit - now : 0);
			struct timespec ts = { .tv_nsec = (long)wait };

			if (wait)
				nanosleep(&ts, NULL);
		}
	}
	fg_vlog_drain(vf, d->r, UINT32_MAX, d->st);
	fg_vlog_close(vf);
	return NULL;
}

void ctld_rings_flush(struct ctld *d)
{
	pthread_mutex_lock(&d->jlock);
	while (fg_journal_drain(d->j, d->r, DRAIN_BATCH) > 0)
		;
	if (fg_journal_commit(d->j, d->r) < 0)
		FG_LOG_ERR(CTLD, "final journal commit failed: %llu records not durable",
			   (unsigned long long)fg_journal_uncommitted(d->j));
	pthread_mutex_unlock(&d->jlock);
	fg_region_reap(d->r, NULL, &(const struct fg_region_resolver){ settle, d });
}
