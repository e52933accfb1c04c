/* SPDX-License-Identifier: MIT */
/*
 * reader.c — where an article ends, in any segmentation; and dot-unstuffing.
 *
 * RFC 3977 3.1.1: an article travels as CRLF lines, a line that starts
 * with "." gets one more "." in front (dot-stuffing), and a line holding a
 * single "." ends it. Only CRLF ends a line: a bare LF is content, as for
 * innd and for the header scanner (article.h), so the filter, the scanner
 * and the news server behind agree on where lines and the article end.
 *
 * The reader consumes the octets after the command line and reports, per
 * piece: how many at its start are article content, and whether the
 * terminator was consumed. Content is passed on in wire form (the sink
 * relays it byte for byte); the terminator is not content. A "." at a line
 * start might begin the terminator, so when a piece ends right after it
 * (or after ".\r") those one or two octets are held back and, once the
 * next piece shows they were content after all, reported as `held`: the
 * caller emits them from the constant ".\r" (they are always a prefix of
 * it), which keeps content a prefix of each piece and needs no buffer.
 *
 * Speed: inside a line the only thing that matters is a line start that
 * holds a dot, so the search looks for the pair "\n." sixteen octets at a
 * time (SSE2 compares of two overlapping loads) and checks the CR before a
 * hit; every other octet of a body is looked at once, in a vector.
 */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nntp_int.h"

void fg_nntp_reader_init(struct fg_nntp_reader *r)
{
	r->state = FG_RD_LINE_START;
	r->held = 0;
}

/* First j in [from, n - 1) with p[j] == '\n' and p[j + 1] == '.', else n. */
static uint32_t find_nl_dot(const uint8_t *p, uint32_t from, uint32_t n)
{
	uint32_t j = from;

#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n'), dot = _mm_set1_epi8('.');

	while (n - j >= 17) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + j));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + j + 1));
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_and_si128(_mm_cmpeq_epi8(a, nl), _mm_cmpeq_epi8(b, dot)));

		if (m)
			return j + (uint32_t)__builtin_ctz(m);
		j += 16;
	}
#endif
	while (j + 1 < n) {
		const uint8_t *lf = memchr(p + j, '\n', n - 1 - j);

		if (!lf)
			break;
		j = (uint32_t)(lf - p);
		if (p[j + 1] == '.')
			return j;
		j++;
	}
	return n;
}

/*
 * Inside a line from `start` (the octet before it is not a CR): skip to the
 * next CRLF that starts a line with a dot. Returns the dot's offset with
 * the state LINE_START, or n with the state the piece ends in.
 */
static uint32_t skip_body(const uint8_t *p, uint32_t start, uint32_t n,
			  enum fg_nntp_rd_state *st)
{
	uint32_t i = start;

	for (;;) {
		uint32_t j = find_nl_dot(p, i, n);

		if (j == n)
			break;
		if (j > start && p[j - 1] == '\r') {
			*st = FG_RD_LINE_START;
			return j + 1;
		}
		i = j + 1;	/* a bare LF is content */
	}
	if (p[n - 1] == '\r')
		*st = FG_RD_CR;
	else if (p[n - 1] == '\n' && n - 1 > start && p[n - 2] == '\r')
		*st = FG_RD_LINE_START;
	else
		*st = FG_RD_MID;
	return n;
}

/*
 * Octets held back (r->held) belong to earlier pieces; the content of this
 * piece always starts at its first octet, so a held "." or ".\r" that turns
 * out to be content is reported in out->held, to be emitted before it.
 */
void fg_nntp_reader_scan(struct fg_nntp_reader *r, const uint8_t *p, uint32_t n,
			 struct fg_nntp_read *out)
{
	enum fg_nntp_rd_state st = r->state;
	uint32_t i = 0, content = 0;	/* p[0, content) is content */

	out->held = 0;
	out->end = false;
	while (i < n) {
		uint8_t c = p[i];

		switch (st) {
		case FG_RD_MID:
			i = skip_body(p, i, n, &st);
			content = i;
			continue;
		case FG_RD_LINE_START:
			if (c == '.') {
				st = FG_RD_DOT;	/* held back: content stays before it */
			} else {
				st = c == '\r' ? FG_RD_CR : FG_RD_MID;
				content = i + 1;
			}
			i++;
			continue;
		case FG_RD_CR:
			st = c == '\n' ? FG_RD_LINE_START : c == '\r' ? FG_RD_CR : FG_RD_MID;
			content = ++i;
			continue;
		case FG_RD_DOT:
			if (c == '\r') {
				st = FG_RD_DOT_CR;
				i++;
				continue;
			}
			break;	/* ".." (stuffing) or ".x": the dot was content */
		case FG_RD_DOT_CR:
			if (c == '\n') {
				/* RFC 3977 3.1.1: "." CRLF ends the article */
				out->content = content;
				out->consumed = i + 1;
				out->end = true;
				r->state = FG_RD_LINE_START;
				r->held = 0;
				return;
			}
			break;
		}
		/* not the terminator: what was held is content, and so is c */
		if (r->held) {
			out->held = r->held;
			r->held = 0;
		}
		st = c == '\r' ? FG_RD_CR : FG_RD_MID;
		content = ++i;
	}
	if (st == FG_RD_DOT || st == FG_RD_DOT_CR)
		r->held += n - content;
	r->state = st;
	out->content = content;
	out->consumed = n;
}

void fg_sink_unstuff_init(struct fg_sink_unstuff *u)
{
	u->line_start = true;
	u->cr = false;
}

/* RFC 3977 3.1.1: a line's first "." is stuffing. Only CRLF ends a line. */
size_t fg_sink_unstuff(struct fg_sink_unstuff *u, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t c = in[i];

		if (u->line_start && c == '.') {
			u->line_start = false;
			u->cr = false;
			continue;
		}
		out[o++] = c;
		u->line_start = c == '\n' && u->cr;
		u->cr = c == '\r';
	}
	return o;
}
