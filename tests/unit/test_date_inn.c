/* SPDX-License-Identifier: MIT */
/*
 * test_date_inn.c — differential test of fg_date_parse against INN.
 *
 * INN's `convdate -n` (run with TZ=UTC) calls parsedate_rfc5322_lax(),
 * the parser innd itself applies to Date and Injection-Date. A seeded
 * generator writes 1,600 date strings: every form fg_date_parse accepts,
 * written with the variety real news software shows (weekday or not,
 * comments, folding, odd spacing, 2/3/4-digit years, every zone kind),
 * and then broken on purpose in about half of them: out-of-range fields,
 * impossible days, trailing garbage, bad or missing zones, unterminated
 * comments, over-long input, bare line breaks, and random byte edits.
 *
 * Each string goes to both parsers. They agree when both refuse it, or
 * both accept it with the same time. Every disagreement must fall into
 * one of the classes below, each defined by a predicate on the two
 * results and the string (never by the generator's intent alone), and
 * each listed with its reason in docs/rules.md, "## Date parsing compared
 * with INN" — the test checks that the document names every class. Any
 * other disagreement fails the test and is printed.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floodgate/common.h"
#include "floodgate/date.h"
#include "fgtest.h"

#define N_STRINGS 1600
#define CONVDATE "/usr/lib/news/bin/convdate"

enum inn_class {
	AGREE,
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
	INN_LETTER_CR,		/* INN reads a letter zone before CR as a US zone (C -> CDT) */
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

/* posix_spawn wants writable strings (-Wwrite-strings) */
static char env_tz[] = "TZ=UTC", env_path[] = "PATH=/usr/bin:/bin";
static char arg0[] = "convdate", arg_n[] = "-n", arg_end[] = "--";

static struct verdict run_convdate(char *date)
{
	char *const envp[] = { env_tz, env_path, NULL };
	const char *path = getenv("FG_CONVDATE") ? getenv("FG_CONVDATE") : CONVDATE;
	char *const argv[] = { arg0, arg_n, arg_end, date, NULL };
	struct verdict v = { false, 0 };
	posix_spawn_file_actions_t fa;
	char buf[128], *end;
	size_t n = 0;
	ssize_t r;
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	ck_assert_msg(posix_spawn(&pid, path, &fa, NULL, argv, envp) == 0, "cannot run %s", path);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while ((r = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	buf[n] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && n > 0) {
		v.t = strtoll(buf, &end, 10);
		v.ok = end != buf && *end == '\n';
	}
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

/*
 * INN's quirk: a one-letter zone followed by CR is taken as the first
 * zone of its table starting with that letter (E -> EDT, C -> CDT,
 * M -> MDT, P -> PDT). The shift INN's time then has against ours, 0 if
 * the string holds no such letter.
 */
static fg_time_t letter_cr_shift(const char *s, size_t len)
{
	static const char letters[] = "ecmp";	/* EDT -4 h, CDT -5 h, MDT -6 h, PDT -7 h */

	for (size_t i = 1; i + 1 < len; i++) {
		char l = (char)(s[i] | 0x20), before = (char)(s[i - 1] | 0x20);
		const char *k = strchr(letters, l);

		if (s[i + 1] == '\r' && k && !(before >= 'a' && before <= 'z'))
			return (fg_time_t)(4 + (k - letters)) * 3600;
	}
	return 0;
}

/*
 * RFC 5322 4.3 maps a year by its number of digits ("049" is 1949,
 * "0049" is the year 49, "02008" is 2008); INN by its value, reading at
 * most four digits ("049" and "0049" are 2049, "02008" fails). When both
 * accept, INN's time is ours a century later (plus any letter-CR shift).
 */
static bool is_year_digits(const char *s, size_t len, int rc, fg_time_t ours, struct verdict inn)
{
	fg_time_t d = inn.t - ours - letter_cr_shift(s, len);

	if (rc == 0 && inn.ok)
		return (d == 36524LL * 86400 || d == 36525LL * 86400) && has_digit_run(s, len, 3, true);
	if (rc == -FG_DATE_E_YEAR && inn.ok)
		return has_digit_run(s, len, 4, true);
	return rc == 0 && !inn.ok && has_digit_run(s, len, 5, true);
}

static enum inn_class classify(const struct out *o, int rc, fg_time_t ours, struct verdict inn)
{
	if ((rc != 0 && !inn.ok) || (rc == 0 && inn.ok && ours == inn.t))
		return AGREE;
	if (is_year_digits(o->s, o->len, rc, ours, inn))
		return INN_YEAR_DIGITS;
	if (rc == 0 && !inn.ok && ours < 86400)
		return INN_PRE_1970;
	if (rc == 0 && inn.ok && inn.t - ours == letter_cr_shift(o->s, o->len) && inn.t != ours)
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

START_TEST(test_against_inn)
{
	unsigned counts[CLASS__COUNT] = { 0 }, both_ok = 0, both_refuse = 0;

	if (getenv("FG_DATE_INN_SEED"))	/* explore other seeds by hand */
		rng_state = strtoull(getenv("FG_DATE_INN_SEED"), NULL, 0);

	for (int i = 0; i < N_STRINGS; i++) {
		struct out o;
		fg_time_t ours = 0;
		int rc;
		struct verdict inn;
		enum inn_class c;

		generate(&o);
		rc = fg_date_parse(o.s, o.len, &ours);
		inn = run_convdate(o.s);
		c = classify(&o, rc, ours, inn);
		counts[c]++;
		both_ok += rc == 0 && inn.ok && ours == inn.t;
		both_refuse += rc != 0 && !inn.ok;
		if (c == UNCLASSIFIED || getenv("FG_DATE_INN_VERBOSE")) {
			printf("%-14s ours %s %lld, INN %s %lld: \"", class_names[c],
			       rc ? fg_date_error_str(-rc) : "ok", (long long)ours,
			       inn.ok ? "ok" : "refused", (long long)inn.t);
			print_escaped(o.s, o.len);
			printf("\"\n");
			fflush(stdout);
		}
	}
	printf("%d strings: %u accepted alike, %u refused by both\n", N_STRINGS, both_ok, both_refuse);
	for (int c = 1; c < CLASS__COUNT; c++)
		printf("  %-16s %u\n", class_names[c], counts[c]);
	fflush(stdout);
	ck_assert_uint_eq(counts[UNCLASSIFIED], 0);
	/* the comparison itself works: most valid strings agree */
	ck_assert_uint_gt(both_ok, N_STRINGS / 3);
	ck_assert_uint_gt(both_refuse, N_STRINGS / 10);
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
	tcase_add_test(tc, test_against_inn);
	tcase_add_test(tc, test_classes_documented);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(date_inn_suite)
