/* SPDX-License-Identifier: MIT */
/*
 * qbacklog.c — per-downstream backlog limits: parking, the backlog kept on
 * disk for a parked consumer, and what happens at its cap (qwriter.h has
 * the contract; docs/relay.md "Backlog limits and parking" the operator's
 * view).
 *
 * One pass, on the writer thread, at each housekeeping tick:
 *   1. each consumer's lag from its durable cursor: records, octets, and
 *      the age of the record at the cursor (its arrival, read once per
 *      cursor position);
 *   2. park a consumer past any of its limits; unpark one under 90 % of
 *      every limit (hysteresis, so a downstream at the edge does not flap);
 *   3. the shared low mark: the lowest cursor of the consumers not parked
 *      (all of them when none is, or when every one is: then the shared
 *      limits defer the peers as they always did). Sealed segments that
 *      end at or before it are kept only for parked consumers: their
 *      octets do not count against queue-limit, nor their age against
 *      queue-max-age (qwriter.c's refusal reads shared_low, parked_bytes);
 *   4. per parked consumer, its backlog on disk: the octets of such
 *      segments from its cursor on. Past its cap: `drop` asks that its
 *      oldest ones be given up (drop_to: the end of the last of them; the
 *      relay applies it, logging and counting each of its own records it
 *      never delivered, and acknowledges the new cursor); `defer` sets
 *      full_name, and the refusal defers the peers until it is under 90 %
 *      of its cap.
 * Deletion is unchanged: a segment goes once every cursor is past it, so
 * a parked consumer finds its backlog, in order, when it returns.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "queue_int.h"

#define UNPARK_PCT 90		/* unpark (and unfill) under this share of a limit */

int fg_queue_consumer_backlog(struct fg_queue *q, unsigned idx, const struct fg_queue_backlog *b)
{
	if (q->started)
		return -EBUSY;
	if (idx >= q->n_consumers)
		return -ENOENT;
	q->consumer[idx].bl = *b;
	return 0;
}

void fg_queue_consumer_drop_to(struct fg_queue *q, unsigned idx, struct fg_queue_cursor *out)
{
	FG_ASSERT(idx < q->n_consumers);
	pthread_mutex_lock(&q->lock);
	*out = q->consumer[idx].st.drop_to;
	pthread_mutex_unlock(&q->lock);
}

void fg_queue_consumer_state(struct fg_queue *q, unsigned idx,
			     struct fg_queue_consumer_state *out)
{
	FG_ASSERT(idx < q->n_consumers);
	pthread_mutex_lock(&q->lock);
	*out = q->consumer[idx].st;
	pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------------ lag */

static void lag(struct fg_queue *q, struct qconsumer *c, const struct fg_queue_cursor *at,
		const struct fg_queue_cursor *end, fg_time_t now, struct fg_queue_consumer_state *st)
{
	st->lag_records = end->recno > at->recno ? end->recno - at->recno : 0;
	st->lag_bytes = end->pos > at->pos ? end->pos - at->pos : 0;
	st->lag_seconds = 0;
	if (at->pos >= end->pos)
		return;
	if (c->age_pos != at->pos || !c->age_arrival) {
		c->age_pos = at->pos;
		c->age_arrival = 0;
		qseg_read_arrival(q, at->pos, &c->age_arrival);
	}
	if (c->age_arrival && now > c->age_arrival)
		st->lag_seconds = now - c->age_arrival;
}

static bool over(uint64_t v, uint64_t limit)
{
	return limit && v > limit;
}

static bool under(uint64_t v, uint64_t limit)
{
	return !limit || v < limit / 100 * UNPARK_PCT + (limit % 100) * UNPARK_PCT / 100;
}

static void judge(struct qconsumer *c, struct fg_queue_consumer_state *st)
{
	const struct fg_queue_backlog *b = &c->bl;
	uint64_t age = st->lag_seconds > 0 ? (uint64_t)st->lag_seconds : 0;

	if (!st->parked && (over(st->lag_records, b->articles) || over(st->lag_bytes, b->bytes) ||
			    over(age, (uint64_t)b->age))) {
		st->parked = true;
		st->parks++;
		FG_LOG_WARN(QCOMP, "downstream %s parked: %llu articles, %llu octets, %llds behind "
			    "(past its backlog limit): the others go on, its backlog is kept for it",
			    c->name, (unsigned long long)st->lag_records,
			    (unsigned long long)st->lag_bytes, (long long)st->lag_seconds);
	} else if (st->parked && under(st->lag_records, b->articles) &&
		   under(st->lag_bytes, b->bytes) && under(age, (uint64_t)b->age)) {
		st->parked = false;
		st->full = false;
		FG_LOG_NOTICE(QCOMP, "downstream %s caught up (%llu articles behind): no longer parked",
			      c->name, (unsigned long long)st->lag_records);
	}
}

/* ------------------------------------------------------------ held segments */

/* Octets of sealed segments that end in (from, to]. */
static uint64_t held(const struct fg_queue *q, uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	for (size_t i = 0; i < q->nseg; i++) {
		const struct qseg *s = &q->segs[i];

		if (s->sealed && s->end > from && s->end <= to)
			n += s->file_bytes;
	}
	return n;
}

/* Ask, for consumer c at *at, that its oldest segment kept only for
 * parked ones be given up: drop_to becomes that segment's end. The relay
 * applies it (fg_queue_consumer_drop_to): it alone knows what it has
 * sent, so it logs and counts exactly what it never delivered. */
static void drop_oldest(struct fg_queue *q, struct qconsumer *c, struct fg_queue_cursor *at,
			struct fg_queue_consumer_state *st)
{
	const struct qseg *s = NULL;

	for (size_t i = 0; i < q->nseg && !s; i++)
		if (q->segs[i].sealed && q->segs[i].end > at->pos && q->segs[i].end <= q->shared_low)
			s = &q->segs[i];
	if (!s)
		return;
	*at = (struct fg_queue_cursor){ s->end, s->next_recno };
	st->drop_to = *at;
	(void)c;
}

/* Step 4 for one parked consumer at *at (its acknowledged cursor). */
static void cap(struct fg_queue *q, struct qconsumer *c, struct fg_queue_cursor *at,
		struct fg_queue_consumer_state *st)
{
	const struct fg_queue_backlog *b = &c->bl;

	st->backlog_bytes = held(q, at->pos, q->shared_low);
	if (!b->disk)
		return;
	if (b->drop) {
		while (st->backlog_bytes > b->disk) {
			uint64_t before = at->pos;

			drop_oldest(q, c, at, st);
			if (at->pos == before)
				break;
			st->backlog_bytes = held(q, at->pos, q->shared_low);
		}
		return;
	}
	if (!st->full && st->backlog_bytes > b->disk) {
		st->full = true;
		qcount(q, FG_CTR_QUEUE_BACKLOG_FULL, 1);
		FG_LOG_WARN(QCOMP, "downstream %s: backlog at its cap (%llu octets kept for it, "
			    "backlog-full defer): new articles are deferred", c->name,
			    (unsigned long long)st->backlog_bytes);
	} else if (st->full && under(st->backlog_bytes, b->disk)) {
		st->full = false;
		FG_LOG_NOTICE(QCOMP, "downstream %s: backlog under its cap again", c->name);
	}
}

/* ------------------------------------------------------------ the pass */

void qbacklog_pass(struct fg_queue *q)
{
	struct fg_queue_cursor dur[FG_CONFIG_MAX_DOWNSTREAMS], ack[FG_CONFIG_MAX_DOWNSTREAMS], end;
	struct fg_queue_consumer_state st[FG_CONFIG_MAX_DOWNSTREAMS];
	fg_time_t now = time(NULL);
	unsigned parked = 0;
	uint64_t low = UINT64_MAX;

	pthread_mutex_lock(&q->lock);
	end = q->durable;
	for (unsigned i = 0; i < q->n_consumers; i++) {
		dur[i] = q->consumer[i].durable;
		ack[i] = q->consumer[i].acked;
		st[i] = q->consumer[i].st;
	}
	pthread_mutex_unlock(&q->lock);

	for (unsigned i = 0; i < q->n_consumers; i++) {
		lag(q, &q->consumer[i], &dur[i], &end, now, &st[i]);
		judge(&q->consumer[i], &st[i]);
		parked += st[i].parked;
	}
	/* parking counts only while someone is fed */
	for (unsigned i = 0; i < q->n_consumers; i++)
		if (!st[i].parked || parked == q->n_consumers)
			low = FG_MIN(low, dur[i].pos);
	q->shared_low = low;
	q->parked_bytes = 0;
	q->full_name = NULL;
	if (parked && parked < q->n_consumers) {
		q->parked_bytes = held(q, 0, low);
		for (unsigned i = 0; i < q->n_consumers; i++) {
			struct fg_queue_cursor at = ack[i].pos > dur[i].pos ? ack[i] : dur[i];

			/* a drop asked for and not yet applied counts as done */
			if (st[i].drop_to.pos > at.pos)
				at = st[i].drop_to;

			if (!st[i].parked)
				continue;
			cap(q, &q->consumer[i], &at, &st[i]);
			if (st[i].full && !q->full_name)
				q->full_name = q->consumer[i].name;
		}
	} else {
		for (unsigned i = 0; i < q->n_consumers; i++) {
			st[i].backlog_bytes = 0;
			st[i].full = false;
		}
	}
	pthread_mutex_lock(&q->lock);
	for (unsigned i = 0; i < q->n_consumers; i++)
		q->consumer[i].st = st[i];
	pthread_mutex_unlock(&q->lock);
}
