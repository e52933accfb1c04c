/* SPDX-License-Identifier: MIT */
/*
 * jrec.c — journal records and the writer side: what a writer calls after
 * each final history transition (journal.h explains reserve/append).
 */
#include <errno.h>
#include <string.h>

#include "floodgate/journal.h"

int fg_jpos_cmp(const struct fg_jpos *a, const struct fg_jpos *b)
{
	if (a->segment != b->segment)
		return a->segment < b->segment ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

static bool final_state(unsigned s)
{
	return s == FG_HISTORY_ACCEPTED || s == FG_HISTORY_REJECTED ||
	       s == FG_HISTORY_SUPERSEDED;
}

int fg_jrec_make(struct fg_jrec *r, const struct fg_history_key *k, enum fg_history_state final,
		 fg_time_t article_date, fg_time_t first_seen, unsigned flags,
		 enum fg_reason reason)
{
	int64_t off = article_date - first_seen;

	if (!final_state(final) || off < INT32_MIN || off > INT32_MAX ||
	    (flags & ~FG_JREC_F_DATE_MASK) || (flags & FG_JREC_F_DATE_MASK) == FG_JREC_F_DATE_MASK ||
	    (unsigned)reason >= FG_REASON__COUNT)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->key_lo = k->lo;
	r->key_hi = k->hi;
	r->first_seen = first_seen;
	r->date_off = (int32_t)off;
	r->state = (uint8_t)final;
	r->flags = (uint8_t)flags;
	r->reason = (uint8_t)reason;
	return 0;
}

void fg_jrec_make_forget(struct fg_jrec *r, const struct fg_history_key *k, fg_time_t when)
{
	memset(r, 0, sizeof(*r));
	r->key_lo = k->lo;
	r->key_hi = k->hi;
	r->first_seen = when;
	r->state = FG_HISTORY_ABSENT;
	r->flags = FG_JREC_F_FORGET;
}

bool fg_jrec_valid(const struct fg_jrec *r)
{
	if (r->flags & FG_JREC_F_FORGET)
		return r->state == FG_HISTORY_ABSENT && r->flags == FG_JREC_F_FORGET &&
		       r->date_off == 0 && r->reason == 0 && r->reserved == 0;
	return final_state(r->state) && !(r->flags & ~FG_JREC_F_DATE_MASK) &&
	       (r->flags & FG_JREC_F_DATE_MASK) != FG_JREC_F_DATE_MASK &&
	       r->reason < FG_REASON__COUNT && r->reserved == 0;
}

const char *fg_jrec_date_source(unsigned flags)
{
	switch (flags & FG_JREC_F_DATE_MASK) {
	case FG_JREC_F_DATE_INJECTION:
		return "Injection-Date";
	case FG_JREC_F_DATE_DATE:
		return "Date";
	default:
		return "unknown";
	}
}

int fg_journal_reserve(struct fg_region_writer *w)
{
	int rc = fg_region_ring_reserve(w, FG_RING_JOURNAL);

	if (rc < 0)
		fg_stats_inc(&fg_region_writer_stats(w)->total, FG_CTR_JOURNAL_RING_FULL);
	return rc;
}

void fg_journal_unreserve(struct fg_region_writer *w)
{
	fg_region_ring_unreserve(w, FG_RING_JOURNAL);
}

int fg_journal_append(struct fg_region_writer *w, const struct fg_history_key *k,
		      enum fg_history_state final, fg_time_t article_date,
		      fg_time_t first_seen, unsigned flags, enum fg_reason reason)
{
	struct fg_jrec rec;
	int rc = fg_jrec_make(&rec, k, final, article_date, first_seen, flags, reason);

	if (rc < 0)
		return rc;
	rc = fg_region_ring_push(w, FG_RING_JOURNAL, &rec);
	if (rc < 0)
		fg_stats_inc(&fg_region_writer_stats(w)->total, FG_CTR_JOURNAL_RING_FULL);
	return rc;
}
