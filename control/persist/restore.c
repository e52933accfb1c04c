/* SPDX-License-Identifier: MIT */
/*
 * restore.c — rebuild the shared region from the data directory: the
 * newest sound snapshot, the journal after it, the extra sources; or the
 * journal alone; or nothing (snapshot.h describes the order and why).
 *
 * A file of a format version this build does not read stops the restore
 * before anything is touched (docs/compat.md): a newer build wrote it, and
 * setting it aside or falling back to older files would lose what it
 * holds. The message names the file and both versions.
 *
 * Nothing that fails a check is trusted, and nothing is deleted: a bad
 * snapshot, a segment with a bad header or another table's seed is
 * renamed *.bad at once (it holds nothing usable); a segment damaged in
 * its middle still gives the records before the damage, so it is only
 * listed, to be set aside once a new snapshot covers it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/queue.h"
#include "floodgate/warmup.h"
#include "floodgate/snapshot.h"

#define COMP "restore"

static const char *const from_names[] = {
	[FG_RESTORE_SNAPSHOT] = "snapshot",
	[FG_RESTORE_JOURNAL] = "journal",
	[FG_RESTORE_EMPTY] = "empty",
};

const char *fg_restore_from_name(enum fg_restore_from f)
{
	return (unsigned)f < FG_ARRAY_SIZE(from_names) ? from_names[f] : "?";
}

static double now_s(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

static void set_aside(const char *path, const char *what, const char *why)
{
	char as[PATH_MAX + 16];
	int rc = fg_datadir_set_aside(path, as, sizeof(as));

	if (rc == 0)
		FG_LOG_ERR(COMP, "%s %s failed its check (%s): set aside as %s", what, path, why, as);
	else
		FG_LOG_ERR(COMP, "%s %s failed its check (%s); setting it aside failed: %s",
			   what, path, why, strerror(-rc));
}

/* Threads for the table: as configured, else one per online CPU (a
 * restore is the one time floodctld may use the whole box: nothing is
 * being answered yet). */
static unsigned restore_threads(const struct fg_restore_params *p)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (p->threads)
		return p->threads;
	return n > 0 ? (unsigned)FG_MIN(n, (long)FG_HISTORY_SHARDS_MAX) : 1u;
}

/*
 * A snapshot in a new region, checked. NULL with *err: -EINVAL the snapshot
 * is unsound (set aside: try the previous one); anything else is a failure
 * of this machine (no memory for the region), not of the snapshot, and
 * must stop the restore rather than fall back to an older history.
 */
static struct fg_region *try_snapshot(const struct fg_restore_params *p, uint64_t seq,
				      struct fg_snap_info *info, int *err)
{
	char path[PATH_MAX], why[256];
	struct fg_region_params rp = p->region;
	struct fg_region *r = NULL;
	struct fg_history_key chk;
	enum fg_history_error herr;
	struct fg_history *h;
	struct fg_snap_file f;
	size_t len;
	void *mem;

	*err = -EINVAL;
	if (fg_snapshot_path(p->data_dir, seq, path, sizeof(path)) < 0)
		return NULL;
	if ((*err = fg_snapshot_open(path, &f, why, sizeof(why))) < 0) {
		if (*err == -EINVAL)
			set_aside(path, "snapshot", why);
		else
			FG_LOG_ERR(COMP, "cannot read %s: %s", path, why);
		return NULL;
	}
	rp.history_size = f.img_len;
	memcpy(rp.seed, f.info.seed, sizeof(rp.seed));
	r = fg_region_create(p->shm_path, &rp, why, sizeof(why));
	if (!r) {
		FG_LOG_ERR(COMP, "cannot create the region: %s", why);
		*err = -ENOMEM;
		goto out_close;
	}
	mem = fg_region_history_mem(r, &len);
	h = fg_history_restore_parallel(mem, len, f.img, f.img_len, restore_threads(p), &herr);
	if (h)
		fg_region_seed_check(h, &chk);
	if (!h || chk.lo != f.info.seed_check.lo || chk.hi != f.info.seed_check.hi) {
		if (h)
			fg_history_detach(h);
		fg_region_close(r);
		fg_region_unlink(p->shm_path);
		r = NULL;
		set_aside(path, "snapshot",
			  h ? "its seed check does not match its table" : fg_history_error_str(herr));
		*err = -EINVAL;
		goto out_close;
	}
	fg_region_set_history(r, h);
	*info = f.info;
	*err = 0;
out_close:
	fg_snapshot_close(&f);
	return r;
}

/* The seed of the newest segment with a sound header; false if none. */
static bool journal_seed(const char *dir, const uint64_t *segs, size_t n,
			 uint8_t seed[FG_HISTORY_SEED_LEN])
{
	for (size_t i = n; i-- > 0;) {
		char path[PATH_MAX];
		uint8_t buf[FG_JSEG_HEADER];
		struct fg_jseg_info info;
		const char *why;
		int fd;
		bool ok;

		if (fg_journal_segment_path(dir, segs[i], path, sizeof(path)) < 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ok = fg_datadir_pread_all(fd, buf, sizeof(buf), 0) == 0 &&
		     fg_jseg_header(buf, sizeof(buf), &info, &why) == 0;
		close(fd);
		if (ok) {
			memcpy(seed, info.seed, FG_HISTORY_SEED_LEN);
			return true;
		}
	}
	return false;
}

/* Records are inserted REPLAY_AHEAD behind the one read, whose buckets are
 * prefetched meanwhile: at 100 M entries every insert misses the cache,
 * and overlapping those misses is most of what replay speed is. */
#define REPLAY_AHEAD 8

/* The tombstones met in the journal, applied again after the queue's
 * records are re-inserted (restore's own memory: the control plane). */
struct tombstones {
	struct fg_jrec *v;
	size_t n, cap;
};

struct replay {
	struct fg_history *h;
	fg_time_t now;
	struct fg_restore_result *res;
	struct tombstones *tomb;
	struct fg_jrec win[REPLAY_AHEAD];	/* read and prefetched, not yet inserted */
	unsigned head, n;
};

static void replay_forget(struct replay *rp, const struct fg_jrec *r)
{
	struct fg_history_key k = { .lo = r->key_lo, .hi = r->key_hi };
	struct tombstones *t = rp->tomb;

	rp->res->records++;
	if (fg_history_forget(rp->h, &k, rp->now, NULL) == 0)
		rp->res->forgotten++;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct fg_jrec *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			FG_LOG_ERR(COMP, "out of memory keeping a tombstone: it is not applied after "
				   "the queue's records");
			return;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *r;
}

/* A record after a tombstone of its key (`floodctl remember` after a
 * forget, or the article accepted again): the journal decides, not the
 * tombstone. Tombstones are few: a scan. */
static void cancel_tombstones(struct tombstones *t, const struct fg_jrec *r)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].key_lo == r->key_lo && t->v[i].key_hi == r->key_hi)
			t->v[i].flags = 0;
}

static void replay_insert(struct replay *rp, const struct fg_jrec *r)
{
	struct fg_history_key k = { .lo = r->key_lo, .hi = r->key_hi };
	int rc;

	if (fg_jrec_is_forget(r)) {
		replay_forget(rp, r);
		return;
	}
	if (rp->tomb->n)
		cancel_tombstones(rp->tomb, r);
	rc = fg_history_insert_final(rp->h, &k, (enum fg_history_state)r->state,
				     r->first_seen + r->date_off, r->first_seen, rp->now, NULL);

	rp->res->records++;
	if (rc == 0)
		rp->res->inserted++;
	else if (rc == -EEXIST)
		rp->res->duplicates++;
	else if (rc == -ENOSPC)
		rp->res->table_full++;
	else
		rp->res->out_of_range++;
}

static int replay_rec(void *arg, const struct fg_jrec *r)
{
	struct replay *rp = arg;
	struct fg_history_key k = { .lo = r->key_lo, .hi = r->key_hi };

	fg_history_prefetch(rp->h, &k);
	if (rp->n == REPLAY_AHEAD) {
		replay_insert(rp, &rp->win[rp->head]);
		rp->win[rp->head] = *r;
		rp->head = (rp->head + 1) % REPLAY_AHEAD;
	} else {
		rp->win[(rp->head + rp->n) % REPLAY_AHEAD] = *r;
		rp->n++;
	}
	return 0;
}

static void replay_flush(struct replay *rp)
{
	for (; rp->n; rp->n--) {
		replay_insert(rp, &rp->win[rp->head]);
		rp->head = (rp->head + 1) % REPLAY_AHEAD;
	}
}

/* The newest segment ended torn: cut the garbage so that it reads clean
 * from now on (it is the trace of an interrupted write, not evidence). */
static void cut_tail(const char *path, uint64_t end)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)end) < 0 || fsync(fd) < 0)
		FG_LOG_WARN(COMP, "cannot cut the torn tail of %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Replay one segment from `from`; its seed must match the table's. */
static void replay_segment(const struct fg_restore_params *p, struct replay *rp, uint64_t seg,
			   uint64_t from, bool newest, const struct fg_history_key *chk)
{
	char path[PATH_MAX];
	struct fg_jseg_info info;
	struct fg_jseg_scan sc;
	const char *bad = NULL;
	struct stat st;
	void *map = MAP_FAILED;
	int fd;

	if (fg_journal_segment_path(p->data_dir, seg, path, sizeof(path)) < 0)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		FG_LOG_ERR(COMP, "cannot read %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (st.st_size > 0)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		set_aside(path, "journal segment", "empty or unreadable");
		rp->res->segments_set_aside++;
		goto out_close;
	}
	if (fg_jseg_header(map, (size_t)st.st_size, &info, &bad) == 0 &&
	    (info.seed_check.lo != chk->lo || info.seed_check.hi != chk->hi))
		bad = "it belongs to another table (seed check differs)";
	if (bad) {
		set_aside(path, "journal segment", bad);
		rp->res->segments_set_aside++;
		goto out_unmap;
	}
	fg_jseg_scan(map, (size_t)st.st_size, from, replay_rec, rp, &sc);
	rp->res->segments++;
	if (!sc.torn)
		goto out_unmap;
	if (newest) {
		rp->res->torn_tail = true;
		rp->res->torn_at.segment = seg;
		rp->res->torn_at.offset = sc.end;
		FG_LOG_NOTICE(COMP, "%s ends torn at offset %llu (%s): kept the %llu records before it, cut %llu octets",
			      path, (unsigned long long)sc.end, sc.why,
			      (unsigned long long)sc.records,
			      (unsigned long long)(sc.size - sc.end));
		cut_tail(path, sc.end);
	} else {
		FG_LOG_ERR(COMP, "%s is damaged at offset %llu (%s): kept the %llu records before it; "
			   "it will be set aside once a new snapshot covers it",
			   path, (unsigned long long)sc.end, sc.why, (unsigned long long)sc.records);
		if (rp->res->n_damaged < FG_RESTORE_DAMAGED_MAX)
			rp->res->damaged[rp->res->n_damaged++] = seg;
	}
out_unmap:
	munmap(map, (size_t)st.st_size);
out_close:
	if (fd >= 0)
		close(fd);
}

/* A new table in a new region: empty, with the journal's seed if any. */
static struct fg_region *fresh_region(const struct fg_restore_params *p, const uint8_t *seed)
{
	struct fg_region_params rp = p->region;
	struct fg_history_params hp = p->history;
	struct fg_region *r;
	struct fg_history *h;
	char why[256];
	size_t len;
	void *mem;

	memcpy(hp.seed, seed, sizeof(hp.seed));
	memcpy(rp.seed, seed, sizeof(rp.seed));
	hp.now = p->now;
	rp.history_size = fg_history_region_size_sharded(hp.capacity, hp.side_capacity, hp.shards);
	r = fg_region_create(p->shm_path, &rp, why, sizeof(why));
	if (!r) {
		FG_LOG_ERR(COMP, "cannot create the region: %s", why);
		return NULL;
	}
	mem = fg_region_history_mem(r, &len);
	h = fg_history_create(mem, len, &hp);
	if (!h) {
		fg_region_close(r);
		fg_region_unlink(p->shm_path);
		return NULL;
	}
	fg_region_set_history(r, h);
	return r;
}

/* The snapshot to start from, newest first; NULL if none is sound (*err
 * 0) or if the restore must stop (*err < 0). */
static struct fg_region *from_snapshots(const struct fg_restore_params *p,
					struct fg_restore_result *res, int *err)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	struct fg_region *r = NULL;

	*err = 0;
	fg_snapshot_list(p->data_dir, &seqs, &n);
	for (size_t i = n; i-- > 0 && !r;) {
		r = try_snapshot(p, seqs[i], &res->snapshot, err);
		if (r || *err != -EINVAL)
			break;
		*err = 0;
		res->snapshots_set_aside++;
		if (i > 0)
			FG_LOG_ERR(COMP, "falling back to the previous snapshot");
	}
	free(seqs);
	return r;
}

/* Read len octets at off of dir/<prefix><num><suffix> into buf, and the
 * file's size: false if it cannot be read (a damaged file is the later
 * checks' job). */
static bool read_head(const char *dir, const char *prefix, uint64_t num, const char *suffix,
		      void *buf, size_t len, uint64_t off, char *path, size_t plen, size_t *size)
{
	struct stat st;
	int fd, rc;

	if (fg_datadir_path(dir, prefix, num, suffix, path, plen) != 0)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	rc = fstat(fd, &st) == 0 ? fg_datadir_pread_all(fd, buf, len, off) : -errno;
	close(fd);
	*size = rc == 0 ? (size_t)st.st_size : 0;
	return rc == 0;
}

/* The version of each numbered file of one kind; -EPROTONOSUPPORT and why
 * at the first this build does not read. check() sees the header (hlen
 * octets, and for a snapshot its image's header after them) and the
 * file's size. */
static int check_kind(const char *dir, const char *prefix, const char *suffix, size_t hlen,
		      int (*check)(const void *buf, size_t len, const char **why, uint8_t *img),
		      char *why, size_t whylen)
{
	uint8_t *buf = malloc(hlen + FG_SNAP_HEADER);
	uint64_t *nums = NULL;
	size_t n = 0;
	int rc = buf ? 0 : -ENOMEM;

	if (rc == 0)
		fg_datadir_list(dir, prefix, suffix, &nums, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char path[PATH_MAX];
		const char *bad = NULL;
		size_t size;

		if (!read_head(dir, prefix, nums[i], suffix, buf, hlen, 0, path, sizeof(path), &size))
			continue;
		/* a snapshot's image carries a layout of its own */
		if (hlen == FG_SNAP_HEADER &&
		    !read_head(dir, prefix, nums[i], suffix, buf + hlen, FG_SNAP_HEADER, hlen, path,
			       sizeof(path), &size))
			memset(buf + hlen, 0, FG_SNAP_HEADER);
		if (check(buf, size, &bad, buf + hlen) == -EPROTONOSUPPORT) {
			snprintf(why, whylen, "%s: %s", path, bad);
			rc = -EPROTONOSUPPORT;
		}
	}
	free(nums);
	free(buf);
	return rc;
}

static int snap_version(const void *buf, size_t len, const char **why, uint8_t *img)
{
	struct fg_snap_info info;
	uint32_t layout;
	int rc = fg_snapshot_header(buf, len, &info, why);

	if (rc != 0)
		return rc;
	layout = fg_history_layout_of(img, FG_SNAP_HEADER);
	/* layout 2 (one table) is read as a table of one shard */
	if (layout && (layout < FG_HISTORY_LAYOUT_UNSHARDED || layout > FG_HISTORY_LAYOUT)) {
		*why = fg_datadir_version_why("snapshot's history image layout", layout,
					      FG_HISTORY_LAYOUT_UNSHARDED, FG_HISTORY_LAYOUT);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

static int jseg_version(const void *buf, size_t len, const char **why, uint8_t *img)
{
	struct fg_jseg_info info;

	(void)img;
	return fg_jseg_header(buf, len, &info, why);
}

static int qseg_version(const void *buf, size_t len, const char **why, uint8_t *img)
{
	struct fg_queue_seg_info info;

	(void)img;
	return fg_queue_seg_header_decode(buf, len, &info, why);
}

/* The cursor files: names that are not numbered. */
static int check_cursors(const char *dir, char *why, size_t whylen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	while (d && rc == 0 && (e = readdir(d)) != NULL) {
		uint8_t buf[2 * FG_QUEUE_SLOT];
		struct fg_queue_slot s;
		char path[PATH_MAX];
		size_t nl = strlen(e->d_name);
		ssize_t r;
		int fd;

		if (nl < 12 || strncmp(e->d_name, "cursor-", 7) != 0 ||
		    strcmp(e->d_name + nl - 4, ".fgc") != 0 ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = pread(fd, buf, sizeof(buf), 0);
		close(fd);
		if (r > 0 && fg_queue_slots_pick(buf, (size_t)r, FG_QUEUE_CURSOR_MAGIC, &s) ==
				     -EPROTONOSUPPORT) {
			snprintf(why, whylen, "%s: %s", path,
				 fg_datadir_version_why("cursor slot format", s.version, 0,
							FG_QUEUE_SLOT_VERSION));
			rc = -EPROTONOSUPPORT;
		}
	}
	if (d)
		closedir(d);
	return rc;
}

/* Every file of the data directory in a format version this build reads? */
static int check_versions(const char *dir, char *why, size_t whylen)
{
	fg_time_t until;
	int rc;

	rc = check_kind(dir, "snapshot-", ".fgs", FG_SNAP_HEADER, snap_version, why, whylen);
	if (rc == 0)
		rc = check_kind(dir, "journal-", ".fgj", FG_JSEG_HEADER, jseg_version, why, whylen);
	if (rc == 0)
		rc = check_kind(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, FG_QUEUE_SEG_HEADER,
				qseg_version, why, whylen);
	if (rc == 0)
		rc = check_cursors(dir, why, whylen);
	if (rc == 0 && fg_warmup_until(dir, &until) == -EPROTONOSUPPORT) {
		snprintf(why, whylen, "%s/warmup.fgw: a warm-up file format version this build "
			 "does not read (logged above)", dir);
		rc = -EPROTONOSUPPORT;
	}
	return rc;
}

/* Remove temp files of snapshots whose write was interrupted. */
static void remove_temps(const char *dir)
{
	uint64_t *seqs = NULL;
	size_t n = 0;

	fg_datadir_list(dir, "snapshot-", ".fgs.tmp", &seqs, &n);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (fg_datadir_path(dir, "snapshot-", seqs[i], ".fgs.tmp", path, sizeof(path)) == 0 &&
		    unlink(path) == 0)
			FG_LOG_NOTICE(COMP, "removed %s (a snapshot write that did not finish)", path);
	}
	free(seqs);
}

static void replay_journal(const struct fg_restore_params *p, struct fg_region *r,
			   struct fg_restore_result *res, const uint64_t *segs, size_t n,
			   struct tombstones *tomb)
{
	struct replay rp = { .h = fg_region_history(r), .now = p->now, .res = res, .tomb = tomb };
	struct fg_history_key chk;

	fg_region_seed_check(rp.h, &chk);
	for (size_t i = 0; i < n; i++) {
		uint64_t from = FG_JSEG_HEADER;

		if (res->from == FG_RESTORE_SNAPSHOT) {
			if (segs[i] < res->snapshot.covers.segment)
				continue;
			if (segs[i] == res->snapshot.covers.segment)
				from = res->snapshot.covers.offset;
		}
		replay_segment(p, &rp, segs[i], from, i == n - 1, &chk);
	}
	replay_flush(&rp);
}

static void replay_sources(const struct fg_restore_params *p, struct fg_region *r,
			   struct fg_restore_result *res)
{
	fg_time_t since = res->from == FG_RESTORE_SNAPSHOT ? res->snapshot.created : 0;

	for (unsigned i = 0; i < p->n_sources; i++) {
		int64_t n = p->sources[i].replay(p->sources[i].arg, fg_region_history(r), since,
						 p->now);

		if (n < 0) {
			FG_LOG_ERR(COMP, "re-inserting from %s failed: %s", p->sources[i].name,
				   strerror((int)-n));
			continue;
		}
		res->source_inserted += n;
		FG_LOG_NOTICE(COMP, "%s: %lld IDs re-inserted as accepted", p->sources[i].name,
			      (long long)n);
	}
}

/* A tombstone the journal did not overrule wins over the queue's
 * re-inserted records as old as it or older: a forgotten ID stays
 * forgotten unless its article came again after. */
static void reapply_tombstones(const struct fg_restore_params *p, struct fg_region *r,
			       struct fg_restore_result *res, const struct tombstones *t)
{
	struct fg_history *h = fg_region_history(r);

	for (size_t i = 0; i < t->n; i++) {
		struct fg_history_key k = { .lo = t->v[i].key_lo, .hi = t->v[i].key_hi };
		struct fg_history_entry e;

		if (fg_jrec_is_forget(&t->v[i]) &&
		    fg_history_lookup(h, &k, p->now, &e) >= FG_HISTORY_ACCEPTED &&
		    e.first_seen <= t->v[i].first_seen && fg_history_forget(h, &k, p->now, NULL) == 0)
			res->forgotten_again++;
	}
}

static void log_result(const struct fg_restore_params *p, struct fg_region *r,
		       const struct fg_restore_result *res)
{
	struct fg_history_stats hs;

	fg_history_stats(fg_region_history(r), &hs);
	if (res->from == FG_RESTORE_SNAPSHOT &&
	    hs.shards != fg_history_shards_for(p->history.capacity, p->history.shards))
		FG_LOG_WARN(COMP, "history shards are %u (from the snapshot), not the configured %u: "
			    "a table cannot be resharded from its image; start with an empty history to change it",
			    hs.shards, fg_history_shards_for(p->history.capacity, p->history.shards));
	if (res->from == FG_RESTORE_SNAPSHOT && hs.slots != p->history.capacity)
		FG_LOG_WARN(COMP, "history capacity is %llu (from the snapshot), not the configured %llu: "
			    "a table cannot be resized from its image; start with an empty history to change it",
			    (unsigned long long)hs.slots, (unsigned long long)p->history.capacity);
	if (res->table_full)
		FG_LOG_ERR(COMP, "the table was full: %llu journal records could not be replayed",
			   (unsigned long long)res->table_full);
	if (res->from == FG_RESTORE_EMPTY) {
		FG_LOG_NOTICE(COMP, "started an empty history of %llu slots; %.2f s",
			      (unsigned long long)hs.slots, res->seconds);
		return;
	}
	FG_LOG_NOTICE(COMP, "restored from %s%s: %llu entries; journal: %llu segments, %llu records, "
		      "%llu inserted, %llu already present, %llu out of range; %.2f s "
		      "(table %.2f s, journal %.2f s)",
		      fg_restore_from_name(res->from),
		      res->snapshots_set_aside ? " (after setting bad snapshots aside)" : "",
		      (unsigned long long)hs.entries, (unsigned long long)res->segments,
		      (unsigned long long)res->records, (unsigned long long)res->inserted,
		      (unsigned long long)res->duplicates, (unsigned long long)res->out_of_range,
		      res->seconds, res->table_seconds, res->journal_seconds);
	if (res->forgotten || res->forgotten_again)
		FG_LOG_NOTICE(COMP, "tombstones (floodctl forget): %llu IDs removed, %llu of them again "
			      "after the outbound queue's records", (unsigned long long)res->forgotten,
			      (unsigned long long)res->forgotten_again);
}

struct fg_region *fg_restore(const struct fg_restore_params *p, struct fg_restore_result *res,
			     char *why, size_t whylen)
{
	double t0 = now_s();
	uint8_t seed[FG_HISTORY_SEED_LEN];
	struct tombstones tomb = { 0 };
	uint64_t *segs = NULL;
	size_t nsegs = 0;
	struct fg_region *r;
	int err;

	memset(res, 0, sizeof(*res));
	err = check_versions(p->data_dir, why, whylen);
	if (err != 0) {
		size_t l = strlen(why);

		snprintf(why + l, whylen - l, ": a newer floodgate wrote it; refusing to restore "
			 "(docs/compat.md)");
		return NULL;
	}
	remove_temps(p->data_dir);
	fg_journal_list(p->data_dir, &segs, &nsegs);
	r = from_snapshots(p, res, &err);
	if (r) {
		res->from = FG_RESTORE_SNAPSHOT;
	} else if (err < 0) {
		snprintf(why, whylen, "a snapshot could not be restored (%s); not falling back to an older history",
			 strerror(-err));
		goto out_free;
	} else if (journal_seed(p->data_dir, segs, nsegs, seed)) {
		res->from = FG_RESTORE_JOURNAL;
		if (res->snapshots_set_aside)
			FG_LOG_ERR(COMP, "no sound snapshot: rebuilding the history from the journal alone "
				   "(entries older than its oldest segment are lost)");
		r = fresh_region(p, seed);
	} else if (fg_history_seed_random(seed) == 0) {
		res->from = FG_RESTORE_EMPTY;
		FG_LOG_WARN(COMP, "no snapshot and no journal in %s: starting with an EMPTY history",
			    p->data_dir);
		r = fresh_region(p, seed);
	}
	if (!r) {
		snprintf(why, whylen, "could not build a region at %s (see the log)", p->shm_path);
		goto out_free;
	}
	res->table_seconds = now_s() - t0;
	if (res->from != FG_RESTORE_EMPTY)
		replay_journal(p, r, res, segs, nsegs, &tomb);
	res->journal_seconds = now_s() - t0 - res->table_seconds;
	replay_sources(p, r, res);
	reapply_tombstones(p, r, res, &tomb);
	res->seconds = now_s() - t0;
	log_result(p, r, res);
out_free:
	free(tomb.v);
	free(segs);
	return r;
}
