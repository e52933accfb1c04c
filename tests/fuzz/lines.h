/* SPDX-License-Identifier: MIT */
/*
 * lines.h — the fuzz targets of line parsers (INN's history, news log, ID
 * files) cut their input at each newline and hand every line to the
 * parser in a buffer of its exact length, so an overread is caught.
 */
#ifndef FG_FUZZ_LINES_H
#define FG_FUZZ_LINES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void fuzz_each_line(const uint8_t *data, size_t size,
				  void (*check)(const char *line, size_t len))
{
	const char *s = (const char *)data, *end = s + size;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char *copy = malloc(len ? len : 1);

		memcpy(copy, s, len);
		check(copy, len);
		free(copy);
		s += len + (nl != NULL);
	}
}

#endif
