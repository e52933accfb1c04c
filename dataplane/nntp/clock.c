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
 * articles arrive with d near zero, whatever else a feed carries:
 *  - local clock ahead by X: every d >= X. The smallest d of the recent
 *    window says so — and one fresh article is enough to say it is not,
 *    so a peer replaying a backlog of hours-old articles (all other
 *    traffic goes on arriving fresh, or a single article of its own is
 *    fresh) does not make the filter defer everyone;
 *  - local clock behind by X: fresh articles show d near -X. The median is
 *    the measure here, because some injecting agents date articles ahead
 *    of us, legitimately up to the future margin (a minimum would see them).
 * Suspect when the minimum exceeds +limit or the median is below -limit;
 * sane again when both are back within 3/4 of the limit (a margin, so the
 * alarm does not flap). No judgement before FG_CLOCK_MIN_SAMPLES samples;
 * a judgement every FG_CLOCK_EVAL_EVERY samples: a minimum and a
 * quickselect over the window, a few ns per article amortised.
 */
#include <string.h>

#include "nntp_int.h"

void fg_nntp_clock_init(struct fg_nntp_clock *c, int64_t limit)
{
	memset(c, 0, sizeof(*c));
	c->limit = limit;
}

/* The k-th smallest of v[0, n), v reordered: quickselect with a three-way
 * partition, so runs of equal samples (same second) cost nothing extra. */
static int64_t select_kth(int64_t *v, int n, int k)
{
	int lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2], t;
		int lt = lo, i = lo, gt = hi;

		while (i <= gt) {
			if (v[i] < pivot) {
				t = v[lt], v[lt++] = v[i], v[i++] = t;
			} else if (v[i] > pivot) {
				t = v[gt], v[gt--] = v[i], v[i] = t;
			} else {
				i++;
			}
		}
		/* [lo, lt) < pivot, [lt, gt] == pivot, (gt, hi] > pivot */
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return pivot;
	}
	return v[k];
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
	low = c->win[0];
	for (unsigned i = 1; i < c->n; i++)
		low = FG_MIN(low, c->win[i]);
	memcpy(v, c->win, c->n * sizeof(v[0]));
	median = select_kth(v, (int)c->n, (int)c->n / 2);
	c->offset = low > 0 ? low : median < 0 ? median : 0;
	enter = c->limit;
	leave = c->limit - c->limit / 4;
	if (!c->suspect && (low > enter || median < -enter))
		c->suspect = true;
	else if (c->suspect && low <= leave && median >= -leave)
		c->suspect = false;
	return c->suspect == was ? 0 : c->suspect ? 1 : -1;
}
