/* SPDX-License-Identifier: MIT */
/*
 * cstatus.h — the shared second-level history's health as the dataplane's
 * cluster thread last published it for floodctld (`floodctl status`,
 * /metrics), in the data directory. lib/cluster/cstatus.c; docs/scale.md,
 * "Several boxes".
 *
 * `<data-dir>/cluster.status`, rewritten about once a second by a
 * dataplane with [cluster] (a temporary file renamed over it, never
 * synced: information, not state, like downstreams.status). Text, so that
 * every build reads what any other wrote:
 *
 *     floodgate-cluster 1 <Unix time written>
 *     <field> <decimal value>
 *
 * one line per field. A reader keeps the fields it knows (FG_CS_FIELDS, a
 * status field table: statusfield.h),
 * ignores the others, and skips a line that is not of that shape; a file
 * whose first line is not the header is refused whole.
 */
#ifndef FLOODGATE_CSTATUS_H
#define FLOODGATE_CSTATUS_H

#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/statusfield.h"

#define FG_CS_STATUS_FILE "cluster.status"
#define FG_CS_STATUS_MAGIC "floodgate-cluster"
#define FG_CS_STATUS_VERSION 1

/* Every value: field, a gauge (now) or a counter (since the dataplane
 * started), the text for people and /metrics. */
#define FG_CS_FIELDS(X)                                                                     \
	X(answering, GAUGE, "1 while the cluster answers claims in time (0: decided locally)") \
	X(digest_mismatch, GAUGE, "1 while another box publishes a different downstream digest") \
	X(nodes_up, GAUGE, "connections to cluster nodes open")                            \
	X(masters, GAUGE, "masters in the slot map")                                       \
	X(slots_mapped, GAUGE, "slots the map knows (16384 when whole)")                    \
	X(rtt_p50_us, GAUGE, "median claim round trip, microseconds (a log2 bucket's upper bound)") \
	X(rtt_p99_us, GAUGE, "99th percentile claim round trip, microseconds (bucket upper bound)") \
	X(rtt_count, COUNTER, "claims answered by the cluster")                            \
	X(moved, COUNTER, "MOVED redirects followed (slots moved, failovers)")             \
	X(ask, COUNTER, "ASK redirects followed (slots in migration)")                     \
	X(map_refreshes, COUNTER, "slot maps taken (CLUSTER SLOTS)")                       \
	X(replies_refused, COUNTER, "node replies refused unread, past the client's bounds (an array, a bulk string or a reply too large): the connection closed")

struct fg_cluster_status {
#define FG_CS_FIELD(f, k, h) uint64_t f;
	FG_CS_FIELDS(FG_CS_FIELD)
#undef FG_CS_FIELD
};

extern const struct fg_status_field fg_cs_fields[];
extern const unsigned fg_cs_n_fields;

static inline uint64_t fg_cs_value(const struct fg_cluster_status *s,
				   const struct fg_status_field *f)
{
	return fg_status_value(s, f);
}

/* Write dir's file (temporary + rename). 0 or -errno. */
int fg_cs_status_write(const char *dir, fg_time_t now, const struct fg_cluster_status *s);
/* Parse a file's text (len octets): 0 with *s and *written, or -EINVAL
 * (no header, or a version this build does not read). */
int fg_cs_status_parse(const char *text, size_t len, struct fg_cluster_status *s,
		       fg_time_t *written);
/* Read and parse dir's file: 0, -ENOENT (none: no [cluster]), -EINVAL, -errno. */
int fg_cs_status_read(const char *dir, struct fg_cluster_status *s, fg_time_t *written);

#endif /* FLOODGATE_CSTATUS_H */
