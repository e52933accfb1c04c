/* SPDX-License-Identifier: MIT */
/*
 * out.c — what every floodctl command shares: usage and error lines, the
 * JSON writer, escaped text output, time input and spans.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "floodctl.h"
#include "floodgate/date.h"

void fg_ctl_usage(const struct fg_ctl_command *cmd, FILE *f)
{
	fprintf(f, "usage: floodctl %s %s\n\n%s\n", cmd->name, cmd->args, cmd->summary);
	if (cmd->help && cmd->help[0])
		fprintf(f, "\n%s", cmd->help);
}

int fg_ctl_fail(const struct fg_ctl_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "floodctl %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return FG_CTL_EXIT_USAGE;
}

/* ---------------------------------------------------------------- JSON */

static void json_escaped(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A member's key; inside an array, only the comma. */
static void json_key(struct fg_ctl_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (j->array[j->depth])
		return;
	json_escaped(j->f, key, strlen(key));
	fputc(':', j->f);
}

static void json_open(struct fg_ctl_json *j, const char *key, bool array)
{
	json_key(j, key);
	fputc(array ? '[' : '{', j->f);
	FG_ASSERT(j->depth + 1 < sizeof(j->need_comma));
	j->depth++;
	j->need_comma[j->depth] = false;
	j->array[j->depth] = array;
}

void fg_ctl_json_begin(struct fg_ctl_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputc('{', f);
}

void fg_ctl_json_end(struct fg_ctl_json *j)
{
	fputs("}\n", j->f);
}

void fg_ctl_json_open(struct fg_ctl_json *j, const char *key)
{
	json_open(j, key, false);
}

void fg_ctl_json_array(struct fg_ctl_json *j, const char *key)
{
	json_open(j, key, true);
}

void fg_ctl_json_close(struct fg_ctl_json *j)
{
	FG_ASSERT(j->depth > 0);
	fputc(j->array[j->depth] ? ']' : '}', j->f);
	j->depth--;
}

void fg_ctl_json_str(struct fg_ctl_json *j, const char *key, const char *ptr, size_t len)
{
	json_key(j, key);
	if (ptr)
		json_escaped(j->f, ptr, len);
	else
		fputs("null", j->f);
}

void fg_ctl_json_cstr(struct fg_ctl_json *j, const char *key, const char *s)
{
	fg_ctl_json_str(j, key, s, s ? strlen(s) : 0);
}

void fg_ctl_json_int(struct fg_ctl_json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void fg_ctl_json_uint(struct fg_ctl_json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void fg_ctl_json_bool(struct fg_ctl_json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void fg_ctl_json_null(struct fg_ctl_json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

/* ---------------------------------------------------------------- text */

void fg_ctl_print_escaped(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

int fg_ctl_parse_time(const char *s, int64_t *out)
{
	const char *p = s + (s[0] == '-');
	char *end;
	long long v;

	if (*p >= '0' && *p <= '9' && strspn(p, "0123456789") == strlen(p)) {
		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno || *end)
			return -ERANGE;
		*out = v;
		return 0;
	}
	return fg_date_parse(s, strlen(s), out) == 0 ? 0 : -EINVAL;
}

const char *fg_ctl_format_span(int64_t secs, char *buf, size_t len)
{
	uint64_t a = secs < 0 ? (uint64_t)0 - (uint64_t)secs : (uint64_t)secs;

	snprintf(buf, len, "%s%" PRIu64 "d %" PRIu64 "h %" PRIu64 "m %" PRIu64 "s",
		 secs < 0 ? "-" : "", a / 86400, a / 3600 % 24, a / 60 % 60, a % 60);
	return buf;
}
