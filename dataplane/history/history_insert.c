/* SPDX-License-Identifier: MIT */
/*
 * history_insert.c — insert-if-absent, the state transitions, and making
 * room (relocation along a cuckoo path, eviction, the full-table policy).
 *
 * INSERT (offer, begin_accept on an absent ID, insert_final) — no locks:
 *
 *  1. Scan the pair (counter-validated: see scan_pair). A published copy
 *     (OFFERED, ACCEPTING, final) decides the answer; a BUSY copy means
 *     another insert of this ID is deciding: -EAGAIN.
 *  2. CAS a FREE slot to BUSY(fp) — the tentative entry — write its aux,
 *     bump the bucket's counter.
 *  3. Decide: scan the pair again, counter-validated.
 *     - a published copy: withdraw (BUSY -> FREE) and go back to 1, which
 *       reports it;
 *     - a BUSY copy at a lower slot position (bucket * 5 + slot): withdraw,
 *       -EAGAIN (that one decides);
 *     - BUSY copies at higher positions: kill them, CAS BUSY -> RESV (only
 *       their owner frees a RESV slot, so its own publish CAS fails and it
 *       cannot be fooled by a reused slot).
 *  4. Publish: CAS our BUSY word to the target word. If it fails we were
 *     killed by a lower copy: free the slot, -EAGAIN.
 *
 * Exactly one winner: all placements and scans are seq_cst, so of two
 * inserts of one ID that both placed, at least one sees the other's entry
 * in its decide scan (the store-load pattern of Dekker's algorithm). It
 * sees it published (and withdraws), or BUSY below it (and withdraws), or
 * BUSY above it (and kills it — or, if the kill CAS fails because that one
 * published first, rescans and withdraws). So two cannot both publish.
 * And one does: an insert gives up only in favour of a published copy or
 * of a deciding copy at a lower position, so the lowest placed copy
 * publishes unless a copy is already published. docs/history.md has the
 * full argument, including why relocations cannot hide a copy from a
 * counter-validated scan.
 *
 * Writers write a slot's aux word only while its key word is in a state
 * readers ignore (BUSY, RESV, ACCEPTING), then publish the key word with a
 * seq_cst CAS (a release): a reader that sees the key word (acquire) sees
 * the aux that goes with it.
 *
 * RELOCATION (only final entries move; OFFERED and ACCEPTING are pinned so
 * the refs their holders keep stay valid): copy, then delete. Claim a FREE
 * slot in the other bucket as RESV, write aux, store the key word, bump
 * that bucket; then CAS the source to FREE and bump its bucket. If the
 * source changed meanwhile (deleted by a sweep, moved by another thread),
 * undo the copy; the store of the key word is skipped when the source is
 * already gone, so a copy of a deleted entry is rarely published at all
 * (history_sweep.c says what a sweep does about the rest). A reader
 * therefore always finds a moving entry in one of the two buckets or sees
 * a counter move.
 */
#include <errno.h>
#include <string.h>

#include "history_int.h"

#define NO_SLOT UINT64_MAX
#define RETRY 1			/* internal: scan again */
#define ROOM_TRIES 8		/* make_room rounds before an insert gives up */
/* The search's queue: the pair, then each node's FG_HSLOTS entries, one
 * level per move short of the last: 2 + 10 + 50 + 250 = 312 for 4 moves. */
#define BFS_POW5(d) (((d) > 0 ? 5u : 1u) * ((d) > 1 ? 5u : 1u) * ((d) > 2 ? 5u : 1u) * \
		     ((d) > 3 ? 5u : 1u) * ((d) > 4 ? 5u : 1u) * ((d) > 5 ? 5u : 1u))
#define BFS_NODES ((int)(FG_HBFS_DEPTH > 1 ? 2u * (BFS_POW5(FG_HBFS_DEPTH) - 1u) / 4u : 2u))
_Static_assert(FG_HSLOTS == 5 && FG_HBFS_DEPTH <= 6, "BFS_NODES counts 5 slots a bucket, 6 moves at most");
_Static_assert(FG_HBFS_DEPTH != 4 || BFS_NODES == 312, "BFS_NODES for 4 moves");

enum op { OP_OFFER, OP_ACCEPT, OP_FINAL };

/* What a counter-validated scan of a pair saw for one fingerprint. */
struct scan {
	uint64_t pub;			/* a published copy's slot, or NO_SLOT */
	uint64_t pub_w;
	uint32_t pub_aux;
	unsigned n_busy;
	uint64_t busy_slot[2 * FG_HSLOTS];
	uint64_t busy_w[2 * FG_HSLOTS];
	unsigned free_mask[2];		/* FREE slots of b1, b2 (bit i = slot i) */
};

static inline void hook(const struct fg_history *h, enum fg_history_hook_point p)
{
	if (h->hook)
		h->hook(h->hook_arg, p);
}

static inline _Atomic uint64_t *slot_key(const struct fg_history *h, uint64_t gs)
{
	return &fg_hbkt(h, gs / FG_HSLOTS)->key[gs % FG_HSLOTS];
}

static inline _Atomic uint32_t *slot_aux(const struct fg_history *h, uint64_t gs)
{
	return &fg_hbkt(h, gs / FG_HSLOTS)->aux[gs % FG_HSLOTS];
}

static inline bool cas(_Atomic uint64_t *p, uint64_t expect, uint64_t desired)
{
	return atomic_compare_exchange_strong(p, &expect, desired);
}

/* One bucket's part of a scan; false if a slot kept changing. */
static bool scan_bucket(const struct fg_history *h, uint64_t b, unsigned which,
			uint64_t fp, uint64_t own, struct scan *s)
{
	const struct fg_hbucket *bk = fg_hbkt(h, b);

	for (unsigned i = 0; i < FG_HSLOTS; i++) {
		uint64_t gs = b * FG_HSLOTS + i;
		uint64_t w = atomic_load(&bk->key[i]);
		unsigned st = fg_hw_state(w);

		if (st == FG_HS_FREE) {
			/* a FREE word is 0; any other bits are damage (a region
			 * attached without restore): never claim such a slot */
			s->free_mask[which] |= (w == 0) << i;
			continue;
		}
		if (fg_hw_fp(w) != fp || gs == own || st == FG_HS_RESV)
			continue;
		if (st == FG_HS_BUSY) {
			s->busy_slot[s->n_busy] = gs;
			s->busy_w[s->n_busy++] = w;
		} else if (s->pub == NO_SLOT) {
			uint64_t kw;
			uint32_t a;

			if (!fg_hread_slot(bk, i, &kw, &a) || kw != w)
				return false;
			s->pub = gs;
			s->pub_w = w;
			s->pub_aux = a;
		}
	}
	return true;
}

/*
 * Scan both buckets of the pair, repeating until neither change counter
 * moved during the scan: then no relocation step happened in it, and any
 * published copy present throughout was seen. Lock-free: a repeat means
 * another thread completed a step.
 */
static void scan_pair(const struct fg_history *h, const struct fg_hloc *loc, uint64_t own,
		      struct scan *s)
{
	const struct fg_hbucket *b1 = fg_hbkt(h, loc->b1), *b2 = fg_hbkt(h, loc->b2);

	for (;;) {
		uint32_t c1 = atomic_load(&b1->ctr), c2 = atomic_load(&b2->ctr);
		bool ok;

		s->pub = NO_SLOT;
		s->n_busy = 0;
		s->free_mask[0] = s->free_mask[1] = 0;
		ok = scan_bucket(h, loc->b1, 0, loc->fp, own, s);
		if (ok && loc->b2 != loc->b1)
			ok = scan_bucket(h, loc->b2, 1, loc->fp, own, s);
		if (ok && atomic_load(&b1->ctr) == c1 && atomic_load(&b2->ctr) == c2)
			return;
	}
}

/* Take a tentative entry back (it lost, or was killed: RESV). */
static void withdraw(struct fg_history *h, uint64_t gs, uint64_t busy)
{
	_Atomic uint64_t *k = slot_key(h, gs);

	if (!cas(k, busy, 0))
		atomic_store(k, 0);	/* killed: RESV, which only we free */
	fg_hbump(fg_hbkt(h, gs / FG_HSLOTS));
}

/* Step 3 and 4 of an insert: 0 published, RETRY, -EAGAIN. */
static int decide(struct fg_history *h, const struct fg_hloc *loc, uint64_t own,
		  uint64_t busy, uint64_t target)
{
	struct scan s;

	for (;;) {
		unsigned j;

		scan_pair(h, loc, own, &s);
		if (s.pub != NO_SLOT) {
			withdraw(h, own, busy);
			return RETRY;
		}
		for (j = 0; j < s.n_busy; j++) {
			if (s.busy_slot[j] < own) {
				withdraw(h, own, busy);
				return -EAGAIN;
			}
		}
		for (j = 0; j < s.n_busy; j++) {
			if (!cas(slot_key(h, s.busy_slot[j]), s.busy_w[j], FG_HW_RESV))
				break;
			fg_hbump(fg_hbkt(h, s.busy_slot[j] / FG_HSLOTS));
		}
		if (j < s.n_busy)
			continue;	/* a copy above us changed: look again */
		hook(h, FG_HISTORY_HOOK_PUBLISH);
		if (cas(slot_key(h, own), busy, target)) {
			fg_hcount(h, own / FG_HSLOTS, fg_hw_state(target), 1);
			return 0;
		}
		withdraw(h, own, busy);	/* killed by a copy below us */
		return -EAGAIN;
	}
}

/* Steps 2-4 at slot gs: 0, RETRY, -EAGAIN. */
static int place(struct fg_history *h, const struct fg_hloc *loc, uint64_t gs,
		 uint64_t target, uint32_t aux, unsigned x)
{
	uint64_t busy = fg_hw_make(loc->fp, FG_HS_BUSY, x);

	hook(h, FG_HISTORY_HOOK_CLAIM);
	if (!cas(slot_key(h, gs), 0, busy))
		return RETRY;
	atomic_store_explicit(slot_aux(h, gs), aux, memory_order_release);
	fg_hbump(fg_hbkt(h, gs / FG_HSLOTS));
	return decide(h, loc, gs, busy, target);
}

bool fg_hdelete(struct fg_history *h, uint64_t gs, uint64_t w)
{
	if (!cas(slot_key(h, gs), w, 0))
		return false;
	fg_hcount(h, gs / FG_HSLOTS, fg_hw_state(w), -1);
	fg_hbump(fg_hbkt(h, gs / FG_HSLOTS));
	return true;
}

/* ---- making room ---- */

static bool move_allowed(const struct fg_history *h, uint64_t src, uint64_t dst)
{
	uint64_t s = atomic_load(&h->hdr->snap);
	uint64_t c = s & ~FG_HSNAP_ACTIVE;

	/* An image copy has copied dst but not src: moving src -> dst now
	 * would hide the entry from the image. */
	return !(s & FG_HSNAP_ACTIVE) || !(dst < c + FG_HSNAP_CHUNK && src >= c);
}

/* Relocate the final entry w at global slot gs into bucket dst: 0 or -EAGAIN. */
static int move_entry(struct fg_history *h, uint64_t gs, uint64_t w, uint64_t dst)
{
	struct fg_hbucket *sb = fg_hbkt(h, gs / FG_HSLOTS), *db = fg_hbkt(h, dst);
	unsigned si = (unsigned)(gs % FG_HSLOTS), di;
	uint64_t kw;
	uint32_t a;

	if (!fg_hread_slot(sb, si, &kw, &a) || kw != w)
		return -EAGAIN;
	for (di = 0; di < FG_HSLOTS; di++)
		if (cas(&db->key[di], 0, FG_HW_RESV))
			break;
	if (di == FG_HSLOTS)
		return -EAGAIN;
	atomic_store_explicit(&db->aux[di], a, memory_order_release);
	if (atomic_load(&sb->key[si]) != w) {
		atomic_store(&db->key[di], 0);	/* the source went meanwhile: back out */
		return -EAGAIN;
	}
	atomic_store(&db->key[di], w);
	fg_hcount(h, dst, fg_hw_state(w), 1);
	fg_hbump(db);
	hook(h, FG_HISTORY_HOOK_MOVE);
	if (move_allowed(h, gs / FG_HSLOTS, dst) && fg_hdelete(h, gs, w)) {
		atomic_fetch_add_explicit(&h->hdr->moves, 1, memory_order_relaxed);
		return 0;
	}
	fg_hdelete(h, dst * FG_HSLOTS + di, w);	/* undo the copy */
	return -EAGAIN;
}

struct bnode {
	uint64_t b;			/* bucket */
	uint64_t w;			/* key word of the entry moved into b */
	int16_t parent;			/* node whose bucket holds that entry, -1 = root */
	uint8_t slot;			/* its slot there */
	uint8_t depth;
};

static bool has_free(const struct fg_hbucket *bk)
{
	for (unsigned i = 0; i < FG_HSLOTS; i++)
		if (atomic_load_explicit(&bk->key[i], memory_order_relaxed) == 0)
			return true;
	return false;
}

/* Carry out the path ending with node n's entry (slot `slot`, word w) moving
 * to bucket dst: the last move first, each freeing the slot the previous
 * one moves into. */
static int run_path(struct fg_history *h, const struct bnode *q, int n, unsigned slot,
		    uint64_t w, uint64_t dst)
{
	if (move_entry(h, q[n].b * FG_HSLOTS + slot, w, dst))
		return -EAGAIN;
	for (; q[n].parent >= 0; n = q[n].parent) {
		const struct bnode *p = &q[q[n].parent];

		if (move_entry(h, p->b * FG_HSLOTS + q[n].slot, q[n].w, q[n].b))
			return -EAGAIN;
	}
	return 0;
}

/* Breadth-first search for a bucket with a free slot, reachable from the
 * pair by moving final entries to their other bucket (at most
 * FG_HBFS_DEPTH moves). 0 room made, -EAGAIN a move lost a race,
 * -ENOSPC no path. */
static int relocate(struct fg_history *h, const struct fg_hloc *loc)
{
	struct bnode q[BFS_NODES];
	int head, tail = 0;

	if (FG_HBFS_DEPTH == 0)
		return -ENOSPC;
	q[tail++] = (struct bnode){ .b = loc->b1, .parent = -1 };
	if (loc->b2 != loc->b1)
		q[tail++] = (struct bnode){ .b = loc->b2, .parent = -1 };
	for (head = 0; head < tail; head++) {
		const struct fg_hbucket *bk = fg_hbkt(h, q[head].b);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load(&bk->key[i]);
			uint64_t a;

			if (!fg_hs_final(fg_hw_state(w)))
				continue;
			a = fg_halt_global(h, q[head].b, fg_hw_fp(w));
			if (a == q[head].b || !move_allowed(h, q[head].b, a))
				continue;
			if (has_free(fg_hbkt(h, a)))
				return run_path(h, q, head, i, w, a);
			if (q[head].depth + 1u < FG_HBFS_DEPTH && tail < BFS_NODES) {
				__builtin_prefetch(fg_hbkt(h, a));
				q[tail++] = (struct bnode){ .b = a, .w = w, .parent = (int16_t)head,
							    .slot = (uint8_t)i,
							    .depth = (uint8_t)(q[head].depth + 1) };
			}
		}
	}
	return -ENOSPC;
}

/* Delete OFFERED entries past their deadline in bucket b; how many. */
static unsigned reclaim_offers(struct fg_history *h, uint64_t b, fg_time_t now)
{
	struct fg_hbucket *bk = fg_hbkt(h, b);
	unsigned n = 0;

	for (unsigned i = 0; i < FG_HSLOTS; i++) {
		uint64_t w;
		uint32_t a;

		if (fg_hw_state(atomic_load(&bk->key[i])) != FG_HS_OFFERED ||
		    !fg_hread_slot(bk, i, &w, &a) || fg_hw_state(w) != FG_HS_OFFERED)
			continue;
		if (now >= fg_hdl_dec(a & 0xffffu, now) && fg_hdelete(h, b * FG_HSLOTS + i, w))
			n++;
	}
	return n;
}

/* Evict-oldest: drop the final entry with the oldest first-seen among the
 * pair's ten slots (an approximation of the table-wide oldest that costs
 * no extra memory access). */
static int evict_oldest(struct fg_history *h, const struct fg_hloc *loc, fg_time_t now)
{
	uint64_t best = NO_SLOT, best_w = 0;
	fg_time_t best_fs = 0;

	for (unsigned j = 0; j < 2 * FG_HSLOTS; j++) {
		uint64_t b = j < FG_HSLOTS ? loc->b1 : loc->b2;
		unsigned i = j % FG_HSLOTS;
		uint64_t w;
		uint32_t a;
		fg_time_t fs;

		if (j >= FG_HSLOTS && loc->b2 == loc->b1)
			break;
		if (!fg_hread_slot(fg_hbkt(h, b), i, &w, &a) || !fg_hs_final(fg_hw_state(w)))
			continue;
		fs = fg_hfs_dec((a & 0xffffu) << 7 | fg_hw_x(w), now);
		if (best == NO_SLOT || fs < best_fs) {
			best = b * FG_HSLOTS + i;
			best_w = w;
			best_fs = fs;
		}
	}
	if (best == NO_SLOT || !fg_hdelete(h, best, best_w))
		return -EAGAIN;
	atomic_fetch_add_explicit(&h->hdr->evictions, 1, memory_order_relaxed);
	return 0;
}

/* No FREE slot in the pair: 0 when room was made (scan again), -ENOSPC. */
static int make_room(struct fg_history *h, const struct fg_hloc *loc, fg_time_t now,
		     unsigned round)
{
	unsigned n = reclaim_offers(h, loc->b1, now);
	int r;

	if (loc->b2 != loc->b1)
		n += reclaim_offers(h, loc->b2, now);
	if (n)
		return 0;
	r = round < ROOM_TRIES ? relocate(h, loc) : -ENOSPC;
	if (r != -ENOSPC)
		return 0;
	if (atomic_load_explicit(&h->hdr->full_policy, memory_order_relaxed) ==
	    FG_FULL_EVICT_OLDEST)
		for (int t = 0; t < 3; t++)
			if (evict_oldest(h, loc, now) == 0)
				return 0;
	atomic_fetch_add_explicit(&h->hdr->insert_failures, 1, memory_order_relaxed);
	return -ENOSPC;
}

/* ---- the operations ---- */

/* A published copy exists: what the operation makes of it. */
static int on_existing(struct fg_history *h, enum op op, const struct scan *s,
		       fg_time_t now, uint32_t token, struct fg_history_ref *ref,
		       struct fg_history_entry *found)
{
	unsigned st = fg_hw_state(s->pub_w);

	fg_hdecode(s->pub_w, s->pub_aux, now, found);
	if (st == FG_HS_OFFERED && op == OP_ACCEPT) {
		/* RFC 4644 2.5: any session may send an offered ID in full */
		uint64_t w = fg_hw_make(fg_hw_fp(s->pub_w), FG_HS_ACCEPTING, token);

		if (!cas(slot_key(h, s->pub), s->pub_w, w))
			return RETRY;
		fg_hcount(h, s->pub / FG_HSLOTS, FG_HS_OFFERED, -1);
		fg_hcount(h, s->pub / FG_HSLOTS, FG_HS_ACCEPTING, 1);
		*ref = (struct fg_history_ref){ .slot = s->pub, .word = w, .token = token };
		return 0;
	}
	if (st == FG_HS_OFFERED && (found->flags & FG_HISTORY_F_EXPIRED)) {
		fg_hdelete(h, s->pub, s->pub_w);	/* as good as absent */
		return RETRY;
	}
	if (st == FG_HS_ACCEPTING && op == OP_ACCEPT)
		return -EAGAIN;			/* wait for that transfer's outcome */
	return -EEXIST;
}

/*
 * Which FREE slot to claim: in the first bucket while it has room (most
 * entries then sit in the bucket a lookup reads first), and among its free
 * slots the one `spread` selects — first-seen bits, or the session's whole
 * token (its owner bits alone would be one value per writer, and would
 * decide every tie between two writers the same way: the lower slot wins)
 * — so that concurrent inserts into one bucket mostly claim different
 * slots instead of failing each other's CAS.
 */
static uint64_t pick_free(const struct fg_hloc *loc, const struct scan *s, unsigned spread)
{
	unsigned which = s->free_mask[0] ? 0 : 1, mask = s->free_mask[which];
	unsigned n = spread % (unsigned)__builtin_popcount(mask ? mask : 1);

	if (!mask)
		return NO_SLOT;
	while (n--)
		mask &= mask - 1;
	return (which ? loc->b2 : loc->b1) * FG_HSLOTS + (unsigned)__builtin_ctz(mask);
}

static int insert(struct fg_history *h, const struct fg_history_key *k, enum op op,
		  uint64_t target, uint32_t aux, fg_time_t now, uint32_t token,
		  struct fg_history_ref *ref, struct fg_history_entry *found)
{
	struct fg_hloc loc;
	struct scan s;
	unsigned round = 0;

	fg_hlocate(h, k, &loc);
	target |= loc.fp << 10;
	for (;;) {
		uint64_t gs;
		int r;

		scan_pair(h, &loc, NO_SLOT, &s);
		if (s.pub != NO_SLOT) {
			r = on_existing(h, op, &s, now, token, ref, found);
			if (r == RETRY)
				continue;
			return r;
		}
		memset(found, 0, sizeof(*found));
		if (s.n_busy) {
			found->state = FG_HISTORY_PENDING;
			return -EAGAIN;
		}
		gs = pick_free(&loc, &s, fg_hw_x(target) + (token >> FG_HISTORY_OWNER_BITS));
		if (gs == NO_SLOT) {
			r = make_room(h, &loc, now, round++);
			if (r)
				return r;
			continue;
		}
		r = place(h, &loc, gs, target, aux, fg_hw_x(target));
		if (r == RETRY)
			continue;
		if (r == 0 && ref)
			*ref = (struct fg_history_ref){ .slot = gs, .word = target, .token = token };
		if (r)
			found->state = FG_HISTORY_PENDING;
		return r;
	}
}

static bool fs_ok(fg_time_t fs, fg_time_t now)
{
	return fs > now - FG_HISTORY_MAX_AGE && fs <= now + FG_HISTORY_CLOCK_SLACK;
}

static bool final_ok(enum fg_history_state st)
{
	return st == FG_HISTORY_ACCEPTED || st == FG_HISTORY_REJECTED ||
	       st == FG_HISTORY_SUPERSEDED;
}

static unsigned final_internal(enum fg_history_state st)
{
	return st == FG_HISTORY_ACCEPTED ? FG_HS_ACCEPTED
	       : st == FG_HISTORY_REJECTED ? FG_HS_REJECTED : FG_HS_SUPERSEDED;
}

/* The key-word state/x and the aux of a final entry. */
static uint64_t final_word(enum fg_history_state st, fg_time_t date, fg_time_t fs,
			   uint32_t *aux)
{
	uint32_t fs23 = fg_hfs_enc(fs), flags = 0;

	*aux = fg_haux_final(fs23, fg_hdate_enc(date, fs, &flags));
	return fg_hw_make(0, final_internal(st), fs23 & 0x7fu);
}

int fg_history_offer(struct fg_history *h, const struct fg_history_key *k, fg_time_t now,
		     fg_time_t deadline, uint32_t token, struct fg_history_ref *ref,
		     struct fg_history_entry *found)
{
	struct fg_history_entry tmp;

	if (deadline <= now || deadline > now + FG_HISTORY_OFFER_MAX)
		return -EINVAL;
	return insert(h, k, OP_OFFER, fg_hw_make(0, FG_HS_OFFERED, token),
		      fg_haux_offer(deadline, token), now, token, ref, found ? found : &tmp);
}

int fg_history_begin_accept(struct fg_history *h, const struct fg_history_key *k,
			    fg_time_t now, uint32_t token, struct fg_history_ref *ref,
			    struct fg_history_entry *found)
{
	struct fg_history_entry tmp;

	return insert(h, k, OP_ACCEPT, fg_hw_make(0, FG_HS_ACCEPTING, token), 0, now, token,
		      ref, found ? found : &tmp);
}

int fg_history_insert_final(struct fg_history *h, const struct fg_history_key *k,
			    enum fg_history_state final, fg_time_t article_date,
			    fg_time_t first_seen, fg_time_t now,
			    struct fg_history_entry *found)
{
	struct fg_history_entry tmp;
	uint64_t w;
	uint32_t aux;

	if (!final_ok(final) || !fs_ok(first_seen, now))
		return -EINVAL;
	w = final_word(final, article_date, first_seen, &aux);
	return insert(h, k, OP_FINAL, w, aux, now, 0, NULL, found ? found : &tmp);
}

static bool ref_ok(const struct fg_history *h, const struct fg_history_ref *ref, unsigned st)
{
	return ref->slot < h->m * FG_HSLOTS && fg_hw_state(ref->word) == st;
}

int fg_history_finish(struct fg_history *h, const struct fg_history_ref *ref,
		      enum fg_history_state final, fg_time_t article_date,
		      fg_time_t first_seen, fg_time_t now)
{
	uint64_t w;
	uint32_t aux;

	if (!final_ok(final) || !fs_ok(first_seen, now) || !ref_ok(h, ref, FG_HS_ACCEPTING))
		return -EINVAL;
	if (atomic_load(slot_key(h, ref->slot)) != ref->word)
		return -ESTALE;
	/* ACCEPTING is ours alone and its aux is never read: write, then publish */
	w = final_word(final, article_date, first_seen, &aux) | fg_hw_fp(ref->word) << 10;
	atomic_store_explicit(slot_aux(h, ref->slot), aux, memory_order_release);
	if (!cas(slot_key(h, ref->slot), ref->word, w))
		return -ESTALE;
	fg_hcount(h, ref->slot / FG_HSLOTS, FG_HS_ACCEPTING, -1);
	fg_hcount(h, ref->slot / FG_HSLOTS, fg_hw_state(w), 1);
	return 0;
}

int fg_history_abort(struct fg_history *h, const struct fg_history_ref *ref)
{
	if (!ref_ok(h, ref, FG_HS_ACCEPTING))
		return -EINVAL;
	return fg_hdelete(h, ref->slot, ref->word) ? 0 : -ESTALE;
}

int fg_history_release(struct fg_history *h, const struct fg_history_ref *ref)
{
	uint32_t a;

	if (!ref_ok(h, ref, FG_HS_OFFERED))
		return -EINVAL;
	/* the key word carries 7 token bits, the aux the other 16 */
	a = atomic_load(slot_aux(h, ref->slot));
	if (atomic_load(slot_key(h, ref->slot)) != ref->word ||
	    (a >> 16) != ((ref->token >> 7) & 0xffffu))
		return -ESTALE;
	return fg_hdelete(h, ref->slot, ref->word) ? 0 : -ESTALE;
}

/* An ACCEPTING entry never moves and only its owner changes it: when the
 * owner is dead, the entry found is the one to finish, and finish's CAS
 * on the exact word makes a second settle of it -ESTALE, not a double. */
int fg_history_settle(struct fg_history *h, const struct fg_history_key *k, unsigned owner,
		      fg_time_t article_date, fg_time_t first_seen, fg_time_t now)
{
	struct fg_history_ref ref;
	struct fg_hloc loc;
	struct scan s;
	int rc;

	if (!fs_ok(first_seen, now))
		return -EINVAL;
	fg_hlocate(h, k, &loc);
	scan_pair(h, &loc, NO_SLOT, &s);
	if (s.pub == NO_SLOT || fg_hw_state(s.pub_w) != FG_HS_ACCEPTING ||
	    (owner != FG_HISTORY_OWNER_ANY && fg_hw_x(s.pub_w) != owner))
		return -ENOENT;
	ref = (struct fg_history_ref){ .slot = s.pub, .word = s.pub_w };
	rc = fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, article_date, first_seen, now);
	return rc == -ESTALE ? -ENOENT : rc;
}
