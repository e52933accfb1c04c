/* SPDX-License-Identifier: MIT */
/*
 * memlink.h — a wire between two memory ports, in simulated time: what
 * one side's port transmits reaches the other side's net after the
 * serialisation time at `rate_bps` and a fixed one-way `delay_ns`, in
 * order, unless the link drops it: a seeded share `loss_ppm` (parts per
 * million) of the TCP segments that carry data, so a run repeats exactly.
 * For the lossy-link unit test and the bulk-transfer benchmark (two TCP
 * instances in one process); single-threaded; nothing here reads a clock.
 *
 *   struct fg_memlink *l = fg_memlink_create(&cfg);
 *   mp_a = fg_memport_create(n, size, fg_memlink_sink, fg_memlink_end(l, 0));
 *   mp_b = fg_memport_create(n, size, fg_memlink_sink, fg_memlink_end(l, 1));
 *   ... nets a and b on them ...
 *   fg_memlink_attach(l, 0, mp_a, net_a);  fg_memlink_attach(l, 1, mp_b, net_b);
 *   loop: now = the earliest of fg_memlink_next(l) and both nets' deadlines;
 *         fg_memlink_deliver(l, now); fg_net_poll(a, now); fg_net_poll(b, now);
 *
 * Frames are copied into the link when sent (the port frees its buffer)
 * and into a buffer of the receiving port when delivered; a frame the
 * receiving port has no buffer for, or one beyond `max_frames` queued in
 * one direction, is lost and counted like a drop.
 */
#ifndef FLOODGATE_MEMLINK_H
#define FLOODGATE_MEMLINK_H

#include <stdint.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"

struct fg_memlink_config {
	uint64_t delay_ns;	/* one way */
	uint64_t rate_bps;	/* serialisation; 0 = none (infinitely fast) */
	uint32_t loss_ppm;	/* data segments dropped, parts per million */
	uint64_t seed;		/* the drops' PRNG */
	unsigned max_frames;	/* queued per direction [65536] */
};

struct fg_memlink_stats {
	uint64_t frames;		/* handed to the link */
	uint64_t delivered;
	uint64_t data_segs;		/* TCP segments with payload handed to the link */
	uint64_t dropped;		/* by loss_ppm */
	uint64_t overflow;		/* queue full, or no receive buffer */
};

struct fg_memlink;
struct fg_memlink_end;

struct fg_memlink *fg_memlink_create(const struct fg_memlink_config *cfg);
void fg_memlink_destroy(struct fg_memlink *l);
/* Side 0 or 1: the sink argument of that side's memport. */
struct fg_memlink_end *fg_memlink_end(struct fg_memlink *l, unsigned side);
/* The memport sink (fg_memport_sink_fn) with arg = fg_memlink_end(l, side). */
void fg_memlink_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags);
/* The port and net that receive what the other side sends. */
void fg_memlink_attach(struct fg_memlink *l, unsigned side, struct fg_memport *mp,
		       struct fg_net *net);
/* The simulated time frames sent now are stamped with (the caller's clock). */
void fg_memlink_set_now(struct fg_memlink *l, uint64_t now_ns);
/* Deliver every frame due by `now_ns` (fg_net_rx in bursts); how many. */
unsigned fg_memlink_deliver(struct fg_memlink *l, uint64_t now_ns);
/* When the next frame is due, or UINT64_MAX. */
uint64_t fg_memlink_next(const struct fg_memlink *l);
/* Counters of one direction: frames sent by `side`. */
const struct fg_memlink_stats *fg_memlink_stats(const struct fg_memlink *l, unsigned side);

#endif /* FLOODGATE_MEMLINK_H */
