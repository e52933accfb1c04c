/* SPDX-License-Identifier: MIT */
/*
 * wiring.h — what one engine thread needs beside its transport, built in
 * one place for the three programs that run engines (floodgate's workers,
 * floodgate-host's threads, fg-taphost's stack).
 *
 * Built in this order; a failure at any step undoes the steps before it,
 * and fg_wiring_destroy undoes them all in the reverse order:
 *
 *   1. the sink where accepted articles go: null, memory, or the outbound
 *      queue's handle for this thread (outbound.h) and, with the queue,
 *      the thread's warm-up asker;
 *   2. with floodctld's region: a writer slot (a claim refused with
 *      -EAGAIN — floodctld is still clearing a dead writer's entries — is
 *      tried again for up to FG_WIRING_CLAIM_TRIES * FG_WIRING_CLAIM_WAIT_US),
 *      the engine's link to it (slotlink.h), and the link in the outbound
 *      queue's journal gate when there is an outbound side;
 *   3. the session engine, its sink, hooks, history owner, warm-up and
 *      cluster link filled in from steps 1 and 2.
 *
 * The transport the program builds on the engine (net, TCP, sessions,
 * sockets), the counter publication into the slot and the shutdown's
 * settling stay with the program: it destroys its transport first.
 *
 * Threads: built and destroyed on one thread, used by the engine's thread.
 */
#ifndef FLOODGATE_WIRING_H
#define FLOODGATE_WIRING_H

#include <stdbool.h>

#include "floodgate/claimer.h"
#include "floodgate/outbound.h"
#include "floodgate/region.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"
#include "floodgate/slotlink.h"

#define FG_WIRING_CLAIM_TRIES 200u
#define FG_WIRING_CLAIM_WAIT_US 50000u

enum fg_wiring_sink {
	FG_WIRING_SINK_NULL,		/* decided, counted, never relayed */
	FG_WIRING_SINK_MEMORY,		/* sink.h's in-memory sink (`mem`) */
	FG_WIRING_SINK_QUEUE,		/* the durable queue (`ob` required) */
};

struct fg_wiring_params {
	enum fg_wiring_sink sink;
	struct fg_sink_mem_params mem;	/* FG_WIRING_SINK_MEMORY */
	/* The outbound side: the queue sink's and the warm-up asker's source,
	 * and, whatever the sink, the journal gate the slot link joins
	 * (NULL: none). */
	struct fg_outbound *ob;
	/* With the queue: the thread's own acker for end-to-end
	 * acknowledgement (a DPDK worker's portack.h), taken by the sink;
	 * NULL: the relay thread's. */
	struct fg_relay_acker *acker;
	/* Called from the queue's, the relay's or the cluster's thread when
	 * the engine's thread has completions to poll; NULL: it polls anyway. */
	void (*wake)(void *arg);
	void *wake_arg;
	/* floodctld's region (NULL: no slot, no link) and the slot's name */
	struct fg_region *region;
	const char *slot_name;
	/* the cluster thread (claimer.h), or NULL: this box alone */
	struct fg_claimer *claimer;
	/* for the log: the component and whose wiring this is ("worker 2") */
	const char *log_comp;
	const char *log_who;
	/* The engine's parameters as the program sets them (cfg, history,
	 * stats — required, also the queue sink's counters —, peer_stats,
	 * limits, token_base); the builder fills in sink_ops, sink, hooks,
	 * history_owner, warmup and cluster. */
	struct fg_nntp_engine_params engine;
};

struct fg_wiring;

/* NULL and *err: -ENOMEM, -EBUSY (every writer slot in use, logged),
 * -EAGAIN (floodctld kept clearing a dead writer, logged), -ENOSPC (the
 * gate is full), -EINVAL (the engine refused its parameters). */
struct fg_wiring *fg_wiring_build(const struct fg_wiring_params *p, int *err);
/* The engine first, then the link and the slot, then the sink. Its
 * transport must be gone; NULL is fine. */
void fg_wiring_destroy(struct fg_wiring *wr);

struct fg_nntp_engine *fg_wiring_engine(const struct fg_wiring *wr);
/* The slot and the link, or NULL without a region. */
struct fg_region_writer *fg_wiring_slot(const struct fg_wiring *wr);
struct fg_slotlink *fg_wiring_link(const struct fg_wiring *wr);

/* Articles the queue's writer still holds for this engine (their
 * completions not yet polled): what a program settles at exit; 0 for the
 * other sinks. */
unsigned fg_wiring_sink_busy(const struct fg_wiring *wr);
/* The memory sink's counters into `out`: true; false for the others. */
bool fg_wiring_sink_mem_stats(const struct fg_wiring *wr, struct fg_sink_mem_stats *out);

#endif /* FLOODGATE_WIRING_H */
