/* SPDX-License-Identifier: MIT */
/*
 * acksink.c — the end-to-end acknowledging sink (acksink.h): the queue's
 * handle for the pieces, the relay's acker for the decision.
 *
 * Memory: an article handed to the relay holds its octets until the
 * downstreams answer or ack-timeout; the queue's path holds them only
 * until the group commit. So the relay may hold at most `max_held` octets
 * of this engine thread (half of [persistence] held-limit): beyond, an
 * article spills to the queue at once (relay_ack_spill_cap), and the other
 * half is what the queue's path and the open articles use before the
 * queue handle's full() stops the sessions (qsink.c). Nothing waits on the
 * downstream but memory that ack-timeout bounds.
 */
#include <errno.h>
#include <stdlib.h>

#include "floodgate/acksink.h"
#include "floodgate/failpoint.h"

struct fg_ack_sink {
	struct fg_queue_sink *qs;
	struct fg_relay_acker *ak;
	struct fg_stats *stats;
	uint64_t timeout_ns;
	uint64_t held, max_held;	/* octets of articles with the relay; cap */
	struct fg_iov *piece;		/* scratch: an article's pieces at commit */
	unsigned cappiece;
};

struct fg_ack_sink *fg_ack_sink_create(struct fg_queue_sink *qs, struct fg_relay_acker *ak,
				       struct fg_stats *stats, uint64_t timeout_ns,
				       uint64_t max_held)
{
	struct fg_ack_sink *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->qs = qs;
	s->ak = ak;
	s->stats = stats;
	s->timeout_ns = timeout_ns;
	s->max_held = max_held;
	return s;
}

unsigned fg_ack_sink_busy(const struct fg_ack_sink *s)
{
	return fg_queue_sink_busy(s->qs);
}

uint64_t fg_ack_sink_relay_held(const struct fg_ack_sink *s)
{
	return s->held;
}

static int ack_begin(void *sink, const char *msgid, size_t len, unsigned peer, void **art)
{
	struct fg_ack_sink *s = sink;

	return fg_queue_sink_ops.begin(s->qs, msgid, len, peer, art);
}

static int ack_append(void *sink, void *art, const struct fg_iov *seg, bool may_hold)
{
	struct fg_ack_sink *s = sink;

	return fg_queue_sink_ops.append(s->qs, art, seg, may_hold);
}

static void ack_route(void *sink, void *art, const struct fg_feeds_set *set)
{
	struct fg_ack_sink *s = sink;

	fg_queue_sink_ops.route(s->qs, art, set);
}

static void ack_discard(void *sink, void *art)
{
	struct fg_ack_sink *s = sink;

	fg_queue_sink_ops.discard(s->qs, art);
}

static bool ack_full(void *sink)
{
	struct fg_ack_sink *s = sink;

	return fg_queue_sink_ops.full(s->qs);
}

/* Straight to the relay: 0, or -errno (take the queue's path; -ENOSPC:
 * the relay holds max_held octets of this thread already). */
static int to_relay(struct fg_ack_sink *s, void *art, uint64_t cookie)
{
	struct fg_queue_art_view v;
	struct fg_relay_ack_art a;
	int rc;

	fg_queue_sink_view(art, &v);
	if (!fg_relay_ack_can(s->ak, v.route))
		return -EAGAIN;
	if (s->held + v.len > s->max_held)
		return -ENOSPC;
	if (v.pieces > s->cappiece) {
		unsigned cap = FG_MAX(v.pieces, FG_MAX(2 * s->cappiece, 64u));
		struct fg_iov *n = realloc(s->piece, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->piece = n;
		s->cappiece = cap;
	}
	fg_queue_sink_pieces(art, s->piece, v.pieces);
	a = (struct fg_relay_ack_art){
		.cookie = cookie, .ctx = art, .id = v.id, .id_len = v.id_len, .route = v.route,
		.piece = s->piece, .npiece = v.pieces, .deadline_ns = fg_mono_ns() + s->timeout_ns,
	};
	rc = fg_relay_ack_send(s->ak, &a);
	if (rc == 0)
		s->held += v.len;
	return rc;
}

static int ack_commit(void *sink, void *art, uint64_t cookie)
{
	struct fg_ack_sink *s = sink;
	int rc = to_relay(s, art, cookie);

	if (rc == 0)
		return 0;
	if (s->stats)
		fg_stats_inc(s->stats, rc == -ENOSPC ? FG_CTR_RELAY_ACK_SPILL_CAP :
						       FG_CTR_RELAY_ACK_QUEUED);
	return fg_queue_sink_ops.commit(s->qs, art, cookie);
}

struct ack_poll {
	struct fg_ack_sink *s;
	fg_sink_done_fn *done;
	void *ctx;
	unsigned n;
};

static void on_result(void *arg, const struct fg_relay_ack_result *res)
{
	struct ack_poll *p = arg;
	struct fg_ack_sink *s = p->s;
	struct fg_queue_art_view v;
	int status;

	fg_queue_sink_view(res->ctx, &v);
	FG_ASSERT(s->held >= v.len);
	s->held -= v.len;
	if (res->what == FG_RELAY_ACK_SPILL) {
		/* the queue's done() follows its sync */
		fg_queue_sink_ops.route(s->qs, res->ctx, &res->spill);
		if (fg_queue_sink_ops.commit(s->qs, res->ctx, res->cookie) == 0)
			return;
		status = -EIO;
	} else {
		fg_queue_sink_ops.discard(s->qs, res->ctx);
		status = res->what == FG_RELAY_ACK_ACCEPTED ? 0 :
			 res->what == FG_RELAY_ACK_REFUSED ? FG_SINK_REFUSED : FG_SINK_REFUSED_FORGET;
		if (status == 0)
			fg_failpoint("ack-answered");
	}
	p->done(p->ctx, res->cookie, status);
	p->n++;
}

/* The failpoint ack-spilled sits between the queue's completion (after
 * the sync) and the engine's 239. */
static void spilled_done(void *arg, uint64_t cookie, int status)
{
	struct ack_poll *p = arg;

	if (status == 0)
		fg_failpoint("ack-spilled");
	p->done(p->ctx, cookie, status);
}

static unsigned ack_poll(void *sink, uint64_t now_ns, fg_sink_done_fn *done, void *ctx)
{
	struct fg_ack_sink *s = sink;
	struct ack_poll p = { s, done, ctx, 0 };

	if (fg_failpoint_on)
		p.n = fg_queue_sink_ops.poll(s->qs, now_ns, spilled_done, &p);
	else
		p.n = fg_queue_sink_ops.poll(s->qs, now_ns, done, ctx);
	fg_relay_ack_results(s->ak, on_result, &p);
	return p.n;
}

static void ack_destroy(void *sink)
{
	struct fg_ack_sink *s = sink;

	if (!s)
		return;
	fg_relay_acker_destroy(s->ak);
	fg_queue_sink_destroy(s->qs);
	free(s->piece);
	free(s);
}

const struct fg_sink_ops fg_ack_sink_ops = {
	.begin = ack_begin,
	.append = ack_append,
	.commit = ack_commit,
	.route = ack_route,
	.discard = ack_discard,
	.poll = ack_poll,
	.full = ack_full,
	.destroy = ack_destroy,
};
