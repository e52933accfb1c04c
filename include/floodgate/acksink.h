/* SPDX-License-Identifier: MIT */
/*
 * acksink.h — the engine's sink for end-to-end acknowledgement
 * (docs/relay.md): a composition of the queue's sink handle (qwriter.h)
 * and the relay's acker (relay.h), so that an accepted article reaches
 * floodgate's disk only when it must.
 *
 *   begin / append / route / discard   the queue handle's, unchanged: the
 *                                      pieces are held (or copied), no I/O
 *   commit   the route names an acknowledging downstream and the relay can
 *            take it (fg_relay_ack_can): the article's pieces go to the
 *            relay with a deadline of now + ack-timeout; otherwise (or no
 *            room) the queue's commit, as without acknowledgement
 *   poll     the queue's completions, then the relay's results:
 *              ACCEPTED        the handle's article is discarded, done 0
 *              REFUSED(_FORGET) discarded, done FG_SINK_REFUSED(_FORGET)
 *              SPILL           routed to the downstreams that still need
 *                              it and committed to the queue: its done()
 *                              comes from the queue after the sync
 *
 * Memory: at most `max_held` octets of the thread's articles are with the
 * relay at once; an article that would pass it takes the queue's path at
 * commit (counted relay_ack_spill_cap). The queue handle's own held-octets
 * cap (qwriter.h max_held, twice this by default) bounds everything else.
 *
 * So the engine keeps its holds on the article's buffers until the relay
 * has written it downstream or the queue has it on disk; a peer's 239
 * waits at most ack-timeout plus one group commit.
 *
 * Threads: the engine's, like every sink; the relay thread reads the
 * pieces between commit and result.
 */
#ifndef FLOODGATE_ACKSINK_H
#define FLOODGATE_ACKSINK_H

#include <stdint.h>

#include "floodgate/qwriter.h"
#include "floodgate/relay.h"
#include "floodgate/sink.h"
#include "floodgate/stats.h"

struct fg_ack_sink;

/* Takes both: destroying the sink destroys the handle and the acker.
 * `stats` (may be NULL): the engine thread's counters. NULL: no memory
 * (nothing taken). `max_held`: octets the relay may hold for this sink. */
struct fg_ack_sink *fg_ack_sink_create(struct fg_queue_sink *qs, struct fg_relay_acker *ak,
				       struct fg_stats *stats, uint64_t timeout_ns,
				       uint64_t max_held);
/* Articles open or in flight (the queue handle's count: each article is
 * open in it until its end). */
unsigned fg_ack_sink_busy(const struct fg_ack_sink *s);
/* Octets of this sink's articles with the relay now (for tests). */
uint64_t fg_ack_sink_relay_held(const struct fg_ack_sink *s);
extern const struct fg_sink_ops fg_ack_sink_ops;

#endif /* FLOODGATE_ACKSINK_H */
