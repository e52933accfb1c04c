/* SPDX-License-Identifier: MIT */
/*
 * test_article.c — the header-section scanner: both forms, folding,
 * repetition, dot-stuffing, incremental input, every bound at its edge,
 * and the defects a hostile or broken peer sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/article.h"
#include "fgtest.h"

static struct fg_article art;

static enum fg_article_result scan_n(const char *s, size_t n, enum fg_article_form form)
{
	fg_article_init(&art, form);
	return fg_article_scan(&art, s, n);
}

static enum fg_article_result scan(const char *s, enum fg_article_form form)
{
	return scan_n(s, strlen(s), form);
}

/* Value of a known field as a NUL-terminated copy, "(absent)" if none. */
static const char *val(enum fg_hdr h)
{
	static char buf[4096];
	struct fg_article_value v = fg_article_get(&art, h);

	if (!v.ptr)
		return "(absent)";
	ck_assert_uint_lt(v.len, sizeof(buf));
	memcpy(buf, v.ptr, v.len);
	buf[v.len] = '\0';
	return buf;
}

static const char wire_article[] =
	"Path: news.example.net!feeder.example.org!not-for-mail\r\n"
	"From: Alice <alice@example.org>\r\n"
	"Newsgroups: comp.lang.c,comp.unix.programmer\r\n"
	"Subject: Re: scanners\r\n"
	"Date: Mon, 02 Mar 2026 10:00:00 +0000\r\n"
	"Message-ID: <abc$v=2$xyz@example.org>\r\n"
	"Injection-Date: Mon, 02 Mar 2026 10:05:00 +0000\r\n"
	"Supersedes: <abc$v=1$pqr@example.org>\r\n"
	"X-Trace: something\r\n"
	"\r\n"
	"body line\r\n"
	"..stuffed body line\r\n"
	".\r\n";

START_TEST(test_wire_basic)
{
	ck_assert_int_eq(scan(wire_article, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_str_eq(val(FG_HDR_PATH), "news.example.net!feeder.example.org!not-for-mail");
	ck_assert_str_eq(val(FG_HDR_FROM), "Alice <alice@example.org>");
	ck_assert_str_eq(val(FG_HDR_NEWSGROUPS), "comp.lang.c,comp.unix.programmer");
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "Re: scanners");
	ck_assert_str_eq(val(FG_HDR_DATE), "Mon, 02 Mar 2026 10:00:00 +0000");
	ck_assert_str_eq(val(FG_HDR_MESSAGE_ID), "<abc$v=2$xyz@example.org>");
	ck_assert_str_eq(val(FG_HDR_INJECTION_DATE), "Mon, 02 Mar 2026 10:05:00 +0000");
	ck_assert_str_eq(val(FG_HDR_SUPERSEDES), "<abc$v=1$pqr@example.org>");
	ck_assert_uint_eq(art.n_fields, 9);
	ck_assert_uint_eq(art.n_lines, 9);
	ck_assert_uint_eq(art.n_defects, 0);
	ck_assert(!art.terminated);
	ck_assert(art.complete);
	/* body starts right after the empty line */
	ck_assert_str_eq(wire_article + art.body_off - 2, "\r\nbody line\r\n..stuffed body line\r\n.\r\n");
	ck_assert_mem_eq(wire_article + art.header_end, "\r\nbody", 6);
	for (unsigned h = 0; h < FG_HDR__COUNT; h++)
		ck_assert_uint_eq(fg_article_count(&art, h), 1);
}
END_TEST

START_TEST(test_plain_equals_wire)
{
	char plain[sizeof(wire_article)];
	size_t n = 0;
	char wire_vals[FG_HDR__COUNT][256];

	ck_assert_int_eq(scan(wire_article, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	for (unsigned h = 0; h < FG_HDR__COUNT; h++)
		snprintf(wire_vals[h], sizeof(wire_vals[h]), "%s", val(h));
	/* strip every CR and the stuffing: the plain form of the same article */
	for (const char *p = wire_article; *p; p++)
		if (*p != '\r')
			plain[n++] = *p;
	plain[n] = '\0';
	ck_assert_int_eq(fg_article_detect(plain, n), FG_ARTICLE_PLAIN);
	ck_assert_int_eq(fg_article_detect(wire_article, strlen(wire_article)), FG_ARTICLE_WIRE);
	ck_assert_int_eq(scan(plain, FG_ARTICLE_PLAIN), FG_ARTICLE_COMPLETE);
	for (unsigned h = 0; h < FG_HDR__COUNT; h++)
		ck_assert_str_eq(val(h), wire_vals[h]);
	ck_assert_str_eq(plain + art.body_off, "body line\n..stuffed body line\n.\n");
}
END_TEST

START_TEST(test_case_insensitive_names)
{
	ck_assert_int_eq(scan("message-id: <a@b>\r\nDATE: x\r\ninjection-DATE: y\r\n"
			      "pATH: p\r\nNEWSGROUPS: g\r\nfrom: f\r\nsubject: s\r\n"
			      "SUPERSEDES: <c@d>\r\n\r\n", FG_ARTICLE_WIRE),
			 FG_ARTICLE_COMPLETE);
	ck_assert_str_eq(val(FG_HDR_MESSAGE_ID), "<a@b>");
	ck_assert_str_eq(val(FG_HDR_DATE), "x");
	ck_assert_str_eq(val(FG_HDR_INJECTION_DATE), "y");
	ck_assert_str_eq(val(FG_HDR_PATH), "p");
	ck_assert_str_eq(val(FG_HDR_NEWSGROUPS), "g");
	ck_assert_str_eq(val(FG_HDR_FROM), "f");
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s");
	ck_assert_str_eq(val(FG_HDR_SUPERSEDES), "<c@d>");
	/* near misses are other fields */
	ck_assert_int_eq(scan("Message-IDs: <a@b>\r\nDates: x\r\nPaths: p\r\nXrom: f\r\n"
			      "Newsgroupz: g\r\nInjection-Datf: y\r\n\r\n", FG_ARTICLE_WIRE),
			 FG_ARTICLE_COMPLETE);
	for (unsigned h = 0; h < FG_HDR__COUNT; h++)
		ck_assert_uint_eq(fg_article_count(&art, h), 0);
	ck_assert_uint_eq(art.n_fields, 6);
}
END_TEST

START_TEST(test_folding_and_trimming)
{
	static const char s[] =
		"Path: a.example!\r\n"
		"\tb.example!\r\n"
		"  not-for-mail  \r\n"
		"Newsgroups:   comp.lang.c,\r\n"
		" comp.unix.programmer\t\r\n"
		"Subject:\r\n"
		"  folded from an empty first line\r\n"
		"From:alice@example.org\r\n"
		"Date:    \r\n"
		"\r\n";

	ck_assert_int_eq(scan(s, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_str_eq(val(FG_HDR_PATH), "a.example!\r\n\tb.example!\r\n  not-for-mail");
	ck_assert_str_eq(val(FG_HDR_NEWSGROUPS), "comp.lang.c,\r\n comp.unix.programmer");
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "folded from an empty first line");
	ck_assert_str_eq(val(FG_HDR_FROM), "alice@example.org");
	/* present but empty */
	ck_assert_uint_eq(fg_article_count(&art, FG_HDR_DATE), 1);
	ck_assert_ptr_nonnull(fg_article_get(&art, FG_HDR_DATE).ptr);
	ck_assert_uint_eq(fg_article_get(&art, FG_HDR_DATE).len, 0);
	ck_assert_uint_eq(art.n_fields, 5);
	ck_assert_uint_eq(art.n_lines, 9);
	ck_assert_uint_eq(art.n_defects, 0);
}
END_TEST

START_TEST(test_repeated_fields)
{
	ck_assert_int_eq(scan("Message-ID: <first@x>\r\nX-A: 1\r\nmessage-id: <second@x>\r\n"
			      "Date: d1\r\nDate: d2\r\nDate: d3\r\nX-A: 2\r\n\r\n", FG_ARTICLE_WIRE),
			 FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(fg_article_count(&art, FG_HDR_MESSAGE_ID), 2);
	ck_assert_str_eq(val(FG_HDR_MESSAGE_ID), "<first@x>");
	ck_assert_uint_eq(fg_article_count(&art, FG_HDR_DATE), 3);
	ck_assert_str_eq(val(FG_HDR_DATE), "d1");
	/* any name, by lookup */
	{
		unsigned n;
		struct fg_article_value v = fg_article_find(&art, "x-a", 3, &n);

		ck_assert_uint_eq(n, 2);
		ck_assert_mem_eq(v.ptr, "1", 1);
		v = fg_article_find(&art, "X-B", 3, &n);
		ck_assert_uint_eq(n, 0);
		ck_assert_ptr_null(v.ptr);
	}
	/* every occurrence is in field[] in order */
	ck_assert_uint_eq(art.n_fields, 7);
	ck_assert_mem_eq(fg_article_field_value(&art, 2).ptr, "<second@x>", 10);
	ck_assert_mem_eq(fg_article_field_name(&art, 2).ptr, "message-id", 10);
	ck_assert_uint_eq(art.field[5].hdr, FG_HDR_DATE);
	ck_assert_uint_eq(art.field[6].hdr, FG_HDR_OTHER);
}
END_TEST

START_TEST(test_terminator_in_header)
{
	/* an article with no body and no empty line: the terminator ends it */
	static const char s[] = "Message-ID: <a@b>\r\nSubject: s\r\n.\r\nTAKETHIS <next@x>\r\n";

	ck_assert_int_eq(scan(s, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert(art.terminated);
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s");
	ck_assert_str_eq(s + art.body_off, "TAKETHIS <next@x>\r\n");
	ck_assert_str_eq(s + art.header_end, ".\r\nTAKETHIS <next@x>\r\n");
	/* the empty article */
	ck_assert_int_eq(scan(".\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert(art.terminated);
	ck_assert_uint_eq(art.n_fields, 0);
	ck_assert_uint_eq(art.body_off, 3);
	/* in plain form a dot is just a (malformed) line */
	ck_assert_int_eq(scan("Subject: s\n.\n\n", FG_ARTICLE_PLAIN), FG_ARTICLE_COMPLETE);
	ck_assert(!art.terminated);
	ck_assert_uint_eq(art.n_defects, 1);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_NO_COLON);
	/* no fields at all: the empty line comes first */
	ck_assert_int_eq(scan("\r\nbody\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.n_fields, 0);
	ck_assert_uint_eq(art.body_off, 2);
}
END_TEST

START_TEST(test_dot_stuffed_header_lines)
{
	/* "..X-Dot" is the field ".X-Dot"; ". folded" is not a continuation */
	ck_assert_int_eq(scan("Subject: s\r\n..X-Dot: 1\r\n. folded\r\nFrom: f\r\n\r\n",
			      FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.n_fields, 3);
	ck_assert_mem_eq(fg_article_field_name(&art, 1).ptr, ".X-Dot", 6);
	ck_assert_uint_eq(fg_article_field_name(&art, 1).len, 6);
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s");
	ck_assert_str_eq(val(FG_HDR_FROM), "f");
	ck_assert_uint_eq(art.n_defects, 1);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_NO_COLON);
	ck_assert_uint_eq(art.first_defect_off, 24);
	/* ".." alone unstuffs to "." which is not a field either */
	ck_assert_int_eq(scan("..\r\n\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert(!art.terminated);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_NO_COLON);
}
END_TEST

START_TEST(test_bare_lf_is_content_in_wire_form)
{
	/* innd sees one X-Foo field here; so must we, or a peer could show us
	 * a Message-ID the news server behind us never sees */
	static const char s[] = "X-Foo: a\nMessage-ID: <victim@x>\r\nSubject: s\r\n\r\n";

	ck_assert_int_eq(scan(s, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(fg_article_count(&art, FG_HDR_MESSAGE_ID), 0);
	ck_assert_uint_eq(art.n_fields, 2);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_BARE_LF);
	ck_assert_uint_eq(art.first_defect_off, 0);
	/* a bare LF does not end the header either: "\n" is a line */
	ck_assert_int_eq(scan("Subject: s\r\n\n\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_AGAIN);
	ck_assert_int_eq(scan("Subject: s\r\n\n\r\n\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.body_off, 17);
	ck_assert_uint_eq(art.n_defects, 2);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_BARE_LF);
	/* plain form: LF ends lines, a CR before it is dropped */
	ck_assert_int_eq(scan("Subject: s\r\nFrom: f\n\r\nbody", FG_ARTICLE_PLAIN),
			 FG_ARTICLE_COMPLETE);
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s");
	ck_assert_str_eq(val(FG_HDR_FROM), "f");
	ck_assert_uint_eq(art.n_defects, 0);
	ck_assert_uint_eq(art.body_off, 22);
}
END_TEST

START_TEST(test_defects)
{
	/* each defective line names no field; scanning goes on */
	ck_assert_int_eq(scan(" orphan continuation\r\n"
			      "Message-ID : <spaced@x>\r\n"
			      " continued bad line\r\n"
			      "no colon here\r\n"
			      ": empty name\r\n"
			      "X-\x80: eight bit\r\n"
			      "Subject: s\r\n\r\n", FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.n_defects, 6);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_ORPHAN_CONTINUATION);
	ck_assert_uint_eq(fg_article_count(&art, FG_HDR_MESSAGE_ID), 0);
	ck_assert_uint_eq(art.n_fields, 1);
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s");
	ck_assert_str_eq(fg_article_error_str(FG_ARTICLE_E_ORPHAN_CONTINUATION),
			 "continuation line with no field before it");
}
END_TEST

START_TEST(test_nul_octet)
{
	static const char s[] = "Subject: a\0b\r\nFrom: f\r\n\r\n";

	ck_assert_int_eq(scan_n(s, sizeof(s) - 1, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.n_defects, 1);
	ck_assert_int_eq(art.first_defect, FG_ARTICLE_E_NUL);
	ck_assert_uint_eq(fg_article_get(&art, FG_HDR_SUBJECT).len, 3);
	ck_assert_str_eq(val(FG_HDR_FROM), "f");
}
END_TEST

START_TEST(test_again_until_complete)
{
	static const char s[] = "Subject: s\r\n\tmore\r\nFrom: f\r\n\r\nbody";
	size_t n = strlen(s);

	fg_article_init(&art, FG_ARTICLE_WIRE);
	/* complete exactly when the empty line's LF arrives */
	for (size_t len = 0; len < 30; len++)
		ck_assert_int_eq(fg_article_scan(&art, s, len), FG_ARTICLE_AGAIN);
	ck_assert_int_eq(fg_article_scan(&art, s, 30), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.body_off, 30);
	/* once complete it stays complete and rebases onto the newest buffer */
	ck_assert_int_eq(fg_article_scan(&art, s, n), FG_ARTICLE_COMPLETE);
	ck_assert_str_eq(val(FG_HDR_SUBJECT), "s\r\n\tmore");
}
END_TEST

/* Feed `s` in pieces of `step` octets, each time from a fresh copy (the
 * buffer moves, as a growing session buffer does), and compare with a
 * one-shot scan. */
static void check_split(const char *s, size_t n, enum fg_article_form form, size_t step)
{
	struct fg_article one;
	enum fg_article_result r1, r2 = FG_ARTICLE_AGAIN;
	char *copy = NULL;

	fg_article_init(&one, form);
	r1 = fg_article_scan(&one, s, n);
	fg_article_init(&art, form);
	for (size_t len = 0; r2 == FG_ARTICLE_AGAIN && len <= n; len += step) {
		size_t l = len > n ? n : len;

		free(copy);
		copy = malloc(l + 1);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, s, l);
		r2 = fg_article_scan(&art, copy, l);
		if (l == n)
			break;
	}
	if (r2 == FG_ARTICLE_AGAIN)
		r2 = fg_article_scan(&art, copy, n);
	ck_assert_int_eq(r1, r2);
	ck_assert_uint_eq(one.n_fields, art.n_fields);
	ck_assert_uint_eq(one.body_off, art.body_off);
	ck_assert_uint_eq(one.n_defects, art.n_defects);
	ck_assert_int_eq(one.error, art.error);
	for (unsigned i = 0; i < one.n_fields; i++)
		ck_assert_mem_eq(&one.field[i], &art.field[i], sizeof(one.field[i]));
	for (unsigned h = 0; h < FG_HDR__COUNT; h++) {
		struct fg_article_value a = fg_article_get(&one, h), b = fg_article_get(&art, h);

		ck_assert_uint_eq(a.len, b.len);
		if (a.len)
			ck_assert_mem_eq(a.ptr, b.ptr, a.len);
	}
	free(copy);
}

START_TEST(test_any_split_same_result)
{
	static const char messy[] =
		"Path: a!\r\n b!c\r\nX: 1\nY\r\n. bad\r\n..Dot: d\r\n"
		"Subject:\r\n s\r\nDate: d\r\n\r\nbody\r\n.\r\n";

	for (size_t step = 1; step <= 7; step++) {
		check_split(wire_article, strlen(wire_article), FG_ARTICLE_WIRE, step);
		check_split(messy, strlen(messy), FG_ARTICLE_WIRE, step);
		check_split(messy, strlen(messy), FG_ARTICLE_PLAIN, step);
	}
}
END_TEST

/* Builders of inputs at a bound: each returns a malloc'd article. */
typedef char *build_fn(size_t n, size_t *len);

/* A header of `n` fields "X-Nnnnn: v", then an empty line. */
static char *many_fields(size_t n, size_t *len)
{
	char *s = malloc(n * 12 + 3);
	size_t off = 0;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		off += (size_t)sprintf(s + off, "X-%05zu: v\r\n", i);
	memcpy(s + off, "\r\n", 3);
	*len = off + 2;
	return s;
}

/* "Subject: " + filler up to a line of exactly `n` octets, CRLF CRLF */
static char *long_line(size_t n, size_t *len)
{
	char *s = malloc(n + 5);

	ck_assert_ptr_nonnull(s);
	memcpy(s, "Subject: ", 9);
	memset(s + 9, 'x', n - 9);
	memcpy(s + n, "\r\n\r\n", 5);
	*len = n + 4;
	return s;
}

/* A header section of exactly `n` octets (empty line included), "body". */
static char *header_of(size_t n, size_t *len)
{
	char *s = malloc(n + 16);
	size_t off = 0;

	ck_assert_ptr_nonnull(s);
	while (n - off > 1000 + 2) {
		memcpy(s + off, "X-Fill: ", 8);
		memset(s + off + 8, 'f', 990);
		memcpy(s + off + 998, "\r\n", 2);
		off += 1000;
	}
	/* one last field taking what is left but the empty line */
	memcpy(s + off, "X-Last: ", 8);
	memset(s + off + 8, 'l', n - off - 2 - 8 - 2);
	memcpy(s + n - 4, "\r\n\r\nbody", 8);
	*len = n + 4;
	return s;
}

/* `limit` passes, `limit + 1` fails with `err`; leaves the failed scan in
 * `art` and returns its (malloc'd) input. */
static char *check_edge(build_fn *build, size_t limit, enum fg_article_error err, size_t *len)
{
	char *s = build(limit, len);

	ck_assert_int_eq(scan_n(s, *len, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_int_eq(art.error, FG_ARTICLE_OK);
	free(s);
	s = build(limit + 1, len);
	ck_assert_int_eq(scan_n(s, *len, FG_ARTICLE_WIRE), FG_ARTICLE_ERROR);
	ck_assert_int_eq(art.error, err);
	/* sticky */
	ck_assert_int_eq(fg_article_scan(&art, s, *len), FG_ARTICLE_ERROR);
	return s;
}

START_TEST(test_field_count_bound)
{
	size_t len;
	char *s = check_edge(many_fields, FG_ARTICLE_MAX_FIELDS, FG_ARTICLE_E_TOO_MANY_FIELDS, &len);

	ck_assert_uint_eq(art.n_fields, FG_ARTICLE_MAX_FIELDS);
	free(s);
}
END_TEST

START_TEST(test_line_length_bound)
{
	size_t len;
	char *s = check_edge(long_line, FG_ARTICLE_MAX_LINE, FG_ARTICLE_E_LINE_TOO_LONG, &len);

	/* found without waiting for the line's end */
	ck_assert_int_eq(scan_n(s, FG_ARTICLE_MAX_LINE + 2, FG_ARTICLE_WIRE), FG_ARTICLE_ERROR);
	ck_assert_int_eq(art.error, FG_ARTICLE_E_LINE_TOO_LONG);
	free(s);
	s = long_line(FG_ARTICLE_MAX_LINE, &len);
	ck_assert_int_eq(scan_n(s, len, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(fg_article_get(&art, FG_HDR_SUBJECT).len, FG_ARTICLE_MAX_LINE - 9);
	free(s);
}
END_TEST

START_TEST(test_header_size_bound)
{
	size_t len;
	char *s = check_edge(header_of, FG_ARTICLE_MAX_HEADER, FG_ARTICLE_E_HEADER_TOO_LONG, &len);

	/* what was found before the bound stays readable */
	ck_assert_uint_gt(art.n_fields, 60);
	ck_assert_int_eq(scan_n(s, FG_ARTICLE_MAX_HEADER - 1, FG_ARTICLE_WIRE), FG_ARTICLE_AGAIN);
	free(s);
	s = header_of(FG_ARTICLE_MAX_HEADER, &len);
	ck_assert_int_eq(scan_n(s, len, FG_ARTICLE_WIRE), FG_ARTICLE_COMPLETE);
	ck_assert_uint_eq(art.body_off, FG_ARTICLE_MAX_HEADER);
	free(s);
}
END_TEST

START_TEST(test_wire_size)
{
	static const char plain[] = "Subject: s\n\n.dot\nlast";
	static const char wire[] = "Subject: s\r\n\r\n..dot\r\nlast\r\n.\r\nTAKETHIS";

	/* the same article: plain form converted, wire form up to ".\r\n" */
	ck_assert_uint_eq(fg_article_wire_size(plain, strlen(plain), FG_ARTICLE_PLAIN), 27);
	ck_assert_uint_eq(fg_article_wire_size(wire, strlen(wire), FG_ARTICLE_WIRE), 27);
	ck_assert_uint_eq(fg_article_wire_size(wire, 27, FG_ARTICLE_WIRE), 27);
	ck_assert_uint_eq(fg_article_wire_size(".\r\n", 3, FG_ARTICLE_WIRE), 0);
	ck_assert_uint_eq(fg_article_wire_size("", 0, FG_ARTICLE_PLAIN), 0);
	ck_assert_uint_eq(fg_article_wire_size("a\r\n", 3, FG_ARTICLE_PLAIN), 3);
}
END_TEST

START_TEST(test_names_and_strings)
{
	ck_assert_str_eq(fg_hdr_name(FG_HDR_INJECTION_DATE), "Injection-Date");
	ck_assert_ptr_null(fg_hdr_name(FG_HDR_OTHER));
	for (unsigned e = 0; e < FG_ARTICLE_E__COUNT; e++)
		ck_assert_ptr_nonnull(fg_article_error_str(e));
	ck_assert_str_eq(fg_article_error_str(FG_ARTICLE_E__COUNT), "unknown");
	ck_assert_str_eq(fg_article_form_str(FG_ARTICLE_WIRE), "wire");
	ck_assert_int_eq(fg_article_detect("", 0), FG_ARTICLE_PLAIN);
	ck_assert_int_eq(fg_article_detect("\r\n", 2), FG_ARTICLE_WIRE);
	ck_assert_int_eq(fg_article_detect("\n", 1), FG_ARTICLE_PLAIN);
}
END_TEST

static Suite *article_suite(void)
{
	Suite *s = suite_create("article");
	TCase *tc = tcase_create("scan");
	TCase *tb = tcase_create("bounds");

	tcase_add_test(tc, test_wire_basic);
	tcase_add_test(tc, test_plain_equals_wire);
	tcase_add_test(tc, test_case_insensitive_names);
	tcase_add_test(tc, test_folding_and_trimming);
	tcase_add_test(tc, test_repeated_fields);
	tcase_add_test(tc, test_terminator_in_header);
	tcase_add_test(tc, test_dot_stuffed_header_lines);
	tcase_add_test(tc, test_bare_lf_is_content_in_wire_form);
	tcase_add_test(tc, test_defects);
	tcase_add_test(tc, test_nul_octet);
	tcase_add_test(tc, test_again_until_complete);
	tcase_add_test(tc, test_any_split_same_result);
	tcase_add_test(tc, test_wire_size);
	tcase_add_test(tc, test_names_and_strings);
	tcase_add_test(tb, test_field_count_bound);
	tcase_add_test(tb, test_line_length_bound);
	tcase_add_test(tb, test_header_size_bound);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tb);
	return s;
}

FG_TEST_MAIN(article_suite)
