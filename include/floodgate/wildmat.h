/* SPDX-License-Identifier: MIT */
/*
 * wildmat.h — RFC 3977 section 4 wildmat matching of newsgroup names.
 *
 * A wildmat is a list of patterns separated by ",". Each pattern may be
 * prefixed by "!" (negation) or, as in INN's newsfeeds, "@" (poison). A
 * name is tested against every pattern; the rightmost pattern that matches
 * decides (RFC 3977 4.2): plain -> match, "!" -> no match, "@" -> poison.
 * When no pattern matches, the name does not match.
 *
 * Inside a pattern (RFC 3977 4.1, plus the classic wildmat extensions that
 * INN's uwildmat keeps):
 *   *        any sequence of zero or more characters
 *   ?        exactly one character (a UTF-8 character, not an octet)
 *   [...]    one character of a class: ranges "a-z", "^" first negates,
 *            "]" first and "-" first or last are literal; "\" is literal
 *            inside a class
 *   \x       x literally (to match "*", "?", "[", "]", ",", "!" or "\")
 * Matching is case-sensitive and anchored at both ends.
 *
 * fg_wildmat_groups() answers the per-article question "is this article
 * wanted?" for a whole Newsgroups header value (RFC 5536 3.1.4): wanted if
 * at least one of its groups matches, unless any group is poisoned. Like
 * every function here it allocates nothing and runs in O(pattern x name)
 * time per name (one backtrack point per "*", never exponential).
 *
 * Patterns are validated once (fg_wildmat_check, at config load); matching
 * an invalid pattern is safe but its unparsable parts match nothing.
 */
#ifndef FLOODGATE_WILDMAT_H
#define FLOODGATE_WILDMAT_H

#include <stdbool.h>
#include <stddef.h>

enum fg_wildmat_result {
	FG_WILDMAT_NONE = 0,	/* no pattern matched, or a "!" pattern decided */
	FG_WILDMAT_MATCH = 1,	/* a plain pattern decided */
	FG_WILDMAT_POISON = 2,	/* an "@" pattern decided */
};

/*
 * Syntax check: 0, or -EINVAL with *err_off set to the offending octet's
 * offset in `pattern` and *why to a static explanation. Refused: an empty
 * wildmat or empty pattern ("a,,b", trailing ","), a bare "!" or "@",
 * "!@", an unterminated class, a reversed range ("[z-a]"), a trailing
 * "\", a "]" or "!" that is not escaped, blanks, control characters and
 * invalid UTF-8.
 */
int fg_wildmat_check(const char *pattern, size_t *err_off, const char **why);

/* The whole pattern list against one name of `len` octets (no NUL needed). */
enum fg_wildmat_result fg_wildmat_eval(const char *pattern, const char *name,
				       size_t len);

/* As fg_wildmat_eval, and which pattern decided: *at and *at_len span it
 * in `pattern`, its "!" or "@" included; *at_len is 0 when none matched
 * (FG_WILDMAT_NONE because nothing matched, not because a "!" did). */
enum fg_wildmat_result fg_wildmat_eval_where(const char *pattern, const char *name, size_t len,
					     size_t *at, size_t *at_len);

/* True when the NUL-terminated `name` matches (poison counts as no match). */
bool fg_wildmat_match(const char *pattern, const char *name);

/*
 * A Newsgroups header value (`len` octets: names separated by ",", with
 * blanks, tabs and CRLF folding allowed around them, RFC 5536 3.1.4):
 * FG_WILDMAT_POISON if any group's result is poison, else FG_WILDMAT_MATCH
 * if any group matches, else FG_WILDMAT_NONE (also for an empty value).
 */
enum fg_wildmat_result fg_wildmat_groups(const char *pattern, const char *groups,
					 size_t len);

#endif /* FLOODGATE_WILDMAT_H */
