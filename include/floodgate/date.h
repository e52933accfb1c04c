/* SPDX-License-Identifier: MIT */
/*
 * date.h — RFC 5322 date-time, with the obsolete forms news software emits.
 *
 * Accepted (RFC 5322 3.3 and 4.3, and what RFC 5536/5537 allow readers to
 * meet): optional day-of-week, folding whitespace and comments anywhere
 * CFWS may appear, 1- or 2-digit day, month names in any case, 2-digit
 * years (00-49 -> 20xx, 50-99 -> 19xx) and 3-digit years (+1900), seconds
 * optional, numeric zones (+hhmm/-hhmm, hh <= 23? see docs), alphabetic
 * zones UT, GMT, Z, EST/EDT, CST/CDT, MST/MDT, PST/PDT, and single-letter
 * military zones (treated as -0000, RFC 5322 4.3). A leap second (:60) is
 * accepted and folded into the next second. Everything else, and anything
 * unambiguous left over at the end, is an error with a name.
 *
 * Times are returned as UTC seconds since the Unix epoch (fg_time_t).
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
	FG_DATE_E_ZONE,		/* zone missing or unknown */
	FG_DATE_E_INVALID_DATE,	/* fields in range but no such day (Feb 30, Feb 29 of a common year) */
	FG_DATE_E_TRAILING,	/* something after the zone that is not a comment */
	FG_DATE_E_COMMENT,	/* unterminated or too deeply nested comment */
	FG_DATE_E_TOO_LONG,	/* more than FG_DATE_MAX_LEN octets */
	FG_DATE_E__COUNT
};

#define FG_DATE_MAX_LEN 998	/* RFC 5322 2.1.1 line limit */

/* 0 and *out set, or a negative enum fg_date_error (-FG_DATE_E_...). */
int fg_date_parse(const char *s, size_t len, fg_time_t *out);
const char *fg_date_error_str(enum fg_date_error e);

/* Format as RFC 5322 "Sun, 29 Nov 2026 16:06:12 +0000"; returns length. */
int fg_date_format(fg_time_t t, char *buf, size_t len);

/* Calendar helpers exposed for tests and tools. */
fg_time_t fg_date_from_civil(int year, int month, int day, int hour, int min, int sec);

#endif /* FLOODGATE_DATE_H */
