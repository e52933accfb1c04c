/* SPDX-License-Identifier: MIT */
/*
 * test_shadow.c — shadow mode's comparison (dataplane/passive/shadow.c)
 * driven directly: floodgate's decisions as verdict records, the server's
 * half as segments, in both orders; every class with its samples and its
 * reason, a TAKETHIS after a differing CHECK, IHAVE paired by order and
 * its stages parting, a hole in the server's half and the resync after
 * it, retransmissions, a flow without its SYN, answers split across
 * segments; and the report file written and read back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/shadow.h"
#include "fgtest.h"

static struct fg_stats st;
static struct fg_shadow *sh;
static struct fg_endpoint cl;
static uint32_t sseq;		/* the server's next sequence number */

static void setup(uint16_t port)
{
	memset(&st, 0, sizeof(st));
	sh = fg_shadow_create(8, &st);
	ck_assert_ptr_nonnull(sh);
	memset(&cl, 0, sizeof(cl));
	cl.family = AF_INET;
	inet_pton(AF_INET, "198.18.0.1", cl.addr);
	cl.port = port;
	sseq = 1000;
	fg_shadow_theirs(sh, &cl, sseq - 1, FG_SHADOW_SYN, NULL, 0);
}

static void ours(enum fg_nntp_verb verb, unsigned code, enum fg_reason reason, const char *id,
		 uint64_t size)
{
	struct fg_verdict_rec r = { .remote = &cl, .verb = verb, .code = code, .reason = reason,
				    .msgid = id, .msgid_len = (uint16_t)strlen(id), .size = size };

	fg_shadow_ours(sh, &r);
}

static void theirs(const char *text)
{
	uint32_t n = (uint32_t)strlen(text);

	fg_shadow_theirs(sh, &cl, sseq, 0, (const uint8_t *)text, n);
	sseq += n;
}

static struct fg_shadow_report rep(void)
{
	struct fg_shadow_report r;

	fg_shadow_report(sh, &r);
	return r;
}

START_TEST(test_every_class)
{
	struct fg_shadow_report r;

	setup(40000);
	/* a multi-line answer's lines answer no offer, even one like "238 <x>" */
	theirs("200 innd ready\r\n101 Capability list:\r\nVERSION 2\r\n238 <a@x>\r\n"
	       "..dot\r\n.\r\n203 streaming ok\r\n");
	/* agree, ours first */
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<a@x>", 0);
	theirs("238 <a@x>\r\n");
	/* agree, theirs first; the answer split over two segments */
	theirs("438 <b");
	theirs("@x>\r\n");
	ours(FG_NNTP_VERB_CHECK, 438, FG_REASON_DUPLICATE, "<b@x>", 0);
	/* refused-took: too old here, taken there; then its TAKETHIS */
	ours(FG_NNTP_VERB_CHECK, 438, FG_REASON_TOO_OLD, "<old@x>", 0);
	theirs("238 <old@x>\r\n");
	ours(FG_NNTP_VERB_TAKETHIS, 439, FG_REASON_TOO_OLD, "<old@x>", 900);
	theirs("239 <old@x>\r\n");
	/* a TAKETHIS without CHECK refused by reason */
	theirs("239 <ng@x>\r\n");
	ours(FG_NNTP_VERB_TAKETHIS, 439, FG_REASON_UNWANTED_NEWSGROUP, "<ng@x>", 900);
	/* took-refused */
	ours(FG_NNTP_VERB_TAKETHIS, 239, FG_REASON_NONE, "<new@x>", 900);
	theirs("439 <new@x> refused\r\n");
	/* timing both ways */
	ours(FG_NNTP_VERB_CHECK, 431, FG_REASON_NONE, "<t1@x>", 0);
	theirs("238 <t1@x>\r\n");
	/* the server asked for it: its TAKETHIS is decided afresh, and classed */
	ours(FG_NNTP_VERB_TAKETHIS, 239, FG_REASON_NONE, "<t1@x>", 900);
	theirs("239 <t1@x>\r\n");
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<t2@x>", 0);
	theirs("431 <t2@x>\r\n");
	r = rep();
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 3);
	ck_assert_uint_eq(r.n[FG_SHADOW_REFUSED_TOOK], 2);
	ck_assert_uint_eq(r.refused_took[FG_REASON_TOO_OLD], 1);
	ck_assert_uint_eq(r.refused_took[FG_REASON_UNWANTED_NEWSGROUP], 1);
	ck_assert_uint_eq(r.followups, 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_TOOK_REFUSED], 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_TIMING], 2);
	ck_assert_uint_eq(r.not_compared, 0);
	ck_assert_uint_eq(r.n_samples[FG_SHADOW_REFUSED_TOOK], 2);
	ck_assert_str_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].id, "<old@x>");
	ck_assert_uint_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].ours, 438);
	ck_assert_uint_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].theirs, 238);
	ck_assert_uint_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].reason, FG_REASON_TOO_OLD);
	ck_assert_str_eq(r.samples[FG_SHADOW_REFUSED_TOOK][1].id, "<ng@x>");
	ck_assert_str_eq(r.samples[FG_SHADOW_TOOK_REFUSED][0].id, "<new@x>");
	ck_assert_str_eq(r.samples[FG_SHADOW_TIMING][0].id, "<t1@x>");
	ck_assert_str_eq(r.samples[FG_SHADOW_TIMING][1].id, "<t2@x>");
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_REFUSED_TOOK], 2);
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_AGREE], 3);
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_FLOWS], 1);
	/* an unpaired decision is counted not compared when the flow ends */
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<lost@x>", 0);
	fg_shadow_end_all(sh);
	ck_assert_uint_eq(rep().not_compared, 1);
	fg_shadow_destroy(sh);
}
END_TEST

START_TEST(test_ihave_by_order)
{
	struct fg_shadow_report r;

	setup(40001);
	theirs("200 ready\r\n");
	ours(FG_NNTP_VERB_IHAVE, 335, FG_REASON_NONE, "<i1@x>", 0);
	theirs("335 send it\r\n");
	ours(FG_NNTP_VERB_IHAVE, 235, FG_REASON_NONE, "<i1@x>", 500);
	theirs("235 thanks\r\n");
	ours(FG_NNTP_VERB_IHAVE, 435, FG_REASON_DUPLICATE, "<i2@x>", 0);
	theirs("435 have it\r\n");
	ours(FG_NNTP_VERB_IHAVE, 335, FG_REASON_NONE, "<i3@x>", 0);
	theirs("335 send it\r\n");
	theirs("437 rejected\r\n");
	ours(FG_NNTP_VERB_IHAVE, 437, FG_REASON_TOO_OLD, "<i3@x>", 500);
	/* 436 to a transfer (floodgate drained it) pairs with the transfer's
	 * answer, 436 to an offer with the offer's */
	ours(FG_NNTP_VERB_IHAVE, 335, FG_REASON_NONE, "<i5@x>", 0);
	theirs("335 send it\r\n");
	ours(FG_NNTP_VERB_IHAVE, 436, FG_REASON_NONE, "<i5@x>", 0);
	theirs("235 thanks\r\n");
	ours(FG_NNTP_VERB_IHAVE, 436, FG_REASON_NONE, "<i6@x>", 0);
	theirs("436 later\r\n");
	r = rep();
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 7);
	ck_assert_uint_eq(r.n[FG_SHADOW_TIMING], 1);
	ck_assert_str_eq(r.samples[FG_SHADOW_TIMING][0].id, "<i5@x>");
	ck_assert_uint_eq(r.n[FG_SHADOW_REFUSED_TOOK], 0);
	/* the stages part: floodgate 435, the server 335; what follows is
	 * not compared (the client sends an article floodgate never asked for) */
	ours(FG_NNTP_VERB_IHAVE, 435, FG_REASON_TOO_OLD, "<i4@x>", 0);
	theirs("335 send it\r\n");
	theirs("235 thanks\r\n");
	r = rep();
	ck_assert_uint_eq(r.n[FG_SHADOW_REFUSED_TOOK], 1);
	ck_assert_uint_eq(r.refused_took[FG_REASON_TOO_OLD], 1);
	ck_assert_str_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].id, "<i4@x>");
	ck_assert_uint_eq(r.not_compared, 1);
	fg_shadow_destroy(sh);
}
END_TEST

START_TEST(test_gap_and_resync)
{
	struct fg_shadow_report r;

	setup(40002);
	theirs("200 ready\r\n");
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<g1@x>", 0);
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<g2@x>", 0);
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<g3@x>", 0);
	theirs("238 <g1@x>\r\n");
	/* a retransmission of it changes nothing */
	sseq -= 12;
	theirs("238 <g1@x>\r\n");
	/* "238 <g2@x>\r\n238 <g" lost: a hole; the rest of that line is
	 * skipped, the next line pairs again */
	sseq += 18;
	theirs("3@x>\r\n438 <g4@x>\r\n");
	ours(FG_NNTP_VERB_CHECK, 438, FG_REASON_DUPLICATE, "<g4@x>", 0);
	r = rep();
	ck_assert_uint_eq(r.gaps, 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 2);
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_GAPS], 1);
	/* the server's FIN takes a sequence number: its last ACK is no hole */
	fg_shadow_theirs(sh, &cl, sseq, FG_SHADOW_FIN, NULL, 0);
	fg_shadow_theirs(sh, &cl, sseq + 1, 0, NULL, 0);
	fg_shadow_theirs(sh, &cl, sseq, FG_SHADOW_FIN, NULL, 0);	/* again */
	ck_assert_uint_eq(rep().gaps, 1);
	fg_shadow_end_all(sh);
	ck_assert_uint_eq(rep().not_compared, 2);	/* g2, g3 */
	/* a flow whose SYN was not seen: its answers are not cut into lines */
	cl.port = 40003;
	theirs("238 <m@x>\r\n");
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<m@x>", 0);
	r = rep();
	ck_assert_uint_eq(r.unanchored, 1);
	ck_assert_uint_eq(r.not_compared, 3);
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 2);
	fg_shadow_destroy(sh);
}
END_TEST

START_TEST(test_port_reuse_and_full_table)
{
	setup(40010);
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<r@x>", 0);
	/* the same port's next connection: the old leftovers are given up */
	fg_shadow_theirs(sh, &cl, 5000, FG_SHADOW_SYN, NULL, 0);
	ck_assert_uint_eq(rep().not_compared, 1);
	ck_assert_uint_eq(rep().flows, 2);
	/* 8 records: the ninth flow finds none free (none closed) */
	for (uint16_t p = 1; p <= 8; p++) {
		cl.port = (uint16_t)(41000 + p);
		fg_shadow_theirs(sh, &cl, 1, FG_SHADOW_SYN, NULL, 0);
	}
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_FLOWS_FULL], 1);
	/* one closes (FIN): its record is taken for the next flow */
	cl.port = 41001;
	fg_shadow_theirs(sh, &cl, 2, FG_SHADOW_FIN, NULL, 0);
	cl.port = 42000;
	fg_shadow_theirs(sh, &cl, 1, FG_SHADOW_SYN, NULL, 0);
	ck_assert_uint_eq(st.ctr[FG_CTR_SHADOW_FLOWS_FULL], 1);
	ck_assert_uint_eq(rep().flows, 2 + 7 + 1);
	fg_shadow_destroy(sh);
}
END_TEST

/* An IPv6 client and an IPv4 one on the same port are two flows. */
START_TEST(test_ipv6_flow)
{
	struct fg_endpoint v4;
	struct fg_shadow_report r;

	setup(40030);
	v4 = cl;
	memset(&cl, 0, sizeof(cl));
	cl.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::c612:1", cl.addr);
	cl.port = 40030;
	fg_shadow_theirs(sh, &cl, 77, FG_SHADOW_SYN, NULL, 0);
	sseq = 78;
	ours(FG_NNTP_VERB_CHECK, 438, FG_REASON_DUPLICATE, "<v6@x>", 0);
	theirs("438 <v6@x>\r\n");
	cl = v4;
	sseq = 1000;
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<v6@x>", 0);
	theirs("438 <v6@x>\r\n");
	r = rep();
	ck_assert_uint_eq(r.flows, 2);
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_TOOK_REFUSED], 1);
	fg_shadow_destroy(sh);
}
END_TEST

START_TEST(test_report_file)
{
	struct fg_shadow_report r, back;
	char *text = NULL;
	size_t len = 0;
	unsigned line;
	FILE *f;

	setup(40020);
	ours(FG_NNTP_VERB_CHECK, 438, FG_REASON_TOO_OLD, "<old@x>", 0);
	theirs("238 <old@x>\r\n");
	ours(FG_NNTP_VERB_CHECK, 238, FG_REASON_NONE, "<n@x>", 0);
	theirs("438 <n@x>\r\n");
	r = rep();
	f = open_memstream(&text, &len);
	ck_assert_int_eq(fg_shadow_report_write(&r, 1790000000, f), 0);
	fclose(f);
	ck_assert_int_eq(fg_shadow_report_parse(text, len, &back, &line), 0);
	ck_assert_uint_eq(back.n[FG_SHADOW_REFUSED_TOOK], 1);
	ck_assert_uint_eq(back.n[FG_SHADOW_TOOK_REFUSED], 1);
	ck_assert_uint_eq(back.refused_took[FG_REASON_TOO_OLD], 1);
	ck_assert_str_eq(back.samples[FG_SHADOW_REFUSED_TOOK][0].id, "<old@x>");
	ck_assert_uint_eq(back.samples[FG_SHADOW_REFUSED_TOOK][0].reason, FG_REASON_TOO_OLD);
	ck_assert_str_eq(back.samples[FG_SHADOW_TOOK_REFUSED][0].id, "<n@x>");
	ck_assert_int_eq(memcmp(&r, &back, sizeof(r)), 0);
	/* two workers add up */
	fg_shadow_report_add(&back, &r);
	ck_assert_uint_eq(back.n[FG_SHADOW_REFUSED_TOOK], 2);
	ck_assert_uint_eq(back.n_samples[FG_SHADOW_REFUSED_TOOK], 2);
	/* refused: a bad header, an unknown line, a bad count */
	ck_assert_int_eq(fg_shadow_report_parse("floodgate-shadow 2 1\n", 21, &back, &line), -EINVAL);
	ck_assert_uint_eq(line, 1);
	ck_assert_int_eq(fg_shadow_report_parse("floodgate-shadow 1 1\nfoo 1\n", 28, &back, &line),
			 -EINVAL);
	ck_assert_uint_eq(line, 2);
	ck_assert_int_eq(fg_shadow_report_parse("floodgate-shadow 1 1\ncount agree 1x\n", 36, &back,
						&line), -EINVAL);
	ck_assert_int_eq(fg_shadow_report_parse("", 0, &back, &line), -EINVAL);
	free(text);
	fg_shadow_destroy(sh);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("shadow");
	TCase *t = tcase_create("compare");

	tcase_add_test(t, test_every_class);
	tcase_add_test(t, test_ihave_by_order);
	tcase_add_test(t, test_gap_and_resync);
	tcase_add_test(t, test_port_reuse_and_full_table);
	tcase_add_test(t, test_ipv6_flow);
	tcase_add_test(t, test_report_file);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(suite)
