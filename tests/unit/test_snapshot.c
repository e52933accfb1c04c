/* SPDX-License-Identifier: MIT */
/*
 * test_snapshot.c — snapshot files and restore: a snapshot plus the
 * journal after it gives back every entry; a damaged newest snapshot is
 * set aside and the previous one used; no snapshot at all falls back to
 * the journal alone (its seed); nothing on disk gives an empty table; a
 * torn journal tail keeps what precedes it; pruning keeps what a fallback
 * needs; the extra-source hook sees the snapshot's time; tombstones (floodctl
 * forget) win over the queue's older records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "floodgate/snapshot.h"
#include "ctl_fixture.h"
#include "fgtest.h"

struct world {
	struct ctl_fixture fx;
	struct fg_journal *j;
	struct fg_region_writer *w;
	fg_time_t now;
};

/* Close the journal (if open) and start a new segment; `flip` changes
 * the seed check, as a segment of another table would have. */
static void world_new_segment(struct world *wd, bool flip)
{
	struct fg_journal_params jp;
	int err;

	if (wd->j)
		fg_journal_close(wd->j);
	memset(&jp, 0, sizeof(jp));
	jp.dir = wd->fx.dir;
	fg_region_seed(wd->fx.r, jp.seed);
	fg_region_seed_check(fg_region_history(wd->fx.r), &jp.seed_check);
	jp.seed_check.lo ^= flip;
	wd->j = fg_journal_open(&jp, fg_region_ctld_stats(wd->fx.r), &err);
	ck_assert_ptr_nonnull(wd->j);
}

static void world_open(struct world *wd)
{
	int err;

	memset(wd, 0, sizeof(*wd));
	wd->now = time(NULL);
	fx_region(&wd->fx, 20000, 2, 4096);
	fx_dir(&wd->fx);
	world_new_segment(wd, false);
	wd->w = fg_region_claim(wd->fx.r, "w", &err);
	ck_assert_ptr_nonnull(wd->w);
}

/* Insert IDs [from, from+n) as a writer would: history, then journal. */
static void world_insert(struct world *wd, unsigned from, unsigned n)
{
	struct fg_history *h = fg_region_history(wd->fx.r);
	struct fg_history_key k;

	for (unsigned i = from; i < from + n; i++) {
		enum fg_history_state st = i % 3 ? FG_HISTORY_ACCEPTED : FG_HISTORY_REJECTED;

		fx_key(wd->fx.r, "id", i, &k);
		ck_assert_int_eq(fg_history_insert_final(h, &k, st, wd->now - 60, wd->now, wd->now,
							 NULL), 0);
		ck_assert_int_eq(fg_journal_append(wd->w, &k, st, wd->now - 60, wd->now, 0, 0), 0);
	}
	ck_assert_int_eq(fg_journal_drain(wd->j, wd->fx.r, 100000), (int64_t)n);
	ck_assert_int_eq(fg_journal_commit(wd->j, wd->fx.r), 0);
}

static void world_snapshot(struct world *wd, uint64_t seq, struct fg_snap_info *info)
{
	struct fg_jpos pos;
	uint8_t seed[16];

	fg_journal_position(wd->j, NULL, &pos);
	fg_region_seed(wd->fx.r, seed);
	ck_assert_int_eq(fg_snapshot_write(wd->fx.dir, seq, fg_region_history(wd->fx.r), seed,
					   &pos, info), 0);
}

/* Drop the live region, as a reboot would; keep the data directory. */
static void world_crash(struct world *wd)
{
	fg_region_release(wd->w);
	wd->w = NULL;
	fg_journal_close(wd->j);
	wd->j = NULL;
	fg_region_close(wd->fx.r);
	wd->fx.r = NULL;
	fg_region_unlink(wd->fx.shm);
}

static struct fg_region *world_restore(struct world *wd, struct fg_restore_result *res,
				       const struct fg_restore_source *src, unsigned nsrc)
{
	struct fg_restore_params p;
	struct fg_region *r;
	char why[256];

	memset(&p, 0, sizeof(p));
	p.data_dir = wd->fx.dir;
	p.shm_path = wd->fx.shm;
	p.region.writers = 2;
	p.region.journal_ring = 4096;
	p.region.vlog_ring = 16;
	fx_params(&p.history, 20000);
	p.now = wd->now;
	p.sources = src;
	p.n_sources = nsrc;
	r = fg_restore(&p, res, why, sizeof(why));
	ck_assert_msg(r != NULL, "%s", why);
	wd->fx.r = r;
	return r;
}

/* Every ID in [from, from+n) is present with the state it was given. */
static void expect_ids(struct fg_region *r, fg_time_t now, unsigned from, unsigned n)
{
	struct fg_history *h = fg_region_history(r);
	struct fg_history_key k;

	for (unsigned i = from; i < from + n; i++) {
		enum fg_history_state want = i % 3 ? FG_HISTORY_ACCEPTED : FG_HISTORY_REJECTED;

		fx_key(r, "id", i, &k);
		ck_assert_msg(fg_history_lookup(h, &k, now, NULL) == want, "id %u missing", i);
	}
}

static void expect_absent(struct fg_region *r, fg_time_t now, unsigned from, unsigned n)
{
	struct fg_history_key k;

	for (unsigned i = from; i < from + n; i++) {
		fx_key(r, "id", i, &k);
		ck_assert_int_eq(fg_history_lookup(fg_region_history(r), &k, now, NULL),
				 FG_HISTORY_ABSENT);
	}
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, off), 1);
	b ^= 0x01;
	ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static bool exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

START_TEST(test_snapshot_plus_journal_restores_everything)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_region *r;

	world_open(&wd);
	world_insert(&wd, 0, 1000);
	world_snapshot(&wd, 1, &info);
	ck_assert_uint_eq(info.entries, 1000);
	ck_assert_uint_eq(info.covers.segment, 1);
	world_insert(&wd, 1000, 500);
	world_crash(&wd);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_SNAPSHOT);
	ck_assert_uint_eq(res.snapshot.seq, 1);
	ck_assert_uint_eq(res.records, 500);	/* only what follows the snapshot */
	ck_assert_uint_eq(res.inserted, 500);
	ck_assert_uint_eq(res.snapshots_set_aside, 0);
	expect_ids(r, wd.now, 0, 1500);
	expect_absent(r, wd.now, 1500, 10);
	fx_cleanup(&wd.fx);
}
END_TEST

/* A paced snapshot takes at least its bytes over its rate (a sleep is a
 * lower bound on any machine) and restores the same table. */
START_TEST(test_paced_snapshot_keeps_its_rate_and_restores)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_history_stats hs;
	struct fg_snap_info info;
	struct fg_region *r;
	struct fg_jpos pos;
	uint64_t rate, t0, took, floor_ns;
	uint8_t seed[16];

	world_open(&wd);
	world_insert(&wd, 0, 1000);
	fg_history_stats(fg_region_history(wd.fx.r), &hs);
	rate = hs.buckets * 64 * 4;		/* a quarter of a second's worth */
	floor_ns = hs.buckets * 64 * 1000000000ull / rate;
	fg_journal_position(wd.j, NULL, &pos);
	fg_region_seed(wd.fx.r, seed);
	t0 = fg_mono_ns();
	ck_assert_int_eq(fg_snapshot_write_paced(wd.fx.dir, 1, fg_region_history(wd.fx.r), seed,
						 &pos, rate, &info), 0);
	took = fg_mono_ns() - t0;
	ck_assert_msg(took >= floor_ns, "paced at %llu B/s: %llu ns, under its floor of %llu ns",
		      (unsigned long long)rate, (unsigned long long)took,
		      (unsigned long long)floor_ns);
	ck_assert_uint_eq(info.entries, 1000);
	world_insert(&wd, 1000, 10);
	world_crash(&wd);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_SNAPSHOT);
	ck_assert_uint_eq(res.records, 10);
	expect_ids(r, wd.now, 0, 1010);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_flipped_newest_snapshot_falls_back)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_region *r;
	char path[512];

	world_open(&wd);
	world_insert(&wd, 0, 300);
	world_snapshot(&wd, 1, &info);
	world_insert(&wd, 300, 300);
	world_snapshot(&wd, 2, &info);
	world_insert(&wd, 600, 100);
	world_crash(&wd);
	ck_assert_int_eq(fg_snapshot_path(wd.fx.dir, 2, path, sizeof(path)), 0);
	flip_byte(path, FG_SNAP_HEADER + 5000);	/* inside the image */
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_SNAPSHOT);
	ck_assert_uint_eq(res.snapshot.seq, 1);
	ck_assert_uint_eq(res.snapshots_set_aside, 1);
	ck_assert_uint_eq(res.records, 400);
	expect_ids(r, wd.now, 0, 700);
	ck_assert(exists(wd.fx.dir, "snapshot-0000000000000002.fgs.bad"));
	ck_assert(!exists(wd.fx.dir, "snapshot-0000000000000002.fgs"));
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_flipped_header_and_short_file_are_set_aside)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_region *r;
	char path[512];

	world_open(&wd);
	world_insert(&wd, 0, 100);
	world_snapshot(&wd, 1, &info);
	world_snapshot(&wd, 2, &info);
	world_snapshot(&wd, 3, &info);
	world_crash(&wd);
	ck_assert_int_eq(fg_snapshot_path(wd.fx.dir, 3, path, sizeof(path)), 0);
	flip_byte(path, 20);
	ck_assert_int_eq(fg_snapshot_path(wd.fx.dir, 2, path, sizeof(path)), 0);
	ck_assert_int_eq(truncate(path, FG_SNAP_HEADER + 100), 0);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_uint_eq(res.snapshot.seq, 1);
	ck_assert_uint_eq(res.snapshots_set_aside, 2);
	expect_ids(r, wd.now, 0, 100);
	ck_assert(exists(wd.fx.dir, "snapshot-0000000000000003.fgs.bad"));
	ck_assert(exists(wd.fx.dir, "snapshot-0000000000000002.fgs.bad"));
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_journal_alone_keeps_the_seed)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_region *r;
	uint8_t before[16], after[16];

	world_open(&wd);
	fg_region_seed(wd.fx.r, before);
	world_insert(&wd, 0, 800);
	world_crash(&wd);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_JOURNAL);
	ck_assert_uint_eq(res.inserted, 800);
	fg_region_seed(r, after);
	ck_assert_mem_eq(before, after, 16);
	expect_ids(r, wd.now, 0, 800);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_nothing_on_disk_starts_empty)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_history_stats hs;
	struct fg_region *r;

	memset(&wd, 0, sizeof(wd));
	wd.now = time(NULL);
	snprintf(wd.fx.shm, sizeof(wd.fx.shm), "/dev/shm/fg-ctl-unit-%d", (int)getpid());
	fx_dir(&wd.fx);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_EMPTY);
	fg_history_stats(fg_region_history(r), &hs);
	ck_assert_uint_eq(hs.entries, 0);
	ck_assert_uint_ge(hs.slots, 20000);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_torn_tail_keeps_what_precedes)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_region *r;
	struct fg_jpos pos;
	struct stat st;
	char path[512];

	world_open(&wd);
	world_insert(&wd, 0, 100);
	fg_journal_position(wd.j, NULL, &pos);
	world_insert(&wd, 100, 50);
	world_crash(&wd);
	ck_assert_int_eq(fg_journal_segment_path(wd.fx.dir, 1, path, sizeof(path)), 0);
	/* cut in the middle of the second block's 20th record */
	ck_assert_int_eq(truncate(path, (off_t)(pos.offset + FG_JBLOCK_HEADER + 19 * 32 + 13)), 0);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_JOURNAL);
	ck_assert(res.torn_tail);
	ck_assert_uint_eq(res.torn_at.offset, pos.offset);
	ck_assert_uint_eq(res.inserted, 100);
	expect_ids(r, wd.now, 0, 100);
	expect_absent(r, wd.now, 100, 50);
	/* the torn tail was cut: the segment now reads clean */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, pos.offset);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_damage_mid_journal_and_foreign_segments)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_region *r;
	struct fg_jpos pos;
	char path[512];

	world_open(&wd);
	world_insert(&wd, 0, 100);
	fg_journal_position(wd.j, NULL, &pos);
	world_insert(&wd, 100, 100);
	/* a second segment from the same table, a third from another one */
	world_new_segment(&wd, false);
	world_insert(&wd, 200, 100);
	world_new_segment(&wd, true);
	world_crash(&wd);
	ck_assert_int_eq(fg_journal_segment_path(wd.fx.dir, 1, path, sizeof(path)), 0);
	flip_byte(path, (off_t)pos.offset + FG_JBLOCK_HEADER + 40);
	r = world_restore(&wd, &res, NULL, 0);
	ck_assert_int_eq(res.from, FG_RESTORE_JOURNAL);
	ck_assert_uint_eq(res.n_damaged, 1);
	ck_assert_uint_eq(res.damaged[0], 1);
	ck_assert_uint_eq(res.segments_set_aside, 1);
	ck_assert(exists(wd.fx.dir, "journal-0000000000000003.fgj.bad"));
	ck_assert(exists(wd.fx.dir, "journal-0000000000000001.fgj"));
	expect_ids(r, wd.now, 0, 100);
	expect_absent(r, wd.now, 100, 100);
	expect_ids(r, wd.now, 200, 100);
	fx_cleanup(&wd.fx);
}
END_TEST

static int64_t fake_queue(void *arg, struct fg_history *h, fg_time_t since, fg_time_t now)
{
	fg_time_t *seen = arg;
	struct fg_history_key k;

	*seen = since;
	fg_history_hash(h, "<queued@x>", 10, &k);
	return fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, now, now, now, NULL) == 0;
}

START_TEST(test_extra_source_hook)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_history_key k;
	struct fg_region *r;
	fg_time_t since = -1;
	struct fg_restore_source src = { "queue", fake_queue, &since };

	world_open(&wd);
	world_insert(&wd, 0, 10);
	world_snapshot(&wd, 1, &info);
	world_crash(&wd);
	r = world_restore(&wd, &res, &src, 1);
	ck_assert_int_eq(since, info.created);
	ck_assert_int_eq(res.source_inserted, 1);
	fg_history_hash(fg_region_history(r), "<queued@x>", 10, &k);
	ck_assert_int_eq(fg_history_lookup(fg_region_history(r), &k, wd.now, NULL),
			 FG_HISTORY_ACCEPTED);
	fx_cleanup(&wd.fx);
}
END_TEST

/* A queue source re-inserting IDs 0..9 as accepted: 0..4 arrived before
 * the tombstones below, 5..9 after them. */
static int64_t queue_before_and_after(void *arg, struct fg_history *h, fg_time_t since,
				      fg_time_t now)
{
	struct world *wd = arg;
	int64_t n = 0;

	(void)since;
	for (unsigned i = 0; i < 10; i++) {
		struct fg_history_key k;
		fg_time_t arrival = i < 5 ? wd->now - 100 : wd->now + 100;
		char id[128];
		size_t l = fx_id(id, sizeof(id), "id", i);

		fg_history_hash(h, id, l, &k);
		n += fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, arrival, arrival, now,
					     NULL) == 0;
	}
	return n;
}

/* floodctl forget: a tombstone in the journal removes the ID on replay, and
 * again after the queue re-inserted it, unless the queue's record is newer. */
START_TEST(test_tombstones_win_over_older_queue_records)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_history_key k;
	struct fg_jrec tomb[10];
	struct fg_region *r;
	struct fg_restore_source src = { "queue", queue_before_and_after, &wd };

	world_open(&wd);
	world_insert(&wd, 0, 20);
	world_snapshot(&wd, 1, &info);
	for (unsigned i = 0; i < 10; i++) {
		fx_key(wd.fx.r, "id", i, &k);
		ck_assert_int_eq(fg_history_forget(fg_region_history(wd.fx.r), &k, wd.now, NULL), 0);
		fg_jrec_make_forget(&tomb[i], &k, wd.now);
	}
	ck_assert_int_eq(fg_journal_add(wd.j, tomb, 10), 0);
	/* then ID 0 remembered as rejected: the journal overrules its tombstone */
	fx_key(wd.fx.r, "id", 0, &k);
	ck_assert_int_eq(fg_history_insert_final(fg_region_history(wd.fx.r), &k, FG_HISTORY_REJECTED,
						 wd.now, wd.now, wd.now, NULL), 0);
	ck_assert_int_eq(fg_jrec_make(&tomb[0], &k, FG_HISTORY_REJECTED, wd.now, wd.now, 0, 0), 0);
	ck_assert_int_eq(fg_journal_add(wd.j, tomb, 1), 0);
	ck_assert_int_eq(fg_journal_commit(wd.j, wd.fx.r), 0);
	world_crash(&wd);
	r = world_restore(&wd, &res, &src, 1);
	ck_assert_int_eq(res.from, FG_RESTORE_SNAPSHOT);
	ck_assert_uint_eq(res.records, 11);
	ck_assert_uint_eq(res.forgotten, 10);		/* the snapshot had them */
	ck_assert_uint_eq(res.forgotten_again, 4);	/* the queue's older records, not ID 0 */
	fx_key(r, "id", 0, &k);
	ck_assert_int_eq(fg_history_lookup(fg_region_history(r), &k, wd.now, NULL),
			 FG_HISTORY_REJECTED);
	expect_absent(r, wd.now, 1, 4);
	for (unsigned i = 5; i < 10; i++) {		/* came again after the forget */
		fx_key(r, "id", i, &k);
		ck_assert_int_eq(fg_history_lookup(fg_region_history(r), &k, wd.now, NULL),
				 FG_HISTORY_ACCEPTED);
	}
	expect_ids(r, wd.now, 10, 10);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_prune_keeps_what_a_fallback_needs)
{
	struct world wd;
	struct fg_snap_info info;
	struct fg_jpos pos;
	uint64_t *v;
	size_t n;

	world_open(&wd);
	for (uint64_t s = 1; s <= 4; s++) {
		world_insert(&wd, (unsigned)s * 10, 10);
		world_new_segment(&wd, false);	/* a new segment per snapshot */
		world_snapshot(&wd, s, &info);
	}
	/* snapshots 1..4 cover segments 2..5; keep 2: snapshots 3, 4 */
	{
		char bad[512];
		int fd;

		snprintf(bad, sizeof(bad), "%s/snapshot-0000000000000001.fgs.bad", wd.fx.dir);
		fd = creat(bad, 0600);
		close(fd);
	}
	fg_journal_position(wd.j, NULL, &pos);
	ck_assert_int_eq(fg_snapshot_prune(wd.fx.dir, 2, pos.segment, fg_region_ctld_stats(wd.fx.r)),
			 0);
	ck_assert_int_eq(fg_snapshot_list(wd.fx.dir, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0], 3);
	free(v);
	ck_assert_int_eq(fg_journal_list(wd.fx.dir, &v, &n), 0);
	ck_assert_uint_eq(n, 2);	/* segments 4 and 5: snapshot 3 covers from 4 */
	ck_assert_uint_eq(v[0], 4);
	free(v);
	ck_assert(exists(wd.fx.dir, "snapshot-0000000000000001.fgs.bad"));
	ck_assert_uint_eq(fg_region_ctld_stats(wd.fx.r)->ctr[FG_CTR_SNAPSHOTS_PRUNED], 2);
	ck_assert_uint_eq(fg_region_ctld_stats(wd.fx.r)->ctr[FG_CTR_SEGMENTS_PRUNED], 3);
	fg_region_release(wd.w);
	fg_journal_close(wd.j);
	fx_cleanup(&wd.fx);
}
END_TEST

/* No memory for the region is this machine's failure, not the snapshot's:
 * the restore stops instead of falling back to an older or empty history. */
START_TEST(test_no_region_stops_the_restore)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_restore_params p;
	struct fg_snap_info info;
	char why[256];

	world_open(&wd);
	world_insert(&wd, 0, 10);
	world_snapshot(&wd, 1, &info);
	world_crash(&wd);
	memset(&p, 0, sizeof(p));
	p.data_dir = wd.fx.dir;
	p.shm_path = "/nonexistent-fg-dir/region";
	p.region.writers = 2;
	p.region.journal_ring = 4096;
	p.region.vlog_ring = 16;
	fx_params(&p.history, 20000);
	p.now = wd.now;
	ck_assert_ptr_null(fg_restore(&p, &res, why, sizeof(why)));
	ck_assert_msg(strstr(why, "not falling back"), "%s", why);
	ck_assert(exists(wd.fx.dir, "snapshot-0000000000000001.fgs"));
	ck_assert_uint_eq(res.snapshots_set_aside, 0);
	fx_cleanup(&wd.fx);
}
END_TEST

START_TEST(test_leftover_temp_is_removed_and_header_checks)
{
	struct world wd;
	struct fg_restore_result res;
	struct fg_snap_info info;
	const char *why;
	uint8_t hdr[FG_SNAP_HEADER];
	char tmp[512];
	int fd;

	world_open(&wd);
	world_insert(&wd, 0, 10);
	world_snapshot(&wd, 1, &info);
	snprintf(tmp, sizeof(tmp), "%s/snapshot-0000000000000002.fgs.tmp", wd.fx.dir);
	fd = creat(tmp, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	world_crash(&wd);
	world_restore(&wd, &res, NULL, 0);
	ck_assert_uint_eq(res.snapshot.seq, 1);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	memset(hdr, 0, sizeof(hdr));
	ck_assert_int_eq(fg_snapshot_header(hdr, sizeof(hdr) - 1, &info, &why), -EINVAL);
	ck_assert_str_eq(why, "shorter than a snapshot header");
	ck_assert_int_eq(fg_snapshot_header(hdr, sizeof(hdr), &info, &why), -EINVAL);
	ck_assert_str_eq(why, "not a snapshot (bad magic)");
	fx_cleanup(&wd.fx);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_snapshot_plus_journal_restores_everything);
	tcase_add_test(tc, test_paced_snapshot_keeps_its_rate_and_restores);
	tcase_add_test(tc, test_flipped_newest_snapshot_falls_back);
	tcase_add_test(tc, test_flipped_header_and_short_file_are_set_aside);
	tcase_add_test(tc, test_journal_alone_keeps_the_seed);
	tcase_add_test(tc, test_nothing_on_disk_starts_empty);
	tcase_add_test(tc, test_torn_tail_keeps_what_precedes);
	tcase_add_test(tc, test_damage_mid_journal_and_foreign_segments);
	tcase_add_test(tc, test_extra_source_hook);
	tcase_add_test(tc, test_tombstones_win_over_older_queue_records);
	tcase_add_test(tc, test_prune_keeps_what_a_fallback_needs);
	tcase_add_test(tc, test_no_region_stops_the_restore);
	tcase_add_test(tc, test_leftover_temp_is_removed_and_header_checks);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(snapshot_suite)
