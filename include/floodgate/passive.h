/* SPDX-License-Identifier: MIT */
/*
 * passive.h — passive mode: the client side of captured or mirrored NNTP
 * feeds, reassembled as captured and fed to the session engine, which
 * decides every offer; nothing is ever transmitted. In shadow mode the
 * server's half of each flow is followed too, and every decision is
 * compared with the server's answer (shadow.h).
 *
 * There is one TCP: an instance is the live path's own modules in their
 * observe-only mode — an fg_net with `passive` set (Ethernet and IPv4
 * parsed by net, as live frames are), an fg_tcp registered with it (the
 * streams reassembled by TCP's receive queue and out-of-order list:
 * tcp_passive.c says how a stream starts, ends and what a lost segment
 * does), and an fg_tcpsess as TCP's app (sessions opened, fed, paused and
 * closed as on a live connection). So a capture is decided exactly as the
 * same bytes arriving live would be. docs/dataplane.md ("Passive mode")
 * lists the rules; in short:
 *
 *   - a segment to a `[site] listen` endpoint is client -> server; the
 *     server's segments are counted and dropped, except its RST;
 *   - a stream starts at the client's SYN; one whose SYN was not captured
 *     is counted (passive_midstream) and dropped;
 *   - checksums are not verified (a capture taken on the sending host
 *     holds checksums its NIC had not filled in), lengths are; one 802.1Q
 *     tag is allowed;
 *   - a hole that can never fill (the capture lost a segment) ends the
 *     stream's session (passive_gaps).
 *
 * Frames are processed one at a time, each through the whole stack, and
 * the engine is polled after each while a transfer is open, so a capture
 * decides the same way whatever the port's burst sizes: replays are
 * deterministic. The session's answers are counted and discarded.
 *
 * Time: each frame may carry its capture time (ns since the epoch); the
 * engine and TCP's timers then run on the capture's clock, so dates and
 * offer deadlines are judged as at capture time. Without it, the caller's
 * clock is used.
 *
 * Back-pressure: a flow whose session stopped reading keeps its segments
 * queued (references held), at most max_segs of them before it counts as
 * backlogged; while any flow is, or the segment pool is nearly empty,
 * fg_passive_backlogged() says so and the caller stops receiving until
 * fg_passive_work() has drained it (on a pcap port nothing is lost; a
 * mirror port drops in the NIC, which the port counts).
 *
 * One instance per worker core; not thread-safe.
 */
#ifndef FLOODGATE_PASSIVE_H
#define FLOODGATE_PASSIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/net.h"
#include "floodgate/session.h"
#include "floodgate/stats.h"

struct fg_passive;

struct fg_passive_params {
	struct fg_nntp_engine *engine;
	const struct fg_config *cfg;		/* listen endpoints, peers */
	const struct fg_port_ops *ops;		/* buffer references */
	void *port;
	struct fg_stats *stats;			/* the worker's block */
	unsigned max_flows;			/* flow records [4096] */
	unsigned segs;				/* segment descriptors in all [max_flows * 32] */
	unsigned max_segs;			/* queued + out of order per flow [256] */
	unsigned max_ooo;			/* out of order per flow [64] */
	bool shadow;				/* shadow mode: compare with the server (shadow.h) */
};

struct fg_passive *fg_passive_create(const struct fg_passive_params *p);
/* Call fg_passive_end_all() and let the engine finish first. */
void fg_passive_destroy(struct fg_passive *p);

/*
 * Process a burst: takes over the frames' references. ts_ns[i], when
 * ts_ns is not NULL and ts_ns[i] is not 0, is frame i's capture time
 * (ns since the epoch); otherwise now/now_ns apply. Returns n.
 */
unsigned fg_passive_rx(struct fg_passive *p, struct fg_rx_frame *frames, unsigned n,
		       const uint64_t *ts_ns, fg_time_t now, uint64_t now_ns);

/* Deferred work: flows whose session resumed get their queued payload,
 * closes asked by the engine are reported to it, records are freed,
 * TCP's timers run on the clock of the last frame. Returns the number of
 * flow records handled (closes and frees). */
unsigned fg_passive_work(struct fg_passive *p);

/* True while the caller should not receive (see the head comment). */
bool fg_passive_backlogged(const struct fg_passive *p);

/* The capture time of the last frame processed (ns since the epoch), 0
 * before the first timestamped frame. */
uint64_t fg_passive_clock(const struct fg_passive *p);

/* New flows' peers come from `cfg` from now on (the listen endpoints
 * stay those of the start, as in active mode: a restart changes them). */
void fg_passive_set_config(struct fg_passive *p, const struct fg_config *cfg);

/* End every flow now, as if its connection had reset (end of a replay, or
 * shutdown); sessions are told they are closed. */
void fg_passive_end_all(struct fg_passive *p);

/* Shadow mode's comparison (fg_passive_params.shadow), or NULL. Its
 * figures are final after fg_passive_end_all(). */
struct fg_shadow *fg_passive_shadow(const struct fg_passive *p);

/* Flow records in use (live flows, and ended ones the engine still has). */
unsigned fg_passive_flows(const struct fg_passive *p);

#endif /* FLOODGATE_PASSIVE_H */
