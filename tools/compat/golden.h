/* SPDX-License-Identifier: MIT */
/*
 * golden.h — the golden files of every on-disk and shared-memory format
 * (tests/data/compat/, docs/compat.md): what they hold, and the writer
 * that makes them, deterministically, with this build's own encoders.
 *
 * Each format's files are named v<version>.<ext> (a snapshot
 * v<version>-history<layout of its image>.fgs), one per version a build
 * ever wrote: a build writes only its own versions, the older files stay
 * committed, and tests/unit/test_compat.c reads every one of them. So a
 * later build proves it still reads (or upgrades) what an earlier one
 * wrote, and refuses a newer version loudly.
 *
 * The content, the same in every version (the test checks it field by
 * field): a history table of GOLDEN_CAPACITY slots with seed 00 01 .. 0f
 * and GOLDEN_IDS IDs "<golden-N@compat.test>", N even accepted, N odd
 * rejected (too old); a journal segment holding the same transitions; a
 * queue segment with the first GOLDEN_QUEUED IDs' articles (and, from
 * version 2, their routes: fg_golden_route); a cursor past
 * the first record (two slots written); the head at the queue's end; a
 * warm-up end; a region header for the table. All times from GOLDEN_TIME.
 */
#ifndef FLOODGATE_TOOLS_GOLDEN_H
#define FLOODGATE_TOOLS_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/feeds.h"
#include "sha256.h"

#define GOLDEN_TIME ((fg_time_t)1767225600)	/* 2026-01-01 00:00:00 UTC */
#define GOLDEN_CAPACITY 80u
#define GOLDEN_SIDE 4u
#define GOLDEN_IDS 10u
#define GOLDEN_QUEUED 3u
#define GOLDEN_WARMUP_UNTIL (GOLDEN_TIME + 864000)
#define GOLDEN_REGION_WRITERS 8u
#define GOLDEN_REGION_JRING 64u
#define GOLDEN_REGION_VRING 16u

/* The table's seed: 00 01 02 .. 0f. */
void fg_golden_seed(uint8_t seed[16]);
/* ID number n into buf ("<golden-N@compat.test>"); its length. */
size_t fg_golden_id(unsigned n, char *buf, size_t len);
/* The article of queued ID n, in wire form without the terminator. */
size_t fg_golden_article(unsigned n, char *buf, size_t len);
/* The route of queued ID n (queue version 2 on): 0 to the downstreams
 * with ids GOLDEN_DS_BINARIES and GOLDEN_DS_TEXT, 1 to every downstream,
 * 2 to none. */
#define GOLDEN_DS_BINARIES "binaries"
#define GOLDEN_DS_TEXT "text"
void fg_golden_route(unsigned n, struct fg_feeds_set *out);
/* First-seen and article date of ID n. */
fg_time_t fg_golden_first_seen(unsigned n);
fg_time_t fg_golden_date(unsigned n);

/*
 * The released golden files: dir/RELEASED, one line per file of a version
 * a build has released (written and committed),
 *
 *   <SHA-256, 64 lowercase hex digits>  <format>/<file>
 *
 * as `sha256sum` prints it, but for a region header, whose digest is taken
 * with the fields the counter tables set zeroed (fg_golden_digest): a
 * counter added changes the schema hash and may move the offsets and
 * sizes after the counter blocks, and is not a new layout (docs/compat.md).
 * Empty lines and lines starting with '#' are comments.
 * test_compat checks every golden file against its line, and every golden
 * file has one; fg_golden_write refuses to change a file listed here, and
 * adds the line of a file it writes for the first time.
 */
#define GOLDEN_MANIFEST "RELEASED"
#define GOLDEN_MANIFEST_MAX 64u
#define GOLDEN_NAME_MAX 64u
/* a region header's schema hash, which --check does not compare */
#define GOLDEN_REGION_SCHEMA_OFF 24u
#define GOLDEN_REGION_SCHEMA_LEN 8u

struct fg_golden_released {
	char name[GOLDEN_NAME_MAX];		/* "<format>/<file>" */
	uint8_t digest[FG_SHA256_LEN];
};

struct fg_golden_manifest {
	unsigned n;
	struct fg_golden_released e[GOLDEN_MANIFEST_MAX];
};

/* Parse a manifest's text. 0, or -EINVAL with the line and the reason in
 * why (a malformed line, a name twice, more than GOLDEN_MANIFEST_MAX). */
int fg_golden_manifest_parse(const char *text, size_t len, struct fg_golden_manifest *m,
			     char *why, size_t whylen);
/* dir/RELEASED; a missing file is an empty manifest. 0 or -errno. */
int fg_golden_manifest_load(const char *dir, struct fg_golden_manifest *m, char *why,
			    size_t whylen);
/* The entry of name ("<format>/<file>"), or NULL. */
const struct fg_golden_released *fg_golden_manifest_find(const struct fg_golden_manifest *m,
							 const char *name);
/* The line of e, with its newline, into buf; its length (0 if buf is too
 * short: it needs 64 + 2 + the name + 1 and the terminator). */
size_t fg_golden_manifest_line(const struct fg_golden_released *e, char *buf, size_t len);
/* The digest a manifest line holds for a file of format. A region header's
 * is taken with the fields the counter tables set zeroed: the region's
 * size, the schema hash, the offsets of floodctld's counters, the history
 * and the writer slots, and the slot size (octets 16..31, 104..111,
 * 136..151, 168..175 of struct fg_rhdr, lib/region/region_int.h). */
void fg_golden_digest(const char *format, const void *buf, size_t len,
		      uint8_t out[FG_SHA256_LEN]);

/*
 * Write this build's version of every format into dir/<format>/v<N>.<ext>
 * (the subdirectories are made). A file dir/RELEASED lists is written only
 * when its digest stays the one listed (a region header may change its
 * schema hash); otherwise it is refused, left as it is, and reported: a
 * released version does not change, its format needs a version bump. A
 * file not listed is written and its line appended to dir/RELEASED.
 * With `check`, write nothing: compare with what is there and report each
 * file that is missing or differs (a format that changed without a
 * version bump). Returns the number of files refused (writing) or missing
 * and differing (check), or -errno. Messages go to `report` (may be NULL).
 */
int fg_golden_write(const char *dir, int check, void (*report)(const char *msg));

#endif /* FLOODGATE_TOOLS_GOLDEN_H */
