/* SPDX-License-Identifier: MIT */
/*
 * vlog.c — verdict-log lines: the writer's emit, the line format, and
 * floodctld's rotating files (vlog.h has the format and the policy).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/vlog.h"

#define COMP "vlog"
#define FLUSH_AT (64u << 10)

static const char *const verdict_names[] = {
	[FG_VLOG_WANT] = "want",
	[FG_VLOG_ACCEPT] = "accept",
	[FG_VLOG_REJECT] = "reject",
	[FG_VLOG_REFUSE] = "refuse",
	[FG_VLOG_DEFER] = "defer",
};

static const char *const cmd_names[] = {
	[FG_VLOG_CHECK] = "CHECK",
	[FG_VLOG_TAKETHIS] = "TAKETHIS",
	[FG_VLOG_IHAVE] = "IHAVE",
	[FG_VLOG_RECOVERY] = "recovery",
};

const char *fg_vlog_verdict_name(enum fg_vlog_verdict v)
{
	return (unsigned)v < FG_VLOG__COUNT ? verdict_names[v] : NULL;
}

const char *fg_vlog_cmd_name(enum fg_vlog_cmd c)
{
	return (unsigned)c < FG_VLOG_CMD__COUNT ? cmd_names[c] : NULL;
}

/* The remote into the record: false for a family the ring cannot carry. */
static bool put_remote(struct fg_vrec *rec, const struct fg_endpoint *remote)
{
	if (!remote)
		return true;	/* FG_VREC_AF_NONE */
	if (remote->family == AF_INET) {
		rec->family = FG_VREC_AF_INET;
		memcpy(rec->addr, remote->addr, 4);
	} else if (remote->family == AF_INET6) {
		rec->family = FG_VREC_AF_INET6;
		memcpy(rec->addr, remote->addr, 16);
	} else {
		return false;
	}
	rec->port = remote->port;
	return true;
}

int fg_vlog_emit(struct fg_region_writer *w, int64_t time_ns, enum fg_vlog_cmd cmd,
		 int peer, const struct fg_endpoint *remote, const char *id, size_t id_len,
		 enum fg_vlog_verdict verdict,
		 enum fg_reason reason, fg_time_t article_date, fg_time_t date,
		 fg_time_t injection_date, fg_time_t arrival)
{
	struct fg_vrec rec;
	int rc;

	if (!fg_region_vlog_on(fg_region_writer_region(w)))
		return 0;
	if ((unsigned)verdict >= FG_VLOG__COUNT || (unsigned)cmd >= FG_VLOG_CMD__COUNT ||
	    (unsigned)reason >= FG_REASON__COUNT || peer >= (int)FG_REGION_PEERS)
		return -EINVAL;
	memset(&rec, 0, sizeof(rec));
	rec.time_ns = time_ns;
	rec.article_date = article_date;
	rec.date = date;
	rec.injection_date = injection_date;
	rec.arrival = arrival;
	rec.peer = peer < 0 ? FG_VREC_PEER_NONE : (uint16_t)peer;
	rec.verdict = (uint8_t)verdict;
	rec.reason = (uint8_t)reason;
	rec.cmd = (uint8_t)cmd;
	rec.id_len = (uint8_t)FG_MIN(id_len, (size_t)FG_VREC_ID_MAX);
	memcpy(rec.id, id, rec.id_len);
	if (!put_remote(&rec, remote))
		return -EINVAL;
	rc = fg_region_ring_push(w, FG_RING_VLOG, &rec);
	if (rc < 0)
		fg_stats_inc(&fg_region_writer_stats(w)->total, FG_CTR_VLOG_DROPPED);
	return rc;
}

static void field_time(struct fg_sbuf *b, const char *key, fg_time_t t)
{
	fg_sbuf_printf(b, ",\"%s\":", key);
	if (t == 0) {
		fg_sbuf_puts(b, "null");
		return;
	}
	fg_sbuf_puts(b, "\"");
	fg_sbuf_time(b, t);
	fg_sbuf_puts(b, "\"");
}

static void field_name(struct fg_sbuf *b, const char *key, const char *v)
{
	fg_sbuf_printf(b, ",\"%s\":", key);
	if (v)
		fg_sbuf_json_str(b, v, strlen(v));
	else
		fg_sbuf_puts(b, "null");
}

/* "addr": the record's remote as fg_endpoint_format spells it; null for
 * none, and for a family no writer puts there (a damaged ring). */
static void field_addr(struct fg_sbuf *b, const struct fg_vrec *rec)
{
	struct fg_endpoint ep = { .port = rec->port };
	char a[FG_ENDPOINT_STRLEN];

	if (rec->family == FG_VREC_AF_INET) {
		ep.family = AF_INET;
		memcpy(ep.addr, rec->addr, 4);
	} else if (rec->family == FG_VREC_AF_INET6) {
		ep.family = AF_INET6;
		memcpy(ep.addr, rec->addr, 16);
	}
	field_name(b, "addr", ep.family && fg_endpoint_format(&ep, a, sizeof(a)) == 0 ? a : NULL);
}

void fg_vlog_format(struct fg_sbuf *b, const struct fg_vrec *rec, const char *peer)
{
	int64_t sec = rec->time_ns / 1000000000, ms = (rec->time_ns % 1000000000) / 1000000;
	const char *reason = rec->reason < FG_REASON__COUNT ? fg_reason_name(rec->reason) : NULL;
	size_t idl = FG_MIN((size_t)rec->id_len, (size_t)FG_VREC_ID_MAX);
	char tbuf[40];

	if (ms < 0) {
		sec--;
		ms += 1000;
	}
	{
		time_t t = (time_t)sec;
		struct tm tm;

		if (gmtime_r(&t, &tm))
			strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
		else
			snprintf(tbuf, sizeof(tbuf), "@%lld", (long long)sec);
	}
	fg_sbuf_printf(b, "{\"time\":\"%s.%03lldZ\"", tbuf, (long long)ms);
	field_name(b, "peer", peer);
	field_addr(b, rec);
	field_name(b, "cmd", rec->cmd < FG_VLOG_CMD__COUNT ? cmd_names[rec->cmd] : NULL);
	fg_sbuf_puts(b, ",\"id\":");
	fg_sbuf_json_str(b, rec->id, idl);
	field_name(b, "verdict", rec->verdict < FG_VLOG__COUNT ? verdict_names[rec->verdict] : NULL);
	field_name(b, "reason", reason);
	field_time(b, "article_date", rec->article_date);
	field_time(b, "date", rec->date);
	field_time(b, "injection_date", rec->injection_date);
	field_time(b, "arrival", rec->arrival);
	fg_sbuf_puts(b, "}\n");
}

/* ---- files ---- */

struct fg_vlog_file {
	char path[PATH_MAX];
	int fd;
	uint64_t size;
	uint64_t rotate;
	unsigned keep;
	struct fg_sbuf buf;
};

static int open_current(struct fg_vlog_file *f)
{
	struct stat st;

	f->fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (f->fd < 0)
		return -errno;
	f->size = fstat(f->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

struct fg_vlog_file *fg_vlog_open(const char *path, uint64_t rotate, unsigned keep, int *err)
{
	struct fg_vlog_file *f = calloc(1, sizeof(*f));

	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	if ((size_t)snprintf(f->path, sizeof(f->path), "%s", path) >= sizeof(f->path)) {
		*err = -ENAMETOOLONG;
		goto out_free;
	}
	fg_sbuf_init(&f->buf);
	fg_vlog_settings(f, rotate, keep);
	*err = open_current(f);
	if (*err < 0)
		goto out_free;
	return f;

out_free:
	FG_LOG_ERR(COMP, "cannot open %s: %s", path, strerror(-*err));
	free(f);
	return NULL;
}

void fg_vlog_close(struct fg_vlog_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	fg_sbuf_free(&f->buf);
	free(f);
}

void fg_vlog_settings(struct fg_vlog_file *f, uint64_t rotate, unsigned keep)
{
	f->rotate = rotate ? rotate : UINT64_MAX;
	f->keep = keep ? keep : 1;
}

const char *fg_vlog_path(const struct fg_vlog_file *f)
{
	return f->path;
}

static void numbered(char *out, size_t len, const char *path, unsigned i)
{
	snprintf(out, len, "%s.%u", path, i);
}

/* path -> path.1 -> ... -> path.(keep-1); the oldest goes. */
static int rotate(struct fg_vlog_file *f, struct fg_stats *stats)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];

	close(f->fd);
	f->fd = -1;
	if (f->keep > 1) {
		numbered(to, sizeof(to), f->path, f->keep - 1);
		unlink(to);
		for (unsigned i = f->keep - 1; i > 1; i--) {
			numbered(from, sizeof(from), f->path, i - 1);
			numbered(to, sizeof(to), f->path, i);
			rename(from, to);
		}
		numbered(to, sizeof(to), f->path, 1);
		rename(f->path, to);
	} else {
		unlink(f->path);
	}
	fg_stats_inc(stats, FG_CTR_VLOG_ROTATIONS);
	return open_current(f);
}

static int flush(struct fg_vlog_file *f, struct fg_stats *stats, uint64_t lines)
{
	int rc = 0;

	if (!f->buf.len)
		return 0;
	if (f->size && f->size + f->buf.len > f->rotate)
		rc = rotate(f, stats);
	if (rc == 0)
		rc = fg_datadir_write_all(f->fd, f->buf.p, f->buf.len);
	if (rc == 0) {
		f->size += f->buf.len;
		fg_stats_add(stats, FG_CTR_VLOG_LINES, lines);
	} else {
		fg_stats_add(stats, FG_CTR_VLOG_DROPPED, lines);
		FG_LOG_WARN(COMP, "%s: %s (%llu lines dropped)", f->path, strerror(-rc),
			    (unsigned long long)lines);
	}
	fg_sbuf_reset(&f->buf);
	return rc;
}

/* Format (or, without a file, count as dropped) up to max lines of a slot. */
static int64_t drain_slot(struct fg_vlog_file *f, struct fg_region *r, unsigned slot,
			  unsigned max, struct fg_stats *stats, uint64_t *pending)
{
	int64_t done = 0;

	while ((unsigned)done < max) {
		const void *recs;
		uint64_t tail = fg_region_ring_tail(r, slot, FG_RING_VLOG);
		unsigned n = fg_region_ring_peek(r, slot, FG_RING_VLOG, tail, &recs,
						 max - (unsigned)done);

		if (n == 0)
			break;
		for (unsigned i = 0; f && i < n; i++) {
			struct fg_vrec rec;

			memcpy(&rec, (const uint8_t *)recs + (size_t)i * sizeof(rec), sizeof(rec));
			fg_vlog_format(&f->buf, &rec, fg_region_peer_name(r, rec.peer));
			(*pending)++;
			if (f->buf.len >= FLUSH_AT) {
				flush(f, stats, *pending);	/* counts written or dropped */
				*pending = 0;
			}
		}
		if (!f)
			fg_stats_add(stats, FG_CTR_VLOG_DROPPED, n);
		fg_region_ring_release(r, slot, FG_RING_VLOG, tail + n);
		done += n;
	}
	return done;
}

int64_t fg_vlog_drain(struct fg_vlog_file *f, struct fg_region *r, unsigned max,
		      struct fg_stats *stats)
{
	uint64_t pending = 0;
	int64_t total = 0;
	int rc = 0;

	for (unsigned i = 0; i < fg_region_nslots(r); i++)
		total += drain_slot(f, r, i, max, stats, &pending);
	if (f)
		rc = flush(f, stats, pending);
	return rc < 0 ? rc : total;
}
