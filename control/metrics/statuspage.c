/* SPDX-License-Identifier: MIT */
/*
 * statuspage.c — the status page (statuspage.h): a fourth renderer of the
 * one sample /metrics, /stats.json and `floodctl stats` render from
 * (metrics.c), so the page and the JSON of a moment agree figure for
 * figure.
 *
 * The page, top to bottom, in the order a person on call asks:
 *   0. a form to look a Message-ID up, and its answer when one was asked;
 *   1. what is wrong: one line per alarm (clock suspect, history near
 *      full, throttled, a peer paused, a downstream parked, a port down or
 *      dropping, the kernel clock unsynchronised, the dataplane's files
 *      stale), or a line saying nothing is;
 *   2. tiles: offers, accepted and refused a second, history fill, the
 *      queue's lag, the ports' drops, each with a sparkline of the trend;
 *   3. peers: sessions, offers/s and its sparkline, offers, accepted,
 *      refused and by reason, the share of first offers, the two delays of
 *      seed 002 (means), last seen;
 *   4. downstreams: state, lag, parked, backlog, what they took;
 *   5. history, queue, levers, clock, floodctld's own state side by side;
 *      then the ports.
 * No script: a meta refresh reloads it. Numbers are grouped by thousands
 * in the text; data-v keeps the exact value (statuspage.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/statuspage.h"
#include "metrics_int.h"

#define SPARK_W 120
#define SPARK_H 22
#define STALE_SECONDS 5		/* the dataplane rewrites its files every second */
#define NAME_MAX_CHARS 64	/* longer names and reasons are cut, with an ellipsis */

static const char css[] =
	"body{font:14px/1.35 system-ui,sans-serif;margin:0 1.2em 2em;color:#1b1f24;background:#fff}"
	"h1{font-size:1.35em;margin:.6em 0 .1em}h2{font-size:1.05em;margin:1.3em 0 .4em;"
	"border-bottom:1px solid #d0d7de;padding-bottom:.15em}"
	".meta{color:#57606a;margin:0 0 .6em}a{color:#0969da}"
	".alerts p{margin:.25em 0;padding:.3em .6em;border-radius:4px}"
	".bad{background:#ffebe9;border-left:4px solid #cf222e}"
	".warn{background:#fff8c5;border-left:4px solid #bf8700}"
	".good{background:#dafbe1;border-left:4px solid #1a7f37}"
	".tiles{display:flex;flex-wrap:wrap;gap:.6em}"
	".tile{border:1px solid #d0d7de;border-radius:6px;padding:.4em .7em;min-width:11em}"
	".tile .big{font-size:1.5em;font-weight:600}.tile .sub{color:#57606a;font-size:.85em}"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
	"th,td{padding:.2em .55em;text-align:right;white-space:nowrap;border-bottom:1px solid #eaeef2}"
	"th{font-weight:600;color:#57606a;font-size:.85em}"
	"td.l,th.l{text-align:left}td.reasons{text-align:left;white-space:normal;max-width:22em}"
	"ul.r{list-style:none;margin:0;padding:0}ul.r li{display:inline;margin-right:.6em}"
	".spark polyline{fill:none;stroke:#0969da;stroke-width:1.3}.spark circle{fill:#0969da}"
	".spark{vertical-align:middle;background:#f6f8fa}"
	".st-feeding{color:#1a7f37}.st-connecting{color:#bf8700}"
	".st-parked,.st-parked-full,.st-paused{color:#cf222e;font-weight:600}"
	".bar{display:inline-block;width:10em;height:.7em;background:#eaeef2;vertical-align:middle}"
	".bar i{display:block;height:100%;background:#0969da}.bar i.hot{background:#cf222e}"
	"dl{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;margin:0}"
	"dt{color:#57606a}dd{margin:0}"
	".cols{display:flex;flex-wrap:wrap;gap:0 3em}.cols>section{min-width:17em}"
	"form.lookup{margin:0 0 .5em}form.lookup input{font:inherit;font-family:monospace}"
	"pre{background:#f6f8fa;padding:.5em .7em;margin:0;white-space:pre-wrap}";

/* ---------------------------------------------------------------- figures */

/* 1234567 as "1 234 567", the groups apart by a narrow no-break space */
static void put_count(struct fg_sbuf *b, uint64_t v)
{
	char d[24];
	int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v);

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			fg_sbuf_puts(b, "\xe2\x80\xaf");
		fg_sbuf_put(b, d + i, 1);
	}
}

static void put_bytes(struct fg_sbuf *b, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	unsigned u = 0;

	while (x >= 1024 && u + 1 < FG_ARRAY_SIZE(unit)) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		fg_sbuf_printf(b, "%llu B", (unsigned long long)v);
	else
		fg_sbuf_printf(b, "%.1f %s", x, unit[u]);
}

static void put_secs(struct fg_sbuf *b, double s)
{
	if (isnan(s))
		fg_sbuf_puts(b, "-");
	else if (fabs(s) < 120)
		fg_sbuf_printf(b, "%.0f s", s);
	else if (fabs(s) < 7200)
		fg_sbuf_printf(b, "%.0f min", s / 60);
	else if (fabs(s) < 172800)
		fg_sbuf_printf(b, "%.1f h", s / 3600);
	else
		fg_sbuf_printf(b, "%.1f d", s / 86400);
}

/* A cell whose text is the exact count. */
static void td_count(struct fg_sbuf *b, const char *key, uint64_t v)
{
	fg_sbuf_printf(b, "<td data-k=\"%s\" data-v=\"%llu\">", key, (unsigned long long)v);
	put_count(b, v);
	fg_sbuf_puts(b, "</td>");
}

static void td_bytes(struct fg_sbuf *b, const char *key, uint64_t v)
{
	fg_sbuf_printf(b, "<td data-k=\"%s\" data-v=\"%llu\">", key, (unsigned long long)v);
	put_bytes(b, v);
	fg_sbuf_puts(b, "</td>");
}

static void td_secs(struct fg_sbuf *b, const char *key, int64_t v)
{
	fg_sbuf_printf(b, "<td data-k=\"%s\" data-v=\"%lld\">", key, (long long)v);
	put_secs(b, (double)v);
	fg_sbuf_puts(b, "</td>");
}

/* ---------------------------------------------------------------- the trend */

enum series { S_OFFERS, S_ACCEPTED, S_REFUSED, S_DROPS, S_HISTORY, S_LAG, S_PEER };

static uint64_t row_value(const struct fg_trend_row *r, enum series s, unsigned peer)
{
	switch (s) {
	case S_OFFERS: return r->offers;
	case S_ACCEPTED: return r->accepted;
	case S_REFUSED: return r->refused;
	case S_DROPS: return r->nic_drops;
	case S_HISTORY: return r->history_entries;
	case S_LAG: return r->queue_lag;
	case S_PEER: return peer < r->npeers ? r->peer_offers[peer] : 0;
	}
	return 0;
}

/* The rate between rows i-1 and i: NaN where a counter went back or the
 * peer was not yet named. */
static double step_rate(const struct fg_trend *t, unsigned i, enum series s, unsigned peer)
{
	const struct fg_trend_row *a = fg_trend_row(t, i - 1), *z = fg_trend_row(t, i);
	double dt = (double)(z->mono_ns - a->mono_ns) / 1e9;
	uint64_t va = row_value(a, s, peer), vz = row_value(z, s, peer);

	if (dt <= 0 || vz < va || (s == S_PEER && (peer >= a->npeers || peer >= z->npeers)))
		return NAN;
	return (double)(vz - va) / dt;
}

/* The newest rate; NaN with fewer than two rows. */
static double last_rate(const struct fg_trend *t, enum series s, unsigned peer)
{
	unsigned n = fg_trend_count(t);

	return n < 2 ? NAN : step_rate(t, n - 1, s, peer);
}

/* The sparkline of a series: rates of a counter, or a gauge's values. */
static void spark(struct fg_sbuf *b, const struct fg_trend *t, enum series s, unsigned peer,
		  bool rate, const char *label)
{
	unsigned n = fg_trend_count(t), k = 0;
	double v[1024];

	for (unsigned i = rate ? 1 : 0; i < n && k < FG_ARRAY_SIZE(v); i++)
		v[k++] = rate ? step_rate(t, i, s, peer) : (double)row_value(fg_trend_row(t, i), s, peer);
	fg_html_spark(b, v, k, SPARK_W, SPARK_H, label);
}

static void put_rate(struct fg_sbuf *b, double r)
{
	if (isnan(r))
		fg_sbuf_puts(b, "-");
	else if (r < 10)
		fg_sbuf_printf(b, "%.1f/s", r);
	else
		fg_sbuf_printf(b, "%.0f/s", r);
}

/* data-v of a rate: "nan" when there is none yet */
static void rate_attr(struct fg_sbuf *b, double r)
{
	if (isnan(r))
		fg_sbuf_puts(b, " data-v=\"nan\"");
	else
		fg_sbuf_printf(b, " data-v=\"%.3f\"", r);
}

/* ---------------------------------------------------------------- sections */

static uint64_t refused_of(const struct fg_stats *st)
{
	uint64_t n = 0;

	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		n += st->rejected[x];
	return n;
}

static bool ds_stale(const struct fg_metrics_state *m)
{
	return m->ds_written && m->now - m->ds_written > STALE_SECONDS;
}

static uint64_t port_drops(const struct fg_nic_port *np)
{
	return np->v[FG_NIC_RX_MISSED] + np->v[FG_NIC_RX_NOMBUF] + np->v[FG_NIC_RX_ERRORS] +
	       np->v[FG_NIC_TX_DROPPED];
}

static void alert(struct fg_sbuf *b, const char *cls, const char *key, unsigned *n)
{
	fg_sbuf_printf(b, "<p class=\"%s\" data-k=\"alert\" data-v=\"%s\">", cls, key);
	(*n)++;
}

/* 0. The lookup form, and what the lookup said when one was asked. */
static void sec_lookup(struct fg_sbuf *b, const struct fg_page_opts *o)
{
	fg_sbuf_puts(b, "<form class=\"lookup\" method=\"get\" action=\"/\"><label>Look up a "
		     "Message-ID <input name=\"id\" size=\"48\" placeholder=\"&lt;id@example&gt;\" "
		     "value=\"");
	if (o->lookup_id)
		fg_html_puts(b, o->lookup_id);
	fg_sbuf_puts(b, "\"></label> <button>look up</button></form>\n");
	if (!o->lookup_id)
		return;
	fg_sbuf_puts(b, "<section data-s=\"lookup\"><pre data-k=\"lookup\">");
	fg_html_puts(b, o->lookup_text ? o->lookup_text : "");
	fg_sbuf_puts(b, "</pre></section>\n");
}

/* 1. What is wrong, one line each. */
static void sec_alerts(struct fg_sbuf *b, const struct fg_metrics_state *m, const struct sample *s,
		       const struct fg_trend *t)
{
	unsigned n = 0;
	double drops = last_rate(t, S_DROPS, 0);

	fg_sbuf_puts(b, "<section class=\"alerts\" data-s=\"alerts\">");
	if (s->clock_suspect) {
		alert(b, "bad", "clock-suspect", &n);
		fg_sbuf_puts(b, "<b>Clock suspect</b>: a writer&rsquo;s recent Injection-Dates sit hours "
			     "away from the local clock; date verdicts it could flip are passed on, "
			     "none remembered.</p>");
	}
	if (s->hs.alarm) {
		alert(b, "bad", "history-full", &n);
		fg_sbuf_printf(b, "<b>History near full</b>: %.1f %% of its capacity (alarm at "
			       "%u %%).</p>", s->hs.load_ppm / 1e4, s->hs.alarm_load_pct);
	}
	if (m->levers_ok && m->levers.throttle[0]) {
		alert(b, "bad", "throttled", &n);
		fg_sbuf_puts(b, "<b>Throttled</b> by the operator: &ldquo;");
		fg_html_escape(b, m->levers.throttle, strlen(m->levers.throttle), NAME_MAX_CHARS);
		fg_sbuf_puts(b, "&rdquo; (floodctl go ends it).</p>");
	}
	for (unsigned i = 0; m->levers_ok && i < m->levers.n_pauses; i++) {
		alert(b, "warn", "paused", &n);
		fg_sbuf_puts(b, "Peer <b>");
		fg_html_escape(b, m->levers.pause[i].peer, strlen(m->levers.pause[i].peer),
			       NAME_MAX_CHARS);
		fg_sbuf_puts(b, "</b> paused, ");
		put_secs(b, (double)(m->levers.pause[i].until - m->now));
		fg_sbuf_puts(b, " more (floodctl resume).</p>");
	}
	for (unsigned i = 0; i < m->n_ds; i++)
		if (m->ds[i].parked || m->ds[i].paused) {
			alert(b, m->ds[i].paused ? "warn" : "bad", "downstream", &n);
			fg_sbuf_puts(b, "Downstream <b>");
			fg_html_puts(b, m->ds[i].name);
			fg_sbuf_puts(b, "</b> ");
			fg_html_puts(b, fg_metrics_ds_state(&m->ds[i]));
			fg_sbuf_puts(b, ": its articles wait in the queue.</p>");
		}
	if (ds_stale(m)) {
		alert(b, "warn", "stale", &n);
		fg_sbuf_puts(b, "The dataplane last wrote its downstreams&rsquo; state ");
		put_secs(b, (double)(m->now - m->ds_written));
		fg_sbuf_puts(b, " ago: is it running?</p>");
	}
	for (unsigned k = 0; k < s->n_nic; k++)
		for (unsigned p = 0; p < s->nic[k].n_ports; p++)
			if (!s->nic[k].port[p].v[FG_NIC_LINK_UP]) {
				alert(b, "bad", "link-down", &n);
				fg_sbuf_puts(b, "Port <b>");
				fg_html_puts(b, s->nic[k].port[p].name);
				fg_sbuf_puts(b, "</b>: link down.</p>");
			}
	if (!isnan(drops) && drops > 0) {
		alert(b, "bad", "nic-drops", &n);
		fg_sbuf_puts(b, "The ports are dropping frames: ");
		put_rate(b, drops);
		fg_sbuf_puts(b, " over the last period.</p>");
	}
	if (s->kclock.ok && !s->kclock.synchronised) {
		alert(b, "warn", "kernel-clock", &n);
		fg_sbuf_puts(b, "The kernel clock is not synchronised (adjtimex).</p>");
	}
	if (!n)
		fg_sbuf_puts(b, "<p class=\"good\" data-k=\"alert\" data-v=\"none\">Nothing needs "
			     "attention.</p>");
	fg_sbuf_puts(b, "</section>\n");
}

static void tile_rate(struct fg_sbuf *b, const struct fg_trend *t, enum series s, const char *key,
		      const char *title, uint64_t total, const char *total_key)
{
	double r = last_rate(t, s, 0);

	fg_sbuf_printf(b, "<div class=\"tile\"><div class=\"sub\">%s</div>"
		       "<div class=\"big\" data-k=\"%s\"", title, key);
	rate_attr(b, r);
	fg_sbuf_puts(b, ">");
	put_rate(b, r);
	fg_sbuf_puts(b, "</div>");
	spark(b, t, s, 0, true, title);
	fg_sbuf_printf(b, "<div class=\"sub\">total <span data-k=\"%s\" data-v=\"%llu\">",
		       total_key, (unsigned long long)total);
	put_count(b, total);
	fg_sbuf_puts(b, "</span></div></div>");
}

/* 2. The tiles. */
static void sec_tiles(struct fg_sbuf *b, const struct fg_metrics_state *m, const struct sample *s,
		      const struct fg_trend *t)
{
	const struct fg_stats *st = &s->st->total;
	uint64_t lag = 0, drops = 0;

	for (unsigned i = 0; m->queue.present && i < m->queue.n_consumers; i++)
		lag += m->queue.consumer[i].lag_records;
	for (unsigned k = 0; k < s->n_nic; k++)
		for (unsigned p = 0; p < s->nic[k].n_ports; p++)
			drops += port_drops(&s->nic[k].port[p]);
	fg_sbuf_puts(b, "<section class=\"tiles\" data-s=\"totals\">");
	tile_rate(b, t, S_OFFERS, "offers_rate", "offers", st->ctr[FG_CTR_NNTP_OFFERS], "offers");
	tile_rate(b, t, S_ACCEPTED, "accepted_rate", "accepted", st->ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED],
		  "accepted");
	tile_rate(b, t, S_REFUSED, "refused_rate", "refused", refused_of(st), "refused");
	fg_sbuf_printf(b, "<div class=\"tile\"><div class=\"sub\">history fill</div>"
		       "<div class=\"big\" data-k=\"history_load\" data-v=\"%.6f\">%.1f %%</div>",
		       s->hs.load_ppm / 1e6, s->hs.load_ppm / 1e4);
	spark(b, t, S_HISTORY, 0, false, "history entries");
	fg_sbuf_printf(b, "<div class=\"sub\"><span data-k=\"history_entries\" data-v=\"%llu\">",
		       (unsigned long long)s->hs.entries);
	put_count(b, s->hs.entries);
	fg_sbuf_puts(b, "</span> entries</div></div>");
	fg_sbuf_printf(b, "<div class=\"tile\"><div class=\"sub\">queue lag</div>"
		       "<div class=\"big\" data-k=\"queue_lag\" data-v=\"%llu\">",
		       (unsigned long long)lag);
	if (m->queue.present)
		put_count(b, lag);
	else
		fg_sbuf_puts(b, "-");
	fg_sbuf_puts(b, "</div>");
	spark(b, t, S_LAG, 0, false, "queue lag, articles");
	fg_sbuf_puts(b, "<div class=\"sub\">articles not yet delivered</div></div>");
	fg_sbuf_printf(b, "<div class=\"tile\"><div class=\"sub\">port drops</div>"
		       "<div class=\"big\" data-k=\"nic_drops\" data-v=\"%llu\">",
		       (unsigned long long)drops);
	put_count(b, drops);
	fg_sbuf_puts(b, "</div>");
	spark(b, t, S_DROPS, 0, true, "port drops a second");
	fg_sbuf_puts(b, "<div class=\"sub\">missed, no mbuf, errors, tx dropped</div></div>");
	fg_sbuf_puts(b, "</section>\n");
}

static void td_delay(struct fg_sbuf *b, const char *key, const struct fg_hist *h)
{
	fg_sbuf_printf(b, "<td data-k=\"%s\" data-count=\"%llu\" data-sum=\"%lld\" "
		       "data-negative=\"%llu\">", key, (unsigned long long)h->count, (long long)h->sum,
		       (unsigned long long)h->negative);
	put_secs(b, fg_hist_mean(h));
	if (h->negative)
		fg_sbuf_printf(b, " (%llu&lt;0)", (unsigned long long)h->negative);
	fg_sbuf_puts(b, "</td>");
}

static void peer_row(struct fg_sbuf *b, struct fg_region *r, const struct fg_metrics_state *m,
		     const struct sample *s, const struct fg_trend *t, unsigned p)
{
	const struct fg_stats *st = &s->st->peer[p];
	const struct fg_region_delays *d = &s->st->peer_delay[p];
	const char *name = fg_region_peer_name(r, p);
	double share = fg_stats_first_share(st), rate = last_rate(t, S_PEER, p);
	fg_time_t seen = s->st->peer_last_seen[p];
	bool any = false;

	fg_sbuf_puts(b, "<tr data-peer=\"");
	fg_html_puts(b, name);
	fg_sbuf_puts(b, "\"><td class=\"l\" data-k=\"name\">");
	fg_html_escape(b, name, strlen(name), NAME_MAX_CHARS);
	fg_sbuf_puts(b, "</td>");
	td_count(b, "sessions", s->sessions[p]);
	fg_sbuf_puts(b, "<td data-k=\"offers_rate\"");
	rate_attr(b, rate);
	fg_sbuf_puts(b, ">");
	put_rate(b, rate);
	fg_sbuf_puts(b, "</td><td>");
	spark(b, t, S_PEER, p, true, "offers a second");
	fg_sbuf_puts(b, "</td>");
	td_count(b, "offers", st->ctr[FG_CTR_NNTP_OFFERS]);
	td_count(b, "accepted", st->ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED]);
	td_count(b, "refused", refused_of(st));
	fg_sbuf_puts(b, "<td class=\"reasons\"><ul class=\"r\">");
	for (unsigned x = 1; x < FG_REASON__COUNT; x++) {
		if (!st->rejected[x])
			continue;
		fg_sbuf_printf(b, "<li data-k=\"rejected.%s\" data-v=\"%llu\">", fg_reason_name(x),
			       (unsigned long long)st->rejected[x]);
		fg_html_puts(b, fg_reason_name(x));
		fg_sbuf_puts(b, " ");
		put_count(b, st->rejected[x]);
		fg_sbuf_puts(b, "</li>");
		any = true;
	}
	fg_sbuf_printf(b, "%s</ul></td>", any ? "" : "<li>-</li>");
	if (isnan(share))
		fg_sbuf_puts(b, "<td data-k=\"first_share\" data-v=\"nan\">-</td>");
	else
		fg_sbuf_printf(b, "<td data-k=\"first_share\" data-v=\"%.6f\">%.1f %%</td>", share,
			       share * 100);
	td_delay(b, "injection_delay", &d->injection_delay);
	td_delay(b, "propagation_delay", &d->propagation_delay);
	fg_sbuf_printf(b, "<td data-k=\"last_seen\" data-v=\"%lld\"", (long long)seen);
	if (seen) {
		fg_sbuf_puts(b, " title=\"");
		fg_sbuf_time(b, seen);
		fg_sbuf_puts(b, "\">");
		put_secs(b, (double)(m->now - seen));
		fg_sbuf_puts(b, " ago");
	} else {
		fg_sbuf_puts(b, ">never");
	}
	fg_sbuf_puts(b, "</td></tr>\n");
}

/* 3. The peers. */
static void sec_peers(struct fg_sbuf *b, struct fg_region *r, const struct fg_metrics_state *m,
		      const struct sample *s, const struct fg_trend *t)
{
	fg_sbuf_printf(b, "<section data-s=\"peers\"><h2>Peers (%u)</h2>", s->npeers);
	if (!s->npeers) {
		fg_sbuf_puts(b, "<p>No peer is configured.</p></section>\n");
		return;
	}
	fg_sbuf_puts(b, "<table><thead><tr><th class=\"l\">peer</th><th>sessions</th>"
		     "<th>offers/s</th><th>last minutes</th><th>offers</th><th>accepted</th>"
		     "<th>refused</th><th class=\"l\">refused by reason</th><th>first offers</th>"
		     "<th title=\"Injection-Date minus Date, mean\">injection delay</th>"
		     "<th title=\"arrival minus Injection-Date, mean\">propagation delay</th>"
		     "<th>last seen</th></tr></thead><tbody>\n");
	for (unsigned p = 0; p < s->npeers; p++)
		peer_row(b, r, m, s, t, p);
	fg_sbuf_puts(b, "</tbody></table></section>\n");
}

/* 4. The downstreams. */
static void sec_downstreams(struct fg_sbuf *b, const struct fg_metrics_state *m)
{
	fg_sbuf_printf(b, "<section data-s=\"downstreams\"><h2>Downstreams (%u)</h2>", m->n_ds);
	if (!m->ds_written) {
		fg_sbuf_puts(b, "<p>No downstreams&rsquo; state: the dataplane has not written "
			     FG_DS_STATUS_FILE " (not running yet, or no downstream).</p></section>\n");
		return;
	}
	fg_sbuf_puts(b, "<table><thead><tr><th class=\"l\">downstream</th><th class=\"l\">state</th>"
		     "<th>lag</th><th>lag octets</th><th>oldest</th><th>parked</th><th>backlog</th>"
		     "<th>sent</th><th>accepted</th><th>refused</th><th>had it</th>"
		     "<th>reconnects</th></tr></thead><tbody>\n");
	for (unsigned i = 0; i < m->n_ds; i++) {
		const struct fg_ds_status *d = &m->ds[i];
		const char *state = fg_metrics_ds_state(d);
		uint64_t rec, bytes;
		int64_t secs;

		fg_metrics_ds_lag(m, d, &rec, &bytes, &secs);
		fg_sbuf_puts(b, "<tr data-downstream=\"");
		fg_html_puts(b, d->name);
		fg_sbuf_puts(b, "\"><td class=\"l\">");
		fg_html_escape(b, d->name, strlen(d->name), NAME_MAX_CHARS);
		fg_sbuf_printf(b, "</td><td class=\"l st-%s\" data-k=\"state\">%s</td>", state, state);
		td_count(b, "lag_records", rec);
		td_bytes(b, "lag_bytes", bytes);
		td_secs(b, "lag_seconds", secs);
		fg_sbuf_printf(b, "<td data-k=\"parked\" data-v=\"%llu\">%s</td>",
			       (unsigned long long)d->parked, d->parked ? "yes" : "no");
		td_bytes(b, "backlog_bytes", d->backlog_bytes);
		td_count(b, "sent", d->sent);
		td_count(b, "accepted", d->accepted);
		td_count(b, "refused", d->refused);
		td_count(b, "not_wanted", d->not_wanted);
		td_count(b, "reconnects", d->reconnects);
		fg_sbuf_puts(b, "</tr>\n");
	}
	fg_sbuf_puts(b, "</tbody></table><p class=\"meta\">as the dataplane wrote it ");
	put_secs(b, (double)(m->now - m->ds_written));
	fg_sbuf_puts(b, " ago</p></section>\n");
}

static void dd_count(struct fg_sbuf *b, const char *dt, const char *key, uint64_t v)
{
	fg_sbuf_printf(b, "<dt>%s</dt><dd data-k=\"%s\" data-v=\"%llu\">", dt, key,
		       (unsigned long long)v);
	put_count(b, v);
	fg_sbuf_puts(b, "</dd>");
}

/* 5a. History and queue, side by side in one section each. */
static void sec_history(struct fg_sbuf *b, const struct sample *s)
{
	unsigned pct = (unsigned)(s->hs.load_ppm / 10000);

	fg_sbuf_puts(b, "<section data-s=\"history\"><h2>History</h2><dl>");
	dd_count(b, "entries", "entries", s->hs.entries);
	dd_count(b, "capacity", "capacity", s->hs.slots);
	fg_sbuf_printf(b, "<dt>fill</dt><dd data-k=\"load\" data-v=\"%.6f\"><span class=\"bar\">"
		       "<i%s style=\"width:%u%%\"></i></span> %.1f %% (alarm at %u %%)</dd>",
		       s->hs.load_ppm / 1e6, s->hs.alarm ? " class=\"hot\"" : "",
		       pct > 100 ? 100 : pct, s->hs.load_ppm / 1e4, s->hs.alarm_load_pct);
	fg_sbuf_printf(b, "<dt>alarm</dt><dd data-k=\"alarm\" data-v=\"%d\">%s</dd>",
		       s->hs.alarm, s->hs.alarm ? "<b>near full</b>" : "no");
	for (unsigned st = FG_HISTORY_OFFERED; st < FG_HISTORY_STATE__COUNT; st++) {
		char key[48];

		snprintf(key, sizeof(key), "by_state.%s", fg_history_state_name(st));
		dd_count(b, fg_history_state_name(st), key, s->hs.by_state[st]);
	}
	fg_sbuf_puts(b, "</dl></section>\n");
}

static void sec_queue(struct fg_sbuf *b, const struct fg_metrics_state *m)
{
	fg_sbuf_puts(b, "<section data-s=\"queue\"><h2>Outbound queue</h2>");
	if (!m->queue.present) {
		fg_sbuf_puts(b, "<p>No outbound queue in the data directory.</p></section>\n");
		return;
	}
	fg_sbuf_puts(b, "<dl>");
	dd_count(b, "articles in its files", "records", m->queue.end.recno - m->queue.begin.recno);
	fg_sbuf_printf(b, "<dt>octets</dt><dd data-k=\"bytes\" data-v=\"%llu\">",
		       (unsigned long long)m->queue.bytes);
	put_bytes(b, m->queue.bytes);
	fg_sbuf_puts(b, "</dd>");
	dd_count(b, "segments", "segments", m->queue.segments);
	fg_sbuf_printf(b, "<dt>oldest undelivered</dt><dd data-k=\"oldest_age_seconds\" "
		       "data-v=\"%lld\">", (long long)m->queue.oldest_seconds);
	put_secs(b, (double)m->queue.oldest_seconds);
	fg_sbuf_puts(b, "</dd></dl></section>\n");
}

/* 5b. The levers in force. */
static void sec_levers(struct fg_sbuf *b, const struct fg_metrics_state *m)
{
	fg_sbuf_puts(b, "<section data-s=\"levers\"><h2>Levers</h2>");
	if (!m->levers_ok) {
		fg_sbuf_puts(b, "<p>The levers&rsquo; journal could not be read.</p></section>\n");
		return;
	}
	fg_sbuf_puts(b, "<dl><dt>throttled</dt><dd data-k=\"throttled\">");
	if (m->levers.throttle[0])
		fg_html_escape(b, m->levers.throttle, strlen(m->levers.throttle), 0);
	else
		fg_sbuf_puts(b, "no");
	fg_sbuf_puts(b, "</dd><dt>paused</dt><dd>");
	if (!m->levers.n_pauses)
		fg_sbuf_puts(b, "none");
	for (unsigned i = 0; i < m->levers.n_pauses; i++) {
		fg_sbuf_puts(b, "<span data-pause=\"");
		fg_html_puts(b, m->levers.pause[i].peer);
		fg_sbuf_printf(b, "\" data-k=\"remaining_seconds\" data-v=\"%lld\">%s",
			       (long long)(m->levers.pause[i].until - m->now), i ? ", " : "");
		fg_html_escape(b, m->levers.pause[i].peer, strlen(m->levers.pause[i].peer),
			       NAME_MAX_CHARS);
		fg_sbuf_puts(b, " (");
		put_secs(b, (double)(m->levers.pause[i].until - m->now));
		fg_sbuf_puts(b, " more)</span>");
	}
	fg_sbuf_puts(b, "</dd></dl></section>\n");
}

/* 5c. The ports. */
static void sec_nic(struct fg_sbuf *b, const struct sample *s)
{
	static const struct { int id; const char *key, *th; } cols[] = {
		{ FG_NIC_RX_PACKETS, "rx_packets", "rx frames" },
		{ FG_NIC_RX_MISSED, "rx_missed", "missed" },
		{ FG_NIC_RX_NOMBUF, "rx_nombuf", "no mbuf" },
		{ FG_NIC_RX_ERRORS, "rx_errors", "rx errors" },
		{ FG_NIC_TX_PACKETS, "tx_packets", "tx frames" },
		{ FG_NIC_TX_ERRORS, "tx_errors", "tx errors" },
		{ FG_NIC_TX_DROPPED, "tx_dropped", "tx dropped" },
	};
	unsigned ports = 0;

	for (unsigned k = 0; k < s->n_nic; k++)
		ports += s->nic[k].n_ports;
	fg_sbuf_printf(b, "<section data-s=\"nic\"><h2>Network ports (%u)</h2>", ports);
	if (!ports) {
		fg_sbuf_puts(b, "<p>No port: no DPDK dataplane publishes one (floodgate-host uses "
			     "the kernel&rsquo;s sockets).</p></section>\n");
		return;
	}
	fg_sbuf_puts(b, "<table><thead><tr><th class=\"l\">port</th><th class=\"l\">role</th>"
		     "<th class=\"l\">link</th>");
	for (unsigned c = 0; c < FG_ARRAY_SIZE(cols); c++)
		fg_sbuf_printf(b, "<th>%s</th>", cols[c].th);
	fg_sbuf_puts(b, "</tr></thead><tbody>\n");
	for (unsigned k = 0; k < s->n_nic; k++)
		for (unsigned p = 0; p < s->nic[k].n_ports; p++) {
			const struct fg_nic_port *np = &s->nic[k].port[p];

			fg_sbuf_puts(b, "<tr data-port=\"");
			fg_html_puts(b, np->name);
			fg_sbuf_puts(b, "\"><td class=\"l\">");
			fg_html_escape(b, np->name, strnlen(np->name, sizeof(np->name)), NAME_MAX_CHARS);
			fg_sbuf_printf(b, "</td><td class=\"l\">%s</td><td class=\"l\" data-k=\"link_up\" "
				       "data-v=\"%llu\">", fg_nic_role_name(np->role),
				       (unsigned long long)np->v[FG_NIC_LINK_UP]);
			if (np->v[FG_NIC_LINK_UP] && np->v[FG_NIC_LINK_SPEED])
				fg_sbuf_printf(b, "up, %llu Mbit/s",
					       (unsigned long long)np->v[FG_NIC_LINK_SPEED]);
			else
				fg_sbuf_puts(b, np->v[FG_NIC_LINK_UP] ? "up" : "<b>down</b>");
			fg_sbuf_puts(b, "</td>");
			for (unsigned c = 0; c < FG_ARRAY_SIZE(cols); c++)
				td_count(b, cols[c].key, np->v[cols[c].id]);
			fg_sbuf_puts(b, "</tr>\n");
		}
	fg_sbuf_puts(b, "</tbody></table></section>\n");
}

/* 5d. The clock guard and the kernel's view. */
static void sec_clock(struct fg_sbuf *b, const struct sample *s)
{
	fg_sbuf_printf(b, "<section data-s=\"clock\"><h2>Clock</h2><dl><dt>clock guard</dt>"
		       "<dd data-k=\"clock_suspect\" data-v=\"%d\">%s</dd>", s->clock_suspect,
		       s->clock_suspect ? "<b>SUSPECT</b>: date verdicts it could flip are passed "
					  "on, none remembered" : "sane: the peers&rsquo; Injection-Dates "
					  "agree with the local clock");
	fg_sbuf_puts(b, "<dt>kernel clock</dt>");
	if (!s->kclock.ok)
		fg_sbuf_puts(b, "<dd data-k=\"kernel_synchronized\" data-v=\"\">adjtimex failed</dd>");
	else
		fg_sbuf_printf(b, "<dd data-k=\"kernel_synchronized\" data-v=\"%d\">%s, estimated "
			       "error %.6f s, maximum %.6f s</dd>", s->kclock.synchronised,
			       s->kclock.synchronised ? "synchronised" : "<b>not synchronised</b>",
			       s->kclock.est_error, s->kclock.max_error);
	fg_sbuf_puts(b, "</dl></section>\n");
}

/* 5e. floodctld's own state: what `floodctl status` leads with. */
static void sec_daemon(struct fg_sbuf *b, const struct fg_metrics_state *m, const struct sample *s)
{
	fg_sbuf_puts(b, "<section data-s=\"floodctld\"><h2>floodctld</h2><dl>");
	dd_count(b, "writers", "writers", s->writers);
	for (unsigned i = 0; i < s->n_lc; i++) {
		fg_sbuf_puts(b, "<dt>worker ");
		fg_html_puts(b, s->lc[i].name);
		fg_sbuf_printf(b, "</dt><dd>busy %.1f %% of its loop</dd>",
			       100.0 * lcore_busy_share(&s->lc[i]));
	}
	dd_count(b, "journal records waiting", "journal_lag_records", m->journal_lag_records);
	fg_sbuf_puts(b, "<dt>last snapshot</dt><dd>");
	if (m->snapshot_time) {
		fg_sbuf_printf(b, "#%llu, ", (unsigned long long)m->snapshot_seq);
		put_secs(b, (double)(m->now - m->snapshot_time));
		fg_sbuf_puts(b, " ago");
	} else {
		fg_sbuf_puts(b, "none yet");
	}
	fg_sbuf_puts(b, "</dd><dt>last expiry pass</dt><dd>");
	if (m->expiry_last_end) {
		put_secs(b, (double)(m->now - m->expiry_last_end));
		fg_sbuf_printf(b, " ago, %llu expired", (unsigned long long)m->expiry_last_expired);
	} else {
		fg_sbuf_puts(b, "none yet");
	}
	fg_sbuf_printf(b, "</dd><dt>verdict log</dt><dd>%s</dd>", m->vlog_on ? "on" : "off");
	if (m->cs_written)
		fg_sbuf_printf(b, "<dt>cluster</dt><dd data-k=\"cluster_answering\" data-v=\"%llu\">"
			       "%s, %llu nodes up</dd>", (unsigned long long)m->cs.answering,
			       m->cs.answering ? "answering" : "<b>not answering</b>: claims decided "
			       "locally", (unsigned long long)m->cs.nodes_up);
	fg_sbuf_puts(b, "</dl></section>\n");
}

void fg_statuspage_render(struct fg_region *r, const struct fg_metrics_state *m,
			  const struct fg_trend *t, const struct fg_page_opts *o,
			  struct fg_sbuf *out)
{
	struct sample s;

	if (!metrics_sample_take(r, &s)) {
		out->failed = true;
		return;
	}
	fg_sbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
	if (o->refresh)
		fg_sbuf_printf(out, "<meta http-equiv=\"refresh\" content=\"%u\">", o->refresh);
	fg_sbuf_puts(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		     "<title>floodgate");
	if (o->host) {
		fg_sbuf_puts(out, " on ");
		fg_html_escape(out, o->host, strlen(o->host), NAME_MAX_CHARS);
	}
	fg_sbuf_printf(out, "</title><style>%s</style></head><body>\n<header><h1>floodgate", css);
	if (o->host) {
		fg_sbuf_puts(out, " on ");
		fg_html_escape(out, o->host, strlen(o->host), NAME_MAX_CHARS);
	}
	fg_sbuf_printf(out, "</h1><p class=\"meta\">as of <time data-k=\"time\" data-v=\"%lld\">",
		       (long long)m->now);
	fg_sbuf_time(out, m->now);
	fg_sbuf_puts(out, "</time> &middot; floodctld up ");
	put_secs(out, (double)(m->now - m->started));
	fg_sbuf_puts(out, ", history from ");
	fg_html_puts(out, m->startup ? m->startup : "-");
	if (o->refresh)
		fg_sbuf_printf(out, " &middot; reloads every %u s", o->refresh);
	if (t)
		fg_sbuf_printf(out, " &middot; graphs: the last %u s, a point every %u s",
			       fg_trend_count(t) > 1 ? (fg_trend_count(t) - 1) * fg_trend_period_ms(t) / 1000
						: 0, fg_trend_period_ms(t) / 1000);
	fg_sbuf_puts(out, " &middot; <a href=\"/metrics\">/metrics</a> &middot; "
		     "<a href=\"/stats.json\">/stats.json</a></p></header>\n");
	sec_lookup(out, o);
	sec_alerts(out, m, &s, t);
	sec_tiles(out, m, &s, t);
	sec_peers(out, r, m, &s, t);
	sec_downstreams(out, m);
	fg_sbuf_puts(out, "<div class=\"cols\">");
	sec_history(out, &s);
	sec_queue(out, m);
	sec_levers(out, m);
	sec_clock(out, &s);
	sec_daemon(out, m, &s);
	fg_sbuf_puts(out, "</div>\n");
	sec_nic(out, &s);
	fg_sbuf_puts(out, "</body></html>\n");
	metrics_sample_free(&s);
}
