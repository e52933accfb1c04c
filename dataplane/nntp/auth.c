/* SPDX-License-Identifier: MIT */
/*
 * auth.c — AUTHINFO USER/PASS (RFC 4643 2.3) for peers whose entry has
 * credentials ([peer] credentials FILE, config_cred.c).
 *
 * The address decides the peer first (a host that is no peer gets 502 at
 * the greeting, config.h fg_config_find_peer); a peer with credentials must
 * then pass them: both have to hold. The greeting stays 200, as innd's;
 * innfeed sends AUTHINFO USER right after it when its peer block has a
 * username and a password, PASS after a 381, and MODE STREAM after a 281.
 *
 * The exchange, step by step:
 *
 *   1. `AUTHINFO USER arg` / `AUTHINFO PASS arg`: the argument is the rest
 *      of the line after the one blank that follows USER or PASS, blanks
 *      included (innd's reading; RFC 4643 4 lets a password hold blanks).
 *      Any other subcommand, or no argument: 501 (innd's order: syntax
 *      before state).
 *   2. Authenticated already: 502 (RFC 4643 2.2: no AUTHINFO after a 281).
 *      A peer without credentials: 502 too (innfeed reads any answer to
 *      USER other than 381 as "go on", as it does from innd).
 *   3. USER: 381 always, whether the name matched or not (nothing tells a
 *      guesser which half was wrong); whether it matched is kept for PASS.
 *   4. PASS without a USER since the last PASS: 482 (RFC 4643 2.3.2).
 *   5. PASS: the name (when the file has one) and the password both match:
 *      281, the session is authenticated for its life (a reload that
 *      changes the credentials does not undo it). Otherwise 481, counted
 *      (nntp_auth_failed, per peer); the third 481 of a session closes it
 *      (RFC 4643 6: limit the guesses a connection gets).
 *   6. Until 5 succeeds, CHECK and IHAVE get 480, and a TAKETHIS's article
 *      is read to its end and answered 480 (RFC 4644 2.5: the article
 *      always follows the line); counted nntp_auth_required. MODE STREAM,
 *      CAPABILITIES (which lists AUTHINFO USER and no IHAVE or STREAMING
 *      until then, as innd does), HELP and QUIT work as for any peer.
 *
 * The check is constant-time in the secrets: both sides are compared over
 * the whole FG_CONFIG_SECRET_MAX octets, zero-padded, every octet, with
 * the lengths compared apart and folded in; nothing returns early, and
 * USER and PASS each cost the same whatever was sent. Neither the name
 * nor the password sent is kept or logged.
 */
#include <string.h>
#include <strings.h>

#include "lines.h"
#include "nntp_int.h"

bool fg_nntp_secret_equal(const char *have, uint16_t have_len, size_t cap, const char *got,
			  size_t got_len)
{
	char pad[FG_CONFIG_SECRET_MAX];
	uint64_t len_diff = (uint64_t)have_len ^ (uint64_t)got_len;
	unsigned acc = 0;

	FG_ASSERT(cap == sizeof(pad));
	memset(pad, 0, sizeof(pad));
	memcpy(pad, got, got_len < sizeof(pad) ? got_len : sizeof(pad));
	for (size_t i = 0; i < sizeof(pad); i++) {
		acc |= (unsigned)(uint8_t)(have[i] ^ pad[i]);
		/* keep the compiler from turning the loop into an early exit */
		__asm__ volatile("" : "+r"(acc));
	}
	acc |= (unsigned)(len_diff != 0);
	explicit_bzero(pad, sizeof(pad));
	return acc == 0;
}

bool fg_nntp_auth_needed(const struct fg_nntp_session *s)
{
	return s->auth != FG_AUTH_DONE && s->peer && s->peer->cred.pass_len != 0;
}

static bool subcommand(const struct fg_nntp_cmd *c, const char *name)
{
	return c->argc >= 2 && c->arg_len[0] == 4 && strncasecmp(c->arg[0], name, 4) == 0;
}

/* Step 5: a PASS after a USER. */
static void check_pass(struct fg_nntp_session *s, const char *arg, size_t len)
{
	const struct fg_config_cred *cr = &s->peer->cred;
	bool ok = fg_nntp_secret_equal(cr->pass, cr->pass_len, sizeof(cr->pass), arg, len) &
		  s->auth_user_ok;

	s->auth = FG_AUTH_START;
	s->auth_user_ok = false;
	if (ok) {
		s->auth = FG_AUTH_DONE;
		fg_nntp_count(s, FG_CTR_NNTP_AUTH_ACCEPTED);
		FG_NNTP_PUT(s, C281, FG_L_AUTH_OK);
		return;
	}
	fg_nntp_count(s, FG_CTR_NNTP_AUTH_FAILED);
	if (++s->auth_failures < FG_NNTP_AUTH_TRIES) {
		FG_NNTP_PUT(s, C481, FG_L_AUTH_FAILED);
		return;
	}
	fg_nntp_count(s, FG_CTR_NNTP_AUTH_CLOSED);
	FG_NNTP_PUT_CLOSE(s, C481, FG_L_AUTH_FAILED_CLOSE);
}

void fg_nntp_do_authinfo(struct fg_nntp_session *s, const struct fg_nntp_cmd *c)
{
	const struct fg_config_cred *cr = s->peer ? &s->peer->cred : NULL;
	bool user = subcommand(c, "user"), pass = subcommand(c, "pass");
	const char *arg;
	size_t len;

	if (!user && !pass) {					/* 1 */
		FG_NNTP_PUT(s, C501, FG_L_SYNTAX);
		return;
	}
	if (s->auth == FG_AUTH_DONE) {				/* 2 */
		FG_NNTP_PUT(s, C502, FG_L_AUTH_DONE);
		return;
	}
	if (!cr || cr->pass_len == 0) {
		FG_NNTP_PUT(s, C502, FG_L_AUTH_NOT_NEEDED);
		return;
	}
	/* 1: after "USER" and its one blank, to the line's end */
	arg = c->arg[0] + 5;
	len = (size_t)(c->end - arg);
	if (user) {						/* 3 */
		bool eq = fg_nntp_secret_equal(cr->user, cr->user_len, sizeof(cr->user), arg, len);

		s->auth_user_ok = eq | (cr->user_len == 0);
		s->auth = FG_AUTH_USER;
		FG_NNTP_PUT(s, C381, FG_L_AUTH_PASS);
		return;
	}
	if (s->auth != FG_AUTH_USER) {				/* 4 */
		FG_NNTP_PUT(s, C482, FG_L_AUTH_SEQUENCE);
		return;
	}
	check_pass(s, arg, len);				/* 5 */
}

bool fg_nntp_auth_refuse(struct fg_nntp_session *s, const struct fg_nntp_cmd *c)
{
	if ((c->verb != FG_NNTP_VERB_CHECK && c->verb != FG_NNTP_VERB_TAKETHIS &&
	     c->verb != FG_NNTP_VERB_IHAVE) || !fg_nntp_auth_needed(s))
		return false;
	fg_nntp_count_verb(s, c->verb);				/* 6 */
	fg_nntp_count(s, FG_CTR_NNTP_AUTH_REQUIRED);
	if (c->verb == FG_NNTP_VERB_TAKETHIS)
		fg_nntp_start_drain_line(s, FG_NNTP_CODE_C480, FG_L_AUTH_REQUIRED);
	else
		FG_NNTP_PUT(s, C480, FG_L_AUTH_REQUIRED);
	return true;
}
