/* SPDX-License-Identifier: MIT */
/*
 * test_claims.c — the session engine's cluster claims (dataplane/nntp/
 * claims.c) with a scripted cluster: a CHECK of an ID this box does not
 * know waits for its claim's answer in command order; WON answers 238 and
 * keeps the offer, HAVE records the ID as accepted (journaled) and answers
 * 438, BUSY answers 431 and holds the ID here for a second (431 without a
 * claim meanwhile, a claim again after it), NONE decides locally (238, counted); a local hit never asks; a
 * refused claim or a full table answers at once; every accepted or refused
 * article, with or without a CHECK, is settled; a session gone before the
 * answer still records a HAVE; two engines on one history claim an ID once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fgtest.h"
#include "nntp_harness.h"

static struct fg_th T;

/* The scripted cluster: claims kept, answers given by the test. */
struct fake {
	int claim_rc;
	unsigned n;
	uint64_t cookie[64];
	char id[64][256];
	int ans[64];			/* -1: not answered yet */
	bool delivered[64];
	unsigned n_settle;
	char settle_id[64][256];
	bool settle_accepted[64];
};

static struct fake F;

static int f_claim(void *ctx, const char *id, size_t len, uint64_t cookie)
{
	struct fake *f = ctx;

	if (f->claim_rc)
		return f->claim_rc;
	ck_assert_uint_lt(f->n, 64);
	f->cookie[f->n] = cookie;
	memcpy(f->id[f->n], id, len);
	f->id[f->n][len] = '\0';
	f->ans[f->n] = -1;
	f->n++;
	return 0;
}

static unsigned f_poll(void *ctx, fg_nntp_engine_claim_done_fn *done, void *engine)
{
	struct fake *f = ctx;
	unsigned n = 0;

	for (unsigned i = 0; i < f->n; i++)
		if (f->ans[i] >= 0 && !f->delivered[i]) {
			f->delivered[i] = true;
			done(engine, f->cookie[i], (enum fg_claim_answer)f->ans[i]);
			n++;
		}
	return n;
}

static void f_settle(void *ctx, const char *id, size_t len, bool accepted)
{
	struct fake *f = ctx;

	ck_assert_uint_lt(f->n_settle, 64);
	memcpy(f->settle_id[f->n_settle], id, len);
	f->settle_id[f->n_settle][len] = '\0';
	f->settle_accepted[f->n_settle++] = accepted;
}

static const struct fg_nntp_engine_cluster CL = { f_claim, f_poll, f_settle, &F, 4 };

static void setup(void)
{
	memset(&F, 0, sizeof(F));
	ck_assert_int_eq(fg_th_init_cluster(&T, NULL, &CL, NULL), 0);
}

static void teardown(void)
{
	fg_th_fini(&T);
}

/* The open claim of `id` gets `a`. */
static void answer(const char *id, enum fg_claim_answer a)
{
	for (unsigned i = 0; i < F.n; i++)
		if (strcmp(F.id[i], id) == 0 && F.ans[i] < 0) {
			F.ans[i] = (int)a;
			return;
		}
	ck_abort_msg("no claim of %s", id);
}

/* An article of ID `id` dated `date`. */
static void article(struct fg_th_conn *c, const char *id, const char *date)
{
	char art[512];

	snprintf(art, sizeof(art),
		 "TAKETHIS %s\r\nPath: peer.example!not-for-mail\r\n"
		 "From: Poster <poster@example.com>\r\nNewsgroups: test.group\r\nSubject: s\r\n"
		 "Message-ID: %s\r\nDate: %s\r\n\r\nbody\r\n.\r\n", id, id, date);
	fg_th_line(c, art);
}

#define FRESH "Fri, 15 Jan 2027 07:00:00 +0000"
#define ANCIENT "Mon, 15 Jan 2001 07:00:00 +0000"

START_TEST(answers_wait_in_order)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");
	unsigned j = T.n_journal;

	fg_th_line(c, "CHECK <w@x>\r\nCHECK <h@x>\r\nCHECK <b@x>\r\nCHECK <n@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "");
	ck_assert_uint_eq(F.n, 4);
	/* the later ones answered first: still held back behind <w@x> */
	answer("<n@x>", FG_CLAIM_NONE);
	answer("<b@x>", FG_CLAIM_BUSY);
	answer("<h@x>", FG_CLAIM_HAVE);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "");
	answer("<w@x>", FG_CLAIM_WON);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <w@x>\r\n438 <h@x>\r\n431 <b@x>\r\n238 <n@x>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<w@x>"), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_th_state(&T, "<h@x>"), FG_HISTORY_ACCEPTED);
	/* busy elsewhere: held here for a second */
	ck_assert_int_eq(fg_th_state(&T, "<b@x>"), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_th_state(&T, "<n@x>"), FG_HISTORY_OFFERED);
	ck_assert_uint_eq(T.n_journal, j + 1);
	ck_assert_str_eq(T.journal_id[j], "<h@x>");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_CLAIMS), 4);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_WINS), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_LOSSES), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_INFLIGHT_WAITS), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_FALLBACKS), 1);
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 0);
	/* known here now: answered from the history, no claim */
	fg_th_line(c, "CHECK <h@x>\r\nCHECK <w@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "438 <h@x>\r\n431 <w@x>\r\n");
	ck_assert_uint_eq(F.n, 4);
	/* the busy one: 431 from the hold, no claim; after the hold,
	 * offered again, it is claimed again */
	fg_th_line(c, "CHECK <b@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "431 <b@x>\r\n");
	ck_assert_uint_eq(F.n, 4);
	T.now += 1;
	fg_th_line(c, "CHECK <b@x>\r\n");
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(F.n, 5);
	answer("<b@x>", FG_CLAIM_WON);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <b@x>\r\n");
}
END_TEST

START_TEST(outcomes_are_settled)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");

	fg_th_line(c, "CHECK <s1@x>\r\n");
	fg_th_pump(&T, 0);
	answer("<s1@x>", FG_CLAIM_WON);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <s1@x>\r\n");
	article(c, "<s1@x>", FRESH);
	/* a TAKETHIS without a CHECK is never held back, and settled too */
	article(c, "<s2@x>", FRESH);
	article(c, "<s3@x>", ANCIENT);
	fg_th_pump(&T, 0);
	fg_th_settle(&T, 1000000, 100);
	fg_th_expect(c, "239 <s1@x>\r\n239 <s2@x>\r\n439 <s3@x>\r\n");
	ck_assert_uint_eq(F.n, 1);
	ck_assert_uint_eq(F.n_settle, 3);
	ck_assert_str_eq(F.settle_id[0], "<s1@x>");
	ck_assert(F.settle_accepted[0]);
	ck_assert_str_eq(F.settle_id[1], "<s2@x>");
	ck_assert(F.settle_accepted[1]);
	ck_assert_str_eq(F.settle_id[2], "<s3@x>");
	ck_assert(!F.settle_accepted[2]);
}
END_TEST

START_TEST(refused_or_full_answers_at_once)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");

	F.claim_rc = -EAGAIN;
	fg_th_line(c, "CHECK <o1@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <o1@x>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_FALLBACKS), 1);
	F.claim_rc = 0;
	/* four slots (max_claims): the fifth is decided here */
	fg_th_line(c, "CHECK <q1@x>\r\nCHECK <q2@x>\r\nCHECK <q3@x>\r\nCHECK <q4@x>\r\nCHECK <q5@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "");
	ck_assert_uint_eq(F.n, 4);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLUSTER_FALLBACKS), 2);
	for (unsigned i = 0; i < 4; i++)
		F.ans[i] = FG_CLAIM_HAVE;
	fg_th_pump(&T, 0);
	fg_th_expect(c, "438 <q1@x>\r\n438 <q2@x>\r\n438 <q3@x>\r\n438 <q4@x>\r\n238 <q5@x>\r\n");
	/* a bad ID never reaches the cluster */
	fg_th_line(c, "CHECK notanid\r\n");
	fg_th_pump(&T, 0);
	fg_th_expect(c, "438 notanid\r\n");
	ck_assert_uint_eq(F.n, 4);
}
END_TEST

START_TEST(session_gone_before_the_answer)
{
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha");

	fg_th_line(c, "CHECK <g1@x>\r\nCHECK <g2@x>\r\nCHECK <g3@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_drop(c);
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 3);
	answer("<g1@x>", FG_CLAIM_HAVE);
	answer("<g2@x>", FG_CLAIM_WON);
	answer("<g3@x>", FG_CLAIM_BUSY);
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(fg_nntp_engine_xfers(T.e), 0);
	ck_assert_int_eq(fg_th_state(&T, "<g1@x>"), FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(fg_th_state(&T, "<g2@x>"), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_th_state(&T, "<g3@x>"), FG_HISTORY_ABSENT);
}
END_TEST

/* Two engines of one box share its history: only the first asks. */
START_TEST(one_claim_per_box)
{
	struct fg_th T2;
	struct fg_th_conn *c = fg_th_open_greeted(&T, "alpha"), *d;

	ck_assert_int_eq(fg_th_init_cluster(&T2, NULL, &CL, &T), 0);
	d = fg_th_open_greeted(&T2, "alpha");
	fg_th_line(c, "CHECK <one@x>\r\n");
	fg_th_pump(&T, 0);
	fg_th_line(d, "CHECK <one@x>\r\n");
	fg_th_pump(&T2, 0);
	fg_th_expect(d, "431 <one@x>\r\n");
	ck_assert_uint_eq(F.n, 1);
	answer("<one@x>", FG_CLAIM_WON);
	fg_th_pump(&T, 0);
	fg_th_expect(c, "238 <one@x>\r\n");
	fg_th_drop(d);
	fg_th_pump(&T2, 0);
	fg_th_fini(&T2);
}
END_TEST

static Suite *claims_suite(void)
{
	Suite *s = suite_create("claims");
	TCase *tc = tcase_create("claims");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, answers_wait_in_order);
	tcase_add_test(tc, outcomes_are_settled);
	tcase_add_test(tc, refused_or_full_answers_at_once);
	tcase_add_test(tc, session_gone_before_the_answer);
	tcase_add_test(tc, one_claim_per_box);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(claims_suite)
