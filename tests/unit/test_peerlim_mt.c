/* SPDX-License-Identifier: MIT */
/*
 * test_peerlim_mt.c — threads racing over one table of peer limits
 * (dataplane/nntp/peerlim.c), as a box's workers do; also run under
 * ThreadSanitizer. A bucket grants a second's worth and no more to threads
 * taking at one instant, and over a span of time no more than the burst
 * and the rate (and, once caught up, no less but for rounding); the count
 * of connections never passes max-connections, and reaches it; two
 * engines on two threads opening and closing one peer's sessions never
 * have more than its max-connections greeted at once.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "nntp_harness.h"

#define MS 1000000ull
#define U ((int64_t)FG_PEERLIM_UNIT)
#define THREADS 4

static struct fg_peerlim *table(struct fg_config **cfg, const char *peer_keys)
{
	char text[512];
	struct fg_config_errors errs;
	struct fg_peerlim *pl = fg_peerlim_create(THREADS);

	snprintf(text, sizeof(text), "[site]\nserver-name t.example\n[peer p]\naddress 192.0.2.1\n%s",
		 peer_keys);
	*cfg = fg_config_load_text("<t>", text, strlen(text), &errs);
	ck_assert_ptr_nonnull(*cfg);
	ck_assert_ptr_nonnull(pl);
	ck_assert_int_eq(fg_peerlim_add(pl, *cfg), 0);
	return pl;
}

/* ------------------------------------------------------------ buckets */

struct taker {
	struct fg_peerlim_peer *p;
	uint64_t t0, step, steps;	/* this thread's clock: t0 + i * step */
	uint64_t seed;
	int64_t got;
	unsigned empty;			/* takes that found nothing */
};

static void *run_taker(void *arg)
{
	struct taker *k = arg;

	for (uint64_t i = 0; i < k->steps; i++) {
		int64_t want = (int64_t)(fg_test_rng(&k->seed) % 50 + 1) * U / 3;
		int64_t g = fg_peerlim_take(k->p, FG_PEERLIM_OFFERS, want, 1000, k->t0 + i * k->step);

		ck_assert_int_ge(g, 0);
		ck_assert_int_le(g, want);
		k->got += g;
		k->empty += g == 0;
	}
	return NULL;
}

static int64_t race(struct fg_peerlim_peer *p, uint64_t t0, uint64_t skew, uint64_t step,
		    uint64_t steps, unsigned *empty)
{
	pthread_t th[THREADS];
	struct taker k[THREADS];
	int64_t sum = 0;

	for (unsigned i = 0; i < THREADS; i++) {
		k[i] = (struct taker){ .p = p, .t0 = t0 + i * skew, .step = step, .steps = steps,
				       .seed = 17 + i };
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_taker, &k[i]), 0);
	}
	*empty = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		sum += k[i].got;
		*empty += k[i].empty;
	}
	return sum;
}

/* At one instant: exactly the burst, whoever takes it. */
START_TEST(burst_once)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table(&c, "");
	unsigned empty;
	int64_t got = race(fg_peerlim_find(pl, "p"), 1000 * MS, 0, 0, 20000, &empty);

	ck_assert_int_eq(got, 1000 * U);
	ck_assert_uint_gt(empty, 0);		/* they did run dry: the bound was met */
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

/* Over time: each thread's clock advances in 10 us steps (the threads'
 * clocks a few ns apart, as workers' are). What they got, with a last
 * take at the latest time, is the burst and the rate over the span, less
 * at most a millionth per refill for rounding, never more. */
START_TEST(rate_over_time)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table(&c, "");
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");
	uint64_t t0 = 1000 * MS, steps = 100000, step = 10000;	/* 1 s each */
	unsigned empty;
	int64_t got = race(p, t0, 7, step, steps, &empty);
	uint64_t end = t0 + (THREADS - 1) * 7 + (steps - 1) * step;
	int64_t expect = 1000 * U + (int64_t)((end - t0) * 1000 / 1000);	/* rate 1000/s */

	got += fg_peerlim_take(p, FG_PEERLIM_OFFERS, 100000 * U, 1000, end);
	ck_assert_uint_gt(empty, 0);
	ck_assert_int_le(got, expect);
	ck_assert_int_ge(got, expect - (int64_t)(THREADS * steps) - 64);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

/* ------------------------------------------------------------ connections */

struct opener {
	struct fg_peerlim_peer *p;
	_Atomic unsigned *held, *peak;
	unsigned max, opened, refused;
};

static void *run_opener(void *arg)
{
	struct opener *o = arg;

	for (unsigned i = 0; i < 20000; i++) {
		unsigned h, pk;

		if (!fg_peerlim_conn_open(o->p, o->max)) {
			o->refused++;
			sched_yield();
			continue;
		}
		o->opened++;
		h = atomic_fetch_add(o->held, 1) + 1;
		pk = atomic_load(o->peak);
		while (h > pk && !atomic_compare_exchange_weak(o->peak, &pk, h))
			;
		sched_yield();		/* held for a while */
		atomic_fetch_sub(o->held, 1);
		fg_peerlim_conn_close(o->p);
	}
	return NULL;
}

START_TEST(conns_never_over)
{
	struct fg_config *c;
	struct fg_peerlim *pl = table(&c, "");
	struct fg_peerlim_peer *p = fg_peerlim_find(pl, "p");
	_Atomic unsigned held = 0, peak = 0;
	pthread_t th[THREADS];
	struct opener o[THREADS];
	unsigned opened = 0, refused = 0;

	for (unsigned i = 0; i < THREADS; i++) {
		o[i] = (struct opener){ .p = p, .held = &held, .peak = &peak, .max = 2 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_opener, &o[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		opened += o[i].opened;
		refused += o[i].refused;
	}
	ck_assert_uint_le(atomic_load(&peak), 2);
	ck_assert_uint_eq(fg_peerlim_conns(p), 0);
	ck_assert_uint_eq(opened + refused, THREADS * 20000u);
	ck_assert_uint_gt(opened, 0);
	/* the limit was met: at 2 at once, or refusing */
	ck_assert(atomic_load(&peak) == 2 || refused > 0);
	fg_peerlim_destroy(pl);
	fg_config_free(c);
}
END_TEST

/* ------------------------------------------------------------ engines */

struct eng {
	struct fg_th t;
	_Atomic unsigned *greeted_now, *peak;
	pthread_barrier_t *start;
	_Atomic unsigned opened_any;	/* read by the other thread */
	struct eng *other;
	unsigned opened, too_many, rounds;
};

/* Both engines have greeted, and been refused, at least once: the race
 * was run. */
static bool raced(const struct eng *w)
{
	return atomic_load(&w->opened_any) && atomic_load(&w->other->opened_any) &&
	       w->too_many > 0;
}

static void *run_engine(void *arg)
{
	struct eng *w = arg;

	pthread_barrier_wait(w->start);
	for (w->rounds = 0; w->rounds < 3000 || (!raced(w) && w->rounds < 1000000); w->rounds++) {
		struct fg_th_conn *c = fg_th_open(&w->t, "gamma");
		unsigned h, pk;

		ck_assert_ptr_nonnull(c);
		fg_th_pump(&w->t, 0);
		if (strncmp(fg_th_out(c), "200 ", 4) == 0) {
			w->opened++;
			atomic_store(&w->opened_any, 1);
			h = atomic_fetch_add(w->greeted_now, 1) + 1;
			pk = atomic_load(w->peak);
			while (h > pk && !atomic_compare_exchange_weak(w->peak, &pk, h))
				;
			sched_yield();
			atomic_fetch_sub(w->greeted_now, 1);
		} else {
			ck_assert_str_eq(fg_th_out(c),
					 "400 Too many connections from this peer, try again later\r\n");
			w->too_many++;
		}
		fg_th_release(c);
		fg_th_pump(&w->t, 0);
	}
	return NULL;
}

START_TEST(engines_share_max_connections)
{
	struct fg_peerlim *pl = fg_peerlim_create(2);
	_Atomic unsigned now = 0, peak = 0;
	struct eng w[2];
	pthread_t th[2];
	pthread_barrier_t start;
	const char *extra = "[peer gamma]\naddress 127.0.0.3\nmax-connections 1\n";

	ck_assert_ptr_nonnull(pl);
	memset(w, 0, sizeof(w));
	pthread_barrier_init(&start, NULL, 2);
	ck_assert_int_eq(fg_th_init_box(&w[0].t, extra, NULL, pl), 0);
	ck_assert_int_eq(fg_th_init_box(&w[1].t, extra, &w[0].t, pl), 0);
	for (unsigned i = 0; i < 2; i++) {
		w[i].greeted_now = &now;
		w[i].peak = &peak;
		w[i].start = &start;
		w[i].other = &w[1 - i];
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_engine, &w[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(atomic_load(&peak), 1);	/* never two greeted at once */
	ck_assert_uint_gt(w[0].opened, 0);
	ck_assert_uint_gt(w[1].opened, 0);
	ck_assert_uint_eq(w[0].opened + w[0].too_many, w[0].rounds);
	ck_assert_uint_gt(w[0].too_many + w[1].too_many, 0);
	ck_assert_uint_eq(fg_th_ctr(&w[0].t, FG_CTR_NNTP_SESSIONS_TOO_MANY) +
			  fg_th_ctr(&w[1].t, FG_CTR_NNTP_SESSIONS_TOO_MANY),
			  w[0].too_many + w[1].too_many);
	ck_assert_uint_eq(fg_peerlim_conns(fg_peerlim_find(pl, "gamma")), 0);
	fg_th_fini(&w[1].t);
	fg_th_fini(&w[0].t);
	fg_peerlim_destroy(pl);
	pthread_barrier_destroy(&start);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("peerlim_mt");
	TCase *tc = tcase_create("race");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, burst_once);
	tcase_add_test(tc, rate_over_time);
	tcase_add_test(tc, conns_never_over);
	tcase_add_test(tc, engines_share_max_connections);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(suite)
