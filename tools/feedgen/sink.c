/* SPDX-License-Identifier: MIT */
/*
 * sink.c — feedgen's downstream sink (--sink ADDR:PORT): the site's
 * server at the far end of floodgate's relay, in the same process as the
 * peers, so that on a two-core machine the kernel-free run is one feedgen
 * (the peers polling memif) beside one floodgate worker
 * (tools/bench/feed_path.sh).
 *
 *  1. A thread of its own listens on ADDR:PORT (kernel TCP: floodgate's
 *     relay reaches its downstreams through kernel sockets; a downstream
 *     fed through the port by floodgate's own TCP is the hook in
 *     feed_path.sh) and greets every connection with 200.
 *  2. Lines: MODE STREAM 203, CAPABILITIES (VERSION 2, IHAVE, STREAMING),
 *     CHECK 238, IHAVE 335, QUIT 205; anything else 500.
 *  3. After TAKETHIS (or IHAVE's 335) the article's octets are counted, not
 *     kept, up to the RFC 3977 3.1.1 terminator (CRLF "." CRLF, found
 *     across reads), then 239 (235): a server that takes everything at
 *     once, so what the peer waits beyond it is floodgate's.
 *  4. Every 239 sent is stamped (CLOCK_REALTIME) in --sink-times FILE,
 *     "<Message-ID> <ns>", to set beside the peers' --accept-times.
 * The sink judges nothing: floodgate's answers to the peers are judged
 * by the checker as always, and the sink's counts are reported.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "feedgen.h"

#define SINK_IN_CAP (256u << 10)
#define SINK_OUT_CAP (64u << 10)
#define SINK_MAX_CONNS 256
#define SINK_ID_MAX 256
#define SINK_TAIL 4			/* octets of "\r\n.\r\n" that can end a read */

static const char terminator[] = "\r\n.\r\n";

enum sink_state { SK_LINE = 0, SK_TAKETHIS, SK_IHAVE };

struct sink_conn {
	int fd;
	enum sink_state state;
	char id[SINK_ID_MAX];
	char tail[SINK_TAIL];
	unsigned ntail;
	char in[SINK_IN_CAP];
	size_t in_len;
	char out[SINK_OUT_CAP];
	size_t out_len;
};

struct feed_sink {
	int lfd, ep;
	pthread_t th;
	atomic_bool stop;
	FILE *times;
	struct feed_sink_stats st;	/* written by the thread; read after it ends */
	atomic_uint connections;
	atomic_uint_fast64_t articles;	/* st.articles, for feed_sink_articles */
	struct sink_conn *c[SINK_MAX_CONNS];
};

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void conn_close(struct feed_sink *s, unsigned k)
{
	struct sink_conn *c = s->c[k];

	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
	s->c[k] = NULL;
}

/* Queue an answer; the socket takes it now or on EPOLLOUT. -1: no room. */
static int conn_say(struct feed_sink *s, unsigned k, const char *fmt, const char *arg)
{
	struct sink_conn *c = s->c[k];
	int n = snprintf(c->out + c->out_len, SINK_OUT_CAP - c->out_len, fmt, arg);
	ssize_t w;

	if (n < 0 || (size_t)n >= SINK_OUT_CAP - c->out_len)
		return -1;
	c->out_len += (size_t)n;
	w = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w > 0) {
		memmove(c->out, c->out + w, c->out_len - (size_t)w);
		c->out_len -= (size_t)w;
	}
	if (c->out_len) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = k };

		epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
	}
	return 0;
}

/* The first word's argument ("CHECK <id>"), copied to c->id; "" if none. */
static void take_id(struct sink_conn *c, const char *line)
{
	const char *sp = strchr(line, ' ');
	size_t n;

	c->id[0] = '\0';
	if (!sp)
		return;
	n = strcspn(sp + 1, " \r\n");
	if (n >= SINK_ID_MAX)
		n = SINK_ID_MAX - 1;
	memcpy(c->id, sp + 1, n);
	c->id[n] = '\0';
}

static bool verb_is(const char *line, const char *verb)
{
	size_t n = strlen(verb);

	return strncasecmp(line, verb, n) == 0 && (line[n] == ' ' || line[n] == '\0');
}

/* One command line (its CRLF cut). -1 closes the connection. */
static int on_line(struct feed_sink *s, unsigned k, char *line)
{
	struct sink_conn *c = s->c[k];

	if (verb_is(line, "TAKETHIS") || verb_is(line, "IHAVE")) {
		bool ihave = verb_is(line, "IHAVE");

		take_id(c, line);
		c->state = ihave ? SK_IHAVE : SK_TAKETHIS;
		memcpy(c->tail, "\r\n", 2);	/* the command's CRLF starts the article */
		c->ntail = 2;
		return ihave ? conn_say(s, k, "335 %s\r\n", c->id) : 0;
	}
	if (verb_is(line, "CHECK")) {
		take_id(c, line);
		s->st.checks++;
		return conn_say(s, k, "238 %s\r\n", c->id);
	}
	if (strcasecmp(line, "MODE STREAM") == 0)
		return conn_say(s, k, "203 %s\r\n", "streaming permitted");
	if (strcasecmp(line, "CAPABILITIES") == 0)
		return conn_say(s, k, "101 %s\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n.\r\n",
				"capability list");
	if (strcasecmp(line, "QUIT") == 0) {
		conn_say(s, k, "205 %s\r\n", "bye");
		return -1;
	}
	return conn_say(s, k, "500 %s\r\n", "what?");
}

/* Where the terminator ends in c->in[0..len), tail octets included, or 0. */
static size_t find_end(const struct sink_conn *c)
{
	char edge[2 * SINK_TAIL];
	size_t head = c->in_len < SINK_TAIL ? c->in_len : SINK_TAIL;
	const char *p;

	memcpy(edge, c->tail, c->ntail);
	memcpy(edge + c->ntail, c->in, head);
	p = memmem(edge, c->ntail + head, terminator, 5);
	if (p)
		return (size_t)(p - edge) + 5 - c->ntail;
	p = memmem(c->in, c->in_len, terminator, 5);
	return p ? (size_t)(p - c->in) + 5 : 0;
}

/* Everything buffered: article octets and lines. -1 closes. */
static int on_data(struct feed_sink *s, unsigned k)
{
	struct sink_conn *c = s->c[k];

	for (;;) {
		if (c->state != SK_LINE) {
			size_t end = find_end(c);

			if (!end) {
				/* all of it is the article's; keep its last octets */
				size_t keep = c->in_len < SINK_TAIL ? c->in_len : SINK_TAIL;
				char t[2 * SINK_TAIL];
				unsigned nt = c->ntail + (unsigned)keep;

				memcpy(t, c->tail, c->ntail);
				memcpy(t + c->ntail, c->in + c->in_len - keep, keep);
				c->ntail = nt < SINK_TAIL ? nt : SINK_TAIL;
				memcpy(c->tail, t + nt - c->ntail, c->ntail);
				s->st.octets += c->in_len;
				c->in_len = 0;
				return 0;
			}
			s->st.octets += end;
			s->st.articles++;
			atomic_store(&s->articles, s->st.articles);
			if (s->times)
				fprintf(s->times, "%s %llu\n", c->id, (unsigned long long)real_ns());
			if (conn_say(s, k, c->state == SK_IHAVE ? "235 %s\r\n" : "239 %s\r\n",
				     c->id) < 0)
				return -1;
			c->state = SK_LINE;
			memmove(c->in, c->in + end, c->in_len - end);
			c->in_len -= end;
			continue;
		}
		char *nl = memmem(c->in, c->in_len, "\r\n", 2);
		size_t used;

		if (!nl)
			return c->in_len == SINK_IN_CAP ? -1 : 0;
		*nl = '\0';
		used = (size_t)(nl - c->in) + 2;
		if (on_line(s, k, c->in) < 0)
			return -1;
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
}

static void on_accept(struct feed_sink *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int one = 1;
	unsigned k;

	if (fd < 0)
		return;
	for (k = 0; k < SINK_MAX_CONNS && s->c[k]; k++)
		;
	if (k == SINK_MAX_CONNS || !(s->c[k] = calloc(1, sizeof(struct sink_conn)))) {
		close(fd);
		return;
	}
	s->c[k]->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };

	epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev);
	atomic_fetch_add(&s->connections, 1);
	conn_say(s, k, "200 %s\r\n", "feedgen sink ready (streaming)");
}

static void on_event(struct feed_sink *s, unsigned k, uint32_t events)
{
	struct sink_conn *c = s->c[k];
	ssize_t r;

	if (!c)
		return;
	if ((events & EPOLLOUT) && c->out_len) {
		r = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			memmove(c->out, c->out + r, c->out_len - (size_t)r);
			c->out_len -= (size_t)r;
		}
		if (!c->out_len) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };

			epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (;;) {
		r = recv(c->fd, c->in + c->in_len, SINK_IN_CAP - c->in_len, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_close(s, k);
			return;
		}
		if (r < 0)
			return;
		c->in_len += (size_t)r;
		if (on_data(s, k) < 0) {
			conn_close(s, k);
			return;
		}
	}
}

static void *sink_main(void *arg)
{
	struct feed_sink *s = arg;
	struct epoll_event ev[64];

	while (!atomic_load(&s->stop)) {
		int n = epoll_wait(s->ep, ev, 64, 100);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == UINT32_MAX)
				on_accept(s);
			else
				on_event(s, ev[i].data.u32, ev[i].events);
		}
	}
	return NULL;
}

/* "ADDR:PORT" (IPv4) into sa. */
static int parse_listen(const char *spec, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	char *end;
	unsigned long port;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end || port == 0 || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

struct feed_sink *feed_sink_start(const char *listen_spec, const char *times_path)
{
	struct feed_sink *s = calloc(1, sizeof(*s));
	struct sockaddr_in sa;
	int one = 1;

	if (!s)
		return NULL;
	s->lfd = s->ep = -1;
	if (parse_listen(listen_spec, &sa) < 0) {
		fprintf(stderr, "feedgen: bad --sink %s (ADDR:PORT)\n", listen_spec);
		goto fail;
	}
	if (times_path && !(s->times = fopen(times_path, "we"))) {
		fprintf(stderr, "feedgen: %s: %s\n", times_path, strerror(errno));
		goto fail;
	}
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->lfd < 0 || s->ep < 0)
		goto fail_errno;
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s->lfd, 64) < 0)
		goto fail_errno;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };

	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0)
		goto fail_errno;
	if (pthread_create(&s->th, NULL, sink_main, s) != 0)
		goto fail_errno;
	pthread_setname_np(s->th, "feedgen-sink");
	return s;
fail_errno:
	fprintf(stderr, "feedgen: sink on %s: %s\n", listen_spec, strerror(errno));
fail:
	if (s->times)
		fclose(s->times);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->ep >= 0)
		close(s->ep);
	free(s);
	return NULL;
}

unsigned feed_sink_connections(struct feed_sink *s)
{
	return atomic_load(&s->connections);
}

uint64_t feed_sink_articles(struct feed_sink *s)
{
	return atomic_load(&s->articles);
}

void feed_sink_stop(struct feed_sink *s, struct feed_sink_stats *st)
{
	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	*st = s->st;
	st->connections = atomic_load(&s->connections);
	for (unsigned k = 0; k < SINK_MAX_CONNS; k++)
		if (s->c[k])
			conn_close(s, k);
	if (s->times)
		fclose(s->times);
	close(s->lfd);
	close(s->ep);
	free(s);
}
