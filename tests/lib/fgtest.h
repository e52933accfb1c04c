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
#include <stdbool.h>
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

/*
 * Wait on a condition, never on the clock: cond(arg) every step_us
 * microseconds until it holds. Returns true then, or false once
 * FG_TEST_WAIT_S seconds, stretched by $FG_TIMEOUT_SCALE as fgkit.py's
 * deadlines are, have passed: a bound on failure only (under ASan or TSan
 * on a loaded machine a thread may take a while). The test asserts on the
 * answer, naming what it waited for.
 */
#define FG_TEST_WAIT_S 60
bool fg_test_wait_until(bool (*cond)(void *arg), void *arg, unsigned step_us);

/* splitmix64: a small seeded generator, so randomised tests repeat exactly. */
uint64_t fg_test_rng(uint64_t *state);

#endif
