/* SPDX-License-Identifier: MIT */
/*
 * qsink.c — the durable queue as the session engine's outbound sink
 * (sink.h): one handle per engine thread, and the rings that connect it to
 * the writer thread (queue_int.h explains who owns a slot when).
 *
 * An article arrives in pieces. A holdable piece is not copied: the handle
 * keeps an iovec onto the transport's buffer and returns FG_SINK_HOLD (the
 * engine keeps the buffer, and it counts against the peer's window, until
 * done() or discard()); the writer later writes it to disk straight from
 * there. Other pieces (the engine's own small copies) are copied into
 * 16 KiB chunks. Both lists come from per-handle free lists, so a steady
 * feed allocates nothing.
 *
 * commit() pushes the slot onto the `commits` ring and wakes the writer if
 * it sleeps; poll() pops the `done` ring, frees the slot's pieces, calls
 * done() and only then counts the completion as delivered (the journal
 * gate relies on that order: the engine's history record for the article
 * is appended inside done()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"
#include "queue_int.h"

#define FREE_BLOCKS_KEEP 4096u
#define FREE_COPIES_KEEP 256u

/* ------------------------------------------------------------ rings */

int qring_init(struct qring *r, uint32_t min_cap)
{
	uint32_t cap = 1;

	while (cap < min_cap)
		cap <<= 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->mask = cap - 1;
	r->slot = calloc(cap, sizeof(*r->slot));
	return r->slot ? 0 : -ENOMEM;
}

void qring_fini(struct qring *r)
{
	free(r->slot);
	r->slot = NULL;
}

void qring_push(struct qring *r, uint32_t v)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	FG_ASSERT(h - atomic_load_explicit(&r->tail, memory_order_acquire) <= r->mask);
	r->slot[h & r->mask] = v;
	/* seq_cst, not release: the wake-up protocol (fg_queue_kick) needs it */
	atomic_store_explicit(&r->head, h + 1, memory_order_seq_cst);
}

bool qring_pop(struct qring *r, uint32_t *v)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t == atomic_load_explicit(&r->head, memory_order_acquire))
		return false;
	*v = r->slot[t & r->mask];
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

bool qring_empty(struct qring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) ==
	       atomic_load_explicit(&r->head, memory_order_seq_cst);
}

/* ------------------------------------------------------------ handles */

struct fg_queue_sink *fg_queue_sink_create(struct fg_queue *q, const struct fg_queue_sink_params *p)
{
	struct fg_queue_sink *s = calloc(1, sizeof(*s));
	unsigned n;

	if (!s)
		return NULL;
	s->q = q;
	s->p = *p;
	n = s->p.max_articles = p->max_articles ? p->max_articles : Q_MAX_ARTICLES_DEFAULT;
	if (!s->p.max_held)
		s->p.max_held = Q_MAX_HELD_DEFAULT;
	s->arts = calloc(n, sizeof(*s->arts));
	if (!s->arts || qring_init(&s->commits, n) != 0 || qring_init(&s->done, n) != 0)
		goto out_free;
	for (unsigned i = 0; i < n; i++)
		s->arts[i].next_free = i + 1 < n ? i + 1 : Q_NONE;
	s->free_head = 0;
	pthread_mutex_lock(&q->slots_lock);
	for (s->slot = 0; s->slot < q->p.max_sinks; s->slot++)
		if (!atomic_load(&q->slots[s->slot].sink))
			break;
	if (s->slot < q->p.max_sinks)
		atomic_store_explicit(&q->slots[s->slot].sink, s, memory_order_release);
	pthread_mutex_unlock(&q->slots_lock);
	if (s->slot == q->p.max_sinks) {
		FG_LOG_ERR(QCOMP, "no free sink slot (max %u)", q->p.max_sinks);
		goto out_free;
	}
	return s;
out_free:
	qring_fini(&s->commits);
	qring_fini(&s->done);
	free(s->arts);
	free(s);
	return NULL;
}

static void free_lists(struct fg_queue_sink *s)
{
	while (s->free_blocks) {
		struct qs_block *b = s->free_blocks;

		s->free_blocks = b->next;
		free(b);
	}
	while (s->free_copies) {
		struct qs_copy *c = s->free_copies;

		s->free_copies = c->next;
		free(c);
	}
}

static void art_release(struct fg_queue_sink *s, struct qs_art *a);

void fg_queue_sink_destroy(struct fg_queue_sink *s)
{
	if (!s)
		return;
	FG_ASSERT(s->busy == 0);
	/* once this returns the writer holds no pointer to the handle */
	pthread_mutex_lock(&s->q->slots_lock);
	atomic_store(&s->q->slots[s->slot].sink, NULL);
	pthread_mutex_unlock(&s->q->slots_lock);
	free_lists(s);
	qring_fini(&s->commits);
	qring_fini(&s->done);
	free(s->arts);
	free(s);
}

unsigned fg_queue_sink_busy(const struct fg_queue_sink *s)
{
	return s->busy;
}

uint64_t fg_queue_sink_held(const struct fg_queue_sink *s)
{
	return s->held;
}

/* Give an article's pieces back to the free lists (bounded), the slot to
 * the slot list. */
static void art_release(struct fg_queue_sink *s, struct qs_art *a)
{
	while (a->blocks) {
		struct qs_block *b = a->blocks;

		a->blocks = b->next;
		if (s->n_free_blocks < FREE_BLOCKS_KEEP) {
			b->next = s->free_blocks;
			s->free_blocks = b;
			s->n_free_blocks++;
		} else {
			free(b);
		}
	}
	while (a->copies) {
		struct qs_copy *c = a->copies;

		a->copies = c->next;
		if (s->n_free_copies < FREE_COPIES_KEEP) {
			c->next = s->free_copies;
			s->free_copies = c;
			s->n_free_copies++;
		} else {
			free(c);
		}
	}
	FG_ASSERT(s->held >= a->art_len);
	s->held -= a->art_len;
	if (s->p.stats)
		fg_stats_add(s->p.stats, FG_CTR_QUEUE_HELD_OUT, a->art_len);
	a->art_len = 0;
	a->busy = false;
	a->next_free = s->free_head;
	s->free_head = (uint32_t)(a - s->arts);
	s->busy--;
}

static bool sink_full(void *sink)
{
	struct fg_queue_sink *s = sink;

	return s->free_head == Q_NONE || s->held >= s->p.max_held || fg_queue_refusing(s->q, NULL);
}

static int sink_begin(void *sink, const char *msgid, size_t len, unsigned peer, void **art)
{
	struct fg_queue_sink *s = sink;
	struct qs_art *a;

	if (sink_full(s)) {
		if (s->p.stats)
			fg_stats_inc(s->p.stats, FG_CTR_QUEUE_REFUSED);
		return -EAGAIN;
	}
	if (len < FG_QUEUE_ID_MIN || len > FG_QUEUE_ID_MAX)
		return -EINVAL;
	a = &s->arts[s->free_head];
	s->free_head = a->next_free;
	a->busy = true;
	a->cookie = 0;
	a->art_len = 0;
	a->blocks = a->last_block = NULL;
	a->copies = a->last_copy = NULL;
	a->status = 0;
	a->id_len = (uint16_t)len;
	a->peer = peer < FG_QUEUE_PEER_NONE ? (uint16_t)peer : FG_QUEUE_PEER_NONE;
	a->route = (struct fg_feeds_set){ .all = true };
	memcpy(a->id, msgid, len);
	s->busy++;
	*art = a;
	return 0;
}

/* Room for one more iovec at the end of the article's list. */
static struct iovec *iov_next(struct fg_queue_sink *s, struct qs_art *a)
{
	struct qs_block *b = a->last_block;

	if (!b || b->n == QS_BLOCK_IOVS) {
		if (s->free_blocks) {
			b = s->free_blocks;
			s->free_blocks = b->next;
			s->n_free_blocks--;
		} else if (!(b = malloc(sizeof(*b)))) {
			return NULL;
		}
		b->next = NULL;
		b->n = 0;
		if (a->last_block)
			a->last_block->next = b;
		else
			a->blocks = b;
		a->last_block = b;
	}
	b->h[b->n] = NULL;
	return &b->v[b->n++];
}

/* Append [p, p+n) of buffer h (NULL: a copy) as a piece, merged with the
 * last one when contiguous in the same buffer. */
static int piece_add(struct fg_queue_sink *s, struct qs_art *a, const uint8_t *p, size_t n,
		     void *h)
{
	struct qs_block *b = a->last_block;
	struct iovec *v;

	if (b && b->n && b->h[b->n - 1] == h &&
	    (const uint8_t *)b->v[b->n - 1].iov_base + b->v[b->n - 1].iov_len == p) {
		b->v[b->n - 1].iov_len += n;
		return 0;
	}
	v = iov_next(s, a);
	if (!v)
		return -ENOMEM;
	v->iov_base = (void *)(uintptr_t)p;
	v->iov_len = n;
	a->last_block->h[a->last_block->n - 1] = h;
	return 0;
}

static struct qs_copy *copy_chunk(struct fg_queue_sink *s, struct qs_art *a)
{
	struct qs_copy *c = a->last_copy;

	if (c && c->used < QS_COPY_CHUNK)
		return c;
	if (s->free_copies) {
		c = s->free_copies;
		s->free_copies = c->next;
		s->n_free_copies--;
	} else if (!(c = malloc(sizeof(*c)))) {
		return NULL;
	}
	c->next = NULL;
	c->used = 0;
	if (a->last_copy)
		a->last_copy->next = c;
	else
		a->copies = c;
	a->last_copy = c;
	return c;
}

static int copy_in(struct fg_queue_sink *s, struct qs_art *a, const uint8_t *p, size_t n)
{
	while (n) {
		struct qs_copy *c = copy_chunk(s, a);
		size_t k;

		if (!c)
			return -ENOMEM;
		k = FG_MIN(n, (size_t)(QS_COPY_CHUNK - c->used));
		memcpy(c->data + c->used, p, k);
		if (piece_add(s, a, c->data + c->used, k, NULL) != 0)
			return -ENOMEM;
		c->used += (uint32_t)k;
		p += k;
		n -= k;
	}
	return 0;
}

static int sink_append(void *sink, void *art, const struct fg_iov *seg, bool may_hold)
{
	struct fg_queue_sink *s = sink;
	struct qs_art *a = art;

	if (seg->len == 0)
		return 0;
	/* the record's length field is 32 bits */
	if (a->art_len + seg->len > UINT32_MAX)
		return -EFBIG;
	a->art_len += seg->len;
	if (s->held < s->p.max_held && s->held + seg->len >= s->p.max_held && s->p.stats)
		fg_stats_inc(s->p.stats, FG_CTR_QUEUE_HELD_CAP);
	s->held += seg->len;
	if (s->p.stats)
		fg_stats_add(s->p.stats, FG_CTR_QUEUE_HELD_IN, seg->len);
	if (may_hold) {
		if (piece_add(s, a, seg->base, seg->len, seg->handle) != 0)
			return -ENOMEM;
		return FG_SINK_HOLD;
	}
	return copy_in(s, a, seg->base, seg->len);
}

static int sink_commit(void *sink, void *art, uint64_t cookie)
{
	struct fg_queue_sink *s = sink;
	struct qs_art *a = art;

	a->cookie = cookie;
	qring_push(&s->commits, (uint32_t)(a - s->arts));
	fg_queue_kick(s->q);
	return 0;
}

static void sink_route(void *sink, void *art, const struct fg_feeds_set *set)
{
	struct qs_art *a = art;

	(void)sink;
	a->route = *set;
}

static void sink_discard(void *sink, void *art)
{
	art_release(sink, art);
}

static unsigned sink_poll(void *sink, uint64_t now_ns, fg_sink_done_fn *done, void *ctx)
{
	struct fg_queue_sink *s = sink;
	struct qslot *slot = &s->q->slots[s->slot];
	unsigned n = 0;
	uint32_t i;

	(void)now_ns;
	while (qring_pop(&s->done, &i)) {
		struct qs_art *a = &s->arts[i];
		uint64_t cookie = a->cookie;
		int status = a->status;

		art_release(s, a);
		done(ctx, cookie, status);
		atomic_fetch_add_explicit(&slot->delivered, 1, memory_order_release);
		n++;
	}
	return n;
}

void fg_queue_sink_view(const void *art, struct fg_queue_art_view *out)
{
	const struct qs_art *a = art;
	unsigned n = 0;

	for (const struct qs_block *b = a->blocks; b; b = b->next)
		n += b->n;
	*out = (struct fg_queue_art_view){ .id = a->id, .id_len = a->id_len, .route = &a->route,
					   .len = a->art_len, .pieces = n };
}

unsigned fg_queue_sink_pieces(const void *art, struct fg_iov *out, unsigned max)
{
	const struct qs_art *a = art;
	unsigned n = 0;

	for (const struct qs_block *b = a->blocks; b; b = b->next)
		for (unsigned i = 0; i < b->n; i++, n++)
			if (n < max)
				out[n] = (struct fg_iov){ b->v[i].iov_base, (uint32_t)b->v[i].iov_len,
							  b->h[i] };
	return n;
}

static void sink_destroy(void *sink)
{
	fg_queue_sink_destroy(sink);
}

const struct fg_sink_ops fg_queue_sink_ops = {
	.begin = sink_begin,
	.append = sink_append,
	.commit = sink_commit,
	.route = sink_route,
	.discard = sink_discard,
	.poll = sink_poll,
	.full = sink_full,
	.destroy = sink_destroy,
};
