/* SPDX-License-Identifier: MIT */
/*
 * relay.h — delivery of the queued articles to the site's own news servers
 * (the [downstream NAME] sections), and the warm-up lookups that ask them
 * about Message-IDs after a cold start.
 *
 * One relay thread runs every downstream over kernel sockets with epoll
 * (its volume is the unique articles, a small fraction of the offers).
 * It lives in the process that writes the queue — the dataplane (today
 * floodgate-host) — next to the writer thread: it learns the queue's
 * durable end from memory, and docs/relay.md gives the reasons and what
 * it survives.
 *
 * Per downstream, per connection (RFC 3977, RFC 4644):
 *   greeting 200/201 -> CAPABILITIES -> MODE STREAM (203) when mode is
 *   stream and the server lists STREAMING; then TAKETHIS pipelined up to
 *   `window` per connection (CHECK first when check-first is on), or
 *   IHAVE one at a time when the mode is ihave or the server does not
 *   stream. Articles go out byte for byte as they came in.
 * Answers:
 *   239 / 235            done
 *   439 / 437            done, counted (refused by the downstream)
 *   438 / 435            done, counted (not wanted: it has it)
 *   431 / 436            retried with backoff, in queue order
 *   400, a dropped connection, a timeout, a protocol error
 *                        the connection is closed; what it had in flight
 *                        is retried (reconnect with exponential backoff)
 * Each downstream reads every record and sends those whose route (queue.h,
 * decided at queue time by feeds.h) names its identifier; the others are
 * passed over, counted as not routed.
 * Each downstream has its own cursor (queue.h): the lowest record it has
 * not acknowledged. A record is sent only while it lies within
 * connections x window records of the cursor as last made durable, so a
 * crash of the whole process re-sends at most that many articles to a
 * downstream — the documented window — and nothing else twice.
 *
 * Warm-up (docs/relay.md): an engine thread asks "does a downstream have
 * this Message-ID?" through a ring (fg_relay_ask); the relay sends CHECK
 * on a connection kept for asking, and the answer comes back through the
 * asker's ring (fg_relay_answers), polled on the engine's thread.
 */
#ifndef FLOODGATE_RELAY_H
#define FLOODGATE_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/qwriter.h"
#include "floodgate/stats.h"

struct fg_relay;

struct fg_relay_params {
	const struct fg_config *cfg;	/* downstreams; must outlive the relay */
	struct fg_queue *q;
	struct fg_stats *stats;		/* the relay thread's counters (may be NULL) */
	/* Backoff bounds (0: defaults 250 ms .. 30 s reconnect, 1 s .. 60 s for
	 * a 431/436), and how long an answer may take (0: 120 s). */
	uint64_t reconnect_min_ns, reconnect_max_ns;
	uint64_t retry_min_ns, retry_max_ns;
	uint64_t answer_timeout_ns;
	uint64_t ask_timeout_ns;	/* warm-up: UNKNOWN after this (0: 2 s) */
};

/*
 * Register every downstream as a queue consumer (before fg_queue_start) and
 * set up the relay; nothing is connected yet. NULL and *err.
 */
struct fg_relay *fg_relay_create(const struct fg_relay_params *p, int *err);
int fg_relay_start(struct fg_relay *r);
/* Stop: answers already on their way are read for up to a second, then
 * QUIT and close. What was not acknowledged is sent again next time. */
void fg_relay_stop(struct fg_relay *r);
void fg_relay_destroy(struct fg_relay *r);

/* The queue's notify hook (queue.h params.notify): new durable records or
 * a cursor made durable. Any thread. */
void fg_relay_notify(void *relay);

struct fg_relay_ds_status {
	char name[FG_CONFIG_NAME_MAX];
	unsigned connections;		/* configured */
	unsigned ready;			/* handshake done, feeding */
	bool streaming;			/* MODE STREAM accepted */
	struct fg_queue_cursor acked;	/* everything before it is acknowledged */
	struct fg_queue_cursor next;	/* the next record not yet taken into the window */
	unsigned in_window;		/* records between acked and next */
	uint64_t sent, accepted, refused, not_wanted, deferred, reconnects;
	uint64_t not_routed;		/* queued articles its feed does not select (feeds.h) */
	bool paused;			/* fg_relay_pause: nothing is sent to it */
	struct fg_queue_consumer_state q;	/* parked, lag, backlog (qwriter.h) */
	uint64_t dropped;		/* its articles given up at its backlog cap (drop) */
	uint64_t drops;			/* times that happened */
};

/* A downstream's state as the relay thread last published it (any thread).
 * 0, or -ENOENT past the last downstream. */
int fg_relay_status(struct fg_relay *r, unsigned idx, struct fg_relay_ds_status *out);
/* The index of the downstream with this section name, or -ENOENT. */
int fg_relay_find(struct fg_relay *r, const char *name);

/* Pause (true) or resume (false) feeding a downstream (any thread): while
 * paused nothing new is sent to it (answers to what is in flight are still
 * read); its lag grows and its backlog limits apply (it may be parked).
 * Not remembered across a restart. 0, or -ENOENT. */
int fg_relay_pause(struct fg_relay *r, unsigned idx, bool pause);

/* ---- warm-up lookups ---- */

/* What a downstream said about a Message-ID (its CHECK answer). */
enum fg_relay_answer {
	FG_RELAY_UNKNOWN = 0,		/* no answer: no server to ask, or no answer in time */
	FG_RELAY_WANTED = 238,		/* it does not have it */
	FG_RELAY_LATER = 431,		/* it is receiving it right now */
	FG_RELAY_HAVE = 438,		/* it has it (or refused it before) */
};

struct fg_relay_asker;

/*
 * One per engine thread, created before fg_relay_start and destroyed after
 * fg_relay_stop. Asks go to the first downstream in stream mode, on a
 * connection of their own (so they never wait behind articles). `wake`
 * (may be NULL) is called from the relay thread when answers are waiting.
 * NULL when no downstream streams (nobody can be asked) or out of memory.
 */
struct fg_relay_asker *fg_relay_asker_create(struct fg_relay *r, unsigned max_pending,
					     void (*wake)(void *arg), void *wake_arg);
void fg_relay_asker_destroy(struct fg_relay_asker *a);

/* Ask (engine thread). 0: an answer will come from fg_relay_answers, within
 * a few seconds at most; -EAGAIN: max_pending asks are unanswered. */
int fg_relay_ask(struct fg_relay_asker *a, const char *id, size_t len, uint64_t cookie);

typedef void fg_relay_answer_fn(void *arg, uint64_t cookie, enum fg_relay_answer answer);
/* Deliver the answers that came (engine thread); returns how many. */
unsigned fg_relay_answers(struct fg_relay_asker *a, fg_relay_answer_fn *fn, void *arg);

#endif /* FLOODGATE_RELAY_H */
