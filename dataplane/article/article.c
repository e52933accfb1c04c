/* SPDX-License-Identifier: MIT */
/*
 * article.c — header-section scanner (see article.h for the contract).
 *
 * Design: a line at a time. The scanner keeps the start of the current
 * line and how far the search for its end got, so a call with a few more
 * octets resumes where the last one stopped and each octet is looked at a
 * bounded number of times, however a peer splits its writes. A field is
 * finished only when the next line shows it is not continued (it does not
 * start with a blank), so one field is always "open" between lines. The
 * search for line ends is memchr(), which is what makes the scan run at
 * memory speed on ordinary headers.
 *
 * Every position is an offset from the start of the buffer, never a
 * pointer: the caller's buffer may move between calls (a session engine
 * growing its buffer); pointers are made from offsets on the way out.
 */
#include <string.h>
#include <strings.h>

#include "floodgate/article.h"
#include "floodgate/common.h"

static const char *const hdr_names[FG_HDR__COUNT] = {
	[FG_HDR_MESSAGE_ID] = "Message-ID",
	[FG_HDR_DATE] = "Date",
	[FG_HDR_INJECTION_DATE] = "Injection-Date",
	[FG_HDR_PATH] = "Path",
	[FG_HDR_NEWSGROUPS] = "Newsgroups",
	[FG_HDR_FROM] = "From",
	[FG_HDR_SUBJECT] = "Subject",
	[FG_HDR_SUPERSEDES] = "Supersedes",
};

static const char *const error_strs[FG_ARTICLE_E__COUNT] = {
	[FG_ARTICLE_OK] = "ok",
	[FG_ARTICLE_E_HEADER_TOO_LONG] = "header section longer than " FG_STRINGIFY(FG_ARTICLE_MAX_HEADER) " octets",
	[FG_ARTICLE_E_LINE_TOO_LONG] = "header line longer than " FG_STRINGIFY(FG_ARTICLE_MAX_LINE) " octets",
	[FG_ARTICLE_E_TOO_MANY_FIELDS] = "more than " FG_STRINGIFY(FG_ARTICLE_MAX_FIELDS) " header fields",
	[FG_ARTICLE_E_NO_COLON] = "header line without a colon",
	[FG_ARTICLE_E_BAD_NAME] = "bad header field name (blank, control or 8-bit octet before the colon)",
	[FG_ARTICLE_E_ORPHAN_CONTINUATION] = "continuation line with no field before it",
	[FG_ARTICLE_E_BARE_LF] = "LF without CR in a wire-form header",
	[FG_ARTICLE_E_NUL] = "NUL octet in the header section",
};

const char *fg_hdr_name(enum fg_hdr h)
{
	return (unsigned)h < FG_HDR__COUNT ? hdr_names[h] : NULL;
}

const char *fg_article_error_str(enum fg_article_error e)
{
	return (unsigned)e < FG_ARTICLE_E__COUNT ? error_strs[e] : "unknown";
}

const char *fg_article_form_str(enum fg_article_form f)
{
	return f == FG_ARTICLE_WIRE ? "wire" : "plain";
}

void fg_article_init(struct fg_article *a, enum fg_article_form form)
{
	/* field[] is written before it is read: skip clearing its 4 KiB */
	memset(a, 0, offsetof(struct fg_article, field));
	a->form = form;
	a->base = NULL;
	a->line_start = 0;
	a->pos = 0;
	a->open_end = 0;
	a->open = false;
}

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_fws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* RFC 5322 3.6.8: ftext is %d33-57 / %d59-126 (the colon ends the name). */
static inline bool is_ftext(unsigned char c)
{
	return c >= 33 && c <= 126 && c != ':';
}

/*
 * Case-insensitive compare of a field name with a canonical one, which
 * holds only letters and "-". Folding with 0x20 is exact here: the name's
 * octets are ftext, and no ftext octet but a letter folds onto a letter,
 * nor any but "-" onto "-" (CR would, and is not ftext).
 */
static inline bool name_is(const char *s, const char *canon, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] | 0x20) != (unsigned char)(canon[i] | 0x20))
			return false;
	return true;
}

/* Known names by length first, so most names cost one switch. */
static enum fg_hdr classify(const char *s, size_t len)
{
	enum fg_hdr h;

	switch (len) {
	case 4:
		h = (s[0] | 0x20) == 'd' ? FG_HDR_DATE :
		    (s[0] | 0x20) == 'p' ? FG_HDR_PATH : FG_HDR_FROM;
		break;
	case 7:
		h = FG_HDR_SUBJECT;
		break;
	case 10:
		h = (s[0] | 0x20) == 'm' ? FG_HDR_MESSAGE_ID :
		    (s[0] | 0x20) == 'n' ? FG_HDR_NEWSGROUPS : FG_HDR_SUPERSEDES;
		break;
	case 14:
		h = FG_HDR_INJECTION_DATE;
		break;
	default:
		return FG_HDR_OTHER;
	}
	return name_is(s, hdr_names[h], len) ? h : FG_HDR_OTHER;
}

static void defect(struct fg_article *a, enum fg_article_error e, size_t off)
{
	if (a->n_defects++ == 0) {
		a->first_defect = e;
		a->first_defect_off = off;
	}
}

/* Finish the open field: trim its value and index it by name. */
static void close_field(struct fg_article *a, const char *buf)
{
	struct fg_article_field *f = &a->field[a->n_fields - 1];
	size_t v = f->value_off, end = a->open_end;

	a->open = false;
	while (v < end && is_fws(buf[v]))
		v++;
	while (end > v && is_fws(buf[end - 1]))
		end--;
	f->value_off = (uint32_t)v;
	f->value_len = (uint32_t)(end - v);
	if (f->hdr != FG_HDR_OTHER) {
		if (a->count[f->hdr] == 0)
			a->first[f->hdr] = (uint16_t)(a->n_fields - 1);
		if (a->count[f->hdr] < UINT8_MAX)
			a->count[f->hdr]++;
	}
}

/*
 * Start a field at a line that is not a continuation: [s, e) is the line's
 * content. The name is read up to the colon in one pass, checking that it
 * is ftext. Returns false when the field table is full (a fatal bound).
 */
static bool open_field(struct fg_article *a, const char *buf, size_t s, size_t e)
{
	struct fg_article_field *f;
	size_t c = s;

	while (c < e && is_ftext((unsigned char)buf[c]))
		c++;
	if (c == e || buf[c] != ':' || c == s) {
		/* INN: "Space before colon", "No colon-space": no field */
		defect(a, memchr(buf + s, ':', e - s) ? FG_ARTICLE_E_BAD_NAME : FG_ARTICLE_E_NO_COLON,
		       a->line_start);
		return true;
	}
	if (a->n_fields == FG_ARTICLE_MAX_FIELDS)
		return false;
	f = &a->field[a->n_fields++];
	f->name_off = (uint32_t)s;
	f->name_len = (uint16_t)(c - s);
	f->hdr = (uint8_t)classify(buf + s, c - s);
	f->pad_ = 0;
	f->value_off = (uint32_t)(c + 1);
	f->value_len = 0;
	a->open_end = e;
	a->open = true;
	return true;
}

enum line_kind { LINE_FIELD, LINE_END, LINE_TERMINATOR };

/*
 * One complete physical line [s, e) without its line end. Returns what it
 * was; sets a->error and returns LINE_END on a fatal bound.
 */
static enum line_kind take_line(struct fg_article *a, const char *buf, size_t s, size_t e)
{
	bool stuffed = a->form == FG_ARTICLE_WIRE && s < e && buf[s] == '.';

	/* RFC 3977 3.1.1: the first dot of a line is stuffing; "." alone ends */
	if (stuffed && ++s == e)
		return LINE_TERMINATOR;
	if (s == e)
		return LINE_END;
	a->n_lines++;
	/* A folded line starts with a blank, so a sender never stuffs one:
	 * ". x" is a malformed line, not a continuation (innd agrees, and
	 * the value ranges would otherwise hold the stuffing dot). */
	if (is_blank(buf[s]) && !stuffed) {
		/* RFC 5322 2.2.3: folding; the field goes on */
		if (a->open)
			a->open_end = e;
		else
			defect(a, FG_ARTICLE_E_ORPHAN_CONTINUATION, a->line_start);
		return LINE_FIELD;
	}
	if (a->open)
		close_field(a, buf);
	if (!open_field(a, buf, s, e))
		a->error = FG_ARTICLE_E_TOO_MANY_FIELDS;
	return LINE_FIELD;
}

/*
 * Find the end of the line that starts at a->line_start, resuming at
 * a->pos. Returns the offset of its LF (the line's content ends before the
 * line end), or `limit` when the line is not complete within it.
 */
static size_t find_line_end(struct fg_article *a, const char *buf, size_t limit)
{
	while (a->pos < limit) {
		const char *lf = memchr(buf + a->pos, '\n', limit - a->pos);
		size_t at;

		if (!lf) {
			a->pos = limit;
			break;
		}
		at = (size_t)(lf - buf);
		a->pos = at + 1;
		if (a->form == FG_ARTICLE_PLAIN || (at > a->line_start && buf[at - 1] == '\r'))
			return at;
		/* wire form: a bare LF is content, as for innd */
		defect(a, FG_ARTICLE_E_BARE_LF, a->line_start);
	}
	return limit;
}

static enum fg_article_result finish(struct fg_article *a, const char *buf, size_t line_end,
				     enum line_kind kind)
{
	const char *nul;

	if (a->open)
		close_field(a, buf);
	a->header_end = a->line_start;
	a->body_off = line_end + 1;
	a->terminated = kind == LINE_TERMINATOR;
	a->complete = true;
	nul = memchr(buf, '\0', a->header_end);
	if (nul)
		defect(a, FG_ARTICLE_E_NUL, (size_t)(nul - buf));
	return FG_ARTICLE_COMPLETE;
}

enum fg_article_result fg_article_scan(struct fg_article *a, const char *buf, size_t len)
{
	size_t limit = FG_MIN(len, (size_t)FG_ARTICLE_MAX_HEADER);

	a->base = buf;
	if (a->complete)
		return FG_ARTICLE_COMPLETE;
	if (a->error)
		return FG_ARTICLE_ERROR;
	for (;;) {
		size_t lf = find_line_end(a, buf, limit);
		size_t content_end;
		enum line_kind kind;

		if (lf == limit)
			break;
		content_end = lf;
		if (content_end > a->line_start && buf[content_end - 1] == '\r')
			content_end--;
		if (content_end - a->line_start > FG_ARTICLE_MAX_LINE) {
			a->error = FG_ARTICLE_E_LINE_TOO_LONG;
			return FG_ARTICLE_ERROR;
		}
		kind = take_line(a, buf, a->line_start, content_end);
		if (a->error)
			return FG_ARTICLE_ERROR;
		if (kind != LINE_FIELD)
			return finish(a, buf, lf, kind);
		a->line_start = lf + 1;
	}
	/* the line is still open: fail as soon as it is too long already */
	if (limit - a->line_start > FG_ARTICLE_MAX_LINE + 1) {
		a->error = FG_ARTICLE_E_LINE_TOO_LONG;
		return FG_ARTICLE_ERROR;
	}
	if (len >= FG_ARTICLE_MAX_HEADER) {
		a->error = FG_ARTICLE_E_HEADER_TOO_LONG;
		return FG_ARTICLE_ERROR;
	}
	return FG_ARTICLE_AGAIN;
}

static struct fg_article_value value_at(const struct fg_article *a, size_t off, size_t len)
{
	struct fg_article_value v = { a->base + off, len };

	return v;
}

struct fg_article_value fg_article_get(const struct fg_article *a, enum fg_hdr h)
{
	struct fg_article_value none = { NULL, 0 };

	if ((unsigned)h >= FG_HDR__COUNT || a->count[h] == 0)
		return none;
	return fg_article_field_value(a, a->first[h]);
}

unsigned fg_article_count(const struct fg_article *a, enum fg_hdr h)
{
	return (unsigned)h < FG_HDR__COUNT ? a->count[h] : 0;
}

struct fg_article_value fg_article_field_name(const struct fg_article *a, unsigned i)
{
	const struct fg_article_field *f = &a->field[i];

	FG_ASSERT(i < a->n_fields);
	return value_at(a, f->name_off, f->name_len);
}

struct fg_article_value fg_article_field_value(const struct fg_article *a, unsigned i)
{
	const struct fg_article_field *f = &a->field[i];

	FG_ASSERT(i < a->n_fields);
	return value_at(a, f->value_off, f->value_len);
}

struct fg_article_value fg_article_find(const struct fg_article *a, const char *name,
					size_t name_len, unsigned *count)
{
	struct fg_article_value found = { NULL, 0 };
	unsigned n = 0;

	for (unsigned i = 0; i < a->n_fields; i++) {
		const struct fg_article_field *f = &a->field[i];

		if (f->name_len != name_len ||
		    strncasecmp(a->base + f->name_off, name, name_len) != 0)
			continue;
		if (n++ == 0)
			found = fg_article_field_value(a, i);
	}
	if (count)
		*count = n;
	return found;
}

enum fg_article_form fg_article_detect(const char *buf, size_t len)
{
	const char *lf = memchr(buf, '\n', len);

	return lf && lf > buf && lf[-1] == '\r' ? FG_ARTICLE_WIRE : FG_ARTICLE_PLAIN;
}

/* Where the wire-form terminator line starts, or len if there is none. */
static size_t wire_end(const char *buf, size_t len)
{
	size_t i = 0;

	for (;;) {
		const char *lf;

		if (len - i >= 3 && memcmp(buf + i, ".\r\n", 3) == 0)
			return i;
		lf = memchr(buf + i, '\n', len - i);
		if (!lf)
			return len;
		i = (size_t)(lf - buf) + 1;
	}
}

uint64_t fg_article_wire_size(const char *buf, size_t len, enum fg_article_form form)
{
	uint64_t size = 0;
	size_t i = 0;

	if (form == FG_ARTICLE_WIRE)
		return wire_end(buf, len);
	while (i < len) {
		const char *lf = memchr(buf + i, '\n', len - i);
		size_t end = lf ? (size_t)(lf - buf) : len;
		size_t content = end - i;

		if (content && buf[end - 1] == '\r')
			content--;
		/* content, one stuffed dot if it starts with ".", then CRLF */
		size += content + (buf[i] == '.' ? 1 : 0) + 2;
		i = end + 1;
	}
	return size;
}
