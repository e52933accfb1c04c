/* SPDX-License-Identifier: MIT */
/*
 * conn.c — one peer connection of floodgate-host, and the transport the
 * session engine runs on.
 *
 * Receive path: the socket is read into 64 KiB chunks; the unconsumed
 * octets (up to HOST_MAX_CHUNKS chunks) are offered to the engine as an
 * iov list, in place. A chunk is freed when it is consumed and no sink
 * holds it (refs). When the engine stops reading (pause), EPOLLIN is
 * dropped and the kernel's receive buffer fills: the peer's TCP window
 * closes, which is the back-pressure. resume() re-arms EPOLLIN and offers
 * the queue again from the worker's loop (never from inside the engine).
 *
 * Send path: send() writes straight to the socket; what the kernel does not
 * take stays in the engine's response queue, EPOLLOUT is armed, and
 * fg_nntp_session_writable() follows.
 *
 * Close: when the engine asks, the worker shuts the socket down for
 * writing (the responses already written go out first), reports the
 * session closed, and keeps reading and discarding until the peer closes
 * or HOST_LINGER_NS pass — closing a socket with unread input would make
 * the kernel send an RST that can destroy the last responses in flight.
 * The struct lives until both the socket is closed and the engine has
 * detached (it may still release holds for a committed article).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "host.h"

static struct host_chunk *chunk_new(void)
{
	struct host_chunk *k = malloc(sizeof(*k));

	if (k) {
		k->refs = 1;
		k->len = 0;
	}
	return k;
}

static void chunk_unref(struct host_chunk *k)
{
	if (--k->refs == 0)
		free(k);
}

/* ------------------------------------------------------------ transport */

static int t_send(void *tp, const void *buf, uint32_t len)
{
	struct host_conn *c = tp;
	ssize_t n;

	if (c->fd < 0 || c->lingering)
		return -EPIPE;
	n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return -errno;
	if (n < 0)
		n = 0;
	if ((uint32_t)n < len && !c->want_out) {
		c->want_out = true;
		host_worker_update(c);
	}
	return (int)n;
}

static void t_hold(void *tp, const struct fg_iov *seg)
{
	struct host_conn *c = tp;
	struct host_chunk *k = seg->handle;

	k->refs++;
	c->holds++;
}

static void t_release(void *tp, const struct fg_iov *seg)
{
	struct host_conn *c = tp;

	c->holds--;
	chunk_unref(seg->handle);
}

static void t_pause(void *tp)
{
	struct host_conn *c = tp;

	c->paused = true;
	host_worker_update(c);
}

static void t_resume(void *tp)
{
	struct host_conn *c = tp;

	c->paused = false;
	c->reoffer = true;
	host_worker_update(c);
	host_worker_defer(c->w, c);
}

static void t_close(void *tp)
{
	struct host_conn *c = tp;

	c->close_asked = true;
	host_worker_defer(c->w, c);
}

static void conn_maybe_free(struct host_conn *c);

static void t_detach(void *tp)
{
	struct host_conn *c = tp;

	c->detached = true;
	host_worker_defer(c->w, c);
}

const struct fg_nntp_session_transport host_transport = {
	.send = t_send, .hold = t_hold, .release = t_release, .pause = t_pause,
	.resume = t_resume, .close = t_close, .detach = t_detach,
};

/* ------------------------------------------------------------ lifecycle */

struct host_conn *host_conn_new(struct host_worker *w, int fd)
{
	struct host_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->w = w;
	c->fd = fd;
	c->all_next = w->all;
	if (w->all)
		w->all->all_prev = c;
	w->all = c;
	w->n_conns++;
	return c;
}

static void drop_queue(struct host_conn *c)
{
	for (unsigned i = 0; i < c->qn; i++)
		chunk_unref(c->q[i]);
	c->qn = 0;
	c->q_off = 0;
}

static void close_fd(struct host_conn *c)
{
	if (c->fd < 0)
		return;
	epoll_ctl(c->w->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->lingering = false;
}

/* The engine is told the connection is gone (once). */
static void report_closed(struct host_conn *c)
{
	struct fg_nntp_session *s = c->s;

	if (!s)
		return;
	c->s = NULL;
	drop_queue(c);
	fg_nntp_session_closed(s);
}

static void conn_maybe_free(struct host_conn *c)
{
	struct host_worker *w = c->w;

	if (c->fd >= 0 || c->s || !c->detached || c->on_work)
		return;
	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		w->all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	w->n_conns--;
	free(c);
}

/* ------------------------------------------------------------ input */

/* Offer the queue to the engine; drop what it consumed. */
static void offer(struct host_conn *c)
{
	struct fg_iov iov[HOST_MAX_CHUNKS];
	fg_time_t now;
	uint64_t now_ns;
	uint32_t took;

	if (!c->s || c->paused)
		return;
	for (unsigned i = 0; i < c->qn; i++) {
		uint32_t off = i == 0 ? c->q_off : 0;

		iov[i].base = c->q[i]->data + off;
		iov[i].len = c->q[i]->len - off;
		iov[i].handle = c->q[i];
	}
	host_clock(&now, &now_ns);
	took = c->qn ? fg_nntp_session_input(c->s, iov, c->qn, now, now_ns) : 0;
	while (took > 0 && c->qn) {
		uint32_t rest = c->q[0]->len - c->q_off;

		if (took < rest) {
			c->q_off += took;
			break;
		}
		took -= rest;
		/* the chunk being filled stays while it has room */
		if (c->qn == 1 && c->q[0]->len < HOST_CHUNK && c->q[0]->refs == 1) {
			c->q_off = c->q[0]->len;
			break;
		}
		chunk_unref(c->q[0]);
		memmove(c->q, c->q + 1, (c->qn - 1) * sizeof(c->q[0]));
		c->qn--;
		c->q_off = 0;
	}
	if (c->s && c->eof && !c->eof_told && !c->paused && !c->close_asked &&
	    (c->qn == 0 || (c->qn == 1 && c->q_off == c->q[0]->len))) {
		c->eof_told = true;
		fg_nntp_session_eof(c->s, now, now_ns);
	}
}

/* Room to read into: the tail of the last chunk, or a new one. */
static struct host_chunk *read_target(struct host_conn *c)
{
	struct host_chunk *k;

	if (c->qn && c->q[c->qn - 1]->len < HOST_CHUNK)
		return c->q[c->qn - 1];
	if (c->qn == HOST_MAX_CHUNKS)
		return NULL;
	k = chunk_new();
	if (k)
		c->q[c->qn++] = k;
	return k;
}

void host_conn_readable(struct host_conn *c)
{
	if (c->lingering) {
		char sink[4096];
		ssize_t n;

		/* after our close: read and discard until the peer closes */
		do
			n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
		while (n > 0);
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			close_fd(c);
		conn_maybe_free(c);
		return;
	}
	for (unsigned rounds = 0; rounds < 16 && c->s && !c->paused && !c->eof; rounds++) {
		struct host_chunk *k = read_target(c);
		ssize_t n;

		if (!k)
			break;
		n = recv(c->fd, k->data + k->len, HOST_CHUNK - k->len, MSG_DONTWAIT);
		if (n > 0) {
			k->len += (uint32_t)n;
			offer(c);
			continue;
		}
		if (n == 0) {
			c->eof = true;
			host_worker_update(c);
			offer(c);
			break;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			host_conn_error(c);
		break;
	}
}

void host_conn_writable(struct host_conn *c)
{
	c->want_out = false;
	host_worker_update(c);
	if (c->s)
		fg_nntp_session_writable(c->s);
}

/* A reset or an error: the connection is gone. */
void host_conn_error(struct host_conn *c)
{
	close_fd(c);
	report_closed(c);
	conn_maybe_free(c);
}

/* Deferred work, from the worker's loop: never inside an engine call. */
void host_conn_work(struct host_conn *c)
{
	fg_time_t now;
	uint64_t now_ns;

	c->on_work = false;
	if (c->close_asked && c->s) {
		/* our responses are written: send FIN, then drain the peer */
		shutdown(c->fd, SHUT_WR);
		host_clock(&now, &now_ns);
		c->lingering = true;
		c->linger_until = now_ns + HOST_LINGER_NS;
		report_closed(c);
		host_worker_update(c);
	} else if (c->reoffer && c->s && !c->paused) {
		c->reoffer = false;
		offer(c);
		if (c->s && !c->paused && !c->eof)
			host_conn_readable(c);
	}
	conn_maybe_free(c);
}

void host_conn_linger_check(struct host_conn *c, uint64_t now_ns)
{
	if (c->lingering && now_ns >= c->linger_until) {
		close_fd(c);
		conn_maybe_free(c);
	}
}

/* Shutdown: close whatever is left, now. */
void host_conn_force_close(struct host_conn *c)
{
	close_fd(c);
	report_closed(c);
	conn_maybe_free(c);
}
