/* SPDX-License-Identifier: MIT */
/*
 * ctlink.c — floodgate-host as a writer on floodctld's region
 * (`--floodctld`): the history table is floodctld's, every worker thread
 * claims a writer slot, journals each final history transition into the
 * slot's ring (the engine's journal hook: -ENOSPC when full, the engine
 * keeps the record and defers new work), hands verdict-log lines over,
 * and publishes its counters into the slot every 100 ms for /metrics.
 * docs/operations.md describes the region and the slots.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/rules.h"
#include "floodgate/vlog.h"
#include "host.h"

#define PUBLISH_NS 100000000ull

int host_ctl_attach(const struct fg_config *cfg, struct fg_region **out)
{
	char why[512];

	*out = fg_region_attach(cfg->shm_path, why, sizeof(why));
	if (!*out) {
		FG_LOG_ERR(HOST_COMP, "cannot use floodctld's region: %s", why);
		return -ENOENT;
	}
	FG_LOG_NOTICE(HOST_COMP, "attached to floodctld's region %s", fg_region_path(*out));
	return 0;
}

static int hook_journal(void *ctx, const struct fg_journal_rec *r)
{
	struct host_worker *w = ctx;
	int rc;

	/* the record keeps the date as a 32-bit offset from first-seen: a
	 * date that far off has been clamped by history already */
	fg_time_t date = r->article_date ? r->article_date : r->first_seen;

	date = FG_MAX(FG_MIN(date, r->first_seen + INT32_MAX), r->first_seen + INT32_MIN);
	rc = fg_journal_append(w->slot, &r->key, r->state, date, r->first_seen,
			       r->date_used == FG_RULES_DATE_INJECTION ? FG_JREC_F_DATE_INJECTION
			       : r->date_used == FG_RULES_DATE_DATE ? FG_JREC_F_DATE_DATE : 0,
			       r->reason);
	/* the outbound queue's journal gate counts what reached the ring */
	if (rc == 0)
		atomic_fetch_add_explicit(&w->jpushed, 1, memory_order_release);
	atomic_store_explicit(&w->jbacklog, rc != 0, memory_order_release);
	return rc;
}

static int verdict_of(unsigned code)
{
	switch (code) {
	case 238: case 335: return FG_VLOG_WANT;
	case 239: case 235: return FG_VLOG_ACCEPT;
	case 439: case 437: return FG_VLOG_REJECT;
	case 438: case 435: return FG_VLOG_REFUSE;
	case 431: case 436: return FG_VLOG_DEFER;
	default: return -1;	/* 400 and the like end a session, they decide nothing */
	}
}

static int cmd_of(enum fg_nntp_verb v)
{
	return v == FG_NNTP_VERB_CHECK ? FG_VLOG_CHECK : v == FG_NNTP_VERB_TAKETHIS ? FG_VLOG_TAKETHIS
	       : v == FG_NNTP_VERB_IHAVE ? FG_VLOG_IHAVE : -1;
}

static int hook_verdict(void *ctx, const struct fg_verdict_rec *r)
{
	struct host_worker *w = ctx;
	int verdict = verdict_of(r->code), cmd = cmd_of(r->verb);
	int peer = r->peer >= 0 && (unsigned)r->peer < w->cfg->n_peer ? w->peer_map[r->peer] : -1;
	fg_time_t adate = r->has_injection_date ? r->injection_date : r->has_date ? r->date : 0;
	struct timespec ts;

	if (verdict < 0 || cmd < 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	return fg_vlog_emit(w->slot, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
			    (enum fg_vlog_cmd)cmd, peer, r->msgid, r->msgid_len,
			    (enum fg_vlog_verdict)verdict, r->reason, adate,
			    r->has_date ? r->date : 0, r->has_injection_date ? r->injection_date : 0,
			    r->size ? r->time : 0);
}

int host_ctl_worker(struct host_worker *w, struct fg_region *region,
		    struct fg_engine_hooks *hooks)
{
	char name[FG_REGION_NAME_MAX];
	int err;

	snprintf(name, sizeof(name), "floodgate-host-%u", w->index);
	w->slot = fg_region_claim(region, name, &err);
	if (!w->slot) {
		FG_LOG_ERR(HOST_COMP, "worker %u: no writer slot in floodctld's region: %s", w->index,
			   strerror(-err));
		return err;
	}
	for (unsigned i = 0; i < w->cfg->n_peer; i++)
		w->peer_map[i] = fg_region_peer_index(region, w->cfg->peer[i].name);
	hooks->journal = hook_journal;
	hooks->verdict = hook_verdict;
	hooks->ctx = w;
	return 0;
}

/* The engine's counters into the slot, for floodctld's sums (one writer:
 * this thread; floodctld reads them as they are). */
void host_ctl_publish(struct host_worker *w, uint64_t now_ns)
{
	struct fg_region_wstats *ws;

	if (!w->slot || now_ns < w->next_publish)
		return;
	w->next_publish = now_ns + PUBLISH_NS;
	ws = fg_region_writer_stats(w->slot);
	ws->total = w->stats->s;
	ws->injection_delay = w->stats->n.injection_delay;
	ws->propagation_delay = w->stats->n.arrival_delay;
	for (unsigned i = 0; i < w->cfg->n_peer; i++)
		if (w->peer_map[i] >= 0)
			ws->peer[w->peer_map[i]] = w->peer_stats[i].s;
	fg_region_writer_clock_suspect(w->slot, fg_engine_clock_suspect(w->e));
	fg_region_writer_heartbeat(w->slot);
}

void host_ctl_worker_done(struct host_worker *w)
{
	if (!w->slot)
		return;
	w->next_publish = 0;
	host_ctl_publish(w, 0);
	fg_region_release(w->slot);
	w->slot = NULL;
}
