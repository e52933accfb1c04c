/* SPDX-License-Identifier: MIT */
/*
 * html.c — text into HTML, sparklines, and the lookup form's query
 * string (statuspage.h).
 *
 * Escaping: one function for element content and quoted attribute values
 * alike, so a caller cannot pick the wrong one (OWASP's rule #1 and #2
 * character sets together): & < > " ' become references. The page is
 * UTF-8; a byte sequence that is not (RFC 3629 section 3: no overlong
 * forms, no surrogates, nothing past U+10FFFF), a C0 control (tab and
 * newline aside) and DEL become U+FFFD, so what a peer or a header sends
 * can neither end an element nor confuse the browser's decoder.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "floodgate/statuspage.h"

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

/* The length of the UTF-8 sequence at s (n bytes left), 0 when it is not
 * a well-formed one (RFC 3629 section 4's syntax). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void fg_html_escape(struct fg_sbuf *b, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, chars = 0;

	while (i < n) {
		size_t len = utf8_len(p + i, n - i);

		if (max && chars == max) {
			fg_sbuf_puts(b, "\xe2\x80\xa6");	/* U+2026 */
			return;
		}
		chars++;
		if (len == 0) {
			fg_sbuf_puts(b, replacement);
			i++;
			continue;
		}
		if (len > 1) {
			fg_sbuf_put(b, p + i, len);
			i += len;
			continue;
		}
		switch (p[i]) {
		case '&': fg_sbuf_puts(b, "&amp;"); break;
		case '<': fg_sbuf_puts(b, "&lt;"); break;
		case '>': fg_sbuf_puts(b, "&gt;"); break;
		case '"': fg_sbuf_puts(b, "&quot;"); break;
		case '\'': fg_sbuf_puts(b, "&#39;"); break;
		case '\t': case '\n': fg_sbuf_put(b, p + i, 1); break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f)
				fg_sbuf_puts(b, replacement);
			else
				fg_sbuf_put(b, p + i, 1);
		}
		i++;
	}
}

void fg_html_puts(struct fg_sbuf *b, const char *s)
{
	fg_html_escape(b, s, strlen(s), 0);
}

/*
 * One <polyline> per run of values (a NaN ends a run), the newest value
 * marked with a dot; the page's stylesheet colours them. Coordinates are
 * rounded to a tenth of a pixel.
 */
void fg_html_spark(struct fg_sbuf *b, const double *v, unsigned n, unsigned w, unsigned h,
		   const char *label)
{
	double top = 0, dx, y;
	bool open = false;
	unsigned last = n;

	fg_sbuf_printf(b, "<svg class=\"spark\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		       "role=\"img\" aria-label=\"", w, h, w, h);
	fg_html_puts(b, label);
	fg_sbuf_puts(b, "\"><title>");
	fg_html_puts(b, label);
	fg_sbuf_puts(b, "</title>");
	for (unsigned i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] > top)
			top = v[i];
	if (n < 2 || w < 3 || h < 3) {
		fg_sbuf_puts(b, "</svg>");
		return;
	}
	dx = (double)(w - 2) / (double)(n - 1);
	for (unsigned i = 0; i < n; i++) {
		if (isnan(v[i])) {
			if (open)
				fg_sbuf_puts(b, "\"/>");
			open = false;
			continue;
		}
		y = top > 0 ? (double)(h - 2) * (1.0 - fmax(v[i], 0) / top) + 1 : (double)h - 1;
		fg_sbuf_printf(b, "%s%.1f,%.1f", open ? " " : "<polyline points=\"", 1 + dx * i, y);
		open = true;
		last = i;
	}
	if (open)
		fg_sbuf_puts(b, "\"/>");
	if (last < n) {
		y = top > 0 ? (double)(h - 2) * (1.0 - fmax(v[last], 0) / top) + 1 : (double)h - 1;
		fg_sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.5\"/>", 1 + dx * last, y);
	}
	fg_sbuf_puts(b, "</svg>");
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode s[0..n) into out; its length, or -ENOSPC / -EINVAL. */
static int form_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		char c = s[i];

		if (c == '+')
			c = ' ';
		else if (c == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
			 (lo = hexval(s[i + 2])) >= 0) {
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0')
			return -EINVAL;
		if (len + 1 >= cap)
			return -ENOSPC;
		out[len++] = c;
	}
	out[len] = '\0';
	return (int)len;
}

int fg_html_form_value(const char *query, size_t n, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);

	if (cap == 0)
		return -ENOSPC;
	for (size_t i = 0; i <= n;) {
		const char *pair = query + i, *amp = memchr(pair, '&', n - i), *eq;
		size_t plen = amp ? (size_t)(amp - pair) : n - i;

		eq = memchr(pair, '=', plen);
		/* names are compared as they came: the form's are plain */
		if ((eq ? (size_t)(eq - pair) : plen) == klen && memcmp(pair, key, klen) == 0)
			return form_decode(eq ? eq + 1 : pair, eq ? plen - klen - 1 : 0, out, cap);
		i += plen + 1;
	}
	return -ENOENT;
}
