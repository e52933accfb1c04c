/* SPDX-License-Identifier: MIT */
/*
 * test_failpoint.c — the kill points of the crash tests (failpoint.h):
 * an armed point fires on exactly its Nth pass, with its line on stderr and
 * SIGKILL; other points and earlier passes do nothing; unknown names and
 * bad counts are refused; unarmed, nothing fires.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floodgate/failpoint.h"
#include "fgtest.h"

/* Run `passes` passes of ack-answered (with ack-spilled passes between)
 * in a child whose stderr is a pipe; its wait status and what it wrote. */
static int run_child(const char *spec, unsigned passes, char *out, size_t cap)
{
	int fds[2], status;
	pid_t pid;
	ssize_t n;
	size_t got = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		if (fg_failpoint_arm(spec) != 0)
			_exit(3);
		for (unsigned i = 0; i < passes; i++) {
			fg_failpoint("ack-spilled");
			fg_failpoint("ack-answered");
		}
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < cap && (n = read(fds[0], out + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

START_TEST(test_fires_on_nth_pass)
{
	char out[256];
	int st;

	st = run_child("ack-answered:3", 3, out, sizeof(out));
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_str_eq(out, "failpoint ack-answered fired\n");
	/* two passes are not enough for :3 */
	st = run_child("ack-answered:3", 2, out, sizeof(out));
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_str_eq(out, "");
	st = run_child("ack-answered", 1, out, sizeof(out));
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_str_eq(out, "failpoint ack-answered fired\n");
}
END_TEST

START_TEST(test_unarmed_and_other_points)
{
	char out[256];
	int st;

	st = run_child("", 100, out, sizeof(out));
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_child("ack-forwarded", 100, out, sizeof(out));
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_bad_specs)
{
	ck_assert_int_eq(fg_failpoint_arm("ack-answerd"), -EINVAL);
	ck_assert_int_eq(fg_failpoint_arm("ack-answered:0"), -EINVAL);
	ck_assert_int_eq(fg_failpoint_arm("ack-answered:"), -EINVAL);
	ck_assert_int_eq(fg_failpoint_arm("ack-answered:2x"), -EINVAL);
	ck_assert_int_eq(fg_failpoint_arm("ack"), -EINVAL);
	ck_assert(!fg_failpoint_on);
	ck_assert_int_eq(fg_failpoint_arm("ack-spilled:7"), 0);
	ck_assert(fg_failpoint_on);
	ck_assert_int_eq(fg_failpoint_arm(NULL), 0);
	ck_assert(!fg_failpoint_on);
}
END_TEST

static Suite *failpoint_suite(void)
{
	Suite *s = suite_create("failpoint");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_fires_on_nth_pass);
	tcase_add_test(tc, test_unarmed_and_other_points);
	tcase_add_test(tc, test_bad_specs);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(failpoint_suite)
