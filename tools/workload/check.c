/* SPDX-License-Identifier: MIT */
/*
 * check.c — the response checker (rules in wlcheck.h).
 *
 * State per article: the stamp at which its first 239 arrived (0 = none
 * yet), how many 239s it got, whether an answer about it was lost with a
 * connection, and whether any answer about it came (a run cut short by
 * --duration judges only the articles it offered). 11 octets per article.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/wlcheck.h"

struct fg_wlc {
	const struct fg_wl *wl;
	uint64_t stamp;
	uint64_t *accept_stamp;
	uint8_t *n_accept;
	uint8_t *lost;
	uint8_t *answered;
	bool partial;
	uint64_t accepted;
	uint64_t unknown;
	uint64_t mismatches;
	char text[FG_WLC_KEEP][FG_WLC_TEXT];
};

static const char *const cmd_names[FG_WLC__CMDS] = {
	[FG_WLC_CHECK] = "CHECK", [FG_WLC_TAKETHIS] = "TAKETHIS",
	[FG_WLC_IHAVE] = "IHAVE", [FG_WLC_IHAVE_ART] = "IHAVE article",
};

struct fg_wlc *fg_wlc_create(const struct fg_wl *wl)
{
	uint32_t n = fg_wl_params(wl)->articles;
	struct fg_wlc *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->wl = wl;
	c->accept_stamp = calloc(n, sizeof(*c->accept_stamp));
	c->n_accept = calloc(n, sizeof(*c->n_accept));
	c->lost = calloc(n, sizeof(*c->lost));
	c->answered = calloc(n, sizeof(*c->answered));
	if (!c->accept_stamp || !c->n_accept || !c->lost || !c->answered) {
		fg_wlc_free(c);
		return NULL;
	}
	return c;
}

void fg_wlc_free(struct fg_wlc *c)
{
	if (!c)
		return;
	free(c->accept_stamp);
	free(c->n_accept);
	free(c->lost);
	free(c->answered);
	free(c);
}

uint64_t fg_wlc_stamp(struct fg_wlc *c)
{
	return ++c->stamp;
}

void fg_wlc_mismatch(struct fg_wlc *c, const char *fmt, ...)
{
	va_list ap;

	if (c->mismatches < FG_WLC_KEEP) {
		va_start(ap, fmt);
		vsnprintf(c->text[c->mismatches], FG_WLC_TEXT, fmt, ap);
		va_end(ap);
	}
	c->mismatches++;
}

static enum fg_wlc_action wrong(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				int code, unsigned peer, unsigned conn, const char *why)
{
	struct fg_wl_article a;

	fg_wl_article(c->wl, art, &a);
	fg_wlc_mismatch(c, "peer %u conn %u: %s %s (%s article %u) got %d: %s",
			peer, conn, cmd_names[cmd], a.msgid, fg_wl_class_name(a.cls),
			art, code, why);
	return FG_WLC_MISMATCH;
}

/* A 239/235: the article's one acceptance, or a duplicate let through. */
static enum fg_wlc_action accepted(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				   int code, unsigned peer, unsigned conn)
{
	enum fg_wl_class cls = fg_wl_class_of(c->wl, art);

	if (c->n_accept[art] < UINT8_MAX)
		c->n_accept[art]++;
	if (cls != FG_WL_WANTED)
		return wrong(c, art, cmd, code, peer, conn,
			     "accepted an article the rules must reject");
	if (c->n_accept[art] > 1)
		return wrong(c, art, cmd, code, peer, conn,
			     "accepted a duplicate (a second 239 for one Message-ID)");
	c->accept_stamp[art] = fg_wlc_stamp(c);
	c->accepted++;
	return FG_WLC_DONE;
}

static enum fg_wlc_action on_offer(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				   int code, uint64_t sent, unsigned peer, unsigned conn)
{
	bool is_check = cmd == FG_WLC_CHECK;
	enum fg_wl_class cls = fg_wl_class_of(c->wl, art);

	if (code == (is_check ? 238 : 335)) {
		if (cls == FG_WL_BADID)
			return wrong(c, art, cmd, code, peer, conn,
				     "asked for an article whose Message-ID is invalid");
		if (c->accept_stamp[art] && c->accept_stamp[art] < sent)
			return wrong(c, art, cmd, code, peer, conn,
				     "asked for a duplicate: its 239 came before this offer");
		return FG_WLC_SEND;
	}
	if (code == (is_check ? 438 : 435))
		return FG_WLC_DONE;
	if (code == (is_check ? 431 : 436)) {
		if (cls == FG_WL_BADID)
			return wrong(c, art, cmd, code, peer, conn,
				     "deferred an invalid Message-ID (must be refused)");
		return FG_WLC_RETRY;
	}
	if (code == 400)
		return FG_WLC_RECONNECT;
	return wrong(c, art, cmd, code, peer, conn, "not a valid answer to this command");
}

static enum fg_wlc_action on_article(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				     int code, unsigned peer, unsigned conn)
{
	bool is_takethis = cmd == FG_WLC_TAKETHIS;

	if (code == (is_takethis ? 239 : 235))
		return accepted(c, art, cmd, code, peer, conn);
	if (code == (is_takethis ? 439 : 437))
		return FG_WLC_DONE;
	if (code == 400)
		return FG_WLC_RECONNECT;
	if (!is_takethis && code == 436)
		return FG_WLC_RETRY;
	if (is_takethis && code == 431)
		return wrong(c, art, cmd, code, peer, conn,
			     "431 is not an answer to TAKETHIS (RFC 4644 2.5.2)");
	return wrong(c, art, cmd, code, peer, conn, "not a valid answer to this command");
}

enum fg_wlc_action fg_wlc_response(struct fg_wlc *c, uint32_t art, enum fg_wlc_cmd cmd,
				   int code, uint64_t sent, unsigned peer, unsigned conn)
{
	if (art >= fg_wl_params(c->wl)->articles || (unsigned)cmd >= FG_WLC__CMDS) {
		fg_wlc_mismatch(c, "internal: response for unknown article %u", art);
		return FG_WLC_MISMATCH;
	}
	c->answered[art] = 1;
	if (cmd == FG_WLC_CHECK || cmd == FG_WLC_IHAVE)
		return on_offer(c, art, cmd, code, sent, peer, conn);
	return on_article(c, art, cmd, code, peer, conn);
}

uint64_t fg_wlc_finish(struct fg_wlc *c)
{
	uint32_t n = fg_wl_params(c->wl)->articles;
	struct fg_wl_article a;

	for (uint32_t i = 0; i < n; i++) {
		if (c->n_accept[i] != 0 || fg_wl_class_of(c->wl, i) != FG_WL_WANTED)
			continue;
		if (c->partial && !c->answered[i] && !c->lost[i])
			continue;	/* never offered: the run ended first */
		if (c->lost[i]) {
			c->unknown++;
			continue;
		}
		fg_wl_article(c->wl, i, &a);
		fg_wlc_mismatch(c, "article %u %s (wanted) never got a 239: a new, "
				"in-window article was refused by every peer's offer", i, a.msgid);
	}
	return c->mismatches;
}

void fg_wlc_set_partial(struct fg_wlc *c)
{
	c->partial = true;
}

uint64_t fg_wlc_offered(const struct fg_wlc *c)
{
	uint32_t n = fg_wl_params(c->wl)->articles;
	uint64_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += c->answered[i] | c->lost[i];
	return k;
}

void fg_wlc_answer_lost(struct fg_wlc *c, uint32_t art)
{
	if (art < fg_wl_params(c->wl)->articles)
		c->lost[art] = 1;
}

uint64_t fg_wlc_unknown(const struct fg_wlc *c)
{
	return c->unknown;
}

uint64_t fg_wlc_mismatches(const struct fg_wlc *c)
{
	return c->mismatches;
}

const char *fg_wlc_mismatch_text(const struct fg_wlc *c, unsigned i)
{
	return i < FG_MIN(c->mismatches, (uint64_t)FG_WLC_KEEP) ? c->text[i] : NULL;
}

uint64_t fg_wlc_accepted(const struct fg_wlc *c)
{
	return c->accepted;
}

int fg_wlc_write_outcomes(const struct fg_wlc *c, FILE *f)
{
	uint32_t n = fg_wl_params(c->wl)->articles;
	struct fg_wl_article a;

	for (uint32_t i = 0; i < n; i++) {
		fg_wl_article(c->wl, i, &a);
		if (fprintf(f, "%s %s %u %u\n", a.msgid, fg_wl_class_name(a.cls), c->n_accept[i],
			    c->lost[i]) < 0)
			return -EIO;
	}
	return fflush(f) == 0 ? 0 : -errno;
}
