/* SPDX-License-Identifier: MIT */
/*
 * test_feeds.c — per-downstream feeds against INN's documented semantics:
 * newsfeeds(5)'s subscription examples ("!" and "@"), innd(8)'s control
 * pseudo-groups (and art.c's rule that only the article's own groups
 * poison), newsfeeds(5)'s four distribution rules, the size limits,
 * exclude-path; the stable identifiers; the keys' checks; and what
 * `floodctl explain` is given (the deciding group and pattern).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/article.h"
#include "floodgate/config.h"
#include "floodgate/feeds.h"
#include "fgtest.h"

static struct fg_config *load(const char *text)
{
	struct fg_config_errors errs;
	struct fg_config *cfg = fg_config_load_text("test", text, strlen(text), &errs);

	ck_assert_msg(cfg != NULL, "config refused: %s", errs.n ? errs.err[0].text : "?");
	return cfg;
}

/* A config error whose text holds `needle`. */
static void refused(const char *text, const char *needle)
{
	struct fg_config_errors errs;
	struct fg_config *cfg = fg_config_load_text("test", text, strlen(text), &errs);
	bool found = false;

	ck_assert_msg(cfg == NULL, "config accepted: %s", text);
	for (unsigned i = 0; i < errs.n; i++)
		found |= strstr(errs.err[i].text, needle) != NULL;
	ck_assert_msg(found, "no error with \"%s\": %s", needle, errs.n ? errs.err[0].text : "");
}

/* One downstream "d" with these extra lines. */
static struct fg_config *one(const char *lines)
{
	char text[2048];

	snprintf(text, sizeof(text), "[downstream d]\naddress 127.0.0.1:1119\n%s\n", lines);
	return load(text);
}

struct art {
	char text[4096];
	struct fg_article scan;
};

/* An article of these header lines (plain form, "\n" separated). */
static const struct fg_article *art_of(struct art *a, const char *headers)
{
	snprintf(a->text, sizeof(a->text),
		 "Path: a.example!not-for-mail\nFrom: x@example.net\nSubject: s\n"
		 "Message-ID: <m@example.net>\nDate: Mon, 02 Mar 2026 12:00:00 +0000\n"
		 "%s\n\nbody\n", headers);
	fg_article_init(&a->scan, FG_ARTICLE_PLAIN);
	ck_assert_int_eq(fg_article_scan(&a->scan, a->text, strlen(a->text)), FG_ARTICLE_COMPLETE);
	return &a->scan;
}

/* The decision for the single downstream of cfg. */
static enum fg_feeds_why why1(const struct fg_config *cfg, const char *headers, uint64_t size,
			      struct fg_feeds_decision *d)
{
	/* static: the decision's values point into the article */
	static struct art a;
	struct fg_feeds_decision dd[FG_FEEDS_MAX];
	struct fg_feeds_set set;
	unsigned n = fg_feeds_select(cfg, art_of(&a, headers), size, &set, dd);

	ck_assert_int_eq(n, set.n);
	ck_assert_int_eq(n, dd[0].why == FG_FEEDS_SENT);
	ck_assert_int_eq(fg_feeds_has(&set, cfg->downstream[0].ident), n == 1);
	if (d)
		*d = dd[0];
	return dd[0].why;
}

static bool value_is(struct fg_article_value v, const char *s)
{
	return v.ptr && v.len == strlen(s) && memcmp(v.ptr, s, v.len) == 0;
}

/* One downstream's keys, an article's headers and size, the decision;
 * `group` and `pattern` (NULL: not checked, "": none) what explain shows. */
struct fcase {
	const char *keys, *headers;
	uint64_t size;
	enum fg_feeds_why want;
	const char *group, *pattern;
};

static void run_fcases(const struct fcase *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fg_config *c = one(k[i].keys);
		struct fg_feeds_decision d;
		enum fg_feeds_why w = why1(c, k[i].headers, k[i].size ? k[i].size : 100, &d);

		ck_assert_msg(w == k[i].want, "case %zu (%s | %s): %s, want %s", i, k[i].keys,
			      k[i].headers, fg_feeds_why_name(w), fg_feeds_why_name(k[i].want));
		if (k[i].group)
			ck_assert_msg(*k[i].group ? value_is(fg_feeds_group(&d), k[i].group) :
				      !fg_feeds_group(&d).ptr, "case %zu: group %.*s", i,
				      (int)fg_feeds_group(&d).len, fg_feeds_group(&d).ptr);
		if (k[i].pattern)
			ck_assert_msg(*k[i].pattern ? value_is(d.pattern, k[i].pattern) :
				      !d.pattern.ptr, "case %zu: pattern %.*s", i,
				      (int)d.pattern.len, d.pattern.ptr);
		fg_config_free(c);
	}
}

#define SENT FG_FEEDS_SENT
#define NO_GROUP FG_FEEDS_NO_GROUP
#define POISONED FG_FEEDS_POISONED
#define DIST FG_FEEDS_DISTRIBUTION

/* ------------------------------------------------------------ newsgroups */

/* newsfeeds(5)'s examples. */
START_TEST(newsfeeds_examples)
{
#define SRC "newsgroups comp.*,!comp.sources.*,comp.sources.unix"
#define WAREZ "newsgroups alt.*,@alt.binaries.warez,misc.*"
	static const struct fcase k[] = {
		/* "all comp.*, but only comp.sources.unix within the sources" */
		{ SRC, "Newsgroups: comp.sources.unix", 0, SENT, NULL, "comp.sources.unix" },
		{ SRC, "Newsgroups: comp.sources.misc", 0, NO_GROUP, "comp.sources.misc",
		  "!comp.sources.*" },
		{ SRC, "Newsgroups: comp.sources-only", 0, SENT, NULL, NULL },
		{ SRC, "Newsgroups: rec.pets", 0, NO_GROUP, "", "" },
		/* a "!" group does not hold back a crosspost to a selected one */
		{ SRC, "Newsgroups: comp.sources.misc,comp.lang.c", 0, SENT, "comp.lang.c", NULL },
		/* "alt.* and misc.* but not alt.binaries.warez, even crossposted" */
		{ WAREZ, "Newsgroups: alt.test,alt.binaries.warez", 0, POISONED,
		  "alt.binaries.warez", "@alt.binaries.warez" },
		{ WAREZ, "Newsgroups: misc.test, alt.test", 0, SENT, NULL, NULL },
		/* "if you reversed ...": poison only when it is the last match */
		{ "newsgroups @alt.binaries.warez,alt.*,misc.*",
		  "Newsgroups: alt.test,alt.binaries.warez", 0, SENT, NULL, NULL },
	};
#undef SRC
#undef WAREZ

	run_fcases(k, FG_ARRAY_SIZE(k));
}
END_TEST

START_TEST(binaries_and_text_split)
{
	struct fg_config *c = load("[downstream binaries]\naddress 127.0.0.1:1\n"
				   "newsgroups alt.binaries.*\n"
				   "[downstream text]\naddress 127.0.0.1:2\n"
				   "newsgroups *,!alt.binaries.*,@alt.spam.*\n");
	static const struct {
		const char *groups;
		bool binaries, text;
	} cases[] = {
		{ "alt.binaries.pictures", true, false },
		{ "comp.lang.c,news.misc", false, true },
		{ "alt.binaries.sounds,alt.music", true, true },	/* a crosspost: both */
		{ "alt.music,alt.spam.pills", false, false },		/* text: poisoned */
		{ "alt.binaries.x,alt.spam.pills", true, false },
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		char hdr[128];
		struct fg_feeds_set set;
		struct art a;

		snprintf(hdr, sizeof(hdr), "Newsgroups: %s", cases[i].groups);
		fg_feeds_select(c, art_of(&a, hdr), 1000, &set, NULL);
		ck_assert_msg(fg_feeds_has(&set, fg_config_ident("binaries")) == cases[i].binaries &&
			      fg_feeds_has(&set, fg_config_ident("text")) == cases[i].text,
			      "%s", cases[i].groups);
		ck_assert_int_eq(set.n, cases[i].binaries + cases[i].text);
		ck_assert(!set.all);
	}
	fg_config_free(c);
}
END_TEST

START_TEST(no_newsgroups_goes_nowhere)
{
	struct fg_config *c = one("");		/* newsgroups * by default */

	ck_assert_str_eq(c->downstream[0].newsgroups, "*");
	ck_assert_int_eq(why1(c, "X-No: groups", 100, NULL), FG_FEEDS_NO_GROUP);
	ck_assert_int_eq(why1(c, "Newsgroups: ,", 100, NULL), FG_FEEDS_NO_GROUP);
	ck_assert_int_eq(why1(c, "Newsgroups: any.group", 100, NULL), FG_FEEDS_SENT);
	fg_config_free(c);
}
END_TEST

/* ------------------------------------------------------------ control */

/* innd(8) "CONTROL MESSAGES", and innd's art.c where the page is loose. */
START_TEST(control_pseudo_groups)
{
#define CANCEL "Newsgroups: alt.test\nControl: cancel <x@y>"
#define MEOW "Newsgroups: news.admin.meow\nControl: newgroup news.admin.meow"
	static const struct fcase k[] = {
		/* "!control,!control.*" does not stop control articles about the
		 * groups the site is fed */
		{ "newsgroups *,!control,!control.*", CANCEL, 0, SENT, NULL, NULL },
		/* the pseudo-group alone feeds a site its control articles */
		{ "newsgroups comp.*,control.cancel", CANCEL, 0, SENT, "control.cancel",
		  "control.cancel" },
		{ "newsgroups comp.*,control.cancel", "Newsgroups: alt.test\nControl: newgroup a.x",
		  0, NO_GROUP, NULL, NULL },
		/* the verb is a word, compared in lower case */
		{ "newsgroups comp.*,control.cancel", "Newsgroups: a.b\nControl:  CANCEL  <x@y>", 0,
		  SENT, NULL, NULL },
		/* "control" when no pattern names control.<verb> */
		{ "newsgroups comp.*,control", "Newsgroups: alt.test\nControl: rmgroup alt.x", 0,
		  SENT, "control", "control" },
		{ "newsgroups comp.*,control,!control.rmgroup",
		  "Newsgroups: alt.test\nControl: rmgroup alt.x", 0, NO_GROUP, "control.rmgroup",
		  "!control.rmgroup" },
		{ "newsgroups comp.*,control,!control.rmgroup", CANCEL, 0, SENT, NULL, NULL },
		/* "*,@news.*,!control,!control.*" and "comp.*,@news.*" do not get
		 * a newgroup posted to news.admin.meow; "news.*,!control,..." does */
		{ "newsgroups *,@news.*,!control,!control.*", MEOW, 0, POISONED, NULL, NULL },
		{ "newsgroups comp.*,@news.*", MEOW, 0, POISONED, NULL, NULL },
		{ "newsgroups news.*,!control,!control.*", MEOW, 0, SENT, NULL, NULL },
		/* art.c: only the article's own groups poison; "@" on the pseudo-
		 * group leaves it unselected */
		{ "newsgroups comp.*,@control.cancel", "Newsgroups: comp.lang.c\nControl: cancel <x>",
		  0, SENT, NULL, NULL },
		{ "newsgroups comp.*,@control.cancel", CANCEL, 0, NO_GROUP, NULL, NULL },
		/* an empty Control field: the pseudo-group is "control" */
		{ "newsgroups control", "Newsgroups: alt.test\nControl:", 0, SENT, NULL, NULL },
		{ "newsgroups control", "Newsgroups: alt.test", 0, NO_GROUP, NULL, NULL },
	};
#undef CANCEL
#undef MEOW

	run_fcases(k, FG_ARRAY_SIZE(k));
}
END_TEST

/* ------------------------------------------------------------ the others */

/* newsfeeds(5)'s four distribution rules, a logical or over the words. */
START_TEST(distribution_rules)
{
#define LN "distributions local,nyc"
	static const struct fcase k[] = {
		/* rule 1: listed -> sent; rule 3: not listed, no "!" -> not */
		{ LN, "Newsgroups: a.b\nDistribution: local", 0, SENT, NULL, NULL },
		{ LN, "Newsgroups: a.b\nDistribution: world", 0, DIST, NULL, NULL },
		/* more than one: or; words compare ignoring case */
		{ LN, "Newsgroups: a.b\nDistribution: world, NYC", 0, SENT, NULL, NULL },
		/* no Distribution header, or an empty one: not restricted */
		{ LN, "Newsgroups: a.b", 0, SENT, NULL, NULL },
		{ LN, "Newsgroups: a.b\nDistribution: ,", 0, SENT, NULL, NULL },
		/* rule 2: "!" and listed -> not; rule 4: not listed, a "!" in the
		 * list -> sent */
		{ "distributions !local", "Newsgroups: a.b\nDistribution: local", 0, DIST, NULL,
		  NULL },
		{ "distributions !local", "Newsgroups: a.b\nDistribution: world", 0, SENT, NULL,
		  NULL },
		{ "distributions !local", "Newsgroups: a.b\nDistribution: local,world", 0, SENT,
		  NULL, NULL },
		/* words, not patterns */
		{ "distributions all", "Newsgroups: a.b\nDistribution: world", 0, DIST, NULL, NULL },
	};
#undef LN
	struct fg_config *c = one("distributions local,nyc");
	struct fg_feeds_decision d;

	run_fcases(k, FG_ARRAY_SIZE(k));
	ck_assert_int_eq(why1(c, "Newsgroups: a.b\nDistribution: world", 100, &d), DIST);
	ck_assert(value_is(d.item, "world"));
	/* a word that sends it: the refused ones before it are not its reason */
	ck_assert_int_eq(why1(c, "Newsgroups: a.b\nDistribution: world,local", 100, &d), SENT);
	ck_assert_ptr_null(d.item.ptr);
	fg_config_free(c);
}
END_TEST

/* Inclusive limits; then the order: newsgroups, distributions, sizes,
 * exclude-path. */
START_TEST(sizes_and_order)
{
#define MM "max-article-size 1000\nmin-article-size 500"
#define ALL "newsgroups comp.*\ndistributions local\nmax-article-size 10\nexclude-path a.example"
	static const struct fcase k[] = {
		{ MM, "Newsgroups: a.b", 1000, SENT, NULL, NULL },
		{ MM, "Newsgroups: a.b", 1001, FG_FEEDS_TOO_BIG, NULL, NULL },
		{ MM, "Newsgroups: a.b", 500, SENT, NULL, NULL },
		{ MM, "Newsgroups: a.b", 499, FG_FEEDS_TOO_SMALL, NULL, NULL },
		{ "", "Newsgroups: a.b", UINT64_MAX, SENT, NULL, NULL },
		{ ALL, "Newsgroups: alt.x\nDistribution: world", 0, NO_GROUP, NULL, NULL },
		{ ALL, "Newsgroups: comp.x\nDistribution: world", 0, DIST, NULL, NULL },
		{ ALL, "Newsgroups: comp.x\nDistribution: local", 0, FG_FEEDS_TOO_BIG, NULL, NULL },
		{ ALL, "Newsgroups: comp.x\nDistribution: local", 10, FG_FEEDS_EXCLUDED_PATH, NULL,
		  NULL },
	};
#undef MM
#undef ALL

	run_fcases(k, FG_ARRAY_SIZE(k));
}
END_TEST

START_TEST(exclude_path_whole_elements)
{
	struct fg_config *c = one("exclude-path spool.example other.example");
	struct fg_feeds_decision d;
	static const struct {
		const char *path;
		enum fg_feeds_why want;
	} cases[] = {
		{ "a.example!spool.example!not-for-mail", FG_FEEDS_EXCLUDED_PATH },
		{ "a.example!SPOOL.Example!x", FG_FEEDS_EXCLUDED_PATH },
		{ "a.example ! spool.example ! x", FG_FEEDS_EXCLUDED_PATH },	/* FWS */
		{ "a.example!myspool.example!x", FG_FEEDS_SENT },
		{ "a.example!spool.example.net!x", FG_FEEDS_SENT },
		{ "a.example!.SEEN.spool.example!x", FG_FEEDS_SENT },
		{ "a.example!other.example", FG_FEEDS_EXCLUDED_PATH },	/* the tail too */
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		struct art a;
		struct fg_feeds_set set;
		struct fg_feeds_decision dd[FG_FEEDS_MAX];

		snprintf(a.text, sizeof(a.text), "Path: %s\nNewsgroups: a.b\nFrom: x@y\n\nbody\n",
			 cases[i].path);
		fg_article_init(&a.scan, FG_ARTICLE_PLAIN);
		ck_assert_int_eq(fg_article_scan(&a.scan, a.text, strlen(a.text)),
				 FG_ARTICLE_COMPLETE);
		fg_feeds_select(c, &a.scan, 100, &set, dd);
		ck_assert_msg(dd[0].why == cases[i].want, "%s", cases[i].path);
		d = dd[0];
		if (d.why == FG_FEEDS_EXCLUDED_PATH)
			ck_assert(d.item.len > 0);
	}
	fg_config_free(c);
}
END_TEST

/* ------------------------------------------------------------ identities */

START_TEST(identifiers_are_stable)
{
	struct fg_config *a = load("[downstream one]\naddress 127.0.0.1:1\nnewsgroups a.*\n"
				   "[downstream two]\naddress 127.0.0.1:2\nnewsgroups b.*\n");
	struct fg_config *b = load("[downstream two]\naddress 127.0.0.1:2\nnewsgroups b.*\n"
				   "[downstream renamed]\nid one\naddress 127.0.0.1:1\n"
				   "newsgroups a.*\n");
	struct fg_feeds_set sa, sb;
	struct art x;

	/* FNV-1a 64 test vectors */
	ck_assert_uint_eq(fg_config_ident(""), UINT64_C(0xcbf29ce484222325));
	ck_assert_uint_eq(fg_config_ident("a"), UINT64_C(0xaf63dc4c8601ec8c));
	ck_assert_uint_eq(fg_config_ident("foobar"), UINT64_C(0x85944171f73967e8));
	ck_assert_str_eq(a->downstream[0].id, "one");
	ck_assert_str_eq(b->downstream[1].id, "one");
	ck_assert_uint_eq(a->downstream[0].ident, b->downstream[1].ident);
	/* reordered and renamed: the same route */
	fg_feeds_select(a, art_of(&x, "Newsgroups: a.x"), 10, &sa, NULL);
	fg_feeds_select(b, art_of(&x, "Newsgroups: a.x"), 10, &sb, NULL);
	ck_assert_int_eq(sa.n, 1);
	ck_assert_int_eq(sb.n, 1);
	ck_assert_uint_eq(sa.ident[0], sb.ident[0]);
	ck_assert(fg_feeds_has(&sb, fg_config_ident("one")));
	ck_assert(!fg_feeds_has(&sb, fg_config_ident("renamed")));
	ck_assert(!fg_feeds_has(&sb, fg_config_ident("two")));
	fg_config_free(a);
	fg_config_free(b);
}
END_TEST

START_TEST(set_all_and_bounds)
{
	struct fg_feeds_set s = { .all = true };

	ck_assert(fg_feeds_has(&s, 0));
	ck_assert(fg_feeds_has(&s, 12345));
	s = (struct fg_feeds_set){ .n = 200 };	/* a count past the array is not read past */
	ck_assert(!fg_feeds_has(&s, 1));
	ck_assert_str_eq(fg_feeds_why_name(FG_FEEDS_POISONED), "poisoned");
	ck_assert_ptr_null(fg_feeds_why_name(FG_FEEDS_WHY__COUNT));
	ck_assert_ptr_null(fg_feeds_why_help((enum fg_feeds_why)-1));
}
END_TEST

/* ------------------------------------------------------------ config */

START_TEST(keys_checked)
{
	struct fg_config *c;

	refused("[downstream a]\naddress 127.0.0.1:1\ndistributions lo*cal\n", "not a distribution");
	refused("[downstream a]\naddress 127.0.0.1:1\ndistributions !\n", "not a distribution");
	refused("[downstream a]\naddress 127.0.0.1:1\ndistributions a,,b\n", "empty distribution");
	refused("[downstream a]\naddress 127.0.0.1:1\nnewsgroups a.*,\n", "empty pattern");
	refused("[downstream a]\naddress 127.0.0.1:1\nexclude-path -bad\n", "not a path identity");
	refused("[downstream a]\naddress 127.0.0.1:1\nmax-article-size 10\nmin-article-size 11\n",
		"above max-article-size");
	refused("[downstream a]\naddress 127.0.0.1:1\n[downstream b]\nid a\naddress 127.0.0.1:2\n",
		"has the id");
	refused("[downstream a]\naddress 127.0.0.1:1\nid a/b\n", "an id is");
	/* lists: words and commas; "none" empties; repeated lines add */
	c = one("distributions local, nyc\ndistributions !world\nexclude-path x.example\n"
		"exclude-path y.example\nnewsgroups a.*\nnewsgroups !a.b");
	ck_assert_int_eq(c->downstream[0].n_distributions, 3);
	ck_assert_str_eq(c->downstream[0].distributions[2], "!world");
	ck_assert_int_eq(c->downstream[0].n_exclude_path, 2);
	ck_assert_str_eq(c->downstream[0].newsgroups, "a.*,!a.b");
	fg_config_free(c);
	c = one("distributions local\ndistributions none");
	ck_assert_int_eq(c->downstream[0].n_distributions, 0);
	fg_config_free(c);
	c = one("min-article-size 11");		/* no maximum: fine */
	ck_assert_uint_eq(c->downstream[0].min_article_size, 11);
	fg_config_free(c);
}
END_TEST

static Suite *feeds_suite(void)
{
	Suite *s = suite_create("feeds");
	TCase *t = tcase_create("inn");

	tcase_add_test(t, newsfeeds_examples);
	tcase_add_test(t, binaries_and_text_split);
	tcase_add_test(t, no_newsgroups_goes_nowhere);
	tcase_add_test(t, control_pseudo_groups);
	tcase_add_test(t, distribution_rules);
	tcase_add_test(t, sizes_and_order);
	tcase_add_test(t, exclude_path_whole_elements);
	tcase_add_test(t, identifiers_are_stable);
	tcase_add_test(t, set_all_and_bounds);
	tcase_add_test(t, keys_checked);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(feeds_suite)
