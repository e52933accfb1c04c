/* SPDX-License-Identifier: MIT */
/*
 * fuzz_article.c — libFuzzer target for the header-section scanner.
 *
 * The first input octet picks the form and a split step; the rest is the
 * article. Each input is scanned in one go and again in pieces from a
 * buffer that moves between calls, and the two must agree exactly. Every
 * value handed out must lie inside the scanned bytes. A disagreement or an
 * out-of-range value aborts, so the fuzzer reports it as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/article.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_inside(const struct fg_article *a, const char *buf, size_t len)
{
	if (a->complete && (a->body_off > len || a->header_end > a->body_off))
		abort();
	for (unsigned i = 0; i < a->n_fields; i++) {
		struct fg_article_value n = fg_article_field_name(a, i);
		struct fg_article_value v = fg_article_field_value(a, i);

		if (n.ptr < buf || n.ptr + n.len > buf + len || n.len == 0)
			abort();
		if (v.ptr < buf || v.ptr + v.len > buf + len)
			abort();
		if (v.len && (v.ptr[0] == ' ' || v.ptr[v.len - 1] == ' '))
			abort();	/* values are trimmed */
	}
	for (unsigned h = 0; h < FG_HDR__COUNT; h++) {
		struct fg_article_value v = fg_article_get(a, h);
		unsigned n;

		if (!fg_article_count(a, h) != !v.ptr)
			abort();
		fg_article_find(a, fg_hdr_name(h), strlen(fg_hdr_name(h)), &n);
		if (n < fg_article_count(a, h))
			abort();
	}
}

static enum fg_article_result split_scan(struct fg_article *a, const char *s, size_t n,
					 size_t step)
{
	enum fg_article_result r = FG_ARTICLE_AGAIN;
	char *copy = NULL;
	size_t len = 0;

	for (;;) {
		len = len + step > n ? n : len + step;
		free(copy);
		copy = malloc(len ? len : 1);
		if (!copy)
			abort();
		memcpy(copy, s, len);
		r = fg_article_scan(a, copy, len);
		if (r != FG_ARTICLE_AGAIN || len == n)
			break;
	}
	check_inside(a, copy, len);
	free(copy);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fg_article one, parts;
	enum fg_article_form form;
	enum fg_article_result r1, r2;
	const char *s;
	size_t n, step;

	if (size < 1)
		return 0;
	form = (data[0] & 1) ? FG_ARTICLE_PLAIN : FG_ARTICLE_WIRE;
	s = (const char *)data + 1;
	n = size - 1;
	/* small steps, but at most ~256 pieces so big inputs stay fast */
	step = 1 + (data[0] >> 1);
	if (step < n / 256)
		step = n / 256;

	fg_article_init(&one, form);
	r1 = fg_article_scan(&one, s, n);
	check_inside(&one, s, n);
	fg_article_init(&parts, form);
	r2 = split_scan(&parts, s, n, step);
	if (r1 != r2 || one.n_fields != parts.n_fields || one.body_off != parts.body_off ||
	    one.n_defects != parts.n_defects || one.error != parts.error ||
	    one.terminated != parts.terminated ||
	    memcmp(one.field, parts.field, one.n_fields * sizeof(one.field[0])) != 0)
		abort();
	if (fg_article_wire_size(s, n, form) > 2 * (uint64_t)n + 2)
		abort();
	(void)fg_article_detect(s, n);
	return 0;
}
