/* SPDX-License-Identifier: MIT */
/*
 * fuzz_failpoint.c — the FG_FAILPOINT value (failpoint.h) from arbitrary
 * bytes. Beyond "no crash": the answer is 0 or -EINVAL; an accepted value
 * arms (fg_failpoint_on) exactly when it is not empty, and then starts
 * with a known point's name followed by nothing or ':'; a refused one
 * leaves nothing armed. Passing another point's name never fires.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/failpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FP_NAME(name, what) name,
static const char *const names[] = { FG_FAILPOINTS(FP_NAME) };
#undef FP_NAME

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	bool known = false;
	int rc;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	rc = fg_failpoint_arm(spec);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc != 0 && fg_failpoint_on)
		abort();
	if (rc == 0 && fg_failpoint_on != (spec[0] != '\0'))
		abort();
	if (rc == 0 && spec[0]) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			size_t n = strlen(names[i]);

			known |= strncmp(spec, names[i], n) == 0 && (spec[n] == '\0' || spec[n] == ':');
		}
		if (!known)
			abort();
		fg_failpoint("not-a-failpoint");	/* must return */
	}
	fg_failpoint_arm(NULL);
	free(spec);
	return 0;
}
