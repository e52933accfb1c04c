/* SPDX-License-Identifier: MIT */
/*
 * ctlsrv.c — the control socket (ctl.h has the protocol): bind it 0600,
 * accept, and serve each client in a thread of its own, so a snapshot or
 * an expiry pass that takes minutes never holds up `floodctl status`.
 * Clients beyond CLIENTS_MAX get "err busy" at once. A client must send
 * its line within 2 s; one that is not root or floodctld's own user is
 * refused even if the file mode let it connect.
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

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodctld.h"

#define CLIENTS_MAX 16
#define SNAPSHOT_WAIT_MS (30 * 60 * 1000)
#define EXPIRE_WAIT_MS (30 * 60 * 1000)
#define REOPEN_WAIT_MS (10 * 1000)

struct client {
	struct ctld *d;
	int fd;
};

/* A socket file nobody answers on is stale; one that answers is in use. */
static int clear_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, rc = 0;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		rc = -EADDRINUSE;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && unlink(sa->sun_path) < 0)
		rc = -errno;
	return rc;
}

static int make_parent(const char *path)
{
	char dir[FG_CONFIG_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	return access(dir, F_OK) == 0 ? 0 : fg_datadir_make(dir);
}

int ctld_ctl_listen(struct ctld *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	if (strlen(d->ctl_path) >= sizeof(sa.sun_path)) {
		FG_LOG_ERR(CTLD, "control socket path too long: %s", d->ctl_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, d->ctl_path);
	rc = make_parent(d->ctl_path);
	if (rc == 0)
		rc = clear_stale(&sa);
	if (rc < 0) {
		FG_LOG_ERR(CTLD, "control socket %s: %s", d->ctl_path,
			   rc == -EADDRINUSE ? "another floodctld answers on it" : strerror(-rc));
		return rc;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	old = umask(077);	/* created 0600: no window with a wider mode */
	rc = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 32) < 0
		     ? -errno : 0;
	umask(old);
	if (rc == 0 && chmod(d->ctl_path, 0600) < 0)
		rc = -errno;
	if (rc < 0) {
		FG_LOG_ERR(CTLD, "control socket %s: %s", d->ctl_path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	d->ctl_fd = fd;
	return 0;
}

static void send_reply(int fd, const char *err_code, const struct fg_sbuf *body)
{
	char head[64];
	int n = fg_ctl_format_reply_head(head, sizeof(head), err_code, body->len);

	if (n > 0 && fg_datadir_write_all(fd, head, (size_t)n) == 0 && body->len)
		fg_datadir_write_all(fd, body->p, body->len);
}

/* An error body: one line, or {"error": ...} for --json. */
static void error_body(struct fg_sbuf *b, bool json, const char *msg)
{
	fg_sbuf_reset(b);
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, b);
		fg_json_str(&j, "error", msg);
		fg_json_end(&j);
		fg_sbuf_puts(b, "\n");
	} else {
		fg_sbuf_printf(b, "%s\n", msg);
	}
}

static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0 &&
	       (cr.uid == 0 || cr.uid == geteuid());
}

/* Read one line (LF) within the socket's receive timeout. */
static int read_line(int fd, char *buf, size_t cap, size_t *len)
{
	size_t have = 0;

	while (have < cap) {
		ssize_t r = recv(fd, buf + have, cap - have, 0);
		char *nl;

		if (r <= 0)
			return r == 0 ? -EPIPE : -errno;
		nl = memchr(buf + have, '\n', (size_t)r);
		have += (size_t)r;
		if (nl) {
			*len = (size_t)(nl - buf) + 1;
			return 0;
		}
	}
	return -E2BIG;
}

static const char *do_expire(struct ctld *d, const struct fg_ctl_req *q, struct fg_sbuf *out)
{
	struct fg_expiry_result e;
	bool json = q->flags & FG_CTL_F_JSON;
	int rc = q->flags & FG_CTL_F_DRY_RUN ? ctld_expire_dry_run(d, &e)
					      : ctld_expire_request(d, EXPIRE_WAIT_MS, &e);

	if (rc < 0) {
		error_body(out, json, rc == -ETIMEDOUT ? "the expiry pass is still running"
						       : "expiry refused its parameters");
		return "failed";
	}
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		ctld_expiry_json(&j, &e);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else {
		ctld_expiry_text(out, &e);
	}
	return NULL;
}

static const char *do_snapshot(struct ctld *d, bool json, struct fg_sbuf *out)
{
	struct fg_snap_info info;
	double secs;
	int rc = ctld_snap_request(d, SNAPSHOT_WAIT_MS, &info, &secs);

	if (rc < 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "snapshot failed: %s (see floodctld's log)", strerror(-rc));
		error_body(out, json, msg);
		return "failed";
	}
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_u64(&j, "sequence", info.seq);
		fg_json_u64(&j, "entries", info.entries);
		fg_json_u64(&j, "journal_segment", info.covers.segment);
		fg_json_u64(&j, "journal_offset", info.covers.offset);
		fg_json_u64(&j, "bytes", info.image_size + FG_SNAP_HEADER);
		fg_json_f64(&j, "seconds", secs);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else {
		fg_sbuf_printf(out, "snapshot %llu written: %llu entries, %llu octets, covers journal %llu:%llu, %.2f s\n",
			       (unsigned long long)info.seq, (unsigned long long)info.entries,
			       (unsigned long long)(info.image_size + FG_SNAP_HEADER),
			       (unsigned long long)info.covers.segment,
			       (unsigned long long)info.covers.offset, secs);
	}
	return NULL;
}

static const char *do_stats(struct ctld *d, const struct fg_ctl_req *q, struct fg_sbuf *out)
{
	unsigned flags = q->flags;
	struct fg_metrics_state m;

	if (q->argc) {
		/* one peer: the Prometheus text is /metrics' whole, labelled */
		if (flags & FG_CTL_F_PROM) {
			error_body(out, false, "--peer and --prom do not go together: /metrics "
				   "labels every peer's series");
			return "bad-request";
		}
		if (fg_metrics_peer(d->r, q->argv[0], flags & FG_CTL_F_JSON, out) == 0)
			return NULL;
		error_body(out, flags & FG_CTL_F_JSON, "no peer of that name");
		return "not-found";
	}
	ctld_metrics_state(d, &m);
	if (flags & FG_CTL_F_PROM) {
		fg_metrics_prometheus(d->r, &m, out);
	} else if (flags & FG_CTL_F_JSON) {
		fg_metrics_json(d->r, &m, out);
		fg_sbuf_puts(out, "\n");
	} else {
		fg_metrics_table(d->r, &m, out);
	}
	return NULL;
}

static const char *do_reopen_logs(struct ctld *d, bool json, struct fg_sbuf *out)
{
	char path[FG_CONFIG_PATH_MAX];

	if (ctld_vlog_reopen(d, REOPEN_WAIT_MS, path, sizeof(path)) < 0) {
		error_body(out, json, "the verdict log was not reopened in time");
		return "failed";
	}
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "verdict_log", path[0] ? path : NULL);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else if (path[0]) {
		fg_sbuf_printf(out, "verdict log reopened: %s\n", path);
	} else {
		fg_sbuf_puts(out, "verdict log is off; nothing to reopen\n");
	}
	return NULL;
}

/* From the queue's files and the dataplane's status file: floodctld needs
 * no dataplane socket for it (floodgate-host has none). */
static const char *do_downstreams(struct ctld *d, bool json, struct fg_sbuf *out)
{
	struct fg_metrics_state *m = calloc(1, sizeof(*m));

	if (!m)
		return "failed";
	ctld_metrics_state(d, m);
	fg_metrics_downstreams(m, json, out);
	free(m);
	return NULL;
}

/* report [SECONDS]: the word floodctl sends for --since */
static const char *do_report(struct ctld *d, const struct fg_ctl_req *q, struct fg_sbuf *out)
{
	int64_t since = 0;

	if (q->argc && (fg_parse_duration(q->argv[0], &since) < 0 || since <= 0)) {
		error_body(out, q->flags & FG_CTL_F_JSON, "report wants a duration (3600, 24h, 7d)");
		return "bad-request";
	}
	return ctld_report(d, since, q->flags, out);
}

/* Run one request; the error code for the reply head, or NULL. */
static const char *dispatch(struct ctld *d, const struct fg_ctl_req *q, struct fg_sbuf *out)
{
	bool json = q->flags & FG_CTL_F_JSON;
	int rc;

	switch (q->verb) {
	case FG_CTL_PING:
		fg_sbuf_printf(out, json ? "{\"pong\":true,\"pid\":%d}\n" : "pong %d\n", (int)getpid());
		return NULL;
	case FG_CTL_STATUS:
		ctld_status(d, json, out);
		return NULL;
	case FG_CTL_STATS:
		return do_stats(d, q, out);
	case FG_CTL_LOOKUP:
		rc = ctld_lookup(d, q->argv[0], json, out);
		return rc == -EINVAL ? "bad-request" : rc == -ENOENT ? "not-found" : NULL;
	case FG_CTL_EXPIRE:
		return do_expire(d, q, out);
	case FG_CTL_SNAPSHOT:
		return do_snapshot(d, json, out);
	case FG_CTL_RELOAD:
		return ctld_reload_all(d, q->argc ? q->argv[0] : NULL, json, out);
	case FG_CTL_REOPEN_LOGS:
		return do_reopen_logs(d, json, out);
	case FG_CTL_PEERS:
	case FG_CTL_DRAIN:
	case FG_CTL_SHUTDOWN:
	case FG_CTL_THROTTLE:
	case FG_CTL_GO:
	case FG_CTL_PAUSE:
	case FG_CTL_RESUME:
	case FG_CTL_DOWNSTREAM:
		return ctld_dataplane_forward(d, q, out);
	case FG_CTL_DOWNSTREAMS:
		return do_downstreams(d, json, out);
	case FG_CTL_REPORT:
		return do_report(d, q, out);
	case FG_CTL_FORGET:
		return ctld_forget(d, q->argv[0], json, out);
	case FG_CTL_REMEMBER:
		return ctld_remember(d, q->argv[0], q->argc > 1 ? q->argv[1] : NULL, json, out);
	case FG_CTL_REMEMBER_FILE:
		return ctld_remember_file(d, q->argv[0], q->argv[1], json, out);
	default:
		return "bad-request";
	}
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct ctld *d = c->d;
	struct timeval tv = { .tv_sec = FG_CTL_READ_TIMEOUT_MS / 1000 };
	char line[FG_CTL_LINE_MAX + 1];
	struct fg_ctl_req q;
	struct fg_sbuf out;
	const char *why = NULL, *code = NULL;
	size_t len = 0;

	fg_sbuf_init(&out);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = 10;
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ctld_count(d, FG_CTR_CTL_REQUESTS);
	if (!peer_allowed(c->fd)) {
		code = "denied";
		error_body(&out, false, "permission denied: root only");
	} else if (read_line(c->fd, line, sizeof(line), &len) < 0) {
		code = "bad-request";
		error_body(&out, false, "no complete request line (LF) within 2 s and 1024 octets");
	} else if (fg_ctl_parse_request(line, len, &q, &why) < 0) {
		code = "bad-request";
		error_body(&out, false, why);
	} else {
		code = dispatch(d, &q, &out);
	}
	if (out.failed) {
		code = "failed";
		fg_sbuf_free(&out);
		error_body(&out, false, "out of memory");
	}
	if (code)
		ctld_count(d, FG_CTR_CTL_ERRORS);
	send_reply(c->fd, code, &out);
	fg_sbuf_free(&out);
	close(c->fd);
	free(c);
	atomic_fetch_sub(&d->ctl_clients, 1);
	return NULL;
}

static void spawn_client(struct ctld *d, int fd)
{
	struct client *c = malloc(sizeof(*c));
	pthread_attr_t at;
	pthread_t t;

	if (!c || atomic_fetch_add(&d->ctl_clients, 1) >= CLIENTS_MAX) {
		struct fg_sbuf b;

		if (c)
			atomic_fetch_sub(&d->ctl_clients, 1);
		fg_sbuf_init(&b);
		error_body(&b, false, "too many clients; try again");
		send_reply(fd, "busy", &b);
		fg_sbuf_free(&b);
		close(fd);
		free(c);
		return;
	}
	c->d = d;
	c->fd = fd;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, client_main, c) != 0) {
		close(fd);
		free(c);
		atomic_fetch_sub(&d->ctl_clients, 1);
	}
	pthread_attr_destroy(&at);
}

void *ctld_ctl_main(void *arg)
{
	struct ctld *d = arg;

	while (!atomic_load(&d->stop)) {
		struct pollfd p = { .fd = d->ctl_fd, .events = POLLIN };
		int c;

		if (poll(&p, 1, 200) <= 0)
			continue;
		c = accept4(d->ctl_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			spawn_client(d, c);
	}
	/* let running clients finish before the state they use goes away */
	for (int i = 0; i < 100 && atomic_load(&d->ctl_clients); i++)
		poll(NULL, 0, 50);
	return NULL;
}
