/* SPDX-License-Identifier: MIT */
/*
 * fuzz_msgid.c — libFuzzer target for the Message-ID classifier and the
 * $v=N version functions. Beyond "no crash", it checks invariants:
 *  - the three predicates agree with each other and with `why`;
 *  - header form implies wire form, checked against a separate reference
 *    implementation of RFC 3977 9.8 written here;
 *  - a parsed version has its parts where the offsets say, and its base
 *    identifier is a header-form ID with no version and is its own base;
 *  - a successor is header form, has version N+1 (1 when unversioned),
 *    the same base, a random tail with no '=' (so never "$<letter>="),
 *    and fails only for the documented reasons (ENOSPC exactly when the
 *    predicted length is over 250).
 * Any broken invariant aborts (FG_ASSERT), which libFuzzer and the replay driver
 * report as a crash.
 */
#include <errno.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/msgid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool reference_wire(const char *s, size_t len)
{
	if (len < 3 || len > 250 || s[0] != '<' || s[len - 1] != '>')
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e || s[i] == '>')
			return false;
	return true;
}

static size_t digits(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static void check_version(const char *s, size_t len, const struct fg_msgid_version *v)
{
	struct fg_msgid_version b;

	FG_ASSERT(v->v_off + v->v_len == v->tail_off);
	FG_ASSERT(v->tail_off + v->tail_len < len);
	FG_ASSERT(s[v->tail_off + v->tail_len] == '@' || s[1] == '"');
	if (v->has_version) {
		FG_ASSERT(v->v_len > 3 && memcmp(s + v->v_off, "$v=", 3) == 0);
		FG_ASSERT(v->tail_len == 0 || s[v->tail_off] == '$');
	} else {
		FG_ASSERT(v->version == 0 && v->v_len == 0 && v->tail_len == 0);
	}
	FG_ASSERT(v->base_len == len - v->v_len - v->tail_len && v->base[v->base_len] == '\0');
	FG_ASSERT(fg_msgid_valid_header(v->base, v->base_len));
	FG_ASSERT(fg_msgid_version_parse(v->base, v->base_len, &b) == 0);
	FG_ASSERT(!b.has_version && b.base_len == v->base_len);
	FG_ASSERT(memcmp(b.base, v->base, v->base_len) == 0);
}

static void check_successor(const char *s, size_t len, const struct fg_msgid_version *v,
			    const uint8_t *rnd, size_t rnd_len)
{
	char out[FG_MSGID_MAX + 1];
	struct fg_msgid_version n;
	uint64_t next = v->has_version ? v->version + 1 : 1;
	size_t enc = (rnd_len * 4 + 2) / 3;
	size_t want = v->v_off + 3 + digits(next) + 1 + enc + (len - v->tail_off - v->tail_len);
	int rc = fg_msgid_successor(s, len, rnd, rnd_len, out, sizeof(out));

	if (s[1] == '"') {
		FG_ASSERT(rc == -EINVAL);
		return;
	}
	if (v->has_version && v->version == UINT64_MAX) {
		FG_ASSERT(rc == -ERANGE);
		return;
	}
	if (want > FG_MSGID_MAX) {
		FG_ASSERT(rc == -ENOSPC);
		return;
	}
	FG_ASSERT(rc == (int)want && out[rc] == '\0');
	FG_ASSERT(fg_msgid_valid_header(out, (size_t)rc));
	FG_ASSERT(fg_msgid_version_parse(out, (size_t)rc, &n) == 0);
	FG_ASSERT(n.has_version && n.version == next);
	FG_ASSERT(n.base_len == v->base_len && memcmp(n.base, v->base, v->base_len) == 0);
	FG_ASSERT(n.tail_len == 1 + enc && out[n.tail_off] == '$');
	FG_ASSERT(memchr(out + n.tail_off, '=', n.tail_len) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	enum fg_msgid_error why;
	enum fg_msgid_form f = fg_msgid_classify(s, size, &why);
	struct fg_msgid_version v;
	int rc;

	FG_ASSERT(fg_msgid_valid_wire(s, size) == (f != FG_MSGID_INVALID));
	FG_ASSERT(fg_msgid_valid_header(s, size) == (f == FG_MSGID_HEADER));
	FG_ASSERT(reference_wire(s, size) == (f != FG_MSGID_INVALID));
	FG_ASSERT((why == FG_MSGID_OK) == (f == FG_MSGID_HEADER));
	FG_ASSERT((unsigned)why < FG_MSGID_E__COUNT && fg_msgid_error_str(why)[0] != '?');
	FG_ASSERT(f != FG_MSGID_WIRE || why >= FG_MSGID_E_NO_AT);
	rc = fg_msgid_version_parse(s, size, &v);
	if (f != FG_MSGID_HEADER) {
		FG_ASSERT(rc == -EINVAL);
		return 0;
	}
	FG_ASSERT(rc == 0 || rc == -ERANGE);
	if (rc == 0) {
		/* the input's own bytes as randomness: adversarial by nature */
		uint8_t rnd[64] = { 0 };
		size_t n = size < sizeof(rnd) ? size : sizeof(rnd);

		memcpy(rnd, data, n);
		check_version(s, size, &v);
		check_successor(s, size, &v, rnd, n < FG_MSGID_RND_MIN ? FG_MSGID_RND_MIN : n);
		check_successor(s, size, &v, rnd + (n > FG_MSGID_RND_MIN ? n - FG_MSGID_RND_MIN : 0),
				FG_MSGID_RND_MIN);
	}
	return 0;
}
