/* SPDX-License-Identifier: MIT */
/*
 * nntpsrv.c — the scripted loopback news server of nntpsrv.h.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fgtest.h"
#include "nntpsrv.h"

int fg_test_srv_line(struct fg_test_srv *s, struct fg_test_rd *r, char *out, size_t cap)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		struct pollfd p = { r->fd, POLLIN, 0 };
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - r->buf) + 1;

			if (l >= cap)
				return -1;
			memcpy(out, r->buf, l);
			out[l] = '\0';
			memmove(r->buf, r->buf + l, r->len - l);
			r->len -= l;
			return (int)l;
		}
		if (atomic_load(&s->stop))
			return -1;
		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, 0);
		if (n <= 0)
			return -1;
		r->len += (size_t)n;
	}
}

long fg_test_srv_article(struct fg_test_srv *s, struct fg_test_rd *r, char *got, size_t cap,
			 size_t *kept)
{
	char line[4096];
	long total = 0;

	*kept = 0;
	for (;;) {
		int n = fg_test_srv_line(s, r, line, sizeof(line));

		if (n < 0)
			return -1;
		if (strcmp(line, ".\r\n") == 0)
			return total;
		total += n;
		if (*kept + (size_t)n <= cap) {
			memcpy(got + *kept, line, (size_t)n);
			*kept += (size_t)n;
		}
	}
}

void fg_test_say(int fd, const char *fmt, const char *arg)
{
	char line[512];
	int n = snprintf(line, sizeof(line), fmt, arg);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) < 0)
		return;
}

bool fg_test_srv_common(int fd, const char *line, bool streaming)
{
	if (strncmp(line, "CAPABILITIES", 12) == 0)
		fg_test_say(fd, "101 caps\r\nVERSION 2\r\nIHAVE\r\n%s.\r\n",
			    streaming ? "STREAMING\r\n" : "");
	else if (strncmp(line, "MODE STREAM", 11) == 0)
		fg_test_say(fd, streaming ? "203 streaming\r\n%s" : "500 what?\r\n%s", "");
	else if (strncmp(line, "QUIT", 4) == 0)
		fg_test_say(fd, "205 bye%s\r\n", "");
	else
		fg_test_say(fd, "500 unknown%s\r\n", "");
	return strncmp(line, "QUIT", 4) != 0;
}

struct conn_arg {
	struct fg_test_srv *s;
	int fd;
};

static void *conn_main(void *arg)
{
	struct conn_arg *ca = arg;
	int fd = ca->fd;

	ca->s->serve(ca->s, fd);
	free(ca);
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { fd, POLLIN, 0 };
		char junk[4096];

		if (poll(&p, 1, 10) > 0 && recv(fd, junk, sizeof(junk), 0) <= 0)
			break;
	}
	close(fd);
	return NULL;
}

static void *server_main(void *arg)
{
	struct fg_test_srv *s = arg;
	unsigned n = 0;

	while (!atomic_load(&s->stop)) {
		struct pollfd p = { s->lfd, POLLIN, 0 };
		struct conn_arg *ca;
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		atomic_fetch_add(&s->conns, 1);
		ca = n < FG_TEST_SRV_CONNS ? malloc(sizeof(*ca)) : NULL;
		if (ca) {
			ca->s = s;
			ca->fd = fd;
		}
		if (!ca || pthread_create(&s->conn_th[n], NULL, conn_main, ca) != 0) {
			close(fd);
			free(ca);
			continue;
		}
		n++;
	}
	for (unsigned i = 0; i < n; i++)
		pthread_join(s->conn_th[i], NULL);
	return NULL;
}

void fg_test_srv_start(struct fg_test_srv *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(s->port);
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(s->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(s->lfd, 16), 0);
	getsockname(s->lfd, (struct sockaddr *)&sin, &sl);
	s->port = ntohs(sin.sin_port);
	atomic_store(&s->stop, false);
	ck_assert_int_eq(pthread_create(&s->th, NULL, server_main, s), 0);
}

void fg_test_srv_stop(struct fg_test_srv *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	close(s->lfd);
}
