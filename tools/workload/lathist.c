/* SPDX-License-Identifier: MIT */
/*
 * lathist.c — log-linear latency histogram (layout in lathist.h).
 *
 * Index of v >= 16 with e = floor(log2 v): (e - 3) * 16 + the four bits
 * below the leading one. Buckets 0..15 hold 0..15 exactly, so the first
 * power-of-two row (e = 4, 16..31) continues them without a gap.
 */
#include <string.h>

#include "workload/lathist.h"

void fg_lathist_init(struct fg_lathist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned fg_lathist_index(uint64_t v)
{
	unsigned e;

	if (v < FG_LATHIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return (e - FG_LATHIST_SUB_BITS + 1) * FG_LATHIST_SUB +
	       (unsigned)((v >> (e - FG_LATHIST_SUB_BITS)) & (FG_LATHIST_SUB - 1));
}

uint64_t fg_lathist_lowest(unsigned idx)
{
	unsigned e, sub;

	if (idx < FG_LATHIST_SUB)
		return idx;
	e = idx / FG_LATHIST_SUB + FG_LATHIST_SUB_BITS - 1;
	sub = idx % FG_LATHIST_SUB;
	return (uint64_t)(FG_LATHIST_SUB + sub) << (e - FG_LATHIST_SUB_BITS);
}

void fg_lathist_add(struct fg_lathist *h, uint64_t v)
{
	h->b[fg_lathist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void fg_lathist_merge(struct fg_lathist *into, const struct fg_lathist *from)
{
	for (unsigned i = 0; i < FG_LATHIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t fg_lathist_pct(const struct fg_lathist *h, double pct)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	/* the rank-th smallest value, 1-based, rounded up */
	rank = (uint64_t)(pct / 100.0 * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < FG_LATHIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t top = i + 1 < FG_LATHIST_BUCKETS ?
				       fg_lathist_lowest(i + 1) - 1 : UINT64_MAX;

			return top < h->max ? top : h->max;
		}
	}
	return h->max;
}
