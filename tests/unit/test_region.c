/* SPDX-License-Identifier: MIT */
/*
 * test_region.c — the shared region: what attach and adopt refuse, writer
 * slots (claim, release, a dead owner reaped only after its ring is
 * drained and committed), the rings' reserve/push/peek/release, peers,
 * counter sums that never go backwards, a dead writer's transient entries
 * resolved beside live writers, clearing the rest only when no writer is
 * alive.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/journal.h"
#include "floodgate/region.h"
#include "../../lib/region/region_int.h"
#include "ctl_fixture.h"
#include "fgtest.h"

static struct fg_region *attach(const char *shm, char *why, size_t len)
{
	why[0] = '\0';
	return fg_region_attach(shm, why, len);
}

START_TEST(test_create_attach_and_layout)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 4, 64), *a;
	char why[256];
	uint8_t s1[16], s2[16];

	a = attach(fx.shm, why, sizeof(why));
	ck_assert_msg(a != NULL, "%s", why);
	ck_assert_uint_eq(fg_region_nslots(a), 4);
	ck_assert_uint_eq(fg_region_ring_capacity(a, FG_RING_JOURNAL), 64);
	ck_assert_uint_eq(fg_region_ring_capacity(a, FG_RING_VLOG), 16);
	ck_assert_int_eq(fg_region_owner(a), getpid());
	fg_region_seed(r, s1);
	fg_region_seed(a, s2);
	ck_assert_mem_eq(s1, s2, 16);
	ck_assert_uint_eq(fg_region_mapped_size(a), fg_region_mapped_size(r));
	ck_assert(!fg_region_hugepages(a));
	fg_region_close(a);
	fx_cleanup(&fx);
}
END_TEST

/* Corrupt one header field in the file and expect attach to say why. */
static void expect_refused(const char *shm, size_t off, const void *val, size_t len,
			   const char *needle)
{
	int fd = open(shm, O_RDWR);
	uint8_t save[16];
	struct fg_region *a;
	char why[256];

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, save, len, (off_t)off), (ssize_t)len);
	ck_assert_int_eq(pwrite(fd, val, len, (off_t)off), (ssize_t)len);
	a = attach(shm, why, sizeof(why));
	ck_assert_ptr_null(a);
	ck_assert_msg(strstr(why, needle) != NULL, "'%s' lacks '%s'", why, needle);
	ck_assert_int_eq(pwrite(fd, save, len, (off_t)off), (ssize_t)len);
	close(fd);
}

START_TEST(test_attach_refuses_what_it_does_not_understand)
{
	struct ctl_fixture fx = { 0 };
	uint32_t v2 = FG_REGION_LAYOUT + 1, building = FG_RSTATE_BUILDING;
	uint64_t schema = 12345, big = 1ull << 40;
	struct fg_region *a;
	char why[256];

	fx_region(&fx, 1000, 2, 64);
	expect_refused(fx.shm, 0, "XXREGION", 8, "bad magic");
	expect_refused(fx.shm, 8, &v2, 4, "layout version");
	expect_refused(fx.shm, 24, &schema, 8, "counter tables differ");
	expect_refused(fx.shm, 112, &big, 8, "do not add up");
	expect_refused(fx.shm, 32, &building, 4, "still building");
	/* the seed check ties the history slice to the header */
	expect_refused(fx.shm, 88, &schema, 8, "seed does not match");
	a = attach("/dev/shm/fg-ctl-unit-does-not-exist", why, sizeof(why));
	ck_assert_ptr_null(a);
	ck_assert(strstr(why, "is floodctld running?") != NULL);
	fx_cleanup(&fx);
}
END_TEST

/* A child that waits until *release is closed; returns its pid. */
static pid_t waiting_child(int *release)
{
	int fds[2];
	pid_t c;

	ck_assert_int_eq(pipe(fds), 0);
	c = fork();
	if (c == 0) {
		char b;

		close(fds[1]);
		(void)!read(fds[0], &b, 1);
		_exit(0);
	}
	close(fds[0]);
	*release = fds[1];
	return c;
}

/* A pid and start time of a process that has exited. */
static void dead_process(pid_t *pid, uint64_t *start)
{
	int release;
	pid_t c = waiting_child(&release);

	*start = fg_region_proc_start(c);
	ck_assert_uint_ne(*start, 0);
	ck_assert(fg_region_proc_alive(c, *start));
	close(release);
	ck_assert_int_eq(waitpid(c, NULL, 0), c);
	ck_assert(!fg_region_proc_alive(c, *start));
	*pid = c;
}

START_TEST(test_owner_must_be_running_and_adopt)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64), *a;
	pid_t pid;
	uint64_t start;
	char why[256];
	int err;

	/* a live owner (this process) refuses a second adopter only if it is
	 * another process: adopt by the owner itself is allowed */
	dead_process(&pid, &start);
	atomic_store(&r->hdr->owner_pid, pid);
	atomic_store(&r->hdr->owner_start, start);
	a = attach(fx.shm, why, sizeof(why));
	ck_assert_ptr_null(a);
	ck_assert_msg(strstr(why, "floodctld, is not running") != NULL, "%s", why);
	/* floodctld restarting adopts it and becomes its owner */
	a = fg_region_adopt(fx.shm, &err, why, sizeof(why));
	ck_assert_msg(a != NULL, "%s", why);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(fg_region_owner(a), getpid());
	fg_region_close(a);
	a = attach(fx.shm, why, sizeof(why));
	ck_assert_msg(a != NULL, "%s", why);
	fg_region_close(a);
	/* adopt of nothing, and of a half-built region */
	ck_assert_ptr_null(fg_region_adopt("/dev/shm/fg-ctl-unit-none", &err, why, sizeof(why)));
	ck_assert_int_eq(err, -ENOENT);
	atomic_store(&r->hdr->state, FG_RSTATE_BUILDING);
	ck_assert_ptr_null(fg_region_adopt(fx.shm, &err, why, sizeof(why)));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert(strstr(why, "half-built") != NULL);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_adopt_refuses_a_live_owner)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	char why[256];
	int err, release;
	pid_t c = waiting_child(&release);

	atomic_store(&r->hdr->owner_pid, c);
	atomic_store(&r->hdr->owner_start, fg_region_proc_start(c));
	ck_assert_ptr_null(fg_region_adopt(fx.shm, &err, why, sizeof(why)));
	ck_assert_int_eq(err, -EBUSY);
	ck_assert(strstr(why, "running floodctld") != NULL);
	close(release);
	waitpid(c, NULL, 0);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_claim_until_busy_release_reap)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 3, 64);
	struct fg_region_writer *w[3];
	struct fg_region_slot_info si;
	unsigned dead = 9;
	int err;

	for (int i = 0; i < 3; i++) {
		w[i] = fg_region_claim(r, "test", &err);
		ck_assert_ptr_nonnull(w[i]);
		ck_assert_uint_eq(fg_region_writer_slot(w[i]), (unsigned)i);
	}
	ck_assert_ptr_null(fg_region_claim(r, "test", &err));
	ck_assert_int_eq(err, -EBUSY);
	ck_assert_ptr_null(fg_region_claim(r, "", &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_uint_eq(fg_region_live_writers(r), 3);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_LIVE);
	ck_assert_int_eq(si.pid, getpid());
	ck_assert_str_eq(si.name, "test");
	ck_assert_uint_eq(si.generation, 1);
	/* a live slot is never reaped */
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 0);
	fg_region_release(w[1]);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_RELEASED);
	ck_assert_uint_eq(fg_region_reap(r, &dead, NULL), 1);
	ck_assert_uint_eq(dead, 0);
	ck_assert_uint_eq(fg_region_live_writers(r), 2);
	w[1] = fg_region_claim(r, "again", &err);
	ck_assert_ptr_nonnull(w[1]);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_uint_eq(si.generation, 2);
	for (int i = 0; i < 3; i++)
		fg_region_release(w[i]);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 3);
	ck_assert_uint_eq(fg_region_live_writers(r), 0);
	fx_cleanup(&fx);
}
END_TEST

/* Counters add up over the slots and the retired block; a peer's
 * last-seen time is their maximum, also once its writer's slot is freed. */
START_TEST(test_sum_adds_counters_and_keeps_latest_last_seen)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 3, 64);
	const char *peers[] = { "alpha", "beta" };
	struct fg_region_writer *w[2];
	struct fg_region_wstats sum;
	int err;

	ck_assert_int_eq(fg_region_add_peers(r, peers, 2), 2);
	for (int i = 0; i < 2; i++) {
		w[i] = fg_region_claim(r, "test", &err);
		ck_assert_ptr_nonnull(w[i]);
		fg_region_writer_stats(w[i])->peer[0].ctr[FG_CTR_NNTP_OFFERS] = 5;
	}
	fg_region_writer_stats(w[0])->peer_last_seen[0] = 2000;
	fg_region_writer_stats(w[1])->peer_last_seen[0] = 1000;
	fg_region_writer_stats(w[1])->peer_last_seen[1] = 1500;
	fg_region_sum(r, &sum);
	ck_assert_uint_eq(sum.peer[0].ctr[FG_CTR_NNTP_OFFERS], 10);
	ck_assert_int_eq(sum.peer_last_seen[0], 2000);
	ck_assert_int_eq(sum.peer_last_seen[1], 1500);
	/* the writer that saw alpha last leaves: its time stays (retired) */
	fg_region_release(w[0]);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	fg_region_sum(r, &sum);
	ck_assert_uint_eq(sum.peer[0].ctr[FG_CTR_NNTP_OFFERS], 10);
	ck_assert_int_eq(sum.peer_last_seen[0], 2000);
	ck_assert_int_eq(sum.peer_last_seen[1], 1500);
	fg_region_writer_stats(w[1])->peer_last_seen[0] = 3000;
	fg_region_sum(r, &sum);
	ck_assert_int_eq(sum.peer_last_seen[0], 3000);
	fg_region_release(w[1]);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_ring_reserve_push_peek_consume)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_region_writer *w;
	const void *recs;
	struct fg_jrec rec, out;
	int err;

	w = fg_region_claim(r, "ring", &err);
	ck_assert_ptr_nonnull(w);
	memset(&rec, 0, sizeof(rec));
	rec.state = FG_HISTORY_ACCEPTED;
	/* 60 pushed + 4 reserved fill the ring of 64 */
	for (int i = 0; i < 60; i++) {
		rec.key_lo = (uint64_t)i;
		ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(fg_region_ring_reserve(w, FG_RING_JOURNAL), 0);
	ck_assert_int_eq(fg_region_ring_reserve(w, FG_RING_JOURNAL), -ENOSPC);
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);	/* uses one */
	/* give the other reservations back: 61 records, no reservation */
	for (int i = 0; i < 3; i++)
		fg_region_ring_unreserve(w, FG_RING_JOURNAL);
	ck_assert_uint_eq(fg_region_ring_pushed(w, FG_RING_JOURNAL), 61);
	/* reading ahead gives no room back; releasing 10 does */
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 0, &recs, 10), 10);
	memcpy(&out, recs, sizeof(out));
	ck_assert_uint_eq(out.key_lo, 0);
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 40, &recs, 1000), 21);
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), -ENOSPC);
	fg_region_ring_release(r, 0, FG_RING_JOURNAL, 10);
	ck_assert_uint_eq(fg_region_writer_committed(w), 10);
	for (int i = 0; i < 10; i++) {
		rec.key_lo = 100 + (uint64_t)i;
		ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), 0);
	}
	ck_assert_int_eq(fg_region_ring_push(w, FG_RING_JOURNAL, &rec), -ENOSPC);
	ck_assert_int_eq(fg_region_ring_reserve(w, FG_RING_JOURNAL), -ENOSPC);
	/* outside [tail, head): nothing */
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 9, &recs, 1000), 0);
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 74, &recs, 1000), 0);
	/* peek never crosses the wrap: 54 contiguous (10..63), then 10 wrapped */
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 10, &recs, 1000), 54);
	ck_assert_uint_eq(fg_region_ring_peek(r, 0, FG_RING_JOURNAL, 64, &recs, 1000), 10);
	memcpy(&out, recs, sizeof(out));
	ck_assert_uint_eq(out.key_lo, 100);	/* record 64: the first pushed after the release */
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

/* A child claims a slot, journals `n` records and dies without release. */
static pid_t dying_writer(const char *shm, unsigned n)
{
	pid_t c = fork();

	if (c == 0) {
		char why[256];
		struct fg_region *r = fg_region_attach(shm, why, sizeof(why));
		struct fg_region_writer *w;
		struct fg_history_key k;
		int err;

		if (!r)
			_exit(2);
		w = fg_region_claim(r, "doomed", &err);
		if (!w)
			_exit(3);
		for (unsigned i = 0; i < n; i++) {
			fx_key(r, "doomed", i, &k);
			if (fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 1000, 1000, 0, 0) < 0)
				_exit(4);
		}
		fg_stats_add(&fg_region_writer_stats(w)->total, FG_CTR_RULES_ACCEPTED, n);
		_exit(0);
	}
	return c;
}

START_TEST(test_dead_writer_reaped_after_drain_and_commit)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	struct fg_region_slot_info si;
	struct fg_region_wstats sum;
	struct fg_journal_params jp;
	struct fg_journal *j;
	pid_t c = dying_writer(fx.shm, 20);
	unsigned dead = 0;
	int status, err;

	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	fg_region_sum(r, &sum);
	ck_assert_uint_eq(sum.total.ctr[FG_CTR_RULES_ACCEPTED], 20);
	/* found dead, but its 20 records are not yet durable: kept */
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 0);
	ck_assert_int_eq(fg_region_slot_info(r, 0, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_DEAD);
	ck_assert_uint_eq(si.pushed[FG_RING_JOURNAL], 20);
	memset(&jp, 0, sizeof(jp));
	jp.dir = fx_dir(&fx);
	j = fg_journal_open(&jp, fg_region_ctld_stats(r), &err);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 20);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 0);	/* drained, not committed */
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_reap(r, &dead, NULL), 1);
	ck_assert_uint_eq(dead, 1);
	ck_assert_int_eq(fg_region_slot_info(r, 0, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_FREE);
	ck_assert_uint_eq(si.pushed[FG_RING_JOURNAL], 0);
	/* its counters moved to the retired block: the sum did not drop */
	fg_region_sum(r, &sum);
	ck_assert_uint_eq(sum.total.ctr[FG_CTR_RULES_ACCEPTED], 20);
	ck_assert_uint_eq(sum.total.ctr[FG_CTR_JOURNAL_RECORDS], 20);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

/* The claim names its owner in the step that takes the slot: a claim in
 * progress (no start time yet) is never taken for a dead writer, and one
 * whose claimer died is. */
START_TEST(test_claim_in_progress_is_not_reaped)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	struct fg_rslot *c0 = &fg_rslot_at(r, 0)->ctl, *c1 = &fg_rslot_at(r, 1)->ctl;
	struct fg_region_slot_info si;
	uint64_t start;
	pid_t dead;

	atomic_store(&r->hdr->writers, 2);
	atomic_store(&c0->owner, fg_rowner(FG_SLOT_CLAIMING, getpid()));
	dead_process(&dead, &start);
	atomic_store(&c1->owner, fg_rowner(FG_SLOT_CLAIMING, dead));
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	ck_assert_int_eq(fg_region_slot_info(r, 0, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_CLAIMING);
	ck_assert_int_eq(si.pid, getpid());
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_FREE);
	fx_cleanup(&fx);
}
END_TEST

/*
 * A dead writer's transient entries are resolved beside a live writer:
 * the resolver settles what "the queue" holds (here: key 1), journalled
 * through the dead slot's own ring; the rest of the dead owner's entries
 * go; the live owner's stay; the slot is freed only once the settlement's
 * record is durable. A resolver that finds the ring full is asked again.
 */
struct fake_resolver {
	struct fg_region *r;
	unsigned calls, owner;
	fg_time_t since;
	int first_rc;
};

static int fake_settle(void *arg, struct fg_region_writer *w, unsigned owner, fg_time_t since)
{
	struct fake_resolver *f = arg;
	struct fg_history_key k;
	fg_time_t now = time(NULL);

	f->owner = owner;
	f->since = since;
	if (f->calls++ == 0 && f->first_rc)
		return f->first_rc;
	fx_key(f->r, "dead", 1, &k);
	ck_assert_int_eq(fg_journal_reserve(w), 0);
	ck_assert_int_eq(fg_history_settle(fg_region_history(f->r), &k, owner, now, now, now), 0);
	ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, now, now, 0, 0), 0);
	return 0;
}

START_TEST(test_dead_writer_resolved_beside_a_live_one)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 3, 64);
	struct fg_history *h = fg_region_history(r);
	struct fake_resolver f = { .r = r, .first_rc = -EAGAIN };
	const struct fg_region_resolver res = { fake_settle, &f };
	struct fg_region_writer *live;
	struct fg_region_slot_info si;
	struct fg_journal_params jp;
	struct fg_history_ref ref;
	struct fg_history_key k;
	struct fg_journal *j;
	fg_time_t t0 = time(NULL), now;
	unsigned dead = 0, lo;
	int err, status;
	pid_t c;

	live = fg_region_claim(r, "live", &err);
	ck_assert_ptr_nonnull(live);
	lo = fg_region_writer_slot(live);
	fx_key(r, "live", 1, &k);
	ck_assert_int_eq(fg_history_begin_accept(h, &k, t0, fg_history_token(1, lo), &ref, NULL), 0);
	fx_key(r, "live", 2, &k);
	ck_assert_int_eq(fg_history_offer(h, &k, t0, t0 + 600, fg_history_token(2, lo), &ref, NULL), 0);
	c = fork();
	if (c == 0) {
		char why[256];
		struct fg_region *cr = fg_region_attach(fx.shm, why, sizeof(why));
		struct fg_region_writer *w = cr ? fg_region_claim(cr, "doomed", &err) : NULL;
		unsigned me;

		if (!w)
			_exit(2);
		me = fg_region_writer_slot(w);
		for (unsigned i = 1; i <= 3; i++) {
			fx_key(cr, "dead", i, &k);
			if (fg_history_begin_accept(fg_region_history(cr), &k, t0, fg_history_token(i, me),
						    &ref, NULL) != 0)
				_exit(3);
		}
		fx_key(cr, "dead", 4, &k);
		if (fg_history_offer(fg_region_history(cr), &k, t0, t0 + 600, fg_history_token(4, me),
				     &ref, NULL) != 0)
			_exit(4);
		_exit(0);	/* dies holding all four */
	}
	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* first reap: found dead, the resolver's ring is full: nothing changes */
	ck_assert_uint_eq(fg_region_reap(r, NULL, &res), 0);
	ck_assert_uint_eq(f.calls, 1);
	ck_assert_uint_eq(f.owner, 1);
	ck_assert_int_ge(f.since, t0);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_DEAD);
	fx_key(r, "dead", 2, &k);
	ck_assert_int_eq(fg_history_lookup(h, &k, t0, NULL), FG_HISTORY_ACCEPTING);
	/* second: settled and dropped, but its record is not durable yet */
	ck_assert_uint_eq(fg_region_reap(r, NULL, &res), 0);
	ck_assert_uint_eq(f.calls, 2);
	now = time(NULL);
	fx_key(r, "dead", 1, &k);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_ACCEPTED);
	for (unsigned i = 2; i <= 4; i++) {
		fx_key(r, "dead", i, &k);
		ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_ABSENT);
	}
	fx_key(r, "live", 1, &k);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_ACCEPTING);
	fx_key(r, "live", 2, &k);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(fg_region_ctld_stats(r)->ctr[FG_CTR_HISTORY_DEAD_DROPPED], 3);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_DEAD);
	ck_assert_uint_eq(si.pushed[FG_RING_JOURNAL], 1);
	/* resolved once: later reaps do not ask again */
	ck_assert_uint_eq(fg_region_reap(r, NULL, &res), 0);
	ck_assert_uint_eq(f.calls, 2);
	memset(&jp, 0, sizeof(jp));
	jp.dir = fx_dir(&fx);
	j = fg_journal_open(&jp, fg_region_ctld_stats(r), &err);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 1);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_reap(r, &dead, &res), 1);
	ck_assert_uint_eq(dead, 1);
	ck_assert_int_eq(fg_region_slot_info(r, 1, &si), 0);
	ck_assert_int_eq(si.state, FG_SLOT_FREE);
	ck_assert_int_eq(si.claimed, 0);
	fg_journal_close(j);
	fg_region_release(live);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_clear_transient_only_without_writers)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	struct fg_history *h = fg_region_history(r);
	struct fg_history_ref ref;
	struct fg_history_key k;
	struct fg_region_writer *w;
	fg_time_t now = time(NULL);
	int err;

	fx_key(r, "t", 1, &k);
	ck_assert_int_eq(fg_history_begin_accept(h, &k, now, 7, &ref, NULL), 0);
	w = fg_region_claim(r, "live", &err);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(fg_region_clear_transient(r), -EBUSY);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_ACCEPTING);
	fg_region_release(w);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	ck_assert_int_eq(fg_region_clear_transient(r), 1);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, NULL), FG_HISTORY_ABSENT);
	/* claims work again afterwards */
	w = fg_region_claim(r, "after", &err);
	ck_assert_ptr_nonnull(w);
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_peers_append_only)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	const char *a[] = { "alpha", "beta" }, *b[] = { "beta", "gamma", "alpha" };

	ck_assert_int_eq(fg_region_peer_index(r, "alpha"), -ENOENT);
	ck_assert_int_eq(fg_region_add_peers(r, a, 2), 2);
	ck_assert_int_eq(fg_region_add_peers(r, b, 3), 1);
	ck_assert_uint_eq(fg_region_npeers(r), 3);
	ck_assert_int_eq(fg_region_peer_index(r, "alpha"), 0);
	ck_assert_int_eq(fg_region_peer_index(r, "beta"), 1);
	ck_assert_int_eq(fg_region_peer_index(r, "gamma"), 2);
	ck_assert_str_eq(fg_region_peer_name(r, 2), "gamma");
	ck_assert_ptr_null(fg_region_peer_name(r, 3));
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_peer_table_full)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	char names[FG_REGION_PEERS + 1][16];
	const char *p[FG_REGION_PEERS + 1];

	for (unsigned i = 0; i <= FG_REGION_PEERS; i++) {
		snprintf(names[i], sizeof(names[i]), "p%u", i);
		p[i] = names[i];
	}
	ck_assert_int_eq(fg_region_add_peers(r, p, FG_REGION_PEERS + 1), -ENOSPC);
	ck_assert_uint_eq(fg_region_npeers(r), FG_REGION_PEERS);
	ck_assert_int_eq(fg_region_peer_index(r, names[FG_REGION_PEERS]), -ENOENT);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_size_parameters)
{
	struct fg_region_params p = { .history_size = 4096, .writers = 1,
				      .journal_ring = 64, .vlog_ring = 16 };

	ck_assert_uint_gt(fg_region_size(&p), 4096);
	p.journal_ring = 100;	/* not a power of two */
	ck_assert_uint_eq(fg_region_size(&p), 0);
	p.journal_ring = 64;
	p.writers = 0;
	ck_assert_uint_eq(fg_region_size(&p), 0);
	p.writers = FG_REGION_MAX_WRITERS + 1;
	ck_assert_uint_eq(fg_region_size(&p), 0);
}
END_TEST

static Suite *region_suite(void)
{
	Suite *s = suite_create("region");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_create_attach_and_layout);
	tcase_add_test(tc, test_attach_refuses_what_it_does_not_understand);
	tcase_add_test(tc, test_owner_must_be_running_and_adopt);
	tcase_add_test(tc, test_adopt_refuses_a_live_owner);
	tcase_add_test(tc, test_claim_until_busy_release_reap);
	tcase_add_test(tc, test_sum_adds_counters_and_keeps_latest_last_seen);
	tcase_add_test(tc, test_ring_reserve_push_peek_consume);
	tcase_add_test(tc, test_dead_writer_reaped_after_drain_and_commit);
	tcase_add_test(tc, test_claim_in_progress_is_not_reaped);
	tcase_add_test(tc, test_clear_transient_only_without_writers);
	tcase_add_test(tc, test_dead_writer_resolved_beside_a_live_one);
	tcase_add_test(tc, test_peers_append_only);
	tcase_add_test(tc, test_peer_table_full);
	tcase_add_test(tc, test_size_parameters);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(region_suite)
