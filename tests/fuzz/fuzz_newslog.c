/* SPDX-License-Identifier: MIT */
/*
 * fuzz_newslog.c — INN news log lines (innhist.h, fg_newslog_parse) from
 * arbitrary bytes, one line per newline, each in a buffer of its exact
 * length. A line taken is an accepted one ('+' or 'j') whose ID lies in
 * the line, '<' to '>', and whose time is not after now + 1 day; a line
 * refused says why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/innhist.h"
#include "lines.h"

#define NOW 1765000000

static void check_line(const char *s, size_t len)
{
	struct fg_idtime t;
	enum fg_newslog_code c;
	const char *why;
	int rc;

	rc = fg_newslog_parse(s, len, NOW, &t, &c, &why);
	if (rc < 0 && (rc != -EINVAL || !why))
		abort();
	if (rc == 1) {
		if (c != FG_NEWSLOG_ACCEPTED && c != FG_NEWSLOG_JUNKED)
			abort();
		if (t.id < s || t.id + t.id_len > s + len || t.id_len < 3 ||
		    t.id[0] != '<' || t.id[t.id_len - 1] != '>')
			abort();
		if (t.when > NOW + 86400)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_line(data, size, check_line);
	return 0;
}
