/* SPDX-License-Identifier: MIT */
/*
 * slot.c — writer slots: claim and release, the two SPSC rings of each
 * slot, and floodctld's side: reaping dead writers, summing counters,
 * clearing transient history entries when no writer is left.
 *
 * A slot's life: FREE -claim-> CLAIMING -> LIVE -release-> RELEASED, or
 * LIVE -owner found dead by floodctld-> DEAD; RELEASED and DEAD slots are
 * freed by floodctld once their journal ring is empty, after their
 * counters are folded into the retired block. Only floodctld frees, so a
 * slot is never reset under a consumer, and a new claim always starts with
 * empty rings and zero counters.
 *
 * A DEAD slot is resolved before it is freed, while the other writers go
 * on (region.h, history.h "a writer that died"):
 *  1. floodctld adopts the slot's rings as their producer (the owner is
 *     dead: nobody else pushes) and the resolver settles the owner's
 *     ACCEPTING entries whose article the queue holds, journalling each
 *     there — behind the dead writer's own records, in order;
 *  2. the owner's remaining transient entries are dropped; `resolved` is
 *     set, so a floodctld that restarts after step 2 does not redo it
 *     (redoing step 1 is harmless: a settled entry is ACCEPTING no more);
 *  3. once the ring is drained, the slot is freed as any other. Its index
 *     names no new owner before that, so step 2 never meets a live
 *     writer's entry under a dead writer's name.
 *
 * The header's `writers` word counts slots that are not FREE; bit 63 bars
 * claims. floodctld sets it only when the count is zero (CAS 0 -> GATE),
 * which is what makes "no writer is alive" a fact it can act on: clearing
 * OFFERED and ACCEPTING entries (history.h: not safe while writers run).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "region_int.h"

#define COMP "region"

static const char *const slot_state_names[] = {
	[FG_SLOT_FREE] = "free",
	[FG_SLOT_CLAIMING] = "claiming",
	[FG_SLOT_LIVE] = "live",
	[FG_SLOT_RELEASED] = "released",
	[FG_SLOT_DEAD] = "dead",
};

const char *fg_region_slot_state_name(enum fg_region_slot_state s)
{
	return (unsigned)s < FG_ARRAY_SIZE(slot_state_names) ? slot_state_names[s] : "?";
}

static struct fg_rprod *prod(struct fg_rslot_lines *s, enum fg_region_ring which)
{
	return which == FG_RING_JOURNAL ? &s->jprod : &s->vprod;
}

static struct fg_rcons *cons(struct fg_rslot_lines *s, enum fg_region_ring which)
{
	return which == FG_RING_JOURNAL ? &s->jcons : &s->vcons;
}

static uint8_t *ring_rec(const struct fg_region *r, unsigned slot, enum fg_region_ring which,
			 uint64_t seq)
{
	uint8_t *base = (uint8_t *)fg_rslot_at(r, slot);
	uint32_t cap = fg_region_ring_capacity(r, which);

	if (which == FG_RING_JOURNAL)
		return base + r->jring_off + (seq & (cap - 1)) * FG_REGION_JREC_SIZE;
	return base + r->vring_off + (seq & (cap - 1)) * FG_REGION_VREC_SIZE;
}

/* ---- claim and release ---- */

/* Count one more slot in use unless claims are barred. */
static int enter(struct fg_rhdr *h)
{
	uint64_t w = atomic_load(&h->writers);

	do {
		if (w & FG_RGATE)
			return -EAGAIN;
	} while (!atomic_compare_exchange_weak(&h->writers, &w, w + 1));
	return 0;
}

struct fg_region_writer *fg_region_claim(struct fg_region *r, const char *name, int *err)
{
	struct fg_region_writer *w;
	size_t nl = strlen(name);
	int rc;

	if (nl == 0 || nl >= FG_REGION_NAME_MAX) {
		*err = -EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	rc = enter(r->hdr);
	if (rc < 0)
		goto out_free;
	rc = -EBUSY;
	for (unsigned i = 0; i < r->hdr->n_slots; i++) {
		struct fg_rslot *c = &fg_rslot_at(r, i)->ctl;
		uint64_t want = fg_rowner(FG_SLOT_FREE, 0);
		uint64_t mine = fg_rowner(FG_SLOT_CLAIMING, (int32_t)getpid());

		if (!atomic_compare_exchange_strong(&c->owner, &want, mine))
			continue;
		atomic_store(&c->start, fg_region_proc_start(getpid()));
		atomic_store(&c->heartbeat, fg_mono_ns());
		atomic_store(&c->clock_suspect, 0);
		atomic_store(&c->resolved, 0);
		atomic_store(&c->claimed, (int64_t)time(NULL));
		atomic_fetch_add(&c->generation, 1);
		memset(c->name, 0, sizeof(c->name));
		memcpy(c->name, name, nl);
		/* a CAS, not a store: nothing may have changed a live claimer's slot */
		FG_ASSERT(atomic_compare_exchange_strong_explicit(
			&c->owner, &mine, fg_rowner(FG_SLOT_LIVE, (int32_t)getpid()),
			memory_order_release, memory_order_relaxed));
		w->r = r;
		w->idx = i;
		*err = 0;
		return w;
	}
	atomic_fetch_sub(&r->hdr->writers, 1);
out_free:
	free(w);
	*err = rc;
	return NULL;
}

void fg_region_release(struct fg_region_writer *w)
{
	if (!w)
		return;
	atomic_store_explicit(&fg_rslot_at(w->r, w->idx)->ctl.owner,
			      fg_rowner(FG_SLOT_RELEASED, (int32_t)getpid()), memory_order_release);
	free(w);
}

unsigned fg_region_writer_slot(const struct fg_region_writer *w)
{
	return w->idx;
}

void fg_region_writer_free(struct fg_region_writer *w)
{
	free(w);
}

/* A handle on a dead writer's rings, picking up where it stopped. */
static struct fg_region_writer *adopt(struct fg_region *r, unsigned slot)
{
	struct fg_rslot_lines *s = fg_rslot_at(r, slot);
	struct fg_region_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->r = r;
	w->idx = slot;
	w->head[FG_RING_JOURNAL] = atomic_load(&s->jprod.head);
	w->tail_seen[FG_RING_JOURNAL] = atomic_load(&s->jcons.tail);
	w->head[FG_RING_VLOG] = atomic_load(&s->vprod.head);
	w->tail_seen[FG_RING_VLOG] = atomic_load(&s->vcons.tail);
	return w;
}

struct fg_region *fg_region_writer_region(const struct fg_region_writer *w)
{
	return w->r;
}

struct fg_region_wstats *fg_region_writer_stats(struct fg_region_writer *w)
{
	return fg_rslot_stats(w->r, w->idx);
}

struct fg_nic_block *fg_region_writer_nic(struct fg_region_writer *w)
{
	return fg_rslot_nic(w->r, w->idx);
}

void fg_region_writer_heartbeat(struct fg_region_writer *w)
{
	atomic_store_explicit(&fg_rslot_at(w->r, w->idx)->ctl.heartbeat, fg_mono_ns(),
			      memory_order_relaxed);
}

void fg_region_writer_clock_suspect(struct fg_region_writer *w, bool suspect)
{
	atomic_store_explicit(&fg_rslot_at(w->r, w->idx)->ctl.clock_suspect, suspect ? 1u : 0u,
			      memory_order_relaxed);
}

/* ---- producer ---- */

/* Free room, refreshing the cached tail only when the cache says full. */
static uint64_t room(struct fg_region_writer *w, enum fg_region_ring which)
{
	uint64_t cap = fg_region_ring_capacity(w->r, which);
	uint64_t used = w->head[which] - w->tail_seen[which] + w->reserved[which];

	if (used < cap)
		return cap - used;
	w->tail_seen[which] = atomic_load_explicit(&cons(fg_rslot_at(w->r, w->idx), which)->tail,
						   memory_order_acquire);
	used = w->head[which] - w->tail_seen[which] + w->reserved[which];
	return used < cap ? cap - used : 0;
}

int fg_region_ring_reserve(struct fg_region_writer *w, enum fg_region_ring which)
{
	if (room(w, which) == 0)
		return -ENOSPC;
	w->reserved[which]++;
	return 0;
}

void fg_region_ring_unreserve(struct fg_region_writer *w, enum fg_region_ring which)
{
	FG_ASSERT(w->reserved[which] > 0);
	w->reserved[which]--;
}

int fg_region_ring_push(struct fg_region_writer *w, enum fg_region_ring which, const void *rec)
{
	size_t size = which == FG_RING_JOURNAL ? FG_REGION_JREC_SIZE : FG_REGION_VREC_SIZE;

	if (w->reserved[which])
		w->reserved[which]--;
	else if (room(w, which) == 0)
		return -ENOSPC;
	memcpy(ring_rec(w->r, w->idx, which, w->head[which]), rec, size);
	w->head[which]++;
	atomic_store_explicit(&prod(fg_rslot_at(w->r, w->idx), which)->head, w->head[which],
			      memory_order_release);
	return 0;
}

uint64_t fg_region_ring_pushed(const struct fg_region_writer *w, enum fg_region_ring which)
{
	return w->head[which];
}

uint64_t fg_region_writer_committed(const struct fg_region_writer *w)
{
	return atomic_load_explicit(&fg_rslot_at(w->r, w->idx)->jcons.tail, memory_order_acquire);
}

/* ---- consumer ---- */

unsigned fg_region_ring_peek(const struct fg_region *r, unsigned slot,
			     enum fg_region_ring which, uint64_t from, const void **recs,
			     unsigned max)
{
	struct fg_rslot_lines *s = fg_rslot_at(r, slot);
	uint32_t st = fg_rowner_state(atomic_load_explicit(&s->ctl.owner, memory_order_acquire));
	uint64_t cap = fg_region_ring_capacity(r, which);
	uint64_t tail, head, n, contiguous;

	if (st == FG_SLOT_FREE || st == FG_SLOT_CLAIMING)
		return 0;
	tail = atomic_load_explicit(&cons(s, which)->tail, memory_order_relaxed);
	head = atomic_load_explicit(&prod(s, which)->head, memory_order_acquire);
	/* a writer gone mad never makes us read outside [tail, tail + cap) */
	if (head - tail > cap)
		head = tail + cap;
	if (from < tail || from >= head)
		return 0;
	n = head - from;
	contiguous = cap - (from & (cap - 1));
	n = FG_MIN(n, FG_MIN(contiguous, (uint64_t)max));
	*recs = ring_rec(r, slot, which, from);
	return (unsigned)n;
}

void fg_region_ring_release(struct fg_region *r, unsigned slot, enum fg_region_ring which,
			    uint64_t upto)
{
	atomic_store_explicit(&cons(fg_rslot_at(r, slot), which)->tail, upto, memory_order_release);
}

uint64_t fg_region_ring_tail(const struct fg_region *r, unsigned slot, enum fg_region_ring which)
{
	return atomic_load_explicit(&cons(fg_rslot_at(r, slot), which)->tail, memory_order_relaxed);
}

bool fg_region_slot_generation(const struct fg_region *r, unsigned slot, uint64_t *gen)
{
	const struct fg_rslot *c = &fg_rslot_at(r, slot)->ctl;
	uint32_t st = fg_rowner_state(atomic_load_explicit(&c->owner, memory_order_acquire));

	if (st == FG_SLOT_FREE || st == FG_SLOT_CLAIMING)
		return false;
	*gen = atomic_load_explicit(&c->generation, memory_order_acquire);
	return true;
}

/*
 * Counters are plain increments by their writer, read while they are
 * being written (stats.h): a sum may be a few increments old, never torn.
 * ThreadSanitizer is told that these reads are racy by design, so that
 * its reports stay about real races (the rings, the slot states).
 */
#if defined(__SANITIZE_THREAD__)
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define COUNTER_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define COUNTER_READS_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define COUNTER_READS_BEGIN() ((void)0)
#define COUNTER_READS_END() ((void)0)
#endif

int fg_region_slot_info(const struct fg_region *r, unsigned slot,
			struct fg_region_slot_info *out)
{
	struct fg_rslot_lines *s;
	uint64_t owner, hb, now;

	if (slot >= r->hdr->n_slots)
		return -EINVAL;
	s = fg_rslot_at(r, slot);
	memset(out, 0, sizeof(*out));
	owner = atomic_load(&s->ctl.owner);
	out->state = fg_rowner_state(owner);
	out->pid = fg_rowner_pid(owner);
	memcpy(out->name, s->ctl.name, sizeof(out->name));
	out->name[sizeof(out->name) - 1] = '\0';
	out->generation = atomic_load(&s->ctl.generation);
	out->claimed = atomic_load(&s->ctl.claimed);
	hb = atomic_load(&s->ctl.heartbeat);
	now = fg_mono_ns();
	out->heartbeat_age_ns = hb == 0 ? UINT64_MAX : (now > hb ? now - hb : 0);
	for (unsigned k = 0; k < FG_RING__COUNT; k++) {
		out->pushed[k] = atomic_load(&prod(s, k)->head);
		out->consumed[k] = atomic_load(&cons(s, k)->tail);
	}
	out->clock_suspect = atomic_load(&s->ctl.clock_suspect) != 0;
	COUNTER_READS_BEGIN();
	out->busy_cycles = fg_rslot_stats(r, slot)->total.ctr[FG_CTR_DP_BUSY_CYCLES];
	out->idle_cycles = fg_rslot_stats(r, slot)->total.ctr[FG_CTR_DP_IDLE_CYCLES];
	COUNTER_READS_END();
	return 0;
}

unsigned fg_region_live_writers(const struct fg_region *r)
{
	return (unsigned)(atomic_load(&r->hdr->writers) & ~FG_RGATE);
}

/* ---- reaping ---- */


static void add_u64s(uint64_t *into, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		into[i] += from[i];
}

/* struct fg_region_wstats is made of uint64 counters (fg_hist's sum is
 * an int64 whose sum wraps the same way), added word by word, up to the
 * peers' last-seen times, which sum as their maximum. */
static void wstats_add(struct fg_region_wstats *into, const struct fg_region_wstats *from)
{
	_Static_assert(offsetof(struct fg_region_wstats, peer_last_seen) % sizeof(uint64_t) == 0,
		       "words");
	add_u64s((uint64_t *)into, (const uint64_t *)from,
		 offsetof(struct fg_region_wstats, peer_last_seen) / sizeof(uint64_t));
	for (unsigned p = 0; p < FG_REGION_PEERS; p++)
		into->peer_last_seen[p] = FG_MAX(into->peer_last_seen[p], from->peer_last_seen[p]);
}

static void free_slot(struct fg_region *r, unsigned i)
{
	struct fg_rslot_lines *s = fg_rslot_at(r, i);
	struct fg_region_wstats *st = fg_rslot_stats(r, i);
	uint64_t lost = atomic_load(&s->vprod.head) - atomic_load(&s->vcons.tail);

	pthread_mutex_lock(&r->sum_lock);
	wstats_add((struct fg_region_wstats *)(r->base + r->hdr->retired_off), st);
	fg_region_ctld_stats(r)->ctr[FG_CTR_VLOG_DROPPED] += lost;
	memset(st, 0, sizeof(*st));
	memset(fg_rslot_nic(r, i), 0, sizeof(struct fg_nic_block));
	atomic_store(&s->jprod.head, 0);
	atomic_store(&s->jcons.tail, 0);
	atomic_store(&s->vprod.head, 0);
	atomic_store(&s->vcons.tail, 0);
	atomic_store(&s->ctl.start, 0);
	atomic_store(&s->ctl.heartbeat, 0);
	atomic_store(&s->ctl.clock_suspect, 0);
	atomic_store(&s->ctl.claimed, 0);
	atomic_store(&s->ctl.resolved, 0);
	atomic_store_explicit(&s->ctl.owner, fg_rowner(FG_SLOT_FREE, 0), memory_order_release);
	pthread_mutex_unlock(&r->sum_lock);
	atomic_fetch_sub(&r->hdr->writers, 1);
}

/* Is the owner of this slot word still running? A claim in progress
 * has no start time yet: its pid alone answers (the window is a few
 * instructions, far too short for the pid to be reused). */
static bool owner_alive(const struct fg_rslot *c, uint64_t o)
{
	pid_t pid = fg_rowner_pid(o);

	if (fg_rowner_state(o) == FG_SLOT_CLAIMING)
		return kill(pid, 0) == 0 || errno == EPERM;
	return fg_region_proc_alive(pid, atomic_load(&c->start));
}

/* Steps 1 and 2 for DEAD slot i: true once done (now or before). */
static bool resolve(struct fg_region *r, unsigned i, const struct fg_region_resolver *res)
{
	struct fg_rslot_lines *s = fg_rslot_at(r, i);
	struct fg_history_owned n;
	struct fg_region_writer *w;
	int rc = 0;

	if (atomic_load(&s->ctl.resolved))
		return true;
	if (res && res->settle) {
		w = adopt(r, i);
		rc = w ? res->settle(res->arg, w, i, atomic_load(&s->ctl.claimed)) : -ENOMEM;
		fg_region_writer_free(w);
		if (rc == -EAGAIN)
			return false;
		if (rc < 0)
			FG_LOG_ERR(COMP, "writer slot %u: its accepting entries could not be settled "
				   "from the queue (%s): dropped unsettled", i, strerror(-rc));
	}
	fg_history_drop_owned(r->h, i, &n);
	__atomic_fetch_add(&fg_region_ctld_stats(r)->ctr[FG_CTR_HISTORY_DEAD_DROPPED],
			   n.offered + n.accepting + n.pending, __ATOMIC_RELAXED);
	if (n.offered + n.accepting + n.pending)
		FG_LOG_NOTICE(COMP, "writer slot %u died: dropped %llu offered, %llu accepting and "
			      "%llu deciding history entries of its sessions", i,
			      (unsigned long long)n.offered, (unsigned long long)n.accepting,
			      (unsigned long long)n.pending);
	atomic_store(&s->ctl.resolved, 1);
	return true;
}

unsigned fg_region_reap(struct fg_region *r, unsigned *dead, const struct fg_region_resolver *res)
{
	unsigned freed = 0, died = 0;

	for (unsigned i = 0; i < r->hdr->n_slots; i++) {
		struct fg_rslot_lines *s = fg_rslot_at(r, i);
		uint64_t o = atomic_load_explicit(&s->ctl.owner, memory_order_acquire);
		uint32_t st = fg_rowner_state(o);

		if ((st == FG_SLOT_LIVE || st == FG_SLOT_CLAIMING) && !owner_alive(&s->ctl, o)) {
			if (!atomic_compare_exchange_strong(&s->ctl.owner, &o,
							    fg_rowner(FG_SLOT_DEAD, fg_rowner_pid(o))))
				continue;
			FG_LOG_WARN(COMP, "writer '%.*s' (slot %u, pid %d) died; draining its journal ring",
				    FG_REGION_NAME_MAX, s->ctl.name, i, (int)fg_rowner_pid(o));
			st = FG_SLOT_DEAD;
		}
		if (st != FG_SLOT_DEAD && st != FG_SLOT_RELEASED)
			continue;
		if (st == FG_SLOT_DEAD && !resolve(r, i, res))
			continue;
		if (atomic_load(&s->jprod.head) != atomic_load(&s->jcons.tail))
			continue;	/* records not yet durable */
		if (st == FG_SLOT_DEAD)
			FG_LOG_NOTICE(COMP, "writer slot %u reaped: its ring drained, its %llu journal records durable",
				      i, (unsigned long long)atomic_load(&s->jcons.tail));
		free_slot(r, i);
		freed++;
		died += st == FG_SLOT_DEAD;
	}
	if (dead)
		*dead = died;
	return freed;
}

void fg_region_sum(struct fg_region *r, struct fg_region_wstats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&r->sum_lock);
	COUNTER_READS_BEGIN();
	wstats_add(out, (const struct fg_region_wstats *)(r->base + r->hdr->retired_off));
	for (unsigned i = 0; i < r->hdr->n_slots; i++) {
		uint32_t st = fg_rowner_state(atomic_load(&fg_rslot_at(r, i)->ctl.owner));

		if (st != FG_SLOT_FREE)
			wstats_add(out, fg_rslot_stats(r, i));
	}
	add_u64s((uint64_t *)&out->total, (const uint64_t *)fg_region_ctld_stats(r),
		 sizeof(struct fg_stats) / sizeof(uint64_t));
	COUNTER_READS_END();
	pthread_mutex_unlock(&r->sum_lock);
}

void fg_region_live_sessions(struct fg_region *r, uint64_t *out, unsigned n)
{
	memset(out, 0, n * sizeof(*out));
	pthread_mutex_lock(&r->sum_lock);
	COUNTER_READS_BEGIN();
	for (unsigned i = 0; i < r->hdr->n_slots; i++) {
		const struct fg_region_wstats *st = fg_rslot_stats(r, i);

		if (fg_rowner_state(atomic_load(&fg_rslot_at(r, i)->ctl.owner)) != FG_SLOT_LIVE)
			continue;
		for (unsigned p = 0; p < n && p < FG_REGION_PEERS; p++) {
			uint64_t opened = st->peer[p].ctr[FG_CTR_NNTP_SESSIONS_OPENED];
			uint64_t closed = st->peer[p].ctr[FG_CTR_NNTP_SESSIONS_CLOSED];

			out[p] += opened > closed ? opened - closed : 0;
		}
	}
	COUNTER_READS_END();
	pthread_mutex_unlock(&r->sum_lock);
}

int fg_region_nic_read(const struct fg_region *r, unsigned slot, struct fg_nic_block *out)
{
	const struct fg_nic_block *b;
	uint32_t n;

	memset(out, 0, sizeof(*out));
	if (slot >= r->hdr->n_slots ||
	    fg_rowner_state(atomic_load(&fg_rslot_at(r, slot)->ctl.owner)) != FG_SLOT_LIVE)
		return -ENOENT;
	b = fg_rslot_nic(r, slot);
	n = __atomic_load_n(&b->n_ports, __ATOMIC_ACQUIRE);
	if (n == 0 || n > FG_NIC_MAX_PORTS)
		return -ENOENT;
	COUNTER_READS_BEGIN();
	memcpy(out->port, b->port, n * sizeof(b->port[0]));
	COUNTER_READS_END();
	out->n_ports = n;
	for (unsigned p = 0; p < n; p++) {
		out->port[p].name[FG_NIC_NAME_MAX - 1] = '\0';
		out->port[p].n_rxq = FG_MIN(out->port[p].n_rxq, (uint32_t)FG_NIC_MAX_QUEUES);
		out->port[p].n_txq = FG_MIN(out->port[p].n_txq, (uint32_t)FG_NIC_MAX_QUEUES);
	}
	return 0;
}

int64_t fg_region_clear_transient(struct fg_region *r)
{
	uint64_t zero = 0;
	uint64_t n;

	if (!atomic_compare_exchange_strong(&r->hdr->writers, &zero, FG_RGATE))
		return -EBUSY;
	n = fg_history_clear_transient(r->h);
	atomic_store(&r->hdr->writers, 0);
	if (n)
		FG_LOG_NOTICE(COMP, "no writer alive: dropped %llu offered/accepting history entries of dead sessions",
			      (unsigned long long)n);
	return (int64_t)n;
}
