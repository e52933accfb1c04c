/* SPDX-License-Identifier: MIT */
/*
 * outbound.c — the queue, its writer, the relay, the journal gate and the
 * warm-up askers of one dataplane process (outbound.h has the order of
 * things and the design; docs/relay.md the operator's view).
 *
 * State: everything here is set up by the main thread before the writer
 * and relay threads start. Afterwards the writer thread calls the gate
 * (gate_begin/gate_passed: only it touches gate_pushed and gate_gen), the
 * main thread publishes the counters into the slot, and each engine
 * thread uses its own sink handle and asker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/acksink.h"
#include "floodgate/portack.h"
#include "floodgate/dstatus.h"
#include "floodgate/log.h"
#include "floodgate/outbound.h"
#include "floodgate/warmup.h"

#define COMP "outbound"
#define WARM_MAX_ASKS 1024
#define CLAIM_TRIES 200		/* x 50 ms */
#define CLAIM_WAIT_US 50000
#define STATUS_NS 1000000000ull	/* downstreams.status rewritten this often */

struct fg_outbound {
	const struct fg_config *cfg;
	struct fg_queue *q;
	struct fg_relay *relay;
	bool started;
	fg_time_t warm_until;			/* warm-up on before this; 0: off */
	struct fg_nntp_counters qstats, rstats;	/* the writer's, the relay's */
	/* with floodctld's region: the gate over the engines' slot links,
	 * and a slot of its own for the counters */
	struct fg_queue_gate gate;
	struct fg_region *region;
	struct fg_slotlink **links;
	uint64_t *gate_pushed;			/* per link, at the last barrier */
	unsigned n_links, max_links;
	uint64_t gate_gen;
	struct fg_region_writer *slot;
	uint64_t next_publish;
	uint64_t next_status;
};

struct fg_outbound_warm {
	struct fg_relay_asker *asker;
	fg_time_t until;
	struct fg_nntp_engine_warmup hooks;
};

/* When the warm-up period ends (*out, 0: no warm-up). 0, or
 * -EPROTONOSUPPORT: the warm-up file is a newer build's (logged). */
static int warm_until(const struct fg_config *cfg, bool cold_start, fg_time_t *out)
{
	fg_time_t now = time(NULL), until = 0;
	bool streams = false;
	int rc;

	*out = 0;
	for (unsigned d = 0; d < cfg->n_downstream; d++)
		streams |= cfg->downstream[d].mode == FG_DOWNSTREAM_STREAM;
	if (cfg->warmup <= 0 || !streams)
		return 0;
	if (cold_start) {
		until = now + cfg->warmup;
		rc = fg_warmup_begin(cfg->data_dir, until);
		if (rc != 0)
			FG_LOG_ERR(COMP, "warm-up file in %s: %s", cfg->data_dir, strerror(-rc));
		FG_LOG_NOTICE(COMP, "cold start (empty history): warm-up for %llds, CHECKs of "
			      "unknown IDs are asked of the downstream", (long long)cfg->warmup);
	} else if ((rc = fg_warmup_until(cfg->data_dir, &until)) == -EPROTONOSUPPORT) {
		return rc;
	} else if (rc == 0 && until > now) {
		FG_LOG_NOTICE(COMP, "warm-up goes on for %llds", (long long)(until - now));
	}
	*out = until > now ? until : 0;
	return 0;
}

/* ------------------------------------------------------------ the gate */

/* A slot of a writer that died or left, not yet reaped: its journal
 * records (a previous run's, perhaps) are not all durable. */
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

/* A barrier: every engine's journal records so far. -EAGAIN while one
 * holds records back (its ring was full), since those are not counted,
 * and while a dead writer's records (floodctld reaps its slot once they
 * are durable) may still belong to segments this run found on disk. */
static int gate_begin(void *arg, uint64_t *ticket)
{
	struct fg_outbound *ob = arg;

	if (dead_writer(ob->region))
		return -EAGAIN;
	for (unsigned i = 0; i < ob->n_links; i++)
		if (fg_slotlink_journal_mark(ob->links[i], &ob->gate_pushed[i]) != 0)
			return -EAGAIN;
	*ticket = ++ob->gate_gen;
	return 0;
}

/* Behind the barrier, everything is durable in floodctld's journal. */
static bool gate_passed(void *arg, uint64_t ticket)
{
	struct fg_outbound *ob = arg;

	if (ticket != ob->gate_gen)
		return false;
	for (unsigned i = 0; i < ob->n_links; i++)
		if (!fg_slotlink_journal_durable(ob->links[i], ob->gate_pushed[i]))
			return false;
	return true;
}

int fg_outbound_gate_add(struct fg_outbound *ob, struct fg_slotlink *sl)
{
	FG_ASSERT(!ob->started);
	if (ob->n_links == ob->max_links)
		return -ENOSPC;
	ob->links[ob->n_links++] = sl;
	return 0;
}

/* ------------------------------------------------------------ counters */

/* The relay's view of one downstream, as dstatus.h files it: every row. */
static void ds_status(const struct fg_config_downstream *cfg, const struct fg_relay_ds_status *st,
		      struct fg_ds_status *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", cfg->name);
	snprintf(out->id, sizeof(out->id), "%s", cfg->id);
#define DS_COPY(f, k, src, col, w, h) out->f = st->f;
	FG_DS_FIELDS(DS_COPY)
#undef DS_COPY
}

/* downstreams.status for floodctld (dstatus.h), about once a second. */
static void status_publish(struct fg_outbound *ob, uint64_t now_ns, bool now)
{
	struct fg_ds_status s[FG_CONFIG_MAX_DOWNSTREAMS];
	struct fg_relay_ds_status st;
	unsigned n = 0;
	int rc;

	if (!ob->relay || (!now && now_ns < ob->next_status))
		return;
	ob->next_status = now_ns + STATUS_NS;
	for (; n < ob->cfg->n_downstream && fg_relay_status(ob->relay, n, &st) == 0; n++)
		ds_status(&ob->cfg->downstream[n], &st, &s[n]);
	rc = fg_ds_status_write(fg_queue_dir(ob->q), time(NULL), s, n);
	if (rc != 0)
		FG_LOG_DEBUG(COMP, "%s: %s", FG_DS_STATUS_FILE, strerror(-rc));
}

int fg_outbound_downstream_pause(struct fg_outbound *ob, const char *name, bool pause)
{
	int idx = ob && ob->relay ? fg_relay_find(ob->relay, name) : -ENOENT;

	if (idx < 0)
		return idx;
	fg_relay_pause(ob->relay, (unsigned)idx, pause);
	status_publish(ob, 0, true);
	return 0;
}

void fg_outbound_publish(struct fg_outbound *ob, uint64_t now_ns)
{
	struct fg_region_wstats *ws;

	if (!ob)
		return;
	status_publish(ob, now_ns, false);
	if (!ob->slot || now_ns < ob->next_publish)
		return;
	ob->next_publish = now_ns + FG_OUTBOUND_PUBLISH_NS;
	ws = fg_region_writer_stats(ob->slot);
	ws->total = ob->qstats.s;
	fg_stats_merge(&ws->total, &ob->rstats.s);
	fg_region_writer_heartbeat(ob->slot);
}

void fg_outbound_counters(const struct fg_outbound *ob, struct fg_nntp_counters *sum)
{
	if (!ob)
		return;
	fg_nntp_counters_merge(sum, &ob->qstats);
	fg_nntp_counters_merge(sum, &ob->rstats);
}

fg_time_t fg_outbound_warm_until(const struct fg_outbound *ob)
{
	return ob ? ob->warm_until : 0;
}

static void write_downstream(FILE *f, const struct fg_relay_ds_status *st,
			     const struct fg_queue_cursor *end)
{
	const char *n = st->name;

	fprintf(f, "downstream:%s:ready %llu\ndownstream:%s:streaming %d\n"
		"downstream:%s:acked_records %llu\ndownstream:%s:lag_records %llu\n"
		"downstream:%s:sent %llu\ndownstream:%s:accepted %llu\n"
		"downstream:%s:refused %llu\ndownstream:%s:not_wanted %llu\n"
		"downstream:%s:deferred %llu\ndownstream:%s:connects %llu\n",
		n, (unsigned long long)st->ready, n, st->streaming != 0, n,
		(unsigned long long)st->acked.recno, n,
		(unsigned long long)(end->recno > st->acked.recno ? end->recno - st->acked.recno : 0),
		n, (unsigned long long)st->sent, n, (unsigned long long)st->accepted, n,
		(unsigned long long)st->refused, n, (unsigned long long)st->not_wanted, n,
		(unsigned long long)st->deferred, n, (unsigned long long)st->reconnects);
}

void fg_outbound_write(struct fg_outbound *ob, FILE *f)
{
	struct fg_queue_cursor end, begin;
	struct fg_relay_ds_status st;

	if (!ob)
		return;
	fg_queue_durable(ob->q, &end);
	fg_queue_oldest(ob->q, &begin);
	fprintf(f, "queue_records_on_disk %llu\nqueue_bytes_on_disk %llu\nqueue_refusing %d\n"
		"warmup_until %lld\nwarmup_active %d\n",
		(unsigned long long)(end.recno - begin.recno),
		(unsigned long long)fg_queue_bytes(ob->q), fg_queue_refusing(ob->q, NULL),
		(long long)ob->warm_until, ob->warm_until > time(NULL));
	for (unsigned i = 0; fg_relay_status(ob->relay, i, &st) == 0; i++)
		write_downstream(f, &st, &end);
}

/* ------------------------------------------------------------ open, close */

/* floodctld's region: the gate and the counters' slot. */
static int region_setup(struct fg_outbound *ob, const struct fg_outbound_params *p)
{
	int err = 0;

	ob->region = p->region;
	ob->max_links = p->max_gate;
	ob->links = calloc(FG_MAX(p->max_gate, 1u), sizeof(*ob->links));
	ob->gate_pushed = calloc(FG_MAX(p->max_gate, 1u), sizeof(*ob->gate_pushed));
	if (!ob->links || !ob->gate_pushed)
		return -ENOMEM;
	ob->gate = (struct fg_queue_gate){ gate_begin, gate_passed, ob };
	/* -EAGAIN: floodctld is still clearing what a dead dataplane left
	 * (this is the process's first claim after a crash) */
	for (unsigned tries = 0; tries < CLAIM_TRIES; tries++) {
		ob->slot = fg_region_claim(p->region, p->slot_name, &err);
		if (ob->slot || err != -EAGAIN)
			break;
		usleep(CLAIM_WAIT_US);
	}
	if (!ob->slot) {
		FG_LOG_ERR(COMP, "no writer slot in floodctld's region for the queue's counters: %s",
			   strerror(-err));
		return err ? err : -ENOSPC;
	}
	return 0;
}

static void region_free(struct fg_outbound *ob)
{
	if (ob->slot) {
		ob->next_publish = 0;
		fg_outbound_publish(ob, 0);
		fg_region_release(ob->slot);
	}
	free(ob->links);
	free(ob->gate_pushed);
}

/* The relay and the queue, then the region: its last publication reads
 * neither once they are gone (a start that failed before the first
 * publication would otherwise read the relay's freed status). */
static void outbound_free(struct fg_outbound *ob)
{
	fg_relay_destroy(ob->relay);
	ob->relay = NULL;
	fg_queue_close(ob->q);
	ob->q = NULL;
	region_free(ob);
	free(ob);
}

struct fg_outbound *fg_outbound_open(const struct fg_outbound_params *p, int *err)
{
	struct fg_queue_params qp = { 0 };
	struct fg_relay_params rp = { 0 };
	struct fg_queue_open_info info;
	struct fg_outbound *ob = calloc(1, sizeof(*ob));

	*err = ob ? 0 : -ENOMEM;
	if (!ob)
		return NULL;
	ob->cfg = p->cfg;
	qp.dir = p->cfg->data_dir;
	qp.commit_ns = (uint64_t)p->cfg->queue_commit_ms * 1000000ull;
	qp.limit = p->cfg->queue_limit;
	qp.max_age = p->cfg->queue_max_age;
	qp.stats = &ob->qstats.s;
	if (p->region) {
		*err = region_setup(ob, p);
		if (*err)
			goto out_region;
		qp.gate = &ob->gate;
	}
	ob->q = fg_queue_open(&qp, &info, err);
	if (!ob->q) {
		FG_LOG_ERR(COMP, "outbound queue in %s: %s", p->cfg->data_dir, strerror(-*err));
		goto out_region;
	}
	rp.cfg = p->cfg;
	rp.q = ob->q;
	rp.stats = &ob->rstats.s;
	for (unsigned d = 0; p->port_path && d < p->cfg->n_downstream; d++)
		if (fg_portack_takes(p->cfg, &p->cfg->downstream[d]))
			rp.port_mask |= (uint8_t)(1u << d);
	ob->relay = fg_relay_create(&rp, err);
	if (!ob->relay) {
		FG_LOG_ERR(COMP, "relay: %s", strerror(-*err));
		goto out_queue;
	}
	fg_queue_set_notify(ob->q, fg_relay_notify, ob->relay);
	*err = warm_until(p->cfg, p->cold_start, &ob->warm_until);
	if (*err) {
		FG_LOG_ERR(COMP, "refusing to start: the warm-up file in %s is a newer build's",
			   p->cfg->data_dir);
		goto out_relay;
	}
	FG_LOG_NOTICE(COMP, "queue %s: %llu records on disk, %u downstream(s)", p->cfg->data_dir,
		      (unsigned long long)info.records, p->cfg->n_downstream);
	return ob;
out_relay:
	fg_relay_destroy(ob->relay);
	ob->relay = NULL;
out_queue:
	fg_queue_close(ob->q);
	ob->q = NULL;
out_region:
	region_free(ob);
	free(ob);
	return NULL;
}

int fg_outbound_start(struct fg_outbound *ob)
{
	int rc = fg_queue_start(ob->q);

	if (rc == 0 && (rc = fg_relay_start(ob->relay)) != 0)
		fg_queue_stop(ob->q);
	ob->started = rc == 0;
	return rc;
}

void fg_outbound_stop(struct fg_outbound *ob)
{
	if (!ob || !ob->started)
		return;
	/* the relay first: the writer then makes its last cursors durable */
	fg_relay_stop(ob->relay);
	fg_queue_stop(ob->q);
	ob->started = false;
}

void fg_outbound_close(struct fg_outbound *ob)
{
	if (!ob)
		return;
	fg_outbound_stop(ob);
	outbound_free(ob);
}

void *fg_outbound_sink(struct fg_outbound *ob, struct fg_stats *stats, void (*wake)(void *arg),
		       void *wake_arg, const struct fg_sink_ops **ops)
{
	return fg_outbound_sink_acker(ob, stats, wake, wake_arg, NULL, ops);
}

void *fg_outbound_sink_acker(struct fg_outbound *ob, struct fg_stats *stats,
			     void (*wake)(void *arg), void *wake_arg, struct fg_relay_acker *ak,
			     const struct fg_sink_ops **ops)
{
	struct fg_queue_sink_params sp = { .wake = wake, .wake_arg = wake_arg, .stats = stats,
					   .max_held = ob->cfg->held_limit };
	struct fg_queue_sink *qs = fg_queue_sink_create(ob->q, &sp);
	struct fg_ack_sink *as;

	*ops = &fg_queue_sink_ops;
	if (!qs) {
		fg_relay_acker_destroy(ak);
		return NULL;
	}
	/* NULL: no downstream acknowledges (or no memory: the queue's path) */
	if (!ak)
		ak = fg_relay_acker_create(ob->relay, sp.max_articles ? sp.max_articles : 4096,
					   wake, wake_arg);
	if (!ak)
		return qs;
	as = fg_ack_sink_create(qs, ak, stats, (uint64_t)ob->cfg->ack_timeout_ms * 1000000ull,
				ob->cfg->held_limit / 2);
	if (!as) {
		fg_relay_acker_destroy(ak);
		fg_queue_sink_destroy(qs);
		return NULL;
	}
	*ops = &fg_ack_sink_ops;
	return as;
}

unsigned fg_outbound_sink_busy(const struct fg_sink_ops *ops, const void *sink)
{
	return ops == &fg_ack_sink_ops ? fg_ack_sink_busy(sink) : fg_queue_sink_busy(sink);
}

/* ------------------------------------------------------------ warm-up */

struct warm_cb {
	fg_nntp_engine_warm_done_fn *done;
	void *engine;
};

static bool warm_active(void *ctx, fg_time_t now)
{
	struct fg_outbound_warm *wa = ctx;

	return now < wa->until;
}

static int warm_ask(void *ctx, const char *id, size_t len, uint64_t cookie)
{
	struct fg_outbound_warm *wa = ctx;

	return fg_relay_ask(wa->asker, id, len, cookie);
}

static void warm_answer(void *arg, uint64_t cookie, enum fg_relay_answer a)
{
	struct warm_cb *cb = arg;

	cb->done(cb->engine, cookie, (unsigned)a);
}

static unsigned warm_poll(void *ctx, fg_nntp_engine_warm_done_fn *done, void *engine)
{
	struct fg_outbound_warm *wa = ctx;
	struct warm_cb cb = { done, engine };

	return fg_relay_answers(wa->asker, warm_answer, &cb);
}

struct fg_outbound_warm *fg_outbound_warm_create(struct fg_outbound *ob,
						 void (*wake)(void *arg), void *wake_arg)
{
	struct fg_outbound_warm *wa;

	if (!ob || !ob->warm_until)
		return NULL;
	wa = calloc(1, sizeof(*wa));
	if (!wa)
		return NULL;
	wa->asker = fg_relay_asker_create(ob->relay, WARM_MAX_ASKS, wake, wake_arg);
	if (!wa->asker) {
		free(wa);
		return NULL;
	}
	wa->until = ob->warm_until;
	wa->hooks = (struct fg_nntp_engine_warmup){ warm_active, warm_ask, warm_poll, wa,
					       WARM_MAX_ASKS };
	return wa;
}

const struct fg_nntp_engine_warmup *fg_outbound_warm_hooks(struct fg_outbound_warm *wa)
{
	return wa ? &wa->hooks : NULL;
}

void fg_outbound_warm_destroy(struct fg_outbound_warm *wa)
{
	if (!wa)
		return;
	fg_relay_asker_destroy(wa->asker);
	free(wa);
}
