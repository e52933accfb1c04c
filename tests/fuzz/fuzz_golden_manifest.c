/* SPDX-License-Identifier: MIT */
/*
 * fuzz_golden_manifest.c — the manifest of the released golden files
 * (tests/data/compat/RELEASED, tools/compat/golden.h) from arbitrary bytes:
 * fg-compatgen and test_compat read it. Beyond "no crash, no overread": a
 * parse that succeeds gives at most GOLDEN_MANIFEST_MAX entries, each name
 * "<format>/<file>" of the allowed characters and found again by name, no
 * name twice; writing the entries as lines and parsing that gives the same
 * entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/compat/golden.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fg_golden_manifest m, again;
static char text[GOLDEN_MANIFEST_MAX * (2 * FG_SHA256_LEN + GOLDEN_NAME_MAX + 4)];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	size_t at = 0;
	int rc = fg_golden_manifest_parse((const char *)data, size, &m, why, sizeof(why));

	if (rc != 0) {
		if (rc != -EINVAL || strncmp(why, "line ", 5) != 0)
			abort();
		return 0;
	}
	if (m.n > GOLDEN_MANIFEST_MAX)
		abort();
	for (unsigned i = 0; i < m.n; i++) {
		const char *slash = strchr(m.e[i].name, '/');
		size_t n;

		if (!slash || slash == m.e[i].name || !slash[1] || strchr(slash + 1, '/') ||
		    strlen(m.e[i].name) >= GOLDEN_NAME_MAX)
			abort();
		if (fg_golden_manifest_find(&m, m.e[i].name) != &m.e[i])
			abort();	/* a name twice, or not found */
		n = fg_golden_manifest_line(&m.e[i], text + at, sizeof(text) - at);
		if (n == 0)
			abort();
		at += n;
	}
	if (fg_golden_manifest_parse(text, at, &again, why, sizeof(why)) != 0 || again.n != m.n)
		abort();
	for (unsigned i = 0; i < m.n; i++)
		if (strcmp(again.e[i].name, m.e[i].name) != 0 ||
		    memcmp(again.e[i].digest, m.e[i].digest, FG_SHA256_LEN) != 0)
			abort();
	return 0;
}
