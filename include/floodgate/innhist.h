/* SPDX-License-Identifier: MIT */
/*
 * innhist.h — what a site switching from INN brings with it: INN's
 * history (hisv6 text lines), INN's news log, and files of Message-IDs;
 * and the table of INN's hashes ("foreign" hashes) the engine consults on
 * a miss of its own history (docs/history.md, "History carried over from
 * INN"; docs/operations.md, "Switching a site from INN").
 *
 * INN keys its history by the MD5 (RFC 1321) of the Message-ID as INN
 * normalises it (lib/hash.c, HashMessageID): everything after the first
 * '@' is lowercased (ASCII), and all but the first octet when the local
 * part is "postmaster" in any case. floodgate's own table is keyed by its
 * secret keyed hash of the exact octets, so INN's hashes cannot go into
 * it: they live in a sorted file of their own, mapped read-only.
 *
 * Parsers (one line each, without its newline; none reads past len, none
 * allocates):
 *   fg_hisv6_parse    "[HASH]\tARRIVED~EXPIRES~POSTED\tTOKEN" (hisv6.c's
 *                     hisv6_splitline; EXPIRES "-" is none; POSTED and
 *                     TOKEN may be missing: a remembered, refused ID)
 *   fg_newslog_parse  "mon dd hh:mm:ss.mmm C feed <id> ..." (innd(8),
 *                     LOGGING): C '+' and 'j' are accepted articles; '-',
 *                     'c', '?' are not (a "cant store article" line is a
 *                     '-' line)
 *   fg_idfile_parse   "<id>" or "<id> SECONDS" (Unix time); blank lines
 *                     and '#' comments are skipped
 */
#ifndef FLOODGATE_INNHIST_H
#define FLOODGATE_INNHIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"

#define FG_MD5_LEN 16

/* RFC 1321 MD5 of len octets. */
void fg_md5(const void *data, size_t len, uint8_t out[FG_MD5_LEN]);
/* INN's HashMessageID (lib/hash.c) of an ID of len octets, '<' and '>'
 * included; IDs longer than FG_INN_ID_MAX are hashed as INN would but
 * through a bounded copy: false (not hashed) beyond it. */
#define FG_INN_ID_MAX 1024u
bool fg_inn_hash_msgid(const char *id, size_t len, uint8_t out[FG_MD5_LEN]);

/* ---- parsers: 1 a record, 0 a line with nothing to take, -EINVAL malformed ---- */

struct fg_hisv6_line {
	uint8_t hash[FG_MD5_LEN];
	fg_time_t arrived;
	fg_time_t expires;	/* 0: none ("-" or missing) */
	fg_time_t posted;	/* 0: missing */
	bool has_token;		/* false: remembered only (refused, or article expired) */
};
int fg_hisv6_parse(const char *line, size_t len, struct fg_hisv6_line *out, const char **why);

/* A news log line's accepted Message-ID and its time. The log has no year:
 * the time is the latest one (local time) not after now + 1 day. */
struct fg_idtime {
	const char *id;		/* into line */
	size_t id_len;
	fg_time_t when;		/* 0: none given */
};
enum fg_newslog_code {
	FG_NEWSLOG_ACCEPTED,	/* '+' */
	FG_NEWSLOG_JUNKED,	/* 'j': accepted, filed in junk */
	FG_NEWSLOG_REJECTED,	/* '-' (includes "cant store article") */
	FG_NEWSLOG_CANCEL,	/* 'c' */
	FG_NEWSLOG_OTHER,	/* '?' */
};
int fg_newslog_parse(const char *line, size_t len, fg_time_t now, struct fg_idtime *out,
		     enum fg_newslog_code *code, const char **why);
int fg_idfile_parse(const char *line, size_t len, struct fg_idtime *out, const char **why);

/* ---- the table of foreign hashes (foreign.c) ----
 *
 * File <data-dir>/inn-history.fgf, little-endian:
 *   0   8  magic "FGINNHST"
 *   8   4  version (1)
 *   12  4  index bits k (0..32)
 *   16  8  n, hashes
 *   24  8  imported (Unix seconds)
 *   32  8  until: the table is consulted while now < until
 *   40  4  CRC-32C of the hashes and the index
 *   44  4  CRC-32C of octets 0..43
 *   48 16  reserved, zero
 *   64     n x 16 octets: the MD5s, sorted (memcmp order), no duplicates
 *   ...    (2^k + 1) x u32: index[b] = first hash whose top k bits >= b
 * A lookup reads index[b], index[b+1] and the few hashes between (about
 * four: k is chosen so); indexes are clamped to n, so a damaged file can
 * answer wrongly but never read outside the mapping.
 */
#define FG_FOREIGN_FILE "inn-history.fgf"
#define FG_FOREIGN_MAGIC "FGINNHST"
#define FG_FOREIGN_VERSION 1u
#define FG_FOREIGN_HEADER 64u
#define FG_FOREIGN_MAX ((uint64_t)UINT32_MAX)

struct fg_foreign;

/* The file's image, no I/O: sort and deduplicate hashes (in place; *m the
 * distinct ones, hashes[0..m) the file's hash array), fill hdr and build
 * the index (*index malloc'd, *nidx u32s, little-endian). 0, -E2BIG or
 * -ENOMEM. Written to disk by fg_foreign_write (datadir.h). */
int fg_foreign_build(uint8_t (*hashes)[FG_MD5_LEN], size_t n, fg_time_t imported,
		     fg_time_t until, uint8_t hdr[FG_FOREIGN_HEADER], uint32_t **index,
		     size_t *nidx, size_t *m);
/* Map a table read-only. check_crc: verify the contents' CRC too (reads it
 * all). NULL with *err: -ENOENT, -EINVAL (why says), -errno. */
struct fg_foreign *fg_foreign_open(const char *path, bool check_crc, int *err, const char **why);
void fg_foreign_close(struct fg_foreign *f);
bool fg_foreign_has(const struct fg_foreign *f, const uint8_t hash[FG_MD5_LEN]);
/* The ID (INN's hash of it) is in the table and the table is in force. */
bool fg_foreign_has_id(const struct fg_foreign *f, const char *id, size_t len, fg_time_t now);
uint64_t fg_foreign_count(const struct fg_foreign *f);
fg_time_t fg_foreign_imported(const struct fg_foreign *f);
fg_time_t fg_foreign_until(const struct fg_foreign *f);
/* The mapped file's identity, to notice a new import (dev, inode, mtime). */
bool fg_foreign_same_file(const struct fg_foreign *f, const char *path);

#endif
