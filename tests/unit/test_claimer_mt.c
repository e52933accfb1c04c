/* SPDX-License-Identifier: MIT */
/*
 * test_claimer_mt.c — the cluster thread (dataplane/cluster/claimer.c) of two
 * boxes against a real Redis Cluster (tests/lib/rediskit, in a namespace of
 * the test's own), driven through the engine hooks it hands out: the first
 * claim wins, the other box's is BUSY while it is in flight and HAVE once
 * it is settled (accepted or refused); an unsettled claim lapses at the
 * offer timeout; an acceptance over another box's claim is counted as a
 * race and leaves that claim alone; forget deletes the key; a different
 * downstream configuration raises the digest alarm; with no cluster, a
 * claim is answered NONE within the timeout and logged once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/claimer.h"
#include "floodgate/config.h"
#include "floodgate/log.h"
#include "rediskit.h"

#define BASE_PORT 7100
#define BOUND_MS 20000u

static struct fg_test_redis R;
static bool cluster_up;

struct box {
	struct fg_config *cfg;
	struct fg_claimer *c;
	const struct fg_nntp_engine_cluster *h;
	int ans[256];			/* by cookie; -1 none yet */
	uint64_t next_cookie;
};

static uint64_t ms_now(void)
{
	return fg_mono_ns() / 1000000u;
}

static void cluster_setup(void)
{
	if (fg_test_netns_enter() == 0)
		cluster_up = fg_test_redis_cluster_start(&R, 3, 0, BASE_PORT) == 0;
}

static void cluster_teardown(void)
{
	if (cluster_up)
		fg_test_redis_stop(&R);
	cluster_up = false;
}

/* The cluster's reply deadline: no test here is about a late reply, and a
 * loaded machine (sanitizers, a CPU hog) may deschedule a Redis process
 * for a moment; 200 ms was a bet on it not doing so. Where nothing
 * listens, claims fail at once on the refused connection. */
#define CLAIM_TIMEOUT "3s"

/* A box named `name` on `seeds`, its downstream fed `groups`. */
static void box_open(struct box *b, const char *name, const char *seeds, const char *groups,
		     const char *offer_timeout)
{
	struct fg_claimer_params p = { 0 };
	struct fg_config_errors errs;
	char text[1024];

	memset(b, 0, sizeof(*b));
	snprintf(text, sizeof(text),
		 "[session]\noffer-timeout %s\n[cluster]\nseeds %s\nsecret site-secret\n"
		 "box %s\ntimeout %s\nwindow 10m\n[peer p]\naddress 192.0.2.1\n"
		 "[downstream d]\naddress 127.0.0.1\nnewsgroups %s\n",
		 offer_timeout, seeds, name, CLAIM_TIMEOUT, groups);
	b->cfg = fg_config_load_text("t.conf", text, strlen(text), &errs);
	ck_assert_msg(b->cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	p.cfg = b->cfg;
	p.max_links = 1;
	p.max_claims = 64;
	b->c = fg_claimer_create(&p);
	ck_assert_ptr_nonnull(b->c);
	b->h = fg_claimer_link(b->c, NULL, NULL);
	ck_assert_ptr_nonnull(b->h);
	ck_assert_ptr_null(fg_claimer_link(b->c, NULL, NULL));
	ck_assert_int_eq(fg_claimer_start(b->c), 0);
	memset(b->ans, -1, sizeof(b->ans));
}

static void box_close(struct box *b)
{
	fg_claimer_destroy(b->c);
	fg_config_free(b->cfg);
}

static void on_answer(void *engine, uint64_t cookie, enum fg_claim_answer a)
{
	struct box *b = engine;

	ck_assert_uint_lt(cookie, 256);
	ck_assert_int_eq(b->ans[cookie], -1);
	b->ans[cookie] = (int)a;
}

/* Claim `id` and wait for the answer. */
static enum fg_claim_answer claim(struct box *b, const char *id)
{
	uint64_t ck = b->next_cookie++, end = ms_now() + BOUND_MS;

	ck_assert_int_eq(b->h->claim(b->h->ctx, id, strlen(id), ck), 0);
	while (b->ans[ck] < 0 && ms_now() < end)
		if (!b->h->poll(b->h->ctx, on_answer, b))
			usleep(200);
	ck_assert_msg(b->ans[ck] >= 0, "no answer to the claim of %s", id);
	return (enum fg_claim_answer)b->ans[ck];
}

static uint64_t ctr(struct box *b, enum fg_counter c)
{
	struct fg_stats st;

	memset(&st, 0, sizeof(st));
	fg_claimer_counters(b->c, &st);
	return st.ctr[c];
}

/* Wait until `c` of box b reaches `n` (settles are not answered). */
static void wait_ctr(struct box *b, enum fg_counter c, uint64_t n)
{
	uint64_t end = ms_now() + BOUND_MS;

	while (ctr(b, c) < n && ms_now() < end)
		usleep(1000);
	ck_assert_uint_eq(ctr(b, c), n);
}

static void seeds(char *buf, size_t len)
{
	snprintf(buf, len, "127.0.0.1:%d,127.0.0.1:%d", R.port[0], R.port[1]);
}

START_TEST(keys)
{
	char a[FG_CLUSTER_KEY_LEN + 1], b[FG_CLUSTER_KEY_LEN + 1], c[FG_CLUSTER_KEY_LEN + 1];

	fg_cluster_key("s1", "<a@x>", 5, a);
	fg_cluster_key("s1", "<a@x>", 5, b);
	ck_assert_str_eq(a, b);
	ck_assert_uint_eq(strlen(a), FG_CLUSTER_KEY_LEN);
	ck_assert(strncmp(a, "fg:", 3) == 0);
	fg_cluster_key("s2", "<a@x>", 5, c);
	ck_assert_str_ne(a, c);
	fg_cluster_key("s1", "<b@x>", 5, c);
	ck_assert_str_ne(a, c);
}
END_TEST

START_TEST(digest_follows_downstreams)
{
	struct fg_config_errors errs;
	const char *t1 = "[peer p]\naddress 192.0.2.1\n[downstream d]\naddress 127.0.0.1\n";
	const char *t2 = "[peer p]\naddress 192.0.2.9\n[downstream d]\naddress 127.0.0.2\n";
	const char *t3 = "[peer p]\naddress 192.0.2.1\n[downstream d]\naddress 127.0.0.1\n"
			 "newsgroups *,!alt.*\n";
	struct fg_config *a = fg_config_load_text("a", t1, strlen(t1), &errs);
	struct fg_config *b = fg_config_load_text("b", t2, strlen(t2), &errs);
	struct fg_config *c = fg_config_load_text("c", t3, strlen(t3), &errs);

	ck_assert(a && b && c);
	/* peers and addresses are each box's own; what is fed is the site's */
	ck_assert_uint_eq(fg_claimer_digest(a), fg_claimer_digest(b));
	ck_assert_uint_ne(fg_claimer_digest(a), fg_claimer_digest(c));
	fg_config_free(a);
	fg_config_free(b);
	fg_config_free(c);
}
END_TEST

START_TEST(no_cluster_answers_none)
{
	struct fg_test_logcap cap;
	struct fg_cluster_status st;
	struct box b;
	uint64_t t0;

	fg_test_logcap_start(&cap);
	box_open(&b, "b1", "127.0.0.1:1", "*", "10s");
	t0 = ms_now();
	ck_assert_int_eq(claim(&b, "<n1@x>"), FG_CLAIM_NONE);
	ck_assert_int_eq(claim(&b, "<n2@x>"), FG_CLAIM_NONE);
	ck_assert_uint_lt(ms_now() - t0, BOUND_MS);
	fg_claimer_status(b.c, &st);
	ck_assert(!st.answering);
	ck_assert_uint_eq(st.nodes_up, 0);
	ck_assert_uint_ge(ctr(&b, FG_CTR_CLUSTER_ERRORS) + ctr(&b, FG_CTR_CLUSTER_TIMEOUTS), 2);
	box_close(&b);
	fg_test_logcap_stop();
	/* one line for the change of state, not one per claim */
	ck_assert(fg_test_logcap_has(&cap, "claims unanswered"));
	ck_assert_ptr_eq(strstr(strstr(cap.text, "claims unanswered") + 1, "claims unanswered"),
			 NULL);
}
END_TEST

/* A link never has more claims unanswered than its answer ring holds. */
START_TEST(claims_bounded_by_the_answer_ring)
{
	struct box b;
	uint64_t end;
	unsigned n = 0;

	box_open(&b, "b1", "127.0.0.1:1", "*", "10s");
	while (b.h->claim(b.h->ctx, "<bound@x>", 9, n) == 0)
		ck_assert_uint_lt(++n, 1000);
	ck_assert_uint_eq(n, 64);		/* max_claims */
	ck_assert_int_eq(b.h->claim(b.h->ctx, "<bound@x>", 9, 0), -ENOBUFS);
	/* every one is answered (NONE: no cluster), then claims go again */
	end = ms_now() + BOUND_MS;
	while (n && ms_now() < end) {
		unsigned k = b.h->poll(b.h->ctx, on_answer, &b);

		n -= k;
		if (!k)
			usleep(1000);
	}
	ck_assert_uint_eq(n, 0);
	for (unsigned i = 0; i < 64; i++)
		ck_assert_int_eq(b.ans[i], FG_CLAIM_NONE);
	ck_assert_int_eq(b.h->claim(b.h->ctx, "<bound@x>", 9, 100), 0);
	box_close(&b);
}
END_TEST

START_TEST(two_boxes_share_decisions)
{
	struct fg_cluster_status st;
	struct box b1, b2;
	char s[128];

	ck_assert_msg(cluster_up, "the test cluster did not start");
	seeds(s, sizeof(s));
	box_open(&b1, "b1", s, "*", "10s");
	box_open(&b2, "b2", s, "*", "10s");
	/* the first claim wins; the other box waits while it is in flight */
	ck_assert_int_eq(claim(&b1, "<x@x>"), FG_CLAIM_WON);
	ck_assert_int_eq(claim(&b2, "<x@x>"), FG_CLAIM_BUSY);
	/* the box's own claim again: still its own */
	ck_assert_int_eq(claim(&b1, "<x@x>"), FG_CLAIM_WON);
	/* accepted: the other box has it now */
	b1.h->settle(b1.h->ctx, "<x@x>", 5, true);
	wait_ctr(&b1, FG_CTR_CLUSTER_SETTLES, 1);
	ck_assert_int_eq(claim(&b2, "<x@x>"), FG_CLAIM_HAVE);
	ck_assert_int_eq(claim(&b1, "<x@x>"), FG_CLAIM_HAVE);
	/* refused: recorded for the window too */
	ck_assert_int_eq(claim(&b2, "<r@x>"), FG_CLAIM_WON);
	b2.h->settle(b2.h->ctx, "<r@x>", 5, false);
	wait_ctr(&b2, FG_CTR_CLUSTER_SETTLES, 1);
	ck_assert_int_eq(claim(&b1, "<r@x>"), FG_CLAIM_HAVE);
	ck_assert_uint_eq(ctr(&b1, FG_CTR_CLUSTER_TAKETHIS_RACES), 0);
	ck_assert_uint_eq(ctr(&b2, FG_CTR_CLUSTER_TAKETHIS_RACES), 0);
	/* a TAKETHIS without CHECK on b1 while b2's claim is in flight:
	 * taken, counted, and b2's claim left alone */
	ck_assert_int_eq(claim(&b2, "<t@x>"), FG_CLAIM_WON);
	b1.h->settle(b1.h->ctx, "<t@x>", 5, true);
	wait_ctr(&b1, FG_CTR_CLUSTER_SETTLES, 2);
	ck_assert_uint_eq(ctr(&b1, FG_CTR_CLUSTER_TAKETHIS_RACES), 1);
	ck_assert_int_eq(claim(&b2, "<t@x>"), FG_CLAIM_WON);
	/* forget deletes the key */
	ck_assert_int_eq(fg_claimer_forget(b1.c, "<x@x>", 5), 0);
	{
		uint64_t end = ms_now() + BOUND_MS;
		enum fg_claim_answer a;

		while ((a = claim(&b2, "<x@x>")) == FG_CLAIM_HAVE && ms_now() < end)
			usleep(1000);
		ck_assert_int_eq(a, FG_CLAIM_WON);
	}
	fg_claimer_status(b1.c, &st);
	ck_assert(st.answering);
	ck_assert(!st.digest_mismatch);
	ck_assert_uint_eq(st.masters, 3);
	ck_assert_uint_eq(st.slots_mapped, 16384);
	ck_assert_uint_eq(st.rtt_count, 4);	/* b1's four claims */
	ck_assert_uint_gt(st.rtt_p99_us, 0);
	ck_assert_uint_ge(st.rtt_p99_us, st.rtt_p50_us);
	ck_assert_uint_eq(ctr(&b1, FG_CTR_CLUSTER_TIMEOUTS), 0);
	/* the same, through the status file floodctld reads */
	{
		struct fg_cluster_status back;
		char dir[] = "/tmp/fg-cstatus-XXXXXX", path[64];
		fg_time_t t;

		ck_assert_ptr_nonnull(mkdtemp(dir));
		ck_assert_int_eq(fg_claimer_write_status(b1.c, dir), 0);
		ck_assert_int_eq(fg_cs_status_read(dir, &back, &t), 0);
		ck_assert_uint_eq(back.answering, 1);
		ck_assert_uint_eq(back.masters, 3);
		ck_assert_uint_eq(back.rtt_count, 4);
		ck_assert_uint_ge(back.rtt_p99_us, back.rtt_p50_us);
		ck_assert_int_le(t, time(NULL));
		snprintf(path, sizeof(path), "%s/%s", dir, FG_CS_STATUS_FILE);
		unlink(path);
		rmdir(dir);
	}
	box_close(&b1);
	box_close(&b2);
}
END_TEST

START_TEST(unsettled_claim_lapses)
{
	struct box b1, b2;
	uint64_t end;
	char s[128];
	enum fg_claim_answer a;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	seeds(s, sizeof(s));
	box_open(&b1, "b1", s, "*", "1s");
	box_open(&b2, "b2", s, "*", "1s");
	ck_assert_int_eq(claim(&b1, "<lapse@x>"), FG_CLAIM_WON);
	ck_assert_int_eq(claim(&b2, "<lapse@x>"), FG_CLAIM_BUSY);
	/* b1's transfer died: no settle; its claim expires with the offer */
	end = ms_now() + BOUND_MS;
	while ((a = claim(&b2, "<lapse@x>")) == FG_CLAIM_BUSY && ms_now() < end)
		usleep(20000);
	ck_assert_int_eq(a, FG_CLAIM_WON);
	box_close(&b1);
	box_close(&b2);
}
END_TEST

START_TEST(digest_mismatch_alarm)
{
	struct fg_cluster_status st;
	struct fg_test_logcap cap;
	struct box b1, b2;
	uint64_t end;
	char s[128], out[64];

	ck_assert_msg(cluster_up, "the test cluster did not start");
	fg_test_redis_cli(&R, 0, "-c del fg:digest", NULL, 0);
	seeds(s, sizeof(s));
	box_open(&b1, "b1", s, "*", "10s");
	/* b1's digest is published before b2 starts */
	end = ms_now() + BOUND_MS;
	do {
		ck_assert_int_eq(fg_test_redis_cli(&R, 0, "-c get fg:digest", out, sizeof(out)), 0);
	} while (strlen(out) != 16 && ms_now() < end && usleep(10000) == 0);
	ck_assert_uint_eq(strlen(out), 16);
	fg_test_logcap_start(&cap);
	box_open(&b2, "b2", s, "*,!alt.*", "10s");
	end = ms_now() + BOUND_MS;
	do {
		fg_claimer_status(b2.c, &st);
	} while (!st.digest_mismatch && ms_now() < end && usleep(10000) == 0);
	fg_test_logcap_stop();
	ck_assert(st.digest_mismatch);
	ck_assert_uint_eq(ctr(&b2, FG_CTR_CLUSTER_DIGEST_MISMATCHES), 1);
	ck_assert(fg_test_logcap_has(&cap, "feeds its downstreams otherwise"));
	fg_claimer_status(b1.c, &st);
	ck_assert(!st.digest_mismatch);
	box_close(&b1);
	box_close(&b2);
}
END_TEST

static Suite *claimer_suite(void)
{
	Suite *s = suite_create("claimer");
	TCase *t = tcase_create("offline");
	TCase *live = tcase_create("live");

	tcase_add_test(t, keys);
	tcase_add_test(t, digest_follows_downstreams);
	tcase_add_test(t, no_cluster_answers_none);
	tcase_add_test(t, claims_bounded_by_the_answer_ring);
	suite_add_tcase(s, t);
	tcase_add_unchecked_fixture(live, cluster_setup, cluster_teardown);
	tcase_set_timeout(live, 120);
	tcase_add_test(live, two_boxes_share_decisions);
	tcase_add_test(live, unsettled_claim_lapses);
	tcase_add_test(live, digest_mismatch_alarm);
	suite_add_tcase(s, live);
	return s;
}

FG_TEST_MAIN(claimer_suite)
