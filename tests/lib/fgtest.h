/* SPDX-License-Identifier: MIT */
/*
 * fgtest.h — shared helpers for the libcheck unit tests.
 *
 * FG_TEST_MAIN(make_suite) gives a test file its main(): run the suite
 * with CK_NORMAL output (its last line is the "N%: Checks: …" summary the
 * test runner reports) and exit non-zero on any failure or error.
 */
#ifndef FLOODGATE_TESTS_FGTEST_H
#define FLOODGATE_TESTS_FGTEST_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#define FG_TEST_MAIN(make_suite) \
	int main(void) \
	{ \
		SRunner *sr = srunner_create(make_suite()); \
		int nfail; \
		srunner_run_all(sr, CK_NORMAL); \
		nfail = srunner_ntests_failed(sr); \
		srunner_free(sr); \
		return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE; \
	}

/* Capture log lines: tests assert on what was logged (or that nothing was). */
struct fg_test_logcap {
	char text[8192];
	size_t len;
	unsigned lines;
};
void fg_test_logcap_start(struct fg_test_logcap *cap);
void fg_test_logcap_stop(void);
int fg_test_logcap_has(const struct fg_test_logcap *cap, const char *needle);

/* splitmix64: a small seeded generator, so randomised tests repeat exactly. */
uint64_t fg_test_rng(uint64_t *state);

#endif
