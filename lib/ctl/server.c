/* SPDX-License-Identifier: MIT */
/*
 * server.c — the server side of the control protocol (ctl.h) for the
 * dataplanes' own sockets (floodgate's and floodgate-host's
 * dataplane.sock): one request line per connection, `verb *(SP word)
 * [--json] LF`, at most FG_CTL_LINE_MAX octets, sent within
 * FG_CTL_READ_TIMEOUT_MS; the reply is "ok LEN\n" or "err CODE LEN\n"
 * and LEN octets of body. The socket is created 0600, and a client that
 * is neither root nor this process's user is refused whatever the file
 * mode let through. One request is served at a time.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "floodgate/ctl.h"
#include "floodgate/log.h"
#include "floodgate/sbuf.h"

int fg_ctl_listen(const char *path, const char *comp, int *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd = -1, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		FG_LOG_ERR(comp, "control socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	/* a socket file left by a process that died: nobody answers on it */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		FG_LOG_ERR(comp, "control socket %s: another dataplane answers on it", path);
		close(fd);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	old = umask(077);
	rc = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0
		     ? -errno : 0;
	umask(old);
	if (rc < 0) {
		FG_LOG_ERR(comp, "control socket %s: %s%s", path, strerror(-rc),
			   rc == -ENOENT ? " (no such directory: create it, or set [stats] "
					   "control-socket or --ctl-socket)" : "");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

void fg_ctl_unlisten(int *fd, const char *path)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	unlink(path);
}

/* Read one line within the timeout and parse it; 0, or -errno (*why). */
static int read_request(int fd, struct fg_ctl_req *q, const char **why)
{
	struct timeval tv = { FG_CTL_READ_TIMEOUT_MS / 1000, 0 };
	char line[FG_CTL_LINE_MAX + 1];
	size_t len = 0;

	*why = "no complete request line within 2 s";
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len < FG_CTL_LINE_MAX && !memchr(line, '\n', len)) {
		ssize_t k = read(fd, line + len, FG_CTL_LINE_MAX - len);

		/* a PMD may signal this process on every frame (net_tap's
		 * SIGIO trigger): an interrupted call is simply made again */
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k == 0 ? -EPROTO : -errno;
		len += (size_t)k;
	}
	return fg_ctl_parse_request(line, len, q, why) < 0 ? -EINVAL : 0;
}

/* Root or our own user only, whatever the file mode let through. */
static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
		return false;
	return cr.uid == 0 || cr.uid == geteuid();
}

/* All of buf, through interrupted calls; false when the peer went away
 * (no SIGPIPE: a client that left is no reason to die). */
static bool write_all(int fd, const char *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t k = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		off += (size_t)k;
	}
	return true;
}

static void reply(int fd, const char *err, const char *body, size_t len)
{
	char head[64];
	int n = fg_ctl_format_reply_head(head, sizeof(head), err, len);

	if (n > 0 && write_all(fd, head, (size_t)n) && len)
		write_all(fd, body, len);
}

void fg_ctl_serve_one(int lfd, int timeout_ms,
		      const char *(*fn)(void *arg, const struct fg_ctl_req *q, FILE *f),
		      void *arg)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	struct fg_ctl_req q;
	const char *why = "permission denied: root only";
	char *body = NULL;
	size_t len = 0;
	const char *err;
	FILE *f;
	int fd, rc;

	if (lfd < 0 || poll(&pfd, 1, timeout_ms) <= 0)
		return;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	rc = peer_allowed(fd) ? read_request(fd, &q, &why) : -EACCES;
	f = open_memstream(&body, &len);
	if (!f)
		goto out_close;
	if (rc != 0) {
		fprintf(f, "%s\n", why);
		err = rc == -EACCES ? "denied" : "bad-request";
	} else {
		err = fn(arg, &q, f);
	}
	fclose(f);
	reply(fd, err, body, len);
	free(body);
out_close:
	close(fd);
}

const char *fg_ctl_reload_serve(int (*reload)(void *arg, const char *file, FILE *report),
				void *arg, const struct fg_ctl_req *q, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *r = open_memstream(&text, &len);
	int rc;

	if (!r)
		return "failed";
	rc = reload(arg, q->argc ? q->argv[0] : NULL, r);
	fclose(r);
	if (q->flags & FG_CTL_F_JSON) {
		struct fg_sbuf b;

		fg_sbuf_init(&b);
		fg_sbuf_printf(&b, "{\"reloaded\":%s,\"report\":", rc == 0 ? "true" : "false");
		fg_sbuf_json_str(&b, text, len);
		fg_sbuf_puts(&b, "}\n");
		fwrite(b.p, 1, b.len, f);
		fg_sbuf_free(&b);
	} else {
		fwrite(text, 1, len, f);
	}
	free(text);
	return rc == 0 ? NULL : rc == -EINVAL ? "refused" : "failed";
}
