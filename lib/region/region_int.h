/* SPDX-License-Identifier: MIT */
/*
 * region_int.h — the region's layout, private to control/region.
 *
 * REGION (host byte order; every offset from the region start; no
 * pointers, so each process maps it at any address):
 *
 *   offset        size                  content
 *   0             4096                  header (struct fg_rhdr)
 *   peers_off     64 * FG_REGION_PEERS  peer names, NUL-padded
 *   retired_off   sizeof wstats         counters of slots since freed
 *   ctld_off      sizeof fg_stats       floodctld's own counters
 *   history_off   history_size          the history table (history.h)
 *   slots_off     slot_size * n_slots   writer slots
 *
 * Every part starts on a 4096-byte boundary; the file is rounded up to
 * the huge page size on hugetlbfs.
 *
 * HEADER (struct fg_rhdr):
 *
 *   off  size  field
 *   0    8     magic "FGREGION"
 *   8    4     layout version (FG_REGION_LAYOUT)
 *   12   4     header size (4096)
 *   16   8     region size (the file's size)
 *   24   8     schema hash: FNV-1a 64 of the counter and reason tables and
 *              the sizes of the counter blocks; a build whose tables differ
 *              does not understand the slots' counters and refuses
 *   32   4     state (atomic): 0 BUILDING, 1 READY
 *   36   4     flags: bit 0 = on hugetlbfs, bit 1 = on a tmpfs with huge=
 *   40   8     created (fg_time_t)
 *   48   4     owner pid (atomic)
 *   52   4     reserved
 *   56   8     owner start time, clock ticks since boot (atomic)
 *   64   8     owner heartbeat, CLOCK_MONOTONIC ns (atomic)
 *   72   16    history seed
 *   88   16    seed check: fg_region_seed_check() of the table
 *   104  8     history_off       112  8  history_size
 *   120  4     n_slots           124  4  journal ring records
 *   128  4     verdict-log ring lines    132  4  reserved
 *   136  8     slots_off         144  8  slot_size
 *   152  8     peers_off         160  8  retired_off
 *   168  8     ctld_off
 *   176  4     n_peers (atomic)  180  4  verdict log on (atomic)
 *   184  8     writers (atomic): bits 0..31 slots not FREE, bit 63 = claims
 *              barred while floodctld clears transient history entries
 *   192  3904  reserved (zero)
 *
 * SLOT (slot_size bytes, a multiple of 4096):
 *
 *   0     128   control (struct fg_rslot): state and owner pid (one
 *               word), owner start time, heartbeat, generation,
 *               clock-suspect flag, name
 *   128   64    journal ring head (producer's line)
 *   192   64    journal ring tail: records durable (consumer's line)
 *   256   64    verdict-log ring head
 *   320   64    verdict-log ring tail
 *   384   ...   counters (struct fg_region_wstats), 64-aligned: totals,
 *               the two delay histograms, counters by peer, (layout 2)
 *               the two delay histograms by peer and (layout 4) each
 *               peer's last-seen time
 *   nic_off     the port's figures (struct fg_nic_block, nic.h): filled
 *               only in a dataplane's worker-0 slot, by its main lcore
 *   jring_off   journal ring: records of FG_REGION_JREC_SIZE
 *   vring_off   verdict-log ring: lines of FG_REGION_VREC_SIZE (struct
 *               fg_vrec; layout 3 added the remote's address and port)
 *
 * Head and tail are free-running counts of records pushed and released
 * (head - tail = records the writer cannot reuse yet). The producer writes
 * a record, then stores head with release; the consumer loads head with
 * acquire, reads (the journal's consumer keeps its own cursor ahead of
 * the tail), then stores tail with release once done: the classic SPSC
 * ring, with the release deferred until the records are durable.
 */
#ifndef FLOODGATE_REGION_INT_H
#define FLOODGATE_REGION_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/region.h"

#define FG_RMAGIC "FGREGION"
#define FG_RHEADER 4096u
#define FG_RPAGE 4096u
#define FG_RSTATE_BUILDING 0u
#define FG_RSTATE_READY 1u
#define FG_RFLAG_HUGE 1u
#define FG_RFLAG_THP 2u		/* on a tmpfs mounted with huge= */
#define FG_RGATE (1ull << 63)
#define FG_RPEER_NAME 64u

struct fg_rhdr {
	char magic[8];
	uint32_t layout;
	uint32_t header_size;
	uint64_t region_size;
	uint64_t schema;
	_Atomic uint32_t state;
	uint32_t flags;
	int64_t created;
	_Atomic int32_t owner_pid;
	uint32_t reserved0;
	_Atomic uint64_t owner_start;
	_Atomic uint64_t owner_heartbeat;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	uint64_t seed_check[2];
	uint64_t history_off;
	uint64_t history_size;
	uint32_t n_slots;
	uint32_t jring;
	uint32_t vring;
	uint32_t reserved1;
	uint64_t slots_off;
	uint64_t slot_size;
	uint64_t peers_off;
	uint64_t retired_off;
	uint64_t ctld_off;
	_Atomic uint32_t n_peers;
	_Atomic uint32_t vlog_on;
	_Atomic uint64_t writers;
	uint8_t reserved2[FG_RHEADER - 192];
};
_Static_assert(sizeof(struct fg_rhdr) == FG_RHEADER, "header is one page");
_Static_assert(__builtin_offsetof(struct fg_rhdr, seed) == 72, "layout");
_Static_assert(__builtin_offsetof(struct fg_rhdr, history_off) == 104, "layout");
_Static_assert(__builtin_offsetof(struct fg_rhdr, slots_off) == 136, "layout");
_Static_assert(__builtin_offsetof(struct fg_rhdr, n_peers) == 176, "layout");
_Static_assert(__builtin_offsetof(struct fg_rhdr, writers) == 184, "layout");

/* The slot's state and its owner's pid in one word, so that a claim
 * names its owner in the same atomic step that takes the slot. */
struct fg_rslot {
	_Atomic uint64_t owner;		/* state | pid << 32 */
	_Atomic uint64_t start;
	_Atomic uint64_t heartbeat;
	_Atomic uint64_t generation;
	_Atomic uint32_t clock_suspect;
	_Atomic uint32_t resolved;	/* floodctld settled and dropped a dead owner's entries */
	_Atomic int64_t claimed;	/* Unix seconds of the claim */
	uint8_t reserved1[16];
	char name[FG_REGION_NAME_MAX];
	uint8_t reserved2[32];
};
_Static_assert(sizeof(struct fg_rslot) == 128, "slot control is two lines");

struct fg_rprod {
	_Atomic uint64_t head;
	uint8_t pad[56];
};

struct fg_rcons {
	_Atomic uint64_t tail;
	uint8_t pad[56];
};

struct fg_rslot_lines {
	struct fg_rslot ctl;
	struct fg_rprod jprod;
	struct fg_rcons jcons;
	struct fg_rprod vprod;
	struct fg_rcons vcons;
};
_Static_assert(sizeof(struct fg_rslot_lines) == 384, "slot lines");

#define FG_RSTATS_OFF 384u

/* Process-local handle. */
struct fg_region {
	struct fg_rhdr *hdr;
	uint8_t *base;
	size_t len;
	int fd;
	bool huge;
	bool owner;
	uint64_t page;			/* backing page size */
	struct fg_history *h;
	pthread_mutex_t sum_lock;	/* fg_region_sum vs fg_region_reap */
	uint64_t jring_off, vring_off;	/* within a slot */
	char path[PATH_MAX];
};

struct fg_region_writer {
	struct fg_region *r;
	unsigned idx;
	uint64_t head[FG_RING__COUNT];
	uint64_t tail_seen[FG_RING__COUNT];
	uint32_t reserved[FG_RING__COUNT];
};

static inline uint64_t fg_rowner(uint32_t state, int32_t pid)
{
	return (uint64_t)state | (uint64_t)(uint32_t)pid << 32;
}

static inline uint32_t fg_rowner_state(uint64_t owner)
{
	return (uint32_t)owner;
}

static inline int32_t fg_rowner_pid(uint64_t owner)
{
	return (int32_t)(uint32_t)(owner >> 32);
}

static inline struct fg_rslot_lines *fg_rslot_at(const struct fg_region *r, unsigned i)
{
	return (struct fg_rslot_lines *)(r->base + r->hdr->slots_off + (uint64_t)i * r->hdr->slot_size);
}

static inline struct fg_region_wstats *fg_rslot_stats(const struct fg_region *r, unsigned i)
{
	return (struct fg_region_wstats *)((uint8_t *)fg_rslot_at(r, i) + FG_RSTATS_OFF);
}

/* The NIC block follows the counters, on its own cache line. */
#define FG_RNIC_OFF ((FG_RSTATS_OFF + sizeof(struct fg_region_wstats) + 63u) / 64u * 64u)

static inline struct fg_nic_block *fg_rslot_nic(const struct fg_region *r, unsigned i)
{
	return (struct fg_nic_block *)((uint8_t *)fg_rslot_at(r, i) + FG_RNIC_OFF);
}

/* Slot layout shared by region.c (sizes) and slot.c (access). */
uint64_t fg_rslot_jring_off(void);
uint64_t fg_rslot_vring_off(uint32_t jring);
uint64_t fg_rslot_size(uint32_t jring, uint32_t vring);
uint64_t fg_rschema(void);

#endif /* FLOODGATE_REGION_INT_H */
