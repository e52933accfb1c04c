/* SPDX-License-Identifier: MIT */
/*
 * worker.c — one thread of floodgate-host: an epoll loop over its own
 * SO_REUSEPORT listeners and its connections, one session engine, one sink.
 *
 * The loop: wait for events (at most until the engine's next poll is due,
 * or a lingering socket's deadline), handle them, run the engine's poll
 * (sink completions, retries, idle timeouts), then the deferred work the
 * engine's transport calls asked for (resume -> offer again; close ->
 * shut down and report). On stop: the engine answers every session 400
 * and closes it, transfers in flight finish (bounded wait), what is left
 * is closed by force.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "host.h"

#define TAG_WAKE ((void *)1)
#define STOP_GRACE_NS (5ull * 1000000000ull)
#define PUBLISH_NS 100000000ull

void host_clock(fg_time_t *now, uint64_t *now_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	*now = ts.tv_sec;
	*now_ns = fg_mono_ns();
}

/* --floodctld: the engine's counters into the slot, for floodctld's sums
 * (one writer: this thread), every 100 ms. */
void host_worker_publish(struct host_worker *w, uint64_t now_ns)
{
	if (!w->link || now_ns < w->next_publish)
		return;
	w->next_publish = now_ns + PUBLISH_NS;
	fg_slotlink_publish(w->link, w->stats, w->peer_stats, w->cfg->n_peer,
			    fg_nntp_engine_clock_suspect(w->e));
}

/* Listener tags are small integers 2.. so they never look like a conn. */
static void *lfd_tag(unsigned i)
{
	return (void *)(uintptr_t)(2 + i);
}

static bool is_lfd_tag(const void *p, unsigned n)
{
	return (uintptr_t)p >= 2 && (uintptr_t)p < 2 + n;
}

int host_listen_on(const struct fg_endpoint *ep)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fd;

	sl = fg_endpoint_sockaddr(ep, &ss);
	fd = socket(ep->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* one listener per thread on the same port: the kernel spreads them */
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (ep->family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 1024) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

bool host_endpoint_eq(const struct fg_endpoint *a, const struct fg_endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* Listen on exactly eps[0..n): the listeners already on one of them are
 * kept (their queues of connections not yet accepted with them), the
 * missing ones opened, the others closed. 0, or the first -errno of an
 * address that could not be opened (the others are listened on). */
static int listen_set(struct host_worker *w, const struct fg_endpoint *eps, unsigned n)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd[FG_CONFIG_MAX_LISTEN];
	unsigned k = 0;
	int rc = 0;

	for (unsigned i = 0; i < w->n_lfd; i++)
		epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd[i], NULL);
	for (unsigned i = 0; i < n; i++) {
		char name[64];
		int f = -1;

		for (unsigned j = 0; j < w->n_lfd && f < 0; j++)
			if (w->lfd[j] >= 0 && host_endpoint_eq(&w->lep[j], &eps[i])) {
				f = w->lfd[j];
				w->lfd[j] = -1;
			}
		fg_endpoint_format(&eps[i], name, sizeof(name));
		if (f < 0) {
			f = host_listen_on(&eps[i]);
			if (f < 0) {
				FG_LOG_ERR(HOST_COMP, "listen on %s: %s", name, strerror(-f));
				rc = rc ? rc : f;
				continue;
			}
			if (w->index == 0)
				FG_LOG_NOTICE(HOST_COMP, "listening on %s", name);
		}
		fd[k] = f;
		w->lep[k++] = eps[i];
	}
	for (unsigned j = 0; j < w->n_lfd; j++) {
		char name[64];

		if (w->lfd[j] < 0)
			continue;
		if (w->index == 0) {
			fg_endpoint_format(&w->lep[j], name, sizeof(name));
			FG_LOG_NOTICE(HOST_COMP, "no longer listening on %s", name);
		}
		close(w->lfd[j]);
	}
	for (unsigned i = 0; i < k; i++) {
		w->lfd[i] = fd[i];
		ev.data.ptr = lfd_tag(i);
		epoll_ctl(w->ep, EPOLL_CTL_ADD, fd[i], &ev);
	}
	w->n_lfd = k;
	return rc;
}

int host_worker_init(struct host_worker *w)
{
	const struct fg_endpoint *eps = w->o->n_listen ? w->o->listen : w->cfg->listen;
	unsigned n = w->o->n_listen ? w->o->n_listen : w->cfg->n_listen;
	struct epoll_event ev = { .events = EPOLLIN };

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->ep < 0 || w->wake < 0)
		return -errno;
	ev.data.ptr = TAG_WAKE;
	epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &ev);
	return listen_set(w, eps, n);
}

void host_worker_wake(struct host_worker *w)
{
	uint64_t one = 1;

	if (write(w->wake, &one, sizeof(one)) < 0)
		FG_LOG_WARN(HOST_COMP, "wake: %s", strerror(errno));
}

void host_worker_defer(struct host_worker *w, struct host_conn *c)
{
	if (c->on_work)
		return;
	c->on_work = true;
	c->work_next = w->work;
	w->work = c;
}

/* Register the events the connection's state asks for. */
void host_worker_update(struct host_conn *c)
{
	struct epoll_event ev = { .data.ptr = c };
	uint32_t want = EPOLLRDHUP;

	if (c->fd < 0)
		return;
	if (c->lingering || (!c->paused && !c->eof && c->s))
		want |= EPOLLIN;
	if (c->want_out && !c->lingering)
		want |= EPOLLOUT;
	if (want == c->events)
		return;
	ev.events = want;
	epoll_ctl(c->w->ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->events = want;
}

/* An accepted socket's remote as an endpoint: false for another family.
 * The v6 listeners are V6ONLY, so no v4-mapped address comes here. */
static bool endpoint_of(const struct sockaddr_storage *ss, struct fg_endpoint *out)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		out->family = AF_INET;
		memcpy(out->addr, &s4->sin_addr, 4);
		out->port = ntohs(s4->sin_port);
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		out->family = AF_INET6;
		memcpy(out->addr, &s6->sin6_addr, 16);
		out->port = ntohs(s6->sin6_port);
		return true;
	}
	return false;
}

static void accept_all(struct host_worker *w, unsigned li)
{
	int lfd = w->lfd[li];

	for (;;) {
		const struct fg_endpoint *local = &w->lep[li];
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		const struct fg_config_peer *peer = NULL;
		struct fg_endpoint remote = { 0 };
		struct epoll_event ev;
		struct host_conn *c;
		fg_time_t now;
		uint64_t now_ns;
		int one = 1;
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				FG_LOG_WARN(HOST_COMP, "accept: %s", strerror(errno));
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (endpoint_of(&ss, &remote))
			peer = fg_config_find_peer(w->cfg, remote.family, remote.addr);
		c = host_conn_new(w, fd);
		if (!c) {
			close(fd);
			continue;
		}
		c->local = *local;
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = c;
		c->events = ev.events;
		epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
		host_clock(&now, &now_ns);
		/* a non-peer is answered 502 by the engine, then closed */
		c->s = fg_nntp_session_open(w->e, peer, &host_transport, c, now, now_ns);
		if (!c->s) {
			FG_LOG_WARN(HOST_COMP, "session limit reached: connection refused");
			c->detached = true;
			host_conn_error(c);
		} else if (remote.family) {
			fg_nntp_session_set_remote(c->s, &remote);
		}
	}
}

static void run_work(struct host_worker *w)
{
	while (w->work) {
		struct host_conn *c = w->work;

		w->work = c->work_next;
		host_conn_work(c);
	}
}

static int timeout_ms(struct host_worker *w)
{
	fg_time_t now;
	uint64_t now_ns, next;

	host_clock(&now, &now_ns);
	next = fg_nntp_engine_next_poll(w->e, now_ns);
	for (struct host_conn *c = w->all; c; c = c->all_next)
		if (c->lingering && c->linger_until < next)
			next = c->linger_until;
	if (w->work)
		return 0;
	/* --floodctld: wake to publish the counters even when idle */
	if (w->link && next > now_ns + 100000000ull)
		next = now_ns + 100000000ull;
	return next <= now_ns ? 0 : (int)((next - now_ns + 999999) / 1000000);
}

static void handle(struct host_worker *w, const struct epoll_event *ev)
{
	struct host_conn *c = ev->data.ptr;

	if (ev->data.ptr == TAG_WAKE) {
		uint64_t v;

		if (read(w->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
			FG_LOG_WARN(HOST_COMP, "wake read: %s", strerror(errno));
		return;
	}
	if (is_lfd_tag(ev->data.ptr, w->n_lfd)) {
		accept_all(w, (unsigned)((uintptr_t)ev->data.ptr - 2));
		return;
	}
	if (ev->events & EPOLLERR) {
		host_conn_error(c);
		return;
	}
	if (ev->events & EPOLLOUT)
		host_conn_writable(c);
	if (ev->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))
		host_conn_readable(c);
}

static void close_listeners(struct host_worker *w)
{
	for (unsigned i = 0; i < w->n_lfd; i++) {
		epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd[i], NULL);
		close(w->lfd[i]);
	}
	w->n_lfd = 0;
}

static bool listened(const struct fg_endpoint *eps, unsigned n, const struct fg_endpoint *ep)
{
	for (unsigned i = 0; i < n; i++)
		if (host_endpoint_eq(&eps[i], ep))
			return true;
	return false;
}

/* A reload asked for (ctl.c): switch between two rounds. Then, when the
 * listen addresses are the configuration's (no --listen), listen on the
 * new ones and drain the sessions that came in on an address no longer
 * listed (fg_nntp_session_retire): the others keep their connections. */
static void switch_config(struct host_worker *w)
{
	const struct fg_config *cfg = atomic_load_explicit(&w->next_cfg, memory_order_acquire);

	w->switch_rc = fg_slotlink_switch(w->link, w->e, w->cfg, cfg, &w->peer_stats,
					  &w->next_peers);
	if (w->switch_rc == 0)
		w->cfg = cfg;
	if (w->switch_rc == 0 && !w->o->n_listen) {
		/* ctl.c bound each new address first; one that fails now
		 * is logged, and the others are listened on */
		(void)listen_set(w, cfg->listen, cfg->n_listen);
		for (struct host_conn *c = w->all; c; c = c->all_next)
			if (c->s && !listened(cfg->listen, cfg->n_listen, &c->local))
				fg_nntp_session_retire(c->s, FG_NNTP_RETIRE_ADDRESS);
	}
	atomic_store_explicit(&w->next_cfg, NULL, memory_order_release);
}

static void pickup_levers(struct host_worker *w)
{
	unsigned long seen = w->levers_seen;

	fg_levers_pickup(w->levers, &seen, w->e);
	__atomic_store_n(&w->levers_seen, seen, __ATOMIC_RELEASE);	/* ctl.c waits on it */
}

/* One round of the loop; returns the engine's event count. */
static void round_once(struct host_worker *w, int tmo)
{
	struct epoll_event evs[256];
	fg_time_t now;
	uint64_t now_ns;
	int n = epoll_wait(w->ep, evs, 256, tmo);

	/* a reload or a lever first: the answer to the operator waits for it */
	if (atomic_load_explicit(&w->next_cfg, memory_order_acquire))
		switch_config(w);
	if (w->levers)
		pickup_levers(w);
	for (int i = 0; i < n; i++)
		handle(w, &evs[i]);
	run_work(w);
	host_clock(&now, &now_ns);
	fg_nntp_engine_poll(w->e, now, now_ns);
	run_work(w);
	for (struct host_conn *c = w->all, *next; c; c = next) {
		next = c->all_next;
		host_conn_linger_check(c, now_ns);
	}
	host_worker_publish(w, now_ns);
}

/* Stop: 400 to every session, let transfers finish, close the rest. */
static void drain(struct host_worker *w)
{
	fg_time_t now;
	uint64_t now_ns, until;

	close_listeners(w);
	fg_nntp_engine_shutdown(w->e);
	run_work(w);
	host_clock(&now, &now_ns);
	until = now_ns + STOP_GRACE_NS;
	while ((fg_nntp_engine_sessions(w->e) || fg_nntp_engine_xfers(w->e)) && now_ns < until) {
		round_once(w, 10);
		host_clock(&now, &now_ns);
	}
	for (struct host_conn *c = w->all, *next; c; c = next) {
		next = c->all_next;
		host_conn_force_close(c);
	}
	run_work(w);
	for (unsigned i = 0; i < 1000 && fg_nntp_engine_xfers(w->e); i++) {
		host_clock(&now, &now_ns);
		fg_nntp_engine_poll(w->e, now, now_ns);
		run_work(w);
		if (fg_nntp_engine_xfers(w->e))
			usleep(1000);
	}
	if (fg_nntp_engine_xfers(w->e))
		FG_LOG_WARN(HOST_COMP, "%u transfers did not finish before exit",
			    fg_nntp_engine_xfers(w->e));
}

void *host_worker_run(void *arg)
{
	struct host_worker *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		round_once(w, timeout_ms(w));
	drain(w);
	return NULL;
}

void host_worker_fini(struct host_worker *w)
{
	close_listeners(w);
	if (w->ep >= 0)
		close(w->ep);
	if (w->wake >= 0)
		close(w->wake);
}
