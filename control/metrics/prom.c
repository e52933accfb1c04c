/* SPDX-License-Identifier: MIT */
/*
 * prom.c — the stats export as Prometheus text (fg_metrics_prometheus);
 * metrics.h has the names, metrics.c takes the sample this renders.
 *
 * Text format 0.0.4: each family is contiguous, introduced by "# HELP"
 * (backslash and newline escaped) and "# TYPE"; label values escape
 * backslash, double quote and newline; histogram buckets are cumulative,
 * in increasing order, ending with le="+Inf" equal to _count. A family
 * per counter of the table (include/floodgate/tbl/counters.h), the reject
 * reasons as one family with a reason label, per-peer families only for
 * the counters some peer has moved.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/metrics.h"
#include "metrics_int.h"

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

static bool peer_has(const struct sample *s, unsigned c)
{
	for (unsigned p = 0; p < s->npeers; p++)
		if (s->st->peer[p].ctr[c])
			return true;
	return false;
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

static double first_share(const struct sample *s, unsigned p)
{
	return fg_stats_first_share(&s->st->peer[p]);
}

static double sessions_open(const struct sample *s, unsigned p)
{
	return (double)s->sessions[p];
}

static double last_seen(const struct sample *s, unsigned p)
{
	return (double)s->st->peer_last_seen[p];
}

/* A gauge family with one series per configured peer (none without peers). */
static void prom_peer_gauge(struct fg_sbuf *b, struct fg_region *r, const struct sample *s,
			    const char *name, const char *help,
			    double (*value)(const struct sample *s, unsigned p))
{
	if (!s->npeers)
		return;
	prom_head(b, name, "gauge", help);
	for (unsigned p = 0; p < s->npeers; p++) {
		fg_sbuf_puts(b, name);
		prom_peer_open(b, fg_region_peer_name(r, p), false);
		prom_value(b, value(s, p));
	}
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
	prom_peer_gauge(b, r, s, "floodgate_peer_offers_first_ratio",
			"share of the peer's offers that were of an ID the history did not hold yet "
			"(nntp_offers_first / nntp_offers; NaN before its first offer; seed 002)",
			first_share);
	/* for an alert on a peer silent too long */
	prom_peer_gauge(b, r, s, "floodgate_peer_last_seen_seconds",
			"when the peer's last command was read (Unix time; 0: none since the "
			"history region was built)", last_seen);
	prom_peer_gauge(b, r, s, "floodgate_peer_sessions",
			"the peer's sessions open now (those of writers that died are not)",
			sessions_open);
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

/* A status file's field as a metric (statusfield.h): floodgate_<what>_<field>,
 * _total for a counter, into name; its HELP and TYPE lines. */
static void prom_status_head(struct fg_sbuf *b, const char *what, const struct fg_status_field *f,
			     char *name, size_t len)
{
	bool counter = f->kind == FG_STATUS_COUNTER;

	snprintf(name, len, "floodgate_%s_%s%s", what, f->name, counter ? "_total" : "");
	prom_head(b, name, counter ? "counter" : "gauge", f->help);
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
		const struct fg_status_field *f = &fg_ds_fields[k];

		if (strncmp(f->name, "lag_", 4) == 0)
			continue;
		prom_status_head(b, "downstream", f, name, sizeof(name));
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
		const struct fg_status_field *f = &fg_cs_fields[k];

		prom_status_head(b, "cluster", f, name, sizeof(name));
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
	prom_gauge(b, "floodgate_queue_limit_bytes",
		   "queue-limit: octets on disk (less what is kept only for parked downstreams) at "
		   "which new offers are deferred", (double)q->limit_bytes);
	prom_gauge(b, "floodgate_queue_max_age_seconds",
		   "queue-max-age: age of the oldest undelivered article at which new offers are "
		   "deferred (0: off)", (double)q->max_age_seconds);
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

	if (!metrics_sample_take(r, &s)) {
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
	metrics_sample_free(&s);
}
