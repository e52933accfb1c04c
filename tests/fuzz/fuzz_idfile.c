/* SPDX-License-Identifier: MIT */
/*
 * fuzz_idfile.c — lines of a file of Message-IDs (innhist.h,
 * fg_idfile_parse) from arbitrary bytes, each in a buffer of its exact
 * length. A line taken has its ID in the line, '<' to '>', with no space
 * in it, and nothing after it but a time and spaces.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/innhist.h"
#include "lines.h"

static void check_line(const char *s, size_t len)
{
	struct fg_idtime t;
	const char *why;
	int rc;

	rc = fg_idfile_parse(s, len, &t, &why);
	if (rc < 0 && (rc != -EINVAL || !why))
		abort();
	if (rc == 1) {
		if (t.id < s || t.id + t.id_len > s + len || t.id_len < 3 ||
		    t.id[0] != '<' || t.id[t.id_len - 1] != '>' || t.when < 0)
			abort();
		for (size_t i = 0; i < t.id_len; i++)
			if (t.id[i] == ' ' || t.id[i] == '\t')
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_line(data, size, check_line);
	return 0;
}
