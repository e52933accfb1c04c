/* SPDX-License-Identifier: MIT */
/*
 * metrics.c — rendering the stats export (metrics.h has the names).
 *
 * Everything is sampled once per render into a `struct sample` (the
 * region's counter sum, the history's stats, floodctld's state), then
 * written by three renderers that read only the sample, so the Prometheus
 * text, the JSON and the table of one render always agree.
 *
 * Prometheus text format 0.0.4: each family is contiguous, introduced by
 * "# HELP" (backslash and newline escaped) and "# TYPE"; label values
 * escape backslash, double quote and newline; histogram buckets are
 * cumulative, in increasing order, ending with le="+Inf" equal to _count.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "floodgate/metrics.h"

/* A live writer that counts its loop's cycles (floodgate's workers). */
struct lcore_load {
	char name[FG_REGION_NAME_MAX];
	uint64_t busy, idle;		/* TSC cycles */
};

struct sample {
	struct fg_region_wstats *st;	/* heap: a few hundred KiB */
	struct lcore_load *lc;		/* heap: one per slot at most */
	unsigned n_lc;
	struct fg_history_stats hs;
	unsigned npeers;
	unsigned writers;
	bool clock_suspect;
	struct fg_kclock kclock;
	struct fg_nic_block *nic;	/* heap: each dataplane's port figures */
	unsigned n_nic;
};

/* The NIC block of every live slot that has one (a dataplane's worker 0). */
static void sample_nic(struct fg_region *r, struct sample *s)
{
	struct fg_nic_block b;

	for (unsigned i = 0; i < fg_region_nslots(r); i++) {
		struct fg_nic_block *grown;

		if (fg_region_nic_read(r, i, &b) != 0)
			continue;
		grown = realloc(s->nic, (s->n_nic + 1) * sizeof(*s->nic));
		if (!grown)
			return;
		s->nic = grown;
		s->nic[s->n_nic++] = b;
	}
}

static void sample_free(struct sample *s)
{
	free(s->st);
	free(s->lc);
	free(s->nic);
}

static bool sample_take(struct fg_region *r, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->st = malloc(sizeof(*s->st));
	if (!s->st)
		return false;
	fg_region_sum(r, s->st);
	s->lc = calloc(fg_region_nslots(r), sizeof(*s->lc));
	if (!s->lc) {
		sample_free(s);
		return false;
	}
	for (unsigned i = 0; i < fg_region_nslots(r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(r, i, &si) != 0 || si.state != FG_SLOT_LIVE ||
		    si.busy_cycles + si.idle_cycles == 0)
			continue;
		memcpy(s->lc[s->n_lc].name, si.name, sizeof(si.name));
		s->lc[s->n_lc].busy = si.busy_cycles;
		s->lc[s->n_lc].idle = si.idle_cycles;
		s->n_lc++;
	}
	fg_history_stats(fg_region_history(r), &s->hs);
	s->npeers = fg_region_npeers(r);
	s->writers = fg_region_live_writers(r);
	s->clock_suspect = fg_metrics_clock_suspect(r);
	fg_kclock_read(&s->kclock);
	sample_nic(r, s);
	return true;
}

void fg_metrics_kclock_json(struct fg_json *j, const struct fg_kclock *k)
{
	fg_json_obj(j, "kernel_clock");
	if (k->ok)
		fg_json_bool(j, "synchronized", k->synchronised);
	else
		fg_json_null(j, "synchronized");
	fg_json_f64(j, "estimated_error_seconds", k->ok ? k->est_error : NAN);
	fg_json_f64(j, "max_error_seconds", k->ok ? k->max_error : NAN);
	fg_json_close(j);
}

void fg_metrics_kclock_text(struct fg_sbuf *b, const struct fg_kclock *k)
{
	if (!k->ok) {
		fg_sbuf_puts(b, "kernel clock: adjtimex failed\n");
		return;
	}
	fg_sbuf_printf(b, "kernel clock: %s, estimated error %.6f s, maximum %.6f s (adjtimex; "
		       "not acted on)\n", k->synchronised ? "synchronised" : "NOT SYNCHRONISED",
		       k->est_error, k->max_error);
}

bool fg_metrics_clock_suspect(const struct fg_region *r)
{
	for (unsigned i = 0; i < fg_region_nslots(r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(r, i, &si) == 0 && si.state == FG_SLOT_LIVE &&
		    si.clock_suspect)
			return true;
	}
	return false;
}

/* The share of a writer's loop spent on work, since it claimed its slot. */
static double lcore_busy_share(const struct lcore_load *l)
{
	return (double)l->busy / (double)(l->busy + l->idle);
}

static bool peer_has(const struct sample *s, unsigned c)
{
	for (unsigned p = 0; p < s->npeers; p++)
		if (s->st->peer[p].ctr[c])
			return true;
	return false;
}

static double age(fg_time_t now, fg_time_t t)
{
	return t ? (double)(now - t) : NAN;
}

/* ---- Prometheus ---- */

static void prom_escaped(struct fg_sbuf *b, const char *s, bool label)
{
	for (; *s; s++) {
		if (*s == '\\')
			fg_sbuf_puts(b, "\\\\");
		else if (*s == '\n')
			fg_sbuf_puts(b, "\\n");
		else if (*s == '"' && label)
			fg_sbuf_puts(b, "\\\"");
		else
			fg_sbuf_put(b, s, 1);
	}
}

static void prom_head(struct fg_sbuf *b, const char *name, const char *type, const char *help)
{
	fg_sbuf_printf(b, "# HELP %s ", name);
	prom_escaped(b, help, false);
	fg_sbuf_printf(b, "\n# TYPE %s %s\n", name, type);
}

static void prom_value(struct fg_sbuf *b, double v)
{
	if (isnan(v))
		fg_sbuf_puts(b, " NaN\n");
	else if (v == floor(v) && fabs(v) < 9e15)
		fg_sbuf_printf(b, " %.0f\n", v);
	else
		fg_sbuf_printf(b, " %.6g\n", v);
}

static void prom_gauge(struct fg_sbuf *b, const char *name, const char *help, double v)
{
	prom_head(b, name, "gauge", help);
	fg_sbuf_puts(b, name);
	prom_value(b, v);
}

static void prom_counter(struct fg_sbuf *b, const char *name, const char *help, uint64_t v)
{
	prom_head(b, name, "counter", help);
	fg_sbuf_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void prom_label(struct fg_sbuf *b, const char *k, const char *v, bool first)
{
	fg_sbuf_printf(b, "%s%s=\"", first ? "" : ",", k);
	prom_escaped(b, v, true);
	fg_sbuf_puts(b, "\"");
}

static void prom_counters(struct fg_sbuf *b, struct fg_region *r, const struct sample *s)
{
	char name[160], help[400];

	for (unsigned c = 0; c < FG_CTR__COUNT; c++) {
		snprintf(name, sizeof(name), "floodgate_%s_total", fg_counter_name(c));
		prom_counter(b, name, fg_counter_help(c), s->st->total.ctr[c]);
	}
	for (unsigned c = 0; c < FG_CTR__COUNT; c++) {
		if (!peer_has(s, c))
			continue;
		snprintf(name, sizeof(name), "floodgate_peer_%s_total", fg_counter_name(c));
		snprintf(help, sizeof(help), "%s, by peer", fg_counter_help(c));
		prom_head(b, name, "counter", help);
		for (unsigned p = 0; p < s->npeers; p++) {
			fg_sbuf_printf(b, "%s{", name);
			prom_label(b, "peer", fg_region_peer_name(r, p), true);
			fg_sbuf_printf(b, "} %llu\n", (unsigned long long)s->st->peer[p].ctr[c]);
		}
	}
}

static void prom_rejects(struct fg_sbuf *b, struct fg_region *r, const struct sample *s)
{
	bool any = false;

	prom_head(b, "floodgate_rejected_total", "counter",
		  "articles and offers refused, by reject reason (tbl/reasons.h)");
	for (unsigned x = 1; x < FG_REASON__COUNT; x++) {
		fg_sbuf_puts(b, "floodgate_rejected_total{");
		prom_label(b, "reason", fg_reason_name(x), true);
		fg_sbuf_printf(b, "} %llu\n", (unsigned long long)s->st->total.rejected[x]);
	}
	for (unsigned p = 0; p < s->npeers; p++) {
		for (unsigned x = 1; x < FG_REASON__COUNT; x++) {
			if (!s->st->peer[p].rejected[x])
				continue;
			if (!any)
				prom_head(b, "floodgate_peer_rejected_total", "counter",
					  "articles and offers refused, by peer and reject reason");
			any = true;
			fg_sbuf_puts(b, "floodgate_peer_rejected_total{");
			prom_label(b, "peer", fg_region_peer_name(r, p), true);
			prom_label(b, "reason", fg_reason_name(x), false);
			fg_sbuf_printf(b, "} %llu\n", (unsigned long long)s->st->peer[p].rejected[x]);
		}
	}
}

/* "{peer=\"p\"," before a bucket's le, "{peer=\"p\"}" after _sum, or
 * nothing without a peer. */
static void prom_peer_open(struct fg_sbuf *b, const char *peer, bool more)
{
	if (!peer) {
		if (more)
			fg_sbuf_puts(b, "{");
		return;
	}
	fg_sbuf_puts(b, "{");
	prom_label(b, "peer", peer, true);
	fg_sbuf_puts(b, more ? "," : "}");
}

/* One histogram's series (peer: labelled, or NULL). */
static void prom_hist_series(struct fg_sbuf *b, const char *name, const char *peer,
			     const struct fg_hist *h)
{
	uint64_t cum = h->negative;

	fg_sbuf_printf(b, "%s_bucket", name);
	prom_peer_open(b, peer, true);
	fg_sbuf_printf(b, "le=\"-1\"} %llu\n", (unsigned long long)cum);
	/* bucket i holds 2^(i-1) <= v < 2^i: for whole seconds, v <= 2^i - 1;
	 * the last bucket also holds everything larger, so it is +Inf only */
	for (unsigned i = 0; i + 1 < FG_HIST_BUCKETS; i++) {
		cum += h->bucket[i];
		fg_sbuf_printf(b, "%s_bucket", name);
		prom_peer_open(b, peer, true);
		fg_sbuf_printf(b, "le=\"%lld\"} %llu\n", (long long)(fg_hist_bucket_le(i) - 1),
			       (unsigned long long)cum);
	}
	fg_sbuf_printf(b, "%s_bucket", name);
	prom_peer_open(b, peer, true);
	fg_sbuf_printf(b, "le=\"+Inf\"} %llu\n", (unsigned long long)h->count);
	fg_sbuf_printf(b, "%s_sum", name);
	prom_peer_open(b, peer, false);
	fg_sbuf_printf(b, " %lld\n%s_count", (long long)h->sum, name);
	prom_peer_open(b, peer, false);
	fg_sbuf_printf(b, " %llu\n", (unsigned long long)h->count);
}

static const char help_injection[] =
	"Injection-Date minus Date: how long an article waited before entering the network (seed 002)";
static const char help_propagation[] =
	"arrival minus Injection-Date: how long the network took to bring the article here (seed 002)";

/* The two delays of seed 002, site-wide, then by peer: what a peer adds
 * (a feed an hour behind) or replays (old articles) shows in its own. */
static void prom_delays(struct fg_sbuf *b, struct fg_region *r, const struct sample *s)
{
	char help[256];

	for (unsigned k = 0; k < 2; k++) {
		const char *stem = k ? "propagation_delay_seconds" : "injection_delay_seconds";
		char name[96];

		snprintf(name, sizeof(name), "floodgate_%s", stem);
		prom_head(b, name, "histogram", k ? help_propagation : help_injection);
		prom_hist_series(b, name, NULL, k ? &s->st->propagation_delay : &s->st->injection_delay);
		if (!s->npeers)
			continue;
		snprintf(name, sizeof(name), "floodgate_peer_%s", stem);
		snprintf(help, sizeof(help), "%s, by the peer that brought the article",
			 k ? help_propagation : help_injection);
		prom_head(b, name, "histogram", help);
		for (unsigned p = 0; p < s->npeers; p++) {
			const struct fg_region_delays *d = &s->st->peer_delay[p];

			prom_hist_series(b, name, fg_region_peer_name(r, p),
					 k ? &d->propagation_delay : &d->injection_delay);
		}
	}
	if (!s->npeers)
		return;
	prom_head(b, "floodgate_peer_offers_first_ratio", "gauge",
		  "share of the peer's offers that were of an ID the history did not hold yet "
		  "(nntp_offers_first / nntp_offers; NaN before its first offer; seed 002)");
	for (unsigned p = 0; p < s->npeers; p++) {
		fg_sbuf_puts(b, "floodgate_peer_offers_first_ratio");
		prom_peer_open(b, fg_region_peer_name(r, p), false);
		prom_value(b, fg_stats_first_share(&s->st->peer[p]));
	}
}

static void prom_history(struct fg_sbuf *b, const struct sample *s)
{
	static const char *const st_names[] = { "offered", "accepting", "accepted", "rejected",
						"superseded" };
	static const enum fg_history_state st_ids[] = {
		FG_HISTORY_OFFERED, FG_HISTORY_ACCEPTING, FG_HISTORY_ACCEPTED,
		FG_HISTORY_REJECTED, FG_HISTORY_SUPERSEDED };

	prom_gauge(b, "floodgate_history_entries", "entries in the history table", (double)s->hs.entries);
	prom_gauge(b, "floodgate_history_capacity", "slots of the history table (entries at 100 % load)",
		   (double)s->hs.slots);
	prom_gauge(b, "floodgate_history_load_ratio", "entries / capacity", s->hs.load_ppm / 1e6);
	prom_gauge(b, "floodgate_history_alarm_threshold_ratio", "load at which the near-full alarm rises",
		   s->hs.alarm_load_pct / 100.0);
	prom_gauge(b, "floodgate_history_full_alarm",
		   "1 while the history's load is at or above its alarm threshold", s->hs.alarm);
	prom_head(b, "floodgate_history_state_entries", "gauge", "history entries by state");
	for (unsigned i = 0; i < FG_ARRAY_SIZE(st_ids); i++)
		fg_sbuf_printf(b, "floodgate_history_state_entries{state=\"%s\"} %llu\n", st_names[i],
			       (unsigned long long)s->hs.by_state[st_ids[i]]);
	prom_counter(b, "floodgate_history_evictions_total",
		     "entries dropped by the evict-oldest full-table policy", s->hs.evictions);
	prom_counter(b, "floodgate_history_insert_failures_total",
		     "inserts refused because the table was full (defer policy)", s->hs.insert_failures);
	prom_counter(b, "floodgate_history_relocations_total",
		     "entries moved to make room for others", s->hs.moves);
	prom_counter(b, "floodgate_history_expired_total",
		     "entries removed by expiry sweeps (RFC 5537 3)", s->hs.expired);
	prom_gauge(b, "floodgate_history_versions_used", "records in the $v=N version side index",
		   s->hs.side_used);
	prom_gauge(b, "floodgate_history_versions_capacity", "capacity of the version side index",
		   s->hs.side_capacity);
}

/* Each polling lcore's load: its busy and idle cycles (rate() of the
 * two gives the recent share) and the share since its writer started. */
static void prom_lcores(struct fg_sbuf *b, const struct sample *s)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "floodgate_lcore_busy_share", "gauge",
		  "share of a worker lcore's loop spent on passes with work, since the worker "
		  "started (its CPU time also counts its polling; this does not)" },
		{ "floodgate_lcore_busy_cycles_total", "counter",
		  "TSC cycles of a worker lcore's passes with work" },
		{ "floodgate_lcore_idle_cycles_total", "counter",
		  "TSC cycles of a worker lcore's passes without work, sleeps included" },
	};

	if (!s->n_lc)
		return;
	for (unsigned f = 0; f < FG_ARRAY_SIZE(fam); f++) {
		prom_head(b, fam[f].name, fam[f].type, fam[f].help);
		for (unsigned i = 0; i < s->n_lc; i++) {
			const struct lcore_load *l = &s->lc[i];

			fg_sbuf_printf(b, "%s{", fam[f].name);
			prom_label(b, "writer", l->name, true);
			fg_sbuf_puts(b, "}");
			if (f == 0)
				prom_value(b, lcore_busy_share(l));
			else
				fg_sbuf_printf(b, " %llu\n",
					       (unsigned long long)(f == 1 ? l->busy : l->idle));
		}
	}
}

static void prom_state(struct fg_sbuf *b, const struct fg_metrics_state *m, const struct sample *s)
{
	prom_gauge(b, "floodgate_journal_lag_records",
		   "journal records not yet durable (in writers' rings or awaiting the group commit)",
		   (double)m->journal_lag_records);
	prom_gauge(b, "floodgate_journal_commit_age_seconds", "seconds since the last journal group commit",
		   m->journal_commit_age < 0 ? NAN : m->journal_commit_age);
	prom_gauge(b, "floodgate_journal_segment", "number of the journal segment being written",
		   (double)m->journal_segment);
	prom_gauge(b, "floodgate_snapshot_age_seconds",
		   "age of the newest snapshot (written, or restored from)", age(m->now, m->snapshot_time));
	prom_gauge(b, "floodgate_snapshot_last_duration_seconds", "time the last snapshot write took",
		   m->snapshot_seconds);
	prom_gauge(b, "floodgate_snapshot_sequence", "sequence number of the newest snapshot",
		   (double)m->snapshot_seq);
	prom_gauge(b, "floodgate_expiry_last_pass_duration_seconds", "time the last full expiry sweep took",
		   m->expiry_last_end ? m->expiry_last_seconds : NAN);
	prom_gauge(b, "floodgate_expiry_last_pass_expired", "entries the last full expiry sweep removed",
		   (double)m->expiry_last_expired);
	prom_gauge(b, "floodgate_expiry_last_pass_timestamp_seconds", "when the last expiry sweep ended",
		   m->expiry_last_end ? (double)m->expiry_last_end : NAN);
	prom_gauge(b, "floodgate_clock_suspect",
		   "1 while a writer finds the local clock hours away from recent Injection-Dates",
		   s->clock_suspect);
	prom_gauge(b, "floodgate_kernel_clock_synchronized",
		   "1 while the kernel says its clock is synchronised (adjtimex; shown, not acted on)",
		   s->kclock.ok ? s->kclock.synchronised : NAN);
	prom_gauge(b, "floodgate_kernel_clock_estimated_error_seconds",
		   "the kernel's estimated error of its clock (adjtimex esterror)",
		   s->kclock.ok ? s->kclock.est_error : NAN);
	prom_gauge(b, "floodgate_kernel_clock_max_error_seconds",
		   "the kernel's maximum error of its clock (adjtimex maxerror)",
		   s->kclock.ok ? s->kclock.max_error : NAN);
	prom_gauge(b, "floodgate_writers", "writer slots in use (dataplane workers, hosts)", s->writers);
	prom_lcores(b, s);
	prom_gauge(b, "floodgate_verdict_log_enabled", "1 when the verdict log is written", m->vlog_on);
	prom_gauge(b, "floodgate_start_time_seconds", "when floodctld started (Unix time)",
		   (double)m->started);
	prom_gauge(b, "floodgate_restore_duration_seconds", "time floodctld took to adopt or restore the history",
		   m->restore_seconds);
	prom_head(b, "floodgate_startup_info", "gauge", "how floodctld got its history at start (label source)");
	fg_sbuf_printf(b, "floodgate_startup_info{source=\"%s\"} 1\n", m->startup);
}

/* One gauge per downstream, labelled with its name. */
static void prom_lag(struct fg_sbuf *b, const struct fg_queue_status *q, const char *name,
		     const char *help, unsigned which)
{
	prom_head(b, name, "gauge", help);
	for (unsigned i = 0; i < q->n_consumers; i++) {
		const struct fg_queue_status_consumer *c = &q->consumer[i];

		fg_sbuf_printf(b, "%s{", name);
		prom_label(b, "downstream", c->name, true);
		fg_sbuf_puts(b, "}");
		prom_value(b, which == 0 ? (double)c->lag_records : which == 1 ? (double)c->lag_bytes
									    : (double)c->lag_seconds);
	}
}

/* The dataplane's per-downstream figures (dstatus.h), labelled; the lag
 * is floodgate_relay_lag_* above (from the queue's own files). */
static void prom_downstreams(struct fg_sbuf *b, const struct fg_metrics_state *m)
{
	char name[96];

	if (!m->ds_written)
		return;
	prom_gauge(b, "floodgate_downstream_status_age_seconds",
		   "seconds since the dataplane last wrote the downstreams' status",
		   (double)(m->now - m->ds_written));
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		const struct fg_ds_field *f = &fg_ds_fields[k];
		bool counter = f->kind == FG_DS_COUNTER;

		if (strncmp(f->name, "lag_", 4) == 0)
			continue;
		snprintf(name, sizeof(name), "floodgate_downstream_%s%s", f->name,
			 counter ? "_total" : "");
		prom_head(b, name, counter ? "counter" : "gauge", f->help);
		for (unsigned i = 0; i < m->n_ds; i++) {
			fg_sbuf_printf(b, "%s{", name);
			prom_label(b, "downstream", m->ds[i].name, true);
			fg_sbuf_puts(b, "}");
			prom_value(b, (double)fg_ds_value(&m->ds[i], f));
		}
	}
}

/* The cluster's health as the dataplane last wrote it (cstatus.h). */
static void prom_cluster(struct fg_sbuf *b, const struct fg_metrics_state *m)
{
	char name[96];

	if (!m->cs_written)
		return;
	prom_gauge(b, "floodgate_cluster_status_age_seconds",
		   "seconds since the dataplane last wrote the cluster's status",
		   (double)(m->now - m->cs_written));
	for (unsigned k = 0; k < fg_cs_n_fields; k++) {
		const struct fg_cs_field *f = &fg_cs_fields[k];
		bool counter = f->kind == FG_CS_COUNTER;

		snprintf(name, sizeof(name), "floodgate_cluster_%s%s", f->name,
			 counter ? "_total" : "");
		prom_head(b, name, counter ? "counter" : "gauge", f->help);
		fg_sbuf_puts(b, name);
		prom_value(b, (double)fg_cs_value(&m->cs, f));
	}
}

/* The operator levers (floodctl throttle, pause): alarms while they last. */
static void prom_levers(struct fg_sbuf *b, struct fg_region *r, const struct fg_metrics_state *m)
{
	const struct fg_levers *l = &m->levers;

	if (!m->levers_ok)
		return;
	prom_gauge(b, "floodgate_throttled",
		   "1 while the dataplane is throttled (floodctl throttle; every session answered 400)",
		   l->throttle[0] ? 1 : 0);
	if (l->throttle[0]) {
		prom_head(b, "floodgate_throttle_info", "gauge",
			  "the throttle's reason, while throttled (label reason)");
		fg_sbuf_puts(b, "floodgate_throttle_info{");
		prom_label(b, "reason", l->throttle, true);
		fg_sbuf_puts(b, "} 1\n");
	}
	prom_gauge(b, "floodgate_paused_peers", "peers paused by the operator (floodctl pause)",
		   l->n_pauses);
	if (!fg_region_npeers(r))
		return;
	prom_head(b, "floodgate_peer_paused_seconds", "gauge",
		  "seconds the operator's pause of the peer has left (0: not paused)");
	for (unsigned p = 0; p < fg_region_npeers(r); p++) {
		fg_time_t until = fg_levers_paused_until(l, fg_region_peer_name(r, p));

		fg_sbuf_puts(b, "floodgate_peer_paused_seconds");
		prom_peer_open(b, fg_region_peer_name(r, p), false);
		prom_value(b, until > m->now ? (double)(until - m->now) : 0);
	}
}

static void prom_queue(struct fg_sbuf *b, const struct fg_queue_status *q)
{
	if (!q->present)
		return;
	prom_gauge(b, "floodgate_queue_bytes", "octets of the outbound queue's segment files on disk",
		   (double)q->bytes);
	prom_gauge(b, "floodgate_queue_segments", "outbound queue segment files on disk",
		   (double)q->segments);
	prom_gauge(b, "floodgate_queue_records", "articles in the outbound queue's files",
		   (double)(q->end.recno - q->begin.recno));
	prom_gauge(b, "floodgate_queue_oldest_age_seconds",
		   "age of the oldest article a downstream has not acknowledged (0: none)",
		   (double)q->oldest_seconds);
	prom_lag(b, q, "floodgate_relay_lag_records", "articles queued and not yet acknowledged by the downstream", 0);
	prom_lag(b, q, "floodgate_relay_lag_bytes", "octets queued and not yet acknowledged by the downstream", 1);
	prom_lag(b, q, "floodgate_relay_lag_seconds",
		 "age of the oldest article the downstream has not acknowledged (0: none)", 2);
}

/* The port's figures (tbl/nic.h), one family each, a sample per port (and
 * per queue) of every dataplane that published some. */
static void prom_nic(struct fg_sbuf *b, const struct sample *s)
{
	char name[160];

	if (!s->n_nic)
		return;
	for (unsigned c = 0; c < FG_NIC__COUNT; c++) {
		bool gauge = fg_nic_kind(c) == FG_NIC_GAUGE;

		snprintf(name, sizeof(name), "floodgate_nic_%s%s", fg_nic_name(c),
			 gauge ? "" : "_total");
		prom_head(b, name, gauge ? "gauge" : "counter", fg_nic_help(c));
		for (unsigned k = 0; k < s->n_nic; k++)
			for (unsigned p = 0; p < s->nic[k].n_ports; p++) {
				const struct fg_nic_port *np = &s->nic[k].port[p];

				fg_sbuf_printf(b, "%s{", name);
				prom_label(b, "port", np->name, true);
				prom_label(b, "role", fg_nic_role_name(np->role), false);
				fg_sbuf_printf(b, "} %llu\n", (unsigned long long)np->v[c]);
			}
	}
	for (unsigned c = 0; c < FG_NICQ__COUNT; c++) {
		bool rx = c < FG_NICQ_TX_PACKETS;

		snprintf(name, sizeof(name), "floodgate_nic_queue_%s_total", fg_nicq_name(c));
		prom_head(b, name, "counter", fg_nicq_help(c));
		for (unsigned k = 0; k < s->n_nic; k++)
			for (unsigned p = 0; p < s->nic[k].n_ports; p++) {
				const struct fg_nic_port *np = &s->nic[k].port[p];

				for (unsigned q = 0; q < (rx ? np->n_rxq : np->n_txq); q++) {
					char qs[16];

					snprintf(qs, sizeof(qs), "%u", q);
					fg_sbuf_printf(b, "%s{", name);
					prom_label(b, "port", np->name, true);
					prom_label(b, "queue", qs, false);
					fg_sbuf_printf(b, "} %llu\n", (unsigned long long)np->q[q][c]);
				}
			}
	}
}

void fg_metrics_prometheus(struct fg_region *r, const struct fg_metrics_state *m,
			   struct fg_sbuf *out)
{
	struct sample s;

	if (!sample_take(r, &s)) {
		out->failed = true;
		return;
	}
	prom_counters(out, r, &s);
	prom_rejects(out, r, &s);
	prom_delays(out, r, &s);
	prom_history(out, &s);
	prom_state(out, m, &s);
	prom_levers(out, r, m);
	prom_queue(out, &m->queue);
	prom_downstreams(out, m);
	prom_nic(out, &s);
	prom_cluster(out, m);
	sample_free(&s);
}

/* ---- JSON ---- */

static void json_counters(struct fg_json *j, const struct fg_stats *st, bool nonzero)
{
	fg_json_obj(j, "counters");
	for (unsigned c = 0; c < FG_CTR__COUNT; c++)
		if (!nonzero || st->ctr[c])
			fg_json_u64(j, fg_counter_name(c), st->ctr[c]);
	fg_json_close(j);
	fg_json_obj(j, "rejected");
	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		if (!nonzero || st->rejected[x])
			fg_json_u64(j, fg_reason_name(x), st->rejected[x]);
	fg_json_close(j);
}

static void json_hist(struct fg_json *j, const char *key, const struct fg_hist *h)
{
	fg_json_obj(j, key);
	fg_json_u64(j, "count", h->count);
	fg_json_i64(j, "sum", h->sum);
	fg_json_u64(j, "negative", h->negative);
	fg_json_arr(j, "buckets");	/* [upper bound inclusive, count] */
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		fg_json_arr(j, NULL);
		if (i + 1 < FG_HIST_BUCKETS)
			fg_json_i64(j, NULL, fg_hist_bucket_le(i) - 1);
		else
			fg_json_null(j, NULL);
		fg_json_u64(j, NULL, h->bucket[i]);
		fg_json_close(j);
	}
	fg_json_close(j);
	fg_json_close(j);
}

static void json_delays(struct fg_json *j, const struct fg_hist *injection,
			const struct fg_hist *propagation)
{
	fg_json_obj(j, "histograms");
	json_hist(j, "injection_delay_seconds", injection);
	json_hist(j, "propagation_delay_seconds", propagation);
	fg_json_close(j);
}

/* One peer's object: its non-zero counters, its delays, its share of
 * first offers (null before its first offer). */
static void json_peer(struct fg_json *j, const struct sample *s, unsigned p)
{
	const struct fg_region_delays *d = &s->st->peer_delay[p];

	json_counters(j, &s->st->peer[p], true);
	json_delays(j, &d->injection_delay, &d->propagation_delay);
	fg_json_f64(j, "offers_first_share", fg_stats_first_share(&s->st->peer[p]));
}

static void json_history(struct fg_json *j, const struct sample *s)
{
	fg_json_obj(j, "history");
	fg_json_u64(j, "entries", s->hs.entries);
	fg_json_u64(j, "capacity", s->hs.slots);
	fg_json_f64(j, "load", s->hs.load_ppm / 1e6);
	fg_json_bool(j, "alarm", s->hs.alarm);
	fg_json_u64(j, "alarm_load_pct", s->hs.alarm_load_pct);
	fg_json_str(j, "full_policy", s->hs.full_policy == FG_FULL_DEFER ? "defer" : "evict-oldest");
	fg_json_obj(j, "by_state");
	for (unsigned st = FG_HISTORY_OFFERED; st < FG_HISTORY_STATE__COUNT; st++)
		fg_json_u64(j, fg_history_state_name(st), s->hs.by_state[st]);
	fg_json_close(j);
	fg_json_u64(j, "evictions", s->hs.evictions);
	fg_json_u64(j, "insert_failures", s->hs.insert_failures);
	fg_json_u64(j, "relocations", s->hs.moves);
	fg_json_u64(j, "expired", s->hs.expired);
	fg_json_u64(j, "versions_used", s->hs.side_used);
	fg_json_u64(j, "versions_capacity", s->hs.side_capacity);
	fg_json_close(j);
}

static void json_levers(struct fg_json *j, const struct fg_metrics_state *m)
{
	const struct fg_levers *l = &m->levers;

	if (!m->levers_ok)
		return;
	fg_json_obj(j, "levers");
	fg_json_str(j, "throttled", l->throttle[0] ? l->throttle : NULL);
	fg_json_arr(j, "paused");
	for (unsigned i = 0; i < l->n_pauses; i++) {
		fg_json_obj(j, NULL);
		fg_json_str(j, "peer", l->pause[i].peer);
		fg_json_time(j, "until", l->pause[i].until);
		fg_json_i64(j, "remaining_seconds", l->pause[i].until - m->now);
		fg_json_close(j);
	}
	fg_json_close(j);
	fg_json_close(j);
}

static void json_state(struct fg_json *j, const struct fg_metrics_state *m, const struct sample *s)
{
	fg_json_obj(j, "journal");
	fg_json_u64(j, "lag_records", m->journal_lag_records);
	fg_json_f64(j, "commit_age_seconds", m->journal_commit_age < 0 ? NAN : m->journal_commit_age);
	fg_json_u64(j, "segment", m->journal_segment);
	fg_json_close(j);
	fg_json_obj(j, "snapshot");
	fg_json_u64(j, "sequence", m->snapshot_seq);
	fg_json_time(j, "created", m->snapshot_time);
	fg_json_f64(j, "age_seconds", age(m->now, m->snapshot_time));
	fg_json_f64(j, "last_duration_seconds", m->snapshot_seconds);
	fg_json_close(j);
	fg_json_obj(j, "expiry");
	fg_json_str(j, "mode", m->expiry_mode == FG_EXPIRY_FIRST_SEEN ? "first-seen" : "article-date");
	fg_json_time(j, "last_pass_end", m->expiry_last_end);
	fg_json_f64(j, "last_pass_seconds", m->expiry_last_end ? m->expiry_last_seconds : NAN);
	fg_json_u64(j, "last_pass_expired", m->expiry_last_expired);
	fg_json_close(j);
	fg_json_bool(j, "clock_suspect", s->clock_suspect);
	fg_metrics_kclock_json(j, &s->kclock);
	fg_json_u64(j, "writers", s->writers);
	fg_json_arr(j, "lcores");
	for (unsigned i = 0; i < s->n_lc; i++) {
		fg_json_obj(j, NULL);
		fg_json_str(j, "writer", s->lc[i].name);
		fg_json_u64(j, "busy_cycles", s->lc[i].busy);
		fg_json_u64(j, "idle_cycles", s->lc[i].idle);
		fg_json_f64(j, "busy_share", lcore_busy_share(&s->lc[i]));
		fg_json_close(j);
	}
	fg_json_close(j);
	fg_json_bool(j, "verdict_log", m->vlog_on);
	fg_json_time(j, "started", m->started);
	fg_json_str(j, "startup", m->startup);
	fg_json_f64(j, "restore_seconds", m->restore_seconds);
	json_levers(j, m);
	if (!m->queue.present)
		return;
	fg_json_obj(j, "queue");
	fg_json_u64(j, "bytes", m->queue.bytes);
	fg_json_u64(j, "segments", m->queue.segments);
	fg_json_u64(j, "records", m->queue.end.recno - m->queue.begin.recno);
	fg_json_i64(j, "oldest_age_seconds", m->queue.oldest_seconds);
	fg_json_obj(j, "downstreams");
	for (unsigned i = 0; i < m->queue.n_consumers; i++) {
		const struct fg_queue_status_consumer *c = &m->queue.consumer[i];

		fg_json_obj(j, c->name);
		fg_json_u64(j, "lag_records", c->lag_records);
		fg_json_u64(j, "lag_bytes", c->lag_bytes);
		fg_json_i64(j, "lag_seconds", c->lag_seconds);
		fg_json_close(j);
	}
	fg_json_close(j);
	fg_json_close(j);
}

/* "nic": one object per port (and bond member) of every dataplane. */
static void nic_json(struct fg_json *j, const struct fg_nic_block *nic, unsigned n)
{
	fg_json_arr(j, "nic");
	for (unsigned k = 0; k < n; k++)
		for (unsigned p = 0; p < nic[k].n_ports; p++) {
			const struct fg_nic_port *np = &nic[k].port[p];

			fg_json_obj(j, NULL);
			fg_json_str(j, "port", np->name);
			fg_json_str(j, "role", fg_nic_role_name(np->role));
			for (unsigned c = 0; c < FG_NIC__COUNT; c++)
				fg_json_u64(j, fg_nic_name(c), np->v[c]);
			fg_json_arr(j, "queues");
			for (unsigned q = 0; q < FG_MAX(np->n_rxq, np->n_txq); q++) {
				fg_json_obj(j, NULL);
				fg_json_u64(j, "queue", q);
				for (unsigned c = 0; c < FG_NICQ__COUNT; c++)
					fg_json_u64(j, fg_nicq_name(c), np->q[q][c]);
				fg_json_close(j);
			}
			fg_json_close(j);
			fg_json_close(j);
		}
	fg_json_close(j);
}

/* One line per port: link, then what it received, lost and sent. */
static void nic_text(struct fg_sbuf *b, const struct fg_nic_block *nic, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		for (unsigned p = 0; p < nic[k].n_ports; p++) {
			const struct fg_nic_port *np = &nic[k].port[p];
			const uint64_t *v = np->v;

			fg_sbuf_printf(b, "nic %s (%s): link %s", np->name, fg_nic_role_name(np->role),
				       v[FG_NIC_LINK_UP] ? "up" : "DOWN");
			if (v[FG_NIC_LINK_SPEED])
				fg_sbuf_printf(b, " %llu Mbit/s", (unsigned long long)v[FG_NIC_LINK_SPEED]);
			if (v[FG_NIC_LACP_STATE])
				fg_sbuf_printf(b, ", lacp %s (0x%02llx)",
					       (v[FG_NIC_LACP_STATE] & FG_NIC_LACP_UP) == FG_NIC_LACP_UP ?
						       "collecting+distributing" : "NOT distributing",
					       (unsigned long long)v[FG_NIC_LACP_STATE]);
			fg_sbuf_printf(b, "; rx %llu frames, missed %llu, no mbuf %llu, errors %llu; "
				       "tx %llu frames, errors %llu, dropped %llu\n",
				       (unsigned long long)v[FG_NIC_RX_PACKETS],
				       (unsigned long long)v[FG_NIC_RX_MISSED],
				       (unsigned long long)v[FG_NIC_RX_NOMBUF],
				       (unsigned long long)v[FG_NIC_RX_ERRORS],
				       (unsigned long long)v[FG_NIC_TX_PACKETS],
				       (unsigned long long)v[FG_NIC_TX_ERRORS],
				       (unsigned long long)v[FG_NIC_TX_DROPPED]);
		}
}

void fg_metrics_nic_json(struct fg_json *j, struct fg_region *r)
{
	struct sample s;

	memset(&s, 0, sizeof(s));
	sample_nic(r, &s);
	nic_json(j, s.nic, s.n_nic);
	sample_free(&s);
}

void fg_metrics_nic_text(struct fg_sbuf *b, struct fg_region *r)
{
	struct sample s;

	memset(&s, 0, sizeof(s));
	sample_nic(r, &s);
	nic_text(b, s.nic, s.n_nic);
	sample_free(&s);
}

void fg_metrics_json(struct fg_region *r, const struct fg_metrics_state *m, struct fg_sbuf *out)
{
	struct fg_json j;
	struct sample s;

	if (!sample_take(r, &s)) {
		out->failed = true;
		return;
	}
	fg_json_begin(&j, out);
	fg_json_time(&j, "time", m->now);
	json_counters(&j, &s.st->total, false);
	fg_json_obj(&j, "peers");
	for (unsigned p = 0; p < s.npeers; p++) {
		fg_json_obj(&j, fg_region_peer_name(r, p));
		json_peer(&j, &s, p);
		fg_json_close(&j);
	}
	fg_json_close(&j);
	json_delays(&j, &s.st->injection_delay, &s.st->propagation_delay);
	json_history(&j, &s);
	json_state(&j, m, &s);
	nic_json(&j, s.nic, s.n_nic);
	fg_json_end(&j);
	sample_free(&s);
}

/* ---- table ---- */

static void table_block(struct fg_sbuf *b, const struct fg_stats *st, const char *indent)
{
	for (unsigned c = 0; c < FG_CTR__COUNT; c++)
		if (st->ctr[c])
			fg_sbuf_printf(b, "%s%-36s %16llu\n", indent, fg_counter_name(c),
				       (unsigned long long)st->ctr[c]);
	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		if (st->rejected[x])
			fg_sbuf_printf(b, "%srejected %-27s %16llu\n", indent, fg_reason_name(x),
				       (unsigned long long)st->rejected[x]);
}

static void table_hist(struct fg_sbuf *b, const char *name, const struct fg_hist *h)
{
	fg_sbuf_printf(b, "%-34s count %llu, negative %llu, mean %.1f s\n", name,
		       (unsigned long long)h->count, (unsigned long long)h->negative,
		       h->count ? (double)h->sum / (double)h->count : 0.0);
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		if (i + 1 < FG_HIST_BUCKETS)
			fg_sbuf_printf(b, "  <= %-12lld %16llu\n", (long long)(fg_hist_bucket_le(i) - 1),
				       (unsigned long long)h->bucket[i]);
		else
			fg_sbuf_printf(b, "  larger        %16llu\n", (unsigned long long)h->bucket[i]);
	}
}

static void table_delays(struct fg_sbuf *b, const struct fg_hist *injection,
			 const struct fg_hist *propagation)
{
	table_hist(b, "injection delay (Injection-Date - Date)", injection);
	table_hist(b, "propagation delay (arrival - Injection-Date)", propagation);
}

/* A peer's block: counters, then its delays and share of first offers
 * once it has offered anything. */
static void table_peer(struct fg_sbuf *b, struct fg_region *r, const struct sample *s,
		       unsigned p)
{
	const struct fg_region_delays *d = &s->st->peer_delay[p];
	double share = fg_stats_first_share(&s->st->peer[p]);

	fg_sbuf_printf(b, "peer %s\n", fg_region_peer_name(r, p));
	table_block(b, &s->st->peer[p], "  ");
	if (!isnan(share))
		fg_sbuf_printf(b, "  offered first: %.1f %% of its offers\n", share * 100.0);
	if (d->injection_delay.count || d->propagation_delay.count)
		table_delays(b, &d->injection_delay, &d->propagation_delay);
}

int fg_metrics_peer(struct fg_region *r, const char *peer, bool json, struct fg_sbuf *out)
{
	int p = fg_region_peer_index(r, peer);
	struct fg_json j;
	struct sample s;

	if (p < 0)
		return p;
	if (!sample_take(r, &s)) {
		out->failed = true;
		return -ENOMEM;
	}
	if (json) {
		fg_json_begin(&j, out);
		fg_json_str(&j, "peer", peer);
		json_peer(&j, &s, (unsigned)p);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else {
		table_peer(out, r, &s, (unsigned)p);
	}
	sample_free(&s);
	return 0;
}

void fg_metrics_table(struct fg_region *r, const struct fg_metrics_state *m, struct fg_sbuf *out)
{
	struct sample s;

	if (!sample_take(r, &s)) {
		out->failed = true;
		return;
	}
	fg_sbuf_puts(out, "counters (non-zero)\n");
	table_block(out, &s.st->total, "  ");
	for (unsigned p = 0; p < s.npeers; p++)
		table_peer(out, r, &s, p);
	table_delays(out, &s.st->injection_delay, &s.st->propagation_delay);
	fg_sbuf_printf(out, "history: %llu entries of %llu (%.1f %%)%s\n",
		       (unsigned long long)s.hs.entries, (unsigned long long)s.hs.slots,
		       s.hs.load_ppm / 1e4, s.hs.alarm ? "  ALARM: near full" : "");
	if (s.clock_suspect)
		fg_sbuf_puts(out, "CLOCK SUSPECT: a writer's recent Injection-Dates sit hours away from "
			     "the local clock\n");
	fg_metrics_kclock_text(out, &s.kclock);
	for (unsigned i = 0; i < s.n_lc; i++)
		fg_sbuf_printf(out, "lcore %s: busy %.1f %% of its loop since it started\n",
			       s.lc[i].name, 100.0 * lcore_busy_share(&s.lc[i]));
	if (m->levers.throttle[0])
		fg_sbuf_printf(out, "THROTTLED: %s (floodctl go ends it)\n", m->levers.throttle);
	for (unsigned i = 0; i < m->levers.n_pauses; i++)
		fg_sbuf_printf(out, "PAUSED: peer %s, %lld s more (floodctl resume)\n",
			       m->levers.pause[i].peer,
			       (long long)(m->levers.pause[i].until - m->now));
	if (m->queue.present) {
		fg_sbuf_printf(out, "outbound queue: %llu articles, %llu octets in %llu segments, "
			       "oldest undelivered %llds\n",
			       (unsigned long long)(m->queue.end.recno - m->queue.begin.recno),
			       (unsigned long long)m->queue.bytes,
			       (unsigned long long)m->queue.segments,
			       (long long)m->queue.oldest_seconds);
		for (unsigned i = 0; i < m->queue.n_consumers; i++)
			fg_sbuf_printf(out, "  downstream %s: lag %llu articles, %llu octets, %llds\n",
				       m->queue.consumer[i].name,
				       (unsigned long long)m->queue.consumer[i].lag_records,
				       (unsigned long long)m->queue.consumer[i].lag_bytes,
				       (long long)m->queue.consumer[i].lag_seconds);
	}
	nic_text(out, s.nic, s.n_nic);
	sample_free(&s);
}

/* ------------------------------------------------------------ downstreams */

/* One word for a downstream's state, the first that holds. */
static const char *ds_state(const struct fg_ds_status *d)
{
	return d->paused ? "paused" : d->full ? "parked-full" : d->parked ? "parked"
		: d->ready ? "feeding" : "connecting";
}

/* The lag from the queue's own files when floodctld has it (fresher than
 * the status file when the dataplane is down), else the dataplane's. */
static void ds_lag(const struct fg_metrics_state *m, const struct fg_ds_status *d,
		   uint64_t *rec, uint64_t *bytes, int64_t *secs)
{
	*rec = d->lag_records;
	*bytes = d->lag_bytes;
	*secs = (int64_t)d->lag_seconds;
	for (unsigned i = 0; m->queue.present && i < m->queue.n_consumers; i++)
		if (strcmp(m->queue.consumer[i].name, d->name) == 0 && m->queue.consumer[i].found) {
			*rec = m->queue.consumer[i].lag_records;
			*bytes = m->queue.consumer[i].lag_bytes;
			*secs = m->queue.consumer[i].lag_seconds;
		}
}

static void ds_json(const struct fg_metrics_state *m, struct fg_sbuf *out)
{
	struct fg_json j;

	fg_json_begin(&j, out);
	fg_json_time(&j, "time", m->now);
	if (m->ds_written) {
		fg_json_time(&j, "written", m->ds_written);
		fg_json_i64(&j, "age_seconds", m->now - m->ds_written);
	} else {
		fg_json_null(&j, "written");
	}
	fg_json_arr(&j, "downstreams");
	for (unsigned i = 0; i < m->n_ds; i++) {
		const struct fg_ds_status *d = &m->ds[i];
		uint64_t rec, bytes;
		int64_t secs;

		ds_lag(m, d, &rec, &bytes, &secs);
		fg_json_obj(&j, NULL);
		fg_json_str(&j, "name", d->name);
		fg_json_str(&j, "id", d->id);
		fg_json_str(&j, "state", ds_state(d));
		for (unsigned k = 0; k < fg_ds_n_fields; k++)
			fg_json_u64(&j, fg_ds_fields[k].name, fg_ds_value(d, &fg_ds_fields[k]));
		fg_json_obj(&j, "lag");
		fg_json_u64(&j, "records", rec);
		fg_json_u64(&j, "bytes", bytes);
		fg_json_i64(&j, "seconds", secs);
		fg_json_close(&j);
		fg_json_close(&j);
	}
	fg_json_close(&j);
	fg_json_end(&j);
	fg_sbuf_puts(out, "\n");
}

void fg_metrics_downstreams(const struct fg_metrics_state *m, bool json, struct fg_sbuf *out)
{
	if (json) {
		ds_json(m, out);
		return;
	}
	if (!m->ds_written) {
		fg_sbuf_puts(out, "no downstreams status: the dataplane has not written "
			     FG_DS_STATUS_FILE " in the data directory (not running yet?)\n");
		return;
	}
	fg_sbuf_printf(out, "%-16s %-11s %10s %12s %7s %12s %9s %9s %8s %8s %8s %6s %8s %8s\n",
		       "downstream", "state", "lag", "octets", "secs", "backlog", "sent",
		       "accepted", "refused", "had-it", "deferred", "reconn", "skipped",
		       "dropped");
	for (unsigned i = 0; i < m->n_ds; i++) {
		const struct fg_ds_status *d = &m->ds[i];
		uint64_t rec, bytes;
		int64_t secs;

		ds_lag(m, d, &rec, &bytes, &secs);
		fg_sbuf_printf(out, "%-16s %-11s %10llu %12llu %7lld %12llu %9llu %9llu %8llu %8llu "
			       "%8llu %6llu %8llu %8llu\n", d->name, ds_state(d),
			       (unsigned long long)rec, (unsigned long long)bytes, (long long)secs,
			       (unsigned long long)d->backlog_bytes, (unsigned long long)d->sent,
			       (unsigned long long)d->accepted, (unsigned long long)d->refused,
			       (unsigned long long)d->not_wanted, (unsigned long long)d->deferred,
			       (unsigned long long)d->reconnects, (unsigned long long)d->not_routed,
			       (unsigned long long)d->dropped);
	}
	fg_sbuf_printf(out, "as the dataplane wrote it %lld s ago%s\n",
		       (long long)(m->now - m->ds_written),
		       m->now - m->ds_written > 5 ? " (stale: is the dataplane running?)" : "");
}
