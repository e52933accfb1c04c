/* SPDX-License-Identifier: MIT */
/*
 * artin.c — the octets of one article, from the line after TAKETHIS (or
 * the 335 to IHAVE) to its terminator: unstuffed and scanned as they come
 * (reader.c), the header section copied for the rules, the pieces handed
 * to the transfer (xfer.c) in place; or drained — read and discarded, with
 * the answer its command earned — when the command was refused before the
 * article (a bad Message-ID, a known one, a paused peer, a peer that has
 * not authenticated).
 */
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "nntp_int.h"

/* ------------------------------------------------------------ articles */

int fg_nntp_start_article(struct fg_nntp_session *s, enum fg_art_kind kind, struct fg_xfer *x)
{
	struct fg_nntp_session_art *a = &s->a;
	const struct fg_config *cfg = s->e->cfg;

	a->kind = kind;
	a->x = x;
	a->size = 0;
	a->oversize = false;
	a->hdr_len = 0;
	a->hdr_done = x == NULL;	/* drained articles need no header */
	a->max_size = s->peer && s->peer->max_article_size ? s->peer->max_article_size :
		      cfg->max_article_size;
	fg_nntp_reader_init(&a->rd);
	if (x) {
		if (!a->hdr) {
			a->hdr = malloc(FG_ARTICLE_MAX_HEADER + 3);
			if (!a->hdr) {
				/* no header, no decision: the rules see an oversize header */
				a->hdr_done = true;
			}
		}
		fg_article_init(&a->scan, FG_ARTICLE_WIRE);
	}
	s->in_article = true;
	return 0;
}

void fg_nntp_start_drain(struct fg_nntp_session *s, enum fg_reason reason, const char *line)
{
	s->a.drain_reason = reason;
	s->a.drain_line = line;
	s->a.drain_code = FG_NNTP_CODE_C501;
	fg_nntp_start_article(s, line ? FG_ART_TAKETHIS_LINE : FG_ART_TAKETHIS, NULL);
}

/* Drain, then answer the fixed `line` of `code` (480: not authenticated). */
void fg_nntp_start_drain_line(struct fg_nntp_session *s, enum fg_nntp_code code, const char *line)
{
	s->a.drain_reason = FG_REASON_NONE;
	s->a.drain_line = line;
	s->a.drain_code = code;
	fg_nntp_start_article(s, FG_ART_TAKETHIS_LINE, NULL);
}

/* A paused peer's TAKETHIS: its article is read to the end, then 400 and
 * close (RFC 4644 2.5.2: the peer sends it again later). */
void fg_nntp_start_paused_drain(struct fg_nntp_session *s)
{
	s->a.drain_reason = FG_REASON_NONE;
	s->a.drain_line = NULL;
	fg_nntp_start_article(s, FG_ART_TAKETHIS_PAUSED, NULL);
}

/* Copy the header section as it arrives, for the rules (at most 64 KiB). */
static void header_copy(struct fg_nntp_session_art *a, const uint8_t *p, uint32_t n)
{
	uint32_t k = FG_MIN(n, FG_ARTICLE_MAX_HEADER - a->hdr_len);

	memcpy(a->hdr + a->hdr_len, p, k);
	a->hdr_len += k;
	if (fg_article_scan(&a->scan, (const char *)a->hdr, a->hdr_len) != FG_ARTICLE_AGAIN)
		a->hdr_done = true;
}

static void article_bytes(struct fg_nntp_session *s, const uint8_t *p, uint32_t n, void *handle)
{
	struct fg_nntp_session_art *a = &s->a;
	struct fg_xfer *x = a->x;
	struct fg_iov seg = { p, n, handle };

	a->size += n;
	if (!x)
		return;
	if (!a->hdr_done)
		header_copy(a, p, n);
	if (!x->sink_open)
		return;
	if (a->max_size && a->size > a->max_size) {
		/* drain the rest without buffering; the rules refuse it */
		fg_nntp_xfer_sink_close(s->e, x);
		a->oversize = true;
		fg_nntp_count(s, FG_CTR_NNTP_DRAINED_OVERSIZE);
		return;
	}
	fg_nntp_xfer_append(s, x, &seg, handle != NULL);
}

static void end_article(struct fg_nntp_session *s)
{
	struct fg_nntp_session_art *a = &s->a;

	s->in_article = false;
	fg_nntp_count(s, FG_CTR_NNTP_ARTICLES);
	fg_nntp_count_n(s, FG_CTR_NNTP_ARTICLE_BYTES, a->size);
	if (a->kind == FG_ART_TAKETHIS_LINE) {
		fg_nntp_put(s, a->drain_code, a->drain_line, (uint32_t)strlen(a->drain_line), FG_RQ_READY);
		return;
	}
	if (a->kind == FG_ART_TAKETHIS_PAUSED) {
		fg_nntp_verdict_of(s, FG_NNTP_VERB_TAKETHIS, FG_NNTP_CODE_C400, FG_REASON_NONE, a->arg,
			      a->arg_len, a->size);
		fg_nntp_session_close_now(s, FG_L_PAUSED, sizeof(FG_L_PAUSED) - 1);
		return;
	}
	if (a->x) {
		struct fg_xfer *x = a->x;

		a->x = NULL;
		fg_nntp_xfer_end(s, x);
		return;
	}
	/* drained: the ID was invalid or known at the command */
	fg_nntp_count(s, FG_CTR_NNTP_DRAINED_KNOWN);
	fg_nntp_count(s, FG_CTR_NNTP_ARTICLES_REFUSED);
	fg_nntp_count_reason(s, a->drain_reason);
	fg_nntp_put_echo(s, FG_NNTP_CODE_C439, FG_L_ECHO_439, a->arg, a->arg_len);
	fg_nntp_verdict_of(s, FG_NNTP_VERB_TAKETHIS, FG_NNTP_CODE_C439, a->drain_reason, a->arg,
		      a->arg_len, a->size);
}

/* Article octets from one input piece; returns how many were used. */
uint32_t fg_nntp_article_input(struct fg_nntp_session *s, const struct fg_iov *iov, uint32_t off)
{
	const uint8_t *p = iov->base + off;
	struct fg_nntp_read r;

	fg_nntp_reader_scan(&s->a.rd, p, iov->len - off, &r);
	if (r.held)
		article_bytes(s, (const uint8_t *)".\r", r.held, NULL);
	if (r.content)
		article_bytes(s, p, r.content, iov->handle);
	if (r.end) {
		/* the next commands' buckets load while this article is decided */
		s->pf.blocked = false;
		fg_nntp_pf_ahead(s, iov->base, off + r.consumed, iov->len);
		end_article(s);
	}
	return r.consumed;
}
