/* SPDX-License-Identifier: MIT */
/*
 * journal.h — the history journal: every final history transition
 * (accepted, rejected, superseded) as a 32-byte record, from the writers'
 * rings in the shared region to append-only segment files with group
 * commit.
 *
 * Writers (the engine's hosts, the dataplane's workers) call
 * fg_journal_reserve() before they answer for an article and
 * fg_journal_append() after the history transition: the record then always
 * has room, and when the ring is full the writer defers the article instead
 * (CHECK -> 431, TAKETHIS: stop reading) — a record is never dropped.
 * floodctld's ring thread drains the rings into blocks (fg_journal_drain)
 * and makes them durable every journal-commit interval
 * (fg_journal_commit: write, fdatasync); only then are the records
 * released from the rings, which tells each writer how far its records
 * are safe (fg_region_writer_committed).
 *
 * SEGMENT FILE  <data-dir>/journal-<16 hex digits>.fgj, numbered upwards;
 * floodctld always starts a new segment (an old one may end torn), and
 * rotates once a segment passes its size limit. Integers little-endian.
 *
 *   header, 128 bytes:
 *     0   8   magic "FGJOURNL"
 *     8   4   format version (1)
 *     12  4   header size (128)
 *     16  8   segment number
 *     24  8   created (Unix seconds)
 *     32  16  history seed: replay needs it to rebuild a table whose keys
 *             match, even when no snapshot exists yet
 *     48  16  seed check (fg_region_seed_check of that seed's table)
 *     64  60  reserved, zero
 *     124 4   CRC-32C of bytes 0..123
 *   then blocks, back to back:
 *     0   4   magic "FGJB"
 *     4   4   record count n, 1..FG_JBLOCK_MAX
 *     8   2   writer slot the records came from
 *     10  6   reserved, zero
 *     16  8   commit sequence of the journal when the block was drained
 *     24  4   CRC-32C of the block header (this field zero) and records
 *     28  4   reserved, zero
 *     32  32*n records (struct fg_jrec)
 *
 * RECORD (struct fg_jrec, 32 bytes): history key (16), first-seen (8,
 * Unix seconds), article date minus first-seen (4, seconds), final state
 * (1, enum fg_history_state), flags (1: which header gave the date), reject
 * reason (1, enum fg_reason), reserved (1).
 *
 * TOMBSTONE (format version 2): an operator's `floodctl forget`: state
 * ABSENT, flags FG_JREC_F_FORGET, first-seen the time of the forget, the
 * rest zero. Replay removes the ID, and again after the outbound queue's
 * records are re-inserted, unless a queue record is newer than the
 * tombstone (the article came again after the forget). floodctld writes
 * its own records (tombstones, `floodctl remember`) as blocks of writer
 * slot FG_JBLOCK_SLOT_CTLD.
 *
 * A reader stops at the first block that is short, has a bad magic or
 * count, a CRC mismatch or a record with a state that is not final: what
 * precedes it is kept, nothing after it in that segment is trusted. A
 * journal position (segment, offset) names the end of a block; a snapshot
 * records the position it covers.
 */
#ifndef FLOODGATE_JOURNAL_H
#define FLOODGATE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/history.h"
#include "floodgate/region.h"
#include "floodgate/stats.h"

#define FG_JSEG_MAGIC "FGJOURNL"
#define FG_JSEG_VERSION 2	/* 2: tombstones; version 1 segments read too */
#define FG_JSEG_HEADER 128u
#define FG_JBLOCK_MAGIC 0x424a4746u	/* "FGJB" */
#define FG_JBLOCK_HEADER 32u
#define FG_JBLOCK_MAX 4096u
#define FG_JSEG_BYTES_DEFAULT (64ull << 20)

/* Which header gave the article date (RFC 5537 3: Injection-Date if
 * present, else Date). */
#define FG_JREC_F_DATE_INJECTION 0x1u
#define FG_JREC_F_DATE_DATE 0x2u
#define FG_JREC_F_DATE_MASK 0x3u
#define FG_JREC_F_FORGET 0x4u		/* a tombstone (state ABSENT) */

#define FG_JBLOCK_SLOT_CTLD 0xffffu	/* floodctld's own records */

struct fg_jrec {
	uint64_t key_lo;
	uint64_t key_hi;
	int64_t first_seen;
	int32_t date_off;
	uint8_t state;
	uint8_t flags;
	uint8_t reason;
	uint8_t reserved;
};
_Static_assert(sizeof(struct fg_jrec) == FG_REGION_JREC_SIZE, "record size");

struct fg_jpos {
	uint64_t segment;
	uint64_t offset;
};

/* a < b: -1, equal 0, a > b: 1 */
int fg_jpos_cmp(const struct fg_jpos *a, const struct fg_jpos *b);

/* ---- writer side ---- */

/* Set room aside for one record: 0, or -ENOSPC (defer the article). */
int fg_journal_reserve(struct fg_region_writer *w);
void fg_journal_unreserve(struct fg_region_writer *w);

/*
 * Journal a final transition. Uses a reservation when one is held.
 * `flags` is FG_JREC_F_DATE_* (0: unknown), `reason` FG_REASON_NONE for
 * an accept. 0, -ENOSPC (ring full, no reservation: counted as
 * journal_ring_full), -EINVAL (not a final state, date offset beyond
 * int32).
 */
int fg_journal_append(struct fg_region_writer *w, const struct fg_history_key *k,
		      enum fg_history_state final, fg_time_t article_date,
		      fg_time_t first_seen, unsigned flags, enum fg_reason reason);

/* ---- records ---- */

/* A tombstone for k, forgotten at `when`. */
void fg_jrec_make_forget(struct fg_jrec *r, const struct fg_history_key *k, fg_time_t when);
static inline bool fg_jrec_is_forget(const struct fg_jrec *r)
{
	return (r->flags & FG_JREC_F_FORGET) != 0;
}

/* Fill a record; -EINVAL as fg_journal_append. */
int fg_jrec_make(struct fg_jrec *r, const struct fg_history_key *k, enum fg_history_state final,
		 fg_time_t article_date, fg_time_t first_seen, unsigned flags,
		 enum fg_reason reason);
bool fg_jrec_valid(const struct fg_jrec *r);
const char *fg_jrec_date_source(unsigned flags);	/* "Injection-Date", "Date", "unknown" */

/* ---- segment files (floodctld) ---- */

struct fg_journal;

struct fg_journal_params {
	const char *dir;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	struct fg_history_key seed_check;
	uint64_t segment_bytes;		/* rotate once a segment is larger */
	int (*sync_fn)(int fd);		/* NULL: fdatasync; tests inject failures */
};

/* Start a new segment after the newest in dir (file and directory
 * fsynced before it returns). NULL and *err. `stats` receives the
 * journal counters (floodctld's block). */
struct fg_journal *fg_journal_open(const struct fg_journal_params *p, struct fg_stats *stats,
				   int *err);
/* Free the handle; the caller commits first. */
void fg_journal_close(struct fg_journal *j);

/* Copy up to max_per_slot records from each slot's ring into blocks
 * (written to the segment as the buffer fills); they stay in their ring
 * until a commit makes them durable. Returns records copied or -errno (a
 * write failed; nothing is lost, the records stay in their rings). */
int64_t fg_journal_drain(struct fg_journal *j, struct fg_region *r, unsigned max_per_slot);

/*
 * Group commit: write what is buffered, fdatasync, then release the
 * copied records from their rings (the writers' committed counts), then
 * rotate if the segment is over its size. 0 or -errno: nothing is
 * released, and the segment is abandoned — after a failed write or sync
 * the kernel may already have dropped data that a later fsync would call
 * durable — so the unreleased records are copied again, from their rings,
 * into a new segment (created at the next commit, retried until it can be).
 */
int fg_journal_commit(struct fg_journal *j, struct fg_region *r);

/*
 * floodctld's own records (tombstones, remembered IDs), as one block of
 * slot FG_JBLOCK_SLOT_CTLD after what is drained already; durable at the
 * next fg_journal_commit, which the caller runs before it answers. 0,
 * -EINVAL (a record fg_jrec_valid refuses, or n out of 1..FG_JBLOCK_MAX),
 * or -errno (no segment could be created, a write failed).
 */
int fg_journal_add(struct fg_journal *j, const struct fg_jrec *recs, unsigned n);

/* Position after the last block handed to the file, and after the last
 * block known durable. */
void fg_journal_position(const struct fg_journal *j, struct fg_jpos *appended,
			 struct fg_jpos *durable);
/* Records copied but not yet durable. */
uint64_t fg_journal_uncommitted(const struct fg_journal *j);
/* Monotonic ns of the last successful commit (0: none). */
uint64_t fg_journal_last_commit_ns(const struct fg_journal *j);

/* ---- reading segments ---- */

struct fg_jseg_info {
	uint64_t segment;
	fg_time_t created;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	struct fg_history_key seed_check;
};

struct fg_jseg_scan {
	struct fg_jseg_info info;
	uint64_t records;	/* records passed to fn */
	uint64_t blocks;
	uint64_t end;		/* offset after the last sound block */
	uint64_t size;		/* octets in the image */
	bool torn;		/* octets after `end` that are not a sound block */
	const char *why;	/* what stopped the scan, when torn */
};

/* Validate a segment header: 0, or -EINVAL with *why, or -EPROTONOSUPPORT
 * (another format version, named in *why: datadir.h). */
int fg_jseg_header(const void *buf, size_t len, struct fg_jseg_info *out, const char **why);

typedef int fg_jrec_fn(void *arg, const struct fg_jrec *r);

/*
 * Walk the sound blocks of a segment image from `from` (an offset at a
 * block boundary; FG_JSEG_HEADER for the start), calling fn for each
 * record. Stops at the first unsound block (out->torn, out->why). Returns
 * 0, -EINVAL for a bad header or -EPROTONOSUPPORT for another version
 * (nothing read; out->why), or fn's first negative return (which stops
 * the walk).
 */
int fg_jseg_scan(const void *buf, size_t len, uint64_t from, fg_jrec_fn *fn, void *arg,
		 struct fg_jseg_scan *out);

/* Path of a segment in dir. */
int fg_journal_segment_path(const char *dir, uint64_t segment, char *out, size_t len);
/* Segment numbers present in dir, ascending (malloc'd; *n may be 0). */
int fg_journal_list(const char *dir, uint64_t **segments, size_t *n);

#endif /* FLOODGATE_JOURNAL_H */
