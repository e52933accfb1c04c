/* SPDX-License-Identifier: MIT */
/*
 * trend.c — the ring of recent samples the status page draws its graphs
 * and rates from (statuspage.h).
 *
 * Fixed size, allocated once: `rows` rows of struct fg_trend_row (about
 * 2 KiB each, most of it the per-peer offers), the oldest overwritten.
 * floodctld keeps one, in its HTTP thread, which both ticks and renders
 * it: no lock. A row holds cumulative counters, so a rate is the
 * difference of two rows over their time apart, and a counter that went
 * back (the region rebuilt) gives no rate for that step, never a
 * negative one.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/statuspage.h"
#include "metrics_int.h"

struct fg_trend {
	unsigned cap, n, head;		/* head: where the next row goes */
	unsigned period_ms;
	bool any;			/* a row was taken by tick */
	uint64_t last_ns;
	struct fg_trend_row row[];
};

struct fg_trend *fg_trend_create(unsigned rows, unsigned period_ms)
{
	struct fg_trend *t;

	if (rows < 2 || rows > 1024 || period_ms == 0)
		return NULL;
	t = calloc(1, sizeof(*t) + (size_t)rows * sizeof(t->row[0]));
	if (!t)
		return NULL;
	t->cap = rows;
	t->period_ms = period_ms;
	return t;
}

void fg_trend_free(struct fg_trend *t)
{
	free(t);
}

void fg_trend_push(struct fg_trend *t, const struct fg_trend_row *row)
{
	t->row[t->head] = *row;
	t->head = (t->head + 1) % t->cap;
	if (t->n < t->cap)
		t->n++;
}

unsigned fg_trend_count(const struct fg_trend *t)
{
	return t ? t->n : 0;
}

unsigned fg_trend_period_ms(const struct fg_trend *t)
{
	return t->period_ms;
}

const struct fg_trend_row *fg_trend_row(const struct fg_trend *t, unsigned i)
{
	if (!t || i >= t->n)
		return NULL;
	return &t->row[(t->head + t->cap - t->n + i) % t->cap];
}

static uint64_t nic_drops(const struct sample *s)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < s->n_nic; k++)
		for (unsigned p = 0; p < s->nic[k].n_ports; p++) {
			const uint64_t *v = s->nic[k].port[p].v;

			n += v[FG_NIC_RX_MISSED] + v[FG_NIC_RX_NOMBUF] + v[FG_NIC_RX_ERRORS] +
			     v[FG_NIC_TX_DROPPED];
		}
	return n;
}

bool fg_trend_due(const struct fg_trend *t, uint64_t mono_ns)
{
	return !t->any || mono_ns - t->last_ns >= (uint64_t)t->period_ms * 1000000u;
}

bool fg_trend_tick(struct fg_trend *t, struct fg_region *r, const struct fg_metrics_state *m,
		   uint64_t mono_ns)
{
	struct fg_trend_row *row;
	struct sample s;

	if (!fg_trend_due(t, mono_ns))
		return false;
	if (!metrics_sample_take(r, &s))
		return false;
	t->any = true;
	t->last_ns = mono_ns;
	row = &t->row[t->head];
	memset(row, 0, sizeof(*row));
	row->mono_ns = mono_ns;
	row->time = m->now;
	row->offers = s.st->total.ctr[FG_CTR_NNTP_OFFERS];
	row->accepted = s.st->total.ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED];
	for (unsigned x = 1; x < FG_REASON__COUNT; x++)
		row->refused += s.st->total.rejected[x];
	row->nic_drops = nic_drops(&s);
	row->history_entries = s.hs.entries;
	for (unsigned i = 0; m->queue.present && i < m->queue.n_consumers; i++)
		row->queue_lag += m->queue.consumer[i].lag_records;
	row->npeers = FG_MIN(s.npeers, (unsigned)FG_REGION_PEERS);
	for (unsigned p = 0; p < row->npeers; p++)
		row->peer_offers[p] = s.st->peer[p].ctr[FG_CTR_NNTP_OFFERS];
	metrics_sample_free(&s);
	t->head = (t->head + 1) % t->cap;
	if (t->n < t->cap)
		t->n++;
	return true;
}
