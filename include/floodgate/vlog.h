/* SPDX-License-Identifier: MIT */
/*
 * vlog.h — the verdict log: an optional line per decision (INN's news
 * log, structured), from each writer's ring in the region to rotating
 * files written by floodctld.
 *
 * It is a log, not state: a writer whose ring is full drops the line and
 * counts it (floodgate_verdict_log_dropped_total); it never waits. When
 * the log is off (config [stats] verdict-log off) writers skip it
 * entirely (fg_region_vlog_on).
 *
 * LINE (one JSON object per line, fields always in this order):
 *
 *   {"time":"2026-11-29T16:30:00.123Z","peer":"innfeed-a","cmd":"TAKETHIS",
 *    "id":"<a@b>","verdict":"reject","reason":"too-old",
 *    "article_date":"2026-11-10T00:00:00Z","date":"2026-11-10T00:00:00Z",
 *    "injection_date":null,"arrival":"2026-11-29T16:30:00Z"}
 *
 * cmd: CHECK, TAKETHIS, IHAVE, or "recovery" — an accept floodctld
 * recorded for a writer that died after the article was durable in the
 * queue and before it answered (region.h, reaping). verdict: want
 * (238/335), accept (239/235), reject (439/437), refuse (438/435), defer
 * (431/436); reason: a reject reason (tbl/reasons.h) or
 * "none"; dates null when absent or unparsed. The three times of seed 002
 * are kept apart: the article's Date, its Injection-Date, and arrival.
 *
 * FILES  <verdict-log>, rotated by size: at verdict-log-rotate octets the
 * file becomes <verdict-log>.1, .1 becomes .2, ... and the oldest beyond
 * verdict-log-keep files in all is deleted.
 */
#ifndef FLOODGATE_VLOG_H
#define FLOODGATE_VLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/region.h"
#include "floodgate/sbuf.h"

#define FG_VREC_ID_MAX 250
#define FG_VREC_PEER_NONE 0xffffu

enum fg_vlog_verdict {
	FG_VLOG_WANT = 0,	/* 238, 335 */
	FG_VLOG_ACCEPT,		/* 239, 235 */
	FG_VLOG_REJECT,		/* 439, 437 */
	FG_VLOG_REFUSE,		/* 438, 435 */
	FG_VLOG_DEFER,		/* 431, 436 */
	FG_VLOG__COUNT
};

enum fg_vlog_cmd {
	FG_VLOG_CHECK = 0,
	FG_VLOG_TAKETHIS,
	FG_VLOG_IHAVE,
	/* not a command: floodctld settled a dead writer's transfer from the
	 * queue (the article was durable; its peer never saw the answer) */
	FG_VLOG_RECOVERY,
	FG_VLOG_CMD__COUNT
};

/* One decision, as a writer hands it over (FG_REGION_VREC_SIZE octets). */
struct fg_vrec {
	int64_t time_ns;	/* decision, CLOCK_REALTIME ns */
	int64_t article_date;	/* 0: unknown */
	int64_t date;		/* Date header; 0: absent or unparsed */
	int64_t injection_date;	/* Injection-Date; 0: absent or unparsed */
	int64_t arrival;	/* local first-seen of the article; 0: none (CHECK) */
	uint16_t peer;		/* fg_region_peer_index, or FG_VREC_PEER_NONE */
	uint8_t verdict;
	uint8_t reason;
	uint8_t cmd;
	uint8_t id_len;
	uint8_t reserved[2];
	char id[FG_VREC_ID_MAX];
	uint8_t pad[FG_REGION_VREC_SIZE - 48 - FG_VREC_ID_MAX];
};
_Static_assert(sizeof(struct fg_vrec) == FG_REGION_VREC_SIZE, "verdict-log record size");

const char *fg_vlog_verdict_name(enum fg_vlog_verdict v);
const char *fg_vlog_cmd_name(enum fg_vlog_cmd c);

/*
 * Writer side: hand one line to floodctld. 0, or -ENOSPC when the ring was
 * full (the line is dropped and counted), or -EINVAL for an out-of-range
 * field. Does nothing (0) when the log is off. The ID is cut at 250 octets.
 */
int fg_vlog_emit(struct fg_region_writer *w, int64_t time_ns, enum fg_vlog_cmd cmd,
		 int peer, const char *id, size_t id_len, enum fg_vlog_verdict verdict,
		 enum fg_reason reason, fg_time_t article_date, fg_time_t date,
		 fg_time_t injection_date, fg_time_t arrival);

/* Format one record as a line (with its newline); `peer` is its name or
 * NULL. Untrusted fields (a damaged ring) are clamped, never trusted. */
void fg_vlog_format(struct fg_sbuf *b, const struct fg_vrec *rec, const char *peer);

/* ---- floodctld: the files ---- */

struct fg_vlog_file;

/* Open (append) `path`, rotating at `rotate` octets, `keep` files in all. */
struct fg_vlog_file *fg_vlog_open(const char *path, uint64_t rotate, unsigned keep, int *err);
void fg_vlog_close(struct fg_vlog_file *f);
/* Change rotation settings (reload). */
void fg_vlog_settings(struct fg_vlog_file *f, uint64_t rotate, unsigned keep);
const char *fg_vlog_path(const struct fg_vlog_file *f);

/* Write up to `max` lines from every slot's ring; counts go to `stats`
 * (verdict_log_lines, verdict_log_rotations). Returns lines written, or
 * -errno on a write failure (those lines are dropped and counted). With
 * f NULL, the rings are emptied and their lines counted as dropped. */
int64_t fg_vlog_drain(struct fg_vlog_file *f, struct fg_region *r, unsigned max,
		      struct fg_stats *stats);

#endif /* FLOODGATE_VLOG_H */
