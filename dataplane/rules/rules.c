/* SPDX-License-Identifier: MIT */
/*
 * rules.c — the admission decision (see rules.h and docs/rules.md).
 *
 * Design: one table, `steps`, lists the checks in the order they apply;
 * each row is a predicate that passes or fails and the one reason it
 * gives. fg_rules_decide() walks the table and stops at the first failure,
 * fg_rules_offer() walks only the rows that need no article. The order is
 * therefore written once, here, and docs/rules.md is tested against it.
 *
 * What several steps read (the header's Message-ID, the two dates) is
 * worked out once, lazily, in the per-call context, so the common case,
 * a duplicate, never parses a date. With `explain` set, the verdict is
 * completed after the decision so `floodctl explain` can show everything.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "floodgate/rules.h"
#include "floodgate/wildmat.h"

struct ctx {
	const struct fg_rules *r;
	const struct fg_rules_input *in;
	struct fg_rules_verdict *v;
	const char *id;		/* the offered ID: the argument, else the header's */
	size_t id_len;
	const void *id_key;	/* the caller's key for it (the argument's only) */
	enum fg_rules_id_state state;	/* of the offered ID, once asked */
	bool msgid_done, dates_done, state_done;
};

/* ------------------------------------------------------------ helpers */

static void fail(struct ctx *c, const char *detail, const char *why)
{
	c->v->detail = detail;
	c->v->why = why;
}

static void fail_what(struct ctx *c, const char *detail, const char *p, size_t len)
{
	c->v->detail = detail;
	c->v->what.ptr = p;
	c->v->what.len = len;
}

static bool arg_given(const struct ctx *c)
{
	return c->in->arg != NULL;
}

/* The header's Message-ID: classified once. */
static void read_msgid(struct ctx *c)
{
	struct fg_rules_verdict *v = c->v;
	const struct fg_article *a = c->in->art;

	if (c->msgid_done)
		return;
	c->msgid_done = true;
	if (!a || fg_article_count(a, FG_HDR_MESSAGE_ID) == 0)
		return;
	v->msgid = fg_article_get(a, FG_HDR_MESSAGE_ID);
	v->msgid_form = fg_msgid_classify(v->msgid.ptr, v->msgid.len, &v->msgid_error);
	/* one valid Message-ID, equal to the argument when there is one */
	v->carried_id = v->msgid_form == FG_MSGID_HEADER &&
			fg_article_count(a, FG_HDR_MESSAGE_ID) == 1 &&
			(!arg_given(c) || (v->msgid.len == c->in->arg_len &&
					   memcmp(v->msgid.ptr, c->in->arg, v->msgid.len) == 0));
	if (!arg_given(c) && v->carried_id) {
		c->id = v->msgid.ptr;
		c->id_len = v->msgid.len;
	}
}

/*
 * innd reads a header value to the end of its last line, blanks and
 * folding included; the scanner trims them. INN's reading of a numeric
 * zone depends on the blanks after it ("+1" is +0100, "+1 " +0001), so
 * with date-syntax inn the value is read to where innd's ends: over the
 * blanks and folding the scanner trimmed, which are still in the buffer
 * before the field's final line end.
 */
static size_t innd_extent(const struct fg_article *a, struct fg_article_value v)
{
	const char *p = v.ptr + v.len, *end = a->base + a->header_end;

	while (p < end) {
		if (*p == ' ' || *p == '\t')
			p++;
		else if (end - p >= 3 && p[0] == '\r' && p[1] == '\n' && (p[2] == ' ' || p[2] == '\t'))
			p += 3;
		else if (end - p >= 2 && p[0] == '\n' && (p[1] == ' ' || p[1] == '\t'))
			p += 2;
		else
			break;
	}
	return (size_t)(p - v.ptr);
}

static void read_date(const struct fg_rules *r, const struct fg_article *a, enum fg_hdr h,
		      struct fg_rules_date *d)
{
	enum fg_date_syntax syntax = r->cfg->date_syntax;
	size_t len;
	int rc;

	d->count = fg_article_count(a, h);
	if (d->count == 0)
		return;
	d->text = fg_article_get(a, h);
	d->parsed = true;
	len = syntax == FG_DATE_SYNTAX_INN ? innd_extent(a, d->text) : d->text.len;
	rc = fg_date_parse_as(syntax, d->text.ptr, len, &d->t, &d->reading);
	d->err = rc < 0 ? (enum fg_date_error)-rc : FG_DATE_OK;
}

/*
 * Both dates, parsed once. RFC 5537 3.3: the article date is Injection-Date
 * when present, else Date; it is usable only when that header appears once
 * and parses.
 */
static void read_dates(struct ctx *c)
{
	struct fg_rules_verdict *v = c->v;
	const struct fg_rules_date *d;

	if (c->dates_done)
		return;
	c->dates_done = true;
	read_date(c->r, c->in->art, FG_HDR_DATE, &v->date);
	read_date(c->r, c->in->art, FG_HDR_INJECTION_DATE, &v->injection_date);
	d = v->injection_date.count ? &v->injection_date : &v->date;
	if (d->count == 1 && d->err == FG_DATE_OK) {
		v->date_used = d == &v->date ? FG_RULES_DATE_DATE : FG_RULES_DATE_INJECTION;
		v->article_date = d->t;
	}
}

/* ---------------------------------------------------------------- steps */

/* RFC 3977 3.6 / RFC 4644 2.4: the argument must be a Message-ID. */
static bool step_argument(struct ctx *c)
{
	if (!arg_given(c)) {
		read_msgid(c);	/* the header's ID is the offered one */
		return true;
	}
	c->id = c->in->arg;
	c->id_len = c->in->arg_len;
	c->id_key = c->in->arg_key;
	if (fg_msgid_valid_wire(c->in->arg, c->in->arg_len))
		return true;
	fail(c, "the command's argument is not a Message-ID (RFC 3977 3.6)", NULL);
	return false;
}

/* INN's refusecybercancels: the IDs cancel-bots give their cancels. */
static bool step_cyber_cancel(struct ctx *c)
{
	if (!c->r->cfg->refuse_cyber_cancels || !fg_rules_is_cyber_cancel(c->id, c->id_len))
		return true;
	fail(c, "a <cancel.*> Message-ID, refused with refuse-cyber-cancels on", NULL);
	return false;
}

bool fg_rules_is_cyber_cancel(const char *id, size_t len)
{
	return id && len >= 8 && memcmp(id, "<cancel.", 8) == 0;
}

/* The history's answer for the offered ID: asked once. */
static enum fg_rules_id_state history_state(struct ctx *c)
{
	const struct fg_rules_history *h = c->r->hist;

	if (!c->state_done) {
		c->state_done = true;
		if (h && h->lookup && c->id)
			c->state = h->lookup(h->ctx, c->id, c->id_len, c->id_key);
	}
	return c->state;
}

/* RFC 5537 3.3/3.6: reject an article already accepted. Before the dates:
 * a re-offer of a known ID is a duplicate whatever its date. */
static bool step_history(struct ctx *c)
{
	enum fg_rules_id_state st = history_state(c);

	if (st == FG_RULES_ID_UNKNOWN)
		return true;
	/* A Supersedes mark made while honouring was on: honouring is off
	 * now, but the ID may have been accepted before it was marked. */
	if (st == FG_RULES_ID_SUPERSEDED && c->r->cfg->honor_supersedes)
		return true;	/* step_superseded reports it */
	fail(c, "the Message-ID is already in history", NULL);
	return false;
}

/*
 * RFC 5537 3.6 "already-received and honored" Supersedes, and seed 000's
 * version numbers: both off by default (anyone could block any ID).
 */
static bool step_superseded(struct ctx *c)
{
	const struct fg_config *cfg = c->r->cfg;
	const struct fg_rules_history *h = c->r->hist;
	struct fg_msgid_version ver;
	uint64_t newest;

	if (cfg->honor_supersedes && history_state(c) == FG_RULES_ID_SUPERSEDED) {
		fail(c, "a Supersedes of this Message-ID was honoured", NULL);
		return false;
	}
	if (!cfg->honor_versions || !cfg->version_numbers || !h || !h->newest_version ||
	    !c->id || fg_msgid_version_parse(c->id, c->id_len, &ver) != 0)
		return true;
	if (!h->newest_version(h->ctx, ver.base, ver.base_len, &newest) || newest <= ver.version)
		return true;
	fail(c, "a newer $v=N version of this Message-ID is known", NULL);
	return false;
}

static bool step_header_bounds(struct ctx *c)
{
	const struct fg_article *a = c->in->art;

	if (a->error == FG_ARTICLE_OK)
		return true;
	fail(c, "the header section is past the scanner's bounds", fg_article_error_str(a->error));
	return false;
}

/* RFC 5536 3.1.3, RFC 5537 3.6: Message-ID is mandatory. */
static bool step_msgid_present(struct ctx *c)
{
	read_msgid(c);
	if (c->v->msgid.ptr)
		return true;
	fail(c, "no Message-ID header", NULL);
	return false;
}

/* RFC 5536 3.1.3 syntax; a repeated Message-ID leaves the ID ambiguous
 * (innd: "Duplicate Message-ID header"). */
static bool step_msgid_valid(struct ctx *c)
{
	const struct fg_rules_verdict *v = c->v;

	if (v->msgid_form != FG_MSGID_HEADER) {
		fail(c, "the Message-ID header is not an RFC 5536 Message-ID",
		     fg_msgid_error_str(v->msgid_error));
		return false;
	}
	if (fg_article_count(c->in->art, FG_HDR_MESSAGE_ID) > 1) {
		fail(c, "the Message-ID header appears more than once", NULL);
		return false;
	}
	return true;
}

/* RFC 4644 2.5 / RFC-NOTES: the header must carry the offered ID. */
static bool step_msgid_match(struct ctx *c)
{
	if (!arg_given(c) || c->v->carried_id)
		return true;
	fail(c, "the Message-ID header differs from the command's argument", NULL);
	return false;
}

/* RFC 5536 3.1.1: Date is mandatory, even with Injection-Date. */
static bool step_date_present(struct ctx *c)
{
	read_dates(c);
	if (c->v->date.count)
		return true;
	fail(c, "no Date header (mandatory even with Injection-Date)", NULL);
	return false;
}

static bool date_ok(struct ctx *c, const struct fg_rules_date *d, const char *bad,
		    const char *repeated)
{
	if (d->count > 1) {
		fail(c, repeated, NULL);
		return false;
	}
	if (d->count == 1 && d->err != FG_DATE_OK) {
		fail(c, bad, fg_date_error_str(d->err));
		return false;
	}
	return true;
}

/* Date must parse; a present Injection-Date must parse too (RFC-NOTES). */
static bool step_dates_parse(struct ctx *c)
{
	return date_ok(c, &c->v->date, "the Date header does not parse",
		       "the Date header appears more than once") &&
	       date_ok(c, &c->v->injection_date, "the Injection-Date header does not parse",
		       "the Injection-Date header appears more than once");
}

/* RFC 5537 3.6: SHOULD reject an article missing a mandatory header;
 * RFC 5536 2.2: no header may be empty; innd refuses repeated ones. */
static bool step_required(struct ctx *c)
{
	const struct fg_rules *r = c->r;
	const struct fg_article *a = c->in->art;

	for (unsigned i = 0; i < r->n_req; i++) {
		struct fg_article_value val;
		unsigned n;

		if (r->req[i].hdr != FG_HDR_OTHER) {
			n = fg_article_count(a, r->req[i].hdr);
			val = fg_article_get(a, r->req[i].hdr);
		} else {
			val = fg_article_find(a, r->req[i].name, r->req[i].len, &n);
		}
		if (n == 1 && val.len > 0)
			continue;
		fail_what(c, n == 0 ? "a mandatory header is missing" :
			     n > 1 ? "a mandatory header appears more than once" :
			     "a mandatory header is empty", r->req[i].name, r->req[i].len);
		return false;
	}
	return true;
}

/* Is [p, p+len) one of our path identities (case-insensitive, as INN)? */
static bool is_own_identity(const struct fg_rules *r, const char *p, size_t len)
{
	const struct fg_config *cfg = r->cfg;

	for (unsigned i = 0; i < cfg->n_path_ids; i++)
		if (r->path_id_len[i] == len && strncasecmp(cfg->path_ids[i], p, len) == 0)
			return true;
	return false;
}

static bool is_fws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/*
 * One Path value. RFC 5536 3.1.5: path-list entries separated by "!", FWS
 * allowed around them, then a tail-entry that is not a path identity. An
 * element matches only whole ("news.example" does not match
 * "news.example.net", nor ".SEEN.news.example").
 */
static bool path_loops(struct ctx *c, struct fg_article_value path)
{
	const char *p = path.ptr, *end = path.ptr + path.len;

	for (;;) {
		const char *bang = memchr(p, '!', (size_t)(end - p));
		const char *s = p, *e;

		if (!bang)
			return false;	/* what is left is the tail-entry */
		e = bang;
		while (s < e && is_fws(*s))
			s++;
		while (e > s && is_fws(e[-1]))
			e--;
		if (e > s && is_own_identity(c->r, s, (size_t)(e - s))) {
			fail_what(c, "Path already holds this site's path identity", s,
				  (size_t)(e - s));
			return true;
		}
		p = bang + 1;
	}
}

/* RFC 5537 3.2/3.6: an article that has been here (or at a server of this
 * site) before is a loop. Every Path field counts, should there be two. */
static bool step_path(struct ctx *c)
{
	const struct fg_article *a = c->in->art;

	if (c->r->cfg->n_path_ids == 0 || fg_article_count(a, FG_HDR_PATH) == 0)
		return true;
	for (unsigned i = 0; i < a->n_fields; i++)
		if (a->field[i].hdr == FG_HDR_PATH && path_loops(c, fg_article_field_value(a, i)))
			return false;
	return true;
}

/* RFC 5537 3.3: reject a date farther in the past than the cutoff. */
static bool step_cutoff(struct ctx *c)
{
	fg_time_t edge;

	/* step_date_present and step_dates_parse leave a usable date */
	FG_ASSERT(c->v->date_used != FG_RULES_DATE_NONE);
	if (__builtin_sub_overflow(c->in->now, c->r->cfg->cutoff, &edge))
		return true;	/* nothing is older than the start of time */
	if (c->v->article_date >= edge)
		return true;
	fail(c, "the article date is before now minus the cutoff", NULL);
	return false;
}

/* RFC 5537 3.6: reject a date more than 24 h (the margin) in the future. */
static bool step_future(struct ctx *c)
{
	fg_time_t edge;

	FG_ASSERT(c->v->date_used != FG_RULES_DATE_NONE);
	if (__builtin_add_overflow(c->in->now, c->r->cfg->future_margin, &edge))
		return true;
	if (c->v->article_date <= edge)
		return true;
	fail(c, "the article date is after now plus the future margin", NULL);
	return false;
}

/* The peer's own limit, else the site's; 0 is no limit. */
static bool step_size(struct ctx *c)
{
	const struct fg_config_peer *peer = c->in->peer;
	bool own = peer && peer->max_article_size;
	uint64_t max = own ? peer->max_article_size : c->r->cfg->max_article_size;

	if (max == 0 || c->in->size <= max)
		return true;
	fail(c, own ? "the article is larger than the peer's max-article-size" :
		      "the article is larger than max-article-size", NULL);
	return false;
}

/* The peer's wildmat (RFC 3977 4, INN's "@" poison) over Newsgroups. */
static bool step_newsgroups(struct ctx *c)
{
	const struct fg_config_peer *peer = c->in->peer;
	struct fg_article_value ng;

	if (!peer)
		return true;
	ng = fg_article_get(c->in->art, FG_HDR_NEWSGROUPS);
	switch (fg_wildmat_groups(peer->newsgroups, ng.ptr ? ng.ptr : "", ng.len)) {
	case FG_WILDMAT_MATCH:
		return true;
	case FG_WILDMAT_POISON:
		fail(c, "a newsgroup is poisoned (\"@\") in the peer's newsgroups", NULL);
		return false;
	case FG_WILDMAT_NONE:
		break;
	}
	fail(c, "no newsgroup matches the peer's newsgroups", NULL);
	return false;
}

/* ---------------------------------------------------------------- table */

struct step {
	const char *name;
	enum fg_reason reason;
	bool offer;		/* needs no article */
	bool (*pass)(struct ctx *c);
};

/* The order of checks. docs/rules.md lists these rows, in this order. */
static const struct step steps[FG_RULES_STEP__COUNT] = {
	[FG_RULES_STEP_ARGUMENT] = { "argument", FG_REASON_BAD_MESSAGE_ID, true, step_argument },
	[FG_RULES_STEP_CYBER_CANCEL] = { "cyber-cancel", FG_REASON_CYBER_CANCEL, true, step_cyber_cancel },
	[FG_RULES_STEP_HISTORY] = { "history", FG_REASON_DUPLICATE, true, step_history },
	[FG_RULES_STEP_SUPERSEDED] = { "superseded", FG_REASON_SUPERSEDED, true, step_superseded },
	[FG_RULES_STEP_HEADER_BOUNDS] = { "header-bounds", FG_REASON_OVERSIZE, false, step_header_bounds },
	[FG_RULES_STEP_MSGID_PRESENT] = { "message-id-present", FG_REASON_MISSING_MESSAGE_ID, false, step_msgid_present },
	[FG_RULES_STEP_MSGID_VALID] = { "message-id-valid", FG_REASON_BAD_MESSAGE_ID, false, step_msgid_valid },
	[FG_RULES_STEP_MSGID_MATCH] = { "message-id-match", FG_REASON_MESSAGE_ID_MISMATCH, false, step_msgid_match },
	[FG_RULES_STEP_DATE_PRESENT] = { "date-present", FG_REASON_MISSING_DATE, false, step_date_present },
	[FG_RULES_STEP_DATES_PARSE] = { "dates-parse", FG_REASON_BAD_DATE, false, step_dates_parse },
	[FG_RULES_STEP_REQUIRED] = { "required-headers", FG_REASON_MISSING_HEADER, false, step_required },
	[FG_RULES_STEP_PATH] = { "path", FG_REASON_PATH_LOOP, false, step_path },
	[FG_RULES_STEP_CUTOFF] = { "cutoff", FG_REASON_TOO_OLD, false, step_cutoff },
	[FG_RULES_STEP_FUTURE] = { "future", FG_REASON_TOO_FAR_FUTURE, false, step_future },
	[FG_RULES_STEP_SIZE] = { "size", FG_REASON_OVERSIZE, false, step_size },
	[FG_RULES_STEP_NEWSGROUPS] = { "newsgroups", FG_REASON_UNWANTED_NEWSGROUP, false, step_newsgroups },
};

const char *fg_rules_step_name(enum fg_rules_step s)
{
	return s > FG_RULES_STEP_NONE && s < FG_RULES_STEP__COUNT ? steps[s].name : NULL;
}

enum fg_reason fg_rules_step_reason(enum fg_rules_step s)
{
	return s > FG_RULES_STEP_NONE && s < FG_RULES_STEP__COUNT ? steps[s].reason : FG_REASON_NONE;
}

/* ---------------------------------------------------------------- API */

int fg_rules_init(struct fg_rules *r, const struct fg_config *cfg,
		  const struct fg_rules_history *hist)
{
	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->hist = hist;
	if (cfg->n_required_headers > FG_CONFIG_MAX_REQUIRED_HEADERS ||
	    cfg->n_path_ids > FG_CONFIG_MAX_PATH_IDS)
		return -EINVAL;
	for (unsigned i = 0; i < cfg->n_required_headers; i++) {
		const char *name = cfg->required_headers[i];
		size_t len = strnlen(name, sizeof(cfg->required_headers[i]));
		unsigned h;

		if (len == 0 || len == sizeof(cfg->required_headers[i]))
			return -EINVAL;
		r->req[i].name = name;
		r->req[i].len = (uint8_t)len;
		r->req[i].hdr = FG_HDR_OTHER;
		for (h = 0; h < FG_HDR__COUNT; h++)
			if (strcasecmp(name, fg_hdr_name(h)) == 0)
				r->req[i].hdr = (uint8_t)h;
	}
	r->n_req = cfg->n_required_headers;
	for (unsigned i = 0; i < cfg->n_path_ids; i++) {
		size_t len = strnlen(cfg->path_ids[i], sizeof(cfg->path_ids[i]));

		if (len == 0 || len == sizeof(cfg->path_ids[i]))
			return -EINVAL;
		r->path_id_len[i] = (uint8_t)len;
	}
	return 0;
}

static void verdict_init(struct fg_rules_verdict *v)
{
	/* the version's base buffer is filled only when used */
	memset(v, 0, offsetof(struct fg_rules_verdict, version));
	memset(&v->supersedes, 0, sizeof(*v) - offsetof(struct fg_rules_verdict, supersedes));
	v->version.base[0] = '\0';
}

/* What `explain` shows beyond the decision: both dates, version parts,
 * Supersedes. The hot path fills only the version parts it needed. */
static void complete_verdict(struct ctx *c)
{
	const struct fg_article *a = c->in->art;
	struct fg_rules_verdict *v = c->v;

	read_msgid(c);
	read_dates(c);
	if (c->r->cfg->version_numbers && v->msgid_form == FG_MSGID_HEADER)
		v->version_ok = fg_msgid_version_parse(v->msgid.ptr, v->msgid.len, &v->version) == 0;
	v->supersedes = fg_article_get(a, FG_HDR_SUPERSEDES);
	v->supersedes_valid = fg_article_count(a, FG_HDR_SUPERSEDES) == 1 &&
			      fg_msgid_valid_header(v->supersedes.ptr, v->supersedes.len);
}

/* Walk the table from the first step; `offer_only` stops at the first row
 * that needs the article. Returns the reason. */
static enum fg_reason run(struct ctx *c, bool offer_only)
{
	for (unsigned s = FG_RULES_STEP_NONE + 1; s < FG_RULES_STEP__COUNT; s++) {
		if (offer_only && !steps[s].offer)
			break;
		if (!steps[s].pass(c)) {
			c->v->step = s;
			c->v->reason = steps[s].reason;
			break;
		}
	}
	return c->v->reason;
}

enum fg_reason fg_rules_decide(const struct fg_rules *r, const struct fg_rules_input *in,
			       struct fg_rules_verdict *v, struct fg_stats *stats)
{
	struct ctx c = { .r = r, .in = in, .v = v };
	enum fg_reason reason;

	FG_ASSERT(in->art != NULL);
	verdict_init(v);
	reason = run(&c, false);
	/* the session engine needs the Supersedes target of an accepted article */
	if (in->explain || reason == FG_REASON_NONE)
		complete_verdict(&c);
	if (stats)
		fg_rules_count(v, stats);
	return reason;
}

void fg_rules_count(const struct fg_rules_verdict *v, struct fg_stats *stats)
{
	if (v->date_used == FG_RULES_DATE_INJECTION)
		fg_stats_inc(stats, FG_CTR_RULES_DATE_FROM_INJECTION);
	else if (v->date_used == FG_RULES_DATE_DATE)
		fg_stats_inc(stats, FG_CTR_RULES_DATE_FROM_DATE);
	if (v->date_used != FG_RULES_DATE_NONE) {
		const struct fg_date_reading *rd = v->date_used == FG_RULES_DATE_INJECTION ?
						   &v->injection_date.reading : &v->date.reading;

		if (rd->notes)
			fg_stats_inc(stats, FG_CTR_RULES_DATE_LAX);
		if (rd->notes & FG_DATE_NOTES_MISREAD)
			fg_stats_inc(stats, FG_CTR_RULES_DATE_MISREAD);
	}
	if (v->reason == FG_REASON_NONE) {
		fg_stats_inc(stats, FG_CTR_RULES_ACCEPTED);
	} else {
		fg_stats_inc(stats, FG_CTR_RULES_REJECTED);
		stats->rejected[v->reason]++;
	}
}

enum fg_reason fg_rules_offer(const struct fg_rules *r, const char *arg, size_t arg_len,
			      const void *arg_key, struct fg_rules_verdict *v,
			      struct fg_stats *stats)
{
	struct fg_rules_input in = { .arg = arg ? arg : "", .arg_len = arg ? arg_len : 0,
				     .arg_key = arg_key };
	struct fg_rules_verdict local;
	struct ctx c = { .r = r, .in = &in, .v = v ? v : &local };
	enum fg_reason reason;

	verdict_init(c.v);
	reason = run(&c, true);
	if (!stats)
		return reason;
	if (reason == FG_REASON_NONE) {
		fg_stats_inc(stats, FG_CTR_RULES_OFFERS_WANTED);
	} else {
		fg_stats_inc(stats, FG_CTR_RULES_OFFERS_REFUSED);
		stats->rejected[reason]++;
	}
	return reason;
}

bool fg_rules_remember(const struct fg_rules *r, const struct fg_rules_verdict *v)
{
	if (!r->cfg->remember_rejects || !v->carried_id)
		return false;
	switch (v->reason) {
	case FG_REASON_MISSING_DATE:
	case FG_REASON_BAD_DATE:
	case FG_REASON_MISSING_HEADER:
	case FG_REASON_TOO_OLD:
		return true;
	default:
		return false;
	}
}
