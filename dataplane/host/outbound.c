/* SPDX-License-Identifier: MIT */
/*
 * outbound.c — floodgate-host's outbound side: the durable queue in the
 * config's data directory, its writer thread, the relay thread to the
 * [downstream] servers, and one queue sink handle per worker
 * (docs/relay.md).
 *
 * Order matters at both ends. Start: the queue is opened (its recovery
 * cuts a torn tail), the relay registers each downstream as a consumer,
 * then the writer and the relay threads start, then the workers. Stop:
 * the workers first (their transfers in flight still need the writer to
 * finish), then the relay, then the writer (which makes the last cursors
 * durable), then the handles.
 *
 * Warm-up (docs/relay.md): at a cold start — this process built its
 * history empty, or floodctld did (it writes the period's end then) — the
 * period begins and its end is in the data directory; a later start inside
 * the period goes on with it. While it lasts, each worker's engine asks the
 * relay about CHECKs of unknown IDs.
 *
 * With floodctld (--floodctld) two more things: the queue deletes a
 * delivered segment only behind a journal barrier (the gate: every
 * accepted ID of the segment has been journaled by the workers, and
 * floodctld has made those records durable), so an ID that got 239 is
 * never forgotten; and the queue's and the relay's counters are published
 * into a writer slot of their own for floodctld's /metrics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "host.h"

/* When the warm-up period ends (0: no warm-up). */
static fg_time_t warm_until(const struct fg_config *cfg, bool cold_start)
{
	fg_time_t now = time(NULL), until = 0;
	bool streams = false;
	int rc;

	for (unsigned d = 0; d < cfg->n_downstream; d++)
		streams |= cfg->downstream[d].mode == FG_DOWNSTREAM_STREAM;
	if (cfg->warmup <= 0 || !streams)
		return 0;
	if (cold_start) {
		until = now + cfg->warmup;
		rc = fg_warmup_begin(cfg->data_dir, until);
		if (rc != 0)
			FG_LOG_ERR(HOST_COMP, "warm-up file in %s: %s", cfg->data_dir, strerror(-rc));
		FG_LOG_NOTICE(HOST_COMP, "cold start (empty history): warm-up for %llds, CHECKs of "
			      "unknown IDs are asked of the downstream", (long long)cfg->warmup);
	} else if (fg_warmup_until(cfg->data_dir, &until) == 0 && until > now) {
		FG_LOG_NOTICE(HOST_COMP, "warm-up goes on for %llds", (long long)(until - now));
	}
	return until > now ? until : 0;
}

/* ------------------------------------------------------------ the gate */

/* A slot of a writer that died or left, not yet reaped: its journal
 * records (a previous run of this host's, perhaps) are not all durable. */
static bool dead_writer(struct fg_region *r)
{
	for (unsigned i = 0; i < fg_region_nslots(r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(r, i, &si) == 0 &&
		    (si.state == FG_SLOT_DEAD || si.state == FG_SLOT_RELEASED))
			return true;
	}
	return false;
}

/* A barrier: every worker's journal records so far. -EAGAIN while one
 * holds records back (its ring was full), since those are not counted, and
 * while a dead writer's records (floodctld reaps its slot once they are
 * durable) may still belong to segments this run found on disk. */
static int gate_begin(void *arg, uint64_t *ticket)
{
	struct host_outbound *ob = arg;

	if (dead_writer(ob->region))
		return -EAGAIN;
	for (unsigned i = 0; i < ob->nw; i++) {
		if (atomic_load_explicit(&ob->ws[i].jbacklog, memory_order_acquire))
			return -EAGAIN;
		ob->gate_pushed[i] = atomic_load_explicit(&ob->ws[i].jpushed, memory_order_acquire);
	}
	*ticket = ++ob->gate_gen;
	return 0;
}

/* Behind the barrier, everything is durable in floodctld's journal. */
static bool gate_passed(void *arg, uint64_t ticket)
{
	struct host_outbound *ob = arg;

	if (ticket != ob->gate_gen)
		return false;
	for (unsigned i = 0; i < ob->nw; i++)
		if (ob->ws[i].slot && fg_region_writer_committed(ob->ws[i].slot) < ob->gate_pushed[i])
			return false;
	return true;
}

void host_outbound_workers(struct host_outbound *ob, struct host_worker *ws, unsigned nw)
{
	ob->ws = ws;
	ob->nw = nw;
}

/* The queue's and the relay's counters into their slot (main thread). */
void host_outbound_publish(struct host_outbound *ob, uint64_t now_ns)
{
	struct fg_region_wstats *ws;

	if (!ob->slot || now_ns < ob->next_publish)
		return;
	ob->next_publish = now_ns + 100000000ull;
	ws = fg_region_writer_stats(ob->slot);
	ws->total = ob->qstats.s;
	fg_stats_merge(&ws->total, &ob->rstats.s);
	fg_region_writer_heartbeat(ob->slot);
}

/* ------------------------------------------------------------ open, close */

int host_outbound_open(struct host_outbound *ob, const struct fg_config *cfg, bool cold_start,
		       struct fg_region *region)
{
	struct fg_queue_params qp = { 0 };
	struct fg_relay_params rp = { 0 };
	struct fg_queue_open_info info;
	int err = 0;

	memset(ob, 0, sizeof(*ob));
	qp.dir = cfg->data_dir;
	qp.commit_ns = (uint64_t)cfg->queue_commit_ms * 1000000ull;
	qp.limit = cfg->queue_limit;
	qp.max_age = cfg->queue_max_age;
	qp.stats = &ob->qstats.s;
	if (region) {
		ob->gate = (struct fg_queue_gate){ gate_begin, gate_passed, ob };
		ob->gate_pushed = calloc(64, sizeof(*ob->gate_pushed));
		ob->region = region;
		ob->slot = fg_region_claim(region, "floodgate-host-outbound", &err);
		if (!ob->gate_pushed || !ob->slot) {
			FG_LOG_ERR(HOST_COMP, "outbound: no writer slot in floodctld's region: %s",
				   strerror(-err));
			return -ENOSPC;
		}
		qp.gate = &ob->gate;
	}
	ob->q = fg_queue_open(&qp, &info, &err);
	if (!ob->q) {
		FG_LOG_ERR(HOST_COMP, "outbound queue in %s: %s", cfg->data_dir, strerror(-err));
		return err;
	}
	rp.cfg = cfg;
	rp.q = ob->q;
	rp.stats = &ob->rstats.s;
	ob->relay = fg_relay_create(&rp, &err);
	if (!ob->relay) {
		FG_LOG_ERR(HOST_COMP, "relay: %s", strerror(-err));
		fg_queue_close(ob->q);
		ob->q = NULL;
		return err;
	}
	fg_queue_set_notify(ob->q, fg_relay_notify, ob->relay);
	ob->warm_until = warm_until(cfg, cold_start);
	FG_LOG_NOTICE(HOST_COMP, "outbound queue %s: %llu records on disk, %u downstream(s)",
		      cfg->data_dir, (unsigned long long)info.records, cfg->n_downstream);
	return 0;
}

int host_outbound_start(struct host_outbound *ob)
{
	int rc = fg_queue_start(ob->q);

	if (rc == 0 && (rc = fg_relay_start(ob->relay)) != 0)
		fg_queue_stop(ob->q);
	return rc;
}

void host_outbound_stop(struct host_outbound *ob)
{
	if (!ob->q)
		return;
	fg_relay_stop(ob->relay);
	fg_queue_stop(ob->q);
}

void host_outbound_close(struct host_outbound *ob)
{
	fg_relay_destroy(ob->relay);
	fg_queue_close(ob->q);
	if (ob->slot) {
		ob->next_publish = 0;
		host_outbound_publish(ob, 0);
		fg_region_release(ob->slot);
	}
	free(ob->gate_pushed);
	ob->relay = NULL;
	ob->q = NULL;
	ob->slot = NULL;
	ob->gate_pushed = NULL;
}

static void wake_worker(void *arg)
{
	host_worker_wake(arg);
}

struct fg_queue_sink *host_outbound_sink(struct host_outbound *ob, struct host_worker *w)
{
	struct fg_queue_sink_params sp = { .wake = wake_worker, .wake_arg = w,
					   .stats = &w->stats->s };

	return fg_queue_sink_create(ob->q, &sp);
}

/* ------------------------------------------------------------ warm-up */

struct warm_cb {
	fg_engine_warm_done_fn *done;
	void *engine;
};

static bool warm_active(void *ctx, fg_time_t now)
{
	struct host_worker *w = ctx;

	return now < w->warm_until;
}

static int warm_ask(void *ctx, const char *id, size_t len, uint64_t cookie)
{
	struct host_worker *w = ctx;

	return fg_relay_ask(w->asker, id, len, cookie);
}

static void warm_answer(void *arg, uint64_t cookie, enum fg_relay_answer a)
{
	struct warm_cb *cb = arg;

	cb->done(cb->engine, cookie, (unsigned)a);
}

static unsigned warm_poll(void *ctx, fg_engine_warm_done_fn *done, void *engine)
{
	struct host_worker *w = ctx;
	struct warm_cb cb = { done, engine };

	return fg_relay_answers(w->asker, warm_answer, &cb);
}

/* The worker's warm-up hooks, or NULL (off, or nobody to ask). */
const struct fg_engine_warmup *host_outbound_warmup(struct host_outbound *ob,
						    struct host_worker *w)
{
	if (!ob->q || !ob->warm_until)
		return NULL;
	w->asker = fg_relay_asker_create(ob->relay, 1024, wake_worker, w);
	if (!w->asker)
		return NULL;
	w->warm_until = ob->warm_until;
	w->warm = (struct fg_engine_warmup){ warm_active, warm_ask, warm_poll, w, 1024 };
	return &w->warm;
}

/* The stats file's outbound lines (docs/relay.md, "floodgate-host"). */
void host_outbound_write(struct host_outbound *ob, FILE *f)
{
	struct fg_queue_cursor end, begin;
	const char *why = "";

	if (!ob->q)
		return;
	fg_queue_durable(ob->q, &end);
	fg_queue_oldest(ob->q, &begin);
	fprintf(f, "queue_records_on_disk %llu\nqueue_bytes_on_disk %llu\nqueue_refusing %d\n"
		"warmup_until %lld\nwarmup_active %d\n",
		(unsigned long long)(end.recno - begin.recno),
		(unsigned long long)fg_queue_bytes(ob->q), fg_queue_refusing(ob->q, &why),
		(long long)ob->warm_until, ob->warm_until > time(NULL));
	for (unsigned i = 0;; i++) {
		struct fg_relay_ds_status st;

		if (fg_relay_status(ob->relay, i, &st) != 0)
			break;
		fprintf(f, "downstream:%s:ready %u\ndownstream:%s:streaming %d\n"
			"downstream:%s:acked_records %llu\ndownstream:%s:lag_records %llu\n"
			"downstream:%s:sent %llu\ndownstream:%s:accepted %llu\n"
			"downstream:%s:refused %llu\ndownstream:%s:not_wanted %llu\n"
			"downstream:%s:deferred %llu\ndownstream:%s:connects %llu\n",
			st.name, st.ready, st.name, st.streaming, st.name,
			(unsigned long long)st.acked.recno, st.name,
			(unsigned long long)(end.recno > st.acked.recno ? end.recno - st.acked.recno : 0),
			st.name, (unsigned long long)st.sent, st.name, (unsigned long long)st.accepted,
			st.name, (unsigned long long)st.refused, st.name,
			(unsigned long long)st.not_wanted, st.name, (unsigned long long)st.deferred,
			st.name, (unsigned long long)st.reconnects);
	}
}
