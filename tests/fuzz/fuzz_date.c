/* SPDX-License-Identifier: MIT */
/*
 * fuzz_date.c — libFuzzer target for both date readings (fg_date_parse,
 * fg_date_parse_inn) and fg_date_format. Beyond "no crash", it checks
 * invariants:
 *  - the result is 0 or a named error, and *out is untouched on error;
 *  - a parsed time formats (when in range) to a string that parses back
 *    to the same second: parse(format(t)) == t;
 *  - CFWS around a valid date changes nothing: "(x) " before it and
 *    " (y)" after it give the same time (when the length allows);
 *  - the first 8 octets read as a time format and parse back, so the
 *    formatter meets arbitrary values too;
 *  - the inn reading accepts exactly what INN's own parser accepts
 *    (parsedate_rfc5322_lax from libinn.a, linked in, TZ=UTC, on a
 *    NUL-padded copy; innd never sees a NUL in a header), with INN's
 *    instant unless a MISREAD note says otherwise, and then only the zone
 *    differs; its notes, offsets and words stay inside the input.
 * Any broken invariant aborts (FG_ASSERT).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/date.h"

/* INN 2.7 libinn.h */
extern time_t parsedate_rfc5322_lax(const char *date);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TZ", "UTC", 1);	/* INN's no-zone dates are local time */
	tzset();
	return 0;
}

#define INN_MAX 8192	/* longer inputs: the inn reading alone */

static void check_inn(const char *s, size_t size)
{
	static char padded[INN_MAX + 8];
	struct fg_date_reading r;
	fg_time_t t = 0x5a5a5a5a;
	int rc = fg_date_parse_inn(s, size, &t, &r);
	char words[512];
	time_t inn;

	FG_ASSERT(rc <= 0 && -rc < FG_DATE_E__COUNT);
	FG_ASSERT(fg_date_error_str((enum fg_date_error)-rc)[0] != '?');
	FG_ASSERT(rc < 0 || (r.zone_off + r.zone_len <= size && r.year_off + r.year_len <= size));
	FG_ASSERT(rc < 0 || r.skip_len <= size);
	FG_ASSERT(fg_date_reading_describe(&r, s, size, words, sizeof(words)) < sizeof(words));
	if (rc < 0)
		FG_ASSERT(t == 0x5a5a5a5a);
	if (size > INN_MAX)
		return;
	if (memchr(s, '\0', size)) {
		FG_ASSERT(rc == -FG_DATE_E_NUL);
		return;
	}
	memset(padded, 0, sizeof(padded));
	memcpy(padded, s, size);
	inn = parsedate_rfc5322_lax(padded);
	FG_ASSERT((rc == 0) == (inn != (time_t)-1));
	if (rc == 0 && !(r.notes & FG_DATE_NOTES_MISREAD))
		FG_ASSERT(t == inn && r.zone == r.inn_zone);
	if (rc == 0 && (r.notes & FG_DATE_NOTES_MISREAD))
		FG_ASSERT(t != inn && inn - t == r.zone - r.inn_zone);
}

static void check_round_trip(fg_time_t t)
{
	char buf[FG_DATE_FORMAT_LEN + 1];
	fg_time_t back = 0;
	int n = fg_date_format(t, buf, sizeof(buf));

	if (t < FG_DATE_FORMAT_MIN || t > FG_DATE_FORMAT_MAX) {
		FG_ASSERT(n < 0);
		return;
	}
	FG_ASSERT(n == FG_DATE_FORMAT_LEN && buf[n] == '\0');
	FG_ASSERT(fg_date_parse(buf, (size_t)n, &back) == 0 && back == t);
}

/* "(x) " + s + " (y)" parses to the same time */
static void check_cfws_neutral(const char *s, size_t size, fg_time_t t)
{
	char buf[FG_DATE_MAX_LEN];
	fg_time_t again = 0;

	if (size + 8 > FG_DATE_MAX_LEN)
		return;
	memcpy(buf, "(x) ", 4);
	memcpy(buf + 4, s, size);
	memcpy(buf + 4 + size, " (y)", 4);
	FG_ASSERT(fg_date_parse(buf, size + 8, &again) == 0 && again == t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	fg_time_t t = 0x5a5a5a5a;
	int rc = fg_date_parse(s, size, &t);

	check_inn(s, size);
	FG_ASSERT(rc <= 0 && -rc < FG_DATE_E__COUNT);
	FG_ASSERT(fg_date_error_str((enum fg_date_error)-rc)[0] != '?');
	if (rc < 0) {
		FG_ASSERT(t == 0x5a5a5a5a);
		FG_ASSERT(size <= FG_DATE_MAX_LEN || rc == -FG_DATE_E_TOO_LONG);
	} else {
		FG_ASSERT(size <= FG_DATE_MAX_LEN);
		/* 1900-01-01 -23:59 .. 9999-12-31 +23:59 */
		FG_ASSERT(t >= FG_DATE_FORMAT_MIN - 86400 && t <= FG_DATE_FORMAT_MAX + 86400);
		check_round_trip(t);
		check_cfws_neutral(s, size, t);
	}
	if (size >= 8) {
		int64_t raw;

		memcpy(&raw, data, sizeof(raw));
		check_round_trip(raw);
		check_round_trip(raw % (FG_DATE_FORMAT_MAX + 1));
	}
	return 0;
}
