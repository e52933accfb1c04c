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

void fg_nntp_cmd_parse(const char *line, uint32_t len, struct fg_nntp_cmd *c)
{
	uint32_t i = 0, s;
	bool verb_done = false;

	c->verb = FG_NNTP_VERB_UNKNOWN;
	c->argc = 0;
	c->key = NULL;
	c->bad_char = memchr(line, '\0', len) != NULL || memchr(line, '\r', len) != NULL;
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && !is_blank(line[i]))
			i++;
		if (!verb_done) {
			c->verb = lookup(line + s, i - s);
			verb_done = true;
			continue;
		}
		if (c->argc < FG_NNTP_MAX_ARGS) {
			c->arg[c->argc] = line + s;
			c->arg_len[c->argc] = i - s;
		}
		if (c->argc <= FG_NNTP_MAX_ARGS)
			c->argc++;
	}
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
