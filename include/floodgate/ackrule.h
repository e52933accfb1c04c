/* SPDX-License-Identifier: MIT */
/*
 * ackrule.h — the decision table of end-to-end acknowledgement, once, for
 * every acker that feeds downstreams straight from the engine's buffers:
 * the relay thread's kernel sockets (rack.c) and a worker's own TCP on
 * the DPDK port (portack.c). relay.h states the result contract.
 *
 * An article's marks, per downstream (bit d = downstream d of the acker):
 * want (its route), sent, final (answered for good), spill (it must get
 * the article from the queue), and of the acknowledging downstreams
 * accepted (239) and refused (439).
 *
 * 1. Each answer to its TAKETHIS (fg_ackrule_answer):
 *      239           final; accepted when that downstream acknowledges
 *      439           final; refused when it acknowledges
 *      431, 436      spill (cause refused), counted deferred
 *      anything else spill (cause refused), counted a protocol error
 *    A 400, EOF, a broken connection or a failed send: fg_ackrule_spill
 *    with the cause (eof, refused for the 400, timeout).
 * 2. fg_ackrule_decide, once every wanted downstream is final or spilled,
 *    or at the deadline (`late`: what is still open spills, cause timeout):
 *      an acknowledging downstream accepted  ACCEPTED, or SPILL for the
 *                                            others that still need it
 *      refused, no acknowledging one spilled FG_ACKRULE_CHECK: the caller
 *                                            sends CHECK <id> to a refusing
 *                                            one; its 438 confirms
 *                                            (fg_ackrule_checked): REFUSED;
 *                                            anything else, no CHECK
 *                                            possible, or the deadline:
 *                                            REFUSED_FORGET
 *      otherwise                             SPILL (at least to the
 *                                            acknowledging ones wanted)
 *    Never 439 for a spill: a spill is the queue's, 239 after its sync.
 * The caller must, before it hands a result on, make sure no octet of the
 * article is still referenced by a connection (close what still writes).
 */
#ifndef FLOODGATE_ACKRULE_H
#define FLOODGATE_ACKRULE_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/queue.h"
#include "floodgate/relay.h"
#include "floodgate/stats.h"

/* An article as an acker keeps it from send to result: the engine's
 * fields copied, the pieces' array too (the caller's is scratch; the
 * octets stay where they are, valid until the result). */
struct fg_ackrule_art {
	uint64_t cookie;
	void *ctx;
	uint64_t deadline_ns;
	struct fg_iov *piece;
	unsigned npiece, cappiece;
	uint64_t octets;		/* the pieces' octets together */
	uint8_t id_len;
	char id[FG_QUEUE_ID_MAX + 1];
};

/* Take `src` into `a` (its array of pieces grown as needed): 0, -EINVAL (an
 * ID of no octet or more than FG_QUEUE_ID_MAX), -ENOMEM. */
int fg_ackrule_art_take(struct fg_ackrule_art *a, const struct fg_relay_ack_art *src);
void fg_ackrule_art_free(struct fg_ackrule_art *a);

struct fg_ackrule_marks {
	uint8_t want, sent, final, spill, accepted, refused;
	uint16_t cause;			/* enum fg_counter of the first spill */
	bool checking, check_done, confirmed;
};

/* Step 1 for downstream d (ack_mask: the acknowledging ones). */
void fg_ackrule_answer(struct fg_ackrule_marks *m, unsigned d, int code, uint8_t ack_mask);
/* An answer's counter: relay_accepted, relay_refused_439, relay_deferred
 * or relay_protocol_errors. */
enum fg_counter fg_ackrule_code_counter(int code);
/* Downstream d will not answer: it spills with `cause` (the first cause
 * names the article's spill). A final or spilled one stays as it is. */
void fg_ackrule_spill(struct fg_ackrule_marks *m, unsigned d, enum fg_counter cause);
/* The CHECK's answer came (code), or it never will (code 0). */
void fg_ackrule_checked(struct fg_ackrule_marks *m, int code);

#define FG_ACKRULE_WAIT (-1)		/* answers still due, deadline not reached */
#define FG_ACKRULE_CHECK (-2)		/* send the CHECK, or call fg_ackrule_checked(m, 0) */

/* Step 2: FG_ACKRULE_WAIT, FG_ACKRULE_CHECK, or the result (enum
 * fg_relay_ack). When late, open downstreams are spilled first. */
int fg_ackrule_decide(struct fg_ackrule_marks *m, uint8_t ack_mask, bool late);
/* Count a result into `st` (may be NULL): relay_ack_accepted; the
 * spill's cause; relay_ack_refused, and relay_ack_remembered as well for
 * a confirmed refusal. */
void fg_ackrule_count(const struct fg_ackrule_marks *m, int what, struct fg_stats *st);

#endif /* FLOODGATE_ACKRULE_H */
