/* SPDX-License-Identifier: MIT */
/*
 * golden.c — the golden files of every format (golden.h), made with the
 * same encoders the writers use, every time and seed fixed, so that two
 * runs of one build write the same octets.
 *
 * Why encoders and not the writers themselves: the writers stamp the
 * wall clock (segment and snapshot creation, cursor updates) and the
 * journal's and queue's writers need a running region or engine; the
 * encoders are what they call to lay out every octet. The journal's
 * encoders are private to lib/journal (journal_int.h): this tool
 * borrows them, as the tests do.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/journal/journal_int.h"
#include "../../lib/region/region_int.h"
#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "floodgate/queue.h"
#include "floodgate/region.h"
#include "floodgate/warmup.h"
#include "floodgate/snapshot.h"
#include "golden.h"

/* Octets 24..31 of the region header (GOLDEN_REGION_SCHEMA_*): the schema
 * hash of the counter tables, which changes with every counter added
 * (region.h: a region is only shared by builds that agree on it). --check
 * does not compare it. A region's digest leaves out every field the
 * counter tables set (region_sized). */

struct out {
	const char *dir;
	int check;
	void (*report)(const char *msg);
	int count;
	struct fg_golden_manifest *released;
};

/* ------------------------------------------------------------ the manifest */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "<format>/<file>": one slash, neither end, [A-Za-z0-9._-] otherwise, no
 * name starting with a dot */
static int name_ok(const char *p, size_t n)
{
	unsigned slashes = 0;

	if (n == 0 || n >= GOLDEN_NAME_MAX || p[0] == '.' || p[0] == '/' || p[n - 1] == '/')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c == '/') {
			if (p[i + 1] == '.')
				return 0;
			slashes++;
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) {
			return 0;
		}
	}
	return slashes == 1;
}

int fg_golden_manifest_parse(const char *text, size_t len, struct fg_golden_manifest *m,
			     char *why, size_t whylen)
{
	unsigned line = 0;
	size_t at = 0;

	memset(m, 0, sizeof(*m));
	while (at < len) {
		const char *p = text + at, *nl = memchr(p, '\n', len - at);
		size_t n, name_len;
		struct fg_golden_released *e;

		line++;
		if (!nl) {
			snprintf(why, whylen, "line %u: no newline at its end", line);
			return -EINVAL;
		}
		n = (size_t)(nl - p);
		at += n + 1;
		if (n == 0 || p[0] == '#')
			continue;
		if (n < 2 * FG_SHA256_LEN + 3 || p[2 * FG_SHA256_LEN] != ' ' ||
		    p[2 * FG_SHA256_LEN + 1] != ' ') {
			snprintf(why, whylen, "line %u: not \"<sha256>  <format>/<file>\"", line);
			return -EINVAL;
		}
		if (m->n == GOLDEN_MANIFEST_MAX) {
			snprintf(why, whylen, "line %u: more than %u files", line, GOLDEN_MANIFEST_MAX);
			return -EINVAL;
		}
		e = &m->e[m->n];
		for (unsigned i = 0; i < FG_SHA256_LEN; i++) {
			int hi = hexval(p[2 * i]), lo = hexval(p[2 * i + 1]);

			if (hi < 0 || lo < 0) {
				snprintf(why, whylen, "line %u: the digest is not 64 lowercase hex digits",
					 line);
				return -EINVAL;
			}
			e->digest[i] = (uint8_t)(hi << 4 | lo);
		}
		name_len = n - 2 * FG_SHA256_LEN - 2;
		if (!name_ok(p + 2 * FG_SHA256_LEN + 2, name_len)) {
			snprintf(why, whylen, "line %u: a name is <format>/<file>, shorter than %u, "
				 "of letters, digits, '.', '_' and '-'", line, GOLDEN_NAME_MAX);
			return -EINVAL;
		}
		memcpy(e->name, p + 2 * FG_SHA256_LEN + 2, name_len);
		e->name[name_len] = '\0';
		if (fg_golden_manifest_find(m, e->name)) {
			snprintf(why, whylen, "line %u: %s is listed twice", line, e->name);
			return -EINVAL;
		}
		m->n++;
	}
	return 0;
}

int fg_golden_manifest_load(const char *dir, struct fg_golden_manifest *m, char *why,
			    size_t whylen)
{
	char path[PATH_MAX + 32], *text;
	struct stat st;
	ssize_t n;
	int fd, rc;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/%s", dir, GOLDEN_MANIFEST);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) < 0 || st.st_size > 64 * 1024) {
		close(fd);
		snprintf(why, whylen, "%s: unreadable or larger than 64 KB", path);
		return -EINVAL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, text, (size_t)st.st_size);
	close(fd);
	if (n != (ssize_t)st.st_size) {
		free(text);
		snprintf(why, whylen, "%s: short read", path);
		return -EIO;
	}
	rc = fg_golden_manifest_parse(text, (size_t)n, m, why, whylen);
	free(text);
	return rc;
}

const struct fg_golden_released *fg_golden_manifest_find(const struct fg_golden_manifest *m,
							 const char *name)
{
	for (unsigned i = 0; i < m->n; i++)
		if (strcmp(m->e[i].name, name) == 0)
			return &m->e[i];
	return NULL;
}

size_t fg_golden_manifest_line(const struct fg_golden_released *e, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t nl = strlen(e->name), need = 2 * FG_SHA256_LEN + 2 + nl + 1;

	if (len < need + 1)
		return 0;
	for (unsigned i = 0; i < FG_SHA256_LEN; i++) {
		buf[2 * i] = hex[e->digest[i] >> 4];
		buf[2 * i + 1] = hex[e->digest[i] & 15];
	}
	buf[2 * FG_SHA256_LEN] = ' ';
	buf[2 * FG_SHA256_LEN + 1] = ' ';
	memcpy(buf + 2 * FG_SHA256_LEN + 2, e->name, nl);
	buf[need - 1] = '\n';
	buf[need] = '\0';
	return need;
}

/* The region header's fields that the counter tables set: sizeof(struct
 * fg_stats) and the slot's counters size what follows them. */
static const struct {
	size_t off, len;
} region_sized[] = {
	{ offsetof(struct fg_rhdr, region_size), 8 },
	{ offsetof(struct fg_rhdr, schema), 8 },
	{ offsetof(struct fg_rhdr, history_off), 8 },
	{ offsetof(struct fg_rhdr, slots_off), 8 },
	{ offsetof(struct fg_rhdr, slot_size), 8 },
	{ offsetof(struct fg_rhdr, ctld_off), 8 },
};
_Static_assert(offsetof(struct fg_rhdr, schema) == GOLDEN_REGION_SCHEMA_OFF, "schema hash");

void fg_golden_digest(const char *format, const void *buf, size_t len,
		      uint8_t out[FG_SHA256_LEN])
{
	uint8_t *copy;

	if (strcmp(format, "region") != 0 || len < sizeof(struct fg_rhdr)) {
		fg_sha256(buf, len, out);
		return;
	}
	copy = malloc(len);
	if (!copy) {	/* a digest no manifest holds: the comparison fails */
		memset(out, 0, FG_SHA256_LEN);
		return;
	}
	memcpy(copy, buf, len);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(region_sized); i++)
		memset(copy + region_sized[i].off, 0, region_sized[i].len);
	fg_sha256(copy, len, out);
	free(copy);
}

/* buf into path, opened with O_WRONLY | O_CREAT | how (O_TRUNC or
 * O_APPEND). 0 or -errno. */
static int write_file(const char *path, int how, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | how, 0644), rc;

	if (fd < 0)
		return -errno;
	rc = fg_datadir_write_all(fd, buf, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Append e's line to dir/RELEASED. 0 or -errno. */
static int release(const char *dir, const struct fg_golden_released *e)
{
	char path[PATH_MAX + 32], line[2 * FG_SHA256_LEN + GOLDEN_NAME_MAX + 8];
	size_t n = fg_golden_manifest_line(e, line, sizeof(line));

	snprintf(path, sizeof(path), "%s/%s", dir, GOLDEN_MANIFEST);
	return write_file(path, O_APPEND, line, n);
}

/* ------------------------------------------------------------ the files */

void fg_golden_seed(uint8_t seed[16])
{
	for (unsigned i = 0; i < 16; i++)
		seed[i] = (uint8_t)i;
}

size_t fg_golden_id(unsigned n, char *buf, size_t len)
{
	int w = snprintf(buf, len, "<golden-%u@compat.test>", n);

	return w < 0 ? 0 : (size_t)w;
}

fg_time_t fg_golden_first_seen(unsigned n)
{
	return GOLDEN_TIME - 3600 * (fg_time_t)(n + 1);
}

fg_time_t fg_golden_date(unsigned n)
{
	/* odd IDs: 20 days old, refused as too old */
	return fg_golden_first_seen(n) - (n % 2 ? 20 * 86400 : 60);
}

size_t fg_golden_article(unsigned n, char *buf, size_t len)
{
	char id[64];
	int w;

	fg_golden_id(n, id, sizeof(id));
	w = snprintf(buf, len,
		     "Path: compat.test!not-for-mail\r\nFrom: golden@compat.test\r\n"
		     "Newsgroups: fg.test\r\nSubject: golden %u\r\nMessage-ID: %s\r\n"
		     "Date: Wed, 31 Dec 2025 %02u:59:00 +0000\r\n\r\n"
		     "Golden article %u.\r\n..a dot-stuffed line\r\n", n, id, 22 - n, n);
	return w < 0 ? 0 : (size_t)w;
}

static void say(struct out *o, const char *fmt, const char *a, const char *b)
{
	char msg[PATH_MAX + 256];

	if (!o->report)
		return;
	snprintf(msg, sizeof(msg), fmt, a, b);
	o->report(msg);
}

/* Write (or compare) dir/<format>/<name>. `skip_off/len`: octets --check
 * ignores. 0 or -errno. */
static int emit(struct out *o, const char *format, const char *name, const void *buf,
		size_t len, size_t skip_off, size_t skip_len)
{
	char sub[PATH_MAX], path[PATH_MAX + 64];
	int fd, rc;

	snprintf(sub, sizeof(sub), "%s/%s", o->dir, format);
	snprintf(path, sizeof(path), "%s/%s", sub, name);
	if (o->check) {
		uint8_t *have = malloc(len + 1);
		ssize_t n = -1;

		if (!have)
			return -ENOMEM;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, have, len + 1);
			close(fd);
		}
		if (n == (ssize_t)len && skip_len)
			memcpy(have + skip_off, (const uint8_t *)buf + skip_off, skip_len);
		if (n != (ssize_t)len || memcmp(have, buf, len) != 0) {
			say(o, "%s: %s", path, n < 0 ? "missing: this build's version has no golden file "
				"(regenerate: bin/fg-compatgen tests/data/compat)" :
				"differs from what this build writes: the format changed without a "
				"version bump");
			o->count++;
		}
		free(have);
		return 0;
	}
	/* a released version's file does not change (but for what its digest
	 * leaves out); a new one is released as it is written */
	{
		struct fg_golden_released now;
		const struct fg_golden_released *was;

		snprintf(now.name, sizeof(now.name), "%s/%s", format, name);
		fg_golden_digest(format, buf, len, now.digest);
		was = fg_golden_manifest_find(o->released, now.name);
		if (was && memcmp(was->digest, now.digest, FG_SHA256_LEN) != 0) {
			say(o, "%s: refused: a released version (listed in %s), and this build "
			       "writes it differently: the format changed without a version bump "
			       "(docs/compat.md, \"Changing a format\")", path, GOLDEN_MANIFEST);
			o->count++;
			return 0;
		}
		if (mkdir(sub, 0755) < 0 && errno != EEXIST)
			return -errno;
		rc = write_file(path, O_TRUNC, buf, len);
		if (rc == 0 && !was) {
			rc = release(o->dir, &now);
			if (rc == 0 && o->released->n < GOLDEN_MANIFEST_MAX)
				o->released->e[o->released->n++] = now;
		}
		if (rc == 0)
			say(o, "wrote %s%s", path, was ? "" : " (a new version: its line added to "
							   GOLDEN_MANIFEST ")");
	}
	return rc;
}

static void golden_key(const struct fg_history *h, unsigned n, struct fg_history_key *k)
{
	char id[64];

	fg_history_hash(h, id, fg_golden_id(n, id, sizeof(id)), k);
}

static enum fg_history_state golden_state(unsigned n)
{
	return n % 2 ? FG_HISTORY_REJECTED : FG_HISTORY_ACCEPTED;
}

/* The table: the first half of the IDs (the journal holds them all). */
static struct fg_history *golden_table(void **mem, size_t *len)
{
	struct fg_history_params hp;
	struct fg_history *h;

	memset(&hp, 0, sizeof(hp));
	hp.capacity = GOLDEN_CAPACITY;
	hp.hash = FG_HISTORY_HASH_AES;
	hp.side_capacity = GOLDEN_SIDE;
	hp.full_policy = FG_FULL_DEFER;
	hp.alarm_load_pct = 90;
	hp.now = GOLDEN_TIME;
	fg_golden_seed(hp.seed);
	*len = fg_history_region_size(hp.capacity, hp.side_capacity);
	if (posix_memalign(mem, 64, *len) != 0)
		return NULL;
	h = fg_history_create(*mem, *len, &hp);
	for (unsigned n = 0; h && n < GOLDEN_IDS / 2; n++) {
		struct fg_history_key k;

		golden_key(h, n, &k);
		if (fg_history_insert_final(h, &k, golden_state(n), fg_golden_date(n),
					    fg_golden_first_seen(n), GOLDEN_TIME, NULL) != 0) {
			fg_history_detach(h);
			h = NULL;
		}
	}
	return h;
}

static int snapshot(struct out *o, struct fg_history *h, size_t len)
{
	struct fg_snap_info info;
	struct fg_history_stats hs;
	uint8_t *buf = NULL;
	char name[48];
	int rc;

	/* the image is copied 64-aligned, as into a snapshot's mapping */
	if (posix_memalign((void **)&buf, 64, FG_SNAP_HEADER + len) != 0)
		return -ENOMEM;
	memset(buf, 0, FG_SNAP_HEADER + len);
	fg_history_stats(h, &hs);
	memset(&info, 0, sizeof(info));
	info.seq = 1;
	info.created = GOLDEN_TIME;
	info.covers.segment = 1;
	info.covers.offset = FG_JSEG_HEADER;	/* the whole journal is replayed */
	info.image_size = len;
	fg_golden_seed(info.seed);
	fg_region_seed_check(h, &info.seed_check);
	info.capacity = hs.slots;
	info.entries = hs.entries;
	rc = fg_history_image_copy(h, buf + FG_SNAP_HEADER, len);
	if (rc == 0) {
		fg_snapshot_header_encode(buf, &info);
		/* the snapshot's version and its image's layout */
		snprintf(name, sizeof(name), "v%u-history%u.fgs", FG_SNAP_VERSION, FG_HISTORY_LAYOUT);
		rc = emit(o, "snapshot", name, buf, FG_SNAP_HEADER + len, 0, 0);
	}
	free(buf);
	return rc;
}

static int journal(struct out *o, const struct fg_history *h)
{
	uint8_t buf[FG_JSEG_HEADER + FG_JBLOCK_HEADER + GOLDEN_IDS * sizeof(struct fg_jrec)];
	struct fg_jseg_info info;
	char name[32];

	memset(buf, 0, sizeof(buf));
	memset(&info, 0, sizeof(info));
	info.segment = 1;
	info.created = GOLDEN_TIME;
	fg_golden_seed(info.seed);
	fg_region_seed_check(h, &info.seed_check);
	fg_jseg_header_make(buf, &info);
	for (unsigned n = 0; n < GOLDEN_IDS; n++) {
		struct fg_history_key k;
		struct fg_jrec r;
		int rc;

		golden_key(h, n, &k);
		rc = fg_jrec_make(&r, &k, golden_state(n), fg_golden_date(n), fg_golden_first_seen(n),
				  FG_JREC_F_DATE_DATE, n % 2 ? FG_REASON_TOO_OLD : FG_REASON_NONE);
		if (rc != 0)
			return rc;
		memcpy(buf + FG_JSEG_HEADER + FG_JBLOCK_HEADER + n * sizeof(r), &r, sizeof(r));
	}
	fg_jblock_seal(buf + FG_JSEG_HEADER, GOLDEN_IDS, 0, 0);
	snprintf(name, sizeof(name), "v%u.fgj", FG_JSEG_VERSION);
	return emit(o, "journal", name, buf, sizeof(buf), 0, 0);
}

void fg_golden_route(unsigned n, struct fg_feeds_set *out)
{
	*out = (struct fg_feeds_set){ 0 };
	switch (n % 3) {
	case 0:
		out->ident[out->n++] = fg_config_ident(GOLDEN_DS_BINARIES);
		out->ident[out->n++] = fg_config_ident(GOLDEN_DS_TEXT);
		break;
	case 1:
		out->all = true;
		break;
	default:
		break;		/* accepted, and no downstream's feed selected it */
	}
}

/* The queue segment; *end: the position after its last record, *first_end
 * the one after its first. */
static int queue(struct out *o, uint64_t *first_end, uint64_t *end)
{
	struct fg_queue_seg_info si = { 1, 0, 0, GOLDEN_TIME, FG_QUEUE_VERSION };
	uint8_t buf[4096];
	size_t off = FG_QUEUE_SEG_HEADER;
	char name[32];

	memset(buf, 0, sizeof(buf));
	fg_queue_seg_header_encode(buf, &si);
	for (unsigned n = 0; n < GOLDEN_QUEUED; n++) {
		char id[64], art[512];
		size_t il = fg_golden_id(n, id, sizeof(id)), al = fg_golden_article(n, art, sizeof(art));
		struct fg_feeds_set route;
		struct fg_queue_rec_fields f = {
			.recno = n, .arrival = GOLDEN_TIME + n, .art_len = (uint32_t)al,
			.id_len = (uint16_t)il, .peer = (uint16_t)n, .route = &route,
		};
		uint32_t hl = fg_queue_rec_hdr_len((fg_golden_route(n, &route), &route));
		uint64_t size = fg_queue_rec_size(hl, il, al);
		uint32_t crc = fg_queue_rec_crc_start(&f);

		if (off + size > sizeof(buf))
			return -ENOSPC;
		crc = fg_crc32c(crc, id, il);
		crc = fg_crc32c(crc, art, al);
		fg_queue_rec_header_encode(buf + off, &f, crc);
		memcpy(buf + off + hl, id, il);
		memcpy(buf + off + hl + il, art, al);
		off += size;
		if (n == 0)
			*first_end = off - FG_QUEUE_SEG_HEADER;
	}
	*end = off - FG_QUEUE_SEG_HEADER;
	snprintf(name, sizeof(name), "v%u.fgq", FG_QUEUE_VERSION);
	return emit(o, "queue", name, buf, off, 0, 0);
}

/* Two slots, written as the writer does: sequence s at (s % 2) * 64. */
static int slots(struct out *o, const char *format, const char *ext, const char magic[8],
		 const struct fg_queue_slot *a, const struct fg_queue_slot *b)
{
	uint8_t buf[2 * FG_QUEUE_SLOT];
	char name[32];

	memset(buf, 0, sizeof(buf));
	fg_queue_slot_encode(buf + (a->seq % 2) * FG_QUEUE_SLOT, magic, a);
	fg_queue_slot_encode(buf + (b->seq % 2) * FG_QUEUE_SLOT, magic, b);
	snprintf(name, sizeof(name), "v%u.%s", FG_QUEUE_SLOT_VERSION, ext);
	return emit(o, format, name, buf, sizeof(buf), 0, 0);
}

static int warmup(struct out *o)
{
	struct fg_queue_slot s = { .seq = 1, .c = { (uint64_t)GOLDEN_WARMUP_UNTIL, 0 },
				   .updated = GOLDEN_TIME };
	uint8_t buf[FG_QUEUE_SLOT];
	char name[32];

	fg_queue_slot_encode(buf, FG_WARMUP_MAGIC, &s);
	snprintf(name, sizeof(name), "v%u.fgw", FG_QUEUE_SLOT_VERSION);
	return emit(o, "warmup", name, buf, sizeof(buf), 0, 0);
}

static int region(struct out *o, size_t history_size)
{
	struct fg_region_params p;
	uint8_t buf[FG_REGION_HEADER];
	char name[32];
	int rc;

	memset(&p, 0, sizeof(p));
	p.history_size = history_size;
	p.writers = GOLDEN_REGION_WRITERS;
	p.journal_ring = GOLDEN_REGION_JRING;
	p.vlog_ring = GOLDEN_REGION_VRING;
	fg_golden_seed(p.seed);
	rc = fg_region_header_encode(&p, GOLDEN_TIME, buf, sizeof(buf));
	if (rc != 0)
		return rc;
	snprintf(name, sizeof(name), "v%u.fgr", FG_REGION_LAYOUT);
	return emit(o, "region", name, buf, sizeof(buf), GOLDEN_REGION_SCHEMA_OFF,
		    GOLDEN_REGION_SCHEMA_LEN);
}

int fg_golden_write(const char *dir, int check, void (*report)(const char *msg))
{
	struct fg_golden_manifest released;
	struct out o = { dir, check, report, 0, &released };
	struct fg_queue_slot c1, c2, h1, h2;
	uint64_t first_end = 0, end = 0;
	void *mem = NULL;
	size_t len = 0;
	struct fg_history *h;
	char why[256];
	int rc;

	if (!check && mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	rc = fg_golden_manifest_load(dir, &released, why, sizeof(why));
	if (rc < 0) {
		say(&o, "%s (the released files' manifest)%s", why, "");
		return rc;
	}
	h = golden_table(&mem, &len);
	if (!h) {
		free(mem);
		return -EINVAL;
	}
	rc = snapshot(&o, h, len);
	if (rc == 0)
		rc = journal(&o, h);
	if (rc == 0)
		rc = queue(&o, &first_end, &end);
	c1 = (struct fg_queue_slot){ .seq = 1, .updated = GOLDEN_TIME + 10 };
	c2 = (struct fg_queue_slot){ .seq = 2, .c = { first_end, 1 }, .updated = GOLDEN_TIME + 20 };
	h1 = (struct fg_queue_slot){ .seq = 1, .updated = GOLDEN_TIME, .extra = FG_QUEUE_SEG_HEADER };
	h2 = (struct fg_queue_slot){ .seq = 2, .c = { end, GOLDEN_QUEUED }, .updated = GOLDEN_TIME + 5,
				     .extra = FG_QUEUE_SEG_HEADER + end };
	if (rc == 0)
		rc = slots(&o, "cursor", "fgc", FG_QUEUE_CURSOR_MAGIC, &c1, &c2);
	if (rc == 0)
		rc = slots(&o, "head", "fgh", FG_QUEUE_HEAD_MAGIC, &h1, &h2);
	if (rc == 0)
		rc = warmup(&o);
	if (rc == 0)
		rc = region(&o, len);
	fg_history_detach(h);
	free(mem);
	return rc < 0 ? rc : o.count;
}
