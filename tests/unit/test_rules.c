/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c — the admission rules: every reason at its boundary, accept
 * cases with and without Injection-Date, the order of checks (every pair
 * of faults reports the earlier step), history through a fake, counters,
 * what may be remembered, and docs/rules.md against the code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/rules.h"
#include "fgtest.h"

#define NOW ((fg_time_t)1767225600)	/* Thu, 01 Jan 2026 00:00:00 +0000 */
#define DAY 86400
#define CUTOFF (10 * DAY)
#define MARGIN (24 * 3600)

static const char config_text[] =
	"[site]\n"
	"path-identity news.example.net\n"
	"path-identity Hub.Example.ORG\n"
	"[rules]\n"
	"cutoff 10d\n"
	"future-margin 24h\n"
	"max-article-size 100000\n"
	"[peer feeder]\n"
	"address 192.0.2.10\n"
	"newsgroups comp.*,!comp.secret.*,@alt.spam.*\n"
	"max-article-size 50000\n"
	"[peer open]\n"
	"address 192.0.2.11\n"
	"newsgroups *\n";

static struct fg_config *cfg;
static struct fg_rules rules;
static struct fg_stats stats;
static struct fg_rules_verdict v;

/* ---------------------------------------------------------------- fake history */

static struct fake_history {
	const char *known;		/* one ID it knows, or NULL */
	bool know_all;
	const char *superseded;		/* one ID marked superseded */
	bool has_newest;
	uint64_t newest;		/* for every base */
	char last_base[FG_MSGID_MAX + 1];
	unsigned lookups;
	const void *last_key;		/* what the last lookup was handed */
} fake;

static enum fg_rules_id_state fake_lookup(void *ctx, const char *id, size_t len, const void *key)
{
	struct fake_history *f = ctx;

	f->lookups++;
	f->last_key = key;
	if (f->know_all)
		return FG_RULES_ID_KNOWN;
	if (f->superseded && strlen(f->superseded) == len && memcmp(f->superseded, id, len) == 0)
		return FG_RULES_ID_SUPERSEDED;
	if (f->known && strlen(f->known) == len && memcmp(f->known, id, len) == 0)
		return FG_RULES_ID_KNOWN;
	return FG_RULES_ID_UNKNOWN;
}

static bool fake_newest(void *ctx, const char *base, size_t len, uint64_t *version)
{
	struct fake_history *f = ctx;

	snprintf(f->last_base, sizeof(f->last_base), "%.*s", (int)len, base);
	*version = f->newest;
	return f->has_newest;
}

static const struct fg_rules_history history = { fake_lookup, fake_newest, &fake };

/* ---------------------------------------------------------------- articles */

/* The fields of a test article; NULL leaves a field out. */
struct spec {
	const char *path, *from, *newsgroups, *subject, *msgid;
	const char *date, *injection_date, *supersedes;
	const char *extra;		/* raw lines appended to the header */
	const char *arg;		/* command argument; NULL: none */
	uint64_t size;			/* 0: the built article's own size */
	const char *peer;		/* peer name; NULL: no peer */
	fg_time_t now;
};

static char date_buf[4][64];

/* RFC 5322 text of NOW + delta (four rotating buffers). */
static const char *at(fg_time_t delta)
{
	static unsigned i;
	char *b = date_buf[i++ % 4];

	ck_assert_int_gt(fg_date_format(NOW + delta, b, 64), 0);
	return b;
}

static struct spec base_spec(void)
{
	struct spec s = {
		.path = "feeder.example.org!.POSTED.192.0.2.7!not-for-mail",
		.from = "Alice <alice@example.com>",
		.newsgroups = "comp.lang.c",
		.subject = "Re: rules",
		.msgid = "<m1@example.com>",
		.date = at(-3600),
		.arg = "<m1@example.com>",
		.peer = "feeder",
		.now = NOW,
	};
	return s;
}

static char art_buf[64 * 1024];
static struct fg_article art;

static void add(size_t *n, const char *name, const char *value)
{
	if (value)
		*n += (size_t)snprintf(art_buf + *n, sizeof(art_buf) - *n, "%s: %s\r\n", name, value);
}

static enum fg_reason decide_ex(const struct spec *s, bool explain)
{
	struct fg_rules_input in;
	size_t n = 0;

	add(&n, "Path", s->path);
	add(&n, "From", s->from);
	add(&n, "Newsgroups", s->newsgroups);
	add(&n, "Subject", s->subject);
	add(&n, "Message-ID", s->msgid);
	add(&n, "Date", s->date);
	add(&n, "Injection-Date", s->injection_date);
	add(&n, "Supersedes", s->supersedes);
	if (s->extra)
		n += (size_t)snprintf(art_buf + n, sizeof(art_buf) - n, "%s", s->extra);
	n += (size_t)snprintf(art_buf + n, sizeof(art_buf) - n, "\r\nbody\r\n.\r\n");
	ck_assert_uint_lt(n, sizeof(art_buf));
	fg_article_init(&art, FG_ARTICLE_WIRE);
	ck_assert_int_ne(fg_article_scan(&art, art_buf, n), FG_ARTICLE_AGAIN);
	memset(&in, 0, sizeof(in));
	in.art = &art;
	in.arg = s->arg;
	in.arg_len = s->arg ? strlen(s->arg) : 0;
	in.size = s->size ? s->size : fg_article_wire_size(art_buf, n, FG_ARTICLE_WIRE);
	in.now = s->now;
	in.peer = s->peer ? fg_config_peer_by_name(cfg, s->peer) : NULL;
	in.explain = explain;
	ck_assert(!s->peer || in.peer);
	return fg_rules_decide(&rules, &in, &v, &stats);
}

static enum fg_reason decide(const struct spec *s)
{
	return decide_ex(s, false);
}

/* ---------------------------------------------------------------- fixture */

static void setup(void)
{
	struct fg_config_errors errs;

	memset(&errs, 0, sizeof(errs));
	cfg = fg_config_load_text("test", config_text, strlen(config_text), &errs);
	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.err[0].text : "?");
	memset(&fake, 0, sizeof(fake));
	memset(&stats, 0, sizeof(stats));
	ck_assert_int_eq(fg_rules_init(&rules, cfg, &history), 0);
}

static void teardown(void)
{
	fg_config_free(cfg);
	cfg = NULL;
}

/* Re-compile after a test changed the config. */
static void recompile(void)
{
	ck_assert_int_eq(fg_rules_init(&rules, cfg, &history), 0);
}

/* ---------------------------------------------------------------- accept */

START_TEST(test_accept_with_date)
{
	struct spec s = base_spec();

	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_NONE);
	ck_assert_int_eq(v.date_used, FG_RULES_DATE_DATE);
	ck_assert_int_eq(v.article_date, NOW - 3600);
	ck_assert_int_eq(v.date.t, NOW - 3600);
	ck_assert_uint_eq(v.injection_date.count, 0);
	ck_assert(v.carried_id);
	ck_assert(v.version_ok);
	ck_assert(!v.version.has_version);
	ck_assert_str_eq(v.version.base, "<m1@example.com>");
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_ACCEPTED], 1);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_FROM_DATE], 1);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_REJECTED], 0);
	ck_assert_uint_eq(fake.lookups, 1);
}
END_TEST

START_TEST(test_accept_with_injection_date)
{
	/* seed 002: written on Monday, injected on Friday. The old Date does
	 * not make it stale; Injection-Date is the article date. */
	struct spec s = base_spec();

	s.date = at(-20 * DAY);
	s.injection_date = at(-60);
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.date_used, FG_RULES_DATE_INJECTION);
	ck_assert_int_eq(v.article_date, NOW - 60);
	ck_assert_int_eq(v.date.t, NOW - 20 * DAY);
	ck_assert_int_eq(v.injection_date.t, NOW - 60);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_FROM_INJECTION], 1);
	/* a Date ahead of Injection-Date (unsynchronised clocks) is no fault */
	s.date = at(3 * DAY);
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
}
END_TEST

START_TEST(test_accept_without_argument_or_peer)
{
	struct spec s = base_spec();

	s.arg = NULL;
	s.peer = NULL;
	s.newsgroups = "alt.anything";
	s.size = 100000;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(v.carried_id);
	/* the header's ID is the one history is asked about */
	fake.known = "<m1@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
}
END_TEST

/* ---------------------------------------------------------------- date edges */

/* d relative to NOW, as Date alone or as Injection-Date (Date then elsewhere) */
static enum fg_reason at_date(fg_time_t d, bool injection)
{
	struct spec s = base_spec();

	if (injection) {
		s.injection_date = at(d);
		s.date = at(-40 * DAY);	/* far out of the window: must not matter */
	} else {
		s.date = at(d);
	}
	return decide(&s);
}

START_TEST(test_cutoff_edge)
{
	bool inj = _i;

	/* RFC 5537 3.3: "farther in the past than the cutoff" is rejected;
	 * exactly at the cutoff is not */
	ck_assert_int_eq(at_date(-CUTOFF + 1, inj), FG_REASON_NONE);
	ck_assert_int_eq(at_date(-CUTOFF, inj), FG_REASON_NONE);
	ck_assert_int_eq(at_date(-CUTOFF - 1, inj), FG_REASON_TOO_OLD);
	ck_assert_int_eq(v.step, FG_RULES_STEP_CUTOFF);
	ck_assert_int_eq(v.date_used, inj ? FG_RULES_DATE_INJECTION : FG_RULES_DATE_DATE);
	ck_assert_int_eq(v.article_date, NOW - CUTOFF - 1);
	ck_assert_int_eq(at_date(-CUTOFF - DAY, inj), FG_REASON_TOO_OLD);
}
END_TEST

START_TEST(test_future_edge)
{
	bool inj = _i;

	/* RFC 5537 3.6: "more than 24 hours into the future" is rejected */
	ck_assert_int_eq(at_date(MARGIN - 1, inj), FG_REASON_NONE);
	ck_assert_int_eq(at_date(MARGIN, inj), FG_REASON_NONE);
	ck_assert_int_eq(at_date(MARGIN + 1, inj), FG_REASON_TOO_FAR_FUTURE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_FUTURE);
	ck_assert_int_eq(v.article_date, NOW + MARGIN + 1);
	ck_assert_int_eq(at_date(0, inj), FG_REASON_NONE);
}
END_TEST

START_TEST(test_smaller_future_margin)
{
	cfg->future_margin = 3600;
	recompile();
	ck_assert_int_eq(at_date(3600, false), FG_REASON_NONE);
	ck_assert_int_eq(at_date(3601, false), FG_REASON_TOO_FAR_FUTURE);
	cfg->future_margin = 0;
	ck_assert_int_eq(at_date(0, true), FG_REASON_NONE);
	ck_assert_int_eq(at_date(1, true), FG_REASON_TOO_FAR_FUTURE);
}
END_TEST

START_TEST(test_time_extremes_do_not_overflow)
{
	struct spec s = base_spec();

	cfg->date_syntax = FG_DATE_SYNTAX_RFC5322;	/* innd refuses 1900 */
	recompile();
	s.now = INT64_MIN + 10;	/* now - cutoff overflows: nothing is too old */
	s.date = "Sat, 01 Jan 1900 00:00:00 +0000";
	ck_assert_int_eq(decide(&s), FG_REASON_TOO_FAR_FUTURE);
	s.now = INT64_MAX - 10;	/* now + margin overflows: nothing is in the future */
	s.date = "Fri, 31 Dec 9999 23:59:59 +0000";
	ck_assert_int_eq(decide(&s), FG_REASON_TOO_OLD);
}
END_TEST

/* ---------------------------------------------------------------- dates */

START_TEST(test_missing_date)
{
	struct spec s = base_spec();

	s.date = NULL;
	ck_assert_int_eq(decide(&s), FG_REASON_MISSING_DATE);
	/* Injection-Date does not stand in for Date (RFC 5536 3.1.1) */
	s.injection_date = at(0);
	ck_assert_int_eq(decide(&s), FG_REASON_MISSING_DATE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_DATE_PRESENT);
}
END_TEST

START_TEST(test_bad_date)
{
	struct spec s = base_spec();

	s.date = "Thu, 32 Jan 2026 00:00:00 +0000";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_ptr_nonnull(v.why);
	ck_assert_int_eq(v.date_used, FG_RULES_DATE_NONE);
	/* a bad Date is bad even when Injection-Date is fine */
	s.injection_date = at(0);
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	/* a bad Injection-Date is bad even when Date is fine */
	s = base_spec();
	s.injection_date = "yesterday";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_str_eq(v.detail, "the Injection-Date header does not parse");
	/* present but empty */
	s.injection_date = "";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	s = base_spec();
	s.date = "";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
}
END_TEST

START_TEST(test_repeated_dates)
{
	struct spec s = base_spec();
	char extra[128];

	snprintf(extra, sizeof(extra), "Date: %s\r\n", at(-60));
	s.extra = extra;
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_str_eq(v.detail, "the Date header appears more than once");
	s = base_spec();
	s.injection_date = at(0);
	snprintf(extra, sizeof(extra), "Injection-Date: %s\r\n", at(0));
	s.extra = extra;
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_str_eq(v.detail, "the Injection-Date header appears more than once");
}
END_TEST

/* date-syntax: inn (the default) takes what innd takes, rfc5322 is strict */
START_TEST(test_date_syntax)
{
	struct spec s = base_spec();

	ck_assert_int_eq(cfg->date_syntax, FG_DATE_SYNTAX_INN);
	s.date = "Wed, 31 Dec 2025 23:00:00 CEST";		/* NOW - 3 h */
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.article_date, NOW - 3 * 3600);
	ck_assert_uint_eq(v.date.reading.notes, FG_DATE_NOTE_ZONE_NAME);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_LAX], 1);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_MISREAD], 0);
	/* the instant as written where innd misreads it; counted */
	s.date = "Wed, 31 Dec 2025 23:00:00 +05:30";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.article_date, NOW - 3600 - 5 * 3600 - 1800);
	ck_assert(!fg_date_reading_trusted(&v.date.reading));
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_MISREAD], 1);
	/* what innd refuses is refused: before 1970, a sign without digits */
	s.date = "Sat, 01 Jan 1969 00:00:00 +0000";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_str_eq(v.why, "bad-year");
	s.date = "Wed, 31 Dec 2025 23:00:00 +x";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	/* the same under rfc5322 */
	cfg->date_syntax = FG_DATE_SYNTAX_RFC5322;
	recompile();
	s.date = "Wed, 31 Dec 2025 23:00:00 CEST";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_DATE);
	ck_assert_str_eq(v.why, "bad-zone");
	ck_assert_uint_eq(v.date.reading.notes, 0);
	s.date = "Sat, 01 Jan 1969 00:00:00 +0000";
	ck_assert_int_eq(decide(&s), FG_REASON_TOO_OLD);
}
END_TEST

/* innd reads a value to its line's end: "+1" is +0100 but "+1  " +0001 (INN
 * counts the blanks after the digits as digits). The scanner trims them;
 * the inn reading reads on over them. */
START_TEST(test_date_read_to_innd_extent)
{
	struct spec s = base_spec();

	s.date = "Wed, 31 Dec 2025 23:00:00 +1";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.article_date, NOW - 3600 - 3600);
	ck_assert_uint_eq(v.date.reading.notes, FG_DATE_NOTE_ZONE_DIGITS);
	s.date = "Wed, 31 Dec 2025 23:00:00 +1 ";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.date.reading.inn_zone, 3600);	/* one blank: still hours */
	s.date = "Wed, 31 Dec 2025 23:00:00 +1  ";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.date.text.len, strlen(s.date) - 2);	/* trimmed */
	/* innd: +0001; floodgate: the hour the text states, marked misread */
	ck_assert_int_eq(v.article_date, NOW - 3600 - 3600);
	ck_assert_int_eq(v.date.reading.inn_zone, 60);
	ck_assert_uint_eq(v.date.reading.notes, FG_DATE_NOTE_ZONE_DIGITS | FG_DATE_NOTE_MISREAD_DIGITS);
	/* folding blanks count too */
	s.date = "Wed, 31 Dec 2025 23:00:00 +1\r\n ";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(v.date.reading.inn_zone, 60);
}
END_TEST

/* ---------------------------------------------------------------- Message-ID */

START_TEST(test_message_id_rules)
{
	struct spec s = base_spec();

	s.msgid = NULL;
	ck_assert_int_eq(decide(&s), FG_REASON_MISSING_MESSAGE_ID);
	ck_assert(!v.carried_id);
	/* valid wire form, not header form (no '@') */
	s.msgid = "<no-at-sign>";
	s.arg = "<no-at-sign>";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
	ck_assert_int_eq(v.step, FG_RULES_STEP_MSGID_VALID);
	ck_assert_str_eq(v.why, fg_msgid_error_str(FG_MSGID_E_NO_AT));
	/* the argument itself is not a Message-ID */
	s = base_spec();
	s.arg = "m1@example.com";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
	ck_assert_int_eq(v.step, FG_RULES_STEP_ARGUMENT);
	/* mismatch: an ID differing only in case is another ID */
	s.arg = "<M1@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_MESSAGE_ID_MISMATCH);
	ck_assert(!v.carried_id);
	/* the 250-octet limit (RFC 5536 3.1.3), as argument and header */
	{
		char id[260];

		s = base_spec();
		memset(id, 'x', sizeof(id));
		id[0] = '<';
		memcpy(id + 250 - 13, "@example.com>", 14);
		s.msgid = s.arg = id;
		ck_assert_uint_eq(strlen(id), 250);
		ck_assert_int_eq(decide(&s), FG_REASON_NONE);
		memset(id, 'x', sizeof(id));
		id[0] = '<';
		memcpy(id + 251 - 13, "@example.com>", 14);
		ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
		ck_assert_int_eq(v.step, FG_RULES_STEP_ARGUMENT);
		s.arg = NULL;
		ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
		ck_assert_int_eq(v.step, FG_RULES_STEP_MSGID_VALID);
	}
	/* repeated, even with the same value */
	s = base_spec();
	s.extra = "Message-ID: <m1@example.com>\r\n";
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
	ck_assert_str_eq(v.detail, "the Message-ID header appears more than once");
	/* without an argument, a repeated ID is not offered to history */
	s.arg = NULL;
	fake.know_all = true;
	fake.lookups = 0;
	ck_assert_int_eq(decide(&s), FG_REASON_BAD_MESSAGE_ID);
	ck_assert_uint_eq(fake.lookups, 0);
}
END_TEST

/* ---------------------------------------------------------------- headers */

START_TEST(test_required_headers)
{
	static const char *const names[] = { "Path", "From", "Newsgroups", "Subject" };

	for (unsigned i = 0; i < 4; i++) {
		struct spec s = base_spec();
		const char **field[] = { &s.path, &s.from, &s.newsgroups, &s.subject };
		char extra[128];

		*field[i] = NULL;
		ck_assert_int_eq(decide(&s), FG_REASON_MISSING_HEADER);
		ck_assert_str_eq(v.detail, "a mandatory header is missing");
		ck_assert_mem_eq(v.what.ptr, names[i], v.what.len);
		*field[i] = "";
		ck_assert_int_eq(decide(&s), FG_REASON_MISSING_HEADER);
		ck_assert_str_eq(v.detail, "a mandatory header is empty");
		*field[i] = "x";
		snprintf(extra, sizeof(extra), "%s: y\r\n", names[i]);
		s.extra = extra;
		ck_assert_int_eq(decide(&s), FG_REASON_MISSING_HEADER);
		ck_assert_str_eq(v.detail, "a mandatory header appears more than once");
	}
}
END_TEST

START_TEST(test_configured_required_headers)
{
	struct spec s = base_spec();

	snprintf(cfg->required_headers[0], sizeof(cfg->required_headers[0]), "Organization");
	cfg->n_required_headers = 1;
	recompile();
	s.subject = NULL;	/* no longer required */
	ck_assert_int_eq(decide(&s), FG_REASON_MISSING_HEADER);
	ck_assert_mem_eq(v.what.ptr, "Organization", 12);
	s.extra = "organization: Example\r\n";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	cfg->n_required_headers = 0;
	recompile();
	s = base_spec();
	s.from = s.path = s.subject = NULL;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
}
END_TEST

/* ---------------------------------------------------------------- path */

static enum fg_reason with_path(const char *path)
{
	struct spec s = base_spec();

	s.path = path;
	return decide(&s);
}

START_TEST(test_path_loop)
{
	ck_assert_int_eq(with_path("a.example!news.example.net!b.example!not-for-mail"),
			 FG_REASON_PATH_LOOP);
	ck_assert_mem_eq(v.what.ptr, "news.example.net", v.what.len);
	/* first element, any case, the second identity */
	ck_assert_int_eq(with_path("NEWS.Example.NET!not-for-mail"), FG_REASON_PATH_LOOP);
	ck_assert_int_eq(with_path("a!hub.example.org!x"), FG_REASON_PATH_LOOP);
	/* folding whitespace around elements (RFC 5536 3.1.5) */
	ck_assert_int_eq(with_path("a.example!\r\n news.example.net !b!c"), FG_REASON_PATH_LOOP);
	/* only whole elements count */
	ck_assert_int_eq(with_path("news.example.net.evil!not-for-mail"), FG_REASON_NONE);
	ck_assert_int_eq(with_path("example.net!x.news.example.net!y"), FG_REASON_NONE);
	ck_assert_int_eq(with_path("a!.SEEN.news.example.net!b!c"), FG_REASON_NONE);
	ck_assert_int_eq(with_path("a!!b!c"), FG_REASON_NONE);
	/* the tail-entry is not a path identity */
	ck_assert_int_eq(with_path("a.example!news.example.net"), FG_REASON_NONE);
	ck_assert_int_eq(with_path("news.example.net"), FG_REASON_NONE);
}
END_TEST

START_TEST(test_path_loop_in_any_path_field)
{
	struct spec s = base_spec();

	/* Path not required: a second Path field is still looked at */
	cfg->n_required_headers = 0;
	recompile();
	s.extra = "Path: x!news.example.net!y\r\n";
	ck_assert_int_eq(decide(&s), FG_REASON_PATH_LOOP);
	/* no identity configured: no loop check */
	cfg->n_path_ids = 0;
	recompile();
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
}
END_TEST

/* ---------------------------------------------------------------- size */

START_TEST(test_oversize_edges)
{
	struct spec s = base_spec();

	/* the peer's limit (50000) replaces the site's (100000) */
	s.size = 50000;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	s.size = 50001;
	ck_assert_int_eq(decide(&s), FG_REASON_OVERSIZE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_SIZE);
	/* a peer without its own limit, and no peer: the site's */
	s.peer = "open";
	s.size = 100000;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	s.size = 100001;
	ck_assert_int_eq(decide(&s), FG_REASON_OVERSIZE);
	s.peer = NULL;
	ck_assert_int_eq(decide(&s), FG_REASON_OVERSIZE);
	/* 0 is no limit */
	cfg->max_article_size = 0;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
}
END_TEST

START_TEST(test_header_past_bounds_is_oversize)
{
	struct spec s = base_spec();
	static char extra[FG_ARTICLE_MAX_LINE + 32];

	/* the overlong line is last: every other field was found */
	memcpy(extra, "X-Long: ", 8);
	memset(extra + 8, 'x', FG_ARTICLE_MAX_LINE);
	memcpy(extra + 8 + FG_ARTICLE_MAX_LINE, "\r\n", 3);
	s.extra = extra;
	ck_assert_int_eq(decide(&s), FG_REASON_OVERSIZE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_HEADER_BOUNDS);
	ck_assert_str_eq(v.why, fg_article_error_str(FG_ARTICLE_E_LINE_TOO_LONG));
	/* but a known ID is a duplicate first */
	fake.known = "<m1@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
}
END_TEST

/* ---------------------------------------------------------------- newsgroups */

static enum fg_reason with_groups(const char *peer, const char *groups)
{
	struct spec s = base_spec();

	s.peer = peer;
	s.newsgroups = groups;
	return decide(&s);
}

START_TEST(test_unwanted_newsgroup)
{
	ck_assert_int_eq(with_groups("feeder", "comp.lang.c"), FG_REASON_NONE);
	ck_assert_int_eq(with_groups("feeder", "rec.food"), FG_REASON_UNWANTED_NEWSGROUP);
	ck_assert_int_eq(v.step, FG_RULES_STEP_NEWSGROUPS);
	ck_assert_int_eq(with_groups("feeder", "comp.secret.x"), FG_REASON_UNWANTED_NEWSGROUP);
	/* one wanted group of a crosspost is enough, with folding */
	ck_assert_int_eq(with_groups("feeder", "rec.food,\r\n comp.lang.c"), FG_REASON_NONE);
	/* unless another is poisoned (INN's "@") */
	ck_assert_int_eq(with_groups("feeder", "comp.lang.c,alt.spam.x"),
			 FG_REASON_UNWANTED_NEWSGROUP);
	ck_assert_str_eq(v.detail, "a newsgroup is poisoned (\"@\") in the peer's newsgroups");
	ck_assert_int_eq(with_groups("open", "rec.food"), FG_REASON_NONE);
	ck_assert_int_eq(with_groups(NULL, "anything.at.all"), FG_REASON_NONE);
}
END_TEST

/* ---------------------------------------------------------------- history */

START_TEST(test_duplicate_before_dates)
{
	struct spec s = base_spec();

	fake.known = "<m1@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
	ck_assert_int_eq(v.step, FG_RULES_STEP_HISTORY);
	/* whatever its date: a duplicate parses no date at all */
	s.date = at(-400 * DAY);
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
	ck_assert(!v.date.parsed);
	s.date = "garbage";
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
	ck_assert_uint_eq(stats.rejected[FG_REASON_DUPLICATE], 3);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_DATE_FROM_DATE], 0);
	/* history is keyed by the argument: a mismatching header is no
	 * duplicate of what it names */
	s = base_spec();
	s.arg = "<other@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_MESSAGE_ID_MISMATCH);
}
END_TEST

START_TEST(test_no_history)
{
	struct spec s = base_spec();

	ck_assert_int_eq(fg_rules_init(&rules, cfg, NULL), 0);
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_int_eq(fg_rules_offer(&rules, "<a@b>", 5, NULL, NULL, NULL), FG_REASON_NONE);
}
END_TEST

/* The caller's key for the argument is handed back to its lookup, so it
 * need not hash the ID again; an ID read from the header has none. */
START_TEST(test_lookup_gets_the_argument_key)
{
	static const int key = 42;
	struct spec s = base_spec();

	ck_assert_int_eq(fg_rules_init(&rules, cfg, &history), 0);
	memset(&fake, 0, sizeof(fake));
	ck_assert_int_eq(fg_rules_offer(&rules, "<a@b>", 5, &key, NULL, NULL), FG_REASON_NONE);
	ck_assert_uint_eq(fake.lookups, 1);
	ck_assert_ptr_eq(fake.last_key, &key);
	fake.last_key = &fake;
	ck_assert_int_eq(fg_rules_offer(&rules, "<a@b>", 5, NULL, NULL, NULL), FG_REASON_NONE);
	ck_assert_ptr_null(fake.last_key);
	fake.last_key = &fake;
	s.arg = NULL;	/* the header's ID is the offered one */
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert_uint_eq(fake.lookups, 3);
	ck_assert_ptr_null(fake.last_key);
}
END_TEST

START_TEST(test_superseded_by_version)
{
	struct spec s = base_spec();

	fake.has_newest = true;
	fake.newest = 3;
	s.msgid = s.arg = "<faq$v=2$XYZ@faq.example>";
	/* off by default */
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(v.version_ok);
	ck_assert(v.version.has_version);
	ck_assert_uint_eq(v.version.version, 2);
	cfg->honor_versions = true;
	ck_assert_int_eq(decide(&s), FG_REASON_SUPERSEDED);
	ck_assert_int_eq(v.step, FG_RULES_STEP_SUPERSEDED);
	ck_assert_str_eq(fake.last_base, "<faq@faq.example>");
	s.msgid = s.arg = "<faq$v=3$PQR@faq.example>";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	s.msgid = s.arg = "<faq$v=4$ABC@faq.example>";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	/* an unversioned ID is version 0 of its base */
	s.msgid = s.arg = "<faq@faq.example>";
	ck_assert_int_eq(decide(&s), FG_REASON_SUPERSEDED);
	fake.has_newest = false;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	/* version-numbers off: nothing is parsed, nothing superseded */
	fake.has_newest = true;
	cfg->version_numbers = false;
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(!v.version_ok);
}
END_TEST

START_TEST(test_superseded_by_supersedes)
{
	struct spec s = base_spec();

	fake.superseded = "<m1@example.com>";
	/* honouring off: a mark left from when it was on is a duplicate */
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
	cfg->honor_supersedes = true;
	ck_assert_int_eq(decide(&s), FG_REASON_SUPERSEDED);
	ck_assert_uint_eq(fake.lookups, 2);	/* asked once per decision */
	/* the target of an accepted article's Supersedes is exposed */
	fake.superseded = NULL;
	s = base_spec();
	s.supersedes = "<old@example.com>";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(v.supersedes_valid);
	ck_assert_mem_eq(v.supersedes.ptr, "<old@example.com>", v.supersedes.len);
	s.supersedes = "not an id";
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(!v.supersedes_valid);
}
END_TEST

/* ---------------------------------------------------------------- offers */

START_TEST(test_offer)
{
	struct fg_rules_verdict ov;

	ck_assert_int_eq(fg_rules_offer(&rules, "<new@x>", 7, NULL, &ov, &stats), FG_REASON_NONE);
	ck_assert_int_eq(fg_rules_offer(&rules, "new@x", 5, NULL, &ov, &stats), FG_REASON_BAD_MESSAGE_ID);
	ck_assert_int_eq(ov.step, FG_RULES_STEP_ARGUMENT);
	/* wire form suffices for an offer */
	ck_assert_int_eq(fg_rules_offer(&rules, "<no-at>", 7, NULL, NULL, &stats), FG_REASON_NONE);
	fake.known = "<old@x>";
	ck_assert_int_eq(fg_rules_offer(&rules, "<old@x>", 7, NULL, NULL, &stats), FG_REASON_DUPLICATE);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_OFFERS_WANTED], 2);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_OFFERS_REFUSED], 2);
	ck_assert_uint_eq(stats.rejected[FG_REASON_BAD_MESSAGE_ID], 1);
	ck_assert_uint_eq(stats.rejected[FG_REASON_DUPLICATE], 1);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_ACCEPTED] + stats.ctr[FG_CTR_RULES_REJECTED], 0);
}
END_TEST

/* ---------------------------------------------------------------- order */

/*
 * One way to make each step fail, touching as little as possible; `group`
 * names what it changes, and two injectors of one group are not combined.
 */
struct fault {
	enum fg_rules_step step;
	const char *group;
	void (*apply)(struct spec *s);
};

static char long_extra[FG_ARTICLE_MAX_LINE + 32];

static void f_argument(struct spec *s) { s->arg = "not-an-id"; }
static void f_cyber(struct spec *s)
{
	cfg->refuse_cyber_cancels = true;
	s->arg = s->msgid = "<cancel.1@example.com>";
}
static void f_history(struct spec *s) { (void)s; fake.know_all = true; }
static void f_superseded(struct spec *s)
{
	(void)s;
	cfg->honor_versions = true;
	fake.has_newest = true;
	fake.newest = 7;
}
static void f_bounds(struct spec *s)
{
	memcpy(long_extra, "X-Long: ", 8);
	memset(long_extra + 8, 'x', FG_ARTICLE_MAX_LINE);
	memcpy(long_extra + 8 + FG_ARTICLE_MAX_LINE, "\r\n", 3);
	s->extra = long_extra;
}
static void f_msgid_missing(struct spec *s) { s->msgid = NULL; }
static void f_msgid_bad(struct spec *s) { s->msgid = "<no-at>"; }
static void f_mismatch(struct spec *s) { s->arg = "<other@example.com>"; }
static void f_date_missing(struct spec *s) { s->date = NULL; }
static void f_date_bad(struct spec *s) { s->injection_date = "not a date"; }
static void f_required(struct spec *s) { s->subject = NULL; }
static void f_path(struct spec *s) { s->path = "x!news.example.net!not-for-mail"; }
static void f_old(struct spec *s) { s->date = at(-CUTOFF - 1); }
static void f_future(struct spec *s) { s->date = at(MARGIN + 1); }
static void f_size(struct spec *s) { s->size = 50001; }
static void f_groups(struct spec *s) { s->newsgroups = "rec.food"; }

static const struct fault faults[] = {
	{ FG_RULES_STEP_ARGUMENT, "arg", f_argument },
	{ FG_RULES_STEP_CYBER_CANCEL, "arg", f_cyber },
	{ FG_RULES_STEP_HISTORY, "history", f_history },
	{ FG_RULES_STEP_SUPERSEDED, "versions", f_superseded },
	{ FG_RULES_STEP_HEADER_BOUNDS, "extra", f_bounds },
	{ FG_RULES_STEP_MSGID_PRESENT, "msgid", f_msgid_missing },
	{ FG_RULES_STEP_MSGID_VALID, "msgid", f_msgid_bad },
	{ FG_RULES_STEP_MSGID_MATCH, "arg", f_mismatch },
	{ FG_RULES_STEP_DATE_PRESENT, "date", f_date_missing },
	{ FG_RULES_STEP_DATES_PARSE, "injection", f_date_bad },
	{ FG_RULES_STEP_REQUIRED, "subject", f_required },
	{ FG_RULES_STEP_PATH, "path", f_path },
	{ FG_RULES_STEP_CUTOFF, "date", f_old },
	{ FG_RULES_STEP_FUTURE, "date", f_future },
	{ FG_RULES_STEP_SIZE, "size", f_size },
	{ FG_RULES_STEP_NEWSGROUPS, "groups", f_groups },
};

static void reset_world(void)
{
	memset(&fake, 0, sizeof(fake));
	cfg->honor_versions = false;
	cfg->refuse_cyber_cancels = false;
}

START_TEST(test_every_step_has_a_fault)
{
	ck_assert_uint_eq(FG_ARRAY_SIZE(faults), FG_RULES_STEP__COUNT - 1);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(faults); i++) {
		struct spec s = base_spec();

		reset_world();
		ck_assert_int_eq(faults[i].step, (int)i + 1);
		faults[i].apply(&s);
		ck_assert_int_eq(decide(&s), fg_rules_step_reason(faults[i].step));
		ck_assert_int_eq(v.step, faults[i].step);
		ck_assert_ptr_nonnull(v.detail);
	}
}
END_TEST

START_TEST(test_two_faults_report_the_earlier_step)
{
	unsigned pairs = 0;

	for (unsigned i = 0; i < FG_ARRAY_SIZE(faults); i++) {
		for (unsigned j = i + 1; j < FG_ARRAY_SIZE(faults); j++) {
			struct spec s = base_spec();

			if (strcmp(faults[i].group, faults[j].group) == 0)
				continue;
			reset_world();
			faults[j].apply(&s);
			faults[i].apply(&s);
			decide(&s);
			ck_assert_msg(v.step == faults[i].step,
				      "%s + %s gave step %s", fg_rules_step_name(faults[i].step),
				      fg_rules_step_name(faults[j].step), fg_rules_step_name(v.step));
			pairs++;
		}
	}
	ck_assert_uint_ge(pairs, 95);
}
END_TEST

/* ---------------------------------------------------------------- verdict */

START_TEST(test_explain_fills_everything)
{
	struct spec s = base_spec();

	s.msgid = s.arg = "<abc$v=5$Q@example.com>";
	s.injection_date = at(-30);
	s.supersedes = "<abc$v=4$P@example.com>";
	fake.know_all = true;
	ck_assert_int_eq(decide(&s), FG_REASON_DUPLICATE);
	ck_assert(!v.date.parsed);
	ck_assert(!v.version_ok);
	ck_assert_int_eq(decide_ex(&s, true), FG_REASON_DUPLICATE);
	ck_assert(v.date.parsed && v.injection_date.parsed);
	ck_assert_int_eq(v.date_used, FG_RULES_DATE_INJECTION);
	ck_assert_int_eq(v.article_date, NOW - 30);
	ck_assert(v.version_ok);
	ck_assert_uint_eq(v.version.version, 5);
	ck_assert_str_eq(v.version.base, "<abc@example.com>");
	ck_assert(v.supersedes_valid);
	ck_assert_int_eq(v.msgid_form, FG_MSGID_HEADER);
}
END_TEST

START_TEST(test_counters_one_reason_per_reject)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < FG_ARRAY_SIZE(faults); i++) {
		struct spec s = base_spec();

		reset_world();
		faults[i].apply(&s);
		decide(&s);
	}
	for (unsigned r = 0; r < FG_REASON__COUNT; r++)
		total += stats.rejected[r];
	ck_assert_uint_eq(total, FG_ARRAY_SIZE(faults));
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_REJECTED], total);
	ck_assert_uint_eq(stats.ctr[FG_CTR_RULES_ACCEPTED], 0);
	ck_assert_uint_eq(stats.rejected[FG_REASON_OVERSIZE], 2);	/* bounds, size */
	ck_assert_uint_eq(stats.rejected[FG_REASON_NONE], 0);
}
END_TEST

START_TEST(test_remember)
{
	struct spec s = base_spec();

	f_old(&s);
	ck_assert_int_eq(decide(&s), FG_REASON_TOO_OLD);
	ck_assert(fg_rules_remember(&rules, &v));
	cfg->remember_rejects = false;
	ck_assert(!fg_rules_remember(&rules, &v));
	cfg->remember_rejects = true;
	/* not carried: the header names another ID */
	s = base_spec();
	f_mismatch(&s);
	ck_assert_int_eq(decide(&s), FG_REASON_MESSAGE_ID_MISMATCH);
	ck_assert(!fg_rules_remember(&rules, &v));
	/* peer policy, route and time are not facts of the article */
	for (unsigned i = 0; i < FG_ARRAY_SIZE(faults); i++) {
		bool expect;

		s = base_spec();
		reset_world();
		faults[i].apply(&s);
		decide(&s);
		expect = v.reason == FG_REASON_MISSING_DATE || v.reason == FG_REASON_BAD_DATE ||
			 v.reason == FG_REASON_MISSING_HEADER || v.reason == FG_REASON_TOO_OLD;
		ck_assert_msg(fg_rules_remember(&rules, &v) == expect, "%s",
			      fg_reason_name(v.reason));
	}
	/* accepted: nothing to remember as a reject */
	s = base_spec();
	reset_world();
	ck_assert_int_eq(decide(&s), FG_REASON_NONE);
	ck_assert(!fg_rules_remember(&rules, &v));
}
END_TEST

START_TEST(test_init_refuses_impossible_config)
{
	struct fg_rules r;

	memset(cfg->required_headers[0], 'x', sizeof(cfg->required_headers[0]));
	ck_assert_int_eq(fg_rules_init(&r, cfg, NULL), -EINVAL);
	cfg->required_headers[0][0] = '\0';
	ck_assert_int_eq(fg_rules_init(&r, cfg, NULL), -EINVAL);
	cfg->n_required_headers = 0;
	cfg->path_ids[1][0] = '\0';
	ck_assert_int_eq(fg_rules_init(&r, cfg, NULL), -EINVAL);
	cfg->n_path_ids = 1;
	ck_assert_int_eq(fg_rules_init(&r, cfg, NULL), 0);
}
END_TEST

/* ---------------------------------------------------------------- docs */

/*
 * docs/rules.md must list exactly the reasons of tbl/reasons.h (rows
 * "| `name` | help |" of the table under "## Reasons") and the steps in the
 * code's order (lines "N. `step` → `reason`" under "## Order of checks").
 */
START_TEST(test_docs_match_code)
{
	const char *top = getenv("FG_TOP");
	char path[512], line[1024], section[64] = "";
	bool seen[FG_REASON__COUNT] = { false };
	unsigned n_steps = 0, n_reasons = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/docs/rules.md", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char a[64], b[64];
		unsigned n;
		int r, end = 0;

		if (sscanf(line, "## %63[^\n]", section) == 1)
			continue;
		if (strcmp(section, "Order of checks") == 0 &&
		    sscanf(line, "%u. `%63[a-z-]` \xe2\x86\x92 `%63[a-z-]`", &n, a, b) == 3) {
			ck_assert_uint_eq(n, ++n_steps);
			ck_assert_str_eq(a, fg_rules_step_name(n));
			ck_assert_str_eq(b, fg_reason_name(fg_rules_step_reason(n)));
		} else if (strcmp(section, "Reasons") == 0 &&
			   sscanf(line, "| `%63[a-z-]` |%n", a, &end) == 1 && end > 0) {
			r = fg_reason_parse(a);
			ck_assert_msg(r > 0, "docs/rules.md lists unknown reason %s", a);
			ck_assert_msg(!seen[r], "docs/rules.md lists %s twice", a);
			ck_assert_msg(strstr(line, fg_reason_help(r)) != NULL,
				      "docs/rules.md: help of %s differs from tbl/reasons.h", a);
			seen[r] = true;
			n_reasons++;
		}
	}
	fclose(f);
	ck_assert_uint_eq(n_steps, FG_RULES_STEP__COUNT - 1);
	ck_assert_uint_eq(n_reasons, FG_REASON__COUNT - 1);
}
END_TEST

START_TEST(test_step_names)
{
	ck_assert_ptr_null(fg_rules_step_name(FG_RULES_STEP_NONE));
	ck_assert_ptr_null(fg_rules_step_name(FG_RULES_STEP__COUNT));
	ck_assert_int_eq(fg_rules_step_reason(FG_RULES_STEP__COUNT), FG_REASON_NONE);
	/* every reason is given by some step, but the downstream's own
	 * refusal: end-to-end acknowledgement gives it after the rules
	 * accepted (xfer.c, downstream_refused) */
	for (unsigned r = 1; r < FG_REASON__COUNT; r++) {
		bool found = r == FG_REASON_DOWNSTREAM_REFUSED;

		for (unsigned s = 1; s < FG_RULES_STEP__COUNT; s++)
			found |= fg_rules_step_reason(s) == (enum fg_reason)r;
		ck_assert_msg(found, "no step gives %s", fg_reason_name(r));
	}
}
END_TEST

static Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_accept_with_date);
	tcase_add_test(tc, test_accept_with_injection_date);
	tcase_add_test(tc, test_accept_without_argument_or_peer);
	tcase_add_loop_test(tc, test_cutoff_edge, 0, 2);
	tcase_add_loop_test(tc, test_future_edge, 0, 2);
	tcase_add_test(tc, test_smaller_future_margin);
	tcase_add_test(tc, test_time_extremes_do_not_overflow);
	tcase_add_test(tc, test_missing_date);
	tcase_add_test(tc, test_bad_date);
	tcase_add_test(tc, test_repeated_dates);
	tcase_add_test(tc, test_date_syntax);
	tcase_add_test(tc, test_date_read_to_innd_extent);
	tcase_add_test(tc, test_message_id_rules);
	tcase_add_test(tc, test_required_headers);
	tcase_add_test(tc, test_configured_required_headers);
	tcase_add_test(tc, test_path_loop);
	tcase_add_test(tc, test_path_loop_in_any_path_field);
	tcase_add_test(tc, test_oversize_edges);
	tcase_add_test(tc, test_header_past_bounds_is_oversize);
	tcase_add_test(tc, test_unwanted_newsgroup);
	tcase_add_test(tc, test_duplicate_before_dates);
	tcase_add_test(tc, test_no_history);
	tcase_add_test(tc, test_lookup_gets_the_argument_key);
	tcase_add_test(tc, test_superseded_by_version);
	tcase_add_test(tc, test_superseded_by_supersedes);
	tcase_add_test(tc, test_offer);
	tcase_add_test(tc, test_every_step_has_a_fault);
	tcase_add_test(tc, test_two_faults_report_the_earlier_step);
	tcase_add_test(tc, test_explain_fills_everything);
	tcase_add_test(tc, test_counters_one_reason_per_reject);
	tcase_add_test(tc, test_remember);
	tcase_add_test(tc, test_init_refuses_impossible_config);
	tcase_add_test(tc, test_docs_match_code);
	tcase_add_test(tc, test_step_names);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(rules_suite)
