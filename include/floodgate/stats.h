/* SPDX-License-Identifier: MIT */
/*
 * stats.h — counter identities and the per-thread counter block.
 *
 * One X-macro table (tbl/counters.h, tbl/reasons.h) gives each counter its
 * enum, exported name and help text. A writer (a worker lcore, the host's
 * thread) owns one struct fg_stats and bumps it with plain increments; a
 * reader sums the blocks. Reads of a block being written may see a count a
 * few increments old, never a torn 64-bit value (aligned 8-byte stores).
 */
#ifndef FLOODGATE_STATS_H
#define FLOODGATE_STATS_H

#include <stdint.h>

#include "floodgate/common.h"

enum fg_counter {
#define FG_COUNTER(id, name, help) FG_CTR_##id,
#include "floodgate/tbl/counters.h"
#undef FG_COUNTER
	FG_CTR__COUNT
};

enum fg_reason {
	FG_REASON_NONE = 0,
#define FG_REASON(id, name, help) FG_REASON_##id,
#include "floodgate/tbl/reasons.h"
#undef FG_REASON
	FG_REASON__COUNT
};

/* Exported name stem and help of a counter; NULL if out of range. */
const char *fg_counter_name(enum fg_counter c);
const char *fg_counter_help(enum fg_counter c);
/* Operator-facing name ("too-old") and help of a reason; "none" for NONE. */
const char *fg_reason_name(enum fg_reason r);
const char *fg_reason_help(enum fg_reason r);
/* Reason by name, or -EINVAL. */
int fg_reason_parse(const char *name);

/*
 * Log2 histogram of a non-negative quantity (seconds for the two delays of
 * seed 002). Bucket i counts values v with 2^(i-1) <= v < 2^i (bucket 0:
 * v == 0); negative values are counted apart: a delay that is negative
 * says a clock or a header is wrong, which is worth seeing on its own.
 */
#define FG_HIST_BUCKETS 32
struct fg_hist {
	uint64_t bucket[FG_HIST_BUCKETS];
	uint64_t negative;
	uint64_t count;
	int64_t sum;
};

void fg_hist_add(struct fg_hist *h, int64_t v);
/* Upper bound (exclusive) of bucket i: 1, 2, 4, ... */
int64_t fg_hist_bucket_le(unsigned i);
void fg_hist_merge(struct fg_hist *into, const struct fg_hist *from);
/* The mean of the values counted; NaN when there are none. */
double fg_hist_mean(const struct fg_hist *h);

struct fg_stats {
	uint64_t ctr[FG_CTR__COUNT];
	uint64_t rejected[FG_REASON__COUNT];
} FG_CACHE_ALIGNED;

/* Seed 002: the share of a block's offers that were of an ID the history
 * did not hold yet (nntp_offers_first / nntp_offers); NaN before any. */
double fg_stats_first_share(const struct fg_stats *s);

static inline void fg_stats_inc(struct fg_stats *s, enum fg_counter c)
{
	s->ctr[c]++;
}

static inline void fg_stats_add(struct fg_stats *s, enum fg_counter c, uint64_t n)
{
	s->ctr[c] += n;
}

void fg_stats_merge(struct fg_stats *into, const struct fg_stats *from);

#endif /* FLOODGATE_STATS_H */
