/* SPDX-License-Identifier: MIT */
/*
 * dstatus.h — the downstreams' state, as the dataplane last published it
 * for floodctld (`floodctl downstreams`, /metrics), in the data directory.
 *
 * `<data-dir>/downstreams.status`, rewritten about once a second by the
 * dataplane (a temporary file renamed over it, never synced: information,
 * not state, like queue-head.fgh). Text, so that every build reads what
 * any other wrote:
 *
 *     floodgate-downstreams 1 <Unix time written>
 *     <name> <id> key=value key=value ...
 *
 * one line per configured downstream, the values decimal. A reader keeps
 * the keys it knows (FG_DS_FIELDS, a status field table: statusfield.h),
 * ignores the others, and skips a line
 * that is not of that shape; a file whose first line is not the header is
 * refused whole. Names and ids are the configuration's (letters, digits,
 * "-", "_", ".").
 */
#ifndef FLOODGATE_DSTATUS_H
#define FLOODGATE_DSTATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/statusfield.h"

#define FG_DS_STATUS_FILE "downstreams.status"
#define FG_DS_STATUS_MAGIC "floodgate-downstreams"
#define FG_DS_STATUS_VERSION 1

/* Every value: field, what it is (a gauge: now; a counter: since the
 * dataplane started), the text for people and /metrics. */
#define FG_DS_FIELDS(X)                                                                     \
	X(paused, GAUGE, "1 while floodctl downstream pause holds it")                     \
	X(parked, GAUGE, "1 while parked: past a backlog limit, its backlog kept for it")  \
	X(full, GAUGE, "1 while parked at backlog-disk with backlog-full defer (peers deferred)") \
	X(connections, GAUGE, "feed connections configured")                               \
	X(ready, GAUGE, "feed connections up (handshake done)")                            \
	X(streaming, GAUGE, "1 when a connection streams (MODE STREAM)")                   \
	X(lag_records, GAUGE, "queue records behind its cursor")                           \
	X(lag_bytes, GAUGE, "octets behind its cursor")                                    \
	X(lag_seconds, GAUGE, "age of its oldest unacknowledged article")                  \
	X(backlog_bytes, GAUGE, "octets of queue segments kept only for it while parked")  \
	X(sent, COUNTER, "articles sent to it (TAKETHIS, or IHAVE after 335), re-sends included") \
	X(accepted, COUNTER, "articles it accepted (239, 235)")                            \
	X(refused, COUNTER, "articles it refused (439, 437)")                              \
	X(not_wanted, COUNTER, "articles it already had (438, 435)")                       \
	X(deferred, COUNTER, "articles it asked to retry later (431, 436)")                \
	X(reconnects, COUNTER, "connections it dropped or refused (reconnected with backoff)") \
	X(not_routed, COUNTER, "queued articles its feed did not select, passed over")     \
	X(dropped, COUNTER, "its articles given up at its backlog cap (backlog-full drop)") \
	X(parks, COUNTER, "times it was parked")

struct fg_ds_status {
	char name[FG_CONFIG_NAME_MAX];
	char id[FG_CONFIG_NAME_MAX];
#define FG_DS_FIELD(f, k, h) uint64_t f;
	FG_DS_FIELDS(FG_DS_FIELD)
#undef FG_DS_FIELD
};

/* The table, for writers of every format (text, JSON, Prometheus). */
extern const struct fg_status_field fg_ds_fields[];
extern const unsigned fg_ds_n_fields;

static inline uint64_t fg_ds_value(const struct fg_ds_status *s, const struct fg_status_field *f)
{
	return fg_status_value(s, f);
}

/* Write the file (temporary + rename). 0 or -errno. */
int fg_ds_status_write(const char *dir, fg_time_t now, const struct fg_ds_status *s,
		       unsigned n);

/*
 * Parse a file's text (len octets, no NUL needed): up to `max` entries
 * into s, their count in *n, the time it was written in *written.
 * 0, or -EINVAL (not such a file: no header, or a version this build
 * does not read — a newer one's lines are still of this shape, but its
 * meaning may not be).
 */
int fg_ds_status_parse(const char *text, size_t len, struct fg_ds_status *s, unsigned max,
		       unsigned *n, fg_time_t *written);

/* Read and parse dir's file. 0, -ENOENT (none), -EINVAL, or -errno. */
int fg_ds_status_read(const char *dir, struct fg_ds_status *s, unsigned max, unsigned *n,
		      fg_time_t *written);

#endif /* FLOODGATE_DSTATUS_H */
