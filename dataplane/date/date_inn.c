/* SPDX-License-Identifier: MIT */
/*
 * date_inn.c — Date and Injection-Date read as INN 2.7's innd reads them.
 *
 * floodgate stands in front of a site's innd; refusing what that innd
 * would carry is the worst failure a filter can have (a refusal is
 * remembered, and every other peer's copy is refused too). So the default
 * reading, `date-syntax inn`, accepts exactly the set innd's parser
 * (parsedate_rfc5322_lax, lib/date.c) accepts. This file is written from
 * the behaviour of that parser, not from its text; test_date_inn holds the
 * two together on seeded strings, linked against INN's own libinn.a.
 *
 * The reading, in steps (every step skips INN's CFWS after itself):
 *
 *  1. CFWS, then anything up to the first digit or comma is skipped (a
 *     weekday, or whatever stands there); a comma is stepped over.
 *  2. day: 1-2 digits. month: a letter run, with an optional ".": three
 *     letters (any case) for the abbreviation, else the full English name.
 *     year: 2-4 digits, the rest of a longer run left for the next field.
 *     hour: 1-2 digits, ":", minute: 1-2 digits; then ":" second, 1-2.
 *  3. Zones, in a loop to the end: "+"/"-" and 1-5 digits (1-2 are hours,
 *     3-5 are hhmm as one number, no range check; a sign with no digit
 *     refuses the date); or a letter run W that is a prefix (any case) of
 *     UT, GMT, EDT, EST, CDT, CST, MDT, MST, PDT, PST — the first such in
 *     that order, and the read position moves on by that name's length,
 *     not W's; or one letter other than J (a military zone, +0000); or a
 *     name of INN's longer table (exact, any case). Each zone read replaces
 *     the one before. Anything else ends the loop and sets the zone to
 *     +0000 (INN: "if we don't recognize the time zone at all, just bail
 *     and assume GMT"). No zone at all: the server's local time, which
 *     floodgate takes as UTC.
 *  4. Year: under 50 is 20xx, 50-999 is 1900 + the value, 1000 and up the
 *     year itself. Then seconds <= 60, minutes <= 59, hours <= 23, the day
 *     within its month, the year from 1970 on; and the instant must not be
 *     -1, INN's error value.
 *
 * INN's CFWS (its skip_cfws): SP, HTAB and LF anywhere; CR only before LF
 * (or inside a comment); comments nested by a counter, "\" quoting the
 * next octet inside them; an unterminated comment runs to the end.
 *
 * Where INN's instant is wrong by the date's own text, the date is still
 * accepted as INN accepts it, but the instant is the one the text states,
 * and a note marks it (date.h): MISREAD_RESET, a zone followed by text INN
 * cannot read ("+05:30", "-0800 PST8PDT", "+0100 garbage") is dropped to
 * +0000 by INN, while floodgate keeps the last zone read (and the minutes
 * of "+hh:mm"); MISREAD_LETTER, a lone E, C, M or P is EDT, CDT, MDT or
 * PDT to INN (the prefix rule of step 3), where RFC 5322 4.3 reads every
 * military letter as -0000.
 *
 * Bounds: INN reads C strings and, after a prefix-matched zone, may step
 * past the end; here every position at or past `len` reads as NUL, which
 * is what libinn does on a NUL-padded buffer. A NUL inside the value is
 * refused (innd refuses an article with a NUL in its header section).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/date.h"

/* The subject: (s, len), NUL past the end. */
struct text {
	const char *s;
	size_t len;
};

static char at(const struct text *t, size_t i)
{
	return i < t->len ? t->s[i] : '\0';
}

static bool is_digit(char c)
{
	return (unsigned)(c - '0') < 10;
}

static bool is_alpha(char c)
{
	return (unsigned)((c | 0x20) - 'a') < 26;
}

static char lower(char c)
{
	return is_alpha(c) ? (char)(c | 0x20) : c;
}

/* INN's skip_cfws (see the file head): returns the new position. */
static size_t skip_cfws(const struct text *t, size_t i)
{
	size_t nesting = 0;

	for (; at(t, i) != '\0'; i++) {
		switch (at(t, i)) {
		case ' ':
		case '\t':
		case '\n':
			break;
		case '\r':
			if (at(t, i + 1) != '\n' && nesting == 0)
				return i;
			break;
		case '(':
			nesting++;
			break;
		case ')':
			if (nesting == 0)
				return i;
			nesting--;
			break;
		case '\\':
			if (nesting == 0 || at(t, i + 1) == '\0')
				return i;
			i++;
			break;
		default:
			if (nesting == 0)
				return i;
			break;
		}
	}
	return i;
}

/* min..max digits at *i: their value, *i moved past them and CFWS. */
static bool number(const struct text *t, size_t *i, unsigned min, unsigned max, int *v)
{
	unsigned n = 0;

	*v = 0;
	while (n < max && is_digit(at(t, *i + n))) {
		*v = *v * 10 + (at(t, *i + n) - '0');
		n++;
	}
	if (n < min)
		return false;
	*i = skip_cfws(t, *i + n);
	return true;
}

static bool delim(const struct text *t, size_t *i, char c)
{
	if (at(t, *i) != c)
		return false;
	*i = skip_cfws(t, *i + 1);
	return true;
}

/* Does the word w[0..n) equal `name` (lower case) in its first n letters? */
static bool prefix_of(const struct text *t, size_t w, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (name[k] == '\0' || lower(at(t, w + k)) != name[k])
			return false;
	return true;
}

static const char month_names[12][10] = {
	"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december",
};

/* Step 2's month: 0..11, or -1. */
static int month(const struct text *t, size_t *i)
{
	size_t w = *i, n = 0;

	while (is_alpha(at(t, w + n)))
		n++;
	if (at(t, w + n) == '.')
		n++;
	if (n == 0)
		return -1;
	for (int m = 0; m < 12; m++) {
		bool abbr = n == 3 || (n == 4 && at(t, w + 3) == '.');

		if (abbr ? prefix_of(t, w, 3, month_names[m]) :
			   strlen(month_names[m]) == n && prefix_of(t, w, n, month_names[m])) {
			*i = skip_cfws(t, w + n);
			return m;
		}
	}
	return -1;
}

/* RFC 5322 4.3's zones, in INN's order (the prefix rule takes the first). */
static const struct zone {
	char name[5];
	int32_t offset;
} rfc_zones[] = {
	{ "ut", 0 }, { "gmt", 0 },
	{ "edt", -4 * 3600 }, { "est", -5 * 3600 }, { "cdt", -5 * 3600 }, { "cst", -6 * 3600 },
	{ "mdt", -6 * 3600 }, { "mst", -7 * 3600 }, { "pdt", -7 * 3600 }, { "pst", -8 * 3600 },
};

/* INN's further names (matched whole), with INN's offsets: its table lists
 * NZST twice, with +1200 and +1300, and the first wins; it has NDT and NST
 * (Newfoundland, -0230 and -0330) as -0130 and -0230. A name is a guess
 * either way, and innd's instant is the one to match here. */
static const struct zone inn_zones[] = {
	{ "utc", 0 }, { "cut", 0 }, { "wet", 0 }, { "bst", 3600 },
	{ "ndt", (-2 * 60 + 30) * 60 }, { "nst", (-3 * 60 + 30) * 60 },
	{ "adt", -3 * 3600 }, { "ast", -4 * 3600 }, { "ydt", -8 * 3600 }, { "yst", -9 * 3600 },
	{ "akdt", -8 * 3600 }, { "akst", -9 * 3600 }, { "hadt", -9 * 3600 },
	{ "hast", -10 * 3600 }, { "hst", -10 * 3600 }, { "ces", 2 * 3600 }, { "cest", 2 * 3600 },
	{ "mez", 3600 }, { "mezt", 2 * 3600 }, { "cet", 3600 }, { "met", 3600 },
	{ "eet", 2 * 3600 }, { "msk", 3 * 3600 }, { "msd", 4 * 3600 }, { "wast", 8 * 3600 },
	{ "wadt", 9 * 3600 }, { "hkt", 8 * 3600 }, { "cct", 8 * 3600 }, { "jst", 9 * 3600 },
	{ "kst", 9 * 3600 }, { "kdt", 9 * 3600 }, { "cast", (9 * 60 + 30) * 60 },
	{ "cadt", (10 * 60 + 30) * 60 }, { "east", 10 * 3600 }, { "eadt", 11 * 3600 },
	{ "nzst", 12 * 3600 },
};

/* One zone word of step 3, as INN read it. */
struct zone_read {
	size_t off, len;	/* as written */
	size_t end;		/* where INN goes on reading */
	int32_t inn;		/* INN's offset */
	int32_t rfc;		/* what the text states */
	uint32_t note;		/* ZONE_NAME, ZONE_DIGITS, MISREAD_* or 0 */
	bool stated;		/* the text names this zone (not a prefix of a name) */
};

/* A letter run at *i per step 3; false when INN cannot read it. */
static bool zone_word(const struct text *t, size_t w, struct zone_read *z)
{
	size_t n = 0;

	while (is_alpha(at(t, w + n)))
		n++;
	if (n == 0)
		return false;
	z->off = w;
	z->len = n;
	z->note = 0;
	for (size_t k = 0; k < FG_ARRAY_SIZE(rfc_zones); k++) {
		size_t full = strlen(rfc_zones[k].name);

		if (n <= full && prefix_of(t, w, n, rfc_zones[k].name)) {
			z->end = w + full;
			z->inn = rfc_zones[k].offset;
			z->rfc = z->inn;
			z->stated = n == full || n == 1;
			if (n == 1 && z->inn != 0) {
				z->rfc = 0;	/* RFC 5322 4.3: a military letter */
				z->note = FG_DATE_NOTE_MISREAD_LETTER;
			} else if (n < full) {
				z->note = FG_DATE_NOTE_ZONE_NAME;	/* "ES" for EST */
			}
			return true;
		}
	}
	z->stated = true;
	if (n == 1 && lower(at(t, w)) != 'j') {
		z->end = w + 1;
		z->inn = z->rfc = 0;
		return true;
	}
	for (size_t k = 0; k < FG_ARRAY_SIZE(inn_zones); k++) {
		if (strlen(inn_zones[k].name) == n && prefix_of(t, w, n, inn_zones[k].name)) {
			z->end = w + n;
			z->inn = z->rfc = inn_zones[k].offset;
			/* UTC is RFC 5322's only in spirit: fg_date_parse takes it too */
			z->note = k == 0 ? 0 : FG_DATE_NOTE_ZONE_NAME;
			return true;
		}
	}
	return false;
}

/*
 * "+"/"-" and 1-5 digits at w; false for a sign without a digit. INN tells
 * hours from hhmm by how far its reading moved, CFWS after the digits
 * included: "+1" is +0100, but "+1 (CET)" is +0001 (MISREAD_DIGITS).
 */
static bool zone_number(const struct text *t, size_t w, struct zone_read *z)
{
	int sign = at(t, w) == '+' ? 1 : -1, v = 0;
	size_t n = 0, moved;

	while (n < 5 && is_digit(at(t, w + 1 + n))) {
		v = v * 10 + (at(t, w + 1 + n) - '0');
		n++;
	}
	if (n == 0)
		return false;
	z->off = w;
	z->len = n + 1;
	z->end = w + 1 + n;
	z->stated = true;
	moved = skip_cfws(t, z->end) - (w + 1);
	z->inn = sign * (moved < 3 ? v * 3600 : (v / 100 * 60 + v % 100) * 60);
	z->rfc = sign * (n < 3 ? v * 3600 : (v / 100 * 60 + v % 100) * 60);
	z->note = n == 4 && v / 100 <= 23 && v % 100 <= 59 ? 0 : FG_DATE_NOTE_ZONE_DIGITS;
	if (z->rfc != z->inn)
		z->note |= FG_DATE_NOTE_MISREAD_DIGITS;
	/* "+hh:mm": INN reads +hh and then cannot read ":mm" (MISREAD_RESET) */
	if (n <= 2 && at(t, z->end) == ':' && is_digit(at(t, z->end + 1)) &&
	    is_digit(at(t, z->end + 2)) && !is_digit(at(t, z->end + 3)) &&
	    (at(t, z->end + 1) - '0') * 10 + (at(t, z->end + 2) - '0') <= 59)
		z->rfc = sign * (v * 60 + (at(t, z->end + 1) - '0') * 10 +
				 (at(t, z->end + 2) - '0')) * 60;
	return true;
}

static const char day_names[7][10] = {
	"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
};

static bool is_day_name(const struct text *t, size_t w, size_t n)
{
	for (int d = 0; d < 7; d++)
		if ((n == 3 || n == strlen(day_names[d])) && prefix_of(t, w, n, day_names[d]))
			return true;
	return false;
}

struct fields {
	int day, mon, year, hour, min, sec;
};

/* Steps 1 and 2. 0, or a negative fg_date_error. */
static int read_base(const struct text *t, size_t *i, struct fields *f, struct fg_date_reading *r)
{
	size_t start = *i = skip_cfws(t, 0), w;
	bool day_name;

	if (at(t, *i) == '\0')
		return -FG_DATE_E_EMPTY;
	while (at(t, *i) != '\0' && !is_digit(at(t, *i)) && at(t, *i) != ',')
		(*i)++;
	/* a weekday name before the comma is RFC 5322's; anything else is not */
	for (w = start; is_alpha(at(t, w)); w++)
		;
	day_name = is_day_name(t, start, w - start);
	while (w < *i && (at(t, w) == ' ' || at(t, w) == '\t'))
		w++;
	if (*i > start && (at(t, *i) != ',' || w != *i || !day_name)) {
		r->notes |= FG_DATE_NOTE_BEFORE_DAY;
		r->skip_len = (uint32_t)(*i - start);
	}
	if (at(t, *i) == ',')
		*i = skip_cfws(t, *i + 1);
	if (!number(t, i, 1, 2, &f->day))
		return -FG_DATE_E_DAY;
	f->mon = month(t, i);
	if (f->mon < 0)
		return -FG_DATE_E_MONTH;
	r->year_off = (uint32_t)*i;
	w = *i;
	if (!number(t, i, 2, 4, &f->year))
		return -FG_DATE_E_YEAR;
	while (w < t->len && is_digit(at(t, w)) && w - r->year_off < 4)
		w++;
	r->year_len = (uint32_t)(w - r->year_off);
	if (!number(t, i, 1, 2, &f->hour) || !delim(t, i, ':') || !number(t, i, 1, 2, &f->min))
		return -FG_DATE_E_TIME;
	f->sec = 0;
	if (at(t, *i) == ':' && (!delim(t, i, ':') || !number(t, i, 1, 2, &f->sec)))
		return -FG_DATE_E_TIME;
	return 0;
}

/* Step 3. 0, or -FG_DATE_E_ZONE for a sign without digits. */
static int read_zones(const struct text *t, size_t i, struct fg_date_reading *r)
{
	struct zone_read z, last = { 0 };
	unsigned n = 0;
	bool reset = false;

	while (at(t, i) != '\0') {
		if (at(t, i) == '+' || at(t, i) == '-') {
			if (!zone_number(t, i, &z))
				return -FG_DATE_E_ZONE;
		} else if (!zone_word(t, i, &z)) {
			reset = true;
			break;
		}
		last = z;
		n++;
		i = skip_cfws(t, z.end);
	}
	if (n == 0) {
		r->notes |= reset ? FG_DATE_NOTE_ZONE_UNKNOWN : FG_DATE_NOTE_ZONE_MISSING;
		if (reset) {
			r->zone_off = (uint32_t)i;
			while (is_alpha(at(t, i + r->zone_len)) || (r->zone_len == 0 && at(t, i) != '\0'))
				r->zone_len++;
		}
		return 0;
	}
	r->zone_off = (uint32_t)last.off;
	r->zone_len = (uint32_t)last.len;
	r->inn_zone = reset ? 0 : last.inn;
	/* a prefix INN dropped stated nothing: +0000, as for INN */
	r->zone = reset && !last.stated ? 0 : last.rfc;
	r->notes |= last.note & (FG_DATE_NOTE_ZONE_NAME | FG_DATE_NOTE_ZONE_DIGITS);
	r->notes |= n > 1 ? FG_DATE_NOTE_ZONE_LAST : 0;
	r->notes |= reset ? FG_DATE_NOTE_TRAILING : 0;
	if (r->zone != r->inn_zone)
		r->notes |= reset ? FG_DATE_NOTE_MISREAD_RESET :
			    last.note & (FG_DATE_NOTE_MISREAD_LETTER | FG_DATE_NOTE_MISREAD_DIGITS);
	return 0;
}

static bool is_leap(int y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Step 4: INN's year and range checks. */
static int check_fields(struct fields *f)
{
	static const uint8_t mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (f->year < 50)
		f->year += 2000;
	else if (f->year < 1000)
		f->year += 1900;
	if (f->sec > 60 || f->min > 59 || f->hour > 23)
		return -FG_DATE_E_TIME;
	if (f->day < 1)
		return -FG_DATE_E_DAY;
	if (f->day > mdays[f->mon] + (f->mon == 1 && is_leap(f->year)))
		return -FG_DATE_E_INVALID_DATE;
	if (f->year < 1970)
		return -FG_DATE_E_YEAR;
	return 0;
}

int fg_date_parse_inn(const char *s, size_t len, fg_time_t *out, struct fg_date_reading *r)
{
	struct text t = { s, len };
	struct fg_date_reading local;
	struct fields f;
	fg_time_t base;
	size_t i = 0;
	int rc;

	if (!r)
		r = &local;
	memset(r, 0, sizeof(*r));
	if (memchr(s, '\0', len))
		return -FG_DATE_E_NUL;
	rc = read_base(&t, &i, &f, r);
	if (rc == 0)
		rc = read_zones(&t, i, r);
	if (rc == 0)
		rc = check_fields(&f);
	if (rc < 0)
		return rc;
	if (r->year_len > 2 && at(&t, r->year_off) == '0')
		r->notes |= FG_DATE_NOTE_YEAR_VALUE;
	base = fg_date_from_civil(f.year, f.mon + 1, f.day, f.hour, f.min, f.sec);
	if (base - r->inn_zone == -1)
		return -FG_DATE_E_INN_MINUS_ONE;
	if (out)
		*out = base - r->zone;
	return 0;
}

int fg_date_parse_as(enum fg_date_syntax syntax, const char *s, size_t len, fg_time_t *out,
		     struct fg_date_reading *r)
{
	if (syntax == FG_DATE_SYNTAX_INN)
		return fg_date_parse_inn(s, len, out, r);
	if (r)
		memset(r, 0, sizeof(*r));
	return fg_date_parse(s, len, out);
}

const char *fg_date_syntax_name(enum fg_date_syntax syntax)
{
	return syntax == FG_DATE_SYNTAX_INN ? "inn" : syntax == FG_DATE_SYNTAX_RFC5322 ? "rfc5322" : "?";
}

static const char *const note_names[] = {
	"before-day", "year-value", "zone-missing", "zone-unknown", "zone-name",
	"zone-digits", "zone-last", "trailing", "misread-reset", "misread-letter",
	"misread-digits",
};

const char *fg_date_note_name(uint32_t note)
{
	for (unsigned b = 0; b < FG_ARRAY_SIZE(note_names); b++)
		if (note == 1u << b)
			return note_names[b];
	return "?";
}

/* ---------------------------------------------------------------- words */

struct out {
	char *buf;
	size_t len, n;
};

static void put(struct out *o, const char *fmt, ...) FG_PRINTF(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (o->len == 0)
		return;
	va_start(ap, fmt);
	w = vsnprintf(o->buf + o->n, o->len - o->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		o->n = FG_MIN(o->n + (size_t)w, o->len - 1);
}

/* "+0200" into b (at least 7 octets) */
static const char *offset_str(int32_t off, char *b, size_t len)
{
	int32_t a = off < 0 ? -off : off;

	snprintf(b, len, "%c%02d%02d", off < 0 ? '-' : '+', (int)(a / 3600), (int)(a / 60 % 60));
	return b;
}

/* At most 40 octets of s[off, off+n), printable. */
static void put_quoted(struct out *o, const char *s, size_t slen, size_t off, size_t n)
{
	for (size_t k = off; k < off + n && k < slen && k < off + 40; k++)
		put(o, "%c", s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?');
}

static void clause(struct out *o)
{
	if (o->n)
		put(o, "; ");
}

size_t fg_date_reading_describe(const struct fg_date_reading *r, const char *s, size_t slen,
				char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	char a[16], b[16];

	if (len)
		buf[0] = '\0';
	if (r->notes & FG_DATE_NOTE_BEFORE_DAY) {
		clause(&o);
		put(&o, "text before the day (\"");
		put_quoted(&o, s, slen, 0, r->skip_len);
		put(&o, "\") skipped, as INN does");
	}
	if (r->notes & FG_DATE_NOTE_YEAR_VALUE) {
		clause(&o);
		put(&o, "year ");
		put_quoted(&o, s, slen, r->year_off, r->year_len);
		put(&o, " read by its value, as INN does");
	}
	if (r->notes & FG_DATE_NOTE_ZONE_MISSING) {
		clause(&o);
		put(&o, "no zone: read as UTC (innd reads the server's local time)");
	}
	if (r->notes & FG_DATE_NOTE_ZONE_UNKNOWN) {
		clause(&o);
		put(&o, "zone \"");
		put_quoted(&o, s, slen, r->zone_off, r->zone_len);
		put(&o, "\" unknown: read as +0000, as INN does");
	}
	if (r->notes & (FG_DATE_NOTE_ZONE_NAME | FG_DATE_NOTE_ZONE_DIGITS | FG_DATE_NOTE_ZONE_LAST) &&
	    !(r->notes & FG_DATE_NOTES_MISREAD)) {
		clause(&o);
		put(&o, "%s%s ", r->notes & FG_DATE_NOTE_ZONE_LAST ? "of several zones the last, " : "",
		    r->notes & FG_DATE_NOTE_ZONE_DIGITS ? "numeric zone" : "zone name");
		put_quoted(&o, s, slen, r->zone_off, r->zone_len);
		put(&o, " read as %s, as INN does", offset_str(r->zone, a, sizeof(a)));
	}
	if (r->notes & FG_DATE_NOTE_MISREAD_LETTER) {
		clause(&o);
		put(&o, "INN reads the one-letter zone ");
		put_quoted(&o, s, slen, r->zone_off, r->zone_len);
		put(&o, " as a US zone, %s; floodgate reads it as RFC 5322 4.3 does, -0000",
		    offset_str(r->inn_zone, a, sizeof(a)));
	}
	if (r->notes & FG_DATE_NOTE_MISREAD_DIGITS) {
		clause(&o);
		put(&o, "INN reads the zone ");
		put_quoted(&o, s, slen, r->zone_off, r->zone_len);
		put(&o, " as %s, as minutes, for the space or comment after it; floodgate reads "
		    "hours, %s", offset_str(r->inn_zone, a, sizeof(a)), offset_str(r->zone, b, sizeof(b)));
	}
	if (r->notes & FG_DATE_NOTE_MISREAD_RESET) {
		clause(&o);
		put(&o, "INN reads +0000, as it drops a zone followed by text it cannot read; "
		    "floodgate uses the zone as written, ");
		put_quoted(&o, s, slen, r->zone_off, r->zone_len);
		put(&o, " = %s", offset_str(r->zone, b, sizeof(b)));
	}
	if ((r->notes & FG_DATE_NOTE_TRAILING) && !(r->notes & FG_DATE_NOTE_MISREAD_RESET)) {
		clause(&o);
		put(&o, "text after the zone ignored, as INN does");
	}
	return o.n;
}
