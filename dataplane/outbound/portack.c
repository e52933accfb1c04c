/* SPDX-License-Identifier: MIT */
/*
 * portack.c — end-to-end acknowledgement over a worker's own TCP
 * (portack.h has the contract; ackrule.h the decision table it shares
 * with the relay thread's rack.c).
 *
 * One article, step by step:
 *
 *  1. The engine (pa_send, the acker's send) takes a free slot: the ID,
 *     the article's pieces (onto the receive buffers the engine holds),
 *     the downstreams of its route as a mask, the deadline. The slot joins
 *     the live list.
 *  2. To each downstream of the mask: TAKETHIS on the ready connection
 *     with the fewest commands out, if one has fewer than `window` and
 *     room for the article within PA_BACKLOG_MAX octets on their way (not
 *     yet in TCP, or not yet acknowledged by the downstream's TCP); none ready at
 *     all: that downstream spills (cause eof); all full: it waits for
 *     room, within the deadline (send_pending). A command is written to
 *     TCP in order, as far as TCP takes it (conn_write, on_writable): the
 *     line, the pieces (out_piece: the one place that hands article
 *     octets to TCP), the terminator.
 *  3. Answers, in command order, each naming its ID (on_data, answer):
 *     fg_ackrule_answer; a CHECK's 438 or not, fg_ackrule_checked. A 400,
 *     an answer out of step, EOF, RST or a dead connection spills every
 *     article open on it (conn_fail; cause refused for the 400, else eof).
 *  4. settle(): fg_ackrule_decide at every answer, failure and poll; a
 *     refusal asks CHECK <id> on the refusing connection first.
 *  5. Before the result, a connection still writing the article is
 *     aborted (no octet of it is read after the result); the article's
 *     commands still out turn stale (their answers are checked, then
 *     dropped); the result joins the FIFO the acksink's poll takes.
 *
 * The connection's life: IDLE (next try at retry_ns) -> CONNECTING (SYN
 * out) -> GREETING -> MODE (MODE STREAM sent) -> READY; any failure back
 * to IDLE with backoff; a handshake has PA_HANDSHAKE_NS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "floodgate/ackrule.h"
#include "floodgate/failpoint.h"
#include "floodgate/log.h"
#include "floodgate/portack.h"

#define PA "portack"
/* Octets a connection may have on its way — not yet handed to TCP, or in
 * TCP and not yet acknowledged — before it takes another article. An
 * article started behind more than that may still be on its way at its
 * deadline, and a connection still writing an article at its result is
 * aborted with everything on it (portack_aborted, then a reconnect): an
 * article that waits for room here instead spills alone at its deadline.
 * An article is started only if it fits whole (or the connection has
 * nothing on its way): 2.5 MiB is three 700 KB articles, enough to keep
 * the downstream fed while it answers, gone in tens of milliseconds at
 * its pace. */
#define PA_BACKLOG_MAX (5ull << 19)
#define PA_HANDSHAKE_NS (10ull * 1000000000ull)
#define PA_RECONNECT_MIN_NS (250ull * 1000000ull)
#define PA_RECONNECT_MAX_NS (30ull * 1000000000ull)
#define PA_IBUF 4096u			/* answer lines: far more than 512 */
#define PA_CHECKS 8u			/* room for CHECKs beside a full window */
#define PA_LINE_MAX (FG_QUEUE_ID_MAX + 16u)

enum pa_state { PC_IDLE = 0, PC_CONNECTING, PC_GREETING, PC_MODE, PC_READY };
enum pa_kind { PK_TAKETHIS = 0, PK_CHECK };

/* A command on a connection, in order: written up to `nw`, answered from
 * the head. */
struct pa_cmd {
	uint32_t slot;
	uint8_t kind;
	uint8_t stale;			/* its article's result was given */
	uint8_t id_len;
	char id[FG_QUEUE_ID_MAX + 1];
	uint64_t end;			/* out_total once it is all queued */
};

struct pa_ds;

struct pa_conn {
	struct fg_portack *pa;
	struct pa_ds *ds;
	struct fg_tcp_conn *tc;
	enum pa_state st;
	unsigned fails;
	uint64_t retry_ns, due_ns;
	struct pa_cmd *cmd;		/* ring of `ccap` */
	unsigned ch, cn, ccap;
	unsigned nw;			/* commands from the head wholly written */
	/* the write cursor within command nw: the line, piece k at off, the end */
	unsigned phase, piece;
	uint32_t off;
	uint64_t out_total, out_done;	/* octets of commands queued, handed to TCP */
	char ibuf[PA_IBUF];
	size_t ilen;
};

struct pa_ds {
	const struct fg_config_downstream *cfg;
	unsigned d;			/* config index: its bit in the masks */
	struct pa_conn *conns;
	unsigned nconn;
	bool no_stream;			/* it answered MODE STREAM with other than 203 */
};

struct pa_slot {
	struct fg_ackrule_art a;
	struct fg_ackrule_marks m;
	uint8_t conn[FG_CONFIG_MAX_DOWNSTREAMS];	/* which connection of each */
	struct fg_relay_ack_result res;
};

struct fg_portack {
	struct fg_portack_params p;
	struct fg_tcp *tcp;
	struct fg_endpoint local;
	struct pa_ds ds[FG_CONFIG_MAX_DOWNSTREAMS];
	unsigned nds;
	struct pa_conn *conns;		/* every ds's, one array (fg_portack_owns) */
	unsigned nconns;
	uint8_t port_mask, ack_mask;	/* by config index */
	uint32_t cap;
	struct pa_slot *slot;
	uint32_t *free, nfree;
	uint32_t *live, nlive;
	uint32_t *res, rh, rn;		/* results not yet taken, FIFO */
	uint64_t now;
	bool ended;			/* fg_portack_abort_all: no more connections */
	struct fg_relay_acker *acker;
};

static uint8_t bit(unsigned d)
{
	return (uint8_t)(1u << d);
}

static void count(struct fg_portack *pa, enum fg_counter c, uint64_t n)
{
	if (pa->p.stats)
		fg_stats_add(pa->p.stats, c, n);
}

/* ------------------------------------------------------------ which path */

static bool on_subnet(const struct fg_prefix *pf, const struct fg_endpoint *a)
{
	unsigned bits = pf->len;

	if (pf->family != AF_INET || a->family != AF_INET)
		return false;
	for (unsigned i = 0; i < 4 && bits; i++) {
		uint8_t m = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

		if ((pf->addr[i] & m) != (a->addr[i] & m))
			return false;
		bits = bits >= 8 ? bits - 8 : 0;
	}
	return true;
}

bool fg_portack_takes(const struct fg_config *cfg, const struct fg_config_downstream *d)
{
	if (!d->acknowledges || d->mode != FG_DOWNSTREAM_STREAM || d->addr.family != AF_INET ||
	    d->path == FG_DOWNSTREAM_PATH_KERNEL)
		return false;
	if (d->path == FG_DOWNSTREAM_PATH_PORT)
		return true;
	for (unsigned i = 0; i < cfg->n_dp_addr; i++)
		/* one of our own addresses is the box's, not a server beyond the port */
		if (on_subnet(&cfg->dp_addr[i], &d->addr) &&
		    memcmp(cfg->dp_addr[i].addr, d->addr.addr, 4) != 0)
			return true;
	return false;
}

bool fg_portack_any(const struct fg_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_downstream; i++)
		if (fg_portack_takes(cfg, &cfg->downstream[i]))
			return true;
	return false;
}

/* ------------------------------------------------------------ connections */

static struct pa_cmd *cmd_at(const struct pa_conn *c, unsigned k)
{
	return &c->cmd[(c->ch + k) % c->ccap];
}

static uint64_t backoff(const struct fg_portack *pa, unsigned fails)
{
	uint64_t d = pa->p.reconnect_min_ns;

	for (unsigned i = 1; i < fails && d < pa->p.reconnect_max_ns; i++)
		d *= 2;
	return FG_MIN(d, pa->p.reconnect_max_ns);
}

/*
 * The connection is gone or given up: every article open on it spills
 * for its downstream with `cause`; a CHECK out is unconfirmed. The TCP
 * connection is aborted unless TCP already ended it (tc NULL).
 */
static void conn_fail(struct pa_conn *c, enum fg_counter cause, const char *why)
{
	struct fg_portack *pa = c->pa;

	for (unsigned k = 0; k < c->cn; k++) {
		struct pa_cmd *q = cmd_at(c, k);
		struct pa_slot *s = q->stale ? NULL : &pa->slot[q->slot];

		if (s && q->kind == PK_CHECK)
			fg_ackrule_checked(&s->m, 0);
		else if (s)
			fg_ackrule_spill(&s->m, c->ds->d, cause);
	}
	c->ch = c->cn = c->nw = 0;
	c->phase = c->piece = 0;
	c->off = 0;
	c->out_total = c->out_done = 0;
	c->ilen = 0;
	if (c->tc) {
		fg_tcp_abort(c->tc);
		c->tc = NULL;
	}
	if (c->st != PC_IDLE && !pa->ended)
		FG_LOG_WARN(PA, "downstream %s: connection %u: %s", c->ds->cfg->name,
			    (unsigned)(c - c->ds->conns), why);
	c->st = PC_IDLE;
	c->fails++;
	c->retry_ns = pa->now + backoff(pa, c->fails);
	count(pa, FG_CTR_PORTACK_CONN_FAILURES, 1);
}

static void conn_open(struct pa_conn *c)
{
	struct fg_portack *pa = c->pa;
	int err = 0;

	c->tc = fg_tcp_connect(pa->tcp, &pa->local, &c->ds->cfg->addr, c, pa->now, &err);
	count(pa, FG_CTR_PORTACK_CONNECTS, 1);
	if (!c->tc) {
		c->st = PC_CONNECTING;	/* so that conn_fail logs it */
		conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, strerror(-err));
		return;
	}
	c->st = PC_CONNECTING;
	c->due_ns = pa->now + PA_HANDSHAKE_NS;
}

/* The one place article octets are handed to TCP: by reference to the
 * receive buffer the piece lies in (TCP takes its own reference and drops
 * it once the octets are acknowledged, or at the connection's end); a
 * piece without a buffer (the engine's own copy) is copied. 1: taken;
 * 0: no room now (on_writable follows); -1: the connection is dead. */
static int out_piece(struct pa_conn *c, const struct fg_iov *p)
{
	if (fg_tcp_send_ref(c->tc, p, 1) != 0)
		return errno == EAGAIN ? 0 : -1;
	count(c->pa, p->handle ? FG_CTR_PORTACK_ART_OCTETS_REFERENCED :
				 FG_CTR_PORTACK_ART_OCTETS_COPIED, p->len);
	return 1;
}

/* A command's line ("TAKETHIS <id>\r\n", "CHECK <id>\r\n", ".\r\n") from
 * c->off on; true when it is all in TCP. */
static bool out_line(struct pa_conn *c, const char *line, size_t len, bool *dead)
{
	int n = fg_tcp_send(c->tc, line + c->off, (uint32_t)(len - c->off));

	if (n < 0) {
		*dead = true;
		return false;
	}
	c->off += (uint32_t)n;
	c->out_done += (uint64_t)n;
	if (c->off < len)
		return false;
	c->off = 0;
	return true;
}

/* One command from the cursor on; true when it is all in TCP. */
static bool write_cmd(struct pa_conn *c, struct pa_cmd *q, bool *dead)
{
	const struct pa_slot *s = &c->pa->slot[q->slot];
	char line[PA_LINE_MAX];
	int len;

	if (c->phase == 0) {
		len = snprintf(line, sizeof(line), "%s %s\r\n",
			       q->kind == PK_CHECK ? "CHECK" : "TAKETHIS", q->id);
		if (!out_line(c, line, (size_t)len, dead))
			return false;
		if (q->kind == PK_CHECK)
			return true;
		c->phase = 1;
		c->piece = 0;
	}
	while (c->phase == 1 && c->piece < s->a.npiece) {
		const struct fg_iov *v = &s->a.piece[c->piece];
		int rc = v->len ? out_piece(c, v) : 1;

		if (rc < 0)
			*dead = true;
		if (rc <= 0)
			return false;
		c->out_done += v->len;
		c->piece++;
	}
	c->phase = 2;
	if (!out_line(c, ".\r\n", 3, dead))
		return false;
	fg_failpoint("ack-forwarded");
	return true;
}

/* Step 2's writing: as far as TCP takes, in command order. */
static void conn_write(struct pa_conn *c)
{
	bool dead = false;

	while (c->st == PC_READY && c->nw < c->cn) {
		if (!write_cmd(c, cmd_at(c, c->nw), &dead))
			break;
		c->nw++;
		c->phase = 0;
	}
	if (dead)
		conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "TCP no longer sends");
}

/* "CHECK <id>\r\n", or "TAKETHIS <id>\r\n", the pieces, ".\r\n". */
static uint64_t cmd_octets(const struct pa_cmd *q, const struct pa_slot *s)
{
	uint64_t n;

	if (q->kind == PK_CHECK)
		return 8u + q->id_len;
	n = 11u + q->id_len + 3u;
	for (unsigned k = 0; k < s->a.npiece; k++)
		n += s->a.piece[k].len;
	return n;
}

static bool cmd_push(struct pa_conn *c, uint32_t slot, enum pa_kind kind)
{
	const struct pa_slot *s = &c->pa->slot[slot];
	struct pa_cmd *q;

	if (c->cn == c->ccap)
		return false;
	q = cmd_at(c, c->cn++);
	q->slot = slot;
	q->kind = (uint8_t)kind;
	q->stale = 0;
	q->id_len = s->a.id_len;
	memcpy(q->id, s->a.id, s->a.id_len + 1u);
	c->out_total += cmd_octets(q, s);
	q->end = c->out_total;
	return true;
}

/* ------------------------------------------------------------ answers */

static struct pa_conn *slot_conn(struct fg_portack *pa, const struct pa_slot *s, unsigned d)
{
	for (unsigned i = 0; i < pa->nds; i++)
		if (pa->ds[i].d == d)
			return &pa->ds[i].conns[s->conn[d]];
	return NULL;
}

/* Step 3: one answer line on a ready connection. */
static void answer(struct pa_conn *c, int code, const char *rest, const char *line)
{
	struct fg_portack *pa = c->pa;
	struct pa_cmd *q;
	struct pa_slot *s;
	size_t n = strcspn(rest, " \r");

	if (c->cn == 0 || c->nw == 0 || code == 400) {
		count(pa, FG_CTR_RELAY_PROTOCOL_ERRORS, code != 400);
		conn_fail(c, code == 400 ? FG_CTR_RELAY_ACK_SPILL_REFUSED : FG_CTR_RELAY_ACK_SPILL_EOF,
			  code == 400 ? "400 from the downstream" : "an answer to nothing sent");
		return;
	}
	q = cmd_at(c, 0);
	if (n != q->id_len || memcmp(rest, q->id, n) != 0) {
		char why[900];

		snprintf(why, sizeof(why), "answer \"%.500s\" out of step (expected %s)", line,
			 q->id);
		count(pa, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
		conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, why);
		return;
	}
	s = q->stale ? NULL : &pa->slot[q->slot];
	if (q->kind == PK_CHECK) {
		if (s)
			fg_ackrule_checked(&s->m, code);
	} else {
		count(pa, fg_ackrule_code_counter(code), 1);
		if (s)
			fg_ackrule_answer(&s->m, c->ds->d, code, pa->ack_mask);
	}
	c->ch = (c->ch + 1) % c->ccap;
	c->cn--;
	c->nw--;
}

/* A complete line in the handshake or on a ready connection. */
static void line_in(struct pa_conn *c, char *line)
{
	char *rest;
	long code = strtol(line, &rest, 10);

	if (rest == line || code < 100 || code > 599) {
		count(c->pa, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
		conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "a line without an answer code");
		return;
	}
	rest += strspn(rest, " ");
	switch (c->st) {
	case PC_GREETING:
		if (code != 200 && code != 201) {
			conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "greeting refused");
			return;
		}
		c->st = PC_MODE;
		c->off = 0;
		if (fg_tcp_send(c->tc, "MODE STREAM\r\n", 13) != 13)
			conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "no room for MODE STREAM");
		return;
	case PC_MODE:
		if (code != 203) {
			FG_LOG_WARN(PA, "downstream %s answered MODE STREAM with %ld: it does not "
				    "stream; its articles take the queue's path", c->ds->cfg->name, code);
			c->ds->no_stream = true;
			count(c->pa, FG_CTR_PORTACK_NOT_STREAMING, 1);
			conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "not streaming");
			return;
		}
		c->st = PC_READY;
		c->fails = 0;
		count(c->pa, FG_CTR_PORTACK_READY, 1);
		return;
	case PC_READY:
		answer(c, (int)code, rest, line);
		return;
	default:
		return;
	}
}

/* ------------------------------------------------------------ deciding */

/* Step 5, first half: abort every connection still writing the article. */
static void unref(struct fg_portack *pa, uint32_t i)
{
	struct pa_slot *s = &pa->slot[i];

	for (unsigned d = 0; d < FG_CONFIG_MAX_DOWNSTREAMS; d++) {
		struct pa_conn *c;

		if (!(s->m.sent & bit(d)))
			continue;
		c = slot_conn(pa, s, d);
		for (unsigned k = c ? c->nw : 0; c && k < c->cn; k++) {
			if (cmd_at(c, k)->slot == i && !cmd_at(c, k)->stale) {
				count(pa, FG_CTR_PORTACK_ABORTED, 1);
				conn_fail(c, FG_CTR_RELAY_ACK_SPILL_TIMEOUT,
					  "an article half written reached its result: aborted");
				break;
			}
		}
	}
}

static void report(struct fg_portack *pa, uint32_t i, enum fg_relay_ack what)
{
	struct pa_slot *s = &pa->slot[i];

	for (unsigned d = 0; d < FG_CONFIG_MAX_DOWNSTREAMS; d++) {
		struct pa_conn *c;

		if (!(s->m.sent & bit(d)) || !(c = slot_conn(pa, s, d)))
			continue;
		for (unsigned k = 0; k < c->cn; k++)
			if (cmd_at(c, k)->slot == i)
				cmd_at(c, k)->stale = 1;
	}
	s->res = (struct fg_relay_ack_result){ .cookie = s->a.cookie, .ctx = s->a.ctx, .what = what };
	if (what == FG_RELAY_ACK_SPILL)
		for (unsigned d = 0; d < FG_CONFIG_MAX_DOWNSTREAMS; d++)
			if (s->m.spill & bit(d))
				s->res.spill.ident[s->res.spill.n++] = pa->p.cfg->downstream[d].ident;
	fg_ackrule_count(&s->m, what, pa->p.stats);
	pa->res[(pa->rh + pa->rn++) % pa->cap] = i;
}

static bool send_check(struct fg_portack *pa, uint32_t i)
{
	struct pa_slot *s = &pa->slot[i];

	for (unsigned d = 0; d < FG_CONFIG_MAX_DOWNSTREAMS; d++) {
		struct pa_conn *c;

		if (!(s->m.refused & bit(d)) || !(c = slot_conn(pa, s, d)))
			continue;
		if (c->st != PC_READY || !cmd_push(c, i, PK_CHECK))
			return false;
		s->m.checking = true;
		conn_write(c);
		return c->st == PC_READY;
	}
	return false;
}

/* Step 4: true when the article's result was given. */
static bool settle(struct fg_portack *pa, uint32_t i)
{
	struct pa_slot *s = &pa->slot[i];
	bool late = pa->now >= s->a.deadline_ns;
	int what = fg_ackrule_decide(&s->m, pa->ack_mask, late);

	if (what == FG_ACKRULE_WAIT)
		return false;
	unref(pa, i);
	if (what == FG_ACKRULE_CHECK) {
		if (send_check(pa, i))
			return false;
		fg_ackrule_checked(&s->m, 0);
		what = fg_ackrule_decide(&s->m, pa->ack_mask, late);
	}
	report(pa, i, (enum fg_relay_ack)what);
	return true;
}

static void settle_all(struct fg_portack *pa)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < pa->nlive; k++)
		if (!settle(pa, pa->live[k]))
			pa->live[j++] = pa->live[k];
	pa->nlive = j;
}

/* ------------------------------------------------------------ sending */

static bool conn_ready(const struct pa_conn *c)
{
	return c->st == PC_READY;
}

/* What is on its way on the connection (PA_BACKLOG_MAX). */
static uint64_t backlog(const struct pa_conn *c)
{
	return c->out_total - c->out_done + (c->tc ? fg_tcp_conn_unacked(c->tc) : 0);
}

static struct pa_conn *pick_conn(struct pa_ds *ds, uint64_t need)
{
	struct pa_conn *best = NULL;

	for (unsigned i = 0; i < ds->nconn; i++) {
		struct pa_conn *c = &ds->conns[i];

		if (conn_ready(c) && c->cn < ds->cfg->window && c->cn + PA_CHECKS <= c->ccap &&
		    (backlog(c) == 0 || backlog(c) + need <= PA_BACKLOG_MAX) &&
		    (!best || c->cn < best->cn))
			best = c;
	}
	return best;
}

static bool any_ready(const struct pa_ds *ds)
{
	for (unsigned i = 0; i < ds->nconn; i++)
		if (conn_ready(&ds->conns[i]))
			return true;
	return false;
}

/* Step 2 for one article: every downstream of its route not yet sent. */
static void send_one(struct fg_portack *pa, uint32_t i)
{
	struct pa_slot *s = &pa->slot[i];
	uint8_t todo = s->m.want & (uint8_t)~(s->m.sent | s->m.final | s->m.spill);

	for (unsigned k = 0; todo && k < pa->nds; k++) {
		struct pa_ds *ds = &pa->ds[k];
		struct pa_conn *c;

		if (!(todo & bit(ds->d)))
			continue;
		c = pick_conn(ds, s->a.octets);
		if (!c) {
			if (!any_ready(ds))
				fg_ackrule_spill(&s->m, ds->d, FG_CTR_RELAY_ACK_SPILL_EOF);
			continue;
		}
		fg_failpoint("ack-before-forward");
		cmd_push(c, i, PK_TAKETHIS);
		s->m.sent |= bit(ds->d);
		s->conn[ds->d] = (uint8_t)(c - ds->conns);
		count(pa, FG_CTR_PORTACK_OFFERED, 1);
		conn_write(c);
	}
}

static void send_pending(struct fg_portack *pa)
{
	for (uint32_t k = 0; k < pa->nlive; k++)
		send_one(pa, pa->live[k]);
}

/* ------------------------------------------------------------ the acker */

static uint8_t route_mask(const struct fg_portack *pa, const struct fg_feeds_set *route)
{
	const struct fg_config *cfg = pa->p.cfg;
	uint8_t m = 0;

	for (unsigned d = 0; d < cfg->n_downstream; d++)
		if (!route || route->all || fg_feeds_has(route, cfg->downstream[d].ident))
			m |= bit(d);
	return m;
}

/* An answer overdue: a TAKETHIS whose article's result was given first. */
static bool overdue(const struct pa_ds *ds)
{
	for (unsigned i = 0; i < ds->nconn; i++) {
		const struct pa_conn *c = &ds->conns[i];

		for (unsigned k = 0; k < c->cn; k++)
			if (cmd_at(c, k)->stale && cmd_at(c, k)->kind == PK_TAKETHIS)
				return true;
	}
	return false;
}

static bool pa_can(const void *impl, const struct fg_feeds_set *route)
{
	const struct fg_portack *pa = impl;
	uint8_t m = route_mask(pa, route);

	if (!(m & pa->ack_mask) || (m & (uint8_t)~pa->port_mask) || !pa->nfree)
		return false;
	for (unsigned k = 0; k < pa->nds; k++) {
		const struct pa_ds *ds = &pa->ds[k];

		if ((m & bit(ds->d)) && (ds->no_stream || !any_ready(ds) || overdue(ds)))
			return false;
	}
	return true;
}

static int pa_send(void *impl, const struct fg_relay_ack_art *art)
{
	struct fg_portack *pa = impl;
	struct pa_slot *s;
	uint32_t i;
	int rc;

	if (!pa->nfree)
		return art->id_len == 0 || art->id_len > FG_QUEUE_ID_MAX ? -EINVAL : -EAGAIN;
	i = pa->free[pa->nfree - 1];
	s = &pa->slot[i];
	rc = fg_ackrule_art_take(&s->a, art);
	if (rc != 0)
		return rc;
	s->m = (struct fg_ackrule_marks){ .want = route_mask(pa, art->route) & pa->port_mask,
					  .cause = FG_CTR_RELAY_ACK_SPILL_EOF };
	pa->nfree--;
	pa->live[pa->nlive++] = i;
	send_one(pa, i);
	settle_all(pa);
	return 0;
}

static unsigned pa_results(void *impl, fg_relay_ack_fn *fn, void *arg)
{
	struct fg_portack *pa = impl;
	unsigned n = 0;

	while (pa->rn) {
		uint32_t i = pa->res[pa->rh];
		struct fg_relay_ack_result res = pa->slot[i].res;

		pa->rh = (pa->rh + 1) % pa->cap;
		pa->rn--;
		pa->free[pa->nfree++] = i;
		fn(arg, &res);
		n++;
	}
	return n;
}

static unsigned pa_out(const void *impl)
{
	const struct fg_portack *pa = impl;

	return pa->cap - pa->nfree;
}

static void pa_destroy(void *impl)
{
	struct fg_portack *pa = impl;

	if (!pa)
		return;
	for (uint32_t i = 0; pa->slot && i < pa->cap; i++)
		fg_ackrule_art_free(&pa->slot[i].a);
	for (unsigned i = 0; pa->conns && i < pa->nconns; i++)
		free(pa->conns[i].cmd);
	free(pa->conns);
	free(pa->slot);
	free(pa->free);
	free(pa->live);
	free(pa->res);
	free(pa);
}

static const struct fg_relay_acker_ops pa_acker_ops = {
	.can = pa_can, .send = pa_send, .results = pa_results, .out = pa_out,
	.destroy = pa_destroy,
};

/* ------------------------------------------------------------ TCP's calls */

static uint32_t on_data(void *ctx, struct fg_tcp_conn *tc, const struct fg_iov *iov, unsigned n)
{
	struct pa_conn *c = ctx;
	uint32_t took = 0;

	(void)tc;
	for (unsigned k = 0; k < n && c->tc; k++) {
		for (uint32_t j = 0; j < iov[k].len && c->tc; j++) {
			char ch = (char)iov[k].base[j];

			took++;
			if (ch != '\n') {
				if (c->ilen == sizeof(c->ibuf) - 1) {
					conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "answer line too long");
					break;
				}
				c->ibuf[c->ilen++] = ch;
				continue;
			}
			if (c->ilen && c->ibuf[c->ilen - 1] == '\r')
				c->ilen--;
			c->ibuf[c->ilen] = '\0';
			c->ilen = 0;
			line_in(c, c->ibuf);
		}
	}
	/* the answers may have made room or results */
	send_pending(c->pa);
	settle_all(c->pa);
	return took;
}

static void on_eof(void *ctx, struct fg_tcp_conn *tc)
{
	struct pa_conn *c = ctx;

	(void)tc;
	conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "the downstream closed the connection");
	settle_all(c->pa);
}

static void on_writable(void *ctx, struct fg_tcp_conn *tc)
{
	struct pa_conn *c = ctx;

	(void)tc;
	conn_write(c);
	if (!c->tc)
		settle_all(c->pa);
}

static void on_close(void *ctx, struct fg_tcp_conn *tc, enum fg_tcp_close_reason why)
{
	struct pa_conn *c = ctx;
	char what[64];

	(void)tc;
	snprintf(what, sizeof(what), "closed by TCP (%s)", fg_tcp_close_reason_name(why));
	c->tc = NULL;	/* TCP ends it: no abort */
	conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, what);
	settle_all(c->pa);
}

static void on_connect(void *ctx, struct fg_tcp_conn *tc)
{
	struct pa_conn *c = ctx;

	(void)tc;
	c->st = PC_GREETING;
}

const struct fg_tcp_app_ops fg_portack_tcp_ops = {
	.on_data = on_data, .on_eof = on_eof, .on_writable = on_writable,
	.on_close = on_close, .on_connect = on_connect,
};

/* ------------------------------------------------------------ set-up, poll */

static int conns_build(struct fg_portack *pa)
{
	const struct fg_config *cfg = pa->p.cfg;
	unsigned total = 0, at = 0;

	for (unsigned d = 0; d < cfg->n_downstream; d++) {
		const struct fg_config_downstream *ds = &cfg->downstream[d];

		if (ds->acknowledges && ds->mode == FG_DOWNSTREAM_STREAM)
			pa->ack_mask |= bit(d);
		if (!fg_portack_takes(cfg, ds))
			continue;
		pa->port_mask |= bit(d);
		pa->ds[pa->nds++] = (struct pa_ds){ .cfg = ds, .d = d, .nconn = ds->connections };
		total += ds->connections;
	}
	if (!pa->nds)
		return -ENOENT;
	pa->conns = calloc(total, sizeof(*pa->conns));
	if (!pa->conns)
		return -ENOMEM;
	pa->nconns = total;
	for (unsigned k = 0; k < pa->nds; k++) {
		struct pa_ds *ds = &pa->ds[k];

		ds->conns = &pa->conns[at];
		at += ds->nconn;
		for (unsigned i = 0; i < ds->nconn; i++) {
			struct pa_conn *c = &ds->conns[i];

			c->pa = pa;
			c->ds = ds;
			c->ccap = ds->cfg->window + PA_CHECKS;
			c->cmd = calloc(c->ccap, sizeof(*c->cmd));
			if (!c->cmd)
				return -ENOMEM;
		}
	}
	return 0;
}

struct fg_portack *fg_portack_create(const struct fg_portack_params *p)
{
	struct fg_portack *pa = calloc(1, sizeof(*pa));
	uint32_t cap = 1;

	if (!pa)
		return NULL;
	pa->p = *p;
	if (!pa->p.reconnect_min_ns)
		pa->p.reconnect_min_ns = PA_RECONNECT_MIN_NS;
	if (!pa->p.reconnect_max_ns)
		pa->p.reconnect_max_ns = PA_RECONNECT_MAX_NS;
	while (cap < (p->max_pending ? p->max_pending : 4096u))
		cap <<= 1;
	pa->cap = cap;
	pa->slot = calloc(cap, sizeof(*pa->slot));
	pa->free = calloc(cap, sizeof(*pa->free));
	pa->live = calloc(cap, sizeof(*pa->live));
	pa->res = calloc(cap, sizeof(*pa->res));
	if (!pa->slot || !pa->free || !pa->live || !pa->res || conns_build(pa) != 0) {
		pa_destroy(pa);
		return NULL;
	}
	for (uint32_t i = 0; i < cap; i++)
		pa->free[i] = cap - 1 - i;
	pa->nfree = cap;
	return pa;
}

void fg_portack_attach(struct fg_portack *pa, struct fg_tcp *tcp, const struct fg_endpoint *local)
{
	pa->tcp = tcp;
	pa->local = *local;
}

struct fg_relay_acker *fg_portack_acker(struct fg_portack *pa)
{
	FG_ASSERT(!pa->acker);
	pa->acker = fg_relay_acker_wrap(&pa_acker_ops, pa);
	return pa->acker;
}

bool fg_portack_owns(const struct fg_portack *pa, const void *ctx)
{
	uintptr_t a = (uintptr_t)ctx, lo;

	if (!pa)
		return false;
	lo = (uintptr_t)pa->conns;
	return a >= lo && a < lo + pa->nconns * sizeof(*pa->conns);
}

void fg_portack_set_time(struct fg_portack *pa, uint64_t now_ns)
{
	pa->now = now_ns;
}

unsigned fg_portack_poll(struct fg_portack *pa, uint64_t now_ns)
{
	unsigned before = pa->rn;

	pa->now = now_ns;
	for (unsigned i = 0; pa->tcp && !pa->ended && i < pa->nconns; i++) {
		struct pa_conn *c = &pa->conns[i];

		if (c->st == PC_IDLE && !c->ds->no_stream && now_ns >= c->retry_ns)
			conn_open(c);
		else if (c->st != PC_IDLE && c->st != PC_READY && now_ns >= c->due_ns)
			conn_fail(c, FG_CTR_RELAY_ACK_SPILL_EOF, "no handshake in time");
		else if (c->st == PC_READY)
			conn_write(c);
	}
	send_pending(pa);
	settle_all(pa);
	return pa->rn - before;
}

uint64_t fg_portack_next(const struct fg_portack *pa)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t k = 0; k < pa->nlive; k++)
		next = FG_MIN(next, pa->slot[pa->live[k]].a.deadline_ns);
	for (unsigned i = 0; i < pa->nconns; i++) {
		const struct pa_conn *c = &pa->conns[i];

		if (c->st == PC_IDLE && !c->ds->no_stream && !pa->ended && pa->tcp)
			next = FG_MIN(next, c->retry_ns);
		else if (c->st != PC_READY && c->st != PC_IDLE)
			next = FG_MIN(next, c->due_ns);
	}
	return pa->rn ? 0 : next;
}

unsigned fg_portack_ready(const struct fg_portack *pa, unsigned d)
{
	unsigned n = 0;

	for (unsigned k = 0; k < pa->nds; k++)
		if (pa->ds[k].d == d)
			for (unsigned i = 0; i < pa->ds[k].nconn; i++)
				n += conn_ready(&pa->ds[k].conns[i]);
	return n;
}

void fg_portack_abort_all(struct fg_portack *pa)
{
	if (!pa)
		return;
	pa->ended = true;
	for (unsigned i = 0; i < pa->nconns; i++)
		if (pa->conns[i].st != PC_IDLE)
			conn_fail(&pa->conns[i], FG_CTR_RELAY_ACK_SPILL_EOF, "the worker ends");
	settle_all(pa);
}
