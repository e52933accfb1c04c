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
 * Propagation only ever adds delay, so on a sane clock some articles
 * arrive fresh, whatever else a feed carries:
 *  - local clock ahead by X: every d >= X. The clock looks ahead when not
 *    one d of the window is within the limit. One fresh article is enough
 *    to say it is not, so a peer replaying a backlog of hours-old articles
 *    (other traffic goes on arriving fresh) or a feed of ages spread over
 *    days (feedgen's model) raises no alarm;
 *  - local clock behind by X: fresh articles show d near -X. The clock
 *    looks behind when most of the window (more than half) has d below
 *    -limit: some injecting agents date articles ahead of us, legitimately
 *    up to the future margin, and a few of them must not raise it.
 * The window is FG_CLOCK_WINDOW samples, no judgement before
 * FG_CLOCK_MIN_SAMPLES (a handful of old articles at start proves
 * nothing), and four counters of the window (d <= limit, d <= 3/4 limit,
 * d < -limit, d < -3/4 limit) are kept as samples enter and leave, so a
 * sample costs O(1). The alarm clears when a sample is within 3/4 of the
 * limit again and at most half are below -3/4 of it (a margin, so it does
 * not flap). The offset estimate (the window's smallest d, or its median
 * when behind) is worked out only when the state turns.
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

static void count(struct fg_nntp_clock *c, int64_t d, int by)
{
	int64_t q = c->limit - c->limit / 4;

	c->fresh += d <= c->limit ? by : 0;
	c->fresh_q += d <= q ? by : 0;
	c->behind += d < -c->limit ? by : 0;
	c->behind_q += d < -q ? by : 0;
}

/* What the window says the offset is: its smallest d, or its median. */
static int64_t estimate(struct fg_nntp_clock *c, bool behind)
{
	int64_t *v = c->scratch, low = c->win[0];

	if (!behind) {
		for (unsigned i = 1; i < c->n; i++)
			low = FG_MIN(low, c->win[i]);
		return low;
	}
	memcpy(v, c->win, c->n * sizeof(v[0]));
	return select_kth(v, (int)c->n, (int)c->n / 2);
}

int fg_nntp_clock_sample(struct fg_nntp_clock *c, int64_t delay)
{
	bool ahead, behind;

	if (c->n == FG_CLOCK_WINDOW)
		count(c, c->win[c->pos], -1);
	else
		c->n++;
	c->win[c->pos] = delay;
	c->pos = (c->pos + 1) % FG_CLOCK_WINDOW;
	count(c, delay, 1);
	if (c->limit <= 0 || c->n < FG_CLOCK_MIN_SAMPLES)
		return 0;
	if (!c->suspect) {
		ahead = c->fresh == 0;
		behind = 2 * c->behind > c->n;
		if (!ahead && !behind)
			return 0;
		c->suspect = true;
		c->offset = estimate(c, behind);
		return 1;
	}
	if (c->fresh_q == 0 || 2 * c->behind_q > c->n)
		return 0;
	c->suspect = false;
	c->offset = 0;
	return -1;
}
