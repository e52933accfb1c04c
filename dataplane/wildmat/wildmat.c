/* SPDX-License-Identifier: MIT */
/*
 * wildmat.c — RFC 3977 4 wildmats with INN's "@" poison and the classic
 * "[...]" / "\" extensions (the syntax is in wildmat.h).
 *
 * Design. Patterns are matched in place, straight from the configured
 * string: no compilation step, no allocation, since this runs for every
 * group of every article offered in full. For a Newsgroups value the
 * pattern boundaries are found once (on the stack, up to 128 patterns;
 * longer lists take the plain left-to-right path) and the patterns are
 * tried from the right, stopping at the first match: the rightmost match
 * decides, so nothing to its left can change the answer. One pattern is
 * matched against one name by the iterative glob algorithm with a single
 * backtrack point:
 * on a mismatch, the most recent "*" swallows one more character and the
 * match resumes after it. Earlier stars never need revisiting (every other
 * item consumes exactly one character), so the cost is bounded by
 * pattern length x name length, whatever a hostile pattern or name holds.
 *
 * Characters are UTF-8 (RFC 3977 4.1 allows UTF8-non-ascii in wildmats):
 * "?" and classes consume a whole character. Literals are compared octet
 * by octet, which is exact for UTF-8 because it is a prefix-free code. An
 * invalid UTF-8 octet in a name is a character of its own that no class
 * range contains and only "?", "*" or the same literal octet match.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "floodgate/wildmat.h"

#define BAD_CP 0x110000u	/* above Unicode: the decode of an invalid octet */

/* Decode one UTF-8 character at s (< e). Returns its length (>= 1). */
static size_t utf8_decode(const unsigned char *s, const unsigned char *e, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		goto invalid;
	}
	if ((size_t)(e - s) < n)
		goto invalid;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto invalid;
		v = (v << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and values past U+10FFFF */
	if (v < min || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		goto invalid;
	*cp = v;
	return n;
invalid:
	*cp = BAD_CP;
	return 1;
}

/*
 * A class, starting just after its "[". Returns the position after the
 * closing "]" (NULL if there is none before pe) and whether `cp` is in it.
 * "^" first negates; "]" first is literal; "-" between two characters
 * makes a range, elsewhere it is literal; "\" is literal (INN uwildmat).
 */
static const char *class_match(const char *p, const char *pe, uint32_t cp, bool *hit)
{
	const unsigned char *u = (const unsigned char *)p, *ue = (const unsigned char *)pe;
	bool negate = false, in = false, first = true;
	uint32_t lo, hi;

	if (u < ue && *u == '^') {
		negate = true;
		u++;
	}
	while (u < ue && (*u != ']' || first)) {
		first = false;
		u += utf8_decode(u, ue, &lo);
		hi = lo;
		if (ue - u >= 2 && u[0] == '-' && u[1] != ']')
			u += 1 + utf8_decode(u + 1, ue, &hi);
		if (lo != BAD_CP && cp >= lo && cp <= hi)
			in = true;
	}
	if (u >= ue)
		return NULL;
	*hit = in != negate;
	return (const char *)u + 1;
}

/*
 * Match one item of the pattern at *pp against the character at *tp
 * (both before their ends); on success advance both past it.
 */
static bool item_match(const char **pp, const char *pe, const unsigned char **tp,
		       const unsigned char *te)
{
	const char *p = *pp;
	const unsigned char *t = *tp;
	uint32_t cp;
	size_t n;
	bool hit = false;

	switch (*p) {
	case '?':
		*tp = t + utf8_decode(t, te, &cp);
		*pp = p + 1;
		return true;
	case '[':
		n = utf8_decode(t, te, &cp);
		p = class_match(p + 1, pe, cp, &hit);
		if (!p || !hit)
			return false;
		*tp = t + n;
		*pp = p;
		return true;
	case '\\':
		if (++p == pe)
			return false;
		/* the escaped octet is a literal */
		__attribute__((fallthrough));
	default:
		if ((unsigned char)*p != *t)
			return false;
		*tp = t + 1;
		*pp = p + 1;
		return true;
	}
}

/* One pattern [p, pe) against the whole name [t, te). */
static bool pattern_match(const char *p, const char *pe, const unsigned char *t,
			  const unsigned char *te)
{
	const char *star_p = NULL;
	const unsigned char *star_t = NULL;
	uint32_t cp;

	for (;;) {
		if (p < pe && *p == '*') {
			while (p < pe && *p == '*')
				p++;
			if (p == pe)
				return true;
			star_p = p;
			star_t = t;
			continue;
		}
		/* Out of name: only a finished pattern matches; a longer star
		 * could only leave less name for the same items. */
		if (t == te)
			return p == pe;
		if (p < pe && item_match(&p, pe, &t, te))
			continue;
		if (!star_p)
			return false;
		star_t += utf8_decode(star_t, te, &cp);
		t = star_t;
		p = star_p;
	}
}

/* End of the pattern starting at p: the next "," outside a class and not
 * escaped, or the terminating NUL. */
static const char *pattern_end(const char *p)
{
	while (*p && *p != ',') {
		if (*p == '\\' && p[1]) {
			p += 2;
		} else if (*p == '[') {
			const char *q = p + 1;

			if (*q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']')
				q++;
			p = *q ? q + 1 : q;
		} else {
			p++;
		}
	}
	return p;
}

enum fg_wildmat_result fg_wildmat_eval(const char *pattern, const char *name,
				       size_t len)
{
	const unsigned char *t = (const unsigned char *)name;
	enum fg_wildmat_result res = FG_WILDMAT_NONE, on_match;
	const char *p = pattern, *pe;

	for (;;) {
		on_match = FG_WILDMAT_MATCH;
		if (*p == '!') {
			on_match = FG_WILDMAT_NONE;
			p++;
		} else if (*p == '@') {
			on_match = FG_WILDMAT_POISON;
			p++;
		}
		pe = pattern_end(p);
		/* RFC 3977 4.2: the rightmost matching pattern decides */
		if (pattern_match(p, pe, t, t + len))
			res = on_match;
		if (*pe == '\0')
			break;
		p = pe + 1;
	}
	return res;
}

enum fg_wildmat_result fg_wildmat_eval_where(const char *pattern, const char *name, size_t len,
					     size_t *at, size_t *at_len)
{
	const unsigned char *t = (const unsigned char *)name;
	enum fg_wildmat_result res = FG_WILDMAT_NONE, on_match;
	const char *p = pattern, *pe, *start;

	*at = *at_len = 0;
	for (;;) {
		start = p;
		on_match = FG_WILDMAT_MATCH;
		if (*p == '!' || *p == '@')
			on_match = *p++ == '!' ? FG_WILDMAT_NONE : FG_WILDMAT_POISON;
		pe = pattern_end(p);
		if (pattern_match(p, pe, t, t + len)) {
			res = on_match;
			*at = (size_t)(start - pattern);
			*at_len = (size_t)(pe - start);
		}
		if (*pe == '\0')
			break;
		p = pe + 1;
	}
	return res;
}

bool fg_wildmat_match(const char *pattern, const char *name)
{
	return fg_wildmat_eval(pattern, name, strlen(name)) == FG_WILDMAT_MATCH;
}

static bool is_group_sep(char c)
{
	/* RFC 5536 3.1.4: names separated by "," with FWS around them */
	return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One pattern of a list, located once per Newsgroups value. */
struct span {
	uint16_t start, end;
	uint8_t on_match;	/* enum fg_wildmat_result */
};

#define MAX_SPANS 128

/* Locate every pattern; their count, or 0 when the list does not fit. */
static unsigned split_patterns(const char *pattern, struct span *sp)
{
	const char *p = pattern, *pe;
	unsigned n = 0;

	for (;;) {
		if (n == MAX_SPANS)
			return 0;
		sp[n].on_match = FG_WILDMAT_MATCH;
		if (*p == '!' || *p == '@')
			sp[n].on_match = *p++ == '!' ? FG_WILDMAT_NONE : FG_WILDMAT_POISON;
		pe = pattern_end(p);
		if (pe - pattern > UINT16_MAX)
			return 0;
		sp[n].start = (uint16_t)(p - pattern);
		sp[n].end = (uint16_t)(pe - pattern);
		n++;
		if (*pe == '\0')
			return n;
		p = pe + 1;
	}
}

/* Rightmost first: the first pattern that matches decides (RFC 3977 4.2). */
static enum fg_wildmat_result eval_spans(const char *pattern, const struct span *sp,
					 unsigned n, const char *name, size_t len)
{
	const unsigned char *t = (const unsigned char *)name;

	while (n--)
		if (pattern_match(pattern + sp[n].start, pattern + sp[n].end, t, t + len))
			return (enum fg_wildmat_result)sp[n].on_match;
	return FG_WILDMAT_NONE;
}

enum fg_wildmat_result fg_wildmat_groups(const char *pattern, const char *groups,
					 size_t len)
{
	enum fg_wildmat_result res = FG_WILDMAT_NONE, r;
	const char *g = groups, *end = groups + len, *name;
	struct span sp[MAX_SPANS];
	unsigned n = split_patterns(pattern, sp);

	while (g < end) {
		while (g < end && is_group_sep(*g))
			g++;
		if (g == end)
			break;
		name = g;
		while (g < end && !is_group_sep(*g))
			g++;
		r = n ? eval_spans(pattern, sp, n, name, (size_t)(g - name)) :
			fg_wildmat_eval(pattern, name, (size_t)(g - name));
		/* INN newsfeeds "@": one poisoned group refuses the article */
		if (r == FG_WILDMAT_POISON)
			return r;
		if (r == FG_WILDMAT_MATCH)
			res = r;
	}
	return res;
}

/* ---------------------------------------------------------------- check */

/* The class at p (just after "["): its end after "]", or NULL with *why. */
static const char *class_check(const char *p, const char **err, const char **why)
{
	const unsigned char *u = (const unsigned char *)p, *ue = u + strlen(p);
	const unsigned char *at;
	bool first = true;
	uint32_t lo, hi;

	if (*u == '^')
		u++;
	while (u < ue && (*u != ']' || first)) {
		first = false;
		at = u;
		if (*u < 0x21 || *u == 0x7f)
			goto bad_char;
		u += utf8_decode(u, ue, &lo);
		if (lo == BAD_CP)
			goto bad_utf8;
		if (ue - u >= 2 && u[0] == '-' && u[1] != ']') {
			at = u + 1;
			if (*at < 0x21 || *at == 0x7f)
				goto bad_char;
			u += 1 + utf8_decode(u + 1, ue, &hi);
			if (hi == BAD_CP)
				goto bad_utf8;
			if (hi < lo) {
				*err = (const char *)at;
				*why = "reversed range in character class";
				return NULL;
			}
		}
	}
	if (u >= ue) {
		*err = p - 1;
		*why = "unterminated character class (missing \"]\")";
		return NULL;
	}
	return (const char *)u + 1;
bad_char:
	*err = (const char *)at;
	*why = "blank or control character in character class";
	return NULL;
bad_utf8:
	*err = (const char *)at;
	*why = "invalid UTF-8 in character class";
	return NULL;
}

/* One pattern from p (after any prefix) to its "," or NUL. */
static const char *pattern_check(const char *p, const char **err, const char **why)
{
	const unsigned char *u;
	uint32_t cp;

	if (*p == '\0' || *p == ',') {
		*err = p;
		*why = "empty pattern";
		return NULL;
	}
	while (*p && *p != ',') {
		u = (const unsigned char *)p;
		*err = p;
		if (*u <= 0x20 || *u == 0x7f) {
			*why = "blank or control character in pattern";
			return NULL;
		}
		switch (*p) {
		case '[':
			p = class_check(p + 1, err, why);
			if (!p)
				return NULL;
			continue;
		case ']':
			*why = "\"]\" without \"[\" (escape it as \\])";
			return NULL;
		case '!':
			*why = "\"!\" only negates a whole pattern (escape it as \\!)";
			return NULL;
		case '\\':
			if (p[1] == '\0') {
				*why = "trailing \"\\\"";
				return NULL;
			}
			p++;
			u++;
			if (*u <= 0x20 || *u == 0x7f) {
				*err = p;
				*why = "blank or control character in pattern";
				return NULL;
			}
			break;
		}
		u = (const unsigned char *)p;
		p += utf8_decode(u, u + strlen(p), &cp);
		if (cp == BAD_CP) {
			*why = "invalid UTF-8 in pattern";
			return NULL;
		}
	}
	return p;
}

int fg_wildmat_check(const char *pattern, size_t *err_off, const char **why)
{
	const char *p = pattern, *err = pattern;

	*err_off = 0;
	*why = NULL;
	for (;;) {
		if (*p == '!' || *p == '@') {
			if (p[1] == '!' || p[1] == '@') {
				err = p + 1;
				*why = "\"!\" and \"@\" cannot be combined";
				goto invalid;
			}
			p++;
		}
		p = pattern_check(p, &err, why);
		if (!p)
			goto invalid;
		if (*p == '\0')
			return 0;
		p++;	/* the "," */
	}
invalid:
	*err_off = (size_t)(err - pattern);
	return -EINVAL;
}
