/* SPDX-License-Identifier: MIT */
/*
 * peerlim.h — a peer's limits held box-wide: one table per process, shared
 * by every engine thread (the DPDK dataplane's workers, floodgate-host's
 * threads), so that `max-connections 16` means 16 on the box whatever the
 * number of workers, and the rates are the box's (docs/operations.md,
 * "Levers"). dataplane/nntp/peerlim.c's head states the protocol and the
 * bound on what it admits beyond the exact limits.
 *
 * A slot per peer name, made by fg_peerlim_add() from a configuration
 * (at start, and at every reload before the workers are handed the new
 * configuration) and kept for the life of the table, so that a reload
 * carries each peer's open connections and budgets over by name. An
 * engine finds its slots by name (fg_peerlim_find) when it takes a
 * configuration, never on the offer path.
 *
 * Units: the rate buckets count millionths of a unit (an offer, an octet,
 * a connection), so that a low rate refilled often loses nothing to
 * rounding: at most one millionth of a unit per refill.
 *
 * Threads: fg_peerlim_add and fg_peerlim_destroy on one thread (the one
 * that reloads) while no engine is inside fg_peerlim_find; everything
 * else from any thread, lock-free.
 */
#ifndef FLOODGATE_PEERLIM_H
#define FLOODGATE_PEERLIM_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"

#define FG_PEERLIM_UNIT 1000000		/* millionths of a unit in one unit */
#define FG_PEERLIM_SLOTS (4u * FG_CONFIG_MAX_PEERS)	/* peer names over the table's life */

enum fg_peerlim_bucket {
	FG_PEERLIM_OFFERS,		/* max-offer-rate */
	FG_PEERLIM_BYTES,		/* max-byte-rate */
	FG_PEERLIM_CONNS,		/* max-connection-rate */
	FG_PEERLIM__BUCKETS
};

struct fg_peerlim;
struct fg_peerlim_peer;

/* A table for `engines` engine threads (it sizes the batch an engine takes
 * at a time: see fg_peerlim_batch). NULL: out of memory. */
struct fg_peerlim *fg_peerlim_create(unsigned engines);
void fg_peerlim_destroy(struct fg_peerlim *pl);

/* A slot for every peer of cfg that has none yet: 0, or -ENOSPC (more
 * peer names over the table's life than FG_PEERLIM_SLOTS; none added). */
int fg_peerlim_add(struct fg_peerlim *pl, const struct fg_config *cfg);
/* The slot of a peer name, NULL when fg_peerlim_add never saw it. */
struct fg_peerlim_peer *fg_peerlim_find(struct fg_peerlim *pl, const char *name);
unsigned fg_peerlim_engines(const struct fg_peerlim *pl);

/* Connections: one more of the peer if fewer than `max` are open (0: no
 * limit), true; false, nothing counted, when `max` are. Exact: the count
 * never exceeds `max` (one compare-and-swap per connection). */
bool fg_peerlim_conn_open(struct fg_peerlim_peer *p, unsigned max);
void fg_peerlim_conn_close(struct fg_peerlim_peer *p);
unsigned fg_peerlim_conns(const struct fg_peerlim_peer *p);

/* Take up to `want` millionths from the peer's bucket b, refilled first to
 * now_ns at `rate` units a second and holding at most a second's worth:
 * what it granted (0 when empty). `rate` is the caller's configured one
 * (0: nothing is granted). */
int64_t fg_peerlim_take(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, int64_t want,
			uint64_t rate, uint64_t now_ns);
/* One whole unit or nothing (a connection): true when taken. */
bool fg_peerlim_take_unit(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, uint64_t rate,
			  uint64_t now_ns);
/* Give back millionths taken and not spent (an engine's cache at a
 * reload), up to a second's worth at `rate`. */
void fg_peerlim_give(struct fg_peerlim_peer *p, enum fg_peerlim_bucket b, int64_t n,
		     uint64_t rate);
/* The millionths an engine takes into its cache at a time at `rate`:
 * a sixteenth of a second's worth shared among the engines, at least one
 * unit. */
int64_t fg_peerlim_batch(const struct fg_peerlim *pl, uint64_t rate);

#endif /* FLOODGATE_PEERLIM_H */
