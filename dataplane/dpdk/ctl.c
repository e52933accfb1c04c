/* SPDX-License-Identifier: MIT */
/*
 * ctl.c — the dataplane's control socket, served by the main lcore.
 *
 * floodctld's protocol and parser (ctl.h): one request line per
 * connection, `verb *(SP word) [--json] LF`, at most FG_CTL_LINE_MAX
 * octets, sent within FG_CTL_READ_TIMEOUT_MS; the reply is "ok LEN\n" or
 * "err CODE LEN\n" and LEN octets of body. The socket is created 0600 in
 * the directory of the control socket ([stats] control-socket), named
 * dataplane.sock, unless --ctl-socket says otherwise: floodctld forwards
 * `floodctl peers | drain | shutdown` there, and a reload once it has
 * validated the file (control/floodctld/dataplane.c).
 *
 * Verbs (the rest of ctl.h's are floodctld's):
 *   ping                  "pong"
 *   status                mode, port, workers, sessions, drain state
 *   stats                 every counter, as --stats-file writes them
 *   peers                 per-peer sessions and counters, and every connection
 *   drain [off]           refuse new sessions (answered 400), or stop refusing
 *   shutdown [SECONDS]    drain, give open sessions that long to end (default:
 *                         --shutdown-grace), answer 400 to the rest, exit
 *   reload [FILE]         load FILE (default: the file started with), switch
 *                         every worker to it between two bursts
 *   throttle REASON / go  innd's throttle: every session 400 REASON, closed
 *   pause PEER [SECONDS] / resume PEER
 *                         a peer's new offers deferred (levers.c)
 * One request is served at a time, between the main loop's other duties.
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

#include "dp.h"
#include "floodgate/ctl.h"
#include "floodgate/log.h"
#include "floodgate/sbuf.h"

int dp_ctl_listen(struct dp *dp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd = -1, rc;

	if (strlen(dp->ctl_path) >= sizeof(sa.sun_path)) {
		FG_LOG_ERR(DP, "control socket path too long: %s", dp->ctl_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, dp->ctl_path);
	/* a socket file left by a dataplane that died: nobody answers on it */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		FG_LOG_ERR(DP, "control socket %s: another dataplane answers on it", dp->ctl_path);
		close(fd);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	unlink(dp->ctl_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	old = umask(077);
	rc = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0
		     ? -errno : 0;
	umask(old);
	if (rc < 0) {
		FG_LOG_ERR(DP, "control socket %s: %s%s", dp->ctl_path, strerror(-rc),
			   rc == -ENOENT ? " (no such directory: create it, or set [stats] "
					   "control-socket or --ctl-socket)" : "");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	dp->ctl_fd = fd;
	return 0;
}

void dp_ctl_close(struct dp *dp)
{
	if (dp->ctl_fd < 0)
		return;
	close(dp->ctl_fd);
	dp->ctl_fd = -1;
	unlink(dp->ctl_path);
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

/* All of buf, through interrupted calls; false when the peer went away. */
static bool write_all(int fd, const char *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t k = write(fd, buf + off, len - off);

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

static int parse_seconds(const char *s, unsigned *ms)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v > 3600)
		return -EINVAL;
	*ms = (unsigned)v * 1000u;
	return 0;
}

/* reload: the report as text, or {"reloaded": bool, "report": text} */
static const char *do_reload(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *r = open_memstream(&text, &len);
	int rc;

	if (!r)
		return "failed";
	rc = dp_reload(dp, q->argc ? q->argv[0] : NULL, r);
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

/* downstream pause|resume NAME (relay.h, fg_relay_pause) */
static const char *do_downstream(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	bool json = q->flags & FG_CTL_F_JSON, pause = strcmp(q->argv[0], "pause") == 0;
	int rc;

	if (!pause && strcmp(q->argv[0], "resume") != 0) {
		fprintf(f, json ? "{\"error\":\"downstream pause|resume NAME\"}\n"
				: "downstream pause|resume NAME\n");
		return "bad-request";
	}
	rc = fg_outbound_downstream_pause(dp->ob, q->argv[1], pause);
	if (rc != 0) {
		fprintf(f, json ? "{\"error\":\"no downstream %s\"}\n" : "no downstream %s\n",
			q->argv[1]);
		return "not-found";
	}
	fprintf(f, json ? "{\"downstream\":\"%s\",\"paused\":%s}\n" : "downstream %s: %s\n",
		q->argv[1], json ? (pause ? "true" : "false")
				 : (pause ? "paused (nothing is sent to it until resumed)" : "resumed"));
	return NULL;
}

/* Run one request; the body goes to f. Returns NULL or an error code. */
static const char *run(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	bool json = q->flags & FG_CTL_F_JSON, on;
	unsigned ms;
	int rc;

	switch (q->verb) {
	case FG_CTL_PING:
		fprintf(f, json ? "{\"pong\":true}\n" : "pong\n");
		return NULL;
	case FG_CTL_STATUS:
		dp_status(dp, f, json);
		return NULL;
	case FG_CTL_STATS:
		dp_write_counters(f, dp);
		return NULL;
	case FG_CTL_PEERS:
		rc = dp_peers(dp, f, json);
		if (rc != 0)
			fprintf(f, "peers: %s\n", strerror(-rc));
		return rc ? "failed" : NULL;
	case FG_CTL_DRAIN:
		if (q->argc && strcmp(q->argv[0], "off")) {
			fprintf(f, "drain takes no argument but \"off\"\n");
			return "bad-request";
		}
		on = q->argc == 0;
		dp_request_drain(dp, on);
		fprintf(f, json ? "{\"draining\":%s}\n" : "draining: %s\n",
			on ? (json ? "true" : "yes; new sessions are answered 400")
			   : (json ? "false" : "no; new sessions are accepted"));
		return NULL;
	case FG_CTL_SHUTDOWN:
		ms = dp->o.shutdown_grace_ms;
		if (q->argc && parse_seconds(q->argv[0], &ms) != 0) {
			fprintf(f, "shutdown: the grace is 0 to 3600 seconds\n");
			return "bad-request";
		}
		dp_request_shutdown(dp, ms);
		fprintf(f, json ? "{\"shutdown\":true,\"grace_ms\":%u}\n" :
				  "shutting down: sessions have %u ms to end\n", ms);
		return NULL;
	case FG_CTL_RELOAD:
		return do_reload(dp, q, f);
	case FG_CTL_THROTTLE:
	case FG_CTL_GO:
	case FG_CTL_PAUSE:
	case FG_CTL_RESUME:
		return dp_levers_ctl(dp, q, f);
	case FG_CTL_DOWNSTREAM:
		return do_downstream(dp, q, f);
	default:
		fprintf(f, "%s is floodctld's, not the dataplane's\n", fg_ctl_verb_name(q->verb));
		return "bad-request";
	}
}

void dp_ctl_serve(struct dp *dp, int timeout_ms)
{
	struct pollfd pfd = { .fd = dp->ctl_fd, .events = POLLIN };
	struct fg_ctl_req q;
	const char *why = "permission denied: root only";
	char *body = NULL;
	size_t len = 0;
	const char *err;
	FILE *f;
	int fd, rc;

	if (dp->ctl_fd < 0 || poll(&pfd, 1, timeout_ms) <= 0)
		return;
	fd = accept4(dp->ctl_fd, NULL, NULL, SOCK_CLOEXEC);
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
		err = run(dp, &q, f);
	}
	fclose(f);
	reply(fd, err, body, len);
	free(body);
out_close:
	close(fd);
}
