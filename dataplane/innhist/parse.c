/* SPDX-License-Identifier: MIT */
/*
 * parse.c — the three line formats a site brings from INN (innhist.h):
 * hisv6 history lines, news log lines, and files of Message-IDs. Each
 * parser takes one line without its newline, reads nothing past len,
 * and says what was wrong with a line it refuses (*why, static text).
 * They are stricter than INN's strtoul-based reader: a time is decimal
 * digits only, at most 12 of them.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "floodgate/innhist.h"

#define TIME_DIGITS_MAX 12	/* year 33658: far past any real time */
#define TOKEN_HEX 36		/* INN's TOKEN: 18 octets (storage/token.h) */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decimal digits at *p (at least one, at most TIME_DIGITS_MAX). */
static bool number(const char *s, size_t len, size_t *p, fg_time_t *out)
{
	fg_time_t v = 0;
	size_t i = *p;

	while (i < len && s[i] >= '0' && s[i] <= '9' && i - *p < TIME_DIGITS_MAX)
		v = v * 10 + (s[i++] - '0');
	if (i == *p || (i < len && s[i] >= '0' && s[i] <= '9'))
		return false;
	*p = i;
	*out = v;
	return true;
}

static bool is_token(const char *s, size_t len)
{
	if (len != TOKEN_HEX + 2 || s[0] != '@' || s[len - 1] != '@')
		return false;
	for (size_t i = 1; i < len - 1; i++)
		if (hexval(s[i]) < 0)
			return false;
	return true;
}

#define BAD(msg) do { *why = (msg); return -EINVAL; } while (0)

/* hisv6.c hisv6_splitline: "[HASH]\tARRIVED[~EXPIRES[~POSTED]][\tTOKEN]". */
int fg_hisv6_parse(const char *s, size_t len, struct fg_hisv6_line *out, const char **why)
{
	size_t p = 34;

	*why = NULL;
	if (len == 0)
		return 0;
	if (s[0] != '[')
		BAD("'[' missing");
	if (len < 35)
		BAD("line too short for a hash");
	for (unsigned i = 0; i < 16; i++) {
		int hi = hexval(s[1 + 2 * i]), lo = hexval(s[2 + 2 * i]);

		if (hi < 0 || lo < 0)
			BAD("hash is not 32 hex digits");
		out->hash[i] = (uint8_t)(hi << 4 | lo);
	}
	if (s[33] != ']')
		BAD("']' missing after the hash");
	if (s[34] != '\t')
		BAD("tab missing after the hash");
	p = 35;
	out->expires = out->posted = 0;
	out->has_token = false;
	if (!number(s, len, &p, &out->arrived))
		BAD("arrival time is not a number");
	if (p < len && s[p] == '~') {
		p++;
		if (p < len && s[p] == '-')
			p++;
		else if (!number(s, len, &p, &out->expires))
			BAD("expiry time is neither '-' nor a number");
		if (p < len && s[p] == '~') {
			p++;
			if (!number(s, len, &p, &out->posted))
				BAD("posting time is not a number");
		}
	}
	if (p == len)
		return 1;
	if (s[p] != '\t')
		BAD("tab missing before the token");
	p++;
	/* no token: a remembered ID (or prunehistory's work), as INN reads it */
	out->has_token = is_token(s + p, len - p);
	return 1;
}

static bool space(char c)
{
	return c == ' ' || c == '\t';
}

/* The next space-separated word of s from *p: its start and length. */
static bool word(const char *s, size_t len, size_t *p, const char **w, size_t *wl)
{
	size_t i = *p;

	while (i < len && space(s[i]))
		i++;
	if (i == len)
		return false;
	*w = s + i;
	while (i < len && !space(s[i]))
		i++;
	*wl = (size_t)(s + i - *w);
	*p = i;
	return true;
}

static int month(const char *w, size_t wl)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	if (wl != 3)
		return -1;
	for (int m = 0; m < 12; m++)
		if (memcmp(names + 3 * m, w, 3) == 0)
			return m;
	return -1;
}

static bool two(const char *w, int *v, int max)
{
	if (w[0] < '0' || w[0] > '9' || w[1] < '0' || w[1] > '9')
		return false;
	*v = (w[0] - '0') * 10 + (w[1] - '0');
	return *v <= max;
}

/* "mon dd hh:mm:ss.mmm": local time in the latest year that does not put
 * it after now + 1 day (the log keeps no year). */
static bool log_time(const char *mw, size_t ml, const char *dw, size_t dl, const char *tw,
		     size_t tl, fg_time_t now, fg_time_t *out)
{
	struct tm tm, nt;
	time_t t, n = (time_t)now;
	int m = month(mw, ml), d;

	if (m < 0 || dl < 1 || dl > 2 || tl < 8 || tl > 12 || tw[2] != ':' || tw[5] != ':')
		return false;
	if (!two(dl == 2 ? dw : (const char[]){ '0', dw[0] }, &d, 31) || d < 1)
		return false;
	memset(&tm, 0, sizeof(tm));
	if (!two(tw, &tm.tm_hour, 23) || !two(tw + 3, &tm.tm_min, 59) || !two(tw + 6, &tm.tm_sec, 60))
		return false;
	if (tl > 8 && tw[8] != '.')
		return false;
	for (size_t i = 9; i < tl; i++)
		if (tw[i] < '0' || tw[i] > '9')
			return false;
	if (!localtime_r(&n, &nt))
		return false;
	tm.tm_mon = m;
	tm.tm_mday = d;
	tm.tm_year = nt.tm_year;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t != (time_t)-1 && (fg_time_t)t > now + 86400) {
		tm.tm_year--;
		tm.tm_isdst = -1;
		t = mktime(&tm);
	}
	if (t == (time_t)-1)
		return false;
	*out = (fg_time_t)t;
	return true;
}

/* innd(8), LOGGING: "mon dd hh:mm:ss.mmm C feed <message-id> ...". */
int fg_newslog_parse(const char *s, size_t len, fg_time_t now, struct fg_idtime *out,
		     enum fg_newslog_code *code, const char **why)
{
	const char *w[6];
	size_t wl[6], p = 0;

	*why = NULL;
	for (unsigned i = 0; i < 6; i++)
		if (!word(s, len, &p, &w[i], &wl[i])) {
			if (i == 0)
				return 0;
			BAD("fewer than six fields");
		}
	if (wl[3] != 1)
		BAD("the code field is not one character");
	switch (w[3][0]) {
	case '+': *code = FG_NEWSLOG_ACCEPTED; break;
	case 'j': *code = FG_NEWSLOG_JUNKED; break;
	case '-': *code = FG_NEWSLOG_REJECTED; break;
	case 'c': *code = FG_NEWSLOG_CANCEL; break;
	case '?': *code = FG_NEWSLOG_OTHER; break;
	default: BAD("unknown code (not + j - c ?)");
	}
	if (!log_time(w[0], wl[0], w[1], wl[1], w[2], wl[2], now, &out->when))
		BAD("not a news log time (mon dd hh:mm:ss.mmm)");
	if (wl[5] < 3 || w[5][0] != '<' || w[5][wl[5] - 1] != '>') {
		if (wl[5] == 1 && w[5][0] == '?')
			return 0;	/* innd did not know the ID */
		BAD("the sixth field is not a <message-id>");
	}
	out->id = w[5];
	out->id_len = wl[5];
	return *code == FG_NEWSLOG_ACCEPTED || *code == FG_NEWSLOG_JUNKED ? 1 : 0;
}

/* "<id>" or "<id> SECONDS"; blank lines and '#' comments say nothing. */
int fg_idfile_parse(const char *s, size_t len, struct fg_idtime *out, const char **why)
{
	const char *w;
	size_t wl, p = 0;

	*why = NULL;
	if (!word(s, len, &p, &w, &wl) || w[0] == '#')
		return 0;
	if (wl < 3 || w[0] != '<' || w[wl - 1] != '>')
		BAD("not a <message-id>");
	out->id = w;
	out->id_len = wl;
	out->when = 0;
	while (p < len && space(s[p]))
		p++;
	if (p == len)
		return 1;
	if (!number(s, len, &p, &out->when))
		BAD("the time after the ID is not a number of seconds");
	while (p < len && space(s[p]))
		p++;
	if (p != len)
		BAD("more after the time");
	return 1;
}
