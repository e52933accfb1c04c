/* SPDX-License-Identifier: MIT */
/*
 * portack.h — end-to-end acknowledgement through the DPDK port: a worker
 * feeds the acknowledging downstreams reached through floodgate's port
 * with its own TCP (tcp.h, active opens), the article's octets leaving
 * from the receive buffers that brought them in. It is an acker of
 * relay.h's kind (fg_relay_acker_wrap), so the acknowledging sink
 * (acksink.h) speaks to it as to the relay thread's, with the same result
 * contract, and decides with the same table (ackrule.h). docs/relay.md,
 * "Two paths", says which downstream takes which path.
 *
 * Per downstream that takes the port path (fg_portack_takes), per worker:
 * `connections` NNTP client connections (so connections x workers in all),
 *   connect -> greeting 200/201 -> MODE STREAM -> 203 -> ready
 * (anything but 203: the server does not stream; its articles take the
 * queue's path from then on). On a ready connection, up to `window`
 * TAKETHIS are pipelined: `TAKETHIS <id>\r\n`, the article's pieces as the
 * engine holds them (dot-stuffed wire form, as rack.c sends them), `.\r\n`;
 * answers are read in order, each naming its ID.
 *
 * Bounds: an article's result comes by its deadline (ack-timeout) at the
 * latest; a connection still writing an article at its result is aborted,
 * so that no octet is read after the result. A connection lost, refused,
 * or silent in its handshake for PA_HANDSHAKE_NS is tried again with
 * backoff (reconnect_min .. reconnect_max, doubling). A downstream with a
 * TAKETHIS answer overdue past its article's deadline takes no new article
 * (they take the queue's path at once) until it answers again.
 *
 * Threads: all of it runs on the worker's lcore: the acker's calls from
 * its engine, the TCP callbacks (fg_portack_tcp_ops, routed by the
 * worker) and fg_portack_poll.
 */
#ifndef FLOODGATE_PORTACK_H
#define FLOODGATE_PORTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/relay.h"
#include "floodgate/stats.h"
#include "floodgate/tcp.h"

struct fg_portack;

struct fg_portack_params {
	const struct fg_config *cfg;	/* downstreams; must outlive it */
	struct fg_stats *stats;		/* the worker's counters (may be NULL) */
	unsigned max_pending;		/* articles out at once (0: 4096) */
	uint64_t reconnect_min_ns;	/* 0: 250 ms */
	uint64_t reconnect_max_ns;	/* 0: 30 s */
};

/* Does downstream `d` take the port path? Acknowledging, streaming, and
 * `path port`, or `path auto` with an IPv4 address on a subnet of one of
 * [dataplane] address's IPv4 prefixes. */
bool fg_portack_takes(const struct fg_config *cfg, const struct fg_config_downstream *d);
/* Any downstream of cfg that does. */
bool fg_portack_any(const struct fg_config *cfg);

/* NULL: no downstream takes the port path, or no memory. */
struct fg_portack *fg_portack_create(const struct fg_portack_params *p);
/* Connections are opened from `local` (an IPv4 address of the port, port
 * 0) on `tcp`, whose app ops must route the callbacks of the connections
 * this opens (fg_portack_owns) to fg_portack_tcp_ops. Before the first
 * poll. */
void fg_portack_attach(struct fg_portack *pa, struct fg_tcp *tcp,
		       const struct fg_endpoint *local);
/* The acker face, for fg_ack_sink_create: destroying it destroys pa too.
 * Once only. */
struct fg_relay_acker *fg_portack_acker(struct fg_portack *pa);

/* Is this TCP callback context one of pa's connections? */
bool fg_portack_owns(const struct fg_portack *pa, const void *ctx);
extern const struct fg_tcp_app_ops fg_portack_tcp_ops;

/* The clock (fg_mono_ns's) for the TCP callbacks until the next poll:
 * set before each burst, as fg_tcpsess_set_time. */
void fg_portack_set_time(struct fg_portack *pa, uint64_t now_ns);
/* Connects, reconnects, handshake timeouts, deadlines, what waits to be
 * written. Returns results made ready (for fg_relay_ack_results). */
unsigned fg_portack_poll(struct fg_portack *pa, uint64_t now_ns);
/* When the next poll has work (UINT64_MAX: none). */
uint64_t fg_portack_next(const struct fg_portack *pa);

/* Connections ready (handshake done) to the downstream of config index d
 * (for tests and status). */
unsigned fg_portack_ready(const struct fg_portack *pa, unsigned d);
/* Every connection aborted now, without callbacks, and none opened again
 * (the worker's end): what was open on them spills. */
void fg_portack_abort_all(struct fg_portack *pa);

#endif /* FLOODGATE_PORTACK_H */
