/* SPDX-License-Identifier: MIT */
/*
 * respguard.c — the scan every octet from a Redis node passes before
 * hiredis's reader sees it (respguard.h has the steps and the bounds).
 * One octet at a time, except a bulk string's body, which is passed over
 * whole; the state carries across reads, so a header cut between two
 * reads is read as one.
 */
#include <errno.h>
#include <string.h>

#include "floodgate/respguard.h"

enum {
	S_TYPE = 0,		/* the next value's type byte */
	S_TEXT,			/* a status or error line */
	S_NUMBER,		/* an integer's line, or a "$" or "*" header's */
	S_BULK,			/* a bulk string's octets */
	S_BULK_CR,		/* and its CRLF */
	S_BULK_LF,
};

#define INT_LIMIT 9223372036854775807ull	/* LLONG_MAX; -LLONG_MIN is one more */

void fg_resp_guard_init(struct fg_resp_guard *g)
{
	memset(g, 0, sizeof(*g));
}

static int refuse(struct fg_resp_guard *g, int err, const char *why)
{
	g->err = err;
	g->why = why;
	return err;
}

/* A value ended: so does every array it was the last element of, and the
 * reply when no array is left open. */
static void value_done(struct fg_resp_guard *g)
{
	while (g->depth && --g->left[g->depth - 1] == 0)
		g->depth--;
	if (g->depth == 0) {
		g->replies++;
		g->values = 0;
		g->bytes = 0;
	}
	g->state = S_TYPE;
}

/* Step 1: a type byte starts a value. */
static int type_byte(struct fg_resp_guard *g, uint8_t c)
{
	if (++g->values > FG_RESP_MAX_VALUES)
		return refuse(g, -EMSGSIZE, "a reply of more values than the client takes");
	switch (c) {
	case '+':
	case '-':
		g->state = S_TEXT;
		break;
	case '*':
		if (g->depth == FG_RESP_MAX_DEPTH)
			return refuse(g, -EMSGSIZE, "arrays nested deeper than the client reads");
		/* fall through */
	case '$':
	case ':':
		g->state = S_NUMBER;
		break;
	default:
		return refuse(g, -EPROTO, "not a RESP2 type byte");
	}
	g->type = c;
	g->cr = false;
	g->neg = false;
	g->num = 0;
	g->line = 0;
	return 0;
}

/* Step 3: a number's line ended: an integer is a value; a "$" or "*"
 * header declares a nil (-1 only), a bulk string or an array. */
static int number_done(struct fg_resp_guard *g)
{
	if (g->line == (g->neg ? 1u : 0u))
		return refuse(g, -EPROTO, "a number without its digits");
	if (g->neg && g->num == 0)
		return refuse(g, -EPROTO, "a number \"-0\"");
	if (g->type == ':' || g->neg || (g->type == '*' && g->num == 0)) {
		value_done(g);		/* an integer, nil, or an empty array */
	} else if (g->type == '$') {
		g->skip = g->num;
		g->state = g->skip ? S_BULK : S_BULK_CR;
	} else {
		g->left[g->depth++] = (uint32_t)g->num;
		g->state = S_TYPE;
	}
	return 0;
}

/* Step 2: one octet of a number's line, read as hiredis 0.14.1 reads it
 * (string2ll): an optional '-', then "0" alone or digits without a
 * leading zero, up to CRLF; an integer within a long long; a header's
 * negative number -1 only, its positive one within its bound. */
static int number_octet(struct fg_resp_guard *g, uint8_t c)
{
	uint64_t d, max;

	if (g->cr)
		return c == '\n' ? number_done(g) : refuse(g, -EPROTO, "a CR inside a number");
	if (c == '\r') {
		g->cr = true;
		return 0;
	}
	if (++g->line > FG_RESP_MAX_LINE)
		return refuse(g, -EMSGSIZE, "a number's line longer than the client reads");
	if (c == '-' && g->line == 1) {
		g->neg = true;
		return 0;
	}
	if (c < '0' || c > '9')
		return refuse(g, -EPROTO, "a number that is not decimal");
	if (g->num == 0 && g->line > (g->neg ? 2u : 1u))
		return refuse(g, -EPROTO, "a number with a leading zero");
	d = (uint64_t)(c - '0');
	if (g->type == ':') {
		max = INT_LIMIT + (g->neg ? 1u : 0u);
		if (g->num > (max - d) / 10)
			return refuse(g, -EPROTO, "an integer beyond a long long");
		g->num = g->num * 10 + d;
		return 0;
	}
	if (g->neg) {
		if (g->num != 0 || d != 1)
			return refuse(g, -EPROTO, "a negative length other than -1");
		g->num = 1;
		return 0;
	}
	max = g->type == '$' ? FG_RESP_MAX_BULK : FG_RESP_MAX_ELEMENTS;
	if (g->num > (max - d) / 10)
		return refuse(g, -EMSGSIZE, g->type == '$' ?
			      "a bulk string longer than the client takes" :
			      "an array of more elements than the client takes");
	g->num = g->num * 10 + d;
	return 0;
}

/* One octet of a status or error line: anything up to CRLF (a lone CR
 * is the line's own, as hiredis reads it). */
static int text_octet(struct fg_resp_guard *g, uint8_t c)
{
	if (g->cr && c == '\n') {
		value_done(g);
		return 0;
	}
	g->cr = c == '\r';
	if (++g->line > FG_RESP_MAX_LINE)
		return refuse(g, -EMSGSIZE, "a line longer than the client reads");
	return 0;
}

int fg_resp_guard_scan(struct fg_resp_guard *g, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i = 0;
	int rc = 0;

	if (g->err)
		return g->err;
	while (i < len && rc == 0) {
		uint8_t c;

		if (g->state == S_BULK) {
			uint64_t n = len - i < g->skip ? len - i : g->skip;

			g->skip -= n;
			g->bytes += n;
			i += (size_t)n;
			if (g->skip == 0)
				g->state = S_BULK_CR;
		} else {
			c = p[i++];
			g->bytes++;
			switch (g->state) {
			case S_TYPE:
				rc = type_byte(g, c);
				break;
			case S_NUMBER:
				rc = number_octet(g, c);
				break;
			case S_TEXT:
				rc = text_octet(g, c);
				break;
			case S_BULK_CR:
				g->state = S_BULK_LF;
				if (c != '\r')
					rc = refuse(g, -EPROTO, "a bulk string not ended by CRLF");
				break;
			default:	/* S_BULK_LF */
				if (c != '\n')
					rc = refuse(g, -EPROTO, "a bulk string not ended by CRLF");
				else
					value_done(g);
				break;
			}
		}
		if (rc == 0 && g->bytes > FG_RESP_MAX_REPLY)
			rc = refuse(g, -EMSGSIZE, "a reply longer than the client takes");
	}
	return rc;
}
