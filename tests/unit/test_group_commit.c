/* SPDX-License-Identifier: MIT */
/*
 * test_group_commit.c — the queue writer's group commit waits only when
 * there is a group (qwriter.c, head comment):
 *   - the first article at an idle writer is synced at once, however long
 *     the interval;
 *   - articles committed while a sync runs are synced together by the
 *     next one (one fdatasync for all of them);
 *   - the interval bounds how long a group may grow; 0 syncs each article.
 * A slow sync is a fault hook that blocks inside the commit until the test
 * lets it go; a slow append one that sleeps longer than the interval. Sync
 * counts come from the writer's counter block, read after the writer
 * stopped.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/qwriter.h"

static char dir[64];

static const char *const ART =
	"Path: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.test\r\nSubject: s\r\n"
	"Message-ID: <m@x>\r\nDate: Mon, 02 Mar 2026 12:00:00 +0000\r\n\r\nbody\r\n";

/* Far longer than any wait below: an article that waited for the
 * interval would fail the test by its deadline. */
#define LONG_INTERVAL_NS (60ull * 1000000000)
/* Deadlines: fg_test_wait_until, a bound on failure only. */

/* The writer's fault hook: a sync that blocks while `hold_sync` is set
 * (and says it started), appends that take `append_us` each. */
struct slow {
	_Atomic bool hold_sync;
	_Atomic unsigned syncs_entered;
	unsigned append_us;
};

static bool sync_let_go(void *arg)
{
	return !atomic_load(&((struct slow *)arg)->hold_sync);
}

static int slow_hook(void *arg, enum fg_queue_fault where)
{
	struct slow *sl = arg;

	if (where == FG_QUEUE_FAULT_SYNC) {
		atomic_fetch_add(&sl->syncs_entered, 1);
		/* the test lets it go (a bound keeps a failed test from hanging) */
		fg_test_wait_until(sync_let_go, sl, 200);
	} else if (where == FG_QUEUE_FAULT_WRITE && sl->append_us) {
		usleep(sl->append_us);
	}
	return 0;
}

struct drv {
	int status[256];
	unsigned done;
};

static void on_done(void *ctx, uint64_t cookie, int status)
{
	struct drv *d = ctx;

	ck_assert_uint_lt(cookie, 256);
	d->status[cookie] = status;
	d->done++;
}

struct waiting {
	struct fg_queue_sink *s;
	struct drv *d;
	struct slow *sl;
	unsigned want;
};

static bool all_done(void *arg)
{
	struct waiting *w = arg;

	fg_queue_sink_ops.poll(w->s, fg_mono_ns(), on_done, w->d);
	return w->d->done >= w->want;
}

static void wait_done(struct fg_queue_sink *s, struct drv *d, unsigned want)
{
	struct waiting w = { .s = s, .d = d, .want = want };

	fg_test_wait_until(all_done, &w, 100);
	ck_assert_uint_eq(d->done, want);
	for (unsigned i = 0; i < want; i++)
		ck_assert_int_eq(d->status[i], 0);
}

static bool syncs_entered(void *arg)
{
	struct waiting *w = arg;

	return atomic_load(&w->sl->syncs_entered) >= w->want;
}

static void wait_sync_entered(struct slow *sl, unsigned n)
{
	struct waiting w = { .sl = sl, .want = n };

	ck_assert_msg(fg_test_wait_until(syncs_entered, &w, 100), "%u syncs begun, waited for %u",
		      atomic_load(&sl->syncs_entered), n);
}

static void put(struct fg_queue_sink *s, unsigned i)
{
	struct fg_iov piece = { (const uint8_t *)ART, (uint32_t)strlen(ART), NULL };
	char id[32];
	void *h;

	snprintf(id, sizeof(id), "<gc%u@t>", i);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, id, strlen(id), 0, &h), 0);
	ck_assert_int_eq(fg_queue_sink_ops.append(s, h, &piece, false), 0);
	ck_assert_int_eq(fg_queue_sink_ops.commit(s, h, i), 0);
}

struct rig {
	struct fg_queue *q;
	struct fg_queue_sink *s;
	struct fg_stats st;
	struct slow sl;
	struct drv d;
};

static void rig_start(struct rig *r, uint64_t commit_ns)
{
	struct fg_queue_params p = { .dir = dir, .commit_ns = commit_ns, .stats = &r->st,
				     .fault = slow_hook, .fault_arg = &r->sl };
	struct fg_queue_sink_params sp = { 0 };
	int err = 0;

	strcpy(dir, "/tmp/fgq-gc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	r->q = fg_queue_open(&p, NULL, &err);
	ck_assert_msg(r->q != NULL, "open: %s", strerror(-err));
	r->s = fg_queue_sink_create(r->q, &sp);
	ck_assert_ptr_nonnull(r->s);
	ck_assert_int_eq(fg_queue_start(r->q), 0);
}

/* Stops the writer (its counters are then stable) and returns the syncs. */
static uint64_t rig_stop(struct rig *r)
{
	char cmd[128];
	struct fg_queue_cursor end;

	fg_queue_stop(r->q);
	fg_queue_durable(r->q, &end);
	ck_assert_uint_eq(end.recno, r->d.done);
	fg_queue_sink_destroy(r->s);
	fg_queue_close(r->q);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	return r->st.ctr[FG_CTR_QUEUE_COMMITS];
}

START_TEST(idle_writer_syncs_at_once)
{
	static struct rig r;

	memset(&r, 0, sizeof(r));
	rig_start(&r, LONG_INTERVAL_NS);
	/* one at a time, each after the last one's answer: each its own sync,
	 * long before the interval */
	for (unsigned i = 0; i < 5; i++) {
		put(r.s, i);
		wait_done(r.s, &r.d, i + 1);
	}
	ck_assert_uint_eq(rig_stop(&r), 5);
}
END_TEST

/* The first article's sync is held while `behind` more are committed;
 * then it is let go. Returns the syncs it took to answer them all. */
static uint64_t behind_a_held_sync(uint64_t commit_ns, unsigned append_us, unsigned behind)
{
	static struct rig r;

	memset(&r, 0, sizeof(r));
	atomic_store(&r.sl.hold_sync, true);
	r.sl.append_us = append_us;
	rig_start(&r, commit_ns);
	put(r.s, 0);
	wait_sync_entered(&r.sl, 1);
	for (unsigned i = 1; i <= behind; i++)
		put(r.s, i);
	fg_queue_sink_ops.poll(r.s, fg_mono_ns(), on_done, &r.d);
	ck_assert_uint_eq(r.d.done, 0);
	atomic_store(&r.sl.hold_sync, false);
	wait_done(r.s, &r.d, behind + 1);
	return rig_stop(&r);
}

START_TEST(arrivals_during_a_sync_share_the_next)
{
	ck_assert_uint_eq(behind_a_held_sync(LONG_INTERVAL_NS, 0, 40), 2);
}
END_TEST

START_TEST(zero_interval_syncs_each)
{
	ck_assert_uint_eq(behind_a_held_sync(0, 0, 6), 7);
}
END_TEST

START_TEST(interval_bounds_a_group)
{
	/* every append (3 ms) outlasts the interval (2 ms): a group can hold
	 * one article */
	ck_assert_uint_eq(behind_a_held_sync(2000000, 3000, 6), 7);
}
END_TEST

START_TEST(slow_appends_within_the_interval_share_a_sync)
{
	/* the same slow appends with a long interval make one group after the
	 * held sync, so the bound above is the interval's doing */
	ck_assert_uint_eq(behind_a_held_sync(LONG_INTERVAL_NS, 3000, 6), 2);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("group_commit");
	TCase *t = tcase_create("writer");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, idle_writer_syncs_at_once);
	tcase_add_test(t, arrivals_during_a_sync_share_the_next);
	tcase_add_test(t, zero_interval_syncs_each);
	tcase_add_test(t, interval_bounds_a_group);
	tcase_add_test(t, slow_appends_within_the_interval_share_a_sync);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(make_suite)
