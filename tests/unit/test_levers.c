/* SPDX-License-Identifier: MIT */
/*
 * test_levers.c — the operator levers' state and journal: every change
 * kind, refusals, expiry, a journal replayed to the same state, a torn or
 * hostile line skipped and counted, and the state applied to an engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/levers.h"
#include "fgtest.h"
#include "nntp_harness.h"

#define T0 ((fg_time_t)1767225600)

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/fg-levers-%d-XXXXXX", (int)getpid());
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	unlink(p);
	rmdir(dir);
}

START_TEST(test_changes_and_refusals)
{
	struct fg_levers l;
	char long_reason[FG_ENGINE_REASON_MAX + 2];

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(fg_levers_throttle(&l, "disk full"), 0);
	ck_assert_str_eq(l.throttle, "disk full");
	ck_assert_int_eq(fg_levers_throttle(&l, "two\nlines"), -EINVAL);
	memset(long_reason, 'x', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	ck_assert_int_eq(fg_levers_throttle(&l, long_reason), -EINVAL);
	ck_assert_str_eq(l.throttle, "disk full");	/* unchanged */
	ck_assert_int_eq(fg_levers_throttle(&l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T0 + 60), 0);
	ck_assert_int_eq(fg_levers_pause(&l, "beta", T0 + 10), 0);
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T0 + 120), 0);	/* extended */
	ck_assert_uint_eq(l.n_pauses, 2);
	ck_assert_int_eq(fg_levers_pause(&l, "with space", T0), -EINVAL);
	ck_assert_int_eq(fg_levers_pause(&l, "", T0), -EINVAL);
	ck_assert_int_eq(fg_levers_pause(&l, "gamma", 0), -ENOENT);
	ck_assert_uint_eq(fg_levers_expire(&l, T0 + 10), 1);	/* beta's time is over */
	ck_assert_uint_eq(l.n_pauses, 1);
	ck_assert_str_eq(l.pause[0].peer, "alpha");
	ck_assert_int_eq(l.pause[0].until, T0 + 120);
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", 0), 0);
	ck_assert_uint_eq(l.n_pauses, 0);
}
END_TEST

START_TEST(test_journal_replays_to_the_same_state)
{
	struct fg_levers l;
	unsigned bad = 99;
	char p[128];
	FILE *f;

	ck_assert_int_eq(fg_levers_load(dir, T0, &l, &bad), 0);	/* no file yet */
	ck_assert_uint_eq(l.n_pauses, 0);
	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "pause alpha 1767229200"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "pause beta 1767225610"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "throttle disk full, back at noon"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 1, "pause gamma 1767229200"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 2, "resume gamma"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 3, "resume gamma"), 0);	/* harmless */
	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	f = fopen(p, "a");
	ck_assert_ptr_nonnull(f);
	fputs("junk line\n1767225600 pause\n1767225600 pause delta soon\n", f);
	fputs("1767225600 pause torn 17672", f);	/* the crash's torn end */
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0 + 20, &l, &bad), 0);
	ck_assert_uint_eq(bad, 4);
	ck_assert_str_eq(l.throttle, "disk full, back at noon");
	ck_assert_uint_eq(l.n_pauses, 1);		/* beta's time is over */
	ck_assert_str_eq(l.pause[0].peer, "alpha");
	ck_assert_int_eq(l.pause[0].until, 1767229200);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 30, "go"), 0);
	ck_assert_int_eq(fg_levers_load(dir, T0 + 30, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	ck_assert_int_eq(fg_levers_journal("/nonexistent-dir-fg", T0, "go"), -ENOENT);
}
END_TEST

/* The state applied to a live engine: sessions see it; the same throttle
 * again closes nothing again. */
/* The file names its format's version first (docs/compat.md): written
 * so, read without it (version 1), a newer one refused. */
START_TEST(test_journal_version)
{
	struct fg_levers l;
	char p[128], head[64];
	FILE *f;

	ck_assert_int_eq(fg_levers_journal(dir, T0, "throttle x"), 0);
	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	fclose(f);
	ck_assert_str_eq(head, FG_LEVERS_MAGIC " 1\n");
	ck_assert_int_eq(fg_levers_journal(dir, T0, "go"), 0);	/* no second header */
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	f = fopen(p, "w");
	fputs("1767225600 throttle no header\n", f);
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "no header");
	f = fopen(p, "w");
	fputs(FG_LEVERS_MAGIC " 2\n1767225600 throttle from the future\n", f);
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(test_apply_to_an_engine)
{
	struct fg_th T;
	struct fg_levers l;
	struct fg_th_conn *c;

	ck_assert_int_eq(fg_th_init(&T, NULL, NULL), 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T.now + 60), 0);
	fg_levers_apply(&l, T.e);
	ck_assert(fg_engine_paused(T.e, "alpha", NULL));
	c = fg_th_open(&T, "alpha");
	fg_th_pump(&T, 0);
	fg_th_out_clear(c);
	fg_th_send(c, "CHECK <a@x>\r\n", 13, 0);
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "431 <a@x>\r\n");
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", 0), 0);
	ck_assert_int_eq(fg_levers_throttle(&l, "maintenance"), 0);
	fg_levers_apply(&l, T.e);
	ck_assert(!fg_engine_paused(T.e, "alpha", NULL));
	ck_assert_str_eq(fg_engine_throttled(T.e), "maintenance");
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "431 <a@x>\r\n400 maintenance\r\n");
	fg_levers_apply(&l, T.e);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_THROTTLE_CLOSED), 1);
	ck_assert_int_eq(fg_levers_throttle(&l, NULL), 0);
	fg_levers_apply(&l, T.e);
	ck_assert_ptr_null(fg_engine_throttled(T.e));
	fg_th_fini(&T);
}
END_TEST

static Suite *levers_suite(void)
{
	Suite *s = suite_create("levers");
	TCase *tc = tcase_create("levers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_changes_and_refusals);
	tcase_add_test(tc, test_journal_replays_to_the_same_state);
	tcase_add_test(tc, test_journal_version);
	tcase_add_test(tc, test_apply_to_an_engine);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(levers_suite)
