/* SPDX-License-Identifier: MIT */
/*
 * bond.c — a bonded port: DPDK's bonding PMD (net_bonding) is the port
 * floodgate runs on, its members are the links.
 *
 * Nothing here drives the bond: `[dataplane] port` names it with its
 * devargs (mode, members, primary), `eal-args` creates the members
 * (PCI devices, or --vdev ports), and the bonding PMD moves traffic
 * between them (active-backup: to the next member whose link is up;
 * 802.3ad: LACP). What floodgate adds is sight of each member: their
 * ports are found from the devargs ("slave=NAME", DPDK 22.11's word, or
 * "member=NAME", later releases') and their link and counters published
 * beside the bond's (nic.c), so /metrics and `floodctl status` show a
 * member that went down while the bond stays up.
 *
 * Link watch (active-backup): the bond moves off a member when the member
 * raises a link-state event. DPDK 22.11's tap PMD answers a link query
 * from the kernel side's flags but raises no event, so a bond of taps
 * would keep sending into a dead member. The main lcore reads every
 * member's link anyway (nic.c, every DP_NIC_PUBLISH_NS); when the
 * primary's is down and another's is up, it makes that one the primary
 * (rte_eth_bond_primary_set), logged. With NICs, whose events reach the
 * bond first, this finds nothing to do.
 */
#include <string.h>

#include <rte_eth_bond.h>
#include <rte_ethdev.h>

#include "dp.h"
#include "floodgate/log.h"

#define BOND_DRIVER "net_bonding"

void dp_bond_members(struct dp *dp, const char *port, const char *driver)
{
	char buf[FG_CONFIG_PATH_MAX], *save = NULL;
	const char *args = strchr(port, ',');

	dp->n_members = 0;
	if (strcmp(driver, BOND_DRIVER) != 0 || !args)
		return;
	snprintf(buf, sizeof(buf), "%s", args + 1);
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		const char *name = NULL;
		uint16_t id;

		if (strncmp(kv, "slave=", 6) == 0)
			name = kv + 6;
		else if (strncmp(kv, "member=", 7) == 0)
			name = kv + 7;
		if (!name || dp->n_members == FG_ARRAY_SIZE(dp->member))
			continue;
		if (rte_eth_dev_get_port_by_name(name, &id) != 0) {
			FG_LOG_WARN(DP, "bonded port: member %s is not a port (its figures are "
				    "not shown)", name);
			continue;
		}
		dp->member[dp->n_members++] = id;
	}
	FG_LOG_NOTICE(DP, "port %u is a bond of %u members", dp->port_id, dp->n_members);
}

void dp_bond_watch(struct dp *dp, const bool *member_up)
{
	int primary;

	if (!dp->n_members || rte_eth_bond_mode_get(dp->port_id) != BONDING_MODE_ACTIVE_BACKUP)
		return;
	primary = rte_eth_bond_primary_get(dp->port_id);
	for (unsigned m = 0; m < dp->n_members; m++) {
		if (dp->member[m] != primary || member_up[m])
			continue;
		for (unsigned o = 0; o < dp->n_members; o++) {
			if (!member_up[o] || rte_eth_bond_primary_set(dp->port_id, dp->member[o]) != 0)
				continue;
			FG_LOG_NOTICE(DP, "bonded port %u: member %u's link is down; member %u is "
				      "the primary now", dp->port_id, primary, dp->member[o]);
			return;
		}
	}
}
