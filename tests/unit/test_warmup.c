/* SPDX-License-Identifier: MIT */
/*
 * test_warmup.c — the session engine's warm-up path (dataplane/nntp/
 * warmup.c) with a scripted downstream: a CHECK of an unknown ID waits for
 * the downstream's answer in command order; 438 records the ID as accepted
 * (journaled) and answers 438; 238, 431 and no answer answer 238 and
 * keep it; warm-up off, a refused question or no free slot
 * answer at once; a session gone before the answer still records a 438.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fgtest.h"
#include "nntp_harness.h"

static struct fg_th T;

/* The scripted downstream: questions kept, answers given by the test. */
struct fake {
	bool active;
	int ask_rc;
	unsigned n;
	uint64_t cookie[64];
	char id[64][256];
	int code[64];			/* -1: not answered yet */
	bool delivered[64];
};

static struct fake F;

static bool f_active(void *ctx, fg_time_t now)
{
	(void)now;
	return ((struct fake *)ctx)->active;
}

static int f_ask(void *ctx, const char *id, size_t len, uint64_t cookie)
{
	struct fake *f = ctx;

	if (f->ask_rc)
		return f->ask_rc;
	ck_assert_uint_lt(f->n, 64);
	f->cookie[f->n] = cookie;
	memcpy(f->id[f->n], id, len);
	f->id[f->n][len] = '\0';
	f->code[f->n] = -1;
	f->n++;
	return 0;
}

static unsigned f_poll(void *ctx, fg_nntp_engine_warm_done_fn *done, void *engine)
{
	struct fake *f = ctx;
	unsigned n = 0;

	for (unsigned i = 0; i < f->n; i++)
		if (f->code[i] >= 0 && !f->delivered[i]) {
			f->delivered[i] = true;
			done(engine, f->cookie[i], (unsigned)f->code[i]);
			n++;
		}
	return n;
}

static const struct fg_nntp_engine_warmup WARM = { f_active, f_ask, f_poll, &F, 4 };

static void setup(void)
{
	memset(&F, 0, sizeof(F));
	F.active = true;
	ck_assert_int_eq(fg_th_init_warmup(&T, NULL, &WARM), 0);
}

static void teardown(void)
{
	fg_th_fini(&T);
}

/* The question about `id` gets `code`. */
static void answer(const char *id, int code)
{
	for (unsigned i = 0; i < F.n; i++)
		if (strcmp(F.id[i], id) == 0 && F.code[i] < 0) {
			F.code[i] = code;
			return;
		}
	ck_abort_msg("no question about %s", id);
}

static const char *const ART =
	"Path: peer.example!not-for-mail\r\nFrom: Poster <poster@example.com>\r\n"
	"Newsgroups: test.group\r\nSubject: s\r\nMessage-ID: <w@x>\r\n"
	"Date: Fri, 15 Jan 2027 07:00:00 +0000\r\n\r\nbody\r\n.\r\n";

START_TEST(have_is_recorded_and_answers_wait_in_order)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");
	unsigned j = T.n_journal;

	fg_th_line(c, "CHECK <a@x>\r\nCHECK <b@x>\r\nCHECK <a@x>\r\n");
	fg_th_pump(&T, 0);
	/* nothing may overtake the first answer */
	fg_th_expect(c, "");
	ck_assert_uint_eq(F.n, 2);
	ck_assert_str_eq(F.id[0], "<a@x>");
	ck_assert_str_eq(F.id[1], "<b@x>");
	/* the second question answered first: still held back */
	answer("<b@x>", 238);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "");
	answer("<a@x>", 438);
	fg_th_pump(&T, 0);
	/* the third CHECK asked while <a@x> was offered: 431, not a question */
	fg_th_expect(c, "438 <a@x>\r\n238 <b@x>\r\n431 <a@x>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<a@x>"), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_th_state(&T, "<b@x>"), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(T.n_journal, j + 1);
	ck_assert_str_eq(T.journal_id[j], "<a@x>");
	ck_assert_int_eq(T.journal[j].state, FG_HISTORY_ACCEPTED);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_ASKED), 2);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_HAVE), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_WANTED), 1);
	/* now known: a re-offer is a plain 438 from the history */
	fg_th_line(c, "CHECK <a@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "438 <a@x>\r\n");
	ck_assert_uint_eq(F.n, 2);
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 0);
}
END_TEST

START_TEST(wanted_then_article_accepted)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");
	char cmd[64];

	fg_th_line(c, "CHECK <w@x>\r\n");
	fg_th_pump(&T, 0);
	answer("<w@x>", 238);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <w@x>\r\n");
	snprintf(cmd, sizeof(cmd), "TAKETHIS <w@x>\r\n");
	fg_th_line(c, cmd);
	fg_th_line(c, ART);
	fg_th_pump(&T, 0);
	fg_th_settle(&T, 1000000, 100);
	fg_th_expect(c, "239 <w@x>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<w@x>"), FG_HISTORY_ACCEPTED);
}
END_TEST

/* The downstream's 431 (innd: another channel's CHECK is in progress,
 * which our own questions are) is not passed on: the offer stays, 238,
 * and other sessions get 431 from the filter's own offer as usual. */
START_TEST(later_and_unknown_answer_238)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");
	struct fg_th_conn *d = fg_th_open_greeted(&T, "alpha");

	fg_th_line(c, "CHECK <l@x>\r\nCHECK <u@x>\r\n");
	fg_th_pump(&T, 0);
	answer("<l@x>", 431);
	answer("<u@x>", 0);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <l@x>\r\n238 <u@x>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_LATER), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_UNKNOWN), 1);
	ck_assert_int_eq(fg_th_state(&T, "<l@x>"), FG_HISTORY_OFFERED);
	/* still c's offer: another session is deferred without a question */
	fg_th_line(d, "CHECK <l@x>\r\n");
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(F.n, 2);
	fg_th_expect(d, "431 <l@x>\r\n");
}
END_TEST

START_TEST(off_refused_or_full_answers_at_once)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");

	F.active = false;
	fg_th_line(c, "CHECK <o1@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <o1@x>\r\n");
	ck_assert_uint_eq(F.n, 0);
	F.active = true;
	F.ask_rc = -EAGAIN;
	fg_th_line(c, "CHECK <o2@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <o2@x>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WARMUP_UNKNOWN), 1);
	F.ask_rc = 0;
	/* four slots (max_asks): the fifth question is not asked */
	fg_th_line(c, "CHECK <q1@x>\r\nCHECK <q2@x>\r\nCHECK <q3@x>\r\nCHECK <q4@x>\r\nCHECK <q5@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "");
	ck_assert_uint_eq(F.n, 4);
	for (unsigned i = 0; i < 4; i++)
		F.code[i] = 438;
	fg_th_pump(&T, 0);
	fg_th_expect(c, "438 <q1@x>\r\n438 <q2@x>\r\n438 <q3@x>\r\n438 <q4@x>\r\n238 <q5@x>\r\n");
}
END_TEST

START_TEST(session_gone_before_the_answer)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");

	fg_th_line(c, "CHECK <g1@x>\r\nCHECK <g2@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_drop(c);
	fg_th_pump(&T, 0);
	/* the session's offers went with it; the questions are still open */
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 2);
	answer("<g1@x>", 438);
	answer("<g2@x>", 238);
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 0);
	ck_assert_int_eq(fg_th_state(&T, "<g1@x>"), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_th_state(&T, "<g2@x>"), FG_HISTORY_ABSENT);
}
END_TEST

static Suite *warmup_suite(void)
{
	Suite *s = suite_create("warmup");
	TCase *tc = tcase_create("warmup");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, have_is_recorded_and_answers_wait_in_order);
	tcase_add_test(tc, wanted_then_article_accepted);
	tcase_add_test(tc, later_and_unknown_answer_238);
	tcase_add_test(tc, off_refused_or_full_answers_at_once);
	tcase_add_test(tc, session_gone_before_the_answer);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(warmup_suite)
