/* SPDX-License-Identifier: MIT */
/*
 * metrics_int.h — what metrics.c (the sample, the JSON, the table, the
 * downstreams) and prom.c (the Prometheus text) share inside the metrics
 * module: one render's sample, which every renderer reads and nothing
 * else, so the formats of one render agree. Not an API.
 */
#ifndef FLOODGATE_METRICS_INT_H
#define FLOODGATE_METRICS_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/history.h"
#include "floodgate/metrics.h"

/* A live writer that counts its loop's cycles (floodgate's workers). */
struct lcore_load {
	char name[FG_REGION_NAME_MAX];
	uint64_t busy, idle;		/* TSC cycles */
};

struct sample {
	struct fg_region_wstats *st;	/* heap: a few hundred KiB */
	struct lcore_load *lc;		/* heap: one per slot at most */
	unsigned n_lc;
	struct fg_history_stats hs;
	unsigned npeers;
	uint64_t *sessions;		/* heap: each peer's sessions open now (live slots) */
	unsigned writers;
	bool clock_suspect;
	struct fg_kclock kclock;
	struct fg_nic_block *nic;	/* heap: each dataplane's port figures */
	unsigned n_nic;
};

/* metrics.c: sample everything once; false on no memory (nothing to free). */
bool metrics_sample_take(struct fg_region *r, struct sample *s);
void metrics_sample_free(struct sample *s);

/* The share of a writer's loop spent on work, since it claimed its slot. */
static inline double lcore_busy_share(const struct lcore_load *l)
{
	return (double)l->busy / (double)(l->busy + l->idle);
}

/* Seconds since `t`, NaN for never. */
static inline double age(fg_time_t now, fg_time_t t)
{
	return t ? (double)(now - t) : NAN;
}

#endif /* FLOODGATE_METRICS_INT_H */
