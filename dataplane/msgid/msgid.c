/* SPDX-License-Identifier: MIT */
/*
 * msgid.c — Message-ID classification and the $v=N version convention.
 *
 * Classification runs on every CHECK, so it is one pass over the octets
 * through two tables: no strlen, no allocation, and no branch on the
 * grammar but one fast skip over atext runs inside an atom (which the
 * tables would map to the same state, one dependent load per octet).
 *
 *  1. msgid_class[256] maps each octet to one of eleven classes (atext,
 *     '.', '@', '"', '\', '[', ']', the other specials, '>', bad octet;
 *     plus a virtual END class fed after the last inner octet).
 *  2. msgid_next[state][class] is a DFA for RFC 5536 3.1.3 msg-id-core
 *     between the '<' and the '>':
 *
 *       id-left         = dot-atom-text / no-fold-quote
 *       id-right        = dot-atom-text / no-fold-literal
 *       no-fold-quote   = DQUOTE *(mqtext / "\\" / "\" DQUOTE) mqspecial
 *                                *(mqtext / "\\" / "\" DQUOTE) DQUOTE
 *       mqtext          = %d33 / %d35-61 / %d63-91 / %d93-126
 *       mqspecial       = "(" / ")" / "<" / "[" / "]" / ":" / ";" / "@"
 *                       / "," / "." / "\\" / "\" DQUOTE
 *       no-fold-literal = "[" *mdtext "]"
 *       mdtext          = %d33-61 / %d63-90 / %d94-126
 *
 *     It folds the RFC 3977 wire rules into the same pass: a '>' or a
 *     bad octet inside sends it to an absorbing wire-error state, which
 *     outranks any header error met earlier (wire problems are reported
 *     first, see msgid.h). Header errors are sticky states that still
 *     watch for wire errors.
 *
 *  3. Before the DFA, a vector pass takes the common case whole: an ID of
 *     at most 128 inner octets, all of them atext, "." or "@", with one
 *     "@" and no separator ("." or "@") first, last or next to another.
 *     That is exactly "<" dot-atom-text "@" dot-atom-text ">", a valid
 *     header-form ID; anything else (valid or not) goes to the DFA, which
 *     alone names errors. tests/unit/test_msgid.c holds the two to the
 *     same answers octet by octet, and fuzz_msgid on anything.
 *
 * The version convention (seed 000) works on header-form IDs only:
 *  - the version number is the leftmost "$v=" 1*DIGIT in a dot-atom
 *    id-left that is a whole dollars-sequence: preceded by at least one
 *    octet that is not '.', and followed by '$' or the end of id-left.
 *    So "$v=" without digits, "$v=3x" and "$V=3" are random sequences, and
 *    the leftmost match wins when there are several. Leading zeros are
 *    accepted: "$v=007" is version 7 (its successor says "$v=8");
 *  - base identifier = the ID with the version number and every
 *    dollars-sequence after it (up to the '@') removed. The prefix left
 *    is non-empty dot-atom-text ending in atext, so the base is always a
 *    valid header-form ID; an unversioned ID is its own base;
 *  - a quoted id-left carries no version: RFC 5536 allows nothing after
 *    the closing quote but '@', so such an ID has no valid successor.
 */
#include <errno.h>
#include <string.h>
#include <smmintrin.h>

#include "floodgate/common.h"
#include "floodgate/msgid.h"
#include "msgid_int.h"

enum msgid_class {
	C_ATEXT,	/* RFC 5322 atext */
	C_DOT,
	C_AT,
	C_DQ,
	C_BS,
	C_LB,
	C_RB,
	C_SPEC,		/* ( ) < : ; , : specials that are mqtext and mqspecial */
	C_GT,		/* from here on: not allowed inside a wire-form ID */
	C_BAD,		/* controls, SP, DEL, 8-bit */
	C_END,		/* virtual: fed once after the last inner octet */
	C__COUNT
};

/* 0 is C_ATEXT, so every octet not listed would be atext: list them all. */
static const uint8_t msgid_class[256] = {
	[0x00 ... 0x20] = C_BAD,
	['!'] = C_ATEXT, ['"'] = C_DQ, ['#' ... '\''] = C_ATEXT,
	['('] = C_SPEC, [')'] = C_SPEC, ['*'] = C_ATEXT, ['+'] = C_ATEXT,
	[','] = C_SPEC, ['-'] = C_ATEXT, ['.'] = C_DOT, ['/' ... '9'] = C_ATEXT,
	[':'] = C_SPEC, [';'] = C_SPEC, ['<'] = C_SPEC, ['='] = C_ATEXT,
	['>'] = C_GT, ['?'] = C_ATEXT, ['@'] = C_AT, ['A' ... 'Z'] = C_ATEXT,
	['['] = C_LB, ['\\'] = C_BS, [']'] = C_RB, ['^' ... '~'] = C_ATEXT,
	[0x7f ... 0xff] = C_BAD,
};

enum msgid_state {
	M_L0,	/* id-left: nothing yet */
	M_LA,	/* id-left: in an atext run */
	M_LD,	/* id-left: after '.' */
	M_Q,	/* quoted id-left, no mqspecial yet */
	M_QS,	/* quoted id-left, mqspecial seen */
	M_QE,	/* quoted id-left, after '\' */
	M_QC,	/* quoted id-left closed: '@' must follow */
	M_R0,	/* id-right: nothing yet */
	M_RA,	/* id-right: in an atext run */
	M_RD,	/* id-right: after '.' */
	M_LI,	/* inside the no-fold-literal */
	M_LC,	/* literal closed: the end must follow */
	M_XL,	/* sticky header errors: bad id-left, */
	M_XR,	/* bad id-right, */
	M_XA,	/* no '@' */
	M_XG,	/* absorbing wire errors: '>' inside, */
	M_XO,	/* bad octet */
	M_OK,
	M__COUNT
};

static const uint8_t msgid_next[M__COUNT][C__COUNT] = {
	/*         ATEXT DOT   AT    DQ    BS    LB    RB    SPEC  GT    BAD   END */
	[M_L0] = { M_LA, M_XL, M_XL, M_Q,  M_XL, M_XL, M_XL, M_XL, M_XG, M_XO, M_XL },
	[M_LA] = { M_LA, M_LD, M_R0, M_XL, M_XL, M_XL, M_XL, M_XL, M_XG, M_XO, M_XA },
	[M_LD] = { M_LA, M_XL, M_XL, M_XL, M_XL, M_XL, M_XL, M_XL, M_XG, M_XO, M_XL },
	[M_Q]  = { M_Q,  M_QS, M_QS, M_XL, M_QE, M_QS, M_QS, M_QS, M_XG, M_XO, M_XL },
	[M_QS] = { M_QS, M_QS, M_QS, M_QC, M_QE, M_QS, M_QS, M_QS, M_XG, M_XO, M_XL },
	[M_QE] = { M_XL, M_XL, M_XL, M_QS, M_QS, M_XL, M_XL, M_XL, M_XG, M_XO, M_XL },
	[M_QC] = { M_XL, M_XL, M_R0, M_XL, M_XL, M_XL, M_XL, M_XL, M_XG, M_XO, M_XA },
	[M_R0] = { M_RA, M_XR, M_XR, M_XR, M_XR, M_LI, M_XR, M_XR, M_XG, M_XO, M_XR },
	[M_RA] = { M_RA, M_RD, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XG, M_XO, M_OK },
	[M_RD] = { M_RA, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XG, M_XO, M_XR },
	[M_LI] = { M_LI, M_LI, M_LI, M_LI, M_XR, M_XR, M_LC, M_LI, M_XG, M_XO, M_XR },
	[M_LC] = { M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XG, M_XO, M_OK },
	[M_XL] = { M_XL, M_XL, M_XL, M_XL, M_XL, M_XL, M_XL, M_XL, M_XG, M_XO, M_XL },
	[M_XR] = { M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XR, M_XG, M_XO, M_XR },
	[M_XA] = { M_XA, M_XA, M_XA, M_XA, M_XA, M_XA, M_XA, M_XA, M_XG, M_XO, M_XA },
	[M_XG] = { M_XG, M_XG, M_XG, M_XG, M_XG, M_XG, M_XG, M_XG, M_XG, M_XG, M_XG },
	[M_XO] = { M_XO, M_XO, M_XO, M_XO, M_XO, M_XO, M_XO, M_XO, M_XO, M_XO, M_XO },
	[M_OK] = { M_OK, M_OK, M_OK, M_OK, M_OK, M_OK, M_OK, M_OK, M_OK, M_OK, M_OK },
};

/* What each state means once END has been fed. */
static const uint8_t msgid_final_error[M__COUNT] = {
	[M_XL] = FG_MSGID_E_BAD_LEFT, [M_XR] = FG_MSGID_E_BAD_RIGHT,
	[M_XA] = FG_MSGID_E_NO_AT, [M_XG] = FG_MSGID_E_GT_INSIDE,
	[M_XO] = FG_MSGID_E_BAD_OCTET, [M_OK] = FG_MSGID_OK,
};

static const char *const msgid_error_names[FG_MSGID_E__COUNT] = {
	[FG_MSGID_OK] = "ok",
	[FG_MSGID_E_EMPTY] = "empty",
	[FG_MSGID_E_TOO_LONG] = "too-long",
	[FG_MSGID_E_TOO_SHORT] = "too-short",
	[FG_MSGID_E_NO_LT] = "no-lt",
	[FG_MSGID_E_NO_GT] = "no-gt",
	[FG_MSGID_E_GT_INSIDE] = "gt-inside",
	[FG_MSGID_E_BAD_OCTET] = "bad-octet",
	[FG_MSGID_E_NO_AT] = "no-at",
	[FG_MSGID_E_BAD_LEFT] = "bad-left",
	[FG_MSGID_E_BAD_RIGHT] = "bad-right",
};

const char *fg_msgid_error_str(enum fg_msgid_error e)
{
	return (unsigned)e < FG_MSGID_E__COUNT ? msgid_error_names[e] : "?";
}

const char *fg_msgid_form_str(enum fg_msgid_form f)
{
	switch (f) {
	case FG_MSGID_INVALID:
		return "invalid";
	case FG_MSGID_WIRE:
		return "wire";
	case FG_MSGID_HEADER:
		return "header";
	}
	return "?";
}

/* RFC 3977 3.6: the checks on length and on the two ends. */
static enum fg_msgid_error msgid_check_frame(const char *s, size_t len)
{
	if (len == 0)
		return FG_MSGID_E_EMPTY;
	if (len > FG_MSGID_MAX)
		return FG_MSGID_E_TOO_LONG;
	if (len < 3)
		return FG_MSGID_E_TOO_SHORT;
	if (s[0] != '<')
		return FG_MSGID_E_NO_LT;
	if (s[len - 1] != '>')
		return FG_MSGID_E_NO_GT;
	return FG_MSGID_OK;
}

/*
 * Octets that are neither atext nor "." nor "@", by nibbles (SSSE3 PSHUFB
 * lookups): octet x (< 0x80) is one when lo[x & 15] & hi[x >> 4] != 0,
 * hi[h] = 1 << h; octets >= 0x80 are caught by their sign bit. Per row:
 *   0x0_, 0x1_  all (controls)         0x2_  SP " ( ) ,
 *   0x3_  : ; < >                      0x4_  none (@ is a separator)
 *   0x5_  [ \ ]                        0x6_  none
 *   0x7_  DEL
 */
static const uint8_t bad_lo[16] = {
	0x07, 0x03, 0x07, 0x03, 0x03, 0x03, 0x03, 0x03,
	0x07, 0x07, 0x0b, 0x2b, 0x2f, 0x23, 0x0b, 0x83,
};
static const uint8_t bad_hi[16] = {
	0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
};

/* One step of sixteen octets: the bad ones into *bad (a byte per octet,
 * 0x80 for 8-bit octets), the masks of separators and of "@" returned. */
static inline void msgid_step(__m128i x, __m128i *bad, unsigned *sep, unsigned *ats)
{
	const __m128i lo_t = _mm_loadu_si128((const __m128i *)(const void *)bad_lo);
	const __m128i hi_t = _mm_loadu_si128((const __m128i *)(const void *)bad_hi);
	const __m128i nib = _mm_set1_epi8(0x0f);
	const __m128i at = _mm_cmpeq_epi8(x, _mm_set1_epi8('@'));

	*bad = _mm_or_si128(*bad, _mm_or_si128(_mm_and_si128(x, _mm_set1_epi8((char)0x80)),
		_mm_and_si128(_mm_shuffle_epi8(lo_t, _mm_and_si128(x, nib)),
			      _mm_shuffle_epi8(hi_t, _mm_and_si128(_mm_srli_epi16(x, 4), nib)))));
	*sep = (unsigned)_mm_movemask_epi8(_mm_or_si128(at, _mm_cmpeq_epi8(x, _mm_set1_epi8('.'))));
	*ats = (unsigned)_mm_movemask_epi8(at);
}

/*
 * The common form, sixteen octets at a time; false: ask the DFA. Whole
 * steps are loaded in place; the last partial step is the sixteen octets
 * that end the ID (its first octets seen twice: harmless for the bad
 * octets, shifted out of the masks), or a copy padded with atext when the
 * ID is shorter than a step, so nothing past the ID is ever read. The
 * separator masks, a bit per octet, make two 64-bit words.
 */
static bool msgid_fast_ok(const char *s, size_t len)
{
	const char *in = s + 1;
	size_t n = len - 2;	/* the frame is checked: 1..248 */
	size_t full = n / 16, r = n % 16;
	uint16_t sepm[8] = { 0 };
	uint64_t sep0, sep1, last;
	unsigned sep, ats, n_at = 0;
	__m128i bad = _mm_setzero_si128();

	if (n > 128)
		return false;
	for (size_t k = 0; k < full; k++) {
		msgid_step(_mm_loadu_si128((const __m128i *)(const void *)(in + 16 * k)), &bad,
			   &sep, &ats);
		sepm[k] = (uint16_t)sep;
		n_at += (unsigned)__builtin_popcount(ats);
	}
	if (r) {
		char tail[16];
		unsigned drop = 0;

		if (full) {
			msgid_step(_mm_loadu_si128((const __m128i *)(const void *)(in + n - 16)),
				   &bad, &sep, &ats);
			drop = (unsigned)(16 - r);
		} else {
			memset(tail, 'a', sizeof(tail));
			memcpy(tail, in, r);
			msgid_step(_mm_loadu_si128((const __m128i *)(const void *)tail), &bad, &sep,
				   &ats);
		}
		sepm[full] = (uint16_t)(sep >> drop);
		n_at += (unsigned)__builtin_popcount(ats >> drop);
	}
	memcpy(&sep0, sepm, sizeof(sep0));
	memcpy(&sep1, sepm + 4, sizeof(sep1));
	last = (n - 1 < 64 ? sep0 : sep1) >> ((n - 1) % 64);
	return _mm_testz_si128(bad, bad) && n_at == 1 &&	/* exactly one "@" */
	       !(sep0 & 1) && !(last & 1) &&		/* none first or last */
	       !(sep0 & (sep0 >> 1)) && !(sep1 & (sep1 >> 1)) && !(sep0 >> 63 & sep1);
}

enum fg_msgid_form fg_msgid_classify(const char *s, size_t len, enum fg_msgid_error *why)
{
	if (len >= 3 && len <= FG_MSGID_MAX && s[0] == '<' && s[len - 1] == '>' &&
	    msgid_fast_ok(s, len)) {
		if (why)
			*why = FG_MSGID_OK;
		return FG_MSGID_HEADER;
	}
	return fg_msgid_classify_dfa(s, len, why);
}

enum fg_msgid_form fg_msgid_classify_dfa(const char *s, size_t len, enum fg_msgid_error *why)
{
	enum fg_msgid_error err = msgid_check_frame(s, len);
	unsigned st = M_L0;

	if (err == FG_MSGID_OK) {
		size_t i = 1, last = len - 1;

		while (i < last) {
			/* Runs of atext inside an atom leave the state as it is:
			 * skip them without the state load in the dependency
			 * chain (bench_parsers: 88 -> 32 ns on real IDs). */
			if (st == M_LA || st == M_RA) {
				while (i < last && msgid_class[(uint8_t)s[i]] == C_ATEXT)
					i++;
				if (i == last)
					break;
			}
			st = msgid_next[st][msgid_class[(uint8_t)s[i]]];
			i++;
		}
		st = msgid_next[st][C_END];
		FG_ASSERT_HOT(st >= M_XL);
		err = msgid_final_error[st];
	}
	if (why)
		*why = err;
	switch (err) {
	case FG_MSGID_OK:
		return FG_MSGID_HEADER;
	case FG_MSGID_E_NO_AT:
	case FG_MSGID_E_BAD_LEFT:
	case FG_MSGID_E_BAD_RIGHT:
		return FG_MSGID_WIRE;
	default:
		return FG_MSGID_INVALID;
	}
}

bool fg_msgid_valid_wire(const char *s, size_t len)
{
	if (msgid_check_frame(s, len) != FG_MSGID_OK)
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (msgid_class[(uint8_t)s[i]] >= C_GT)
			return false;
	return true;
}

bool fg_msgid_valid_header(const char *s, size_t len)
{
	return fg_msgid_classify(s, len, NULL) == FG_MSGID_HEADER;
}

/* ---------------------------------------------------------------- versions */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Is there a version-number "$v=" 1*DIGIT at left[i], ending at '$' or at
 * `at`? *end receives where its digits stop, *n the value; -ERANGE when
 * it is one but does not fit in 64 bits, 0 when it is not, 1 when it is.
 */
static int version_at(const char *s, size_t i, size_t at, size_t *end, uint64_t *n)
{
	size_t j = i + 3;
	uint64_t v = 0;
	bool overflow = false;

	/* A whole dollars-sequence after a non-empty atom that does not end in
	 * '.': so removing it leaves valid dot-atom-text (seed 000 grammar). */
	if (i < 2 || s[i - 1] == '.' || j > at || s[i + 1] != 'v' || s[i + 2] != '=')
		return 0;
	for (; j < at && is_digit(s[j]); j++) {
		unsigned d = (unsigned)(s[j] - '0');

		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		v = v * 10 + d;
	}
	if (j == i + 3 || (j < at && s[j] != '$'))
		return 0;
	if (overflow)
		return -ERANGE;
	*end = j;
	*n = v;
	return 1;
}

int fg_msgid_version_parse(const char *s, size_t len, struct fg_msgid_version *out)
{
	const char *atp;
	size_t at, i, end = 0;
	uint64_t n = 0;
	int found = 0;

	if (!fg_msgid_valid_header(s, len))
		return -EINVAL;
	/* A dot-atom id-left holds no '@'; a quoted one ends with '"' just
	 * before the separating '@', and carries no version. */
	if (s[1] == '"') {
		/* the id-right may be a literal holding '@': walk the quote */
		for (at = 2; s[at] != '"'; at += s[at] == '\\' ? 2 : 1)
			;
		at++;
	} else {
		atp = memchr(s, '@', len);
		at = (size_t)(atp - s);
		for (i = 1; i + 3 < at; i++) {
			if (s[i] != '$')
				continue;
			found = version_at(s, i, at, &end, &n);
			if (found)
				break;
		}
		if (found < 0)
			return found;
	}
	out->has_version = found > 0;
	out->version = n;
	if (found > 0) {
		out->v_off = i;
		out->v_len = end - i;
		out->tail_off = end;
		out->tail_len = at - end;
	} else {
		out->v_off = out->tail_off = at;
		out->v_len = out->tail_len = 0;
	}
	memcpy(out->base, s, out->v_off);
	memcpy(out->base + out->v_off, s + at, len - at);
	out->base_len = out->v_off + (len - at);
	out->base[out->base_len] = '\0';
	return 0;
}

static const char base64url[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Unpadded base64url of rnd into out (room already checked). */
static size_t encode_random(const uint8_t *rnd, size_t n, char *out)
{
	size_t o = 0, i;
	uint32_t acc = 0;
	unsigned bits = 0;

	for (i = 0; i < n; i++) {
		acc = (acc << 8) | rnd[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = base64url[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[o++] = base64url[(acc << (6 - bits)) & 63];
	return o;
}

static size_t format_u64(uint64_t v, char *out)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

int fg_msgid_successor(const char *s, size_t len, const uint8_t *rnd, size_t rnd_len,
		       char *out, size_t out_len)
{
	struct fg_msgid_version v;
	char num[20];
	size_t num_len, enc_len, right_len, total, o;
	int rc;

	if (rnd_len < FG_MSGID_RND_MIN)
		return -EINVAL;
	if (rnd_len > FG_MSGID_MAX)	/* its encoding alone would not fit */
		return -ENOSPC;
	rc = fg_msgid_version_parse(s, len, &v);
	if (rc < 0)
		return rc;
	if (s[1] == '"')
		return -EINVAL;
	if (v.has_version && v.version == UINT64_MAX)
		return -ERANGE;
	num_len = format_u64(v.has_version ? v.version + 1 : 1, num);
	enc_len = (rnd_len * 4 + 2) / 3;
	right_len = len - (v.tail_off + v.tail_len);	/* "@id-right>" */
	/* prefix "$v=" N "$" random "@id-right>" */
	total = v.v_off + 3 + num_len + 1 + enc_len + right_len;
	if (total > FG_MSGID_MAX || total >= out_len)
		return -ENOSPC;
	memcpy(out, s, v.v_off);
	o = v.v_off;
	memcpy(out + o, "$v=", 3);
	o += 3;
	memcpy(out + o, num, num_len);
	o += num_len;
	out[o++] = '$';
	o += encode_random(rnd, rnd_len, out + o);
	memcpy(out + o, s + v.tail_off + v.tail_len, right_len);
	o += right_len;
	out[o] = '\0';
	FG_ASSERT_HOT(o == total);
	return (int)o;
}
