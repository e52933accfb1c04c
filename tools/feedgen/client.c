/* SPDX-License-Identifier: MIT */
/*
 * client.c — the sending side of a feed: many non-blocking connections on
 * one epoll loop, each a small state machine.
 *
 *   CONNECTING -> GREETING (200/201) -> [CAPS (101 ... ".")] ->
 *   [MODE (MODE STREAM -> 203)] -> RUN -> QUIT (205) -> DONE
 *
 * In RUN a connection keeps up to `window` commands in flight (RFC 4644
 * 2.3: pipelining is what streaming is for; answers come in command order)
 * and matches every answer to the oldest command sent: its code, and the
 * Message-ID it must repeat (RFC 4644 2.4.1, 2.5.1). The checker says what
 * to do with the offer: done, send the article, offer again later (431,
 * as innfeed does), or reconnect (400: close, reconnect, and re-offer every
 * offer that had no final answer). IHAVE is lock-step: one offer at a time.
 *
 * Offers: peer p's offer list (workload model) is dealt round-robin to its
 * connections. A connection takes, in order of priority, due retries,
 * re-offers after a reconnect, then its next fresh offer.
 *
 * --rate paces the fresh offers (a demo or a soak at a steady rate rather
 * than flat out): each of the n connections gets rate / n a second, so the
 * peers advance through their lists together, as flood-fill copies of an
 * article arrive close together; a connection's fresh offer k may go once
 * k / (rate / n) seconds have passed since the start. Retries and
 * re-offers are owed answers and are never held back. --source gives each simulated peer
 * its own address (peer i binds source + i), so that a server that maps
 * addresses to peers sees them as distinct peers.
 *
 * Output is built in a per-connection buffer (commands, headers, and the
 * body copied from the workload's pool) and written with one send() per
 * readiness; reading parses every complete line received.
 *
 * Transports: kernel sockets on an epoll loop, or with --dpdk the
 * project's own TCP over a DPDK port (dpdk.c), polled: a connection is
 * then an fg_tcp_conn whose callbacks (below, "the DPDK transport") do
 * what the epoll events do for a socket — connected, bytes in, room to
 * write, closed. Everything above the transport is the same code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feedgen.h"
#include "floodgate/log.h"
#include "floodgate/tcp.h"

#define IN_CAP (64u << 10)
#define OUT_HIGH (512u << 10)	/* stop queueing offers above this many unsent octets */
#define RECONNECT_DELAY_NS 200000000ull

enum conn_state {
	ST_IDLE = 0,		/* waiting to (re)connect */
	ST_CONNECTING, ST_GREETING, ST_CAPS, ST_MODE, ST_RUN, ST_QUIT, ST_DONE,
};

struct inflight {
	uint32_t art;
	uint8_t cmd;		/* enum fg_wlc_cmd */
	uint64_t stamp;		/* checker event stamp when sent */
	uint64_t t_ns;		/* when queued */
	uint64_t id_hash;	/* of the Message-ID the answer must repeat */
};

/* A FIFO of uint32 article indices (retries carry their due time). */
struct aring {
	uint32_t *art;
	uint64_t *due;
	uint32_t cap, head, n;
};

struct feed;

struct conn {
	int fd;
	struct fg_tcp_conn *tc;		/* --dpdk: the connection, NULL: none */
	struct feed *feed;
	enum conn_state state;
	unsigned peer, id;
	const uint32_t *list;		/* the peer's offers */
	uint64_t n_list, next, stride;	/* next = this conn's next index into list */
	uint64_t fresh;			/* fresh offers made, for --rate */
	struct inflight *infl;
	uint32_t infl_cap, infl_head, infl_n;
	struct aring retry, reoffer;
	char in[IN_CAP];
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	bool want_out;
	bool caps_list, caps_streaming;
	unsigned reconnects;
	uint64_t reconnect_at;
	uint32_t *codes;
};

struct feed {
	const struct feed_opts *o;
	const struct fg_wl *wl;
	struct fg_wlc *chk;
	struct feed_result *res;
	int ep;
	struct conn *c;
	unsigned n;
	unsigned done;
	uint8_t *tries;			/* per article and peer: 431/436 retries so far */
	uint64_t retries_pending;
	/* the server, IPv4 or IPv6; --source likewise (peer i binds to it
	 * plus i, added to its last 32 bits) */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct sockaddr_storage source;
	bool has_source;
	uint64_t t0;			/* start, for --rate */
	struct feed_dp *dp;		/* --dpdk, else NULL (sockets) */
};

/* No transport under the connection (closed, or not opened yet). */
static bool conn_gone(const struct conn *c)
{
	return c->fd < 0 && !c->tc;
}

static uint64_t id_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int aring_init(struct aring *r, uint32_t cap, bool with_due)
{
	r->cap = cap;
	r->art = malloc(sizeof(*r->art) * cap);
	r->due = with_due ? malloc(sizeof(*r->due) * cap) : NULL;
	return r->art && (!with_due || r->due) ? 0 : -ENOMEM;
}

static int aring_push(struct aring *r, uint32_t art, uint64_t due)
{
	uint32_t at;

	if (r->n == r->cap) {
		uint32_t cap = r->cap * 2;
		uint32_t *na = malloc(sizeof(*na) * cap);
		uint64_t *nd = r->due ? malloc(sizeof(*nd) * cap) : NULL;

		if (!na || (r->due && !nd)) {
			free(na);
			free(nd);
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < r->n; k++) {
			na[k] = r->art[(r->head + k) % r->cap];
			if (nd)
				nd[k] = r->due[(r->head + k) % r->cap];
		}
		free(r->art);
		free(r->due);
		r->art = na;
		r->due = nd;
		r->head = 0;
		r->cap = cap;
	}
	at = (r->head + r->n) % r->cap;
	r->art[at] = art;
	if (r->due)
		r->due[at] = due;
	r->n++;
	return 0;
}

static uint32_t aring_pop(struct aring *r)
{
	uint32_t art = r->art[r->head];

	r->head = (r->head + 1) % r->cap;
	r->n--;
	return art;
}

static void aring_free(struct aring *r)
{
	free(r->art);
	free(r->due);
}

/* ---------------------------------------------------------------- output */

static int out_reserve(struct conn *c, size_t need)
{
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + need <= c->out_cap)
		return 0;
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + need > c->out_cap) {
		size_t cap = FG_MAX(c->out_cap * 2, c->out_len + need);
		char *p = realloc(c->out, cap);

		if (!p)
			return -ENOMEM;
		c->out = p;
		c->out_cap = cap;
	}
	return 0;
}

static int out_add(struct conn *c, const char *s, size_t len)
{
	int rc = out_reserve(c, len);

	if (rc == 0) {
		memcpy(c->out + c->out_len, s, len);
		c->out_len += len;
	}
	return rc;
}

static size_t out_pending(const struct conn *c)
{
	return c->out_len - c->out_off;
}

static void infl_push(struct feed *f, struct conn *c, uint32_t art, enum fg_wlc_cmd cmd,
		      const struct fg_wl_article *a)
{
	struct inflight *e;

	FG_ASSERT(c->infl_n < c->infl_cap);
	e = &c->infl[(c->infl_head + c->infl_n) % c->infl_cap];
	e->art = art;
	e->cmd = (uint8_t)cmd;
	e->stamp = fg_wlc_stamp(f->chk);
	e->t_ns = fg_mono_ns();
	e->id_hash = id_hash(a->msgid, a->msgid_len);
	c->infl_n++;
}

/* "VERB <id>\r\n" and, for TAKETHIS/IHAVE article, the article itself. */
static int queue_cmd(struct feed *f, struct conn *c, uint32_t art, enum fg_wlc_cmd cmd)
{
	static const char *const verbs[] = {
		[FG_WLC_CHECK] = "CHECK ", [FG_WLC_TAKETHIS] = "TAKETHIS ", [FG_WLC_IHAVE] = "IHAVE ",
	};
	struct fg_wl_article a;
	size_t head_len;
	int rc;

	fg_wl_article(f->wl, art, &a);
	if (cmd != FG_WLC_IHAVE_ART) {
		rc = out_reserve(c, a.msgid_len + 16);
		if (rc < 0)
			return rc;
		c->out_len += (size_t)sprintf(c->out + c->out_len, "%s%s\r\n", verbs[cmd], a.msgid);
	}
	if (cmd == FG_WLC_TAKETHIS || cmd == FG_WLC_IHAVE_ART) {
		rc = out_reserve(c, FG_WL_HDR_MAX + a.body_len + 3);
		if (rc < 0)
			return rc;
		head_len = fg_wl_wire_head(f->wl, &a, c->peer, c->out + c->out_len, FG_WL_HDR_MAX);
		c->out_len += head_len;
		memcpy(c->out + c->out_len, fg_wl_wire_body(f->wl, &a), a.body_len);
		c->out_len += a.body_len;
		memcpy(c->out + c->out_len, ".\r\n", 3);
		c->out_len += 3;
		f->res->articles_sent++;
		f->res->article_bytes += head_len + a.body_len + 3;
	}
	infl_push(f, c, art, cmd, &a);
	return 0;
}

/* --rate: true while c's next fresh offer is not due yet. */
static bool rate_held(const struct feed *f, const struct conn *c, uint64_t now)
{
	double due_s;

	if (f->o->rate <= 0)
		return false;
	due_s = (double)c->fresh * (double)f->n / f->o->rate;
	return (double)(now - f->t0) / 1e9 < due_s;
}

/* The next offer for c, or false when it has none now. */
static bool next_offer(struct feed *f, struct conn *c, uint64_t now, uint32_t *art)
{
	if (c->retry.n && c->retry.due[c->retry.head] <= now) {
		*art = aring_pop(&c->retry);
		f->retries_pending--;
		f->res->retries++;
		return true;
	}
	if (c->reoffer.n) {
		*art = aring_pop(&c->reoffer);
		f->res->reoffers++;
		return true;
	}
	if (c->next < c->n_list && !rate_held(f, c, now)) {
		*art = c->list[c->next];
		c->fresh++;
		c->next += c->stride;
		f->res->offers++;
		return true;
	}
	return false;
}

static bool conn_finished(const struct conn *c)
{
	return c->infl_n == 0 && c->retry.n == 0 && c->reoffer.n == 0 && c->next >= c->n_list;
}

/* Queue offers up to the window; QUIT when everything is answered. */
static int fill(struct feed *f, struct conn *c, uint64_t now)
{
	const struct feed_opts *o = f->o;
	unsigned window = o->mode == FEED_IHAVE ? 1 : o->window;
	enum fg_wlc_cmd cmd = o->mode == FEED_CHECK ? FG_WLC_CHECK :
			      o->mode == FEED_TAKETHIS ? FG_WLC_TAKETHIS : FG_WLC_IHAVE;
	uint32_t art;
	int rc = 0;

	if (c->state != ST_RUN)
		return 0;
	while (c->infl_n < window && out_pending(c) < OUT_HIGH && next_offer(f, c, now, &art)) {
		rc = queue_cmd(f, c, art, cmd);
		if (rc < 0)
			return rc;
	}
	if (conn_finished(c)) {
		rc = out_add(c, "QUIT\r\n", 6);
		c->state = ST_QUIT;
	}
	return rc;
}

/* ---------------------------------------------------------------- sockets */

static void set_events(struct feed *f, struct conn *c)
{
	struct epoll_event ev = { .data.u32 = c->id };
	bool want = out_pending(c) > 0 || c->state == ST_CONNECTING;

	if (c->fd < 0 || want == c->want_out)
		return;	/* (--dpdk: no events; TCP asks for writes itself) */
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	epoll_ctl(f->ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = want;
}

static int dp_conn_open(struct feed *f, struct conn *c);

static int conn_open(struct feed *f, struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = c->id };
	int one = 1;

	if (f->dp)
		return dp_conn_open(f, c);
	c->fd = socket(f->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* commands are batched per write already; Nagle would only add delay */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (f->has_source) {
		struct sockaddr_storage src = f->source;
		uint8_t *last = src.ss_family == AF_INET6
			? ((struct sockaddr_in6 *)&src)->sin6_addr.s6_addr + 12
			: (uint8_t *)&((struct sockaddr_in *)&src)->sin_addr.s_addr;
		uint32_t a;

		memcpy(&a, last, 4);
		a = htonl(ntohl(a) + c->peer);
		memcpy(last, &a, 4);
		if (bind(c->fd, (const struct sockaddr *)&src, f->addrlen) < 0) {
			int rc = -errno;

			close(c->fd);
			c->fd = -1;
			return rc;
		}
	}
	if (connect(c->fd, (const struct sockaddr *)&f->addr, f->addrlen) < 0 &&
	    errno != EINPROGRESS) {
		int rc = -errno;

		close(c->fd);
		c->fd = -1;
		return rc;
	}
	c->state = ST_CONNECTING;
	c->want_out = true;
	c->in_len = 0;
	c->out_len = c->out_off = 0;
	epoll_ctl(f->ep, EPOLL_CTL_ADD, c->fd, &ev);
	return 0;
}

/* The transport goes: --dpdk in order (FIN) or reset; a socket closes. */
static void transport_close(struct feed *f, struct conn *c, bool orderly)
{
	struct fg_tcp_conn *tc = c->tc;

	if (tc) {
		c->tc = NULL;	/* a later on_close of it is not this conn's */
		if (orderly)
			fg_tcp_close(tc);
		else
			fg_tcp_abort(tc);
	}
	if (c->fd >= 0) {
		epoll_ctl(f->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

static void conn_finish(struct feed *f, struct conn *c)
{
	transport_close(f, c, true);
	if (c->state != ST_DONE) {
		c->state = ST_DONE;
		f->done++;
	}
}

/*
 * The connection is gone (400, reset, EOF): every offer without a final
 * answer is offered again on the next connection (RFC 4644 2.5.2: after
 * 400 the peer retries later), unless reconnects are used up.
 */
static void conn_lost(struct feed *f, struct conn *c, const char *why)
{
	transport_close(f, c, c->state == ST_QUIT);
	for (; c->infl_n; c->infl_n--) {
		struct inflight *e = &c->infl[c->infl_head];

		c->infl_head = (c->infl_head + 1) % c->infl_cap;
		/* the CHECK that led to a TAKETHIS in flight is already gone */
		if (e->cmd == FG_WLC_TAKETHIS || e->cmd == FG_WLC_IHAVE_ART)
			fg_wlc_answer_lost(f->chk, e->art);
		if (aring_push(&c->reoffer, e->art, 0) < 0)
			fg_wlc_mismatch(f->chk, "peer %u conn %u: out of memory re-offering", c->peer, c->id);
	}
	if (c->state == ST_QUIT) {
		conn_finish(f, c);
		return;
	}
	if (++c->reconnects > f->o->max_reconnects) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: connection lost (%s) %u times; "
				"%u offers never answered", c->peer, c->id, why, c->reconnects,
				c->reoffer.n + c->retry.n + (unsigned)((c->n_list - FG_MIN(c->next, c->n_list)) / c->stride));
		conn_finish(f, c);
		return;
	}
	f->res->reconnects++;
	c->state = ST_IDLE;
	c->reconnect_at = fg_mono_ns() + RECONNECT_DELAY_NS;
}

static void conn_write(struct feed *f, struct conn *c)
{
	while (c->tc && out_pending(c) > 0) {
		uint32_t want = (uint32_t)FG_MIN(out_pending(c), (size_t)UINT32_MAX);
		int n = fg_tcp_send(c->tc, c->out + c->out_off, want);

		if (n < 0) {
			conn_lost(f, c, "the connection can no longer send");
			return;
		}
		c->out_off += (size_t)n;
		f->res->bytes_out += (uint64_t)n;
		if ((uint32_t)n < want)
			break;	/* the send buffer is full: on_writable follows */
	}
	while (c->fd >= 0 && out_pending(c) > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, out_pending(c), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_lost(f, c, strerror(errno));
			return;
		}
		c->out_off += (size_t)n;
		f->res->bytes_out += (uint64_t)n;
	}
	set_events(f, c);
}


/* ---------------------------------------------------------------- answers */

static int parse_code(const char *line, size_t len)
{
	if (len < 3 || line[0] < '1' || line[0] > '5' || line[1] < '0' || line[1] > '9' ||
	    line[2] < '0' || line[2] > '9' || (len > 3 && line[3] != ' '))
		return -1;
	return (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
}

/* RFC 4644 2.4.1/2.5.1: the first argument of the answer is the ID. */
static bool names_id(const char *line, size_t len, uint64_t hash)
{
	size_t end = 4;

	if (len < 5)
		return false;
	while (end < len && line[end] != ' ')
		end++;
	return id_hash(line + 4, end - 4) == hash;
}

/* The cap is per peer, as a real feeder's is: peers racing for one article
 * are deferred while the winner sends it, and must not use up each
 * other's retries. */
static void on_retry(struct feed *f, struct conn *c, uint32_t art, uint64_t now)
{
	uint8_t *tries = &f->tries[(size_t)art * f->o->wl.peers + c->peer];

	if (*tries >= f->o->max_retries) {
		struct fg_wl_article a;

		fg_wl_article(f->wl, art, &a);
		fg_wlc_mismatch(f->chk, "peer %u conn %u: %s deferred %u times; given up",
				c->peer, c->id, a.msgid, *tries);
		return;
	}
	(*tries)++;
	if (aring_push(&c->retry, art, now + (uint64_t)(f->o->retry_delay * 1e9)) == 0)
		f->retries_pending++;
}

static void on_answer(struct feed *f, struct conn *c, const char *line, size_t len,
		      int code, uint64_t now)
{
	struct inflight e;
	enum fg_wlc_action act;
	bool offer;

	if (c->infl_n == 0) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: answer with no command in flight: %.*s",
				c->peer, c->id, (int)FG_MIN(len, 80u), line);
		conn_lost(f, c, "protocol error");
		return;
	}
	e = c->infl[c->infl_head];
	c->infl_head = (c->infl_head + 1) % c->infl_cap;
	c->infl_n--;
	offer = e.cmd == FG_WLC_CHECK || e.cmd == FG_WLC_IHAVE;
	fg_lathist_add(offer ? &f->res->lat_offer : &f->res->lat_article, now - e.t_ns);
	if ((e.cmd == FG_WLC_CHECK || e.cmd == FG_WLC_TAKETHIS) && code != 400 &&
	    !names_id(line, len, e.id_hash)) {
		struct fg_wl_article a;

		fg_wl_article(f->wl, e.art, &a);
		fg_wlc_mismatch(f->chk, "peer %u conn %u: answer to %s does not name it "
				"(RFC 4644 2.4.1): %.*s", c->peer, c->id, a.msgid,
				(int)FG_MIN(len, 80u), line);
		return;
	}
	act = fg_wlc_response(f->chk, e.art, e.cmd, code, e.stamp, c->peer, c->id);
	if (act == FG_WLC_SEND) {
		if (queue_cmd(f, c, e.art, e.cmd == FG_WLC_CHECK ? FG_WLC_TAKETHIS :
							     FG_WLC_IHAVE_ART) < 0)
			fg_wlc_mismatch(f->chk, "out of memory queueing an article");
	} else if (act == FG_WLC_RETRY) {
		on_retry(f, c, e.art, now);
	} else if (act == FG_WLC_RECONNECT) {
		/* RFC 4644 2.5.2: 400 to TAKETHIS, the article was not taken */
		aring_push(&c->reoffer, e.art, 0);
		conn_lost(f, c, "400");
	}
}

/* After the greeting (and capabilities): MODE STREAM, or straight to work. */
static void start_session(struct feed *f, struct conn *c, uint64_t now)
{
	if (f->o->mode != FEED_IHAVE && f->o->mode_stream) {
		out_add(c, "MODE STREAM\r\n", 13);
		c->state = ST_MODE;
		return;
	}
	c->state = ST_RUN;
	fill(f, c, now);
}

static void on_caps_line(struct feed *f, struct conn *c, const char *line, size_t len,
			 int code, uint64_t now)
{
	if (!c->caps_list) {
		if (code != 101) {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: CAPABILITIES answered %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			conn_finish(f, c);
			return;
		}
		c->caps_list = true;
		return;
	}
	if (len == 1 && line[0] == '.') {
		c->caps_list = false;
		if (f->o->mode != FEED_IHAVE && !c->caps_streaming) {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: server does not list STREAMING "
					"(RFC 4644 2.1)", c->peer, c->id);
			conn_finish(f, c);
			return;
		}
		start_session(f, c, now);
		return;
	}
	if (len >= 9 && strncasecmp(line, "STREAMING", 9) == 0 && (len == 9 || line[9] == ' '))
		c->caps_streaming = true;
}

static void on_line(struct feed *f, struct conn *c, const char *line, size_t len, uint64_t now)
{
	int code = parse_code(line, len);

	if (c->state == ST_CAPS && c->caps_list) {
		on_caps_line(f, c, line, len, code, now);
		return;
	}
	if (code < 0) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: not a response line: %.*s",
				c->peer, c->id, (int)FG_MIN(len, 80u), line);
		conn_lost(f, c, "protocol error");
		return;
	}
	c->codes[code]++;
	switch (c->state) {
	case ST_GREETING:
		if (code == 200 || code == 201) {
			if (f->o->capabilities) {
				out_add(c, "CAPABILITIES\r\n", 14);
				c->state = ST_CAPS;
			} else {
				start_session(f, c, now);
			}
		} else if (code == 400) {
			conn_lost(f, c, "greeting 400");	/* busy: come back later */
		} else {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: refused at greeting: %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			conn_finish(f, c);
		}
		break;
	case ST_CAPS:
		on_caps_line(f, c, line, len, code, now);
		break;
	case ST_MODE:
		if (code == 203) {
			c->state = ST_RUN;
			fill(f, c, now);
		} else {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: MODE STREAM answered %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			conn_finish(f, c);
		}
		break;
	case ST_RUN:
		on_answer(f, c, line, len, code, now);
		break;
	case ST_QUIT:
		if (code == 205)
			conn_finish(f, c);
		else
			on_answer(f, c, line, len, code, now);
		break;
	default:
		break;
	}
}

/* Every complete line of c->in; false when the connection went meanwhile. */
static bool conn_lines(struct feed *f, struct conn *c, uint64_t now)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);
		size_t len;

		if (!nl)
			break;
		len = (size_t)(nl - (c->in + start));
		if (len > 0 && nl[-1] == '\r')
			len--;
		on_line(f, c, c->in + start, len, now);
		if (conn_gone(c))
			return false;
		start = (size_t)(nl - c->in) + 1;
	}
	if (start == 0 && c->in_len == IN_CAP) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: response line over %u octets",
				c->peer, c->id, IN_CAP);
		conn_lost(f, c, "protocol error");
		return false;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	return true;
}

static void conn_read(struct feed *f, struct conn *c, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);

		if (n == 0) {
			conn_lost(f, c, "closed by the server");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				conn_lost(f, c, strerror(errno));
			return;
		}
		f->res->bytes_in += (uint64_t)n;
		c->in_len += (size_t)n;
		if (!conn_lines(f, c, now))
			return;
	}
}

/* ---------------------------------------------------------------- the DPDK transport */

static void dp_connected(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	(void)tc;
	c->state = ST_GREETING;
}

/* Bytes in: as much as c->in holds; the rest stays queued in TCP (its
 * window closes) until the lines before it are read. */
static uint32_t dp_data(void *ctx, struct fg_tcp_conn *tc, const struct fg_iov *iov, unsigned n)
{
	struct conn *c = ctx;
	struct feed *f = c->feed;
	uint64_t now = fg_mono_ns();
	uint32_t took = 0;

	(void)tc;
	for (unsigned i = 0; i < n && c->in_len < IN_CAP; i++) {
		size_t k = FG_MIN((size_t)iov[i].len, IN_CAP - c->in_len);

		memcpy(c->in + c->in_len, iov[i].base, k);
		c->in_len += k;
		took += (uint32_t)k;
	}
	f->res->bytes_in += took;
	if (conn_lines(f, c, now)) {
		fill(f, c, now);
		conn_write(f, c);
	}
	return took;
}

static void dp_eof(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	(void)tc;
	conn_lost(c->feed, c, "closed by the server");
}

static void dp_writable(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	(void)tc;
	conn_write(c->feed, c);
}

static void dp_closed(void *ctx, struct fg_tcp_conn *tc, enum fg_tcp_close_reason why)
{
	struct conn *c = ctx;

	if (c->tc != tc)
		return;		/* one this conn closed itself */
	c->tc = NULL;
	conn_lost(c->feed, c, fg_tcp_close_reason_name(why));
}

static const struct fg_tcp_app_ops dp_ops = {
	.on_data = dp_data, .on_eof = dp_eof, .on_writable = dp_writable,
	.on_close = dp_closed, .on_connect = dp_connected,
};

static int dp_conn_open(struct feed *f, struct conn *c)
{
	struct fg_endpoint local = { .family = AF_INET }, peer = { .family = AF_INET };
	const struct sockaddr_in *sa = (const struct sockaddr_in *)&f->addr;
	uint32_t a = feed_dp_addr(f->dp);
	int err = 0;

	if (f->addr.ss_family != AF_INET)
		return -EAFNOSUPPORT;	/* --dpdk opens IPv4 connections only */
	memcpy(local.addr, &a, 4);
	memcpy(peer.addr, &sa->sin_addr.s_addr, 4);
	peer.port = ntohs(sa->sin_port);
	c->tc = fg_tcp_connect(feed_dp_tcp(f->dp), &local, &peer, c, fg_mono_ns(), &err);
	if (!c->tc)
		return err;
	c->state = ST_CONNECTING;
	c->in_len = 0;
	c->out_len = c->out_off = 0;
	return 0;
}

/* ---------------------------------------------------------------- the loop */

static void on_event(struct feed *f, struct conn *c, uint32_t events, uint64_t now)
{
	if (c->state == ST_CONNECTING) {
		int err = 0;
		socklen_t el = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			conn_lost(f, c, strerror(err));
			return;
		}
		c->state = ST_GREETING;
		set_events(f, c);
		return;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		conn_read(f, c, now);
	if (conn_gone(c))
		return;
	fill(f, c, now);
	conn_write(f, c);
}

/* Reconnects and retries that fell due. */
static void on_timers(struct feed *f, uint64_t now)
{
	for (unsigned i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];

		if (c->state == ST_IDLE && c->reconnect_at <= now) {
			int rc = conn_open(f, c);

			if (rc < 0)
				conn_lost(f, c, strerror(-rc));
		} else if (c->state == ST_RUN && ((c->retry.n && c->retry.due[c->retry.head] <= now) ||
						  (f->o->rate > 0 && c->next < c->n_list))) {
			fill(f, c, now);
			conn_write(f, c);
		}
	}
}

static void progress(const struct feed *f, uint64_t t0, uint64_t now, uint64_t total)
{
	double el = (double)(now - t0) / 1e9;
	const struct feed_result *r = f->res;

	fprintf(stderr, "\r[feedgen] %6.1f s  offers %llu/%llu (%4.1f%%)  %8.0f offers/s  "
		"accepted %llu  mismatches %llu   ", el, (unsigned long long)r->offers,
		(unsigned long long)total, total ? 100.0 * (double)r->offers / (double)total : 0.0,
		el > 0 ? (double)r->offers / el : 0.0,
		(unsigned long long)fg_wlc_accepted(f->chk),
		(unsigned long long)fg_wlc_mismatches(f->chk));
}

static int feed_setup(struct feed *f)
{
	const struct feed_opts *o = f->o;

	f->n = o->wl.peers * o->conns;
	f->c = calloc(f->n, sizeof(*f->c));
	f->tries = calloc((size_t)o->wl.articles * o->wl.peers, 1);
	f->res->conn_codes = calloc(f->n, sizeof(*f->res->conn_codes));
	f->res->conn_peer = calloc(f->n, sizeof(unsigned));
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!f->c || !f->tries || !f->res->conn_codes || !f->res->conn_peer || f->ep < 0)
		return -ENOMEM;
	f->res->n_conns = f->n;
	for (unsigned i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];

		c->fd = -1;
		c->feed = f;
		c->id = i;
		c->peer = i / o->conns;
		c->list = fg_wl_peer_offers(f->wl, c->peer, &c->n_list);
		c->next = i % o->conns;
		c->stride = o->conns;
		c->infl_cap = 2 * o->window + 4;
		c->infl = calloc(c->infl_cap, sizeof(*c->infl));
		c->codes = f->res->conn_codes[i];
		f->res->conn_peer[i] = c->peer;
		if (!c->infl || aring_init(&c->retry, 64, true) < 0 ||
		    aring_init(&c->reoffer, 64, false) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void feed_teardown(struct feed *f)
{
	for (unsigned i = 0; f->c && i < f->n; i++) {
		if (f->c[i].fd >= 0)
			close(f->c[i].fd);
		free(f->c[i].infl);
		free(f->c[i].out);
		aring_free(&f->c[i].retry);
		aring_free(&f->c[i].reoffer);
	}
	free(f->c);
	free(f->tries);
	if (f->ep >= 0)
		close(f->ep);
	feed_dp_close(f->dp);
}

/* A run that hit --timeout: say how much was left unanswered. */
static void report_unfinished(struct feed *f)
{
	uint64_t left = 0;

	for (unsigned i = 0; i < f->n; i++) {
		const struct conn *c = &f->c[i];

		if (c->state == ST_DONE)
			continue;
		left += c->infl_n + c->retry.n + c->reoffer.n +
			(c->next < c->n_list ? (c->n_list - c->next + c->stride - 1) / c->stride : 0);
	}
	fg_wlc_mismatch(f->chk, "run timed out after %.0f s with %llu offers unanswered",
			f->o->timeout, (unsigned long long)left);
	f->res->timed_out = true;
}

static void feed_loop(struct feed *f, uint64_t t0)
{
	struct epoll_event ev[256];
	uint64_t total = fg_wl_total_offers(f->wl), next_progress = t0 + 1000000000ull;
	bool show = f->o->progress > 0 || (f->o->progress < 0 && isatty(2));

	while (f->done < f->n) {
		int n = f->dp ? 0 : epoll_wait(f->ep, ev, 256,
					       f->retries_pending || f->o->rate > 0 ? 10 : 100);
		uint64_t now = fg_mono_ns();

		/* --dpdk polls: frames in, TCP's callbacks do the rest */
		if (f->dp)
			feed_dp_poll(f->dp, now);
		for (int i = 0; i < n; i++) {
			struct conn *c = &f->c[ev[i].data.u32];

			if (c->fd >= 0)
				on_event(f, c, ev[i].events, now);
		}
		on_timers(f, now);
		if (show && now >= next_progress) {
			progress(f, t0, now, total);
			next_progress = now + 1000000000ull;
		}
		if (f->o->timeout > 0 && (double)(now - t0) / 1e9 > f->o->timeout) {
			report_unfinished(f);
			break;
		}
	}
	if (show) {
		progress(f, t0, fg_mono_ns(), total);
		fputc('\n', stderr);
	}
}

/* "198.18.0.2" or "fd00::2" with `port`: 0, or -EINVAL. */
static int sockaddr_of(const char *s, uint16_t port, struct sockaddr_storage *out,
		       socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

int feed_run(const struct feed_opts *o, const struct fg_wl *wl, struct fg_wlc *chk,
	     struct feed_result *res)
{
	struct feed f = { .o = o, .wl = wl, .chk = chk, .res = res, .ep = -1 };
	double cpu0, srv0 = -1;
	uint64_t t0;
	int rc;

	fg_lathist_init(&res->lat_offer);
	fg_lathist_init(&res->lat_article);
	if (sockaddr_of(o->host, o->port, &f.addr, &f.addrlen) != 0) {
		FG_LOG_ERR("feedgen", "not an IPv4 or IPv6 address: %s", o->host);
		return -EINVAL;
	}
	if (o->source[0]) {
		socklen_t len;

		if (sockaddr_of(o->source, 0, &f.source, &len) != 0 ||
		    f.source.ss_family != f.addr.ss_family) {
			FG_LOG_ERR("feedgen", "--source: not an address of --host's family: %s",
				   o->source);
			return -EINVAL;
		}
		f.has_source = true;
	}
	rc = feed_setup(&f);
	if (rc < 0)
		goto out_teardown;
	if (o->dpdk) {
		struct feed_dp_params dpp = { .port = o->dpdk, .queues = o->dpdk_queues,
					      .member = o->dpdk_member,
					      .n_members = o->n_dpdk_members };

		if (inet_pton(AF_INET, o->dpdk_addr, &dpp.addr) != 1) {
			FG_LOG_ERR("feedgen", "--dpdk-addr: not an IPv4 address: %s", o->dpdk_addr);
			rc = -EINVAL;
			goto out_teardown;
		}
		if (o->has_dpdk_peer_mac) {
			if (inet_pton(AF_INET, o->host, &dpp.peer) != 1) {
				FG_LOG_ERR("feedgen", "--dpdk-peer-mac: --host is not an IPv4 address: "
					   "%s", o->host);
				rc = -EINVAL;
				goto out_teardown;
			}
			dpp.peer_mac = o->dpdk_peer_mac;
		}
		f.dp = feed_dp_open(&dpp, &dp_ops, &f, f.n);
		if (!f.dp) {
			rc = -EIO;
			goto out_teardown;
		}
	}
	if (o->server_pid > 0)
		srv0 = feed_proc_cpu(o->server_pid);
	cpu0 = feed_self_cpu();
	t0 = fg_mono_ns();
	f.t0 = t0;
	for (unsigned i = 0; i < f.n; i++) {
		int orc = conn_open(&f, &f.c[i]);

		if (orc < 0)
			conn_lost(&f, &f.c[i], strerror(-orc));
	}
	feed_loop(&f, t0);
	res->elapsed = (double)(fg_mono_ns() - t0) / 1e9;
	if (f.dp)
		feed_dp_linger(f.dp, 2000000000ull);	/* the closes finish */
	res->cpu_self = feed_self_cpu() - cpu0;
	res->cpu_server = srv0 >= 0 ? feed_proc_cpu(o->server_pid) - srv0 : -1;
	res->accepted = fg_wlc_accepted(chk);
	for (unsigned i = 0; i < f.n; i++)
		for (unsigned k = 0; k < FEED_CODES; k++)
			res->codes[k] += res->conn_codes[i][k];
out_teardown:
	feed_teardown(&f);
	return rc;
}
