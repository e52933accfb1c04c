/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "floodgate/stats.h"
#include "fgtest.h"

START_TEST(test_reason_names_round_trip)
{
	ck_assert_str_eq(fg_reason_name(FG_REASON_NONE), "none");
	ck_assert_str_eq(fg_reason_name(FG_REASON_TOO_OLD), "too-old");
	ck_assert_ptr_null(fg_reason_name(FG_REASON__COUNT));
	for (unsigned r = 1; r < FG_REASON__COUNT; r++) {
		const char *n = fg_reason_name(r);

		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(fg_reason_parse(n), (int)r);
		ck_assert_ptr_nonnull(fg_reason_help(r));
	}
	ck_assert_int_eq(fg_reason_parse("none"), -EINVAL);
	ck_assert_int_eq(fg_reason_parse("Too-Old"), -EINVAL);
}
END_TEST

START_TEST(test_counter_names_unique)
{
	for (unsigned a = 0; a < FG_CTR__COUNT; a++) {
		ck_assert_ptr_nonnull(fg_counter_name(a));
		ck_assert_ptr_nonnull(fg_counter_help(a));
		for (unsigned b = a + 1; b < FG_CTR__COUNT; b++)
			ck_assert_str_ne(fg_counter_name(a), fg_counter_name(b));
	}
	ck_assert_ptr_null(fg_counter_name(FG_CTR__COUNT));
}
END_TEST

START_TEST(test_hist_buckets)
{
	struct fg_hist h;

	memset(&h, 0, sizeof(h));
	fg_hist_add(&h, 0);	/* bucket 0 */
	fg_hist_add(&h, 1);	/* [1,2) -> 1 */
	fg_hist_add(&h, 3);	/* [2,4) -> 2 */
	fg_hist_add(&h, 4);	/* [4,8) -> 3 */
	fg_hist_add(&h, -5);
	fg_hist_add(&h, INT64_MAX);
	ck_assert_uint_eq(h.bucket[0], 1);
	ck_assert_uint_eq(h.bucket[1], 1);
	ck_assert_uint_eq(h.bucket[2], 1);
	ck_assert_uint_eq(h.bucket[3], 1);
	ck_assert_uint_eq(h.bucket[FG_HIST_BUCKETS - 1], 1);
	ck_assert_uint_eq(h.negative, 1);
	ck_assert_uint_eq(h.count, 6);
	ck_assert_int_eq(fg_hist_bucket_le(3), 8);
}
END_TEST

START_TEST(test_merge)
{
	static struct fg_stats a, b;

	fg_stats_inc(&a, FG_CTR_RULES_ACCEPTED);
	fg_stats_add(&b, FG_CTR_RULES_ACCEPTED, 41);
	b.rejected[FG_REASON_DUPLICATE] = 7;
	fg_stats_merge(&a, &b);
	ck_assert_uint_eq(a.ctr[FG_CTR_RULES_ACCEPTED], 42);
	ck_assert_uint_eq(a.rejected[FG_REASON_DUPLICATE], 7);
	ck_assert_uint_eq(sizeof(struct fg_stats) % FG_CACHE_LINE, 0);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_reason_names_round_trip);
	tcase_add_test(tc, test_counter_names_unique);
	tcase_add_test(tc, test_hist_buckets);
	tcase_add_test(tc, test_merge);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(stats_suite)
