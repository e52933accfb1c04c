/* SPDX-License-Identifier: MIT */
/*
 * date.h — RFC 5322 date-time, with the obsolete forms news software emits.
 *
 * Accepted (RFC 5322 3.3 and 4.3, and what RFC 5536/5537 allow readers to
 * meet): optional day-of-week (three-letter or full English name, any
 * case, then a comma), folding whitespace (CRLF or LF followed by WSP)
 * and comments (nested, with quoted-pairs) anywhere CFWS may appear and
 * between any two tokens, 1- or 2-digit day, month names in any case
 * (three letters, three letters and a dot, or the full English name),
 * 2-digit years (00-49 -> 20xx, 50-99 -> 19xx), 3-digit years (+1900),
 * 4-or-more-digit years 1900..9999, 1- or 2-digit hour, minute and second,
 * seconds optional, numeric zones +hhmm/-hhmm with hh <= 23 and mm <= 59,
 * alphabetic zones UT, GMT, UTC, Z, EST/EDT, CST/CDT, MST/MDT, PST/PDT,
 * and single-letter military zones (treated as -0000, RFC 5322 4.3). A
 * leap second (:60) is accepted and folded into the next second. One
 * line terminator (CRLF or LF) may end the input. A day-of-week that does
 * not match the date is not checked. Everything else is an error with a
 * name; docs/rules.md lists every decision and how it compares with INN.
 *
 * Times are returned as UTC seconds since the Unix epoch (fg_time_t).
 * Pure arithmetic (days from the civil calendar): no mktime, timegm, TZ
 * or locale; no allocation; nothing past `len` is read.
 */
#ifndef FLOODGATE_DATE_H
#define FLOODGATE_DATE_H

#include <stddef.h>

#include "floodgate/common.h"

enum fg_date_error {
	FG_DATE_OK = 0,
	FG_DATE_E_EMPTY,	/* nothing but whitespace/comments */
	FG_DATE_E_DAY_NAME,	/* a day-of-week that is not Mon..Sun, or no comma after it */
	FG_DATE_E_DAY,		/* day missing or not 1..31 */
	FG_DATE_E_MONTH,	/* not a month name */
	FG_DATE_E_YEAR,		/* missing, or outside 1900..9999 after obsolete-year mapping */
	FG_DATE_E_TIME,		/* hh:mm[:ss] missing or out of range */
	FG_DATE_E_ZONE,		/* zone missing, unknown, or offset out of range */
	FG_DATE_E_INVALID_DATE,	/* fields in range but no such day (Feb 30, Feb 29 of a common year) */
	FG_DATE_E_TRAILING,	/* something after the zone that is not CFWS */
	FG_DATE_E_COMMENT,	/* unterminated comment, or a NUL or bare line break in one */
	FG_DATE_E_TOO_LONG,	/* more than FG_DATE_MAX_LEN octets */
	FG_DATE_E__COUNT
};

#define FG_DATE_MAX_LEN 998	/* RFC 5322 2.1.1 line limit */

/* fg_date_format() writes exactly this many characters plus a NUL. */
#define FG_DATE_FORMAT_LEN 31

/* What fg_date_format() can write: 1900-01-01T00:00:00Z .. 9999-12-31T23:59:59Z. */
#define FG_DATE_FORMAT_MIN ((fg_time_t)-2208988800LL)
#define FG_DATE_FORMAT_MAX ((fg_time_t)253402300799LL)

/* 0 and *out set (out may be NULL to only validate), or a negative enum
 * fg_date_error (-FG_DATE_E_...). When two things are wrong, the error is
 * the first met reading left to right. */
int fg_date_parse(const char *s, size_t len, fg_time_t *out);
/* Short names ("ok", "bad-zone", "trailing-garbage", ...); "?" if out of
 * range. Accepts the positive enum value (negate fg_date_parse's result). */
const char *fg_date_error_str(enum fg_date_error e);

/* Format as RFC 5322 "Sun, 29 Nov 2026 16:06:12 +0000" (two-digit day,
 * always 31 characters). Returns the length, -ENOSPC if len <
 * FG_DATE_FORMAT_LEN + 1, -ERANGE outside FG_DATE_FORMAT_MIN..MAX. */
int fg_date_format(fg_time_t t, char *buf, size_t len);

/* Calendar helpers exposed for tests and tools. No range checks: the
 * proleptic Gregorian calendar, fields taken as they come (month 1..12;
 * day 32 of a month is the 1st of the next), so callers validate. */
fg_time_t fg_date_from_civil(int year, int month, int day, int hour, int min, int sec);

#endif /* FLOODGATE_DATE_H */
