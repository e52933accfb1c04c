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
 * one line per configured downstream, the values decimal, the keys the
 * rows of FG_DS_FIELDS below in their order. A reader keeps the keys it
 * knows (a status field table: statusfield.h), ignores the others, and
 * takes a key it does not find as 0; it skips a line
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

/*
 * Every value of a downstream's status, defined once. A row is
 *
 *     X(field, kind, source, column, width, help)
 *
 * kind: GAUGE (now), COUNTER (since the dataplane started), STATE (0 or 1,
 * read by people folded into one word, fg_metrics_ds_state);
 * source: where the dataplane takes it —
 *     RELAY  a count the relay thread keeps per downstream (struct rds in
 *            relay_int.h has a member of that name, generated from here)
 *     LINK   what the relay thread derives from its connections when it
 *            publishes (relay.c publish)
 *     QUEUE  the queue writer's housekeeping view of the consumer
 *            (fg_queue_consumer_state, a member of the same name);
 * column, width: its column in the text table (`floodctl downstreams`),
 * NULL for a STATE row; help: the text for people and /metrics.
 *
 * From the rows come: struct fg_ds_status and the relay's published
 * struct fg_relay_ds_status (relay.h), the relay's copy into it and the
 * outbound's copy out of it, this file's writer and reader, /metrics
 * (floodgate_downstream_<field>[_total]; the lag_ rows as
 * floodgate_relay_lag_*, from the queue's own files), the JSON
 * (/stats.json, `floodctl downstreams --json`) and the text table. A new
 * value is one row here, plus the line of the relay or queue that counts
 * it. The text table's columns are in row order: add new rows at the end.
 */
#define FG_DS_FIELDS(X)                                                                     \
	X(paused, STATE, LINK, NULL, 0, "1 while floodctl downstream pause holds it")     \
	X(parked, STATE, QUEUE, NULL, 0, "1 while parked: past a backlog limit, its backlog kept for it") \
	X(full, STATE, QUEUE, NULL, 0, "1 while parked at backlog-disk with backlog-full defer (peers deferred)") \
	X(lag_records, GAUGE, QUEUE, "lag", 10, "queue records behind its cursor")          \
	X(lag_bytes, GAUGE, QUEUE, "octets", 12, "octets behind its cursor")               \
	X(lag_seconds, GAUGE, QUEUE, "secs", 7, "age of its oldest unacknowledged article") \
	X(backlog_bytes, GAUGE, QUEUE, "backlog", 12, "octets of queue segments kept only for it while parked") \
	X(sent, COUNTER, RELAY, "sent", 9, "articles sent to it (TAKETHIS, or IHAVE after 335), re-sends included") \
	X(accepted, COUNTER, RELAY, "accepted", 9, "articles it accepted (239, 235)")      \
	X(refused, COUNTER, RELAY, "refused", 8, "articles it refused (439, 437)")          \
	X(not_wanted, COUNTER, RELAY, "had-it", 8, "articles it already had (438, 435)")   \
	X(deferred, COUNTER, RELAY, "deferred", 8, "articles it asked to retry later (431, 436)") \
	X(reconnects, COUNTER, RELAY, "reconn", 6, "connections it dropped or refused (reconnected with backoff)") \
	X(not_routed, COUNTER, RELAY, "skipped", 8, "queued articles its feed did not select, passed over") \
	X(dropped, COUNTER, RELAY, "dropped", 8, "its articles given up at its backlog cap (backlog-full drop)") \
	X(parks, COUNTER, QUEUE, "parks", 6, "times it was parked")                        \
	X(connections, GAUGE, LINK, "conns", 5, "feed connections configured")             \
	X(ready, GAUGE, LINK, "ready", 5, "feed connections up (handshake done)")          \
	X(streaming, GAUGE, LINK, "stream", 6, "1 when a connection streams (MODE STREAM)")

/* A row's part only where its source is `want`: FG_DS_FROM(src, RELAY, x)
 * is x for a RELAY row and nothing for the others. */
#define FG_DS_FROM(src, want, x) FG_DS_FROM_##src##_##want(x)
#define FG_DS_FROM_RELAY_RELAY(x) x
#define FG_DS_FROM_RELAY_LINK(x)
#define FG_DS_FROM_RELAY_QUEUE(x)
#define FG_DS_FROM_LINK_RELAY(x)
#define FG_DS_FROM_LINK_LINK(x) x
#define FG_DS_FROM_LINK_QUEUE(x)
#define FG_DS_FROM_QUEUE_RELAY(x)
#define FG_DS_FROM_QUEUE_LINK(x)
#define FG_DS_FROM_QUEUE_QUEUE(x) x

/* A row as a uint64_t member of a record. */
#define FG_DS_MEMBER(f, k, src, col, w, h) uint64_t f;

struct fg_ds_status {
	char name[FG_CONFIG_NAME_MAX];
	char id[FG_CONFIG_NAME_MAX];
	FG_DS_FIELDS(FG_DS_MEMBER)
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
