/* SPDX-License-Identifier: MIT */
/*
 * test_date.c — the RFC 5322 date parser: every accepted form, every
 * error, the calendar edge cases, and format/parse round trips; and the
 * inn reading's forms, refusals, notes and words (test_date_inn holds it
 * to INN's own parser).
 *
 * Expected times come from an independent source: glibc's timegm() on a
 * struct tm (the library itself never calls it), or literal epoch values
 * checked by hand ("3 Aug 2008 16:02:50 GMT" = 1217779370, as INN's
 * convdate -n also says). Inputs are copied into exactly-sized heap
 * buffers, so ASan catches any read past `len`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/common.h"
#include "floodgate/date.h"
#include "fgtest.h"

#define T_2008 1217779370	/* Sun, 03 Aug 2008 16:02:50 +0000 */

static int parse_n(const char *s, size_t len, fg_time_t *t)
{
	char *p = malloc(len ? len : 1);
	int rc;

	ck_assert_ptr_nonnull(p);
	memcpy(p, s, len);
	rc = fg_date_parse(p, len, t);
	free(p);
	return rc;
}

static void ok(const char *s, fg_time_t want)
{
	fg_time_t t = -1;
	int rc = parse_n(s, strlen(s), &t);

	ck_assert_msg(rc == 0 && t == want, "\"%s\": rc %d (%s), t %lld, want %lld", s, rc,
		      fg_date_error_str(-rc), (long long)t, (long long)want);
}

static void fails(const char *s, enum fg_date_error e)
{
	fg_time_t t = 12345;
	int rc = parse_n(s, strlen(s), &t);

	ck_assert_msg(rc == -(int)e, "\"%s\": rc %d (%s), want %s", s, rc,
		      fg_date_error_str(-rc), fg_date_error_str(e));
	ck_assert_int_eq(t, 12345);	/* untouched on error */
}

static fg_time_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi, .tm_sec = s };

	return (fg_time_t)timegm(&tm);
}

START_TEST(test_canonical)
{
	ok("Sun, 03 Aug 2008 16:02:50 +0000", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000", T_2008);
	ok("3 Aug 2008 16:02:50 +0000", T_2008);
	ok("Sun, 3 Aug 2008 18:02:50 +0200", T_2008);
	ok("Sun, 3 Aug 2008 12:32:50 -0330", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 -0000", T_2008);
	ok("Sun, 3 Aug 2008 16:02 +0000", T_2008 - 50);
	ok("Thu, 01 Jan 1970 00:00:00 +0000", 0);
	ok("Mon, 1 Jan 1900 00:00:00 +0000", utc(1900, 1, 1, 0, 0, 0));
	ok("Fri, 31 Dec 9999 23:59:59 +0000", utc(9999, 12, 31, 23, 59, 59));
	ok("Sun, 29 Nov 2026 16:06:12 +0000", utc(2026, 11, 29, 16, 6, 12));
	/* the zone may move the instant across a day, month or year */
	ok("1 Jan 2000 00:30 +0100", utc(1999, 12, 31, 23, 30, 0));
	ok("31 Dec 1999 23:30 -2359", utc(2000, 1, 1, 23, 29, 0));
}
END_TEST

START_TEST(test_day_of_week)
{
	static const char *const names[] = { "Mon", "tue", "WED", "Thursday", "FRIDAY",
					     "saturday", "Sun", "sUnDaY" };

	for (size_t i = 0; i < FG_ARRAY_SIZE(names); i++) {
		char buf[80];

		/* the weekday need not match the date (not checked, as INN) */
		snprintf(buf, sizeof(buf), "%s, 3 Aug 2008 16:02:50 +0000", names[i]);
		ok(buf, T_2008);
	}
	ok("Sun ,3 Aug 2008 16:02:50 +0000", T_2008);
	ok("Sun,3 Aug 2008 16:02:50 +0000", T_2008);
	fails("Sux, 3 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);
	fails("Su, 3 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);
	fails("Sundays, 3 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);
	fails("Sun 3 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);
	fails("Sun; 3 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);
	fails("Sun,", FG_DATE_E_DAY);
	fails("Sun", FG_DATE_E_DAY_NAME);
	fails("Aug 3 2008 16:02:50 +0000", FG_DATE_E_DAY_NAME);	/* ctime order */
}
END_TEST

START_TEST(test_months)
{
	static const char *const m[12][4] = {
		{ "Jan", "jan", "JANUARY", "Jan." }, { "Feb", "fEb", "February", "feb." },
		{ "Mar", "MAR", "march", "Mar." }, { "Apr", "apr", "April", "Apr." },
		{ "May", "MAY", "may", "May." }, { "Jun", "jun", "June", "Jun." },
		{ "Jul", "jul", "July", "Jul." }, { "Aug", "aUG", "August", "Aug." },
		{ "Sep", "sep", "September", "Sep." }, { "Oct", "OCT", "October", "Oct." },
		{ "Nov", "nov", "November", "Nov." }, { "Dec", "dec", "DECEMBER", "Dec." },
	};

	for (int i = 0; i < 12; i++) {
		for (int j = 0; j < 4; j++) {
			char buf[80];

			snprintf(buf, sizeof(buf), "7 %s 2021 10:00 +0000", m[i][j]);
			ok(buf, utc(2021, i + 1, 7, 10, 0, 0));
		}
	}
	fails("7 Sept 2021 10:00 +0000", FG_DATE_E_MONTH);
	fails("7 Ja 2021 10:00 +0000", FG_DATE_E_MONTH);
	fails("7 Januar 2021 10:00 +0000", FG_DATE_E_MONTH);
	fails("7 2021 10:00 +0000", FG_DATE_E_MONTH);
	fails("7 08 2021 10:00 +0000", FG_DATE_E_MONTH);
	fails("7 August. 2021 10:00 +0000", FG_DATE_E_YEAR);
	fails("7-Aug-2021 10:00 +0000", FG_DATE_E_MONTH);	/* RFC 850 style */
}
END_TEST

START_TEST(test_days_and_years)
{
	ok("9 Aug 2008 00:00 +0000", utc(2008, 8, 9, 0, 0, 0));
	ok("09 Aug 2008 00:00 +0000", utc(2008, 8, 9, 0, 0, 0));
	fails("009 Aug 2008 00:00 +0000", FG_DATE_E_DAY);
	fails("0 Aug 2008 00:00 +0000", FG_DATE_E_DAY);
	fails("32 Aug 2008 00:00 +0000", FG_DATE_E_DAY);
	fails("99 Aug 2008 00:00 +0000", FG_DATE_E_DAY);
	fails("Sun, Aug 2008 00:00 +0000", FG_DATE_E_DAY);
	/* RFC 5322 4.3: two digits 00-49 -> 20xx, 50-99 -> 19xx; three +1900 */
	ok("1 Jan 00 00:00 +0000", utc(2000, 1, 1, 0, 0, 0));
	ok("1 Jan 08 00:00 +0000", utc(2008, 1, 1, 0, 0, 0));
	ok("1 Jan 49 00:00 +0000", utc(2049, 1, 1, 0, 0, 0));
	ok("1 Jan 50 00:00 +0000", utc(1950, 1, 1, 0, 0, 0));
	ok("1 Jan 99 00:00 +0000", utc(1999, 1, 1, 0, 0, 0));
	ok("1 Jan 108 00:00 +0000", utc(2008, 1, 1, 0, 0, 0));
	ok("1 Jan 049 00:00 +0000", utc(1949, 1, 1, 0, 0, 0));
	ok("1 Jan 999 00:00 +0000", utc(2899, 1, 1, 0, 0, 0));
	/* four or more digits are the year itself (4*DIGIT) */
	ok("1 Jan 1900 00:00 +0000", utc(1900, 1, 1, 0, 0, 0));
	ok("1 Jan 02008 00:00 +0000", utc(2008, 1, 1, 0, 0, 0));
	ok("1 Jan 9999 00:00 +0000", utc(9999, 1, 1, 0, 0, 0));
	fails("1 Jan 1899 00:00 +0000", FG_DATE_E_YEAR);
	fails("1 Jan 0049 00:00 +0000", FG_DATE_E_YEAR);
	fails("1 Jan 10000 00:00 +0000", FG_DATE_E_YEAR);
	fails("1 Jan 99999999999999999999 00:00 +0000", FG_DATE_E_YEAR);
	fails("1 Jan 8 00:00 +0000", FG_DATE_E_YEAR);
	fails("1 Jan 00:00 +0000", FG_DATE_E_TIME);	/* "00" is the year */
	fails("1 Jan +0000", FG_DATE_E_YEAR);
	fails("1 Jan", FG_DATE_E_YEAR);
}
END_TEST

START_TEST(test_calendar_edges)
{
	ok("29 Feb 2008 12:00 +0000", utc(2008, 2, 29, 12, 0, 0));
	ok("29 Feb 2000 12:00 +0000", utc(2000, 2, 29, 12, 0, 0));
	ok("29 Feb 2400 12:00 +0000", utc(2400, 2, 29, 12, 0, 0));
	fails("29 Feb 2009 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("29 Feb 1900 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("29 Feb 2100 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("30 Feb 2008 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("31 Apr 2008 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("31 Jun 2008 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("31 Sep 2008 12:00 +0000", FG_DATE_E_INVALID_DATE);
	fails("31 Nov 2008 12:00 +0000", FG_DATE_E_INVALID_DATE);
	ok("31 Dec 2008 12:00 +0000", utc(2008, 12, 31, 12, 0, 0));
	/* the day error comes before a later time error */
	fails("30 Feb 2008 25:00 +0000", FG_DATE_E_INVALID_DATE);
}
END_TEST

START_TEST(test_times)
{
	ok("3 Aug 2008 00:00:00 +0000", utc(2008, 8, 3, 0, 0, 0));
	ok("3 Aug 2008 23:59:59 +0000", utc(2008, 8, 3, 23, 59, 59));
	ok("3 Aug 2008 6:02:50 +0000", utc(2008, 8, 3, 6, 2, 50));
	ok("3 Aug 2008 16:2:5 +0000", utc(2008, 8, 3, 16, 2, 5));
	ok("3 Aug 2008 16 : 02 : 50 +0000", T_2008);
	ok("3 Aug 2008 16(h):(m)02:50 +0000", T_2008);
	/* leap second: RFC 5322 3.3 allows :60; it is the next second */
	ok("31 Dec 2016 23:59:60 +0000", utc(2017, 1, 1, 0, 0, 0));
	ok("30 Jun 2015 23:59:60 +0000", utc(2015, 7, 1, 0, 0, 0));
	ok("1 Jan 2017 00:59:60 +0100", utc(2017, 1, 1, 0, 0, 0));
	fails("3 Aug 2008 24:00:00 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16:60:00 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16:02:61 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 016:02:50 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16:002:50 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16:02:050 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16: +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16:02: +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008 16.02.50 +0000", FG_DATE_E_TIME);
	fails("3 Aug 2008", FG_DATE_E_TIME);
	fails("3 Aug 2008 1602 +0000", FG_DATE_E_TIME);
}
END_TEST

START_TEST(test_zones)
{
	static const struct {
		const char *zone;
		int hours;
	} named[] = {
		{ "UT", 0 }, { "GMT", 0 }, { "UTC", 0 }, { "Z", 0 }, { "gmt", 0 }, { "Ut", 0 },
		{ "EST", -5 }, { "EDT", -4 }, { "CST", -6 }, { "CDT", -5 },
		{ "MST", -7 }, { "MDT", -6 }, { "PST", -8 }, { "pdt", -7 },
	};
	char buf[80];

	for (size_t i = 0; i < FG_ARRAY_SIZE(named); i++) {
		snprintf(buf, sizeof(buf), "Sun, 3 Aug 2008 16:02:50 %s", named[i].zone);
		ok(buf, T_2008 - named[i].hours * 3600);
	}
	/* RFC 5322 4.3: military zones are all taken as -0000; J is none */
	for (int c = 'A'; c <= 'z'; c++) {
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
			continue;
		snprintf(buf, sizeof(buf), "Sun, 3 Aug 2008 16:02:50 %c", c);
		if (c == 'J' || c == 'j')
			fails(buf, FG_DATE_E_ZONE);
		else
			ok(buf, T_2008);
	}
	ok("Sun, 3 Aug 2008 16:02:50GMT", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50+0000", T_2008);
	ok("3 Aug 2008 16:02:50 +2359", T_2008 - 23 * 3600 - 59 * 60);
	ok("3 Aug 2008 16:02:50 -2359", T_2008 + 23 * 3600 + 59 * 60);
	fails("3 Aug 2008 16:02:50", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 (no zone)", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 CEST", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 GMTX", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +100", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +01000", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +2400", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +0060", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +01:00", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 + 0100", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 0100", FG_DATE_E_ZONE);
	fails("3 Aug 2008 16:02:50 +", FG_DATE_E_ZONE);
}
END_TEST

START_TEST(test_cfws)
{
	ok("  Sun,  3  Aug  2008  16:02:50  +0000  ", T_2008);
	ok("\tSun,\t3\tAug\t2008\t16:02:50\t+0000\t", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (UTC)", T_2008);
	ok("(c) Sun, 3 Aug 2008 16:02:50 +0000", T_2008);
	ok("Sun(a), (b)3(c) Aug(d)2008(e)16:02:50(f)+0000(g)", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (a (nested (deeply)) comment)", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (escaped \\) and \\( parens)", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (\\\\)", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (Mitteleurop\xc3\xa4ische Zeit)", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (ctl \x01\x7f)", T_2008);
	ok("3Aug2008 16:02:50GMT", T_2008);
	/* folding: CRLF or LF followed by WSP */
	ok("Sun, 3 Aug 2008\r\n 16:02:50 +0000", T_2008);
	ok("Sun, 3 Aug 2008\n\t16:02:50 +0000", T_2008);
	ok("Sun,\r\n 3\r\n Aug\r\n 2008\r\n 16:02:50\r\n +0000", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000 (folded\r\n comment)", T_2008);
	/* one line terminator may end the input */
	ok("Sun, 3 Aug 2008 16:02:50 +0000\r\n", T_2008);
	ok("Sun, 3 Aug 2008 16:02:50 +0000\n", T_2008);
	fails("Sun, 3 Aug 2008 16:02:50 +0000\r\n\r\n", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008 16:02:50 +0000\r", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008\r\n16:02:50 +0000", FG_DATE_E_TIME);
	fails("Sun, 3 Aug 2008\r 16:02:50 +0000", FG_DATE_E_TIME);
	/* comments */
	fails("Sun, 3 Aug 2008 16:02:50 +0000 (unterminated", FG_DATE_E_COMMENT);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 (a (b)", FG_DATE_E_COMMENT);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 (ends in \\", FG_DATE_E_COMMENT);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 (bare\r\nbreak)", FG_DATE_E_COMMENT);
	fails("Sun, (3 Aug 2008 16:02:50 +0000", FG_DATE_E_COMMENT);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 )", FG_DATE_E_TRAILING);
	{
		static const char nul[] = "Sun, 3 Aug 2008 16:02:50 +0000 (a\0b)";
		static const char qnul[] = "Sun, 3 Aug 2008 16:02:50 +0000 (a\\\0b)";
		fg_time_t t;

		ck_assert_int_eq(parse_n(nul, sizeof(nul) - 1, &t), -FG_DATE_E_COMMENT);
		ck_assert_int_eq(parse_n(qnul, sizeof(qnul) - 1, &t), 0);	/* obs-qp */
		ck_assert_int_eq(t, T_2008);
	}
	/* a deep nest is counted, not recursed */
	{
		char buf[FG_DATE_MAX_LEN + 1];
		size_t n = 0, depth = 400;
		fg_time_t t;

		n += (size_t)snprintf(buf, sizeof(buf), "3 Aug 2008 16:02:50 +0000 ");
		memset(buf + n, '(', depth);
		memset(buf + n + depth, ')', depth);
		n += 2 * depth;
		ck_assert_int_eq(parse_n(buf, n, &t), 0);
		ck_assert_int_eq(t, T_2008);
		ck_assert_int_eq(parse_n(buf, n - 1, &t), -FG_DATE_E_COMMENT);
	}
}
END_TEST

START_TEST(test_trailing_and_empty)
{
	fails("Sun, 3 Aug 2008 16:02:50 +0000 junk", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 CEST", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008 16:02:50 GMT+0100", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008 16:02:50 +0000.", FG_DATE_E_TRAILING);
	fails("Sun, 3 Aug 2008 16:02:50 +0000 1", FG_DATE_E_TRAILING);
	fails("", FG_DATE_E_EMPTY);
	fails("   ", FG_DATE_E_EMPTY);
	fails(" (only a comment) \r\n ", FG_DATE_E_EMPTY);
	fails("\r\n", FG_DATE_E_EMPTY);
	fails("garbage", FG_DATE_E_DAY_NAME);
	fails("12345", FG_DATE_E_DAY);
	fails("-1 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY);
	{
		fg_time_t t;

		ck_assert_int_eq(fg_date_parse(NULL, 0, &t), -FG_DATE_E_EMPTY);
		ck_assert_int_eq(fg_date_parse("3 Aug 2008 16:02:50 +0000", 25, NULL), 0);
		/* nothing past len is read */
		ck_assert_int_eq(parse_n("3 Aug 2008 16:02:50 +0000", 22, &t), -FG_DATE_E_ZONE);
	}
}
END_TEST

START_TEST(test_length_limit)
{
	char buf[FG_DATE_MAX_LEN + 2];
	const char *d = "Sun, 3 Aug 2008 16:02:50 +0000";
	size_t n = strlen(d);
	fg_time_t t;

	memcpy(buf, d, n);
	memset(buf + n, ' ', sizeof(buf) - n);
	ck_assert_int_eq(parse_n(buf, FG_DATE_MAX_LEN, &t), 0);
	ck_assert_int_eq(t, T_2008);
	ck_assert_int_eq(parse_n(buf, FG_DATE_MAX_LEN + 1, &t), -FG_DATE_E_TOO_LONG);
	/* the limit is checked first, before any other problem */
	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(parse_n(buf, FG_DATE_MAX_LEN + 1, &t), -FG_DATE_E_TOO_LONG);
}
END_TEST

START_TEST(test_error_names)
{
	ck_assert_str_eq(fg_date_error_str(FG_DATE_OK), "ok");
	ck_assert_str_eq(fg_date_error_str(FG_DATE_E_TRAILING), "trailing-garbage");
	ck_assert_str_eq(fg_date_error_str(FG_DATE_E__COUNT), "?");
	for (int e = 0; e < FG_DATE_E__COUNT; e++) {
		const char *n = fg_date_error_str((enum fg_date_error)e);

		ck_assert_str_ne(n, "?");
		for (int f = 0; f < e; f++)
			ck_assert_str_ne(n, fg_date_error_str((enum fg_date_error)f));
	}
}
END_TEST

/* ---------------------------------------------------------------- inn */

/* The inn reading on an exactly-sized heap copy: ASan sees any read past
 * `len`, which INN's own parser would make after a prefix-matched zone. */
static int inn_n(const char *s, size_t len, fg_time_t *t, struct fg_date_reading *r)
{
	char *p = malloc(len ? len : 1);
	int rc;

	ck_assert_ptr_nonnull(p);
	memcpy(p, s, len);
	rc = fg_date_parse_inn(p, len, t, r);
	free(p);
	return rc;
}

static void inn_ok(const char *s, fg_time_t want, uint32_t notes)
{
	struct fg_date_reading r;
	fg_time_t t = -1;
	int rc = inn_n(s, strlen(s), &t, &r);

	ck_assert_msg(rc == 0 && t == want && r.notes == notes,
		      "\"%s\": rc %d (%s), t %lld (want %lld), notes 0x%x (want 0x%x)", s, rc,
		      fg_date_error_str(-rc), (long long)t, (long long)want, r.notes, notes);
}

static void inn_fails(const char *s, size_t len, enum fg_date_error e)
{
	fg_time_t t = 12345;
	int rc = inn_n(s, len, &t, NULL);

	ck_assert_msg(rc == -(int)e, "\"%.*s\": rc %d (%s), want %s", (int)len, s, rc,
		      fg_date_error_str(-rc), fg_date_error_str(e));
	ck_assert_int_eq(t, 12345);
}

/* What the strict reading takes, the inn reading takes alike (from 1970). */
START_TEST(test_inn_plain_forms)
{
	inn_ok("Sun, 03 Aug 2008 16:02:50 +0000", T_2008, 0);
	inn_ok("3 Aug 2008 16:02:50 GMT", T_2008, 0);
	inn_ok("Sunday, 3 August 2008 18:02:50 +0200 (CEST)", T_2008, 0);
	inn_ok("Sun, 3 Aug 08 12:02:50 EDT", T_2008, 0);
	inn_ok("Sun, 3 Aug 108 16:02:50 UTC", T_2008, 0);
	inn_ok("  Sun , 3 Aug.\r\n 2008 16 : 02 : 50 Z\r\n", T_2008, 0);
	inn_ok("Sun, 03 Aug 2008 16:02 +0000", T_2008 - 50, 0);
	inn_ok("Thu, 01 Jan 1970 00:00:00 +0000", 0, 0);
}
END_TEST

/* What innd accepts and the strict reading refuses, with its notes. */
START_TEST(test_inn_lenient_forms)
{
	inn_ok("Funday, 3 Aug 2008 16:02:50 +0000", T_2008, FG_DATE_NOTE_BEFORE_DAY);
	inn_ok("Sun 3 Aug 2008 16:02:50 +0000", T_2008, FG_DATE_NOTE_BEFORE_DAY);
	inn_ok("3 Aug 0008 16:02:50 +0000", T_2008, FG_DATE_NOTE_YEAR_VALUE);
	inn_ok("3 Aug 2008 16:02:50 XYZ", T_2008, FG_DATE_NOTE_ZONE_UNKNOWN);
	inn_ok("3 Aug 2008 18:02:50 MEZT", T_2008, FG_DATE_NOTE_ZONE_NAME);
	inn_ok("3 Aug 2008 11:02:50 ES", T_2008, FG_DATE_NOTE_ZONE_NAME);	/* EST */
	inn_ok("3 Aug 2008 18:02:50 +2", T_2008, FG_DATE_NOTE_ZONE_DIGITS);
	inn_ok("3 Aug 2008 17:02:50 +100", T_2008, FG_DATE_NOTE_ZONE_DIGITS);
	inn_ok("3 Aug 2008 18:02:50 +0000 CEST", T_2008, FG_DATE_NOTE_ZONE_LAST | FG_DATE_NOTE_ZONE_NAME);
	inn_ok("3 Aug 2008 16:02:50 +0000 junk", T_2008, FG_DATE_NOTE_TRAILING);
	inn_ok("3 Aug 2008 16:02:50 (open comment", T_2008, FG_DATE_NOTE_ZONE_MISSING);
	inn_ok("3 Aug 2008 16:02:50 +0000 (open", T_2008, 0);
	inn_ok("3\nAug 2008 16:02:50 +0000", T_2008, 0);	/* LF anywhere */
	inn_fails("3\rAug 2008 16:02:50 +0000", 25, FG_DATE_E_MONTH);	/* a bare CR: no */
}
END_TEST

/* innd's misreadings: accepted as innd does, the instant the text states. */
START_TEST(test_inn_misreadings)
{
	struct fg_date_reading r;
	fg_time_t t;

	inn_ok("3 Aug 2008 21:32:50 +05:30", T_2008, FG_DATE_NOTE_ZONE_DIGITS |
	       FG_DATE_NOTE_TRAILING | FG_DATE_NOTE_MISREAD_RESET);
	inn_ok("3 Aug 2008 18:02:50 +0200 junk", T_2008, FG_DATE_NOTE_TRAILING |
	       FG_DATE_NOTE_MISREAD_RESET);
	inn_ok("3 Aug 2008 08:02:50 -0800 PST8PDT", T_2008, FG_DATE_NOTE_ZONE_LAST |
	       FG_DATE_NOTE_TRAILING | FG_DATE_NOTE_MISREAD_RESET);
	inn_ok("3 Aug 2008 16:02:50 E", T_2008, FG_DATE_NOTE_MISREAD_LETTER);
	inn_ok("3 Aug 2008 16:02:50 p\r\n", T_2008, FG_DATE_NOTE_MISREAD_LETTER);
	inn_ok("3 Aug 2008 17:02:50 +1 (CET)", T_2008, FG_DATE_NOTE_ZONE_DIGITS |
	       FG_DATE_NOTE_MISREAD_DIGITS);
	ck_assert_int_eq(inn_n("3 Aug 2008 16:02:50 E", 21, &t, &r), 0);
	ck_assert_int_eq(r.inn_zone, -4 * 3600);
	ck_assert_int_eq(r.zone, 0);
	ck_assert(!fg_date_reading_trusted(&r));
	/* a prefix innd then drops stated nothing: +0000 for both */
	inn_ok("3 Aug 2008 16:02:50 CS junk", T_2008, FG_DATE_NOTE_ZONE_NAME | FG_DATE_NOTE_TRAILING);
}
END_TEST

START_TEST(test_inn_refusals)
{
	static const struct {
		const char *s;
		enum fg_date_error e;
	} bad[] = {
		{ "", FG_DATE_E_EMPTY },
		{ " (only a comment) ", FG_DATE_E_EMPTY },
		{ "Sun, Aug 3 2008 16:02:50 +0000", FG_DATE_E_DAY },
		{ "Sun, 3 Sept 2008 16:02:50 +0000", FG_DATE_E_MONTH },
		{ "3 Aug 8 16:02:50 +0000", FG_DATE_E_YEAR },
		{ "3 Aug 1969 16:02:50 +0000", FG_DATE_E_YEAR },
		{ "3 Aug 1000 16:02:50 +0000", FG_DATE_E_YEAR },
		{ "3 Aug 2008 24:02:50 +0000", FG_DATE_E_TIME },
		{ "3 Aug 2008 16:60:50 +0000", FG_DATE_E_TIME },
		{ "3 Aug 2008 16:02:61 +0000", FG_DATE_E_TIME },
		{ "3 Aug 2008 16.02.50 +0000", FG_DATE_E_TIME },
		{ "0 Aug 2008 16:02:50 +0000", FG_DATE_E_DAY },
		{ "31 Apr 2008 16:02:50 +0000", FG_DATE_E_INVALID_DATE },
		{ "29 Feb 2009 16:02:50 +0000", FG_DATE_E_INVALID_DATE },
		{ "3 Aug 2008 16:02:50 +x", FG_DATE_E_ZONE },
		{ "3 Aug 2008 16:02:50 GMT -", FG_DATE_E_ZONE },
		{ "1 Jan 1970 00:00:59 +0001", FG_DATE_E_INN_MINUS_ONE },
	};

	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++)
		inn_fails(bad[i].s, strlen(bad[i].s), bad[i].e);
	inn_fails("3 Aug 2008\0 16:02:50 +0000", 26, FG_DATE_E_NUL);
	inn_ok("29 Feb 2008 16:02:50 +0000", utc(2008, 2, 29, 16, 2, 50), 0);
}
END_TEST

START_TEST(test_inn_words)
{
	static const struct {
		const char *s, *words;
	} ex[] = {
		{ "3 Aug 2008 16:02:50 CEST", "zone name CEST read as +0200, as INN does" },
		{ "3 Aug 2008 16:02:50", "no zone: read as UTC (innd reads the server's local time)" },
		{ "3 Aug 2008 16:02:50 +5", "numeric zone +5 read as +0500, as INN does" },
		{ "3 Aug 2008 16:02:50 XYZ", "zone \"XYZ\" unknown: read as +0000, as INN does" },
		{ "Fun 3 Aug 2008 16:02:50 UT", "text before the day (\"Fun \") skipped, as INN does" },
		{ "3 Aug 2008 16:02:50 +05:30", "INN reads +0000, as it drops a zone followed by text "
		  "it cannot read; floodgate uses the zone as written, +05 = +0530" },
		{ "3 Aug 2008 16:02:50 M", "INN reads the one-letter zone M as a US zone, -0600; "
		  "floodgate reads it as RFC 5322 4.3 does, -0000" },
		{ "3 Aug 2008 16:02:50 GMT 5", "text after the zone ignored, as INN does" },
		{ "3 Aug 2008 16:02:50 GMT", "" },
	};
	struct fg_date_reading r;
	char buf[512], tiny[8];

	for (size_t i = 0; i < FG_ARRAY_SIZE(ex); i++) {
		ck_assert_int_eq(inn_n(ex[i].s, strlen(ex[i].s), NULL, &r), 0);
		fg_date_reading_describe(&r, ex[i].s, strlen(ex[i].s), buf, sizeof(buf));
		ck_assert_str_eq(buf, ex[i].words);
	}
	/* truncated, never overrun */
	ck_assert_int_eq(inn_n(ex[0].s, strlen(ex[0].s), NULL, &r), 0);
	ck_assert_uint_eq(fg_date_reading_describe(&r, ex[0].s, strlen(ex[0].s), tiny, sizeof(tiny)), 7);
	ck_assert_str_eq(tiny, "zone na");
	ck_assert_str_eq(fg_date_note_name(FG_DATE_NOTE_MISREAD_RESET), "misread-reset");
	ck_assert_str_eq(fg_date_note_name(FG_DATE_NOTE_ZONE_NAME | FG_DATE_NOTE_TRAILING), "?");
	ck_assert_str_eq(fg_date_syntax_name(FG_DATE_SYNTAX_INN), "inn");
	ck_assert_str_eq(fg_date_syntax_name(FG_DATE_SYNTAX_RFC5322), "rfc5322");
	/* the dispatcher: rfc5322 leaves no reading behind */
	memset(&r, 0xff, sizeof(r));
	ck_assert_int_eq(fg_date_parse_as(FG_DATE_SYNTAX_RFC5322, ex[0].s, strlen(ex[0].s), NULL, &r),
			 -FG_DATE_E_ZONE);
	ck_assert_uint_eq(r.notes, 0);
	ck_assert_int_eq(fg_date_parse_as(FG_DATE_SYNTAX_INN, ex[0].s, strlen(ex[0].s), NULL, &r), 0);
	ck_assert_uint_eq(r.notes, FG_DATE_NOTE_ZONE_NAME);
}
END_TEST

START_TEST(test_format)
{
	char buf[FG_DATE_FORMAT_LEN + 1];

	ck_assert_int_eq(fg_date_format(0, buf, sizeof(buf)), FG_DATE_FORMAT_LEN);
	ck_assert_str_eq(buf, "Thu, 01 Jan 1970 00:00:00 +0000");
	ck_assert_int_eq(fg_date_format(T_2008, buf, sizeof(buf)), FG_DATE_FORMAT_LEN);
	ck_assert_str_eq(buf, "Sun, 03 Aug 2008 16:02:50 +0000");
	fg_date_format(utc(2026, 11, 29, 16, 6, 12), buf, sizeof(buf));
	ck_assert_str_eq(buf, "Sun, 29 Nov 2026 16:06:12 +0000");
	fg_date_format(-1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Wed, 31 Dec 1969 23:59:59 +0000");
	fg_date_format(FG_DATE_FORMAT_MIN, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Mon, 01 Jan 1900 00:00:00 +0000");
	fg_date_format(FG_DATE_FORMAT_MAX, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Fri, 31 Dec 9999 23:59:59 +0000");
	fg_date_format(utc(2000, 2, 29, 1, 2, 3), buf, sizeof(buf));
	ck_assert_str_eq(buf, "Tue, 29 Feb 2000 01:02:03 +0000");
	ck_assert_int_eq(fg_date_format(FG_DATE_FORMAT_MIN - 1, buf, sizeof(buf)), -ERANGE);
	ck_assert_int_eq(fg_date_format(FG_DATE_FORMAT_MAX + 1, buf, sizeof(buf)), -ERANGE);
	ck_assert_int_eq(fg_date_format(INT64_MIN, buf, sizeof(buf)), -ERANGE);
	ck_assert_int_eq(fg_date_format(0, buf, FG_DATE_FORMAT_LEN), -ENOSPC);
}
END_TEST

/* every day 1900..9999: consecutive, and each formats to its own fields */
START_TEST(test_every_day)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static const char *const wday[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	fg_time_t prev = fg_date_from_civil(1899, 12, 31, 0, 0, 0);
	int wd = 0;	/* 1 Jan 1900 was a Monday; wd counts from Sunday */
	char buf[FG_DATE_FORMAT_LEN + 1], want[64];

	ck_assert_int_eq(prev, utc(1899, 12, 31, 0, 0, 0));
	for (int y = 1900; y <= 9999; y++) {
		for (int m = 1; m <= 12; m++) {
			static const int dim[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
			int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
			int n = dim[m - 1] + (m == 2 && leap);

			for (int d = 1; d <= n; d++) {
				fg_time_t t = fg_date_from_civil(y, m, d, 0, 0, 0);

				wd = (wd + 1) % 7;
				if (t != prev + 86400)
					ck_abort_msg("%d-%d-%d: %lld", y, m, d, (long long)t);
				prev = t;
				if (d % 7 != 1 && y % 97 != 0)
					continue;	/* format a sample, all of some years */
				fg_date_format(t + 3661, buf, sizeof(buf));
				snprintf(want, sizeof(want), "%s, %02d %s %04d 01:01:01 +0000",
					 wday[wd], d, mon[m - 1], y);
				if (strcmp(buf, want) != 0)
					ck_abort_msg("%s != %s", buf, want);
			}
		}
	}
}
END_TEST

START_TEST(test_from_civil)
{
	ck_assert_int_eq(fg_date_from_civil(1970, 1, 1, 0, 0, 0), 0);
	ck_assert_int_eq(fg_date_from_civil(2008, 8, 3, 16, 2, 50), T_2008);
	/* fields are taken as they come */
	ck_assert_int_eq(fg_date_from_civil(2008, 8, 32, 0, 0, 0), utc(2008, 9, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2008, 13, 1, 0, 0, 0), utc(2009, 1, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2008, 0, 1, 0, 0, 0), utc(2007, 12, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2008, -11, 1, 0, 0, 0), utc(2007, 1, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2008, -12, 1, 0, 0, 0), utc(2006, 12, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2008, 25, 1, 0, 0, 0), utc(2010, 1, 1, 0, 0, 0));
	ck_assert_int_eq(fg_date_from_civil(2016, 12, 31, 23, 59, 60), utc(2017, 1, 1, 0, 0, 0));
}
END_TEST

static uint64_t rng_state = 0xda7e5eed12345678ull;

static uint64_t rng(void)
{
	return fg_test_rng(&rng_state);
}

/* format -> parse is the identity; parse agrees with timegm in any zone */
START_TEST(test_round_trip)
{
	char buf[FG_DATE_FORMAT_LEN + 1], in[96];
	uint64_t span = (uint64_t)(FG_DATE_FORMAT_MAX - FG_DATE_FORMAT_MIN) + 1;

	for (int i = 0; i < 200000; i++) {
		fg_time_t t = FG_DATE_FORMAT_MIN + (fg_time_t)(rng() % span), back = 0;
		struct tm tm;
		time_t tt = (time_t)t;
		int zh = (int)(rng() % 24), zm = (int)(rng() % 60), sign = rng() & 1 ? 1 : -1;

		if (i % 4 == 0)	/* a quarter near now, where articles live */
			t = 1700000000 + (fg_time_t)(rng() % (100u * 365 * 86400));
		if (fg_date_format(t, buf, sizeof(buf)) != FG_DATE_FORMAT_LEN ||
		    fg_date_parse(buf, FG_DATE_FORMAT_LEN, &back) != 0 || back != t)
			ck_abort_msg("%lld -> %s -> %lld", (long long)t, buf, (long long)back);
		/* the same instant written in a random zone, the obsolete way */
		tt = (time_t)(t + sign * (zh * 3600 + zm * 60));
		gmtime_r(&tt, &tm);
		if (tm.tm_year + 1900 < 1900 || tm.tm_year + 1900 > 9999)
			continue;
		snprintf(in, sizeof(in), "%d %s %d %d:%02d:%02d %c%02d%02d", tm.tm_mday,
			 (const char *[]){ "jan", "feb", "mar", "apr", "may", "jun", "jul",
					   "aug", "sep", "oct", "nov", "dec" }[tm.tm_mon],
			 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 sign > 0 ? '+' : '-', zh, zm);
		if (fg_date_parse(in, strlen(in), &back) != 0 || back != t)
			ck_abort_msg("%s: %lld != %lld", in, (long long)back, (long long)t);
	}
}
END_TEST

static Suite *date_suite(void)
{
	Suite *s = suite_create("date");
	TCase *tp = tcase_create("parse");
	TCase *tc = tcase_create("calendar");

	tcase_add_test(tp, test_canonical);
	tcase_add_test(tp, test_day_of_week);
	tcase_add_test(tp, test_months);
	tcase_add_test(tp, test_days_and_years);
	tcase_add_test(tp, test_calendar_edges);
	tcase_add_test(tp, test_times);
	tcase_add_test(tp, test_zones);
	tcase_add_test(tp, test_cfws);
	tcase_add_test(tp, test_trailing_and_empty);
	tcase_add_test(tp, test_length_limit);
	tcase_add_test(tp, test_error_names);
	tcase_add_test(tp, test_inn_plain_forms);
	tcase_add_test(tp, test_inn_lenient_forms);
	tcase_add_test(tp, test_inn_misreadings);
	tcase_add_test(tp, test_inn_refusals);
	tcase_add_test(tp, test_inn_words);
	suite_add_tcase(s, tp);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_every_day);
	tcase_add_test(tc, test_from_civil);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(date_suite)
