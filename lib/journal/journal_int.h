/* SPDX-License-Identifier: MIT */
/*
 * journal_int.h — what the journal's writer (segment.c) and reader
 * (jscan.c) share: the encoders of the two headers (journal.h has the
 * format).
 */
#ifndef FLOODGATE_JOURNAL_INT_H
#define FLOODGATE_JOURNAL_INT_H

#include "floodgate/journal.h"

/* Write a segment header (FG_JSEG_HEADER octets) for `info` into buf. */
void fg_jseg_header_make(void *buf, const struct fg_jseg_info *info);
/* Fill the block header in front of `count` records already at buf + 32. */
void fg_jblock_seal(void *buf, unsigned count, unsigned slot, uint64_t commit_seq);

#endif /* FLOODGATE_JOURNAL_INT_H */
