/* SPDX-License-Identifier: MIT */
/*
 * region.h — the shared-memory region floodctld owns: the history table,
 * one slot per writer (journal ring, verdict-log ring, counters), the peer
 * names and floodctld's own counters.
 *
 * floodctld creates the region (fg_region_create), fills its history slice
 * (fg_history_create or fg_history_restore), then publishes it; writers
 * (floodgate-host, the dataplane's worker lcores, tools/histwriter) attach
 * and claim a slot each. The region outlives every process but the
 * machine: a writer or floodctld that restarts adopts it as it is.
 * control/region/region.c documents the layout byte by byte.
 *
 * Where it lives (enum fg_region_huge, [history] huge-pages): on hugetlbfs
 * when a hugetlbfs is mounted and has enough free huge pages, at
 * "<mount>/<basename of shm-path>"; otherwise at shm-path itself (a tmpfs
 * file, /dev/shm/floodgate by default; huge pages too when that tmpfs is
 * mounted with huge=). Attach looks in both places, hugetlbfs first.
 *
 * What attach refuses, with a message saying why: a file that is not a
 * region, another layout version, counters or reasons this build does not
 * know (the schema hash), sizes that do not add up, a region still being
 * built, a history slice the history module refuses, and — for writers —
 * a region whose owner (floodctld) is not running.
 *
 * Writer slots: a writer claims a free slot (-EBUSY when none is free,
 * -EAGAIN while floodctld is clearing a dead dataplane's transient history
 * entries). Its owner is identified by pid and process start time, so a
 * recycled pid is never mistaken for the writer. The slot's index is also
 * the owner its engine writes into its transient history entries
 * (history.h, "Owners"). floodctld reaps slots whose owner died or that
 * were released. A dead owner's transient entries are resolved first,
 * beside the live writers: settled from the outbound queue, journalled
 * through the dead slot's own ring, the rest dropped (fg_region_reap).
 * Then the journal ring is drained (a record is never dropped), the
 * slot's counters are folded into a retired block (counters never go
 * backwards), and the slot is freed — only then can its index name a new
 * owner.
 *
 * Rings are single-producer (the slot's writer thread) single-consumer
 * (floodctld's ring thread) queues of fixed-size records with free-running
 * 64-bit head and tail counters. The journal's consumer reads ahead of
 * the tail and moves the tail only once what it read is durable: a
 * record leaves the region only when it is on disk, so floodctld may die
 * at any moment without losing one (the next floodctld reads it again).
 */
#ifndef FLOODGATE_REGION_H
#define FLOODGATE_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/nic.h"
#include "floodgate/stats.h"

/* 2: per-peer delay histograms (peer_delay) after the per-peer counters;
 * 3: verdict-log records carry the remote address and port (vlog.h) */
#define FG_REGION_LAYOUT 3
/* one less than the owners a history token can name: FG_HISTORY_OWNER_NONE */
#define FG_REGION_MAX_WRITERS FG_HISTORY_OWNER_NONE
/* Peer names a region can label counters with, over its whole life. */
#define FG_REGION_PEERS FG_CONFIG_MAX_PEERS
#define FG_REGION_NAME_MAX 32
/* Record sizes of the two rings (journal.h, vlog.h). */
#define FG_REGION_JREC_SIZE 32u
#define FG_REGION_VREC_SIZE 512u

struct fg_region;
struct fg_region_writer;

enum fg_region_ring {
	FG_RING_JOURNAL = 0,	/* struct fg_jrec: never dropped */
	FG_RING_VLOG = 1,	/* struct fg_vrec: dropped (and counted) when full */
	FG_RING__COUNT
};

/* Seed 002: Injection-Date - Date (offline wait before entry), and
 * arrival - Injection-Date (network propagation), in seconds. */
struct fg_region_delays {
	struct fg_hist injection_delay;
	struct fg_hist propagation_delay;
};

/* A writer's counters, in its slot. Plain increments by the writer. */
struct fg_region_wstats {
	struct fg_stats total;
	struct fg_hist injection_delay FG_CACHE_ALIGNED;
	struct fg_hist propagation_delay FG_CACHE_ALIGNED;
	/* by peer index (fg_region_peer_index): counters, and the delays of
	 * the articles each peer brought (layout 2) */
	struct fg_stats peer[FG_REGION_PEERS];
	struct fg_region_delays peer_delay[FG_REGION_PEERS];
	/* by peer index: when its last command was read (Unix time; 0:
	 * none). Last, because it is the one field that sums as the
	 * maximum (of the slots and the retired block), not by adding. */
	fg_time_t peer_last_seen[FG_REGION_PEERS];
};

/* Where a new region's pages come from ([history] huge-pages). */
enum fg_region_huge {
	FG_REGION_HUGE_AUTO = 0,	/* hugetlbfs if mounted with room, else shm-path; silent */
	FG_REGION_HUGE_OFF,		/* shm-path, small pages */
	FG_REGION_HUGE_HUGETLBFS,	/* hugetlbfs (2M or 1G pages: the mount's size); else
					 * shm-path, said in one log line */
	FG_REGION_HUGE_TMPFS,		/* shm-path on a tmpfs mounted with huge=always or
					 * huge=within_size; else small pages, said in one line */
};

struct fg_region_params {
	size_t history_size;	/* bytes of the history slice (fg_history_region_size) */
	enum fg_region_huge huge;
	unsigned writers;	/* slots, 1..FG_REGION_MAX_WRITERS */
	uint32_t journal_ring;	/* records per slot: a power of two, 64..2^24 */
	uint32_t vlog_ring;	/* lines per slot: a power of two, 16..2^20 */
	uint8_t seed[FG_HISTORY_SEED_LEN];	/* the history table's seed */
};

/* Defaults floodctld uses: enough ring for several seconds of a full
 * feed's new articles per writer while the journal's disk stalls. */
#define FG_REGION_JOURNAL_RING_DEFAULT (1u << 17)
#define FG_REGION_VLOG_RING_DEFAULT (1u << 12)
#define FG_REGION_WRITERS_MIN 8

/* Bytes a region with these parameters needs (before huge-page rounding);
 * 0 if a parameter is out of range. */
size_t fg_region_size(const struct fg_region_params *p);

/* The header page (FG_REGION_HEADER octets) fg_region_create writes for
 * these parameters, state BUILDING, no owner, no seed check yet.
 * 0, or -EINVAL (parameters out of range, len too small). */
#define FG_REGION_HEADER 4096u
int fg_region_header_encode(const struct fg_region_params *p, fg_time_t created, void *out,
			    size_t len);
/* Is this header page one this build shares a region with? 0; -EINVAL
 * with *why (not a region, damaged); -EPROTONOSUPPORT with *why: another
 * layout version, or counter tables of another build (docs/compat.md: a
 * region is only shared by builds that agree on both; floodctld rebuilds
 * one it cannot adopt from the data directory, writers refuse it). */
int fg_region_header_check(const void *hdr, size_t len, const char **why);

/* ---- floodctld: create, adopt, publish ---- */

/*
 * Create a new region for shm_path (any old file there, or on hugetlbfs,
 * is unlinked first), owned by this process, in state BUILDING: attach
 * refuses it until fg_region_publish. The caller fills the history slice
 * (fg_region_history_mem) and hands the handle to fg_region_set_history.
 * NULL with a message in why.
 */
struct fg_region *fg_region_create(const char *shm_path, const struct fg_region_params *p,
				   char *why, size_t whylen);

/*
 * Open an existing region as its new owner (floodctld restarted).
 * Returns NULL and *err:
 *   -ENOENT  no region there
 *   -EBUSY   its owner is alive (another floodctld runs)
 *   -EINVAL  a region this build does not understand, or one left
 *            half-built; `why` says which
 * On success the owner is this process; the caller must still publish.
 */
struct fg_region *fg_region_adopt(const char *shm_path, int *err, char *why, size_t whylen);

/* The history slice, for fg_history_create / fg_history_restore. */
void *fg_region_history_mem(struct fg_region *r, size_t *len);
/* Record the table now in the slice (the handle becomes the region's).
 * Computes and stores the seed check. 0 or -EINVAL (seed mismatch). */
int fg_region_set_history(struct fg_region *r, struct fg_history *h);
/* Mark the region usable by writers. */
void fg_region_publish(struct fg_region *r);
/* Bump the owner's heartbeat (floodctld's ring thread, every pass). */
void fg_region_owner_heartbeat(struct fg_region *r);

/* Unlink the region's file (tests; a region nobody wants any more). */
int fg_region_unlink(const char *shm_path);

/* ---- anyone: attach, inspect ---- */

/* Attach as a writer or reader: refuses a region it does not understand,
 * one not yet published, or one whose owner is not running. */
struct fg_region *fg_region_attach(const char *shm_path, char *why, size_t whylen);

/* Is floodctld building (restoring) the region at shm_path right now: a
 * region this build reads, state BUILDING, its owner alive? A writer that
 * cannot attach yet waits while this holds (floodgate-host greets new
 * sessions with 400 meanwhile). */
bool fg_region_restoring(const char *shm_path);
/* Unmap and free the handle (a claimed slot must be released first). */
void fg_region_close(struct fg_region *r);

struct fg_history *fg_region_history(const struct fg_region *r);
const char *fg_region_path(const struct fg_region *r);
size_t fg_region_mapped_size(const struct fg_region *r);
bool fg_region_hugepages(const struct fg_region *r);
/* The page size backing the region: 4096, or the huge page size. */
uint64_t fg_region_page_size(const struct fg_region *r);
unsigned fg_region_nslots(const struct fg_region *r);
uint32_t fg_region_ring_capacity(const struct fg_region *r, enum fg_region_ring which);
void fg_region_seed(const struct fg_region *r, uint8_t seed[FG_HISTORY_SEED_LEN]);
/* The check value of a seed: the key of a fixed string under that seed.
 * Journal segments and snapshots carry it, so a table can be matched to
 * them through the public hash alone. */
void fg_region_seed_check(const struct fg_history *h, struct fg_history_key *out);
fg_time_t fg_region_created(const struct fg_region *r);
pid_t fg_region_owner(const struct fg_region *r);
/* True when the process with this pid and start time is alive. */
bool fg_region_proc_alive(pid_t pid, uint64_t start);
/* Start time of a process (clock ticks since boot, /proc/PID/stat field
 * 22), 0 if there is no such process. */
uint64_t fg_region_proc_start(pid_t pid);

/* Peer names: index of `name`, or -ENOENT. Stable for the region's life. */
int fg_region_peer_index(const struct fg_region *r, const char *name);
const char *fg_region_peer_name(const struct fg_region *r, unsigned idx);
unsigned fg_region_npeers(const struct fg_region *r);
/* floodctld: add every name not yet known (from the config, at start and
 * on reload). Returns how many were added, or -ENOSPC when the table is
 * full (the names that fit are added). */
int fg_region_add_peers(struct fg_region *r, const char *const *names, unsigned n);

/* The verdict log is on (floodctld sets it from the config); writers skip
 * the work when it is off. */
void fg_region_set_vlog(struct fg_region *r, bool on);
bool fg_region_vlog_on(const struct fg_region *r);

/* floodctld's own counters (in the region, so they survive its restarts). */
struct fg_stats *fg_region_ctld_stats(struct fg_region *r);

/* Each peer's sessions open now (out[0..n), by peer index): sessions
 * opened less closed over the live slots only. A dead writer's sessions
 * died with it, though its counters (in the sum) never closed them. */
void fg_region_live_sessions(struct fg_region *r, uint64_t *out, unsigned n);

/* Sum of every slot's counters, the retired block and floodctld's own
 * block. Serialised against fg_region_reap in this process, so a sum never
 * counts a slot twice or not at all. */
void fg_region_sum(struct fg_region *r, struct fg_region_wstats *out);

/* ---- writers ---- */

/* Claim a free slot, labelled `name` (shown by floodctl status). NULL and
 * *err: -EBUSY no free slot, -EAGAIN floodctld is clearing transient
 * entries (retry shortly), -EINVAL bad name. One thread uses a slot. */
struct fg_region_writer *fg_region_claim(struct fg_region *r, const char *name, int *err);
/* Give the slot back; floodctld drains its rings, then frees it. */
void fg_region_release(struct fg_region_writer *w);
unsigned fg_region_writer_slot(const struct fg_region_writer *w);
/* Give up a handle without touching the slot (an adopted dead slot's). */
void fg_region_writer_free(struct fg_region_writer *w);
struct fg_region *fg_region_writer_region(const struct fg_region_writer *w);
struct fg_region_wstats *fg_region_writer_stats(struct fg_region_writer *w);
void fg_region_writer_heartbeat(struct fg_region_writer *w);
/* The writer's clock looks wrong (seed 002; the engine decides): exported
 * as the clock-suspect alarm while any live writer says so. */
void fg_region_writer_clock_suspect(struct fg_region_writer *w, bool suspect);
/* The slot's NIC block (nic.h), for the dataplane's main lcore to fill. */
struct fg_nic_block *fg_region_writer_nic(struct fg_region_writer *w);

/*
 * Producer side of a slot's ring. reserve() sets room aside for one record
 * that a later push() is then sure to place (the engine reserves before it
 * answers, so a final history transition always finds its journal room).
 * push() uses a reservation if one is held, else free room.
 *   0 placed / reserved, -ENOSPC full (journal: defer; verdict log: drop).
 */
int fg_region_ring_reserve(struct fg_region_writer *w, enum fg_region_ring which);
void fg_region_ring_unreserve(struct fg_region_writer *w, enum fg_region_ring which);
int fg_region_ring_push(struct fg_region_writer *w, enum fg_region_ring which,
			const void *rec);
/* Records pushed so far by this claim (the next push's sequence number). */
uint64_t fg_region_ring_pushed(const struct fg_region_writer *w, enum fg_region_ring which);
/* Journal records of this claim that floodctld has made durable (the
 * journal ring's tail). */
uint64_t fg_region_writer_committed(const struct fg_region_writer *w);

/* ---- floodctld: consumer side, slot reaping ---- */

enum fg_region_slot_state {
	FG_SLOT_FREE = 0,
	FG_SLOT_CLAIMING = 1,	/* a writer is initialising it */
	FG_SLOT_LIVE = 2,
	FG_SLOT_RELEASED = 3,	/* given back; floodctld drains and frees it */
	FG_SLOT_DEAD = 4,	/* its owner died; floodctld drains and frees it */
};

struct fg_region_slot_info {
	enum fg_region_slot_state state;
	pid_t pid;
	char name[FG_REGION_NAME_MAX];
	uint64_t generation;		/* claims of this slot so far */
	fg_time_t claimed;		/* Unix seconds of the claim */
	uint64_t heartbeat_age_ns;	/* UINT64_MAX: never */
	uint64_t pushed[FG_RING__COUNT];
	uint64_t consumed[FG_RING__COUNT];	/* journal: records durable */
	bool clock_suspect;
	/* a polling writer's loop (floodgate's workers): TSC cycles of
	 * passes with work and without (its counters dp_busy_cycles and
	 * dp_idle_cycles); both 0 for writers that do not count them */
	uint64_t busy_cycles, idle_cycles;
};

const char *fg_region_slot_state_name(enum fg_region_slot_state s);
int fg_region_slot_info(const struct fg_region *r, unsigned slot,
			struct fg_region_slot_info *out);

/* Up to `max` records of slot's ring from sequence `from` (between its
 * tail and head), contiguous in memory: *recs points at the first.
 * Returns the count (0: nothing there, or the slot is free). */
unsigned fg_region_ring_peek(const struct fg_region *r, unsigned slot,
			     enum fg_region_ring which, uint64_t from, const void **recs,
			     unsigned max);
/* Records before `upto` are done with (journal: durable): their room goes
 * back to the writer. */
void fg_region_ring_release(struct fg_region *r, unsigned slot, enum fg_region_ring which,
			    uint64_t upto);
uint64_t fg_region_ring_tail(const struct fg_region *r, unsigned slot,
			     enum fg_region_ring which);
/* Claims of the slot so far, in *gen: a consumer's read-ahead cursor is
 * only good for the claim it was taken in. False while the slot is free or
 * being claimed: a claim bumps the generation before its owner word turns
 * LIVE (release) and writes no record before that, so a consumer that
 * reads a ring only after a true answer never copies a new claim's
 * records under the previous claim's cursor. */
bool fg_region_slot_generation(const struct fg_region *r, unsigned slot, uint64_t *gen);

/*
 * How floodctld settles a dead owner's ACCEPTING entries (history.h, "a
 * writer that died"): settle(arg, w, owner, since) makes those whose
 * article is durable ACCEPTED and journals each through `w`, the dead
 * slot's own rings adopted for the purpose; `since` is when the slot was
 * claimed (nothing of the owner's is older). It returns 0 when done,
 * -EAGAIN to be called again at the next reap (its ring was full: the
 * records ahead must drain first), or another -errno: then the entries
 * are dropped unsettled, logged as an error.
 */
struct fg_region_resolver {
	int (*settle)(void *arg, struct fg_region_writer *w, unsigned owner, fg_time_t since);
	void *arg;
};

/*
 * Mark LIVE slots whose owner died as DEAD (logged); resolve each DEAD
 * slot's transient history entries once (`res` may be NULL: drop them
 * unsettled, for a region without a queue); and free every DEAD or
 * RELEASED slot that is resolved and whose journal ring is empty, i.e.
 * all its records are durable (undelivered verdict-log lines are dropped
 * and counted). Returns the number of slots freed; *dead (may be NULL)
 * receives how many of them had died rather than been released.
 */
unsigned fg_region_reap(struct fg_region *r, unsigned *dead, const struct fg_region_resolver *res);

/* A copy of slot's NIC block: 0, or -ENOENT when the slot is not live or
 * nothing was published in it (nic.h says how the copy is taken). */
int fg_region_nic_read(const struct fg_region *r, unsigned slot, struct fg_nic_block *out);

/* Live (non-free) slots. */
unsigned fg_region_live_writers(const struct fg_region *r);

/*
 * When no slot is in use, bar claims, drop the history's OFFERED and
 * ACCEPTING entries (their sessions died with their writer), reopen.
 * Returns the entries dropped, or -EBUSY if a writer is live.
 */
int64_t fg_region_clear_transient(struct fg_region *r);

#endif /* FLOODGATE_REGION_H */
