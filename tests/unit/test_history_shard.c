/* SPDX-License-Identifier: MIT */
/*
 * test_history_shard.c — the table split into shards: the shard count
 * (automatic and chosen), the geometry a header must have, every entry in
 * the shard its hash names, a full table within shards, images with a CRC
 * per shard (a flipped byte in any shard refused, nothing left attached),
 * the parallel restore on several threads, and a layout-2 image read as a
 * table of one shard. Races within shards are test_history_mt.c
 * ("sharded").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "../../dataplane/history/history_int.h"
#include "fgtest.h"

#define T0 1767225600	/* 2026-01-01 00:00:00 UTC */

static const uint8_t test_seed[16] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 };

struct tbl {
	struct fg_history *h;
	void *mem;
	size_t len;
};

static void tbl_open(struct tbl *t, uint64_t cap, uint32_t side, uint32_t shards)
{
	struct fg_history_params p = { .capacity = cap, .side_capacity = side, .shards = shards,
				       .full_policy = FG_FULL_DEFER, .alarm_load_pct = 90,
				       .now = T0 };

	memcpy(p.seed, test_seed, 16);
	t->len = fg_history_region_size_sharded(cap, side, shards);
	ck_assert_uint_gt(t->len, 0);
	t->mem = aligned_alloc(64, (t->len + 63) & ~(size_t)63);
	ck_assert_ptr_nonnull(t->mem);
	t->h = fg_history_create(t->mem, t->len, &p);
	ck_assert_ptr_nonnull(t->h);
}

static void tbl_close(struct tbl *t)
{
	if (t->h)
		fg_history_detach(t->h);
	free(t->mem);
}

static struct fg_history_key key_of(const struct fg_history *h, unsigned n)
{
	struct fg_history_key k;
	char id[96];
	int len = snprintf(id, sizeof(id), "<%u.shard-test@news.example.org>", n);

	fg_history_hash(h, id, (size_t)len, &k);
	return k;
}

/* Insert n accepted entries (first-seen and date from i); how many went in. */
static unsigned fill(struct fg_history *h, unsigned n)
{
	unsigned in = 0;

	for (unsigned i = 0; i < n; i++) {
		struct fg_history_key k = key_of(h, i);

		in += fg_history_insert_final(h, &k, i % 3 ? FG_HISTORY_ACCEPTED : FG_HISTORY_REJECTED,
					      T0 - (fg_time_t)(i % 5000), T0 - (fg_time_t)(i % 977),
					      T0, NULL) == 0;
	}
	return in;
}

static void expect_all(const struct fg_history *h, unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		struct fg_history_key k = key_of(h, i);
		struct fg_history_entry e;

		ck_assert_msg(fg_history_lookup(h, &k, T0, &e) ==
				      (i % 3 ? FG_HISTORY_ACCEPTED : FG_HISTORY_REJECTED),
			      "%s: entry %u lost", what, i);
		ck_assert_int_eq(e.first_seen, T0 - (fg_time_t)(i % 977));
	}
}

START_TEST(shard_count_auto_and_chosen)
{
	struct fg_history_stats st;
	struct tbl t;

	/* auto: one shard per 16 M entries, a power of two, at most 256 */
	ck_assert_uint_eq(fg_history_shards_for(1000, 0), 1);
	ck_assert_uint_eq(fg_history_shards_for(FG_HISTORY_SHARD_AUTO_ENTRIES, 0), 1);
	ck_assert_uint_eq(fg_history_shards_for(FG_HISTORY_SHARD_AUTO_ENTRIES + 1, 0), 2);
	ck_assert_uint_eq(fg_history_shards_for(100000000, 0), 8);
	ck_assert_uint_eq(fg_history_shards_for(1000000000, 0), 64);
	ck_assert_uint_eq(fg_history_shards_for(1ull << 40, 0), FG_HISTORY_SHARDS_MAX);
	ck_assert_uint_eq(fg_history_shards_for(1000, 8), 8);
	/* a count that is not a power of two up to the maximum: no region */
	ck_assert_uint_eq(fg_history_region_size_sharded(1000, 0, 3), 0);
	ck_assert_uint_eq(fg_history_region_size_sharded(1000, 0, 512), 0);
	ck_assert_uint_eq(fg_history_region_size_sharded(0, 0, 4), 0);
	/* capacity rounds up to whole buckets in every shard */
	ck_assert_uint_eq(fg_history_region_size_sharded(1001, 0, 8),
			  FG_HHEADER + 208 * sizeof(struct fg_hbucket));
	ck_assert_uint_eq(fg_history_region_size(1001, 0), fg_history_region_size_sharded(1001, 0, 1));
	tbl_open(&t, 1001, 0, 8);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.shards, 8);
	ck_assert_uint_eq(st.buckets, 208);
	ck_assert_uint_eq(t.h->hdr->shard_buckets, 26);
	ck_assert_uint_eq(t.h->hdr->version, FG_HISTORY_LAYOUT);
	tbl_close(&t);
}
END_TEST

static int in_its_shard(void *arg, const struct fg_history_record *r)
{
	unsigned *n = arg;

	(void)r;
	(*n)++;
	return 0;
}

/* Every key's pair lies in shard hi & (shards - 1), and an entry found by
 * iteration sits in a bucket of that shard; a table filled to 90 % makes
 * room by moves that stay inside shards. (Shards this small differ in
 * load by a few percent, so the 98 % a single table reaches is not asked
 * of them; at 16 M entries a shard the spread is 0.03 %.) */
START_TEST(entries_live_in_their_shard)
{
	const unsigned cap = 40000, n = 36000;
	struct tbl t;
	unsigned seen = 0, in;
	uint64_t cursor = 0;
	struct fg_history_stats st;

	tbl_open(&t, cap, 0, 4);
	for (unsigned i = 0; i < 5000; i++) {
		struct fg_history_key k = key_of(t.h, i);
		struct fg_hloc loc;
		uint64_t s = k.hi & 3;

		fg_hlocate(t.h, &k, &loc);
		ck_assert_uint_eq(loc.b1 / t.h->ms, s);
		ck_assert_uint_eq(loc.b2 / t.h->ms, s);
		/* the other bucket of either is the pair's other one */
		ck_assert_uint_eq(fg_halt_global(t.h, loc.b1, loc.fp), loc.b2);
		ck_assert_uint_eq(fg_halt_global(t.h, loc.b2, loc.fp), loc.b1);
	}
	in = fill(t.h, n);
	ck_assert_uint_eq(in, n);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, n);
	ck_assert_uint_gt(st.moves, 0);
	expect_all(t.h, n, "filled to 95 %");
	/* per shard, the entries stored there are the keys that hash there */
	for (uint32_t s = 0; s < 4; s++) {
		unsigned want = 0, got = 0;

		for (unsigned i = 0; i < n; i++)
			want += (key_of(t.h, i).hi & 3) == s;
		cursor = s * t.h->ms;
		while (cursor < (s + 1) * t.h->ms)
			fg_history_iterate(t.h, &cursor,
					   (unsigned)FG_MIN(64, (s + 1) * t.h->ms - cursor),
					   in_its_shard, &got, T0);
		ck_assert_uint_eq(got, want);
		seen += got;
	}
	ck_assert_uint_eq(seen, n);
	tbl_close(&t);
}
END_TEST

/* A shard count or shard size a header cannot have is refused by attach
 * (and images by their check), whatever the rest says. */
START_TEST(shard_geometry_checked)
{
	enum fg_history_error why;
	struct tbl t;
	struct fg_history *h;
	struct fg_hregion *r;

	tbl_open(&t, 4000, 0, 4);
	r = t.mem;
	r->shards = 3;
	ck_assert_ptr_null(fg_history_attach(t.mem, t.len, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_GEOMETRY);
	r->shards = 8;	/* a power of two, but 8 * shard_buckets != n_buckets */
	ck_assert_ptr_null(fg_history_attach(t.mem, t.len, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_GEOMETRY);
	r->shards = 4;
	r->shard_buckets++;
	ck_assert_ptr_null(fg_history_attach(t.mem, t.len, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_GEOMETRY);
	r->shard_buckets--;
	/* a live region of the unsharded layout is not adopted */
	r->version = FG_HISTORY_LAYOUT_UNSHARDED;
	ck_assert_ptr_null(fg_history_attach(t.mem, t.len, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_VERSION);
	r->version = FG_HISTORY_LAYOUT;
	h = fg_history_attach(t.mem, t.len, &why);
	ck_assert_ptr_nonnull(h);
	fg_history_detach(h);
	tbl_close(&t);
}
END_TEST

struct pauses {
	uint32_t calls;
	uint64_t last;
};

/* Each pause reports more bytes copied than the one before. */
static void count_pause(void *arg, uint64_t bytes_done)
{
	struct pauses *p = arg;

	ck_assert_uint_gt(bytes_done, p->last);
	p->calls++;
	p->last = bytes_done;
}

/* Copy (pausing after each shard), check, restore on 1, 3 and 8 threads:
 * the same table each time, transient entries cleared, counts exact. */
START_TEST(image_round_trip_parallel)
{
	const unsigned n = 20000;
	const unsigned threads[] = { 1, 3, 8 };
	struct pauses ps = { 0 };
	struct fg_history_stats st, st2;
	enum fg_history_error why;
	struct fg_history_ref ref;
	struct fg_history_key k;
	struct fg_hregion *ir;
	struct tbl t;
	void *img;

	tbl_open(&t, 30000, 64, 8);
	ck_assert_uint_eq(fill(t.h, n), n);
	k = key_of(t.h, 999999);
	ck_assert_int_eq(fg_history_offer(t.h, &k, T0, T0 + 10, 5, &ref, NULL), 0);
	ck_assert_int_eq(fg_history_version_note(t.h, "<b@x>", 5, 2, "<b$v=2@x>", 9, T0), 0);
	img = aligned_alloc(64, t.len);
	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(fg_history_image_copy_paced(t.h, img, t.len, count_pause, &ps), 0);
	ck_assert_uint_eq(ps.calls, 8);	/* shards smaller than a MiB: one at each end */
	ck_assert_uint_eq(ps.last, t.h->m * sizeof(struct fg_hbucket));
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	ir = img;
	for (uint32_t s = 0; s < 8; s++)
		ck_assert_uint_ne(ir->shard_crc[s], 0);
	ck_assert_uint_eq(ir->shard_crc[8], 0);
	fg_history_stats(t.h, &st);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(threads); i++) {
		void *mem = aligned_alloc(64, t.len);
		struct fg_history *h;

		memset(mem, 0xa5, t.len);
		h = fg_history_restore_parallel(mem, t.len, img, t.len, threads[i], &why);
		ck_assert_msg(h != NULL, "%u threads: %s", threads[i], fg_history_error_str(why));
		expect_all(h, n, "restored");
		/* the offer was a session's: gone after a restore */
		ck_assert_int_eq(fg_history_lookup(h, &k, T0, NULL), FG_HISTORY_ABSENT);
		fg_history_stats(h, &st2);
		ck_assert_uint_eq(st2.entries, st.entries - 1);
		ck_assert_uint_eq(st2.shards, 8);
		ck_assert_uint_eq(st2.side_used, 1);
		ck_assert_uint_eq(((struct fg_hregion *)mem)->sealed, 0);
		fg_history_detach(h);
		free(mem);
	}
	free(img);
	tbl_close(&t);
}
END_TEST

/* A table of 8000 slots in `shards` shards with n entries, its image and
 * a region to restore it into. */
static uint8_t *filled_image(struct tbl *t, uint32_t shards, unsigned n, void **mem)
{
	uint8_t *img;

	tbl_open(t, 8000, 0, shards);
	ck_assert_uint_eq(fill(t->h, n), n);
	img = aligned_alloc(64, t->len);
	*mem = aligned_alloc(64, t->len);
	ck_assert_ptr_nonnull(img);
	ck_assert_ptr_nonnull(*mem);
	ck_assert_int_eq(fg_history_image_copy(t->h, img, t->len), 0);
	return img;
}

/* A flipped byte in any shard's buckets, in its recorded CRC or in a
 * shard CRC beyond the shard count: refused by the check and by the
 * parallel restore, which then leaves no table to attach to. */
struct mid_pauses {
	const struct fg_history *h;
	uint32_t calls, held;
	uint64_t last;
};

/* A pause inside the shard keeps the cursor up; the shard's end clears it. */
static void mid_pause(void *arg, uint64_t bytes_done)
{
	struct mid_pauses *p = arg;
	bool end = bytes_done == p->h->m * sizeof(struct fg_hbucket);

	ck_assert_uint_eq(bytes_done % (FG_HSNAP_PACE_BUCKETS * sizeof(struct fg_hbucket)) == 0 || end, 1);
	ck_assert_uint_gt(bytes_done, p->last);
	p->held += (atomic_load(&p->h->hdr->snap) & FG_HSNAP_ACTIVE) != 0;
	ck_assert_uint_eq((atomic_load(&p->h->hdr->snap) & FG_HSNAP_ACTIVE) != 0, !end);
	p->calls++;
	p->last = bytes_done;
}

/* One shard of several MiB: a pause after every MiB, then one at its end,
 * and the image is whole. */
START_TEST(image_pauses_every_mib_inside_a_shard)
{
	struct mid_pauses ps = { 0 };
	enum fg_history_error why;
	struct tbl t;
	void *img;

	tbl_open(&t, 200000, 0, 1);
	ck_assert_uint_gt(t.h->m, 2 * FG_HSNAP_PACE_BUCKETS);
	ck_assert_uint_eq(fill(t.h, 1000), 1000);
	ps.h = t.h;
	img = aligned_alloc(64, t.len);
	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(fg_history_image_copy_paced(t.h, img, t.len, mid_pause, &ps), 0);
	ck_assert_uint_eq(ps.calls, (t.h->m - 1) / FG_HSNAP_PACE_BUCKETS + 1);
	ck_assert_uint_eq(ps.held, ps.calls - 1);
	ck_assert_uint_eq(ps.last, t.h->m * sizeof(struct fg_hbucket));
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	free(img);
	tbl_close(&t);
}
END_TEST

START_TEST(damaged_shard_refused)
{
	const size_t bsz = sizeof(struct fg_hbucket);
	enum fg_history_error why;
	struct fg_hregion *ir;
	struct tbl t;
	uint8_t *img;
	void *mem;

	img = filled_image(&t, 4, 6000, &mem);
	ir = (struct fg_hregion *)img;
	for (uint32_t s = 0; s < 4; s++) {
		size_t off = FG_HHEADER + (s * t.h->ms + t.h->ms / 2) * bsz + 17;

		img[off] ^= 0x10;
		ck_assert_int_eq(fg_history_image_check(img, t.len, &why), -EINVAL);
		ck_assert_int_eq(why, FG_HISTORY_E_CHECKSUM);
		ck_assert_ptr_null(fg_history_restore_parallel(mem, t.len, img, t.len, 4, &why));
		ck_assert_int_eq(why, FG_HISTORY_E_CHECKSUM);
		ck_assert_ptr_null(fg_history_attach(mem, t.len, &why));
		img[off] ^= 0x10;
	}
	ir->shard_crc[2] ^= 1;
	ck_assert_ptr_null(fg_history_restore_parallel(mem, t.len, img, t.len, 2, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_CHECKSUM);
	ir->shard_crc[2] ^= 1;
	ir->shard_crc[4] = 1;	/* beyond the shard count */
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), -EINVAL);
	ck_assert_int_eq(why, FG_HISTORY_E_GEOMETRY);
	ir->shard_crc[4] = 0;
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	free(mem);
	free(img);
	tbl_close(&t);
}
END_TEST

/* An image as the build before shards wrote it (layout 2: no shard
 * fields, one CRC over everything) restores as a table of one shard, with
 * the same entries where they were; damage to it is still caught. */
START_TEST(layout2_image_read_as_one_shard)
{
	enum fg_history_error why;
	struct fg_history_stats st;
	struct fg_history *h;
	struct fg_hregion *ir;
	struct tbl t;
	uint8_t *img;
	void *mem;

	img = filled_image(&t, 1, 7000, &mem);
	ir = (struct fg_hregion *)img;
	ir->version = FG_HISTORY_LAYOUT_UNSHARDED;
	ir->shards = 0;
	ir->shard_buckets = 0;
	memset(ir->shard_crc, 0, sizeof(ir->shard_crc));
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	ck_assert_int_eq(fg_history_image_check(img, t.len, &why), 0);
	ck_assert_uint_eq(fg_history_layout_of(img, t.len), FG_HISTORY_LAYOUT_UNSHARDED);
	/* a flipped bucket byte: the single CRC catches it */
	img[FG_HHEADER + 100 * sizeof(struct fg_hbucket) + 30] ^= 4;
	ck_assert_ptr_null(fg_history_restore_parallel(mem, t.len, img, t.len, 4, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_CHECKSUM);
	img[FG_HHEADER + 100 * sizeof(struct fg_hbucket) + 30] ^= 4;
	/* layout 2 with shard fields set is not what that build wrote */
	ir->shards = 1;
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	ck_assert_ptr_null(fg_history_restore(mem, t.len, img, t.len, &why));
	ck_assert_int_eq(why, FG_HISTORY_E_GEOMETRY);
	ir->shards = 0;
	ck_assert_int_eq(fg_history_image_seal(img, t.len), 0);
	h = fg_history_restore_parallel(mem, t.len, img, t.len, 4, &why);
	ck_assert_msg(h != NULL, "%s", fg_history_error_str(why));
	ck_assert_uint_eq(((struct fg_hregion *)mem)->version, FG_HISTORY_LAYOUT);
	fg_history_stats(h, &st);
	ck_assert_uint_eq(st.shards, 1);
	ck_assert_uint_eq(st.entries, 7000);
	expect_all(h, 7000, "layout 2");
	fg_history_detach(h);
	free(mem);
	free(img);
	tbl_close(&t);
}
END_TEST

/* A sweep walks shard after shard and drops exactly the old entries. */
START_TEST(sweep_across_shards)
{
	struct fg_history_sweep sw;
	struct fg_history_stats st;
	unsigned steps = 0, old = 0;
	struct tbl t;

	tbl_open(&t, 20000, 0, 8);
	for (unsigned i = 0; i < 15000; i++) {
		struct fg_history_key k = key_of(t.h, i);
		fg_time_t fs = i % 4 ? T0 : T0 - 20 * 86400;

		old += !(i % 4);
		ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, fs, fs, T0,
							 NULL), 0);
	}
	ck_assert_int_eq(fg_history_sweep_init(&sw, FG_EXPIRY_FIRST_SEEN, T0, 10 * 86400,
					       11 * 86400, false), 0);
	while (fg_history_sweep_step(t.h, &sw, 100))
		steps++;
	ck_assert(sw.done);
	ck_assert_uint_eq(sw.expired, old);
	ck_assert_uint_eq(sw.kept, 15000 - old);
	ck_assert_uint_eq(sw.buckets, t.h->m);
	fg_history_stats(t.h, &st);
	ck_assert_uint_eq(st.entries, 15000 - old);
	ck_assert_uint_gt(steps, 8);
	tbl_close(&t);
}
END_TEST

static Suite *history_shard_suite(void)
{
	Suite *s = suite_create("history_shard");
	TCase *tc = tcase_create("shards");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, shard_count_auto_and_chosen);
	tcase_add_test(tc, entries_live_in_their_shard);
	tcase_add_test(tc, shard_geometry_checked);
	tcase_add_test(tc, image_round_trip_parallel);
	tcase_add_test(tc, image_pauses_every_mib_inside_a_shard);
	tcase_add_test(tc, damaged_shard_refused);
	tcase_add_test(tc, layout2_image_read_as_one_shard);
	tcase_add_test(tc, sweep_across_shards);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(history_shard_suite)
