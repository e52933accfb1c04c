/* SPDX-License-Identifier: MIT */
/*
 * wlcheck.h — judges every server response against the workload model.
 *
 * The checker knows each article's class (workload.h) and sees every
 * response in the order the client receives them. Rules (RFC 4644 2.4-2.5,
 * RFC 3977 6.3.2, RFC 5537 3.3; docs/feedgen.md):
 *
 *   CHECK     238  send it: wrong for a bad Message-ID, and wrong once the
 *                  article's 239 was received before this CHECK was sent
 *             438  not wanted: always allowed here (whether a WANTED article
 *                  was lost shows at the end: it never got its 239)
 *             431  try later: the offer is retried (as innfeed does),
 *                  except for a bad ID, which must get 438
 *   TAKETHIS  239  wrong for any class but WANTED, and wrong a second time
 *             439  allowed (a WANTED article needs its one 239 elsewhere)
 *             400  the connection is closed and its offers re-offered
 *             431  wrong: RFC 4644 2.5.2 does not allow it
 *   IHAVE     335 -> send; 435 = 438; 436 retry; after the article
 *             235 = 239, 437 = 439, 436 retry
 *   anything else is wrong. At the end every WANTED article must have had
 *   exactly one 239/235 across all peers and connections.
 *
 * "Received before sent" is decided on one event counter the client
 * stamps every send and every accept with (fg_wlc_stamp), so concurrent
 * offers on different connections are never judged on a race.
 */
#ifndef FLOODGATE_WLCHECK_H
#define FLOODGATE_WLCHECK_H

#include <stdint.h>
#include <stdio.h>

#include "workload/workload.h"

enum fg_wlc_cmd {
	FG_WLC_CHECK = 0,
	FG_WLC_TAKETHIS,
	FG_WLC_IHAVE,		/* the IHAVE command line */
	FG_WLC_IHAVE_ART,	/* the article after 335 */
	FG_WLC__CMDS
};

/* What the client does next with the offer. */
enum fg_wlc_action {
	FG_WLC_DONE = 0,	/* offer finished */
	FG_WLC_SEND,		/* 238/335: send the article */
	FG_WLC_RETRY,		/* 431/436: offer again later */
	FG_WLC_RECONNECT,	/* 400: close, reconnect, re-offer in-flight */
	FG_WLC_MISMATCH,	/* recorded; the offer is finished */
};

#define FG_WLC_KEEP 16		/* mismatch texts kept */
#define FG_WLC_TEXT 320

struct fg_wlc;

struct fg_wlc *fg_wlc_create(const struct fg_wl *wl);
void fg_wlc_free(struct fg_wlc *c);

/* The next event stamp: call once per command sent, keep it with the command. */
uint64_t fg_wlc_stamp(struct fg_wlc *c);

/*
 * Judge `code` for `cmd` about article `art`, sent at stamp `sent`, on
 * connection `conn` of peer `peer` (both only for messages).
 */
enum fg_wlc_action fg_wlc_response(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				   int code, uint64_t sent, unsigned peer, unsigned conn);

/* Record a mismatch found by the client itself (a response that does not
 * name the offered ID, a 431 retried too often, a lost connection). */
void fg_wlc_mismatch(struct fg_wlc *c, const char *fmt, ...) FG_PRINTF(2, 3);

/*
 * The answer to an article sent for `art` was lost with its connection
 * (reset, or closed after 400): the server may have accepted it, so a
 * later 438/439 for it is no proof of loss. fg_wlc_finish does not count
 * such an article as missing its 239; fg_wlc_unknown() says how many.
 */
void fg_wlc_answer_lost(struct fg_wlc *c, uint32_t art);
uint64_t fg_wlc_unknown(const struct fg_wlc *c);

/* The run may end before every article was offered (feedgen --duration):
 * fg_wlc_finish then judges only the articles some answer came for (or
 * whose answer was lost); the others were never sent. */
void fg_wlc_set_partial(struct fg_wlc *c);
/* Articles some answer came for, or whose answer was lost. */
uint64_t fg_wlc_offered(const struct fg_wlc *c);
/* End of run: every WANTED article got exactly one 239. Returns the total
 * number of mismatches (those found now included). */
uint64_t fg_wlc_finish(struct fg_wlc *c);

uint64_t fg_wlc_mismatches(const struct fg_wlc *c);
/* The i-th kept mismatch text (i < min(mismatches, FG_WLC_KEEP)), or NULL. */
const char *fg_wlc_mismatch_text(const struct fg_wlc *c, unsigned i);
/* Articles that got their 239 (or 235). */
uint64_t fg_wlc_accepted(const struct fg_wlc *c);
/* One line per article to `f`: "<Message-ID> <class> <239s it got> <lost>",
 * for a test that compares sets of IDs (several feedgens against several
 * boxes) rather than counts. 0 or -errno. */
int fg_wlc_write_outcomes(const struct fg_wlc *c, FILE *f);

#endif /* FLOODGATE_WLCHECK_H */
