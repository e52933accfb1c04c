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

#include <sys/uio.h>

#include "floodgate/config.h"
#include "floodgate/dstatus.h"
#include "floodgate/feeds.h"
#include "floodgate/iov.h"
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
	/* Downstreams (bit = config index) that the DPDK workers feed with
	 * their own TCP (portack.h): no #ack connections for them here. */
	uint8_t port_mask;
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

/* A downstream's status: every row of the table (dstatus.h FG_DS_FIELDS),
 * the RELAY and LINK rows as the relay thread published them, the QUEUE
 * rows from q; then what only the relay's own readers use. */
struct fg_relay_ds_status {
	char name[FG_CONFIG_NAME_MAX];
	FG_DS_FIELDS(FG_DS_MEMBER)
	struct fg_queue_cursor acked;	/* everything before it is acknowledged */
	struct fg_queue_cursor next;	/* the next record not yet taken into the window */
	unsigned in_window;		/* records between acked and next */
	struct fg_queue_consumer_state q;	/* parked, lag, backlog (qwriter.h) */
	uint64_t drops;			/* times its backlog cap dropped articles */
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

/* ---- end-to-end acknowledgement (docs/relay.md) ----
 *
 * With a downstream that `acknowledges`, an accepted article need not be
 * written to floodgate's disk: the engine thread hands it to the relay
 * through its acker (a ring, the article's pieces read in place from the
 * receive buffers the engine holds), the relay sends it with TAKETHIS on
 * connections kept for it (`<name>#ackN`, one per `connections`) to every
 * downstream its route names, and hands back one result:
 *
 *   ACCEPTED       an acknowledging downstream answered 239 and every other
 *                  one answered: the peer gets 239, nothing is queued
 *   REFUSED        the acknowledging downstream(s) answered 439 and the
 *                  server then answered 438 to a CHECK of the ID: 439,
 *                  remembered
 *   REFUSED_FORGET 439 without that confirmation (innd says 439 and
 *                  forgets when it cannot store): 439, not remembered
 *   SPILL          by the deadline (ack-timeout after the commit) some
 *                  downstream had not answered, or it answered 400, 431,
 *                  436 or 5xx, or its connection broke: the article is
 *                  queued for those downstreams (`spill`), the peer's 239
 *                  after the queue's sync
 *
 * A result is never later than the deadline (plus the relay's loop tick):
 * at the deadline, an article whose octets are still being written on a
 * connection closes that connection, so that no octet is read after its
 * result. Once given, the relay holds no pointer into the article.
 */
enum fg_relay_ack {
	FG_RELAY_ACK_ACCEPTED = 0,
	FG_RELAY_ACK_REFUSED,
	FG_RELAY_ACK_REFUSED_FORGET,
	FG_RELAY_ACK_SPILL,
};

struct fg_relay_ack_result {
	uint64_t cookie;
	void *ctx;			/* the article's, as handed over */
	enum fg_relay_ack what;
	struct fg_feeds_set spill;	/* SPILL: the downstreams that still need it */
};

struct fg_relay_ack_art {
	uint64_t cookie;
	void *ctx;			/* the caller's, given back with the result */
	const char *id;
	size_t id_len;
	const struct fg_feeds_set *route;
	/* the wire octets in place, valid until its result; each piece's
	 * handle names its receive buffer (NULL: none, e.g. the engine's own
	 * copy), for a sender by reference (portack.h) */
	const struct fg_iov *piece;
	unsigned npiece;
	uint64_t deadline_ns;		/* fg_mono_ns() clock */
};

struct fg_relay_acker;

/* One per engine thread, created before fg_relay_start and destroyed after
 * fg_relay_stop; NULL when no downstream acknowledges, or no memory.
 * `wake` (may be NULL) is called from the relay thread when results wait. */
struct fg_relay_acker *fg_relay_acker_create(struct fg_relay *r, unsigned max_pending,
					     void (*wake)(void *arg), void *wake_arg);
void fg_relay_acker_destroy(struct fg_relay_acker *a);

/* Engine thread. Would an article routed so go straight to its
 * downstreams? True when the route names an acknowledging downstream and
 * every downstream it names streams on a ready connection that is keeping
 * up (none of its answers overdue). */
bool fg_relay_ack_can(const struct fg_relay_acker *a, const struct fg_feeds_set *route);
/* Hand the article over: 0, a result will come; -EAGAIN: max_pending are
 * out (take the queue's path); -ENOMEM. */
int fg_relay_ack_send(struct fg_relay_acker *a, const struct fg_relay_ack_art *art);
typedef void fg_relay_ack_fn(void *arg, const struct fg_relay_ack_result *res);
/* Deliver the results that came (engine thread); returns how many. */
unsigned fg_relay_ack_results(struct fg_relay_acker *a, fg_relay_ack_fn *fn, void *arg);
/* Articles handed over whose result has not been taken. */
unsigned fg_relay_ack_out(const struct fg_relay_acker *a);

/* An acker of another kind behind the same five calls and the same result
 * contract: a DPDK worker's own TCP to the downstreams reached through its
 * port (portack.h). `impl` is passed back to each op; destroy is called by
 * fg_relay_acker_destroy. NULL: no memory. */
struct fg_relay_acker_ops {
	bool (*can)(const void *impl, const struct fg_feeds_set *route);
	int (*send)(void *impl, const struct fg_relay_ack_art *art);
	unsigned (*results)(void *impl, fg_relay_ack_fn *fn, void *arg);
	unsigned (*out)(const void *impl);
	void (*destroy)(void *impl);
};
struct fg_relay_acker *fg_relay_acker_wrap(const struct fg_relay_acker_ops *ops, void *impl);

#endif /* FLOODGATE_RELAY_H */
