/* SPDX-License-Identifier: MIT */
/*
 * queue.h — the durable outbound queue: every accepted article, exactly as
 * it arrived, made safe on disk before its 239/235 goes out, and kept until
 * every downstream server has acknowledged it.
 *
 * Who runs what:
 *   engine threads   one sink handle each (fg_queue_sink_ops, sink.h): an
 *                    article's pieces are held (or copied) as they arrive;
 *                    commit() hands it to the writer through a lock-free
 *                    single-producer ring — no disk I/O on this thread
 *   writer thread    appends records to the current segment, makes them
 *                    durable with fdatasync at once (group commit: what
 *                    arrives during a sync shares the next; config
 *                    queue-commit bounds a group, default 10 ms), hands the
 *                    completions back through a ring per handle (the
 *                    engine's poll() delivers them: only then 239/235),
 *                    persists the consumers' cursors, rotates and deletes
 *                    segments, and decides whether new articles are refused
 *   relay thread     a consumer per downstream (relay.h): reads durable
 *                    records, acknowledges them with a cursor
 *   floodctld        fg_queue_restore_source() re-inserts the IDs of the
 *                    records after a snapshot; fg_queue_inspect() for
 *                    metrics. Both only read the files.
 *
 * FILES, in the data directory (flat, next to the journal; the power-loss
 * simulation watches it). Integers little-endian, CRC-32C (crc32c.h).
 *
 *   queue-<16 hex>.fgq   segments, numbered upwards. Header, 64 octets:
 *     0   8  magic "FGQSEGMT"
 *     8   4  format version (2; 1 is read too; another is refused, the
 *            queue does not open)
 *     12  4  header size (64)
 *     16  8  segment number
 *     24  8  base: queue position of its first record
 *     32  8  record number of its first record
 *     40  8  created (Unix seconds)
 *     48  12 reserved, zero
 *     60  4  CRC-32C of bytes 0..59
 *   then records, back to back, each 8-aligned (version 2; a version-1
 *   segment holds version-1 records, below):
 *     0   4  magic "FGQD"
 *     4   4  CRC-32C of bytes 8..H-1, the Message-ID and the article
 *     8   8  record number (one more than the previous record's)
 *     16  8  arrival: when the writer took it (Unix seconds)
 *     24  4  article length (octets of wire form)
 *     28  2  Message-ID length, 3..250
 *     30  2  peer index (the engine's, for the operator; 0xffff none)
 *     32  1  route count n, 0..8: the downstreams it goes to (feeds.h)
 *     33  1  route flags: 0x1 every downstream (the writer's caller did
 *            not route; n is then 0); other bits zero
 *     34  6  reserved, zero
 *     40  8n the downstreams' identifiers (fg_config_ident of their id)
 *     H = 40 + 8n: the Message-ID, then the article in wire form — CRLF
 *            lines, dot-stuffed, without the ".\r\n" terminator, byte for
 *            byte as the peer sent it (the filter is transparent) — then
 *            zero padding to a multiple of 8.
 *   A version-1 record is the same without bytes 32..H-1 (H = 32), magic
 *   "FGQR": it goes to every downstream, as it did when it was written.
 *   The route is decided once, when the article is queued: a reload never
 *   re-judges a queued article, and a downstream that is no longer
 *   configured is simply not among the readers.
 *
 *   cursor-<name>.fgc    one per downstream: where its deliveries stand.
 *     Two 64-octet slots (at 0 and 64), written alternately, each:
 *     0 magic "FGQCURSR", 8 sequence, 16 position, 24 record number,
 *     32 updated (Unix seconds), 40 reserved, 48 slot format version
 *     (FG_QUEUE_SLOT_VERSION, 1; 0 in files written before the field: the
 *     same layout), 52 reserved, 60 CRC-32C of 0..59.
 *     The sound slot with the higher sequence wins, so a torn write of
 *     one slot falls back to the previous cursor. A slot of a newer
 *     version is refused (the queue does not open): docs/compat.md.
 *
 *   queue-head.fgh       the writer's view for readers in other processes
 *     (same layout as a cursor slot, magic "FGQHEAD\0", position and
 *     record number of the durable end; bytes on disk at 40). Rewritten
 *     at each commit, never synced: information, not state.
 *
 * POSITIONS. The queue is one byte stream cut into segments: a record's
 * position is its segment's base plus its offset after the header, so
 * positions only grow and a cursor is one number. A record is durable
 * once the writer's fdatasync covering it returned; readers never look
 * past the durable end the writer publishes (fg_queue_durable).
 *
 * CRASHES. A segment is scanned from its header; the first record that is
 * short, has a bad magic, length, record number or checksum ends it:
 * nothing after it is trusted. At open the writer scans every segment,
 * cuts a torn tail (truncate + fdatasync, counted and logged) and always
 * starts a new segment, so a position is never written twice. Damage in
 * the middle of a segment (not a crash: a crash only tears the newest
 * segment's unsynced tail) is reported loudly; what follows it in that
 * segment is lost to the relay, and counted.
 *
 * DELETION. A segment that is no longer written (sealed) is deleted once
 * every consumer's durable cursor is at or past its end — and, when a
 * gate is given, once the history journal holds every ID in it (so an ID
 * that got 239 is never forgotten, even if both processes die right
 * after the relay delivered it).
 *
 * REFUSAL. New articles are refused (begin() -EAGAIN, full() true: the
 * engine answers CHECK 431 and stops reading before a TAKETHIS) while the
 * queue holds `limit` octets or more (until it is back under 90 % of it),
 * while its oldest undelivered record is older than `max_age`, after a
 * write failed for lack of space (until a probe write succeeds again), and
 * while a handle has no free article slot. An article already taken is
 * finished: written and acknowledged, or failed (-errno: the engine
 * answers 400 and closes, and the peer offers it again later). Never a
 * 239 for an article that is not on disk.
 */
#ifndef FLOODGATE_QUEUE_H
#define FLOODGATE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/feeds.h"
#include "floodgate/history.h"

#define FG_QUEUE_SEG_MAGIC "FGQSEGMT"
#define FG_QUEUE_VERSION 2		/* written */
#define FG_QUEUE_VERSION_OLDEST 1	/* read: 1 and 2 */
#define FG_QUEUE_SLOT_VERSION 1	/* cursor, head and warm-up slots */
#define FG_QUEUE_SEG_HEADER 64u
#define FG_QUEUE_REC_MAGIC 0x44514746u	/* "FGQD": version 2 */
#define FG_QUEUE_REC_MAGIC_V1 0x52514746u	/* "FGQR" */
#define FG_QUEUE_REC_HEADER 40u		/* version 2, without its route */
#define FG_QUEUE_REC_HEADER_V1 32u
#define FG_QUEUE_REC_HEADER_MAX (FG_QUEUE_REC_HEADER + 8u * FG_FEEDS_MAX)
#define FG_QUEUE_ROUTE_ALL 0x1u
#define FG_QUEUE_ID_MIN 3		/* "<a>" is the shortest an engine accepts */
#define FG_QUEUE_ID_MAX 250		/* RFC 5536 3.1.3 */
#define FG_QUEUE_PEER_NONE 0xffffu
#define FG_QUEUE_CURSOR_MAGIC "FGQCURSR"
#define FG_QUEUE_HEAD_MAGIC "FGQHEAD"
#define FG_QUEUE_SLOT 64u
#define FG_QUEUE_SEGMENT_MAX (64ull << 20)
#define FG_QUEUE_SEGMENT_MIN (64ull << 10)
#define FG_QUEUE_SEG_PREFIX "queue-"
#define FG_QUEUE_SEG_SUFFIX ".fgq"

/* ---- the on-disk format (qfmt.c) ---- */

struct fg_queue_seg_info {
	uint64_t segment;
	uint64_t base;			/* position of the first record */
	uint64_t first_recno;
	fg_time_t created;
	uint32_t version;		/* decode: the segment's format version */
};

/* A record as read from a segment. */
struct fg_queue_rec {
	uint64_t recno;
	fg_time_t arrival;
	uint32_t art_len;
	uint16_t id_len;
	uint16_t peer;
	uint32_t crc;
	uint32_t version;		/* 1 or 2, by its magic */
	uint32_t hdr_len;		/* header with its route: where the ID starts */
	struct fg_feeds_set route;	/* version 1: every downstream. Filled only when
					 * the decoded octets reach hdr_len */
	bool route_read;
	uint64_t size;			/* whole record: header, ID, article, padding */
	const char *id;			/* in the scanned buffer (scans only) */
	const uint8_t *art;
};

/* Octets of a (version 2) record header with this route. */
static inline uint32_t fg_queue_rec_hdr_len(const struct fg_feeds_set *route)
{
	return FG_QUEUE_REC_HEADER + (route && !route->all ? 8u * route->n : 0u);
}

/* Octets a record takes: header (hdr_len), ID, article, padding. */
static inline uint64_t fg_queue_rec_size(uint32_t hdr_len, size_t id_len, uint64_t art_len)
{
	return (hdr_len + id_len + art_len + 7) & ~7ull;
}

void fg_queue_seg_header_encode(uint8_t out[FG_QUEUE_SEG_HEADER],
				const struct fg_queue_seg_info *si);
/* 0, -EINVAL with *why (untrusted input), or -EPROTONOSUPPORT (another
 * format version, named in *why). */
int fg_queue_seg_header_decode(const void *buf, size_t len, struct fg_queue_seg_info *out,
			       const char **why);

/* What a (version 2) record header says besides its checksum. route NULL:
 * every downstream. */
struct fg_queue_rec_fields {
	uint64_t recno;
	fg_time_t arrival;
	uint32_t art_len;
	uint16_t id_len;
	uint16_t peer;
	const struct fg_feeds_set *route;
};

/* The record header for an ID and article whose CRC-32C over the ID and
 * article (in that order, seeded with the header's own bytes 8..H-1 — see
 * fg_queue_rec_crc_start) is `crc`. Returns its length H. */
uint32_t fg_queue_rec_header_encode(uint8_t out[FG_QUEUE_REC_HEADER_MAX],
				    const struct fg_queue_rec_fields *f, uint32_t crc);
/* The CRC state after bytes 8..H-1 of a header with these fields: continue
 * it with fg_crc32c over the ID and the article pieces. */
uint32_t fg_queue_rec_crc_start(const struct fg_queue_rec_fields *f);

/* Decode a record header of either version (by its magic; fields only,
 * no checksum: the ID and article may not be in hand). The route is read
 * when `len` reaches it (out->route_read). 0, or -EINVAL with *why. */
int fg_queue_rec_header_decode(const void *buf, size_t len, struct fg_queue_rec *out,
			       const char **why);

/* Check a whole record at the start of buf (avail octets): header, size
 * within avail, ID syntax, record number (`expect_recno`, or any when
 * UINT64_MAX), checksum. 0 and *out (id/art point into buf), or -EINVAL
 * with *why. */
int fg_queue_rec_check(const void *buf, size_t avail, uint64_t expect_recno,
		       struct fg_queue_rec *out, const char **why);

struct fg_queue_scan {
	struct fg_queue_seg_info info;
	uint64_t records;		/* sound records passed to fn */
	uint64_t end;			/* file offset after the last sound record */
	uint64_t next_recno;		/* record number after the last sound one */
	bool torn;			/* octets after `end` that are not a sound record */
	const char *why;		/* what ended the scan, when torn */
};

/* fn's return: 0 go on, > 0 stop (not an error), < 0 stop with that error. */
typedef int fg_queue_rec_fn(void *arg, const struct fg_queue_rec *r, uint64_t pos);

/*
 * Walk a segment image (the whole file in memory): the header, then every
 * sound record, calling fn with its queue position (may be NULL). Stops at
 * the first unsound record (out->torn). Returns 0, -EINVAL for a bad header
 * or -EPROTONOSUPPORT for another version (nothing walked; out->why), or
 * fn's negative return.
 */
int fg_queue_seg_scan(const void *buf, size_t len, fg_queue_rec_fn *fn, void *arg,
		      struct fg_queue_scan *out);

/* A cursor or head slot. */
struct fg_queue_cursor {
	uint64_t pos;
	uint64_t recno;
};

struct fg_queue_slot {
	uint64_t seq;
	struct fg_queue_cursor c;
	fg_time_t updated;
	uint64_t extra;			/* head: octets on disk; cursors: 0 */
	uint32_t version;		/* decode: as found (0: before versions) */
};

void fg_queue_slot_encode(uint8_t out[FG_QUEUE_SLOT], const char magic[8],
			  const struct fg_queue_slot *s);
/* 0, -EINVAL (bad magic or checksum), or -EPROTONOSUPPORT: a version
 * newer than FG_QUEUE_SLOT_VERSION (out->version names it). */
int fg_queue_slot_decode(const void *buf, const char magic[8], struct fg_queue_slot *out);
/* Of two slots (128 octets), the sound one with the higher sequence:
 * 0, -ENOENT when neither is sound, -EPROTONOSUPPORT when either has a
 * newer version (out->version). */
int fg_queue_slots_pick(const void *buf, size_t len, const char magic[8],
			struct fg_queue_slot *out);

/* File names in dir. 0 or -ENAMETOOLONG / -EINVAL (a name the config
 * would refuse). */
int fg_queue_segment_path(const char *dir, uint64_t segment, char *out, size_t len);
int fg_queue_cursor_path(const char *dir, const char *name, char *out, size_t len);
int fg_queue_head_path(const char *dir, char *out, size_t len);

/* ---- readers in other processes (qread.c) ---- */

/* Everything needed by floodctld's restore (snapshot.h, fg_restore_source):
 * arg is the data directory (const char *). Re-inserts as accepted every
 * ID of the records that arrived after `since` minus FG_QUEUE_REPLAY_SLACK
 * (their history transition may have come a moment after the snapshot
 * began), with the article's own date (Injection-Date, else Date) and the
 * record's arrival as first-seen. */
#define FG_QUEUE_REPLAY_SLACK 300
int64_t fg_queue_replay(void *arg, struct fg_history *h, fg_time_t since, fg_time_t now);

/*
 * A writer died with transfers ACCEPTING (history.h, "a writer that
 * died"): the queue decides. Every record whose ID has an ACCEPTING entry
 * of `owner` (FG_HISTORY_OWNER_ANY: of anyone) makes it ACCEPTED — the
 * article is on disk and the relay will deliver it, whether or not its
 * 239 went out. Segments are read newest first, each up to its last sound
 * record (what the writer's next open keeps); the walk ends when every
 * such entry is settled, or at a segment whose records all arrived before
 * `since` minus FG_QUEUE_REPLAY_SLACK (the owner's claim: nothing of it
 * is older).
 *
 * Hooks (NULL: none) record each settlement: reserve() before an entry is
 * settled (0, or -EAGAIN: stop here and return -EAGAIN — call again later,
 * the settled ones are ACCEPTING no more), unreserve() when it was not
 * one, settled() after. Returns the number settled, or -errno.
 */
struct fg_queue_settle_hooks {
	int (*reserve)(void *arg);
	void (*unreserve)(void *arg);
	void (*settled)(void *arg, const struct fg_queue_rec *r, const struct fg_history_key *k,
			fg_time_t article_date);
	void *arg;
};
int64_t fg_queue_settle(const char *dir, struct fg_history *h, unsigned owner, fg_time_t since,
			fg_time_t now, const struct fg_queue_settle_hooks *hooks);

struct fg_queue_status_consumer {
	char name[FG_CONFIG_NAME_MAX];
	bool found;			/* a cursor file exists */
	struct fg_queue_cursor c;
	uint64_t lag_records, lag_bytes;
	int64_t lag_seconds;		/* age of its oldest unacknowledged record; 0 none */
};

struct fg_queue_status {
	bool present;			/* a head file was found */
	uint64_t segments;
	uint64_t bytes;			/* octets of segment files */
	struct fg_queue_cursor begin, end;	/* oldest record on disk, durable end */
	int64_t oldest_seconds;		/* age of the oldest unacknowledged record; 0 none */
	/* the configuration's bounds past which new offers are deferred
	 * (queue-limit, queue-max-age; 0: off), for alerting on the nearness */
	uint64_t limit_bytes;
	int64_t max_age_seconds;
	unsigned n_consumers;
	struct fg_queue_status_consumer consumer[FG_CONFIG_MAX_DOWNSTREAMS];
};

/* The queue as its files say now, with the lag of each configured
 * downstream. 0, -EPROTONOSUPPORT (a head or cursor file of a newer
 * format version), or -errno. */
int fg_queue_inspect(const char *dir, const struct fg_config *cfg, fg_time_t now,
		     struct fg_queue_status *out);

/* The article date of a record's article (wire form): Injection-Date if
 * present and valid, else Date. 0, or -ENOENT (neither parses). */
int fg_queue_article_date(const uint8_t *art, size_t len, fg_time_t *out);

#endif /* FLOODGATE_QUEUE_H */
