/* SPDX-License-Identifier: MIT */
/*
 * bench_kit.h — what several benchmarks share, so that each states only
 * what it measures:
 *   - the machine a figure was taken on: the CPU model, the load average
 *     (other work on the cores slows every figure);
 *   - SplitMix64, the keys' and the workloads' random numbers;
 *   - a region holding a history table, of the shape both a benchmark's
 *     live table and its restore use (struct bench_table);
 *   - the journal records a restore replays after its snapshot (n
 *     ACCEPTED records, appended through a writer slot and drained and
 *     committed as floodctld would), and the restore itself, timed and
 *     checked to have come from the snapshot and that journal; the
 *     expiry sweep after it.
 * static inline: each benchmark is one program and uses some of these.
 */
#ifndef FLOODGATE_BENCH_KIT_H
#define FLOODGATE_BENCH_KIT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/expiry.h"
#include "floodgate/journal.h"
#include "floodgate/region.h"
#include "floodgate/snapshot.h"

static inline void bench_die(const char *what)
{
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
	exit(1);
}

static inline const char *bench_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	return buf;
}

/* The 1-minute load average, or -1 when /proc does not say. */
static inline double bench_load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* SplitMix64's finalizer (Steele, Lea and Flood, 2014): neighbouring
 * inputs give unrelated outputs. */
static inline uint64_t bench_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next number of the SplitMix64 sequence that *state walks. */
static inline uint64_t bench_rng(uint64_t *state)
{
	return bench_mix64(*state += 0x9e3779b97f4a7c15ull);
}

/* ---- a region with a history table, and its restore ---- */

/* Two writer slots (a worker's and the tail's), the default journal ring,
 * a small verdict-log ring; the table defers when full and alarms at 95 %. */
struct bench_table {
	uint64_t capacity;
	uint32_t shards;		/* 0: the restore's own choice */
	enum fg_region_huge huge;
	fg_time_t now;
};

static inline void bench_table_params(const struct bench_table *t, struct fg_region_params *rp,
				      struct fg_history_params *hp)
{
	memset(rp, 0, sizeof(*rp));
	memset(hp, 0, sizeof(*hp));
	rp->writers = 2;
	rp->journal_ring = FG_REGION_JOURNAL_RING_DEFAULT;
	rp->vlog_ring = 16;
	rp->huge = t->huge;
	hp->capacity = t->capacity;
	hp->shards = t->shards;
	hp->full_policy = FG_FULL_DEFER;
	hp->alarm_load_pct = 95;
	hp->now = t->now;
}

/* A region at shm holding an empty table of that shape, hashed with seed
 * (NULL: a random one). Not published: a caller that wants it attached
 * by others publishes it. */
static inline struct fg_region *bench_region(const char *shm, const struct bench_table *t,
					     const uint8_t seed[FG_HISTORY_SEED_LEN])
{
	struct fg_region_params rp;
	struct fg_history_params hp;
	struct fg_history *h;
	struct fg_region *r;
	char why[256];
	size_t len;
	void *mem;

	bench_table_params(t, &rp, &hp);
	if (seed)
		memcpy(hp.seed, seed, sizeof(hp.seed));
	else if (fg_history_seed_random(hp.seed) < 0)
		bench_die("no random seed");
	memcpy(rp.seed, hp.seed, sizeof(rp.seed));
	rp.history_size = fg_history_region_size(t->capacity, 0);
	r = fg_region_create(shm, &rp, why, sizeof(why));
	if (!r)
		bench_die(why);
	mem = fg_region_history_mem(r, &len);
	h = fg_history_create(mem, len, &hp);
	if (!h)
		bench_die("fg_history_create");
	fg_region_set_history(r, h);
	return r;
}

static inline int bench_journal_tail(struct fg_region *r, const char *dir, uint64_t n,
				     fg_time_t now, struct fg_history_key (*next_key)(uint64_t i))
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

/* Restore dir's snapshot and its journal of `tail` records into a new
 * region at shm; its wall time into *seconds. Dies unless the restore
 * came from the snapshot and replayed exactly the tail. */
static inline struct fg_region *bench_restore(const char *dir, const char *shm,
					      const struct bench_table *t, uint64_t tail,
					      struct fg_restore_result *res, double *seconds)
{
	struct fg_restore_params rp;
	struct fg_region *r;
	char why[256];
	uint64_t t0;

	memset(&rp, 0, sizeof(rp));
	rp.data_dir = dir;
	rp.shm_path = shm;
	rp.now = t->now;
	bench_table_params(t, &rp.region, &rp.history);
	t0 = fg_mono_ns();
	r = fg_restore(&rp, res, why, sizeof(why));
	*seconds = (double)(fg_mono_ns() - t0) * 1e-9;
	if (!r || res->from != FG_RESTORE_SNAPSHOT || res->inserted != tail)
		bench_die("restore did not come from the snapshot and its journal");
	return r;
}

/* One full expiry pass over r's table as floodctld's first-seen schedule
 * runs it with a cutoff of 10 days and a retention of 11 (the benchmarks
 * fill one entry in ten beyond 11 days): its time and what it expired. */
static inline void bench_sweep(struct fg_region *r, fg_time_t now, double *seconds,
			       uint64_t *expired)
{
	const int64_t day = 86400;
	struct fg_expiry_result e;

	if (fg_expiry_pass(fg_region_history(r), FG_EXPIRY_FIRST_SEEN, now, 10 * day, 11 * day,
			   false, 0, 0, NULL, &e) < 0)
		bench_die("sweep");
	*seconds = e.seconds;
	*expired = e.expired;
}

#endif /* FLOODGATE_BENCH_KIT_H */
