/* SPDX-License-Identifier: MIT */
/*
 * sink.h — where accepted articles go: the outbound sink interface, and
 * the two sinks that live in the engine's module (in-memory, null).
 *
 * The session engine streams every article it may accept into a sink
 * while it arrives, so a 700 KB article never has to sit in the engine:
 *
 *   begin(msgid)                   at the TAKETHIS line / after 335
 *   append(segment)...             as the article's octets arrive
 *   route(set)                     accepted: the downstreams it goes to
 *                                  (feeds.h; optional, before commit)
 *   commit(cookie)  or  discard()  once the rules have decided
 *   ... later, from poll(): done(cookie, 0 | -errno)
 *
 * Octets are in wire form: exactly what the peer sent after the command
 * line, CRLF line ends, dot-stuffed, without the terminating ".\r\n" —
 * what a relay sends on with TAKETHIS, byte for byte (the filter is
 * transparent). fg_sink_unstuff() turns them into the article's text.
 *
 * Buffers. append() gets a segment in place in the transport's receive
 * buffer. A sink either copies it (returns 0) or, when `may_hold` is set,
 * returns FG_SINK_HOLD: the engine then takes a hold on that buffer through
 * the session's transport (the bytes count against the connection's
 * receive window: a slow sink closes the peer's window) and keeps it until
 * the article's done() or discard(). `may_hold` is false for segments that
 * are not holdable (NULL handle, the engine's own small copies) or when the
 * engine's hold table is full; the sink must copy those.
 *
 * Completion. commit() returns 0 and the outcome comes later, always from
 * poll() on the engine's thread: the relay's writer thread hands
 * completions back through a ring that poll() drains. 0 = the article is
 * safe (durable): the engine records it accepted and answers 239/235;
 * -errno = it is not: the engine releases the history entry and answers
 * 400 and closes (RFC 4644 2.5.2) or 436 (IHAVE). A sink that lets a
 * downstream server decide (end-to-end acknowledgement, docs/relay.md)
 * may also say FG_SINK_REFUSED (that server refused it and confirmed it
 * has or will not take the ID: the engine remembers it REJECTED) or
 * FG_SINK_REFUSED_FORGET (refused, not confirmed: the entry is released);
 * either way the peer gets 439 / 437. commit() may also fail
 * at once (-errno: the sink has dropped the article, no done() follows).
 * discard() ends an article that will not be accepted; no done() follows.
 * Either way the engine keeps its holds until done() or discard().
 *
 * Back-pressure. begin() returns -EAGAIN, or full() says true, when the
 * sink takes no new article now (disk full, queue over its limit): CHECK
 * is answered 431 and the session stops reading before its next article
 * (never a 431 to TAKETHIS). Any other -errno from begin()/append() makes
 * the article fail as above.
 *
 * Threads: one sink handle serves one engine (one thread); every call,
 * done() included, happens on that thread.
 */
#ifndef FLOODGATE_SINK_H
#define FLOODGATE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/feeds.h"
#include "floodgate/iov.h"

#define FG_SINK_HOLD 1
/* done() statuses besides 0 and -errno (see Completion) */
#define FG_SINK_REFUSED 1
#define FG_SINK_REFUSED_FORGET 2

/* Called from poll() once per committed article. */
typedef void fg_sink_done_fn(void *ctx, uint64_t cookie, int status);

struct fg_sink_ops {
	/* 0 and *art set; -EAGAIN: no room now (defer); -errno: the article fails. */
	int (*begin)(void *sink, const char *msgid, size_t len, unsigned peer, void **art);
	/* 0 copied, FG_SINK_HOLD (only when may_hold), or -errno (the article fails). */
	int (*append)(void *sink, void *art, const struct fg_iov *seg, bool may_hold);
	/* 0: done(cookie) follows from poll(); -errno: failed now. */
	int (*commit)(void *sink, void *art, uint64_t cookie);
	void (*discard)(void *sink, void *art);
	/* Deliver due completions; returns how many. `now_ns` is monotonic. */
	unsigned (*poll)(void *sink, uint64_t now_ns, fg_sink_done_fn *done, void *ctx);
	/* Optional: true while no new article is taken (CHECK -> 431). */
	bool (*full)(void *sink);
	/* Free the sink (nothing open or in flight; NULL: nothing). Its
	 * owner need not know which sink it holds. */
	void (*destroy)(void *sink);
	/* Optional: the downstreams an accepted article goes to, decided once
	 * before its commit (feeds.h); a sink that is not told sends it to
	 * every downstream. */
	void (*route)(void *sink, void *art, const struct fg_feeds_set *set);
};

/* ---------------------------------------------------------------------- */
/* Dot-unstuffing for sinks that keep the article's text (RFC 3977 3.1.1):
 * feed the wire octets in any pieces; each call writes the unstuffed text
 * of its piece to `out` (room for `len` octets suffices) and returns its
 * length. */
struct fg_sink_unstuff {
	bool line_start;
	bool cr;
};

void fg_sink_unstuff_init(struct fg_sink_unstuff *u);
size_t fg_sink_unstuff(struct fg_sink_unstuff *u, const uint8_t *in, size_t len, uint8_t *out);

/* ---------------------------------------------------------------------- */
/* The in-memory sink: for tests and the kernel-socket host until the
 * durable queue exists. Keeps each accepted article (unstuffed text) in a
 * bounded store, completes a commit after `delay_ns`, and fails the ones a
 * test asks it to. */

struct fg_sink_mem;

struct fg_sink_mem_params {
	uint64_t delay_ns;		/* commit -> done; 0: at the next poll */
	uint64_t jitter_ns;		/* plus up to this much, so completions reorder */
	unsigned fail_every;		/* fail every n-th commit (1st, n+1-th, ...); 0: never */
	const char *fail_substr;	/* fail commits whose Message-ID contains this */
	bool hold;			/* ask for holds instead of copying */
	uint64_t store_limit;		/* keep at most this many octets of text; 0: keep none */
	unsigned max_articles;		/* open + committed-not-done; full() beyond; default 4096 */
	unsigned max_done;		/* accepted articles remembered (oldest dropped); default 65536 */
};

/* A stored accepted article. */
struct fg_sink_mem_article {
	char msgid[256];
	unsigned peer;
	uint64_t wire_size;		/* octets appended */
	uint8_t *text;			/* unstuffed; NULL when beyond store_limit */
	size_t text_len;
};

struct fg_sink_mem *fg_sink_mem_create(const struct fg_sink_mem_params *p);
void fg_sink_mem_destroy(struct fg_sink_mem *m);
extern const struct fg_sink_ops fg_sink_mem_ops;

/* Change failure injection on the fly (tests). */
void fg_sink_mem_set_fail(struct fg_sink_mem *m, unsigned fail_every, const char *fail_substr);
void fg_sink_mem_set_delay(struct fg_sink_mem *m, uint64_t delay_ns);
/* Complete commits whose Message-ID contains `keep` with FG_SINK_REFUSED,
 * `forget` with FG_SINK_REFUSED_FORGET (a downstream's 439, as the
 * end-to-end sink says it; NULL or "": none). */
void fg_sink_mem_set_refuse(struct fg_sink_mem *m, const char *keep, const char *forget);
void fg_sink_mem_set_jitter(struct fg_sink_mem *m, uint64_t jitter_ns, uint64_t seed);
/* Refuse new articles (begin -EAGAIN, full() true) while set. */
void fg_sink_mem_set_full(struct fg_sink_mem *m, bool full);

struct fg_sink_mem_stats {
	uint64_t begun, appended_bytes, holds, copies, committed, succeeded, failed, discarded;
	unsigned open;			/* begun, not yet discarded or done */
	unsigned in_flight;		/* committed, done() not yet delivered */
	unsigned stored;		/* accepted articles kept */
};
void fg_sink_mem_stats(const struct fg_sink_mem *m, struct fg_sink_mem_stats *out);
/* The i-th accepted article kept (0 = oldest), or NULL. */
const struct fg_sink_mem_article *fg_sink_mem_article(const struct fg_sink_mem *m, unsigned i);
/* The newest accepted article with this Message-ID, or NULL. */
const struct fg_sink_mem_article *fg_sink_mem_find(const struct fg_sink_mem *m, const char *msgid,
						   size_t len);

/* ---------------------------------------------------------------------- */
/* The null sink: takes every article, copies nothing, completes at the next
 * poll. For benchmarks of the engine alone. */
struct fg_sink_null;
struct fg_sink_null *fg_sink_null_create(unsigned max_in_flight);
void fg_sink_null_destroy(struct fg_sink_null *n);
extern const struct fg_sink_ops fg_sink_null_ops;

#endif /* FLOODGATE_SINK_H */
