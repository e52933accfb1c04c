/* SPDX-License-Identifier: MIT */
/*
 * test_date_inn.c — differential test of both date readings against INN.
 *
 * The oracle is INN's own parser, parsedate_rfc5322_lax() from libinn.a
 * (inn2-dev), the function innd applies to Date and Injection-Date, linked
 * into this test and called with TZ=UTC on a NUL-padded copy of each
 * string. A seeded generator writes 1,600 date strings: every form the
 * strict parser accepts, written with the variety real news software shows
 * (weekday or not, comments, folding, odd spacing, 2/3/4-digit years,
 * every zone kind), and then broken on purpose in about half of them:
 * out-of-range fields, impossible days, trailing garbage, bad or missing
 * zones, unterminated comments, over-long input, bare line breaks, and
 * random byte edits. A second seeded run of 200,000 strings, each a random
 * byte edit of a generated one, stresses the `inn` reading further.
 *
 * date-syntax inn (fg_date_parse_inn): not one accept/refuse difference is
 * allowed. Both accept with the same instant, or the string falls into one
 * of the three misread classes (INN's instant is wrong by the text: the
 * `inn-misread-*` classes), each recognised by a predicate on the string
 * and the two instants.
 *
 * date-syntax rfc5322 (fg_date_parse): every disagreement must fall into
 * one of the classes below, each defined by a predicate on the two results
 * and the string (never by the generator's intent alone).
 *
 * Every class is listed with its reason in docs/rules.md, "## Date parsing
 * compared with INN" — the test checks that the document names each one.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "floodgate/common.h"
#include "floodgate/date.h"
#include "fgtest.h"

/* INN 2.7 libinn.h; declared here, as INN's headers are not written for our
 * warning set. */
extern time_t parsedate_rfc5322_lax(const char *date);

#define N_STRINGS 1600
#define N_EDITS 200000

enum inn_class {
	AGREE,
	/* rfc5322 mode */
	INN_TRAILING,		/* we: trailing garbage; INN ignores what follows the zone */
	INN_ZONE,		/* we: bad zone; INN guesses one (local, +0000, its own names) */
	INN_COMMENT,		/* we: bad comment; INN accepts an unterminated one */
	INN_BEFORE_DAY,		/* we: bad day name or day; INN skips any text before the day */
	INN_LINE_BREAK,		/* we: bare line break refused; INN skips CR/LF anywhere */
	INN_PRE_1970,		/* we: a valid date before 1970; INN cannot represent it */
	INN_YEAR_DIGITS,	/* a year with leading zeros: we count digits, INN takes the value */
	INN_LONG_YEAR,		/* year and hour run together: INN takes 4 digits as the year */
	INN_TOO_LONG,		/* we: over 998 octets; INN has no limit */
	INN_TIME_DIGITS,	/* we: a 3-digit minute or second; INN reads two, ignores the rest */
	INN_LETTER_CR,		/* INN reads a lone letter zone E, C, M, P as a US zone */
	/* inn mode: accepted alike, INN's instant wrong by the text */
	INN_MISREAD_LETTER,	/* E, C, M, P: INN's US zone, ours RFC 5322's -0000 */
	INN_MISREAD_RESET,	/* a zone INN drops for the text after it */
	INN_MISREAD_DIGITS,	/* "+1 (x)": INN's minutes, ours hours */
	UNCLASSIFIED,
	CLASS__COUNT
};

static const char *const class_names[CLASS__COUNT] = {
	[AGREE] = "agree",
	[INN_TRAILING] = "inn-trailing",
	[INN_ZONE] = "inn-zone",
	[INN_COMMENT] = "inn-comment",
	[INN_BEFORE_DAY] = "inn-before-day",
	[INN_LINE_BREAK] = "inn-line-break",
	[INN_PRE_1970] = "inn-pre-1970",
	[INN_YEAR_DIGITS] = "inn-year-digits",
	[INN_LONG_YEAR] = "inn-long-year",
	[INN_TOO_LONG] = "inn-too-long",
	[INN_TIME_DIGITS] = "inn-time-digits",
	[INN_LETTER_CR] = "inn-letter-cr",
	[INN_MISREAD_LETTER] = "inn-misread-letter",
	[INN_MISREAD_RESET] = "inn-misread-reset",
	[INN_MISREAD_DIGITS] = "inn-misread-digits",
	[UNCLASSIFIED] = "UNCLASSIFIED",
};

/* ---------------------------------------------------------------- generator */

static uint64_t rng_state = 0x1a2b3c4d5e6f7081ull;

static unsigned pick(unsigned n)
{
	return (unsigned)(fg_test_rng(&rng_state) % n);
}

static bool chance(unsigned percent)
{
	return pick(100) < percent;
}

struct out {
	char s[2048];
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) FG_PRINTF(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->s + o->len, sizeof(o->s) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len = FG_MIN(o->len + (size_t)n, sizeof(o->s) - 1);
}

/* CFWS between tokens, as real software writes it (and then some) */
static void gap(struct out *o, bool may_be_empty)
{
	static const char *const gaps[] = {
		" ", " ", " ", " ", "  ", "\t", " (comment) ", "\r\n ", "\n\t",
		" (nested (comment)) ", " (esc \\) \\( ) ", "(c)", " \r\n\t",
	};

	if (may_be_empty && chance(10))
		return;
	put(o, "%s", gaps[pick(FG_ARRAY_SIZE(gaps))]);
}

static const char *const wdays[7][2] = {
	{ "Sun", "Sunday" }, { "Mon", "Monday" }, { "Tue", "Tuesday" }, { "Wed", "Wednesday" },
	{ "Thu", "Thursday" }, { "Fri", "Friday" }, { "Sat", "Saturday" },
};
static const char *const months[12][2] = {
	{ "Jan", "January" }, { "Feb", "February" }, { "Mar", "March" }, { "Apr", "April" },
	{ "May", "May" }, { "Jun", "June" }, { "Jul", "July" }, { "Aug", "August" },
	{ "Sep", "September" }, { "Oct", "October" }, { "Nov", "November" }, { "Dec", "December" },
};

static void put_cased(struct out *o, const char *w)
{
	unsigned how = pick(5);

	for (const char *p = w; *p; p++) {
		char c = *p;

		if (how == 1)
			c = (char)(c | 0x20);
		else if (how == 2)
			c = (char)(c & ~0x20);
		put(o, "%c", c);
	}
}

enum mutation {
	M_NONE, M_DAY_RANGE, M_NO_SUCH_DAY, M_HOUR, M_MINUTE, M_SECOND, M_YEAR_HUGE,
	M_YEAR_SHORT, M_TRAILING, M_COMMENT_OPEN, M_NO_ZONE, M_ZONE_NAME, M_ZONE_DIGITS,
	M_ZONE_RANGE, M_ZONE_COLON, M_MONTH, M_DAY_NAME, M_NO_COMMA, M_PREFIX, M_TOO_LONG,
	M_BARE_BREAK, M_HYPHENS, M_RANDOM, M__COUNT
};

struct fields {
	int wday, day, month, year, hour, min, sec;
	bool with_sec;
};

static void gen_fields(struct fields *f)
{
	static const int dim[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y = pick(100);

	if (y < 70)
		f->year = 1995 + (int)pick(40);
	else if (y < 80)
		f->year = 1970 + (int)pick(25);
	else if (y < 90)
		f->year = 2035 + (int)pick(8000);
	else
		f->year = 1900 + (int)pick(70);
	f->month = 1 + (int)pick(12);
	f->day = 1 + (int)pick((unsigned)dim[f->month - 1]);
	f->hour = (int)pick(24);
	f->min = (int)pick(60);
	f->sec = (int)pick(60);
	f->with_sec = chance(85);
	/* the right weekday, mostly: from the epoch day count */
	f->wday = (int)(((fg_date_from_civil(f->year, f->month, f->day, 0, 0, 0) / 86400) % 7 + 11) % 7);
	if (chance(5))
		f->wday = (int)pick(7);
}

static void gen_year(struct out *o, int year, enum mutation m)
{
	unsigned how = pick(100);

	if (m == M_YEAR_HUGE) {
		put(o, "%d", 10000 + (int)pick(100000));
	} else if (m == M_YEAR_SHORT) {
		put(o, "%d", (int)pick(10));
	} else if (how < 12 && year >= 1950 && year <= 2049) {
		put(o, "%02d", year % 100);		/* RFC 5322 4.3 obs-year */
	} else if (how < 16 && year >= 1900 && year <= 2899) {
		put(o, "%d", year - 1900);		/* 3 digits, +1900 */
	} else if (how < 21) {
		static const char *const zeros[] = { "049", "0049", "02008", "0999", "0100", "010" };

		put(o, "%s", zeros[pick(FG_ARRAY_SIZE(zeros))]);
	} else {
		put(o, "%d", year);
	}
}

static void gen_zone(struct out *o, enum mutation m)
{
	static const char *const names[] = { "UT", "GMT", "UTC", "Z", "EST", "EDT", "CST", "CDT",
					     "MST", "MDT", "PST", "PDT", "gmt", "ut" };
	static const char *const unknown[] = { "CEST", "BST", "JST", "XYZ", "J", "j", "MEZ",
					       "NZDT", "GMT1", "IST" };
	static const char *const odd_digits[] = { "+1", "-5", "+100", "+0100 0", "+01000", "-123" };

	switch (m) {
	case M_NO_ZONE:
		return;
	case M_ZONE_NAME:
		put(o, "%s", unknown[pick(FG_ARRAY_SIZE(unknown))]);
		return;
	case M_ZONE_DIGITS:
		put(o, "%s", odd_digits[pick(FG_ARRAY_SIZE(odd_digits))]);
		return;
	case M_ZONE_RANGE:
		put(o, "%c%02d%02d", chance(50) ? '+' : '-', 24 + (int)pick(76), (int)pick(100));
		return;
	case M_ZONE_COLON:
		put(o, "+%02d:%02d", (int)pick(14), chance(50) ? 0 : 30);
		return;
	default:
		break;
	}
	if (chance(65)) {
		put(o, "%c%02d%02d", chance(50) ? '+' : '-', (int)pick(24), (int)pick(4) * 15);
	} else if (chance(85)) {
		put_cased(o, names[pick(FG_ARRAY_SIZE(names))]);
	} else {
		char c = (char)('A' + pick(26));

		put(o, "%c", c == 'J' ? 'Z' : c);	/* military */
	}
}

/* The field values a structured mutation breaks. */
static void mutate_fields(struct fields *f, enum mutation m)
{
	switch (m) {
	case M_DAY_RANGE:
		f->day = chance(50) ? 0 : 32 + (int)pick(68);
		break;
	case M_NO_SUCH_DAY:
		if (chance(50)) {
			f->month = 2;
			f->day = 30 + (int)pick(2);
		} else if (chance(50)) {
			f->month = 2;
			f->day = 29;
			f->year = 2001 + 4 * (int)pick(20) + 1;	/* a common year */
		} else {
			static const int thirty[] = { 4, 6, 9, 11 };

			f->month = thirty[pick(4)];
			f->day = 31;
		}
		break;
	case M_HOUR:
		f->hour = 24 + (int)pick(76);
		break;
	case M_MINUTE:
		f->min = 60 + (int)pick(40);
		break;
	case M_SECOND:
		f->with_sec = true;
		f->sec = 60 + (int)pick(3);	/* 60 is a valid leap second */
		break;
	default:
		break;
	}
}

static void gen_day_name(struct out *o, const struct fields *f, enum mutation m)
{
	static const char *const bad[] = { "Funday", "Su", "Mond", "Dim", "Xxx" };

	if (m == M_PREFIX) {
		static const char *const junk[] = { "x", "#", "Date:", "-", "on " };

		put(o, "%s", junk[pick(FG_ARRAY_SIZE(junk))]);
		return;
	}
	if (m != M_DAY_NAME && m != M_NO_COMMA && chance(40))
		return;
	if (m == M_DAY_NAME)
		put(o, "%s", bad[pick(FG_ARRAY_SIZE(bad))]);
	else
		put_cased(o, wdays[f->wday][pick(2)]);
	if (m != M_NO_COMMA) {
		if (chance(10))
			gap(o, false);
		put(o, ",");
	}
	gap(o, m != M_NO_COMMA);
}

static void gen_time(struct out *o, const struct fields *f)
{
	put(o, chance(8) ? "%d" : "%02d", f->hour);
	if (chance(5))
		gap(o, false);
	put(o, chance(5) ? ":%d" : ":%02d", f->min);
	if (f->with_sec)
		put(o, chance(5) ? ":%d" : ":%02d", f->sec);
}

/* Random byte edits: no NUL, so the string can be a command argument. */
static void mutate_bytes(struct out *o)
{
	size_t at = o->len ? pick((unsigned)o->len) : 0;

	switch (pick(4)) {
	case 0:
		if (o->len)
			o->s[at] = (char)(1 + pick(255));
		break;
	case 1:
		if (o->len) {
			memmove(o->s + at, o->s + at + 1, o->len - at - 1);
			o->len--;
		}
		break;
	case 2:
		o->len = at;
		break;
	default: {
		size_t n = FG_MIN(o->len - at, (size_t)1 + pick(6));

		if (o->len + n < sizeof(o->s)) {
			memmove(o->s + at + n, o->s + at, o->len - at);
			o->len += n;
		}
		break;
	}
	}
}

static void generate(struct out *o)
{
	enum mutation m = chance(50) ? (enum mutation)(1 + pick(M__COUNT - 1)) : M_NONE;
	struct fields f;

	memset(o, 0, sizeof(*o));
	gen_fields(&f);
	mutate_fields(&f, m);
	if (chance(5))
		gap(o, false);
	gen_day_name(o, &f, m);
	put(o, chance(30) && f.day < 10 ? "0%d" : "%d", f.day);
	if (m == M_HYPHENS)
		put(o, "-");
	else
		gap(o, true);
	if (m == M_MONTH)
		put(o, "%s", chance(50) ? "Sept" : "Foo");
	else if (chance(8))
		put(o, "%s.", months[f.month - 1][0]);
	else
		put_cased(o, months[f.month - 1][chance(10)]);
	if (m == M_HYPHENS)
		put(o, "-");
	else
		gap(o, true);
	gen_year(o, f.year, m);
	if (m == M_BARE_BREAK)
		put(o, chance(50) ? "\r\n" : "\n");
	else
		gap(o, false);
	gen_time(o, &f);
	gap(o, false);
	gen_zone(o, m);
	if (m == M_TRAILING) {
		static const char *const tails[] = { " junk", " +0100 CEST", " GMT", ".", " 1", " (ok) x" };

		put(o, "%s", tails[pick(FG_ARRAY_SIZE(tails))]);
	} else if (m == M_COMMENT_OPEN) {
		put(o, " (unterminated");
	} else if (chance(25)) {
		put(o, "%s", chance(50) ? " (UTC)" : "\r\n");
	}
	if (m == M_TOO_LONG) {
		put(o, " (");
		while (o->len < FG_DATE_MAX_LEN + 10)
			put(o, "padding ");
		put(o, ")");
	}
	if (m == M_RANDOM)
		mutate_bytes(o);
	o->s[o->len] = '\0';
}

/* ---------------------------------------------------------------- INN */

struct verdict {
	bool ok;
	fg_time_t t;
};

/* INN reads C strings, and past the NUL after a prefix-matched zone: give
 * it NULs there, as fg_date_parse_inn assumes. A NUL inside the string
 * never reaches it in innd, which refuses an article with a NUL in its
 * header section ("Nul character in header"). */
static struct verdict inn_parse(const char *s, size_t len)
{
	static char buf[sizeof(((struct out *)0)->s) + 16];
	struct verdict v = { false, -1 };

	if (memchr(s, '\0', len))
		return v;
	ck_assert_uint_lt(len, sizeof(buf) - 8);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, s, len);
	v.t = parsedate_rfc5322_lax(buf);
	v.ok = v.t != (time_t)-1;
	return v;
}

/* ---------------------------------------------------------------- classes */

static bool is_wsp(char c)
{
	return c == ' ' || c == '\t';
}

/* A CR or LF that is neither folding (WSP follows) nor the final one. */
static bool has_bare_line_break(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t n = s[i] == '\n' ? 1 : s[i] == '\r' && i + 1 < len && s[i + 1] == '\n' ? 2 : 0;

		if (s[i] == '\r' && n == 0)
			return true;
		if (n && i + n < len && !is_wsp(s[i + n]))
			return true;
		i += n ? n - 1 : 0;
	}
	return false;
}

static bool starts_with_digit(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (is_wsp(s[i]) || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i < len && s[i] >= '0' && s[i] <= '9';
}

/* A run of at least min digits (starting with '0' if zero_first). */
static bool has_digit_run(const char *s, size_t len, size_t min, bool zero_first)
{
	for (size_t i = 0; i < len;) {
		size_t d = 0;

		while (i + d < len && s[i + d] >= '0' && s[i + d] <= '9')
			d++;
		if (d >= min && (!zero_first || s[i] == '0'))
			return true;
		i += d ? d : 1;
	}
	return false;
}

/* ":" then three or more digits (CFWS allowed between, as the parser does) */
static bool has_long_time_field(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t j = i + 1, d = 0;

		if (s[i] != ':')
			continue;
		while (j < len && (is_wsp(s[j]) || s[j] == '\r' || s[j] == '\n'))
			j++;
		while (j + d < len && s[j + d] >= '0' && s[j + d] <= '9')
			d++;
		if (d >= 3)
			return true;
	}
	return false;
}

/* A letter E, C, M or P ending a word: as a zone, INN's shift of it (EDT
 * -4 h ... PDT -7 h, so INN's time is ours plus 4-7 h) explains `diff`?
 * (INN may land on the last letter of a word: after a prefix-matched zone
 * it moves on by the full name's length.) */
static bool letter_zone_explains(const char *s, size_t len, fg_time_t diff)
{
	static const char letters[] = "ecmp";	/* EDT, CDT, MDT, PDT */

	for (size_t i = 0; i < len; i++) {
		char l = (char)(s[i] | 0x20);
		const char *k = strchr(letters, l);
		bool alone = i + 1 == len || !isalpha((unsigned char)s[i + 1]);

		if (l && k && alone && diff == (fg_time_t)(4 + (k - letters)) * 3600)
			return true;
	}
	return false;
}

/*
 * RFC 5322 4.3 maps a year by its number of digits ("049" is 1949,
 * "0049" is the year 49, "02008" is 2008); INN by its value, reading at
 * most four digits ("049" and "0049" are 2049, "02008" fails). When both
 * accept, INN's time is ours a century later (plus any letter shift).
 */
static bool is_year_digits(const char *s, size_t len, int rc, fg_time_t ours, struct verdict inn)
{
	fg_time_t d = inn.t - ours;
	bool century = false;

	for (fg_time_t c = 36524LL * 86400; c <= 36525LL * 86400; c += 86400)
		century |= d == c || letter_zone_explains(s, len, d - c);
	if (rc == 0 && inn.ok)
		return century && has_digit_run(s, len, 3, true);
	if (rc == -FG_DATE_E_YEAR && inn.ok)
		return has_digit_run(s, len, 4, true);
	return rc == 0 && !inn.ok && has_digit_run(s, len, 5, true);
}

static enum inn_class classify_rfc(const struct out *o, int rc, fg_time_t ours, struct verdict inn)
{
	if ((rc != 0 && !inn.ok) || (rc == 0 && inn.ok && ours == inn.t))
		return AGREE;
	if (is_year_digits(o->s, o->len, rc, ours, inn))
		return INN_YEAR_DIGITS;
	if (rc == 0 && !inn.ok && ours < 86400)
		return INN_PRE_1970;
	if (rc == 0 && inn.ok && letter_zone_explains(o->s, o->len, inn.t - ours))
		return INN_LETTER_CR;
	if (rc == 0 || !inn.ok)
		return UNCLASSIFIED;
	/* from here on: INN accepted what we refused */
	if (has_bare_line_break(o->s, o->len))
		return INN_LINE_BREAK;
	switch (-rc) {
	case FG_DATE_E_TRAILING:
		return INN_TRAILING;
	case FG_DATE_E_ZONE:
		return INN_ZONE;
	case FG_DATE_E_COMMENT:
		return INN_COMMENT;
	case FG_DATE_E_TOO_LONG:
		return INN_TOO_LONG;
	case FG_DATE_E_YEAR:
		return has_digit_run(o->s, o->len, 5, false) ? INN_LONG_YEAR : UNCLASSIFIED;
	case FG_DATE_E_TIME:
		return has_long_time_field(o->s, o->len) ? INN_TIME_DIGITS : UNCLASSIFIED;
	case FG_DATE_E_DAY_NAME:
	case FG_DATE_E_DAY:
		return starts_with_digit(o->s, o->len) ? UNCLASSIFIED : INN_BEFORE_DAY;
	default:
		return UNCLASSIFIED;
	}
}

/* The offsets (seconds east) the text states with "+"/"-" and 1-5 digits
 * at s[i]: 1-2 digits are hours, "+hh:mm" hours and minutes, 3-5 hhmm. */
static int numeric_zone(const char *s, size_t len, size_t i, int32_t *off, size_t *ndig)
{
	int sign = s[i] == '+' ? 1 : -1, v = 0;
	size_t n = 0;

	while (n < 5 && i + 1 + n < len && isdigit((unsigned char)s[i + 1 + n]))
		v = v * 10 + (s[i + 1 + n++] - '0');
	*ndig = n;
	if (n == 0)
		return 0;
	if (n > 2) {
		*off = sign * (v / 100 * 60 + v % 100) * 60;
		return 1;
	}
	off[0] = sign * v * 3600;
	if (i + 1 + n + 2 < len && s[i + 1 + n] == ':' && isdigit((unsigned char)s[i + 2 + n]) &&
	    isdigit((unsigned char)s[i + 3 + n])) {
		off[1] = sign * (v * 60 + (s[i + 2 + n] - '0') * 10 + (s[i + 3 + n] - '0')) * 60;
		return 2;
	}
	return 1;
}

/* INN read +0000 where the text names a zone followed by more text: is
 * `diff` (INN's time minus ours) the offset of a zone written in s? */
static bool written_zone_explains(const char *s, size_t len, fg_time_t diff)
{
	/* RFC 5322's names and INN's own table (INN 2.7 lib/date.c) */
	static const struct {
		const char *name;
		int32_t off;
	} names[] = {
		{ "EST", -5 * 3600 }, { "EDT", -4 * 3600 }, { "CST", -6 * 3600 },
		{ "CDT", -5 * 3600 }, { "MST", -7 * 3600 }, { "MDT", -6 * 3600 },
		{ "PST", -8 * 3600 }, { "PDT", -7 * 3600 }, { "BST", 3600 },
		{ "NDT", -5400 }, { "NST", -9000 }, { "ADT", -3 * 3600 }, { "AST", -4 * 3600 },
		{ "YDT", -8 * 3600 }, { "YST", -9 * 3600 }, { "AKDT", -8 * 3600 },
		{ "AKST", -9 * 3600 }, { "HADT", -9 * 3600 }, { "HAST", -10 * 3600 },
		{ "HST", -10 * 3600 }, { "CES", 2 * 3600 }, { "CEST", 2 * 3600 }, { "MEZ", 3600 },
		{ "MEZT", 2 * 3600 }, { "CET", 3600 }, { "MET", 3600 }, { "EET", 2 * 3600 },
		{ "MSK", 3 * 3600 }, { "MSD", 4 * 3600 }, { "WAST", 8 * 3600 }, { "WADT", 9 * 3600 },
		{ "HKT", 8 * 3600 }, { "CCT", 8 * 3600 }, { "JST", 9 * 3600 }, { "KST", 9 * 3600 },
		{ "KDT", 9 * 3600 }, { "CAST", 34200 }, { "CADT", 37800 }, { "EAST", 10 * 3600 },
		{ "EADT", 11 * 3600 }, { "NZST", 12 * 3600 },
	};

	for (size_t i = 0; i < len; i++) {
		int32_t off[2];
		size_t nd;
		int n;

		if (s[i] == '+' || s[i] == '-') {
			n = numeric_zone(s, len, i, off, &nd);
			for (int k = 0; k < n; k++)
				if (diff == off[k])
					return true;
		}
		for (size_t k = 0; k < FG_ARRAY_SIZE(names); k++)
			if (strncasecmp(s + i, names[k].name, FG_MIN(strlen(names[k].name), len - i)) == 0 &&
			    len - i >= strlen(names[k].name) && diff == names[k].off)
				return true;
	}
	return false;
}

/* "+h" or "+hh" followed by CFWS, which INN reads as minutes. */
static bool zone_minutes_explains(const char *s, size_t len, fg_time_t diff)
{
	for (size_t i = 0; i + 1 < len; i++) {
		int32_t off[2];
		size_t nd;
		char after;

		if ((s[i] != '+' && s[i] != '-') || numeric_zone(s, len, i, off, &nd) == 0 || nd > 2)
			continue;
		after = i + 1 + nd < len ? s[i + 1 + nd] : '\0';
		if (after == ' ' || after == '\t' || after == '(' || after == '\r' || after == '\n') {
			int32_t minutes = off[0] / 60;	/* +h hours read as h minutes */

			if (diff == off[0] - minutes)
				return true;
		}
	}
	return false;
}

static enum inn_class classify_inn(const struct out *o, int rc, fg_time_t ours, struct verdict inn)
{
	fg_time_t diff = inn.t - ours;

	if ((rc != 0 && !inn.ok) || (rc == 0 && inn.ok && diff == 0))
		return AGREE;
	if (rc != 0 || !inn.ok)
		return UNCLASSIFIED;	/* an accept/refuse difference: never allowed */
	if (letter_zone_explains(o->s, o->len, diff))
		return INN_MISREAD_LETTER;
	if (zone_minutes_explains(o->s, o->len, diff))
		return INN_MISREAD_DIGITS;
	if (written_zone_explains(o->s, o->len, diff))
		return INN_MISREAD_RESET;
	return UNCLASSIFIED;
}

static void print_escaped(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static void report(const char *mode, enum inn_class c, const struct out *o, int rc, fg_time_t ours,
		   struct verdict inn)
{
	printf("%-8s %-20s ours %s %lld, INN %s %lld: \"", mode, class_names[c],
	       rc ? fg_date_error_str(-rc) : "ok", (long long)ours, inn.ok ? "ok" : "refused",
	       (long long)inn.t);
	print_escaped(o->s, o->len);
	printf("\"\n");
	fflush(stdout);
}

static void utc_zone(void)
{
	setenv("TZ", "UTC", 1);	/* INN's no-zone dates are local time */
	tzset();
}

static void seed_rng(void)
{
	rng_state = 0x1a2b3c4d5e6f7081ull;
	if (getenv("FG_DATE_INN_SEED"))	/* explore other seeds by hand */
		rng_state = strtoull(getenv("FG_DATE_INN_SEED"), NULL, 0);
}

START_TEST(test_rfc5322_against_inn)
{
	unsigned counts[CLASS__COUNT] = { 0 }, both_ok = 0, both_refuse = 0;

	utc_zone();
	seed_rng();
	for (int i = 0; i < N_STRINGS; i++) {
		struct out o;
		fg_time_t ours = 0;
		int rc;
		struct verdict inn;
		enum inn_class c;

		generate(&o);
		rc = fg_date_parse(o.s, o.len, &ours);
		inn = inn_parse(o.s, o.len);
		c = classify_rfc(&o, rc, ours, inn);
		counts[c]++;
		both_ok += rc == 0 && inn.ok && ours == inn.t;
		both_refuse += rc != 0 && !inn.ok;
		if (c == UNCLASSIFIED || getenv("FG_DATE_INN_VERBOSE"))
			report("rfc5322", c, &o, rc, ours, inn);
	}
	printf("rfc5322: %d strings: %u accepted alike, %u refused by both\n", N_STRINGS, both_ok,
	       both_refuse);
	for (int c = 1; c < CLASS__COUNT; c++)
		printf("  %-20s %u\n", class_names[c], counts[c]);
	fflush(stdout);
	ck_assert_uint_eq(counts[UNCLASSIFIED], 0);
	/* the comparison itself works: most valid strings agree */
	ck_assert_uint_gt(both_ok, N_STRINGS / 3);
	ck_assert_uint_gt(both_refuse, N_STRINGS / 10);
}
END_TEST

/* One string through the inn reading and INN; counts its class. */
static void inn_one(const struct out *o, unsigned *counts, unsigned *accepted)
{
	struct fg_date_reading r;
	fg_time_t ours = 0;
	int rc = fg_date_parse_inn(o->s, o->len, &ours, &r);
	struct verdict inn = inn_parse(o->s, o->len);
	enum inn_class c = classify_inn(o, rc, ours, inn);

	counts[c]++;
	*accepted += rc == 0;
	/* a misread instant is always marked, and only then */
	if (rc == 0 && inn.ok)
		ck_assert_msg((inn.t != ours) == ((r.notes & FG_DATE_NOTES_MISREAD) != 0),
			      "notes 0x%x but INN %lld, ours %lld: \"%.*s\"", r.notes, (long long)inn.t,
			      (long long)ours, (int)o->len, o->s);
	if (c == UNCLASSIFIED || getenv("FG_DATE_INN_VERBOSE"))
		report("inn", c, o, rc, ours, inn);
}

START_TEST(test_inn_against_inn)
{
	unsigned counts[CLASS__COUNT] = { 0 }, accepted = 0;

	utc_zone();
	seed_rng();
	for (int i = 0; i < N_STRINGS; i++) {
		struct out o;

		generate(&o);
		inn_one(&o, counts, &accepted);
	}
	printf("inn: %d seeded strings, %u accepted\n", N_STRINGS, accepted);
	for (int i = 0; i < N_EDITS; i++) {
		struct out o;
		unsigned edits = 1 + pick(4);

		generate(&o);
		while (edits--)
			mutate_bytes(&o);
		for (size_t k = 0; k < o.len; k++)
			o.s[k] = o.s[k] ? o.s[k] : ' ';	/* C strings for INN */
		inn_one(&o, counts, &accepted);
	}
	printf("inn: %d strings in all, %u accepted\n", N_STRINGS + N_EDITS, accepted);
	for (int c = 1; c < CLASS__COUNT; c++)
		printf("  %-20s %u\n", class_names[c], counts[c]);
	fflush(stdout);
	ck_assert_uint_eq(counts[UNCLASSIFIED], 0);
	for (int c = INN_TRAILING; c <= INN_LETTER_CR; c++)
		ck_assert_uint_eq(counts[c], 0);
	ck_assert_uint_gt(accepted, N_STRINGS / 2);
}
END_TEST

/* The dates of issue 16, each of which innd accepts, and what inn reads. */
START_TEST(test_inn_examples)
{
	static const struct {
		const char *s;
		fg_time_t want;
		uint32_t notes;
	} ex[] = {
		/* 2026-11-29 15:06:34 UTC = 1795964794 */
		{ "Sun, 29 Nov 2026 15:06:34 CEST", 1795964794 - 7200, FG_DATE_NOTE_ZONE_NAME },
		{ "Sun, 29 Nov 2026 15:06:34 -0800 PST8PDT", 1795964794 + 28800,
		  FG_DATE_NOTE_ZONE_LAST | FG_DATE_NOTE_TRAILING | FG_DATE_NOTE_MISREAD_RESET },
		{ "Sun, 29 Nov 2026 15:06:34 +0000 garbage", 1795964794, FG_DATE_NOTE_TRAILING },
		{ "Sun, 29 Nov 2026 15:06:34", 1795964794, FG_DATE_NOTE_ZONE_MISSING },
		{ "Sun, 29 Nov 2026 15:06:34 GMT+1", 1795964794 - 3600,
		  FG_DATE_NOTE_ZONE_LAST | FG_DATE_NOTE_ZONE_DIGITS },
		{ "Sun, 29 Nov 2026 15:06:34 +5", 1795964794 - 5 * 3600, FG_DATE_NOTE_ZONE_DIGITS },
		{ "Sun, 29 Nov 2026 15:06:34 +05:30", 1795964794 - 19800,
		  FG_DATE_NOTE_ZONE_DIGITS | FG_DATE_NOTE_TRAILING | FG_DATE_NOTE_MISREAD_RESET },
		{ "Sun, 29 Nov 2026 15:06:34 E\r\n", 1795964794, FG_DATE_NOTE_MISREAD_LETTER },
		{ "Sun, 29 Nov 2026 15:06:34 +1 (CET)", 1795964794 - 3600,
		  FG_DATE_NOTE_ZONE_DIGITS | FG_DATE_NOTE_MISREAD_DIGITS },
	};

	utc_zone();
	ck_assert_int_eq(fg_date_from_civil(2026, 11, 29, 15, 6, 34), 1795964794);
	for (size_t i = 0; i < FG_ARRAY_SIZE(ex); i++) {
		struct fg_date_reading r;
		fg_time_t t = 0;
		size_t len = strlen(ex[i].s);
		int rc = fg_date_parse_inn(ex[i].s, len, &t, &r);
		struct verdict inn = inn_parse(ex[i].s, len);

		ck_assert_msg(inn.ok, "INN refuses \"%s\"", ex[i].s);
		ck_assert_msg(rc == 0 && t == ex[i].want && r.notes == ex[i].notes,
			      "\"%s\": rc %d, t %lld (want %lld), notes 0x%x (want 0x%x)", ex[i].s, rc,
			      (long long)t, (long long)ex[i].want, r.notes, ex[i].notes);
		ck_assert_int_eq(fg_date_parse(ex[i].s, len, NULL) == 0, r.notes == FG_DATE_NOTE_MISREAD_LETTER ? 1 : 0);
	}
}
END_TEST

/* docs/rules.md lists every class the test allows, in its INN section. */
START_TEST(test_classes_documented)
{
	const char *top = getenv("FG_TOP") ? getenv("FG_TOP") : ".";
	char path[4096], *text, *section;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/docs/rules.md", top);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	section = strstr(text, "\n## Date parsing compared with INN\n");
	ck_assert_msg(section != NULL, "%s has no INN section", path);
	/* the section ends at the next level-2 heading */
	{
		char *next = strstr(section + 1, "\n## ");

		if (next)
			*next = '\0';
	}
	for (int c = INN_TRAILING; c < UNCLASSIFIED; c++) {
		char tag[64];

		snprintf(tag, sizeof(tag), "`%s`", class_names[c]);
		ck_assert_msg(strstr(section, tag) != NULL, "class %s is not in %s", tag, path);
	}
	free(text);
}
END_TEST

static Suite *date_inn_suite(void)
{
	Suite *s = suite_create("date_inn");
	TCase *tc = tcase_create("differential");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_rfc5322_against_inn);
	tcase_add_test(tc, test_inn_against_inn);
	tcase_add_test(tc, test_inn_examples);
	tcase_add_test(tc, test_classes_documented);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(date_inn_suite)
