/* SPDX-License-Identifier: MIT */
/*
 * respq.c — a session's responses, strictly in command order.
 *
 * Most answers are known when their command is read (CHECK, MODE, ...);
 * an article's answer is known only when the sink says it is safe, or
 * when another transfer of the same ID has ended. RFC 4644 2.5 and
 * RFC 3977 3.5 (pipelining) want responses in command order, so a line
 * that is not known yet reserves its place (WAIT) and every line after it
 * waits in the queue; when it is filled, the ready prefix goes out.
 *
 * Layout: one byte ring for the text, one ring of entries (offset, length,
 * state). Each line is contiguous in the byte ring; when it does not fit
 * before the end, it starts again at offset 0 and the tail of the older
 * lap is left unused until that lap is sent (`wrapped` says the data is
 * in two laps: [read point, end of older lap) and [0, wr)).
 * Entries are numbered by a free-running sequence (a transfer keeps the
 * number of the entry it will fill; the entry cannot move, since nothing
 * after a WAIT entry leaves the queue before it).
 *
 * Flushing sends the longest run of ready lines that are adjacent in the
 * ring with one transport send(); a transport that takes less keeps the
 * rest here (`sent` counts what of the head line is out). A CLOSE entry is
 * the last line the session sends: the flush stops after it and reports it.
 */
#include <errno.h>
#include <stdlib.h>

#include "nntp_int.h"

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int fg_respq_init(struct fg_respq *q, uint32_t size, uint32_t entries)
{
	q->size = size;
	q->cap = pow2_at_least(entries ? entries : 1);
	q->buf = malloc(size);
	q->ent = calloc(q->cap, sizeof(*q->ent));
	q->wr = 0;
	q->wrapped = false;
	q->head = q->tail = 0;
	q->sent = 0;
	q->n_wait = 0;
	if (!q->buf || !q->ent) {
		fg_respq_free(q);
		return -ENOMEM;
	}
	return 0;
}

void fg_respq_free(struct fg_respq *q)
{
	free(q->buf);
	free(q->ent);
	q->buf = NULL;
	q->ent = NULL;
}

static struct fg_respq_ent *ent_at(const struct fg_respq *q, uint32_t seq)
{
	return &q->ent[seq & (q->cap - 1)];
}

/* Where a line of `len` octets would go; false when the ring is too full. */
static bool place(const struct fg_respq *q, uint32_t len, uint32_t *off, bool *wraps)
{
	uint32_t rd;

	*wraps = false;
	if (q->head == q->tail) {
		*off = 0;
		return len <= q->size;
	}
	rd = ent_at(q, q->head)->off;
	if (!q->wrapped) {
		/* live data in [rd, wr): free at the end, then before rd */
		if (q->wr + len <= q->size) {
			*off = q->wr;
			return true;
		}
		*off = 0;
		*wraps = true;
		return len <= rd;
	}
	/* wrapped: live data from rd to the end of the older lap, and [0, wr) */
	*off = q->wr;
	return q->wr + len <= rd;
}

bool fg_respq_room(const struct fg_respq *q, uint32_t len)
{
	uint32_t off;
	bool wraps;

	return q->tail - q->head < q->cap && place(q, len, &off, &wraps);
}

char *fg_respq_push(struct fg_respq *q, uint32_t len, enum fg_respq_state st, uint32_t *seq)
{
	struct fg_respq_ent *e;
	uint32_t off;
	bool wraps;

	if (q->tail - q->head >= q->cap || !place(q, len, &off, &wraps))
		return NULL;
	/* a lap may end exactly at the end of the buffer: a flag, not an offset */
	if (q->head == q->tail)
		q->wrapped = false;
	else if (wraps)
		q->wrapped = true;
	e = ent_at(q, q->tail);
	e->off = off;
	e->len = len;
	e->state = (uint8_t)st;
	q->wr = off + len;
	if (st == FG_RQ_WAIT)
		q->n_wait++;
	*seq = q->tail++;
	return (char *)q->buf + off;
}

char *fg_respq_slot(struct fg_respq *q, uint32_t seq, uint32_t *cap)
{
	struct fg_respq_ent *e = ent_at(q, seq);

	FG_ASSERT(seq - q->head < q->tail - q->head && e->state == FG_RQ_WAIT);
	*cap = e->len;
	return (char *)q->buf + e->off;
}

void fg_respq_fill(struct fg_respq *q, uint32_t seq, uint32_t len, enum fg_respq_state st)
{
	struct fg_respq_ent *e = ent_at(q, seq);

	FG_ASSERT(e->state == FG_RQ_WAIT && len <= e->len && st != FG_RQ_WAIT);
	e->len = len;
	e->state = (uint8_t)st;
	q->n_wait--;
}

static void pop(struct fg_respq *q)
{
	q->head++;
	q->sent = 0;
	if (q->head == q->tail) {
		q->wr = 0;
		q->wrapped = false;
		return;
	}
	/* the older lap is gone once the head is in the newer one (older
	 * entries lie at or after the read point, which is at or after wr) */
	if (q->wrapped && ent_at(q, q->head)->off < q->wr)
		q->wrapped = false;
}

/* The ready run starting at the head: [start, end) in buf. */
static uint32_t run_end(const struct fg_respq *q, uint32_t *start)
{
	const struct fg_respq_ent *e = ent_at(q, q->head);
	uint32_t end = e->off + e->len;

	*start = e->off + q->sent;
	if (e->state == FG_RQ_CLOSE)
		return end;
	for (uint32_t s = q->head + 1; s != q->tail; s++) {
		const struct fg_respq_ent *n = ent_at(q, s);

		if (n->state == FG_RQ_WAIT || n->off != end)
			break;
		end += n->len;
		if (n->state == FG_RQ_CLOSE)
			break;
	}
	return end;
}

int64_t fg_respq_flush(struct fg_respq *q, const struct fg_nntp_session_transport *ops, void *t,
		       bool *closing)
{
	int64_t total = 0;

	*closing = false;
	while (q->head != q->tail && ent_at(q, q->head)->state != FG_RQ_WAIT) {
		uint32_t start, end = run_end(q, &start), left;
		int rc = ops->send(t, q->buf + start, end - start);

		if (rc < 0)
			return rc;
		total += rc;
		left = (uint32_t)rc;
		while (left > 0) {
			const struct fg_respq_ent *e = ent_at(q, q->head);
			uint32_t rest = e->len - q->sent;

			if (left < rest) {
				q->sent += left;
				break;
			}
			left -= rest;
			if (e->state == FG_RQ_CLOSE)
				*closing = true;
			pop(q);
		}
		if ((uint32_t)rc < end - start || *closing)
			break;
	}
	return total;
}

uint32_t fg_respq_entries(const struct fg_respq *q)
{
	return q->tail - q->head;
}

uint32_t fg_respq_unsent(const struct fg_respq *q)
{
	uint32_t n = 0;

	for (uint32_t s = q->head; s != q->tail; s++)
		n += ent_at(q, s)->len;
	return n - q->sent;
}

void fg_respq_clear(struct fg_respq *q)
{
	q->head = q->tail;
	q->sent = 0;
	q->wr = 0;
	q->wrapped = false;
	q->n_wait = 0;
}
