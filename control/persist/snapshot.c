/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c — writing, opening and pruning snapshot files (snapshot.h has
 * the format and the argument for the journal position).
 *
 * The image is copied straight into a shared mapping of the temp file:
 * no second copy of the table in memory, which matters at billions of
 * entries. fsync of the file then makes the mapping's pages durable.
 *
 * A paced write (snapshot-rate) copies a MiB of buckets at a time
 * (history.h, fg_history_image_copy_paced), hands what it copied to
 * writeback at once (sync_file_range, which starts the write and does
 * not wait for it), and sleeps until the rate allows the next MiB: the
 * table is read, and the disk written, at a steady rate instead of in
 * bursts of dirty pages, and the final fsync has little left to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/common.h"
#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/snapshot.h"

#define COMP "snapshot"

struct snap_hdr {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t seq;
	int64_t created;
	uint64_t jseg;
	uint64_t joff;
	uint64_t image_size;
	uint8_t seed[16];
	uint64_t seed_check[2];
	uint64_t capacity;
	uint64_t entries;
	uint8_t reserved[FG_SNAP_HEADER - 108];
	uint32_t crc;
};
_Static_assert(sizeof(struct snap_hdr) == FG_SNAP_HEADER, "snapshot header");
_Static_assert(__builtin_offsetof(struct snap_hdr, seed) == 56, "layout");
_Static_assert(__builtin_offsetof(struct snap_hdr, entries) == 96, "layout");

int fg_snapshot_header(const void *buf, size_t len, struct fg_snap_info *out, const char **why)
{
	const struct snap_hdr *h = buf;

	if (len < sizeof(*h)) {
		*why = "shorter than a snapshot header";
		return -EINVAL;
	}
	if (memcmp(h->magic, FG_SNAP_MAGIC, 8) != 0) {
		*why = "not a snapshot (bad magic)";
		return -EINVAL;
	}
	if (h->crc != fg_crc32c(0, h, offsetof(struct snap_hdr, crc))) {
		*why = "snapshot header checksum mismatch";
		return -EINVAL;
	}
	if (h->version != FG_SNAP_VERSION) {
		*why = fg_datadir_version_why("snapshot format", h->version, FG_SNAP_VERSION,
					      FG_SNAP_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h->header_size != FG_SNAP_HEADER) {
		*why = "header size does not match its version";
		return -EINVAL;
	}
	if (h->image_size == 0 || h->image_size > len - sizeof(*h)) {
		*why = "image size does not match the file";
		return -EINVAL;
	}
	out->seq = h->seq;
	out->created = h->created;
	out->covers.segment = h->jseg;
	out->covers.offset = h->joff;
	out->image_size = h->image_size;
	memcpy(out->seed, h->seed, sizeof(out->seed));
	out->seed_check.lo = h->seed_check[0];
	out->seed_check.hi = h->seed_check[1];
	out->capacity = h->capacity;
	out->entries = h->entries;
	return 0;
}

void fg_snapshot_header_encode(void *buf, const struct fg_snap_info *i)
{
	struct snap_hdr *h = buf;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, FG_SNAP_MAGIC, 8);
	h->version = FG_SNAP_VERSION;
	h->header_size = FG_SNAP_HEADER;
	h->seq = i->seq;
	h->created = i->created;
	h->jseg = i->covers.segment;
	h->joff = i->covers.offset;
	h->image_size = i->image_size;
	memcpy(h->seed, i->seed, sizeof(h->seed));
	h->seed_check[0] = i->seed_check.lo;
	h->seed_check[1] = i->seed_check.hi;
	h->capacity = i->capacity;
	h->entries = i->entries;
	h->crc = fg_crc32c(0, h, offsetof(struct snap_hdr, crc));
}

int fg_snapshot_path(const char *dir, uint64_t seq, char *out, size_t len)
{
	return fg_datadir_path(dir, "snapshot-", seq, ".fgs", out, len);
}

int fg_snapshot_list(const char *dir, uint64_t **seqs, size_t *n)
{
	return fg_datadir_list(dir, "snapshot-", ".fgs", seqs, n);
}

#define NS_PER_S 1000000000ull

struct pacer {
	int fd;
	uint64_t rate;		/* image bytes a second */
	uint64_t t0;		/* fg_mono_ns() at the copy's start */
	uint64_t flushed;	/* image bytes handed to writeback */
};

/* Between two MiB of the copy: start the writeback of what was copied,
 * then wait until `done` bytes are due at the rate. */
static void pace(void *arg, uint64_t done)
{
	struct pacer *p = arg;
	uint64_t due = p->t0 + (uint64_t)((unsigned __int128)done * NS_PER_S / p->rate);
	uint64_t now;

	if (done > p->flushed &&
	    sync_file_range(p->fd, (off_t)(FG_SNAP_HEADER + p->flushed), (off_t)(done - p->flushed),
			    SYNC_FILE_RANGE_WRITE) == 0)
		p->flushed = done;
	now = fg_mono_ns();
	if (now < due) {
		struct timespec ts = { .tv_sec = (time_t)((due - now) / NS_PER_S),
				       .tv_nsec = (long)((due - now) % NS_PER_S) };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* Copy the table into the file's mapping (at `rate` bytes a second, 0:
 * at full speed), then write the header. */
static int fill_file(int fd, struct fg_history *h, struct fg_snap_info *info, uint64_t rate)
{
	struct pacer pacer = { .fd = fd, .rate = rate };
	struct snap_hdr hdr;
	size_t total = FG_SNAP_HEADER + info->image_size;
	uint8_t *map;
	int rc;

	if (ftruncate(fd, (off_t)total) < 0)
		return -errno;
	/* blocks allocated in one go (no ENOSPC halfway through the copy)
	 * and pages mapped up front rather than faulted in one by one */
	if (fallocate(fd, 0, 0, (off_t)total) < 0 && errno != EOPNOTSUPP)
		return -errno;
	map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	pacer.t0 = fg_mono_ns();	/* the rate counts from the copy, not the mapping */
	rc = fg_history_image_copy_paced(h, map + FG_SNAP_HEADER, info->image_size,
					 rate ? pace : NULL, &pacer);
	if (rc == 0) {
		fg_snapshot_header_encode(&hdr, info);
		memcpy(map, &hdr, sizeof(hdr));
	}
	munmap(map, total);
	return rc;
}

int fg_snapshot_write(const char *dir, uint64_t seq, struct fg_history *h,
		      const uint8_t seed[FG_HISTORY_SEED_LEN], const struct fg_jpos *covers,
		      struct fg_snap_info *out)
{
	return fg_snapshot_write_paced(dir, seq, h, seed, covers, 0, out);
}

int fg_snapshot_write_paced(const char *dir, uint64_t seq, struct fg_history *h,
			    const uint8_t seed[FG_HISTORY_SEED_LEN], const struct fg_jpos *covers,
			    uint64_t rate, struct fg_snap_info *out)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	struct fg_history_stats hs;
	struct fg_snap_info info;
	int fd, rc;

	rc = fg_snapshot_path(dir, seq, path, sizeof(path));
	if (rc < 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fg_history_stats(h, &hs);
	memset(&info, 0, sizeof(info));
	info.seq = seq;
	info.created = time(NULL);
	info.covers = *covers;
	info.image_size = hs.region_size;
	memcpy(info.seed, seed, sizeof(info.seed));
	fg_region_seed_check(h, &info.seed_check);
	info.capacity = hs.slots;
	info.entries = hs.entries;
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = fill_file(fd, h, &info, rate);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fg_datadir_fsync(dir);
	if (rc < 0) {
		FG_LOG_ERR(COMP, "writing %s failed: %s", path, strerror(-rc));
		unlink(tmp);
		return rc;
	}
	if (out)
		*out = info;
	return 0;
}

int fg_snapshot_open(const char *path, struct fg_snap_file *f, char *why, size_t whylen)
{
	struct stat st;
	const char *bad = NULL;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || fstat(f->fd, &st) < 0) {
		rc = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
		goto out_close;
	}
	if (st.st_size < (off_t)FG_SNAP_HEADER) {
		snprintf(why, whylen, "shorter than a snapshot header (%lld octets)",
			 (long long)st.st_size);
		rc = -EINVAL;
		goto out_close;
	}
	f->len = (size_t)st.st_size;
	/* shared and read-only, and not populated: MAP_POPULATE would read a
	 * cold file here, serially, before the restore's threads start.
	 * MADV_WILLNEED starts the whole file's readahead instead and returns,
	 * so each restore thread copies its shards as their pages arrive. */
	f->map = mmap(NULL, f->len, PROT_READ, MAP_SHARED, f->fd, 0);
	if (f->map == MAP_FAILED) {
		rc = -errno;
		f->map = NULL;
		snprintf(why, whylen, "mmap: %s", strerror(-rc));
		goto out_close;
	}
	madvise(f->map, f->len, MADV_WILLNEED);
	rc = fg_snapshot_header(f->map, f->len, &f->info, &bad);
	if (rc < 0) {
		snprintf(why, whylen, "%s", bad);
		goto out_close;
	}
	f->img = (const uint8_t *)f->map + FG_SNAP_HEADER;
	f->img_len = f->info.image_size;
	return 0;

out_close:
	fg_snapshot_close(f);
	return rc;
}

void fg_snapshot_close(struct fg_snap_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
	if (f->fd >= 0)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/* Position the oldest kept snapshot covers; false if it cannot be read
 * (then nothing in the journal is pruned). */
static bool oldest_kept_covers(const char *dir, uint64_t seq, struct fg_jpos *pos)
{
	char path[PATH_MAX], why[128];
	struct fg_snap_file f;

	if (fg_snapshot_path(dir, seq, path, sizeof(path)) < 0 ||
	    fg_snapshot_open(path, &f, why, sizeof(why)) < 0)
		return false;
	*pos = f.info.covers;
	fg_snapshot_close(&f);
	return true;
}

static int unlink_numbered(const char *dir, const char *prefix, uint64_t num,
			   const char *suffix)
{
	char path[PATH_MAX];
	int rc = fg_datadir_path(dir, prefix, num, suffix, path, sizeof(path));

	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc < 0)
		FG_LOG_WARN(COMP, "cannot delete %s: %s", path, strerror(-rc));
	return rc;
}

int fg_snapshot_prune(const char *dir, unsigned keep, uint64_t current_segment,
		      struct fg_stats *stats)
{
	uint64_t *seqs = NULL, *segs = NULL;
	size_t ns = 0, nj = 0;
	struct fg_jpos pos;
	int rc;

	if (keep == 0)
		keep = 1;
	rc = fg_snapshot_list(dir, &seqs, &ns);
	if (rc < 0 || ns == 0)
		goto out_free;
	for (size_t i = 0; ns > keep && i < ns - keep; i++)
		if (unlink_numbered(dir, "snapshot-", seqs[i], ".fgs") == 0)
			fg_stats_inc(stats, FG_CTR_SNAPSHOTS_PRUNED);
	if (!oldest_kept_covers(dir, seqs[ns > keep ? ns - keep : 0], &pos))
		goto out_sync;
	rc = fg_journal_list(dir, &segs, &nj);
	if (rc < 0)
		goto out_sync;
	for (size_t i = 0; i < nj; i++)
		if (segs[i] < pos.segment && segs[i] != current_segment &&
		    unlink_numbered(dir, "journal-", segs[i], ".fgj") == 0)
			fg_stats_inc(stats, FG_CTR_SEGMENTS_PRUNED);
out_sync:
	rc = fg_datadir_fsync(dir);
out_free:
	free(seqs);
	free(segs);
	return rc;
}
