/* SPDX-License-Identifier: MIT */
/*
 * passive.h — passive mode: the client side of captured or mirrored NNTP
 * feeds, reassembled as captured and fed to the session engine, which
 * decides every offer; nothing is ever transmitted.
 *
 * Frames come from a port (a pcap file, a mirror port) through the same
 * (data, len, flags, handle) view and port ops as the live path. Which
 * side is the client: a TCP segment whose destination port is one of the
 * configuration's listen ports travels client -> server; its flow is
 * (client address, client port, server address, server port). Segments
 * the other way are counted and dropped (the answers of the server that
 * was captured are not ours to judge), except a server RST, which ends
 * the flow as it ended the real connection.
 *
 * A flow starts at the client's SYN (its sequence number anchors the
 * stream). A flow whose SYN is not in the capture (a mirror joined
 * mid-stream) cannot be decoded from a command boundary: its segments are
 * counted (passive_midstream) and dropped. Then, as a receiving TCP would
 * (RFC 9293 3.10.7.4): in-order payload is appended, retransmitted octets
 * are trimmed, segments ahead of a hole wait in an out-of-order list
 * (bounded) until the hole fills, FIN ends the stream once every octet
 * before it was delivered, RST ends it at once. A hole that never fills
 * (the capture lost a segment: the out-of-order list overflows, or the
 * FIN arrives behind the hole) ends the flow's session (passive_gaps):
 * what follows a hole cannot be decoded reliably.
 *
 * Checksums are not verified (passive.c says why); lengths are.
 *
 * Each flow is one engine session, opened for the peer its client address
 * maps to (a non-peer session answers 502 and closes, as it would live).
 * Payload is delivered to the session as soon as its segment is in order,
 * segment by segment in capture order, and the engine is polled right
 * after any delivery while a transfer is open, so a capture decides the
 * same way whatever the port's burst sizes: replays are deterministic.
 * The session's answers are counted by the engine and discarded.
 *
 * Time: each frame may carry its capture time (ns since the epoch); the
 * engine then runs on the capture's clock, so dates and offer deadlines
 * are judged as at capture time. Without it, the caller's clock is used.
 *
 * Back-pressure: a flow whose session stopped reading keeps its segments
 * queued (references held), at most max_segs of them; while any flow is
 * at that bound, or the segment pool is empty, fg_passive_backlogged()
 * says so and the caller stops receiving until fg_passive_work() has
 * drained it (on a pcap port nothing is lost; a mirror port drops in the
 * NIC, which the port counts).
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
	struct fg_engine *engine;
	const struct fg_config *cfg;		/* listen ports, peers */
	const struct fg_port_ops *ops;		/* buffer references */
	void *port;
	struct fg_stats *stats;			/* the worker's block */
	unsigned max_flows;			/* flow records [4096] */
	unsigned segs;				/* segment descriptors in all [max_flows * 32] */
	unsigned max_segs;			/* queued + out of order per flow [256] */
	unsigned max_ooo;			/* out of order per flow [64] */
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
 * closes asked by the engine are reported to it, records are freed.
 * Returns the number of flows handled. */
unsigned fg_passive_work(struct fg_passive *p);

/* True while the caller should not receive (see the head comment). */
bool fg_passive_backlogged(const struct fg_passive *p);

/* The capture time of the last frame processed (ns since the epoch), 0
 * before the first timestamped frame. */
uint64_t fg_passive_clock(const struct fg_passive *p);

/* New flows' peers and listen ports come from `cfg` from now on. */
void fg_passive_set_config(struct fg_passive *p, const struct fg_config *cfg);

/* End every flow now, as if its connection had reset (end of a replay, or
 * shutdown); sessions are told they are closed. */
void fg_passive_end_all(struct fg_passive *p);

/* Flow records in use (live flows, and ended ones the engine still has). */
unsigned fg_passive_flows(const struct fg_passive *p);

#endif /* FLOODGATE_PASSIVE_H */
