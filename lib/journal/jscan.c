/* SPDX-License-Identifier: MIT */
/*
 * jscan.c — reading journal segments: header validation and the block
 * walk that stops at the first block it cannot trust (journal.h has the
 * format). Reads only what lies inside the image: the bytes are untrusted
 * (a torn write, a damaged disk, a hostile file), and fuzz_journal drives
 * this code with arbitrary input.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "journal_int.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "on-disk formats are little-endian");

struct jseg_hdr {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t segment;
	int64_t created;
	uint8_t seed[16];
	uint64_t seed_check[2];
	uint8_t reserved[60];
	uint32_t crc;
};
_Static_assert(sizeof(struct jseg_hdr) == FG_JSEG_HEADER, "segment header");

struct jblock_hdr {
	uint32_t magic;
	uint32_t count;
	uint16_t slot;
	uint8_t reserved0[6];
	uint64_t commit_seq;
	uint32_t crc;
	uint32_t reserved1;
};
_Static_assert(sizeof(struct jblock_hdr) == FG_JBLOCK_HEADER, "block header");

int fg_jseg_header(const void *buf, size_t len, struct fg_jseg_info *out, const char **why)
{
	struct jseg_hdr h;

	if (len < sizeof(h)) {
		*why = "shorter than a segment header";
		return -EINVAL;
	}
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, FG_JSEG_MAGIC, 8) != 0) {
		*why = "not a journal segment (bad magic)";
		return -EINVAL;
	}
	if (h.crc != fg_crc32c(0, &h, offsetof(struct jseg_hdr, crc))) {
		*why = "segment header checksum mismatch";
		return -EINVAL;
	}
	if (h.version < 1 || h.version > FG_JSEG_VERSION) {
		*why = fg_datadir_version_why("journal segment format", h.version, 1,
					      FG_JSEG_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h.header_size != FG_JSEG_HEADER) {
		*why = "header size does not match its version";
		return -EINVAL;
	}
	out->segment = h.segment;
	out->created = h.created;
	memcpy(out->seed, h.seed, sizeof(out->seed));
	out->seed_check.lo = h.seed_check[0];
	out->seed_check.hi = h.seed_check[1];
	return 0;
}

void fg_jseg_header_make(void *buf, const struct fg_jseg_info *info)
{
	struct jseg_hdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, FG_JSEG_MAGIC, 8);
	h.version = FG_JSEG_VERSION;
	h.header_size = FG_JSEG_HEADER;
	h.segment = info->segment;
	h.created = info->created;
	memcpy(h.seed, info->seed, sizeof(h.seed));
	h.seed_check[0] = info->seed_check.lo;
	h.seed_check[1] = info->seed_check.hi;
	h.crc = fg_crc32c(0, &h, offsetof(struct jseg_hdr, crc));
	memcpy(buf, &h, sizeof(h));
}

void fg_jblock_seal(void *buf, unsigned count, unsigned slot, uint64_t commit_seq)
{
	struct jblock_hdr h;
	uint32_t crc;

	memset(&h, 0, sizeof(h));
	h.magic = FG_JBLOCK_MAGIC;
	h.count = count;
	h.slot = (uint16_t)slot;
	h.commit_seq = commit_seq;
	crc = fg_crc32c(0, &h, sizeof(h));
	h.crc = fg_crc32c(crc, (const uint8_t *)buf + sizeof(h),
			  (size_t)count * sizeof(struct fg_jrec));
	memcpy(buf, &h, sizeof(h));
}

/* Why the block at p (avail octets left) is not sound; NULL if it is. */
static const char *check_block(const uint8_t *p, uint64_t avail, uint32_t *count)
{
	struct jblock_hdr h;
	uint32_t crc, want;
	uint64_t len;

	if (avail < sizeof(h))
		return "a block header cut short";
	memcpy(&h, p, sizeof(h));
	if (h.magic != FG_JBLOCK_MAGIC)
		return "no block magic";
	if (h.count == 0 || h.count > FG_JBLOCK_MAX)
		return "block record count out of range";
	len = sizeof(h) + (uint64_t)h.count * sizeof(struct fg_jrec);
	if (len > avail)
		return "a block cut short (torn write)";
	want = h.crc;
	h.crc = 0;
	crc = fg_crc32c(0, &h, sizeof(h));
	crc = fg_crc32c(crc, p + sizeof(h), len - sizeof(h));
	if (crc != want)
		return "block checksum mismatch";
	for (uint32_t i = 0; i < h.count; i++) {
		struct fg_jrec r;

		memcpy(&r, p + sizeof(h) + (uint64_t)i * sizeof(r), sizeof(r));
		if (!fg_jrec_valid(&r))
			return "a record with an impossible state or flags";
	}
	*count = h.count;
	return NULL;
}

int fg_jseg_scan(const void *buf, size_t len, uint64_t from, fg_jrec_fn *fn, void *arg,
		 struct fg_jseg_scan *out)
{
	const uint8_t *p = buf;
	uint64_t off = from < FG_JSEG_HEADER ? FG_JSEG_HEADER : from;
	int rc;

	memset(out, 0, sizeof(*out));
	out->size = len;
	rc = fg_jseg_header(buf, len, &out->info, &out->why);
	if (rc < 0)
		return rc;
	out->end = off > len ? len : off;
	while (off < len) {
		uint32_t count = 0;
		const char *bad = check_block(p + off, len - off, &count);

		if (bad) {
			out->torn = true;
			out->why = bad;
			return 0;
		}
		for (uint32_t i = 0; i < count; i++) {
			struct fg_jrec r;

			memcpy(&r, p + off + FG_JBLOCK_HEADER + (uint64_t)i * sizeof(r), sizeof(r));
			rc = fn ? fn(arg, &r) : 0;
			if (rc < 0)
				return rc;
			out->records++;
		}
		off += FG_JBLOCK_HEADER + (uint64_t)count * sizeof(struct fg_jrec);
		out->blocks++;
		out->end = off;
	}
	return 0;
}

int fg_journal_segment_path(const char *dir, uint64_t segment, char *out, size_t len)
{
	return fg_datadir_path(dir, "journal-", segment, ".fgj", out, len);
}

int fg_journal_list(const char *dir, uint64_t **segments, size_t *n)
{
	return fg_datadir_list(dir, "journal-", ".fgj", segments, n);
}
