/* SPDX-License-Identifier: MIT */
/*
 * test_expiry.c — one expiry pass in slices: in each RFC 5537 mode it
 * removes exactly the entries on the far side of the line, a dry run
 * counts the same and removes nothing, a stop flag ends a pass early, and
 * parameters the sweep refuses are refused.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "floodgate/expiry.h"
#include "ctl_fixture.h"
#include "fgtest.h"

#define DAY 86400

/* n entries tagged `tag`: first seen fs_age ago, dated date_age ago. */
static void put(struct fg_region *r, const char *tag, unsigned n, int64_t fs_age,
		int64_t date_age, fg_time_t now)
{
	struct fg_history_key k;

	for (unsigned i = 0; i < n; i++) {
		fx_key(r, tag, i, &k);
		ck_assert_int_eq(fg_history_insert_final(fg_region_history(r), &k,
							 i % 2 ? FG_HISTORY_ACCEPTED : FG_HISTORY_REJECTED,
							 now - date_age, now - fs_age, now, NULL), 0);
	}
}

static unsigned present(struct fg_region *r, const char *tag, unsigned n, fg_time_t now)
{
	struct fg_history_key k;
	unsigned p = 0;

	for (unsigned i = 0; i < n; i++) {
		fx_key(r, tag, i, &k);
		p += fg_history_lookup(fg_region_history(r), &k, now, NULL) != FG_HISTORY_ABSENT;
	}
	return p;
}

START_TEST(test_both_modes_exactly)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 20000, 1, 64);
	struct fg_history *h = fg_region_history(r);
	struct fg_expiry_result e;
	fg_time_t now = time(NULL);

	put(r, "old", 300, 12 * DAY, 12 * DAY, now);
	put(r, "keep", 300, 9 * DAY, 9 * DAY, now);
	put(r, "late", 300, 3600, 11 * DAY, now);
	/* first-seen, retention 11 d: `old` only; a dry run first */
	ck_assert_int_eq(fg_expiry_pass(h, FG_EXPIRY_FIRST_SEEN, now, 10 * DAY, 11 * DAY, true, 7,
					0, NULL, &e), 0);
	ck_assert(e.complete && e.dry_run);
	ck_assert_uint_eq(e.expired, 300);
	ck_assert_uint_eq(e.expired_by_state[FG_HISTORY_REJECTED], 150);
	ck_assert_uint_eq(present(r, "old", 300, now), 300);
	ck_assert_int_eq(fg_expiry_pass(h, FG_EXPIRY_FIRST_SEEN, now, 10 * DAY, 11 * DAY, false, 7,
					0, NULL, &e), 0);
	ck_assert_uint_eq(e.expired, 300);
	ck_assert_uint_eq(e.kept, 600);
	ck_assert_uint_eq(present(r, "old", 300, now), 0);
	ck_assert_uint_eq(present(r, "keep", 300, now), 300);
	ck_assert_uint_eq(present(r, "late", 300, now), 300);
	/* article date, cutoff 10 d: `late` only */
	ck_assert_int_eq(fg_expiry_pass(h, FG_EXPIRY_ARTICLE_DATE, now, 10 * DAY, 11 * DAY, false,
					0, 0, NULL, &e), 0);
	ck_assert_uint_eq(e.expired, 300);
	ck_assert_uint_eq(present(r, "late", 300, now), 0);
	ck_assert_uint_eq(present(r, "keep", 300, now), 300);
	ck_assert_str_eq(fg_expiry_mode_name(e.mode), "article-date");
	/* the pass's own CPU time: counted, and within its wall time */
	ck_assert(e.cpu_seconds > 0);
	ck_assert(e.cpu_seconds <= e.seconds + 0.01);
	fx_cleanup(&fx);
}
END_TEST

/* Passes spaced to a share of one core, never closer than the floor. */
START_TEST(test_next_wait)
{
	const uint64_t S = 1000000000ull, floor = 60 * S;

	/* 156 s of CPU at 1 %: 99 x 156 s = 4.29 h between passes */
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1.0, 156.0), 15444 * S);
	/* a small table: the floor */
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1.0, 0.3), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1.0, 0.0), floor);
	/* 50 %: as long again as the pass took */
	ck_assert_uint_eq(fg_expiry_next_wait_ns(0, 50.0, 2.0), 2 * S);
	/* 100 % and nonsense: no spacing beyond the floor */
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 100.0, 1e6), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 0.0, 10.0), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, -5.0, 10.0), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1.0, -1.0), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, NAN, 10.0), floor);
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1.0, NAN), floor);
	/* a pass of absurd length saturates instead of wrapping */
	ck_assert_uint_eq(fg_expiry_next_wait_ns(floor, 1e-9, 1e12), UINT64_MAX);
}
END_TEST

START_TEST(test_stop_and_bad_parameters)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 20000, 1, 64);
	struct fg_expiry_result e;
	atomic_bool stop = true;
	fg_time_t now = time(NULL);

	ck_assert_int_eq(fg_expiry_pass(fg_region_history(r), FG_EXPIRY_FIRST_SEEN, now, DAY,
					2 * DAY, false, 1, 0, &stop, &e), 0);
	ck_assert(!e.complete);
	ck_assert_uint_lt(e.buckets, 100);
	ck_assert_int_eq(fg_expiry_pass(fg_region_history(r), FG_EXPIRY_ARTICLE_DATE, now, -1,
					2 * DAY, false, 1, 0, NULL, &e), -EINVAL);
	ck_assert_int_eq(fg_expiry_pass(fg_region_history(r), (enum fg_expiry_mode)7, now, DAY,
					2 * DAY, false, 1, 0, NULL, &e), -EINVAL);
	ck_assert_int_eq(fg_expiry_pass(fg_region_history(r), FG_EXPIRY_FIRST_SEEN, now, DAY,
					1000 * DAY, false, 1, 0, NULL, &e), -EINVAL);
	fx_cleanup(&fx);
}
END_TEST

static Suite *expiry_suite(void)
{
	Suite *s = suite_create("expiry");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_both_modes_exactly);
	tcase_add_test(tc, test_stop_and_bad_parameters);
	tcase_add_test(tc, test_next_wait);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(expiry_suite)
