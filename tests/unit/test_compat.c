/* SPDX-License-Identifier: MIT */
/*
 * test_compat.c — every golden file of tests/data/compat (written by the
 * builds before this one, tools/compat/golden.h) is read by this build,
 * field by field and through the real readers: floodctld's restore, the
 * queue's recovery and cursors, the warm-up file, the region header. A
 * file one version newer than this build reads — a golden file with its
 * version bumped and its checksum made good again, by this test — is
 * refused, with a message naming the file, the version found and the
 * versions understood. And this build still writes its own versions'
 * golden files octet for octet: a format that changed without a version
 * bump fails here (docs/compat.md).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tools/compat/golden.h"
#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/qwriter.h"
#include "floodgate/region.h"
#include "floodgate/warmup.h"
#include "floodgate/snapshot.h"
#include "ctl_fixture.h"

#define MAX_FILES 16

static char golden_dir[PATH_MAX];
static char logbuf[16384];

static void capture(enum fg_log_level level, const char *component, const char *msg, void *arg)
{
	size_t l = strlen(logbuf);

	(void)level;
	(void)arg;
	snprintf(logbuf + l, sizeof(logbuf) - l, "%s: %s\n", component, msg);
}

struct blob {
	uint8_t *p;
	size_t len;
};

static struct blob slurp(const char *path)
{
	struct blob b = { NULL, 0 };
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_msg(fd >= 0 && fstat(fd, &st) == 0, "%s: %s", path, strerror(errno));
	b.len = (size_t)st.st_size;
	b.p = malloc(b.len ? b.len : 1);
	ck_assert_ptr_nonnull(b.p);
	ck_assert_int_eq(fg_datadir_pread_all(fd, b.p, b.len, 0), 0);
	close(fd);
	return b;
}

static void put(const char *dir, const char *name, const void *p, size_t len)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fg_datadir_write_all(fd, p, len), 0);
	close(fd);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The golden files of one format, sorted by name (so v0 before v1). */
static unsigned golden_files(const char *format, char *names[MAX_FILES])
{
	char dir[PATH_MAX + 32];
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", golden_dir, format);
	d = opendir(dir);
	ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL && n < MAX_FILES) {
		if (e->d_name[0] == 'v') {
			names[n] = malloc(2 * PATH_MAX);
			ck_assert_ptr_nonnull(names[n]);
			snprintf(names[n], 2 * PATH_MAX, "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(d);
	ck_assert_msg(n > 0, "no golden files in %s", dir);
	qsort(names, n, sizeof(*names), name_cmp);
	return n;
}

static void free_names(char *names[], unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
}

/* The version in a golden file's name: "v<N>..." */
static unsigned name_version(const char *path)
{
	const char *b = strrchr(path, '/');

	return (unsigned)strtoul(b + 2, NULL, 10);
}

static struct blob golden(const char *format, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/%s", golden_dir, format, name);
	return slurp(path);
}

/* A table with the golden seed: the keys the golden IDs hash to. */
static struct fg_history *seed_table(void **mem)
{
	struct fg_history_params hp;
	size_t len = fg_history_region_size(GOLDEN_CAPACITY, 0);
	struct fg_history *h;

	memset(&hp, 0, sizeof(hp));
	hp.capacity = GOLDEN_CAPACITY;
	hp.hash = FG_HISTORY_HASH_AES;
	hp.full_policy = FG_FULL_DEFER;
	hp.alarm_load_pct = 90;
	hp.now = GOLDEN_TIME;
	fg_golden_seed(hp.seed);
	ck_assert_int_eq(posix_memalign(mem, 64, len), 0);
	h = fg_history_create(*mem, len, &hp);
	ck_assert_ptr_nonnull(h);
	return h;
}

static void golden_key(const struct fg_history *h, unsigned n, struct fg_history_key *k)
{
	char id[64];

	fg_history_hash(h, id, fg_golden_id(n, id, sizeof(id)), k);
}

/* ------------------------------------------------------------ each file */

START_TEST(golden_snapshots_read)
{
	char *names[MAX_FILES];
	unsigned n = golden_files("snapshot", names);

	for (unsigned i = 0; i < n; i++) {
		struct fg_snap_file f;
		enum fg_history_error herr;
		char why[256];
		uint8_t seed[16];

		ck_assert_msg(fg_snapshot_open(names[i], &f, why, sizeof(why)) == 0, "%s: %s",
			      names[i], why);
		fg_golden_seed(seed);
		ck_assert_int_eq(f.info.seq, 1);
		ck_assert_int_eq(f.info.created, GOLDEN_TIME);
		ck_assert_int_eq(f.info.covers.segment, 1);
		ck_assert_int_eq(f.info.covers.offset, FG_JSEG_HEADER);
		ck_assert_int_eq(f.info.entries, GOLDEN_IDS / 2);
		ck_assert_mem_eq(f.info.seed, seed, 16);
		ck_assert_msg(fg_history_image_check(f.img, f.img_len, &herr) == 0, "%s: %s", names[i],
			      fg_history_error_str(herr));
		ck_assert_uint_ge(fg_history_layout_of(f.img, f.img_len), 1);
		fg_snapshot_close(&f);
	}
	free_names(names, n);
}
END_TEST

struct jcheck {
	const struct fg_history *h;
	unsigned n;
};

static int check_jrec(void *arg, const struct fg_jrec *r)
{
	struct jcheck *c = arg;
	struct fg_history_key k;

	golden_key(c->h, c->n, &k);
	ck_assert_msg(r->key_lo == k.lo && r->key_hi == k.hi, "record %u: the key of golden ID %u",
		      c->n, c->n);
	ck_assert_int_eq(r->state, c->n % 2 ? FG_HISTORY_REJECTED : FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(r->first_seen, fg_golden_first_seen(c->n));
	ck_assert_int_eq(r->first_seen + r->date_off, fg_golden_date(c->n));
	ck_assert_int_eq(r->reason, c->n % 2 ? FG_REASON_TOO_OLD : FG_REASON_NONE);
	c->n++;
	return 0;
}

START_TEST(golden_journals_read)
{
	char *names[MAX_FILES];
	unsigned n = golden_files("journal", names);
	void *mem;
	struct fg_history *h = seed_table(&mem);

	for (unsigned i = 0; i < n; i++) {
		struct blob b = slurp(names[i]);
		struct jcheck c = { h, 0 };
		struct fg_jseg_scan sc;

		ck_assert_int_eq(fg_jseg_scan(b.p, b.len, 0, check_jrec, &c, &sc), 0);
		ck_assert_msg(!sc.torn, "%s: %s", names[i], sc.why);
		ck_assert_int_eq(sc.records, GOLDEN_IDS);
		ck_assert_int_eq(sc.info.segment, 1);
		ck_assert_int_eq(sc.info.created, GOLDEN_TIME);
		free(b.p);
	}
	fg_history_detach(h);
	free(mem);
	free_names(names, n);
}
END_TEST

struct qcheck {
	unsigned n;
	unsigned version;		/* of the segment (its file name) */
};

static int check_qrec(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	struct qcheck *c = arg;
	char id[64], art[512];
	size_t il = fg_golden_id(c->n, id, sizeof(id)), al = fg_golden_article(c->n, art, sizeof(art));
	struct fg_feeds_set want;

	(void)pos;
	/* version 1 has no routes: every downstream gets every record */
	ck_assert_int_eq(r->version, c->version);
	ck_assert(r->route_read);
	if (c->version == 1) {
		ck_assert(r->route.all);
		ck_assert(fg_feeds_has(&r->route, fg_config_ident("any-downstream")));
	} else {
		fg_golden_route(c->n, &want);
		ck_assert_int_eq(r->route.all, want.all);
		ck_assert_int_eq(r->route.n, want.n);
		for (unsigned i = 0; i < want.n; i++)
			ck_assert_uint_eq(r->route.ident[i], want.ident[i]);
		ck_assert_int_eq(fg_feeds_has(&r->route, fg_config_ident(GOLDEN_DS_TEXT)),
				 c->n % 3 != 2);
		ck_assert_int_eq(fg_feeds_has(&r->route, fg_config_ident("other")), c->n % 3 == 1);
	}
	ck_assert_int_eq(r->recno, c->n);
	ck_assert_int_eq(r->arrival, GOLDEN_TIME + c->n);
	ck_assert_int_eq(r->peer, c->n);
	ck_assert_int_eq(r->id_len, il);
	ck_assert_mem_eq(r->id, id, il);
	ck_assert_int_eq(r->art_len, al);
	ck_assert_mem_eq(r->art, art, al);
	c->n++;
	return 0;
}

START_TEST(golden_queue_segments_read)
{
	char *names[MAX_FILES];
	unsigned n = golden_files("queue", names);

	for (unsigned i = 0; i < n; i++) {
		struct blob b = slurp(names[i]);
		struct qcheck c = { .version = name_version(names[i]) };
		struct fg_queue_scan sc;

		ck_assert_int_eq(fg_queue_seg_scan(b.p, b.len, check_qrec, &c, &sc), 0);
		ck_assert_int_eq(sc.info.version, c.version);
		ck_assert_msg(!sc.torn, "%s: %s", names[i], sc.why);
		ck_assert_int_eq(sc.records, GOLDEN_QUEUED);
		ck_assert_int_eq(sc.info.segment, 1);
		ck_assert_int_eq(sc.info.base, 0);
		ck_assert_int_eq(sc.info.created, GOLDEN_TIME);
		free(b.p);
	}
	free_names(names, n);
}
END_TEST

/* The queue segment the cursor and head files of a slot version point
 * into: the files of slot version 0 were written with queue version 1;
 * this build's slot files point into this build's queue (version 2 on:
 * its records carry routes, so the positions moved; docs/compat.md). */
static const char *queue_golden(unsigned slot_version)
{
	static char name[32];

	snprintf(name, sizeof(name), "v%u.fgq", slot_version == 0 ? 1u : FG_QUEUE_VERSION);
	return name;
}

/* The golden queue's positions: after its first record, after its last. */
static void queue_ends(unsigned slot_version, uint64_t *first_end, uint64_t *end)
{
	struct blob b = golden("queue", queue_golden(slot_version));
	struct fg_queue_rec r;
	const char *why;

	ck_assert_int_eq(fg_queue_rec_check(b.p + FG_QUEUE_SEG_HEADER, b.len - FG_QUEUE_SEG_HEADER,
					    0, &r, &why), 0);
	*first_end = r.size;
	*end = b.len - FG_QUEUE_SEG_HEADER;
	free(b.p);
}

START_TEST(golden_slots_read)
{
	static const struct {
		const char *format, *magic;
	} kinds[] = {
		{ "cursor", FG_QUEUE_CURSOR_MAGIC },
		{ "head", FG_QUEUE_HEAD_MAGIC },
		{ "warmup", FG_WARMUP_MAGIC },
	};
	uint64_t first_end, end;

	for (unsigned k = 0; k < FG_ARRAY_SIZE(kinds); k++) {
		char *names[MAX_FILES];
		unsigned n = golden_files(kinds[k].format, names);

		for (unsigned i = 0; i < n; i++) {
			struct blob b = slurp(names[i]);
			struct fg_queue_slot s;

			ck_assert_msg(fg_queue_slots_pick(b.p, b.len, kinds[k].magic, &s) == 0, "%s",
				      names[i]);
			ck_assert_int_eq(s.version, name_version(names[i]));
			queue_ends(s.version, &first_end, &end);
			if (k == 0) {
				ck_assert_int_eq(s.seq, 2);
				ck_assert_int_eq(s.c.pos, first_end);
				ck_assert_int_eq(s.c.recno, 1);
				ck_assert_int_eq(s.updated, GOLDEN_TIME + 20);
			} else if (k == 1) {
				ck_assert_int_eq(s.seq, 2);
				ck_assert_int_eq(s.c.pos, end);
				ck_assert_int_eq(s.c.recno, GOLDEN_QUEUED);
				ck_assert_int_eq(s.extra, FG_QUEUE_SEG_HEADER + end);
			} else {
				ck_assert_int_eq(b.len, FG_QUEUE_SLOT);
				ck_assert_int_eq(s.c.pos, GOLDEN_WARMUP_UNTIL);
			}
			free(b.p);
		}
		free_names(names, n);
	}
}
END_TEST

START_TEST(golden_region_headers_read)
{
	char *names[MAX_FILES];
	unsigned n = golden_files("region", names);

	for (unsigned i = 0; i < n; i++) {
		struct blob b = slurp(names[i]);
		const char *why = NULL;
		int rc = fg_region_header_check(b.p, b.len, &why);

		/* a region is shared only by builds with the same layout and
		 * counters: one of another must say so, not misread the slots
		 * (an older layout: floodctld rebuilds it from the data dir) */
		ck_assert_msg(rc == 0 || (rc == -EPROTONOSUPPORT && (strstr(why, "counter tables") ||
								     strstr(why, "layout version"))),
			      "%s: %d %s", names[i], rc, why ? why : "");
		if (strstr(names[i], "/v1.fgr"))
			ck_assert_msg(rc == -EPROTONOSUPPORT && strstr(why, "region layout version 1"),
				      "layout 1 (no per-peer delays) is refused: %d %s", rc,
				      why ? why : "");
		if (strstr(names[i], "/v2.fgr"))
			ck_assert_msg(rc == -EPROTONOSUPPORT && strstr(why, "region layout version 2"),
				      "layout 2 (verdict lines without the remote) is refused: %d %s",
				      rc, why ? why : "");
		if (strstr(names[i], "/v3.fgr"))
			ck_assert_msg(rc == -EPROTONOSUPPORT && strstr(why, "region layout version 3"),
				      "layout 3 (no per-peer last-seen) is refused: %d %s",
				      rc, why ? why : "");
		free(b.p);
	}
	free_names(names, n);
}
END_TEST

/* ------------------------------------------------------------ a data dir */

/* The history layout of the snapshot world_make puts in (each a build
 * wrote is read: 2 as one shard). */
static unsigned world_history_layout = FG_HISTORY_LAYOUT;

/* A data directory (w->dir) of golden files and a region path (w->shm). */
static void world_make(struct ctl_fixture *w, unsigned slot_version)
{
	static const char *const files[][3] = {
		{ "snapshot", NULL, "snapshot-0000000000000001.fgs" },
		{ "journal", "v1.fgj", "journal-0000000000000001.fgj" },
		{ "queue", NULL, "queue-0000000000000001.fgq" },
		{ "cursor", NULL, "cursor-down.fgc" },
		{ "head", NULL, "queue-head.fgh" },
		{ "warmup", NULL, "warmup.fgw" },
	};

	memset(w, 0, sizeof(*w));
	fx_dir(w);
	snprintf(w->shm, sizeof(w->shm), "/dev/shm/fg-compat-%d", (int)getpid());
	for (unsigned i = 0; i < FG_ARRAY_SIZE(files); i++) {
		char name[64];
		struct blob b;

		if (i == 0)
			snprintf(name, sizeof(name), "v%u-history%u.fgs", FG_SNAP_VERSION,
				 world_history_layout);
		else if (strcmp(files[i][0], "queue") == 0)
			snprintf(name, sizeof(name), "%s", queue_golden(slot_version));
		else if (!files[i][1])
			snprintf(name, sizeof(name), "v%u.%s", slot_version,
				 strrchr(files[i][2], '.') + 1);
		b = golden(files[i][0], files[i][1] ? files[i][1] : name);
		put(w->dir, files[i][2], b.p, b.len);
		free(b.p);
	}
}

static struct fg_region *restore(struct ctl_fixture *w, struct fg_restore_result *res, char *why,
				 size_t whylen)
{
	struct fg_restore_params p;
	struct fg_restore_source src = { "the outbound queue", fg_queue_replay, w->dir };

	memset(&p, 0, sizeof(p));
	p.data_dir = w->dir;
	p.shm_path = w->shm;
	p.region.writers = GOLDEN_REGION_WRITERS;
	p.region.journal_ring = GOLDEN_REGION_JRING;
	p.region.vlog_ring = GOLDEN_REGION_VRING;
	p.history.capacity = GOLDEN_CAPACITY;
	p.history.full_policy = FG_FULL_DEFER;
	p.history.alarm_load_pct = 90;
	p.now = GOLDEN_TIME + 60;
	p.sources = &src;
	p.n_sources = 1;
	logbuf[0] = '\0';
	return fg_restore(&p, res, why, whylen);
}

/* The slot versions this tree has golden files of: 0 (before the field) and
 * every one since. */
START_TEST(restore_from_golden_files)
{
	for (unsigned v = 0; v <= FG_QUEUE_SLOT_VERSION * 2 + 1; v++) {
		struct fg_restore_result res;
		struct fg_history_stats hs;
		struct ctl_fixture w;
		char why[512];
		struct fg_region *r;

		/* every slot version with the newest history layout, and the
		 * newest slot version with each older history layout */
		world_history_layout = FG_HISTORY_LAYOUT;
		if (v > FG_QUEUE_SLOT_VERSION) {
			world_history_layout = FG_HISTORY_LAYOUT_UNSHARDED +
					       (v - FG_QUEUE_SLOT_VERSION - 1);
			if (world_history_layout >= FG_HISTORY_LAYOUT)
				break;
		}
		world_make(&w, FG_MIN(v, FG_QUEUE_SLOT_VERSION));
		r = restore(&w, &res, why, sizeof(why));
		ck_assert_msg(r != NULL, "slot version %u: %s\n%s", v, why, logbuf);
		ck_assert_int_eq(res.from, FG_RESTORE_SNAPSHOT);
		ck_assert_int_eq(res.records, GOLDEN_IDS);
		ck_assert_int_eq(res.inserted, GOLDEN_IDS / 2);
		ck_assert_int_eq(res.duplicates, GOLDEN_IDS / 2);
		ck_assert_int_eq(res.source_inserted, 0);	/* the queue's IDs: all known */
		for (unsigned n = 0; n < GOLDEN_IDS; n++) {
			struct fg_history_entry e;
			struct fg_history_key k;

			golden_key(fg_region_history(r), n, &k);
			ck_assert_int_eq(fg_history_lookup(fg_region_history(r), &k, GOLDEN_TIME + 60, &e),
					 n % 2 ? FG_HISTORY_REJECTED : FG_HISTORY_ACCEPTED);
			ck_assert_int_eq(e.first_seen, fg_golden_first_seen(n));
		}
		/* what was read is this build's layout, whatever the image's */
		fg_history_stats(fg_region_history(r), &hs);
		ck_assert_uint_eq(hs.shards, 1);
		fg_region_close(r);
		fx_cleanup(&w);
	}
	world_history_layout = FG_HISTORY_LAYOUT;
}
END_TEST

/* The queue opens on the golden files of each slot version; the cursor is
 * where they say; once the writer persists it again, it is written in this
 * build's version (the upgrade), the other slot left as it was. */
START_TEST(queue_opens_and_upgrades_cursor)
{
	uint64_t first_end, end;

	for (unsigned v = 0; v <= FG_QUEUE_SLOT_VERSION; v++) {
		struct fg_queue_params qp = { 0 };
		struct fg_queue_seg_info si;
		const char *swhy;
		struct fg_queue_open_info info = { 0 };
		struct fg_queue_cursor start, to;
		struct fg_queue_slot s;
		struct ctl_fixture w;
		struct fg_queue *q;
		struct blob b;
		char path[PATH_MAX];
		fg_time_t until;
		int err, idx;

		queue_ends(v, &first_end, &end);
		world_make(&w, v);
		ck_assert_int_eq(fg_warmup_until(w.dir, &until), 0);
		ck_assert_int_eq(until, GOLDEN_WARMUP_UNTIL);
		qp.dir = w.dir;
		q = fg_queue_open(&qp, &info, &err);
		ck_assert_msg(q != NULL, "slot version %u: %s\n%s", v, strerror(-err), logbuf);
		ck_assert_int_eq(info.records, GOLDEN_QUEUED);
		/* the old segment is read as it is; the new one is this build's */
		snprintf(path, sizeof(path), "%s/queue-0000000000000002.fgq", w.dir);
		b = slurp(path);
		ck_assert_int_eq(fg_queue_seg_header_decode(b.p, b.len, &si, &swhy), 0);
		ck_assert_int_eq(si.version, FG_QUEUE_VERSION);
		ck_assert_int_eq(si.base, end);
		free(b.p);
		idx = fg_queue_consumer(q, "down", &start);
		ck_assert_int_ge(idx, 0);
		ck_assert_int_eq(start.pos, first_end);
		ck_assert_int_eq(start.recno, 1);
		ck_assert_int_eq(fg_queue_start(q), 0);
		to.pos = end;
		to.recno = GOLDEN_QUEUED;
		fg_queue_consumer_ack(q, (unsigned)idx, &to);
		fg_queue_stop(q);
		fg_queue_close(q);
		snprintf(path, sizeof(path), "%s/cursor-down.fgc", w.dir);
		b = slurp(path);
		ck_assert_int_eq(fg_queue_slots_pick(b.p, b.len, FG_QUEUE_CURSOR_MAGIC, &s), 0);
		ck_assert_int_eq(s.seq, 3);
		ck_assert_int_eq(s.c.pos, end);
		ck_assert_int_eq(s.version, FG_QUEUE_SLOT_VERSION);
		ck_assert_int_eq(fg_queue_slot_decode(b.p, FG_QUEUE_CURSOR_MAGIC, &s), 0);
		ck_assert_int_eq(s.seq, 2);
		ck_assert_int_eq(s.version, v);
		free(b.p);
		fx_cleanup(&w);
	}
}
END_TEST

/* ------------------------------------------------------------ newer */

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Bump the u32 version at `off`; make the checksum over [0, crc_at) good
 * again (crc_at 0: none). Returns the new version. */
static uint32_t bump(uint8_t *p, size_t off, size_t crc_at, uint32_t newest)
{
	uint32_t v = FG_MAX(get32(p + off), newest) + 1;

	put32(p + off, v);
	if (crc_at)
		put32(p + crc_at, fg_crc32c(0, p, crc_at));
	return v;
}

/* Bump the version of w->dir/file as bump() does; the new version. */
static uint32_t bump_file(struct ctl_fixture *w, const char *file, size_t off, size_t crc_at,
			  uint32_t newest)
{
	char path[PATH_MAX];
	struct blob b;
	uint32_t v;

	snprintf(path, sizeof(path), "%s/%s", w->dir, file);
	b = slurp(path);
	v = bump(b.p, off, crc_at, newest);
	/* both slots of a two-slot file: a newer build writes them in turn */
	if (off + 4 <= FG_QUEUE_SLOT && b.len == 2 * FG_QUEUE_SLOT)
		bump(b.p + FG_QUEUE_SLOT, off, crc_at, newest);
	put(w->dir, file, b.p, b.len);
	free(b.p);
	return v;
}

/* The restore refuses the data dir, naming the file and both versions. */
static void expect_refused(struct ctl_fixture *w, const char *file, const char *found,
			   const char *understood)
{
	struct fg_restore_result res;
	char why[512];
	struct fg_region *r = restore(w, &res, why, sizeof(why));

	ck_assert_msg(r == NULL, "a newer %s was restored from (%s):\n%s", file, found, logbuf);
	ck_assert_msg(strstr(why, file) && strstr(why, found) && strstr(why, understood),
		      "the refusal names %s, '%s' and '%s': %s", file, found, understood, why);
}

/* A snapshot and a journal segment one version newer: the restore refuses
 * and leaves the file where it is (a newer build's file is not damage). */
START_TEST(newer_snapshot_and_journal_refused)
{
	static const struct {
		const char *file, *what;
		size_t crc_at;
		unsigned oldest, reads;
	} cases[] = {
		{ "snapshot-0000000000000001.fgs", "snapshot format", FG_SNAP_HEADER - 4,
		  FG_SNAP_VERSION, FG_SNAP_VERSION },
		{ "journal-0000000000000001.fgj", "journal segment format", FG_JSEG_HEADER - 4,
		  1, FG_JSEG_VERSION },
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		struct ctl_fixture w;
		char path[PATH_MAX], found[64], understood[64];
		uint32_t v;

		world_make(&w, FG_QUEUE_SLOT_VERSION);
		v = bump_file(&w, cases[i].file, 8, cases[i].crc_at, cases[i].reads);
		snprintf(found, sizeof(found), "%s version %u;", cases[i].what, v);
		if (cases[i].oldest == cases[i].reads)
			snprintf(understood, sizeof(understood), "reads version %u", cases[i].reads);
		else
			snprintf(understood, sizeof(understood), "reads versions %u..%u",
				 cases[i].oldest, cases[i].reads);
		expect_refused(&w, cases[i].file, found, understood);
		snprintf(path, sizeof(path), "%s/%s", w.dir, cases[i].file);
		ck_assert_int_eq(access(path, F_OK), 0);
		fx_cleanup(&w);
	}
}
END_TEST

/* A snapshot whose history image is one layout newer (its header as it
 * was): the restore looks inside and refuses. */
START_TEST(newer_history_image_refused)
{
	struct ctl_fixture w;
	char found[64], understood[64];
	struct blob b;
	uint32_t v;

	world_make(&w, FG_QUEUE_SLOT_VERSION);
	snprintf(found, sizeof(found), "v%u-history%u.fgs", FG_SNAP_VERSION, FG_HISTORY_LAYOUT);
	b = golden("snapshot", found);
	v = bump(b.p + FG_SNAP_HEADER, 8, 0, FG_HISTORY_LAYOUT);
	ck_assert_int_eq(fg_history_image_seal(b.p + FG_SNAP_HEADER, b.len - FG_SNAP_HEADER), 0);
	put(w.dir, "snapshot-0000000000000001.fgs", b.p, b.len);
	snprintf(found, sizeof(found), "history image layout version %u;", v);
	snprintf(understood, sizeof(understood), "reads versions %u..%u",
		 FG_HISTORY_LAYOUT_UNSHARDED, FG_HISTORY_LAYOUT);
	expect_refused(&w, "snapshot-0000000000000001.fgs", found, understood);
	free(b.p);
	fx_cleanup(&w);
}
END_TEST

/* The queue refuses to open, and so does the restore that reads it. */
START_TEST(newer_queue_files_refused)
{
	static const struct {
		const char *file;
		size_t off, crc_at;
		const char *what;
	} cases[] = {
		{ "queue-0000000000000001.fgq", 8, 60, "queue segment format version" },
		{ "cursor-down.fgc", 48, 60, "cursor slot format version" },
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		struct fg_queue_params qp = { 0 };
		struct fg_queue_open_info info = { 0 };
		struct fg_queue_cursor start;
		char path[PATH_MAX], found[96], understood[64];
		struct fg_queue *q;
		struct ctl_fixture w;
		uint32_t v;
		int err = 0;

		world_make(&w, FG_QUEUE_SLOT_VERSION);
		v = bump_file(&w, cases[i].file, cases[i].off, cases[i].crc_at, 0);
		snprintf(path, sizeof(path), "%s/%s", w.dir, cases[i].file);
		snprintf(found, sizeof(found), "%s %u;", cases[i].what, v);
		snprintf(understood, sizeof(understood), "reads version");
		expect_refused(&w, cases[i].file, found, understood);

		logbuf[0] = '\0';
		qp.dir = w.dir;
		q = fg_queue_open(&qp, &info, &err);
		if (q) {
			/* the cursor is read when its consumer registers */
			err = fg_queue_consumer(q, "down", &start);
			fg_queue_close(q);
		}
		ck_assert_msg(err == -EPROTONOSUPPORT, "%s: the queue refused it: %d", cases[i].file,
			      err);
		ck_assert_msg(strstr(logbuf, cases[i].file) && strstr(logbuf, found) &&
			      strstr(logbuf, "refusing"), "the queue's message: %s", logbuf);
		ck_assert_int_eq(access(path, F_OK), 0);
		fx_cleanup(&w);
	}
}
END_TEST

START_TEST(newer_warmup_refused)
{
	char found[64];
	struct ctl_fixture w;
	fg_time_t until;
	uint32_t v;

	world_make(&w, FG_QUEUE_SLOT_VERSION);
	v = bump_file(&w, "warmup.fgw", 48, 60, FG_QUEUE_SLOT_VERSION);
	logbuf[0] = '\0';
	ck_assert_int_eq(fg_warmup_until(w.dir, &until), -EPROTONOSUPPORT);
	snprintf(found, sizeof(found), "warm-up file format version %u;", v);
	ck_assert_msg(strstr(logbuf, "warmup.fgw") && strstr(logbuf, found) &&
		      strstr(logbuf, "reads versions 0.."), "the message: %s", logbuf);
	expect_refused(&w, "warmup.fgw", "warm-up file", "does not read");
	fx_cleanup(&w);
}
END_TEST

START_TEST(newer_region_refused)
{
	char name[32];
	struct blob b;
	const char *why = NULL;
	char found[64];
	uint32_t v;

	snprintf(name, sizeof(name), "v%u.fgr", FG_REGION_LAYOUT);
	b = golden("region", name);
	v = bump(b.p, 8, 0, FG_REGION_LAYOUT);
	ck_assert_int_eq(fg_region_header_check(b.p, b.len, &why), -EPROTONOSUPPORT);
	snprintf(found, sizeof(found), "region layout version %u; this build reads version %u", v,
		 FG_REGION_LAYOUT);
	ck_assert_msg(strstr(why, found), "the message: %s", why);
	free(b.p);
}
END_TEST

/* ------------------------------------------------------------ this build */

static void report(const char *msg)
{
	capture(FG_LOG_ERR, "compat", msg, NULL);
}

START_TEST(this_build_writes_its_golden_files)
{
	logbuf[0] = '\0';
	ck_assert_msg(fg_golden_write(golden_dir, 1, report) == 0,
		      "this build's formats differ from its golden files:\n%s", logbuf);
}
END_TEST

static Suite *compat_suite(void)
{
	Suite *s = suite_create("compat");
	TCase *t = tcase_create("golden");

	tcase_add_test(t, golden_snapshots_read);
	tcase_add_test(t, golden_journals_read);
	tcase_add_test(t, golden_queue_segments_read);
	tcase_add_test(t, golden_slots_read);
	tcase_add_test(t, golden_region_headers_read);
	tcase_add_test(t, restore_from_golden_files);
	tcase_add_test(t, queue_opens_and_upgrades_cursor);
	tcase_add_test(t, newer_snapshot_and_journal_refused);
	tcase_add_test(t, newer_history_image_refused);
	tcase_add_test(t, newer_queue_files_refused);
	tcase_add_test(t, newer_warmup_refused);
	tcase_add_test(t, newer_region_refused);
	tcase_add_test(t, this_build_writes_its_golden_files);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	const char *top = getenv("FG_TOP");
	SRunner *sr;
	int failed;

	snprintf(golden_dir, sizeof(golden_dir), "%s/tests/data/compat", top ? top : ".");
	fg_log_set_sink(capture, NULL);
	sr = srunner_create(compat_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
