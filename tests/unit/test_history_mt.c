/* SPDX-License-Identifier: MIT */
/*
 * test_history_mt.c — the history table under concurrency (also built
 * with ThreadSanitizer): exactly one winner per ID with 2-8 threads,
 * lookups racing relocation and expiry never see a wrong state or a torn
 * entry, ACCEPTING is exclusive and a waiting transfer takes over after
 * an abort, a dead writer's entries are dropped beside a live writer
 * without touching what the live one took over, and an image copied while
 * writers relocate entries loses none of them.
 *
 * On a 2-core machine threads rarely collide by themselves, so a test-only
 * hook delays them at the moment that matters (just before the CAS that
 * places or publishes an entry, and between a relocation's copy and
 * delete), and each test asserts that lost races were actually observed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "fgtest.h"

#if defined(__SANITIZE_THREAD__)
#define SLOW 4		/* TSan costs ~10x: fewer rounds, same coverage */
#else
#define SLOW 1
#endif

#define T0 1767225600
#define MAX_THREADS 8

static const uint8_t test_seed[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

struct tbl {
	struct fg_history *h;
	void *mem;
	size_t len;
};

/* Shards of the tables tbl_open makes: 0 (auto: one at these sizes), or
 * 4 for the "sharded" case, where every race runs within shards. */
static uint32_t tbl_shards;

static void shards_on(void)
{
	tbl_shards = 4;
}

static void shards_off(void)
{
	tbl_shards = 0;
}

static void tbl_open(struct tbl *t, uint64_t cap)
{
	struct fg_history_params p = { .capacity = cap, .full_policy = FG_FULL_DEFER,
				       .alarm_load_pct = 90, .now = T0, .shards = tbl_shards };
	struct fg_history_stats st;

	memcpy(p.seed, test_seed, 16);
	t->len = fg_history_region_size_sharded(cap, 0, tbl_shards);
	t->mem = aligned_alloc(64, (t->len + 63) & ~(size_t)63);
	ck_assert_ptr_nonnull(t->mem);
	t->h = fg_history_create(t->mem, t->len, &p);
	ck_assert_ptr_nonnull(t->h);
	fg_history_stats(t->h, &st);
	ck_assert_uint_eq(st.shards, tbl_shards ? tbl_shards : 1);
}

static void tbl_close(struct tbl *t)
{
	fg_history_detach(t->h);
	free(t->mem);
}

static struct fg_history_key key_of(const struct fg_history *h, unsigned n)
{
	struct fg_history_key k;
	char id[96];
	int len = snprintf(id, sizeof(id), "<%u.concurrent$x@feed.example.com>", n);

	fg_history_hash(h, id, (size_t)len, &k);
	return k;
}

/* ---- the delay hook ---- */

static _Thread_local uint64_t rng_state;
static atomic_ulong hook_claims, hook_publishes, hook_moves, hook_other;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Yield or spin a little at the racy points, so that on two cores other
 * threads get to run between a scan and the CAS that follows it. */
static void delay_hook(void *arg, enum fg_history_hook_point where)
{
	unsigned pct = (unsigned)(uintptr_t)arg;
	uint64_t r = rng();

	if (where == FG_HISTORY_HOOK_CLAIM)
		atomic_fetch_add(&hook_claims, 1);
	else if (where == FG_HISTORY_HOOK_PUBLISH)
		atomic_fetch_add(&hook_publishes, 1);
	else if (where == FG_HISTORY_HOOK_MOVE)
		atomic_fetch_add(&hook_moves, 1);
	else
		atomic_fetch_add(&hook_other, 1);
	if (r % 100 < pct)
		sched_yield();
	else
		for (volatile unsigned i = 0; i < (r >> 40) % 2000; i++)
			;
}

/* Every thread attaches its own handle to the shared region, as the
 * dataplane's processes do, and installs the hook on it. */
static struct fg_history *thread_handle(struct tbl *t, unsigned idx, unsigned yield_pct)
{
	struct fg_history *h = fg_history_attach(t->mem, t->len, NULL);

	ck_assert_ptr_nonnull(h);
	rng_state = 0x1234567ull * (idx + 1);
	fg_history_set_test_hook(h, delay_hook, (void *)(uintptr_t)yield_pct);
	return h;
}

static void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t th[MAX_THREADS];

	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, fn, (char *)args + i * arg_size), 0);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
}

/* ---- exactly one winner ---- */

#define IDS_PER_ROUND 12

struct race {
	struct tbl *t;
	unsigned nthreads, rounds;
	pthread_barrier_t start, end;
	atomic_uint wins[IDS_PER_ROUND];
	uint32_t winner_token[IDS_PER_ROUND];
	atomic_ulong eagain, lost;
	atomic_uint bad;
};

struct race_arg {
	struct race *r;
	unsigned idx;
	uint32_t seen[IDS_PER_ROUND];
	bool won[IDS_PER_ROUND];
};

/* One thread's go at one ID: insert, and if it lost, retry until it sees
 * the winner's entry. The operation rotates with the round: CHECK,
 * TAKETHIS, remembered reject. */
static void race_one(struct race_arg *a, struct fg_history *h, unsigned round, unsigned j)
{
	struct fg_history_key k = key_of(h, round * IDS_PER_ROUND + j);
	uint32_t token = a->idx + 1;
	struct fg_history_entry e;
	struct fg_history_ref ref;
	int rc;

	for (;;) {
		switch (round % 3) {
		case 0: rc = fg_history_offer(h, &k, T0, T0 + 60, token, &ref, &e); break;
		case 1: rc = fg_history_begin_accept(h, &k, T0, token, &ref, &e); break;
		default: rc = fg_history_insert_final(h, &k, FG_HISTORY_REJECTED, T0, T0 - token, T0, &e);
		}
		if (rc != -EAGAIN)
			break;
		atomic_fetch_add(&a->r->eagain, 1);
		sched_yield();
	}
	if (rc == 0) {
		a->won[j] = true;
		atomic_fetch_add(&a->r->wins[j], 1);
		if (round % 3 == 1 &&
		    fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, T0, T0 - token, T0))
			atomic_fetch_add(&a->r->bad, 1);
		return;
	}
	if (rc != -EEXIST)
		atomic_fetch_add(&a->r->bad, 1);
	/* what the loser saw names the winner */
	a->seen[j] = e.state == FG_HISTORY_OFFERED ? e.token
		     : e.state >= FG_HISTORY_ACCEPTED ? (uint32_t)(T0 - e.first_seen) : 0;
}

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	struct race *r = a->r;
	struct fg_history *h = thread_handle(r->t, a->idx, 30);

	for (unsigned round = 0; round < r->rounds; round++) {
		memset(a->won, 0, sizeof(a->won));
		memset(a->seen, 0, sizeof(a->seen));
		pthread_barrier_wait(&r->start);
		/* overlapping orders: thread i starts at ID i */
		for (unsigned j = 0; j < IDS_PER_ROUND; j++)
			race_one(a, h, round, (j + a->idx) % IDS_PER_ROUND);
		pthread_barrier_wait(&r->end);
		if (a->idx == 0) {
			for (unsigned j = 0; j < IDS_PER_ROUND; j++)
				if (atomic_load(&r->wins[j]) != 1)
					atomic_fetch_add(&r->bad, 1);
		}
		for (unsigned j = 0; j < IDS_PER_ROUND; j++)
			if (a->won[j])
				r->winner_token[j] = a->idx + 1;
		pthread_barrier_wait(&r->start);
		for (unsigned j = 0; j < IDS_PER_ROUND; j++)
			if (!a->won[j] && a->seen[j] != r->winner_token[j])
				atomic_fetch_add(&r->bad, 1);
		pthread_barrier_wait(&r->end);
		if (a->idx == 0)
			for (unsigned j = 0; j < IDS_PER_ROUND; j++)
				atomic_store(&r->wins[j], 0);
	}
	fg_history_detach(h);
	return NULL;
}

static int count_entry(void *arg, const struct fg_history_record *rec)
{
	(void)rec;
	++*(uint64_t *)arg;
	return 0;
}

static void exactly_one_winner(unsigned nthreads, unsigned rounds)
{
	struct tbl t;
	struct race r = { .t = &t, .nthreads = nthreads, .rounds = rounds };
	struct race_arg args[MAX_THREADS];
	struct fg_history_stats st;
	unsigned long claims0 = atomic_load(&hook_claims), bad;
	uint64_t cursor = 0, seen = 0;

	tbl_open(&t, (uint64_t)rounds * IDS_PER_ROUND * 2);
	pthread_barrier_init(&r.start, NULL, nthreads);
	pthread_barrier_init(&r.end, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++)
		args[i] = (struct race_arg){ .r = &r, .idx = i };
	run_threads(nthreads, race_thread, args, sizeof(args[0]));
	bad = atomic_load(&r.bad);
	ck_assert_uint_eq(bad, 0);
	/* one entry per ID, no stray copy: the counts and a walk agree */
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, (uint64_t)rounds * IDS_PER_ROUND);
	while (fg_history_iterate(t.h, &cursor, 1024, count_entry, &seen, T0) == 1)
		;
	ck_assert_uint_eq(seen, (uint64_t)rounds * IDS_PER_ROUND);
	/* races really happened: tentative entries that lost */
	r.lost = atomic_load(&hook_claims) - claims0 - (uint64_t)rounds * IDS_PER_ROUND;
	fprintf(stderr, "%u threads, %u rounds: %lu tentative entries lost, %lu EAGAIN\n",
		nthreads, rounds, (unsigned long)r.lost, (unsigned long)r.eagain);
	ck_assert_uint_gt(r.lost + r.eagain, 0);
	pthread_barrier_destroy(&r.start);
	pthread_barrier_destroy(&r.end);
	tbl_close(&t);
}

START_TEST(test_one_winner_2_threads)
{
	exactly_one_winner(2, 600 / SLOW);
}
END_TEST

START_TEST(test_one_winner_4_threads)
{
	exactly_one_winner(4, 300 / SLOW);
}
END_TEST

START_TEST(test_one_winner_8_threads)
{
	exactly_one_winner(8, 150 / SLOW);
}
END_TEST

/* ---- lookups racing relocation and expiry ---- */

#define STABLE 3000
#define DOOMED 3000
#define RETENTION (11 * 86400)

struct churn {
	struct tbl *t;
	unsigned cap;
	atomic_bool stop;
	atomic_uint bad, uncertain, writers_done;
	atomic_ulong lookups;
};

struct churn_arg {
	struct churn *c;
	unsigned idx;
};

/* Stable entries live on; doomed ones are first seen 20 days ago and go
 * at the first first-seen sweep. Each has times derived from its number,
 * so a reader can tell a torn entry from a whole one. */
static fg_time_t stable_fs(unsigned i) { return T0 - (fg_time_t)(i % 7919); }
static fg_time_t stable_date(unsigned i) { return stable_fs(i) - 60 * (fg_time_t)(i % 1000); }
static fg_time_t doomed_fs(unsigned i) { return T0 - 20 * 86400 - (fg_time_t)(i % 4001); }

static void *churn_writer(void *p)
{
	struct churn_arg *a = p;
	struct churn *c = a->c;
	struct fg_history *h = thread_handle(c->t, a->idx, 10);
	struct fg_history_ref ref;

	/* fill towards 97 % with new entries (relocations galore), with
	 * offers coming and going in between */
	for (unsigned i = 0; i < c->cap && !atomic_load(&c->stop); i++) {
		unsigned n = 1000000 + a->idx * 500000 + i;
		struct fg_history_key k = key_of(h, n);

		if (i % 4 == 0 && fg_history_offer(h, &k, T0, T0 + 5, n, &ref, NULL) == 0)
			fg_history_release(h, &ref);
		else if (fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL) == -ENOSPC)
			break;
	}
	atomic_fetch_add(&c->writers_done, 1);
	fg_history_detach(h);
	return NULL;
}

static void *churn_sweeper(void *p)
{
	struct churn_arg *a = p;
	struct churn *c = a->c;
	struct fg_history *h = thread_handle(c->t, a->idx, 10);
	struct fg_history_sweep s;

	while (atomic_load(&c->writers_done) < 2) {
		ck_assert_int_eq(fg_history_sweep_init(&s, FG_EXPIRY_FIRST_SEEN, T0, 0, RETENTION, false), 0);
		while (fg_history_sweep_step(h, &s, 64))
			sched_yield();
	}
	fg_history_detach(h);
	return NULL;
}

/* A reader: every answer must be a whole, right entry. */
static void check_one(struct churn *c, struct fg_history *h, unsigned i, bool doomed)
{
	struct fg_history_key k = key_of(h, doomed ? STABLE + i : i);
	struct fg_history_entry e;
	enum fg_history_state st = fg_history_lookup(h, &k, T0, &e);

	atomic_fetch_add(&c->lookups, 1);
	if (st == FG_HISTORY_ABSENT && (e.flags & FG_HISTORY_F_UNCERTAIN)) {
		atomic_fetch_add(&c->uncertain, 1);
		return;
	}
	if (doomed) {
		if (st == FG_HISTORY_ABSENT)
			return;
		if (st != FG_HISTORY_REJECTED || e.first_seen != doomed_fs(i) ||
		    e.article_date != doomed_fs(i) - 3600)
			atomic_fetch_add(&c->bad, 1);
		return;
	}
	if (st != FG_HISTORY_ACCEPTED || e.first_seen != stable_fs(i) ||
	    e.article_date != stable_date(i) || e.flags)
		atomic_fetch_add(&c->bad, 1);
}

static void *churn_reader(void *p)
{
	struct churn_arg *a = p;
	struct churn *c = a->c;
	struct fg_history *h = thread_handle(c->t, a->idx, 0);

	/* yield between a lookup's two buckets, so relocations get to run
	 * exactly where a reader could miss a moving entry */
	fg_history_set_test_hook(h, delay_hook, (void *)(uintptr_t)20);
	while (atomic_load(&c->writers_done) < 2)
		for (unsigned i = 0; i < STABLE; i += 1 + a->idx)
			check_one(c, h, i, i % 2);
	fg_history_detach(h);
	return NULL;
}

static void *churn_dispatch(void *p)
{
	struct churn_arg *a = p;

	return a->idx < 2 ? churn_writer(p) : a->idx == 2 ? churn_sweeper(p) : churn_reader(p);
}

START_TEST(test_lookups_race_relocation_and_expiry)
{
	const unsigned cap = 16000;
	struct tbl t;
	struct churn c = { .t = &t, .cap = cap };
	struct churn_arg args[5];
	struct fg_history_stats st;
	struct fg_history_sweep sw;
	unsigned long moves0 = atomic_load(&hook_moves), moves, bad;

	tbl_open(&t, cap);
	for (unsigned i = 0; i < STABLE; i++) {
		struct fg_history_key k = key_of(t.h, i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, stable_date(i),
							 stable_fs(i), T0, NULL), 0);
	}
	for (unsigned i = 0; i < DOOMED; i++) {
		struct fg_history_key k = key_of(t.h, STABLE + i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_REJECTED, doomed_fs(i) - 3600,
							 doomed_fs(i), T0, NULL), 0);
	}
	for (unsigned i = 0; i < 5; i++)
		args[i] = (struct churn_arg){ .c = &c, .idx = i };
	run_threads(5, churn_dispatch, args, sizeof(args[0]));
	fprintf(stderr, "churn: %lu lookups, %u uncertain, %lu relocations\n",
		(unsigned long)atomic_load(&c.lookups), atomic_load(&c.uncertain),
		atomic_load(&hook_moves) - moves0);
	bad = atomic_load(&c.bad);
	moves = atomic_load(&hook_moves) - moves0;
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_gt(moves, 100);
	/* afterwards, and after one more pass: every stable entry whole,
	 * every doomed one gone */
	ck_assert_int_eq(fg_history_sweep_init(&sw, FG_EXPIRY_FIRST_SEEN, T0, 0, RETENTION, false), 0);
	while (fg_history_sweep_step(t.h, &sw, 1000))
		;
	for (unsigned i = 0; i < STABLE; i++)
		check_one(&c, t.h, i, false);
	bad = atomic_load(&c.bad);
	ck_assert_uint_eq(bad, 0);
	for (unsigned i = 0; i < DOOMED; i++) {
		struct fg_history_key k = key_of(t.h, STABLE + i);

		ck_assert_int_eq(fg_history_lookup(t.h, &k, T0, NULL), FG_HISTORY_ABSENT);
	}
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.expired, DOOMED);
	tbl_close(&t);
}
END_TEST

/* ---- ACCEPTING is exclusive; a waiting transfer takes over ---- */

#define XIDS 6		/* IDs per generation: few, so transfers collide */
#define GENERATIONS 20

struct excl {
	struct tbl *t;
	unsigned gen;
	pthread_barrier_t start;
	atomic_uint owner[XIDS];
	atomic_uint finished[XIDS];
	atomic_uint done_ids, bad;
	atomic_ulong waits, aborts;
};

struct excl_arg {
	struct excl *x;
	unsigned idx;
};

/* One transfer of ID j: hold ACCEPTING a while (others must wait), then
 * abort (two times in three) or finish. */
static void excl_try(struct excl *x, struct fg_history *h, unsigned idx, unsigned j)
{
	struct fg_history_key k = key_of(h, 5000 + x->gen * XIDS + j);
	struct fg_history_ref ref;
	struct fg_history_entry e;
	int rc = fg_history_begin_accept(h, &k, T0, idx, &ref, &e);

	if (rc == -EAGAIN) {
		atomic_fetch_add(&x->waits, 1);
		sched_yield();
		return;
	}
	if (rc == -EEXIST) {
		if (e.state != FG_HISTORY_ACCEPTED || !atomic_load(&x->finished[j]))
			atomic_fetch_add(&x->bad, 1);
		return;
	}
	if (rc || atomic_exchange(&x->owner[j], 1))
		atomic_fetch_add(&x->bad, 1);	/* two holders at once */
	for (int i = 0; i < 3; i++)
		sched_yield();
	atomic_store(&x->owner[j], 0);
	if (rng() % 3) {
		/* the article could not be made durable: a waiting one takes over */
		atomic_fetch_add(&x->aborts, 1);
		if (fg_history_abort(h, &ref))
			atomic_fetch_add(&x->bad, 1);
		return;
	}
	if (atomic_fetch_add(&x->finished[j], 1) != 0)
		atomic_fetch_add(&x->bad, 1);
	if (fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, T0, T0, T0))
		atomic_fetch_add(&x->bad, 1);
	atomic_fetch_add(&x->done_ids, 1);
}

static void *excl_thread(void *p)
{
	struct excl_arg *a = p;
	struct excl *x = a->x;
	struct fg_history *h = thread_handle(x->t, a->idx, 30);

	for (unsigned g = 0; g < GENERATIONS; g++) {
		pthread_barrier_wait(&x->start);
		while (atomic_load(&x->done_ids) < XIDS)
			excl_try(x, h, a->idx, (unsigned)(rng() % XIDS));
		pthread_barrier_wait(&x->start);
		if (a->idx == 0) {
			for (unsigned j = 0; j < XIDS; j++) {
				if (atomic_load(&x->finished[j]) != 1)
					atomic_fetch_add(&x->bad, 1);
				atomic_store(&x->finished[j], 0);
			}
			atomic_store(&x->done_ids, 0);
			x->gen++;
		}
	}
	fg_history_detach(h);
	return NULL;
}

START_TEST(test_accepting_is_exclusive)
{
	struct tbl t;
	struct excl x = { .t = &t };
	struct excl_arg args[4];
	unsigned long bad, waits, aborts;
	struct fg_history_stats st;

	tbl_open(&t, 1000);
	pthread_barrier_init(&x.start, NULL, 4);
	for (unsigned i = 0; i < 4; i++)
		args[i] = (struct excl_arg){ .x = &x, .idx = i };
	run_threads(4, excl_thread, args, sizeof(args[0]));
	bad = atomic_load(&x.bad);
	waits = atomic_load(&x.waits);
	aborts = atomic_load(&x.aborts);
	fprintf(stderr, "accepting: %lu waits, %lu aborts taken over\n", waits, aborts);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_gt(waits, 0);
	ck_assert_uint_gt(aborts, 0);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTED], XIDS * GENERATIONS);
	ck_assert_uint_eq(st.entries, XIDS * GENERATIONS);
	pthread_barrier_destroy(&x.start);
	tbl_close(&t);
}
END_TEST

/* ---- a dead writer's entries dropped beside a live writer ---- */

#define DEAD_OWNER 2u
#define LIVE_OWNER 1u
#define DEAD_IDS 4000u		/* even: OFFERED, odd: ACCEPTING */

struct dropper {
	struct tbl *t;
	atomic_bool in_pass;		/* a drop pass is running */
	atomic_bool live_over;
	atomic_ulong bad;
	atomic_ulong taken_over;	/* dead offers the live writer completed */
	atomic_ulong raced;		/* take-overs tried while a pass ran */
	unsigned long dropped;
};

/* The live writer: its own IDs through offer -> accept -> finish, and the
 * dead writer's offers taken over (RFC 4644: any session may send an
 * offered ID). Every finish must succeed: a drop never takes an entry a
 * live session holds. */
static void *live_writer(void *p)
{
	struct dropper *d = p;
	struct fg_history *h = thread_handle(d->t, 0, 10);

	for (unsigned i = 0; i < DEAD_IDS; i++) {
		struct fg_history_key k = key_of(h, 5000000 + i);
		struct fg_history_ref ref;
		struct fg_history_entry e;

		if (fg_history_offer(h, &k, T0, T0 + 60, fg_history_token(i, LIVE_OWNER), &ref, NULL) ||
		    fg_history_begin_accept(h, &k, T0, fg_history_token(i, LIVE_OWNER), &ref, NULL) ||
		    fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, T0, T0, T0))
			atomic_fetch_add(&d->bad, 1);
		if (i % 2 == 0) {
			/* the first take-over waits for a drop pass to be running:
			 * the race is then certain to have been run, not hoped for */
			while (i == 0 && !atomic_load(&d->in_pass))
				sched_yield();
			if (atomic_load(&d->in_pass))
				atomic_fetch_add(&d->raced, 1);
			k = key_of(h, 6000000 + i);
			if (fg_history_begin_accept(h, &k, T0, fg_history_token(i, LIVE_OWNER), &ref, &e) ||
			    fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, T0, T0, T0))
				atomic_fetch_add(&d->bad, 1);
			else if (e.state == FG_HISTORY_OFFERED)
				atomic_fetch_add(&d->taken_over, 1);
		}
	}
	atomic_store(&d->live_over, true);
	fg_history_detach(h);
	return NULL;
}

/* floodctld's side: drop the dead owner's entries, pass after pass, while
 * the live writer works. */
static void *drop_thread(void *p)
{
	struct dropper *d = p;
	struct fg_history *h = thread_handle(d->t, 1, 10);

	while (!atomic_load(&d->live_over)) {
		atomic_store(&d->in_pass, true);
		d->dropped += fg_history_drop_owned(h, DEAD_OWNER, NULL);
		atomic_store(&d->in_pass, false);
	}
	fg_history_detach(h);
	return NULL;
}

START_TEST(test_drop_owned_beside_a_live_writer)
{
	struct tbl t;
	struct dropper d = { .t = &t };
	struct fg_history_owned o;
	struct fg_history_stats st;
	pthread_t th[2];
	unsigned long taken;

	tbl_open(&t, 40000);
	for (unsigned i = 0; i < DEAD_IDS; i++) {
		struct fg_history_key k = key_of(t.h, 6000000 + i);
		struct fg_history_ref ref;

		if (i % 2 == 0)
			ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 60,
							  fg_history_token(i, DEAD_OWNER), &ref, NULL), 0);
		else
			ck_assert_int_eq(fg_history_begin_accept(t.h, &k, T0,
								 fg_history_token(i, DEAD_OWNER), &ref,
								 NULL), 0);
	}
	ck_assert_int_eq(pthread_create(&th[0], NULL, live_writer, &d), 0);
	ck_assert_int_eq(pthread_create(&th[1], NULL, drop_thread, &d), 0);
	ck_assert_int_eq(pthread_join(th[0], NULL), 0);
	ck_assert_int_eq(pthread_join(th[1], NULL), 0);
	d.dropped += fg_history_drop_owned(t.h, DEAD_OWNER, NULL);
	taken = atomic_load(&d.taken_over);
	fprintf(stderr, "drop beside a live writer: %lu dropped, %lu offers taken over, %lu "
		"take-overs tried during a pass\n", d.dropped, taken, atomic_load(&d.raced));
	ck_assert_uint_eq(atomic_load(&d.bad), 0);
	ck_assert_uint_gt(atomic_load(&d.raced), 0);
	/* each dead offer was either taken over or dropped; every dead
	 * transfer dropped; nothing of the dead owner is left */
	ck_assert_uint_eq(d.dropped + taken, DEAD_IDS);
	fg_history_count_owned(t.h, DEAD_OWNER, &o);
	ck_assert_uint_eq(o.offered + o.accepting + o.pending, 0);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.by_state[FG_HISTORY_ACCEPTED], DEAD_IDS + DEAD_IDS / 2);
	ck_assert_uint_eq(st.entries, DEAD_IDS + DEAD_IDS / 2);
	tbl_close(&t);
}
END_TEST

/* ---- an image copied under relocation loses nothing ---- */

struct snap {
	struct tbl *t;
	unsigned cap;
	atomic_bool stop;
};

struct snap_arg {
	struct snap *s;
	unsigned idx;
};

static void *snap_writer(void *p)
{
	struct snap_arg *a = p;
	struct fg_history *h = thread_handle(a->s->t, a->idx, 5);

	for (unsigned i = 0; !atomic_load(&a->s->stop); i++) {
		struct fg_history_key k = key_of(h, 2000000 + a->idx * 1000000 + i);

		if (fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL) == -ENOSPC)
			break;
	}
	fg_history_detach(h);
	return NULL;
}

START_TEST(test_image_copy_under_relocation)
{
	const unsigned cap = 40000, pre = 24000;
	struct tbl t;
	struct snap s = { .t = &t, .cap = cap };
	struct snap_arg args[2];
	pthread_t th[2];
	void *img, *mem2;
	unsigned long moves0 = atomic_load(&hook_moves);
	unsigned copies = 0;

	tbl_open(&t, cap);
	for (unsigned i = 0; i < pre; i++) {
		struct fg_history_key k = key_of(t.h, i);

		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL), 0);
	}
	img = aligned_alloc(64, t.len);
	mem2 = aligned_alloc(64, t.len);
	/* the copier yields between chunks: relocations run mid-copy */
	fg_history_set_test_hook(t.h, delay_hook, (void *)(uintptr_t)50);
	for (unsigned i = 0; i < 2; i++) {
		args[i] = (struct snap_arg){ .s = &s, .idx = i };
		ck_assert_int_eq(pthread_create(&th[i], NULL, snap_writer, &args[i]), 0);
	}
	/* copy while the writers fill the table from 60 % towards 98 % */
	for (; copies < 12 / SLOW + 2; copies++) {
		enum fg_history_error why;
		struct fg_history *h2;

		ck_assert_int_eq(fg_history_image_copy(t.h, img, t.len), 0);
		h2 = fg_history_restore_parallel(mem2, t.len, img, t.len, tbl_shards ? 3 : 1, &why);
		ck_assert_ptr_nonnull(h2);
		for (unsigned i = 0; i < pre; i++) {
			struct fg_history_key k = key_of(h2, i);

			ck_assert_msg(fg_history_lookup(h2, &k, T0, NULL) == FG_HISTORY_ACCEPTED,
				      "copy %u lost entry %u", copies, i);
		}
		fg_history_detach(h2);
	}
	atomic_store(&s.stop, true);
	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	fprintf(stderr, "image: %u copies, %lu relocations during them\n", copies,
		atomic_load(&hook_moves) - moves0);
	ck_assert_uint_gt(atomic_load(&hook_moves) - moves0, 0);
	free(img);
	free(mem2);
	tbl_close(&t);
}
END_TEST

static Suite *history_mt_suite(void)
{
	Suite *s = suite_create("history_mt");
	TCase *tc = tcase_create("concurrency");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_one_winner_2_threads);
	tcase_add_test(tc, test_one_winner_4_threads);
	tcase_add_test(tc, test_one_winner_8_threads);
	tcase_add_test(tc, test_lookups_race_relocation_and_expiry);
	tcase_add_test(tc, test_accepting_is_exclusive);
	tcase_add_test(tc, test_drop_owned_beside_a_live_writer);
	tcase_add_test(tc, test_image_copy_under_relocation);
	suite_add_tcase(s, tc);
	tc = tcase_create("sharded");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, shards_on, shards_off);
	tcase_add_test(tc, test_one_winner_4_threads);
	tcase_add_test(tc, test_lookups_race_relocation_and_expiry);
	tcase_add_test(tc, test_image_copy_under_relocation);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(history_mt_suite)
