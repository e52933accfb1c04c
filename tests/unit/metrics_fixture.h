/* SPDX-License-Identifier: MIT */
/*
 * metrics_fixture.h — a fixed stats snapshot the renderers' suites share
 * (test_metrics.c, test_statuspage.c): floodctld's state with two
 * downstreams, a throttle and a pause; a region with two writers, peers
 * "alpha" and `we"ird\name`, delays, a bonded NIC. Header-only.
 */
#ifndef FLOODGATE_TESTS_METRICS_FIXTURE_H
#define FLOODGATE_TESTS_METRICS_FIXTURE_H

#include <check.h>
#include <string.h>

#include "floodgate/levers.h"
#include "floodgate/metrics.h"
#include "floodgate/region.h"
#include "ctl_fixture.h"

static FG_UNUSED void state(struct fg_metrics_state *m)
{
	memset(m, 0, sizeof(*m));
	m->now = 1000000;
	m->started = 999000;
	m->startup = "empty";
	m->journal_commit_age = -1;
	m->snapshot_time = 999500;
	/* two downstreams as the dataplane wrote them 2 s ago */
	m->ds_written = 999998;
	m->n_ds = 2;
	strcpy(m->ds[0].name, "binaries");
	strcpy(m->ds[0].id, "binaries");
	m->ds[0].ready = 2;
	m->ds[0].sent = 120;
	m->ds[0].accepted = 118;
	m->ds[0].not_routed = 40;
	strcpy(m->ds[1].name, "te\"xt");
	strcpy(m->ds[1].id, "text");
	m->ds[1].parked = 1;
	m->ds[1].backlog_bytes = 1048576;
	m->ds[1].lag_records = 350;
	m->ds[1].dropped = 12;
	/* throttled, and alpha paused for 90 s more (levers.journal) */
	m->levers_ok = true;
	ck_assert_int_eq(fg_levers_throttle(&m->levers, "disk \"full\""), 0);
	ck_assert_int_eq(fg_levers_pause(&m->levers, "alpha", m->now + 90), 0);
}

/* What a dataplane's main lcore publishes (nic.h): an 802.3ad bonded port
 * whose name needs escaping, two queues, one member whose link is down
 * (LACP defaulted, not distributing), one carrying traffic. */
static FG_UNUSED void publish_nic(struct fg_region_writer *w)
{
	struct fg_nic_block *b = fg_region_writer_nic(w);

	strcpy(b->port[0].name, "net_\"bond0");
	b->port[0].role = FG_NIC_ROLE_PORT;
	b->port[0].n_rxq = 2;
	b->port[0].n_txq = 2;
	b->port[0].v[FG_NIC_LINK_UP] = 1;
	b->port[0].v[FG_NIC_LINK_SPEED] = 10000;
	b->port[0].v[FG_NIC_RX_PACKETS] = 1000;
	b->port[0].v[FG_NIC_RX_MISSED] = 7;
	b->port[0].v[FG_NIC_TX_DROPPED] = 3;
	b->port[0].q[1][FG_NICQ_RX_PACKETS] = 600;
	b->port[0].q[1][FG_NICQ_TX_DROPPED] = 3;
	strcpy(b->port[1].name, "net_tap1");
	b->port[1].role = FG_NIC_ROLE_MEMBER;
	b->port[1].n_rxq = 1;
	b->port[1].n_txq = 1;
	b->port[1].v[FG_NIC_RX_PACKETS] = 400;
	b->port[1].v[FG_NIC_LACP_STATE] = 0x47;
	strcpy(b->port[2].name, "net_tap2");
	b->port[2].role = FG_NIC_ROLE_MEMBER;
	b->port[2].v[FG_NIC_LINK_UP] = 1;
	b->port[2].v[FG_NIC_LACP_STATE] = 0x3f;
	__atomic_store_n(&b->n_ports, 3, __ATOMIC_RELEASE);
}

/* A region with two writers and peers "alpha" and `we"ird\name`. */
static FG_UNUSED struct fg_region *workload(struct ctl_fixture *fx, struct fg_region_writer **w)
{
	struct fg_region *r = fx_region(fx, 1000, 4, 64);
	const char *peers[] = { "alpha", "we\"ird\\name" };
	int err;

	ck_assert_int_eq(fg_region_add_peers(r, peers, 2), 2);
	for (int i = 0; i < 2; i++) {
		struct fg_region_wstats *s;

		w[i] = fg_region_claim(r, "t", &err);
		ck_assert_ptr_nonnull(w[i]);
		s = fg_region_writer_stats(w[i]);
		s->total.ctr[FG_CTR_RULES_ACCEPTED] += 10;
		s->total.rejected[FG_REASON_TOO_OLD] += 3;
		s->peer[i].ctr[FG_CTR_RULES_ACCEPTED] += 10;
		s->peer[i].rejected[FG_REASON_TOO_OLD] += 3;
		fg_hist_add(&s->injection_delay, 0);
		fg_hist_add(&s->injection_delay, 5);
		fg_hist_add(&s->injection_delay, -2);
		fg_hist_add(&s->propagation_delay, 100);
	}
	/* the first writer is a polling worker, busy a quarter of its loop */
	fg_region_writer_stats(w[0])->total.ctr[FG_CTR_DP_BUSY_CYCLES] = 1000;
	fg_region_writer_stats(w[0])->total.ctr[FG_CTR_DP_IDLE_CYCLES] = 3000;
	/* seed 002 by peer: alpha's articles an hour on the way, five minutes
	 * offline; one of its four offers first; the other peer offered none */
	{
		struct fg_region_wstats *s = fg_region_writer_stats(w[0]);

		fg_hist_add(&s->peer_delay[0].propagation_delay, 3600);
		fg_hist_add(&s->peer_delay[0].injection_delay, 300);
		s->peer[0].ctr[FG_CTR_NNTP_OFFERS] += 4;
		s->peer[0].ctr[FG_CTR_NNTP_OFFERS_FIRST] += 1;
		/* alpha last seen by the second writer, 5 s ago; the other never */
		s->peer_last_seen[0] = 999990;
		fg_region_writer_stats(w[1])->peer_last_seen[0] = 999995;
	}
	fg_stats_inc(fg_region_ctld_stats(r), FG_CTR_SNAPSHOTS);
	publish_nic(w[1]);
	return r;
}

#endif /* FLOODGATE_TESTS_METRICS_FIXTURE_H */
