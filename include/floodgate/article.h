/* SPDX-License-Identifier: MIT */
/*
 * article.h — the header-section scanner.
 *
 * It finds the end of an article's header section and the fields the
 * admission rules read, without copying and without allocating: every
 * value is an offset into the caller's buffer, handed out as pointer +
 * length into the buffer of the latest fg_article_scan() call.
 *
 * Two input forms:
 *  - wire form (FG_ARTICLE_WIRE): the article as it arrives after TAKETHIS
 *    or IHAVE (RFC 3977 3.1.1): CRLF lines, dot-stuffed, ended by ".\r\n"
 *    (which may or may not be in the buffer). Only CRLF ends a line: a
 *    bare LF is content, as it is for INN's innd, so the filter and the
 *    news server behind it agree on which fields an article has (a field
 *    hidden behind a bare LF could otherwise name a Message-ID the server
 *    never sees). A line starting with "." has that dot removed; a line
 *    that is then empty is the terminator, which ends the article (a
 *    header section without a body).
 *  - plain form (FG_ARTICLE_PLAIN): a file on disk, LF lines (a CR before
 *    the LF is dropped), no dot-stuffing, no terminator.
 * fg_article_detect() tells them apart by the first line's ending.
 *
 * Grammar (RFC 5322 2.2, RFC 5536 2.2): a field is `name ":" value` on one
 * line, continued (folded) on following lines that start with SP or HTAB;
 * the section ends at the first empty line. Names compare case-insensitively
 * (RFC 5322 1.2.2). Values are trimmed of blanks and folding at both ends;
 * inner folding stays (the date, Message-ID and Path parsers skip FWS).
 * The space after the colon is not required (RFC 5536 2.2 lets agents
 * accept headers without it).
 *
 * Incremental use: fg_article_init() once per article, then
 * fg_article_scan() each time the buffer holding the start of the article
 * has grown. The first bytes must stay the same between calls (the buffer
 * itself may move). It returns FG_ARTICLE_AGAIN until the end of the header
 * section is in the buffer, then FG_ARTICLE_COMPLETE with body_off set.
 * Each byte is examined a bounded number of times however the input is
 * split, and no more than FG_ARTICLE_MAX_HEADER octets are ever read.
 *
 * Bounds (fatal, FG_ARTICLE_ERROR with a named error): header section over
 * FG_ARTICLE_MAX_HEADER octets, a line over FG_ARTICLE_MAX_LINE octets,
 * more than FG_ARTICLE_MAX_FIELDS fields. Fields already found stay
 * readable after an error.
 *
 * Defects (not fatal, counted, the first one kept for `floodctl explain`):
 * a line that is neither a field nor a continuation, a bad field name
 * (e.g. a space before the colon), a continuation with no field before it,
 * a bare LF in wire form, a NUL octet. A defective line is not a field: a
 * "Message-ID :" line does not give the article a Message-ID, as for INN.
 * The scanner decides nothing about them: admission is the rules' job, and
 * the news server behind the filter sees the article unchanged.
 *
 * Repeated fields are all kept in field[]; fg_article_get() returns the
 * first and fg_article_count() says how many. What a repeated Message-ID or
 * Date means is a rule (docs/rules.md), not the scanner's business.
 */
#ifndef FLOODGATE_ARTICLE_H
#define FLOODGATE_ARTICLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_ARTICLE_MAX_HEADER 65536u	/* header section incl. the empty line */
#define FG_ARTICLE_MAX_LINE 16384u	/* one physical line, without its line end */
#define FG_ARTICLE_MAX_FIELDS 256u

enum fg_article_form {
	FG_ARTICLE_WIRE = 0,	/* CRLF, dot-stuffed, ".\r\n" terminator */
	FG_ARTICLE_PLAIN = 1,	/* LF lines, as in a file */
};

enum fg_article_result {
	FG_ARTICLE_COMPLETE = 0,	/* header section ends; body starts at body_off */
	FG_ARTICLE_AGAIN = 1,		/* not yet: call again when the buffer has grown */
	FG_ARTICLE_ERROR = 2,		/* a bound was exceeded: see `error` */
};

enum fg_article_error {
	FG_ARTICLE_OK = 0,
	/* fatal */
	FG_ARTICLE_E_HEADER_TOO_LONG,	/* no end of header section within FG_ARTICLE_MAX_HEADER */
	FG_ARTICLE_E_LINE_TOO_LONG,	/* a line longer than FG_ARTICLE_MAX_LINE */
	FG_ARTICLE_E_TOO_MANY_FIELDS,	/* more than FG_ARTICLE_MAX_FIELDS fields */
	/* defects */
	FG_ARTICLE_E_NO_COLON,		/* a line that is not "name: value" nor a continuation */
	FG_ARTICLE_E_BAD_NAME,		/* empty name, or a blank, control or 8-bit octet in it */
	FG_ARTICLE_E_ORPHAN_CONTINUATION, /* a folded line with no field before it */
	FG_ARTICLE_E_BARE_LF,		/* wire form: LF not preceded by CR */
	FG_ARTICLE_E_NUL,		/* NUL octet in the header section */
	FG_ARTICLE_E__COUNT
};

/* The fields the rules read. */
enum fg_hdr {
	FG_HDR_MESSAGE_ID = 0,
	FG_HDR_DATE,
	FG_HDR_INJECTION_DATE,
	FG_HDR_PATH,
	FG_HDR_NEWSGROUPS,
	FG_HDR_FROM,
	FG_HDR_SUBJECT,
	FG_HDR_SUPERSEDES,
	FG_HDR__COUNT,
	FG_HDR_OTHER = FG_HDR__COUNT	/* any other name */
};

/* A value in the caller's buffer; ptr is NULL when absent. */
struct fg_article_value {
	const char *ptr;
	size_t len;
};

/* One field; offsets from the start of the buffer. */
struct fg_article_field {
	uint32_t name_off;
	uint32_t value_off;
	uint16_t name_len;
	uint8_t hdr;		/* enum fg_hdr */
	uint8_t pad_;
	uint32_t value_len;
};

struct fg_article {
	/* results */
	enum fg_article_form form;
	enum fg_article_error error;	/* the fatal error after FG_ARTICLE_ERROR */
	size_t header_end;	/* end of the last field line (start of the empty line) */
	size_t body_off;	/* first body octet (after the empty line or terminator) */
	bool complete;
	bool terminated;	/* wire form: ".\r\n" ended the article in the header section */
	unsigned n_lines;	/* physical header lines, the empty one excluded */
	unsigned n_fields;
	unsigned n_defects;
	enum fg_article_error first_defect;
	size_t first_defect_off;	/* its line's offset (a NUL's own offset) */
	uint8_t count[FG_HDR__COUNT];	/* occurrences, saturating at 255 */
	uint16_t first[FG_HDR__COUNT];	/* index in field[] of the first occurrence */
	struct fg_article_field field[FG_ARTICLE_MAX_FIELDS];

	/* scanner state: private */
	const char *base;	/* buffer of the latest scan call */
	size_t line_start;	/* start of the line being looked at */
	size_t pos;		/* where the search for its end resumes */
	size_t open_end;	/* value end of the open field */
	bool open;		/* a field is open (may continue on the next line) */
};

void fg_article_init(struct fg_article *a, enum fg_article_form form);

/*
 * Scan `buf` (the first `len` octets of the article; `len` may include any
 * part of the body). See the head of this file for the contract.
 */
enum fg_article_result fg_article_scan(struct fg_article *a, const char *buf, size_t len);

/* First occurrence of a known field ({NULL, 0} when absent) and its count. */
struct fg_article_value fg_article_get(const struct fg_article *a, enum fg_hdr h);
unsigned fg_article_count(const struct fg_article *a, enum fg_hdr h);

/* First field named `name` (case-insensitive), any name; *count (may be
 * NULL) receives the number of fields with that name. */
struct fg_article_value fg_article_find(const struct fg_article *a, const char *name,
					size_t name_len, unsigned *count);

/* Name and value of field[i]. */
struct fg_article_value fg_article_field_name(const struct fg_article *a, unsigned i);
struct fg_article_value fg_article_field_value(const struct fg_article *a, unsigned i);

/* Canonical name of a known field ("Message-ID"), or NULL. */
const char *fg_hdr_name(enum fg_hdr h);
const char *fg_article_error_str(enum fg_article_error e);
const char *fg_article_form_str(enum fg_article_form f);

/* Wire form when the first line ends in CRLF, else plain. */
enum fg_article_form fg_article_detect(const char *buf, size_t len);

/*
 * Octets the article occupies in wire form, as a peer sends it after
 * TAKETHIS, without the ".\r\n" terminator: for wire input, up to the
 * terminator (or all of `buf` if none); for plain input, what CRLF line
 * ends and dot-stuffing would make of it. This is the size oversize
 * compares with max-article-size.
 */
uint64_t fg_article_wire_size(const char *buf, size_t len, enum fg_article_form form);

#endif /* FLOODGATE_ARTICLE_H */
