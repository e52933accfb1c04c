/* SPDX-License-Identifier: MIT */
/*
 * claimer.h — a box's cluster thread: the engines' claims and outcomes
 * (session.h, struct fg_nntp_engine_cluster) pipelined to the Redis Cluster
 * (cluster.h), answers back through rings. dataplane/cluster/claimer.c;
 * docs/scale.md, "Several boxes".
 *
 * In the cluster, an ID is one key, "fg:" and the 32 hex digits of the
 * SipHash-2-4-128 of the Message-ID under a key derived from
 * [cluster] secret (the same on every box; the local history's seed is
 * per instance). Its value is "BOX:S", S one of O (offered: a transfer in
 * flight), A (accepted), R (refused):
 *
 *   claim   SET key BOX:O NX PX offer-timeout GET  (one round trip)
 *           nil or BOX:O (ours) -> WON; OTHER:O -> BUSY; *:A, *:R -> HAVE
 *   settle  a Lua script: only when the key is absent or BOX's, SET key
 *           BOX:A|BOX:R PX window; returns the value it found, so an
 *           acceptance over another box's claim is counted as a cross-box
 *           race (cluster_takethis_races)
 *   digest  SET fg:digest HEX NX PX 60s GET every 10 s: another box's
 *           different digest of the downstream configuration raises the
 *           alarm (cluster_digest_mismatches, status)
 *   forget  DEL key (floodctl forget)
 *
 * A claim with no answer within [cluster] timeout (the cluster is slow or
 * down) is answered NONE: the engine decides from its own history. The
 * change between answering and not answering is logged once each way.
 */
#ifndef FLOODGATE_CLAIMER_H
#define FLOODGATE_CLAIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/cluster.h"
#include "floodgate/config.h"
#include "floodgate/cstatus.h"
#include "floodgate/session.h"
#include "floodgate/stats.h"

/* A digest of what the downstreams are fed ([downstream] id, newsgroups,
 * distributions, sizes, exclude-path, in order): equal on every box of a
 * site that shares a cluster. */
uint64_t fg_claimer_digest(const struct fg_config *cfg);

struct fg_claimer;

struct fg_claimer_params {
	const struct fg_config *cfg;	/* [cluster], offer-timeout, downstreams: read at create */
	unsigned max_links;		/* engines; default 16 */
	unsigned max_claims;		/* per engine in flight; default 1024 */
};

/* NULL when [cluster] seeds is off, or on an error (logged). */
struct fg_claimer *fg_claimer_create(const struct fg_claimer_params *p);
/* One engine's hooks (its rings), before start; wake(arg) is called from
 * the cluster thread when answers wait (NULL: the engine polls anyway). */
const struct fg_nntp_engine_cluster *fg_claimer_link(struct fg_claimer *c, void (*wake)(void *arg),
						void *arg);
int fg_claimer_start(struct fg_claimer *c);
/* Stops the thread; the engines must be gone or never poll again. */
void fg_claimer_destroy(struct fg_claimer *c);

/* Delete an ID's key (any thread; queued for the cluster thread):
 * 0, -ENOBUFS. */
int fg_claimer_forget(struct fg_claimer *c, const char *id, size_t len);

/* Its health now (cstatus.h's fields). */
void fg_claimer_status(struct fg_claimer *c, struct fg_cluster_status *st);
/* Write it to `dir`/cluster.status for floodctld: 0 or -errno. */
int fg_claimer_write_status(struct fg_claimer *c, const char *dir);
/* Add the cluster thread's counters (cluster_*) into `into`. */
void fg_claimer_counters(const struct fg_claimer *c, struct fg_stats *into);
/* Publish the counters into a writer slot of floodctld's region (the
 * caller claimed it; one thread publishes), for /metrics and floodctl. */
struct fg_region_writer;
void fg_claimer_publish(struct fg_claimer *c, struct fg_region_writer *slot);
/* "cluster_<field> value" lines (cstatus.h's fields) for a stats file. */
int fg_claimer_format(struct fg_claimer *c, char *buf, size_t len);

#endif /* FLOODGATE_CLAIMER_H */
