/* SPDX-License-Identifier: MIT */
/*
 * rconn.c — one feed connection to a downstream news server: the client
 * side of RFC 3977 / RFC 4644.
 *
 *   connect -> greeting (200, 201) -> CAPABILITIES (101 list, or an old
 *   server's 500) -> MODE STREAM (203) when the downstream's mode is
 *   stream and the server lists STREAMING (or lists nothing) -> READY
 *
 * READY, streaming: TAKETHIS <id> + article + "." pipelined, at most
 * `window` unanswered; with check-first a CHECK goes first and its 238
 * puts the TAKETHIS behind the commands already in flight. Not streaming:
 * IHAVE <id>, the article after 335, one at a time (RFC 3977 6.3.2).
 * Answers arrive in command order (RFC 3977 3.5); every CHECK/TAKETHIS
 * answer must name the command's Message-ID (RFC 4644 2.4.1, 2.5.1), or
 * the connection is out of step and is closed.
 *
 * The article octets are the queue record's, unchanged: copied into the
 * output buffer when small (so many go out in one send), otherwise sent
 * straight from the segment file with sendfile(2). On an #ack connection
 * (end-to-end acknowledgement, rack.c) they are the engine's held receive
 * buffers, sent in place: the output is a list of items — octets of
 * obuf, a range of a segment file, or memory the relay does not own —
 * written with sendmsg (many items at once) or sendfile.
 *
 * Any failure — refused connect, a 400 or 5xx, an answer out of step, a
 * timeout, EOF — closes the connection; the records it had in flight go
 * back to their downstream's window to be sent again (on any connection),
 * and the connection retries after an exponential backoff.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/failpoint.h"
#include "relay_int.h"

#define CONNECT_TIMEOUT_NS (10ull * 1000000000)
#define FLUSH_IOV 64
#define ITEM_OBUF (-1)			/* oitem.fd: octets of obuf at off */
#define ITEM_MEM (-2)			/* oitem.fd: memory at (uintptr_t)off */

void rconn_init(struct rconn *c, struct rds *d, unsigned idx)
{
	memset(c, 0, sizeof(*c));
	c->ds = d;
	c->idx = idx;
	c->fd = -1;
	c->st = CS_IDLE;
	c->dcause = FG_CTR_RELAY_ACK_SPILL_EOF;
}

static void items_clear(struct rconn *c)
{
	for (unsigned i = 0; i < c->in; i++) {
		struct oitem *it = &c->items[(c->ih + i) % c->icap];

		if (it->fd >= 0)
			relay_segfd_put(c->ds->r, it->seg);
	}
	c->ih = c->in = 0;
	c->olen = 0;
	c->out_done = c->out_total;	/* nothing is referenced any more */
}

void rconn_fini(struct rconn *c)
{
	items_clear(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->cmds);
	free(c->items);
	free(c->obuf);
	free(c->dp);
	c->dp = NULL;
	c->dh = c->dn = c->dcap = 0;
	c->cmds = NULL;
	c->items = NULL;
	c->obuf = NULL;
	c->cn = c->ch = c->ccap = 0;
	c->icap = 0;
	c->ocap = 0;
}

/* ------------------------------------------------------------ output */

static int item_push(struct rconn *c, int fd, uint64_t seg, uint64_t off, uint64_t len)
{
	struct oitem *last;

	c->out_total += len;
	/* octets of obuf right after the previous ones: one item */
	if (fd == ITEM_OBUF && c->in) {
		last = &c->items[(c->ih + c->in - 1) % c->icap];
		if (last->fd == ITEM_OBUF && last->off + last->len == off) {
			last->len += len;
			return 0;
		}
	}
	if (c->in == c->icap) {
		unsigned cap = c->icap ? 2 * c->icap : 64;
		struct oitem *ni = malloc(cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		for (unsigned i = 0; i < c->in; i++)
			ni[i] = c->items[(c->ih + i) % c->icap];
		free(c->items);
		c->items = ni;
		c->icap = cap;
		c->ih = 0;
	}
	c->items[(c->ih + c->in++) % c->icap] = (struct oitem){ fd, seg, off, len };
	return 0;
}

/* Room for n more octets at the end of obuf; NULL if out of memory. */
static char *obuf_room(struct rconn *c, size_t n)
{
	if (c->olen + n > c->ocap) {
		char *nb = fg_grow(c->obuf, &c->ocap, c->olen + n, 65536);

		if (!nb)
			return NULL;
		c->obuf = nb;
	}
	return c->obuf + c->olen;
}

static int out_bytes(struct rconn *c, const void *p, size_t n)
{
	char *dst = obuf_room(c, n);

	if (!dst)
		return -ENOMEM;
	memcpy(dst, p, n);
	c->olen += n;
	return item_push(c, ITEM_OBUF, 0, c->olen - n, n);
}

/* Memory the caller keeps valid until it is written or the connection
 * fails (out_done passes it, or items_clear). */
int rconn_out_mem(struct rconn *c, const void *p, size_t n)
{
	return n ? item_push(c, ITEM_MEM, 0, (uint64_t)(uintptr_t)p, n) : 0;
}

int rconn_out_line(struct rconn *c, const char *verb, const char *arg)
{
	char line[FG_QUEUE_ID_MAX + 32];
	int n = snprintf(line, sizeof(line), arg ? "%s %s\r\n" : "%s\r\n", verb, arg);

	return out_bytes(c, line, (size_t)n);
}

/* The article, byte for byte, then the terminator. */
static int out_article(struct rconn *c, const struct rec *e)
{
	struct fg_relay *r = c->ds->r;
	int fd = relay_segfd_get(r, e->seg), rc;
	char *dst;

	if (fd < 0)
		return fd;
	if (e->art_len <= R_INLINE_MAX) {
		dst = obuf_room(c, e->art_len);
		rc = dst ? fg_datadir_pread_all(fd, dst, e->art_len, e->art_off) : -ENOMEM;
		relay_segfd_put(r, e->seg);
		if (rc == 0) {
			c->olen += e->art_len;
			rc = item_push(c, ITEM_OBUF, 0, c->olen - e->art_len, e->art_len);
		}
	} else {
		rc = item_push(c, fd, e->seg, e->art_off, e->art_len);
		if (rc != 0)
			relay_segfd_put(r, e->seg);
	}
	if (rc == 0)
		rc = out_bytes(c, ".\r\n", 3);
	return rc;
}

static void want_out(struct rconn *c, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c };

	if (c->want_out == on || c->fd < 0)
		return;
	c->want_out = on;
	epoll_ctl(c->ds->r->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Up to FLUSH_IOV memory items from the front, as iovecs; how many. */
static unsigned gather(const struct rconn *c, struct iovec *v)
{
	unsigned n = 0;

	for (unsigned k = 0; k < c->in && n < FLUSH_IOV; k++) {
		const struct oitem *o = &c->items[(c->ih + k) % c->icap];

		if (o->fd >= 0)
			break;
		v[n].iov_base = o->fd == ITEM_MEM ? (void *)(uintptr_t)o->off : c->obuf + o->off;
		v[n++].iov_len = o->len;
	}
	return n;
}

/* Drop w written octets from the front of the items. */
static void consumed(struct rconn *c, uint64_t w)
{
	if (fg_failpoint_on && c->direct)
		rack_written(c, c->out_done, c->out_done + w);
	c->out_done += w;
	while (w && c->in) {
		struct oitem *it = &c->items[c->ih];

		if (w < it->len) {
			it->off += w;
			it->len -= w;
			return;
		}
		w -= it->len;
		if (it->fd >= 0)
			relay_segfd_put(c->ds->r, it->seg);
		c->ih = (c->ih + 1) % c->icap;
		c->in--;
	}
}

/* Write what can be written now: 0, or -errno (the connection failed). */
static int flush(struct rconn *c)
{
	struct fg_relay *r = c->ds->r;

	while (c->in) {
		struct oitem *it = &c->items[c->ih];
		ssize_t w;

		if (it->fd < 0) {
			struct iovec v[FLUSH_IOV];
			struct msghdr mh = { .msg_iov = v };

			mh.msg_iovlen = gather(c, v);
			w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | (c->in > mh.msg_iovlen ? MSG_MORE : 0));
		} else {
			off_t off = (off_t)it->off;

			w = sendfile(c->fd, it->fd, &off, it->len);
		}
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -errno;
		}
		rcount(r, FG_CTR_RELAY_BYTES, (uint64_t)w);
		consumed(c, (uint64_t)w);
	}
	if (c->in == 0)
		c->olen = 0;
	want_out(c, c->in > 0);
	return 0;
}

void rconn_flush(struct rconn *c, uint64_t now)
{
	int rc;

	if (c->fd < 0 || c->st == CS_CONNECTING)
		return;
	rc = flush(c);
	if (rc != 0) {
		char why[96];

		snprintf(why, sizeof(why), "write: %s", strerror(-rc));
		rconn_fail(c, why, now);
	}
}

/* ------------------------------------------------------------ commands */

static int cmd_push(struct rconn *c, uint64_t recno, enum cmd_kind kind, uint64_t now)
{
	if (c->cn == c->ccap) {
		unsigned cap = c->ccap ? 2 * c->ccap : 16;
		struct cmd *nc = malloc(cap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		for (unsigned i = 0; i < c->cn; i++)
			nc[i] = c->cmds[(c->ch + i) % c->ccap];
		free(c->cmds);
		c->cmds = nc;
		c->ccap = cap;
		c->ch = 0;
	}
	if (c->cn == 0)
		c->deadline_ns = now + c->ds->r->p.answer_timeout_ns;
	c->cmds[(c->ch + c->cn++) % c->ccap] = (struct cmd){ recno, (uint8_t)kind };
	return 0;
}

static struct cmd cmd_pop(struct rconn *c, uint64_t now)
{
	struct cmd k = c->cmds[c->ch];

	c->ch = (c->ch + 1) % c->ccap;
	c->cn--;
	c->deadline_ns = c->cn ? now + c->ds->r->p.answer_timeout_ns : 0;
	return k;
}

bool rconn_can_take(const struct rconn *c)
{
	unsigned limit = c->streaming ? c->ds->window : 1;

	return !c->asking && !c->direct && c->st == CS_READY && c->cn < limit;
}

static int send_takethis(struct rconn *c, struct rec *e, uint64_t now)
{
	int rc = rconn_out_line(c, "TAKETHIS", e->id);

	if (rc == 0)
		rc = out_article(c, e);
	if (rc == 0)
		rc = cmd_push(c, e->recno, CMD_TAKETHIS, now);
	if (rc == 0) {
		rcount(c->ds->r, FG_CTR_RELAY_OFFERED, 1);
		c->ds->sent++;
	}
	return rc;
}

int rconn_send_rec(struct rconn *c, struct rec *e)
{
	uint64_t now = fg_mono_ns();
	int rc;

	if (!c->streaming) {
		rc = rconn_out_line(c, "IHAVE", e->id);
		if (rc == 0)
			rc = cmd_push(c, e->recno, CMD_IHAVE, now);
	} else if (c->ds->cfg->check_first && !e->checked) {
		rc = rconn_out_line(c, "CHECK", e->id);
		if (rc == 0)
			rc = cmd_push(c, e->recno, CMD_CHECK, now);
		if (rc == 0)
			rcount(c->ds->r, FG_CTR_RELAY_CHECKS, 1);
	} else {
		rc = send_takethis(c, e, now);
	}
	if (rc == 0) {
		e->state = REC_SENT;
		e->conn = (uint16_t)c->idx;
	}
	return rc;
}

void rconn_quit(struct rconn *c)
{
	if (c->fd < 0 || c->st < CS_GREETING) {
		rconn_fini(c);
		c->st = CS_IDLE;
		return;
	}
	if (rconn_out_line(c, "QUIT", NULL) == 0 && cmd_push(c, 0, CMD_QUIT, fg_mono_ns()) == 0)
		c->st = CS_CLOSING;
	rconn_flush(c, fg_mono_ns());
}

/* ------------------------------------------------------------ lifecycle */

static uint64_t backoff(struct rconn *c)
{
	const struct fg_relay_params *p = &c->ds->r->p;
	uint64_t d = p->reconnect_min_ns;

	for (unsigned i = 1; i < c->fails && d < p->reconnect_max_ns; i++)
		d *= 2;
	d = FG_MIN(d, p->reconnect_max_ns);
	/* spread the connections of a downstream that went away together */
	return d - d / 4 + (d / 2) * (c->idx % 4) / 4;
}

/* "inn#0", or "inn#ask" for the asking connection. */
static const char *label(const struct rconn *c, char *buf, size_t len)
{
	if (c->asking)
		snprintf(buf, len, "%s#ask", c->ds->cfg->name);
	else if (c->direct)
		snprintf(buf, len, "%s#ack%u", c->ds->cfg->name, c->idx);
	else
		snprintf(buf, len, "%s#%u", c->ds->cfg->name, c->idx);
	return buf;
}

void rconn_fail(struct rconn *c, const char *why, uint64_t now)
{
	struct rds *d = c->ds;
	bool was_ready = c->st == CS_READY || c->st == CS_CLOSING;
	char lb[FG_CONFIG_NAME_MAX + 16];

	if (c->st != CS_CLOSING) {
		/* the first failure loudly, the retries of a down server quietly */
		fg_log(c->fails ? FG_LOG_INFO : FG_LOG_WARN, RCOMP, "%s: %s",
		       label(c, lb, sizeof(lb)), why);
		rcount(d->r, FG_CTR_RELAY_CONNECTION_FAILURES, 1);
	}
	if (c->asking)
		rask_fail(c);
	items_clear(c);		/* before rack_fail: no octet of an article is referenced */
	if (c->direct)
		rack_fail(c);
	c->dcause = FG_CTR_RELAY_ACK_SPILL_EOF;
	while (c->cn) {
		struct cmd k = cmd_pop(c, now);
		struct rec *e = k.kind == CMD_QUIT ? NULL : rds_rec(d, k.recno);

		if (e && e->state == REC_SENT && e->conn == c->idx)
			rds_requeue(d, e);
	}
	items_clear(c);
	if (c->fd >= 0) {
		epoll_ctl(d->r->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	c->want_out = false;
	c->ilen = 0;
	c->fails = was_ready ? 1 : c->fails + 1;
	c->st = CS_IDLE;
	c->retry_ns = now + backoff(c);
}

void rconn_start(struct rconn *c, uint64_t now)
{
	const struct fg_endpoint *ep = &c->ds->cfg->addr;
	struct sockaddr_storage ss;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = c };
	socklen_t sl;
	int one = 1;

	sl = fg_endpoint_sockaddr(ep, &ss);
	c->fd = socket(ep->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		rconn_fail(c, strerror(errno), now);
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
		char why[96];

		snprintf(why, sizeof(why), "connect: %s", strerror(errno));
		rconn_fail(c, why, now);
		return;
	}
	c->st = CS_CONNECTING;
	c->want_out = true;
	c->deadline_ns = now + CONNECT_TIMEOUT_NS;
	if (epoll_ctl(c->ds->r->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		rconn_fail(c, strerror(errno), now);
}

static void ready(struct rconn *c)
{
	struct rds *d = c->ds;
	char lb[FG_CONFIG_NAME_MAX + 16];

	c->st = CS_READY;
	c->deadline_ns = 0;
	if (!c->asking && !c->direct)
		d->reconnects++;
	rcount(d->r, FG_CTR_RELAY_CONNECTS, 1);
	fg_log(c->fails ? FG_LOG_NOTICE : FG_LOG_INFO, RCOMP, "%s: connected%s (%s)",
	       label(c, lb, sizeof(lb)), c->fails ? " again" : "",
	       c->streaming ? "streaming" : "IHAVE");
	c->fails = 0;
}

/* ------------------------------------------------------------ answers */

/* "NNN rest": the code, or -1. */
static int code_of(const char *line, const char **rest)
{
	if (!(line[0] >= '1' && line[0] <= '5') || !(line[1] >= '0' && line[1] <= '9') ||
	    !(line[2] >= '0' && line[2] <= '9') || (line[3] != ' ' && line[3] != '\0'))
		return -1;
	*rest = line[3] ? line + 4 : line + 3;
	return (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
}

/* RFC 4644 2.4.1, 2.5.1: the answer's first word is the command's ID. */
static bool names(const char *rest, const struct rec *e)
{
	size_t n = strcspn(rest, " ");

	return n == e->id_len && memcmp(rest, e->id, n) == 0;
}

/* After the capabilities: MODE STREAM when the downstream streams and the
 * server offers it (or said nothing), else IHAVE. */
static bool caps_done(struct rconn *c)
{
	if (c->ds->cfg->mode == FG_DOWNSTREAM_STREAM && c->caps_stream) {
		if (rconn_out_line(c, "MODE STREAM", NULL) != 0)
			return false;
		c->st = CS_MODE;
		return true;
	}
	c->streaming = false;
	ready(c);
	return true;
}

/* The handshake, before READY. Returns false when the connection failed. */
static bool handshake(struct rconn *c, const char *line, int code, uint64_t now)
{
	char why[900];
	bool ok = false;

	switch (c->st) {
	case CS_GREETING:
		c->caps_stream = c->caps_ihave = false;
		ok = (code == 200 || code == 201) && rconn_out_line(c, "CAPABILITIES", NULL) == 0;
		c->st = CS_CAPS;
		break;
	case CS_CAPS:
		if (code == 101) {
			c->st = CS_CAPS_LIST;
			return true;
		}
		/* an old server without CAPABILITIES: try MODE STREAM all the same */
		c->caps_stream = true;
		ok = caps_done(c);
		break;
	case CS_CAPS_LIST:
		if (strcmp(line, ".") == 0) {
			ok = caps_done(c);
			break;
		}
		c->caps_stream |= strncasecmp(line, "STREAMING", 9) == 0;
		c->caps_ihave |= strncasecmp(line, "IHAVE", 5) == 0;
		return true;
	case CS_MODE:
		c->streaming = code == 203;
		if (!c->streaming) {
			char lb[FG_CONFIG_NAME_MAX + 16];

			FG_LOG_NOTICE(RCOMP, "%s: MODE STREAM answered \"%s\": %s",
				      label(c, lb, sizeof(lb)), line,
				      c->asking ? "no warm-up lookups" :
				      c->direct ? "its articles take the queue's path" :
						  "feeding with IHAVE");
		}
		ready(c);
		return true;
	default:
		break;
	}
	if (ok)
		return true;
	snprintf(why, sizeof(why), "unexpected answer \"%.500s\"", line);
	rconn_fail(c, why, now);
	return false;
}

/* A 5xx or an unknown code to an article: retried a few times (on a new
 * connection: this one is out of step), then given up and counted. */
static void article_error(struct rconn *c, struct rec *e, const char *line, uint64_t now)
{
	char why[900];

	rcount(c->ds->r, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
	if (++e->tries >= R_GIVE_UP_TRIES) {
		FG_LOG_ERR(RCOMP, "%s: %s answered \"%s\" %u times: given up", c->ds->cfg->name,
			   e->id, line, e->tries);
		rcount(c->ds->r, FG_CTR_RELAY_GIVEN_UP, 1);
		rds_done(c->ds, e);
	}
	snprintf(why, sizeof(why), "answer \"%.500s\" to %s", line, e->id);
	rconn_fail(c, why, now);
}

/* Done with e for this reason (counter), or try it again later. */
static void outcome(struct rconn *c, struct rec *e, enum fg_counter ctr)
{
	struct rds *d = c->ds;

	rcount(d->r, ctr, 1);
	if (ctr == FG_CTR_RELAY_DEFERRED) {
		d->deferred++;
		rds_retry(d, e, 0);
		return;
	}
	if (ctr == FG_CTR_RELAY_ACCEPTED)
		d->accepted++;
	else if (ctr == FG_CTR_RELAY_NOT_WANTED)
		d->not_wanted++;
	else
		d->refused++;
	rds_done(d, e);
}

static bool streaming_answer(struct rconn *c, struct cmd k, struct rec *e, int code,
			     const char *rest, const char *line, uint64_t now)
{
	if (!names(rest, e)) {
		char why[900];

		snprintf(why, sizeof(why), "answer \"%.500s\" out of step (expected %s)", line,
			 e->id);
		rcount(c->ds->r, FG_CTR_RELAY_PROTOCOL_ERRORS, 1);
		rconn_fail(c, why, now);
		return false;
	}
	if (k.kind == CMD_CHECK && code == 238) {
		e->checked = 1;
		if (send_takethis(c, e, now) != 0) {
			rconn_fail(c, "out of memory", now);
			return false;
		}
		return true;
	}
	if (k.kind == CMD_CHECK && code == 438) {
		outcome(c, e, FG_CTR_RELAY_NOT_WANTED);
		return true;
	}
	if (code == 431) {
		outcome(c, e, FG_CTR_RELAY_DEFERRED);
		return true;
	}
	if (k.kind == CMD_TAKETHIS && (code == 239 || code == 439)) {
		outcome(c, e, code == 239 ? FG_CTR_RELAY_ACCEPTED : FG_CTR_RELAY_REFUSED_439);
		return true;
	}
	article_error(c, e, line, now);
	return false;
}

static bool ihave_answer(struct rconn *c, struct cmd k, struct rec *e, int code, const char *line,
			 uint64_t now)
{
	if (k.kind == CMD_IHAVE && code == 335) {
		if (out_article(c, e) != 0 || cmd_push(c, e->recno, CMD_IHAVE_ART, now) != 0) {
			rconn_fail(c, "cannot read the article from the queue", now);
			return false;
		}
		rcount(c->ds->r, FG_CTR_RELAY_OFFERED, 1);
		c->ds->sent++;
		return true;
	}
	if (code == 436) {
		outcome(c, e, FG_CTR_RELAY_DEFERRED);
		return true;
	}
	if (k.kind == CMD_IHAVE && code == 435) {
		outcome(c, e, FG_CTR_RELAY_NOT_WANTED);
		return true;
	}
	if (code == 437 || (k.kind == CMD_IHAVE_ART && code == 235)) {
		outcome(c, e, code == 235 ? FG_CTR_RELAY_ACCEPTED : FG_CTR_RELAY_REFUSED_437);
		return true;
	}
	article_error(c, e, line, now);
	return false;
}

/* One answer line; false when the connection is gone. */
static bool answer(struct rconn *c, const char *line, uint64_t now)
{
	const char *rest = "";
	int code = code_of(line, &rest);
	struct rec *e;
	struct cmd k;
	char why[900];

	if (c->st == CS_CAPS_LIST)
		return handshake(c, line, code, now);
	/* 400: the server is going away (RFC 3977 3.2.1); anything else must
	 * be an answer to something asked */
	if (code == 400 || code < 0 || (c->st == CS_READY && c->cn == 0 && c->an == 0 && c->dn == 0)) {
		snprintf(why, sizeof(why), "%s \"%.500s\"", code == 400 ? "server says" :
			 "unexpected line", line);
		if (code == 400)
			c->dcause = FG_CTR_RELAY_ACK_SPILL_REFUSED;
		rconn_fail(c, why, now);
		return false;
	}
	if (c->st != CS_READY && c->st != CS_CLOSING)
		return handshake(c, line, code, now);
	if (c->asking && c->an) {
		rask_answer(c, code, rest, line, now);
		return c->fd >= 0;
	}
	if (c->direct && c->dn) {
		rack_answer(c, code, rest, line, now);
		return c->fd >= 0;
	}
	if (c->cn == 0)
		return true;
	k = cmd_pop(c, now);
	if (k.kind == CMD_QUIT) {
		rconn_fini(c);
		c->st = CS_IDLE;
		c->retry_ns = UINT64_MAX;
		return false;
	}
	e = rds_rec(c->ds, k.recno);
	FG_ASSERT(e && e->state == REC_SENT && e->conn == c->idx);
	if (k.kind == CMD_CHECK || k.kind == CMD_TAKETHIS)
		return streaming_answer(c, k, e, code, rest, line, now);
	return ihave_answer(c, k, e, code, line, now);
}

static void input(struct rconn *c, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->ibuf + c->ilen, sizeof(c->ibuf) - c->ilen, 0);
		size_t start = 0;

		if (n == 0) {
			rconn_fail(c, c->st == CS_CLOSING ? "closed" : "connection closed by the server",
				   now);
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				char why[96];

				snprintf(why, sizeof(why), "read: %s", strerror(errno));
				rconn_fail(c, why, now);
			}
			return;
		}
		c->ilen += (size_t)n;
		for (size_t i = 0; i + 1 < c->ilen; i++) {
			if (c->ibuf[i] != '\r' || c->ibuf[i + 1] != '\n')
				continue;
			c->ibuf[i] = '\0';
			if (!answer(c, c->ibuf + start, now))
				return;
			start = i + 2;
			i++;
		}
		memmove(c->ibuf, c->ibuf + start, c->ilen - start);
		c->ilen -= start;
		if (c->ilen == sizeof(c->ibuf)) {
			rconn_fail(c, "answer line too long", now);
			return;
		}
	}
}

void rconn_event(struct rconn *c, uint32_t events, uint64_t now)
{
	int err = 0;
	socklen_t el = sizeof(err);

	if (c->st == CS_CONNECTING) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			err = errno;
		if (err) {
			char why[96];

			snprintf(why, sizeof(why), "connect: %s", strerror(err));
			rconn_fail(c, why, now);
			return;
		}
		c->st = CS_GREETING;
		c->deadline_ns = now + c->ds->r->p.answer_timeout_ns;
		want_out(c, false);
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		input(c, now);
	if (c->fd >= 0 && c->st != CS_IDLE)
		rconn_flush(c, now);
}

void rconn_timer(struct rconn *c, uint64_t now)
{
	if (c->st == CS_IDLE) {
		if (now >= c->retry_ns)
			rconn_start(c, now);
		return;
	}
	if (c->deadline_ns && now >= c->deadline_ns)
		rconn_fail(c, c->st == CS_CONNECTING ? "connect: timed out" : "no answer in time",
			   now);
}
