/* SPDX-License-Identifier: MIT */
/*
 * test_session.c — every response path of the session engine, each
 * checked against the exact line on the wire (spelled out here, not taken
 * from the engine's constants), plus the bad-input cases, the limits and
 * the asynchronous sink paths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/date.h"
#include "fgtest.h"
#include "nntp_harness.h"

#define GREETING "200 news.test.example floodgate transit-only NNTP service ready " \
		 "(feeds only, no reading or posting)\r\n"
#define MS 1000000ull

static struct fg_th T;

/* An article in wire form: the usual headers, dates relative to now. */
static char *article_x(const char *id, const char *hdr_id, long date_age, long inj_age,
		       const char *extra, const char *body)
{
	char date[64], inj[64], *a;
	size_t cap = 4096 + strlen(body) + (extra ? strlen(extra) : 0);
	int n;

	fg_date_format(T.now - date_age, date, sizeof(date));
	fg_date_format(T.now - inj_age, inj, sizeof(inj));
	a = malloc(cap);
	ck_assert_ptr_nonnull(a);
	n = snprintf(a, cap,
		     "Path: peer.example!not-for-mail\r\n"
		     "From: Poster <poster@example.com>\r\n"
		     "Newsgroups: test.group\r\n"
		     "Subject: test %s\r\n"
		     "Message-ID: %s\r\n"
		     "Date: %s\r\n"
		     "%s%s%s"
		     "%s"
		     "\r\n"
		     "%s"
		     ".\r\n",
		     id, hdr_id, date, inj_age >= 0 ? "Injection-Date: " : "",
		     inj_age >= 0 ? inj : "", inj_age >= 0 ? "\r\n" : "", extra ? extra : "", body);
	ck_assert_int_lt(n, (int)cap);
	return a;
}

static char *article(const char *id)
{
	return article_x(id, id, 3600, 3000, NULL, "Hello.\r\n..dot line\r\n");
}

/* Send "TAKETHIS <id>\r\n" + its article. */
static void takethis(struct fg_th_conn *c, const char *id, const char *art, size_t seg)
{
	char line[600];

	snprintf(line, sizeof(line), "TAKETHIS %s\r\n", id);
	fg_th_send(c, line, strlen(line), seg);
	fg_th_send(c, art, strlen(art), seg);
}

static void line(struct fg_th_conn *c, const char *text)
{
	fg_th_send(c, text, strlen(text), 0);
}

static void expect(struct fg_th_conn *c, const char *want)
{
	ck_assert_str_eq(fg_th_out(c), want);
	fg_th_out_clear(c);
}

static void setup_with(const char *extra, const struct fg_sink_mem_params *sp)
{
	ck_assert_int_eq(fg_th_init(&T, extra, sp), 0);
}

static void setup(void)
{
	setup_with(NULL, NULL);
}

static void teardown(void)
{
	fg_th_fini(&T);
}

/* A connection of the named peer, its greeting read (a peer with
 * credentials gets the same 200, as from innd). */
static struct fg_th_conn *peer_named(const char *name)
{
	struct fg_th_conn *c = fg_th_open(&T, name);

	ck_assert_ptr_nonnull(c);
	fg_th_pump(&T, 0);
	expect(c, GREETING);
	return c;
}

static struct fg_th_conn *peer(void)
{
	return peer_named("alpha");
}

/* ------------------------------------------------------------ greeting, simple commands */

START_TEST(greeting_and_not_peer)
{
	struct fg_th_conn *c = fg_th_open(&T, NULL);

	ck_assert_ptr_nonnull(c);
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "502 Not a configured peer of this transit-only server\r\n");
	ck_assert(c->closed_reported && c->detached);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_SESSIONS_NOT_PEER), 1);
	c = peer();
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_SESSIONS_OPENED), 1);
}
END_TEST

START_TEST(capabilities_help_mode_quit)
{
	static const char caps[] = "101 Capability list:\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n"
				   "IMPLEMENTATION floodgate 0.1\r\n.\r\n";
	static const char help[] = "100 Help text follows\r\n"
				   "  AUTHINFO USER name|PASS password\r\n  CAPABILITIES\r\n"
				   "  CHECK message-id\r\n  HELP\r\n  IHAVE message-id\r\n"
				   "  MODE STREAM\r\n  QUIT\r\n  TAKETHIS message-id\r\n.\r\n";
	struct fg_th_conn *c = peer();
	char want[2048];

	line(c, "CAPABILITIES\r\ncapabilities AUTOUPDATE\r\nCAPABILITIES a b\r\n");
	fg_th_pump(&T, 0);
	snprintf(want, sizeof(want), "%s%s501 Syntax error\r\n", caps, caps);
	expect(c, want);
	line(c, "HELP\r\nHELP me\r\n");
	fg_th_pump(&T, 0);
	snprintf(want, sizeof(want), "%s501 Syntax error\r\n", help);
	expect(c, want);
	line(c, "MODE STREAM\r\nmode stream\r\nMODE STREAM now\r\nMODE\r\nMODE POLKA\r\n");
	fg_th_pump(&T, 0);
	expect(c, "203 Streaming permitted\r\n203 Streaming permitted\r\n"
		  "501 Syntax error\r\n501 Syntax error\r\n501 Syntax error\r\n");
	line(c, "ARTICLE <a@b>\r\n\r\nPOST\r\nQUIT now\r\n");
	fg_th_pump(&T, 0);
	expect(c, "500 Unknown command\r\n500 Unknown command\r\n500 Unknown command\r\n"
		  "501 Syntax error\r\n");
	line(c, "QUIT\r\nCHECK <after@quit>\r\n");
	fg_th_pump(&T, 0);
	expect(c, "205 Bye\r\n");
	ck_assert(c->close_called && c->closed_reported);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_CHECK], 0);
	ck_assert_uint_eq(T.stats.n.code[FG_NNTP_CODE_C501], 6);
}
END_TEST

START_TEST(mode_reader_closes)
{
	struct fg_th_conn *c = peer();

	line(c, "MODE READER\r\nCHECK <a@b>\r\n");
	fg_th_pump(&T, 0);
	expect(c, "502 Transit-only server, no reading\r\n");
	ck_assert(c->closed_reported);
}
END_TEST

/* ------------------------------------------------------------ CHECK */

START_TEST(check_paths)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	char *art = article("<new@x.example>");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	line(a, "CHECK <new@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "238 <new@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<new@x.example>"), FG_HISTORY_OFFERED);
	/* RFC-NOTES: another session asking inside the offer window gets 431 */
	line(b, "CHECK <new@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "431 <new@x.example>\r\n");
	/* an invalid argument is echoed with 438; a missing or extra one is 501 */
	line(b, "CHECK not-an-id\r\nCHECK <a b>\r\nCHECK\r\nCHECK <x@y> <z@w>\r\ncheck <lower@case>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "438 not-an-id\r\n501 Syntax error\r\n501 Syntax error\r\n501 Syntax error\r\n"
		  "238 <lower@case>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_BAD_MESSAGE_ID], 1);
	/* after the article, every CHECK gets 438 */
	takethis(a, "<new@x.example>", art, 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "239 <new@x.example>\r\n");
	line(b, "CHECK <new@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "438 <new@x.example>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_DUPLICATE], 1);
	free(art);
}
END_TEST

START_TEST(check_offer_deadline)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	line(a, "CHECK <slow@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "238 <slow@x.example>\r\n");
	T.now += 9;
	line(b, "CHECK <slow@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "431 <slow@x.example>\r\n");
	/* offer-timeout (10 s) later the ID is free again */
	T.now += 1;
	line(b, "CHECK <slow@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "238 <slow@x.example>\r\n");
}
END_TEST

/* ------------------------------------------------------------ TAKETHIS */

START_TEST(takethis_paths)
{
	struct fg_th_conn *c = peer();
	char *good = article("<t1@x.example>");
	char *mismatch = article_x("<t2@x.example>", "<other@x.example>", 3600, 3000, NULL, "b\r\n");
	char *old = article_x("<t3@x.example>", "<t3@x.example>", 20 * 86400, 20 * 86400, NULL,
			      "b\r\n");
	const struct fg_sink_mem_article *m;

	takethis(c, "<t1@x.example>", good, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <t1@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<t1@x.example>"), FG_HISTORY_ACCEPTED);
	m = fg_sink_mem_find(T.sink, "<t1@x.example>", 14);
	ck_assert_ptr_nonnull(m);
	/* the sink got the article unstuffed, without the terminator */
	ck_assert_ptr_nonnull(strstr((const char *)m->text, "Hello.\r\n.dot line\r\n"));
	ck_assert_uint_eq(m->wire_size, strlen(good) - 3);
	/* a duplicate is drained and refused */
	takethis(c, "<t1@x.example>", good, 7);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <t1@x.example>\r\n");
	/* header ID differs: refused, not remembered (anyone could block an ID) */
	takethis(c, "<t2@x.example>", mismatch, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <t2@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<t2@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_MESSAGE_ID_MISMATCH], 1);
	/* too old, carried its own ID: remembered as rejected */
	takethis(c, "<t3@x.example>", old, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <t3@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<t3@x.example>"), FG_HISTORY_REJECTED);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_REJECTS_REMEMBERED), 1);
	/* an invalid ID: the article is read to its end, then 439 <arg> */
	takethis(c, "bogus", good, 3);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 bogus\r\n");
	/* no argument: drained, then 501 */
	line(c, "TAKETHIS\r\n");
	fg_th_send(c, good, strlen(good), 0);
	line(c, "MODE STREAM\r\n");
	fg_th_settle(&T, MS, 100);
	expect(c, "501 Syntax error\r\n203 Streaming permitted\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_ARTICLES_ACCEPTED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_ARTICLES_REFUSED), 4);
	free(good);
	free(mismatch);
	free(old);
}
END_TEST

START_TEST(takethis_remember_off)
{
	struct fg_th_conn *c;
	char *old;

	teardown();
	setup_with("[rules]\nremember-rejects off\n", NULL);
	c = peer();
	old = article_x("<r@x.example>", "<r@x.example>", 20 * 86400, -1, NULL, "b\r\n");
	takethis(c, "<r@x.example>", old, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <r@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<r@x.example>"), FG_HISTORY_ABSENT);
	free(old);
}
END_TEST

START_TEST(takethis_empty_and_headless)
{
	struct fg_th_conn *c = peer();
	static const char hdr_only[] = "Message-ID: <h@x.example>\r\n.\r\n";

	/* an empty article and one with no body: defined, refused */
	line(c, "TAKETHIS <e@x.example>\r\n.\r\n");
	line(c, "TAKETHIS <h@x.example>\r\n");
	line(c, hdr_only);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <e@x.example>\r\n439 <h@x.example>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_MISSING_MESSAGE_ID], 1);
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_MISSING_DATE], 1);
}
END_TEST

/* ------------------------------------------------------------ IHAVE */

START_TEST(ihave_paths)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	char *good = article("<i1@x.example>");
	char *old = article_x("<i2@x.example>", "<i2@x.example>", 20 * 86400, -1, NULL, "b\r\n");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	line(a, "IHAVE <i1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "335 Send it; end with <CR-LF>.<CR-LF>\r\n");
	/* meanwhile the other peer offers it: try later */
	line(b, "IHAVE <i1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "436 Try again later\r\n");
	fg_th_send(a, good, strlen(good), 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "235 Article transferred OK\r\n");
	line(b, "IHAVE <i1@x.example>\r\nIHAVE bad\r\nIHAVE\r\n");
	fg_th_pump(&T, 0);
	expect(b, "435 Article not wanted\r\n501 Syntax error\r\n501 Syntax error\r\n");
	line(a, "IHAVE <i2@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "335 Send it; end with <CR-LF>.<CR-LF>\r\n");
	fg_th_send(a, old, strlen(old), 5);
	fg_th_settle(&T, MS, 100);
	expect(a, "437 Rejected: too-old\r\n");
	free(good);
	free(old);
}
END_TEST

/* Seed 002 per peer: who offered an ID first, and the delays of the
 * articles each peer brought. alpha is peer 0, beta peer 1. */
START_TEST(offers_first_by_peer)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	struct fg_nntp_counters *pa = &T.peer_stats[0], *pb = &T.peer_stats[1];
	char *o1 = article("<o1@x.example>"), *o2 = article("<o2@x.example>");
	char *o3 = article("<o3@x.example>");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	line(a, "CHECK <o1@x.example>\r\n");
	fg_th_pump(&T, 0);
	line(b, "CHECK <o1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "431 <o1@x.example>\r\n");
	/* alpha's TAKETHIS after its own 238 is the same offer, not another */
	takethis(a, "<o1@x.example>", o1, 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "238 <o1@x.example>\r\n239 <o1@x.example>\r\n");
	/* a TAKETHIS without a CHECK is an offer; first when the ID is new */
	takethis(b, "<o2@x.example>", o2, 7);
	fg_th_settle(&T, MS, 100);
	expect(b, "239 <o2@x.example>\r\n");
	line(a, "CHECK <o2@x.example>\r\nIHAVE <o3@x.example>\r\n");
	fg_th_pump(&T, 0);
	fg_th_send(a, o3, strlen(o3), 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "438 <o2@x.example>\r\n335 Send it; end with <CR-LF>.<CR-LF>\r\n"
		  "235 Article transferred OK\r\n");
	/* an argument no article could carry is no offer; a known ID is one */
	line(b, "CHECK not-an-id\r\n");
	takethis(b, "<o1@x.example>", o1, 0);
	fg_th_settle(&T, MS, 100);
	expect(b, "438 not-an-id\r\n439 <o1@x.example>\r\n");
	ck_assert_uint_eq(pa->s.ctr[FG_CTR_NNTP_OFFERS], 3);
	ck_assert_uint_eq(pa->s.ctr[FG_CTR_NNTP_OFFERS_FIRST], 2);
	ck_assert_uint_eq(pb->s.ctr[FG_CTR_NNTP_OFFERS], 3);
	ck_assert_uint_eq(pb->s.ctr[FG_CTR_NNTP_OFFERS_FIRST], 1);
	ck_assert_uint_eq(T.stats.s.ctr[FG_CTR_NNTP_OFFERS], 6);
	ck_assert_uint_eq(T.stats.s.ctr[FG_CTR_NNTP_OFFERS_FIRST], 3);
	ck_assert(fg_stats_first_share(&pa->s) == 2.0 / 3.0);
	/* alpha brought o1 and o3: Date an hour old, Injection-Date 3000 s */
	ck_assert_uint_eq(pa->n.arrival_delay.count, 2);
	ck_assert_int_eq(pa->n.arrival_delay.sum, 6000);
	ck_assert_int_eq(pa->n.injection_delay.sum, 1200);
	ck_assert_uint_eq(pb->n.arrival_delay.count, 1);
	ck_assert(fg_hist_mean(&pb->n.injection_delay) == 600.0);
	/* each peer's last command is stamped with the time it was read */
	ck_assert_int_eq(pa->n.last_command, T.now);
	ck_assert_int_eq(pb->n.last_command, T.now);
	T.now += 60;
	line(b, "CHECK <o4@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "238 <o4@x.example>\r\n");
	ck_assert_int_eq(pb->n.last_command, T.now);
	ck_assert_int_eq(pa->n.last_command, T.now - 60);
	ck_assert_int_eq(T.stats.n.last_command, T.now);
	free(o1);
	free(o2);
	free(o3);
}
END_TEST

/* ------------------------------------------------------------ the sink */

START_TEST(sink_failure)
{
	struct fg_th_conn *c = peer(), *d;
	char *a1 = article("<f1@x.example>"), *a2 = article("<f2@x.example>");

	fg_sink_mem_set_fail(T.sink, 0, "f1@");
	line(c, "CHECK <f1@x.example>\r\n");
	takethis(c, "<f1@x.example>", a1, 0);
	line(c, "CHECK <later@x.example>\r\n");
	fg_th_settle(&T, MS, 100);
	/* RFC 4644 2.5.2: 400 and close; the entry is released */
	expect(c, "238 <f1@x.example>\r\n400 Article could not be stored, try again later\r\n");
	ck_assert(c->closed_reported);
	ck_assert_int_eq(fg_th_state(&T, "<f1@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_th_state(&T, "<later@x.example>"), FG_HISTORY_ABSENT);
	/* IHAVE: 436, and the session goes on */
	d = fg_th_open(&T, "beta");
	fg_th_pump(&T, 0);
	fg_th_out_clear(d);
	fg_sink_mem_set_fail(T.sink, 0, "f2@");
	line(d, "IHAVE <f2@x.example>\r\n");
	fg_th_send(d, a2, strlen(a2), 0);
	line(d, "MODE STREAM\r\n");
	fg_th_settle(&T, MS, 100);
	expect(d, "335 Send it; end with <CR-LF>.<CR-LF>\r\n"
		  "436 Transfer failed, try again later\r\n203 Streaming permitted\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<f2@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_ARTICLES_FAILED), 2);
	free(a1);
	free(a2);
}
END_TEST

START_TEST(pipelined_delayed_in_order)
{
	struct fg_th_conn *c = peer();
	char *a1 = article("<p1@x.example>"), *a2 = article("<p2@x.example>");

	fg_sink_mem_set_delay(T.sink, 50 * MS);
	takethis(c, "<p1@x.example>", a1, 0);
	line(c, "CHECK <p3@x.example>\r\n");
	takethis(c, "<p2@x.example>", a2, 0);
	line(c, "CHECK <p4@x.example>\r\nMODE STREAM\r\n");
	fg_th_pump(&T, 0);
	/* the CHECKs are decided, but wait behind the first TAKETHIS */
	expect(c, "");
	ck_assert_int_eq(fg_th_state(&T, "<p4@x.example>"), FG_HISTORY_OFFERED);
	fg_th_settle(&T, 10 * MS, 100);
	expect(c, "239 <p1@x.example>\r\n238 <p3@x.example>\r\n239 <p2@x.example>\r\n"
		  "238 <p4@x.example>\r\n203 Streaming permitted\r\n");
	free(a1);
	free(a2);
}
END_TEST

/* Peer a's TAKETHIS of id is ACCEPTING when peer b's TAKETHIS of it, and a
 * CHECK of `after` behind, arrive: nothing answers b before a's end. */
static void both_offer(struct fg_th_conn *a, struct fg_th_conn *b, const char *id,
		       const char *art, const char *after)
{
	char check[128];

	takethis(a, id, art, 0);
	fg_th_pump(&T, 0);
	ck_assert_int_eq(fg_th_state(&T, id), FG_HISTORY_ACCEPTING);
	takethis(b, id, art, 0);
	snprintf(check, sizeof(check), "CHECK %s\r\n", after);
	line(b, check);
	fg_th_pump(&T, 0);
	expect(b, "");
	fg_th_settle(&T, 5 * MS, 100);
}

START_TEST(second_transfer_waits)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	char *x = article("<w@x.example>"), *y = article("<v@x.example>");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	fg_sink_mem_set_delay(T.sink, 20 * MS);
	both_offer(a, b, "<w@x.example>", x, "<after@x.example>");
	expect(a, "239 <w@x.example>\r\n");
	expect(b, "439 <w@x.example>\r\n238 <after@x.example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WAIT_ACCEPTING), 1);
	/* when the first fails, the waiting one takes its place */
	fg_sink_mem_set_fail(T.sink, 1, NULL);
	takethis(a, "<v@x.example>", y, 0);
	fg_th_pump(&T, 0);
	fg_sink_mem_set_fail(T.sink, 0, NULL);
	takethis(b, "<v@x.example>", y, 0);
	fg_th_settle(&T, 5 * MS, 100);
	expect(a, "400 Article could not be stored, try again later\r\n");
	expect(b, "239 <v@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<v@x.example>"), FG_HISTORY_ACCEPTED);
	free(x);
	free(y);
}
END_TEST

/*
 * End-to-end acknowledgement (sink.h, FG_SINK_REFUSED*): the downstream's
 * 439 reaches the peer as 439. REFUSED (the server confirmed with 438 to
 * CHECK) is remembered: a second peer's TAKETHIS waiting on the ACCEPTING
 * entry gets 439 and a later CHECK 438. REFUSED_FORGET releases the entry:
 * the waiting transfer takes its place. Either way the second peer, and
 * the CHECK pipelined behind its TAKETHIS, wait exactly as long as the
 * first transfer's completion (here the sink's delay; the end-to-end sink
 * bounds it by ack-timeout plus a spill's sync, test_ack_mt).
 */
START_TEST(downstream_refusal_remembered_or_forgotten)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	char *x = article("<keep-1@x.example>"), *y = article("<forget-1@x.example>");

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	fg_sink_mem_set_delay(T.sink, 20 * MS);
	fg_sink_mem_set_refuse(T.sink, "keep-", "forget-");
	both_offer(a, b, "<keep-1@x.example>", x, "<after1@x.example>");
	expect(a, "439 <keep-1@x.example>\r\n");
	expect(b, "439 <keep-1@x.example>\r\n238 <after1@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<keep-1@x.example>"), FG_HISTORY_REJECTED);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_REJECTS_REMEMBERED), 1);
	line(b, "CHECK <keep-1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "438 <keep-1@x.example>\r\n");

	takethis(a, "<forget-1@x.example>", y, 0);
	fg_th_pump(&T, 0);
	ck_assert_int_eq(fg_th_state(&T, "<forget-1@x.example>"), FG_HISTORY_ACCEPTING);
	/* the waiting one is committed once the first is forgotten: accepted */
	fg_sink_mem_set_refuse(T.sink, "keep-", NULL);
	takethis(b, "<forget-1@x.example>", y, 0);
	fg_th_pump(&T, 0);
	expect(b, "");
	fg_th_settle(&T, 5 * MS, 100);
	expect(a, "439 <forget-1@x.example>\r\n");
	expect(b, "239 <forget-1@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<forget-1@x.example>"), FG_HISTORY_ACCEPTED);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_REJECTS_REMEMBERED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_WAIT_ACCEPTING), 2);
	free(x);
	free(y);
	/* IHAVE: 437, the reason named; forgotten, so offered again: 335 */
	x = article("<forget-2@x.example>");
	fg_sink_mem_set_refuse(T.sink, NULL, "forget-");
	line(a, "IHAVE <forget-2@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "335 Send it; end with <CR-LF>.<CR-LF>\r\n");
	fg_th_send(a, x, strlen(x), 0);
	fg_th_settle(&T, 5 * MS, 100);
	expect(a, "437 Rejected: downstream-refused\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<forget-2@x.example>"), FG_HISTORY_ABSENT);
	line(a, "IHAVE <forget-2@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "335 Send it; end with <CR-LF>.<CR-LF>\r\n");
	free(x);
}
END_TEST

/* ------------------------------------------------------------ bad input */

START_TEST(bad_lines)
{
	struct fg_th_conn *c = peer();
	char longl[700], *art = article("<l@x.example>");
	static const char nul[] = "CHECK <a\0b@x>\r\n";

	memset(longl, 'x', sizeof(longl));
	memcpy(longl, "CHECK <", 7);
	memcpy(longl + sizeof(longl) - 3, ">\r\n", 3);
	fg_th_send(c, longl, sizeof(longl), 0);
	fg_th_send(c, longl, sizeof(longl), 100);	/* split: copied, then refused */
	fg_th_send(c, nul, sizeof(nul) - 1, 0);
	line(c, "CHECK <cr\r@x>\r\nCHECK <bare@lf>\n");
	fg_th_pump(&T, 0);
	expect(c, "501 Line too long\r\n501 Line too long\r\n"
		  "501 Invalid character in command line\r\n"
		  "501 Invalid character in command line\r\n238 <bare@lf>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_LINE_TOO_LONG), 2);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_BAD_CHAR), 2);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_BARE_LF), 1);
	/* an over-long TAKETHIS line: its article is drained, then 501 */
	memcpy(longl, "TAKETHIS <", 10);
	fg_th_send(c, longl, sizeof(longl), 64);
	fg_th_send(c, art, strlen(art), 64);
	line(c, "MODE STREAM\r\n");
	fg_th_pump(&T, 0);
	expect(c, "501 Line too long\r\n203 Streaming permitted\r\n");
	/* binary junk: unknown commands, no crash */
	{
		uint8_t junk[4096];
		uint64_t r = 42;

		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)fg_test_rng(&r);
		fg_th_send(c, junk, sizeof(junk), 13);
		line(c, "\r\nMODE STREAM\r\n");
		fg_th_pump(&T, 0);
		ck_assert_ptr_nonnull(strstr(fg_th_out(c), "203 Streaming permitted\r\n"));
	}
	free(art);
}
END_TEST

START_TEST(eof_cases)
{
	struct fg_th_conn *c = peer(), *d;
	char *art = article("<m@x.example>");

	/* EOF in the middle of an article: nothing of it is kept */
	line(c, "CHECK <m@x.example>\r\nTAKETHIS <m@x.example>\r\n");
	fg_th_send(c, art, strlen(art) / 2, 0);
	fg_th_eof(c);
	fg_th_settle(&T, MS, 100);
	expect(c, "238 <m@x.example>\r\n");
	ck_assert(c->closed_reported);
	ck_assert_int_eq(fg_th_state(&T, "<m@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_EOF_MID_ARTICLE), 1);
	/* EOF without the final CRLF: the partial line is dropped */
	d = fg_th_open(&T, "beta");
	line(d, "MODE STREAM\r\nCHECK <n@x.example>");
	fg_th_eof(d);
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(d), GREETING "203 Streaming permitted\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_EOF_PARTIAL_LINE), 1);
	ck_assert(d->closed_reported);
	free(art);
}
END_TEST

START_TEST(drop_releases_offers)
{
	struct fg_th_conn *c = peer();

	/* the peer reads nothing: answers are queued when the connection drops
	 * (the engine must neither send nor close once told it is gone) */
	c->send_blocked = true;
	line(c, "CHECK <o1@x.example>\r\nCHECK <o2@x.example>\r\nTAKETHIS <o1@x.example>\r\nPath: a\r\n");
	fg_th_pump(&T, 0);
	ck_assert_uint_gt(fg_nntp_session_unsent(c->s), 0);
	ck_assert_int_eq(fg_th_state(&T, "<o2@x.example>"), FG_HISTORY_OFFERED);
	fg_th_drop(c);
	ck_assert_int_eq(fg_th_state(&T, "<o1@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_th_state(&T, "<o2@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_OFFERS_RELEASED), 2);
	ck_assert(c->detached);
}
END_TEST

/* TAKETHIS <tag i@x.example> with its article: accepted. */
static void take_accepted(struct fg_th_conn *c, const char *tag, unsigned i)
{
	char id[64], *art;

	snprintf(id, sizeof(id), "<%s%u@x.example>", tag, i);
	art = article(id);
	takethis(c, id, art, 0);
	fg_th_settle(&T, MS, 100);
	ck_assert_int_eq(fg_th_state(&T, id), FG_HISTORY_ACCEPTED);
	free(art);
}

/* The session's offers are found by key (offers.c's index), whatever the
 * order their articles come in: articles taken in a scrambled order leave
 * room that the next offers use (squeezed out of a full ring); at the
 * peer's max-outstanding-offers the next offers are deferred, never
 * forgotten; a drop releases every offer still live. */
START_TEST(offers_found_by_key)
{
	enum { CAP = 64, FIRST = 60, TAKEN = 30, MORE = 30, OVER = 10 };
	struct fg_th_conn *c;
	char id[64];
	unsigned i, n;

	teardown();
	setup_with("[session]\nmax-pending-commands 64\n"
		   "[peer gamma]\naddress 127.0.0.3\nmax-outstanding-offers 64\n", NULL);
	c = fg_th_open_greeted(&T, "gamma");
	for (i = 0; i < FIRST; i++) {
		snprintf(id, sizeof(id), "CHECK <k%u@x.example>\r\n", i);
		line(c, id);
		fg_th_pump(&T, 0);
	}
	fg_th_settle(&T, MS, 100);
	/* every other one, in a scrambled order (a stride prime to FIRST) */
	for (i = 0, n = 0; n < TAKEN; i = (i + 7) % FIRST) {
		if (i % 2)
			continue;
		take_accepted(c, "k", i);
		n++;
	}
	for (i = FIRST; i < FIRST + MORE; i++) {
		snprintf(id, sizeof(id), "CHECK <k%u@x.example>\r\n", i);
		line(c, id);
		fg_th_pump(&T, 0);
	}
	fg_th_settle(&T, MS, 100);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING), 0);
	/* 60 live of 64: of ten more, four are granted and six deferred */
	fg_th_out_clear(c);
	for (i = FIRST + MORE; i < FIRST + MORE + OVER; i++) {
		snprintf(id, sizeof(id), "CHECK <k%u@x.example>\r\n", i);
		line(c, id);
		fg_th_pump(&T, 0);
	}
	fg_th_settle(&T, MS, 100);
	expect(c, "238 <k90@x.example>\r\n238 <k91@x.example>\r\n238 <k92@x.example>\r\n"
		  "238 <k93@x.example>\r\n431 <k94@x.example>\r\n431 <k95@x.example>\r\n"
		  "431 <k96@x.example>\r\n431 <k97@x.example>\r\n431 <k98@x.example>\r\n"
		  "431 <k99@x.example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING),
			  FIRST - TAKEN + MORE + OVER - CAP);
	for (i = 0, n = 0; i < FIRST + MORE + OVER; i++) {
		snprintf(id, sizeof(id), "<k%u@x.example>", i);
		n += fg_th_state(&T, id) == FG_HISTORY_OFFERED;
	}
	ck_assert_uint_eq(n, CAP);
	fg_th_drop(c);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_OFFERS_RELEASED), CAP);
	for (i = 0; i < FIRST + MORE + OVER; i++) {
		snprintf(id, sizeof(id), "<k%u@x.example>", i);
		if (i < FIRST && i % 2 == 0)
			ck_assert_int_eq(fg_th_state(&T, id), FG_HISTORY_ACCEPTED);
		else
			ck_assert_int_eq(fg_th_state(&T, id), FG_HISTORY_ABSENT);
	}
}
END_TEST

/* CHECKs of new IDs i0..i1-1 on c, pumped one at a time; the answers must
 * be `want` (238 or 431) each. */
static void checks_answered(struct fg_th_conn *c, const char *tag, unsigned i0, unsigned i1,
			    unsigned want)
{
	char cmd[64], exp[64];

	for (unsigned i = i0; i < i1; i++) {
		snprintf(cmd, sizeof(cmd), "CHECK <%s%u@x.example>\r\n", tag, i);
		snprintf(exp, sizeof(exp), "%u <%s%u@x.example>\r\n", want, tag, i);
		line(c, cmd);
		fg_th_pump(&T, 0);
		expect(c, exp);
	}
}

/* At the bound: the article `art` (freed here) for the session's offer `id`
 * is answered `code`, and frees exactly one place: new ID n<i> gets 238,
 * n<i+1> 431. */
static void frees_one_place(struct fg_th_conn *c, const char *id, char *art, const char *code,
			    unsigned i)
{
	char want[128];

	takethis(c, id, art, 0);
	fg_th_settle(&T, MS, 100);
	snprintf(want, sizeof(want), "%s %s\r\n", code, id);
	expect(c, want);
	free(art);
	checks_answered(c, "n", i, i + 1, 238);
	checks_answered(c, "n", i + 1, i + 2, 431);
}

/*
 * max-outstanding-offers (offers.c, "The bound"): a session of peer gamma
 * (bound 8) gets exactly eight 238s for new IDs while none is followed by
 * its article, then 431 (IHAVE 436), each counted once as
 * nntp_defer_outstanding, the thread's and the peer's, and the deferred
 * IDs stay free in the history; a known ID is still refused. Another
 * session of the same peer and another peer are not held back. A
 * TAKETHIS, an article refused and the offer timeout each free places.
 */
START_TEST(offers_bounded_per_session)
{
	enum { BOUND = 8, GAMMA = 2 };
	struct fg_th_conn *g, *g2, *a;
	char *art;

	teardown();
	setup_with("[peer gamma]\naddress 127.0.0.3\nmax-outstanding-offers 8\n", NULL);
	g = fg_th_open_greeted(&T, "gamma");
	g2 = fg_th_open_greeted(&T, "gamma");
	a = peer();
	art = article("<known@x.example>");
	takethis(a, "<known@x.example>", art, 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "239 <known@x.example>\r\n");
	free(art);

	checks_answered(g, "g", 0, BOUND, 238);
	checks_answered(g, "g", BOUND, BOUND + 3, 431);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING), 3);
	ck_assert_uint_eq(T.peer_stats[GAMMA].s.ctr[FG_CTR_NNTP_DEFER_OUTSTANDING], 3);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_HISTORY_FULL), 0);
	ck_assert_int_eq(fg_th_state(&T, "<g7@x.example>"), FG_HISTORY_OFFERED);
	ck_assert_int_eq(fg_th_state(&T, "<g8@x.example>"), FG_HISTORY_ABSENT);
	/* at the bound: a known ID is refused as ever; IHAVE is deferred */
	line(g, "CHECK <known@x.example>\r\nIHAVE <gi@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(g, "438 <known@x.example>\r\n436 Try again later\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING), 4);
	/* the same peer's other session and another peer: their own places */
	checks_answered(g2, "h", 0, BOUND, 238);
	checks_answered(a, "a", 0, 3 * BOUND, 238);
	checks_answered(g2, "h", BOUND, BOUND + 1, 431);
	/* the deferred IDs were never held: another peer gets them */
	checks_answered(a, "g", BOUND, BOUND + 3, 238);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING), 5);

	/* a TAKETHIS of one of its offers frees one place; so does one
	 * whose article is refused (too old, remembered) */
	frees_one_place(g, "<g3@x.example>", article("<g3@x.example>"), "239", 0);
	frees_one_place(g, "<g4@x.example>",
			article_x("<g4@x.example>", "<g4@x.example>", 30 * 86400, 30 * 86400, NULL,
				  "b\r\n"), "439", 2);
	/* offer-timeout (10 s) later every place is free again */
	T.now += 9;
	checks_answered(g, "t", 0, 1, 431);
	T.now += 1;
	checks_answered(g, "t", 1, 1 + BOUND, 238);
	checks_answered(g, "t", 1 + BOUND, 2 + BOUND, 431);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_OUTSTANDING), 9);
	ck_assert_uint_eq(T.peer_stats[GAMMA].s.ctr[FG_CTR_NNTP_DEFER_OUTSTANDING], 9);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_HISTORY_FULL), 0);
}
END_TEST

/* A session that offers an ID again after its first offer lapsed, then
 * sends its article: both offers leave the list, so both places are free
 * (the lapsed one, found first by key, must not hide the live one). */
START_TEST(offers_reoffer_after_lapse)
{
	struct fg_th_conn *g;

	teardown();
	setup_with("[peer gamma]\naddress 127.0.0.3\nmax-outstanding-offers 3\n", NULL);
	g = fg_th_open_greeted(&T, "gamma");
	checks_answered(g, "x", 0, 1, 238);
	T.now += 10;				/* offer-timeout: lapsed */
	checks_answered(g, "x", 0, 1, 238);	/* taken again: two in the list */
	take_accepted(g, "x", 0);
	expect(g, "239 <x0@x.example>\r\n");
	checks_answered(g, "y", 0, 3, 238);
	checks_answered(g, "y", 3, 4, 431);
	fg_th_drop(g);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_OFFERS_RELEASED), 3);
}
END_TEST

/* Past max(64, max-pending-commands) live offers the ring grows to the
 * bound (offers.c step 4), every offer still found by key. */
START_TEST(offers_ring_grows_to_the_bound)
{
	enum { BOUND = 300 };
	struct fg_th_conn *g;

	teardown();
	setup_with("[session]\nmax-pending-commands 16\n"
		   "[peer gamma]\naddress 127.0.0.3\nmax-outstanding-offers 300\n", NULL);
	g = fg_th_open_greeted(&T, "gamma");
	checks_answered(g, "r", 0, BOUND, 238);
	checks_answered(g, "r", BOUND, BOUND + 2, 431);
	/* the first, the middle, the last: found, taken, one place each */
	for (unsigned i = 0; i < BOUND; i += BOUND / 2 - 1) {
		take_accepted(g, "r", i);
	}
	fg_th_out_clear(g);
	checks_answered(g, "s", 0, 3, 238);
	checks_answered(g, "s", 3, 4, 431);
	fg_th_drop(g);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_OFFERS_RELEASED), BOUND);
	ck_assert_int_eq(fg_th_state(&T, "<r1@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_th_state(&T, "<s2@x.example>"), FG_HISTORY_ABSENT);
}
END_TEST

START_TEST(oversize_drained)
{
	struct fg_th_conn *c;
	char *body = malloc(20000), *art;
	struct fg_sink_mem_stats st;

	teardown();
	setup_with("[rules]\nmax-article-size 4000\n", NULL);
	c = peer();
	for (int i = 0; i < 20000 - 1; i++)
		body[i] = (i % 70 == 69) ? '\n' : 'o';
	for (int i = 68; i < 20000 - 1; i += 70)
		body[i] = '\r';
	body[19999] = '\0';
	body[19998] = '\n';
	body[19997] = '\r';
	art = article_x("<big@x.example>", "<big@x.example>", 3600, 3000, NULL, body);
	takethis(c, "<big@x.example>", art, 1000);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <big@x.example>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_OVERSIZE], 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DRAINED_OVERSIZE), 1);
	fg_sink_mem_stats(T.sink, &st);
	ck_assert_uint_le(st.appended_bytes, 4000);
	ck_assert_uint_eq(st.discarded, 1);
	free(body);
	free(art);
}
END_TEST

/* ------------------------------------------------------------ limits and back-pressure */

START_TEST(output_backpressure)
{
	struct fg_th_conn *c;
	char buf[64];

	teardown();
	setup_with("[session]\nmax-pending-commands 16\n", NULL);
	c = peer();
	c->send_blocked = true;
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "CHECK <bp%d@x.example>\r\n", i);
		line(c, buf);
	}
	fg_th_pump(&T, 0);
	/* the peer reads nothing: the session stops reading at the limit */
	ck_assert(c->paused);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_CHECK], 16);
	ck_assert_uint_ge(fg_th_ctr(&T, FG_CTR_NNTP_STALL_RESPONSES), 1);
	fg_th_unblock(c);
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_CHECK], 100);
	ck_assert_uint_eq(T.stats.n.code[FG_NNTP_CODE_C238], 100);
	ck_assert(!c->paused);
}
END_TEST

START_TEST(pending_bytes_backpressure)
{
	struct fg_th_conn *c;
	char *body = malloc(70001), id[64], *arts[8];

	teardown();
	setup_with("[session]\nmax-pending-bytes 100000\n", NULL);
	c = peer();
	fg_sink_mem_set_delay(T.sink, 100 * MS);
	memset(body, 'z', 70000);
	body[69998] = '\r';
	body[69999] = '\n';
	body[70000] = '\0';
	for (int i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "<pb%d@x.example>", i);
		arts[i] = article_x(id, id, 3600, 3000, NULL, body);
		takethis(c, id, arts[i], 0);
	}
	fg_th_pump(&T, 0);
	/* two articles are waiting for the sink: over 100000 octets, stop */
	ck_assert(c->paused);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_TAKETHIS], 2);
	fg_th_settle(&T, 20 * MS, 200);
	expect(c, "239 <pb0@x.example>\r\n239 <pb1@x.example>\r\n239 <pb2@x.example>\r\n"
		  "239 <pb3@x.example>\r\n");
	for (int i = 0; i < 4; i++)
		free(arts[i]);
	free(body);
}
END_TEST

START_TEST(journal_full_defers)
{
	struct fg_th_conn *c = peer();
	char *a1 = article("<j1@x.example>"), *a2 = article("<j2@x.example>");

	T.journal_full = true;
	takethis(c, "<j1@x.example>", a1, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <j1@x.example>\r\n");
	ck_assert_uint_eq(T.n_journal, 0);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_JOURNAL_RETRIES), 1);
	/* the backlog holds: new offers wait, TAKETHIS stops reading */
	line(c, "CHECK <j3@x.example>\r\n");
	takethis(c, "<j2@x.example>", a2, 0);
	fg_th_pump(&T, MS);
	expect(c, "431 <j3@x.example>\r\n");
	ck_assert(c->paused);
	T.journal_full = false;
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <j2@x.example>\r\n");
	ck_assert_uint_eq(T.n_journal, 2);
	ck_assert_str_eq(T.journal_id[0], "<j1@x.example>");
	ck_assert_int_eq(T.journal[0].state, FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(T.journal[0].first_seen, T.now);
	ck_assert_int_eq(T.journal[0].article_date, T.now - 3000);
	free(a1);
	free(a2);
}
END_TEST

START_TEST(sink_full_stalls_takethis)
{
	struct fg_th_conn *c = peer();
	char *a1 = article("<sf@x.example>");

	fg_sink_mem_set_full(T.sink, true);
	line(c, "CHECK <sf@x.example>\r\nIHAVE <sg@x.example>\r\n");
	takethis(c, "<sf@x.example>", a1, 0);
	fg_th_pump(&T, MS);
	/* CHECK -> 431, IHAVE -> 436, TAKETHIS: never 431, stop reading */
	expect(c, "431 <sf@x.example>\r\n436 Try again later\r\n");
	ck_assert(c->paused);
	fg_sink_mem_set_full(T.sink, false);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <sf@x.example>\r\n");
	free(a1);
}
END_TEST

START_TEST(idle_timeout)
{
	struct fg_th_conn *c = peer();

	line(c, "MODE STREAM\r\n");
	fg_th_pump(&T, 0);
	expect(c, "203 Streaming permitted\r\n");
	T.now_ns += 601ull * 1000000000ull;
	fg_th_pump(&T, 0);
	expect(c, "400 Idle timeout, closing connection\r\n");
	ck_assert(c->closed_reported);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_IDLE_TIMEOUTS), 1);
}
END_TEST

START_TEST(max_connections)
{
	struct fg_th_conn *c, *d;

	teardown();
	setup_with("[peer gamma]\naddress 127.0.0.3\nmax-connections 1\n", NULL);
	c = fg_th_open(&T, "gamma");
	d = fg_th_open(&T, "gamma");
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), GREETING);
	ck_assert_str_eq(fg_th_out(d), "400 Too many connections from this peer, try again later\r\n");
	ck_assert(d->closed_reported);
}
END_TEST

/* ------------------------------------------------------------ clock, versions, supersedes */

START_TEST(clock_suspect_never_stalls)
{
	struct fg_th_conn *c = peer();
	char id[64], *art;

	/* every article looks 3 h old on arrival: our clock is ahead (the view
	 * judges from FG_CLOCK_MIN_SAMPLES articles on) */
	for (int i = 0; i < 1030; i++) {
		snprintf(id, sizeof(id), "<ck%d@x.example>", i);
		art = article_x(id, id, 4 * 3600, 3 * 3600, NULL, "b\r\n");
		takethis(c, id, art, 0);
		free(art);
		if (i % 100 == 99)
			fg_th_settle(&T, MS, 100);
	}
	fg_th_settle(&T, MS, 100);
	ck_assert(fg_nntp_engine_clock_suspect(T.e));
	ck_assert_int_eq(fg_nntp_engine_clock_offset(T.e), 3 * 3600);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_SUSPECT_ENTERED), 1);
	fg_th_out_clear(c);
	/* a CHECK answer depends on history alone: known refused, new wanted */
	line(c, "CHECK <ck0@x.example>\r\nCHECK <edge@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(c, "438 <ck0@x.example>\r\n238 <edge@x.example>\r\n");
	fg_th_out_clear(c);
	/* too old by our clock (cutoff + 1 h), not at the time the view
	 * estimates (cutoff - 2 h): passed on */
	art = article_x("<edge@x.example>", "<edge@x.example>", 10 * 86400 + 3600,
			10 * 86400 + 3600, NULL, "b\r\n");
	takethis(c, "<edge@x.example>", art, 0);
	free(art);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <edge@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<edge@x.example>"), FG_HISTORY_ACCEPTED);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_PASSED), 1);
	fg_th_out_clear(c);
	/* too old at either time: refused, never 400, never remembered */
	art = article_x("<ancient@x.example>", "<ancient@x.example>", 30 * 86400, 30 * 86400, NULL,
			"b\r\n");
	takethis(c, "<ancient@x.example>", art, 0);
	free(art);
	fg_th_settle(&T, MS, 100);
	expect(c, "439 <ancient@x.example>\r\n");
	ck_assert(!c->closed_reported);
	ck_assert_int_eq(fg_th_state(&T, "<ancient@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_NOT_REMEMBERED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_PASSED), 1);
	ck_assert_uint_eq(T.stats.n.arrival_delay.count, 1032);
	ck_assert_uint_eq(T.stats.n.injection_delay.count, 1032);
	/* the clock is set right: the next fresh article clears the view */
	fg_th_out_clear(c);
	art = article_x("<now@x.example>", "<now@x.example>", 60, 0, NULL, "b\r\n");
	takethis(c, "<now@x.example>", art, 0);
	free(art);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <now@x.example>\r\n");
	ck_assert(!fg_nntp_engine_clock_suspect(T.e));
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_SUSPECT_CLEARED), 1);
	/* and a date verdict is remembered again */
	art = article_x("<old2@x.example>", "<old2@x.example>", 30 * 86400, 30 * 86400, NULL,
			"b\r\n");
	takethis(c, "<old2@x.example>", art, 0);
	free(art);
	fg_th_settle(&T, MS, 100);
	ck_assert_int_eq(fg_th_state(&T, "<old2@x.example>"), FG_HISTORY_REJECTED);
}
END_TEST

/* An Injection-Date with a guessed or misread zone is no clock sample. */
START_TEST(clock_untrusted_dates_not_sampled)
{
	struct fg_th_conn *c = peer();
	char id[64], date[64], extra[128], *art;

	fg_date_format(T.now - 3 * 3600, date, sizeof(date));
	date[strlen(date) - 6] = '\0';		/* "... 16:02:50": no zone */
	snprintf(extra, sizeof(extra), "Injection-Date: %s\r\n", date);
	for (int i = 0; i < 1030; i++) {
		snprintf(id, sizeof(id), "<nz%d@x.example>", i);
		art = article_x(id, id, 4 * 3600, -1, extra, "b\r\n");
		takethis(c, id, art, 0);
		free(art);
		if (i % 100 == 99)
			fg_th_settle(&T, MS, 100);
	}
	fg_th_settle(&T, MS, 100);
	ck_assert(!fg_nntp_engine_clock_suspect(T.e));
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_CLOCK_UNTRUSTED), 1030);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_ARTICLES_ACCEPTED), 1030);
}
END_TEST

/* ------------------------------------------------------------ the operator's levers */

/* innd's throttle: open sessions answered "400 REASON" and closed, new ones
 * greeted so; `go` ends it. */
START_TEST(throttle_and_go)
{
	struct fg_th_conn *a = peer(), *b;

	ck_assert_ptr_null(fg_nntp_engine_throttled(T.e));
	ck_assert_int_eq(fg_nntp_engine_throttle(T.e, "bad\r\nline"), -EINVAL);
	ck_assert_int_eq(fg_nntp_engine_throttle(T.e, "disk full, back soon"), 0);
	ck_assert_str_eq(fg_nntp_engine_throttled(T.e), "disk full, back soon");
	fg_th_pump(&T, 0);
	expect(a, "400 disk full, back soon\r\n");
	ck_assert(a->close_called);
	b = fg_th_open(&T, "alpha");
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(b), "400 disk full, back soon\r\n");
	ck_assert(b->close_called);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_THROTTLE_CLOSED), 2);
	ck_assert_int_eq(fg_nntp_engine_throttle(T.e, NULL), 0);
	ck_assert_ptr_null(fg_nntp_engine_throttled(T.e));
	b = peer();
	line(b, "CHECK <after@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(b, "238 <after@x.example>\r\n");
}
END_TEST

/* A paused peer: new offers deferred (CHECK 431, IHAVE 436, TAKETHIS read,
 * then 400 and close), known ones refused, other peers untouched; the
 * pause ends by itself, or on resume. */
START_TEST(pause_and_resume)
{
	struct fg_th_conn *a = peer(), *b = fg_th_open(&T, "beta");
	char *art = article("<p2@x.example>"), *known = article("<k@x.example>");
	fg_time_t until;

	fg_th_pump(&T, 0);
	fg_th_out_clear(b);
	takethis(a, "<k@x.example>", known, 0);
	fg_th_settle(&T, MS, 100);
	expect(a, "239 <k@x.example>\r\n");
	ck_assert_int_eq(fg_nntp_engine_pause(T.e, "alpha", T.now + 3600), 0);
	ck_assert(fg_nntp_engine_paused(T.e, "alpha", &until) && until == T.now + 3600);
	ck_assert(!fg_nntp_engine_paused(T.e, "beta", NULL));
	line(a, "CHECK <p1@x.example>\r\nCHECK <k@x.example>\r\nIHAVE <p3@x.example>\r\n");
	line(b, "CHECK <p1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "431 <p1@x.example>\r\n438 <k@x.example>\r\n436 Try again later\r\n");
	expect(b, "238 <p1@x.example>\r\n");
	takethis(a, "<p2@x.example>", art, 7);
	fg_th_settle(&T, MS, 100);
	expect(a, "400 Feed paused by the operator, try again later\r\n");
	ck_assert(a->close_called);
	ck_assert_int_eq(fg_th_state(&T, "<p2@x.example>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DEFER_PAUSED), 3);
	/* the pause ends at its time by itself */
	a = peer();
	T.now += 3600;
	line(a, "CHECK <p4@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "238 <p4@x.example>\r\n");
	ck_assert(!fg_nntp_engine_paused(T.e, "alpha", NULL));
	/* resume ends it before */
	ck_assert_int_eq(fg_nntp_engine_pause(T.e, "alpha", T.now + 60), 0);
	ck_assert_int_eq(fg_nntp_engine_pause(T.e, "alpha", 0), 0);
	ck_assert_int_eq(fg_nntp_engine_pause(T.e, "alpha", 0), -ENOENT);
	line(a, "CHECK <p5@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(a, "238 <p5@x.example>\r\n");
	free(art);
	free(known);
}
END_TEST

/* INN's refusecybercancels: <cancel.*> IDs refused at every command,
 * counted per peer; off by default. */
START_TEST(cyber_cancels)
{
	struct fg_th_conn *c = peer();
	char *art = article("<cancel.2@x.example>");

	line(c, "CHECK <cancel.1@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(c, "238 <cancel.1@x.example>\r\n");
	teardown();
	setup_with("[rules]\nrefuse-cyber-cancels on\n", NULL);
	c = peer();
	line(c, "CHECK <cancel.1@x.example>\r\nIHAVE <cancel.3@x.example>\r\n"
		"CHECK <cancelled@x.example>\r\n");
	takethis(c, "<cancel.2@x.example>", art, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "438 <cancel.1@x.example>\r\n435 Article not wanted\r\n"
		  "238 <cancelled@x.example>\r\n439 <cancel.2@x.example>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_CYBER_CANCEL], 3);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_DRAINED_KNOWN), 1);
	free(art);
}
END_TEST

/* Count the lines of a connection's output so far. */
static unsigned out_lines(struct fg_th_conn *c)
{
	unsigned n = 0;

	for (const char *p = fg_th_out(c); (p = strstr(p, "\r\n")) != NULL; p += 2)
		n++;
	return n;
}

/* max-offer-rate: over it the session stops reading; every answer comes,
 * in order, as the budget refills (a second's worth as burst). */
START_TEST(offer_rate_paces_a_peer)
{
	struct fg_th_conn *c, *a;
	char lines[25 * 32] = "", want[25 * 32] = "";

	teardown();
	setup_with("[peer gamma]\naddress 127.0.0.3\nmax-offer-rate 10\n", NULL);
	c = fg_th_open(&T, "gamma");
	a = peer();
	fg_th_pump(&T, 0);
	fg_th_out_clear(c);
	for (int i = 0; i < 25; i++) {
		snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines), "CHECK <r%d@x>\r\n", i);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "238 <r%d@x>\r\n", i);
	}
	line(c, lines);
	line(a, "CHECK <free@x>\r\n");
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(out_lines(c), 10);		/* the burst */
	ck_assert(c->paused);
	expect(a, "238 <free@x>\r\n");		/* other peers are not held */
	T.now_ns += 500 * MS;
	fg_th_pump(&T, 0);
	ck_assert_uint_eq(out_lines(c), 15);
	T.now_ns += 1000 * MS;
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), want);		/* every answer, in order */
	ck_assert_uint_ge(fg_th_ctr(&T, FG_CTR_NNTP_STALL_RATE), 1);
}
END_TEST

/* max-byte-rate: what was read is a debt; an article arrives at the rate,
 * and is answered as any other. */
START_TEST(byte_rate_paces_a_peer)
{
	struct fg_th_conn *c;
	char *art = article_x("<big@x.example>", "<big@x.example>", 3600, 3000, NULL,
			      "0123456789012345678901234567890123456789\r\n"
			      "0123456789012345678901234567890123456789\r\n");
	size_t len = strlen(art) + strlen("TAKETHIS <big@x.example>\r\n");
	uint64_t t0;

	teardown();
	setup_with("[peer gamma]\naddress 127.0.0.3\nmax-byte-rate 100\n", NULL);
	c = fg_th_open(&T, "gamma");
	fg_th_pump(&T, 0);
	fg_th_out_clear(c);
	ck_assert_uint_gt(len, 300);
	takethis(c, "<big@x.example>", art, 50);
	t0 = T.now_ns;
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "");		/* 100 octets read, then a stop */
	for (int i = 0; i < 20 && !strstr(fg_th_out(c), "239"); i++) {
		T.now_ns += 500 * MS;
		fg_th_settle(&T, MS, 10);
	}
	expect(c, "239 <big@x.example>\r\n");
	/* at 100 octets a second, len octets take (len - 100) / 100 s at least */
	ck_assert_uint_ge(T.now_ns - t0, (len - 100 - 50) * 10 * MS);
	ck_assert_uint_ge(fg_th_ctr(&T, FG_CTR_NNTP_STALL_RATE), 1);
	free(art);
}
END_TEST

START_TEST(supersedes_and_versions)
{
	struct fg_th_conn *c;
	char *a1, *a2;

	teardown();
	setup_with("[rules]\nhonor-supersedes on\nhonor-versions on\n", NULL);
	c = peer();
	a1 = article_x("<new@x.example>", "<new@x.example>", 3600, 3000,
		       "Supersedes: <old@x.example>\r\n", "b\r\n");
	a2 = article_x("<faq$v=3$abc@x.example>", "<faq$v=3$abc@x.example>", 3600, 3000, NULL,
		       "b\r\n");
	takethis(c, "<new@x.example>", a1, 0);
	takethis(c, "<faq$v=3$abc@x.example>", a2, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <new@x.example>\r\n239 <faq$v=3$abc@x.example>\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<old@x.example>"), FG_HISTORY_SUPERSEDED);
	line(c, "CHECK <old@x.example>\r\nCHECK <faq$v=2$zzz@x.example>\r\n"
		"CHECK <faq$v=4$q@x.example>\r\n");
	fg_th_pump(&T, 0);
	expect(c, "438 <old@x.example>\r\n438 <faq$v=2$zzz@x.example>\r\n"
		  "238 <faq$v=4$q@x.example>\r\n");
	ck_assert_uint_eq(T.stats.s.rejected[FG_REASON_SUPERSEDED], 2);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_SUPERSEDES_HONORED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_VERSIONS_NOTED), 1);
	ck_assert_uint_eq(T.n_journal, 3);
	free(a1);
	free(a2);
}
END_TEST

/* ------------------------------------------------------------ holds, verdicts */

START_TEST(holds_survive_until_done)
{
	struct fg_sink_mem_params sp = { .hold = true, .store_limit = 1 << 20, .delay_ns = 30 * MS };
	struct fg_th_conn *c;
	char *art;
	const struct fg_sink_mem_article *m;
	uint64_t rng = 7;

	teardown();
	setup_with(NULL, &sp);
	c = peer();
	art = article("<hold@x.example>");
	line(c, "TAKETHIS <hold@x.example>\r\n");
	fg_th_send_random(c, art, strlen(art), 9, &rng);
	fg_th_pump(&T, 0);
	ck_assert_int_gt(c->holds, 0);
	fg_th_settle(&T, 10 * MS, 100);
	expect(c, "239 <hold@x.example>\r\n");
	ck_assert_int_eq(c->holds, 0);
	m = fg_sink_mem_find(T.sink, "<hold@x.example>", 16);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m->text);
	/* intact: the held buffers were not released (poisoned) before done */
	ck_assert_ptr_nonnull(strstr((const char *)m->text, "Hello.\r\n.dot line\r\n"));
	ck_assert_ptr_null(memchr(m->text, 0xdd, m->text_len));
	ck_assert_uint_gt(fg_th_ctr(&T, FG_CTR_NNTP_SINK_HOLDS), 0);
	free(art);
}
END_TEST

START_TEST(verdicts_logged)
{
	struct fg_th_conn *c = peer(), *quiet = peer();
	struct fg_endpoint remote;
	char *art = article("<vd@x.example>");

	/* a session its transport never told of its remote logs none */
	line(quiet, "CHECK <vq@x.example>\r\n");
	fg_th_settle(&T, MS, 100);
	ck_assert_uint_eq(T.n_verdicts, 1);
	ck_assert_str_eq(T.last_verdict_id, "<vq@x.example>");
	ck_assert_ptr_null(T.last_verdict.remote);
	T.n_verdicts = 0;
	T.verdict_codes[238] = 0;
	ck_assert_int_eq(fg_parse_endpoint("[2001:db8::5]:40555", 0, &remote), 0);
	fg_nntp_session_set_remote(c->s, &remote);
	line(c, "CHECK <vd@x.example>\r\n");
	takethis(c, "<vd@x.example>", art, 0);
	fg_th_settle(&T, MS, 100);
	ck_assert_uint_eq(T.n_verdicts, 2);
	ck_assert_uint_eq(T.verdict_codes[238], 1);
	ck_assert_uint_eq(T.verdict_codes[239], 1);
	ck_assert_str_eq(T.last_verdict_id, "<vd@x.example>");
	ck_assert_str_eq(T.last_verdict.peer_name, "alpha");
	ck_assert_ptr_nonnull(T.last_verdict.remote);
	ck_assert_int_eq(T.last_verdict.remote->family, AF_INET6);
	ck_assert_uint_eq(T.last_verdict.remote->port, 40555);
	ck_assert(memcmp(T.last_verdict.remote->addr, remote.addr, 16) == 0);
	ck_assert(T.last_verdict.has_date && T.last_verdict.has_injection_date);
	ck_assert_int_eq(T.last_verdict.injection_date, T.now - 3000);
	ck_assert_int_eq(T.last_verdict.date, T.now - 3600);
	ck_assert_uint_eq(T.peer_stats[0].n.code[FG_NNTP_CODE_C239], 1);
	ck_assert_uint_eq(T.peer_stats[1].n.code[FG_NNTP_CODE_C239], 0);
	free(art);
}
END_TEST

/* ------------------------------------------------------------ AUTHINFO (RFC 4643) */

#define CAPS_AUTH "101 Capability list:\r\nVERSION 2\r\nAUTHINFO USER\r\n" \
		  "IMPLEMENTATION floodgate 0.1\r\n.\r\n"
#define CAPS "101 Capability list:\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n" \
	     "IMPLEMENTATION floodgate 0.1\r\n.\r\n"
#define L480 "480 Authentication required for command\r\n"
#define L481 "481 Authentication failed\r\n"

static char cred_gamma[96], cred_delta[96];

/* Send `text`, deliver, and the answers are exactly `want`. */
static void exchange(struct fg_th_conn *c, const char *text, const char *want)
{
	line(c, text);
	fg_th_pump(&T, 0);
	expect(c, want);
}

/* alpha and beta as always; gamma with a username and a password (one
 * with a blank), delta with a password alone (any username). */
static void setup_auth(void)
{
	char extra[512];

	fg_th_cred_file(cred_gamma, sizeof(cred_gamma), "gamma",
		   "username feeder-g\npassword \"open sesame\"\n");
	fg_th_cred_file(cred_delta, sizeof(cred_delta), "delta", "password pw-delta\n");
	snprintf(extra, sizeof(extra), "[peer gamma]\naddress 127.0.0.3\ncredentials %s\n"
		 "[peer delta]\naddress 127.0.0.4\ncredentials %s\n", cred_gamma, cred_delta);
	setup_with(extra, NULL);
}

static void teardown_auth(void)
{
	teardown();
	unlink(cred_gamma);
	unlink(cred_delta);
}

static uint64_t peer_ctr(const char *name, enum fg_counter c)
{
	const struct fg_config_peer *p = fg_config_peer_by_name(T.cfg, name);

	ck_assert_ptr_nonnull(p);
	return T.peer_stats[p - T.cfg->peer].s.ctr[c];
}

/* Before its credentials a peer offers nothing: CHECK and IHAVE 480, a
 * TAKETHIS's article read to its end, then 480; the rest as usual. After
 * 281 it is a peer like any other, and AUTHINFO is refused. */
START_TEST(auth_then_offers)
{
	struct fg_th_conn *c = peer_named("gamma");
	char *art = article("<t1@auth.test>");

	exchange(c, "CAPABILITIES\r\nMODE STREAM\r\nCHECK <c1@auth.test>\r\nIHAVE <i1@auth.test>\r\n",
		 CAPS_AUTH "203 Streaming permitted\r\n" L480 L480);
	takethis(c, "<t1@auth.test>", art, 7);
	exchange(c, "HELP me\r\n",
		 L480 "501 Syntax error\r\n");
	ck_assert_int_eq(fg_th_state(&T, "<c1@auth.test>"), FG_HISTORY_ABSENT);
	ck_assert_int_eq(fg_th_state(&T, "<t1@auth.test>"), FG_HISTORY_ABSENT);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_REQUIRED), 3);
	ck_assert_uint_eq(peer_ctr("gamma", FG_CTR_NNTP_AUTH_REQUIRED), 3);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_OFFERS), 0);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_CHECK], 1);
	ck_assert_uint_eq(T.stats.n.code[FG_NNTP_CODE_C480], 3);
	/* innfeed's exchange, the subcommand in any case */
	exchange(c, "AUTHINFO USER feeder-g\r\nauthinfo pass open sesame\r\n",
		 "381 Password required\r\n281 Authentication accepted\r\n");
	exchange(c, "CAPABILITIES\r\nCHECK <c1@auth.test>\r\nAUTHINFO USER feeder-g\r\n"
		"AUTHINFO PASS open sesame\r\n",
		 CAPS "238 <c1@auth.test>\r\n502 Already authenticated\r\n"
		  "502 Already authenticated\r\n");
	takethis(c, "<t1@auth.test>", art, 0);
	fg_th_pump(&T, 0);
	fg_th_settle(&T, MS, 100);
	expect(c, "239 <t1@auth.test>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_ACCEPTED), 1);
	ck_assert_uint_eq(peer_ctr("gamma", FG_CTR_NNTP_AUTH_ACCEPTED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_FAILED), 0);
	free(art);
}
END_TEST

/* Every refusal: syntax, sequence, a wrong name, a wrong password, a
 * right one after wrong ones, the argument's blanks. */
START_TEST(auth_refusals)
{
	struct fg_th_conn *c = peer_named("gamma");
	char longuser[400];

	exchange(c, "AUTHINFO\r\nAUTHINFO USER\r\nAUTHINFO USER \r\nAUTHINFO SASL PLAIN\r\n"
		"AUTHINFO GENERIC x\r\n",
		 "501 Syntax error\r\n501 Syntax error\r\n501 Syntax error\r\n"
		  "501 Syntax error\r\n501 Syntax error\r\n");
	/* RFC 4643 2.3.2: PASS first */
	exchange(c, "AUTHINFO PASS open sesame\r\n",
		 "482 Authentication commands issued out of sequence\r\n");
	/* a name longer than any (within max-line): 381 as any, 481 at PASS */
	memset(longuser, 'u', sizeof(longuser));
	memcpy(longuser, "AUTHINFO USER feeder-g", 22);
	memcpy(longuser + 300, "\r\n", 3);
	line(c, longuser);
	exchange(c, "AUTHINFO PASS open sesame\r\n",
		 "381 Password required\r\n" L481);
	/* the password is the rest of the line: a second blank or a trailing
	 * one is part of it; the right one after two wrong ones still works */
	exchange(c, "AUTHINFO USER feeder-g\r\nAUTHINFO PASS  open sesame\r\n",
		 "381 Password required\r\n" L481);
	/* after a 481, PASS again without USER */
	exchange(c, "AUTHINFO PASS open sesame\r\nCHECK <r1@auth.test>\r\n",
		 "482 Authentication commands issued out of sequence\r\n" L480);
	exchange(c, "AUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame\r\nCHECK <r1@auth.test>\r\n",
		 "381 Password required\r\n281 Authentication accepted\r\n"
		  "238 <r1@auth.test>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_FAILED), 2);
	ck_assert_uint_eq(peer_ctr("gamma", FG_CTR_NNTP_AUTH_FAILED), 2);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_ACCEPTED), 1);
	ck_assert_uint_eq(T.stats.n.code[FG_NNTP_CODE_C482], 2);
	ck_assert_uint_eq(T.stats.n.verb[FG_NNTP_VERB_AUTHINFO], 13);
	ck_assert(!c->close_called);

	/* a line past max-line is refused as a line, not as a password */
	c = peer_named("gamma");
	{
		char big[700];

		memset(big, 'p', sizeof(big));
		memcpy(big, "AUTHINFO PASS ", 14);
		memcpy(big + 600, "\r\n", 3);
		line(c, "AUTHINFO USER feeder-g\r\n");
		line(c, big);
	}
	fg_th_pump(&T, 0);
	expect(c, "381 Password required\r\n501 Line too long\r\n");
	/* NUL in the line: 501, never a comparison */
	fg_th_send(c, "AUTHINFO PASS open\0sesame\r\n", 27, 0);
	fg_th_pump(&T, 0);
	expect(c, "501 Invalid character in command line\r\n");
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_FAILED), 2);
}
END_TEST

/* The third wrong PASS of a session closes it (RFC 4643 6); a trailing
 * blank or a wrong name each make a wrong try. */
START_TEST(auth_third_failure_closes)
{
	struct fg_th_conn *c = peer_named("gamma");

	exchange(c, "AUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame \r\n"
		"AUTHINFO USER feeder-x\r\nAUTHINFO PASS open sesame\r\n"
		"AUTHINFO USER feeder-g\r\nAUTHINFO PASS open-sesame\r\n"
		"AUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame\r\n",
		 "381 Password required\r\n" L481 "381 Password required\r\n" L481
		  "381 Password required\r\n481 Authentication failed, closing connection\r\n");
	ck_assert(c->close_called && c->closed_reported);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_FAILED), 3);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_CLOSED), 1);
	ck_assert_uint_eq(peer_ctr("gamma", FG_CTR_NNTP_AUTH_CLOSED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_ACCEPTED), 0);
	/* a new session starts afresh */
	c = peer_named("gamma");
	exchange(c, "AUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame\r\n",
		 "381 Password required\r\n281 Authentication accepted\r\n");
}
END_TEST

/* A file without a username takes any (innd's incoming.conf); a peer
 * without credentials gets 502 and offers at once; the address decides
 * the peer before any credentials: a non-peer gets 502 at the greeting. */
START_TEST(auth_any_user_and_no_credentials)
{
	struct fg_th_conn *c = peer_named("delta"), *a;

	exchange(c, "AUTHINFO USER whoever\r\nAUTHINFO PASS pw-delta\r\nCHECK <d1@auth.test>\r\n",
		 "381 Password required\r\n281 Authentication accepted\r\n"
		  "238 <d1@auth.test>\r\n");
	/* gamma's password on delta's address is delta's wrong password */
	c = peer_named("delta");
	exchange(c, "AUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame\r\n",
		 "381 Password required\r\n" L481);
	a = peer_named("alpha");
	line(c, "QUIT\r\n");
	exchange(a, "CAPABILITIES\r\nAUTHINFO USER feeder-g\r\nAUTHINFO PASS open sesame\r\n"
		"CHECK <a1@auth.test>\r\n",
		 CAPS "502 No authentication needed for this peer\r\n"
		  "502 No authentication needed for this peer\r\n238 <a1@auth.test>\r\n");
	c = fg_th_open(&T, NULL);
	fg_th_pump(&T, 0);
	expect(c, "502 Not a configured peer of this transit-only server\r\n");
	ck_assert(c->close_called);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_ACCEPTED), 1);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_AUTH_FAILED), 1);
	ck_assert_uint_eq(peer_ctr("delta", FG_CTR_NNTP_AUTH_FAILED), 1);
	ck_assert_uint_eq(peer_ctr("alpha", FG_CTR_NNTP_AUTH_FAILED), 0);
}
END_TEST

static Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("responses"), *auth = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, greeting_and_not_peer);
	tcase_add_test(tc, capabilities_help_mode_quit);
	tcase_add_test(tc, mode_reader_closes);
	tcase_add_test(tc, check_paths);
	tcase_add_test(tc, check_offer_deadline);
	tcase_add_test(tc, takethis_paths);
	tcase_add_test(tc, takethis_remember_off);
	tcase_add_test(tc, takethis_empty_and_headless);
	tcase_add_test(tc, ihave_paths);
	tcase_add_test(tc, offers_first_by_peer);
	tcase_add_test(tc, sink_failure);
	tcase_add_test(tc, pipelined_delayed_in_order);
	tcase_add_test(tc, second_transfer_waits);
	tcase_add_test(tc, downstream_refusal_remembered_or_forgotten);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, eof_cases);
	tcase_add_test(tc, drop_releases_offers);
	tcase_add_test(tc, offers_found_by_key);
	tcase_add_test(tc, offers_bounded_per_session);
	tcase_add_test(tc, offers_ring_grows_to_the_bound);
	tcase_add_test(tc, offers_reoffer_after_lapse);
	tcase_add_test(tc, oversize_drained);
	tcase_add_test(tc, output_backpressure);
	tcase_add_test(tc, pending_bytes_backpressure);
	tcase_add_test(tc, journal_full_defers);
	tcase_add_test(tc, sink_full_stalls_takethis);
	tcase_add_test(tc, idle_timeout);
	tcase_add_test(tc, max_connections);
	tcase_add_test(tc, clock_suspect_never_stalls);
	tcase_add_test(tc, throttle_and_go);
	tcase_add_test(tc, pause_and_resume);
	tcase_add_test(tc, cyber_cancels);
	tcase_add_test(tc, offer_rate_paces_a_peer);
	tcase_add_test(tc, byte_rate_paces_a_peer);
	tcase_add_test(tc, clock_untrusted_dates_not_sampled);
	tcase_add_test(tc, supersedes_and_versions);
	tcase_add_test(tc, holds_survive_until_done);
	tcase_add_test(tc, verdicts_logged);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(auth, setup_auth, teardown_auth);
	tcase_add_test(auth, auth_then_offers);
	tcase_add_test(auth, auth_refusals);
	tcase_add_test(auth, auth_third_failure_closes);
	tcase_add_test(auth, auth_any_user_and_no_credentials);
	suite_add_tcase(s, auth);
	return s;
}

FG_TEST_MAIN(session_suite)
