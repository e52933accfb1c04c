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
 *   {"time":"2026-11-29T16:30:00.123Z","peer":"innfeed-a",
 *    "addr":"192.0.2.1:41234","cmd":"TAKETHIS","id":"<a@b>",
 *    "verdict":"reject","reason":"too-old","article_date":"2026-11-10T00:00:00Z",
 *    "date":"2026-11-10T00:00:00Z","injection_date":null,
 *    "arrival":"2026-11-29T16:30:00Z"}
 *
 * addr: the session's remote address and port, spelt as `floodctl peers`
 * spells it (fg_endpoint_format: "192.0.2.1:41234", "[2001:db8::1]:41234"),
 * or null when the writer has none (a recovery line, a session whose
 * transport gave none). peer is null for a connection that is no peer.
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
#include "floodgate/config.h"
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

/* The remote's family in a record: the ring's own numbers, not the host's
 * AF_ values (the region is a format). */
enum fg_vrec_family {
	FG_VREC_AF_NONE = 0,
	FG_VREC_AF_INET = 4,
	FG_VREC_AF_INET6 = 6,
};

/*
 * One decision, as a writer hands it over (FG_REGION_VREC_SIZE octets).
 *
 *   offset size
 *     0    40   five times (ns; s), as below
 *    40     2   peer index
 *    42     4   verdict, reason, cmd, id_len
 *    46     2   remote port (region layout 3; before: zero)
 *    48   250   Message-ID
 *   298     1   remote family, enum fg_vrec_family (layout 3)
 *   299     1   zero
 *   300    16   remote address (4 octets for IPv4, then zeros)
 *   316   196   zero
 */
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
	uint16_t port;		/* remote port, host order */
	char id[FG_VREC_ID_MAX];
	uint8_t family;		/* enum fg_vrec_family */
	uint8_t reserved;
	uint8_t addr[16];
	uint8_t pad[FG_REGION_VREC_SIZE - 48 - FG_VREC_ID_MAX - 18];
};
_Static_assert(offsetof(struct fg_vrec, port) == 46 && offsetof(struct fg_vrec, family) == 298 &&
	       offsetof(struct fg_vrec, addr) == 300, "verdict-log record layout");
_Static_assert(sizeof(struct fg_vrec) == FG_REGION_VREC_SIZE, "verdict-log record size");

const char *fg_vlog_verdict_name(enum fg_vlog_verdict v);
const char *fg_vlog_cmd_name(enum fg_vlog_cmd c);

/*
 * Writer side: hand one line to floodctld. 0, or -ENOSPC when the ring was
 * full (the line is dropped and counted), or -EINVAL for an out-of-range
 * field (a remote of neither family among them; NULL is none). Does
 * nothing (0) when the log is off. The ID is cut at 250 octets.
 */
int fg_vlog_emit(struct fg_region_writer *w, int64_t time_ns, enum fg_vlog_cmd cmd,
		 int peer, const struct fg_endpoint *remote, const char *id, size_t id_len,
		 enum fg_vlog_verdict verdict,
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
