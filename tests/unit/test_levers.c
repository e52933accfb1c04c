/* SPDX-License-Identifier: MIT */
/*
 * test_levers.c — the operator levers' state and journal: every change
 * kind, refusals, expiry, a journal replayed to the same state, a torn or
 * hostile line skipped and counted, the state applied to an engine, and
 * the levers served: request, journal, publication, pickup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/ctl.h"
#include "floodgate/levers.h"
#include "fgtest.h"
#include "nntp_harness.h"

#define T0 ((fg_time_t)1767225600)

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/fg-levers-%d-XXXXXX", (int)getpid());
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	unlink(p);
	rmdir(dir);
}

/* The pause table both the engine and the levers keep (session.h). */
START_TEST(test_pause_table)
{
	struct fg_nntp_pause tab[FG_CONFIG_MAX_PEERS] = { 0 };
	char name[FG_CONFIG_NAME_MAX + 1];
	unsigned n = 0;

	ck_assert_int_eq(fg_nntp_pause_find(tab, n, "a"), -1);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "a", T0 + 1), 0);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "b", T0 + 2), 0);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "c", T0 + 3), 0);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "a", T0 + 9), 0);	/* extended in place */
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(tab[fg_nntp_pause_find(tab, n, "a")].until, T0 + 9);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "a", 0), 0);	/* the last row moves up */
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(fg_nntp_pause_find(tab, n, "a"), -1);
	ck_assert_int_eq(tab[fg_nntp_pause_find(tab, n, "c")].until, T0 + 3);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "a", 0), -ENOENT);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, NULL, T0), -EINVAL);
	memset(name, 'x', FG_CONFIG_NAME_MAX);
	name[FG_CONFIG_NAME_MAX] = '\0';
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, name, T0), -EINVAL);
	name[FG_CONFIG_NAME_MAX - 1] = '\0';	/* the longest that fits */
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, name, T0), 0);
	for (unsigned i = 0; n < FG_CONFIG_MAX_PEERS; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		ck_assert_int_eq(fg_nntp_pause_set(tab, &n, name, T0), 0);
	}
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "one-more", T0), -ENOSPC);
	ck_assert_int_eq(fg_nntp_pause_set(tab, &n, "b", T0 + 5), 0);	/* a known one still */
	ck_assert_uint_eq(n, FG_CONFIG_MAX_PEERS);
}
END_TEST

START_TEST(test_changes_and_refusals)
{
	struct fg_levers l;
	char long_reason[FG_NNTP_ENGINE_REASON_MAX + 2];

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(fg_levers_throttle(&l, "disk full"), 0);
	ck_assert_str_eq(l.throttle, "disk full");
	ck_assert_int_eq(fg_levers_throttle(&l, "two\nlines"), -EINVAL);
	memset(long_reason, 'x', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	ck_assert_int_eq(fg_levers_throttle(&l, long_reason), -EINVAL);
	ck_assert_str_eq(l.throttle, "disk full");	/* unchanged */
	ck_assert_int_eq(fg_levers_throttle(&l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T0 + 60), 0);
	ck_assert_int_eq(fg_levers_pause(&l, "beta", T0 + 10), 0);
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T0 + 120), 0);	/* extended */
	ck_assert_uint_eq(l.n_pauses, 2);
	ck_assert_int_eq(fg_levers_pause(&l, "with space", T0), -EINVAL);
	ck_assert_int_eq(fg_levers_pause(&l, "", T0), -EINVAL);
	ck_assert_int_eq(fg_levers_pause(&l, "gamma", 0), -ENOENT);
	ck_assert_uint_eq(fg_levers_expire(&l, T0 + 10), 1);	/* beta's time is over */
	ck_assert_uint_eq(l.n_pauses, 1);
	ck_assert_str_eq(l.pause[0].peer, "alpha");
	ck_assert_int_eq(l.pause[0].until, T0 + 120);
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", 0), 0);
	ck_assert_uint_eq(l.n_pauses, 0);
}
END_TEST

START_TEST(test_journal_replays_to_the_same_state)
{
	struct fg_levers l;
	unsigned bad = 99;
	char p[128];
	FILE *f;

	ck_assert_int_eq(fg_levers_load(dir, T0, &l, &bad), 0);	/* no file yet */
	ck_assert_uint_eq(l.n_pauses, 0);
	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "pause alpha 1767229200"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "pause beta 1767225610"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0, "throttle disk full, back at noon"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 1, "pause gamma 1767229200"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 2, "resume gamma"), 0);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 3, "resume gamma"), 0);	/* harmless */
	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	f = fopen(p, "a");
	ck_assert_ptr_nonnull(f);
	fputs("junk line\n1767225600 pause\n1767225600 pause delta soon\n", f);
	fputs("1767225600 pause torn 17672", f);	/* the crash's torn end */
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0 + 20, &l, &bad), 0);
	ck_assert_uint_eq(bad, 4);
	ck_assert_str_eq(l.throttle, "disk full, back at noon");
	ck_assert_uint_eq(l.n_pauses, 1);		/* beta's time is over */
	ck_assert_str_eq(l.pause[0].peer, "alpha");
	ck_assert_int_eq(l.pause[0].until, 1767229200);
	ck_assert_int_eq(fg_levers_journal(dir, T0 + 30, "go"), 0);
	ck_assert_int_eq(fg_levers_load(dir, T0 + 30, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	ck_assert_int_eq(fg_levers_journal("/nonexistent-dir-fg", T0, "go"), -ENOENT);
}
END_TEST

/* The state applied to a live engine: sessions see it; the same throttle
 * again closes nothing again. */
/* The file names its format's version first (docs/compat.md): written
 * so, read without it (version 1), a newer one refused. */
START_TEST(test_journal_version)
{
	struct fg_levers l;
	char p[128], head[64];
	FILE *f;

	ck_assert_int_eq(fg_levers_journal(dir, T0, "throttle x"), 0);
	snprintf(p, sizeof(p), "%s/%s", dir, FG_LEVERS_FILE);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	fclose(f);
	ck_assert_str_eq(head, FG_LEVERS_MAGIC " 1\n");
	ck_assert_int_eq(fg_levers_journal(dir, T0, "go"), 0);	/* no second header */
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "");
	f = fopen(p, "w");
	fputs("1767225600 throttle no header\n", f);
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), 0);
	ck_assert_str_eq(l.throttle, "no header");
	f = fopen(p, "w");
	fputs(FG_LEVERS_MAGIC " 2\n1767225600 throttle from the future\n", f);
	fclose(f);
	ck_assert_int_eq(fg_levers_load(dir, T0, &l, NULL), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(test_apply_to_an_engine)
{
	struct fg_th T;
	struct fg_levers l;
	struct fg_th_conn *c;

	ck_assert_int_eq(fg_th_init(&T, NULL, NULL), 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T.now + 60), 0);
	fg_levers_apply(&l, T.e);
	ck_assert(fg_nntp_engine_paused(T.e, "alpha", NULL));
	c = fg_th_open(&T, "alpha");
	fg_th_pump(&T, 0);
	fg_th_out_clear(c);
	fg_th_send(c, "CHECK <a@x>\r\n", 13, 0);
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "431 <a@x>\r\n");
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", 0), 0);
	ck_assert_int_eq(fg_levers_throttle(&l, "maintenance"), 0);
	fg_levers_apply(&l, T.e);
	ck_assert(!fg_nntp_engine_paused(T.e, "alpha", NULL));
	ck_assert_str_eq(fg_nntp_engine_throttled(T.e), "maintenance");
	fg_th_pump(&T, 0);
	ck_assert_str_eq(fg_th_out(c), "431 <a@x>\r\n400 maintenance\r\n");
	fg_levers_apply(&l, T.e);
	ck_assert_uint_eq(fg_th_ctr(&T, FG_CTR_NNTP_THROTTLE_CLOSED), 1);
	ck_assert_int_eq(fg_levers_throttle(&l, NULL), 0);
	fg_levers_apply(&l, T.e);
	ck_assert_ptr_null(fg_nntp_engine_throttled(T.e));
	fg_th_fini(&T);
}
END_TEST

/* Serve one request line; the body in *body (malloc'd). */
static const char *serve(struct fg_levers_pub *p, const struct fg_config *cfg, const char *line,
			 char **body)
{
	struct fg_ctl_req q;
	const char *why = NULL, *code;
	size_t len = 0;
	FILE *f = open_memstream(body, &len);

	ck_assert_int_eq(fg_ctl_parse_request(line, strlen(line), &q, &why), 0);
	code = fg_levers_serve(p, cfg, &q, f);
	fclose(f);
	return code;
}

/* Serving (levers.h, steps 1-5): a request journals, publishes, and an
 * engine picks the change up once; refusals change nothing; the journal
 * brings the same state back; a pause over is dropped by the tick. */
START_TEST(test_serve_publish_pickup)
{
	struct fg_levers_pub *p = calloc(1, sizeof(*p)), *again = calloc(1, sizeof(*again));
	struct fg_th T;
	unsigned long seen = 0, gen;
	char *body = NULL;
	char *where = strdup(dir);

	ck_assert_int_eq(fg_th_init(&T, NULL, NULL), 0);
	/* the path is kept as a copy: a reload frees the configuration's */
	ck_assert_int_eq(fg_levers_pub_load(p, "test", where), 0);
	memset(where, 'x', strlen(where));
	free(where);
	ck_assert_uint_eq(atomic_load(&p->gen), 2);
	ck_assert_ptr_null(serve(p, T.cfg, "pause alpha 60\n", &body));
	ck_assert(strstr(body, "pause alpha ") && strstr(body, "done, journaled"));
	free(body);
	gen = atomic_load(&p->gen);
	ck_assert_uint_eq(gen, 4);
	fg_levers_pickup(p, &seen, T.e);
	ck_assert_uint_eq(seen, gen);
	ck_assert(fg_nntp_engine_paused(T.e, "alpha", NULL));
	/* refusals: nothing journaled, nothing published */
	ck_assert_str_eq(serve(p, T.cfg, "pause nobody\n", &body), "bad-request");
	ck_assert(strstr(body, "no peer nobody in the configuration"));
	free(body);
	ck_assert_str_eq(serve(p, T.cfg, "pause alpha 0\n", &body), "bad-request");
	free(body);
	ck_assert_str_eq(serve(p, T.cfg, "go\n", &body), "refused");
	free(body);
	ck_assert_str_eq(serve(p, T.cfg, "resume beta\n", &body), "refused");
	ck_assert(strstr(body, "not paused"));
	free(body);
	ck_assert_uint_eq(atomic_load(&p->gen), gen);
	ck_assert_ptr_null(serve(p, T.cfg, "throttle disk full --json\n", &body));
	ck_assert(strncmp(body, "{\"throttled\":\"disk full\",\"paused\":[{\"peer\":\"alpha\",", 51) == 0);
	free(body);
	fg_levers_pickup(p, &seen, T.e);
	ck_assert_str_eq(fg_nntp_engine_throttled(T.e), "disk full");
	/* an odd generation (a change being copied in) is not picked up */
	atomic_fetch_add(&p->gen, 1);
	ck_assert_ptr_null(serve(p, T.cfg, "go\n", &body));
	free(body);
	ck_assert_uint_eq(atomic_load(&p->gen) & 1, 1);
	fg_levers_pickup(p, &seen, T.e);
	ck_assert_str_eq(fg_nntp_engine_throttled(T.e), "disk full");
	atomic_fetch_add(&p->gen, 1);
	fg_levers_pickup(p, &seen, T.e);
	ck_assert_ptr_null(fg_nntp_engine_throttled(T.e));
	/* the journal gives the same state to the next owner */
	ck_assert_int_eq(fg_levers_pub_load(again, "test", dir), 0);
	ck_assert(!again->l.throttle[0]);
	ck_assert_int_eq(fg_levers_paused_until(&again->l, "alpha"),
			 fg_levers_paused_until(&p->l, "alpha"));
	ck_assert_int_eq(fg_levers_paused_until(&again->l, "beta"), 0);
	/* the tick drops a pause that is over, and publishes */
	gen = atomic_load(&p->gen);
	fg_levers_tick(p, fg_levers_paused_until(&p->l, "alpha") - 1);
	ck_assert_uint_eq(atomic_load(&p->gen), gen);
	fg_levers_tick(p, fg_levers_paused_until(&p->l, "alpha"));
	ck_assert_uint_eq(atomic_load(&p->gen), gen + 2);
	ck_assert_uint_eq(p->l.n_pauses, 0);
	fg_th_fini(&T);
	free(p);
	free(again);
}
END_TEST

/* What floodctl peers and status show of the levers. */
START_TEST(test_json_and_text)
{
	struct fg_levers l;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	memset(&l, 0, sizeof(l));
	f = open_memstream(&out, &len);
	fg_levers_json(&l, f, false);
	fg_levers_text(&l, f, T0);
	fclose(f);
	ck_assert_str_eq(out, ",\"throttled\":null,\"paused\":[]");
	free(out);
	ck_assert_int_eq(fg_levers_throttle(&l, "say \"no\""), 0);
	ck_assert_int_eq(fg_levers_pause(&l, "alpha", T0 + 90), 0);
	f = open_memstream(&out, &len);
	fg_levers_json(&l, f, true);
	fg_levers_text(&l, f, T0);
	fclose(f);
	ck_assert_str_eq(out, "{\"throttled\":\"say \\\"no\\\"\",\"paused\":[{\"peer\":\"alpha\","
			 "\"until\":1767225690}]}\n"
			 "THROTTLED  say \"no\" (floodctl go ends it)\n"
			 "PAUSED     peer alpha until 1767225690 (90 s more; floodctl resume)\n");
	free(out);
}
END_TEST

static Suite *levers_suite(void)
{
	Suite *s = suite_create("levers");
	TCase *tc = tcase_create("levers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pause_table);
	tcase_add_test(tc, test_changes_and_refusals);
	tcase_add_test(tc, test_journal_replays_to_the_same_state);
	tcase_add_test(tc, test_journal_version);
	tcase_add_test(tc, test_apply_to_an_engine);
	tcase_add_test(tc, test_serve_publish_pickup);
	tcase_add_test(tc, test_json_and_text);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(levers_suite)
