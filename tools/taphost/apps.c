/* SPDX-License-Identifier: MIT */
/*
 * apps.c — TEST applications for the TAP harness (see apps.h).
 *
 * nntp: a minimal RFC 3977/4644 streaming responder, good enough for the
 * TCP tests: greeting 200, CAPABILITIES, MODE STREAM -> 203, CHECK ->
 * 238 (431 while another session is receiving that ID, 438 once it was
 * accepted), TAKETHIS -> the article is read to its terminating dot, then
 * 239 (439 for an ID accepted before), QUIT -> 205 and close, anything
 * else -> 500. Its "history" is a set of ID strings plus an in-flight
 * set, so a connection that dies mid-article must release its entry in
 * on_close (the tests check that it does). The session engine of issue 4
 * replaces all of this.
 *
 * Back-pressure: a command is only taken when the send buffer has room
 * for its answer; otherwise the app pauses the connection (its data stays
 * queued, the window closes) until on_writable.
 */
#include <stdlib.h>
#include <string.h>

#include "apps.h"

#define LINE_MAX_LEN 512
#define RESP_ROOM 600

struct taphost_app_stats taphost_app_stats;

/* ---------------------------------------------------------------- id set */

struct idset {
	char **slot;
	size_t cap, n;
};

static struct idset accepted_ids, inflight_ids;

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static char **idset_find(struct idset *set, const char *id)
{
	size_t i;

	if (!set->cap)
		return NULL;
	for (i = str_hash(id) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slot[i] || strcmp(set->slot[i], id) == 0)
			return &set->slot[i];
	}
}

static bool idset_has(struct idset *set, const char *id)
{
	char **p = idset_find(set, id);

	return p && *p;
}

static void idset_grow(struct idset *set)
{
	struct idset n = { calloc(set->cap ? set->cap * 2 : 1024, sizeof(char *)),
			   set->cap ? set->cap * 2 : 1024, 0 };

	if (!n.slot)
		abort();
	for (size_t i = 0; i < set->cap; i++) {
		if (set->slot[i]) {
			*idset_find(&n, set->slot[i]) = set->slot[i];
			n.n++;
		}
	}
	free(set->slot);
	*set = n;
}

static void idset_add(struct idset *set, const char *id)
{
	char **p;

	if ((set->n + 1) * 2 > set->cap)
		idset_grow(set);
	p = idset_find(set, id);
	if (*p)
		return;
	*p = strdup(id);
	set->n++;
}

/* Deleting from linear probing: rebuild the cluster after the hole. */
static void idset_del(struct idset *set, const char *id)
{
	char **p = idset_find(set, id);
	size_t i;

	if (!p || !*p)
		return;
	free(*p);
	*p = NULL;
	set->n--;
	for (i = ((size_t)(p - set->slot) + 1) & (set->cap - 1); set->slot[i];
	     i = (i + 1) & (set->cap - 1)) {
		char *k = set->slot[i];

		set->slot[i] = NULL;
		*idset_find(set, k) = k;
	}
}

static void idset_free(struct idset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slot[i]);
	free(set->slot);
	memset(set, 0, sizeof(*set));
}

/* ---------------------------------------------------------------- common */

struct sess {
	struct sess *next, *prev;	/* live sessions, freed at exit */
	struct fg_tcp_conn *conn;
	int kind;			/* 0 discard, 1 echo, 2 nntp */
	bool in_article;
	bool owns_inflight;		/* this session put article_id in flight */
	bool quitting;
	uint8_t dot_state;		/* terminator scan, see scan_article */
	char article_id[LINE_MAX_LEN];
	size_t line_len;
	bool line_overflow;
	char line[LINE_MAX_LEN + 1];
};

static struct sess *live;

static void *accept_kind(struct fg_tcp_conn *c, int kind)
{
	struct sess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->next = live;
	if (live)
		live->prev = s;
	live = s;
	s->conn = c;
	s->kind = kind;
	taphost_app_stats.sessions_open++;
	taphost_app_stats.sessions_total++;
	return s;
}

void taphost_app_cleanup(void)
{
	/* sessions still open when the harness stops (TCP calls no callback
	 * at destroy) */
	while (live) {
		struct sess *n = live->next;

		free(live);
		live = n;
	}
	idset_free(&accepted_ids);
	idset_free(&inflight_ids);
}

static void app_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	struct sess *s = ctx;

	(void)c;
	if (s->in_article && s->owns_inflight) {
		/* the article never completed: its history entry goes */
		idset_del(&inflight_ids, s->article_id);
		taphost_app_stats.inflight_ids--;
		taphost_app_stats.released_on_close++;
	}
	if ((unsigned)why < 5)
		taphost_app_stats.closes[why]++;
	taphost_app_stats.sessions_open--;
	if (s->prev)
		s->prev->next = s->next;
	else
		live = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s);
}

static void app_eof(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx;
	fg_tcp_close(c);
}

static void app_writable(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx;
	fg_tcp_resume(c);
}

static void send_str(struct sess *s, const char *txt, size_t len)
{
	int n = fg_tcp_send(s->conn, txt, (uint32_t)len);

	if (n > 0)
		taphost_app_stats.bytes_out += (uint64_t)n;
}

/* ---------------------------------------------------------------- discard, echo */

static void *discard_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			    const struct fg_endpoint *local)
{
	(void)app, (void)peer, (void)local;
	return accept_kind(c, 0);
}

static uint32_t discard_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov,
			     unsigned n)
{
	uint32_t total = 0;

	(void)ctx, (void)c;
	for (unsigned i = 0; i < n; i++)
		total += iov[i].len;
	taphost_app_stats.bytes_in += total;
	return total;
}

static void *echo_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			 const struct fg_endpoint *local)
{
	(void)app, (void)peer, (void)local;
	return accept_kind(c, 1);
}

static uint32_t echo_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	uint32_t total = 0;

	(void)ctx;
	for (unsigned i = 0; i < n; i++) {
		int sent = fg_tcp_send(c, iov[i].base, iov[i].len);

		if (sent <= 0)
			break;
		total += (uint32_t)sent;
		if ((uint32_t)sent < iov[i].len)
			break;
	}
	taphost_app_stats.bytes_in += total;
	taphost_app_stats.bytes_out += total;
	/* what did not fit stays queued in TCP: the window closes until
	 * on_writable resumes reading */
	if (total == 0 || fg_tcp_send_space(c) == 0) {
		taphost_app_stats.backpressure++;
		fg_tcp_pause(c);
		fg_tcp_want_writable(c, 4096);
	}
	return total;
}

/* ---------------------------------------------------------------- nntp */

static void *nntp_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			 const struct fg_endpoint *local)
{
	static const char greet[] = "200 floodgate taphost test responder (transit only)\r\n";
	struct sess *s;

	(void)app, (void)peer, (void)local;
	s = accept_kind(c, 2);
	if (s)
		send_str(s, greet, sizeof(greet) - 1);
	return s;
}

static void reply_id(struct sess *s, const char *code, const char *id)
{
	char buf[LINE_MAX_LEN + 16];
	int n = snprintf(buf, sizeof(buf), "%s %s\r\n", code, id);

	send_str(s, buf, (size_t)n);
}

static void nntp_command(struct sess *s)
{
	char *line = s->line, *arg;

	taphost_app_stats.commands++;
	while (s->line_len && (line[s->line_len - 1] == '\r' || line[s->line_len - 1] == '\n'))
		line[--s->line_len] = 0;
	arg = strchr(line, ' ');
	if (arg)
		*arg++ = 0;
	if (!strcasecmp(line, "CHECK") && arg) {
		taphost_app_stats.checks++;
		reply_id(s, idset_has(&accepted_ids, arg) ? "438" :
			    idset_has(&inflight_ids, arg) ? "431" : "238", arg);
	} else if (!strcasecmp(line, "TAKETHIS") && arg) {
		snprintf(s->article_id, sizeof(s->article_id), "%s", arg);
		s->in_article = true;
		s->dot_state = 1;	/* the article starts at a line start */
		s->owns_inflight = !idset_has(&inflight_ids, arg);
		if (s->owns_inflight) {
			idset_add(&inflight_ids, arg);
			taphost_app_stats.inflight_ids++;
		}
	} else if (!strcasecmp(line, "MODE") && arg && !strcasecmp(arg, "STREAM")) {
		send_str(s, "203 Streaming permitted\r\n", 25);
	} else if (!strcasecmp(line, "CAPABILITIES")) {
		static const char caps[] = "101 Capability list:\r\nVERSION 2\r\nIHAVE\r\n"
					   "STREAMING\r\n.\r\n";

		send_str(s, caps, sizeof(caps) - 1);
	} else if (!strcasecmp(line, "QUIT")) {
		send_str(s, "205 Bye\r\n", 9);
		s->quitting = true;
	} else {
		send_str(s, "500 Unknown command\r\n", 21);
	}
}

static void article_done(struct sess *s)
{
	const char *id = s->article_id;

	s->in_article = false;
	if (s->owns_inflight) {
		idset_del(&inflight_ids, id);
		taphost_app_stats.inflight_ids--;
		s->owns_inflight = false;
	}
	if (idset_has(&accepted_ids, id)) {
		taphost_app_stats.articles_dup++;
		reply_id(s, "439", id);
	} else {
		idset_add(&accepted_ids, id);
		taphost_app_stats.articles++;
		reply_id(s, "239", id);
	}
}

/*
 * Scan article bytes for the terminating "CRLF.CRLF" (a line holding a
 * single dot). dot_state: 0 mid-line, 1 at a line start, 2 after a dot at
 * a line start, 3 after ".\r". Returns bytes used; the article ended if
 * the state went back to 0 with in_article cleared.
 */
static uint32_t scan_article(struct sess *s, const uint8_t *p, uint32_t len)
{
	uint32_t i = 0;

	while (i < len) {
		if (s->dot_state == 0) {
			const uint8_t *nl = memchr(p + i, '\n', len - i);

			if (!nl)
				return len;
			i = (uint32_t)(nl - p) + 1;
			s->dot_state = 1;
			continue;
		}
		switch (s->dot_state) {
		case 1:
			s->dot_state = p[i] == '.' ? 2 : p[i] == '\n' ? 1 : 0;
			break;
		case 2:
			s->dot_state = p[i] == '\r' ? 3 : p[i] == '\n' ? 1 : 0;
			break;
		default:
			if (p[i] == '\n') {
				s->dot_state = 0;
				article_done(s);
				return i + 1;
			}
			s->dot_state = 0;
			break;
		}
		i++;
	}
	return len;
}

/* Command bytes up to and including LF into the line buffer. */
static uint32_t take_line(struct sess *s, const uint8_t *p, uint32_t len, bool *complete)
{
	const uint8_t *nl = memchr(p, '\n', len);
	uint32_t n = nl ? (uint32_t)(nl - p) + 1 : len;
	uint32_t room = LINE_MAX_LEN - (uint32_t)s->line_len;

	if (n > room) {
		s->line_overflow = true;
		memcpy(s->line + s->line_len, p, room);
		s->line_len += room;
	} else {
		memcpy(s->line + s->line_len, p, n);
		s->line_len += n;
	}
	*complete = nl != NULL;
	return n;
}

static uint32_t nntp_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	struct sess *s = ctx;
	uint32_t used = 0;

	for (unsigned i = 0; i < n && !s->quitting; i++) {
		uint32_t off = 0;

		while (off < iov[i].len && !s->quitting) {
			bool complete;

			if (s->in_article && s->owns_inflight) {
				uint32_t k = scan_article(s, iov[i].base + off, iov[i].len - off);

				taphost_app_stats.article_bytes += k;
				off += k;
				continue;
			}
			if (fg_tcp_send_space(c) < RESP_ROOM) {
				/* stop reading until the answers drain */
				taphost_app_stats.backpressure++;
				fg_tcp_pause(c);
				fg_tcp_want_writable(c, 8 * RESP_ROOM);
				used += off;
				taphost_app_stats.bytes_in += used;
				return used;
			}
			off += take_line(s, iov[i].base + off, iov[i].len - off, &complete);
			if (!complete)
				continue;
			s->line[s->line_len] = 0;
			if (s->line_overflow)
				send_str(s, "500 Line too long\r\n", 19);
			else
				nntp_command(s);
			s->line_len = 0;
			s->line_overflow = false;
		}
		used += off;
	}
	taphost_app_stats.bytes_in += used;
	if (s->quitting)
		fg_tcp_close(c);
	return used;
}

static const struct fg_tcp_app_ops discard_ops = {
	.on_accept = discard_accept, .on_data = discard_data, .on_eof = app_eof,
	.on_close = app_close,
};
static const struct fg_tcp_app_ops echo_ops = {
	.on_accept = echo_accept, .on_data = echo_data, .on_eof = app_eof,
	.on_writable = app_writable, .on_close = app_close,
};
static const struct fg_tcp_app_ops nntp_ops = {
	.on_accept = nntp_accept, .on_data = nntp_data, .on_eof = app_eof,
	.on_writable = app_writable, .on_close = app_close,
};

const struct fg_tcp_app_ops *taphost_app_ops(const char *name)
{
	if (!strcmp(name, "discard"))
		return &discard_ops;
	if (!strcmp(name, "echo"))
		return &echo_ops;
	if (!strcmp(name, "nntp"))
		return &nntp_ops;
	return NULL;
}

void taphost_app_print_stats(FILE *f)
{
	const struct taphost_app_stats *a = &taphost_app_stats;

	fprintf(f, "app_sessions_open %lu\napp_sessions_total %lu\napp_bytes_in %lu\n"
		"app_bytes_out %lu\napp_commands %lu\napp_checks %lu\napp_articles %lu\n"
		"app_articles_dup %lu\napp_article_bytes %lu\napp_inflight_ids %lu\n"
		"app_released_on_close %lu\napp_backpressure %lu\n",
		a->sessions_open, a->sessions_total, a->bytes_in, a->bytes_out, a->commands,
		a->checks, a->articles, a->articles_dup, a->article_bytes, a->inflight_ids,
		a->released_on_close, a->backpressure);
	for (unsigned i = 0; i < 5; i++)
		fprintf(f, "app_close_%s %lu\n", fg_tcp_close_reason_name(i), a->closes[i]);
}
