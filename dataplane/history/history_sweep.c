/* SPDX-License-Identifier: MIT */
/*
 * history_sweep.c — expiry in slices, iteration, crash cleanup.
 *
 * RFC 5537 3 allows two ways to keep the history finite, and the sweep
 * does either:
 *  - by article date: drop an entry whose article date is older than the
 *    cutoff (a re-offer would be refused as too old anyway). The stored
 *    date is rounded up to the minute after first-seen, so an entry may be
 *    kept up to 59 s longer than its true date requires, never dropped
 *    earlier: dropped iff stored date < now - cutoff.
 *  - by first-seen: drop an entry first seen more than the retention ago;
 *    the retention must be at least cutoff + 24 h (the configuration
 *    refuses less). Exact to the second: dropped iff first_seen < now -
 *    retention.
 * Both modes also drop OFFERED entries past their deadline. ACCEPTING
 * entries are never dropped (their transfer decides).
 *
 * Crash cleanup comes in two strengths. fg_history_clear_transient, when
 * no writer is alive at all, drops every transient slot, RESV included.
 * fg_history_drop_owned, beside live writers, drops the transient entries
 * of one dead owner (history.h, "Owners"): each with a CAS on the word it
 * saw, so an OFFERED entry a live session takes over meanwhile is left to
 * it. A RESV slot names no owner and stays until the next full clear; a
 * killed insert leaves at most one such slot behind.
 *
 * A step examines a bounded number of buckets and deletes with a CAS on
 * the exact key word it decided on, so it never blocks a writer and never
 * deletes an entry that changed after it looked. An entry moving during a
 * pass may be missed (it moved behind the cursor); the next pass gets it.
 * It is counted once, with one exception:
 *  1. A relocation publishes its copy in the pair's other bucket before it
 *     deletes the source (history_insert.c, RELOCATION), so for a moment
 *     one entry has two identical key words in its pair.
 *  2. When the sweep deletes an expired final entry whose other bucket is
 *     still ahead of its cursor, it also deletes an identical published
 *     key word there: the twin of a relocation caught between its copy and
 *     its delete. The pair counts one expiry, and the relocation's own
 *     delete then fails and its undo finds nothing to undo. (A twin behind
 *     the cursor is never met again in this pass: the relocation's undo
 *     takes it.) The other buckets are read in batches, each prefetched
 *     when its entry is deleted, so the check costs no DRAM round trip of
 *     its own.
 *  3. A relocation checks its source again just before it publishes the
 *     copy, and backs out if the source is gone.
 *  4. What remains: a relocation that passes step 3, is preempted before
 *     its store, and stays preempted until the sweep has deleted the
 *     source and walked on to the copy. Then one entry counts two expiries
 *     (the `expired` statistic is one too high; no entry is lost or kept).
 */
#include <errno.h>

#include "history_int.h"

int fg_history_sweep_init(struct fg_history_sweep *s, enum fg_expiry_mode mode,
			  fg_time_t now, int64_t cutoff, int64_t retention, bool dry_run)
{
	*s = (struct fg_history_sweep){ .mode = mode, .now = now, .cutoff = cutoff,
					 .retention = retention, .dry_run = dry_run };
	if (mode == FG_EXPIRY_ARTICLE_DATE)
		return cutoff < 0 || cutoff > FG_HISTORY_RETENTION_MAX ? -EINVAL : 0;
	if (mode == FG_EXPIRY_FIRST_SEEN)
		return retention < 0 || retention > FG_HISTORY_RETENTION_MAX ? -EINVAL : 0;
	return -EINVAL;
}

/* Is a slot's entry past its time under this sweep's rule? */
static bool expired(const struct fg_history_sweep *s, const struct fg_history_entry *e)
{
	if (e->state == FG_HISTORY_OFFERED)
		return (e->flags & FG_HISTORY_F_EXPIRED) != 0;
	if (e->state < FG_HISTORY_ACCEPTED)
		return false;
	if (s->mode == FG_EXPIRY_ARTICLE_DATE)
		return e->article_date < s->now - s->cutoff;
	return e->first_seen < s->now - s->retention;
}

/* Deleted entries whose other bucket a step reads at once (step 2). */
#define TWIN_BATCH 32u

struct twin {
	uint64_t b;		/* the other bucket of the pair, ahead of the cursor */
	uint64_t w;		/* the key word deleted */
};

/* Step 2 above: delete a relocation's published copy of each w (an
 * identical key word) in its other bucket, if one is there. */
static void delete_twins(struct fg_history *h, const struct twin *t, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		struct fg_hbucket *bk = fg_hbkt(h, t[j].b);

		for (unsigned i = 0; i < FG_HSLOTS; i++)
			if (atomic_load(&bk->key[i]) == t[j].w &&
			    fg_hdelete(h, t[j].b * FG_HSLOTS + i, t[j].w))
				break;
	}
}

int fg_history_sweep_step(struct fg_history *h, struct fg_history_sweep *s, unsigned budget)
{
	uint64_t end = FG_MIN(s->cursor + budget, h->m);
	struct twin twins[TWIN_BATCH];
	unsigned n_twins = 0;

	for (; s->cursor < end; s->cursor++) {
		struct fg_hbucket *bk = fg_hbkt(h, s->cursor);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			struct fg_history_entry e;
			uint64_t w;
			uint32_t a;

			if (!fg_hs_published(fg_hw_state(atomic_load(&bk->key[i]))) ||
			    !fg_hread_slot(bk, i, &w, &a) || !fg_hs_published(fg_hw_state(w)))
				continue;
			fg_hdecode(w, a, s->now, &e);
			if (!expired(s, &e)) {
				s->kept++;
				s->kept_by_state[e.state]++;
				continue;
			}
			if (!s->dry_run && !fg_hdelete(h, s->cursor * FG_HSLOTS + i, w))
				continue;	/* changed under us: the next pass decides */
			if (e.state == FG_HISTORY_OFFERED) {
				s->expired_offers++;
				continue;
			}
			if (!s->dry_run) {
				uint64_t alt = fg_halt_global(h, s->cursor, fg_hw_fp(w));

				if (alt > s->cursor) {
					__builtin_prefetch(fg_hbkt(h, alt));
					twins[n_twins++] = (struct twin){ alt, w };
					if (n_twins == TWIN_BATCH) {
						delete_twins(h, twins, n_twins);
						n_twins = 0;
					}
				}
			}
			s->expired++;
			s->expired_by_state[e.state]++;
			if (!s->dry_run)
				atomic_fetch_add_explicit(&h->hdr->expired, 1, memory_order_relaxed);
		}
		s->buckets++;
	}
	delete_twins(h, twins, n_twins);
	s->done = s->cursor >= h->m;
	return !s->done;
}

/* Delete every published final entry of loc in bucket b; how many. An
 * in-flight entry of it sets *busy. */
static unsigned forget_in(struct fg_history *h, const struct fg_hloc *loc, uint64_t b,
			  fg_time_t now, struct fg_history_entry *was, bool *busy)
{
	struct fg_hbucket *bk = fg_hbkt(h, b);
	unsigned n = 0;

	for (unsigned i = 0; i < FG_HSLOTS; i++) {
		uint64_t w;
		uint32_t a;

		if (!fg_hread_slot(bk, i, &w, &a) || fg_hw_fp(w) != loc->fp ||
		    !fg_hs_published(fg_hw_state(w)))
			continue;
		if (!fg_hs_final(fg_hw_state(w))) {
			*busy = true;
			continue;
		}
		fg_hdecode(w, a, now, was);
		n += fg_hdelete(h, b * FG_HSLOTS + i, w);
	}
	return n;
}

/* A relocation copies an entry before it clears the source, so a pass may
 * meet it twice or miss it once: look again until a pass deletes nothing. */
#define FORGET_PASSES 8

int fg_history_forget(struct fg_history *h, const struct fg_history_key *k, fg_time_t now,
		      struct fg_history_entry *was)
{
	struct fg_history_entry tmp;
	struct fg_hloc loc;
	unsigned total = 0, n = 1;
	bool busy = false;

	fg_hlocate(h, k, &loc);
	for (unsigned pass = 0; pass < FORGET_PASSES && n; pass++) {
		n = forget_in(h, &loc, loc.b1, now, was ? was : &tmp, &busy);
		if (loc.b2 != loc.b1)
			n += forget_in(h, &loc, loc.b2, now, was ? was : &tmp, &busy);
		total += n;
	}
	if (total)
		return 0;
	return busy ? -EBUSY : -ENOENT;
}

int fg_history_iterate(const struct fg_history *h, uint64_t *cursor, unsigned budget,
		       fg_history_iter_fn *fn, void *arg, fg_time_t now)
{
	uint64_t end = FG_MIN(*cursor + budget, h->m);

	for (; *cursor < end; (*cursor)++) {
		const struct fg_hbucket *bk = fg_hbkt(h, *cursor);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			struct fg_history_record r;
			uint64_t w;
			uint32_t a;
			int rc;

			if (!fg_hread_slot(bk, i, &w, &a) || !fg_hs_published(fg_hw_state(w)))
				continue;
			r.bucket = *cursor;
			r.fingerprint = fg_hw_fp(w);
			fg_hdecode(w, a, now, &r.e);
			rc = fn(arg, &r);
			if (rc) {
				(*cursor)++;
				return rc;
			}
		}
	}
	return *cursor < h->m;
}

/* Per internal state, how many slots of the table hold it. Callers make
 * sure nobody writes meanwhile (or accept an approximate answer). */
void fg_hrecount(const struct fg_hbucket *b, uint64_t m, uint64_t counts[8])
{
	for (unsigned st = 0; st < 8; st++)
		counts[st] = 0;
	for (uint64_t j = 0; j < m; j++)
		for (unsigned i = 0; i < FG_HSLOTS; i++)
			counts[fg_hw_state(atomic_load_explicit(&b[j].key[i],
								 memory_order_relaxed))]++;
}

/* Put exact counts into the stripes (stripe 0 holds them all). */
void fg_hset_counts(struct fg_hregion *r, const uint64_t counts[8])
{
	for (unsigned s = 0; s < FG_HSTRIPES; s++)
		for (unsigned st = 0; st < 8; st++)
			atomic_store_explicit(&r->stripe[s].n[st],
					      s == 0 && fg_hs_published(st) ? (int64_t)counts[st] : 0,
					      memory_order_relaxed);
}

uint64_t fg_history_clear_transient(struct fg_history *h)
{
	uint64_t n = 0, counts[8];

	for (uint64_t j = 0; j < h->m; j++) {
		struct fg_hbucket *bk = fg_hbkt(h, j);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load(&bk->key[i]);
			unsigned st = fg_hw_state(w);

			/* a FREE word with bits set is damage: make it a real FREE */
			if (w == 0 || fg_hs_final(st))
				continue;
			atomic_store(&bk->key[i], 0);
			fg_hbump(bk);
			n += st != FG_HS_FREE;
		}
	}
	/* a writer that died between a CAS and its count update left the
	 * counts off by one: with nobody writing, recount */
	fg_hrecount(h->b, h->m, counts);
	fg_hset_counts(h->hdr, counts);
	return n;
}

static bool owned_by(uint64_t w, unsigned owner)
{
	unsigned st = fg_hw_state(w);

	if (st != FG_HS_BUSY && st != FG_HS_OFFERED && st != FG_HS_ACCEPTING)
		return false;
	return owner == FG_HISTORY_OWNER_ANY || fg_hw_x(w) == owner;
}

static void owned_add(struct fg_history_owned *o, unsigned st)
{
	if (st == FG_HS_OFFERED)
		o->offered++;
	else if (st == FG_HS_ACCEPTING)
		o->accepting++;
	else
		o->pending++;
}

void fg_history_count_owned(const struct fg_history *h, unsigned owner,
			    struct fg_history_owned *out)
{
	*out = (struct fg_history_owned){ 0 };
	for (uint64_t j = 0; j < h->m; j++) {
		const struct fg_hbucket *bk = fg_hbkt(h, j);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load_explicit(&bk->key[i], memory_order_relaxed);

			if (owned_by(w, owner))
				owned_add(out, fg_hw_state(w));
		}
	}
}

uint64_t fg_history_drop_owned(struct fg_history *h, unsigned owner,
			       struct fg_history_owned *out)
{
	struct fg_history_owned n = { 0 };

	for (uint64_t j = 0; j < h->m; j++) {
		struct fg_hbucket *bk = fg_hbkt(h, j);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load(&bk->key[i]);
			unsigned st = fg_hw_state(w);
			bool gone;

			if (!owned_by(w, owner))
				continue;
			if (st == FG_HS_BUSY) {
				/* never published, so never counted */
				gone = atomic_compare_exchange_strong(&bk->key[i], &w, 0);
				if (gone)
					fg_hbump(bk);
			} else {
				gone = fg_hdelete(h, j * FG_HSLOTS + i, w);
			}
			if (gone)
				owned_add(&n, st);
		}
	}
	if (out)
		*out = n;
	return n.offered + n.accepting + n.pending;
}
