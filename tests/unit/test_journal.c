/* SPDX-License-Identifier: MIT */
/*
 * test_journal.c — journal records, the segment format, group commit and
 * what a reader does with torn and damaged segments: every cut inside a
 * block loses exactly that block and what follows; every flipped octet is
 * caught; a header that fails its checksum yields nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/crc32c.h"
#include "floodgate/journal.h"
#include "ctl_fixture.h"
#include "../../lib/region/region_int.h"
#include "fgtest.h"

struct collected {
	struct fg_jrec rec[4096];
	unsigned n;
};

static int collect(void *arg, const struct fg_jrec *r)
{
	struct collected *c = arg;

	if (c->n < FG_ARRAY_SIZE(c->rec))
		c->rec[c->n] = *r;
	c->n++;
	return 0;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	ck_assert_int_eq(read(fd, buf, *len), (ssize_t)*len);
	close(fd);
	return buf;
}

static struct fg_journal *open_journal(struct ctl_fixture *fx, uint64_t seg_bytes)
{
	struct fg_journal_params jp;
	struct fg_journal *j;
	int err;

	memset(&jp, 0, sizeof(jp));
	jp.dir = fx->dir[0] ? fx->dir : fx_dir(fx);
	fg_region_seed(fx->r, jp.seed);
	fg_region_seed_check(fg_region_history(fx->r), &jp.seed_check);
	jp.segment_bytes = seg_bytes;
	j = fg_journal_open(&jp, fg_region_ctld_stats(fx->r), &err);
	ck_assert_msg(j != NULL, "%s", strerror(-err));
	return j;
}

/* Journal `n` records from one writer: key (tag, i), accepted. */
static void append_n(struct fg_region_writer *w, const char *tag, unsigned from, unsigned n)
{
	struct fg_region *r = fg_region_writer_region(w);
	struct fg_history_key k;

	for (unsigned i = from; i < from + n; i++) {
		fx_key(r, tag, i, &k);
		ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 1000000 + i,
						   1000000, FG_JREC_F_DATE_INJECTION, 0), 0);
	}
}

START_TEST(test_record_validation)
{
	struct fg_history_key k = { 1, 2 };
	struct fg_jrec r;

	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_OFFERED, 0, 0, 0, 0), -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_ACCEPTING, 0, 0, 0, 0), -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_ACCEPTED, (int64_t)INT32_MAX + 1, 0, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_ACCEPTED, 0, 0, FG_JREC_F_DATE_MASK, 0),
			 -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_ACCEPTED, 0, 0, 0x10, 0), -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_REJECTED, 0, 0, 0, FG_REASON__COUNT),
			 -EINVAL);
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_REJECTED, 100, 160, FG_JREC_F_DATE_DATE,
				      FG_REASON_TOO_OLD), 0);
	ck_assert(fg_jrec_valid(&r));
	ck_assert_int_eq(r.date_off, -60);
	ck_assert_uint_eq(r.key_lo, 1);
	ck_assert_uint_eq(r.key_hi, 2);
	ck_assert_str_eq(fg_jrec_date_source(r.flags), "Date");
	ck_assert_str_eq(fg_jrec_date_source(FG_JREC_F_DATE_INJECTION), "Injection-Date");
	ck_assert_str_eq(fg_jrec_date_source(0), "unknown");
	r.reserved = 1;
	ck_assert(!fg_jrec_valid(&r));
	/* tombstones: made only by fg_jrec_make_forget, exactly so */
	ck_assert_int_eq(fg_jrec_make(&r, &k, FG_HISTORY_ACCEPTED, 0, 0, FG_JREC_F_FORGET, 0),
			 -EINVAL);
	fg_jrec_make_forget(&r, &k, 1234);
	ck_assert(fg_jrec_valid(&r) && fg_jrec_is_forget(&r));
	ck_assert_int_eq(r.first_seen, 1234);
	ck_assert_uint_eq(r.state, FG_HISTORY_ABSENT);
	r.reason = FG_REASON_TOO_OLD;
	ck_assert(!fg_jrec_valid(&r));
	fg_jrec_make_forget(&r, &k, 1234);
	r.state = FG_HISTORY_ACCEPTED;
	ck_assert(!fg_jrec_valid(&r));
	fg_jrec_make_forget(&r, &k, 1234);
	r.flags |= FG_JREC_F_DATE_DATE;
	ck_assert(!fg_jrec_valid(&r));
	r.flags = 0;	/* ABSENT without the flag: not a record at all */
	ck_assert(!fg_jrec_valid(&r));
}
END_TEST

/* floodctld's own records: a block of slot FG_JBLOCK_SLOT_CTLD among the
 * writers' blocks, read back in order by the scan. */
START_TEST(test_ctld_records_between_writers)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 1024);
	struct fg_journal *j = open_journal(&fx, 0);
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_region_writer *w;
	struct fg_history_key k;
	struct fg_jseg_scan sc;
	struct fg_jrec rec[2];
	char path[512];
	uint8_t *buf;
	size_t len;
	int err;

	w = fg_region_claim(r, "w", &err);
	append_n(w, "a", 0, 3);
	ck_assert_int_eq(fg_journal_drain(j, r, 100), 3);
	fx_key(r, "a", 1, &k);
	fg_jrec_make_forget(&rec[0], &k, 77);
	ck_assert_int_eq(fg_jrec_make(&rec[1], &k, FG_HISTORY_REJECTED, 5, 5, 0, 0), 0);
	ck_assert_int_eq(fg_journal_add(j, rec, 2), 0);
	rec[1].reserved = 9;
	ck_assert_int_eq(fg_journal_add(j, rec, 2), -EINVAL);	/* nothing half-added */
	ck_assert_int_eq(fg_journal_add(j, rec, 0), -EINVAL);
	append_n(w, "a", 3, 2);
	ck_assert_int_eq(fg_journal_drain(j, r, 100), 2);
	ck_assert_uint_eq(fg_journal_uncommitted(j), 7);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_writer_committed(w), 5);
	ck_assert_int_eq(fg_journal_segment_path(fx.dir, 1, path, sizeof(path)), 0);
	buf = read_file(path, &len);
	ck_assert_int_eq(fg_jseg_scan(buf, len, 0, collect, c, &sc), 0);
	ck_assert(!sc.torn);
	ck_assert_uint_eq(sc.blocks, 3);
	ck_assert_uint_eq(c->n, 7);
	ck_assert(fg_jrec_is_forget(&c->rec[3]) && c->rec[3].key_lo == k.lo);
	ck_assert_int_eq(c->rec[3].first_seen, 77);
	ck_assert_uint_eq(c->rec[4].state, FG_HISTORY_REJECTED);
	ck_assert(!fg_jrec_is_forget(&c->rec[5]));
	free(buf);
	free(c);
	fg_region_release(w);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_round_trip_and_commit_publishes)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 1024);
	struct fg_region_writer *w0, *w1;
	struct fg_journal *j = open_journal(&fx, 0);
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_jpos app, dur;
	struct fg_jseg_scan sc;
	struct fg_history_key k;
	char path[512];
	uint8_t *buf;
	size_t len;
	int err;

	w0 = fg_region_claim(r, "w0", &err);
	w1 = fg_region_claim(r, "w1", &err);
	append_n(w0, "a", 0, 300);
	append_n(w1, "b", 0, 5);
	ck_assert_int_eq(fg_journal_drain(j, r, 100000), 305);
	ck_assert_uint_eq(fg_journal_uncommitted(j), 305);
	ck_assert_uint_eq(fg_region_writer_committed(w0), 0);
	fg_journal_position(j, &app, &dur);
	ck_assert_uint_eq(app.segment, 1);
	ck_assert_uint_eq(app.offset, FG_JSEG_HEADER + 2 * FG_JBLOCK_HEADER + 305 * 32);
	ck_assert_uint_eq(dur.offset, FG_JSEG_HEADER);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_writer_committed(w0), 300);
	ck_assert_uint_eq(fg_region_writer_committed(w1), 5);
	fg_journal_position(j, &app, &dur);
	ck_assert_int_eq(fg_jpos_cmp(&app, &dur), 0);
	ck_assert_uint_eq(fg_journal_uncommitted(j), 0);
	ck_assert_uint_ne(fg_journal_last_commit_ns(j), 0);

	ck_assert_int_eq(fg_journal_segment_path(fx.dir, 1, path, sizeof(path)), 0);
	buf = read_file(path, &len);
	ck_assert_uint_eq(len, app.offset);
	ck_assert_int_eq(fg_jseg_scan(buf, len, 0, collect, c, &sc), 0);
	ck_assert(!sc.torn);
	ck_assert_uint_eq(sc.blocks, 2);
	ck_assert_uint_eq(c->n, 305);
	fx_key(r, "a", 299, &k);
	ck_assert_uint_eq(c->rec[299].key_lo, k.lo);
	ck_assert_uint_eq(c->rec[299].key_hi, k.hi);
	ck_assert_int_eq(c->rec[299].date_off, 299);
	ck_assert_uint_eq(c->rec[299].flags, FG_JREC_F_DATE_INJECTION);
	fx_key(r, "b", 4, &k);
	ck_assert_uint_eq(c->rec[304].key_lo, k.lo);
	/* the header carries the seed and its check */
	ck_assert_uint_eq(sc.info.segment, 1);
	fg_region_seed_check(fg_region_history(r), &k);
	ck_assert_uint_eq(sc.info.seed_check.lo, k.lo);
	free(buf);
	free(c);
	fg_region_release(w0);
	fg_region_release(w1);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

/* One segment with three blocks (sizes 7, 1, 40); returns its bytes. */
static uint8_t *three_blocks(struct ctl_fixture *fx, size_t *len, uint64_t ends[3])
{
	struct fg_region *r = fx_region(fx, 1000, 1, 64);
	struct fg_journal *j = open_journal(fx, 0);
	struct fg_region_writer *w;
	static const unsigned sizes[3] = { 7, 1, 40 };
	struct fg_jpos app;
	char path[512];
	unsigned from = 0;
	int err;

	w = fg_region_claim(r, "w", &err);
	for (int b = 0; b < 3; b++) {
		append_n(w, "t", from, sizes[b]);
		from += sizes[b];
		ck_assert_int_eq(fg_journal_drain(j, r, 1000), (int64_t)sizes[b]);
		fg_journal_position(j, &app, NULL);
		ends[b] = app.offset;
	}
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	fg_region_release(w);
	fg_journal_close(j);
	ck_assert_int_eq(fg_journal_segment_path(fx->dir, 1, path, sizeof(path)), 0);
	return read_file(path, len);
}

START_TEST(test_every_cut_keeps_the_blocks_before_it)
{
	struct ctl_fixture fx = { 0 };
	uint64_t ends[3];
	size_t len;
	uint8_t *buf = three_blocks(&fx, &len, ends);
	static const unsigned before[4] = { 0, 7, 8, 48 };

	ck_assert_uint_eq(len, ends[2]);
	for (size_t cut = FG_JSEG_HEADER; cut <= len; cut++) {
		struct fg_jseg_scan sc;
		unsigned whole = 0;
		uint8_t *copy = malloc(cut);

		memcpy(copy, buf, cut);
		while (whole < 3 && ends[whole] <= cut)
			whole++;
		ck_assert_int_eq(fg_jseg_scan(copy, cut, 0, NULL, NULL, &sc), 0);
		ck_assert_uint_eq(sc.records, before[whole]);
		ck_assert_uint_eq(sc.end, whole ? ends[whole - 1] : FG_JSEG_HEADER);
		ck_assert(sc.torn == (cut != sc.end));
		free(copy);
	}
	/* shorter than a header: nothing at all */
	{
		struct fg_jseg_scan sc;

		ck_assert_int_eq(fg_jseg_scan(buf, FG_JSEG_HEADER - 1, 0, NULL, NULL, &sc), -EINVAL);
		ck_assert_str_eq(sc.why, "shorter than a segment header");
	}
	free(buf);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_every_flipped_octet_is_caught)
{
	struct ctl_fixture fx = { 0 };
	uint64_t ends[3];
	size_t len;
	uint8_t *buf = three_blocks(&fx, &len, ends);

	for (size_t i = 0; i < len; i++) {
		struct fg_jseg_scan sc;
		int rc;

		buf[i] ^= 0x20;
		rc = fg_jseg_scan(buf, len, 0, NULL, NULL, &sc);
		if (i < FG_JSEG_HEADER) {
			ck_assert_int_eq(rc, -EINVAL);
		} else {
			unsigned blk = i < ends[0] ? 0 : i < ends[1] ? 1 : 2;

			ck_assert_int_eq(rc, 0);
			ck_assert_msg(sc.torn, "flip at %zu not caught", i);
			ck_assert_uint_eq(sc.end, blk ? ends[blk - 1] : FG_JSEG_HEADER);
		}
		buf[i] ^= 0x20;
	}
	free(buf);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_scan_from_a_position)
{
	struct ctl_fixture fx = { 0 };
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_jseg_scan sc;
	uint64_t ends[3];
	size_t len;
	uint8_t *buf = three_blocks(&fx, &len, ends);

	ck_assert_int_eq(fg_jseg_scan(buf, len, ends[1], collect, c, &sc), 0);
	ck_assert_uint_eq(c->n, 40);
	ck_assert_uint_eq(sc.blocks, 1);
	/* a position at the end reads nothing and is not torn */
	c->n = 0;
	ck_assert_int_eq(fg_jseg_scan(buf, len, ends[2], collect, c, &sc), 0);
	ck_assert_uint_eq(c->n, 0);
	ck_assert(!sc.torn);
	free(c);
	free(buf);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_rotation_and_numbering)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 1024);
	struct fg_journal *j = open_journal(&fx, 4096);
	struct fg_region_writer *w;
	struct fg_jpos app;
	uint64_t *segs;
	size_t n;
	int err;

	w = fg_region_claim(r, "w", &err);
	append_n(w, "r", 0, 200);	/* 6400 octets: over the limit */
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 200);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	fg_journal_position(j, &app, NULL);
	ck_assert_uint_eq(app.segment, 2);
	ck_assert_uint_eq(app.offset, FG_JSEG_HEADER);
	ck_assert_uint_eq(fg_region_writer_committed(w), 200);
	fg_journal_close(j);
	/* a new journal never appends to an old segment */
	j = open_journal(&fx, 0);
	fg_journal_position(j, &app, NULL);
	ck_assert_uint_eq(app.segment, 3);
	ck_assert_int_eq(fg_journal_list(fx.dir, &segs, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(segs[0], 1);
	ck_assert_uint_eq(segs[2], 3);
	free(segs);
	ck_assert_uint_eq(fg_region_ctld_stats(r)->ctr[FG_CTR_JOURNAL_SEGMENTS], 3);
	ck_assert_uint_eq(fg_region_ctld_stats(r)->ctr[FG_CTR_JOURNAL_COMMITS], 1);
	fg_region_release(w);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

/* floodctld dies after copying records, before its commit: they are still
 * in the ring, and the next floodctld's journal writes them again. */
START_TEST(test_records_leave_the_ring_only_when_durable)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 1024);
	struct fg_journal *j = open_journal(&fx, 0);
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_region_writer *w;
	struct fg_jseg_scan sc;
	char path[512];
	uint8_t *buf;
	size_t len;
	int err;

	w = fg_region_claim(r, "w", &err);
	append_n(w, "d", 0, 100);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 100);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 0);	/* read ahead: not twice */
	ck_assert_uint_eq(fg_region_writer_committed(w), 0);
	fg_journal_close(j);				/* "killed": no commit */
	j = open_journal(&fx, 0);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 100);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_writer_committed(w), 100);
	ck_assert_int_eq(fg_journal_segment_path(fx.dir, 2, path, sizeof(path)), 0);
	buf = read_file(path, &len);
	ck_assert_int_eq(fg_jseg_scan(buf, len, 0, collect, c, &sc), 0);
	ck_assert_uint_eq(c->n, 100);
	free(buf);
	free(c);
	fg_region_release(w);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

/*
 * A consumer that looks at a slot while it is being claimed copies
 * nothing: the claim's generation is bumped before its owner word turns
 * LIVE, so records copied under the old generation would be copied again
 * from the tail once the new one is seen (and a commit would trip over
 * the changed generation). Here the writer's records are in the ring
 * while the slot still reads CLAIMING under the previous generation —
 * the interleaving test_journal_mt met under TSan — and every record
 * reaches the segment exactly once.
 */
START_TEST(test_a_slot_being_claimed_is_read_once_published)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 1024);
	struct fg_journal *j = open_journal(&fx, 0);
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_rslot *ctl = &fg_rslot_at(r, 0)->ctl;
	struct fg_region_writer *w;
	uint64_t *segs, gen, live;
	size_t n;
	int err;

	w = fg_region_claim(r, "w", &err);
	ck_assert_ptr_nonnull(w);
	live = atomic_load(&ctl->owner);
	/* as if the claim were still in progress, before its generation */
	atomic_store(&ctl->owner, fg_rowner(FG_SLOT_CLAIMING, getpid()));
	atomic_fetch_sub(&ctl->generation, 1);
	append_n(w, "c", 0, 10);
	ck_assert(!fg_region_slot_generation(r, 0, &gen));
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 0);
	/* the claim is published */
	atomic_fetch_add(&ctl->generation, 1);
	atomic_store(&ctl->owner, live);
	ck_assert(fg_region_slot_generation(r, 0, &gen));
	ck_assert_uint_eq(gen, 1);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 10);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 0);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_writer_committed(w), 10);
	fg_journal_close(j);
	ck_assert_int_eq(fg_journal_list(fx.dir, &segs, &n), 0);
	for (size_t i = 0; i < n; i++) {
		char path[512];
		struct fg_jseg_scan sc;
		uint8_t *buf;
		size_t len;

		ck_assert_int_eq(fg_journal_segment_path(fx.dir, segs[i], path, sizeof(path)), 0);
		buf = read_file(path, &len);
		ck_assert_int_eq(fg_jseg_scan(buf, len, 0, collect, c, &sc), 0);
		free(buf);
	}
	free(segs);
	ck_assert_uint_eq(c->n, 10);
	for (unsigned i = 0; i < 10; i++) {
		struct fg_history_key k;

		fx_key(r, "c", i, &k);
		ck_assert_uint_eq(c->rec[i].key_lo, k.lo);
	}
	free(c);
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

static int fails;

static int failing_sync(int fd)
{
	if (fails > 0) {
		fails--;
		errno = EIO;
		return -1;
	}
	return fdatasync(fd);
}

/* After a failed fdatasync nothing is released, the segment is dropped,
 * and the records (still in their ring) reach a new segment. */
START_TEST(test_failed_sync_abandons_the_segment)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 1024);
	struct collected *c = calloc(1, sizeof(*c));
	struct fg_journal_params jp;
	struct fg_region_writer *w;
	struct fg_jseg_scan sc;
	struct fg_journal *j;
	struct fg_jpos dur;
	char path[512];
	uint8_t *buf;
	size_t len;
	int err;

	memset(&jp, 0, sizeof(jp));
	jp.dir = fx_dir(&fx);
	fg_region_seed(r, jp.seed);
	fg_region_seed_check(fg_region_history(r), &jp.seed_check);
	jp.sync_fn = failing_sync;
	j = fg_journal_open(&jp, fg_region_ctld_stats(r), &err);
	ck_assert_ptr_nonnull(j);
	w = fg_region_claim(r, "w", &err);
	append_n(w, "s", 0, 50);
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 50);
	fails = 1;
	ck_assert_int_eq(fg_journal_commit(j, r), -EIO);
	ck_assert_uint_eq(fg_region_writer_committed(w), 0);
	ck_assert_uint_eq(fg_region_ctld_stats(r)->ctr[FG_CTR_JOURNAL_ERRORS], 1);
	/* the records are copied again, and committed into segment 2 */
	ck_assert_int_eq(fg_journal_drain(j, r, 1000), 50);
	ck_assert_int_eq(fg_journal_commit(j, r), 0);
	ck_assert_uint_eq(fg_region_writer_committed(w), 50);
	fg_journal_position(j, NULL, &dur);
	ck_assert_uint_eq(dur.segment, 2);
	ck_assert_int_eq(fg_journal_segment_path(fx.dir, 2, path, sizeof(path)), 0);
	buf = read_file(path, &len);
	ck_assert_int_eq(fg_jseg_scan(buf, len, 0, collect, c, &sc), 0);
	ck_assert_uint_eq(c->n, 50);
	free(buf);
	free(c);
	fg_region_release(w);
	fg_journal_close(j);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_full_ring_defers_and_counts)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_region_writer *w;
	struct fg_history_key k = { 5, 6 };
	int err;

	w = fg_region_claim(r, "w", &err);
	append_n(w, "f", 0, 63);
	ck_assert_int_eq(fg_journal_reserve(w), 0);
	ck_assert_int_eq(fg_journal_reserve(w), -ENOSPC);
	ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 0, 0, 0, 0), 0);
	ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 0, 0, 0, 0), -ENOSPC);
	ck_assert_int_eq(fg_journal_append(w, &k, FG_HISTORY_OFFERED, 0, 0, 0, 0), -EINVAL);
	ck_assert_uint_eq(fg_region_writer_stats(w)->total.ctr[FG_CTR_JOURNAL_RING_FULL], 2);
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_header_fields)
{
	uint8_t buf[FG_JSEG_HEADER];
	struct fg_jseg_info info;
	const char *why;

	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(fg_jseg_header(buf, sizeof(buf), &info, &why), -EINVAL);
	ck_assert_str_eq(why, "not a journal segment (bad magic)");
	memcpy(buf, FG_JSEG_MAGIC, 8);
	ck_assert_int_eq(fg_jseg_header(buf, sizeof(buf), &info, &why), -EINVAL);
	ck_assert_str_eq(why, "segment header checksum mismatch");
	/* a sound checksum over a version this build does not read */
	buf[8] = 9;
	buf[12] = FG_JSEG_HEADER;
	{
		uint32_t crc = fg_crc32c(0, buf, 124);

		memcpy(buf + 124, &crc, 4);
	}
	ck_assert_int_eq(fg_jseg_header(buf, sizeof(buf), &info, &why), -EPROTONOSUPPORT);
	ck_assert_str_eq(why, "journal segment format version 9; this build reads versions 1..2");
}
END_TEST

static Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_record_validation);
	tcase_add_test(tc, test_round_trip_and_commit_publishes);
	tcase_add_test(tc, test_ctld_records_between_writers);
	tcase_add_test(tc, test_every_cut_keeps_the_blocks_before_it);
	tcase_add_test(tc, test_every_flipped_octet_is_caught);
	tcase_add_test(tc, test_scan_from_a_position);
	tcase_add_test(tc, test_rotation_and_numbering);
	tcase_add_test(tc, test_records_leave_the_ring_only_when_durable);
	tcase_add_test(tc, test_failed_sync_abandons_the_segment);
	tcase_add_test(tc, test_full_ring_defers_and_counts);
	tcase_add_test(tc, test_header_fields);
	tcase_add_test(tc, test_a_slot_being_claimed_is_read_once_published);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(journal_suite)
