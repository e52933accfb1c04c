/* SPDX-License-Identifier: MIT */
/*
 * innhash.c — INN's key of a Message-ID (lib/hash.c, HashMessageID): the
 * MD5 of the ID after INN's normalisation. RFC 5322 makes the domain part
 * case-insensitive, so INN lowercases every octet after the first '@'; and
 * the whole ID after its first octet when the local part is "postmaster"
 * in any case (RFC 5321 4.5.1). Lowercasing is ASCII's, as innd runs it
 * (the C locale's tolower). floodgate's own history compares octets
 * exactly (RFC 3977 3.6): only the foreign table, which holds INN's keys,
 * uses this.
 */
#include <string.h>

#include "floodgate/innhist.h"

static inline char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

bool fg_inn_hash_msgid(const char *id, size_t len, uint8_t out[FG_MD5_LEN])
{
	static const char post[] = "postmaster";
	char buf[FG_INN_ID_MAX];
	const char *at = memchr(id, '@', len);
	size_t from, i;

	if (len > sizeof(buf))
		return false;
	if (!at) {
		fg_md5(id, len, out);
		return true;
	}
	from = (size_t)(at - id) + 1;
	if ((size_t)(at - id) == 1 + sizeof(post) - 1) {
		for (i = 0; i < sizeof(post) - 1 && lower(id[1 + i]) == post[i]; i++)
			;
		if (i == sizeof(post) - 1)
			from = 1;
	}
	memcpy(buf, id, from);
	for (i = from; i < len; i++)
		buf[i] = lower(id[i]);
	fg_md5(buf, len, out);
	return true;
}
