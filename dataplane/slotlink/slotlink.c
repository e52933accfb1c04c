/* SPDX-License-Identifier: MIT */
/*
 * slotlink.c — engine hooks onto a region writer slot, and counter
 * publication (see slotlink.h).
 *
 * State: the configuration-to-region peer map (cfg_to_region[i], -1 when
 * the region has no such name) and the per-region-peer base counters that
 * keep per-peer totals across reloads. Everything is touched by the
 * slot's one writer thread only, except the two journal-gate atomics
 * (jpushed, jbacklog), which the outbound queue's writer thread reads.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/rules.h"
#include "floodgate/slotlink.h"
#include "floodgate/vlog.h"

#define COMP "slotlink"

struct fg_slotlink {
	struct fg_region_writer *w;
	struct fg_region *r;
	unsigned n_peer;				/* of the mapped configuration */
	int cfg_to_region[FG_CONFIG_MAX_PEERS + 1];
	int region_to_cfg[FG_REGION_PEERS];
	struct fg_stats base[FG_REGION_PEERS];		/* folded before reloads */
	struct fg_region_delays base_delay[FG_REGION_PEERS];
	/* each peer's input octets + sessions at the last publication: when
	 * they grew, the peer was seen (its peer_seen is stamped) */
	uint64_t seen_mark[FG_REGION_PEERS];
	struct fg_stats tmp;
	/* for the outbound queue's journal gate (outbound.h): records placed
	 * in the slot's journal ring, and whether the last one was refused
	 * (the engine then holds records back) */
	_Atomic uint64_t jpushed;
	_Atomic bool jbacklog;
};

struct fg_slotlink *fg_slotlink_create(struct fg_region_writer *w, const struct fg_config *cfg)
{
	struct fg_slotlink *sl = calloc(1, sizeof(*sl));

	if (!sl)
		return NULL;
	sl->w = w;
	sl->r = fg_region_writer_region(w);
	fg_slotlink_set_config(sl, cfg);
	return sl;
}

void fg_slotlink_destroy(struct fg_slotlink *sl)
{
	free(sl);
}

void fg_slotlink_set_config(struct fg_slotlink *sl, const struct fg_config *cfg)
{
	unsigned unknown = 0;

	for (unsigned i = 0; i < FG_REGION_PEERS; i++)
		sl->region_to_cfg[i] = -1;
	sl->n_peer = cfg->n_peer;
	for (unsigned i = 0; i < cfg->n_peer; i++) {
		int ri = fg_region_peer_index(sl->r, cfg->peer[i].name);

		sl->cfg_to_region[i] = ri < 0 ? -1 : ri;
		if (ri >= 0)
			sl->region_to_cfg[ri] = (int)i;
		else
			unknown++;
	}
	sl->cfg_to_region[cfg->n_peer] = -1;
	if (unknown)
		FG_LOG_WARN(COMP, "%u configured peers are not named in the region (floodctld runs "
			    "another configuration?): their counters go to the total only", unknown);
}

int fg_slotlink_region_peer(const struct fg_slotlink *sl, unsigned i)
{
	return i < sl->n_peer ? sl->cfg_to_region[i] : -1;
}

void fg_slotlink_fold(struct fg_slotlink *sl, const struct fg_nntp_counters *peers,
		      unsigned n_peer)
{
	FG_ASSERT(n_peer == sl->n_peer);
	for (unsigned i = 0; i < n_peer; i++) {
		int ri = sl->cfg_to_region[i];

		if (ri < 0)
			continue;
		fg_stats_merge(&sl->base[ri], &peers[i].s);
		fg_hist_merge(&sl->base_delay[ri].injection_delay, &peers[i].n.injection_delay);
		fg_hist_merge(&sl->base_delay[ri].propagation_delay, &peers[i].n.arrival_delay);
	}
}

int fg_slotlink_switch(struct fg_slotlink *sl, struct fg_nntp_engine *e, const struct fg_config *old,
		       const struct fg_config *cfg, struct fg_nntp_counters **peers,
		       struct fg_nntp_counters **fresh)
{
	struct fg_nntp_counters *was = *peers;
	int rc;

	if (sl)
		fg_slotlink_fold(sl, was, old->n_peer);
	rc = fg_nntp_engine_set_config(e, cfg, *fresh);
	if (rc != 0) {
		/* the folded counters are in the base: publish from zero */
		if (sl)
			memset(was, 0, (old->n_peer + 1) * sizeof(*was));
		return rc;
	}
	if (sl)
		fg_slotlink_set_config(sl, cfg);
	*peers = *fresh;
	*fresh = was;
	return 0;
}

/* A peer's delays: those folded before reloads, and the live ones. */
static void publish_delays(struct fg_region_delays *out, const struct fg_region_delays *base,
			   const struct fg_nntp_counters *live)
{
	*out = *base;
	if (!live)
		return;
	fg_hist_merge(&out->injection_delay, &live->n.injection_delay);
	fg_hist_merge(&out->propagation_delay, &live->n.arrival_delay);
}

void fg_slotlink_publish(struct fg_slotlink *sl, const struct fg_nntp_counters *total,
			 const struct fg_nntp_counters *peers, unsigned n_peer,
			 bool clock_suspect)
{
	struct fg_region_wstats *ws = fg_region_writer_stats(sl->w);
	unsigned np = fg_region_npeers(sl->r);
	fg_time_t now = 0;		/* read once, when a peer was seen */
	uint64_t mark;

	FG_ASSERT(n_peer == sl->n_peer);
	ws->total = total->s;
	ws->injection_delay = total->n.injection_delay;
	ws->propagation_delay = total->n.arrival_delay;
	for (unsigned ri = 0; ri < np && ri < FG_REGION_PEERS; ri++) {
		int ci = sl->region_to_cfg[ri];

		const struct fg_nntp_counters *live = ci >= 0 && peers ? &peers[ci] : NULL;

		sl->tmp = sl->base[ri];
		if (live)
			fg_stats_merge(&sl->tmp, &live->s);
		ws->peer[ri] = sl->tmp;
		publish_delays(&ws->peer_delay[ri], &sl->base_delay[ri], live);
		mark = sl->tmp.ctr[FG_CTR_NNTP_BYTES_IN] + sl->tmp.ctr[FG_CTR_NNTP_SESSIONS_OPENED];
		if (mark != sl->seen_mark[ri]) {
			sl->seen_mark[ri] = mark;
			ws->peer_seen[ri] = now ? now : (now = time(NULL));
		}
	}
	fg_region_writer_heartbeat(sl->w);
	fg_region_writer_clock_suspect(sl->w, clock_suspect);
}

/* ------------------------------------------------------------ hooks */

static int hook_journal(void *ctx, const struct fg_journal_rec *r)
{
	struct fg_slotlink *sl = ctx;
	fg_time_t date = r->article_date;
	int rc;

	/* the record keeps the date as a 32-bit offset from first-seen */
	if (date && date - r->first_seen > INT32_MAX)
		date = r->first_seen + INT32_MAX;
	else if (date && date - r->first_seen < INT32_MIN)
		date = r->first_seen + INT32_MIN;
	rc = fg_journal_append(sl->w, &r->key, r->state, date, r->first_seen,
			       r->date_used == FG_RULES_DATE_INJECTION ? FG_JREC_F_DATE_INJECTION
			       : r->date_used == FG_RULES_DATE_DATE ? FG_JREC_F_DATE_DATE : 0,
			       r->reason);
	/* anything but a full ring means a state that is not final: an
	 * engine bug that must not be papered over */
	FG_ASSERT(rc == 0 || rc == -ENOSPC);
	if (rc == 0)
		atomic_fetch_add_explicit(&sl->jpushed, 1, memory_order_release);
	atomic_store_explicit(&sl->jbacklog, rc != 0, memory_order_release);
	return rc;
}

int fg_slotlink_journal_mark(struct fg_slotlink *sl, uint64_t *pushed)
{
	if (atomic_load_explicit(&sl->jbacklog, memory_order_acquire))
		return -EAGAIN;
	*pushed = atomic_load_explicit(&sl->jpushed, memory_order_acquire);
	return 0;
}

bool fg_slotlink_journal_durable(const struct fg_slotlink *sl, uint64_t pushed)
{
	return fg_region_writer_committed(sl->w) >= pushed;
}

static int code_verdict(unsigned code)
{
	switch (code) {
	case 238: case 335: return FG_VLOG_WANT;
	case 239: case 235: return FG_VLOG_ACCEPT;
	case 439: case 437: return FG_VLOG_REJECT;
	case 438: case 435: return FG_VLOG_REFUSE;
	case 431: case 436: return FG_VLOG_DEFER;
	default: return -1;
	}
}

static int verb_cmd(enum fg_nntp_verb v)
{
	switch (v) {
	case FG_NNTP_VERB_CHECK: return FG_VLOG_CHECK;
	case FG_NNTP_VERB_TAKETHIS: return FG_VLOG_TAKETHIS;
	case FG_NNTP_VERB_IHAVE: return FG_VLOG_IHAVE;
	default: return -1;
	}
}

static int hook_verdict(void *ctx, const struct fg_verdict_rec *r)
{
	struct fg_slotlink *sl = ctx;
	int verdict = code_verdict(r->code), cmd = verb_cmd(r->verb);
	fg_time_t adate = r->has_injection_date ? r->injection_date : r->has_date ? r->date : 0;
	int peer = r->peer >= 0 ? fg_slotlink_region_peer(sl, (unsigned)r->peer) : -1;
	struct timespec ts;

	if (verdict < 0 || cmd < 0)
		return 0;	/* 400s and the like are not decisions */
	clock_gettime(CLOCK_REALTIME, &ts);
	return fg_vlog_emit(sl->w, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
			    (enum fg_vlog_cmd)cmd, peer, r->remote, r->msgid, r->msgid_len,
			    (enum fg_vlog_verdict)verdict, r->reason, adate,
			    r->has_date ? r->date : 0,
			    r->has_injection_date ? r->injection_date : 0,
			    r->size ? r->time : 0);
}

void fg_slotlink_hooks(struct fg_slotlink *sl, struct fg_nntp_engine_hooks *out)
{
	out->journal = hook_journal;
	out->verdict = hook_verdict;
	out->ctx = sl;
}
