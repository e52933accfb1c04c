/* SPDX-License-Identifier: MIT */
/*
 * answers.c — what comes back on one connection of a feed: the session's
 * state machine, driven by the server's lines, and every answer checked.
 *
 *   CONNECTING -> GREETING (200/201) -> [CAPS (101 ... ".")] ->
 *   [MODE (MODE STREAM -> 203)] -> RUN -> QUIT (205) -> DONE
 *
 * Answers come in command order (RFC 4644 2.3: pipelining is what
 * streaming is for), so every answer is matched to the oldest command in
 * flight: its code, and the Message-ID it must repeat (RFC 4644 2.4.1,
 * 2.5.1). The checker (workload/wlcheck.h) holds the model and says what
 * to do with the offer: done, send the article, offer again later (431,
 * as innfeed does; at most --max-retries per article and peer), or
 * reconnect (400: close, reconnect, and re-offer every offer that had no
 * final answer). Anything the model did not expect is a mismatch, which
 * fails the run.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client_int.h"
#include "floodgate/log.h"

static int parse_code(const char *line, size_t len)
{
	if (len < 3 || line[0] < '1' || line[0] > '5' || line[1] < '0' || line[1] > '9' ||
	    line[2] < '0' || line[2] > '9' || (len > 3 && line[3] != ' '))
		return -1;
	return (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
}

/* RFC 4644 2.4.1/2.5.1: the first argument of the answer is the ID. */
static bool names_id(const char *line, size_t len, uint64_t hash)
{
	size_t end = 4;

	if (len < 5)
		return false;
	while (end < len && line[end] != ' ')
		end++;
	return feed_id_hash(line + 4, end - 4) == hash;
}

/* The cap is per peer, as a real feeder's is: peers racing for one article
 * are deferred while the winner sends it, and must not use up each
 * other's retries. */
static void on_retry(struct feed *f, struct conn *c, uint32_t art, uint64_t now)
{
	uint8_t *tries = &f->tries[(size_t)art * f->o->wl.peers + c->peer];

	if (*tries >= f->o->max_retries) {
		struct fg_wl_article a;

		fg_wl_article(f->wl, art, &a);
		fg_wlc_mismatch(f->chk, "peer %u conn %u: %s deferred %u times; given up",
				c->peer, c->id, a.msgid, *tries);
		return;
	}
	(*tries)++;
	if (feed_aring_push(&c->retry, art, now + (uint64_t)(f->o->retry_delay * 1e9)) == 0)
		f->retries_pending++;
}

/* An article's one 239/235: its octets, and its moment for --accept-times
 * (CLOCK_REALTIME, to set beside a downstream's own stamps). */
static void on_accepted(struct feed *f, struct conn *c, uint32_t art)
{
	struct fg_wl_article a;
	struct timespec ts;

	fg_wl_article(f->wl, art, &a);
	f->res->accepted_bytes += fg_wl_wire_len(f->wl, &a, c->peer);
	if (!f->accept_times)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f->accept_times, "%s %llu\n", a.msgid,
		(unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
}

static void on_answer(struct feed *f, struct conn *c, const char *line, size_t len,
		      int code, uint64_t now)
{
	struct inflight e;
	enum fg_wlc_action act;
	bool offer;

	if (c->infl_n == 0) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: answer with no command in flight: %.*s",
				c->peer, c->id, (int)FG_MIN(len, 80u), line);
		feed_conn_lost(f, c, "protocol error");
		return;
	}
	e = c->infl[c->infl_head];
	c->infl_head = (c->infl_head + 1) % c->infl_cap;
	c->infl_n--;
	offer = e.cmd == FG_WLC_CHECK || e.cmd == FG_WLC_IHAVE;
	fg_lathist_add(offer ? &f->res->lat_offer : &f->res->lat_article, now - e.t_ns);
	if ((e.cmd == FG_WLC_CHECK || e.cmd == FG_WLC_TAKETHIS) && code != 400 &&
	    !names_id(line, len, e.id_hash)) {
		struct fg_wl_article a;

		fg_wl_article(f->wl, e.art, &a);
		fg_wlc_mismatch(f->chk, "peer %u conn %u: answer to %s does not name it "
				"(RFC 4644 2.4.1): %.*s", c->peer, c->id, a.msgid,
				(int)FG_MIN(len, 80u), line);
		return;
	}
	act = fg_wlc_response(f->chk, e.art, e.cmd, code, e.stamp, c->peer, c->id);
	if (act == FG_WLC_DONE && (code == 239 || code == 235))
		on_accepted(f, c, e.art);
	if (act == FG_WLC_SEND) {
		if (feed_queue_cmd(f, c, e.art, e.cmd == FG_WLC_CHECK ? FG_WLC_TAKETHIS :
							     FG_WLC_IHAVE_ART) < 0)
			fg_wlc_mismatch(f->chk, "out of memory queueing an article");
	} else if (act == FG_WLC_RETRY) {
		on_retry(f, c, e.art, now);
	} else if (act == FG_WLC_RECONNECT) {
		/* RFC 4644 2.5.2: 400 to TAKETHIS, the article was not taken */
		feed_aring_push(&c->reoffer, e.art, 0);
		feed_conn_lost(f, c, "400");
	}
}

/* After the greeting (and capabilities): MODE STREAM, or straight to work. */
static void start_session(struct feed *f, struct conn *c, uint64_t now)
{
	if (f->o->mode != FEED_IHAVE && f->o->mode_stream) {
		feed_out_add(c, "MODE STREAM\r\n", 13);
		c->state = ST_MODE;
		return;
	}
	c->state = ST_RUN;
	feed_fill(f, c, now);
}

static void on_caps_line(struct feed *f, struct conn *c, const char *line, size_t len,
			 int code, uint64_t now)
{
	if (!c->caps_list) {
		if (code != 101) {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: CAPABILITIES answered %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			feed_conn_finish(f, c);
			return;
		}
		c->caps_list = true;
		return;
	}
	if (len == 1 && line[0] == '.') {
		c->caps_list = false;
		if (f->o->mode != FEED_IHAVE && !c->caps_streaming) {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: server does not list STREAMING "
					"(RFC 4644 2.1)", c->peer, c->id);
			feed_conn_finish(f, c);
			return;
		}
		start_session(f, c, now);
		return;
	}
	if (len >= 9 && strncasecmp(line, "STREAMING", 9) == 0 && (len == 9 || line[9] == ' '))
		c->caps_streaming = true;
}

static void on_line(struct feed *f, struct conn *c, const char *line, size_t len, uint64_t now)
{
	int code = parse_code(line, len);

	if (c->state == ST_CAPS && c->caps_list) {
		on_caps_line(f, c, line, len, code, now);
		return;
	}
	if (code < 0) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: not a response line: %.*s",
				c->peer, c->id, (int)FG_MIN(len, 80u), line);
		feed_conn_lost(f, c, "protocol error");
		return;
	}
	c->codes[code]++;
	switch (c->state) {
	case ST_GREETING:
		if (code == 200 || code == 201) {
			if (f->o->capabilities) {
				feed_out_add(c, "CAPABILITIES\r\n", 14);
				c->state = ST_CAPS;
			} else {
				start_session(f, c, now);
			}
		} else if (code == 400) {
			feed_conn_lost(f, c, "greeting 400");	/* busy: come back later */
		} else {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: refused at greeting: %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			feed_conn_finish(f, c);
		}
		break;
	case ST_CAPS:
		on_caps_line(f, c, line, len, code, now);
		break;
	case ST_MODE:
		if (code == 203) {
			c->state = ST_RUN;
			feed_fill(f, c, now);
		} else {
			fg_wlc_mismatch(f->chk, "peer %u conn %u: MODE STREAM answered %.*s",
					c->peer, c->id, (int)FG_MIN(len, 80u), line);
			feed_conn_finish(f, c);
		}
		break;
	case ST_RUN:
		on_answer(f, c, line, len, code, now);
		break;
	case ST_QUIT:
		if (code == 205)
			feed_conn_finish(f, c);
		else
			on_answer(f, c, line, len, code, now);
		break;
	default:
		break;
	}
}

bool feed_conn_lines(struct feed *f, struct conn *c, uint64_t now)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);
		size_t len;

		if (!nl)
			break;
		len = (size_t)(nl - (c->in + start));
		if (len > 0 && nl[-1] == '\r')
			len--;
		on_line(f, c, c->in + start, len, now);
		if (feed_conn_gone(c))
			return false;
		start = (size_t)(nl - c->in) + 1;
	}
	if (start == 0 && c->in_len == IN_CAP) {
		fg_wlc_mismatch(f->chk, "peer %u conn %u: response line over %u octets",
				c->peer, c->id, IN_CAP);
		feed_conn_lost(f, c, "protocol error");
		return false;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	return true;
}
