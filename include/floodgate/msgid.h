/* SPDX-License-Identifier: MIT */
/*
 * msgid.h — Message-ID syntax and the version-number convention.
 *
 * Two grammars apply to the same string:
 *  - wire form (RFC 3977 3.6, 9.8): what a CHECK/TAKETHIS/IHAVE argument
 *    must be: 3..250 octets, starts with "<", ends with ">", no ">" inside,
 *    printable US-ASCII (0x21..0x7e) only;
 *  - header form (RFC 5536 3.1.3): what an article's Message-ID header
 *    must carry (its msg-id-core: the caller strips the CFWS around it):
 *    "<" id-left "@" id-right ">", id-left a dot-atom-text or no-fold-quote
 *    (a quoted string holding at least one mqspecial), id-right a
 *    dot-atom-text or no-fold-literal, at most 250 octets.
 * Every header-form ID is a valid wire-form ID; not conversely.
 *
 * The version-number convention (usefor-article draft 6.13.2.1, seed
 * 000): an id-left may carry dollars-sequences; the leftmost "$v=N"
 * (decimal) is its version number. The base identifier is the ID with
 * that version number and every dollars-sequence after it removed; all
 * versions of one article share it. A successor replaces N by N+1 (or
 * appends "$v=1") and adds a fresh random-dollars-sequence, which MUST
 * NOT start with "$<letter>=" — a rule for deriving, not a reason to
 * refuse an incoming ID. This is an extension (draft, not RFC), switched
 * by the `version-numbers` config key. docs/message-ids.md has the exact
 * rules and the edge cases ($v=007, $v= without digits, huge N, several
 * $v=, quoted id-left).
 *
 * All functions take (pointer, length): no NUL termination is assumed
 * and nothing past `len` is read. Nothing allocates; all are reentrant.
 */
#ifndef FLOODGATE_MSGID_H
#define FLOODGATE_MSGID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_MSGID_MAX 250
/* fg_msgid_successor() wants at least this many random bytes. */
#define FG_MSGID_RND_MIN 6

enum fg_msgid_form {
	FG_MSGID_INVALID = 0,	/* neither grammar */
	FG_MSGID_WIRE = 1,	/* RFC 3977 only: a valid command argument, not a valid header */
	FG_MSGID_HEADER = 2,	/* RFC 5536 (and so RFC 3977 too) */
};

/*
 * Why an ID is not valid in a form. The wire-form checks come first, in
 * the order listed (E_EMPTY .. E_NO_GT by length and ends, then the first
 * bad octet or inner '>' from left to right); only a wire-valid ID gets
 * one of the header-form reasons, the first met from left to right.
 */
enum fg_msgid_error {
	FG_MSGID_OK = 0,
	FG_MSGID_E_EMPTY,	/* zero length */
	FG_MSGID_E_TOO_LONG,	/* more than 250 octets */
	FG_MSGID_E_TOO_SHORT,	/* fewer than 3 octets */
	FG_MSGID_E_NO_LT,	/* does not start with '<' */
	FG_MSGID_E_NO_GT,	/* does not end with '>' */
	FG_MSGID_E_GT_INSIDE,	/* '>' before the end */
	FG_MSGID_E_BAD_OCTET,	/* control, space, DEL or 8-bit octet */
	FG_MSGID_E_NO_AT,	/* header form: no '@' after id-left */
	FG_MSGID_E_BAD_LEFT,	/* header form: id-left is not dot-atom-text / no-fold-quote */
	FG_MSGID_E_BAD_RIGHT,	/* header form: id-right is not dot-atom-text / no-fold-literal */
	FG_MSGID_E__COUNT
};

/* The best form `s` satisfies. `why` (may be NULL) receives the reason it
 * is not header form (FG_MSGID_OK when it is). One pass, no allocation. */
enum fg_msgid_form fg_msgid_classify(const char *s, size_t len, enum fg_msgid_error *why);
bool fg_msgid_valid_wire(const char *s, size_t len);
bool fg_msgid_valid_header(const char *s, size_t len);
/* Short names ("ok", "too-long", "bad-left", ...; "header", "wire",
 * "invalid"); "?" for a value out of range. */
const char *fg_msgid_error_str(enum fg_msgid_error e);
const char *fg_msgid_form_str(enum fg_msgid_form f);

/* The version-number parts of a header-form ID. Offsets index into the
 * ID given to fg_msgid_version_parse(). */
struct fg_msgid_version {
	bool has_version;	/* a leftmost $v=N was found */
	uint64_t version;	/* N; 0 when !has_version */
	size_t v_off, v_len;	/* the "$v=N" text; without a version: v_off is
				 * where the id-left ends (the '@'), v_len 0 */
	size_t tail_off, tail_len; /* dollars-sequences after it ("$XYZ$PQR"), may be empty */
	char base[FG_MSGID_MAX + 1]; /* NUL-terminated base identifier */
	size_t base_len;
};

/*
 * 0, -EINVAL if `s` is not a header-form ID, -ERANGE if the leftmost N
 * does not fit in 64 bits (the ID stays a valid Message-ID; it just takes
 * no part in versioning, and `out` is not filled). An ID without a version
 * number, or with a quoted id-left, is its own base (version 0).
 */
int fg_msgid_version_parse(const char *s, size_t len, struct fg_msgid_version *out);

/*
 * Derive the successor of `s` into `out` (NUL-terminated), using `rnd`
 * (rnd_len bytes of randomness, at least FG_MSGID_RND_MIN) for the added
 * random-dollars-sequence: "$" then the bytes in base64url without
 * padding, an alphabet without "=", so the sequence never starts with
 * "$<letter>=" whatever the bytes. The old random tail is dropped.
 * Returns the successor's length, -EINVAL for an ID that is not header
 * form, has a quoted id-left (RFC 5536 allows no dollars-sequence after
 * the quote) or for rnd_len < FG_MSGID_RND_MIN, -ERANGE if N or N+1 does
 * not fit in 64 bits, -ENOSPC if the result would exceed 250 octets or
 * out_len - 1. The successor is header form, has version N+1 (1 for an
 * unversioned ID) and the same base identifier as `s`.
 */
int fg_msgid_successor(const char *s, size_t len, const uint8_t *rnd, size_t rnd_len,
		       char *out, size_t out_len);

#endif /* FLOODGATE_MSGID_H */
