/* SPDX-License-Identifier: MIT */
/*
 * client.c — one request over floodctld's control socket, bounded in time
 * from connect to the last octet of the reply (ctl.h). Every wait is a
 * poll() against one deadline, so a daemon that stops answering — or
 * something else listening on the socket — never hangs the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/common.h"
#include "floodgate/ctl.h"

static int64_t now_ms(void)
{
	return (int64_t)(fg_mono_ns() / 1000000);
}

/* Wait for `events` on fd until the deadline: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left = deadline - now_ms();
	int rc;

	if (left <= 0)
		return -ETIMEDOUT;
	rc = poll(&p, 1, (int)left);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	return rc == 0 ? -ETIMEDOUT : 0;
}

static int connect_to(const char *path, int64_t deadline, int *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc = 0;
	socklen_t el = sizeof(rc);

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		if (rc == -EINPROGRESS || rc == -EAGAIN) {
			rc = wait_fd(fd, POLLOUT, deadline);
			if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &el) == 0)
				rc = -rc;
		}
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			int rc = -errno;

			if (rc == -EAGAIN || rc == -EINTR) {
				rc = wait_fd(fd, POLLOUT, deadline);
				if (rc < 0)
					return rc;
				continue;
			}
			return rc;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read into buf[*have..cap) once; 0 at EOF (sets *eof), or -errno. */
static int recv_some(int fd, char *buf, size_t cap, size_t *have, bool *eof, int64_t deadline)
{
	for (;;) {
		ssize_t r = recv(fd, buf + *have, cap - *have, 0);

		if (r > 0) {
			*have += (size_t)r;
			return 0;
		}
		if (r == 0) {
			*eof = true;
			return 0;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			return (int)r;
	}
}

/* The head line, then exactly body_len octets, then EOF or nothing more. */
static int read_reply(int fd, int64_t deadline, struct fg_ctl_reply *out, const char **why)
{
	char head[96];
	size_t have = 0, body_len = 0, got;
	char *nl = NULL;
	bool eof = false;
	int rc;

	while (!nl) {
		if (have == sizeof(head) || eof) {
			*why = eof ? "connection closed before a reply" : "reply head too long";
			return -EPROTO;
		}
		rc = recv_some(fd, head, sizeof(head), &have, &eof, deadline);
		if (rc < 0)
			return rc;
		nl = memchr(head, '\n', have);
	}
	rc = fg_ctl_parse_reply_head(head, (size_t)(nl - head), &out->ok, out->code, &body_len,
				     why);
	if (rc < 0)
		return rc;
	out->body = malloc(body_len + 1);
	if (!out->body)
		return -ENOMEM;
	got = have - (size_t)(nl + 1 - head);
	if (got > body_len) {
		*why = "more octets than the reply's length";
		return -EPROTO;
	}
	memcpy(out->body, nl + 1, got);
	while (got < body_len) {
		rc = recv_some(fd, out->body, body_len, &got, &eof, deadline);
		if (rc < 0)
			return rc;
		if (eof) {
			*why = "reply shorter than its length";
			return -EPROTO;
		}
	}
	out->body[body_len] = '\0';
	out->body_len = body_len;
	return 0;
}

int fg_ctl_call(const char *socket_path, const struct fg_ctl_req *req, int timeout_ms,
		struct fg_ctl_reply *out, const char **why)
{
	int64_t deadline = now_ms() + timeout_ms;
	char line[FG_CTL_LINE_MAX + 1];
	int fd = -1, n, rc;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	n = fg_ctl_format_request(req, line, sizeof(line));
	if (n < 0) {
		*why = "request too long";
		return n;
	}
	rc = connect_to(socket_path, deadline, &fd);
	if (rc == 0)
		rc = send_all(fd, line, (size_t)n, deadline);
	if (rc == 0)
		rc = read_reply(fd, deadline, out, why);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		fg_ctl_reply_free(out);
	return rc;
}

void fg_ctl_reply_free(struct fg_ctl_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
}
