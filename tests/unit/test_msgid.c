/* SPDX-License-Identifier: MIT */
/*
 * test_msgid.c — Message-ID forms, errors, boundaries, every octet in every
 * position class, quoted locals and literals, the vector pass against the
 * DFA, and the $v=N convention (seed 000) with its successor rule.
 *
 * The octet tests use an oracle written from the RFC text (character sets
 * spelled out as strings), not the module's tables. Every input is copied
 * into a heap buffer of exactly its length, so ASan catches any overread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/msgid.h"
#include "../../dataplane/msgid/msgid_int.h"
#include "fgtest.h"

/* Exactly-sized copies, freed at the end of each test. */
static char *dup_exact(const char *s, size_t len)
{
	char *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	memcpy(p, s, len);
	return p;
}

static enum fg_msgid_form classify_n(const char *s, size_t len, enum fg_msgid_error *why)
{
	char *p = dup_exact(s, len);
	enum fg_msgid_form f = fg_msgid_classify(p, len, why);

	ck_assert_int_eq(fg_msgid_valid_wire(p, len), f != FG_MSGID_INVALID);
	ck_assert_int_eq(fg_msgid_valid_header(p, len), f == FG_MSGID_HEADER);
	free(p);
	return f;
}

static void expect(const char *s, enum fg_msgid_form form, enum fg_msgid_error err)
{
	enum fg_msgid_error why = FG_MSGID_E__COUNT;
	enum fg_msgid_form f = classify_n(s, strlen(s), &why);

	ck_assert_msg(f == form && why == err, "%s: got %s/%s, want %s/%s", s,
		      fg_msgid_form_str(f), fg_msgid_error_str(why),
		      fg_msgid_form_str(form), fg_msgid_error_str(err));
}

#define HDR(s) expect(s, FG_MSGID_HEADER, FG_MSGID_OK)
#define WIRE(s, e) expect(s, FG_MSGID_WIRE, FG_MSGID_E_##e)
#define BAD(s, e) expect(s, FG_MSGID_INVALID, FG_MSGID_E_##e)

START_TEST(test_valid_header)
{
	HDR("<a@b>");
	HDR("<foo@faq-site.example>");
	HDR("<foo$v=3$XYZ@faq-site.example>");
	HDR("<foo$v=2$x=abc$Q=@site.example>");	/* "$<letter>=" sequences are valid incoming */
	HDR("<1234.5678@mail.example.com>");
	HDR("<!#$%&'*+-/=?^_`{|}~@x>");
	HDR("<a.b.c@d.e.f>");
	HDR("<a@[]>");
	HDR("<a@[1.2.3.4]>");
	HDR("<a@[IPv6:2001:db8::1]>");
	HDR("<a@[<\"@(x)]>");
	HDR("<\"a(b\"@x>");
	HDR("<\"a@b\"@x>");
	HDR("<\".\"@x>");
	HDR("<\"\\\\\"@x>");		/* "\\" : an escaped backslash is an mqspecial */
	HDR("<\"\\\"\"@x>");		/* "\"" */
	HDR("<\"a[b]c<d\"@x>");
	HDR("<\"a..b\"@x.y>");
	HDR("<\"x.y\"@[y@z]>");		/* the separating '@' is after the quote */
}
END_TEST

START_TEST(test_wire_only)
{
	WIRE("<abc>", NO_AT);
	WIRE("<\"a.b\">", NO_AT);
	WIRE("<@b>", BAD_LEFT);
	WIRE("<.a@b>", BAD_LEFT);
	WIRE("<a.@b>", BAD_LEFT);
	WIRE("<a..b@c>", BAD_LEFT);
	WIRE("<a(b@c>", BAD_LEFT);
	WIRE("<a<b@c>", BAD_LEFT);
	WIRE("<\"ab\"@x>", BAD_LEFT);	/* no mqspecial: needless quoting */
	WIRE("<\"a\\b\"@x>", BAD_LEFT);	/* only \\ and \" are quoted-pairs */
	WIRE("<\"a.b@x>", BAD_LEFT);	/* unterminated quote */
	WIRE("<\"a.b\"c@x>", BAD_LEFT);
	WIRE("<a\"b.\"@x>", BAD_LEFT);
	WIRE("<a@>", BAD_RIGHT);
	WIRE("<a@b@c>", BAD_RIGHT);
	WIRE("<a@.b>", BAD_RIGHT);
	WIRE("<a@b.>", BAD_RIGHT);
	WIRE("<a@b..c>", BAD_RIGHT);
	WIRE("<a@b(c)>", BAD_RIGHT);
	WIRE("<a@[x>", BAD_RIGHT);
	WIRE("<a@[x]y>", BAD_RIGHT);
	WIRE("<a@[a[b]>", BAD_RIGHT);
	WIRE("<a@[a\\]b]>", BAD_RIGHT);
	WIRE("<a@\"b.c\">", BAD_RIGHT);
	WIRE("<a@b.[c]>", BAD_RIGHT);
	/* the first header problem wins */
	WIRE("<.a@.b>", BAD_LEFT);
}
END_TEST

START_TEST(test_invalid)
{
	char buf[300];

	expect("", FG_MSGID_INVALID, FG_MSGID_E_EMPTY);
	BAD("<>", TOO_SHORT);
	BAD("<", TOO_SHORT);
	BAD("a@b>", NO_LT);
	BAD("<a@b", NO_GT);
	BAD("a@b", NO_LT);
	BAD("<a>b@c>", GT_INSIDE);
	BAD("<a@b>>", GT_INSIDE);
	BAD("<a b@c>", BAD_OCTET);
	BAD("<a@b\x7f>", BAD_OCTET);
	BAD("<a@b\xc3\xa9>", BAD_OCTET);
	BAD("<a@b\t>", BAD_OCTET);
	/* wire problems outrank header problems met before them ... */
	BAD("<.a b@c>", BAD_OCTET);
	BAD("<\"ab\"@x>y>", GT_INSIDE);
	/* ... and among wire problems the leftmost wins */
	BAD("<a b>c>", BAD_OCTET);
	BAD("<a>b c>", GT_INSIDE);
	/* ends are checked before the inside */
	BAD("<a b", NO_GT);
	memset(buf, 'a', sizeof(buf));
	buf[0] = '<';
	buf[sizeof(buf) - 1] = '>';
	ck_assert_int_eq(classify_n(buf, sizeof(buf), NULL), FG_MSGID_INVALID);
	{
		enum fg_msgid_error why;

		classify_n(buf, 251, &why);
		ck_assert_int_eq(why, FG_MSGID_E_TOO_LONG);
	}
}
END_TEST

START_TEST(test_embedded_nul_and_len)
{
	/* nothing past len is read, and a NUL is just a bad octet */
	ck_assert_int_eq(classify_n("<a@b>", 4, NULL), FG_MSGID_INVALID);
	ck_assert_int_eq(classify_n("<a\0@b>", 6, NULL), FG_MSGID_INVALID);
	ck_assert(!fg_msgid_valid_wire(NULL, 0));
	ck_assert_int_eq(fg_msgid_classify(NULL, 0, NULL), FG_MSGID_INVALID);
}
END_TEST

/* <aaaa...@example.com> of exactly n octets */
static void make_len(char *buf, size_t n)
{
	const char *right = "@example.com>";
	size_t r = strlen(right);

	buf[0] = '<';
	memset(buf + 1, 'a', n - 1 - r);
	memcpy(buf + n - r, right, r);
}

START_TEST(test_length_boundaries)
{
	char buf[260];
	enum fg_msgid_error why;

	make_len(buf, 249);
	ck_assert_int_eq(classify_n(buf, 249, &why), FG_MSGID_HEADER);
	make_len(buf, 250);
	ck_assert_int_eq(classify_n(buf, 250, &why), FG_MSGID_HEADER);
	make_len(buf, 251);
	ck_assert_int_eq(classify_n(buf, 251, &why), FG_MSGID_INVALID);
	ck_assert_int_eq(why, FG_MSGID_E_TOO_LONG);
	/* the same limits for wire-only IDs */
	memset(buf, 'x', sizeof(buf));
	buf[0] = '<';
	buf[249] = '>';
	ck_assert_int_eq(classify_n(buf, 250, &why), FG_MSGID_WIRE);
	ck_assert_int_eq(why, FG_MSGID_E_NO_AT);
	buf[250] = '>';
	ck_assert_int_eq(classify_n(buf, 251, &why), FG_MSGID_INVALID);
	ck_assert_int_eq(why, FG_MSGID_E_TOO_LONG);
	ck_assert_int_eq(classify_n("<x>", 3, &why), FG_MSGID_WIRE);
}
END_TEST

/* ---- every octet in every position class, against an RFC oracle ---- */

static bool in_set(int c, const char *set)
{
	return c != 0 && strchr(set, c) != NULL;
}

static bool o_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* RFC 5322 3.2.3 atext */
static bool o_atext(int c)
{
	return o_alnum(c) || in_set(c, "!#$%&'*+-/=?^_`{|}~");
}

/* RFC 3977 9.8 A-NOTGT */
static bool o_wire(int c)
{
	return c >= 0x21 && c <= 0x7e && c != '>';
}

struct position_class {
	const char *name;
	const char *before, *after;	/* the octet goes between them */
	bool (*header_ok)(int c);
};

static bool pc_atom(int c)
{
	return o_atext(c) || c == '.';	/* "a.b" is still dot-atom-text */
}

static bool pc_quoted(int c)
{
	return o_wire(c) && c != '"' && c != '\\';	/* mqtext */
}

static bool pc_literal(int c)
{
	return o_wire(c) && c != '[' && c != ']' && c != '\\';	/* mdtext */
}

static bool pc_first(int c)
{
	return c == '<';
}

static bool pc_last(int c)
{
	return c == '>';
}

static const struct position_class position_classes[] = {
	{ "id-left atom", "<a", "b@example.com>", pc_atom },
	{ "id-right atom", "<ab@ex", "x.com>", pc_atom },
	{ "quoted id-left", "<\"a.", "b\"@example.com>", pc_quoted },
	{ "literal id-right", "<ab@[1", "2]>", pc_literal },
	{ "first octet", "", "ab@example.com>", pc_first },
	{ "last octet", "<ab@example.com", "", pc_last },
};

START_TEST(test_every_octet)
{
	const struct position_class *pc = &position_classes[_i];
	char buf[64];

	for (int c = 0; c < 256; c++) {
		size_t nb = strlen(pc->before), na = strlen(pc->after), n = nb + 1 + na;
		bool inner = nb > 0 && na > 0;
		bool want_wire = inner ? o_wire(c) : pc->header_ok(c);
		bool want_header = pc->header_ok(c);
		enum fg_msgid_form f;

		memcpy(buf, pc->before, nb);
		buf[nb] = (char)c;
		memcpy(buf + nb + 1, pc->after, na);
		f = classify_n(buf, n, NULL);
		ck_assert_msg((f != FG_MSGID_INVALID) == want_wire && (f == FG_MSGID_HEADER) == want_header,
			      "%s, octet 0x%02x: got %s", pc->name, c, fg_msgid_form_str(f));
	}
}
END_TEST

/*
 * The vector pass for the common form against the DFA alone: the same
 * form and error for every octet value at every position of IDs whose
 * inner part ends at, before and past each sixteen-octet step and the
 * pass's 128-octet limit, and for random strings over the octets that
 * matter (atext, ".", "@", quotes, brackets, specials, controls, 8-bit).
 */
static void same_as_dfa(const char *s, size_t len)
{
	char *p = dup_exact(s, len);
	enum fg_msgid_error w1 = FG_MSGID_E__COUNT, w2 = FG_MSGID_E__COUNT;
	enum fg_msgid_form f1 = fg_msgid_classify(p, len, &w1);
	enum fg_msgid_form f2 = fg_msgid_classify_dfa(p, len, &w2);

	/* (a passing ck_assert costs a write to check's pipe) */
	if (f1 != f2 || w1 != w2)
		ck_abort_msg("%.*s (%zu octets): %s/%s, the DFA says %s/%s", (int)len, s, len,
			     fg_msgid_form_str(f1), fg_msgid_error_str(w1), fg_msgid_form_str(f2),
			     fg_msgid_error_str(w2));
	free(p);
}

START_TEST(test_fast_path_is_the_dfa)
{
	static const size_t inner[] = { 1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 248 };
	static const char alpha[] = "aZ09.@.@\"[]()<>:;,\\ \x01\x7f\x80\xff-_$=!~";
	char buf[FG_MSGID_MAX + 2];
	uint64_t rng = 42;

	for (unsigned k = 0; k < FG_ARRAY_SIZE(inner); k++) {
		size_t n = inner[k], len = n + 2;

		/* "<x.x.x...@y.y...>" with the "@" near the middle */
		buf[0] = '<';
		for (size_t i = 0; i < n; i++)
			buf[1 + i] = i % 3 == 2 ? '.' : (char)('a' + i % 26);
		if (n >= 3)
			buf[1 + n / 2] = '@';
		buf[len - 1] = '>';
		same_as_dfa(buf, len);
		for (size_t pos = 0; pos < len; pos++) {
			char keep = buf[pos];

			for (int c = 0; c < 256; c++) {
				buf[pos] = (char)c;
				same_as_dfa(buf, len);
			}
			buf[pos] = keep;
		}
	}
	for (unsigned round = 0; round < 200000; round++) {
		size_t len;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		len = 3 + (rng >> 33) % 140;
		buf[0] = '<';
		for (size_t i = 1; i + 1 < len; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly atext, so that long valid IDs come up */
			buf[i] = (rng >> 40) % 4 ? (char)('a' + (rng >> 33) % 26)
						 : alpha[(rng >> 45) % (sizeof(alpha) - 1)];
		}
		buf[len - 1] = '>';
		same_as_dfa(buf, len);
	}
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(fg_msgid_error_str(FG_MSGID_OK), "ok");
	ck_assert_str_eq(fg_msgid_error_str(FG_MSGID_E_BAD_RIGHT), "bad-right");
	ck_assert_str_eq(fg_msgid_error_str(FG_MSGID_E__COUNT), "?");
	for (int e = 0; e < FG_MSGID_E__COUNT; e++)
		ck_assert_str_ne(fg_msgid_error_str((enum fg_msgid_error)e), "?");
	ck_assert_str_eq(fg_msgid_form_str(FG_MSGID_HEADER), "header");
	ck_assert_str_eq(fg_msgid_form_str(FG_MSGID_WIRE), "wire");
	ck_assert_str_eq(fg_msgid_form_str(FG_MSGID_INVALID), "invalid");
	ck_assert_str_eq(fg_msgid_form_str((enum fg_msgid_form)7), "?");
}
END_TEST

/* ---------------------------------------------------------------- versions */

static int vparse(const char *s, struct fg_msgid_version *v)
{
	char *p = dup_exact(s, strlen(s));
	int rc = fg_msgid_version_parse(p, strlen(s), v);

	free(p);
	return rc;
}

static void expect_version(const char *s, bool has, uint64_t n, const char *vtext,
			   const char *tail, const char *base)
{
	struct fg_msgid_version v;

	ck_assert_int_eq(vparse(s, &v), 0);
	ck_assert_msg(v.has_version == has && v.version == n, "%s: version %d/%llu", s,
		      v.has_version, (unsigned long long)v.version);
	ck_assert_uint_eq(v.v_len, strlen(vtext));
	ck_assert(memcmp(s + v.v_off, vtext, v.v_len) == 0);
	ck_assert_uint_eq(v.tail_len, strlen(tail));
	ck_assert(memcmp(s + v.tail_off, tail, v.tail_len) == 0);
	ck_assert_str_eq(v.base, base);
	ck_assert_uint_eq(v.base_len, strlen(base));
	ck_assert(fg_msgid_valid_header(v.base, v.base_len));
}

START_TEST(test_version_parse)
{
	struct fg_msgid_version v;

	/* seed 000, verbatim */
	expect_version("<foo$v=3$XYZ@faq-site.example>", true, 3, "$v=3", "$XYZ",
		       "<foo@faq-site.example>");
	expect_version("<foo@faq-site.example>", false, 0, "", "", "<foo@faq-site.example>");
	ck_assert_int_eq(vparse("<foo@faq-site.example>", &v), 0);
	ck_assert_uint_eq(v.v_off, 4);	/* where a version would go: the '@' */
	expect_version("<foo$v=4$PQR@faq-site.example>", true, 4, "$v=4", "$PQR",
		       "<foo@faq-site.example>");
	expect_version("<foo$v=1$ABC@faq-site.example>", true, 1, "$v=1", "$ABC",
		       "<foo@faq-site.example>");
	/* a random sequence that breaks the deriving rule is still just a tail */
	expect_version("<foo$v=2$x=abc$Q=@site.example>", true, 2, "$v=2", "$x=abc$Q=",
		       "<foo@site.example>");
	/* leading zeros are the same number */
	expect_version("<a$v=007@x>", true, 7, "$v=007", "", "<a@x>");
	expect_version("<a$v=0@x>", true, 0, "$v=0", "", "<a@x>");
	/* "$v=" without digits, or not ending at '$'/'@', is a random sequence */
	expect_version("<a$v=@x>", false, 0, "", "", "<a$v=@x>");
	expect_version("<a$v=$b@x>", false, 0, "", "", "<a$v=$b@x>");
	expect_version("<a$v=3x@y>", false, 0, "", "", "<a$v=3x@y>");
	expect_version("<a$v=3.x@y>", false, 0, "", "", "<a$v=3.x@y>");
	expect_version("<a$V=3@y>", false, 0, "", "", "<a$V=3@y>");
	expect_version("<a$w=3@y>", false, 0, "", "", "<a$w=3@y>");
	/* the leftmost version number wins; what follows is tail */
	expect_version("<a$v=2$v=5@x>", true, 2, "$v=2", "$v=5", "<a@x>");
	expect_version("<a$v=3x$v=4$r@y>", true, 4, "$v=4", "$r", "<a$v=3x@y>");
	expect_version("<a$b$v=2$c.d$e@x>", true, 2, "$v=2", "$c.d$e", "<a$b@x>");
	expect_version("<a.b$v=9@x.y>", true, 9, "$v=9", "", "<a.b@x.y>");
	/* the base must stay a valid ID: no empty prefix, no trailing dot */
	expect_version("<$v=3@x>", false, 0, "", "", "<$v=3@x>");
	expect_version("<a.$v=3@x>", false, 0, "", "", "<a.$v=3@x>");
	expect_version("<$v=3$v=4@x>", true, 4, "$v=4", "", "<$v=3@x>");
	/* 64-bit limits */
	expect_version("<a$v=18446744073709551615@x>", true, UINT64_MAX,
		       "$v=18446744073709551615", "", "<a@x>");
	ck_assert_int_eq(vparse("<a$v=18446744073709551616@x>", &v), -ERANGE);
	ck_assert_int_eq(vparse("<a$v=99999999999999999999999$r@x>", &v), -ERANGE);
	expect_version("<a$v=000000000000000000000000001@x>", true, 1,
		       "$v=000000000000000000000000001", "", "<a@x>");
	/* quoted id-left: dollars inside a quote are text, not versions */
	expect_version("<\"a.$v=3\"@x>", false, 0, "", "", "<\"a.$v=3\"@x>");
	expect_version("<\"a.b\"@[c$v=3@d]>", false, 0, "", "", "<\"a.b\"@[c$v=3@d]>");
	/* a version only lives in the id-left */
	expect_version("<a@x$v=3>", false, 0, "", "", "<a@x$v=3>");
	/* not header form */
	ck_assert_int_eq(vparse("<a$v=3>", &v), -EINVAL);
	ck_assert_int_eq(vparse("<a $v=3@x>", &v), -EINVAL);
	ck_assert_int_eq(vparse("", &v), -EINVAL);
}
END_TEST

static const uint8_t rnd6[6] = { 0x00, 0x10, 0x83, 0x10, 0x51, 0x87 };	/* "ABCDEFGH" */

static int succ(const char *s, const uint8_t *rnd, size_t rnd_len, char *out, size_t out_len)
{
	char *p = dup_exact(s, strlen(s));
	int rc = fg_msgid_successor(p, strlen(s), rnd, rnd_len, out, out_len);

	free(p);
	return rc;
}

static int succ_n(const char *s, size_t len, char *out, size_t out_len)
{
	char *p = dup_exact(s, len);
	int rc = fg_msgid_successor(p, len, rnd6, sizeof(rnd6), out, out_len);

	free(p);
	return rc;
}

static void expect_successor(const char *s, const char *want)
{
	char out[FG_MSGID_MAX + 1];
	int rc = succ(s, rnd6, sizeof(rnd6), out, sizeof(out));

	ck_assert_msg(rc == (int)strlen(want), "%s: rc %d", s, rc);
	ck_assert_str_eq(out, want);
	ck_assert(fg_msgid_valid_header(out, (size_t)rc));
}

START_TEST(test_successor)
{
	char out[FG_MSGID_MAX + 1];

	/* seed 000: <foo$v=3$XYZ@faq-site.example> becomes <foo$v=4$PQR@...>,
	 * <foo@faq-site.example> becomes <foo$v=1$ABC@...> */
	expect_successor("<foo$v=3$XYZ@faq-site.example>", "<foo$v=4$ABCDEFGH@faq-site.example>");
	expect_successor("<foo@faq-site.example>", "<foo$v=1$ABCDEFGH@faq-site.example>");
	expect_successor("<a$v=007@x>", "<a$v=8$ABCDEFGH@x>");
	expect_successor("<a$v=9$r$s@x>", "<a$v=10$ABCDEFGH@x>");
	expect_successor("<a$v=$b@x>", "<a$v=$b$v=1$ABCDEFGH@x>");
	expect_successor("<a.$v=3@x>", "<a.$v=3$v=1$ABCDEFGH@x>");
	expect_successor("<$v=3@x>", "<$v=3$v=1$ABCDEFGH@x>");
	expect_successor("<a@[1.2.3.4]>", "<a$v=1$ABCDEFGH@[1.2.3.4]>");
	expect_successor("<a$v=18446744073709551614@x>", "<a$v=18446744073709551615$ABCDEFGH@x>");
	ck_assert_int_eq(succ("<a$v=18446744073709551615@x>", rnd6, 6, out, sizeof(out)), -ERANGE);
	ck_assert_int_eq(succ("<a$v=18446744073709551616@x>", rnd6, 6, out, sizeof(out)), -ERANGE);
	ck_assert_int_eq(succ("<\"a.b\"@x>", rnd6, 6, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(succ("<a>", rnd6, 6, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(succ("<a@x>", rnd6, 5, out, sizeof(out)), -EINVAL);
	/* 7 bytes: 10 characters, the last carrying 2 bits */
	{
		static const uint8_t r7[7] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		ck_assert_int_eq(succ("<a@x>", r7, 7, out, sizeof(out)), 20);
		ck_assert_str_eq(out, "<a$v=1$_________w@x>");
	}
}
END_TEST

START_TEST(test_successor_enospc)
{
	char id[260], out[300];
	int rc;

	/* unversioned: the successor adds "$v=1$" and 8 characters */
	make_len(id, FG_MSGID_MAX - 13);
	rc = succ_n(id, FG_MSGID_MAX - 13, out, sizeof(out));
	ck_assert_int_eq(rc, FG_MSGID_MAX);
	ck_assert(fg_msgid_valid_header(out, (size_t)rc));
	make_len(id, FG_MSGID_MAX - 12);
	ck_assert_int_eq(succ_n(id, FG_MSGID_MAX - 12, out, sizeof(out)), -ENOSPC);
	/* the output buffer needs room for the NUL too */
	make_len(id, 20);
	ck_assert_int_eq(succ_n(id, 20, out, 34), 33);
	ck_assert_int_eq(succ_n(id, 20, out, 33), -ENOSPC);
	/* versioned: "$v=9$XY" (7) becomes "$v=10$ABCDEFGH" (14) */
	make_len(id, FG_MSGID_MAX - 7);
	memcpy(id + FG_MSGID_MAX - 7 - 13 - 7, "$v=9$XY", 7);
	ck_assert_int_eq(succ_n(id, FG_MSGID_MAX - 7, out, sizeof(out)), FG_MSGID_MAX);
	make_len(id, FG_MSGID_MAX - 6);
	memcpy(id + FG_MSGID_MAX - 6 - 13 - 7, "$v=9$XY", 7);
	ck_assert_int_eq(succ_n(id, FG_MSGID_MAX - 6, out, sizeof(out)), -ENOSPC);
	/* randomness that could never fit */
	{
		uint8_t big[FG_MSGID_MAX + 1] = { 0 };

		ck_assert_int_eq(succ("<a@x>", big, sizeof(big), out, sizeof(out)), -ENOSPC);
	}
}
END_TEST

/*
 * The seed 000 rule: an added random-dollars-sequence never starts with
 * "$<letter>=", whatever the random bytes. Every value of the first two
 * bytes (which decide the first two characters), then random lengths and
 * contents; each successor is checked in full.
 */
static uint64_t rng_state = 0x5eed0000000000f9ull;

static uint64_t rng(void)
{
	return fg_test_rng(&rng_state);
}

/* plain checks: ck_assert marks a point per call, too slow for 85,000 IDs */
static void check_successor(const char *id, uint64_t want_version, const uint8_t *rnd, size_t n)
{
	char out[FG_MSGID_MAX + 1];
	struct fg_msgid_version before, after;
	const char *seq;
	int rc = fg_msgid_successor(id, strlen(id), rnd, n, out, sizeof(out));

	if (rc <= 0 || !fg_msgid_valid_header(out, (size_t)rc) ||
	    fg_msgid_version_parse(id, strlen(id), &before) != 0 ||
	    fg_msgid_version_parse(out, (size_t)rc, &after) != 0)
		ck_abort_msg("%s -> %d %s", id, rc, rc > 0 ? out : "");
	if (!after.has_version || after.version != want_version ||
	    strcmp(after.base, before.base) != 0)
		ck_abort_msg("%s -> %s: version %llu, base %s", id, out,
			     (unsigned long long)after.version, after.base);
	/* the added sequence is the whole tail: "$" and (4n+2)/3 characters */
	seq = out + after.tail_off;
	if (after.tail_len != 1 + (n * 4 + 2) / 3 || seq[0] != '$')
		ck_abort_msg("%s: tail %zu", out, after.tail_len);
	if ((((seq[1] | 0x20) >= 'a' && (seq[1] | 0x20) <= 'z') && seq[2] == '=') ||
	    memchr(seq, '=', after.tail_len))
		ck_abort_msg("added sequence starts with $<letter>= or holds '=': %s", out);
}

START_TEST(test_successor_never_letter_equals)
{
	uint8_t rnd[64];

	for (unsigned v = 0; v < 65536; v++) {
		memset(rnd, (int)(v * 7), sizeof(rnd));
		rnd[0] = (uint8_t)(v >> 8);
		rnd[1] = (uint8_t)v;
		check_successor("<foo$v=3$XYZ@faq-site.example>", 4, rnd, FG_MSGID_RND_MIN);
	}
	for (unsigned k = 0; k < 20000; k++) {
		size_t n = FG_MSGID_RND_MIN + rng() % (sizeof(rnd) - FG_MSGID_RND_MIN);

		for (size_t i = 0; i < n; i++)
			rnd[i] = (uint8_t)rng();
		check_successor(k & 1 ? "<foo@faq-site.example>" : "<a.b$v=41$q@c.d>",
				k & 1 ? 1 : 42, rnd, n);
	}
}
END_TEST

static Suite *msgid_suite(void)
{
	Suite *s = suite_create("msgid");
	TCase *tc = tcase_create("syntax");
	TCase *tv = tcase_create("versions");

	tcase_add_test(tc, test_valid_header);
	tcase_add_test(tc, test_wire_only);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_embedded_nul_and_len);
	tcase_add_test(tc, test_length_boundaries);
	tcase_add_loop_test(tc, test_every_octet, 0, (int)FG_ARRAY_SIZE(position_classes));
	tcase_add_test(tc, test_fast_path_is_the_dfa);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	tcase_add_test(tv, test_version_parse);
	tcase_add_test(tv, test_successor);
	tcase_add_test(tv, test_successor_enospc);
	tcase_add_test(tv, test_successor_never_letter_equals);
	suite_add_tcase(s, tv);
	return s;
}

FG_TEST_MAIN(msgid_suite)
