/* SPDX-License-Identifier: MIT */
/*
 * qwriter.h — the queue's writer side, in the process that accepts the
 * articles (the dataplane): the writer thread, the consumers' cursors and
 * the engines' sink handles. queue.h has the design, the files and the
 * readers that other processes use; dataplane/queue implements this.
 */
#ifndef FLOODGATE_QWRITER_H
#define FLOODGATE_QWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "floodgate/config.h"
#include "floodgate/queue.h"
#include "floodgate/sink.h"
#include "floodgate/stats.h"

/* ---- the writer (qwriter.c) ---- */

struct fg_queue;

/* Points where a test can make an operation fail (params.fault). */
enum fg_queue_fault {
	FG_QUEUE_FAULT_WRITE = 0,	/* appending a record */
	FG_QUEUE_FAULT_SYNC = 1,	/* the group commit's fdatasync */
	FG_QUEUE_FAULT_PROBE = 2,	/* the disk-full probe */
};

/*
 * Optional deletion gate (see DELETION above). The writer calls begin()
 * once a sealed, delivered segment's completions have all been handed to
 * the engines; then passed() until it says yes.
 */
struct fg_queue_gate {
	/* A barrier behind every history record journaled so far: 0 and
	 * *ticket, or -EAGAIN (a record is still waiting to be journaled). */
	int (*begin)(void *arg, uint64_t *ticket);
	/* True once everything before the barrier is durable. */
	bool (*passed)(void *arg, uint64_t ticket);
	void *arg;
};

struct fg_queue_params {
	const char *dir;		/* the data directory (created if missing) */
	uint64_t commit_ns;		/* the longest a group grows; 0: a sync per article */
	uint64_t limit;			/* octets on disk before refusing; 0: no limit */
	int64_t max_age;		/* seconds; 0: no limit */
	uint64_t segment_bytes;		/* rotate beyond; 0: limit/16 within [64 KiB, 64 MiB] */
	unsigned max_sinks;		/* sink handles; default 64 */
	struct fg_stats *stats;		/* the writer thread's counters (may be NULL) */
	const struct fg_queue_gate *gate;	/* may be NULL */
	/* Tests: 0, or -errno to make that operation fail. */
	int (*fault)(void *arg, enum fg_queue_fault where);
	void *fault_arg;
};

/* What open found and did (logged as well). */
struct fg_queue_open_info {
	uint64_t segments;		/* segments found */
	uint64_t records;		/* sound records in them */
	uint64_t bytes;			/* octets on disk */
	uint64_t torn_cut;		/* segments whose torn tail was cut */
	uint64_t cut_bytes;
	uint64_t damaged;		/* segments with damage before their end */
	uint64_t set_aside;		/* unreadable segments renamed *.bad */
	struct fg_queue_cursor end;	/* where the new segment starts */
};

/* Recover the directory (see CRASHES) and start a new segment. NULL with
 * *err. The writer thread is not running yet. */
struct fg_queue *fg_queue_open(const struct fg_queue_params *p, struct fg_queue_open_info *info,
			       int *err);
/* Called by the writer after new records or a cursor became durable (the
 * relay's wake-up: fg_relay_notify). Set before fg_queue_start. */
void fg_queue_set_notify(struct fg_queue *q, void (*fn)(void *arg), void *arg);
/* Start / stop the writer thread. Stop finishes what was handed over
 * (written, synced, completions delivered to the rings) first. */
int fg_queue_start(struct fg_queue *q);
void fg_queue_stop(struct fg_queue *q);
/* After stop, once every sink handle is destroyed. */
void fg_queue_close(struct fg_queue *q);

/* The durable end: every record before it is on disk. */
void fg_queue_durable(struct fg_queue *q, struct fg_queue_cursor *end);
/* The oldest position still on disk. */
void fg_queue_oldest(struct fg_queue *q, struct fg_queue_cursor *begin);
/* True while new articles are refused; *why (may be NULL) names the cause. */
bool fg_queue_refusing(struct fg_queue *q, const char **why);
/* Octets on disk (segments). */
uint64_t fg_queue_bytes(struct fg_queue *q);
struct fg_queue_segref {
	uint64_t segment;
	uint64_t base, end;		/* end: UINT64_MAX while it is being written */
	uint64_t first_recno;
};

/* The segment holding position pos (pos at a segment's end belongs to the
 * next one): 0 and *out. When pos falls in a gap (a segment lost to
 * damage), the first segment after it (out->base > pos). -ENOENT: pos is
 * before the oldest segment (deleted) or past the newest. */
int fg_queue_segment_at(struct fg_queue *q, uint64_t pos, struct fg_queue_segref *out);
const char *fg_queue_dir(struct fg_queue *q);

/*
 * Consumers (the relay's downstreams): register before fg_queue_start.
 * The cursor comes from cursor-<name>.fgc; a consumer without one starts
 * at the oldest record on disk (a new downstream gets what is queued).
 * Returns its index, or -errno.
 */
int fg_queue_consumer(struct fg_queue *q, const char *name, struct fg_queue_cursor *start);
/* Everything before c is acknowledged (any thread; c never goes back).
 * The writer makes it durable at its next pass. */
void fg_queue_consumer_ack(struct fg_queue *q, unsigned idx, const struct fg_queue_cursor *c);
/* The cursor as last made durable. */
void fg_queue_consumer_durable(struct fg_queue *q, unsigned idx,
			       struct fg_queue_cursor *out);

/*
 * Backlog limits (docs/relay.md, "Backlog limits and parking"). A consumer
 * whose lag — queue records, octets, or the age of its oldest record not
 * yet acknowledged — passes one of its limits is PARKED: the shared
 * refusal (queue-limit, queue-max-age) stops counting what only it still
 * needs, so the others keep being fed and the peers are not deferred for
 * it; the segments it needs stay on disk for it. It is unparked once
 * every lag is under 90 % of its limit. What the segments kept only for
 * parked consumers hold is its backlog on disk; past `disk`:
 *   defer (drop false)  new articles are refused (the peers deferred,
 *                       nothing lost) until it is under 90 % of the cap;
 *   drop                its oldest such segments are given up for it:
 *                       fg_queue_consumer_drop_to names the cursor it
 *                       should move to (the end of the last of them); the
 *                       consumer logs and counts each record it never
 *                       delivered that was routed to it (`ident`,
 *                       feeds.h), and acknowledges that cursor.
 * Parking takes effect only while another consumer is not parked: when
 * every one is behind, the shared limits defer the peers as before.
 * 0 for a limit: none. Set before fg_queue_start.
 */
struct fg_queue_backlog {
	uint64_t articles;		/* queue records behind its cursor */
	uint64_t bytes;			/* octets behind its cursor */
	int64_t age;			/* seconds: its oldest unacknowledged record */
	uint64_t disk;			/* octets kept only for it while parked */
	bool drop;			/* at `disk`: drop its oldest (else defer the peers) */
	uint64_t ident;			/* its route identifier (feeds.h) */
};
int fg_queue_consumer_backlog(struct fg_queue *q, unsigned idx, const struct fg_queue_backlog *b);

/* A consumer as the writer's last housekeeping pass (every 100 ms) saw it. */
struct fg_queue_consumer_state {
	bool parked;
	bool full;			/* parked and at its disk cap, defer: refusing */
	uint64_t lag_records, lag_bytes;
	int64_t lag_seconds;		/* age of its oldest unacknowledged record; 0 none */
	uint64_t backlog_bytes;		/* octets of segments kept only for it (parked) */
	uint64_t parks;			/* times it was parked */
	struct fg_queue_cursor drop_to;	/* drop: where its cursor should go; 0 none */
};
void fg_queue_consumer_state(struct fg_queue *q, unsigned idx,
			     struct fg_queue_consumer_state *out);
/* Backlog-full drop: the cursor the consumer is asked to move to (past
 * what it still holds: its acknowledged cursor may already be past it). */
void fg_queue_consumer_drop_to(struct fg_queue *q, unsigned idx, struct fg_queue_cursor *out);

/* ---- the sink handles (qsink.c) ---- */

struct fg_queue_sink;

struct fg_queue_sink_params {
	unsigned max_articles;		/* open + in flight; default 4096 */
	/* Octets of open and in-flight articles (held buffers and copies
	 * alike) at which full() says yes: the engine's sessions stop reading
	 * at their next article until completions bring it under. 0: 64 MiB
	 * ([persistence] held-limit, docs/relay.md "Memory"). */
	uint64_t max_held;
	/* Called by the writer thread when completions are waiting for this
	 * handle's poll() (wake the engine's thread). May be NULL. */
	void (*wake)(void *arg);
	void *wake_arg;
	struct fg_stats *stats;		/* the engine thread's block (may be NULL) */
};

/* One per engine thread; NULL when max_sinks are in use. */
struct fg_queue_sink *fg_queue_sink_create(struct fg_queue *q, const struct fg_queue_sink_params *p);
/* Once nothing is open or in flight (fg_queue_sink_busy() is 0). */
void fg_queue_sink_destroy(struct fg_queue_sink *s);
/* Articles open or in flight. */
unsigned fg_queue_sink_busy(const struct fg_queue_sink *s);
extern const struct fg_sink_ops fg_queue_sink_ops;

/*
 * An open article of a handle (begun, not committed or discarded), as a
 * sink that wraps the handle sees it (the end-to-end acknowledgement,
 * outbound.h): its Message-ID, the route the engine gave it, its octets,
 * and its pieces in order — the held receive buffers and the handle's
 * copies, valid until the article is committed and done, or discarded.
 * Engine thread.
 */
struct fg_queue_art_view {
	const char *id;
	size_t id_len;
	const struct fg_feeds_set *route;
	uint64_t len;			/* wire octets appended */
	unsigned pieces;		/* pieces fg_queue_sink_pieces fills */
};
void fg_queue_sink_view(const void *art, struct fg_queue_art_view *out);
/* Fill out[0..max) with the article's pieces, each with the receive
 * buffer it lies in (handle NULL: the handle's own copy); returns how
 * many it has. */
unsigned fg_queue_sink_pieces(const void *art, struct fg_iov *out, unsigned max);
/* Octets the handle holds now: appended to articles not yet done or
 * discarded. */
uint64_t fg_queue_sink_held(const struct fg_queue_sink *s);

#endif /* FLOODGATE_QWRITER_H */
