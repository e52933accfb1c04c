/* SPDX-License-Identifier: MIT */
/*
 * sink_mem.c — the in-memory sink (tests, the kernel-socket host until the
 * durable queue exists) and the null sink (benchmarks). See sink.h for the
 * interface they implement.
 *
 * In-memory: an article is a slot of a preallocated table; its octets are
 * unstuffed into a growing text buffer as they arrive, or, in `hold` mode,
 * only their segments are remembered and read at completion time — so a
 * test that poisons released buffers catches any hold the engine let go
 * too early. A commit completes after `delay_ns` (plus up to `jitter_ns`,
 * from a seeded generator, so completions can come out of commit order)
 * from the next poll() on; it fails when asked to (every n-th commit, or a
 * Message-ID holding a given string). Accepted articles are kept in a ring
 * of `max_done`, their text within `store_limit` octets in all.
 *
 * Null: takes everything, copies nothing, completes at the next poll().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/sink.h"

#define DEFAULT_MAX_ARTICLES 4096
#define DEFAULT_MAX_DONE 65536

struct mem_art {
	bool used, committed, fail;
	int refuse;			/* FG_SINK_REFUSED(_FORGET), or 0 */
	uint64_t due_ns, cookie;
	unsigned peer;
	char msgid[256];
	uint64_t wire;
	uint8_t *text;
	size_t len, cap;
	struct fg_sink_unstuff u;
	struct fg_iov *segs;		/* hold mode */
	unsigned nsegs, segcap;
	uint32_t next_free;
};

struct fg_sink_mem {
	struct fg_sink_mem_params p;
	char fail_substr[256];
	char refuse_substr[2][256];	/* REFUSED, REFUSED_FORGET */
	bool full;
	struct mem_art *arts;
	uint32_t free_head;
	unsigned open, in_flight;
	uint64_t now_ns, commits, rng;
	struct fg_sink_mem_article *done;	/* ring */
	unsigned done_head, done_n;
	uint64_t stored_bytes;
	struct fg_sink_mem_stats st;
};

#define NONE UINT32_MAX

struct fg_sink_mem *fg_sink_mem_create(const struct fg_sink_mem_params *p)
{
	struct fg_sink_mem *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->p = *p;
	if (!m->p.max_articles)
		m->p.max_articles = DEFAULT_MAX_ARTICLES;
	if (!m->p.max_done)
		m->p.max_done = DEFAULT_MAX_DONE;
	fg_sink_mem_set_fail(m, p->fail_every, p->fail_substr);
	m->rng = 0x2545f4914f6cdd1dull;
	m->arts = calloc(m->p.max_articles, sizeof(*m->arts));
	m->done = calloc(m->p.max_done, sizeof(*m->done));
	if (!m->arts || !m->done) {
		fg_sink_mem_destroy(m);
		return NULL;
	}
	for (unsigned i = 0; i < m->p.max_articles; i++)
		m->arts[i].next_free = i + 1 < m->p.max_articles ? i + 1 : NONE;
	m->free_head = 0;
	return m;
}

static void art_free(struct fg_sink_mem *m, struct mem_art *a)
{
	free(a->text);
	free(a->segs);
	memset(a, 0, sizeof(*a));
	a->next_free = m->free_head;
	m->free_head = (uint32_t)(a - m->arts);
	m->open--;
}

void fg_sink_mem_destroy(struct fg_sink_mem *m)
{
	if (!m)
		return;
	for (unsigned i = 0; m->arts && i < m->p.max_articles; i++) {
		free(m->arts[i].text);
		free(m->arts[i].segs);
	}
	for (unsigned i = 0; m->done && i < m->p.max_done; i++)
		free(m->done[i].text);
	free(m->arts);
	free(m->done);
	free(m);
}

void fg_sink_mem_set_refuse(struct fg_sink_mem *m, const char *keep, const char *forget)
{
	snprintf(m->refuse_substr[0], sizeof(m->refuse_substr[0]), "%s", keep ? keep : "");
	snprintf(m->refuse_substr[1], sizeof(m->refuse_substr[1]), "%s", forget ? forget : "");
}

void fg_sink_mem_set_fail(struct fg_sink_mem *m, unsigned fail_every, const char *fail_substr)
{
	m->p.fail_every = fail_every;
	m->fail_substr[0] = '\0';
	if (fail_substr) {
		strncpy(m->fail_substr, fail_substr, sizeof(m->fail_substr) - 1);
		m->fail_substr[sizeof(m->fail_substr) - 1] = '\0';
	}
}

void fg_sink_mem_set_delay(struct fg_sink_mem *m, uint64_t delay_ns)
{
	m->p.delay_ns = delay_ns;
}

void fg_sink_mem_set_jitter(struct fg_sink_mem *m, uint64_t jitter_ns, uint64_t seed)
{
	m->p.jitter_ns = jitter_ns;
	m->rng = seed | 1;
}

void fg_sink_mem_set_full(struct fg_sink_mem *m, bool full)
{
	m->full = full;
}

static bool mem_full(void *sink)
{
	struct fg_sink_mem *m = sink;

	return m->full || m->free_head == NONE;
}

static int mem_begin(void *sink, const char *msgid, size_t len, unsigned peer, void **art)
{
	struct fg_sink_mem *m = sink;
	struct mem_art *a;

	if (mem_full(m))
		return -EAGAIN;
	a = &m->arts[m->free_head];
	m->free_head = a->next_free;
	a->used = true;
	a->peer = peer;
	len = len < sizeof(a->msgid) ? len : sizeof(a->msgid) - 1;
	memcpy(a->msgid, msgid, len);
	a->msgid[len] = '\0';
	fg_sink_unstuff_init(&a->u);
	m->open++;
	m->st.begun++;
	*art = a;
	return 0;
}

static int text_add(struct mem_art *a, const uint8_t *p, size_t n)
{
	if (a->len + n > a->cap) {
		uint8_t *t = fg_grow(a->text, &a->cap, a->len + n, 4096);

		if (!t)
			return -ENOMEM;
		a->text = t;
	}
	a->len += fg_sink_unstuff(&a->u, p, n, a->text + a->len);
	return 0;
}

static int mem_append(void *sink, void *art, const struct fg_iov *seg, bool may_hold)
{
	struct fg_sink_mem *m = sink;
	struct mem_art *a = art;

	a->wire += seg->len;
	m->st.appended_bytes += seg->len;
	if (m->p.hold && may_hold) {
		if (a->nsegs == a->segcap) {
			unsigned cap = a->segcap ? 2 * a->segcap : 16;
			struct fg_iov *s = realloc(a->segs, cap * sizeof(*s));

			if (!s)
				return -ENOMEM;
			a->segs = s;
			a->segcap = cap;
		}
		a->segs[a->nsegs++] = *seg;
		m->st.holds++;
		return FG_SINK_HOLD;
	}
	m->st.copies++;
	/* held segments come first: keep the text in order */
	for (unsigned i = 0; i < a->nsegs; i++)
		if (text_add(a, a->segs[i].base, a->segs[i].len) != 0)
			return -ENOMEM;
	a->nsegs = 0;
	return text_add(a, seg->base, seg->len);
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: enough to spread completions */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static int mem_commit(void *sink, void *art, uint64_t cookie)
{
	struct fg_sink_mem *m = sink;
	struct mem_art *a = art;
	uint64_t n = ++m->commits;

	a->committed = true;
	a->cookie = cookie;
	a->due_ns = m->now_ns + m->p.delay_ns +
		    (m->p.jitter_ns ? rng_next(&m->rng) % m->p.jitter_ns : 0);
	a->fail = (m->p.fail_every && (n - 1) % m->p.fail_every == 0) ||
		  (m->fail_substr[0] && strstr(a->msgid, m->fail_substr));
	a->refuse = m->refuse_substr[0][0] && strstr(a->msgid, m->refuse_substr[0]) ?
		    FG_SINK_REFUSED :
		    m->refuse_substr[1][0] && strstr(a->msgid, m->refuse_substr[1]) ?
		    FG_SINK_REFUSED_FORGET : 0;
	m->in_flight++;
	m->st.committed++;
	return 0;
}

static void mem_discard(void *sink, void *art)
{
	struct fg_sink_mem *m = sink;

	m->st.discarded++;
	art_free(m, art);
}

/* Keep an accepted article: its text moves into the ring. */
static void store(struct fg_sink_mem *m, struct mem_art *a)
{
	struct fg_sink_mem_article *d;

	if (m->done_n == m->p.max_done) {
		d = &m->done[m->done_head];
		m->stored_bytes -= d->text ? d->text_len : 0;
		free(d->text);
		m->done_head = (m->done_head + 1) % m->p.max_done;
		m->done_n--;
	}
	d = &m->done[(m->done_head + m->done_n++) % m->p.max_done];
	memcpy(d->msgid, a->msgid, sizeof(d->msgid));
	d->peer = a->peer;
	d->wire_size = a->wire;
	d->text = NULL;
	d->text_len = a->len;
	if (m->stored_bytes + a->len <= m->p.store_limit) {
		d->text = a->text;	/* taken over */
		a->text = NULL;
		m->stored_bytes += a->len;
	}
}

static unsigned mem_poll(void *sink, uint64_t now_ns, fg_sink_done_fn *done, void *ctx)
{
	struct fg_sink_mem *m = sink;
	unsigned n = 0;

	m->now_ns = now_ns;
	for (unsigned i = 0; i < m->p.max_articles && m->in_flight; i++) {
		struct mem_art *a = &m->arts[i];
		uint64_t cookie;
		int status = 0;

		if (!a->used || !a->committed || a->due_ns > now_ns)
			continue;
		/* hold mode: the held buffers must still be intact now */
		for (unsigned k = 0; k < a->nsegs && status == 0; k++)
			if (text_add(a, a->segs[k].base, a->segs[k].len) != 0)
				status = -ENOMEM;
		a->nsegs = 0;
		if (a->fail)
			status = -EIO;
		else if (status == 0 && a->refuse)
			status = a->refuse;
		if (status == 0) {
			store(m, a);
			m->st.succeeded++;
		} else {
			m->st.failed++;
		}
		cookie = a->cookie;
		m->in_flight--;
		art_free(m, a);
		n++;
		done(ctx, cookie, status);
	}
	return n;
}

static void mem_destroy(void *sink)
{
	fg_sink_mem_destroy(sink);
}

const struct fg_sink_ops fg_sink_mem_ops = {
	.begin = mem_begin,
	.append = mem_append,
	.commit = mem_commit,
	.discard = mem_discard,
	.poll = mem_poll,
	.full = mem_full,
	.destroy = mem_destroy,
};

void fg_sink_mem_stats(const struct fg_sink_mem *m, struct fg_sink_mem_stats *out)
{
	*out = m->st;
	out->open = m->open;
	out->in_flight = m->in_flight;
	out->stored = m->done_n;
}

const struct fg_sink_mem_article *fg_sink_mem_article(const struct fg_sink_mem *m, unsigned i)
{
	return i < m->done_n ? &m->done[(m->done_head + i) % m->p.max_done] : NULL;
}

const struct fg_sink_mem_article *fg_sink_mem_find(const struct fg_sink_mem *m, const char *msgid,
						   size_t len)
{
	for (unsigned i = m->done_n; i-- > 0;) {
		const struct fg_sink_mem_article *d = fg_sink_mem_article(m, i);

		if (strlen(d->msgid) == len && memcmp(d->msgid, msgid, len) == 0)
			return d;
	}
	return NULL;
}

/* ------------------------------------------------------------ null */

struct fg_sink_null {
	uint64_t *ring;
	unsigned cap, head, n;
};

struct fg_sink_null *fg_sink_null_create(unsigned max_in_flight)
{
	struct fg_sink_null *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->cap = max_in_flight ? max_in_flight : DEFAULT_MAX_ARTICLES;
	z->ring = calloc(z->cap, sizeof(*z->ring));
	if (!z->ring) {
		free(z);
		return NULL;
	}
	return z;
}

void fg_sink_null_destroy(struct fg_sink_null *z)
{
	if (z)
		free(z->ring);
	free(z);
}

static bool null_full(void *sink)
{
	struct fg_sink_null *z = sink;

	return z->n == z->cap;
}

static int null_begin(void *sink, const char *msgid, size_t len, unsigned peer, void **art)
{
	(void)msgid;
	(void)len;
	(void)peer;
	if (null_full(sink))
		return -EAGAIN;
	*art = sink;
	return 0;
}

static int null_append(void *sink, void *art, const struct fg_iov *seg, bool may_hold)
{
	(void)sink;
	(void)art;
	(void)seg;
	(void)may_hold;
	return 0;
}

static int null_commit(void *sink, void *art, uint64_t cookie)
{
	struct fg_sink_null *z = sink;

	(void)art;
	if (z->n == z->cap)
		return -ENOSPC;
	z->ring[(z->head + z->n++) % z->cap] = cookie;
	return 0;
}

static void null_discard(void *sink, void *art)
{
	(void)sink;
	(void)art;
}

static unsigned null_poll(void *sink, uint64_t now_ns, fg_sink_done_fn *done, void *ctx)
{
	struct fg_sink_null *z = sink;
	unsigned n = 0;

	(void)now_ns;
	while (z->n) {
		uint64_t cookie = z->ring[z->head];

		z->head = (z->head + 1) % z->cap;
		z->n--;
		n++;
		done(ctx, cookie, 0);
	}
	return n;
}

static void null_destroy(void *sink)
{
	fg_sink_null_destroy(sink);
}

const struct fg_sink_ops fg_sink_null_ops = {
	.begin = null_begin,
	.append = null_append,
	.commit = null_commit,
	.discard = null_discard,
	.poll = null_poll,
	.full = null_full,
	.destroy = null_destroy,
};
