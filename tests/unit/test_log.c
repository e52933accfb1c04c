/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "floodgate/log.h"
#include "fgtest.h"

START_TEST(test_level_filter)
{
	struct fg_test_logcap cap;

	fg_log_set_level(FG_LOG_WARN);
	fg_test_logcap_start(&cap);
	FG_LOG_INFO("t", "dropped %d", 1);
	FG_LOG_WARN("t", "kept %d", 2);
	FG_LOG_ERR("x", "kept %s", "too");
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 2);
	ck_assert(fg_test_logcap_has(&cap, "warn t: kept 2\n"));
	ck_assert(fg_test_logcap_has(&cap, "err x: kept too\n"));
	ck_assert(!fg_test_logcap_has(&cap, "dropped"));
}
END_TEST

START_TEST(test_long_message_is_cut)
{
	struct fg_test_logcap cap;
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fg_log_set_level(FG_LOG_DEBUG);
	fg_test_logcap_start(&cap);
	FG_LOG_ERR("t", "%s", big);
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 1);
	ck_assert_uint_lt(cap.len, 1100);
}
END_TEST

START_TEST(test_level_names)
{
	ck_assert_int_eq(fg_log_level_parse("debug"), FG_LOG_DEBUG);
	ck_assert_int_eq(fg_log_level_parse("err"), FG_LOG_ERR);
	ck_assert_int_eq(fg_log_level_parse("loud"), -EINVAL);
	ck_assert_str_eq(fg_log_level_name(FG_LOG_NOTICE), "notice");
}
END_TEST

START_TEST(test_panic_aborts)
{
	FG_ASSERT(1 + 1 == 3);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_level_filter);
	tcase_add_test(tc, test_long_message_is_cut);
	tcase_add_test(tc, test_level_names);
	tcase_add_test_raise_signal(tc, test_panic_aborts, 6 /* SIGABRT */);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(log_suite)
