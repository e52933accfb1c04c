/* SPDX-License-Identifier: MIT */
/*
 * test_wiring.c — the builder of an engine thread's sink, writer slot and
 * engine (dataplane/wiring): each sink kind carries an article the engine
 * accepts (null, memory, the outbound queue with its writer running), a
 * region gives a slot whose index owns the engine's history entries and
 * whose link takes the journal records; a region with no free slot is
 * -EBUSY and logged; a failure at any step (a queue sink without a queue,
 * a full journal gate, an engine that refuses its parameters) releases
 * what the steps before it built: the slot can be claimed again, and ASan
 * finds no leak.
 *
 * The engine is driven through the NNTP harness (tests/lib): its own
 * engine is set aside while the wiring's runs the connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_fixture.h"
#include "fgtest.h"
#include "floodgate/date.h"
#include "floodgate/journal.h"
#include "floodgate/wiring.h"
#include "nntp_harness.h"

static struct fg_th T;
static struct fg_nntp_engine *harness_engine;

static void harness_up(const char *extra)
{
	ck_assert_int_eq(fg_th_init(&T, extra, NULL), 0);
	harness_engine = T.e;
}

/* The wiring's engine runs the harness's connections from now on. */
static void harness_use(struct fg_wiring *wr)
{
	T.e = fg_wiring_engine(wr);
}

static void harness_down(void)
{
	for (unsigned i = 0; i < FG_TH_MAX_CONNS; i++)
		if (T.conn[i].th && !T.conn[i].closed_reported)
			fg_th_drop(&T.conn[i]);
	fg_th_settle(&T, 1000000, 1000);
	T.e = harness_engine;
}

static struct fg_wiring_params params(enum fg_wiring_sink sink)
{
	struct fg_wiring_params p;

	memset(&p, 0, sizeof(p));
	p.sink = sink;
	p.log_comp = "test";
	p.log_who = "worker 0";
	p.engine.cfg = T.cfg;
	p.engine.history = T.h;
	p.engine.stats = &T.stats;
	p.engine.peer_stats = T.peer_stats;
	p.engine.token_base = 7;
	return p;
}

/* With floodctld's region: a writer slot of that name. */
static struct fg_wiring_params slot_params(enum fg_wiring_sink sink, struct fg_region *r,
					   const char *slot_name)
{
	struct fg_wiring_params p = params(sink);

	p.region = r;
	p.slot_name = slot_name;
	return p;
}

/* The one slot a build gave up was released, not left live or dead:
 * floodctld's reaper frees it. */
static void assert_one_released(struct fg_region *r)
{
	unsigned dead = 1;

	ck_assert_uint_eq(fg_region_reap(r, &dead, NULL), 1);
	ck_assert_uint_eq(dead, 0);
}

/* TAKETHIS of a fresh article on a peer's connection; the answer once
 * the engine has it, as far as the harness's pumping gets it. */
static struct fg_th_conn *takethis(const char *id)
{
	struct fg_th_conn *c = fg_th_open(&T, "alpha");
	char date[64], buf[1024];
	int n;

	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), FG_TH_GREETING);
	fg_th_out_clear(c);
	fg_date_format(T.now - 3600, date, sizeof(date));
	n = snprintf(buf, sizeof(buf),
		     "TAKETHIS %s\r\n"
		     "Path: peer.example!not-for-mail\r\n"
		     "From: Poster <poster@example.com>\r\n"
		     "Newsgroups: test.group\r\n"
		     "Subject: wiring\r\n"
		     "Message-ID: %s\r\n"
		     "Date: %s\r\n"
		     "\r\n"
		     "Hello.\r\n"
		     ".\r\n", id, id, date);
	ck_assert_int_lt(n, (int)sizeof(buf));
	fg_th_send(c, buf, (size_t)n, 0);
	fg_th_pump(&T, 1000000);
	return c;
}

static unsigned accepted(void)
{
	return (unsigned)T.stats.s.ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED];
}

/* ------------------------------------------------------------ sinks */

START_TEST(test_null_sink)
{
	struct fg_wiring_params p;
	struct fg_sink_mem_stats ms;
	struct fg_wiring *wr;
	struct fg_th_conn *c;
	int err = 1;

	harness_up(NULL);
	p = params(FG_WIRING_SINK_NULL);
	wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(wr);
	ck_assert_int_eq(err, 0);
	ck_assert_ptr_null(fg_wiring_slot(wr));
	ck_assert_ptr_null(fg_wiring_link(wr));
	ck_assert(!fg_wiring_sink_mem_stats(wr, &ms));
	harness_use(wr);
	c = takethis("<null@wiring.test>");
	fg_th_settle(&T, 1000000, 100);
	ck_assert_str_eq(fg_th_out(c), "239 <null@wiring.test>\r\n");
	ck_assert_uint_eq(accepted(), 1);
	ck_assert_uint_eq(fg_wiring_sink_busy(wr), 0);
	harness_down();
	fg_wiring_destroy(wr);
	fg_th_fini(&T);
}
END_TEST

START_TEST(test_memory_sink)
{
	struct fg_wiring_params p;
	struct fg_sink_mem_stats ms;
	struct fg_wiring *wr;
	struct fg_th_conn *c;
	int err;

	harness_up(NULL);
	p = params(FG_WIRING_SINK_MEMORY);
	p.mem.store_limit = 1 << 20;
	p.mem.delay_ns = 5000000;		/* the memory parameters are the caller's */
	wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(wr);
	harness_use(wr);
	c = takethis("<mem@wiring.test>");
	ck_assert(fg_wiring_sink_mem_stats(wr, &ms));
	ck_assert_uint_eq(ms.begun, 1);
	ck_assert_uint_eq(ms.committed, 1);
	fg_th_settle(&T, 1000000, 100);
	ck_assert_str_eq(fg_th_out(c), "239 <mem@wiring.test>\r\n");
	ck_assert(fg_wiring_sink_mem_stats(wr, &ms));
	ck_assert_uint_eq(ms.succeeded, 1);
	ck_assert_uint_eq(ms.stored, 1);
	/* the harness's own sink saw nothing */
	fg_sink_mem_stats(T.sink, &ms);
	ck_assert_uint_eq(ms.begun, 0);
	/* a memory sink holds nothing the program must settle */
	ck_assert_uint_eq(fg_wiring_sink_busy(wr), 0);
	harness_down();
	fg_wiring_destroy(wr);
	fg_th_fini(&T);
}
END_TEST

struct queue_world {
	char dir[64];
	struct fg_outbound *ob;
	struct fg_wiring *wr;
};

static bool queue_settled(void *arg)
{
	struct queue_world *q = arg;

	fg_th_pump(&T, 1000000);
	return fg_wiring_sink_busy(q->wr) == 0;
}

static void queue_open(struct queue_world *q, struct fg_region *region, unsigned max_gate)
{
	struct fg_outbound_params op = { 0 };
	char extra[128];
	int err;

	snprintf(q->dir, sizeof(q->dir), "/tmp/fg-wiring-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(q->dir));
	snprintf(extra, sizeof(extra), "[persistence]\ndata-dir %s\n", q->dir);
	harness_up(extra);
	op.cfg = T.cfg;
	op.region = region;
	op.slot_name = region ? "test-outbound" : NULL;
	op.max_gate = max_gate;
	q->ob = fg_outbound_open(&op, &err);
	ck_assert_msg(q->ob != NULL, "outbound: %s", strerror(-err));
}

static void queue_close(struct queue_world *q)
{
	char cmd[128];

	harness_down();
	fg_outbound_stop(q->ob);
	fg_wiring_destroy(q->wr);
	fg_outbound_close(q->ob);
	fg_th_fini(&T);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", q->dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_queue_sink)
{
	struct queue_world q;
	struct fg_wiring_params p;
	struct fg_sink_mem_stats ms;
	struct fg_th_conn *c;
	int err;

	queue_open(&q, NULL, 1);
	p = params(FG_WIRING_SINK_QUEUE);
	p.ob = q.ob;
	q.wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(q.wr);
	ck_assert(!fg_wiring_sink_mem_stats(q.wr, &ms));
	harness_use(q.wr);
	/* the writer is not running: the article waits in the queue's hands */
	c = takethis("<queue@wiring.test>");
	ck_assert_uint_eq(fg_wiring_sink_busy(q.wr), 1);
	ck_assert_str_eq(fg_th_out(c), "");
	ck_assert_int_eq(fg_outbound_start(q.ob), 0);
	ck_assert_msg(fg_test_wait_until(queue_settled, &q, 1000),
		      "the queue's writer never completed the article");
	ck_assert_str_eq(fg_th_out(c), "239 <queue@wiring.test>\r\n");
	ck_assert_uint_eq(accepted(), 1);
	queue_close(&q);
}
END_TEST

/* ------------------------------------------------------------ the slot */

START_TEST(test_region_slot)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	struct fg_wiring_params p;
	struct fg_wiring *wr;
	struct fg_region_writer *slot;
	struct fg_th_conn *c;
	const struct fg_jrec *recs;
	unsigned idx;
	int err;

	harness_up(NULL);
	p = slot_params(FG_WIRING_SINK_NULL, r, "test/w0");
	wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(wr);
	slot = fg_wiring_slot(wr);
	ck_assert_ptr_nonnull(slot);
	ck_assert_ptr_nonnull(fg_wiring_link(wr));
	idx = fg_region_writer_slot(slot);
	harness_use(wr);
	c = takethis("<slot@wiring.test>");
	fg_th_settle(&T, 1000000, 100);
	ck_assert_str_eq(fg_th_out(c), "239 <slot@wiring.test>\r\n");
	/* the final transition went to the slot's journal ring (the link's hook) */
	ck_assert_uint_eq(fg_region_ring_peek(r, idx, FG_RING_JOURNAL, 0, (const void **)&recs, 8), 1);
	ck_assert_uint_eq(recs[0].state, FG_HISTORY_ACCEPTED);
	harness_down();
	fg_wiring_destroy(wr);
	fg_th_fini(&T);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_slots_exhausted)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_test_logcap cap;
	struct fg_wiring_params p;
	struct fg_wiring *first, *second;
	int err;

	harness_up(NULL);
	p = slot_params(FG_WIRING_SINK_MEMORY, r, "test/w0");
	first = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(first);
	p.slot_name = "test/w1";
	fg_test_logcap_start(&cap);
	second = fg_wiring_build(&p, &err);
	fg_test_logcap_stop();
	ck_assert_ptr_null(second);
	ck_assert_int_eq(err, -EBUSY);
	ck_assert(fg_test_logcap_has(&cap, "worker 0: no writer slot in floodctld's region: "
				     "every slot is in use (floodctld --writers)"));
	/* the first one's slot is released when it goes (not dead), and free
	 * again once floodctld's reaper has seen it */
	fg_wiring_destroy(first);
	assert_one_released(r);
	second = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(second);
	fg_wiring_destroy(second);
	fg_th_fini(&T);
	fx_cleanup(&fx);
}
END_TEST

/* ------------------------------------------------------------ failures */

/* A queue sink without a queue: nothing built. */
START_TEST(test_queue_without_outbound)
{
	struct fg_wiring_params p;
	int err;

	harness_up(NULL);
	p = params(FG_WIRING_SINK_QUEUE);
	ck_assert_ptr_null(fg_wiring_build(&p, &err));
	ck_assert_int_eq(err, -EINVAL);
	p.sink = (enum fg_wiring_sink)42;
	ck_assert_ptr_null(fg_wiring_build(&p, &err));
	ck_assert_int_eq(err, -EINVAL);
	fg_th_fini(&T);
}
END_TEST

/* The engine refuses (no counter block): the slot, the link and the sink
 * built before it are undone. */
START_TEST(test_engine_refused_undoes)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_wiring_params p;
	struct fg_wiring *wr;
	int err;

	harness_up(NULL);
	p = slot_params(FG_WIRING_SINK_MEMORY, r, "test/w0");
	p.engine.stats = NULL;
	ck_assert_ptr_null(fg_wiring_build(&p, &err));
	ck_assert_int_eq(err, -EINVAL);
	/* the failed build released the region's one slot */
	assert_one_released(r);
	p.engine.stats = &T.stats;
	wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(wr);
	fg_wiring_destroy(wr);
	fg_th_fini(&T);
	fx_cleanup(&fx);
}
END_TEST

/* The journal gate holds one link: a second engine thread's build fails
 * after its queue sink and its slot were made, and undoes both. */
START_TEST(test_gate_full_undoes)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 4, 64);
	struct queue_world q;
	struct fg_wiring_params p;
	struct fg_wiring *second;
	int err;

	queue_open(&q, r, 1);
	p = slot_params(FG_WIRING_SINK_QUEUE, r, "test/w0");
	p.ob = q.ob;
	q.wr = fg_wiring_build(&p, &err);
	ck_assert_ptr_nonnull(q.wr);
	p.slot_name = "test/w1";
	second = fg_wiring_build(&p, &err);
	ck_assert_ptr_null(second);
	ck_assert_int_eq(err, -ENOSPC);
	/* its slot was released (the first's and the outbound's are live) */
	assert_one_released(r);
	harness_use(q.wr);
	queue_close(&q);
	fx_cleanup(&fx);
}
END_TEST

static Suite *wiring_suite(void)
{
	Suite *s = suite_create("wiring");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_null_sink);
	tcase_add_test(tc, test_memory_sink);
	tcase_add_test(tc, test_queue_sink);
	tcase_add_test(tc, test_region_slot);
	tcase_add_test(tc, test_slots_exhausted);
	tcase_add_test(tc, test_queue_without_outbound);
	tcase_add_test(tc, test_engine_refused_undoes);
	tcase_add_test(tc, test_gate_full_undoes);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(wiring_suite)
