/* SPDX-License-Identifier: MIT */
/*
 * test_queue.c — the outbound queue: its format (every byte of a header or
 * record matters, torn tails stop a scan), the writer end to end on a real
 * directory (group commit, held and copied pieces, completions only after
 * the sync), cursor arithmetic and persistence, segment deletion (cursors,
 * completions, the journal gate), refusal at the limit and on a full disk
 * with its recovery, failed syncs, recovery of a torn tail at open, the
 * restore replay and the status readers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/date.h"
#include "floodgate/qwriter.h"

/* ------------------------------------------------------------ helpers */

static char dir[64];

static void mkdir_tmp(void)
{
	strcpy(dir, "/tmp/fgq-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A record built by hand, the way the writer lays it out. */
static size_t make_record(uint8_t *out, uint64_t recno, fg_time_t arrival, const char *id,
			  const char *art)
{
	size_t il = strlen(id), al = strlen(art);
	struct fg_queue_rec_fields f = {
		.recno = recno, .arrival = arrival, .art_len = (uint32_t)al,
		.id_len = (uint16_t)il, .peer = 7, .route = NULL,
	};
	uint64_t size = fg_queue_rec_size(FG_QUEUE_REC_HEADER, il, al);
	uint32_t crc = fg_queue_rec_crc_start(&f);

	crc = fg_crc32c(crc, id, il);
	crc = fg_crc32c(crc, art, al);
	memset(out, 0, size);
	fg_queue_rec_header_encode(out, &f, crc);
	memcpy(out + FG_QUEUE_REC_HEADER, id, il);
	memcpy(out + FG_QUEUE_REC_HEADER + il, art, al);
	return size;
}

static const char *const ART =
	"Path: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.test\r\nSubject: s\r\n"
	"Message-ID: <m@x>\r\nDate: Mon, 02 Mar 2026 12:00:00 +0000\r\n\r\nbody\r\n..dot\r\n";

/* A segment image of `n` records; returns its length. */
static size_t make_segment(uint8_t *buf, uint64_t base, uint64_t recno, unsigned n)
{
	struct fg_queue_seg_info si = { 5, base, recno, 1700000000, FG_QUEUE_VERSION };
	size_t off = FG_QUEUE_SEG_HEADER;
	char id[32];

	fg_queue_seg_header_encode(buf, &si);
	for (unsigned i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "<r%u@x>", i);
		off += make_record(buf + off, recno + i, 1700000000 + i, id, ART);
	}
	return off;
}

/* A driver standing in for the engine: completions by cookie. */
struct drv {
	int status[4096];
	unsigned done;
};

static void on_done(void *ctx, uint64_t cookie, int status)
{
	struct drv *d = ctx;

	ck_assert_uint_lt(cookie, 4096);
	d->status[cookie] = status;
	d->done++;
}

/* Deadlines of the waits: a bound on failure only (ASan on a loaded
 * machine), never a measurement. */
#define WAIT_NS (60ull * 1000000000)

static void wait_done(struct fg_queue_sink *s, struct drv *d, unsigned want)
{
	uint64_t until = fg_mono_ns() + WAIT_NS;

	while (d->done < want && fg_mono_ns() < until) {
		fg_queue_sink_ops.poll(s, fg_mono_ns(), on_done, d);
		usleep(200);
	}
	ck_assert_uint_eq(d->done, want);
}

/* Offer an article in three pieces: held, copied, held (when `hold`). */
static int put(struct fg_queue_sink *s, const char *id, const char *art, uint64_t cookie,
	       bool hold)
{
	size_t len = strlen(art), a = len / 3, b = 2 * len / 3;
	const struct fg_iov piece[3] = {
		{ (const uint8_t *)art, (uint32_t)a, NULL },
		{ (const uint8_t *)art + a, (uint32_t)(b - a), NULL },
		{ (const uint8_t *)art + b, (uint32_t)(len - b), NULL },
	};
	void *h;
	int rc = fg_queue_sink_ops.begin(s, id, strlen(id), 3, &h);

	if (rc != 0)
		return rc;
	for (unsigned i = 0; i < 3; i++) {
		bool may = hold && i != 1;

		rc = fg_queue_sink_ops.append(s, h, &piece[i], may);
		ck_assert_int_eq(rc, may ? FG_SINK_HOLD : 0);
	}
	return fg_queue_sink_ops.commit(s, h, cookie);
}

/* Create the engine-side handle, start the writer, clear the driver. */
static struct fg_queue_sink *start_q(struct fg_queue *q, struct drv *d)
{
	struct fg_queue_sink_params sp = { 0 };
	struct fg_queue_sink *s = fg_queue_sink_create(q, &sp);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(fg_queue_start(q), 0);
	memset(d, 0, sizeof(*d));
	return s;
}

static void stop_q(struct fg_queue *q, struct fg_queue_sink *s)
{
	fg_queue_stop(q);
	fg_queue_sink_destroy(s);
	fg_queue_close(q);
}

/* n articles "<PREFIXi@t>" with cookies from d->done on, then wait. */
static void fill(struct fg_queue_sink *s, struct drv *d, const char *prefix, unsigned n,
		 const char *art, bool hold)
{
	unsigned first = d->done;
	char id[32];

	for (unsigned i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "<%s%u@t>", prefix, i);
		ck_assert_int_eq(put(s, id, art, first + i, hold), 0);
	}
	wait_done(s, d, first + n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(d->status[first + i], 0);
}

static struct fg_queue *open_q(struct fg_queue_params *p, struct fg_queue_open_info *info)
{
	struct fg_queue *q;
	int err = 0;

	p->dir = dir;
	q = fg_queue_open(p, info, &err);
	ck_assert_msg(q != NULL, "open: %s", strerror(-err));
	return q;
}

/* Scan every segment in dir; count records and check each ID is <aN@t>. */
static uint64_t count_records(void)
{
	uint64_t *nums, total = 0;
	size_t n;

	ck_assert_int_eq(fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n),
			 0);
	for (size_t i = 0; i < n; i++) {
		char path[256];
		static uint8_t buf[8 << 20];
		struct fg_queue_scan sc;
		ssize_t r;
		int fd;

		fg_queue_segment_path(dir, nums[i], path, sizeof(path));
		fd = open(path, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		r = read(fd, buf, sizeof(buf));
		close(fd);
		ck_assert_int_ge(r, FG_QUEUE_SEG_HEADER);
		ck_assert_int_eq(fg_queue_seg_scan(buf, (size_t)r, NULL, NULL, &sc), 0);
		ck_assert_msg(!sc.torn, "segment %zu torn: %s", i, sc.why);
		total += sc.records;
	}
	free(nums);
	return total;
}

static size_t nsegments(void)
{
	uint64_t *nums;
	size_t n;

	ck_assert_int_eq(fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n),
			 0);
	free(nums);
	return n;
}

static void wait_for(bool (*cond)(struct fg_queue *), struct fg_queue *q, const char *what)
{
	uint64_t until = fg_mono_ns() + WAIT_NS;

	while (!cond(q) && fg_mono_ns() < until)
		usleep(1000);
	ck_assert_msg(cond(q), "timed out waiting for %s", what);
}

/* ------------------------------------------------------------ format */

START_TEST(seg_header_roundtrip_and_every_byte)
{
	struct fg_queue_seg_info si = { 9, 123456, 77, 1700000001, FG_QUEUE_VERSION }, out;
	uint8_t h[FG_QUEUE_SEG_HEADER];
	const char *why;

	fg_queue_seg_header_encode(h, &si);
	ck_assert_int_eq(fg_queue_seg_header_decode(h, sizeof(h), &out, &why), 0);
	ck_assert_uint_eq(out.segment, 9);
	ck_assert_uint_eq(out.base, 123456);
	ck_assert_uint_eq(out.first_recno, 77);
	ck_assert_int_eq(out.created, 1700000001);
	ck_assert_int_eq(fg_queue_seg_header_decode(h, sizeof(h) - 1, &out, &why), -EINVAL);
	for (unsigned i = 0; i < sizeof(h); i++) {
		h[i] ^= 0x10;
		ck_assert_msg(fg_queue_seg_header_decode(h, sizeof(h), &out, &why) == -EINVAL,
			      "flip at %u accepted", i);
		h[i] ^= 0x10;
	}
}
END_TEST

START_TEST(record_check_every_byte)
{
	uint8_t buf[1024];
	size_t n = make_record(buf, 42, 1700000000, "<abc@def>", ART);
	struct fg_queue_rec r;
	const char *why;

	ck_assert_uint_eq(n % 8, 0);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 42, &r, &why), 0);
	ck_assert_uint_eq(r.recno, 42);
	ck_assert_uint_eq(r.id_len, 9);
	ck_assert_uint_eq(r.peer, 7);
	ck_assert_uint_eq(r.art_len, strlen(ART));
	ck_assert(memcmp(r.art, ART, r.art_len) == 0);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, UINT64_MAX, &r, &why), 0);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 43, &r, &why), -EINVAL);
	ck_assert_str_eq(why, "record number out of sequence");
	for (size_t cut = 0; cut < n; cut++)
		ck_assert_int_eq(fg_queue_rec_check(buf, cut, 42, &r, &why), -EINVAL);
	/* every octet, padding included, is covered by some check */
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x01;
		ck_assert_msg(fg_queue_rec_check(buf, n, 42, &r, &why) == -EINVAL,
			      "flip at %zu accepted", i);
		buf[i] ^= 0x01;
	}
}
END_TEST

/* A version-2 record with a route; flips anywhere in it (the route, its
 * count and flags included) are refused; a partial read still gives the
 * fixed fields and says the route was not read. */
START_TEST(record_route_every_byte)
{
	struct fg_feeds_set route = { .n = 3, .ident = { 1, UINT64_MAX, 0x0123456789abcdefull } };
	struct fg_queue_rec_fields f = { .recno = 5, .arrival = 1700000000, .art_len = 4,
					 .id_len = 5, .peer = 2, .route = &route };
	uint8_t buf[512] = { 0 };
	uint32_t hl, crc = fg_queue_rec_crc_start(&f);
	struct fg_queue_rec r;
	const char *why;
	size_t n;

	crc = fg_crc32c(fg_crc32c(crc, "<a@b>", 5), "x\r\ny", 4);
	hl = fg_queue_rec_header_encode(buf, &f, crc);
	ck_assert_uint_eq(hl, FG_QUEUE_REC_HEADER + 3 * 8);
	ck_assert_uint_eq(hl, fg_queue_rec_hdr_len(&route));
	memcpy(buf + hl, "<a@b>", 5);
	memcpy(buf + hl + 5, "x\r\ny", 4);
	n = fg_queue_rec_size(hl, 5, 4);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 5, &r, &why), 0);
	ck_assert_uint_eq(r.version, 2);
	ck_assert_uint_eq(r.hdr_len, hl);
	ck_assert(r.route_read && !r.route.all);
	ck_assert_uint_eq(r.route.n, 3);
	ck_assert_uint_eq(r.route.ident[1], UINT64_MAX);
	ck_assert_uint_eq(r.route.ident[2], 0x0123456789abcdefull);
	ck_assert(fg_feeds_has(&r.route, 1) && !fg_feeds_has(&r.route, 2));
	ck_assert_mem_eq(r.id, "<a@b>", 5);
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x04;
		ck_assert_msg(fg_queue_rec_check(buf, n, 5, &r, &why) == -EINVAL,
			      "flip at %zu accepted", i);
		buf[i] ^= 0x04;
	}
	/* the header alone: fields, not the route */
	ck_assert_int_eq(fg_queue_rec_header_decode(buf, FG_QUEUE_REC_HEADER, &r, &why), 0);
	ck_assert(!r.route_read);
	ck_assert_uint_eq(r.hdr_len, hl);
	ck_assert_uint_eq(r.size, n);
	ck_assert_int_eq(fg_queue_rec_header_decode(buf, FG_QUEUE_REC_HEADER - 1, &r, &why),
			 -EINVAL);
	/* no route given: "every downstream", no identifiers */
	f.route = NULL;
	hl = fg_queue_rec_header_encode(buf, &f, 0);
	ck_assert_uint_eq(hl, FG_QUEUE_REC_HEADER);
	ck_assert_int_eq(fg_queue_rec_header_decode(buf, hl, &r, &why), 0);
	ck_assert(r.route.all && r.route_read && r.route.n == 0);
	/* more identifiers than downstreams can exist: refused */
	buf[32] = FG_FEEDS_MAX + 1;
	buf[33] = 0;
	ck_assert_int_eq(fg_queue_rec_header_decode(buf, sizeof(buf), &r, &why), -EINVAL);
}
END_TEST

START_TEST(record_id_shape)
{
	uint8_t buf[1024];
	struct fg_queue_rec r;
	const char *why;
	size_t n;

	n = make_record(buf, 0, 1, "abc@def", ART);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 0, &r, &why), -EINVAL);
	n = make_record(buf, 0, 1, "<a b@c>", ART);
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 0, &r, &why), -EINVAL);
	ck_assert_str_eq(why, "not a Message-ID");
	n = make_record(buf, 0, 1, "<a>", "");
	ck_assert_int_eq(fg_queue_rec_check(buf, n, 0, &r, &why), 0);
	ck_assert_uint_eq(r.art_len, 0);
}
END_TEST

static int count_fn(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	uint64_t *expect_pos = arg;

	ck_assert_uint_eq(pos, *expect_pos);
	*expect_pos += r->size;
	return 0;
}

START_TEST(scan_positions_and_torn_tails)
{
	static uint8_t buf[1 << 16];
	size_t len = make_segment(buf, 1000, 50, 4), full = len;
	struct fg_queue_scan sc;
	uint64_t pos = 1000;

	ck_assert_int_eq(fg_queue_seg_scan(buf, len, count_fn, &pos, &sc), 0);
	ck_assert_uint_eq(sc.records, 4);
	ck_assert(!sc.torn);
	ck_assert_uint_eq(sc.end, len);
	ck_assert_uint_eq(sc.next_recno, 54);
	ck_assert_uint_eq(pos, 1000 + len - FG_QUEUE_SEG_HEADER);
	/* every cut inside the last record: three sound, torn */
	for (size_t cut = full - fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)) + 1; cut < full; cut++) {
		ck_assert_int_eq(fg_queue_seg_scan(buf, cut, NULL, NULL, &sc), 0);
		ck_assert_uint_eq(sc.records, 3);
		ck_assert(sc.torn);
	}
	/* garbage after the records is a torn tail, not a record */
	memset(buf + full, 0xab, 100);
	ck_assert_int_eq(fg_queue_seg_scan(buf, full + 100, NULL, NULL, &sc), 0);
	ck_assert_uint_eq(sc.records, 4);
	ck_assert(sc.torn);
	ck_assert_uint_eq(sc.end, full);
	/* a flipped octet in record 2 stops the scan before it */
	buf[FG_QUEUE_SEG_HEADER + fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)) + 40] ^= 4;
	ck_assert_int_eq(fg_queue_seg_scan(buf, full, NULL, NULL, &sc), 0);
	ck_assert_uint_eq(sc.records, 1);
	ck_assert(sc.torn);
	/* a bad header: nothing walked */
	buf[0] = 'X';
	ck_assert_int_eq(fg_queue_seg_scan(buf, full, NULL, NULL, &sc), -EINVAL);
}
END_TEST

START_TEST(slots_pick_newest_sound)
{
	uint8_t buf[2 * FG_QUEUE_SLOT];
	struct fg_queue_slot a = { .seq = 4, .c = { 100, 10 }, .updated = 1 },
			     b = { .seq = 5, .c = { 200, 20 }, .updated = 2 }, out;

	fg_queue_slot_encode(buf, FG_QUEUE_CURSOR_MAGIC, &a);
	fg_queue_slot_encode(buf + FG_QUEUE_SLOT, FG_QUEUE_CURSOR_MAGIC, &b);
	ck_assert_int_eq(fg_queue_slots_pick(buf, sizeof(buf), FG_QUEUE_CURSOR_MAGIC, &out), 0);
	ck_assert_uint_eq(out.c.pos, 200);
	/* the newer slot torn: the older one stands */
	buf[FG_QUEUE_SLOT + 20] ^= 1;
	ck_assert_int_eq(fg_queue_slots_pick(buf, sizeof(buf), FG_QUEUE_CURSOR_MAGIC, &out), 0);
	ck_assert_uint_eq(out.c.pos, 100);
	ck_assert_uint_eq(out.c.recno, 10);
	/* a short file holds one slot */
	ck_assert_int_eq(fg_queue_slots_pick(buf, FG_QUEUE_SLOT, FG_QUEUE_CURSOR_MAGIC, &out), 0);
	ck_assert_uint_eq(out.seq, 4);
	/* another magic is not a cursor */
	ck_assert_int_eq(fg_queue_slots_pick(buf, sizeof(buf), FG_QUEUE_HEAD_MAGIC, &out), -ENOENT);
	buf[3] ^= 1;
	ck_assert_int_eq(fg_queue_slots_pick(buf, sizeof(buf), FG_QUEUE_CURSOR_MAGIC, &out),
			 -ENOENT);
}
END_TEST

START_TEST(names)
{
	char p[64];

	ck_assert_int_eq(fg_queue_segment_path("/d", 0x1f, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "/d/queue-000000000000001f.fgq");
	ck_assert_int_eq(fg_queue_cursor_path("/d", "inn-1.a_b", p, sizeof(p)), 0);
	ck_assert_str_eq(p, "/d/cursor-inn-1.a_b.fgc");
	ck_assert_int_eq(fg_queue_cursor_path("/d", "../x", p, sizeof(p)), -EINVAL);
	ck_assert_int_eq(fg_queue_cursor_path("/d", "", p, sizeof(p)), -EINVAL);
	ck_assert_int_eq(fg_queue_segment_path("/d", 1, p, 10), -ENAMETOOLONG);
}
END_TEST

START_TEST(article_date_prefers_injection_date)
{
	const char *a = "Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n"
			"Injection-Date: Tue, 03 Mar 2026 12:00:00 +0000\r\n\r\nx\r\n";
	const char *b = "Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n"
			"Injection-Date: not a date\r\n\r\nx\r\n";
	const char *c = "Subject: none\r\n";
	fg_time_t t;

	ck_assert_int_eq(fg_queue_article_date((const uint8_t *)a, strlen(a), &t), 0);
	ck_assert_int_eq(t, 1772539200);
	ck_assert_int_eq(fg_queue_article_date((const uint8_t *)b, strlen(b), &t), 0);
	ck_assert_int_eq(t, 1772452800);
	ck_assert_int_eq(fg_queue_article_date((const uint8_t *)c, strlen(c), &t), -ENOENT);
}
END_TEST

/* ------------------------------------------------------------ writer */

START_TEST(write_commit_complete)
{
	struct fg_queue_params p = { .commit_ns = 2000000 };
	struct fg_queue_cursor end;
	struct fg_queue_open_info info;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	char id[32];

	mkdir_tmp();
	q = open_q(&p, &info);
	ck_assert_uint_eq(info.segments, 0);
	ck_assert_uint_eq(info.end.pos, 0);
	s = start_q(q, &d);
	for (unsigned i = 0; i < 100; i++) {
		snprintf(id, sizeof(id), "<a%u@t>", i);
		ck_assert_int_eq(put(s, id, ART, i, i % 2), 0);
	}
	ck_assert_uint_eq(fg_queue_sink_busy(s), 100);
	wait_done(s, &d, 100);
	for (unsigned i = 0; i < 100; i++)
		ck_assert_int_eq(d.status[i], 0);
	ck_assert_uint_eq(fg_queue_sink_busy(s), 0);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, 100);
	ck_assert_uint_eq(end.pos, 100 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)) -
				   10 * (fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)) -
					 fg_queue_rec_size(FG_QUEUE_REC_HEADER, 7, strlen(ART))));
	ck_assert_uint_eq(count_records(), 100);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* The bytes on disk are the article exactly as offered, held or copied. */
static int check_bytes(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	unsigned *n = arg;
	char id[32];

	(void)pos;
	snprintf(id, sizeof(id), "<b%u@t>", *n);
	ck_assert_uint_eq(r->id_len, strlen(id));
	ck_assert(memcmp(r->id, id, r->id_len) == 0);
	ck_assert_uint_eq(r->art_len, strlen(ART));
	ck_assert(memcmp(r->art, ART, r->art_len) == 0);
	ck_assert_uint_eq(r->peer, 3);
	(*n)++;
	return 0;
}

START_TEST(bytes_exact_and_reopen_starts_new_segment)
{
	struct fg_queue_params p = { .commit_ns = 0 };
	struct fg_queue_open_info info;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	static uint8_t buf[1 << 20];
	struct fg_queue_scan sc;
	char id[32], path[256];
	unsigned n = 0;
	ssize_t r;
	int fd;

	mkdir_tmp();
	q = open_q(&p, NULL);
	s = start_q(q, &d);
	for (unsigned i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "<b%u@t>", i);
		ck_assert_int_eq(put(s, id, ART, i, i & 1), 0);
		wait_done(s, &d, i + 1);
	}
	stop_q(q, s);
	fg_queue_segment_path(dir, 0, path, sizeof(path));
	fd = open(path, O_RDONLY);
	r = read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_int_eq(fg_queue_seg_scan(buf, (size_t)r, check_bytes, &n, &sc), 0);
	ck_assert_uint_eq(n, 20);
	ck_assert(!sc.torn);
	/* reopen: segment 1 starts where 0 ended */
	q = open_q(&p, &info);
	ck_assert_uint_eq(info.segments, 1);
	ck_assert_uint_eq(info.records, 20);
	ck_assert_uint_eq(info.torn_cut, 0);
	ck_assert_uint_eq(info.end.recno, 20);
	ck_assert_uint_eq(info.end.pos, sc.end - FG_QUEUE_SEG_HEADER);
	ck_assert_uint_eq(nsegments(), 2);
	fg_queue_close(q);
	rm_tmp();
}
END_TEST

START_TEST(torn_tail_cut_at_open)
{
	struct fg_queue_params p = { .commit_ns = 0 };
	struct fg_queue_open_info info;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	char path[256];
	struct stat st;
	int fd;

	mkdir_tmp();
	q = open_q(&p, NULL);
	s = start_q(q, &d);
	fill(s, &d, "c", 10, ART, false);
	stop_q(q, s);
	/* a crash mid-record: the last record half there, then junk */
	fg_queue_segment_path(dir, 0, path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 50), 0);
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, "garbage!", 8), 8);
	close(fd);
	q = open_q(&p, &info);
	ck_assert_uint_eq(info.torn_cut, 1);
	ck_assert_uint_eq(info.records, 9);
	ck_assert_uint_eq(info.end.recno, 9);
	ck_assert_uint_eq(info.cut_bytes, fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)) - 50 + 8);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, FG_QUEUE_SEG_HEADER + 9 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)));
	fg_queue_close(q);
	/* once cut, nothing left to cut */
	q = open_q(&p, &info);
	ck_assert_uint_eq(info.torn_cut, 0);
	ck_assert_uint_eq(info.records, 9);
	fg_queue_close(q);
	ck_assert_uint_eq(count_records(), 9);
	rm_tmp();
}
END_TEST

START_TEST(bad_and_empty_segments_at_open)
{
	struct fg_queue_params p = { 0 };
	struct fg_queue_open_info info;
	struct fg_queue *q;
	char path[256], bad[300];
	int fd;

	mkdir_tmp();
	fg_queue_segment_path(dir, 3, path, sizeof(path));
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	fg_queue_segment_path(dir, 4, path, sizeof(path));
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_eq(write(fd, "not a segment header at all, really not one at all, no......"
				   "........", 68), 68);
	close(fd);
	q = open_q(&p, &info);
	ck_assert_uint_eq(info.set_aside, 1);
	ck_assert_uint_eq(info.segments, 0);
	snprintf(bad, sizeof(bad), "%s.bad", path);
	ck_assert_int_eq(access(bad, F_OK), 0);
	fg_queue_segment_path(dir, 3, path, sizeof(path));
	ck_assert_int_ne(access(path, F_OK), 0);
	/* the new segment is numbered after everything seen */
	fg_queue_segment_path(dir, 5, path, sizeof(path));
	ck_assert_int_eq(access(path, F_OK), 0);
	fg_queue_close(q);
	rm_tmp();
}
END_TEST

static bool two_durable(struct fg_queue *q)
{
	struct fg_queue_cursor c;

	fg_queue_consumer_durable(q, 1, &c);
	return c.recno == 7;
}

START_TEST(cursors_new_persist_reload_clamp)
{
	struct fg_queue_params p = { .commit_ns = 1000000 };
	struct fg_queue_cursor start, c, end;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	int a, b;

	mkdir_tmp();
	q = open_q(&p, NULL);
	s = start_q(q, &d);
	fill(s, &d, "d", 10, ART, false);
	stop_q(q, s);

	/* a new consumer starts at the oldest record on disk */
	q = open_q(&p, NULL);
	a = fg_queue_consumer(q, "one", &start);
	ck_assert_int_eq(a, 0);
	ck_assert_uint_eq(start.pos, 0);
	ck_assert_uint_eq(start.recno, 0);
	ck_assert_int_eq(fg_queue_consumer(q, "one", &start), -EEXIST);
	ck_assert_int_eq(fg_queue_consumer(q, "bad/name", &start), -EINVAL);
	b = fg_queue_consumer(q, "two", &start);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(fg_queue_start(q), 0);
	ck_assert_int_eq(fg_queue_consumer(q, "late", &start), -EBUSY);
	c.recno = 7;
	c.pos = 7 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART));
	fg_queue_consumer_ack(q, (unsigned)b, &c);
	wait_for(two_durable, q, "cursor durable");
	/* a cursor never goes back */
	c.recno = 3;
	c.pos = 3 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART));
	fg_queue_consumer_ack(q, (unsigned)b, &c);
	fg_queue_stop(q);
	fg_queue_consumer_durable(q, 1, &c);
	ck_assert_uint_eq(c.recno, 7);
	fg_queue_close(q);

	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "two", &start), 0);
	ck_assert_uint_eq(start.recno, 7);
	ck_assert_uint_eq(start.pos, 7 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(ART)));
	ck_assert_int_eq(fg_queue_consumer(q, "one", &start), 1);
	ck_assert_uint_eq(start.recno, 0);
	fg_queue_durable(q, &end);
	fg_queue_close(q);

	/* queue files gone, cursors left: clamped to the new end */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -f %s/queue-*.fgq", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "two", &start), 0);
	ck_assert_uint_eq(start.pos, 0);
	fg_queue_close(q);
	rm_tmp();
}
END_TEST

/* A gate the test opens by hand. It counts the writer's questions: a
 * question is the writer's proof that it looked at a segment it could
 * otherwise delete, so "nothing went" after one means the gate held it. */
struct gate {
	_Atomic int begun;
	_Atomic bool open;
	_Atomic bool again;
	_Atomic unsigned asked;		/* calls of gate_begin and gate_passed */
};

static int gate_begin(void *arg, uint64_t *ticket)
{
	struct gate *g = arg;

	atomic_fetch_add(&g->asked, 1);
	if (atomic_load(&g->again))
		return -EAGAIN;
	*ticket = (uint64_t)atomic_fetch_add(&g->begun, 1);
	return 0;
}

static bool gate_passed(void *arg, uint64_t ticket)
{
	struct gate *g = arg;

	(void)ticket;
	atomic_fetch_add(&g->asked, 1);
	return atomic_load(&g->open);
}

static size_t want_segs;

static bool segs_are(struct fg_queue *q)
{
	(void)q;
	return nsegments() == want_segs;
}

static bool zero_gone(struct fg_queue *q)
{
	struct fg_queue_segref sr;

	return fg_queue_segment_at(q, 0, &sr) == -ENOENT;
}

static struct gate g;

/* The writer asked the gate (and got a ticket): on a loaded machine that
 * can take longer than a fixed sleep. */
static bool gate_asked(struct fg_queue *q)
{
	(void)q;
	return atomic_load(&g.begun) > 0;
}

/* Two more questions to the gate than `asked_mark`: two housekeeping rounds
 * that reached the gate and were held by it. */
static unsigned asked_mark;

static bool asked_twice_more(struct fg_queue *q)
{
	(void)q;
	return atomic_load(&g.asked) >= asked_mark + 2;
}

START_TEST(deletion_needs_every_cursor_and_the_gate)
{
	const struct fg_queue_gate gate = { gate_begin, gate_passed, &g };
	struct fg_queue_params p = { .commit_ns = 0, .segment_bytes = FG_QUEUE_SEGMENT_MIN,
				     .gate = &gate };
	struct fg_queue_cursor start, end, c;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	struct fg_queue_segref sr;
	size_t before;
	char id[32];

	mkdir_tmp();
	atomic_store(&g.open, false);
	atomic_store(&g.again, true);
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "x", &start), 0);
	ck_assert_int_eq(fg_queue_consumer(q, "y", &start), 1);
	s = start_q(q, &d);
	/* ~270 octets a record, 64 KiB segments: a few hundred make several */
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "<e%u@t>", i);
		ck_assert_int_eq(put(s, id, ART, i % 4096, true), 0);
		if (i % 500 == 499)
			wait_done(s, &d, i + 1);
	}
	before = nsegments();
	ck_assert_uint_ge(before, 3);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, 1000);
	/* the segment of a position, its base and end */
	ck_assert_int_eq(fg_queue_segment_at(q, 0, &sr), 0);
	ck_assert_uint_eq(sr.segment, 0);
	ck_assert_uint_eq(sr.base, 0);
	ck_assert_uint_eq(sr.first_recno, 0);
	ck_assert_uint_le(sr.end, FG_QUEUE_SEGMENT_MIN);
	ck_assert_int_eq(fg_queue_segment_at(q, sr.end, &sr), 0);
	ck_assert_uint_eq(sr.segment, 1);
	ck_assert_uint_gt(sr.first_recno, 0);
	ck_assert_int_eq(fg_queue_segment_at(q, end.pos + 8, &sr), 0);
	ck_assert_uint_eq(sr.end, UINT64_MAX);

	/* x done with everything, y only with segment 0: the writer may
	 * delete segment 0 (and asks the gate about it), nothing after it.
	 * Gate shut (no ticket yet): nothing goes, after two questions */
	ck_assert_int_eq(fg_queue_segment_at(q, 0, &sr), 0);
	c = (struct fg_queue_cursor){ .pos = sr.end, .recno = 0 };
	ck_assert_int_eq(fg_queue_segment_at(q, sr.end, &sr), 0);
	c.recno = sr.first_recno;
	fg_queue_consumer_ack(q, 0, &end);
	fg_queue_consumer_ack(q, 1, &c);
	asked_mark = atomic_load(&g.asked);
	wait_for(asked_twice_more, q, "two questions to the gate");
	ck_assert_uint_eq(nsegments(), before);
	/* a ticket, not passed yet: nothing goes, after two more questions */
	atomic_store(&g.again, false);
	wait_for(gate_asked, q, "the gate asked");
	asked_mark = atomic_load(&g.asked);
	wait_for(asked_twice_more, q, "two questions to the gate");
	ck_assert_uint_eq(nsegments(), before);
	/* the gate opens: segment 0 goes; the same round, walking the
	 * segments in order, found y had not taken segment 1 and stopped:
	 * one cursor behind keeps everything from its position on */
	atomic_store(&g.open, true);
	want_segs = before - 1;
	wait_for(segs_are, q, "segment 0 deleted");
	wait_for(zero_gone, q, "segment list updated");
	ck_assert_uint_eq(nsegments(), before - 1);
	/* y done too: every sealed segment goes, the current one stays */
	fg_queue_consumer_ack(q, 1, &end);
	want_segs = 1;
	wait_for(segs_are, q, "segments deleted");
	fg_queue_oldest(q, &c);
	ck_assert_uint_le(c.pos, end.pos);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* Group commit of every record put: well within wait_for's deadline,
 * even under ASan on a loaded machine (a 1 s bound was not). */
static uint64_t want_recno;

static bool all_durable(struct fg_queue *q)
{
	struct fg_queue_cursor c;

	fg_queue_durable(q, &c);
	return c.recno == want_recno;
}

static bool fewer_segments(struct fg_queue *q)
{
	(void)q;
	return nsegments() < want_segs;
}

START_TEST(deletion_waits_for_completions)
{
	struct fg_queue_params p = { .commit_ns = 0, .segment_bytes = FG_QUEUE_SEGMENT_MIN };
	struct fg_queue_sink_params sp = { 0 };
	struct fg_queue_cursor start, end;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	unsigned n, delivered;
	char id[32];

	mkdir_tmp();
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "x", &start), 0);
	s = fg_queue_sink_create(q, &sp);
	ck_assert_int_eq(fg_queue_start(q), 0);
	memset(&d, 0, sizeof(d));
	/* records with their completions taken by the engine until segment 0
	 * is sealed ... */
	n = 0;
	while (nsegments() < 2) {
		for (unsigned k = 0; k < 50; k++, n++) {
			snprintf(id, sizeof(id), "<f%u@t>", n);
			ck_assert_int_eq(put(s, id, ART, n, false), 0);
		}
		wait_done(s, &d, n);
	}
	delivered = n;
	/* ... then records durable, acknowledged downstream, whose completions
	 * the engine has not polled, until segment 1 is sealed too */
	while (nsegments() < 3) {
		for (unsigned k = 0; k < 50; k++, n++) {
			snprintf(id, sizeof(id), "<f%u@t>", n);
			ck_assert_int_eq(put(s, id, ART, n, false), 0);
		}
		want_recno = n;
		wait_for(all_durable, q, "the records durable");
	}
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, n);
	ck_assert_uint_eq(d.done, delivered);
	want_segs = nsegments();
	fg_queue_consumer_ack(q, 0, &end);
	/* segment 0 goes; the same round, walking the segments in order, met
	 * the first one with undelivered completions and stopped there */
	wait_for(fewer_segments, q, "the delivered segment deleted");
	ck_assert_uint_ge(nsegments(), 2);
	wait_done(s, &d, n);
	want_segs = 1;
	wait_for(segs_are, q, "segments deleted");
	stop_q(q, s);
	rm_tmp();
}
END_TEST

static bool refusing(struct fg_queue *q)
{
	return fg_queue_refusing(q, NULL);
}

static bool not_refusing(struct fg_queue *q)
{
	return !fg_queue_refusing(q, NULL);
}

START_TEST(limit_refuses_then_resumes)
{
	struct fg_queue_params p = { .commit_ns = 0, .limit = 1 << 20 };
	struct fg_queue_cursor start, end;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	static char big[64 << 10];
	const char *why;
	void *h;
	char id[32];
	unsigned i;

	memset(big, 'x', sizeof(big) - 1);
	mkdir_tmp();
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "x", &start), 0);
	s = start_q(q, &d);
	for (i = 0; !fg_queue_refusing(q, NULL) && i < 100; i++) {
		snprintf(id, sizeof(id), "<g%u@t>", i);
		ck_assert_int_eq(put(s, id, big, i, true), 0);
		wait_done(s, &d, i + 1);
		usleep(2000);
	}
	wait_for(refusing, q, "refusal");
	ck_assert(fg_queue_refusing(q, &why));
	ck_assert_str_eq(why, "queue-limit reached");
	ck_assert_uint_ge(fg_queue_bytes(q), 1 << 20);
	ck_assert(fg_queue_sink_ops.full(s));
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<h@t>", 5, 0, &h), -EAGAIN);
	/* the downstream takes everything: segments go, articles come in again */
	fg_queue_durable(q, &end);
	fg_queue_consumer_ack(q, 0, &end);
	wait_for(not_refusing, q, "resume");
	ck_assert(!fg_queue_sink_ops.full(s));
	ck_assert_uint_lt(fg_queue_bytes(q), (1 << 20) / 10 * 9);
	ck_assert_int_eq(put(s, "<h@t>", ART, 4000, false), 0);
	wait_done(s, &d, i + 1);
	ck_assert_int_eq(d.status[4000], 0);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* ------------------------------------------------------------ backlog */

/* Two consumers: "slow" (0) never acknowledges, "fed" (1) takes all. */
static struct fg_queue *two_consumers(struct fg_queue_params *p, const struct fg_queue_backlog *b)
{
	struct fg_queue_cursor start;
	struct fg_queue *q = open_q(p, NULL);

	ck_assert_int_eq(fg_queue_consumer(q, "slow", &start), 0);
	ck_assert_int_eq(fg_queue_consumer(q, "fed", &start), 1);
	ck_assert_int_eq(fg_queue_consumer_backlog(q, 0, b), 0);
	return q;
}

static bool fed_durable_at_end(struct fg_queue *q);

/* One article of `len` octets, routed to `route` (NULL: every consumer);
 * "fed" acknowledges everything once it is durable. */
static void put_fed(struct fg_queue *q, struct fg_queue_sink *s, struct drv *d, unsigned i,
		    const char *art, const struct fg_feeds_set *route)
{
	struct fg_iov seg = { (const uint8_t *)art, (uint32_t)strlen(art), NULL };
	struct fg_queue_cursor end;
	char id[32];
	void *h;

	snprintf(id, sizeof(id), "<k%u@t>", i);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, id, strlen(id), 0, &h), 0);
	ck_assert_int_eq(fg_queue_sink_ops.append(s, h, &seg, false), 0);
	if (route)
		fg_queue_sink_ops.route(s, h, route);
	ck_assert_int_eq(fg_queue_sink_ops.commit(s, h, i), 0);
	wait_done(s, d, i + 1);
	fg_queue_durable(q, &end);
	fg_queue_consumer_ack(q, 1, &end);
	wait_for(fed_durable_at_end, q, "the fed consumer's cursor");
}

/* Articles of `art` from *i on (every consumer's), until cond() holds or
 * `max` went; with `never_refused`, the queue must take each one. */
static void feed_until(struct fg_queue *q, struct fg_queue_sink *s, struct drv *d, unsigned *i,
		       const char *art, bool (*cond)(struct fg_queue *), unsigned max,
		       bool never_refused)
{
	for (; !cond(q) && *i < max; (*i)++) {
		put_fed(q, s, d, *i, art, NULL);
		ck_assert_msg(!never_refused || !fg_queue_refusing(q, NULL),
			      "refusing at %llu octets", (unsigned long long)fg_queue_bytes(q));
	}
	wait_for(cond, q, "the condition fed for");
}

static bool slow_parked(struct fg_queue *q)
{
	struct fg_queue_consumer_state st;

	fg_queue_consumer_state(q, 0, &st);
	return st.parked;
}

static bool slow_unparked(struct fg_queue *q)
{
	return !slow_parked(q);
}

static bool fed_durable_at_end(struct fg_queue *q)
{
	struct fg_queue_cursor end, c;

	fg_queue_durable(q, &end);
	fg_queue_consumer_durable(q, 1, &c);
	return c.pos == end.pos;
}

static bool past_one_and_a_half_limits(struct fg_queue *q)
{
	return fg_queue_bytes(q) >= (3u << 20) / 2;
}

static bool under_the_limit(struct fg_queue *q)
{
	return fg_queue_bytes(q) <= 1u << 20;
}

static bool refusing_for_backlog(struct fg_queue *q)
{
	const char *why = "";

	return fg_queue_refusing(q, &why) && strstr(why, "parked downstream");
}

/* A parked consumer's backlog is kept for it and does not count against
 * queue-limit: the one that is fed keeps being fed, nothing is refused,
 * until its backlog reaches its cap (defer: then the peers are deferred).
 * When it catches up it is unparked and its segments go. */
START_TEST(parked_consumer_spares_the_peers)
{
	struct fg_queue_params p = { .commit_ns = 0, .limit = 1 << 20 };
	const struct fg_queue_backlog b = { .bytes = 256 << 10, .disk = 2 << 20 };
	struct fg_queue_consumer_state st;
	struct fg_queue_cursor end;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	static char art[16 << 10];
	unsigned i;

	memset(art, 'x', sizeof(art) - 1);
	mkdir_tmp();
	q = two_consumers(&p, &b);
	s = start_q(q, &d);
	i = 0;
	feed_until(q, s, &d, &i, art, slow_parked, 100, false);
	fg_queue_consumer_state(q, 0, &st);
	ck_assert_uint_gt(st.lag_bytes, 256 << 10);
	ck_assert_uint_eq(st.parks, 1);
	/* past queue-limit on disk: no refusal, the fed one goes on */
	feed_until(q, s, &d, &i, art, past_one_and_a_half_limits, 400, true);
	/* its backlog at its cap: deferred, nothing lost */
	feed_until(q, s, &d, &i, art, refusing_for_backlog, 400, false);
	fg_queue_consumer_state(q, 0, &st);
	ck_assert(st.parked && st.full);
	ck_assert_uint_gt(st.backlog_bytes, 2 << 20);
	ck_assert_uint_eq(st.drop_to.pos, 0);
	/* it returns and takes everything: unparked, not refusing, its
	 * segments deleted */
	fg_queue_durable(q, &end);
	fg_queue_consumer_ack(q, 0, &end);
	wait_for(slow_unparked, q, "the slow consumer to be unparked");
	wait_for(not_refusing, q, "the refusal to end");
	ck_assert_uint_lt(fg_queue_bytes(q), 1 << 20);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* With one consumer, or every one parked, the shared limits defer the
 * peers as they always did. */
START_TEST(parking_alone_changes_nothing)
{
	struct fg_queue_params p = { .commit_ns = 0, .limit = 1 << 20 };
	const struct fg_queue_backlog b = { .bytes = 64 << 10, .disk = 8 << 20 };
	struct fg_queue_consumer_state st;
	struct fg_queue_cursor start;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	static char art[16 << 10];
	const char *why;
	char id[32];
	unsigned i;

	memset(art, 'y', sizeof(art) - 1);
	mkdir_tmp();
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "only", &start), 0);
	ck_assert_int_eq(fg_queue_consumer_backlog(q, 0, &b), 0);
	s = start_q(q, &d);
	for (i = 0; !fg_queue_refusing(q, NULL) && i < 200; i++) {
		snprintf(id, sizeof(id), "<o%u@t>", i);
		ck_assert_int_eq(put(s, id, art, i, false), 0);
		wait_done(s, &d, i + 1);
	}
	wait_for(refusing, q, "refusal");
	ck_assert(fg_queue_refusing(q, &why));
	ck_assert_str_eq(why, "queue-limit reached");
	fg_queue_consumer_state(q, 0, &st);
	ck_assert(st.parked);		/* parked, and it changes nothing */
	ck_assert_uint_eq(st.backlog_bytes, 0);
	ck_assert_int_eq(fg_queue_consumer_backlog(q, 0, &b), -EBUSY);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

static bool slow_asked_to_drop(struct fg_queue *q)
{
	struct fg_queue_cursor to;

	fg_queue_consumer_drop_to(q, 0, &to);
	return to.pos > 0;
}

/* backlog-full drop: past its cap, a parked consumer is asked to give up
 * its oldest segments (drop_to: a segment's start, the end of the last one
 * given up; the relay logs what it never delivered and acknowledges it);
 * what is kept for it is then under its cap, and nothing is refused. */
START_TEST(parked_consumer_drops_its_oldest)
{
	struct fg_queue_params p = { .commit_ns = 0, .limit = 1 << 20 };
	const struct fg_queue_backlog b = { .bytes = 128 << 10, .disk = 512 << 10, .drop = true,
					    .ident = 0x51 };
	struct fg_queue_consumer_state st;
	struct fg_queue_cursor to, first;
	struct fg_queue_segref sr;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	static char art[16 << 10];
	unsigned i;

	memset(art, 'z', sizeof(art) - 1);
	mkdir_tmp();
	q = two_consumers(&p, &b);
	s = start_q(q, &d);
	i = 0;
	feed_until(q, s, &d, &i, art, slow_asked_to_drop, 300, true);
	fg_queue_consumer_state(q, 0, &st);
	fg_queue_consumer_drop_to(q, 0, &to);
	ck_assert(st.parked && !st.full);
	ck_assert_uint_le(st.backlog_bytes, 512 << 10);
	ck_assert_int_eq(fg_queue_segment_at(q, to.pos, &sr), 0);
	ck_assert_uint_eq(sr.base, to.pos);
	ck_assert_uint_eq(sr.first_recno, to.recno);
	/* not applied yet: nothing else is asked for while the backlog stays
	 * under its cap; once acknowledged, the segments before it go */
	first = to;
	put_fed(q, s, &d, i++, art, NULL);
	fg_queue_consumer_drop_to(q, 0, &to);
	ck_assert_uint_eq(to.pos, first.pos);
	fg_queue_consumer_ack(q, 0, &to);
	feed_until(q, s, &d, &i, art, under_the_limit, 300, true);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* Fault injection: the next `n` operations at `where` fail with `err`. */
struct faults {
	_Atomic int n[3];
	int err[3];
};

static int faulty(void *arg, enum fg_queue_fault where)
{
	struct faults *f = arg;

	if (atomic_load(&f->n[where]) > 0) {
		atomic_fetch_sub(&f->n[where], 1);
		return f->err[where];
	}
	return 0;
}

START_TEST(disk_full_fails_refuses_and_recovers)
{
	static struct faults f;
	struct fg_queue_params p = { .commit_ns = 0, .fault = faulty, .fault_arg = &f };
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	struct fg_queue_cursor end;
	const char *why;

	mkdir_tmp();
	q = open_q(&p, NULL);
	s = start_q(q, &d);
	ck_assert_int_eq(put(s, "<ok1@t>", ART, 0, false), 0);
	wait_done(s, &d, 1);
	f.err[FG_QUEUE_FAULT_WRITE] = -ENOSPC;
	f.err[FG_QUEUE_FAULT_PROBE] = -ENOSPC;
	atomic_store(&f.n[FG_QUEUE_FAULT_PROBE], 1000000);
	atomic_store(&f.n[FG_QUEUE_FAULT_WRITE], 1);
	ck_assert_int_eq(put(s, "<full@t>", ART, 1, true), 0);
	wait_done(s, &d, 2);
	ck_assert_int_eq(d.status[1], -ENOSPC);
	ck_assert(fg_queue_refusing(q, &why));
	ck_assert_str_eq(why, "disk full");
	ck_assert(fg_queue_sink_ops.full(s));
	/* room again: the probe succeeds, articles come in */
	atomic_store(&f.n[FG_QUEUE_FAULT_PROBE], 0);
	wait_for(not_refusing, q, "probe");
	ck_assert_int_eq(put(s, "<ok2@t>", ART, 2, false), 0);
	wait_done(s, &d, 3);
	ck_assert_int_eq(d.status[2], 0);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, 2);
	stop_q(q, s);
	/* the failed record left nothing behind */
	ck_assert_uint_eq(count_records(), 2);
	rm_tmp();
}
END_TEST

START_TEST(failed_sync_fails_its_articles_only)
{
	static struct faults f;
	struct fg_queue_params p = { .commit_ns = 0, .fault = faulty, .fault_arg = &f };
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	struct fg_queue_cursor end, start;

	mkdir_tmp();
	q = open_q(&p, NULL);
	/* a consumer that takes nothing keeps every segment */
	ck_assert_int_eq(fg_queue_consumer(q, "x", &start), 0);
	s = start_q(q, &d);
	ck_assert_int_eq(put(s, "<s1@t>", ART, 0, false), 0);
	wait_done(s, &d, 1);
	f.err[FG_QUEUE_FAULT_SYNC] = -EIO;
	atomic_store(&f.n[FG_QUEUE_FAULT_SYNC], 1);
	ck_assert_int_eq(put(s, "<s2@t>", ART, 1, false), 0);
	wait_done(s, &d, 2);
	ck_assert_int_eq(d.status[1], -EIO);
	ck_assert_int_eq(put(s, "<s3@t>", ART, 2, false), 0);
	wait_done(s, &d, 3);
	ck_assert_int_eq(d.status[2], 0);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, 2);
	stop_q(q, s);
	/* s1 in segment 0, s2 cut away, s3 in a new segment */
	ck_assert_uint_eq(nsegments(), 2);
	ck_assert_uint_eq(count_records(), 2);
	rm_tmp();
}
END_TEST

START_TEST(sink_limits_and_bad_input)
{
	struct fg_queue_params p = { .commit_ns = 0 };
	struct fg_queue_sink_params sp = { .max_articles = 2 };
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	void *h1, *h2, *h3;
	char longid[300];

	mkdir_tmp();
	q = open_q(&p, NULL);
	s = fg_queue_sink_create(q, &sp);
	memset(longid, 'x', sizeof(longid));
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, longid, 251, 0, &h1), -EINVAL);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<>", 2, 0, &h1), -EINVAL);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<a@t>", 5, 0, &h1), 0);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<b@t>", 5, 0, &h2), 0);
	ck_assert(fg_queue_sink_ops.full(s));
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<c@t>", 5, 0, &h3), -EAGAIN);
	fg_queue_sink_ops.discard(s, h2);
	ck_assert(!fg_queue_sink_ops.full(s));
	ck_assert_uint_eq(fg_queue_sink_busy(s), 1);
	ck_assert_int_eq(fg_queue_start(q), 0);
	memset(&d, 0, sizeof(d));
	/* an empty article is a record too */
	ck_assert_int_eq(fg_queue_sink_ops.commit(s, h1, 9), 0);
	wait_done(s, &d, 1);
	ck_assert_int_eq(d.status[9], 0);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* The handle's held octets: counted at append (held and copied pieces
 * alike), given back at discard and at done(); full() at max_held, open
 * again below it; the cap is crossed once per rise (queue_held_cap). */
START_TEST(sink_held_cap)
{
	struct fg_queue_params p = { .commit_ns = 0 };
	static struct fg_stats st;
	struct fg_queue_sink_params sp = { .max_held = 3000, .stats = &st };
	static uint8_t body[2000];
	struct fg_iov seg = { body, 1000, NULL };
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	void *h1, *h2;

	memset(&st, 0, sizeof(st));
	memset(body, 'b', sizeof(body));
	mkdir_tmp();
	q = open_q(&p, NULL);
	s = fg_queue_sink_create(q, &sp);
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<a@t>", 5, 0, &h1), 0);
	ck_assert_int_eq(fg_queue_sink_ops.append(s, h1, &seg, true), FG_SINK_HOLD);
	ck_assert_int_eq(fg_queue_sink_ops.append(s, h1, &seg, false), 0);
	ck_assert_uint_eq(fg_queue_sink_held(s), 2000);
	ck_assert(!fg_queue_sink_ops.full(s));
	ck_assert_int_eq(fg_queue_sink_ops.begin(s, "<b@t>", 5, 0, &h2), 0);
	/* an article under way goes on past the cap: the stop is at the next */
	seg.len = 1500;
	ck_assert_int_eq(fg_queue_sink_ops.append(s, h2, &seg, true), FG_SINK_HOLD);
	ck_assert_uint_eq(fg_queue_sink_held(s), 3500);
	ck_assert(fg_queue_sink_ops.full(s));
	ck_assert_uint_eq(st.ctr[FG_CTR_QUEUE_HELD_CAP], 1);
	ck_assert_uint_eq(st.ctr[FG_CTR_QUEUE_HELD_IN], 3500);
	fg_queue_sink_ops.discard(s, h2);
	ck_assert_uint_eq(fg_queue_sink_held(s), 2000);
	ck_assert_uint_eq(st.ctr[FG_CTR_QUEUE_HELD_OUT], 1500);
	ck_assert(!fg_queue_sink_ops.full(s));
	/* the committed one gives its octets back with its done() */
	ck_assert_int_eq(fg_queue_start(q), 0);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(fg_queue_sink_ops.commit(s, h1, 4), 0);
	ck_assert_uint_eq(fg_queue_sink_held(s), 2000);
	wait_done(s, &d, 1);
	ck_assert_int_eq(d.status[4], 0);
	ck_assert_uint_eq(fg_queue_sink_held(s), 0);
	ck_assert_uint_eq(st.ctr[FG_CTR_QUEUE_HELD_OUT], 3500);
	stop_q(q, s);
	rm_tmp();
}
END_TEST

/* ------------------------------------------------------------ readers */

/* Write segment `num` of records "<PREFIXi@x>", i < n, arrived at `arrival`. */
static void write_segment(uint64_t num, uint64_t recno, const char *prefix, unsigned n,
			  fg_time_t arrival)
{
	static uint8_t buf[1 << 16];
	struct fg_queue_seg_info si = { num, recno * 4096, recno, arrival, FG_QUEUE_VERSION };
	size_t off = FG_QUEUE_SEG_HEADER;
	char id[32], path[256];
	FILE *f;

	fg_queue_seg_header_encode(buf, &si);
	for (unsigned i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "<%s%u@x>", prefix, i);
		off += make_record(buf + off, recno + i, arrival, id, ART);
	}
	ck_assert_int_eq(fg_queue_segment_path(dir, num, path, sizeof(path)), 0);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, off, f), off);
	fclose(f);
}

struct settle_log {
	unsigned reserved, unreserved, settled, room;
	char last[32];
};

static int log_reserve(void *arg)
{
	struct settle_log *l = arg;

	if (l->reserved - l->unreserved >= l->room)
		return -EAGAIN;
	l->reserved++;
	return 0;
}

static void log_unreserve(void *arg)
{
	((struct settle_log *)arg)->unreserved++;
}

static void log_settled(void *arg, const struct fg_queue_rec *r, const struct fg_history_key *k,
			fg_time_t date)
{
	struct settle_log *l = arg;

	(void)k;
	(void)date;
	l->settled++;
	snprintf(l->last, sizeof(l->last), "%.*s", (int)r->id_len, r->id);
}

static void accepting(struct fg_history *h, const char *id, unsigned owner, fg_time_t now)
{
	struct fg_history_key k;
	struct fg_history_ref ref;

	fg_history_hash(h, id, strlen(id), &k);
	ck_assert_int_eq(fg_history_begin_accept(h, &k, now, fg_history_token(1, owner), &ref, NULL), 0);
}

static enum fg_history_state state_of(struct fg_history *h, const char *id, fg_time_t now)
{
	struct fg_history_key k;

	fg_history_hash(h, id, strlen(id), &k);
	return fg_history_lookup(h, &k, now, NULL);
}

/* A dead writer's transfers: the queue decides, newest segments first,
 * only that owner's, nothing older than its claim, hooks around each. */
START_TEST(settle_dead_writers_transfers)
{
	struct fg_history_params hp = { .capacity = 1000, .alarm_load_pct = 90 };
	static uint8_t mem[1 << 20] __attribute__((aligned(64)));
	struct settle_log l = { .room = 100 };
	const struct fg_queue_settle_hooks hooks = { log_reserve, log_unreserve, log_settled, &l };
	fg_time_t now = time(NULL);
	struct fg_history *h;

	hp.now = now;
	mkdir_tmp();
	h = fg_history_create(mem, sizeof(mem), &hp);
	ck_assert_ptr_nonnull(h);
	/* no queue at all: nothing to settle, not an error */
	accepting(h, "<s1@x>", 3, now);
	ck_assert_int_eq(fg_queue_settle(dir, h, 3, now, now, &hooks), 0);
	/* an old segment (before the owner's claim) and a new one */
	write_segment(1, 0, "r", 5, now - 1000);
	write_segment(2, 5, "s", 5, now);
	accepting(h, "<s3@x>", 3, now);
	accepting(h, "<s2@x>", 4, now);		/* another owner's */
	accepting(h, "<r1@x>", 3, now);		/* older than the claim below */
	accepting(h, "<gone@x>", 3, now);	/* never reached the queue */
	ck_assert_int_eq(fg_queue_settle(dir, h, 3, now, now, &hooks), 2);
	ck_assert_uint_eq(l.settled, 2);
	ck_assert_uint_eq(l.reserved - l.unreserved, 2);	/* one reservation each */
	ck_assert_int_eq(state_of(h, "<s1@x>", now), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(state_of(h, "<s3@x>", now), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(state_of(h, "<s2@x>", now), FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(state_of(h, "<r1@x>", now), FG_HISTORY_ACCEPTING);
	ck_assert_int_eq(state_of(h, "<gone@x>", now), FG_HISTORY_ACCEPTING);
	/* the hooks' room runs out: -EAGAIN, and what was settled stays */
	l = (struct settle_log){ .room = 0 };
	ck_assert_int_eq(fg_queue_settle(dir, h, 4, INT64_MIN, now, &hooks), -EAGAIN);
	ck_assert_int_eq(state_of(h, "<s2@x>", now), FG_HISTORY_ACCEPTING);
	l.room = 1;
	ck_assert_int_eq(fg_queue_settle(dir, h, 4, INT64_MIN, now, &hooks), 1);
	ck_assert_str_eq(l.last, "<s2@x>");
	/* anyone's (a process that knows no writer is alive), no hooks */
	ck_assert_int_eq(fg_queue_settle(dir, h, FG_HISTORY_OWNER_ANY, INT64_MIN, now, NULL), 1);
	ck_assert_int_eq(state_of(h, "<r1@x>", now), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(state_of(h, "<gone@x>", now), FG_HISTORY_ACCEPTING);
	/* settled entries are no one's transfers any more: the rest is dropped */
	ck_assert_uint_eq(fg_history_drop_owned(h, 3, NULL), 1);
	ck_assert_int_eq(state_of(h, "<gone@x>", now), FG_HISTORY_ABSENT);
	fg_history_detach(h);
	rm_tmp();
}
END_TEST

START_TEST(replay_and_inspect)
{
	struct fg_queue_params p = { .commit_ns = 0 };
	struct fg_queue_cursor start, c;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	struct fg_config_errors errs;
	struct fg_config *cfg;
	struct fg_queue_status st;
	struct fg_history_params hp = { .capacity = 1000, .alarm_load_pct = 90 };
	static uint8_t mem[1 << 20] __attribute__((aligned(64)));
	struct fg_history *h;
	struct fg_history_key k;
	struct fg_history_entry e;
	const char *conf = "[downstream a]\naddress 127.0.0.1:1\n[downstream b]\n"
			   "address 127.0.0.1:2\n[downstream c]\naddress 127.0.0.1:3\n";
	char date[40];
	static char art[512];
	fg_time_t now = time(NULL);

	/* an article dated an hour ago: within what history stores exactly */
	ck_assert_int_eq(fg_date_format(now - 3600, date, sizeof(date)), FG_DATE_FORMAT_LEN);
	snprintf(art, sizeof(art), "From: a@b\r\nDate: %s\r\n\r\nbody\r\n", date);
	hp.now = now;
	mkdir_tmp();
	cfg = fg_config_load_text("t", conf, strlen(conf), &errs);
	ck_assert_ptr_nonnull(cfg);
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "a", &start), 0);
	ck_assert_int_eq(fg_queue_consumer(q, "b", &start), 1);
	s = start_q(q, &d);
	fill(s, &d, "r", 5, art, false);
	c.recno = 2;
	c.pos = 2 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(art));
	fg_queue_consumer_ack(q, 1, &c);
	stop_q(q, s);

	ck_assert_int_eq(fg_queue_inspect(dir, cfg, now + 10, &st), 0);
	ck_assert(st.present);
	ck_assert_uint_eq(st.end.recno, 5);
	ck_assert_uint_eq(st.begin.pos, 0);
	ck_assert_uint_eq(st.n_consumers, 3);
	ck_assert(st.consumer[0].found);
	ck_assert_uint_eq(st.consumer[0].lag_records, 5);
	ck_assert_uint_eq(st.consumer[1].lag_records, 3);
	ck_assert_uint_eq(st.consumer[1].lag_bytes, 3 * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 6, strlen(art)));
	ck_assert_int_ge(st.consumer[0].lag_seconds, 9);
	ck_assert(!st.consumer[2].found);
	ck_assert_int_ge(st.oldest_seconds, 9);
	ck_assert_uint_eq(st.segments, 1);

	/* restore: every ID comes back accepted, with the article's own date */
	h = fg_history_create(mem, sizeof(mem), &hp);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(fg_queue_replay(dir, h, 0, now), 5);
	ck_assert_int_eq(fg_queue_replay(dir, h, 0, now), 0);
	fg_history_hash(h, "<r3@t>", 6, &k);
	ck_assert_int_eq(fg_history_lookup(h, &k, now, &e), FG_HISTORY_ACCEPTED);
	ck_assert_int_ge(e.article_date, now - 3600);
	ck_assert_int_lt(e.article_date, now - 3600 + FG_HISTORY_DATE_UNIT);
	ck_assert_int_ge(e.first_seen, now);
	fg_history_detach(h);
	/* records that arrived well before the snapshot are not replayed */
	h = fg_history_create(mem, sizeof(mem), &hp);
	ck_assert_int_eq(fg_queue_replay(dir, h, now + FG_QUEUE_REPLAY_SLACK + 60, now), 0);
	ck_assert_int_eq(fg_queue_replay(dir, h, now + 1, now), 5);
	fg_history_detach(h);
	fg_config_free(cfg);
	rm_tmp();
}
END_TEST

START_TEST(segment_at_gaps_and_the_oldest)
{
	struct fg_queue_params p = { .commit_ns = 0, .segment_bytes = FG_QUEUE_SEGMENT_MIN };
	struct fg_queue_cursor start;
	struct fg_queue_segref a, b, sr;
	struct fg_queue *q;
	struct fg_queue_sink *s;
	static struct drv d;
	char path[256];

	mkdir_tmp();
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_consumer(q, "x", &start), 0);
	s = start_q(q, &d);
	fill(s, &d, "s", 800, ART, false);
	ck_assert_int_eq(fg_queue_segment_at(q, 0, &a), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, a.end, &b), 0);
	stop_q(q, s);
	/* segment 1 lost (not a crash: an operator, a disk) */
	fg_queue_segment_path(dir, b.segment, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	q = open_q(&p, NULL);
	/* inside the gap: the segment after it, whose base says so */
	ck_assert_int_eq(fg_queue_segment_at(q, b.base + 8, &sr), 0);
	ck_assert_uint_eq(sr.segment, b.segment + 1);
	ck_assert_uint_eq(sr.base, b.end);
	ck_assert_uint_gt(sr.first_recno, b.first_recno);
	ck_assert_int_eq(fg_queue_segment_at(q, 8, &sr), 0);
	ck_assert_uint_eq(sr.segment, 0);
	fg_queue_close(q);
	/* segment 0 gone too: a position before the oldest is nowhere */
	fg_queue_segment_path(dir, 0, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	q = open_q(&p, NULL);
	ck_assert_int_eq(fg_queue_segment_at(q, 8, &sr), -ENOENT);
	ck_assert_int_eq(fg_queue_segment_at(q, b.base + 8, &sr), -ENOENT);
	fg_queue_close(q);
	rm_tmp();
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *f = tcase_create("format"), *w = tcase_create("writer"), *r = tcase_create("read");

	tcase_add_test(f, seg_header_roundtrip_and_every_byte);
	tcase_add_test(f, record_check_every_byte);
	tcase_add_test(f, record_id_shape);
	tcase_add_test(f, record_route_every_byte);
	tcase_add_test(f, scan_positions_and_torn_tails);
	tcase_add_test(f, slots_pick_newest_sound);
	tcase_add_test(f, names);
	tcase_add_test(f, article_date_prefers_injection_date);
	tcase_set_timeout(w, 300);
	tcase_add_test(w, write_commit_complete);
	tcase_add_test(w, bytes_exact_and_reopen_starts_new_segment);
	tcase_add_test(w, torn_tail_cut_at_open);
	tcase_add_test(w, bad_and_empty_segments_at_open);
	tcase_add_test(w, cursors_new_persist_reload_clamp);
	tcase_add_test(w, deletion_needs_every_cursor_and_the_gate);
	tcase_add_test(w, deletion_waits_for_completions);
	tcase_add_test(w, limit_refuses_then_resumes);
	tcase_add_test(w, parked_consumer_spares_the_peers);
	tcase_add_test(w, parking_alone_changes_nothing);
	tcase_add_test(w, parked_consumer_drops_its_oldest);
	tcase_add_test(w, disk_full_fails_refuses_and_recovers);
	tcase_add_test(w, failed_sync_fails_its_articles_only);
	tcase_add_test(w, sink_limits_and_bad_input);
	tcase_add_test(w, sink_held_cap);
	tcase_add_test(w, segment_at_gaps_and_the_oldest);
	tcase_add_test(r, replay_and_inspect);
	tcase_add_test(r, settle_dead_writers_transfers);
	suite_add_tcase(s, f);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	return s;
}

FG_TEST_MAIN(queue_suite)
