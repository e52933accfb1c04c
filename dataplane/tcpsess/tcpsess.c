/* SPDX-License-Identifier: MIT */
/*
 * tcpsess.c — the session engine's transport over the userspace TCP (see
 * tcpsess.h for the contract).
 *
 * A connection record (struct conn) is the `ctx` TCP hands back to every
 * callback and the `t` the engine hands back to every transport op. It is
 * taken from a fixed pool at accept and returned once three things are
 * true: TCP has reported the connection closed (on_close), the engine has
 * been told the session is closed, and the engine has detached (it may
 * keep a session's transfers, and their holds, after the close). A record
 * with work to do (a close to report, a free to try) sits on the work list
 * that fg_tcpsess_work() runs from the worker's loop.
 *
 * Holds: while TCP owns the connection every hold goes through
 * fg_tcp_hold (it takes an mbuf reference and counts the octets against
 * the window); in on_close what is still held is unaccounted from TCP
 * (fg_tcp_unaccount) and the references become the record's: a later
 * release drops them with fg_net_buf_unref.
 *
 * Hold budget: held octets close the window, and an article is done only
 * once all of it has arrived, so a connection holding a window's worth of
 * an article larger than the window would wait forever. t_may_hold lets
 * a connection hold up to half its receive buffer and `hold_segs` buffers;
 * beyond that the engine has the sink copy (the window still closes while
 * the stream is paused, which is the back-pressure that matters).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/log.h"
#include "floodgate/tcpsess.h"

#define COMP "tcpsess"
#define DEFAULT_MAX_CONNS (2u * 4096u)
#define DEFAULT_HOLD_SEGS 128u

/* record flags */
#define C_USED 0x01u
#define C_ON_WORK 0x02u		/* on the work list */
#define C_CLOSE_ASKED 0x04u	/* the engine asked to close */
#define C_DETACHED 0x08u	/* the engine will not call again */
#define C_REFUSED 0x10u		/* answered 400 while draining: no session */

struct conn {
	struct fg_tcpsess *ts;
	struct fg_tcp_conn *tc;		/* NULL once TCP reported it closed */
	struct fg_nntp_session *s;		/* NULL once the engine was told it closed */
	struct conn *next;		/* free list, or work list */
	uint32_t flags;
	uint32_t held;			/* octets held through fg_tcp_hold */
	uint32_t held_segs;		/* buffers held through fg_tcp_hold */
	struct fg_tcpsess_info info;
};

struct fg_tcpsess {
	struct fg_net *net;
	struct fg_nntp_engine *e;
	const struct fg_config *cfg;
	struct fg_stats *st;
	fg_time_t now;
	uint64_t now_ns;
	bool draining;
	bool restoring;
	unsigned n_conns, in_use;
	unsigned hold_segs;		/* per connection */
	struct conn *conns;
	struct conn *free_list;
	struct conn *work, **work_tail;
};

const char *fg_tcpsess_state_name(enum fg_tcpsess_state s)
{
	static const char *const names[] = { "open", "closing", "refused", "finishing" };

	return (unsigned)s < FG_ARRAY_SIZE(names) ? names[s] : "?";
}

struct fg_tcpsess *fg_tcpsess_create(const struct fg_tcpsess_params *p)
{
	struct fg_tcpsess *ts;

	if (!p->net || !p->engine || !p->cfg || !p->stats) {
		FG_LOG_ERR(COMP, "net, engine, config and stats are required");
		return NULL;
	}
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->n_conns = p->max_conns ? p->max_conns : DEFAULT_MAX_CONNS;
	ts->hold_segs = p->hold_segs ? p->hold_segs : DEFAULT_HOLD_SEGS;
	ts->conns = calloc(ts->n_conns, sizeof(*ts->conns));
	if (!ts->conns) {
		free(ts);
		return NULL;
	}
	ts->net = p->net;
	ts->e = p->engine;
	ts->cfg = p->cfg;
	ts->st = p->stats;
	ts->work_tail = &ts->work;
	for (unsigned i = ts->n_conns; i-- > 0;) {
		ts->conns[i].ts = ts;
		ts->conns[i].next = ts->free_list;
		ts->free_list = &ts->conns[i];
	}
	return ts;
}

void fg_tcpsess_destroy(struct fg_tcpsess *ts)
{
	if (!ts)
		return;
	if (ts->in_use)
		FG_LOG_WARN(COMP, "destroyed with %u connection records in use", ts->in_use);
	free(ts->conns);
	free(ts);
}

void fg_tcpsess_set_time(struct fg_tcpsess *ts, fg_time_t now, uint64_t now_ns)
{
	ts->now = now;
	ts->now_ns = now_ns;
}

void fg_tcpsess_set_config(struct fg_tcpsess *ts, const struct fg_config *cfg)
{
	ts->cfg = cfg;
}

void fg_tcpsess_set_draining(struct fg_tcpsess *ts, bool draining)
{
	ts->draining = draining;
}

unsigned fg_tcpsess_retire_unlistened(struct fg_tcpsess *ts, const struct fg_tcp *tcp)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ts->n_conns; i++) {
		struct conn *c = &ts->conns[i];
		struct fg_endpoint local;

		if (!c->tc || !c->s)
			continue;
		fg_tcp_conn_local(c->tc, &local);
		if (!fg_tcp_listens_on(tcp, &local)) {
			fg_nntp_session_retire(c->s, FG_NNTP_RETIRE_ADDRESS);
			n++;
		}
	}
	return n;
}

void fg_tcpsess_set_restoring(struct fg_tcpsess *ts, bool restoring)
{
	ts->restoring = restoring;
}

unsigned fg_tcpsess_in_use(const struct fg_tcpsess *ts)
{
	return ts->in_use;
}

/* ------------------------------------------------------------ records */

static struct conn *conn_get(struct fg_tcpsess *ts)
{
	struct conn *c = ts->free_list;

	if (!c)
		return NULL;
	ts->free_list = c->next;
	memset(&c->info, 0, sizeof(c->info));
	c->next = NULL;
	c->flags = C_USED;
	c->held = 0;
	c->tc = NULL;
	c->s = NULL;
	ts->in_use++;
	return c;
}

static void work_add(struct conn *c)
{
	struct fg_tcpsess *ts = c->ts;

	if (c->flags & C_ON_WORK)
		return;
	c->flags |= C_ON_WORK;
	c->next = NULL;
	*ts->work_tail = c;
	ts->work_tail = &c->next;
}

/* Back to the pool once nobody can reach the record any more. */
static void conn_maybe_put(struct conn *c)
{
	struct fg_tcpsess *ts = c->ts;

	if (c->tc || c->s || (c->flags & C_ON_WORK))
		return;
	if (!(c->flags & (C_DETACHED | C_REFUSED)))
		return;
	c->flags = 0;
	c->next = ts->free_list;
	ts->free_list = c;
	ts->in_use--;
}

/* ------------------------------------------------------------ transport */

static int t_send(void *t, const void *buf, uint32_t len)
{
	struct conn *c = t;
	int n;

	if (!c->tc)
		return -ENOTCONN;
	n = fg_tcp_send(c->tc, buf, len);
	if (n > 0)
		c->info.bytes_out += (uint32_t)n;
	return n;
}

static void t_hold(void *t, const struct fg_iov *seg)
{
	struct conn *c = t;

	if (c->tc) {
		fg_tcp_hold(c->tc, seg);
		c->held += seg->len;
		c->held_segs++;
	} else {
		fg_net_buf_ref(c->ts->net, seg->handle);
	}
}

static void t_release(void *t, const struct fg_iov *seg)
{
	struct conn *c = t;

	if (c->tc) {
		FG_ASSERT(c->held >= seg->len && c->held_segs > 0);
		c->held -= seg->len;
		c->held_segs--;
		fg_tcp_release(c->tc, seg);
	} else {
		fg_net_buf_unref(c->ts->net, seg->handle);
	}
}

static bool t_may_hold(void *t, uint32_t len)
{
	const struct conn *c = t;

	return c->tc && c->held_segs < c->ts->hold_segs &&
	       c->held + len <= fg_tcp_conn_rcvbuf(c->tc) / 2;
}

static void t_pause(void *t)
{
	struct conn *c = t;

	if (c->tc)
		fg_tcp_pause(c->tc);
}

static void t_resume(void *t)
{
	struct conn *c = t;

	/* fg_tcp_resume only marks the connection: the queued octets are
	 * offered again at the end of the burst or the next fg_net_poll */
	if (c->tc)
		fg_tcp_resume(c->tc);
}

static void t_close(void *t)
{
	struct conn *c = t;

	c->flags |= C_CLOSE_ASKED;
	if (c->tc)
		fg_tcp_close(c->tc);
	work_add(c);
}

static void t_detach(void *t)
{
	struct conn *c = t;

	c->flags |= C_DETACHED;
	work_add(c);
}

static const struct fg_nntp_session_transport tcp_transport = {
	.send = t_send, .hold = t_hold, .release = t_release, .may_hold = t_may_hold,
	.pause = t_pause, .resume = t_resume, .close = t_close, .detach = t_detach,
};

/* ------------------------------------------------------------ TCP callbacks */

/* RFC 3977 5.1.1: 400 as the greeting says the service is not available
 * now; a peer retries later (innfeed backs off). The line says why: a
 * drain, or floodctld restoring the history (FG_NNTP_RESTORING_LINE). */

static void refuse(struct fg_tcpsess *ts, struct conn *c)
{
	char line[FG_CONFIG_NAME_MAX + 80];
	int n = ts->restoring ? snprintf(line, sizeof(line), "%s", FG_NNTP_RESTORING_LINE)
			      : snprintf(line, sizeof(line), "400 %s draining, try again later\r\n",
					 ts->cfg->server_name);

	c->flags |= C_REFUSED;
	c->info.state = FG_TCPSESS_REFUSED;
	if (n > 0 && fg_tcp_send(c->tc, line, (uint32_t)FG_MIN((size_t)n, sizeof(line) - 1)) > 0)
		c->info.bytes_out += (uint32_t)n;
	fg_tcp_close(c->tc);
	fg_stats_inc(ts->st, ts->restoring ? FG_CTR_DP_SESSIONS_REFUSED_RESTORING
					   : FG_CTR_DP_SESSIONS_REFUSED_DRAIN);
}

static void *on_accept(void *app, struct fg_tcp_conn *tc, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	struct fg_tcpsess *ts = app;
	const struct fg_config_peer *p;
	struct conn *c = conn_get(ts);

	if (!c) {
		fg_stats_inc(ts->st, FG_CTR_DP_SESSIONS_REFUSED_FULL);
		return NULL;
	}
	c->tc = tc;
	c->info.remote = *peer;
	c->info.opened_ns = ts->now_ns;
	(void)local;
	if (ts->draining || ts->restoring) {
		refuse(ts, c);
		return c;
	}
	p = fg_config_find_peer(ts->cfg, peer->family, peer->addr);
	if (p)
		snprintf(c->info.peer, sizeof(c->info.peer), "%s", p->name);
	c->s = fg_nntp_session_open(ts->e, p, &tcp_transport, c, ts->now, ts->now_ns);
	if (!c->s) {
		/* every session slot in use: refuse with a RST (TCP frees tc) */
		c->tc = NULL;
		c->flags |= C_DETACHED;
		conn_maybe_put(c);
		fg_stats_inc(ts->st, FG_CTR_DP_SESSIONS_REFUSED_FULL);
		return NULL;
	}
	fg_nntp_session_set_remote(c->s, peer);
	return c;
}

static uint32_t on_data(void *ctx, struct fg_tcp_conn *tc, const struct fg_iov *iov, unsigned n)
{
	struct conn *c = ctx;
	uint32_t took, total = 0;

	(void)tc;
	if (!c->s || (c->flags & C_CLOSE_ASKED)) {
		/* refused, or closing: what the peer still sends is discarded */
		for (unsigned i = 0; i < n; i++)
			total += iov[i].len;
		return total;
	}
	took = fg_nntp_session_input(c->s, iov, n, c->ts->now, c->ts->now_ns);
	c->info.bytes_in += took;
	return took;
}

static void on_eof(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	if (c->s && !(c->flags & C_CLOSE_ASKED))
		fg_nntp_session_eof(c->s, c->ts->now, c->ts->now_ns);
	else
		fg_tcp_close(tc);
}

static void on_writable(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	(void)tc;
	if (c->s)
		fg_nntp_session_writable(c->s);
}

static void on_close(void *ctx, struct fg_tcp_conn *tc, enum fg_tcp_close_reason why)
{
	struct conn *c = ctx;
	struct fg_nntp_session *s = c->s;

	(void)why;
	/* tc stays usable until this returns: the engine's releases during
	 * fg_nntp_session_closed still go through TCP */
	if (s) {
		c->s = NULL;
		fg_nntp_session_closed(s);
	}
	if (c->held) {
		fg_tcp_unaccount(tc, c->held);
		c->held = 0;
		c->held_segs = 0;
		fg_stats_inc(c->ts->st, FG_CTR_DP_HOLDS_ORPHANED);
	}
	c->tc = NULL;
	c->info.state = (c->flags & C_REFUSED) ? FG_TCPSESS_REFUSED : FG_TCPSESS_FINISHING;
	conn_maybe_put(c);
}

const struct fg_tcp_app_ops fg_tcpsess_app_ops = {
	.on_accept = on_accept, .on_data = on_data, .on_eof = on_eof,
	.on_writable = on_writable, .on_close = on_close,
};

/* ------------------------------------------------------------ work */

unsigned fg_tcpsess_work(struct fg_tcpsess *ts)
{
	unsigned done = 0;

	while (ts->work) {
		struct conn *c = ts->work;

		ts->work = c->next;
		if (!ts->work)
			ts->work_tail = &ts->work;
		c->next = NULL;
		c->flags &= ~C_ON_WORK;
		if ((c->flags & C_CLOSE_ASKED) && c->s) {
			struct fg_nntp_session *s = c->s;

			/* the engine may detach (queueing c again) inside */
			c->s = NULL;
			c->info.state = FG_TCPSESS_CLOSING;
			fg_nntp_session_closed(s);
		}
		conn_maybe_put(c);
		done++;
	}
	return done;
}

unsigned fg_tcpsess_unfinished(const struct fg_tcpsess *ts)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ts->n_conns; i++) {
		const struct conn *c = &ts->conns[i];

		if (!(c->flags & C_USED))
			continue;
		if (!c->tc || c->s || fg_tcp_conn_state(c->tc) != FG_TCP_FIN_WAIT_2)
			n++;
	}
	return n;
}

unsigned fg_tcpsess_abort_all(struct fg_tcpsess *ts)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ts->n_conns; i++) {
		struct conn *c = &ts->conns[i];
		struct fg_tcp_conn *tc = c->tc;

		if (!(c->flags & C_USED) || !tc)
			continue;
		/* fg_tcp_abort calls no on_close: do its work here */
		on_close(c, tc, FG_TCP_CLOSE_ERROR);
		fg_tcp_abort(tc);
		fg_stats_inc(ts->st, FG_CTR_DP_CONNS_ABORTED);
		n++;
	}
	return n;
}

unsigned fg_tcpsess_list(const struct fg_tcpsess *ts, struct fg_tcpsess_info *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ts->n_conns && n < max; i++) {
		const struct conn *c = &ts->conns[i];

		if (!(c->flags & C_USED))
			continue;
		out[n] = c->info;
		if (c->tc) {
			if (c->flags & C_CLOSE_ASKED)
				out[n].state = FG_TCPSESS_CLOSING;
			out[n].queued = fg_tcp_conn_rx_bytes(c->tc);
		}
		out[n].held = c->held;
		n++;
	}
	return n;
}
