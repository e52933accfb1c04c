/* SPDX-License-Identifier: MIT */
/*
 * test_wildmat.c — RFC 3977 4.4's examples, INN's "@" poison, the class
 * and escape extensions, Newsgroups header values, the syntax check, and
 * agreement with INN's own uwildmat_poison() on random valid patterns.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/wildmat.h"
#include "fgtest.h"

struct mcase {
	const char *pattern, *name;
	enum fg_wildmat_result want;
};

#define M FG_WILDMAT_MATCH
#define N FG_WILDMAT_NONE
#define P FG_WILDMAT_POISON

static void run_cases(const struct mcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t off;
		const char *why;

		ck_assert_msg(fg_wildmat_check(c[i].pattern, &off, &why) == 0,
			      "pattern %s refused: %s", c[i].pattern, why);
		ck_assert_msg(fg_wildmat_eval(c[i].pattern, c[i].name, strlen(c[i].name)) ==
			      c[i].want, "pattern \"%s\" name \"%s\": want %d", c[i].pattern,
			      c[i].name, c[i].want);
		ck_assert(fg_wildmat_match(c[i].pattern, c[i].name) == (c[i].want == M));
	}
}

/* RFC 3977 4.4; "\xc2\xa3" is the pound sign, one UTF-8 character. */
START_TEST(test_rfc3977_examples)
{
	static const struct mcase c[] = {
		{ "abc", "abc", M }, { "abc", "abcd", N }, { "abc", "ab", N },
		{ "abc,def", "abc", M }, { "abc,def", "def", M }, { "abc,def", "abcdef", N },
		{ "\xc2\xa3", "\xc2\xa3", M }, { "\xc2\xa3", "\xc2", N },
		{ "a*", "a", M }, { "a*", "abc", M }, { "a*", "ba", N },
		{ "a*b", "ab", M }, { "a*b", "axxb", M }, { "a*b", "axxbc", N },
		{ "a*,*b", "ax", M }, { "a*,*b", "xb", M }, { "a*,*b", "xx", N },
		{ "a*,!*b", "ax", M }, { "a*,!*b", "axb", N }, { "a*,!*b", "xb", N },
		{ "a*,!*b,c*", "axb", N }, { "a*,!*b,c*", "cxb", M }, { "a*,!*b,c*", "ax", M },
		{ "a*,c*,!*b", "ax", M }, { "a*,c*,!*b", "cx", M }, { "a*,c*,!*b", "cxb", N },
		{ "?a*", "ba", M }, { "?a*", "bax", M }, { "?a*", "a", N }, { "?a*", "aba", N },
		{ "?a*", "\xc2\xa3" "abc", M },	/* "?" is one character, two octets */
		{ "??a*", "xya", M }, { "??a*", "xa", N }, { "??a*", "\xc2\xa3\xc2\xa3" "a", M },
		{ "*a?", "xab", M }, { "*a?", "xa", N }, { "*a?", "a\xc2\xa3", M },
		{ "*a??", "abc", M }, { "*a??", "ab", N }, { "*a??", "xxa\xc2\xa3z", M },
	};

	run_cases(c, FG_ARRAY_SIZE(c));
}
END_TEST

START_TEST(test_stars_and_anchoring)
{
	static const struct mcase c[] = {
		{ "*", "", M }, { "*", "comp.lang.c", M }, { "?", "", N }, { "**", "", M },
		{ "a**b", "ab", M }, { "*.c", "comp.lang.c", M }, { "*.c", "comp.lang.cc", N },
		{ "comp.*.c", "comp.lang.c", M }, { "comp.*.c", "comp.c", N },
		{ "*ab", "abab", M }, { "*aab", "aaab", M }, { "*a*b*c", "xaxbxc", M },
		{ "*a*b*c", "xaxcxb", N }, { "a*a*a", "aa", N }, { "a*a*a", "aaa", M },
		{ "Comp.*", "comp.lang", N },	/* case-sensitive */
	};

	run_cases(c, FG_ARRAY_SIZE(c));
}
END_TEST

START_TEST(test_classes_and_escapes)
{
	static const struct mcase c[] = {
		{ "[abc]", "b", M }, { "[abc]", "d", N }, { "[a-c]x", "bx", M },
		{ "[a-c]", "", N }, { "[^a-c]", "d", M }, { "[^a-c]", "b", N },
		{ "[^a-c]", "", N },
		{ "[^]-]", "x", M }, { "[^]-]", "]", N }, { "[^]-]", "-", N },	/* the classic */
		{ "[]]", "]", M }, { "[]a]", "a", M }, { "[-a]", "-", M }, { "[a-]", "-", M },
		{ "[0-9a-zA-Z]", "Q", M }, { "[0-9a-zA-Z]", "_", N },
		{ "[,]", ",", M }, { "x[,]y,z", "x,y", M }, { "x[,]y,z", "z", M },
		{ "[\\]", "\\", M },	/* "\" is literal inside a class */
		{ "[\xc3\xa0-\xc3\xbf]", "\xc3\xa9", M }, { "[\xc3\xa0-\xc3\xbf]", "e", N },
		{ "[^a]", "\xc3\xa9", M },	/* a negated class takes a whole character */
		{ "a\\*b", "a*b", M }, { "a\\*b", "axb", N }, { "a\\?", "a?", M },
		{ "a\\?", "ab", N }, { "\\[x\\]", "[x]", M }, { "a\\,b", "a,b", M },
		{ "a\\,b", "a", N }, { "\\\\", "\\", M }, { "\\!x", "!x", M },
		{ "\\\xc2\xa3", "\xc2\xa3", M },
		{ "?", "\xff", M }, { "a?b", "a\xff\x41" "b", N }, { "a??b", "a\xff\x41" "b", M },	/* invalid UTF-8: one octet each */
		{ "\xff", "\xff", N },	/* invalid in a pattern is refused: see below */
	};

	/* the last case holds invalid UTF-8: check it apart from run_cases */
	run_cases(c, FG_ARRAY_SIZE(c) - 1);
	ck_assert_int_eq(fg_wildmat_eval("a\\", "a", 1), N);	/* invalid, safe */
	ck_assert_int_eq(fg_wildmat_eval("[a-", "a", 1), N);
	ck_assert_int_eq(fg_wildmat_eval("[a-,b", "b", 1), N);	/* class eats the comma */
}
END_TEST

START_TEST(test_negation_and_poison)
{
	static const struct mcase c[] = {
		{ "*,!junk", "junk", N }, { "*,!junk", "junkx", M },
		{ "!junk", "misc", N },	/* a leading "!" can only ever unmatch */
		{ "*,@alt.binaries.*", "alt.binaries.x", P },
		{ "*,@alt.binaries.*", "alt.test", M },
		{ "*,@alt.*,alt.ok", "alt.ok", M },	/* the rightmost decides */
		{ "*,@alt.*,!alt.ok", "alt.ok", N }, { "*,@alt.*,!alt.ok", "alt.bad", P },
		{ "@a*", "a", P }, { "@a*", "b", N },
	};

	run_cases(c, FG_ARRAY_SIZE(c));
}
END_TEST

START_TEST(test_not_nul_terminated)
{
	static const char name[] = "comp.lang.cXYZ";

	ck_assert_int_eq(fg_wildmat_eval("comp.lang.c", name, 11), M);
	ck_assert_int_eq(fg_wildmat_eval("comp.lang.c*", name, 11), M);
	ck_assert_int_eq(fg_wildmat_eval("*X*", name, 11), N);
	ck_assert_int_eq(fg_wildmat_eval("comp.lang.?", name, 10), N);
	ck_assert_int_eq(fg_wildmat_eval("*", name, 0), M);
	/* a truncated multi-octet character is one invalid octet, no overread */
	ck_assert_int_eq(fg_wildmat_eval("a?", "a\xc3\xa9", 2), M);
	ck_assert_int_eq(fg_wildmat_eval("a[\xc3\xa0-\xc3\xbf]", "a\xc3\xa9", 2), N);
}
END_TEST

START_TEST(test_groups_header)
{
	static const char folded[] = "alt.test,\r\n\tcomp.lang.c , misc.test";
	const char *pat = "comp.*,misc.*,@alt.binaries.*";

	ck_assert_int_eq(fg_wildmat_groups(pat, folded, strlen(folded)), M);
	ck_assert_int_eq(fg_wildmat_groups("alt.*", "comp.x, misc.y", 14), N);
	ck_assert_int_eq(fg_wildmat_groups(pat, "misc.a,alt.binaries.b", 21), P);
	ck_assert_int_eq(fg_wildmat_groups(pat, "alt.binaries.b,misc.a", 21), P);
	ck_assert_int_eq(fg_wildmat_groups("*", "", 0), N);
	ck_assert_int_eq(fg_wildmat_groups("*", " , ,\r\n ", 7), N);
	ck_assert_int_eq(fg_wildmat_groups("*", ",,a,,", 5), M);
	/* "!" excludes one group, not the article: another group still matches */
	ck_assert_int_eq(fg_wildmat_groups("*,!junk", "junk,misc.test", 14), M);
	ck_assert_int_eq(fg_wildmat_groups("*,!junk", "junk", 4), N);
	/* more patterns than the per-value index holds: the plain path, same answers */
	{
		char many[2048] = "*";

		for (int i = 0; i < 200; i++)
			snprintf(many + strlen(many), sizeof(many) - strlen(many), ",!g%d", i);
		strcat(many, ",@g7,g150");
		ck_assert_int_eq(fg_wildmat_groups(many, "g150,g3", 7), M);
		ck_assert_int_eq(fg_wildmat_groups(many, "g3,g4", 5), N);
		ck_assert_int_eq(fg_wildmat_groups(many, "g3,g7", 5), P);
		ck_assert_int_eq(fg_wildmat_groups(many, "g3,g777", 7), M);
	}
	/* only len octets are read */
	ck_assert_int_eq(fg_wildmat_groups("misc.test", "misc.testing", 9), M);
	ck_assert_int_eq(fg_wildmat_groups("comp.*", "misc.a,comp.b", 6), N);
}
END_TEST

/* A star-heavy pattern and a long name: the single-backtrack matcher is
 * quadratic at worst; an exponential one would not finish this test. */
START_TEST(test_pathological)
{
	char name[4097], pat[200] = "";

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(pat, "*a");
	strcat(pat, "*b");
	ck_assert_int_eq(fg_wildmat_eval(pat, name, strlen(name)), N);
	pat[strlen(pat) - 1] = 'a';
	ck_assert_int_eq(fg_wildmat_eval(pat, name, strlen(name)), M);
}
END_TEST

struct bad {
	const char *pattern;
	size_t off;
	const char *why_part;
};

START_TEST(test_check)
{
	static const char *const good[] = {
		"*", "comp.*,!comp.test", "*,!junk,@alt.binaries.*", "[a-z]*", "[]]", "[^]-]",
		"a\\*b", "a\\!", "\\]", "\xc2\xa3*", "[\xc3\xa0-\xc3\xbf]", "!a", "@a",
		"x[,]y", "#foo", "a@b",
	};
	static const struct bad bad[] = {
		{ "", 0, "empty pattern" }, { "a,,b", 2, "empty pattern" },
		{ "a,", 2, "empty pattern" }, { ",a", 0, "empty pattern" },
		{ "!", 1, "empty pattern" }, { "a,@", 3, "empty pattern" },
		{ "!@a", 1, "cannot be combined" }, { "@!a", 1, "cannot be combined" },
		{ "[a-", 0, "unterminated" }, { "x,[abc", 2, "unterminated" },
		{ "[z-a]", 3, "reversed range" }, { "a\\", 1, "trailing" },
		{ "a]", 1, "without \"[\"" }, { "\\[x]", 3, "without \"[\"" }, { "a!b", 1, "only negates" },
		{ "a b", 1, "blank" }, { "a\tb", 1, "blank" }, { "a\x01", 1, "control" },
		{ "\xff", 0, "UTF-8" }, { "a\xc3", 1, "UTF-8" }, { "\xc0\xaf", 0, "UTF-8" },
		{ "[\xff]", 1, "UTF-8" }, { "[a b]", 2, "blank" }, { "\\ ", 1, "blank" },
		{ "\xed\xa0\x80", 0, "UTF-8" },	/* a UTF-16 surrogate */
	};
	size_t off;
	const char *why;

	for (size_t i = 0; i < FG_ARRAY_SIZE(good); i++)
		ck_assert_msg(fg_wildmat_check(good[i], &off, &why) == 0, "%s: %s at %zu",
			      good[i], why, off);
	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++) {
		ck_assert_msg(fg_wildmat_check(bad[i].pattern, &off, &why) == -EINVAL,
			      "accepted \"%s\"", bad[i].pattern);
		ck_assert_msg(off == bad[i].off, "\"%s\": offset %zu, want %zu",
			      bad[i].pattern, off, bad[i].off);
		ck_assert_msg(strstr(why, bad[i].why_part), "\"%s\": %s", bad[i].pattern, why);
	}
}
END_TEST

/* INN's libinn: enum uwildmat { UWILDMAT_FAIL, UWILDMAT_MATCH, UWILDMAT_POISON } */
typedef int inn_poison_fn(const char *text, const char *pat);

static inn_poison_fn *inn_uwildmat_poison(void)
{
	static const char *const libs[] = { "libinn.so.9", "/usr/lib/news/libinn.so.9",
					    "/usr/lib/news/libinn.so" };
	void *h = NULL;

	for (size_t i = 0; i < FG_ARRAY_SIZE(libs) && !h; i++)
		h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "INN's libinn.so not found (tools/deps.sh installs inn2)");
	return (inn_poison_fn *)(uintptr_t)dlsym(h, "uwildmat_poison");
}

static uint64_t rng_state = 42;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rng_state >> 33) % n;
}

static void random_string(char *out, unsigned max, const char *const *alphabet, unsigned n)
{
	unsigned len = rnd(max);

	out[0] = '\0';
	for (unsigned i = 0; i < len; i++)
		strcat(out, alphabet[rnd(n)]);
}

/* Same answers as INN on every valid pattern: generated from the syntax's
 * special characters and a few literals, including a UTF-8 one. */
START_TEST(test_inn_agrees)
{
	static const char *const pat_alpha[] = {
		"a", "b", ".", "*", "?", "[", "]", "^", "-", "\\", ",", "!", "@", "\xc3\xa9",
	};
	static const char *const txt_alpha[] = {
		"a", "b", "c", ".", "-", "]", "^", "\\", "!", "\xc3\xa9", "\xc2\xa3",
	};
	inn_poison_fn *inn = inn_uwildmat_poison();
	char pat[64], txt[64];
	unsigned compared = 0;
	size_t off;
	const char *why;

	ck_assert_ptr_nonnull(inn);
	for (unsigned i = 0; i < 400000; i++) {
		random_string(pat, 8, pat_alpha, FG_ARRAY_SIZE(pat_alpha));
		/* INN reads a class after an escaped "[" when it looks for the
		 * next ",": "\[x,*" does not match "x" there (docs/configuration.md) */
		if (fg_wildmat_check(pat, &off, &why) < 0 || strstr(pat, "\\["))
			continue;
		random_string(txt, 7, txt_alpha, FG_ARRAY_SIZE(txt_alpha));
		ck_assert_msg((int)fg_wildmat_eval(pat, txt, strlen(txt)) == inn(txt, pat),
			      "pattern \"%s\" text \"%s\": floodgate %d, INN %d", pat, txt,
			      fg_wildmat_eval(pat, txt, strlen(txt)), inn(txt, pat));
		/* a value of one group takes the right-to-left path: same answer */
		if (*txt && !strpbrk(txt, ", "))
			ck_assert_int_eq((int)fg_wildmat_groups(pat, txt, strlen(txt)),
					 inn(txt, pat));
		compared++;
	}
	ck_assert_uint_gt(compared, 20000);
}
END_TEST

static Suite *wildmat_suite(void)
{
	Suite *s = suite_create("wildmat");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rfc3977_examples);
	tcase_add_test(tc, test_stars_and_anchoring);
	tcase_add_test(tc, test_classes_and_escapes);
	tcase_add_test(tc, test_negation_and_poison);
	tcase_add_test(tc, test_not_nul_terminated);
	tcase_add_test(tc, test_groups_header);
	tcase_add_test(tc, test_pathological);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_inn_agrees);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(wildmat_suite)
