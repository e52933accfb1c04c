/* SPDX-License-Identifier: MIT */
/*
 * test_slotlink.c — a session engine's link to its writer slot
 * (dataplane/slotlink): journal records onto the slot's ring (and -ENOSPC
 * when it is full, for the engine to defer), verdict-log lines with the
 * region's peer numbering, counter publication, and per-peer counters
 * that survive a reload which renumbers the peers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "ctl_fixture.h"
#include "floodgate/journal.h"
#include "floodgate/rules.h"
#include "floodgate/slotlink.h"
#include "nntp_harness.h"
#include "floodgate/vlog.h"
#include "fgtest.h"

static const char conf_ab[] = "[peer alpha]\naddress 192.0.2.1\n[peer beta]\naddress 192.0.2.2\n";
/* reordered, one gone, one new */
static const char conf_bc[] = "[peer gamma]\naddress 192.0.2.3\n[peer beta]\naddress 192.0.2.2\n";

static struct fg_config *conf(const char *text)
{
	struct fg_config_errors errs;
	struct fg_config *c = fg_config_load_text("t", text, strlen(text), &errs);

	ck_assert_msg(c != NULL, "%s", errs.n ? errs.err[0].text : "?");
	return c;
}

struct world {
	struct ctl_fixture fx;
	struct fg_region *r;
	struct fg_region_writer *w;
	struct fg_slotlink *sl;
	struct fg_nntp_engine_hooks hooks;
};

static void up(struct world *W, struct fg_config *cfg, uint32_t jring)
{
	static const char *const names[] = { "alpha", "beta", "gamma" };
	int err;

	memset(W, 0, sizeof(*W));
	W->r = fx_region(&W->fx, 1000, 2, jring);
	ck_assert_int_eq(fg_region_add_peers(W->r, names, 3), 3);
	W->w = fg_region_claim(W->r, "test", &err);
	ck_assert_ptr_nonnull(W->w);
	W->sl = fg_slotlink_create(W->w, cfg);
	ck_assert_ptr_nonnull(W->sl);
	fg_slotlink_hooks(W->sl, &W->hooks);
	ck_assert_ptr_eq(W->hooks.ctx, W->sl);
}

static void down(struct world *W)
{
	fg_slotlink_destroy(W->sl);
	fg_region_release(W->w);
	fx_cleanup(&W->fx);
}

START_TEST(test_journal_records)
{
	struct fg_config *cfg = conf(conf_ab);
	struct world W;
	struct fg_journal_rec r = { .state = FG_HISTORY_ACCEPTED, .article_date = 1700000000,
				    .first_seen = 1700000100, .date_used = FG_RULES_DATE_INJECTION,
				    .reason = FG_REASON_NONE, .msgid = "<j@t>", .msgid_len = 5 };
	const struct fg_jrec *recs;
	unsigned slot, n = 0;

	up(&W, cfg, 64);
	slot = fg_region_writer_slot(W.w);
	fx_key(W.r, "j", 1, &r.key);
	ck_assert_int_eq(W.hooks.journal(W.hooks.ctx, &r), 0);
	/* a date the record cannot hold as a 32-bit offset is clamped, not lost */
	r.state = FG_HISTORY_REJECTED;
	r.date_used = FG_RULES_DATE_DATE;
	r.reason = FG_REASON_TOO_FAR_FUTURE;
	r.article_date = r.first_seen + 100ll * 365 * 86400;
	ck_assert_int_eq(W.hooks.journal(W.hooks.ctx, &r), 0);
	ck_assert_uint_eq(fg_region_ring_peek(W.r, slot, FG_RING_JOURNAL, 0, (const void **)&recs, 8), 2);
	ck_assert_uint_eq(recs[0].key_lo, r.key.lo);
	ck_assert_uint_eq(recs[0].state, FG_HISTORY_ACCEPTED);
	ck_assert_int_eq(recs[0].first_seen + recs[0].date_off, 1700000000);
	/* which header gave the date, and why a reject (floodctl lookup shows both) */
	ck_assert_uint_eq(recs[0].flags, FG_JREC_F_DATE_INJECTION);
	ck_assert_uint_eq(recs[0].reason, FG_REASON_NONE);
	ck_assert_uint_eq(recs[1].state, FG_HISTORY_REJECTED);
	ck_assert_int_eq(recs[1].date_off, INT32_MAX);
	ck_assert_uint_eq(recs[1].flags, FG_JREC_F_DATE_DATE);
	ck_assert_uint_eq(recs[1].reason, FG_REASON_TOO_FAR_FUTURE);
	/* a full ring says so: the engine keeps the record and defers */
	while (W.hooks.journal(W.hooks.ctx, &r) == 0)
		n++;
	ck_assert_uint_eq(n, 62);
	ck_assert_int_eq(W.hooks.journal(W.hooks.ctx, &r), -ENOSPC);
	down(&W);
	fg_config_free(cfg);
}
END_TEST

/* The outbound queue's journal gate: what the link counts, and when it is
 * durable. */
START_TEST(test_journal_gate)
{
	struct fg_config *cfg = conf(conf_ab);
	struct world W;
	struct fg_journal_rec r = { .state = FG_HISTORY_ACCEPTED, .article_date = 1700000000,
				    .first_seen = 1700000100, .msgid = "<g@t>", .msgid_len = 5 };
	uint64_t pushed = 99;
	unsigned slot;

	up(&W, cfg, 64);
	slot = fg_region_writer_slot(W.w);
	fx_key(W.r, "g", 1, &r.key);
	ck_assert_int_eq(fg_slotlink_journal_mark(W.sl, &pushed), 0);
	ck_assert_uint_eq(pushed, 0);
	ck_assert(fg_slotlink_journal_durable(W.sl, 0));
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(W.hooks.journal(W.hooks.ctx, &r), 0);
	ck_assert_int_eq(fg_slotlink_journal_mark(W.sl, &pushed), 0);
	ck_assert_uint_eq(pushed, 3);
	/* in the ring is not durable: floodctld commits, then releases */
	ck_assert(!fg_slotlink_journal_durable(W.sl, 3));
	fg_region_ring_release(W.r, slot, FG_RING_JOURNAL, 2);
	ck_assert(fg_slotlink_journal_durable(W.sl, 2));
	ck_assert(!fg_slotlink_journal_durable(W.sl, 3));
	/* a record the full ring refused is held back by the engine: no
	 * barrier until it is in */
	while (W.hooks.journal(W.hooks.ctx, &r) == 0)
		;
	ck_assert_int_eq(fg_slotlink_journal_mark(W.sl, &pushed), -EAGAIN);
	fg_region_ring_release(W.r, slot, FG_RING_JOURNAL, fg_region_ring_pushed(W.w, FG_RING_JOURNAL));
	ck_assert_int_eq(W.hooks.journal(W.hooks.ctx, &r), 0);
	ck_assert_int_eq(fg_slotlink_journal_mark(W.sl, &pushed), 0);
	ck_assert_uint_eq(pushed, fg_region_ring_pushed(W.w, FG_RING_JOURNAL));
	ck_assert(!fg_slotlink_journal_durable(W.sl, pushed));
	fg_region_ring_release(W.r, slot, FG_RING_JOURNAL, pushed);
	ck_assert(fg_slotlink_journal_durable(W.sl, pushed));
	down(&W);
	fg_config_free(cfg);
}
END_TEST

START_TEST(test_verdict_lines)
{
	struct fg_config *cfg = conf(conf_ab);
	struct world W;
	struct fg_verdict_rec v = { .time = 1700000000, .peer = 1, .peer_name = "beta",
				    .msgid = "<v@t>", .msgid_len = 5, .verb = FG_NNTP_VERB_TAKETHIS,
				    .code = 439, .reason = FG_REASON_TOO_OLD, .has_date = true,
				    .date = 1600000000, .size = 1234 };
	struct fg_endpoint v6 = { .family = AF_INET6, .port = 40119,
				  .addr = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x09 } };
	const struct fg_vrec *recs;
	unsigned slot;

	v.remote = &v6;
	up(&W, cfg, 64);
	slot = fg_region_writer_slot(W.w);
	/* off: nothing is written */
	ck_assert_int_eq(W.hooks.verdict(W.hooks.ctx, &v), 0);
	ck_assert_uint_eq(fg_region_ring_peek(W.r, slot, FG_RING_VLOG, 0, (const void **)&recs, 8), 0);
	fg_region_set_vlog(W.r, true);
	ck_assert_int_eq(W.hooks.verdict(W.hooks.ctx, &v), 0);
	v.code = 400;		/* not a decision: no line */
	ck_assert_int_eq(W.hooks.verdict(W.hooks.ctx, &v), 0);
	v.code = 238;
	v.verb = FG_NNTP_VERB_CHECK;
	v.peer = -1;
	v.size = 0;
	v.remote = NULL;
	ck_assert_int_eq(W.hooks.verdict(W.hooks.ctx, &v), 0);
	ck_assert_uint_eq(fg_region_ring_peek(W.r, slot, FG_RING_VLOG, 0, (const void **)&recs, 8), 2);
	ck_assert_uint_eq(recs[0].verdict, FG_VLOG_REJECT);
	ck_assert_uint_eq(recs[0].cmd, FG_VLOG_TAKETHIS);
	ck_assert_uint_eq(recs[0].reason, FG_REASON_TOO_OLD);
	ck_assert_uint_eq(recs[0].peer, (unsigned)fg_region_peer_index(W.r, "beta"));
	ck_assert_int_eq(recs[0].article_date, 1600000000);
	ck_assert_int_eq(recs[0].arrival, 1700000000);
	ck_assert(memcmp(recs[0].id, "<v@t>", 5) == 0);
	ck_assert_uint_eq(recs[0].family, FG_VREC_AF_INET6);
	ck_assert_uint_eq(recs[0].port, 40119);
	ck_assert(memcmp(recs[0].addr, v6.addr, 16) == 0);
	ck_assert_uint_eq(recs[1].verdict, FG_VLOG_WANT);
	ck_assert_uint_eq(recs[1].family, FG_VREC_AF_NONE);
	ck_assert_uint_eq(recs[1].peer, FG_VREC_PEER_NONE);
	ck_assert_int_eq(recs[1].arrival, 0);
	down(&W);
	fg_config_free(cfg);
}
END_TEST

START_TEST(test_publish_across_reload)
{
	struct fg_config *ab = conf(conf_ab), *bc = conf(conf_bc);
	struct fg_nntp_counters total = { 0 }, *p1 = calloc(3, sizeof(*p1)),
				*p2 = calloc(3, sizeof(*p2));
	struct world W;
	struct fg_region_wstats *ws;
	int ia, ib, ig;

	up(&W, ab, 64);
	ws = fg_region_writer_stats(W.w);
	ia = fg_region_peer_index(W.r, "alpha");
	ib = fg_region_peer_index(W.r, "beta");
	ig = fg_region_peer_index(W.r, "gamma");
	total.s.ctr[FG_CTR_NNTP_ARTICLES] = 7;
	total.n.injection_delay.count = 3;
	p1[0].s.ctr[FG_CTR_NNTP_ARTICLES] = 2;		/* alpha */
	p1[1].s.ctr[FG_CTR_NNTP_ARTICLES] = 5;		/* beta */
	fg_slotlink_publish(W.sl, &total, p1, ab->n_peer, true);
	ck_assert_uint_eq(ws->total.ctr[FG_CTR_NNTP_ARTICLES], 7);
	ck_assert_uint_eq(ws->injection_delay.count, 3);
	ck_assert_uint_eq(ws->peer[ia].ctr[FG_CTR_NNTP_ARTICLES], 2);
	ck_assert_uint_eq(ws->peer[ib].ctr[FG_CTR_NNTP_ARTICLES], 5);
	ck_assert_int_eq(fg_slotlink_region_peer(W.sl, 1), ib);
	ck_assert_int_eq(fg_slotlink_region_peer(W.sl, 2), -1);	/* no peer */
	/* reload: beta moves to index 1 of bc, alpha leaves, gamma comes */
	fg_slotlink_fold(W.sl, p1, ab->n_peer);
	fg_slotlink_set_config(W.sl, bc);
	p2[0].s.ctr[FG_CTR_NNTP_ARTICLES] = 4;		/* gamma */
	p2[1].s.ctr[FG_CTR_NNTP_ARTICLES] = 1;		/* beta */
	fg_slotlink_publish(W.sl, &total, p2, bc->n_peer, false);
	ck_assert_uint_eq(ws->peer[ia].ctr[FG_CTR_NNTP_ARTICLES], 2);	/* kept */
	ck_assert_uint_eq(ws->peer[ib].ctr[FG_CTR_NNTP_ARTICLES], 6);	/* 5 + 1 */
	ck_assert_uint_eq(ws->peer[ig].ctr[FG_CTR_NNTP_ARTICLES], 4);
	ck_assert_int_eq(fg_slotlink_region_peer(W.sl, 0), ig);
	down(&W);
	free(p1);
	free(p2);
	fg_config_free(ab);
	fg_config_free(bc);
}
END_TEST

/* Layout 4: a publication stamps the last-seen time of each peer whose
 * input octets or sessions grew, and no other; the region's sum keeps the
 * newest stamp over the slots (a time is never added up). */
START_TEST(test_publish_last_seen)
{
	struct fg_config *ab = conf(conf_ab);
	struct fg_nntp_counters total = { 0 }, *p = calloc(3, sizeof(*p)),
				*q = calloc(3, sizeof(*q));
	struct fg_region_wstats *ws, *ws2, *sum = malloc(sizeof(*sum));
	struct fg_region_writer *w2;
	struct fg_slotlink *sl2;
	struct world W;
	fg_time_t t0, t1;
	int ia, ib, err;

	up(&W, ab, 64);
	ws = fg_region_writer_stats(W.w);
	ia = fg_region_peer_index(W.r, "alpha");
	ib = fg_region_peer_index(W.r, "beta");
	t0 = time(NULL);
	p[0].s.ctr[FG_CTR_NNTP_BYTES_IN] = 100;			/* alpha spoke */
	fg_slotlink_publish(W.sl, &total, p, ab->n_peer, false);
	t1 = time(NULL);
	ck_assert(ws->peer_seen[ia] >= t0 && ws->peer_seen[ia] <= t1);
	ck_assert_int_eq(ws->peer_seen[ib], 0);			/* beta did not */
	/* nothing grew: no stamp (a sentinel shows it was not rewritten) */
	ws->peer_seen[ia] = 1000;
	fg_slotlink_publish(W.sl, &total, p, ab->n_peer, false);
	ck_assert_int_eq(ws->peer_seen[ia], 1000);
	/* a session opened, no octet yet: seen */
	p[1].s.ctr[FG_CTR_NNTP_SESSIONS_OPENED] = 1;
	fg_slotlink_publish(W.sl, &total, p, ab->n_peer, false);
	ck_assert(ws->peer_seen[ib] >= t0);
	ck_assert_int_eq(ws->peer_seen[ia], 1000);
	/* a second writer: the sum adds the counters, keeps the newest time */
	w2 = fg_region_claim(W.r, "test2", &err);
	ck_assert_ptr_nonnull(w2);
	sl2 = fg_slotlink_create(w2, ab);
	ck_assert_ptr_nonnull(sl2);
	ws2 = fg_region_writer_stats(w2);
	q[0].s.ctr[FG_CTR_NNTP_BYTES_IN] = 50;
	fg_slotlink_publish(sl2, &total, q, ab->n_peer, false);
	ws2->peer_seen[ia] = 2000;
	fg_region_sum(W.r, sum);
	ck_assert_uint_eq(sum->peer[ia].ctr[FG_CTR_NNTP_BYTES_IN], 150);
	ck_assert_int_eq(sum->peer_seen[ia], 2000);
	ws2->peer_seen[ia] = 500;
	fg_region_sum(W.r, sum);
	ck_assert_int_eq(sum->peer_seen[ia], 1000);
	ck_assert_int_eq(sum->peer_seen[ib], ws->peer_seen[ib]);
	fg_slotlink_destroy(sl2);
	fg_region_release(w2);
	down(&W);
	free(p);
	free(q);
	free(sum);
	fg_config_free(ab);
}
END_TEST

/* The harness's configuration as text, the value of its key `key` (if
 * any) overwritten by `to` (of the same length), and `extra` appended. */
static struct fg_config *conf_plus(const struct fg_config *base, const char *key, const char *to,
				   const char *extra)
{
	size_t cap = 1u << 20;
	char *text = malloc(cap), *at;
	struct fg_config *c;

	ck_assert_ptr_nonnull(text);
	fg_config_format(base, text, cap / 2);
	if (key) {
		at = strstr(text, key);
		ck_assert_ptr_nonnull(at);
		at += strcspn(at, "0123456789");
		memcpy(at, to, strlen(to));
	}
	strcat(text, extra);
	c = conf(text);
	free(text);
	return c;
}

/* A reload at an engine's quiescent point keeps the published per-peer
 * counters and delays whole; a configuration the engine refuses changes
 * nothing. */
START_TEST(test_switch_keeps_counters)
{
	struct fg_th T;
	struct fg_config *more, *bad;
	struct fg_nntp_counters total = { 0 }, *fresh, *was;
	struct fg_region_wstats *ws;
	struct world W;
	int ia;

	ck_assert_int_eq(fg_th_init(&T, NULL, NULL), 0);
	more = conf_plus(T.cfg, NULL, NULL, "\n[peer gamma]\naddress 192.0.2.3\n");
	bad = conf_plus(more, "\nmax-line ", "600", "");
	up(&W, T.cfg, 64);
	ws = fg_region_writer_stats(W.w);
	ia = fg_region_peer_index(W.r, "alpha");
	T.peer_stats[0].s.ctr[FG_CTR_NNTP_ARTICLES] = 2;	/* alpha */
	fg_hist_add(&T.peer_stats[0].n.arrival_delay, 30);
	was = T.peer_stats;
	fresh = calloc(more->n_peer + 1, sizeof(*fresh));
	ck_assert_int_eq(fg_slotlink_switch(W.sl, T.e, T.cfg, more, &T.peer_stats, &fresh), 0);
	ck_assert_ptr_eq(fresh, was);		/* the old array, to free */
	ck_assert_uint_eq(T.peer_stats[0].s.ctr[FG_CTR_NNTP_ARTICLES], 0);
	T.peer_stats[0].s.ctr[FG_CTR_NNTP_ARTICLES] = 1;
	fg_slotlink_publish(W.sl, &total, T.peer_stats, more->n_peer, false);
	ck_assert_uint_eq(ws->peer[ia].ctr[FG_CTR_NNTP_ARTICLES], 3);
	ck_assert_uint_eq(ws->peer_delay[ia].propagation_delay.count, 1);
	ck_assert_int_eq(fg_slotlink_region_peer(W.sl, 2), fg_region_peer_index(W.r, "gamma"));
	/* refused: nothing switched, the array zeroed (its counts are in the base) */
	was = T.peer_stats;
	ck_assert_int_eq(fg_slotlink_switch(W.sl, T.e, more, bad, &T.peer_stats, &fresh), -EINVAL);
	ck_assert_ptr_eq(T.peer_stats, was);
	ck_assert_uint_eq(T.peer_stats[0].s.ctr[FG_CTR_NNTP_ARTICLES], 0);
	fg_slotlink_publish(W.sl, &total, T.peer_stats, more->n_peer, false);
	ck_assert_uint_eq(ws->peer[ia].ctr[FG_CTR_NNTP_ARTICLES], 3);
	/* without a slot: the engine alone */
	ck_assert_int_eq(fg_slotlink_switch(NULL, T.e, more, T.cfg, &T.peer_stats, &fresh), 0);
	down(&W);
	fg_th_fini(&T);
	free(fresh);
	fg_config_free(more);
	fg_config_free(bad);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("slotlink");
	TCase *t = tcase_create("link");

	tcase_add_test(t, test_journal_records);
	tcase_add_test(t, test_journal_gate);
	tcase_add_test(t, test_verdict_lines);
	tcase_add_test(t, test_publish_across_reload);
	tcase_add_test(t, test_publish_last_seen);
	tcase_add_test(t, test_switch_keeps_counters);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(suite)
