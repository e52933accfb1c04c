/* SPDX-License-Identifier: MIT */
/*
 * fg-compatgen — writes this build's golden file of every on-disk and
 * shared-memory format (tools/compat/golden.h; docs/compat.md):
 *
 *   fg-compatgen DIR           write DIR/<format>/v<N>.<ext> for this
 *                              build's versions (the older files stay);
 *                              exit 1, changing nothing of it, if a file
 *                              DIR/RELEASED lists would change: a released
 *                              version's format needs a version bump. A
 *                              new file's line is added to DIR/RELEASED.
 *   fg-compatgen --check DIR   write nothing; exit 1 if a file of this
 *                              build's versions is missing or differs
 *
 * The committed set is tests/data/compat; `make compat-golden` runs the
 * first form on it.
 */
#include <stdio.h>
#include <string.h>

#include "../compat/golden.h"

static void report(const char *msg)
{
	printf("%s\n", msg);
}

int main(int argc, char **argv)
{
	int check = argc == 3 && strcmp(argv[1], "--check") == 0;
	int n;

	if (argc != 2 + check) {
		fprintf(stderr, "usage: fg-compatgen [--check] DIR\n");
		return 2;
	}
	n = fg_golden_write(argv[argc - 1], check, report);
	if (n < 0) {
		fprintf(stderr, "fg-compatgen: %s: %s\n", argv[argc - 1], strerror(-n));
		return 1;
	}
	if (check)
		printf("%s: %s\n", argv[argc - 1], n ? "differs from this build" : "this build's golden files match");
	else if (n)
		fprintf(stderr, "fg-compatgen: %d released file%s refused: bump the format's version "
			"(docs/compat.md)\n", n, n == 1 ? "" : "s");
	return n ? 1 : 0;
}
