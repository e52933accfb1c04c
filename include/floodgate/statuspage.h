/* SPDX-License-Identifier: MIT */
/*
 * statuspage.h — the status page floodctld serves at `/` of its stats
 * endpoint: one HTML page, no script, refreshing itself, that shows what
 * `floodctl top`, `peers`, `downstreams` and `status` show, with small
 * graphs of the last minutes drawn from a ring of recent samples (the
 * trend) that floodctld keeps. docs/operations.md "Watching it" shows it.
 *
 * Three parts, each usable alone:
 *   html    escaping any text into HTML (element content and quoted
 *           attribute values alike), and an inline SVG sparkline;
 *   trend   the ring: a fixed number of rows, each the cumulative counters
 *           and the gauges the graphs need, taken every `period`;
 *   page    the render: a sample of the region (the one /stats.json
 *           renders from) plus floodctld's state plus the trend.
 *
 * Every figure the page shows is in an element with data-k (the figure's
 * key) and, where the text is rounded or worded, data-v (its exact value);
 * a peer's row carries data-peer, a downstream's data-downstream, a port's
 * data-port, so a program can read the page (tests/integration/
 * 90_status_page.py compares it with /stats.json). Every string that comes
 * from outside (peer and port names, reasons, Message-IDs) goes through
 * fg_html_escape. A form at the top looks a Message-ID up (GET /?id=...):
 * the page then shows what `floodctl lookup` says of it.
 */
#ifndef FLOODGATE_STATUSPAGE_H
#define FLOODGATE_STATUSPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/metrics.h"
#include "floodgate/region.h"
#include "floodgate/sbuf.h"

/* ---- html ---- */

/*
 * Append s[0..n) as HTML text safe both as element content and inside a
 * double- or single-quoted attribute value: & < > " ' become character
 * references; a byte sequence that is not UTF-8 (overlong, a surrogate,
 * past U+10FFFF, cut short), a C0 control other than tab and newline, and
 * DEL become U+FFFD. `max` > 0 keeps at most that many characters and
 * ends a longer text with an ellipsis (U+2026); 0 keeps all.
 */
void fg_html_escape(struct fg_sbuf *b, const char *s, size_t n, size_t max);
/* The same of a NUL-terminated string, whole. */
void fg_html_puts(struct fg_sbuf *b, const char *s);

/*
 * A sparkline: an inline <svg> of `w` x `h` pixels drawing v[0..n) left
 * to right (oldest first), scaled from 0 to the largest value, with
 * `label` (escaped) as its title for screen readers and tooltips. NaN
 * values leave a gap. Fewer than two values, or a frame smaller than 3
 * pixels either way, draw an empty frame.
 */
void fg_html_spark(struct fg_sbuf *b, const double *v, unsigned n, unsigned w, unsigned h,
		   const char *label);

/*
 * The value of `key` in a query string of application/x-www-form-urlencoded
 * pairs (the page's lookup form; WHATWG URL, "application/x-www-form-
 * urlencoded parsing"): pairs apart at '&', name and value at the first
 * '=', '+' a space, %XX a byte, a '%' not followed by two hex digits kept
 * as it is. The first pair named `key` counts. Returns the value's length,
 * written NUL-terminated into out; -ENOENT no such pair; -ENOSPC the value
 * does not fit in cap - 1 octets; -EINVAL it holds a NUL.
 */
int fg_html_form_value(const char *query, size_t n, const char *key, char *out, size_t cap);

/* ---- trend ---- */

/* What a row keeps: cumulative counters (rates come from two rows) and
 * gauges, site-wide and, for offers, per region peer. */
struct fg_trend_row {
	uint64_t mono_ns;		/* when taken (CLOCK_MONOTONIC) */
	fg_time_t time;
	uint64_t offers, accepted, refused;	/* nntp_offers, nntp_articles_accepted, rejected */
	uint64_t nic_drops;		/* rx_missed + rx_nombuf + rx_errors + tx_dropped, all ports */
	uint64_t history_entries;
	uint64_t queue_lag;		/* records, summed over the downstreams */
	unsigned npeers;
	uint64_t peer_offers[FG_REGION_PEERS];
};

struct fg_trend;

/* A ring of `rows` rows (2..1024), one taken every `period_ms`; NULL on
 * no memory or bad arguments. */
struct fg_trend *fg_trend_create(unsigned rows, unsigned period_ms);
void fg_trend_free(struct fg_trend *t);
/* Has `period_ms` passed since the last row the tick took (or none was)? */
bool fg_trend_due(const struct fg_trend *t, uint64_t mono_ns);
/* Take a row of the region and `m` when it is due: true when it took one. */
bool fg_trend_tick(struct fg_trend *t, struct fg_region *r, const struct fg_metrics_state *m,
		   uint64_t mono_ns);
/* Append a row as it is (tests; the tick's own way in). */
void fg_trend_push(struct fg_trend *t, const struct fg_trend_row *row);
unsigned fg_trend_count(const struct fg_trend *t);
unsigned fg_trend_period_ms(const struct fg_trend *t);
/* Row i, 0 the oldest kept; NULL past the count. */
const struct fg_trend_row *fg_trend_row(const struct fg_trend *t, unsigned i);

/* ---- page ---- */

struct fg_page_opts {
	unsigned refresh;		/* seconds between the page's own reloads; 0: none */
	const char *host;		/* shown in the title (escaped); NULL: none */
	/* the lookup form: the Message-ID asked (NULL: none) and what
	 * `floodctl lookup` says of it, plain text; both escaped */
	const char *lookup_id;
	const char *lookup_text;
};

/* Append the page. `t` may be NULL or empty (no graphs, rates "-").
 * out->failed on no memory. */
void fg_statuspage_render(struct fg_region *r, const struct fg_metrics_state *m,
			  const struct fg_trend *t, const struct fg_page_opts *o,
			  struct fg_sbuf *out);

#endif /* FLOODGATE_STATUSPAGE_H */
