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
 * Write this build's version of every format into dir/<format>/v<N>.<ext>
 * (the subdirectories are made). With `check`, write nothing: compare with
 * what is there and report each file that is missing or differs (a format
 * that changed without a version bump). Returns the number of files
 * written or differing, or -errno. Messages go to `report` (may be NULL).
 */
int fg_golden_write(const char *dir, int check, void (*report)(const char *msg));

#endif /* FLOODGATE_TOOLS_GOLDEN_H */
