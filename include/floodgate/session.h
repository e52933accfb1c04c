/* SPDX-License-Identifier: MIT */
/*
 * session.h — the NNTP streaming session engine (RFC 3977, RFC 4644).
 *
 * Bytes from a peer go in, in whatever pieces the transport delivers them;
 * response lines come out strictly in command order; accepted articles
 * stream into an outbound sink (sink.h). The engine is transport-agnostic
 * and reads no clock: the userspace TCP, the kernel-socket host, tests
 * feeding single bytes, the fuzz target and the benchmark all drive the
 * same code. docs/protocol.md lists every command and response line, every
 * limit and what each kind of bad input gets.
 *
 * One `struct fg_nntp_engine` per thread (a DPDK worker lcore, a host thread):
 * it owns that thread's sessions, its counters, its sink handle and its
 * transfers; only the history table and the peers' limits (peerlim.h:
 * touched per connection and per batch of offers, never per offer) are
 * shared between engines. Nothing in here takes a lock.
 *
 * Driving a session (every call on the engine's thread):
 *
 *   s = fg_nntp_session_open(e, peer, &transport_ops, tctx, now, now_ns);
 *   n = fg_nntp_session_input(s, iov, niov, now, now_ns);  // bytes consumed
 *   fg_nntp_session_writable(s);      // the transport has room again
 *   fg_nntp_session_eof(s, ...);      // the peer sent FIN, all bytes consumed
 *   fg_nntp_session_closed(s);        // the connection is gone: s is invalid
 *   fg_nntp_engine_poll(e, now, now_ns);  // sink completions, timers, retries
 *
 * Input contract: fg_nntp_session_input() consumes a prefix of the bytes given
 * (the whole list unless it stops reading). When it returns less than it
 * was given, it has called transport pause(); it calls resume() when it
 * can go on, and the transport then offers the unconsumed bytes again
 * (plus whatever arrived). A split command line or the header section of
 * an article is copied (bounded by max-line and 64 KiB); article bodies
 * are never copied by the engine: they go to the sink in place.
 *
 * Transport calls are never re-entrant: close() must not call
 * fg_nntp_session_closed() before returning, resume() must not call
 * fg_nntp_session_input() before returning.
 *
 * Time: `now` is wall-clock seconds (dates, first-seen, offer deadlines),
 * `now_ns` monotonic nanoseconds (idle timeout, sink delays).
 */
#ifndef FLOODGATE_SESSION_H
#define FLOODGATE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/iov.h"
#include "floodgate/sink.h"
#include "floodgate/stats.h"

enum fg_nntp_verb {
#define FG_NNTP_VERB(id, name, help) FG_NNTP_VERB_##id,
#include "floodgate/tbl/nntp_verbs.h"
#undef FG_NNTP_VERB
	FG_NNTP_VERB__COUNT
};

enum fg_nntp_code {
#define FG_NNTP_CODE(id, number, help) FG_NNTP_CODE_##id,
#include "floodgate/tbl/nntp_codes.h"
#undef FG_NNTP_CODE
	FG_NNTP_CODE__COUNT
};

const char *fg_nntp_verb_name(enum fg_nntp_verb v);
const char *fg_nntp_verb_help(enum fg_nntp_verb v);
unsigned fg_nntp_code_number(enum fg_nntp_code c);
const char *fg_nntp_code_help(enum fg_nntp_code c);

/* ---- counters ---------------------------------------------------------- */

/* What the engine counts beyond the shared counter table: commands by verb,
 * responses by code, and the two delays of seed 002 in seconds. */
struct fg_nntp_stats {
	uint64_t verb[FG_NNTP_VERB__COUNT];
	uint64_t code[FG_NNTP_CODE__COUNT];
	struct fg_hist injection_delay;	/* Injection-Date - Date: offline wait before entry */
	struct fg_hist arrival_delay;	/* arrival - Injection-Date: network propagation */
	fg_time_t last_command;		/* when the last command was read (0: none); merged
					 * as the maximum, not added */
};

/* One counter block: the engine bumps one per thread and one per peer. */
struct fg_nntp_counters {
	struct fg_stats s;
	struct fg_nntp_stats n;
} FG_CACHE_ALIGNED;

void fg_nntp_counters_merge(struct fg_nntp_counters *into, const struct fg_nntp_counters *from);

/* ---- hooks for the control plane (each optional) ---------------------- */

/* A final history transition, for the journal (docs/protocol.md, "Hooks"). */
struct fg_journal_rec {
	struct fg_history_key key;
	enum fg_history_state state;	/* ACCEPTED, REJECTED or SUPERSEDED */
	fg_time_t article_date;		/* Injection-Date, else Date; 0 for SUPERSEDED marks */
	fg_time_t first_seen;
	unsigned date_used;		/* enum fg_rules_date_used: which header gave article_date */
	enum fg_reason reason;		/* REJECTED: why; FG_REASON_NONE otherwise */
	const char *msgid;		/* the ID's octets, valid during the call */
	uint16_t msgid_len;
};

/* One decision, for the verdict log. */
struct fg_verdict_rec {
	fg_time_t time;
	int peer;			/* config peer index; -1 none */
	const char *peer_name;		/* "" when none */
	const struct fg_endpoint *remote; /* the connection's remote, NULL unknown */
	const char *msgid;		/* the command's argument, valid during the call */
	uint16_t msgid_len;
	enum fg_nntp_verb verb;
	unsigned code;			/* the response code sent (238, 439, ...) */
	enum fg_reason reason;		/* FG_REASON_NONE unless refused */
	bool has_date, has_injection_date;
	fg_time_t date, injection_date;	/* as parsed from the article */
	uint64_t size;			/* article octets (wire), 0 for offers */
};

struct fg_nntp_engine_hooks {
	/* Append a record to this thread's journal ring: 0, or -ENOSPC (full:
	 * the engine keeps the record, retries from poll(), and defers new
	 * work meanwhile — a record is never dropped). */
	int (*journal)(void *ctx, const struct fg_journal_rec *r);
	/* One verdict-log line: 0, or -ENOSPC (dropped and counted). */
	int (*verdict)(void *ctx, const struct fg_verdict_rec *r);
	void *ctx;
};

/* ---- warm-up (docs/relay.md, "Warm-up") -------------------------------- */

/*
 * After a cold start, a CHECK for an ID the history does not know is asked
 * of a downstream server before it is answered; its answer waits in order,
 * like a TAKETHIS waiting for its sink. The downstream's 438 is honoured:
 * the ID is recorded as accepted (journaled, with the time of the answer
 * as its date and first-seen) and the peer gets 438; 238, 431 or no
 * answer gives 238, as without warm-up (a 431 is not passed on: warmup.c's
 * head comment says why).
 */
typedef void fg_nntp_engine_warm_done_fn(void *engine, uint64_t cookie, unsigned code);

struct fg_nntp_engine_warmup {
	/* Whether warm-up is on now (the host knows when it ends). */
	bool (*active)(void *ctx, fg_time_t now);
	/* Ask: 0, the answer comes from poll(); -errno: answer without it. */
	int (*ask)(void *ctx, const char *id, size_t len, uint64_t cookie);
	/* Deliver the answers that came: done(engine, cookie, 238 | 431 |
	 * 438 | 0 for none), from fg_nntp_engine_poll. Returns how many. */
	unsigned (*poll)(void *ctx, fg_nntp_engine_warm_done_fn *done, void *engine);
	void *ctx;
	unsigned max_asks;		/* questions in flight; default 1024 */
};

/* ---- the shared second-level history (docs/scale.md, "Several boxes") -- */

/*
 * With several boxes sharing a Redis Cluster, a CHECK whose ID this box's
 * history does not know (the session holds it as OFFERED, so this box's
 * other sessions get 431 meanwhile) is claimed in the cluster before it is
 * answered; the answer waits in order, like a warm-up question:
 *
 *   WON    this box's claim: 238 (the cluster's claim lapses at the offer
 *          timeout unless an outcome settles it)
 *   HAVE   another box accepted or refused it: recorded here as accepted
 *          (journaled; the site has it or does not want it), 438
 *   BUSY   another box's transfer of it is in flight: 431, and the
 *          offer here shrinks to a hold of a second (this box's other
 *          peers get 431 from the history meanwhile, no claim each); the
 *          next offer after it claims again
 *   NONE   no answer in time, or no cluster: decided here alone, 238
 *
 * Every final outcome of an article this box read (accepted, refused) is
 * settled in the cluster with settle(): the claim then lasts the window.
 * A TAKETHIS without a CHECK is never held back: its outcome is settled,
 * and the cluster side counts it when another box's claim was in flight.
 */
enum fg_claim_answer {
	FG_CLAIM_NONE = 0,
	FG_CLAIM_WON,
	FG_CLAIM_HAVE,
	FG_CLAIM_BUSY,
};

typedef void fg_nntp_engine_claim_done_fn(void *engine, uint64_t cookie, enum fg_claim_answer a);

struct fg_nntp_engine_cluster {
	/* Claim: 0, the answer comes from poll(); -errno: decide locally now. */
	int (*claim)(void *ctx, const char *id, size_t len, uint64_t cookie);
	/* Deliver the answers that came; returns how many. */
	unsigned (*poll)(void *ctx, fg_nntp_engine_claim_done_fn *done, void *engine);
	/* This box's final word on an ID (accepted: true; refused: false). */
	void (*settle)(void *ctx, const char *id, size_t len, bool accepted);
	void *ctx;
	unsigned max_claims;		/* claims in flight; default 1024 */
};

/* ---- the transport a session runs on ---------------------------------- */

struct fg_nntp_session_transport {
	/* Queue bytes for the peer: the count taken (0..len; less than len:
	 * call fg_nntp_session_writable() once there is room), or -errno when the
	 * connection can no longer send (the session then closes). */
	int (*send)(void *t, const void *buf, uint32_t len);
	/* Take / drop a reference on seg->handle's buffer; held bytes count
	 * against the connection's receive window. hold may be NULL (then the
	 * sink always copies). release() may still be called after the
	 * transport reported the connection closed, until detach(). */
	void (*hold)(void *t, const struct fg_iov *seg);
	void (*release)(void *t, const struct fg_iov *seg);
	/* Stop / restart offering input (resume: offer the unconsumed bytes
	 * again, soon, from the transport's own loop). */
	void (*pause)(void *t);
	void (*resume)(void *t);
	/* Orderly close once the bytes sent so far are delivered. */
	void (*close)(void *t);
	/* The engine will make no further call with `t`. Optional. */
	void (*detach)(void *t);
	/* Whether `len` more octets may be held now (optional; NULL: while
	 * the engine's hold table has room). A transport whose window counts
	 * held octets must say no before an article could fill the window,
	 * or an article larger than the window never completes; the sink
	 * then copies. */
	bool (*may_hold)(void *t, uint32_t len);
};

/* ---- the engine -------------------------------------------------------- */

struct fg_nntp_engine;
struct fg_nntp_session;

struct fg_nntp_engine_params {
	const struct fg_config *cfg;		/* must outlive the engine */
	struct fg_history *history;		/* shared with other engines */
	const struct fg_sink_ops *sink_ops;
	void *sink;
	const struct fg_nntp_engine_hooks *hooks;	/* NULL: none */
	struct fg_nntp_counters *stats;		/* this thread's block (required) */
	struct fg_nntp_counters *peer_stats;	/* cfg->n_peer + 1 blocks (the last: no peer), or NULL */
	unsigned max_sessions;			/* default 4096 */
	unsigned max_xfers;			/* articles open or in flight; default 4 * max_sessions */
	unsigned max_holds;			/* held segments; default 65536 */
	uint32_t token_base;			/* first sequence number of its tokens; any value */
	/* Whose transient history entries this engine makes (history.h,
	 * "Owners"): its writer slot (fg_region_writer_slot), or
	 * FG_HISTORY_OWNER_NONE without one. 0 is slot 0. */
	unsigned history_owner;
	uint32_t response_buffer;		/* per session, octets; default 32 KiB */
	const struct fg_nntp_engine_warmup *warmup;	/* NULL: no warm-up */
	const struct fg_nntp_engine_cluster *cluster;	/* NULL: this box alone */
	/* The peers' limits shared by every engine of the box (peerlim.h),
	 * with a slot for each of cfg's peers; NULL: the engine keeps its
	 * own, and its limits are this engine's alone. */
	struct fg_peerlim *limits;
};

struct fg_peerlim;
struct fg_nntp_engine *fg_nntp_engine_create(const struct fg_nntp_engine_params *p);
/* Every session must be closed and every transfer done (fg_nntp_engine_drain). */
void fg_nntp_engine_destroy(struct fg_nntp_engine *e);

/* Sink completions, journal retries, transfers waiting for another's
 * outcome, stalled sessions, idle timeouts (checked at most once a second).
 * Returns the number of events handled. */
unsigned fg_nntp_engine_poll(struct fg_nntp_engine *e, fg_time_t now, uint64_t now_ns);

/* The monotonic time by which poll() should run again. */
uint64_t fg_nntp_engine_next_poll(const struct fg_nntp_engine *e, uint64_t now_ns);

/* Shutdown: answer "400" to every open session and close it (transfers in
 * flight still complete and are recorded). */
void fg_nntp_engine_shutdown(struct fg_nntp_engine *e);

/*
 * The operator's levers (dataplane/nntp/levers.c, docs/operations.md
 * "Levers"), as innd's throttle and paused channels:
 *
 * fg_nntp_engine_throttle: every open session is answered "400 REASON" and
 * closed, every new one greeted so, until a NULL or empty reason ends it.
 * REASON is one printable ASCII line of at most FG_NNTP_ENGINE_REASON_MAX
 * octets; -EINVAL otherwise (nothing changes).
 *
 * fg_nntp_engine_pause: until `until` (0: resume; -ENOENT if not paused), the
 * named peer's sessions defer every new offer: CHECK 431, IHAVE 436, a
 * TAKETHIS is read, answered 400 and its session closed. Kept by name (a
 * reload keeps it). -EINVAL for a bad name, -ENOSPC past
 * FG_CONFIG_MAX_PEERS pauses. fg_nntp_engine_paused says whether a peer is
 * paused at the engine's time, and until when.
 */
#define FG_NNTP_ENGINE_REASON_MAX 200

/* The greeting of a new session while floodctld restores the history, on
 * every dataplane (RFC 3977 5.1.1: 400, the service is not available now;
 * innfeed backs off and tries again). No command is read after it, so
 * nothing is answered from a half-restored table. */
#define FG_NNTP_RESTORING_LINE \
	"400 floodgate: the history is being restored (floodctld), try again later\r\n"

/* A table of pauses by peer name, as the engine keeps it and the levers'
 * state (lib/levers) does: fg_nntp_pause_find gives a peer's row or -1;
 * fg_nntp_pause_set sets its end, until 0 removes it (-ENOENT when it has
 * none), -EINVAL for a name too long for the table, -ENOSPC when all
 * FG_CONFIG_MAX_PEERS rows are taken. */
struct fg_nntp_pause {
	char peer[FG_CONFIG_NAME_MAX];
	fg_time_t until;
};
int fg_nntp_pause_find(const struct fg_nntp_pause *tab, unsigned n, const char *peer);
int fg_nntp_pause_set(struct fg_nntp_pause *tab, unsigned *n, const char *peer,
		      fg_time_t until);
int fg_nntp_engine_throttle(struct fg_nntp_engine *e, const char *reason);
const char *fg_nntp_engine_throttled(const struct fg_nntp_engine *e);	/* the reason, or NULL */
int fg_nntp_engine_pause(struct fg_nntp_engine *e, const char *peer, fg_time_t until);
bool fg_nntp_engine_paused(const struct fg_nntp_engine *e, const char *peer, fg_time_t *until);
void fg_nntp_engine_pauses_clear(struct fg_nntp_engine *e);

/* Every decision's record also goes to `fn` (shadow mode, shadow.h),
 * whether or not a verdict log is hooked; NULL stops it. Same thread. */
typedef void fg_nntp_verdict_observer_fn(void *ctx, const struct fg_verdict_rec *r);
void fg_nntp_engine_observe_verdicts(struct fg_nntp_engine *e, fg_nntp_verdict_observer_fn *fn,
				     void *ctx);

/* Reload: switch to `cfg` (rules, peer policies, timeouts for open
 * sessions too) with `peer_stats` (cfg->n_peer + 1 blocks, or NULL)
 * replacing the per-peer array. Sessions follow their peer by name; one
 * whose peer is gone drains and closes (fg_nntp_session_retire). -EINVAL (nothing
 * changed) when max-line or max-pending-commands differ: open sessions'
 * buffers are sized by them. The old configuration and array must stay
 * valid until this returns. dataplane/nntp/reconfig.c. */
int fg_nntp_engine_set_config(struct fg_nntp_engine *e, const struct fg_config *cfg,
			 struct fg_nntp_counters *peer_stats);

/* Reload: the session's peer or the address it came in on was removed.
 * It drains and closes (dataplane/nntp/session.c, "Retiring"): the
 * article in flight is finished, new offers deferred (431/436), then a
 * 400 naming why once all it read is answered, within 10 s at most. */
enum fg_nntp_retire { FG_NNTP_RETIRE_PEER, FG_NNTP_RETIRE_ADDRESS };
void fg_nntp_session_retire(struct fg_nntp_session *s, enum fg_nntp_retire why);
bool fg_nntp_session_retiring(const struct fg_nntp_session *s);

/* Sessions open, transfers not yet done (open, waiting or committed) and
 * warm-up questions not yet answered. */
unsigned fg_nntp_engine_sessions(const struct fg_nntp_engine *e);
unsigned fg_nntp_engine_xfers(const struct fg_nntp_engine *e);
/* The clock-sanity view (docs/protocol.md, "Clock sanity"). */
bool fg_nntp_engine_clock_suspect(const struct fg_nntp_engine *e);
int64_t fg_nntp_engine_clock_offset(const struct fg_nntp_engine *e);

/* ---- sessions ----------------------------------------------------------- */

/*
 * A new connection. `peer` is the configured peer its address maps to
 * (fg_config_find_peer), or NULL: then the session answers 502, closes,
 * and is done once the transport reports it closed. Sends the greeting.
 * NULL when max_sessions are open (the caller refuses the connection).
 */
struct fg_nntp_session *fg_nntp_session_open(struct fg_nntp_engine *e,
					      const struct fg_config_peer *peer,
					      const struct fg_nntp_session_transport *ops,
					      void *t, fg_time_t now, uint64_t now_ns);

/* The connection's remote address and port, for the verdict log
 * (fg_verdict_rec.remote): the transport says it once, after open. A
 * session never told has none (NULL in its records). */
void fg_nntp_session_set_remote(struct fg_nntp_session *s, const struct fg_endpoint *remote);

uint32_t fg_nntp_session_input(struct fg_nntp_session *s, const struct fg_iov *iov, unsigned n,
			  fg_time_t now, uint64_t now_ns);
void fg_nntp_session_writable(struct fg_nntp_session *s);
void fg_nntp_session_eof(struct fg_nntp_session *s, fg_time_t now, uint64_t now_ns);
/* The connection is gone (after close(), or a reset, a timeout): the engine
 * releases what the session held in history; `s` is invalid afterwards. */
void fg_nntp_session_closed(struct fg_nntp_session *s);

/* Octets of responses queued but not yet taken by the transport. */
uint32_t fg_nntp_session_unsent(const struct fg_nntp_session *s);
/* True once the session asked its transport to close. */
bool fg_nntp_session_closing(const struct fg_nntp_session *s);

#endif /* FLOODGATE_SESSION_H */
