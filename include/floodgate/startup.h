/* SPDX-License-Identifier: MIT */
/*
 * startup.h — the start-up and stop steps floodgate (dataplane/dpdk) and
 * floodgate-host (dataplane/host) share, written once.
 *
 * Both programs start in this order; each step below is one call here,
 * the rest (the EAL and the port, the host's --shm file and threads, each
 * program's control socket) stays with the program:
 *
 *   1. the options both take: --sink queue|memory|null
 *      (fg_startup_parse_sink), --log-level (fg_startup_parse_log_level);
 *   2. the configuration: the file given or the embedded default, the log
 *      opened under the program's name, each error logged
 *      (fg_startup_config_load); then the sink the options left open:
 *      the queue when the configuration has a [downstream]
 *      (fg_startup_default_sink);
 *   3. the signals the main thread handles — SIGTERM and SIGINT (stop),
 *      SIGUSR1 (counters), SIGHUP (reload) — as one set, and SIGPIPE
 *      ignored (fg_startup_signals);
 *   4. the history: floodctld's region, or a private table in memory
 *      this process maps (fg_startup_table_open);
 *   5. the outbound side (outbound.h), then the cluster client and, with
 *      floodctld's region, a writer slot for its counters
 *      (fg_startup_cluster_open);
 *   6. the workers (wiring.h), the control socket, the threads.
 * While running, the main thread publishes the cluster client's counters
 * and health (fg_startup_cluster_publish) and writes the counters on
 * SIGUSR1 and at exit (fg_startup_write_file: replaced atomically).
 * Stop, in reverse: the workers, the outbound side, the cluster client
 * (fg_startup_cluster_close: its last counters, then its slot), the
 * history (fg_startup_table_close), the configuration.
 *
 * Threads: every call from the main thread.
 */
#ifndef FLOODGATE_STARTUP_H
#define FLOODGATE_STARTUP_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "floodgate/claimer.h"
#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/region.h"
#include "floodgate/wiring.h"

/* How often the cluster client's counters go to its writer slot. */
#define FG_STARTUP_CLUSTER_PUBLISH_NS 100000000ull

/* 1. "queue", "memory" or "null" into *sink: 0, or -EINVAL (unchanged). */
int fg_startup_parse_sink(const char *arg, enum fg_wiring_sink *sink);
/* A --log-level name (log.h's) into *level: 0, or -EINVAL (unchanged). */
int fg_startup_parse_log_level(const char *arg, int *level);

/* 2. The file at `path`, or the embedded default when NULL, the log opened
 * as `ident`, every error logged: the configuration, or NULL. */
struct fg_config *fg_startup_config_load(const char *path, const char *ident);
/* The sink when --sink was not given: the queue when the configuration
 * has a [downstream] and `may_relay`, else memory. */
enum fg_wiring_sink fg_startup_default_sink(const struct fg_config *cfg, bool may_relay);

/* 3. Fill `set` with SIGTERM, SIGINT, SIGUSR1 and SIGHUP; ignore SIGPIPE. */
void fg_startup_signals(sigset_t *set);

/* 4. A history table in private anonymous memory (no file, no region). */
struct fg_startup_table {
	void *mem;
	size_t len;
	struct fg_history *h;
};
/* The history parameters from the configuration, for `capacity` entries
 * and `side_capacity` version-number side entries. */
void fg_startup_table_params(struct fg_history_params *hp, const struct fg_config *cfg,
			     uint64_t capacity, uint64_t side_capacity);
/* Map and build the table (a fresh random seed): 0, -EINVAL (bad sizes),
 * -errno of mmap. On failure *t holds nothing. */
int fg_startup_table_open(struct fg_startup_table *t, struct fg_history_params *hp);
/* Detach and unmap; a zeroed or closed table is left alone. */
void fg_startup_table_close(struct fg_startup_table *t);

/* 5. The cluster client ([cluster], docs/scale.md "Several boxes") and its
 * writer slot. */
struct fg_startup_cluster {
	struct fg_claimer *claimer;		/* NULL: no [cluster] */
	struct fg_region_writer *slot;		/* its counters; NULL: no region */
	uint64_t published_ns;
	fg_time_t status_written;
};
struct fg_startup_cluster_params {
	const struct fg_config *cfg;
	unsigned max_links;			/* engines that take a link */
	struct fg_region *region;		/* NULL: no slot */
	const char *slot_name;
	const char *region_what;		/* in the message when no slot is free */
	const char *log_comp;
};
/* Nothing when the configuration has no [cluster] seeds; else the client
 * (not started) and, with a region, its slot: 0 or a negative errno,
 * logged; what was built stays in *c for fg_startup_cluster_close. */
int fg_startup_cluster_open(struct fg_startup_cluster *c, const struct fg_startup_cluster_params *p);
/* Counters to the slot at most every FG_STARTUP_CLUSTER_PUBLISH_NS (from
 * `now_ns`), the health into `data_dir` once a second. */
void fg_startup_cluster_publish(struct fg_startup_cluster *c, const char *data_dir,
				uint64_t now_ns, const char *log_comp);
/* The last counters into the slot, the slot released, the client gone. */
void fg_startup_cluster_close(struct fg_startup_cluster *c);

/* 6. Write `path` through "<path>.tmp" and a rename: write(f, arg) gives
 * the content. 0, or a negative errno, logged as "<what> <file>: ...". */
int fg_startup_write_file(const char *path, const char *what, const char *log_comp,
			  void (*write)(FILE *f, const void *arg), const void *arg);

#endif
