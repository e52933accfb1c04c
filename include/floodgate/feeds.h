/* SPDX-License-Identifier: MIT */
/*
 * feeds.h — which downstreams an accepted article goes to: each
 * `[downstream NAME]`'s own feed, with the semantics of INN's newsfeeds(5)
 * and innd(8).
 *
 * The decision is made once, when the article is queued (the engine, at
 * the accept), and stored with the queue record as a set of downstream
 * identifiers (fg_config_ident of each downstream's `id`, not its place
 * in the file): a reload never re-judges what is queued, and renaming or
 * reordering sections cannot send an article somewhere it was not meant
 * for. docs/relay.md, "Downstream feeds", is the operator's page.
 *
 * For one downstream, in this order (the first that refuses decides):
 *   1. newsgroups: every group of the Newsgroups header is matched against
 *      the downstream's wildmat; for each group the last matching pattern
 *      decides (RFC 3977 4.2): plain selects, "!" does not, "@" poisons.
 *      A control article (a Control header) also brings its pseudo-group
 *      `control.<verb>` (innd(8) "CONTROL MESSAGES"); when no pattern
 *      matches that name at all, `control` stands for it (innd files a
 *      control article in control.<verb> when that group exists, else in
 *      control; floodgate has no active file and takes a pattern naming
 *      control.<verb> as the sign that the site has it). The article is
 *      sent when a group is selected and none of the article's own groups
 *      is poisoned (newsfeeds(5); innd's art.c poisons by the Newsgroups
 *      groups only, so an "@" deciding for the pseudo-group only leaves it
 *      unselected).
 *   2. distributions: when both the article (Distribution, comma-separated
 *      words) and the downstream have some, each of the article's words
 *      is judged by newsfeeds(5)'s four rules: listed -> sent; listed with
 *      "!" -> not sent; not listed -> sent only when the list has a "!"
 *      entry. Sent when any word says sent. Words compare ignoring case.
 *   3. max-article-size / min-article-size: the article's octets in wire
 *      form (the size the rules compare with [rules] max-article-size)
 *      above the maximum or below the minimum: not sent (both inclusive).
 *   4. exclude-path: one of these identities is an element of Path (the
 *      downstream, or a server it feeds, has the article): not sent.
 *      Elements compare whole and ignoring case, as innd does.
 * Not carried over from innd: the obsolete ".ctl" group suffix and the
 * "to.<site>" groups; groups missing from an active file (floodgate has
 * none: every group named in Newsgroups counts).
 *
 * Costs: no allocation; per downstream, O(groups x pattern) for the
 * newsgroups and one pass over Distribution and Path when it has such
 * keys. The engine calls it once per accepted article.
 */
#ifndef FLOODGATE_FEEDS_H
#define FLOODGATE_FEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/article.h"
#include "floodgate/config.h"

#define FG_FEEDS_MAX FG_CONFIG_MAX_DOWNSTREAMS

/* The downstreams an article goes to, as a queue record stores them. */
struct fg_feeds_set {
	bool all;			/* every downstream: a version-1 queue record,
					 * or a sink user that does not route */
	uint8_t n;
	uint64_t ident[FG_FEEDS_MAX];	/* fg_config_ident of each one's id */
};

/* Why one downstream gets an article or not. */
#define FG_FEEDS_WHY_TABLE(X)                                                              \
	X(SENT, "sent", "a group is selected and none is poisoned")                        \
	X(NO_GROUP, "no-group", "no group of the article is selected")                     \
	X(POISONED, "poisoned", "a group matches an \"@\" pattern")                        \
	X(DISTRIBUTION, "distribution", "its distributions refuse the article's")          \
	X(TOO_BIG, "too-big", "larger than its max-article-size")                          \
	X(TOO_SMALL, "too-small", "smaller than its min-article-size")                     \
	X(EXCLUDED_PATH, "excluded-path", "an exclude-path identity is in Path")

enum fg_feeds_why {
#define FG_FEEDS_WHY_ENUM(e, n, h) FG_FEEDS_##e,
	FG_FEEDS_WHY_TABLE(FG_FEEDS_WHY_ENUM)
#undef FG_FEEDS_WHY_ENUM
	FG_FEEDS_WHY__COUNT
};

/* One downstream's decision, for `floodctl explain`. Values point into
 * the article's buffer (group, item) or the config (pattern); NULL when
 * there is nothing to show. When the control pseudo-group decided, group
 * is NULL and `pseudo` holds its name: fg_feeds_group gives either. */
struct fg_feeds_decision {
	enum fg_feeds_why why;
	struct fg_article_value group;	/* the article's group that decided */
	struct fg_article_value pattern;	/* the pattern that decided, "!"/"@" included */
	struct fg_article_value item;	/* the distribution word or Path element */
	char pseudo[FG_CONFIG_NAME_MAX + 8];	/* "control.<verb>" or "control" that decided */
};

/* The group that decided: the article's, or the pseudo-group's name in d
 * itself (valid while d is). */
static inline struct fg_article_value fg_feeds_group(const struct fg_feeds_decision *d)
{
	struct fg_article_value v = d->group;

	if (!v.ptr && d->pseudo[0]) {
		v.ptr = d->pseudo;
		for (v.len = 0; d->pseudo[v.len]; v.len++)
			;
	}
	return v;
}

/*
 * Decide every downstream of cfg for an article (its finished header
 * scan, its wire-form size): *out gets the identifiers of those it goes
 * to, in configuration order. `why` (may be NULL) gets cfg->n_downstream
 * decisions. Returns the number of downstreams selected.
 */
unsigned fg_feeds_select(const struct fg_config *cfg, const struct fg_article *art,
			 uint64_t size, struct fg_feeds_set *out, struct fg_feeds_decision *why);

/* Does the set include the downstream with this identifier? */
bool fg_feeds_has(const struct fg_feeds_set *s, uint64_t ident);

/* "sent", "poisoned", ...; a sentence for people. NULL out of range. */
const char *fg_feeds_why_name(enum fg_feeds_why w);
const char *fg_feeds_why_help(enum fg_feeds_why w);

#endif /* FLOODGATE_FEEDS_H */
