/* SPDX-License-Identifier: MIT */
/*
 * http.c — the stats endpoint: GET /metrics (Prometheus text format
 * 0.0.4), GET /stats.json and the status page at GET / (statuspage.h;
 * GET /?id=<Message-ID> adds what `floodctl lookup` says of the ID),
 * on the address of config [stats] http (loopback by default; "off" for
 * none).
 *
 * The page's graphs come from a ring of recent samples (the trend) this
 * thread keeps while it listens: a row every --graph-period (5 s), the
 * last TREND_ROWS of them (five minutes by default, about 130 KiB), taken
 * between requests; the thread that renders the ring is the one that
 * fills it.
 *
 * HTTP/1.0, one request per connection, served one at a time: the
 * clients are a scraper or two. A request must arrive whole within 2 s
 * and fit in 8 KiB, or the connection is dropped; a reload that changes
 * the address re-listens (the old socket stays if the new one fails).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/statuspage.h"
#include "floodctld.h"

#define REQ_MAX 8192
#define TREND_ROWS 61			/* 60 steps */
#define PAGE_REFRESH_S 5

int ctld_http_listen(const struct fg_endpoint *ep, int *fd)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char name[80];
	int s, one = 1;

	*fd = -1;
	if (ep->port == 0)
		return 0;
	sl = fg_endpoint_sockaddr(ep, &ss);
	fg_endpoint_format(ep, name, sizeof(name));
	s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (struct sockaddr *)&ss, sl) < 0 || listen(s, 16) < 0) {
		int rc = -errno;

		FG_LOG_ERR(CTLD, "stats endpoint %s: %s", name, strerror(-rc));
		if (s >= 0)
			close(s);
		return rc;
	}
	FG_LOG_INFO(CTLD, "stats endpoint on http://%s/metrics", name);
	*fd = s;
	return 0;
}

static void reply(int fd, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", status, type, len);

	if (fg_datadir_write_all(fd, head, (size_t)n) == 0 && len)
		fg_datadir_write_all(fd, body, len);
}

/* Read until the end of the header section; false on timeout or junk. */
static bool read_request(int fd, char *buf, size_t cap)
{
	size_t have = 0;

	while (have + 1 < cap) {
		ssize_t r = recv(fd, buf + have, cap - 1 - have, 0);

		if (r <= 0)
			return false;
		have += (size_t)r;
		buf[have] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return true;
	}
	return false;
}

/*
 * The status page; with ?id=<Message-ID> (its lookup form) it also says
 * what `floodctl lookup` says of the ID. A value that is not one (too
 * long, a NUL) is answered as an invalid ID, never cut to one.
 */
static void serve_page(struct ctld *d, const struct fg_metrics_state *m,
		       const struct fg_trend *trend, const char *query, struct fg_sbuf *out)
{
	struct fg_page_opts o = { .refresh = PAGE_REFRESH_S };
	char host[256], id[FG_HISTORY_ID_MAX + 2];
	struct fg_sbuf said;
	int rc;

	fg_sbuf_init(&said);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		o.host = host;
	}
	rc = query ? fg_html_form_value(query, strlen(query), "id", id, sizeof(id)) : -ENOENT;
	if (rc > 0) {
		ctld_lookup(d, id, false, &said);
	} else if (rc == -ENOSPC || rc == -EINVAL) {
		snprintf(id, sizeof(id), "(%s)", rc == -ENOSPC ? "too long" : "holds a NUL");
		fg_sbuf_puts(&said, "not a valid Message-ID (RFC 3977 3.6)\n");
	}
	if (rc > 0 || rc == -ENOSPC || rc == -EINVAL) {
		o.lookup_id = id;
		o.lookup_text = said.failed ? "out of memory" : said.p;
	}
	fg_statuspage_render(d->r, m, trend, &o, out);
	fg_sbuf_free(&said);
}

static void serve_one(struct ctld *d, int fd, const struct fg_trend *trend)
{
	static const char prom_type[] = "text/plain; version=0.0.4; charset=utf-8";
	struct timeval tv = { .tv_sec = 2 };
	char req[REQ_MAX], method[16], path[1024], *query;
	struct fg_metrics_state m;
	struct fg_sbuf out;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = 5;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!read_request(fd, req, sizeof(req)) ||
	    sscanf(req, "%15s %1023s HTTP/", method, path) != 2) {
		reply(fd, "400 Bad Request", "text/plain", "bad request\n", 12);
		return;
	}
	ctld_count(d, FG_CTR_HTTP_REQUESTS);
	query = strchr(path, '?');
	if (query)
		*query++ = '\0';
	if (strcmp(method, "GET") != 0) {
		reply(fd, "405 Method Not Allowed", "text/plain", "GET only\n", 9);
		return;
	}
	fg_sbuf_init(&out);
	ctld_metrics_state(d, &m);
	if (strcmp(path, "/metrics") == 0) {
		fg_metrics_prometheus(d->r, &m, &out);
		reply(fd, out.failed ? "500 Internal Server Error" : "200 OK", prom_type, out.p,
		      out.failed ? 0 : out.len);
	} else if (strcmp(path, "/stats.json") == 0) {
		fg_metrics_json(d->r, &m, &out);
		fg_sbuf_puts(&out, "\n");
		reply(fd, out.failed ? "500 Internal Server Error" : "200 OK", "application/json",
		      out.p, out.failed ? 0 : out.len);
	} else if (strcmp(path, "/") == 0) {
		serve_page(d, &m, trend, query, &out);
		reply(fd, out.failed ? "500 Internal Server Error" : "200 OK",
		      "text/html; charset=utf-8", out.p, out.failed ? 0 : out.len);
	} else {
		reply(fd, "404 Not Found", "text/plain", "not found\n", 10);
	}
	fg_sbuf_free(&out);
}

static void rebind(struct ctld *d)
{
	struct fg_endpoint ep;
	int fd;

	pthread_mutex_lock(&d->lock);
	ep = d->set.http;
	d->http_rebind = false;
	pthread_mutex_unlock(&d->lock);
	if (ctld_http_listen(&ep, &fd) < 0)
		return;		/* keep the old one */
	if (d->http_fd >= 0)
		close(d->http_fd);
	d->http_fd = fd;
}

/* A row of the trend when its period is over (only while listening). */
static void trend_tick(struct ctld *d, struct fg_trend *trend)
{
	struct fg_metrics_state m;
	uint64_t now = fg_mono_ns();

	if (!trend || d->http_fd < 0 || !fg_trend_due(trend, now))
		return;
	ctld_metrics_state(d, &m);
	fg_trend_tick(trend, d->r, &m, now);
}

void *ctld_http_main(void *arg)
{
	struct ctld *d = arg;
	struct fg_trend *trend = fg_trend_create(TREND_ROWS, d->opt.graph_period * 1000);

	if (!trend)
		FG_LOG_WARN(CTLD, "no memory for the status page's graphs: the page shows none");
	while (!atomic_load(&d->stop)) {
		struct pollfd p = { .fd = d->http_fd, .events = POLLIN };
		bool again;
		int c;

		pthread_mutex_lock(&d->lock);
		again = d->http_rebind;
		pthread_mutex_unlock(&d->lock);
		if (again)
			rebind(d);
		if (d->http_fd < 0) {
			poll(NULL, 0, 200);
			continue;
		}
		trend_tick(d, trend);
		p.fd = d->http_fd;
		if (poll(&p, 1, 200) <= 0)
			continue;
		c = accept4(d->http_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve_one(d, c, trend);
		close(c);
	}
	fg_trend_free(trend);
	return NULL;
}
