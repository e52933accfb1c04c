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
 * 802.3ad: the bonding PMD's LACP state machines run on an alarm, but
 * its LACPDUs go out and come in only inside the bond's TX and RX
 * bursts, at least one every 100 ms. A worker on an 802.3ad bond
 * (dp_bond_lacp) therefore calls a TX burst every pass, empty when it
 * has nothing to send (port.c), and never idles longer than
 * DP_LACP_POLL_NS (worker.c). The bonding PMD drops multicast, broadcast
 * included, unless the bond is all-multicast (or promiscuous): without it
 * no ARP request would reach us, so the bond is made all-multicast
 * (dp_bond_start), and said when its members cannot (memif). Each member's LACP actor state is
 * published with its figures (nic.c: collecting and distributing, or
 * not).
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

bool dp_bond_lacp(const struct dp *dp)
{
	return dp->n_members && rte_eth_bond_mode_get(dp->port_id) == BONDING_MODE_8023AD;
}

void dp_bond_start(struct dp *dp)
{
	struct rte_ether_addr mac;

	if (!dp->n_members || dp->passive)
		return;
	/* the bond takes its primary member's MAC when it starts, unless it
	 * was given one through its own API: ours, again, or the bonding
	 * PMD's filter (802.3ad) drops every frame sent to it */
	memcpy(mac.addr_bytes, dp->mac, sizeof(mac.addr_bytes));
	if (rte_eth_bond_mac_address_set(dp->port_id, &mac) != 0)
		FG_LOG_WARN(DP, "bonded port %u: cannot take our MAC address", dp->port_id);
	if (!dp_bond_lacp(dp))
		return;
	if (rte_eth_allmulticast_enable(dp->port_id) == 0 ||
	    rte_eth_promiscuous_get(dp->port_id) == 1)
		return;
	FG_LOG_WARN(DP, "802.3ad bond %u: no member takes all-multicast, so the bond drops "
		    "every broadcast and multicast frame (ARP requests, IPv6 neighbour "
		    "solicitations): neighbours must be given our MAC", dp->port_id);
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
