/* SPDX-License-Identifier: MIT */
/*
 * fuzz_html.c — the status page's escaper (statuspage.h) on arbitrary
 * bytes: a peer's name, a throttle's reason, a port's name all reach the
 * page through it. The first byte picks the length cap (0: none). Beyond
 * "no crash, no overread": the output is always UTF-8, holds no < > " '
 * and no & that does not begin one of the escaper's references, no C0
 * control but tab and newline and no DEL; with a cap, it is at most cap
 * characters and an ellipsis. The same bytes as a sparkline's label are
 * escaped alike.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/statuspage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The characters of s[0..n), 0 when it is not UTF-8 (RFC 3629). */
static size_t utf8_chars(const unsigned char *s, size_t n)
{
	size_t chars = 0;

	for (size_t i = 0; i < n; chars++) {
		unsigned c = s[i], len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
			 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		uint32_t cp;

		if (!len || i + len > n)
			return 0;
		cp = len == 1 ? c : c & (0xffu >> (len + 1));
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3fu);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return chars ? chars : (n == 0);
}

/* Clean, and its characters (a reference counts as one). */
static size_t check_clean(const char *p, size_t n)
{
	static const char *const refs[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };
	size_t chars = utf8_chars((const unsigned char *)p, n);

	if (n && !chars)
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		bool ok = false;

		if (c == '<' || c == '>' || c == '"' || c == '\'' || c == 0x7f ||
		    (c < 0x20 && c != '\t' && c != '\n'))
			abort();
		if (c != '&')
			continue;
		for (size_t k = 0; k < sizeof(refs) / sizeof(refs[0]); k++)
			if (n - i >= strlen(refs[k]) && memcmp(p + i, refs[k], strlen(refs[k])) == 0) {
				chars -= strlen(refs[k]) - 1;
				ok = true;
			}
		if (!ok)
			abort();
	}
	return chars;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_sbuf b;
	size_t max, chars;
	char *label;
	double v[2] = { 1, 2 };

	if (size == 0)
		return 0;
	max = data[0] % 8 == 0 ? 0 : data[0] % 64;
	fg_sbuf_init(&b);
	fg_html_escape(&b, (const char *)data + 1, size - 1, max);
	if (b.failed)
		abort();
	chars = check_clean(b.p, b.len);
	/* a cut text ends in U+2026, which counts as one more character */
	if (max && chars > max + 1)
		abort();
	fg_sbuf_free(&b);
	/* as a label: NUL-terminated, inside an attribute and a <title> */
	label = malloc(size);
	if (!label)
		return 0;
	memcpy(label, data + 1, size - 1);
	label[size - 1] = '\0';
	fg_sbuf_init(&b);
	fg_html_spark(&b, v, 2, 40, 10, label);
	if (b.failed || strncmp(b.p, "<svg ", 5) != 0 || !strstr(b.p, "</svg>"))
		abort();
	{
		const char *from = strstr(b.p, "aria-label=\"") + 12, *to = strchr(from, '"');

		if (!to || strncmp(to, "\"><title>", 9) != 0)
			abort();
		check_clean(from, (size_t)(to - from));
	}
	free(label);
	fg_sbuf_free(&b);
	return 0;
}
