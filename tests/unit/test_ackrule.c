/* SPDX-License-Identifier: MIT */
/*
 * test_ackrule.c — the decision table of end-to-end acknowledgement
 * (ackrule.h), row by row, for two downstreams: A (bit 0) acknowledges,
 * B (bit 1) does not. Both ackers (rack.c, portack.c) decide with it.
 */
#include "fgtest.h"
#include "floodgate/ackrule.h"
#include "floodgate/relay.h"

#define A 0u
#define B 1u
#define ACK (1u << A)

static struct fg_ackrule_marks marks(uint8_t want)
{
	return (struct fg_ackrule_marks){ .want = want, .sent = want,
					  .cause = FG_CTR_RELAY_ACK_SPILL_EOF };
}

START_TEST(accepted_when_all_answered)
{
	struct fg_ackrule_marks m = marks(3);

	fg_ackrule_answer(&m, A, 239, ACK);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_WAIT);
	fg_ackrule_answer(&m, B, 439, ACK);	/* a non-acknowledging refusal is final */
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_RELAY_ACK_ACCEPTED);
	ck_assert_uint_eq(m.spill, 0);
}
END_TEST

START_TEST(accepted_other_late_spills_it)
{
	struct fg_ackrule_marks m = marks(3);

	fg_ackrule_answer(&m, A, 239, ACK);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, true), FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(m.spill, 1u << B);
	ck_assert_uint_eq(m.cause, FG_CTR_RELAY_ACK_SPILL_TIMEOUT);
}
END_TEST

START_TEST(deferrals_and_errors_spill)
{
	static const int codes[] = { 431, 436, 400, 500, 501, 502, 503, 480, 238, 335 };

	for (unsigned i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct fg_ackrule_marks m = marks(1);

		fg_ackrule_answer(&m, A, codes[i], ACK);
		ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_RELAY_ACK_SPILL);
		ck_assert_uint_eq(m.spill, 1);
		ck_assert_uint_eq(m.cause, FG_CTR_RELAY_ACK_SPILL_REFUSED);
		ck_assert_uint_eq(m.final, 0);
	}
	ck_assert_int_eq(fg_ackrule_code_counter(431), FG_CTR_RELAY_DEFERRED);
	ck_assert_int_eq(fg_ackrule_code_counter(436), FG_CTR_RELAY_DEFERRED);
	ck_assert_int_eq(fg_ackrule_code_counter(503), FG_CTR_RELAY_PROTOCOL_ERRORS);
	ck_assert_int_eq(fg_ackrule_code_counter(239), FG_CTR_RELAY_ACCEPTED);
	ck_assert_int_eq(fg_ackrule_code_counter(439), FG_CTR_RELAY_REFUSED_439);
}
END_TEST

START_TEST(refused_asks_check_then_remembers_on_438)
{
	struct fg_ackrule_marks m = marks(1);

	fg_ackrule_answer(&m, A, 439, ACK);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_CHECK);
	m.checking = true;
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_WAIT);
	fg_ackrule_checked(&m, 438);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_RELAY_ACK_REFUSED);
}
END_TEST

START_TEST(refused_without_438_forgets)
{
	static const int codes[] = { 238, 431, 0 };

	for (unsigned i = 0; i < 3; i++) {
		struct fg_ackrule_marks m = marks(1);

		fg_ackrule_answer(&m, A, 439, ACK);
		ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_CHECK);
		fg_ackrule_checked(&m, codes[i]);
		ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_RELAY_ACK_REFUSED_FORGET);
	}
}
END_TEST

START_TEST(refused_check_late_forgets)
{
	struct fg_ackrule_marks m = marks(1);

	fg_ackrule_answer(&m, A, 439, ACK);
	m.checking = true;
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, true), FG_RELAY_ACK_REFUSED_FORGET);
	/* refused at the deadline without a CHECK yet: no CHECK, forgotten */
	m = marks(1);
	fg_ackrule_answer(&m, A, 439, ACK);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, true), FG_RELAY_ACK_REFUSED_FORGET);
}
END_TEST

START_TEST(never_439_for_a_spill)
{
	struct fg_ackrule_marks m = marks(3);

	/* A refused, B's connection broke: not a spill of an acknowledging
	 * one, so still 439 ... */
	fg_ackrule_answer(&m, A, 439, ACK);
	fg_ackrule_spill(&m, B, FG_CTR_RELAY_ACK_SPILL_EOF);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_CHECK);
	/* ... but with two acknowledging, one refusing and one spilled, spill */
	m = marks(3);
	fg_ackrule_answer(&m, A, 439, 3);
	fg_ackrule_spill(&m, B, FG_CTR_RELAY_ACK_SPILL_EOF);
	ck_assert_int_eq(fg_ackrule_decide(&m, 3, false), FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(m.spill, 1u << B);
}
END_TEST

START_TEST(timeout_spills_open_ones)
{
	struct fg_ackrule_marks m = marks(3);

	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_ACKRULE_WAIT);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, true), FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(m.spill, 3);
	ck_assert_uint_eq(m.cause, FG_CTR_RELAY_ACK_SPILL_TIMEOUT);
}
END_TEST

START_TEST(first_cause_names_the_spill)
{
	struct fg_ackrule_marks m = marks(3);

	fg_ackrule_spill(&m, B, FG_CTR_RELAY_ACK_SPILL_EOF);
	fg_ackrule_answer(&m, A, 436, ACK);
	ck_assert_uint_eq(m.cause, FG_CTR_RELAY_ACK_SPILL_EOF);
	/* a final answer is not undone by a later spill */
	m = marks(1);
	fg_ackrule_answer(&m, A, 239, ACK);
	fg_ackrule_spill(&m, A, FG_CTR_RELAY_ACK_SPILL_TIMEOUT);
	ck_assert_uint_eq(m.spill, 0);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, true), FG_RELAY_ACK_ACCEPTED);
}
END_TEST

START_TEST(only_non_ack_wanted_spills_nothing_named)
{
	/* a route without an acknowledging downstream never reaches an acker,
	 * but if it did, an all-final answer set is a spill to no one extra */
	struct fg_ackrule_marks m = marks(2);

	fg_ackrule_answer(&m, B, 239, ACK);
	ck_assert_int_eq(fg_ackrule_decide(&m, ACK, false), FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(m.spill, 0);
}
END_TEST

START_TEST(counts_results)
{
	struct fg_stats st = { 0 };
	struct fg_ackrule_marks m = marks(1);

	fg_ackrule_count(&m, FG_RELAY_ACK_ACCEPTED, &st);
	fg_ackrule_count(&m, FG_RELAY_ACK_REFUSED, &st);
	fg_ackrule_count(&m, FG_RELAY_ACK_REFUSED_FORGET, &st);
	m.cause = FG_CTR_RELAY_ACK_SPILL_TIMEOUT;
	fg_ackrule_count(&m, FG_RELAY_ACK_SPILL, &st);
	fg_ackrule_count(&m, FG_RELAY_ACK_SPILL, NULL);
	ck_assert_uint_eq(st.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 1);
	ck_assert_uint_eq(st.ctr[FG_CTR_RELAY_ACK_REFUSED], 2);
	ck_assert_uint_eq(st.ctr[FG_CTR_RELAY_ACK_REMEMBERED], 1);
	ck_assert_uint_eq(st.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
}
END_TEST

static Suite *ackrule_suite(void)
{
	Suite *s = suite_create("ackrule");
	TCase *a = tcase_create("answers");
	TCase *t = tcase_create("decide");

	tcase_add_test(a, deferrals_and_errors_spill);
	tcase_add_test(a, first_cause_names_the_spill);
	tcase_add_test(a, counts_results);
	suite_add_tcase(s, a);
	tcase_add_test(t, accepted_when_all_answered);
	tcase_add_test(t, accepted_other_late_spills_it);
	tcase_add_test(t, refused_asks_check_then_remembers_on_438);
	tcase_add_test(t, refused_without_438_forgets);
	tcase_add_test(t, refused_check_late_forgets);
	tcase_add_test(t, never_439_for_a_spill);
	tcase_add_test(t, timeout_spills_open_ones);
	tcase_add_test(t, only_non_ack_wanted_spills_nothing_named);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(ackrule_suite)
