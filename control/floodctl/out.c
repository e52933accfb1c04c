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

struct fg_json *fg_ctl_json_begin(struct fg_ctl_json *doc, FILE *f)
{
	doc->f = f;
	fg_sbuf_init(&doc->b);
	fg_json_begin(&doc->j, &doc->b);
	return &doc->j;
}

void fg_ctl_json_end(struct fg_ctl_json *doc)
{
	fg_json_end(&doc->j);
	fg_sbuf_put(&doc->b, "\n", 1);
	if (doc->b.failed)
		fputs("floodctl: out of memory for the JSON output\n", stderr);
	else
		fwrite(doc->b.p, 1, doc->b.len, doc->f);
	fg_sbuf_free(&doc->b);
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
