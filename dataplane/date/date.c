/* SPDX-License-Identifier: MIT */
/*
 * date.c — RFC 5322 date-time parser and formatter.
 *
 * The parser is a single left-to-right pass over tokens (a run of
 * letters, a run of digits, or one punctuation octet) separated by CFWS:
 *
 *   [day-name CFWS "," ] day month year hour ":" minute [":" second] zone
 *
 * with CFWS allowed, not required, between any two tokens (RFC 5322 4.3's
 * obs-day, obs-year, obs-hour... all take [CFWS] on both sides), and a
 * token ending where its kind of octet ends: "3Aug2008" is three tokens.
 * Number tokens are read whole, so "02008" is the year 2008 (4*DIGIT) and
 * "123" cannot be a day. Each field is range-checked as soon as it is
 * read, and the day against its month once the year is known, so the
 * error reported is the first problem reading left to right.
 *
 * CFWS (RFC 5322 3.2.2): SP, HTAB, a line break followed by SP or HTAB
 * (CRLF on the wire, LF in plain articles), and comments: nested by a
 * counter, not by recursion, so any depth fits; a "\" quotes the next
 * octet; octets >= 0x80 are allowed in comments (RFC 6532), NUL and a
 * line break not followed by WSP are not. A single CRLF or LF at the very
 * end is the header line's own terminator and is accepted.
 *
 * Time is computed from the civil date by days-from-civil arithmetic
 * (Howard Hinnant's algorithm, proleptic Gregorian), never by mktime.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/date.h"

struct cursor {
	const char *p;
	const char *end;
};

struct date_fields {
	int year, month, day;
	int hour, min, sec;
	int zone;	/* seconds east of UTC */
};

static const char *const date_error_names[FG_DATE_E__COUNT] = {
	[FG_DATE_OK] = "ok",
	[FG_DATE_E_EMPTY] = "empty",
	[FG_DATE_E_DAY_NAME] = "bad-day-name",
	[FG_DATE_E_DAY] = "bad-day",
	[FG_DATE_E_MONTH] = "bad-month",
	[FG_DATE_E_YEAR] = "bad-year",
	[FG_DATE_E_TIME] = "bad-time",
	[FG_DATE_E_ZONE] = "bad-zone",
	[FG_DATE_E_INVALID_DATE] = "no-such-day",
	[FG_DATE_E_TRAILING] = "trailing-garbage",
	[FG_DATE_E_COMMENT] = "bad-comment",
	[FG_DATE_E_TOO_LONG] = "too-long",
	[FG_DATE_E_NUL] = "nul-octet",
	[FG_DATE_E_INN_MINUS_ONE] = "inn-minus-one",
};

const char *fg_date_error_str(enum fg_date_error e)
{
	return (unsigned)e < FG_DATE_E__COUNT ? date_error_names[e] : "?";
}

/* Lower case, so a letter run folded with |0x20 compares directly. */
static const char *const day_names[7] = {
	"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
};
static const char *const month_names[12] = {
	"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december",
};
static const char day_abbr[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char month_abbr[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

/* RFC 5322 4.3 obs-zone, plus UTC (unambiguous, and common in the wild). */
static const struct {
	char name[4];
	int offset;
} zone_names[] = {
	{ "ut", 0 }, { "gmt", 0 }, { "utc", 0 },
	{ "est", -5 * 3600 }, { "edt", -4 * 3600 },
	{ "cst", -6 * 3600 }, { "cdt", -5 * 3600 },
	{ "mst", -7 * 3600 }, { "mdt", -6 * 3600 },
	{ "pst", -8 * 3600 }, { "pdt", -7 * 3600 },
};

static const uint8_t month_days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

static bool is_alpha(char c)
{
	return (unsigned)((c | 0x20) - 'a') < 26;
}

static bool is_digit(char c)
{
	return (unsigned)(c - '0') < 10;
}

static bool is_wsp(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_leap(int64_t y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Length of the line break at p (CRLF or LF), 0 if there is none. */
static size_t line_break(const char *p, const char *end)
{
	if (*p == '\n')
		return 1;
	if (*p == '\r' && p + 1 < end && p[1] == '\n')
		return 2;
	return 0;
}

/* A line break is folding whitespace only when WSP follows it. */
static size_t folding_break(const char *p, const char *end)
{
	size_t n = line_break(p, end);

	return n && p + n < end && is_wsp(p[n]) ? n : 0;
}

/* RFC 5322 3.2.2 comment, c->p at its "(": to after its ")". */
static int skip_comment(struct cursor *c)
{
	const char *p = c->p;
	size_t depth = 0, n;

	while (p < c->end) {
		switch (*p) {
		case '(':
			depth++;
			p++;
			break;
		case ')':
			p++;
			if (--depth == 0) {
				c->p = p;
				return 0;
			}
			break;
		case '\\':	/* quoted-pair, obs-qp: any octet */
			if (p + 1 == c->end)
				return -FG_DATE_E_COMMENT;
			p += 2;
			break;
		case '\r':
		case '\n':
			n = folding_break(p, c->end);
			if (n == 0)
				return -FG_DATE_E_COMMENT;
			p += n;
			break;
		case '\0':
			return -FG_DATE_E_COMMENT;
		default:
			p++;
			break;
		}
	}
	return -FG_DATE_E_COMMENT;
}

static int skip_cfws(struct cursor *c)
{
	size_t n;
	int rc;

	while (c->p < c->end) {
		if (is_wsp(*c->p)) {
			c->p++;
		} else if (*c->p == '(') {
			rc = skip_comment(c);
			if (rc < 0)
				return rc;
		} else if ((n = line_break(c->p, c->end)) != 0 &&
			   (c->p + n == c->end || is_wsp(c->p[n]))) {
			c->p += n;	/* folding, or the final line terminator */
		} else {
			break;
		}
	}
	return 0;
}

/* A run of digits: returns how many, *v their value capped at 10^6. */
static size_t take_digits(struct cursor *c, int *v)
{
	const char *start = c->p;
	int x = 0;

	while (c->p < c->end && is_digit(*c->p)) {
		if (x < 1000000)
			x = x * 10 + (*c->p - '0');
		c->p++;
	}
	*v = x;
	return (size_t)(c->p - start);
}

static size_t take_alpha(struct cursor *c)
{
	const char *start = c->p;

	while (c->p < c->end && is_alpha(*c->p))
		c->p++;
	return (size_t)(c->p - start);
}

/* Does the letter run w[0..n) spell `lower` (lower case) in any case? */
static bool word_is(const char *w, size_t n, const char *lower, size_t len)
{
	if (n != len)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((char)(w[i] | 0x20) != lower[i])
			return false;
	return true;
}

static size_t name_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* The first three letters, lower case, as one number. */
static uint32_t fold3(const char *w)
{
	return (uint32_t)(w[0] | 0x20) << 16 | (uint32_t)(w[1] | 0x20) << 8 | (uint32_t)(w[2] | 0x20);
}

/* Index of w in names[] as a three-letter abbreviation or in full; -1.
 * The abbreviations are unique, so the first three letters decide. */
static int lookup_name(const char *w, size_t n, const char *const *names, int count)
{
	uint32_t key;

	if (n < 3)
		return -1;
	key = fold3(w);
	for (int i = 0; i < count; i++)
		if (key == fold3(names[i]))
			return n == 3 || word_is(w, n, names[i], name_len(names[i])) ? i : -1;
	return -1;
}

/* [day-name ","] day month year, and the day checked against its month. */
static int parse_date(struct cursor *c, struct date_fields *f)
{
	const char *w;
	size_t n;
	int rc;

	if (is_alpha(*c->p)) {
		w = c->p;
		n = take_alpha(c);
		if (lookup_name(w, n, day_names, 7) < 0)
			return -FG_DATE_E_DAY_NAME;
		rc = skip_cfws(c);
		if (rc < 0)
			return rc;
		if (c->p == c->end || *c->p != ',')
			return -FG_DATE_E_DAY_NAME;
		c->p++;
		rc = skip_cfws(c);
		if (rc < 0)
			return rc;
	}
	n = take_digits(c, &f->day);
	if (n < 1 || n > 2 || f->day < 1 || f->day > 31)
		return -FG_DATE_E_DAY;
	rc = skip_cfws(c);
	if (rc < 0)
		return rc;
	w = c->p;
	n = take_alpha(c);
	f->month = lookup_name(w, n, month_names, 12) + 1;
	if (f->month == 0)
		return -FG_DATE_E_MONTH;
	if (n == 3 && c->p < c->end && *c->p == '.')
		c->p++;		/* "Aug." */
	rc = skip_cfws(c);
	if (rc < 0)
		return rc;
	/* RFC 5322 4.3: 00-49 -> 2000+, 50-99 and any 3 digits -> 1900+. */
	n = take_digits(c, &f->year);
	if (n == 2)
		f->year += f->year < 50 ? 2000 : 1900;
	else if (n == 3)
		f->year += 1900;
	if (n < 2 || f->year < 1900 || f->year > 9999)
		return -FG_DATE_E_YEAR;
	if (f->day > month_days[f->month - 1] + (f->month == 2 && is_leap(f->year)))
		return -FG_DATE_E_INVALID_DATE;
	return 0;
}

/* One 1- or 2-digit time field in [0, max]. */
static int take_time_field(struct cursor *c, int *v, int max)
{
	size_t n = take_digits(c, v);

	return n >= 1 && n <= 2 && *v <= max ? 0 : -FG_DATE_E_TIME;
}

/* hour ":" minute [":" second]; RFC 5322 3.3: up to 23:59:60. */
static int parse_time(struct cursor *c, struct date_fields *f)
{
	int rc = take_time_field(c, &f->hour, 23);

	if (rc == 0)
		rc = skip_cfws(c);
	if (rc == 0 && (c->p == c->end || *c->p != ':'))
		rc = -FG_DATE_E_TIME;
	if (rc == 0) {
		c->p++;
		rc = skip_cfws(c);
	}
	if (rc == 0)
		rc = take_time_field(c, &f->min, 59);
	if (rc == 0)
		rc = skip_cfws(c);
	f->sec = 0;
	if (rc == 0 && c->p < c->end && *c->p == ':') {
		c->p++;
		rc = skip_cfws(c);
		if (rc == 0)
			rc = take_time_field(c, &f->sec, 60);
	}
	return rc;
}

/* "+hhmm" / "-hhmm" (hh <= 23, mm <= 59) or a zone name. */
static int parse_zone(struct cursor *c, struct date_fields *f)
{
	const char *w = c->p;
	size_t n;
	int v;

	if (c->p == c->end)
		return -FG_DATE_E_ZONE;
	if (*c->p == '+' || *c->p == '-') {
		c->p++;
		n = take_digits(c, &v);
		/* RFC 5322 3.3 caps mm at 59; no zone on earth is a day away */
		if (n != 4 || v / 100 > 23 || v % 100 > 59)
			return -FG_DATE_E_ZONE;
		f->zone = (v / 100 * 60 + v % 100) * 60 * (*w == '-' ? -1 : 1);
		return 0;
	}
	n = take_alpha(c);
	/* RFC 5322 4.3: military zones are unreliable, so all mean -0000;
	 * "J" is not one of them. */
	if (n == 1 && (*w | 0x20) != 'j') {
		f->zone = 0;
		return 0;
	}
	for (size_t i = 0; i < FG_ARRAY_SIZE(zone_names); i++) {
		if (word_is(w, n, zone_names[i].name, name_len(zone_names[i].name))) {
			f->zone = zone_names[i].offset;
			return 0;
		}
	}
	return -FG_DATE_E_ZONE;
}

/* days since 1970-01-01 of a proleptic Gregorian date (month 1..12) */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

fg_time_t fg_date_from_civil(int year, int month, int day, int hour, int min, int sec)
{
	int64_t y = year, m = month - 1;

	/* fold any month into 1..12 so the day arithmetic stays exact */
	y += m >= 0 ? m / 12 : -((11 - m) / 12);
	m -= (y - year) * 12;
	return days_from_civil(y, m + 1, 1) * 86400 + (int64_t)(day - 1) * 86400 +
	       (int64_t)hour * 3600 + (int64_t)min * 60 + sec;
}

int fg_date_parse(const char *s, size_t len, fg_time_t *out)
{
	struct cursor c = { s, s + len };
	struct date_fields f;
	int rc;

	if (len > FG_DATE_MAX_LEN)
		return -FG_DATE_E_TOO_LONG;
	rc = skip_cfws(&c);
	if (rc == 0 && c.p == c.end)
		rc = -FG_DATE_E_EMPTY;
	if (rc == 0)
		rc = parse_date(&c, &f);
	if (rc == 0)
		rc = skip_cfws(&c);
	if (rc == 0)
		rc = parse_time(&c, &f);
	if (rc == 0)
		rc = skip_cfws(&c);
	if (rc == 0)
		rc = parse_zone(&c, &f);
	if (rc == 0)
		rc = skip_cfws(&c);
	if (rc == 0 && c.p != c.end)
		rc = -FG_DATE_E_TRAILING;
	if (rc == 0 && out)
		/* a leap second (:60) simply counts as the next minute's :00 */
		*out = fg_date_from_civil(f.year, f.month, f.day, f.hour, f.min, f.sec) - f.zone;
	return rc;
}

static char *put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
	return p + 2;
}

static char *put_name(char *p, const char name[4])
{
	p[0] = name[0];
	p[1] = name[1];
	p[2] = name[2];
	return p + 3;
}

int fg_date_format(fg_time_t t, char *buf, size_t len)
{
	int64_t days, secs;
	int y, m, d;
	char *p = buf;

	if (t < FG_DATE_FORMAT_MIN || t > FG_DATE_FORMAT_MAX)
		return -ERANGE;
	if (len < FG_DATE_FORMAT_LEN + 1)
		return -ENOSPC;
	days = (t >= 0 ? t : t - 86399) / 86400;
	secs = t - days * 86400;
	civil_from_days(days, &y, &m, &d);
	/* 1970-01-01 was a Thursday */
	p = put_name(p, day_abbr[((days % 7) + 11) % 7]);
	*p++ = ',';
	*p++ = ' ';
	p = put2(p, d);
	*p++ = ' ';
	p = put_name(p, month_abbr[m - 1]);
	*p++ = ' ';
	p = put2(p, y / 100);
	p = put2(p, y % 100);
	*p++ = ' ';
	p = put2(p, (int)(secs / 3600));
	*p++ = ':';
	p = put2(p, (int)(secs / 60 % 60));
	*p++ = ':';
	p = put2(p, (int)(secs % 60));
	*p++ = ' ';
	p = put_name(p, "+00");
	p = put2(p, 0);
	*p = '\0';
	return (int)(p - buf);
}
