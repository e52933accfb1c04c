/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hisv6.c — INN history lines (innhist.h, fg_hisv6_parse) from
 * arbitrary bytes, one line per newline. Beyond no crash and no overread
 * (each line is copied to a buffer of its exact length): a line taken is
 * written back as INN's hisv6_formatline would write it and parsed again
 * to the same hash, times and token flag; a refused line says why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/innhist.h"
#include "lines.h"

static void check_line(const char *s, size_t len)
{
	struct fg_hisv6_line a, b;
	const char *why;
	char out[200];
	int rc, n = 0;

	rc = fg_hisv6_parse(s, len, &a, &why);
	if (rc < 0 && (rc != -EINVAL || !why))
		abort();
	if (rc == 1) {
		n += snprintf(out, sizeof(out), "[");
		for (int i = 0; i < 16; i++)
			n += snprintf(out + n, sizeof(out) - (size_t)n, "%02X", a.hash[i]);
		if (a.has_token)
			n += snprintf(out + n, sizeof(out) - (size_t)n, "]\t%lld~%s%lld~%lld\t@%036d@",
				      (long long)a.arrived, a.expires ? "" : "-",
				      a.expires ? (long long)a.expires : 0LL, (long long)a.posted, 0);
		else
			n += snprintf(out + n, sizeof(out) - (size_t)n, "]\t%lld~-",
				      (long long)a.arrived);
		/* "-" then the posted time: drop the 0 of the expiry we wrote */
		if (a.has_token && !a.expires) {
			char *z = strstr(out, "~-0~");

			if (z)
				memmove(z + 2, z + 3, strlen(z + 3) + 1);
			n = (int)strlen(out);
		}
		if (fg_hisv6_parse(out, (size_t)n, &b, &why) != 1 || memcmp(a.hash, b.hash, 16) ||
		    a.arrived != b.arrived || a.has_token != b.has_token ||
		    (a.has_token && (a.expires != b.expires || a.posted != b.posted)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_line(data, size, check_line);
	return 0;
}
