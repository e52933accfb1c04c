/* SPDX-License-Identifier: MIT */
/*
 * qfmt.c — the outbound queue's on-disk format: segment headers, records,
 * cursor and head slots, and the segment scan every reader shares (the
 * writer's recovery, floodctld's restore and inspect, the fuzz target).
 * queue.h tables the layout byte by byte.
 *
 * Everything here reads untrusted octets: a crash can leave any prefix of
 * a write on disk, and bit rot anything at all. A record is believed only
 * when its magic, lengths, record number, Message-ID shape and checksum
 * all agree; the scan stops at the first one that does not.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/queue.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ------------------------------------------------------------ segments */

void fg_queue_seg_header_encode(uint8_t out[FG_QUEUE_SEG_HEADER],
				const struct fg_queue_seg_info *si)
{
	memset(out, 0, FG_QUEUE_SEG_HEADER);
	memcpy(out, FG_QUEUE_SEG_MAGIC, 8);
	put32(out + 8, FG_QUEUE_VERSION);
	put32(out + 12, FG_QUEUE_SEG_HEADER);
	put64(out + 16, si->segment);
	put64(out + 24, si->base);
	put64(out + 32, si->first_recno);
	put64(out + 40, (uint64_t)si->created);
	put32(out + 60, fg_crc32c(0, out, 60));
}

int fg_queue_seg_header_decode(const void *buf, size_t len, struct fg_queue_seg_info *out,
			       const char **why)
{
	const uint8_t *p = buf;

	if (len < FG_QUEUE_SEG_HEADER) {
		*why = "shorter than a segment header";
		return -EINVAL;
	}
	if (memcmp(p, FG_QUEUE_SEG_MAGIC, 8) != 0) {
		*why = "not a queue segment (magic)";
		return -EINVAL;
	}
	if (get32(p + 60) != fg_crc32c(0, p, 60)) {
		*why = "segment header checksum mismatch";
		return -EINVAL;
	}
	out->version = get32(p + 8);
	if (out->version < FG_QUEUE_VERSION_OLDEST || out->version > FG_QUEUE_VERSION) {
		*why = fg_datadir_version_why("queue segment format", out->version,
					      FG_QUEUE_VERSION_OLDEST, FG_QUEUE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (get32(p + 12) != FG_QUEUE_SEG_HEADER) {
		*why = "header size does not match its version";
		return -EINVAL;
	}
	out->segment = get64(p + 16);
	out->base = get64(p + 24);
	out->first_recno = get64(p + 32);
	out->created = (fg_time_t)get64(p + 40);
	return 0;
}

/* ------------------------------------------------------------ records */

/* Bytes 8..H-1 of a version-2 record header: the part its checksum
 * covers. Returns H. */
static uint32_t rec_fields(uint8_t *f, const struct fg_queue_rec_fields *r)
{
	const struct fg_feeds_set *route = r->route;
	uint32_t hdr_len = fg_queue_rec_hdr_len(route);

	put64(f, r->recno);
	put64(f + 8, (uint64_t)r->arrival);
	put32(f + 16, r->art_len);
	put16(f + 20, r->id_len);
	put16(f + 22, r->peer);
	memset(f + 24, 0, 8);
	if (!route || route->all) {
		f[25] = FG_QUEUE_ROUTE_ALL;
	} else {
		f[24] = route->n;
		for (unsigned i = 0; i < route->n; i++)
			put64(f + 32 + 8 * i, route->ident[i]);
	}
	return hdr_len;
}

uint32_t fg_queue_rec_crc_start(const struct fg_queue_rec_fields *f)
{
	uint8_t h[FG_QUEUE_REC_HEADER_MAX];
	uint32_t len = rec_fields(h + 8, f);

	return fg_crc32c(0, h + 8, len - 8);
}

uint32_t fg_queue_rec_header_encode(uint8_t out[FG_QUEUE_REC_HEADER_MAX],
				    const struct fg_queue_rec_fields *f, uint32_t crc)
{
	put32(out, FG_QUEUE_REC_MAGIC);
	put32(out + 4, crc);
	return rec_fields(out + 8, f);
}

/* Bytes 32..H-1 of a version-2 header: the route. */
static int route_decode(const uint8_t *p, size_t len, struct fg_queue_rec *out,
			const char **why)
{
	unsigned n = p[32], flags = p[33];

	if (n > FG_FEEDS_MAX || (flags & ~FG_QUEUE_ROUTE_ALL) ||
	    ((flags & FG_QUEUE_ROUTE_ALL) && n)) {
		*why = "bad route (count or flags)";
		return -EINVAL;
	}
	for (unsigned i = 34; i < 40; i++)
		if (p[i]) {
			*why = "non-zero reserved octets";
			return -EINVAL;
		}
	out->hdr_len = FG_QUEUE_REC_HEADER + 8 * n;
	out->route.all = flags & FG_QUEUE_ROUTE_ALL;
	out->route.n = (uint8_t)n;
	if (len < out->hdr_len)
		return 0;
	for (unsigned i = 0; i < n; i++)
		out->route.ident[i] = get64(p + FG_QUEUE_REC_HEADER + 8 * i);
	out->route_read = true;
	return 0;
}

int fg_queue_rec_header_decode(const void *buf, size_t len, struct fg_queue_rec *out,
			       const char **why)
{
	const uint8_t *p = buf;
	uint32_t magic;

	if (len < FG_QUEUE_REC_HEADER_V1) {
		*why = "short record header";
		return -EINVAL;
	}
	magic = get32(p);
	if (magic != FG_QUEUE_REC_MAGIC && magic != FG_QUEUE_REC_MAGIC_V1) {
		*why = "bad record magic";
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->crc = get32(p + 4);
	out->recno = get64(p + 8);
	out->arrival = (fg_time_t)get64(p + 16);
	out->art_len = get32(p + 24);
	out->id_len = get16(p + 28);
	out->peer = get16(p + 30);
	if (out->id_len < FG_QUEUE_ID_MIN || out->id_len > FG_QUEUE_ID_MAX) {
		*why = "Message-ID length out of range";
		return -EINVAL;
	}
	if (magic == FG_QUEUE_REC_MAGIC_V1) {
		/* written before routes: it goes everywhere, as it did then */
		out->version = 1;
		out->hdr_len = FG_QUEUE_REC_HEADER_V1;
		out->route.all = true;
		out->route_read = true;
	} else {
		out->version = 2;
		if (len < FG_QUEUE_REC_HEADER) {
			*why = "short record header";
			return -EINVAL;
		}
		if (route_decode(p, len, out, why) != 0)
			return -EINVAL;
	}
	out->size = fg_queue_rec_size(out->hdr_len, out->id_len, out->art_len);
	return 0;
}

/* RFC 5536 3.1.3, loosely: what the engine would have sent the sink. The
 * check only has to tell a record from leftover garbage. */
static bool id_shape(const char *id, size_t len)
{
	if (id[0] != '<' || id[len - 1] != '>')
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if ((unsigned char)id[i] <= ' ' || (unsigned char)id[i] >= 0x7f || id[i] == '>')
			return false;
	return true;
}

int fg_queue_rec_check(const void *buf, size_t avail, uint64_t expect_recno,
		       struct fg_queue_rec *out, const char **why)
{
	const uint8_t *p = buf;
	uint32_t crc;

	if (fg_queue_rec_header_decode(buf, avail, out, why) != 0)
		return -EINVAL;
	if (out->size > avail) {
		*why = "record runs past the end of the data";
		return -EINVAL;
	}
	if (expect_recno != UINT64_MAX && out->recno != expect_recno) {
		*why = "record number out of sequence";
		return -EINVAL;
	}
	out->id = (const char *)p + out->hdr_len;
	out->art = p + out->hdr_len + out->id_len;
	if (!id_shape(out->id, out->id_len)) {
		*why = "not a Message-ID";
		return -EINVAL;
	}
	crc = fg_crc32c(0, p + 8, out->hdr_len - 8);
	crc = fg_crc32c(crc, out->id, out->id_len);
	crc = fg_crc32c(crc, out->art, out->art_len);
	if (crc != out->crc) {
		*why = "record checksum mismatch";
		return -EINVAL;
	}
	for (uint64_t i = out->hdr_len + out->id_len + out->art_len; i < out->size; i++)
		if (p[i] != 0) {
			*why = "non-zero padding";
			return -EINVAL;
		}
	return 0;
}

int fg_queue_seg_scan(const void *buf, size_t len, fg_queue_rec_fn *fn, void *arg,
		      struct fg_queue_scan *out)
{
	const uint8_t *p = buf;
	uint64_t off = FG_QUEUE_SEG_HEADER;
	struct fg_queue_rec r;
	const char *why = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = fg_queue_seg_header_decode(buf, len, &out->info, &out->why);
	if (rc != 0)
		return rc;
	out->next_recno = out->info.first_recno;
	out->end = off;
	while (off < len) {
		if (fg_queue_rec_check(p + off, len - off, out->next_recno, &r, &why) != 0 ||
		    (r.version != out->info.version && (why = "record of another format "
							       "version than its segment"))) {
			out->torn = true;
			out->why = why;
			return 0;
		}
		if (fn) {
			rc = fn(arg, &r, out->info.base + (off - FG_QUEUE_SEG_HEADER));
			if (rc < 0)
				return rc;
			if (rc > 0)
				return 0;
		}
		off += r.size;
		out->end = off;
		out->records++;
		out->next_recno++;
	}
	return 0;
}

/* ------------------------------------------------------------ slots */

void fg_queue_slot_encode(uint8_t out[FG_QUEUE_SLOT], const char magic[8],
			  const struct fg_queue_slot *s)
{
	memset(out, 0, FG_QUEUE_SLOT);
	memcpy(out, magic, 8);
	put64(out + 8, s->seq);
	put64(out + 16, s->c.pos);
	put64(out + 24, s->c.recno);
	put64(out + 32, (uint64_t)s->updated);
	put64(out + 40, s->extra);
	put32(out + 48, FG_QUEUE_SLOT_VERSION);
	put32(out + 60, fg_crc32c(0, out, 60));
}

int fg_queue_slot_decode(const void *buf, const char magic[8], struct fg_queue_slot *out)
{
	const uint8_t *p = buf;

	if (memcmp(p, magic, 8) != 0 || get32(p + 60) != fg_crc32c(0, p, 60))
		return -EINVAL;
	/* 0: written before the slots had a version, the layout of 1 */
	out->version = get32(p + 48);
	if (out->version > FG_QUEUE_SLOT_VERSION)
		return -EPROTONOSUPPORT;
	out->seq = get64(p + 8);
	out->c.pos = get64(p + 16);
	out->c.recno = get64(p + 24);
	out->updated = (fg_time_t)get64(p + 32);
	out->extra = get64(p + 40);
	return 0;
}

int fg_queue_slots_pick(const void *buf, size_t len, const char magic[8],
			struct fg_queue_slot *out)
{
	const uint8_t *p = buf;
	struct fg_queue_slot s[2];
	bool ok[2] = { false, false };

	for (unsigned i = 0; i < 2; i++) {
		int rc = len >= (i + 1) * FG_QUEUE_SLOT ?
				 fg_queue_slot_decode(p + i * FG_QUEUE_SLOT, magic, &s[i]) : -EINVAL;

		/* a newer build wrote it: its other slot is no safer to use */
		if (rc == -EPROTONOSUPPORT) {
			*out = s[i];
			return rc;
		}
		ok[i] = rc == 0;
	}
	if (!ok[0] && !ok[1])
		return -ENOENT;
	if (ok[0] && ok[1])
		*out = s[0].seq >= s[1].seq ? s[0] : s[1];
	else
		*out = ok[0] ? s[0] : s[1];
	return 0;
}

/* ------------------------------------------------------------ names */

int fg_queue_segment_path(const char *dir, uint64_t segment, char *out, size_t len)
{
	return fg_datadir_path(dir, FG_QUEUE_SEG_PREFIX, segment, FG_QUEUE_SEG_SUFFIX, out, len);
}

/* Config names: 1-63 of letters, digits, '-', '_', '.' (never "." or ".."
 * alone would matter here: the name sits between a prefix and a suffix). */
static bool name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= FG_CONFIG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

int fg_queue_cursor_path(const char *dir, const char *name, char *out, size_t len)
{
	int n;

	if (!name_ok(name))
		return -EINVAL;
	n = snprintf(out, len, "%s/cursor-%s.fgc", dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int fg_queue_head_path(const char *dir, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/queue-head.fgh", dir);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
