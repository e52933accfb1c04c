/* SPDX-License-Identifier: MIT */
/*
 * test_peerlim.c — a peer's limits held box-wide (dataplane/nntp/peerlim.c):
 * the buckets' arithmetic (a second's worth as burst, refills exact to the
 * millionth however often they come, the cap, a whole connection or
 * nothing, giving back), the table's names, and two engines of one box
 * sharing it as the dataplane's workers do: max-connections and the
 * connection rate hold across both, an offer rate is the box's, a
 * reload carries the counts over and gives cached budgets back.
 * test_peerlim_mt.c races threads over one table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "nntp_harness.h"

#define MS 1000000ull
#define U ((int64_t)FG_PEERLIM_UNIT)

static struct fg_config *conf(const char *text)
{
	struct fg_config_errors errs;
	struct fg_config *c = fg_config_load_text("<t>", text, strlen(text), &errs);

	ck_assert_msg(c != NULL, "%s", errs.n ? errs.err[0].text : "?");
	return c;
}

static struct fg_peerlim *table_with(const char *peers, unsigned engines, struct fg_config **out)
{
	char text[2048];
	struct fg_peerlim *pl = fg_peerlim_create(engines);

	ck_assert_ptr_nonnull(pl);
	snprintf(text, sizeof(text), "[site]\nserver-name t.example\n%s", peers);
	*out = conf(text);
	ck_assert_int_eq(fg_peerlim_add(pl, *out), 0);
	return pl;
}

/* ------------------------------------------------------------ buckets */

START_TEST(bucket_burst_refill_cap)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table_with("[peer p]\naddress 192.0.2.1\n", 1, &c);
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");
	uint64_t t0 = 5000 * MS;

	ck_assert_ptr_nonnull(p);
	/* a second's worth at first use, and nothing more at that instant */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 1000 * U, 100, t0), 100 * U);
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, U, 100, t0), 0);
	/* half a second: half the rate */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 1000 * U, 100, t0 + 500 * MS),
			 50 * U);
	/* ten seconds idle: a second's worth, not ten */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 10000 * U, 100,
					 t0 + 10500 * MS), 100 * U);
	/* a time before the last refill (another thread's clock) credits nothing */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, U, 100, t0 + 10400 * MS), 0);
	/* no rate: nothing granted */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_BYTES, U, 0, t0), 0);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

/* A refill every 300 ns at 1 a second (each under a millionth) and one
 * every 7 ms at 3 a second: nothing lost to rounding, nothing gained. */
START_TEST(bucket_refills_exact)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table_with("[peer p]\naddress 192.0.2.1\n", 1, &c);
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");
	uint64_t t = 1000 * MS, got = 0;

	got += (uint64_t)fg_peerlim_take(p, FG_PEERLIM_CONNS, 10 * U, 1, t);
	ck_assert_uint_eq(got, U);
	for (unsigned i = 0; i < 10000000u / 3; i++) {	/* 1 s in steps of 300 ns */
		t += 300;
		got += (uint64_t)fg_peerlim_take(p, FG_PEERLIM_CONNS, 10 * U, 1, t);
	}
	/* 999,999,900 ns at one a second: 999,999 millionths, at most one
	 * short for the nanoseconds rounded up */
	ck_assert_uint_ge(got, 2 * U - 2);
	ck_assert_uint_le(got, 2 * U);

	got = (uint64_t)fg_peerlim_take(p, FG_PEERLIM_BYTES, 10 * U, 3, t);
	ck_assert_uint_eq(got, 3 * U);
	for (unsigned i = 0; i < 1000; i++) {		/* 7 s */
		t += 7 * MS;
		got += (uint64_t)fg_peerlim_take(p, FG_PEERLIM_BYTES, 10 * U, 3, t);
	}
	ck_assert_uint_eq(got, 3 * U + 21 * U);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

START_TEST(bucket_unit_give_batch)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table_with("[peer p]\naddress 192.0.2.1\n", 4, &c);
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");
	uint64_t t = 1000 * MS;

	/* two connections a second: two whole ones, then none, and a part
	 * of one (a quarter second) is not a connection */
	ck_assert(fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 2, t));
	ck_assert(fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 2, t));
	ck_assert(!fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 2, t));
	ck_assert(!fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 2, t + 250 * MS));
	ck_assert(fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 2, t + 500 * MS));
	ck_assert(!fg_peerlim_take_unit(p, FG_PEERLIM_CONNS, 0, t + 5000 * MS));
	/* giving back holds the bucket at a second's worth */
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 100 * U, 10, t), 10 * U);
	fg_peerlim_give(p, FG_PEERLIM_OFFERS, 4 * U, 10);
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 100 * U, 10, t), 4 * U);
	fg_peerlim_give(p, FG_PEERLIM_OFFERS, 50 * U, 10);
	ck_assert_int_eq(fg_peerlim_take(p, FG_PEERLIM_OFFERS, 100 * U, 10, t), 10 * U);
	/* the batch: a sixteenth of a second's worth over 4 engines, at
	 * least one unit */
	ck_assert_int_eq(fg_peerlim_batch(pl, 6400), 100 * U);
	ck_assert_int_eq(fg_peerlim_batch(pl, 10), U);
	ck_assert_uint_eq(fg_peerlim_engines(pl), 4);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

START_TEST(conns_exact)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table_with("[peer p]\naddress 192.0.2.1\n", 2, &c);
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");

	for (unsigned i = 0; i < 3; i++)
		ck_assert(fg_peerlim_conn_open(p, 3));
	ck_assert(!fg_peerlim_conn_open(p, 3));
	ck_assert_uint_eq(fg_peerlim_conns(p), 3);
	fg_peerlim_conn_close(p);
	ck_assert(fg_peerlim_conn_open(p, 3));
	ck_assert(fg_peerlim_conn_open(p, 0));		/* no limit: counted all the same */
	ck_assert_uint_eq(fg_peerlim_conns(p), 4);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

/* Names: one slot each, kept across configurations; a table that would
 * hold more names than it has slots refuses the whole configuration. */
START_TEST(names)
{
	struct fg_config *c1, *c2;
	struct fg_peerlim *pl = table_with("[peer a]\naddress 192.0.2.1\n[peer b]\naddress 192.0.2.2\n",
					   1, &c1);
	struct fg_peerlim_peer *a = fg_peerlim_find(pl, "a"), *b = fg_peerlim_find(pl, "b");
	char text[65536];
	size_t off;
	unsigned added;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert_ptr_null(fg_peerlim_find(pl, "c"));
	ck_assert(fg_peerlim_conn_open(b, 0));
	c2 = conf("[site]\nserver-name t.example\n[peer b]\naddress 192.0.2.2\n"
		  "[peer c]\naddress 192.0.2.3\n");
	ck_assert_int_eq(fg_peerlim_add(pl, c2), 0);
	ck_assert_ptr_eq(fg_peerlim_find(pl, "b"), b);	/* carried over by name */
	ck_assert_uint_eq(fg_peerlim_conns(b), 1);
	ck_assert_ptr_nonnull(fg_peerlim_find(pl, "c"));
	ck_assert_ptr_eq(fg_peerlim_find(pl, "a"), a);	/* kept, though gone */
	fg_config_free(c2);
	/* fill the table with configurations of 200 new names each */
	for (added = 3; added + 200 <= FG_PEERLIM_SLOTS; added += 200) {
		off = (size_t)snprintf(text, sizeof(text), "[site]\nserver-name t.example\n");
		for (unsigned i = 0; i < 200; i++)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"[peer n%u]\naddress 10.%u.%u.1\n", added + i,
						(added + i) / 256, (added + i) % 256);
		c2 = conf(text);
		ck_assert_int_eq(fg_peerlim_add(pl, c2), 0);
		fg_config_free(c2);
	}
	off = (size_t)snprintf(text, sizeof(text), "[site]\nserver-name t.example\n");
	for (unsigned i = 0; i < 200; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "[peer m%u]\naddress 11.0.%u.1\n",
					i, i);
	c2 = conf(text);
	ck_assert_int_eq(fg_peerlim_add(pl, c2), -ENOSPC);
	ck_assert_ptr_null(fg_peerlim_find(pl, "m0"));	/* none added */
	fg_config_free(c2);
	fg_peerlim_destroy(pl);
	fg_config_free(c1);
}
END_TEST

/* ------------------------------------------------------------ two engines of one box */

struct box {
	struct fg_peerlim *pl;
	struct fg_th a, b;
};

static void box_open(struct box *x, const char *extra)
{
	x->pl = fg_peerlim_create(2);
	ck_assert_ptr_nonnull(x->pl);
	ck_assert_int_eq(fg_th_init_box(&x->a, extra, NULL, x->pl), 0);
	ck_assert_int_eq(fg_th_init_box(&x->b, extra, &x->a, x->pl), 0);
}

static void box_close(struct box *x)
{
	fg_th_fini(&x->b);
	fg_th_fini(&x->a);
	fg_peerlim_destroy(x->pl);
}

/* Both engines at one time, as a box's workers share one clock. */
static void box_pump(struct box *x, uint64_t advance_ns)
{
	x->a.now_ns += advance_ns;
	x->b.now_ns = x->a.now_ns;
	fg_th_pump(&x->a, 0);
	fg_th_pump(&x->b, 0);
}

static unsigned lines_of(struct fg_th_conn *c, const char *prefix)
{
	unsigned n = 0;

	for (const char *p = fg_th_out(c); (p = strstr(p, prefix)) != NULL; p++)
		n++;
	return n;
}

START_TEST(box_max_connections)
{
	struct box x;
	struct fg_th_conn *a1, *a2, *b1, *b2, *a3;

	box_open(&x, "[peer gamma]\naddress 127.0.0.3\nmax-connections 3\n");
	a1 = fg_th_open(&x.a, "gamma");
	a2 = fg_th_open(&x.a, "gamma");
	b1 = fg_th_open(&x.b, "gamma");
	b2 = fg_th_open(&x.b, "gamma");		/* the fourth on the box */
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(a1, "200 "), 1);
	ck_assert_uint_eq(lines_of(a2, "200 "), 1);
	ck_assert_uint_eq(lines_of(b1, "200 "), 1);
	ck_assert_str_eq(fg_th_out(b2), "400 Too many connections from this peer, try again later\r\n");
	ck_assert_uint_eq(fg_th_ctr(&x.b, FG_CTR_NNTP_SESSIONS_TOO_MANY), 1);
	ck_assert_uint_eq(fg_th_ctr(&x.a, FG_CTR_NNTP_SESSIONS_OPENED), 2);
	ck_assert_uint_eq(fg_th_ctr(&x.b, FG_CTR_NNTP_SESSIONS_OPENED), 1);
	/* another peer is not held by gamma's count */
	fg_th_open_greeted(&x.b, "alpha");
	/* one closes on engine b: one more may open, on engine a */
	fg_th_drop(b1);
	box_pump(&x, 0);
	a3 = fg_th_open(&x.a, "gamma");
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(a3, "200 "), 1);
	ck_assert_uint_eq(fg_peerlim_conns(fg_peerlim_find(x.pl, "gamma")), 3);
	box_close(&x);
}
END_TEST

START_TEST(box_connection_rate)
{
	struct box x;
	struct fg_th_conn *c[4];

	box_open(&x, "[peer gamma]\naddress 127.0.0.3\nmax-connection-rate 2\n");
	c[0] = fg_th_open(&x.a, "gamma");
	c[1] = fg_th_open(&x.b, "gamma");
	c[2] = fg_th_open(&x.a, "gamma");
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(c[0], "200 "), 1);
	ck_assert_uint_eq(lines_of(c[1], "200 "), 1);
	ck_assert_str_eq(fg_th_out(c[2]),
			 "400 Connecting too often from this peer, try again later\r\n");
	ck_assert_uint_eq(fg_th_ctr(&x.a, FG_CTR_NNTP_SESSIONS_TOO_FAST), 1);
	ck_assert_uint_eq(fg_th_ctr(&x.b, FG_CTR_NNTP_SESSIONS_TOO_FAST), 0);
	/* half a second later: one more, on either engine */
	box_pump(&x, 500 * MS);
	c[3] = fg_th_open(&x.b, "gamma");
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(c[3], "200 "), 1);
	box_close(&x);
}
END_TEST

static void checks(struct fg_th_conn *c, const char *tag, unsigned n)
{
	char line[64];

	for (unsigned i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "CHECK <%s%u@rate.test>\r\n", tag, i);
		fg_th_send(c, line, strlen(line), 0);
	}
}

/* An offer rate of 16 a second on a box of two engines (a batch of one
 * offer each): a's 10 and 6 of b's at once (per engine, b would have had
 * 16), then 8 more in half a second; every answer comes in the end. */
START_TEST(box_offer_rate)
{
	struct box x;
	struct fg_th_conn *a, *b;

	box_open(&x, "[peer gamma]\naddress 127.0.0.3\nmax-offer-rate 16\n");
	a = fg_th_open_greeted(&x.a, "gamma");
	b = fg_th_open_greeted(&x.b, "gamma");
	checks(a, "a", 10);
	checks(b, "b", 20);
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(a, "238 "), 10);
	ck_assert_uint_eq(lines_of(b, "238 "), 6);
	ck_assert_uint_ge(fg_th_ctr(&x.b, FG_CTR_NNTP_STALL_RATE), 1);
	box_pump(&x, 500 * MS);
	ck_assert_uint_eq(lines_of(b, "238 "), 14);
	box_pump(&x, 500 * MS);
	ck_assert_uint_eq(lines_of(b, "238 "), 20);
	box_close(&x);
}
END_TEST

/* A batch of 100 (3200 a second over two engines): engine a holds what
 * it took and did not spend; the box never answers more than its second's
 * worth at once; a reload gives a's cache back, for b to spend. */
START_TEST(box_batch_and_reload)
{
	struct box x;
	struct fg_th_conn *a, *b;
	struct fg_config *n;
	struct fg_nntp_counters *ps;
	char text[1024];

	/* its 3200 CHECKs stay outstanding: max-outstanding-offers above them */
	box_open(&x, "[peer gamma]\naddress 127.0.0.3\nmax-offer-rate 3200\nmax-connections 2\n"
		 "max-outstanding-offers 8192\n");
	a = fg_th_open_greeted(&x.a, "gamma");
	b = fg_th_open_greeted(&x.b, "gamma");
	checks(a, "a", 1);
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(a, "238 "), 1);	/* a's cache: 99 left */
	checks(b, "b", 4000);
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(b, "238 "), 3200 - 100);
	/* engine a switches to a configuration with gamma at 3 connections:
	 * its 99 go back, and b takes them */
	snprintf(text, sizeof(text),
		 "[site]\nserver-name news.test.example\npath-identity filter.test.example\n"
		 "listen 127.0.0.1:1119\n[rules]\ncutoff 10d\nretention 11d\n[history]\n"
		 "capacity 200000\n[peer gamma]\naddress 127.0.0.3\nmax-offer-rate 3200\n"
		 "max-connections 3\nmax-outstanding-offers 8192\n");
	n = conf(text);
	ps = calloc(n->n_peer + 1, sizeof(*ps));
	ck_assert_int_eq(fg_peerlim_add(x.pl, n), 0);
	ck_assert_int_eq(fg_nntp_engine_set_config(x.a.e, n, ps), 0);
	fg_config_free(x.a.cfg);
	free(x.a.peer_stats);
	x.a.cfg = n;
	x.a.peer_stats = ps;
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(b, "238 "), 3200 - 1);
	/* the open connections carried over: one more on a, the box's third */
	ck_assert_uint_eq(fg_peerlim_conns(fg_peerlim_find(x.pl, "gamma")), 2);
	a = fg_th_open(&x.a, "gamma");
	box_pump(&x, 0);
	ck_assert_uint_eq(lines_of(a, "200 "), 1);
	ck_assert_uint_eq(fg_peerlim_conns(fg_peerlim_find(x.pl, "gamma")), 3);
	box_close(&x);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("peerlim");
	TCase *tc = tcase_create("buckets");
	TCase *tb = tcase_create("box");

	tcase_add_test(tc, bucket_burst_refill_cap);
	tcase_add_test(tc, bucket_refills_exact);
	tcase_add_test(tc, bucket_unit_give_batch);
	tcase_add_test(tc, conns_exact);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	tcase_add_test(tb, box_max_connections);
	tcase_add_test(tb, box_connection_rate);
	tcase_add_test(tb, box_offer_rate);
	tcase_add_test(tb, box_batch_and_reload);
	suite_add_tcase(s, tb);
	return s;
}

FG_TEST_MAIN(suite)
