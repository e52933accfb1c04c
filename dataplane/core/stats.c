/* SPDX-License-Identifier: MIT */
/*
 * stats.c — names of counters and reasons, histogram and block arithmetic.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "floodgate/stats.h"

static const char *const counter_names[] = {
#define FG_COUNTER(id, name, help) [FG_CTR_##id] = name,
#include "floodgate/tbl/counters.h"
#undef FG_COUNTER
};

static const char *const counter_helps[] = {
#define FG_COUNTER(id, name, help) [FG_CTR_##id] = help,
#include "floodgate/tbl/counters.h"
#undef FG_COUNTER
};

static const char *const reason_names[] = {
	[FG_REASON_NONE] = "none",
#define FG_REASON(id, name, help) [FG_REASON_##id] = name,
#include "floodgate/tbl/reasons.h"
#undef FG_REASON
};

static const char *const reason_helps[] = {
	[FG_REASON_NONE] = "accepted",
#define FG_REASON(id, name, help) [FG_REASON_##id] = help,
#include "floodgate/tbl/reasons.h"
#undef FG_REASON
};

const char *fg_counter_name(enum fg_counter c)
{
	return (unsigned)c < FG_CTR__COUNT ? counter_names[c] : NULL;
}

const char *fg_counter_help(enum fg_counter c)
{
	return (unsigned)c < FG_CTR__COUNT ? counter_helps[c] : NULL;
}

const char *fg_reason_name(enum fg_reason r)
{
	return (unsigned)r < FG_REASON__COUNT ? reason_names[r] : NULL;
}

const char *fg_reason_help(enum fg_reason r)
{
	return (unsigned)r < FG_REASON__COUNT ? reason_helps[r] : NULL;
}

int fg_reason_parse(const char *name)
{
	for (unsigned r = 1; r < FG_REASON__COUNT; r++)
		if (strcmp(name, reason_names[r]) == 0)
			return (int)r;
	return -EINVAL;
}

void fg_hist_add(struct fg_hist *h, int64_t v)
{
	unsigned i;

	h->count++;
	/* saturate: a sum is a gauge of magnitude, never worth a UB wrap */
	if (__builtin_add_overflow(h->sum, v, &h->sum))
		h->sum = v < 0 ? INT64_MIN : INT64_MAX;
	if (v < 0) {
		h->negative++;
		return;
	}
	i = v == 0 ? 0 : 64 - (unsigned)__builtin_clzll((uint64_t)v);
	if (i >= FG_HIST_BUCKETS)
		i = FG_HIST_BUCKETS - 1;
	h->bucket[i]++;
}

int64_t fg_hist_bucket_le(unsigned i)
{
	return (int64_t)1 << (i < 62 ? i : 62);
}

void fg_hist_merge(struct fg_hist *into, const struct fg_hist *from)
{
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->negative += from->negative;
	into->count += from->count;
	if (__builtin_add_overflow(into->sum, from->sum, &into->sum))
		into->sum = from->sum < 0 ? INT64_MIN : INT64_MAX;
}

double fg_hist_mean(const struct fg_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : NAN;
}

double fg_stats_first_share(const struct fg_stats *s)
{
	uint64_t offers = s->ctr[FG_CTR_NNTP_OFFERS];

	return offers ? (double)s->ctr[FG_CTR_NNTP_OFFERS_FIRST] / (double)offers : NAN;
}

void fg_stats_merge(struct fg_stats *into, const struct fg_stats *from)
{
	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		into->ctr[i] += from->ctr[i];
	for (unsigned i = 0; i < FG_REASON__COUNT; i++)
		into->rejected[i] += from->rejected[i];
}
