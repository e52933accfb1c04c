/* SPDX-License-Identifier: MIT */
/*
 * metrics.c — rendering the stats export (metrics.h has the names): the
 * sample, the JSON, the table, a peer's view, the downstreams; the
 * Prometheus text is prom.c's.
 *
 * Everything is sampled once per render into a `struct sample` (the
 * region's counter sum, the history's stats, floodctld's state), then
 * written by three renderers that read only the sample, so the Prometheus
 * text, the JSON and the table of one render always agree.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/metrics.h"
#include "metrics_int.h"

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

void metrics_sample_free(struct sample *s)
{
	free(s->st);
	free(s->lc);
	free(s->nic);
	free(s->sessions);
}

bool metrics_sample_take(struct fg_region *r, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->st = malloc(sizeof(*s->st));
	if (!s->st)
		return false;
	fg_region_sum(r, s->st);
	s->lc = calloc(fg_region_nslots(r), sizeof(*s->lc));
	if (!s->lc) {
		metrics_sample_free(s);
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
	s->sessions = calloc(s->npeers ? s->npeers : 1, sizeof(*s->sessions));
	if (!s->sessions) {
		metrics_sample_free(s);
		return false;
	}
	fg_region_live_sessions(r, s->sessions, s->npeers);
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
	fg_json_time(j, "last_seen", s->st->peer_last_seen[p]);
	fg_json_f64(j, "offers_first_share", fg_stats_first_share(&s->st->peer[p]));
	fg_json_u64(j, "sessions", s->sessions[p]);
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
	fg_json_u64(j, "limit_bytes", m->queue.limit_bytes);
	fg_json_i64(j, "max_age_seconds", m->queue.max_age_seconds);
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
	metrics_sample_free(&s);
}

void fg_metrics_nic_text(struct fg_sbuf *b, struct fg_region *r)
{
	struct sample s;

	memset(&s, 0, sizeof(s));
	sample_nic(r, &s);
	nic_text(b, s.nic, s.n_nic);
	metrics_sample_free(&s);
}

static void ds_json_array(struct fg_json *j, const struct fg_metrics_state *m);

void fg_metrics_json(struct fg_region *r, const struct fg_metrics_state *m, struct fg_sbuf *out)
{
	struct fg_json j;
	struct sample s;

	if (!metrics_sample_take(r, &s)) {
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
	if (m->ds_written) {
		fg_json_time(&j, "downstreams_written", m->ds_written);
		ds_json_array(&j, m);
	}
	fg_json_end(&j);
	metrics_sample_free(&s);
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
	if (s->st->peer_last_seen[p]) {
		fg_sbuf_puts(b, "  last command: ");
		fg_sbuf_time(b, s->st->peer_last_seen[p]);
		fg_sbuf_puts(b, "\n");
	}
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
	if (!metrics_sample_take(r, &s)) {
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
	metrics_sample_free(&s);
	return 0;
}

void fg_metrics_table(struct fg_region *r, const struct fg_metrics_state *m, struct fg_sbuf *out)
{
	struct sample s;

	if (!metrics_sample_take(r, &s)) {
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
	metrics_sample_free(&s);
}

/* ------------------------------------------------------------ downstreams */

const char *fg_metrics_ds_state(const struct fg_ds_status *d)
{
	return d->paused ? "paused" : d->full ? "parked-full" : d->parked ? "parked"
		: d->ready ? "feeding" : "connecting";
}

/* The lag from the queue's own files when floodctld has it (fresher than
 * the status file when the dataplane is down), else the dataplane's. */
void fg_metrics_ds_lag(const struct fg_metrics_state *m, const struct fg_ds_status *d,
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

/* "downstreams": [{name, id, state, the fields of dstatus.h, lag}] */
static void ds_json_array(struct fg_json *j, const struct fg_metrics_state *m)
{
	fg_json_arr(j, "downstreams");
	for (unsigned i = 0; i < m->n_ds; i++) {
		const struct fg_ds_status *d = &m->ds[i];
		uint64_t rec, bytes;
		int64_t secs;

		fg_metrics_ds_lag(m, d, &rec, &bytes, &secs);
		fg_json_obj(j, NULL);
		fg_json_str(j, "name", d->name);
		fg_json_str(j, "id", d->id);
		fg_json_str(j, "state", fg_metrics_ds_state(d));
		for (unsigned k = 0; k < fg_ds_n_fields; k++)
			fg_json_u64(j, fg_ds_fields[k].name, fg_ds_value(d, &fg_ds_fields[k]));
		fg_json_obj(j, "lag");
		fg_json_u64(j, "records", rec);
		fg_json_u64(j, "bytes", bytes);
		fg_json_i64(j, "seconds", secs);
		fg_json_close(j);
		fg_json_close(j);
	}
	fg_json_close(j);
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
	ds_json_array(&j, m);
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
	fg_sbuf_printf(out, "%-16s %-11s", "downstream", "state");
	for (unsigned k = 0; k < fg_ds_n_fields; k++)
		if (fg_ds_fields[k].column)
			fg_sbuf_printf(out, " %*s", fg_ds_fields[k].width, fg_ds_fields[k].column);
	fg_sbuf_puts(out, "\n");
	for (unsigned i = 0; i < m->n_ds; i++) {
		struct fg_ds_status d = m->ds[i];
		uint64_t rec, bytes;
		int64_t secs;

		fg_metrics_ds_lag(m, &d, &rec, &bytes, &secs);
		d.lag_records = rec;
		d.lag_bytes = bytes;
		d.lag_seconds = secs > 0 ? (uint64_t)secs : 0;
		fg_sbuf_printf(out, "%-16s %-11s", d.name, fg_metrics_ds_state(&d));
		for (unsigned k = 0; k < fg_ds_n_fields; k++)
			if (fg_ds_fields[k].column)
				fg_sbuf_printf(out, " %*llu", fg_ds_fields[k].width,
					       (unsigned long long)fg_ds_value(&d, &fg_ds_fields[k]));
		fg_sbuf_puts(out, "\n");
	}
	fg_sbuf_printf(out, "as the dataplane wrote it %lld s ago%s\n",
		       (long long)(m->now - m->ds_written),
		       m->now - m->ds_written > 5 ? " (stale: is the dataplane running?)" : "");
}
