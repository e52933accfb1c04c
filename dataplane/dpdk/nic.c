/* SPDX-License-Identifier: MIT */
/*
 * nic.c — the port's own figures (tbl/nic.h) into floodctld's region, so
 * that /metrics and `floodctl status` show what the NIC counts next to
 * what floodgate counts.
 *
 * The main lcore reads them, never a worker: every DP_NIC_PUBLISH_NS from
 * its loops (and once more before the workers stop), by
 *   1. rte_eth_stats_get: the port's packets, octets, imissed, ierrors,
 *      oerrors, rx_nombuf, and the per-queue figures DPDK keeps for the
 *      first RTE_ETHDEV_QUEUE_STAT_CNTRS queues;
 *   2. rte_eth_link_get_nowait: link up or down, speed (never waits: a
 *      PMD that has to ask the hardware answers from its last update);
 *   3. the xstats whose names say a transmit drop or discard ("tx" with
 *      "drop" or "discard", not per queue), looked up once at start by
 *      name and read by id: the port's own TX drops, which rte_eth_stats
 *      has no field for;
 *   4. a member of an 802.3ad bond: its LACP actor state
 *      (rte_eth_bond_8023ad_slave_info), collecting and distributing or
 *      not;
 *   5. floodgate's own TX drops per queue: worker i sends on TX queue i,
 *      and what its queue would not take it counts (dp_tx_refused,
 *      net_tx_port_drop), read from the worker's block as report.c does.
 * and writes them in place into the NIC block of worker 0's slot (nic.h:
 * names and queue counts first, then n_ports with release).
 *
 * Ports: [0] is the port floodgate runs on; a bonded port's members
 * follow (bond.c adds them), each with its own link and counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eth_bond.h>
#include <rte_eth_bond_8023ad.h>
#include <rte_ethdev.h>

#include "dp.h"
#include "floodgate/log.h"

static bool is_tx_drop_xstat(const char *name)
{
	return strncmp(name, "tx", 2) == 0 && !strstr(name, "_q") &&
	       (strstr(name, "drop") || strstr(name, "discard"));
}

/* The port's TX drop xstats, by id (step 3). */
static void find_xdrops(struct dp *dp, unsigned p)
{
	uint16_t port = dp->nic.port_id[p];
	int n = rte_eth_xstats_get_names(port, NULL, 0);
	struct rte_eth_xstat_name *names;

	dp->nic.n_xdrop[p] = 0;
	if (n <= 0 || !(names = calloc((size_t)n, sizeof(*names))))
		return;
	if (rte_eth_xstats_get_names(port, names, (unsigned)n) == n) {
		for (int i = 0; i < n && dp->nic.n_xdrop[p] < DP_NIC_XSTATS_MAX; i++) {
			uint64_t id;

			if (is_tx_drop_xstat(names[i].name) &&
			    rte_eth_xstats_get_id_by_name(port, names[i].name, &id) == 0)
				dp->nic.xdrop_id[p][dp->nic.n_xdrop[p]++] = id;
		}
	}
	free(names);
}

static void port_describe(struct dp *dp, unsigned p, enum fg_nic_role role)
{
	struct fg_nic_port *np = &dp->nic.block->port[p];
	struct rte_eth_dev_info di;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t id = dp->nic.port_id[p];

	if (rte_eth_dev_get_name_by_port(id, name) != 0)
		snprintf(name, sizeof(name), "port%u", id);
	memset(np, 0, sizeof(*np));
	/* a longer ethdev name is cut: the label still tells ports apart */
	memcpy(np->name, name, FG_MIN(strlen(name), sizeof(np->name) - 1));
	np->role = role;
	if (rte_eth_dev_info_get(id, &di) == 0) {
		np->n_rxq = FG_MIN((unsigned)di.nb_rx_queues, (unsigned)FG_NIC_MAX_QUEUES);
		np->n_txq = FG_MIN((unsigned)di.nb_tx_queues, (unsigned)FG_NIC_MAX_QUEUES);
	}
	find_xdrops(dp, p);
}

void dp_nic_setup(struct dp *dp)
{
	if (dp->passive || !dp->w || !dp->w[0].slot)
		return;		/* no region: nobody to publish to */
	dp->nic.block = fg_region_writer_nic(dp->w[0].slot);
	dp->nic.port_id[0] = dp->port_id;
	dp->nic.n_ports = 1;
	port_describe(dp, 0, FG_NIC_ROLE_PORT);
	for (unsigned m = 0; m < dp->n_members && dp->nic.n_ports < FG_NIC_MAX_PORTS; m++) {
		dp->nic.port_id[dp->nic.n_ports] = dp->member[m];
		port_describe(dp, dp->nic.n_ports++, FG_NIC_ROLE_MEMBER);
	}
	dp_nic_publish(dp, true);
	__atomic_store_n(&dp->nic.block->n_ports, dp->nic.n_ports, __ATOMIC_RELEASE);
}

/* Floodgate's own drops on TX queue q (step 5). */
static uint64_t queue_drops(const struct dp *dp, unsigned q)
{
	const struct fg_stats *st;

	if (q >= dp->n_workers || !dp->w[q].stats)
		return 0;
	st = &dp->w[q].stats->s;
	return st->ctr[FG_CTR_DP_TX_REFUSED] + st->ctr[FG_CTR_NET_TX_PORT_DROP];
}

_Static_assert(FG_NIC_LACP_UP == (STATE_COLLECTING | STATE_DISTRIBUTING),
	       "FG_NIC_LACP_UP is DPDK's collecting and distributing");

/* A member's LACP actor state (step 4); 0 outside an 802.3ad bond. */
static uint64_t lacp_state(const struct dp *dp, uint16_t member)
{
	struct rte_eth_bond_8023ad_slave_info info;

	if (rte_eth_bond_mode_get(dp->port_id) != BONDING_MODE_8023AD ||
	    rte_eth_bond_8023ad_slave_info(dp->port_id, member, &info) != 0)
		return 0;
	return info.actor_state;
}

static void port_read(struct dp *dp, unsigned p)
{
	struct fg_nic_port *np = &dp->nic.block->port[p];
	uint16_t id = dp->nic.port_id[p];
	struct rte_eth_stats es;
	struct rte_eth_link link;
	uint64_t xv[DP_NIC_XSTATS_MAX], drops = 0;

	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(id, &link) == 0) {
		np->v[FG_NIC_LINK_UP] = link.link_status == RTE_ETH_LINK_UP;
		np->v[FG_NIC_LINK_SPEED] = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ?
						   0 : link.link_speed;
	}
	np->v[FG_NIC_LACP_STATE] = p ? lacp_state(dp, id) : 0;
	if (rte_eth_stats_get(id, &es) == 0) {
		np->v[FG_NIC_RX_PACKETS] = es.ipackets;
		np->v[FG_NIC_RX_BYTES] = es.ibytes;
		np->v[FG_NIC_RX_MISSED] = es.imissed;
		np->v[FG_NIC_RX_NOMBUF] = es.rx_nombuf;
		np->v[FG_NIC_RX_ERRORS] = es.ierrors;
		np->v[FG_NIC_TX_PACKETS] = es.opackets;
		np->v[FG_NIC_TX_BYTES] = es.obytes;
		np->v[FG_NIC_TX_ERRORS] = es.oerrors;
		for (unsigned q = 0; q < np->n_rxq; q++) {
			np->q[q][FG_NICQ_RX_PACKETS] = es.q_ipackets[q];
			np->q[q][FG_NICQ_RX_BYTES] = es.q_ibytes[q];
			np->q[q][FG_NICQ_RX_ERRORS] = es.q_errors[q];
		}
		for (unsigned q = 0; q < np->n_txq; q++) {
			np->q[q][FG_NICQ_TX_PACKETS] = es.q_opackets[q];
			np->q[q][FG_NICQ_TX_BYTES] = es.q_obytes[q];
		}
	}
	/* floodgate's queues are the bonded port's, not a member's */
	for (unsigned q = 0; p == 0 && q < np->n_txq; q++) {
		np->q[q][FG_NICQ_TX_DROPPED] = queue_drops(dp, q);
		drops += np->q[q][FG_NICQ_TX_DROPPED];
	}
	if (dp->nic.n_xdrop[p] &&
	    rte_eth_xstats_get_by_id(id, dp->nic.xdrop_id[p], xv, dp->nic.n_xdrop[p]) ==
		    (int)dp->nic.n_xdrop[p])
		for (unsigned i = 0; i < dp->nic.n_xdrop[p]; i++)
			drops += xv[i];
	np->v[FG_NIC_TX_DROPPED] = drops;
}

void dp_nic_publish(struct dp *dp, bool now)
{
	uint64_t t = fg_mono_ns();

	if (!dp->nic.block || (!now && t < dp->nic.next_ns))
		return;
	dp->nic.next_ns = t + DP_NIC_PUBLISH_NS;
	for (unsigned p = 0; p < dp->nic.n_ports; p++)
		port_read(dp, p);
	if (dp->n_members) {
		bool up[FG_NIC_MAX_PORTS] = { false };

		for (unsigned m = 0; m + 1 < dp->nic.n_ports; m++)
			up[m] = dp->nic.block->port[m + 1].v[FG_NIC_LINK_UP] != 0;
		dp_bond_watch(dp, up);
	}
}

void dp_nic_text(const struct dp *dp, FILE *f)
{
	for (unsigned p = 0; dp->nic.block && p < dp->nic.n_ports; p++) {
		const struct fg_nic_port *np = &dp->nic.block->port[p];

		fprintf(f, "%-10s %s (%s): link %s, %llu Mbit/s; rx %llu, missed %llu, no mbuf %llu, "
			   "errors %llu; tx %llu, errors %llu, dropped %llu\n",
			p ? "member" : "nic", np->name, fg_nic_role_name(np->role),
			np->v[FG_NIC_LINK_UP] ? "up" : "DOWN",
			(unsigned long long)np->v[FG_NIC_LINK_SPEED],
			(unsigned long long)np->v[FG_NIC_RX_PACKETS],
			(unsigned long long)np->v[FG_NIC_RX_MISSED],
			(unsigned long long)np->v[FG_NIC_RX_NOMBUF],
			(unsigned long long)np->v[FG_NIC_RX_ERRORS],
			(unsigned long long)np->v[FG_NIC_TX_PACKETS],
			(unsigned long long)np->v[FG_NIC_TX_ERRORS],
			(unsigned long long)np->v[FG_NIC_TX_DROPPED]);
	}
}
