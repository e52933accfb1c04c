/* SPDX-License-Identifier: MIT */
/*
 * fuzz_form.c — the status page's lookup form: the query string of
 * GET /?id=... (fg_html_form_value, statuspage.h) from arbitrary bytes,
 * as a client sends them. Beyond "no crash, no overread": a value found
 * is NUL-free and as long as said; encoded again (every octet as %XX) and
 * decoded, it comes back the same; -ENOSPC only for a value that would
 * not fit, so a bigger buffer finds it (or the NUL it holds further on).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/statuspage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char small[64], big[1 << 16], again[1 << 16], enc[3 * sizeof(big) + 4];
	const char *q = (const char *)data;
	int rc = fg_html_form_value(q, size, "id", small, sizeof(small)), rc2;
	size_t n = 0;

	if (rc >= 0 && (strlen(small) != (size_t)rc || rc >= (int)sizeof(small)))
		abort();
	if (rc < 0 && rc != -ENOENT && rc != -ENOSPC && rc != -EINVAL)
		abort();
	rc2 = fg_html_form_value(q, size, "id", big, sizeof(big));
	/* a small buffer may fill up before a NUL further on is seen */
	if (rc == -ENOSPC ? rc2 < (int)sizeof(small) - 1 && rc2 != -EINVAL : rc2 != rc)
		abort();
	if (rc2 < 0)
		return 0;
	if (rc >= 0 && strcmp(small, big) != 0)
		abort();
	n = (size_t)snprintf(enc, sizeof(enc), "id=");
	for (int i = 0; i < rc2; i++)
		n += (size_t)snprintf(enc + n, sizeof(enc) - n, "%%%02X", (unsigned char)big[i]);
	if (fg_html_form_value(enc, n, "id", again, sizeof(again)) != rc2 || strcmp(again, big) != 0)
		abort();
	return 0;
}
