/* SPDX-License-Identifier: MIT */
/*
 * report_render.c — the daily report (report.h) as a table for people
 * (innreport's shape: the window, a row per peer, refusals by reason, a
 * row per downstream, totals), as one HTML page (the same tables, every
 * name escaped, no script, readable in any browser or lynx) and as one
 * JSON object for machines. The delays are the 50th, 90th and 99th
 * percentiles of the window's histogram differences, as the upper bound
 * of the log2 bucket each falls in ("<=N s").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/report.h"

static const double quantiles[] = { 0.5, 0.9, 0.99 };
#define NQ (sizeof(quantiles) / sizeof(quantiles[0]))

/* The totals row: every peer's differences added. */
static void total_of(const struct fg_report *r, struct fg_report_peer *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "TOTAL");
	for (unsigned i = 0; i < r->n_peers; i++) {
		const struct fg_report_peer *p = &r->peer[i];

		t->offers += p->offers;
		t->accepted += p->accepted;
		t->octets += p->octets;
		for (unsigned x = 1; x < FG_REASON__COUNT; x++)
			t->refused[x] += p->refused[x];
		fg_hist_merge(&t->injection, &p->injection);
		fg_hist_merge(&t->propagation, &p->propagation);
	}
}

static uint64_t refused_sum(const struct fg_report_peer *p)
{
	uint64_t n = 0;

	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		n += p->refused[x];
	return n;
}

/* "p50/p90/p99" of a delay, "-" when nothing was counted. */
static void delays(const struct fg_hist *h, char *buf, size_t len)
{
	size_t off = 0;
	int64_t v;

	if (!fg_report_percentile(h, 0.5, &v)) {
		snprintf(buf, len, "-");
		return;
	}
	for (unsigned q = 0; q < NQ && off < len; q++) {
		fg_report_percentile(h, quantiles[q], &v);
		if (v < 0)
			off += (size_t)snprintf(buf + off, len - off, "%s<0", q ? "/" : "");
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64, q ? "/" : "", v);
	}
}

static void when(fg_time_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t) {
		snprintf(buf, len, "-");
		return;
	}
	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* ---- text ---- */

static void text_peer(struct fg_sbuf *b, const struct fg_report_peer *p)
{
	char inj[64], prop[64];

	delays(&p->injection, inj, sizeof(inj));
	delays(&p->propagation, prop, sizeof(prop));
	fg_sbuf_printf(b, "%-20s %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %15" PRIu64 "  %-16s %-16s\n",
		       p->name, p->offers, p->accepted, refused_sum(p), p->octets, inj, prop);
}

void fg_report_text(const struct fg_report *r, struct fg_sbuf *b)
{
	char a[40], z[40];
	struct fg_report_peer t;

	when(r->from, a, sizeof(a));
	when(r->to, z, sizeof(z));
	fg_sbuf_printf(b, "floodgate report from %s to %s\n", a, z);
	when(r->first, a, sizeof(a));
	when(r->last, z, sizeof(z));
	fg_sbuf_printf(b, "samples %u (first %s, last %s), damaged %u, counter resets %u, gaps %u\n",
		       r->samples, a, z, r->damaged, r->resets, r->n_gaps);
	for (unsigned g = 0; g < r->n_gaps && g < FG_REPORT_GAPS_MAX; g++) {
		when(r->gap[g].from, a, sizeof(a));
		when(r->gap[g].to, z, sizeof(z));
		fg_sbuf_printf(b, "  gap: no samples between %s and %s\n", a, z);
	}
	if (r->samples < 2)
		fg_sbuf_puts(b, "  (fewer than two samples in the window: nothing to count yet)\n");
	fg_sbuf_printf(b, "\n%-20s %12s %10s %10s %15s  %-16s %-16s\n", "peer", "offers", "accepted",
		       "refused", "octets", "injection s", "propagation s");
	fg_sbuf_printf(b, "%-20s %12s %10s %10s %15s  %-16s %-16s\n", "", "", "", "", "",
		       "p50/p90/p99", "p50/p90/p99");
	for (unsigned i = 0; i < r->n_peers; i++)
		text_peer(b, &r->peer[i]);
	total_of(r, &t);
	text_peer(b, &t);
	fg_sbuf_printf(b, "\n%-20s %-24s %12s\n", "refused: peer", "reason", "count");
	for (unsigned i = 0; i < r->n_peers; i++)
		for (unsigned x = 1; x < FG_REASON__COUNT; x++)
			if (r->peer[i].refused[x])
				fg_sbuf_printf(b, "%-20s %-24s %12" PRIu64 "\n", r->peer[i].name,
					       fg_reason_name(x), r->peer[i].refused[x]);
	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		if (t.refused[x])
			fg_sbuf_printf(b, "%-20s %-24s %12" PRIu64 "\n", "TOTAL", fg_reason_name(x),
				       t.refused[x]);
	if (!r->n_ds)
		return;
	fg_sbuf_printf(b, "\n%-20s %12s %12s %10s %16s %18s\n", "downstream", "sent", "delivered",
		       "refused", "lag s last/max", "lag articles l/m");
	for (unsigned i = 0; i < r->n_ds; i++) {
		const struct fg_report_ds_sum *d = &r->ds[i];
		char ls[48], lr[48];

		snprintf(ls, sizeof(ls), "%" PRIu64 "/%" PRIu64, d->d.lag_seconds, d->lag_seconds_max);
		snprintf(lr, sizeof(lr), "%" PRIu64 "/%" PRIu64, d->d.lag_records, d->lag_records_max);
		fg_sbuf_printf(b, "%-20s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %16s %18s\n",
			       d->d.name, d->d.sent, d->d.delivered, d->d.refused, ls, lr);
	}
}

/* ---- HTML ---- */

static void esc(struct fg_sbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fg_sbuf_puts(b, "&lt;"); break;
		case '>': fg_sbuf_puts(b, "&gt;"); break;
		case '&': fg_sbuf_puts(b, "&amp;"); break;
		case '"': fg_sbuf_puts(b, "&quot;"); break;
		case '\'': fg_sbuf_puts(b, "&#39;"); break;
		default: fg_sbuf_put(b, s, 1);
		}
	}
}

static void html_peer(struct fg_sbuf *b, const struct fg_report_peer *p, bool total)
{
	char inj[64], prop[64];

	delays(&p->injection, inj, sizeof(inj));
	delays(&p->propagation, prop, sizeof(prop));
	fg_sbuf_puts(b, total ? "<tr class=\"total\"><th>" : "<tr><td>");
	esc(b, p->name);
	fg_sbuf_printf(b, "%s<td>%" PRIu64 "<td>%" PRIu64 "<td>%" PRIu64 "<td>%" PRIu64
		       "<td>%s<td>%s</tr>\n", total ? "</th>" : "", p->offers, p->accepted,
		       refused_sum(p), p->octets, inj, prop);
}

void fg_report_html(const struct fg_report *r, struct fg_sbuf *b)
{
	char a[40], z[40];
	struct fg_report_peer t;

	when(r->from, a, sizeof(a));
	when(r->to, z, sizeof(z));
	fg_sbuf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		       "<title>floodgate report %s to %s</title>\n<style>\n"
		       "body{font-family:sans-serif} table{border-collapse:collapse;margin:1em 0}\n"
		       "td,th{border:1px solid #999;padding:2px 8px;text-align:right}\n"
		       "td:first-child,th:first-child{text-align:left} tr.total{font-weight:bold}\n"
		       "</style></head><body>\n<h1>floodgate report</h1>\n"
		       "<p>From <time>%s</time> to <time>%s</time>.\n", a, z, a, z);
	when(r->first, a, sizeof(a));
	when(r->last, z, sizeof(z));
	fg_sbuf_printf(b, "<p id=\"samples\">%u samples (first %s, last %s), %u damaged, "
		       "%u counter resets, %u gaps.\n", r->samples, a, z, r->damaged, r->resets,
		       r->n_gaps);
	if (r->n_gaps) {
		fg_sbuf_puts(b, "<ul id=\"gaps\">\n");
		for (unsigned g = 0; g < r->n_gaps && g < FG_REPORT_GAPS_MAX; g++) {
			when(r->gap[g].from, a, sizeof(a));
			when(r->gap[g].to, z, sizeof(z));
			fg_sbuf_printf(b, "<li>no samples between %s and %s\n", a, z);
		}
		fg_sbuf_puts(b, "</ul>\n");
	}
	fg_sbuf_puts(b, "<h2>Peers</h2>\n<table id=\"peers\">\n<tr><th>peer<th>offers<th>accepted"
		     "<th>refused<th>octets<th>injection delay s p50/p90/p99"
		     "<th>propagation delay s p50/p90/p99</tr>\n");
	for (unsigned i = 0; i < r->n_peers; i++)
		html_peer(b, &r->peer[i], false);
	total_of(r, &t);
	html_peer(b, &t, true);
	fg_sbuf_puts(b, "</table>\n<h2>Refused by reason</h2>\n<table id=\"refused\">\n"
		     "<tr><th>peer<th>reason<th>count</tr>\n");
	for (unsigned i = 0; i < r->n_peers; i++)
		for (unsigned x = 1; x < FG_REASON__COUNT; x++) {
			if (!r->peer[i].refused[x])
				continue;
			fg_sbuf_puts(b, "<tr><td>");
			esc(b, r->peer[i].name);
			fg_sbuf_puts(b, "<td>");
			esc(b, fg_reason_name(x));
			fg_sbuf_printf(b, "<td>%" PRIu64 "</tr>\n", r->peer[i].refused[x]);
		}
	fg_sbuf_puts(b, "</table>\n<h2>Downstreams</h2>\n<table id=\"downstreams\">\n"
		     "<tr><th>downstream<th>sent<th>delivered<th>refused<th>lag s (last)"
		     "<th>lag s (max)<th>lag articles (last)<th>lag articles (max)</tr>\n");
	for (unsigned i = 0; i < r->n_ds; i++) {
		const struct fg_report_ds_sum *d = &r->ds[i];

		fg_sbuf_puts(b, "<tr><td>");
		esc(b, d->d.name);
		fg_sbuf_printf(b, "<td>%" PRIu64 "<td>%" PRIu64 "<td>%" PRIu64 "<td>%" PRIu64
			       "<td>%" PRIu64 "<td>%" PRIu64 "<td>%" PRIu64 "</tr>\n", d->d.sent,
			       d->d.delivered, d->d.refused, d->d.lag_seconds, d->lag_seconds_max,
			       d->d.lag_records, d->lag_records_max);
	}
	fg_sbuf_puts(b, "</table>\n</body></html>\n");
}

/* ---- JSON ---- */

static void json_delay(struct fg_json *j, const char *key, const struct fg_hist *h)
{
	static const char *const names[NQ] = { "p50", "p90", "p99" };
	int64_t v;

	fg_json_obj(j, key);
	fg_json_u64(j, "count", h->count);
	fg_json_u64(j, "negative", h->negative);
	for (unsigned q = 0; q < NQ; q++) {
		if (fg_report_percentile(h, quantiles[q], &v))
			fg_json_i64(j, names[q], v);
		else
			fg_json_null(j, names[q]);
	}
	fg_json_close(j);
}

static void json_peer(struct fg_json *j, const struct fg_report_peer *p, const char *key)
{
	fg_json_obj(j, key);
	if (!key)
		fg_json_str(j, "peer", p->name);
	fg_json_u64(j, "offers", p->offers);
	fg_json_u64(j, "accepted", p->accepted);
	fg_json_u64(j, "refused", refused_sum(p));
	fg_json_u64(j, "octets", p->octets);
	fg_json_obj(j, "refused_by_reason");
	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		if (p->refused[x])
			fg_json_u64(j, fg_reason_name(x), p->refused[x]);
	fg_json_close(j);
	json_delay(j, "injection_delay_seconds", &p->injection);
	json_delay(j, "propagation_delay_seconds", &p->propagation);
	fg_json_close(j);
}

void fg_report_json(const struct fg_report *r, struct fg_sbuf *out)
{
	struct fg_report_peer t;
	struct fg_json j;

	fg_json_begin(&j, out);
	fg_json_time(&j, "from", r->from);
	fg_json_time(&j, "to", r->to);
	fg_json_u64(&j, "samples", r->samples);
	fg_json_time(&j, "first_sample", r->first);
	fg_json_time(&j, "last_sample", r->last);
	fg_json_u64(&j, "damaged_samples", r->damaged);
	fg_json_u64(&j, "counter_resets", r->resets);
	fg_json_u64(&j, "files", r->files);
	fg_json_arr(&j, "gaps");
	for (unsigned g = 0; g < r->n_gaps && g < FG_REPORT_GAPS_MAX; g++) {
		fg_json_obj(&j, NULL);
		fg_json_time(&j, "from", r->gap[g].from);
		fg_json_time(&j, "to", r->gap[g].to);
		fg_json_close(&j);
	}
	fg_json_close(&j);
	fg_json_u64(&j, "gaps_total", r->n_gaps);
	fg_json_arr(&j, "peers");
	for (unsigned i = 0; i < r->n_peers; i++)
		json_peer(&j, &r->peer[i], NULL);
	fg_json_close(&j);
	total_of(r, &t);
	json_peer(&j, &t, "total");
	fg_json_arr(&j, "downstreams");
	for (unsigned i = 0; i < r->n_ds; i++) {
		const struct fg_report_ds_sum *d = &r->ds[i];

		fg_json_obj(&j, NULL);
		fg_json_str(&j, "downstream", d->d.name);
		fg_json_u64(&j, "sent", d->d.sent);
		fg_json_u64(&j, "delivered", d->d.delivered);
		fg_json_u64(&j, "refused", d->d.refused);
		fg_json_u64(&j, "lag_seconds", d->d.lag_seconds);
		fg_json_u64(&j, "lag_seconds_max", d->lag_seconds_max);
		fg_json_u64(&j, "lag_records", d->d.lag_records);
		fg_json_u64(&j, "lag_records_max", d->lag_records_max);
		fg_json_close(&j);
	}
	fg_json_close(&j);
	fg_json_end(&j);
}
