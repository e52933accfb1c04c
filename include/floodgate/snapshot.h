/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h — crash-consistent images of the history table, and the
 * restore that rebuilds the shared region from them and the journal.
 *
 * FILE  <data-dir>/snapshot-<16 hex seq>.fgs, written as
 * snapshot-<seq>.fgs.tmp, then fsync, rename, fsync of the directory: a
 * crash leaves either the old set of snapshots or the new one, never a
 * partial file under a snapshot's name. Integers little-endian.
 *
 *   header, 4096 bytes (the image that follows is page-aligned):
 *     0    8   magic "FGSNAPSH"
 *     8    4   format version (1)
 *     12   4   header size (4096)
 *     16   8   sequence number
 *     24   8   created (Unix seconds)
 *     32   8   journal segment \  the journal position it covers: every
 *     40   8   journal offset  /  record before it is in the image
 *     48   8   image size
 *     56   16  history seed
 *     72   16  seed check (fg_region_seed_check)
 *     88   8   capacity (slots)
 *     96   8   entries when taken
 *     104  3988 reserved, zero
 *     4092 4   CRC-32C of bytes 0..4091
 *   4096  image: fg_history_image_copy's sealed image (its own header,
 *         CRC-32C over all of it; fg_history_image_check verifies it)
 *
 * Why the position is right: a writer journals a record only after the
 * history transition it describes. floodctld commits the journal and
 * reads its position P, then copies the table: every record before P
 * was drained before the copy began, so its entry was in the table for
 * the whole copy, and fg_history_image_copy keeps every such entry.
 * Records after P may be in the image too; replaying them is harmless
 * (insert-if-absent).
 *
 * RESTORE (fg_restore) when floodctld starts without a usable region:
 *  1. newest snapshot first: header, image checksum, seed check. One that
 *     fails is set aside (renamed *.bad, never deleted), logged as an
 *     error, and the previous one is tried;
 *  2. the journal from the snapshot's position (or, with no sound
 *     snapshot, every segment; the seed comes from the segment headers)
 *     is replayed with fg_history_insert_final. A segment stops at its
 *     first unsound block: everything before it is kept. A torn tail of
 *     the newest segment is the normal trace of a crash and is cut off;
 *     damage anywhere else is reported loudly and the segment is set
 *     aside once a new snapshot covers it;
 *  3. every extra source (the relay's outbound queue, issue 8) re-inserts
 *     what it holds from after the snapshot's creation;
 *  4. nothing at all on disk: a new, empty table with a fresh seed.
 */
#ifndef FLOODGATE_SNAPSHOT_H
#define FLOODGATE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/history.h"
#include "floodgate/journal.h"
#include "floodgate/region.h"
#include "floodgate/stats.h"

#define FG_SNAP_MAGIC "FGSNAPSH"
#define FG_SNAP_VERSION 1
#define FG_SNAP_HEADER 4096u

struct fg_snap_info {
	uint64_t seq;
	fg_time_t created;
	struct fg_jpos covers;
	uint64_t image_size;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	struct fg_history_key seed_check;
	uint64_t capacity;
	uint64_t entries;
};

/* Validate a snapshot header (the first FG_SNAP_HEADER octets, untrusted).
 * 0, -EINVAL with *why, or -EPROTONOSUPPORT: another format version
 * (*why names it: datadir.h). */
int fg_snapshot_header(const void *buf, size_t len, struct fg_snap_info *out, const char **why);
/* The header fg_snapshot_write puts in front of an image (FG_SNAP_HEADER
 * octets, checksummed). */
void fg_snapshot_header_encode(void *buf, const struct fg_snap_info *info);

/*
 * Write snapshot `seq` of `h` covering journal position `covers` into dir
 * (temp file, image copy, fsync, rename, fsync dir). Runs alongside
 * the writers. 0 or -errno (the temp file is removed).
 */
int fg_snapshot_write(const char *dir, uint64_t seq, struct fg_history *h,
		      const uint8_t seed[FG_HISTORY_SEED_LEN], const struct fg_jpos *covers,
		      struct fg_snap_info *out);
/* The same at most `rate` image bytes a second (0: at full speed), the
 * copied part handed to writeback as it goes (snapshot-rate). */
int fg_snapshot_write_paced(const char *dir, uint64_t seq, struct fg_history *h,
			    const uint8_t seed[FG_HISTORY_SEED_LEN], const struct fg_jpos *covers,
			    uint64_t rate, struct fg_snap_info *out);

/* A snapshot file mapped read-only, header checked (not yet the image). */
struct fg_snap_file {
	int fd;
	void *map;
	size_t len;
	struct fg_snap_info info;
	const void *img;
	size_t img_len;
};

/* 0, or -errno / -EINVAL / -EPROTONOSUPPORT with the reason in why. */
int fg_snapshot_open(const char *path, struct fg_snap_file *f, char *why, size_t whylen);
void fg_snapshot_close(struct fg_snap_file *f);

int fg_snapshot_path(const char *dir, uint64_t seq, char *out, size_t len);
/* Sequence numbers present, ascending (malloc'd). */
int fg_snapshot_list(const char *dir, uint64_t **seqs, size_t *n);

/*
 * Keep the newest `keep` snapshots, delete older ones, and delete journal
 * segments that the oldest kept snapshot covers entirely (numbers below
 * its position's segment), never `current_segment`. Set-aside files are
 * never touched. Counts go to `stats`. 0 or -errno.
 */
int fg_snapshot_prune(const char *dir, unsigned keep, uint64_t current_segment,
		      struct fg_stats *stats);

/* ---- restore ---- */

/* An extra source of IDs to re-insert (issue 8: the outbound queue). */
struct fg_restore_source {
	const char *name;
	/* Insert as accepted every ID it recorded after `since` (a snapshot's
	 * creation time; 0 when there was no snapshot). Returns the number
	 * inserted, or -errno (logged; the restore goes on). */
	int64_t (*replay)(void *arg, struct fg_history *h, fg_time_t since, fg_time_t now);
	void *arg;
};

struct fg_restore_params {
	const char *data_dir;
	const char *shm_path;
	/* writers and ring sizes; history_size and seed are the restore's */
	struct fg_region_params region;
	/* the table to build when no snapshot is sound (capacity, side index,
	 * policy, alarm); its seed comes from the journal, or is new */
	struct fg_history_params history;
	fg_time_t now;
	unsigned threads;		/* for the table's shards; 0 = one per online CPU */
	const struct fg_restore_source *sources;
	unsigned n_sources;
};

enum fg_restore_from {
	FG_RESTORE_SNAPSHOT = 0,	/* a snapshot + the journal after it */
	FG_RESTORE_JOURNAL = 1,		/* no sound snapshot: the journal alone */
	FG_RESTORE_EMPTY = 2,		/* nothing on disk: a new, empty table */
};

#define FG_RESTORE_DAMAGED_MAX 16

struct fg_restore_result {
	enum fg_restore_from from;
	struct fg_snap_info snapshot;		/* from == SNAPSHOT */
	unsigned snapshots_set_aside;
	uint64_t segments;			/* segments read */
	uint64_t records;			/* records read */
	uint64_t inserted, duplicates, out_of_range, table_full;
	uint64_t forgotten;			/* tombstones that removed an entry */
	uint64_t forgotten_again;		/* ... and again after the queue's records */
	bool torn_tail;				/* the newest segment ended torn (cut) */
	struct fg_jpos torn_at;
	unsigned segments_set_aside;
	/* damaged mid-journal segments: set aside once a snapshot covers them */
	uint64_t damaged[FG_RESTORE_DAMAGED_MAX];
	unsigned n_damaged;
	int64_t source_inserted;
	double seconds;			/* all of it */
	double table_seconds;		/* the snapshot (or a new table) into the region */
	double journal_seconds;		/* the journal replay */
};

const char *fg_restore_from_name(enum fg_restore_from f);

/*
 * Build a new region at p->shm_path from the data directory (see above).
 * Returns the region (history set, not yet published) or NULL with why.
 */
struct fg_region *fg_restore(const struct fg_restore_params *p, struct fg_restore_result *res,
			     char *why, size_t whylen);

#endif /* FLOODGATE_SNAPSHOT_H */
