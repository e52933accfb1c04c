/* SPDX-License-Identifier: MIT */
/*
 * clock.c — does the local clock look right? (RFC-NOTES, "What the filter
 * is and is not"; seed 002.)
 *
 * Every date decision compares an article's date with `now`. If the local
 * clock is off by hours, the filter would reject — and remember — a whole
 * feed as too old or too new. The engine therefore keeps a view of
 * d = arrival - Injection-Date over the last FG_CLOCK_WINDOW articles that
 * carry one (Injection-Date is stamped by the injecting server, close to
 * when the article entered the network; Date says when the author's
 * software finished it, which may be days earlier and proves nothing about
 * clocks).
 *
 * Propagation only ever adds delay, so on a sane clock the freshest
 * articles arrive with d near zero, whatever backlog a peer is also
 * replaying:
 *  - local clock ahead by X: every d >= X; the low decile of d says so
 *    even while a catch-up feed makes the median hours;
 *  - local clock behind by X: fresh articles show d near -X; most of them
 *    do, so the median is the measure (a few future-dated injectors do
 *    not move it).
 * Suspect when the 10th percentile exceeds +limit or the median is below
 * -limit; sane again when both are back within 3/4 of the limit (a margin,
 * so the alarm does not flap at the edge). No judgement before
 * FG_CLOCK_MIN_SAMPLES samples; a judgement every FG_CLOCK_EVAL_EVERY
 * samples (a sort of 64 values, amortised to a few ns per article).
 */
#include <string.h>

#include "nntp_int.h"

void fg_nntp_clock_init(struct fg_nntp_clock *c, int64_t limit)
{
	memset(c, 0, sizeof(*c));
	c->limit = limit;
}

static void sort(int64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		int64_t x = v[i];
		unsigned j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

int fg_nntp_clock_sample(struct fg_nntp_clock *c, int64_t delay)
{
	int64_t v[FG_CLOCK_WINDOW], low, median, enter, leave;
	bool was = c->suspect;

	c->win[c->pos] = delay;
	c->pos = (c->pos + 1) % FG_CLOCK_WINDOW;
	if (c->n < FG_CLOCK_WINDOW)
		c->n++;
	if (c->limit <= 0 || c->n < FG_CLOCK_MIN_SAMPLES || ++c->since_eval < FG_CLOCK_EVAL_EVERY)
		return 0;
	c->since_eval = 0;
	memcpy(v, c->win, c->n * sizeof(v[0]));
	sort(v, c->n);
	low = v[c->n / 10];
	median = v[c->n / 2];
	c->offset = low > 0 ? low : median < 0 ? median : 0;
	enter = c->limit;
	leave = c->limit - c->limit / 4;
	if (!c->suspect && (low > enter || median < -enter))
		c->suspect = true;
	else if (c->suspect && low <= leave && median >= -leave)
		c->suspect = false;
	return c->suspect == was ? 0 : c->suspect ? 1 : -1;
}
