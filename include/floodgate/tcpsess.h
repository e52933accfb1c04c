/* SPDX-License-Identifier: MIT */
/*
 * tcpsess.h — NNTP sessions on the userspace TCP: the session engine's
 * transport (session.h) implemented over one fg_tcp instance (tcp.h).
 *
 * One instance per worker core, next to that core's fg_net, fg_tcp and
 * fg_nntp_engine; nothing is shared with other cores. Its fg_tcp_app_ops are
 * what the worker gives fg_tcp_create() (with the instance as `app`):
 *
 *   on_accept   the peer's address is looked up in the configuration
 *               (fg_config_find_peer) and a session opened for it; a host
 *               that is not a peer still gets a session, which answers
 *               502 and closes (RFC-NOTES). While draining, a new
 *               connection is answered "400" and closed instead.
 *   on_data     the in-order payload goes to fg_nntp_session_input() in place;
 *               what the engine does not consume stays queued in TCP
 *   on_eof, on_writable  passed on
 *   on_close    the engine is told (fg_nntp_session_closed)
 *
 * Transport ops for the engine: send -> fg_tcp_send; pause/resume ->
 * fg_tcp_pause/fg_tcp_resume; hold/release -> fg_tcp_hold/fg_tcp_release,
 * so the octets a session keeps for the sink (an article being made
 * durable) count against that connection's receive window: a slow disk
 * closes the peer's window instead of draining the shared mbuf pool.
 * A hold that outlives its connection (a committed article whose
 * completion is still due) is unaccounted from the dying connection in
 * on_close and dropped later with fg_net_buf_unref.
 *
 * close() asks TCP for an orderly close (FIN after the queued answers);
 * the engine is told the session is closed from fg_tcpsess_work(), never
 * from inside one of its own calls (session.h: transport calls are not
 * re-entrant). A connection record lives until TCP has closed the
 * connection and the engine has detached from it, so the pool holds
 * max_conns records (TCP connections plus sessions still finishing).
 *
 * Time: the worker sets the clock (fg_tcpsess_set_time) before each burst;
 * the callbacks use it.
 */
#ifndef FLOODGATE_TCPSESS_H
#define FLOODGATE_TCPSESS_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/net.h"
#include "floodgate/session.h"
#include "floodgate/stats.h"
#include "floodgate/tcp.h"

struct fg_tcpsess;

struct fg_tcpsess_params {
	struct fg_net *net;
	struct fg_nntp_engine *engine;
	const struct fg_config *cfg;	/* until fg_tcpsess_set_config */
	struct fg_stats *stats;		/* the worker's block */
	unsigned max_conns;		/* connection records (default 2 * 4096) */
	/* Buffers a connection may hold for articles being made safe
	 * (default 128); its held octets stop at half its receive buffer.
	 * Beyond either the sink copies: a window filled by holds would never
	 * let the rest of an article in, and tiny segments must not pin the
	 * pool. */
	unsigned hold_segs;
};

struct fg_tcpsess *fg_tcpsess_create(const struct fg_tcpsess_params *p);
/* Every record must be free (the worker ends its sessions first), or the
 * caller accepts that they are dropped without callbacks. */
void fg_tcpsess_destroy(struct fg_tcpsess *ts);

/* The app ops to give fg_tcp_create() with `app` = the instance. */
extern const struct fg_tcp_app_ops fg_tcpsess_app_ops;

void fg_tcpsess_set_time(struct fg_tcpsess *ts, fg_time_t now, uint64_t now_ns);
/* Peers of new connections are looked up in `cfg` from now on (reload);
 * open sessions keep the peer name they started with. */
void fg_tcpsess_set_config(struct fg_tcpsess *ts, const struct fg_config *cfg);
/* Reload: every open session whose local address and port `tcp` no
 * longer listens on drains and closes (fg_nntp_session_retire); returns
 * how many were told. */
unsigned fg_tcpsess_retire_unlistened(struct fg_tcpsess *ts, const struct fg_tcp *tcp);
/* While set, new connections get "400 ... draining" and are closed. */
void fg_tcpsess_set_draining(struct fg_tcpsess *ts, bool draining);
/* While set, new connections get "400 ... the history is being restored
 * ..." and are closed before a command is read: floodctld is restoring
 * the history, and no answer may come from a half-restored table. */
void fg_tcpsess_set_restoring(struct fg_tcpsess *ts, bool restoring);

/* Deferred work: tell the engine about sessions it asked to close, free
 * records nobody uses any more. Call after every burst and poll. Returns
 * the number of records handled. */
unsigned fg_tcpsess_work(struct fg_tcpsess *ts);

/* Records in use: connections open, closing, or whose session is still
 * finishing. 0 means this worker has nothing left to end. */
unsigned fg_tcpsess_in_use(const struct fg_tcpsess *ts);
/* Records still owed something: a session or transfer not yet over, or
 * a connection whose answers or FIN the peer has not acknowledged (a
 * connection in FIN-WAIT-2 only waits for the peer's FIN: nothing of ours
 * is in flight). A shutdown waits for this to reach 0. */
unsigned fg_tcpsess_unfinished(const struct fg_tcpsess *ts);
/* Abort (RST) every connection still open: the last step of a shutdown
 * whose grace period ran out. Returns how many. */
unsigned fg_tcpsess_abort_all(struct fg_tcpsess *ts);

enum fg_tcpsess_state {
	FG_TCPSESS_OPEN = 0,	/* a session runs on it */
	FG_TCPSESS_CLOSING,	/* the session asked to close; TCP finishing */
	FG_TCPSESS_REFUSED,	/* answered 400 while draining */
	FG_TCPSESS_FINISHING,	/* TCP closed; the session's last article is still being made durable */
};

/* One connection, for `floodctl peers`. */
struct fg_tcpsess_info {
	char peer[FG_CONFIG_NAME_MAX];	/* "" when the host is not a peer */
	struct fg_endpoint remote;	/* the peer's address (either family) and port */
	uint16_t state;			/* enum fg_tcpsess_state */
	uint64_t opened_ns;		/* monotonic */
	uint64_t bytes_in, bytes_out;	/* payload consumed by / sent for the session */
	uint32_t held;			/* octets held for the sink */
	uint32_t queued;		/* octets TCP holds for the connection */
};

/* Up to `max` records in use, in pool order; returns how many. */
unsigned fg_tcpsess_list(const struct fg_tcpsess *ts, struct fg_tcpsess_info *out,
			 unsigned max);

const char *fg_tcpsess_state_name(enum fg_tcpsess_state s);

#endif /* FLOODGATE_TCPSESS_H */
