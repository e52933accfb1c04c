/* SPDX-License-Identifier: MIT */
/*
 * test_session_mt.c — sessions on two threads racing over the same IDs,
 * the dataplane's shape: one engine per thread, one shared history table.
 * Every ID must be accepted exactly once, every command answered, and
 * every offer and transfer left consistent. Also run under ThreadSanitizer.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/date.h"
#include "fgtest.h"
#include "nntp_harness.h"

#define MS 1000000ull
#define N_IDS 1500

struct worker {
	struct fg_th *t;
	struct fg_th_conn *c;
	const char *feed;
	size_t len;
	uint64_t seed;
	size_t maxseg;
};

static char *make_feed(fg_time_t now, unsigned n, unsigned variant, size_t *len)
{
	size_t cap = (size_t)n * 700 + 64, off = 0;
	char *p = malloc(cap), date[64];

	ck_assert_ptr_nonnull(p);
	fg_date_format(now - 120, date, sizeof(date));
	for (unsigned i = 0; i < n; i++) {
		/* both threads offer every ID; in different orders and styles */
		unsigned k = variant ? n - 1 - i : i;
		char id[64];

		snprintf(id, sizeof(id), "<mt%u@race.example>", k);
		if ((k + variant) % 2 == 0)
			off += (size_t)snprintf(p + off, cap - off, "CHECK %s\r\n", id);
		off += (size_t)snprintf(p + off, cap - off,
					"TAKETHIS %s\r\n"
					"Path: peer%u.example!not-for-mail\r\n"
					"From: a@example.com\r\nNewsgroups: test.mt\r\n"
					"Subject: race %u\r\nMessage-ID: %s\r\nDate: %s\r\n"
					"Injection-Date: %s\r\n\r\nbody %u\r\n..dotted\r\n.\r\n",
					id, variant, k, id, date, date, k);
	}
	off += (size_t)snprintf(p + off, cap - off, "QUIT\r\n");
	*len = off;
	return p;
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = w->seed;
	double deadline = ((double)fg_mono_ns() * 1e-9) + 120;

	w->c = fg_th_open(w->t, "alpha");
	ck_assert_ptr_nonnull(w->c);
	fg_th_send_random(w->c, w->feed, w->len, w->maxseg, &rng);
	/* until every transfer has its outcome: the other thread's may come later */
	do {
		fg_th_pump(w->t, MS);
		if (fg_nntp_engine_xfers(w->t->e) == 0 && w->c->closed_reported)
			break;
		sched_yield();
	} while (((double)fg_mono_ns() * 1e-9) < deadline);
	return NULL;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

START_TEST(two_threads_one_history)
{
	struct fg_th a, b;
	struct worker wa, wb;
	pthread_t ta, tb;
	size_t la, lb;
	char *fa, *fb;
	unsigned total239 = 0;
	struct fg_sink_mem_params sp = {
		.delay_ns = MS, .jitter_ns = 3 * MS, .store_limit = 1u << 30,
	};

	ck_assert_int_eq(fg_th_init(&a, NULL, &sp), 0);
	ck_assert_int_eq(fg_th_init_shared(&b, NULL, &sp, &a), 0);
	fg_sink_mem_set_jitter(b.sink, 3 * MS, 17 + (uint64_t)_i);
	fa = make_feed(a.now, N_IDS, 0, &la);
	fb = make_feed(b.now, N_IDS, (unsigned)_i % 2, &lb);
	wa = (struct worker){ &a, NULL, fa, la, 1 + (uint64_t)_i, 1448 };
	wb = (struct worker){ &b, NULL, fb, lb, 2 + (uint64_t)_i, 300 + 500 * (size_t)_i };
	ck_assert_int_eq(pthread_create(&ta, NULL, run_worker, &wa), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, run_worker, &wb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert(wa.c->closed_reported && wb.c->closed_reported);
	ck_assert_uint_eq(fg_nntp_engine_xfers(a.e) + fg_nntp_engine_xfers(b.e), 0);
	for (unsigned i = 0; i < N_IDS; i++) {
		char id[64], want[80];
		unsigned k;

		snprintf(id, sizeof(id), "<mt%u@race.example>", i);
		snprintf(want, sizeof(want), "239 %s\r\n", id);
		k = count(fg_th_out(wa.c), want) + count(fg_th_out(wb.c), want);
		ck_assert_msg(k == 1, "%s: %u acceptances", id, k);
		ck_assert_int_eq(fg_th_state(&a, id), FG_HISTORY_ACCEPTED);
		total239 += k;
	}
	ck_assert_uint_eq(total239, N_IDS);
	/* every TAKETHIS answered, nothing lost to the race */
	ck_assert_uint_eq(a.stats.n.code[FG_NNTP_CODE_C239] + a.stats.n.code[FG_NNTP_CODE_C439], N_IDS);
	ck_assert_uint_eq(b.stats.n.code[FG_NNTP_CODE_C239] + b.stats.n.code[FG_NNTP_CODE_C439], N_IDS);
	ck_assert_uint_eq(a.stats.n.code[FG_NNTP_CODE_C205] + b.stats.n.code[FG_NNTP_CODE_C205], 2);
	/* each accepted article reached exactly one of the two sinks */
	{
		struct fg_sink_mem_stats sa, sb;

		fg_sink_mem_stats(a.sink, &sa);
		fg_sink_mem_stats(b.sink, &sb);
		ck_assert_uint_eq(sa.succeeded + sb.succeeded, N_IDS);
	}
	fg_th_fini(&b);
	fg_th_fini(&a);
	free(fa);
	free(fb);
}
END_TEST

static Suite *mt_suite(void)
{
	Suite *s = suite_create("session_mt");
	TCase *tc = tcase_create("race");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, two_threads_one_history, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(mt_suite)
