/* SPDX-License-Identifier: MIT */
/*
 * cmd.c — one command line into a verb and its arguments.
 *
 * RFC 3977 3.1: a command is a keyword, case-insensitive, then arguments
 * separated by one or more spaces or tabs; the line ends with CRLF (the
 * session strips it, and accepts a bare LF). Only the verbs of
 * tbl/nntp_verbs.h are known; anything else, the empty line included, is
 * UNKNOWN (500). Arguments are kept in place as the client sent them, for
 * CHECK and TAKETHIS must echo theirs octet for octet (RFC 4644 2.4.1).
 *
 * A NUL or a CR inside the line (RFC 3977 3.1: neither may appear in a
 * command) is flagged: the session answers 501 without echoing such an
 * argument, so no stray control octet ever goes back out in a response.
 */
#include <string.h>
#include <emmintrin.h>

#include "nntp_int.h"

struct verb_name {
	const char *name;
	uint32_t len;
};

static const struct verb_name verbs[FG_NNTP_VERB__COUNT] = {
#define FG_NNTP_VERB(id, name, help) [FG_NNTP_VERB_##id] = { name, sizeof(name) - 1 },
#include "floodgate/tbl/nntp_verbs.h"
#undef FG_NNTP_VERB
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Case-insensitive equality of a token with a lower-case table name. */
static bool token_is(const char *tok, uint32_t len, const struct verb_name *v)
{
	if (len != v->len)
		return false;
	for (uint32_t i = 0; i < len; i++)
		if ((tok[i] | 0x20) != v->name[i])
			return false;
	return true;
}

static enum fg_nntp_verb lookup(const char *tok, uint32_t len)
{
	/* the streaming commands first: they are nearly every line */
	if (token_is(tok, len, &verbs[FG_NNTP_VERB_CHECK]))
		return FG_NNTP_VERB_CHECK;
	if (token_is(tok, len, &verbs[FG_NNTP_VERB_TAKETHIS]))
		return FG_NNTP_VERB_TAKETHIS;
	for (unsigned v = 0; v < FG_NNTP_VERB_UNKNOWN; v++)
		if (token_is(tok, len, &verbs[v]))
			return (enum fg_nntp_verb)v;
	return FG_NNTP_VERB_UNKNOWN;
}

enum fg_nntp_verb fg_nntp_cmd_verb(const char *line, uint32_t len)
{
	uint32_t s = 0, e;

	while (s < len && is_blank(line[s]))
		s++;
	for (e = s; e < len && !is_blank(line[e]); e++)
		;
	return lookup(line + s, e - s);
}

/* Bit i set: p[i] is a blank (SP, HT), for the n <= 64 octets at p;
 * *bad is set when one of them is a NUL or a CR. Sixteen at a time. */
static uint64_t blanks64(const char *p, uint32_t n, bool *bad)
{
	const __m128i sp = _mm_set1_epi8(' '), ht = _mm_set1_epi8('\t');
	const __m128i nul = _mm_setzero_si128(), cr = _mm_set1_epi8('\r');
	uint64_t blank = 0, badm = 0;
	char tail[16];

	for (uint32_t i = 0; i < n; i += 16) {
		__m128i x;

		if (n - i >= 16) {
			x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		} else {
			/* never read past the line: the rest is a token octet */
			memset(tail, 'x', sizeof(tail));
			memcpy(tail, p + i, n - i);
			x = _mm_loadu_si128((const __m128i *)(const void *)tail);
		}
		blank |= (uint64_t)(unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, ht))) << i;
		badm |= (uint64_t)(unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, nul), _mm_cmpeq_epi8(x, cr))) << i;
	}
	*bad |= badm != 0;
	return blank;
}

static void token(struct fg_nntp_cmd *c, const char *tok, uint32_t len)
{
	if (c->verb == FG_NNTP_VERB__COUNT) {
		c->verb = lookup(tok, len);
		return;
	}
	if (c->argc < FG_NNTP_MAX_ARGS) {
		c->arg[c->argc] = tok;
		c->arg_len[c->argc] = len;
	}
	if (c->argc <= FG_NNTP_MAX_ARGS)
		c->argc++;
}

/*
 * The line in windows of 64 octets: a mask of its blanks, then the token
 * boundaries from the mask (a start is a non-blank after a blank, an end
 * a blank after a non-blank), taken in order with count-trailing-zeros.
 * Each octet is looked at once, sixteen at a time.
 */
void fg_nntp_cmd_parse(const char *line, uint32_t len, struct fg_nntp_cmd *c)
{
	bool in_tok = false;
	uint32_t start = 0;

	c->verb = FG_NNTP_VERB__COUNT;	/* no token yet */
	c->argc = 0;
	c->key = NULL;
	c->bad_char = false;
	c->end = line + len;
	for (uint32_t w = 0; w < len; w += 64) {
		uint32_t n = len - w < 64 ? len - w : 64;
		uint64_t valid = n == 64 ? ~0ull : (1ull << n) - 1;
		uint64_t blank = blanks64(line + w, n, &c->bad_char);
		uint64_t tok = ~blank & valid, prev = tok << 1 | in_tok;
		uint64_t events = (tok & ~prev) | (blank & prev);

		while (events) {
			uint32_t at = w + (uint32_t)__builtin_ctzll(events);

			if (!in_tok)
				start = at;
			else
				token(c, line + start, at - start);
			in_tok = !in_tok;
			events &= events - 1;
		}
	}
	if (in_tok)
		token(c, line + start, len - start);
	if (c->verb == FG_NNTP_VERB__COUNT)
		c->verb = FG_NNTP_VERB_UNKNOWN;
}

const char *fg_nntp_verb_name(enum fg_nntp_verb v)
{
	return (unsigned)v < FG_NNTP_VERB__COUNT ? verbs[v].name : NULL;
}

static const char *const verb_helps[FG_NNTP_VERB__COUNT] = {
#define FG_NNTP_VERB(id, name, help) [FG_NNTP_VERB_##id] = help,
#include "floodgate/tbl/nntp_verbs.h"
#undef FG_NNTP_VERB
};

const char *fg_nntp_verb_help(enum fg_nntp_verb v)
{
	return (unsigned)v < FG_NNTP_VERB__COUNT ? verb_helps[v] : NULL;
}

static const unsigned code_numbers[FG_NNTP_CODE__COUNT] = {
#define FG_NNTP_CODE(id, number, help) [FG_NNTP_CODE_##id] = number,
#include "floodgate/tbl/nntp_codes.h"
#undef FG_NNTP_CODE
};

static const char *const code_helps[FG_NNTP_CODE__COUNT] = {
#define FG_NNTP_CODE(id, number, help) [FG_NNTP_CODE_##id] = help,
#include "floodgate/tbl/nntp_codes.h"
#undef FG_NNTP_CODE
};

unsigned fg_nntp_code_number(enum fg_nntp_code c)
{
	return (unsigned)c < FG_NNTP_CODE__COUNT ? code_numbers[c] : 0;
}

const char *fg_nntp_code_help(enum fg_nntp_code c)
{
	return (unsigned)c < FG_NNTP_CODE__COUNT ? code_helps[c] : NULL;
}
