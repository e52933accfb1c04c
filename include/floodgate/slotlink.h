/* SPDX-License-Identifier: MIT */
/*
 * slotlink.h — a session engine's link to its writer slot in floodctld's
 * region (region.h): the engine hooks (session.h) that put its final
 * history transitions on the slot's journal ring and its decisions on the
 * verdict-log ring, and the publication of its counters into the slot.
 *
 * One link per engine (per worker core): a slot has one writer thread.
 *
 * Peers: the engine numbers peers by their index in the configuration it
 * runs with; the region numbers them by name for its whole life
 * (fg_region_peer_index). The link maps one to the other, again after a
 * reload (fg_slotlink_set_config). Per-peer counters survive a reload
 * that renumbers peers: before the engine gets a new configuration (and a
 * new, zeroed peer counter array), fg_slotlink_fold() adds the old array
 * into a base kept per region peer; what is published is base + current.
 *
 * Journal: fg_journal_append without a reservation; -ENOSPC goes back to
 * the engine, which keeps the record and defers new work until the ring
 * has room (a journal record is never dropped). An article date that the
 * record cannot express (more than 68 years from first-seen: such
 * articles are rejected anyway) is clamped, so the record still goes in.
 */
#ifndef FLOODGATE_SLOTLINK_H
#define FLOODGATE_SLOTLINK_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/region.h"
#include "floodgate/session.h"

struct fg_slotlink;

/* NULL on no memory. `w` must outlive the link. */
struct fg_slotlink *fg_slotlink_create(struct fg_region_writer *w, const struct fg_config *cfg);
void fg_slotlink_destroy(struct fg_slotlink *sl);

/* Fill `out` with the hooks (ctx = the link) for fg_nntp_engine_params. */
void fg_slotlink_hooks(struct fg_slotlink *sl, struct fg_nntp_engine_hooks *out);

/* Map the peers of a new configuration (call at the quiescent point where
 * the engine switches to it). */
void fg_slotlink_set_config(struct fg_slotlink *sl, const struct fg_config *cfg);

/* Add `peers` (n_peer + 1 blocks, indexed as in the configuration the
 * link maps now) into the per-region-peer base. Call before the engine
 * switches configuration, then give it a zeroed array. */
void fg_slotlink_fold(struct fg_slotlink *sl, const struct fg_nntp_counters *peers,
		      unsigned n_peer);

/*
 * A reload at an engine's quiescent point, its counters kept whole: fold
 * the peer array into the link's base (sl may be NULL: no slot), switch
 * the engine to `cfg` with the zeroed array `fresh` (n_peer + 1 blocks of
 * cfg), map the link to it. 0: *peers is `fresh` now and `fresh` holds
 * the old array, for the caller to free; -EINVAL: nothing switched (the
 * engine refused cfg), *peers zeroed, since the base holds what it had.
 */
int fg_slotlink_switch(struct fg_slotlink *sl, struct fg_nntp_engine *e, const struct fg_config *old,
		       const struct fg_config *cfg, struct fg_nntp_counters **peers,
		       struct fg_nntp_counters **fresh);

/*
 * Copy the engine's counters into the slot (plain stores; floodctld sums
 * slots): `total` is the thread's block (the engine's, which the net and
 * TCP modules of the same core share), `peers` its per-peer blocks
 * (n_peer + 1, the last for hosts that are not peers). Also bumps the
 * slot's heartbeat, sets its clock-suspect flag, and stamps the last-seen
 * time of each peer whose input octets or sessions grew since the last
 * publication (so to the publication's period).
 */
void fg_slotlink_publish(struct fg_slotlink *sl, const struct fg_nntp_counters *total,
			 const struct fg_nntp_counters *peers, unsigned n_peer,
			 bool clock_suspect);

/*
 * The outbound queue's journal gate (outbound.h), from another thread:
 * mark() gives the count of journal records placed in the slot's ring so
 * far, or -EAGAIN while the engine holds one back (the ring refused it:
 * it is in neither count); durable() says whether floodctld has made that
 * many of this claim's records durable.
 */
int fg_slotlink_journal_mark(struct fg_slotlink *sl, uint64_t *pushed);
bool fg_slotlink_journal_durable(const struct fg_slotlink *sl, uint64_t pushed);

/* Region peer index of configuration peer i (-1: the region does not know
 * the name); i == n_peer (no peer) gives -1. */
int fg_slotlink_region_peer(const struct fg_slotlink *sl, unsigned i);

#endif /* FLOODGATE_SLOTLINK_H */
