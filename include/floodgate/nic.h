/* SPDX-License-Identifier: MIT */
/*
 * nic.h — the port's own figures (tbl/nic.h) as the dataplane publishes
 * them in floodctld's region: one block per dataplane, in the writer slot
 * of its worker 0, written by its main lcore, read by floodctld's stats
 * export and `floodctl status`.
 *
 * A block lists up to FG_NIC_MAX_PORTS ports: the port floodgate runs on
 * first (role "port"), then, on a bonded port, each member (role
 * "member"), so each member's link and counters are seen apart. Each port
 * has its figures and those of its first FG_NIC_MAX_QUEUES queues (DPDK's
 * RTE_ETHDEV_QUEUE_STAT_CNTRS: the per-queue figures rte_eth_stats has).
 *
 * Publication: the writer fills the names and queue counts, then stores
 * n_ports with release; after that it updates the figures in place with
 * plain aligned 64-bit stores, as every counter block of the region is
 * (a reader sees each figure whole, perhaps one update old, never torn).
 * A reader loads n_ports with acquire and copies (fg_region_nic_read).
 */
#ifndef FLOODGATE_NIC_H
#define FLOODGATE_NIC_H

#include <stdint.h>

#include "floodgate/common.h"

#define FG_NIC_MAX_PORTS 4
#define FG_NIC_MAX_QUEUES 16
#define FG_NIC_NAME_MAX 32

enum fg_nic_kind { FG_NIC_COUNTER = 0, FG_NIC_GAUGE = 1 };

enum fg_nic_port_ctr {
#define FG_NIC_PORT(id, name, kind, help) FG_NIC_##id,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_PORT
	FG_NIC__COUNT
};

enum fg_nic_queue_ctr {
#define FG_NIC_QUEUE(id, name, help) FG_NICQ_##id,
#include "floodgate/tbl/nic.h"
#undef FG_NIC_QUEUE
	FG_NICQ__COUNT
};

enum fg_nic_role { FG_NIC_ROLE_PORT = 0, FG_NIC_ROLE_MEMBER = 1 };

/* FG_NIC_LACP_STATE's bits (IEEE 802.1AX actor state) of a member that
 * carries traffic: collecting and distributing. */
#define FG_NIC_LACP_UP 0x30u

struct fg_nic_port {
	char name[FG_NIC_NAME_MAX];	/* the ethdev's name: net_tap0, 0000:01:00.0 */
	uint32_t role;			/* enum fg_nic_role */
	uint32_t n_rxq, n_txq;		/* queues with figures (at most FG_NIC_MAX_QUEUES) */
	uint32_t reserved;
	uint64_t v[FG_NIC__COUNT];
	uint64_t q[FG_NIC_MAX_QUEUES][FG_NICQ__COUNT];
};

struct fg_nic_block {
	uint32_t n_ports;		/* atomic: 0 = nothing published */
	uint32_t reserved;
	uint64_t reserved2[7];
	struct fg_nic_port port[FG_NIC_MAX_PORTS];
} FG_CACHE_ALIGNED;

/* Exported stem, help and kind of a port figure; NULL/COUNTER out of range. */
const char *fg_nic_name(enum fg_nic_port_ctr c);
const char *fg_nic_help(enum fg_nic_port_ctr c);
enum fg_nic_kind fg_nic_kind(enum fg_nic_port_ctr c);
/* The same for a queue figure (always a counter). */
const char *fg_nicq_name(enum fg_nic_queue_ctr c);
const char *fg_nicq_help(enum fg_nic_queue_ctr c);
/* "port" or "member". */
const char *fg_nic_role_name(uint32_t role);

#endif /* FLOODGATE_NIC_H */
