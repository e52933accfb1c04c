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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	FG_DATE_E_NUL,		/* inn: a NUL octet (innd refuses the whole article) */
	FG_DATE_E_INN_MINUS_ONE,/* inn: the instant is -1, INN's error value */
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

/*
 * ------------------------------------------------------------ INN's reading
 *
 * [rules] date-syntax: which dates the filter accepts. `inn`, the default,
 * accepts exactly the Date and Injection-Date values INN 2.7's innd accepts
 * (it reads them with parsedate_rfc5322_lax()) and refuses what it refuses,
 * so the filter never refuses what the site's INN would carry; `rfc5322`
 * is fg_date_parse() above. docs/rules.md, "Date syntax", has both and
 * every way they differ.
 */
enum fg_date_syntax {
	FG_DATE_SYNTAX_INN = 0,
	FG_DATE_SYNTAX_RFC5322 = 1,
};

/*
 * What a reading did that RFC 5322 would not: bits of fg_date_reading.notes.
 * The MISREAD notes mark where INN's instant is wrong by the date's own
 * text (docs/rules.md lists them): the date is accepted, as INN accepts it,
 * but the instant is the one the text states, and such a date never feeds
 * the clock guard, nor does one whose zone is a guess (missing, unknown).
 */
#define FG_DATE_NOTE_BEFORE_DAY		(1u << 0)	/* text before the day skipped */
#define FG_DATE_NOTE_YEAR_VALUE		(1u << 1)	/* a year with leading zeros read by value */
#define FG_DATE_NOTE_ZONE_MISSING	(1u << 2)	/* no zone: UTC (innd: the server's zone) */
#define FG_DATE_NOTE_ZONE_UNKNOWN	(1u << 3)	/* a word INN does not know: +0000 */
#define FG_DATE_NOTE_ZONE_NAME		(1u << 4)	/* a name from INN's table, not RFC 5322's */
#define FG_DATE_NOTE_ZONE_DIGITS	(1u << 5)	/* a numeric zone not of the form +hhmm */
#define FG_DATE_NOTE_ZONE_LAST		(1u << 6)	/* several zones: the last one counts */
#define FG_DATE_NOTE_TRAILING		(1u << 7)	/* text after the zone ignored */
#define FG_DATE_NOTE_MISREAD_RESET	(1u << 8)	/* INN drops the zone for the text after it */
#define FG_DATE_NOTE_MISREAD_LETTER	(1u << 9)	/* INN reads E, C, M, P as US zones */
#define FG_DATE_NOTE_MISREAD_DIGITS	(1u << 10)	/* INN reads "+1 (CET)" as +0001 */

#define FG_DATE_NOTES_MISREAD (FG_DATE_NOTE_MISREAD_RESET | FG_DATE_NOTE_MISREAD_LETTER | \
			       FG_DATE_NOTE_MISREAD_DIGITS)
#define FG_DATE_NOTES_UNTRUSTED (FG_DATE_NOTE_ZONE_MISSING | FG_DATE_NOTE_ZONE_UNKNOWN | \
				 FG_DATE_NOTES_MISREAD)

/* How one date was read; offsets index the parsed text. */
struct fg_date_reading {
	uint32_t notes;			/* FG_DATE_NOTE_* */
	int32_t zone;			/* seconds east of UTC, as used for the instant */
	int32_t inn_zone;		/* as innd reads it: differs only with a MISREAD note */
	uint32_t zone_off, zone_len;	/* the zone word that counted; zone_len 0: none */
	uint32_t year_off, year_len;	/* the year as written */
	uint32_t skip_len;		/* octets skipped before the day (BEFORE_DAY) */
};

/*
 * Read a date as INN 2.7's parsedate_rfc5322_lax() does (innd, TZ=UTC), on
 * (s, len) instead of a C string: innd's header value ends where its line
 * does, and what INN would read past a NUL is taken to be more NULs. The
 * accept/refuse answer is INN's, octet for octet; the instant is INN's
 * except for the MISREAD notes above. `out` and `r` may be NULL. No
 * allocation, no libc time functions, nothing read past `len`.
 */
int fg_date_parse_inn(const char *s, size_t len, fg_time_t *out, struct fg_date_reading *r);

/* fg_date_parse_inn() or fg_date_parse() (which leaves `r` zeroed). */
int fg_date_parse_as(enum fg_date_syntax syntax, const char *s, size_t len, fg_time_t *out,
		     struct fg_date_reading *r);

/* Whether the reading may feed the clock guard (no guessed or misread zone). */
static inline bool fg_date_reading_trusted(const struct fg_date_reading *r)
{
	return (r->notes & FG_DATE_NOTES_UNTRUSTED) == 0;
}

/* "inn" / "rfc5322"; "?" out of range. */
const char *fg_date_syntax_name(enum fg_date_syntax syntax);
/* Short name of one note bit ("zone-name"), "?" for anything else. */
const char *fg_date_note_name(uint32_t note);

/*
 * The reading in words, for `floodctl explain`: one clause per note, "; "
 * between them ("zone name CEST read as +0200, as INN does"); "" when
 * there is none. `s` is the text that was parsed. Returns the length
 * written (truncated to fit, always NUL-terminated when len > 0).
 */
size_t fg_date_reading_describe(const struct fg_date_reading *r, const char *s, size_t slen,
				char *buf, size_t len);

#endif /* FLOODGATE_DATE_H */
