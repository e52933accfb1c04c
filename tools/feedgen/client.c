/* SPDX-License-Identifier: MIT */
/*
 * client.c — the sending side of a feed: many non-blocking connections on
 * one loop, their transports and their lives. What a connection sends is
 * offers.c's, what it receives and how that is checked answers.c's.
 *
 * A connection: opened (on a socket bound to --source + its peer's index
 * when --source is given, so that a server that maps addresses to peers
 * sees distinct peers), its bytes written out and read in, and lost (400,
 * reset, EOF: every offer without a final answer is re-offered on the
 * next connection, RFC 4644 2.5.2, after RECONNECT_DELAY_NS, at most
 * --max-reconnects times) or finished (QUIT answered).
 *
 * Output is written with one send() per readiness; reading hands every
 * complete line received to answers.c.
 *
 * Transports: kernel sockets on an epoll loop, or with --dpdk the
 * project's own TCP over a DPDK port (dpdk.c), polled: a connection is
 * then an fg_tcp_conn whose callbacks (below, "the DPDK transport") do
 * what the epoll events do for a socket — connected, bytes in, room to
 * write, closed. Everything above the transport is the same code.
 *
 * The loop: events (or a DPDK poll), then timers (reconnects, due
 * retries), until every connection is done or --timeout passes, when what
 * was left unanswered is reported; feed_run sets it up and tears it down.
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

#include "client_int.h"
#include "floodgate/log.h"
#include "floodgate/tcp.h"

/* ---------------------------------------------------------------- sockets */

static void set_events(struct feed *f, struct conn *c)
{
	struct epoll_event ev = { .data.u32 = c->id };
	bool want = feed_out_pending(c) > 0 || c->state == ST_CONNECTING;

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

void feed_conn_finish(struct feed *f, struct conn *c)
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
void feed_conn_lost(struct feed *f, struct conn *c, const char *why)
{
	transport_close(f, c, c->state == ST_QUIT);
	for (; c->infl_n; c->infl_n--) {
		struct inflight *e = &c->infl[c->infl_head];

		c->infl_head = (c->infl_head + 1) % c->infl_cap;
		/* the CHECK that led to a TAKETHIS in flight is already gone */
		if (e->cmd == FG_WLC_TAKETHIS || e->cmd == FG_WLC_IHAVE_ART)
			fg_wlc_answer_lost(f->chk, e->art);
		if (feed_aring_push(&c->reoffer, e->art, 0) < 0)
			fg_wlc_mismatch(f->chk, "peer %u conn %u: out of memory re-offering", c->peer, c->id);
	}
	if (c->state == ST_QUIT) {
		feed_conn_finish(f, c);
		return;
	}
	if (++c->reconnects > f->o->max_reconnects) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: connection lost (%s) %u times; "
				"%u offers never answered", c->peer, c->id, why, c->reconnects,
				c->reoffer.n + c->retry.n + (unsigned)((c->n_list - FG_MIN(c->next, c->n_list)) / c->stride));
		feed_conn_finish(f, c);
		return;
	}
	f->res->reconnects++;
	c->state = ST_IDLE;
	c->reconnect_at = fg_mono_ns() + RECONNECT_DELAY_NS;
}

static void conn_write(struct feed *f, struct conn *c)
{
	while (c->tc && feed_out_pending(c) > 0) {
		uint32_t want = (uint32_t)FG_MIN(feed_out_pending(c), (size_t)UINT32_MAX);
		int n = fg_tcp_send(c->tc, c->out + c->out_off, want);

		if (n < 0) {
			feed_conn_lost(f, c, "the connection can no longer send");
			return;
		}
		c->out_off += (size_t)n;
		f->res->bytes_out += (uint64_t)n;
		if ((uint32_t)n < want)
			break;	/* the send buffer is full: on_writable follows */
	}
	while (c->fd >= 0 && feed_out_pending(c) > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, feed_out_pending(c), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			feed_conn_lost(f, c, strerror(errno));
			return;
		}
		c->out_off += (size_t)n;
		f->res->bytes_out += (uint64_t)n;
	}
	set_events(f, c);
}


static void conn_read(struct feed *f, struct conn *c, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);

		if (n == 0) {
			feed_conn_lost(f, c, "closed by the server");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				feed_conn_lost(f, c, strerror(errno));
			return;
		}
		f->res->bytes_in += (uint64_t)n;
		c->in_len += (size_t)n;
		if (!feed_conn_lines(f, c, now))
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
	if (feed_conn_lines(f, c, now)) {
		feed_fill(f, c, now);
		conn_write(f, c);
	}
	return took;
}

static void dp_eof(void *ctx, struct fg_tcp_conn *tc)
{
	struct conn *c = ctx;

	(void)tc;
	feed_conn_lost(c->feed, c, "closed by the server");
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
	feed_conn_lost(c->feed, c, fg_tcp_close_reason_name(why));
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
			feed_conn_lost(f, c, strerror(err));
			return;
		}
		c->state = ST_GREETING;
		set_events(f, c);
		return;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		conn_read(f, c, now);
	if (feed_conn_gone(c))
		return;
	feed_fill(f, c, now);
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
				feed_conn_lost(f, c, strerror(-rc));
		} else if (c->state == ST_RUN && ((c->retry.n && c->retry.due[c->retry.head] <= now) ||
						  (f->o->rate > 0 && c->next < c->n_list))) {
			feed_fill(f, c, now);
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
		if (!c->infl || feed_aring_init(&c->retry, 64, true) < 0 ||
		    feed_aring_init(&c->reoffer, 64, false) < 0)
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
		feed_aring_free(&f->c[i].retry);
		feed_aring_free(&f->c[i].reoffer);
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
	if (o->accept_times && !(f.accept_times = fopen(o->accept_times, "we"))) {
		rc = -errno;
		FG_LOG_ERR("feedgen", "%s: %s", o->accept_times, strerror(errno));
		goto out_teardown;
	}
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
			feed_conn_lost(&f, &f.c[i], strerror(-orc));
	}
	feed_loop(&f, t0);
	res->elapsed = (double)(fg_mono_ns() - t0) / 1e9;
	if (f.dp)
		feed_dp_linger(f.dp, 2000000000ull);	/* the closes finish */
	res->cpu_self = feed_self_cpu() - cpu0;
	res->cpu_server = srv0 >= 0 ? feed_proc_cpu(o->server_pid) - srv0 : -1;
	res->accepted = fg_wlc_accepted(chk);
	res->articles_offered = fg_wlc_offered(chk);
	for (unsigned i = 0; i < f.n; i++)
		for (unsigned k = 0; k < FEED_CODES; k++)
			res->codes[k] += res->conn_codes[i][k];
out_teardown:
	if (f.accept_times && fclose(f.accept_times) != 0 && rc == 0)
		rc = -errno;
	feed_teardown(&f);
	return rc;
}
