/* SPDX-License-Identifier: MIT */
/*
 * peerlim.c — a peer's limits held box-wide (peerlim.h): its open
 * connections and three token buckets (offers, octets, connections a
 * second), in a table that every engine thread of the process shares.
 *
 * Layout: a slot per peer name, a cache line for the name and the
 * connection count, one for each bucket (so that a peer's offers and its
 * octets, taken by different threads, do not share a line). A bucket is
 * two atomics: `avail`, the millionths it holds, and `at_ns`, the
 * monotonic time up to which it has been refilled (0: never, full).
 *
 * Protocol of a bucket (any thread; `rate` is the caller's configured
 * rate, cap = a second's worth = rate * 10^6 millionths):
 *
 *   1. Refill: read at_ns = t. If t != 0 and now <= t, nothing to credit.
 *      Else c = (now - t) * rate / 1000 millionths (cap when t = 0 or
 *      c >= cap; nothing when c = 0), earned by t' = t + ceil(c * 1000 /
 *      rate) <= now (now when capped). Compare-and-swap at_ns from t to
 *      t' (> t): the one thread that wins credits c for (t, t'], so every
 *      nanosecond is credited once whoever refills and the remainder
 *      (t', now] waits for the next refill; a thread that loses leaves it
 *      to the winner.
 *   2. The winner adds its credit to avail by compare-and-swap, holding
 *      avail at cap at most (also clamping a bucket whose rate a reload
 *      lowered): what an idle peer would have earned beyond a second's
 *      worth is not kept.
 *   3. Take: compare-and-swap avail from a to a - g, g = min(a, want); a
 *      bucket at 0 or below grants nothing. avail never goes below 0.
 *      A connection takes a whole unit or nothing (fg_peerlim_take_unit).
 *   4. Give back (a reload empties the engines' caches): add as in step 2.
 *
 * The offer path never touches this table. An engine keeps a cache per
 * peer and bucket (nntp_int.h, struct fg_nntp_rate): an offer takes a unit
 * from its cache; only an empty cache takes a batch (fg_peerlim_batch: a
 * sixteenth of a second's worth shared among the engines, at least one
 * unit) from the shared bucket, so at the rates where the limit matters
 * an engine touches the shared line about 16 * engines times a second,
 * and a peer without a rate never does. Octets are charged after they are
 * read: an engine's cache may go below zero by what one read brought
 * (as the per-thread budget did), and reading stops until a batch has
 * paid the debt.
 *
 * What it admits beyond an exact token bucket of the box: everything an
 * engine spends came out of the shared bucket, so over any interval the
 * box spends at most cap + rate * interval + what the caches held at its
 * start — at most engines * batch, i.e. the larger of a sixteenth of a
 * second's worth and one unit per engine (for octets, plus one read per
 * engine) — and the caches never hold more than that. The price the other
 * way: units cached by an engine whose sessions went quiet serve only it
 * until a reload returns them, so the other engines may see up to the
 * same amount less for a while.
 *
 * Connections: one compare-and-swap on the peer's count per connection
 * opened, one atomic decrement per connection closed: never more than
 * max-connections open on the box. The connection rate takes one unit per
 * connection straight from its bucket (no cache: per connection, not per
 * offer), exact.
 *
 * Slots are made from each configuration before any engine is handed it
 * (the names are written before n_used is published with release; a
 * reader acquires n_used) and never freed while the table lives, so a
 * session that counted itself on a slot decrements the same slot when it
 * closes, whatever reloads came between.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/peerlim.h"

struct fg_peerlim_bucket_state {
	_Atomic int64_t avail;		/* millionths */
	_Atomic uint64_t at_ns;		/* refilled up to; 0: never (full) */
} FG_CACHE_ALIGNED;

struct fg_peerlim_peer {
	char name[FG_CONFIG_NAME_MAX];
	_Atomic unsigned conns;
	struct fg_peerlim_bucket_state b[FG_PEERLIM__BUCKETS] FG_CACHE_ALIGNED;
} FG_CACHE_ALIGNED;

struct fg_peerlim {
	unsigned engines;
	_Atomic unsigned n_used;
	struct fg_peerlim_peer slot[FG_PEERLIM_SLOTS];
};

struct fg_peerlim *fg_peerlim_create(unsigned engines)
{
	struct fg_peerlim *pl = aligned_alloc(FG_CACHE_LINE, sizeof(*pl));

	if (!pl)
		return NULL;
	memset(pl, 0, sizeof(*pl));
	pl->engines = engines ? engines : 1;
	return pl;
}

void fg_peerlim_destroy(struct fg_peerlim *pl)
{
	free(pl);
}

unsigned fg_peerlim_engines(const struct fg_peerlim *pl)
{
	return pl->engines;
}

struct fg_peerlim_peer *fg_peerlim_find(struct fg_peerlim *pl, const char *name)
{
	unsigned n = atomic_load_explicit(&pl->n_used, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (strcmp(pl->slot[i].name, name) == 0)
			return &pl->slot[i];
	return NULL;
}

int fg_peerlim_add(struct fg_peerlim *pl, const struct fg_config *cfg)
{
	unsigned n = atomic_load_explicit(&pl->n_used, memory_order_relaxed), fresh = 0;

	for (unsigned i = 0; i < cfg->n_peer; i++)
		if (!fg_peerlim_find(pl, cfg->peer[i].name))
			fresh++;
	if (n + fresh > FG_PEERLIM_SLOTS)
		return -ENOSPC;
	for (unsigned i = 0; i < cfg->n_peer; i++) {
		if (fg_peerlim_find(pl, cfg->peer[i].name))
			continue;
		memcpy(pl->slot[n].name, cfg->peer[i].name, sizeof(pl->slot[n].name));
		/* published at once: a later peer of cfg finds it (a name
		 * twice in one configuration gets one slot) */
		atomic_store_explicit(&pl->n_used, ++n, memory_order_release);
	}
	return 0;
}

/* ------------------------------------------------------------ connections */

bool fg_peerlim_conn_open(struct fg_peerlim_peer *p, unsigned max)
{
	unsigned c = atomic_load_explicit(&p->conns, memory_order_relaxed);

	do {
		if (max && c >= max)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&p->conns, &c, c + 1, memory_order_relaxed,
							memory_order_relaxed));
	return true;
}

void fg_peerlim_conn_close(struct fg_peerlim_peer *p)
{
	unsigned was = atomic_fetch_sub_explicit(&p->conns, 1, memory_order_relaxed);

	FG_ASSERT(was > 0);
	(void)was;
}

unsigned fg_peerlim_conns(const struct fg_peerlim_peer *p)
{
	return atomic_load_explicit(&p->conns, memory_order_relaxed);
}

/* ------------------------------------------------------------ buckets */

static int64_t cap_of(uint64_t rate)
{
	return (int64_t)rate * FG_PEERLIM_UNIT;
}

/* Step 2 and 4: add n, holding avail at cap. */
static void add_capped(struct fg_peerlim_bucket_state *bk, int64_t n, int64_t cap)
{
	int64_t a = atomic_load_explicit(&bk->avail, memory_order_relaxed), v;

	do {
		v = a > cap - n ? cap : a + n;
	} while (!atomic_compare_exchange_weak_explicit(&bk->avail, &a, v, memory_order_relaxed,
							memory_order_relaxed));
}

/* Step 1. The time credited is the time the credit was earned in,
 * rounded up to a whole nanosecond (at most 1 ns short per refill, never
 * over), and the rest carries over: a worker that polls a slow bucket
 * every few hundred nanoseconds loses nothing to rounding. */
static void refill(struct fg_peerlim_bucket_state *bk, uint64_t rate, uint64_t now_ns)
{
	uint64_t t = atomic_load_explicit(&bk->at_ns, memory_order_relaxed), to = now_ns;
	int64_t cap = cap_of(rate), credit = cap;

	if (now_ns == 0 || (t != 0 && now_ns <= t))
		return;
	if (t != 0) {
		unsigned __int128 c = (unsigned __int128)(now_ns - t) * rate / 1000u;

		if (c == 0)
			return;		/* not a millionth yet: the time stays */
		if (c < (unsigned __int128)cap) {
			credit = (int64_t)c;
			to = t + (uint64_t)(((unsigned __int128)credit * 1000u + rate - 1) / rate);
		}
	}
	/* to > t: the interval is credited by the one thread that moves it */
	if (atomic_compare_exchange_strong_explicit(&bk->at_ns, &t, to, memory_order_relaxed,
						    memory_order_relaxed))
		add_capped(bk, credit, cap);
}

int64_t fg_peerlim_take(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, int64_t want,
			uint64_t rate, uint64_t now_ns)
{
	struct fg_peerlim_bucket_state *bk = &p->b[b];
	int64_t a, g;

	if (!rate || want <= 0)
		return 0;
	refill(bk, rate, now_ns);
	a = atomic_load_explicit(&bk->avail, memory_order_relaxed);
	do {
		if (a <= 0)
			return 0;
		g = a < want ? a : want;
	} while (!atomic_compare_exchange_weak_explicit(&bk->avail, &a, a - g, memory_order_relaxed,
							memory_order_relaxed));
	return g;
}

bool fg_peerlim_take_unit(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, uint64_t rate,
			  uint64_t now_ns)
{
	struct fg_peerlim_bucket_state *bk = &p->b[b];
	int64_t a;

	if (!rate)
		return false;
	refill(bk, rate, now_ns);
	a = atomic_load_explicit(&bk->avail, memory_order_relaxed);
	do {
		if (a < FG_PEERLIM_UNIT)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&bk->avail, &a, a - FG_PEERLIM_UNIT,
							memory_order_relaxed, memory_order_relaxed));
	return true;
}

void fg_peerlim_give(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, int64_t n,
		     uint64_t rate)
{
	if (rate && n > 0)
		add_capped(&p->b[b], n, cap_of(rate));
}

int64_t fg_peerlim_batch(const struct fg_peerlim *pl, uint64_t rate)
{
	int64_t b = cap_of(rate) / (16 * (int64_t)pl->engines);

	return b < FG_PEERLIM_UNIT ? FG_PEERLIM_UNIT : b;
}
