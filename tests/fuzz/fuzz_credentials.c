/* SPDX-License-Identifier: MIT */
/*
 * fuzz_credentials.c — a [peer] credentials file from arbitrary bytes
 * (fg_config_cred_parse, dataplane/config/config_cred.c).
 *
 * Every input is taken or refused with a message (never a crash, never a
 * read past the input). Taken: a password of 1..FG_CONFIG_SECRET_MAX
 * octets, a username of 0..FG_CONFIG_SECRET_MAX, neither holding a
 * control octet, both zero-padded past their length (the constant-time
 * comparison reads the whole buffer). Refused: the entry left all zero
 * (nothing half-read is kept) and a message that quotes no password
 * octets: the refusal of an input whose password line is "password
 * <marker>" never holds the marker.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"

static void check_secret(const char *s, uint16_t len)
{
	if (len > FG_CONFIG_SECRET_MAX)
		abort();
	for (unsigned i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
	for (unsigned i = len; i < FG_CONFIG_SECRET_MAX; i++)
		if (s[i] != 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fg_config_cred zero;
	static const char marker[] = "Zq7-secret-Xk9";
	struct fg_config_cred c;
	char why[200];
	unsigned line;
	int rc;

	rc = fg_config_cred_parse((const char *)data, size, &c, &line, why, sizeof(why));
	if (rc == 0) {
		if (c.pass_len == 0 || line != 0)
			abort();
		check_secret(c.pass, c.pass_len);
		check_secret(c.user, c.user_len);
		return 0;
	}
	if (memcmp(&c, &zero, sizeof(c)) != 0 || !memchr(why, '\0', sizeof(why)) || !why[0])
		abort();
	if (memmem(data, size, marker, sizeof(marker) - 1) && strstr(why, marker))
		abort();
	return 0;
}
