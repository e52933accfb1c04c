/* SPDX-License-Identifier: MIT */
/*
 * outbound.h — a dataplane process's outbound side, as floodgate-host and
 * floodgate (DPDK) both run it: the durable queue (queue.h) in the
 * configuration's data directory with its writer thread, the relay
 * (relay.h) to the [downstream] servers with its thread, one queue sink
 * handle and one warm-up asker per engine thread, and, with floodctld's
 * region, the queue's journal gate and a writer slot for the queue's and
 * the relay's counters (docs/relay.md).
 *
 * Order matters at both ends. Start: fg_outbound_open (the queue's
 * recovery cuts a torn tail; the relay registers each downstream as a
 * consumer), then each engine thread's sink, asker and slot link
 * (fg_outbound_sink, fg_outbound_warm_create, fg_outbound_gate_add), then
 * fg_outbound_start (the writer and relay threads), then the engine
 * threads. Stop: the engine threads first (their transfers in flight need
 * the writer to finish), then fg_outbound_stop (relay, then writer, which
 * makes the last cursors durable and hands every completion back), then
 * the handles, then fg_outbound_close.
 *
 * The threads fg_outbound_start creates inherit the caller's CPU affinity
 * and signal mask: the DPDK dataplane starts them from its main lcore, so
 * they never run on a polling worker lcore.
 *
 * Completions come back to each engine thread through its handle's
 * lock-free ring, delivered by the engine's poll (the engine polls within
 * a millisecond while a transfer is in flight); `wake`, when given, is
 * called from the writer or relay thread when something is waiting.
 *
 * The gate (queue.h, DELETION): a delivered segment is deleted only once
 * every engine thread's journal records so far have reached its slot's
 * ring (none held back by a full ring) and floodctld has made them
 * durable, and no dead writer's slot is waiting to be reaped; so an ID
 * that got 239 is never forgotten when both processes die.
 *
 * Warm-up: at a cold start (the history was built empty: by this process,
 * or by floodctld, which then wrote the period's end) the period begins
 * and its end is kept in the data directory; a later start inside the
 * period goes on with it. While it lasts, each engine asks the relay
 * about CHECKs of unknown IDs.
 */
#ifndef FLOODGATE_OUTBOUND_H
#define FLOODGATE_OUTBOUND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/config.h"
#include "floodgate/qwriter.h"
#include "floodgate/region.h"
#include "floodgate/relay.h"
#include "floodgate/session.h"
#include "floodgate/slotlink.h"

#define FG_OUTBOUND_PUBLISH_NS 100000000ull	/* counters into the slot */
/* fg_outbound_publish also rewrites <data-dir>/downstreams.status (dstatus.h)
 * about once a second, with or without floodctld's region. */

struct fg_outbound;
struct fg_outbound_warm;

struct fg_outbound_params {
	const struct fg_config *cfg;	/* must outlive the outbound side */
	bool cold_start;		/* this process built its history empty */
	struct fg_region *region;	/* floodctld's, or NULL (no gate, no slot) */
	const char *slot_name;		/* the counters' writer slot (with region) */
	unsigned max_gate;		/* slot links the gate can hold (engine threads) */
	/* The DPDK dataplane: downstreams that take the port path
	 * (fg_portack_takes) are fed by the workers, not by the relay's #ack
	 * connections. */
	bool port_path;
};

/* Open the queue and create the relay (no thread yet). NULL and *err
 * (logged). */
struct fg_outbound *fg_outbound_open(const struct fg_outbound_params *p, int *err);
/* Start the writer and the relay threads. 0 or -errno. */
int fg_outbound_start(struct fg_outbound *ob);
/* Stop both threads (idempotent); what was handed over is finished. */
void fg_outbound_stop(struct fg_outbound *ob);
/* After stop, once every sink and asker is destroyed. NULL is fine. */
void fg_outbound_close(struct fg_outbound *ob);

/* An engine thread's sink (destroy with its ops' destroy): the queue's
 * handle, or, when a downstream acknowledges (end-to-end, acksink.h), the
 * acknowledging sink around one. *ops says which; `stats` is that
 * thread's counter block, wake may be NULL. NULL: no handle free, or no
 * memory. */
void *fg_outbound_sink(struct fg_outbound *ob, struct fg_stats *stats, void (*wake)(void *arg),
		       void *wake_arg, const struct fg_sink_ops **ops);
/* The same with the thread's own acker (portack.h's), taken by the sink
 * (also when this fails); NULL `ak`: the relay's, as fg_outbound_sink. */
void *fg_outbound_sink_acker(struct fg_outbound *ob, struct fg_stats *stats,
			     void (*wake)(void *arg), void *wake_arg, struct fg_relay_acker *ak,
			     const struct fg_sink_ops **ops);
/* Articles open or in flight in a sink fg_outbound_sink made. */
unsigned fg_outbound_sink_busy(const struct fg_sink_ops *ops, const void *sink);

/* An engine thread's warm-up asker, or NULL: warm-up is off (or no
 * downstream can be asked, or no memory). */
struct fg_outbound_warm *fg_outbound_warm_create(struct fg_outbound *ob,
						 void (*wake)(void *arg), void *wake_arg);
/* Its hooks for fg_nntp_engine_params.warmup (they live as long as it). */
const struct fg_nntp_engine_warmup *fg_outbound_warm_hooks(struct fg_outbound_warm *wa);
void fg_outbound_warm_destroy(struct fg_outbound_warm *wa);

/* With a region: an engine thread's slot link joins the gate (before
 * fg_outbound_start). 0, or -ENOSPC beyond max_gate. */
int fg_outbound_gate_add(struct fg_outbound *ob, struct fg_slotlink *sl);

/* The queue's and the relay's counters into their slot, at most every
 * FG_OUTBOUND_PUBLISH_NS (one thread: the caller's main loop). */
void fg_outbound_publish(struct fg_outbound *ob, uint64_t now_ns);
/* Pause or resume feeding the downstream of that section name (relay.h,
 * fg_relay_pause); the status file says so at once. 0 or -ENOENT. */
int fg_outbound_downstream_pause(struct fg_outbound *ob, const char *name, bool pause);
/* Add the writer's and the relay's counter blocks into `sum`. */
void fg_outbound_counters(const struct fg_outbound *ob, struct fg_nntp_counters *sum);
/* The queue's and each downstream's state as "name value" lines
 * (docs/relay.md, "Counters"). */
void fg_outbound_write(struct fg_outbound *ob, FILE *f);
/* When warm-up ends (0: off). */
fg_time_t fg_outbound_warm_until(const struct fg_outbound *ob);

#endif /* FLOODGATE_OUTBOUND_H */
