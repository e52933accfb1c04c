/* SPDX-License-Identifier: MIT */
/*
 * lathist.h — a log-linear histogram of latencies (HDR-style).
 *
 * Values (nanoseconds, or any unsigned unit) below 16 have a bucket each;
 * above, every power of two is split into 16 linear sub-buckets, so a
 * percentile is within 1/16 (6.25 %) of the true value whatever its
 * magnitude, in 976 fixed counters (8 KiB) and no allocation. Merging two
 * histograms is adding counters.
 */
#ifndef FLOODGATE_LATHIST_H
#define FLOODGATE_LATHIST_H

#include <stdint.h>

#define FG_LATHIST_SUB_BITS 4
#define FG_LATHIST_SUB (1u << FG_LATHIST_SUB_BITS)
#define FG_LATHIST_BUCKETS ((64 - FG_LATHIST_SUB_BITS + 1) * FG_LATHIST_SUB)

struct fg_lathist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;		/* UINT64_MAX while empty */
	uint64_t max;
	uint64_t b[FG_LATHIST_BUCKETS];
};

void fg_lathist_init(struct fg_lathist *h);
void fg_lathist_add(struct fg_lathist *h, uint64_t v);
void fg_lathist_merge(struct fg_lathist *into, const struct fg_lathist *from);
/* Bucket of v, and the smallest value of a bucket (for tests and plots). */
unsigned fg_lathist_index(uint64_t v);
uint64_t fg_lathist_lowest(unsigned idx);
/*
 * The value at percentile pct (0 < pct <= 100): the highest value of the
 * bucket that holds it, never more than the largest value seen. 0 when
 * the histogram is empty.
 */
uint64_t fg_lathist_pct(const struct fg_lathist *h, double pct);

#endif /* FLOODGATE_LATHIST_H */
