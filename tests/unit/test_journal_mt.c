/* SPDX-License-Identifier: MIT */
/*
 * test_journal_mt.c — the journal's rings under concurrency (also run
 * under ThreadSanitizer): two writer threads journal 100 000 records each
 * through small rings that fill and wrap many times, deferring whenever
 * reserve says -ENOSPC, while a consumer thread drains and group-commits
 * and another sums the counters; then every record is in the segments
 * exactly once, in each writer's order, and every writer saw all of its
 * records committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/journal.h"
#include "ctl_fixture.h"
#include "fgtest.h"

#define WRITERS 2
#define PER_WRITER 100000u

struct ctx {
	struct fg_region *r;
	struct fg_journal *j;
	atomic_uint writers_done;
	uint64_t deferrals[WRITERS];
};

struct wctx {
	struct ctx *c;
	unsigned id;
};

static int no_sync(int fd)
{
	(void)fd;
	return 0;
}

static void *writer(void *arg)
{
	struct wctx *wc = arg;
	struct fg_region_writer *w;
	struct fg_history_key k;
	int err;

	w = fg_region_claim(wc->c->r, "mt", &err);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < PER_WRITER; i++) {
		while (fg_journal_reserve(w) == -ENOSPC) {
			wc->c->deferrals[wc->id]++;
			sched_yield();
		}
		k.lo = i;
		k.hi = wc->id;
		ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 100, 100, 0, 0), 0);
	}
	while (fg_region_writer_committed(w) < PER_WRITER)
		sched_yield();
	fg_region_release(w);
	atomic_fetch_add(&wc->c->writers_done, 1);
	return NULL;
}

static void *consumer(void *arg)
{
	struct ctx *c = arg;
	unsigned passes = 0;

	while (atomic_load(&c->writers_done) < WRITERS) {
		fg_journal_drain(c->j, c->r, 512);
		if (++passes % 8 == 0)
			ck_assert_int_eq(fg_journal_commit(c->j, c->r), 0);
		fg_region_reap(c->r, NULL, NULL);
	}
	ck_assert_int_eq(fg_journal_commit(c->j, c->r), 0);
	fg_region_reap(c->r, NULL, NULL);
	return NULL;
}

static void *summer(void *arg)
{
	struct ctx *c = arg;
	struct fg_region_wstats *s = malloc(sizeof(*s));

	while (atomic_load(&c->writers_done) < WRITERS)
		fg_region_sum(c->r, s);
	free(s);
	return NULL;
}

struct seen {
	uint64_t next[WRITERS];
	uint64_t total;
};

static int check_rec(void *arg, const struct fg_jrec *r)
{
	struct seen *s = arg;

	ck_assert_uint_lt(r->key_hi, WRITERS);
	ck_assert_uint_eq(r->key_lo, s->next[r->key_hi]);
	s->next[r->key_hi]++;
	s->total++;
	return 0;
}

START_TEST(test_two_writers_one_consumer)
{
	struct ctl_fixture fx = { 0 };
	struct fg_journal_params jp;
	struct ctx c = { 0 };
	struct wctx wc[WRITERS];
	pthread_t tw[WRITERS], tc, ts;
	struct seen seen = { { 0 }, 0 };
	uint64_t *segs;
	size_t n;
	int err;

	c.r = fx_region(&fx, 1000, WRITERS, 1024);
	memset(&jp, 0, sizeof(jp));
	jp.dir = fx_dir(&fx);
	jp.segment_bytes = 1 << 20;	/* rotate a few times too */
	jp.sync_fn = no_sync;	/* durability is not what this test is about */
	fg_region_seed(c.r, jp.seed);
	fg_region_seed_check(fg_region_history(c.r), &jp.seed_check);
	c.j = fg_journal_open(&jp, fg_region_ctld_stats(c.r), &err);
	ck_assert_ptr_nonnull(c.j);
	for (unsigned i = 0; i < WRITERS; i++) {
		wc[i].c = &c;
		wc[i].id = i;
		pthread_create(&tw[i], NULL, writer, &wc[i]);
	}
	pthread_create(&tc, NULL, consumer, &c);
	pthread_create(&ts, NULL, summer, &c);
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(tw[i], NULL);
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	fg_journal_close(c.j);

	ck_assert_int_eq(fg_journal_list(fx.dir, &segs, &n), 0);
	ck_assert_uint_gt(n, 3);
	for (size_t i = 0; i < n; i++) {
		char path[512];
		struct fg_jseg_scan sc;
		struct stat st;
		void *map;
		int fd;

		fg_journal_segment_path(fx.dir, segs[i], path, sizeof(path));
		fd = open(path, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		fstat(fd, &st);
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		ck_assert_int_eq(fg_jseg_scan(map, (size_t)st.st_size, 0, check_rec, &seen, &sc), 0);
		ck_assert(!sc.torn);
		munmap(map, (size_t)st.st_size);
		close(fd);
	}
	free(segs);
	ck_assert_uint_eq(seen.total, WRITERS * PER_WRITER);
	for (unsigned i = 0; i < WRITERS; i++)
		ck_assert_uint_eq(seen.next[i], PER_WRITER);
	ck_assert_uint_gt(c.deferrals[0] + c.deferrals[1], 0);	/* the rings did fill */
	ck_assert_uint_eq(fg_region_live_writers(c.r), 0);
	fx_cleanup(&fx);
}
END_TEST

static Suite *journal_mt_suite(void)
{
	Suite *s = suite_create("journal_mt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_two_writers_one_consumer);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(journal_mt_suite)
