/* SPDX-License-Identifier: MIT */
/*
 * statusfield.h — the field table of a status file: the shape that
 * downstreams.status (dstatus.h) and cluster.status (cstatus.h) share.
 *
 * A status file's values are uint64_t members of one record struct,
 * listed once in an X-macro of rows X(field, kind, help). Expanding that
 * list with FG_STATUS_ROW gives the file's table of fields; the table
 * then drives the writer, the parser (fg_status_set) and every output
 * built on them (text, JSON, Prometheus), so a new value is one row.
 * lib/datadir/statusfield.c.
 */
#ifndef FLOODGATE_STATUSFIELD_H
#define FLOODGATE_STATUSFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A gauge says how things are now; a counter counts since the writer
 * started (Prometheus's rate() takes its restart as a reset); a state is a
 * gauge of 0 or 1 that people read folded into one word (a downstream's
 * "paused", "parked": fg_metrics_ds_state) rather than as a column. */
enum fg_status_kind { FG_STATUS_GAUGE = 0, FG_STATUS_COUNTER = 1, FG_STATUS_STATE = 2 };

struct fg_status_field {
	const char *name;
	enum fg_status_kind kind;
	const char *help;
	size_t off;			/* of its uint64_t in the record */
	const char *column;		/* its column's head in a text table; NULL none */
	int width;			/* that column's width */
};

/* One table row of record type T from an X-macro row (f, kind, help). */
#define FG_STATUS_ROW(T, f, k, h) { #f, FG_STATUS_##k, h, offsetof(T, f), NULL, 0 },
/* The same with the column a text table shows it in (head, width). */
#define FG_STATUS_COL(T, f, k, h, col, w) { #f, FG_STATUS_##k, h, offsetof(T, f), col, w },

/* The value of field f in record rec. */
static inline uint64_t fg_status_value(const void *rec, const struct fg_status_field *f)
{
	return *(const uint64_t *)(const void *)((const char *)rec + f->off);
}

/*
 * Set the field of table t (n rows) named by the len octets at name to v
 * in record rec. False for a name the table does not have: a reader
 * ignores the values a newer writer added.
 */
bool fg_status_set(void *rec, const struct fg_status_field *t, unsigned n, const char *name,
		   size_t len, uint64_t v);

#endif /* FLOODGATE_STATUSFIELD_H */
