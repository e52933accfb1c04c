/* SPDX-License-Identifier: MIT */
/*
 * test_reconfig.c — a running engine switched to a new configuration
 * (fg_nntp_engine_set_config, dataplane/nntp/reconfig.c), as the dataplane
 * does at a reload: the rules change for sessions already open, sessions
 * follow their peer by name into the new numbering (counters and
 * max-connections with them), a session whose peer is gone drains (the
 * article in flight finished and answered, the offers read meanwhile
 * deferred) and is then answered 400 and closed, within its bound, and
 * what open sessions' buffers depend on is refused without changing
 * anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fgtest.h"
#include "nntp_harness.h"

#define DAY 86400

static struct fg_config *conf(const char *text)
{
	struct fg_config_errors errs;
	struct fg_config *c = fg_config_load_text("<new>", text, strlen(text), &errs);

	ck_assert_msg(c != NULL, "%s", errs.n ? errs.err[0].text : "?");
	return c;
}

static const char *article(struct fg_th *t, const char *id, int64_t age)
{
	static char buf[1024];
	char date[64];
	time_t d = (time_t)(t->now - age);

	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", gmtime(&d));
	snprintf(buf, sizeof(buf),
		 "TAKETHIS %s\r\nPath: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.est\r\n"
		 "Subject: s\r\nMessage-ID: %s\r\nDate: %s\r\n\r\nbody\r\n.\r\n", id, id, date);
	return buf;
}

static void takethis(struct fg_th *t, struct fg_th_conn *c, const char *id, int64_t age,
		     const char *want)
{
	const char *a = article(t, id, age);

	fg_th_out_clear(c);
	fg_th_send(c, a, strlen(a), 0);
	fg_th_pump(t, 0);
	fg_th_settle(t, 1000000, 100);
	ck_assert_msg(strstr(fg_th_out(c), want) != NULL, "%s: got %s", id, fg_th_out(c));
}

/* Switch t to text (the base peers and extra lines); returns the old
 * configuration and counters, which the caller frees. */
static void swap(struct fg_th *t, const char *text, int expect_rc)
{
	struct fg_config *n = conf(text);
	struct fg_nntp_counters *ps = calloc(n->n_peer + 1, sizeof(*ps));
	int rc = fg_nntp_engine_set_config(t->e, n, ps);

	ck_assert_int_eq(rc, expect_rc);
	if (rc != 0) {
		fg_config_free(n);
		free(ps);
		return;
	}
	fg_config_free(t->cfg);
	free(t->peer_stats);
	t->cfg = n;
	t->peer_stats = ps;
}

static const char peers_ab[] =
	"[site]\nserver-name news.test.example\npath-identity filter.test.example\n"
	"listen 127.0.0.1:1119\n[history]\ncapacity 200000\n"
	"[peer alpha]\naddress 127.0.0.1\n[peer beta]\naddress 127.0.0.2\n";

START_TEST(test_cutoff_for_open_sessions)
{
	struct fg_th t;
	struct fg_th_conn *c;
	char text[1024];

	ck_assert_int_eq(fg_th_init(&t, NULL, NULL), 0);
	c = fg_th_open(&t, "alpha");
	takethis(&t, c, "<a1@rc.test>", 5 * DAY, "239 <a1@rc.test>");
	snprintf(text, sizeof(text), "%s[rules]\ncutoff 3d\nretention 4d\n", peers_ab);
	swap(&t, text, 0);
	/* the same session, the new rule */
	takethis(&t, c, "<a2@rc.test>", 5 * DAY, "439 <a2@rc.test>");
	takethis(&t, c, "<a3@rc.test>", 3600, "239 <a3@rc.test>");
	ck_assert_uint_eq(t.stats.s.rejected[FG_REASON_TOO_OLD], 1);
	ck_assert(!c->close_called);
	fg_th_fini(&t);
}
END_TEST

START_TEST(test_peers_follow_by_name)
{
	struct fg_th t;
	struct fg_th_conn *a, *b, *b2;
	char text[1024];

	ck_assert_int_eq(fg_th_init(&t, NULL, NULL), 0);
	a = fg_th_open(&t, "alpha");
	b = fg_th_open(&t, "beta");
	fg_th_pump(&t, 0);
	/* alpha leaves; beta moves to index 0 and may have one connection */
	snprintf(text, sizeof(text),
		 "[site]\nserver-name news.test.example\npath-identity filter.test.example\n"
		 "listen 127.0.0.1:1119\n[history]\ncapacity 200000\n[rules]\ncutoff 10d\n"
		 "retention 11d\n[peer beta]\naddress 127.0.0.2\nmax-connections 1\n"
		 "[peer gamma]\naddress 127.0.0.3\n");
	swap(&t, text, 0);
	fg_th_pump(&t, 0);
	ck_assert_msg(strstr(fg_th_out(a), "400 No longer a configured peer") != NULL, "%s",
		      fg_th_out(a));
	ck_assert(a->close_called);
	takethis(&t, b, "<b1@rc.test>", 3600, "239 <b1@rc.test>");
	/* beta's counters are kept in the new array, at beta's new index */
	ck_assert_uint_eq(t.peer_stats[0].s.ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED], 1);
	/* max-connections counts the session that was already open */
	b2 = fg_th_open(&t, "beta");
	fg_th_pump(&t, 0);
	ck_assert_msg(strncmp(fg_th_out(b2), "400 ", 4) == 0, "%s", fg_th_out(b2));
	fg_th_fini(&t);
}
END_TEST

static const char beta_only[] =
	"[site]\nserver-name news.test.example\npath-identity filter.test.example\n"
	"listen 127.0.0.1:1119\n[history]\ncapacity 200000\n[rules]\ncutoff 10d\n"
	"retention 11d\n[peer beta]\naddress 127.0.0.2\n";

/* alpha is removed while its session is in the middle of an article: the
 * article is read to its end and accepted, the CHECK pipelined behind it
 * deferred, then 400 and close; beta's session goes on untouched. */
START_TEST(test_removed_peer_drains)
{
	const char *art, *cut;
	struct fg_th t;
	struct fg_th_conn *a, *b;
	char rest[1024];

	ck_assert_int_eq(fg_th_init(&t, NULL, NULL), 0);
	a = fg_th_open_greeted(&t, "alpha");
	b = fg_th_open_greeted(&t, "beta");
	art = article(&t, "<d1@rc.test>", 3600);
	cut = strstr(art, "\r\n\r\n");
	fg_th_send(a, art, (size_t)(cut - art), 0);
	fg_th_pump(&t, 0);
	swap(&t, beta_only, 0);
	fg_th_pump(&t, 0);
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_SESSIONS_RETIRED), 1);
	ck_assert_msg(!a->close_called && fg_th_out(a)[0] == 0, "%s", fg_th_out(a));
	snprintf(rest, sizeof(rest), "%sCHECK <d2@rc.test>\r\n", cut);
	fg_th_send(a, rest, strlen(rest), 0);
	fg_th_pump(&t, 0);
	fg_th_settle(&t, 1000000, 100);
	fg_th_pump(&t, 0);
	ck_assert_str_eq(fg_th_out(a), "239 <d1@rc.test>\r\n431 <d2@rc.test>\r\n"
			 "400 No longer a configured peer, closing\r\n");
	ck_assert(a->close_called);
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_DEFER_RETIRING), 1);
	ck_assert_int_eq(fg_th_state(&t, "<d1@rc.test>"), FG_HISTORY_ACCEPTED);
	/* beta: its session, as before */
	takethis(&t, b, "<d3@rc.test>", 3600, "239 <d3@rc.test>");
	ck_assert(!b->close_called);
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_SESSIONS_RETIRED), 1);
	fg_th_fini(&t);
}
END_TEST

/* A removed peer whose article never ends is closed at the drain's bound
 * (10 s), the part it sent not accepted; before the bound it is open. */
START_TEST(test_drain_bound)
{
	const char *art;
	struct fg_th t;
	struct fg_th_conn *a;

	ck_assert_int_eq(fg_th_init(&t, NULL, NULL), 0);
	a = fg_th_open_greeted(&t, "alpha");
	art = article(&t, "<e1@rc.test>", 3600);
	fg_th_send(a, art, strlen(art) - 10, 0);
	fg_th_pump(&t, 0);
	swap(&t, beta_only, 0);
	fg_th_pump(&t, 9000000000ull);
	ck_assert_msg(!a->close_called && fg_th_out(a)[0] == 0, "%s", fg_th_out(a));
	fg_th_pump(&t, 2000000000ull);
	ck_assert_str_eq(fg_th_out(a), "400 No longer a configured peer, closing\r\n");
	ck_assert(a->close_called);
	ck_assert_int_ne(fg_th_state(&t, "<e1@rc.test>"), FG_HISTORY_ACCEPTED);
	fg_th_fini(&t);
}
END_TEST

static void say(struct fg_th *t, struct fg_th_conn *c, const char *text, const char *want)
{
	fg_th_out_clear(c);
	fg_th_send(c, text, strlen(text), 0);
	fg_th_pump(t, 0);
	ck_assert_str_eq(fg_th_out(c), want);
	fg_th_out_clear(c);
}

/* A reload re-reads the credentials: a session that authenticated stays
 * so, one that has not meets the new password, and a peer that gains
 * credentials has its unauthenticated sessions answered 480. */
START_TEST(test_credentials_reloaded)
{
	char pg[96], pa[96], extra[512], text[1024];
	struct fg_th_conn *done, *half, *a;
	struct fg_th t;

	fg_th_cred_file(pg, sizeof(pg), "gamma", "password one\n");
	fg_th_cred_file(pa, sizeof(pa), "alpha", "password alpha-pw\n");
	snprintf(extra, sizeof(extra), "[peer gamma]\naddress 127.0.0.3\ncredentials %s\n", pg);
	ck_assert_int_eq(fg_th_init(&t, extra, NULL), 0);
	done = fg_th_open_greeted(&t, "gamma");
	half = fg_th_open_greeted(&t, "gamma");
	a = fg_th_open_greeted(&t, "alpha");
	say(&t, done, "AUTHINFO USER g\r\nAUTHINFO PASS one\r\n",
	    "381 Password required\r\n281 Authentication accepted\r\n");
	say(&t, half, "AUTHINFO USER g\r\n", "381 Password required\r\n");
	say(&t, a, "CHECK <a0@rc.test>\r\n", "238 <a0@rc.test>\r\n");
	fg_th_cred_file(pg, sizeof(pg), "gamma", "password two\n");
	/* alpha gains credentials too */
	snprintf(text, sizeof(text),
		 "[site]\nserver-name news.test.example\npath-identity filter.test.example\n"
		 "listen 127.0.0.1:1119\n[history]\ncapacity 200000\n"
		 "[peer alpha]\naddress 127.0.0.1\ncredentials %s\n[peer beta]\naddress 127.0.0.2\n"
		 "[peer gamma]\naddress 127.0.0.3\ncredentials %s\n", pa, pg);
	swap(&t, text, 0);
	ck_assert_str_eq(t.cfg->peer[0].name, "alpha");
	ck_assert_uint_eq(t.cfg->peer[0].cred.pass_len, 8);
	say(&t, done, "CHECK <g1@rc.test>\r\n", "238 <g1@rc.test>\r\n");
	say(&t, half, "AUTHINFO PASS one\r\n", "481 Authentication failed\r\n");
	say(&t, half, "AUTHINFO USER g\r\nAUTHINFO PASS two\r\nCHECK <g2@rc.test>\r\n",
	    "381 Password required\r\n281 Authentication accepted\r\n238 <g2@rc.test>\r\n");
	say(&t, a, "CHECK <a1@rc.test>\r\n", "480 Authentication required for command\r\n");
	say(&t, a, "AUTHINFO USER x\r\nAUTHINFO PASS alpha-pw\r\nCHECK <a1@rc.test>\r\n",
	    "381 Password required\r\n281 Authentication accepted\r\n238 <a1@rc.test>\r\n");
	ck_assert(!done->close_called && !half->close_called && !a->close_called);
	fg_th_fini(&t);
	unlink(pg);
	unlink(pa);
}
END_TEST

/* CHECKs of new IDs tag<i0..i1-1> on c, each answered `want`. */
static void checks(struct fg_th *t, struct fg_th_conn *c, const char *tag, unsigned i0,
		   unsigned i1, unsigned want)
{
	char cmd[64], exp[64];

	for (unsigned i = i0; i < i1; i++) {
		snprintf(cmd, sizeof(cmd), "CHECK <%s%u@rc.test>\r\n", tag, i);
		snprintf(exp, sizeof(exp), "%u <%s%u@rc.test>\r\n", want, tag, i);
		fg_th_out_clear(c);
		fg_th_send(c, cmd, strlen(cmd), 0);
		fg_th_pump(t, 0);
		ck_assert_str_eq(fg_th_out(c), exp);
	}
}

/* max-outstanding-offers and offer-timeout at a reload (offers.c, "The
 * bound"): offers made under a shorter timeout lapse behind older live
 * ones and are squeezed out, so their places free at their own deadline;
 * a raised bound gives the open session the new places at once. */
START_TEST(test_offer_bound_at_reload)
{
	static const char gamma[] = "[rules]\ncutoff 10d\nretention 11d\n"
				    "[peer gamma]\naddress 127.0.0.3\nmax-outstanding-offers ";
	struct fg_th t;
	struct fg_th_conn *g;
	char text[1024];

	ck_assert_int_eq(fg_th_init(&t, "[peer gamma]\naddress 127.0.0.3\n"
				       "max-outstanding-offers 8\n", NULL), 0);
	g = fg_th_open_greeted(&t, "gamma");
	checks(&t, g, "long", 0, 4, 238);		/* deadline now + 10 s */
	snprintf(text, sizeof(text), "%s[session]\noffer-timeout 1s\n%s8\n", peers_ab, gamma);
	swap(&t, text, 0);
	checks(&t, g, "short", 0, 4, 238);		/* deadline now + 1 s */
	checks(&t, g, "x", 0, 1, 431);
	t.now += 1;
	/* the four short ones lapsed behind four live ones */
	checks(&t, g, "y", 0, 4, 238);
	checks(&t, g, "y", 4, 5, 431);
	snprintf(text, sizeof(text), "%s[session]\noffer-timeout 1s\n%s10\n", peers_ab, gamma);
	swap(&t, text, 0);
	checks(&t, g, "z", 0, 2, 238);
	checks(&t, g, "z", 2, 3, 431);
	ck_assert_uint_eq(t.stats.s.ctr[FG_CTR_NNTP_DEFER_OUTSTANDING], 3);
	fg_th_fini(&t);
}
END_TEST


START_TEST(test_sizes_refused)
{
	struct fg_th t;
	struct fg_th_conn *c;
	char text[1024];

	ck_assert_int_eq(fg_th_init(&t, NULL, NULL), 0);
	c = fg_th_open(&t, "alpha");
	snprintf(text, sizeof(text), "%s[rules]\ncutoff 3d\nretention 4d\n[session]\nmax-line 1024\n",
		 peers_ab);
	swap(&t, text, -EINVAL);
	/* nothing changed: the old cutoff still rules */
	takethis(&t, c, "<s1@rc.test>", 5 * DAY, "239 <s1@rc.test>");
	fg_th_fini(&t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("reconfig");
	TCase *tc = tcase_create("reload");

	tcase_add_test(tc, test_cutoff_for_open_sessions);
	tcase_add_test(tc, test_peers_follow_by_name);
	tcase_add_test(tc, test_sizes_refused);
	tcase_add_test(tc, test_removed_peer_drains);
	tcase_add_test(tc, test_drain_bound);
	tcase_add_test(tc, test_credentials_reloaded);
	tcase_add_test(tc, test_offer_bound_at_reload);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(suite)
