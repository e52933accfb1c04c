/* SPDX-License-Identifier: MIT */
/*
 * wiring.c — an engine thread's sink, writer slot and engine (see
 * wiring.h for the order and what stays with the program).
 *
 * The builder knows which sink it made, so no caller compares ops tables:
 * the queue's busy count and the memory sink's counters are asked here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "floodgate/wiring.h"

struct fg_wiring {
	enum fg_wiring_sink kind;
	const struct fg_sink_ops *sink_ops;
	void *sink;
	struct fg_outbound_warm *warm;		/* with the queue: warm-up, or NULL */
	struct fg_region_writer *slot;		/* NULL: no region */
	struct fg_slotlink *link;
	struct fg_nntp_engine_hooks hooks;	/* the link's; the engine points here */
	struct fg_nntp_engine *e;
};

/* ------------------------------------------------------------ 1. the sink */

static int sink_build(struct fg_wiring *wr, const struct fg_wiring_params *p)
{
	wr->kind = p->sink;
	switch (p->sink) {
	case FG_WIRING_SINK_QUEUE:
		/* the article's buffers are held (within the engine's max-holds
		 * share) until the writer has them on disk; the completion comes
		 * back through the handle's ring and the engine's poll */
		if (!p->ob) {
			fg_relay_acker_destroy(p->acker);
			return -EINVAL;
		}
		wr->sink = fg_outbound_sink_acker(p->ob, &p->engine.stats->s, p->wake, p->wake_arg,
						  p->acker, &wr->sink_ops);
		if (wr->sink)
			wr->warm = fg_outbound_warm_create(p->ob, p->wake, p->wake_arg);
		break;
	case FG_WIRING_SINK_MEMORY:
		wr->sink_ops = &fg_sink_mem_ops;
		wr->sink = fg_sink_mem_create(&p->mem);
		break;
	case FG_WIRING_SINK_NULL:
		wr->sink_ops = &fg_sink_null_ops;
		wr->sink = fg_sink_null_create(0);
		break;
	default:
		return -EINVAL;
	}
	return wr->sink ? 0 : -ENOMEM;
}

static void sink_unbuild(struct fg_wiring *wr)
{
	fg_outbound_warm_destroy(wr->warm);
	wr->warm = NULL;
	if (wr->sink)
		wr->sink_ops->destroy(wr->sink);
	wr->sink = NULL;
}

/* ------------------------------------------------------------ 2. the slot */

static const char *claim_error(int err)
{
	if (err == -EBUSY)
		return "every slot is in use (floodctld --writers)";
	if (err == -EAGAIN)
		return "floodctld kept clearing a dead writer's entries";
	return strerror(-err);
}

static int slot_claim(struct fg_wiring *wr, const struct fg_wiring_params *p)
{
	int err = 0;

	for (unsigned tries = 0; tries < FG_WIRING_CLAIM_TRIES; tries++) {
		wr->slot = fg_region_claim(p->region, p->slot_name, &err);
		if (wr->slot || err != -EAGAIN)
			break;
		usleep(FG_WIRING_CLAIM_WAIT_US);
	}
	if (wr->slot)
		return 0;
	FG_LOG_ERR(p->log_comp, "%s: no writer slot in floodctld's region: %s", p->log_who,
		   claim_error(err));
	return err ? err : -EBUSY;
}

static int slot_build(struct fg_wiring *wr, const struct fg_wiring_params *p)
{
	int rc;

	if (!p->region)
		return 0;
	rc = slot_claim(wr, p);
	if (rc)
		return rc;
	wr->link = fg_slotlink_create(wr->slot, p->engine.cfg);
	if (!wr->link)
		return -ENOMEM;
	fg_slotlink_hooks(wr->link, &wr->hooks);
	/* the queue deletes a segment only once its IDs are in the journal */
	return p->ob ? fg_outbound_gate_add(p->ob, wr->link) : 0;
}

static void slot_unbuild(struct fg_wiring *wr)
{
	fg_slotlink_destroy(wr->link);
	wr->link = NULL;
	if (wr->slot)
		fg_region_release(wr->slot);
	wr->slot = NULL;
}

/* ------------------------------------------------------------ 3. the engine */

static int engine_build(struct fg_wiring *wr, const struct fg_wiring_params *p)
{
	struct fg_nntp_engine_params ep = p->engine;

	ep.sink_ops = wr->sink_ops;
	ep.sink = wr->sink;
	ep.hooks = wr->link ? &wr->hooks : NULL;
	ep.history_owner = wr->slot ? fg_region_writer_slot(wr->slot) : FG_HISTORY_OWNER_NONE;
	ep.warmup = fg_outbound_warm_hooks(wr->warm);
	ep.cluster = p->claimer ? fg_claimer_link(p->claimer, p->wake, p->wake_arg) : NULL;
	if (p->claimer && !ep.cluster)
		return -ENOMEM;
	wr->e = fg_nntp_engine_create(&ep);
	return wr->e ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ the API */

struct fg_wiring *fg_wiring_build(const struct fg_wiring_params *p, int *err)
{
	struct fg_wiring *wr = calloc(1, sizeof(*wr));

	*err = wr ? 0 : -ENOMEM;
	if (!wr)
		return NULL;
	*err = sink_build(wr, p);
	if (*err)
		goto out_sink;
	*err = slot_build(wr, p);
	if (*err)
		goto out_slot;
	*err = engine_build(wr, p);
	if (*err)
		goto out_slot;
	return wr;
out_slot:
	slot_unbuild(wr);
out_sink:
	sink_unbuild(wr);
	free(wr);
	return NULL;
}

void fg_wiring_destroy(struct fg_wiring *wr)
{
	if (!wr)
		return;
	fg_nntp_engine_destroy(wr->e);
	slot_unbuild(wr);
	sink_unbuild(wr);
	free(wr);
}

struct fg_nntp_engine *fg_wiring_engine(const struct fg_wiring *wr)
{
	return wr->e;
}

struct fg_region_writer *fg_wiring_slot(const struct fg_wiring *wr)
{
	return wr->slot;
}

struct fg_slotlink *fg_wiring_link(const struct fg_wiring *wr)
{
	return wr->link;
}

unsigned fg_wiring_sink_busy(const struct fg_wiring *wr)
{
	return wr->kind == FG_WIRING_SINK_QUEUE ? fg_outbound_sink_busy(wr->sink_ops, wr->sink) : 0;
}

bool fg_wiring_sink_mem_stats(const struct fg_wiring *wr, struct fg_sink_mem_stats *out)
{
	if (wr->kind != FG_WIRING_SINK_MEMORY)
		return false;
	fg_sink_mem_stats(wr->sink, out);
	return true;
}
